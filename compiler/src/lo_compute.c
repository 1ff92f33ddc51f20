/*
 * lo_compute.c — dot products, reductions and shape-changing ops in the Linalg
 * lowering. Their results are materialised tensors (LV_TENSOR).
 *
 *   tt.dot      -> linalg.matmul / linalg.batch_matmul on materialised operands
 *   tt.reduce   -> linalg.generic with a reduction iterator; the element-wise
 *                  producer of the input is fused into the body (lo_elem.c)
 *   tt.reshape  -> tensor.collapse_shape + tensor.expand_shape
 *   tt.cat/join/split -> tensor.insert_slice / tensor.extract_slice
 */
#include "lo_int.h"

#include <math.h>
#include <string.h>

static void
set_tensor(LoCtx *c, IrRef v, unsigned ssa)
{
    LoVal *lv = &c->vals[v];
    lv->kind = LV_TENSOR;
    lv->ssa = ssa;
    lv->scope = c->scope;
    lv->as_i8 = ir_type_dtype(c->m, c->f->vals[v].type) == IR_I1;
}

static const char *
ttype(LoCtx *c, IrRef v, char *buf)
{
    return lo_tensor_type(c, c->f->vals[v].type, buf, 200);
}

int
lo_dot(LoCtx *c, IrOp *op)
{
    unsigned a = lo_materialize(c, op->args[0]);
    unsigned b = lo_materialize(c, op->args[1]);
    unsigned acc = lo_materialize(c, op->args[2]);
    char ta[200], tb[200], tc[200];
    ttype(c, op->args[0], ta);
    ttype(c, op->args[1], tb);
    ttype(c, op->args[2], tc);
    int rank = ir_type_rank(c->m, c->f->vals[op->res[0]].type);
    unsigned r = lo_emit(c->out, "linalg.%s ins(%%v%u, %%v%u : %s, %s) outs(%%v%u : %s) -> %s",
                         rank == 3 ? "batch_matmul" : "matmul", a, b, ta, tb, acc, tc, tc);
    set_tensor(c, op->res[0], r);
    const int64_t *as = ir_type_shape(c->m, c->f->vals[op->args[0]].type);
    const int64_t *rs = ir_type_shape(c->m, c->f->vals[op->res[0]].type);
    double fl = 2.0 * (double)as[rank - 1] * (double)rs[rank - 2] * (double)rs[rank - 1] * (rank == 3 ? (double)rs[0] : 1.0);
    int dt = ir_type_dtype(c->m, c->f->vals[op->args[0]].type);
    if (c->cost)
        c->cost->flops[dt == IR_F64 ? 2 : dt == IR_F32 ? 1 : 0] += fl;
    return 0;
}

/* Identity of a single-op combine, as a constant of dtype d; false if unknown. */
static bool
combine_identity(IrOpc opc, int d, int64_t *iv, double *fv)
{
    bool f = ir_dtype_is_float((IrDtype)d);
    int bits = ir_dtype_bits((IrDtype)d);
    *iv = 0;
    *fv = 0;
    switch (opc) {
    case IR_ADDF: case IR_ADDI: case IR_ORI: case IR_XORI: case IR_MAXUI:
        return true;
    case IR_MULF: *fv = 1; return true;
    case IR_MULI: *iv = 1; return true;
    case IR_ANDI: *iv = -1; return true;
    case IR_MAXNUMF: case IR_MAXIMUMF: *fv = -INFINITY; return f;
    case IR_MINNUMF: case IR_MINIMUMF: *fv = INFINITY; return f;
    case IR_MAXSI: *iv = bits == 64 ? INT64_MIN : -(1LL << (bits - 1)); return true;
    case IR_MINSI: *iv = bits == 64 ? INT64_MAX : (1LL << (bits - 1)) - 1; return true;
    case IR_MINUI: *iv = -1; return true;
    default:
        return false;
    }
}

/* The single combine op of a one-operand reduce region, or NULL. */
static IrOp *
simple_combine(IrBlock *region)
{
    IrOp *op = region->first;
    if (!op || !op->next || op->next->opc != IR_REDUCE_RETURN || op->next->next)
        return NULL;
    if (op->nargs != 2 || op->nres != 1)
        return NULL;
    IrRef a = region->args[0], b = region->args[1];
    if (!((op->args[0] == a && op->args[1] == b) || (op->args[0] == b && op->args[1] == a)))
        return NULL;
    if (op->next->args[0] != op->res[0])
        return NULL;
    return op;
}

