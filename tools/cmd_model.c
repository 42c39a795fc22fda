/* `tensorjit model FILE.xml`: every indexing layer of an OpenVINO IR model
 * (or of spec-style <layer> fragments), listed, compiled by worker
 * threads, and reported in a table; --check runs each kernel against the
 * reference on random data. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "host_cpus.h"
#include "layer_check.h"
#include "onnx_model.h"
#include "ov_ir.h"

typedef struct tj_layer_result {
    int compiled;
    jit_kernel kernel;         /* one per signature: layers alike share it */
    jit_kernel_info info;
    char error[512];
    tj_check_result check;
    int dynamic;               /* the layer has dynamic dims: dyn holds its check */
    tj_dyn_check_result *dyn;  /* allocated for a dynamic layer's --check only: some 20 KB,
                                  which in every row made each layer touch a page of its own
                                  (100,000 layers: a gigabyte) */
} tj_layer_result;

typedef struct tj_model_run {
    const tj_model *model;
    tj_layer_result *results;
    atomic_int next;
    atomic_int done;
    int usable;
    int check;
    int progress; /* stderr is a terminal */
    pthread_mutex_t print_lock;
    int name_width;          /* the name column: the longest name, 24 to 64 */
    int *first_same;         /* tj_model_shares: per layer, or NULL */
    unsigned char *id_shared;
} tj_model_run;

/* The bytes of buffers one layer's check may take: every shape it tries
 * fits (a dynamic layer's dims are shrunk to fit), larger ones are
 * skipped. */
#define TJ_CHECK_MAX_BYTES ((int64_t)1 << 30)

static void tj_layer_compile(const tj_model_layer *l, tj_layer_result *r, int check)
{
    r->kernel = jit_compile(&l->sig);
    r->compiled = r->kernel && jit_info(r->kernel, &r->info) == 0;
    r->dynamic = jit_sig_is_dynamic(&l->sig);
    /* a dynamic layer: its one kernel on several concrete shapes of its family */
    if (r->compiled && check && r->dynamic && (r->dyn = malloc(sizeof *r->dyn)) == NULL) {
        r->check.skipped = 1;
        snprintf(r->check.first_failure, sizeof r->check.first_failure,
                 "skipped: out of memory for the check");
    } else if (r->compiled && check && r->dynamic) {
        tj_check_dynamic(&l->sig, 8, 42, TJ_CHECK_MAX_BYTES, r->dyn);
        r->check = r->dyn->total;
    } else if (r->compiled && check) {
        tj_check_layer(&l->sig, 8, 42, TJ_CHECK_MAX_BYTES, &r->check);
    }
    if (!r->compiled)
        snprintf(r->error, sizeof r->error, "%s", jit_last_error());
}

static void *tj_model_worker(void *arg)
{
    tj_model_run *run = arg;
    for (;;) {
        int i = atomic_fetch_add(&run->next, 1);
        if (i >= run->model->count)
            return NULL;
        const tj_model_layer *l = &run->model->layers[i];
        if (!l->usable)
            continue;
        tj_layer_compile(l, &run->results[i], run->check);
        int done = atomic_fetch_add(&run->done, 1) + 1;
        if (run->progress) {
            pthread_mutex_lock(&run->print_lock);
            fprintf(stderr, "\rcompiling %d/%d%s", done, run->usable, run->check ? " and checking" : "");
            pthread_mutex_unlock(&run->print_lock);
        }
    }
}

/* "GatherND-8": the layer's type and the op's version read from it; the
 * type alone where no version was read (a `version` older than the type's
 * first, skipped, once printed as "GatherND-0"). */
static const char *tj_op_name(const tj_model_layer *l, char *buf, size_t len)
{
    if (l->sig.opset > 0)
        snprintf(buf, len, "%s-%d", l->type, l->sig.opset);
    else
        snprintf(buf, len, "%s", l->type);
    return buf;
}

/* Width of the op column: "ScatterElementsUpdate-12", the longest name of
 * the family (SPEC.md section 5); 16 ran "GatherElements-6" and
 * "ScatterNDUpdate-3" into the next column. */
#define TJ_OP_COLUMN 24

