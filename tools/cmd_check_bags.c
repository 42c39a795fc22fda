/* `tensorjit check embedding-bag-offsets | embedding-bag-packed |
 * embedding-segments`: the JIT kernel of one bag signature against the
 * reference kernel on random bags (tools/layer_check.c fills them). The
 * signature comes by the shape flags of the bag commands (cmd_bags.c);
 * --weights is a switch here (random weights), and there are no .npy
 * inputs. Which flags an op takes comes from jit_op_describe. */
#include <getopt.h>
#include <string.h>

#include "cli.h"
#include "layer_check.h"

enum { TJ_CB_TABLE, TJ_CB_INDICES, TJ_CB_OFFSETS, TJ_CB_INPUTS };

typedef struct tj_check_bag_opts {
    jit_op_info op;
    jit_shape shape[TJ_CB_INPUTS];
    int64_t bound[TJ_CB_INPUTS][JIT_MAX_RANK];
    int have_shape[TJ_CB_INPUTS];
    const char *wrong; /* an option the op does not take, as typed */
    char typed[64];
    int64_t opset, default_index, padding_idx, num_segments, num_segments_bound, runs, seed;
    int have_default_index, have_padding_idx, have_num_segments, include_last_offset;
    int weights, explain;
    jit_dtype dtype, index_type;
    jit_index_policy policy;
    jit_reduction reduction;
} tj_check_bag_opts;

enum { OPT_TABLE_SHAPE = 256, OPT_INDICES_SHAPE, OPT_OFFSETS_SHAPE, OPT_SEGMENT_IDS_SHAPE,
       OPT_NUM_SEGMENTS, OPT_REDUCTION, OPT_WEIGHTS, OPT_DEFAULT_INDEX, OPT_PADDING_IDX,
       OPT_LAST_OFFSET, OPT_OPSET, OPT_DTYPE, OPT_INDEX_TYPE, OPT_POLICY, OPT_RUNS, OPT_SEED,
       OPT_EXPLAIN, OPT_HELP };

