#include "npy.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const unsigned char tj_npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

static const struct {
    char kind;
    int size;
    jit_dtype dtype;
} tj_npy_types[] = {
    {'b', 1, JIT_BOOL}, {'i', 1, JIT_I8},  {'u', 1, JIT_U8},  {'i', 2, JIT_I16},
    {'u', 2, JIT_U16},  {'f', 2, JIT_F16}, {'i', 4, JIT_I32}, {'u', 4, JIT_U32},
    {'f', 4, JIT_F32},  {'i', 8, JIT_I64}, {'u', 8, JIT_U64}, {'f', 8, JIT_F64},
};

static int tj_npy_fail(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
    return -1;
}

/* A cursor over the header's Python dict literal. */
typedef struct tj_cursor {
    const char *p, *end;
} tj_cursor;

static void tj_skip_ws(tj_cursor *c)
{
    while (c->p < c->end && isspace((unsigned char)*c->p))
        c->p++;
}

static int tj_accept(tj_cursor *c, char ch)
{
    tj_skip_ws(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return 1;
    }
    return 0;
}

/* A quoted string into buf; 0 on success. */
static int tj_read_string(tj_cursor *c, char *buf, size_t len)
{
    tj_skip_ws(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
        return -1;
    char q = *c->p++;
    size_t n = 0;
    while (c->p < c->end && *c->p != q) {
        if (n + 1 >= len)
            return -1;
        buf[n++] = *c->p++;
    }
    if (c->p >= c->end)
        return -1;
    c->p++;
    buf[n] = '\0';
    return 0;
}

static int tj_read_word(tj_cursor *c, const char *word)
{
    tj_skip_ws(c);
    size_t n = strlen(word);
    if ((size_t)(c->end - c->p) >= n && memcmp(c->p, word, n) == 0) {
        c->p += n;
        return 1;
    }
    return 0;
}

static int tj_read_shape(tj_cursor *c, jit_shape *s, char *err, size_t len)
{
    if (!tj_accept(c, '('))
        return tj_npy_fail(err, len, "header 'shape' is not a tuple");
    s->rank = 0;
    while (!tj_accept(c, ')')) {
        tj_skip_ws(c);
        if (c->p >= c->end || !isdigit((unsigned char)*c->p))
            return tj_npy_fail(err, len, "header 'shape' holds something other than a "
                                         "non-negative integer");
        if (s->rank >= JIT_MAX_RANK)
            return tj_npy_fail(err, len, "shape has more than %d dimensions", JIT_MAX_RANK);
        int64_t v = 0;
        while (c->p < c->end && isdigit((unsigned char)*c->p)) {
            if (v > (INT64_MAX - 9) / 10)
                return tj_npy_fail(err, len, "shape dimension %d does not fit in int64",
                                   s->rank);
            v = v * 10 + (*c->p++ - '0');
        }
        s->dims[s->rank++] = v;
        if (!tj_accept(c, ',') && !(tj_skip_ws(c), c->p < c->end && *c->p == ')'))
            return tj_npy_fail(err, len, "header 'shape' is not a tuple of integers");
    }
    return 0;
}

static int tj_parse_descr(const char *d, jit_dtype *t, char *err, size_t len)
{
    char *end;
    if (strlen(d) < 3 || !isdigit((unsigned char)d[2]))
        return tj_npy_fail(err, len, "dtype '%s' is not supported", d);
    char order = d[0], kind = d[1];
    long size = strtol(d + 2, &end, 10);
    if (*end != '\0')
        return tj_npy_fail(err, len, "dtype '%s' is not supported", d);
    if (size > 1 && order == '>')
        return tj_npy_fail(err, len, "dtype '%s' is big-endian; only little-endian is supported",
                           d);
    if (order != '<' && order != '|' && order != '=' && order != '>')
        return tj_npy_fail(err, len, "dtype '%s' has no byte-order mark", d);
    for (size_t i = 0; i < sizeof tj_npy_types / sizeof tj_npy_types[0]; i++)
        if (tj_npy_types[i].kind == kind && tj_npy_types[i].size == size) {
            *t = tj_npy_types[i].dtype;
            return 0;
        }
    return tj_npy_fail(err, len,
                       "dtype '%s' is not supported (bool, int8..64, uint8..64, float16/32/64)", d);
}

static int tj_parse_header(const char *h, size_t n, tj_npy *a, char *err, size_t len)
{
    tj_cursor c = {h, h + n};
    int have_descr = 0, have_order = 0, have_shape = 0;
    if (!tj_accept(&c, '{'))
        return tj_npy_fail(err, len, "header is not a Python dict");
    while (!tj_accept(&c, '}')) {
        char key[32], val[64];
        if (tj_read_string(&c, key, sizeof key) != 0 || !tj_accept(&c, ':'))
            return tj_npy_fail(err, len, "header dict is malformed");
        if (strcmp(key, "descr") == 0) {
            if (tj_read_string(&c, val, sizeof val) != 0)
                return tj_npy_fail(err, len, "header 'descr' is not a simple dtype string");
            if (tj_parse_descr(val, &a->dtype, err, len) != 0)
                return -1;
            have_descr = 1;
        } else if (strcmp(key, "fortran_order") == 0) {
            if (tj_read_word(&c, "True"))
                return tj_npy_fail(err, len, "array is in Fortran order; only C order is "
                                             "supported (numpy.ascontiguousarray)");
            if (!tj_read_word(&c, "False"))
                return tj_npy_fail(err, len, "header 'fortran_order' is not True or False");
            have_order = 1;
        } else if (strcmp(key, "shape") == 0) {
            if (tj_read_shape(&c, &a->shape, err, len) != 0)
                return -1;
            have_shape = 1;
        } else {
            return tj_npy_fail(err, len, "header has an unknown key '%s'", key);
        }
        if (!tj_accept(&c, ',') && !(tj_skip_ws(&c), c.p < c.end && *c.p == '}'))
            return tj_npy_fail(err, len, "header dict is malformed after '%s'", key);
    }
    if (!have_descr || !have_order || !have_shape)
        return tj_npy_fail(err, len, "header lacks '%s'",
                           !have_descr ? "descr" : !have_order ? "fortran_order" : "shape");
    return 0;
}

int tj_npy_parse(const unsigned char *buf, size_t len, tj_npy *a, char *err, size_t err_len)
{
    memset(a, 0, sizeof *a);
    if (len < 10 || memcmp(buf, tj_npy_magic, 6) != 0)
        return tj_npy_fail(err, err_len, "not a .npy file (wrong magic)");
    int major = buf[6], minor = buf[7];
    size_t pre = major == 1 ? 10 : 12;
    if ((major != 1 && major != 2) || minor != 0)
        return tj_npy_fail(err, err_len, ".npy format %d.%d is not supported (1.0 and 2.0 are)",
                           major, minor);
    if (len < pre)
        return tj_npy_fail(err, err_len, "file ends inside the .npy preamble");
    uint64_t hlen = major == 1 ? (uint64_t)buf[8] | (uint64_t)buf[9] << 8
                               : (uint64_t)buf[8] | (uint64_t)buf[9] << 8 |
                                     (uint64_t)buf[10] << 16 | (uint64_t)buf[11] << 24;
    if (hlen > TJ_NPY_MAX_HEADER)
        return tj_npy_fail(err, err_len, "header of %" PRIu64 " bytes is larger than %d", hlen,
                           TJ_NPY_MAX_HEADER);
    if (hlen > len - pre)
        return tj_npy_fail(err, err_len, "header claims %" PRIu64 " bytes but the file holds %zu",
                           hlen, len - pre);
    if (tj_parse_header((const char *)buf + pre, (size_t)hlen, a, err, err_len) != 0)
        return -1;
    int64_t n = 1;
    for (int i = 0; i < a->shape.rank; i++)
        if (__builtin_mul_overflow(n, a->shape.dims[i], &n))
            return tj_npy_fail(err, err_len, "shape's element count overflows int64");
    if (__builtin_mul_overflow(n, (int64_t)jit_dtype_size(a->dtype), &a->bytes))
        return tj_npy_fail(err, err_len, "shape's byte count overflows int64");
    uint64_t have = len - pre - hlen;
    if (have != (uint64_t)a->bytes)
        return tj_npy_fail(err, err_len, "header claims %" PRId64 " bytes of data but the file "
                           "holds %" PRIu64, a->bytes, have);
    if (a->bytes) {
        a->data = malloc((size_t)a->bytes);
        if (!a->data)
            return tj_npy_fail(err, err_len, "out of memory for %" PRId64 " bytes", a->bytes);
        memcpy(a->data, buf + pre + hlen, (size_t)a->bytes);
    }
    return 0;
}

static int tj_read_file(const char *path, unsigned char **buf, size_t *len, char *err,
                        size_t err_len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return tj_npy_fail(err, err_len, "cannot open: %s", strerror(errno));
    size_t cap = 1 << 16, n = 0;
    unsigned char *b = malloc(cap);
    int read_errno = 0;
    while (b) {
        errno = 0;
        n += fread(b + n, 1, cap - n, f);
        read_errno = errno;
        if (n < cap)
            break;
        unsigned char *nb = cap > SIZE_MAX / 2 ? NULL : realloc(b, cap * 2);
        if (!nb) {
            free(b);
            b = NULL;
            break;
        }
        b = nb;
        cap *= 2;
    }
    int bad = ferror(f);
    fclose(f);
    if (!b || bad) {
        free(b);
        /* a folder opens and fails at its first read (EISDIR): say why */
        if (bad)
            return tj_npy_fail(err, err_len, "cannot read: %s",
                               read_errno ? strerror(read_errno) : "read error");
        return tj_npy_fail(err, err_len, "out of memory reading the file");
    }
    *buf = b;
    *len = n;
    return 0;
}

int tj_npy_read(const char *path, tj_npy *out, char *err, size_t err_len)
{
    unsigned char *buf = NULL;
    size_t len = 0;
    memset(out, 0, sizeof *out);
    if (tj_read_file(path, &buf, &len, err, err_len) != 0)
        return -1;
    int rc = tj_npy_parse(buf, len, out, err, err_len);
    free(buf);
    return rc;
}

static int tj_npy_descr(jit_dtype t, char *buf, size_t len)
{
    for (size_t i = 0; i < sizeof tj_npy_types / sizeof tj_npy_types[0]; i++)
        if (tj_npy_types[i].dtype == t) {
            snprintf(buf, len, "%c%c%d", tj_npy_types[i].size == 1 ? '|' : '<',
                     tj_npy_types[i].kind, tj_npy_types[i].size);
            return 0;
        }
    return -1;
}

int tj_npy_write_stream(FILE *f, jit_dtype dtype, const jit_shape *shape, const void *data,
                        char *err, size_t err_len)
{
    char descr[8], header[64 + JIT_MAX_RANK * 22];
    if (tj_npy_descr(dtype, descr, sizeof descr) != 0)
        return tj_npy_fail(err, err_len, "element type %s has no .npy dtype",
                           jit_dtype_name(dtype));
    int n = snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                     descr);
    int64_t count = 1;
    for (int i = 0; i < shape->rank; i++) {
        n += snprintf(header + n, sizeof header - (size_t)n, "%" PRId64 "%s", shape->dims[i],
                      shape->rank == 1 ? "," : i + 1 < shape->rank ? ", " : "");
        count *= shape->dims[i];
    }
    n += snprintf(header + n, sizeof header - (size_t)n, "), }");
    /* pad with spaces so that the data starts on a 64-byte boundary */
    int total = 10 + n + 1;
    int pad = (64 - total % 64) % 64;
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0};
    int hlen = n + pad + 1;
    pre[8] = (unsigned char)(hlen & 0xff);
    pre[9] = (unsigned char)(hlen >> 8);
    size_t bytes = (size_t)count * (size_t)jit_dtype_size(dtype);
    int ok = fwrite(pre, 1, 10, f) == 10 && fwrite(header, 1, (size_t)n, f) == (size_t)n &&
             fprintf(f, "%*s\n", pad, "") == pad + 1 &&
             (bytes == 0 || fwrite(data, 1, bytes, f) == bytes);
    if (fflush(f) != 0 || !ok)
        return tj_npy_fail(err, err_len, "write error: %s", strerror(errno));
    return 0;
}

int tj_npy_write(const char *path, jit_dtype dtype, const jit_shape *shape, const void *data,
                 char *err, size_t err_len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return tj_npy_fail(err, err_len, "cannot create: %s", strerror(errno));
    int rc = tj_npy_write_stream(f, dtype, shape, data, err, err_len);
    if (fclose(f) != 0 && rc == 0)
        return tj_npy_fail(err, err_len, "write error: %s", strerror(errno));
    return rc;
}

void tj_npy_free(tj_npy *a)
{
    free(a->data);
    a->data = NULL;
}
