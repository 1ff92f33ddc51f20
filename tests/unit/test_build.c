/*
 * test_build.c — the front-end builder's rules: Triton's type promotion, literal
 * handling, broadcasting, casts, memory-op checks, reductions and control-flow
 * typing, each against the result type / opcode / error text upstream Triton gives.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ir_build_int.h"

typedef struct Fx {
    IrModule *m;
    IrBuilder *b;
} Fx;

static int
setup(void **state)
{
    Fx *f = calloc(1, sizeof *f);
    f->m = ir_module_create();
    f->b = ir_builder_create(f->m);
    ir_builder_set_loc(f->b, "k.py", 3, 5);
    IrType f32 = ir_type_scalar(f->m, IR_F32), i32 = ir_type_scalar(f->m, IR_I32);
    IrType pt[3] = {ir_type_ptr(f->m, f32, 0), i32, ir_type_ptr(f->m, ir_type_scalar(f->m, IR_U32), 0)};
    assert_int_equal(ir_b_func_begin(f->b, "k", true, 3, pt, NULL), 0);
    *state = f;
    return 0;
}

static int
teardown(void **state)
{
    Fx *f = *state;
    ir_builder_destroy(f->b);
    ir_module_destroy(f->m);
    free(f);
    return 0;
}

static IrOperand I(int64_t v) { IrOperand o = {IR_OPND_INT, 0, v, 0, false, 0}; return o; }
static IrOperand F(double v) { IrOperand o = {IR_OPND_FLOAT, 0, 0, 0, false, v}; return o; }
static IrOperand V(IrRef r) { return ir_opnd(r); }

/* A tensor<shape x dtype> value (a splat of a constant). */
static IrRef
T(Fx *f, int dt, int rank, const int64_t *shape)
{
    IrRef c = ir_b_const(f->b, ir_type_dtype(f->m, ir_type_scalar(f->m, (IrDtype)dt)) >= 0 &&
                                       ir_dtype_is_float((IrDtype)dt) ? F(1.5) : I(3), dt);
    return ir_b_splat(f->b, c, rank, shape);
}

static const int64_t S4[1] = {4}, S8[1] = {8};

static int
dtype_of(Fx *f, IrRef r)
{
    return bdtype(f->b, r);
}

static IrOpc
opc_of(Fx *f, IrRef r)
{
    return (IrOpc)f->b->fn->vals[r].def->opc;
}

static void
expect_error(Fx *f, IrRef r, const char *text)
{
    assert_int_equal(r, IR_NONE);
    const char *e = ir_builder_error(f->b);
    if (!strstr(e, text))
        fail_msg("error '%s' does not contain '%s'", e, text);
}

/* ---- promotion ---------------------------------------------------------------------- */

static void
test_literal_keeps_tensor_type(void **state)
{
    Fx *f = *state;
    IrRef x = T(f, IR_I16, 1, S4);
    IrRef r = ir_b_binop(f->b, IR_B_ADD, V(x), I(7));
    assert_int_equal(dtype_of(f, r), IR_I16);
    assert_int_equal(opc_of(f, r), IR_ADDI);
    IrRef h = T(f, IR_F16, 1, S4);
    assert_int_equal(dtype_of(f, ir_b_binop(f->b, IR_B_MUL, V(h), F(2.0))), IR_F16);
    /* a float literal next to an int tensor promotes to fp32 */
    assert_int_equal(dtype_of(f, ir_b_binop(f->b, IR_B_ADD, V(x), F(0.5))), IR_F32);
}

static void
test_tensor_promotion(void **state)
{
    Fx *f = *state;
    IrRef h = T(f, IR_F16, 1, S4), b16 = T(f, IR_BF16, 1, S4), s = T(f, IR_F32, 1, S4);
    IrRef i8 = T(f, IR_I8, 1, S4), u32 = T(f, IR_U32, 1, S4), i64 = T(f, IR_I64, 1, S4);
    assert_int_equal(dtype_of(f, ir_b_binop(f->b, IR_B_ADD, V(h), V(s))), IR_F32);
    assert_int_equal(dtype_of(f, ir_b_binop(f->b, IR_B_ADD, V(h), V(b16))), IR_F16); /* fp16 wins over bf16 */
    assert_int_equal(dtype_of(f, ir_b_binop(f->b, IR_B_ADD, V(b16), V(b16))), IR_BF16);
    assert_int_equal(dtype_of(f, ir_b_binop(f->b, IR_B_ADD, V(i8), V(u32))), IR_U32);
    assert_int_equal(dtype_of(f, ir_b_binop(f->b, IR_B_ADD, V(u32), V(i64))), IR_I64);
    assert_int_equal(dtype_of(f, ir_b_binop(f->b, IR_B_ADD, V(i8), V(h))), IR_F16);
}

