/* Each op's loop nest, from its signature, written from the op's
 * definition (SPEC sections 1 and 5) rather than from the library's plan,
 * so that a wrong plan shows as a mismatch with the static kernel. */
#include <string.h>

#include "bench.h"

static int64_t tj_prod(const jit_shape *s, int from, int to)
{
    int64_t p = 1;
    for (int i = from; i < to; i++)
        p *= s->dims[i];
    return p;
}

static void tj_level(tj_bench_shape *s, int64_t trip, int64_t index_step, int64_t indexed_step,
                     int64_t dense_step)
{
    s->levels[s->nlevels++] = (tj_bench_level){trip, index_step, indexed_step, dense_step};
}

/* Tuple entries 0..k-1 address data dims from..from+k-1, row-major,
 * above blocks of s->block bytes; returns the bytes of those dims. */
static int64_t tj_tuple_dims(tj_bench_shape *s, const jit_shape *d, int from, int k)
{
    int64_t stride = s->block;
    s->depth = k;
    for (int i = k - 1; i >= 0; i--) {
        s->dims[i] = d->dims[from + i];
        s->strides[i] = stride;
        stride *= d->dims[from + i];
    }
    return stride;
}

/* GatherND: per batch position, per tuple, a slice behind the k dims. */
static void tj_gather_nd(const jit_sig *g, tj_bench_shape *s)
{
    const jit_shape *d = &g->data_shape, *ix = &g->indices_shape;
    int b = g->batch_dims, k = (int)ix->dims[ix->rank - 1];
    int64_t items = tj_prod(ix, b, ix->rank - 1);
    s->block = tj_prod(d, b + k, d->rank) * s->elem_size;
    int64_t batch = tj_tuple_dims(s, d, b, k);
    tj_level(s, tj_prod(d, 0, b), items * k, batch, items * s->block);
    tj_level(s, items, k, 0, s->block);
    s->out_bytes = tj_prod(d, 0, b) * items * s->block;
}

/* Gather: per batch, per data position before the axis (the same
 * indices for each), per index, the slice behind the axis. */
static void tj_gather(const jit_sig *g, tj_bench_shape *s)
{
    const jit_shape *d = &g->data_shape, *ix = &g->indices_shape;
    int r = d->rank, q = ix->rank;
    int a = (int)(g->axis < 0 ? g->axis + r : g->axis);
    int b = g->batch_dims < 0 ? g->batch_dims + q : g->batch_dims;
    int64_t per_batch = tj_prod(ix, b, q), pre = tj_prod(d, b, a);
    s->block = tj_prod(d, a + 1, r) * s->elem_size;
    int64_t slab = tj_tuple_dims(s, d, a, 1);
    tj_level(s, tj_prod(d, 0, b), per_batch, slab * pre, per_batch * s->block * pre);
    tj_level(s, pre, 0, slab, per_batch * s->block);
    tj_level(s, per_batch, 1, 0, s->block);
    s->out_bytes = tj_prod(d, 0, b) * pre * per_batch * s->block;
}

/* GatherElements and ScatterElementsUpdate: one level per dim of indices
 * (its shape is the output's, or the updates'); the axis level moves
 * through indices and the dense side but not the indexed one (data, or
 * out), where the index takes its place. */
static void tj_elements(const jit_sig *g, tj_bench_shape *s)
{
    const jit_shape *d = &g->data_shape, *ix = &g->indices_shape;
    int r = d->rank, a = (int)(g->axis < 0 ? g->axis + r : g->axis);
    s->block = s->elem_size;
    for (int i = 0; i < r; i++) {
        int64_t inner = tj_prod(ix, i + 1, r), stride = tj_prod(d, i + 1, r) * s->elem_size;
        tj_level(s, ix->dims[i], inner, i == a ? 0 : stride, inner * s->elem_size);
        if (i == a) {
            s->depth = 1;
            s->dims[0] = d->dims[a];
            s->strides[0] = stride;
        }
    }
    s->out_bytes = s->index_count * s->elem_size;
    s->updates_bytes = s->index_count * s->elem_size;
}

/* ScatterUpdate: per position before the axis, per index, the block
 * behind the axis. */
static void tj_scatter_update(const jit_sig *u, tj_bench_shape *s)
{
    const jit_shape *d = &u->data_shape;
    int a = (int)(u->axis < 0 ? u->axis + d->rank : u->axis);
    int64_t items = tj_prod(&u->indices_shape, 0, u->indices_shape.rank);
    s->block = tj_prod(d, a + 1, d->rank) * s->elem_size;
    int64_t slab = tj_tuple_dims(s, d, a, 1);
    tj_level(s, tj_prod(d, 0, a), 0, slab, items * s->block);
    tj_level(s, items, 1, 0, s->block);
    s->updates_bytes = tj_prod(d, 0, a) * items * s->block;
}

/* ScatterNDUpdate: per tuple, the slice behind its k dims. */
static void tj_scatter_nd_update(const jit_sig *u, tj_bench_shape *s)
{
    const jit_shape *d = &u->data_shape, *ix = &u->indices_shape;
    int k = (int)ix->dims[ix->rank - 1];
    int64_t items = tj_prod(ix, 0, ix->rank - 1);
    s->block = tj_prod(d, k, d->rank) * s->elem_size;
    tj_tuple_dims(s, d, 0, k);
    tj_level(s, items, k, 0, s->block);
    s->updates_bytes = items * s->block;
}

/* A dynamic variant's nest is its static twin's: the shapes it is called with. */
void tj_bench_shape_of(const tj_workload *w, tj_bench_shape *s)
{
    w = tj_workload_concrete(w);
    const jit_sig *g = &w->sig;
    memset(s, 0, sizeof *s);
    s->scatter = tj_workload_has_updates(w);
    s->sum = s->scatter && g->reduction == JIT_REDUCTION_SUM && g->dtype == JIT_F32;
    s->elem_size = jit_dtype_size(g->dtype);
    s->index_size = jit_dtype_size(g->index_type);
    s->index_signed = g->index_type == JIT_I8 || g->index_type == JIT_I16 ||
                      g->index_type == JIT_I32 || g->index_type == JIT_I64;
    s->data_bytes = tj_prod(&g->data_shape, 0, g->data_shape.rank) * s->elem_size;
    s->index_count = tj_prod(&g->indices_shape, 0, g->indices_shape.rank);
    switch (g->op) {
    case JIT_OP_GATHER_ND: tj_gather_nd(g, s); break;
    case JIT_OP_GATHER: tj_gather(g, s); break;
    case JIT_OP_GATHER_ELEMENTS: tj_elements(g, s); break;
    case JIT_OP_SCATTER_ELEMENTS_UPDATE: tj_elements(g, s); break;
    case JIT_OP_SCATTER_UPDATE: tj_scatter_update(g, s); break;
    case JIT_OP_SCATTER_ND_UPDATE: tj_scatter_nd_update(g, s); break;
    default: break;
    }
    if (s->scatter)
        s->out_bytes = s->data_bytes;
    s->moved_bytes = s->scatter ? (w->in_place ? 0 : s->data_bytes) + s->updates_bytes
                                : s->out_bytes;
}
