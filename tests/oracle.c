#include "oracle.h"

#include <stdlib.h>
#include <string.h>

int64_t oracle_elems(const jit_shape *s)
{
    int64_t n = 1;
    for (int i = 0; i < s->rank; i++)
        n *= s->dims[i];
    return n;
}

int64_t oracle_read_index(jit_dtype t, const void *p, int64_t i)
{
    switch (t) {
    case JIT_I8: return ((const int8_t *)p)[i];
    case JIT_U8: return ((const uint8_t *)p)[i];
    case JIT_I16: return ((const int16_t *)p)[i];
    case JIT_U16: return ((const uint16_t *)p)[i];
    case JIT_I32: return ((const int32_t *)p)[i];
    case JIT_U32: return ((const uint32_t *)p)[i];
    case JIT_I64: return ((const int64_t *)p)[i];
    case JIT_U64: {
        uint64_t v = ((const uint64_t *)p)[i];
        return v > INT64_MAX ? INT64_MAX : (int64_t)v;
    }
    default: abort();
    }
}

/* -1 when the policy rejects v for a dim of size n, else the position. */
static int64_t oracle_resolve(jit_index_policy p, int64_t v, int64_t n)
{
    if ((p == JIT_INDEX_NEGATIVE_WRAPS || p == JIT_INDEX_NEGATIVE_WRAPS_ZERO_FILL) && v < 0)
        v += n;
    if (p == JIT_INDEX_CLAMP) {
        if (n == 0)
            return -1;
        if (v < 0)
            v = 0;
        if (v > n - 1)
            v = n - 1;
    }
    return v >= 0 && v < n ? v : -1;
}

/* Policies under which a bad index is no error (zeros, or a dropped update). */
static int oracle_fills(jit_index_policy p)
{
    return p == JIT_INDEX_ZERO_FILL || p == JIT_INDEX_NEGATIVE_WRAPS_ZERO_FILL;
}

static int64_t oracle_flat(const jit_shape *s, const int64_t *coord)
{
    int64_t f = 0;
    for (int i = 0; i < s->rank; i++)
        f = f * s->dims[i] + coord[i];
    return f;
}

/* Next row-major coordinate; 0 when past the end. */
static int oracle_next(const int64_t *dims, int rank, int64_t *coord)
{
    for (int i = rank - 1; i >= 0; i--) {
        if (++coord[i] < dims[i])
            return 1;
        coord[i] = 0;
    }
    return 0;
}

int oracle_gather_nd(const jit_gather_nd_sig *sig, const void *data, const void *indices,
                     void *out)
{
    const jit_shape *d = &sig->data_shape, *ix = &sig->indices_shape;
    int b = sig->batch_dims, q = ix->rank, k = (int)ix->dims[q - 1];
    int es = jit_dtype_size(sig->dtype);
    /* opset-8 output coordinates: indices.shape[:-1] + data.shape[b+k:] */
    int64_t odims[2 * JIT_MAX_RANK];
    int orank = 0;
    for (int i = 0; i < q - 1; i++)
        odims[orank++] = ix->dims[i];
    for (int i = b + k; i < d->rank; i++)
        odims[orank++] = d->dims[i];
    int64_t total = 1;
    for (int i = 0; i < orank; i++)
        total *= odims[i];
    char *tmp = malloc(total * es + 1);
    int64_t coord[2 * JIT_MAX_RANK] = {0};
    int status = JIT_OK;
    for (int64_t o = 0; o < total; o++, oracle_next(odims, orank, coord)) {
        int64_t tuple_base = 0;
        for (int i = 0; i < q - 1; i++)
            tuple_base = tuple_base * ix->dims[i] + coord[i];
        tuple_base *= k;
        int64_t dcoord[JIT_MAX_RANK];
        int bad = 0;
        for (int i = 0; i < b; i++)
            dcoord[i] = coord[i];
        for (int e = 0; e < k; e++) {
            int64_t v = oracle_read_index(sig->index_type, indices, tuple_base + e);
            int64_t r = oracle_resolve(sig->index_policy, v, d->dims[b + e]);
            if (r < 0)
                bad = 1;
            dcoord[b + e] = r;
        }
        for (int i = b + k; i < d->rank; i++)
            dcoord[i] = coord[q - 1 + (i - b - k)];
        if (bad && !oracle_fills(sig->index_policy)) {
            status = JIT_STATUS_BAD_INDEX;
            break;
        }
        if (bad)
            memset(tmp + o * es, 0, es);
        else
            memcpy(tmp + o * es, (const char *)data + oracle_flat(d, dcoord) * es, es);
    }
    /* tuples of an empty output are still validated */
    if (status == JIT_OK && total == 0 && k > 0 && !oracle_fills(sig->index_policy)) {
        int64_t ntuples = 1;
        for (int i = 0; i < q - 1; i++)
            ntuples *= ix->dims[i];
        for (int64_t t = 0; t < ntuples && status == JIT_OK; t++)
            for (int e = 0; e < k; e++)
                if (oracle_resolve(sig->index_policy,
                                   oracle_read_index(sig->index_type, indices, t * k + e),
                                   d->dims[b + e]) < 0)
                    status = JIT_STATUS_BAD_INDEX;
    }
    if (status == JIT_OK && total)
        memcpy(out, tmp, total * es);
    free(tmp);
    return status;
}

