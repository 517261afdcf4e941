# SPDX-License-Identifier: Apache-2.0
"""Random seeds: every randomized test prints the seed it uses and takes one to repeat.

Order of precedence: pytest option --matcha-seed, environment MATCHA_SEED, a fresh one.
Inside a simulation the pytest entry passes its seed as MATCHA_TB_SEED.
"""

import os
import random
import secrets

_option_seed = None


def set_option_seed(value):
    global _option_seed
    _option_seed = value


def choose_seed():
    """Seed for one test: --matcha-seed, else MATCHA_SEED, else a new random one."""
    if _option_seed is not None:
        return int(_option_seed, 0) if isinstance(_option_seed, str) else int(_option_seed)
    env = os.environ.get("MATCHA_SEED")
    if env:
        return int(env, 0)
    return secrets.randbits(31)


def announce(seed, what=""):
    print(f"MATCHA_SEED={seed}" + (f"  ({what})" if what else ""), flush=True)


def sim_seed():
    """Seed inside a cocotb test module (set by the pytest entry, or MATCHA_SEED)."""
    for key in ("MATCHA_TB_SEED", "MATCHA_SEED"):
        if os.environ.get(key):
            return int(os.environ[key], 0)
    return secrets.randbits(31)


def rng_for(seed, name):
    """Independent generator per test case, derived from the run's seed and a name."""
    return random.Random(f"{seed}:{name}")
