/* tensorjit's own kernel for a bag workload: the one place that knows the
 * embedding-bag API. Until the ops exist (CMake's check for
 * JIT_OP_EMBEDDING_BAG_OFFSETS and the signature types defines
 * TENSORJIT_HAVE_BAGS), the bench runs without this row. */
#include <stdio.h>

#include "bags.h"
#include "tensorjit.h"

#ifdef TENSORJIT_HAVE_BAGS
/* What a field is not given keeps its zero: no default index, no padding,
 * offsets without the last, opset 15. */
tj_bag_fn tj_bags_jit_compile(const tj_bag_workload *w, int64_t n, int threads, char *why,
                              size_t len)
{
    jit_dtype dtype = w->bf16 ? JIT_BF16 : JIT_F32;
    jit_dtype index_type = w->index_size == 4 ? JIT_I32 : JIT_I64;
    jit_reduction reduction = w->mean ? JIT_REDUCTION_MEAN : JIT_REDUCTION_SUM;
    jit_shape table = {2, {w->rows, w->width}};
    tj_bag_fn fn;
    if (w->packed) {
        jit_embedding_bag_packed_sig sig = {0};
        sig.dtype = dtype, sig.index_type = index_type, sig.reduction = reduction;
        sig.threads = threads;
        sig.table_shape = table;
        sig.indices_shape = (jit_shape){2, {w->bags, w->length}};
        sig.has_weights = w->weighted;
        fn = (tj_bag_fn)jit_embedding_bag_packed_compile(&sig);
    } else {
        jit_embedding_bag_offsets_sig sig = {0};
        sig.dtype = dtype, sig.index_type = index_type, sig.reduction = reduction;
        sig.threads = threads;
        sig.table_shape = table;
        sig.indices_shape = (jit_shape){1, {n}};
        sig.offsets_shape = (jit_shape){1, {w->bags}};
        sig.has_weights = w->weighted;
        fn = (tj_bag_fn)jit_embedding_bag_offsets_compile(&sig);
    }
    if (!fn)
        snprintf(why, len, "%s: %s", w->id, jit_last_error());
    return fn;
}
#else
tj_bag_fn tj_bags_jit_compile(const tj_bag_workload *w, int64_t n, int threads, char *why,
                              size_t len)
{
    (void)n, (void)threads;
    snprintf(why, len, "%s: this build of tensorjit has no embedding-bag ops", w->id);
    return NULL;
}
#endif
