/*
 * pn_session.c — consumer slots: sessions (triton.profiler) and writing a slot.
 *
 * Upstream semantics (reference/proton.md §1.1-1.2, §1.6): ids from a process-wide
 * counter starting at 0 and never reused; start() with the path of a live session
 * re-activates it and returns its id; id < 0 means every session; finalize writes
 * <path>.hatchet (data=tree), <path>.hatchet_msgpack or <path>.chrome_trace
 * (data=trace), then deletes the session; unknown ids are ignored by finalize.
 *
 * Phases: a session holds one slot per phase it keeps. advance_phase takes a new slot
 * for the next phase (the old one stops recording and keeps its data); clear frees
 * an old phase's slot, or gives the current phase's slot a new identity (its data is
 * then stale for every thread); finalize writes every phase it holds, as
 * <path>.part_<phase>.<format> once the session went past phase 0. Threads continue
 * their open scopes into a new phase, and a thread new to the session starts from
 * the main thread's open scopes (pn_session_inherit). Everything here holds pn_mu;
 * the hooks see only pn_rec_mask / pn_trace_mask / pn_slot_ctick.
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
        /* a timeline only where the output needs one, and none at PROTON_TRACE_LIMIT=0 */
        if (pn_trace_limit && (i == PN_CAPTURE_SLOT ? pn_capture_timeline : pn_slots[i].data == PN_DATA_TRACE))
            tr |= 1u << i;
        if (i != PN_CAPTURE_SLOT && pn_slots[i].context == PN_CONTEXT_PYTHON)
            py |= 1u << i;
    }
    if ((rec & ~PN_LD(&pn_rec_mask)) || (tr & ~PN_LD(&pn_trace_mask)))
        __atomic_add_fetch(&pn_prepare_epoch, 1, __ATOMIC_RELAXED); /* threads get ready again */
    PN_ST(&pn_trace_mask, tr);
    PN_ST(&pn_py_mask, py);
    PN_ST(&pn_rec_mask, rec);
    pn_active_flag = rec != 0;
    pn_python_flag = py != 0;
}

/* the slot of session 'id''s current phase, or -1 */
static int
find_session(int id)
{
    for (int i = 1; i < PN_NSLOTS; i++)
        if (pn_slots[i].used && pn_slots[i].current && pn_slots[i].id == id)
            return i;
    return -1;
}

/* the slots of session 'id' (every phase it holds) */
static uint32_t
family(int id)
{
    uint32_t m = 0;
    for (int i = 1; i < PN_NSLOTS; i++)
        if (pn_slots[i].used && pn_slots[i].id == id)
            m |= 1u << i;
    return m;
}

/* the slot holding phase 'phase' of session 'id', or -1 */
static int
find_phase(int id, int phase)
{
    for (int i = 1; i < PN_NSLOTS; i++)
        if (pn_slots[i].used && pn_slots[i].id == id && pn_slots[i].phase == phase)
            return i;
    return -1;
}

static int
not_initialized(int id)
{
    pn_set_error(EINVAL, "Session has not been initialized: %d", id);
    return -EINVAL;
}

/* 't' is a registered thread that has not exited */
static int
tls_alive(const PnTls *t)
{
    for (const PnTls *x = pn_tls_first(); x; x = pn_tls_next(x))
        if (x == t)
            return !x->retired;
    return 0;
}

/* pushes scope 'name' on the stack of tree 's' (state 'st' for its metrics, frame id
 * 'sid'); 0, or -1 when the stack or the tree is full */
static int
push_copy(PnTSlot *s, uint32_t name, const uint32_t st[2], uint64_t sid)
{
    int32_t node;
    if (s->depth >= PN_MAX_DEPTH)
        return -1;
    node = pn_tslot_child(s, s->depth ? s->stack[s->depth - 1] : 0, PN_NODE_HOST, name, NULL);
    if (node < 0)
        return -1;
    s->stack[s->depth] = node;
    s->mnode[s->depth] = st && st[0] ? pn_state_node(s, node, st) : node;
    if (s->mnode[s->depth] < 0)
        s->mnode[s->depth] = node;
    s->sid[s->depth++] = sid;
    return 0;
}

