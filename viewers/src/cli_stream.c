/*
 * cli_stream.c — reads JSON input a value at a time, so that a trace of any size is
 * parsed in memory proportional to its largest event, not to the file.
 *
 * A CliSrc is a file (read through a 1 MiB window that slides over the input) or a
 * memory block. cli_src_value() finds the end of the next JSON value with a small
 * scanner (strings, escapes and bracket depth only) and hands its text to cJSON, which
 * checks the grammar; cli_stream_trace() walks a Chrome trace's top-level object (or
 * a bare event list) this way and calls back once per top-level field and once per
 * event. Errors read like those of cJSON on the whole text (cli_load.c): the same
 * "line, column" of the first byte cJSON rejects, "truncated" when the text ends
 * early, the nesting limit counted from the document root, NUL bytes rejected.
 * Newlines are counted as the window slides, so positions stay exact in any file.
 */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { WINDOW = 1 << 20, PARSE_BLOCK = 256 << 10 };

/* ---- parse arena ------------------------------------------------------------------------
 *
 * The values cli_src_value() parses are allocated from the source's arena through
 * cJSON's hooks (installed only around the parse) and dropped wholesale by
 * cli_src_release(): a streamed event costs no malloc/free pair per item. */

typedef struct Block {
    struct Block *next;
    size_t used, cap;
    max_align_t data[];
} Block;

static CliSrc *parse_src; /* the source whose arena the hooks allocate from */

static void *
arena_malloc(size_t n)
{
    CliSrc *s = parse_src;
    Block *b = s->arena;
    n = (n + 15) & ~(size_t)15;
    if (!b || b->used + n > b->cap) {
        size_t cap = n > PARSE_BLOCK ? n : PARSE_BLOCK;
        Block *nb = cli_xmalloc(sizeof *nb + cap);
        nb->used = 0;
        nb->cap = cap;
        nb->next = b;
        s->arena = b = nb;
    }
    void *p = (char *)b->data + b->used;
    b->used += n;
    return p;
}

static void
arena_free(void *p)
{
    (void)p;
}

void
cli_src_release(CliSrc *s)
{
    Block *b = s->arena;
    if (!b)
        return;
    for (Block *x = b->next, *n; x; x = n) { /* keep one block */
        n = x->next;
        free(x);
    }
    b->next = NULL;
    b->used = 0;
}

static void
arena_destroy(CliSrc *s)
{
    for (Block *x = s->arena, *n; x; x = n) {
        n = x->next;
        free(x);
    }
    s->arena = NULL;
}

/* ---- the source ------------------------------------------------------------------------ */

void
cli_src_init_mem(CliSrc *s, const char *data, size_t len)
{
    memset(s, 0, sizeof *s);
    s->buf = (char *)data;
    s->n = len;
    s->eof = 1;
    s->line = 1;
}

