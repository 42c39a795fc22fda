/* `tensorjit embedding-bag-offsets`, `embedding-bag-packed` and
 * `embedding-segments` (SPEC section 10): one embedding-bag kernel on .npy
 * files (or a signature by shape flags) through the public generic API.
 * The bags take a table, indices, offsets or segment ids and weights, not
 * the data / indices / updates of the other op commands (cmd_run.c), so
 * their flags are their own; which of them an op takes comes from
 * jit_op_describe's attributes. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "npy.h"

enum { TJ_BAG_TABLE, TJ_BAG_INDICES, TJ_BAG_OFFSETS, TJ_BAG_WEIGHTS, TJ_BAG_INPUTS };

typedef struct tj_bag_opts {
    jit_op_info op;
    const char *path[TJ_BAG_INPUTS]; /* the .npy files */
    jit_shape shape[TJ_BAG_INPUTS];  /* or their shapes, by flags */
    int64_t bound[TJ_BAG_INPUTS][JIT_MAX_RANK];
    int have_shape[TJ_BAG_INPUTS];
    tj_cli_common common; /* -o, --engine, --dump-ir, --opset, ... */
    const char *wrong, *dynamic; /* wrong: an option the op does not take, as typed */
    char typed[64];
    int64_t default_index, padding_idx, num_segments, num_segments_bound;
    int have_default_index, have_padding_idx, have_num_segments, include_last_offset;
    jit_reduction reduction;
} tj_bag_opts;

enum { OPT_TABLE = TJ_OPT_OWN, OPT_INDICES, OPT_OFFSETS, OPT_SEGMENT_IDS, OPT_WEIGHTS,
       OPT_NUM_SEGMENTS, OPT_DEFAULT_INDEX, OPT_PADDING_IDX, OPT_LAST_OFFSET, OPT_REDUCTION,
       OPT_OPSET, OPT_DYNAMIC, OPT_TABLE_SHAPE, OPT_INDICES_SHAPE, OPT_OFFSETS_SHAPE,
       OPT_SEGMENT_IDS_SHAPE, OPT_WEIGHTS_SHAPE };

static const struct option tj_bag_options[] = {
    {"table", required_argument, NULL, OPT_TABLE},
    {"indices", required_argument, NULL, OPT_INDICES},
    {"offsets", required_argument, NULL, OPT_OFFSETS},
    {"segment-ids", required_argument, NULL, OPT_SEGMENT_IDS},
    {"weights", required_argument, NULL, OPT_WEIGHTS},
    {"num-segments", required_argument, NULL, OPT_NUM_SEGMENTS},
    {"default-index", required_argument, NULL, OPT_DEFAULT_INDEX},
    {"padding-idx", required_argument, NULL, OPT_PADDING_IDX},
    {"include-last-offset", no_argument, NULL, OPT_LAST_OFFSET},
    {"reduction", required_argument, NULL, OPT_REDUCTION},
    {"opset", required_argument, NULL, OPT_OPSET},
    TJ_CLI_COMMON_OPTIONS,
    {"dynamic", required_argument, NULL, OPT_DYNAMIC},
    {"table-shape", required_argument, NULL, OPT_TABLE_SHAPE},
    {"indices-shape", required_argument, NULL, OPT_INDICES_SHAPE},
    {"offsets-shape", required_argument, NULL, OPT_OFFSETS_SHAPE},
    {"segment-ids-shape", required_argument, NULL, OPT_SEGMENT_IDS_SHAPE},
    {"weights-shape", required_argument, NULL, OPT_WEIGHTS_SHAPE},
    {NULL, 0, NULL, 0},
};

/* Whether op takes the option: the flags --help lists and "did you mean"
 * chooses from. */
static int tj_bag_takes(const jit_op_info *op, int c)
{
    return tj_cli_bag_takes(op, tj_bag_options, c);
}

const char *const *tj_cli_bag_words(const jit_op_info *op)
{
    static tj_cli_words_buf buf;
    return tj_cli_option_words(tj_bag_options, op, tj_bag_takes, &buf);
}

