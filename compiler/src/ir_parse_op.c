/*
 * ir_parse_op.c — the syntax of each TTIR op, for ir_parse.c.
 *
 * One function per syntax family (table-driven BIN/UN/TERN/CAST/CMP, then the
 * custom ops of ir_ops.h), each reading the op's operands, attributes and
 * types after its name and creating it with pr_new_op(). docs/ttir.md lists
 * the syntax of every op; ir_print.c writes exactly this.
 */
#include "ir_parse_int.h"

#include <string.h>

/* ---- ops ------------------------------------------------------------------------------------ */

/* "%a, %b : T" for ops whose operands and result share one type (BIN, UN, TERN). */
static IrOp *
parse_same(Parser *P, OpHead *h)
{
    Use u[3];
    IrRef a[3];
    int n = pr_uses(P, u, 3);
    pr_expect(P, ':');
    IrType t = pr_type(P);
    for (int i = 0; i < n; i++)
        pr_check_type(P, &u[i], t);
    pr_refs(u, n, a);
    return pr_new_op(P, h, a, n, &t, 1, 0);
}

/* "%a : T1 to T2" (arith, math) or "%a : T1 -> T2" (tt). */
static IrOp *
parse_cast(Parser *P, OpHead *h)
{
    Use u = pr_use(P);
    pr_expect(P, ':');
    pr_check_type(P, &u, pr_type(P));
    if (TOK.kind == TK_ARROW)
        pr_next(P);
    else
        pr_expect_id(P, "to");
    IrType t = pr_type(P);
    return pr_new_op(P, h, &u.r, 1, &t, 1, 0);
}

static IrOp *
parse_cmp(Parser *P, OpHead *h)
{
    int pred = h->opc == IR_CMPI ? pr_expect_word(P, ir_cmpi_name, IR_CMPI_COUNT, "a cmpi predicate")
                                 : pr_expect_word(P, ir_cmpf_name, IR_CMPF_COUNT, "a cmpf predicate");
    pr_expect(P, ',');
    Use u[2];
    IrRef a[2];
    if (pr_uses(P, u, 2) != 2)
        pr_error(P, "expected 2 operands");
    pr_expect(P, ':');
    IrType t = pr_type(P);
    pr_check_type(P, &u[0], t);
    pr_check_type(P, &u[1], t);
    pr_refs(u, 2, a);
    IrType rt = pr_with_elem(P, t, ir_type_scalar(P->m, IR_I1));
    IrOp *op = pr_new_op(P, h, a, 2, &rt, 1, 0);
    op->i[0] = pred;
    return op;
}

static void
parse_scalar_lit(Parser *P, IrOp *op, IrType t)
{
    int d = ir_type_dtype(P->m, t);
    if (d < 0)
        pr_error(P, "constants must have an integer or float type");
    if (ir_dtype_is_float((IrDtype)d)) {
        if (TOK.kind == TK_INT && TOK.hex)
            op->f = ir_float_from_bits(TOK.uv, (IrDtype)d);
        else if (TOK.kind == TK_INT || TOK.kind == TK_FLOAT)
            op->f = ir_float_round(TOK.fv, (IrDtype)d);
        else
            pr_error(P, "expected a float literal, found %s", pr_tokdesc(P));
    } else if (pr_is_id(P, "true") || pr_is_id(P, "false")) {
        if (d != IR_I1)
            pr_error(P, "'true'/'false' need type i1");
        op->i[0] = pr_is_id(P, "true");
    } else {
        if (TOK.kind != TK_INT)
            pr_error(P, "expected an integer literal, found %s", pr_tokdesc(P));
        int bits = ir_dtype_bits((IrDtype)d);
        if (bits < 64 && !TOK.hex && (TOK.iv < -(INT64_C(1) << (bits - 1)) ||
                                      (TOK.iv > 0 && TOK.uv >> bits)))
            pr_error(P, "integer constant out of range for %s", ir_dtype_mlir((IrDtype)d));
        op->i[0] = ir_int_norm(TOK.iv, (IrDtype)d);
    }
    pr_next(P);
}

