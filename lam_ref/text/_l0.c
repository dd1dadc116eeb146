/*
 * L0: exact line deduplication in one pass over a trajectory (SPEC §7; paper §2.2 "L0", App. B.1).
 *
 * The compiled twin of lam_ref.text.lines._dedup_records_py, written as the line-by-line
 * definition (lines.reference_dedup) run in C: split each record on '\n', skip protected lines
 * (blank by str.isspace, or starting with the stub prefix), hash the rest with XXH3-64 seed 0
 * (vendored xxhash.h), drop a line iff its hash is in the trajectory's seen-set, register only
 * kept lines, and replace each maximal run of dropped lines of one record by one stub line.
 * Hypothesis tests pin this module equal to the definition and to the numpy implementation.
 *
 * Net-positive stubs (SPEC §7.3, optional arguments): a run is replaced by its stub only when the
 * stub's UTF-8 bytes are fewer than the run's (its lines joined by '\n') and, when a token rule is
 * given, the rule says the stub has fewer tokens; otherwise the run's lines stay verbatim as output
 * lines (still repeats: nothing is registered).
 *
 * Entry point: dedup(texts, rids, record_type, pieces, prefix, error_type[, net_positive[, fewer_tokens]])
 *   -> list | None
 *   texts        list of str (the residual records, in arrival order)
 *   rids         list of int, the trajectory index of each record (stubs name them)
 *   record_type  lam_ref.text.lines.L0Record (a 4-field tuple subclass), built here directly
 *   pieces       4 bytes: the L0 stub template split around its three integers
 *   prefix       bytes: the stub prefix (protected lines start with it)
 *   error_type   the exception raised for a non-str text (LamValueError)
 *   net_positive bool: the net-positive rule (default false: the paper's rule, every run a stub)
 *   fewer_tokens None, or a callable (stub: bytes, run: bytes) -> bool, asked only for runs whose
 *                stub is shorter in bytes: true when the stub has fewer tokens than the run
 * Returns None when the text cannot be handled here (a lone surrogate has no UTF-8 form; a record
 * id outside int64): the caller then uses the Python implementation, which handles both.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define XXH_INLINE_ALL
#include "xxhash.h"

/* ---- seen-set: open addressing on the 64-bit hash, value = (record, output line) ---- */

typedef struct {
    uint64_t h;
    Py_ssize_t rec1; /* record + 1; 0 marks an empty slot */
    Py_ssize_t pos;  /* output line index of the first copy within its record */
} entry;

typedef struct {
    entry *e;
    size_t mask;
    size_t used;
} table;

static int table_init(table *t, size_t cap) {
    t->e = (entry *)PyMem_Calloc(cap, sizeof(entry));
    if (!t->e) {
        PyErr_NoMemory();
        return -1;
    }
    t->mask = cap - 1;
    t->used = 0;
    return 0;
}

static int table_grow(table *t) {
    size_t cap = (t->mask + 1) * 2;
    entry *ne = (entry *)PyMem_Calloc(cap, sizeof(entry));
    if (!ne) {
        PyErr_NoMemory();
        return -1;
    }
    for (size_t i = 0; i <= t->mask; i++) {
        if (t->e[i].rec1) {
            size_t j = (size_t)t->e[i].h & (cap - 1);
            while (ne[j].rec1) j = (j + 1) & (cap - 1);
            ne[j] = t->e[i];
        }
    }
    PyMem_Free(t->e);
    t->e = ne;
    t->mask = cap - 1;
    return 0;
}

/* The slot holding h, or the empty slot where h would go. */
static entry *table_slot(table *t, uint64_t h) {
    size_t i = (size_t)h & t->mask;
    while (t->e[i].rec1 && t->e[i].h != h) i = (i + 1) & t->mask;
    return &t->e[i];
}

/* ---- growable output buffer ---- */

typedef struct {
    char *p;
    size_t n, cap;
} buf;

static int buf_put(buf *b, const char *s, size_t n) {
    if (n == 0) return 0; /* memcpy with a NULL buffer is undefined even for 0 bytes */
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n) cap *= 2;
        char *np = (char *)PyMem_Realloc(b->p, cap);
        if (!np) {
            PyErr_NoMemory();
            return -1;
        }
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    return 0;
}

static int buf_put_int(buf *b, long long v) {
    char tmp[24];
    int k = 0;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do {
        tmp[23 - k++] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u);
    if (v < 0) tmp[23 - k++] = '-';
    return buf_put(b, tmp + 24 - k, (size_t)k);
}

/* ---- protection: blank (str.isspace semantics) or a stub line ---- */

