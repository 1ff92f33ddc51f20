/*
 * cg_cfg.c — control-flow surgery shared by the LLVM-level passes of cg_
 * (cg_stream.c, cg_cold.c); the LLVM C API has no SplitBasicBlock. Also the
 * constant-splat test the pattern matchers (cg_cold.c, cg_scalef.c) share.
 */
#include "cg_int.h"

LLVMBasicBlockRef
cg_block_split_head(LLVMValueRef f, LLVMBasicBlockRef bb, const char *name)
{
    LLVMContextRef c = LLVMGetModuleContext(LLVMGetGlobalParent(f));
    LLVMBasicBlockRef head = LLVMInsertBasicBlockInContext(c, bb, name);
    for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(f); b; b = LLVMGetNextBasicBlock(b)) {
        LLVMValueRef t = LLVMGetBasicBlockTerminator(b);
        if (!t || b == head)
            continue;
        unsigned n = LLVMGetNumSuccessors(t);
        for (unsigned i = 0; i < n; i++)
            if (LLVMGetSuccessor(t, i) == bb)
                LLVMSetSuccessor(t, i, head);
    }
    return head;
}

int
cg_const_lanes(LLVMValueRef v, int (*pred)(LLVMValueRef c, double want), double want)
{
    if (LLVMGetTypeKind(LLVMTypeOf(v)) != LLVMVectorTypeKind)
        return pred(v, want);
    unsigned n = LLVMGetVectorSize(LLVMTypeOf(v));
    for (unsigned i = 0; i < n; i++) {
        LLVMValueRef e = LLVMIsAConstant(v) ? LLVMGetAggregateElement(v, i) : NULL;
        if (!e || !pred(e, want))
            return 0;
    }
    return n > 0;
}
