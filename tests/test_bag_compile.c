/* What a bag kernel leaves to the code generator (issue 25: a compile in
 * at most a few ms): every loop's counter reaches its exit test through
 * llvm.expect, so that loop strength reduction finds no induction
 * variable to rewrite (ir/bag_ir.c, tj_loop_close), in the IR the engine's
 * pipeline hands to code generation, for every form, static and dynamic,
 * on one thread and split. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "support.h"
#include "tensorjit.h"

/* the lines of text defining a value named prefix, then digits */
static int count_defs(const char *text, const char *prefix)
{
    int n = 0;
    size_t len = strlen(prefix);
    for (const char *p = strstr(text, prefix); p; p = strstr(p + 1, prefix)) {
        const char *q = p + len;
        while (*q >= '0' && *q <= '9')
            q++;
        n += p > text && p[-1] == '%' && (p == text + 1 || p[-2] == ' ' || p[-2] == '\n') &&
             strncmp(q, " = ", 3) == 0;
    }
    return n;
}

/* the calls in text of callee ("@name(") returning i32 */
static int count_calls(const char *text, const char *callee)
{
    char call[128];
    snprintf(call, sizeof call, "call i32 %s", callee);
    int n = 0;
    for (const char *p = strstr(text, call); p; p = strstr(p + 1, call))
        n++;
    return n;
}

/* Whether ir defines the value named at op (len bytes, with its '%') by
 * llvm.expect. */
static int expect_defines(const char *ir, const char *op, size_t len)
{
    char def[96];
    if (len + 40 > sizeof def)
        return 0;
    snprintf(def, sizeof def, "%.*s = call i64 @llvm.expect.i64(", (int)len, op);
    return strstr(ir, def) != NULL;
}

/* Whether the counter phi named at op (a loop tested at its top) takes a
 * value llvm.expect defines from some predecessor: its latch's. */
static int phi_of_expect(const char *ir, const char *op, size_t len)
{
    char def[96];
    if (len + 20 > sizeof def)
        return 0;
    snprintf(def, sizeof def, "%.*s = phi i64 ", (int)len, op);
    const char *p = strstr(ir, def);
    const char *end = p ? strchr(p, '\n') : NULL;
    for (const char *v = p ? strstr(p, "[ %") : NULL; v && end && v < end; v = strstr(v + 1, "[ %")) {
        const char *name = v + 2;
        if (expect_defines(ir, name, strcspn(name, ", \n")))
            return 1;
    }
    return 0;
}

/* The loops' exit tests in ir (compares named <loop>.done, uniqued with
 * digits: `icmp eq` of a loop tested at its bottom, `icmp sge` of one
 * tested at its top); *hidden: those whose counter an llvm.expect
 * defines (at the top: the counter phi's value from the latch). */
static int exit_tests(const char *ir, int *hidden)
{
    int n = 0;
    *hidden = 0;
    for (const char *line = ir; line; line = strchr(line, '\n')) {
        line += *line == '\n';
        const char *eq = strstr(line, " = icmp eq i64 %");
        const char *sge = strstr(line, " = icmp sge i64 %");
        const char *end = strchr(line, '\n');
        const char *done = strstr(line, ".done");
        const char *cmp = eq && (!end || eq < end) ? eq : sge && (!end || sge < end) ? sge : NULL;
        if (!cmp || !done || done > cmp)
            continue;
        n++;
        const char *op = cmp + strlen(cmp == eq ? " = icmp eq i64 " : " = icmp sge i64 ");
        size_t len = strcspn(op, ", \n");
        *hidden += cmp == eq ? expect_defines(ir, op, len) : phi_of_expect(ir, op, len);
    }
    return n;
}

/* Every loop's exit test reads a counter through llvm.expect, in the IR
 * as built and after the engine's pipeline. */
