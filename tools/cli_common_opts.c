/* The flags every op command takes (`tensorjit OP`, cmd_run.c, and the
 * embedding bags', cmd_bags.c): their getopt entries, their values, and
 * what both do with a flag getopt refused. The flags an op's inputs and
 * attributes bring stay with each command. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

void tj_cli_common_init(tj_cli_common *c, const jit_op_info *op)
{
    memset(c, 0, sizeof *c);
    c->dump = -1;
    c->dtype = JIT_F32;
    c->index_type = JIT_I64;
    c->opset = tj_cli_newest_opset(op); /* what a user means today; 0 is the C API's default */
}

int tj_cli_common_option(tj_cli_common *c, int code, const char *arg)
{
    switch (code) {
    case 'o': c->output = arg; return 0;
    case TJ_OPT_ENGINE: return tj_cli_engine(arg, &c->engine);
    case TJ_OPT_POLICY: return tj_cli_policy(arg, &c->policy);
    case TJ_OPT_VERBOSE: c->verbose = 1; return 0;
    case TJ_OPT_EXPLAIN: c->explain = 1, c->shows++; return 0;
    case TJ_OPT_DUMP_IR: c->shows++; return tj_cli_dump_ir(arg, &c->dump);
    case TJ_OPT_DUMP_ASM: c->dump = JIT_DUMP_ASM, c->shows++; return 0;
    case TJ_OPT_DTYPE: c->have_dtype = 1; return tj_cli_dtype("--dtype", arg, &c->dtype);
    case TJ_OPT_INDEX_TYPE:
        c->have_index_type = 1;
        return tj_cli_dtype("--index-type", arg, &c->index_type);
    default: return 1;
    }
}

int tj_cli_common_files(const tj_cli_common *c, const char *cmd)
{
    if (c->have_dtype || c->have_index_type)
        return tj_cli_fail("%s: %s goes with a signature by shapes: .npy files name their own "
                           "types (their headers' dtypes)", cmd,
                           c->have_dtype ? "--dtype" : "--index-type"), -1;
    return 0;
}

int tj_cli_common_check(const tj_cli_common *c, const char *cmd, int check)
{
    if (c->shows > 1)
        return tj_cli_fail("%s: give one of --explain, --dump-ir, --dump-asm (each prints a "
                           "text of its own)", cmd), -1;
    if (c->output && check)
        return tj_cli_fail("%s: -o is not an option of tensorjit check (it writes no result)",
                           cmd), -1;
    if (c->output && c->shows)
        return tj_cli_fail("%s: -o writes the result of a run; --explain, --dump-ir and "
                           "--dump-asm print text instead: give one or the other", cmd), -1;
    return 0;
}

int tj_cli_opset(const jit_op_info *op, const char *arg, int64_t *opset)
{
    char versions[64];
    if (tj_cli_int("--opset", arg, 0, 100, opset) != 0)
        return -1;
    for (int i = 0; i < 4 && op->opsets[i]; i++)
        if (op->opsets[i] == *opset)
            return 0;
    tj_cli_opsets_text(op, ", ", " or ", versions, sizeof versions);
    return tj_cli_fail("--opset=%s must be %s", arg, versions), -1;
}

const char *const *tj_cli_option_words(const struct option *options,
                                       const jit_op_info *op,
                                       int (*takes)(const jit_op_info *op, int code),
                                       tj_cli_words_buf *buf)
{
    size_t n = 0;
    for (const struct option *o = options; o->name && n + 1 < TJ_CLI_MAX_OPTIONS; o++)
        if (!takes || takes(op, o->val)) {
            snprintf(buf->names[n], sizeof buf->names[n], "--%s", o->name);
            buf->words[n] = buf->names[n];
            n++;
        }
    buf->words[n] = NULL;
    return buf->words;
}

int tj_cli_known_option(const char *cmd, const struct option *options, const char *arg)
{
    size_t len = strcspn(arg, "=");
    if (strcmp(arg, "-o") == 0) /* the short -o, last with no value */
        return tj_cli_fail("%s: -o needs a value (OUT.npy, or - for stdout)", cmd), 1;
    for (const struct option *o = options; o->name; o++)
        if (arg[0] == '-' && arg[1] == '-' && strlen(o->name) == len - 2 &&
            strncmp(arg + 2, o->name, len - 2) == 0) {
            if (o->has_arg == no_argument && arg[len] == '=')
                tj_cli_fail("%s: --%s takes no value (given '%s')", cmd, o->name, arg + len + 1);
            else
                tj_cli_fail("%s: --%s needs a value", cmd, o->name);
            return 1;
        }
    return 0;
}

