/*
 * py_launch.c — kernel launches from Python: `kernel[grid](*args, **kwargs)`.
 *
 * Kernel is the C base of triton.runtime.jit.JITFunction. Calling a grid-bound
 * kernel binds the arguments to parameters (positional, keyword, defaults),
 * computes the specialisation key (per parameter: constexpr value, tensor dtype and
 * 16-byte alignment, int width and the ==1 / %16 facts, float, bool), finds the
 * compiled kernel in an in-memory table (on a miss it calls back into Python,
 * which compiles or loads from the disk cache), packs the 8-byte argument slots
 * and runs the grid through runtime.h. Everything after the first launch of a
 * specialisation happens here, without Python code. While a context="python"
 * Proton session records, a launch first hands Proton the Python stack
 * (py_proton_frames); otherwise that costs one predictable branch.
 *
 * Compiled wraps one loaded kernel .so and its argument plan.
 */
#include "py_int.h"

#include "proton.h"
#include "runtime.h"

#include <errno.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

/* The exception of a failed launch: a device_assert that failed (the runtime's report
 * names the kernel, program, file:line and message), or any other failure. */
static PyObject *
launch_error(int rc)
{
    if (rc == -ECANCELED)
        return py_err(PyExc_RuntimeError, "device-side assertion failed: %s", rt_last_error());
    return py_err(PyExc_RuntimeError, "launch failed: %s", rt_last_error());
}

#define MAXP 128 /* parameters per kernel */
#define MAXSLOTS (4 * MAXP) /* 8-byte argument slots (tensor descriptors take several) */
#define MAXDESC 16 /* tensor descriptor arguments per launch */

/* Argument slot kinds: how a parameter's 8-byte slot is packed (the "plan" of a
 * compiled kernel, one kind per parameter). */
enum { SK_SKIP, SK_PTR, SK_I1, SK_I32, SK_I64, SK_F16, SK_BF16, SK_F32, SK_F64 };

/* The kind of each parameter kind of a specialisation (the first element of its
 * spec entry), exported to Python as SLOT_KINDS: the one table both sides read. */
static const struct { const char *spec; int kind; } slot_kinds[] = {
    {"constexpr", SK_SKIP}, {"ptr", SK_PTR},   {"i1", SK_I1},     {"i32", SK_I32},   {"i64", SK_I64},
    {"u64", SK_I64},        {"fp16", SK_F16}, {"bf16", SK_BF16}, {"fp32", SK_F32}, {"fp64", SK_F64},
    {"tensordesc", SK_DESC},
};

/* Specialisation tags (low byte of a key word). */
enum { TG_CONSTEXPR = 1, TG_NONE, TG_BOOL, TG_ONE, TG_I32, TG_I64, TG_U64, TG_FLOAT, TG_PTR };

/* ---- Compiled --------------------------------------------------------------------- */

typedef struct Compiled {
    PyObject_HEAD
    RtKernel *k;
    RtKernelFn fn;
    RtKernelFn fn_nt;      /* streaming-store entry or NULL */
    double stream_bytes;   /* bytes one program stores (0: no streaming entry) */
    unsigned lflags;       /* rt_launch_ex flags (RT_LAUNCH_TEAMS: smt.parallel loops) */
    RtCost *cost;          /* per-launch cost (kept for good: the site refers to it) */
    uint32_t site;
    int nparams;
    uint32_t plan[MAXP];   /* slot kind | descriptor pass mask << 8 (py_desc.c) */
    PyObject *info; /* Python-side metadata object (kept alive) */
    PyObject *plain; /* instrumented kernels: the same kernel without its scopes, run
                      * while nothing records (a Compiled, or NULL) */
} Compiled;

static PyTypeObject Compiled_Type;

/* The kernel to run now: an instrumented kernel's plain twin while nothing records,
 * so instrumentation compiled in costs nothing then (one load of pn_active_flag). */
static inline Compiled *
running(Compiled *c)
{
    return c->plain && !pn_active() ? (Compiled *)c->plain : c;
}

/* Launches storing at least this many bytes use the streaming-store entry
 * (TRITIUM_STREAM_STORES; default half the last-level cache). */
static double stream_threshold = INFINITY;

/* The entry for a launch of grid g: streaming stores when its output cannot
 * stay in the cache anyway (cg_stream.c explains the trade). */
static inline RtKernelFn
entry_for(const Compiled *c, const int32_t g[3])
{
    if (c->stream_bytes > 0 && (double)g[0] * g[1] * g[2] * c->stream_bytes >= stream_threshold) {
        rt_stats_add(RT_STAT_STREAM_LAUNCH);
        return c->fn_nt;
    }
    return c->fn;
}

static int
compiled_init(PyObject *self, PyObject *args, PyObject *kw)
{
    Compiled *c = (Compiled *)self;
    const char *path, *name;
    PyObject *plan, *info = Py_None, *scopes = Py_None;
    const char *constexprs = NULL;
    unsigned long long bytes = 0;
    double f16 = 0, f32 = 0, f64 = 0;
    unsigned long long stream_bytes = 0;
    const char *trips = NULL, *remarks = NULL;
    static char *kwl[] = {"so_path", "plan", "name", "constexprs", "bytes", "flops16", "flops32", "flops64", "scopes",
                          "info", "stream_bytes", "trips", "remarks", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "sOs|zKdddOOKzz", kwl, &path, &plan, &name, &constexprs, &bytes, &f16,
                                     &f32, &f64, &scopes, &info, &stream_bytes, &trips, &remarks))
        return -1;
    int64_t p[MAXP];
    int n = py_int64_seq(plan, p, MAXP, "plan");
    if (n < 0)
        return -1;
    c->nparams = n;
    for (int i = 0; i < n; i++)
        c->plan[i] = (uint32_t)p[i];
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = rt_kernel_load(path, &c->k);
    Py_END_ALLOW_THREADS
    if (rc < 0) {
        py_err(PyExc_RuntimeError, "%s", rt_last_error()); /* names the path already */
        return -1;
    }
    c->fn = rt_kernel_fn(c->k);
    c->fn_nt = rt_kernel_fn_streaming(c->k);
    c->lflags = rt_kernel_launch_flags(c->k);
    c->stream_bytes = c->fn_nt ? (double)stream_bytes : 0.0;
    const char *snames[IR_MAX_SCOPES];
    int ns = 0;
    PyObject *sfast = scopes != Py_None ? PySequence_Fast(scopes, "scopes") : NULL;
    if (sfast) {
        ns = (int)PySequence_Fast_GET_SIZE(sfast);
        if (ns > IR_MAX_SCOPES)
            ns = IR_MAX_SCOPES;
        for (int i = 0; i < ns; i++)
            snames[i] = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(sfast, i));
    }
    c->cost = rt_cost_create(trips); /* loops whose trip counts the launch decides */
    PnKernelDesc d = {.name = name, .constexprs = constexprs, .bytes_per_program = bytes,
                      .flops_per_program = {f16, f32, f64}, .nscopes = (uint32_t)ns, .scope_names = snames,
                      .cost_fn = c->cost ? (PnCostFn)rt_cost_eval : NULL, .cost = c->cost,
                      .remarks = remarks};
    c->site = pn_kernel_register(&d);
    Py_XDECREF(sfast);
    Py_XSETREF(c->info, Py_NewRef(info));
    return 0;
}

