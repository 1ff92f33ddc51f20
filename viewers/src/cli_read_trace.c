/*
 * cli_read_trace.c — reads our Chrome-trace .json (docs/formats.md §2; also upstream
 * Proton's `.chrome_trace` shapes) into a CliProfile: a timeline (threads and X slices)
 * and an aggregated call-path tree.
 *
 * Aggregation: every `kernel` X event becomes (or adds to) the node at its
 * args.call_stack (ROOT, host scopes..., kernel) with count, time (ns), programs,
 * threads (max), bytes, flops* and counter deltas. In-kernel `scope` events (args.kernel)
 * hang under the launch that contains them in time (same process, same kernel name),
 * nested by time containment on their worker thread, with their counters. Host scopes
 * become nodes from their call_stack with their numeric args as user metrics. The root
 * gets zero hints for count, time, bytes, flops and counters, as a .hatchet of the same
 * run would.
 *
 * Validation: every field read here (and every pid, tid and ts, which `merge` rewrites)
 * is type- and range-checked; a bad one fails the whole file with a message naming it
 * ("traceEvents[3].args.programs is not a number"). JSON null counts as absent. Fields
 * nothing reads (grid, constexprs, scope_id, ...) are not looked at.
 *
 * Streaming: events arrive one at a time (cli_trace_event, from cli_stream.c or from a
 * parsed document) and are aggregated at once; what has to wait for the end is kept
 * compact: one Launch per kernel slice (to find the launch an in-kernel scope ran in)
 * and one Scope per in-kernel scope slice with its metric values, both holding
 * interned strings. Timeline slices are kept only when asked for (CLI_LOAD_SPANS), and
 * past CLI_SPANS_KEEP of them only the longest (ties spread evenly over the file by a
 * hash of their index), so memory follows the tree and the timeline window, not the
 * file.
 */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct Launch {
    double ts, end;
    const char *pid;         /* interned */
    const char *name;        /* interned */
    CliNode *node;
} Launch;

/* A metric value of an in-kernel scope, added to its node once the node is known. */
typedef struct Pend {
    const char *name;        /* interned */
    double v;
    int hint;                /* also give the root a zero hint (counters) */
    struct Pend *next;
} Pend;

typedef struct Scope {
    double ts, dur;
    int thread, evi;
    const char *name, *kernel; /* interned */
    Pend *vals;
} Scope;

struct CliTraceReader {
    CliProfile *p;
    CliErr *e;
    int flags;               /* CLI_LOAD_* */
    Launch *launches;
    int nlaunches, caplaunches;
    Scope *scopes;
    int nscopes, capscopes;
    Pend **pend_tail, *pend_last; /* where add_metric puts a scope's values, the last one */
    unsigned *span_key;      /* reservoir: priority of each kept span (min-heap when full) */
    long spans_seen;
    char **tkeys;            /* (pid, tid) -> thread index hash */
    int *tvals;
    int tcap;
    char **ikeys;            /* interned strings */
    int icap, icount;
    int id_count, id_time;
    int seen_other, seen_base;
    int cur;                 /* index of the event being read, -1 outside traceEvents */
    const char *pid, *tid;   /* ids of the current X or M event as text (interned) */
    double id_num[2];        /* the last numeric pid and tid, and their text */
    const char *id_text[2];
    CliArena *a;
};
typedef CliTraceReader TReader;

/* Accepted values of a numeric field, and how a message describes them. */
typedef struct Range {
    double lo, hi;
    int integer;
    const char *text;
} Range;

#define U64_MAX_D 18446744073709549568.0 /* largest double below 2^64 */

static const Range R_ID = {0, 4294967295.0, 1, "0 to 2^32-1"};
static const Range R_TS = {-CLI_TRACE_MAX_US, CLI_TRACE_MAX_US, 0, "magnitude up to 2^63 ns"};
static const Range R_DUR = {0, CLI_TRACE_MAX_US, 0, "0 to 2^63 ns"};
static const Range R_COUNT = {0, U64_MAX_D, 1, "0 to 2^64-1"};
static const Range R_AMOUNT = {0, U64_MAX_D, 0, "0 to 2^64"};
static const Range R_METRIC = {-U64_MAX_D, U64_MAX_D, 0, "magnitude up to 2^64"};
static const Range R_SORT = {-2147483648.0, 2147483647.0, 1, "-2^31 to 2^31-1"};
static const Range R_CORES = {0, 2147483647.0, 1, "0 to 2^31-1"};
static const Range R_DROPPED = {0, 9.2e18, 1, "0 to 9.2e18"};

/* ---- interned strings ---------------------------------------------------------------------- */