void tj_cli_bad_option(const char *cmd, const struct option *options, const char *arg,
                       const char *const *words)
{
    char what[96];
    if (tj_cli_known_option(cmd, options, arg))
        return;
    snprintf(what, sizeof what, "%s: unknown option", cmd);
    tj_cli_unknown(what, arg, words);
}

int tj_cli_print_dump(char *text)
{
    if (!text)
        return tj_cli_fail("%s", jit_last_error());
    fputs(text, stdout);
    jit_free(text);
    return TJ_EXIT_OK;
}

int tj_cli_bag_segments(const jit_op_info *op)
{
    return (op->attrs & JIT_ATTR_NUM_SEGMENTS) != 0;
}

/* The attribute a bag option needs, by its long name (0: every bag op
 * takes it). */
static unsigned tj_bag_option_attr(const char *name)
{
    static const struct {
        const char *name;
        unsigned attr;
    } needs[] = {{"offsets", JIT_ATTR_OFFSETS},           {"offsets-shape", JIT_ATTR_OFFSETS},
                 {"segment-ids", JIT_ATTR_NUM_SEGMENTS},  {"segment-ids-shape", JIT_ATTR_NUM_SEGMENTS},
                 {"num-segments", JIT_ATTR_NUM_SEGMENTS}, {"weights", JIT_ATTR_WEIGHTS},
                 {"weights-shape", JIT_ATTR_WEIGHTS},     {"default-index", JIT_ATTR_DEFAULT_INDEX},
                 {"padding-idx", JIT_ATTR_PADDING_IDX},   {"include-last-offset", JIT_ATTR_LAST_OFFSET},
                 {"reduction", JIT_ATTR_REDUCTION}};
    for (size_t i = 0; i < sizeof needs / sizeof *needs; i++)
        if (strcmp(name, needs[i].name) == 0)
            return needs[i].attr;
    return 0;
}

int tj_cli_bag_takes(const jit_op_info *op, const struct option *options, int code)
{
    const struct option *o = options;
    while (o->name && o->val != code)
        o++;
    if (!o->name)
        return 1;
    if (strcmp(o->name, "opset") == 0)
        return op->opsets[1] != 0;
    unsigned need = tj_bag_option_attr(o->name);
    if (need == JIT_ATTR_OFFSETS) /* the segments op's ids come in the offsets' place */
        return (op->attrs & need) && !tj_cli_bag_segments(op);
    return need == 0 || (op->attrs & need) != 0;
}

int tj_cli_shape_option(const char *name, const char *arg, int *have, jit_shape *shape,
                        int64_t *bound)
{
    char opt[40];
    snprintf(opt, sizeof opt, "--%s", name);
    *have = 1;
    return tj_cli_parse_shape(opt, arg, shape, bound);
}

/* --num-segments S, or ? / ?:N: a dynamic S (with its bound). */
int tj_cli_num_segments(const char *arg, int64_t *num_segments, int64_t *bound_out)
{
    if (arg[0] == '?') {
        jit_shape s;
        int64_t bound[JIT_MAX_RANK];
        if (tj_cli_parse_shape("--num-segments", arg, &s, bound))
            return -1;
        *num_segments = JIT_DIM_DYNAMIC;
        *bound_out = bound[0];
        return 0;
    }
    return tj_cli_int("--num-segments", arg, 0, INT64_MAX, num_segments);
}

/* --reduction X of a bag op: one of the op's own, by its own name ("add",
 * the scatters' other name of sum, is not one: Python refuses it too), or
 * "--reduction=X must be one of sum, mean, max". */
int tj_cli_bag_reduction(const jit_op_info *op, const char *arg, jit_reduction *out)
{
    char names[64] = "";
    size_t n = 0;
    if (jit_reduction_from_name(arg, out) == 0 && *out != JIT_REDUCTION_NONE &&
        (op->reductions & (1u << *out)) && strcmp(arg, jit_reduction_name(*out)) == 0)
        return 0;
    for (int r = 1; r < JIT_REDUCTION_COUNT && n < sizeof names; r++)
        if (op->reductions & (1u << r))
            n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", n ? ", " : "",
                                  jit_reduction_name((jit_reduction)r));
    return tj_cli_fail("--reduction=%s must be one of %s", arg, names), -1;
}

/* getopt_long takes any unambiguous prefix of a long option and reports
 * the full name: `--offsets` reads as --offsets-shape where only that
 * begins so, and a message naming the full name speaks of a flag the user
 * never typed. The option just read, as typed: argv[next - 1], or the word
 * before it where that was the option's value; without any =value. */
const char *tj_cli_typed_option(char *const argv[], int next, const char *arg, char *buf,
                                size_t len)
{
    const char *a = next >= 1 ? argv[next - 1] : "";
    if (arg && arg == a && next >= 2)
        a = argv[next - 2];
    snprintf(buf, len, "%.*s", (int)strcspn(a, "="), a);
    return buf;
}