static void
compiled_dealloc(PyObject *self)
{
    Compiled *c = (Compiled *)self;
    /* The .so stays mapped: kernels may still be referenced by in-flight launches on
     * other threads, and unloading code is never worth the risk. */
    Py_XDECREF(c->info);
    Py_XDECREF(c->plain);
    Py_TYPE(self)->tp_free(self);
}

static int
parse_grid(PyObject *g, int32_t grid[3])
{
    grid[0] = grid[1] = grid[2] = 1;
    PyObject *fast = PySequence_Fast(g, "grid must be a tuple of up to 3 ints (or a callable returning one)");
    if (!fast)
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    if (n < 1 || n > 3) {
        Py_DECREF(fast);
        py_err(PyExc_ValueError, "grid must have 1 to 3 dimensions, got %zd", n);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PySequence_Fast_GET_ITEM(fast, i);
        long long v;
        if (PyLong_CheckExact(o)) {
            v = PyLong_AsLongLong(o);
        } else {
            PyObject *idx = PyNumber_Index(o);
            if (!idx) {
                Py_DECREF(fast);
                PyErr_Clear();
                py_err(PyExc_TypeError, "grid entries must be integers");
                return -1;
            }
            v = PyLong_AsLongLong(idx);
            Py_DECREF(idx);
        }
        if (v < 0 || v > INT32_MAX) {
            Py_DECREF(fast);
            py_err(PyExc_ValueError, "grid dimension %zd out of range: %lld", i, v);
            return -1;
        }
        grid[i] = (int32_t)v;
    }
    Py_DECREF(fast);
    return 0;
}

/* Packs a Python scalar into slot kind k. Pointers were resolved by the caller. */
static int
pack_scalar(PyObject *o, int k, uint64_t *slot)
{
    *slot = 0;
    if (k == SK_F32 || k == SK_F64 || k == SK_F16 || k == SK_BF16) {
        double v = PyFloat_AsDouble(o);
        if (v == -1.0 && PyErr_Occurred())
            return -1;
        if (k == SK_F32) {
            float f = (float)v;
            memcpy(slot, &f, 4);
        } else if (k == SK_F64) {
            memcpy(slot, &v, 8);
        } else {
            uint16_t b = k == SK_F16 ? ir_f16_bits(v) : ir_bf16_bits(v);
            memcpy(slot, &b, 2);
        }
        return 0;
    }
    if (k == SK_I1) {
        int t = PyObject_IsTrue(o);
        if (t < 0)
            return -1;
        *slot = (uint64_t)t;
        return 0;
    }
    long long v = PyLong_AsLongLong(o);
    if (v == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        unsigned long long u = PyLong_AsUnsignedLongLong(o);
        if (PyErr_Occurred())
            return -1;
        *slot = u;
        return 0;
    }
    *slot = (uint64_t)v; /* little-endian: the low bytes hold the narrower ints */
    return 0;
}

static int tensor_ptr(PyObject *o, uint64_t *ptr);

/* Appends the slots of tensor descriptor argument o for plan entry 'plan' (the
 * triton.compile() path: o is read here). */
static int
desc_slots(PyObject *o, uint32_t plan, uint64_t *slots, int *ns)
{
    PyDesc d;
    if (!py_desc_check(o)) {
        py_err(PyExc_TypeError, "the kernel takes a TensorDescriptor here, got %s", Py_TYPE(o)->tp_name);
        return -1;
    }
    if (py_desc_read(o, &d) < 0)
        return -1;
    PyObject *base = py_desc_base(o);
    uint64_t ptr = 0;
    int rc = base ? tensor_ptr(base, &ptr) : -1;
    Py_XDECREF(base);
    return rc < 0 ? -1 : py_desc_pack(&d, ptr, plan, slots, ns, MAXSLOTS);
}

/* Compiled.launch(grid, args_tuple, nthreads=0): args are all kernel parameters in
 * order (constexprs included, ignored). Used by triton.compile()'d kernels. */
static PyObject *
compiled_launch(PyObject *self, PyObject *args)
{
    Compiled *c = running((Compiled *)self);
    PyObject *g, *a;
    int nthreads = 0;
    if (!PyArg_ParseTuple(args, "OO|i", &g, &a, &nthreads))
        return NULL;
    int32_t grid[3];
    if (parse_grid(g, grid) < 0)
        return NULL;
    PyObject *fast = PySequence_Fast(a, "args");
    if (!fast)
        return NULL;
    if (PySequence_Fast_GET_SIZE(fast) != c->nparams) {
        Py_DECREF(fast);
        return py_err(PyExc_TypeError, "kernel expects %d arguments, got %zd", c->nparams,
                      PySequence_Fast_GET_SIZE(fast));
    }
    uint64_t slots[MAXSLOTS];
    int ns = 0;
    for (int i = 0; i < c->nparams; i++) {
        PyObject *o = PySequence_Fast_GET_ITEM(fast, i);
        int k = (int)(c->plan[i] & 0xff);
        if (k == SK_SKIP)
            continue;
        if (k == SK_DESC) {
            if (desc_slots(o, c->plan[i], slots, &ns) < 0) {
                Py_DECREF(fast);
                return NULL;
            }
        } else if (ns >= MAXSLOTS) {
            Py_DECREF(fast);
            return py_err(PyExc_ValueError, "kernel arguments take more than %d slots", MAXSLOTS);
        } else if (k == SK_PTR) {
            PyObject *p = PyLong_Check(o) ? Py_NewRef(o) : PyObject_CallMethod(o, "data_ptr", NULL);
            if (!p) {
                Py_DECREF(fast);
                return NULL;
            }
            slots[ns++] = PyLong_AsUnsignedLongLong(p);
            Py_DECREF(p);
        } else if (pack_scalar(o, k, &slots[ns++]) < 0) {
            Py_DECREF(fast);
            return NULL;
        }
    }
    Py_DECREF(fast);
    int rc, pyf = __builtin_expect(pn_python_active(), 0);
    if (pyf)
        py_proton_frames();
    Py_BEGIN_ALLOW_THREADS
    rc = rt_launch_ex(entry_for(c, grid), slots, grid, nthreads, c->site, c->lflags);
    Py_END_ALLOW_THREADS
    if (pyf)
        pn_python_frames(NULL, 0); /* not left pending when nothing was recorded */
    if (rc < 0)
        return launch_error(rc);
    Py_RETURN_NONE;
}

