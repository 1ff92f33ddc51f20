/*
 * expand.h — test helper: replaces the math ops of a hand-written Linalg sample
 * by their lo_math_emit expansions, as the lowering does for real kernels.
 *
 * A line "%vR = math.<fn> %vA[, %vB] : f32" becomes the expansion (SSA numbers
 * from 100000 up, so they never collide with the sample's), and later uses of
 * %vR are renamed to the expansion's result. Math ops lo_math_emit does not
 * expand, and all other lines, are kept. Needs lo_int.h (libtritium_ir.a).
 */
#ifndef CGT_EXPAND_H
#define CGT_EXPAND_H

#include "lo_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct CgtMathName {
    const char *name;
    IrOpc op;
} CgtMathName;

static const CgtMathName cgt_math_names[] = {
    {"exp", IR_EXP},     {"exp2", IR_EXP2},   {"expm1", IR_EXPM1}, {"log", IR_LOG},
    {"log2", IR_LOG2},   {"log10", IR_LOG10}, {"log1p", IR_LOG1P}, {"sin", IR_SIN},
    {"cos", IR_COS},     {"tan", IR_TAN},     {"tanh", IR_TANH},   {"erf", IR_ERF},
    {"atan", IR_ATAN},   {"asin", IR_ASIN},   {"acos", IR_ACOS},   {"sinh", IR_SINH},
    {"cosh", IR_COSH},   {"asinh", IR_ASINH}, {"acosh", IR_ACOSH}, {"atanh", IR_ATANH},
    {"cbrt", IR_CBRT},   {"powf", IR_POWF},   {"atan2", IR_ATAN2},
};

static int
cgt_math_op(const char *name, IrOpc *op)
{
    for (size_t i = 0; i < sizeof cgt_math_names / sizeof *cgt_math_names; i++)
        if (strcmp(cgt_math_names[i].name, name) == 0) {
            *op = cgt_math_names[i].op;
            return 0;
        }
    return -1;
}

typedef struct CgtRename {
    unsigned from, to;
} CgtRename;

/* Appends line [p, e) to b with every %vN in the rename table replaced. */
static void
cgt_append_renamed(LoBuf *b, const char *p, const char *e, const CgtRename *rn, int nrn)
{
    while (p < e) {
        if (p[0] == '%' && p + 2 < e && p[1] == 'v' && isdigit((unsigned char)p[2])) {
            char *end;
            unsigned v = (unsigned)strtoul(p + 2, &end, 10);
            for (int i = nrn - 1; i >= 0; i--)
                if (rn[i].from == v) {
                    v = rn[i].to;
                    break;
                }
            lo_printf(b, "%%v%u", v);
            p = end;
        } else {
            lo_printf(b, "%c", *p++);
        }
    }
}

/* Returns the expanded text (malloc'ed, NUL-terminated; *out_len bytes). */
static char *
cgt_expand_math(const char *text, size_t len, size_t *out_len)
{
    LoBuf out, line;
    lo_buf_init(&out);
    CgtRename rn[256];
    int nrn = 0;
    unsigned next = 100000;
    for (const char *p = text, *end = text + len; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = nl ? nl + 1 : end;
        lo_buf_init(&line);
        cgt_append_renamed(&line, p, e, rn, nrn);
        size_t ln;
        char *l = lo_buf_take(&line, &ln);
        unsigned r, a, b2 = 0;
        char fn[32];
        int ind = 0, nargs = 0;
        IrOpc op;
        while (l[ind] == ' ')
            ind++;
        if (sscanf(l + ind, "%%v%u = math.%31[a-z0-9] %%v%u, %%v%u : f32", &r, fn, &a, &b2) == 4)
            nargs = 2;
        else if (sscanf(l + ind, "%%v%u = math.%31[a-z0-9] %%v%u : f32", &r, fn, &a) == 3)
            nargs = 1;
        unsigned res = 0;
        if (nargs && nrn < 256 && cgt_math_op(fn, &op) == 0) {
            LoBuf ex;
            lo_buf_init(&ex);
            ex.indent = ind;
            ex.next = next;
            unsigned args[2] = {a, b2};
            res = lo_math_emit(&ex, op, args, nargs, "f32");
            next = ex.next + 1000;
            size_t exn;
            char *t = lo_buf_take(&ex, &exn);
            if (res) {
                lo_printf(&out, "%s", t);
                rn[nrn].from = r;
                rn[nrn++].to = res;
            }
            free(t);
            lo_buf_fini(&ex);
        }
        if (!res)
            lo_printf(&out, "%s", l);
        free(l);
        lo_buf_fini(&line);
        p = e;
    }
    char *t = lo_buf_take(&out, out_len);
    lo_buf_fini(&out);
    return t;
}

/* Reads a whole file (malloc'ed, NUL-terminated), NULL on failure. */
static char *
cgt_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *p = malloc((size_t)n + 1);
    if (p && fread(p, 1, (size_t)n, f) != (size_t)n) {
        free(p);
        p = NULL;
    }
    fclose(f);
    if (p) {
        p[n] = 0;
        *len = (size_t)n;
    }
    return p;
}

#endif /* CGT_EXPAND_H */
