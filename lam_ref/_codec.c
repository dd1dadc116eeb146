/*
 * L2 codec in C (SPEC §9; docs/codec.md): the compiled twin of lam_ref.codec's numpy block layer.
 *
 * Version 1 (cuSZp plain mode) and version 2 (the same quantizer, canonical Huffman codes per
 * column group) bodies; the 28-byte header, the CRC-32 and every error message stay in Python
 * (lam_ref.codec), so this module only turns float32 values into a body and back. It must write the
 * bytes of the numpy path exactly: the quantizer is the float64 rule of SPEC §9.2
 *     y = (double)x / s;  f = floor(y);  q = f + (y - f >= 0.5)
 * with no FMA contraction (built with -ffp-contract=off; nothing here is a fused a*b+c anyway) and
 * the reconstruction (float)((double)q * s), round to nearest even (the default FP environment).
 *
 * Entry points (buffers are anything with the buffer protocol; lengths are checked by the caller):
 *   v1_encode(x: float32[n], s: float, block: int) -> bytes | (code, qmax)
 *       body = ceil(n/B) rate bytes then the payloads; (code, qmax) when |q| > Q_MAX (code 1) or a
 *       reconstruction overflows float32 (code 2); qmax = max |q| over all values, as a float.
 *   v1_decode(body, n, block, s, out: float32[n]) -> int
 *       0 on success; a non-zero code on any non-canonical or corrupt body (the caller then runs the
 *       numpy decoder for the exact message and never returns out).
 *   quantize(x: float32[n], s: float, out: int32[n]) -> (code, qmax)   (code 0 on success)
 *   huff_lengths(counts: uint64[A], lmax: int, out: uint8[A]) -> None   (v2's code-length rule)
 *   v2_pack(z: uint32[n], groups..., ) ...  (see the functions below)
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define Q_MAX 2147483647.0
#define F32_OVERFLOW 340282356779733661637539395458142568448.0 /* 2**128 - 2**103 */
#define MAX_BLOCK 4096

static int get_buffer(PyObject *o, Py_buffer *b, int writable) {
    return PyObject_GetBuffer(o, b, writable ? (PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) : PyBUF_C_CONTIGUOUS);
}

/* The quantizer of SPEC §9.2 on one value; the result as a double (an integer value). */
static inline double quant(float v, double s) {
    double y = (double)v / s;
    double f = floor(y);
    return f + ((y - f) >= 0.5 ? 1.0 : 0.0);
}

static inline int bitlen32(uint32_t v) { return v ? 32 - __builtin_clz(v) : 0; }

/* ---------------------------------------------------------------- version 1 */

/* Bit-plane transposes of 8 values (SPEC §9.2 step 5: value t of a group at bit 7 - t of a byte).
 * Lanes: byte t of a uint64 holds value t's 8 bits of a plane chunk. GATHER packs bit 0 of the 8
 * lanes into one byte, lane 0 at bit 7 (the partial products fall on distinct bits: no carries);
 * spread8[v] is the inverse: lane t = bit 7 - t of v. */
#define GATHER 0x8040201008040201ull
#define LSB8 0x0101010101010101ull
static uint64_t spread8[256];
static void init_spread(void) {
    for (int v = 0; v < 256; v++) {
        uint64_t x = 0;
        for (int t = 0; t < 8; t++) x |= (uint64_t)((v >> (7 - t)) & 1) << (8 * t);
        spread8[v] = x;
    }
}
static inline uint8_t gather8(uint64_t lanes) { return (uint8_t)(((lanes & LSB8) * GATHER) >> 56); }

static PyObject *v1_encode(PyObject *self, PyObject *args) {
    PyObject *xo;
    double s;
    int block;
    if (!PyArg_ParseTuple(args, "Odi", &xo, &s, &block)) return NULL;
    Py_buffer xb;
    if (get_buffer(xo, &xb, 0) < 0) return NULL;
    const float *x = (const float *)xb.buf;
    Py_ssize_t n = xb.len / (Py_ssize_t)sizeof(float);
    Py_ssize_t nb = (n + block - 1) / block;
    int bb = block / 8;
    int32_t *qs = (int32_t *)malloc(sizeof(int32_t) * (size_t)(n ? n : 1));
    if (!qs) {
        PyBuffer_Release(&xb);
        return PyErr_NoMemory();
    }
    /* pass 1: the codes and the range check over all values (the message reports max |q|) */
    double qmax = 0.0;
    for (Py_ssize_t i = 0; i < n; i++) {
        double q = quant(x[i], s);
        double a = fabs(q);
        if (a > qmax) qmax = a;
        qs[i] = a <= Q_MAX ? (int32_t)q : 0;
    }
    if (!(qmax <= Q_MAX) || qmax * s >= F32_OVERFLOW) {
        PyBuffer_Release(&xb);
        free(qs);
        return Py_BuildValue("(id)", qmax <= Q_MAX ? 2 : 1, qmax);
    }
    size_t cap = (size_t)nb + (size_t)nb * 33u * (size_t)bb;
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)cap);
    if (!out) {
        PyBuffer_Release(&xb);
        free(qs);
        return NULL;
    }
    uint8_t *rates = (uint8_t *)PyBytes_AS_STRING(out);
    uint8_t *p = rates + nb;
    uint32_t a[MAX_BLOCK];
    uint8_t neg[MAX_BLOCK];
    Py_BEGIN_ALLOW_THREADS;
    for (Py_ssize_t k = 0; k < nb; k++) {
        Py_ssize_t base = k * block;
        Py_ssize_t m = n - base < block ? n - base : block;
        int64_t prev = 0;
        uint32_t amax = 0;
        for (Py_ssize_t j = 0; j < m; j++) {
            int64_t q = qs[base + j];
            int64_t d = q - prev;
            prev = q;
            neg[j] = d < 0;
            a[j] = (uint32_t)(d < 0 ? -d : d);
            amax |= a[j];
        }
        for (Py_ssize_t j = m; j < block; j++) {
            a[j] = 0;
            neg[j] = 0;
        }
        int r = bitlen32(amax);
        rates[k] = (uint8_t)r;
        if (!r) continue;
        for (int g = 0; g < bb; g++) {
            uint64_t lanes;
            memcpy(&lanes, neg + 8 * g, 8); /* lane t = byte t (little-endian hosts, checked at import) */
            p[g] = gather8(lanes);
        }
        p += bb;
        for (int g = 0; g < bb; g++) {
            const uint32_t *ag = a + 8 * g;
            for (int c = 0; c < r; c += 8) {
                uint64_t lanes = 0;
                for (int t = 0; t < 8; t++) lanes |= (uint64_t)((ag[t] >> c) & 0xFF) << (8 * t);
                int top = r - c < 8 ? r - c : 8;
                for (int i = 0; i < top; i++) p[(size_t)(c + i) * bb + g] = gather8(lanes >> i);
            }
        }
        p += (size_t)r * bb;
    }
    Py_END_ALLOW_THREADS;
    PyBuffer_Release(&xb);
    free(qs);
    if (_PyBytes_Resize(&out, (Py_ssize_t)(p - (uint8_t *)PyBytes_AS_STRING(out))) < 0) return NULL;
    return out;
}

