/*
 * pn_console.c — the console table (docs/formats.md §3).
 *
 * One row per kernel name and grid, longest total first: count, total, min, max,
 * avg with units, then one column per counter (summed over launches; time events
 * printed as times). The title counts kernels by name, as proton-cli html's header
 * does (a kernel launched with two grids is one kernel on two rows). PROTON_VERBOSE=1 adds one row per launch kept in the timeline.
 * Dropped timeline events, if any, are reported on the last line.
 */
#include "pn_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* "123 ns", "25.1 us", "3.210 ms", "1.234 s" */
static void
fmt_time(char *b, size_t n, uint64_t ns)
{
    if (ns < 1000)
        snprintf(b, n, "%llu ns", (unsigned long long)ns);
    else if (ns < 1000000)
        snprintf(b, n, "%.1f us", ns / 1e3);
    else if (ns < 1000000000)
        snprintf(b, n, "%.3f ms", ns / 1e6);
    else
        snprintf(b, n, "%.3f s", ns / 1e9);
}

static void
fmt_counter(char *b, size_t n, int i, uint64_t v)
{
    if (pn_ctrs.ev[i].is_ns)
        fmt_time(b, n, v);
    else
        snprintf(b, n, "%llu", (unsigned long long)v);
}

static int
col_width(int i)
{
    int l = (int)strlen(pn_ctrs.ev[i].spec) + 2;
    return l < 13 ? 13 : l;
}

/* Distinct kernel names among the rows (names are interned: equal ids, equal names). */
static uint32_t
distinct_names(const PnKRow *rows, uint32_t n)
{
    uint32_t d = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t j = 0;
        while (j < i && rows[j].name != rows[i].name)
            j++;
        d += j == i;
    }
    return d;
}

static void
title(FILE *f, const PnKRow *rows, uint32_t n)
{
    uint64_t launches = 0, ticks = 0;
    double hz = pn_clock_hz();
    char tot[32], clk[64];
    for (uint32_t i = 0; i < n; i++) {
        launches += rows[i].count;
        ticks += rows[i].ticks;
    }
    fmt_time(tot, sizeof tot, pn_ticks_to_ns(ticks));
    if (pn_clk_kind == PN_CLK_GETTIME)
        snprintf(clk, sizeof clk, "clock_gettime");
    else if (hz >= 1e9)
        snprintf(clk, sizeof clk, "%s %.3f GHz", pn_clock_source(), hz / 1e9);
    else
        snprintf(clk, sizeof clk, "%s %.3f MHz", pn_clock_source(), hz / 1e6);
    unsigned kernels = distinct_names(rows, n);
    fprintf(f, "== Proton: %u kernel%s, %llu launch%s, %s total (clock: %s, counters: %s) ==\n", kernels,
            kernels == 1 ? "" : "s", (unsigned long long)launches, launches == 1 ? "" : "es", tot, clk,
            pn_counter_source());
}

static void
table(FILE *f, const PnKRow *rows, uint32_t n, int w)
{
    fprintf(f, "%-*s %7s %11s %11s %11s %11s", w, "Kernel", "Count", "Total", "Min", "Max", "Avg");
    for (int c = 0; c < pn_ctrs.n; c++)
        fprintf(f, "%*s", col_width(c), pn_ctrs.ev[c].spec);
    fputc('\n', f);
    for (uint32_t i = 0; i < n; i++) {
        const PnKRow *r = &rows[i];
        char name[512], t[4][32];
        snprintf(name, sizeof name, "%s[%d,%d,%d]", pn_name_get(r->name), r->grid[0], r->grid[1],
                 r->grid[2]);
        fmt_time(t[0], 32, pn_ticks_to_ns(r->ticks));
        fmt_time(t[1], 32, pn_ticks_to_ns(r->tmin));
        fmt_time(t[2], 32, pn_ticks_to_ns(r->tmax));
        fmt_time(t[3], 32, pn_ticks_to_ns(r->ticks) / r->count);
        fprintf(f, "%-*s %7llu %11s %11s %11s %11s", w, name, (unsigned long long)r->count, t[0],
                t[1], t[2], t[3]);
        for (int c = 0; c < pn_ctrs.n; c++) {
            char v[32] = "-";
            if ((uint32_t)c < r->ctr_n)
                fmt_counter(v, sizeof v, c, r->ctr[c]);
            fprintf(f, "%*s", col_width(c), v);
        }
        fputc('\n', f);
    }
}

/* ---- PROTON_VERBOSE=1: one row per launch ------------------------------------------ */

typedef struct LRow {
    const PnRec *r;
    uint32_t tid;
} LRow;

typedef struct Launches {
    LRow *v;
    uint32_t n, cap;
    uint32_t cur_tid;
} Launches;

static int
add_launch(const PnRec *r, const PnCtrRec *c, void *user)
{
    Launches *l = user;
    (void)c;
    if (r->kind != PN_EV_LAUNCH)
        return 0;
    if (l->n == l->cap) {
        uint32_t cap = l->cap ? l->cap * 2 : 256;
        LRow *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return -ENOMEM;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n].r = r;
    l->v[l->n++].tid = l->cur_tid;
    return 0;
}

