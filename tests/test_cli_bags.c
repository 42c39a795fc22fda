/* The embedding-bag commands of the CLI (SPEC 10): embedding-bag-offsets,
 * embedding-bag-packed and embedding-segments run on .npy inputs written
 * by tests/cli/bags_expect.py, whose expected outputs numpy computes from
 * SPEC 10's rules; a bad offset, index or segment id exits 3 naming its
 * position. `tensorjit check` takes the bags too: the JIT kernel against
 * the reference kernel on random bags, static and dynamic. Skips (77) when
 * /usr/bin/python3 has no numpy. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "npy.h"

#ifndef TJ_CLI_PATH
#error "TJ_CLI_PATH must name the tensorjit binary"
#endif
#ifndef TJ_BAGS_EXPECT
#error "TJ_BAGS_EXPECT must name tests/cli/bags_expect.py"
#endif

static char dir[64];
static char err_text[1 << 14];
static char out_text[1 << 16];

static void slurp(const char *file, char *buf, size_t len)
{
    FILE *f = fopen(file, "rb");
    size_t n = f ? fread(buf, 1, len - 1, f) : 0;
    buf[n] = '\0';
    if (f)
        fclose(f);
}

/* `tensorjit ARGS -o OUT` with stderr kept; the exit status. */
static int run(const char *args, const char *out)
{
    char cmd[8192], err[128];
    snprintf(err, sizeof err, "%s/stderr", dir);
    snprintf(cmd, sizeof cmd, "%s %s -o %s 2>%s", TJ_CLI_PATH, args, out, err);
    int st = system(cmd);
    slurp(err, err_text, sizeof err_text);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* `tensorjit ARGS`, stdout in out_text and stderr in err_text; the exit
 * status. */
static int run_check(const char *args)
{
    char cmd[8192], out[128], err[128];
    snprintf(out, sizeof out, "%s/check_stdout", dir);
    snprintf(err, sizeof err, "%s/check_stderr", dir);
    snprintf(cmd, sizeof cmd, "%s %s >%s 2>%s", TJ_CLI_PATH, args, out, err);
    int st = system(cmd);
    slurp(out, out_text, sizeof out_text);
    slurp(err, err_text, sizeof err_text);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void expect_same_npy(const char *name, const char *got_path, const char *want_path)
{
    tj_npy got, want;
    char err[256];
    if (tj_npy_read(got_path, &got, err, sizeof err) != 0)
        fail_msg("%s: the output: %s", name, err);
    if (tj_npy_read(want_path, &want, err, sizeof err) != 0)
        fail_msg("%s: the expectation: %s", name, err);
    assert_int_equal(got.dtype, want.dtype);
    assert_int_equal(got.shape.rank, want.shape.rank);
    assert_memory_equal(got.shape.dims, want.shape.dims,
                        sizeof(int64_t) * (size_t)want.shape.rank);
    if (got.bytes != want.bytes || memcmp(got.data, want.data, (size_t)want.bytes) != 0)
        fail_msg("%s: the output differs from numpy's, bit for bit", name);
    tj_npy_free(&got);
    tj_npy_free(&want);
}

/* DIR/NAME.npy of a 1-D or 2-D array of the given type (values 0); its
 * path in path. */
static void write_npy(const char *name, jit_dtype t, jit_shape shape, char *path, size_t len)
{
    static char zeros[1024];
    char err[256];
    snprintf(path, len, "%s/%s.npy", dir, name);
    if (tj_npy_write(path, t, &shape, zeros, err, sizeof err) != 0)
        fail_msg("%s: %s", path, err);
}

/* `tensorjit ARGS` refused with exit 2 and one line saying want. */
static void expect_refused(const char *args, const char *want)
{
    int rc = run_check(args);
    if (rc != 2 || !strstr(err_text, want))
        fail_msg("%s: exit %d, not 2 saying '%s': %s", args, rc, want, err_text);
    if (strchr(err_text, '\n') != err_text + strlen(err_text) - 1)
        fail_msg("%s: more than one line on stderr: %s", args, err_text);
}

/* One line of cases.txt: NAME, exit status, stderr's words, arguments. */
static void run_case(char *line, int *ran, int *refused)
{
    char *name = strtok(line, "\t"), *status = strtok(NULL, "\t"), *needle = strtok(NULL, "\n");
    assert_non_null(name);
    assert_non_null(status);
    assert_non_null(needle);
    char *args = strchr(needle, '\t'); /* the needle may be empty */
    assert_non_null(args);
    *args++ = '\0';
    char out[128], want[128];
    snprintf(out, sizeof out, "%s/%s_out.npy", dir, name);
    snprintf(want, sizeof want, "%s/%s_want.npy", dir, name);
    int rc = run(args, out), expected = atoi(status);
    if (rc != expected)
        fail_msg("%s: exit %d, not %d: %s", name, rc, expected, err_text);
    if (expected == 0) {
        expect_same_npy(name, out, want);
        (*ran)++;
        return;
    }
    if (!strstr(err_text, needle))
        fail_msg("%s: stderr does not say '%s': %s", name, needle, err_text);
    if (strchr(err_text, '\n') != err_text + strlen(err_text) - 1)
        fail_msg("%s: more than one line on stderr: %s", name, err_text);
    (*refused)++;
}

static void test_against_numpy(void **state)
{
    (void)state;
    char file[128], line[8192];
    snprintf(file, sizeof file, "%s/cases.txt", dir);
    FILE *f = fopen(file, "r");
    assert_non_null(f);
    int ran = 0, refused = 0;
    while (fgets(line, sizeof line, f))
        run_case(line, &ran, &refused);
    fclose(f);
    assert_true(ran >= 9);     /* each command, each reduction, weights, dynamic */
    assert_true(refused >= 4); /* offsets, indices, segment ids, --opset */
}

/* --help lists the op's own flags; another op's is refused, naming it; a
 * mistyped one gets the nearest of this op's. */
static void test_flags(void **state)
{
    (void)state;
    char out[128], cmd[512];
    snprintf(out, sizeof out, "%s/help.txt", dir);
    snprintf(cmd, sizeof cmd, "%s embedding-segments --help >%s", TJ_CLI_PATH, out);
    assert_int_equal(system(cmd), 0);
    static char help[1 << 14];
    slurp(out, help, sizeof help);
    assert_non_null(strstr(help, "--segment-ids"));
    assert_non_null(strstr(help, "--num-segments"));
    assert_non_null(strstr(help, "--default-index"));
    assert_null(strstr(help, "--padding-idx"));
    assert_null(strstr(help, "reduction")); /* no --reduction: its weights' "sum only" neither */
    assert_null(strstr(help, "--offsets"));
    assert_int_equal(run("embedding-bag-packed --table t --indices i --default-index 0", out), 2);
    assert_non_null(strstr(err_text, "--default-index is not an option of embedding-bag-packed"));
    assert_int_equal(run("embedding-segments --table t --indices i --segment-id s", out), 2);
    assert_non_null(strstr(err_text, "did you mean --segment-ids?"));
    assert_int_equal(run_check("embedding-bag-offsets --table-shape 4x3 --indices-shape 5 "
                               "--offsets-shape 2 --weights-shape 4 --explain"), 2);
    assert_non_null(strstr(err_text, "--weights-shape of shape [4] must have the indices' "
                                     "shape [5]"));
    /* the bags' reductions by their own names: not the scatters' "add" for sum */
    assert_int_equal(run_check("embedding-bag-offsets --table-shape 4x3 --indices-shape 2 "
                               "--offsets-shape 1 --reduction add --explain"), 2);
    assert_non_null(strstr(err_text, "--reduction=add must be one of sum"));
    /* -o writes a run's result; --explain prints text: one or the other */
    assert_int_equal(run("embedding-bag-offsets --table-shape 4x3 --indices-shape 2 "
                         "--offsets-shape 1 --explain", out), 2);
    assert_non_null(strstr(err_text, "-o writes the result of a run; --explain, --dump-ir and "
                                     "--dump-asm print text instead"));
}

/* The "a signature by flags" example of each bag's --help runs as it
 * stands (with --explain): embedding-segments' once lacked the
 * --num-segments it requires. */
static void test_help_example_runs(void **state)
{
    (void)state;
    static const char *const ops[] = {"embedding-bag-offsets", "embedding-bag-packed",
                                      "embedding-segments"};
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
        char args[512];
        snprintf(args, sizeof args, "%s --help", ops[i]);
        assert_int_equal(run_check(args), 0);
        const char *at = strstr(out_text, "a signature by flags");
        const char *ex = at ? strstr(at, "\n  --table-shape ") : NULL;
        if (!ex)
            fail_msg("%s --help: no example signature:\n%s", ops[i], out_text);
        ex += 3;
        size_t n = strcspn(ex, "\n(");
        while (n && ex[n - 1] == ' ')
            n--;
        snprintf(args, sizeof args, "%s %.*s --explain", ops[i], (int)n, ex);
        if (run_check(args) != 0)
            fail_msg("%s: %s", args, err_text);
        assert_non_null(strstr(out_text, "output shape: "));
    }
}

/* `check OP SIGNATURE --runs N`: N runs, every one passed, for each bag
 * and the attributes each takes. */
static void test_check_static(void **state)
{
    (void)state;
    static const char *const sigs[] = {
        "embedding-bag-offsets --table-shape 10x4 --indices-shape 12 --offsets-shape 5",
        "embedding-bag-offsets --table-shape 10x4 --indices-shape 12 --offsets-shape 5 "
        "--weights --default-index 3 --index-type i32",
        "embedding-bag-offsets --table-shape 10x2x3 --indices-shape 12 --offsets-shape 6 "
        "--include-last-offset --reduction mean --padding-idx -2 --dtype f16",
        "embedding-bag-offsets --table-shape 7x5 --indices-shape 9 --offsets-shape 3 "
        "--reduction max --index-policy clamp --dtype i32",
        "embedding-bag-offsets --table-shape 7x5 --indices-shape 9 --offsets-shape 3 --opset 3",
        "embedding-bag-packed --table-shape 10x4 --indices-shape 3x4 --reduction max",
        "embedding-bag-packed --table-shape 10x4 --indices-shape 3x4 --weights --dtype bf16 "
        "--index-policy negative_wraps",
        "embedding-segments --table-shape 10x4 --indices-shape 12 --segment-ids-shape 12 "
        "--num-segments 5",
        "embedding-segments --table-shape 10x4 --indices-shape 12 --segment-ids-shape 12 "
        "--num-segments 5 --weights --default-index 2 --dtype f64",
    };
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        char args[1024];
        int runs = 5 + (int)i;
        snprintf(args, sizeof args, "check %s --runs %d --seed %zu", sigs[i], runs, i + 1);
        int rc = run_check(args);
        if (rc != 0)
            fail_msg("%s: exit %d: %s%s", args, rc, out_text, err_text);
        char want[64];
        snprintf(want, sizeof want, "%d passed, 0 failed\n", runs);
        if (strcmp(out_text, want) != 0)
            fail_msg("%s: stdout '%s', not '%s'", args, out_text, want);
    }
}

