/*
 * lo_int.h — internal interface of the lowering to Linalg MLIR text (lo_*.c).
 *
 * The lowering writes MLIR text into a LoBuf. SSA values it creates are named
 * %v<N>; lo_emit() writes one "  %vN = <text>" line and returns N, so callers
 * refer to earlier values by number ("%%v%u").
 */
#ifndef LO_INT_H
#define LO_INT_H

#include "ir_int.h"

typedef struct LoBuf {
    char *p;
    size_t n, cap;
    int indent;      /* spaces before each emitted line */
    unsigned next;   /* next SSA number */
} LoBuf;

/* ---- lo_buf.c ---- */
void lo_buf_init(LoBuf *b);
void lo_buf_fini(LoBuf *b);
/* Appends raw text (no indent, no newline). */
void lo_printf(LoBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Writes indent + "%vN = " + text + "\n" and returns N. */
unsigned lo_emit(LoBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Writes indent + text + "\n" (an op without results). */
void lo_line(LoBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Takes the buffer's text (malloc'ed, NUL-terminated); the buffer is reset. */
char *lo_buf_take(LoBuf *b, size_t *len);

/* ---- lo_math.c ---- */
/* Emits scalar arith code computing fn(args) for float type 'fty' ("f32" or
 * "f64") into b and returns the SSA number of the result, or 0 when fn has no
 * expansion for that type (the caller then emits the math dialect op itself).
 * The code is branch-free so that it vectorises. Covered for f32: EXP, EXP2,
 * EXPM1, LOG, LOG2, LOG10, LOG1P, SIN, COS, TAN, TANH, ERF, ATAN, ASIN, ACOS,
 * SINH, COSH, ASINH, ACOSH, ATANH, CBRT, POWF, ATAN2. */
unsigned lo_math_emit(LoBuf *b, IrOpc fn, const unsigned *args, int nargs, const char *fty);

#endif /* LO_INT_H */