int oracle_scatter_update(const jit_scatter_update_sig *sig, const void *data,
                          const void *indices, const void *updates, void *out)
{
    const jit_shape *d = &sig->data_shape, *ix = &sig->indices_shape, *u = &sig->updates_shape;
    int r = d->rank, a = (int)(sig->axis < 0 ? sig->axis + r : sig->axis), q = ix->rank;
    int es = jit_dtype_size(sig->dtype);
    int64_t nidx = oracle_elems(ix), dn = oracle_elems(d), un = oracle_elems(u);
    if (!oracle_fills(sig->index_policy))
        for (int64_t i = 0; i < nidx; i++)
            if (oracle_resolve(sig->index_policy, oracle_read_index(sig->index_type, indices, i),
                               d->dims[a]) < 0)
                return JIT_STATUS_BAD_INDEX;
    if (out != data && dn)
        memmove(out, data, dn * es);
    int64_t coord[2 * JIT_MAX_RANK] = {0};
    for (int64_t n = 0; n < un; n++, oracle_next(u->dims, u->rank, coord)) {
        int64_t ipos = 0;
        for (int i = 0; i < q; i++)
            ipos = ipos * ix->dims[i] + coord[a + i];
        int64_t t = oracle_resolve(sig->index_policy,
                                   oracle_read_index(sig->index_type, indices, ipos), d->dims[a]);
        if (t < 0)
            continue;
        int64_t dcoord[JIT_MAX_RANK];
        for (int i = 0; i < a; i++)
            dcoord[i] = coord[i];
        dcoord[a] = t;
        for (int i = a + 1; i < r; i++)
            dcoord[i] = coord[q + i - 1];
        memcpy((char *)out + oracle_flat(d, dcoord) * es, (const char *)updates + n * es, es);
    }
    return JIT_OK;
}

/* An axis or batch_dims counted from the end (negative) brought into [0, n]. */
static int oracle_from_end(int64_t v, int n)
{
    return (int)(v < 0 ? v + n : v);
}

/* 1 when each of the n indices is valid for its data dimension: entry i
 * addresses dims[i % depth] (depth entries per tuple). Every index is
 * checked, used or not, before anything is written. */
static int oracle_all_valid(const jit_sig *sig, const void *indices, int64_t n,
                            const int64_t *dims, int depth)
{
    if (depth == 0 || oracle_fills(sig->index_policy))
        return 1;
    for (int64_t i = 0; i < n; i++)
        if (oracle_resolve(sig->index_policy, oracle_read_index(sig->index_type, indices, i),
                           dims[i % depth]) < 0)
            return 0;
    return 1;
}

/* Gather: data.shape[:axis] + indices.shape[b:] + data.shape[axis+1:] */
static void oracle_gather_shape(const jit_sig *sig, jit_shape *out)
{
    const jit_shape *d = &sig->data_shape, *ix = &sig->indices_shape;
    int a = oracle_from_end(sig->axis, d->rank);
    int b = oracle_from_end(sig->batch_dims, ix->rank);
    out->rank = 0;
    for (int i = 0; i < a; i++)
        out->dims[out->rank++] = d->dims[i];
    for (int i = b; i < ix->rank; i++)
        out->dims[out->rank++] = ix->dims[i];
    for (int i = a + 1; i < d->rank; i++)
        out->dims[out->rank++] = d->dims[i];
}