static int tj_bag_shape_opt(tj_bag_opts *o, int input, const char *name, const char *arg)
{
    return tj_cli_shape_option(name, arg, &o->have_shape[input], &o->shape[input],
                               o->bound[input]);
}

/* name: the long option's (static) name, without its dashes. */
static int tj_bag_option(tj_bag_opts *o, int c, const char *arg, const char *name)
{
    if (!tj_bag_takes(&o->op, c)) { /* reported after parsing, so that --help works */
        if (!o->wrong)
            o->wrong = name;
        return 0;
    }
    switch (c) {
    case OPT_TABLE: o->path[TJ_BAG_TABLE] = arg; return 0;
    case OPT_INDICES: o->path[TJ_BAG_INDICES] = arg; return 0;
    case OPT_OFFSETS:
    case OPT_SEGMENT_IDS: o->path[TJ_BAG_OFFSETS] = arg; return 0;
    case OPT_WEIGHTS: o->path[TJ_BAG_WEIGHTS] = arg; return 0;
    case OPT_NUM_SEGMENTS:
        o->have_num_segments = 1;
        return tj_cli_num_segments(arg, &o->num_segments, &o->num_segments_bound);
    case OPT_DEFAULT_INDEX:
        o->have_default_index = 1;
        return tj_cli_int("--default-index", arg, INT64_MIN, INT64_MAX, &o->default_index);
    case OPT_PADDING_IDX:
        o->have_padding_idx = 1;
        return tj_cli_int("--padding-idx", arg, INT64_MIN, INT64_MAX, &o->padding_idx);
    case OPT_LAST_OFFSET: o->include_last_offset = 1; return 0;
    case OPT_REDUCTION: return tj_cli_bag_reduction(&o->op, arg, &o->reduction);
    case OPT_OPSET: return tj_cli_opset(&o->op, arg, &o->common.opset);
    case OPT_TABLE_SHAPE: return tj_bag_shape_opt(o, TJ_BAG_TABLE, name, arg);
    case OPT_INDICES_SHAPE: return tj_bag_shape_opt(o, TJ_BAG_INDICES, name, arg);
    case OPT_OFFSETS_SHAPE:
    case OPT_SEGMENT_IDS_SHAPE: return tj_bag_shape_opt(o, TJ_BAG_OFFSETS, name, arg);
    case OPT_WEIGHTS_SHAPE: return tj_bag_shape_opt(o, TJ_BAG_WEIGHTS, name, arg);
    case OPT_DYNAMIC: o->dynamic = arg; return 0;
    default: return tj_cli_common_option(&o->common, c, arg) ? -1 : 0;
    }
}

/* An option getopt refused: a known one without its value, or an unknown
 * one, with the nearest flag of this op. */
static void tj_bag_bad_option(const jit_op_info *op, const char *arg)
{
    tj_cli_bad_option(op->command, tj_bag_options, arg, tj_cli_bag_words(op));
}

static const char *tj_bag_offsets_flag(const jit_op_info *op)
{
    return tj_cli_bag_segments(op) ? "--segment-ids" : "--offsets";
}

static const char *const tj_bag_flag_names[TJ_BAG_INPUTS] = {"--table", "--indices", NULL,
                                                              "--weights"};