/* The arena copy of s shared by every event that names it (kernels, scopes, pids). */
static const char *
intern(TReader *r, const char *s)
{
    if ((r->icount + 1) * 2 > r->icap) {
        int cap = r->icap ? r->icap * 2 : 256;
        char **k = cli_xcalloc((size_t)cap, sizeof *k);
        for (int i = 0; i < r->icap; i++) {
            if (!r->ikeys[i])
                continue;
            unsigned j = cli_hash_str(r->ikeys[i]) & (unsigned)(cap - 1);
            while (k[j])
                j = (j + 1) & (unsigned)(cap - 1);
            k[j] = r->ikeys[i];
        }
        free(r->ikeys);
        r->ikeys = k;
        r->icap = cap;
    }
    unsigned mask = (unsigned)r->icap - 1, j = cli_hash_str(s) & mask;
    for (; r->ikeys[j]; j = (j + 1) & mask)
        if (strcmp(r->ikeys[j], s) == 0)
            return r->ikeys[j];
    r->icount++;
    return r->ikeys[j] = cli_arena_strdup(r->a, s);
}

/* ---- checked fields ---------------------------------------------------------------------- */

/* Sets r->e to "traceEvents[i].<prefix><key> <why>" (no index outside traceEvents); -1. */
static int
bad(TReader *r, const char *prefix, const char *key, const char *why)
{
    if (r->cur >= 0)
        cli_err_set(r->e, "traceEvents[%d].%s%s %s", r->cur, prefix, key, why);
    else
        cli_err_set(r->e, "%s%s %s", prefix, key, why);
    return -1;
}

/* A number within rg, named 'key' in messages: 0 with *out set, or -1 with r->e set. */
static int
check_num_key(TReader *r, const cJSON *x, const char *prefix, const char *key, const Range *rg,
              double *out)
{
    char why[96];
    if (!cJSON_IsNumber(x))
        return bad(r, prefix, key, "is not a number");
    double v = x->valuedouble;
    if (!(v >= rg->lo && v <= rg->hi)) {
        snprintf(why, sizeof why, "is out of range (%s)", rg->text);
        return bad(r, prefix, key, why);
    }
    if (rg->integer && v != floor(v))
        return bad(r, prefix, key, "is not an integer");
    *out = v;
    return 0;
}

static int
check_num(TReader *r, const cJSON *x, const char *prefix, const Range *rg, double *out)
{
    return check_num_key(r, x, prefix, x->string ? x->string : "", rg, out);
}

/* Optional number obj.key: 0 with *out set, 1 when absent or null, -1 with r->e set. */
static int
get_num(TReader *r, const cJSON *obj, const char *prefix, const char *key, const Range *rg,
        double *out)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!x || cJSON_IsNull(x))
        return 1;
    return check_num(r, x, prefix, rg, out);
}

/* Optional string obj.key: 0 with *out set (NULL when absent or null), or -1. */
static int
get_str(TReader *r, const cJSON *obj, const char *prefix, const char *key, const char **out)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(obj, key);
    *out = NULL;
    if (!x || cJSON_IsNull(x))
        return 0;
    if (!cJSON_IsString(x))
        return bad(r, prefix, key, "is not a string");
    *out = x->valuestring;
    return 0;
}

/* Optional object obj.key: 0 with *out set (NULL when absent or null), or -1. */
static int
get_obj(TReader *r, const cJSON *obj, const char *prefix, const char *key, const cJSON **out)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(obj, key);
    *out = NULL;
    if (!x || cJSON_IsNull(x))
        return 0;
    if (!cJSON_IsObject(x))
        return bad(r, prefix, key, "is not an object");
    *out = x;
    return 0;
}

/* pid or tid of ev: a string, or an integer in R_ID; "0" when absent. Writes the text to
 * *out when out is not NULL. 0 or -1 with r->e set. */
static int
get_id(TReader *r, const cJSON *x, const char *key, const char **out)
{
    char buf[32];
    double v;
    const char *s = "0";
    int slot = key[0] == 't';
    if (x && !cJSON_IsNull(x)) {
        if (cJSON_IsString(x)) {
            s = x->valuestring;
        } else if (!cJSON_IsNumber(x)) {
            return bad(r, "", key, "is not a number or string");
        } else {
            if (check_num(r, x, "", &R_ID, &v) != 0)
                return -1;
            if (!out)
                return 0;
            if (r->id_text[slot] && r->id_num[slot] == v) { /* the same id as last time */
                *out = r->id_text[slot];
                return 0;
            }
            cli_fmt_double(buf, v);
            *out = r->id_text[slot] = intern(r, buf);
            r->id_num[slot] = v;
            return 0;
        }
    }
    if (out)
        *out = intern(r, s);
    return 0;
}

/* ---- threads ------------------------------------------------------------------------------- */

static unsigned
hash2(const char *a, const char *b)
{
    unsigned h = 2166136261u;
    for (; *a; a++)
        h = (h ^ (unsigned char)*a) * 16777619u;
    h = (h ^ 0xff) * 16777619u;
    for (; *b; b++)
        h = (h ^ (unsigned char)*b) * 16777619u;
    return h;
}

