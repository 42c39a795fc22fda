/* The environment knobs of the JIT (docs/library.md, "Environment variables", and
 * the experiment knobs of docs/performance.md): each one still gives
 * kernels whose bytes and statuses match the oracle, the knob visibly took
 * effect (in the dumped IR or assembly, the kernel info, or the
 * TENSORJIT_DEBUG lines), and a knob that breaks LLVM (a pass pipeline it
 * cannot parse) falls back to the reference kernel with LLVM's reason.
 *
 * Knobs are read when the engine starts (or once per process), so every
 * case runs in a child process of its own that sets the variables before
 * its first call into the library; the parent never calls the library. */
#define _DEFAULT_SOURCE
#include <fcntl.h>
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "oracle.h"
#include "support.h"

/* ---- in the child: plain checks, the first failure exits 1 ---- */

static int saved_stderr = -1;

#define CHECK(cond, ...)                                                                   \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            dprintf(saved_stderr >= 0 ? saved_stderr : 2, "%s:%d: %s: ", __FILE__, __LINE__, \
                    #cond);                                                                \
            dprintf(saved_stderr >= 0 ? saved_stderr : 2, __VA_ARGS__);                    \
            dprintf(saved_stderr >= 0 ? saved_stderr : 2, "\n");                           \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

static void store_index(jit_dtype t, void *p, int64_t i, int64_t v)
{
    switch (jit_dtype_size(t)) {
    case 1:
        ((int8_t *)p)[i] = (int8_t)v;
        break;
    case 2:
        ((int16_t *)p)[i] = (int16_t)v;
        break;
    case 4:
        ((int32_t *)p)[i] = (int32_t)v;
        break;
    default:
        ((int64_t *)p)[i] = v;
    }
}

/* Gathers rows of data f32 [rows, width] by T indices of type it (values
 * in [lo, hi], then one bad value if bad != 0) with the kernel of sig and
 * compares status, message and bytes with the oracle. The kernel's info. */
static jit_kernel_info gather_rows(jit_gather_nd_sig s, int64_t lo, int64_t hi, int64_t bad)
{
    int64_t rows = s.data_shape.dims[0], width = s.data_shape.dims[1];
    int64_t t = s.indices_shape.dims[0];
    float *data = malloc((size_t)(rows * width) * sizeof *data);
    float *out = malloc((size_t)(t * width) * sizeof *out);
    float *want = malloc((size_t)(t * width) * sizeof *want);
    void *idx = malloc((size_t)t * 8);
    CHECK(data && out && want && idx, "out of memory");
    for (int64_t i = 0; i < rows * width; i++)
        data[i] = (float)(i % 1000003) * 0.5f;
    uint64_t seed = 42;
    for (int64_t i = 0; i < t; i++)
        store_index(s.index_type, idx, i, support_rand_range(&seed, lo, hi));
    jit_gather_nd_fn fn = jit_gather_nd_compile(&s);
    CHECK(fn, "compile: %s", jit_last_error());
    memset(out, 0, (size_t)(t * width) * sizeof *out);
    memset(want, 0, (size_t)(t * width) * sizeof *want);
    int expect = oracle_gather_nd(&s, data, idx, want);
    int got = fn(data, idx, out);
    CHECK(got == expect && expect == 0, "status %d, oracle %d", got, expect);
    CHECK(memcmp(out, want, (size_t)(t * width) * sizeof *out) == 0, "bytes differ from the oracle");
    if (bad) {
        store_index(s.index_type, idx, t - 1, bad);
        memcpy(want, out, (size_t)(t * width) * sizeof *out);
        expect = oracle_gather_nd(&s, data, idx, want);
        got = fn(data, idx, out);
        CHECK(got == expect, "bad index %lld: status %d, oracle %d", (long long)bad, got, expect);
        CHECK(memcmp(out, want, (size_t)(t * width) * sizeof *out) == 0,
              "bytes differ from the oracle after a bad index");
        if (got == JIT_STATUS_BAD_INDEX) {
            char part[64];
            snprintf(part, sizeof part, "indices[%lld] = [%lld] is out of range", (long long)(t - 1),
                     (long long)bad);
            CHECK(strstr(jit_last_error(), part), "message \"%s\" lacks \"%s\"", jit_last_error(),
                  part);
        }
    }
    jit_kernel_info info;
    CHECK(jit_gather_nd_info(fn, &info) == 0, "info: %s", jit_last_error());
    free(data);
    free(out);
    free(want);
    free(idx);
    return info;
}

static jit_gather_nd_sig rows_sig(int64_t rows, int64_t width, int64_t tuples, jit_dtype it)
{
    return (jit_gather_nd_sig){.dtype = JIT_F32, .index_type = it,
                               .data_shape = {2, {rows, width}},
                               .indices_shape = {2, {tuples, 1}}};
}