static void
test_division(void **state)
{
    Fx *f = *state;
    IrRef a = T(f, IR_I32, 1, S4), h = T(f, IR_F16, 1, S4), bb = T(f, IR_BF16, 1, S4);
    IrRef q = ir_b_binop(f->b, IR_B_TRUEDIV, V(a), V(a));
    assert_int_equal(dtype_of(f, q), IR_F32); /* int / int is fp32 */
    assert_int_equal(opc_of(f, q), IR_DIVF);
    assert_int_equal(opc_of(f, ir_b_binop(f->b, IR_B_FLOORDIV, V(a), I(3))), IR_DIVSI);
    assert_int_equal(opc_of(f, ir_b_binop(f->b, IR_B_MOD, V(a), I(3))), IR_REMSI);
    /* float % is C fmod (upstream's frem), not floor-mod */
    assert_int_equal(opc_of(f, ir_b_binop(f->b, IR_B_MOD, V(h), V(h))), IR_REMF);
    assert_int_equal(opc_of(f, ir_b_binop(f->b, IR_B_MOD, V(bb), F(1.0))), IR_REMF);
    /* spine-triton: fp16 / and % stay fp16; bf16 / bf16 goes to fp32 */
    assert_int_equal(dtype_of(f, ir_b_binop(f->b, IR_B_TRUEDIV, V(h), V(h))), IR_F16);
    assert_int_equal(dtype_of(f, ir_b_binop(f->b, IR_B_TRUEDIV, V(h), F(3.0))), IR_F16);
    assert_int_equal(dtype_of(f, ir_b_binop(f->b, IR_B_TRUEDIV, V(bb), V(bb))), IR_F32);
    IrRef u = T(f, IR_U32, 1, S4);
    assert_int_equal(opc_of(f, ir_b_binop(f->b, IR_B_FLOORDIV, V(u), V(u))), IR_DIVUI);
    expect_error(f, ir_b_binop(f->b, IR_B_FLOORDIV, V(u), V(a)), "different signedness");
}

static void
test_literal_errors(void **state)
{
    Fx *f = *state;
    IrRef i8 = T(f, IR_I8, 1, S4), u32 = T(f, IR_U32, 1, S4);
    expect_error(f, ir_b_binop(f->b, IR_B_ADD, V(i8), I(300)), "Scalar 300 is out of range for type int8");
    expect_error(f, ir_b_binop(f->b, IR_B_ADD, V(u32), I(-1)), "unsigned tensor and a negative scalar");
}

static void
test_broadcasting(void **state)
{
    Fx *f = *state;
    int64_t s41[2] = {4, 1}, s18[2] = {1, 8};
    IrRef a = T(f, IR_F32, 2, s41), b = T(f, IR_F32, 2, s18);
    IrRef r = ir_b_binop(f->b, IR_B_ADD, V(a), V(b));
    assert_int_equal(brank(f->b, r), 2);
    assert_int_equal(bshape(f->b, r)[0], 4);
    assert_int_equal(bshape(f->b, r)[1], 8);
    /* rank extension on the left, like upstream */
    IrRef c = T(f, IR_F32, 1, S8);
    IrRef r2 = ir_b_binop(f->b, IR_B_ADD, V(a), V(c));
    assert_int_equal(bshape(f->b, r2)[0], 4);
    assert_int_equal(bshape(f->b, r2)[1], 8);
    expect_error(f, ir_b_binop(f->b, IR_B_ADD, V(T(f, IR_F32, 1, S4)), V(c)),
                 "Cannot make_shape_compatible: incompatible dimensions at index 0: 4 and 8");
}