/* An embedding bag's inputs and attributes beyond data and indices (SPEC 10). */
static void tj_list_bag(const jit_sig *s, unsigned attrs)
{
    char c[200];
    int segments = (attrs & JIT_ATTR_NUM_SEGMENTS) != 0;
    if (attrs & JIT_ATTR_OFFSETS) {
        tj_model_shape_text(&s->updates_shape, s->updates_bound, c, sizeof c);
        printf(", %s %s", segments ? "segment_ids" : "offsets", c);
    }
    if (s->has_weights)
        printf(", per_sample_weights");
    if (s->has_default_index && s->default_index != -1)
        printf(", default_index %lld", (long long)s->default_index);
    if (segments && s->num_segments != JIT_DIM_DYNAMIC)
        printf(", num_segments %lld", (long long)s->num_segments);
    else if (segments && s->num_segments_bound > 0)
        printf(", num_segments ?:%lld", (long long)s->num_segments_bound);
    else if (segments)
        printf(", num_segments ?");
}

/* Whether the model's stated output shape knows a dim the derived one
 * leaves dynamic (a contradiction was refused when it was read). */
static int tj_output_says_more(const jit_shape *stated, const jit_shape *derived)
{
    if (stated->rank != derived->rank)
        return 0;
    for (int i = 0; i < stated->rank; i++)
        if (stated->dims[i] != JIT_DIM_DYNAMIC && derived->dims[i] == JIT_DIM_DYNAMIC)
            return 1;
    return 0;
}

/* One line: name, id, op, signature, output shape (or why it is skipped). */
static void tj_list_layer(const tj_model_layer *l, int explain, int width)
{
    char a[200], b[200], c[200], o[200], op[96];
    /* a space after the op column: a name as wide as it must not run into the text */
    printf("  %-*s id %-5s %-*s ", width, l->name, l->id, TJ_OP_COLUMN,
           tj_op_name(l, op, sizeof op));
    if (!l->usable) {
        printf("%s: %s\n", l->refused ? "refused" : "skipped", l->skip);
        return;
    }
    const jit_sig *s = &l->sig;
    jit_op_info info = {.attrs = 0};
    jit_op_describe(s->op, &info);
    tj_model_shape_text(&s->data_shape, s->data_bound, a, sizeof a);
    tj_model_shape_text(&s->indices_shape, s->indices_bound, b, sizeof b);
    /* a bag's first input is its table, as jit_explain and the bag commands name it */
    printf("%s %s %s, indices %s %s", info.attrs & JIT_ATTR_BAG ? "table" : "data",
           jit_dtype_name(s->dtype), a, jit_dtype_name(s->index_type), b);
    if (info.attrs & JIT_ATTR_UPDATES) {
        tj_model_shape_text(&s->updates_shape, s->updates_bound, c, sizeof c);
        printf(", updates %s", c);
    }
    if (info.attrs & JIT_ATTR_BAG)
        tj_list_bag(s, info.attrs);
    if (info.attrs & JIT_ATTR_AXIS)
        printf(", axis %lld", (long long)s->axis);
    if ((info.attrs & JIT_ATTR_REDUCTION) && s->reduction != JIT_REDUCTION_NONE)
        printf(", reduction %s%s", jit_reduction_name(s->reduction),
               s->no_init_val ? " (use_init_val false)" : "");
    if (info.attrs & JIT_ATTR_BATCH_DIMS)
        printf(", batch_dims %d", s->batch_dims);
    if (s->index_policy != JIT_INDEX_ERROR)
        printf(", index policy %s", jit_index_policy_name(s->index_policy));
    jit_shape out;
    int shaped = jit_output_shape(s, &out) == 0;
    if (shaped) {
        tj_model_shape_text(&out, NULL, o, sizeof o);
        printf(" -> %s", o);
    }
    char *ex = explain ? jit_explain(s) : NULL;
    if (shaped && l->ir_output_known && tj_output_says_more(&l->ir_output, &out)) {
        tj_model_shape_text(&l->ir_output, l->ir_output_bound, o, sizeof o);
        printf(" (the model's stated output shape is %s)", o);
    }
    if (jit_sig_is_dynamic(s))
        printf(" (dynamic: one kernel for every shape)");
    if (l->note[0])
        printf("\n  %-*s    %s", width, "", l->note);
    printf("\n");
    if (ex) {
        printf("%s", ex);
        jit_free(ex);
    }
}

/* The concrete shapes a dynamic layer's check ran, one line each. */
static void tj_report_shapes(const tj_dyn_check_result *d)
{
    char text[512];
    for (int i = 0; i < d->shapes; i++) {
        const tj_check_result *c = &d->shape[i].check;
        tj_dyn_shape_text(&d->shape[i], text, sizeof text);
        printf("    shape %s: %s\n", text,
               c->skipped ? c->first_failure : c->failed ? c->first_failure : "ok");
    }
    if (d->shapes && !d->empty)
        printf("    none of the empty shapes tried is valid (the family may still have one): none run\n");
}

