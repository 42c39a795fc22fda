/*
 * Constant indices (an initializer, or a Constant node's value): read from
 * raw_data, from the typed field (int64_data, int32_data), or from an
 * external data file, and checked against the dims they index. A bad one
 * makes the model wrong: the node is refused, naming the value. External
 * data is read as OpenVINO's .bin is, only the bytes the tensor names, and
 * only from a regular file inside the model's folder: a path that is
 * absolute, climbs out with "..", or leads out through a link is refused.
 */
/* realpath() is XSI */
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "onnx_internal.h"

/* More indices than this are not read: the check is a courtesy, and a
 * constant this large is a table, not a model's indices. */
#define TJ_ONNX_MAX_CONST_COUNT ((int64_t)1 << 24)

/* The value of external data entry `key`: the last of its name, as ONNX's
 * loader (ExternalDataInfo sets each entry in turn) and ONNX Runtime read
 * it, and its checker lets a key repeat. Taking the first once checked and
 * compiled other bytes than the runtime reads (an "offset" given twice). */
static const char *tj_entry(const Onnx__TensorProto *t, const char *key)
{
    for (size_t i = t->n_external_data; i-- > 0;)
        if (t->external_data[i] && t->external_data[i]->key &&
            strcmp(t->external_data[i]->key, key) == 0)
            return t->external_data[i]->value;
    return NULL;
}

/* A whole non-negative decimal; -1 if the text is none. */
static int64_t tj_decimal(const char *text)
{
    char *end;
    errno = 0;
    long long v = text && *text ? strtoll(text, &end, 10) : -1;
    return text && *text && !errno && !*end && v >= 0 ? v : -1;
}

/* "x/../y", "../y", "..": a component that climbs. */
static int tj_climbs(const char *path)
{
    for (const char *p = path; (p = strstr(p, "..")) != NULL; p += 2)
        if ((p == path || p[-1] == '/') && (p[2] == '\0' || p[2] == '/'))
            return 1;
    return 0;
}

/* dir/location opened for reading when it stays inside dir; -1 with the
 * layer refused. */
static int tj_open_inside(const char *dir, const char *location, const char *name,
                          tj_model_layer *out)
{
    char path[PATH_MAX], real[PATH_MAX], root[PATH_MAX];
    if (location[0] == '/' || tj_climbs(location))
        return tj_model_refuse(out, "external data '%s' of '%s' leaves the model's folder",
                         location, name);
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, location) >= sizeof path)
        return tj_model_refuse(out, "external data path '%s' of '%s' is too long", location, name);
    if (!realpath(dir, root) || !realpath(path, real))
        return tj_model_refuse(out, "external data '%s' of '%s': %s", location, name, strerror(errno));
    size_t n = strlen(root);
    if (strncmp(real, root, n) != 0 || (real[n] != '/' && strcmp(root, "/") != 0))
        return tj_model_refuse(out, "external data '%s' of '%s' leads out of the model's folder "
                         "(to %s)", location, name, real);
    int fd = open(real, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        return fd;
    if (fd >= 0)
        close(fd);
    return tj_model_refuse(out, "external data '%s' of '%s' is not a readable regular file", location,
                     name);
}

#define TJ_NO_FOLDER (-2)

/* An external tensor's file, opened inside the model's folder once its
 * entries name `bytes` bytes the file holds: the descriptor (*off the
 * range's start), -1 with the layer refused, or TJ_NO_FOLDER (nothing
 * refused) when the model was read from memory. */
static int tj_open_external(const tj_onnx_scope *s, const Onnx__TensorProto *t, const char *name,
                            int64_t bytes, int64_t *off, tj_model_layer *out)
{
    const char *location = tj_entry(t, "location");
    const char *off_text = tj_entry(t, "offset"), *len_text = tj_entry(t, "length");
    int64_t len = len_text ? tj_decimal(len_text) : bytes;
    *off = off_text ? tj_decimal(off_text) : 0;
    if (!location || !location[0])
        return tj_model_refuse(out, "'%s' is in external data but names no location", name);
    if (*off < 0 || len < 0)
        return tj_model_refuse(out, "external data of '%s': %s '%s' is no size", name,
                               *off < 0 ? "offset" : "length", *off < 0 ? off_text : len_text);
    if (len != bytes)
        return tj_model_refuse(out, "external data of '%s' is %lld bytes long; its dims need %lld",
                               name, (long long)len, (long long)bytes);
    if (!s->dir)
        return TJ_NO_FOLDER;
    int fd = tj_open_inside(s->dir, location, name, out);
    struct stat st;
    /* the range as offset and length: their sum may pass int64 */
    if (fd >= 0 && (fstat(fd, &st) != 0 || *off > st.st_size || bytes > st.st_size - *off)) {
        close(fd);
        return tj_model_refuse(out, "external data '%s' of '%s' holds no %lld bytes at offset "
                               "%lld", location, name, (long long)bytes, (long long)*off);
    }
    return fd;
}