static void expect_hidden_counters(char *ir, char *opt, const char *what)
{
    if (!ir || !opt)
        fail_msg("%s: no IR: %s", what, jit_last_error());
    int hidden, hidden_opt;
    int loops = exit_tests(ir, &hidden), loops_opt = exit_tests(opt, &hidden_opt);
    if (loops < 1 || hidden != loops || loops_opt < 1 || hidden_opt != loops_opt)
        fail_msg("%s: %d loops, %d counters hidden; after the pipeline %d, %d", what, loops,
                 hidden, loops_opt, hidden_opt);
    free(ir);
    free(opt);
}

/* A bag op's signature: table [E, D]; offsets: N indices in B bags;
 * packed: B bags of N lookups; segments: N ids into B segments. */
static jit_sig bag_sig(jit_op op, jit_dtype t, int64_t D, int64_t N, int64_t B)
{
    jit_sig s = {.op = op, .dtype = t, .index_type = JIT_I64, .threads = 1};
    s.data_shape = (jit_shape){2, {100000, D}};
    if (op == JIT_OP_EMBEDDING_BAG_PACKED) {
        s.indices_shape = (jit_shape){2, {B, N}};
        s.reduction = JIT_REDUCTION_MEAN;
        return s;
    }
    s.indices_shape = (jit_shape){1, {N}};
    s.updates_shape = (jit_shape){1, {op == JIT_OP_EMBEDDING_SEGMENTS ? N : B}};
    if (op == JIT_OP_EMBEDDING_SEGMENTS)
        s.num_segments = B;
    return s;
}

/* s, then its dims dynamic (E, the indices', the offsets' or ids', S) */
static void expect_both(jit_sig s, const char *name)
{
    char what[96];
    for (int dynamic = 0; dynamic <= 1; dynamic++) {
        if (dynamic)
            s = support_bag_dynamic(&s, 0);
        snprintf(what, sizeof what, "%s, type %d, %d threads%s", name, s.dtype, s.threads,
                 dynamic ? ", dynamic" : "");
        expect_hidden_counters(jit_dump(&s, JIT_DUMP_IR), jit_dump(&s, JIT_DUMP_IR_OPT), what);
    }
}

static void test_offsets(void **state)
{
    (void)state;
    static const jit_dtype types[] = {JIT_F32, JIT_BF16, JIT_F16};
    for (int t = 0; t < 3; t++)
        for (int threads = 1; threads <= 2; threads++) {
            if (types[t] == JIT_F16 && !support_jit_takes_f16_bags())
                continue; /* no F16C: no JIT IR for f16 tables */
            jit_sig s = bag_sig(JIT_OP_EMBEDDING_BAG_OFFSETS, types[t], 64, 20480, 2048);
            s.threads = threads;
            expect_both(s, "offsets");
        }
}

/* one lookup a bag: one bag at a time by default, interleaved with
 * TENSORJIT_INTERLEAVE (rows of 16 elements: at most 4 vectors, which
 * leave registers for another bag at every vector width); either way
 * every loop's counter hidden */
static void test_short_bags(void **state)
{
    (void)state;
    for (int together = 0; together <= 1; together++) {
        support_setenv("TENSORJIT_INTERLEAVE", together ? "4" : NULL);
        for (int threads = 1; threads <= 2; threads++) {
            jit_sig s = bag_sig(JIT_OP_EMBEDDING_BAG_OFFSETS, JIT_F32, 16, 8192, 8192);
            s.threads = threads;
            char *text = jit_explain(&s);
            assert_non_null(text);
            if ((strstr(text, "bags interleaved") != NULL) != together)
                fail_msg("TENSORJIT_INTERLEAVE %s, but: %s", together ? "4" : "unset", text);
            jit_free(text);
            expect_both(s, "short bags");
            s = bag_sig(JIT_OP_EMBEDDING_BAG_OFFSETS, JIT_F32, 128, 8192, 8192);
            s.threads = threads;
            expect_both(s, "short bags of wide rows");
            s = bag_sig(JIT_OP_EMBEDDING_BAG_PACKED, JIT_BF16, 128, 3, 4096);
            s.threads = threads;
            expect_both(s, "packed");
        }
    }
    support_setenv("TENSORJIT_INTERLEAVE", NULL);
}

