/* `tensorjit OP` for every op of the library (gather-nd, gather,
 * scatter-update, ...): run one kernel on .npy files through the public
 * generic API, as a user of the library would. What an op takes (its
 * attributes, updates, versions) comes from jit_op_describe: nothing here
 * knows one op from another. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "layer_check.h"
#include "npy.h"

typedef struct tj_run_opts {
    jit_op_info op;
    tj_cli_common common;                   /* -o, --engine, --dump-ir, --opset, ... */
    const char *data, *indices, *updates;
    int64_t batch_dims, axis;
    int have_axis;
    const char *wrong;                      /* an option the op does not take */
    char typed[64];                         /* wrong as typed */
    int check;                              /* tensorjit check: differential runs */
    int64_t runs, seed;
    jit_shape data_shape, indices_shape, updates_shape; /* a signature given by flags */
    int have_data_shape, have_indices_shape, have_updates_shape;
    int64_t data_bound[JIT_MAX_RANK], indices_bound[JIT_MAX_RANK], updates_bound[JIT_MAX_RANK];
    tj_dyn_spec dynamic;                    /* --dynamic: dims of the .npy inputs */
    jit_reduction reduction;
    int no_init_val;
    int torch_dims;
} tj_run_opts;

enum { OPT_DATA = TJ_OPT_OWN, OPT_INDICES, OPT_UPDATES, OPT_BATCH_DIMS, OPT_OPSET, OPT_AXIS,
       OPT_DATA_SHAPE, OPT_INDICES_SHAPE, OPT_UPDATES_SHAPE, OPT_RUNS, OPT_SEED, OPT_REDUCTION,
       OPT_NO_INIT_VAL, OPT_DYNAMIC, OPT_TORCH_DIMS };

static const struct option tj_run_options[] = {
    {"data", required_argument, NULL, OPT_DATA},
    {"indices", required_argument, NULL, OPT_INDICES},
    {"updates", required_argument, NULL, OPT_UPDATES},
    {"batch-dims", required_argument, NULL, OPT_BATCH_DIMS},
    {"opset", required_argument, NULL, OPT_OPSET},
    {"axis", required_argument, NULL, OPT_AXIS},
    TJ_CLI_COMMON_OPTIONS,
    {"runs", required_argument, NULL, OPT_RUNS},
    {"seed", required_argument, NULL, OPT_SEED},
    {"reduction", required_argument, NULL, OPT_REDUCTION},
    {"no-init-val", no_argument, NULL, OPT_NO_INIT_VAL},
    {"torch-dims", no_argument, NULL, OPT_TORCH_DIMS},
    {"data-shape", required_argument, NULL, OPT_DATA_SHAPE},
    {"indices-shape", required_argument, NULL, OPT_INDICES_SHAPE},
    {"updates-shape", required_argument, NULL, OPT_UPDATES_SHAPE},
    {"dynamic", required_argument, NULL, OPT_DYNAMIC},
    {NULL, 0, NULL, 0},
};

static int tj_has_versions(const jit_op_info *op)
{
    return op->opsets[1] != 0;
}

/* Notes an option the op does not take; reported after parsing, so that
 * --help still works. */
static int tj_wrong(tj_run_opts *o, const char *option)
{
    if (!o->wrong)
        o->wrong = option;
    return 0;
}

/* 0 when the op takes the attribute; else the option is noted and 1. */
static int tj_takes(tj_run_opts *o, unsigned attr, const char *option)
{
    if (o->op.attrs & attr)
        return 0;
    tj_wrong(o, option);
    return 1;
}

/* "--reduction=X must be none, sum, ..." with the op's own reductions. */
static int tj_run_bad_reduction(const tj_run_opts *o, const char *arg)
{
    char names[128] = "";
    size_t n = 0;
    for (int r = 0; r < JIT_REDUCTION_COUNT && n < sizeof names; r++)
        if (o->op.reductions & (1u << r))
            n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", n ? ", " : "",
                                  jit_reduction_name((jit_reduction)r));
    return tj_cli_fail("--reduction=%s must be one of %s (add and mul are sum and prod)", arg,
                       names), -1;
}

