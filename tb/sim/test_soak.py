# SPDX-License-Identifier: Apache-2.0
"""The counting soak (tb/sim/soak.py): randomized traffic through matcha-sim running the
conntrack program or the overlay program (tb/sim/soak_overlay.py), every frame compared
with the reference model and accounted for, with table churn, bad control-bus accesses, a
reset and a SYN flood during the traffic.

`make test` runs a short version of each scenario of each program on the 64-bit simulators
that tb/sim/test_programs.py and tb/sim/test_overlay_example.py build (one chunk of a few
thousand frames, seconds each); `make soak` runs test_soak_overlay_counts_everything:
10^7 frames through the 512-bit overlay simulator, the largest program, in two shards,
every scenario in turn, written to bench/results/soak.md (MATCHA_SOAK_FRAMES=<n> for
fewer), and test_soak_counts_everything, the same through the 512-bit conntrack simulator
with 10^6 frames, written to bench/results/soak_conntrack.md
(MATCHA_SOAK_CONNTRACK_FRAMES=<n>). MATCHA_SOAK_MAX_MINUTES=<m> starts no chunk after m
minutes, and the result says how many frames ran.

Run one: pytest tb/sim/test_soak.py [--matcha-seed N]
"""

import os
import shlex

import pytest

from tb.sim import harness, soak

CONNTRACK = harness.SimBinary("w64", "conntrack")
CONNTRACK_W512 = harness.SimBinary("w512", "conntrack")
OVERLAY = harness.SimBinary("w64", "overlay")
OVERLAY_W512 = harness.SimBinary("w512", "overlay")
CONNTRACK_RESULT = harness.REPO / "bench" / "results" / "soak_conntrack.md"
OVERLAY_RESULT = harness.REPO / "bench" / "results" / "soak.md"
SHORT = dict(frames=3000, chunk=3000, config="w64", churn=False, bad_bus=False,
             reset_every=0, syn_flood_every=0)


def run_short(work, seed, **scenario):
    binary = OVERLAY if scenario.get("program") == "overlay" else CONNTRACK
    missing = binary.missing()
    if missing:
        pytest.skip(missing)
    plan = soak.Plan(**{**SHORT, **scenario})
    counts = soak.run_shard(plan, seed, work)
    print(soak.report(plan, seed, 1, counts, counts.sim_seconds + counts.model_seconds,
                      "tb/sim/test_soak.py", "-"))
    assert counts.first_errors == []
    assert counts.frames_in == plan.frames
    assert (counts.mismatches, counts.unaccounted, counts.summary_errors) == (0, 0, 0)
    assert counts.accounted() == counts.frames_in
    return counts


@pytest.mark.builds(CONNTRACK)
def test_soak_traffic(work, matcha_seed):
    """3,000 random frames with back-pressure: flows, truncated, malformed and random
    frames of sizes from 1 to 9216 bytes, each out, punted or dropped as the model says,
    summary.json's counts the frames' own."""
    c = run_short(work, matcha_seed)
    assert c.out and c.punted and c.dropped
    assert set(c.kinds) >= {"flow", "churn_port", "truncated", "malformed", "random"}
    assert any(c.sizes[1:60]) and any(c.sizes[1519:])


@pytest.mark.builds(CONNTRACK)
def test_soak_table_churn(work, matcha_seed):
    """by_session entries added, modified and deleted through the driver while frames
    flow: frames in an update's clock window match the table before or after it, every
    other frame the table as it was."""
    c = run_short(work, matcha_seed, churn=True)
    assert c.updates >= 200 and set(c.update_ops) == {"add", "modify", "delete"}, c.update_ops
    assert c.ambiguous > 0


@pytest.mark.builds(CONNTRACK)
def test_soak_reset_in_traffic(work, matcha_seed):
    """A reset in the middle of the traffic (OP_RESET), the tables reloaded, the traffic
    going on: the frames in the pipeline are lost and listed, every other frame is the
    model's (the frames after the reset the model's with its tables reloaded and no
    session)."""
    c = run_short(work, matcha_seed, churn=True, reset_every=1)
    assert c.resets == 1
    assert c.lost > 0


@pytest.mark.builds(CONNTRACK)
def test_soak_bad_bus_accesses(work, matcha_seed):
    """Unmapped addresses (SLVERR), addresses beyond the window (DECERR), unaligned ones,
    unknown ops and bad padding (0xFF) while frames flow: each answered as
    docs/sim-socket.md says, no frame disturbed."""
    c = run_short(work, matcha_seed, bad_bus=True)
    assert c.bad_accesses >= 100
    assert c.bad_answers_wrong == 0


@pytest.mark.builds(CONNTRACK)
def test_soak_syn_flood(work, matcha_seed):
    """Half of the second half of the frames TCP SYNs from new inside sources: the
    session table fills and the flows it cannot learn are punted (`sessions.full`), as the
    model's session table says frame by frame."""
    c = run_short(work, matcha_seed, syn_flood_every=1)
    assert c.kinds["syn_flood"] > 500
    assert c.session_full > 0


