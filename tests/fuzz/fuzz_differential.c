/* Small valid signatures of every op of the family, built from the input
 * through the generic API, and indices from the input: the JIT kernel
 * against the reference kernel, bit for bit. Both statuses must be equal,
 * every output byte too; on a bad index both leave out untouched; scatters
 * run in place as well. Every policy, every index type the op takes,
 * element sizes 1/2/4/8, zero dims, negative axes, pooled kernels
 * (threads > 1). A mismatch is a trap.
 *
 * Input: byte 0 picks the op (JIT_OP_NONE+1 .. the last op before the
 * embedding bags, whose five-argument kernels this harness does not call:
 * test_bags compares them; the corpus keeps its ops that way); then the
 * common fields, the op's shapes and attributes, and the buffers. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "tensorjit.h"

static const jit_dtype dtypes[] = {JIT_U8, JIT_F16, JIT_F32, JIT_F64};
static const jit_dtype itypes[] = {JIT_I8, JIT_U8, JIT_I16, JIT_U16,
                                   JIT_I32, JIT_U32, JIT_I64, JIT_U64};

/* Index values near the small dims built here, of either sign, so that
 * valid, wrapped, clamped and zero-filled indices all occur; sometimes an
 * extreme. Stored in the index type's width (little-endian truncation:
 * for an unsigned type a negative value becomes a huge one). */
static void *indices_from_input(fuzz_input *in, int64_t n, int size)
{
    static const int64_t extremes[] = {INT64_MIN, INT64_MAX, INT32_MIN, INT32_MAX, -129, 128,
                                       -32769, 32768};
    unsigned char *p = malloc((size_t)(n * size) + 1);
    for (int64_t i = 0; i < n; i++) {
        uint8_t b = fuzz_byte(in);
        int64_t v = b < 232 ? (int64_t)(b % 12) - 6 : extremes[b % 8];
        memcpy(p + i * size, &v, (size_t)size);
    }
    return p;
}

static void check_same(int s1, int s2, const void *a, const void *b, size_t n)
{
    if (s1 != s2 || memcmp(a, b, n) != 0)
        __builtin_trap();
}

static int sign_of(fuzz_input *in, int v, int r)
{
    return fuzz_byte(in) & 1 ? v - r : v;
}

/* The op's own shapes and attributes, valid by construction. */
static void build(fuzz_input *in, jit_sig *s)
{
    jit_shape *d = &s->data_shape, *ix = &s->indices_shape, *u = &s->updates_shape;
    switch (s->op) {
    case JIT_OP_GATHER_ND: {
        fuzz_small_shape(in, d, 1, 4);
        fuzz_small_shape(in, ix, 1, 3);
        int lo = d->rank < ix->rank ? d->rank : ix->rank;
        s->batch_dims = fuzz_byte(in) % lo;
        for (int i = 0; i < s->batch_dims; i++)
            ix->dims[i] = d->dims[i];
        ix->dims[ix->rank - 1] = fuzz_byte(in) % (d->rank - s->batch_dims + 1);
        break;
    }
    case JIT_OP_SCATTER_UPDATE: {
        fuzz_small_shape(in, d, 1, 4);
        fuzz_small_shape(in, ix, 0, 2); /* 0-D indices too */
        int r = d->rank, a = fuzz_byte(in) % r, n = 0;
        s->axis = sign_of(in, a, r);
        u->rank = r - 1 + ix->rank;
        for (int i = 0; i < a; i++)
            u->dims[n++] = d->dims[i];
        for (int i = 0; i < ix->rank; i++)
            u->dims[n++] = ix->dims[i];
        for (int i = a + 1; i < r; i++)
            u->dims[n++] = d->dims[i];
        break;
    }
    case JIT_OP_GATHER: {
        fuzz_small_shape(in, d, 1, 4);
        fuzz_small_shape(in, ix, 0, 3);
        int r = d->rank, q = ix->rank, a = fuzz_byte(in) % r;
        int hi = a < q ? a : q; /* batch_dims <= axis and <= rank(indices) */
        int b = s->opset == 1 ? 0 : fuzz_byte(in) % (hi + 1);
        for (int i = 0; i < b; i++)
            ix->dims[i] = d->dims[i];
        s->axis = sign_of(in, a, r);
        /* Gather-1 refuses any batch_dims but a literal 0, -q included */
        s->batch_dims = q && s->opset != 1 ? sign_of(in, b, q) : b;
        break;
    }
    case JIT_OP_GATHER_ELEMENTS: {
        fuzz_small_shape(in, d, 1, 4);
        int r = d->rank, a = fuzz_byte(in) % r;
        ix->rank = r;
        for (int i = 0; i < r; i++)
            /* the library takes OpenVINO's rule (equal dims but along axis), not
             * SPEC.md's torch-like indices.shape[d] <= data.shape[d] */
            ix->dims[i] = i == a ? fuzz_byte(in) % 5 : d->dims[i];
        s->axis = sign_of(in, a, r);
        break;
    }
    case JIT_OP_SCATTER_ND_UPDATE: {
        fuzz_small_shape(in, d, 1, 4);
        fuzz_small_shape(in, ix, 1, 3);
        int r = d->rank, k = fuzz_byte(in) % (r + 1), n = 0;
        ix->dims[ix->rank - 1] = k;
        u->rank = ix->rank - 1 + r - k;
        for (int i = 0; i < ix->rank - 1; i++)
            u->dims[n++] = ix->dims[i];
        for (int i = k; i < r; i++)
            u->dims[n++] = d->dims[i];
        break;
    }
    case JIT_OP_SCATTER_ELEMENTS_UPDATE: {
        fuzz_small_shape(in, d, 1, 4);
        int r = d->rank, a = fuzz_byte(in) % r;
        ix->rank = r;
        for (int i = 0; i < r; i++) /* along axis any size; elsewhere at most data's */
            ix->dims[i] = i == a ? fuzz_byte(in) % 5 : fuzz_byte(in) % (d->dims[i] + 1);
        *u = *ix;
        s->axis = sign_of(in, a, r);
        break;
    }
    default:
        __builtin_trap();
    }
}