/* "true", "1024 : i32", "1.0e+00 : f32", "dense<0> : tensor<...>" */
static IrOp *
parse_const(Parser *P, OpHead *h)
{
    IrTok lit;
    bool dense = pr_accept_id(P, "dense");
    if (dense)
        pr_expect(P, '<');
    lit = TOK;
    const char *save = P->L.p;
    if (!dense && (pr_is_id(P, "true") || pr_is_id(P, "false"))) {
        pr_next(P);
        if (!pr_is_punct(P, ':')) {
            IrType t = ir_type_scalar(P->m, IR_I1);
            IrOp *op = pr_new_op(P, h, NULL, 0, &t, 1, 0);
            op->i[0] = lit.str[0] == 't';
            return op;
        }
    } else {
        pr_next(P);
    }
    if (dense)
        pr_expect(P, '>');
    pr_expect(P, ':');
    IrType t = pr_type(P);
    if (dense != ir_type_is_tensor(P->m, t))
        pr_error(P, dense ? "dense<...> constants need a tensor type"
                           : "tensor constants are written dense<...>");
    IrOp *op = pr_new_op(P, h, NULL, 0, &t, 1, 0);
    /* re-read the literal now that the type is known */
    IrTok after = TOK;
    const char *after_p = P->L.p;
    P->L.tok = lit;
    P->L.p = save;
    parse_scalar_lit(P, op, ir_type_elem(P->m, t));
    P->L.tok = after;
    P->L.p = after_p;
    return op;
}

/* "%a : T1 -> T2" shape ops, with optional attributes between. */
static IrOp *
parse_shape(Parser *P, OpHead *h)
{
    Use u[2];
    IrRef a[2];
    int n = pr_uses(P, u, 2);
    int want = h->opc == IR_CAT || h->opc == IR_JOIN ? 2 : 1;
    if (n != want)
        pr_error(P, "%s takes %d operand%s", ir_opc_name[h->opc], want, want == 1 ? "" : "s");
    bool reorder = false;
    while (TOK.kind == TK_ID && !pr_is_id(P, "loc")) {
        if (pr_is_id(P, "allow_reorder"))
            reorder = true;
        else if (!pr_is_id(P, "efficient_layout"))
            pr_error(P, "unexpected %s", pr_tokdesc(P));
        pr_next(P);
    }
    Attrs as;
    pr_attrs(P, &as);
    pr_expect(P, ':');
    IrType t = pr_type(P);
    for (int i = 0; i < n; i++)
        pr_check_type(P, &u[i], t);
    pr_expect_arrow(P);
    IrType rt[2];
    rt[0] = rt[1] = pr_type(P);
    pr_refs(u, n, a);
    IrOp *op = pr_new_op(P, h, a, n, rt, h->opc == IR_SPLIT ? 2 : 1, 0);
    if (h->opc == IR_EXPAND_DIMS)
        op->i[0] = pr_aint(P, &as, "axis", 0);
    if (h->opc == IR_RESHAPE)
        op->i[0] = reorder || pr_aint(P, &as, "allow_reorder", 0);
    if (h->opc == IR_TRANS) {
        Attr *o = pr_arr_attr(P, &as, "order", true);
        ir_op_set_ints(P->f, op, o->arr, o->narr);
    }
    return op;
}

/* "(T1, T2) -> R" after the operands u; checks the operand types. */
static int
parse_functype(Parser *P, const Use *u, int n, IrType *rt)
{
    IrType t[MAXV];
    int nt = pr_type_list(P, t, MAXV, true);
    pr_check_types(P, u, n, t, nt);
    return pr_results_types(P, rt, MAXV);
}

static IrOp *
parse_select(Parser *P, OpHead *h)
{
    Use u[3];
    IrRef a[3];
    if (pr_uses(P, u, 3) != 3)
        pr_error(P, "arith.select takes 3 operands");
    pr_expect(P, ':');
    IrType t = pr_type(P), ct = ir_type_scalar(P->m, IR_I1);
    if (pr_accept(P, ',')) {
        ct = t;
        t = pr_type(P);
    }
    pr_check_type(P, &u[0], ct);
    pr_check_type(P, &u[1], t);
    pr_check_type(P, &u[2], t);
    pr_refs(u, 3, a);
    return pr_new_op(P, h, a, 3, &t, 1, 0);
}

