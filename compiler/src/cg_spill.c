/*
 * cg_spill.c — register spills of a compile, as LLVM's greedy register allocator
 * reports them, and the compile's other LLVM diagnostics.
 *
 * cg_target.c enables the missed-optimisation remarks of the pass "regalloc" once
 * (-pass-remarks-missed=^regalloc$); the allocator then reports, per machine function,
 * "SpillReloadCopies": "<n> spills <cost> total spills cost <n> reloads ... generated
 * in function". The diagnostic handler set here on the compile's LLVM context takes
 * every diagnostic: it adds those counts to the function that prologue/epilogue
 * insertion names next ("<n> stack bytes in function '<name>'": machine passes run
 * function by function), drops every other remark (once any remark is enabled LLVM
 * builds them all; measured at ~2% of a matmul's compile time), and keeps the first
 * error for the compile's message instead of LLVM's default print-and-exit.
 */
#include "cg_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Adds the counts named in one remark text: "<n> spills", "<n> folded spills",
 * "<n> reloads", "<n> folded reloads" (costs read "<x> total ... cost" and are skipped). */
static void
parse_counts(const char *text, int *spills, int *reloads)
{
    for (const char *p = text; *p; p++) {
        char *end;
        if (p != text && p[-1] != ' ')
            continue;
        long n = strtol(p, &end, 10);
        if (end == p || *end != ' ')
            continue;
        const char *w = end + 1;
        if (strncmp(w, "folded ", 7) == 0)
            w += 7;
        if (strncmp(w, "spills ", 7) == 0)
            *spills += (int)n;
        else if (strncmp(w, "reloads ", 8) == 0)
            *reloads += (int)n;
        p = end - 1;
    }
}

static void
on_diag(LLVMDiagnosticInfoRef di, void *user)
{
    CgSpills *s = user;
    LLVMDiagnosticSeverity sev = LLVMGetDiagInfoSeverity(di);
    char *text = LLVMGetDiagInfoDescription(di);
    const char *t = text ? text : "";
    const char *fn;
    if (sev == LLVMDSError) {
        if (!s->error)
            s->error = strdup(t);
    } else if (sev == LLVMDSWarning) {
        fprintf(stderr, "tritium: LLVM warning: %s\n", t);
    } else if (sev == LLVMDSRemark && strstr(t, "generated in function")) {
        parse_counts(t, &s->pend_spills, &s->pend_reloads);
    } else if (sev == LLVMDSRemark && (fn = strstr(t, " stack bytes in function '"))) {
        fn += strlen(" stack bytes in function '");
        /* the streaming-store twin is the same kernel again: not counted twice */
        int twin = strncmp(fn, CG_ENTRY_SYMBOL_NT "'", strlen(CG_ENTRY_SYMBOL_NT) + 1) == 0;
        if (!twin) {
            s->spills += s->pend_spills;
            s->reloads += s->pend_reloads;
        }
        s->pend_spills = s->pend_reloads = 0;
    }
    LLVMDisposeMessage(text);
}

void
cg_spills_watch(LLVMContextRef c, CgSpills *s)
{
    memset(s, 0, sizeof *s);
    LLVMContextSetDiagnosticHandler(c, on_diag, s);
}

void
cg_spills_restart(LLVMModuleRef m)
{
    LLVMContextRef c = LLVMGetModuleContext(m);
    if (LLVMContextGetDiagnosticHandler(c) != on_diag)
        return;
    CgSpills *s = LLVMContextGetDiagnosticContext(c);
    s->spills = s->reloads = s->pend_spills = s->pend_reloads = 0;
}

void
cg_spills_fini(CgSpills *s)
{
    free(s->error);
    s->error = NULL;
}
