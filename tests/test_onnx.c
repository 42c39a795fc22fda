/* The ONNX reader on models ONNX's own Python package writes
 * (tests/onnx/gen_models.py): every indexing node's output shape equals
 * the one onnx.shape_inference gives; each invalid model is refused or
 * skipped with the reason the generator names; hostile bytes get one
 * line, never a crash; and a layer that exists in both formats reads
 * into the same signature through either reader. Skips (77) when this
 * build has no ONNX reader or /usr/bin/python3 has no onnx package. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "onnx_model.h"

static char root[64], dir[128];
static const tj_model_opts defaults = {.dtype = JIT_F32, .index_type = JIT_I64};

static const char *path_of(const char *name)
{
    static char buf[4][512];
    static int n;
    char *p = buf[n++ % 4];
    snprintf(p, 512, "%s/%s", dir, name);
    return p;
}

static void shape_text(const jit_shape *s, char *buf, size_t len)
{
    size_t used = (size_t)snprintf(buf, len, "[");
    for (int i = 0; i < s->rank && used + 24 < len; i++)
        used += s->dims[i] == JIT_DIM_DYNAMIC
                    ? (size_t)snprintf(buf + used, len - used, "%s?", i ? "," : "")
                    : (size_t)snprintf(buf + used, len - used, "%s%lld", i ? "," : "",
                                       (long long)s->dims[i]);
    snprintf(buf + used, len - used, "]");
}

static tj_model read_ok(const char *file)
{
    tj_model m;
    char err[512];
    if (tj_onnx_read(path_of(file), &defaults, &m, err, sizeof err) != 0)
        fail_msg("%s refused: %s", file, err);
    return m;
}

/* The layer named `node`, or ending in "/node" (a body's). */
static const tj_model_layer *layer_named(const tj_model *m, const char *node)
{
    size_t n = strlen(node);
    for (int i = 0; i < m->count; i++) {
        const char *name = m->layers[i].name;
        size_t k = strlen(name);
        int in_body = k > n && name[k - n - 1] == '/' && strcmp(name + k - n, node) == 0;
        if (strcmp(name, node) == 0 || in_body)
            return &m->layers[i];
    }
    return NULL;
}

/* expected.tsv: file, node, the output shape ONNX infers. */
static void test_output_shapes_are_onnx_inference(void **state)
{
    (void)state;
    FILE *f = fopen(path_of("expected.tsv"), "r");
    assert_non_null(f);
    char line[512], file[128], node[128], want[128], got[160];
    int rows = 0, compiled = 0;
    while (fgets(line, sizeof line, f)) {
        assert_int_equal(sscanf(line, "%127[^\t]\t%127[^\t]\t%127[^\n]", file, node, want), 3);
        tj_model m = read_ok(file);
        const tj_model_layer *l = layer_named(&m, node);
        if (!l)
            fail_msg("%s: no layer %s", file, node);
        if (!l->usable)
            fail_msg("%s: %s not usable: %s", file, node, l->skip);
        jit_shape out;
        assert_int_equal(jit_output_shape(&l->sig, &out), 0);
        shape_text(&out, got, sizeof got);
        if (strcmp(got, want) != 0)
            fail_msg("%s: %s gives %s, ONNX infers %s", file, node, got, want);
        /* ONNX's rule on indices: negatives wrap, beyond is an error (before
         * opset 11, where none was defined, as ONNX Runtime reads them) */
        assert_int_equal(l->sig.index_policy, JIT_INDEX_NEGATIVE_WRAPS);
        jit_kernel k = jit_compile(&l->sig);
        if (!k)
            fail_msg("%s: %s does not compile: %s", file, node, jit_last_error());
        compiled++;
        rows++;
        tj_model_free(&m);
    }
    fclose(f);
    printf("%d nodes: output shapes equal ONNX's inference, %d compiled\n", rows, compiled);
    assert_true(rows >= 50);
}

