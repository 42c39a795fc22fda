/* Element gathers in vector registers (ir/kernel_vector.c, TJ_IR_GATHER_BYTES):
 * the JIT kernel against the reference kernel on shapes whose innermost
 * loop moves one 4- or 8-byte element per index, with lengths that leave
 * every remainder (none, one, several) after the full vectors, for every
 * index type and every index policy, bad indices included; then the same
 * under a preferred vector width of 256 and 512 bits, so that LLVM splits
 * the wide gathers into the registers of an AVX2 target or keeps them in
 * zmm. Each shape also states whether its kernel must use the vector
 * gathers (llvm.masked.gather in its IR), so a change of the rule that
 * silently drops them shows. The shapes that keep the scalar loop run it
 * unrolled (TJ_IR_LOOP_UNROLL) with a remainder, gathers and scatters
 * (duplicates in order: the last one wins) alike. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "support.h"

#define SH(...) {sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t), {__VA_ARGS__}}

typedef struct vg_shape {
    const char *what;
    jit_sig sig; /* index_type and index_policy are set per run */
    int vector;  /* the kernel must use vector gathers */
} vg_shape;

/* Lengths of the innermost loop around the 16 lanes of 4-byte elements
 * and the 8 of 8-byte ones: 53 = 3 x 16 + 5, 16, 32, 17, 35 = 4 x 8 + 3,
 * 45 = 2 x 16 + 13, 33 = 4 x 8 + 1. Every kernel has more than the unroll
 * budget's index entries, so that it is made of loops, and those meant to
 * gather in vectors read from more than TJ_IR_GATHER_MIN_SPAN of data. */
static const vg_shape shapes[] = {
    {"GatherND k=2, 53 elements (G4's shape)",
     {.op = JIT_OP_GATHER_ND, .dtype = JIT_F32, .data_shape = SH(1100, 300),
      .indices_shape = SH(53, 2)}, 1},
    {"GatherND k=2, 16 elements: one vector, no remainder",
     {.op = JIT_OP_GATHER_ND, .dtype = JIT_I32, .data_shape = SH(1100, 300),
      .indices_shape = SH(16, 2)}, 1},
    {"GatherND k=1, 32 elements: two vectors, no remainder",
     {.op = JIT_OP_GATHER_ND, .dtype = JIT_U32, .data_shape = SH(300000),
      .indices_shape = SH(32, 1)}, 1},
    {"GatherND k=3, 17 elements: one vector and one more",
     {.op = JIT_OP_GATHER_ND, .dtype = JIT_F32, .data_shape = SH(5, 300, 200),
      .indices_shape = SH(17, 3)}, 1},
    {"GatherND f64, 35 elements",
     {.op = JIT_OP_GATHER_ND, .dtype = JIT_F64, .data_shape = SH(160000),
      .indices_shape = SH(5, 7, 1)}, 1},
    {"Gather axis 1, 45 indices for each of 3 rows",
     {.op = JIT_OP_GATHER, .axis = 1, .dtype = JIT_F32, .data_shape = SH(3, 300000),
      .indices_shape = SH(45)}, 1},
    {"Gather batch_dims 1, 33 indices per batch, i64 elements",
     {.op = JIT_OP_GATHER, .axis = 1, .batch_dims = 1, .dtype = JIT_I64,
      .data_shape = SH(4, 140000), .indices_shape = SH(4, 33)}, 1},
    {"GatherND k=2 from 4 KB (a small window): scalar",
     {.op = JIT_OP_GATHER_ND, .dtype = JIT_F32, .data_shape = SH(37, 29),
      .indices_shape = SH(53, 2)}, 0},
    {"GatherND batch_dims 1, one element per row (G3's shape): scalar",
     {.op = JIT_OP_GATHER_ND, .batch_dims = 1, .dtype = JIT_F32, .data_shape = SH(70, 30),
      .indices_shape = SH(70, 1)}, 0},
    {"ScatterNDUpdate of 61 elements into 40, duplicates: scalar, unrolled",
     {.op = JIT_OP_SCATTER_ND_UPDATE, .dtype = JIT_F32, .data_shape = SH(40),
      .indices_shape = SH(61, 1), .updates_shape = SH(61)}, 0},
    {"ScatterNDUpdate of 19 rows of 24 bytes into 8x6 i32: scalar, unrolled",
     {.op = JIT_OP_SCATTER_ND_UPDATE, .dtype = JIT_I32, .data_shape = SH(8, 6),
      .indices_shape = SH(19, 1), .updates_shape = SH(19, 6)}, 0},
    {"GatherND f16, 53 elements: scalar",
     {.op = JIT_OP_GATHER_ND, .dtype = JIT_F16, .data_shape = SH(1100, 300),
      .indices_shape = SH(53, 2)}, 0},
};

