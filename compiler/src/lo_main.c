/*
 * lo_main.c — lowering of the tile IR to Linalg-level MLIR text: the driver.
 *
 * Walks the kernel in program order and dispatches each op: scalar ops are
 * emitted at once; element-wise tile ops stay lazy (lo_elem.c fuses them into
 * their consumers); loads stay lazy unless a later write or a deeper loop
 * requires reading them now (decided by the pre-pass below); stores, dots,
 * reductions and shape ops are emitted where they stand (lo_mem.c,
 * lo_compute.c); scf.for / scf.if / scf.while are rebuilt with loop-carried
 * pointers carried as index offsets. Contract of the output: docs/compiler.md §1.
 */
#include "lo_int.h"

#include <stdlib.h>
#include <string.h>

/* ---- scopes ------------------------------------------------------------------------- */

int
lo_scope_push(LoCtx *c)
{
    if (c->nscopes == c->capscopes) {
        c->capscopes = c->capscopes ? c->capscopes * 2 : 64;
        c->scope_parent = realloc(c->scope_parent, sizeof(int) * (size_t)c->capscopes);
        if (!c->scope_parent)
            ir_die("out of memory");
    }
    int s = c->nscopes++;
    c->scope_parent[s] = c->scope;
    c->scope = s;
    return s;
}

void lo_scope_pop(LoCtx *c, int saved) { c->scope = saved; }

bool
lo_scope_visible(LoCtx *c, int s)
{
    for (int x = c->scope; x >= 0; x = c->scope_parent[x])
        if (x == s)
            return true;
    return false;
}

/* ---- diagnostics ---------------------------------------------------------------------- */

int
lo_error(LoCtx *c, IrLoc loc, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ir_diag(c->m, loc, 0, "%s", msg);
    c->err = 1;
    return -1;
}

void
lo_remark(LoCtx *c, IrLoc loc, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ir_diag(c->m, loc, 2, "%s", msg);
}

/* ---- scalars --------------------------------------------------------------------------- */

unsigned
lo_const_index(LoCtx *c, int64_t v)
{
    const AExpr *e = ax_const(c, v);
    AExpr *m = (AExpr *)e;
    if (m->memo && lo_scope_visible(c, m->memo_scope))
        return m->memo;
    m->memo = lo_emit(c->out, "arith.constant %lld : index", (long long)v);
    m->memo_scope = c->scope;
    return m->memo;
}

unsigned
lo_scalar(LoCtx *c, IrRef v)
{
    LoVal *lv = &c->vals[v];
    if (lv->kind == LV_SCALAR && lv->ssa)
        return lv->ssa;
    IrOp *d = c->f->vals[v].def;
    if (d && d->opc == IR_CONST) { /* constants may be used before their op in nested scopes */
        IrType t = c->f->vals[v].type;
        return lo_emit_const(c, ir_type_dtype(c->m, t), d->i[0], d->f);
    }
    lo_error(c, d ? d->loc : (IrLoc){0}, "internal: scalar value %u has no lowering", v);
    return lo_emit_const(c, IR_I32, 0, 0);
}

static void
set_scalar(LoCtx *c, IrRef v, unsigned ssa)
{
    LoVal *lv = &c->vals[v];
    lv->kind = LV_SCALAR;
    lv->ssa = ssa;
    lv->scope = c->scope;
}

/* ---- pre-pass: which loads must be read where they stand ------------------------------- */

typedef struct Pre {
    LoCtx *c;
    uint32_t pos;
    uint32_t *defpos, *lastuse;   /* per value */
    uint8_t *defdepth, *usedepth; /* loop depth */
    uint32_t *writes;             /* positions of memory writes */
    uint32_t nwrites, capwrites;
    int depth;
} Pre;

