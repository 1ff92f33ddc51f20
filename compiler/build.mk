# compiler/build.mk — tile IR, passes and lowering (libtritium_ir.a, no MLIR
# dependency) plus code generation and the compile driver (libtritium_cg.so) and
# tritium-opt.

CFLAGS_compiler := -Icompiler/include -Icompiler/src $(MLIR_CFLAGS)

IR_SRCS := $(filter-out compiler/src/cg_%.c compiler/src/drv_%.c,$(wildcard compiler/src/*.c))
CG_SRCS := $(wildcard compiler/src/cg_*.c compiler/src/drv_*.c)
IR_OBJS := $(IR_SRCS:%.c=$(BUILD)/%.o)
CG_OBJS := $(CG_SRCS:%.c=$(BUILD)/%.o)

IR_LIB  := $(BUILD)/lib/libtritium_ir.a
# The Python package loads the code generator from its own directory; sanitizer
# builds keep theirs in the build tree so they never replace the normal library.
ifeq ($(SAN),1)
CG_LIB  := $(BUILD)/lib/libtritium_cg.so
else ifneq ($(CROSS),)
CG_LIB  := $(BUILD)/python/triton/_C/libtritium_cg.so
else
CG_LIB  := python/triton/_C/libtritium_cg.so
endif
OPT_BIN := $(BUILD)/bin/tritium-opt

$(IR_LIB): $(IR_OBJS)
	@mkdir -p $(dir $@)
	$(call say,AR,$@)rm -f $@ && ar rcs $@ $^

# The codegen library is loaded lazily (dlopen) by the Python extension so that
# importing triton does not map libMLIR/libLLVM until the first compile.
$(CG_LIB): $(CG_OBJS) $(IR_LIB)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) -shared -o $@.tmp $(CG_OBJS) $(IR_LIB) $(LDFLAGS_ALL) $(MLIR_LIBS) -Wl,-soname,libtritium_cg.so \
	    -Wl,--exclude-libs,ALL
	$(Q)mv -f $@.tmp $@

$(OPT_BIN): $(BUILD)/compiler/tools/tritium_opt.o $(CG_OBJS) $(IR_LIB)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) -o $@ $^ $(LDFLAGS_ALL) $(MLIR_LIBS)

ALL_TARGETS += $(IR_LIB) $(CG_LIB) $(OPT_BIN)
CLEAN_EXTRA += $(CG_LIB)

# ---- code generator tests --------------------------------------------------------
# test_codegen, test_lo_math and test_driver link the cg_*.o and drv_*.o objects
# directly rather than libtritium_cg.so, whose path is shared by the normal and the
# SAN build.
TEST_LIBS_test_codegen := $(CG_OBJS) $(MLIR_LIBS)
TEST_LIBS_test_lo_math := $(CG_OBJS) $(MLIR_LIBS)
TEST_LIBS_test_driver := $(CG_OBJS) $(MLIR_LIBS)
$(BUILD)/tests/test_codegen $(BUILD)/tests/test_lo_math $(BUILD)/tests/test_driver: $(CG_OBJS)

# test_opt_stages runs the tritium-opt of its own build tree (the SAN build's is
# built with ASan), so building the test builds the tool.
$(BUILD)/tests/test_opt_stages: $(OPT_BIN)
