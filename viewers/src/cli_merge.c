/*
 * cli_merge.c — `proton-cli merge A B ... -o OUT`: several processes' or ranks' output
 * in one file.
 *
 * OUT.json: Chrome traces become one trace with a process track per input (pids kept
 * when they differ across inputs, else renumbered 1, 2, ...; each process is named after
 * its input file), every `ts` shifted so all inputs share the clock of the earliest
 * baseTimeNanoseconds (read from the file text as an exact 64-bit integer: a double
 * would lose ~256 ns at today's epoch). OUT.hatchet: trees (or traces, aggregated
 * first) become one tree whose ROOT has one child per input, named after the file.
 * The .hatchet layout is the upstream one (4-space indent, sorted keys, framing newlines).
 * Traces are streamed (cli_stream.c): each input is read once to check it and collect
 * its pids, base time, otherData and ts range, and once more to copy its events to the
 * output with pids and ts rewritten, so memory does not grow with the inputs. The
 * merged otherData keeps every input's own and reconciles their clock and counter
 * sources, CPU model, events and dropped counts. cli_merge_write() does the work on
 * files or texts (the fuzz harness calls it directly); cli_merge_main() only names the
 * inputs and writes the result atomically.
 */
#include "cli.h"

#include <float.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char merge_usage[] =
    "usage: proton-cli merge [options] FILE FILE... -o OUT.json|OUT.hatchet\n"
    "\n"
    "OUT.json: combines Chrome traces of several processes or ranks into one file that\n"
    "Perfetto and chrome://tracing load: one process track per input, clocks aligned\n"
    "through baseTimeNanoseconds.\n"
    "OUT.hatchet: combines call-path trees (.hatchet, or traces aggregated into trees)\n"
    "into one tree with one child of ROOT per input, readable by proton-viewer.\n"
    "\n"
    "  -o, --output FILE   where to write (required; '-' for stdout, then --as is needed)\n"
    "      --as KIND       json or hatchet, when OUT's name does not say\n"
    "  -h, --help          this help\n"
    "\n"
    "Exit codes: 0 ok, 1 usage error, 2 unreadable or malformed input.\n";

/* ---- hatchet printing ---------------------------------------------------------------------- */

static void
print_string(CliBuf *b, const char *s)
{
    cli_buf_putc(b, '"');
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        switch (*c) {
        case '"': cli_buf_puts(b, "\\\""); break;
        case '\\': cli_buf_puts(b, "\\\\"); break;
        case '\n': cli_buf_puts(b, "\\n"); break;
        case '\r': cli_buf_puts(b, "\\r"); break;
        case '\t': cli_buf_puts(b, "\\t"); break;
        case '\b': cli_buf_puts(b, "\\b"); break;
        case '\f': cli_buf_puts(b, "\\f"); break;
        default:
            if (*c < 0x20)
                cli_buf_printf(b, "\\u%04x", *c);
            else
                cli_buf_putc(b, (char)*c);
        }
    }
    cli_buf_putc(b, '"');
}

static int
cmp_key(const void *a, const void *b)
{
    return strcmp((*(cJSON *const *)a)->string, (*(cJSON *const *)b)->string);
}

static void
indent(CliBuf *b, int level)
{
    cli_buf_putc(b, '\n');
    for (int i = 0; i < level * 4; i++)
        cli_buf_putc(b, ' ');
}

static int
all_scalars(const cJSON *j)
{
    for (const cJSON *c = j->child; c; c = c->next)
        if (cJSON_IsArray(c) || cJSON_IsObject(c))
            return 0;
    return 1;
}

/* A value that is not an array or object (numbers exact, through cli_fmt_double);
 * 0 when j is an array or object. */
static int
print_scalar(CliBuf *b, const cJSON *j)
{
    char num[32];
    if (cJSON_IsRaw(j)) {
        cli_buf_puts(b, j->valuestring);
    } else if (cJSON_IsNumber(j)) {
        cli_fmt_double(num, j->valuedouble);
        cli_buf_puts(b, num);
    } else if (cJSON_IsString(j)) {
        print_string(b, j->valuestring);
    } else if (cJSON_IsBool(j)) {
        cli_buf_puts(b, cJSON_IsTrue(j) ? "true" : "false");
    } else if (cJSON_IsArray(j) || cJSON_IsObject(j)) {
        return 0;
    } else {
        cli_buf_puts(b, "null");
    }
    return 1;
}

/* Recursion depth is bounded by cJSON's nesting limit. 'report' mode keeps keys in
 * their order and prints arrays of scalars on one line. */
