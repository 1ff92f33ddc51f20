/*
 * ir_parse.c — reads TTIR text (what ir_print.c writes) into a new module.
 *
 * Recursive descent over ir_lex.c tokens, building through ir_core.c. This file
 * has the module, functions, regions, names, types and attributes;
 * ir_parse_op.c has one function per op syntax. Names are scoped by region (a
 * region sees the names of its enclosing blocks); every value must be defined
 * before it is used, as in structured TTIR. Errors print "name:line:col: error: message", the source line
 * and a caret, and longjmp out (STYLE §6.11: the module arena owns everything
 * built so far, and is destroyed). ir_verify_func() runs on every function.
 */
#include "ir_parse_int.h"

#include <stdlib.h>
#include <string.h>

/* ---- tokens ------------------------------------------------------------------------------ */

void
pr_error(Parser *P, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ir_lex_error(&P->L, TOK.line, TOK.col, "%s", msg);
}

void pr_next(Parser *P) { ir_lex_next(&P->L); }
bool pr_is_punct(Parser *P, int c) { return TOK.kind == TK_PUNCT && TOK.ch == c; }

bool
pr_is_id(Parser *P, const char *w)
{
    return TOK.kind == TK_ID && TOK.slen == strlen(w) && memcmp(TOK.str, w, TOK.slen) == 0;
}

const char *
pr_tokdesc(Parser *P)
{
    static char buf[64];
    if (TOK.kind == TK_EOF)
        return "end of input";
    snprintf(buf, sizeof buf, "'%.*s'", TOK.n > 40 ? 40 : (int)TOK.n, TOK.s);
    return buf;
}

bool
pr_accept(Parser *P, int c)
{
    if (!pr_is_punct(P, c))
        return false;
    pr_next(P);
    return true;
}

void
pr_expect(Parser *P, int c)
{
    if (!pr_accept(P, c))
        pr_error(P, "expected '%c', found %s", c, pr_tokdesc(P));
}

bool
pr_accept_id(Parser *P, const char *w)
{
    if (!pr_is_id(P, w))
        return false;
    pr_next(P);
    return true;
}

void
pr_expect_id(Parser *P, const char *w)
{
    if (!pr_accept_id(P, w))
        pr_error(P, "expected '%s', found %s", w, pr_tokdesc(P));
}

void
pr_expect_arrow(Parser *P)
{
    if (TOK.kind != TK_ARROW)
        pr_error(P, "expected '->', found %s", pr_tokdesc(P));
    pr_next(P);
}

/* An identifier from names[]; returns its index. */
int
pr_expect_word(Parser *P, const char *const *names, int count, const char *what)
{
    int k = TOK.kind == TK_ID ? ir_name_lookup(names, count, TOK.str, TOK.slen) : -1;
    if (k < 0)
        pr_error(P, "expected %s, found %s", what, pr_tokdesc(P));
    pr_next(P);
    return k;
}

int64_t
pr_expect_int(Parser *P)
{
    if (TOK.kind != TK_INT)
        pr_error(P, "expected an integer, found %s", pr_tokdesc(P));
    int64_t v = TOK.iv;
    pr_next(P);
    return v;
}

const char *
pr_expect_str(Parser *P)
{
    if (TOK.kind != TK_STR)
        pr_error(P, "expected a string, found %s", pr_tokdesc(P));
    const char *s = ir_arena_strdup(&P->m->arena, TOK.str, TOK.slen);
    pr_next(P);
    return s;
}

/* ---- names ------------------------------------------------------------------------------- */

static unsigned
hash_name(const char *s, size_t n)
{
    unsigned h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h & (NBUCKET - 1);
}

static int
find_sym(Parser *P, const char *s, size_t n)
{
    for (int i = P->head[hash_name(s, n)]; i >= 0; i = P->syms[i].prev)
        if (P->syms[i].n == n && memcmp(P->syms[i].name, s, n) == 0)
            return i;
    return -1;
}

