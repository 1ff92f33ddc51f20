/*
 * pn_chrome.c — the Chrome-trace writer (docs/formats.md §2), streamed.
 *
 * Collects the records of one consumer from every thread's timeline (records whose
 * mask has the slot and that were taken after the consumer was created), sorts each
 * thread's events by start (longer first on ties, so parents precede children),
 * and writes them one at a time straight into a buffered writer (pn_jout_*: numbers
 * formatted from the integers, no cJSON item per value): memory stays proportional to
 * the number of events, not to the JSON text, and a million launches write in seconds. ts/dur are microseconds from the earliest
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
    PnJOut *o;
    uint64_t base;                 /* ticks of ts == 0 */
    int first;
    int pid;
    int python;                    /* context="python" session */
    char **cx;                     /* constexprs per site as compact JSON text (lazily) */
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

/* ---- events -------------------------------------------------------------------------
 *
 * Every event is written in the key order the readers and the goldens know: name,
 * cat, ph, pid, tid, ts, dur, args. */

/* starts an event: the separator, then {"name": name */
static void
ev_open(Cw *cw, const char *name)
{
    PnJOut *o = cw->o;
    if (!cw->first)
        pn_jout_put(o, ",\n", 2);
    cw->first = 0;
    pn_jout_put(o, "{\"name\":", 8);
    pn_jout_str(o, name);
}

/* ,"pid":P,"tid":T */
static void
ids(Cw *cw, uint32_t tid)
{
    pn_jout_put(cw->o, ",\"pid\":", 7);
    pn_jout_int(cw->o, cw->pid);
    pn_jout_put(cw->o, ",\"tid\":", 7);
    pn_jout_uint(cw->o, tid);
}

static uint64_t
ns_at(const Cw *cw, uint64_t t)
{
    return pn_ticks_to_ns(t - cw->base);
}

/* an X event up to and including "args":{ (both ends converted to integer ns first) */
static void
x_event(Cw *cw, const char *name, const char *cat, uint32_t tid, uint64_t t0, uint64_t t1)
{
    PnJOut *o = cw->o;
    uint64_t a = ns_at(cw, t0), b = ns_at(cw, t1);
    ev_open(cw, name);
    pn_jout_put(o, ",\"cat\":", 7);
    pn_jout_str(o, cat);
    pn_jout_put(o, ",\"ph\":\"X\"", 9);
    ids(cw, tid);
    pn_jout_put(o, ",\"ts\":", 6);
    pn_jout_us(o, a);
    pn_jout_put(o, ",\"dur\":", 7);
    pn_jout_us(o, b - a);
    pn_jout_put(o, ",\"args\":{", 9);
}

/* "key":[x,y,z] */
static void
int3(PnJOut *o, const char *key, const int32_t v[3])
{
    pn_jout_puts(o, key);
    for (int i = 0; i < 3; i++) {
        pn_jout_put(o, i ? "," : "[", 1);
        pn_jout_int(o, v[i]);
    }
    pn_jout_put(o, "]", 1);
}

/* ,"counters":{name:delta,...} */
static void
counters_obj(PnJOut *o, const PnCtrRec *c, int n)
{
    pn_jout_put(o, ",\"counters\":{", 13);
    for (int i = 0; i < n && i < pn_ctrs.n; i++) {
        if (i)
            pn_jout_put(o, ",", 1);
        pn_jout_str(o, pn_ctrs.ev[i].name);
        pn_jout_put(o, ":", 1);
        pn_jout_uint(o, c->v[i]);
    }
    pn_jout_put(o, "}", 1);
}

/* ,"call_stack":["ROOT", the enclosing host scopes..., last] */
static void
call_stack(Cw *cw, uint32_t last)
{
    PnJOut *o = cw->o;
    pn_jout_put(o, ",\"call_stack\":[\"ROOT\"", 21);
    for (uint32_t i = 0; i < cw->sp; i++) {
        pn_jout_put(o, ",", 1);
        pn_jout_str(o, pn_name_get(cw->stack[i].name));
    }
    pn_jout_put(o, ",", 1);
    pn_jout_str(o, pn_name_get(last));
    pn_jout_put(o, "]", 1);
}