/* 0 ok; 1 length; 2 rate > 32; 3 non-canonical rate; 4 sign on zero; 5 padding; 6 |q| > Q_MAX; 7 overflow */
static int v1_decode_body(const uint8_t *body, Py_ssize_t len, Py_ssize_t n, int block, double s, float *out) {
    Py_ssize_t nb = (n + block - 1) / block;
    int bb = block / 8;
    if (len < nb) return 1;
    const uint8_t *rates = body;
    const uint8_t *p = body + nb;
    const uint8_t *end = body + len;
    uint32_t a[MAX_BLOCK];
    uint8_t neg[MAX_BLOCK];
    for (Py_ssize_t k = 0; k < nb; k++) {
        int r = rates[k];
        Py_ssize_t base = k * block;
        Py_ssize_t m = n - base < block ? n - base : block;
        if (r == 0) {
            for (Py_ssize_t j = 0; j < m; j++) out[base + j] = 0.0f;
            continue;
        }
        if (r > 32) return 2;
        if (end - p < (Py_ssize_t)(r + 1) * bb) return 1;
        for (int g = 0; g < bb; g++) {
            uint64_t lanes = spread8[p[g]];
            memcpy(neg + 8 * g, &lanes, 8);
        }
        p += bb;
        for (int g = 0; g < bb; g++) {
            uint32_t *ag = a + 8 * g;
            uint8_t lb[8];
            for (int c = 0; c < r; c += 8) {
                int top = r - c < 8 ? r - c : 8;
                uint64_t lanes = 0;
                for (int i = 0; i < top; i++) lanes |= spread8[p[(size_t)(c + i) * bb + g]] << i;
                memcpy(lb, &lanes, 8);
                if (c == 0)
                    for (int t = 0; t < 8; t++) ag[t] = lb[t];
                else
                    for (int t = 0; t < 8; t++) ag[t] |= (uint32_t)lb[t] << c;
            }
        }
        p += (size_t)r * bb;
        uint32_t amax = 0, bad = 0;
        for (int j = 0; j < block; j++) {
            amax |= a[j];
            bad |= neg[j] & (a[j] == 0);
        }
        if (bad) return 4;
        if (bitlen32(amax) != r) return 3;
        for (int j = (int)m; j < block; j++)
            if (a[j] || neg[j]) return 5;
        int64_t q = 0, qhi = 0;
        for (Py_ssize_t j = 0; j < m; j++) {
            int64_t sg = -(int64_t)neg[j]; /* 0 or -1: branch-free sign (signs are random) */
            q += ((int64_t)a[j] ^ sg) - sg;
            int64_t aq = q < 0 ? -q : q;
            qhi = aq > qhi ? aq : qhi;
            out[base + j] = (float)((double)q * s);
        }
        if (qhi > (int64_t)Q_MAX) return 6;
        if (!isfinite((float)((double)qhi * s))) return 7;
    }
    if (p != end) return 1;
    return 0;
}

static PyObject *v1_decode(PyObject *self, PyObject *args) {
    PyObject *bo, *oo;
    Py_ssize_t n;
    int block;
    double s;
    if (!PyArg_ParseTuple(args, "OnidO", &bo, &n, &block, &s, &oo)) return NULL;
    if (block < 8 || block > MAX_BLOCK || block % 8) return PyLong_FromLong(1);
    Py_buffer bb, ob;
    if (get_buffer(bo, &bb, 0) < 0) return NULL;
    if (get_buffer(oo, &ob, 1) < 0) {
        PyBuffer_Release(&bb);
        return NULL;
    }
    int rc;
    if (ob.len != n * (Py_ssize_t)sizeof(float)) {
        rc = 1;
    } else {
        Py_BEGIN_ALLOW_THREADS;
        rc = v1_decode_body((const uint8_t *)bb.buf, bb.len, n, block, s, (float *)ob.buf);
        Py_END_ALLOW_THREADS;
    }
    PyBuffer_Release(&bb);
    PyBuffer_Release(&ob);
    return PyLong_FromLong(rc);
}