/* Compiled.set_plain(other): 'other' (same parameters, no in-kernel scopes) runs
 * instead of this kernel whenever nothing records. */
static PyObject *
compiled_set_plain(PyObject *self, PyObject *arg)
{
    Compiled *c = (Compiled *)self, *o = (Compiled *)arg;
    if (!PyObject_TypeCheck(arg, &Compiled_Type) || o == c || o->plain || o->nparams != c->nparams ||
        memcmp(o->plan, c->plan, sizeof c->plan[0] * (size_t)c->nparams))
        return py_err(PyExc_TypeError, "set_plain wants the same kernel compiled without instrumentation");
    Py_XSETREF(c->plain, Py_NewRef(arg));
    Py_RETURN_NONE;
}

static PyMethodDef compiled_methods[] = {
    {"launch", compiled_launch, METH_VARARGS, "launch(grid, args, nthreads=0)"},
    {"set_plain", compiled_set_plain, METH_O, "set_plain(compiled): run it while nothing records"},
    {NULL, NULL, 0, NULL},
};

static PyObject *
compiled_get_info(PyObject *self, void *closure)
{
    return Py_NewRef(((Compiled *)self)->info ? ((Compiled *)self)->info : Py_None);
}

static PyObject *
compiled_get_plain(PyObject *self, void *closure)
{
    (void)closure;
    return Py_NewRef(((Compiled *)self)->plain ? ((Compiled *)self)->plain : Py_None);
}

static PyGetSetDef compiled_getset[] = {
    {"info", compiled_get_info, NULL, "Python metadata of the compiled kernel", NULL},
    {"plain", compiled_get_plain, NULL, "the uninstrumented twin run while nothing records, or None", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject Compiled_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tritium.Compiled",
    .tp_basicsize = sizeof(Compiled),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A loaded kernel specialisation.",
    .tp_new = PyType_GenericNew,
    .tp_init = compiled_init,
    .tp_dealloc = compiled_dealloc,
    .tp_methods = compiled_methods,
    .tp_getset = compiled_getset,
};

/* ---- Kernel: binding and specialisation ------------------------------------------------ */

typedef struct Spec {
    uint64_t hash;
    uint64_t variant;       /* compile_variant when it was compiled */
    uint64_t words[MAXP];   /* tag | payload per parameter */
    PyObject *ce[MAXP];     /* constexpr values (strong refs), NULL for others */
    Compiled *compiled;
    struct Spec *next;
} Spec;

typedef struct Kernel {
    PyObject_HEAD
    PyObject *dict;         /* instance __dict__ (Python subclass attributes) */
    PyObject *name;         /* str */
    int nparams;
    PyObject *pnames[MAXP]; /* interned str */
    uint8_t is_constexpr[MAXP], no_spec[MAXP];
    uint8_t float_kind[MAXP]; /* SK_F16..SK_F64 for a parameter annotated with a float dtype, else 0 */
    PyObject *defaults[MAXP]; /* NULL: required */
    Spec **table;
    uint32_t tcap, tcount;
} Kernel;

static PyTypeObject Kernel_Type, Launch_Type;
static PyObject *dtype_map;  /* {dtype object: code} filled from Python */

/* triton.runtime.jit._refresh_dtypes(): 1 when it registered new dtypes (torch was
 * imported after triton), 0 when not, -1 with an exception. Only on a lookup miss. */
static int
refresh_dtypes(void)
{
    PyObject *mod = PyImport_ImportModule("triton.runtime.jit");
    PyObject *r = mod ? PyObject_CallMethod(mod, "_refresh_dtypes", NULL) : NULL;
    Py_XDECREF(mod);
    int rc = r ? PyObject_IsTrue(r) : -1;
    Py_XDECREF(r);
    return rc;
}
static int hooks_on;         /* triton.knobs.runtime.launch_enter/exit_hook set */
/* Process-wide switches that change what a kernel compiles to (bit 0: Proton
 * instrumentation on); part of every specialisation's identity, so toggling
 * flags.instrumentation_on between launches picks the other variant. */
static uint64_t compile_variant;
static PyObject *str_data_ptr, *str_dtype, *str_compile_spec;

/* The slot kind of spec kind 'name', or -1. */
static int
slot_kind_of(const char *name)
{
    for (size_t i = 0; i < sizeof slot_kinds / sizeof slot_kinds[0]; i++)
        if (!strcmp(slot_kinds[i].spec, name))
            return slot_kinds[i].kind;
    return -1;
}

/* The spec kind of slot kind k (its first name in slot_kinds). */
static const char *
slot_spec_name(int k)
{
    for (size_t i = 0; i < sizeof slot_kinds / sizeof slot_kinds[0]; i++)
        if (slot_kinds[i].kind == k)
            return slot_kinds[i].spec;
    return "?";
}

/* Kernel(..., float_kinds): per parameter None or the float spec kind ("fp16",
 * "bf16", "fp32", "fp64") its annotation names. */
static int
float_kinds(Kernel *k, PyObject *seq)
{
    PyObject *f = PySequence_Fast(seq, "float kinds");
    if (!f)
        return -1;
    int rc = 0;
    for (Py_ssize_t i = 0; rc == 0 && i < PySequence_Fast_GET_SIZE(f) && i < k->nparams; i++) {
        PyObject *o = PySequence_Fast_GET_ITEM(f, i);
        if (o == Py_None)
            continue;
        const char *name = PyUnicode_Check(o) ? PyUnicode_AsUTF8(o) : NULL;
        int kind = name ? slot_kind_of(name) : -1;
        if (kind != SK_F16 && kind != SK_BF16 && kind != SK_F32 && kind != SK_F64) {
            py_err(PyExc_ValueError, "parameter '%U': %R is not a float kind", k->pnames[i], o);
            rc = -1;
        } else {
            k->float_kind[i] = (uint8_t)kind;
        }
    }
    Py_DECREF(f);
    return rc;
}

/* Kernel(name, param_names, constexpr_flags, no_specialize_flags, defaults[, float_kinds]) */
static int
kernel_init(PyObject *self, PyObject *args, PyObject *kw)
{
    Kernel *k = (Kernel *)self;
    PyObject *name, *names, *ce, *ns, *defs, *fk = Py_None;
    if (!PyArg_ParseTuple(args, "UOOOO|O", &name, &names, &ce, &ns, &defs, &fk))
        return -1;
    PyObject *fn = PySequence_Fast(names, "param names"), *fc = PySequence_Fast(ce, "constexpr flags"),
             *fs = PySequence_Fast(ns, "no-specialize flags"), *fd = PySequence_Fast(defs, "defaults");
    int rc = -1;
    if (!fn || !fc || !fs || !fd)
        goto out;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fn);
    if (n > MAXP) {
        py_err(PyExc_ValueError, "kernels take at most %d parameters", MAXP);
        goto out;
    }
    Py_XSETREF(k->name, Py_NewRef(name));
    k->nparams = (int)n;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *s = PySequence_Fast_GET_ITEM(fn, i);
        Py_INCREF(s);
        PyUnicode_InternInPlace(&s);
        Py_XSETREF(k->pnames[i], s);
        k->is_constexpr[i] = (uint8_t)PyObject_IsTrue(PySequence_Fast_GET_ITEM(fc, i));
        k->no_spec[i] = (uint8_t)PyObject_IsTrue(PySequence_Fast_GET_ITEM(fs, i));
        PyObject *d = PySequence_Fast_GET_ITEM(fd, i);
        /* a default of Ellipsis marks a required parameter */
        Py_XSETREF(k->defaults[i], d == Py_Ellipsis ? NULL : Py_NewRef(d));
        k->float_kind[i] = 0;
    }
    if (fk != Py_None && float_kinds(k, fk) < 0)
        goto out;
    rc = 0;
