/* The model reader on the five OpenVINO embedding-bag layers (SPEC 10),
 * from the IR files of tests/models/: each layer's signature as the file
 * states it (the expectations below are read off the .xml and .bin by
 * hand), `tensorjit model --check` running every one of them, a
 * default_index that is no Const skipped, and wrong IR refused. The check
 * itself (tools/layer_check.c) on bag signatures: every valid run must
 * succeed, so that two kernels refusing alike cannot pass for a check. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "layer_check.h"
#include "ov_ir.h"

#ifndef TJ_CLI_PATH
#error "TJ_CLI_PATH must name the tensorjit binary"
#endif
#ifndef TJ_MODELS_DIR
#error "TJ_MODELS_DIR must name tests/models"
#endif

static char out_text[1 << 16];

/* `tensorjit model FILE ARGS` (FILE in tests/models), stdout kept; the
 * exit status. */
static int run_model(const char *file, const char *args)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s model %s/%s %s 2>&1", TJ_CLI_PATH, TJ_MODELS_DIR, file, args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(out_text, 1, sizeof out_text - 1, p);
    out_text[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The line of the report (after the listing) that names layer `name`. */
static const char *report_line(const char *name, char *buf, size_t len)
{
    const char *report = strstr(out_text, "\nlayer ");
    assert_non_null(report);
    char key[80];
    snprintf(key, sizeof key, "\n%s ", name);
    const char *at = strstr(report, key);
    if (!at)
        fail_msg("no report line for %s in:\n%s", name, out_text);
    at++;
    size_t n = strcspn(at, "\n");
    snprintf(buf, len, "%.*s", (int)(n < len ? n : len - 1), at);
    return buf;
}

static void read_model(const char *file, tj_model *m)
{
    char path[512], err[512];
    tj_model_opts opts = {.dtype = JIT_F32, .index_type = JIT_I64};
    snprintf(path, sizeof path, "%s/%s", TJ_MODELS_DIR, file);
    if (tj_model_read(path, &opts, m, err, sizeof err) != 0)
        fail_msg("%s: %s", file, err);
}

/* A fragment's text read with read_model's options (f32, i64). */
static void parse_fragment(const char *frag, tj_model *m)
{
    char err[256];
    if (tj_model_parse(frag, strlen(frag), "fragment", NULL,
                       &(tj_model_opts){.dtype = JIT_F32, .index_type = JIT_I64}, m, err,
                       sizeof err) != 0)
        fail_msg("%s", err);
}

static const tj_model_layer *layer_named(const tj_model *m, const char *name)
{
    for (int i = 0; i < m->count; i++)
        if (strcmp(m->layers[i].name, name) == 0)
            return &m->layers[i];
    fail_msg("no layer %s", name);
    return NULL;
}

static void expect_shape(const jit_shape *s, int rank, int64_t d0, int64_t d1)
{
    assert_int_equal(s->rank, rank);
    if (rank > 0)
        assert_int_equal(s->dims[0], d0);
    if (rank > 1)
        assert_int_equal(s->dims[1], d1);
}

/* bags.xml: the inputs of each layer in OpenVINO's order, the Consts
 * from bags.bin (default_index 2, num_segments 5, default_index -1). */
static void test_reads_the_five_layers(void **state)
{
    (void)state;
    tj_model m;
    read_model("bags.xml", &m);
    assert_int_equal(m.count, 6);
    for (int i = 0; i < m.count; i++)
        if (!m.layers[i].usable)
            fail_msg("%s: %s", m.layers[i].name, m.layers[i].skip);

    const jit_sig *s = &layer_named(&m, "offsets_sum")->sig;
    assert_int_equal(s->op, JIT_OP_EMBEDDING_BAG_OFFSETS);
    assert_int_equal(s->opset, 3);
    assert_int_equal(s->reduction, JIT_REDUCTION_SUM);
    expect_shape(&s->data_shape, 2, 10, 4);
    expect_shape(&s->indices_shape, 1, 6, 0);
    expect_shape(&s->updates_shape, 1, 3, 0);
    assert_int_equal(s->index_type, JIT_I64);
    assert_int_equal(s->has_weights, 1);
    assert_int_equal(s->has_default_index, 1);
    assert_int_equal(s->default_index, 2);

    s = &layer_named(&m, "offsets_mean")->sig;
    assert_int_equal(s->op, JIT_OP_EMBEDDING_BAG_OFFSETS);
    assert_int_equal(s->opset, 15);
    assert_int_equal(s->reduction, JIT_REDUCTION_MEAN);
    assert_int_equal(s->has_weights, 0);
    assert_int_equal(s->default_index, 2);

    s = &layer_named(&m, "packed_sum")->sig;
    assert_int_equal(s->op, JIT_OP_EMBEDDING_BAG_PACKED);
    assert_int_equal(s->opset, 3);
    assert_int_equal(s->index_type, JIT_I32);
    expect_shape(&s->indices_shape, 2, 3, 2);
    assert_int_equal(s->has_weights, 1);
    assert_int_equal(s->has_default_index, 0);

    s = &layer_named(&m, "packed_mean")->sig;
    assert_int_equal(s->op, JIT_OP_EMBEDDING_BAG_PACKED);
    assert_int_equal(s->opset, 15);
    assert_int_equal(s->reduction, JIT_REDUCTION_MEAN);
    expect_shape(&s->indices_shape, 2, JIT_DIM_DYNAMIC, 3);
    assert_int_equal(jit_sig_is_dynamic(s), 1);

    s = &layer_named(&m, "segments_sum")->sig;
    assert_int_equal(s->op, JIT_OP_EMBEDDING_SEGMENTS);
    assert_int_equal(s->opset, 3);
    expect_shape(&s->updates_shape, 1, 6, 0);
    assert_int_equal(s->num_segments, 5);
    assert_int_equal(s->has_weights, 1);
    /* OpenVINO's -1: none (the signature's normalization drops the flag) */
    assert_int_equal(s->default_index, -1);
    jit_shape out;
    assert_int_equal(jit_output_shape(s, &out), 0);
    expect_shape(&out, 2, 5, 4);

    /* num_segments from a Parameter: S dynamic, bounded by the output's 1..8 */
    const tj_model_layer *l = layer_named(&m, "segments_dynamic");
    s = &l->sig;
    assert_int_equal(s->num_segments, JIT_DIM_DYNAMIC);
    assert_int_equal(s->num_segments_bound, 8);
    assert_int_equal(s->default_index, 2);
    assert_int_equal(jit_sig_is_dynamic(s), 1);
    assert_non_null(strstr(l->note, "num_segments is not a Const"));
    tj_model_free(&m);
}

/* Every layer listed with its bag inputs, compiled and checked (the
 * dynamic ones on several shapes), exit 0. */
static void test_model_check_runs_every_bag_layer(void **state)
{
    (void)state;
    assert_int_equal(run_model("bags.xml", "--check"), 0);
    assert_non_null(strstr(out_text, "6 indexing layers"));
    static const char *const names[] = {"offsets_sum", "offsets_mean", "packed_sum",
                                        "packed_mean", "segments_sum", "segments_dynamic"};
    char line[512];
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        report_line(names[i], line, sizeof line);
        if (!strstr(line, " ok ("))
            fail_msg("%s not checked: %s", names[i], line);
    }
    /* the first input by its name in a bag, table, as --explain and the bag
     * commands say (it was listed as "data f32 [10,4]") */
    assert_non_null(strstr(out_text, "EmbeddingBagOffsetsSum-3 table f32 [10,4], indices i64 [6]"));
    assert_null(strstr(out_text, " data f32"));
    assert_non_null(strstr(out_text, "offsets [3], per_sample_weights, default_index 2"));
    assert_non_null(strstr(out_text, "segment_ids [6], per_sample_weights, num_segments 5"));
    assert_non_null(strstr(out_text, "num_segments ?:8"));
    /* the dynamic layers list the shapes their check ran */
    assert_non_null(strstr(out_text, "    shape "));
}