static void
print_value(CliBuf *b, const cJSON *j, int level, int report)
{
    if (!print_scalar(b, j)) {
        int n = cJSON_GetArraySize(j), k = 0, obj = cJSON_IsObject(j);
        if (n == 0) {
            cli_buf_puts(b, obj ? "{}" : "[]");
            return;
        }
        int flat = report && !obj && all_scalars(j);
        cJSON **items = cli_xmalloc(sizeof(cJSON *) * (size_t)n);
        for (cJSON *c = j->child; c; c = c->next)
            items[k++] = c;
        if (obj && !report)
            qsort(items, (size_t)n, sizeof *items, cmp_key);
        cli_buf_putc(b, obj ? '{' : '[');
        for (int i = 0; i < n; i++) {
            if (!flat)
                indent(b, level + 1);
            if (obj) {
                print_string(b, items[i]->string);
                cli_buf_puts(b, ": ");
            }
            print_value(b, items[i], level + 1, report);
            if (i + 1 < n)
                cli_buf_puts(b, flat ? ", " : ",");
        }
        if (!flat)
            indent(b, level);
        cli_buf_putc(b, obj ? '}' : ']');
        free(items);
    }
}

void
cli_hatchet_print(CliBuf *b, const cJSON *j)
{
    cli_buf_putc(b, '\n');
    print_value(b, j, 0, 0);
    cli_buf_putc(b, '\n');
}

void
cli_json_print(CliBuf *b, const cJSON *j)
{
    print_value(b, j, 0, 1);
    cli_buf_putc(b, '\n');
}

/* ---- profile -> hatchet JSON (for traces merged into a tree) -------------------------------- */

static cJSON *
node_json(const CliProfile *p, const CliNode *n)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *kids = cJSON_AddArrayToObject(o, "children");
    cJSON *frame = cJSON_AddObjectToObject(o, "frame");
    cJSON_AddStringToObject(frame, "name", n->name);
    cJSON_AddStringToObject(frame, "type", "function");
    cJSON *m = cJSON_AddObjectToObject(o, "metrics");
    for (const CliNodeVal *v = n->vals; v; v = v->next) {
        const char *name = p->metrics[v->metric].name;
        if (v->v.kind == CLI_V_NUM)
            cJSON_AddNumberToObject(m, name, v->v.num);
        else if (v->v.kind == CLI_V_STR)
            cJSON_AddStringToObject(m, name, v->v.str);
        else if (v->v.kind == CLI_V_VEC)
            cJSON_AddItemToObject(m, name, cJSON_CreateDoubleArray(v->v.vec, v->v.nvec));
    }
    for (const CliNode *c = n->first; c; c = c->next)
        cJSON_AddItemToArray(kids, node_json(p, c)); /* depth <= CLI_MAX_DEPTH */
    return o;
}

static cJSON *
profile_hatchet(const CliProfile *p)
{
    cJSON *top = cJSON_CreateArray();
    cJSON_AddItemToArray(top, node_json(p, p->root));
    cJSON *dev = cJSON_CreateObject();
    if (p->device_type) {
        cJSON *d = cJSON_AddObjectToObject(cJSON_AddObjectToObject(dev, p->device_type), "0");
        if (p->cpu_model)
            cJSON_AddStringToObject(d, "model", p->cpu_model);
        if (p->num_cores) {
            cJSON_AddNumberToObject(d, "num_cores", p->num_cores);
            cJSON_AddNumberToObject(d, "num_sms", p->num_cores);
        }
        if (p->counter_source)
            cJSON_AddStringToObject(d, "counter_source", p->counter_source);
        if (p->clock_source)
            cJSON_AddStringToObject(d, "clock_source", p->clock_source);
    }
    cJSON_AddItemToArray(top, dev);
    return top;
}

/* ---- merging ---------------------------------------------------------------------------------- */

static const char *
base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

