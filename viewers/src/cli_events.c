/*
 * cli_events.c — `proton-cli events`: the perf events libpfm4 knows for this machine's
 * PMUs (plus the generic perf names), and which of them open here now, so users can pick
 * PROTON_EVENTS. Built on the profiler core's pn_events_foreach() and pn_event_probe()
 * (proton/include/proton.h), which are weak references here: a proton-cli linked without
 * libproton.a says so instead of failing to build (see viewers/build.mk).
 */
#include "cli.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "proton.h"

#pragma weak pn_events_foreach
#pragma weak pn_event_probe

static const char events_usage[] =
    "usage: proton-cli events [options]\n"
    "\n"
    "Lists the perf events libpfm4 knows for this CPU and tries to open each one now\n"
    "(for this thread, user space only), so you can choose PROTON_EVENTS.\n"
    "Without options: the generic events (cycles, instructions, task-clock, ...) and a\n"
    "count of the CPU-specific ones.\n"
    "\n"
    "  -a, --all          list the events of every PMU\n"
    "  -p, --pmu NAME     list the events of one PMU (e.g. generic, perf, ix86arch, skx)\n"
    "      --available    only the events that open on this machine now\n"
    "  -h, --help         this help\n"
    "\n"
    "Example: PROTON_EVENTS=cycles,instructions python3 script.py\n"
    "Exit codes: 0 ok, 1 usage error, 2 the profiler core is unavailable.\n";

typedef struct Event {
    char *name, *desc, *pmu;
    int hw;
} Event;

typedef struct EventList {
    Event *v;
    int n, cap;
} EventList;

static void
collect(const char *name, const char *desc, const char *pmu, int is_hw, void *user)
{
    EventList *l = user;
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 256;
        l->v = cli_xrealloc(l->v, sizeof(Event) * (size_t)l->cap);
    }
    Event *e = &l->v[l->n++];
    e->name = cli_xstrdup(name ? name : "?");
    e->desc = cli_xstrdup(desc ? desc : "");
    e->pmu = cli_xstrdup(pmu ? pmu : "?");
    e->hw = is_hw;
}

/* First line of a description, cut to fit one terminal line. */
static void
short_desc(const char *d, char *out, size_t len)
{
    size_t n = strcspn(d, "\n");
    if (n >= len)
        n = len - 1;
    memcpy(out, d, n);
    out[n] = 0;
    if (strlen(d) > n && n > 3)
        memcpy(out + n - 3, "...", 4);
}

static int
pmu_seen(const EventList *l, int upto, const char *pmu)
{
    for (int i = 0; i < upto; i++)
        if (strcmp(l->v[i].pmu, pmu) == 0)
            return 1;
    return 0;
}

/* Options, collect every event, probe and print the selected ones, then the summary;
 * one function so the output order is obvious. */
int
cli_events_main(int argc, char **argv)
{
    enum { O_AVAIL = 256 };
    static const struct option opts[] = {{"all", no_argument, 0, 'a'},
                                          {"pmu", required_argument, 0, 'p'},
                                          {"available", no_argument, 0, O_AVAIL},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    int c, all = 0, avail = 0, rc = CLI_EXIT_INPUT;
    const char *pmu = NULL;
    EventList l = {0};
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":ap:h", opts, NULL)) != -1) {
        switch (c) {
        case 'a': all = 1; break;
        case 'p': pmu = optarg; break;
        case O_AVAIL: avail = 1; break;
        case 'h': fputs(events_usage, stdout); return CLI_EXIT_OK;
        case ':': cli_error("events", "option '%s' needs a value", argv[optind - 1]); return 1;
        default: cli_error("events", "unknown option '%s' (see --help)", argv[optind - 1]); return 1;
        }
    }
    if (optind < argc) {
        cli_error("events", "unexpected argument '%s' (see --help)", argv[optind]);
        return CLI_EXIT_USAGE;
    }
    if (!pn_events_foreach || !pn_event_probe) {
        cli_error("events", "this proton-cli was built without the profiler core "
                  "(libproton.a lacks pn_events_foreach/pn_event_probe)");
        return CLI_EXIT_INPUT;
    }
    int total = pn_events_foreach(collect, &l);
    if (total < 0) {
        cli_error("events", "cannot list events: %s", strerror(-total));
        goto out;
    }
    if (pmu && !pmu_seen(&l, l.n, pmu)) {
        CliBuf names = {0};
        for (int i = 0; i < l.n; i++)
            if (!pmu_seen(&l, i, l.v[i].pmu))
                cli_buf_printf(&names, "%s%s", names.n ? ", " : "", l.v[i].pmu);
        cli_error("events", "no PMU named '%s' here (PMUs: %s)", pmu, names.s ? names.s : "none");
        cli_buf_fini(&names);
        rc = CLI_EXIT_USAGE;
        goto out;
    }
    int listed = 0, opened = 0;
    const char *cur = NULL;
    char why[256], desc[72];
    for (int i = 0; i < l.n; i++) {
        Event *e = &l.v[i];
        int want = all || (pmu ? strcmp(e->pmu, pmu) == 0 : strcmp(e->pmu, "generic") == 0);
        if (!want)
            continue;
        why[0] = 0;
        int ok = pn_event_probe(e->name, why, sizeof why) == 0;
        if (avail && !ok)
            continue;
        if (!cur || strcmp(cur, e->pmu) != 0) {
            printf("%sPMU %s\n  %-40s %-4s %-5s %s\n", cur ? "\n" : "", e->pmu, "EVENT", "KIND",
                   "OPENS", "DESCRIPTION");
            cur = e->pmu;
        }
        short_desc(e->desc, desc, sizeof desc);
        printf("  %-40s %-4s %-5s %s", e->name, e->hw ? "hw" : "sw", ok ? "yes" : "no", desc);
        if (!ok)
            printf("%s[%s]", desc[0] ? "  " : "", why[0] ? why : "does not open");
        putchar('\n');
        listed++;
        opened += ok;
    }
    if (!all && !pmu) {
        printf("\nOther PMUs (use --pmu NAME or --all):");
        for (int i = 0; i < l.n; i++)
            if (strcmp(l.v[i].pmu, "generic") != 0 && !pmu_seen(&l, i, l.v[i].pmu)) {
                int k = 0;
                for (int j = i; j < l.n; j++)
                    k += strcmp(l.v[j].pmu, l.v[i].pmu) == 0;
                printf(" %s (%d)", l.v[i].pmu, k);
            }
        printf("\n");
    }
    printf("\n%d events listed, %d open on this machine now. Choose with "
           "PROTON_EVENTS=name1,name2\n", listed, opened);
    rc = CLI_EXIT_OK;
out:
    for (int i = 0; i < l.n; i++) {
        free(l.v[i].name);
        free(l.v[i].desc);
        free(l.v[i].pmu);
    }
    free(l.v);
    return rc;
}
