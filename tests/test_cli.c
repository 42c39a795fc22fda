/* The tensorjit binary run as a user runs it: .npy files in (written here
 * byte by byte, not with the library's writer), .npy out, exit codes 0, 2
 * and 3, and exactly one stderr line per error. */
#define _GNU_SOURCE /* setenv, unsetenv; sched_getaffinity, CPU_COUNT */
#include <sched.h>
#include <glob.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cmocka.h>

#include <cjson/cJSON.h>

#include "npy.h"
#include "support.h"

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
static void write_text(const char *name, const char *text);

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

/* A printed result without its first line (shape and dtype, checked by
 * test_printed_result_header). */
static const char *printed(void)
{
    const char *nl = strchr(out_text, '\n');
    if (strncmp(out_text, "shape [", 7) != 0 || !nl)
        fail_msg("no shape line: %s", out_text);
    return nl + 1;
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
    assert_string_equal(printed(), "[[[2],\n  [5],\n  [11]],\n [[13],\n  [19],\n  [23]]]\n");
}

static void test_bad_index_exit_3(void **state)
{
    (void)state;
    assert_int_equal(run("gather-nd --data @data.npy --indices @bad.npy --batch-dims 2 "
                         "-o @never.npy"), 3);
    assert_string_equal(err_text, "tensorjit: indices[0,2,0] = [4] is out of range for data "
                                  "dimension 2 of size 4 (--index-policy clamp, zero-fill or "
                                  "negative-wraps-zero-fill take it)\n");
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
    /* a folder opens and fails at its first read: the reason, not "read error" */
    assert_int_equal(mkdir(path("folder.npy"), 0700), 0);
    assert_int_equal(run("gather-nd --data @folder.npy --indices @idx.npy"), 2);
    assert_non_null(strstr(err_text, "folder.npy: cannot read: Is a directory"));
    rmdir(path("folder.npy"));
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
    assert_null(strstr(out_text, "--runs"));
    /* under check, check's usage with the op's attributes (it printed the
     * op command's, which names neither --runs nor --seed) */
    assert_int_equal(run("check scatter-elements-update --help"), 0);
    assert_non_null(strstr(out_text, "usage: tensorjit check scatter-elements-update "));
    static const char *const check_flags[] = {"--runs N", "--seed S", "--reduction",
                                              "--no-init-val", "--torch-dims", "--axis A"};
    for (size_t i = 0; i < sizeof check_flags / sizeof *check_flags; i++)
        if (!strstr(out_text, check_flags[i]))
            fail_msg("check scatter-elements-update --help lacks %s:\n%s", check_flags[i],
                     out_text);
    assert_null(strstr(out_text, "--dump-asm"));
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
    /* as typed, not as getopt expanded it */
    assert_int_equal(run("gather-nd --data @data.npy --indices @idx.npy --ax=1"), 2);
    assert_string_equal(err_text, "tensorjit: --ax is not an option of gather-nd\n");
    assert_int_equal(run("demo"), 0);
    assert_non_null(strstr(out_text, "matches the specification's output"));
    /* the embedding bag's layer, read from its IR fragment, matches too */
    const char *bag = strstr(out_text, "== EmbeddingBagOffsets-15 example 3");
    assert_non_null(bag);
    assert_non_null(strstr(bag, "type=\"EmbeddingBagOffsets\" version=\"opset15\""));
    const char *verdict = strstr(bag, "\nmatches the specification's output\n");
    const char *next = strstr(bag + 3, "\n== ");
    assert_non_null(verdict);
    assert_true(next == NULL || verdict < next);
}

/* Flags given where they mean nothing get a line naming what to change
 * (a newcomer's trial: --updates on a gather exited 2 saying nothing, -o
 * with no value was an "unknown option", --explain=1 "needs a value", -o
 * beside --explain wrote nothing, --explain --dump-asm printed one). */
