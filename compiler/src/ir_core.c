/*
 * ir_core.c — modules, functions, blocks, ops and values of the tile IR.
 *
 * Everything is allocated from the module arena (ir_arena.c). The op tables
 * (names, arity, flags, syntax class) are generated from ir_ops.h.
 */
#include "ir_int.h"

#include <stdlib.h>
#include <string.h>

/* ---- op tables (generated from ir_ops.h) ---------------------------------------- */

const char *const ir_opc_name[IR_OPC_COUNT] = {
#define IR_X(id, name, na, nr, fl, fmt) name,
    IR_OPS(IR_X)
#undef IR_X
};
const int8_t ir_opc_nargs[IR_OPC_COUNT] = {
#define IR_X(id, name, na, nr, fl, fmt) na,
    IR_OPS(IR_X)
#undef IR_X
};
const int8_t ir_opc_nres[IR_OPC_COUNT] = {
#define IR_X(id, name, na, nr, fl, fmt) nr,
    IR_OPS(IR_X)
#undef IR_X
};
const uint8_t ir_opc_flags[IR_OPC_COUNT] = {
#define IR_X(id, name, na, nr, fl, fmt) fl,
    IR_OPS(IR_X)
#undef IR_X
};
const uint8_t ir_opc_fmt[IR_OPC_COUNT] = {
#define IR_X(id, name, na, nr, fl, fmt) fmt,
    IR_OPS(IR_X)
#undef IR_X
};

IrOpc
ir_opc_lookup(const char *name, size_t n)
{
    for (int i = 0; i < IR_OPC_COUNT; i++)
        if (strlen(ir_opc_name[i]) == n && memcmp(ir_opc_name[i], name, n) == 0)
            return (IrOpc)i;
    return IR_OPC_COUNT;
}

/* ---- failure ------------------------------------------------------------------------- */

