/* `tensorjit demo`: the README's first command. The specifications' own
 * example layers (GatherND-8 examples 1, 6 and 7, with batch_dims 0, 2 and
 * 3, ScatterUpdate-3 example 2, Gather-8 with batch_dims 1 and an index
 * beyond the axis, ScatterNDUpdate-3 with tuples of 3, ScatterElementsUpdate-12
 * with a mean, EmbeddingBagOffsets-15 example 3), read from built-in
 * IR fragments by the model reader; for each: the plan, a few lines of IR,
 * the output checked against the spec's, and the time per call of the JIT
 * kernel against the reference kernel. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "ov_ir.h"

typedef struct tj_demo {
    const char *title;
    const char *fragment;
    int64_t axis; /* ScatterUpdate */
    const float *data;
    const int64_t *indices;
    const float *updates;
    const float *expected;
    const int64_t *offsets; /* an embedding bag's (its kernel takes them, no updates) */
} tj_demo;

static const float ex1_data[] = {1, 2, 3, 4};
static const int64_t ex1_idx[] = {0, 0, 1, 0};
static const float ex1_out[] = {1, 3};
static const float ex6_data[] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12,
                                 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24};
static const int64_t ex6_idx[] = {1, 0, 2, 0, 2, 2};
static const float ex6_out[] = {2, 5, 11, 13, 19, 23};
static const float ex7_data[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
static const int64_t ex7_idx[] = {1, 0, 3, 2};
static const float ex7_out[] = {2, 5, 12, 15};
static const float su_data[] = {-1, 1, -1, 3, 4, -1, 6, -1, 8, 9, -1, 11, 1, 13, 14};
static const int64_t su_idx[] = {0, 2};
static const float su_upd[] = {1, 1, 1, 1, 1, 2};
static const float su_out[] = {1, 1, 1, 3, 4, 1, 6, 1, 8, 9, 1, 11, 2, 13, 14};
static const float g8_data[] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14,
                                15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28,
                                29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40};
static const int64_t g8_idx[] = {1, 2, 200, 4, 200, 2};
static const float g8_out[] = {5,  6,  7,  8,  9,  10, 11, 12, 0,  0,  0,  0,
                               37, 38, 39, 40, 0,  0,  0,  0,  29, 30, 31, 32};
static const float snd_data[] = {11, 12, 13, 14, 15, 16, 17, 18, 19, 21, 22, 23, 24, 25,
                                 26, 27, 28, 29, 31, 32, 33, 34, 35, 36, 37, 38, 39};
static const int64_t snd_idx[] = {0, 0, 0, 2, 2, 2, 1, 0, 0, 1, 2, 2};
static const float snd_upd[] = {91, 92, 81, 82};
static const float seu_data[] = {11, 12, 13, 14, 15, 16};
static const int64_t seu_idx[] = {0, 1, 0, 2};
static const float seu_upd[] = {23, 38, 32, 7};
static const float seu_out[] = {22, 25, 10, 14, 15, 16}; /* (11+23+32)/3, (12+38)/2, (13+7)/2 */
static const float snd_out[] = {91, 12, 13, 14, 15, 16, 17, 18, 19, 81, 22, 23, 24, 25,
                                26, 27, 28, 82, 31, 32, 33, 34, 35, 36, 37, 38, 92};
/* EmbeddingBagOffsets-15 example 3 (tests/cases/embedding_bag.json): the
 * means of rows {0, 2}, of no row (zeros) and of rows {3, 4}. The last
 * element is SPEC 10's f32 arithmetic, (-1 + 0.8f) / 2, which is an ulp
 * from the spec's printed -0.1. */
static const float ebo_table[] = {-0.2f, -0.6f, -0.1f, -0.4f, -1.9f,
                                  -1.8f, -1.0f, 1.5f,  0.8f,  -0.7f};
static const int64_t ebo_idx[] = {0, 2, 3, 4};
static const int64_t ebo_off[] = {0, 2, 2};
static const float ebo_out[] = {-1.05f, -1.2f, 0.0f, 0.0f, -0.099999994f, 0.4f};

