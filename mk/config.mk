# mk/config.mk — toolchain, flags and paths shared by every module's build.mk.
#
# Everything is built out of tree under $(BUILD) (default ./build). Each module
# directory has a build.mk fragment that appends to the variables below; the
# top-level Makefile includes them all (one make, no recursion).

BUILD      ?= build
LLVM_DIR   ?= /usr/lib/llvm-19
LLVM_BIN   := $(LLVM_DIR)/bin
CC         ?= gcc
ifeq ($(origin CC),default)
CC         := gcc
endif
PYTHON     ?= $(CURDIR)/.venv/bin/python3

# Cross build for RISC-V boards: make CROSS=riscv64 <targets> builds into build/riscv64
# with Debian's riscv64-linux-gnu-gcc against the Debian 13 riscv64 sysroot that
# scripts/riscv_sysroot.sh unpacks into build/riscv64/sysroot (cJSON, libpfm4, and for
# the whole stack LLVM/MLIR 19 and python3.13). Programs run there under
# qemu-riscv64 -L build/riscv64/sysroot; paths baked into them (rpath) are the board's.
ifeq ($(CROSS),riscv64)
RV_SYSROOT ?= $(CURDIR)/build/riscv64/sysroot
BUILD      := build/riscv64
# Debian's cross gcc searches its own (Debian 12) riscv64 libc before --sysroot's: put
# the sysroot's headers, start files and libraries first
RV_MULTI   := $(RV_SYSROOT)/usr/lib/riscv64-linux-gnu
CC         := riscv64-linux-gnu-gcc --sysroot=$(RV_SYSROOT) -isystem $(RV_SYSROOT)/usr/include/riscv64-linux-gnu \
              -isystem $(RV_SYSROOT)/usr/include
RV_LDFLAGS := -B$(RV_MULTI)/ -L$(RV_MULTI) -Wl,-rpath-link,$(RV_MULTI)
LLVM_ROOT  := $(RV_SYSROOT)
PY_VER_RV  := $(notdir $(firstword $(wildcard $(RV_SYSROOT)/usr/include/python3.*)))
PY_INCLUDE_RV := $(RV_SYSROOT)/usr/include/$(PY_VER_RV)
PY_EXT_RV  := .cpython-$(subst .,,$(subst python,,$(PY_VER_RV)))-riscv64-linux-gnu.so
else ifneq ($(CROSS),)
$(error CROSS=$(CROSS): the only cross target is riscv64)
endif
LLVM_ROOT  ?=

# Sanitizer builds: make SAN=1 (ASan + UBSan) uses a separate build tree.
ifeq ($(SAN),1)
BUILD      := build-san
SANFLAGS   := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
endif

WARN       := -Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-field-initializers
OPT        ?= -O2 -g
CFLAGS_ALL := -std=gnu17 $(OPT) $(WARN) -fPIC -fvisibility=hidden $(SANFLAGS) \
              -D_GNU_SOURCE -MMD -MP
LDFLAGS_ALL:= $(SANFLAGS) $(RV_LDFLAGS)

MLIR_CFLAGS := -I$(LLVM_ROOT)$(LLVM_DIR)/include
# The MLIR C API archives link against the monolithic libMLIR and libLLVM.
MLIR_CAPI_LIBS := $(addprefix $(LLVM_ROOT)$(LLVM_DIR)/lib/libMLIRCAPI,$(addsuffix .a,\
    RegisterEverything Conversion Transforms Target TransformDialect \
    TransformDialectTransforms Linalg Tensor MemRef Vector SCF Func Math Arith \
    LLVM Interfaces IR))
ifeq ($(CROSS),riscv64)
STDCXX_LIB := $(RV_SYSROOT)/usr/lib/riscv64-linux-gnu/libstdc++.so.6
else
STDCXX_LIB := -lstdc++
endif
MLIR_LIBS  := -Wl,--start-group $(MLIR_CAPI_LIBS) -Wl,--end-group \
              -L$(LLVM_ROOT)$(LLVM_DIR)/lib -Wl,-rpath,$(LLVM_DIR)/lib -lMLIR -lLLVM-19 $(STDCXX_LIB) -lm

CJSON_LIBS := -lcjson
PFM_LIBS   := -lpfm
CMOCKA_LIBS:= -lcmocka

# Python extension settings come from the interpreter we build for.
ifeq ($(CROSS),riscv64)
PY_INCLUDE  = $(PY_INCLUDE_RV)
PY_EXT      = $(PY_EXT_RV)
else
PY_INCLUDE  = $(shell $(PYTHON) -c 'import sysconfig;print(sysconfig.get_paths()["include"])' 2>/dev/null)
PY_EXT      = $(shell $(PYTHON) -c 'import sysconfig;print(sysconfig.get_config_var("EXT_SUFFIX"))' 2>/dev/null)
endif

# Quiet output: one short line per target ("  CC     file"); V=1 prints every
# command instead. A recipe line starts with $(call say,WHAT,target) (which ends in
# ';' when quiet, so it and the command run silently in one shell), further lines
# of the same recipe with $(Q).
ifeq ($(V),1)
Q   :=
say  =
else
Q   := @
say  = @printf '  %-6s %s\n' '$(1)' '$(2)';
endif

# compile rule helper: $(call cc_obj,<extra cflags>) is used by the pattern rules
$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CFLAGS_ALL) $(CFLAGS_$(firstword $(subst /, ,$<))) -c $< -o $@
