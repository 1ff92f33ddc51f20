/*
 * ir_ops.h — the one table of tile-IR operations.
 *
 * One line per op: X(ID, "mlir.spelling", nargs, nres, flags, fmt)
 *   nargs  exact operand count, or -1 when variadic (the op's own rules apply)
 *   nres   exact result count, or -1 when variadic
 *   flags  IR_F_* below
 *   fmt    printer/parser syntax class (IR_FMT_*); CUSTOM ops have their own
 *          print/parse functions keyed by opcode.
 * The opcode enum, the name table, verifier arity, printer and parser keywords
 * and the lowering dispatch are all generated from this list. ORDER IR_OP: the
 * enum follows the list; never depend on numeric values.
 *
 * Attribute slots used by ops (IrOp.i[], .f, .s, .ints) are documented per op in
 * the trailing comment.
 */
#ifndef IR_OPS_H
#define IR_OPS_H

/* op flags */
#define IR_F_PURE   0x01u /* no side effects: CSE/DCE may remove or merge it */
#define IR_F_COMM   0x02u /* commutative binary op */
#define IR_F_TERM   0x04u /* block terminator */
#define IR_F_MEM    0x08u /* reads or writes memory */
#define IR_F_ELEM   0x10u /* elementwise: result[i] depends on operand[i] only */
#define IR_F_REGION 0x20u /* has nested blocks */

/* syntax classes */
#define IR_FMT_BIN    0 /* %r = op %a, %b : T */
#define IR_FMT_UN     1 /* %r = op %a : T */
#define IR_FMT_CAST   2 /* %r = op %a : T1 to T2 */
#define IR_FMT_CMP    3 /* %r = op pred, %a, %b : T */
#define IR_FMT_TERN   4 /* %r = op %a, %b, %c : T */
#define IR_FMT_CUSTOM 5

#define IR_FP  IR_F_PURE
#define IR_FPE (IR_F_PURE | IR_F_ELEM)
#define IR_FPC (IR_F_PURE | IR_F_ELEM | IR_F_COMM)