static const jit_dtype itypes[] = {JIT_I8,  JIT_U8,  JIT_I16, JIT_U16,
                                   JIT_I32, JIT_U32, JIT_I64, JIT_U64};

static int is_signed(jit_dtype t)
{
    return t == JIT_I8 || t == JIT_I16 || t == JIT_I32 || t == JIT_I64;
}

static int64_t elems(const jit_shape *s)
{
    int64_t n = 1;
    for (int i = 0; i < s->rank; i++)
        n *= s->dims[i];
    return n;
}

/* The dimension index entry i addresses: the last dim of indices is the
 * tuple for GatherND, the axis for Gather. */
static int64_t entry_dim(const jit_sig *s, int64_t i)
{
    if (s->op == JIT_OP_GATHER)
        return s->data_shape.dims[s->axis];
    int64_t k = s->indices_shape.dims[s->indices_shape.rank - 1];
    return s->data_shape.dims[s->batch_dims + i % k];
}

/* A value for an index of dim: in range (negative too where the policy
 * wraps), or, when bad, anything the type holds near the range. */
static int64_t index_value(uint64_t *rs, const jit_sig *s, int64_t dim, int bad)
{
    int wraps = s->index_policy == JIT_INDEX_NEGATIVE_WRAPS ||
                s->index_policy == JIT_INDEX_NEGATIVE_WRAPS_ZERO_FILL;
    int64_t lo = wraps && is_signed(s->index_type) ? -dim : 0, hi = dim - 1;
    if (bad) {
        lo = is_signed(s->index_type) ? -dim - 5 : 0;
        hi = dim + 5;
    }
    int bits = jit_dtype_size(s->index_type) * 8;
    if (bits < 64) { /* what the type holds */
        int64_t top = is_signed(s->index_type) ? ((int64_t)1 << (bits - 1)) - 1
                                               : ((int64_t)1 << bits) - 1;
        int64_t bottom = is_signed(s->index_type) ? -top - 1 : 0;
        lo = lo < bottom ? bottom : lo;
        hi = hi > top ? top : hi;
    }
    return support_rand_range(rs, lo, hi);
}

/* One signature: JIT and reference on the same random inputs; the status
 * and every byte of out must agree. bad: a share of indices out of range. */
static void compare_once(const vg_shape *sh, jit_sig sig, uint64_t *rs, int bad)
{
    jit_sig ref = sig;
    ref.engine = JIT_ENGINE_REFERENCE;
    jit_kernel k = jit_compile(&sig), r = jit_compile(&ref);
    assert_non_null(k);
    assert_non_null(r);
    jit_kernel_info info;
    assert_int_equal(jit_info(k, &info), 0);
    support_expect_jit(&info, sh->what);
    jit_shape os;
    assert_int_equal(jit_output_shape(&sig, &os), 0);
    int es = jit_dtype_size(sig.dtype), is = jit_dtype_size(sig.index_type);
    int64_t nd = elems(&sig.data_shape), ni = elems(&sig.indices_shape), no = elems(&os);
    int64_t nu = sig.op == JIT_OP_SCATTER_ND_UPDATE ? elems(&sig.updates_shape) : 0;
    unsigned char *data = malloc((size_t)(nd * es)), *idx = malloc((size_t)(ni * is) + 1);
    unsigned char *upd = nu ? malloc((size_t)(nu * es)) : NULL;
    for (int64_t i = 0; i < nu * es; i++)
        upd[i] = (unsigned char)support_rand(rs);
    unsigned char *o1 = malloc((size_t)(no * es)), *o2 = malloc((size_t)(no * es));
    for (int64_t i = 0; i < nd * es; i++) /* no two elements alike: a wrong offset shows */
        data[i] = (unsigned char)((uint64_t)(i / es) * 0x9e3779b97f4a7c15ULL >> (56 - 8 * (i % es)));
    for (int64_t i = 0; i < ni; i++)
        support_store_index(sig.index_type, idx, i,
                    index_value(rs, &sig, entry_dim(&sig, i), bad && support_rand(rs) % 4 == 0));
    memset(o1, 0xab, (size_t)(no * es));
    memset(o2, 0xab, (size_t)(no * es));
    int s1 = jit_call(k, data, idx, upd, o1), s2 = jit_call(r, data, idx, upd, o2);
    if (s1 != s2 || memcmp(o1, o2, (size_t)(no * es)) != 0)
        fail_msg("%s, index %s, policy %s%s: JIT status %d, reference %d, outputs %s", sh->what,
                 jit_dtype_name(sig.index_type), jit_index_policy_name(sig.index_policy),
                 bad ? ", bad indices" : "", s1, s2,
                 memcmp(o1, o2, (size_t)(no * es)) ? "differ" : "equal");
    free(data);
    free(idx);
    free(upd);
    free(o1);
    free(o2);
}