/* A default_index that is no Const: listed as skipped, saying why; not an
 * error. */
static void test_runtime_default_index_skipped(void **state)
{
    (void)state;
    tj_model m;
    read_model("bags_skip.xml", &m);
    assert_int_equal(m.count, 1);
    assert_int_equal(m.layers[0].usable, 0);
    assert_int_equal(m.layers[0].refused, 0);
    assert_non_null(strstr(m.layers[0].skip, "default_index comes from layer 'row' of type "
                                             "Parameter, not a Const"));
    tj_model_free(&m);
    assert_int_equal(run_model("bags_skip.xml", "--check"), 0);
    assert_non_null(strstr(out_text, "skipped: default_index comes from layer 'row'"));
}

/* IR that is wrong: each layer refused naming what, the command fails. */
static void test_wrong_ir_refused(void **state)
{
    (void)state;
    tj_model m;
    read_model("bags_bad.xml", &m);
    assert_int_equal(m.count, 6);
    for (int i = 0; i < m.count; i++) {
        assert_int_equal(m.layers[i].usable, 0);
        assert_int_equal(m.layers[i].refused, 1);
    }
    assert_non_null(strstr(layer_named(&m, "max_bags")->skip, "reduction 'max'"));
    assert_non_null(strstr(layer_named(&m, "negative_segments")->skip, "holds -3"));
    assert_non_null(strstr(layer_named(&m, "weights_shape")->skip,
                           "(per_sample_weights) has the shape [3,3], not the indices' [3,2]"));
    /* (a newcomer's trial: these three were read as if they were right) */
    assert_non_null(strstr(layer_named(&m, "extra_input")->skip,
                           "4 input ports: EmbeddingBagPacked takes at most 3"));
    assert_non_null(strstr(layer_named(&m, "default_type")->skip,
                           "default_index Const is i32, not the indices' i64"));
    assert_non_null(strstr(layer_named(&m, "segments_type")->skip,
                           "num_segments Const is i32, not the indices' i64"));
    tj_model_free(&m);
    assert_int_equal(run_model("bags_bad.xml", "--check"), 1);
    assert_non_null(strstr(out_text, "refused: num_segments Const holds -3"));
}