out:
    Py_XDECREF(fn);
    Py_XDECREF(fc);
    Py_XDECREF(fs);
    Py_XDECREF(fd);
    return rc;
}

static void
spec_free(Spec *s)
{
    for (int i = 0; i < MAXP; i++)
        Py_XDECREF(s->ce[i]);
    Py_XDECREF((PyObject *)s->compiled);
    free(s);
}

static void
kernel_clear_table(Kernel *k)
{
    for (uint32_t i = 0; i < k->tcap; i++)
        for (Spec *s = k->table[i], *n; s; s = n) {
            n = s->next;
            spec_free(s);
        }
    free(k->table);
    k->table = NULL;
    k->tcap = k->tcount = 0;
}

static void
kernel_dealloc(PyObject *self)
{
    Kernel *k = (Kernel *)self;
    PyObject_GC_UnTrack(self);
    kernel_clear_table(k);
    for (int i = 0; i < k->nparams; i++) {
        Py_XDECREF(k->pnames[i]);
        Py_XDECREF(k->defaults[i]);
    }
    Py_XDECREF(k->name);
    Py_XDECREF(k->dict);
    Py_TYPE(self)->tp_free(self);
}

static int
kernel_traverse(PyObject *self, visitproc visit, void *arg)
{
    Kernel *k = (Kernel *)self;
    Py_VISIT(k->dict);
    return 0;
}

static int
kernel_clear(PyObject *self)
{
    Py_CLEAR(((Kernel *)self)->dict);
    return 0;
}

static int
param_index(Kernel *k, PyObject *key)
{
    for (int i = 0; i < k->nparams; i++)
        if (k->pnames[i] == key)
            return i;
    for (int i = 0; i < k->nparams; i++)
        if (PyUnicode_Compare(k->pnames[i], key) == 0)
            return i;
    return -1;
}

/* Launch options that upstream Triton and triton-cpu accept; only the thread count
 * means something on the CPU. */
static int
launch_option(PyObject *key, PyObject *val, int *nthreads, int *debug)
{
    const char *s = PyUnicode_AsUTF8(key);
    if (!s)
        return -1;
    if (!strcmp(s, "num_threads") || !strcmp(s, "num_cpu_threads")) {
        long v = val == Py_None ? 0 : PyLong_AsLong(val);
        if (v == -1 && PyErr_Occurred())
            return -1;
        *nthreads = (int)v;
        return 1;
    }
    if (!strcmp(s, "debug")) { /* compiles device_assert in or out: part of the specialisation */
        int v = val == Py_None ? 0 : PyObject_IsTrue(val);
        if (v < 0)
            return -1;
        *debug = val == Py_None ? 0 : v ? 2 : 1;
        return 1;
    }
    static const char *const ignored[] = {"num_warps", "num_stages", "num_ctas", "maxnreg", "enable_fp_fusion",
                                          "waves_per_eu", "matrix_instr_nonkdim", "kpack",
                                          "launch_cooperative_grid", "enable_warp_specialization", "stream",
                                          "warmup", "instrumentation_mode", NULL};
    for (int i = 0; ignored[i]; i++)
        if (!strcmp(s, ignored[i]))
            return 1;
    return 0;
}

typedef struct Bound {
    PyObject *v[MAXP];      /* borrowed */
    uint64_t words[MAXP];
    uint64_t payload[MAXP]; /* pointer value / int value */
    uint64_t hash;
    uint64_t variant;       /* compile_variant, and the launch's debug option << 8 */
    int nthreads;
    int debug;              /* launch option debug: 0 not given, 1 False, 2 True */
    int ndesc;              /* tensor descriptor arguments: desc[didx[i]] for parameter i */
    uint8_t didx[MAXP];
    PyDesc desc[MAXDESC];
} Bound;

static int
bind(Kernel *k, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, Bound *b)
{
    memset(b->v, 0, sizeof(PyObject *) * (size_t)k->nparams);
    b->nthreads = 0;
    b->debug = 0;
    b->ndesc = 0;
    if (nargs > k->nparams) {
        py_err(PyExc_TypeError, "%U() takes %d positional arguments but %zd were given", k->name, k->nparams, nargs);
        return -1;
    }
    for (Py_ssize_t i = 0; i < nargs; i++)
        b->v[i] = args[i];
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t j = 0; j < nkw; j++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, j), *val = args[nargs + j];
        int i = param_index(k, key);
        if (i < 0) {
            int r = launch_option(key, val, &b->nthreads, &b->debug);
            if (r < 0)
                return -1;
            if (r == 0) {
                py_err(PyExc_TypeError, "Keyword argument %U was specified but unrecognised", key);
                return -1;
            }
            continue;
        }
        if (b->v[i]) {
            py_err(PyExc_TypeError, "%U() got multiple values for argument '%U'", k->name, key);
            return -1;
        }
        b->v[i] = val;
    }
    for (int i = 0; i < k->nparams; i++) {
        if (b->v[i])
            continue;
        if (!k->defaults[i]) {
            py_err(PyExc_TypeError, "%U() missing a required argument: '%U'", k->name, k->pnames[i]);
            return -1;
        }
        b->v[i] = k->defaults[i];
    }
    return 0;
}