static const struct option tj_check_bag_options[] = {
    {"table-shape", required_argument, NULL, OPT_TABLE_SHAPE},
    {"indices-shape", required_argument, NULL, OPT_INDICES_SHAPE},
    {"offsets-shape", required_argument, NULL, OPT_OFFSETS_SHAPE},
    {"segment-ids-shape", required_argument, NULL, OPT_SEGMENT_IDS_SHAPE},
    {"num-segments", required_argument, NULL, OPT_NUM_SEGMENTS},
    {"reduction", required_argument, NULL, OPT_REDUCTION},
    {"weights", no_argument, NULL, OPT_WEIGHTS},
    {"default-index", required_argument, NULL, OPT_DEFAULT_INDEX},
    {"padding-idx", required_argument, NULL, OPT_PADDING_IDX},
    {"include-last-offset", no_argument, NULL, OPT_LAST_OFFSET},
    {"opset", required_argument, NULL, OPT_OPSET},
    {"dtype", required_argument, NULL, OPT_DTYPE},
    {"index-type", required_argument, NULL, OPT_INDEX_TYPE},
    {"index-policy", required_argument, NULL, OPT_POLICY},
    {"runs", required_argument, NULL, OPT_RUNS},
    {"seed", required_argument, NULL, OPT_SEED},
    {"explain", no_argument, NULL, OPT_EXPLAIN},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

/* Whether op takes the option, by its attributes (as the op command's). */
static int tj_check_bag_takes(const jit_op_info *op, int c)
{
    return tj_cli_bag_takes(op, tj_check_bag_options, c);
}

const char *const *tj_cli_check_bag_words(const jit_op_info *op)
{
    static tj_cli_words_buf buf;
    return tj_cli_option_words(tj_check_bag_options, op, tj_check_bag_takes, &buf);
}

static int tj_check_bag_shape(tj_check_bag_opts *o, int input, const char *name, const char *arg)
{
    return tj_cli_shape_option(name, arg, &o->have_shape[input], &o->shape[input],
                               o->bound[input]);
}

/* The options every bag takes. */
static int tj_check_bag_common(tj_check_bag_opts *o, int c, const char *arg)
{
    switch (c) {
    case OPT_DTYPE: return tj_cli_dtype("--dtype", arg, &o->dtype);
    case OPT_INDEX_TYPE: return tj_cli_dtype("--index-type", arg, &o->index_type);
    case OPT_POLICY: return tj_cli_policy(arg, &o->policy);
    case OPT_RUNS: return tj_cli_int("--runs", arg, 1, 1000000, &o->runs);
    case OPT_SEED: return tj_cli_int("--seed", arg, INT64_MIN, INT64_MAX, &o->seed);
    case OPT_EXPLAIN: o->explain = 1; return 0;
    default: return -1;
    }
}

/* name: the long option's (static) name, without its dashes. */
static int tj_check_bag_option(tj_check_bag_opts *o, int c, const char *arg, const char *name)
{
    if (!tj_check_bag_takes(&o->op, c)) { /* reported after parsing, so that --help works */
        if (!o->wrong)
            o->wrong = name;
        return 0;
    }
    switch (c) {
    case OPT_TABLE_SHAPE: return tj_check_bag_shape(o, TJ_CB_TABLE, name, arg);
    case OPT_INDICES_SHAPE: return tj_check_bag_shape(o, TJ_CB_INDICES, name, arg);
    case OPT_OFFSETS_SHAPE:
    case OPT_SEGMENT_IDS_SHAPE: return tj_check_bag_shape(o, TJ_CB_OFFSETS, name, arg);
    case OPT_NUM_SEGMENTS:
        o->have_num_segments = 1;
        return tj_cli_num_segments(arg, &o->num_segments, &o->num_segments_bound);
    case OPT_REDUCTION: return tj_cli_bag_reduction(&o->op, arg, &o->reduction);
    case OPT_WEIGHTS: o->weights = 1; return 0;
    case OPT_DEFAULT_INDEX:
        o->have_default_index = 1;
        return tj_cli_int("--default-index", arg, INT64_MIN, INT64_MAX, &o->default_index);
    case OPT_PADDING_IDX:
        o->have_padding_idx = 1;
        return tj_cli_int("--padding-idx", arg, INT64_MIN, INT64_MAX, &o->padding_idx);
    case OPT_LAST_OFFSET: o->include_last_offset = 1; return 0;
    case OPT_OPSET: return tj_cli_opset(&o->op, arg, &o->opset);
    default: return tj_check_bag_common(o, c, arg);
    }
}

/* An option getopt refused: a known one without its value, or an unknown
 * one, with the nearest flag of this op. */
static void tj_check_bag_bad_option(const jit_op_info *op, const char *arg)
{
    char what[96];
    snprintf(what, sizeof what, "check %s", op->command);
    if (tj_cli_known_option(what, tj_check_bag_options, arg))
        return;
    snprintf(what, sizeof what, "check %s: unknown option", op->command);
    tj_cli_unknown(what, arg, tj_cli_check_bag_words(op));
}

/* The shapes the op needs; 0 or -1 (error printed). */
static int tj_check_bag_required(const tj_check_bag_opts *o)
{
    const char *cmd = o->op.command;
    int offsets = (o->op.attrs & JIT_ATTR_OFFSETS) != 0;
    int seg = tj_cli_bag_segments(&o->op);
    const char *off_flag = seg ? "--segment-ids-shape" : "--offsets-shape";
    for (int i = 0; i < TJ_CB_INPUTS; i++) {
        if (o->have_shape[i] || (i == TJ_CB_OFFSETS && !offsets))
            continue;
        const char *flag = i == TJ_CB_TABLE ? "--table-shape"
                           : i == TJ_CB_INDICES ? "--indices-shape" : off_flag;
        return tj_cli_fail("check %s: %s is missing (--table-shape%s--indices-shape%s%s are "
                           "required)", cmd, flag, offsets ? ", " : " and ",
                           offsets ? " and " : "", offsets ? off_flag : ""), -1;
    }
    if (seg && !o->have_num_segments)
        return tj_cli_fail("check %s: --num-segments S is required (the output's rows)", cmd),
               -1;
    return 0;
}

/* What the bag command takes and check does not, refused by name before
 * getopt sees it: getopt would read --table T.npy as an abbreviation of
 * --table-shape and complain of a shape "T.npy", and -o as a known flag
 * without its value. 0, or -1 (error printed). */
static int tj_check_bag_not_ours(const jit_op_info *op, int argc, char **argv)
{
    int seg = tj_cli_bag_segments(op);
    /* the op's own: another op's --offsets is unknown here, as getopt says */
    const char *const files[] = {"table", "indices",
                                 seg                              ? "segment-ids"
                                 : op->attrs & JIT_ATTR_OFFSETS ? "offsets"
                                                                  : "table"};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0)
            return 0;
        if ((a[0] == '-' && a[1] == 'o') || strncmp(a, "--output", 8) == 0)
            if (a[1] == 'o' || a[8] == '\0' || a[8] == '=')
                return tj_cli_fail("check %s: -o is not an option of tensorjit check (it "
                                   "writes no result)", op->command), -1;
        for (size_t k = 0; k < sizeof files / sizeof *files; k++) {
            size_t n = strlen(files[k]);
            if (strncmp(a, "--", 2) == 0 && strncmp(a + 2, files[k], n) == 0 &&
                (a[n + 2] == '\0' || a[n + 2] == '='))
                return tj_cli_fail("check %s: --%s FILE is not an option of check, whose "
                                   "random bags need only shapes (--%s-shape); `tensorjit %s "
                                   "--%s FILE ...` runs .npy files", op->command, files[k],
                                   files[k], op->command, files[k]), -1;
        }
    }
    return 0;
}

