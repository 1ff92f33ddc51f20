/*
 * cg_cold.c — cold regions: vector code that only rare lanes need runs behind
 * a branch on "does any lane of this vector need it".
 *
 * The lowering emits everything branch-free so that it vectorises; a region
 * such as the large-argument reduction of sin/cos (lo_math.c, needed only for
 * |x| >= 2^16) would then cost every vector. The lowering marks such a region:
 * its input goes through math.fma(v, 1, -0) (= v), each output through
 * math.fma(v, -1, -0) (= -v, negated back after it), and its contract is that
 * lanes whose input is zero do not use the outputs.
 *
 * cg_cold_branch runs on the LLVM module right after translation, before the
 * optimiser folds the markers away. For each input marker it takes the region:
 * the instructions of the block that depend on the input and feed an output
 * marker. When the region is pure and used only through its outputs, it moves
 * into a block of its own, entered when some lane of the input is non-zero;
 * the outputs become phis (zero from the edge that skips the region). The
 * markers are removed in every case, so the semantics never depend on this pass.
 */
#include "cg_int.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef enum { NOT_MARKER, MARK_IN, MARK_OUT } Mark;

static int
is_fp(LLVMValueRef v, double want)
{
    if (!LLVMIsAConstantFP(v))
        return 0;
    LLVMBool lossy;
    double d = LLVMConstRealGetDouble(v, &lossy);
    return d == want && signbit(d) == signbit(want);
}

/* 1 when v is the float constant 'want' (sign of zero included), or a vector
 * whose every element is. */
static int
is_const(LLVMValueRef v, double want)
{
    return cg_const_lanes(v, is_fp, want);
}

static const char *
callee_name(LLVMValueRef call)
{
    LLVMValueRef fn = LLVMGetCalledValue(call);
    if (!fn || !LLVMIsAFunction(fn))
        return "";
    size_t len;
    return LLVMGetValueName2(fn, &len);
}

static Mark
marker(LLVMValueRef in)
{
    if (!LLVMIsACallInst(in) || strncmp(callee_name(in), "llvm.fma.", 9) != 0 ||
        LLVMGetNumArgOperands(in) != 3 || !is_const(LLVMGetOperand(in, 2), -0.0))
        return NOT_MARKER;
    if (is_const(LLVMGetOperand(in, 1), 1.0))
        return MARK_IN;
    if (is_const(LLVMGetOperand(in, 1), -1.0))
        return MARK_OUT;
    return NOT_MARKER;
}

/* Whether the instruction may move under a branch: no memory, no side effects. */
static int
is_pure(LLVMValueRef in)
{
    static const char *const ok_calls[] = {
        "llvm.fma.", "llvm.fmuladd.", "llvm.roundeven.", "llvm.rint.", "llvm.nearbyint.",
        "llvm.fabs.", "llvm.floor.", "llvm.ceil.", "llvm.trunc.", "llvm.round.",
        "llvm.copysign.", "llvm.minnum.", "llvm.maxnum.", "llvm.minimum.", "llvm.maximum.",
        "llvm.sqrt.", "llvm.smax.", "llvm.smin.", "llvm.umax.", "llvm.umin.", "llvm.abs.",
    };
    switch (LLVMGetInstructionOpcode(in)) {
    case LLVMCall: {
        const char *n = callee_name(in);
        for (size_t i = 0; i < sizeof ok_calls / sizeof *ok_calls; i++)
            if (!strncmp(n, ok_calls[i], strlen(ok_calls[i])))
                return 1;
        return 0;
    }
    case LLVMLoad: case LLVMStore: case LLVMAlloca: case LLVMFence: case LLVMAtomicCmpXchg:
    case LLVMAtomicRMW: case LLVMPHI: case LLVMInvoke: case LLVMVAArg: case LLVMLandingPad:
    case LLVMSDiv: case LLVMUDiv: case LLVMSRem: case LLVMURem: /* may trap */
        return 0;
    default:
        return !LLVMIsATerminatorInst(in);
    }
}

/* ---- instruction indices of one block ------------------------------------------- */

typedef struct Slot {
    LLVMValueRef v;
    int idx;
} Slot;

typedef struct Block {
    LLVMValueRef *ins;
    int n;
    Slot *map; /* sorted by v */
} Block;

static int
slot_cmp(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const Slot *)a)->v, y = (uintptr_t)((const Slot *)b)->v;
    return x < y ? -1 : x > y;
}

static int
block_load(Block *b, LLVMBasicBlockRef bb)
{
    int n = 0;
    for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in))
        n++;
    b->n = n;
    b->ins = malloc((size_t)n * sizeof *b->ins);
    b->map = malloc((size_t)n * sizeof *b->map);
    if (!b->ins || !b->map)
        abort();
    n = 0;
    for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in), n++) {
        b->ins[n] = in;
        b->map[n] = (Slot){in, n};
    }
    qsort(b->map, (size_t)n, sizeof *b->map, slot_cmp);
    return n;
}