/* The generator writes under the folder it is given and nowhere else (the
 * models whose external data escapes their folder lie in dir/escape/, the
 * file they point at in dir), and run again into the same folder replaces
 * what it wrote: no error on the link it made, and external.bin not grown
 * by onnx.save's appending (external_short.onnx must still find no 32
 * bytes at offset 64, which test_invalid_models, run after this, holds). */
static void test_generator_stays_in_its_folder_and_reruns(void **state)
{
    (void)state;
    DIR *d = opendir(root);
    assert_non_null(d);
    const struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, "m"))
            fail_msg("gen_models.py wrote %s/%s, outside the folder it was given", root,
                     e->d_name);
    closedir(d);
    struct stat st;
    assert_int_equal(stat(path_of("external.bin"), &st), 0);
    off_t external = st.st_size;
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s %s", TJ_ONNX_GEN, dir);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(stat(path_of("external.bin"), &st), 0);
    assert_int_equal(st.st_size, external);
    assert_int_equal(lstat(path_of("escape/link.bin"), &st), 0);
    assert_true(S_ISLNK(st.st_mode));
}

/* bad.tsv: file, error|refused|skipped, what the line must say. */
static void test_invalid_models(void **state)
{
    (void)state;
    FILE *f = fopen(path_of("bad.tsv"), "r");
    assert_non_null(f);
    char line[512], file[128], kind[32], want[256], err[512];
    int rows = 0;
    while (fgets(line, sizeof line, f)) {
        assert_int_equal(sscanf(line, "%127[^\t]\t%31[^\t]\t%255[^\n]", file, kind, want), 3);
        tj_model m;
        int rc = tj_onnx_read(path_of(file), &defaults, &m, err, sizeof err);
        if (strcmp(kind, "error") == 0) {
            assert_int_equal(rc, -1);
            if (!strstr(err, want) || strchr(err, '\n'))
                fail_msg("%s: '%s' does not say '%s' in one line", file, err, want);
        } else {
            if (rc != 0)
                fail_msg("%s refused whole: %s", file, err);
            assert_int_equal(m.count, 1);
            const tj_model_layer *l = &m.layers[0];
            assert_false(l->usable);
            assert_int_equal(l->refused, strcmp(kind, "refused") == 0);
            if (!strstr(l->skip, want))
                fail_msg("%s: '%s' does not say '%s'", file, l->skip, want);
            tj_model_free(&m);
        }
        rows++;
    }
    fclose(f);
    assert_true(rows >= 15);
}

/* Bytes into a file of dir, read back by the reader: 0 or -1 with one line. */
static int read_bytes(const void *bytes, size_t len, char *err, size_t err_len)
{
    tj_model m;
    int rc = tj_onnx_parse(bytes, len, "hostile.onnx", dir, &defaults, &m, err, err_len);
    if (rc == 0)
        tj_model_free(&m);
    else
        assert_true(err[0] && !strchr(err, '\n'));
    return rc;
}

static uint8_t *slurp(const char *file, size_t *len)
{
    FILE *f = fopen(path_of(file), "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    rewind(f);
    uint8_t *b = malloc(*len);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, *len, f), *len);
    fclose(f);
    return b;
}

/* Every prefix of a model with bodies, and every byte of it flipped. */
static void test_truncated_and_flipped(void **state)
{
    (void)state;
    size_t len;
    char err[512];
    uint8_t *b = slurp("subgraphs.onnx", &len);
    int refused = 0;
    for (size_t n = 0; n < len; n++)
        refused += read_bytes(b, n, err, sizeof err) != 0;
    assert_true(refused > 0);
    for (size_t i = 0; i < len; i++) {
        b[i] ^= 0xff;
        read_bytes(b, len, err, sizeof err);
        b[i] ^= 0xff;
    }
    free(b);
}