static void
test_comparisons_and_bitwise(void **state)
{
    Fx *f = *state;
    IrRef a = T(f, IR_I32, 1, S4), u = T(f, IR_U32, 1, S4), x = T(f, IR_F32, 1, S4);
    IrRef lt = ir_b_binop(f->b, IR_B_LT, V(a), I(2));
    assert_int_equal(dtype_of(f, lt), IR_I1);
    assert_int_equal(f->b->fn->vals[lt].def->i[0], 2); /* slt */
    assert_int_equal(f->b->fn->vals[ir_b_binop(f->b, IR_B_LT, V(u), V(u))].def->i[0], 6); /* ult */
    assert_int_equal(opc_of(f, ir_b_binop(f->b, IR_B_NE, V(x), V(x))), IR_CMPF);
    assert_int_equal(opc_of(f, ir_b_binop(f->b, IR_B_SHR, V(u), I(1))), IR_SHRUI);
    assert_int_equal(opc_of(f, ir_b_binop(f->b, IR_B_SHR, V(a), I(1))), IR_SHRSI);
    expect_error(f, ir_b_binop(f->b, IR_B_AND, V(x), V(x)), "invalid operands of type");
    expect_error(f, ir_b_binop(f->b, IR_B_SHL, V(a), F(1.0)), "invalid operands of type <[4], int32> and fp32");
    /* the left operand's signedness picks the shift, the promotion picks the type */
    IrRef s8 = T(f, IR_I8, 1, S4), u8 = T(f, IR_U8, 1, S4), s16 = T(f, IR_I16, 1, S4);
    IrRef r = ir_b_binop(f->b, IR_B_SHR, V(s8), V(u8));
    assert_int_equal(opc_of(f, r), IR_SHRSI);
    assert_int_equal(dtype_of(f, r), IR_U8);
    assert_int_equal(opc_of(f, ir_b_binop(f->b, IR_B_SHR, V(a), V(u))), IR_SHRSI);
    assert_int_equal(opc_of(f, ir_b_binop(f->b, IR_B_SHR, V(u8), V(s16))), IR_SHRUI);
    assert_int_equal(opc_of(f, ir_b_binop(f->b, IR_B_SHR, I(3), V(u8))), IR_SHRUI);  /* 3 >> u8: __rrshift__ */
    assert_int_equal(opc_of(f, ir_b_binop(f->b, IR_B_SHR, I(-8), V(s8))), IR_SHRSI);
    /* a Python int does not widen: int8 >> 1 and int8 & 1 stay int8 */
    assert_int_equal(dtype_of(f, ir_b_binop(f->b, IR_B_SHR, V(s8), I(1))), IR_I8);
    assert_int_equal(dtype_of(f, ir_b_binop(f->b, IR_B_AND, V(s8), I(1))), IR_I8);
    expect_error(f, ir_b_binop(f->b, IR_B_AND, V(s8), I(300)), "Scalar 300 is out of range for type int8");
    assert_int_equal(opc_of(f, ir_b_binop(f->b, IR_B_MAXIMUM, V(u), V(u))), IR_MAXUI);
    assert_int_equal(opc_of(f, ir_b_binop(f->b, IR_B_MAXIMUM, V(x), V(x))), IR_MAXNUMF);
    assert_int_equal(opc_of(f, ir_b_binop(f->b, IR_B_MAXIMUM_NAN, V(x), V(x))), IR_MAXIMUMF);
}

static void
test_pointers(void **state)
{
    Fx *f = *state;
    IrRef p = ir_b_param(f->b, 0);
    IrRef ar = ir_b_arange(f->b, 0, 8);
    IrRef q = ir_b_binop(f->b, IR_B_ADD, V(p), V(ar));
    assert_true(bis_ptr(f->b, q));
    assert_int_equal(opc_of(f, q), IR_ADDPTR);
    assert_int_equal(brank(f->b, q), 1);
    /* offset + ptr works too, ptr + ptr and ptr + float do not */
    assert_int_equal(opc_of(f, ir_b_binop(f->b, IR_B_ADD, V(ar), V(p))), IR_ADDPTR);
    expect_error(f, ir_b_binop(f->b, IR_B_ADD, V(p), V(p)), "cannot add pointers together");
    expect_error(f, ir_b_binop(f->b, IR_B_ADD, V(p), F(1.0)), "invalid operands");
    /* unsigned offsets are zero-extended to i64 */
    IrRef uoff = ir_b_cast(f->b, V(ar), ir_type_scalar(f->m, IR_U32), false, 0);
    IrRef q2 = ir_b_binop(f->b, IR_B_ADD, V(p), V(uoff));
    assert_int_equal(bdtype(f->b, f->b->fn->vals[q2].def->args[1]), IR_I64);
}