static void
thread_index_grow(TReader *r)
{
    CliProfile *p = r->p;
    int cap = r->tcap ? r->tcap * 2 : 64;
    free(r->tkeys);
    free(r->tvals);
    r->tkeys = cli_xcalloc((size_t)cap, sizeof(char *));
    r->tvals = cli_xcalloc((size_t)cap, sizeof(int));
    r->tcap = cap;
    for (int i = 0; i < p->nthreads; i++) {
        unsigned j = hash2(p->threads[i].pid, p->threads[i].tid) & (unsigned)(cap - 1);
        while (r->tkeys[j])
            j = (j + 1) & (unsigned)(cap - 1);
        r->tkeys[j] = (char *)p->threads[i].pid; /* marker; compared through threads[] */
        r->tvals[j] = i;
    }
}

/* Index of the current event's thread (r->pid, r->tid), created on first sight. */
static int
thread_of(TReader *r)
{
    CliProfile *p = r->p;
    const char *pid = r->pid, *tid = r->tid;
    if ((p->nthreads + 1) * 2 > r->tcap)
        thread_index_grow(r);
    unsigned mask = (unsigned)r->tcap - 1, j = hash2(pid, tid) & mask;
    for (; r->tkeys[j]; j = (j + 1) & mask) {
        CliThread *t = &p->threads[r->tvals[j]];
        if (strcmp(t->pid, pid) == 0 && strcmp(t->tid, tid) == 0)
            return r->tvals[j];
    }
    if (p->nthreads == p->capthreads) {
        p->capthreads = p->capthreads ? p->capthreads * 2 : 16;
        p->threads = cli_xrealloc(p->threads, (size_t)p->capthreads * sizeof *p->threads);
    }
    CliThread *t = &p->threads[p->nthreads];
    memset(t, 0, sizeof *t);
    t->pid = pid;
    t->tid = tid;
    t->sort = strtod(tid, NULL);
    r->tkeys[j] = (char *)pid;
    r->tvals[j] = p->nthreads;
    return p->nthreads++;
}

/* ---- metrics -------------------------------------------------------------------------------- */

/* Adds a numeric metric; metric names are capped like the hatchet reader's. While an
 * in-kernel scope is read (n NULL) the value waits in r->pend for its node. */
static int
add_metric(TReader *r, CliNode *n, const char *name, double v, int mode)
{
    CliProfile *p = r->p;
    if (!n) {
        Pend *x = cli_arena_alloc(r->a, sizeof *x);
        x->name = intern(r, name);
        x->v = v;
        *r->pend_tail = r->pend_last = x;
        r->pend_tail = &x->next;
        return 0;
    }
    if (p->nmetrics >= CLI_MAX_METRICS && cli_profile_metric_find(p, name) < 0) {
        cli_err_set(r->e, "more than %d distinct metrics", CLI_MAX_METRICS);
        return -1;
    }
    int id = cli_profile_metric_id(p, name);
    if (mode == 'm')
        cli_node_max_num(p, n, id, v);
    else
        cli_node_add_num(p, n, id, v);
    return 0;
}

static void
hint(TReader *r, const char *name)
{
    int id = cli_profile_metric_id(r->p, name);
    if (!cli_node_val(r->p->root, id))
        cli_node_set_num(r->p, r->p->root, id, 0);
}

/* args.counters of a launch or an in-kernel scope: {name: delta >= 0}, summed and hinted. */
static int
add_counters(TReader *r, CliNode *n, const cJSON *args)
{
    const cJSON *c, *x;
    double v;
    if (get_obj(r, args, "args.", "counters", &c) != 0)
        return -1;
    cJSON_ArrayForEach(x, c) {
        if (cJSON_IsNull(x))
            continue;
        if (check_num(r, x, "args.counters.", &R_AMOUNT, &v) != 0 ||
            add_metric(r, n, x->string, v, 's') != 0)
            return -1;
        if (n)
            hint(r, x->string);
        else
            r->pend_last->hint = 1;
    }
    return 0;
}

static int
known_arg(const char *k)
{
    static const char *const known[] = {"call_stack", "scope_id", "kernel", "program", "grid",
                                        "pid", "counters", "metrics"};
    for (size_t i = 0; i < sizeof known / sizeof *known; i++)
        if (strcmp(k, known[i]) == 0)
            return 1;
    return 0;
}

/* Numeric values of obj as metrics. Upstream writes flexible metrics as strings
 * ("1.000000", "nan", "[1,2]"), ours as numbers; strings that are not a finite number
 * are skipped. 'strict' (args.metrics) rejects other types; otherwise (all the args of
 * a scope) they and the known keys are skipped. */
static int
add_args_metrics(TReader *r, CliNode *n, const cJSON *obj, const char *prefix, int strict)
{
    const cJSON *x;
    double v;
    cJSON_ArrayForEach(x, obj) {
        const char *k = x->string;
        char *end;
        if (!strict && known_arg(k))
            continue;
        if (cJSON_IsNumber(x)) {
            if (check_num(r, x, prefix, &R_METRIC, &v) != 0)
                return -1;
        } else if (cJSON_IsString(x)) {
            v = strtod(x->valuestring, &end);
            if (end == x->valuestring || *end || !isfinite(v))
                continue;
            if (fabs(v) > R_METRIC.hi)
                return bad(r, prefix, k, "is out of range (magnitude up to 2^64)");
        } else if (strict && !cJSON_IsNull(x)) {
            return bad(r, prefix, k, "is not a number or string");
        } else {
            continue;
        }
        if (add_metric(r, n, k, v, 's') != 0)
            return -1;
    }
    return 0;
}