/* '?' dims: the dynamic kernel on several shapes of its family, one line
 * per shape, then N runs per shape, every one passed. */
static void test_check_dynamic(void **state)
{
    (void)state;
    static const char *const sigs[] = {
        "embedding-bag-offsets --table-shape '?x4' --indices-shape '?' --offsets-shape '?'",
        "embedding-bag-offsets --table-shape 10x4 --indices-shape '?:20' --offsets-shape 3 "
        "--weights",
        "embedding-bag-packed --table-shape '?x?' --indices-shape '?x3' --reduction mean",
        "embedding-segments --table-shape 10x4 --indices-shape '?' --segment-ids-shape '?' "
        "--num-segments '?'",
        /* rows the signature names, past the candidates' 1, 2, 3 rows of a
         * dynamic table (once no shape to check: a failure) */
        "embedding-bag-offsets --table-shape '?x4' --indices-shape '?' --offsets-shape '?' "
        "--default-index 3",
        "embedding-bag-offsets --table-shape '?x4' --indices-shape '?' --offsets-shape '?' "
        "--padding-idx -6",
        "embedding-segments --table-shape '?x4' --indices-shape '?' --segment-ids-shape '?' "
        "--num-segments 3 --default-index 7",
    };
    const int runs = 3;
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        char args[1024], want[64];
        snprintf(args, sizeof args, "check %s --runs %d", sigs[i], runs);
        int rc = run_check(args);
        if (rc != 0)
            fail_msg("%s: exit %d: %s%s", args, rc, out_text, err_text);
        int shapes = 0, ok = 0;
        for (const char *p = out_text; (p = strstr(p, "shape ")); p++, shapes++)
            ok += strncmp(strchr(p, ':'), ": ok\n", 5) == 0 || strstr(p, "(empty ") != NULL;
        if (shapes < 2 || ok != shapes)
            fail_msg("%s: %d shapes, %d ok:\n%s", args, shapes, ok, out_text);
        snprintf(want, sizeof want, "\n%d passed, 0 failed\n", runs * shapes);
        if (!strstr(out_text, want))
            fail_msg("%s: no '%s' in:\n%s", args, want + 1, out_text);
    }
}

