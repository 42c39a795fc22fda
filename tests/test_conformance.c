/* Every vector of tests/cases (a copy of ../shared/cases) through the
 * public generic API, one runner for every op (the op named by the
 * vector's `op` field): each valid case as recorded, then again for every
 * other element type and every index type the op takes that holds its
 * values exactly, through both engines (scatters also in place); every
 * invalid entry is refused (signature) or makes the kernel fail without
 * writing (index), on both engines. A case with a reduction runs in its
 * recorded element type only (its arithmetic is that type's) and every
 * index type. The tests' oracle (which replaces: reductions have theirs in
 * test_reductions.c) must agree with every vector of the ops it has: the
 * differential test trusts it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "oracle.h"
#include "support.h"

static const jit_dtype all_dtypes[] = {JIT_BOOL, JIT_I8,  JIT_U8,  JIT_I16, JIT_U16,
                                       JIT_F16,  JIT_BF16, JIT_I32, JIT_U32, JIT_F32,
                                       JIT_I64,  JIT_U64, JIT_F64};
static const jit_dtype index_dtypes[] = {JIT_I8,  JIT_U8,  JIT_I16, JIT_U16,
                                         JIT_I32, JIT_U32, JIT_I64, JIT_U64};
static const jit_engine engines[] = {JIT_ENGINE_AUTO, JIT_ENGINE_REFERENCE};
#define NENGINES 2
#define CANARY 16 /* bytes past the output that must stay as they were */

static const char *case_name(const cJSON *c)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(c, "source");
    return cJSON_IsString(s) ? s->valuestring : "?";
}

static const cJSON *field(const cJSON *c, const char *name)
{
    return cJSON_GetObjectItemCaseSensitive(c, name);
}

static jit_op_info op_info(jit_op op)
{
    jit_op_info info;
    assert_int_equal(jit_op_describe(op, &info), 0);
    return info;
}

static void expect_shape(const jit_shape *got, const cJSON *want, const char *name)
{
    jit_shape w = support_shape(want);
    if (got->rank != w.rank || memcmp(got->dims, w.dims, sizeof(int64_t) * (size_t)w.rank)) {
        char a[256] = "", b[256] = "";
        for (int i = 0; i < got->rank; i++)
            snprintf(a + strlen(a), sizeof a - strlen(a), "%lld,", (long long)got->dims[i]);
        for (int i = 0; i < w.rank; i++)
            snprintf(b + strlen(b), sizeof b - strlen(b), "%lld,", (long long)w.dims[i]);
        fail_msg("%s: output shape [%s] differs from expected [%s]", name, a, b);
    }
}

/* The kernel's own argument list: gathers (data, indices, out), scatters
 * (data, indices, updates, out). In place goes through jit_call, so that
 * both ways of calling a kernel meet the vectors. */
static int call_kernel(jit_kernel fn, const jit_op_info *info, const void *data,
                       const void *idx, const void *upd, void *out, int inplace)
{
    if (inplace)
        return jit_call(fn, data, idx, upd, out);
    if (info->has_updates)
        return ((jit_scatter_update_fn)fn)(data, idx, upd, out);
    return ((jit_gather_nd_fn)fn)(data, idx, out);
}

/* The kernel of sig, which must be valid; with engine AUTO it must be JIT
 * code (in a JIT build). */
static jit_kernel compile_valid(const jit_sig *sig, const char *name)
{
    jit_kernel fn = jit_compile(sig);
    if (!fn)
        fail_msg("%s (%s/%s, %s): refused: %s", name, jit_dtype_name(sig->dtype),
                 jit_dtype_name(sig->index_type), jit_engine_name(sig->engine),
                 jit_last_error());
    jit_kernel_info info;
    assert_int_equal(jit_info(fn, &info), 0);
    assert_int_equal(info.op, sig->op);
    if (sig->engine == JIT_ENGINE_AUTO)
        support_expect_jit(&info, name);
    return fn;
}