/* The compile ms column: the kernel's time, or "= id N" where an earlier
 * layer (N) has the same kernel: one signature is one cached kernel,
 * compiled once, and its time repeated on every row read as if it were
 * compiled again. "= NAME" where that layer's id is missing or not its
 * own. Both are worked out once for the whole table (tj_model_shares):
 * asked row by row, they were quadratic, 20 s for 50,000 layers. */
static int tj_first_with_kernel(const tj_model_run *run, int i)
{
    return run->first_same ? run->first_same[i] : -1;
}

static size_t tj_mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    return (size_t)(h ^ (h >> 33));
}

static size_t tj_text_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return (size_t)h;
}

/* run->first_same[i]: the first earlier layer with i's kernel, or -1; and
 * run->id_shared[i]: whether another layer has i's id. Open addressing
 * over twice the layers; left NULL (rows then print their own times and
 * names) when memory is short. */
static void tj_model_shares(tj_model_run *run)
{
    const tj_model *m = run->model;
    size_t n = (size_t)m->count, slots = 16;
    while (slots < 2 * n)
        slots *= 2;
    int *first = malloc((n ? n : 1) * sizeof *first), *kslot = malloc(slots * sizeof *kslot);
    int *islot = malloc(slots * sizeof *islot);
    unsigned char *shared = calloc(n ? n : 1, 1);
    if (!first || !kslot || !islot || !shared) {
        free(first), free(kslot), free(islot), free(shared);
        return;
    }
    for (size_t k = 0; k < slots; k++)
        kslot[k] = islot[k] = -1;
    for (size_t i = 0; i < n; i++) {
        first[i] = -1;
        const tj_layer_result *r = &run->results[i];
        if (m->layers[i].usable && r->compiled) {
            size_t k = tj_mix((uint64_t)(uintptr_t)r->kernel) & (slots - 1);
            while (kslot[k] >= 0 && run->results[kslot[k]].kernel != r->kernel)
                k = (k + 1) & (slots - 1);
            if (kslot[k] >= 0)
                first[i] = kslot[k];
            else
                kslot[k] = (int)i;
        }
        size_t h = tj_text_hash(m->layers[i].id) & (slots - 1);
        while (islot[h] >= 0 && strcmp(m->layers[islot[h]].id, m->layers[i].id) != 0)
            h = (h + 1) & (slots - 1);
        if (islot[h] >= 0)
            shared[i] = shared[islot[h]] = 1;
        else
            islot[h] = (int)i;
    }
    free(kslot);
    free(islot);
    run->first_same = first;
    run->id_shared = shared;
}

static void tj_compile_column(const tj_model_run *run, int i, char *buf, size_t len)
{
    int j = tj_first_with_kernel(run, i);
    const tj_model_layer *first = j >= 0 ? &run->model->layers[j] : NULL;
    if (!first)
        snprintf(buf, len, "%.2f", run->results[i].info.compile_ms);
    else if (first->id[0] && !run->id_shared[j])
        snprintf(buf, len, "= id %s", first->id);
    else
        snprintf(buf, len, "= %s", first->name); /* whole: a cut could halve an escape */
}

/* src cut to at most max characters at a word's end, "..." marking the
 * cut (a column of the table: a reason cut mid-word read as another) */
static void tj_clip_words(const char *src, size_t max, char *dst, size_t len)
{
    size_t n = strlen(src);
    if (n <= max) {
        snprintf(dst, len, "%s", src);
        return;
    }
    size_t cut = max - 3;
    while (cut > 0 && src[cut] != ' ')
        cut--;
    while (cut > 0 && (src[cut - 1] == ' ' || src[cut - 1] == ',' || src[cut - 1] == ':'))
        cut--;
    snprintf(dst, len, "%.*s...", (int)(cut ? cut : max - 3), src);
}