static IrOp *
parse_fp_to_fp(Parser *P, OpHead *h)
{
    static const char *const rnd[] = {"rtne", "rtz"};
    Use u = pr_use(P);
    int r = 0;
    if (pr_accept(P, ',')) {
        pr_expect_id(P, "rounding");
        pr_expect(P, '=');
        r = pr_expect_word(P, rnd, 2, "rtne or rtz");
    }
    pr_expect(P, ':');
    pr_check_type(P, &u, pr_type(P));
    pr_expect_arrow(P);
    IrType t = pr_type(P);
    IrOp *op = pr_new_op(P, h, &u.r, 1, &t, 1, 0);
    op->i[0] = r;
    return op;
}

static IrOp *
parse_clampf(Parser *P, OpHead *h)
{
    static const char *const pn[] = {"none", "all"};
    Use u[3];
    IrRef a[3];
    if (pr_uses(P, u, 3) != 3)
        pr_error(P, "tt.clampf takes 3 operands");
    pr_expect(P, ',');
    pr_expect_id(P, "propagateNan");
    pr_expect(P, '=');
    int k = pr_expect_word(P, pn, 2, "none or all");
    pr_expect(P, ':');
    IrType t = pr_type(P);
    for (int i = 0; i < 3; i++)
        pr_check_type(P, &u[i], t);
    pr_refs(u, 3, a);
    IrOp *op = pr_new_op(P, h, a, 3, &t, 1, 0);
    op->i[0] = k;
    return op;
}

static IrOp *
parse_extern(Parser *P, OpHead *h)
{
    Use u[MAXV];
    IrRef a[MAXV];
    IrType rt[MAXV];
    int n = pr_is_punct(P, '{') ? 0 : pr_uses(P, u, MAXV);
    Attrs as;
    pr_attrs(P, &as);
    pr_expect(P, ':');
    int nr = parse_functype(P, u, n, rt);
    pr_refs(u, n, a);
    IrOp *op = pr_new_op(P, h, a, n, rt, nr, 0);
    op->s = pr_astr(P, &as, "symbol");
    if (!op->s)
        pr_error(P, "tt.extern_elementwise needs a symbol attribute");
    return op;
}

static IrOp *
parse_pid(Parser *P, OpHead *h)
{
    static const char *const ax[] = {"x", "y", "z"};
    int k = pr_expect_word(P, ax, 3, "x, y or z");
    pr_expect(P, ':');
    IrType t = pr_type(P);
    IrOp *op = pr_new_op(P, h, NULL, 0, &t, 1, 0);
    op->i[0] = k;
    return op;
}

static IrOp *
parse_make_range(Parser *P, OpHead *h)
{
    Attrs as;
    pr_attrs(P, &as);
    if (!pr_aget(&as, "start") || !pr_aget(&as, "end"))
        pr_error(P, "tt.make_range needs start and end attributes");
    pr_expect(P, ':');
    IrType t = pr_type(P);
    IrOp *op = pr_new_op(P, h, NULL, 0, &t, 1, 0);
    op->i[0] = pr_aint(P, &as, "start", 0);
    op->i[1] = pr_aint(P, &as, "end", 0);
    return op;
}

static IrOp *
parse_gather(Parser *P, OpHead *h)
{
    Use u[2];
    IrRef a[2];
    IrType rt[MAXV];
    u[0] = pr_use(P);
    pr_expect(P, '[');
    u[1] = pr_use(P);
    pr_expect(P, ']');
    Attrs as;
    pr_attrs(P, &as);
    pr_expect(P, ':');
    int nr = parse_functype(P, u, 2, rt);
    pr_refs(u, 2, a);
    IrOp *op = pr_new_op(P, h, a, 2, rt, nr, 0);
    op->i[0] = pr_aint(P, &as, "axis", 0);
    return op;
}

