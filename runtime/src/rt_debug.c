/*
 * rt_debug.c — tl.device_print and tl.device_assert at run time: the functions
 * compiled kernels call through their tritium_debug_print / tritium_debug_assert
 * pointers (docs/compiler.md §1.2), and the per-launch state rt_launch.c keeps.
 *
 * A print formats every element of its operands as upstream's GPU backend does
 * ("pid (x, y, z) idx (i, j)<prefix><value>", one line each) into a buffer of the
 * running thread, which rt_launch.c writes to fd 1 in one write() when the program
 * ends: one program's lines are never interleaved with another's. A failing assert
 * records the first failure of the launch (kernel, program id, file:line, message),
 * and, when the thread runs a program of its own, jumps back to the launcher's frame
 * (longjmp: the kernel's code has no cleanups; its heap temporaries leak), so the
 * program does not go on past the assert. The launch then stops its other programs
 * and rt_launch_ex returns -ECANCELED with the report as the error text.
 */
#include "rt_int.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static _Thread_local RtDebugFrame *frame; /* the program this thread runs, or NULL */
static _Thread_local struct {
    char *p;
    size_t n, cap;
} out;
static pthread_mutex_t write_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- output ------------------------------------------------------------------------ */

static void
out_reserve(size_t more)
{
    if (out.n + more <= out.cap)
        return;
    size_t cap = out.cap ? out.cap : 4096;
    while (cap < out.n + more)
        cap *= 2;
    char *p = realloc(out.p, cap);
    if (!p)
        abort(); /* as rt_xmalloc */
    out.p = p;
    out.cap = cap;
}

static void RT_PRINTF(1, 2)
out_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out.p ? out.p + out.n : NULL, out.p ? out.cap - out.n : 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if (out.n + (size_t)n + 1 > out.cap) {
        out_reserve((size_t)n + 1);
        va_start(ap, fmt);
        vsnprintf(out.p + out.n, out.cap - out.n, fmt, ap);
        va_end(ap);
    }
    out.n += (size_t)n;
}