/* ---------------------------------------------------------------- version 2 (docs/codec.md "Version 2") */

#define V2_DIRECT 4096 /* z < 4096 is its own symbol */
#define V2_ALPHA 4116  /* 4096 + one escape symbol per bit length 13..32 */
#define V2_LMAX 15

static inline uint32_t zigzag(int64_t q) { return q >= 0 ? (uint32_t)(2 * q) : (uint32_t)(-2 * q - 1); }
static inline int64_t unzigzag(uint32_t z) { return (z & 1) ? -(int64_t)(z >> 1) - 1 : (int64_t)(z >> 1); }
static inline int v2_symbol(uint32_t z) { return z < V2_DIRECT ? (int)z : V2_DIRECT + bitlen32(z) - 13; }

/* class of a column from the floor of its mean z: bit_length(m*m) (half-octave classes) */
static inline int v2_class(uint64_t m) {
    unsigned __int128 sq = (unsigned __int128)m * m;
    int bl = 0;
    while (sq) {
        bl++;
        sq >>= 1;
    }
    return bl;
}

typedef struct {
    uint64_t w;
    int sym; /* leaf symbol, or -1 */
    int parent;
} hnode;

static int cmp_leaf(const void *a, const void *b) { /* by (count, symbol); thread safe (no globals) */
    const hnode *x = (const hnode *)a, *y = (const hnode *)b;
    if (x->w != y->w) return x->w < y->w ? -1 : 1;
    return x->sym < y->sym ? -1 : (x->sym > y->sym);
}

/* Code lengths of SPEC §9.6: two-queue Huffman on leaves sorted by (count, symbol), ties to the
 * leaf; a lone symbol gets length 1; while a length exceeds 15, counts c -> (c+1)>>1 and rebuild.
 * Returns 0, or -1 on allocation failure. Reentrant: it runs with the GIL released. */
static int huff_lengths_c(const uint64_t *counts0, int A, uint8_t *len) {
    memset(len, 0, (size_t)A);
    uint64_t *c = (uint64_t *)malloc(sizeof(uint64_t) * (size_t)(A ? A : 1));
    hnode *nodes = (hnode *)malloc(sizeof(hnode) * (size_t)(2 * A + 1));
    int *depth = (int *)malloc(sizeof(int) * (size_t)(2 * A + 1));
    if (!c || !nodes || !depth) {
        free(c); free(nodes); free(depth);
        return -1;
    }
    memcpy(c, counts0, sizeof(uint64_t) * (size_t)A);
    for (;;) {
        int L = 0;
        for (int i = 0; i < A; i++)
            if (c[i]) {
                nodes[L].w = c[i];
                nodes[L].sym = i;
                nodes[L].parent = -1;
                L++;
            }
        if (L == 0) break;
        if (L == 1) {
            len[nodes[0].sym] = 1;
            break;
        }
        qsort(nodes, (size_t)L, sizeof(hnode), cmp_leaf);
        /* nodes[0..L) is the sorted leaf queue; internal nodes are appended at L.. in creation order */
        int li = 0, ii = L, top = L;
        for (int k = 0; k < L - 1; k++) {
            int pick[2];
            for (int t = 0; t < 2; t++) {
                if (li < L && (ii >= top || nodes[li].w <= nodes[ii].w)) pick[t] = li++;
                else pick[t] = ii++;
            }
            nodes[top].w = nodes[pick[0]].w + nodes[pick[1]].w;
            nodes[top].sym = -1;
            nodes[top].parent = -1;
            nodes[pick[0]].parent = top;
            nodes[pick[1]].parent = top;
            top++;
        }
        depth[top - 1] = 0;
        int maxd = 0;
        for (int k = top - 2; k >= 0; k--) {
            depth[k] = depth[nodes[k].parent] + 1;
            if (k < L && depth[k] > maxd) maxd = depth[k];
        }
        if (maxd <= V2_LMAX) {
            for (int k = 0; k < L; k++) len[nodes[k].sym] = (uint8_t)depth[k];
            break;
        }
        for (int i = 0; i < A; i++)
            if (c[i]) c[i] = (c[i] + 1) >> 1;
    }
    free(c); free(nodes); free(depth);
    return 0;
}

/* canonical codes (DEFLATE's assignment): by (length, symbol) */
static void canon_codes(const uint8_t *len, int A, uint32_t *code) {
    uint32_t bl_count[V2_LMAX + 2] = {0}, next[V2_LMAX + 2] = {0};
    for (int i = 0; i < A; i++) bl_count[len[i]]++;
    bl_count[0] = 0;
    uint32_t cd = 0;
    for (int b = 1; b <= V2_LMAX; b++) {
        cd = (cd + bl_count[b - 1]) << 1;
        next[b] = cd;
    }
    for (int i = 0; i < A; i++)
        if (len[i]) code[i] = next[len[i]]++;
}

typedef struct {
    uint8_t *p;
    uint64_t acc;
    int nbits;
} bitw;

static inline void bw_put(bitw *w, uint32_t v, int nb) { /* nb <= 32, MSB first */
    if (!nb) return;
    w->acc = (w->acc << nb) | (uint64_t)(v & (nb == 32 ? 0xFFFFFFFFu : ((1u << nb) - 1)));
    w->nbits += nb;
    while (w->nbits >= 8) {
        w->nbits -= 8;
        *w->p++ = (uint8_t)(w->acc >> w->nbits);
    }
}

