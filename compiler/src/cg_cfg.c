/*
 * cg_cfg.c — control-flow surgery shared by the LLVM-level passes of cg_
 * (cg_stream.c, cg_cold.c); the LLVM C API has no SplitBasicBlock.
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
