/*
 * ir_build_fp8.c — conversions between the five 8-bit float formats and the wide
 * floats, decomposed into integer and float ops the compiler already has.
 *
 * One decoder and one encoder serve every format, parameterised by its exponent
 * and mantissa bits, exponent bias and special-value convention (IrFp8Format,
 * ir_type.c). Called by bcast (ir_build_arith.c) for every cast that involves an
 * fp8 dtype; the lowering only ever sees fp8 values as i8 being moved.
 *
 * Decode (fp8 -> fp32) is exact. Encode (fp32 or fp64 -> fp8) rounds once, to
 * nearest with ties to even (or toward zero for fp_downcast_rounding="rtz"), and
 * follows torch's conversions for out-of-range values: e5m2 overflows to inf,
 * e4m3fn (and e4b15) saturate to the largest finite value, the fnuz formats give
 * their NaN (0x80) and never a negative zero; a NaN gives the format's NaN.
 */
#include "ir_build_int.h"

#include <math.h>

static IrType sc(IrBuilder *b, int d) { return ir_type_scalar(b->m, (IrDtype)d); }

/* A constant of dtype d shaped like x. */
static IrRef
kint(IrBuilder *b, IrRef like, int d, int64_t v)
{
    return bsplat(b, bconst_int(b, v, sc(b, d)), brank(b, like), bshape(b, like));
}

static IrRef
kflt(IrBuilder *b, IrRef like, int d, double v)
{
    return bsplat(b, bconst_float(b, v, sc(b, d)), brank(b, like), bshape(b, like));
}

static IrRef
op1(IrBuilder *b, IrOpc opc, IrRef x, int d)
{
    return bemit(b, opc, &x, 1, bwith_elem(b, x, sc(b, d)));
}

/* Predicate numbers of arith.cmpi (arith::CmpIPredicate). */
enum { EQ = 0, NE = 1, ULT = 6, UGT = 8, UGE = 9 };

static IrRef
icmp(IrBuilder *b, int pred, IrRef x, IrRef y)
{
    IrRef a[2] = {x, y};
    IrOp *op = bemit_op(b, IR_CMPI, a, 2, bwith_elem(b, x, sc(b, IR_I1)));
    op->i[0] = pred;
    return op->res[0];
}

/* fp8 value x (of dtype d) -> fp32, exactly. */
IrRef
bfp8_decode(IrBuilder *b, IrRef x)
{
    const IrFp8Format *f = ir_fp8_format((IrDtype)bdtype(b, x));
    int M = f->mbits, emax = (1 << f->ebits) - 1;
    IrRef u8 = op1(b, IR_BITCAST, x, IR_U8);
    IrRef u = op1(b, IR_EXTUI, u8, IR_U32);
    IrRef mag = bbin(b, IR_ANDI, u, kint(b, u, IR_U32, 0x7F));
    IrRef sign = bbin(b, IR_SHLI, bbin(b, IR_ANDI, u, kint(b, u, IR_U32, 0x80)), kint(b, u, IR_U32, 24));
    IrRef e = bbin(b, IR_SHRUI, mag, kint(b, u, IR_U32, M));
    IrRef m = bbin(b, IR_ANDI, mag, kint(b, u, IR_U32, (1 << M) - 1));
    /* normal: the exponent field moves to fp32's and is rebiased */
    IrRef norm = bbin(b, IR_ADDI, bbin(b, IR_SHLI, mag, kint(b, u, IR_U32, 23 - M)),
                     kint(b, u, IR_U32, (int64_t)(127 - f->bias) << 23));
    /* subnormal: m * 2^(1 - bias - M), exact in fp32 */
    IrRef subf = bbin(b, IR_MULF, op1(b, IR_UITOFP, m, IR_F32), kflt(b, u, IR_F32, ldexp(1.0, 1 - f->bias - M)));
    IrRef sub = op1(b, IR_BITCAST, subf, IR_U32);
    IrRef bits = bselect(b, icmp(b, EQ, e, kint(b, u, IR_U32, 0)), sub, norm);
    IrRef qnan = kint(b, u, IR_U32, 0x7FC00000);
    if (f->kind == IR_FP8_IEEE) {
        IrRef special = icmp(b, EQ, e, kint(b, u, IR_U32, emax));
        IrRef inf = bselect(b, icmp(b, EQ, m, kint(b, u, IR_U32, 0)), kint(b, u, IR_U32, 0x7F800000), qnan);
        bits = bselect(b, special, inf, bits);
    } else if (f->kind == IR_FP8_FN) {
        bits = bselect(b, icmp(b, EQ, mag, kint(b, u, IR_U32, 0x7F)), qnan, bits);
    }
    bits = bbin(b, IR_ORI, bits, sign);
    if (f->kind == IR_FP8_FNUZ) /* 0x80, the only NaN; no signed zero */
        bits = bselect(b, icmp(b, EQ, u, kint(b, u, IR_U32, 0x80)), qnan, bits);
    return op1(b, IR_BITCAST, bits, IR_F32);
}

