/* The tensorjit binary run as a user runs it: .npy files in (written here
 * byte by byte, not with the library's writer), .npy out, exit codes 0, 2
 * and 3, and exactly one stderr line per error. */
#define _DEFAULT_SOURCE /* setenv, unsetenv */
#include <glob.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cmocka.h>

#include <cjson/cJSON.h>

#include "npy.h"

#ifndef TJ_CLI_PATH
#error "TJ_CLI_PATH must name the tensorjit binary"
#endif

static char dir[64];
static char out_text[65536], err_text[8192];

static const char *path(const char *name)
{
    static char buf[4][256];
    static int n;
    char *p = buf[n++ % 4];
    snprintf(p, 256, "%s/%s", dir, name);
    return p;
}

static void write_npy(const char *name, const char *descr, const char *shape, const void *v,
                      size_t bytes)
{
    char header[256];
    int n = snprintf(header, sizeof header,
                     "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape);
    int pad = 63 - (10 + n) % 64;
    FILE *f = fopen(path(name), "wb");
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
    pre[8] = (unsigned char)(n + pad + 1);
    pre[9] = 0;
    fwrite(pre, 1, 10, f);
    fwrite(header, 1, (size_t)n, f);
    fprintf(f, "%*s\n", pad, "");
    fwrite(v, 1, bytes, f);
    fclose(f);
}

static void slurp(const char *file, char *buf, size_t len)
{
    FILE *f = fopen(file, "rb");
    size_t n = f ? fread(buf, 1, len - 1, f) : 0;
    buf[n] = '\0';
    if (f)
        fclose(f);
}

/* Runs `tensorjit ARGS` (ARGS may name files as @name); returns exit code. */
static int run(const char *args)
{
    char expanded[2048] = "", cmd[4096];
    for (const char *a = args; *a;) {
        if (*a == '@') {
            const char *e = a + 1;
            while (*e && *e != ' ')
                e++;
            char name[128];
            snprintf(name, sizeof name, "%.*s", (int)(e - a - 1), a + 1);
            strncat(expanded, path(name), sizeof expanded - strlen(expanded) - 1);
            a = e;
        } else {
            size_t l = strlen(expanded);
            expanded[l] = *a++;
            expanded[l + 1] = '\0';
        }
    }
    snprintf(cmd, sizeof cmd, "%s %s >%s/stdout 2>%s/stderr", TJ_CLI_PATH, expanded, dir, dir);
    int st = system(cmd);
    slurp(path("stdout"), out_text, sizeof out_text);
    slurp(path("stderr"), err_text, sizeof err_text);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int stderr_lines(void)
{
    int n = 0;
    for (const char *p = err_text; *p; p++)
        n += *p == '\n';
    return n;
}

static void read_out(const char *name, tj_npy *a)
{
    char err[256];
    if (tj_npy_read(path(name), a, err, sizeof err) != 0)
        fail_msg("output %s: %s", name, err);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/tj_cli_XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    setenv("TENSORJIT_CACHE_DIR", path("cache"), 1); /* not the user's own cache */
    /* the GatherND-8 batch_dims=2 example of the specification */
    int32_t data[24];
    for (int i = 0; i < 24; i++)
        data[i] = i + 1;
    int64_t idx[6] = {1, 0, 2, 0, 2, 2};
    write_npy("data.npy", "<i4", "(2, 3, 4)", data, sizeof data);
    write_npy("idx.npy", "<i8", "(2, 3, 1, 1)", idx, sizeof idx);
    int64_t bad[6] = {1, 0, 4, 0, 2, 2};
    write_npy("bad.npy", "<i8", "(2, 3, 1, 1)", bad, sizeof bad);
    /* ScatterUpdate-3 example 2 */
    float sd[15] = {-1, 1, -1, 3, 4, -1, 6, -1, 8, 9, -1, 11, 1, 13, 14};
    int32_t si[2] = {0, 2};
    float su[6] = {1, 1, 1, 1, 1, 2};
    write_npy("sdata.npy", "<f4", "(3, 5)", sd, sizeof sd);
    write_npy("sidx.npy", "<i4", "(2,)", si, sizeof si);
    write_npy("supd.npy", "<f4", "(3, 2)", su, sizeof su);
    FILE *f = fopen(path("fortran.npy"), "wb");
    fputs("\x93NUMPY\x01", f);
    fputc(0, f);
    fputs("\x76", f);
    fputc(0, f);
    fprintf(f, "%-117s\n", "{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3, 4), }");
    fwrite(data, 1, sizeof data, f);
    fclose(f);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd);
}

static void test_gather_nd_runs_spec_example(void **state)
{
    (void)state;
    assert_int_equal(run("gather-nd --data @data.npy --indices @idx.npy --batch-dims 2 "
                         "-o @out.npy --verbose"), 0);
    tj_npy a;
    read_out("out.npy", &a);
    int32_t want[6] = {2, 5, 11, 13, 19, 23};
    assert_int_equal(a.dtype, JIT_I32);
    assert_int_equal(a.shape.rank, 3);
    assert_int_equal(a.shape.dims[0], 2);
    assert_int_equal(a.shape.dims[1], 3);
    assert_int_equal(a.shape.dims[2], 1);
    assert_memory_equal(a.data, want, sizeof want);
    tj_npy_free(&a);
    assert_int_equal(stderr_lines(), 1);
    assert_true(strncmp(err_text, "engine: jit", 11) == 0 ||
                strncmp(err_text, "engine: reference (", 19) == 0);
}

static void test_opset5_flattens_batch_dims(void **state)
{
    (void)state;
    assert_int_equal(run("gather-nd --data @data.npy --indices @idx.npy --batch-dims 2 "
                         "--opset 5 -o @out5.npy"), 0);
    tj_npy a;
    read_out("out5.npy", &a);
    assert_int_equal(a.shape.rank, 2);
    assert_int_equal(a.shape.dims[0], 6);
    assert_int_equal(a.shape.dims[1], 1);
    tj_npy_free(&a);
    assert_string_equal(err_text, "");
}

static void test_engine_reference_and_print(void **state)
{
    (void)state;
    assert_int_equal(run("gather-nd --data @data.npy --indices @idx.npy --batch-dims 2 "
                         "--engine reference --verbose"), 0);
    assert_string_equal(err_text,
                        "engine: reference (the signature asks for the reference engine)\n");
    assert_string_equal(out_text, "[[[2],\n  [5],\n  [11]],\n [[13],\n  [19],\n  [23]]]\n");
}

static void test_bad_index_exit_3(void **state)
{
    (void)state;
    assert_int_equal(run("gather-nd --data @data.npy --indices @bad.npy --batch-dims 2 "
                         "-o @never.npy"), 3);
    assert_string_equal(err_text, "tensorjit: indices[0,2,0] = [4] is out of range for data "
                                  "dimension 2 of size 4\n");
    FILE *f = fopen(path("never.npy"), "rb");
    assert_null(f);
    /* the same indices are fine once clamped */
    assert_int_equal(run("gather-nd --data @data.npy --indices @bad.npy --batch-dims 2 "
                         "--index-policy clamp -o @clamped.npy"), 0);
    tj_npy a;
    read_out("clamped.npy", &a);
    assert_int_equal(((int32_t *)a.data)[2], 12);
    tj_npy_free(&a);
}

static void test_invalid_signature_exit_2(void **state)
{
    (void)state;
    assert_int_equal(run("gather-nd --data @data.npy --indices @idx.npy --batch-dims 3"), 2);
    assert_string_equal(err_text, "tensorjit: batch_dims=3 must be less than rank(data)=3\n");
    assert_int_equal(run("gather-nd --data @fortran.npy --indices @idx.npy"), 2);
    assert_int_equal(stderr_lines(), 1);
    assert_non_null(strstr(err_text, "fortran.npy"));
    assert_non_null(strstr(err_text, "Fortran order"));
    assert_int_equal(run("gather-nd --data @missing.npy --indices @idx.npy"), 2);
    assert_non_null(strstr(err_text, "missing.npy: cannot open"));
}

static void test_scatter_update_example(void **state)
{
    (void)state;
    assert_int_equal(run("scatter-update --data @sdata.npy --indices @sidx.npy --updates "
                         "@supd.npy --axis 1 -o @sout.npy"), 0);
    tj_npy a;
    read_out("sout.npy", &a);
    float want[15] = {1, 1, 1, 3, 4, 1, 6, 1, 8, 9, 1, 11, 2, 13, 14};
    assert_memory_equal(a.data, want, sizeof want);
    tj_npy_free(&a);
    assert_int_equal(run("scatter-update --data @sdata.npy --indices @sidx.npy --updates "
                         "@supd.npy --axis 0"), 2);
    assert_non_null(strstr(err_text, "updates.shape[0]=3 must equal 2"));
    assert_int_equal(run("scatter-update --data @sdata.npy --indices @sidx.npy --updates "
                         "@supd.npy"), 2);
    assert_string_equal(err_text, "tensorjit: scatter-update: --axis is required\n");
    assert_int_equal(run("scatter-update --data @sdata.npy --indices @sidx.npy"), 2);
    assert_string_equal(err_text, "tensorjit: scatter-update: --updates and --axis are "
                                  "required\n");
}

static void test_arguments(void **state)
{
    (void)state;
    assert_int_equal(run("--version"), 0);
    assert_string_equal(out_text, "tensorjit " TENSORJIT_VERSION "\n");
    assert_int_equal(run("--help"), 0);
    assert_non_null(strstr(out_text, "gather-nd"));
    assert_int_equal(run("gather-nd --help"), 0);
    assert_non_null(strstr(out_text, "--index-policy"));
    assert_int_equal(run("frobnicate"), 2);
    assert_int_equal(run("gather-nd --data @data.npy --indices @idx.npy --bogus"), 2);
    assert_int_equal(stderr_lines(), 1);
    assert_int_equal(run("gather-nd --data @data.npy --indices @idx.npy --batch-dims x"), 2);
    assert_string_equal(err_text, "tensorjit: --batch-dims expects an integer, got 'x'\n");
    assert_int_equal(run("gather-nd --data @data.npy --indices @idx.npy --opset 7"), 2);
    assert_int_equal(run("gather-nd --data @data.npy --indices @idx.npy --engine gpu"), 2);
    assert_int_equal(run("gather-nd --data @data.npy --indices @idx.npy --index-policy wrap"), 2);
    assert_int_equal(run("gather-nd --data @data.npy --indices @idx.npy --axis 1"), 2);
    assert_string_equal(err_text, "tensorjit: --axis is not an option of gather-nd\n");
    assert_int_equal(run("demo"), 0);
    assert_non_null(strstr(out_text, "matches the specification's output"));
}

static void test_dump_from_flags_and_files(void **state)
{
    (void)state;
    assert_int_equal(run("gather-nd --data-shape 2x2 --indices-shape 2x2 --dtype f32 "
                         "--index-type i32 --dump-ir"), 0);
    assert_non_null(strstr(out_text, "define i32 @tj_gather_nd(ptr noalias %data") ||
                    strstr(out_text, "define i32 @tj_gather_nd(i8* noalias %data"));
    assert_int_equal(run("gather-nd --data-shape 2x2 --indices-shape 2x2 --dump-ir=opt"), 0);
    assert_non_null(strstr(out_text, "define i32 @tj_gather_nd("));
    assert_int_equal(run("scatter-update --data-shape 3x5 --indices-shape 2 --updates-shape 3x2 "
                         "--axis 1 --dump-asm"), 0);
    assert_non_null(strstr(out_text, "tj_scatter_update:"));
    assert_int_equal(run("gather-nd --data @data.npy --indices @idx.npy --batch-dims 2 "
                         "--dump-ir"), 0);
    assert_non_null(strstr(out_text, "check.fail"));
    assert_int_equal(run("gather-nd --data-shape 2x2 --indices-shape 2x2"), 2);
    assert_string_equal(err_text, "tensorjit: gather-nd: a signature given by shapes needs "
                                  "--dump-ir, --dump-asm or --explain\n");
    assert_int_equal(run("gather-nd --data-shape 2y2 --indices-shape 2x2 --dump-ir"), 2);
    assert_int_equal(stderr_lines(), 1);
    assert_int_equal(run("gather-nd --data-shape 2x2 --indices-shape 2x3 --dump-ir"), 2);
    assert_string_equal(err_text, "tensorjit: indices.shape[-1]=3 plus batch_dims=0 must not "
                                  "exceed rank(data)=2\n");
}

static void test_verbose_names_the_jit(void **state)
{
    (void)state;
#ifdef TJ_WITH_JIT
    assert_int_equal(run("gather-nd --data @data.npy --indices @idx.npy --batch-dims 2 "
                         "--verbose -o @v.npy"), 0);
    assert_true(strncmp(err_text, "engine: jit (", 13) == 0);
    assert_int_equal(run("scatter-update --data @sdata.npy --indices @sidx.npy --updates "
                         "@supd.npy --axis 1 --verbose -o @sv.npy"), 0);
    assert_true(strncmp(err_text, "engine: jit (", 13) == 0);
#endif
}

/* TENSORJIT_DEBUG=0 is off in every layer (the engine used to print its
 * start-up time for any value); =1 prints, so the test can see a print. */
static void test_debug_zero_prints_nothing(void **state)
{
    (void)state;
#ifdef TJ_WITH_JIT
    setenv("TENSORJIT_DEBUG", "1", 1);
    assert_int_equal(run("gather-nd --data @data.npy --indices @idx.npy --batch-dims 2 "
                         "--engine jit -o @d.npy"), 0);
    assert_non_null(strstr(err_text, "tensorjit: engine started in "));
    setenv("TENSORJIT_DEBUG", "0", 1);
    assert_int_equal(run("gather-nd --data @data.npy --indices @idx.npy --batch-dims 2 "
                         "--engine jit -o @d.npy"), 0);
    unsetenv("TENSORJIT_DEBUG");
    assert_string_equal(err_text, "");
#endif
}

static void test_model_check_and_explain(void **state)
{
    (void)state;
    const char frag[] = "<layer id=\"7\" name=\"g\" type=\"GatherND\" version=\"opset8\">"
                        "<data batch_dims=1 /><input><port><dim>4</dim><dim>3</dim><dim>5</dim>"
                        "</port><port><dim>4</dim><dim>2</dim><dim>1</dim></port></input></layer>\n"
                        "<layer type=\"ScatterUpdate\"><input><port><dim>3</dim></port>"
                        "<port><dim>2</dim></port><port><dim>2</dim></port><port/></input></layer>\n";
    FILE *f = fopen(path("frag.xml"), "w");
    fputs(frag, f);
    fclose(f);
    assert_int_equal(run("model @frag.xml --check"), 0);
    assert_non_null(strstr(out_text, "2 indexing layers (a fragment: no <net>)"));
    assert_non_null(strstr(out_text, "skipped: a fragment carries no constants: give the axis "
                                     "with --axis"));
    assert_non_null(strstr(out_text, "ok (8 runs, bad index included)"));
    assert_string_equal(err_text, ""); /* stderr is no terminal: no progress line */
    assert_int_equal(run("model @frag.xml --axis 0 --dtype u8 --index-type i16 --check --explain"),
                     0);
    assert_non_null(strstr(out_text, "ScatterUpdate-3, axis 0, data u8 [3]"));
    assert_non_null(strstr(out_text, "plan (an indexed block copy over "));
    int oks = 0;
    for (const char *p = out_text; (p = strstr(p, "ok (")); p++)
        oks++;
    if (oks != 2)
        fail_msg("expected two checked layers:\n%s", out_text);
    f = fopen(path("garbage.xml"), "w");
    fputs("<net><layers><layer></net>", f);
    fclose(f);
    assert_int_equal(run("model @garbage.xml"), 2);
    assert_int_equal(stderr_lines(), 1);
    assert_non_null(strstr(err_text, "garbage.xml:1: "));
    assert_int_equal(run("check gather-nd --data-shape 30x2x100x35 --indices-shape 30x2x3x1 "
                         "--batch-dims 2 --index-type i32 --runs 25"), 0);
    assert_string_equal(out_text, "25 passed, 0 failed\n");
    assert_int_equal(run("check scatter-update --data-shape 8x4 --indices-shape 3 "
                         "--updates-shape 3x4 --axis 0 --index-policy zero-fill --runs 10"), 0);
    assert_string_equal(out_text, "10 passed, 0 failed\n");
    assert_int_equal(run("check gather-nd --data-shape 2x2 --indices-shape 2x3 --runs 5"), 2);
    assert_int_equal(run("scatter-update --data-shape 3x5 --indices-shape 2 --updates-shape 3x2 "
                         "--axis 1 --explain"), 0);
    assert_non_null(strstr(out_text, "data copied first      60 bytes (skipped when out == data)"));
    assert_non_null(strstr(out_text, "cache key (the normalized signature"));
}

/* The bench's scratch folders in the temporary directory. */
static size_t bench_folders(void)
{
    const char *tmp = getenv("TMPDIR");
    char pattern[256];
    snprintf(pattern, sizeof pattern, "%s/tensorjit-bench-*", tmp && *tmp ? tmp : "/tmp");
    glob_t g;
    size_t n = glob(pattern, 0, NULL, &g) == 0 ? g.gl_pathc : 0;
    globfree(&g);
    return n;
}

/* The bench runs, checks every implementation's output first, and its JSON
 * has the fields the workloads page asks for. */
static void test_bench_json(void **state)
{
    (void)state;
    /* it leaves no scratch folder behind (it used to leave one a run) */
    size_t before = bench_folders();
    assert_int_equal(run("bench --workload G6 --json --no-compile --rounds 3"), 0);
    assert_int_equal(bench_folders(), before);
    cJSON *j = cJSON_Parse(out_text);
    assert_non_null(j);
    assert_true(cJSON_IsArray(j));
    int impls = 0, jit = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, j)
    {
        const cJSON *w = cJSON_GetObjectItemCaseSensitive(e, "workload");
        const cJSON *impl = cJSON_GetObjectItemCaseSensitive(e, "impl");
        const cJSON *ns = cJSON_GetObjectItemCaseSensitive(e, "ns");
        const cJSON *th = cJSON_GetObjectItemCaseSensitive(e, "threads");
        assert_string_equal(w->valuestring, "G6");
        assert_true(cJSON_IsNumber(ns) && ns->valuedouble > 0);
        assert_true(cJSON_IsNumber(th) && th->valueint >= 1);
        jit += strcmp(impl->valuestring, "jit") == 0;
        impls++;
    }
    assert_true(impls >= 5); /* jit, jit x2, reference, generic, memcpy (static if cc) */
    assert_int_equal(jit, 2);
    cJSON_Delete(j);
    assert_int_equal(run("bench --workload G10"), 2); /* no such workload */
}

