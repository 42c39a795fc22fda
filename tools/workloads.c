#include "workloads.h"

#include <stdio.h>
#include <string.h>

#define SH(...) {sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t), {__VA_ARGS__}}
#define GND(bd, dt, it, ds, is)                                                             \
    {.op = JIT_OP_GATHER_ND, .opset = 8, .batch_dims = bd, .dtype = dt, .index_type = it,   \
     .data_shape = ds, .indices_shape = is}
#define GATHER(ax, bd, dt, it, ds, is)                                                      \
    {.op = JIT_OP_GATHER, .opset = 8, .axis = ax, .batch_dims = bd, .dtype = dt,            \
     .index_type = it, .data_shape = ds, .indices_shape = is}
#define GATHER_ELEMENTS(ax, dt, it, ds, is)                                                 \
    {.op = JIT_OP_GATHER_ELEMENTS, .opset = 6, .axis = ax, .dtype = dt, .index_type = it,     \
     .data_shape = ds, .indices_shape = is}
#define SCATTER(ax, dt, it, ds, is, us)                                                     \
    {.op = JIT_OP_SCATTER_UPDATE, .axis = ax, .dtype = dt, .index_type = it,    \
     .data_shape = ds, .indices_shape = is, .updates_shape = us}
#define SCATTER_ND(dt, it, ds, is, us)                                                      \
    {.op = JIT_OP_SCATTER_ND_UPDATE, .opset = 3, .dtype = dt, .index_type = it,             \
     .data_shape = ds, .indices_shape = is, .updates_shape = us}

#define SCATTER_ND_SUM(dt, it, ds, is, us)                                                  \
    {.op = JIT_OP_SCATTER_ND_UPDATE, .opset = 15, .reduction = JIT_REDUCTION_SUM, .dtype = dt, \
     .index_type = it, .data_shape = ds, .indices_shape = is, .updates_shape = us}
#define SCATTER_ELEMENTS_SUM(ax, dt, it, ds, is, us)                                        \
    {.op = JIT_OP_SCATTER_ELEMENTS_UPDATE, .opset = 12, .axis = ax,                         \
     .reduction = JIT_REDUCTION_SUM, .dtype = dt, .index_type = it, .data_shape = ds,       \
     .indices_shape = is, .updates_shape = us}

#define DYN JIT_DIM_DYNAMIC

static const int64_t tj_g6_indices[] = {0, 0, 1, 0}, tj_s3_indices[] = {0, 2};

