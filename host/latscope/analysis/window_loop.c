/* Compiled passes of latscope.analysis.batch (bench/README.md, analysis_speed.py): the
 * per-marker and per-pair steps that were several numpy passes each, in one pass.
 *
 * What a marker point, a window or a rule means stays in batch.py: it passes the points to
 * select, the windows' segments and the loss spans in; this file only walks sorted arrays.
 * Plain CPython C API and the buffer protocol (numpy arrays are buffers), as
 * latscope/link/record_loop.c: no numpy headers needed to build it. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "_pybuffers.h"

/* numpy.searchsorted(sorted[0:n], key, side="right") searched from ``from`` on (the caller
 * knows no element before it is above ``key``). */
static Py_ssize_t right_of(const int64_t *sorted, Py_ssize_t n, Py_ssize_t from, int64_t key) {
    Py_ssize_t low = from, high = n;
    while (low < high) {
        Py_ssize_t mid = low + (high - low) / 2;
        if (sorted[mid] <= key)
            low = mid + 1;
        else
            high = mid;
    }
    return low;
}

/* A pointer into a sorted array that follows keys: numpy.searchsorted(..., side="right")
 * of each key, searching from the last answer when keys do not decrease (any order works). */
typedef struct {
    const int64_t *sorted;
    Py_ssize_t n, at;
    int64_t last;
    int started;
} Cursor;

static Py_ssize_t cursor_right(Cursor *c, int64_t key) {
    Py_ssize_t from = (c->started && key >= c->last) ? c->at : 0;
    /* Gallop from the last answer: keys usually move a little. */
    Py_ssize_t step = 1, high = from;
    while (high < c->n && c->sorted[high] <= key) {
        from = high + 1;
        high += step;
        step <<= 1;
    }
    c->at = right_of(c->sorted, high < c->n ? high : c->n, from, key);
    c->last = key;
    c->started = 1;
    return c->at;
}

/* Whether the pair (a, end) overlaps one of the sorted, disjoint spans (low, high):
 * spans.overlaps, the first span that ends after a starts before end. */
static int overlapping(Cursor *high, const int64_t *low, int64_t a, int64_t end) {
    Py_ssize_t first = cursor_right(high, a);
    return first < high->n && low[first] < end;
}

/* pair(a, a_group, b, b_group, loss_low, loss_high, hole_low, hole_high,
 *      keep, lossy, by_hole, lengths)
 *
 * batch.pair in one pass (its docstring says what the outputs mean): a and b (int64 stamps,
 * b sorted) with their groups (int64); the loss spans and the hole spans (int64 low, high:
 * sorted, disjoint). Outputs over a: keep, lossy, by_hole (uint8 0/1) and lengths (int64:
 * the first b after each a, or 0 when there is none in its group, minus a; 0 without b). */
