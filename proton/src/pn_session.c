/*
 * pn_session.c — consumer slots: sessions (triton.profiler) and writing a slot.
 *
 * Upstream semantics (reference/proton.md §1.1-1.2): ids from a process-wide
 * counter starting at 0 and never reused; start() with the path of a live session
 * re-activates it and returns its id; id < 0 means every session; finalize writes
 * <path>.hatchet (data=tree) or <path>.chrome_trace (data=trace), then deletes the
 * session; unknown ids are ignored by finalize. Everything here holds pn_mu; the
 * hooks see only pn_rec_mask / pn_trace_mask / pn_slot_ctick.
 */
#include "pn_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

PnSlot pn_slots[PN_NSLOTS];
uint64_t pn_slot_ctick[PN_NSLOTS];
uint32_t pn_rec_mask;
uint32_t pn_trace_mask;
uint32_t pn_py_mask;
volatile int pn_active_flag;
volatile int pn_python_flag;
static int next_session_id;

/* Recomputes the hook-visible masks from pn_slots. Holds pn_mu. */
void
pn_mask_update(void)
{
    uint32_t rec = 0, tr = 0, py = 0;
    for (int i = 0; i < PN_NSLOTS; i++) {
        if (!pn_slots[i].used || !pn_slots[i].active)
            continue;
        rec |= 1u << i;
        if (i == PN_CAPTURE_SLOT || pn_slots[i].data == PN_DATA_TRACE)
            tr |= 1u << i;
        if (i != PN_CAPTURE_SLOT && pn_slots[i].context == PN_CONTEXT_PYTHON)
            py |= 1u << i;
    }
    PN_ST(&pn_trace_mask, tr);
    PN_ST(&pn_py_mask, py);
    PN_ST(&pn_rec_mask, rec);
    pn_active_flag = rec != 0;
    pn_python_flag = py != 0;
}

static int
find_session(int id)
{
    for (int i = 1; i < PN_NSLOTS; i++)
        if (pn_slots[i].used && pn_slots[i].id == id)
            return i;
    return -1;
}

/* ---- writing one consumer ------------------------------------------------------------- */

static int
write_tree(int slot, uint64_t ctick, PnOut *o)
{
    PnTree tr;
    int rc = pn_tree_build(&tr, slot, ctick, 0);
    if (rc == 0)
        rc = pn_hatchet_write(&tr, pn_json_file_write, o->f);
    pn_tree_fini(&tr);
    return rc;
}

/* Writes consumer (slot, ctick) in format 'fmt' to 'path' (expanded here; "" or "-"
 * is stdout; NULL for the console format is stderr). Holds pn_mu. 0 or -errno. */
int
pn_slot_write(int slot, uint64_t ctick, int fmt, const char *path)
{
    PnOut o;
    char *p = NULL;
    int rc;
    if (fmt == PN_FMT_CONSOLE && !path) {
        PnTree tr;
        rc = pn_tree_build(&tr, slot, ctick, 1);
        if (rc == 0)
            rc = pn_console_write(&tr, slot, ctick, stderr);
        pn_tree_fini(&tr);
        return rc;
    }
    if (!(p = pn_path_expand(path)))
        return -ENOMEM;
    if ((rc = pn_out_open(&o, p)) < 0)
        goto out;
    if (fmt == PN_FMT_HATCHET) {
        rc = write_tree(slot, ctick, &o);
    } else if (fmt == PN_FMT_CHROME) {
        rc = pn_chrome_write(slot, ctick, pn_json_file_write, o.f);
    } else {
        PnTree tr;
        rc = pn_tree_build(&tr, slot, ctick, 1);
        if (rc == 0)
            rc = pn_console_write(&tr, slot, ctick, o.f);
        pn_tree_fini(&tr);
    }
    {
        int rc2 = pn_out_close(&o, rc == 0);
        if (rc == 0)
            rc = rc2;
    }
out:
    if (rc == 0 && fmt != PN_FMT_CONSOLE)
        pn_drop_notice(pn_dropped(slot, ctick));
    free(p);
    return rc;
}

/* fmt text → PN_FMT_* for a session with data 'data', or -EINVAL with the message */
static int
session_format(const char *fmt, int data)
{
    if (!fmt || !*fmt)
        return data == PN_DATA_TRACE ? PN_FMT_CHROME : PN_FMT_HATCHET;
    if (strcmp(fmt, "hatchet") == 0 || strcmp(fmt, "chrome_trace") == 0) {
        int f = fmt[0] == 'h' ? PN_FMT_HATCHET : PN_FMT_CHROME;
        if ((f == PN_FMT_HATCHET) != (data == PN_DATA_TREE)) {
            pn_set_error(EINVAL, "Output format not supported");
            return -EINVAL;
        }
        return f;
    }
    if (strcmp(fmt, "hatchet_msgpack") == 0) {
        pn_set_error(ENOTSUP, "Output format not supported: hatchet_msgpack (Tritium writes "
                              "hatchet JSON only)");
        return -ENOTSUP;
    }
    pn_set_error(EINVAL, "Unknown output format: %s", fmt);
    return -EINVAL;
}

/* Writes (when 'write') and deletes the session in 'slot'. Holds pn_mu. */
int
pn_slot_finalize(int slot, const char *fmt, int write)
{
    PnSlot *s = &pn_slots[slot];
    uint64_t ct = pn_slot_ctick[slot];
    int f = session_format(fmt, s->data), rc = 0;
    char *path;
    if (f < 0)
        return f;
    s->active = 0;
    pn_mask_update();
    if (write) {
        const char *ext = f == PN_FMT_HATCHET ? ".hatchet" : ".chrome_trace";
        int std = !*s->path || strcmp(s->path, "-") == 0;
        if (!(path = malloc(strlen(s->path) + 16)))
            return -ENOMEM;
        sprintf(path, "%s%s", s->path, std ? "" : ext);
        rc = pn_slot_write(slot, ct, f, path);
        free(path);
    }
    free(s->path);
    memset(s, 0, sizeof *s);
    PN_REL(&pn_slot_ctick[slot], 0);
    __atomic_add_fetch(&pn_gc_epoch, 1, __ATOMIC_RELAXED);
    pn_tls_collect();
    return rc;
}

