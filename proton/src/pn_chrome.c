/*
 * pn_chrome.c — the Chrome-trace writer (docs/formats.md §2), streamed.
 *
 * Collects the records of one consumer from every thread's timeline (records whose
 * mask has the slot and that were taken after the consumer was created), sorts each
 * thread's events by start (longer first on ties, so parents precede children),
 * and writes them one cJSON object at a time: memory stays proportional to the
 * number of events, not to the JSON text. ts/dur are microseconds from the earliest
 * event; both ends are converted from ticks to integer ns first, so events that
 * nest in ticks still nest in the file. The call_stack of kernels and host scopes is
 * rebuilt from the host-scope events enclosing them on the same thread; in a
 * python-context session (which has no host-scope events) a kernel's call_stack is
 * the Python path its launch record carries. Host scopes
 * still open when the file is written (finalize or dump inside a scope, exit, a
 * signal) get an event ending at the write time, marked "open": true.
 */
#include "pn_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct Ev {
    const PnRec *r;
    const PnCtrRec *c;             /* counters, or NULL */
} Ev;

typedef struct Th {
    uint32_t tid;
    int is_main;
    Ev *ev;
    uint32_t n, cap;
    PnRec *open;                   /* host scopes open at write time (kind 0: closed since) */
    uint32_t nopen;
} Th;

typedef struct Frame {
    uint32_t name;
    uint64_t t0, t1;
} Frame;

typedef struct Cw {
    PnWriteFn w;
    void *user;
    uint64_t base;                 /* ticks of ts == 0 */
    int first;
    int pid;
    int python;                    /* context="python" session */
    cJSON **cx;                    /* parsed constexprs per site (lazily) */
    uint32_t ncx;
    Frame *stack;
    uint32_t sp, scap;
} Cw;

/* ---- collecting ---------------------------------------------------------------------- */

static int
th_push(Th *th, const PnRec *r, const PnCtrRec *c)
{
    if (th->n == th->cap) {
        uint32_t cap = th->cap ? th->cap * 2 : 256;
        Ev *e = realloc(th->ev, cap * sizeof *e);
        if (!e)
            return -ENOMEM;
        th->ev = e;
        th->cap = cap;
    }
    th->ev[th->n].r = r;
    th->ev[th->n].c = c;
    th->n++;
    return 0;
}

typedef struct Col {
    Th *th;
    uint64_t *base;
} Col;

static int
collect_one(const PnRec *r, const PnCtrRec *c, void *user)
{
    Col *col = user;
    if (r->t0 < *col->base)
        *col->base = r->t0;
    return th_push(col->th, r, c);
}

static int
collect_host(const PnRec *r, const PnCtrRec *c, void *user)
{
    return r->kind == PN_EV_HOST ? collect_one(r, c, user) : 0;
}

/* open scopes whose record was collected too (closed while the stack was read):
 * the record wins */
static void
drop_closed(Th *th)
{
    for (uint32_t i = 0; i < th->n; i++) {
        const PnRec *r = th->ev[i].r;
        if (r->kind != PN_EV_HOST || r->seq < th->open[0].seq)
            continue;
        for (uint32_t j = 0; j < th->nopen; j++)
            if (th->open[j].seq == r->seq)
                th->open[j].kind = 0;
    }
}

/* The thread's records, plus one event per host scope still open (ending at the
 * write time, set by close_open). The owner may keep recording, so: every record
 * visible now, then the stack of open scopes, then only the host records appended
 * meanwhile. A launch taken in the first pass began inside its scopes, so each of
 * them is either on the stack read afterwards or already closed, with its record
 * appended before the pop: every call_stack is complete. Later launches are left
 * for the next write. */