/* Index of v in the block, or -1. */
static int
block_index(const Block *b, LLVMValueRef v)
{
    Slot key = {v, 0};
    const Slot *s = bsearch(&key, b->map, (size_t)b->n, sizeof *b->map, slot_cmp);
    return s ? s->idx : -1;
}

static void
block_free(Block *b)
{
    free(b->ins);
    free(b->map);
}

/* ---- the transformation ------------------------------------------------------------- */

/* Replaces the uses of v by users inside the region (flag set) with in_region,
 * the others with outside. */
static void
replace_uses(const Block *b, const char *region, LLVMValueRef v, LLVMValueRef in_region,
             LLVMValueRef outside)
{
    int n = 0;
    for (LLVMUseRef u = LLVMGetFirstUse(v); u; u = LLVMGetNextUse(u))
        n++;
    LLVMValueRef *users = malloc((size_t)(n ? n : 1) * sizeof *users);
    if (!users)
        abort();
    n = 0;
    for (LLVMUseRef u = LLVMGetFirstUse(v); u; u = LLVMGetNextUse(u))
        users[n++] = LLVMGetUser(u);
    for (int k = 0; k < n; k++) {
        int i = block_index(b, users[k]);
        LLVMValueRef to = i >= 0 && region[i] ? in_region : outside;
        int nops = LLVMGetNumOperands(users[k]);
        for (int o = 0; o < nops; o++)
            if (LLVMGetOperand(users[k], o) == v)
                LLVMSetOperand(users[k], o, to);
    }
    free(users);
}

/* Builds the region of input marker ins[i0] and moves it under a branch.
 * Returns 1 when it did, 0 when the region was left in place. Either way the
 * input marker is gone afterwards (output markers of a region left in place
 * are removed by the caller). */
