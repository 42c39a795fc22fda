/* The embedding-bag workloads of shared/bench/workloads.md, and the same
 * on small shapes for the bench's own test. */
#include <string.h>

#include "bags.h"

const tj_bag_workload tj_bag_workloads[] = {
    {.id = "E1", .what = "DLRM benchmark table: [1000000,64] f32, B 2048, L 100, i64, sum",
     .rows = 1000000, .width = 64, .bags = 2048, .length = 100, .index_size = 8},
    {.id = "E2a",
     .what = "one-hot DLRM-v2 feature: [4000000,128] f32 (2 GB), B 8192, L 1, i64, sum",
     .rows = 4000000, .width = 128, .bags = 8192, .length = 1, .index_size = 8, .min_sets = 256},
    {.id = "E2b", .what = "multi-hot DLRM-v2 feature: [4000000,128] f32 (2 GB), B 2048, L 27, i64, "
                          "sum",
     .rows = 4000000, .width = 128, .bags = 2048, .length = 27, .index_size = 8},
    {.id = "E3", .what = "bag of words: [30522,128] f32 (in cache), B 512, L uniform in [0,64], "
                         "i64, mean",
     .rows = 30522, .width = 128, .bags = 512, .length = 64, .varying = 1, .index_size = 8,
     .mean = 1},
    {.id = "E4", .what = "weighted narrow rows: [4000000,32] f32, B 4096, L 20, weights, i32, sum",
     .rows = 4000000, .width = 32, .bags = 4096, .length = 20, .index_size = 4, .weighted = 1},
    {.id = "E5", .what = "bf16 table, packed [4096,8] i64 indices: [1000000,128] bf16, sum",
     .rows = 1000000, .width = 128, .bf16 = 1, .bags = 4096, .length = 8, .index_size = 8,
     .packed = 1},
};
const int tj_bag_workload_count = (int)(sizeof tj_bag_workloads / sizeof *tj_bag_workloads);

/* Each full workload's form on a small table; widths that are not a
 * multiple of 16 bytes (E2a's 3, E4's 5) take the probe's path without
 * streaming stores. */
const tj_bag_workload tj_bag_smoke_workloads[] = {
    {.id = "E1", .what = "small E1", .rows = 5000, .width = 64, .bags = 64, .length = 10,
     .index_size = 8},
    {.id = "E2a", .what = "small E2a", .rows = 7000, .width = 3, .bags = 300, .length = 1,
     .index_size = 8},
    {.id = "E2b", .what = "small E2b", .rows = 7000, .width = 128, .bags = 40, .length = 27,
     .index_size = 8},
    {.id = "E3", .what = "small E3", .rows = 3052, .width = 128, .bags = 50, .length = 64,
     .varying = 1, .index_size = 8, .mean = 1},
    {.id = "E4", .what = "small E4", .rows = 4000, .width = 5, .bags = 100, .length = 20,
     .index_size = 4, .weighted = 1},
    {.id = "E5", .what = "small E5", .rows = 1000, .width = 128, .bf16 = 1, .bags = 64,
     .length = 8, .index_size = 8, .packed = 1},
};
const int tj_bag_smoke_count =
    (int)(sizeof tj_bag_smoke_workloads / sizeof *tj_bag_smoke_workloads);

const tj_bag_workload *tj_bag_workload_find(const char *id)
{
    for (int i = 0; i < tj_bag_workload_count; i++)
        if (strcmp(tj_bag_workloads[i].id, id) == 0)
            return &tj_bag_workloads[i];
    return NULL;
}