static int
collect(Th *th, PnTls *t, int slot, uint64_t ctick, uint64_t *base)
{
    Col col = { th, base };
    PnBufPos pos = { NULL, 0 };
    int rc;
    th->tid = t->tid;
    th->is_main = t->is_main;
    if ((rc = pn_buf_scan(t, slot, ctick, &pos, collect_one, &col)) != 0)
        return rc;
    th->open = pn_scope_open(t, slot, ctick, &th->nopen);
    if ((rc = pn_buf_scan(t, slot, ctick, &pos, collect_host, &col)) != 0 || !th->nopen)
        return rc;
    drop_closed(th);
    for (uint32_t i = 0; i < th->nopen && rc == 0; i++) {
        if (!th->open[i].kind)
            continue;
        if (th->open[i].t0 < *base)
            *base = th->open[i].t0;
        rc = th_push(th, &th->open[i], NULL);
    }
    return rc;
}

/* open scopes end when the file is written: after every record was collected, so
 * everything they enclose ends before them */
static void
close_open(Th *th, uint32_t nth, uint64_t now)
{
    for (uint32_t i = 0; i < nth; i++)
        for (uint32_t j = 0; j < th[i].nopen; j++)
            th[i].open[j].t1 = now;
}

static int
kind_rank(int kind)
{
    return kind == PN_EV_HOST ? 0 : kind == PN_EV_LAUNCH ? 1 : kind == PN_EV_PROGRAM ? 2 : 3;
}

static int
ev_cmp(const void *a, const void *b)
{
    const PnRec *x = ((const Ev *)a)->r, *y = ((const Ev *)b)->r;
    if (x->t0 != y->t0)
        return x->t0 < y->t0 ? -1 : 1;
    if (x->t1 != y->t1)
        return x->t1 > y->t1 ? -1 : 1;
    if (kind_rank(x->kind) != kind_rank(y->kind))
        return kind_rank(x->kind) - kind_rank(y->kind);
    return (int)x->depth - (int)y->depth;
}

/* ---- events ------------------------------------------------------------------------- */

static void
out(Cw *cw, cJSON *e)
{
    if (!e)
        return;
    if (!cw->first)
        cw->w(",\n", 2, cw->user);
    cw->first = 0;
    pn_json_print(e, 0, cw->w, cw->user);
    cJSON_Delete(e);
}

static double
us(const Cw *cw, uint64_t t)
{
    return (double)pn_ticks_to_ns(t - cw->base) / 1000.0;
}

static cJSON *
x_event(Cw *cw, const char *name, const char *cat, uint32_t tid, uint64_t t0, uint64_t t1)
{
    cJSON *e = cJSON_CreateObject();
    uint64_t a = pn_ticks_to_ns(t0 - cw->base), b = pn_ticks_to_ns(t1 - cw->base);
    cJSON_AddStringToObject(e, "name", name);
    cJSON_AddStringToObject(e, "cat", cat);
    cJSON_AddStringToObject(e, "ph", "X");
    cJSON_AddItemToObject(e, "pid", pn_json_int(cw->pid));
    cJSON_AddItemToObject(e, "tid", pn_json_uint(tid));
    cJSON_AddItemToObject(e, "ts", pn_json_double((double)a / 1000.0));
    cJSON_AddItemToObject(e, "dur", pn_json_double((double)(b - a) / 1000.0));
    return e;
}

static cJSON *
int3(const int32_t v[3])
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < 3; i++)
        cJSON_AddItemToArray(a, pn_json_int(v[i]));
    return a;
}

static cJSON *
counters_obj(const PnCtrRec *c, int n)
{
    cJSON *o = cJSON_CreateObject();
    for (int i = 0; i < n && i < pn_ctrs.n; i++)
        cJSON_AddItemToObject(o, pn_ctrs.ev[i].name, pn_json_uint(c->v[i]));
    return o;
}

static cJSON *
call_stack(const Cw *cw, uint32_t last)
{
    cJSON *a = cJSON_CreateArray();
    cJSON_AddItemToArray(a, cJSON_CreateString("ROOT"));
    for (uint32_t i = 0; i < cw->sp; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(pn_name_get(cw->stack[i].name)));
    cJSON_AddItemToArray(a, cJSON_CreateString(pn_name_get(last)));
    return a;
}