void
pn_session_inherit(PnTls *t, int slot, PnTSlot *ts)
{
    uint32_t fam, bit = 1u << slot, n = 0;
    const PnSlot *ps = &pn_slots[slot];
    PnRec *open = NULL;
    pn_lock();
    if (!ps->used || ps->context != PN_CONTEXT_SHADOW || PN_LD(&pn_slot_ctick[slot]) != ts->ctick)
        goto out;
    fam = family(ps->id);
    /* the main thread's open scopes of this session: the base of a new thread's stack
     * (they are never popped here) */
    if (ps->main && ps->main != t && tls_alive(ps->main) && (open = pn_scope_open_all(ps->main, &n)))
        for (uint32_t k = 0; k < n; k++)
            if ((open[k].site & fam) && open[k].mtick >= ps->sess_tick && push_copy(ts, open[k].id, NULL, 0) < 0)
                break;
    /* this thread's own open scopes of the session continue here (popped at their exit) */
    for (uint32_t k = 0; k < t->hdepth; k++) {
        PnHostFrame *f = &t->hstack[k];
        if (!(f->mask & fam) || f->mtick < ps->sess_tick)
            continue;
        if (push_copy(ts, f->name, f->state, f->id) < 0)
            break;
        PN_ST(&f->mask, f->mask | bit);
    }
    free(open);
out:
    pn_unlock();
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
    } else if (fmt == PN_FMT_MSGPACK) {
        PnTree tr;
        cJSON *a = NULL;
        rc = pn_tree_build(&tr, slot, ctick, 0);
        if (rc == 0 && !(a = pn_hatchet_build(&tr)))
            rc = -ENOMEM;
        if (rc == 0)
            rc = pn_msgpack_write(a, pn_json_file_write, o.f);
        cJSON_Delete(a);
        pn_tree_fini(&tr);
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
        if (data != PN_DATA_TREE) {
            pn_set_error(EINVAL, "Output format not supported");
            return -EINVAL;
        }
        return PN_FMT_MSGPACK;
    }
    pn_set_error(EINVAL, "Unknown output format: %s", fmt);
    return -EINVAL;
}

static void
slot_free(int slot)
{
    free(pn_slots[slot].path);
    memset(&pn_slots[slot], 0, sizeof pn_slots[slot]);
    PN_REL(&pn_slot_ctick[slot], 0);
}

/* Writes (when 'write') and deletes the session 'slot' belongs to: every phase it
 * holds, in phase order. Holds pn_mu. */
int
pn_slot_finalize(int slot, const char *fmt, int write)
{
    PnSlot *s = &pn_slots[slot];
    int f = session_format(fmt, s->data), rc = 0, nph = 0;
    int order[PN_NSLOTS];
    uint32_t fam = family(s->id);
    if (f < 0)
        return f;
    for (int i = 1; i < PN_NSLOTS; i++) {
        if (!(fam & (1u << i)))
            continue;
        int j = nph++;
        for (; j > 0 && pn_slots[order[j - 1]].phase > pn_slots[i].phase; j--)
            order[j] = order[j - 1];
        order[j] = i;
        pn_slots[i].active = 0;
    }
    pn_mask_update();
    for (int k = 0; write && k < nph; k++) {
        const PnSlot *p = &pn_slots[order[k]];
        const char *ext = f == PN_FMT_HATCHET ? ".hatchet" : f == PN_FMT_MSGPACK ? ".hatchet_msgpack" : ".chrome_trace";
        int std = !*p->path || strcmp(p->path, "-") == 0, r;
        char *path = malloc(strlen(p->path) + 48);
        if (!path)
            return -ENOMEM;
        if (std)
            strcpy(path, p->path);
        else if (p->advanced)
            sprintf(path, "%s.part_%d%s", p->path, p->phase, ext);
        else
            sprintf(path, "%s%s", p->path, ext);
        r = pn_slot_write(order[k], pn_slot_ctick[order[k]], f, path);
        if (r < 0 && rc == 0)
            rc = r;
        free(path);
    }
    for (int k = 0; k < nph; k++)
        slot_free(order[k]);
    __atomic_add_fetch(&pn_gc_epoch, 1, __ATOMIC_RELAXED);
    pn_tls_collect();
    return rc;
}