#define PORT2(a, b) "<port><dim>" #a "</dim><dim>" #b "</dim></port>"
static const tj_demo tj_demos[] = {
    {"GatherND-8 example 1: elements, batch_dims 0",
     "<layer id=\"1\" type=\"GatherND\" version=\"opset8\"><data batch_dims=0 />"
     "<input>" PORT2(2, 2) PORT2(2, 2) "</input></layer>",
     0, ex1_data, ex1_idx, NULL, ex1_out, NULL},
    {"GatherND-8 example 6: slices with leading dims, batch_dims 2",
     "<layer id=\"1\" type=\"GatherND\" version=\"opset8\"><data batch_dims=2 /><input>"
     "<port><dim>2</dim><dim>3</dim><dim>4</dim></port>"
     "<port><dim>2</dim><dim>3</dim><dim>1</dim><dim>1</dim></port></input></layer>",
     0, ex6_data, ex6_idx, NULL, ex6_out, NULL},
    {"GatherND-8 example 7: batch_dims 3",
     "<layer id=\"1\" type=\"GatherND\" version=\"opset8\"><data batch_dims=3 /><input>"
     "<port><dim>1</dim><dim>2</dim><dim>2</dim><dim>4</dim></port>"
     "<port><dim>1</dim><dim>2</dim><dim>2</dim><dim>1</dim></port></input></layer>",
     0, ex7_data, ex7_idx, NULL, ex7_out, NULL},
    {"ScatterUpdate-3 example 2: axis 1",
     "<layer ... type=\"ScatterUpdate\"><input>" PORT2(3, 5)
     "<port><dim>2</dim></port>" PORT2(3, 2) "<port><dim>1</dim></port></input></layer>",
     1, su_data, su_idx, su_upd, su_out, NULL},
    {"Gather-8: batch_dims 1, axis 2, an index beyond the axis gives zeros",
     "<layer id=\"1\" type=\"Gather\" version=\"opset8\"><data batch_dims=1 /><input>"
     "<port><dim>2</dim><dim>1</dim><dim>5</dim><dim>4</dim></port>" PORT2(2, 3)
     "<port><dim>1</dim></port></input></layer>",
     2, g8_data, g8_idx, NULL, g8_out, NULL},
    {"ScatterNDUpdate-3: tuples of 3 indices, single elements",
     "<layer id=\"1\" type=\"ScatterNDUpdate\" version=\"opset4\"><input>"
     "<port><dim>3</dim><dim>3</dim><dim>3</dim></port>"
     "<port><dim>2</dim><dim>2</dim><dim>3</dim></port>" PORT2(2, 2) "</input></layer>",
     0, snd_data, snd_idx, snd_upd, snd_out, NULL},
    {"ScatterElementsUpdate-12: reduction mean, updates applied in order",
     "<layer id=\"1\" type=\"ScatterElementsUpdate\" version=\"opset12\">"
     "<data reduction=\"mean\" use_init_val=\"true\"/><input>"
     "<port><dim>1</dim><dim>2</dim><dim>3</dim></port>"
     "<port><dim>1</dim><dim>1</dim><dim>4</dim></port>"
     "<port><dim>1</dim><dim>1</dim><dim>4</dim></port><port><dim>1</dim></port></input></layer>",
     2, seu_data, seu_idx, seu_upd, seu_out, NULL},
    {"EmbeddingBagOffsets-15 example 3: reduction mean, an empty bag gives zeros",
     "<layer id=\"1\" type=\"EmbeddingBagOffsets\" version=\"opset15\">"
     "<data reduction=\"mean\"/><input>" PORT2(5, 2)
     "<port><dim>4</dim></port><port><dim>3</dim></port></input></layer>",
     0, ebo_table, ebo_idx, NULL, ebo_out, ebo_off},
};

static double tj_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Best of 5 rounds of 20000 calls, ns per call: the kernel called as a
 * program would, through its own pointer type. */
static double tj_time(jit_kernel fn, int has_updates, const tj_demo *d, float *out)
{
    double best = 1e30;
    for (int r = 0; r < 5; r++) {
        double t0 = tj_now_ns();
        if (d->offsets)
            for (int i = 0; i < 20000; i++)
                ((jit_embedding_bag_fn)fn)(d->data, d->indices, d->offsets, NULL, out);
        else if (has_updates)
            for (int i = 0; i < 20000; i++)
                ((jit_scatter_update_fn)fn)(d->data, d->indices, d->updates, out);
        else
            for (int i = 0; i < 20000; i++)
                ((jit_gather_nd_fn)fn)(d->data, d->indices, out);
        double t = (tj_now_ns() - t0) / 20000;
        best = t < best ? t : best;
    }
    return best;
}

/* A few lines of the optimized IR, from the work on (past the checks):
 * at label, the copy's "\ncheck.ok:" or a bag's "\nlookup.loop:". */