/* out[p0..p(a-1), i_b..i_(q-1), rest...] =
 *     data[p0..p(a-1), indices[p0..p(b-1), i_b..i_(q-1)], rest...] */
int oracle_gather(const jit_sig *sig, const void *data, const void *indices, void *out)
{
    const jit_shape *d = &sig->data_shape, *ix = &sig->indices_shape;
    int r = d->rank, a = oracle_from_end(sig->axis, r);
    int b = oracle_from_end(sig->batch_dims, ix->rank), nidx = ix->rank - b;
    int64_t es = jit_dtype_size(sig->dtype), dim = d->dims[a];
    if (!oracle_all_valid(sig, indices, oracle_elems(ix), &dim, 1))
        return JIT_STATUS_BAD_INDEX;
    jit_shape os;
    oracle_gather_shape(sig, &os);
    int64_t total = oracle_elems(&os), coord[JIT_MAX_RANK] = {0};
    for (int64_t o = 0; o < total; o++, oracle_next(os.dims, os.rank, coord)) {
        int64_t icoord[JIT_MAX_RANK], dcoord[JIT_MAX_RANK];
        for (int i = 0; i < b; i++) /* the batch: b <= a, so data's first coordinates */
            icoord[i] = coord[i];
        for (int i = 0; i < nidx; i++)
            icoord[b + i] = coord[a + i];
        int64_t t = oracle_resolve(
            sig->index_policy, oracle_read_index(sig->index_type, indices, oracle_flat(ix, icoord)),
            dim);
        char *dst = (char *)out + o * es;
        if (t < 0) { /* only the filling policies get here */
            memset(dst, 0, (size_t)es);
            continue;
        }
        for (int i = 0; i < a; i++)
            dcoord[i] = coord[i];
        dcoord[a] = t;
        for (int i = a + 1; i < r; i++)
            dcoord[i] = coord[a + nidx + (i - a - 1)];
        memcpy(dst, (const char *)data + oracle_flat(d, dcoord) * es, (size_t)es);
    }
    return JIT_OK;
}

/* out[i...] = data[i... with its axis coordinate replaced by indices[i...]] */
int oracle_gather_elements(const jit_sig *sig, const void *data, const void *indices, void *out)
{
    const jit_shape *d = &sig->data_shape, *ix = &sig->indices_shape;
    int a = oracle_from_end(sig->axis, d->rank);
    int64_t es = jit_dtype_size(sig->dtype), dim = d->dims[a], total = oracle_elems(ix);
    if (!oracle_all_valid(sig, indices, total, &dim, 1))
        return JIT_STATUS_BAD_INDEX;
    int64_t coord[JIT_MAX_RANK] = {0};
    for (int64_t o = 0; o < total; o++, oracle_next(ix->dims, ix->rank, coord)) {
        int64_t t = oracle_resolve(sig->index_policy,
                                   oracle_read_index(sig->index_type, indices, o), dim);
        char *dst = (char *)out + o * es;
        if (t < 0) {
            memset(dst, 0, (size_t)es);
            continue;
        }
        int64_t dcoord[JIT_MAX_RANK];
        memcpy(dcoord, coord, sizeof dcoord);
        dcoord[a] = t;
        memcpy(dst, (const char *)data + oracle_flat(d, dcoord) * es, (size_t)es);
    }
    return JIT_OK;
}

/* out = copy(data); then, tuple after tuple in row-major order of
 * indices[j..., :], out[t0..t(k-1), s...] = updates[j..., s...]. */