/* ScatterUpdate of 3 rows into data f32 [8, 5], axis 0, against the oracle. */
static jit_kernel_info scatter_rows(void)
{
    jit_scatter_update_sig s = {.axis = 0, .dtype = JIT_F32, .index_type = JIT_I64,
                                .data_shape = {2, {8, 5}}, .indices_shape = {1, {3}},
                                .updates_shape = {2, {3, 5}}};
    float data[40], upd[15], out[40], want[40];
    int64_t idx[3] = {6, 0, 6};
    for (int i = 0; i < 40; i++)
        data[i] = (float)i;
    for (int i = 0; i < 15; i++)
        upd[i] = -(float)i;
    jit_scatter_update_fn fn = jit_scatter_update_compile(&s);
    CHECK(fn, "compile: %s", jit_last_error());
    CHECK(oracle_scatter_update(&s, data, idx, upd, want) == 0, "oracle");
    CHECK(fn(data, idx, upd, out) == 0, "status: %s", jit_last_error());
    CHECK(memcmp(out, want, sizeof out) == 0, "bytes differ from the oracle");
    jit_kernel_info info;
    CHECK(jit_scatter_update_info(fn, &info) == 0, "info");
    return info;
}

static void expect_jit(jit_kernel_info info, const char *what)
{
    CHECK(info.engine == JIT_ENGINE_JIT, "%s: engine %s (%s)", what, jit_engine_name(info.engine),
          info.why);
}

/* stderr into a file while the library writes to it; its text after. */
static char captured_path[64];

static void capture_begin(void)
{
    snprintf(captured_path, sizeof captured_path, "/tmp/tj_knobs_err_XXXXXX");
    int fd = mkstemp(captured_path);
    CHECK(fd >= 0, "mkstemp");
    fflush(stderr);
    saved_stderr = dup(2);
    dup2(fd, 2);
    close(fd);
}

static char *capture_end(void)
{
    fflush(stderr);
    dup2(saved_stderr, 2);
    close(saved_stderr);
    saved_stderr = -1;
    static char text[16384];
    FILE *f = fopen(captured_path, "r");
    CHECK(f, "reopen %s", captured_path);
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    unlink(captured_path);
    return text;
}

static char *temp_dir(void)
{
    static char dir[64];
    snprintf(dir, sizeof dir, "/tmp/tj_knobs_XXXXXX");
    CHECK(mkdtemp(dir), "mkdtemp");
    return dir;
}

static void remove_dir(const char *dir)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0, "%s", cmd);
}

/* ---- the cases, each run in a child ---- */

/* TENSORJIT_OPT=O0..O3 (LLVM's default<On>), with TENSORJIT_CODEGEN. */
static int child_opt_level(int level)
{
    char v[4] = {'O', (char)('0' + level), 0, 0};
    setenv("TENSORJIT_OPT", v, 1);
    char c[2] = {(char)('0' + (3 - level)), 0};
    setenv("TENSORJIT_CODEGEN", c, 1);
    expect_jit(gather_rows(rows_sig(50, 6, 40, JIT_I32), 0, 49, 50), v);
    expect_jit(gather_rows(rows_sig(9, 3, 4, JIT_I64), 0, 8, -1), v);
    expect_jit(scatter_rows(), v);
    jit_shutdown();
    return 0;
}

/* A pipeline of one's own; one LLVM cannot parse falls back, saying why. */
static int child_passes(void)
{
    setenv("TENSORJIT_PASSES", "function(simplifycfg)", 1);
    expect_jit(gather_rows(rows_sig(50, 6, 40, JIT_I32), 0, 49, 77), "a custom pipeline");
    jit_shutdown();
    setenv("TENSORJIT_PASSES", "no-such-pass-of-llvm", 1);
    jit_kernel_info info = gather_rows(rows_sig(50, 6, 40, JIT_I32), 0, 49, 77);
    CHECK(info.engine == JIT_ENGINE_REFERENCE, "engine %s", jit_engine_name(info.engine));
    CHECK(strstr(info.why, "optimizing the kernel: ") && strstr(info.why, "no-such-pass-of-llvm"),
          "why: %s", info.why);
    jit_shutdown();
    return 0;
}

/* TENSORJIT_LLVM_ARGS reaches LLVM's command line: Intel syntax in --dump-asm. */
static int child_llvm_args(void)
{
    setenv("TENSORJIT_LLVM_ARGS", "-x86-asm-syntax=intel", 1);
    jit_gather_nd_sig s = rows_sig(50, 6, 40, JIT_I32);
    char *text = jit_gather_nd_dump(&s, JIT_DUMP_ASM);
    CHECK(text, "dump: %s", jit_last_error());
#if defined(__x86_64__)
    CHECK(strstr(text, "ptr ["), "no Intel-syntax operand in:\n%.400s", text);
#endif
    jit_free(text);
    expect_jit(gather_rows(s, 0, 49, 50), "LLVM args");
    jit_shutdown();
    return 0;
}