static void
pre_block(Pre *p, IrBlock *b)
{
    for (IrOp *op = b->first; op; op = op->next) {
        uint32_t pos = ++p->pos;
        for (uint32_t i = 0; i < op->nargs; i++) {
            IrRef a = op->args[i];
            if (pos > p->lastuse[a])
                p->lastuse[a] = pos;
            if (p->depth > p->usedepth[a])
                p->usedepth[a] = (uint8_t)p->depth;
        }
        for (uint32_t i = 0; i < op->nres; i++) {
            p->defpos[op->res[i]] = pos;
            p->defdepth[op->res[i]] = (uint8_t)p->depth;
        }
        if (op->opc == IR_STORE || op->opc == IR_ATOMIC_RMW || op->opc == IR_ATOMIC_CAS) {
            if (p->nwrites == p->capwrites) {
                p->capwrites = p->capwrites ? p->capwrites * 2 : 64;
                p->writes = realloc(p->writes, sizeof(uint32_t) * p->capwrites);
                if (!p->writes)
                    ir_die("out of memory");
            }
            p->writes[p->nwrites++] = pos;
        }
        bool loop = op->opc == IR_FOR || op->opc == IR_WHILE;
        p->depth += loop;
        for (uint32_t r = 0; r < op->nregs; r++)
            pre_block(p, op->regs[r]);
        p->depth -= loop;
        /* a value used inside a loop is live until the loop ends */
        if (loop)
            for (uint32_t i = 0; i < p->c->f->nvals; i++)
                if (p->lastuse[i] > pos && p->lastuse[i] <= p->pos)
                    p->lastuse[i] = p->pos;
    }
}

static void
prepass(LoCtx *c)
{
    uint32_t n = c->f->nvals;
    Pre p = {.c = c};
    p.defpos = calloc(n, sizeof(uint32_t));
    p.lastuse = calloc(n, sizeof(uint32_t));
    p.defdepth = calloc(n, 1);
    p.usedepth = calloc(n, 1);
    if (!p.defpos || !p.lastuse || !p.defdepth || !p.usedepth)
        ir_die("out of memory");
    pre_block(&p, c->f->body);
    for (uint32_t v = 1; v < n; v++) {
        IrOp *d = c->f->vals[v].def;
        if (!d || d->opc != IR_LOAD || !ir_type_is_tensor(c->m, c->f->vals[v].type))
            continue;
        bool eager = p.usedepth[v] > p.defdepth[v];
        for (uint32_t w = 0; w < p.nwrites && !eager; w++)
            eager = p.writes[w] > p.defpos[v] && p.writes[w] < p.lastuse[v];
        c->vals[v].eager = eager;
    }
    free(p.defpos);
    c->lastuse = p.lastuse;
    free(p.defdepth);
    free(p.usedepth);
    free(p.writes);
}

/* ---- cost ------------------------------------------------------------------------------- */

static double cost_mult = 1.0;

static void
cost_mem(LoCtx *c, IrOp *op, bool is_store)
{
    if (!c->cost)
        return;
    IrRef v = is_store ? op->args[1] : op->res[0];
    IrType t = c->f->vals[v].type;
    int d = ir_type_dtype(c->m, t);
    uint64_t bytes = (uint64_t)ir_type_numel(c->m, t) * (uint64_t)(((d >= 0 ? ir_dtype_bits((IrDtype)d) : 64) + 7) / 8);
    bytes = (uint64_t)((double)bytes * cost_mult);
    if (is_store)
        c->cost->bytes_stored += bytes;
    else
        c->cost->bytes_loaded += bytes;
}

static void
cost_flops(LoCtx *c, IrOp *op)
{
    if (!c->cost || !op->nres || op->opc == IR_CONST)
        return;
    IrType t = c->f->vals[op->res[0]].type;
    int d = ir_type_dtype(c->m, t);
    if (d < 0 || !ir_dtype_is_float((IrDtype)d) || op->opc == IR_SELECT)
        return;
    if (op->opc == IR_EXTF || op->opc == IR_TRUNCF || op->opc == IR_SITOFP || op->opc == IR_UITOFP)
        return;
    double n = (double)ir_type_numel(c->m, t) * cost_mult * (op->opc == IR_FMA ? 2.0 : 1.0);
    c->cost->flops[d == IR_F64 ? 2 : d == IR_F32 ? 1 : 0] += n;
}

/* ---- structured control flow ---------------------------------------------------------------- */

static int lower_block(LoCtx *c, IrBlock *b);

/* How a loop-carried / branch value travels in MLIR. */
typedef enum { CV_SCALAR, CV_TENSOR, CV_PTR, CV_BPTR } CvKind;

static CvKind
carry_kind(LoCtx *c, IrRef v)
{
    IrType t = c->f->vals[v].type;
    IrType e = ir_type_elem(c->m, t);
    if (ir_type_is_ptr(c->m, e))
        return ir_type_is_tensor(c->m, ir_type_pointee(c->m, e)) && !ir_type_is_tensor(c->m, t) ? CV_BPTR : CV_PTR;
    return ir_type_is_tensor(c->m, t) ? CV_TENSOR : CV_SCALAR;
}