cJSON *
cli_merge_hatchets(cJSON **in, const char **names, int n)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *kids = cJSON_AddArrayToObject(root, "children");
    cJSON *frame = cJSON_AddObjectToObject(root, "frame");
    cJSON_AddStringToObject(frame, "name", "ROOT");
    cJSON_AddStringToObject(frame, "type", "function");
    cJSON *hints = cJSON_AddObjectToObject(root, "metrics");
    cJSON *dev = cJSON_CreateObject();
    for (int i = 0; i < n; i++) {
        cJSON *r0 = cJSON_GetArrayItem(in[i], 0);
        cJSON *d0 = cJSON_GetArrayItem(in[i], 1);
        cJSON *node = cJSON_CreateObject();
        cJSON *f = cJSON_AddObjectToObject(node, "frame");
        char label[512];
        int dup = 0;
        for (int k = 0; k < i; k++)
            dup += strcmp(base_name(names[k]), base_name(names[i])) == 0;
        if (dup)
            snprintf(label, sizeof label, "%s#%d", base_name(names[i]), dup + 1);
        else
            snprintf(label, sizeof label, "%s", base_name(names[i]));
        cJSON_AddStringToObject(f, "name", label);
        cJSON_AddStringToObject(f, "type", "function");
        cJSON_AddObjectToObject(node, "metrics");
        cJSON *ch = cJSON_GetObjectItemCaseSensitive(r0, "children");
        cJSON_AddItemToObject(node, "children",
                              cJSON_IsArray(ch) ? cJSON_Duplicate(ch, 1) : cJSON_CreateArray());
        cJSON_AddItemToArray(kids, node);
        /* root hints: the union, summing any non-zero root values */
        cJSON *m = cJSON_GetObjectItemCaseSensitive(r0, "metrics"), *x;
        cJSON_ArrayForEach(x, m) {
            if (!cJSON_IsNumber(x))
                continue;
            cJSON *h = cJSON_GetObjectItemCaseSensitive(hints, x->string);
            double sum = h ? h->valuedouble + x->valuedouble : 0;
            if (h) /* JSON has no infinity: a sum that overflows stays at the largest double */
                cJSON_SetNumberValue(h, isfinite(sum) ? sum : copysign(DBL_MAX, sum));
            else
                cJSON_AddNumberToObject(hints, x->string, x->valuedouble);
        }
        /* device info: add device types and ids not seen yet */
        cJSON *t, *devs = cJSON_IsObject(d0) ? d0 : NULL;
        cJSON_ArrayForEach(t, devs) {
            if (!cJSON_IsObject(t))
                continue;
            cJSON *dt = cJSON_GetObjectItemCaseSensitive(dev, t->string);
            if (!dt)
                dt = cJSON_AddObjectToObject(dev, t->string);
            cJSON *id;
            cJSON_ArrayForEach(id, t) {
                if (!cJSON_GetObjectItemCaseSensitive(dt, id->string))
                    cJSON_AddItemToObject(dt, id->string, cJSON_Duplicate(id, 1));
            }
        }
    }
    cJSON *top = cJSON_CreateArray();
    cJSON_AddItemToArray(top, root);
    cJSON_AddItemToArray(top, dev);
    return top;
}

/* The exact integer of a baseTimeNanoseconds value from its text, when it agrees with
 * the parsed (double) value, which the reader has checked to lie in [0, 2^64). */
static uint64_t
exact_base(const CliSpanText *t, double approx)
{
    uint64_t v = 0;
    size_t i = 0;
    for (; i < t->n && t->s[i] >= '0' && t->s[i] <= '9' && v <= (UINT64_MAX - 9) / 10; i++)
        v = v * 10 + (uint64_t)(t->s[i] - '0');
    if (i && i == t->n && fabs((double)v - approx) <= approx * 1e-12 + 1)
        return v;
    return (uint64_t)approx;
}

typedef struct TraceIn {
    const CliMergeIn *in;
    const char *name;
    uint64_t base;
    int has_base;
    char **pids;   /* distinct pid labels */
    int npids;
    cJSON *other;  /* a copy of the input's otherData, or NULL */
    double ts_lo, ts_hi; /* range of the events' ts */
    int has_ts;
} TraceIn;

/* The pid of ev as text (the reader has checked it: a string or an integer). */
static char *
pid_label(const cJSON *ev)
{
    char buf[64];
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(ev, "pid");
    if (cJSON_IsString(p))
        return cli_xstrdup(p->valuestring);
    cli_fmt_double(buf, cJSON_IsNumber(p) ? p->valuedouble : 0);
    return cli_xstrdup(buf);
}

/* A label that can stay the output's pid: a decimal integer in 0..2^32-1, no leading 0. */
static int
pid_number(const char *s, double *out)
{
    double v = 0;
    if (!*s || (s[0] == '0' && s[1]))
        return 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || (v = v * 10 + (*s - '0')) > 4294967295.0)
            return 0;
    }
    *out = v;
    return 1;
}

static int
pid_index(TraceIn *t, const char *label, int add)
{
    for (int i = 0; i < t->npids; i++)
        if (strcmp(t->pids[i], label) == 0)
            return i;
    if (!add)
        return -1;
    t->pids = cli_xrealloc(t->pids, sizeof(char *) * (size_t)(t->npids + 1));
    t->pids[t->npids] = cli_xstrdup(label);
    return t->npids++;
}

