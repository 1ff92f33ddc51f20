/*
 * rt_cost.c — a kernel's static cost for one launch, with the loop trip counts the
 * launch really runs.
 *
 * The compiler writes, for kernels with loops whose bounds are known only at launch,
 * a small program (lo_plan_cost.c, lp_cost_program; docs/compiler.md "Static cost"):
 *   cost 1 <nloops> <ncells> <nscells>
 *   L <parent> <lb> , <ub> , <step> ;     bounds in reverse Polish, or "L <parent> ? ;"
 *   C <loop> <bytes loaded> <bytes stored> <flops16> <flops32> <flops64> ;
 *   S <loop> <scope mask, hex> <bytes loaded> <bytes stored> <flops16/32/64> ;
 * (S: the cost of loop's ops while the scopes of the mask are open; bit = scope id).
 * Leaves: #<int> constants, a<i>:<s|u|q|b> kernel parameter i (int32, uint32, 64-bit,
 * i1), p<d> program id, n<d> grid size; operators + - * / % U R (unsigned / %) m M
 * (min, max). Parsed once per kernel; evaluated per program when the bounds read a
 * program id, else once per launch. Loops marked '?' (while loops, bounds loaded from
 * memory or carried by an outer loop) count once and make the result inexact.
 */
#include "rt_int.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct Tok {
    char op;   /* '#' constant, 'a' parameter, 'p' program id, 'n' grid size, else an operator */
    char kind; /* parameters: s u q b */
    int64_t v; /* constant, parameter index or axis */
} Tok;

typedef struct Loop {
    int parent;
    int code[3], len[3]; /* lb, ub, step: ranges in toks; len[0] < 0: unknown */
} Loop;

typedef struct Cell {
    int loop;
    uint64_t scopes; /* S cells: the in-kernel scopes it counts for */
    double bytes, flops[3];
} Cell;

struct RtCost {
    Tok *toks;
    int ntoks;
    Loop *loops;
    int nloops;
    Cell *cells;
    int ncells;
    Cell *scells;
    int nscells;
    bool per_program; /* some bound reads a program id */
};

/* ---- parsing ---------------------------------------------------------------------- */

static const char *
skip(const char *s)
{
    while (*s == ' ' || *s == '\n')
        s++;
    return s;
}

/* Parses one RPN token at s into t; returns the text after it or NULL at ',' / ';'. */
static const char *
parse_tok(const char *s, Tok *t, bool *pid)
{
    char *end;
    s = skip(s);
    if (*s == ',' || *s == ';' || !*s)
        return NULL;
    t->op = *s;
    t->kind = 0;
    t->v = 0;
    if (*s == '#' || *s == 'a' || *s == 'p' || *s == 'n') {
        t->v = strtoll(s + 1, &end, 10);
        if (end == s + 1)
            return NULL;
        if (*s == 'a') {
            if (*end != ':' || !strchr("suqb", end[1]) || !end[1])
                return NULL;
            t->kind = end[1];
            end += 2;
        }
        if ((*s == 'p' || *s == 'n') && (t->v < 0 || t->v > 2))
            return NULL;
        *pid |= *s == 'p';
        return end;
    }
    if (!strchr("+-*/%URmM", *s))
        return NULL;
    return s + 1;
}

static int
add_tok(RtCost *c, const Tok *t, int *cap)
{
    if (c->ntoks == *cap) {
        *cap = *cap ? *cap * 2 : 64;
        Tok *n = realloc(c->toks, sizeof *n * (size_t)*cap);
        if (!n)
            return -1;
        c->toks = n;
    }
    c->toks[c->ntoks++] = *t;
    return 0;
}

/* One "L parent ... ;" line after the 'L'. */
static const char *
parse_loop(RtCost *c, const char *s, Loop *l, int *cap)
{
    char *end;
    l->parent = (int)strtol(s, &end, 10);
    s = skip(end);
    if (*s == '?') {
        l->len[0] = -1;
        s = skip(s + 1);
        return *s == ';' ? s + 1 : NULL;
    }
    for (int k = 0; k < 3; k++) {
        Tok t;
        l->code[k] = c->ntoks;
        const char *n;
        while ((n = parse_tok(s, &t, &c->per_program))) {
            if (add_tok(c, &t, cap))
                return NULL;
            s = n;
        }
        s = skip(s);
        l->len[k] = c->ntoks - l->code[k];
        if (!l->len[k] || *s != (k < 2 ? ',' : ';'))
            return NULL;
        s++;
    }
    return s;
}