/* ROOT, the frames of Python path 'path', then 'last' */
static cJSON *
path_stack(uint32_t path, uint32_t last)
{
    cJSON *a = cJSON_CreateArray();
    uint32_t n;
    const uint32_t *f = pn_path_get(path, &n);
    cJSON_AddItemToArray(a, cJSON_CreateString("ROOT"));
    for (uint32_t i = 0; i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(pn_name_get(f[i])));
    cJSON_AddItemToArray(a, cJSON_CreateString(pn_name_get(last)));
    return a;
}

/* the parsed constexprs of a site (borrowed from the cache), or NULL */
static cJSON *
constexprs(Cw *cw, uint32_t site, const PnSite *s)
{
    if (!s || !s->constexprs)
        return NULL;
    if (site >= cw->ncx) {
        uint32_t n = site + 64;
        cJSON **cx = realloc(cw->cx, n * sizeof *cx);
        if (!cx)
            return NULL;
        memset(cx + cw->ncx, 0, (n - cw->ncx) * sizeof *cx);
        cw->cx = cx;
        cw->ncx = n;
    }
    if (!cw->cx[site])
        cw->cx[site] = cJSON_Parse(s->constexprs);
    return cw->cx[site];
}

static void
launch_events(Cw *cw, uint32_t tid, const Ev *ev)
{
    const PnRec *r = ev->r;
    const PnSite *s = pn_site_get(r->id);
    static const char *fl[3] = { "flops16", "flops32", "flops64" };
    uint64_t programs = 1;
    cJSON *e = x_event(cw, s ? s->name : "<unknown kernel>", "kernel", tid, r->t0, r->t1);
    cJSON *args = cJSON_AddObjectToObject(e, "args"), *cx;
    for (int d = 0; d < 3; d++)
        programs *= r->xyz[d] > 0 ? (uint64_t)r->xyz[d] : 0;
    cJSON_AddItemToObject(args, "grid", int3(r->xyz));
    cJSON_AddItemToObject(args, "programs", pn_json_uint(programs));
    cJSON_AddItemToObject(args, "threads", pn_json_uint(r->site));
    if ((cx = constexprs(cw, r->id, s)))
        cJSON_AddItemReferenceToObject(args, "constexprs", cx);
    if (ev->c)
        cJSON_AddItemToObject(args, "counters", counters_obj(ev->c, r->nctr));
    if (s && s->bytes_per_program)
        cJSON_AddItemToObject(args, "bytes", pn_json_uint(s->bytes_per_program * programs));
    for (int k = 0; s && k < 3; k++)
        if (s->flops_per_program[k] > 0)
            cJSON_AddItemToObject(args, fl[k], pn_json_double(s->flops_per_program[k] * (double)programs));
    cJSON_AddItemToObject(args, "call_stack", cw->python ? path_stack(r->aux, s ? s->name_id : 0)
                                                         : call_stack(cw, s ? s->name_id : 0));
    out(cw, e);
    for (int i = 0; ev->c && i < r->nctr && i < pn_ctrs.n; i++) {
        for (int end = 0; end < 2; end++) {
            cJSON *c = cJSON_CreateObject(), *a;
            cJSON_AddStringToObject(c, "name", pn_ctrs.ev[i].name);
            cJSON_AddStringToObject(c, "cat", "counter");
            cJSON_AddStringToObject(c, "ph", "C");
            cJSON_AddItemToObject(c, "pid", pn_json_int(cw->pid));
            cJSON_AddItemToObject(c, "tid", pn_json_uint(tid));
            cJSON_AddItemToObject(c, "ts", pn_json_double(us(cw, end ? r->t1 : r->t0)));
            a = cJSON_AddObjectToObject(c, "args");
            cJSON_AddItemToObject(a, "value", pn_json_uint(end ? 0 : ev->c->v[i]));
            out(cw, c);
        }
    }
}

