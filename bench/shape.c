#include <string.h>

#include "bench.h"

static int64_t tj_prod(const jit_shape *s, int from, int to)
{
    int64_t p = 1;
    for (int i = from; i < to; i++)
        p *= s->dims[i];
    return p;
}

void tj_bench_shape_of(const tj_workload *w, tj_bench_shape *s)
{
    memset(s, 0, sizeof *s);
    s->scatter = w->is_scatter;
    if (!w->is_scatter) {
        const jit_gather_nd_sig *g = &w->gather;
        const jit_shape *d = &g->data_shape, *ix = &g->indices_shape;
        int b = g->batch_dims, k = (int)ix->dims[ix->rank - 1];
        s->elem_size = jit_dtype_size(g->dtype);
        s->index_size = jit_dtype_size(g->index_type);
        s->index_signed = g->index_type == JIT_I32 || g->index_type == JIT_I64;
        s->outer = tj_prod(d, 0, b);
        s->items = tj_prod(ix, b, ix->rank - 1);
        s->depth = k;
        s->block = tj_prod(d, b + k, d->rank) * s->elem_size;
        int64_t stride = s->block;
        for (int i = k - 1; i >= 0; i--) {
            s->dims[i] = d->dims[b + i];
            s->strides[i] = stride;
            stride *= d->dims[b + i];
        }
        s->indexed_outer = stride;
        s->data_bytes = tj_prod(d, 0, d->rank) * s->elem_size;
        s->index_count = tj_prod(ix, 0, ix->rank);
        s->out_bytes = s->outer * s->items * s->block;
        s->moved_bytes = s->out_bytes;
        return;
    }
    const jit_scatter_update_sig *u = &w->scatter;
    const jit_shape *d = &u->data_shape;
    int a = (int)(u->axis < 0 ? u->axis + d->rank : u->axis);
    s->elem_size = jit_dtype_size(u->dtype);
    s->index_size = jit_dtype_size(u->index_type);
    s->index_signed = u->index_type == JIT_I32 || u->index_type == JIT_I64;
    s->outer = tj_prod(d, 0, a);
    s->items = tj_prod(&u->indices_shape, 0, u->indices_shape.rank);
    s->depth = 1;
    s->block = tj_prod(d, a + 1, d->rank) * s->elem_size;
    s->dims[0] = d->dims[a];
    s->strides[0] = s->block;
    s->indexed_outer = s->block * d->dims[a];
    s->data_bytes = tj_prod(d, 0, d->rank) * s->elem_size;
    s->index_count = s->items;
    s->updates_bytes = s->outer * s->items * s->block;
    s->out_bytes = s->data_bytes;
    s->moved_bytes = (w->in_place ? 0 : s->data_bytes) + s->updates_bytes;
}