static void test_flags_that_would_be_ignored(void **state)
{
    (void)state;
    const char *base = "gather --data @sdata.npy --indices @sidx.npy --axis 0";
    static const struct {
        const char *flags, *err;
    } bad[] = {
        {"--updates @sdata.npy", "tensorjit: --updates is not an option of gather\n"},
        {"-o", "tensorjit: gather: -o needs a value (OUT.npy, or - for stdout)\n"},
        {"--explain=1", "tensorjit: gather: --explain takes no value (given '1')\n"},
        {"--explain -o @x.npy", "tensorjit: gather: -o writes the result of a run; --explain, "
                                "--dump-ir and --dump-asm print text instead: give one or the "
                                "other\n"},
        {"--explain --dump-asm", "tensorjit: gather: give one of --explain, --dump-ir, "
                                 "--dump-asm (each prints a text of its own)\n"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char cmd[512];
        snprintf(cmd, sizeof cmd, "%s %s", base, bad[i].flags);
        assert_int_equal(run(cmd), 2);
        assert_string_equal(err_text, bad[i].err);
    }
    assert_int_equal(run("check gathr --data-shape 4x3 --indices-shape 2 --axis 0"), 2);
    assert_string_equal(err_text, "tensorjit: check: unknown op 'gathr' (did you mean "
                                  "'gather'?)\n");
    assert_int_equal(run("check gather --data-shape 4x3 --indices-shape 2 --axis 0 -o @x.npy"),
                     2);
    assert_non_null(strstr(err_text, "-o is not an option of tensorjit check"));
    /* check runs both engines and prints no code: these were accepted and
     * dropped (the bags' check refused them as unknown) */
    static const char *const check_refused[] = {"--engine reference", "--verbose", "--dump-ir",
                                                "--dump-ir=opt", "--dump-asm"};
    for (size_t i = 0; i < sizeof check_refused / sizeof *check_refused; i++) {
        char cmd[256], want[64];
        snprintf(cmd, sizeof cmd, "check gather --data-shape 4x3 --indices-shape 2 --axis 0 %s",
                 check_refused[i]);
        snprintf(want, sizeof want, "check gather: %.*s is not an option of tensorjit check",
                 (int)strcspn(check_refused[i], " ="), check_refused[i]);
        assert_int_equal(run(cmd), 2);
        assert_non_null(strstr(err_text, want));
        assert_string_equal(out_text, "");
    }
    assert_int_equal(run("check gather --axis 0"), 2);
    assert_non_null(strstr(err_text, "give the signature by shapes (--data-shape"));
    /* an input left out is named, not only the list of the required ones;
     * under check, the command as typed, as the bags' check says it */
    static const struct {
        const char *args, *err;
    } missing[] = {
        {"gather --data @sdata.npy --axis 0",
         "tensorjit: gather: --indices is missing (--data and --indices are required)\n"},
        {"gather-nd --indices @idx.npy",
         "tensorjit: gather-nd: --data is missing (--data and --indices are required)\n"},
        {"gather --data-shape 4x3 --axis 0 --explain",
         "tensorjit: gather: --indices-shape is missing (--data-shape and --indices-shape are "
         "required)\n"},
        {"check gather --indices-shape 3 --axis 0",
         "tensorjit: check gather: --data-shape is missing (--data-shape and --indices-shape "
         "are required)\n"},
    };
    for (size_t i = 0; i < sizeof missing / sizeof *missing; i++) {
        assert_int_equal(run(missing[i].args), 2);
        assert_string_equal(err_text, missing[i].err);
    }
    assert_int_equal(run("bench --compile --workload G6"), 2);
    assert_non_null(strstr(err_text, "--workload, --rounds, --threads and --no-compile do not "
                                     "apply"));
    assert_int_equal(run("bench --policy clamp --workload G6"), 2);
    assert_non_null(strstr(err_text, "give --threads too"));
    assert_int_equal(run("bench --verbose --workload G6"), 2); /* was ignored: the table ran */
    assert_non_null(strstr(err_text, "--verbose says what the split rule did"));
    assert_int_equal(run("bench --runs 3"), 2);
    assert_non_null(strstr(err_text, "give --compile too"));
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
    /* a flag no layer takes is refused, not ignored: GatherND has no axis */
    write_text("gnd.xml", "<layer type=\"GatherND\"><input><port><dim>4</dim>"
                          "</port><port><dim>2</dim><dim>1</dim></port></input></layer>\n");
    assert_int_equal(run("model @gnd.xml --axis 1"), 2);
    assert_non_null(strstr(err_text, "--axis was given, but no layer of "));
    assert_int_equal(run("model @gnd.xml --default-index 0"), 2);
    assert_non_null(strstr(err_text, "--default-index was given, but no layer of "));
    /* a bag fragment's default_index port (the spec's example prints its
     * value in a comment): skipped without the flag, checked with it, and
     * a row past the table refused by the signature's own check */
    write_text("bag.xml", "<layer type=\"EmbeddingBagOffsetsSum\"><input><port id=\"0\">"
                          "<dim>5</dim><dim>2</dim></port><port id=\"1\"><dim>4</dim></port>"
                          "<port id=\"2\"><dim>3</dim></port><port id=\"3\"/></input></layer>\n");
    assert_int_equal(run("model @bag.xml"), 0);
    assert_non_null(strstr(out_text, "give its default_index with --default-index"));
    assert_int_equal(run("model @bag.xml --default-index=4 --check"), 0);
    assert_non_null(strstr(out_text, "default_index 4 (from --default-index)"));
    assert_non_null(strstr(out_text, "ok (8 runs, bad index included)"));
    assert_int_equal(run("model @bag.xml --default-index 5"), 1);
    assert_non_null(strstr(out_text, "refused: default_index=5 must be -1 (none) or a row of "));
    assert_int_equal(run("model @bag.xml --default-index -2"), 2);
    assert_non_null(strstr(err_text, "--default-index"));
    assert_int_equal(run("model @gnd.xml --dtype u8 --opset 5"), 0);
    assert_non_null(strstr(out_text, "GatherND-5"));
    assert_int_equal(run("model @gnd.xml --opset 7"), 2); /* no version of GatherND's */
    assert_non_null(strstr(err_text, "--opset 7: GatherND#1 (line 1) has no version attribute, "
                                     "and GatherND's versions are 5, 8"));
    /* a version older than the type's first: skipped, the op named without
     * a version (it once read "GatherND-0") */
    write_text("gnd1.xml", "<layer type=\"GatherND\" version=\"opset1\"><input><port><dim>4"
                           "</dim></port><port><dim>2</dim><dim>1</dim></port></input></layer>\n");
    assert_int_equal(run("model @gnd1.xml"), 0);
    assert_non_null(strstr(out_text, "GatherND  "));
    assert_null(strstr(out_text, "GatherND-0"));
    assert_non_null(strstr(out_text, "skipped: opset1 is older than GatherND's first version"));
    /* values as --flag=value too; a missing one named; a folder is no model */
    assert_int_equal(run("model @gnd.xml --jobs=1 --dtype=u8"), 0);
    assert_non_null(strstr(out_text, "data u8 [4]"));
    assert_int_equal(run("model @gnd.xml --jobs"), 2);
    assert_non_null(strstr(err_text, "model: --jobs needs a value"));
    assert_int_equal(run("model @gnd.xml --check=1"), 2);
    assert_non_null(strstr(err_text, "--check takes no value"));
    assert_int_equal(run("model @."), 2);
    assert_non_null(strstr(err_text, "is a folder, not a model file"));
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

/* Gather on data.npy (i32 [2,3,4] holding 1..24, so data[b,s,c] =
 * 12b + 4s + c + 1). Expected values worked out by hand (and equal to
 * numpy.take / tf.gather(batch_dims=1)). */
static void test_gather_command(void **state)
{
    (void)state;
    int64_t g1[2] = {0, -1};
    write_npy("g1.npy", "<i8", "(2,)", g1, sizeof g1);
    /* numpy.take(data, [0, -1], axis=1): rows s=0 and s=2 of each batch */
    assert_int_equal(run("gather --data @data.npy --indices @g1.npy --axis 1 "
                         "--index-policy negative-wraps -o @gout.npy"), 0);
    tj_npy a;
    read_out("gout.npy", &a);
    int32_t want1[16] = {1, 2, 3, 4, 9, 10, 11, 12, 13, 14, 15, 16, 21, 22, 23, 24};
    assert_int_equal(a.dtype, JIT_I32);
    assert_int_equal(a.shape.rank, 3);
    assert_int_equal(a.shape.dims[0], 2);
    assert_int_equal(a.shape.dims[1], 2);
    assert_int_equal(a.shape.dims[2], 4);
    assert_memory_equal(a.data, want1, sizeof want1);
    tj_npy_free(&a);
    /* the default policy is error: -1 is out of range, one line, no file */
    assert_int_equal(run("gather --data @data.npy --indices @g1.npy --axis 1 -o @gnever.npy"),
                     3);
    assert_string_equal(err_text, "tensorjit: indices[1] = -1 is out of range for data "
                                  "dimension 1 of size 3 (--index-policy negative-wraps, clamp, "
                                  "zero-fill or negative-wraps-zero-fill take it)\n");
    assert_null(fopen(path("gnever.npy"), "rb"));

    /* batch_dims 1 on axis 2: out[b,s,j] = data[b,s,idx[b,j]], shape [2,3,2] */
    int32_t gb[4] = {3, 0, 1, 1};
    write_npy("gb.npy", "<i4", "(2, 2)", gb, sizeof gb);
    assert_int_equal(run("gather --data @data.npy --indices @gb.npy --axis 2 --batch-dims 1 "
                         "--opset 7 -o @gbout.npy"), 0);
    read_out("gbout.npy", &a);
    int32_t want2[12] = {4, 1, 8, 5, 12, 9, 14, 14, 18, 18, 22, 22};
    assert_int_equal(a.shape.rank, 3);
    assert_int_equal(a.shape.dims[2], 2);
    assert_memory_equal(a.data, want2, sizeof want2);
    tj_npy_free(&a);
    /* the same counted from the end */
    assert_int_equal(run("gather --data @data.npy --indices @gb.npy --axis -1 --batch-dims -1 "
                         "-o @gbneg.npy"), 0);
    read_out("gbneg.npy", &a);
    assert_memory_equal(a.data, want2, sizeof want2);
    tj_npy_free(&a);
    assert_int_equal(run("gather --data @data.npy --indices @gb.npy --axis 2 --batch-dims 1 "
                         "--opset 1"), 2);
    assert_string_equal(err_text, "tensorjit: batch_dims=1: Gather-1 has no batch_dims (use "
                                  "opset 7 or 8); --batch-dims 1 needs --opset 7 or 8\n");

    /* Gather-8's own policy: -1 and -4 wrap, 4 and -5 give zeros */
    int64_t gz[4] = {-1, 4, -5, 0};
    write_npy("gz.npy", "<i8", "(4,)", gz, sizeof gz);
    assert_int_equal(run("gather --data @data.npy --indices @gz.npy --axis -1 "
                         "--index-policy negative-wraps-zero-fill -o @gzout.npy"), 0);
    read_out("gzout.npy", &a);
    int32_t want3[24] = {4,  0, 0, 1,  8,  0, 0, 5,  12, 0, 0, 9,
                         16, 0, 0, 13, 20, 0, 0, 17, 24, 0, 0, 21};
    assert_memory_equal(a.data, want3, sizeof want3);
    tj_npy_free(&a);
    assert_int_equal(run("gather --data @data.npy --indices @gz.npy"), 2);
    assert_string_equal(err_text, "tensorjit: gather: --axis is required\n");
    assert_int_equal(run("gather --data @data.npy --indices @gz.npy --axis 3"), 2);
    assert_int_equal(stderr_lines(), 1);
    assert_non_null(strstr(err_text, "axis=3 must be in [-rank(data), rank(data)-1] = [-3, 2]"));
}

/* torch.gather(t, 1, idx) with t = [[1, 2, 3], [4, 5, 6]], idx = [[2, 0], [1, 1]]. */
static void test_gather_elements_command(void **state)
{
    (void)state;
    float ed[6] = {1, 2, 3, 4, 5, 6};
    int64_t ei[4] = {2, 0, 1, 1};
    write_npy("ed.npy", "<f4", "(2, 3)", ed, sizeof ed);
    write_npy("ei.npy", "<i8", "(2, 2)", ei, sizeof ei);
    assert_int_equal(run("gather-elements --data @ed.npy --indices @ei.npy --axis 1 "
                         "-o @eout.npy"), 0);
    tj_npy a;
    read_out("eout.npy", &a);
    float want[4] = {3, 1, 5, 5};
    assert_int_equal(a.dtype, JIT_F32);
    assert_int_equal(a.shape.rank, 2);
    assert_int_equal(a.shape.dims[0], 2);
    assert_int_equal(a.shape.dims[1], 2);
    assert_memory_equal(a.data, want, sizeof want);
    tj_npy_free(&a);
    assert_int_equal(run("gather-elements --data @ed.npy --indices @ei.npy --axis -1"), 0);
    assert_string_equal(printed(), "[[3, 1],\n [5, 5]]\n");
    /* along axis 0 the other dims must match (OpenVINO's rule) */
    assert_int_equal(run("gather-elements --data @ed.npy --indices @ei.npy --axis 0"), 2);
    assert_string_equal(err_text, "tensorjit: indices.shape[1]=2 must equal data.shape[1]=3 "
                                  "(every dimension but axis 0); torch.gather's rule, no "
                                  "larger, is the signature's torch_dims (CLI: --torch-dims)\n");
    /* 3 is out of range along axis 1 (size 3) */
    int64_t eb[4] = {2, 0, 3, 1};
    write_npy("eb.npy", "<i8", "(2, 2)", eb, sizeof eb);
    assert_int_equal(run("gather-elements --data @ed.npy --indices @eb.npy --axis 1"), 3);
    assert_int_equal(stderr_lines(), 1);
    assert_non_null(strstr(err_text, "= 3 is out of range for data dimension 1 of size 3"));
    assert_int_equal(run("gather-elements --data @ed.npy --indices @eb.npy --axis 1 "
                         "--index-policy clamp"), 0);
    assert_string_equal(printed(), "[[3, 1],\n [6, 5]]\n");
}

/* --torch-dims: torch.gather(t, 1, [[2, 0]]) and torch.gather(t, 0, [[1, 0]])
 * with t = [[1, 2, 3], [4, 5, 6]] (index smaller than t), and
 * torch.zeros(2, 3).scatter_(1, [[2, 0]], [[10, 11, 12], [13, 14, 15]]) (src
 * larger than index), worked out by hand and checked in torch. */
static void test_torch_dims_option(void **state)
{
    (void)state;
    float td[6] = {1, 2, 3, 4, 5, 6}, zero[6] = {0}, tu[6] = {10, 11, 12, 13, 14, 15};
    int64_t t1[2] = {2, 0}, t0[2] = {1, 0};
    write_npy("td.npy", "<f4", "(2, 3)", td, sizeof td);
    write_npy("tz.npy", "<f4", "(2, 3)", zero, sizeof zero);
    write_npy("tu.npy", "<f4", "(2, 3)", tu, sizeof tu);
    write_npy("t1.npy", "<i8", "(1, 2)", t1, sizeof t1);
    write_npy("t0.npy", "<i8", "(1, 2)", t0, sizeof t0);
    assert_int_equal(run("gather-elements --data @td.npy --indices @t1.npy --axis 1 "
                         "--torch-dims"), 0);
    assert_string_equal(printed(), "[[3, 1]]\n");
    assert_int_equal(run("gather-elements --data @td.npy --indices @t0.npy --axis 0 "
                         "--torch-dims --dynamic all --engine reference"), 0);
    assert_string_equal(printed(), "[[4, 2]]\n");
    assert_int_equal(run("gather-elements --data @td.npy --indices @t1.npy --axis 1"), 2);
    assert_string_equal(err_text, "tensorjit: indices.shape[0]=1 must equal data.shape[0]=2 "
                                  "(every dimension but axis 1); torch.gather's rule, no "
                                  "larger, is the signature's torch_dims (CLI: --torch-dims)\n");
    assert_int_equal(run("scatter-elements-update --data @tz.npy --indices @t1.npy "
                         "--updates @tu.npy --axis 1 --torch-dims"), 0);
    assert_string_equal(printed(), "[[11, 0, 10],\n [0, 0, 0]]\n");
    assert_int_equal(run("scatter-elements-update --data @tz.npy --indices @t1.npy "
                         "--updates @tu.npy --axis 1 --torch-dims --dynamic all"), 0);
    assert_string_equal(printed(), "[[11, 0, 10],\n [0, 0, 0]]\n");
    int64_t t2[4] = {0, 1, 1, 0};
    write_npy("t2.npy", "<i8", "(2, 2)", t2, sizeof t2);
    write_npy("tv.npy", "<f4", "(1, 2)", tu, 2 * sizeof *tu);
    assert_int_equal(run("scatter-elements-update --data @tz.npy --indices @t2.npy "
                         "--updates @tv.npy --axis 1 --torch-dims"), 2);
    assert_int_equal(stderr_lines(), 1);
    assert_non_null(strstr(err_text, "updates.shape[0]=1 must not be smaller than "
                                     "indices.shape[0]=2"));
    assert_int_equal(run("gather --data @td.npy --indices @t1.npy --axis 0 --torch-dims"), 2);
    assert_string_equal(err_text, "tensorjit: --torch-dims is not an option of gather\n");
    assert_int_equal(run("gather-elements --data-shape 3x4 --indices-shape 2x6 --axis 1 "
                         "--torch-dims --explain"), 0);
    assert_non_null(strstr(out_text, "torch_dims"));
}

/* tf.tensor_scatter_nd_update(reshape(range(8), [4, 2]), [[3], [0], [3]],
 * [[10, 11], [20, 21], [30, 31]]): the last of the two rows 3 wins. */
static void test_scatter_nd_update_command(void **state)
{
    (void)state;
    float sd[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    int64_t si[3] = {3, 0, 3}, sb[3] = {3, 0, 4};
    float su[6] = {10, 11, 20, 21, 30, 31}, su33[9] = {0};
    write_npy("ndd.npy", "<f4", "(4, 2)", sd, sizeof sd);
    write_npy("ndi.npy", "<i8", "(3, 1)", si, sizeof si);
    write_npy("ndbad.npy", "<i8", "(3, 1)", sb, sizeof sb);
    write_npy("ndu.npy", "<f4", "(3, 2)", su, sizeof su);
    write_npy("ndu33.npy", "<f4", "(3, 3)", su33, sizeof su33);
    assert_int_equal(run("scatter-nd-update --data @ndd.npy --indices @ndi.npy --updates "
                         "@ndu.npy -o @ndout.npy"), 0);
    tj_npy a;
    read_out("ndout.npy", &a);
    float want[8] = {20, 21, 2, 3, 4, 5, 30, 31};
    assert_int_equal(a.shape.rank, 2);
    assert_int_equal(a.shape.dims[0], 4);
    assert_int_equal(a.shape.dims[1], 2);
    assert_memory_equal(a.data, want, sizeof want);
    tj_npy_free(&a);
    /* full tuples (k = 2): single elements */
    int32_t ki[4] = {1, 1, 0, 0};
    float ku[2] = {-1, -2};
    write_npy("ndki.npy", "<i4", "(2, 2)", ki, sizeof ki);
    write_npy("ndku.npy", "<f4", "(2,)", ku, sizeof ku);
    assert_int_equal(run("scatter-nd-update --data @ndd.npy --indices @ndki.npy --updates "
                         "@ndku.npy --opset 15"), 0);
    assert_string_equal(printed(), "[[-2, 1],\n [2, -1],\n [4, 5],\n [6, 7]]\n");
    /* exit 3: input, position, value, dimension */
    assert_int_equal(run("scatter-nd-update --data @ndd.npy --indices @ndbad.npy --updates "
                         "@ndu.npy -o @ndnever.npy"), 3);
    assert_string_equal(err_text, "tensorjit: indices[2] = [4] is out of range for data "
                                  "dimension 0 of size 4 (--index-policy clamp, zero-fill or "
                                  "negative-wraps-zero-fill take it)\n");
    assert_null(fopen(path("ndnever.npy"), "rb"));
    /* the update of the bad row dropped */
    assert_int_equal(run("scatter-nd-update --data @ndd.npy --indices @ndbad.npy --updates "
                         "@ndu.npy --index-policy zero-fill"), 0);
    assert_string_equal(printed(), "[[20, 21],\n [2, 3],\n [4, 5],\n [10, 11]]\n");
    /* exit 2: the rule on updates' shape */
    assert_int_equal(run("scatter-nd-update --data @ndd.npy --indices @ndi.npy --updates "
                         "@ndu33.npy"), 2);
    assert_string_equal(err_text, "tensorjit: updates.shape[1]=3 must equal 2 (expected "
                                  "updates shape [3,2] = indices.shape[:-1] + data.shape[1:])\n");
    assert_int_equal(run("scatter-nd-update --data @ndd.npy --indices @ndi.npy --updates "
                         "@ndu.npy --axis 0"), 2);
    assert_string_equal(err_text, "tensorjit: --axis is not an option of scatter-nd-update\n");
    assert_int_equal(run("scatter-nd-update --data @ndd.npy --indices @ndi.npy --updates "
                         "@ndu.npy --opset 8"), 2);
    assert_int_equal(stderr_lines(), 1);
}

static void test_check_explain_dump_new_ops(void **state)
{
    (void)state;
    assert_int_equal(run("check gather --data-shape 4x5x3 --indices-shape 4x2 --axis 1 "
                         "--batch-dims 1 --runs 12"), 0);
    assert_string_equal(out_text, "12 passed, 0 failed\n");
    assert_int_equal(run("check gather-elements --data-shape 3x4 --indices-shape 3x6 --axis 1 "
                         "--index-policy negative-wraps --runs 7"), 0);
    assert_string_equal(out_text, "7 passed, 0 failed\n");
    assert_int_equal(run("check scatter-nd-update --data-shape 5x3 --indices-shape 4x1 "
                         "--updates-shape 4x3 --index-type i32 --runs 9"), 0);
    assert_string_equal(out_text, "9 passed, 0 failed\n");
    assert_int_equal(run("check gather-elements --data-shape 3x4 --indices-shape 2x4 --axis 1"),
                     2);
    assert_int_equal(run("gather --data-shape 3x4 --indices-shape 2 --axis 1 --explain"), 0);
    assert_non_null(strstr(out_text, "Gather-8, axis 1, batch_dims 0, data f32 [3,4], indices "
                                     "i64 [2], index policy error\noutput shape: [3,2]\n"));
    assert_non_null(strstr(out_text, "cache key (the normalized signature"));
    assert_int_equal(run("scatter-nd-update --data-shape 4x2 --indices-shape 3x1 "
                         "--updates-shape 3x2 --dump-ir"), 0);
    assert_non_null(strstr(out_text, "define i32 @tj_scatter_nd_update(ptr %data") ||
                    strstr(out_text, "define i32 @tj_scatter_nd_update(i8* %data"));
    assert_non_null(strstr(out_text, "check.fail"));
    assert_int_equal(run("gather-elements --data-shape 3x4 --indices-shape 3x2 --axis 1 "
                         "--index-type i32 --dump-ir=opt"), 0);
    assert_non_null(strstr(out_text, "define i32 @tj_gather_elements("));
}

/* An IR fragment as OpenVINO writes these layers: Gather's axis is its
 * input port 2 (a Const the fragment does not carry: --axis gives it),
 * batch_dims a <data> attribute; GatherElements' axis an attribute;
 * ScatterNDUpdate's inputs data, indices, updates. */
/* Layers with reductions: read (reduction, use_init_val), listed, compiled
 * and checked against the reference kernel, the JIT in a JIT build. */
static void test_model_check_reduction_layers(void **state)
{
    (void)state;
    const char frag[] =
        "<layer id=\"1\" name=\"agg\" type=\"ScatterNDUpdate\" version=\"opset15\">"
        "<data reduction=\"sum\"/><input>"
        "<port precision=\"FP32\"><dim>50</dim><dim>8</dim></port>"
        "<port precision=\"I64\"><dim>300</dim><dim>1</dim></port>"
        "<port precision=\"FP32\"><dim>300</dim><dim>8</dim></port></input></layer>\n"
        "<layer id=\"2\" name=\"avg\" type=\"ScatterElementsUpdate\" version=\"opset12\">"
        "<data reduction=\"mean\" use_init_val=\"false\"/><input>"
        "<port precision=\"I32\"><dim>6</dim><dim>9</dim></port>"
        "<port precision=\"I32\"><dim>6</dim><dim>4</dim></port>"
        "<port precision=\"I32\"><dim>6</dim><dim>4</dim></port><port/></input></layer>\n"
        "<layer id=\"3\" name=\"odd\" type=\"ScatterElementsUpdate\" version=\"opset12\">"
        "<data reduction=\"median\"/><input><port><dim>2</dim></port><port><dim>2</dim></port>"
        "<port><dim>2</dim></port><port/></input></layer>\n";
    FILE *f = fopen(path("red.xml"), "w");
    fputs(frag, f);
    fclose(f);
    assert_int_equal(run("model @red.xml --check --axis 1"), 0);
    assert_non_null(strstr(out_text, ", reduction sum, index policy negative-wraps -> [50,8]"));
    assert_non_null(strstr(out_text, ", reduction mean (use_init_val false), index policy "
                                     "negative-wraps -> [6,9]"));
    assert_non_null(strstr(out_text, "skipped: reduction 'median' is not one of none, sum, sub, "
                                     "prod, min, max, mean"));
    assert_non_null(strstr(out_text, " checked ok), 1 skipped, 0 refused\n"));
    const char *table = strstr(out_text, "\nlayer ");
    assert_non_null(table);
    for (const char *row = strchr(table + 1, '\n'); row; row = strchr(row + 1, '\n')) {
        if (row[1] == '\0' || row[1] == '\n') /* the table ends at the summary's blank line */
            break;
#ifdef TJ_WITH_JIT
        assert_non_null(strstr(row, " jit"));
#endif
        assert_non_null(strstr(row, "ok (8 runs, bad index included)"));
    }
}

static void test_model_check_new_layers(void **state)
{
    (void)state;
    const char frag[] =
        "<layer id=\"3\" name=\"emb\" type=\"Gather\" version=\"opset8\">\n"
        "\t<data batch_dims=\"0\" />\n\t<input>\n"
        "\t\t<port id=\"0\" precision=\"FP32\"><dim>10</dim><dim>4</dim></port>\n"
        "\t\t<port id=\"1\" precision=\"I64\"><dim>2</dim><dim>3</dim></port>\n"
        "\t\t<port id=\"2\" precision=\"I64\"/>\n\t</input>\n"
        "\t<output><port id=\"3\" precision=\"FP32\"><dim>2</dim><dim>3</dim><dim>4</dim>"
        "</port></output>\n</layer>\n"
        "<layer id=\"4\" name=\"ge\" type=\"GatherElements\" version=\"opset6\">\n"
        "\t<data axis=\"1\" />\n\t<input>\n"
        "\t\t<port id=\"0\" precision=\"FP32\"><dim>3</dim><dim>5</dim></port>\n"
        "\t\t<port id=\"1\" precision=\"I32\"><dim>3</dim><dim>2</dim></port>\n\t</input>\n"
        "\t<output><port id=\"2\" precision=\"FP32\"><dim>3</dim><dim>2</dim></port></output>\n"
        "</layer>\n"
        "<layer id=\"5\" name=\"snd\" type=\"ScatterNDUpdate\" version=\"opset4\">\n\t<input>\n"
        "\t\t<port id=\"0\" precision=\"FP32\"><dim>4</dim><dim>6</dim></port>\n"
        "\t\t<port id=\"1\" precision=\"I64\"><dim>2</dim><dim>1</dim></port>\n"
        "\t\t<port id=\"2\" precision=\"FP32\"><dim>2</dim><dim>6</dim></port>\n\t</input>\n"
        "\t<output><port id=\"3\" precision=\"FP32\"><dim>4</dim><dim>6</dim></port></output>\n"
        "</layer>\n";
    FILE *f = fopen(path("frag3.xml"), "w");
    fputs(frag, f);
    fclose(f);
    assert_int_equal(run("model @frag3.xml --check"), 0);
    assert_non_null(strstr(out_text, "3 indexing layers (a fragment: no <net>)"));
    assert_non_null(strstr(out_text, "skipped: a fragment carries no constants: give the axis "
                                     "with --axis"));
    assert_int_equal(run("model @frag3.xml --check --axis 0"), 0);
    assert_string_equal(err_text, "");
    /* each listed with its signature and output shape, the op name apart
     * from the text after it (a 16-wide column once ran them together) */
    assert_non_null(strstr(out_text, " Gather-8 "));
    assert_non_null(strstr(out_text, "data f32 [10,4], indices i64 [2,3], axis 0, batch_dims 0, "
                                     "index policy negative-wraps-zero-fill -> [2,3,4]"));
    assert_non_null(strstr(out_text, " GatherElements-6 "));
    assert_non_null(strstr(out_text, "data f32 [3,5], indices i32 [3,2], axis 1 -> [3,2]"));
    assert_non_null(strstr(out_text, " ScatterNDUpdate-3 "));
    assert_non_null(strstr(out_text, "data f32 [4,6], indices i64 [2,1], updates [2,6] -> "
                                     "[4,6]"));
    assert_null(strstr(out_text, "GatherElements-6data"));
    assert_null(strstr(out_text, "ScatterNDUpdate-3data"));
    /* the table: every layer compiled and checked */
    const char *names[3] = {"\nemb ", "\nge ", "\nsnd "};
    const char *ops[3] = {"Gather-8 ", "GatherElements-6 ", "ScatterNDUpdate-3 "};
    const char *table = strstr(out_text, "\nlayer ");
    assert_non_null(table);
    for (int i = 0; i < 3; i++) {
        const char *row = strstr(table, names[i]);
        if (!row)
            fail_msg("no row for %s in:\n%s", names[i] + 1, out_text);
        const char *end = strchr(row + 1, '\n');
        size_t len = end ? (size_t)(end - row) : strlen(row);
        char line[512];
        snprintf(line, sizeof line, "%.*s", (int)len, row + 1);
        /* compiled: by the JIT, or by the reference kernel in a build without it */
        if (!strstr(line, ops[i]) || !(strstr(line, " jit") || strstr(line, " reference (")) ||
            !strstr(line, "ok (8 runs, bad index included)"))
            fail_msg("layer not compiled and checked: %s", line);
    }
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
    /* it leaves no scratch folder behind (it used to leave one a run); in a
     * TMPDIR of its own, so that another bench on the host cannot count */
    char tmp[] = "/tmp/tj-bench-tmpdir-XXXXXX";
    assert_non_null(mkdtemp(tmp));
    const char *old = getenv("TMPDIR");
    char *saved = old ? strdup(old) : NULL;
    setenv("TMPDIR", tmp, 1);
    size_t before = bench_folders();
    int rc = run("bench --workload G6 --json --no-compile --rounds 3");
    size_t after = bench_folders();
    if (saved)
        setenv("TMPDIR", saved, 1);
    else
        unsetenv("TMPDIR");
    free(saved);
    assert_int_equal(rmdir(tmp), 0); /* empty: nothing was left in it */
    assert_int_equal(rc, 0);
    assert_int_equal(after, before);
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

/* bench --threads: beside each count's kernel, a memcpy of the bytes the
 * workload moves (issue 20's memory-limit peer), split over the same
 * count's parts, in the same rounds. S1 copies data and scatters updates:
 * the peer's bytes are both, from the workloads page's shapes
 * ([100,256,10,15] and [100,16,8,10,15] f32). */
static void test_bench_threads_memcpy_peer(void **state)
{
    (void)state;
    const double bytes = (100.0 * 256 * 10 * 15 + 100.0 * 16 * 8 * 10 * 15) * 4;
    /* the CPUs the bench may run on: its (this process's) affinity mask */
    cpu_set_t mask;
    long cpus = sched_getaffinity(0, sizeof mask, &mask) == 0 ? CPU_COUNT(&mask)
                                                               : sysconf(_SC_NPROCESSORS_ONLN);
    assert_int_equal(run("bench --workload S1 --threads 1,2 --json --rounds 3"), 0);
    cJSON *j = cJSON_Parse(out_text);
    assert_non_null(j);
    int rows = 0;
    double first_ns = 0, first_memcpy = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, j)
    {
        if (strcmp(cJSON_GetObjectItemCaseSensitive(e, "impl")->valuestring, "jit") != 0)
            continue;
        int threads = cJSON_GetObjectItemCaseSensitive(e, "threads")->valueint;
        double ns = cJSON_GetObjectItemCaseSensitive(e, "ns")->valuedouble;
        const cJSON *mns = cJSON_GetObjectItemCaseSensitive(e, "memcpy_ns");
        const cJSON *mvs = cJSON_GetObjectItemCaseSensitive(e, "memcpy_vs_first");
        const cJSON *mb = cJSON_GetObjectItemCaseSensitive(e, "memcpy_bytes");
        const cJSON *mp = cJSON_GetObjectItemCaseSensitive(e, "memcpy_parts");
        assert_true(cJSON_IsNumber(mns) && mns->valuedouble > 0);
        assert_true(cJSON_IsNumber(mvs) && cJSON_IsNumber(mb) && cJSON_IsNumber(mp));
        assert_true(mb->valuedouble == bytes);
        /* every timed call ran in as many parts as the count, up to the CPUs */
        assert_int_equal(mp->valueint, threads < cpus ? threads : cpus);
        if (rows++ == 0)
            first_ns = ns, first_memcpy = mns->valuedouble;
        double vs = cJSON_GetObjectItemCaseSensitive(e, "vs_first")->valuedouble;
        assert_true(vs > ns / first_ns - 1e-3 && vs < ns / first_ns + 1e-3);
        assert_true(mvs->valuedouble > mns->valuedouble / first_memcpy - 1e-3 &&
                    mvs->valuedouble < mns->valuedouble / first_memcpy + 1e-3);
    }
    assert_int_equal(rows, 2);
    cJSON_Delete(j);
    /* the text rows say it too: "memcpy" beside each count after the first */
    assert_int_equal(run("bench --workload S1 --threads 1,2 --rounds 3"), 0);
    const char *row = strstr(out_text, "\nS1 ");
    assert_non_null(row);
    const char *x2 = strstr(row, " x2 ");
    assert_non_null(x2);
    assert_non_null(strstr(x2, "memcpy"));
}

/* A dynamic variant (SPEC section 6): its kernel is timed against the
 * fully static JIT kernel of the same shapes, says its engine, and a
 * second shape compiles nothing and gives the right output. G2d is small:
 * well under a second. */
static void test_bench_dynamic(void **state)
{
    (void)state;
    assert_int_equal(run("bench --workload G2d --json --no-compile --rounds 3"), 0);
    cJSON *j = cJSON_Parse(out_text);
    assert_non_null(j);
    int dynamic = 0, jit = 0, second = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, j)
    {
        const char *impl = cJSON_GetObjectItemCaseSensitive(e, "impl")->valuestring;
        assert_string_equal(cJSON_GetObjectItemCaseSensitive(e, "workload")->valuestring, "G2d");
        if (strcmp(impl, "dynamic-second-shape") == 0) {
            second++;
            assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "output_ok")));
            assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "back_ok")));
            assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(e, "recompiled")));
            assert_string_equal(cJSON_GetObjectItemCaseSensitive(e, "shape")->valuestring,
                                "indices 30x2x3x1 -> 30x2x2x1");
            continue;
        }
        const cJSON *vs_jit = cJSON_GetObjectItemCaseSensitive(e, "vs_jit");
        assert_true(cJSON_IsNumber(vs_jit) && vs_jit->valuedouble > 0);
        jit += strcmp(impl, "jit") == 0;
        if (strcmp(impl, "dynamic") == 0) {
            const char *engine = cJSON_GetObjectItemCaseSensitive(e, "engine")->valuestring;
            dynamic++;
            assert_true(strcmp(engine, "jit") == 0 || strcmp(engine, "reference") == 0);
            assert_int_equal(cJSON_GetObjectItemCaseSensitive(e, "dynamic")->valueint, 1);
        }
    }
    assert_int_equal(dynamic, 1);
    assert_int_equal(jit, 1); /* the fully static twin's kernel, G2's */
    assert_int_equal(second, 1);
    cJSON_Delete(j);
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
    /* a word too many is named, not answered "give stats or clear" */
    assert_int_equal(run("cache stats --json"), 2);
    assert_string_equal(err_text, "tensorjit: cache: unexpected argument '--json' after stats "
                                  "(give stats or clear, alone)\n");
    assert_int_equal(run("cache"), 2);
    assert_string_equal(err_text, "tensorjit: cache: give stats or clear\n");
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
    /* with the cache off, --precompile stores nothing: an error, not exit 0 */
    setenv("TENSORJIT_CACHE_DIR", "off", 1);
    int off = run("model @pre.xml --precompile");
    setenv("TENSORJIT_CACHE_DIR", path("cache"), 1);
    assert_int_equal(off, 2);
    assert_non_null(strstr(err_text, "model --precompile needs the disk cache, which is off"));
    /* an exit right after the cache was opened (LLVM still starting on the
     * warm-up thread) is an exit, not a crash in LLVM's destructors */
    for (int i = 0; i < 5; i++)
        assert_int_equal(run("gather-nd --bogus"), 2);
}