/* Appends the MLIR values (and their types) representing v for a yield or init. */
static int
carry_values(LoCtx *c, IrRef v, unsigned *ssa, char (*types)[200], int *n, IrLoc loc)
{
    switch (carry_kind(c, v)) {
    case CV_SCALAR:
        ssa[*n] = lo_scalar(c, v);
        snprintf(types[*n], 200, "%s", lo_elem_str(c, c->f->vals[v].type));
        (*n)++;
        return 0;
    case CV_TENSOR:
        ssa[*n] = lo_materialize(c, v);
        lo_tensor_type(c, c->f->vals[v].type, types[*n], 200);
        (*n)++;
        return 0;
    case CV_PTR: {
        PtrForm *p = lo_ptrform(c, v);
        if (!p || p->ngen)
            return lo_error(c, loc, "a loop-carried or branch pointer must be an affine pointer expression");
        ssa[*n] = lo_aexpr_emit(c, p->off.base);
        snprintf(types[*n], 200, "index");
        (*n)++;
        return 0;
    }
    case CV_BPTR: {
        LoVal *lv = &c->vals[v];
        if (lv->kind != LV_BPTR)
            return lo_error(c, loc, "unsupported block pointer in loop or branch");
        for (int k = 0; k < lv->bp->rank; k++) {
            ssa[*n] = lo_aexpr_emit(c, lv->bp->off[k]);
            snprintf(types[*n], 200, "index");
            (*n)++;
        }
        return 0;
    }
    }
    return -1;
}

/* Binds IR value v (block arg or op result) to MLIR values ssa[*n...], shaped like
 * 'like' (the init / then-yield value that fixes the pointer structure). */
static int
bind_carried(LoCtx *c, IrRef v, IrRef like, const unsigned *ssa, int *n)
{
    LoVal *lv = &c->vals[v];
    switch (carry_kind(c, v)) {
    case CV_SCALAR:
        set_scalar(c, v, ssa[(*n)++]);
        return 0;
    case CV_TENSOR:
        lv->kind = LV_TENSOR;
        lv->ssa = ssa[(*n)++];
        lv->scope = c->scope;
        lv->as_i8 = ir_type_dtype(c->m, c->f->vals[v].type) == IR_I1;
        return 0;
    case CV_PTR: {
        PtrForm *p = lo_ptrform(c, like);
        if (!p)
            return -1;
        PtrForm *q = ir_new(&c->m->arena, PtrForm);
        *q = *p;
        q->off.base = ax_ssa(c, ssa[(*n)++]);
        lv->kind = LV_PTR;
        lv->ptr = q;
        lv->analysed = 1;
        return 0;
    }
    case CV_BPTR: {
        BlockPtr *b = c->vals[like].bp;
        if (!b)
            return -1;
        BlockPtr *q = ir_new(&c->m->arena, BlockPtr);
        *q = *b;
        for (int k = 0; k < b->rank; k++)
            q->off[k] = ax_ssa(c, ssa[(*n)++]);
        lv->kind = LV_BPTR;
        lv->bp = q;
        return 0;
    }
    }
    return -1;
}

/* Loop-carried pointers must keep their structure (param, strides) around the loop. */
static int
check_carried(LoCtx *c, IrRef init, IrRef yield, IrLoc loc)
{
    CvKind k = carry_kind(c, init);
    if (k == CV_PTR) {
        PtrForm *a = lo_ptrform(c, init), *b = lo_ptrform(c, yield);
        if (!a || !b || a->param != b->param || a->ngen || b->ngen)
            return lo_error(c, loc, "loop-carried pointer must stay an affine offset of the same argument");
        for (int d = 0; d < a->off.rank; d++)
            if (a->off.coef[d] != b->off.coef[d])
                return lo_error(c, loc, "loop-carried pointer tensor changes its strides inside the loop");
    } else if (k == CV_BPTR) {
        BlockPtr *a = c->vals[init].bp, *b = c->vals[yield].bp;
        if (!a || !b || a->param != b->param || a->base != b->base)
            return lo_error(c, loc, "loop-carried block pointer must keep its base pointer");
        for (int d = 0; d < a->rank; d++)
            if (a->shape[d] != b->shape[d] || a->stride[d] != b->stride[d])
                return lo_error(c, loc, "loop-carried block pointer must keep its shape and strides");
    }
    return 0;
}

static void
emit_names(LoCtx *c, const unsigned *ssa, int n)
{
    for (int i = 0; i < n; i++)
        lo_printf(c->out, "%s%%v%u", i ? ", " : "", ssa[i]);
}

static void
emit_types(LoCtx *c, char (*types)[200], int n)
{
    for (int i = 0; i < n; i++)
        lo_printf(c->out, "%s%s", i ? ", " : "", types[i]);
}