/* --explain of a dynamic family: its plan's counts that come from each
 * call are SPEC 10's letters (S for segments, B for bags), not the
 * template's placeholders (it printed "bags -5", "out -160 bytes"). */
static void test_explain_dynamic(void **state)
{
    (void)state;
    static const char *const sigs[] = {
        "embedding-segments --table-shape 100x8 --indices-shape '?' --segment-ids-shape '?' "
        "--num-segments '?:64'",
        "embedding-bag-packed --table-shape '?x16' --indices-shape '?x8'",
        "embedding-bag-offsets --table-shape 100x16 --indices-shape '?' --offsets-shape '?:8'",
    };
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        char args[512];
        snprintf(args, sizeof args, "%s --explain", sigs[i]);
        assert_int_equal(run_check(args), 0);
        const char *plan = strstr(out_text, "plan (");
        const char *bags = i == 0 ? "\n  bags                   S " : "\n  bags                   B ";
        if (!plan || !strstr(plan, bags) ||
            !strstr(plan, "out of each call's bags"))
            fail_msg("%s: no dynamic counts in:\n%s", args, out_text);
        for (const char *p = plan; *p && strncmp(p, "cache key", 9) != 0; p++)
            if (*p == '-' && p[1] >= '0' && p[1] <= '9')
                fail_msg("%s: a negative count in its plan:\n%s", args, out_text);
    }
}

