# SPDX-License-Identifier: Apache-2.0
"""matcha-sim's refusals of the live options (sim/README.md, "Live"): bad --interface and
--cpu-port values, captures and interfaces together, an interface that is not there. Each
exits with status 2 and a message naming the option; none needs a network namespace (the
live runs themselves are tested in tb/ptf/).
"""


import pytest

from tb.sim import harness

pytestmark = pytest.mark.builds(harness.SimBinary("w64"))


def refusal(work, *args):
    """The simulator's message for `args`, which it must refuse with status 2."""
    missing = harness.SimBinary("w64").missing()
    if missing:
        pytest.skip(missing)
    rc, out, err = harness.run("w64", *args, "--out", work / "out", timeout=60)
    assert rc == 2, f"exit {rc}\n{out}\n{err}"
    return err


@pytest.mark.parametrize("args, message", [
    (["--interface", "16@veth0"], "out of range"),
    (["--interface", "veth0"], "expected PORT@INTERFACE"),
    (["--interface", "0@"], "expected PORT@INTERFACE"),
    (["--interface", "0@a", "--interface", "0@b"], "port 0 given twice"),
    (["--interface", "0@a", "--interface", "1@a"], "interface a given twice"),
    (["--interface", "0@a", "--cpu-port", "a"], "--cpu-port a: also --interface 0@a"),
    (["--interface", "0@" + "x" * 16], "at most 15 bytes"),
    (["--cpu-port", "x" * 16], "--cpu-port: an interface name of 1 to 15 bytes"),
    (["--in", "0=x.pcap", "--interface", "1@a"], "not both"),
], ids=["port_out_of_range", "no_port", "no_interface", "port_twice", "interface_twice",
        "cpu_port_also_a_port", "name_too_long", "cpu_name_too_long", "captures_and_interfaces"])
def test_bad_live_options(work, args, message):
    assert message in refusal(work, *args)


@pytest.mark.parametrize("args", [["--interface", "3@matcha-nosuch"],
                                  ["--cpu-port", "matcha-nosuch"]], ids=["port", "cpu_port"])
def test_interface_not_there(work, args):
    """An interface that does not exist is refused before anything runs, the message naming
    the option and the interface, then libpcap's reason."""
    assert f"matcha-sim: {' '.join(args)}: " in refusal(work, *args)