/* Without -o the result is printed: every element type the .npy reader
 * takes, in its own notation (values chosen by hand: the extremes of each
 * integer type; f16 normal, subnormal, infinite). */
static void test_prints_every_element_type(void **state)
{
    (void)state;
    int32_t gi[2] = {2, 0}, hi[4] = {2, 1, 3, 0};
    write_npy("gi.npy", "<i4", "(2, 1)", gi, sizeof gi);
    write_npy("hi.npy", "<i4", "(4, 1)", hi, sizeof hi);
    uint8_t b[3] = {1, 0, 0};
    int8_t i1[3] = {-3, 7, -128};
    uint8_t u1[3] = {200, 1, 255};
    int16_t i2[3] = {-300, 0, 32767};
    uint16_t u2[3] = {65535, 1, 2};
    uint32_t u4[3] = {4000000000u, 0, 7};
    int64_t i8[3] = {-9, 0, INT64_MIN};
    uint64_t u8[3] = {UINT64_MAX, 0, 5};
    double f8[3] = {0.25, 0, -1e300};
    uint16_t f2[4] = {0x3c00, 0x0001, 0xc100, 0x7c00}; /* 1, 2^-24, -2.5, inf */
    const struct {
        const char *descr;
        const void *v;
        size_t bytes;
        const char *want;
    } cases[] = {
        {"|b1", b, sizeof b, "[false, true]\n"},
        {"|i1", i1, sizeof i1, "[-128, -3]\n"},
        {"|u1", u1, sizeof u1, "[255, 200]\n"},
        {"<i2", i2, sizeof i2, "[32767, -300]\n"},
        {"<u2", u2, sizeof u2, "[2, 65535]\n"},
        {"<u4", u4, sizeof u4, "[7, 4000000000]\n"},
        {"<i8", i8, sizeof i8, "[-9223372036854775808, -9]\n"},
        {"<u8", u8, sizeof u8, "[5, 18446744073709551615]\n"},
        {"<f8", f8, sizeof f8, "[-1e+300, 0.25]\n"},
        /* the shortest text that reads back as the value: 16777215 was
         * printed as 1.67772e+07, like its neighbours */
        {"<f4", (const float[]){16777215.0f, 0.1f, 123456.79f}, 12, "[123456.79, 16777215]\n"},
        {"<f8", (const double[]){0.1, 0, 1.0 / 3}, 24, "[0.3333333333333333, 0.1]\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        write_npy("typed.npy", cases[i].descr, "(3,)", cases[i].v, cases[i].bytes);
        assert_int_equal(run("gather-nd --data @typed.npy --indices @gi.npy"), 0);
        if (strcmp(printed(), cases[i].want) != 0)
            fail_msg("%s printed %s, expected %s", cases[i].descr, out_text, cases[i].want);
    }
    write_npy("typed.npy", "<f2", "(4,)", f2, sizeof f2);
    assert_int_equal(run("gather-nd --data @typed.npy --indices @hi.npy"), 0);
    assert_string_equal(printed(), "[-2.5, 5.96046e-08, inf, 1]\n");
}

static void expect_ends_with(const char *text, const char *end)
{
    size_t n = strlen(text), m = strlen(end);
    if (n < m || strcmp(text + n - m, end) != 0)
        fail_msg("output ends \"%s\", expected \"%s\"", n > 40 ? text + n - 40 : text, end);
}

/* A printed result stops after 1000 elements with "...", and nothing after
 * it (it once went on with an empty ", " per element left). */
static void test_prints_at_most_1000_elements(void **state)
{
    (void)state;
    static int32_t v[1005], ix[1005];
    for (int i = 0; i < 1005; i++)
        v[i] = i, ix[i] = i;
    write_npy("long.npy", "<i4", "(1005,)", v, sizeof v);
    write_npy("longi.npy", "<i4", "(1005, 1)", ix, sizeof ix);
    assert_int_equal(run("gather-nd --data @long.npy --indices @longi.npy"), 0);
    expect_ends_with(out_text, ", 997, 998, 999, ...]\n");
    assert_int_equal(strncmp(printed(), "[0, 1, 2, ", 10), 0);
    /* two levels: the rows after the cut are not printed either */
    write_npy("longi2.npy", "<i4", "(335, 3, 1)", ix, 1005 * sizeof *ix);
    assert_int_equal(run("gather-nd --data @long.npy --indices @longi2.npy"), 0);
    expect_ends_with(out_text, " [996, 997, 998],\n [999, ...]]\n");
    assert_int_equal(run("gather-nd --data @long.npy --indices @longi.npy --batch-dims 99"), 2);
    assert_string_equal(err_text, "tensorjit: --batch-dims=99 is outside [-32, 32]\n");
}

/* --dynamic on the spec example: the static run's output and errors, the
 * verbose line naming the dynamic dims, and bad specs refused. */
static void test_dynamic_option(void **state)
{
    (void)state;
    const char *base = "gather-nd --data @data.npy --indices @idx.npy --batch-dims 2";
    char cmd[512];
    assert_int_equal(run(base), 0);
    char *want = strdup(out_text);
    snprintf(cmd, sizeof cmd, "%s --dynamic all --verbose", base);
    assert_int_equal(run(cmd), 0);
    assert_string_equal(out_text, want);
    free(want);
    assert_true(strncmp(err_text, "engine: ", 8) == 0);
    assert_non_null(strstr(err_text, "(dynamic data[0,1,2] indices[0,1,2,3]"));
    assert_int_equal(stderr_lines(), 1);
    /* the engine of the call: with the tuple length dynamic the family's
     * code is made for length 1, and a length-2 call runs the reference */
    float gd[36] = {0};
    int64_t gi[4] = {1, 2, 0, 1};
    write_npy("gd.npy", "<f4", "(3, 3, 4)", gd, sizeof gd);
    write_npy("gi1.npy", "<i8", "(4, 1)", gi, sizeof gi);
    write_npy("gi2.npy", "<i8", "(2, 2)", gi, sizeof gi);
    assert_int_equal(run("gather-nd --data @gd.npy --indices @gi1.npy --dynamic all --verbose "
                         "-o @gd1.npy"), 0);
    assert_true(strncmp(err_text, "engine: jit (dynamic ", 21) == 0);
    assert_int_equal(run("gather-nd --data @gd.npy --indices @gi2.npy --dynamic all --verbose "
                         "-o @gd2.npy"), 0);
    assert_true(strncmp(err_text, "engine: reference for this call (dynamic ", 41) == 0);
    assert_non_null(strstr(err_text, "the family's JIT code"));
    snprintf(cmd, sizeof cmd, "%s --dynamic indices:1,data:0 --verbose -o @dyn.npy", base);
    assert_int_equal(run(cmd), 0);
    assert_non_null(strstr(err_text, "(dynamic data[0] indices[1]; "));
    tj_npy a;
    read_out("dyn.npy", &a);
    assert_int_equal(a.shape.rank, 3);
    assert_int_equal(((int32_t *)a.data)[2], 11);
    tj_npy_free(&a);
    /* a bad index and a bad signature: the static run's lines */
    assert_int_equal(run("gather-nd --data @data.npy --indices @bad.npy --batch-dims 2 "
                         "--dynamic data:0 -o @never.npy"), 3);
    assert_string_equal(err_text, "tensorjit: indices[0,2,0] = [4] is out of range for data "
                                  "dimension 2 of size 4 (--index-policy clamp, zero-fill or "
                                  "negative-wraps-zero-fill take it)\n");
    assert_null(fopen(path("never.npy"), "rb"));
    assert_int_equal(run("gather-nd --data @data.npy --indices @idx.npy --batch-dims 3 "
                         "--dynamic all"), 2);
    assert_string_equal(err_text, "tensorjit: batch_dims=3 must be less than rank(data)=3\n");
    static const struct {
        const char *spec, *err;
    } bad[] = {
        {"data:3", "tensorjit: --dynamic: data:3 is out of range: data has rank 3\n"},
        {"indices:0,data:9", "tensorjit: --dynamic: data:9 is out of range: data has rank 3\n"},
        {"updates:0", "tensorjit: --dynamic=updates:0: 'updates' is no input of this op "
                      "(data, indices)\n"},
        {"weights:0", "tensorjit: --dynamic=weights:0: 'weights' is no input of this op "
                      "(data, indices)\n"},
        {"data", "tensorjit: --dynamic=data: 'data' is not all or INPUT:DIM (e.g. data:0)\n"},
        {"data:x", "tensorjit: --dynamic=data:x: the dim of 'data:x' must be an integer in "
                   "[0, 31]\n"},
        {"data:0,", "tensorjit: --dynamic=data:0,: '' is not all or INPUT:DIM (e.g. data:0)\n"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(cmd, sizeof cmd, "%s --dynamic %s", base, bad[i].spec);
        assert_int_equal(run(cmd), 2);
        assert_string_equal(err_text, bad[i].err);
    }
    assert_int_equal(run("scatter-update --data @sdata.npy --indices @sidx.npy --updates "
                         "@supd.npy --axis 1 --dynamic updates:0 -o @sdyn.npy"), 0);
    /* check on the .npy headers runs the family of their shapes */
    assert_int_equal(run("check gather-nd --data @data.npy --indices @idx.npy --batch-dims 2 "
                         "--dynamic data:0,indices:0 --runs 2"), 0);
    assert_non_null(strstr(out_text, "shape data [3,3,4], indices [3,3,1,1]: ok\n"));
    assert_non_null(strstr(out_text, " passed, 0 failed\n"));
    /* --explain and --dump-ir show the dynamic signature, once the concrete one is valid */
    snprintf(cmd, sizeof cmd, "%s --dynamic data:0,indices:1 --explain", base);
    assert_int_equal(run(cmd), 0);
    assert_non_null(strstr(out_text, "data i32 [?,3,4], indices i64 [2,?,1,1]"));
    assert_int_equal(run("gather-nd --data @data.npy --indices @idx.npy --batch-dims 3 "
                         "--dynamic all --explain"), 2);
    assert_string_equal(err_text, "tensorjit: batch_dims=3 must be less than rank(data)=3\n");
    assert_int_equal(run("gather-nd --data-shape 2x3 --indices-shape 1x1 --explain "
                         "--dynamic all"), 2);
    assert_string_equal(err_text, "tensorjit: gather-nd: --dynamic applies to .npy inputs; "
                                  "with shapes, write a dynamic dim as ? (--data-shape ?x64)\n");
}

/* ? and ?:N in the shape flags: --explain, --dump-ir and check take
 * dynamic signatures; check runs several shapes of the family. */
static void test_dynamic_shape_flags(void **state)
{
    (void)state;
    assert_int_equal(run("gather-nd --data-shape '?x64' --indices-shape '?:1000x1' --explain"), 0);
    /* the bound as given (it read [?,1], where the model listing says ?:1000) */
    assert_non_null(strstr(out_text, "data f32 [?,64], indices i64 [?:1000,1]"));
    assert_non_null(strstr(out_text, "output shape: [?,64]"));
    assert_int_equal(run("scatter-nd-update --data-shape 4x8 --indices-shape '?x2' "
                         "--updates-shape '?' --dump-ir"), 0);
    assert_non_null(strstr(out_text, "define"));
    assert_int_equal(run("check gather-nd --data-shape '?x64' --indices-shape '?x1' --runs 3"), 0);
    assert_non_null(strstr(out_text, "shape data [3,64], indices [3,1]: ok\n"));
    assert_non_null(strstr(out_text, "shape data [0,64], indices [0,1] (empty data): ok\n"));
    assert_non_null(strstr(out_text, " passed, 0 failed\n"));
    /* a family whose output rank varies (the tuple length is dynamic) */
    assert_int_equal(run("check gather-nd --data-shape '?x?x?' --indices-shape '?x?' --runs 3"),
                     0);
    assert_non_null(strstr(out_text, "shape data [2,2,2], indices [2,2]: ok\n"));
    assert_non_null(strstr(out_text, " passed, 0 failed\n"));
    /* an empty shape the all-zero candidate misses (the rules tie the tuple
     * length to 2): one made from a shape with elements, a dim at 0 */
    assert_int_equal(run("check scatter-nd-update --data-shape '?x?x?' --indices-shape '?x?' "
                         "--updates-shape '?x?' --reduction prod --dtype bf16 --runs 2"), 0);
    assert_non_null(strstr(out_text, " (empty "));
    assert_null(strstr(out_text, "none run"));
    /* a bound caps the shapes check picks */
    assert_int_equal(run("check gather --data-shape 10x4 --indices-shape '?:2x?' --axis 0 "
                         "--runs 2"), 0);
    assert_null(strstr(out_text, "indices [3,"));
    assert_non_null(strstr(out_text, "shape data [10,4], indices [2,2]: ok\n"));
    static const struct {
        const char *flags, *err;
    } bad[] = {
        {"--data-shape '?:0x64'", "tensorjit: --data-shape=?:0x64: dimension 0: the bound of ?:N "
                                "must be a positive integer\n"},
        {"--data-shape '2x?:'", "tensorjit: --data-shape=2x?:: dimension 1: the bound of ?:N "
                              "must be a positive integer\n"},
        {"--data-shape '?\?'", "tensorjit: --data-shape=??: expected dimensions like 2x3x4 or "
                            "?x64\n"},
        {"--data-shape 'x?'", "tensorjit: --data-shape=x?: dimension 0 is not a non-negative "
                            "integer, ? or ?:N\n"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char cmd[256];
        snprintf(cmd, sizeof cmd, "gather-nd %s --indices-shape 1x1 --explain", bad[i].flags);
        assert_int_equal(run(cmd), 2);
        assert_string_equal(err_text, bad[i].err);
    }
}

/* A PointPillars-like model with dynamic dims: listed with ?, compiled
 * into dynamic kernels, checked on several shapes, empty ones included. */
static void test_model_dynamic_layers(void **state)
{
    (void)state;
    const char xml[] =
        "<?xml version=\"1.0\"?>\n<net name=\"pillars\" version=\"11\"><layers>\n"
        "<layer id=\"2\" name=\"pillar_gather\" type=\"GatherND\" version=\"opset8\">"
        "<data batch_dims=\"0\"/><input><port id=\"0\" precision=\"FP32\"><dim>-1</dim>"
        "<dim>64</dim></port><port id=\"1\" precision=\"I64\"><dim>-1</dim><dim>1</dim></port>"
        "</input><output><port id=\"2\" precision=\"FP32\"><dim>-1</dim><dim>64</dim></port>"
        "</output></layer>\n"
        "<layer id=\"6\" name=\"scatter_canvas\" type=\"ScatterNDUpdate\" version=\"opset3\">"
        "<input><port id=\"0\" precision=\"FP32\"><dim>4</dim><dim>8</dim></port>"
        "<port id=\"1\" precision=\"I32\"><dim>1..100</dim><dim>2</dim></port>"
        "<port id=\"2\" precision=\"FP32\"><dim>?</dim></port></input></layer>\n"
        "<layer id=\"9\" name=\"axis\" type=\"Const\" version=\"opset1\">"
        "<data element_type=\"i64\" shape=\"\" offset=\"0\" size=\"8\"/>"
        "<output><port id=\"0\" precision=\"I64\"/></output></layer>\n"
        "<layer id=\"10\" name=\"embed_lookup\" type=\"Gather\" version=\"opset8\">"
        "<data batch_dims=\"0\"/><input><port id=\"0\" precision=\"FP32\"><dim>50</dim>"
        "<dim>16</dim></port><port id=\"1\" precision=\"I64\"><dim>-1</dim><dim>..128</dim>"
        "</port><port id=\"2\" precision=\"I64\"/></input></layer>\n"
        "</layers><edges><edge from-layer=\"9\" from-port=\"0\" to-layer=\"10\" to-port=\"2\"/>"
        "</edges></net>\n";
    FILE *f = fopen(path("pillars.xml"), "w");
    fputs(xml, f);
    fclose(f);
    int64_t axis = 0;
    f = fopen(path("pillars.bin"), "wb");
    fwrite(&axis, sizeof axis, 1, f);
    fclose(f);
    assert_int_equal(run("model @pillars.xml --check"), 0);
    assert_non_null(strstr(out_text, "3 indexing layers"));
    assert_non_null(strstr(out_text, "data f32 [?,64], indices i64 [?,1], batch_dims 0 -> [?,64] "
                                     "(dynamic: one kernel for every shape)"));
    assert_non_null(strstr(out_text, "data f32 [4,8], indices i32 [?:100,2], updates [?] -> "
                                     "[4,8] (dynamic"));
    assert_non_null(strstr(out_text, "indices i64 [?,?:128], axis 0"));
    assert_null(strstr(out_text, "skipped:"));
    assert_null(strstr(out_text, "FAILED"));
    expect_ends_with(out_text, "\n3 compiled (3 checked ok), 0 skipped, 0 refused\n");
    int listed = 0, jitted = 0;
    for (const char *p = out_text; (p = strstr(p, "(dynamic: one kernel")) != NULL; p++)
        listed++;
    for (const char *p = out_text; (p = strstr(p, " jit dynamic ")) != NULL; p++)
        jitted++;
    assert_int_equal(listed, 3);
    assert_int_equal(jitted, 3); /* the JIT serves each layer's family */
    assert_non_null(strstr(out_text, "    shape data [0,64], indices [0,1] (empty data): ok\n"));
    assert_non_null(strstr(out_text, "    shape data [4,8], indices [3,2], updates [3]: ok\n"));
    assert_non_null(strstr(out_text, "    shape data [50,16], indices [2,2]: ok\n"));
    assert_null(strstr(out_text, "no empty shape"));
}

/* --- the conformance vectors through --dynamic (SPEC section 6) ------- */

/* One .npy of a vector's input: its values, or zeros when the vector has
 * none (an invalid signature is refused before they matter). 0, or -1
 * when the type has no .npy form (bf16). Written with the tool's own
 * writer: here the reader is not under test, the dynamic path is. */
static int write_input(const cJSON *c, const char *field, const char *shape_field, jit_dtype t,
                       const char *name)
{
    jit_shape shape = support_shape(cJSON_GetObjectItemCaseSensitive(c, shape_field));
    int64_t n = 1, count = -1;
    for (int i = 0; i < shape.rank; i++)
        n *= shape.dims[i];
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, field);
    int size = jit_dtype_size(t) ? jit_dtype_size(t) : 1;
    void *vals = cJSON_IsArray(v) ? support_values(v, t, &count, 0) : NULL;
    if (!vals || count != n) {
        free(vals);
        vals = calloc((size_t)(n > 0 ? n : 1), (size_t)size);
    }
    char err[256];
    int rc = tj_npy_write(path(name), t, &shape, vals, err, sizeof err);
    free(vals);
    return rc;
}

/* Whether the CLI can state the vector: an axis it can take as a number
 * (a known value in a scalar or [1] i64 tensor) and .npy-able types. */
static int expressible(const cJSON *c, const jit_sig *s)
{
    const cJSON *axis = cJSON_GetObjectItemCaseSensitive(c, "axis");
    jit_op_info info;
    if (s->op == JIT_OP_NONE || jit_op_describe(s->op, &info) != 0)
        return 0;
    if ((info.attrs & JIT_ATTR_AXIS) && !cJSON_IsNumber(axis))
        return 0;
    if ((info.attrs & JIT_ATTR_AXIS_TENSOR) &&
        ((s->axis_type != JIT_DTYPE_UNSET && s->axis_type != JIT_I64) ||
         s->axis_shape.rank > 1 || (s->axis_shape.rank == 1 && s->axis_shape.dims[0] != 1)))
        return 0;
    return s->reduction != JIT_REDUCTION_COUNT;
}

/* The command line of a vector, its inputs written as cd/ci/cu.npy;
 * 0, or -1 when it cannot be stated. */
static int vector_args(const cJSON *c, char *args, size_t len)
{
    jit_sig s = support_sig(c);
    jit_op_info info;
    if (!expressible(c, &s) || jit_op_describe(s.op, &info) != 0)
        return -1;
    jit_dtype ut = s.updates_dtype != JIT_DTYPE_UNSET ? s.updates_dtype : s.dtype;
    if (write_input(c, "data", "data_shape", s.dtype, "cd.npy") ||
        write_input(c, "indices", "indices_shape", s.index_type, "ci.npy") ||
        (info.has_updates && write_input(c, "updates", "updates_shape", ut, "cu.npy")))
        return -1;
    size_t n = (size_t)snprintf(args, len, "%s --data @cd.npy --indices @ci.npy%s --index-policy %s",
                                info.command, info.has_updates ? " --updates @cu.npy" : "",
                                jit_index_policy_name(s.index_policy));
    if (info.attrs & JIT_ATTR_AXIS)
        n += (size_t)snprintf(args + n, len - n, " --axis %lld", (long long)s.axis);
    if (info.attrs & JIT_ATTR_BATCH_DIMS)
        n += (size_t)snprintf(args + n, len - n, " --batch-dims %d", s.batch_dims);
    if (info.opsets[1] && s.opset)
        n += (size_t)snprintf(args + n, len - n, " --opset %d", s.opset);
    if ((info.attrs & JIT_ATTR_REDUCTION) && s.reduction != JIT_REDUCTION_NONE)
        n += (size_t)snprintf(args + n, len - n, " --reduction %s",
                              jit_reduction_name(s.reduction));
    if ((info.attrs & JIT_ATTR_INIT_VAL) && s.no_init_val)
        snprintf(args + n, len - n, " --no-init-val");
    return 0;
}

/* The same vector with a --dynamic spec: stdout, exit status and stderr
 * must be the static run's. */
static void expect_same_as_static(const char *args, const char *spec, int want_rc,
                                  const char *want_out, const char *want_err)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s --dynamic %s", args, spec);
    int rc = run(cmd);
    if (rc != want_rc || strcmp(out_text, want_out) != 0 || strcmp(err_text, want_err) != 0)
        fail_msg("%s: exit %d, stdout '%.200s', stderr '%.300s'; static run: exit %d, stdout "
                 "'%.200s', stderr '%.300s'",
                 cmd, rc, out_text, err_text, want_rc, want_out, want_err);
}

/* "data:0,indices:0" without an input of rank 0; "" when both are. */
static void first_dims_spec(const cJSON *c, char *spec, size_t len)
{
    jit_sig s = support_sig(c);
    snprintf(spec, len, "%s%s%s", s.data_shape.rank ? "data:0" : "",
             s.data_shape.rank && s.indices_shape.rank ? "," : "",
             s.indices_shape.rank ? "indices:0" : "");
}

/* Every stride-th vector of every file (TJ_CLI_DYNAMIC_STRIDE, default 3;
 * 1 runs them all), valid and invalid, static and through --dynamic all
 * and --dynamic data:0,indices:0. */
static void test_dynamic_conformance(void **state)
{
    (void)state;
    static const char *const files[] = {
        "gather_nd.json",         "scatter_update.json",          "gather.json",
        "gather_elements.json",   "scatter_nd_update.json",       "scatter_elements_update.json",
        "invalid.json",           "invalid_family.json"};
    long stride = support_env_long("TJ_CLI_DYNAMIC_STRIDE", 3);
    int exits[4] = {0}, ran = 0;
    for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
        cJSON *cases = support_load_cases(files[f]);
        int i = 0;
        const cJSON *c;
        cJSON_ArrayForEach(c, cases)
        {
            char args[1024], spec[64];
            if (i++ % stride != 0 || vector_args(c, args, sizeof args) != 0)
                continue;
            int rc = run(args);
            char *out = strdup(out_text), *err = strdup(err_text);
            expect_same_as_static(args, "all", rc, out, err);
            first_dims_spec(c, spec, sizeof spec);
            if (spec[0])
                expect_same_as_static(args, spec, rc, out, err);
            if (rc >= 0 && rc < 4)
                exits[rc]++;
            ran++;
            free(out);
            free(err);
        }
        cJSON_Delete(cases);
    }
    printf("dynamic conformance: %d vectors, exits 0: %d, 2: %d, 3: %d\n", ran, exits[0],
           exits[2], exits[3]);
    assert_true(exits[0] > 0 && exits[2] > 0 && exits[3] > 0);
}