static int
launch_cmp(const void *a, const void *b)
{
    const PnRec *x = ((const LRow *)a)->r, *y = ((const LRow *)b)->r;
    return x->t0 < y->t0 ? -1 : x->t0 > y->t0;
}

static void
verbose(FILE *f, int slot, uint64_t ctick, int w)
{
    Launches l = { 0 };
    int rc = 0;
    if (!pn_trace_limit) {
        fprintf(f, "-- launches: none listed (PROTON_TRACE_LIMIT=0 keeps no timeline) --\n");
        return;
    }
    for (PnTls *t = pn_tls_first(); t && rc == 0; t = pn_tls_next(t)) {
        l.cur_tid = t->tid;
        rc = pn_buf_foreach(t, slot, ctick, add_launch, &l);
    }
    if (rc == 0 && l.n) {
        qsort(l.v, l.n, sizeof *l.v, launch_cmp);
        fprintf(f, "-- launches --\n%-*s %11s %11s %7s %-20s %7s\n", w, "Kernel", "Start",
                "Duration", "Thread", "Grid", "Threads");
        for (uint32_t i = 0; i < l.n; i++) {
            const PnRec *r = l.v[i].r;
            const PnSite *s = pn_site_get(r->id);
            char st[32], du[32], grid[40];
            fmt_time(st, sizeof st, pn_ticks_to_ns(r->t0 - l.v[0].r->t0));
            fmt_time(du, sizeof du, pn_ticks_to_ns(r->t1 - r->t0));
            snprintf(grid, sizeof grid, "[%d,%d,%d]", r->xyz[0], r->xyz[1], r->xyz[2]);
            fprintf(f, "%-*s %11s %11s %7u %-20s %7u\n", w, s ? s->name : "?", st, du, l.v[i].tid,
                    grid, r->site);
        }
    }
    free(l.v);
}

/* ---- in-kernel scopes: per kernel row, its scope paths ------------------------------- */

static int
scopes(FILE *f, const PnTree *tr, const PnKRow *rows, uint32_t n, int w)
{
    int header = 0;
    for (uint32_t i = 0; i < n; i++) {
        PnSRow *s;
        uint32_t ns;
        if (pn_tree_scope_rows(tr, &rows[i], &s, &ns) < 0)
            return -ENOMEM;
        if (ns && !header++)
            fprintf(f,
                    "-- in-kernel scopes (Total: wall time, per launch the longest one thread spent in the "
                    "scope; Avg: per execution; CPU: summed over threads) --\n%-*s %7s %11s %11s %11s %12s\n",
                    w, "Kernel / scope", "Count", "Total", "Avg", "CPU", "% of kernel");
        if (ns)
            fprintf(f, "%s[%d,%d,%d]\n", pn_name_get(rows[i].name), rows[i].grid[0], rows[i].grid[1],
                    rows[i].grid[2]);
        for (uint32_t j = 0; j < ns; j++) {
            const PnSRow *r = &s[j];
            const char *leaf = strrchr(r->path, '/');
            char name[512], t[3][32];
            snprintf(name, sizeof name, "%*s%s", (int)(2 * r->depth), "", leaf ? leaf + 1 : r->path);
            fmt_time(t[0], 32, pn_ticks_to_ns(r->wall));
            fmt_time(t[1], 32, r->count ? pn_ticks_to_ns(r->cpu) / r->count : 0);
            fmt_time(t[2], 32, pn_ticks_to_ns(r->cpu));
            fprintf(f, "%-*s %7llu %11s %11s %11s %11.1f%%\n", w, name, (unsigned long long)r->count, t[0], t[1],
                    t[2], rows[i].ticks ? 100.0 * (double)r->wall / (double)rows[i].ticks : 0.0);
        }
        free(s);
    }
    return 0;
}

/* Prints the table of 'tr' (built with by_grid) for consumer (slot, ctick). */
int
pn_console_write(const PnTree *tr, int slot, uint64_t ctick, FILE *f)
{
    PnKRow *rows;
    uint32_t n;
    uint64_t dropped = ctick ? pn_dropped(slot, ctick) : 0;
    int w = 26, rc = pn_tree_kernel_rows(tr, &rows, &n);
    if (rc < 0)
        return rc;
    pn_counters_setup();
    for (uint32_t i = 0; i < n; i++) {
        char name[512];
        int l = snprintf(name, sizeof name, "%s[%d,%d,%d]", pn_name_get(rows[i].name), rows[i].grid[0],
                     rows[i].grid[1], rows[i].grid[2]);
        if (l + 1 > w)
            w = l + 1;
    }
    title(f, rows, n);
    table(f, rows, n, w);
    if (pn_cfg.verbose && ctick)
        verbose(f, slot, ctick, w);
    if (rc == 0)
        rc = scopes(f, tr, rows, n, w);
    if (dropped)
        fprintf(f, "Dropped timeline events: %llu (PROTON_TRACE_LIMIT=%llu; the table is exact)\n",
                (unsigned long long)dropped, (unsigned long long)pn_trace_limit);
    fflush(f);
    free(rows);
    return rc;
}
