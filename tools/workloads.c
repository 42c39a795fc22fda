#include "workloads.h"

#include <string.h>

#define G(id, what, dt, it, bd, ds, is)                                                   \
    {id, what, 0, 0,                                                                        \
     {.opset = 8, .batch_dims = bd, .dtype = dt, .index_type = it, .data_shape = ds,       \
      .indices_shape = is},                                                                 \
     {0}}
#define S(id, what, ip, dt, it, ax, ds, is, us)                                           \
    {id, what, 1, ip, {0},                                                                  \
     {.axis = ax, .dtype = dt, .index_type = it, .data_shape = ds, .indices_shape = is,    \
      .updates_shape = us}}
#define SH(...) {sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t), {__VA_ARGS__}}

const tj_workload tj_workloads[] = {
    G("G1", "3125 slices of 15 floats from 150 MB", JIT_F32, JIT_I32, 0, SH(1000, 256, 10, 15),
      SH(25, 125, 3)),
    G("G2", "180 slices of 35 floats, batch dims", JIT_F32, JIT_I64, 2, SH(30, 2, 100, 35),
      SH(30, 2, 3, 1)),
    G("G3", "4096 single elements, deep batch dims", JIT_F32, JIT_I32, 3, SH(1, 64, 64, 320),
      SH(1, 64, 64, 1, 1)),
    G("G4", "1M random single elements from 64 MB", JIT_F32, JIT_I64, 0, SH(4096, 4096),
      SH(1048576, 2)),
    G("G5", "row gather (embedding lookup), 64 MB out", JIT_F32, JIT_I32, 0, SH(100000, 256),
      SH(65536, 1)),
    G("G6", "per-call cost", JIT_I32, JIT_I32, 0, SH(2, 2), SH(2, 2)),
    S("S1", "copy + scatter of 600-byte blocks", 0, JIT_F32, JIT_I32, 1, SH(100, 256, 10, 15),
      SH(16, 8), SH(100, 16, 8, 10, 15)),
    S("S2", "KV-cache style row update, copy + scatter", 0, JIT_F16, JIT_I64, 0,
      SH(32768, 1024), SH(512), SH(512, 1024)),
    S("S2ip", "the row update alone, in place", 1, JIT_F16, JIT_I64, 0, SH(32768, 1024),
      SH(512), SH(512, 1024)),
    S("S3", "per-call cost (the spec's example 2)", 0, JIT_F32, JIT_I32, 1, SH(3, 5), SH(2),
      SH(3, 2)),
};

const int tj_workload_count = sizeof tj_workloads / sizeof tj_workloads[0];

const tj_workload *tj_workload_find(const char *id)
{
    for (int i = 0; i < tj_workload_count; i++)
        if (strcmp(tj_workloads[i].id, id) == 0)
            return &tj_workloads[i];
    return NULL;
}
