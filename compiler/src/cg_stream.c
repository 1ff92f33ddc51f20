/*
 * cg_stream.c — the streaming-store variant of a kernel: tritium_kernel_nt.
 *
 * An element-wise kernel over arrays larger than the last-level cache spends
 * a third of its memory traffic reading output lines it is about to overwrite
 * (read for ownership). Non-temporal stores skip that read and bypass the
 * cache, ~1.3x on vector add at 4M-64M floats here. They hurt when the output
 * is read again soon from cache, so the launcher picks per launch
 * (python/src/py_launch.c): the variant runs only when the bytes a launch
 * stores exceed half the last-level cache.
 *
 * cg_stream_add clones the optimised module, renames its functions with an
 * "_nt" suffix, marks every store into memory that does not belong to the
 * kernel itself (the root of the address is not an alloca or a call, i.e. not
 * a stack or heap temporary) !nontemporal, ends the entry and the smt.parallel
 * runners (cg_par.c; the runtime calls those on any thread) with an sfence on x86
 * (non-temporal stores are weakly ordered; the fence makes them visible before
 * the launch's barrier), makes the clone's exported globals declarations of the
 * original's, and links the clone back into the module. On x86 a
 * vector store aligned below its size gets a run-time alignment test choosing
 * between an aligned vmovntps and the plain cached store (guard_alignment); a
 * scalar float or double store is left cached where the CPU has no movntss/movntsd
 * (AMD's SSE4A: LLVM would drop the hint on Intel and emit a cached movss anyway,
 * even for the same bits stored from an integer); on
 * RISC-V the marked stores become Zihintntl-hinted stores where the target has
 * them.
 */
#include "cg_int.h"

#include <llvm-c/Linker.h>

#include <stdio.h>
#include <string.h>

#define MAX_SEEN 64

typedef struct Walk {
    LLVMValueRef seen[MAX_SEEN];
    int nseen;
} Walk;

/* 1 when every root of pointer p is memory the kernel was given (a pointer
 * loaded from the argument slots, a parameter, an integer), 0 when any root is
 * a stack or heap temporary or the walk cannot tell. */
static int
outside_memory(Walk *w, LLVMValueRef p, int depth)
{
    if (depth > 24)
        return 0;
    for (int i = 0; i < w->nseen; i++)
        if (w->seen[i] == p)
            return 1; /* a loop-carried pointer: decided by its other inputs */
    if (w->nseen == MAX_SEEN)
        return 0;
    w->seen[w->nseen++] = p;
    if (LLVMIsAAllocaInst(p) || LLVMIsACallInst(p) || LLVMIsAConstant(p))
        return 0;
    if (LLVMIsALoadInst(p) || LLVMIsAArgument(p) || LLVMIsAIntToPtrInst(p))
        return 1;
    if (LLVMIsAGetElementPtrInst(p) || LLVMIsABitCastInst(p) || LLVMIsAAddrSpaceCastInst(p))
        return outside_memory(w, LLVMGetOperand(p, 0), depth + 1);
    if (LLVMIsASelectInst(p))
        return outside_memory(w, LLVMGetOperand(p, 1), depth + 1) &&
               outside_memory(w, LLVMGetOperand(p, 2), depth + 1);
    if (LLVMIsAPHINode(p)) {
        unsigned n = LLVMCountIncoming(p);
        for (unsigned i = 0; i < n; i++)
            if (!outside_memory(w, LLVMGetIncomingValue(p, i), depth + 1))
                return 0;
        return 1;
    }
    return 0;
}

/* Bytes of a vector store's value when its alignment is below that size
 * (x86 has no unaligned vector non-temporal store: LLVM would split it into
 * 8-byte movntsd/movnti pieces plus shuffles, which costs compute-bound kernels
 * a third of their speed), else 0. */
static unsigned
underaligned_vector_bytes(LLVMTargetDataRef td, LLVMValueRef store)
{
    LLVMTypeRef ty = LLVMTypeOf(LLVMGetOperand(store, 0));
    if (LLVMGetTypeKind(ty) != LLVMVectorTypeKind)
        return 0;
    unsigned long long bytes = LLVMStoreSizeOfType(td, ty);
    if (bytes < 16 || bytes > 64 || (bytes & (bytes - 1)) || LLVMGetAlignment(store) >= bytes)
        return 0;
    return (unsigned)bytes;
}