static void tj_print_ir_head(char *ir, const char *label, int lines)
{
    if (!ir) {
        printf("  (no IR: %s)\n", jit_last_error());
        return;
    }
    char *p = strstr(ir, label);
    p = p ? p + 1 : strstr(ir, "define ");
    for (int n = 0; p && *p && n < lines; n++) {
        char *nl = strchr(p, '\n');
        printf("  | %.*s\n", nl ? (int)(nl - p) : (int)strlen(p), p);
        p = nl ? nl + 1 : NULL;
    }
    printf("  | ...\n");
    jit_free(ir);
}

static int tj_demo_call(jit_kernel fn, const tj_demo *d, float *out)
{
    if (d->offsets)
        return jit_call_bag(fn, d->data, d->indices, d->offsets, NULL, out);
    return jit_call(fn, d->data, d->indices, d->updates, out);
}

static int tj_demo_one(const tj_demo *d, const tj_model_layer *l)
{
    float out[64];
    double tj, tr;
    int status;
    jit_kernel_info info;
    jit_shape shape;
    jit_op_info op;
    jit_sig ref = l->sig;
    ref.engine = JIT_ENGINE_REFERENCE;
    jit_kernel fn = jit_compile(&l->sig), fr = jit_compile(&ref);
    if (!fn || !fr || jit_info(fn, &info) || jit_output_shape(&l->sig, &shape) ||
        jit_op_describe(l->sig.op, &op))
        return tj_cli_fail("demo: %s", jit_last_error());
    char *ex = jit_explain(&l->sig);
    printf("%s", ex ? ex : "");
    jit_free(ex);
    tj_print_ir_head(jit_dump(&l->sig, JIT_DUMP_IR_OPT),
                     d->offsets ? "\nlookup.loop:" : "\ncheck.ok:", 8);
    status = tj_demo_call(fn, d, out);
    tj = tj_time(fn, op.has_updates, d, out);
    tr = tj_time(fr, op.has_updates, d, out);
    tj_demo_call(fn, d, out);
    if (status != JIT_OK)
        return tj_cli_fail("demo: %s", jit_last_error());
    printf("output:\n");
    tj_cli_print_tensor(stdout, JIT_F32, &shape, out);
    int64_t n = 1;
    for (int i = 0; i < shape.rank; i++)
        n *= shape.dims[i];
    int ok = memcmp(out, d->expected, (size_t)n * sizeof(float)) == 0;
    tj_cli_print_engine(stdout, &info);
    printf("time per call: jit %.1f ns, reference %.1f ns (%.1fx)\n", tj, tr, tr / tj);
    printf("%s\n\n", ok ? "matches the specification's output" : "DOES NOT match the specification");
    return ok ? TJ_EXIT_OK : TJ_EXIT_FAILURE;
}

const char *tj_demo_layers(void)
{
    static char text[256];
    size_t n = 0;
    const char *prev = "";
    text[0] = '\0';
    for (size_t i = 0; i < sizeof tj_demos / sizeof *tj_demos && n < sizeof text; i++) {
        /* "GatherND-8 example 1: ...": GatherND-8, once for its run of examples */
        const char *title = tj_demos[i].title;
        size_t len = strcspn(title, " :");
        if (strncmp(prev, title, len) == 0 && strcspn(prev, " :") == len)
            continue;
        n += (size_t)snprintf(text + n, sizeof text - n, "%s%.*s", n ? ", " : "", (int)len,
                              title);
        prev = title;
    }
    return text;
}

int tj_cmd_demo(int argc, char **argv)
{
    if (argc == 2 && tj_cli_is_help(argv[1])) {
        tj_cli_usage("demo", stdout);
        return TJ_EXIT_OK;
    }
    if (argc > 1)
        return tj_cli_unknown("demo takes no arguments:", argv[1], tj_cli_words("demo"));
    int rc = TJ_EXIT_OK;
    for (size_t i = 0; i < sizeof tj_demos / sizeof *tj_demos && rc == TJ_EXIT_OK; i++) {
        const tj_demo *d = &tj_demos[i];
        tj_model_opts opts = {.dtype = JIT_F32, .index_type = JIT_I64, .have_axis = 1,
                              .axis = d->axis};
        tj_model m;
        char err[256];
        printf("== %s\n", d->title);
        printf("IR fragment: %s\n", d->fragment);
        if (tj_model_parse(d->fragment, strlen(d->fragment), "demo", NULL, &opts, &m, err,
                           sizeof err) != 0 || m.count != 1 || !m.layers[0].usable) {
            rc = tj_cli_fail("demo: %s", m.count ? m.layers[0].skip : err);
            tj_model_free(&m);
            break;
        }
        rc = tj_demo_one(d, &m.layers[0]);
        tj_model_free(&m);
    }
    jit_shutdown();
    return rc;
}
