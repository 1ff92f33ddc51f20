/*
 * cli_util.c — small helpers every subcommand uses: fatal allocation wrappers, an arena,
 * a growable buffer, whole-file read and atomic write, number formatting, Python-style
 * anchored regexes on top of POSIX <regex.h>, and error/colour helpers.
 */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- errors and memory ------------------------------------------------------------ */

void
cli_die(const char *fmt, ...)
{
    va_list ap;
    fputs("proton-cli: fatal: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}

void
cli_err_set(CliErr *e, const char *fmt, ...)
{
    va_list ap;
    if (!e)
        return;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    /* one line, whatever the input contained */
    for (char *c = e->msg; *c; c++)
        if (*c == '\n' || *c == '\r')
            *c = ' ';
}

void
cli_error(const char *cmd, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    for (char *c = msg; *c; c++)
        if (*c == '\n' || *c == '\r')
            *c = ' ';
    if (cmd)
        fprintf(stderr, "proton-cli: %s: %s\n", cmd, msg);
    else
        fprintf(stderr, "proton-cli: %s\n", msg);
}

void *
cli_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        cli_die("out of memory (%zu bytes)", n);
    return p;
}

void *
cli_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        cli_die("out of memory (%zu x %zu bytes)", n, size);
    return p;
}

void *
cli_xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p)
        cli_die("out of memory (%zu bytes)", n);
    return p;
}

char *
cli_xstrdup(const char *s)
{
    size_t n = strlen(s);
    char *d = cli_xmalloc(n + 1);
    memcpy(d, s, n + 1);
    return d;
}

/* ---- arena ------------------------------------------------------------------------- */

struct CliArenaChunk {
    CliArenaChunk *next;
    size_t size, used;
    _Alignas(16) unsigned char data[];
};

void *
cli_arena_alloc(CliArena *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    CliArenaChunk *c = a->head;
    if (!c || c->size - c->used < n) {
        size_t size = c ? c->size * 2 : 64 * 1024;
        if (size > 64u << 20)
            size = 64u << 20;
        if (size < n)
            size = n;
        c = cli_xmalloc(sizeof(CliArenaChunk) + size);
        c->size = size;
        c->used = 0;
        c->next = a->head;
        a->head = c;
    }
    void *p = c->data + c->used;
    c->used += n;
    memset(p, 0, n);
    return p;
}

char *
cli_arena_strndup(CliArena *a, const char *s, size_t n)
{
    char *d = cli_arena_alloc(a, n + 1);
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

char *
cli_arena_strdup(CliArena *a, const char *s)
{
    return cli_arena_strndup(a, s, strlen(s));
}

void
cli_arena_fini(CliArena *a)
{
    CliArenaChunk *c = a->head;
    while (c) {
        CliArenaChunk *next = c->next;
        free(c);
        c = next;
    }
    a->head = NULL;
}

/* ---- buffer ------------------------------------------------------------------------ */

void
cli_buf_put(CliBuf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n + 1)
            cap *= 2;
        b->s = cli_xrealloc(b->s, cap);
        b->cap = cap;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = 0;
}

void
cli_buf_puts(CliBuf *b, const char *s)
{
    cli_buf_put(b, s, strlen(s));
}

void
cli_buf_putc(CliBuf *b, char c)
{
    cli_buf_put(b, &c, 1);
}

void
cli_buf_printf(CliBuf *b, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        cli_buf_put(b, small, (size_t)n);
        return;
    }
    char *big = cli_xmalloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    cli_buf_put(b, big, (size_t)n);
    free(big);
}

void
cli_buf_fini(CliBuf *b)
{
    free(b->s);
    b->s = NULL;
    b->n = b->cap = 0;
}

/* ---- files ------------------------------------------------------------------------- */