/* TENSORJIT_DEBUG=1: one line per engine start, LLJIT start, compile, disk
 * hit, ignored variable and JIT session error, on stderr. */
static int child_debug_lines(void)
{
    char *dir = temp_dir();
    setenv("TENSORJIT_DEBUG", "1", 1);
    setenv("TENSORJIT_CACHE_DIR", dir, 1);
    setenv("TENSORJIT_MAX_KERNELS", "many", 1);
    setenv("TENSORJIT_OPT", "O9", 1);  /* values the engine ignores: said */
    setenv("TENSORJIT_JIT", "bogus", 1);
    capture_begin();
    gather_rows(rows_sig(50, 6, 40, JIT_I32), 0, 49, 0);
    jit_shutdown();
    gather_rows(rows_sig(50, 6, 40, JIT_I32), 0, 49, 0); /* a new engine: from disk */
    jit_shutdown();
    setenv("TENSORJIT_FAULT", "link", 1);
    jit_kernel_info info = gather_rows(rows_sig(12, 6, 3, JIT_I32), 0, 11, 0);
    unsetenv("TENSORJIT_FAULT");
    jit_shutdown();
    char *err = capture_end();
    CHECK(info.engine == JIT_ENGINE_REFERENCE, "the link fault did not fall back");
    static const char *const want[] = {
        "tensorjit: engine started in ",
        "tensorjit: LLJIT created in ",
        "ir ", "passes ", "codegen ", "total ",
        "loaded from the disk cache in ",
        "TENSORJIT_MAX_KERNELS=many ignored: not a whole number >= 0",
        "TENSORJIT_OPT=O9 ignored: not one of O0 O1 O2 O3",
        "TENSORJIT_JIT=bogus ignored: not off, 0, false, no, on, 1, true or yes",
        "tensorjit: JIT session error: ",
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        CHECK(strstr(err, want[i]), "stderr lacks \"%s\":\n%s", want[i], err);
    remove_dir(dir);
    return 0;
}

/* A TENSORJIT_CACHE_DIR that cannot be a cache: kernels compile, nothing is
 * cached, and TENSORJIT_DEBUG says why. */
static int child_refused_cache_dir(void)
{
    char *dir = temp_dir(), file[96], bad[128];
    snprintf(file, sizeof file, "%s/file", dir);
    FILE *f = fopen(file, "w");
    CHECK(f, "fopen");
    fclose(f);
    snprintf(bad, sizeof bad, "%s/cache", file);
    setenv("TENSORJIT_CACHE_DIR", bad, 1);
    setenv("TENSORJIT_DEBUG", "1", 1);
    capture_begin();
    jit_kernel_info info = gather_rows(rows_sig(50, 6, 40, JIT_I32), 0, 49, 3000);
    char *err = capture_end();
    expect_jit(info, "a refused cache folder");
    CHECK(strstr(err, "cannot create cache folder"), "stderr: %s", err);
    int64_t entries, bytes;
    char got[8];
    CHECK(jit_cache_stats(0, &entries, &bytes, got, sizeof got) == -1, "a cache is open");
    CHECK(strstr(jit_last_error(), "the last one asked for was refused: cannot create cache "
                                   "folder"),
          "jit_cache_stats: %s", jit_last_error());
    jit_shutdown();
    remove_dir(dir);
    return 0;
}

/* TENSORJIT_OBJLOAD=llvm: a disk hit is loaded through LLJIT, and runs. */
static int child_objload_llvm(void)
{
    char *dir = temp_dir();
    setenv("TENSORJIT_CACHE_DIR", dir, 1);
    setenv("TENSORJIT_OBJLOAD", "llvm", 1);
    jit_gather_nd_sig s = rows_sig(50, 6, 40, JIT_I32);
    s.threads = 2;
    setenv("TENSORJIT_SPLIT_MIN", "1", 1); /* a split kernel: its parts load too */
    jit_kernel_info first = gather_rows(s, 0, 49, 51);
    expect_jit(first, "compiled");
    CHECK(!first.cache_hit, "a hit in an empty cache");
    jit_shutdown();
    setenv("TENSORJIT_DEBUG", "1", 1);
    capture_begin();
    jit_kernel_info again = gather_rows(s, 0, 49, 51);
    char *err = capture_end();
    expect_jit(again, "from disk through LLJIT");
    CHECK(again.cache_hit, "not loaded from the disk cache");
    CHECK(strstr(err, "(LLJIT)"), "not loaded through LLJIT: %s", err);
    jit_shutdown();
    remove_dir(dir);
    return 0;
}

/* Rows copied in 64-byte moves are one zmm each wherever the host has
 * AVX-512, also where LLVM prefers 256-bit vectors (Intel's AVX-512
 * cores): the kernel function says it needs 512 bits. An explicit
 * TENSORJIT_VECTOR_WIDTH=256 still gets ymm, and slices that are not a
 * multiple of 64 bytes keep their 32-byte moves. */
static int ir_has(jit_gather_nd_sig s, jit_dump_kind kind, const char *what)
{
    char *text = jit_gather_nd_dump(&s, kind);
    CHECK(text, "dump: %s", jit_last_error());
    int has = strstr(text, what) != NULL;
    jit_free(text);
    return has;
}

static int child_wide_moves(void)
{
    static const char wide[] = "\"min-legal-vector-width\"=\"512\"";
    jit_gather_nd_sig rows = rows_sig(4096, 64, 4096, JIT_I32); /* 1 MB of 256-byte rows */
    CHECK(ir_has(rows, JIT_DUMP_IR, wide), "256-byte rows: no 512-bit moves allowed");
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx512f"))
        CHECK(ir_has(rows, JIT_DUMP_ASM, "zmm"), "256-byte rows: no zmm moves on an AVX-512 host");
#endif
    expect_jit(gather_rows(rows, 0, 4095, 4096), "wide moves");
    CHECK(!ir_has(rows_sig(4096, 15, 4096, JIT_I32), JIT_DUMP_IR, wide), "60-byte slices: zmm");
    CHECK(!ir_has(rows_sig(4096, 64, 16, JIT_I32), JIT_DUMP_IR, wide), "a small kernel: zmm");
    jit_shutdown(); /* the knobs are read again */
    setenv("TENSORJIT_VECTOR_WIDTH", "256", 1);
    CHECK(!ir_has(rows, JIT_DUMP_IR, wide), "TENSORJIT_VECTOR_WIDTH=256 not obeyed");
    return 0;
}

/* A slice that no single move fits (60 bytes: G1's) is copied by moves
 * whose stores go up in address, the overlapping last one last: stored
 * the other way round, as LLVM's expansion of llvm.memcpy did, G1 ran at
 * half speed on a Sapphire Rapids core. */
#if defined(__x86_64__) /* the checks of x86 assembly only */
static long asm_offset_of(const char *text, const char *pattern)
{
    regex_t re;
    regmatch_t m;
    CHECK(regcomp(&re, pattern, REG_EXTENDED) == 0, "bad pattern %s", pattern);
    int found = regexec(&re, text, 1, &m, 0) == 0;
    regfree(&re);
    return found ? (long)m.rm_so : -1;
}
#endif

static int count_of(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = strstr(text, what); p; p = strstr(p + 1, what))
        n++;
    return n;
}

