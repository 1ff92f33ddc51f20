# python/build.mk — the CPython extension triton._C.tritium (front-end builder,
# launcher, Proton bindings). It links the IR, runtime and Proton archives
# statically and loads libtritium_cg.so on the first compile.

CFLAGS_python = -Ipython/src -Icompiler/include -Iruntime/include -Iproton/include -I$(PY_INCLUDE)

PYX_SRCS := $(wildcard python/src/*.c)
PYX_OBJS := $(PYX_SRCS:%.c=$(BUILD)/%.o)
ifeq ($(CROSS),)
PY_EXT_SO = python/triton/_C/tritium$(PY_EXT)
else
# make CROSS=riscv64: the extension and libtritium_cg.so go to the cross build's own
# package directory (scripts/riscv_python.sh lays the Python sources around it)
PY_EXT_SO = $(BUILD)/python/triton/_C/tritium$(PY_EXT)
endif

$(PY_EXT_SO): $(PYX_OBJS) $(IR_LIB) $(RT_LIB) $(PN_LIB)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) -shared -o $@.tmp $(PYX_OBJS) $(RT_LIB) $(PN_LIB) $(IR_LIB) $(LDFLAGS_ALL) $(CJSON_LIBS) $(PFM_LIBS) -ldl -lpthread -lm
	$(Q)mv -f $@.tmp $@

ALL_TARGETS += $(PY_EXT_SO)
CLEAN_EXTRA += python/triton/_C/tritium*.so