static int tj_report(const tj_model_run *run)
{
    int bad = 0;
    int width = run->name_width;
    printf("\n%-*s %-5s %-*s %-44s %10s %10s%s\n", width, "layer", "id", TJ_OP_COLUMN, "op", "engine",
           "compile ms", "code bytes", run->check ? "  check" : "");
    for (int i = 0; i < run->model->count; i++) {
        const tj_model_layer *l = &run->model->layers[i];
        const tj_layer_result *r = &run->results[i];
        if (!l->usable)
            continue;
        char engine[256], op[96], compile[300];
        if (!r->compiled) {
            printf("%-*s %-5s %-*s refused: %s\n", width, l->name, l->id, TJ_OP_COLUMN,
                   tj_op_name(l, op, sizeof op), r->error);
            bad = 1;
            continue;
        }
        const char *dyn = r->dynamic ? " dynamic" : "";
        if (r->info.engine == JIT_ENGINE_JIT)
            snprintf(engine, sizeof engine, "jit%s%s", dyn, r->info.cache_hit ? " (disk cache)" : "");
        else {
            char why[64];
            tj_clip_words(r->info.why, 50, why, sizeof why);
            snprintf(engine, sizeof engine, "reference%s (%s)", dyn, why);
        }
        tj_compile_column(run, i, compile, sizeof compile);
        printf("%-*s %-5s %-*s %-44s %10s %10zu", width, l->name, l->id, TJ_OP_COLUMN,
               tj_op_name(l, op, sizeof op), engine, compile, r->info.code_bytes);
        if (run->check) {
            const tj_check_result *c = &r->check;
            if (c->skipped)
                printf("  %s", c->first_failure);
            else if (c->failed)
                printf("  FAILED %d of %d (%s)", c->failed, c->runs, c->first_failure);
            else if (c->refused == c->runs) /* nothing shown but the refusals agree */
                printf("  ok (%d runs, each refused alike by both engines: no index can be "
                       "in range for these shapes)", c->runs);
            else if (r->dynamic)
                printf("  ok (%d shape%s, %d runs, bad index included)", r->dyn->shapes,
                       r->dyn->shapes == 1 ? "" : "s", c->runs);
            else
                printf("  ok (%d runs, bad index included)", c->runs);
            bad |= c->failed != 0;
        }
        printf("\n");
        if (run->check && r->dyn)
            tj_report_shapes(r->dyn);
    }
    return bad;
}

/* A flag no layer took is refused rather than ignored (docs/cli.md): a
 * full model's layers carry their types, axes and versions, and a user's
 * --dtype f16 on one changed nothing while the run said ok. */
/* The last line: what became of the layers, so that a model whose every
 * layer was skipped does not end on a listing that reads as success. */
static void tj_summary(const tj_model_run *run, int refused)
{
    const tj_model *m = run->model;
    int compiled = 0, failed = 0, checked = 0;
    for (int i = 0; i < m->count; i++) {
        if (!m->layers[i].usable)
            continue;
        compiled += run->results[i].compiled;
        failed += !run->results[i].compiled;
        checked += run->check && run->results[i].compiled && !run->results[i].check.skipped &&
                   !run->results[i].check.failed;
    }
    int skipped = m->count - run->usable - refused;
    printf("\n%d compiled", compiled);
    if (run->check)
        printf(" (%d checked ok)", checked);
    printf(", %d skipped, %d refused\n", skipped, refused + failed);
}

static int tj_model_flags_untaken(const char *path, const tj_model_opts *opts,
                                  const tj_model *model)
{
    unsigned used = 0;
    for (int i = 0; i < model->count; i++)
        used |= model->layers[i].flags_used;
    const struct {
        int given;
        unsigned bit;
        const char *flag;
    } flags[] = {{opts->have_dtype, TJ_MODEL_USED_DTYPE, "--dtype"},
                 {opts->have_index_type, TJ_MODEL_USED_INDEX_TYPE, "--index-type"},
                 {opts->have_axis, TJ_MODEL_USED_AXIS, "--axis"},
                 {opts->have_default_index, TJ_MODEL_USED_DEFAULT_INDEX, "--default-index"},
                 {opts->opset != 0, TJ_MODEL_USED_OPSET, "--opset"}};
    for (int i = 0; i < model->count && opts->opset && !(used & TJ_MODEL_USED_OPSET); i++) {
        const tj_model_layer *l = &model->layers[i];
        /* the layer type's versions, not its op's: EmbeddingBagOffsetsSum
         * is version 3 alone, though its op also has 15 */
        const tj_ov_op *type = (l->flags_used & TJ_MODEL_OPSET_NOT_ITS) ? tj_ov_op_find(l->type)
                                                                         : NULL;
        if (!type)
            continue;
        char versions[64] = "";
        for (int v = 0, n = 0; v < 4 && type->versions[v].version; v++)
            n += snprintf(versions + n, sizeof versions - (size_t)n, "%s%d", v ? ", " : "",
                          type->versions[v].version);
        return tj_cli_fail("model: --opset %d: %s has no version attribute, and %s's versions "
                           "are %s", opts->opset, l->name, l->type, versions),
               -1;
    }
    for (size_t f = 0; f < sizeof flags / sizeof *flags; f++)
        if (flags[f].given && !(used & flags[f].bit))
            return tj_cli_fail("model: %s was given, but no layer of %s takes it: %s", flags[f].flag,
                               path, model->fragment
                                         ? "this fragment's layers name their own or have no use for it"
                                         : "a model's layers carry their own types, axes and versions "
                                           "(the flag is for a <layer> fragment); refused rather than "
                                           "ignored"),
                   -1;
    return 0;
}