/* A group of interleaved bags is one loop over their lookups (the
 * shorter ones skip their slot); the last group, short of bags, is the
 * same code; and the bags whose sums end in a NaN are left to the
 * reference kernel (one call after the bags), not to loops of their own
 * under the NaN rule: one lookup loop in all. Rows of 16 elements: one
 * block of columns at every vector width (a row of several blocks has a
 * loop over them, and one more lookup loop for a rest of columns), and 2
 * to 4 bags interleaved. */
static void test_group_loops(void **state)
{
    (void)state;
    support_setenv("TENSORJIT_INTERLEAVE", "4");
    jit_sig s = bag_sig(JIT_OP_EMBEDDING_BAG_OFFSETS, JIT_F32, 16, 8192, 8192);
    char *explained = jit_explain(&s);
    assert_non_null(explained);
    assert_non_null(strstr(explained, "bags interleaved"));
    jit_free(explained);
    char *ir = jit_dump(&s, JIT_DUMP_IR);
    assert_non_null(ir);
    int loops = count_defs(ir, "lookup.done");
    int redo = strstr(ir, "call i32 @tj_rt_bag_redo(") != NULL;
    free(ir);
    support_setenv("TENSORJIT_INTERLEAVE", NULL);
    if (loops != 1 || !redo)
        fail_msg("%d lookup loops, not 1; the reference kernel's redo %s", loops,
                 redo ? "called" : "not called");
}

/* A bf16 or f16 row of several vectors (32 elements: one block of
 * accumulators at every vector width) is rounded in one loop over them
 * (the rounding's code once, not once per vector); an f32 row, which has
 * nothing to round, stores its accumulators as they are. */
static void test_rounding_is_one_loop(void **state)
{
    (void)state;
    static const jit_dtype types[] = {JIT_BF16, JIT_F16, JIT_F32};
    for (int t = 0; t < 3; t++) {
        if (types[t] == JIT_F16 && !support_jit_takes_f16_bags())
            continue; /* no F16C: no JIT IR for f16 tables */
        jit_sig s = bag_sig(JIT_OP_EMBEDDING_BAG_PACKED, types[t], 32, 4096, 512);
        s.reduction = JIT_REDUCTION_MEAN;
        char *ir = jit_dump(&s, JIT_DUMP_IR_OPT);
        assert_non_null(ir);
        int loops = count_defs(ir, "narrow.done");
        int truncs = 0; /* trunc and fptrunc */
        for (const char *p = strstr(ir, "trunc "); p; p = strstr(p + 1, "trunc "))
            truncs++;
        free(ir);
        int want = types[t] == JIT_F32 ? 0 : 1;
        if (loops != want || (want && truncs > 2))
            fail_msg("dtype %d: %d rounding loops (want %d), %d narrowing instructions",
                     types[t], loops, want, truncs);
    }
}

/* The check pass is one call: a static kernel's to the runtime's scan
 * (exec/bag_scan.h), a dynamic kernel's to tj_rt_bag_dyn_begin, which
 * binds its dims and scans (and no scan of its own then); no check loop
 * for the code generator, in any form, on one thread or split; and no
 * call where nothing can be bad (packed indices under zero-fill). */
static void test_check_is_one_call(void **state)
{
    (void)state;
    static const jit_op ops[] = {JIT_OP_EMBEDDING_BAG_OFFSETS, JIT_OP_EMBEDDING_SEGMENTS,
                                 JIT_OP_EMBEDDING_BAG_PACKED};
    for (int i = 0; i < 3; i++)
        for (int threads = 1; threads <= 2; threads++)
            for (int dynamic = 0; dynamic <= 1; dynamic++) {
                jit_sig s = bag_sig(ops[i], JIT_F32, 64, 20480, 2048);
                s.threads = threads;
                if (dynamic)
                    s = support_bag_dynamic(&s, 0);
                char *ir = jit_dump(&s, JIT_DUMP_IR_OPT);
                assert_non_null(ir);
                int scans = count_calls(ir, "@tj_rt_bag_scan(");
                int begins = count_calls(ir, "@tj_rt_bag_dyn_begin(");
                int loops = strstr(ir, "check.done") != NULL;
                free(ir);
                if (scans != !dynamic || begins != dynamic || loops)
                    fail_msg("op %d, %d threads%s: %d calls to the scan, %d to the begin, %s",
                             ops[i], threads, dynamic ? ", dynamic" : "", scans, begins,
                             loops ? "a check loop" : "no check loop");
            }
    jit_sig s = bag_sig(JIT_OP_EMBEDDING_BAG_PACKED, JIT_F32, 64, 20, 2048);
    s.index_policy = JIT_INDEX_ZERO_FILL;
    char *ir = jit_dump(&s, JIT_DUMP_IR);
    assert_non_null(ir);
    int scans = count_calls(ir, "@tj_rt_bag_scan(");
    free(ir);
    assert_int_equal(scans, 0);
}

