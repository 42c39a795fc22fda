/* tensorjit's own kernels for a bag workload: the one place that knows the
 * embedding-bag API. Until the ops exist (CMake's check for
 * JIT_OP_EMBEDDING_BAG_OFFSETS and the signature types defines
 * TENSORJIT_HAVE_BAGS), the bench runs without these rows. */
#include <stdio.h>

#include "bags.h"
#include "bench.h"
#include "tensorjit.h"

#ifdef TENSORJIT_HAVE_BAGS
/* The dynamic kernel's family: any bag count and any lookup count
 * (packed: bag length) on the workload's table. The table height stays
 * static: left dynamic too, it cost the small E1 and E3 15-25% against
 * the static kernel, past the 1.1x that workloads.md allows. */
static int64_t tj_dyn(int dynamic, int64_t v)
{
    return dynamic ? JIT_DIM_DYNAMIC : v;
}

/* What a field is not given keeps its zero: no default index, no padding,
 * offsets without the last, opset 15. */
jit_sig tj_bags_jit_sig(const tj_bag_workload *w, int64_t n, int threads, int dynamic)
{
    jit_sig s = {0};
    s.op = w->packed ? JIT_OP_EMBEDDING_BAG_PACKED : JIT_OP_EMBEDDING_BAG_OFFSETS;
    s.dtype = w->bf16 ? JIT_BF16 : JIT_F32;
    s.index_type = w->index_size == 4 ? JIT_I32 : JIT_I64;
    s.reduction = w->mean ? JIT_REDUCTION_MEAN : JIT_REDUCTION_SUM;
    s.threads = threads;
    s.has_weights = w->weighted;
    s.data_shape = (jit_shape){2, {w->rows, w->width}};
    if (w->packed)
        s.indices_shape = (jit_shape){2, {tj_dyn(dynamic, w->bags), tj_dyn(dynamic, w->length)}};
    else {
        s.indices_shape = (jit_shape){1, {tj_dyn(dynamic, n)}};
        s.updates_shape = (jit_shape){1, {tj_dyn(dynamic, w->bags)}};
    }
    return s;
}

static jit_kernel tj_compile_timed(const jit_sig *s, const char *id, double *ms, char *why,
                                   size_t len)
{
    double t0 = tj_bench_now_ns();
    jit_kernel k = jit_compile(s);
    if (ms)
        *ms = (tj_bench_now_ns() - t0) / 1e6;
    if (!k)
        snprintf(why, len, "%s: %s", id, jit_last_error());
    return k;
}

tj_bag_fn tj_bags_jit_compile(const tj_bag_workload *w, int64_t n, int threads, double *ms,
                              char *why, size_t len)
{
    jit_sig s = tj_bags_jit_sig(w, n, threads, 0);
    return (tj_bag_fn)tj_compile_timed(&s, w->id, ms, why, len);
}

tj_bag_dyn_fn tj_bags_jit_compile_dynamic(const tj_bag_workload *w, double *ms, char *why,
                                          size_t len)
{
    jit_sig s = tj_bags_jit_sig(w, 0, 1, 1);
    return (tj_bag_dyn_fn)tj_compile_timed(&s, w->id, ms, why, len);
}

tj_bag_fn tj_bags_jit_compile_unchecked(const tj_bag_workload *w, int64_t n, char *why,
                                        size_t len)
{
    char what[192];
    jit_sig s = tj_bags_jit_sig(w, n, 1, 0);
    tj_bag_fn fn = (tj_bag_fn)tj_bench_compile_unchecked(&s, what, sizeof what);
    if (!fn)
        snprintf(why, len, "%s: %s", w->id, what);
    return fn;
}

void tj_bags_jit_async(const tj_bag_workload *w, double *back_ms, double *jit_ms)
{
    jit_sig s = tj_bags_jit_sig(w, 0, 1, 1);
    s.data_shape.dims[0] += 1; /* a key of its own, the same code */
    double t0 = tj_bench_now_ns();
    jit_kernel k = jit_compile_async(&s);
    *back_ms = k ? (tj_bench_now_ns() - t0) / 1e6 : -1;
    *jit_ms = k ? tj_bench_until_jit(k, t0, 5000) : -1;
}

/* A packed bag of another shape than any workload's, so that nothing it
 * compiles serves a workload later. */
double tj_bags_jit_first_compile(void)
{
    static const tj_bag_workload first = {.id = "first", .rows = 10, .width = 4, .bags = 2,
                                          .length = 3, .index_size = 4, .packed = 1};
    char why[256];
    double ms;
    return tj_bags_jit_compile(&first, 6, 1, &ms, why, sizeof why) ? ms : -1;
}
#else
tj_bag_fn tj_bags_jit_compile(const tj_bag_workload *w, int64_t n, int threads, double *ms,
                              char *why, size_t len)
{
    (void)n, (void)threads, (void)ms;
    snprintf(why, len, "%s: this build of tensorjit has no embedding-bag ops", w->id);
    return NULL;
}

tj_bag_dyn_fn tj_bags_jit_compile_dynamic(const tj_bag_workload *w, double *ms, char *why,
                                          size_t len)
{
    tj_bags_jit_compile(w, 0, 1, ms, why, len);
    return NULL;
}

tj_bag_fn tj_bags_jit_compile_unchecked(const tj_bag_workload *w, int64_t n, char *why,
                                        size_t len)
{
    return tj_bags_jit_compile(w, n, 1, NULL, why, len);
}

void tj_bags_jit_async(const tj_bag_workload *w, double *back_ms, double *jit_ms)
{
    (void)w;
    *back_ms = *jit_ms = -1;
}

double tj_bags_jit_first_compile(void)
{
    return -1;
}
#endif

int tj_bags_jit_dims(const tj_bag_workload *w, int64_t n, int64_t *dims)
{
    int k = 0;
    dims[k++] = w->rows, dims[k++] = w->width;
    if (w->packed)
        dims[k++] = w->bags, dims[k++] = w->length;
    else
        dims[k++] = n, dims[k++] = w->bags;
    return k;
}