/* --- the model reader's refusals (issue 19) ------------------------- */

static void write_text(const char *name, const char *text)
{
    FILE *f = fopen(path(name), "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* The listing line of the layer named `name` (the first line that starts
 * with two spaces and the name), into buf. */
static const char *listed_line(const char *name, char *buf, size_t len)
{
    char key[160];
    snprintf(key, sizeof key, "\n  %s ", name);
    const char *at = strstr(out_text, key);
    if (!at)
        fail_msg("no listing line for %s in:\n%s", name, out_text);
    const char *end = strchr(at + 1, '\n');
    snprintf(buf, len, "%.*s", (int)(end ? end - at - 1 : (ptrdiff_t)strlen(at + 1)), at + 1);
    return buf;
}

/* A GatherND-8 whose batch_dims no int holds: once narrowed to 1 and
 * compiled, the check passing; now refused with the attribute and its
 * value on the layer's line, and the command fails. */
static void test_model_refuses_attribute_out_of_range(void **state)
{
    (void)state;
    write_text("wrapped.xml",
               "<?xml version=\"1.0\"?>\n<net name=\"m\" version=\"11\"><layers>\n"
               "<layer id=\"2\" name=\"wrapped_gather\" type=\"GatherND\" version=\"opset8\">"
               "<data batch_dims=\"4294967297\"/><input><port id=\"0\" precision=\"FP32\">"
               "<dim>4</dim><dim>3</dim><dim>5</dim></port><port id=\"1\" precision=\"I64\">"
               "<dim>4</dim><dim>2</dim><dim>1</dim></port></input><output><port id=\"2\" "
               "precision=\"FP32\"><dim>4</dim><dim>2</dim><dim>5</dim></port></output>"
               "</layer>\n</layers><edges/></net>\n");
    assert_int_equal(run("model @wrapped.xml --check"), 1);
    char line[512];
    listed_line("wrapped_gather", line, sizeof line);
    if (!strstr(line, "refused: batch_dims '4294967297' is not in [-32, 32]"))
        fail_msg("not refused with the attribute and its value: %s", line);
    assert_null(strstr(out_text, "ok ("));
}

/* Two Gather-1 layers of a text detector whose .bin's axis Const reads 0:
 * "pick" declares the output of axis 1, "rows" that of axis 0. "pick" was
 * compiled with a note and --check passed (the JIT and the reference
 * share the signature); now it is refused with both shapes and the command
 * fails, while "rows" is still compiled and checked. */
static void test_model_refuses_contradicted_output(void **state)
{
    (void)state;
    static const char layer[] =
        "<layer id=\"%d\" name=\"%s\" type=\"Gather\" version=\"opset1\"><input>"
        "<port id=\"0\" precision=\"FP32\"><dim>2</dim><dim>64</dim><dim>8</dim></port>"
        "<port id=\"1\" precision=\"I64\"><dim>10</dim></port><port id=\"2\"/></input>"
        "<output><port id=\"3\" precision=\"FP32\">%s</port></output></layer>\n";
    char xml[4096], pick[1024], rows[1024];
    snprintf(pick, sizeof pick, layer, 3, "pick", "<dim>2</dim><dim>10</dim><dim>8</dim>");
    snprintf(rows, sizeof rows, layer, 4, "rows", "<dim>10</dim><dim>64</dim><dim>8</dim>");
    snprintf(xml, sizeof xml,
             "<?xml version=\"1.0\"?>\n<net name=\"det\" version=\"10\"><layers>\n"
             "<layer id=\"2\" name=\"axis\" type=\"Const\" version=\"opset1\">"
             "<data element_type=\"i64\" shape=\"\" offset=\"0\" size=\"8\"/><output>"
             "<port id=\"0\" precision=\"I64\"/></output></layer>\n%s%s</layers><edges>"
             "<edge from-layer=\"2\" from-port=\"0\" to-layer=\"3\" to-port=\"2\"/>"
             "<edge from-layer=\"2\" from-port=\"0\" to-layer=\"4\" to-port=\"2\"/>"
             "</edges></net>\n",
             pick, rows);
    write_text("det.xml", xml);
    int64_t axis = 0;
    FILE *f = fopen(path("det.bin"), "wb");
    fwrite(&axis, sizeof axis, 1, f);
    fclose(f);
    assert_int_equal(run("model @det.xml --check"), 1);
    char line[512];
    listed_line("pick", line, sizeof line);
    if (!strstr(line, "refused: the output shape of its inputs and attributes [10,64,8] "
                      "contradicts the IR's output port [2,10,8]"))
        fail_msg("not refused with both shapes: %s", line);
    listed_line("rows", line, sizeof line);
    if (!strstr(line, "axis 0, ") || !strstr(line, " -> [10,64,8]") || strstr(line, "refused"))
        fail_msg("not listed with its output: %s", line);
    const char *table = strstr(out_text, "\nlayer ");
    assert_non_null(table);
    assert_null(strstr(table, "\npick "));
    const char *row = strstr(table, "\nrows ");
    assert_non_null(row);
    assert_non_null(strstr(row, "ok (8 runs, bad index included)"));
    assert_string_equal(err_text, "");
}

/* A preprocessing Loop whose body gathers boxes and runs an If whose
 * then_body holds a GatherND: both listed under their bodies' names,
 * compiled and checked like any layer (a real EfficientDet's 9 such
 * layers were never listed). */
static void test_model_lists_body_layers(void **state)
{
    (void)state;
    write_text("loop.xml",
               "<?xml version=\"1.0\"?>\n<net name=\"effdet\" version=\"11\"><layers>\n"
               "<layer id=\"0\" name=\"boxes\" type=\"Parameter\" version=\"opset1\">"
               "<data shape=\"5,4\" element_type=\"f32\"/><output><port id=\"0\" "
               "precision=\"FP32\"><dim>5</dim><dim>4</dim></port></output></layer>\n"
               "<layer id=\"1\" name=\"pre\" type=\"Loop\" version=\"opset5\">"
               "<input><port id=\"0\" precision=\"I64\"/><port id=\"1\" precision=\"BOOL\"/>"
               "<port id=\"2\" precision=\"FP32\"><dim>5</dim><dim>4</dim></port></input>"
               "<output><port id=\"3\" precision=\"FP32\"><dim>3</dim><dim>4</dim></port></output>"
               "<port_map><input external_port_id=\"2\" internal_layer_id=\"0\"/>"
               "<output external_port_id=\"3\" internal_layer_id=\"5\"/></port_map>"
               "<back_edges/><body><layers>\n"
               " <layer id=\"0\" name=\"in\" type=\"Parameter\" version=\"opset1\">"
               "<data shape=\"5,4\" element_type=\"f32\"/><output><port id=\"0\" "
               "precision=\"FP32\"><dim>5</dim><dim>4</dim></port></output></layer>\n"
               " <layer id=\"1\" name=\"axis\" type=\"Const\" version=\"opset1\">"
               "<data element_type=\"i64\" shape=\"\" offset=\"0\" size=\"8\"/><output>"
               "<port id=\"0\" precision=\"I64\"/></output></layer>\n"
               " <layer id=\"2\" name=\"pick\" type=\"Gather\" version=\"opset8\">"
               "<data batch_dims=\"0\"/><input><port id=\"0\" precision=\"FP32\"><dim>5</dim>"
               "<dim>4</dim></port><port id=\"1\" precision=\"I64\"><dim>3</dim></port>"
               "<port id=\"2\" precision=\"I64\"/></input><output><port id=\"3\" "
               "precision=\"FP32\"><dim>3</dim><dim>4</dim></port></output></layer>\n"
               " <layer id=\"3\" name=\"choose\" type=\"If\" version=\"opset8\">"
               "<input><port id=\"0\" precision=\"BOOL\"/></input><then_port_map/>"
               "<else_port_map/><then_body><layers>"
               "<layer id=\"2\" name=\"nd\" type=\"GatherND\" version=\"opset8\"><input>"
               "<port id=\"0\" precision=\"FP32\"><dim>3</dim><dim>4</dim></port>"
               "<port id=\"1\" precision=\"I32\"><dim>2</dim><dim>1</dim></port></input>"
               "<output><port id=\"2\" precision=\"FP32\"><dim>2</dim><dim>4</dim></port>"
               "</output></layer></layers><edges/></then_body><else_body><layers/><edges/>"
               "</else_body></layer>\n"
               "</layers><edges>"
               "<edge from-layer=\"0\" from-port=\"0\" to-layer=\"2\" to-port=\"0\"/>"
               "<edge from-layer=\"1\" from-port=\"0\" to-layer=\"2\" to-port=\"2\"/>"
               "</edges></body></layer>\n"
               "</layers><edges>"
               "<edge from-layer=\"0\" from-port=\"0\" to-layer=\"1\" to-port=\"2\"/>"
               "</edges></net>\n");
    int64_t axis = 0;
    FILE *f = fopen(path("loop.bin"), "wb");
    fwrite(&axis, sizeof axis, 1, f);
    fclose(f);
    assert_int_equal(run("model @loop.xml --check"), 0);
    assert_non_null(strstr(out_text, "loop.xml: 2 indexing layers\n"));
    char line[512];
    listed_line("pre/body/pick", line, sizeof line);
    if (!strstr(line, " Gather-8 ") || !strstr(line, "axis 0, ") || !strstr(line, "-> [3,4]"))
        fail_msg("body layer not read: %s", line);
    listed_line("pre/body/choose/then_body/nd", line, sizeof line);
    if (!strstr(line, " GatherND-8 ") || !strstr(line, "-> [2,4]"))
        fail_msg("nested body layer not read: %s", line);
    const char *table = strstr(out_text, "\nlayer ");
    assert_non_null(table);
    const char *rows[2] = {"\npre/body/pick ", "\npre/body/choose/then_body/nd "};
    for (int i = 0; i < 2; i++) {
        const char *row = strstr(table, rows[i]);
        if (!row)
            fail_msg("no row for %s in:\n%s", rows[i] + 1, out_text);
        const char *end = strchr(row + 1, '\n');
        snprintf(line, sizeof line, "%.*s", (int)(end - row - 1), row + 1);
        if (!strstr(line, "ok (8 runs, bad index included)"))
            fail_msg("not checked: %s", line);
    }
}

/* Runs `tensorjit ARGS` as run() does, its output files capped at 1 MiB
 * (RLIMIT_FSIZE, inherited): a command that prints without end is killed
 * by SIGXFSZ (exit -1 here) instead of filling the disk. */
static int run_capped(const char *args)
{
    struct rlimit old, cap;
    getrlimit(RLIMIT_FSIZE, &old);
    cap = old;
    cap.rlim_cur = 1 << 20;
    if (old.rlim_cur != RLIM_INFINITY && old.rlim_cur < cap.rlim_cur)
        cap.rlim_cur = old.rlim_cur;
    setrlimit(RLIMIT_FSIZE, &cap);
    int rc = run(args);
    setrlimit(RLIMIT_FSIZE, &old);
    return rc;
}

/* An empty result prints as [] with its shape, however large its other
 * dims: a [2^60, 0] output once printed "[]," lines without end, since the
 * print's cap counted elements and an empty tensor has none. */
static void test_prints_empty_tensor_compactly(void **state)
{
    (void)state;
    const int64_t huge = INT64_C(1) << 60;
    char shape[64], want[128];
    int64_t one = 1;
    snprintf(shape, sizeof shape, "(%lld, 0, 3)", (long long)huge);
    write_npy("empty.npy", "<f4", shape, "", 0);
    write_npy("scalar1.npy", "<i8", "()", &one, sizeof one);
    write_npy("empty_upd.npy", "<f4", "(0, 3)", "", 0);
    /* Gather on axis 2 with a scalar index: output [2^60, 0] */
    assert_int_equal(run_capped("gather --data @empty.npy --indices @scalar1.npy --axis 2"), 0);
    snprintf(want, sizeof want, "[] (shape [%lld,0])\n", (long long)huge);
    assert_string_equal(printed(), want);
    /* ScatterUpdate returns data's shape [2^60, 0, 3]: the same */
    assert_int_equal(run_capped("scatter-update --data @empty.npy --indices @scalar1.npy "
                                "--updates @empty_upd.npy --axis 0"), 0);
    snprintf(want, sizeof want, "[] (shape [%lld,0,3])\n", (long long)huge);
    assert_string_equal(printed(), want);
    /* a small empty one too (one rule for all), and rank 1, whose [] says it all */
    write_npy("small_empty.npy", "<f4", "(2, 0, 3)", "", 0);
    assert_int_equal(run_capped("gather --data @small_empty.npy --indices @scalar1.npy "
                                "--axis 2"), 0);
    assert_string_equal(printed(), "[] (shape [2,0])\n");
    write_npy("empty_row.npy", "<f4", "(0,)", "", 0);
    write_npy("empty_idx.npy", "<i8", "(0,)", "", 0);
    assert_int_equal(run_capped("gather --data @data.npy --indices @empty_idx.npy --axis 0"), 0);
    assert_string_equal(printed(), "[] (shape [0,3,4])\n");
    assert_int_equal(run_capped("gather --data @empty_row.npy --indices @empty_idx.npy "
                                "--axis 0"), 0);
    assert_string_equal(printed(), "[]\n");
}

/* check skips a signature whose buffers exceed its budget, however far:
 * a total past int64 once wrapped negative, passed the budget test, and
 * was reported as a failed run ("out of memory for -69... bytes"), where
 * the same signature at half the size was skipped. */
static void test_check_skips_buffers_past_int64(void **state)
{
    (void)state;
    /* data [2^58, 1] f32 and an output twice that: 2^62 bytes in all */
    assert_int_equal(run("check gather --data-shape 288230376151711744x1 --indices-shape 2 "
                         "--axis 1 --runs 1"), 2);
    assert_non_null(strstr(err_text, "check gather: skipped: "));
    /* twice the size: the buffers total more than int64 holds */
    assert_int_equal(run("check gather --data-shape 576460752303423488x1 --indices-shape 2 "
                         "--axis 1 --runs 1"), 2);
    assert_non_null(strstr(err_text, "check gather: skipped: "));
    assert_null(strstr(err_text, "out of memory"));
    assert_int_equal(stderr_lines(), 1);
    /* the two outputs alone past int64 (2 x 2^62 bytes), the inputs small */
    assert_int_equal(run("check gather --data-shape 1x1073741824 --dtype u8 --indices-shape "
                         "4294967296 --axis 0 --runs 1"), 2);
    assert_non_null(strstr(err_text, "check gather: skipped: "));
    assert_null(strstr(err_text, "out of memory"));
}

/* The row of layer `name` in the table that follows the listing, into
 * line; fails the test when there is none. */
static void table_row(const char *name, char *line, size_t len)
{
    char start[160];
    const char *table = strstr(out_text, "\nlayer ");
    snprintf(start, sizeof start, "\n%s ", name);
    const char *row = table ? strstr(table, start) : NULL;
    if (!row)
        fail_msg("no row for layer %s:\n%s", name, out_text);
    snprintf(line, len, "%.*s", (int)strcspn(row + 1, "\n"), row + 1);
}

/* Layers of the same signature share one cached kernel: the table gives
 * its compile time once, and "= id N" (the first such layer) in the rows
 * of the others, rather than the same time again as if compiled again. */
static void test_model_marks_shared_kernels(void **state)
{
    (void)state;
    const char port[] = "<input><port precision=\"FP32\"><dim>4</dim><dim>3</dim></port>"
                        "<port precision=\"I64\"><dim>2</dim><dim>1</dim></port></input>";
    char frag[2048], line[512];
    snprintf(frag, sizeof frag,
             "<layer id=\"11\" name=\"first\" type=\"GatherND\" version=\"opset8\">%s</layer>\n"
             "<layer id=\"12\" name=\"other\" type=\"GatherND\" version=\"opset8\">"
             "<input><port precision=\"FP32\"><dim>5</dim><dim>3</dim></port>"
             "<port precision=\"I64\"><dim>2</dim><dim>1</dim></port></input></layer>\n"
             "<layer id=\"13\" name=\"again\" type=\"GatherND\" version=\"opset8\">%s</layer>\n"
             "<layer id=\"14\" name=\"thrice\" type=\"GatherND\" version=\"opset8\">%s</layer>\n",
             port, port, port);
    FILE *f = fopen(path("shared.xml"), "w");
    fputs(frag, f);
    fclose(f);
    assert_int_equal(run("model @shared.xml --jobs 2"), 0);
    static const struct {
        const char *name, *same_as; /* NULL: a kernel of its own */
    } rows[] = {{"first", NULL}, {"other", NULL}, {"again", "11"}, {"thrice", "11"}};
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        char mark[32];
        table_row(rows[i].name, line, sizeof line);
        snprintf(mark, sizeof mark, " = id %s ", rows[i].same_as ? rows[i].same_as : "");
        if (rows[i].same_as ? !strstr(line, mark) : strstr(line, " = id ") != NULL)
            fail_msg("row of %s: '%s'", rows[i].name, line);
    }
#ifdef TJ_WITH_JIT
    /* --precompile counts kernels, not layers: 2, not 4 */
    assert_int_equal(run("cache clear"), 0);
    assert_int_equal(run("model @shared.xml --precompile"), 0);
    if (!strstr(out_text, "precompiled: 2 kernels in ") ||
        !strstr(out_text, "(2 compiled now, 0 already there)"))
        fail_msg("%s", out_text);
#endif
    /* layers without an id: the second row names the first */
    snprintf(frag, sizeof frag, "<layer type=\"GatherND\" version=\"opset8\">%s</layer>\n"
             "<layer type=\"GatherND\" version=\"opset8\">%s</layer>\n", port, port);
    f = fopen(path("shared_noid.xml"), "w");
    fputs(frag, f);
    fclose(f);
    assert_int_equal(run("model @shared_noid.xml"), 0);
    table_row("GatherND#1", line, sizeof line);
    assert_null(strstr(line, " = "));
    table_row("GatherND#2", line, sizeof line);
    assert_non_null(strstr(line, " = GatherND#1 (line 1) "));
}

