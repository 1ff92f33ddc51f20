# tests/build.mk — C unit tests (cmocka), one binary per tests/unit/test_<module>.c.
#
# Each test links the archive(s) of its module; tests/unit/deps.mk may map a
# test name to extra link inputs (TEST_LIBS_<name>).

-include tests/unit/deps.mk

TEST_C_SRCS := $(wildcard tests/unit/test_*.c)
TEST_C_BINS := $(TEST_C_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
CFLAGS_tests := -Icompiler/include -Icompiler/src -Iruntime/include -Iruntime/src \
                -Iproton/include -Iproton/src -Iviewers/include -Iviewers/src $(MLIR_CFLAGS) \
                -DTRITIUM_TESTING

$(BUILD)/tests/%: $(BUILD)/tests/unit/%.o $(IR_LIB) $(RT_LIB) $(PN_LIB)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) -o $@ $< $(TEST_LIBS_$*) $(RT_LIB) $(PN_LIB) $(IR_LIB) $(LDFLAGS_ALL) $(CMOCKA_LIBS) $(CJSON_LIBS) $(PFM_LIBS) -ldl -lpthread -lm

test-c-bins: $(TEST_C_BINS)
ALL_TARGETS += $(TEST_C_BINS)

# tests/riscv/test_rv_counters.c: Proton's clock and counters on RISC-V, built for
# riscv64 only (make riscv64, or natively on a board) and run by tests/riscv/run.sh.
RV_COUNTERS_TEST := $(BUILD)/tests/test_rv_counters
$(RV_COUNTERS_TEST): $(BUILD)/tests/riscv/test_rv_counters.o $(PN_LIB)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) -o $@ $< $(PN_LIB) $(LDFLAGS_ALL) $(CMOCKA_LIBS) $(CJSON_LIBS) $(PFM_LIBS) -ldl -lpthread -lm
$(BUILD)/tests/riscv/test_rv_counters.o: CFLAGS_tests += -Itests/unit