static PyObject *huff_lengths(PyObject *self, PyObject *args) {
    PyObject *co, *oo;
    if (!PyArg_ParseTuple(args, "OO", &co, &oo)) return NULL;
    Py_buffer cb, ob;
    if (get_buffer(co, &cb, 0) < 0) return NULL;
    if (get_buffer(oo, &ob, 1) < 0) {
        PyBuffer_Release(&cb);
        return NULL;
    }
    int A = (int)(cb.len / 8);
    int rc = ob.len == A ? huff_lengths_c((const uint64_t *)cb.buf, A, (uint8_t *)ob.buf) : -2;
    PyBuffer_Release(&cb);
    PyBuffer_Release(&ob);
    if (rc == -1) return PyErr_NoMemory();
    if (rc == -2) {
        PyErr_SetString(PyExc_ValueError, "huff_lengths: out has the wrong size");
        return NULL;
    }
    Py_RETURN_NONE;
}

/* Exact repeats of a whole row (cols >= V2_ROWS_MIN): a hash table of the distinct rows' codes. */
#define V2_ROWS_MIN 16
typedef struct {
    int64_t *slot; /* distinct row number, -1 empty */
    size_t mask;
    const uint32_t *base;
    const int64_t *off; /* off[k]: offset of distinct row k in base */
    int cols;
} rowtab;

static uint64_t row_hash(const uint32_t *r, int cols) {
    uint64_t h = 0x9E3779B97F4A7C15ull;
    for (int j = 0; j < cols; j++) h = (h ^ r[j]) * 0x100000001B3ull;
    return h ^ (h >> 29);
}

static int rowtab_init(rowtab *t, Py_ssize_t rows, const uint32_t *base, const int64_t *off, int cols) {
    size_t cap = 16;
    while (cap < 2 * (size_t)rows) cap <<= 1;
    t->slot = (int64_t *)malloc(sizeof(int64_t) * cap);
    if (!t->slot) return -1;
    memset(t->slot, 0xFF, sizeof(int64_t) * cap);
    t->mask = cap - 1;
    t->base = base;
    t->off = off;
    t->cols = cols;
    return 0;
}

/* the distinct row equal to r, or -1 after registering r as distinct row knew (whose off[knew] is set) */
static int64_t rowtab_find_or_add(rowtab *t, const uint32_t *r, int64_t knew) {
    size_t i = (size_t)row_hash(r, t->cols) & t->mask;
    while (t->slot[i] >= 0) {
        if (!memcmp(t->base + t->off[t->slot[i]], r, sizeof(uint32_t) * (size_t)t->cols)) return t->slot[i];
        i = (i + 1) & t->mask;
    }
    t->slot[i] = knew;
    return -1;
}