static IrOp *
parse_addptr(Parser *P, OpHead *h)
{
    Use u[2];
    IrRef a[2];
    if (pr_uses(P, u, 2) != 2)
        pr_error(P, "tt.addptr takes 2 operands");
    pr_expect(P, ':');
    IrType t = pr_type(P);
    pr_expect(P, ',');
    IrType ot = pr_type(P);
    pr_check_type(P, &u[0], t);
    pr_check_type(P, &u[1], ot);
    pr_refs(u, 2, a);
    return pr_new_op(P, h, a, 2, &t, 1, 0);
}

static IrOp *
parse_load_store(Parser *P, OpHead *h)
{
    bool load = h->opc == IR_LOAD;
    Use u[3];
    IrRef a[3];
    int n = pr_uses(P, u, 3);
    if (load ? n > 3 : n < 2)
        pr_error(P, load ? "tt.load takes 1 to 3 operands" : "tt.store takes 2 or 3 operands");
    Attrs as;
    pr_attrs(P, &as);
    pr_expect(P, ':');
    IrType t = pr_type(P);
    pr_check_type(P, &u[0], t);
    IrType rt = pr_load_type(P, t);
    pr_refs(u, n, a);
    IrOp *op = pr_new_op(P, h, a, n, &rt, load, 0);
    Attr *bc = pr_arr_attr(P, &as, "boundaryCheck", false);
    if (bc)
        ir_op_set_ints(P->f, op, bc->arr, bc->narr);
    op->i[0] = load ? pr_aint(P, &as, "padding", 0) : 0;
    op->i[1] = pr_aint(P, &as, "cache", 0);
    op->i[2] = pr_aint(P, &as, "evict", 0);
    op->i[3] = load ? pr_aint(P, &as, "isVolatile", 0) : 0;
    return op;
}

/* "[%a, %b]" (possibly empty); appends to u. */
static int
parse_bracket_uses(Parser *P, Use *u, int max)
{
    pr_expect(P, '[');
    int n = 0;
    if (!pr_is_punct(P, ']'))
        n = pr_uses(P, u, max);
    pr_expect(P, ']');
    return n;
}

static IrOp *
parse_block_ptr(Parser *P, OpHead *h)
{
    Use u[MAXV];
    IrRef a[MAXV];
    int n = 1, r = -1;
    u[0] = pr_use(P);
    for (int k = 0; k < (h->opc == IR_MAKE_TENSOR_PTR ? 3 : 1); k++) {
        pr_expect(P, ',');
        int line = TOK.line, col = TOK.col;
        int c = parse_bracket_uses(P, u + n, MAXV / 4);
        if (r >= 0 && c != r)
            ir_lex_error(&P->L, line, col, "expected %d values in this list", r);
        r = c;
        n += c;
    }
    Attrs as;
    pr_attrs(P, &as);
    pr_expect(P, ':');
    IrType t = pr_type(P);
    if (h->opc == IR_ADVANCE)
        pr_check_type(P, &u[0], t);
    pr_refs(u, n, a);
    IrOp *op = pr_new_op(P, h, a, n, &t, 1, 0);
    if (h->opc == IR_MAKE_TENSOR_PTR) {
        Attr *o = pr_arr_attr(P, &as, "order", false);
        if (o)
            ir_op_set_ints(P->f, op, o->arr, o->narr);
    }
    return op;
}

static IrOp *
parse_atomic(Parser *P, OpHead *h)
{
    int rmw = 0;
    if (h->opc == IR_ATOMIC_RMW) {
        rmw = pr_expect_word(P, ir_rmw_name, IR_RMW_COUNT, "an atomic_rmw kind");
        pr_expect(P, ',');
    }
    int sem = pr_expect_word(P, ir_sem_name, IR_SEM_COUNT, "a memory semantic");
    pr_expect(P, ',');
    int scope = pr_expect_word(P, ir_scope_name, IR_SCOPE_COUNT, "a memory scope");
    pr_expect(P, ',');
    Use u[3];
    IrRef a[3];
    IrType rt[MAXV];
    int n = pr_uses(P, u, 3);
    pr_expect(P, ':');
    int nr = parse_functype(P, u, n, rt);
    pr_refs(u, n, a);
    IrOp *op = pr_new_op(P, h, a, n, rt, nr, 0);
    op->i[0] = rmw;
    op->i[1] = sem;
    op->i[2] = scope;
    return op;
}

