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

- exact, memory-backed exact and ternary entries by index with the C driver's
  matcha_exact_read, matcha_mem_exact_read and matcha_ternary_read (tb/common/driver.py
  over tb/common/sim_socket.py);
- LPM tables with READ commands as docs/tables.md specifies them: each valid result with
  its prefix from the prefix store, and the B+tree walked from the root, each leaf
  interval checked to lie inside the prefix of the result it answers (below): the driver
  itself can read a prefix back only through the shadow of a handle.

Environment: MATCHA_READBACK_CTL the real matcha-ctl, MATCHA_READBACK_OUT the JSON file
written: {table index: [entry, ...]} with exact and memory-backed exact [key, action id, data], LPM [prefix,
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


def lpm_read_back(bus, info, fanout, pointer_bits):
    """[(prefix, length, action id, data)] of an LPM table of `fanout`-slot nodes and
    `pointer_bits`-bit pointers: the valid
    results and their prefixes (KEY, PRIORITY), each leaf slot of the tree answering a valid
    result whose prefix covers the slot's whole interval (a prefix hidden under longer ones
    answers nowhere)."""
    kw = info.key_bits
    words = (info.data_bits + 31) // 32
    results = {}
    for r in range(info.size):
        read_command(bus, info.base, info.levels << contract.LPM_LEVEL_SHIFT | r)
        flags = bus.read32(info.base + contract.WIN_FLAGS)
        if not flags & contract.FLAGS_VALID:
            continue
        prefix = sum(bus.read32(info.base + contract.WIN_KEY + 4 * i) << (32 * i) for i in range((kw + 31) // 32))
        length = bus.read32(info.base + contract.WIN_PRIORITY)
        data = sum(bus.read32(info.base + contract.WIN_DATA + 4 * i) << (32 * i) for i in range(words))
        results[r] = [prefix, length, drv.flags_action(flags), data]

    key_shift = contract.LPM_POINTER_SHIFT + pointer_bits
    slot_bits = key_shift + kw
    node_words = (fanout * slot_bits + 31) // 32
    leaves = []  # (interval start, result or None), in key order

    def walk(level, node):
        read_command(bus, info.base, level << contract.LPM_LEVEL_SHIFT | node)
        bits = sum(bus.read32(info.base + contract.WIN_DATA + 4 * i) << (32 * i) for i in range(node_words))
        for j in range(fanout):
            slot = bits >> (j * slot_bits) & ((1 << slot_bits) - 1)
            if j and not slot & contract.LPM_SLOT_VALID:
                break
            pointer = slot >> contract.LPM_POINTER_SHIFT & ((1 << pointer_bits) - 1)
            if level + 1 < info.levels:
                walk(level + 1, pointer)
            else:
                start = 0 if not leaves else slot >> key_shift
                leaves.append((start, pointer if slot & contract.LPM_SLOT_HAS_RESULT else None))

    walk(0, 0)
    for i, (start, r) in enumerate(leaves):
        end = leaves[i + 1][0] if i + 1 < len(leaves) else 1 << kw
        if r is None:
            continue
        if r not in results:
            raise RuntimeError(f"LPM interval {start:#x}..{end - 1:#x} answers result {r}, which is not valid")
        prefix, length = results[r][:2]
        if not (prefix <= start and end <= prefix + (1 << (kw - length))):
            raise RuntimeError(f"LPM interval {start:#x}..{end - 1:#x} answers result {r}, "
                               f"whose prefix {prefix:#x}/{length} does not cover it")
    return [results[r] for r in sorted(results)]


def read_back(bus):
    tables = {}
    with drv.Device(bus) as dev:
        infos = list(dev.tables)
        shapes = {t: (lv.fanout, lv.pointer_bits) for t, lv in
                  ((t, dev.lpm_level(t, 0)) for t, info in enumerate(infos)
                   if info.kind & contract.KIND_CODE_MASK == contract.KIND_LPM)}
        for t, info in enumerate(infos):
            kind = info.kind & contract.KIND_CODE_MASK
            if kind == contract.KIND_EXACT:
                tables[t] = [[e.key, e.action_id, e.data] for e in
                             (dev.exact_read(t, i) for i in range(info.size)) if e.valid]
            elif kind == contract.KIND_MEM_EXACT:
                tables[t] = [[e.key, e.action_id, e.data] for e in
                             (dev.mem_exact_read(t, b << contract.MEMX_INDEX_SLOT_BITS | s)
                              for b in range(info.size // info.bucket_entries)
                              for s in range(info.bucket_entries)) if e.valid]
            elif kind == contract.KIND_TERNARY:
                tables[t] = [[e.key, e.mask, e.priority, e.action_id, e.data] for e in
                             (dev.ternary_read(t, i) for i in range(info.size)) if e.valid]
    for t, info in enumerate(infos):
        if info.kind & contract.KIND_CODE_MASK == contract.KIND_LPM:
            tables[t] = lpm_read_back(bus, info, *shapes[t])
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
