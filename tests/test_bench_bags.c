/* tensorjit bench --bags on the small shapes of --bags-smoke: every peer's
 * output equals the static kernel's bit for bit (the bench checks it), the
 * static kernel's own output equals an oracle written here from SPEC
 * section 10's arithmetic, and a peer that differs is reported loudly. */
#define _DEFAULT_SOURCE /* setenv, unsetenv, mkdtemp */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include <cjson/cJSON.h>

#include "npy.h"

#ifndef TJ_CLI_PATH
#error "TJ_CLI_PATH must name the tensorjit binary"
#endif

static char dir[64];
static char out_text[1 << 16], err_text[1 << 14];

static void slurp(const char *file, char *buf, size_t len)
{
    FILE *f = fopen(file, "rb");
    size_t n = f ? fread(buf, 1, len - 1, f) : 0;
    buf[n] = '\0';
    if (f)
        fclose(f);
}

/* Runs `tensorjit ARGS`; stdout and stderr land in out_text, err_text. */
static int run(const char *args)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s %s >%s/out.txt 2>%s/err.txt", TJ_CLI_PATH, args, dir, dir);
    int rc = system(cmd);
    char file[128];
    snprintf(file, sizeof file, "%s/out.txt", dir);
    slurp(file, out_text, sizeof out_text);
    snprintf(file, sizeof file, "%s/err.txt", dir);
    slurp(file, err_text, sizeof err_text);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static const char *field_string(const cJSON *e, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, name);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static void read_npy(const char *id, const char *what, tj_npy *a)
{
    char file[192], err[256];
    snprintf(file, sizeof file, "%s/dump/%s_%s.npy", dir, id, what);
    if (tj_npy_read(file, a, err, sizeof err) != 0)
        fail_msg("%s", err);
}

static int64_t index_at(const tj_npy *a, int64_t i)
{
    return a->dtype == JIT_I32 ? ((const int32_t *)a->data)[i] : ((const int64_t *)a->data)[i];
}

/* f32 values of a table or weights, bf16 ones being dumped as their uint16 bits */
static float value_at(const tj_npy *a, int64_t i)
{
    if (a->dtype == JIT_F32)
        return ((const float *)a->data)[i];
    uint32_t u = (uint32_t)((const uint16_t *)a->data)[i] << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static int same_as_stored(const tj_npy *out, int64_t i, float v)
{
    if (out->dtype == JIT_F32)
        return memcmp(&v, (const float *)out->data + i, sizeof v) == 0;
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    uint16_t rounded = (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16); /* no NaN here */
    return rounded == ((const uint16_t *)out->data)[i];
}

/* SPEC 10: each bag reduced in index order in f32 from +0, a weighted
 * lookup's product rounded before it is added, mean a division by the
 * count, an empty bag zeros, the result rounded once when stored. */
static void check_oracle(const char *id, int mean, int weighted)
{
    tj_npy table, ix, off = {0}, w = {0}, out;
    read_npy(id, "table", &table);
    read_npy(id, "indices", &ix);
    read_npy(id, "out", &out);
    int packed = ix.shape.rank == 2;
    if (!packed)
        read_npy(id, "offsets", &off);
    if (weighted)
        read_npy(id, "weights", &w);
    int64_t rows = table.shape.dims[0], width = table.shape.dims[1];
    int64_t bags = out.shape.dims[0], n = packed ? ix.shape.dims[0] * ix.shape.dims[1]
                                                 : ix.shape.dims[0];
    assert_int_equal(out.shape.dims[1], width);
    float *acc = calloc((size_t)width, sizeof *acc);
    assert_non_null(acc);
    for (int64_t b = 0; b < bags; b++) {
        int64_t len = packed ? ix.shape.dims[1] : 0;
        int64_t lo = packed ? b * len : index_at(&off, b);
        int64_t hi = packed ? lo + len : b + 1 < bags ? index_at(&off, b + 1) : n;
        assert_true(0 <= lo && lo <= hi && hi <= n);
        for (int64_t d = 0; d < width; d++)
            acc[d] = 0.0f;
        for (int64_t j = lo; j < hi; j++) {
            int64_t r = index_at(&ix, j);
            assert_true(r >= 0 && r < rows);
            for (int64_t d = 0; d < width; d++) {
                float v = value_at(&table, r * width + d);
                if (weighted) {
                    float p = value_at(&w, j) * v; /* a statement apart: never fused */
                    v = p;
                }
                acc[d] += v;
            }
        }
        for (int64_t d = 0; d < width; d++) {
            float v = mean && hi > lo ? acc[d] / (float)(hi - lo) : acc[d];
            if (!same_as_stored(&out, b * width + d, v))
                fail_msg("%s: out[%lld, %lld] differs from the oracle's %a", id, (long long)b,
                         (long long)d, (double)v);
        }
    }
    free(acc);
    tj_npy_free(&table);
    tj_npy_free(&ix);
    tj_npy_free(&off);
    tj_npy_free(&w);
    tj_npy_free(&out);
}

static const char *const peers[] = {"static", "prefetch16", "probe", "probe x2", "memcpy",
                                     "jit", "jit dyn", "jit unchecked"};
#define NPEERS (sizeof peers / sizeof *peers)

static double field_number(const cJSON *e, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, name);
    if (!cJSON_IsNumber(v))
        fail_msg("%s: no number '%s'", field_string(e, "impl"), name);
    return v->valuedouble;
}

