# SPDX-License-Identifier: Apache-2.0
"""matcha-sim live on the veth pairs of a test's namespace (tb/common/netns.py; sim/README.md,
"Live"): the binary tb/sim builds (w64, the built-in program), started inside the namespace,
ready once it has printed its first line, stopped by SIGTERM. tb/ptf and tb/p4rt run it."""

import json
import select
import signal
import subprocess

import pytest

from tb.common import sim
from tb.sim import harness

CONFIG = "w64"


def need():
    """Skips the test when the RTL to build the simulator from is missing."""
    missing = harness.SimBinary(CONFIG).missing()
    if missing:
        pytest.skip(missing)


class LiveSim:
    """matcha-sim in namespace `ns` with `ports` on the interfaces sim<N>, the CPU port on
    simcpu when `cpu`, the control socket and the outputs in `work`."""

    def __init__(self, ns, work, ports, cpu=True, args=(), start_timeout=60):
        self.work = work
        self.socket = work / "ctl.sock"
        self.out = work / "out"
        cmd = [harness.binary(CONFIG), *(a for p in ports for a in ("--interface", f"{p}@sim{p}")),
               *(["--cpu-port", "simcpu"] if cpu else []), "--socket", self.socket,
               "--out", self.out, "--layout", sim.layout_file(CONFIG), *args]
        self.proc = ns.popen(*cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.rc = self.stdout = self.stderr = None
        # The first line comes once the interfaces are open, the socket listens and the
        # pipeline is out of reset.
        ready, _, _ = select.select([self.proc.stdout], [], [], start_timeout)
        self.banner = self.proc.stdout.readline() if ready else ""
        if not self.banner.startswith("matcha-sim "):
            self.stop()
            raise AssertionError(f"matcha-sim did not start (exit {self.rc}): {cmd}\n"
                                 f"{self.banner}{self.stdout}\n{self.stderr}")

    def stop(self, timeout=60):
        """SIGTERM, the end of a live run; returns (exit status, stdout, stderr)."""
        if self.rc is None:
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGTERM)
            try:
                self.stdout, self.stderr = self.proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.stdout, self.stderr = self.proc.communicate()
                raise AssertionError(f"matcha-sim did not end within {timeout} s of SIGTERM:\n"
                                     f"{self.stdout}\n{self.stderr}")
            self.rc = self.proc.returncode
        return self.rc, self.stdout, self.stderr

    def summary(self):
        return json.loads((self.out / "summary.json").read_text())

    def outputs(self):
        return harness.read_outputs(self.out)