static void
work_event(Cw *cw, uint32_t tid, const Ev *ev)
{
    const PnRec *r = ev->r;
    const PnSite *s = pn_site_get(r->site);
    const char *kname = s ? s->name : "<unknown kernel>";
    cJSON *e, *args;
    if (r->kind == PN_EV_PROGRAM) {
        char name[512];
        snprintf(name, sizeof name, "%s[%d,%d,%d]", kname, r->xyz[0], r->xyz[1], r->xyz[2]);
        e = x_event(cw, name, "program", tid, r->t0, r->t1);
        args = cJSON_AddObjectToObject(e, "args");
        cJSON_AddItemToObject(args, "pid", int3(r->xyz));
    } else {
        uint32_t nid = s && r->id < s->nscopes ? s->scope_name_ids[r->id] : 0;
        e = x_event(cw, pn_name_get(nid), "scope", tid, r->t0, r->t1);
        args = cJSON_AddObjectToObject(e, "args");
        cJSON_AddStringToObject(args, "kernel", kname);
        cJSON_AddItemToObject(args, "program", int3(r->xyz));
        if (ev->c)
            cJSON_AddItemToObject(args, "counters", counters_obj(ev->c, r->nctr));
    }
    out(cw, e);
}

static int
host_event(Cw *cw, uint32_t tid, const PnRec *r)
{
    cJSON *e = x_event(cw, pn_name_get(r->id), "host_scope", tid, r->t0, r->t1);
    cJSON *args = cJSON_AddObjectToObject(e, "args");
    cJSON_AddItemToObject(args, "scope_id", pn_json_uint(r->seq));
    cJSON_AddItemToObject(args, "call_stack", call_stack(cw, r->id));
    if (r->aux & PN_REC_OPEN)
        cJSON_AddTrueToObject(args, "open");
    out(cw, e);
    if (cw->sp == cw->scap) {
        uint32_t cap = cw->scap ? cw->scap * 2 : 64;
        Frame *f = realloc(cw->stack, cap * sizeof *f);
        if (!f)
            return -ENOMEM;
        cw->stack = f;
        cw->scap = cap;
    }
    cw->stack[cw->sp].name = r->id;
    cw->stack[cw->sp].t0 = r->t0;
    cw->stack[cw->sp].t1 = r->t1;
    cw->sp++;
    return 0;
}

static int
thread_events(Cw *cw, Th *th)
{
    if (th->n)
        qsort(th->ev, th->n, sizeof *th->ev, ev_cmp);
    cw->sp = 0;
    for (uint32_t i = 0; i < th->n; i++) {
        const PnRec *r = th->ev[i].r;
        while (cw->sp && !(cw->stack[cw->sp - 1].t0 <= r->t0 && r->t1 <= cw->stack[cw->sp - 1].t1))
            cw->sp--;
        if (r->kind == PN_EV_HOST) {
            if (host_event(cw, th->tid, r) < 0)
                return -ENOMEM;
        } else if (r->kind == PN_EV_LAUNCH) {
            launch_events(cw, th->tid, &th->ev[i]);
        } else {
            work_event(cw, th->tid, &th->ev[i]);
        }
    }
    return 0;
}

/* ---- header and metadata ------------------------------------------------------------- */

static cJSON *
meta_event(const Cw *cw, const char *name, uint32_t tid, const char *key, cJSON *val)
{
    cJSON *e = cJSON_CreateObject(), *a;
    cJSON_AddStringToObject(e, "name", name);
    cJSON_AddStringToObject(e, "ph", "M");
    cJSON_AddItemToObject(e, "pid", pn_json_int(cw->pid));
    cJSON_AddItemToObject(e, "tid", pn_json_uint(tid));
    a = cJSON_AddObjectToObject(e, "args");
    cJSON_AddItemToObject(a, key, val);
    return e;
}