/* ---- tree building ------------------------------------------------------------------------ */

/* Node for args.call_stack (["ROOT", scopes..., leaf]); leaf defaults to 'name'.
 * 0 with *out set, or -1 with r->e set. */
static int
path_node(TReader *r, const cJSON *args, const char *name, CliNode **out)
{
    CliProfile *p = r->p;
    CliNode *n = p->root;
    const cJSON *cs = cJSON_GetObjectItemCaseSensitive(args, "call_stack");
    const char *last = NULL;
    int depth = 0, i = 0;
    if (cs && !cJSON_IsNull(cs) && !cJSON_IsArray(cs))
        return bad(r, "args.", "call_stack", "is not a list");
    const cJSON *x, *list = cJSON_IsArray(cs) ? cs : NULL;
    cJSON_ArrayForEach(x, list) {
        char key[32];
        if (!cJSON_IsString(x)) {
            snprintf(key, sizeof key, "call_stack[%d]", i);
            return bad(r, "args.", key, "is not a string");
        }
        i++;
        if (x == cs->child && strcmp(x->valuestring, "ROOT") == 0)
            continue;
        if (++depth > CLI_MAX_DEPTH) {
            snprintf(key, sizeof key, "deeper than %d levels", CLI_MAX_DEPTH);
            return bad(r, "args.", "call_stack", key);
        }
        n = cli_node_child(p, n, x->valuestring);
        last = x->valuestring;
    }
    if (!last || strcmp(last, name) != 0)
        n = cli_node_child(p, n, name);
    *out = n;
    return 0;
}

/* A launch's own args: the known numeric ones range-checked, any other number kept as a
 * user metric, counters and upstream's string metrics. */
static int
kernel_args(TReader *r, CliNode *n, const cJSON *args)
{
    const cJSON *x, *m;
    double v;
    if (add_counters(r, n, args) != 0 || get_obj(r, args, "args.", "metrics", &m) != 0 ||
        (m && add_args_metrics(r, n, m, "args.metrics.", 1) != 0))
        return -1;
    cJSON_ArrayForEach(x, args) {
        const char *k = x->string;
        const Range *rg = &R_METRIC;
        if (strcmp(k, "programs") == 0 || strcmp(k, "bytes") == 0)
            rg = &R_COUNT;
        else if (strcmp(k, "threads") == 0)
            rg = &R_ID;
        else if (strncmp(k, "flops", 5) == 0)
            rg = &R_AMOUNT;
        else if (!cJSON_IsNumber(x) || strcmp(k, "scope_id") == 0)
            continue; /* grid, constexprs, call_stack, ...: not read */
        if (cJSON_IsNull(x))
            continue;
        if (check_num(r, x, "args.", rg, &v) != 0 ||
            add_metric(r, n, k, v, strcmp(k, "threads") == 0 ? 'm' : 's') != 0)
            return -1;
        if (strcmp(k, "bytes") == 0 || strncmp(k, "flops", 5) == 0)
            hint(r, k);
    }
    return 0;
}

static int
add_kernel(TReader *r, const cJSON *ev, const char *name, double ts, double dur)
{
    CliProfile *p = r->p;
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
    CliNode *n;
    if (path_node(r, args, name, &n) != 0)
        return -1;
    cli_node_add_num(p, n, r->id_count, 1);
    cli_node_add_num(p, n, r->id_time, dur * 1000.0);
    int dt = cli_profile_metric_id(p, "device_type");
    if (!cli_node_val(n, dt)) {
        cli_node_set_str(p, n, cli_profile_metric_id(p, "device_id"), "0");
        cli_node_set_str(p, n, dt, "CPU");
    }
    if (cJSON_IsObject(args) && kernel_args(r, n, args) != 0)
        return -1;
    if (r->nlaunches == r->caplaunches) {
        r->caplaunches = r->caplaunches ? r->caplaunches * 2 : 256;
        r->launches = cli_xrealloc(r->launches, (size_t)r->caplaunches * sizeof *r->launches);
    }
    Launch *l = &r->launches[r->nlaunches++];
    l->ts = ts;
    l->end = ts + dur;
    l->pid = r->pid;
    l->name = intern(r, name);
    l->node = n;
    return 0;
}

static int
add_host_scope(TReader *r, const cJSON *ev, const char *name)
{
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args"), *m;
    CliNode *n;
    if (path_node(r, args, name, &n) != 0 || get_obj(r, args, "args.", "metrics", &m) != 0)
        return -1;
    if (m)
        return add_args_metrics(r, n, m, "args.metrics.", 1);
    return cJSON_IsObject(args) ? add_args_metrics(r, n, args, "args.", 0) : 0;
}