static void test_segments(void **state)
{
    (void)state;
    for (int threads = 1; threads <= 2; threads++) {
        jit_sig s = bag_sig(JIT_OP_EMBEDDING_SEGMENTS, JIT_F32, 64, 20480, 2048);
        s.threads = threads;
        expect_both(s, "segments");
    }
}

/* The rows a kernel prefetches ahead, from its --explain words (0: none). */
static long prefetch_rows(const jit_sig *s)
{
    char *text = jit_explain(s);
    assert_non_null(text);
    const char *at = strstr(text, "prefetch ");
    long rows = 0;
    if (at && sscanf(at, "prefetch %ld rows", &rows) != 1)
        rows = 0;
    jit_free(text);
    return rows;
}

/* Long bags (E1's 100 lookups) prefetch further ahead than short ones of
 * the same rows (E4's 20, E5's 8): each did best at its own distance. */
static void test_long_bags_prefetch_further(void **state)
{
    (void)state;
    support_setenv("TENSORJIT_PREFETCH_FAR", "0"); /* the rule of cores other than Intel's */
    jit_sig longer = bag_sig(JIT_OP_EMBEDDING_BAG_OFFSETS, JIT_F32, 64, 204800, 2048);
    jit_sig shorter = bag_sig(JIT_OP_EMBEDDING_BAG_OFFSETS, JIT_F32, 64, 40960, 2048);
    /* 2 GB tables: outside any host's last-level cache */
    longer.data_shape.dims[0] = shorter.data_shape.dims[0] = 8000000;
    long far = prefetch_rows(&longer), near = prefetch_rows(&shorter);
    support_setenv("TENSORJIT_PREFETCH_FAR", NULL);
    if (!(near > 0 && far > near))
        fail_msg("prefetch %ld rows ahead for bags of 100, %ld for bags of 20", far, near);
}

/* Whether text calls the primer (a void call, so not count_calls'), and
 * the priming distance a dynamic kernel passes to tj_rt_bag_dyn_begin
 * (its last argument; -1 without such a call). */
static int calls_primer(const char *text)
{
    return strstr(text, "call void @tj_rt_bag_prime(") != NULL;
}

static long begin_primes(const char *text)
{
    const char *p = strstr(text, "call i32 @tj_rt_bag_dyn_begin(");
    const char *end = p ? strchr(p, '\n') : NULL;
    if (!end)
        return -1;
    const char *close = end; /* the call's ')': its last argument before it */
    while (close > p && *close != ')')
        close--;
    const char *arg = close;
    while (arg > p && arg[-1] != ' ' && arg[-1] != '(')
        arg--;
    return close > p && arg < close ? strtol(arg, NULL, 10) : -1;
}

/* A dynamic kernel on one thread has tj_rt_bag_dyn_begin prime its call's
 * first rows (no primer call in the kernel: less code to generate); a
 * split one primes in its ranges, on the threads that read the rows; a
 * static kernel primes itself. Offsets and packed forms, from a 2 GB table
 * (which prefetches). */