static void
bind(Parser *P, const char *s, size_t n, IrRef r, int line, int col)
{
    if (find_sym(P, s, n) >= 0)
        ir_lex_error(&P->L, line, col, "redefinition of value '%%%.*s'", (int)n, s);
    if (P->nsyms == P->capsyms) {
        P->capsyms = P->capsyms ? P->capsyms * 2 : 256;
        P->syms = realloc(P->syms, sizeof(Sym) * (size_t)P->capsyms);
        if (!P->syms)
            ir_die("out of memory");
    }
    unsigned h = hash_name(s, n);
    P->syms[P->nsyms] = (Sym){s, n, r, P->head[h]};
    P->head[h] = P->nsyms++;
}

/* Forgets every name bound after mark (leaving a region). */
static void
pop_syms(Parser *P, int mark)
{
    while (P->nsyms > mark) {
        Sym *s = &P->syms[--P->nsyms];
        P->head[hash_name(s->name, s->n)] = s->prev;
    }
}

Use
pr_use(Parser *P)
{
    if (TOK.kind != TK_VAL)
        pr_error(P, "expected a value, found %s", pr_tokdesc(P));
    Use u = {0, TOK.line, TOK.col, TOK.str, TOK.slen};
    int k = find_sym(P, TOK.str, TOK.slen);
    if (k < 0)
        pr_error(P, "use of undefined value '%%%.*s'", (int)TOK.slen, TOK.str);
    u.r = P->syms[k].ref;
    pr_next(P);
    return u;
}

/* Comma-separated values, at least one and at most max (a comma after the
 * max-th value is left to the caller). Returns the count. */
int
pr_uses(Parser *P, Use *u, int max)
{
    int n = 0;
    do
        u[n++] = pr_use(P);
    while (n < max && pr_accept(P, ','));
    return n;
}

void
pr_refs(const Use *u, int n, IrRef *out)
{
    for (int i = 0; i < n; i++)
        out[i] = u[i].r;
}

/* ---- types --------------------------------------------------------------------------------- */

static IrType
parse_tensor_type(Parser *P)
{
    IrLexer *L = &P->L;
    int line = TOK.line, col = TOK.col;
    L->p = TOK.s + TOK.n; /* right after "tensor" */
    if (*L->p != '<')
        ir_lex_error(L, line, col, "expected '<' after 'tensor'");
    L->p++;
    int64_t shape[IR_MAX_RANK];
    int rank = 0;
    while (*L->p >= '0' && *L->p <= '9') {
        char *end;
        long long d = strtoll(L->p, &end, 10);
        if (*end != 'x')
            ir_lex_error(L, line, col, "expected 'x' after a tensor dimension");
        if (rank == IR_MAX_RANK)
            ir_lex_error(L, line, col, "tensor rank exceeds %d", IR_MAX_RANK);
        if (d <= 0)
            ir_lex_error(L, line, col, "tensor dimensions must be positive");
        shape[rank++] = d;
        L->p = end + 1;
    }
    if (!rank)
        ir_lex_error(L, line, col, "tensor types need a static shape");
    pr_next(P);
    IrType e = pr_type(P);
    if (ir_type_is_tensor(P->m, e))
        ir_lex_error(L, line, col, "tensor of tensors");
    pr_expect(P, '>');
    return ir_type_tensor(P->m, e, rank, shape);
}

IrType
pr_type(Parser *P)
{
    if (TOK.kind == TK_ID) {
        if (pr_is_id(P, "tensor"))
            return parse_tensor_type(P);
        for (int d = 0; d < IR_DTYPE_COUNT; d++) {
            if (ir_dtype_is_signed((IrDtype)d) || d == IR_I1 || ir_dtype_is_float((IrDtype)d) ||
                ir_dtype_is_fp8((IrDtype)d)) {
                const char *s = ir_dtype_ttir((IrDtype)d);
                if (TOK.slen == strlen(s) && memcmp(TOK.str, s, TOK.slen) == 0) {
                    pr_next(P);
                    return ir_type_scalar(P->m, (IrDtype)d);
                }
            }
        }
    }
    if (TOK.kind == TK_BANG && TOK.slen == 6 && memcmp(TOK.str, "tt.ptr", 6) == 0) {
        pr_next(P);
        pr_expect(P, '<');
        IrType e = pr_type(P);
        int as = 0;
        if (pr_accept(P, ','))
            as = (int)pr_expect_int(P);
        pr_expect(P, '>');
        return ir_type_ptr(P->m, e, as);
    }
    pr_error(P, "expected a type, found %s", pr_tokdesc(P));
}

