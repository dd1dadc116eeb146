/*
 * The float32 filter's scan in C (SPEC §5.3; docs/performance.md): the compiled twin of
 * lam_ref.prefilter.filter_pairs' numpy path.
 *
 * scan(g, n_rows, n_cols, thr[, threads]) -> (rows, cols): every (i, j) with g[i, j] >= thr[i], row-major
 * (rows ascending, columns ascending within a row), as two bytes objects of int64. g is a
 * C-contiguous float32 (n_rows, n_cols) buffer, thr a float32 (n_rows,) buffer. One pass over g
 * decides which rows hold a pair (a comparison OR-reduced along the row, which the compiler
 * vectorises: no arithmetic on the values, so no rounding and no FMA question); only those rows
 * are read again, from cache, to collect their columns. threads=2 scans the two halves of the
 * rows on two threads (the pass is memory-bound; two cores draw more bandwidth than one) and
 * returns the same pairs in the same order. The numpy path takes a row maximum and
 * then scans the rows whose maximum clears the threshold: the same pairs in the same order
 * (tests/test_prefilter.py). The GIL is released during the scan.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#ifndef _WIN32
#include <pthread.h>
#endif

typedef struct {
    int64_t *rows, *cols;
    size_t n, cap;
} pairs_t;

static int push(pairs_t *p, int64_t i, int64_t j) {
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 1024;
        int64_t *r = (int64_t *)realloc(p->rows, cap * sizeof(int64_t));
        if (!r) return -1;
        p->rows = r;
        int64_t *c = (int64_t *)realloc(p->cols, cap * sizeof(int64_t));
        if (!c) return -1;
        p->cols = c;
        p->cap = cap;
    }
    p->rows[p->n] = i;
    p->cols[p->n] = j;
    p->n++;
    return 0;
}

static int row_has(const float *r, Py_ssize_t nc, float t) {
    int hit = 0;
    for (Py_ssize_t j = 0; j < nc; j++) hit |= (r[j] >= t);
    return hit;
}

static int scan_rows(const float *g, Py_ssize_t i0, Py_ssize_t i1, Py_ssize_t nc, const float *thr, pairs_t *p) {
    for (Py_ssize_t i = i0; i < i1; i++) {
        const float *r = g + (size_t)i * (size_t)nc;
        const float t = thr[i];
        if (!row_has(r, nc, t)) continue;
        for (Py_ssize_t j = 0; j < nc; j++)
            if (r[j] >= t && push(p, (int64_t)i, (int64_t)j) < 0) return -1;
    }
    return 0;
}

typedef struct {
    const float *g, *thr;
    Py_ssize_t i0, i1, nc;
    pairs_t p;
    int rc;
} job_t;

static void *run_job(void *a) {
    job_t *j = (job_t *)a;
    j->rc = scan_rows(j->g, j->i0, j->i1, j->nc, j->thr, &j->p);
    return NULL;
}

/* Rows split in two halves when threads == 2 (the second half on a new thread, the first on this
 * one), the second half's pairs appended after the first's: the same output as one thread. */
static int scan_body(const float *g, Py_ssize_t nr, Py_ssize_t nc, const float *thr, int threads, pairs_t *p) {
#ifndef _WIN32
    if (threads >= 2 && nr >= 2) {
        job_t b = {g, thr, nr / 2, nr, nc, {NULL, NULL, 0, 0}, 0};
        pthread_t t;
        if (pthread_create(&t, NULL, run_job, &b) == 0) {
            int rc = scan_rows(g, 0, nr / 2, nc, thr, p);
            pthread_join(t, NULL);
            for (size_t k = 0; rc == 0 && b.rc == 0 && k < b.p.n; k++) rc = push(p, b.p.rows[k], b.p.cols[k]);
            free(b.p.rows);
            free(b.p.cols);
            return rc < 0 || b.rc < 0 ? -1 : 0;
        }
    }
#endif
    return scan_rows(g, 0, nr, nc, thr, p);
}

static PyObject *scan(PyObject *self, PyObject *args) {
    PyObject *go, *to;
    Py_ssize_t nr, nc;
    int threads = 1;
    if (!PyArg_ParseTuple(args, "OnnO|i", &go, &nr, &nc, &to, &threads)) return NULL;
    if (nr < 0 || nc < 0) {
        PyErr_Format(PyExc_ValueError, "scan: n_rows and n_cols must be >= 0, got %zd and %zd", nr, nc);
        return NULL;
    }
    Py_buffer gb, tb;
    if (PyObject_GetBuffer(go, &gb, PyBUF_C_CONTIGUOUS) < 0) return NULL;
    if (PyObject_GetBuffer(to, &tb, PyBUF_C_CONTIGUOUS) < 0) {
        PyBuffer_Release(&gb);
        return NULL;
    }
    if (gb.len != nr * nc * (Py_ssize_t)sizeof(float) || tb.len != nr * (Py_ssize_t)sizeof(float)) {
        PyErr_Format(PyExc_ValueError, "scan: g holds %zd bytes and thr %zd, expected %zd and %zd (float32)",
                     gb.len, tb.len, nr * nc * (Py_ssize_t)sizeof(float), nr * (Py_ssize_t)sizeof(float));
        PyBuffer_Release(&gb);
        PyBuffer_Release(&tb);
        return NULL;
    }
    pairs_t p = {NULL, NULL, 0, 0};
    int rc;
    Py_BEGIN_ALLOW_THREADS;
    rc = scan_body((const float *)gb.buf, nr, nc, (const float *)tb.buf, threads, &p);
    Py_END_ALLOW_THREADS;
    PyBuffer_Release(&gb);
    PyBuffer_Release(&tb);
    PyObject *out = NULL;
    if (rc < 0) {
        PyErr_NoMemory();
    } else {
        PyObject *r = PyBytes_FromStringAndSize((const char *)p.rows, (Py_ssize_t)(p.n * sizeof(int64_t)));
        PyObject *c = PyBytes_FromStringAndSize((const char *)p.cols, (Py_ssize_t)(p.n * sizeof(int64_t)));
        if (r && c) out = PyTuple_Pack(2, r, c);
        Py_XDECREF(r);
        Py_XDECREF(c);
    }
    free(p.rows);
    free(p.cols);
    return out;
}

static PyMethodDef methods[] = {
    {"scan", scan, METH_VARARGS, "Pairs (i, j) with g[i, j] >= thr[i], row-major, as two int64 bytes objects."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_filter", "Compiled float32 filter scan (SPEC §2).", -1,
                                    methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__filter(void) { return PyModule_Create(&module); }