static void test_dynamic_begin_primes(void **state)
{
    (void)state;
    static const jit_op ops[] = {JIT_OP_EMBEDDING_BAG_OFFSETS, JIT_OP_EMBEDDING_BAG_PACKED};
    for (int i = 0; i < 2; i++)
        for (int threads = 1; threads <= 2; threads++) {
            jit_sig s = bag_sig(ops[i], JIT_F32, 64, 204800, 2048);
            s.data_shape.dims[0] = 8000000;
            s.threads = threads;
            jit_sig d = support_bag_dynamic(&s, 0);
            char *ir = jit_dump(&s, JIT_DUMP_IR_OPT), *dyn = jit_dump(&d, JIT_DUMP_IR_OPT);
            assert_non_null(ir);
            assert_non_null(dyn);
            int primes = calls_primer(ir), dyn_primes = calls_primer(dyn);
            long ahead = begin_primes(dyn);
            free(ir);
            free(dyn);
            int ok = primes && (threads == 1 ? !dyn_primes && ahead > 0 : dyn_primes && ahead == 0);
            if (!ok)
                fail_msg("op %d, %d threads: static primer %d, dynamic primer %d, begin primes %ld",
                         ops[i], threads, primes, dyn_primes, ahead);
        }
}

static long long sysfs_cache_level_bytes(int level);

/* The rows a core that prefetches far (an Intel core, or as asked)
 * prefetches for short bags of `row_bytes` rows from a 2 GB table. */
static long far_rows(int64_t cols, int64_t N, int64_t B)
{
    jit_sig s = bag_sig(JIT_OP_EMBEDDING_BAG_OFFSETS, JIT_F32, cols, N, B);
    s.data_shape.dims[0] = (2LL << 30) / (cols * 4);
    return prefetch_rows(&s);
}

/* On an Intel core short bags from a table in memory prefetch further
 * (E2b 0.62-0.72 of the static kernel at 128 rows ahead against 0.80 at
 * 32 on the 16-core Xeon), within a share of the L2 that the T1 hint
 * fills; elsewhere they keep 32 (the AMD host's E4 lost 20% at 128). Long
 * bags keep 64 on either (E1 lost at 128 on the Xeon). The knob asks for
 * either rule on any host. */
static void test_intel_cores_prefetch_further(void **state)
{
    (void)state;
    support_setenv("TENSORJIT_PREFETCH_FAR", "0");
    long near = far_rows(128, 8192, 8192), near_narrow = far_rows(32, 40960, 2048);
    support_setenv("TENSORJIT_PREFETCH_FAR", "1");
    long far = far_rows(128, 8192, 8192), far_narrow = far_rows(32, 40960, 2048);
    long huge = far_rows(65536, 8192, 8192); /* 256 KB rows: the L2's share is 32 rows or less */
    long far_long = far_rows(64, 204800, 2048); /* E1's bags of 100 */
    support_setenv("TENSORJIT_PREFETCH_FAR", NULL);
    if (far_long != 64)
        fail_msg("long bags prefetch %ld rows ahead on an Intel core, not 64", far_long);
    if (!(near == 32 && near_narrow == 32))
        fail_msg("elsewhere: %ld and %ld rows ahead, not 32", near, near_narrow);
    long long l2 = sysfs_cache_level_bytes(2);
    if (l2 >= 2048 * 1024 && !(far == 128 && far_narrow == 128))
        fail_msg("a %lld-byte L2: %ld and %ld rows ahead, not 128", l2, far, far_narrow);
    if (l2 >= 1024 * 1024 && !(far > near && far_narrow > near_narrow))
        fail_msg("far: %ld and %ld rows ahead, no further than %ld and %ld", far, far_narrow,
                 near, near_narrow);
    if (far < near || far_narrow < near_narrow) /* whatever the L2: never nearer */
        fail_msg("far: %ld and %ld rows ahead, nearer than %ld and %ld", far, far_narrow, near,
                 near_narrow);
    if (huge != 32)
        fail_msg("rows of 256 KB: %ld ahead, not the least (32)", huge);
}