const tj_workload tj_workloads[] = {
    {"G1", "3125 slices of 15 floats from 150 MB", 0, TJ_FILL_RANDOM, NULL,
     GND(0, JIT_F32, JIT_I32, SH(1000, 256, 10, 15), SH(25, 125, 3)), NULL},
    {"G2", "180 slices of 35 floats, batch dims", 0, TJ_FILL_RANDOM, NULL,
     GND(2, JIT_F32, JIT_I64, SH(30, 2, 100, 35), SH(30, 2, 3, 1)), NULL},
    {"G3", "4096 single elements, deep batch dims", 0, TJ_FILL_RANDOM, NULL,
     GND(3, JIT_F32, JIT_I32, SH(1, 64, 64, 320), SH(1, 64, 64, 1, 1)), NULL},
    {"G4", "1M random single elements from 64 MB", 0, TJ_FILL_RANDOM, NULL,
     GND(0, JIT_F32, JIT_I64, SH(4096, 4096), SH(1048576, 2)), NULL},
    {"G5", "row gather (embedding lookup), 64 MB out", 0, TJ_FILL_RANDOM, NULL,
     GND(0, JIT_F32, JIT_I32, SH(100000, 256), SH(65536, 1)), NULL},
    {"G6", "per-call cost", 0, TJ_FILL_FIXED, tj_g6_indices,
     GND(0, JIT_I32, JIT_I32, SH(2, 2), SH(2, 2)), NULL},
    {"G7", "Gather-8 embedding lookup: 4096 rows of 3 KB from 154 MB", 0, TJ_FILL_RANDOM, NULL,
     GATHER(0, 0, JIT_F32, JIT_I64, SH(50000, 768), SH(8, 512)), NULL},
    {"G8", "Gather-8 KV-cache reorder: rows chosen per batch", 0, TJ_FILL_RANDOM, NULL,
     GATHER(1, 1, JIT_F16, JIT_I32, SH(16, 4096, 128), SH(16, 256)), NULL},
    {"G9", "GatherElements-6: a permutation per row, one index per element", 0,
     TJ_FILL_ROW_PERMUTATION, NULL,
     GATHER_ELEMENTS(1, JIT_F32, JIT_I64, SH(256, 1000), SH(256, 1000)), NULL},
    {"S1", "copy + scatter of 600-byte blocks", 0, TJ_FILL_DISTINCT, NULL,
     SCATTER(1, JIT_F32, JIT_I32, SH(100, 256, 10, 15), SH(16, 8), SH(100, 16, 8, 10, 15)), NULL},
    {"S2", "KV-cache style row update, copy + scatter", 0, TJ_FILL_DISTINCT, NULL,
     SCATTER(0, JIT_F16, JIT_I64, SH(32768, 1024), SH(512), SH(512, 1024)), NULL},
    {"S2ip", "the row update alone, in place", 1, TJ_FILL_DISTINCT, NULL,
     SCATTER(0, JIT_F16, JIT_I64, SH(32768, 1024), SH(512), SH(512, 1024)), NULL},
    {"S3", "per-call cost (the spec's example 2)", 0, TJ_FILL_FIXED, tj_s3_indices,
     SCATTER(1, JIT_F32, JIT_I32, SH(3, 5), SH(2), SH(3, 2)), NULL},
    {"S4", "ScatterNDUpdate-3: one token per sequence into a KV cache, in place", 1,
     TJ_FILL_RANDOM, NULL,
     SCATTER_ND(JIT_F16, JIT_I64, SH(32, 2048, 128), SH(32, 1, 2), SH(32, 1, 128)), NULL},
    {"S5", "ScatterNDUpdate-15 sum: 1M rows of 64 floats into 100000 (index_add_), in place", 1,
     TJ_FILL_RANDOM, NULL,
     SCATTER_ND_SUM(JIT_F32, JIT_I64, SH(100000, 64), SH(1000000, 1), SH(1000000, 64)), NULL},
    {"S6", "ScatterElementsUpdate-12 sum along the last dim (scatter_add_), in place", 1,
     TJ_FILL_RANDOM, NULL,
     SCATTER_ELEMENTS_SUM(1, JIT_F32, JIT_I64, SH(4096, 1024), SH(4096, 256), SH(4096, 256)), NULL},
    /* The dynamic variants (SPEC section 6): the leading dims of indices
     * dynamic (all but the tuple length k of GatherND and ScatterNDUpdate;
     * G2's first two are batch dims, tied to data's, and stay static), the
     * updates dims tied to them, and S5's node count; run with the twin's
     * concrete shapes and fill, against the twin's kernels. */
    {"G1d", "G1 with indices [?,?,3]", 0, TJ_FILL_RANDOM, NULL,
     GND(0, JIT_F32, JIT_I32, SH(1000, 256, 10, 15), SH(DYN, DYN, 3)), "G1"},
    {"G2d", "G2 with indices [30,2,?,1]", 0, TJ_FILL_RANDOM, NULL,
     GND(2, JIT_F32, JIT_I64, SH(30, 2, 100, 35), SH(30, 2, DYN, 1)), "G2"},
    {"G5d", "G5 with indices [?,1]", 0, TJ_FILL_RANDOM, NULL,
     GND(0, JIT_F32, JIT_I32, SH(100000, 256), SH(DYN, 1)), "G5"},
    {"G7d", "G7 with indices [?,?]", 0, TJ_FILL_RANDOM, NULL,
     GATHER(0, 0, JIT_F32, JIT_I64, SH(50000, 768), SH(DYN, DYN)), "G7"},
    {"S2d", "S2 with indices [?], updates [?,1024]", 0, TJ_FILL_DISTINCT, NULL,
     SCATTER(0, JIT_F16, JIT_I64, SH(32768, 1024), SH(DYN), SH(DYN, 1024)), "S2"},
    {"S5d", "S5 with data [?,64], indices [?,1], updates [?,64], in place", 1, TJ_FILL_RANDOM,
     NULL, SCATTER_ND_SUM(JIT_F32, JIT_I64, SH(DYN, 64), SH(DYN, 1), SH(DYN, 64)), "S5"},
};

const int tj_workload_count = sizeof tj_workloads / sizeof tj_workloads[0];

const tj_workload *tj_workload_find(const char *id)
{
    for (int i = 0; i < tj_workload_count; i++)
        if (strcmp(tj_workloads[i].id, id) == 0)
            return &tj_workloads[i];
    return NULL;
}

const tj_workload *tj_workload_concrete(const tj_workload *w)
{
    const tj_workload *t = w->static_twin ? tj_workload_find(w->static_twin) : NULL;
    return t ? t : w;
}

int tj_workload_is_dynamic(const tj_workload *w)
{
    return jit_sig_is_dynamic(&w->sig);
}

int tj_workload_call_dims(const tj_workload *w, int64_t *dims)
{
    const jit_sig *g = &tj_workload_concrete(w)->sig;
    const jit_shape *in[3] = {&g->data_shape, &g->indices_shape, &g->updates_shape};
    int n = 0;
    for (int i = 0; i < (tj_workload_has_updates(w) ? 3 : 2); i++)
        for (int d = 0; d < in[i]->rank; d++)
            dims[n++] = in[i]->dims[d];
    return n;
}

int tj_workload_has_updates(const tj_workload *w)
{
    jit_op_info info;
    return jit_op_describe(w->sig.op, &info) == 0 && info.has_updates;
}

int tj_workload_is_twin(const tj_workload *w)
{
    for (const tj_workload *o = tj_workloads; o < w; o++)
        if (memcmp(&o->sig, &w->sig, sizeof w->sig) == 0)
            return 1;
    return 0;
}

const char *tj_workload_ids(void)
{
    static char buf[256];
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < tj_workload_count && n < sizeof buf; i++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", i ? ", " : "", tj_workloads[i].id);
    return buf;
}