#define MAX_CARRY 128

static int
lower_for(LoCtx *c, IrOp *op)
{
    IrBlock *body = op->regs[0];
    unsigned lb = lo_scalar(c, op->args[0]), ub = lo_scalar(c, op->args[1]), st = lo_scalar(c, op->args[2]);
    const char *ivt = lo_elem_str(c, c->f->vals[op->args[0]].type);
    unsigned init[MAX_CARRY];
    char types[MAX_CARRY][200];
    int n = 0;
    int ninit = (int)op->nargs - 3;
    for (int i = 0; i < ninit; i++)
        if (n + 8 > MAX_CARRY || carry_values(c, op->args[3 + i], init, types, &n, op->loc) < 0)
            return -1;
    unsigned res[MAX_CARRY], args[MAX_CARRY];
    for (int i = 0; i < n; i++) {
        res[i] = lo_fresh(c->out);
        args[i] = lo_fresh(c->out);
    }
    unsigned iv = lo_fresh(c->out);
    lo_printf(c->out, "%*s", c->out->indent, "");
    if (n) {
        emit_names(c, res, n);
        lo_printf(c->out, " = ");
    }
    lo_printf(c->out, "scf.for %%v%u = %%v%u to %%v%u step %%v%u", iv, lb, ub, st);
    if (n) {
        lo_printf(c->out, " iter_args(");
        for (int i = 0; i < n; i++)
            lo_printf(c->out, "%s%%v%u = %%v%u", i ? ", " : "", args[i], init[i]);
        lo_printf(c->out, ") -> (");
        emit_types(c, types, n);
        lo_printf(c->out, ")");
    }
    lo_printf(c->out, " : %s {\n", ivt);
    int saved = c->scope;
    lo_scope_push(c);
    c->out->indent += 2;
    set_scalar(c, body->args[0], iv);
    int k = 0;
    for (int i = 0; i < ninit; i++)
        if (bind_carried(c, body->args[1 + i], op->args[3 + i], args, &k) < 0)
            return lo_error(c, op->loc, "unsupported loop-carried value");
    double old_mult = cost_mult;
    IrOp *l0 = c->f->vals[op->args[0]].def, *u0 = c->f->vals[op->args[1]].def, *s0 = c->f->vals[op->args[2]].def;
    if (l0 && u0 && s0 && l0->opc == IR_CONST && u0->opc == IR_CONST && s0->opc == IR_CONST && s0->i[0] > 0) {
        int64_t lbv = l0->i[0], ubv = u0->i[0], stv = s0->i[0];
        cost_mult *= (double)(ubv > lbv ? (ubv - lbv + stv - 1) / stv : 0);
    } else if (c->cost) {
        c->cost->exact = 0;
    }
    int rc = lower_block(c, body);
    cost_mult = old_mult;
    c->out->indent -= 2;
    lo_scope_pop(c, saved);
    if (rc < 0)
        return -1;
    lo_line(c->out, "}");
    int m = 0;
    for (int i = 0; i < ninit; i++)
        if (bind_carried(c, op->res[i], op->args[3 + i], res, &m) < 0)
            return lo_error(c, op->loc, "unsupported loop result");
    return 0;
}

/* The yield of a for/while body: materialise values inside the body scope. */
static int
lower_yield(LoCtx *c, IrOp *op)
{
    IrOp *parent = op->parent->parent;
    unsigned vals[MAX_CARRY];
    char types[MAX_CARRY][200];
    int n = 0;
    for (uint32_t i = 0; i < op->nargs; i++) {
        IrRef like = IR_NONE;
        if (parent && parent->opc == IR_FOR)
            like = parent->args[3 + i];
        else if (parent && parent->opc == IR_WHILE)
            like = parent->args[i];
        if (like && check_carried(c, like, op->args[i], op->loc) < 0)
            return -1;
        /* a loop-carried tile computed element-wise is written into its own iter arg,
         * so bufferization updates it in place instead of allocating per iteration */
        IrRef y = op->args[i];
        LoVal *yl = &c->vals[y];
        if (parent && parent->opc == IR_FOR && yl->kind == LV_LAZY && !(yl->ssa && lo_scope_visible(c, yl->scope)) &&
            carry_kind(c, y) == CV_TENSOR && ir_type_dtype(c->m, c->f->vals[y].type) != IR_I1) {
            IrRef arg = parent->regs[0]->args[1 + i];
            LoVal *al = &c->vals[arg];
            if (al->kind == LV_TENSOR) {
                char tt[200];
                IrType t = c->f->vals[y].type;
                LoIter it;
                lo_iter_from_region(c, NULL, ir_type_rank(c->m, t), ir_type_shape(c->m, t), &it);
                lo_tensor_type(c, t, tt, sizeof tt);
                yl->ssa = lo_generic_update(c, &it, y, arg, al->ssa, tt);
                yl->scope = c->scope;
            }
        }
        if (n + 8 > MAX_CARRY || carry_values(c, op->args[i], vals, types, &n, op->loc) < 0)
            return -1;
    }
    lo_printf(c->out, "%*sscf.yield", c->out->indent, "");
    if (n) {
        lo_printf(c->out, " ");
        emit_names(c, vals, n);
        lo_printf(c->out, " : ");
        emit_types(c, types, n);
    }
    lo_printf(c->out, "\n");
    return 0;
}