typedef struct buffers {
    void *data, *idx, *upd, *want;
    int64_t nwant;
} buffers;

static void free_buffers(buffers *b)
{
    free(b->data);
    free(b->idx);
    free(b->upd);
    free(b->want);
}

/* 1 when every value of the case is exact in the signature's types. */
static int load_buffers(const cJSON *c, const jit_sig *sig, int has_updates, int exact,
                        buffers *b)
{
    int64_t n;
    memset(b, 0, sizeof *b);
    b->data = support_values(field(c, "data"), sig->dtype, &n, exact);
    b->idx = support_values(field(c, "indices"), sig->index_type, &n, exact);
    b->want = support_values(field(c, "expected"), sig->dtype, &b->nwant, exact);
    if (has_updates)
        b->upd = support_values(field(c, "updates"), sig->dtype, &n, exact);
    return b->data && b->idx && b->want && (!has_updates || b->upd);
}

/* One valid case with the types and engine of sig; 0 (skipped) when the
 * values are not exact in those types. */
static int run_case(const cJSON *c, jit_sig sig, int inplace, int exact)
{
    const char *name = case_name(c);
    jit_op_info info = op_info(sig.op);
    buffers b;
    int ran = 0;
    if (load_buffers(c, &sig, info.has_updates, exact, &b)) {
        jit_kernel fn = compile_valid(&sig, name);
        jit_shape shape;
        assert_int_equal(jit_output_shape(&sig, &shape), 0);
        expect_shape(&shape, field(c, "expected_shape"), name);
        size_t bytes = (size_t)b.nwant * (size_t)jit_dtype_size(sig.dtype);
        char *out = inplace ? b.data : malloc(bytes + CANARY);
        if (!inplace)
            memset(out, 0xa5, bytes + CANARY);
        int rc = call_kernel(fn, &info, b.data, b.idx, b.upd, out, inplace);
        if (rc != 0)
            fail_msg("%s: kernel returned %d: %s", name, rc, jit_last_error());
        if (memcmp(out, b.want, bytes) != 0)
            fail_msg("%s (%s/%s, %s%s): output differs from expected", name,
                     jit_dtype_name(sig.dtype), jit_dtype_name(sig.index_type),
                     jit_engine_name(sig.engine), inplace ? ", in place" : "");
        for (int i = 0; !inplace && i < CANARY; i++)
            assert_int_equal((unsigned char)out[bytes + i], 0xa5);
        if (!inplace)
            free(out);
        ran = 1;
    }
    free_buffers(&b);
    return ran;
}

/* The tests' own oracle agrees with the case as recorded, shape and
 * bytes, out of place and in place: the vectors check the oracle that the
 * differential test trusts. 0 (not checked) for an op it lacks. */
static int oracle_case(const cJSON *c)
{
    jit_sig sig = support_sig(c);
    if (!oracle_has(sig.op) || sig.reduction != JIT_REDUCTION_NONE)
        return 0; /* the oracle replaces; test_reductions has its own of reductions */
    int has_updates = op_info(sig.op).has_updates;
    buffers b;
    if (!load_buffers(c, &sig, has_updates, 0, &b))
        fail_msg("%s: recorded values do not fit the recorded types", case_name(c));
    jit_shape shape;
    oracle_output_shape(&sig, &shape);
    expect_shape(&shape, field(c, "expected_shape"), case_name(c));
    size_t bytes = (size_t)b.nwant * (size_t)jit_dtype_size(sig.dtype);
    char *out = malloc(bytes + 1);
    assert_int_equal(oracle_run(&sig, b.data, b.idx, b.upd, out), JIT_OK);
    if (memcmp(out, b.want, bytes) != 0)
        fail_msg("%s: the oracle's output differs from expected", case_name(c));
    if (has_updates) {
        assert_int_equal(oracle_run(&sig, b.data, b.idx, b.upd, b.data), JIT_OK);
        if (memcmp(b.data, b.want, bytes) != 0)
            fail_msg("%s: the oracle's output in place differs from expected", case_name(c));
    }
    free(out);
    free_buffers(&b);
    return 1;
}