/* Reads input 'in' from memory or from its file. 0 or -1 with e set. */
static int
src_open(CliSrc *s, const CliMergeIn *in, CliErr *e)
{
    if (in->text) {
        cli_src_init_mem(s, in->text, in->len);
        return 0;
    }
    return cli_src_open(s, in->path, e);
}

/* ---- first pass: check each input, collect its pids, base time, otherData, ts range ---- */

static int
tap_field(void *u, const char *key, const cJSON *v, const CliSpanText *text, CliErr *e)
{
    TraceIn *t = u;
    (void)e;
    if (strcmp(key, "otherData") == 0 && !t->other && cJSON_IsObject(v))
        t->other = cJSON_Duplicate(v, 1);
    if (strcmp(key, "baseTimeNanoseconds") == 0 && !t->has_base && cJSON_IsNumber(v)) {
        t->base = exact_base(text, v->valuedouble);
        t->has_base = 1;
    }
    return 0;
}

static int
tap_event(void *u, const cJSON *ev, int idx, CliErr *e)
{
    TraceIn *t = u;
    char *label = pid_label(ev);
    const cJSON *ts = cJSON_GetObjectItemCaseSensitive(ev, "ts");
    (void)idx, (void)e;
    pid_index(t, label, 1);
    free(label);
    if (cJSON_IsNumber(ts)) {
        if (!t->has_ts || ts->valuedouble < t->ts_lo)
            t->ts_lo = ts->valuedouble;
        if (!t->has_ts || ts->valuedouble > t->ts_hi)
            t->ts_hi = ts->valuedouble;
        t->has_ts = 1;
    }
    return 0;
}

static const CliTraceSink tap = {tap_field, tap_event};

/* Reads a trace input through once: the reader checks every field (as `report` does). */
static int
trace_in_init(TraceIn *t, const CliMergeIn *in, CliErr *e)
{
    CliSrc s;
    t->in = in;
    t->name = base_name(in->path);
    if (src_open(&s, in, e) != 0)
        return -1;
    CliProfile *p = cli_profile_load_src(&s, in->path, 0, &tap, t, e);
    cli_src_close(&s);
    if (!p)
        return -1;
    int kind = p->kind;
    cli_profile_destroy(p);
    if (kind != CLI_KIND_TRACE) {
        cli_err_set(e, "%s: is a .hatchet tree; merging into a .json needs Chrome traces",
                    in->path);
        return -1;
    }
    return 0;
}

/* ---- otherData: every input's, and what they say together ---------------------------------- */

/* The value all inputs give for string field 'key' ("mixed (a, b)" when they differ),
 * or NULL when none has it. Caller frees. */
static char *
common_string(TraceIn *in, int n, const char *key)
{
    CliBuf b = {0};
    const char *first = NULL;
    int mixed = 0;
    for (int i = 0; i < n; i++) {
        const cJSON *x = cJSON_GetObjectItemCaseSensitive(in[i].other, key);
        if (!cJSON_IsString(x))
            continue;
        if (!first)
            first = x->valuestring;
        else if (strcmp(first, x->valuestring) != 0)
            mixed = 1;
    }
    if (!first)
        return NULL;
    if (!mixed)
        return cli_xstrdup(first);
    cli_buf_puts(&b, "mixed (");
    for (int i = 0, k = 0; i < n; i++) {
        const cJSON *x = cJSON_GetObjectItemCaseSensitive(in[i].other, key);
        int seen = 0;
        if (!cJSON_IsString(x))
            continue;
        for (int j = 0; j < i && !seen; j++) {
            const cJSON *y = cJSON_GetObjectItemCaseSensitive(in[j].other, key);
            seen = cJSON_IsString(y) && strcmp(y->valuestring, x->valuestring) == 0;
        }
        if (!seen)
            cli_buf_printf(&b, "%s%s", k++ ? ", " : "", x->valuestring);
    }
    cli_buf_putc(&b, ')');
    return b.s;
}

/* otherData of the merged trace: the reconciled clock and counter sources, CPU model,
 * counter events (union), dropped events (sum) and cores (max); each input's own
 * otherData stays in merged_from[i].otherData. */