/* ---- api ------------------------------------------------------------------------------- */

int
pn_session_start(const char *path, int context, int data)
{
    int slot = -1, id;
    PnTls *self;
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
    self = pn_tls(); /* the session's main thread */
    pn_lock();
    for (int i = 1; i < PN_NSLOTS; i++) {
        if (pn_slots[i].used && pn_slots[i].current && strcmp(pn_slots[i].path, path) == 0) {
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
    pn_slots[slot].current = 1;
    pn_slots[slot].main = self;
    pn_slots[slot].sess_tick = pn_clock_unique_tick();
    PN_REL(&pn_slot_ctick[slot], pn_slots[slot].sess_tick);
    pn_mask_update();
out:
    pn_unlock();
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
    pn_lock();
    if (id < 0) {
        for (int i = 1; i < PN_NSLOTS; i++)
            if (pn_slots[i].used && pn_slots[i].current)
                pn_slots[i].active = on;
    } else if ((slot = find_session(id)) >= 0) {
        pn_slots[slot].active = on;
    } else {
        rc = not_initialized(id);
    }
    pn_mask_update();
    pn_unlock();
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
    pn_lock();
    if (id < 0) {
        for (int i = 1; i < PN_NSLOTS; i++) {
            int r = pn_slots[i].used ? pn_slot_finalize(i, fmt, 1) : 0;
            if (r < 0 && rc == 0)
                rc = r;
        }
    } else if ((slot = find_session(id)) >= 0) {
        rc = pn_slot_finalize(slot, fmt, 1);
    }
    pn_unlock();
    return rc;
}

int
pn_session_depth(int id)
{
    int slot, depth = -1, shadow = 0;
    uint64_t ct = 0;
    PnTls *t;
    PnTSlot *ts;
    pn_lock();
    if ((slot = find_session(id)) >= 0) {
        depth = 0;
        ct = pn_slot_ctick[slot];
        shadow = pn_slots[slot].context == PN_CONTEXT_SHADOW;
    }
    pn_unlock();
    /* a thread that has not recorded into the session yet counts the stack it would
     * start from (the main thread's open scopes) */
    if (shadow && ct && (t = pn_tls()) && (ts = pn_tls_slot(t, slot, ct)))
        depth = (int)ts->depth;
    return depth;
}

int
pn_session_phase_tree(int id, int phase, int msgpack, void (*write)(const char *s, size_t n, void *user),
                      void *user)
{
    int slot, ps, rc;
    PnTree tr;
    pn_lock();
    if ((slot = find_session(id)) < 0) {
        rc = not_initialized(id);
    } else if (pn_slots[slot].data != PN_DATA_TREE) {
        pn_set_error(EINVAL, "Only TreeData is supported for getData() for now");
        rc = -EINVAL;
    } else {
        /* a phase the session does not hold (cleared, or not reached): an empty tree */
        ps = find_phase(id, phase);
        rc = pn_tree_build(&tr, ps < 0 ? slot : ps, ps < 0 ? 0 : pn_slot_ctick[ps], 0);
        if (rc == 0 && !msgpack) {
            rc = pn_hatchet_write(&tr, write, user);
        } else if (rc == 0) {
            cJSON *a = pn_hatchet_build(&tr);
            rc = a ? pn_msgpack_write(a, write, user) : -ENOMEM;
            cJSON_Delete(a);
        }
        pn_tree_fini(&tr);
    }
    pn_unlock();
    return rc;
}

int
pn_session_tree_json(int id, void (*write)(const char *s, size_t n, void *user), void *user)
{
    return pn_session_phase_tree(id, 0, 0, write, user);
}

int
pn_session_advance_phase(int id)
{
    int cur, slot = -1, rc;
    PnSlot *c, *n;
    pn_lock();
    if ((cur = find_session(id)) < 0) {
        rc = not_initialized(id);
        goto out;
    }
    for (int i = 1; i < PN_NSLOTS && slot < 0; i++)
        if (!pn_slots[i].used)
            slot = i;
    if (slot < 0) {
        pn_set_error(EMFILE, "too many live sessions and phases (at most %d)", PN_NSLOTS - 1);
        rc = -EMFILE;
        goto out;
    }
    c = &pn_slots[cur];
    n = &pn_slots[slot];
    *n = *c;
    if (!(n->path = strdup(c->path))) {
        memset(n, 0, sizeof *n);
        rc = -ENOMEM;
        goto out;
    }
    n->phase = rc = c->phase + 1;
    c->current = 0;
    c->active = 0;
    for (int i = 1; i < PN_NSLOTS; i++)
        if (pn_slots[i].used && pn_slots[i].id == id)
            pn_slots[i].advanced = 1;
    PN_REL(&pn_slot_ctick[slot], pn_clock_unique_tick());
    pn_mask_update();
out:
    pn_unlock();
    return rc;
}

int
pn_session_flush(int id)
{
    int rc = 0;
    pn_lock();
    if (id >= 0 && find_session(id) < 0)
        rc = not_initialized(id);
    for (int i = 1; rc == 0 && i < PN_NSLOTS; i++) {
        if (!pn_slots[i].used || !pn_slots[i].current || (id >= 0 && pn_slots[i].id != id))
            continue;
        for (int j = 1; j < PN_NSLOTS; j++)
            if (pn_slots[j].used && pn_slots[j].id == pn_slots[i].id)
                pn_slots[j].complete_upto = pn_slots[i].phase;
    }
    pn_unlock();
    return rc;
}

int
pn_session_phase_complete(int id, int phase)
{
    int slot, rc;
    pn_lock();
    rc = (slot = find_session(id)) < 0 ? not_initialized(id) : phase < pn_slots[slot].complete_upto;
    pn_unlock();
    return rc;
}

int
pn_session_clear(int id, int phase, int up_to)
{
    int rc = 0, freed = 0;
    pn_lock();
    if (find_session(id) < 0) {
        rc = not_initialized(id);
        goto out;
    }
    for (int i = 1; i < PN_NSLOTS; i++) {
        PnSlot *s = &pn_slots[i];
        if (!s->used || s->id != id || (up_to ? s->phase > phase : s->phase != phase))
            continue;
        if (s->current) /* starts over: every thread's data for it is stale now */
            PN_REL(&pn_slot_ctick[i], pn_clock_unique_tick());
        else
            slot_free(i);
        freed = 1;
    }
    if (freed) {
        __atomic_add_fetch(&pn_gc_epoch, 1, __ATOMIC_RELAXED);
        pn_tls_collect();
    }
out:
    pn_unlock();
    return rc;
}

/* In the child after fork(): every session keeps its name and its current phase, with
 * a new identity (the parent's data is stale for it) and marked inherited; older
 * phases hold only the parent's data and go. */
void
pn_sessions_after_fork(void)
{
    for (int i = 1; i < PN_NSLOTS; i++) {
        if (!pn_slots[i].used)
            continue;
        if (!pn_slots[i].current) {
            slot_free(i);
            continue;
        }
        pn_slots[i].inherited = 1;
        pn_slots[i].advanced = 0; /* this process's file has one part */
        pn_slots[i].phase = 0;
        pn_slots[i].complete_upto = 0;
        PN_REL(&pn_slot_ctick[i], pn_now() + 1 + (uint64_t)i);
    }
    pn_mask_update();
}

int
pn_session_has_data(int slot)
{
    uint64_t ct = PN_LD(&pn_slot_ctick[slot]);
    for (PnTls *t = pn_tls_first(); t; t = pn_tls_next(t)) {
        PnTSlot *s = PN_ACQ(&t->slot[slot]);
        if (s && s->ctick == ct)
            return 1;
    }
    return 0;
}

/* Tests: deletes every session and the capture store without writing. */
void
pn_sessions_drop_all(void)
{
    pn_lock();
    for (int i = 0; i < PN_NSLOTS; i++) {
        free(pn_slots[i].path);
        memset(&pn_slots[i], 0, sizeof pn_slots[i]);
        PN_REL(&pn_slot_ctick[i], 0);
    }
    pn_mask_update();
    __atomic_add_fetch(&pn_gc_epoch, 1, __ATOMIC_RELAXED);
    pn_tls_collect();
    pn_unlock();
}
