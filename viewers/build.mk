# viewers/build.mk — proton-cli (report, diff, html, events, merge).
#
# Everything but cli_main.c goes into $(BUILD)/lib/libcli.a so that the unit test
# (tests/unit/test_cli.c) and the fuzz harness link the same code. The HTML page's
# CSS/JS live as plain files in viewers/assets/ and become a C header at build time.
#
# `proton-cli events` calls pn_events_foreach()/pn_event_probe() from libproton.a. They
# are weak references: the archive is linked (with -u to pull the member in) only when it
# defines both, so proton-cli still builds while the profiler core is being written; the
# subcommand then says that it is unavailable.

CFLAGS_viewers := -Iviewers/include -Iviewers/src -Iproton/include -I$(BUILD)/viewers/gen

CLI_SRCS  := $(wildcard viewers/src/cli_*.c)
CLI_OBJS  := $(CLI_SRCS:%.c=$(BUILD)/%.o)
CLI_LOBJS := $(filter-out $(BUILD)/viewers/src/cli_main.o,$(CLI_OBJS))
CLI_LIB   := $(BUILD)/lib/libcli.a
CLI_BIN   := $(BUILD)/bin/proton-cli
CLI_ASSETS := $(wildcard viewers/assets/*)
CLI_GEN   := $(BUILD)/viewers/gen/cli_html_assets.h

# viewers/assets/report.css -> static const char cli_asset_report_css[] = "...";
$(CLI_GEN): $(CLI_ASSETS) viewers/build.mk
	@mkdir -p $(dir $@)
	$(call say,GEN,$@){ echo '/* generated from viewers/assets by viewers/build.mk; do not edit */'; \
	  for f in $(CLI_ASSETS); do \
	    n=$$(basename $$f | tr '.-' '__'); \
	    echo "static const char cli_asset_$$n[] ="; \
	    sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/    "/' -e 's/$$/\\n"/' $$f; \
	    echo '    ;'; \
	  done; } > $@.tmp && mv $@.tmp $@

$(BUILD)/viewers/src/cli_html.o: $(CLI_GEN)

$(CLI_LIB): $(CLI_LOBJS)
	@mkdir -p $(dir $@)
	$(call say,AR,$@)rm -f $@ && ar rcs $@ $^

# Links libproton.a only when it already defines the events API (see above).
CLI_PN_LINK = $(shell nm -g --defined-only $(PN_LIB) 2>/dev/null | \
    grep -q ' T pn_events_foreach$$' && nm -g --defined-only $(PN_LIB) 2>/dev/null | \
    grep -q ' T pn_event_probe$$' && \
    echo '-Wl,-u,pn_events_foreach -Wl,-u,pn_event_probe $(PN_LIB) $(PFM_LIBS) -ldl -lpthread')

$(CLI_BIN): $(BUILD)/viewers/src/cli_main.o $(CLI_LIB) $(PN_LIB)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) -o $@ $(BUILD)/viewers/src/cli_main.o $(CLI_LIB) $(CLI_PN_LINK) $(LDFLAGS_ALL) $(CJSON_LIBS) -lm

TEST_LIBS_test_cli := $(CLI_LIB)
$(BUILD)/tests/test_cli: $(CLI_LIB)

ALL_TARGETS += $(CLI_LIB) $(CLI_BIN)