/* the same with the frames of Python path 'path' */
static void
path_stack(Cw *cw, uint32_t path, uint32_t last)
{
    PnJOut *o = cw->o;
    uint32_t n;
    const uint32_t *f = pn_path_get(path, &n);
    pn_jout_put(o, ",\"call_stack\":[\"ROOT\"", 21);
    for (uint32_t i = 0; i < n; i++) {
        pn_jout_put(o, ",", 1);
        pn_jout_str(o, pn_name_get(f[i]));
    }
    pn_jout_put(o, ",", 1);
    pn_jout_str(o, pn_name_get(last));
    pn_jout_put(o, "]", 1);
}

static void
text_write(const char *s, size_t n, void *user)
{
    char **t = user;
    size_t have = *t ? strlen(*t) : 0;
    char *x = realloc(*t, have + n + 1);
    if (!x)
        return;
    memcpy(x + have, s, n);
    x[have + n] = '\0';
    *t = x;
}

/* the compact JSON text of a site's constexprs (parsed and printed once), or NULL */
static const char *
constexprs(Cw *cw, uint32_t site, const PnSite *s)
{
    if (!s || !s->constexprs)
        return NULL;
    if (site >= cw->ncx) {
        uint32_t n = site + 64;
        char **cx = realloc(cw->cx, n * sizeof *cx);
        if (!cx)
            return NULL;
        memset(cx + cw->ncx, 0, (n - cw->ncx) * sizeof *cx);
        cw->cx = cx;
        cw->ncx = n;
    }
    if (!cw->cx[site]) {
        cJSON *j = cJSON_Parse(s->constexprs);
        if (!j)
            return NULL;
        pn_json_print(j, 0, text_write, &cw->cx[site]);
        cJSON_Delete(j);
    }
    return cw->cx[site];
}

/* one counter sample: {"name":..,"cat":"counter","ph":"C",..,"ts":..,"args":{"value":v}} */
static void
counter_event(Cw *cw, uint32_t tid, const char *name, uint64_t t, uint64_t v)
{
    PnJOut *o = cw->o;
    ev_open(cw, name);
    pn_jout_put(o, ",\"cat\":\"counter\",\"ph\":\"C\"", 25);
    ids(cw, tid);
    pn_jout_put(o, ",\"ts\":", 6);
    pn_jout_us(o, ns_at(cw, t));
    pn_jout_put(o, ",\"args\":{\"value\":", 17);
    pn_jout_uint(o, v);
    pn_jout_put(o, "}}", 2);
}

static void
launch_events(Cw *cw, uint32_t tid, const Ev *ev)
{
    static const char *fl[3] = { "flops16", "flops32", "flops64" };
    const PnRec *r = ev->r;
    const PnSite *s = pn_site_get(r->id);
    PnJOut *o = cw->o;
    uint64_t programs = 1;
    const char *cx;
    for (int d = 0; d < 3; d++)
        programs *= r->xyz[d] > 0 ? (uint64_t)r->xyz[d] : 0;
    x_event(cw, s ? s->name : "<unknown kernel>", "kernel", tid, r->t0, r->t1);
    int3(o, "\"grid\":", r->xyz);
    pn_jout_put(o, ",\"programs\":", 12);
    pn_jout_uint(o, programs);
    pn_jout_put(o, ",\"threads\":", 11);
    pn_jout_uint(o, r->site);
    if ((cx = constexprs(cw, r->id, s))) {
        pn_jout_put(o, ",\"constexprs\":", 14);
        pn_jout_puts(o, cx);
    }
    if (ev->c)
        counters_obj(o, ev->c, r->nctr);
    if (s && s->bytes_per_program) {
        pn_jout_put(o, ",\"bytes\":", 9);
        pn_jout_uint(o, s->bytes_per_program * programs);
    }
    for (int k = 0; s && k < 3; k++)
        if (s->flops_per_program[k] > 0) {
            pn_jout_put(o, ",\"", 2);
            pn_jout_puts(o, fl[k]);
            pn_jout_put(o, "\":", 2);
            pn_jout_double(o, s->flops_per_program[k] * (double)programs);
        }
    if (cw->python)
        path_stack(cw, r->aux, s ? s->name_id : 0);
    else
        call_stack(cw, s ? s->name_id : 0);
    pn_jout_put(o, "}}", 2);
    for (int i = 0; ev->c && i < r->nctr && i < pn_ctrs.n; i++) {
        counter_event(cw, tid, pn_ctrs.ev[i].name, r->t0, ev->c->v[i]);
        counter_event(cw, tid, pn_ctrs.ev[i].name, r->t1, 0);
    }
}