/* An in-kernel scope slice: its values are checked now and added to its node at the
 * end (add_scopes), once every launch it may belong to is known. */
static int
add_scope(TReader *r, const cJSON *ev, const char *name, const char *kernel, double ts,
          double dur, int thread)
{
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
    if (r->nscopes == r->capscopes) {
        r->capscopes = r->capscopes ? r->capscopes * 2 : 256;
        r->scopes = cli_xrealloc(r->scopes, (size_t)r->capscopes * sizeof *r->scopes);
    }
    Scope *sc = &r->scopes[r->nscopes++];
    memset(sc, 0, sizeof *sc);
    sc->ts = ts;
    sc->dur = dur;
    sc->thread = thread;
    sc->evi = r->cur;
    sc->name = intern(r, name);
    sc->kernel = intern(r, kernel);
    r->pend_tail = &sc->vals;
    if (cJSON_IsObject(args) &&
        (add_counters(r, NULL, args) != 0 || add_args_metrics(r, NULL, args, "args.", 0) != 0))
        return -1;
    return 0;
}

/* ---- timeline slices ------------------------------------------------------------------------ */

/* Priority of the slice read as the idx-th one: longer first, ties spread by a hash. */
static unsigned
spread(long idx)
{
    uint64_t h = (uint64_t)idx * 0x9e3779b97f4a7c15ull;
    return (unsigned)(h >> 32);
}

static int
span_less(const CliSpan *a, unsigned ka, const CliSpan *b, unsigned kb)
{
    return a->dur != b->dur ? a->dur < b->dur : ka < kb;
}

static void
heap_down(TReader *r, int i)
{
    CliSpan *s = r->p->spans;
    unsigned *k = r->span_key;
    int n = r->p->nspans;
    for (;;) {
        int m = i, a = 2 * i + 1, b = a + 1;
        if (a < n && span_less(&s[a], k[a], &s[m], k[m]))
            m = a;
        if (b < n && span_less(&s[b], k[b], &s[m], k[m]))
            m = b;
        if (m == i)
            return;
        CliSpan t = s[i];
        s[i] = s[m];
        s[m] = t;
        unsigned x = k[i];
        k[i] = k[m];
        k[m] = x;
        i = m;
    }
}

/* Keeps the slice for the timeline: all of them up to CLI_SPANS_KEEP, then a min-heap
 * of the longest. */
static void
add_span(TReader *r, const char *name, int cat, const char *kernel, double ts, double dur,
         int thread)
{
    CliProfile *p = r->p;
    CliSpan s = {.ts = ts, .dur = dur, .cat = cat, .thread = thread, .name = intern(r, name),
                 .kernel = cat == CLI_SPAN_SCOPE ? intern(r, kernel) : NULL};
    unsigned key = spread(r->spans_seen++);
    p->spans_total++;
    if (p->nspans < CLI_SPANS_KEEP) {
        if (p->nspans == p->capspans) {
            p->capspans = p->capspans ? p->capspans * 2 : 1024;
            p->spans = cli_xrealloc(p->spans, (size_t)p->capspans * sizeof *p->spans);
            r->span_key = cli_xrealloc(r->span_key, (size_t)p->capspans * sizeof *r->span_key);
        }
        p->spans[p->nspans] = s;
        r->span_key[p->nspans++] = key;
        if (p->nspans == CLI_SPANS_KEEP)
            for (int i = p->nspans / 2 - 1; i >= 0; i--)
                heap_down(r, i);
        return;
    }
    if (!span_less(&p->spans[0], r->span_key[0], &s, key))
        return;
    p->spans[0] = s;
    r->span_key[0] = key;
    heap_down(r, 0);
}

/* ---- events --------------------------------------------------------------------------------- */

static int
metadata(TReader *r, const cJSON *ev, const char *name)
{
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
    int t = thread_of(r); /* may move threads[] */
    CliThread *th = &r->p->threads[t];
    const char *s;
    double v;
    if (strcmp(name, "thread_name") == 0 || strcmp(name, "process_name") == 0) {
        if (get_str(r, args, "args.", "name", &s) != 0)
            return -1;
        /* a process_name applies to every thread of the process (share_process_names) */
        if (s && name[0] == 't')
            th->name = cli_arena_strdup(r->a, s);
        else if (s)
            th->pname = cli_arena_strdup(r->a, s);
    } else if (strcmp(name, "thread_sort_index") == 0) {
        int rc = get_num(r, args, "args.", "sort_index", &R_SORT, &v);
        if (rc < 0)
            return -1;
        if (rc == 0)
            th->sort = v;
    }
    return 0;
}

static int
span_cat(const char *cat, const char *kernel)
{
    if (!cat)
        return CLI_SPAN_OTHER;
    if (strcmp(cat, "kernel") == 0)
        return CLI_SPAN_KERNEL;
    if (strcmp(cat, "program") == 0)
        return CLI_SPAN_PROGRAM;
    if (strcmp(cat, "host_scope") == 0 || strcmp(cat, "metric") == 0)
        return CLI_SPAN_HOST;
    if (strcmp(cat, "scope") == 0)
        return kernel ? CLI_SPAN_SCOPE : CLI_SPAN_HOST;
    return CLI_SPAN_OTHER;
}