static int is_blank(const unsigned char *p, size_t n) {
    size_t i = 0;
    while (i < n) {
        unsigned char c = p[i];
        if (c < 0x80) {
            /* ASCII whitespace by str.isspace: \t \n \v \f \r, 0x1c-0x1f, space */
            if (c == ' ' || (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x1f)) {
                i++;
                continue;
            }
            return 0;
        }
        Py_UCS4 cp;
        size_t k;
        if ((c & 0xE0) == 0xC0) {
            cp = c & 0x1F;
            k = 1;
        } else if ((c & 0xF0) == 0xE0) {
            cp = c & 0x0F;
            k = 2;
        } else if ((c & 0xF8) == 0xF0) {
            cp = c & 0x07;
            k = 3;
        } else {
            return 0; /* not reached for the UTF-8 of a str */
        }
        if (n - i <= k) return 0;
        for (size_t j = 1; j <= k; j++) cp = (cp << 6) | (p[i + j] & 0x3F);
        if (!Py_UNICODE_ISSPACE(cp)) return 0;
        i += k + 1;
    }
    return 1;
}

/* ---- one trajectory ---- */

typedef struct {
    const char *s[4];
    size_t n[4];
} stub_template;

/* Append the stub text for (count, record, line) to out, without its '\n'. */
static int put_stub(buf *out, const stub_template *tpl, Py_ssize_t count, long long record, Py_ssize_t line) {
    if (buf_put(out, tpl->s[0], tpl->n[0]) < 0 || buf_put_int(out, count) < 0 ||
        buf_put(out, tpl->s[1], tpl->n[1]) < 0 || buf_put_int(out, record) < 0 ||
        buf_put(out, tpl->s[2], tpl->n[2]) < 0 || buf_put_int(out, line) < 0)
        return -1;
    return buf_put(out, tpl->s[3], tpl->n[3]) < 0 ? -1 : 0;
}

/* Append one stub line (and its '\n') to out; record its fields (count, record, line) and its
 * patch (byte start, byte end, the dropped lines' original bytes). */
static int emit_stub(buf *out, const stub_template *tpl, Py_ssize_t count, long long record, Py_ssize_t line,
                     const char *orig, size_t orig_len, PyObject *fields, PyObject *patches) {
    size_t st = out->n;
    if (put_stub(out, tpl, count, record, line) < 0) return -1;
    PyObject *f = Py_BuildValue("(nLn)", count, record, line);
    PyObject *pt = Py_BuildValue("(nny#)", (Py_ssize_t)st, (Py_ssize_t)out->n, orig, (Py_ssize_t)orig_len);
    int bad = !f || !pt || PyList_Append(fields, f) < 0 || PyList_Append(patches, pt) < 0;
    Py_XDECREF(f);
    Py_XDECREF(pt);
    return (bad || buf_put(out, "\n", 1) < 0) ? -1 : 0;
}

static size_t int_len(long long v) {
    size_t k = v < 0 ? 2 : 1;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    while (u >= 10) {
        u /= 10;
        k++;
    }
    return k;
}

/* The byte length of the stub line for (count, record, line), without its '\n'. */
static size_t stub_len(const stub_template *tpl, Py_ssize_t count, long long record, Py_ssize_t line) {
    return tpl->n[0] + int_len(count) + tpl->n[1] + int_len(record) + tpl->n[2] + int_len(line) + tpl->n[3];
}

/* End of a run: one stub line, or (net-positive: the stub not shorter in bytes, or fewer_tokens
 * given and false) the run's lines verbatim. Returns the number of output lines it took (1 or
 * count), or -1 on error. */
static Py_ssize_t end_run(buf *out, const stub_template *tpl, int net_positive, PyObject *fewer_tokens,
                          Py_ssize_t count, long long record, Py_ssize_t line, const char *orig, size_t orig_len,
                          PyObject *fields, PyObject *patches, Py_ssize_t *ndropped) {
    int keep = net_positive && stub_len(tpl, count, record, line) >= orig_len;
    if (net_positive && !keep && fewer_tokens != Py_None) {
        /* render the stub where it would go, ask the token rule, take it back if the run stays */
        size_t st = out->n;
        if (put_stub(out, tpl, count, record, line) < 0) return -1;
        PyObject *verdict = PyObject_CallFunction(fewer_tokens, "y#y#", out->p + st, (Py_ssize_t)(out->n - st), orig,
                                                  (Py_ssize_t)orig_len);
        out->n = st;
        if (!verdict) return -1;
        int fewer = PyObject_IsTrue(verdict);
        Py_DECREF(verdict);
        if (fewer < 0) return -1;
        keep = !fewer;
    }
    if (keep) {
        if (buf_put(out, orig, orig_len) < 0 || buf_put(out, "\n", 1) < 0) return -1;
        return count;
    }
    if (emit_stub(out, tpl, count, record, line, orig, orig_len, fields, patches) < 0) return -1;
    *ndropped += count;
    return 1;
}

