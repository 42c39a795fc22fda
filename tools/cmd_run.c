/* `tensorjit gather-nd` and `tensorjit scatter-update`: run one kernel on
 * .npy files through the public API, as a user of the library would. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "npy.h"

typedef struct tj_run_opts {
    const char *data, *indices, *updates, *output;
    int64_t batch_dims, opset, axis;
    int have_axis, verbose;
    const char *gather_only, *scatter_only; /* an option given to the wrong command */
    jit_engine engine;
    jit_index_policy policy;
} tj_run_opts;

enum { OPT_DATA = 256, OPT_INDICES, OPT_UPDATES, OPT_BATCH_DIMS, OPT_OPSET, OPT_AXIS,
       OPT_ENGINE, OPT_POLICY, OPT_VERBOSE, OPT_HELP };

static const struct option tj_run_options[] = {
    {"data", required_argument, NULL, OPT_DATA},
    {"indices", required_argument, NULL, OPT_INDICES},
    {"updates", required_argument, NULL, OPT_UPDATES},
    {"batch-dims", required_argument, NULL, OPT_BATCH_DIMS},
    {"opset", required_argument, NULL, OPT_OPSET},
    {"axis", required_argument, NULL, OPT_AXIS},
    {"output", required_argument, NULL, 'o'},
    {"engine", required_argument, NULL, OPT_ENGINE},
    {"index-policy", required_argument, NULL, OPT_POLICY},
    {"verbose", no_argument, NULL, OPT_VERBOSE},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

static void tj_run_usage(const char *cmd)
{
    if (strcmp(cmd, "gather-nd") == 0)
        printf("usage: tensorjit gather-nd --data D.npy --indices I.npy [--batch-dims B]\n"
               "                           [--opset 5|8] [-o OUT.npy] [options]\n");
    else
        printf("usage: tensorjit scatter-update --data D.npy --indices I.npy --updates U.npy\n"
               "                                --axis A [-o OUT.npy] [options]\n");
    printf("options:\n"
           "  --engine jit|reference     engine to run (default jit; falls back to reference)\n"
           "  --index-policy P           error|negative-wraps|clamp|zero-fill (default error)\n"
           "  -o, --output OUT.npy       write the result; without it, print it\n"
           "  --verbose                  say on stderr which engine ran and why\n");
}

static int tj_run_option(tj_run_opts *o, int c, const char *arg)
{
    switch (c) {
    case OPT_DATA: o->data = arg; return 0;
    case OPT_INDICES: o->indices = arg; return 0;
    case OPT_UPDATES: o->updates = arg; o->scatter_only = "--updates"; return 0;
    case 'o': o->output = arg; return 0;
    case OPT_VERBOSE: o->verbose = 1; return 0;
    case OPT_BATCH_DIMS:
        o->gather_only = "--batch-dims";
        return tj_cli_int("--batch-dims", arg, 0, JIT_MAX_RANK, &o->batch_dims);
    case OPT_OPSET:
        o->gather_only = "--opset";
        if (tj_cli_int("--opset", arg, 0, 100, &o->opset) != 0)
            return -1;
        if (o->opset != 5 && o->opset != 8)
            return tj_cli_fail("--opset=%s must be 5 or 8", arg), -1;
        return 0;
    case OPT_AXIS:
        o->have_axis = 1;
        o->scatter_only = "--axis";
        return tj_cli_int("--axis", arg, -JIT_MAX_RANK, JIT_MAX_RANK, &o->axis);
    case OPT_ENGINE:
        if (strcmp(arg, "jit") == 0)
            o->engine = JIT_ENGINE_AUTO;
        else if (strcmp(arg, "reference") == 0)
            o->engine = JIT_ENGINE_REFERENCE;
        else
            return tj_cli_fail("--engine=%s must be jit or reference", arg), -1;
        return 0;
    case OPT_POLICY:
        if (jit_index_policy_from_name(arg, &o->policy) != 0)
            return tj_cli_fail("--index-policy=%s must be error, negative-wraps, clamp or "
                               "zero-fill", arg), -1;
        return 0;
    default: return -1;
    }
}

/* 0, 1 for --help (exit 0), or -1 after printing the error. */
static int tj_run_parse(const char *cmd, int argc, char **argv, tj_run_opts *o)
{
    memset(o, 0, sizeof *o);
    o->opset = 8;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "o:", tj_run_options, NULL)) != -1) {
        if (c == OPT_HELP) {
            tj_run_usage(cmd);
            return 1;
        }
        if (c == '?' || c == ':') {
            const char *bad = argv[optind - 1];
            return tj_cli_fail("%s: unknown option or missing value: %s", cmd, bad), -1;
        }
        if (tj_run_option(o, c, optarg) != 0)
            return -1;
    }
    if (optind < argc)
        return tj_cli_fail("%s: unexpected argument '%s'", cmd, argv[optind]), -1;
    const char *wrong = strcmp(cmd, "gather-nd") == 0 ? o->scatter_only : o->gather_only;
    if (wrong)
        return tj_cli_fail("%s is not an option of %s", wrong, cmd), -1;
    if (!o->data || !o->indices)
        return tj_cli_fail("%s: --data and --indices are required", cmd), -1;
    return 0;
}