static int tj_model_args(int argc, char **argv, const char **path, tj_model_opts *opts,
                         int *check, int *explain, int64_t *jobs, int *precompile)
{
    static const char *const valued[] = {"--dtype", "--index-type", "--axis", "--opset",
                                         "--jobs", "--default-index"};
    static const char *const flags[] = {"--check", "--precompile", "--explain"};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        /* --flag=value as --flag value, as the op commands take them */
        char name[32];
        const char *eq = strncmp(a, "--", 2) == 0 ? strchr(a, '=') : NULL;
        int inline_value = eq && (size_t)(eq - a) < sizeof name;
        if (inline_value) {
            memcpy(name, a, (size_t)(eq - a));
            name[eq - a] = '\0';
            a = name;
        }
        const char *v = inline_value ? eq + 1 : i + 1 < argc ? argv[i + 1] : NULL;
        for (size_t f = 0; f < sizeof valued / sizeof *valued; f++)
            if (strcmp(a, valued[f]) == 0 && !v)
                return tj_cli_fail("model: %s needs a value", a), -1;
        for (size_t f = 0; f < sizeof flags / sizeof *flags; f++)
            if (strcmp(a, flags[f]) == 0 && inline_value)
                return tj_cli_fail("model: %s takes no value (got '%s')", a, eq + 1), -1;
        int skip = !inline_value; /* the value was the next argument */
        if (strcmp(a, "--check") == 0) {
            *check = 1;
        } else if (strcmp(a, "--precompile") == 0) {
            *precompile = 1;
        } else if (strcmp(a, "--explain") == 0) {
            *explain = 1;
        } else if (strcmp(a, "--dtype") == 0 && v) {
            if (tj_cli_dtype("--dtype", v, &opts->dtype))
                return -1;
            opts->have_dtype = 1;
            i += skip;
        } else if (strcmp(a, "--index-type") == 0 && v) {
            if (tj_cli_dtype("--index-type", v, &opts->index_type))
                return -1;
            opts->have_index_type = 1;
            i += skip;
        } else if (strcmp(a, "--axis") == 0 && v) {
            if (tj_cli_int("--axis", v, -JIT_MAX_RANK, JIT_MAX_RANK, &opts->axis))
                return -1;
            opts->have_axis = 1;
            i += skip;
        } else if (strcmp(a, "--default-index") == 0 && v) {
            /* -1: none, as a Const of OpenVINO's says it */
            if (tj_cli_int("--default-index", v, -1, INT64_MAX, &opts->default_index))
                return -1;
            opts->have_default_index = 1;
            i += skip;
        } else if (strcmp(a, "--opset") == 0 && v) {
            int64_t o;
            if (tj_cli_int("--opset", v, 1, 100, &o))
                return -1;
            opts->opset = (int)o;
            i += skip;
        } else if (strcmp(a, "--jobs") == 0 && v) {
            if (tj_cli_int("--jobs", v, 1, 64, jobs))
                return -1;
            i += skip;
        } else if (tj_cli_is_help(a)) {
            tj_cli_usage("model", stdout);
            return 1;
        } else if (a[0] == '-' && tj_cli_nearest(a, tj_cli_words("model"))) {
            return tj_cli_unknown("model: unknown option", a, tj_cli_words("model")), -1;
        } else if (a[0] == '-' && a[1]) { /* as the op commands word it */
            return tj_cli_fail("model: unknown option %s (tensorjit model --help lists them)",
                               a), -1;
        } else if (a[0] == '-' || *path) {
            return tj_cli_fail("model: unexpected argument '%s'", a), -1;
        } else {
            *path = a;
        }
    }
    if (!*path)
        return tj_cli_fail("model: give an OpenVINO IR .xml file (or a <layer> fragment) or "
                           "an ONNX .onnx file"), -1;
    return 0;
}

