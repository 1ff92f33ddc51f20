/*
 * py_int.h — internal interface of the CPython extension triton._C.tritium.
 *
 * The extension is the one bridge between Python and the C core:
 *   py_builder.c  the front-end builder (compiler.h) as a Python type
 *   py_compile.c  pipeline of a built module, then the compile driver (driver.h:
 *                 lowering, code generation, the crash-isolating compile server);
 *                 the on-disk cache (runtime.h)
 *   py_desc.c     host tensor descriptors as kernel arguments (for py_launch.c)
 *   py_launch.c   kernels: argument binding, specialisation keys, the in-memory
 *                 specialisation cache and launches (runtime.h + Proton hooks)
 *   py_proton.c   Proton sessions, scopes and the spine-triton profiler API
 *   py_scope.c    the host scope context manager (proton.scope) as a C type
 *   py_module.c   module definition and shared helpers
 * Python code in python/triton is the thin layer above (AST walking, constexpr
 * evaluation, the user-facing API).
 */
#ifndef PY_INT_H
#define PY_INT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "compiler.h"

/* ---- py_module.c ---- */
extern PyObject *py_BuilderError;   /* triton._C.tritium.BuilderError */
/* Raises 'type' with a message formatted by PyUnicode_FromFormat's rules (%s, %d,
 * %zd, %lld, %U, %R, ...); returns NULL. */
PyObject *py_err(PyObject *type, const char *fmt, ...);
/* Converts a sequence of ints to int64 array (max n); returns count or -1. */
int py_int64_seq(PyObject *seq, int64_t *out, int max, const char *what);

/* ---- py_builder.c ---- */
extern PyTypeObject PyBuilder_Type;
typedef struct PyBuilder {
    PyObject_HEAD
    IrModule *m;
    IrBuilder *b;
} PyBuilder;
int py_builder_init_type(PyObject *mod);

/* ---- py_compile.c ---- */
int py_compile_init(PyObject *mod);

/* ---- py_launch.c ---- */
int py_launch_init(PyObject *mod);

/* ---- py_desc.c ---- (host tensor descriptors as kernel arguments) */
enum { DESC_MAXRANK = 5 };
enum { DF_PLAIN, DF_DIV16, DF_ONE };   /* int facts of a shape/stride entry */
enum { TG_DESC = 16, SK_DESC = 9 };    /* key tag and slot kind (beside py_launch.c's) */
typedef struct PyDesc {
    int rank, nan;
    int64_t shape[DESC_MAXRANK], strides[DESC_MAXRANK], block[DESC_MAXRANK];
} PyDesc;
int py_desc_init(PyObject *mod);
/* 1 when o is a TensorDescriptor (the class registered by set_descriptor_type). */
int py_desc_check(PyObject *o);
/* Reads shape, strides, block_shape and padding (checked); -1 with an exception. */
int py_desc_read(PyObject *o, PyDesc *d);
/* o.base (new reference). */
PyObject *py_desc_base(PyObject *o);
/* The key word of a descriptor whose base has dtype 'code'; -1 with an exception. */
int py_desc_word(const PyDesc *d, int code, int aligned, int no_spec, uint64_t *w);
/* The spec entry handed to Python for key word w. */
PyObject *py_desc_spec(uint64_t w);
/* Appends the slots plan entry 'plan' passes (base, then shapes, then strides). */
int py_desc_pack(const PyDesc *d, uint64_t base, unsigned plan, uint64_t *slots, int *ns, int max);

/* ---- py_proton.c ---- */
int py_proton_init(PyObject *mod);
/* Hands Proton this thread's Python stack for the next launch or scope entry, when
 * pn_python_active() (context="python" sessions). GIL held; never raises. */
int py_proton_frames(void);

/* ---- py_scope.c ---- */
int py_scope_init(PyObject *mod);

#endif /* PY_INT_H */