/* ---- issue 22: the CLI's habits ---------------------------------------- */

/* A valid small signature of each op, as flags and as a jit_sig: test
 * data, so that an op added to the table without one fails here. */
typedef struct op_case {
    jit_op op;
    const char *data, *indices, *updates; /* "2x3"; updates NULL: none (a bag's: its table,
                                             indices and offsets or segment ids) */
    int64_t axis;                         /* taken where the op has JIT_ATTR_AXIS */
    int64_t num_segments;                 /* where it has JIT_ATTR_NUM_SEGMENTS */
} op_case;

static const op_case op_cases[] = {
    {JIT_OP_GATHER_ND, "2x3", "2x1", NULL, 0, 0},
    {JIT_OP_SCATTER_UPDATE, "2x3", "2", "2x3", 0, 0},
    {JIT_OP_GATHER, "2x3", "2x1", NULL, 1, 0},
    {JIT_OP_SCATTER_ND_UPDATE, "2x3", "2x1", "2x3", 0, 0},
    {JIT_OP_GATHER_ELEMENTS, "2x3", "2x3", NULL, 1, 0},
    {JIT_OP_SCATTER_ELEMENTS_UPDATE, "2x3", "2x3", "2x3", 1, 0},
    {JIT_OP_EMBEDDING_BAG_OFFSETS, "4x3", "5", "2", 0, 0},
    {JIT_OP_EMBEDDING_BAG_PACKED, "4x3", "2x2", NULL, 0, 0},
    {JIT_OP_EMBEDDING_SEGMENTS, "4x3", "5", "5", 0, 3},
};

