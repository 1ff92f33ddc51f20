/*
 * cg_scalef.c — the 2^n scaling of the exp family as one AVX-512 vscalefps.
 *
 * lo_math.c scales a polynomial p by 2^n, n = fptosi(nf) with nf an integral
 * float, by building the power of two from its exponent bits: p * pow2(n) with
 * pow2(k) = bitcast((k + 127) << 23), or p * pow2(n >> 1) * pow2(n - (n >> 1))
 * for results down to the subnormals (scale2). Both round once and equal
 * p * 2^nf wherever the lowering uses them (n within the exponent range the
 * expansion guarantees), which is what vscalefps computes in one instruction
 * (AVX-512F; ~8 integer and float instructions fewer per vector of exp).
 *
 * cg_scalef runs on the LLVM module right after translation, before the
 * optimiser reshapes the pattern, and only for x86 targets with AVX-512F. It
 * replaces each matched product with llvm.x86.avx512.mask.scalef.ps.512 on
 * 16-lane pieces of the vector (a scalar or narrower vector is widened, a wider
 * one split and joined with shuffles). Unmatched code is left as it is: the
 * pass only ever trades an exact computation for the same value.
 */
#include "cg_int.h"

#include <stdlib.h>
#include <string.h>

#define SCALEF_LANES 16

static int
is_int_scalar(LLVMValueRef v, double want)
{
    return LLVMIsAConstantInt(v) && (double)LLVMConstIntGetSExtValue(v) == want;
}

/* 1 when v is the integer constant 'want', or a vector whose every element is. */
static int
is_int(LLVMValueRef v, long long want)
{
    return cg_const_lanes(v, is_int_scalar, (double)want);
}

static int
opcode_is(LLVMValueRef v, LLVMOpcode op)
{
    return v && LLVMIsAInstruction(v) && LLVMGetInstructionOpcode(v) == op;
}

/* X when b = bitcast((X + 127) << 23) to float lanes, else NULL */
static LLVMValueRef
pow2_exponent(LLVMValueRef b)
{
    if (!opcode_is(b, LLVMBitCast))
        return NULL;
    LLVMValueRef s = LLVMGetOperand(b, 0);
    if (!opcode_is(s, LLVMShl) || !is_int(LLVMGetOperand(s, 1), 23))
        return NULL;
    LLVMValueRef a = LLVMGetOperand(s, 0);
    if (!opcode_is(a, LLVMAdd) || !is_int(LLVMGetOperand(a, 1), 127))
        return NULL;
    return LLVMGetOperand(a, 0);
}

/* nf when k = fptosi(nf) and nf is integral (a rounding intrinsic's result), so
 * that truncation and vscalef's floor agree; else NULL */
static LLVMValueRef
integral_source(LLVMValueRef k)
{
    static const char *const rounds[] = {"llvm.roundeven.", "llvm.rint.", "llvm.nearbyint.",
                                         "llvm.floor.", "llvm.ceil.", "llvm.trunc.",
                                         "llvm.round."};
    if (!opcode_is(k, LLVMFPToSI))
        return NULL;
    LLVMValueRef nf = LLVMGetOperand(k, 0);
    if (!LLVMIsACallInst(nf))
        return NULL;
    LLVMValueRef fn = LLVMGetCalledValue(nf);
    if (!fn || !LLVMIsAFunction(fn))
        return NULL;
    size_t len;
    const char *name = LLVMGetValueName2(fn, &len);
    for (size_t i = 0; i < sizeof rounds / sizeof *rounds; i++)
        if (!strncmp(name, rounds[i], strlen(rounds[i])))
            return nf;
    return NULL;
}

/* The halves of scale2: x1 = k >> 1 and x2 = k - x1 (either order); returns k. */
static LLVMValueRef
halves_source(LLVMValueRef x1, LLVMValueRef x2)
{
    for (int swap = 0; swap < 2; swap++) {
        LLVMValueRef h = swap ? x2 : x1, r = swap ? x1 : x2;
        if (opcode_is(h, LLVMAShr) && is_int(LLVMGetOperand(h, 1), 1) && opcode_is(r, LLVMSub) &&
            LLVMGetOperand(r, 1) == h && LLVMGetOperand(r, 0) == LLVMGetOperand(h, 0))
            return LLVMGetOperand(h, 0);
    }
    return NULL;
}

static int
is_f32_lanes(LLVMValueRef v)
{
    LLVMTypeRef t = LLVMTypeOf(v);
    if (LLVMGetTypeKind(t) == LLVMVectorTypeKind)
        t = LLVMGetElementType(t);
    return LLVMGetTypeKind(t) == LLVMFloatTypeKind;
}

/* For an fmul 'o' computing p * 2^nf by one of the two patterns, sets *p and
 * *nf and returns 1. */
static int
match(LLVMValueRef o, LLVMValueRef *p, LLVMValueRef *nf)
{
    if (!opcode_is(o, LLVMFMul) || !is_f32_lanes(o))
        return 0;
    for (int i = 0; i < 2; i++) {
        LLVMValueRef a = LLVMGetOperand(o, i), b = LLVMGetOperand(o, 1 - i);
        LLVMValueRef x2 = pow2_exponent(b);
        if (!x2)
            continue;
        if ((*nf = integral_source(x2))) { /* p * pow2(k) */
            *p = a;
            return 1;
        }
        if (!opcode_is(a, LLVMFMul))
            continue;
        for (int j = 0; j < 2; j++) { /* (p * pow2(k >> 1)) * pow2(k - (k >> 1)) */
            LLVMValueRef x1 = pow2_exponent(LLVMGetOperand(a, 1 - j));
            LLVMValueRef k = x1 ? halves_source(x1, x2) : NULL;
            if (k && (*nf = integral_source(k))) {
                *p = LLVMGetOperand(a, j);
                return 1;
            }
        }
    }
    return 0;
}