/* "T" or "(T, ...)" (possibly "()"); returns the count. */
int
pr_type_list(Parser *P, IrType *t, int max, bool parens)
{
    int n = 0;
    if (parens) {
        pr_expect(P, '(');
        if (pr_accept(P, ')'))
            return 0;
    }
    do {
        if (n == max)
            pr_error(P, "too many types");
        t[n++] = pr_type(P);
    } while (parens && pr_accept(P, ','));
    if (parens)
        pr_expect(P, ')');
    return n;
}

/* "-> T" or "-> (T, ...)". */
int
pr_results_types(Parser *P, IrType *t, int max)
{
    pr_expect_arrow(P);
    return pr_type_list(P, t, max, pr_is_punct(P, '('));
}

static void
type_str(Parser *P, IrType t, char *buf, size_t cap)
{
    ir_type_str(P->m, t, buf, cap);
}

void
pr_check_type(Parser *P, const Use *u, IrType t)
{
    IrType have = ir_val_type(P->f, u->r);
    if (have == t)
        return;
    char a[256], b[256];
    type_str(P, have, a, sizeof a);
    type_str(P, t, b, sizeof b);
    ir_lex_error(&P->L, u->line, u->col, "'%%%.*s' has type %s, not %s", (int)u->n, u->name, a, b);
}

void
pr_check_types(Parser *P, const Use *u, int n, const IrType *t, int nt)
{
    if (n != nt)
        pr_error(P, "%d operands but %d types", n, nt);
    for (int i = 0; i < n; i++)
        pr_check_type(P, &u[i], t[i]);
}

/* The type with t's shape and element e. */
IrType
pr_with_elem(Parser *P, IrType t, IrType e)
{
    if (!ir_type_is_tensor(P->m, t))
        return e;
    return ir_type_tensor(P->m, e, ir_type_rank(P->m, t), ir_type_shape(P->m, t));
}

/* What tt.load of a pointer of type t produces. */
IrType
pr_load_type(Parser *P, IrType t)
{
    IrType pt = ir_type_pointee(P->m, t);
    if (!pt)
        pr_error(P, "tt.load/tt.store needs a pointer type");
    if (ir_type_is_tensor(P->m, t))
        return pr_with_elem(P, t, pt);
    return pt;
}

/* ---- attributes ---------------------------------------------------------------------------- */

/* Skips an attribute value we do not model (#dialect.attr<...>, affine maps ...). */
static void
skip_value(Parser *P)
{
    int depth = 0;
    while (TOK.kind != TK_EOF) {
        if (depth == 0 && (pr_is_punct(P, ',') || pr_is_punct(P, '}')))
            return;
        if (pr_is_punct(P, '<') || pr_is_punct(P, '(') || pr_is_punct(P, '[') || pr_is_punct(P, '{'))
            depth++;
        if (pr_is_punct(P, '>') || pr_is_punct(P, ')') || pr_is_punct(P, ']') || pr_is_punct(P, '}'))
            depth--;
        pr_next(P);
    }
}

static void
parse_attr_value(Parser *P, Attr *a)
{
    if (TOK.kind == TK_INT || TOK.kind == TK_FLOAT) {
        a->kind = TOK.kind == TK_INT ? A_INT : A_FLOAT;
        a->iv = TOK.iv;
        a->fv = TOK.fv;
        pr_next(P);
        if (pr_accept(P, ':'))
            pr_type(P);
    } else if (pr_is_id(P, "true") || pr_is_id(P, "false")) {
        a->kind = A_BOOL;
        a->iv = pr_is_id(P, "true");
        pr_next(P);
    } else if (TOK.kind == TK_STR) {
        a->kind = A_STR;
        a->str = ir_arena_strdup(&P->m->arena, TOK.str, TOK.slen);
        a->slen = TOK.slen;
        pr_next(P);
    } else if (pr_accept_id(P, "array")) {
        a->kind = A_ARRAY;
        pr_expect(P, '<');
        pr_type(P);
        if (pr_accept(P, ':')) {
            do {
                if (a->narr == MAXARR)
                    pr_error(P, "array attribute too long");
                a->arr[a->narr++] = pr_expect_int(P);
            } while (pr_accept(P, ','));
        }
        pr_expect(P, '>');
    } else if (TOK.kind == TK_ID) {
        a->kind = A_WORD;
        a->str = TOK.str;
        a->slen = TOK.slen;
        pr_next(P);
        if (pr_is_punct(P, '<'))
            skip_value(P);
    } else {
        a->kind = A_OTHER;
        skip_value(P);
    }
}

