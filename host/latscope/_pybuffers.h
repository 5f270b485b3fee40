/* The argument buffers of the compiled loops (latscope/link/record_loop.c,
 * latscope/analysis/window_loop.c): each function takes its arrays through the buffer protocol
 * (PyArg_ParseTuple's y* and w*) into a Buf array, checks their sizes with need() before it
 * reads or writes any, and gives every buffer it holds back with release() on every way out.
 * A header of static inline functions: each extension is its own shared library, built from
 * one C file (setup.py lists this header in both Extensions' depends, so the sdist has it). */

#ifndef LATSCOPE_PYBUFFERS_H
#define LATSCOPE_PYBUFFERS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

typedef struct {
    Py_buffer b;
    int held; /* 1 once PyArg_ParseTuple has filled b: release() gives it back */
} Buf;

/* 1 when ``buf`` has at least ``bytes`` bytes; else 0 with a ValueError naming ``what``. */
static inline int need(Buf *buf, Py_ssize_t bytes, const char *what) {
    if (buf->b.len < bytes) {
        PyErr_Format(PyExc_ValueError, "%s: %zd bytes, needs %zd", what, buf->b.len, bytes);
        return 0;
    }
    return 1;
}

/* The held ones of b[0:n] given back to their owners. */
static inline void release(Buf *b, int n) {
    for (int i = 0; i < n; i++)
        if (b[i].held)
            PyBuffer_Release(&b[i].b);
}

#endif