/* v2_encode(x, s, eb, cols, strict) -> body bytes | (code, qmax) */
static PyObject *v2_encode(PyObject *self, PyObject *args) {
    PyObject *xo;
    double s, eb;
    int cols, strict;
    if (!PyArg_ParseTuple(args, "Oddii", &xo, &s, &eb, &cols, &strict)) return NULL;
    Py_buffer xb;
    if (get_buffer(xo, &xb, 0) < 0) return NULL;
    const float *x = (const float *)xb.buf;
    Py_ssize_t n = xb.len / (Py_ssize_t)sizeof(float);
    Py_ssize_t rows = cols ? n / cols : 0;
    int rep = cols >= V2_ROWS_MIN;
    PyObject *out = NULL, *err = NULL;
    rowtab tab = {NULL, 0, NULL, NULL, 0};
    uint32_t *z = (uint32_t *)malloc(sizeof(uint32_t) * (size_t)(n ? n : 1));
    int64_t *ref = (int64_t *)malloc(sizeof(int64_t) * (size_t)(rows ? rows : 1)); /* -1 new, else distinct row */
    int64_t *off = (int64_t *)malloc(sizeof(int64_t) * (size_t)(rows ? rows : 1));
    unsigned __int128 *sum = (unsigned __int128 *)calloc((size_t)cols, sizeof(unsigned __int128));
    uint8_t *cls = (uint8_t *)malloc((size_t)cols);
    uint64_t *exc_i = NULL;
    float *exc_v = NULL;
    Py_ssize_t ne = 0, exc_cap = 0, R = 0;
    uint64_t *counts = (uint64_t *)calloc((size_t)65 * V2_ALPHA, sizeof(uint64_t));
    uint8_t *lens = (uint8_t *)calloc((size_t)65 * V2_ALPHA, 1);
    uint32_t *codes = (uint32_t *)calloc((size_t)65 * V2_ALPHA, sizeof(uint32_t));
    int alpha[65] = {0};
    if (!z || !ref || !off || !sum || !cls || !counts || !lens || !codes) {
        PyErr_NoMemory();
        goto done;
    }
    double qmax = 0.0;
    for (Py_ssize_t i = 0; i < n; i++) {
        double q = quant(x[i], s);
        double a = fabs(q);
        if (a > qmax) qmax = a;
        z[i] = a <= Q_MAX ? zigzag((int64_t)q) : 0;
    }
    if (!(qmax <= Q_MAX) || qmax * s >= F32_OVERFLOW) {
        err = Py_BuildValue("(id)", qmax <= Q_MAX ? 2 : 1, qmax);
        goto done;
    }
    for (Py_ssize_t i = 0; strict && i < n; i++) {
        int64_t q = unzigzag(z[i]);
        {
            float r = (float)((double)q * s);
            if (fabs((double)x[i] - (double)r) > eb) {
                if (ne == exc_cap) {
                    exc_cap = exc_cap ? 2 * exc_cap : 64;
                    uint64_t *ni = (uint64_t *)realloc(exc_i, sizeof(uint64_t) * (size_t)exc_cap);
                    if (ni) exc_i = ni;
                    float *nv = (float *)realloc(exc_v, sizeof(float) * (size_t)exc_cap);
                    if (nv) exc_v = nv;
                    if (!ni || !nv) {
                        PyErr_NoMemory();
                        goto done;
                    }
                }
                exc_i[ne] = (uint64_t)i;
                exc_v[ne] = x[i];
                ne++;
            }
        }
    }
    if (rep && rowtab_init(&tab, rows, z, off, cols) < 0) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t r = 0; r < rows; r++) {
        off[R] = (int64_t)r * cols;
        ref[r] = rep ? rowtab_find_or_add(&tab, z + (size_t)r * cols, R) : -1;
        if (ref[r] < 0) {
            R++;
            for (int j = 0; j < cols; j++) sum[j] += z[(size_t)r * cols + j];
        }
    }
    for (int j = 0; j < cols; j++) cls[j] = (uint8_t)v2_class(R ? (uint64_t)(sum[j] / (uint64_t)R) : 0);
    for (Py_ssize_t r = 0; r < rows; r++) {
        if (ref[r] >= 0) continue;
        for (int j = 0; j < cols; j++) {
            int g = cls[j];
            int sy = v2_symbol(z[(size_t)r * cols + j]);
            counts[(size_t)g * V2_ALPHA + sy]++;
            if (sy + 1 > alpha[g]) alpha[g] = sy + 1;
        }
    }
    int present[65] = {0};
    for (int j = 0; j < cols; j++) present[cls[j]] = 1;
    size_t tables = 0;
    for (int g = 0; g < 65; g++)
        if (present[g]) {
            if (huff_lengths_c(counts + (size_t)g * V2_ALPHA, alpha[g], lens + (size_t)g * V2_ALPHA) < 0) {
                PyErr_NoMemory();
                goto done;
            }
            canon_codes(lens + (size_t)g * V2_ALPHA, alpha[g], codes + (size_t)g * V2_ALPHA);
            tables += 2 + ((size_t)alpha[g] + 1) / 2;
        }
    uint64_t bits = 0;
    for (int g = 0; g < 65; g++)
        if (present[g])
            for (int sy = 0; sy < alpha[g]; sy++) {
                uint64_t cnt = counts[(size_t)g * V2_ALPHA + sy];
                if (!cnt) continue;
                int extra = sy < V2_DIRECT ? 0 : sy - V2_DIRECT + 12;
                bits += cnt * (uint64_t)(lens[(size_t)g * V2_ALPHA + sy] + extra);
            }
    int w = R > 1 ? bitlen32((uint32_t)(R - 1)) : 0;
    uint64_t rep_bits = rep ? (uint64_t)rows + (uint64_t)(rows - R) * (uint64_t)w : 0;
    size_t size = (rep ? 8 + (size_t)((rep_bits + 7) / 8) : 0) + (size_t)cols + tables +
                  (strict ? 8 + 12 * (size_t)ne : 0) + (size_t)((bits + 7) / 8);
    out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)size);
    if (!out) goto done;
    uint8_t *p = (uint8_t *)PyBytes_AS_STRING(out);
    if (rep) {
        uint64_t r64 = (uint64_t)R;
        memcpy(p, &r64, 8); /* little-endian hosts only (checked at import) */
        p += 8;
        bitw rw = {p, 0, 0};
        for (Py_ssize_t r = 0; r < rows; r++) {
            bw_put(&rw, ref[r] < 0, 1);
            if (ref[r] >= 0) bw_put(&rw, (uint32_t)ref[r], w);
        }
        if (rw.nbits) *rw.p++ = (uint8_t)(rw.acc << (8 - rw.nbits));
        p = rw.p;
    }
    memcpy(p, cls, (size_t)cols);
    p += cols;
    for (int g = 0; g < 65; g++)
        if (present[g]) {
            const uint8_t *L = lens + (size_t)g * V2_ALPHA;
            *p++ = (uint8_t)(alpha[g] & 0xFF);
            *p++ = (uint8_t)(alpha[g] >> 8);
            for (int sy = 0; sy < alpha[g]; sy += 2) *p++ = (uint8_t)(L[sy] << 4 | (sy + 1 < alpha[g] ? L[sy + 1] : 0));
        }
    if (strict) {
        uint64_t e = (uint64_t)ne;
        memcpy(p, &e, 8);
        p += 8;
        if (ne) { /* exc_i / exc_v are NULL when there is no exception */
            memcpy(p, exc_i, 8 * (size_t)ne);
            memcpy(p + 8 * ne, exc_v, 4 * (size_t)ne);
        }
        p += 12 * ne;
    }
    bitw bw = {p, 0, 0};
    for (Py_ssize_t r = 0; r < rows; r++) {
        if (ref[r] >= 0) continue;
        const uint32_t *zr = z + (size_t)r * cols;
        for (int j = 0; j < cols; j++) {
            int g = cls[j];
            uint32_t zi = zr[j];
            int sy = v2_symbol(zi);
            bw_put(&bw, codes[(size_t)g * V2_ALPHA + sy], lens[(size_t)g * V2_ALPHA + sy]);
            if (sy >= V2_DIRECT) bw_put(&bw, zi, bitlen32(zi) - 1);
        }
    }
    if (bw.nbits) *bw.p++ = (uint8_t)(bw.acc << (8 - bw.nbits));