/* A layer type names its op's version: EmbeddingBagOffsetsSum and
 * EmbeddingBagPackedSum are version 3 only, EmbeddingBagOffsets and
 * EmbeddingBagPacked version 15 only. Without a `version` (a fragment, as
 * the specs print them) each once took its op's default, 15, and was
 * listed as EmbeddingBagOffsetsSum-15; --opset 3 made an
 * EmbeddingBagOffsets-3 of it. */
static void test_versionless_bag_types(void **state)
{
    (void)state;
    const char frag[] =
        "<layer type=\"EmbeddingBagPackedSum\"><input>"
        "<port id=\"0\"><dim>5</dim><dim>2</dim></port>"
        "<port id=\"1\"><dim>3</dim><dim>2</dim></port></input>"
        "<output><port id=\"2\"><dim>3</dim><dim>2</dim></port></output></layer>"
        "<layer type=\"EmbeddingBagPacked\"><data reduction=\"mean\"/><input>"
        "<port id=\"0\"><dim>5</dim><dim>2</dim></port>"
        "<port id=\"1\"><dim>3</dim><dim>2</dim></port></input>"
        "<output><port id=\"2\"><dim>3</dim><dim>2</dim></port></output></layer>";
    int opsets[] = {0, 3, 15};
    for (size_t k = 0; k < sizeof opsets / sizeof *opsets; k++) {
        tj_model_opts opts = {.dtype = JIT_F32, .index_type = JIT_I64, .opset = opsets[k]};
        tj_model m;
        char err[256];
        assert_int_equal(tj_model_parse(frag, strlen(frag), "bags", NULL, &opts, &m, err,
                                        sizeof err), 0);
        assert_int_equal(m.count, 2);
        assert_int_equal(m.layers[0].sig.opset, 3);
        assert_int_equal(m.layers[1].sig.opset, 15);
        assert_true(m.layers[0].usable);
        assert_true(m.layers[1].usable); /* mean: version 15's */
        assert_non_null(strstr(m.layers[0].note, "read as EmbeddingBagPackedSum-3"));
        /* --opset 15 is no version of the ...Sum type, 3 none of the other */
        assert_int_equal(!!(m.layers[0].flags_used & TJ_MODEL_OPSET_NOT_ITS), opsets[k] == 15);
        assert_int_equal(!!(m.layers[1].flags_used & TJ_MODEL_OPSET_NOT_ITS), opsets[k] == 3);
        tj_model_free(&m);
    }
}