static void
work_event(Cw *cw, uint32_t tid, const Ev *ev)
{
    const PnRec *r = ev->r;
    const PnSite *s = pn_site_get(r->site);
    const char *kname = s ? s->name : "<unknown kernel>";
    PnJOut *o = cw->o;
    if (r->kind == PN_EV_PROGRAM) {
        char name[512];
        snprintf(name, sizeof name, "%s[%d,%d,%d]", kname, r->xyz[0], r->xyz[1], r->xyz[2]);
        x_event(cw, name, "program", tid, r->t0, r->t1);
        int3(o, "\"pid\":", r->xyz);
    } else {
        uint32_t nid = s && r->id < s->nscopes ? s->scope_name_ids[r->id] : 0;
        x_event(cw, pn_name_get(nid), "scope", tid, r->t0, r->t1);
        pn_jout_put(o, "\"kernel\":", 9);
        pn_jout_str(o, kname);
        int3(o, ",\"program\":", r->xyz);
        if (ev->c)
            counters_obj(o, ev->c, r->nctr);
    }
    pn_jout_put(o, "}}", 2);
}

static int
host_event(Cw *cw, uint32_t tid, const PnRec *r)
{
    PnJOut *o = cw->o;
    x_event(cw, pn_name_get(r->id), "host_scope", tid, r->t0, r->t1);
    pn_jout_put(o, "\"scope_id\":", 11);
    pn_jout_uint(o, r->seq);
    call_stack(cw, r->id);
    if (r->aux & PN_REC_OPEN)
        pn_jout_put(o, ",\"open\":true", 12);
    pn_jout_put(o, "}}", 2);
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

/* {"name":name,"ph":"M","pid":..,"tid":..,"args":{"key":  (the value follows) */
static void
meta_open(Cw *cw, const char *name, uint32_t tid, const char *key)
{
    PnJOut *o = cw->o;
    ev_open(cw, name);
    pn_jout_put(o, ",\"ph\":\"M\"", 9);
    ids(cw, tid);
    pn_jout_put(o, ",\"args\":{", 9);
    pn_jout_str(o, key);
    pn_jout_put(o, ":", 1);
}

static void
meta_name(Cw *cw, const char *name, uint32_t tid, const char *val)
{
    meta_open(cw, name, tid, "name");
    pn_jout_str(cw->o, val);
    pn_jout_put(cw->o, "}}", 2);
}

static void
metadata(Cw *cw, const Th *th, uint32_t nth)
{
    char name[256];
    snprintf(name, sizeof name, "%s (pid %d)", program_invocation_short_name, cw->pid);
    meta_name(cw, "process_name", nth ? th[0].tid : 0, name);
    for (uint32_t i = 0; i < nth; i++) {
        if (!th[i].n)
            continue;
        if (th[i].is_main)
            snprintf(name, sizeof name, "main");
        else
            snprintf(name, sizeof name, "worker %u", th[i].tid);
        meta_name(cw, "thread_name", th[i].tid, name);
        meta_open(cw, "thread_sort_index", th[i].tid, "sort_index");
        pn_jout_uint(cw->o, th[i].tid);
        pn_jout_put(cw->o, "}}", 2);
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
    pn_jout_puts(cw->o, head);
    pn_jout_json(cw->o, o);
    cJSON_Delete(o);
    pn_jout_put(cw->o, ",\"traceEvents\":[\n", 17);
}

/* Writes the Chrome trace of consumer (slot, ctick). Holds pn_mu. 0 or -ENOMEM. */
int
pn_chrome_write(int slot, uint64_t ctick, PnWriteFn w, void *user)
{
    PnJOut *o = malloc(sizeof *o);
    Cw cw = { .o = o, .first = 1, .pid = (int)getpid(), .base = UINT64_MAX,
              .python = slot != PN_CAPTURE_SLOT && pn_slots[slot].context == PN_CONTEXT_PYTHON };
    uint32_t nth = 0, cap = 0;
    Th *th = NULL;
    int rc = 0;
    if (!o)
        return -ENOMEM;
    o->w = w;
    o->user = user;
    o->n = 0;
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
        pn_jout_put(o, "\n]}\n", 4);
        pn_jout_flush(o);
    }
    for (uint32_t i = 0; i < nth; i++) {
        free(th[i].ev);
        free(th[i].open);
    }
    for (uint32_t i = 0; i < cw.ncx; i++)
        free(cw.cx[i]);
    free(cw.cx);
    free(o);
    free(cw.stack);
    free(th);
    return rc;
}