static int child_small_copy_order(void)
{
    jit_gather_nd_sig slices = rows_sig(4096, 15, 4096, JIT_I32);
    CHECK(!ir_has(slices, JIT_DUMP_IR, "llvm.memcpy"), "60-byte slices: llvm.memcpy");
    char *as = jit_gather_nd_dump(&slices, JIT_DUMP_ASM);
    CHECK(as, "dump: %s", jit_last_error());
#if defined(__x86_64__)
    long head = asm_offset_of(as, "vmov[a-z0-9]+[[:space:]]+%[xy]mm[0-9]+, \\(%");
    long tail = asm_offset_of(as, "vmov[a-z0-9]+[[:space:]]+%[xy]mm[0-9]+, 28\\(%");
    CHECK(head >= 0 && tail >= 0, "no 32-byte stores at 0 and 28:\n%s", as);
    CHECK(head < tail, "the overlapping tail is stored first:\n%s", as);
#endif
    jit_free(as);
    expect_jit(gather_rows(slices, 0, 4095, 4096), "small slices");
    expect_jit(gather_rows(rows_sig(300, 5, 64, JIT_I64), 0, 299, -1), "20-byte slices");
    /* 96 bytes: three 32-byte moves, the last not overlapping: as many
     * moves at 64 as at 0 */
    jit_gather_nd_sig three = rows_sig(4096, 24, 4096, JIT_I32);
    char *ir = jit_gather_nd_dump(&three, JIT_DUMP_IR);
    CHECK(ir, "dump: %s", jit_last_error());
    int at0 = count_of(ir, "%slice.src, i64 0\n"), at64 = count_of(ir, "%slice.src, i64 64\n");
    CHECK(!strstr(ir, "llvm.memcpy") && at0 > 0 && at64 == at0,
          "96-byte slices: %d moves at 0, %d at 64", at0, at64);
    jit_free(ir);
    expect_jit(gather_rows(three, 0, 4095, 4096), "96-byte slices");
    return 0;
}