/* A varint of v at p; the bytes written. */
static size_t varint(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    do {
        p[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    return n;
}

/* Garbage, wrong wire types, and a graph of millions of empty nodes: each
 * a one-line error. */
static void test_hostile_bytes(void **state)
{
    (void)state;
    char err[512];
    static const uint8_t garbage[] = "this is not protobuf at all \xff\xff\xff\xff";
    assert_int_equal(read_bytes(garbage, sizeof garbage, err, sizeof err), -1);
    /* ModelProto.graph (field 7) as a varint, not a message */
    static const uint8_t wrong_type[] = {0x38, 0x05};
    assert_int_equal(read_bytes(wrong_type, sizeof wrong_type, err, sizeof err), -1);
    /* ir_version but no graph */
    static const uint8_t no_graph[] = {0x08, 0x08};
    assert_int_equal(read_bytes(no_graph, sizeof no_graph, err, sizeof err), -1);
    assert_non_null(strstr(err, "no graph"));
    /* graph { node {} x 4M }: 8 MiB of file, a NodeProto struct per 2 bytes */
    size_t nodes = (size_t)4 << 20, inner = 2 * nodes;
    uint8_t *b = malloc(inner + 32);
    assert_non_null(b);
    size_t n = 0;
    b[n++] = 0x08, b[n++] = 0x08, b[n++] = 0x3a; /* ir_version 8, graph: */
    n += varint(b + n, inner);
    for (size_t i = 0; i < nodes; i++)
        b[n++] = 0x0a, b[n++] = 0x00;
    assert_int_equal(read_bytes(b, n, err, sizeof err), -1);
    if (!strstr(err, "needs more than"))
        fail_msg("a huge repeated field: '%s'", err);
    free(b);
}

/* A string field (wire type 2) of number `field` at p; the bytes written. */
static size_t string_field(uint8_t *p, unsigned field, const char *text)
{
    size_t n = varint(p, (uint64_t)field << 3 | 2), len = strlen(text);
    n += varint(p + n, len);
    memcpy(p + n, text, len);
    return n + len;
}

enum { UNNAMED, NAMED, LAST_NAMED_AS_FIRST };

/* ModelProto { ir_version 8, graph { node x count } }: node i a Relu of
 * v<i-1> into v<i>, in reverse file order when `reversed`; node 0 reads
 * v<count-1> when `cyclic` (nothing otherwise); named n<i> unless
 * UNNAMED, the last n0 with LAST_NAMED_AS_FIRST. In *len; free it. */
static uint8_t *relu_chain(size_t count, int cyclic, int reversed, int names, size_t *len)
{
    size_t cap = count * 40 + 64, n = 0;
    uint8_t *nodes = malloc(cap), *b = malloc(cap + 16);
    assert_true(nodes && b);
    for (size_t k = 0; k < count; k++) {
        size_t i = reversed ? count - 1 - k : k;
        uint8_t node[64];
        char in[24], out[24];
        snprintf(in, sizeof in, "v%zu", i ? i - 1 : count - 1);
        snprintf(out, sizeof out, "v%zu", i);
        size_t m = i || cyclic ? string_field(node, 1, in) : 0; /* NodeProto.input */
        m += string_field(node + m, 2, out);                    /* output */
        if (names != UNNAMED) {                                 /* name */
            snprintf(out, sizeof out, "n%zu", names == NAMED || i < count - 1 ? i : 0);
            m += string_field(node + m, 3, out);
        }
        m += string_field(node + m, 4, "Relu"); /* op_type */
        n += varint(nodes + n, 1 << 3 | 2);                     /* GraphProto.node */
        n += varint(nodes + n, m);
        memcpy(nodes + n, node, m);
        n += m;
    }
    size_t h = 0;
    b[h++] = 0x08, b[h++] = 0x08, b[h++] = 0x3a; /* ir_version 8, graph: */
    h += varint(b + h, n);
    memcpy(b + h, nodes, n);
    free(nodes);
    *len = h + n;
    return b;
}

/* 200,000 nodes in one cycle, and the same chain acyclic in reverse file
 * order: found (or sorted) without recursing once per node, which under
 * ASan's larger frames would overflow the stack, and in linear time. */
static void test_long_chains(void **state)
{
    (void)state;
    char err[512];
    size_t len, count = 200000;
    uint8_t *b = relu_chain(count, 1, 0, UNNAMED, &len);
    clock_t t = clock();
    assert_int_equal(read_bytes(b, len, err, sizeof err), -1);
    if (!strstr(err, "the graph has a cycle of 200000 nodes: node 'Relu#0' (Relu) reads 'v199999'"))
        fail_msg("a long cycle: '%s'", err);
    double cyclic = (double)(clock() - t) / CLOCKS_PER_SEC;
    free(b);
    b = relu_chain(count, 0, 1, UNNAMED, &len);
    t = clock();
    assert_int_equal(read_bytes(b, len, err, sizeof err), 0);
    printf("%zu nodes: a cycle refused in %.3f s, the unsorted chain read in %.3f s\n", count,
           cyclic, (double)(clock() - t) / CLOCKS_PER_SEC);
    free(b);
}

/* 200,000 named nodes, each name and output put in a hash table once:
 * read; the last named as the first: refused, naming both. */
static void test_many_names(void **state)
{
    (void)state;
    char err[512];
    size_t len, count = 200000;
    uint8_t *b = relu_chain(count, 0, 0, NAMED, &len);
    clock_t t = clock();
    assert_int_equal(read_bytes(b, len, err, sizeof err), 0);
    double named = (double)(clock() - t) / CLOCKS_PER_SEC;
    free(b);
    b = relu_chain(count, 0, 0, LAST_NAMED_AS_FIRST, &len);
    t = clock();
    assert_int_equal(read_bytes(b, len, err, sizeof err), -1);
    if (!strstr(err, "two nodes of the main graph are named 'n0': the 1st (Relu) and the "
                     "200000th (Relu)"))
        fail_msg("a name given twice: '%s'", err);
    printf("%zu named nodes read in %.3f s, a name given twice refused in %.3f s\n", count, named,
           (double)(clock() - t) / CLOCKS_PER_SEC);
    free(b);
}

/* Files ONNX Runtime runs though ONNX's checker refuses them: read. */
static void test_unsorted_and_shadowed(void **state)
{
    (void)state;
    tj_model m = read_ok("unsorted.onnx");
    assert_int_equal(m.count, 4);
    for (int i = 0; i < m.count; i++)
        if (!m.layers[i].usable)
            fail_msg("unsorted.onnx: %s: %s", m.layers[i].name, m.layers[i].skip);
    tj_model_free(&m);
    /* the body's own x_in, not the one computed from the Loop's output */
    m = read_ok("shadowed.onnx");
    assert_int_equal(m.count, 1);
    assert_true(m.layers[0].usable);
    tj_model_free(&m);
    /* no name defined twice: an If's branch naming its output as the If
     * does, sibling branches, node names per graph, left-out outputs */
    m = read_ok("names_ok.onnx");
    assert_int_equal(m.count, 2);
    for (int i = 0; i < m.count; i++)
        if (!m.layers[i].usable)
            fail_msg("names_ok.onnx: %s: %s", m.layers[i].name, m.layers[i].skip);
    tj_model_free(&m);
}

/* The same layers as OpenVINO fragments: the OpenVINO reader's signature
 * must be the ONNX reader's, but for the index policy, which SPEC.md
 * section 9 sets for ONNX (negatives wrap, beyond is an error). */
static const struct {
    const char *onnx, *node, *fragment;
    int64_t axis;
} both[] = {
    {"gather_13.onnx", "gather_13",
     "<layer id=\"1\" type=\"Gather\" version=\"opset8\"><data batch_dims=\"0\"/><input>"
     "<port id=\"0\" precision=\"FP32\"><dim>5</dim><dim>6</dim><dim>7</dim></port>"
     "<port id=\"1\" precision=\"I64\"><dim>2</dim><dim>3</dim></port>"
     "<port id=\"2\" precision=\"I64\"/></input></layer>", 1},
    {"gathernd_b1.onnx", "gathernd_b1",
     "<layer id=\"1\" type=\"GatherND\" version=\"opset8\"><data batch_dims=\"1\"/><input>"
     "<port id=\"0\" precision=\"FP32\"><dim>2</dim><dim>3</dim><dim>4</dim><dim>5</dim></port>"
     "<port id=\"1\" precision=\"I64\"><dim>2</dim><dim>4</dim><dim>2</dim></port></input>"
     "</layer>", 0},
    {"gatherelements_13.onnx", "gatherelements_13",
     "<layer id=\"1\" type=\"GatherElements\" version=\"opset6\"><data axis=\"-1\"/><input>"
     "<port id=\"0\" precision=\"FP32\"><dim>4</dim><dim>5</dim></port>"
     "<port id=\"1\" precision=\"I64\"><dim>4</dim><dim>2</dim></port></input></layer>", 0},
    {"scatternd_mul.onnx", "scatternd_mul",
     "<layer id=\"1\" type=\"ScatterNDUpdate\" version=\"opset15\"><data reduction=\"prod\"/>"
     "<input><port id=\"0\" precision=\"FP32\"><dim>8</dim><dim>3</dim></port>"
     "<port id=\"1\" precision=\"I64\"><dim>4</dim><dim>1</dim></port>"
     "<port id=\"2\" precision=\"FP32\"><dim>4</dim><dim>3</dim></port></input></layer>", 0},
    {"scatterelements_add.onnx", "scatterelements_add",
     "<layer id=\"1\" type=\"ScatterElementsUpdate\" version=\"opset12\"><data reduction=\"sum\"/>"
     "<input><port id=\"0\" precision=\"I32\"><dim>3</dim><dim>4</dim></port>"
     "<port id=\"1\" precision=\"I64\"><dim>3</dim><dim>2</dim></port>"
     "<port id=\"2\" precision=\"I32\"><dim>3</dim><dim>2</dim></port>"
     "<port id=\"3\" precision=\"I64\"/></input></layer>", 1},
};

static void test_both_readers_agree(void **state)
{
    (void)state;
    char err[512];
    for (size_t i = 0; i < sizeof both / sizeof *both; i++) {
        tj_model om = read_ok(both[i].onnx), vm;
        tj_model_opts opts = defaults;
        opts.have_axis = 1;
        opts.axis = both[i].axis;
        if (tj_model_parse(both[i].fragment, strlen(both[i].fragment), "both.xml", NULL, &opts,
                           &vm, err, sizeof err) != 0)
            fail_msg("%s: the OpenVINO reader refused: %s", both[i].onnx, err);
        const tj_model_layer *o = layer_named(&om, both[i].node);
        assert_non_null(o);
        assert_int_equal(vm.count, 1);
        if (!vm.layers[0].usable)
            fail_msg("%s: OpenVINO: %s", both[i].onnx, vm.layers[0].skip);
        jit_sig a = o->sig, b = vm.layers[0].sig;
        assert_int_equal(a.index_policy, JIT_INDEX_NEGATIVE_WRAPS);
        a.index_policy = b.index_policy;
        /* an OpenVINO axis is a tensor (its type named), an ONNX one an attribute */
        a.axis_type = b.axis_type;
        a.axis_shape = b.axis_shape;
        if (memcmp(&a, &b, sizeof a) != 0)
            fail_msg("%s: the signatures differ (op %d/%d opset %d/%d axis %lld/%lld "
                     "batch_dims %d/%d reduction %d/%d)", both[i].onnx, a.op, b.op, a.opset,
                     b.opset, (long long)a.axis, (long long)b.axis, a.batch_dims, b.batch_dims,
                     a.reduction, b.reduction);
        assert_string_equal(o->type, vm.layers[0].type);
        tj_model_free(&om);
        tj_model_free(&vm);
    }
}

/* A model read from memory without a folder cannot reach external data. */
static void test_external_needs_a_folder(void **state)
{
    (void)state;
    size_t len;
    char err[512];
    uint8_t *b = slurp("external.onnx", &len);
    tj_model m;
    assert_int_equal(
        tj_onnx_parse(b, len, "external.onnx", NULL, &defaults, &m, err, sizeof err), 0);
    assert_int_equal(m.count, 1);
    assert_true(m.layers[0].refused);
    assert_non_null(strstr(m.layers[0].skip, "no folder"));
    tj_model_free(&m);
    free(b);
}

#ifdef TJ_CLI_PATH
/* The command's exit status on `model FILE ARGS`, its stdout in out. */
static int run_model(const char *file, const char *args, char *out, size_t len)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s model %s %s >%s/cli.out 2>&1", TJ_CLI_PATH, path_of(file),
             args, root);
    int rc = system(cmd);
    snprintf(cmd, sizeof cmd, "%s/cli.out", root);
    FILE *f = fopen(cmd, "r");
    assert_non_null(f);
    size_t n = fread(out, 1, len - 1, f);
    out[n] = '\0';
    fclose(f);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static int count_of(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, needle)) != NULL; p++)
        n++;
    return n;
}