/* The inputs an op needs, by files or by shapes; 0 or -1 (error printed). */
static int tj_bag_check_inputs(const tj_bag_opts *o)
{
    const char *cmd = o->op.command;
    int by_flags = 0, by_files = 0;
    int offsets = (o->op.attrs & JIT_ATTR_OFFSETS) != 0;
    for (int i = 0; i < TJ_BAG_INPUTS; i++) {
        by_flags |= o->have_shape[i];
        by_files |= o->path[i] != NULL;
    }
    if (by_flags && by_files)
        return tj_cli_fail("%s: give the signature by shapes or by .npy files, not both", cmd),
               -1;
    if (by_flags && o->common.dump < 0 && !o->common.explain)
        return tj_cli_fail("%s: a signature given by shapes needs --dump-ir, --dump-asm or "
                           "--explain", cmd), -1;
    if (by_flags && o->dynamic)
        return tj_cli_fail("%s: --dynamic applies to .npy inputs; with shapes, write a dynamic "
                           "dim as ? (--indices-shape ?)", cmd), -1;
    if (by_files && tj_cli_common_files(&o->common, cmd) != 0)
        return -1;
    if (by_files && o->have_num_segments && o->num_segments == JIT_DIM_DYNAMIC)
        return tj_cli_fail("%s: --num-segments ? (a dynamic S) goes with a signature by "
                           "shapes; a run on .npy files takes S itself (--num-segments 5), "
                           "and --dynamic num_segments:0 runs the kernel of a dynamic S on it",
                           cmd), -1;
    const char *off_flag = tj_bag_offsets_flag(&o->op);
    for (int i = 0; i < TJ_BAG_WEIGHTS; i++) {
        if ((i == TJ_BAG_OFFSETS && !offsets) || (by_flags ? o->have_shape[i] : !!o->path[i]))
            continue;
        /* the one missing first, then the list: "--table, --indices and" is
         * no answer to which of the three was left out */
        const char *flag = i == TJ_BAG_OFFSETS ? off_flag : tj_bag_flag_names[i];
        const char *sh = by_flags ? "-shape" : "";
        return tj_cli_fail("%s: %s%s is missing (--table%s%s--indices%s%s%s%s are required)",
                           cmd, flag, sh, sh, offsets ? ", " : " and ", sh,
                           offsets ? " and " : "", offsets ? off_flag : "", offsets ? sh : ""),
               -1;
    }
    if (tj_cli_bag_segments(&o->op) && !o->have_num_segments)
        return tj_cli_fail("%s: --num-segments S is required (the output's rows)", cmd), -1;
    return 0;
}

/* 0, 1 for --help (exit 0), or -1 after printing the error. */
static int tj_bag_parse(const jit_op_info *op, int argc, char **argv, tj_bag_opts *o)
{
    memset(o, 0, sizeof *o);
    o->op = *op;
    tj_cli_common_init(&o->common, op);
    optind = 1;
    opterr = 0;
    int c, at;
    while ((c = getopt_long(argc, argv, "ho:", tj_bag_options, &at)) != -1) {
        if (c == TJ_OPT_HELP || c == 'h') {
            tj_cli_usage_op(op, stdout);
            return 1;
        }
        if (c == '?' || c == ':')
            return tj_bag_bad_option(op, argv[optind - 1]), -1;
        /* a short option leaves at as it was */
        const char *noted = o->wrong;
        if (tj_bag_option(o, c, optarg, c == 'o' ? "output" : tj_bag_options[at].name) != 0)
            return -1;
        if (o->wrong != noted)
            o->wrong = tj_cli_typed_option(argv, optind, optarg, o->typed, sizeof o->typed);
    }
    if (optind < argc)
        return tj_cli_fail("%s: unexpected argument '%s'", op->command, argv[optind]), -1;
    if (o->wrong)
        return tj_cli_fail("%s is not an option of %s", o->wrong, op->command), -1;
    if (tj_cli_common_check(&o->common, op->command, 0) != 0)
        return -1;
    return tj_bag_check_inputs(o);
}

