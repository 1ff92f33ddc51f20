# runtime/build.mk — kernel cache, loader and OpenMP grid launcher (libtritium_rt.a).

CFLAGS_runtime := -Iruntime/include -Iruntime/src -Iproton/include -Icompiler/include

RT_SRCS := $(wildcard runtime/src/*.c)
RT_OBJS := $(RT_SRCS:%.c=$(BUILD)/%.o)
RT_LIB  := $(BUILD)/lib/libtritium_rt.a

$(RT_LIB): $(RT_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

ALL_TARGETS += $(RT_LIB)