/* Turns the under-aligned vector store s (in block bb) into
 *     head:  <bb's instructions before s>; br (addr % bytes == 0), %nt, %plain
 *     nt:    store, align bytes, !nontemporal; br %bb
 *     plain: store (cached, as before); br %bb
 *     bb:    <bb's instructions after s>
 * Every edge into bb now enters head; head keeps bb's phis, and bb keeps its
 * name and terminator, so a loop's back edge from bb still matches the phis.
 * The branch goes the same way for a whole array in practice (outputs are
 * aligned or not), so it predicts perfectly. */
static void
guard_alignment(LLVMValueRef f, LLVMValueRef s, unsigned bytes, unsigned kind)
{
    LLVMBasicBlockRef bb = LLVMGetInstructionParent(s);
    LLVMContextRef c = LLVMGetModuleContext(LLVMGetGlobalParent(f));
    LLVMBasicBlockRef head = cg_block_split_head(f, bb, "nt.head");
    LLVMBasicBlockRef nt = LLVMInsertBasicBlockInContext(c, bb, "nt.aligned");
    LLVMBasicBlockRef plain = LLVMInsertBasicBlockInContext(c, bb, "nt.unaligned");
    LLVMBuilderRef b = LLVMCreateBuilderInContext(c);
    LLVMPositionBuilderAtEnd(b, head);
    for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in != s;) {
        LLVMValueRef next = LLVMGetNextInstruction(in);
        LLVMInstructionRemoveFromParent(in);
        LLVMInsertIntoBuilder(b, in);
        in = next;
    }
    LLVMTypeRef i64 = LLVMInt64TypeInContext(c);
    LLVMValueRef addr = LLVMBuildPtrToInt(b, LLVMGetOperand(s, 1), i64, "nt.addr");
    LLVMValueRef low = LLVMBuildAnd(b, addr, LLVMConstInt(i64, bytes - 1, 0), "nt.low");
    LLVMValueRef ok = LLVMBuildICmp(b, LLVMIntEQ, low, LLVMConstInt(i64, 0, 0), "nt.ok");
    LLVMBuildCondBr(b, ok, nt, plain);

    LLVMValueRef md = LLVMGetMetadata(s, kind);
    LLVMInstructionRemoveFromParent(s);
    LLVMPositionBuilderAtEnd(b, plain);
    LLVMInsertIntoBuilder(b, s);
    LLVMSetMetadata(s, kind, NULL);
    LLVMBuildBr(b, bb);

    LLVMPositionBuilderAtEnd(b, nt);
    LLVMValueRef a = LLVMBuildStore(b, LLVMGetOperand(s, 0), LLVMGetOperand(s, 1));
    LLVMSetAlignment(a, bytes);
    LLVMSetMetadata(a, kind, md);
    LLVMBuildBr(b, bb);
    LLVMDisposeBuilder(b);
}

/* 1 when store s keeps a scalar float or double. */
static int
stores_fp_scalar(LLVMValueRef s)
{
    LLVMTypeKind k = LLVMGetTypeKind(LLVMTypeOf(LLVMGetOperand(s, 0)));
    return k == LLVMFloatTypeKind || k == LLVMDoubleTypeKind;
}

/* Marks the function's stores into outside memory non-temporal; returns how
 * many. With td (x86), under-aligned vector stores get an alignment guard;
 * without fp_scalars (no SSE4A) scalar float stores stay as they are. */
static int
mark_stores(LLVMValueRef f, LLVMValueRef one, LLVMTargetDataRef td, int fp_scalars)
{
    LLVMContextRef c = LLVMGetModuleContext(LLVMGetGlobalParent(f));
    unsigned kind = LLVMGetMDKindIDInContext(c, "nontemporal", 11);
    LLVMValueRef guard[256];
    unsigned gbytes[256];
    int n = 0, ng = 0;
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb))
        for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in)) {
            if (!LLVMIsAStoreInst(in) || LLVMGetVolatile(in) || LLVMGetOrdering(in) != LLVMAtomicOrderingNotAtomic)
                continue;
            Walk w = {.nseen = 0};
            if (!outside_memory(&w, LLVMGetOperand(in, 1), 0) || (!fp_scalars && stores_fp_scalar(in)))
                continue;
            LLVMSetMetadata(in, kind, one);
            n++;
            unsigned bytes = td ? underaligned_vector_bytes(td, in) : 0;
            if (bytes && ng < 256) {
                guard[ng] = in;
                gbytes[ng++] = bytes;
            }
        }
    for (int i = 0; i < ng; i++)
        guard_alignment(f, guard[i], gbytes[i], kind);
    return n;
}