/* The IR experiment knobs: prefetch, non-temporal stores, vector width. */
static int child_ir_knobs(void)
{
    setenv("TENSORJIT_PREFETCH", "8", 1);
    setenv("TENSORJIT_VECTOR_WIDTH", "256", 1);
    /* 4 MB of data, 64 rows of 4 KB: loops, prefetching 8 tuples ahead */
    jit_gather_nd_sig s = rows_sig(1024, 1024, 64, JIT_I64);
    char *ir = jit_gather_nd_dump(&s, JIT_DUMP_IR);
    CHECK(ir, "dump: %s", jit_last_error());
    CHECK(strstr(ir, "llvm.prefetch"), "no prefetch in the IR");
    CHECK(strstr(ir, "prefer-vector-width"), "no vector width attribute in the IR");
    jit_free(ir);
    expect_jit(gather_rows(s, 0, 1023, 1024), "prefetch");
    s.threads = 2; /* split: the range function prefetches too */
    ir = jit_gather_nd_dump(&s, JIT_DUMP_IR);
    CHECK(ir, "dump: %s", jit_last_error());
    CHECK(strstr(ir, "_range(") && strstr(ir, "llvm.prefetch"), "no prefetching range function");
    jit_free(ir);
    expect_jit(gather_rows(s, 0, 1023, -5), "prefetch, split");
    /* batches too: the prefetch address walks the outer dimension */
    jit_gather_nd_sig b = {.dtype = JIT_F32, .index_type = JIT_I32, .batch_dims = 1,
                           .data_shape = {3, {2, 1024, 512}},
                           .indices_shape = {3, {2, 32, 1}}};
    float *data = malloc(2 * 1024 * 512 * sizeof *data), *out = malloc(2 * 32 * 512 * 4),
          *want = malloc(2 * 32 * 512 * 4);
    int32_t idx[64];
    CHECK(data && out && want, "out of memory");
    for (int i = 0; i < 2 * 1024 * 512; i++)
        data[i] = (float)i;
    for (int i = 0; i < 64; i++)
        idx[i] = (i * 37) % 1024;
    jit_gather_nd_fn fn = jit_gather_nd_compile(&b);
    CHECK(fn, "compile: %s", jit_last_error());
    CHECK(oracle_gather_nd(&b, data, idx, want) == 0, "oracle");
    CHECK(fn(data, idx, out) == 0, "status: %s", jit_last_error());
    CHECK(memcmp(out, want, 2 * 32 * 512 * 4) == 0, "batched prefetch: bytes differ");
    free(data);
    free(out);
    free(want);
    unsetenv("TENSORJIT_PREFETCH");

    /* 16 MB out in blocks of 64 KB: non-temporal stores when asked for */
    setenv("TENSORJIT_NT", "1", 1);
    jit_shutdown(); /* the library reads its environment again */
    jit_gather_nd_sig nt = rows_sig(300, 16384, 256, JIT_I32);
    ir = jit_gather_nd_dump(&nt, JIT_DUMP_IR);
    CHECK(ir, "dump: %s", jit_last_error());
    CHECK(strstr(ir, "!nontemporal"), "no non-temporal store in the IR");
    jit_free(ir);
    expect_jit(gather_rows(nt, 0, 299, 300), "non-temporal");
    jit_shutdown();
    return 0;
}

/* ---- the prefetch address, evaluated from the dumped IR ---- */

/* Where the evaluator puts the buffers: pointers are plain numbers. */
#define IR_DATA ((int64_t)1 << 40)
#define IR_INDICES ((int64_t)1 << 50)

/* One function of a kernel's unoptimized IR, evaluated at given iterations
 * of its loops (their counters' phis): the integer arithmetic an address
 * is made of, and loads of i64 entries of the index stream, answered from
 * `indices`. Anything else fails, naming the instruction. */
typedef struct ir_eval {
    char *fn;               /* the function's text */
    const char *counter[2]; /* its loops' phis, "%level0", ... */
    int64_t at[2];          /* and their iterations */
    const int64_t *indices;
    int64_t nindices;
} ir_eval;

/* The text of function `name` in ir (to free). */
static char *ir_function(const char *ir, const char *name)
{
    char head[128];
    snprintf(head, sizeof head, "define i32 @%s(", name);
    const char *start = strstr(ir, head);
    CHECK(start, "no function %s in the IR", name);
    const char *end = strstr(start, "\n}\n");
    CHECK(end, "function %s does not end", name);
    char *fn = strndup(start, (size_t)(end - start) + 2);
    CHECK(fn, "out of memory");
    return fn;
}

/* The operand `ptr %x` of the first llvm.prefetch call of ev's function. */
static void ir_prefetch_operand(const ir_eval *ev, char *name, size_t len)
{
    const char *call = strstr(ev->fn, "call void @llvm.prefetch");
    CHECK(call, "no prefetch in the function");
    const char *arg = strstr(call, "(ptr ");
    CHECK(arg, "no address in %.80s", call);
    arg += 5;
    size_t n = strcspn(arg, ",)");
    CHECK(n < len, "operand too long");
    memcpy(name, arg, n);
    name[n] = '\0';
}

static int64_t ir_value(const ir_eval *ev, const char *v, int depth);

/* The instruction defining %x: tokens of its line, commas and brackets
 * dropped, the flags that do not change an integer's value skipped. */