/* The EmbeddingBagPackedSum, EmbeddingBagOffsetsSum and EmbeddingSegmentsSum
 * specs print an input as <port id="2"/>, then its <dim>s and </port>. As
 * XML the stray </port> closed the <input>, the weights read as a scalar
 * (refused: "has the shape [], not the indices' [3,2]") and, in recover
 * mode, every layer after it was dropped without a word. The fragment pass
 * opens such a port; a fragment that still ends early is refused. */
static void test_spec_self_closed_ports(void **state)
{
    (void)state;
    const char frag[] =
        "<layer ... type=\"EmbeddingBagPackedSum\" ... >\n"
        "  <input>\n"
        "    <port id=\"0\">  <!-- emb_table -->\n      <dim>5</dim>\n      <dim>2</dim>\n"
        "    </port>\n"
        "    <port id=\"1\">\n      <dim>3</dim>\n      <dim>2</dim>\n    </port>\n"
        "    <port id=\"2\"/>    <!-- per_sample_weights value is: [[0.5, 0.5]] -->\n"
        "      <dim>3</dim>\n      <dim>2</dim>\n    </port>\n"
        "  </input>\n"
        "  <output>\n    <port id=\"3\"><dim>3</dim><dim>2</dim></port>\n  </output>\n"
        "</layer>\n"
        "<layer ... type=\"EmbeddingSegmentsSum\" ... >\n"
        "  <input>\n"
        "    <port id=\"0\"><dim>5</dim><dim>2</dim></port>\n"
        "    <port id=\"1\"><dim>4</dim></port>\n"
        "    <port id=\"2\"/> <!-- segment_ids -->\n      <dim>4</dim>\n    </port>\n"
        "    <port id=\"3\"/>    <!-- num_segments value is: 3 -->\n"
        "  </input>\n"
        "  <output>\n    <port id=\"6\"><dim>3</dim><dim>2</dim></port>\n  </output>\n"
        "</layer>\n";
    tj_model m;
    parse_fragment(frag, &m);
    assert_int_equal(m.count, 2);
    if (!m.layers[0].usable)
        fail_msg("packed: %s", m.layers[0].skip);
    assert_true(m.layers[0].sig.has_weights);
    expect_shape(&m.layers[0].sig.indices_shape, 2, 3, 2);
    if (!m.layers[1].usable)
        fail_msg("segments: %s", m.layers[1].skip);
    expect_shape(&m.layers[1].sig.updates_shape, 1, 4, 0);   /* the segment ids' [4] */
    /* a fragment has no Const, but its output port says S (the spec's value, 3) */
    assert_int_equal(m.layers[1].sig.num_segments, 3);
    assert_non_null(strstr(m.layers[1].note, "S = 3, the output port's first dim"));
    tj_model_free(&m);

    /* a scalar port (<port id="3"/> then another port) stays a scalar */
    const char scalar[] =
        "<layer type=\"EmbeddingBagOffsetsSum\" version=\"opset3\"><input>"
        "<port id=\"0\"><dim>5</dim><dim>2</dim></port><port id=\"1\"><dim>4</dim></port>"
        "<port id=\"2\"><dim>3</dim></port><port id=\"3\"/> <!-- <dim>9</dim> -->"
        "<port id=\"4\"><dim>4</dim></port></input></layer>";
    parse_fragment(scalar, &m);
    assert_int_equal(m.count, 1);
    assert_string_equal(m.layers[0].skip, "a fragment carries no constants: give its "
                                          "default_index with --default-index");
    tj_model_free(&m);
    /* given as --default-index would give it: the row, or -1 (none) */
    static const int64_t rows[] = {4, -1};
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        tj_model_opts given = {.dtype = JIT_F32, .index_type = JIT_I64,
                               .have_default_index = 1, .default_index = rows[i]};
        char err[256];
        assert_int_equal(tj_model_parse(scalar, strlen(scalar), "spec", NULL, &given, &m, err,
                                        sizeof err), 0);
        if (!m.layers[0].usable)
            fail_msg("default_index %lld: %s", (long long)rows[i], m.layers[0].skip);
        assert_true(m.layers[0].sig.has_default_index);
        assert_int_equal(m.layers[0].sig.default_index, rows[i]);
        assert_true(m.layers[0].flags_used & TJ_MODEL_USED_DEFAULT_INDEX);
        tj_model_free(&m);
    }
}