/* Bad arguments exit 2 with one line naming what to change; --explain
 * prints the plan first; check --help lists the bags' flags. */
static void test_check_refusals_and_help(void **state)
{
    (void)state;
    const char *sig = "check embedding-bag-offsets --table-shape 10x4 --indices-shape 12 "
                      "--offsets-shape 5";
    char args[1024];
    snprintf(args, sizeof args, "%s --runs 0", sig);
    assert_int_equal(run_check(args), 2);
    assert_non_null(strstr(err_text, "--runs"));
    snprintf(args, sizeof args, "%s --weights --reduction mean", sig);
    assert_int_equal(run_check(args), 2);
    assert_non_null(strstr(err_text, "weights"));
    assert_int_equal(run_check("check embedding-bag-offsets --table-shape 10x4 "
                               "--indices-shape 12"), 2);
    assert_non_null(strstr(err_text, "--offsets-shape"));
    assert_int_equal(run_check("check embedding-bag-packed --table-shape 10x4 --indices-shape "
                               "3x4 --offsets-shape 3"), 2);
    assert_non_null(strstr(err_text, "--offsets-shape is not an option of check "
                                     "embedding-bag-packed"));
    /* an abbreviation is named as typed: getopt expands --offsets to
     * --offsets-shape, a flag the user never wrote */
    assert_int_equal(run_check("check embedding-segments --table-shape 10x4 --indices-shape 12 "
                               "--segment-ids-shape 12 --num-segments 3 --offsets 3"), 2);
    assert_string_equal(err_text, "tensorjit: --offsets is not an option of check "
                                  "embedding-segments\n");
    assert_int_equal(run_check("check embedding-bag-packed --table-shape 10x4 --indices-shape "
                               "3x4 --offsets-sh=3"), 2);
    assert_string_equal(err_text, "tensorjit: --offsets-sh is not an option of check "
                                  "embedding-bag-packed\n");
    assert_int_equal(run_check("check embedding-segments --table-shape 10x4 --indices-shape 12 "
                               "--segment-id-shape 12 --num-segments 3"), 2);
    assert_non_null(strstr(err_text, "did you mean --segment-ids-shape?"));
    assert_int_equal(run_check("check embedding-segments --table-shape 10x4 --indices-shape 12 "
                               "--segment-ids-shape 12"), 2);
    assert_non_null(strstr(err_text, "--num-segments"));
    assert_int_equal(run_check("check embedding-bag-offsets --table t.npy"), 2);
    snprintf(args, sizeof args, "%s --runs 2 --explain", sig);
    assert_int_equal(run_check(args), 0);
    assert_true(strlen(out_text) > strlen("2 passed, 0 failed\n"));
    assert_non_null(strstr(out_text, "\n2 passed, 0 failed\n"));
    /* -o with its value: not a flag of check (it said "-o needs a value") */
    snprintf(args, sizeof args, "%s -o %s/x.npy", sig, dir);
    assert_int_equal(run_check(args), 2);
    assert_non_null(strstr(err_text, "check embedding-bag-offsets: -o is not an option of "
                                     "tensorjit check (it writes no result)"));
    snprintf(args, sizeof args, "%s --output=-", sig);
    assert_int_equal(run_check(args), 2);
    assert_non_null(strstr(err_text, "-o is not an option of tensorjit check"));
    /* the bag command's file flags: getopt took --table T.npy for
     * --table-shape and said the shape "T.npy" had a bad dimension 0 */
    assert_int_equal(run_check("check embedding-bag-offsets --table t.npy --indices i.npy "
                               "--offsets o.npy"), 2);
    assert_non_null(strstr(err_text, "check embedding-bag-offsets: --table FILE is not an "
                                     "option of check, whose random bags need only shapes "
                                     "(--table-shape)"));
    assert_int_equal(run_check("check embedding-segments --table-shape 10x4 --indices-shape 12 "
                               "--segment-ids=s.npy --num-segments 3"), 2);
    assert_non_null(strstr(err_text, "--segment-ids FILE is not an option of check"));
    assert_int_equal(run_check("check --help"), 0);
    static const char *const flags[] = {"embedding-bag-offsets", "--table-shape",
                                        "--offsets-shape", "--segment-ids-shape",
                                        "--num-segments", "--weights", "--default-index",
                                        "--padding-idx", "--include-last-offset"};
    for (size_t i = 0; i < sizeof flags / sizeof *flags; i++)
        if (!strstr(out_text, flags[i]))
            fail_msg("check --help does not name %s:\n%s", flags[i], out_text);
    assert_int_equal(run_check("check embedding-bag-packed --help"), 0);
    assert_non_null(strstr(out_text, "--runs"));
    assert_null(strstr(out_text, "--offsets-shape"));
}