static const op_case *op_case_of(jit_op op)
{
    for (size_t i = 0; i < sizeof op_cases / sizeof *op_cases; i++)
        if (op_cases[i].op == op)
            return &op_cases[i];
    fail_msg("no test signature for op %d: add one to op_cases", (int)op);
    return NULL;
}

static jit_shape shape_of(const char *text)
{
    jit_shape s = {0};
    for (const char *p = text; p && *p; s.rank++) {
        char *end;
        s.dims[s.rank] = strtoll(p, &end, 10);
        p = *end == 'x' ? end + 1 : NULL;
    }
    return s;
}

/* "OP --data-shape .. --indices-shape .. [--updates-shape ..] [--axis A]"; a
 * bag's: "--table-shape .. --indices-shape .. [--offsets-shape ..]
 * [--segment-ids-shape .. --num-segments S]" */
static void op_case_args(const jit_op_info *info, const op_case *c, char *buf, size_t len)
{
    int bag = (info->attrs & JIT_ATTR_BAG) != 0, seg = (info->attrs & JIT_ATTR_NUM_SEGMENTS) != 0;
    int n = snprintf(buf, len, "%s --%s-shape %s --indices-shape %s", info->command,
                     bag ? "table" : "data", c->data, c->indices);
    if (c->updates)
        n += snprintf(buf + n, len - (size_t)n, " --%s-shape %s",
                      !bag ? "updates" : seg ? "segment-ids" : "offsets", c->updates);
    if (seg)
        n += snprintf(buf + n, len - (size_t)n, " --num-segments %lld",
                      (long long)c->num_segments);
    if (info->attrs & JIT_ATTR_AXIS)
        snprintf(buf + n, len - (size_t)n, " --axis %lld", (long long)c->axis);
}