/* 0, 1 for --help (exit 0), or -1 after printing the error. */
static int tj_check_bag_parse(const jit_op_info *op, int argc, char **argv,
                              tj_check_bag_opts *o)
{
    memset(o, 0, sizeof *o);
    o->op = *op;
    o->dtype = JIT_F32;
    o->index_type = JIT_I64;
    o->opset = tj_cli_newest_opset(op);
    o->runs = 100;
    o->seed = 1;
    if (tj_check_bag_not_ours(op, argc, argv) != 0)
        return -1;
    optind = 1;
    opterr = 0;
    int c, at;
    while ((c = getopt_long(argc, argv, "h", tj_check_bag_options, &at)) != -1) {
        if (c == OPT_HELP || c == 'h') {
            tj_cli_usage_check_bag(op, stdout);
            return 1;
        }
        if (c == '?' || c == ':')
            return tj_check_bag_bad_option(op, argv[optind - 1]), -1;
        const char *noted = o->wrong;
        if (tj_check_bag_option(o, c, optarg, tj_check_bag_options[at].name) != 0)
            return -1;
        if (o->wrong != noted)
            o->wrong = tj_cli_typed_option(argv, optind, optarg, o->typed, sizeof o->typed);
    }
    if (optind < argc)
        return tj_cli_fail("check %s: unexpected argument '%s'", op->command, argv[optind]), -1;
    if (o->wrong)
        return tj_cli_fail("%s is not an option of check %s", o->wrong, op->command), -1;
    return tj_check_bag_required(o);
}

/* The signature of the flags, as the op command builds it. */
static jit_sig tj_check_bag_sig(const tj_check_bag_opts *o)
{
    jit_sig sig = {.op = o->op.op, .opset = (int)o->opset, .dtype = o->dtype,
                   .index_type = o->index_type, .index_policy = o->policy,
                   .reduction = o->reduction, .has_weights = o->weights,
                   .has_default_index = o->have_default_index,
                   .default_index = o->default_index, .has_padding_idx = o->have_padding_idx,
                   .padding_idx = o->padding_idx, .include_last_offset = o->include_last_offset,
                   .num_segments = o->num_segments,
                   .num_segments_bound = o->num_segments_bound,
                   .data_shape = o->shape[TJ_CB_TABLE],
                   .indices_shape = o->shape[TJ_CB_INDICES]};
    if (o->op.attrs & JIT_ATTR_OFFSETS)
        sig.updates_shape = o->shape[TJ_CB_OFFSETS];
    memcpy(sig.data_bound, o->bound[TJ_CB_TABLE], sizeof sig.data_bound);
    memcpy(sig.indices_bound, o->bound[TJ_CB_INDICES], sizeof sig.indices_bound);
    memcpy(sig.updates_bound, o->bound[TJ_CB_OFFSETS], sizeof sig.updates_bound);
    return sig;
}

int tj_cmd_check_bag(const jit_op_info *op, int argc, char **argv)
{
    tj_check_bag_opts o;
    int rc = tj_check_bag_parse(op, argc, argv, &o);
    if (rc)
        return rc > 0 ? TJ_EXIT_OK : TJ_EXIT_USAGE;
    jit_sig sig = tj_check_bag_sig(&o);
    if (tj_cli_check_sig(&o.op, &sig) != 0)
        return TJ_EXIT_USAGE;
    /* valid? a dynamic family's output may not have one rank: its kernel says */
    jit_shape shape;
    if (jit_sig_is_dynamic(&sig) ? !jit_compile(&sig) : jit_output_shape(&sig, &shape) != 0)
        return tj_cli_fail("%s", jit_last_error());
    if (o.explain) {
        char *text = jit_explain(&sig);
        if (!text)
            return tj_cli_fail("%s", jit_last_error());
        fputs(text, stdout);
        jit_free(text);
    }
    if (jit_sig_is_dynamic(&sig))
        return tj_cli_check_dynamic(&sig, (int)o.runs, (uint64_t)o.seed, o.op.command);
    tj_check_result r;
    tj_check_layer(&sig, (int)o.runs, (uint64_t)o.seed, INT64_C(1) << 32, &r);
    return tj_cli_check_report(&r, op->command);
}