done:
    PyBuffer_Release(&xb);
    free(tab.slot);
    free(z); free(ref); free(off); free(sum); free(cls); free(exc_i); free(exc_v); free(counts); free(lens); free(codes);
    if (err) {
        Py_XDECREF(out);
        return err;
    }
    return out;
}

typedef struct {
    const uint8_t *p, *end;
    uint64_t acc; /* the next bits, MSB aligned at bit 63 */
    int nbits;    /* valid bits in acc */
    int64_t over; /* zero bits supplied past the end */
} bitr;

static inline void br_fill(bitr *r) {
    if (r->nbits <= 56 && r->end - r->p >= 8) { /* whole bytes at once: (63 - nbits) / 8 of them */
        uint64_t w;
        memcpy(&w, r->p, 8);
        w = __builtin_bswap64(w);
        int take = (63 - r->nbits) >> 3;
        int total = r->nbits + 8 * take; /* <= 63: the shift below is in range */
        r->acc |= (w >> r->nbits) & (~0ull << (64 - total));
        r->p += take;
        r->nbits = total;
        return;
    }
    while (r->nbits <= 56) {
        if (r->p < r->end) r->acc |= (uint64_t)(*r->p++) << (56 - r->nbits);
        else r->over += 8;
        r->nbits += 8;
    }
}
static inline uint32_t br_peek(bitr *r, int nb) { return nb ? (uint32_t)(r->acc >> (64 - nb)) : 0; }
static inline void br_skip(bitr *r, int nb) {
    r->acc <<= nb;
    r->nbits -= nb;
}

/* An exception (index i, float32 value v) the encoder writes (SPEC §9.6, docs/codec.md "Canonical and
 * refused"): v finite, quantized to the stream's code z of value i, and more than eb = s/2 (float64) from
 * the plain reconstruction rec. 1 if so. */
static inline int v2_exception_ok(float v, uint32_t z, float rec, double s) {
    return isfinite(v) && quant(v, s) == (double)unzigzag(z) && fabs((double)v - (double)rec) > 0.5 * s;
}

/* 0 ok; 10 layout/length; 11 bad class; 12 bad table; 13 bad code; 14 |q|; 15 overflow; 16 exception;
 * 17 non-canonical (classes, lengths, padding, row repeats).
 * Memory (issue 39): besides out (4 bytes a value) only O(cols + tables) without row repeats; with them
 * (cols >= 16) 8 bytes a row (ref) and 4 bytes a distinct value (dz) plus 24 bytes a distinct row. */
