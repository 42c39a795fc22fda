/* The embedding-bag commands of the CLI (SPEC 10): embedding-bag-offsets,
 * embedding-bag-packed and embedding-segments run on .npy inputs written
 * by tests/cli/bags_expect.py, whose expected outputs numpy computes from
 * SPEC 10's rules; a bad offset, index or segment id exits 3 naming its
 * position. Skips (77) when /usr/bin/python3 has no numpy. */
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
    assert_null(strstr(help, "--offsets"));
    assert_int_equal(run("embedding-bag-packed --table t --indices i --default-index 0", out), 2);
    assert_non_null(strstr(err_text, "--default-index is not an option of embedding-bag-packed"));
    assert_int_equal(run("embedding-segments --table t --indices i --segment-id s", out), 2);
    assert_non_null(strstr(err_text, "did you mean --segment-ids?"));
    assert_int_equal(run("embedding-bag-offsets --table-shape 4x3 --indices-shape 5 "
                         "--offsets-shape 2 --weights-shape 4 --explain", out), 2);
    assert_non_null(strstr(err_text, "--weights-shape of shape [4] must have the indices' "
                                     "shape [5]"));
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
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