/* Result type of a reduction (rank r-1, rank 0 → tensor<T>). */
static void
red_type(LoCtx *c, IrRef v, int axis, char *buf, size_t cap, const char **elem)
{
    IrType t = c->f->vals[v].type;
    int r = ir_type_rank(c->m, t);
    const int64_t *s = ir_type_shape(c->m, t);
    *elem = lo_elem_str(c, t);
    size_t n = (size_t)snprintf(buf, cap, "tensor<");
    for (int d = 0; d < r; d++)
        if (d != axis)
            n += (size_t)snprintf(buf + n, cap - n, "%lldx", (long long)s[d]);
    snprintf(buf + n, cap - n, "%s>", *elem);
}

int
lo_reduce(LoCtx *c, IrOp *op)
{
    int axis = (int)op->i[0];
    IrBlock *region = op->regs[0];
    if (op->nargs != 1)
        return lo_error(c, op->loc, "reductions over several operands (argmax/argmin, tuples) are not supported yet");
    IrRef x = op->args[0];
    IrOp *comb = simple_combine(region);
    int d = ir_type_dtype(c->m, c->f->vals[x].type);
    int64_t iv;
    double fv;
    if (!comb || !combine_identity((IrOpc)comb->opc, d, &iv, &fv))
        return lo_error(c, op->loc, "this reduction combine function is not supported yet");
    char rt[200];
    const char *elem;
    red_type(c, x, axis, rt, sizeof rt, &elem);
    unsigned id = lo_emit_const(c, d, iv, fv);
    unsigned e = lo_emit(c->out, "tensor.empty() : %s", rt);
    unsigned init = lo_emit(c->out, "linalg.fill ins(%%v%u : %s) outs(%%v%u : %s) -> %s", id, elem, e, rt, rt);
    unsigned r = lo_generic_reduce(c, x, axis, region, init, rt);
    IrRef res = op->res[0];
    if (ir_type_rank(c->m, c->f->vals[res].type) == 0) {
        unsigned s = lo_emit(c->out, "tensor.extract %%v%u[] : %s", r, rt);
        LoVal *lv = &c->vals[res];
        lv->kind = LV_SCALAR;
        lv->ssa = s;
        lv->scope = c->scope;
    } else {
        set_tensor(c, res, r);
    }
    return 0;
}

int
lo_scan(LoCtx *c, IrOp *op)
{
    return lo_error(c, op->loc, "tl.associative_scan / cumsum are not supported yet");
}

/* tensor.collapse_shape to 1-D then tensor.expand_shape to the new shape. */
static int
reshape(LoCtx *c, IrOp *op)
{
    IrRef x = op->args[0], res = op->res[0];
    unsigned t = lo_materialize(c, x);
    IrType xt = c->f->vals[x].type, rt = c->f->vals[res].type;
    int xr = ir_type_rank(c->m, xt), rr = ir_type_rank(c->m, rt);
    int64_t n = ir_type_numel(c->m, xt);
    char tx[200], tr[200], t1[200], grp[128];
    lo_tensor_type(c, xt, tx, sizeof tx);
    lo_tensor_type(c, rt, tr, sizeof tr);
    const char *elem = strrchr(tx, 'x') + 1;
    snprintf(t1, sizeof t1, "tensor<%lldx%s", (long long)n, elem);
    if (xr > 1) {
        size_t k = (size_t)snprintf(grp, sizeof grp, "[[");
        for (int d = 0; d < xr; d++)
            k += (size_t)snprintf(grp + k, sizeof grp - k, "%s%d", d ? ", " : "", d);
        snprintf(grp + k, sizeof grp - k, "]]");
        t = lo_emit(c->out, "tensor.collapse_shape %%v%u %s : %s into %s", t, grp, tx, t1);
    }
    if (rr > 1) {
        char os[128];
        size_t k = (size_t)snprintf(grp, sizeof grp, "[["), ko = 0;
        const int64_t *s = ir_type_shape(c->m, rt);
        for (int d = 0; d < rr; d++) {
            k += (size_t)snprintf(grp + k, sizeof grp - k, "%s%d", d ? ", " : "", d);
            ko += (size_t)snprintf(os + ko, sizeof os - ko, "%s%lld", d ? ", " : "", (long long)s[d]);
        }
        snprintf(grp + k, sizeof grp - k, "]]");
        t = lo_emit(c->out, "tensor.expand_shape %%v%u %s output_shape [%s] : %s into %s", t, grp, os, t1, tr);
    }
    set_tensor(c, res, t);
    return 0;
}

