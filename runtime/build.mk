# runtime/build.mk — kernel cache, loader and OpenMP grid launcher (libtritium_rt.a),
# its unit-test link settings and the launch benchmarks.
#
# libtritium_rt.a needs, in whatever links it: libproton.a, -lcjson -ldl -lpthread.
# It does not link an OpenMP runtime (rt_omp.c binds one at run time).

CFLAGS_runtime := -Iruntime/include -Iruntime/src -Iproton/include -Icompiler/include

RT_SRCS := $(wildcard runtime/src/*.c)
RT_OBJS := $(RT_SRCS:%.c=$(BUILD)/%.o)
RT_LIB  := $(BUILD)/lib/libtritium_rt.a

$(RT_LIB): $(RT_OBJS)
	@mkdir -p $(dir $@)
	$(call say,AR,$@)rm -f $@ && ar rcs $@ $^

ALL_TARGETS += $(RT_LIB)

# ---- libtritium and tritium-run (ahead-of-time kernels, tritium_aot.h) -------------
# libtritium = runtime + Proton core, for programs that run exported kernels without
# Python (on a board: built with make CROSS=riscv64). The .so exports the rt_aot_ and
# pn_ API; tritium-run links the archive, so it needs only libc, cJSON and libpfm4.
AOT_LIB_A  := $(BUILD)/lib/libtritium.a
AOT_LIB_SO := $(BUILD)/lib/libtritium.so
RUN_BIN    := $(BUILD)/bin/tritium-run
AOT_PN_OBJS = $(filter-out %/pn_fallback.o,$(PN_OBJS))

$(AOT_LIB_A): $(RT_OBJS) $(BUILD)/lib/libproton.a
	@mkdir -p $(dir $@)
	$(call say,AR,$@)rm -f $@ && ar rcs $@ $(RT_OBJS) $(AOT_PN_OBJS)

$(AOT_LIB_SO): $(RT_OBJS) $(BUILD)/lib/libproton.a
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) -shared -o $@ $(RT_OBJS) $(AOT_PN_OBJS) $(LDFLAGS_ALL) -Wl,-soname,libtritium.so \
	    $(CJSON_LIBS) $(PFM_LIBS) -ldl -lpthread -lm

$(RUN_BIN): $(BUILD)/runtime/tools/tritium_run.o $(AOT_LIB_A)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) -o $@ $< $(AOT_LIB_A) $(LDFLAGS_ALL) $(CJSON_LIBS) $(PFM_LIBS) -ldl -lpthread -lm

# examples/aot/aot_vadd.c links the shared library, as an embedder would.
CFLAGS_examples := -Iruntime/include
AOT_EXAMPLE := $(BUILD)/bin/aot-vadd
$(AOT_EXAMPLE): $(BUILD)/examples/aot/aot_vadd.o $(AOT_LIB_SO)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) -o $@ $< -L$(BUILD)/lib -ltritium -Wl,-rpath,'$$ORIGIN/../lib' $(LDFLAGS_ALL) -lm

ALL_TARGETS += $(AOT_LIB_A) $(AOT_LIB_SO) $(RUN_BIN) $(AOT_EXAMPLE)

# ---- unit tests ------------------------------------------------------------------
# Weak stand-ins for Proton symbols that libproton.a does not define yet. The archive
# comes after libproton.a on the link line, so a member is only pulled in for symbols
# still undefined; once Proton has them all it is never used.
RT_PN_FALLBACK := $(BUILD)/lib/librt_pn_fallback.a
$(RT_PN_FALLBACK): $(BUILD)/tests/runtime/pn_fallback.o
	@mkdir -p $(dir $@)
	$(call say,AR,$@)rm -f $@ && ar rcs $@ $^

# proton/build.mk is included after this file: name its archive here for prerequisites
# (expanded at parse time) and expand link lines late (=, not :=).
RT_PN_LIB = $(BUILD)/lib/libproton.a
RT_LINK = $(RT_LIB) $(RT_PN_LIB) $(RT_PN_FALLBACK)
# test_runtime_launch replaces the launch hooks with recording mocks (--wrap) to check
# exactly which hooks the launcher calls.
RT_WRAP := pn_launch_begin pn_launch_end pn_worker_begin pn_worker_end \
           pn_launch_wants_programs pn_program_begin pn_program_end pn_thread_prepare \
           pn_worker_assist
TEST_LIBS_test_runtime        := $(RT_LINK)
rt_comma := ,
TEST_LIBS_test_runtime_launch := $(addprefix -Wl$(rt_comma)--wrap=,$(RT_WRAP)) $(RT_LINK)
$(BUILD)/tests/test_runtime $(BUILD)/tests/test_runtime_launch: $(RT_PN_FALLBACK)

# ---- benchmarks --------------------------------------------------------------------
# build/bin/tritium-launch-bench: launch overhead (bench/launch_c.c).
# build/bench/rt_add_kernel.so + build/lib/libtritium_rt_bench.so: the two-OpenMP-runtime
# experiment (bench/omp_runtimes.py loads the runtime through ctypes, so this copy of it
# is compiled with default symbol visibility).
CFLAGS_bench += -Iruntime/include -Iproton/include
RT_BENCH     := $(BUILD)/bin/tritium-launch-bench
RT_BENCH_SO  := $(BUILD)/lib/libtritium_rt_bench.so
RT_BENCH_KSO := $(BUILD)/bench/rt_add_kernel.so
RT_SO_OBJS   := $(RT_SRCS:%.c=$(BUILD)/rtso/%.o)

$(RT_BENCH): $(BUILD)/bench/launch_c.o $(RT_LIB) $(RT_PN_LIB) $(RT_PN_FALLBACK)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) -o $@ $< $(RT_LINK) $(LDFLAGS_ALL) $(CJSON_LIBS) $(PFM_LIBS) -ldl -lpthread -lm

$(BUILD)/rtso/%.o: %.c
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CFLAGS_ALL) $(CFLAGS_runtime) -fvisibility=default -c $< -o $@

$(RT_BENCH_SO): $(RT_SO_OBJS) $(RT_PN_LIB) $(RT_PN_FALLBACK)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) -shared -o $@ $(RT_SO_OBJS) $(RT_PN_LIB) $(RT_PN_FALLBACK) \
	    $(LDFLAGS_ALL) $(CJSON_LIBS) $(PFM_LIBS) -ldl -lpthread -lm

# -march=native only where the compiler knows it (GCC has none for RISC-V)
RT_BENCH_MARCH := $(if $(findstring x86_64,$(shell $(CC) -dumpmachine 2>/dev/null)),-march=native)
$(RT_BENCH_KSO): bench/rt_add_kernel.c
	@mkdir -p $(dir $@)
	$(call say,CC,$@)$(CC) -std=gnu17 -O3 $(RT_BENCH_MARCH) -shared -fPIC -o $@ $<

ALL_TARGETS += $(RT_BENCH) $(RT_BENCH_SO) $(RT_BENCH_KSO)