/* `tensorjit model x.onnx --check`: lists, compiles and checks the nodes of
 * every body; exits 1 on a refused node, 2 on a file that is no model. */
static void test_cli(void **state)
{
    (void)state;
    static char out[1 << 16];
    assert_int_equal(run_model("subgraphs.onnx", "--check --jobs 2", out, sizeof out), 0);
    assert_non_null(strstr(out, "4 indexing layers"));
    assert_int_equal(count_of(out, "  ok ("), 4);
    assert_non_null(strstr(out, "outer_if/then_branch/inner_if/then_branch/then_gather"));
    tj_model m = read_ok("subgraphs.onnx"); /* ids: one node each, bodies included */
    for (int i = 0; i < m.count; i++)
        for (int j = 0; j < i; j++)
            if (strcmp(m.layers[i].id, m.layers[j].id) == 0)
                fail_msg("%s and %s share id %s", m.layers[j].name, m.layers[i].name,
                         m.layers[i].id);
    tj_model_free(&m);
    assert_int_equal(run_model("symbolic.onnx", "--check --jobs 2", out, sizeof out), 0);
    assert_int_equal(count_of(out, "dynamic: one kernel for every shape"), 3);
    assert_int_equal(run_model("wrong_output.onnx", "", out, sizeof out), 1);
    assert_non_null(strstr(out, "refused: the output shape"));
    size_t len;
    uint8_t *b = slurp("gather_13.onnx", &len);
    FILE *f = fopen(path_of("truncated.onnx"), "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, len / 2, f), len / 2);
    fclose(f);
    free(b);
    assert_int_equal(run_model("truncated.onnx", "", out, sizeof out), 2);
    assert_non_null(strstr(out, "not an ONNX model"));
    assert_int_equal(run_model("deep.onnx", "", out, sizeof out), 2);
    assert_int_equal(count_of(out, "\n"), 1);
    /* a cycle: the model is refused whole, in one line; unsorted, it is read */
    assert_int_equal(run_model("body_read_cycle.onnx", "", out, sizeof out), 2);
    assert_int_equal(count_of(out, "\n"), 1);
    assert_non_null(strstr(out, "node 'if' (If) reads 'z' in a body from node 'late'"));
    assert_int_equal(run_model("unsorted.onnx", "--check", out, sizeof out), 0);
    assert_non_null(strstr(out, "\n4 compiled (4 checked ok), 0 skipped, 0 refused\n"));
    /* a name defined twice, and two nodes of one name: refused whole too */
    assert_int_equal(run_model("body_redefines.onnx", "", out, sizeof out), 2);
    assert_int_equal(count_of(out, "\n"), 1);
    assert_non_null(strstr(out, "'h' is defined twice: node 'if/then_branch/T' (Gather)"));
    assert_int_equal(run_model("two_nodes_one_name.onnx", "--check", out, sizeof out), 2);
    assert_int_equal(count_of(out, "\n"), 1);
    assert_non_null(strstr(out, "two nodes of the main graph are named 'G'"));
    assert_int_equal(run_model("names_ok.onnx", "--check", out, sizeof out), 0);
    assert_non_null(strstr(out, "\n2 compiled (2 checked ok), 0 skipped, 0 refused\n"));
    /* names longer than 24 characters widen the name column: ids stay aligned */
    assert_int_equal(run_model("long_names.onnx", "--check", out, sizeof out), 0);
    const char *head = strstr(out, "\nlayer ");
    const char *row = strstr(out, "\n/pos/Gather ");
    assert_non_null(head);
    assert_non_null(row);
    size_t id_at = (size_t)(strstr(head, " id ") - head);
    assert_true(id_at == strlen("\n/embeddings/token_embedding/Gather"));
    assert_true(row[id_at] == ' ' && row[id_at + 1] >= '0' && row[id_at + 1] <= '9');
    assert_non_null(strstr(out, "\n2 compiled (2 checked ok), 0 skipped, 0 refused\n"));
    /* a symbolic tuple length: one dynamic kernel, checked on some lengths */
    assert_int_equal(run_model("gathernd_dynamic_k.onnx", "--check", out, sizeof out), 0);
    assert_non_null(strstr(out, "jit dynamic"));
    assert_non_null(strstr(out, "shape data [4,5], indices [2,2]: ok"));
    /* names print escaped, one line each */
    assert_int_equal(run_model("odd_names.onnx", "", out, sizeof out), 0);
    assert_non_null(strstr(out, "  two\\x0al\\xff\\xc0\\x80s\\x1b[31mred "));
    assert_null(strchr(out, '\x1b'));
    /* an ONNX file under another name is read as ONNX, not as XML */
    char cmd[512];
    snprintf(cmd, sizeof cmd, "cp %s %s/gather.model", path_of("gather_13.onnx"), dir);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(run_model("gather.model", "", out, sizeof out), 0);
    assert_non_null(strstr(out, "ONNX Gather, opset 13"));
    /* a fragment's flags on a model, whose nodes carry their types: refused,
     * not ignored while the run says ok */
    const char *flags[] = {"--dtype f16", "--index-type i32", "--axis 1", "--opset 13"};
    for (size_t i = 0; i < sizeof flags / sizeof *flags; i++) {
        assert_int_equal(run_model("gather_13.onnx", flags[i], out, sizeof out), 2);
        char want[64];
        snprintf(want, sizeof want, "%.*s was given, but no layer of ",
                 (int)strcspn(flags[i], " "), flags[i]);
        if (!strstr(out, want))
            fail_msg("%s on a model: \"%s\"", flags[i], out);
    }
}
#endif

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/tj_onnx_XXXXXX");
    if (!mkdtemp(root))
        return -1;
    snprintf(dir, sizeof dir, "%s/m", root);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "mkdir -p %s && /usr/bin/python3 %s %s", dir, TJ_ONNX_GEN, dir);
    return system(cmd) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    if (!tj_onnx_available()) {
        printf("skipped: this build has no ONNX reader (protoc-c, libprotobuf-c-dev, "
               "libonnx-dev)\n");
        return 77;
    }
    if (system("/usr/bin/python3 -c 'import onnx, numpy' 2>/dev/null") != 0) {
        printf("skipped: /usr/bin/python3 has no onnx package (Debian python3-onnx) to write "
               "the test models\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_output_shapes_are_onnx_inference),
        cmocka_unit_test(test_generator_stays_in_its_folder_and_reruns),
        cmocka_unit_test(test_invalid_models),
        cmocka_unit_test(test_truncated_and_flipped),
        cmocka_unit_test(test_hostile_bytes),
        cmocka_unit_test(test_long_chains),
        cmocka_unit_test(test_many_names),
        cmocka_unit_test(test_unsorted_and_shadowed),
        cmocka_unit_test(test_both_readers_agree),
        cmocka_unit_test(test_external_needs_a_folder),
#ifdef TJ_CLI_PATH
        cmocka_unit_test(test_cli),
#endif
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