static PyObject *pair(PyObject *self, PyObject *args) {
    (void)self;
    enum { A, AG, B, BG, LL, LH, HL, HH, KEEP, LOSSY, HOLE, LENGTH, NBUF };
    Buf b[NBUF];
    memset(b, 0, sizeof b);
    PyObject *result = NULL;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*y*w*w*w*w*", &b[A].b, &b[AG].b, &b[B].b,
                          &b[BG].b, &b[LL].b, &b[LH].b, &b[HL].b, &b[HH].b, &b[KEEP].b,
                          &b[LOSSY].b, &b[HOLE].b, &b[LENGTH].b))
        return NULL;
    for (int i = 0; i < NBUF; i++)
        b[i].held = 1;
    const Py_ssize_t na = b[A].b.len / 8, nb = b[B].b.len / 8;
    const Py_ssize_t nl = b[LH].b.len / 8, nh = b[HH].b.len / 8;
    if (!(need(&b[AG], na * 8, "a_group") && need(&b[BG], nb * 8, "b_group") &&
          need(&b[LL], nl * 8, "loss_low") && need(&b[HL], nh * 8, "hole_low") &&
          need(&b[KEEP], na, "keep") && need(&b[LOSSY], na, "lossy") &&
          need(&b[HOLE], na, "by_hole") && need(&b[LENGTH], na * 8, "lengths")))
        goto done;
    const int64_t *a = b[A].b.buf, *ag = b[AG].b.buf, *bs = b[B].b.buf, *bg = b[BG].b.buf;
    uint8_t *keep = b[KEEP].b.buf, *lossy = b[LOSSY].b.buf, *hole = b[HOLE].b.buf;
    int64_t *length = b[LENGTH].b.buf;
    Cursor ends = {bs, nb, 0, 0, 0};
    Cursor loss = {b[LH].b.buf, nl, 0, 0, 0}, holes = {b[HH].b.buf, nh, 0, 0, 0};
    const int64_t *loss_low = b[LL].b.buf, *hole_low = b[HL].b.buf;
    for (Py_ssize_t i = 0; i < na; i++) {
        int has_end = 0;
        int64_t end = 0;
        if (nb) {
            Py_ssize_t at = cursor_right(&ends, a[i]);
            Py_ssize_t clipped = at < nb ? at : nb - 1;
            has_end = at < nb && bg[clipped] == ag[i];
            end = has_end ? bs[clipped] : 0;
        }
        /* An A in the very cycle of B does not steal B (ties are impossible within one
         * source). */
        int paired = has_end && (i + 1 >= na || ag[i + 1] != ag[i] || end <= a[i + 1]);
        int lost = paired && overlapping(&loss, loss_low, a[i], end);
        keep[i] = (uint8_t)(paired && !lost);
        lossy[i] = (uint8_t)lost;
        hole[i] = (uint8_t)(lost && overlapping(&holes, hole_low, a[i], end));
        length[i] = nb ? end - a[i] : 0; /* (no b at all: 0, as before) */
    }
    result = Py_None;
    Py_INCREF(result);
done:
    release(b, NBUF);
    return result;
}

/* route(points, stamps, epochs, seg_at, seg_window, seg_epoch, selected, as_start,
 *       out_stamp, out_window) -> events per selection (a tuple)
 *
 * The start and end events of one test's markers in a batch (batch._test_markers): markers
 * with their points (int32), stamps (int64) and epochs (int64; empty: no hole among them or
 * before them since the test's last marker, every start event counts); the windows'
 * segments: from marker seg_at[k] (int64, ascending) on, the markers are in window
 * seg_window[k + 1] of epoch seg_epoch[k + 1] (int64; index 0: the window carried in from
 * before the batch; window -1: none). Selections (int64 selected[j], the point; uint8
 * as_start[j]): the markers of that point in a window, as start events only in their window's
 * epoch. Outputs (int64, a row per selection as long as the markers; numpy's pages that
 * are never written take no memory): the selected events' stamps and windows in marker
 * order, from the start of their row. Returns how many events each selection has. */