static void
test_loads_and_stores(void **state)
{
    Fx *f = *state;
    IrRef p = ir_b_param(f->b, 0), n = ir_b_param(f->b, 1);
    IrRef ar = ir_b_arange(f->b, 0, 8);
    IrRef q = ir_b_binop(f->b, IR_B_ADD, V(p), V(ar));
    IrRef m = ir_b_binop(f->b, IR_B_LT, V(ar), V(n));
    IrOperand none = {IR_OPND_VALUE, IR_NONE, 0, 0, false, 0};
    IrRef x = ir_b_load(f->b, q, m, F(0.0), 0, NULL, IR_PAD_NONE, 0, 0, false);
    assert_int_equal(dtype_of(f, x), IR_F32);
    assert_int_equal(f->b->fn->vals[x].def->nargs, 3);
    expect_error(f, ir_b_load(f->b, q, IR_NONE, F(0.0), 0, NULL, IR_PAD_NONE, 0, 0, false),
                 "`other` cannot be provided without `mask`");
    int64_t bc = 0;
    expect_error(f, ir_b_load(f->b, q, IR_NONE, none, 1, &bc, IR_PAD_NONE, 0, 0, false), "boundary_check");
    /* storing an int into a float pointer casts; a tensor into a scalar pointer is an error */
    assert_int_equal(ir_b_store(f->b, q, I(1), m, 0, NULL, 0, 0), 0);
    assert_int_equal(ir_b_store(f->b, p, V(x), IR_NONE, 0, NULL, 0, 0), -1);
    assert_non_null(strstr(ir_builder_error(f->b), "Value argument cannot be block type"));
}

static void
test_casts(void **state)
{
    Fx *f = *state;
    IrRef x = T(f, IR_F32, 1, S4), u = T(f, IR_U8, 1, S4), i = T(f, IR_I8, 1, S4);
    assert_int_equal(opc_of(f, ir_b_cast(f->b, V(x), ir_type_scalar(f->m, IR_I1), false, 0)), IR_CMPF);
    assert_int_equal(opc_of(f, ir_b_cast(f->b, V(u), ir_type_scalar(f->m, IR_F32), false, 0)), IR_UITOFP);
    assert_int_equal(opc_of(f, ir_b_cast(f->b, V(i), ir_type_scalar(f->m, IR_F32), false, 0)), IR_SITOFP);
    assert_int_equal(opc_of(f, ir_b_cast(f->b, V(i), ir_type_scalar(f->m, IR_I32), false, 0)), IR_EXTSI);
    assert_int_equal(opc_of(f, ir_b_cast(f->b, V(u), ir_type_scalar(f->m, IR_I32), false, 0)), IR_EXTUI);
    assert_int_equal(opc_of(f, ir_b_cast(f->b, V(x), ir_type_scalar(f->m, IR_F16), false, 0)), IR_TRUNCF);
    assert_int_equal(opc_of(f, ir_b_cast(f->b, V(x), ir_type_scalar(f->m, IR_F16), false, 1)), IR_FP_TO_FP);
    assert_int_equal(opc_of(f, ir_b_cast(f->b, V(x), ir_type_scalar(f->m, IR_I32), true, 0)), IR_BITCAST);
    expect_error(f, ir_b_cast(f->b, V(x), ir_type_scalar(f->m, IR_I16), true, 0),
                 "Cannot bitcast data-type of size 32 to data-type of size 16");
    expect_error(f, ir_b_cast(f->b, V(i), ir_type_scalar(f->m, IR_F32), false, 1),
                 "fp_downcast_rounding should be set only for truncating fp conversions");
    /* fp16 -> fp64 goes through fp32 */
    IrRef h = T(f, IR_F16, 1, S4);
    IrRef d = ir_b_cast(f->b, V(h), ir_type_scalar(f->m, IR_F64), false, 0);
    assert_int_equal(opc_of(f, d), IR_EXTF);
    assert_int_equal(bdtype(f->b, f->b->fn->vals[d].def->args[0]), IR_F32);
}

static void
test_math_and_where(void **state)
{
    Fx *f = *state;
    IrRef x = T(f, IR_F16, 1, S4), i = T(f, IR_I32, 1, S4);
    assert_int_equal(dtype_of(f, ir_b_math(f->b, "exp", V(x))), IR_F16);
    expect_error(f, ir_b_math(f->b, "exp", V(i)), "Expected dtype");
    assert_int_equal(opc_of(f, ir_b_math(f->b, "abs", V(i))), IR_ABSI);
    expect_error(f, ir_b_math(f->b, "nosuch", V(x)), "unknown math function");
    IrRef c = ir_b_binop(f->b, IR_B_GT, V(i), I(0));
    IrRef w = ir_b_where(f->b, V(c), V(i), F(0.5));
    assert_int_equal(dtype_of(f, w), IR_F32);
    assert_int_equal(opc_of(f, w), IR_SELECT);
}

