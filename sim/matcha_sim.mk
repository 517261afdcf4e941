# SPDX-License-Identifier: Apache-2.0
# matcha-sim linked against the test model of its program's pipeline, which
# tb/common/sim.py builds for the cocotb tests: one Verilator build serves both. Verilator's
# own verilated.mk compiles the harness with the model's settings (VM_TRACE, ...) and gives
# the link its libraries; the model's archive and runtime objects are linked as they are.
#
#   make -f sim/matcha_sim.mk -C OBJ_DIR VERILATOR_ROOT=... MODEL=... HARNESS_DIR=... \
#        HARNESS="matcha_sim pcap_io ..." BINARY=... OPT_FAST=-O1 HARNESS_CPPFLAGS="-I..."
# (sim/build.py runs it.)

all: $(BINARY)

include $(MODEL)/Vtop_classes.mk
VM_PREFIX = Vtop
# What the model's own Vtop.mk sets besides its classes: C++, not SystemC.
VM_SC = 0
VM_USER_CLASSES = $(HARNESS)
VM_USER_DIR = $(HARNESS_DIR)
USER_CPPFLAGS = -I$(MODEL) $(HARNESS_CPPFLAGS)
USER_LDLIBS += -lpcap
include $(VERILATOR_ROOT)/include/verilated.mk
VPATH += $(VM_USER_DIR)

MODEL_OBJS = $(addprefix $(MODEL)/, $(addsuffix .o, $(VM_GLOBAL_FAST) $(VM_GLOBAL_SLOW)))

$(BINARY): $(VK_USER_OBJS) $(MODEL_OBJS) $(MODEL)/$(VM_PREFIX)__ALL.a
	$(LINK) $(LDFLAGS) $^ $(LOADLIBES) $(LDLIBS) $(LIBS) -o $@