static int v2_decode_body(const uint8_t *body, Py_ssize_t len, Py_ssize_t n, int cols, double s, int strict,
                          float *out) {
    const uint8_t *p = body, *end = body + len;
    Py_ssize_t rows = n / cols, R = rows;
    int rep = cols >= V2_ROWS_MIN;
    int rc = 0;
    uint8_t *lens = (uint8_t *)calloc((size_t)65 * V2_ALPHA, 1);
    uint64_t *counts = (uint64_t *)calloc((size_t)65 * V2_ALPHA, sizeof(uint64_t));
    uint32_t *lut[65] = {0};
    int alpha[65] = {0}, maxlen[65] = {0}, present[65] = {0};
    unsigned __int128 *sum = (unsigned __int128 *)calloc((size_t)cols, sizeof(unsigned __int128));
    uint8_t *chk = (uint8_t *)malloc(V2_ALPHA);
    int64_t *ref = NULL, *off = NULL; /* row repeats only: ref[r] >= 0 repeats distinct row ref[r], else -1 - k */
    uint32_t *dz = NULL;
    rowtab tab = {NULL, 0, NULL, NULL, 0};
    if (rep) {
        ref = (int64_t *)malloc(sizeof(int64_t) * (size_t)(rows ? rows : 1));
        if (!ref) { rc = -1; goto done; }
    }
    if (!lens || !counts || !sum || !chk) {
        rc = -1;
        goto done;
    }
    if (rep) {
        uint64_t r64;
        if (end - p < 8) { rc = 10; goto done; }
        memcpy(&r64, p, 8);
        p += 8;
        if (r64 > (uint64_t)rows || (rows && !r64)) { rc = 17; goto done; }
        R = (Py_ssize_t)r64;
        int w = R > 1 ? bitlen32((uint32_t)(R - 1)) : 0;
        uint64_t rep_bits = (uint64_t)rows + (uint64_t)(rows - R) * (uint64_t)w;
        if ((uint64_t)(end - p) < (rep_bits + 7) / 8) { rc = 10; goto done; }
        bitr rr = {p, p + (rep_bits + 7) / 8, 0, 0, 0};
        Py_ssize_t seen = 0;
        for (Py_ssize_t r = 0; r < rows; r++) {
            br_fill(&rr);
            int isnew = (int)br_peek(&rr, 1);
            br_skip(&rr, 1);
            if (isnew) {
                if (seen == R) { rc = 17; goto done; }
                ref[r] = -1 - (int64_t)seen;
                seen++;
            } else {
                br_fill(&rr);
                uint32_t k = br_peek(&rr, w);
                br_skip(&rr, w);
                if ((Py_ssize_t)k >= seen) { rc = 17; goto done; }
                ref[r] = (int64_t)k;
            }
        }
        if (seen != R) { rc = 17; goto done; }
        int padbits = (int)((8 - rep_bits % 8) % 8);
        if (padbits && (p[(rep_bits + 7) / 8 - 1] & ((1u << padbits) - 1))) { rc = 17; goto done; }
        p += (rep_bits + 7) / 8;
    }
    if (end - p < cols) { rc = 10; goto done; }
    const uint8_t *cls = p;
    p += cols;
    for (int j = 0; j < cols; j++) {
        if (cls[j] > 64) { rc = 11; goto done; }
        present[cls[j]] = 1;
    }
    for (int g = 0; g < 65; g++) {
        if (!present[g]) continue;
        if (end - p < 2) { rc = 10; goto done; }
        int A = p[0] | p[1] << 8;
        p += 2;
        if (A > V2_ALPHA) { rc = 12; goto done; }
        if (end - p < (A + 1) / 2) { rc = 10; goto done; }
        uint8_t *L = lens + (size_t)g * V2_ALPHA;
        for (int sy = 0; sy < A; sy += 2) {
            L[sy] = p[sy / 2] >> 4;
            if (sy + 1 < A) L[sy + 1] = p[sy / 2] & 15;
            else if (p[sy / 2] & 15) { rc = 17; goto done; }
        }
        p += (A + 1) / 2;
        alpha[g] = A;
        uint64_t kraft = 0;
        int ml = 0;
        for (int sy = 0; sy < A; sy++)
            if (L[sy]) {
                kraft += (uint64_t)1 << (V2_LMAX - L[sy]);
                if (L[sy] > ml) ml = L[sy];
            }
        if (kraft > ((uint64_t)1 << V2_LMAX)) { rc = 12; goto done; }
        maxlen[g] = ml;
        if (ml) {
            uint32_t codes[V2_ALPHA];
            canon_codes(L, A, codes);
            lut[g] = (uint32_t *)calloc((size_t)1 << ml, sizeof(uint32_t));
            if (!lut[g]) { rc = -1; goto done; }
            for (int sy = 0; sy < A; sy++)
                if (L[sy]) {
                    uint32_t first = codes[sy] << (ml - L[sy]);
                    uint32_t cnt = 1u << (ml - L[sy]);
                    for (uint32_t t = 0; t < cnt; t++) lut[g][first + t] = (uint32_t)sy << 8 | L[sy];
                }
        }
    }
    const uint8_t *exc = NULL;
    uint64_t ne = 0;
    if (strict) {
        if (end - p < 8) { rc = 10; goto done; }
        memcpy(&ne, p, 8);
        p += 8;
        if (ne > (uint64_t)n || (uint64_t)(end - p) < 12 * ne) { rc = 10; goto done; }
        exc = p;
        p += 12 * ne;
    }
    if (R && (uint64_t)(end - p) * 8 < (uint64_t)R * (uint64_t)cols) { rc = 10; goto done; }
    if (rep) {
        dz = (uint32_t *)malloc(sizeof(uint32_t) * (size_t)(R * cols > 0 ? R * cols : 1));
        off = (int64_t *)malloc(sizeof(int64_t) * (size_t)(R ? R : 1));
        if (!dz || !off) { rc = -1; goto done; }
    }
    bitr r = {p, end, 0, 0, 0};
    Py_ssize_t k = 0;
    uint64_t ecur = 0; /* without row repeats the exceptions are checked as their values are decoded */
    for (Py_ssize_t row = 0; row < rows; row++) {
        if (rep && ref[row] >= 0) continue;
        if (rep) off[k] = (int64_t)k * cols;
        float *o = out + (size_t)row * cols;
        uint32_t *zk = rep ? dz + (size_t)k * cols : NULL;
        for (int j = 0; j < cols; j++) {
            int g = cls[j];
            br_fill(&r);
            if (!maxlen[g]) { rc = 13; goto done; }
            uint32_t e = lut[g][br_peek(&r, maxlen[g])];
            if (!e) { rc = 13; goto done; }
            br_skip(&r, (int)(e & 255));
            int sy = (int)(e >> 8);
            uint32_t zi;
            if (sy < V2_DIRECT) {
                zi = (uint32_t)sy;
            } else {
                int bl = sy - V2_DIRECT + 13;
                br_fill(&r);
                zi = (1u << (bl - 1)) | br_peek(&r, bl - 1);
                br_skip(&r, bl - 1);
            }
            counts[(size_t)g * V2_ALPHA + sy]++;
            sum[j] += zi;
            if (zk) zk[j] = zi;
            int64_t q = unzigzag(zi);
            if (q > (int64_t)Q_MAX || q < -(int64_t)Q_MAX) { rc = 14; goto done; }
            float v = (float)((double)q * s);
            if (!isfinite(v)) { rc = 15; goto done; }
            o[j] = v;
            if (!rep && ecur < ne) {
                uint64_t idx;
                memcpy(&idx, exc + 8 * ecur, 8);
                if (idx == (uint64_t)row * (uint64_t)cols + (uint64_t)j) {
                    float ev;
                    memcpy(&ev, exc + 8 * ne + 4 * ecur, 4);
                    if (!v2_exception_ok(ev, zi, v, s)) { rc = 16; goto done; }
                    ecur++;
                }
            }
        }
        k++;
    }
    /* every bit consumed must be real, the padding zero, and nothing left after it */
    {
        int64_t consumed = (int64_t)(r.p - p) * 8 + r.over - r.nbits;
        int64_t avail = (int64_t)(end - p) * 8;
        if (consumed > avail || avail - consumed >= 8) { rc = 10; goto done; }
        if (avail - consumed > 0 && (end[-1] & ((1u << (avail - consumed)) - 1))) { rc = 17; goto done; }
    }
    /* first occurrences of the repeated rows: the distinct rows in order of appearance */
    if (rep) {
        Py_ssize_t kk = 0;
        int64_t *first = (int64_t *)malloc(sizeof(int64_t) * (size_t)(R ? R : 1));
        if (!first) { rc = -1; goto done; }
        for (Py_ssize_t row = 0; row < rows; row++)
            if (ref[row] < 0) first[kk++] = row;
        for (Py_ssize_t row = 0; row < rows; row++)
            if (ref[row] >= 0)
                memcpy(out + (size_t)row * cols, out + (size_t)first[ref[row]] * cols, sizeof(float) * (size_t)cols);
        free(first);
    }
    /* canonical: distinct rows differ, classes and code lengths are the encoder's */
    if (rep) {
        if (rowtab_init(&tab, R, dz, off, cols) < 0) { rc = -1; goto done; }
        for (Py_ssize_t kk = 0; kk < R; kk++)
            if (rowtab_find_or_add(&tab, dz + (size_t)kk * cols, kk) >= 0) { rc = 17; goto done; }
    }
    for (int j = 0; j < cols; j++)
        if (v2_class(R ? (uint64_t)(sum[j] / (uint64_t)R) : 0) != cls[j]) { rc = 17; goto done; }
    for (int g = 0; g < 65; g++) {
        if (!present[g]) continue;
        const uint64_t *C = counts + (size_t)g * V2_ALPHA;
        int A = 0;
        for (int sy = 0; sy < V2_ALPHA; sy++)
            if (C[sy]) A = sy + 1;
        if (A != alpha[g]) { rc = 17; goto done; }
        if (huff_lengths_c(C, A, chk) < 0) { rc = -1; goto done; }
        if (memcmp(chk, lens + (size_t)g * V2_ALPHA, (size_t)A)) { rc = 17; goto done; }
    }
    uint64_t prev = 0;
    for (uint64_t e = 0; e < ne; e++) {
        uint64_t idx;
        float v;
        memcpy(&idx, exc + 8 * e, 8);
        memcpy(&v, exc + 8 * ne + 4 * e, 4);
        if (idx >= (uint64_t)n || (e && idx <= prev)) { rc = 16; goto done; }
        if (rep) { /* the code of value idx is its distinct row's */
            int64_t rr = ref[idx / (uint64_t)cols];
            int64_t kk = rr >= 0 ? rr : -1 - rr;
            if (!v2_exception_ok(v, dz[(size_t)kk * cols + idx % (uint64_t)cols], out[idx], s)) { rc = 16; goto done; }
        } else if (e >= ecur) { /* never reached by the decode loop: out of order */
            rc = 16;
            goto done;
        }
        prev = idx;
        out[idx] = v;
    }
done:
    for (int g = 0; g < 65; g++) free(lut[g]);
    free(lens); free(counts); free(sum); free(chk); free(ref); free(off); free(dz); free(tab.slot);
    return rc;
}

