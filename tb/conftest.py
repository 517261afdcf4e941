# SPDX-License-Identifier: Apache-2.0
"""pytest configuration for the Matcha testbenches: seeds, the soak split, the time budget of one
test, and building every simulator model before the tests run."""

import shutil
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from tb.common import seeds
from tb.common.sim import TEST_BUDGET_S


def pytest_addoption(parser):
    parser.addoption("--matcha-seed", action="store", default=None,
                     help="seed for randomized tests (default: env MATCHA_SEED or random)")
    parser.addoption("--soak", action="store_true",
                     help="run only the long scenarios (marked soak), without the time budget")
    parser.addoption("--with-soak", action="store_true",
                     help="run the long scenarios too (for one test named on the command line)")
    parser.addoption("--build-models", action="store", type=int, default=None, metavar="N",
                     help="build every model the selected tests need, N at a time, then stop")


def pytest_configure(config):
    seeds.set_option_seed(config.getoption("--matcha-seed"))
    config.addinivalue_line("markers", "soak: a long scenario, run by `make soak` only")
    config.addinivalue_line("markers", "builds(*targets): what the test needs built "
                                       "(objects with build()), besides its model parameter")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--with-soak"):
        return
    # Two disjoint sets: make test's items, make soak's.
    soak = config.getoption("--soak")
    keep, drop = [], []
    for item in items:
        (keep if (item.get_closest_marker("soak") is not None) == soak else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def _targets(items):
    """Every distinct thing the items need built: their `model` parameter (sim.Model) and
    the arguments of their `builds` markers, in the order first needed."""
    seen = {}
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        found = [params["model"]] if "model" in params else []
        for mark in item.iter_markers("builds"):
            found += mark.args
        for target in found:
            seen.setdefault(target, None)
    return list(seen)


def pytest_collection_finish(session):
    jobs = session.config.getoption("--build-models")
    if jobs is None or session.config.option.collectonly:
        return
    from tb.common import driver
    targets = [t for t in _targets(session.items) if getattr(t, "missing", lambda: None)() is None]
    start = time.monotonic()
    driver.build_library()

    def build(target):
        t0 = time.monotonic()
        target.build()
        return target, time.monotonic() - t0

    # Each build is one Verilator front end (one core) and a parallel C++ compile.
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for target, secs in pool.map(build, targets):
            print(f"{target}: ready ({secs:.0f} s)", flush=True)
    pytest.exit(f"{len(targets)} models up to date in {time.monotonic() - start:.0f} s",
                returncode=0)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when != "call":
        return
    # A cocotb test that ran in a simulator run with others (sim.cocotb_entry) reports its
    # own time, and its budget counts that alone.
    own = getattr(item, "matcha_test_seconds", report.duration)
    report.duration = getattr(item, "matcha_seconds", report.duration)
    if (report.passed and TEST_BUDGET_S > 0 and item.get_closest_marker("soak") is None
            and own > TEST_BUDGET_S):
        report.outcome = "failed"
        report.longrepr = (f"{item.nodeid} passed but took {own:.0f} s, over the "
                           f"{TEST_BUDGET_S:.0f} s budget of one test in `make test`: make "
                           f"it shorter, or make it a soak scenario (tb/README.md)")


@pytest.fixture
def matcha_seed(request):
    """The seed of this test, printed as MATCHA_SEED=<n> so a failure can be repeated."""
    seed = seeds.choose_seed()
    seeds.announce(seed, request.node.nodeid)
    return seed


@pytest.fixture
def work():
    """A fresh directory with a short path (tb.sim.harness.short_dir: Unix socket paths
    are short), removed after the test."""
    from tb.sim.harness import short_dir
    d = short_dir()
    yield d
    shutil.rmtree(d, ignore_errors=True)