static int tj_run_option(tj_run_opts *o, int c, const char *arg)
{
    switch (c) {
    case OPT_DATA: o->data = arg; return 0;
    case OPT_INDICES: o->indices = arg; return 0;
    case OPT_UPDATES:
        if (tj_takes(o, JIT_ATTR_UPDATES, "--updates"))
            return 0; /* noted: refused after parsing, with its line */
        o->updates = arg;
        return 0;
    case OPT_BATCH_DIMS:
        if (tj_takes(o, JIT_ATTR_BATCH_DIMS, "--batch-dims"))
            return 0;
        return tj_cli_int("--batch-dims", arg, -JIT_MAX_RANK, JIT_MAX_RANK, &o->batch_dims);
    case OPT_OPSET:
        if (!tj_has_versions(&o->op))
            return tj_wrong(o, "--opset");
        return tj_cli_opset(&o->op, arg, &o->common.opset);
    case OPT_AXIS:
        o->have_axis = 1;
        if (tj_takes(o, JIT_ATTR_AXIS, "--axis"))
            return 0;
        return tj_cli_int("--axis", arg, -JIT_MAX_RANK, JIT_MAX_RANK, &o->axis);
    case OPT_RUNS:
        if (!o->check)
            return tj_cli_fail("--runs is an option of tensorjit check"), -1;
        return tj_cli_int("--runs", arg, 1, 1000000, &o->runs);
    case OPT_REDUCTION:
        if (tj_takes(o, JIT_ATTR_REDUCTION, "--reduction"))
            return 0;
        if (jit_reduction_from_name(arg, &o->reduction) != 0 ||
            !(o->op.reductions & (1u << o->reduction)))
            return tj_run_bad_reduction(o, arg);
        return 0;
    case OPT_NO_INIT_VAL:
        if (tj_takes(o, JIT_ATTR_INIT_VAL, "--no-init-val"))
            return 0;
        o->no_init_val = 1;
        return 0;
    case OPT_TORCH_DIMS:
        if (tj_takes(o, JIT_ATTR_TORCH_DIMS, "--torch-dims"))
            return 0;
        o->torch_dims = 1;
        return 0;
    case OPT_SEED:
        if (!o->check)
            return tj_cli_fail("--seed is an option of tensorjit check"), -1;
        return tj_cli_int("--seed", arg, 0, INT64_MAX, &o->seed);
    case OPT_DATA_SHAPE: o->have_data_shape = 1;
        return tj_cli_parse_shape("--data-shape", arg, &o->data_shape, o->data_bound);
    case OPT_INDICES_SHAPE: o->have_indices_shape = 1;
        return tj_cli_parse_shape("--indices-shape", arg, &o->indices_shape, o->indices_bound);
    case OPT_UPDATES_SHAPE: o->have_updates_shape = 1;
        if (tj_takes(o, JIT_ATTR_UPDATES, "--updates-shape"))
            return 0;
        return tj_cli_parse_shape("--updates-shape", arg, &o->updates_shape, o->updates_bound);
    case OPT_DYNAMIC:
        return tj_cli_parse_dynamic(arg, (o->op.attrs & JIT_ATTR_UPDATES) != 0, &o->dynamic);
    default: return tj_cli_common_option(&o->common, c, arg) ? -1 : 0;
    }
}

/* An option getopt refused: a known one without its value, or an unknown
 * one, with the nearest known. */
static void tj_run_bad_option(const char *cmd, const char *arg)
{
    static tj_cli_words_buf buf;
    tj_cli_bad_option(cmd, tj_run_options, arg,
                      tj_cli_option_words(tj_run_options, NULL, NULL, &buf));
}

static const char *tj_run_check_refused(int code)
{
    switch (code) {
    case TJ_OPT_ENGINE: return "--engine";
    case TJ_OPT_VERBOSE: return "--verbose";
    case TJ_OPT_DUMP_IR: return "--dump-ir";
    default: return "--dump-asm";
    }
}

