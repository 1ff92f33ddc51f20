# proton/build.mk — the CPU profiler core and its writers (libproton.a).

CFLAGS_proton := -Iproton/include -Iproton/src

PN_SRCS := $(wildcard proton/src/*.c)
PN_OBJS := $(PN_SRCS:%.c=$(BUILD)/%.o)
PN_LIB  := $(BUILD)/lib/libproton.a

$(PN_LIB): $(PN_OBJS)
	@mkdir -p $(dir $@)
	$(call say,AR,$@)rm -f $@ && ar rcs $@ $^

ALL_TARGETS += $(PN_LIB)
