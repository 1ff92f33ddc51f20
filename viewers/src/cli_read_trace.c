/*
 * cli_read_trace.c — reads our Chrome-trace .json (docs/formats.md §2; also upstream
 * Proton's `.chrome_trace` shapes) into a CliProfile: a timeline (threads and X slices)
 * and an aggregated call-path tree.
 *
 * Aggregation: every `kernel` X event becomes (or adds to) the node at its
 * args.call_stack (ROOT, host scopes..., kernel) with count, time (ns), programs,
 * threads (max), bytes, flops* and counter deltas. In-kernel `scope` events (args.kernel)
 * hang under the launch that contains them in time (same process, same kernel name),
 * nested by time containment on their worker thread. Host scopes become nodes from
 * their call_stack with their numeric args as user metrics. The root gets zero hints for
 * count, time, bytes, flops and counters, as a .hatchet of the same run would.
 */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct Launch {
    double ts, end;
    const char *pid;
    const char *name;
    CliNode *node;
} Launch;

typedef struct TReader {
    CliProfile *p;
    CliErr *e;
    const cJSON **ev;        /* event of each span, parallel to p->spans */
    Launch *launches;
    int nlaunches, caplaunches;
    char **tkeys;            /* (pid, tid) -> thread index hash */
    int *tvals;
    int tcap;
    int id_count, id_time;
    CliArena *a;
} TReader;

/* ---- small helpers ---------------------------------------------------------------------- */

static const char *
id_text(TReader *r, const cJSON *x)
{
    char buf[32];
    if (cJSON_IsString(x))
        return cli_arena_strdup(r->a, x->valuestring);
    if (cJSON_IsNumber(x)) {
        cli_fmt_double(buf, x->valuedouble);
        return cli_arena_strdup(r->a, buf);
    }
    return "0";
}

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

/* Index of thread (pid, tid), created on first sight. */
static int
thread_of(TReader *r, const cJSON *ev)
{
    CliProfile *p = r->p;
    const char *pid = id_text(r, cJSON_GetObjectItemCaseSensitive(ev, "pid"));
    const char *tid = id_text(r, cJSON_GetObjectItemCaseSensitive(ev, "tid"));
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

static const char *
str_field(const cJSON *ev, const char *key)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(ev, key);
    return cJSON_IsString(x) ? x->valuestring : NULL;
}

static int
num_field(const cJSON *ev, const char *key, double *out)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(ev, key);
    if (!cJSON_IsNumber(x))
        return -1;
    *out = x->valuedouble;
    return 0;
}