/* `bytes` bytes of an external tensor into buf; 0 or -1 (refused). */
static int tj_read_external(const tj_onnx_scope *s, const Onnx__TensorProto *t, const char *name,
                            void *buf, int64_t bytes, tj_model_layer *out)
{
    int64_t off;
    int fd = tj_open_external(s, t, name, bytes, &off, out);
    if (fd == TJ_NO_FOLDER)
        return tj_model_refuse(out, "'%s' is in external data, and no folder was given to read it "
                               "from", name);
    if (fd < 0)
        return -1;
    int ok = pread(fd, buf, (size_t)bytes, (off_t)off) == (ssize_t)bytes;
    close(fd);
    return ok ? 0 : tj_model_refuse(out, "external data of '%s' could not be read: %s", name,
                                    strerror(errno));
}

/* The count of values t's typed field holds for its element type, and
 * the field's name; -1 for a type tensorjit has no kernel type for (the
 * node is skipped for it anyway). */
static int64_t tj_typed_count(const Onnx__TensorProto *t, const char **field)
{
    switch (t->data_type) {
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: *field = "float_data"; return (int64_t)t->n_float_data;
    case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE: *field = "double_data"; return (int64_t)t->n_double_data;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: *field = "int64_data"; return (int64_t)t->n_int64_data;
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT32:
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT64: *field = "uint64_data"; return (int64_t)t->n_uint64_data;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT32:
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT16:
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT8:
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT16:
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT8:
    case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL:
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16:
    case ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16: *field = "int32_data"; return (int64_t)t->n_int32_data;
    default: return -1;
    }
}

int tj_onnx_check_const_payload(const tj_onnx_scope *s, const Onnx__TensorProto *t,
                                const char *name, tj_model_layer *out)
{
    jit_dtype type = tj_onnx_dtype(t->data_type);
    int64_t count = 1, size = type == JIT_DTYPE_UNSET ? 0 : jit_dtype_size(type);
    if (size == 0)
        return 0; /* no kernel type: the node is skipped for it */
    for (size_t i = 0; i < t->n_dims; i++)
        if (t->dims[i] < 0 || (t->dims[i] && count > INT64_MAX / size / t->dims[i]))
            return 0; /* the shape check names it */
        else
            count *= t->dims[i];
    int64_t bytes = count * size;
    if (t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
        int64_t off;
        int fd = tj_open_external(s, t, name, bytes, &off, out);
        if (fd >= 0)
            close(fd);
        return fd == -1 ? -1 : 0; /* from memory (test_onnx): no folder to look in */
    }
    if (t->has_raw_data)
        return (int64_t)t->raw_data.len == bytes
                   ? 0
                   : tj_model_refuse(out, "'%s' holds %zu bytes of raw_data; its dims need %lld",
                                     name, t->raw_data.len, (long long)bytes);
    const char *field = "";
    int64_t held = tj_typed_count(t, &field);
    if (held >= 0 && held != count)
        return tj_model_refuse(out, "'%s' holds %lld values in %s; its dims need %lld", name,
                               (long long)held, field, (long long)count);
    return 0;
}

