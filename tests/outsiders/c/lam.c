/*
 * lam.c: an implementation of LAM (SPEC §2, §5, §6, §7, §9) written in C11 from the docs alone
 * (docs/spec.md, docs/conformance.md, docs/codec.md, docs/vectors.md, docs/spec-decisions.md),
 * speaking the exec line protocol of docs/conformance.md §6 on stdin/stdout.
 *
 * Build: gcc -O2 -std=c11 -Wall -Wextra -o lam lam.c -lm
 * Bug builds (the outsider round's deliberate mutants): add -DBUG=n, n = 1..40 (bugs.md).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef BUG
#define BUG 0
#endif

/* ------------------------------------------------------------------ errors */

static char g_err[512];
static const char *g_errtype = "ValueError";

static int fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_err, sizeof g_err, fmt, ap);
    va_end(ap);
    g_errtype = "ValueError";
    return -1;
}

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "lam: out of memory (%zu bytes)\n", n);
        exit(3);
    }
    return p;
}

static void *xrealloc(void *p, size_t n) {
    void *q = realloc(p, n ? n : 1);
    if (!q) {
        fprintf(stderr, "lam: out of memory (%zu bytes)\n", n);
        exit(3);
    }
    return q;
}

/* ------------------------------------------------------------------ string buffer */

typedef struct {
    char *p;
    size_t n, cap;
} Buf;

static void buf_reserve(Buf *b, size_t extra) {
    if (b->n + extra + 1 > b->cap) {
        size_t c = b->cap ? b->cap : 256;
        while (c < b->n + extra + 1) c *= 2;
        b->p = xrealloc(b->p, c);
        b->cap = c;
    }
}
static void buf_put(Buf *b, const void *s, size_t n) {
    buf_reserve(b, n);
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}
static void buf_puts(Buf *b, const char *s) { buf_put(b, s, strlen(s)); }
static void buf_printf(Buf *b, const char *fmt, ...) {
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (k < 0) return;
    if ((size_t)k < sizeof tmp) {
        buf_put(b, tmp, (size_t)k);
        return;
    }
    buf_reserve(b, (size_t)k);
    va_start(ap, fmt);
    vsnprintf(b->p + b->n, (size_t)k + 1, fmt, ap);
    va_end(ap);
    b->n += (size_t)k;
}

/* ------------------------------------------------------------------ JSON */

enum { J_NULL, J_FALSE, J_TRUE, J_NUM, J_STR, J_ARR, J_OBJ };

typedef struct JV {
    int type;
    char *s;      /* J_STR: decoded bytes (WTF-8); J_NUM: raw token text */
    size_t slen;
    double num;
    struct JV *items; /* J_ARR / J_OBJ values */
    char **keys;      /* J_OBJ keys (NUL-terminated, decoded) */
    size_t n;
} JV;

typedef struct {
    const char *p, *end;
    int depth;
} JP;

static void jv_free(JV *v) {
    if (!v) return;
    free(v->s);
    for (size_t i = 0; i < v->n; i++) {
        jv_free(&v->items[i]);
        if (v->keys) free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
}

static void jp_ws(JP *j) {
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')) j->p++;
}

static void put_utf8(Buf *b, uint32_t cp) {
    unsigned char t[4];
    size_t k;
    if (cp < 0x80) {
        t[0] = (unsigned char)cp;
        k = 1;
    } else if (cp < 0x800) {
        t[0] = (unsigned char)(0xC0 | (cp >> 6));
        t[1] = (unsigned char)(0x80 | (cp & 0x3F));
        k = 2;
    } else if (cp < 0x10000) {
        t[0] = (unsigned char)(0xE0 | (cp >> 12));
        t[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        t[2] = (unsigned char)(0x80 | (cp & 0x3F));
        k = 3;
    } else {
        t[0] = (unsigned char)(0xF0 | (cp >> 18));
        t[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
        t[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        t[3] = (unsigned char)(0x80 | (cp & 0x3F));
        k = 4;
    }
    buf_put(b, t, k);
}

static int hex4(const char *p, const char *end, uint32_t *out) {
    uint32_t v = 0;
    if (end - p < 4) return -1;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (uint32_t)(c - 'A' + 10);
        else return -1;
    }
    *out = v;
    return 0;
}

static int jp_string(JP *j, char **out, size_t *outlen) {
    Buf b = {0};
    j->p++; /* opening quote */
    while (j->p < j->end && *j->p != '"') {
        unsigned char c = (unsigned char)*j->p;
        if (c == '\\') {
            j->p++;
            if (j->p >= j->end) break;
            char e = *j->p++;
            switch (e) {
            case '"': buf_put(&b, "\"", 1); break;
            case '\\': buf_put(&b, "\\", 1); break;
            case '/': buf_put(&b, "/", 1); break;
            case 'b': buf_put(&b, "\b", 1); break;
            case 'f': buf_put(&b, "\f", 1); break;
            case 'n': buf_put(&b, "\n", 1); break;
            case 'r': buf_put(&b, "\r", 1); break;
            case 't': buf_put(&b, "\t", 1); break;
            case 'u': {
                uint32_t cp;
                if (hex4(j->p, j->end, &cp)) goto bad;
                j->p += 4;
                if (cp >= 0xD800 && cp <= 0xDBFF && j->end - j->p >= 6 && j->p[0] == '\\' && j->p[1] == 'u') {
                    uint32_t lo;
                    if (hex4(j->p + 2, j->end, &lo) == 0 && lo >= 0xDC00 && lo <= 0xDFFF) {
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                        j->p += 6;
                    }
                }
#if BUG == 19
                put_utf8(&b, (cp >= 0xD800 && cp <= 0xDFFF) ? 0xFFFD : cp);
#else
                put_utf8(&b, cp); /* a lone surrogate stays as its 3-byte WTF-8 form */
#endif

                break;
            }
            default: goto bad;
            }
        } else {
            buf_put(&b, j->p, 1);
            j->p++;
        }
    }
    if (j->p >= j->end) goto bad;
    j->p++;
    if (!b.p) {
        b.p = xmalloc(1);
        b.p[0] = 0;
    }
    *out = b.p;
    *outlen = b.n;
    return 0;
bad:
    free(b.p);
    return -1;
}

static int jp_value(JP *j, JV *v) {
    memset(v, 0, sizeof *v);
    jp_ws(j);
    if (j->p >= j->end) return -1;
    if (++j->depth > 200) return -1;
    char c = *j->p;
    int rc = 0;
    if (c == '{' || c == '[') {
        int obj = c == '{';
        v->type = obj ? J_OBJ : J_ARR;
        j->p++;
        size_t cap = 0;
        jp_ws(j);
        if (j->p < j->end && *j->p == (obj ? '}' : ']')) {
            j->p++;
            j->depth--;
            return 0;
        }
        for (;;) {
            char *key = NULL;
            size_t klen;
            jp_ws(j);
            if (obj) {
                if (j->p >= j->end || *j->p != '"' || jp_string(j, &key, &klen)) return -1;
                jp_ws(j);
                if (j->p >= j->end || *j->p != ':') {
                    free(key);
                    return -1;
                }
                j->p++;
            }
            if (v->n == cap) {
                cap = cap ? cap * 2 : 8;
                v->items = xrealloc(v->items, cap * sizeof(JV));
                if (obj) v->keys = xrealloc(v->keys, cap * sizeof(char *));
            }
            if (obj) v->keys[v->n] = key;
            if (jp_value(j, &v->items[v->n])) {
                v->n++;
                return -1;
            }
            v->n++;
            jp_ws(j);
            if (j->p >= j->end) return -1;
            if (*j->p == ',') {
                j->p++;
                continue;
            }
            if (*j->p == (obj ? '}' : ']')) {
                j->p++;
                break;
            }
            return -1;
        }
    } else if (c == '"') {
        v->type = J_STR;
        rc = jp_string(j, &v->s, &v->slen);
    } else if (c == 't' && j->end - j->p >= 4 && !memcmp(j->p, "true", 4)) {
        v->type = J_TRUE;
        j->p += 4;
    } else if (c == 'f' && j->end - j->p >= 5 && !memcmp(j->p, "false", 5)) {
        v->type = J_FALSE;
        j->p += 5;
    } else if (c == 'n' && j->end - j->p >= 4 && !memcmp(j->p, "null", 4)) {
        v->type = J_NULL;
        j->p += 4;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
        const char *s = j->p;
        while (j->p < j->end && strchr("+-0123456789.eE", *j->p)) j->p++;
        v->type = J_NUM;
        v->slen = (size_t)(j->p - s);
        v->s = xmalloc(v->slen + 1);
        memcpy(v->s, s, v->slen);
        v->s[v->slen] = 0;
        char *e;
        v->num = strtod(v->s, &e);
        if (*e) rc = -1;
    } else {
        rc = -1;
    }
    j->depth--;
    return rc;
}

static JV *jget(JV *o, const char *key) {
    if (!o || o->type != J_OBJ) return NULL;
    for (size_t i = 0; i < o->n; i++)
        if (!strcmp(o->keys[i], key)) return &o->items[i];
    return NULL;
}

/* JSON string output: ASCII only, \u escapes for everything else (lone surrogates included). */
static void put_jstr(Buf *b, const char *s, size_t n) {
    buf_put(b, "\"", 1);
    size_t i = 0;
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x80) {
            if (c == '"') buf_puts(b, "\\\"");
            else if (c == '\\') buf_puts(b, "\\\\");
            else if (c == '\n') buf_puts(b, "\\n");
            else if (c == '\r') buf_puts(b, "\\r");
            else if (c == '\t') buf_puts(b, "\\t");
            else if (c < 0x20 || c == 0x7F) buf_printf(b, "\\u%04x", c);
            else buf_put(b, &s[i], 1);
            i++;
            continue;
        }
        uint32_t cp;
        size_t k;
        if ((c & 0xE0) == 0xC0 && i + 1 < n) {
            cp = ((uint32_t)(c & 0x1F) << 6) | (s[i + 1] & 0x3F);
            k = 2;
        } else if ((c & 0xF0) == 0xE0 && i + 2 < n) {
            cp = ((uint32_t)(c & 0x0F) << 12) | ((uint32_t)(s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3F);
            k = 3;
        } else if ((c & 0xF8) == 0xF0 && i + 3 < n) {
            cp = ((uint32_t)(c & 0x07) << 18) | ((uint32_t)(s[i + 1] & 0x3F) << 12) |
                 ((uint32_t)(s[i + 2] & 0x3F) << 6) | (s[i + 3] & 0x3F);
            k = 4;
        } else {
            cp = 0xFFFD;
            k = 1;
        }
        if (cp >= 0x10000) {
            uint32_t v = cp - 0x10000;
#if BUG == 20
            (void)v;
            buf_printf(b, "\\u%04x", cp);
#else
            buf_printf(b, "\\u%04x\\u%04x", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
#endif

        } else {
            buf_printf(b, "\\u%04x", cp);
        }
        i += k;
    }
    buf_put(b, "\"", 1);
}

/* ------------------------------------------------------------------ base64 */

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void b64_encode(Buf *b, const unsigned char *d, size_t n) {
    buf_reserve(b, (n + 2) / 3 * 4 + 2);
    size_t i = 0;
    for (; i + 2 < n; i += 3) {
        uint32_t v = ((uint32_t)d[i] << 16) | ((uint32_t)d[i + 1] << 8) | d[i + 2];
        char t[4] = {B64[v >> 18], B64[(v >> 12) & 63], B64[(v >> 6) & 63], B64[v & 63]};
        buf_put(b, t, 4);
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)d[i] << 16;
        char t[4] = {B64[v >> 18], B64[(v >> 12) & 63], '=', '='};
        buf_put(b, t, 4);
    } else if (n - i == 2) {
        uint32_t v = ((uint32_t)d[i] << 16) | ((uint32_t)d[i + 1] << 8);
        char t[4] = {B64[v >> 18], B64[(v >> 12) & 63], B64[(v >> 6) & 63], '='};
        buf_put(b, t, 4);
    }
}

static int b64_val(unsigned char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;
    if (c == '/' || c == '_') return 63;
    return -1;
}

static int b64_decode(const char *s, size_t n, unsigned char **out, size_t *outlen, const char *what) {
    while (n > 0 && s[n - 1] == '=') n--;
    if (n % 4 == 1) return fail("%s: not valid base64 (length)", what);
    unsigned char *o = xmalloc(n / 4 * 3 + 3);
    size_t k = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        int v = b64_val((unsigned char)s[i]);
        if (v < 0) {
            free(o);
            return fail("%s: not valid base64 (character %zu)", what, i);
        }
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            o[k++] = (unsigned char)(acc >> bits);
        }
    }
    *out = o;
    *outlen = k;
    return 0;
}

