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
 * cli_merge_mem() does the work on file texts (the fuzz harness calls it directly);
 * cli_merge_main() only reads the files and writes the result.
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

/* Recursion depth is bounded by cJSON's nesting limit. 'report' mode keeps keys in
 * their order and prints arrays of scalars on one line. */
static void
print_value(CliBuf *b, const cJSON *j, int level, int report)
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
    } else if (cJSON_IsNull(j)) {
        cli_buf_puts(b, "null");
    } else if (cJSON_IsArray(j) || cJSON_IsObject(j)) {
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

/* The exact integer after "baseTimeNanoseconds" in the file text when it agrees with
 * the parsed (double) value, which the reader has checked to lie in [0, 2^64). */
static uint64_t
exact_base(const char *text, size_t len, double approx)
{
    static const char key[] = "\"baseTimeNanoseconds\"";
    const char *end = text + len, *s = text;
    while ((s = memmem(s, (size_t)(end - s), key, sizeof key - 1))) {
        const char *c = s + sizeof key - 1;
        s++;
        while (c < end && strchr(" \n\t\r", *c))
            c++;
        if (c == end || *c++ != ':')
            continue;
        while (c < end && strchr(" \n\t\r", *c))
            c++;
        uint64_t v = 0;
        int digits = 0;
        for (; c < end && *c >= '0' && *c <= '9' && v <= (UINT64_MAX - 9) / 10; c++, digits++)
            v = v * 10 + (uint64_t)(*c - '0');
        if (digits && (c == end || strchr(",} \n\r\t", *c)) &&
            fabs((double)v - approx) <= approx * 1e-12 + 1)
            return v;
    }
    return (uint64_t)approx;
}

typedef struct TraceIn {
    cJSON *j;
    const char *path, *name;
    uint64_t base;
    int has_base;
    char **pids;   /* distinct pid labels */
    int npids;
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

static cJSON *
events_of(cJSON *j)
{
    return cJSON_IsArray(j) ? j : cJSON_GetObjectItemCaseSensitive(j, "traceEvents");
}

/* Replaces o[key] with v, or adds it. Takes ownership of v. */
static void
set_item(cJSON *o, const char *key, cJSON *v)
{
    if (cJSON_GetObjectItemCaseSensitive(o, key))
        cJSON_ReplaceItemInObjectCaseSensitive(o, key, v);
    else
        cJSON_AddItemToObject(o, key, v);
}

/* Appends input t's events to out with pids remapped (map[k] for t->pids[k]) and ts
 * shifted; names each process after the input. 0, or -1 with e set when a shifted ts
 * leaves the range the reader accepts. */
static int
append_trace(cJSON *out, TraceIn *t, const double *map, double shift_us, int order, CliErr *e)
{
    cJSON *ev;
    int *named = cli_xcalloc((size_t)(t->npids ? t->npids : 1), sizeof(int)), i = 0, rc = -1;
    cJSON_ArrayForEach(ev, events_of(t->j)) {
        cJSON *copy = cJSON_Duplicate(ev, 1);
        char *label = pid_label(ev);
        int k = pid_index(t, label, 0);
        free(label);
        cJSON_AddItemToArray(out, copy);
        set_item(copy, "pid", cJSON_CreateNumber(map[k]));
        cJSON *ts = cJSON_GetObjectItemCaseSensitive(copy, "ts");
        if (cJSON_IsNumber(ts)) {
            double v = ts->valuedouble + shift_us;
            if (fabs(v) > CLI_TRACE_MAX_US) {
                cli_err_set(e, "%s: traceEvents[%d].ts is out of range once shifted by %.3f us "
                            "onto the common clock", t->path, i, shift_us);
                goto out;
            }
            cJSON_SetNumberValue(ts, v);
        }
        i++;
        const cJSON *ph = cJSON_GetObjectItemCaseSensitive(copy, "ph");
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(copy, "name");
        cJSON *args = cJSON_GetObjectItemCaseSensitive(copy, "args");
        if (cJSON_IsString(ph) && strcmp(ph->valuestring, "M") == 0 && cJSON_IsString(nm) &&
            strcmp(nm->valuestring, "process_name") == 0 && cJSON_IsObject(args)) {
            const cJSON *old = cJSON_GetObjectItemCaseSensitive(args, "name");
            char name[1024];
            snprintf(name, sizeof name, "%s: %s", t->name,
                     cJSON_IsString(old) ? old->valuestring : "process");
            set_item(args, "name", cJSON_CreateString(name));
            named[k] = 1;
        }
    }
    for (int k = 0; k < t->npids; k++) {
        cJSON *m = cJSON_CreateObject();
        cJSON_AddStringToObject(m, "ph", "M");
        cJSON_AddStringToObject(m, "name", "process_sort_index");
        cJSON_AddNumberToObject(m, "pid", map[k]);
        cJSON_AddNumberToObject(cJSON_AddObjectToObject(m, "args"), "sort_index", order);
        cJSON_AddItemToArray(out, m);
        if (named[k])
            continue;
        m = cJSON_CreateObject();
        cJSON_AddStringToObject(m, "ph", "M");
        cJSON_AddStringToObject(m, "name", "process_name");
        cJSON_AddNumberToObject(m, "pid", map[k]);
        char name[1024];
        snprintf(name, sizeof name, "%s: pid %s", t->name, t->pids[k]);
        cJSON_AddStringToObject(cJSON_AddObjectToObject(m, "args"), "name", name);
        cJSON_AddItemToArray(out, m);
    }
    rc = 0;
out:
    free(named);
    return rc;
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

/* One trace from validated inputs; NULL with e set when a shifted ts is out of range. */
static cJSON *
merge_traces(TraceIn *in, int n, CliErr *e)
{
    uint64_t base = 0;
    int any_base = 0, renumber = renumber_pids(in, n);
    for (int i = 0; i < n; i++)
        if (in[i].has_base && (!any_base || in[i].base < base)) {
            base = in[i].base;
            any_base = 1;
        }
    cJSON *top = cJSON_CreateObject();
    cJSON_AddStringToObject(top, "displayTimeUnit", "ns");
    if (any_base) {
        char num[32];
        snprintf(num, sizeof num, "%" PRIu64, base);
        cJSON_AddItemToObject(top, "baseTimeNanoseconds", cJSON_CreateRaw(num));
    }
    cJSON *od = cJSON_AddObjectToObject(top, "otherData");
    cJSON_AddStringToObject(od, "tool", "tritium-proton");
    cJSON_AddStringToObject(od, "version", CLI_VERSION);
    cJSON *from = cJSON_AddArrayToObject(od, "merged_from");
    cJSON *events = cJSON_AddArrayToObject(top, "traceEvents");
    int next = 1;
    for (int i = 0; i < n; i++) {
        double *map = cli_xmalloc(sizeof(double) * (size_t)(in[i].npids ? in[i].npids : 1));
        for (int k = 0; k < in[i].npids; k++)
            if (renumber || !pid_number(in[i].pids[k], &map[k]))
                map[k] = next++;
        double shift = in[i].has_base ? (double)(in[i].base - base) / 1000.0 : 0;
        cJSON *f = cJSON_CreateObject();
        cJSON_AddStringToObject(f, "file", in[i].name);
        cJSON_AddNumberToObject(f, "shift_us", shift);
        cJSON *pids = cJSON_AddArrayToObject(f, "pids");
        for (int k = 0; k < in[i].npids; k++)
            cJSON_AddItemToArray(pids, cJSON_CreateNumber(map[k]));
        cJSON_AddItemToArray(from, f);
        int rc = append_trace(events, &in[i], map, shift, i, e);
        free(map);
        if (rc != 0) {
            cJSON_Delete(top);
            return NULL;
        }
    }
    return top;
}

/* ---- inputs ------------------------------------------------------------------------------------ */

static cJSON *
parse_input(const CliMergeIn *in, CliErr *e)
{
    CliErr pe;
    cJSON *j = cli_json_parse(in->text, in->len, &pe);
    if (!j)
        cli_err_set(e, "%s: %s", in->path, pe.msg);
    return j;
}

/* Parses and checks a trace input, collecting its pids and exact base time. */
static int
trace_in_init(TraceIn *t, const CliMergeIn *in, CliErr *e)
{
    t->path = in->path;
    t->name = base_name(in->path);
    if (!(t->j = parse_input(in, e)))
        return -1;
    CliProfile *p = cli_profile_from_json(t->j, in->path, e);
    if (!p)
        return -1;
    int kind = p->kind;
    t->has_base = p->has_base;
    if (p->has_base)
        t->base = exact_base(in->text, in->len, p->base_ns);
    cli_profile_destroy(p);
    if (kind != CLI_KIND_TRACE) {
        cli_err_set(e, "%s: is a .hatchet tree; merging into a .json needs Chrome traces",
                    in->path);
        return -1;
    }
    cJSON *ev;
    cJSON_ArrayForEach(ev, events_of(t->j)) {
        char *label = pid_label(ev);
        pid_index(t, label, 1);
        free(label);
    }
    return 0;
}

/* A .hatchet input as is, or a trace aggregated into a tree. */
static cJSON *
tree_of(const CliMergeIn *in, CliErr *e)
{
    cJSON *j = parse_input(in, e);
    if (!j)
        return NULL;
    CliProfile *p = cli_profile_from_json(j, in->path, e);
    if (!p) {
        cJSON_Delete(j);
        return NULL;
    }
    if (p->kind == CLI_KIND_TRACE) {
        cJSON_Delete(j);
        j = profile_hatchet(p);
    }
    cli_profile_destroy(p);
    return j;
}

cJSON *
cli_merge_mem(const CliMergeIn *in, int n, int as_hatchet, CliErr *e)
{
    cJSON *out = NULL;
    int i;
    if (as_hatchet) {
        cJSON **trees = cli_xcalloc((size_t)n, sizeof *trees);
        const char **names = cli_xcalloc((size_t)n, sizeof *names);
        for (i = 0; i < n; i++) {
            names[i] = in[i].path;
            if (!(trees[i] = tree_of(&in[i], e)))
                break;
        }
        if (i == n)
            out = cli_merge_hatchets(trees, names, n);
        for (i = 0; i < n; i++)
            cJSON_Delete(trees[i]);
        free(trees);
        free(names);
        return out;
    }
    TraceIn *t = cli_xcalloc((size_t)n, sizeof *t);
    for (i = 0; i < n; i++)
        if (trace_in_init(&t[i], &in[i], e) != 0)
            break;
    if (i == n)
        out = merge_traces(t, n, e);
    for (i = 0; i < n; i++) {
        cJSON_Delete(t[i].j);
        for (int k = 0; k < t[i].npids; k++)
            free(t[i].pids[k]);
        free(t[i].pids);
    }
    free(t);
    return out;
}

/* ---- main --------------------------------------------------------------------------------------- */

/* Options, read every input, cli_merge_mem(), print and write atomically. */
int
cli_merge_main(int argc, char **argv)
{
    static const struct option opts[] = {{"output", required_argument, 0, 'o'},
                                          {"as", required_argument, 0, 'a'},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    const char *outpath = NULL, *as = NULL;
    int c, rc = CLI_EXIT_USAGE, n = 0;
    CliErr e;
    CliBuf buf = {0};
    cJSON *merged = NULL;
    CliMergeIn *in = NULL;
    char **texts = NULL;
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
    texts = cli_xcalloc((size_t)n, sizeof *texts);
    for (int i = 0; i < n; i++) {
        in[i].path = argv[optind + i];
        if (cli_file_read(in[i].path, &texts[i], &in[i].len, &e) != 0)
            goto bad;
        in[i].text = texts[i];
    }
    if (!(merged = cli_merge_mem(in, n, hatchet, &e)))
        goto bad;
    if (hatchet) {
        cli_hatchet_print(&buf, merged);
    } else {
        char *s = cJSON_PrintUnformatted(merged);
        cli_buf_puts(&buf, s);
        cli_buf_putc(&buf, '\n');
        free(s);
    }
    if (cli_file_write_atomic(outpath, buf.s, buf.n, &e) != 0)
        goto bad;
    rc = CLI_EXIT_OK;
    goto out;
bad:
    cli_error("merge", "%s", e.msg);
    rc = CLI_EXIT_INPUT;
out:
    for (int i = 0; texts && i < n; i++)
        free(texts[i]);
    free(texts);
    free(in);
    cJSON_Delete(merged);
    cli_buf_fini(&buf);
    return rc;
}