/* 0, 1 for --help (exit 0), or -1 after printing the error. */
static int tj_run_parse(const jit_op_info *op, int argc, char **argv, int check,
                        tj_run_opts *o)
{
    /* messages name the command as typed: "check gather: ..." under check,
     * as the bags' check names itself */
    char label[64];
    snprintf(label, sizeof label, "%s%s", check ? "check " : "", op->command);
    const char *cmd = label;
    memset(o, 0, sizeof *o);
    o->op = *op;
    o->check = check;
    o->runs = 100;
    o->seed = 1;
    tj_cli_common_init(&o->common, op);
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "ho:", tj_run_options, NULL)) != -1) {
        if (c == TJ_OPT_HELP || c == 'h') {
            (check ? tj_cli_usage_check_op : tj_cli_usage_op)(op, stdout);
            return 1;
        }
        if (c == '?' || c == ':')
            return tj_run_bad_option(cmd, argv[optind - 1]), -1;
        /* check runs both engines and prints one line a run: these would
         * be dropped, so they are refused, as the bags' check refuses them */
        if (check && (c == TJ_OPT_ENGINE || c == TJ_OPT_VERBOSE || c == TJ_OPT_DUMP_IR ||
                      c == TJ_OPT_DUMP_ASM))
            return tj_cli_fail("%s: %s is not an option of tensorjit check (it compares the "
                               "JIT and the reference kernel; tensorjit %s takes it)",
                               cmd, tj_run_check_refused(c), op->command),
                   -1;
        const char *noted = o->wrong;
        if (tj_run_option(o, c, optarg) != 0)
            return -1;
        if (o->wrong != noted)
            o->wrong = tj_cli_typed_option(argv, optind, optarg, o->typed, sizeof o->typed);
    }
    if (optind < argc)
        return tj_cli_fail("%s: unexpected argument '%s'", cmd, argv[optind]), -1;
    if (o->wrong)
        return tj_cli_fail("%s is not an option of %s", o->wrong, cmd), -1;
    if (tj_cli_common_check(&o->common, cmd, check) != 0)
        return -1;
    int by_flags = o->have_data_shape || o->have_indices_shape || o->have_updates_shape;
    if (by_flags && (o->data || o->indices || o->updates))
        return tj_cli_fail("%s: give the signature by shapes or by .npy files, not both", cmd),
               -1;
    if (by_flags && o->common.dump < 0 && !o->common.explain && !o->check)
        return tj_cli_fail("%s: a signature given by shapes needs --dump-ir, --dump-asm or "
                           "--explain", cmd),
               -1;
    if (by_flags && o->dynamic.given)
        return tj_cli_fail("%s: --dynamic applies to .npy inputs; with shapes, write a dynamic "
                           "dim as ? (--data-shape ?x64)", cmd),
               -1;
    if (by_flags && (!o->have_data_shape || !o->have_indices_shape))
        return tj_cli_fail("%s: %s is missing (--data-shape and --indices-shape are required)",
                           cmd, o->have_data_shape ? "--indices-shape" : "--data-shape"),
               -1;
    if (!by_flags && check && (!o->data || !o->indices))
        return tj_cli_fail("%s: give the signature by shapes (--data-shape, "
                           "--indices-shape) or by .npy files (--data, --indices)", cmd), -1;
    if (!by_flags && (!o->data || !o->indices))
        return tj_cli_fail("%s: %s is missing (--data and --indices are required)", cmd,
                           o->data ? "--indices" : "--data"),
               -1;
    if (!by_flags && tj_cli_common_files(&o->common, cmd) != 0)
        return -1;
    int have_updates = o->data ? o->updates != NULL : o->have_updates_shape;
    int updates = (op->attrs & JIT_ATTR_UPDATES) && !have_updates;
    int axis = (op->attrs & JIT_ATTR_AXIS) && !o->have_axis;
    if (updates || axis)
        return tj_cli_fail("%s:%s%s%s%s %s required", cmd, updates ? " --updates" : "",
                           updates && !o->data ? "-shape" : "", updates && axis ? " and" : "",
                           axis ? " --axis" : "", updates && axis ? "are" : "is"), -1;
    return 0;
}

static int tj_load(const char *what, const char *path, tj_npy *a)
{
    char err[512];
    if (tj_npy_read(path, a, err, sizeof err) != 0)
        return tj_cli_fail("%s %s: %s", what, path, err), -1;
    return 0;
}

int tj_cli_write_output(const char *output, jit_dtype t, const jit_shape *s, const void *out)
{
    char err[512];
    int rc = strcmp(output, "-") == 0 ? tj_npy_write_stream(stdout, t, s, out, err, sizeof err)
                                      : tj_npy_write(output, t, s, out, err, sizeof err);
    if (rc != 0)
        return tj_cli_fail("output %s: %s", output, err);
    return TJ_EXIT_OK;
}

/* Writes or prints the result of the call of sig on the inputs, reports
 * the engine; frees out. */
static int tj_finish(const tj_run_opts *o, const jit_sig *sig, const tj_npy *in[3],
                     const jit_shape *s, void *out, const jit_kernel_info *info, int status)
{
    int rc = TJ_EXIT_OK;
    if (o->common.verbose)
        tj_cli_print_engine(stderr, info);
    if (status == JIT_STATUS_BAD_INDEX)
        rc = tj_cli_bad_index(sig, in[0]->data, in[1]->data, in[2]->data, out);
    else if (status != JIT_OK)
        rc = tj_cli_fail("kernel failed: %s", jit_last_error());
    else if (o->common.output)
        rc = tj_cli_write_output(o->common.output, sig->dtype, s, out);
    else
        tj_cli_print_result(stdout, sig->dtype, s, out);
    free(out);
    return rc;
}