/* "[3,4]" */
static const char *tj_bag_shape_text(const jit_shape *s, char *buf, size_t len)
{
    size_t n = (size_t)snprintf(buf, len, "[");
    for (int i = 0; i < s->rank && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%lld", i ? "," : "", (long long)s->dims[i]);
    if (n < len)
        snprintf(buf + n, len - n, "]");
    return buf;
}

/* The weights' type and shape are the table's and the indices': the
 * signature has only has_weights, so they are checked here. */
static int tj_bag_check_weights(const jit_sig *sig, jit_dtype t, const jit_shape *w,
                                const char *what)
{
    char a[256], b[256];
    if (t != sig->dtype)
        return tj_cli_fail("%s: element type %s must be the table's, %s", what,
                           jit_dtype_name(t), jit_dtype_name(sig->dtype)), -1;
    if (w->rank != sig->indices_shape.rank ||
        memcmp(w->dims, sig->indices_shape.dims, sizeof(int64_t) * (size_t)w->rank) != 0) {
        return tj_cli_fail("%s of shape %s must have the indices' shape %s (one weight per "
                           "index)", what, tj_bag_shape_text(w, a, sizeof a),
                           tj_bag_shape_text(&sig->indices_shape, b, sizeof b)), -1;
    }
    return 0;
}

/* The signature the options and the .npy headers (in) give; 0 or -1. */
static int tj_bag_sig(const tj_bag_opts *o, const tj_npy *in, jit_sig *sig)
{
    int files = o->path[TJ_BAG_TABLE] != NULL;
    *sig = (jit_sig){.op = o->op.op, .opset = (int)o->common.opset, .dtype = o->common.dtype,
                     .index_type = o->common.index_type, .index_policy = o->common.policy,
                     .engine = o->common.engine, .reduction = o->reduction,
                     .has_default_index = o->have_default_index,
                     .default_index = o->default_index, .has_padding_idx = o->have_padding_idx,
                     .padding_idx = o->padding_idx, .include_last_offset = o->include_last_offset,
                     .num_segments = o->num_segments,
                     .num_segments_bound = o->num_segments_bound};
    sig->data_shape = files ? in[TJ_BAG_TABLE].shape : o->shape[TJ_BAG_TABLE];
    sig->indices_shape = files ? in[TJ_BAG_INDICES].shape : o->shape[TJ_BAG_INDICES];
    if (o->op.attrs & JIT_ATTR_OFFSETS)
        sig->updates_shape = files ? in[TJ_BAG_OFFSETS].shape : o->shape[TJ_BAG_OFFSETS];
    memcpy(sig->data_bound, o->bound[TJ_BAG_TABLE], sizeof sig->data_bound);
    memcpy(sig->indices_bound, o->bound[TJ_BAG_INDICES], sizeof sig->indices_bound);
    memcpy(sig->updates_bound, o->bound[TJ_BAG_OFFSETS], sizeof sig->updates_bound);
    if (files) {
        sig->dtype = in[TJ_BAG_TABLE].dtype;
        sig->index_type = in[TJ_BAG_INDICES].dtype;
        if (o->op.attrs & JIT_ATTR_OFFSETS)
            sig->updates_dtype = in[TJ_BAG_OFFSETS].dtype;
    }
    sig->has_weights = o->path[TJ_BAG_WEIGHTS] || o->have_shape[TJ_BAG_WEIGHTS];
    return 0;
}

/* The weights' file or shape flag against a signature the library took:
 * after it, so that a wrong indices shape is named as such, not as weights
 * that do not match it. 0 or -1 (error printed). */
static int tj_bag_weights(const tj_bag_opts *o, const tj_npy *in, const jit_sig *sig)
{
    if (o->path[TJ_BAG_WEIGHTS]) {
        char what[512];
        snprintf(what, sizeof what, "--weights %s", o->path[TJ_BAG_WEIGHTS]);
        return tj_bag_check_weights(sig, in[TJ_BAG_WEIGHTS].dtype, &in[TJ_BAG_WEIGHTS].shape,
                                    what);
    }
    if (o->have_shape[TJ_BAG_WEIGHTS])
        return tj_bag_check_weights(sig, sig->dtype, &o->shape[TJ_BAG_WEIGHTS],
                                    "--weights-shape");
    return 0;
}

/* The inputs of --dynamic, in the dynamic kernel's order of dims. */
typedef struct tj_bag_dyn {
    const char *name[4];
    jit_shape *shape[4];
    int n;
} tj_bag_dyn;

static void tj_bag_dyn_inputs(const jit_op_info *op, jit_sig *sig, jit_shape *s_dim,
                              tj_bag_dyn *d)
{
    d->n = 0;
    d->name[d->n] = "table";
    d->shape[d->n++] = &sig->data_shape;
    d->name[d->n] = "indices";
    d->shape[d->n++] = &sig->indices_shape;
    if (op->attrs & JIT_ATTR_OFFSETS) {
        d->name[d->n] = tj_cli_bag_segments(op) ? "segment_ids" : "offsets";
        d->shape[d->n++] = &sig->updates_shape;
    }
    if (tj_cli_bag_segments(op)) {
        *s_dim = (jit_shape){1, {sig->num_segments}};
        d->name[d->n] = "num_segments";
        d->shape[d->n++] = s_dim;
    }
}

/* Marks the dims "all" or "INPUT:DIM,..." names dynamic in d (their
 * concrete values in dims); the number marked, or -1 (error printed). */
static int tj_bag_mark(const char *spec, tj_bag_dyn *d, int64_t *dims, char *names, size_t len)
{
    int all = strcmp(spec, "all") == 0, marked = 0, at = 0;
    unsigned char mark[4][JIT_MAX_RANK] = {{0}};
    for (const char *p = spec; !all && *p;) {
        size_t n = strcspn(p, ","), colon = strcspn(p, ":");
        int i = 0;
        char *end;
        while (i < d->n && !(colon < n && strlen(d->name[i]) == colon &&
                             strncmp(p, d->name[i], colon) == 0))
            i++;
        long dim = i < d->n ? strtol(p + colon + 1, &end, 10) : -1;
        if (i == d->n || end != p + n || dim < 0 || dim >= d->shape[i]->rank)
            return tj_cli_fail("--dynamic=%s: '%.*s' is not all or INPUT:DIM with INPUT one of "
                               "%s, %s%s%s%s%s and DIM one of its dims", spec, (int)n, p,
                               d->name[0], d->name[1], d->n > 2 ? ", " : "",
                               d->n > 2 ? d->name[2] : "", d->n > 3 ? ", " : "",
                               d->n > 3 ? d->name[3] : ""), -1;
        mark[i][dim] = 1;
        p += n + (p[n] == ',');
    }
    size_t used = 0;
    names[0] = '\0';
    for (int i = 0; i < d->n; i++) {
        char list[64] = ""; /* "0,1": the dims of this input marked */
        size_t m = 0;
        for (int k = 0; k < d->shape[i]->rank; k++) {
            dims[at++] = d->shape[i]->dims[k];
            if (!all && !mark[i][k])
                continue;
            d->shape[i]->dims[k] = JIT_DIM_DYNAMIC;
            marked++;
            m += (size_t)snprintf(list + m, m < sizeof list ? sizeof list - m : 0, "%s%d",
                                  m ? "," : "", k);
        }
        if (m && used < len) /* "table[0,1] indices[0]" */
            used += (size_t)snprintf(names + used, len - used, "%s%s[%s]", used ? " " : "",
                                     d->name[i], list);
    }
    return marked;
}

/* The dynamic signature of --dynamic over the concrete one, and the dims
 * of its call; the number of dims marked, or -1 (error printed). */
static int tj_bag_apply_dynamic(const tj_bag_opts *o, const jit_sig *sig, jit_sig *dyn,
                                int64_t *dims, char *names, size_t len)
{
    jit_shape s_dim;
    tj_bag_dyn d;
    *dyn = *sig;
    tj_bag_dyn_inputs(&o->op, dyn, &s_dim, &d);
    int marked = tj_bag_mark(o->dynamic, &d, dims, names, len);
    if (tj_cli_bag_segments(&o->op))
        dyn->num_segments = s_dim.dims[0];
    return marked;
}

static int tj_bag_show(const tj_bag_opts *o, const jit_sig *sig)
{
    return tj_cli_print_dump(o->common.explain ? jit_explain(sig)
                                               : jit_dump(sig, (jit_dump_kind)o->common.dump));
}

/* Runs the kernel of sig (or of dyn with dims, when marked) on the inputs
 * and writes or prints the result. */
static int tj_bag_run(const tj_bag_opts *o, const jit_sig *sig, const jit_sig *dyn,
                      const int64_t *dims, const char *names, const tj_npy *in)
{
    jit_shape shape;
    jit_kernel_info info;
    jit_kernel fn = jit_compile(dyn ? dyn : sig);
    if (!fn || jit_output_shape(sig, &shape) || jit_info(fn, &info))
        return tj_cli_fail("%s", jit_last_error());
    int64_t bytes = jit_dtype_size(sig->dtype);
    for (int i = 0; i < shape.rank; i++)
        bytes *= shape.dims[i];
    void *out = malloc(bytes > 0 ? (size_t)bytes : 1);
    if (!out)
        return tj_cli_fail("out of memory for %lld output bytes", (long long)bytes);
    const void *t = in[TJ_BAG_TABLE].data, *ix = in[TJ_BAG_INDICES].data;
    const void *off = in[TJ_BAG_OFFSETS].data, *w = in[TJ_BAG_WEIGHTS].data;
    int status = dyn ? jit_call_bag_dynamic(fn, t, ix, off, w, out, dims)
                     : jit_call_bag(fn, t, ix, off, w, out);
    int rc = TJ_EXIT_OK;
    if (o->common.verbose && dyn)
        tj_cli_print_engine_dynamic(stderr, fn, &info, dims, names);
    else if (o->common.verbose)
        tj_cli_print_engine(stderr, &info);
    if (status == JIT_STATUS_BAD_INDEX)
        rc = tj_cli_bad_index_bag(sig, t, ix, off, w, out);
    else if (status != JIT_OK)
        rc = tj_cli_fail("kernel failed: %s", jit_last_error());
    else if (o->common.output)
        rc = tj_cli_write_output(o->common.output, sig->dtype, &shape, out);
    else
        tj_cli_print_result(stdout, sig->dtype, &shape, out);
    free(out);
    return rc;
}

static int tj_bag_kernel(const tj_bag_opts *o, const tj_npy *in)
{
    jit_sig sig, dyn;
    int64_t dims[4 * JIT_MAX_RANK];
    char names[512] = "";
    int marked = 0;
    if (tj_bag_sig(o, in, &sig))
        return TJ_EXIT_USAGE;
    if (tj_cli_check_sig(&o->op, &sig) != 0 || tj_bag_weights(o, in, &sig) != 0)
        return TJ_EXIT_USAGE;
    if (o->dynamic && (marked = tj_bag_apply_dynamic(o, &sig, &dyn, dims, names,
                                                     sizeof names)) < 0)
        return TJ_EXIT_USAGE;
    if (o->common.explain || o->common.dump >= 0)
        return tj_bag_show(o, marked ? &dyn : &sig);
    return tj_bag_run(o, &sig, marked ? &dyn : NULL, dims, names, in);
}

int tj_cmd_bag(const jit_op_info *op, int argc, char **argv)
{
    tj_bag_opts o;
    tj_npy in[TJ_BAG_INPUTS] = {{0}};
    int rc = tj_bag_parse(op, argc, argv, &o);
    if (rc)
        return rc > 0 ? TJ_EXIT_OK : TJ_EXIT_USAGE;
    for (int i = 0; i < TJ_BAG_INPUTS && rc == 0; i++) {
        char err[512];
        const char *flag = i == TJ_BAG_OFFSETS ? tj_bag_offsets_flag(op) : tj_bag_flag_names[i];
        if (o.path[i] && tj_npy_read(o.path[i], &in[i], err, sizeof err) != 0)
            rc = tj_cli_fail("%s %s: %s", flag, o.path[i], err);
    }
    if (rc == 0)
        rc = tj_bag_kernel(&o, in);
    for (int i = 0; i < TJ_BAG_INPUTS; i++)
        tj_npy_free(&in[i]);
    return rc;
}