/* fp32 or fp64 value x -> fp8 type dst; rtz rounds toward zero, else to nearest even. */
IrRef
bfp8_encode(IrBuilder *b, IrRef x, IrType dst, bool rtz)
{
    const IrFp8Format *f = ir_fp8_format((IrDtype)ir_type_dtype(b->m, dst));
    bool wide = bdtype(b, x) == IR_F64;
    int FD = wide ? IR_F64 : IR_F32, UD = wide ? IR_U64 : IR_U32;
    int W = wide ? 64 : 32, SM = wide ? 52 : 23, SB = wide ? 1023 : 127;
    int M = f->mbits, emin = 1 - f->bias, sh = SM - M;
    int64_t absmask = (int64_t)((UINT64_C(1) << (W - 1)) - 1);
    int64_t expmask = (int64_t)(((UINT64_C(1) << (W - 1 - SM)) - 1) << SM);
    IrRef u = op1(b, IR_BITCAST, x, UD);
    IrRef a = bbin(b, IR_ANDI, u, kint(b, u, UD, absmask));
    IrRef neg = icmp(b, NE, a, u);
    IrRef isnan = icmp(b, UGT, a, kint(b, u, UD, expmask));
    IrRef isinf = icmp(b, EQ, a, kint(b, u, UD, expmask));
    /* |x| >= the format's smallest normal: rebias, then round the mantissa */
    IrRef t = bbin(b, IR_SUBI, a, kint(b, u, UD, (int64_t)(SB - f->bias) << SM));
    if (!rtz) {
        IrRef odd = bbin(b, IR_ANDI, bbin(b, IR_SHRUI, t, kint(b, u, UD, sh)), kint(b, u, UD, 1));
        t = bbin(b, IR_ADDI, bbin(b, IR_ADDI, t, kint(b, u, UD, ((int64_t)1 << (sh - 1)) - 1)), odd);
    }
    IrRef rn = bbin(b, IR_SHRUI, t, kint(b, u, UD, sh));
    /* below it: |x| * 2^(M - emin) is exact and its integer part is the code
     * (2^M, when rounding carries, is the smallest normal's code) */
    IrRef q = bbin(b, IR_MULF, op1(b, IR_BITCAST, a, FD), kflt(b, u, FD, ldexp(1.0, M - emin)));
    if (!rtz)
        q = bemit(b, IR_RINT, &q, 1, btype(b, q));
    IrRef rs = op1(b, IR_FPTOUI, q, UD);
    IrRef small = icmp(b, ULT, a, kint(b, u, UD, (int64_t)(emin + SB) << SM));
    IrRef r = bselect(b, small, rs, rn);
    /* out of range and special values */
    int maxfin = f->kind == IR_FP8_FNUZ ? 0x7F : f->kind == IR_FP8_FN ? 0x7E : (((1 << f->ebits) - 2) << M) | ((1 << M) - 1);
    int infcode = ((1 << f->ebits) - 1) << M;
    IrRef over = icmp(b, UGT, r, kint(b, u, UD, maxfin));
    IrRef kmax = kint(b, u, UD, maxfin);
    if (f->kind == IR_FP8_IEEE) {
        IrRef kinf = kint(b, u, UD, infcode);
        r = bselect(b, over, rtz ? kmax : kinf, r);
        if (rtz)
            r = bselect(b, isinf, kinf, r);
        r = bselect(b, isnan, kint(b, u, UD, 0x7F), r);
    } else if (f->kind == IR_FP8_FN) {
        r = bselect(b, over, kmax, r);
        r = bselect(b, isnan, kint(b, u, UD, 0x7F), r);
    } else { /* fnuz: NaN below; toward zero a finite overflow is the largest value */
        r = bselect(b, over, kmax, r);
    }
    IrRef r8 = op1(b, IR_TRUNCI, r, IR_U8);
    IrRef s8 = bselect(b, neg, kint(b, r8, IR_U8, 0x80), kint(b, r8, IR_U8, 0));
    IrRef code = bbin(b, IR_ORI, r8, s8);
    if (f->kind == IR_FP8_FNUZ) {
        IrRef bad = bbin(b, IR_ORI, isnan, isinf);
        if (!rtz)
            bad = bbin(b, IR_ORI, bad, over);
        code = bselect(b, icmp(b, EQ, r8, kint(b, r8, IR_U8, 0)), kint(b, r8, IR_U8, 0), code);
        code = bselect(b, bad, kint(b, r8, IR_U8, 0x80), code);
    }
    return op1(b, IR_BITCAST, code, ir_type_dtype(b->m, dst));
}