/* Each refusal names the input at fault and what it takes: the input
 * itself, not another one checked against it first, and only the types the
 * op takes. */
static void test_refusals_name_the_input(void **state)
{
    (void)state;
    char t[128], i1[128], i2[128], f[128], o[128], w[128], args[1024];
    write_npy("r_table", JIT_F32, (jit_shape){2, {4, 3}}, t, sizeof t);
    write_npy("r_idx", JIT_I64, (jit_shape){1, {4}}, i1, sizeof i1);
    write_npy("r_idx2", JIT_I64, (jit_shape){2, {4, 2}}, i2, sizeof i2);
    write_npy("r_float", JIT_F32, (jit_shape){1, {4}}, f, sizeof f);
    write_npy("r_off", JIT_I64, (jit_shape){1, {2}}, o, sizeof o);
    write_npy("r_w", JIT_F32, (jit_shape){1, {4}}, w, sizeof w);
    /* float indices: the bags' i32 or i64, not every integer type (u8 is
     * refused next) */
    snprintf(args, sizeof args, "embedding-bag-offsets --table %s --indices %s --offsets %s", t,
             f, o);
    expect_refused(args, "indices element type f32: EmbeddingBagOffsets takes i32 or i64 "
                         "indices");
    snprintf(args, sizeof args, "embedding-bag-offsets --table %s --indices %s --offsets %s", t,
             i1, f);
    expect_refused(args, "offsets element type f32: EmbeddingBagOffsets takes i32 or i64 "
                         "offsets, of the indices' type (i64)");
    snprintf(args, sizeof args, "embedding-segments --table %s --indices %s --segment-ids %s "
             "--num-segments 3", t, i1, f);
    expect_refused(args, "segment_ids element type f32: EmbeddingSegmentsSum takes i32 or i64 "
                         "segment ids");
    /* 2-D indices with weights of 4: the indices are wrong, not the weights
     * (it said "--weights W of shape [4] must have the indices' shape [4,2]") */
    snprintf(args, sizeof args, "embedding-bag-offsets --table %s --indices %s --offsets %s "
             "--weights %s", t, i2, o, w);
    expect_refused(args, "indices of shape [4,2] must be 1-D [N] (rank 1), not of rank 2");
    expect_refused("embedding-bag-offsets --table-shape 4x3 --indices-shape 4x2 --offsets-shape "
                   "2 --weights-shape 4 --explain", "indices of shape [4,2] must be 1-D");
    /* weights that do not match good indices are still named, with their file */
    snprintf(args, sizeof args, "embedding-bag-offsets --table %s --indices %s --offsets %s "
             "--weights %s", t, i1, o, o);
    expect_refused(args, "r_off.npy: element type i64 must be the table's, f32");
    snprintf(args, sizeof args, "embedding-bag-packed --table %s --indices %s --weights %s", t,
             i2, w);
    expect_refused(args, "r_w.npy of shape [4] must have the indices' shape [4,2]");
    /* an input left out is named, not only the list of the required ones */
    snprintf(args, sizeof args, "embedding-bag-offsets --table %s --indices %s", t, i1);
    expect_refused(args, "embedding-bag-offsets: --offsets is missing (--table, --indices and "
                         "--offsets are required)");
    snprintf(args, sizeof args, "embedding-segments --table %s --segment-ids %s "
             "--num-segments 3", t, i1);
    expect_refused(args, "embedding-segments: --indices is missing (--table, --indices and "
                         "--segment-ids are required)");
    snprintf(args, sizeof args, "embedding-bag-packed --indices %s", i2);
    expect_refused(args, "embedding-bag-packed: --table is missing (--table and --indices are "
                         "required)");
    expect_refused("embedding-bag-offsets --table-shape 4x3 --offsets-shape 2 --explain",
                   "embedding-bag-offsets: --indices-shape is missing (--table-shape, "
                   "--indices-shape and --offsets-shape are required)");
    expect_refused("check embedding-segments --table-shape 4x3 --indices-shape 5 "
                   "--num-segments 2", "check embedding-segments: --segment-ids-shape is "
                   "missing (--table-shape, --indices-shape and --segment-ids-shape are required)");
    expect_refused("check embedding-bag-packed --indices-shape 2x3",
                   "check embedding-bag-packed: --table-shape is missing (--table-shape and "
                   "--indices-shape are required)");
    /* flags .npy files decide, refused rather than dropped (a newcomer's
     * trial: --dtype f16 on files ran f32 and said nothing), and a dynamic S
     * on files (it reached the kernel as -1 and leaked the C API's words) */
    snprintf(args, sizeof args, "embedding-bag-offsets --table %s --indices %s --offsets %s "
             "--dtype f16", t, i1, o);
    expect_refused(args, "embedding-bag-offsets: --dtype goes with a signature by shapes: .npy "
                         "files name their own types");
    snprintf(args, sizeof args, "gather --data %s --indices %s --axis 0 --index-type i32", t,
             i1);
    expect_refused(args, "gather: --index-type goes with a signature by shapes");
    for (int bounded = 0; bounded < 2; bounded++) {
        snprintf(args, sizeof args, "embedding-segments --table %s --indices %s --segment-ids "
                 "%s --num-segments %s", t, i1, i1, bounded ? "'?:9' --dynamic all" : "'?'");
        expect_refused(args, "--num-segments ? (a dynamic S) goes with a signature by shapes; "
                             "a run on .npy files takes S itself");
    }
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/tj_cli_bags_XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    setenv("TENSORJIT_CACHE_DIR", "off", 1);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s %s", TJ_BAGS_EXPECT, dir);
    return system(cmd) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    if (system("/usr/bin/python3 -c 'import numpy' 2>/dev/null") != 0) {
        printf("skipped: /usr/bin/python3 has no numpy to compute the expectations\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_numpy),
        cmocka_unit_test(test_flags),
        cmocka_unit_test(test_help_example_runs),
        cmocka_unit_test(test_check_static),
        cmocka_unit_test(test_check_dynamic),
        cmocka_unit_test(test_explain_dynamic),
        cmocka_unit_test(test_check_refusals_and_help),
        cmocka_unit_test(test_refusals_name_the_input),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