/* Whether the kernel of sig gathers in vector registers. */
static int uses_vector_gathers(const jit_sig *sig)
{
    char *ir = jit_dump(sig, JIT_DUMP_IR);
    assert_non_null(ir);
    int yes = strstr(ir, "llvm.masked.gather") != NULL;
    jit_free(ir);
    return yes;
}

/* Every shape, index type and policy; with `some`, the vector shapes
 * with index types of each width's extremes only (a width changes the
 * code LLVM makes of a gather, not how indices are read). */
static void run_all(int some)
{
    uint64_t rs = 20261123;
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        for (size_t t = 0; t < sizeof itypes / sizeof *itypes; t++)
            for (int p = 0; p < JIT_INDEX_POLICY_COUNT; p++) {
                jit_op_info info;
                assert_int_equal(jit_op_describe(shapes[s].sig.op, &info), 0);
                if (!(info.index_types & (1u << itypes[t])))
                    continue; /* an index type the op refuses */
                if (some && (!shapes[s].vector || (itypes[t] != JIT_U8 && itypes[t] != JIT_I64)))
                    continue;
                jit_sig sig = shapes[s].sig;
                sig.index_type = itypes[t];
                sig.index_policy = (jit_index_policy)p;
                if (uses_vector_gathers(&sig) != shapes[s].vector)
                    fail_msg("%s, index %s, policy %s: vector gathers %s", shapes[s].what,
                             jit_dtype_name(sig.index_type), jit_index_policy_name(sig.index_policy),
                             shapes[s].vector ? "expected, not used" : "used, not expected");
                compare_once(&shapes[s], sig, &rs, 0);
                compare_once(&shapes[s], sig, &rs, 1);
            }
}

static void test_default_width(void **state)
{
    (void)state;
    run_all(0);
}

/* LLVM splits the 64-byte gathers into two of 32 bytes, as on AVX2. */
static void test_256_bit_vectors(void **state)
{
    (void)state;
    support_setenv("TENSORJIT_VECTOR_WIDTH", "256");
    run_all(1);
    support_setenv("TENSORJIT_VECTOR_WIDTH", NULL);
}

static void test_512_bit_vectors(void **state)
{
    (void)state;
    support_setenv("TENSORJIT_VECTOR_WIDTH", "512");
    run_all(1);
    support_setenv("TENSORJIT_VECTOR_WIDTH", NULL);
}

/* A bad index anywhere, also in a lane of the last full vector or in the
 * remainder, is refused before anything is written. */
static void test_bad_index_writes_nothing(void **state)
{
    (void)state;
    jit_sig sig = shapes[0].sig;
    sig.index_type = JIT_I32;
    jit_kernel k = jit_compile(&sig);
    assert_non_null(k);
    int32_t idx[53 * 2];
    float *data = calloc(1100 * 300, sizeof(float)), out[53];
    assert_non_null(data);
    const int at[] = {0, 31, 47, 48, 52};
    for (size_t a = 0; a < sizeof at / sizeof *at; a++) {
        for (int i = 0; i < 53; i++) {
            idx[2 * i] = i * 19;
            idx[2 * i + 1] = (i * 7) % 300;
        }
        idx[2 * at[a] + 1] = 300;
        memset(out, 0x5a, sizeof out);
        assert_int_equal(jit_call(k, data, idx, NULL, out), JIT_STATUS_BAD_INDEX);
        for (int i = 0; i < 53; i++) {
            uint32_t bits;
            memcpy(&bits, &out[i], 4);
            assert_int_equal(bits, 0x5a5a5a5au);
        }
    }
    free(data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_width),
        cmocka_unit_test(test_256_bit_vectors),
        cmocka_unit_test(test_512_bit_vectors),
        cmocka_unit_test(test_bad_index_writes_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