/* ------------------------------------------------------------------ arrays */

typedef struct {
    size_t rank;
    size_t shape[8];
    size_t count;
    float *f;        /* values as float32 */
    int64_t *i;      /* the int64 values, when dtype is int64 */
} Arr;

static uint32_t le32(const unsigned char *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static uint64_t le64(const unsigned char *p) { return (uint64_t)le32(p) | ((uint64_t)le32(p + 4) << 32); }
static uint16_t le16(const unsigned char *p) { return (uint16_t)(p[0] | (p[1] << 8)); }

static void put_le32(unsigned char *p, uint32_t v) {
    for (int k = 0; k < 4; k++) p[k] = (unsigned char)(v >> (8 * k));
}
static void put_le64(unsigned char *p, uint64_t v) {
    for (int k = 0; k < 8; k++) p[k] = (unsigned char)(v >> (8 * k));
}

/* exact: 1 = the caller needs values exact in float32 (codec input), 0 = round (embeddings, SPEC §2.4) */
static int parse_array(JV *v, const char *name, Arr *a, int exact) {
    memset(a, 0, sizeof *a);
    if (!v || v->type != J_OBJ) return fail("%s: expected an array object {dtype, shape, data}", name);
    JV *dt = jget(v, "dtype"), *sh = jget(v, "shape"), *da = jget(v, "data");
    if (!dt || dt->type != J_STR || !sh || sh->type != J_ARR || !da || da->type != J_STR)
        return fail("%s: expected an array object {dtype, shape, data}", name);
    int kind; /* 0 f32, 1 f64, 2 i64 */
    size_t isz;
    if (!strcmp(dt->s, "float32") || !strcmp(dt->s, "<f4")) kind = 0, isz = 4;
    else if (!strcmp(dt->s, "float64") || !strcmp(dt->s, "<f8")) kind = 1, isz = 8;
    else if (!strcmp(dt->s, "int64") || !strcmp(dt->s, "<i8")) kind = 2, isz = 8;
    else return fail("%s: dtype %s is not supported (float32, float64 or int64)", name, dt->s);
    if (sh->n > 8) return fail("%s: rank %zu is too large", name, sh->n);
    a->rank = sh->n;
    size_t count = 1;
    for (size_t k = 0; k < sh->n; k++) {
        JV *d = &sh->items[k];
        if (d->type != J_NUM || d->num < 0 || d->num != floor(d->num) || d->num > 1e15)
            return fail("%s: shape entry %zu is not a non-negative integer", name, k);
        a->shape[k] = (size_t)d->num;
        if (a->shape[k] && count > SIZE_MAX / 16 / a->shape[k]) return fail("%s: shape too large", name);
        count *= a->shape[k];
    }
    a->count = count;
    unsigned char *raw;
    size_t rlen;
    if (b64_decode(da->s, da->slen, &raw, &rlen, name)) return -1;
    if (rlen != count * isz) {
        free(raw);
        return fail("%s: %zu data bytes for shape of %zu values of %zu bytes", name, rlen, count, isz);
    }
    a->f = xmalloc(count * sizeof(float));
    if (kind == 2) a->i = xmalloc(count * sizeof(int64_t));
    for (size_t k = 0; k < count; k++) {
        if (kind == 0) {
            uint32_t u = le32(raw + 4 * k);
            memcpy(&a->f[k], &u, 4);
        } else if (kind == 1) {
            uint64_t u = le64(raw + 8 * k);
            double d;
            memcpy(&d, &u, 8);
            float f = (float)d;
            if (exact && !isnan(d) && (double)f != d) {
                free(raw);
                return fail("%s: value %zu (%.17g) is not exact in float32", name, k, d);
            }
            a->f[k] = f;
        } else {
            int64_t iv = (int64_t)le64(raw + 8 * k);
            a->i[k] = iv;
            float f = (float)iv;
            if (exact && (int64_t)(double)f != iv) {
                free(raw);
                return fail("%s: value %zu (%lld) is not exact in float32", name, k, (long long)iv);
            }
            a->f[k] = f;
        }
    }
    free(raw);
    return 0;
}

static void arr_free(Arr *a) {
    free(a->f);
    free(a->i);
}

static void put_int64_array(Buf *b, const int64_t *v, size_t n) {
    unsigned char *raw = xmalloc(n * 8);
    for (size_t k = 0; k < n; k++) put_le64(raw + 8 * k, (uint64_t)v[k]);
    buf_printf(b, "{\"dtype\": \"int64\", \"shape\": [%zu], \"data\": \"", n);
    b64_encode(b, raw, n * 8);
    buf_puts(b, "\"}");
    free(raw);
}

static void put_float32_array(Buf *b, const float *v, size_t n) {
    unsigned char *raw = xmalloc(n * 4);
    for (size_t k = 0; k < n; k++) {
        uint32_t u;
        memcpy(&u, &v[k], 4);
        put_le32(raw + 4 * k, u);
    }
    buf_printf(b, "{\"dtype\": \"float32\", \"shape\": [%zu], \"data\": \"", n);
    b64_encode(b, raw, n * 4);
    buf_puts(b, "\"}");
    free(raw);
}

/* t or eb: a JSON number or "nan" / "inf" / "-inf" */
static int parse_real(JV *v, const char *name, double *out) {
    if (!v) return fail("%s is missing", name);
    if (v->type == J_NUM) {
        *out = v->num;
        return 0;
    }
    if (v->type == J_STR) {
        if (!strcmp(v->s, "nan")) *out = NAN;
        else if (!strcmp(v->s, "inf")) *out = INFINITY;
        else if (!strcmp(v->s, "-inf")) *out = -INFINITY;
        else return fail("%s must be a real number, got '%s'", name, v->s);
        return 0;
    }
    return fail("%s must be a real number", name);
}

/* ------------------------------------------------------------------ L1: the merge rule (SPEC §2, §5, §6) */

static int threshold_delta_sq(double t, double *d2) {
#if BUG == 7
    if (t < -1.0 || t > 1.0) return fail("t must be in [-1, 1], got %g", t);
#else
    if (!(t >= -1.0 && t <= 1.0)) return fail("t must be in [-1, 1], got %g", t);
#endif

#if BUG == 1
    /* float instead of double for δ² */
    *d2 = (float)(2.0f - 2.0f * (float)t);
#else
    *d2 = 2.0 - 2.0 * t;
#endif
    return 0;
}

/* SPEC §2.3: shape (N, D), D > 0, finite, non-zero, |‖e‖ - 1| <= 1e-4 */
static int validate_rows(const Arr *a, const char *name) {
#if BUG == 6
    if (a->rank < 2) return fail("%s must have rank 2 (N, D), got rank %zu", name, a->rank);
#else
    if (a->rank != 2) return fail("%s must have rank 2 (N, D), got rank %zu", name, a->rank);
#endif

    size_t N = a->shape[0], D = a->shape[1];
    if (D == 0) return fail("%s has D = 0", name);
#if BUG == 8
    for (size_t i = 0; i + 1 < N; i++) {
        const float *r = a->f + i * D;
#else
    for (size_t i = 0; i < N; i++) {
        const float *r = a->f + i * D;
#endif

        double s = 0.0;
        for (size_t k = 0; k < D; k++) {
            if (!isfinite(r[k])) return fail("%s row %zu is not finite", name, i);
            s += (double)r[k] * (double)r[k];
        }
        if (s == 0.0) return fail("%s row %zu is a zero row", name, i);
        double nrm = sqrt(s);
#if BUG == 2
        if (abs((int)(nrm - 1.0)) > 1e-4) return fail("%s row %zu has norm %.9g, off 1 by more than 1e-4", name, i, nrm);
#else
        if (fabs(nrm - 1.0) > 1e-4) return fail("%s row %zu has norm %.9g, off 1 by more than 1e-4", name, i, nrm);
#endif

    }
    return 0;
}

typedef struct {
    int64_t handle;
    int open;
    double t, d2;
    long long D; /* -1: no accepted turn yet */
    float *rows; /* retained rows */
    int64_t *ids;
    size_t nret, cap;
    int64_t next_id;
} Session;

static double sq_dist(const float *a, const float *b, size_t D, double limit) {
    double s = 0.0;
    for (size_t k = 0; k < D; k++) {
#if BUG == 10
        double d = (double)(a[k] - b[k]);
#else
        double d = (double)a[k] - (double)b[k];
#endif

        s += d * d;
#if BUG == 9
        if (s >= limit) return limit + 1.0; /* partial sums only grow */
#else
        if (s > limit) return s; /* partial sums only grow */
#endif

    }
    return s;
}

/* Admit validated rows: lowest retained id within δ represents each arrival (SPEC §5.1, §6.1). */
static void admit_rows(Session *s, const float *E, size_t N, size_t D, int64_t *out) {
    for (size_t i = 0; i < N; i++) {
        const float *x = E + i * D;
        int64_t rep = -1;
        for (size_t r = 0; r < s->nret; r++) {
            double sq = sq_dist(s->rows + r * D, x, D, s->d2);
#if BUG == 3
            if (sq <= s->d2) {
                rep = s->ids[r];
            }
#else
            if (sq <= s->d2) {
                rep = s->ids[r];
                break;
            }
#endif

        }
        if (rep < 0) {
            if (s->nret == s->cap) {
                s->cap = s->cap ? s->cap * 2 : 64;
                s->rows = xrealloc(s->rows, s->cap * D * sizeof(float));
                s->ids = xrealloc(s->ids, s->cap * sizeof(int64_t));
            }
            memcpy(s->rows + s->nret * D, x, D * sizeof(float));
            s->ids[s->nret++] = s->next_id;
            rep = s->next_id;
        }
#if BUG == 11
        out[i] = rep;
        if (rep == s->next_id) s->next_id++;
#else
        out[i] = rep;
        s->next_id++;
#endif

    }
}

/* ------------------------------------------------------------------ sessions table */

static Session *g_sess;
static size_t g_nsess, g_capsess;
static int64_t g_next_handle = 1;

static Session *find_session(JV *h) {
    if (!h || h->type != J_NUM) {
        fail("session must be a handle returned by session_open");
        return NULL;
    }
    for (size_t k = 0; k < g_nsess; k++)
        if (g_sess[k].open && (double)g_sess[k].handle == h->num) return &g_sess[k];
    fail("session %s is not open", h->s);
    return NULL;
}

/* ------------------------------------------------------------------ L0 (SPEC §7, §8.1) */

#define STUB_PREFIX "[LAM:"

static int is_ws_cp(uint32_t c) {
#if BUG == 15
    return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85
#else
    return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85
#endif
 || c == 0xA0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
#if BUG == 14
           c == 0x3000 || c == 0x200B || c == 0xFEFF;
}
#else
           c == 0x3000;
}
#endif


static int is_blank(const char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        uint32_t cp;
        size_t k;
        if (c < 0x80) cp = c, k = 1;
        else if ((c & 0xE0) == 0xC0 && i + 1 < n) cp = ((uint32_t)(c & 0x1F) << 6) | (s[i + 1] & 0x3F), k = 2;
        else if ((c & 0xF0) == 0xE0 && i + 2 < n)
            cp = ((uint32_t)(c & 0x0F) << 12) | ((uint32_t)(s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3F), k = 3;
        else if ((c & 0xF8) == 0xF0 && i + 3 < n)
            cp = ((uint32_t)(c & 0x07) << 18) | ((uint32_t)(s[i + 1] & 0x3F) << 12) |
                 ((uint32_t)(s[i + 2] & 0x3F) << 6) | (s[i + 3] & 0x3F),
            k = 4;
        else return 0;
#if BUG == 13
        if (!(cp < 0x80 && (cp == ' ' || (cp >= 0x09 && cp <= 0x0D)))) return 0;
#else
        if (!is_ws_cp(cp)) return 0;
#endif

        i += k;
    }
    return 1;
}

typedef struct {
    char *s;
    size_t n;
    uint64_t h;
    long rec, line;
    int used;
} SeenSlot;

typedef struct {
    SeenSlot *t;
    size_t cap, cnt;
} Seen;

static uint64_t hash_bytes(const char *s, size_t n) {
    uint64_t h = 1469598103934665603ULL; /* FNV-1a 64 */
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return h;
}

static void seen_grow(Seen *S);
static SeenSlot *seen_find(Seen *S, const char *s, size_t n, uint64_t h) {
    size_t m = S->cap - 1;
    for (size_t i = (size_t)h & m;; i = (i + 1) & m) {
        SeenSlot *e = &S->t[i];
        if (!e->used) return e;
        if (e->h == h && e->n == n && !memcmp(e->s, s, n)) return e;
    }
}
static void seen_grow(Seen *S) {
    Seen N = {0};
    N.cap = S->cap ? S->cap * 2 : 1024;
    N.t = calloc(N.cap, sizeof(SeenSlot));
    if (!N.t) exit(3);
    for (size_t i = 0; i < S->cap; i++)
        if (S->t[i].used) *seen_find(&N, S->t[i].s, S->t[i].n, S->t[i].h) = S->t[i];
    N.cnt = S->cnt;
    free(S->t);
    *S = N;
}

static int op_dedup_lines(JV *req, Buf *res) {
    JV *recs = jget(req, "records");
    if (!recs || recs->type != J_ARR) return fail("records must be a list of strings");
    for (size_t r = 0; r < recs->n; r++)
        if (recs->items[r].type != J_STR) return fail("records[%zu] is not a string", r);
    Seen S = {0};
    seen_grow(&S);
    const size_t plen = strlen(STUB_PREFIX);
    buf_puts(res, "{\"records\": [");
    for (size_t r = 0; r < recs->n; r++) {
        const char *t = recs->items[r].s;
        size_t n = recs->items[r].slen;
        Buf out = {0};
        long outline = 0;
#if BUG == 17
        static long run = 0, run_rec = 0, run_line = 0;
#else
        long run = 0, run_rec = 0, run_line = 0;
#endif
        size_t start = 0;
        for (;;) {
            const char *nl = memchr(t + start, '\n', n - start);
            size_t end = nl ? (size_t)(nl - t) : n;
            const char *ln = t + start;
            size_t ll = end - start;
#if BUG == 21
            size_t sk = 0;
            while (sk < ll && (ln[sk] == ' ' || ln[sk] == '\t')) sk++;
            int prot = is_blank(ln, ll) || (ll - sk >= plen && !memcmp(ln + sk, STUB_PREFIX, plen));
#else
            int prot = is_blank(ln, ll) || (ll >= plen && !memcmp(ln, STUB_PREFIX, plen));
#endif

            SeenSlot *e = NULL;
            uint64_t h = 0;
            if (!prot) {
                h = hash_bytes(ln, ll);
                e = seen_find(&S, ln, ll, h);
            }
            if (!prot && e->used) {
                if (run == 0) run_rec = e->rec, run_line = e->line;
                run++;
            } else {
                if (run) {
                    if (outline) buf_put(&out, "\n", 1);
#if BUG == 16
                    buf_printf(&out, STUB_PREFIX "L0 %ld lines=r%ld:%ld]", run, run_rec, run_line);
                    run = 0;
#else
                    buf_printf(&out, STUB_PREFIX "L0 %ld lines=r%ld:%ld]", run, run_rec, run_line);
                    outline++;
                    run = 0;
#endif

                }
                if (outline) buf_put(&out, "\n", 1);
                buf_put(&out, ln, ll);
                if (!prot) {
                    e->used = 1;
                    e->s = xmalloc(ll + 1);
                    memcpy(e->s, ln, ll);
                    e->n = ll;
                    e->h = h;
                    e->rec = (long)r;
                    e->line = outline;
                    if (++S.cnt * 2 > S.cap) seen_grow(&S);
                }
                outline++;
            }
#if BUG == 18
            if (!nl || end + 1 == n) break;
            start = end + 1;
#else
            if (!nl) break;
            start = end + 1;
#endif

        }
#if BUG == 17
        if (run && r + 1 == recs->n) {
            if (outline) buf_put(&out, "\n", 1);
            buf_printf(&out, STUB_PREFIX "L0 %ld lines=r%ld:%ld]", run, run_rec, run_line);
        }
#else
        if (run) {
            if (outline) buf_put(&out, "\n", 1);
            buf_printf(&out, STUB_PREFIX "L0 %ld lines=r%ld:%ld]", run, run_rec, run_line);
        }
#endif

        if (r) buf_puts(res, ", ");
        put_jstr(res, out.p ? out.p : "", out.n);
        free(out.p);
    }
    buf_puts(res, "]}");
    for (size_t i = 0; i < S.cap; i++) free(S.t[i].s);
    free(S.t);
    return 0;
}

/* ------------------------------------------------------------------ CRC-32 (zlib polynomial) */

static uint32_t crc_table[256];
static void crc_init(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[i] = c;
    }
}
static uint32_t crc32_update(uint32_t crc, const unsigned char *p, size_t n) {
    crc = ~crc;
    for (size_t i = 0; i < n; i++) crc = crc_table[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
    return ~crc;
}

/* ------------------------------------------------------------------ L2 codec (SPEC §9, docs/codec.md) */

#define QMAX 2147483647LL

static int eb_valid(double eb) { return eb > 0 && isfinite(2.0 * eb); }

static int bit_length(uint64_t v) {
    int b = 0;
    while (v) {
        b++;
        v >>= 1;
    }
    return b;
}

/* the v1 quantizer: round half up on the float64 quotient */
static int quantize(float x, double s, int64_t *q, size_t idx) {
    double y = (double)x / s;
    double f = floor(y);
    if (f > (double)QMAX || f < -(double)QMAX - 1.0)
        return fail("x[%zu] = %.9g: code beyond 2^31 - 1 at this eb (eb too small for the data)", idx, (double)x);
#if BUG == 22
    int64_t v = (int64_t)lround(y);
#else
#if BUG == 33
    int64_t v = (int64_t)f + (y - f > 0.5 ? 1 : 0);
#else
    int64_t v = (int64_t)f + (y - f >= 0.5 ? 1 : 0);
#endif

#endif

    if (v > QMAX || v < -QMAX)
        return fail("x[%zu] = %.9g: code beyond 2^31 - 1 at this eb (eb too small for the data)", idx, (double)x);
    *q = v;
    return 0;
}

static int reconstruct(int64_t q, double s, float *out) {
    float v = (float)((double)q * s);
    if (isinf(v)) return fail("a reconstruction overflows float32 (code %lld)", (long long)q);
    *out = v;
    return 0;
}

static void write_header(unsigned char *h, int version, int flags, unsigned bs, uint64_t n, double eb) {
    memcpy(h, "LSZP", 4);
    h[4] = (unsigned char)version;
    h[5] = (unsigned char)flags;
    h[6] = (unsigned char)(bs & 0xFF);
    h[7] = (unsigned char)(bs >> 8);
    put_le64(h + 8, n);
    uint64_t u;
    memcpy(&u, &eb, 8);
    put_le64(h + 16, u);
}

#if BUG == 23
static int codec_encode_v1(const float *x, size_t n, double eb, Buf *out) {
    const unsigned B = 32;
    double s = 2.0 * (float)eb;
#else
static int codec_encode_v1(const float *x, size_t n, double eb, Buf *out) {
    const unsigned B = 32;
    double s = 2.0 * eb;
#endif

    int64_t *q = xmalloc((n ? n : 1) * sizeof(int64_t));
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x[i])) {
            free(q);
            return fail("x[%zu] is not finite", i);
        }
        float tmp;
#if BUG == 32
        (void)tmp;
        if (quantize(x[i], s, &q[i], i)) {
#else
        if (quantize(x[i], s, &q[i], i) || reconstruct(q[i], s, &tmp)) {
#endif

            free(q);
            return -1;
        }
    }
#if BUG == 34
    size_t nb = n / B + 1;
    Buf body = {0};
#else
    size_t nb = (n + B - 1) / B;
    Buf body = {0};
#endif

    buf_reserve(&body, nb);
    unsigned char *rates = xmalloc(nb ? nb : 1);
    Buf pay = {0};
    for (size_t b = 0; b < nb; b++) {
        uint64_t mag[4096];
        int neg[4096];
        uint64_t mx = 0;
        for (unsigned j = 0; j < B; j++) {
            size_t i = b * B + j;
            int64_t d = 0;
#if BUG == 26
            if (i < n) d = (j == 0) ? q[i] : q[i] - q[i - 1];
            else d = (i == n && j > 0) ? -q[n - 1] : 0; /* padding values are q = 0 */
#else
            if (i < n) d = (j == 0) ? q[i] : q[i] - q[i - 1];
#endif

            neg[j] = d < 0;
            mag[j] = (uint64_t)(d < 0 ? -d : d);
#if BUG == 24
            if (d > (int64_t)mx) mx = (uint64_t)d;
#else
            if (mag[j] > mx) mx = mag[j];
#endif

        }
        int r = bit_length(mx);
        rates[b] = (unsigned char)r;
        if (r == 0) continue;
        unsigned char plane[512];
        memset(plane, 0, B / 8);
        for (unsigned j = 0; j < B; j++)
#if BUG == 25
            if (neg[j]) plane[j / 8] |= (unsigned char)(1u << (j % 8));
#else
            if (neg[j]) plane[j / 8] |= (unsigned char)(0x80u >> (j % 8));
#endif

        buf_put(&pay, plane, B / 8);
        for (int p = 0; p < r; p++) {
            memset(plane, 0, B / 8);
            for (unsigned j = 0; j < B; j++)
                if ((mag[j] >> p) & 1) plane[j / 8] |= (unsigned char)(0x80u >> (j % 8));
            buf_put(&pay, plane, B / 8);
        }
    }
    buf_put(&body, rates, nb);
    if (pay.n) buf_put(&body, pay.p, pay.n);
    unsigned char h[28];
    write_header(h, 1, 0, B, (uint64_t)n, eb);
#if BUG == 27
    uint32_t crc = crc32_update(0, (unsigned char *)body.p, body.n);
#else
    uint32_t crc = crc32_update(0, h, 24);
    crc = crc32_update(crc, (unsigned char *)body.p, body.n);
#endif

    put_le32(h + 24, crc);
    buf_put(out, h, 28);
    if (body.n) buf_put(out, body.p, body.n);
    free(body.p);
    free(pay.p);
    free(rates);
    free(q);
    return 0;
}

