/*
 * py_module.c — the triton._C.tritium extension module: definition, init and the
 * helpers shared by its files.
 */
#include "py_int.h"

#include <stdarg.h>
#include <stdlib.h>

PyObject *py_BuilderError;

PyObject *
py_err(PyObject *type, const char *fmt, ...)
{
    /* Python's formatter: %s %d %zd %lld %U %R ... (PyUnicode_FromFormat rules) */
    va_list ap;
    va_start(ap, fmt);
    PyErr_FormatV(type, fmt, ap);
    va_end(ap);
    return NULL;
}

int
py_int64_seq(PyObject *seq, int64_t *out, int max, const char *what)
{
    PyObject *fast = PySequence_Fast(seq, what);
    if (!fast)
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    if (n > max) {
        Py_DECREF(fast);
        py_err(PyExc_ValueError, "%s: at most %d entries", what, max);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PySequence_Fast_GET_ITEM(fast, i);
        PyObject *idx = PyNumber_Index(o);
        if (!idx) {
            Py_DECREF(fast);
            return -1;
        }
        out[i] = PyLong_AsLongLong(idx);
        Py_DECREF(idx);
        if (out[i] == -1 && PyErr_Occurred()) {
            Py_DECREF(fast);
            return -1;
        }
    }
    Py_DECREF(fast);
    return (int)n;
}

static PyObject *
version(PyObject *self, PyObject *args)
{
    return PyUnicode_FromString(TRITIUM_VERSION);
}

static PyMethodDef module_methods[] = {
    {"version", version, METH_NOARGS, "Tritium version string."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "tritium",
    "Tritium core: builder, compiler driver, runtime launcher and Proton bindings.", -1, module_methods,
};

PyMODINIT_FUNC
PyInit_tritium(void)
{
    PyObject *m = PyModule_Create(&module_def);
    if (!m)
        return NULL;
    py_BuilderError = PyErr_NewException("tritium.BuilderError", PyExc_ValueError, NULL);
    if (!py_BuilderError || PyModule_AddObjectRef(m, "BuilderError", py_BuilderError) < 0)
        goto fail;
    if (py_builder_init_type(m) < 0 || py_compile_init(m) < 0 || py_launch_init(m) < 0 || py_proton_init(m) < 0 ||
        py_scope_init(m) < 0 || py_desc_init(m) < 0)
        goto fail;
    return m;
fail:
    Py_DECREF(m);
    return NULL;
}