static jit_sig op_case_sig(const jit_op_info *info, const op_case *c)
{
    jit_sig s = {.op = info->op, .dtype = JIT_F32, .index_type = JIT_I64,
                 .data_shape = shape_of(c->data), .indices_shape = shape_of(c->indices)};
    if (c->updates)
        s.updates_shape = shape_of(c->updates);
    if (info->attrs & JIT_ATTR_AXIS)
        s.axis = c->axis;
    s.num_segments = c->num_segments;
    return s;
}

static int newest_opset(const jit_op_info *info)
{
    int v = 0;
    for (int i = 0; i < 4 && info->opsets[i]; i++)
        v = info->opsets[i] > v ? info->opsets[i] : v;
    return v;
}

/* Every op command runs its newest version unless --opset says otherwise,
 * and scatter-nd-update --reduction sum needs no --opset. */
static void test_newest_opset_by_default(void **state)
{
    (void)state;
    for (int op = JIT_OP_NONE + 1; op < JIT_OP_COUNT; op++) {
        jit_op_info info;
        char args[512], want[64];
        assert_int_equal(jit_op_describe((jit_op)op, &info), 0);
        op_case_args(&info, op_case_of((jit_op)op), args, sizeof args - 20);
        strcat(args, " --explain");
        assert_int_equal(run(args), 0);
        snprintf(want, sizeof want, "%s-%d", info.name, newest_opset(&info));
        if (strncmp(out_text, want, strlen(want)) != 0)
            fail_msg("%s: expected %s, got: %.80s", args, want, out_text);
    }
    /* the issue's case on files: rows 3, 0, 3 of updates summed into data */
    float d[8] = {0, 1, 2, 3, 4, 5, 6, 7}, u[6] = {10, 11, 20, 21, 30, 31};
    int64_t idx[3] = {3, 0, 3};
    write_npy("sumd.npy", "<f4", "(4, 2)", d, sizeof d);
    write_npy("sumi.npy", "<i8", "(3, 1)", idx, sizeof idx);
    write_npy("sumu.npy", "<f4", "(3, 2)", u, sizeof u);
    assert_int_equal(run("scatter-nd-update --data @sumd.npy --indices @sumi.npy --updates "
                         "@sumu.npy --reduction sum -o @sumout.npy"), 0);
    float want[8];
    memcpy(want, d, sizeof d);
    for (int j = 0; j < 3; j++)
        for (int c = 0; c < 2; c++)
            want[idx[j] * 2 + c] += u[j * 2 + c];
    tj_npy a;
    read_out("sumout.npy", &a);
    assert_memory_equal(a.data, want, sizeof want);
    tj_npy_free(&a);
}

/* A flag value another version of the op takes: the error names the flag,
 * its value and the --opset that takes it, for every opset, reduction,
 * --no-init-val and --batch-dims the op table lists; what the library
 * accepts decides which runs must pass. */
static void expect_opset_outcome(const jit_op_info *info, jit_sig sig, const char *args,
                                 const char *flag)
{
    jit_shape out;
    char cmd[768], ok_opsets[64] = "";
    int valid = jit_output_shape(&sig, &out) == 0;
    for (int i = 0; i < 4 && info->opsets[i]; i++) {
        jit_sig other = sig;
        other.opset = info->opsets[i];
        if (other.opset != sig.opset && jit_output_shape(&other, &out) == 0)
            snprintf(ok_opsets + strlen(ok_opsets), sizeof ok_opsets - strlen(ok_opsets),
                     " %d", other.opset);
    }
    snprintf(cmd, sizeof cmd, "%s --opset %d --explain", args, sig.opset);
    int rc = run(cmd);
    if (valid) {
        if (rc != 0)
            fail_msg("%s: exit %d: %s", cmd, rc, err_text);
        return;
    }
    assert_int_equal(rc, 2);
    assert_int_equal(stderr_lines(), 1);
    if (!*ok_opsets)
        return; /* no version takes it: nothing to point at */
    char want[128];
    snprintf(want, sizeof want, "%s needs --opset ", flag);
    const char *hint = strstr(err_text, want);
    if (!hint)
        fail_msg("%s: no '%s' in: %s", cmd, want, err_text);
    char first[16];
    snprintf(first, sizeof first, "%d", atoi(ok_opsets + 1));
    if (strncmp(hint + strlen(want), first, strlen(first)) != 0)
        fail_msg("%s: expected --opset%s in: %s", cmd, ok_opsets, err_text);
}

static void test_flag_needs_opset(void **state)
{
    (void)state;
    int checked = 0;
    for (int op = JIT_OP_NONE + 1; op < JIT_OP_COUNT; op++) {
        jit_op_info info;
        char base[512], args[640], flag[64];
        assert_int_equal(jit_op_describe((jit_op)op, &info), 0);
        const op_case *c = op_case_of((jit_op)op);
        op_case_args(&info, c, base, sizeof base);
        for (int i = 0; i < 4 && info.opsets[i]; i++) {
            jit_sig sig = op_case_sig(&info, c);
            sig.opset = info.opsets[i];
            for (int r = 1; r < JIT_REDUCTION_COUNT && (info.attrs & JIT_ATTR_REDUCTION); r++) {
                if (!(info.reductions & (1u << r)))
                    continue;
                jit_sig s = sig;
                s.reduction = (jit_reduction)r;
                snprintf(flag, sizeof flag, "--reduction %s", jit_reduction_name(s.reduction));
                snprintf(args, sizeof args, "%s %s", base, flag);
                expect_opset_outcome(&info, s, args, flag);
                checked++;
            }
            if (info.attrs & JIT_ATTR_INIT_VAL) {
                jit_sig s = sig;
                s.reduction = JIT_REDUCTION_SUM;
                s.no_init_val = 1;
                snprintf(args, sizeof args, "%s --reduction sum --no-init-val", base);
                /* sum is the flag at fault where the version has no reduction */
                jit_sig plain = s;
                plain.no_init_val = 0;
                jit_shape out;
                expect_opset_outcome(&info, s, args,
                                     jit_output_shape(&plain, &out) == 0 ? "--no-init-val"
                                                                         : "--reduction sum");
                checked++;
            }
            if (info.attrs & JIT_ATTR_BATCH_DIMS) {
                jit_sig s = sig;
                s.batch_dims = 1;
                snprintf(args, sizeof args, "%s --batch-dims 1", base);
                expect_opset_outcome(&info, s, args, "--batch-dims 1");
                checked++;
            }
        }
    }
    assert_true(checked > 10);
    /* the issue's own words */
    assert_int_equal(run("scatter-nd-update --data-shape 4x2 --indices-shape 3x1 "
                         "--updates-shape 3x2 --opset 3 --reduction sum --explain"), 2);
    assert_non_null(strstr(err_text, "--reduction sum needs --opset 15"));
}

/* -o - writes the .npy to stdout, byte for byte the file -o writes. */
static void test_output_to_stdout(void **state)
{
    (void)state;
    assert_int_equal(run("gather-nd --data @data.npy --indices @idx.npy --batch-dims 2 "
                         "-o @file.npy"), 0);
    char file[4096];
    slurp(path("file.npy"), file, sizeof file);
    assert_int_equal(run("gather-nd --data @data.npy --indices @idx.npy --batch-dims 2 -o -"), 0);
    assert_string_equal(err_text, "");
    tj_npy a, b;
    read_out("stdout", &a);
    read_out("file.npy", &b);
    assert_int_equal(a.dtype, b.dtype);
    assert_int_equal(a.shape.rank, b.shape.rank);
    assert_int_equal(a.bytes, b.bytes);
    assert_memory_equal(a.data, b.data, (size_t)a.bytes);
    tj_npy_free(&a);
    tj_npy_free(&b);
    assert_null(fopen(path("-"), "rb"));
}