/* The case as recorded, then in every other type: runs made. */
static int run_all_types(const cJSON *c, jit_engine eng, int inplace)
{
    jit_sig rec = support_sig(c);
    jit_op_info info = op_info(rec.op);
    rec.engine = eng;
    if (!run_case(c, rec, inplace, 0)) /* as recorded: must run */
        fail_msg("%s: recorded values do not fit the recorded types", case_name(c));
    int runs = 1;
    /* a reduction's arithmetic is its type's (wrapping, rounding, an
     * integer mean's floor): its values are checked in the recorded type */
    for (size_t d = 0; rec.reduction == JIT_REDUCTION_NONE && d < sizeof all_dtypes / sizeof *all_dtypes;
         d++) {
        jit_sig s = rec;
        s.dtype = all_dtypes[d];
        runs += run_case(c, s, inplace, 1);
    }
    for (size_t i = 0; i < sizeof index_dtypes / sizeof *index_dtypes; i++) {
        if (!(info.index_types & (1u << index_dtypes[i])))
            continue; /* the op refuses it (the signature tests check that) */
        jit_sig s = rec;
        s.index_type = index_dtypes[i];
        runs += run_case(c, s, inplace, 1);
    }
    return runs;
}

/* ---- the vectors through dynamic kernels (SPEC section 6) ---- */

enum { DYN_ALL, DYN_LEADING, DYN_MODES };
static const char *const dyn_mode_names[DYN_MODES] = {"every dim", "leading dims"};

/* The dims of sig's inputs (data, indices, [updates]) as a dynamic call
 * passes them; dyn: the signature with mode's dims dynamic. The count, 0
 * when no dim became dynamic (only scalars). */
static int make_dynamic(const jit_sig *sig, int has_updates, int mode, jit_sig *dyn,
                        int64_t *dims)
{
    *dyn = *sig;
    jit_shape *sh[3] = {&dyn->data_shape, &dyn->indices_shape, &dyn->updates_shape};
    int n = 0, marked = 0;
    for (int i = 0; i < 2 + has_updates; i++) {
        if (sh[i]->rank < 0 || sh[i]->rank > JIT_MAX_RANK)
            continue;
        for (int d = 0; d < sh[i]->rank; d++) {
            dims[n++] = sh[i]->dims[d];
            if (mode == DYN_ALL || (d == 0 && i < 2)) {
                sh[i]->dims[d] = JIT_DIM_DYNAMIC;
                marked++;
            }
        }
    }
    return marked ? n : 0;
}

typedef struct dyn_counts {
    int runs, skipped, refused_compile, refused_call, failed;
} dyn_counts;

/* A valid case through the dynamic kernel of mode, with the recorded
 * types, on engine eng: the expected output and shape, the canary kept;
 * scatters in place too. Failures are reported and counted so that every
 * case runs. */