/* A reduction the op's version takes (only its latest has any), and
 * use_init_val either way. */
static void pick_reduction(fuzz_input *in, const jit_op_info *oi, jit_sig *s)
{
    int last = 0;
    while (last + 1 < 4 && oi->opsets[last + 1])
        last++;
    jit_reduction r = (jit_reduction)(fuzz_byte(in) % JIT_REDUCTION_COUNT);
    if ((oi->attrs & JIT_ATTR_REDUCTION) && s->opset == oi->opsets[last] &&
        (oi->reductions & (1u << r)) && !(r == JIT_REDUCTION_MEAN && s->dtype == JIT_BOOL))
        s->reduction = r;
    if (oi->attrs & JIT_ATTR_INIT_VAL)
        s->no_init_val = fuzz_byte(in) & 1;
}

static void fuzz_op(fuzz_input *in, jit_op op)
{
    jit_op_info oi;
    if (jit_op_describe(op, &oi) != 0)
        __builtin_trap();
    jit_sig s;
    memset(&s, 0, sizeof s);
    s.op = op;
    int nv = 0;
    while (nv < 4 && oi.opsets[nv])
        nv++;
    s.opset = oi.opsets[fuzz_byte(in) % nv];
    s.dtype = dtypes[fuzz_byte(in) % 4];
    uint8_t tb = fuzz_byte(in);
    s.index_type = itypes[tb % 8];
    if (!(oi.index_types & (1u << s.index_type)))
        s.index_type = tb & 8 ? JIT_I64 : JIT_I32; /* what every op takes */
    s.index_policy = (jit_index_policy)(fuzz_byte(in) % JIT_INDEX_POLICY_COUNT);
    s.threads = fuzz_byte(in) % 3;
    build(in, &s);
    pick_reduction(in, &oi, &s);
    jit_sig rs = s;
    rs.engine = JIT_ENGINE_REFERENCE;
    jit_kernel fj = jit_compile(&s), fr = jit_compile(&rs);
    jit_kernel_info info;
    if (!fj || !fr || jit_info(fj, &info) != 0)
        __builtin_trap(); /* every signature built here is valid */
    int es = jit_dtype_size(s.dtype), is = jit_dtype_size(s.index_type);
    int64_t db = fuzz_count(&s.data_shape) * es, ob = info.out_bytes;
    unsigned char *data = fuzz_bytes(in, db);
    unsigned char *idx = indices_from_input(in, fuzz_count(&s.indices_shape), is);
    unsigned char *upd = oi.has_updates ? fuzz_bytes(in, fuzz_count(&s.updates_shape) * es) : NULL;
    /* one byte past the end: neither kernel may write it */
    unsigned char *o1 = malloc((size_t)ob + 1), *o2 = malloc((size_t)ob + 1);
    unsigned char *o0 = malloc((size_t)ob + 1);
    memset(o0, 0x5A, (size_t)ob + 1);
    memcpy(o1, o0, (size_t)ob + 1);
    memcpy(o2, o0, (size_t)ob + 1);
    int s2 = jit_call(fr, data, idx, upd, o2);
    int s1 = jit_call(fj, data, idx, upd, o1);
    check_same(s1, s2, o1, o2, (size_t)ob + 1);
    if (s1 != JIT_OK && (s1 != JIT_STATUS_BAD_INDEX || memcmp(o1, o0, (size_t)ob + 1) != 0))
        __builtin_trap(); /* a bad index writes nothing */
    if (oi.has_updates) {
        /* in place: the same bytes as out of place, or data untouched */
        memcpy(o1, data, (size_t)db);
        check_same(jit_call(fj, o1, idx, upd, o1), s2, o1, s2 ? data : o2, (size_t)db);
        memcpy(o1, data, (size_t)db);
        check_same(jit_call(fr, o1, idx, upd, o1), s2, o1, s2 ? data : o2, (size_t)db);
    }
    free(data);
    free(idx);
    free(upd);
    free(o0);
    free(o1);
    free(o2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static unsigned long calls;
    fuzz_input in = {data, size};
    /* the ops whose (data, indices, updates, out) signatures build() makes;
     * the embedding bags (table, indices, offsets, weights, out) are not
     * among them */
    int ops = JIT_OP_EMBEDDING_BAG_OFFSETS - 1;
    fuzz_op(&in, (jit_op)(JIT_OP_NONE + 1 + fuzz_byte(&in) % ops));
    if (++calls % 4096 == 0)
        jit_shutdown(); /* kernels accumulate: free them now and then */
    return 0;
}