static int ir_tokens(const ir_eval *ev, const char *x, char *line, size_t len, char **tok)
{
    char key[96];
    snprintf(key, sizeof key, "\n  %s = ", x);
    const char *def = strstr(ev->fn, key);
    CHECK(def, "no definition of %s", x);
    def += strlen(key);
    size_t n = strcspn(def, "\n");
    CHECK(n < len, "a long line: %.80s", def);
    memcpy(line, def, n);
    line[n] = '\0';
    for (char *c = line; *c; c++)
        if (*c == ',' || *c == '(' || *c == ')')
            *c = ' ';
    static const char *const flags[] = {"nuw", "nsw", "inbounds", "exact", "disjoint"};
    int count = 0;
    for (char *t = strtok(line, " "); t && count < 16; t = strtok(NULL, " ")) {
        int flag = 0;
        for (size_t f = 0; f < sizeof flags / sizeof *flags; f++)
            flag |= count > 0 && strcmp(t, flags[f]) == 0;
        if (!flag)
            tok[count++] = t;
    }
    return count;
}

static int64_t ir_compare(const char *pred, int64_t a, int64_t b, const char *x)
{
    if (strcmp(pred, "ult") == 0)
        return (uint64_t)a < (uint64_t)b;
    if (strcmp(pred, "ule") == 0)
        return (uint64_t)a <= (uint64_t)b;
    if (strcmp(pred, "ugt") == 0)
        return (uint64_t)a > (uint64_t)b;
    if (strcmp(pred, "uge") == 0)
        return (uint64_t)a >= (uint64_t)b;
    if (strcmp(pred, "slt") == 0)
        return a < b;
    if (strcmp(pred, "sgt") == 0)
        return a > b;
    if (strcmp(pred, "eq") == 0)
        return a == b;
    CHECK(0, "%s: a compare the evaluator lacks (%s)", x, pred);
    return 0;
}

/* The i64 entry of the index stream at address a. */
static int64_t ir_index_at(const ir_eval *ev, int64_t a, const char *x)
{
    int64_t off = a - IR_INDICES;
    CHECK(off >= 0 && off % 8 == 0 && off / 8 < ev->nindices,
          "%s loads byte %lld of the indices, not one of their %lld entries", x, (long long)off,
          (long long)ev->nindices);
    return ev->indices[off / 8];
}

static int64_t ir_instruction(const ir_eval *ev, const char *x, int depth)
{
    char line[512], *t[16];
    int n = ir_tokens(ev, x, line, sizeof line, t);
    CHECK(n >= 3, "%s: an instruction the evaluator cannot read", x);
    const char *op = t[0];
    if (strcmp(op, "add") == 0 || strcmp(op, "sub") == 0 || strcmp(op, "mul") == 0) {
        CHECK(strcmp(t[1], "i64") == 0, "%s: %s of %s", x, op, t[1]);
        uint64_t a = (uint64_t)ir_value(ev, t[2], depth), b = (uint64_t)ir_value(ev, t[3], depth);
        return (int64_t)(op[0] == 'a' ? a + b : op[0] == 's' ? a - b : a * b);
    }
    if (strcmp(op, "icmp") == 0)
        return ir_compare(t[1], ir_value(ev, t[3], depth), ir_value(ev, t[4], depth), x);
    if (strcmp(op, "select") == 0 && n >= 7)
        return ir_value(ev, t[2], depth) ? ir_value(ev, t[4], depth) : ir_value(ev, t[6], depth);
    if (strcmp(op, "getelementptr") == 0 && n >= 6 && strcmp(t[1], "i8") == 0)
        return ir_value(ev, t[3], depth) + ir_value(ev, t[5], depth);
    if (strcmp(op, "load") == 0 && n >= 4 && strcmp(t[1], "i64") == 0)
        return ir_index_at(ev, ir_value(ev, t[3], depth), x);
    if (strcmp(op, "phi") == 0)
        CHECK(0, "%s: a loop the test gave no iteration for", x);
    CHECK(0, "%s: an instruction the evaluator lacks (%s)", x, op);
    return 0;
}

static int64_t ir_value(const ir_eval *ev, const char *v, int depth)
{
    CHECK(depth < 64, "%s: too deep", v);
    if (v[0] != '%') {
        char *end;
        int64_t c = strtoll(v, &end, 10);
        CHECK(*end == '\0', "a constant the evaluator cannot read: %s", v);
        return c;
    }
    if (strcmp(v, "%data") == 0)
        return IR_DATA;
    if (strcmp(v, "%indices") == 0)
        return IR_INDICES;
    for (int l = 0; l < 2; l++)
        if (ev->counter[l] && strcmp(v, ev->counter[l]) == 0)
            return ev->at[l];
    return ir_instruction(ev, v, depth + 1);
}

/* The byte of data the first prefetch of ev's function reads. */
static int64_t ir_prefetched(const ir_eval *ev)
{
    char name[96];
    ir_prefetch_operand(ev, name, sizeof name);
    return ir_value(ev, name, 0) - IR_DATA;
}