static void run_case_dynamic(const cJSON *c, jit_engine eng, int mode, dyn_counts *n)
{
    const char *name = case_name(c);
    jit_sig sig = support_sig(c), dyn, bound;
    sig.engine = eng;
    jit_op_info info = op_info(sig.op);
    int64_t dims[3 * JIT_MAX_RANK];
    if (!make_dynamic(&sig, info.has_updates, mode, &dyn, dims)) {
        n->skipped++;
        return;
    }
    jit_kernel fn = jit_compile(&dyn);
    if (!fn) {
        printf("  FAILED (dynamic, %s, %s engine) %s: a valid case's family refused: %s\n",
               dyn_mode_names[mode], jit_engine_name(eng), name, jit_last_error());
        n->failed++;
        return;
    }
    jit_shape shape;
    if (jit_sig_bind(&dyn, dims, &bound) != 0 || jit_output_shape(&bound, &shape) != 0) {
        printf("  FAILED (dynamic, %s) %s: the recorded dims do not bind: %s\n",
               dyn_mode_names[mode], name, jit_last_error());
        n->failed++;
        return;
    }
    expect_shape(&shape, field(c, "expected_shape"), name);
    buffers b;
    if (!load_buffers(c, &sig, info.has_updates, 0, &b))
        fail_msg("%s: recorded values do not fit the recorded types", name);
    size_t bytes = (size_t)b.nwant * (size_t)jit_dtype_size(sig.dtype);
    for (int inplace = 0; inplace <= info.has_updates; inplace++) {
        char *out = inplace ? b.data : malloc(bytes + CANARY);
        if (!inplace)
            memset(out, 0xa5, bytes + CANARY);
        int rc = ((jit_dynamic_fn)fn)(b.data, b.idx, b.upd, out, dims);
        int bad = rc != JIT_OK || memcmp(out, b.want, bytes) != 0;
        for (int i = 0; !inplace && i < CANARY; i++)
            bad |= (unsigned char)out[bytes + i] != 0xa5;
        if (bad) {
            printf("  FAILED (dynamic, %s, %s engine%s) %s: status %d (%s) or output differs "
                   "from expected\n",
                   dyn_mode_names[mode], jit_engine_name(eng), inplace ? ", in place" : "", name,
                   rc, rc ? jit_last_error() : "");
            n->failed++;
        }
        if (!inplace)
            free(out);
        n->runs++;
    }
    free_buffers(&b);
}

static void run_file_dynamic(const char *file)
{
    cJSON *cases = support_load_cases(file);
    assert_non_null(cases);
    int failed = 0;
    for (int mode = 0; mode < DYN_MODES; mode++) {
        dyn_counts n = {0};
        const cJSON *c;
        cJSON_ArrayForEach(c, cases)
            for (int e = 0; e < NENGINES; e++)
                run_case_dynamic(c, engines[e], mode, &n);
        printf("%s, dynamic (%s): %d cases, %d runs (both engines%s), %d without dims skipped, "
               "%d failed\n",
               file, dyn_mode_names[mode], cJSON_GetArraySize(cases), n.runs,
               strstr(file, "scatter") ? " x in place" : "", n.skipped / NENGINES, n.failed);
        failed += n.failed;
    }
    cJSON_Delete(cases);
    assert_int_equal(failed, 0);
}

/* Every case of a file of valid vectors. */
static void run_file(const char *file)
{
    cJSON *cases = support_load_cases(file);
    assert_non_null(cases);
    int ncases = 0, oracle = 0, runs[NENGINES] = {0};
    const cJSON *c;
    cJSON_ArrayForEach(c, cases)
    {
        jit_sig rec = support_sig(c);
        if (rec.op == JIT_OP_NONE)
            fail_msg("%s: unknown op in %s", case_name(c), file);
        ncases++;
        oracle += oracle_case(c);
        int has_updates = op_info(rec.op).has_updates;
        for (int e = 0; e < NENGINES; e++)
            for (int inplace = 0; inplace <= has_updates; inplace++)
                runs[e] += run_all_types(c, engines[e], inplace);
    }
    printf("%s: %d cases, %d runs on the %s engine, %d on the %s engine (types%s)\n", file,
           ncases, runs[0], jit_engine_name(engines[0]), runs[1], jit_engine_name(engines[1]),
           strstr(file, "scatter") ? " x in place" : "");
    if (oracle < ncases)
        printf("%s: the oracle checked against %d cases only: it has no %s\n", file, oracle,
               op_info(support_sig(cJSON_GetArrayItem(cases, 0)).op).name);
    assert_int_equal(ncases, cJSON_GetArraySize(cases));
    assert_true(ncases > 0);
    cJSON_Delete(cases);
}