/* "{name = value, flag, ...}" when present. */
void
pr_attrs(Parser *P, Attrs *as)
{
    as->n = 0;
    if (!pr_accept(P, '{'))
        return;
    if (pr_accept(P, '}'))
        return;
    do {
        if (as->n == (int)(sizeof as->a / sizeof as->a[0]))
            pr_error(P, "too many attributes");
        Attr *a = &as->a[as->n++];
        memset(a, 0, sizeof *a);
        a->line = TOK.line;
        a->col = TOK.col;
        if (TOK.kind != TK_ID && TOK.kind != TK_STR)
            pr_error(P, "expected an attribute name, found %s", pr_tokdesc(P));
        a->name = TOK.str;
        a->n = TOK.slen;
        if (TOK.kind == TK_STR)
            a->name = ir_arena_strdup(&P->m->arena, TOK.str, TOK.slen);
        pr_next(P);
        if (pr_accept(P, '='))
            parse_attr_value(P, a);
        else
            a->kind = A_UNIT;
    } while (pr_accept(P, ','));
    pr_expect(P, '}');
}

Attr *
pr_aget(Attrs *as, const char *name)
{
    for (int i = 0; i < as->n; i++)
        if (as->a[i].n == strlen(name) && memcmp(as->a[i].name, name, as->a[i].n) == 0)
            return &as->a[i];
    return NULL;
}

/* Integer (or bool/unit) attribute 'name', or dflt when absent. */
int64_t
pr_aint(Parser *P, Attrs *as, const char *name, int64_t dflt)
{
    Attr *a = pr_aget(as, name);
    if (!a)
        return dflt;
    if (a->kind == A_UNIT)
        return 1;
    if (a->kind != A_INT && a->kind != A_BOOL)
        ir_lex_error(&P->L, a->line, a->col, "attribute '%s' must be an integer", name);
    return a->iv;
}

Attr *
pr_arr_attr(Parser *P, Attrs *as, const char *name, bool required)
{
    Attr *a = pr_aget(as, name);
    if (!a && required)
        pr_error(P, "missing attribute '%s'", name);
    if (a && a->kind != A_ARRAY)
        ir_lex_error(&P->L, a->line, a->col, "attribute '%s' must be an array<...>", name);
    return a;
}

const char *
pr_astr(Parser *P, Attrs *as, const char *name)
{
    Attr *a = pr_aget(as, name);
    if (!a)
        return NULL;
    if (a->kind != A_STR)
        ir_lex_error(&P->L, a->line, a->col, "attribute '%s' must be a string", name);
    return a->str;
}

/* ---- op construction --------------------------------------------------------------------------- */


IrOp *
pr_new_op(Parser *P, OpHead *h, const IrRef *args, int nargs, const IrType *rt, int nres, int nregs)
{
    if (nres != h->nres)
        ir_lex_error(&P->L, h->line, h->col, "%s produces %d result%s, but %d %s named",
                     ir_opc_name[h->opc], nres, nres == 1 ? "" : "s", h->nres,
                     h->nres == 1 ? "is" : "are");
    IrOp *op = ir_op_create(P->f, h->opc, args, (uint32_t)nargs, rt, (uint32_t)nres, (uint32_t)nregs);
    op->loc = (IrLoc){P->file, (uint32_t)h->line, (uint32_t)h->col};
    ir_block_append(P->blk, op);
    return op;
}

/* Binds the result names of op (after its regions are parsed, so that a region
 * cannot see the results of its own op). */