static cJSON *
merged_other_data(TraceIn *in, int n)
{
    static const char *const strs[] = {"clock_source", "counter_source", "cpu_model"};
    cJSON *od = cJSON_CreateObject(), *events = NULL;
    double dropped = 0, cores = 0;
    int any_dropped = 0, any_cores = 0;
    cJSON_AddStringToObject(od, "tool", "tritium-proton");
    cJSON_AddStringToObject(od, "version", CLI_VERSION);
    for (size_t k = 0; k < sizeof strs / sizeof *strs; k++) {
        char *v = common_string(in, n, strs[k]);
        if (v)
            cJSON_AddStringToObject(od, strs[k], v);
        free(v);
    }
    for (int i = 0; i < n; i++) {
        const cJSON *ev = cJSON_GetObjectItemCaseSensitive(in[i].other, "events"), *x;
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(in[i].other, "dropped_events");
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(in[i].other, "num_cores");
        if (cJSON_IsNumber(d)) {
            dropped += d->valuedouble;
            any_dropped = 1;
        }
        if (cJSON_IsNumber(c) && (!any_cores || c->valuedouble > cores)) {
            cores = c->valuedouble;
            any_cores = 1;
        }
        const cJSON *list = cJSON_IsArray(ev) ? ev : NULL;
        cJSON_ArrayForEach(x, list) {
            int seen = 0;
            const cJSON *y;
            if (!cJSON_IsString(x))
                continue;
            if (!events)
                events = cJSON_AddArrayToObject(od, "events");
            cJSON_ArrayForEach(y, events)
                seen |= strcmp(y->valuestring, x->valuestring) == 0;
            if (!seen)
                cJSON_AddItemToArray(events, cJSON_CreateString(x->valuestring));
        }
    }
    if (any_dropped)
        cJSON_AddNumberToObject(od, "dropped_events", dropped);
    if (any_cores)
        cJSON_AddNumberToObject(od, "num_cores", cores);
    return od;
}

/* ---- second pass: the events, rewritten --------------------------------------------------- */

typedef struct Writer {
    CliWriteFn w;
    void *user;
    TraceIn *t;
    const double *map;   /* output pid of t->pids[k] */
    int *named;          /* t->pids[k] got a process_name */
    double shift_us;
    int order;           /* the input's place: process_sort_index */
    int first;           /* no event written yet */
    CliBuf b;            /* the event being written */
} Writer;

/* j as compact JSON (keys in their order, no spaces), numbers exact (cli_fmt_double).
 * Recursion depth is bounded by cJSON's nesting limit. */
static void
put_compact(CliBuf *b, const cJSON *j)
{
    if (!print_scalar(b, j)) {
        int obj = cJSON_IsObject(j);
        cli_buf_putc(b, obj ? '{' : '[');
        for (const cJSON *c = j->child; c; c = c->next) {
            if (c != j->child)
                cli_buf_putc(b, ',');
            if (obj) {
                print_string(b, c->string);
                cli_buf_putc(b, ':');
            }
            put_compact(b, c);
        }
        cli_buf_putc(b, obj ? '}' : ']');
    }
}

static void
put_event(Writer *wr)
{
    if (!wr->first)
        wr->w(",", 1, wr->user);
    wr->first = 0;
    wr->w(wr->b.s, wr->b.n, wr->user);
}

static void
put_json(Writer *wr, const cJSON *j)
{
    wr->b.n = 0;
    put_compact(&wr->b, j);
    put_event(wr);
}

static void
put_key_number(CliBuf *b, const char *key, double v)
{
    char num[32];
    print_string(b, key);
    cli_buf_putc(b, ':');
    cli_fmt_double(num, v);
    cli_buf_puts(b, num);
}

static int
skip_field(void *u, const char *key, const cJSON *v, const CliSpanText *text, CliErr *e)
{
    (void)u, (void)key, (void)v, (void)text, (void)e;
    return 0;
}

/* One event with its pid remapped and ts shifted (the first "pid" and "ts" keys: those
 * the readers use; a missing pid is added), processes named after the input; written
 * straight from the parsed event, without a copy. */
