/*
 * cli_load.c — turns a file into a CliProfile: reads it, parses the JSON with cJSON
 * (whose CJSON_NESTING_LIMIT of 1000 bounds the parser's recursion; deeper input fails to
 * parse), rejects numbers that overflow to infinity, and dispatches on the shape:
 * a top-level array whose first element has a "frame" is a .hatchet tree, an object
 * with "traceEvents" (or an array of events) is a Chrome trace.
 */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Depth-first check for non-finite numbers, with an explicit stack (no recursion): at
 * most one pending sibling per level, and cJSON stops at CJSON_NESTING_LIMIT levels. */
int
cli_json_check_numbers(const cJSON *j, const char *key, CliErr *e)
{
    const cJSON *stack[2 * CJSON_NESTING_LIMIT + 8];
    int sp = 0;
    stack[sp++] = j;
    while (sp > 0) {
        const cJSON *x = stack[--sp];
        if (cJSON_IsNumber(x) && !isfinite(x->valuedouble)) {
            const char *k = x == j ? key : x->string;
            cli_err_set(e, "number out of range%s%s", k ? " in key " : "", k ? k : "");
            return -1;
        }
        if (sp + 2 > (int)(sizeof stack / sizeof *stack)) {
            cli_err_set(e, "JSON nested too deeply");
            return -1;
        }
        if (x->next)
            stack[sp++] = x->next;
        if (x->child)
            stack[sp++] = x->child;
    }
    return 0;
}