static uint64_t
mix(uint64_t h, uint64_t x)
{
    h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h;
}

/* The data pointer of a tensor-like argument: data_ptr() (torch, triton wrappers) or
 * the numpy array interface. */
static int
tensor_ptr(PyObject *o, uint64_t *ptr)
{
    PyObject *p = PyObject_CallMethodNoArgs(o, str_data_ptr);
    if (!p) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError))
            return -1;
        PyErr_Clear();
        PyObject *ai = PyObject_GetAttrString(o, "__array_interface__");
        if (!ai)
            return -1;
        PyObject *data = PyDict_Check(ai) ? PyDict_GetItemString(ai, "data") : NULL;
        p = data && PyTuple_Check(data) && PyTuple_GET_SIZE(data) > 0 ? Py_NewRef(PyTuple_GET_ITEM(data, 0)) : NULL;
        Py_DECREF(ai);
        if (!p) {
            PyErr_SetString(PyExc_TypeError, "array without a data pointer");
            return -1;
        }
    }
    *ptr = PyLong_AsUnsignedLongLong(p);
    Py_DECREF(p);
    return PyErr_Occurred() ? -1 : 0;
}

/* The dtype code and data pointer of tensor argument o of parameter i. */
static int
tensor_arg(Kernel *k, int i, PyObject *o, long *code_out, uint64_t *ptr)
{
    PyObject *dt = PyObject_GetAttr(o, str_dtype);
    if (!dt) {
        PyErr_Clear();
        py_err(PyExc_TypeError, "argument '%U' of %U() has unsupported type %s (expected a tensor, a "
                                "TensorDescriptor, an int, a float, a bool or None)", k->pnames[i], k->name,
               Py_TYPE(o)->tp_name);
        return -1;
    }
    PyObject *code = dtype_map ? PyDict_GetItemWithError(dtype_map, dt) : NULL;
    if (!code && !PyErr_Occurred() && dtype_map && refresh_dtypes() > 0)
        code = PyDict_GetItemWithError(dtype_map, dt); /* torch imported after triton */
    if (!code && !PyErr_Occurred() && dtype_map) {
        /* numpy dtypes hash by value; look up by their string form too */
        PyObject *s = PyObject_Str(dt);
        code = s ? PyDict_GetItemWithError(dtype_map, s) : NULL;
        Py_XDECREF(s);
    }
    Py_DECREF(dt);
    if (!code) {
        if (!PyErr_Occurred())
            py_err(PyExc_TypeError, "argument '%U' of %U(): unsupported tensor dtype", k->pnames[i], k->name);
        return -1;
    }
    if (tensor_ptr(o, ptr) < 0) {
        if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
            PyErr_Clear();
            py_err(PyExc_TypeError, "argument '%U' of %U(): pointer argument must be a tensor or array "
                                    "with data_ptr()", k->pnames[i], k->name);
        }
        return -1;
    }
    *code_out = PyLong_AsLong(code);
    return 0;
}

/* Re-raises the pending exception of a descriptor check with parameter i's name in front. */
static void
desc_error(Kernel *k, int i)
{
    PyObject *t, *v, *tb;
    PyErr_Fetch(&t, &v, &tb);
    PyErr_NormalizeException(&t, &v, &tb);
    if (t && v)
        py_err(t, "argument '%U' of %U(): %S", k->pnames[i], k->name, v);
    Py_XDECREF(t);
    Py_XDECREF(v);
    Py_XDECREF(tb);
}

/* The key word of TensorDescriptor argument o of parameter i; keeps what its slots
 * need in b (py_desc.c). */
static int
desc_arg(Kernel *k, int i, PyObject *o, Bound *b, uint64_t *w)
{
    if (b->ndesc >= MAXDESC) {
        py_err(PyExc_ValueError, "%U(): at most %d tensor descriptor arguments", k->name, MAXDESC);
        return -1;
    }
    PyDesc *d = &b->desc[b->ndesc];
    if (py_desc_read(o, d) < 0) {
        desc_error(k, i);
        return -1;
    }
    PyObject *base = py_desc_base(o);
    long code = 0;
    int rc = base ? tensor_arg(k, i, base, &code, &b->payload[i]) : -1;
    Py_XDECREF(base);
    if (rc < 0)
        return -1;
    if (py_desc_word(d, (int)code, b->payload[i] % 16 == 0 && !k->no_spec[i], k->no_spec[i], w) < 0) {
        desc_error(k, i);
        return -1;
    }
    b->didx[i] = (uint8_t)b->ndesc++;
    return 0;
}