static void test_gather_nd_cases(void **state)
{
    (void)state;
    run_file("gather_nd.json");
}

static void test_gather_nd_cases_dynamic(void **state)
{
    (void)state;
    run_file_dynamic("gather_nd.json");
}

static void test_scatter_update_cases(void **state)
{
    (void)state;
    run_file("scatter_update.json");
}

static void test_scatter_update_cases_dynamic(void **state)
{
    (void)state;
    run_file_dynamic("scatter_update.json");
}

static void test_gather_cases(void **state)
{
    (void)state;
    run_file("gather.json");
}

static void test_gather_cases_dynamic(void **state)
{
    (void)state;
    run_file_dynamic("gather.json");
}

static void test_gather_elements_cases(void **state)
{
    (void)state;
    run_file("gather_elements.json");
}

static void test_gather_elements_cases_dynamic(void **state)
{
    (void)state;
    run_file_dynamic("gather_elements.json");
}

static void test_scatter_nd_update_cases(void **state)
{
    (void)state;
    run_file("scatter_nd_update.json");
}

static void test_scatter_nd_update_cases_dynamic(void **state)
{
    (void)state;
    run_file_dynamic("scatter_nd_update.json");
}

static void test_scatter_elements_update_cases(void **state)
{
    (void)state;
    run_file("scatter_elements_update.json");
}

static void test_scatter_elements_update_cases_dynamic(void **state)
{
    (void)state;
    run_file_dynamic("scatter_elements_update.json");
}

/* The message must name an input or attribute of the op. */
static void expect_named(const char *msg, const char *src)
{
    static const char *const inputs[] = {"data", "indices", "updates", "axis", "batch_dims",
                                         "reduction"};
    for (size_t i = 0; i < sizeof inputs / sizeof *inputs; i++)
        if (strstr(msg, inputs[i]))
            return;
    fail_msg("%s: message '%s' names no input", src, msg);
}

static void refuse_signature(const cJSON *c, jit_sig sig)
{
    const char *src = case_name(c);
    if (jit_compile(&sig))
        fail_msg("%s (%s engine): accepted an invalid signature", src,
                 jit_engine_name(sig.engine));
    const char *msg = jit_last_error();
    if (!*msg)
        fail_msg("%s: refused with no message", src);
    expect_named(msg, src);
    char copy[1024];
    snprintf(copy, sizeof copy, "%s", msg);
    jit_shape shape;
    assert_int_equal(jit_output_shape(&sig, &shape), -1);
    assert_string_equal(jit_last_error(), copy); /* the same rule, whichever call */
    if (sig.engine == JIT_ENGINE_AUTO)
        printf("  refused: %s\n", copy);
}

/* The entry's values in type t, or n elements of fill (+ their position,
 * when step is set) when it records none (invalid.json's ScatterUpdate
 * entries give only indices). */
static void *values_or(const cJSON *c, const char *name, jit_dtype t, int64_t n, int step)
{
    if (field(c, name))
        return support_values(field(c, name), t, NULL, 0);
    cJSON *arr = cJSON_CreateArray();
    for (int64_t i = 0; i < n; i++)
        cJSON_AddItemToArray(arr, cJSON_CreateNumber(step ? (double)(i % 100 + 1) : 0));
    void *v = support_values(arr, t, NULL, 0);
    cJSON_Delete(arr);
    return v;
}

static int64_t elems(const jit_shape *s)
{
    int64_t n = 1;
    for (int i = 0; i < s->rank; i++)
        n *= s->dims[i];
    return n;
}

/* The buffers of an invalid-index entry: its data, indices and updates
 * (or made up), out filled with 0x5a and a canary, room for data's copy. */
typedef struct bad_index_bufs {
    int64_t data_bytes;
    size_t out_bytes;
    char *data, *idx, *upd, *out, *before;
} bad_index_bufs;