/* ---- rewrite -------------------------------------------------------------------- */

typedef struct Rw {
    LLVMModuleRef m;
    LLVMBuilderRef b;
    LLVMTypeRef i16, i32, v16;
    LLVMValueRef fn;
    LLVMTypeRef fty;
} Rw;

/* shufflevector(x, y) taking lanes first .. first + n - 1 of their concatenation;
 * lanes at or past 'limit' are poison */
static LLVMValueRef
lanes(Rw *w, LLVMValueRef x, LLVMValueRef y, unsigned first, unsigned n, unsigned limit)
{
    LLVMValueRef *mask = malloc(n * sizeof *mask);
    for (unsigned i = 0; i < n; i++)
        mask[i] = first + i < limit ? LLVMConstInt(w->i32, first + i, 0) : LLVMGetPoison(w->i32);
    LLVMValueRef r = LLVMBuildShuffleVector(w->b, x, y, LLVMConstVector(mask, n), "");
    free(mask);
    return r;
}

static LLVMValueRef
scalef16(Rw *w, LLVMValueRef p, LLVMValueRef nf)
{
    LLVMValueRef args[5] = {p, nf, LLVMGetPoison(w->v16), LLVMConstInt(w->i16, 0xffff, 0),
                            LLVMConstInt(w->i32, 4, 0) /* current rounding mode */};
    return LLVMBuildCall2(w->b, w->fty, w->fn, args, 5, "scalef");
}

/* p * 2^nf for f32 lanes of any count, in 16-lane pieces */
static LLVMValueRef
scalef_any(Rw *w, LLVMValueRef p, LLVMValueRef nf)
{
    LLVMTypeRef t = LLVMTypeOf(p);
    if (LLVMGetTypeKind(t) != LLVMVectorTypeKind) {
        LLVMValueRef z = LLVMConstInt(w->i32, 0, 0), u = LLVMGetPoison(w->v16);
        LLVMValueRef r = scalef16(w, LLVMBuildInsertElement(w->b, u, p, z, ""),
                                  LLVMBuildInsertElement(w->b, u, nf, z, ""));
        return LLVMBuildExtractElement(w->b, r, z, "");
    }
    unsigned n = LLVMGetVectorSize(t);
    if (n == SCALEF_LANES)
        return scalef16(w, p, nf);
    unsigned k = 1;
    while (k * SCALEF_LANES < n)
        k *= 2;
    LLVMValueRef *part = malloc(k * sizeof *part);
    LLVMValueRef pu = LLVMGetPoison(t);
    for (unsigned c = 0; c < k; c++)
        part[c] = c * SCALEF_LANES < n
                      ? scalef16(w, lanes(w, p, pu, c * SCALEF_LANES, SCALEF_LANES, n),
                                 lanes(w, nf, LLVMGetPoison(LLVMTypeOf(nf)), c * SCALEF_LANES,
                                       SCALEF_LANES, n))
                      : LLVMGetPoison(w->v16);
    for (unsigned width = SCALEF_LANES; k > 1; k /= 2, width *= 2)
        for (unsigned c = 0; c < k / 2; c++)
            part[c] = lanes(w, part[2 * c], part[2 * c + 1], 0, 2 * width, 2 * width);
    LLVMValueRef r = part[0];
    free(part);
    if (LLVMGetVectorSize(LLVMTypeOf(r)) != n)
        r = lanes(w, r, LLVMGetPoison(LLVMTypeOf(r)), 0, n, n);
    return r;
}

/* ---- api ------------------------------------------------------------------------ */

int
cg_scalef(LLVMModuleRef m, const CgTarget *t)
{
    if (strncmp(t->triple, "x86_64", 6) != 0 || !strstr(t->features, "+avx512f"))
        return 0;
    const char *name = "llvm.x86.avx512.mask.scalef.ps.512";
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    if (!id)
        return 0;
    LLVMContextRef ctx = LLVMGetModuleContext(m);
    Rw w = {.m = m, .b = LLVMCreateBuilderInContext(ctx), .i32 = LLVMInt32TypeInContext(ctx)};
    w.i16 = LLVMInt16TypeInContext(ctx);
    w.v16 = LLVMVectorType(LLVMFloatTypeInContext(ctx), SCALEF_LANES);
    w.fn = LLVMGetIntrinsicDeclaration(m, id, NULL, 0);
    w.fty = LLVMIntrinsicGetType(ctx, id, NULL, 0);
    int nrw = 0;
    for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f))
        for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb)) {
            LLVMValueRef in = LLVMGetFirstInstruction(bb);
            while (in) {
                LLVMValueRef next = LLVMGetNextInstruction(in), p, nf;
                if (match(in, &p, &nf)) {
                    LLVMPositionBuilderBefore(w.b, in);
                    LLVMReplaceAllUsesWith(in, scalef_any(&w, p, nf));
                    LLVMInstructionEraseFromParent(in);
                    nrw++;
                }
                in = next;
            }
        }
    LLVMDisposeBuilder(w.b);
    return nrw;
}