static IrOp *
parse_dot(Parser *P, OpHead *h)
{
    Use u[3];
    IrRef a[3];
    if (pr_uses(P, u, 3) != 3)
        pr_error(P, "tt.dot takes 3 operands");
    int prec = 0;
    if (pr_accept(P, ',')) {
        pr_expect_id(P, "inputPrecision");
        pr_expect(P, '=');
        prec = pr_expect_word(P, ir_prec_name, IR_PREC_COUNT, "tf32, tf32x3 or ieee");
    }
    Attrs as;
    pr_attrs(P, &as);
    pr_expect(P, ':');
    pr_check_type(P, &u[0], pr_type(P));
    pr_expect(P, '*');
    pr_check_type(P, &u[1], pr_type(P));
    pr_expect_arrow(P);
    IrType t = pr_type(P);
    pr_check_type(P, &u[2], t);
    pr_refs(u, 3, a);
    IrOp *op = pr_new_op(P, h, a, 3, &t, 1, 0);
    op->i[0] = prec;
    op->i[1] = pr_aint(P, &as, "maxNumImpreciseAcc", 0);
    return op;
}

/* "%a, %b : T1, T2", or nothing when no value follows on the same line (so
 * that "tt.return" followed by "%x = ..." on the next line is two ops). */
static int
parse_typed_uses(Parser *P, Use *u, IrRef *a, int line)
{
    if (TOK.kind != TK_VAL || TOK.line != line)
        return 0;
    int n = pr_uses(P, u, MAXV);
    pr_expect(P, ':');
    IrType t[MAXV];
    int nt = 0;
    do {
        if (nt == MAXV)
            pr_error(P, "too many types");
        t[nt++] = pr_type(P);
    } while (pr_accept(P, ','));
    pr_check_types(P, u, n, t, nt);
    pr_refs(u, n, a);
    return n;
}

static IrOp *
parse_term(Parser *P, OpHead *h)
{
    Use u[MAXV];
    IrRef a[MAXV];
    int n = 0;
    if (h->opc == IR_CONDITION) {
        pr_expect(P, '(');
        u[0] = pr_use(P);
        a[0] = u[0].r;
        pr_expect(P, ')');
        n = 1 + parse_typed_uses(P, u + 1, a + 1, TOK.line);
    } else {
        n = parse_typed_uses(P, u, a, h->line);
    }
    return pr_new_op(P, h, a, n, NULL, 0, 0);
}

/* "%name = %init" pairs of scf.for iter_args and scf.while. */
static int
parse_inits(Parser *P, Use *names, Use *inits)
{
    int n = 0;
    pr_expect(P, '(');
    if (pr_accept(P, ')'))
        return 0;
    do {
        if (n == MAXV)
            pr_error(P, "too many loop-carried values");
        if (TOK.kind != TK_VAL)
            pr_error(P, "expected a value name, found %s", pr_tokdesc(P));
        names[n] = (Use){0, TOK.line, TOK.col, TOK.str, TOK.slen};
        pr_next(P);
        pr_expect(P, '=');
        inits[n++] = pr_use(P);
    } while (pr_accept(P, ','));
    pr_expect(P, ')');
    return n;
}

