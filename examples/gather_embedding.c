/* An embedding lookup with tensorjit's public API: GatherND gathers the rows
 * of a table for a batch of token ids, then ScatterUpdate writes two new rows
 * into the table in place. Each result is checked against plain loops and
 * printed. Exit status 0 when both match, 1 otherwise.
 *
 *   cc gather_embedding.c $(pkg-config --cflags --libs tensorjit)
 */
#include <stdio.h>
#include <string.h>

#include <tensorjit.h>

enum { VOCAB = 6, DIM = 4, BATCH = 2, SEQ = 3, NEW = 2 };

static int gather(float table[VOCAB][DIM], const int32_t ids[BATCH][SEQ][1],
                  float out[BATCH][SEQ][DIM])
{
    /* table [6,4], ids [2,3,1]: each id picks one row, so out is [2,3,4] */
    jit_gather_nd_sig sig = {
        .opset = 8, .batch_dims = 0, .dtype = JIT_F32, .index_type = JIT_I32,
        .index_policy = JIT_INDEX_ERROR,
        .data_shape = {2, {VOCAB, DIM}}, .indices_shape = {3, {BATCH, SEQ, 1}},
    };
    jit_gather_nd_fn kernel = jit_gather_nd_compile(&sig);
    if (!kernel) {
        fprintf(stderr, "gather_embedding: %s\n", jit_last_error());
        return -1;
    }
    jit_kernel_info info;
    if (jit_gather_nd_info(kernel, &info) == 0)
        printf("GatherND kernel: engine %s%s%s\n", jit_engine_name(info.engine),
               *info.why ? ", " : "", info.why);
    int status = kernel(table, ids, out);
    if (status != JIT_OK)
        fprintf(stderr, "gather_embedding: GatherND: %s\n", jit_last_error());
    jit_gather_nd_release(kernel);
    return status == JIT_OK ? 0 : -1;
}

static int scatter(float table[VOCAB][DIM], const int64_t rows[NEW],
                   float updates[NEW][DIM])
{
    /* table [6,4] axis 0, indices [2], updates [2,4]; out == data: in place */
    jit_scatter_update_sig sig = {
        .axis = 0, .dtype = JIT_F32, .index_type = JIT_I64,
        .index_policy = JIT_INDEX_NEGATIVE_WRAPS,
        .data_shape = {2, {VOCAB, DIM}}, .indices_shape = {1, {NEW}},
        .updates_shape = {2, {NEW, DIM}},
    };
    jit_scatter_update_fn kernel = jit_scatter_update_compile(&sig);
    if (!kernel) {
        fprintf(stderr, "gather_embedding: %s\n", jit_last_error());
        return -1;
    }
    int status = kernel(table, rows, updates, table);
    if (status != JIT_OK)
        fprintf(stderr, "gather_embedding: ScatterUpdate: %s\n", jit_last_error());
    jit_scatter_update_release(kernel);
    return status == JIT_OK ? 0 : -1;
}

int main(void)
{
    float table[VOCAB][DIM], out[BATCH][SEQ][DIM];
    const int32_t ids[BATCH][SEQ][1] = {{{5}, {0}, {2}}, {{2}, {2}, {4}}};
    for (int v = 0; v < VOCAB; v++)
        for (int d = 0; d < DIM; d++)
            table[v][d] = (float)(10 * v + d);

    int failed = 0;
    if (gather(table, ids, out) != 0) {
        jit_shutdown();
        return 1;
    }
    for (int b = 0; b < BATCH; b++) {
        for (int s = 0; s < SEQ; s++) {
            printf("out[%d][%d] =", b, s);
            for (int d = 0; d < DIM; d++) {
                printf(" %4.0f", (double)out[b][s][d]);
                failed |= out[b][s][d] != table[ids[b][s][0]][d];
            }
            printf("\n");
        }
    }

    /* rows 1 and -1 (the last, under negative-wraps) get new values */
    const int64_t rows[NEW] = {1, -1};
    float updates[NEW][DIM] = {{-1, -2, -3, -4}, {-5, -6, -7, -8}};
    float expect[VOCAB][DIM];
    memcpy(expect, table, sizeof expect);
    memcpy(expect[1], updates[0], sizeof expect[1]);
    memcpy(expect[VOCAB - 1], updates[1], sizeof expect[VOCAB - 1]);
    if (scatter(table, rows, updates) != 0) {
        jit_shutdown();
        return 1;
    }
    for (int v = 0; v < VOCAB; v++) {
        printf("table[%d] =", v);
        for (int d = 0; d < DIM; d++)
            printf(" %4.0f", (double)table[v][d]);
        printf("\n");
    }
    failed |= memcmp(table, expect, sizeof expect) != 0;

    jit_shutdown();
    printf("%s\n", failed ? "MISMATCH" : "ok");
    return failed ? 1 : 0;
}