/* Adds a numeric metric; metric names are capped like the hatchet reader's. */
static int
add_metric(TReader *r, CliNode *n, const char *name, double v, int mode)
{
    CliProfile *p = r->p;
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

/* ---- tree building ------------------------------------------------------------------------ */

/* Node for args.call_stack (["ROOT", scopes..., leaf]); leaf defaults to 'name'. */
static CliNode *
path_node(TReader *r, const cJSON *args, const char *name)
{
    CliProfile *p = r->p;
    CliNode *n = p->root;
    const cJSON *cs = args ? cJSON_GetObjectItemCaseSensitive(args, "call_stack") : NULL;
    const char *last = NULL;
    int depth = 0;
    if (cJSON_IsArray(cs)) {
        const cJSON *x;
        cJSON_ArrayForEach(x, cs) {
            if (!cJSON_IsString(x))
                continue;
            if (x == cs->child && strcmp(x->valuestring, "ROOT") == 0)
                continue;
            if (++depth > CLI_MAX_DEPTH)
                return NULL;
            n = cli_node_child(p, n, x->valuestring);
            last = x->valuestring;
        }
    }
    if (!last || strcmp(last, name) != 0)
        n = cli_node_child(p, n, name);
    return n;
}

/* Upstream writes flexible metrics as strings ("1.000000"); ours as numbers. */
static int
add_args_metrics(TReader *r, CliNode *n, const cJSON *obj, int skip_known)
{
    const cJSON *x;
    cJSON_ArrayForEach(x, obj) {
        const char *k = x->string;
        if (skip_known && (strcmp(k, "call_stack") == 0 || strcmp(k, "scope_id") == 0 ||
                           strcmp(k, "kernel") == 0 || strcmp(k, "program") == 0 ||
                           strcmp(k, "grid") == 0 || strcmp(k, "pid") == 0))
            continue;
        double v;
        char *end;
        if (cJSON_IsNumber(x)) {
            v = x->valuedouble;
        } else if (cJSON_IsString(x)) {
            v = strtod(x->valuestring, &end);
            if (end == x->valuestring || *end || !isfinite(v))
                continue;
        } else {
            continue;
        }
        if (add_metric(r, n, k, v, 's') != 0)
            return -1;
    }
    return 0;
}

static int
add_kernel(TReader *r, const cJSON *ev, const char *name, double ts, double dur)
{
    CliProfile *p = r->p;
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
    CliNode *n = path_node(r, args, name);
    if (!n) {
        cli_err_set(r->e, "call_stack deeper than %d levels", CLI_MAX_DEPTH);
        return -1;
    }
    cli_node_add_num(p, n, r->id_count, 1);
    cli_node_add_num(p, n, r->id_time, dur * 1000.0);
    int dt = cli_profile_metric_id(p, "device_type");
    if (!cli_node_val(n, dt)) {
        cli_node_set_str(p, n, cli_profile_metric_id(p, "device_id"), "0");
        cli_node_set_str(p, n, dt, "CPU");
    }
    const cJSON *x;
    if (cJSON_IsObject(args)) {
        cJSON_ArrayForEach(x, args) {
            const char *k = x->string;
            if (strcmp(k, "counters") == 0 && cJSON_IsObject(x)) {
                const cJSON *c;
                cJSON_ArrayForEach(c, x) {
                    if (!cJSON_IsNumber(c))
                        continue;
                    if (add_metric(r, n, c->string, c->valuedouble, 's') != 0)
                        return -1;
                    hint(r, c->string);
                }
            } else if (strcmp(k, "metrics") == 0 && cJSON_IsObject(x)) {
                if (add_args_metrics(r, n, x, 0) != 0)
                    return -1;
            } else if (cJSON_IsNumber(x) && strcmp(k, "scope_id") != 0) {
                if (add_metric(r, n, k, x->valuedouble, strcmp(k, "threads") == 0 ? 'm' : 's'))
                    return -1;
                if (strcmp(k, "bytes") == 0 || strncmp(k, "flops", 5) == 0)
                    hint(r, k);
            }
        }
    }
    if (r->nlaunches == r->caplaunches) {
        r->caplaunches = r->caplaunches ? r->caplaunches * 2 : 256;
        r->launches = cli_xrealloc(r->launches, (size_t)r->caplaunches * sizeof *r->launches);
    }
    Launch *l = &r->launches[r->nlaunches++];
    l->ts = ts;
    l->end = ts + dur;
    l->pid = p->threads[p->spans[p->nspans - 1].thread].pid;
    l->name = p->spans[p->nspans - 1].name;
    l->node = n;
    return 0;
}

static int
add_host_scope(TReader *r, const cJSON *ev, const char *name)
{
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
    CliNode *n = path_node(r, args, name);
    if (!n) {
        cli_err_set(r->e, "call_stack deeper than %d levels", CLI_MAX_DEPTH);
        return -1;
    }
    if (!cJSON_IsObject(args))
        return 0;
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(args, "metrics");
    if (cJSON_IsObject(m))
        return add_args_metrics(r, n, m, 0);
    return add_args_metrics(r, n, args, 1);
}

/* ---- events --------------------------------------------------------------------------------- */

static int
add_span(TReader *r, const cJSON *ev, const char *name, int cat, double ts, double dur)
{
    CliProfile *p = r->p;
    if (p->nspans == p->capspans) {
        p->capspans = p->capspans ? p->capspans * 2 : 1024;
        p->spans = cli_xrealloc(p->spans, (size_t)p->capspans * sizeof *p->spans);
        r->ev = cli_xrealloc(r->ev, (size_t)p->capspans * sizeof *r->ev);
    }
    CliSpan *s = &p->spans[p->nspans];
    memset(s, 0, sizeof *s);
    s->ts = ts;
    s->dur = dur;
    s->cat = cat;
    s->thread = thread_of(r, ev);
    s->name = cli_arena_strdup(r->a, name);
    if (cat == CLI_SPAN_SCOPE) {
        const char *k = str_field(cJSON_GetObjectItemCaseSensitive(ev, "args"), "kernel");
        s->kernel = cli_arena_strdup(r->a, k);
    }
    r->ev[p->nspans] = ev;
    p->threads[s->thread].nspans++;
    p->nspans++;
    return 0;
}

static void
metadata(TReader *r, const cJSON *ev, const char *name)
{
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
    int t = thread_of(r, ev);
    CliThread *th = &r->p->threads[t];
    const char *s = str_field(args, "name");
    double v;
    if (strcmp(name, "thread_name") == 0 && s) {
        th->name = cli_arena_strdup(r->a, s);
    } else if (strcmp(name, "process_name") == 0 && s) {
        /* applies to every thread of the process, including later ones (see fixup) */
        th->pname = cli_arena_strdup(r->a, s);
    } else if (strcmp(name, "thread_sort_index") == 0 &&
               num_field(args, "sort_index", &v) == 0) {
        th->sort = v;
    }
}

static int
span_cat(const char *cat, const cJSON *ev)
{
    if (!cat)
        return CLI_SPAN_OTHER;
    if (strcmp(cat, "kernel") == 0)
        return CLI_SPAN_KERNEL;
    if (strcmp(cat, "program") == 0)
        return CLI_SPAN_PROGRAM;
    if (strcmp(cat, "host_scope") == 0 || strcmp(cat, "metric") == 0)
        return CLI_SPAN_HOST;
    if (strcmp(cat, "scope") == 0) {
        const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
        return str_field(args, "kernel") ? CLI_SPAN_SCOPE : CLI_SPAN_HOST;
    }
    return CLI_SPAN_OTHER;
}

/* Validates one event and records it. Returns 0 or -1 with r->e set. */
static int
read_event(TReader *r, const cJSON *ev, int idx)
{
    if (!cJSON_IsObject(ev)) {
        cli_err_set(r->e, "traceEvents[%d] is not an object", idx);
        return -1;
    }
    const cJSON *ph = cJSON_GetObjectItemCaseSensitive(ev, "ph");
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(ev, "name");
    const cJSON *cat = cJSON_GetObjectItemCaseSensitive(ev, "cat");
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
    if (!cJSON_IsString(ph)) {
        cli_err_set(r->e, "traceEvents[%d] has no \"ph\" string", idx);
        return -1;
    }
    if ((nm && !cJSON_IsString(nm)) || (cat && !cJSON_IsString(cat)) ||
        (args && !cJSON_IsObject(args))) {
        cli_err_set(r->e, "traceEvents[%d]: name/cat must be strings and args an object", idx);
        return -1;
    }
    const char *name = nm ? nm->valuestring : "";
    if (strcmp(ph->valuestring, "M") == 0) {
        metadata(r, ev, name);
        return 0;
    }
    if (strcmp(ph->valuestring, "X") != 0)
        return 0; /* counters, instants, flows: not part of the tree or the timeline */
    double ts, dur;
    if (num_field(ev, "ts", &ts) != 0 || num_field(ev, "dur", &dur) != 0) {
        cli_err_set(r->e, "traceEvents[%d] (\"%s\"): X event without numeric ts and dur", idx,
                    name);
        return -1;
    }
    if (dur < 0) {
        cli_err_set(r->e, "traceEvents[%d] (\"%s\"): negative dur", idx, name);
        return -1;
    }
    int kind = span_cat(cat ? cat->valuestring : NULL, ev);
    add_span(r, ev, name, kind, ts, dur);
    if (kind == CLI_SPAN_KERNEL)
        return add_kernel(r, ev, name, ts, dur);
    if (kind == CLI_SPAN_HOST)
        return add_host_scope(r, ev, name);
    return 0;
}

/* ---- in-kernel scopes and nesting -------------------------------------------------------- */

static CliSpan *cmp_spans;

static int
cmp_span_idx(const void *a, const void *b)
{
    const CliSpan *x = &cmp_spans[*(const int *)a], *y = &cmp_spans[*(const int *)b];
    if (x->thread != y->thread)
        return x->thread - y->thread;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    if (x->dur != y->dur)
        return x->dur > y->dur ? -1 : 1;
    return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

static int
cmp_launch(const void *a, const void *b)
{
    const Launch *x = a, *y = b;
    return (x->ts > y->ts) - (x->ts < y->ts);
}

/* The launch of 'kernel' in process 'pid' running at time ts, or NULL. */
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
        if (l->end + 1e-3 >= ts && strcmp(l->name, kernel) == 0 && strcmp(l->pid, pid) == 0)
            return l;
    }
    return NULL;
}