static int
cat(LoCtx *c, IrOp *op)
{
    unsigned a = lo_materialize(c, op->args[0]), b = lo_materialize(c, op->args[1]);
    char ta[200], tb[200], tr[200];
    ttype(c, op->args[0], ta);
    ttype(c, op->args[1], tb);
    ttype(c, op->res[0], tr);
    int64_t na = ir_type_shape(c->m, c->f->vals[op->args[0]].type)[0];
    int64_t nb = ir_type_shape(c->m, c->f->vals[op->args[1]].type)[0];
    unsigned e = lo_emit(c->out, "tensor.empty() : %s", tr);
    e = lo_emit(c->out, "tensor.insert_slice %%v%u into %%v%u[0] [%lld] [1] : %s into %s", a, e, (long long)na, ta, tr);
    e = lo_emit(c->out, "tensor.insert_slice %%v%u into %%v%u[%lld] [%lld] [1] : %s into %s", b, e, (long long)na,
                (long long)nb, tb, tr);
    set_tensor(c, op->res[0], e);
    return 0;
}

/* join: [..] x2 -> [.., 2]; split: [.., 2] -> 2 x [..]. */
static void
slice_text(const int64_t *s, int r, int last, char *offs, char *sizes, char *strides, size_t cap)
{
    size_t a = 0, b = 0, d = 0;
    for (int k = 0; k < r; k++) {
        const char *sep = k ? ", " : "";
        a += (size_t)snprintf(offs + a, cap - a, "%s%d", sep, k == r - 1 ? last : 0);
        b += (size_t)snprintf(sizes + b, cap - b, "%s%lld", sep, (long long)(k == r - 1 ? 1 : s[k]));
        d += (size_t)snprintf(strides + d, cap - d, "%s1", sep);
    }
}

static int
join(LoCtx *c, IrOp *op)
{
    IrType rt = c->f->vals[op->res[0]].type;
    int r = ir_type_rank(c->m, rt);
    const int64_t *s = ir_type_shape(c->m, rt);
    char tr[200], offs[256], sizes[256], strides[128];
    lo_tensor_type(c, rt, tr, sizeof tr);
    unsigned e = lo_emit(c->out, "tensor.empty() : %s", tr);
    for (int i = 0; i < 2; i++) {
        unsigned x = lo_materialize(c, op->args[i]);
        char tx[200];
        ttype(c, op->args[i], tx);
        slice_text(s, r, i, offs, sizes, strides, sizeof offs);
        e = lo_emit(c->out, "tensor.insert_slice %%v%u into %%v%u[%s] [%s] [%s] : %s into %s", x, e, offs, sizes,
                    strides, tx, tr);
    }
    set_tensor(c, op->res[0], e);
    return 0;
}

static int
split(LoCtx *c, IrOp *op)
{
    IrType xt = c->f->vals[op->args[0]].type;
    int r = ir_type_rank(c->m, xt);
    const int64_t *s = ir_type_shape(c->m, xt);
    unsigned x = lo_materialize(c, op->args[0]);
    char tx[200], offs[256], sizes[256], strides[128];
    lo_tensor_type(c, xt, tx, sizeof tx);
    for (int i = 0; i < 2; i++) {
        char tr[200];
        ttype(c, op->res[i], tr);
        slice_text(s, r, i, offs, sizes, strides, sizeof offs);
        unsigned t = lo_emit(c->out, "tensor.extract_slice %%v%u[%s] [%s] [%s] : %s to %s", x, offs, sizes, strides,
                             tx, tr);
        set_tensor(c, op->res[i], t);
    }
    return 0;
}

int
lo_shape_op(LoCtx *c, IrOp *op)
{
    switch (op->opc) {
    case IR_RESHAPE: return reshape(c, op);
    case IR_CAT: return cat(c, op);
    case IR_JOIN: return join(c, op);
    case IR_SPLIT: return split(c, op);
    default:
        return lo_error(c, op->loc, "%s is not supported yet", ir_opc_name[op->opc]);
    }
}