int oracle_scatter_nd_update(const jit_sig *sig, const void *data, const void *indices,
                             const void *updates, void *out)
{
    const jit_shape *d = &sig->data_shape, *ix = &sig->indices_shape;
    int r = d->rank, q = ix->rank, k = (int)ix->dims[q - 1];
    int64_t es = jit_dtype_size(sig->dtype), tuples = 1, slice = 1;
    for (int i = 0; i < q - 1; i++)
        tuples *= ix->dims[i];
    for (int i = k; i < r; i++)
        slice *= d->dims[i];
    if (!oracle_all_valid(sig, indices, oracle_elems(ix), d->dims, k))
        return JIT_STATUS_BAD_INDEX;
    if (out != data && oracle_elems(d))
        memcpy(out, data, (size_t)(oracle_elems(d) * es));
    for (int64_t j = 0; j < tuples; j++) {
        int64_t dcoord[JIT_MAX_RANK] = {0}, scoord[JIT_MAX_RANK] = {0};
        int bad = 0;
        for (int e = 0; e < k; e++) {
            dcoord[e] = oracle_resolve(sig->index_policy,
                                       oracle_read_index(sig->index_type, indices, j * k + e),
                                       d->dims[e]);
            bad |= dcoord[e] < 0;
        }
        if (bad) /* a filling policy: the update is dropped */
            continue;
        for (int64_t s = 0; s < slice; s++, oracle_next(d->dims + k, r - k, scoord)) {
            for (int i = k; i < r; i++)
                dcoord[i] = scoord[i - k];
            memcpy((char *)out + oracle_flat(d, dcoord) * es,
                   (const char *)updates + (j * slice + s) * es, (size_t)es);
        }
    }
    return JIT_OK;
}

static jit_gather_nd_sig oracle_gather_nd_sig(const jit_sig *s)
{
    return (jit_gather_nd_sig){.opset = s->opset, .batch_dims = s->batch_dims, .dtype = s->dtype,
                               .index_type = s->index_type, .index_policy = s->index_policy,
                               .data_shape = s->data_shape, .indices_shape = s->indices_shape};
}

static jit_scatter_update_sig oracle_scatter_update_sig(const jit_sig *s)
{
    return (jit_scatter_update_sig){.axis = s->axis, .dtype = s->dtype,
                                    .index_type = s->index_type, .index_policy = s->index_policy,
                                    .data_shape = s->data_shape,
                                    .indices_shape = s->indices_shape,
                                    .updates_shape = s->updates_shape};
}

int oracle_has(jit_op op)
{
    return op == JIT_OP_GATHER_ND || op == JIT_OP_SCATTER_UPDATE || op == JIT_OP_GATHER ||
           op == JIT_OP_GATHER_ELEMENTS || op == JIT_OP_SCATTER_ND_UPDATE;
}

int oracle_run(const jit_sig *sig, const void *data, const void *indices, const void *updates,
               void *out)
{
    switch (sig->op) {
    case JIT_OP_GATHER_ND: {
        jit_gather_nd_sig s = oracle_gather_nd_sig(sig);
        return oracle_gather_nd(&s, data, indices, out);
    }
    case JIT_OP_SCATTER_UPDATE: {
        jit_scatter_update_sig s = oracle_scatter_update_sig(sig);
        return oracle_scatter_update(&s, data, indices, updates, out);
    }
    case JIT_OP_GATHER: return oracle_gather(sig, data, indices, out);
    case JIT_OP_GATHER_ELEMENTS: return oracle_gather_elements(sig, data, indices, out);
    case JIT_OP_SCATTER_ND_UPDATE: return oracle_scatter_nd_update(sig, data, indices, updates, out);
    default: abort();
    }
}

/* GatherND-8: indices.shape[:-1] + data.shape[b+k:]; GatherND-5 multiplies
 * the first b dims into one. */
static void oracle_gather_nd_shape(const jit_sig *sig, jit_shape *out)
{
    const jit_shape *d = &sig->data_shape, *ix = &sig->indices_shape;
    int b = sig->batch_dims, q = ix->rank, k = (int)ix->dims[q - 1], first = 0;
    out->rank = 0;
    if (sig->opset == 5 && b > 1) {
        int64_t batch = 1;
        for (int i = 0; i < b; i++)
            batch *= ix->dims[i];
        out->dims[out->rank++] = batch;
        first = b;
    }
    for (int i = first; i < q - 1; i++)
        out->dims[out->rank++] = ix->dims[i];
    for (int i = b + k; i < d->rank; i++)
        out->dims[out->rank++] = d->dims[i];
}

void oracle_output_shape(const jit_sig *sig, jit_shape *out)
{
    switch (sig->op) {
    case JIT_OP_GATHER_ND: oracle_gather_nd_shape(sig, out); return;
    case JIT_OP_GATHER: oracle_gather_shape(sig, out); return;
    case JIT_OP_GATHER_ELEMENTS: *out = sig->indices_shape; return;
    case JIT_OP_SCATTER_UPDATE:
    case JIT_OP_SCATTER_ND_UPDATE: *out = sig->data_shape; return;
    default: abort();
    }
}
