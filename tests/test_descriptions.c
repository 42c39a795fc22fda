/* Every text that says what tensorjit is names every op of the op table:
 * the README's first paragraph, the header's opening comment, the
 * generated tensorjit.pc, CPack's summary and description, pyproject.toml's
 * description and python/README.md's first paragraph. The op names come
 * from the library (jit_op_describe), so an op added to the table fails
 * here until each text names it too. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "support.h"
#include "tensorjit.h"

#ifndef TJ_SOURCE_DIR
#error "TJ_SOURCE_DIR must name the source tree"
#endif
#ifndef TJ_BINARY_DIR
#error "TJ_BINARY_DIR must name the build tree"
#endif

/* The first paragraph after the title: a Markdown file's opening, blank
 * lines and the `# title` line skipped, up to the next blank line. Cuts
 * `text` in place and returns a pointer into it. */
static char *first_paragraph(char *text)
{
    char *p = text;
    for (;;) {
        if (*p == '\n') {
            p++;
        } else if (*p == '#') {
            char *eol = strchr(p, '\n');
            p = eol ? eol : p + strlen(p);
        } else {
            break;
        }
    }
    char *end = strstr(p, "\n\n");
    if (end)
        *end = '\0';
    return p;
}

/* From the first occurrence of `open` to the next `close` (both excluded),
 * cut in place; NULL when either is missing. */
static char *between(char *text, const char *open, const char *close)
{
    char *p = strstr(text, open);
    if (!p)
        return NULL;
    p += strlen(open);
    char *end = strstr(p, close);
    if (!end)
        return NULL;
    *end = '\0';
    return p;
}

static int is_word_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_';
}

/* `name` as a word of its own: "Gather" inside "GatherND" does not count. */
static int names(const char *text, const char *name)
{
    size_t len = strlen(name);
    for (const char *p = strstr(text, name); p; p = strstr(p + 1, name)) {
        if ((p == text || !is_word_char(p[-1])) && !is_word_char(p[len]))
            return 1;
    }
    return 0;
}

/* The number of the op table's ops that `text` (what `where` says it is)
 * leaves out, each named on stderr; -1 when the text was not found. */
static int missing_ops(const char *where, const char *text)
{
    if (!text) {
        print_error("%s: not found\n", where);
        return -1;
    }
    int missing = 0;
    for (int op = JIT_OP_NONE + 1; op < JIT_OP_COUNT; op++) {
        jit_op_info info;
        if (jit_op_describe((jit_op)op, &info) != 0) {
            print_error("jit_op_describe(%d) failed: %s\n", op, jit_last_error());
            return -1;
        }
        if (!names(text, info.name)) {
            print_error("%s does not name %s\n", where, info.name);
            missing++;
        }
    }
    if (missing)
        print_error("  (it names %d of the op table's %d ops) text: %s\n",
                    JIT_OP_COUNT - 1 - missing, JIT_OP_COUNT - 1, text);
    return missing;
}

/* The part of file `name` under `dir` that `cut` picks names every op. */
static void expect_every_op(const char *where, const char *dir, const char *name,
                            char *(*cut)(char *))
{
    char *text = support_read_file(dir, name);
    int missing = missing_ops(where, cut(text));
    free(text);
    assert_int_equal(missing, 0);
}

static char *header_comment_text(char *text)
{
    return between(text, "/*", "*/");
}

static char *pc_description(char *text)
{
    return between(text, "\nDescription:", "\n");
}

static char *cpack_summary_text(char *text)
{
    return between(text, "set(CPACK_PACKAGE_DESCRIPTION_SUMMARY \"", "\")");
}

static char *cpack_description_text(char *text)
{
    return between(text, "set(CPACK_PACKAGE_DESCRIPTION \"", "\")");
}

static char *pyproject_description(char *text)
{
    return between(text, "\ndescription = \"", "\"\n");
}

static void readme_opening(void **state)
{
    (void)state;
    expect_every_op("README.md's first paragraph", TJ_SOURCE_DIR, "README.md",
                    first_paragraph);
}

static void header_comment(void **state)
{
    (void)state;
    expect_every_op("include/tensorjit.h's opening comment", TJ_SOURCE_DIR,
                    "include/tensorjit.h", header_comment_text);
}

static void pkg_config(void **state)
{
    (void)state;
    expect_every_op("tensorjit.pc's Description", TJ_BINARY_DIR, "tensorjit.pc",
                    pc_description);
}

static void cpack_summary(void **state)
{
    (void)state;
    expect_every_op("CPACK_PACKAGE_DESCRIPTION_SUMMARY", TJ_BINARY_DIR, "CPackConfig.cmake",
                    cpack_summary_text);
}

static void cpack_description(void **state)
{
    (void)state;
    expect_every_op("CPACK_PACKAGE_DESCRIPTION", TJ_BINARY_DIR, "CPackConfig.cmake",
                    cpack_description_text);
}

static void pyproject(void **state)
{
    (void)state;
    expect_every_op("python/pyproject.toml's description", TJ_SOURCE_DIR,
                    "python/pyproject.toml", pyproject_description);
}

static void python_readme_opening(void **state)
{
    (void)state;
    expect_every_op("python/README.md's first paragraph", TJ_SOURCE_DIR, "python/README.md",
                    first_paragraph);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(readme_opening),    cmocka_unit_test(header_comment),
        cmocka_unit_test(pkg_config),        cmocka_unit_test(cpack_summary),
        cmocka_unit_test(cpack_description), cmocka_unit_test(pyproject),
        cmocka_unit_test(python_readme_opening),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