static bad_index_bufs bad_index_bufs_of(const cJSON *c, const jit_sig *sig,
                                        const jit_op_info *info)
{
    jit_shape os;
    assert_int_equal(jit_output_shape(sig, &os), 0);
    int64_t es = jit_dtype_size(sig->dtype), nd = elems(&sig->data_shape);
    bad_index_bufs b = {nd * es, (size_t)(elems(&os) * es), NULL, NULL, NULL, NULL, NULL};
    b.data = values_or(c, "data", sig->dtype, nd, 0);
    b.idx = values_or(c, "indices", sig->index_type, 0, 0);
    b.upd = info->has_updates
                ? values_or(c, "updates", sig->dtype, elems(&sig->updates_shape), 1)
                : NULL;
    b.out = malloc(b.out_bytes + CANARY);
    b.before = malloc((size_t)b.data_bytes + 1);
    assert_true(b.data && b.idx && b.out && b.before && (b.upd || !info->has_updates));
    memset(b.out, 0x5a, b.out_bytes + CANARY);
    return b;
}

static void bad_index_bufs_free(bad_index_bufs *b)
{
    free(b->data);
    free(b->idx);
    free(b->upd);
    free(b->out);
    free(b->before);
}

/* A valid signature with an out-of-range index: a bad-index status, the
 * output untouched (in place: data unchanged), and a message that names
 * the position. */
static void refuse_index(const cJSON *c, jit_sig sig)
{
    const char *src = case_name(c);
    jit_op_info info = op_info(sig.op);
    jit_kernel fn = compile_valid(&sig, src);
    bad_index_bufs b = bad_index_bufs_of(c, &sig, &info);
    char *data = b.data, *idx = b.idx, *upd = b.upd, *out = b.out, *before = b.before;
    size_t ob = b.out_bytes;
    int rc = call_kernel(fn, &info, data, idx, upd, out, 0);
    if (rc != JIT_STATUS_BAD_INDEX)
        fail_msg("%s: kernel returned %d for an out-of-range index", src, rc);
    for (size_t i = 0; i < ob + CANARY; i++)
        assert_int_equal((unsigned char)out[i], 0x5a);
    const char *msg = jit_last_error();
    if (!strstr(msg, "out of range") || !strstr(msg, "indices["))
        fail_msg("%s: message '%s' does not name the index", src, msg);
    if (sig.engine == JIT_ENGINE_AUTO)
        printf("  bad index: %s\n", msg);
    /* the oracle agrees: a bad index, nothing written */
    if (oracle_has(sig.op)) {
        assert_int_equal(oracle_run(&sig, data, idx, upd, out), JIT_STATUS_BAD_INDEX);
        for (size_t i = 0; i < ob + CANARY; i++)
            assert_int_equal((unsigned char)out[i], 0x5a);
    }
    if (info.has_updates) {
        memcpy(before, data, (size_t)b.data_bytes);
        assert_int_equal(call_kernel(fn, &info, data, idx, upd, data, 0), JIT_STATUS_BAD_INDEX);
        assert_memory_equal(before, data, (size_t)b.data_bytes);
    }
    bad_index_bufs_free(&b);
}

/* An invalid signature with mode's dims dynamic: the compile may refuse
 * it (no shape of the family is valid) or the call with the recorded dims
 * must: never JIT_OK, nothing written. 1: refused at compile, 2: at the
 * call, 0: no dim to make dynamic. */