static void
metadata(Cw *cw, const Th *th, uint32_t nth)
{
    char name[256];
    snprintf(name, sizeof name, "%s (pid %d)", program_invocation_short_name, cw->pid);
    out(cw, meta_event(cw, "process_name", nth ? th[0].tid : 0, "name", cJSON_CreateString(name)));
    for (uint32_t i = 0; i < nth; i++) {
        if (!th[i].n)
            continue;
        if (th[i].is_main)
            snprintf(name, sizeof name, "main");
        else
            snprintf(name, sizeof name, "worker %u", th[i].tid);
        out(cw, meta_event(cw, "thread_name", th[i].tid, "name", cJSON_CreateString(name)));
        out(cw, meta_event(cw, "thread_sort_index", th[i].tid, "sort_index", pn_json_uint(th[i].tid)));
    }
}

static void
header(Cw *cw, uint64_t dropped)
{
    const PnDevice *d = pn_device();
    cJSON *o = cJSON_CreateObject(), *ev;
    char head[96];
    cJSON_AddStringToObject(o, "tool", "tritium-proton");
    cJSON_AddStringToObject(o, "version", PN_VERSION);
    cJSON_AddItemToObject(o, "pid", pn_json_int(cw->pid));
    cJSON_AddStringToObject(o, "clock_source", pn_clock_source());
    cJSON_AddStringToObject(o, "counter_source", pn_counter_source());
    ev = cJSON_AddArrayToObject(o, "events");
    for (int i = 0; i < pn_ctrs.n; i++)
        cJSON_AddItemToArray(ev, cJSON_CreateString(pn_ctrs.ev[i].name));
    cJSON_AddItemToObject(o, "dropped_events", pn_json_uint(dropped));
    cJSON_AddStringToObject(o, "cpu_model", d->model);
    cJSON_AddItemToObject(o, "num_cores", pn_json_int(d->num_cores));
    snprintf(head, sizeof head, "{\"displayTimeUnit\":\"ns\",\"baseTimeNanoseconds\":%llu,\"otherData\":",
             (unsigned long long)pn_ticks_to_epoch_ns(cw->base));
    cw->w(head, strlen(head), cw->user);
    pn_json_print(o, 0, cw->w, cw->user);
    cJSON_Delete(o);
    cw->w(",\"traceEvents\":[\n", 17, cw->user);
}

/* Writes the Chrome trace of consumer (slot, ctick). Holds pn_mu. 0 or -ENOMEM. */
int
pn_chrome_write(int slot, uint64_t ctick, PnWriteFn w, void *user)
{
    Cw cw = { .w = w, .user = user, .first = 1, .pid = (int)getpid(), .base = UINT64_MAX,
              .python = slot != PN_CAPTURE_SLOT && pn_slots[slot].context == PN_CONTEXT_PYTHON };
    uint32_t nth = 0, cap = 0;
    Th *th = NULL;
    int rc = 0;
    pn_counters_setup();
    for (PnTls *t = pn_tls_first(); t && rc == 0; t = pn_tls_next(t)) {
        if (nth == cap) {
            Th *n = realloc(th, (cap = cap ? cap * 2 : 8) * sizeof *n);
            if (!n) {
                rc = -ENOMEM;
                break;
            }
            th = n;
        }
        memset(&th[nth], 0, sizeof th[nth]);
        rc = ctick ? collect(&th[nth], t, slot, ctick, &cw.base) : 0;
        nth++;
    }
    close_open(th, nth, pn_now());
    if (cw.base == UINT64_MAX)
        cw.base = pn_now();
    if (rc == 0) {
        header(&cw, ctick ? pn_dropped(slot, ctick) : 0);
        metadata(&cw, th, nth);
        for (uint32_t i = 0; i < nth && rc == 0; i++)
            rc = thread_events(&cw, &th[i]);
        w("\n]}\n", 4, user);
    }
    for (uint32_t i = 0; i < nth; i++) {
        free(th[i].ev);
        free(th[i].open);
    }
    for (uint32_t i = 0; i < cw.ncx; i++)
        cJSON_Delete(cw.cx[i]);
    free(cw.cx);
    free(cw.stack);
    free(th);
    return rc;
}
