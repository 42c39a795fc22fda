/*
 * The second-shape check of a dynamic variant (SPEC section 6: one kernel
 * for the whole family of shapes, never a compile per shape). After its
 * timing at the twin's shapes, the same jit_dynamic_fn is called with
 * every dynamic dim halved (rounded up): the JIT kernels alive and the
 * kernel's jit_info must not change, jit_compile of the dynamic signature
 * must still give the same pointer, and the output must equal the generic
 * loop's at that shape (the bench's own nest, not the library's plan).
 * Then one call at the first shape again must give the static kernel's
 * output: the kernel switches back and forth between shapes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_run.h"

/* "indices 25x125x3 -> 13x63x3" for each input with a dynamic dim. */
static void tj_describe(const tj_bench_case *c, const int64_t *dims, char *buf, size_t len)
{
    const jit_sig *g = &c->w->sig;
    const jit_shape *in[3] = {&g->data_shape, &g->indices_shape, &g->updates_shape};
    static const char *const names[3] = {"data", "indices", "updates"};
    size_t n = 0;
    int at = 0;
    buf[0] = '\0';
    for (int i = 0; i < (c->s.scatter ? 3 : 2); at += in[i]->rank, i++) {
        int dynamic = 0;
        for (int d = 0; d < in[i]->rank; d++)
            dynamic |= in[i]->dims[d] == JIT_DIM_DYNAMIC;
        if (!dynamic)
            continue;
        for (int pass = 0; pass < 2 && n < len; pass++) {
            const int64_t *v = pass ? dims : c->dims;
            n += (size_t)snprintf(buf + n, len - n, "%s", pass ? " -> " : n ? ", " : "");
            if (!pass && n < len)
                n += (size_t)snprintf(buf + n, len - n, "%s ", names[i]);
            for (int d = 0; d < in[i]->rank && n < len; d++)
                n += (size_t)snprintf(buf + n, len - n, "%s%lld", d ? "x" : "",
                                      (long long)v[at + d]);
        }
    }
}

static int tj_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int tj_bench_reshape_check(tj_bench_case *c, char *why, size_t len)
{
    const tj_workload *w = c->w;
    const jit_sig *g = &w->sig;
    const jit_shape *in[3] = {&g->data_shape, &g->indices_shape, &g->updates_shape};
    tj_bench_reshape *r = &c->reshape;
    int in_place = tj_workload_concrete(w)->in_place;
    jit_dynamic_fn fn = (jit_dynamic_fn)c->dyn;
    int64_t dims[3 * JIT_MAX_RANK];
    int n = 0;
    for (int i = 0; i < (c->s.scatter ? 3 : 2); i++)
        for (int d = 0; d < in[i]->rank; d++, n++)
            dims[n] = in[i]->dims[d] == JIT_DIM_DYNAMIC ? (c->dims[n] + 1) / 2 : c->dims[n];
    tj_describe(c, dims, r->shape, sizeof r->shape);
    jit_sig bound;
    if (jit_sig_bind(g, dims, &bound) != 0) {
        snprintf(why, len, "%s: the second shape (%s) does not bind: %s", w->id, r->shape,
                 jit_last_error());
        return -1;
    }
    /* the second shape's nest; its data, updates and out are the first
     * bytes of the first shape's buffers (every dim is at most the first
     * shape's), its indices the first entries, each taken modulo its data
     * dim (which may have shrunk: S5d's node count) */
    tj_workload w2 = *tj_workload_concrete(w);
    w2.sig = bound;
    w2.static_twin = NULL;
    tj_bench_shape s2;
    tj_bench_shape_of(&w2, &s2);
    void *idx = malloc((size_t)(s2.index_count * s2.index_size + 8));
    void *expect = tj_bench_alloc(s2.out_bytes);
    if (!idx || !expect) {
        free(idx);
        free(expect);
        snprintf(why, len, "out of memory for workload %s", w->id);
        return -1;
    }
    for (int64_t i = 0; i < s2.index_count; i++)
        tj_bench_store_index(&s2, idx, i,
                             tj_bench_load_index(&c->s, c->indices, i) % s2.dims[i % s2.depth]);
    int rc;
    if (in_place) {
        memcpy(expect, c->pristine, (size_t)s2.data_bytes);
        rc = tj_generic_run(&s2, expect, idx, c->updates, expect);
    } else {
        rc = tj_generic_run(&s2, c->data, idx, c->updates, expect);
    }
    if (rc != 0) {
        snprintf(why, len, "%s: the generic loop refuses the second shape (%s)", w->id, r->shape);
        free(idx);
        free(expect);
        return -1;
    }

    /* the calls at the second shape, between two looks at the library */
    jit_kernel_stats before = {0}, after = {0};
    jit_kernel_info i0 = {0}, i1 = {0};
    jit_get_kernel_stats(&before);
    jit_info(c->dyn, &i0);
    if (in_place)
        memcpy(c->data, c->pristine, (size_t)s2.data_bytes);
    double t0 = tj_bench_now_ns();
    rc = fn(c->data, idx, c->updates, c->out, dims);
    r->first_ns = tj_bench_now_ns() - t0;
    r->output_ok = rc == 0 && memcmp(c->out, expect, (size_t)s2.out_bytes) == 0;
    enum { NEXT = 5 };
    double next[NEXT];
    for (int k = 0; k < NEXT && rc == 0; k++) {
        t0 = tj_bench_now_ns();
        rc = fn(c->data, idx, c->updates, c->out, dims);
        next[k] = tj_bench_now_ns() - t0;
    }
    qsort(next, NEXT, sizeof *next, tj_cmp_double);
    r->next_ns = rc == 0 ? next[NEXT / 2] : 0;
    jit_get_kernel_stats(&after);
    jit_info(c->dyn, &i1);
    r->kernels_before = before.jit_kernels;
    r->kernels_after = after.jit_kernels;
    r->same_info = i0.engine == i1.engine && i0.compile_ms == i1.compile_ms &&
                   i0.code_bytes == i1.code_bytes && i1.dynamic;
    r->same_pointer = jit_compile(g) == c->dyn;
    free(idx);
    free(expect);
    if (rc != 0) {
        snprintf(why, len, "%s: the dynamic kernel failed at the second shape (%s): status %d: %s",
                 w->id, r->shape, rc, jit_last_error());
        return -1;
    }
    if (!r->output_ok) {
        snprintf(why, len, "%s: at the second shape (%s) the dynamic kernel's output differs "
                 "from the generic loop's", w->id, r->shape);
        return -1;
    }

    /* and back to the first shape */
    if (in_place)
        memcpy(c->data, c->pristine, (size_t)c->s.data_bytes);
    rc = tj_bench_call(c, TJ_IMPL_DYNAMIC);
    r->back_ok = rc == 0 && memcmp(c->out, c->check, (size_t)c->s.out_bytes) == 0;
    if (!r->back_ok) {
        snprintf(why, len, "%s: called with the first shape again after the second, the dynamic "
                 "kernel %s", w->id, rc ? "failed" : "wrote another output");
        return -1;
    }
    return 0;
}