void
pr_bind_results(Parser *P, OpHead *h, IrOp *op)
{
    char buf[256];
    int k = 0;
    for (int i = 0; i < h->nnames; i++) {
        if (!h->res[i].group) {
            bind(P, h->res[i].s, h->res[i].n, op->res[k++], h->res[i].line, h->res[i].col);
            continue;
        }
        for (int j = 0; j < h->res[i].group; j++) {
            int n = snprintf(buf, sizeof buf, "%.*s#%d", (int)h->res[i].n, h->res[i].s, j);
            char *s = ir_arena_strdup(&P->m->arena, buf, (size_t)n);
            bind(P, s, (size_t)n, op->res[k++], h->res[i].line, h->res[i].col);
        }
    }
}

/* Parses "{ [^bb0(%a: T, ...):] ops }" into b. With header, the block's arguments
 * come from the "^bb" line (nhdr of them expected, -1: any); names of the
 * block's arguments given in names[] are bound first. */
void
pr_region(Parser *P, IrBlock *b, bool header, const Use *names, int nnames)
{
    int mark = P->nsyms;
    IrBlock *saved = P->blk;
    pr_expect(P, '{');
    for (int i = 0; i < nnames; i++)
        bind(P, names[i].name, names[i].n, b->args[i], names[i].line, names[i].col);
    if (TOK.kind == TK_BB) {
        if (!header)
            pr_error(P, "this region takes no block header");
        pr_next(P);
        pr_expect(P, '(');
        if (!pr_is_punct(P, ')')) {
            do {
                if (TOK.kind != TK_VAL)
                    pr_error(P, "expected a block argument, found %s", pr_tokdesc(P));
                IrTok t = TOK;
                pr_next(P);
                pr_expect(P, ':');
                IrRef r = ir_block_add_arg(b, pr_type(P));
                bind(P, t.str, t.slen, r, t.line, t.col);
            } while (pr_accept(P, ','));
        }
        pr_expect(P, ')');
        pr_expect(P, ':');
    }
    P->blk = b;
    while (!pr_is_punct(P, '}')) {
        if (TOK.kind == TK_EOF)
            pr_error(P, "expected '}' to close the region");
        pr_op(P);
    }
    pr_next(P);
    P->blk = saved;
    pop_syms(P, mark);
}

/* MLIR's implicit terminator: an scf region without results may omit scf.yield. */
void
pr_implicit_yield(Parser *P, IrBlock *b)
{
    if (b->last && (ir_opc_flags[b->last->opc] & IR_F_TERM))
        return;
    IrOp *y = ir_op_create(P->f, IR_YIELD, NULL, 0, NULL, 0, 0);
    y->loc = b->parent ? b->parent->loc : P->f->loc;
    ir_block_append(b, y);
}

void
pr_loc(Parser *P, IrLoc *loc)
{
    if (!pr_accept_id(P, "loc"))
        return;
    pr_expect(P, '(');
    if (pr_accept_id(P, "unknown")) {
        *loc = (IrLoc){0, 0, 0};
    } else {
        const char *file = pr_expect_str(P);
        pr_expect(P, ':');
        int64_t line = pr_expect_int(P);
        pr_expect(P, ':');
        int64_t col = pr_expect_int(P);
        *loc = (IrLoc){ir_str_intern(P->m, file), (uint32_t)line, (uint32_t)col};
    }
    pr_expect(P, ')');
}

/* ---- functions and the module ------------------------------------------------------------------ */