static int
specialize(Kernel *k, Bound *b)
{
    b->variant = compile_variant | (uint64_t)b->debug << 8;
    uint64_t h = mix(1469598103934665603ull, b->variant);
    for (int i = 0; i < k->nparams; i++) {
        PyObject *o = b->v[i];
        uint64_t w;
        if (k->is_constexpr[i]) {
            Py_hash_t ph = PyObject_Hash(o);
            if (ph == -1) {
                PyErr_Clear();
                ph = (Py_hash_t)(uintptr_t)o;
            }
            w = TG_CONSTEXPR;
            h = mix(h, (uint64_t)ph ^ (uint64_t)(uintptr_t)Py_TYPE(o));
        } else if (k->float_kind[i]) {
            if (!PyFloat_Check(o) && !PyLong_Check(o)) {
                py_err(PyExc_TypeError, "argument '%U' of %U() is annotated %s and needs a number, got %s",
                       k->pnames[i], k->name, slot_spec_name(k->float_kind[i]), Py_TYPE(o)->tp_name);
                return -1;
            }
            w = TG_FLOAT | ((uint64_t)k->float_kind[i] << 16); /* any number, not specialised */
        } else if (o == Py_None) {
            w = TG_NONE;
        } else if (PyBool_Check(o)) {
            w = TG_BOOL;
            b->payload[i] = o == Py_True;
        } else if (PyLong_Check(o)) {
            int overflow;
            long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
            if (overflow > 0) {
                unsigned long long u = PyLong_AsUnsignedLongLong(o);
                if (PyErr_Occurred()) {
                    PyErr_Clear();
                    py_err(PyExc_OverflowError, "argument '%U': integer %R does not fit in 64 bits", k->pnames[i], o);
                    return -1;
                }
                b->payload[i] = u;
                w = TG_U64 | ((u % 16 == 0 && !k->no_spec[i]) ? 0x100u : 0);
            } else if (overflow < 0) {
                py_err(PyExc_OverflowError, "argument '%U': integer %R does not fit in 64 bits", k->pnames[i], o);
                return -1;
            } else {
                b->payload[i] = (uint64_t)v;
                if (v == 1 && !k->no_spec[i])
                    w = TG_ONE;
                else
                    w = (v >= INT32_MIN && v <= INT32_MAX ? TG_I32 : TG_I64) |
                        ((v % 16 == 0 && !k->no_spec[i]) ? 0x100u : 0);
            }
        } else if (PyFloat_Check(o)) {
            w = TG_FLOAT | ((uint64_t)SK_F32 << 16);
        } else if (py_desc_check(o)) {
            if (desc_arg(k, i, o, b, &w) < 0)
                return -1;
        } else {
            long c;
            if (tensor_arg(k, i, o, &c, &b->payload[i]) < 0)
                return -1;
            w = TG_PTR | ((uint64_t)c << 16) | ((b->payload[i] % 16 == 0 && !k->no_spec[i]) ? 0x100u : 0);
        }
        b->words[i] = w;
        h = mix(h, w);
    }
    b->hash = h;
    return 0;
}

static Spec *
lookup(Kernel *k, Bound *b)
{
    if (!k->tcap)
        return NULL;
    for (Spec *s = k->table[b->hash & (k->tcap - 1)]; s; s = s->next) {
        if (s->hash != b->hash || s->variant != b->variant ||
            memcmp(s->words, b->words, sizeof(uint64_t) * (size_t)k->nparams))
            continue;
        bool eq = true;
        for (int i = 0; i < k->nparams && eq; i++) {
            if (!k->is_constexpr[i] || s->ce[i] == b->v[i])
                continue;
            if (Py_TYPE(s->ce[i]) != Py_TYPE(b->v[i])) {
                eq = false;
                break;
            }
            int r = PyObject_RichCompareBool(s->ce[i], b->v[i], Py_EQ);
            if (r < 0) {
                PyErr_Clear();
                r = 0;
            }
            eq = r == 1;
        }
        if (eq)
            return s;
    }
    return NULL;
}

static int
insert(Kernel *k, Bound *b, Compiled *c)
{
    if (k->tcount * 2 >= k->tcap) {
        uint32_t cap = k->tcap ? k->tcap * 2 : 16;
        Spec **t = calloc(cap, sizeof *t);
        if (!t)
            return -1;
        for (uint32_t i = 0; i < k->tcap; i++)
            for (Spec *s = k->table[i], *n; s; s = n) {
                n = s->next;
                s->next = t[s->hash & (cap - 1)];
                t[s->hash & (cap - 1)] = s;
            }
        free(k->table);
        k->table = t;
        k->tcap = cap;
    }
    Spec *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    s->hash = b->hash;
    s->variant = b->variant;
    memcpy(s->words, b->words, sizeof(uint64_t) * (size_t)k->nparams);
    for (int i = 0; i < k->nparams; i++)
        if (k->is_constexpr[i])
            s->ce[i] = Py_NewRef(b->v[i]);
    s->compiled = (Compiled *)Py_NewRef((PyObject *)c);
    s->next = k->table[b->hash & (k->tcap - 1)];
    k->table[b->hash & (k->tcap - 1)] = s;
    k->tcount++;
    return 0;
}

/* The specialisation descriptor handed to Python on a miss: one tuple per param. */
static PyObject *
spec_tuple(Kernel *k, Bound *b)
{
    PyObject *t = PyTuple_New(k->nparams);
    for (int i = 0; t && i < k->nparams; i++) {
        uint64_t w = b->words[i];
        int tag = (int)(w & 0xff), div = (w & 0x100) != 0;
        PyObject *e;
        switch (tag) {
        case TG_CONSTEXPR: e = Py_BuildValue("(sO)", "constexpr", b->v[i]); break;
        case TG_NONE: e = Py_BuildValue("(sO)", "constexpr", Py_None); break;
        case TG_ONE: e = Py_BuildValue("(si)", "constexpr", 1); break;
        case TG_BOOL: e = Py_BuildValue("(s)", "i1"); break;
        case TG_I32: e = Py_BuildValue("(si)", "i32", div); break;
        case TG_I64: e = Py_BuildValue("(si)", "i64", div); break;
        case TG_U64: e = Py_BuildValue("(si)", "u64", div); break;
        case TG_FLOAT: e = Py_BuildValue("(s)", slot_spec_name((int)(w >> 16))); break;
        case TG_DESC: e = py_desc_spec(w); break;
        default: e = Py_BuildValue("(sii)", "ptr", (int)(w >> 16), div); break;
        }
        if (!e) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, e);
    }
    return t;
}

static PyObject *
bound_tuple(Kernel *k, Bound *b)
{
    PyObject *t = PyTuple_New(k->nparams);
    for (int i = 0; t && i < k->nparams; i++)
        PyTuple_SET_ITEM(t, i, Py_NewRef(b->v[i]));
    return t;
}

/* Finds or compiles the specialisation of the bound arguments. Borrowed result. */
static Compiled *
resolve(Kernel *k, Bound *b)
{
    Spec *s = lookup(k, b);
    if (s) {
        rt_stats_add(RT_STAT_MEMORY_HIT);
        return s->compiled;
    }
    PyObject *spec = spec_tuple(k, b), *bt = bound_tuple(k, b);
    PyObject *dbg = b->debug == 0 ? Py_None : b->debug == 2 ? Py_True : Py_False;
    PyObject *c = spec && bt ? PyObject_CallMethodObjArgs((PyObject *)k, str_compile_spec, spec, bt, dbg, NULL) : NULL;
    Py_XDECREF(spec);
    Py_XDECREF(bt);
    if (!c)
        return NULL;
    if (!PyObject_TypeCheck(c, &Compiled_Type)) {
        Py_DECREF(c);
        py_err(PyExc_TypeError, "_compile_spec must return a tritium.Compiled");
        return NULL;
    }
    int rc = insert(k, b, (Compiled *)c);
    Py_DECREF(c);
    if (rc < 0) {
        PyErr_NoMemory();
        return NULL;
    }
    return lookup(k, b)->compiled;
}