static const char *
parse_cell(const char *s, Cell *k, bool scoped)
{
    char *end;
    double bl, bs;
    k->loop = (int)strtol(s, &end, 10);
    if (scoped) {
        const char *m = end;
        k->scopes = strtoull(m, &end, 16);
        if (end == m || !k->scopes)
            return NULL;
    }
    bl = strtod(end, &end);
    bs = strtod(end, &end);
    k->bytes = bl + bs;
    for (int i = 0; i < 3; i++)
        k->flops[i] = strtod(end, &end);
    s = skip(end);
    return *s == ';' ? s + 1 : NULL;
}

RtCost *
rt_cost_create(const char *text)
{
    int nl, nc, ns, cap = 0, il = 0, ic = 0, is = 0;
    char *end;
    RtCost *c;
    if (!text || strncmp(text, "cost 1 ", 7))
        return NULL;
    nl = (int)strtol(text + 7, &end, 10);
    nc = (int)strtol(end, &end, 10);
    ns = (int)strtol(end, &end, 10);
    if (nl < 0 || nc < 1 || nl > 4096 || nc > nl + 1 || ns < 0 || ns > 65536 || !(c = calloc(1, sizeof *c)))
        return NULL;
    c->loops = calloc((size_t)nl + 1, sizeof *c->loops);
    c->cells = calloc((size_t)nc, sizeof *c->cells);
    c->scells = calloc((size_t)ns + 1, sizeof *c->scells);
    const char *s = end;
    while (c->loops && c->cells && c->scells && s && *(s = skip(s))) {
        if (*s == 'L' && il < nl) {
            s = parse_loop(c, s + 1, &c->loops[il], &cap);
            if (s && (c->loops[il].parent < -1 || c->loops[il].parent >= il))
                s = NULL; /* parents come first */
            il++;
        } else if (*s == 'C' && ic < nc) {
            s = parse_cell(s + 1, &c->cells[ic], false);
            if (s && (c->cells[ic].loop < -1 || c->cells[ic].loop >= nl))
                s = NULL;
            ic++;
        } else if (*s == 'S' && is < ns) {
            s = parse_cell(s + 1, &c->scells[is], true);
            if (s && (c->scells[is].loop < -1 || c->scells[is].loop >= nl))
                s = NULL;
            is++;
        } else {
            s = NULL;
        }
    }
    if (!s || il != nl || ic != nc || is != ns) {
        rt_cost_destroy(c);
        return NULL;
    }
    c->nloops = nl;
    c->ncells = nc;
    c->nscells = ns;
    return c;
}

void
rt_cost_destroy(RtCost *c)
{
    if (!c)
        return;
    free(c->toks);
    free(c->loops);
    free(c->cells);
    free(c->scells);
    free(c);
}

/* ---- evaluation ------------------------------------------------------------------- */

static int64_t
param(const Tok *t, const uint64_t *args)
{
    uint64_t a = args[t->v];
    switch (t->kind) {
    case 's': return (int32_t)(uint32_t)a;
    case 'u': return (uint32_t)a;
    case 'b': return (int64_t)(a & 1);
    default: return (int64_t)a;
    }
}

/* Runs n tokens; false on a division by zero or a malformed stack. */
static bool
run(const Tok *t, int n, const uint64_t *args, const int32_t pid[3], const int32_t grid[3], int64_t *out)
{
    int64_t st[64];
    int sp = 0;
    for (int i = 0; i < n; i++) {
        const Tok *k = &t[i];
        if (k->op == '#' || k->op == 'a' || k->op == 'p' || k->op == 'n') {
            if (sp == 64)
                return false;
            st[sp++] = k->op == '#' ? k->v : k->op == 'a' ? param(k, args) : k->op == 'p' ? pid[k->v] : grid[k->v];
            continue;
        }
        if (sp < 2)
            return false;
        int64_t b = st[--sp], a = st[sp - 1], r;
        uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
        if ((k->op == '/' || k->op == '%' || k->op == 'U' || k->op == 'R') && b == 0)
            return false;
        switch (k->op) {
        case '+': r = (int64_t)(ua + ub); break;
        case '-': r = (int64_t)(ua - ub); break;
        case '*': r = (int64_t)(ua * ub); break;
        case '/': r = (a == INT64_MIN && b == -1) ? a : a / b; break;
        case '%': r = (a == INT64_MIN && b == -1) ? 0 : a % b; break;
        case 'U': r = (int64_t)(ua / ub); break;
        case 'R': r = (int64_t)(ua % ub); break;
        case 'm': r = a < b ? a : b; break;
        default: r = a > b ? a : b; break;
        }
        st[sp - 1] = r;
    }
    if (sp != 1)
        return false;
    *out = st[0];
    return true;
}