static IrOp *
parse_for(Parser *P, OpHead *h)
{
    Use names[MAXV + 1], u[MAXV + 3];
    IrRef a[MAXV + 3];
    IrType rt[MAXV];
    if (TOK.kind != TK_VAL)
        pr_error(P, "expected the induction variable, found %s", pr_tokdesc(P));
    names[0] = (Use){0, TOK.line, TOK.col, TOK.str, TOK.slen};
    pr_next(P);
    pr_expect(P, '=');
    u[0] = pr_use(P);
    pr_expect_id(P, "to");
    u[1] = pr_use(P);
    pr_expect_id(P, "step");
    u[2] = pr_use(P);
    int n = 0, nr = 0;
    if (pr_accept_id(P, "iter_args")) {
        n = parse_inits(P, names + 1, u + 3);
        nr = pr_results_types(P, rt, MAXV);
        pr_check_types(P, u + 3, n, rt, nr);
    }
    IrType ivt = ir_val_type(P->f, u[0].r);
    if (pr_accept(P, ':'))
        ivt = pr_type(P);
    for (int i = 0; i < 3; i++)
        pr_check_type(P, &u[i], ivt);
    pr_refs(u, n + 3, a);
    IrOp *op = pr_new_op(P, h, a, n + 3, rt, nr, 1);
    ir_block_add_arg(op->regs[0], ivt);
    for (int i = 0; i < n; i++)
        ir_block_add_arg(op->regs[0], rt[i]);
    pr_region(P, op->regs[0], false, names, n + 1);
    if (nr == 0)
        pr_implicit_yield(P, op->regs[0]);
    Attrs as;
    pr_attrs(P, &as);
    op->i[0] = pr_aint(P, &as, "bind_sub_block", 0) != 0;
    return op;
}

static IrOp *
parse_if(Parser *P, OpHead *h)
{
    Use c = pr_use(P);
    IrType rt[MAXV];
    int nr = TOK.kind == TK_ARROW ? pr_results_types(P, rt, MAXV) : 0;
    IrOp *op = pr_new_op(P, h, &c.r, 1, rt, nr, 2);
    pr_region(P, op->regs[0], false, NULL, 0);
    if (pr_accept_id(P, "else"))
        pr_region(P, op->regs[1], false, NULL, 0);
    if (nr == 0) {
        pr_implicit_yield(P, op->regs[0]);
        pr_implicit_yield(P, op->regs[1]);
    }
    return op;
}

static IrOp *
parse_while(Parser *P, OpHead *h)
{
    Use names[MAXV], u[MAXV];
    IrRef a[MAXV];
    IrType t[MAXV], rt[MAXV];
    int n = parse_inits(P, names, u);
    pr_expect(P, ':');
    int nt = pr_type_list(P, t, MAXV, true);
    pr_check_types(P, u, n, t, nt);
    int nr = pr_results_types(P, rt, MAXV);
    pr_refs(u, n, a);
    IrOp *op = pr_new_op(P, h, a, n, rt, nr, 2);
    for (int i = 0; i < n; i++)
        ir_block_add_arg(op->regs[0], t[i]);
    pr_region(P, op->regs[0], false, names, n);
    pr_expect_id(P, "do");
    pr_region(P, op->regs[1], true, NULL, 0);
    return op;
}

static IrOp *
parse_call(Parser *P, OpHead *h)
{
    Use u[MAXV];
    IrRef a[MAXV];
    IrType rt[MAXV];
    if (TOK.kind != TK_SYM)
        pr_error(P, "expected a callee (@name), found %s", pr_tokdesc(P));
    const char *callee = ir_arena_strdup(&P->m->arena, TOK.str, TOK.slen);
    pr_next(P);
    pr_expect(P, '(');
    int n = pr_is_punct(P, ')') ? 0 : pr_uses(P, u, MAXV);
    pr_expect(P, ')');
    pr_expect(P, ':');
    int nr = parse_functype(P, u, n, rt);
    pr_refs(u, n, a);
    IrOp *op = pr_new_op(P, h, a, n, rt, nr, 0);
    op->s = callee;
    return op;
}

static IrOp *
parse_print(Parser *P, OpHead *h)
{
    Use u[MAXV];
    IrRef a[MAXV];
    const char *prefix = pr_expect_str(P);
    Attrs as;
    pr_attrs(P, &as);
    int n = 0;
    if (pr_accept(P, ':'))
        n = parse_typed_uses(P, u, a, TOK.line);
    IrOp *op = pr_new_op(P, h, a, n, NULL, 0, 0);
    op->s = prefix;
    op->i[0] = pr_aint(P, &as, "hex", 0);
    Attr *sg = pr_arr_attr(P, &as, "isSigned", false);
    if (sg)
        ir_op_set_ints(P->f, op, sg->arr, sg->narr);
    return op;
}