/* With no TENSORJIT_CACHE_DIR, the commands that run kernels use
 * $XDG_CACHE_HOME/tensorjit (gather-nd and scatter-update once returned
 * before opening it, and nothing caught it: the other tests set the
 * variable, which the library opens by itself). */
static void test_default_cache_folder(void **state)
{
    (void)state;
    char xdg[512];
    snprintf(xdg, sizeof xdg, "%s", path("xdg"));
    unsetenv("TENSORJIT_CACHE_DIR");
    setenv("XDG_CACHE_HOME", xdg, 1);
    int first = run("scatter-update --data @sdata.npy --indices @sidx.npy --updates "
                    "@supd.npy --axis 1 --verbose -o @x1.npy");
    char err1[sizeof err_text];
    snprintf(err1, sizeof err1, "%s", err_text);
    int second = run("scatter-update --data @sdata.npy --indices @sidx.npy --updates "
                     "@supd.npy --axis 1 --verbose -o @x2.npy");
    setenv("TENSORJIT_CACHE_DIR", path("cache"), 1);
    unsetenv("XDG_CACHE_HOME");
    assert_int_equal(first, 0);
    assert_int_equal(second, 0);
#ifdef TJ_WITH_JIT
    assert_true(strncmp(err1, "engine: jit (compile ", 21) == 0);
    assert_true(strncmp(err_text, "engine: jit (from the disk cache in ", 36) == 0);
    char folder[600];
    snprintf(folder, sizeof folder, "%s/tensorjit", xdg);
    struct stat st;
    assert_int_equal(stat(folder, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
#endif
}

static void test_disk_cache_across_processes(void **state)
{
    (void)state;
    assert_int_equal(run("cache clear"), 0);
    assert_int_equal(run("gather-nd --data @data.npy --indices @idx.npy --batch-dims 2 "
                         "--verbose -o @c1.npy"), 0);
#ifdef TJ_WITH_JIT
    assert_true(strncmp(err_text, "engine: jit (compile ", 21) == 0);
    assert_int_equal(run("gather-nd --data @data.npy --indices @idx.npy --batch-dims 2 "
                         "--verbose -o @c2.npy"), 0);
    assert_true(strncmp(err_text, "engine: jit (from the disk cache in ", 36) == 0);
    assert_int_equal(run("cache stats"), 0);
    assert_non_null(strstr(out_text, ": 1 kernel, "));
    assert_int_equal(run("cache clear"), 0);
    assert_non_null(strstr(out_text, "1 kernel, "));
    assert_non_null(strstr(out_text, "removed"));
#endif
    assert_int_equal(run("cache stats"), 0);
    assert_int_equal(run("cache frobnicate"), 2);
    /* --precompile fills the cache; a later run finds every layer there */
    assert_int_equal(run("cache clear"), 0);
    FILE *f = fopen(path("pre.xml"), "w");
    fputs("<layer type=\"GatherND\" version=\"opset8\"><data batch_dims=0 /><input><port>"
          "<dim>4</dim><dim>3</dim></port><port><dim>5</dim><dim>1</dim></port></input></layer>\n"
          "<layer type=\"GatherND\" version=\"opset5\"><data batch_dims=1 /><input><port>"
          "<dim>4</dim><dim>3</dim></port><port><dim>4</dim><dim>1</dim></port></input></layer>\n", f);
    fclose(f);
    assert_int_equal(run("model @pre.xml --precompile"), 0);
#ifdef TJ_WITH_JIT
    assert_non_null(strstr(out_text, "precompiled: 2 kernels in "));
    assert_non_null(strstr(out_text, "(2 compiled now, 0 already there)"));
    assert_int_equal(run("model @pre.xml"), 0);
    int disk = 0;
    for (const char *p = out_text; (p = strstr(p, "jit (disk cache)")); p++)
        disk++;
    assert_int_equal(disk, 2);
#endif
    /* an exit right after the cache was opened (LLVM still starting on the
     * warm-up thread) is an exit, not a crash in LLVM's destructors */
    for (int i = 0; i < 5; i++)
        assert_int_equal(run("gather-nd --bogus"), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gather_nd_runs_spec_example),
        cmocka_unit_test(test_opset5_flattens_batch_dims),
        cmocka_unit_test(test_engine_reference_and_print),
        cmocka_unit_test(test_bad_index_exit_3),
        cmocka_unit_test(test_invalid_signature_exit_2),
        cmocka_unit_test(test_scatter_update_example),
        cmocka_unit_test(test_arguments),
        cmocka_unit_test(test_dump_from_flags_and_files),
        cmocka_unit_test(test_verbose_names_the_jit),
        cmocka_unit_test(test_debug_zero_prints_nothing),
        cmocka_unit_test(test_default_cache_folder),
        cmocka_unit_test(test_model_check_and_explain),
        cmocka_unit_test(test_bench_json),
        cmocka_unit_test(test_disk_cache_across_processes),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