static int
branch_region(LLVMValueRef f, Block *b, int i0)
{
    int n = b->n, last = -1;
    /* dep: depends on the input; out: an output marker of this region (depends on
     * the input, not on another output: an fma(v, -1, -0) of the kernel's own code
     * downstream is not one); down: depends on an output */
    char *flags = calloc(6, (size_t)n);
    if (!flags)
        abort();
    char *dep = flags, *out = dep + n, *down = out + n, *feeds = down + n, *region = feeds + n, *after = region + n;
    LLVMValueRef mark = b->ins[i0], x = LLVMGetOperand(mark, 0);
    dep[i0] = 1;
    for (int i = i0 + 1; i < n; i++) {
        int nops = LLVMGetNumOperands(b->ins[i]);
        for (int o = 0; o < nops; o++) {
            int j = block_index(b, LLVMGetOperand(b->ins[i], o));
            if (j >= 0) {
                dep[i] |= dep[j];
                down[i] |= out[j] | down[j];
            }
        }
        out[i] = dep[i] && !down[i] && marker(b->ins[i]) == MARK_OUT;
    }
    for (int i = n - 1; i > i0; i--) {
        if (out[i]) {
            feeds[i] = 1;
            if (last < 0)
                last = i;
        }
        if (!feeds[i])
            continue;
        int nops = LLVMGetNumOperands(b->ins[i]);
        for (int o = 0; o < nops; o++) {
            int j = block_index(b, LLVMGetOperand(b->ins[i], o));
            if (j > i0)
                feeds[j] = 1;
        }
    }
    for (int i = i0 + 1; i < n; i++)
        region[i] = dep[i] && feeds[i];
    int ok = last > i0;
    /* pure, and used only inside the region (outputs excepted) */
    for (int i = i0 + 1; ok && i <= last; i++) {
        if (!region[i])
            continue;
        if (!is_pure(b->ins[i])) {
            ok = 0;
            break;
        }
        if (out[i])
            continue;
        for (LLVMUseRef u = LLVMGetFirstUse(b->ins[i]); u && ok; u = LLVMGetNextUse(u)) {
            int j = block_index(b, LLVMGetUser(u));
            ok = j >= 0 && region[j];
        }
    }
    LLVMReplaceAllUsesWith(mark, x);
    if (!ok) {
        LLVMInstructionEraseFromParent(mark);
        free(flags);
        return 0;
    }
    /* instructions before the last output that use an output go after the region */
    for (int i = i0 + 1; i <= last; i++) {
        if (region[i])
            continue;
        int nops = LLVMGetNumOperands(b->ins[i]);
        for (int o = 0; o < nops && !after[i]; o++) {
            int j = block_index(b, LLVMGetOperand(b->ins[i], o));
            after[i] = j >= 0 && (after[j] || out[j]);
        }
    }
    LLVMBasicBlockRef bb = LLVMGetInstructionParent(mark);
    LLVMContextRef c = LLVMGetModuleContext(LLVMGetGlobalParent(f));
    LLVMBasicBlockRef head = cg_block_split_head(f, bb, "cold.head");
    LLVMBasicBlockRef cold = LLVMInsertBasicBlockInContext(c, bb, "cold.region");
    LLVMBuilderRef bld = LLVMCreateBuilderInContext(c);
    LLVMPositionBuilderAtEnd(bld, head);
    for (int i = 0; i <= last; i++)
        if (!region[i] && !after[i]) {
            LLVMInstructionRemoveFromParent(b->ins[i]);
            LLVMInsertIntoBuilder(bld, b->ins[i]);
        }
    /* enter the region when any lane of the input is non-zero */
    LLVMTypeRef xt = LLVMTypeOf(x);
    LLVMValueRef nz = LLVMBuildFCmp(bld, LLVMRealUNE, x, LLVMConstNull(xt), "cold.nz");
    if (LLVMGetTypeKind(xt) == LLVMVectorTypeKind) {
        LLVMTypeRef bits = LLVMIntTypeInContext(c, LLVMGetVectorSize(xt));
        nz = LLVMBuildICmp(bld, LLVMIntNE, LLVMBuildBitCast(bld, nz, bits, "cold.mask"),
                           LLVMConstNull(bits), "cold.any");
    }
    LLVMValueRef br = LLVMBuildCondBr(bld, nz, cold, bb);
    LLVMTypeRef i32 = LLVMInt32TypeInContext(c);
    LLVMMetadataRef wm[3] = {LLVMMDStringInContext2(c, "branch_weights", 14),
                             LLVMValueAsMetadata(LLVMConstInt(i32, 1, 0)),
                             LLVMValueAsMetadata(LLVMConstInt(i32, 1000, 0))};
    LLVMSetMetadata(br, LLVMGetMDKindIDInContext(c, "prof", 4),
                    LLVMMetadataAsValue(c, LLVMMDNodeInContext2(c, wm, 3)));

    LLVMPositionBuilderAtEnd(bld, cold);
    for (int i = i0 + 1; i <= last; i++)
        if (region[i]) {
            LLVMInstructionRemoveFromParent(b->ins[i]);
            LLVMInsertIntoBuilder(bld, b->ins[i]);
        }
    /* outputs: -v inside the region, a phi after it, then what uses them */
    for (int i = i0 + 1; i <= last; i++)
        if (after[i])
            LLVMInstructionRemoveFromParent(b->ins[i]);
    LLVMValueRef first = LLVMGetFirstInstruction(bb);
    for (int i = i0 + 1; i <= last; i++) {
        if (!out[i])
            continue;
        LLVMValueRef o = b->ins[i];
        LLVMPositionBuilderBefore(bld, o);
        LLVMValueRef neg = LLVMBuildFNeg(bld, LLVMGetOperand(o, 0), "cold.out");
        LLVMPositionBuilderBefore(bld, first);
        LLVMValueRef phi = LLVMBuildPhi(bld, LLVMTypeOf(o), "cold.phi");
        LLVMValueRef vals[2] = {neg, LLVMConstNull(LLVMTypeOf(o))};
        LLVMBasicBlockRef from[2] = {cold, head};
        LLVMAddIncoming(phi, vals, from, 2);
        replace_uses(b, region, o, neg, phi);
        LLVMInstructionEraseFromParent(o);
    }
    LLVMPositionBuilderAtEnd(bld, cold);
    LLVMBuildBr(bld, bb);
    LLVMPositionBuilderBefore(bld, first);
    for (int i = i0 + 1; i <= last; i++)
        if (after[i])
            LLVMInsertIntoBuilder(bld, b->ins[i]);
    LLVMDisposeBuilder(bld);
    LLVMInstructionEraseFromParent(mark);
    free(flags);
    return 1;
}

/* The first input marker of f, or NULL. */
static LLVMValueRef
find_input(LLVMValueRef f)
{
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb))
        for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in))
            if (marker(in) == MARK_IN)
                return in;
    return NULL;
}

int
cg_cold_branch(LLVMModuleRef m)
{
    int moved = 0;
    for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
        if (LLVMIsDeclaration(f))
            continue;
        for (LLVMValueRef mark; (mark = find_input(f));) {
            Block b;
            block_load(&b, LLVMGetInstructionParent(mark));
            moved += branch_region(f, &b, block_index(&b, mark));
            block_free(&b);
        }
        /* output markers of regions left in place: fma(v, -1, -0) is -v */
        for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb))
            for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in;) {
                LLVMValueRef next = LLVMGetNextInstruction(in);
                if (marker(in) == MARK_OUT) {
                    LLVMBuilderRef bld = LLVMCreateBuilderInContext(LLVMGetModuleContext(m));
                    LLVMPositionBuilderBefore(bld, in);
                    LLVMReplaceAllUsesWith(in, LLVMBuildFNeg(bld, LLVMGetOperand(in, 0), "cold.out"));
                    LLVMDisposeBuilder(bld);
                    LLVMInstructionEraseFromParent(in);
                }
                in = next;
            }
    }
    return moved;
}