static int refuse_signature_dynamic(const cJSON *c, jit_sig sig, int mode)
{
    const char *src = case_name(c);
    jit_op_info info = op_info(sig.op);
    jit_sig dyn;
    int64_t dims[3 * JIT_MAX_RANK];
    if (!make_dynamic(&sig, info.has_updates, mode, &dyn, dims))
        return 0;
    jit_kernel fn = jit_compile(&dyn);
    if (!fn) {
        if (!*jit_last_error())
            fail_msg("%s (dynamic, %s): refused with no message", src, dyn_mode_names[mode]);
        return 1;
    }
    /* buffers of the recorded sizes where these are sane: the kernel must
     * read none of them */
    size_t sz = 1 << 16;
    jit_shape *sh[3] = {&sig.data_shape, &sig.indices_shape, &sig.updates_shape};
    for (int i = 0; i < 3; i++) {
        int64_t e = elems(sh[i]) * 8;
        if (sh[i]->rank >= 0 && sh[i]->rank <= JIT_MAX_RANK && e > (int64_t)sz && e < (1 << 26))
            sz = (size_t)e;
    }
    char *data = calloc(1, sz), *idx = calloc(1, sz), *upd = calloc(1, sz), *out = malloc(sz);
    assert_true(data && idx && upd && out);
    memset(out, 0x5a, sz);
    int rc = ((jit_dynamic_fn)fn)(data, idx, upd, out, dims);
    if (rc == JIT_OK)
        fail_msg("%s (dynamic, %s, %s engine): an invalid signature's call succeeded", src,
                 dyn_mode_names[mode], jit_engine_name(sig.engine));
    if (rc != JIT_STATUS_BAD_SHAPE)
        fail_msg("%s (dynamic, %s): status %d, not BAD_SHAPE (%s)", src, dyn_mode_names[mode],
                 rc, jit_last_error());
    if (!*jit_last_error())
        fail_msg("%s (dynamic, %s): BAD_SHAPE with no message", src, dyn_mode_names[mode]);
    for (size_t i = 0; i < sz; i++)
        if ((unsigned char)out[i] != 0x5a)
            fail_msg("%s (dynamic, %s): the output was written", src, dyn_mode_names[mode]);
    free(data);
    free(idx);
    free(upd);
    free(out);
    return 2;
}

/* A valid signature with a bad index through the dynamic kernel of mode:
 * BAD_INDEX, nothing written, the message of the static kernel. 1 when
 * run, 0 when no dim became dynamic; -1 when the family was refused (a
 * library bug: the recorded shape is valid). */
static int refuse_index_dynamic(const cJSON *c, jit_sig sig, int mode)
{
    const char *src = case_name(c);
    jit_op_info info = op_info(sig.op);
    jit_sig dyn;
    int64_t dims[3 * JIT_MAX_RANK];
    if (!make_dynamic(&sig, info.has_updates, mode, &dyn, dims))
        return 0;
    jit_kernel fn = jit_compile(&dyn), st = compile_valid(&sig, src);
    if (!fn) {
        printf("  FAILED (dynamic, %s) %s: a valid signature's family refused: %s\n",
               dyn_mode_names[mode], src, jit_last_error());
        return -1;
    }
    bad_index_bufs b = bad_index_bufs_of(c, &sig, &info);
    char *data = b.data, *idx = b.idx, *upd = b.upd, *out = b.out, *before = b.before;
    size_t ob = b.out_bytes;
    assert_int_equal(call_kernel(st, &info, data, idx, upd, out, 0), JIT_STATUS_BAD_INDEX);
    char want[1024];
    snprintf(want, sizeof want, "%s", jit_last_error());
    int rc = ((jit_dynamic_fn)fn)(data, idx, upd, out, dims);
    if (rc != JIT_STATUS_BAD_INDEX)
        fail_msg("%s (dynamic, %s): status %d for an out-of-range index (%s)", src,
                 dyn_mode_names[mode], rc, jit_last_error());
    if (strcmp(want, jit_last_error()) != 0)
        fail_msg("%s (dynamic, %s): message '%s', the static kernel's '%s'", src,
                 dyn_mode_names[mode], jit_last_error(), want);
    for (size_t i = 0; i < ob + CANARY; i++)
        assert_int_equal((unsigned char)out[i], 0x5a);
    if (info.has_updates) {
        memcpy(before, data, (size_t)b.data_bytes);
        assert_int_equal(((jit_dynamic_fn)fn)(data, idx, upd, data, dims), JIT_STATUS_BAD_INDEX);
        assert_memory_equal(before, data, (size_t)b.data_bytes);
    }
    bad_index_bufs_free(&b);
    return 1;
}

