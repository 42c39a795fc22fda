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