/* A reduction given to a ...Sum type, which has no such attribute: summed,
 * as OpenVINO does, and said in the layer's note (a newcomer's trial: it
 * was summed without a word). */
static void test_sum_types_say_a_reduction_is_ignored(void **state)
{
    (void)state;
    const char frag[] =
        "<layer id=\"1\" name=\"bag\" type=\"EmbeddingBagOffsetsSum\" version=\"opset3\">\n"
        "  <data reduction=\"mean\"/>\n"
        "  <input><port id=\"0\"><dim>5</dim><dim>2</dim></port>"
        "<port id=\"1\"><dim>4</dim></port><port id=\"2\"><dim>2</dim></port></input>\n"
        "  <output><port id=\"3\"><dim>2</dim><dim>2</dim></port></output>\n"
        "</layer>\n";
    tj_model m;
    parse_fragment(frag, &m);
    assert_int_equal(m.count, 1);
    if (!m.layers[0].usable)
        fail_msg("%s", m.layers[0].skip);
    assert_int_equal(m.layers[0].sig.reduction, JIT_REDUCTION_SUM);
    if (!strstr(m.layers[0].note, "reduction 'mean' ignored: EmbeddingBagOffsetsSum sums"))
        fail_msg("note: %s", m.layers[0].note);
    tj_model_free(&m);
}

/* A fragment whose stray end tag closes it early: libxml2's recover mode
 * stops at the "extra content" and returned the layers before it, the
 * others dropped without a word (3 layers read as 1). Refused instead, at
 * the line where reading stopped. */
static void test_fragment_cut_short_refused(void **state)
{
    (void)state;
    const char frag[] =
        "<layer type=\"EmbeddingBagPacked\"><input>\n"
        "<port id=\"0\"><dim>5</dim><dim>2</dim></port>\n"
        "<port id=\"1\"><dim>3</dim><dim>2</dim></port></input></input>\n"
        "</layer>\n"
        "<layer type=\"EmbeddingBagPacked\"><input>\n"
        "<port id=\"0\"><dim>5</dim><dim>2</dim></port>\n"
        "<port id=\"1\"><dim>3</dim><dim>2</dim></port></input>\n"
        "</layer>\n";
    tj_model_opts opts = {.dtype = JIT_F32, .index_type = JIT_I64};
    tj_model m;
    char err[256] = "";
    assert_int_equal(tj_model_parse(frag, strlen(frag), "cut.xml", NULL, &opts, &m, err,
                                    sizeof err), -1);
    if (!strstr(err, "cut.xml:5: ") || !strstr(err, "the layers from here on would be lost"))
        fail_msg("message: %s", err);
    assert_null(strchr(err, '\n'));
}

/* A stray end tag after the last layer (a fragment cut from a model with
 * its </layers>) also stops recover mode early, but nothing is left
 * unread: every layer is read, as before the refusal above, and is not
 * refused as "the layers from here on would be lost". */
static void test_fragment_trailing_end_tag_read(void **state)
{
    (void)state;
    const char layer[] = "<layer type=\"GatherND\" version=\"opset8\"><input>"
                         "<port id=\"0\"><dim>4</dim></port>"
                         "<port id=\"1\"><dim>2</dim><dim>1</dim></port></input></layer>\n";
    const char *tails[] = {"</layers>\n", "</layers>  <!-- the end --> \n", "</layers>"};
    tj_model_opts opts = {.dtype = JIT_F32, .index_type = JIT_I64};
    for (size_t i = 0; i < sizeof tails / sizeof *tails; i++) {
        char frag[512];
        snprintf(frag, sizeof frag, "%s%s%s", layer, layer, tails[i]);
        tj_model m;
        char err[256] = "";
        if (tj_model_parse(frag, strlen(frag), "tail.xml", NULL, &opts, &m, err, sizeof err) != 0)
            fail_msg("tail %zu: %s", i, err);
        assert_int_equal(m.count, 2);
        assert_true(m.layers[0].usable && m.layers[1].usable);
        tj_model_free(&m);
    }
    /* on one line with the layers: the stop is found by its column, which
     * libxml2 counts in characters (the comment's are 3 bytes each) */
    char one[512];
    snprintf(one, sizeof one, "%.*s<!-- \u2211\u2211\u2211\u2211 -->%.*s</layers>",
             (int)strlen(layer) - 1, layer, (int)strlen(layer) - 1, layer);
    tj_model m;
    char err[256] = "";
    if (tj_model_parse(one, strlen(one), "tail.xml", NULL, &opts, &m, err, sizeof err) != 0)
        fail_msg("one line: %s", err);
    assert_int_equal(m.count, 2);
    tj_model_free(&m);
    /* a layer after the stray tag on its line is lost: still refused */
    snprintf(one, sizeof one, "%.*s</layers>%s", (int)strlen(layer) - 1, layer, layer);
    assert_int_equal(tj_model_parse(one, strlen(one), "tail.xml", NULL, &opts, &m, err,
                                    sizeof err), -1);
    assert_non_null(strstr(err, "tail.xml:1: "));
    /* the stray tag is on the line named, not before it */
    if (!strstr(err, "an end tag on this line or before it has no start tag"))
        fail_msg("message: %s", err);
}