static void
parse_func(Parser *P)
{
    int line = TOK.line, col = TOK.col;
    pr_expect_id(P, "tt.func");
    bool pub = true;
    if (pr_accept_id(P, "private"))
        pub = false;
    else
        pr_accept_id(P, "public");
    if (TOK.kind != TK_SYM)
        pr_error(P, "expected a function name (@name), found %s", pr_tokdesc(P));
    char *name = ir_arena_strdup(&P->m->arena, TOK.str, TOK.slen);
    for (IrFunc *g = P->m->funcs; g; g = g->next)
        if (strcmp(g->name, name) == 0)
            pr_error(P, "redefinition of function '@%s'", name);
    pr_next(P);
    IrFunc *f = P->f = ir_func_create(P->m, name, pub);
    f->loc = (IrLoc){P->file, (uint32_t)line, (uint32_t)col};
    Use names[MAXV];
    int32_t div[MAXV];
    int n = 0;
    pr_expect(P, '(');
    if (!pr_is_punct(P, ')')) {
        do {
            if (n == MAXV)
                pr_error(P, "too many parameters");
            if (TOK.kind != TK_VAL)
                pr_error(P, "expected a parameter (%%name: type), found %s", pr_tokdesc(P));
            names[n] = (Use){0, TOK.line, TOK.col, TOK.str, TOK.slen};
            pr_next(P);
            pr_expect(P, ':');
            ir_block_add_arg(f->body, pr_type(P));
            Attrs as;
            pr_attrs(P, &as);
            div[n++] = (int32_t)pr_aint(P, &as, "tt.divisibility", 0);
            IrLoc ignored;
            pr_loc(P, &ignored);
        } while (pr_accept(P, ','));
    }
    pr_expect(P, ')');
    f->argattrs = ir_newv(&P->m->arena, IrArgAttr, n ? n : 1);
    for (int i = 0; i < n; i++)
        f->argattrs[i].divisibility = div[i];
    if (TOK.kind == TK_ARROW) {
        IrType rt[MAXV];
        int nr = pr_results_types(P, rt, MAXV);
        f->rettypes = ir_newv(&P->m->arena, IrType, nr ? nr : 1);
        memcpy(f->rettypes, rt, sizeof(IrType) * (size_t)nr);
        f->nrets = (uint32_t)nr;
    }
    if (pr_accept_id(P, "attributes")) {
        Attrs as;
        pr_attrs(P, &as);
    }
    pr_region(P, f->body, false, names, n);
    pr_loc(P, &f->loc);
    P->f = NULL;
}

static void
parse_module(Parser *P)
{
    bool braces = false;
    if (pr_accept_id(P, "module")) {
        if (TOK.kind == TK_SYM)
            pr_next(P);
        if (pr_accept_id(P, "attributes")) {
            Attrs as;
            pr_attrs(P, &as);
        }
        pr_expect(P, '{');
        braces = true;
    }
    while (pr_is_id(P, "tt.func"))
        parse_func(P);
    if (braces) {
        pr_expect(P, '}');
        IrLoc ignored;
        pr_loc(P, &ignored);
    }
    if (TOK.kind != TK_EOF)
        pr_error(P, "expected 'tt.func'%s, found %s", braces ? " or '}'" : "", pr_tokdesc(P));
}

/* Prints the verifier's diagnostics with the source line under each. */
static void
report_diags(Parser *P, FILE *err)
{
    for (const IrDiag *d = P->m->diags; d; d = d->next) {
        static const char *const sev[] = {"error", "warning", "remark"};
        fprintf(err, "%s:%u:%u: %s: %s\n", d->loc.file ? ir_str(P->m, d->loc.file) : P->L.name,
                d->loc.line, d->loc.col, sev[d->severity], d->msg);
        if (d->loc.file == P->file && d->loc.line)
            ir_lex_show_line(&P->L, err, (int)d->loc.line, (int)d->loc.col);
    }
}

IrModule *
ir_parse_module(const char *text, size_t len, const char *name, FILE *err)
{
    /* the lexer wants a NUL-terminated buffer */
    char *copy = malloc(len + 1);
    if (!copy)
        ir_die("out of memory");
    memcpy(copy, text, len);
    copy[len] = 0;
    Parser *P = calloc(1, sizeof *P);
    if (!P)
        ir_die("out of memory");
    for (int i = 0; i < NBUCKET; i++)
        P->head[i] = -1;
    ir_lex_init(&P->L, copy, name, err);
    P->m = ir_module_create();
    P->file = ir_str_intern(P->m, P->L.name);
    if (setjmp(P->L.jb) == 0) {
        pr_next(P);
        parse_module(P);
        int nerr = 0;
        for (IrFunc *f = P->m->funcs; f; f = f->next)
            nerr += ir_verify_func(f);
        if (nerr) {
            if (err)
                report_diags(P, err);
            ir_module_destroy(P->m);
            P->m = NULL;
        }
    } else {
        ir_module_destroy(P->m);
        P->m = NULL;
    }
    IrModule *m = P->m;
    ir_lex_fini(&P->L);
    free(P->syms);
    free(P);
    free(copy);
    return m;
}
