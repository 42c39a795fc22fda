/* Small signatures and indices from the input, JIT against the reference
 * kernel: every status and every output byte must agree (a trap if not).
 * Both ops, every policy, index type, element size, zero dims, in place,
 * pooled kernels. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "tensorjit.h"

static const jit_dtype dtypes[] = {JIT_U8, JIT_F16, JIT_F32, JIT_F64};
static const jit_dtype itypes[] = {JIT_I8, JIT_U8, JIT_I16, JIT_U16,
                                   JIT_I32, JIT_U32, JIT_I64, JIT_U64};

static void small_shape(fuzz_input *in, jit_shape *s, int max_rank)
{
    s->rank = 1 + fuzz_byte(in) % max_rank;
    for (int i = 0; i < s->rank; i++)
        s->dims[i] = fuzz_byte(in) % 5;
}

static int64_t count(const jit_shape *s)
{
    int64_t n = 1;
    for (int i = 0; i < s->rank; i++)
        n *= s->dims[i];
    return n;
}

static void *from_input(fuzz_input *in, int64_t n)
{
    unsigned char *p = malloc((size_t)n + 1);
    for (int64_t i = 0; i < n; i++)
        p[i] = fuzz_byte(in);
    return p;
}

static void check_same(int s1, int s2, const void *a, const void *b, size_t n)
{
    if (s1 != s2 || (s1 == 0 && memcmp(a, b, n) != 0))
        __builtin_trap();
}

static void fuzz_gather(fuzz_input *in)
{
    jit_gather_nd_sig s = {0};
    s.dtype = dtypes[fuzz_byte(in) % 4];
    s.index_type = itypes[fuzz_byte(in) % 8];
    s.index_policy = (jit_index_policy)(fuzz_byte(in) % 4);
    s.threads = fuzz_byte(in) % 3;
    small_shape(in, &s.data_shape, 4);
    small_shape(in, &s.indices_shape, 3);
    int lo = s.data_shape.rank < s.indices_shape.rank ? s.data_shape.rank : s.indices_shape.rank;
    s.batch_dims = fuzz_byte(in) % lo;
    for (int i = 0; i < s.batch_dims; i++)
        s.indices_shape.dims[i] = s.data_shape.dims[i];
    s.indices_shape.dims[s.indices_shape.rank - 1] =
        fuzz_byte(in) % (s.data_shape.rank - s.batch_dims + 1);
    jit_gather_nd_sig r = s;
    r.engine = JIT_ENGINE_REFERENCE;
    jit_gather_nd_fn fj = jit_gather_nd_compile(&s), fr = jit_gather_nd_compile(&r);
    jit_kernel_info info;
    if (!fj || !fr || jit_gather_nd_info(fj, &info) != 0)
        __builtin_trap(); /* every signature built here is valid */
    int64_t db = count(&s.data_shape) * jit_dtype_size(s.dtype);
    int64_t ib = count(&s.indices_shape) * jit_dtype_size(s.index_type);
    void *data = from_input(in, db), *idx = from_input(in, ib);
    unsigned char *o1 = malloc((size_t)info.out_bytes + 1), *o2 = malloc((size_t)info.out_bytes + 1);
    memset(o1, 1, (size_t)info.out_bytes + 1);
    memset(o2, 1, (size_t)info.out_bytes + 1);
    check_same(fj(data, idx, o1), fr(data, idx, o2), o1, o2, (size_t)info.out_bytes + 1);
    free(data);
    free(idx);
    free(o1);
    free(o2);
}

static void fuzz_scatter(fuzz_input *in)
{
    jit_scatter_update_sig s = {0};
    s.dtype = dtypes[fuzz_byte(in) % 4];
    s.index_type = itypes[fuzz_byte(in) % 8];
    s.index_policy = (jit_index_policy)(fuzz_byte(in) % 4);
    s.threads = fuzz_byte(in) % 3;
    small_shape(in, &s.data_shape, 4);
    small_shape(in, &s.indices_shape, 2);
    s.indices_shape.rank = fuzz_byte(in) % 3; /* 0-D indices too */
    int r = s.data_shape.rank, a = fuzz_byte(in) % r, u = 0;
    s.axis = fuzz_byte(in) & 1 ? a : a - r;
    s.updates_shape.rank = r - 1 + s.indices_shape.rank;
    for (int i = 0; i < a; i++)
        s.updates_shape.dims[u++] = s.data_shape.dims[i];
    for (int i = 0; i < s.indices_shape.rank; i++)
        s.updates_shape.dims[u++] = s.indices_shape.dims[i];
    for (int i = a + 1; i < r; i++)
        s.updates_shape.dims[u++] = s.data_shape.dims[i];
    jit_scatter_update_sig rs = s;
    rs.engine = JIT_ENGINE_REFERENCE;
    jit_scatter_update_fn fj = jit_scatter_update_compile(&s), fr = jit_scatter_update_compile(&rs);
    if (!fj || !fr)
        __builtin_trap();
    int es = jit_dtype_size(s.dtype);
    int64_t db = count(&s.data_shape) * es, ib = count(&s.indices_shape) * jit_dtype_size(s.index_type);
    int64_t ub = count(&s.updates_shape) * es;
    unsigned char *data = from_input(in, db), *idx = from_input(in, ib), *upd = from_input(in, ub);
    unsigned char *o1 = malloc((size_t)db + 1), *o2 = malloc((size_t)db + 1);
    memset(o1, 1, (size_t)db + 1);
    memset(o2, 1, (size_t)db + 1);
    int s2 = fr(data, idx, upd, o2);
    check_same(fj(data, idx, upd, o1), s2, o1, o2, (size_t)db + 1);
    memcpy(o1, data, (size_t)db); /* in place: the same bytes, or data untouched */
    check_same(fj(o1, idx, upd, o1), s2, o1, s2 ? data : o2, (size_t)db);
    free(data);
    free(idx);
    free(upd);
    free(o1);
    free(o2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static unsigned long calls;
    fuzz_input in = {data, size};
    if (fuzz_byte(&in) & 1)
        fuzz_scatter(&in);
    else
        fuzz_gather(&in);
    if (++calls % 4096 == 0)
        jit_shutdown(); /* kernels accumulate: free them now and then */
    return 0;
}