static int
lower_if(LoCtx *c, IrOp *op)
{
    unsigned cond = lo_scalar(c, op->args[0]);
    /* result representation: from the IR result types (pointers must agree) */
    char types[MAX_CARRY][200];
    int n = 0;
    for (uint32_t i = 0; i < op->nres; i++) {
        IrRef r = op->res[i];
        CvKind k = carry_kind(c, r);
        if (k == CV_PTR || k == CV_BPTR)
            return lo_error(c, op->loc, "pointers produced by an if/else are not supported; compute the offset instead");
        if (k == CV_SCALAR)
            snprintf(types[n++], 200, "%s", lo_elem_str(c, c->f->vals[r].type));
        else
            lo_tensor_type(c, c->f->vals[r].type, types[n++], 200);
    }
    unsigned res[MAX_CARRY];
    for (int i = 0; i < n; i++)
        res[i] = lo_fresh(c->out);
    lo_printf(c->out, "%*s", c->out->indent, "");
    if (n) {
        emit_names(c, res, n);
        lo_printf(c->out, " = ");
    }
    lo_printf(c->out, "scf.if %%v%u", cond);
    if (n) {
        lo_printf(c->out, " -> (");
        emit_types(c, types, n);
        lo_printf(c->out, ")");
    }
    lo_printf(c->out, " {\n");
    for (int r = 0; r < 2; r++) {
        int saved = c->scope;
        lo_scope_push(c);
        c->out->indent += 2;
        int rc = lower_block(c, op->regs[r]);
        c->out->indent -= 2;
        lo_scope_pop(c, saved);
        if (rc < 0)
            return -1;
        if (r == 0)
            lo_line(c->out, "} else {");
    }
    lo_line(c->out, "}");
    for (int i = 0, k = 0; i < (int)op->nres; i++)
        bind_carried(c, op->res[i], op->res[i], res, &k);
    return 0;
}

static int
lower_while(LoCtx *c, IrOp *op)
{
    IrBlock *before = op->regs[0], *after = op->regs[1];
    unsigned init[MAX_CARRY];
    char types[MAX_CARRY][200];
    int n = 0;
    for (uint32_t i = 0; i < op->nargs; i++)
        if (n + 8 > MAX_CARRY || carry_values(c, op->args[i], init, types, &n, op->loc) < 0)
            return -1;
    unsigned res[MAX_CARRY], bargs[MAX_CARRY], aargs[MAX_CARRY];
    for (int i = 0; i < n; i++) {
        res[i] = lo_fresh(c->out);
        bargs[i] = lo_fresh(c->out);
        aargs[i] = lo_fresh(c->out);
    }
    lo_printf(c->out, "%*s", c->out->indent, "");
    if (n) {
        emit_names(c, res, n);
        lo_printf(c->out, " = ");
    }
    lo_printf(c->out, "scf.while (");
    for (int i = 0; i < n; i++)
        lo_printf(c->out, "%s%%v%u = %%v%u", i ? ", " : "", bargs[i], init[i]);
    lo_printf(c->out, ") : (");
    emit_types(c, types, n);
    lo_printf(c->out, ") -> (");
    emit_types(c, types, n);
    lo_printf(c->out, ") {\n");
    int saved = c->scope;
    lo_scope_push(c);
    c->out->indent += 2;
    int k = 0;
    for (uint32_t i = 0; i < op->nargs; i++)
        if (bind_carried(c, before->args[i], op->args[i], bargs, &k) < 0)
            return lo_error(c, op->loc, "unsupported loop-carried value");
    int rc = lower_block(c, before);
    c->out->indent -= 2;
    lo_scope_pop(c, saved);
    if (rc < 0)
        return -1;
    lo_printf(c->out, "%*s} do {\n%*s^bb0(", c->out->indent, "", c->out->indent, "");
    for (int i = 0; i < n; i++)
        lo_printf(c->out, "%s%%v%u: %s", i ? ", " : "", aargs[i], types[i]);
    lo_printf(c->out, "):\n");
    lo_scope_push(c);
    c->out->indent += 2;
    k = 0;
    for (uint32_t i = 0; i < op->nargs; i++)
        if (bind_carried(c, after->args[i], op->args[i], aargs, &k) < 0)
            return lo_error(c, op->loc, "unsupported loop-carried value");
    rc = lower_block(c, after);
    c->out->indent -= 2;
    lo_scope_pop(c, saved);
    if (rc < 0)
        return -1;
    lo_line(c->out, "}");
    k = 0;
    for (uint32_t i = 0; i < op->nres; i++)
        if (bind_carried(c, op->res[i], op->args[i], res, &k) < 0)
            return lo_error(c, op->loc, "unsupported loop result");
    return 0;
}