/* Validates one event and records it. Every event's pid, tid and ts are checked (merge
 * rewrites them); only X and M events are read further. Returns 0 or -1 with r->e set. */
int
cli_trace_event(TReader *r, const cJSON *ev, int idx)
{
    double ts = 0, dur = 0;
    const char *kernel = NULL;
    r->cur = idx;
    if (!cJSON_IsObject(ev)) {
        cli_err_set(r->e, "traceEvents[%d] is not an object", idx);
        return -1;
    }
    /* the fields read, in one pass (the first of a name counts, as with cJSON's lookup) */
    const cJSON *ph = NULL, *nm = NULL, *cat = NULL, *args = NULL, *pid = NULL, *tid = NULL;
    const cJSON *tsj = NULL, *durj = NULL, *x;
    for (x = ev->child; x; x = x->next) {
        const char *k = x->string;
        const cJSON **f = NULL;
        switch (k[0]) {
        case 'p': f = strcmp(k, "ph") == 0 ? &ph : strcmp(k, "pid") == 0 ? &pid : NULL; break;
        case 'n': f = strcmp(k, "name") == 0 ? &nm : NULL; break;
        case 'c': f = strcmp(k, "cat") == 0 ? &cat : NULL; break;
        case 'a': f = strcmp(k, "args") == 0 ? &args : NULL; break;
        case 't': f = strcmp(k, "tid") == 0 ? &tid : strcmp(k, "ts") == 0 ? &tsj : NULL; break;
        case 'd': f = strcmp(k, "dur") == 0 ? &durj : NULL; break;
        }
        if (f && !*f)
            *f = x;
    }
    if (!cJSON_IsString(ph)) {
        cli_err_set(r->e, "traceEvents[%d] has no \"ph\" string", idx);
        return -1;
    }
    if ((nm && !cJSON_IsString(nm)) || (cat && !cJSON_IsString(cat)) ||
        (args && !cJSON_IsObject(args))) {
        cli_err_set(r->e, "traceEvents[%d]: name/cat must be strings and args an object", idx);
        return -1;
    }
    int is_x = strcmp(ph->valuestring, "X") == 0, is_m = strcmp(ph->valuestring, "M") == 0;
    int read = is_x || is_m;
    if (get_id(r, pid, "pid", read ? &r->pid : NULL) != 0 ||
        get_id(r, tid, "tid", read ? &r->tid : NULL) != 0 ||
        (tsj && !cJSON_IsNull(tsj) && check_num(r, tsj, "", &R_TS, &ts) != 0))
        return -1;
    const char *name = nm ? nm->valuestring : "";
    if (is_m)
        return metadata(r, ev, name);
    if (!is_x)
        return 0; /* counters, instants, flows: not part of the tree or the timeline */
    if (!cJSON_IsNumber(tsj) || !cJSON_IsNumber(durj)) {
        cli_err_set(r->e, "traceEvents[%d] (\"%s\"): X event without numeric ts and dur", idx,
                    name);
        return -1;
    }
    if (durj->valuedouble < 0) {
        cli_err_set(r->e, "traceEvents[%d] (\"%s\"): negative dur", idx, name);
        return -1;
    }
    if (check_num(r, durj, "", &R_DUR, &dur) != 0)
        return -1;
    if (cat && strcmp(cat->valuestring, "scope") == 0 &&
        get_str(r, args, "args.", "kernel", &kernel) != 0)
        return -1;
    int kind = span_cat(cat ? cat->valuestring : NULL, kernel), thread = thread_of(r);
    r->p->threads[thread].nspans++;
    if (r->flags & CLI_LOAD_SPANS)
        add_span(r, name, kind, kernel, ts, dur, thread);
    if (kind == CLI_SPAN_KERNEL)
        return add_kernel(r, ev, name, ts, dur);
    if (kind == CLI_SPAN_HOST)
        return add_host_scope(r, ev, name);
    if (kind == CLI_SPAN_SCOPE)
        return add_scope(r, ev, name, kernel, ts, dur, thread);
    return 0;
}

/* ---- in-kernel scopes and nesting -------------------------------------------------------- */

/* Slices of a thread by start, longer first (parents before children), then 'tie'. */
static int
cmp_slice(int ta, double tsa, double da, int tb, double tsb, double db, int tie)
{
    if (ta != tb)
        return ta - tb;
    if (tsa != tsb)
        return tsa < tsb ? -1 : 1;
    if (da != db)
        return da > db ? -1 : 1;
    return tie;
}

static int
cmp_scope(const void *a, const void *b)
{
    const Scope *x = a, *y = b;
    return cmp_slice(x->thread, x->ts, x->dur, y->thread, y->ts, y->dur,
                     (x->evi > y->evi) - (x->evi < y->evi));
}