static PyObject *v2_decode(PyObject *self, PyObject *args) {
    PyObject *bo, *oo;
    Py_ssize_t n;
    int cols, strict;
    double s;
    if (!PyArg_ParseTuple(args, "OnidiO", &bo, &n, &cols, &s, &strict, &oo)) return NULL;
    if (cols < 1 || n % cols) return PyLong_FromLong(10);
    Py_buffer bb, ob;
    if (get_buffer(bo, &bb, 0) < 0) return NULL;
    if (get_buffer(oo, &ob, 1) < 0) {
        PyBuffer_Release(&bb);
        return NULL;
    }
    int rc = 10;
    if (ob.len == n * (Py_ssize_t)sizeof(float)) {
        Py_BEGIN_ALLOW_THREADS;
        rc = v2_decode_body((const uint8_t *)bb.buf, bb.len, n, cols, s, strict, (float *)ob.buf);
        Py_END_ALLOW_THREADS;
    }
    PyBuffer_Release(&bb);
    PyBuffer_Release(&ob);
    if (rc == -1) return PyErr_NoMemory();
    return PyLong_FromLong(rc);
}

static PyMethodDef methods[] = {
    {"v1_encode", v1_encode, METH_VARARGS, "Version-1 body of float32 values (SPEC §9.5)."},
    {"v1_decode", v1_decode, METH_VARARGS, "Decode a version-1 body into float32 out; 0 or an error code."},
    {"v2_encode", v2_encode, METH_VARARGS, "Version-2 body of float32 values (SPEC §9.6)."},
    {"v2_decode", v2_decode, METH_VARARGS, "Decode a version-2 body into float32 out; 0 or an error code."},
    {"huff_lengths", huff_lengths, METH_VARARGS, "Version 2's code lengths of uint64 counts (SPEC §9.6)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_codec", "Compiled L2 codec (SPEC §9).", -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__codec(void) {
    const uint16_t one = 1;
    if (*(const uint8_t *)&one != 1) { /* the lane and header layouts assume a little-endian host */
        PyErr_SetString(PyExc_ImportError, "lam_ref._codec needs a little-endian host (the numpy codec serves)");
        return NULL;
    }
    init_spread();
    return PyModule_Create(&module);
}