/* The check on bag signatures of every form, static and dynamic: all runs
 * pass, none skipped. Before the check knew the bags' arguments, it
 * called them as four-argument kernels and both sides refused alike. */
static void test_layer_check_runs_bags(void **state)
{
    (void)state;
    jit_sig sigs[] = {
        {.op = JIT_OP_EMBEDDING_BAG_OFFSETS, .dtype = JIT_F32, .index_type = JIT_I32,
         .data_shape = {2, {7, 3}}, .indices_shape = {1, {9}}, .updates_shape = {1, {4}},
         .has_weights = 1, .has_default_index = 1, .default_index = 6},
        {.op = JIT_OP_EMBEDDING_BAG_OFFSETS, .opset = 15, .dtype = JIT_F16,
         .index_type = JIT_I64, .reduction = JIT_REDUCTION_MEAN, .include_last_offset = 1,
         .has_padding_idx = 1, .padding_idx = -1, .data_shape = {1, {5}},
         .indices_shape = {1, {JIT_DIM_DYNAMIC}}, .updates_shape = {1, {JIT_DIM_DYNAMIC}}},
        {.op = JIT_OP_EMBEDDING_BAG_PACKED, .opset = 15, .dtype = JIT_I32,
         .index_type = JIT_I64, .reduction = JIT_REDUCTION_MAX, .data_shape = {2, {4, 2}},
         .indices_shape = {2, {3, 5}}},
        {.op = JIT_OP_EMBEDDING_SEGMENTS, .dtype = JIT_F64, .index_type = JIT_I32,
         .data_shape = {2, {6, 2}}, .indices_shape = {1, {8}}, .updates_shape = {1, {8}},
         .num_segments = 4, .has_weights = 1},
        {.op = JIT_OP_EMBEDDING_SEGMENTS, .dtype = JIT_F32, .index_type = JIT_I64,
         .data_shape = {2, {6, 2}}, .indices_shape = {1, {5}}, .updates_shape = {1, {5}},
         .num_segments = JIT_DIM_DYNAMIC, .has_default_index = 1, .default_index = 0},
    };
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        tj_check_result r;
        if (jit_sig_is_dynamic(&sigs[i])) {
            tj_dyn_check_result d;
            tj_check_dynamic(&sigs[i], 4, 7, INT64_C(1) << 20, &d);
            assert_true(d.nonempty > 0);
            r = d.total;
        } else {
            tj_check_layer(&sigs[i], 4, 7, INT64_C(1) << 20, &r);
        }
        if (r.failed || r.skipped || r.runs == 0 || r.passed != r.runs)
            fail_msg("signature %zu: %d of %d runs failed, skipped %d: %s", i, r.failed, r.runs,
                     r.skipped, r.first_failure);
    }
    jit_shutdown();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reads_the_five_layers),
        cmocka_unit_test(test_model_check_runs_every_bag_layer),
        cmocka_unit_test(test_runtime_default_index_skipped),
        cmocka_unit_test(test_wrong_ir_refused),
        cmocka_unit_test(test_sum_types_say_a_reduction_is_ignored),
        cmocka_unit_test(test_layer_check_runs_bags),
        cmocka_unit_test(test_versionless_bag_types),
        cmocka_unit_test(test_spec_self_closed_ports),
        cmocka_unit_test(test_fragment_cut_short_refused),
        cmocka_unit_test(test_fragment_trailing_end_tag_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