typedef struct Open {
    double end;
    CliNode *node;  /* scope node, NULL for other slices */
    const char *kernel;
} Open;

static int
scope_event(TReader *r, const CliSpan *s, const cJSON *ev, Open *stack, int sp, CliNode **out)
{
    CliProfile *p = r->p;
    CliNode *parent = NULL;
    for (int i = sp - 1; i >= 0 && !parent; i--)
        if (stack[i].node && strcmp(stack[i].kernel, s->kernel) == 0)
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
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
    if (cJSON_IsObject(args) && add_args_metrics(r, n, args, 1) != 0)
        return -1;
    *out = n;
    return 0;
}

/* Sorts slices per thread by start, fills their nesting depth and attaches in-kernel
 * scopes to the tree. */
static int
nest(TReader *r)
{
    CliProfile *p = r->p;
    int rc = -1, n = p->nspans, sp = 0, cap = 64;
    int *idx = cli_xmalloc(sizeof(int) * (size_t)(n ? n : 1));
    Open *stack = cli_xmalloc(sizeof(Open) * (size_t)cap);
    for (int i = 0; i < n; i++)
        idx[i] = i;
    cmp_spans = p->spans;
    qsort(idx, (size_t)n, sizeof *idx, cmp_span_idx);
    if (r->nlaunches > 1)
        qsort(r->launches, (size_t)r->nlaunches, sizeof *r->launches, cmp_launch);
    for (int k = 0; k < n; k++) {
        CliSpan *s = &p->spans[idx[k]];
        if (k > 0 && p->spans[idx[k - 1]].thread != s->thread)
            sp = 0;
        while (sp > 0 && stack[sp - 1].end <= s->ts + 1e-6)
            sp--;
        s->depth = sp;
        CliNode *node = NULL;
        if (s->cat == CLI_SPAN_SCOPE && scope_event(r, s, r->ev[idx[k]], stack, sp, &node) != 0)
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
    /* keep the timeline in (thread, start) order */
    CliSpan *sorted = cli_xmalloc(sizeof(CliSpan) * (size_t)(n ? n : 1));
    for (int k = 0; k < n; k++)
        sorted[k] = p->spans[idx[k]];
    free(p->spans);
    p->spans = sorted;
    p->capspans = n;
    rc = 0;
out:
    cmp_spans = NULL;
    free(idx);
    free(stack);
    return rc;
}

/* ---- top level ------------------------------------------------------------------------------- */

static void
other_data(TReader *r, const cJSON *od)
{
    CliProfile *p = r->p;
    const char *s;
    double v;
    if ((s = str_field(od, "counter_source")))
        p->counter_source = cli_arena_strdup(r->a, s);
    if ((s = str_field(od, "clock_source")))
        p->clock_source = cli_arena_strdup(r->a, s);
    if ((s = str_field(od, "cpu_model")))
        p->cpu_model = cli_arena_strdup(r->a, s);
    if ((s = str_field(od, "tool")))
        p->tool = cli_arena_strdup(r->a, s);
    if (num_field(od, "num_cores", &v) == 0 && v > 0 && v < 1e7)
        p->num_cores = (int)v;
    if (num_field(od, "dropped_events", &v) == 0 && v > 0 && v < 9e18)
        p->dropped_events = (long)v;
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

int
cli_read_trace(CliProfile *p, const cJSON *top, CliErr *e)
{
    TReader r = {.p = p, .e = e, .a = &p->arena};
    const cJSON *events = top;
    int rc = -1;
    if (cJSON_IsObject(top)) {
        events = cJSON_GetObjectItemCaseSensitive(top, "traceEvents");
        if (!cJSON_IsArray(events)) {
            cli_err_set(e, "no \"traceEvents\" list (neither a .hatchet tree nor a Chrome trace)");
            return -1;
        }
        const cJSON *od = cJSON_GetObjectItemCaseSensitive(top, "otherData");
        if (cJSON_IsObject(od))
            other_data(&r, od);
        double base;
        if (num_field(top, "baseTimeNanoseconds", &base) == 0) {
            p->base_ns = base;
            p->has_base = 1;
        }
    }
    r.id_count = cli_profile_metric_id(p, "count");
    r.id_time = cli_profile_metric_id(p, "time (ns)");
    const cJSON *ev;
    int i = 0;
    cJSON_ArrayForEach(ev, events) {
        if (read_event(&r, ev, i++) != 0)
            goto out;
    }
    if (nest(&r) != 0)
        goto out;
    share_process_names(p);
    if (r.nlaunches > 0 || p->nspans > 0) {
        hint(&r, "count");
        hint(&r, "time (ns)");
    }
    if (!p->device_type && r.nlaunches > 0)
        p->device_type = "CPU";
    rc = 0;
out:
    free(r.ev);
    free(r.launches);
    free(r.tkeys);
    free(r.tvals);
    return rc;
}