#define IR_OPS(X)                                                                          \
    /* ---- arith ---- */                                                                 \
    X(CONST, "arith.constant", 0, 1, IR_FPE, IR_FMT_CUSTOM) /* i[0] int bits | f; splat */      \
    X(ADDI, "arith.addi", 2, 1, IR_FPC, IR_FMT_BIN)                                            \
    X(SUBI, "arith.subi", 2, 1, IR_FPE, IR_FMT_BIN)                                            \
    X(MULI, "arith.muli", 2, 1, IR_FPC, IR_FMT_BIN)                                            \
    X(DIVSI, "arith.divsi", 2, 1, IR_FPE, IR_FMT_BIN)                                          \
    X(DIVUI, "arith.divui", 2, 1, IR_FPE, IR_FMT_BIN)                                          \
    X(REMSI, "arith.remsi", 2, 1, IR_FPE, IR_FMT_BIN)                                          \
    X(REMUI, "arith.remui", 2, 1, IR_FPE, IR_FMT_BIN)                                          \
    X(ANDI, "arith.andi", 2, 1, IR_FPC, IR_FMT_BIN)                                            \
    X(ORI, "arith.ori", 2, 1, IR_FPC, IR_FMT_BIN)                                              \
    X(XORI, "arith.xori", 2, 1, IR_FPC, IR_FMT_BIN)                                            \
    X(SHLI, "arith.shli", 2, 1, IR_FPE, IR_FMT_BIN)                                            \
    X(SHRSI, "arith.shrsi", 2, 1, IR_FPE, IR_FMT_BIN)                                          \
    X(SHRUI, "arith.shrui", 2, 1, IR_FPE, IR_FMT_BIN)                                          \
    X(MAXSI, "arith.maxsi", 2, 1, IR_FPC, IR_FMT_BIN)                                          \
    X(MINSI, "arith.minsi", 2, 1, IR_FPC, IR_FMT_BIN)                                          \
    X(MAXUI, "arith.maxui", 2, 1, IR_FPC, IR_FMT_BIN)                                          \
    X(MINUI, "arith.minui", 2, 1, IR_FPC, IR_FMT_BIN)                                          \
    X(MULHIUI, "tt.mulhiui", 2, 1, IR_FPC, IR_FMT_BIN)                                         \
    X(ADDF, "arith.addf", 2, 1, IR_FPC, IR_FMT_BIN)                                            \
    X(SUBF, "arith.subf", 2, 1, IR_FPE, IR_FMT_BIN)                                            \
    X(MULF, "arith.mulf", 2, 1, IR_FPC, IR_FMT_BIN)                                            \
    X(DIVF, "arith.divf", 2, 1, IR_FPE, IR_FMT_BIN)                                            \
    X(REMF, "arith.remf", 2, 1, IR_FPE, IR_FMT_BIN)                                            \
    X(MAXIMUMF, "arith.maximumf", 2, 1, IR_FPC, IR_FMT_BIN) /* NaN-propagating */              \
    X(MINIMUMF, "arith.minimumf", 2, 1, IR_FPC, IR_FMT_BIN)                                    \
    X(MAXNUMF, "arith.maxnumf", 2, 1, IR_FPC, IR_FMT_BIN) /* NaN-ignoring */                   \
    X(MINNUMF, "arith.minnumf", 2, 1, IR_FPC, IR_FMT_BIN)                                      \
    X(PRECISE_DIVF, "tt.precise_divf", 2, 1, IR_FPE, IR_FMT_BIN)                               \
    X(NEGF, "arith.negf", 1, 1, IR_FPE, IR_FMT_UN)                                             \
    X(CMPI, "arith.cmpi", 2, 1, IR_FPE, IR_FMT_CMP) /* i[0] IrCmpi */                          \
    X(CMPF, "arith.cmpf", 2, 1, IR_FPE, IR_FMT_CMP) /* i[0] IrCmpf */                          \
    X(SELECT, "arith.select", 3, 1, IR_FPE, IR_FMT_CUSTOM)                                     \
    X(EXTSI, "arith.extsi", 1, 1, IR_FPE, IR_FMT_CAST)                                         \
    X(EXTUI, "arith.extui", 1, 1, IR_FPE, IR_FMT_CAST)                                         \
    X(TRUNCI, "arith.trunci", 1, 1, IR_FPE, IR_FMT_CAST)                                       \
    X(SITOFP, "arith.sitofp", 1, 1, IR_FPE, IR_FMT_CAST)                                       \
    X(UITOFP, "arith.uitofp", 1, 1, IR_FPE, IR_FMT_CAST)                                       \
    X(FPTOSI, "arith.fptosi", 1, 1, IR_FPE, IR_FMT_CAST)                                       \
    X(FPTOUI, "arith.fptoui", 1, 1, IR_FPE, IR_FMT_CAST)                                       \
    X(EXTF, "arith.extf", 1, 1, IR_FPE, IR_FMT_CAST)                                           \
    X(TRUNCF, "arith.truncf", 1, 1, IR_FPE, IR_FMT_CAST)                                       \
    X(BITCAST, "arith.bitcast", 1, 1, IR_FPE, IR_FMT_CAST)                                     \
    X(FP_TO_FP, "tt.fp_to_fp", 1, 1, IR_FPE, IR_FMT_CUSTOM) /* i[0] rounding 0 rtne 1 rtz */   \
    X(INT_TO_PTR, "tt.int_to_ptr", 1, 1, IR_FPE, IR_FMT_CAST)                                  \
    X(PTR_TO_INT, "tt.ptr_to_int", 1, 1, IR_FPE, IR_FMT_CAST)                                  \
    X(PTR_BITCAST, "tt.bitcast", 1, 1, IR_FPE, IR_FMT_CAST)                                    \
    /* ---- math ---- */                                                                  \
    X(EXP, "math.exp", 1, 1, IR_FPE, IR_FMT_UN)                                                \
    X(EXP2, "math.exp2", 1, 1, IR_FPE, IR_FMT_UN)                                              \
    X(EXPM1, "math.expm1", 1, 1, IR_FPE, IR_FMT_UN)                                            \
    X(LOG, "math.log", 1, 1, IR_FPE, IR_FMT_UN)                                                \
    X(LOG2, "math.log2", 1, 1, IR_FPE, IR_FMT_UN)                                              \
    X(LOG10, "math.log10", 1, 1, IR_FPE, IR_FMT_UN)                                            \
    X(LOG1P, "math.log1p", 1, 1, IR_FPE, IR_FMT_UN)                                            \
    X(SQRT, "math.sqrt", 1, 1, IR_FPE, IR_FMT_UN)                                              \
    X(PRECISE_SQRT, "tt.precise_sqrt", 1, 1, IR_FPE, IR_FMT_UN)                                \
    X(RSQRT, "math.rsqrt", 1, 1, IR_FPE, IR_FMT_UN)                                            \
    X(CBRT, "math.cbrt", 1, 1, IR_FPE, IR_FMT_UN)                                              \
    X(SIN, "math.sin", 1, 1, IR_FPE, IR_FMT_UN)                                                \
    X(COS, "math.cos", 1, 1, IR_FPE, IR_FMT_UN)                                                \
    X(TAN, "math.tan", 1, 1, IR_FPE, IR_FMT_UN)                                                \
    X(ASIN, "math.asin", 1, 1, IR_FPE, IR_FMT_UN)                                              \
    X(ACOS, "math.acos", 1, 1, IR_FPE, IR_FMT_UN)                                              \
    X(ATAN, "math.atan", 1, 1, IR_FPE, IR_FMT_UN)                                              \
    X(SINH, "math.sinh", 1, 1, IR_FPE, IR_FMT_UN)                                              \
    X(COSH, "math.cosh", 1, 1, IR_FPE, IR_FMT_UN)                                              \
    X(TANH, "math.tanh", 1, 1, IR_FPE, IR_FMT_UN)                                              \
    X(ASINH, "math.asinh", 1, 1, IR_FPE, IR_FMT_UN)                                            \
    X(ACOSH, "math.acosh", 1, 1, IR_FPE, IR_FMT_UN)                                            \
    X(ATANH, "math.atanh", 1, 1, IR_FPE, IR_FMT_UN)                                            \
    X(ERF, "math.erf", 1, 1, IR_FPE, IR_FMT_UN)                                                \
    X(ABSF, "math.absf", 1, 1, IR_FPE, IR_FMT_UN)                                              \
    X(ABSI, "math.absi", 1, 1, IR_FPE, IR_FMT_UN)                                              \
    X(FLOOR, "math.floor", 1, 1, IR_FPE, IR_FMT_UN)                                            \
    X(CEIL, "math.ceil", 1, 1, IR_FPE, IR_FMT_UN)                                              \
    X(ROUND, "math.round", 1, 1, IR_FPE, IR_FMT_UN)                                            \
    X(RINT, "math.roundeven", 1, 1, IR_FPE, IR_FMT_UN)                                         \
    X(TRUNC, "math.trunc", 1, 1, IR_FPE, IR_FMT_UN)                                            \
    X(ISNAN, "math.isnan", 1, 1, IR_FPE, IR_FMT_CAST)                                          \
    X(ISINF, "math.isinf", 1, 1, IR_FPE, IR_FMT_CAST)                                          \
    X(ISFINITE, "math.isfinite", 1, 1, IR_FPE, IR_FMT_CAST)                                    \
    X(FMA, "math.fma", 3, 1, IR_FPE, IR_FMT_TERN)                                              \
    X(POWF, "math.powf", 2, 1, IR_FPE, IR_FMT_BIN)                                             \
    X(ATAN2, "math.atan2", 2, 1, IR_FPE, IR_FMT_BIN)                                           \
    X(COPYSIGN, "math.copysign", 2, 1, IR_FPE, IR_FMT_BIN)                                     \
    X(CLAMPF, "tt.clampf", 3, 1, IR_FPE, IR_FMT_CUSTOM) /* i[0] propagateNan */                \
    X(EXTERN_ELEM, "tt.extern_elementwise", -1, 1, IR_FPE, IR_FMT_CUSTOM) /* s symbol */       \
    /* ---- tile construction and shape ---- */                                          \
    X(GET_PROGRAM_ID, "tt.get_program_id", 0, 1, IR_FP, IR_FMT_CUSTOM) /* i[0] axis */         \
    X(GET_NUM_PROGRAMS, "tt.get_num_programs", 0, 1, IR_FP, IR_FMT_CUSTOM) /* i[0] axis */     \
    X(MAKE_RANGE, "tt.make_range", 0, 1, IR_FP, IR_FMT_CUSTOM) /* i[0] start, i[1] end */      \
    X(SPLAT, "tt.splat", 1, 1, IR_FP, IR_FMT_CUSTOM)                                           \
    X(BROADCAST, "tt.broadcast", 1, 1, IR_FP, IR_FMT_CUSTOM)                                   \
    X(EXPAND_DIMS, "tt.expand_dims", 1, 1, IR_FP, IR_FMT_CUSTOM) /* i[0] axis */               \
    X(RESHAPE, "tt.reshape", 1, 1, IR_FP, IR_FMT_CUSTOM) /* i[0] allow_reorder */              \
    X(TRANS, "tt.trans", 1, 1, IR_FP, IR_FMT_CUSTOM) /* ints order */                          \
    X(CAT, "tt.cat", 2, 1, IR_FP, IR_FMT_CUSTOM)                                               \
    X(JOIN, "tt.join", 2, 1, IR_FP, IR_FMT_CUSTOM)                                             \
    X(SPLIT, "tt.split", 1, 2, IR_FP, IR_FMT_CUSTOM)                                           \
    X(GATHER, "tt.gather", 2, 1, IR_FP, IR_FMT_CUSTOM) /* i[0] axis */                         \
    X(HISTOGRAM, "tt.histogram", 1, 1, IR_FP, IR_FMT_CUSTOM)                                   \
    /* ---- pointers and memory ---- */                                                  \
    X(ADDPTR, "tt.addptr", 2, 1, IR_FPE, IR_FMT_CUSTOM)                                        \
    X(LOAD, "tt.load", -1, 1, IR_F_MEM, IR_FMT_CUSTOM)                                     \
    /* LOAD: args ptr [, mask [, other]]; i[0] padding IrPadding, i[1] cache,             \
       i[2] evict, i[3] volatile; ints boundaryCheck dims */                               \
    X(STORE, "tt.store", -1, 0, IR_F_MEM, IR_FMT_CUSTOM)                                   \
    /* STORE: args ptr, value [, mask]; i[1] cache, i[2] evict; ints boundaryCheck */      \
    X(MAKE_TENSOR_PTR, "tt.make_tensor_ptr", -1, 1, IR_FP, IR_FMT_CUSTOM)                      \
    /* MAKE_TENSOR_PTR: args base, shape[r], strides[r], offsets[r]; ints order */         \
    X(ADVANCE, "tt.advance", -1, 1, IR_FP, IR_FMT_CUSTOM) /* args ptr, offsets[r] */           \
    X(ATOMIC_RMW, "tt.atomic_rmw", -1, 1, IR_F_MEM, IR_FMT_CUSTOM)                         \
    /* ATOMIC_RMW: args ptr, val [, mask]; i[0] IrRmw, i[1] IrSem, i[2] IrScope */         \
    X(ATOMIC_CAS, "tt.atomic_cas", 3, 1, IR_F_MEM, IR_FMT_CUSTOM)                          \
    /* ATOMIC_CAS: args ptr, cmp, val; i[1] IrSem, i[2] IrScope */                         \
    /* ---- compute ---- */                                                              \
    X(DOT, "tt.dot", 3, 1, IR_FP, IR_FMT_CUSTOM) /* i[0] precision, i[1] maxNumImpreciseAcc */ \
    X(REDUCE, "tt.reduce", -1, -1, IR_FP | IR_F_REGION, IR_FMT_CUSTOM) /* i[0] axis */         \
    X(REDUCE_RETURN, "tt.reduce.return", -1, 0, IR_FP | IR_F_TERM, IR_FMT_CUSTOM)              \
    X(SCAN, "tt.scan", -1, -1, IR_FP | IR_F_REGION, IR_FMT_CUSTOM) /* i[0] axis, i[1] rev */   \
    X(SCAN_RETURN, "tt.scan.return", -1, 0, IR_FP | IR_F_TERM, IR_FMT_CUSTOM)                  \
    /* ---- control flow ---- */                                                         \
    X(FOR, "scf.for", -1, -1, IR_F_REGION, IR_FMT_CUSTOM) /* args lb, ub, step, inits */   \
    /* FOR: i[0] bind_sub_block (smt.parallel: independent iterations, may run in parallel) */ \
    X(IF, "scf.if", 1, -1, IR_F_REGION, IR_FMT_CUSTOM) /* regs then, else */               \
    X(WHILE, "scf.while", -1, -1, IR_F_REGION, IR_FMT_CUSTOM) /* regs before, after */     \
    X(CONDITION, "scf.condition", -1, 0, IR_F_TERM, IR_FMT_CUSTOM)                         \
    X(YIELD, "scf.yield", -1, 0, IR_F_TERM, IR_FMT_CUSTOM)                                 \
    X(CALL, "tt.call", -1, -1, 0, IR_FMT_CUSTOM) /* s callee */                            \
    X(RETURN, "tt.return", -1, 0, IR_F_TERM, IR_FMT_CUSTOM)                                \
    /* ---- debugging ---- */                                                            \
    X(PRINT, "tt.print", -1, 0, 0, IR_FMT_CUSTOM) /* s prefix, i[0] hex; ints isSigned */  \
    X(ASSERT, "tt.assert", 1, 0, 0, IR_FMT_CUSTOM) /* s message */                         \
    X(ASSUME, "llvm.intr.assume", 1, 0, 0, IR_FMT_CUSTOM)                                  \
    /* ---- SpacemiT SMT (triton.language.extra.smt) ---- */                             \
    X(SMT_PACK, "xsmt.pack", -1, 1, IR_FP, IR_FMT_CUSTOM)                                      \
    /* SMT_PACK: args base, offsets[2]; ints shape[2] ++ packed[2] */                      \
    X(SMT_UNPACK, "xsmt.unpack", -1, 1, IR_FP, IR_FMT_CUSTOM) /* args base, offs; ints shape */\
    X(SMT_REPACK, "xsmt.repack", -1, 1, IR_FP, IR_FMT_CUSTOM) /* like SMT_PACK */              \
    X(SMT_MMT4D, "xsmt.mmt4d", -1, 1, IR_FP, IR_FMT_CUSTOM) /* args a, b [, c] */              \
    X(SMT_ALLOC, "xsmt.alloc", 0, 1, IR_F_MEM, IR_FMT_CUSTOM) /* ints shape; s storage */  \
    X(SMT_SUBVIEW, "xsmt.subview", -1, 1, IR_FP, IR_FMT_CUSTOM) /* args base, offs; ints */    \
    X(SMT_SUBVIEW_PACK, "xsmt.subview_pack", -1, 1, IR_FP, IR_FMT_CUSTOM)                      \
    X(SMT_MBAR_ALLOC, "xsmt_async.mbarrier_alloc", 4, 1, IR_F_MEM, IR_FMT_CUSTOM)          \
    X(SMT_MBAR_ARRIVE, "xsmt_async.mbarrier_arrive", 1, 0, IR_F_MEM, IR_FMT_CUSTOM)        \
    X(SMT_MBAR_WAIT, "xsmt_async.mbarrier_wait", 3, 0, IR_F_MEM, IR_FMT_CUSTOM)            \
    X(SMT_NUM_THREADS, "xsmt.get_num_of_thread", 0, 1, IR_FP, IR_FMT_CUSTOM)                   \
    /* ---- Proton ---- */                                                               \
    X(PROTON_RECORD, "proton.record", 0, 0, IR_F_MEM, IR_FMT_CUSTOM) /* i[0] start; s */

typedef enum IrOpc {
#define IR_X(id, name, na, nr, fl, fmt) IR_##id,
    IR_OPS(IR_X)
#undef IR_X
    IR_OPC_COUNT
} IrOpc;

#endif /* IR_OPS_H */
