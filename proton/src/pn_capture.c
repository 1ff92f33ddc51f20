/*
 * pn_capture.c — the kernel-capture store (consumer slot 0) and the spine-triton
 * compatible profiler calls built on it.
 *
 * PROTON_KERNEL_CAPTURE=1 switches the store on at pn_init (read at run time,
 * nothing compiled in); profiler.start()/stop() map to pn_capture_enable, reset()
 * to pn_capture_reset (a new identity for slot 0: old data becomes stale and is
 * freed by its owners), dump() to pn_capture_dump, get_results() to
 * pn_capture_results_json. The store follows host scopes like a session and is
 * written at exit when it holds anything not dumped yet. It keeps a timeline only
 * where the output needs one: PROTON_OUTPUT names a Chrome trace, or the console table
 * lists launches (PROTON_VERBOSE), or profiler.start() switched it on (the format is
 * chosen at dump time); never at PROTON_TRACE_LIMIT=0. A timeline switched on after the
 * store recorded launches lacks them: a Chrome trace dumped from it says so once. With
 * TRITON_DISABLE_PROTON every call here
 * does nothing: dump writes no file and prints no table, results are "{}".
 */
#include "pn_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int pn_capture_dirty;
int pn_capture_timeline;
int pn_capture_timeline_late;

/* Output format from a path's suffix: .json / .chrome_trace → Chrome trace,
 * .hatchet → tree, anything else → the console table written to that file. */
int
pn_format_for_path(const char *p)
{
    const char *dot = strrchr(p, '.'), *slash = strrchr(p, '/');
    if (!dot || (slash && dot < slash))
        return PN_FMT_CONSOLE;
    if (strcmp(dot, ".json") == 0 || strcmp(dot, ".chrome_trace") == 0)
        return PN_FMT_CHROME;
    if (strcmp(dot, ".hatchet") == 0)
        return PN_FMT_HATCHET;
    return PN_FMT_CONSOLE;
}

/* Whether the capture store's exit output (PROTON_OUTPUT) needs a timeline. */
static int
output_needs_timeline(void)
{
    int f = pn_cfg.output ? pn_format_for_path(pn_cfg.output) : PN_FMT_CONSOLE;
    return f == PN_FMT_CHROME || (f == PN_FMT_CONSOLE && pn_cfg.verbose);
}

/* Starts slot 0's timeline; launches it recorded before are not in it. Holds pn_mu. */
static void
timeline_on_locked(void)
{
    if (!pn_capture_timeline && pn_slots[PN_CAPTURE_SLOT].used && PN_LD(&pn_capture_dirty))
        pn_capture_timeline_late = 1;
    pn_capture_timeline = 1;
}

/* Switches slot 0 on (creating it) or off. Holds pn_mu. */
void
pn_capture_enable_locked(int on)
{
    PnSlot *s = &pn_slots[PN_CAPTURE_SLOT];
    if (on && output_needs_timeline())
        timeline_on_locked();
    if (on && !s->used) {
        s->used = 1;
        s->id = -1;
        PN_REL(&pn_slot_ctick[PN_CAPTURE_SLOT], pn_clock_unique_tick());
    }
    if (s->used)
        s->active = on;
    pn_mask_update();
}

void
pn_capture_enable(int on)
{
    pn_init();
    if (pn_disabled())
        return;
    pn_lock();
    if (on)
        timeline_on_locked(); /* profiler.dump() may ask for any format */
    pn_capture_enable_locked(on);
    pn_unlock();
    if (on) {
        pn_counters_setup(); /* probe now rather than inside the first launch */
        pn_arm_exit();
    }
}

int
pn_capture_active(void)
{
    pn_init();
    return (PN_LD(&pn_rec_mask) >> PN_CAPTURE_SLOT) & 1;
}

void
pn_capture_keep_timeline(void)
{
    pn_init();
    pn_lock();
    timeline_on_locked();
    pn_mask_update();
    pn_unlock();
}

void
pn_capture_reset(void)
{
    pn_init();
    pn_lock();
    if (pn_slots[PN_CAPTURE_SLOT].used) {
        PN_REL(&pn_slot_ctick[PN_CAPTURE_SLOT], pn_clock_unique_tick());
        __atomic_add_fetch(&pn_gc_epoch, 1, __ATOMIC_RELAXED);
        pn_tls_collect();
    }
    PN_ST(&pn_capture_dirty, 0);
    pn_capture_timeline_late = 0; /* what the timeline missed is gone with the old data */
    pn_unlock();
}