static int
write_event(void *u, const cJSON *ev, int idx, CliErr *e)
{
    Writer *wr = u;
    CliBuf *b = &wr->b;
    char *label = pid_label(ev);
    int k = pid_index(wr->t, label, 0);
    (void)idx, (void)e;
    free(label);
    const cJSON *ph = cJSON_GetObjectItemCaseSensitive(ev, "ph");
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(ev, "name");
    const cJSON *pid = cJSON_GetObjectItemCaseSensitive(ev, "pid");
    const cJSON *ts = cJSON_GetObjectItemCaseSensitive(ev, "ts");
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
    int pname = cJSON_IsString(ph) && strcmp(ph->valuestring, "M") == 0 && cJSON_IsString(nm) &&
                strcmp(nm->valuestring, "process_name") == 0 && cJSON_IsObject(args);
    b->n = 0;
    cli_buf_putc(b, '{');
    for (const cJSON *c = ev->child; c; c = c->next) {
        if (c != ev->child)
            cli_buf_putc(b, ',');
        if (c == pid) {
            put_key_number(b, "pid", wr->map[k]);
        } else if (c == ts && cJSON_IsNumber(ts)) {
            put_key_number(b, "ts", ts->valuedouble + wr->shift_us);
        } else if (c == args && pname) {
            const cJSON *old = cJSON_GetObjectItemCaseSensitive(args, "name");
            char name[1024];
            snprintf(name, sizeof name, "%s: %s", wr->t->name, cJSON_IsString(old) ? old->valuestring : "process");
            print_string(b, "args");
            cli_buf_puts(b, ":{");
            for (const cJSON *a = args->child; a; a = a->next) {
                if (a != args->child)
                    cli_buf_putc(b, ',');
                print_string(b, a->string);
                cli_buf_putc(b, ':');
                if (a == old)
                    print_string(b, name);
                else
                    put_compact(b, a);
            }
            if (!old) {
                if (args->child)
                    cli_buf_putc(b, ',');
                print_string(b, "name");
                cli_buf_putc(b, ':');
                print_string(b, name);
            }
            cli_buf_putc(b, '}');
            wr->named[k] = 1;
        } else {
            print_string(b, c->string);
            cli_buf_putc(b, ':');
            put_compact(b, c);
        }
    }
    if (!pid) {
        if (ev->child)
            cli_buf_putc(b, ',');
        put_key_number(b, "pid", wr->map[k]);
    }
    cli_buf_putc(b, '}');
    put_event(wr);
    return 0;
}

static const CliTraceSink writer_sink = {skip_field, write_event};

typedef struct Find {
    double shift;
    int idx;
} Find;

static int
find_event(void *u, const cJSON *ev, int idx, CliErr *e)
{
    Find *f = u;
    const cJSON *ts = cJSON_GetObjectItemCaseSensitive(ev, "ts");
    (void)e;
    if (f->idx < 0 && cJSON_IsNumber(ts) && fabs(ts->valuedouble + f->shift) > CLI_TRACE_MAX_US)
        f->idx = idx;
    return 0;
}

static const CliTraceSink find_sink = {skip_field, find_event};

/* The index of the first event of t whose ts leaves the accepted range once shifted
 * (a third read of the input, only when its ts range says there is one). */
static int
first_out_of_range(TraceIn *t, double shift_us, CliErr *e)
{
    CliSrc s;
    Find f = {shift_us, -1};
    int has;
    if (src_open(&s, t->in, e) != 0)
        return -1;
    int rc = cli_stream_trace(&s, &find_sink, &f, &has, e);
    cli_src_close(&s);
    return rc == 0 ? f.idx : -1;
}

/* Appends input t's events (second read of the input) and its process metadata. */
static int
append_trace(Writer *wr, CliErr *e)
{
    TraceIn *t = wr->t;
    CliSrc s;
    int has, rc;
    if (src_open(&s, t->in, e) != 0)
        return -1;
    rc = cli_stream_trace(&s, &writer_sink, wr, &has, e);
    cli_src_close(&s);
    if (rc != 0)
        return -1;
    for (int k = 0; k < t->npids; k++) {
        cJSON *m = cJSON_CreateObject();
        cJSON_AddStringToObject(m, "ph", "M");
        cJSON_AddStringToObject(m, "name", "process_sort_index");
        cJSON_AddNumberToObject(m, "pid", wr->map[k]);
        cJSON_AddNumberToObject(cJSON_AddObjectToObject(m, "args"), "sort_index", wr->order);
        put_json(wr, m);
        cJSON_Delete(m);
        if (wr->named[k])
            continue;
        m = cJSON_CreateObject();
        cJSON_AddStringToObject(m, "ph", "M");
        cJSON_AddStringToObject(m, "name", "process_name");
        cJSON_AddNumberToObject(m, "pid", wr->map[k]);
        char name[1024];
        snprintf(name, sizeof name, "%s: pid %s", t->name, t->pids[k]);
        cJSON_AddStringToObject(cJSON_AddObjectToObject(m, "args"), "name", name);
        put_json(wr, m);
        cJSON_Delete(m);
    }
    return 0;
}
/* Pids stay when every pid of every input is a number and no two inputs share one;
 * otherwise all are renumbered 1, 2, ... so that no two processes can meet. */
static int
renumber_pids(TraceIn *in, int n)
{
    double v;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < in[i].npids; k++) {
            if (!pid_number(in[i].pids[k], &v))
                return 1;
            for (int j = i + 1; j < n; j++)
                if (pid_index(&in[j], in[i].pids[k], 0) >= 0)
                    return 1;
        }
    return 0;
}

