# compiler/build.mk — tile IR, passes and lowering (libtritium_ir.a, no MLIR
# dependency) plus the MLIR/LLVM driver (libtritium_cg.so) and tritium-opt.

CFLAGS_compiler := -Icompiler/include -Icompiler/src $(MLIR_CFLAGS)

IR_SRCS := $(filter-out compiler/src/cg_%.c,$(wildcard compiler/src/*.c))
CG_SRCS := $(wildcard compiler/src/cg_*.c)
IR_OBJS := $(IR_SRCS:%.c=$(BUILD)/%.o)
CG_OBJS := $(CG_SRCS:%.c=$(BUILD)/%.o)

IR_LIB  := $(BUILD)/lib/libtritium_ir.a
CG_LIB  := python/triton/_C/libtritium_cg.so
OPT_BIN := $(BUILD)/bin/tritium-opt

$(IR_LIB): $(IR_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# The codegen library is loaded lazily (dlopen) by the Python extension so that
# importing triton does not map libMLIR/libLLVM until the first compile.
$(CG_LIB): $(CG_OBJS) $(IR_LIB)
	@mkdir -p $(dir $@)
	$(CC) -shared -o $@ $(CG_OBJS) $(IR_LIB) $(LDFLAGS_ALL) $(MLIR_LIBS) -Wl,-soname,libtritium_cg.so

$(OPT_BIN): $(BUILD)/compiler/tools/tritium_opt.o $(CG_OBJS) $(IR_LIB)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(LDFLAGS_ALL) $(MLIR_LIBS)

ALL_TARGETS += $(IR_LIB) $(CG_LIB) $(OPT_BIN)
CLEAN_EXTRA += $(CG_LIB)