static PyObject *
meta_dict(Kernel *k, Bound *b)
{
    PyObject *d = PyDict_New();
    for (int i = 0; d && i < k->nparams; i++)
        if (PyDict_SetItem(d, k->pnames[i], b->v[i]) < 0) {
            Py_DECREF(d);
            return NULL;
        }
    return d;
}

/* Calls triton.runtime.jit.<fn>(a, b, c, d) (launch hooks; rare, so looked up each time). */
static PyObject *
hook_call(const char *fn, PyObject *a, PyObject *b, PyObject *c, PyObject *d)
{
    PyObject *mod = PyImport_ImportModule("triton.runtime.jit");
    if (!mod)
        return NULL;
    PyObject *f = PyObject_GetAttrString(mod, fn);
    Py_DECREF(mod);
    if (!f)
        return NULL;
    PyObject *r = b ? PyObject_CallFunctionObjArgs(f, a, b, c, d, NULL) : PyObject_CallOneArg(f, a);
    Py_DECREF(f);
    return r;
}

static PyObject *meta_dict(Kernel *k, Bound *b);

/* _launch_hook_enter(kernel, grid, args, compiled): the compiled specialisation gives
 * launch_metadata functions their metadata argument */
static PyObject *
hook_enter(Kernel *k, const int32_t g[3], Bound *b, Compiled *c)
{
    PyObject *grid = Py_BuildValue("(iii)", g[0], g[1], g[2]), *args = meta_dict(k, b);
    PyObject *r = grid && args ? hook_call("_launch_hook_enter", (PyObject *)k, grid, args, (PyObject *)c) : NULL;
    Py_XDECREF(grid);
    Py_XDECREF(args);
    return r;
}

/* A launch with a tuple argument (upstream passes tuples of tensors and ints): handed to
 * JITFunction._launch_tuples, which flattens the tuples into the parameters of a twin
 * kernel and launches that (python/triton/runtime/jit.py; a Python call per launch). */
static PyObject *
tuple_launch(Kernel *k, PyObject *grid, Bound *b, int only_compile)
{
    PyObject *vals = bound_tuple(k, b);
    if (!vals)
        return NULL;
    PyObject *r = PyObject_CallMethod((PyObject *)k, "_launch_tuples", "OOiii", grid ? grid : Py_None, vals,
                                      b->nthreads, b->debug, only_compile);
    Py_DECREF(vals);
    return r;
}

static PyObject *
do_launch(Kernel *k, PyObject *grid, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, int only_compile)
{
    Bound b;
    if (bind(k, args, nargs, kwnames, &b) < 0)
        return NULL;
    for (int i = 0; i < k->nparams; i++)
        if (!k->is_constexpr[i] && PyTuple_Check(b.v[i]))
            return tuple_launch(k, grid, &b, only_compile);
    if (specialize(k, &b) < 0)
        return NULL;
    Compiled *c = resolve(k, &b);
    if (!c)
        return NULL;
    if (only_compile)
        return Py_NewRef((PyObject *)c);
    c = running(c);
    int32_t g[3];
    if (PyCallable_Check(grid)) {
        PyObject *meta = meta_dict(k, &b);
        PyObject *r = meta ? PyObject_CallOneArg(grid, meta) : NULL;
        Py_XDECREF(meta);
        if (!r)
            return NULL;
        int rc = parse_grid(r, g);
        Py_DECREF(r);
        if (rc < 0)
            return NULL;
    } else if (parse_grid(grid, g) < 0) {
        return NULL;
    }
    uint64_t slots[MAXSLOTS];
    int ns = 0;
    for (int i = 0; i < k->nparams; i++) {
        int kind = (int)(c->plan[i] & 0xff);
        if (kind == SK_SKIP)
            continue;
        if (kind == SK_DESC) {
            if (py_desc_pack(&b.desc[b.didx[i]], b.payload[i], c->plan[i], slots, &ns, MAXSLOTS) < 0)
                return NULL;
            continue;
        }
        if (ns >= MAXSLOTS)
            return py_err(PyExc_ValueError, "kernel arguments take more than %d slots", MAXSLOTS);
        if (kind == SK_PTR || (b.words[i] & 0xff) == TG_I32 || (b.words[i] & 0xff) == TG_I64 ||
            (b.words[i] & 0xff) == TG_U64 || (b.words[i] & 0xff) == TG_BOOL)
            slots[ns++] = b.payload[i];
        else if (pack_scalar(b.v[i], kind, &slots[ns++]) < 0)
            return NULL;
    }
    PyObject *hook_meta = NULL;
    if (hooks_on && !(hook_meta = hook_enter(k, g, &b, c)))
        return NULL;
    int rc, pyf = __builtin_expect(pn_python_active(), 0);
    if (pyf)
        py_proton_frames();
    RtKernelFn fn = entry_for(c, g);
    if ((int64_t)g[0] * g[1] * g[2] <= 1 && !c->lflags) {
        rc = rt_launch(fn, slots, g, b.nthreads, c->site);
    } else {
        Py_BEGIN_ALLOW_THREADS
        rc = rt_launch_ex(fn, slots, g, b.nthreads, c->site, c->lflags);
        Py_END_ALLOW_THREADS
    }
    if (pyf)
        pn_python_frames(NULL, 0); /* not left pending when nothing was recorded */
    if (hook_meta) {
        PyObject *r = hook_call("_launch_hook_exit", hook_meta, NULL, NULL, NULL);
        Py_DECREF(hook_meta);
        if (!r)
            return NULL;
        Py_DECREF(r);
    }
    if (rc < 0)
        return launch_error(rc);
    Py_RETURN_NONE;
}

/* ---- Launch: a kernel bound to a grid (kernel[grid]) ----------------------------------- */

typedef struct Launch {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    Kernel *k;
    PyObject *grid;
} Launch;

static PyObject *
launch_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Launch *l = (Launch *)self;
    return do_launch(l->k, l->grid, args, PyVectorcall_NARGS(nargsf), kwnames, 0);
}

static void
launch_dealloc(PyObject *self)
{
    Launch *l = (Launch *)self;
    Py_XDECREF((PyObject *)l->k);
    Py_XDECREF(l->grid);
    Py_TYPE(self)->tp_free(self);
}