int tj_cmd_model(int argc, char **argv)
{
    const char *path = NULL;
    tj_model_opts opts = {.dtype = JIT_F32, .index_type = JIT_I64};
    int check = 0, explain = 0, precompile = 0;
    int64_t jobs = tj_host_cpus();
    int rc = tj_model_args(argc, argv, &path, &opts, &check, &explain, &jobs, &precompile);
    if (rc)
        return rc > 0 ? TJ_EXIT_OK : TJ_EXIT_USAGE;
    /* --precompile: every layer into the disk cache, so that a server
     * started later finds each kernel there; no cache is an error then */
    if (precompile && tj_cli_open_cache() != 0)
        return tj_cli_fail("model --precompile needs the disk cache");
    if (precompile && jit_cache_stats(0, NULL, NULL, NULL, 0) != 0) /* off, or no folder */
        return tj_cli_fail("model --precompile needs the disk cache, which is off "
                           "(TENSORJIT_CACHE_DIR=off, or no HOME to put it under)");
    tj_model model;
    char err[512];
    if (tj_model_load(path, &opts, &model, err, sizeof err) != 0) {
        tj_cli_printable(err, sizeof err);
        return tj_cli_fail("%s", err);
    }
    for (int i = 0; i < model.count; i++) {
        tj_model_layer *l = &model.layers[i];
        tj_cli_printable(l->name, sizeof l->name);
        tj_cli_printable(l->id, sizeof l->id);
        tj_cli_printable(l->skip, sizeof l->skip);
        tj_cli_printable(l->note, sizeof l->note);
    }
    int width = 24; /* torch's exports name nodes "/enc/layers.0/self_attn/Gather_1" */
    for (int i = 0; i < model.count; i++) {
        int n = (int)strlen(model.layers[i].name);
        width = n > width ? (n < 64 ? n : 64) : width;
    }
    if (tj_model_flags_untaken(path, &opts, &model) != 0) {
        tj_model_free(&model);
        return TJ_EXIT_USAGE;
    }
    tj_model_run run = {.model = &model, .check = check, .progress = isatty(2),
                        .name_width = width};
    run.results = calloc((size_t)(model.count ? model.count : 1), sizeof *run.results);
    pthread_mutex_init(&run.print_lock, NULL);
    printf("%s: %d indexing layer%s%s\n", path, model.count, model.count == 1 ? "" : "s",
           model.fragment ? " (a fragment: no <net>)" : "");
    int refused = 0; /* layers whose IR is wrong: the command fails */
    for (int i = 0; i < model.count; i++) {
        tj_list_layer(&model.layers[i], explain, run.name_width);
        run.usable += model.layers[i].usable;
        refused += model.layers[i].refused;
    }
    int n = (int)(jobs < run.usable ? jobs : run.usable);
    pthread_t threads[64];
    for (int t = 0; t < n; t++)
        pthread_create(&threads[t], NULL, tj_model_worker, &run);
    for (int t = 0; t < n; t++)
        pthread_join(threads[t], NULL);
    if (run.progress && run.usable)
        fprintf(stderr, "\r%*s\r", 40, "");
    tj_model_shares(&run);
    int bad = (run.usable ? tj_report(&run) : 0) || refused;
    tj_summary(&run, refused);
    if (precompile) {
        int64_t entries, bytes;
        char dir[4096];
        int hits = 0, done = 0;
        for (int i = 0; i < model.count; i++) {
            const tj_layer_result *r = &run.results[i];
            if (!r->compiled || tj_first_with_kernel(&run, i) >= 0)
                continue; /* one kernel, counted at its first layer */
            done += r->info.engine == JIT_ENGINE_JIT;
            hits += r->info.cache_hit;
        }
        if (jit_cache_stats(0, &entries, &bytes, dir, sizeof dir) == 0)
            printf("\nprecompiled: %d kernel%s in %s (%d compiled now, %d already there); "
                   "the cache holds %lld kernels, %lld bytes\n",
                   done, done == 1 ? "" : "s", dir, done - hits, hits, (long long)entries,
                   (long long)bytes);
    }
    pthread_mutex_destroy(&run.print_lock);
    for (int i = 0; i < model.count; i++)
        free(run.results[i].dyn);
    free(run.results);
    free(run.first_same);
    free(run.id_shared);
    tj_model_free(&model);
    jit_shutdown();
    return bad ? TJ_EXIT_FAILURE : TJ_EXIT_OK;
}