int
cli_src_open(CliSrc *s, const char *path, CliErr *e)
{
    struct stat st;
    memset(s, 0, sizeof *s);
    s->line = 1;
    s->path = path;
    s->f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!s->f) {
        cli_err_set(e, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    if (fstat(fileno(s->f), &st) == 0 && S_ISDIR(st.st_mode)) {
        cli_err_set(e, "%s: is a directory", path);
        cli_src_close(s);
        return -1;
    }
    s->owned = 1;
    return 0;
}

void
cli_src_close(CliSrc *s)
{
    if (s->f && s->f != stdin)
        fclose(s->f);
    if (s->owned)
        free(s->buf);
    arena_destroy(s);
    memset(s, 0, sizeof *s);
}

/* Counts the newlines of buf[s->lpos .. upto) into s->line / s->lstart. */
static void
count_lines(CliSrc *s, size_t upto)
{
    const char *b = s->buf;
    size_t i = s->lpos;
    while (i < upto) {
        const char *nl = memchr(b + i, '\n', upto - i);
        if (!nl)
            break;
        i = (size_t)(nl - b) + 1;
        s->line++;
        s->lstart = s->base + i;
    }
    s->lpos = upto;
}

/* Reads more input after buf[n); drops buf[0 .. keep) first unless s->keep_all.
 * 0 when bytes were added, 1 at the end of the input, -1 with e set. */
static int
refill(CliSrc *s, size_t keep, CliErr *e)
{
    if (s->eof)
        return 1;
    if (keep > 0 && !s->keep_all) {
        count_lines(s, keep);
        memmove(s->buf, s->buf + keep, s->n - keep);
        s->n -= keep;
        s->pos -= keep;
        s->lpos -= keep;
        s->base += keep;
    }
    if (s->cap - s->n < WINDOW / 2) {
        s->cap = s->cap ? s->cap * 2 : WINDOW;
        s->buf = cli_xrealloc(s->buf, s->cap + 1);
    }
    size_t got = fread(s->buf + s->n, 1, s->cap - s->n, s->f);
    if (got == 0) {
        if (ferror(s->f)) {
            cli_err_set(e, "%s: read error: %s", s->path, strerror(errno));
            return -1;
        }
        s->eof = 1;
        return 1;
    }
    if (memchr(s->buf + s->n, 0, got)) {
        cli_err_set(e, "not a JSON text file (contains NUL bytes)");
        return -1;
    }
    s->n += got;
    s->buf[s->n] = 0;
    if (s->base + s->n > (uint64_t)CLI_MAX_FILE_MB << 20) {
        cli_err_set(e, "%s: larger than %d MiB", s->path, CLI_MAX_FILE_MB);
        return -1;
    }
    return 0;
}

/* "line L, column C" of buf[at] (at >= s->lpos, within the window) into e, as
 * cli_json_parse words it: truncated when 'at' is the last byte of the input. */
static void
error_at(CliSrc *s, size_t at, const char *what, CliErr *e)
{
    count_lines(s, at);
    uint64_t abs = s->base + at;
    if (!what && s->eof && at + 1 >= s->n)
        cli_err_set(e, "not valid JSON (truncated at line %ld)", s->line);
    else
        cli_err_set(e, "%s (line %ld, column %llu)", what ? what : "not valid JSON", s->line,
                    (unsigned long long)(abs - s->lstart + 1));
}

/* The next byte that is not JSON whitespace (its index in buf), or -1 at the end of
 * the input; -2 with e set on a read error. */
static long
skip_ws(CliSrc *s, CliErr *e)
{
    for (;;) {
        while (s->pos < s->n) {
            char c = s->buf[s->pos];
            if (c != ' ' && c != '\n' && c != '\r' && c != '\t')
                return (long)s->pos;
            s->pos++;
        }
        int rc = refill(s, s->pos, e);
        if (rc < 0)
            return -2;
        if (rc > 0)
            return -1;
    }
}

int
cli_src_peek(CliSrc *s, CliErr *e)
{
    long i = skip_ws(s, e);
    return i == -2 ? -2 : i < 0 ? -1 : (unsigned char)s->buf[i];
}

/* Consumes 'c' after optional whitespace; else an error at the byte found (or
 * "truncated" at the end). 0 or -1. */
static int
expect(CliSrc *s, char c, CliErr *e)
{
    long i = skip_ws(s, e);
    if (i == -2)
        return -1;
    if (i < 0 || s->buf[i] != c) {
        error_at(s, i < 0 ? (s->n ? s->n - 1 : 0) : (size_t)i, NULL, e);
        return -1;
    }
    s->pos++;
    return 0;
}

/* Finds the end of the JSON value starting at buf[*start] (which moves when the
 * window slides): sets *end (one past it). depth0 is the nesting of the value's
 * container in the document. 0; 1 when the input ends inside a string, array or
 * object (*end = n); -1 with e set (nesting, read error). */
static int
scan_value(CliSrc *s, size_t *start, size_t *end, int depth0, CliErr *e)
{
    size_t i = *start;
    int depth = 0, in_str = 0, esc = 0;
    char c0 = s->buf[i];
    int scalar = c0 != '{' && c0 != '[' && c0 != '"';
    for (;;) {
        for (; i < s->n; i++) {
            char c = s->buf[i];
            if (scalar) {
                if (c == ',' || c == ']' || c == '}' || c == ':' || c == ' ' || c == '\n' ||
                    c == '\r' || c == '\t') {
                    *end = i;
                    return 0;
                }
            } else if (in_str) {
                if (esc) {
                    esc = 0;
                } else if (c == '\\') {
                    esc = 1;
                } else if (c == '"') {
                    in_str = 0;
                    if (depth == 0) {
                        *end = i + 1;
                        return 0;
                    }
                } else { /* skip to the next quote or backslash */
                    const char *q = memchr(s->buf + i, '"', s->n - i);
                    const char *b = memchr(s->buf + i, '\\', (q ? (size_t)(q - s->buf) : s->n) - i);
                    i = (size_t)((b ? b : q ? q : s->buf + s->n) - s->buf) - 1;
                }
            } else if (c == '"') {
                in_str = 1;
            } else if (c == '{' || c == '[') {
                if (depth0 + ++depth > CJSON_NESTING_LIMIT) {
                    cli_err_set(e, "JSON nested deeper than %d levels", CJSON_NESTING_LIMIT);
                    return -1;
                }
            } else if (c == '}' || c == ']') {
                if (--depth == 0) {
                    *end = i + 1;
                    return 0;
                }
            }
        }
        size_t rel = i - *start;
        int rc = refill(s, *start, e);
        if (rc < 0)
            return -1;
        if (!s->keep_all)
            *start = 0;
        i = *start + rel;
        if (rc > 0) {
            *end = s->n;
            return scalar ? 0 : 1;
        }
    }
}

int
cli_src_value(CliSrc *s, int depth0, const char *key, cJSON **out, CliSpanText *text, CliErr *e)
{
    long i = skip_ws(s, e);
    size_t start, end;
    *out = NULL;
    if (i == -2)
        return -1;
    if (i < 0) {
        error_at(s, s->n ? s->n - 1 : 0, NULL, e);
        return -1;
    }
    start = (size_t)i;
    int rc = scan_value(s, &start, &end, depth0, e);
    if (rc < 0)
        return -1;
    const char *at = NULL;
    cJSON_Hooks hooks = {arena_malloc, arena_free};
    parse_src = s;
    cJSON_InitHooks(&hooks);
    cJSON *j = cJSON_ParseWithLengthOpts(s->buf + start, end - start, &at, 0);
    cJSON_InitHooks(NULL);
    parse_src = NULL;
    if (!j) {
        const char *ep = cJSON_GetErrorPtr();
        size_t off = ep && ep >= s->buf + start && ep <= s->buf + end ? (size_t)(ep - s->buf) : start;
        if (off >= s->n)
            off = s->n ? s->n - 1 : 0;
        error_at(s, off, NULL, e);
        return -1;
    }
    if (at && at < s->buf + end) { /* the scanner's end and cJSON's disagree */
        error_at(s, (size_t)(at - s->buf), NULL, e);
        return -1;
    }
    if (cli_json_check_numbers(j, key, e) != 0)
        return -1;
    if (text) {
        text->s = s->buf + start;
        text->n = end - start;
    }
    s->pos = end;
    *out = j;
    return 0;
}

/* Reads the rest of the input into the window (from its start when keep_all was set
 * from the beginning). The text is buf[0 .. n). 0 or -1 with e set. */
int
cli_src_slurp(CliSrc *s, CliErr *e)
{
    int rc;
    s->keep_all = 1;
    while ((rc = refill(s, 0, e)) == 0)
        ;
    return rc < 0 ? -1 : 0;
}

/* ---- a streamed Chrome trace ------------------------------------------------------------- */

/* The elements of an array whose '[' is next, one event at a time. */
static int
stream_events(CliSrc *s, int depth0, const CliTraceSink *k, void *u, CliErr *e)
{
    int idx = 0, c;
    if (expect(s, '[', e) != 0)
        return -1;
    if ((c = cli_src_peek(s, e)) == ']') {
        s->pos++;
        return 0;
    }
    for (;;) {
        cJSON *ev;
        if (c == -2 || cli_src_value(s, depth0 + 1, NULL, &ev, NULL, e) != 0)
            return -1;
        int rc = k->event(u, ev, idx++, e);
        cli_src_release(s);
        if (rc != 0)
            return -1;
        c = cli_src_peek(s, e);
        if (c == ']') {
            s->pos++;
            return 0;
        }
        if (expect(s, ',', e) != 0)
            return -1;
        c = 0;
    }
}

/* Only whitespace may follow the top-level value. */
static int
expect_end(CliSrc *s, CliErr *e)
{
    long i = skip_ws(s, e);
    if (i == -2)
        return -1;
    if (i >= 0) {
        error_at(s, (size_t)i, "unexpected text after the JSON value", e);
        return -1;
    }
    return 0;
}

int
cli_stream_trace(CliSrc *s, const CliTraceSink *k, void *u, int *has_events, CliErr *e)
{
    int c = cli_src_peek(s, e), seen_events = 0;
    *has_events = 0;
    if (c == '[') {
        *has_events = 1;
        if (stream_events(s, 0, k, u, e) != 0)
            return -1;
        return expect_end(s, e);
    }
    if (expect(s, '{', e) != 0)
        return -1;
    if ((c = cli_src_peek(s, e)) == '}') {
        s->pos++;
    } else {
        for (;;) {
            cJSON *key, *v;
            if (c == -2)
                return -1;
            if (c != '"') { /* cJSON stops at a key that is not a string */
                error_at(s, c < 0 ? (s->n ? s->n - 1 : 0) : s->pos, NULL, e);
                return -1;
            }
            if (cli_src_value(s, 1, NULL, &key, NULL, e) != 0)
                return -1;
            int events = !seen_events && strcmp(key->valuestring, "traceEvents") == 0;
            if (expect(s, ':', e) != 0)
                return -1;
            if (events && cli_src_peek(s, e) == '[') {
                seen_events = *has_events = 1;
                cli_src_release(s);
                if (stream_events(s, 1, k, u, e) != 0)
                    return -1;
            } else {
                CliSpanText t;
                int rc = cli_src_value(s, 1, key->valuestring, &v, &t, e);
                if (rc == 0)
                    rc = k->field(u, key->valuestring, v, &t, e);
                cli_src_release(s);
                if (rc != 0)
                    return -1;
            }
            c = cli_src_peek(s, e);
            if (c == '}') {
                s->pos++;
                break;
            }
            if (expect(s, ',', e) != 0)
                return -1;
            c = cli_src_peek(s, e);
        }
    }
    return expect_end(s, e);
}