/* cJSON reports where parsing stopped; turn that into a line:column. */
static void
parse_error(const char *data, size_t len, const char *at, int trailing, CliErr *e)
{
    if (!at || at < data || at > data + len) {
        cli_err_set(e, "not valid JSON");
        return;
    }
    int line = 1, col = 1;
    for (const char *c = data; c < at; c++) {
        if (*c == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    if (trailing)
        cli_err_set(e, "unexpected text after the JSON value (line %d, column %d)", line, col);
    else if (at + 1 >= data + len) /* cJSON reports the last byte when the text just ends */
        cli_err_set(e, "not valid JSON (truncated at line %d)", line);
    else
        cli_err_set(e, "not valid JSON (line %d, column %d)", line, col);
}

cJSON *
cli_json_parse(const char *data, size_t len, CliErr *e)
{
    size_t i = 0;
    while (i < len && (data[i] == ' ' || data[i] == '\n' || data[i] == '\r' || data[i] == '\t'))
        i++;
    if (i == len) {
        cli_err_set(e, "empty file");
        return NULL;
    }
    if (memchr(data, 0, len)) {
        cli_err_set(e, "not a JSON text file (contains NUL bytes)");
        return NULL;
    }
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithLengthOpts(data, len, &end, 0);
    if (!j) {
        /* cJSON stops without a position on deep nesting: say so */
        int depth = 0, maxd = 0;
        for (size_t k = 0; k < len && k < 100000; k++) {
            if (data[k] == '[' || data[k] == '{')
                maxd = ++depth > maxd ? depth : maxd;
            else if (data[k] == ']' || data[k] == '}')
                depth--;
        }
        if (maxd >= CJSON_NESTING_LIMIT)
            cli_err_set(e, "JSON nested deeper than %d levels", CJSON_NESTING_LIMIT);
        else
            parse_error(data, len, cJSON_GetErrorPtr(), 0, e);
        return NULL;
    }
    /* only whitespace may follow the value */
    const char *t = end ? end : data + len;
    while (t < data + len && (*t == ' ' || *t == '\n' || *t == '\r' || *t == '\t'))
        t++;
    if (t < data + len) {
        parse_error(data, len, t, 1, e);
        cJSON_Delete(j);
        return NULL;
    }
    if (cli_json_check_numbers(j, j->string, e) != 0) {
        cJSON_Delete(j);
        return NULL;
    }
    return j;
}

cJSON *
cli_json_load(const char *path, CliErr *e)
{
    char *data = NULL;
    size_t len = 0;
    if (cli_file_read(path, &data, &len, e) != 0)
        return NULL;
    CliErr pe;
    cJSON *j = cli_json_parse(data, len, &pe);
    if (!j)
        cli_err_set(e, "%s: %s", path, pe.msg);
    free(data);
    return j;
}

static int
looks_like_hatchet(const cJSON *j)
{
    if (!cJSON_IsArray(j))
        return 0;
    const cJSON *first = j->child;
    return first && cJSON_IsObject(first) &&
           (cJSON_GetObjectItemCaseSensitive(first, "frame") ||
            cJSON_GetObjectItemCaseSensitive(first, "children"));
}

/* "<path>: <msg>" into e, unless msg already starts with the path */
static void
with_path(CliErr *e, const char *path, const char *msg)
{
    size_t n = strlen(path);
    if (strncmp(msg, path, n) == 0 && strncmp(msg + n, ": ", 2) == 0)
        cli_err_set(e, "%s", msg);
    else
        cli_err_set(e, "%s: %s", path, msg);
}

static CliProfile *
from_json(const cJSON *j, const char *path, int flags, CliErr *e)
{
    CliProfile *p = NULL;
    CliErr re = {{0}};
    int rc;
    if (looks_like_hatchet(j)) {
        p = cli_profile_create(path, CLI_KIND_HATCHET);
        rc = cli_read_hatchet(p, j, &re);
    } else if (cJSON_IsObject(j) || cJSON_IsArray(j)) {
        p = cli_profile_create(path, CLI_KIND_TRACE);
        rc = cli_read_trace(p, j, flags, &re);
    } else {
        cli_err_set(e, "%s: expected a .hatchet array or a Chrome-trace object", path);
        return NULL;
    }
    if (rc == 0)
        rc = cli_profile_finish(p, &re);
    if (rc != 0) {
        with_path(e, path, re.msg); /* cli_profile_finish already names the path */
        cli_profile_destroy(p);
        return NULL;
    }
    return p;
}

CliProfile *
cli_profile_from_json(const cJSON *j, const char *path, CliErr *e)
{
    return from_json(j, path, CLI_LOAD_SPANS, e);
}

/* ---- streamed traces ------------------------------------------------------------------------ */

/* The reader, and whoever else wants each field and event after it (cli_merge.c). */
typedef struct Sinks {
    CliTraceReader *r;
    const CliTraceSink *tap;
    void *tap_user;
} Sinks;

static int
sink_field(void *u, const char *key, const cJSON *v, const CliSpanText *t, CliErr *e)
{
    Sinks *k = u;
    if (cli_trace_field(k->r, key, v) != 0)
        return -1;
    return k->tap ? k->tap->field(k->tap_user, key, v, t, e) : 0;
}

static int
sink_event(void *u, const cJSON *ev, int idx, CliErr *e)
{
    Sinks *k = u;
    if (cli_trace_event(k->r, ev, idx) != 0)
        return -1;
    return k->tap ? k->tap->event(k->tap_user, ev, idx, e) : 0;
}

static const CliTraceSink reader_sink = {sink_field, sink_event};

/* A Chrome trace read event by event from s. */
static CliProfile *
stream_profile(CliSrc *s, const char *path, int flags, const CliTraceSink *tap, void *tap_user,
               CliErr *e)
{
    CliErr re = {{0}};
    CliProfile *p = cli_profile_create(path, CLI_KIND_TRACE);
    Sinks k = {cli_trace_reader_create(p, flags, &re), tap, tap_user};
    CliTraceReader *r = k.r;
    int has_events = 0;
    int rc = cli_stream_trace(s, &reader_sink, &k, &has_events, &re);
    if (rc == 0 && !has_events) {
        cli_err_set(&re, "no \"traceEvents\" list (neither a .hatchet tree nor a Chrome trace)");
        rc = -1;
    }
    if (rc == 0)
        rc = cli_trace_finish(r);
    cli_trace_reader_destroy(r);
    if (rc == 0)
        rc = cli_profile_finish(p, &re);
    if (rc != 0) {
        with_path(e, path, re.msg);
        cli_profile_destroy(p);
        return NULL;
    }
    return p;
}

/* The whole input as one document: .hatchet trees and anything that is neither an
 * object nor an event list (for its error message). */
static CliProfile *
whole_profile(CliSrc *s, const char *path, int flags, CliErr *e)
{
    CliErr pe;
    if (cli_src_slurp(s, &pe) != 0) {
        with_path(e, path, pe.msg);
        return NULL;
    }
    cJSON *j = cli_json_parse(s->buf, s->n, &pe);
    if (!j) {
        cli_err_set(e, "%s: %s", path, pe.msg);
        return NULL;
    }
    CliProfile *p = from_json(j, path, flags, e);
    cJSON_Delete(j);
    return p;
}

/* Dispatches on the first value: an object is a trace (streamed); an array whose first
 * element has a "frame" or "children" is a .hatchet tree (read whole), any other array
 * an event list (streamed); anything else is read whole for cJSON's message. */
CliProfile *
cli_profile_load_src(CliSrc *s, const char *path, int flags, const CliTraceSink *tap,
                     void *tap_user, CliErr *e)
{
    CliErr pe;
    s->keep_all = 1; /* until the kind is known */
    int c = cli_src_peek(s, &pe);
    if (c == -2) {
        with_path(e, path, pe.msg);
        return NULL;
    }
    if (c == -1) {
        cli_err_set(e, "%s: empty file", path);
        return NULL;
    }
    if (c == '{') {
        s->keep_all = 0;
        return stream_profile(s, path, flags, tap, tap_user, e);
    }
    if (c != '[')
        return whole_profile(s, path, flags, e);
    size_t open = s->pos;
    s->pos++;
    int first = cli_src_peek(s, &pe);
    cJSON *j = NULL;
    int hatchet = 1; /* also when the first element does not parse: cJSON words the error */
    if (first == '{' && cli_src_value(s, 1, NULL, &j, NULL, &pe) == 0) {
        hatchet = cJSON_GetObjectItemCaseSensitive(j, "frame") ||
                  cJSON_GetObjectItemCaseSensitive(j, "children");
    } else if (first >= 0 && first != '{') {
        hatchet = 0; /* numbers, strings...: an event list that fails on its first event */
    }
    cli_src_release(s);
    s->pos = open;
    if (hatchet)
        return whole_profile(s, path, flags, e);
    s->keep_all = 0;
    return stream_profile(s, path, flags, tap, tap_user, e);
}

CliProfile *
cli_profile_load_mem(const char *data, size_t len, const char *path, CliErr *e)
{
    CliSrc s;
    if (memchr(data, 0, len)) {
        cli_err_set(e, "%s: not a JSON text file (contains NUL bytes)", path);
        return NULL;
    }
    cli_src_init_mem(&s, data, len);
    CliProfile *p = cli_profile_load_src(&s, path, CLI_LOAD_SPANS, NULL, NULL, e);
    cli_src_close(&s);
    return p;
}

CliProfile *
cli_profile_load_opts(const char *path, int flags, CliErr *e)
{
    CliSrc s;
    if (cli_src_open(&s, path, e) != 0)
        return NULL;
    CliProfile *p = cli_profile_load_src(&s, path, flags, NULL, NULL, e);
    cli_src_close(&s);
    return p;
}

CliProfile *
cli_profile_load(const char *path, CliErr *e)
{
    return cli_profile_load_opts(path, CLI_LOAD_SPANS, e);
}