/* Adds cell k, run m times, to the 4 values at o. */
static void
add_cell(const Cell *k, double m, double *o)
{
    o[0] += k->bytes * m;
    for (int j = 0; j < 3; j++)
        o[1 + j] += k->flops[j] * m;
}

/* Adds one program's cost to out (4 values, then 4 per scope id below nout / 4 - 1);
 * returns false when some trip count was unknown. */
static bool
eval_program(const RtCost *c, const uint64_t *args, const int32_t pid[3], const int32_t grid[3], double *mult,
             double *out, int nout)
{
    bool exact = true;
    for (int l = 0; l < c->nloops; l++) {
        const Loop *L = &c->loops[l];
        int64_t b[3];
        double trips = 1;
        bool ok = L->len[0] >= 0;
        for (int k = 0; ok && k < 3; k++)
            ok = run(c->toks + L->code[k], L->len[k], args, pid, grid, &b[k]);
        if (ok && b[2] > 0)
            trips = b[1] <= b[0] ? 0 : (double)(((uint64_t)b[1] - (uint64_t)b[0] + (uint64_t)b[2] - 1) / (uint64_t)b[2]);
        else
            exact = false; /* counted once */
        mult[l] = trips * (L->parent >= 0 ? mult[L->parent] : 1.0);
    }
    for (int i = 0; i < c->ncells; i++)
        add_cell(&c->cells[i], c->cells[i].loop >= 0 ? mult[c->cells[i].loop] : 1.0, out);
    for (int i = 0; i < c->nscells; i++) {
        const Cell *k = &c->scells[i];
        double m = k->loop >= 0 ? mult[k->loop] : 1.0;
        for (uint64_t b = k->scopes; b; b &= b - 1) {
            int id = __builtin_ctzll(b);
            if (4 * (id + 2) <= nout)
                add_cell(k, m, out + 4 * (id + 1));
        }
    }
    return exact;
}

/* Programs evaluated one by one at most; a larger grid whose bounds read the program
 * id is sampled (the first this many programs, scaled) and reported inexact. */
#define RT_COST_MAX_PROGRAMS 65536

int
rt_cost_eval(const RtCost *c, const uint64_t *args, const int32_t grid[3], double *out, int nout)
{
    double stack_mult[64], *mult = c->nloops <= 64 ? stack_mult : malloc(sizeof *mult * (size_t)c->nloops);
    int64_t programs = (int64_t)grid[0] * grid[1] * grid[2], done = 0;
    int32_t pid[3] = {0, 0, 0};
    bool exact = true;
    if (nout < 4) {
        if (mult != stack_mult)
            free(mult);
        return -EINVAL;
    }
    nout &= ~3;
    memset(out, 0, (size_t)nout * sizeof *out);
    if (!mult)
        return -ENOMEM;
    if (programs <= 0)
        goto out;
    if (!c->per_program) {
        exact = eval_program(c, args, pid, grid, mult, out, nout);
        done = 1;
    } else {
        for (pid[2] = 0; pid[2] < grid[2] && done < RT_COST_MAX_PROGRAMS; pid[2]++)
            for (pid[1] = 0; pid[1] < grid[1] && done < RT_COST_MAX_PROGRAMS; pid[1]++)
                for (pid[0] = 0; pid[0] < grid[0] && done < RT_COST_MAX_PROGRAMS; pid[0]++, done++)
                    exact &= eval_program(c, args, pid, grid, mult, out, nout);
        exact &= done == programs;
    }
    for (int j = 0; j < nout; j++)
        out[j] *= (double)programs / (double)done;
out:
    if (mult != stack_mult)
        free(mult);
    return exact ? 1 : 0;
}