/* The merged trace of checked inputs through w: a header (base time, otherData), then
 * every input's events read again. 0, or -1 with e set when a shifted ts is out of
 * range (before anything is written) or an input cannot be read again. */
static int
merge_traces(TraceIn *in, int n, CliWriteFn w, void *user, CliErr *e)
{
    uint64_t base = 0;
    int any_base = 0, renumber = renumber_pids(in, n), next = 1, rc = -1;
    double **maps = cli_xcalloc((size_t)n, sizeof *maps), *shift = cli_xcalloc((size_t)n, sizeof *shift);
    for (int i = 0; i < n; i++)
        if (in[i].has_base && (!any_base || in[i].base < base)) {
            base = in[i].base;
            any_base = 1;
        }
    for (int i = 0; i < n; i++) {
        shift[i] = in[i].has_base ? (double)(in[i].base - base) / 1000.0 : 0;
        if (in[i].has_ts && (fabs(in[i].ts_lo + shift[i]) > CLI_TRACE_MAX_US ||
                             fabs(in[i].ts_hi + shift[i]) > CLI_TRACE_MAX_US)) {
            int idx = first_out_of_range(&in[i], shift[i], e);
            if (idx >= 0)
                cli_err_set(e, "%s: traceEvents[%d].ts is out of range once shifted by %.3f us "
                            "onto the common clock", in[i].in->path, idx, shift[i]);
            goto out;
        }
        maps[i] = cli_xmalloc(sizeof(double) * (size_t)(in[i].npids ? in[i].npids : 1));
        for (int k = 0; k < in[i].npids; k++)
            if (renumber || !pid_number(in[i].pids[k], &maps[i][k]))
                maps[i][k] = next++;
    }
    cJSON *top = cJSON_CreateObject();
    cJSON_AddStringToObject(top, "displayTimeUnit", "ns");
    if (any_base) {
        char num[32];
        snprintf(num, sizeof num, "%" PRIu64, base);
        cJSON_AddItemToObject(top, "baseTimeNanoseconds", cJSON_CreateRaw(num));
    }
    cJSON *od = merged_other_data(in, n);
    cJSON_AddItemToObject(top, "otherData", od);
    cJSON *from = cJSON_AddArrayToObject(od, "merged_from");
    for (int i = 0; i < n; i++) {
        cJSON *f = cJSON_CreateObject();
        cJSON_AddStringToObject(f, "file", in[i].name);
        cJSON_AddNumberToObject(f, "shift_us", shift[i]);
        cJSON *pids = cJSON_AddArrayToObject(f, "pids");
        for (int k = 0; k < in[i].npids; k++)
            cJSON_AddItemToArray(pids, cJSON_CreateNumber(maps[i][k]));
        cJSON_AddItemToObject(f, "otherData", in[i].other ? cJSON_Duplicate(in[i].other, 1)
                                                          : cJSON_CreateObject());
        cJSON_AddItemToArray(from, f);
    }
    cJSON_AddArrayToObject(top, "traceEvents");
    char *head = cJSON_PrintUnformatted(top);
    cJSON_Delete(top);
    w(head, strlen(head) - 2, user); /* without the closing "]}" */
    free(head);
    Writer wr = {.w = w, .user = user, .first = 1};
    for (int i = 0; i < n; i++) {
        wr.t = &in[i];
        wr.map = maps[i];
        wr.shift_us = shift[i];
        wr.order = i;
        wr.named = cli_xcalloc((size_t)(in[i].npids ? in[i].npids : 1), sizeof(int));
        int r = append_trace(&wr, e);
        free(wr.named);
        if (r != 0) {
            cli_buf_fini(&wr.b);
            goto out;
        }
    }
    w("]}\n", 3, user);
    cli_buf_fini(&wr.b);
    rc = 0;
out:
    for (int i = 0; i < n; i++)
        free(maps[i]);
    free(maps);
    free(shift);
    return rc;
}

/* A .hatchet input as is, or a trace aggregated into a tree. Caller deletes. */
static cJSON *
tree_of(const CliMergeIn *in, CliErr *e)
{
    CliSrc s;
    cJSON *j = NULL;
    if (src_open(&s, in, e) != 0)
        return NULL;
    CliProfile *p = cli_profile_load_src(&s, in->path, 0, NULL, NULL, e);
    cli_src_close(&s);
    if (!p)
        return NULL;
    if (p->kind == CLI_KIND_TRACE) {
        j = profile_hatchet(p);
    } else { /* the tree itself, to copy its nodes as they are */
        char *text = NULL;
        size_t len = in->len;
        CliErr pe;
        if (!in->text && cli_file_read(in->path, &text, &len, e) != 0)
            goto out;
        if (!(j = cli_json_parse(in->text ? in->text : text, len, &pe)))
            cli_err_set(e, "%s: %s", in->path, pe.msg);
        free(text);
    }
out:
    cli_profile_destroy(p);
    return j;
}