/* The block `distance` tuples ahead of the one being copied: at iteration
 * i of an innermost loop of `trip` tuples, the tuple min(i + distance,
 * trip - 1) of that loop (its index entries are the last ones the loop
 * reads). The address was once computed from the loop's first tuple, so
 * that every iteration prefetched the same few early blocks. Checked on a
 * loop alone, in a split kernel's range function, and inside batches. */
static int child_prefetch_ahead(void)
{
    const int64_t distance = 8, trip = 64, row = 1024 * 4;
    setenv("TENSORJIT_PREFETCH", "8", 1);
    int64_t idx[64];
    for (int64_t i = 0; i < trip; i++)
        idx[i] = (i * 37 + 5) % 1024; /* a different row at every position */
    jit_gather_nd_sig s = rows_sig(1024, 1024, trip, JIT_I64);
    /* the range function walks the range a row at a time (%row.unit: the
     * range's first unit, here 0), each row with the whole loop's body */
    static const char *const fns[2][3] = {{"tj_gather_nd", "%level0", NULL},
                                          {"tj_gather_nd_range", "%level0", "%row.unit"}};
    for (int split = 0; split < 2; split++) {
        s.threads = split ? 2 : 1;
        char *ir = jit_gather_nd_dump(&s, JIT_DUMP_IR);
        CHECK(ir, "dump: %s", jit_last_error());
        if (!strstr(ir, "@llvm.prefetch.p0(ptr ")) {
            /* LLVM 14 prints typed pointers (i8* %x, bitcasts), which this
             * evaluator does not read; the LLVM 15+ builds run it */
            CHECK(strstr(ir, "@llvm.prefetch.p0i8(i8* "), "no prefetch in the IR");
            printf("prefetch addresses not evaluated: typed-pointer IR (LLVM 14)\n");
            jit_free(ir);
            unsetenv("TENSORJIT_PREFETCH");
            return 0;
        }
        ir_eval ev = {ir_function(ir, fns[split][0]), {fns[split][1], fns[split][2]}, {0, 0},
                      idx, trip};
        jit_free(ir);
        for (int64_t i = 0; i < trip; i++) {
            ev.at[0] = i;
            int64_t t = i + distance < trip ? i + distance : trip - 1;
            int64_t got = ir_prefetched(&ev), want = idx[t] * row;
            CHECK(got == want, "%s, iteration %lld: prefetches byte %lld of data, not %lld "
                  "(the row of tuple %lld)", fns[split][0], (long long)i, (long long)got,
                  (long long)want, (long long)t);
        }
        free(ev.fn);
    }
    /* batches: the innermost loop's tuples, in the batch being copied */
    jit_gather_nd_sig b = {.dtype = JIT_F32, .index_type = JIT_I64, .batch_dims = 1,
                           .data_shape = {3, {2, 1024, 512}},
                           .indices_shape = {3, {2, 32, 1}}};
    const int64_t batch = 1024 * 512 * 4, brow = 512 * 4, btrip = 32;
    char *ir = jit_gather_nd_dump(&b, JIT_DUMP_IR);
    CHECK(ir, "dump: %s", jit_last_error());
    ir_eval ev = {ir_function(ir, "tj_gather_nd"), {"%level0", "%level1"}, {0, 0}, idx, 2 * btrip};
    jit_free(ir);
    for (int64_t n = 0; n < 2; n++)
        for (int64_t i = 0; i < btrip; i++) {
            ev.at[0] = n, ev.at[1] = i;
            int64_t t = n * btrip + (i + distance < btrip ? i + distance : btrip - 1);
            int64_t got = ir_prefetched(&ev), want = n * batch + idx[t] * brow;
            CHECK(got == want, "batch %lld, iteration %lld: prefetches byte %lld of data, not "
                  "%lld (the row of tuple %lld)", (long long)n, (long long)i, (long long)got,
                  (long long)want, (long long)t);
        }
    free(ev.fn);
    jit_shutdown();
    return 0;
}

/* Index types too narrow for the vector validation pass's native
 * comparison (i8 indices into a dimension over 128; negative-wraps with a
 * dimension of exactly 128): the per-tuple check loop, same answers. */
static int child_narrow_index_checks(void)
{
    expect_jit(gather_rows(rows_sig(200, 3, 40, JIT_I8), 0, 127, -1), "i8 into 200 rows");
    jit_gather_nd_sig w = rows_sig(128, 3, 40, JIT_I8);
    w.index_policy = JIT_INDEX_NEGATIVE_WRAPS;
    expect_jit(gather_rows(w, -128, 127, 0), "i8 wrapping into 128 rows");
    jit_gather_nd_sig u = rows_sig(300, 3, 40, JIT_U8);
    expect_jit(gather_rows(u, 0, 255, 0), "u8 into 300 rows");
    jit_shutdown();
    return 0;
}

