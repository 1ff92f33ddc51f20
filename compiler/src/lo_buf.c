/*
 * lo_buf.c — growable text buffer with SSA numbering for the lowering.
 */
#include "lo_int.h"

#include <stdlib.h>
#include <string.h>

void
lo_buf_init(LoBuf *b)
{
    memset(b, 0, sizeof *b);
    b->next = 1;
}

void
lo_buf_fini(LoBuf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

static void
reserve(LoBuf *b, size_t n)
{
    if (b->n + n + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->n + n + 1)
        cap *= 2;
    b->p = realloc(b->p, cap);
    if (!b->p)
        ir_die("out of memory");
    b->cap = cap;
}

void
lo_append(LoBuf *b, const char *s, size_t n)
{
    reserve(b, n);
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

void
lo_vprintf(LoBuf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    if (n < 0)
        ir_die("bad format");
    reserve(b, (size_t)n);
    vsnprintf(b->p + b->n, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    b->n += (size_t)n;
}

void
lo_printf(LoBuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    lo_vprintf(b, fmt, ap);
    va_end(ap);
}

unsigned
lo_fresh(LoBuf *b)
{
    return b->ctr ? (*b->ctr)++ : b->next++;
}

unsigned
lo_emit(LoBuf *b, const char *fmt, ...)
{
    unsigned id = lo_fresh(b);
    lo_printf(b, "%*s%%v%u = ", b->indent, "", id);
    va_list ap;
    va_start(ap, fmt);
    lo_vprintf(b, fmt, ap);
    va_end(ap);
    lo_append(b, "\n", 1);
    return id;
}

void
lo_line(LoBuf *b, const char *fmt, ...)
{
    lo_printf(b, "%*s", b->indent, "");
    va_list ap;
    va_start(ap, fmt);
    lo_vprintf(b, fmt, ap);
    va_end(ap);
    lo_append(b, "\n", 1);
}

char *
lo_buf_take(LoBuf *b, size_t *len)
{
    if (!b->p)
        lo_append(b, "", 0);
    char *p = b->p;
    if (len)
        *len = b->n;
    b->p = NULL;
    b->n = b->cap = 0;
    return p;
}
