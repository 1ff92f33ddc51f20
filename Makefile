# Tritium — top-level build.
#
#   make          build everything (C libraries, tools, the Python extension)
#   make demo     set up, build, run the examples under Proton, print the report
#   make test     set up, build, run every test (C unit, IR files, pytest, fuzz, browser, ASan)
#   make bench    set up, build, print benchmark ratios against torch
#   make install  install proton-cli, tritium-opt, tritium-run and libtritium into $(PREFIX)
#   make riscv64  cross-build libtritium, tritium-run and the AOT example for riscv64 boards
#   make test-riscv             the RISC-V suite under qemu-riscv64 (also part of make test)
#   make test-riscv-python      the whole stack, Python included, under qemu-riscv64 (slow)
#   make test-upstream          upstream Triton's test_core.py (interpreter-marked set, --device cpu)
#                               from UPSTREAM_TRITON_GIT at UPSTREAM_TRITON_COMMIT; UPSTREAM_ARGS
#                               passes options to tests/upstream/run.py (--every 6, -k name, --jobs 1)
#
# One non-recursive make: each module directory contributes a build.mk.

.DEFAULT_GOAL := all
SHELL := /bin/bash
PREFIX ?= /usr/local

include mk/config.mk

ALL_TARGETS   :=
TEST_C_BINS   :=
CLEAN_EXTRA   :=

include compiler/build.mk
include runtime/build.mk
include proton/build.mk
include viewers/build.mk
include python/build.mk
include tests/build.mk

.PHONY: all setup demo test bench install clean test-c test-ir test-py test-asan riscv64 riscv64-python \
        test-riscv test-riscv-python test-upstream

all: $(ALL_TARGETS)

# scripts/setup.sh is idempotent and returns in well under a second when the
# machine is already set up.
setup:
	@scripts/setup.sh

demo: setup
	@$(MAKE) --no-print-directory all
	@scripts/demo.sh

test: setup
	@$(MAKE) --no-print-directory all
	@scripts/run_tests.sh

bench: setup
	@$(MAKE) --no-print-directory all
	@$(PYTHON) bench/run_all.py

# ---- RISC-V (docs/aot.md §4, README "On a RISC-V board") --------------------------------
RV_TARGETS := lib/libtritium.a lib/libtritium.so bin/tritium-run bin/aot-vadd tests/test_rv_counters
RV_SYSROOT_OK = @scripts/riscv_sysroot.sh $(1) && { [ -f build/riscv64/sysroot/.tritium-$(1) ] || \
    [ -f build/riscv64/sysroot/.tritium-python ] || { echo "make: no riscv64 sysroot: $$(cat build/riscv64/sysroot.unavailable)"; exit 1; }; }
riscv64:
	$(call RV_SYSROOT_OK,launcher)
	@$(MAKE) --no-print-directory CROSS=riscv64 riscv64-all
# the whole stack for riscv64: also the compiler (libtritium_cg.so on the sysroot's
# LLVM/MLIR 19) and the Python extension for its python3 (scripts/riscv_python.sh)
riscv64-python:
	$(call RV_SYSROOT_OK,python)
	@$(MAKE) --no-print-directory CROSS=riscv64 riscv64-all riscv64-python-all
ifneq ($(CROSS),)
.PHONY: riscv64-all riscv64-python-all
riscv64-all: $(addprefix $(BUILD)/,$(RV_TARGETS))
riscv64-python-all: $(CG_LIB) $(PY_EXT_SO) $(OPT_BIN)
endif

UPSTREAM_TRITON_GIT ?= /work/.mirror/lightseekorg+triton/repo
UPSTREAM_TRITON_COMMIT ?= f4fca2c0
UPSTREAM_ARGS ?=
test-upstream: setup
	@$(MAKE) --no-print-directory all
	@UPSTREAM_TRITON_GIT=$(UPSTREAM_TRITON_GIT) UPSTREAM_TRITON_COMMIT=$(UPSTREAM_TRITON_COMMIT) \
	  $(PYTHON) tests/upstream/run.py $(UPSTREAM_ARGS)

test-riscv: setup
	@$(MAKE) --no-print-directory all
	@tests/riscv/run.sh

# The Python front end itself under qemu-riscv64 from a trixie riscv64 sysroot
# (python3, numpy, torch, LLVM/MLIR 19: ~330 MB of packages, fetched on first use).
test-riscv-python: setup
	@$(MAKE) --no-print-directory all
	@scripts/riscv_python.sh test

install: all
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 755 $(BUILD)/bin/proton-cli $(BUILD)/bin/tritium-opt $(BUILD)/bin/tritium-run $(DESTDIR)$(PREFIX)/bin/
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include
	install -m 644 $(BUILD)/lib/libtritium.so $(BUILD)/lib/libtritium.a $(DESTDIR)$(PREFIX)/lib/
	install -m 644 runtime/include/tritium_aot.h $(DESTDIR)$(PREFIX)/include/

clean:
	rm -rf build build-san $(CLEAN_EXTRA)

# (build/riscv64/sysroot and apt hold Debian's riscv64 packages, not our objects)
-include $(shell find $(BUILD) \( -name sysroot -o -name apt \) -prune -o -name '*.d' -type f -print 2>/dev/null)