/* sfence before every return of f. */
static void
fence_returns(LLVMModuleRef m, LLVMValueRef f)
{
    LLVMContextRef c = LLVMGetModuleContext(m);
    LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(c), NULL, 0, 0);
    LLVMValueRef sfence = LLVMGetNamedFunction(m, "llvm.x86.sse.sfence");
    if (!sfence)
        sfence = LLVMAddFunction(m, "llvm.x86.sse.sfence", fty);
    LLVMBuilderRef b = LLVMCreateBuilderInContext(c);
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb)) {
        LLVMValueRef t = LLVMGetBasicBlockTerminator(bb);
        if (t && LLVMIsAReturnInst(t)) {
            LLVMPositionBuilderBefore(b, t);
            LLVMBuildCall2(b, fty, sfence, NULL, 0, "");
        }
    }
    LLVMDisposeBuilder(b);
}

/* Whether f is an smt.parallel runner (cg_par.c), which returns to the runtime. */
static int
is_parallel_runner(LLVMValueRef f)
{
    size_t n, k = strlen(CG_PAR_PREFIX);
    const char *s = LLVMGetValueName2(f, &n);
    return n >= k && memcmp(s, CG_PAR_PREFIX, k) == 0;
}

int
cg_stream_add(LLVMModuleRef m, const CgTarget *t, CgStr *err)
{
    LLVMModuleRef v = LLVMCloneModule(m);
    LLVMContextRef c = LLVMGetModuleContext(v);
    LLVMMetadataRef one_i32 = LLVMValueAsMetadata(LLVMConstInt(LLVMInt32TypeInContext(c), 1, 0));
    LLVMValueRef one_md = LLVMMetadataAsValue(c, LLVMMDNodeInContext2(c, &one_i32, 1));
    int marked = 0;
    LLVMTargetDataRef td = cg_target_is_riscv(t) ? NULL : LLVMGetModuleDataLayout(v);
    int fp_scalars = !td || strstr(t->features, "+sse4a") || strncmp(t->cpu, "znver", 5) == 0;
    for (LLVMValueRef f = LLVMGetFirstFunction(v); f; f = LLVMGetNextFunction(f)) {
        if (LLVMIsDeclaration(f))
            continue;
        size_t len;
        const char *name = LLVMGetValueName2(f, &len);
        char nn[256];
        snprintf(nn, sizeof nn, "%.*s_nt", (int)len, name);
        LLVMSetValueName2(f, nn, strlen(nn));
        marked += mark_stores(f, one_md, td, fp_scalars);
    }
    LLVMValueRef entry = LLVMGetNamedFunction(v, CG_ENTRY_SYMBOL_NT);
    if (!entry) {
        LLVMDisposeModule(v);
        cg_str_printf(err, "[stream] %s missing in the clone\n", CG_ENTRY_SYMBOL);
        return -1;
    }
    if (!marked) { /* nothing to stream: no variant, the launcher keeps the plain entry */
        LLVMDisposeModule(v);
        return 0;
    }
    if (!cg_target_is_riscv(t))
        for (LLVMValueRef f = LLVMGetFirstFunction(v); f; f = LLVMGetNextFunction(f))
            if (f == entry || is_parallel_runner(f)) /* the runtime runs those on any thread */
                fence_returns(v, f);
    /* exported globals (tritium_parallel_for) are shared with the original */
    for (LLVMValueRef g = LLVMGetFirstGlobal(v); g; g = LLVMGetNextGlobal(g))
        if (!LLVMIsDeclaration(g) && LLVMGetLinkage(g) == LLVMExternalLinkage)
            LLVMSetInitializer(g, NULL);
    if (LLVMLinkModules2(m, v)) { /* consumes v */
        cg_str_printf(err, "[stream] linking the streaming variant failed\n");
        return -1;
    }
    return marked;
}