void
rt_debug_flush(void)
{
    if (!out.n)
        return;
    pthread_mutex_lock(&write_lock);
    for (size_t done = 0; done < out.n;) {
        ssize_t w = write(STDOUT_FILENO, out.p + done, out.n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    pthread_mutex_unlock(&write_lock);
    out.n = 0;
    if (out.cap > (1u << 20)) { /* a large print: give the memory back */
        free(out.p);
        out.p = NULL;
        out.cap = 0;
    }
}

/* ---- the print descriptor --------------------------------------------------------------
 * Written by the lowering (lo_emit_debug.c) as one constant string:
 *   "<hex> <nops> {<type> <signed> <rank> <d0> ... } ... \0<prefix>\0"
 * with <type> one of i8 i16 i32 i64 f16 bf16 f32 f64. */

typedef struct PrintOperand {
    char type[8];
    int is_signed, rank;
    int64_t shape[8];
} PrintOperand;

static double
half_to_double(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m | 0x400, e - 25);
    return h & 0x8000 ? -v : v;
}

static double
bf16_to_double(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static int
type_bytes(const char *t)
{
    if (!strcmp(t, "i8"))
        return 1;
    if (!strcmp(t, "i16") || !strcmp(t, "f16") || !strcmp(t, "bf16"))
        return 2;
    if (!strcmp(t, "i32") || !strcmp(t, "f32"))
        return 4;
    return 8;
}

/* Appends element 'p' of an operand of type o in upstream's printf format. */
static void
print_value(const PrintOperand *o, const unsigned char *p, int hex)
{
    int nb = type_bytes(o->type);
    if (o->type[0] == 'f' || o->type[0] == 'b') {
        double v;
        if (!strcmp(o->type, "f16") || !strcmp(o->type, "bf16")) {
            uint16_t h;
            memcpy(&h, p, 2);
            v = o->type[0] == 'b' ? bf16_to_double(h) : half_to_double(h);
        } else if (nb == 4) {
            float f;
            memcpy(&f, p, 4);
            v = f;
        } else {
            memcpy(&v, p, 8);
        }
        out_printf(hex ? "%a" : "%f", v);
        return;
    }
    uint64_t u = 0;
    memcpy(&u, p, (size_t)nb); /* little-endian: the low bytes */
    if (hex) {
        out_printf("0x%0*" PRIx64, nb * 2, u);
        return;
    }
    if (o->is_signed) {
        int64_t s = nb == 8 ? (int64_t)u : (int64_t)(u << (64 - 8 * nb)) >> (64 - 8 * nb);
        out_printf("%" PRId64, s);
    } else {
        out_printf("%" PRIu64, u);
    }
}

/* Width of index dim d as upstream prints it: ceil(log10(size)). */
static int
index_width(int64_t size)
{
    int w = 0;
    for (int64_t p = 1; p < size; p *= 10)
        w++;
    return w;
}

static void
print_operand(const PrintOperand *o, const unsigned char *data, int op, int nops, int hex, const char *prefix,
              const int32_t pid[3])
{
    int64_t n = 1, idx[8] = {0};
    for (int d = 0; d < o->rank; d++)
        n *= o->shape[d];
    int nb = type_bytes(o->type);
    for (int64_t e = 0; e < n; e++) {
        out_printf("pid (%d, %d, %d) idx (", pid[0], pid[1], pid[2]);
        for (int d = 0; d < o->rank; d++)
            out_printf("%s%*" PRId64, d ? ", " : "", index_width(o->shape[d]), idx[d]);
        out_printf(")%s", prefix);
        if (nops > 1)
            out_printf("(operand %d) ", op);
        print_value(o, data + e * nb, hex);
        out_printf("\n");
        for (int d = o->rank - 1; d >= 0 && ++idx[d] == o->shape[d]; d--)
            idx[d] = 0;
    }
}

/* Documented in runtime.h. */
void
rt_debug_print(const char *desc, int32_t px, int32_t py, int32_t pz, const uint64_t *data)
{
    int32_t pid[3] = {px, py, pz};
    int hex = 0, nops = 0, used = 0;
    const char *s = desc;
    if (sscanf(s, "%d %d%n", &hex, &nops, &used) < 2)
        return;
    s += used;
    PrintOperand ops[16];
    if (nops > 16)
        nops = 16;
    for (int i = 0; i < nops; i++) {
        PrintOperand *o = &ops[i];
        if (sscanf(s, " %7s %d %d%n", o->type, &o->is_signed, &o->rank, &used) < 3 || o->rank > 8)
            return;
        s += used;
        for (int d = 0; d < o->rank; d++) {
            if (sscanf(s, " %" SCNd64 "%n", &o->shape[d], &used) < 1)
                return;
            s += used;
        }
    }
    const char *prefix = desc + strlen(desc) + 1;
    if (!nops)
        out_printf("pid (%d, %d, %d)%s\n", px, py, pz, prefix);
    for (int i = 0; i < nops; i++)
        print_operand(&ops[i], (const unsigned char *)(uintptr_t)data[i], i, nops, hex, prefix, pid);
    if (!frame)
        rt_debug_flush(); /* not inside a launch's program: nothing flushes it later */
}

/* ---- asserts ---------------------------------------------------------------------------- */

void
rt_debug_launch_init(RtDebugLaunch *l)
{
    memset(l, 0, sizeof *l);
    pthread_mutex_init(&l->lock, NULL);
}

void
rt_debug_launch_fini(RtDebugLaunch *l)
{
    pthread_mutex_destroy(&l->lock);
}

void
rt_debug_enter(RtDebugFrame *f, RtDebugLaunch *l, int armed)
{
    f->launch = l;
    f->armed = armed;
    f->saved = frame;
    frame = f;
}

void
rt_debug_leave(RtDebugFrame *f)
{
    rt_debug_flush();
    frame = f->saved;
}

int
rt_debug_disarm(void)
{
    int was = frame ? frame->armed : 0;
    if (frame)
        frame->armed = 0;
    return was;
}

void
rt_debug_rearm(int armed)
{
    if (frame)
        frame->armed = armed;
}

/* Documented in runtime.h. desc: "<kernel>\0<file>:<line>\0<message>\0". */
void
rt_debug_assert(const char *desc, int32_t px, int32_t py, int32_t pz)
{
    const char *kernel = desc, *where = kernel + strlen(kernel) + 1, *msg = where + strlen(where) + 1;
    char text[sizeof ((RtDebugLaunch *)0)->report];
    snprintf(text, sizeof text, "%s: %s: program (%d, %d, %d): Assertion `%s` failed", where, kernel, px, py, pz,
             msg);
    RtDebugFrame *f = frame;
    if (!f || !f->launch) { /* called outside a launch: say so and carry on */
        fprintf(stderr, "%s\n", text);
        return;
    }
    RtDebugLaunch *l = f->launch;
    pthread_mutex_lock(&l->lock);
    if (!atomic_load_explicit(&l->failed, memory_order_relaxed)) {
        memcpy(l->report, text, sizeof text);
        atomic_store_explicit(&l->failed, 1, memory_order_release);
    }
    pthread_mutex_unlock(&l->lock);
    if (f->armed)
        longjmp(f->jb, 1);
}