static void
test_tiles(void **state)
{
    Fx *f = *state;
    expect_error(f, ir_b_arange(f->b, 0, 10), "arange's range must be a power of 2");
    expect_error(f, ir_b_arange(f->b, 4, 4), "greater than the start");
    int64_t bad = 6;
    expect_error(f, ir_b_full(f->b, 1, &bad, F(0.0), IR_F32), "must be a power of 2");
    IrRef a = ir_b_arange(f->b, 0, 16);
    IrRef e = ir_b_expand_dims(f->b, a, 1);
    assert_int_equal(brank(f->b, e), 2);
    assert_int_equal(bshape(f->b, e)[1], 1);
    int64_t s[2] = {16, 4};
    IrRef bc = ir_b_broadcast_to(f->b, e, 2, s);
    IrRef t = ir_b_permute(f->b, bc, 2, (int64_t[]){1, 0});
    assert_int_equal(bshape(f->b, t)[0], 4);
    int64_t flat = 64;
    assert_int_equal(brank(f->b, ir_b_reshape(f->b, t, 1, &flat, false)), 1);
    int64_t wrong = 32;
    expect_error(f, ir_b_reshape(f->b, t, 1, &wrong, false), "cannot change total number of elements");
}

static void
test_dot_and_reduce(void **state)
{
    Fx *f = *state;
    int64_t s[2] = {16, 8}, s2[2] = {8, 32}, s3[2] = {16, 16};
    IrRef a = T(f, IR_F16, 2, s), b = T(f, IR_F16, 2, s2);
    IrRef d = ir_b_dot(f->b, a, b, IR_NONE, -1, 0, 0);
    assert_int_equal(dtype_of(f, d), IR_F32);
    assert_int_equal(bshape(f->b, d)[1], 32);
    /* out_dtype=fp16: the dot accumulates in fp32, one truncf rounds it */
    IrRef h = ir_b_dot(f->b, a, b, IR_NONE, IR_F16, 0, 0);
    assert_int_equal(dtype_of(f, h), IR_F16);
    assert_int_equal(opc_of(f, h), IR_TRUNCF);
    IrRef hd = f->b->fn->vals[h].def->args[0];
    assert_int_equal(opc_of(f, hd), IR_DOT);
    assert_int_equal(dtype_of(f, hd), IR_F32);
    assert_int_equal(opc_of(f, f->b->fn->vals[hd].def->args[2]), IR_EXTF); /* the fp16 accumulator, widened */
    expect_error(f, ir_b_dot(f->b, a, T(f, IR_F16, 2, s3), IR_NONE, -1, 0, 0), "are not compatible for matmul");
    expect_error(f, ir_b_dot(f->b, a, T(f, IR_F32, 2, s2), IR_NONE, -1, 0, 0), "Both operands must be same dtype");
    IrRef i8 = T(f, IR_I8, 2, s);
    IrRef sm = ir_b_reduce(f->b, IR_RED_SUM, i8, 1, false, -1);
    assert_int_equal(dtype_of(f, sm), IR_I32);
    assert_int_equal(brank(f->b, sm), 1);
    /* spine-triton: fp16 max stays fp16; bf16 goes to fp32 */
    assert_int_equal(dtype_of(f, ir_b_reduce(f->b, IR_RED_MAX, a, 0, false, -1)), IR_F16);
    assert_int_equal(dtype_of(f, ir_b_reduce(f->b, IR_RED_MAX, T(f, IR_BF16, 2, s), 0, false, -1)), IR_F32);
    IrRef all = ir_b_reduce(f->b, IR_RED_SUM, a, IR_AXIS_NONE, false, -1);
    assert_int_equal(brank(f->b, all), 0);
    IrRef kd = ir_b_reduce(f->b, IR_RED_SUM, a, 0, true, -1);
    assert_int_equal(brank(f->b, kd), 2);
    assert_int_equal(bshape(f->b, kd)[0], 1);
    IrRef am = ir_b_reduce(f->b, IR_RED_ARGMAX, a, 1, false, -1);
    assert_int_equal(dtype_of(f, am), IR_I32);
}

