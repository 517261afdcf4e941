#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""matcha-ctl through a relay that holds the simulator's first connection, then every
table read back from the simulated hardware on that same connection.

Stands in for matcha-ctl in sim/run_example.sh (as MATCHA_CTL) so that a test can see what
the loader actually put into the running simulator. With --wait-client the simulator starts
its traffic once its first client closes; this program is that client. It listens on a
socket of its own, runs the real matcha-ctl against it with the arguments it was given
(`sim:PATH` replaced by the relay's socket), passes each request on to the simulator, and
once matcha-ctl has ended reads the tables back over the same connection:

- exact and ternary entries by index with the C driver's matcha_exact_read and
  matcha_ternary_read (tb/common/driver.py over tb/common/sim_socket.py);
- the LPM trie and its results with READ commands as docs/tables.md specifies them, walked
  from level 0 and turned back into prefixes (below): the driver itself can read a prefix
  back only through the shadow of the handle that added it.

Environment: MATCHA_READBACK_CTL the real matcha-ctl, MATCHA_READBACK_OUT the JSON file
written: {table index: [entry, ...]} with exact [key, action id, data], LPM [prefix,
length, action id, data], ternary [value, mask, priority, action id, data]. Exits with
matcha-ctl's status; nothing is read back if it failed.
"""

import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tb.common import contract
from tb.common import driver as drv  # noqa: E402
from tb.common.sim_socket import ANSWER, REQUEST, SocketBus  # noqa: E402


def relay(listener, bus):
    """Serves one client of `listener`, each request passed on to the simulator; returns
    when it closes, or at once if the listener is shut down before anyone connects."""
    try:
        conn, _ = listener.accept()
    except OSError:
        return
    with conn:
        while True:
            request = b""
            while len(request) < REQUEST.size:
                chunk = conn.recv(REQUEST.size - len(request))
                if not chunk:
                    return
                request += chunk
            op, addr, data = REQUEST.unpack(request)
            a_op, resp, value = bus.transact(op, addr, data)
            conn.sendall(ANSWER.pack(a_op, resp, 0, value))


def read_command(bus, base, index):
    """A READ command of entry `index` of the window at `base`, to completion."""
    bus.write32(base + contract.WIN_INDEX, index)
    bus.write32(base + contract.WIN_CMD, contract.CMD_READ)
    while (status := bus.read32(base + contract.WIN_STATUS)) & contract.STATUS_BUSY:
        pass
    error = (status >> contract.STATUS_ERROR_SHIFT) & contract.STATUS_ERROR_MASK
    if error != contract.STATUS_ERROR_NONE:
        raise RuntimeError(f"READ of index {index:#x} at window {base:#x}: error {error}")


def lpm_read_back(bus, info):
    """[(prefix, length, action id, data)] of an LPM table. Every trie entry holding a
    result is a key range of one level; a prefix expanded into a level's entries is the
    longest common prefix of the ranges carrying its result (controlled prefix expansion
    puts a prefix into one level only)."""
    stride = info.key_bits // info.levels
    ranges = {}  # result -> [(key bits above, their count)]

    def walk(level, node, above, depth):
        for a in range(1 << stride):
            read_command(bus, info.base, level << contract.LPM_LEVEL_SHIFT | node << stride | a)
            word = bus.read32(info.base + contract.WIN_DATA)
            bits = above << stride | a
            if word & contract.LPM_HAS_RESULT:
                ranges.setdefault(word & contract.LPM_FIELD_MASK, []).append((bits, depth + stride))
            if word & contract.LPM_HAS_CHILD:
                walk(level + 1, (word >> contract.LPM_CHILD_SHIFT) & contract.LPM_FIELD_MASK, bits, depth + stride)

    walk(0, 0, 0, 0)
    words = (info.data_bits + 31) // 32
    out = []
    for result, where in sorted(ranges.items()):
        depth = where[0][1]
        if any(d != depth for _, d in where):
            raise RuntimeError(f"LPM result {result} is held on two levels: {where}")
        differ = 0
        for bits, _ in where:
            differ |= bits ^ where[0][0]
        length = depth - differ.bit_length()
        prefix = (where[0][0] >> (depth - length)) << (info.key_bits - length)
        read_command(bus, info.base, info.levels << contract.LPM_LEVEL_SHIFT | result)
        flags = bus.read32(info.base + contract.WIN_FLAGS)
        if not flags & contract.FLAGS_VALID:
            raise RuntimeError(f"LPM result {result} is in the trie but not valid")
        data = sum(bus.read32(info.base + contract.WIN_DATA + 4 * i) << (32 * i)
                   for i in range(words))
        out.append([prefix, length, drv.flags_action(flags), data])
    return out


def read_back(bus):
    tables = {}
    with drv.Device(bus) as dev:
        infos = list(dev.tables)
        for t, info in enumerate(infos):
            kind = info.kind & contract.KIND_CODE_MASK
            if kind == contract.KIND_EXACT:
                tables[t] = [[e.key, e.action_id, e.data] for e in
                             (dev.exact_read(t, i) for i in range(info.size)) if e.valid]
            elif kind == contract.KIND_TERNARY:
                tables[t] = [[e.key, e.mask, e.priority, e.action_id, e.data] for e in
                             (dev.ternary_read(t, i) for i in range(info.size)) if e.valid]
    for t, info in enumerate(infos):
        if info.kind & contract.KIND_CODE_MASK == contract.KIND_LPM:
            tables[t] = lpm_read_back(bus, info)
    return tables


def main():
    ctl, out = os.environ["MATCHA_READBACK_CTL"], os.environ["MATCHA_READBACK_OUT"]
    args = sys.argv[1:]
    uri = next(a for a in args if a.startswith("sim:"))
    with SocketBus(uri[len("sim:"):]) as bus, tempfile.TemporaryDirectory(prefix="relay-") as d:
        path = os.path.join(d, "relay.sock")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(path)
        listener.listen(1)
        thread = threading.Thread(target=relay, args=(listener, bus), daemon=True)
        thread.start()
        rc = subprocess.run([ctl, *(f"sim:{path}" if a == uri else a for a in args)]).returncode
        listener.shutdown(socket.SHUT_RDWR)  # wakes the relay if matcha-ctl never connected
        thread.join()
        listener.close()
        if rc == 0:
            Path(out).write_text(json.dumps(read_back(bus)))
    return rc


if __name__ == "__main__":
    sys.exit(main())
