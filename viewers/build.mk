# viewers/build.mk — proton-cli (report, diff, html, events, merge).

CFLAGS_viewers := -Iviewers/include -Iviewers/src

CLI_SRCS := $(wildcard viewers/src/*.c)
CLI_OBJS := $(CLI_SRCS:%.c=$(BUILD)/%.o)
CLI_BIN  := $(BUILD)/bin/proton-cli

$(CLI_BIN): $(CLI_OBJS)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(LDFLAGS_ALL) $(CJSON_LIBS) $(PFM_LIBS) -lm

ALL_TARGETS += $(CLI_BIN)