int
cli_file_read(const char *path, char **data, size_t *len, CliErr *e)
{
    int rc = -1;
    char *buf = NULL;
    size_t n = 0, cap = 0;
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f) {
        cli_err_set(e, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        cli_err_set(e, "%s: is a directory", path);
        goto out;
    }
    for (;;) {
        if (cap - n < 65536) {
            cap = cap ? cap * 2 : 1 << 20;
            if (cap > (size_t)CLI_MAX_FILE_MB << 20) {
                cli_err_set(e, "%s: larger than %d MiB", path, CLI_MAX_FILE_MB);
                goto out;
            }
            buf = cli_xrealloc(buf, cap + 1);
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        cli_err_set(e, "%s: read error: %s", path, strerror(errno));
        goto out;
    }
    buf[n] = 0;
    *data = buf;
    *len = n;
    buf = NULL;
    rc = 0;
out:
    free(buf);
    if (f != stdin)
        fclose(f);
    return rc;
}

int
cli_out_open(CliOut *o, const char *path, CliErr *e)
{
    memset(o, 0, sizeof *o);
    o->path = path;
    if (strcmp(path, "-") == 0) {
        o->f = stdout;
        return 0;
    }
    size_t plen = strlen(path);
    o->tmp = cli_xmalloc(plen + 32);
    snprintf(o->tmp, plen + 32, "%s.tmp.%ld", path, (long)getpid());
    if (!(o->f = fopen(o->tmp, "wb"))) {
        cli_err_set(e, "%s: cannot write: %s", path, strerror(errno));
        free(o->tmp);
        o->tmp = NULL;
        return -1;
    }
    return 0;
}

void
cli_out_write(const char *s, size_t n, void *user)
{
    CliOut *o = user;
    if (!o->err && fwrite(s, 1, n, o->f) != n)
        o->err = errno ? errno : EIO;
}

int
cli_out_close(CliOut *o, int ok, CliErr *e)
{
    int rc = -1;
    if (!o->tmp) { /* stdout */
        if (fflush(stdout) != 0 && !o->err)
            o->err = errno ? errno : EIO;
        if (o->err) {
            cli_err_set(e, "stdout: write error: %s", strerror(o->err));
            return -1;
        }
        return 0;
    }
    if (fclose(o->f) != 0 && !o->err)
        o->err = errno ? errno : EIO;
    if (!ok)
        goto out;
    if (o->err) {
        cli_err_set(e, "%s: write error: %s", o->path, strerror(o->err));
        goto out;
    }
    if (rename(o->tmp, o->path) != 0) {
        cli_err_set(e, "%s: cannot rename into place: %s", o->path, strerror(errno));
        goto out;
    }
    rc = 0;
out:
    if (rc != 0)
        unlink(o->tmp);
    free(o->tmp);
    memset(o, 0, sizeof *o);
    return rc;
}

int
cli_file_write_atomic(const char *path, const char *data, size_t len, CliErr *e)
{
    CliOut o;
    if (cli_out_open(&o, path, e) != 0)
        return -1;
    cli_out_write(data, len, &o);
    return cli_out_close(&o, 1, e);
}

void
cli_buf_write(const char *s, size_t n, void *user)
{
    cli_buf_put(user, s, n);
}

/* ---- strings and numbers ----------------------------------------------------------- */

int
cli_streq_nocase(const char *a, const char *b)
{
    return strcasecmp(a, b) == 0;
}

int
cli_has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

void
cli_fmt_double(char buf[32], double v)
{
    if (!isfinite(v)) {
        snprintf(buf, 32, "null");
        return;
    }
    if (fabs(v) < 1e17 && v == (double)(long long)v) {
        snprintf(buf, 32, "%lld", (long long)v);
        return;
    }
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, 32, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

double
cli_round15(double v)
{
    char buf[32];
    if (!isfinite(v))
        return v;
    snprintf(buf, sizeof buf, "%.15g", v);
    return strtod(buf, NULL);
}

void
cli_fmt_value(char buf[64], double v, int precision)
{
    if (isnan(v))
        snprintf(buf, 64, "-");
    else if (fabs(v) >= 1e15)
        snprintf(buf, 64, "%.4g", v);
    else
        snprintf(buf, 64, "%.*f", precision, v);
    if (strcmp(buf, "-0.000") == 0) /* a rounding artefact, not a sign */
        snprintf(buf, 64, "0.000");
}

int
cli_parse_int(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

int
cli_parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

/* ---- regex ------------------------------------------------------------------------- */

/* Python's \d \w \s (and their negations) outside brackets become POSIX classes; the
 * whole pattern is wrapped in ^( ... ) to get re.match's anchoring at the start. */
int
cli_regex_init(CliRegex *r, const char *pattern, CliErr *e)
{
    CliBuf b = {0};
    int inbr = 0;
    cli_buf_puts(&b, "^(");
    for (const char *c = pattern; *c; c++) {
        if (c[0] == '\\' && c[1] && !inbr) {
            const char *rep = NULL;
            switch (c[1]) {
            case 'd': rep = "[0-9]"; break;
            case 'D': rep = "[^0-9]"; break;
            case 'w': rep = "[A-Za-z0-9_]"; break;
            case 'W': rep = "[^A-Za-z0-9_]"; break;
            case 's': rep = "[[:space:]]"; break;
            case 'S': rep = "[^[:space:]]"; break;
            }
            if (rep) {
                cli_buf_puts(&b, rep);
            } else {
                cli_buf_put(&b, c, 2);
            }
            c++;
            continue;
        }
        if (*c == '[' && !inbr)
            inbr = 1;
        else if (*c == ']' && inbr)
            inbr = 0;
        cli_buf_putc(&b, *c);
    }
    cli_buf_puts(&b, ")");
    int rc = regcomp(&r->re, b.s, REG_EXTENDED | REG_NOSUB);
    cli_buf_fini(&b);
    if (rc != 0) {
        char why[128];
        regerror(rc, &r->re, why, sizeof why);
        cli_err_set(e, "bad regular expression '%s': %s", pattern, why);
        r->ok = 0;
        return -1;
    }
    r->ok = 1;
    return 0;
}

int
cli_regex_match(const CliRegex *r, const char *s)
{
    return r->ok && regexec(&r->re, s, 0, NULL, 0) == 0;
}

void
cli_regex_fini(CliRegex *r)
{
    if (r->ok)
        regfree(&r->re);
    r->ok = 0;
}

int
cli_use_color(FILE *f, int force)
{
    if (force >= 0)
        return force;
    const char *nc = getenv("NO_COLOR");
    if (nc && *nc)
        return 0;
    return isatty(fileno(f));
}