/* A row's time is the median of its rounds, within their spread; the
 * static and the dynamic JIT kernels carry their compile times. */
static void check_timing(const cJSON *e, int rounds)
{
    const char *impl = field_string(e, "impl");
    double ns = field_number(e, "ns");
    assert_int_equal((int)field_number(e, "rounds"), rounds);
    if (!(field_number(e, "ns_min") <= ns && ns <= field_number(e, "ns_max")))
        fail_msg("%s: median %g outside [%g, %g]", impl, ns, field_number(e, "ns_min"),
                 field_number(e, "ns_max"));
    if (strcmp(impl, "jit") == 0 || strcmp(impl, "jit dyn") == 0) {
        /* a compile, never a hit in the kernel cache (microseconds) */
        if (field_number(e, "compile_ms") < 0.1)
            fail_msg("%s: %s: compile_ms %g: a cache hit", field_string(e, "workload"), impl,
                     field_number(e, "compile_ms"));
        assert_true(field_number(e, "first_compile_ms") > 0);
    }
    if (strcmp(impl, "jit dyn") == 0) {
        /* the family through jit_compile_async: a pointer before its JIT kernel */
        double back = field_number(e, "async_back_ms"), jit = field_number(e, "async_jit_ms");
        if (!(back > 0 && jit >= back))
            fail_msg("%s: async_back_ms %g, async_jit_ms %g", field_string(e, "workload"), back,
                     jit);
    }
    /* each round's ratio to the static kernel in that round, then their median */
    assert_true(field_number(e, "vs_static") > 0);
    if (strcmp(impl, "static") == 0)
        assert_true(field_number(e, "vs_static") == 1.0);
    if (strcmp(impl, "jit dyn") == 0)
        assert_true(field_number(e, "vs_jit") > 0);
    if (strcmp(impl, "jit unchecked") == 0)
        assert_true(field_number(e, "jit_vs_unchecked") > 0);
}

/* Every smoke workload has every peer (tensorjit's static, dynamic and
 * unchecked kernels among them), each with a time, its output the static
 * kernel's, and the static kernel's output the oracle's. */
static void test_bags_smoke(void **state)
{
    (void)state;
    char args[256];
    snprintf(args, sizeof args, "bench --bags-smoke --json --rounds 3 --dump %s/dump", dir);
    if (run(args) != 0)
        fail_msg("exit status not 0: %s", err_text);
    cJSON *j = cJSON_Parse(out_text);
    assert_non_null(j);
    int workloads = 0, seen[NPEERS] = {0};
    const cJSON *e;
    cJSON_ArrayForEach(e, j)
    {
        const char *id = field_string(e, "workload"), *impl = field_string(e, "impl");
        const cJSON *ns = cJSON_GetObjectItemCaseSensitive(e, "ns");
        const cJSON *per = cJSON_GetObjectItemCaseSensitive(e, "ns_per_lookup");
        assert_true(id[0] == 'E');
        assert_true(cJSON_IsNumber(ns) && ns->valuedouble > 0);
        assert_true(cJSON_IsNumber(per) && per->valuedouble > 0);
        if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "output_ok")))
            fail_msg("%s: %s's output differs from the static kernel's", id, impl);
        check_timing(e, 3);
        for (size_t p = 0; p < NPEERS; p++)
            seen[p] += strcmp(impl, peers[p]) == 0;
        if (strcmp(impl, "probe") == 0 || strcmp(impl, "probe x2") == 0) {
            int dist = cJSON_GetObjectItemCaseSensitive(e, "prefetch_distance")->valueint;
            assert_true(dist >= 8 && dist <= 256);
        }
        /* the probe's bags in two halves on two threads, its output the static kernel's */
        if (strcmp(impl, "probe x2") == 0) {
            assert_int_equal((int)field_number(e, "threads"), 2);
            assert_true(field_number(e, "vs_probe") > 0);
        }
        if (strcmp(impl, "static") == 0) {
            workloads++;
            int mean = strcmp(field_string(e, "reduction"), "mean") == 0;
            int weighted = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "weighted"));
            check_oracle(id, mean, weighted);
        }
    }
    assert_true(workloads >= 5); /* E1, E2a, E2b, E3, E4, E5 in small */
    for (size_t p = 0; p < NPEERS; p++)
        assert_int_equal(seen[p], workloads);
    cJSON_Delete(j);
}

/* A peer whose output differs is named on stderr and in its row, and the
 * bench fails: the probe, and tensorjit's dynamic and unchecked kernels,
 * which are checked like every other row. */