static void *tj_alloc_out(int64_t bytes)
{
    return malloc(bytes > 0 ? (size_t)bytes : 1);
}

/* The signature the options and the .npy headers give. */
static jit_sig tj_run_sig(const tj_run_opts *o, const tj_npy *data, const tj_npy *idx,
                          const tj_npy *upd)
{
    jit_sig sig = {.op = o->op.op, .opset = (int)o->common.opset, .axis = o->axis,
                   .batch_dims = (int)o->batch_dims, .dtype = o->common.dtype,
                   .index_type = o->common.index_type, .index_policy = o->common.policy,
                   .engine = o->common.engine,
                   .data_shape = o->data_shape, .indices_shape = o->indices_shape,
                   .updates_shape = o->updates_shape, .reduction = o->reduction,
                   .no_init_val = o->no_init_val, .torch_dims = o->torch_dims};
    memcpy(sig.data_bound, o->data_bound, sizeof sig.data_bound);
    memcpy(sig.indices_bound, o->indices_bound, sizeof sig.indices_bound);
    memcpy(sig.updates_bound, o->updates_bound, sizeof sig.updates_bound);
    if (o->data) {
        sig.dtype = data->dtype;
        sig.index_type = idx->dtype;
        sig.data_shape = data->shape;
        sig.indices_shape = idx->shape;
        if (o->updates) {
            sig.updates_dtype = upd->dtype;
            sig.updates_shape = upd->shape;
        }
    }
    return sig;
}

/* A dynamic kernel on the .npy inputs (--dynamic). The concrete (static)
 * signature is checked first, exactly as the static run does, so that an
 * invalid input gives the static run's error line and exit status; only
 * then is the family's kernel compiled and called with the actual dims. */
static int tj_run_dynamic(const tj_run_opts *o, const jit_sig *sig, const tj_npy *data,
                          const tj_npy *idx, const tj_npy *upd)
{
    jit_sig dyn;
    jit_shape out_shape;
    jit_kernel_info info;
    int64_t dims[3 * JIT_MAX_RANK];
    char names[512];
    int marked = tj_cli_apply_dynamic(&o->dynamic, sig, &dyn, dims, names, sizeof names);
    if (marked < 0)
        return TJ_EXIT_USAGE;
    if (jit_output_shape(sig, &out_shape))
        return tj_cli_fail("%s", jit_last_error());
    /* only scalars: no dim to make dynamic, the static kernel runs */
    jit_kernel fn = jit_compile(marked ? &dyn : sig);
    if (!fn || jit_info(fn, &info))
        return tj_cli_fail("%s", jit_last_error());
    int64_t out_bytes = jit_dtype_size(sig->dtype);
    for (int i = 0; i < out_shape.rank; i++)
        out_bytes *= out_shape.dims[i];
    void *out = tj_alloc_out(out_bytes);
    if (!out)
        return tj_cli_fail("out of memory for %lld output bytes", (long long)out_bytes);
    int status = marked ? jit_call_dynamic(fn, data->data, idx->data, upd->data, out, dims)
                        : jit_call(fn, data->data, idx->data, upd->data, out);
    if (o->common.verbose && marked)
        tj_cli_print_engine_dynamic(stderr, fn, &info, dims, names);
    else if (o->common.verbose)
        fprintf(stderr, "dynamic: no dim to make dynamic (every input is a scalar)\n");
    tj_run_opts quiet = *o;
    quiet.common.verbose = o->common.verbose && !marked;
    const tj_npy *in[3] = {data, idx, upd};
    return tj_finish(&quiet, sig, in, &out_shape, out, &info, status);
}

/* --explain or --dump-* with --dynamic: of the dynamic signature, once
 * the concrete one passed the static run's checks. */
static int tj_show_dynamic(const tj_run_opts *o, const jit_sig *sig)
{
    jit_sig dyn;
    jit_shape out_shape;
    int64_t dims[3 * JIT_MAX_RANK];
    char names[512];
    if (tj_cli_apply_dynamic(&o->dynamic, sig, &dyn, dims, names, sizeof names) < 0)
        return TJ_EXIT_USAGE;
    if (jit_output_shape(sig, &out_shape))
        return tj_cli_fail("%s", jit_last_error());
    if (o->common.explain)
        return tj_cli_print_dump(jit_explain(&dyn));
    return tj_cli_print_dump(jit_dump(&dyn, (jit_dump_kind)o->common.dump));
}