/* numpy's dtype names beside the short ones, wherever a type is given. */
static void test_numpy_dtype_names(void **state)
{
    (void)state;
    static const struct {
        const char *numpy, *ours;
    } names[] = {{"bool", "bool"},       {"int8", "i8"},       {"uint8", "u8"},
                 {"int16", "i16"},       {"uint16", "u16"},    {"float16", "f16"},
                 {"bfloat16", "bf16"},   {"int32", "i32"},     {"uint32", "u32"},
                 {"float32", "f32"},     {"int64", "i64"},     {"uint64", "u64"},
                 {"float64", "f64"}};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char args[256], want[64];
        snprintf(args, sizeof args, "gather-nd --data-shape 2x2 --indices-shape 2x1 --dtype %s "
                 "--explain", names[i].numpy);
        assert_int_equal(run(args), 0);
        snprintf(want, sizeof want, "data %s [2,2]", names[i].ours);
        if (!strstr(out_text, want))
            fail_msg("%s: no '%s' in %.120s", args, want, out_text);
        if (strchr(names[i].ours, 'i') || strchr(names[i].ours, 'u')) {
            snprintf(args, sizeof args, "gather-nd --data-shape 2x2 --indices-shape 2x1 "
                     "--index-type %s --explain", names[i].numpy);
            assert_int_equal(run(args), 0);
            snprintf(want, sizeof want, "indices %s [2,1]", names[i].ours);
            if (!strstr(out_text, want))
                fail_msg("%s: no '%s' in %.120s", args, want, out_text);
        }
    }
    /* and in model, for fragments */
    FILE *f = fopen(path("dt.xml"), "w");
    fputs("<layer type=\"GatherND\" version=\"opset8\"><input><port><dim>3</dim></port><port>"
          "<dim>2</dim><dim>1</dim></port></input></layer>\n", f);
    fclose(f);
    assert_int_equal(run("model @dt.xml --dtype float16 --index-type int32"), 0);
    assert_non_null(strstr(out_text, "data f16 [3], indices i32 [2,1]"));
    assert_int_equal(run("gather-nd --data-shape 2x2 --indices-shape 2x1 --dtype float128 "
                         "--explain"), 2);
    assert_non_null(strstr(err_text, "float32"));
}

/* An unknown command or flag: the nearest real one, where one is near. */
static void test_did_you_mean(void **state)
{
    (void)state;
    static const struct {
        const char *args, *suggestion;
    } cases[] = {
        {"gather-nb", "'gather-nd'"},
        {"scater-update", "'scatter-update'"},
        {"gather-element", "'gather-elements'"},
        {"modle x.xml", "'model'"},
        {"cahce stats", "'cache'"},
        {"gather-nd --data @data.npy --indeces @idx.npy", "--indices"},
        {"gather-nd --data @data.npy --indices @idx.npy --bacth-dims 2", "--batch-dims"},
        {"scatter-nd-update --data-shape 2 --indices-shape 1x1 --updates-shape 1 --redution sum "
         "--explain", "--reduction"},
        {"model @frag.xml --chek", "--check"},
        {"bench --josn", "--json"},
        {"check gather-nd --data-shape 2 --indices-shape 1x1 --rnus 3", "--runs"},
        /* a flag's -shape form where check takes the flag itself (a newcomer's trial) */
        {"check embedding-bag-offsets --table-shape 10x4 --indices-shape 5 --offsets-shape 2 "
         "--weights-shape 5", "--weights"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char want[96];
        assert_int_equal(run(cases[i].args), 2);
        assert_int_equal(stderr_lines(), 1);
        snprintf(want, sizeof want, "did you mean %s?", cases[i].suggestion);
        if (!strstr(err_text, want))
            fail_msg("tensorjit %s: no \"%s\" in: %s", cases[i].args, want, err_text);
    }
    /* nothing near: no guess */
    assert_int_equal(run("xyzzyplugh"), 2);
    assert_null(strstr(err_text, "did you mean"));
    assert_int_equal(run("gather-nd --data @data.npy --indices @idx.npy --zzzzzzzzzz"), 2);
    assert_null(strstr(err_text, "did you mean"));
    /* model words an option it does not know as the op commands do (it said
     * "unexpected argument '--num-segments'": a newcomer's trial) */
    assert_int_equal(run("model @frag.xml --num-segments 5"), 2);
    assert_non_null(strstr(err_text, "model: unknown option --num-segments"));
}

static void expect_usage(const char *cmd)
{
    char args[128], want[128];
    const char *forms[] = {"--help", "-h"};
    for (int i = 0; i < 2; i++) {
        snprintf(args, sizeof args, "%s %s", cmd, forms[i]);
        if (run(args) != 0)
            fail_msg("tensorjit %s: exit status not 0: %s", args, err_text);
        snprintf(want, sizeof want, "usage: tensorjit %s", cmd);
        if (strncmp(out_text, want, strlen(want)) != 0)
            fail_msg("tensorjit %s: output starts: %.80s", args, out_text);
        assert_string_equal(err_text, "");
    }
}

/* --help on every command: its own usage, exit 0; an op's lists its own
 * flags with the values the op table gives. */
static void test_help_on_every_command(void **state)
{
    (void)state;
    static const char *const commands[] = {"model", "check", "cache", "bench", "demo"};
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        expect_usage(commands[i]);
    for (int op = JIT_OP_NONE + 1; op < JIT_OP_COUNT; op++) {
        jit_op_info info;
        char want[160];
        assert_int_equal(jit_op_describe((jit_op)op, &info), 0);
        expect_usage(info.command);
        int n = snprintf(want, sizeof want, "--opset ");
        for (int v = 0; v < 4 && info.opsets[v]; v++)
            n += snprintf(want + n, sizeof want - (size_t)n, "%s%d", v ? "|" : "",
                          info.opsets[v]);
        if (info.opsets[1] && !strstr(out_text, want))
            fail_msg("%s --help: no '%s'", info.command, want);
        if (info.attrs & JIT_ATTR_REDUCTION) {
            n = snprintf(want, sizeof want, "--reduction ");
            for (int r = 0, k = 0; r < JIT_REDUCTION_COUNT; r++)
                if (info.reductions & (1u << r))
                    n += snprintf(want + n, sizeof want - (size_t)n, "%s%s", k++ ? "|" : "",
                                  jit_reduction_name((jit_reduction)r));
            if (!strstr(out_text, want))
                fail_msg("%s --help: no '%s'", info.command, want);
        } else {
            assert_null(strstr(out_text, "--reduction"));
        }
        for (int p = 0; p < JIT_INDEX_POLICY_COUNT; p++)
            assert_non_null(strstr(out_text, jit_index_policy_name((jit_index_policy)p)));
        const char *attr_flags[] = {"--axis", "--batch-dims", "--updates", "--no-init-val",
                                    "--torch-dims"};
        unsigned attr_bits[] = {JIT_ATTR_AXIS, JIT_ATTR_BATCH_DIMS, JIT_ATTR_UPDATES,
                                JIT_ATTR_INIT_VAL, JIT_ATTR_TORCH_DIMS};
        for (int k = 0; k < 5; k++)
            if (!(info.attrs & attr_bits[k]) != !strstr(out_text, attr_flags[k]))
                fail_msg("%s --help and %s disagree with the op table", info.command,
                         attr_flags[k]);
    }
}

/* Which policies take index v along a dim of size s (the header's words). */
static int policy_takes(jit_index_policy p, int64_t v, int64_t s)
{
    switch (p) {
    case JIT_INDEX_ERROR: return v >= 0 && v < s;
    case JIT_INDEX_NEGATIVE_WRAPS: return v >= -s && v < s;
    case JIT_INDEX_CLAMP: return s > 0;
    default: return 1; /* zero-fill, negative-wraps-zero-fill */
    }
}

/* An index error names the --index-policy values that would take it. */
static void expect_policy_hint(const char *args, int64_t v, int64_t s)
{
    assert_int_equal(run(args), 3);
    assert_int_equal(stderr_lines(), 1);
    assert_non_null(strstr(err_text, "--index-policy"));
    for (int p = 1; p < JIT_INDEX_POLICY_COUNT; p++) {
        const char *name = jit_index_policy_name((jit_index_policy)p);
        /* as a word: "negative-wraps" is also the start of another name */
        char word[64];
        int found = 0;
        for (const char *q = err_text; (q = strstr(q, name)); q++) {
            char after = q[strlen(name)];
            found |= q > err_text && (q[-1] == ' ' || q[-1] == ',') &&
                     (after == ' ' || after == ',' || after == ')' || after == '\n');
        }
        snprintf(word, sizeof word, "%s", name);
        if (found != policy_takes((jit_index_policy)p, v, s))
            fail_msg("%s: policy %s %s in: %s", args, word, found ? "wrongly named" : "missing",
                     err_text);
    }
}

static void test_index_error_names_policy(void **state)
{
    (void)state;
    int64_t g1[2] = {0, -1};
    write_npy("hint_neg.npy", "<i8", "(2,)", g1, sizeof g1);
    expect_policy_hint("gather --data @data.npy --indices @hint_neg.npy --axis 1", -1, 3);
    expect_policy_hint("gather-nd --data @data.npy --indices @bad.npy --batch-dims 2", 4, 4);
    expect_policy_hint("gather-nd --data @data.npy --indices @bad.npy --batch-dims 2 "
                       "--dynamic all", 4, 4);
}

/* A cache folder the library refuses is said once, with its reason; the
 * command runs without the cache. */
static void test_refused_cache_said_once(void **state)
{
    (void)state;
    char open_dir[256];
    snprintf(open_dir, sizeof open_dir, "%s", path("open_cache"));
    mkdir(open_dir, 0777);
    chmod(open_dir, 0777);
    setenv("TENSORJIT_CACHE_DIR", open_dir, 1);
    int rc = run("gather-nd --data @data.npy --indices @idx.npy --batch-dims 2 -o @c.npy");
    const char *frag = "<layer type=\"GatherND\" version=\"opset8\"><input><port><dim>3</dim>"
                       "</port><port><dim>2</dim><dim>1</dim></port></input></layer>\n";
    FILE *f = fopen(path("two.xml"), "w");
    fprintf(f, "%s%s", frag, frag);
    fclose(f);
    char first[8192];
    snprintf(first, sizeof first, "%s", err_text);
    int model_rc = run("model @two.xml");
    setenv("TENSORJIT_CACHE_DIR", path("cache"), 1);
    assert_int_equal(rc, 0);
    if (!strstr(first, open_dir) || !strstr(first, "777") || strchr(first, '\n') !=
        first + strlen(first) - 1)
        fail_msg("expected one line naming %s and its mode: '%s'", open_dir, first);
    assert_int_equal(model_rc, 0);
    assert_int_equal(stderr_lines(), 1);
    assert_non_null(strstr(err_text, open_dir));
}

/* A printed result's first line: its shape and element type. */
static void test_printed_result_header(void **state)
{
    (void)state;
    assert_int_equal(run("gather-nd --data @data.npy --indices @idx.npy --batch-dims 2 "
                         "-o @h.npy"), 0);
    assert_int_equal(run("gather-nd --data @data.npy --indices @idx.npy --batch-dims 2"), 0);
    tj_npy a;
    read_out("h.npy", &a);
    char want[128];
    int n = snprintf(want, sizeof want, "shape [");
    for (int i = 0; i < a.shape.rank; i++)
        n += snprintf(want + n, sizeof want - (size_t)n, "%s%lld", i ? "," : "",
                      (long long)a.shape.dims[i]);
    snprintf(want + n, sizeof want - (size_t)n, "], dtype %s\n", jit_dtype_name(a.dtype));
    tj_npy_free(&a);
    if (strncmp(out_text, want, strlen(want)) != 0)
        fail_msg("first line '%.60s', expected '%s'", out_text, want);
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
        cmocka_unit_test(test_gather_command),
        cmocka_unit_test(test_gather_elements_command),
        cmocka_unit_test(test_torch_dims_option),
        cmocka_unit_test(test_scatter_nd_update_command),
        cmocka_unit_test(test_check_explain_dump_new_ops),
        cmocka_unit_test(test_model_check_new_layers),
        cmocka_unit_test(test_model_check_reduction_layers),
        cmocka_unit_test(test_arguments),
        cmocka_unit_test(test_flags_that_would_be_ignored),
        cmocka_unit_test(test_prints_every_element_type),
        cmocka_unit_test(test_prints_at_most_1000_elements),
        cmocka_unit_test(test_dump_from_flags_and_files),
        cmocka_unit_test(test_verbose_names_the_jit),
        cmocka_unit_test(test_debug_zero_prints_nothing),
        cmocka_unit_test(test_default_cache_folder),
        cmocka_unit_test(test_model_check_and_explain),
        cmocka_unit_test(test_bench_json),
        cmocka_unit_test(test_bench_dynamic),
        cmocka_unit_test(test_bench_threads_memcpy_peer),
        cmocka_unit_test(test_disk_cache_across_processes),
        cmocka_unit_test(test_dynamic_option),
        cmocka_unit_test(test_dynamic_shape_flags),
        cmocka_unit_test(test_model_dynamic_layers),
        cmocka_unit_test(test_dynamic_conformance),
        cmocka_unit_test(test_model_refuses_attribute_out_of_range),
        cmocka_unit_test(test_model_refuses_contradicted_output),
        cmocka_unit_test(test_model_lists_body_layers),
        cmocka_unit_test(test_prints_empty_tensor_compactly),
        cmocka_unit_test(test_check_skips_buffers_past_int64),
        cmocka_unit_test(test_model_marks_shared_kernels),
        cmocka_unit_test(test_newest_opset_by_default),
        cmocka_unit_test(test_flag_needs_opset),
        cmocka_unit_test(test_output_to_stdout),
        cmocka_unit_test(test_numpy_dtype_names),
        cmocka_unit_test(test_did_you_mean),
        cmocka_unit_test(test_help_on_every_command),
        cmocka_unit_test(test_index_error_names_policy),
        cmocka_unit_test(test_refused_cache_said_once),
        cmocka_unit_test(test_printed_result_header),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