static PyObject *make_record(PyTypeObject *tp, PyObject *text, PyObject *fields, PyObject *dropped,
                             PyObject *patches) {
    /* what tuple.__new__ does for a tuple subclass: allocate, then fill (steals the references) */
    PyObject *r = tp->tp_alloc(tp, 4);
    if (!r) {
        Py_DECREF(text);
        Py_DECREF(fields);
        Py_DECREF(dropped);
        Py_DECREF(patches);
        return NULL;
    }
    PyTuple_SET_ITEM(r, 0, text);
    PyTuple_SET_ITEM(r, 1, fields);
    PyTuple_SET_ITEM(r, 2, dropped);
    PyTuple_SET_ITEM(r, 3, patches);
    return r;
}

static PyObject *dedup(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *texts, *rids, *pieces, *error_type;
    PyTypeObject *record_type;
    Py_buffer prefix;
    PyObject *fewer_tokens = Py_None;
    int net_positive = 0;
    if (!PyArg_ParseTuple(args, "O!O!O!O!y*O|pO", &PyList_Type, &texts, &PyList_Type, &rids, &PyType_Type,
                          &record_type, &PyTuple_Type, &pieces, &prefix, &error_type, &net_positive, &fewer_tokens))
        return NULL;
    if (fewer_tokens != Py_None && !PyCallable_Check(fewer_tokens)) {
        PyBuffer_Release(&prefix);
        PyErr_SetString(PyExc_TypeError, "fewer_tokens must be None or callable");
        return NULL;
    }
    PyObject *result = NULL, *empty = NULL, *zero = NULL;
    long long *rid = NULL;
    table seen = {NULL, 0, 0};
    buf out = {NULL, 0, 0};
    stub_template tpl;
    const Py_ssize_t nrec = PyList_GET_SIZE(texts);
    const char *pre = (const char *)prefix.buf;
    const size_t plen = (size_t)prefix.len;

    if (PyList_GET_SIZE(rids) != nrec) {
        PyErr_Format(PyExc_ValueError, "rids has %zd entries for %zd texts", PyList_GET_SIZE(rids), nrec);
        goto done;
    }
    if (PyTuple_GET_SIZE(pieces) != 4) {
        PyErr_SetString(PyExc_ValueError, "pieces must be 4 bytes objects");
        goto done;
    }
    for (int k = 0; k < 4; k++) {
        PyObject *pk = PyTuple_GET_ITEM(pieces, k);
        if (!PyBytes_Check(pk)) {
            PyErr_SetString(PyExc_TypeError, "pieces must be 4 bytes objects");
            goto done;
        }
        tpl.s[k] = PyBytes_AS_STRING(pk);
        tpl.n[k] = (size_t)PyBytes_GET_SIZE(pk);
    }
    for (Py_ssize_t r = 0; r < nrec; r++) {
        PyObject *t = PyList_GET_ITEM(texts, r);
        if (!PyUnicode_Check(t)) {
            PyErr_Format(error_type, "texts[%zd] must be str, got %s", r, Py_TYPE(t)->tp_name);
            goto done;
        }
    }
    rid = (long long *)PyMem_Malloc(sizeof(long long) * (size_t)(nrec ? nrec : 1));
    if (!rid) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t r = 0; r < nrec; r++) {
        int overflow = 0;
        rid[r] = PyLong_AsLongLongAndOverflow(PyList_GET_ITEM(rids, r), &overflow);
        if (overflow || (rid[r] == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            result = Py_None; /* the Python implementation formats any int */
            Py_INCREF(result);
            goto done;
        }
    }
    if (table_init(&seen, 1024) < 0) goto done;
    empty = PyTuple_New(0);
    zero = PyLong_FromLong(0);
    result = PyList_New(nrec);
    if (!empty || !zero || !result) goto fail;

    for (Py_ssize_t r = 0; r < nrec; r++) {
        PyObject *text = PyList_GET_ITEM(texts, r);
        Py_ssize_t len;
        const char *s = PyUnicode_AsUTF8AndSize(text, &len);
        if (!s) {
            if (PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) { /* lone surrogate */
                PyErr_Clear();
                Py_DECREF(result);
                result = Py_None;
                Py_INCREF(result);
                goto done;
            }
            goto fail;
        }
        const char *end = s + len, *p = s;
        Py_ssize_t outcount = 0; /* output lines so far in this record */
        Py_ssize_t run = 0, run_rec = 0, run_pos = 0, ndropped = 0;
        size_t run_start = 0, run_end = 0;
        int changed = 0;
        PyObject *fields = NULL, *patches = NULL;
        out.n = 0;
        for (;;) {
            const char *nl = (const char *)memchr(p, '\n', (size_t)(end - p));
            const char *le = nl ? nl : end;
            const size_t ll = (size_t)(le - p);
            entry *slot = NULL;
            int prot = (ll >= plen && memcmp(p, pre, plen) == 0) || is_blank((const unsigned char *)p, ll);
            if (!prot) {
                if ((seen.used + 1) * 2 > seen.mask + 1 && table_grow(&seen) < 0) goto fail_rec;
                uint64_t h = XXH3_64bits(p, ll);
                slot = table_slot(&seen, h);
                if (slot->rec1) { /* a repeat: drop it */
                    if (run == 0) {
                        run_rec = slot->rec1 - 1;
                        run_pos = slot->pos;
                        run_start = (size_t)(p - s);
                        if (!changed) { /* output so far = the input's lines before this one */
                            changed = 1;
                            fields = PyList_New(0);
                            patches = PyList_New(0);
                            if (!fields || !patches || buf_put(&out, s, run_start) < 0) goto fail_rec;
                        }
                    }
                    run++;
                    run_end = (size_t)(le - s);
                    goto next;
                }
                slot->h = h; /* registered below, after any pending stub takes its output line */
            }
            if (run) { /* the run that just ended becomes one stub line (or stays, net-positive) */
                Py_ssize_t took = end_run(&out, &tpl, net_positive, fewer_tokens, run, rid[run_rec], run_pos,
                                          s + run_start, run_end - run_start, fields, patches, &ndropped);
                if (took < 0) goto fail_rec;
                outcount += took;
                run = 0;
            }
            if (slot) {
                slot->rec1 = r + 1;
                slot->pos = outcount;
                seen.used++;
            }
            if (changed && (buf_put(&out, p, ll) < 0 || buf_put(&out, "\n", 1) < 0)) goto fail_rec;
            outcount++;
        next:
            if (!nl) break;
            p = nl + 1;
        }
        if (run) { /* a run at the end of the record */
            if (end_run(&out, &tpl, net_positive, fewer_tokens, run, rid[run_rec], run_pos, s + run_start,
                        run_end - run_start, fields, patches, &ndropped) < 0)
                goto fail_rec;
        }
        PyObject *rec;
        if (changed) {
            /* every emitted line ends in '\n'; the record's text is without the last one */
            PyObject *t2 = PyUnicode_DecodeUTF8(out.p, (Py_ssize_t)out.n - 1, NULL);
            PyObject *ft = PyList_AsTuple(fields);
            PyObject *pt = PyList_AsTuple(patches);
            PyObject *nd = PyLong_FromSsize_t(ndropped);
            Py_CLEAR(fields);
            Py_CLEAR(patches);
            if (!t2 || !ft || !pt || !nd) {
                Py_XDECREF(t2);
                Py_XDECREF(ft);
                Py_XDECREF(pt);
                Py_XDECREF(nd);
                goto fail;
            }
            rec = make_record(record_type, t2, ft, nd, pt);
        } else {
            Py_INCREF(text);
            Py_INCREF(empty);
            Py_INCREF(zero);
            Py_INCREF(empty);
            rec = make_record(record_type, text, empty, zero, empty);
        }
        if (!rec) goto fail;
        PyList_SET_ITEM(result, r, rec);
        continue;
    fail_rec:
        Py_XDECREF(fields);
        Py_XDECREF(patches);
        goto fail;
    }
    goto done;
fail:
    Py_CLEAR(result);
done:
    Py_XDECREF(empty);
    Py_XDECREF(zero);
    PyMem_Free(rid);
    PyMem_Free(seen.e);
    PyMem_Free(out.p);
    PyBuffer_Release(&prefix);
    return result;
}

static PyObject *xxh3_64(PyObject *self, PyObject *arg) {
    (void)self;
    Py_buffer b;
    if (PyObject_GetBuffer(arg, &b, PyBUF_SIMPLE) < 0) return NULL;
    uint64_t h = XXH3_64bits(b.buf, (size_t)b.len);
    PyBuffer_Release(&b);
    return PyLong_FromUnsignedLongLong(h);
}

static PyMethodDef methods[] = {
    {"dedup", dedup, METH_VARARGS, "L0 over one trajectory's records (SPEC §7); see lam_ref.text.lines."},
    {"xxh3_64", xxh3_64, METH_O, "XXH3-64 (seed 0) of a bytes-like object, from the vendored xxhash.h."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_l0", "Compiled L0 (SPEC §7).", -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__l0(void) { return PyModule_Create(&module); }
