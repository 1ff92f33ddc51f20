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
vappend(LoBuf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    if (b->n + (size_t)n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + (size_t)n + 1)
            cap *= 2;
        b->p = realloc(b->p, cap);
        if (!b->p)
            ir_die("out of memory");
        b->cap = cap;
    }
    vsnprintf(b->p + b->n, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    b->n += (size_t)n;
}

static void
append(LoBuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vappend(b, fmt, ap);
    va_end(ap);
}

void
lo_printf(LoBuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vappend(b, fmt, ap);
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
    append(b, "%*s%%v%u = ", b->indent, "", id);
    va_list ap;
    va_start(ap, fmt);
    vappend(b, fmt, ap);
    va_end(ap);
    append(b, "\n");
    return id;
}

void
lo_line(LoBuf *b, const char *fmt, ...)
{
    append(b, "%*s", b->indent, "");
    va_list ap;
    va_start(ap, fmt);
    vappend(b, fmt, ap);
    va_end(ap);
    append(b, "\n");
}

char *
lo_buf_take(LoBuf *b, size_t *len)
{
    if (!b->p)
        append(b, "%s", "");
    char *p = b->p;
    if (len)
        *len = b->n;
    b->p = NULL;
    b->n = b->cap = 0;
    return p;
}
