/*
 * drv_int.h — internal interface of the compile driver (drv_*.c, libtritium_cg.so).
 *
 * drv_compile.c runs a compile in this process in two halves — the front
 * (parse, passes, lowering) and code generation — which drv_server.c also calls
 * in its forked children, sending the Linalg text back between the two so that a
 * crash in code generation is still reported with its input.
 */
#ifndef DRV_INT_H
#define DRV_INT_H

#include "driver.h"

#define DRV_EXPORT __attribute__((visibility("default")))

/* ---- drv_compile.c ------------------------------------------------------------ */

/* Sets res->status and res->error (formatted; replaces an earlier error); returns
 * the status. */
DrvStatus drv_fail(DrvResult *res, DrvStatus st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Parse, passes and (unless o->last is DRV_LAST_TTIR) the lowering for target t,
 * into res. Returns res->status. */
DrvStatus drv_front(const char *ttir, size_t len, const DrvOptions *o, const CgTarget *t, DrvResult *res);
/* Code generation of res's Linalg stage for t, after drv_front succeeded.
 * Returns res->status. */
DrvStatus drv_codegen(const DrvOptions *o, const CgTarget *t, DrvResult *res);

/* ---- drv_server.c ------------------------------------------------------------- */

/* drv_compile with o->isolate: the same compile in a forked child (server s, or a
 * one-shot child). Returns res->status. */
DrvStatus drv_isolated_compile(const char *ttir, size_t len, const DrvOptions *o, const CgTarget *t, DrvServer *s,
                               DrvResult *res);

#endif /* DRV_INT_H */