static int
cmp_span(const void *a, const void *b)
{
    const CliSpan *x = a, *y = b;
    return cmp_slice(x->thread, x->ts, x->dur, y->thread, y->ts, y->dur,
                     (x->cat > y->cat) - (x->cat < y->cat));
}

static int
cmp_launch(const void *a, const void *b)
{
    const Launch *x = a, *y = b;
    return (x->ts > y->ts) - (x->ts < y->ts);
}

/* The launch of 'kernel' in process 'pid' running at time ts, or NULL (strings are
 * interned: compared by address). */
static Launch *
find_launch(TReader *r, const char *pid, const char *kernel, double ts)
{
    int lo = 0, hi = r->nlaunches; /* first launch starting after ts */
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (r->launches[mid].ts <= ts + 1e-3)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (int i = lo - 1, k = 0; i >= 0 && k < 256; i--, k++) {
        Launch *l = &r->launches[i];
        if (l->end + 1e-3 >= ts && l->name == kernel && l->pid == pid)
            return l;
    }
    return NULL;
}

typedef struct Open {
    double end;
    CliNode *node;
    const char *kernel;
} Open;

/* The node of scope slice s: under the innermost open scope of the same kernel on its
 * thread, else under the launch that contains it, else under ROOT/<kernel>. */
static int
scope_node(TReader *r, const Scope *s, const Open *stack, int sp, CliNode **out)
{
    CliProfile *p = r->p;
    CliNode *parent = NULL;
    for (int i = sp - 1; i >= 0 && !parent; i--)
        if (stack[i].kernel == s->kernel)
            parent = stack[i].node;
    if (!parent) {
        Launch *l = find_launch(r, p->threads[s->thread].pid, s->kernel, s->ts);
        parent = l ? l->node : cli_node_child(p, p->root, s->kernel);
    }
    if (parent->depth >= CLI_MAX_DEPTH) {
        cli_err_set(r->e, "scopes nested deeper than %d levels", CLI_MAX_DEPTH);
        return -1;
    }
    CliNode *n = cli_node_child(p, parent, s->name);
    n->depth = parent->depth + 1;
    cli_node_add_num(p, n, r->id_count, 1);
    cli_node_add_num(p, n, r->id_time, s->dur * 1000.0);
    for (const Pend *v = s->vals; v; v = v->next) {
        if (add_metric(r, n, v->name, v->v, 's') != 0)
            return -1;
        if (v->hint)
            hint(r, v->name);
    }
    *out = n;
    return 0;
}

/* Attaches in-kernel scopes to the tree, nested by time containment on their thread. */
static int
add_scopes(TReader *r)
{
    int rc = -1, sp = 0, cap = 64;
    Open *stack = cli_xmalloc(sizeof(Open) * (size_t)cap);
    if (r->nscopes > 1)
        qsort(r->scopes, (size_t)r->nscopes, sizeof *r->scopes, cmp_scope);
    if (r->nlaunches > 1)
        qsort(r->launches, (size_t)r->nlaunches, sizeof *r->launches, cmp_launch);
    for (int k = 0; k < r->nscopes; k++) {
        const Scope *s = &r->scopes[k];
        CliNode *node;
        if (k > 0 && r->scopes[k - 1].thread != s->thread)
            sp = 0;
        while (sp > 0 && stack[sp - 1].end <= s->ts + 1e-6)
            sp--;
        r->cur = s->evi;
        if (scope_node(r, s, stack, sp, &node) != 0)
            goto out;
        if (sp == cap) {
            cap *= 2;
            stack = cli_xrealloc(stack, sizeof(Open) * (size_t)cap);
        }
        stack[sp].end = s->ts + s->dur;
        stack[sp].node = node;
        stack[sp].kernel = s->kernel;
        sp++;
    }
    rc = 0;
out:
    free(stack);
    return rc;
}

/* Sorts the kept slices per thread by start and fills their nesting depth. */
static void
nest_spans(CliProfile *p)
{
    int sp = 0, cap = 64;
    double *end = cli_xmalloc(sizeof(double) * (size_t)cap);
    if (p->nspans > 1)
        qsort(p->spans, (size_t)p->nspans, sizeof *p->spans, cmp_span);
    for (int k = 0; k < p->nspans; k++) {
        CliSpan *s = &p->spans[k];
        if (k > 0 && p->spans[k - 1].thread != s->thread)
            sp = 0;
        while (sp > 0 && end[sp - 1] <= s->ts + 1e-6)
            sp--;
        s->depth = sp;
        if (sp == cap) {
            cap *= 2;
            end = cli_xrealloc(end, sizeof(double) * (size_t)cap);
        }
        end[sp++] = s->ts + s->dur;
    }
    free(end);
}

/* ---- top level ------------------------------------------------------------------------------- */