/* The tensor's values as int64, wherever the file keeps them. */
static int tj_values(const tj_onnx_scope *s, const Onnx__TensorProto *t, const char *name,
                     int64_t count, int64_t *v, tj_model_layer *out)
{
    int wide = t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
    int64_t es = wide ? 8 : 4, bytes = count * es;
    /* raw and external bytes are little-endian, as ONNX writes them */
    unsigned char *raw = NULL;
    if (t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
        if (!(raw = malloc(bytes ? (size_t)bytes : 1)))
            return tj_model_refuse(out, "'%s': out of memory", name);
        if (tj_read_external(s, t, name, raw, bytes, out) != 0)
            return free(raw), -1;
    } else if (t->has_raw_data) {
        if ((int64_t)t->raw_data.len != bytes)
            return tj_model_refuse(out, "'%s' holds %zu bytes of raw_data; its dims need %lld", name,
                             t->raw_data.len, (long long)bytes);
        raw = t->raw_data.data;
    } else if ((int64_t)(wide ? t->n_int64_data : t->n_int32_data) != count) {
        return tj_model_refuse(out, "'%s' holds %zu values in %s; its dims need %lld", name,
                         wide ? t->n_int64_data : t->n_int32_data,
                         wide ? "int64_data" : "int32_data", (long long)count);
    }
    for (int64_t i = 0; i < count; i++) {
        if (raw) {
            uint64_t x = 0;
            for (int b = (int)es - 1; b >= 0; b--)
                x = x << 8 | raw[i * es + b];
            v[i] = wide ? (int64_t)x : (int64_t)(int32_t)(uint32_t)x;
        } else {
            v[i] = wide ? t->int64_data[i] : t->int32_data[i];
        }
    }
    if (raw && raw != t->raw_data.data)
        free(raw);
    return 0;
}

/* The data dimension that element e of an index tuple (of jit_index_dims'
 * depth) indexes, for the ops an ONNX node becomes. */
static int tj_indexed_dim(const jit_sig *sig, int e)
{
    int rank = sig->data_shape.rank;
    int axis = (int)(sig->axis < 0 ? sig->axis + rank : sig->axis);
    switch (sig->op) {
    case JIT_OP_GATHER_ND: return sig->batch_dims + e;
    case JIT_OP_SCATTER_ND_UPDATE: return e;
    default: return axis; /* Gather, GatherElements, ScatterElementsUpdate */
    }
}

/* Flat position i of tensor t written as [a,b,...] in t's own dims. */
static void tj_const_position(const Onnx__TensorProto *t, int64_t i, char *buf, size_t len)
{
    int64_t at[JIT_MAX_RANK];
    size_t n = t->n_dims < JIT_MAX_RANK ? t->n_dims : JIT_MAX_RANK, used = 0;
    for (size_t k = n; k-- > 0;) {
        int64_t d = t->dims[k] > 0 ? t->dims[k] : 1;
        at[k] = i % d;
        i /= d;
    }
    used += (size_t)snprintf(buf, len, "[");
    for (size_t k = 0; k < n && used < len; k++)
        used += (size_t)snprintf(buf + used, len - used, "%s%lld", k ? "," : "", (long long)at[k]);
    if (used < len)
        snprintf(buf + used, len - used, "]");
}

int tj_onnx_check_const_indices(const tj_onnx_scope *s, const Onnx__TensorProto *t,
                                const char *name, tj_model_layer *out)
{
    int depth;
    int64_t dims[JIT_MAX_RANK], count = 1;
    if (t->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__INT64 &&
        t->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__INT32)
        return 0; /* the signature check named the type already */
    if (jit_index_dims(&out->sig, &depth, dims) != 0 || depth <= 0)
        return 0;
    for (size_t i = 0; i < t->n_dims; i++)
        count = t->dims[i] && count > TJ_ONNX_MAX_CONST_COUNT / t->dims[i] ? -1
                                                                          : count * t->dims[i];
    if (count < 0 || count > TJ_ONNX_MAX_CONST_COUNT) {
        tj_model_note(out, "constant indices not checked (more than %lld)",
                      (long long)TJ_ONNX_MAX_CONST_COUNT);
        return 0;
    }
    int64_t *v = malloc(count ? (size_t)count * sizeof *v : 1);
    if (!v)
        return tj_model_refuse(out, "'%s': out of memory", name);
    int rc = tj_values(s, t, name, count, v, out);
    for (int64_t i = 0; rc == 0 && i < count; i++) {
        int64_t d = dims[i % depth];
        if (d >= 0 && (v[i] < -d || v[i] >= d)) {
            char where[32 * JIT_MAX_RANK + 8];
            tj_const_position(t, i, where, sizeof where);
            rc = tj_model_refuse(out, "constant indices '%s' hold %lld at position %lld, outside "
                           "[%lld, %lld) of data dimension %d of size %lld (element %s of '%s')",
                           name, (long long)v[i], (long long)i, (long long)-d, (long long)d,
                           tj_indexed_dim(&out->sig, i % depth), (long long)d, where, name);
        }
    }
    free(v);
    return rc;
}
