/* The man page and --help against the op table: the man page and `tensorjit
 * --help` name every op of jit_op_describe, and the man page documents
 * every flag that a command's --help lists, every index policy and
 * reduction, and --help says what demo really runs. A new op, flag or
 * policy without its description fails here. */
#define _DEFAULT_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tensorjit.h"

#ifndef TJ_CLI_PATH
#error "TJ_CLI_PATH must name the tensorjit binary"
#endif
#ifndef TJ_MAN_PATH
#error "TJ_MAN_PATH must name tools/tensorjit.1"
#endif

static char man[1 << 18], text[1 << 18];

static void slurp_stream(FILE *f, char *buf, size_t len)
{
    size_t n = f ? fread(buf, 1, len - 1, f) : 0;
    buf[n] = '\0';
}

/* stdout of `tensorjit ARGS` into text. */
static void cli(const char *args)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s %s 2>/dev/null", TJ_CLI_PATH, args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    slurp_stream(p, text, sizeof text);
    pclose(p);
}

/* "--batch-dims" as roff writes it: "\-\-batch\-dims". */
static void roff(const char *word, char *out, size_t len)
{
    size_t n = 0;
    for (; *word && n + 3 < len; word++) {
        if (*word == '-')
            out[n++] = '\\';
        out[n++] = *word;
    }
    out[n] = '\0';
}

static int setup(void **state)
{
    (void)state;
    FILE *f = fopen(TJ_MAN_PATH, "r");
    if (!f)
        return -1;
    slurp_stream(f, man, sizeof man);
    fclose(f);
    return 0;
}

/* An entry of the man page: a .TP paragraph whose tag line names the
 * command first. */
static int man_entry(const char *command)
{
    char word[128], tag[160];
    roff(command, word, sizeof word);
    const char *forms[] = {".TP\n.B %s\n", ".TP\n.B %s ", ".TP\n.BR %s ", ".TP\n.BI %s "};
    for (size_t i = 0; i < sizeof forms / sizeof *forms; i++) {
        snprintf(tag, sizeof tag, forms[i], word);
        if (strstr(man, tag))
            return 1;
    }
    return 0;
}

static void test_every_op_in_man_page_and_help(void **state)
{
    (void)state;
    cli("--help");
    for (int op = JIT_OP_NONE + 1; op < JIT_OP_COUNT; op++) {
        jit_op_info info;
        assert_int_equal(jit_op_describe((jit_op)op, &info), 0);
        if (!man_entry(info.command))
            fail_msg("the man page has no entry for %s", info.command);
        if (!strstr(text, info.command))
            fail_msg("tensorjit --help does not name %s", info.command);
    }
    static const char *const others[] = {"model", "check", "cache", "bench", "demo"};
    for (size_t i = 0; i < sizeof others / sizeof *others; i++)
        if (!man_entry(others[i]))
            fail_msg("the man page has no entry for %s", others[i]);
}

/* Every "--flag" of `COMMAND --help` is in the man page. */
static void expect_flags_documented(const char *command)
{
    char args[128];
    snprintf(args, sizeof args, "%s --help", command);
    cli(args);
    if (strncmp(text, "usage: tensorjit ", 17) != 0)
        fail_msg("tensorjit %s: no usage", args);
    int flags = 0;
    for (const char *p = text; (p = strstr(p, "--")); ) {
        size_t n = 2 + strspn(p + 2, "abcdefghijklmnopqrstuvwxyz-");
        char flag[64], word[128];
        snprintf(flag, sizeof flag, "%.*s", (int)n, p);
        p += n;
        if (n == 2)
            continue;
        flags++;
        roff(flag, word, sizeof word);
        if (!strstr(man, word))
            fail_msg("%s --help lists %s, which the man page does not document", command, flag);
    }
    assert_true(flags > 0 || strcmp(command, "demo") == 0 || strcmp(command, "cache") == 0);
}

static void test_every_flag_in_man_page(void **state)
{
    (void)state;
    for (int op = JIT_OP_NONE + 1; op < JIT_OP_COUNT; op++) {
        jit_op_info info;
        assert_int_equal(jit_op_describe((jit_op)op, &info), 0);
        expect_flags_documented(info.command);
    }
    static const char *const others[] = {"model", "check", "cache", "bench", "demo"};
    for (size_t i = 0; i < sizeof others / sizeof *others; i++)
        expect_flags_documented(others[i]);
    char word[128];
    for (int p = 0; p < JIT_INDEX_POLICY_COUNT; p++) {
        roff(jit_index_policy_name((jit_index_policy)p), word, sizeof word);
        if (!strstr(man, word))
            fail_msg("the man page does not name the index policy %s", word);
    }
    for (int r = 0; r < JIT_REDUCTION_COUNT; r++) {
        roff(jit_reduction_name((jit_reduction)r), word, sizeof word);
        if (!strstr(man, word))
            fail_msg("the man page does not name the reduction %s", word);
    }
}

/* --help's words about demo name each layer demo runs ("== GatherND-8
 * example 1: ..." in its output). */
static void test_help_says_what_demo_runs(void **state)
{
    (void)state;
    static char demo[1 << 16];
    cli("demo");
    memcpy(demo, text, sizeof demo - 1);
    demo[sizeof demo - 1] = '\0';
    cli("--help");
    const char *line = strstr(text, "\n  demo ");
    assert_non_null(line);
    const char *end = strstr(line + 1, "\n  --");
    int layers = 0;
    for (const char *p = demo; (p = strstr(p, "== ")); p += 3) {
        if (p != demo && p[-1] != '\n')
            continue; /* a title starts its line */
        char layer[64];
        size_t n = strcspn(p + 3, " :\n");
        snprintf(layer, sizeof layer, "%.*s", (int)n, p + 3);
        const char *at = strstr(line, layer);
        if (!at || (end && at > end))
            fail_msg("demo runs %s, which --help's demo line does not name", layer);
        layers++;
    }
    /* the embedding bags are left out until the model reader reads their
     * OpenVINO layers (demo runs layers through it) */
    int ops = 0;
    for (int op = JIT_OP_NONE + 1; op < JIT_OP_COUNT; op++) {
        jit_op_info info;
        ops += jit_op_describe((jit_op)op, &info) == 0 && !(info.attrs & JIT_ATTR_BAG);
    }
    assert_true(layers >= ops - 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_op_in_man_page_and_help),
        cmocka_unit_test(test_every_flag_in_man_page),
        cmocka_unit_test(test_help_says_what_demo_runs),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