/* The validation's loop keeps its running values in vector registers:
 * a chunk of 8 tuples of one i32 index (G3) in the lanes' largest value
 * and OR, one of three (G1's 24 lanes, which as a vector are split into
 * scalars and moved lane by lane each trip, 1.36x the static kernel) in
 * masks. Neither moves a lane into a general register in the loop. */
static int child_check_loop_in_registers(void)
{
    jit_gather_nd_sig g1 = {.opset = 8, .dtype = JIT_F32, .index_type = JIT_I32,
                            .index_policy = JIT_INDEX_NEGATIVE_WRAPS,
                            .data_shape = {4, {1000, 256, 10, 15}},
                            .indices_shape = {3, {25, 125, 3}}};
    jit_gather_nd_sig g3 = {.opset = 8, .batch_dims = 3, .dtype = JIT_F32, .index_type = JIT_I32,
                            .index_policy = JIT_INDEX_NEGATIVE_WRAPS,
                            .data_shape = {4, {1, 64, 64, 320}},
                            .indices_shape = {5, {1, 64, 64, 1, 1}}};
    jit_gather_nd_sig sigs[2] = {g1, g3};
    for (int i = 0; i < 2; i++) {
        char *ir = jit_gather_nd_dump(&sigs[i], JIT_DUMP_IR);
        CHECK(ir, "dump: %s", jit_last_error());
        CHECK(strstr(ir, i ? "llvm.umax" : "chunk.signs"), "%s: not the %s check", i ? "G3" : "G1",
              i ? "largest-value" : "masked");
        jit_free(ir);
#if defined(__x86_64__)
        char *as = jit_gather_nd_dump(&sigs[i], JIT_DUMP_ASM);
        CHECK(as, "dump: %s", jit_last_error());
        CHECK(asm_offset_of(as, "v?p(ext|ins)r[dq]") < 0, "%s: lanes moved one by one:\n%s",
              i ? "G3" : "G1", as);
        jit_free(as);
#endif
    }
    return 0;
}

/* ---- the parent ---- */

static void in_child(int (*fn)(void))
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        exit(fn());
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

static int opt_level;
static int child_opt(void)
{
    return child_opt_level(opt_level);
}

static void test_opt_levels(void **state)
{
    (void)state;
    for (opt_level = 0; opt_level <= 3; opt_level++)
        in_child(child_opt);
}

static void test_passes(void **state)
{
    (void)state;
    in_child(child_passes);
}

static void test_llvm_args(void **state)
{
    (void)state;
    in_child(child_llvm_args);
}

static void test_debug_lines(void **state)
{
    (void)state;
    in_child(child_debug_lines);
}

static void test_refused_cache_dir(void **state)
{
    (void)state;
    in_child(child_refused_cache_dir);
}

static void test_objload_llvm(void **state)
{
    (void)state;
    in_child(child_objload_llvm);
}

static void test_ir_knobs(void **state)
{
    (void)state;
    in_child(child_ir_knobs);
}

static void test_small_copy_order(void **state)
{
    (void)state;
    in_child(child_small_copy_order);
}

static void test_wide_moves(void **state)
{
    (void)state;
    in_child(child_wide_moves);
}

static void test_prefetch_ahead(void **state)
{
    (void)state;
    in_child(child_prefetch_ahead);
}

static void test_narrow_index_checks(void **state)
{
    (void)state;
    in_child(child_narrow_index_checks);
}

static void test_check_loop_in_registers(void **state)
{
    (void)state;
    in_child(child_check_loop_in_registers);
}

int main(void)
{
    static const char *const knobs[] = {
        "TENSORJIT_OPT", "TENSORJIT_CODEGEN", "TENSORJIT_PASSES", "TENSORJIT_LLVM_ARGS",
        "TENSORJIT_DEBUG", "TENSORJIT_CACHE_DIR", "TENSORJIT_MAX_KERNELS", "TENSORJIT_FAULT",
        "TENSORJIT_OBJLOAD", "TENSORJIT_SPLIT_MIN", "TENSORJIT_PREFETCH", "TENSORJIT_NT",
        "TENSORJIT_VECTOR_WIDTH", "TENSORJIT_JIT", "TENSORJIT_UNROLL"};
    for (size_t i = 0; i < sizeof knobs / sizeof *knobs; i++)
        unsetenv(knobs[i]); /* each case sets its own */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_opt_levels),
        cmocka_unit_test(test_passes),
        cmocka_unit_test(test_llvm_args),
        cmocka_unit_test(test_debug_lines),
        cmocka_unit_test(test_refused_cache_dir),
        cmocka_unit_test(test_objload_llvm),
        cmocka_unit_test(test_ir_knobs),
        cmocka_unit_test(test_check_loop_in_registers),
        cmocka_unit_test(test_wide_moves),
        cmocka_unit_test(test_small_copy_order),
        cmocka_unit_test(test_prefetch_ahead),
        cmocka_unit_test(test_narrow_index_checks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