static IrOp *
parse_assert(Parser *P, OpHead *h)
{
    Use u = pr_use(P);
    const char *msg = NULL;
    if (h->opc == IR_ASSERT) {
        pr_expect(P, ',');
        msg = pr_expect_str(P);
    }
    pr_expect(P, ':');
    pr_check_type(P, &u, pr_type(P));
    IrOp *op = pr_new_op(P, h, &u.r, 1, NULL, 0, 0);
    op->s = msg;
    return op;
}

static IrOp *
parse_record(Parser *P, OpHead *h)
{
    static const char *const se[] = {"end", "start"};
    int k = pr_expect_word(P, se, 2, "start or end");
    const char *name = pr_expect_str(P);
    IrOp *op = pr_new_op(P, h, NULL, 0, NULL, 0, 0);
    op->i[0] = k;
    op->s = name;
    return op;
}

/* xsmt ops: "[%a, ...] [{attrs}] : (T...) -> R" or ": R" without operands. */
static IrOp *
parse_smt(Parser *P, OpHead *h)
{
    Use u[MAXV];
    IrRef a[MAXV];
    IrType rt[MAXV];
    int n = TOK.kind == TK_VAL ? pr_uses(P, u, MAXV) : 0;
    Attrs as;
    pr_attrs(P, &as);
    pr_expect(P, ':');
    int nr;
    if (n == 0 && !pr_is_punct(P, '(')) {
        rt[0] = pr_type(P);
        nr = 1;
    } else {
        nr = parse_functype(P, u, n, rt);
    }
    pr_refs(u, n, a);
    IrOp *op = pr_new_op(P, h, a, n, rt, nr, 0);
    Attr *shape = pr_arr_attr(P, &as, "shape", false), *packed = pr_arr_attr(P, &as, "packed_size", false);
    int64_t v[2 * MAXARR];
    uint32_t nv = 0;
    if (shape)
        for (uint32_t i = 0; i < shape->narr; i++)
            v[nv++] = shape->arr[i];
    if (packed)
        for (uint32_t i = 0; i < packed->narr; i++)
            v[nv++] = packed->arr[i];
    if (nv)
        ir_op_set_ints(P->f, op, v, nv);
    op->s = pr_astr(P, &as, "storage");
    return op;
}

/* "tt.reduce"/"tt.scan" in MLIR's generic form. */
static IrOp *
parse_generic(Parser *P, OpHead *h)
{
    Use u[MAXV];
    IrRef a[MAXV];
    IrType rt[MAXV];
    pr_expect(P, '(');
    int n = pr_is_punct(P, ')') ? 0 : pr_uses(P, u, MAXV);
    pr_expect(P, ')');
    Attrs as = {.n = 0};
    if (pr_accept(P, '<')) {
        pr_attrs(P, &as);
        pr_expect(P, '>');
    }
    pr_expect(P, '(');
    /* the region comes before the types: parse it into a detached op first */
    pr_refs(u, n, a);
    IrOp *op = ir_op_create(P->f, h->opc, a, (uint32_t)n, NULL, 0, 1);
    op->loc = (IrLoc){P->file, (uint32_t)h->line, (uint32_t)h->col};
    pr_region(P, op->regs[0], true, NULL, 0);
    pr_expect(P, ')');
    pr_expect(P, ':');
    int nr = parse_functype(P, u, n, rt);
    IrOp *real = pr_new_op(P, h, a, n, rt, nr, 0);
    real->regs = op->regs;
    real->nregs = 1;
    op->regs[0]->parent = real;
    real->i[0] = pr_aint(P, &as, "axis", 0);
    real->i[1] = pr_aint(P, &as, "reverse", 0);
    return real;
}