static int tj_load(const char *what, const char *path, tj_npy *a)
{
    char err[512];
    if (tj_npy_read(path, a, err, sizeof err) != 0)
        return tj_cli_fail("%s %s: %s", what, path, err), -1;
    return 0;
}

/* Writes or prints the result, reports the engine; frees out. */
static int tj_finish(const tj_run_opts *o, jit_dtype t, const jit_shape *s, void *out,
                     const jit_kernel_info *info, int status)
{
    int rc = TJ_EXIT_OK;
    if (o->verbose)
        tj_cli_print_engine(stderr, info);
    if (status == JIT_STATUS_BAD_INDEX)
        rc = (tj_cli_fail("%s", jit_last_error()), TJ_EXIT_BAD_INDEX);
    else if (status != JIT_OK)
        rc = tj_cli_fail("kernel failed: %s", jit_last_error());
    else if (o->output) {
        char err[512];
        if (tj_npy_write(o->output, t, s, out, err, sizeof err) != 0)
            rc = tj_cli_fail("output %s: %s", o->output, err);
    } else {
        tj_cli_print_tensor(stdout, t, s, out);
    }
    free(out);
    return rc;
}

static void *tj_alloc_out(int64_t bytes)
{
    return malloc(bytes > 0 ? (size_t)bytes : 1);
}

int tj_cmd_gather_nd(int argc, char **argv)
{
    tj_run_opts o;
    tj_npy data = {0}, idx = {0};
    int rc = tj_run_parse("gather-nd", argc, argv, &o);
    if (rc)
        return rc > 0 ? TJ_EXIT_OK : TJ_EXIT_USAGE;
    if (tj_load("--data", o.data, &data) || tj_load("--indices", o.indices, &idx)) {
        rc = TJ_EXIT_USAGE;
        goto done;
    }
    jit_gather_nd_sig sig = {.opset = (int)o.opset, .batch_dims = (int)o.batch_dims,
                             .dtype = data.dtype, .index_type = idx.dtype,
                             .index_policy = o.policy, .engine = o.engine,
                             .data_shape = data.shape, .indices_shape = idx.shape};
    jit_shape out_shape;
    jit_gather_nd_fn fn = jit_gather_nd_compile(&sig);
    jit_kernel_info info;
    if (!fn || jit_gather_nd_output_shape(&sig, &out_shape) || jit_gather_nd_info(fn, &info)) {
        rc = tj_cli_fail("%s", jit_last_error());
        goto done;
    }
    void *out = tj_alloc_out(info.out_bytes);
    if (!out) {
        rc = tj_cli_fail("out of memory for %lld output bytes", (long long)info.out_bytes);
        goto done;
    }
    rc = tj_finish(&o, data.dtype, &out_shape, out, &info, fn(data.data, idx.data, out));
done:
    tj_npy_free(&data);
    tj_npy_free(&idx);
    jit_shutdown();
    return rc;
}

int tj_cmd_scatter_update(int argc, char **argv)
{
    tj_run_opts o;
    tj_npy data = {0}, idx = {0}, upd = {0};
    int rc = tj_run_parse("scatter-update", argc, argv, &o);
    if (rc)
        return rc > 0 ? TJ_EXIT_OK : TJ_EXIT_USAGE;
    if (!o.updates || !o.have_axis)
        return tj_cli_fail("scatter-update: --updates and --axis are required");
    if (tj_load("--data", o.data, &data) || tj_load("--indices", o.indices, &idx) ||
        tj_load("--updates", o.updates, &upd)) {
        rc = TJ_EXIT_USAGE;
        goto done;
    }
    jit_scatter_update_sig sig = {.axis = o.axis, .dtype = data.dtype,
                                  .updates_dtype = upd.dtype, .index_type = idx.dtype,
                                  .index_policy = o.policy, .engine = o.engine,
                                  .data_shape = data.shape, .indices_shape = idx.shape,
                                  .updates_shape = upd.shape};
    jit_scatter_update_fn fn = jit_scatter_update_compile(&sig);
    jit_kernel_info info;
    if (!fn || jit_scatter_update_info(fn, &info)) {
        rc = tj_cli_fail("%s", jit_last_error());
        goto done;
    }
    void *out = tj_alloc_out(info.out_bytes);
    if (!out) {
        rc = tj_cli_fail("out of memory for %lld output bytes", (long long)info.out_bytes);
        goto done;
    }
    rc = tj_finish(&o, data.dtype, &data.shape, out, &info,
                   fn(data.data, idx.data, upd.data, out));
done:
    tj_npy_free(&data);
    tj_npy_free(&idx);
    tj_npy_free(&upd);
    jit_shutdown();
    return rc;
}