_Noreturn void
ir_die_at(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "tritium: internal error at %s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}

/* ---- modules --------------------------------------------------------------------------- */

IrModule *
ir_module_create(void)
{
    IrModule *m = calloc(1, sizeof *m);
    if (!m)
        ir_die("out of memory");
    ir_types_init(m);
    m->capstrs = 16;
    m->strs = ir_newv(&m->arena, const char *, m->capstrs);
    m->strs[0] = "";
    m->nstrs = 1;
    return m;
}

void
ir_module_destroy(IrModule *m)
{
    if (!m)
        return;
    ir_arena_fini(&m->arena);
    free(m);
}

uint32_t
ir_str_intern(IrModule *m, const char *s)
{
    if (!s || !*s)
        return 0;
    for (uint32_t i = 1; i < m->nstrs; i++)
        if (strcmp(m->strs[i], s) == 0)
            return i;
    if (m->nstrs == m->capstrs) {
        m->strs = ir_arena_grow(&m->arena, m->strs, sizeof(char *) * m->capstrs,
                                sizeof(char *) * m->capstrs * 2);
        m->capstrs *= 2;
    }
    m->strs[m->nstrs] = ir_arena_strdup(&m->arena, s, strlen(s));
    return m->nstrs++;
}

const char *ir_str(const IrModule *m, uint32_t id) { return id < m->nstrs ? m->strs[id] : ""; }

/* ---- diagnostics ------------------------------------------------------------------------ */

void
ir_vdiag(IrModule *m, IrLoc loc, int severity, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    IrDiag *d = ir_new(&m->arena, IrDiag);
    d->loc = loc;
    d->severity = severity;
    d->msg = ir_arena_alloc(&m->arena, (size_t)n + 1);
    vsnprintf(d->msg, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    if (m->lastdiag)
        m->lastdiag->next = d;
    else
        m->diags = d;
    m->lastdiag = d;
    if (severity == 0)
        m->nerrors++;
}

void
ir_diag(IrModule *m, IrLoc loc, int severity, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ir_vdiag(m, loc, severity, fmt, ap);
    va_end(ap);
}

int ir_module_num_errors(const IrModule *m) { return (int)m->nerrors; }

void
ir_module_print_diags(const IrModule *m, FILE *out)
{
    static const char *const sev[] = {"error", "warning", "remark"};
    for (const IrDiag *d = m->diags; d; d = d->next)
        fprintf(out, "%s:%u:%u: %s: %s\n", d->loc.file ? ir_str(m, d->loc.file) : "<unknown>",
                d->loc.line, d->loc.col, sev[d->severity], d->msg);
}

const char *
ir_module_first_error(const IrModule *m, const char **file, int *line, int *col)
{
    for (const IrDiag *d = m->diags; d; d = d->next) {
        if (d->severity != 0)
            continue;
        if (file)
            *file = ir_str(m, d->loc.file);
        if (line)
            *line = (int)d->loc.line;
        if (col)
            *col = (int)d->loc.col;
        return d->msg;
    }
    return NULL;
}

const char *
ir_module_diag(const IrModule *m, int i, int *severity, const char **file, int *line, int *col)
{
    const IrDiag *d = m->diags;
    while (d && i-- > 0)
        d = d->next;
    if (!d)
        return NULL;
    *severity = d->severity;
    *file = ir_str(m, d->loc.file);
    *line = (int)d->loc.line;
    *col = (int)d->loc.col;
    return d->msg;
}

void
ir_module_clear_diags(IrModule *m)
{
    m->diags = m->lastdiag = NULL;
    m->nerrors = 0;
}

/* ---- functions, values, blocks ----------------------------------------------------------- */

IrFunc *
ir_func_create(IrModule *m, const char *name, bool is_public)
{
    IrFunc *f = ir_new(&m->arena, IrFunc);
    f->mod = m;
    f->name = ir_arena_strdup(&m->arena, name, strlen(name));
    f->is_public = is_public;
    f->capvals = 64;
    f->vals = ir_newv(&m->arena, IrVal, f->capvals);
    f->nvals = 1; /* IR_NONE */
    f->body = ir_block_create(f, NULL);
    if (m->lastfunc)
        m->lastfunc->next = f;
    else
        m->funcs = f;
    m->lastfunc = f;
    return f;
}

IrRef
ir_val_new(IrFunc *f, IrType t)
{
    if (f->nvals == f->capvals) {
        f->vals = ir_arena_grow(&f->mod->arena, f->vals, sizeof(IrVal) * f->capvals,
                                sizeof(IrVal) * f->capvals * 2);
        f->capvals *= 2;
    }
    IrRef r = f->nvals++;
    f->vals[r].type = t;
    return r;
}

IrBlock *
ir_block_create(IrFunc *f, IrOp *parent)
{
    IrBlock *b = ir_new(&f->mod->arena, IrBlock);
    b->fn = f;
    b->parent = parent;
    return b;
}

IrRef
ir_block_add_arg(IrBlock *b, IrType t)
{
    IrFunc *f = b->fn;
    if (b->nargs == b->capargs) {
        uint32_t cap = b->capargs ? b->capargs * 2 : 4;
        b->args = ir_arena_grow(&f->mod->arena, b->args, sizeof(IrRef) * b->capargs,
                                sizeof(IrRef) * cap);
        b->capargs = cap;
    }
    IrRef r = ir_val_new(f, t);
    f->vals[r].blk = b;
    f->vals[r].idx = b->nargs;
    b->args[b->nargs++] = r;
    return r;
}

/* ---- ops ------------------------------------------------------------------------------------ */

IrOp *
ir_op_create(IrFunc *f, IrOpc opc, const IrRef *args, uint32_t nargs, const IrType *restypes,
             uint32_t nres, uint32_t nregs)
{
    IrArena *a = &f->mod->arena;
    IrOp *op = ir_new(a, IrOp);
    op->opc = (uint16_t)opc;
    op->nargs = nargs;
    op->args = ir_newv(a, IrRef, nargs ? nargs : 1);
    if (nargs)
        memcpy(op->args, args, sizeof(IrRef) * nargs);
    op->nres = nres;
    op->res = ir_newv(a, IrRef, nres ? nres : 1);
    for (uint32_t i = 0; i < nres; i++) {
        IrRef r = ir_val_new(f, restypes[i]);
        f->vals[r].def = op;
        f->vals[r].idx = i;
        op->res[i] = r;
    }
    op->nregs = nregs;
    op->regs = ir_newv(a, IrBlock *, nregs ? nregs : 1);
    for (uint32_t i = 0; i < nregs; i++)
        op->regs[i] = ir_block_create(f, op);
    return op;
}

IrRef
ir_op_result(const IrOp *op, uint32_t i)
{
    if (i >= op->nres)
        ir_die("result %u of %s out of range", i, ir_opc_name[op->opc]);
    return op->res[i];
}

void
ir_block_append(IrBlock *b, IrOp *op)
{
    op->parent = b;
    op->next = NULL;
    op->prev = b->last;
    if (b->last)
        b->last->next = op;
    else
        b->first = op;
    b->last = op;
}

void
ir_op_insert_before(IrOp *pos, IrOp *op)
{
    IrBlock *b = pos->parent;
    op->parent = b;
    op->next = pos;
    op->prev = pos->prev;
    if (pos->prev)
        pos->prev->next = op;
    else
        b->first = op;
    pos->prev = op;
}

void
ir_op_insert_after(IrOp *pos, IrOp *op)
{
    if (pos->next) {
        ir_op_insert_before(pos->next, op);
        return;
    }
    ir_block_append(pos->parent, op);
}

void
ir_op_unlink(IrOp *op)
{
    IrBlock *b = op->parent;
    if (!b)
        return;
    if (op->prev)
        op->prev->next = op->next;
    else
        b->first = op->next;
    if (op->next)
        op->next->prev = op->prev;
    else
        b->last = op->prev;
    op->prev = op->next = NULL;
    op->parent = NULL;
}

void
ir_op_set_ints(IrFunc *f, IrOp *op, const int64_t *v, uint32_t n)
{
    op->nints = n;
    op->ints = ir_newv(&f->mod->arena, int64_t, n ? n : 1);
    if (n)
        memcpy(op->ints, v, sizeof(int64_t) * n);
}

/* ---- walking --------------------------------------------------------------------------------- */

void
ir_walk(IrBlock *b, IrOpVisit visit, void *user)
{
    for (IrOp *op = b->first, *next; op; op = next) {
        next = op->next; /* the visitor may unlink op */
        visit(op, user);
        for (uint32_t r = 0; r < op->nregs; r++)
            ir_walk(op->regs[r], visit, user);
    }
}

static void
count_uses(IrOp *op, void *user)
{
    IrFunc *f = user;
    for (uint32_t i = 0; i < op->nargs; i++)
        f->vals[op->args[i]].nuse++;
}

void
ir_fill_uses(IrFunc *f)
{
    for (uint32_t i = 0; i < f->nvals; i++)
        f->vals[i].nuse = 0;
    ir_walk(f->body, count_uses, f);
}

typedef struct Repl {
    IrRef from, to;
} Repl;

static void
replace_in_op(IrOp *op, void *user)
{
    Repl *r = user;
    for (uint32_t i = 0; i < op->nargs; i++)
        if (op->args[i] == r->from)
            op->args[i] = r->to;
}

void
ir_replace_uses(IrFunc *f, IrRef from, IrRef to)
{
    Repl r = {from, to};
    ir_walk(f->body, replace_in_op, &r);
}