static PyTypeObject Launch_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tritium.Launch",
    .tp_basicsize = sizeof(Launch),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(Launch, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_dealloc = launch_dealloc,
    .tp_doc = "A kernel bound to a launch grid.",
};

static PyObject *
kernel_getitem(PyObject *self, PyObject *grid)
{
    Launch *l = PyObject_New(Launch, &Launch_Type);
    if (!l)
        return NULL;
    l->vectorcall = launch_vectorcall;
    l->k = (Kernel *)Py_NewRef(self);
    l->grid = Py_NewRef(grid);
    return (PyObject *)l;
}

static PyMappingMethods kernel_mapping = {.mp_subscript = kernel_getitem};

/* kernel._launch(grid, *args, **kwargs) — the same path without the Launch object. */
static PyObject *
kernel_launch(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (nargs < 1)
        return py_err(PyExc_TypeError, "_launch(grid, *args)");
    return do_launch((Kernel *)self, args[0], args + 1, nargs - 1, kwnames, 0);
}

/* kernel._specialization(*args, **kwargs) -> Compiled (compiling if needed). */
static PyObject *
kernel_specialization(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return do_launch((Kernel *)self, NULL, args, nargs, kwnames, 1);
}

static PyObject *
kernel_cache_clear(PyObject *self, PyObject *args)
{
    kernel_clear_table((Kernel *)self);
    Py_RETURN_NONE;
}

static PyObject *
kernel_cache_size(PyObject *self, PyObject *args)
{
    return PyLong_FromUnsignedLong(((Kernel *)self)->tcount);
}

static PyMethodDef kernel_methods[] = {
    {"_launch", (PyCFunction)(void (*)(void))kernel_launch, METH_FASTCALL | METH_KEYWORDS, NULL},
    {"_specialization", (PyCFunction)(void (*)(void))kernel_specialization, METH_FASTCALL | METH_KEYWORDS, NULL},
    {"_cache_clear", kernel_cache_clear, METH_NOARGS, NULL},
    {"_cache_size", kernel_cache_size, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject Kernel_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tritium.Kernel",
    .tp_basicsize = sizeof(Kernel),
    .tp_dictoffset = offsetof(Kernel, dict),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "C base of JITFunction: argument binding, specialisation cache, launch.",
    .tp_new = PyType_GenericNew,
    .tp_init = kernel_init,
    .tp_dealloc = kernel_dealloc,
    .tp_traverse = kernel_traverse,
    .tp_clear = kernel_clear,
    .tp_as_mapping = &kernel_mapping,
    .tp_methods = kernel_methods,
};

/* set_dtype_map({dtype_object_or_str: code}) */
static PyObject *
set_dtype_map(PyObject *self, PyObject *arg)
{
    if (!PyDict_Check(arg))
        return py_err(PyExc_TypeError, "expected a dict");
    Py_XSETREF(dtype_map, Py_NewRef(arg));
    Py_RETURN_NONE;
}

static PyObject *
set_launch_hooks(PyObject *self, PyObject *arg)
{
    hooks_on = PyObject_IsTrue(arg);
    Py_RETURN_NONE;
}

static PyObject *
set_compile_variant(PyObject *self, PyObject *arg)
{
    unsigned long long v = PyLong_AsUnsignedLongLong(arg);
    if (v == (unsigned long long)-1 && PyErr_Occurred())
        return NULL;
    compile_variant = v;
    Py_RETURN_NONE;
}

static PyObject *
threads_default(PyObject *self, PyObject *args)
{
    return PyLong_FromLong(rt_threads_default());
}

static PyObject *
threads_runtime(PyObject *self, PyObject *args)
{
    return PyUnicode_FromString(rt_threads_runtime());
}

static PyMethodDef launch_functions[] = {
    {"set_dtype_map", set_dtype_map, METH_O, "Register tensor dtype objects → dtype codes."},
    {"threads_default", threads_default, METH_NOARGS, "Default launch thread count."},
    {"set_launch_hooks", set_launch_hooks, METH_O, "Turn the Python launch-hook path on or off."},
    {"set_compile_variant", set_compile_variant, METH_O,
     "Process-wide compile switches (bit 0: instrumentation) that key the specialisation cache."},
    {"threads_runtime", threads_runtime, METH_NOARGS, "OpenMP runtime in use."},
    {NULL, NULL, 0, NULL},
};

/* SLOT_KINDS = {spec kind: slot kind}, DTYPES = ((name, bits), ...) indexed by
 * IrDtype (the dtype codes of tl.dtype and of the tensor dtype map). */
static int
add_tables(PyObject *mod)
{
    PyObject *kinds = PyDict_New(), *dts = PyTuple_New(IR_DTYPE_COUNT);
    int rc = kinds && dts ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < sizeof slot_kinds / sizeof slot_kinds[0]; i++) {
        PyObject *v = PyLong_FromLong(slot_kinds[i].kind);
        rc = v ? PyDict_SetItemString(kinds, slot_kinds[i].spec, v) : -1;
        Py_XDECREF(v);
    }
    for (int d = 0; rc == 0 && d < IR_DTYPE_COUNT; d++) {
        PyObject *e = Py_BuildValue("(si)", ir_dtype_name((IrDtype)d), ir_dtype_bits((IrDtype)d));
        if (!e)
            rc = -1;
        else
            PyTuple_SET_ITEM(dts, d, e);
    }
    if (rc == 0)
        rc = PyModule_AddObjectRef(mod, "SLOT_KINDS", kinds) < 0 || PyModule_AddObjectRef(mod, "DTYPES", dts) < 0
                 ? -1 : 0;
    Py_XDECREF(kinds);
    Py_XDECREF(dts);
    return rc;
}

int
py_launch_init(PyObject *mod)
{
    stream_threshold = rt_stream_threshold();
    str_data_ptr = PyUnicode_InternFromString("data_ptr");
    str_dtype = PyUnicode_InternFromString("dtype");
    str_compile_spec = PyUnicode_InternFromString("_compile_spec");
    if (PyType_Ready(&Compiled_Type) < 0 || PyType_Ready(&Kernel_Type) < 0 || PyType_Ready(&Launch_Type) < 0)
        return -1;
    if (PyModule_AddObjectRef(mod, "Compiled", (PyObject *)&Compiled_Type) < 0 ||
        PyModule_AddObjectRef(mod, "Kernel", (PyObject *)&Kernel_Type) < 0 ||
        PyModule_AddObjectRef(mod, "Launch", (PyObject *)&Launch_Type) < 0 || add_tables(mod) < 0)
        return -1;
    return PyModule_AddFunctions(mod, launch_functions);
}