/* Writes the store. Holds pn_mu. */
int
pn_capture_dump_locked(const char *path)
{
    const char *p = path ? path : pn_cfg.output;
    int rc;
    if (p && !*p)
        p = NULL;
    int fmt = p ? pn_format_for_path(p) : PN_FMT_CONSOLE;
    static int told, told_late;
    if (fmt == PN_FMT_CHROME && !pn_capture_timeline && pn_trace_limit && !told++)
        fprintf(stderr, "proton: %s: the capture store kept no timeline (its output%s%s needs "
                "none), so this trace has no events\n", p, pn_cfg.output ? " PROTON_OUTPUT=" : "",
                pn_cfg.output ? pn_cfg.output : "");
    else if (fmt == PN_FMT_CHROME && pn_capture_timeline_late && pn_trace_limit && !told_late++)
        fprintf(stderr, "proton: %s: the capture store kept no timeline until the spine-triton profiler "
                "was imported or started (its output%s%s needs none), so launches before that are "
                "not in this trace (a .hatchet tree or the table has them; import it before the "
                "first launch)\n", p, pn_cfg.output ? " PROTON_OUTPUT=" : "", pn_cfg.output ? pn_cfg.output : "");
    /* cleared before reading: a launch that ends meanwhile marks the store again */
    PN_ST(&pn_capture_dirty, 0);
    rc = pn_slot_write(PN_CAPTURE_SLOT, pn_slot_ctick[PN_CAPTURE_SLOT], fmt, p);
    if (rc < 0)
        PN_ST(&pn_capture_dirty, 1);
    return rc;
}

int
pn_capture_dump(const char *path)
{
    int rc;
    pn_init();
    if (pn_disabled())
        return 0; /* TRITON_DISABLE_PROTON: no file, no table, no error */
    pn_lock();
    rc = pn_capture_dump_locked(path);
    pn_unlock();
    return rc;
}

/* "scopes": {"load": {count, total_ns (wall), avg_ns (per execution), cpu_ns,
 * percent_of_kernel}, "compute/inner": ...} on a kernel's results entry. */
static int
scopes_json(const PnTree *tr, const PnKRow *k, cJSON *r)
{
    PnSRow *s;
    uint32_t n;
    if (pn_tree_scope_rows(tr, k, &s, &n) < 0)
        return -ENOMEM;
    if (n) {
        cJSON *o = cJSON_AddObjectToObject(r, "scopes");
        uint64_t kt = pn_ticks_to_ns(k->ticks);
        for (uint32_t i = 0; o && i < n; i++) {
            cJSON *e = cJSON_CreateObject();
            uint64_t wall = pn_ticks_to_ns(s[i].wall), cpu = pn_ticks_to_ns(s[i].cpu);
            cJSON_AddItemToObject(e, "count", pn_json_uint(s[i].count));
            cJSON_AddItemToObject(e, "total_ns", pn_json_uint(wall));
            cJSON_AddItemToObject(e, "avg_ns", pn_json_double(s[i].count ? (double)cpu / (double)s[i].count : 0));
            cJSON_AddItemToObject(e, "cpu_ns", pn_json_uint(cpu));
            cJSON_AddItemToObject(e, "percent_of_kernel", pn_json_double(kt ? 100.0 * (double)wall / (double)kt : 0));
            cJSON_AddItemToObject(o, s[i].path, e);
        }
    }
    free(s);
    return 0;
}

int
pn_capture_results_json(void (*write)(const char *s, size_t n, void *user), void *user)
{
    PnTree tr;
    PnKRow *rows = NULL;
    uint32_t n = 0;
    cJSON *o = NULL;
    int rc;
    pn_init();
    if (pn_disabled()) {
        write("{}", 2, user);
        return 0;
    }
    pn_lock();
    rc = pn_tree_build(&tr, PN_CAPTURE_SLOT, pn_slot_ctick[PN_CAPTURE_SLOT], 1);
    if (rc < 0)
        goto out;
    if ((rc = pn_tree_kernel_rows(&tr, &rows, &n)) < 0 || !(o = cJSON_CreateObject())) {
        rc = rc < 0 ? rc : -ENOMEM;
        goto out_tree;
    }
    for (uint32_t i = 0; i < n; i++) {
        char key[512];
        cJSON *r = cJSON_CreateObject();
        uint64_t total = pn_ticks_to_ns(rows[i].ticks);
        snprintf(key, sizeof key, "%s[%d,%d,%d]", pn_name_get(rows[i].name), rows[i].grid[0],
                 rows[i].grid[1], rows[i].grid[2]);
        cJSON_AddItemToObject(r, "count", pn_json_uint(rows[i].count));
        cJSON_AddItemToObject(r, "total_ns", pn_json_uint(total));
        cJSON_AddItemToObject(r, "min_ns", pn_json_uint(pn_ticks_to_ns(rows[i].tmin)));
        cJSON_AddItemToObject(r, "max_ns", pn_json_uint(pn_ticks_to_ns(rows[i].tmax)));
        cJSON_AddItemToObject(r, "avg_ns", pn_json_double((double)total / (double)rows[i].count));
        if (scopes_json(&tr, &rows[i], r) < 0) {
            cJSON_Delete(r);
            cJSON_Delete(o);
            rc = -ENOMEM;
            goto out_tree;
        }
        cJSON_AddItemToObject(o, key, r);
    }
    pn_json_print(o, 0, write, user);
    cJSON_Delete(o);
out_tree:
    free(rows);
    pn_tree_fini(&tr);
out:
    pn_unlock();
    return rc;
}