/* The host's last-level cache as --explain states it (-1: not stated). */
static long long explained_llc(const jit_sig *s)
{
    char *text = jit_explain(s);
    assert_non_null(text);
    const char *at = strstr(text, "last-level cache ");
    long long llc = -1;
    if (at && sscanf(at, "last-level cache %lld", &llc) != 1)
        llc = -1;
    jit_free(text);
    return llc;
}

/* The number in cpu0's sysfs cache entry `index`'s file `what`, times its
 * K or M (0: none): the oracle of runtime/host_cache.c, read here alone. */
static long long sysfs_value(int index, const char *what)
{
    char path[96];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/%s", index, what);
    FILE *f = fopen(path, "r");
    long long v = 0;
    char unit = 0;
    if (f && fscanf(f, "%lld%c", &v, &unit) >= 1)
        v *= unit == 'K' ? 1024 : unit == 'M' ? 1024 * 1024 : 1;
    if (f)
        fclose(f);
    return v;
}

/* The bytes of cpu0's cache of `level` in sysfs (0: none). */
static long long sysfs_cache_level_bytes(int level)
{
    for (int i = 0; i < 8; i++)
        if (sysfs_value(i, "level") == level)
            return sysfs_value(i, "size");
    return 0;
}

/* The largest cache the kernel's sysfs gives cpu0 (0: none). */
static long long sysfs_llc(void)
{
    long long best = 0;
    for (int i = 0; i < 8; i++) {
        long long v = sysfs_value(i, "size");
        best = v > best ? v : best;
    }
    return best;
}

/* On an Intel core (TENSORJIT_PREFETCH_FAR=1), short bags from a table
 * inside the last-level cache prefetch as far as long bags (E3's 15 MB:
 * its rows come from that cache), further than on other cores (=0),
 * where the cache changes nothing. The
 * cache's size is the kernel's sysfs one where it has one: glibc's
 * sysconf said ten times the L3 on an AMD guest. */
static void test_cached_tables_prefetch_by_core(void **state)
{
    (void)state;
    jit_sig s = bag_sig(JIT_OP_EMBEDDING_BAG_OFFSETS, JIT_F32, 128, 40960, 2048);
    long long llc = explained_llc(&s), sys = sysfs_llc();
    if (sys > 0 && llc != sys)
        fail_msg("--explain says a last-level cache of %lld bytes, sysfs %lld", llc, sys);
    if (llc <= 0)
        skip();
    jit_sig longer = bag_sig(JIT_OP_EMBEDDING_BAG_OFFSETS, JIT_F32, 128, 204800, 2048);
    long rows[2][2], long_rows = prefetch_rows(&longer); /* [far][inside] */
    for (int far = 0; far < 2; far++) {
        support_setenv("TENSORJIT_PREFETCH_FAR", far ? "1" : "0");
        s.data_shape.dims[0] = llc / 2 / 512; /* half the cache */
        rows[far][1] = prefetch_rows(&s);
        s.data_shape.dims[0] = 4 * (llc / 512);
        rows[far][0] = prefetch_rows(&s);
    }
    support_setenv("TENSORJIT_PREFETCH_FAR", NULL);
    if (!(rows[0][0] > 0 && rows[0][1] == rows[0][0]))
        fail_msg("other cores: %ld rows ahead inside the %lld-byte cache, %ld outside",
                 rows[0][1], llc, rows[0][0]);
    if (!(rows[1][1] == long_rows && rows[1][1] > rows[0][1]))
        fail_msg("Intel cores: %ld rows ahead inside the %lld-byte cache (other cores %ld), %ld "
                 "for long bags",
                 rows[1][1], llc, rows[0][1], long_rows);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_offsets),
        cmocka_unit_test(test_short_bags),
        cmocka_unit_test(test_group_loops),
        cmocka_unit_test(test_check_is_one_call),
        cmocka_unit_test(test_dynamic_begin_primes),
        cmocka_unit_test(test_rounding_is_one_loop),
        cmocka_unit_test(test_long_bags_prefetch_further),
        cmocka_unit_test(test_intel_cores_prefetch_further),
        cmocka_unit_test(test_cached_tables_prefetch_by_core),
        cmocka_unit_test(test_segments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