static int decode_v1(const unsigned char *d, size_t len, uint64_t n64, unsigned B, double eb, float **xout) {
#if BUG == 30
    if (B < 8 || B >= 4096 || B % 8) return fail(
#else
    if (B < 8 || B > 4096 || B % 8) return fail(
#endif
"data: block size %u out of range (a multiple of 8 in [8, 4096])", B);
    uint64_t nb = n64 / B + (n64 % B != 0);
    size_t avail = len - 28;
    if (nb > avail) return fail("data: truncated (n = %llu needs %llu rate bytes, %zu bytes left)",
                                (unsigned long long)n64, (unsigned long long)nb, avail);
    const unsigned char *rates = d + 28;
    uint64_t need = nb;
    for (uint64_t b = 0; b < nb; b++) {
        if (rates[b] > 32) return fail("data: rate %u above 32 in block %llu", rates[b], (unsigned long long)b);
        if (rates[b]) need += (uint64_t)(B / 8) * (1 + rates[b]);
    }
    if (need > avail) return fail("data: truncated payload (%zu body bytes, %llu needed)", avail, (unsigned long long)need);
    if (need < avail) return fail("data: %llu trailing bytes", (unsigned long long)(avail - need));
    size_t n = (size_t)n64;
    double s = 2.0 * eb;
    float *x = xmalloc((n ? n : 1) * sizeof(float));
    const unsigned char *p = rates + nb;
    for (uint64_t b = 0; b < nb; b++) {
        int r = rates[b];
        size_t base = (size_t)b * B;
        if (r == 0) {
            for (unsigned j = 0; j < B && base + j < n; j++) x[base + j] = 0.0f;
            continue;
        }
        const unsigned char *sg = p;
        p += B / 8;
        int64_t q = 0;
        uint64_t mx = 0;
        for (unsigned j = 0; j < B; j++) {
            uint64_t m = 0;
            for (int k = 0; k < r; k++)
                if ((p[k * (B / 8) + j / 8] >> (7 - j % 8)) & 1) m |= (uint64_t)1 << k;
            int neg = (sg[j / 8] >> (7 - j % 8)) & 1;
            if (base + j >= n) {
                if (m || neg) {
                    free(x);
                    return fail("data: non-zero padding in block %llu", (unsigned long long)b);
                }
                continue;
            }
#if BUG == 28
#else
            if (neg && m == 0) {
                free(x);
                return fail("data: a sign bit on a zero delta at value %zu", base + j);
            }
#endif

            if (m > mx) mx = m;
            q += neg ? -(int64_t)m : (int64_t)m;
#if BUG == 31
            if (m > 0xFFFFFFFFull) {
                free(x);
                return fail("data: code beyond 2^31 - 1 at value %zu", base + j);
            }
#else
            if (q > QMAX || q < -QMAX) {
                free(x);
                return fail("data: code beyond 2^31 - 1 at value %zu", base + j);
            }
#endif

            if (reconstruct(q, s, &x[base + j])) {
                free(x);
                return -1;
            }
        }
#if BUG == 29
        if (bit_length(mx) > r) {
#else
        if (bit_length(mx) != r) {
#endif

            free(x);
            return fail("data: rate %d of block %llu is not the bit length of its largest delta", r,
                        (unsigned long long)b);
        }
        p += (size_t)r * (B / 8);
    }
    *xout = x;
    return 0;
}

/* ---- version 2 (docs/codec.md "Byte format (version 2)") */

typedef struct {
    const unsigned char *p;
    size_t nbits, pos; /* bit position */
} BitR;

static int br_bit(BitR *r, int *bit) {
    if (r->pos >= r->nbits) return -1;
    *bit = (r->p[r->pos / 8] >> (7 - r->pos % 8)) & 1;
    r->pos++;
    return 0;
}
static int br_bits(BitR *r, int k, uint64_t *v) {
    uint64_t x = 0;
    for (int i = 0; i < k; i++) {
        int b;
        if (br_bit(r, &b)) return -1;
        x = (x << 1) | (uint64_t)b;
    }
    *v = x;
    return 0;
}
/* after the last bit: the rest of the current byte must be zero; returns bytes consumed */
static int br_finish(BitR *r, size_t *bytes) {
    while (r->pos % 8) {
        int b;
        if (br_bit(r, &b)) return -1;
        if (b) return fail("data: non-zero padding bits");
    }
    *bytes = r->pos / 8;
    return 0;
}

#define NSYM 4116 /* 4096 direct symbols + escapes for bit lengths 13..32 */

/* code lengths: two-queue Huffman on (count, symbol), lone symbol 1, halve counts while > 15 */
static void huff_lengths(const uint64_t *cnt_in, int nsym, unsigned char *len) {
    uint64_t *cnt = xmalloc((size_t)nsym * sizeof(uint64_t));
    memcpy(cnt, cnt_in, (size_t)nsym * sizeof(uint64_t));
    int *sym = xmalloc((size_t)nsym * sizeof(int));
    uint64_t *w = xmalloc((size_t)2 * nsym * sizeof(uint64_t));
    int *parent = xmalloc((size_t)2 * nsym * sizeof(int));
    for (;;) {
        memset(len, 0, (size_t)nsym);
        int m = 0;
        for (int s = 0; s < nsym; s++)
            if (cnt[s]) sym[m++] = s;
        if (m == 0) break;
        if (m == 1) {
            len[sym[0]] = 1;
            break;
        }
        /* sort by (count, symbol): insertion sort is fine for the sizes here, but use qsort-free merge */
        for (int i = 1; i < m; i++) {
            int v = sym[i], j = i - 1;
            while (j >= 0 && (cnt[sym[j]] > cnt[v] || (cnt[sym[j]] == cnt[v] && sym[j] > v))) {
                sym[j + 1] = sym[j];
                j--;
            }
            sym[j + 1] = v;
        }
        for (int i = 0; i < m; i++) w[i] = cnt[sym[i]];
        int li = 0, mi = m, mend = m; /* merged nodes m .. mend-1 */
        for (int k = 0; k < m - 1; k++) {
            int pick[2];
            for (int t = 0; t < 2; t++) {
#if BUG == 37
                if (li < m && (mi >= mend || w[li] < w[mi])) pick[t] = li++;
#else
                if (li < m && (mi >= mend || w[li] <= w[mi])) pick[t] = li++;
#endif

                else pick[t] = mi++;
            }
            w[mend] = w[pick[0]] + w[pick[1]];
            parent[pick[0]] = parent[pick[1]] = mend;
            mend++;
        }
        int root = mend - 1;
        int *depth = xmalloc((size_t)mend * sizeof(int));
        depth[root] = 0;
        for (int v = root - 1; v >= 0; v--) depth[v] = depth[parent[v]] + 1;
        int mx = 0;
        for (int i = 0; i < m; i++) {
            len[sym[i]] = (unsigned char)depth[i];
            if (depth[i] > mx) mx = depth[i];
        }
        free(depth);
        if (mx <= 15) break;
        for (int s = 0; s < nsym; s++)
            if (cnt[s]) cnt[s] = (cnt[s] + 1) >> 1;
    }
    free(cnt);
    free(sym);
    free(w);
    free(parent);
}

typedef struct {
    int A;
    unsigned char len[NSYM];
    int count[16];
    int sorted[NSYM];
    int present;
} Table;

static int table_build(Table *t) {
    memset(t->count, 0, sizeof t->count);
    for (int s = 0; s < t->A; s++) t->count[t->len[s]]++;
    t->count[0] = 0;
    long left = 1;
    for (int l = 1; l <= 15; l++) {
        left <<= 1;
        left -= t->count[l];
        if (left < 0) return fail("data: over-subscribed code table");
    }
    int offs[16];
    offs[1] = 0;
    for (int l = 1; l < 15; l++) offs[l + 1] = offs[l] + t->count[l];
    for (int s = 0; s < t->A; s++)
        if (t->len[s]) t->sorted[offs[t->len[s]]++] = s;
    return 0;
}

static int table_decode(const Table *t, BitR *r, int *sym) {
    int code = 0, first = 0, index = 0;
    for (int l = 1; l <= 15; l++) {
        int b;
        if (br_bit(r, &b)) return fail("data: truncated bit stream");
        code |= b;
        int c = t->count[l];
        if (code - first < c) {
            *sym = t->sorted[index + code - first];
            return 0;
        }
        index += c;
        first += c;
        first <<= 1;
        code <<= 1;
    }
    return fail("data: a code not in the table (incomplete code hit by the bit stream)");
}

static int decode_v2(const unsigned char *d, size_t len, uint64_t n64, unsigned cols, int strict, double eb,
                     float **xout) {
    int rc = -1;
    size_t pos = 28;
    uint32_t *distinct = NULL; /* z codes of the distinct rows */
    uint64_t *rowref = NULL;
    Table *tabs = NULL;
    uint64_t *exidx = NULL;
    float *exval = NULL, *x = NULL;
    uint64_t *counts = NULL;
    if (cols == 0) return fail("data: cols = 0");
    if (n64 % cols) return fail("data: cols %u does not divide n = %llu", cols, (unsigned long long)n64);
    uint64_t rows = n64 / cols;
    uint64_t R = rows;
    size_t body = len - 28;
    if (rows > (uint64_t)body * 8) return fail("data: truncated (n = %llu)", (unsigned long long)n64);
    rowref = xmalloc((size_t)(rows ? rows : 1) * sizeof(uint64_t));
    if (cols >= 16) {
        if (len - pos < 8) {
            fail("data: truncated (row repeats)");
            goto out;
        }
        R = le64(d + pos);
        pos += 8;
        if (R > rows) {
            fail("data: %llu distinct rows for %llu rows", (unsigned long long)R, (unsigned long long)rows);
            goto out;
        }
        BitR br = {d + pos, (len - pos) * 8, 0};
        int ib = bit_length(R ? R - 1 : 0);
        uint64_t seen = 0;
        for (uint64_t r = 0; r < rows; r++) {
            int b;
            if (br_bit(&br, &b)) {
                fail("data: truncated (row repeats)");
                goto out;
            }
            if (b) {
                rowref[r] = seen++;
                if (seen > R) {
                    fail("data: more new rows than the distinct-row count %llu", (unsigned long long)R);
                    goto out;
                }
            } else {
                uint64_t k;
                if (br_bits(&br, ib, &k)) {
                    fail("data: truncated (row repeats)");
                    goto out;
                }
                if (k >= seen) {
                    fail("data: row %llu repeats a row not yet seen", (unsigned long long)r);
                    goto out;
                }
                rowref[r] = k;
            }
        }
        if (seen != R) {
            fail("data: %llu new rows but a distinct-row count of %llu", (unsigned long long)seen,
                 (unsigned long long)R);
            goto out;
        }
        size_t used;
        if (br_finish(&br, &used)) {
            if (!g_err[0]) fail("data: truncated (row repeats)");
            goto out;
        }
        pos += used;
    } else {
        for (uint64_t r = 0; r < rows; r++) rowref[r] = r;
    }
    if (len - pos < cols) {
        fail("data: truncated (column classes)");
        goto out;
    }
    const unsigned char *cls = d + pos;
    pos += cols;
    tabs = calloc(256, sizeof(Table));
    if (!tabs) exit(3);
    for (unsigned j = 0; j < cols; j++) tabs[cls[j]].present = 1;
    for (int c = 0; c < 256; c++) {
        if (!tabs[c].present) continue;
        if (len - pos < 2) {
            fail("data: truncated (code table)");
            goto out;
        }
        int A = le16(d + pos);
        pos += 2;
        if (A > NSYM) {
            fail("data: code table of %d symbols (at most %d)", A, NSYM);
            goto out;
        }
        size_t nb = ((size_t)A + 1) / 2;
        if (len - pos < nb) {
            fail("data: truncated (code lengths)");
            goto out;
        }
        tabs[c].A = A;
        for (int s = 0; s < A; s++) {
            unsigned char byte = d[pos + (size_t)s / 2];
#if BUG == 38
            tabs[c].len[s] = (s % 2 == 0) ? (byte & 0x0F) : (byte >> 4);
#else
            tabs[c].len[s] = (s % 2 == 0) ? (byte >> 4) : (byte & 0x0F);
#endif

        }
#if BUG == 38
        if (A % 2 && (d[pos + nb - 1] >> 4)) {
#else
        if (A % 2 && (d[pos + nb - 1] & 0x0F)) {
#endif

            fail("data: non-zero padding nibble in a code table");
            goto out;
        }
        pos += nb;
        if (table_build(&tabs[c])) goto out;
    }
    uint64_t E = 0;
    if (strict) {
        if (len - pos < 8) {
            fail("data: truncated (exceptions)");
            goto out;
        }
        E = le64(d + pos);
        pos += 8;
        if (E > (len - pos) / 12) {
            fail("data: truncated (%llu exceptions)", (unsigned long long)E);
            goto out;
        }
        exidx = xmalloc((size_t)(E ? E : 1) * sizeof(uint64_t));
        exval = xmalloc((size_t)(E ? E : 1) * sizeof(float));
        for (uint64_t k = 0; k < E; k++) {
            exidx[k] = le64(d + pos + 8 * k);
            if (exidx[k] >= n64 || (k && exidx[k] <= exidx[k - 1])) {
                fail("data: exception index %llu out of order or range", (unsigned long long)exidx[k]);
                goto out;
            }
        }
        pos += 8 * E;
        for (uint64_t k = 0; k < E; k++) {
            uint32_t u = le32(d + pos + 4 * k);
            memcpy(&exval[k], &u, 4);
            if (!isfinite(exval[k])) {
                fail("data: exception %llu is not finite", (unsigned long long)k);
                goto out;
            }
        }
        pos += 4 * E;
    }
    uint64_t nd = R * cols;
    if (nd > (uint64_t)(len - pos) * 8) {
        fail("data: truncated (bit stream)");
        goto out;
    }
    distinct = xmalloc((size_t)(nd ? nd : 1) * sizeof(uint32_t));
    counts = calloc((size_t)256 * NSYM, sizeof(uint64_t));
    if (!counts) exit(3);
    BitR br = {d + pos, (len - pos) * 8, 0};
    for (uint64_t k = 0; k < nd; k++) {
        unsigned j = (unsigned)(k % cols);
        const Table *t = &tabs[cls[j]];
        int sym = 0;
        if (table_decode(t, &br, &sym)) goto out;
        uint64_t z;
        if (sym < 4096) {
            z = (uint64_t)sym;
        } else {
            int bl = sym - 4096 + 13;
            uint64_t lowbits;
            if (br_bits(&br, bl - 1, &lowbits)) {
                fail("data: truncated bit stream (escape)");
                goto out;
            }
            z = ((uint64_t)1 << (bl - 1)) | lowbits;
        }
        if (z > 0xFFFFFFFEull) {
            fail("data: code beyond 2^31 - 1 at distinct value %llu", (unsigned long long)k);
            goto out;
        }
        distinct[k] = (uint32_t)z;
        counts[(size_t)cls[j] * NSYM + (size_t)sym]++;
    }
    size_t used;
    g_err[0] = 0;
    if (br_finish(&br, &used)) {
        if (!g_err[0]) fail("data: truncated bit stream");
        goto out;
    }
    if (pos + used != len) {
        fail("data: %zu bytes left over after the bit stream", len - pos - used);
        goto out;
    }
    /* canonical: classes and code lengths are those the rule derives */
    for (unsigned j = 0; j < cols; j++) {
        uint64_t sum = 0;
        for (uint64_t r = 0; r < R; r++) sum += distinct[r * cols + j];
#if BUG == 40
        uint64_t m = R ? (sum + R / 2) / R : 0;
#else
        uint64_t m = R ? sum / R : 0;
#endif

        if (bit_length(m * m) != cls[j]) {
            fail("data: column %u has class %u, the rule gives %d", j, cls[j], bit_length(m * m));
            goto out;
        }
    }
    for (int c = 0; c < 256; c++) {
        if (!tabs[c].present) continue;
        unsigned char want[NSYM];
        huff_lengths(counts + (size_t)c * NSYM, NSYM, want);
        int A = 0;
        for (int s = 0; s < NSYM; s++)
            if (want[s]) A = s + 1;
        if (A != tabs[c].A) {
            fail("data: code table of class %d has %d symbols, the rule gives %d", c, tabs[c].A, A);
            goto out;
        }
        for (int s = 0; s < A; s++)
            if (want[s] != tabs[c].len[s]) {
                fail("data: code length of symbol %d in class %d is not the canonical one", s, c);
                goto out;
            }
    }
    if (cols >= 16 && R > 1) { /* two distinct rows must differ */
        size_t cap = 16;
        while (cap < R * 2) cap *= 2;
        uint64_t *ht = malloc(cap * sizeof(uint64_t));
        if (!ht) exit(3);
        for (size_t i = 0; i < cap; i++) ht[i] = UINT64_MAX;
        for (uint64_t r = 0; r < R; r++) {
            const uint32_t *row = distinct + r * cols;
            uint64_t h = hash_bytes((const char *)row, cols * sizeof(uint32_t));
            size_t i = (size_t)h & (cap - 1);
            int dup = 0;
            while (ht[i] != UINT64_MAX) {
                if (!memcmp(distinct + ht[i] * cols, row, cols * sizeof(uint32_t))) {
                    dup = 1;
                    break;
                }
                i = (i + 1) & (cap - 1);
            }
            if (dup) {
                free(ht);
                fail("data: distinct rows %llu and %llu are equal", (unsigned long long)ht[i], (unsigned long long)r);
                goto out;
            }
            ht[i] = r;
        }
        free(ht);
    }
    size_t n = (size_t)n64;
    double s = 2.0 * eb;
    x = xmalloc((n ? n : 1) * sizeof(float));
    for (uint64_t r = 0; r < rows; r++)
        for (unsigned j = 0; j < cols; j++) {
            uint32_t z = distinct[rowref[r] * cols + j];
#if BUG == 39
            int64_t q = (z & 1) ? -(int64_t)(z >> 1) : (int64_t)(z >> 1);
#else
            int64_t q = (z & 1) ? -(int64_t)(z >> 1) - 1 : (int64_t)(z >> 1);
#endif

            if (q > QMAX || q < -QMAX) {
                fail("data: code beyond 2^31 - 1");
                goto out;
            }
            if (reconstruct(q, s, &x[r * cols + j])) goto out;
        }
    for (uint64_t k = 0; k < E; k++) {
        float plain = x[exidx[k]];
        float v = exval[k];
        if (v == plain) {
            fail("data: exception %llu equals its plain reconstruction", (unsigned long long)k);
            goto out;
        }
        if (fabs((double)v - (double)plain) <= eb) {
            fail("data: exception %llu is not needed (its plain reconstruction is within eb)", (unsigned long long)k);
            goto out;
        }
        /* Added after the round, when docs/codec.md's refusal list was completed (spec-decisions
           D-codec-refusals): an exception value must quantize to the stream's own code. */
        {
            uint64_t i = exidx[k];
            uint32_t z = distinct[rowref[i / cols] * cols + i % cols];
            int64_t q = (z & 1) ? -(int64_t)(z >> 1) - 1 : (int64_t)(z >> 1), qv;
            if (quantize(v, s, &qv, (size_t)i) || qv != q) {
                fail("data: exception %llu quantizes to another code than the stream's", (unsigned long long)k);
                goto out;
            }
        }
        x[exidx[k]] = v;
    }
    *xout = x;
    x = NULL;
    rc = 0;
out:
    free(distinct);
    free(rowref);
    free(tabs);
    free(exidx);
    free(exval);
    free(x);
    free(counts);
    return rc;
}

static int codec_decode(const unsigned char *d, size_t len, float **x, size_t *n) {
    if (len < 28) return fail("data: short header (%zu bytes, 28 needed)", len);
    if (memcmp(d, "LSZP", 4)) return fail("data: wrong magic");
    int version = d[4], flags = d[5];
    unsigned bs = le16(d + 6);
    uint64_t n64 = le64(d + 8);
    double eb;
    uint64_t u = le64(d + 16);
    memcpy(&eb, &u, 8);
    if (version != 1 && version != 2) return fail("data: unknown format version %d", version);
    if (version == 1 && flags != 0) return fail("data: flags %d (must be 0)", flags);
#if BUG == 36
#else
    if (version == 2 && (flags & ~1)) return fail("data: flags %d (only bit 0 is defined)", flags);
#endif

#if BUG == 35
#else
    if (!eb_valid(eb)) return fail("data: eb %g out of range", eb);
#endif

#if BUG == 27
    uint32_t crc = crc32_update(0, d + 28, len - 28);
#else
    uint32_t crc = crc32_update(0, d, 24);
    crc = crc32_update(crc, d + 28, len - 28);
#endif

    if (crc != le32(d + 24)) return fail("data: CRC mismatch");
    int rc = version == 1 ? decode_v1(d, len, n64, bs, eb, x) : decode_v2(d, len, n64, bs, flags & 1, eb, x);
    if (rc == 0) *n = (size_t)n64;
    return rc;
}

/* ------------------------------------------------------------------ ops */

static const char *PROFILES = "[\"core\", \"online\", \"l0\", \"l0-stubs\", \"codec-bound\", \"codec-v1\", \"codec-v2\"]";

static int op_hello(JV *req, Buf *res) {
    (void)req;
    buf_printf(res,
               "{\"protocol\": 1, \"name\": \"lam-c\", \"version\": \"0.1.0\", "
               "\"parts\": [\"substitute\", \"online\", \"lines\", \"codec\"], \"complete\": true, "
               "\"stub_prefix\": \"" STUB_PREFIX "\", \"target\": \"cpu\", \"profiles\": %s}",
               PROFILES);
    return 0;
}

static int op_substitute(JV *req, Buf *res) {
    double t, d2 = 0;
    if (parse_real(jget(req, "t"), "t", &t) || threshold_delta_sq(t, &d2)) return -1;
    Arr a;
    if (parse_array(jget(req, "embeddings"), "embeddings", &a, 0)) return -1;
    if (validate_rows(&a, "embeddings")) {
        arr_free(&a);
        return -1;
    }
    size_t N = a.shape[0], D = a.shape[1];
    Session s = {0};
    s.d2 = d2;
    s.D = (long long)D;
    int64_t *pi = xmalloc((N ? N : 1) * sizeof(int64_t));
    admit_rows(&s, a.f, N, D, pi);
    buf_puts(res, "{\"pi\": ");
    put_int64_array(res, pi, N);
    buf_puts(res, "}");
    free(pi);
    free(s.rows);
    free(s.ids);
    arr_free(&a);
    return 0;
}

static int op_session_open(JV *req, Buf *res) {
    double t, d2 = 0;
    if (parse_real(jget(req, "t"), "t", &t) || threshold_delta_sq(t, &d2)) return -1;
    if (g_nsess == g_capsess) {
        g_capsess = g_capsess ? g_capsess * 2 : 16;
        g_sess = xrealloc(g_sess, g_capsess * sizeof(Session));
    }
#if BUG == 5
    Session *s = NULL;
    for (size_t k = 0; k < g_nsess; k++)
        if (!g_sess[k].open) s = &g_sess[k];
    if (!s) { s = &g_sess[g_nsess++]; memset(s, 0, sizeof *s); }
#else
    Session *s = &g_sess[g_nsess++];
    memset(s, 0, sizeof *s);
#endif

    s->handle = g_next_handle++;
    s->open = 1;
    s->t = t;
    s->d2 = d2;
    s->D = -1;
    buf_printf(res, "{\"session\": %lld}", (long long)s->handle);
    return 0;
}

static int op_session_admit(JV *req, Buf *res) {
    Session *s = find_session(jget(req, "session"));
    if (!s) return -1;
    Arr a;
    if (parse_array(jget(req, "embeddings"), "embeddings", &a, 0)) return -1;
    if (validate_rows(&a, "embeddings")) {
        arr_free(&a);
        return -1;
    }
    size_t N = a.shape[0], D = a.shape[1];
    if (s->D >= 0 && (size_t)s->D != D) {
#if BUG == 12
        arr_free(&a);
        fail("embeddings: turn has D = %zu, the session's D is %lld", D, s->D);
        g_errtype = "IndexError";
        return -1;
#else
        arr_free(&a);
        return fail("embeddings: turn has D = %zu, the session's D is %lld", D, s->D);
#endif

    }
    s->D = (long long)D;
    int64_t *pi = xmalloc((N ? N : 1) * sizeof(int64_t));
    admit_rows(s, a.f, N, D, pi);
    buf_puts(res, "{\"pi\": ");
    put_int64_array(res, pi, N);
    buf_puts(res, "}");
    free(pi);
    arr_free(&a);
    return 0;
}

static int op_session_close(JV *req, Buf *res) {
    Session *s = find_session(jget(req, "session"));
    if (!s) return -1;
#if BUG == 5
    s->open = 0;
#else
    s->open = 0;
    free(s->rows);
    free(s->ids);
    s->rows = NULL;
    s->ids = NULL;
#endif

    buf_puts(res, "{}");
    return 0;
}

static int op_codec_encode(JV *req, Buf *res) {
    double eb;
    if (parse_real(jget(req, "eb"), "eb", &eb)) return -1;
    if (!eb_valid(eb)) return fail("eb must be > 0 with 2*eb finite, got %g", eb);
    Arr a;
    if (parse_array(jget(req, "x"), "x", &a, 1)) return -1;
    Buf out = {0};
    if (codec_encode_v1(a.f, a.count, eb, &out)) {
        arr_free(&a);
        return -1;
    }
    buf_puts(res, "{\"data\": \"");
    b64_encode(res, (unsigned char *)out.p, out.n);
    buf_puts(res, "\"}");
    free(out.p);
    arr_free(&a);
    return 0;
}

static int op_codec_decode(JV *req, Buf *res) {
    JV *d = jget(req, "data");
    if (!d || d->type != J_STR) return fail("data must be a base64 string");
    unsigned char *raw;
    size_t len;
    if (b64_decode(d->s, d->slen, &raw, &len, "data")) return -1;
    float *x = NULL;
    size_t n = 0;
    int rc = codec_decode(raw, len, &x, &n);
    free(raw);
    if (rc) return -1;
    buf_puts(res, "{\"x\": ");
    put_float32_array(res, x, n);
    buf_puts(res, "}");
    free(x);
    return 0;
}

static void put_id(Buf *b, JV *id) {
    if (!id) buf_puts(b, "null");
#if BUG == 4
    else if (id->type == J_NUM) buf_printf(b, "%d", (int)id->num);
#else
    else if (id->type == J_NUM) buf_put(b, id->s, id->slen);
#endif

    else if (id->type == J_STR) put_jstr(b, id->s, id->slen);
    else buf_puts(b, "null");
}

int main(void) {
    crc_init();
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    while ((got = getline(&line, &cap, stdin)) > 0) {
        JP j = {line, line + got, 0};
        JV req;
        Buf out = {0}, res = {0};
        int parsed = jp_value(&j, &req) == 0 && req.type == J_OBJ;
        JV *id = parsed ? jget(&req, "id") : NULL;
        int rc = -1, quit = 0;
        g_err[0] = 0;
        g_errtype = "ValueError";
        if (!parsed) {
            snprintf(g_err, sizeof g_err, "request is not a JSON object");
            g_errtype = "ProtocolError";
        } else {
            JV *op = jget(&req, "op");
            const char *o = op && op->type == J_STR ? op->s : "";
            if (!strcmp(o, "hello")) rc = op_hello(&req, &res);
            else if (!strcmp(o, "substitute")) rc = op_substitute(&req, &res);
            else if (!strcmp(o, "session_open")) rc = op_session_open(&req, &res);
            else if (!strcmp(o, "session_admit")) rc = op_session_admit(&req, &res);
            else if (!strcmp(o, "session_close")) rc = op_session_close(&req, &res);
            else if (!strcmp(o, "dedup_lines")) rc = op_dedup_lines(&req, &res);
            else if (!strcmp(o, "codec_encode")) rc = op_codec_encode(&req, &res);
            else if (!strcmp(o, "codec_decode")) rc = op_codec_decode(&req, &res);
            else if (!strcmp(o, "shutdown")) {
                rc = 0;
                quit = 1;
                buf_puts(&res, "{}");
            } else {
                snprintf(g_err, sizeof g_err, "unknown op '%s'", o);
                g_errtype = "NotImplementedError";
            }
        }
        buf_puts(&out, "{\"id\": ");
        put_id(&out, id);
        if (rc == 0) {
            buf_puts(&out, ", \"ok\": true, \"result\": ");
            buf_put(&out, res.p, res.n);
            buf_puts(&out, "}\n");
        } else {
            buf_puts(&out, ", \"ok\": false, \"error\": {\"type\": ");
            put_jstr(&out, g_errtype, strlen(g_errtype));
            buf_puts(&out, ", \"message\": ");
            put_jstr(&out, g_err, strlen(g_err));
            buf_puts(&out, "}}\n");
        }
        fwrite(out.p, 1, out.n, stdout);
        fflush(stdout);
        free(out.p);
        free(res.p);
        if (parsed) jv_free(&req);
        if (quit) break;
    }
    free(line);
    return 0;
}