/* One case per syntax family. */
static IrOp *
parse_body(Parser *P, OpHead *h)
{
    switch (ir_opc_fmt[h->opc]) {
    case IR_FMT_BIN:
    case IR_FMT_UN:
    case IR_FMT_TERN:
        return parse_same(P, h);
    case IR_FMT_CAST:
        return parse_cast(P, h);
    case IR_FMT_CMP:
        return parse_cmp(P, h);
    default:
        break;
    }
    switch (h->opc) {
    case IR_CONST: return parse_const(P, h);
    case IR_SELECT: return parse_select(P, h);
    case IR_FP_TO_FP: return parse_fp_to_fp(P, h);
    case IR_CLAMPF: return parse_clampf(P, h);
    case IR_EXTERN_ELEM: return parse_extern(P, h);
    case IR_GET_PROGRAM_ID:
    case IR_GET_NUM_PROGRAMS: return parse_pid(P, h);
    case IR_MAKE_RANGE: return parse_make_range(P, h);
    case IR_SPLAT: case IR_BROADCAST: case IR_EXPAND_DIMS: case IR_RESHAPE: case IR_TRANS:
    case IR_CAT: case IR_JOIN: case IR_SPLIT: case IR_HISTOGRAM: return parse_shape(P, h);
    case IR_GATHER: return parse_gather(P, h);
    case IR_ADDPTR: return parse_addptr(P, h);
    case IR_LOAD: case IR_STORE: return parse_load_store(P, h);
    case IR_MAKE_TENSOR_PTR: case IR_ADVANCE: return parse_block_ptr(P, h);
    case IR_ATOMIC_RMW: case IR_ATOMIC_CAS: return parse_atomic(P, h);
    case IR_DOT: return parse_dot(P, h);
    case IR_REDUCE_RETURN: case IR_SCAN_RETURN: case IR_YIELD: case IR_RETURN:
    case IR_CONDITION: return parse_term(P, h);
    case IR_FOR: return parse_for(P, h);
    case IR_IF: return parse_if(P, h);
    case IR_WHILE: return parse_while(P, h);
    case IR_CALL: return parse_call(P, h);
    case IR_PRINT: return parse_print(P, h);
    case IR_ASSERT: case IR_ASSUME: return parse_assert(P, h);
    case IR_PROTON_RECORD: return parse_record(P, h);
    case IR_REDUCE: case IR_SCAN: pr_error(P, "%s is written in generic form (\"%s\"(...))",
                                            ir_opc_name[h->opc], ir_opc_name[h->opc]);
    default: return parse_smt(P, h);
    }
}

/* [results =] name ... [loc(...)] */
IrOp *
pr_op(Parser *P)
{
    OpHead h = {.line = TOK.line, .col = TOK.col};
    if (TOK.kind == TK_VAL) {
        do {
            if (TOK.kind != TK_VAL)
                pr_error(P, "expected a result name, found %s", pr_tokdesc(P));
            if (h.nnames == MAXV)
                pr_error(P, "too many results");
            h.res[h.nnames].s = TOK.str;
            h.res[h.nnames].n = TOK.slen;
            h.res[h.nnames].line = TOK.line;
            h.res[h.nnames].col = TOK.col;
            if (memchr(TOK.str, '#', TOK.slen))
                pr_error(P, "result names cannot contain '#'");
            pr_next(P);
            int g = 0;
            if (pr_accept(P, ':')) {
                g = (int)pr_expect_int(P);
                if (g < 1 || g > MAXV)
                    pr_error(P, "bad result count");
            }
            h.res[h.nnames++].group = g;
            h.nres += g ? g : 1;
        } while (pr_accept(P, ','));
        pr_expect(P, '=');
    }
    bool generic = TOK.kind == TK_STR;
    if (TOK.kind != TK_ID && !generic)
        pr_error(P, "expected an operation, found %s", pr_tokdesc(P));
    h.opc = ir_opc_lookup(TOK.str, TOK.slen);
    if (h.opc == IR_OPC_COUNT)
        pr_error(P, "unknown operation '%.*s'", (int)TOK.slen, TOK.str);
    if (generic != (h.opc == IR_REDUCE || h.opc == IR_SCAN))
        pr_error(P, generic ? "only tt.reduce and tt.scan are written in generic form"
                             : "%s is written in generic form (\"%s\"(...))",
                  ir_opc_name[h.opc], ir_opc_name[h.opc]);
    pr_next(P);
    IrOp *op = generic ? parse_generic(P, &h) : parse_body(P, &h);
    pr_loc(P, &op->loc);
    pr_bind_results(P, &h, op);
    return op;
}