static int
lower_condition(LoCtx *c, IrOp *op)
{
    IrOp *w = op->parent->parent;
    unsigned vals[MAX_CARRY];
    char types[MAX_CARRY][200];
    int n = 0;
    unsigned cond = lo_scalar(c, op->args[0]);
    for (uint32_t i = 1; i < op->nargs; i++) {
        if (check_carried(c, w->args[i - 1], op->args[i], op->loc) < 0)
            return -1;
        if (n + 8 > MAX_CARRY || carry_values(c, op->args[i], vals, types, &n, op->loc) < 0)
            return -1;
    }
    lo_printf(c->out, "%*sscf.condition(%%v%u)", c->out->indent, "", cond);
    if (n) {
        lo_printf(c->out, " ");
        emit_names(c, vals, n);
        lo_printf(c->out, " : ");
        emit_types(c, types, n);
    }
    lo_printf(c->out, "\n");
    return 0;
}

/* ---- Proton in-kernel scopes ------------------------------------------------------------ */

static int
scope_id(LoCtx *c, const char *name)
{
    IrCost *k = c->cost;
    for (int i = 0; i < k->nscopes; i++)
        if (!strcmp(k->scope_names[i], name))
            return i;
    if (k->nscopes == IR_MAX_SCOPES)
        return -1;
    k->scope_names[k->nscopes] = name;
    return k->nscopes++;
}

/* A scope boundary makes the work defined before it happen before it: lazy tiles
 * (loads and floating-point computations) still used afterwards are materialised
 * here, so `pl.enter_scope("load") ... pl.exit_scope("load")` measures the load
 * instead of the store that would otherwise absorb it. Integer index arithmetic
 * stays lazy (it is recomputed where needed). */
static void
scope_barrier(LoCtx *c)
{
    for (uint32_t i = 0; i < c->npending; i++) {
        IrRef v = c->pending[i];
        LoVal *lv = &c->vals[v];
        if (lv->kind != LV_LAZY || (lv->ssa && lo_scope_visible(c, lv->scope)) || c->lastuse[v] <= c->pos)
            continue;
        IrOp *d = c->f->vals[v].def;
        int dt = ir_type_dtype(c->m, c->f->vals[v].type);
        if ((d && d->opc == IR_LOAD) || (dt >= 0 && ir_dtype_is_float((IrDtype)dt)))
            lo_materialize(c, v);
    }
    c->npending = 0;
}

static void
note_lazy(LoCtx *c, IrRef v)
{
    if (c->npending == c->cappending) {
        c->cappending = c->cappending ? c->cappending * 2 : 64;
        c->pending = realloc(c->pending, sizeof(IrRef) * c->cappending);
        if (!c->pending)
            ir_die("out of memory");
    }
    c->pending[c->npending++] = v;
}

static int
lower_record(LoCtx *c, IrOp *op)
{
    if (!c->opt->instrument)
        return 0;
    scope_barrier(c);
    int id = scope_id(c, op->s);
    if (id < 0)
        return lo_error(c, op->loc, "too many distinct in-kernel scopes (max %d)", IR_MAX_SCOPES);
    unsigned fp = lo_emit(c->out, "llvm.load %%v%u : !llvm.ptr -> !llvm.ptr", c->pctx_ssa);
    unsigned idv = lo_emit_const(c, IR_I32, id, 0), fl = lo_emit_const(c, IR_I32, op->i[0] ? 1 : 0, 0);
    lo_line(c->out, "llvm.call %%v%u(%%v%u, %%v%u, %%v%u) : !llvm.ptr, (!llvm.ptr, i32, i32) -> ()", fp, c->pctx_ssa,
            idv, fl);
    return 0;
}