typedef struct invalid_counts {
    int sig, idx;
    int dyn_compile[DYN_MODES], dyn_call[DYN_MODES], dyn_idx[DYN_MODES], dyn_failed;
} invalid_counts;

static void run_invalid_entry(const cJSON *c, invalid_counts *n)
{
    jit_sig sig = support_sig(c);
    if (sig.op == JIT_OP_NONE)
        fail_msg("%s: unknown op", case_name(c));
    int is_sig = strcmp(field(c, "kind")->valuestring, "signature") == 0;
    for (int e = 0; e < NENGINES; e++) {
        sig.engine = engines[e];
        if (is_sig)
            refuse_signature(c, sig);
        else
            refuse_index(c, sig);
        for (int mode = 0; mode < DYN_MODES; mode++) {
            if (is_sig) {
                int r = refuse_signature_dynamic(c, sig, mode);
                n->dyn_compile[mode] += r == 1;
                n->dyn_call[mode] += r == 2;
            } else {
                int r = refuse_index_dynamic(c, sig, mode);
                n->dyn_idx[mode] += r == 1;
                n->dyn_failed += r < 0;
            }
        }
    }
    if (is_sig)
        n->sig++;
    else
        n->idx++;
}

static void run_invalid_file(const char *file)
{
    cJSON *cases = support_load_cases(file);
    assert_non_null(cases);
    invalid_counts n = {0};
    const cJSON *c;
    cJSON_ArrayForEach(c, cases)
        run_invalid_entry(c, &n);
    printf("%s: %d signatures refused, %d bad-index runs refused (each on both engines)\n", file,
           n.sig, n.idx);
    for (int mode = 0; mode < DYN_MODES; mode++)
        printf("%s, dynamic (%s): of the signatures, %d refused at compile, %d by the call "
               "(BAD_SHAPE); %d bad-index runs refused (counts over both engines)\n",
               file, dyn_mode_names[mode], n.dyn_compile[mode], n.dyn_call[mode],
               n.dyn_idx[mode]);
    assert_int_equal(n.sig + n.idx, cJSON_GetArraySize(cases));
    cJSON_Delete(cases);
    assert_int_equal(n.dyn_failed, 0);
}

static void test_invalid_cases(void **state)
{
    (void)state;
    run_invalid_file("invalid.json");
}

static void test_invalid_family_cases(void **state)
{
    (void)state;
    run_invalid_file("invalid_family.json");
}

static int teardown(void **state)
{
    (void)state;
    jit_shutdown();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_gather_nd_cases, teardown),
        cmocka_unit_test_teardown(test_gather_nd_cases_dynamic, teardown),
        cmocka_unit_test_teardown(test_scatter_update_cases, teardown),
        cmocka_unit_test_teardown(test_scatter_update_cases_dynamic, teardown),
        cmocka_unit_test_teardown(test_gather_cases, teardown),
        cmocka_unit_test_teardown(test_gather_cases_dynamic, teardown),
        cmocka_unit_test_teardown(test_gather_elements_cases, teardown),
        cmocka_unit_test_teardown(test_gather_elements_cases_dynamic, teardown),
        cmocka_unit_test_teardown(test_scatter_nd_update_cases, teardown),
        cmocka_unit_test_teardown(test_scatter_nd_update_cases_dynamic, teardown),
        cmocka_unit_test_teardown(test_scatter_elements_update_cases, teardown),
        cmocka_unit_test_teardown(test_scatter_elements_update_cases_dynamic, teardown),
        cmocka_unit_test_teardown(test_invalid_cases, teardown),
        cmocka_unit_test_teardown(test_invalid_family_cases, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