static PyObject *route(PyObject *self, PyObject *args) {
    (void)self;
    enum { POINTS, STAMPS, EPOCHS, SEG_AT, SEG_WIN, SEG_EPOCH, SEL, AS_START, O_STAMP, O_WIN,
           NBUF };
    Buf b[NBUF];
    memset(b, 0, sizeof b);
    PyObject *result = NULL;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*y*w*w*", &b[POINTS].b, &b[STAMPS].b,
                          &b[EPOCHS].b, &b[SEG_AT].b, &b[SEG_WIN].b, &b[SEG_EPOCH].b,
                          &b[SEL].b, &b[AS_START].b, &b[O_STAMP].b, &b[O_WIN].b))
        return NULL;
    for (int i = 0; i < NBUF; i++)
        b[i].held = 1;
    enum { MAX_SEL = 8 };
    const Py_ssize_t n = b[POINTS].b.len / 4, segs = b[SEG_AT].b.len / 8;
    const Py_ssize_t sel = b[SEL].b.len / 8;
    const int epochs_given = b[EPOCHS].b.len > 0;
    if (sel > MAX_SEL) {
        PyErr_SetString(PyExc_ValueError, "route: too many selections");
        goto done;
    }
    if (!(need(&b[STAMPS], n * 8, "stamps") && (!epochs_given || need(&b[EPOCHS], n * 8, "epochs")) &&
          need(&b[SEG_WIN], (segs + 1) * 8, "seg_window") &&
          need(&b[SEG_EPOCH], (segs + 1) * 8, "seg_epoch") && need(&b[AS_START], sel, "as_start") &&
          need(&b[O_STAMP], sel * n * 8, "out_stamp") && need(&b[O_WIN], sel * n * 8, "out_window")))
        goto done;
    const int32_t *points = b[POINTS].b.buf;
    const int64_t *stamps = b[STAMPS].b.buf, *epochs = b[EPOCHS].b.buf;
    const int64_t *seg_at = b[SEG_AT].b.buf, *seg_win = b[SEG_WIN].b.buf,
                  *seg_epoch = b[SEG_EPOCH].b.buf, *selected = b[SEL].b.buf;
    const uint8_t *as_start = b[AS_START].b.buf;
    int64_t *o_stamp = b[O_STAMP].b.buf, *o_win = b[O_WIN].b.buf;
    /* Which selections each point value is in (a bit each): one look-up per marker. */
    uint8_t of_point[256] = {0};
    for (Py_ssize_t j = 0; j < sel; j++) {
        if (selected[j] < 0 || selected[j] > 255) {
            PyErr_SetString(PyExc_ValueError, "route: a point out of range");
            goto done;
        }
        of_point[selected[j]] |= (uint8_t)(1u << j);
    }
    uint8_t start_bits = 0;
    for (Py_ssize_t j = 0; j < sel; j++)
        start_bits |= (uint8_t)((as_start[j] ? 1u : 0u) << j);
    Py_ssize_t count[MAX_SEL] = {0};
    Py_ssize_t seg = 0; /* segments that begin at or before the marker */
    for (Py_ssize_t i = 0; i < n; i++) {
        while (seg < segs && seg_at[seg] <= i)
            seg++;
        unsigned bits = (uint32_t)points[i] < 256 ? of_point[points[i]] : 0;
        const int64_t window = seg_win[seg];
        if (!bits || window < 0)
            continue;
        if (epochs_given && epochs[i] != seg_epoch[seg])
            bits &= (unsigned)~start_bits; /* a start event only in its window's epoch */
        for (Py_ssize_t j = 0; bits; j++, bits >>= 1) {
            if (bits & 1) {
                o_stamp[j * n + count[j]] = stamps[i];
                o_win[j * n + count[j]++] = window;
            }
        }
    }
    result = PyTuple_New(sel);
    if (result == NULL)
        goto done;
    for (Py_ssize_t j = 0; j < sel; j++) {
        PyObject *item = PyLong_FromSsize_t(count[j]);
        if (item == NULL) {
            Py_CLEAR(result);
            goto done;
        }
        PyTuple_SET_ITEM(result, j, item);
    }
done:
    release(b, NBUF);
    return result;
}

/* group(values, stamps, epochs, value_mask, test_shift, test_bits, point_shift, point_bits,
 *       arg_bits, counts, order, out_stamp, out_point, out_arg, out_epoch)
 *
 * A batch's markers (int64 values, stamps and epochs; epochs empty: not gathered) decoded
 * (latscope_defs.markers.decode: the fields' shifts and widths passed in, of the value's
 * bits in value_mask) and grouped by test, each test's in their order (numpy's stable argsort of
 * the tests): counts (int64, 2**test_bits: markers per test), order (int64: the markers'
 * indices, grouped), and their stamps, points, arguments (int32) and epochs in that order. */