static int tj_run_kernel(const tj_run_opts *o, const jit_sig *sig, const tj_npy *data,
                         const tj_npy *idx, const tj_npy *upd)
{
    if (tj_cli_check_sig(&o->op, sig) != 0)
        return TJ_EXIT_USAGE;
    if (o->check) {
        tj_check_result r;
        jit_shape shape;
        /* valid? a dynamic family's output may not have one rank: its kernel says */
        if (jit_sig_is_dynamic(sig) ? !jit_compile(sig) : jit_output_shape(sig, &shape) != 0)
            return tj_cli_fail("%s", jit_last_error());
        /* check on .npy headers with --dynamic: the family of their shapes */
        jit_sig dyn;
        int64_t dims[3 * JIT_MAX_RANK];
        char names[512];
        if (o->dynamic.given &&
            tj_cli_apply_dynamic(&o->dynamic, sig, &dyn, dims, names, sizeof names) < 0)
            return TJ_EXIT_USAGE;
        if (o->dynamic.given)
            sig = &dyn;
        if (o->common.explain)
            tj_cli_print_dump(jit_explain(sig));
        if (jit_sig_is_dynamic(sig))
            return tj_cli_check_dynamic(sig, (int)o->runs, (uint64_t)o->seed, o->op.command);
        tj_check_layer(sig, (int)o->runs, (uint64_t)o->seed, INT64_C(1) << 32, &r);
        return tj_cli_check_report(&r, o->op.command);
    }
    if (o->dynamic.given && (o->common.explain || o->common.dump >= 0))
        return tj_show_dynamic(o, sig);
    if (o->common.explain)
        return tj_cli_print_dump(jit_explain(sig));
    if (o->common.dump >= 0)
        return tj_cli_print_dump(jit_dump(sig, (jit_dump_kind)o->common.dump));
    if (o->dynamic.given)
        return tj_run_dynamic(o, sig, data, idx, upd);
    jit_shape out_shape;
    jit_kernel_info info;
    jit_kernel fn = jit_compile(sig);
    if (!fn || jit_output_shape(sig, &out_shape) || jit_info(fn, &info))
        return tj_cli_fail("%s", jit_last_error());
    void *out = tj_alloc_out(info.out_bytes);
    if (!out)
        return tj_cli_fail("out of memory for %lld output bytes", (long long)info.out_bytes);
    int status = jit_call(fn, data->data, idx->data, upd->data, out);
    const tj_npy *in[3] = {data, idx, upd};
    return tj_finish(o, sig, in, &out_shape, out, &info, status);
}

static int tj_op_main(const jit_op_info *op, int argc, char **argv, int check)
{
    tj_run_opts o;
    tj_npy data = {0}, idx = {0}, upd = {0};
    int rc = tj_run_parse(op, argc, argv, check, &o);
    if (rc)
        return rc > 0 ? TJ_EXIT_OK : TJ_EXIT_USAGE;
    if (o.data && (tj_load("--data", o.data, &data) || tj_load("--indices", o.indices, &idx) ||
                   (o.updates && tj_load("--updates", o.updates, &upd)))) {
        rc = TJ_EXIT_USAGE;
    } else {
        jit_sig sig = tj_run_sig(&o, &data, &idx, &upd);
        rc = tj_run_kernel(&o, &sig, &data, &idx, &upd);
    }
    tj_npy_free(&data);
    tj_npy_free(&idx);
    tj_npy_free(&upd);
    jit_shutdown();
    return rc;
}

int tj_cmd_op(jit_op op, int argc, char **argv)
{
    jit_op_info info;
    if (jit_op_describe(op, &info) != 0)
        return tj_cli_fail("%s", jit_last_error());
    if (info.attrs & JIT_ATTR_BAG)
        return tj_cmd_bag(&info, argc, argv);
    return tj_op_main(&info, argc, argv, 0);
}

/* tensorjit check OP SIGNATURE [--runs N] [--seed S] */
int tj_cmd_check(int argc, char **argv)
{
    jit_op_info info;
    if (argc >= 2 && jit_op_describe(jit_op_from_name(argv[1]), &info) == 0 &&
        (info.attrs & JIT_ATTR_BAG))
        return tj_cmd_check_bag(&info, argc - 1, argv + 1);
    if (argc >= 2 && jit_op_describe(jit_op_from_name(argv[1]), &info) == 0)
        return tj_op_main(&info, argc - 1, argv + 1, 1);
    if (argc >= 2 && tj_cli_is_help(argv[1])) {
        tj_cli_usage("check", stdout);
        return TJ_EXIT_OK;
    }
    if (argc >= 2 && argv[1][0] != '-') /* a mistyped op: the nearest one */
        return tj_cli_unknown("check: unknown op", argv[1], tj_cli_op_words());
    return tj_cli_fail("check: give an op (gather-nd, gather, scatter-update, ...) and a "
                       "signature (try --help)");
}