/* otherData's summary fields; the others are not read. 0 or -1 with r->e set. */
static int
other_data(TReader *r, const cJSON *od)
{
    CliProfile *p = r->p;
    static const char *const keys[] = {"counter_source", "clock_source", "cpu_model", "tool"};
    const char **dst[] = {&p->counter_source, &p->clock_source, &p->cpu_model, &p->tool};
    const char *s;
    double v;
    int rc;
    for (int i = 0; i < 4; i++) {
        if (get_str(r, od, "otherData.", keys[i], &s) != 0)
            return -1;
        if (s)
            *dst[i] = cli_arena_strdup(r->a, s);
    }
    if ((rc = get_num(r, od, "otherData.", "num_cores", &R_CORES, &v)) < 0)
        return -1;
    if (rc == 0)
        p->num_cores = (int)v;
    if ((rc = get_num(r, od, "otherData.", "dropped_events", &R_DROPPED, &v)) < 0)
        return -1;
    if (rc == 0)
        p->dropped_events = (long)v;
    return 0;
}

static const CliThread *cmp_threads;

static int
cmp_thread_pid(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    int c = strcmp(cmp_threads[x].pid, cmp_threads[y].pid);
    return c ? c : (x > y) - (x < y);
}

/* A process_name applies to every thread of its pid: group threads by pid. */
static void
share_process_names(CliProfile *p)
{
    int n = p->nthreads;
    int *idx = cli_xmalloc(sizeof(int) * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++)
        idx[i] = i;
    cmp_threads = p->threads;
    qsort(idx, (size_t)n, sizeof *idx, cmp_thread_pid);
    for (int i = 0; i < n;) {
        int j = i;
        const char *name = NULL;
        while (j < n && strcmp(p->threads[idx[j]].pid, p->threads[idx[i]].pid) == 0) {
            if (!name)
                name = p->threads[idx[j]].pname;
            j++;
        }
        for (int k = i; k < j; k++)
            if (!p->threads[idx[k]].pname)
                p->threads[idx[k]].pname = name;
        i = j;
    }
    cmp_threads = NULL;
    free(idx);
}

TReader *
cli_trace_reader_create(CliProfile *p, int flags, CliErr *e)
{
    TReader *r = cli_xcalloc(1, sizeof *r);
    r->p = p;
    r->e = e;
    r->a = &p->arena;
    r->cur = -1;
    r->flags = flags;
    r->id_count = cli_profile_metric_id(p, "count");
    r->id_time = cli_profile_metric_id(p, "time (ns)");
    return r;
}

/* A top-level member of the trace object other than traceEvents (the first of each
 * name counts, as cJSON's lookup would). 0 or -1 with the reader's error set. */
int
cli_trace_field(TReader *r, const char *key, const cJSON *v)
{
    CliProfile *p = r->p;
    r->cur = -1;
    if (strcmp(key, "otherData") == 0 && !r->seen_other++) {
        if (cJSON_IsNull(v))
            return 0;
        if (!cJSON_IsObject(v))
            return bad(r, "", key, "is not an object");
        return other_data(r, v);
    }
    if (strcmp(key, "baseTimeNanoseconds") == 0 && !r->seen_base++) {
        double base;
        if (cJSON_IsNull(v))
            return 0;
        if (check_num_key(r, v, "", key, &R_COUNT, &base) != 0)
            return -1;
        p->base_ns = base;
        p->has_base = 1;
    }
    return 0;
}

/* After the last event: in-kernel scopes, timeline nesting, process names, hints. */
int
cli_trace_finish(TReader *r)
{
    CliProfile *p = r->p;
    long xspans = 0;
    if (add_scopes(r) != 0)
        return -1;
    nest_spans(p);
    share_process_names(p);
    for (int i = 0; i < p->nthreads; i++)
        xspans += p->threads[i].nspans;
    if (r->nlaunches > 0 || xspans > 0) {
        hint(r, "count");
        hint(r, "time (ns)");
    }
    if (!p->device_type && r->nlaunches > 0)
        p->device_type = "CPU";
    return 0;
}

void
cli_trace_reader_destroy(TReader *r)
{
    if (!r)
        return;
    free(r->launches);
    free(r->scopes);
    free(r->span_key);
    free(r->tkeys);
    free(r->tvals);
    free(r->ikeys);
    free(r);
}

int
cli_read_trace(CliProfile *p, const cJSON *top, int flags, CliErr *e)
{
    TReader *r = cli_trace_reader_create(p, flags, e);
    const cJSON *events = top, *x;
    int rc = -1, i = 0;
    if (cJSON_IsObject(top)) {
        events = cJSON_GetObjectItemCaseSensitive(top, "traceEvents");
        if (!cJSON_IsArray(events)) {
            cli_err_set(e, "no \"traceEvents\" list (neither a .hatchet tree nor a Chrome trace)");
            goto out;
        }
        cJSON_ArrayForEach(x, top) {
            if (x != events && cli_trace_field(r, x->string, x) != 0)
                goto out;
        }
    }
    cJSON_ArrayForEach(x, events) {
        if (cli_trace_event(r, x, i++) != 0)
            goto out;
    }
    rc = cli_trace_finish(r);
out:
    cli_trace_reader_destroy(r);
    return rc;
}
