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
static int
check_numbers(const cJSON *j, CliErr *e)
{
    const cJSON *stack[2 * CJSON_NESTING_LIMIT + 8];
    int sp = 0;
    stack[sp++] = j;
    while (sp > 0) {
        const cJSON *x = stack[--sp];
        if (cJSON_IsNumber(x) && !isfinite(x->valuedouble)) {
            cli_err_set(e, "number out of range%s%s", x->string ? " in key " : "",
                        x->string ? x->string : "");
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
    if (check_numbers(j, e) != 0) {
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

CliProfile *
cli_profile_from_json(const cJSON *j, const char *path, CliErr *e)
{
    CliProfile *p = NULL;
    CliErr re = {{0}};
    int rc;
    if (looks_like_hatchet(j)) {
        p = cli_profile_create(path, CLI_KIND_HATCHET);
        rc = cli_read_hatchet(p, j, &re);
    } else if (cJSON_IsObject(j) || cJSON_IsArray(j)) {
        p = cli_profile_create(path, CLI_KIND_TRACE);
        rc = cli_read_trace(p, j, &re);
    } else {
        cli_err_set(e, "%s: expected a .hatchet array or a Chrome-trace object", path);
        return NULL;
    }
    if (rc == 0)
        rc = cli_profile_finish(p, &re);
    if (rc != 0) {
        /* cli_profile_finish already names the path */
        size_t n = strlen(path);
        if (strncmp(re.msg, path, n) == 0 && strncmp(re.msg + n, ": ", 2) == 0)
            cli_err_set(e, "%s", re.msg);
        else
            cli_err_set(e, "%s: %s", path, re.msg);
        cli_profile_destroy(p);
        return NULL;
    }
    return p;
}

CliProfile *
cli_profile_load_mem(const char *data, size_t len, const char *path, CliErr *e)
{
    CliErr pe;
    cJSON *j = cli_json_parse(data, len, &pe);
    if (!j) {
        cli_err_set(e, "%s: %s", path, pe.msg);
        return NULL;
    }
    CliProfile *p = cli_profile_from_json(j, path, e);
    cJSON_Delete(j);
    return p;
}

CliProfile *
cli_profile_load(const char *path, CliErr *e)
{
    char *data = NULL;
    size_t len = 0;
    if (cli_file_read(path, &data, &len, e) != 0)
        return NULL;
    CliProfile *p = cli_profile_load_mem(data, len, path, e);
    free(data);
    return p;
}
