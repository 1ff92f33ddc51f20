/*
 * tritium_aot.h — running ahead-of-time compiled kernels without Python: the C API of
 * libtritium (runtime + Proton core), for boards such as the SpacemiT K1/K3.
 *
 * A kernel exported by triton.tools.aot.export() (docs/aot.md) is two files: the
 * kernel shared object and its metadata, <name>.json ("tritium-aot/1": parameters and
 * their types, constexpr values, the argument slots, the grid when the export gave a
 * constant one, in-kernel scopes, static costs). This API loads the pair, binds
 * arguments by parameter, launches a grid on N threads (the OpenMP launcher of
 * runtime.h) and writes what Proton recorded (kernel, program instances, in-kernel
 * scopes) as a Chrome trace, a .hatchet tree or a console table:
 *
 *     RtAot *k;
 *     if (rt_aot_load("add_kernel.json", &k) < 0) { puts(rt_aot_last_error()); return 1; }
 *     rt_aot_bind_ptr(k, rt_aot_param_index(k, "x_ptr"), x);
 *     rt_aot_bind_ptr(k, rt_aot_param_index(k, "y_ptr"), y);
 *     rt_aot_bind_ptr(k, rt_aot_param_index(k, "out_ptr"), out);
 *     rt_aot_bind_int(k, rt_aot_param_index(k, "n"), n);
 *     int32_t grid[3] = {(n + 1023) / 1024, 1, 1};
 *     rt_aot_trace_begin();                     (optional: record with Proton)
 *     rt_aot_launch(k, grid, 4);                (4 threads; 0 = OMP_NUM_THREADS / CPUs)
 *     rt_aot_trace_write("trace.json");         (proton-cli report trace.json)
 *     rt_aot_unload(k);
 *
 * Callers: tritium-run (runtime/tools/tritium_run.c), examples/aot_vadd.c, embedders.
 * Link: -ltritium (libtritium.so, or libtritium.a plus -lcjson -lpfm -ldl -lpthread -lm).
 * Ownership: rt_aot_load's result belongs to the caller (rt_aot_unload). Strings
 * returned are borrowed and live until rt_aot_unload. Bound pointers are borrowed:
 * the memory must stay valid during launches.
 * Thread safety: one RtAot may be launched from several threads once bound; binding
 * while another thread launches the same RtAot is a data race.
 * Errors: 0 on success, -errno on failure with the text in rt_aot_last_error().
 */
#ifndef TRITIUM_AOT_H
#define TRITIUM_AOT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RT_AOT_API __attribute__((visibility("default")))

/* The metadata's format tag. */
#define RT_AOT_FORMAT "tritium-aot/1"

/* Text of the last error on this thread ("" when none); borrowed, valid until the
 * next call on this thread (the runtime's rt_last_error()). */
RT_AOT_API const char *rt_aot_last_error(void);

/* A loaded ahead-of-time kernel with its argument slots. Opaque. */
typedef struct RtAot RtAot;

/* Reads the metadata file (format RT_AOT_FORMAT), loads the kernel .so it names
 * (relative to the metadata's directory) and registers the kernel with Proton.
 * Returns 0 and *out (caller owns it: rt_aot_unload()), or -ENOENT (a file is
 * missing), -EINVAL (not valid metadata: the error names the field), -ENOEXEC (the
 * .so does not load here: another ISA, a missing symbol; rt_last_error() says which). */
RT_AOT_API int rt_aot_load(const char *meta_path, RtAot **out);
/* Unloads the kernel; NULL is ignored. */
RT_AOT_API void rt_aot_unload(RtAot *k);

/* The kernel's name; borrowed. */
RT_AOT_API const char *rt_aot_name(const RtAot *k);
/* Every parameter of the Python signature, constexprs included, in order. */
RT_AOT_API int rt_aot_num_params(const RtAot *k);
/* Name and type of parameter i ("*fp32", "i32", "i64", "fp32", "constexpr", ...), or
 * NULL when i is out of range; borrowed. */
RT_AOT_API const char *rt_aot_param_name(const RtAot *k, int i);
RT_AOT_API const char *rt_aot_param_type(const RtAot *k, int i);
/* Index of the parameter called 'name', or -ENOENT. */
RT_AOT_API int rt_aot_param_index(const RtAot *k, const char *name);
/* Value of a constexpr parameter as JSON text ("1024", "true", "\"fp32\""), or NULL
 * when parameter i is not a constexpr; borrowed. */
RT_AOT_API const char *rt_aot_constexpr(const RtAot *k, int i);

/* Binds parameter i. ptr parameters take an address; integer and bool parameters an
 * integer (range-checked for i32: -ERANGE); float parameters (fp16, bf16, fp32, fp64) a
 * double, rounded once to the parameter's type. -EINVAL for a constexpr parameter or
 * a kind mismatch (an int for a pointer), -ENOENT for i out of range. */
RT_AOT_API int rt_aot_bind_ptr(RtAot *k, int i, void *p);
RT_AOT_API int rt_aot_bind_int(RtAot *k, int i, int64_t v);
RT_AOT_API int rt_aot_bind_float(RtAot *k, int i, double v);
/* Binds a scalar parameter from text ("1000", "-3", "0x10", "2.5", "true"), as the
 * matching bind function would; -EINVAL for text that is not a number of that kind. */
RT_AOT_API int rt_aot_bind_text(RtAot *k, int i, const char *text);

/* The grid the export recorded (a constant grid), 0 and grid[0..2]; -ENOENT when it
 * recorded none (the caller computes it). */
RT_AOT_API int rt_aot_grid(const RtAot *k, int32_t grid[3]);
/* Static cost of one program instance from the metadata: bytes loaded + stored and
 * flops by width (fp16, fp32, fp64). Any pointer may be NULL. */
RT_AOT_API void rt_aot_cost(const RtAot *k, uint64_t *bytes, double flops[3]);
/* Number of in-kernel scopes and the name of scope i (NULL out of range; borrowed). */
RT_AOT_API int rt_aot_num_scopes(const RtAot *k);
RT_AOT_API const char *rt_aot_scope_name(const RtAot *k, int i);

/* Runs every program instance of 'grid' once on 'nthreads' threads (0: the default,
 * OMP_NUM_THREADS or the CPUs of the affinity mask; 1: inline) and returns when all
 * have finished (rt_launch). -EINVAL when a parameter is not bound (the error names
 * it) or the grid is negative. Recorded by Proton while it records (rt_aot_trace_begin,
 * PROTON_KERNEL_CAPTURE=1, a session). */
RT_AOT_API int rt_aot_launch(RtAot *k, const int32_t grid[3], int nthreads);

/* Starts recording launches with Proton (kernel capture: launches, program instances,
 * in-kernel scopes, counters). Returns 0, or -ECANCELED when TRITON_DISABLE_PROTON
 * is set. */
RT_AOT_API int rt_aot_trace_begin(void);
/* Writes what was recorded since rt_aot_trace_begin to 'path' (.json or .chrome_trace:
 * Chrome trace; .hatchet: call-path tree; other names or NULL: PROTON_OUTPUT, else the
 * console table on stderr) and stops recording. Returns 0 or -errno. */
RT_AOT_API int rt_aot_trace_write(const char *path);

#ifdef __cplusplus
}
#endif
#endif /* TRITIUM_AOT_H */
