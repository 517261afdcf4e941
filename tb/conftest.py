"""pytest configuration for the Matcha testbenches."""

import pytest

from tb.common import seeds


def pytest_addoption(parser):
    parser.addoption("--matcha-seed", action="store", default=None,
                     help="seed for randomized tests (default: env MATCHA_SEED or random)")


def pytest_configure(config):
    seeds.set_option_seed(config.getoption("--matcha-seed"))


@pytest.fixture
def matcha_seed(request):
    """The seed of this test, printed as MATCHA_SEED=<n> so a failure can be repeated."""
    seed = seeds.choose_seed()
    seeds.announce(seed, request.node.nodeid)
    return seed