static void
test_control_flow_types(void **state)
{
    Fx *f = *state;
    IrRef init = ir_b_const(f->b, F(0.0), IR_F32), args[2];
    assert_int_equal(ir_b_for_begin(f->b, I(0), I(10), I(1), &init, 1, args), 0);
    assert_int_equal(bdtype(f->b, args[0]), IR_I32);
    IrRef bad = ir_b_const(f->b, I(1), IR_I32);
    assert_int_equal(ir_b_for_end(f->b, &bad, 1), -1);
    assert_non_null(strstr(ir_builder_error(f->b), "loop-carried value"));
    IrRef ok = ir_b_binop(f->b, IR_B_ADD, V(args[1]), F(1.0));
    assert_int_equal(ir_b_for_end(f->b, &ok, 1), 0);
    assert_int_equal(bdtype(f->b, ir_b_region_result(f->b, 0)), IR_F32);
    /* if with results needs both branches to agree */
    IrRef c = ir_b_binop(f->b, IR_B_LT, V(ir_b_param(f->b, 1)), I(3));
    assert_int_equal(ir_b_if_begin(f->b, c), 0);
    IrRef t = ir_b_const(f->b, F(1.0), IR_F32);
    ir_b_if_else(f->b);
    IrRef e = ir_b_const(f->b, I(1), IR_I32);
    assert_int_equal(ir_b_if_end(f->b, &t, &e, 1), -1);
    assert_non_null(strstr(ir_builder_error(f->b), "mismatched type"));
}

/* range() with a negative step: scf.for counts up from the stop, the body sees
 * start + stop - iv; with a step of unknown sign, selects pick the direction. */
static void
test_for_negative_step(void **state)
{
    Fx *f = *state;
    IrRef args[1];
    assert_int_equal(ir_b_for_begin(f->b, I(8), I(0), I(-2), NULL, 0, args), 0);
    IrOp *iv = f->b->fn->vals[args[0]].def;
    assert_non_null(iv);
    assert_int_equal(iv->opc, IR_SUBI); /* (8 + 0) - iv */
    IrOp *loop = f->b->stack[f->b->depth - 1].op;
    assert_int_equal(f->b->fn->vals[loop->args[0]].def->i[0], 0);
    assert_int_equal(f->b->fn->vals[loop->args[1]].def->i[0], 8);
    assert_int_equal(opc_of(f, loop->args[2]), IR_SUBI); /* 0 - (-2), folded later */
    assert_int_equal(ir_b_for_end(f->b, NULL, 0), 0);
    IrRef step = ir_b_param(f->b, 1); /* runtime i32 */
    assert_int_equal(ir_b_for_begin(f->b, I(0), I(10), V(step), NULL, 0, args), 0);
    assert_int_equal(opc_of(f, args[0]), IR_SELECT);
    loop = f->b->stack[f->b->depth - 1].op;
    assert_int_equal(opc_of(f, loop->args[2]), IR_SELECT);
    assert_int_equal(ir_b_for_end(f->b, NULL, 0), 0);
    /* a positive constant step keeps the plain loop */
    assert_int_equal(ir_b_for_begin(f->b, I(0), I(10), I(3), NULL, 0, args), 0);
    assert_null(f->b->fn->vals[args[0]].def);
    assert_int_equal(ir_b_for_end(f->b, NULL, 0), 0);
}

static void
test_errors_have_locations(void **state)
{
    Fx *f = *state;
    ir_builder_set_loc(f->b, "kernel.py", 42, 9);
    ir_b_arange(f->b, 0, 3);
    const char *file;
    int line, col;
    const char *msg = ir_module_first_error(f->m, &file, &line, &col);
    assert_non_null(msg);
    assert_string_equal(file, "kernel.py");
    assert_int_equal(line, 42);
    assert_int_equal(col, 9);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_literal_keeps_tensor_type, setup, teardown),
        cmocka_unit_test_setup_teardown(test_for_negative_step, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tensor_promotion, setup, teardown),
        cmocka_unit_test_setup_teardown(test_division, setup, teardown),
        cmocka_unit_test_setup_teardown(test_literal_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_broadcasting, setup, teardown),
        cmocka_unit_test_setup_teardown(test_comparisons_and_bitwise, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pointers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_loads_and_stores, setup, teardown),
        cmocka_unit_test_setup_teardown(test_casts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_math_and_where, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tiles, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dot_and_reduce, setup, teardown),
        cmocka_unit_test_setup_teardown(test_control_flow_types, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors_have_locations, setup, teardown),
    };
    return cmocka_run_group_tests_name("build", tests, NULL, NULL);
}
