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

# Sanitizer builds: make SAN=1 (ASan + UBSan) uses a separate build tree.
ifeq ($(SAN),1)
BUILD      := build-san
SANFLAGS   := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
endif

WARN       := -Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-field-initializers
OPT        ?= -O2 -g
CFLAGS_ALL := -std=gnu17 $(OPT) $(WARN) -fPIC -fvisibility=hidden $(SANFLAGS) \
              -D_GNU_SOURCE -MMD -MP
LDFLAGS_ALL:= $(SANFLAGS)

MLIR_CFLAGS := -I$(LLVM_DIR)/include
# The MLIR C API archives link against the monolithic libMLIR and libLLVM.
MLIR_CAPI_LIBS := $(addprefix $(LLVM_DIR)/lib/libMLIRCAPI,$(addsuffix .a,\
    RegisterEverything Conversion Transforms Target TransformDialect \
    TransformDialectTransforms Linalg Tensor MemRef Vector SCF Func Math Arith \
    LLVM Interfaces IR))
MLIR_LIBS  := -Wl,--start-group $(MLIR_CAPI_LIBS) -Wl,--end-group \
              -L$(LLVM_DIR)/lib -Wl,-rpath,$(LLVM_DIR)/lib -lMLIR -lLLVM-19 -lstdc++ -lm

CJSON_LIBS := -lcjson
PFM_LIBS   := -lpfm
CMOCKA_LIBS:= -lcmocka

# Python extension settings come from the interpreter we build for.
PY_INCLUDE  = $(shell $(PYTHON) -c 'import sysconfig;print(sysconfig.get_paths()["include"])' 2>/dev/null)
PY_EXT      = $(shell $(PYTHON) -c 'import sysconfig;print(sysconfig.get_config_var("EXT_SUFFIX"))' 2>/dev/null)

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