static PyObject *group(PyObject *self, PyObject *args) {
    (void)self;
    enum { VALUES, STAMPS, EPOCHS, COUNTS, ORDER, O_STAMP, O_POINT, O_ARG, O_EPOCH, NBUF };
    Buf b[NBUF];
    memset(b, 0, sizeof b);
    PyObject *result = NULL;
    unsigned long long value_mask;
    int test_shift, test_bits, point_shift, point_bits, arg_bits;
    if (!PyArg_ParseTuple(args, "y*y*y*Kiiiiiw*w*w*w*w*w*", &b[VALUES].b, &b[STAMPS].b,
                          &b[EPOCHS].b, &value_mask, &test_shift, &test_bits, &point_shift, &point_bits,
                          &arg_bits, &b[COUNTS].b, &b[ORDER].b, &b[O_STAMP].b, &b[O_POINT].b,
                          &b[O_ARG].b, &b[O_EPOCH].b))
        return NULL;
    for (int i = 0; i < NBUF; i++)
        b[i].held = 1;
    const Py_ssize_t n = b[VALUES].b.len / 8, tests = (Py_ssize_t)1 << test_bits;
    const int epochs_given = b[EPOCHS].b.len > 0;
    if (test_bits < 0 || test_bits > 8 || point_bits < 0 || point_bits > 16 || arg_bits < 0 ||
        arg_bits > 16 || test_shift < 0 || test_shift > 16 || point_shift < 0 || point_shift > 16) {
        PyErr_SetString(PyExc_ValueError, "group: a field out of range");
        goto done;
    }
    if (!(need(&b[STAMPS], n * 8, "stamps") && (!epochs_given || need(&b[EPOCHS], n * 8, "epochs")) &&
          need(&b[COUNTS], tests * 8, "counts") && need(&b[ORDER], n * 8, "order") &&
          need(&b[O_STAMP], n * 8, "out_stamp") && need(&b[O_POINT], n * 4, "out_point") &&
          need(&b[O_ARG], n * 4, "out_arg") && (!epochs_given || need(&b[O_EPOCH], n * 8, "out_epoch"))))
        goto done;
    const int64_t *values = b[VALUES].b.buf, *stamps = b[STAMPS].b.buf, *epochs = b[EPOCHS].b.buf;
    int64_t *counts = b[COUNTS].b.buf, *order = b[ORDER].b.buf, *o_stamp = b[O_STAMP].b.buf,
            *o_epoch = b[O_EPOCH].b.buf;
    int32_t *o_point = b[O_POINT].b.buf, *o_arg = b[O_ARG].b.buf;
    const uint64_t test_mask = ((uint64_t)1 << test_bits) - 1,
                   point_mask = ((uint64_t)1 << point_bits) - 1,
                   arg_mask = ((uint64_t)1 << arg_bits) - 1;
    for (Py_ssize_t t = 0; t < tests; t++)
        counts[t] = 0;
    for (Py_ssize_t i = 0; i < n; i++)
        counts[(((uint64_t)values[i] & value_mask) >> test_shift) & test_mask]++;
    Py_ssize_t at[256], total = 0;
    for (Py_ssize_t t = 0; t < tests; t++) {
        at[t] = total;
        total += counts[t];
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        const uint64_t value = (uint64_t)values[i] & value_mask;
        const Py_ssize_t k = at[(value >> test_shift) & test_mask]++;
        order[k] = i;
        o_stamp[k] = stamps[i];
        o_point[k] = (int32_t)((value >> point_shift) & point_mask);
        o_arg[k] = (int32_t)(value & arg_mask);
        if (epochs_given)
            o_epoch[k] = epochs[i];
    }
    result = Py_None;
    Py_INCREF(result);
done:
    release(b, NBUF);
    return result;
}

static PyMethodDef methods[] = {
    {"pair", pair, METH_VARARGS, "batch.pair in one pass (see the source)."},
    {"route", route, METH_VARARGS, "One test's start and end events by window (see the source)."},
    {"group", group, METH_VARARGS, "A batch's markers decoded and grouped by test (see the source)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "window_loop", "Compiled passes of latscope.analysis.batch.", -1,
    methods,
};

PyMODINIT_FUNC PyInit_window_loop(void) { return PyModule_Create(&module); }