int
cli_merge_write(const CliMergeIn *in, int n, int as_hatchet, CliWriteFn w, void *user, CliErr *e)
{
    int i, rc = -1;
    if (as_hatchet) {
        cJSON **trees = cli_xcalloc((size_t)n, sizeof *trees);
        const char **names = cli_xcalloc((size_t)n, sizeof *names);
        for (i = 0; i < n; i++) {
            names[i] = in[i].path;
            if (!(trees[i] = tree_of(&in[i], e)))
                break;
        }
        if (i == n) {
            cJSON *out = cli_merge_hatchets(trees, names, n);
            CliBuf b = {0};
            cli_hatchet_print(&b, out);
            w(b.s, b.n, user);
            cli_buf_fini(&b);
            cJSON_Delete(out);
            rc = 0;
        }
        for (i = 0; i < n; i++)
            cJSON_Delete(trees[i]);
        free(trees);
        free(names);
        return rc;
    }
    TraceIn *t = cli_xcalloc((size_t)n, sizeof *t);
    for (i = 0; i < n; i++)
        if (trace_in_init(&t[i], &in[i], e) != 0)
            break;
    if (i == n)
        rc = merge_traces(t, n, w, user, e);
    for (i = 0; i < n; i++) {
        cJSON_Delete(t[i].other);
        for (int k = 0; k < t[i].npids; k++)
            free(t[i].pids[k]);
        free(t[i].pids);
    }
    free(t);
    return rc;
}

/* ---- main --------------------------------------------------------------------------------------- */

/* Options, then cli_merge_write() into OUT (atomically; stdin is read into memory
 * first, since traces are read twice). */
int
cli_merge_main(int argc, char **argv)
{
    static const struct option opts[] = {{"output", required_argument, 0, 'o'},
                                          {"as", required_argument, 0, 'a'},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    const char *outpath = NULL, *as = NULL;
    int c, rc = CLI_EXIT_USAGE, n = 0, opened = 0;
    CliErr e;
    CliOut o;
    CliMergeIn *in = NULL;
    char *stdin_text = NULL;
    size_t stdin_len = 0;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': outpath = optarg; break;
        case 'a': as = optarg; break;
        case 'h': fputs(merge_usage, stdout); return CLI_EXIT_OK;
        case ':': cli_error("merge", "option '%s' needs a value", argv[optind - 1]); return 1;
        default: cli_error("merge", "unknown option '%s' (see --help)", argv[optind - 1]); return 1;
        }
    }
    n = argc - optind;
    if (!outpath || n < 1) {
        cli_error("merge", "want input files and -o OUT.json or -o OUT.hatchet (see --help)");
        return CLI_EXIT_USAGE;
    }
    int hatchet = as ? strcmp(as, "hatchet") == 0 : cli_has_suffix(outpath, ".hatchet");
    int json = as ? strcmp(as, "json") == 0 : cli_has_suffix(outpath, ".json");
    if (!hatchet && !json) {
        cli_error("merge", "cannot tell the output kind of '%s': name it .json or .hatchet, "
                  "or pass --as json|hatchet", outpath);
        return CLI_EXIT_USAGE;
    }
    in = cli_xcalloc((size_t)n, sizeof *in);
    for (int i = 0; i < n; i++) {
        in[i].path = argv[optind + i];
        if (strcmp(in[i].path, "-") != 0)
            continue;
        if (!stdin_text && cli_file_read("-", &stdin_text, &stdin_len, &e) != 0)
            goto bad;
        in[i].text = stdin_text;
        in[i].len = stdin_len;
    }
    if (cli_out_open(&o, outpath, &e) != 0)
        goto bad;
    opened = 1;
    if (cli_merge_write(in, n, hatchet, cli_out_write, &o, &e) != 0)
        goto bad;
    opened = 0;
    if (cli_out_close(&o, 1, &e) != 0)
        goto bad;
    rc = CLI_EXIT_OK;
    goto out;
bad:
    if (opened) {
        CliErr ignored;
        cli_out_close(&o, 0, &ignored);
    }
    cli_error("merge", "%s", e.msg);
    rc = CLI_EXIT_INPUT;
out:
    free(stdin_text);
    free(in);
    return rc;
}