/* ---- the walk ----------------------------------------------------------------------------- */

static int lower_op_(LoCtx *c, IrOp *op);

static int
lower_op(LoCtx *c, IrOp *op)
{
    c->pos++;
    int rc = lower_op_(c, op);
    IrRef r0 = op->nres ? op->res[0] : IR_NONE;
    if (rc == 0 && r0 && c->vals[r0].kind == LV_LAZY)
        note_lazy(c, r0);
    return rc;
}

static int
lower_op_(LoCtx *c, IrOp *op)
{
    IrFunc *f = c->f;
    IrRef r0 = op->nres ? op->res[0] : IR_NONE;
    bool tensor = r0 && ir_type_is_tensor(c->m, f->vals[r0].type);
    switch (op->opc) {
    case IR_GET_PROGRAM_ID:
        set_scalar(c, r0, c->pid_ssa[op->i[0]]);
        return 0;
    case IR_GET_NUM_PROGRAMS:
        set_scalar(c, r0, c->num_ssa[op->i[0]]);
        return 0;
    case IR_LOAD:
        cost_mem(c, op, false);
        return lo_load(c, op);
    case IR_STORE:
        cost_mem(c, op, true);
        return lo_store(c, op);
    case IR_MAKE_TENSOR_PTR:
        return lo_make_block_ptr(c, op);
    case IR_ADVANCE:
        return lo_advance(c, op);
    case IR_ADDPTR:
    case IR_PTR_BITCAST:
        c->vals[r0].kind = LV_PTR; /* analysed on demand (lo_ptrform) */
        return 0;
    case IR_SPLAT:
    case IR_BROADCAST:
    case IR_EXPAND_DIMS:
    case IR_TRANS:
        if (ir_type_is_ptr(c->m, ir_type_elem(c->m, f->vals[r0].type))) {
            c->vals[r0].kind = LV_PTR;
            return 0;
        }
        c->vals[r0].kind = LV_LAZY;
        return 0;
    case IR_MAKE_RANGE:
        c->vals[r0].kind = LV_LAZY;
        return 0;
    case IR_DOT:
        return lo_dot(c, op);
    case IR_REDUCE:
        return lo_reduce(c, op);
    case IR_SCAN:
        return lo_scan(c, op);
    case IR_RESHAPE:
    case IR_CAT:
    case IR_JOIN:
    case IR_SPLIT:
    case IR_GATHER:
    case IR_HISTOGRAM:
        return lo_shape_op(c, op);
    case IR_FOR:
        return lower_for(c, op);
    case IR_IF:
        return lower_if(c, op);
    case IR_WHILE:
        return lower_while(c, op);
    case IR_YIELD:
        return lower_yield(c, op);
    case IR_CONDITION:
        return lower_condition(c, op);
    case IR_RETURN:
        if (op->parent == f->body)
            lo_line(c->out, "return");
        return 0;
    case IR_PROTON_RECORD:
        return lower_record(c, op);
    case IR_ATOMIC_RMW:
    case IR_ATOMIC_CAS:
        cost_mem(c, op, true);
        if (c->cost)
            c->cost->atomics++;
        return lo_atomic(c, op);
    case IR_PRINT:
    case IR_ASSERT:
    case IR_CALL:
    case IR_EXTERN_ELEM:
    case IR_INT_TO_PTR:
    case IR_PTR_TO_INT:
    case IR_ASSUME:
        return lo_error(c, op->loc, "%s is not supported by the CPU backend yet", ir_opc_name[op->opc]);
    default:
        break;
    }
    if (!strncmp(ir_opc_name[op->opc], "xsmt", 4))
        return lo_error(c, op->loc, "%s is not supported by the CPU backend yet", ir_opc_name[op->opc]);
    if (!(ir_opc_flags[op->opc] & IR_F_ELEM))
        return lo_error(c, op->loc, "internal: no lowering for %s", ir_opc_name[op->opc]);
    cost_flops(c, op);
    if (tensor) {
        c->vals[r0].kind = LV_LAZY;
        return 0;
    }
    if (op->opc == IR_SELECT && ir_type_is_ptr(c->m, f->vals[r0].type))
        return lo_error(c, op->loc, "selecting between pointers is not supported yet");
    unsigned a[3] = {0};
    for (uint32_t i = 0; i < op->nargs && i < 3; i++) {
        IrRef x = op->args[i];
        if (ir_type_is_tensor(c->m, f->vals[x].type))
            return lo_error(c, op->loc, "internal: scalar op with a tensor operand");
        a[i] = lo_scalar(c, x);
    }
    set_scalar(c, r0, lo_emit_scalar_op(c, op, a));
    return 0;
}

