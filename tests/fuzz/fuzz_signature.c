/* Arbitrary bytes decoded into GatherND and ScatterUpdate signatures
 * (ranks past the maximum, dims that overflow, unknown enum values) through
 * checking, planning, output shapes, explain and compile; a valid small
 * signature's reference kernel then runs on bytes of the input as indices.
 * Nothing may crash, leak or read outside a buffer. */
#include <stdlib.h>

#include "fuzz_input.h"
#include "tensorjit.h"

static void fuzz_shape(fuzz_input *in, jit_shape *s)
{
    s->rank = fuzz_byte(in) % 36; /* above JIT_MAX_RANK too */
    for (int i = 0; i < s->rank && i < JIT_MAX_RANK; i++)
        s->dims[i] = fuzz_value(in);
}

/* Bytes of a shape, INT64_MAX when the product overflows (the library
 * accepted the signature, but a partial product taken in another order
 * may still overflow). */
static int64_t bytes_of(const jit_shape *s, jit_dtype t)
{
    int64_t n = 1;
    for (int i = 0; i < s->rank; i++)
        if (__builtin_mul_overflow(n, s->dims[i], &n))
            return INT64_MAX;
    return __builtin_mul_overflow(n, (int64_t)jit_dtype_size(t), &n) ? INT64_MAX : n;
}

static void *filled(fuzz_input *in, int64_t n)
{
    unsigned char *p = malloc((size_t)(n ? n : 1));
    for (int64_t i = 0; p && i < n; i++)
        p[i] = fuzz_byte(in);
    return p;
}

static void fuzz_gather(fuzz_input *in)
{
    jit_gather_nd_sig s = {0};
    s.opset = fuzz_byte(in) % 10;
    s.batch_dims = (int)fuzz_value(in);
    s.dtype = (jit_dtype)(fuzz_byte(in) % (JIT_DTYPE_COUNT + 2));
    s.index_type = (jit_dtype)(fuzz_byte(in) % (JIT_DTYPE_COUNT + 2));
    s.index_policy = (jit_index_policy)(fuzz_byte(in) % 6);
    s.engine = JIT_ENGINE_REFERENCE; /* the JIT has its own harness */
    s.threads = (int)fuzz_value(in);
    fuzz_shape(in, &s.data_shape);
    fuzz_shape(in, &s.indices_shape);
    jit_shape out;
    if (jit_gather_nd_output_shape(&s, &out) != 0)
        return;
    jit_free(jit_gather_nd_explain(&s));
    jit_gather_nd_fn fn = jit_gather_nd_compile(&s);
    jit_kernel_info info;
    if (!fn || jit_gather_nd_info(fn, &info) != 0)
        abort(); /* a valid signature always gets a kernel */
    int64_t db = bytes_of(&s.data_shape, s.dtype), ib = bytes_of(&s.indices_shape, s.index_type);
    if (db > 65536 || ib > 65536 || info.out_bytes > 65536)
        return;
    void *data = filled(in, db), *idx = filled(in, ib), *o = malloc((size_t)info.out_bytes + 1);
    fn(data, idx, o);
    free(data);
    free(idx);
    free(o);
}

static void fuzz_scatter(fuzz_input *in)
{
    jit_scatter_update_sig s = {0};
    s.axis = fuzz_value(in);
    s.dtype = (jit_dtype)(fuzz_byte(in) % (JIT_DTYPE_COUNT + 2));
    s.updates_dtype = (jit_dtype)(fuzz_byte(in) % (JIT_DTYPE_COUNT + 2));
    s.index_type = (jit_dtype)(fuzz_byte(in) % (JIT_DTYPE_COUNT + 2));
    s.axis_type = (jit_dtype)(fuzz_byte(in) % (JIT_DTYPE_COUNT + 2));
    s.index_policy = (jit_index_policy)(fuzz_byte(in) % 6);
    s.engine = JIT_ENGINE_REFERENCE;
    s.threads = (int)fuzz_value(in);
    fuzz_shape(in, &s.axis_shape);
    fuzz_shape(in, &s.data_shape);
    fuzz_shape(in, &s.indices_shape);
    fuzz_shape(in, &s.updates_shape);
    jit_shape out;
    if (jit_scatter_update_output_shape(&s, &out) != 0)
        return;
    jit_free(jit_scatter_update_explain(&s));
    jit_scatter_update_fn fn = jit_scatter_update_compile(&s);
    if (!fn)
        abort();
    int64_t db = bytes_of(&s.data_shape, s.dtype), ib = bytes_of(&s.indices_shape, s.index_type);
    int64_t ub = bytes_of(&s.updates_shape, s.dtype);
    if (db > 65536 || ib > 65536 || ub > 65536)
        return;
    void *data = filled(in, db), *idx = filled(in, ib), *upd = filled(in, ub);
    void *o = malloc((size_t)db + 1);
    fn(data, idx, upd, o);
    fn(data, idx, upd, data); /* in place */
    free(data);
    free(idx);
    free(upd);
    free(o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input in = {data, size};
    if (fuzz_byte(&in) & 1)
        fuzz_scatter(&in);
    else
        fuzz_gather(&in);
    jit_shutdown(); /* frees every kernel: memory stays bounded */
    return 0;
}