/* ---- api ------------------------------------------------------------------------------- */

int
pn_session_start(const char *path, int context, int data)
{
    int slot = -1, id;
    pn_init();
    if (pn_disabled()) {
        pn_set_error(ECANCELED, "Proton is disabled (TRITON_PROTON_DISABLE)");
        return -ECANCELED;
    }
    if (context != PN_CONTEXT_SHADOW && context != PN_CONTEXT_PYTHON) {
        pn_set_error(EINVAL, "Unknown context source: %d", context);
        return -EINVAL;
    }
    if (data != PN_DATA_TREE && data != PN_DATA_TRACE) {
        pn_set_error(EINVAL, "Unknown data: %d", data);
        return -EINVAL;
    }
    if (!path)
        path = "proton";
    pthread_mutex_lock(&pn_mu);
    for (int i = 1; i < PN_NSLOTS; i++) {
        if (pn_slots[i].used && strcmp(pn_slots[i].path, path) == 0) {
            pn_slots[i].active = 1;
            pn_mask_update();
            id = pn_slots[i].id;
            goto out;
        }
        if (!pn_slots[i].used && slot < 0)
            slot = i;
    }
    if (slot < 0) {
        pn_set_error(EMFILE, "too many live sessions (at most %d)", PN_NSLOTS - 1);
        id = -EMFILE;
        goto out;
    }
    if (!(pn_slots[slot].path = strdup(path))) {
        id = -ENOMEM;
        goto out;
    }
    pn_slots[slot].used = 1;
    pn_slots[slot].id = id = next_session_id++;
    pn_slots[slot].context = context;
    pn_slots[slot].data = data;
    pn_slots[slot].active = 1;
    PN_REL(&pn_slot_ctick[slot], pn_clock_unique_tick());
    pn_mask_update();
out:
    pthread_mutex_unlock(&pn_mu);
    if (id >= 0) {
        pn_counters_setup(); /* probe now rather than inside the first launch */
        pn_arm_exit();
    }
    return id;
}

static int
set_active(int id, int on)
{
    int rc = 0, slot;
    pthread_mutex_lock(&pn_mu);
    if (id < 0) {
        for (int i = 1; i < PN_NSLOTS; i++)
            if (pn_slots[i].used)
                pn_slots[i].active = on;
    } else if ((slot = find_session(id)) >= 0) {
        pn_slots[slot].active = on;
    } else {
        pn_set_error(EINVAL, "Session has not been initialized: %d", id);
        rc = -EINVAL;
    }
    pn_mask_update();
    pthread_mutex_unlock(&pn_mu);
    return rc;
}

int
pn_session_activate(int id)
{
    return set_active(id, 1);
}

int
pn_session_deactivate(int id)
{
    return set_active(id, 0);
}

int
pn_session_finalize(int id, const char *fmt)
{
    int rc = 0, slot;
    pthread_mutex_lock(&pn_mu);
    if (id < 0) {
        for (int i = 1; i < PN_NSLOTS; i++) {
            int r = pn_slots[i].used ? pn_slot_finalize(i, fmt, 1) : 0;
            if (r < 0 && rc == 0)
                rc = r;
        }
    } else if ((slot = find_session(id)) >= 0) {
        rc = pn_slot_finalize(slot, fmt, 1);
    }
    pthread_mutex_unlock(&pn_mu);
    return rc;
}

int
pn_session_depth(int id)
{
    int slot, depth = -1;
    pthread_mutex_lock(&pn_mu);
    if ((slot = find_session(id)) >= 0) {
        PnTls *t = pn_tls_cur;
        PnTSlot *ts = t ? t->slot[slot] : NULL;
        depth = ts && ts->ctick == pn_slot_ctick[slot] ? (int)ts->depth : 0;
    }
    pthread_mutex_unlock(&pn_mu);
    return depth;
}

int
pn_session_tree_json(int id, void (*write)(const char *s, size_t n, void *user), void *user)
{
    int slot, rc;
    PnTree tr;
    pthread_mutex_lock(&pn_mu);
    if ((slot = find_session(id)) < 0) {
        pn_set_error(EINVAL, "Session has not been initialized: %d", id);
        rc = -EINVAL;
    } else if (pn_slots[slot].data != PN_DATA_TREE) {
        pn_set_error(EINVAL, "Only TreeData is supported for getData() for now");
        rc = -EINVAL;
    } else if ((rc = pn_tree_build(&tr, slot, pn_slot_ctick[slot], 0)) == 0) {
        rc = pn_hatchet_write(&tr, write, user);
        pn_tree_fini(&tr);
    }
    pthread_mutex_unlock(&pn_mu);
    return rc;
}

/* Tests: deletes every session and the capture store without writing. */
void
pn_sessions_drop_all(void)
{
    pthread_mutex_lock(&pn_mu);
    for (int i = 0; i < PN_NSLOTS; i++) {
        free(pn_slots[i].path);
        memset(&pn_slots[i], 0, sizeof pn_slots[i]);
        PN_REL(&pn_slot_ctick[i], 0);
    }
    pn_mask_update();
    __atomic_add_fetch(&pn_gc_epoch, 1, __ATOMIC_RELAXED);
    pn_tls_collect();
    pthread_mutex_unlock(&pn_mu);
}