static int
lower_block(LoCtx *c, IrBlock *b)
{
    for (IrOp *op = b->first; op; op = op->next)
        if (lower_op(c, op) < 0 && c->err)
            return -1;
    return c->err ? -1 : 0;
}

/* ---- module ----------------------------------------------------------------------------------- */

static const char *
param_type(LoCtx *c, IrType t, char *buf, size_t cap)
{
    if (ir_type_is_ptr(c->m, t)) {
        IrType e = ir_type_pointee(c->m, t);
        int d = ir_type_dtype(c->m, e);
        if (d < 0)
            return NULL;
        snprintf(buf, cap, "memref<?x%s>", d == IR_I1 ? "i8" : ir_dtype_mlir((IrDtype)d));
        return buf;
    }
    return lo_mlir_type(c, t, buf, cap);
}

static bool
block_has_math(const IrBlock *b)
{
    for (const IrOp *op = b->first; op; op = op->next) {
        if (lo_math_expands((IrOpc)op->opc))
            return true;
        for (uint32_t i = 0; i < op->nregs; i++)
            if (block_has_math(op->regs[i]))
                return true;
    }
    return false;
}

int
lo_vector_bytes(IrModule *m, int usual, int widest)
{
    if (widest <= usual)
        return usual;
    for (IrFunc *f = m->funcs; f; f = f->next)
        if (block_has_math(f->body))
            return widest;
    return usual;
}

int
lo_lower_module(IrModule *m, const LoOptions *opt, char **text, size_t *len, IrCost *cost)
{
    IrFunc *f = NULL;
    for (IrFunc *g = m->funcs; g; g = g->next)
        if (g->is_public)
            f = g;
    if (!f) {
        ir_diag(m, (IrLoc){0}, 0, "no public kernel function in the module");
        return -1;
    }
    static IrCost dummy;
    if (!cost)
        cost = &dummy;
    memset(cost, 0, sizeof *cost);
    cost->exact = 1;
    cost_mult = 1.0;
    LoBuf out;
    lo_buf_init(&out);
    unsigned ctr = 1;
    out.ctr = &ctr;
    LoCtx c = {.m = m, .f = f, .opt = opt, .out = &out, .cost = cost, .scope = -1};
    c.vals = calloc(f->nvals, sizeof(LoVal));
    c.param_ssa = calloc(f->body->nargs + 1, sizeof(unsigned));
    if (!c.vals || !c.param_ssa)
        ir_die("out of memory");
    lo_scope_push(&c); /* root scope 0 */
    prepass(&c);

    lo_printf(&out, "module {\n  func.func @%s(", f->name);
    char tb[200];
    for (uint32_t i = 0; i < f->body->nargs; i++) {
        IrRef a = f->body->args[i];
        const char *t = param_type(&c, f->vals[a].type, tb, sizeof tb);
        if (!t) {
            lo_error(&c, f->loc, "parameter %u has an unsupported type", i);
            break;
        }
        c.param_ssa[i] = lo_fresh(&out);
        lo_printf(&out, "%%v%u: %s, ", c.param_ssa[i], t);
        if (!ir_type_is_ptr(c.m, f->vals[a].type))
            set_scalar(&c, a, c.param_ssa[i]);
        else
            c.vals[a].kind = LV_PTR;
    }
    for (int k = 0; k < 3; k++) {
        c.pid_ssa[k] = lo_fresh(&out);
        lo_printf(&out, "%%v%u: i32, ", c.pid_ssa[k]);
    }
    for (int k = 0; k < 3; k++) {
        c.num_ssa[k] = lo_fresh(&out);
        lo_printf(&out, "%%v%u: i32, ", c.num_ssa[k]);
    }
    c.pctx_ssa = lo_fresh(&out);
    lo_printf(&out, "%%v%u: !llvm.ptr) {\n", c.pctx_ssa);
    out.indent = 4;
    int rc = c.err ? -1 : lower_block(&c, f->body);
    out.indent = 0;
    lo_printf(&out, "  }\n}\n");
    free(c.vals);
    free(c.param_ssa);
    free(c.scope_parent);
    free(c.lastuse);
    free(c.pending);
    free(c.ahash);
    if (rc < 0 || c.err) {
        lo_buf_fini(&out);
        return -1;
    }
    *text = lo_buf_take(&out, len);
    return 0;
}
