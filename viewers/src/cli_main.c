/*
 * cli_main.c — `proton-cli` entry point: dispatches to one subcommand per file
 * (cli_report.c, cli_diff.c, cli_html.c, cli_events.c, cli_merge.c, cli_roofline.c).
 */
#include "cli.h"

#include <string.h>

static const char main_usage[] =
    "usage: proton-cli COMMAND [options] ...\n"
    "\n"
    "Looks at Proton profiles written by Tritium (and upstream Triton's Proton):\n"
    "  report FILE...          call-path tree with metric columns (text, csv, json)\n"
    "  diff BASE NEW           node-by-node change of a metric, regressions first\n"
    "  html FILE -o OUT.html   one self-contained page: flame view, table, timeline, roofline\n"
    "  events                  perf events of this CPU and which of them open here\n"
    "  merge A B... -o OUT     traces into one Perfetto file, or trees into one .hatchet\n"
    "  roofline [FILE...]      this machine's measured roofs; each kernel's share of them\n"
    "\n"
    "`proton-cli COMMAND --help` describes each command. Exit codes: 0 ok, 1 usage\n"
    "error, 2 unreadable or malformed input.\n";

typedef struct Command {
    const char *name;
    int (*main)(int argc, char **argv);
} Command;

static const Command commands[] = {
    {"report", cli_report_main}, {"diff", cli_diff_main},   {"html", cli_html_main},
    {"events", cli_events_main}, {"merge", cli_merge_main},   {"roofline", cli_roofline_main},
};

int
main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(main_usage, stderr);
        return CLI_EXIT_USAGE;
    }
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
        strcmp(argv[1], "help") == 0) {
        fputs(main_usage, stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("proton-cli %s\n", CLI_VERSION);
        return CLI_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].main(argc - 1, argv + 1);
    cli_error(NULL, "unknown command '%s' (report, diff, html, events, merge, roofline; see --help)",
              argv[1]);
    return CLI_EXIT_USAGE;
}