@pytest.mark.soak
@pytest.mark.builds(CONNTRACK_W512)
def test_soak_counts_everything(matcha_seed):
    """The conntrack program's counting soak: 10^6 frames (MATCHA_SOAK_CONNTRACK_FRAMES)
    through the 512-bit simulator in two shards, every scenario of the tests above in turn;
    bench/results/soak_conntrack.md."""
    missing = CONNTRACK_W512.missing()
    if missing:
        pytest.skip(missing)
    frames = int(os.environ.get("MATCHA_SOAK_CONNTRACK_FRAMES", 10**6))
    argv = ["--frames", str(frames), "--seed", str(matcha_seed), "--report",
            str(CONNTRACK_RESULT)]
    if os.environ.get("MATCHA_SOAK_MAX_MINUTES"):
        argv += ["--max-minutes", os.environ["MATCHA_SOAK_MAX_MINUTES"]]
    print("python -m tb.sim.soak " + shlex.join(argv))
    assert soak.main(argv) == 0


# ------------------------------------------------------------------ the overlay program

OVERLAY_KINDS = {"flow", "churn_flow", "overlay_miss", "non_overlay", "truncated",
                 "malformed", "random"}


@pytest.mark.builds(OVERLAY)
def test_soak_overlay_traffic(work, matcha_seed):
    """3,000 random frames through the overlay program with back-pressure: VXLAN flows of
    six ENIs both ways (sessions learned by the opener's frames and hit by the replies),
    frames each table's drop or miss stops, plain, truncated, malformed and random frames
    of sizes from 1 to 9216 bytes, each out, punted or dropped as the model says."""
    c = run_short(work, matcha_seed, program="overlay")
    assert c.out and c.punted and c.dropped
    assert c.sessions_learned > 20 and c.session_hits > 100, (c.sessions_learned, c.session_hits)
    assert set(c.kinds) >= OVERLAY_KINDS, c.kinds
    assert any(c.sizes[1:60]) and any(c.sizes[1519:])
    # Reasons of most stages: vip, eni_out/eni_in, admin down, inbound routing, PA
    # validation, ACL deny and to_host, route miss and drop, mapping, vnet, frame_class.
    seen = set(c.dropped) | set(c.punted)
    assert seen >= {0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x3C, 0x3D, 0x3E,
                    0x3F}, sorted(map(hex, seen))


@pytest.mark.builds(OVERLAY)
def test_soak_overlay_table_churn(work, matcha_seed):
    """`mapping` entries of the churned VNET added, modified (re-mapped or made to drop) and
    deleted through the driver's entry API while frames to its CAs flow: frames in an
    update's clock window match the table before or after it, every other frame the table
    as it was."""
    c = run_short(work, matcha_seed, program="overlay", churn=True)
    assert c.updates >= 200 and set(c.update_ops) == {"add", "modify", "delete"}, c.update_ops
    assert c.kinds["churn_flow"] > 100
    assert c.ambiguous > 0


@pytest.mark.builds(OVERLAY)
def test_soak_overlay_reset_in_traffic(work, matcha_seed):
    """A reset in the middle of the overlay's traffic, the tables (and the defaults) reloaded
    through the driver: the frames in the pipeline are lost and listed, every other frame
    is the model's, the sessions learned before the reset gone."""
    c = run_short(work, matcha_seed, program="overlay", churn=True, reset_every=1)
    assert c.resets == 1
    assert c.lost > 0


@pytest.mark.builds(OVERLAY)
def test_soak_overlay_bad_bus_accesses(work, matcha_seed):
    """Bad control-bus accesses while overlay frames flow: each answered as
    docs/sim-socket.md says, no frame disturbed."""
    c = run_short(work, matcha_seed, program="overlay", bad_bus=True)
    assert c.bad_accesses >= 100
    assert c.bad_answers_wrong == 0


@pytest.mark.builds(OVERLAY)
def test_soak_overlay_syn_flood(work, matcha_seed):
    """From a quarter of the frames on, three in four are TCP SYNs of new flows the ACL
    permits, from every ENI: the 1,024-session table fills and the flows it cannot learn
    are punted (`sessions.full`, 0x39), as the model's session table says frame by
    frame."""
    c = run_short(work, matcha_seed, program="overlay", syn_flood_every=1)
    assert c.kinds["syn_flood"] > 1024
    assert c.session_full > 0


@pytest.mark.soak
@pytest.mark.builds(OVERLAY_W512)
def test_soak_overlay_counts_everything(matcha_seed):
    """test_soak_counts_everything through the overlay program: 10^7 frames
    (MATCHA_SOAK_FRAMES) through the 512-bit overlay simulator in two shards, every
    scenario of the overlay tests above in turn (a SYN-flood chunk long enough to fill its
    65,536 sessions); bench/results/soak.md."""
    missing = OVERLAY_W512.missing()
    if missing:
        pytest.skip(missing)
    frames = int(os.environ.get("MATCHA_SOAK_FRAMES", 10**7))
    argv = ["--program", "overlay", "--frames", str(frames), "--seed", str(matcha_seed),
            "--report", str(OVERLAY_RESULT)]
    if os.environ.get("MATCHA_SOAK_MAX_MINUTES"):
        argv += ["--max-minutes", os.environ["MATCHA_SOAK_MAX_MINUTES"]]
    print("python -m tb.sim.soak " + shlex.join(argv))
    assert soak.main(argv) == 0