static void check_mismatch_is_loud(const char *peer)
{
    setenv("TENSORJIT_BENCH_BAGS_CORRUPT", peer, 1);
    int rc = run("bench --bags-smoke --workload E1 --json --rounds 3");
    unsetenv("TENSORJIT_BENCH_BAGS_CORRUPT");
    assert_int_equal(rc, 1);
    assert_non_null(strstr(err_text, "MISMATCH"));
    assert_non_null(strstr(err_text, peer));
    cJSON *j = cJSON_Parse(out_text);
    assert_non_null(j);
    int bad = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, j)
    {
        int ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "output_ok"));
        assert_int_equal(ok, strcmp(field_string(e, "impl"), peer) != 0);
        bad += !ok;
    }
    assert_int_equal(bad, 1);
    cJSON_Delete(j);
}

static void test_bags_mismatch_is_loud(void **state)
{
    (void)state;
    check_mismatch_is_loud("probe");
    check_mismatch_is_loud("probe x2");
    check_mismatch_is_loud("jit dyn");
    check_mismatch_is_loud("jit unchecked");
}

/* The bag workloads are asked for by name or by --bags, never part of the
 * default run, and --help says so. */
static void test_bags_selection(void **state)
{
    (void)state;
    assert_int_equal(run("bench --help"), 0);
    assert_non_null(strstr(out_text, "--bags"));
    assert_non_null(strstr(out_text, "not in the default run"));
    assert_non_null(strstr(out_text, "interleaved"));
    assert_non_null(strstr(out_text, "median"));
    assert_int_equal(run("bench --bags --workload E9"), 2);
    assert_non_null(strstr(err_text, "E9"));
    assert_int_equal(run("bench --bags --rounds 1"), 2);
}

/* --threads gives one "jit xN" row per count above 1, each checked against
 * the static kernel like every row and carrying its N; the default is a
 * single "jit x2". The "probe x2" row is there in every run. */
static int thread_rows(const char *args, int *counts, int max)
{
    if (run(args) != 0)
        fail_msg("%s: exit status not 0: %s", args, err_text);
    cJSON *j = cJSON_Parse(out_text);
    assert_non_null(j);
    int n = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, j)
    {
        const char *impl = field_string(e, "impl");
        int threads = (int)field_number(e, "threads");
        if (strcmp(impl, "probe x2") == 0) { /* in every run, whatever --threads */
            assert_int_equal(threads, 2);
            continue;
        }
        if (strncmp(impl, "jit x", 5) != 0) {
            assert_int_equal(threads, 1);
            continue;
        }
        assert_true(n < max);
        assert_int_equal(atoi(impl + 5), threads);
        assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "output_ok")));
        /* what the split rule did (the smoke's tables are too small for a
         * kernel that splits: zeros, the fields there all the same) */
        double split = field_number(e, "split_calls"), alone = field_number(e, "alone_calls");
        assert_true(split >= 0 && alone >= 0);
        assert_true(field_number(e, "probes") >= 0 && field_number(e, "verdict_changes") >= 0);
        assert_true(field_number(e, "pool_job_ns") >= 0);
        counts[n++] = threads;
    }
    cJSON_Delete(j);
    return n;
}

/* A "jit x2" row says what the split rule did with its calls: with every
 * split kernel's calls split (TENSORJIT_SPLIT_MIN), all of them split. */
static void test_bags_split_rule_fields(void **state)
{
    (void)state;
    setenv("TENSORJIT_SPLIT_MIN", "1", 1);
    int rc = run("bench --bags-smoke --workload E4 --json --rounds 3");
    unsetenv("TENSORJIT_SPLIT_MIN");
    if (rc != 0)
        fail_msg("exit status not 0: %s", err_text);
    cJSON *j = cJSON_Parse(out_text);
    assert_non_null(j);
    int rows = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, j)
    {
        if (strcmp(field_string(e, "impl"), "jit x2") != 0)
            continue;
        rows++;
        assert_true(field_number(e, "split_calls") > 0);
        assert_true(field_number(e, "alone_calls") == 0);
        assert_true(field_number(e, "split_ps") > 0);
    }
    assert_int_equal(rows, 1);
    cJSON_Delete(j);
}

static void test_bags_thread_rows(void **state)
{
    (void)state;
    int c[8];
    assert_int_equal(thread_rows("bench --bags-smoke --workload E4 --json --rounds 3", c, 8), 1);
    assert_int_equal(c[0], 2);
    assert_int_equal(
        thread_rows("bench --bags-smoke --workload E4 --json --rounds 3 --threads 1,3,5", c, 8),
        2);
    assert_int_equal(c[0], 3);
    assert_int_equal(c[1], 5);
    assert_int_equal(
        thread_rows("bench --bags-smoke --workload E4 --json --rounds 3 --threads 1", c, 8), 0);
    assert_int_equal(run("bench --bags --threads 2,3,4,5,6"), 2);
    assert_non_null(strstr(err_text, "at most 4"));
    assert_int_equal(run("bench --bags --threads 0"), 2);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/tj_bags_XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bags_smoke),
        cmocka_unit_test(test_bags_mismatch_is_loud),
        cmocka_unit_test(test_bags_selection),
        cmocka_unit_test(test_bags_thread_rows),
        cmocka_unit_test(test_bags_split_rule_fields),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
