/* The OpenVINO IR reader on files this test writes: a whole model with its
 * .bin, spec-style fragments, dynamic dims, axes that are no constant,
 * truncated .bin files and garbage. */
#define _DEFAULT_SOURCE /* mkfifo */
#include <setjmp.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ov_ir.h"

static char dir[64];

static const char *path_of(const char *name)
{
    static char buf[2][256];
    static int n;
    char *p = buf[n++ % 2];
    snprintf(p, 256, "%s/%s", dir, name);
    return p;
}

static void write_file(const char *name, const void *bytes, size_t len)
{
    FILE *f = fopen(path_of(name), "wb");
    fwrite(bytes, 1, len, f);
    fclose(f);
}

static const tj_model_opts defaults = {.dtype = JIT_F32, .index_type = JIT_I64};

/* Parameter data f16 [4,3,5] -> GatherND-8 (batch_dims 1) <- Parameter i32
 * [4,2,1]; Const indices + Const axis (-1, i64, at offset 16 of the .bin)
 * -> ScatterUpdate on an FP32 [2,6] Parameter. */
static const char model_xml[] =
    "<?xml version=\"1.0\"?>\n"
    "<net name=\"m\" version=\"11\">\n"
    " <layers>\n"
    "  <layer id=\"0\" name=\"data\" type=\"Parameter\" version=\"opset1\">\n"
    "   <data shape=\"4,3,5\" element_type=\"f16\"/>\n"
    "   <output><port id=\"0\"><dim>4</dim><dim>3</dim><dim>5</dim></port></output>\n"
    "  </layer>\n"
    "  <layer id=\"1\" name=\"idx\" type=\"Parameter\" version=\"opset1\">\n"
    "   <data shape=\"4,2,1\" element_type=\"i32\"/>\n"
    "   <output><port id=\"0\" precision=\"I32\"><dim>4</dim><dim>2</dim><dim>1</dim></port></output>\n"
    "  </layer>\n"
    "  <layer id=\"2\" name=\"gather\" type=\"GatherND\" version=\"opset8\">\n"
    "   <data batch_dims=\"1\"/>\n"
    "   <input><port id=\"0\"><dim>4</dim><dim>3</dim><dim>5</dim></port>\n"
    "          <port id=\"1\"><dim>4</dim><dim>2</dim><dim>1</dim></port></input>\n"
    "   <output><port id=\"2\" precision=\"FP16\"><dim>4</dim><dim>2</dim><dim>5</dim></port></output>\n"
    "  </layer>\n"
    "  <layer id=\"3\" name=\"table\" type=\"Parameter\" version=\"opset1\">\n"
    "   <data shape=\"2,6\" element_type=\"f32\"/>\n"
    "   <output><port id=\"0\" precision=\"FP32\"><dim>2</dim><dim>6</dim></port></output>\n"
    "  </layer>\n"
    "  <layer id=\"4\" name=\"rows\" type=\"Const\" version=\"opset1\">\n"
    "   <data element_type=\"i64\" shape=\"2\" offset=\"0\" size=\"16\"/>\n"
    "   <output><port id=\"0\" precision=\"I64\"><dim>2</dim></port></output>\n"
    "  </layer>\n"
    "  <layer id=\"5\" name=\"upd\" type=\"Parameter\" version=\"opset1\">\n"
    "   <data shape=\"2,2\" element_type=\"f32\"/>\n"
    "   <output><port id=\"0\" precision=\"FP32\"><dim>2</dim><dim>2</dim></port></output>\n"
    "  </layer>\n"
    "  <layer id=\"6\" name=\"axis\" type=\"Const\" version=\"opset1\">\n"
    "   <data element_type=\"i64\" shape=\"\" offset=\"16\" size=\"8\"/>\n"
    "   <output><port id=\"0\" precision=\"I64\"/></output>\n"
    "  </layer>\n"
    "  <layer id=\"7\" name=\"scatter\" type=\"ScatterUpdate\" version=\"opset3\">\n"
    "   <input><port id=\"0\" precision=\"FP32\"><dim>2</dim><dim>6</dim></port>\n"
    "          <port id=\"1\" precision=\"I64\"><dim>2</dim></port>\n"
    "          <port id=\"2\" precision=\"FP32\"><dim>2</dim><dim>2</dim></port>\n"
    "          <port id=\"3\" precision=\"I64\"/></input>\n"
    "   <output><port id=\"4\" precision=\"FP32\"><dim>2</dim><dim>6</dim></port></output>\n"
    "  </layer>\n"
    " </layers>\n"
    " <edges>\n"
    "  <edge from-layer=\"0\" from-port=\"0\" to-layer=\"2\" to-port=\"0\"/>\n"
    "  <edge from-layer=\"1\" from-port=\"0\" to-layer=\"2\" to-port=\"1\"/>\n"
    "  <edge from-layer=\"3\" from-port=\"0\" to-layer=\"7\" to-port=\"0\"/>\n"
    "  <edge from-layer=\"4\" from-port=\"0\" to-layer=\"7\" to-port=\"1\"/>\n"
    "  <edge from-layer=\"5\" from-port=\"0\" to-layer=\"7\" to-port=\"2\"/>\n"
    "  <edge from-layer=\"6\" from-port=\"0\" to-layer=\"7\" to-port=\"3\"/>\n"
    " </edges>\n"
    "</net>\n";

static void write_model(const char *name, const char *xml, size_t bin_bytes)
{
    char x[64], b[64];
    snprintf(x, sizeof x, "%s.xml", name);
    snprintf(b, sizeof b, "%s.bin", name);
    write_file(x, xml, strlen(xml));
    int64_t bin[3] = {1, 4, -1};
    write_file(b, bin, bin_bytes);
}

static tj_model read_ok(const char *name)
{
    tj_model m;
    char err[256], x[64];
    snprintf(x, sizeof x, "%s.xml", name);
    if (tj_model_read(path_of(x), &defaults, &m, err, sizeof err) != 0)
        fail_msg("refused: %s", err);
    return m;
}

static void test_whole_model(void **state)
{
    (void)state;
    write_model("ok", model_xml, 24);
    tj_model m = read_ok("ok");
    assert_int_equal(m.count, 2);
    assert_false(m.fragment);
    const tj_model_layer *g = &m.layers[0], *s = &m.layers[1];
    assert_string_equal(g->name, "gather");
    assert_string_equal(g->id, "2");
    assert_true(g->usable);
    assert_int_equal(g->sig.op, JIT_OP_GATHER_ND);
    assert_int_equal(g->sig.opset, 8);
    assert_int_equal(g->sig.batch_dims, 1);
    assert_int_equal(g->sig.dtype, JIT_F16);      /* from the Parameter's element_type */
    assert_int_equal(g->sig.index_type, JIT_I32); /* from the Parameter's port precision */
    assert_int_equal(g->sig.data_shape.rank, 3);
    assert_int_equal(g->sig.indices_shape.dims[1], 2);
    assert_string_equal(g->note, "");
    assert_true(s->usable);
    assert_int_equal(s->sig.axis, -1); /* read from the .bin at offset 16 */
    assert_int_equal(s->sig.axis_type, JIT_I64);
    assert_int_equal(s->sig.axis_shape.rank, 0);
    assert_int_equal(s->sig.dtype, JIT_F32);
    assert_int_equal(s->sig.index_type, JIT_I64);
    assert_int_equal(s->sig.updates_shape.dims[1], 2);
    jit_kernel fn = jit_compile(&s->sig);
    assert_non_null(fn);
    jit_kernel gn = jit_compile(&g->sig);
    assert_non_null(gn);
    tj_model_free(&m);
    jit_shutdown();
}

static void test_axis_not_known(void **state)
{
    (void)state;
    /* the axis fed by a Parameter */
    char *xml = strdup(model_xml);
    char *axis = strstr(xml, "name=\"axis\" type=\"Const\"");
    memcpy(axis, "name=\"axis\" type=\"Param\"", 24);
    write_model("param_axis", xml, 24);
    tj_model m = read_ok("param_axis");
    assert_false(m.layers[1].usable);
    assert_string_equal(m.layers[1].skip, "axis comes from layer 'axis' of type Param, not a "
                                          "Const: it is not known before run time");
    assert_true(m.layers[0].usable);
    tj_model_free(&m);
    /* no edge into port 3 */
    strcpy(xml, model_xml);
    char *edge = strstr(xml, "to-layer=\"7\" to-port=\"3\"");
    edge[10] = '9';
    write_model("no_edge", xml, 24);
    m = read_ok("no_edge");
    assert_string_equal(m.layers[1].skip, "no edge feeds input port 3 (axis)");
    tj_model_free(&m);
    free(xml);
}

/* model_xml with its first `old` replaced by `new`. */
static const char *model_with(const char *old, const char *new)
{
    static char xml[sizeof model_xml + 512];
    const char *at = strstr(model_xml, old);
    assert_non_null(at);
    snprintf(xml, sizeof xml, "%.*s%s%s", (int)(at - model_xml), model_xml, new, at + strlen(old));
    return xml;
}

/* The GatherND layer (layers[0]) of model_xml with batch_dims="text". */
static tj_model with_batch_dims(const char *text)
{
    char data[128];
    snprintf(data, sizeof data, "<data batch_dims=\"%s\"/>", text);
    write_model("batch_dims", model_with("<data batch_dims=\"1\"/>", data), 24);
    return read_ok("batch_dims");
}

static void expect_layer_refused(const tj_model_layer *l, const char *why)
{
    if (l->usable || !l->refused || strcmp(l->skip, why) != 0)
        fail_msg("%s: usable %d, refused %d, '%s'; expected refused: '%s'", l->name, l->usable,
                 l->refused, l->skip, why);
}

/* model_xml with the axis Const's <data> replaced by `data`. */
static char *with_axis_data(const char *data)
{
    static char xml[sizeof model_xml + 256];
    const char *old = "<data element_type=\"i64\" shape=\"\" offset=\"16\" size=\"8\"/>";
    const char *at = strstr(model_xml, old);
    assert_non_null(at);
    snprintf(xml, sizeof xml, "%.*s%s%s", (int)(at - model_xml), model_xml, data, at + strlen(old));
    return xml;
}

/* The axis Const in every integer type: read as that type from the .bin,
 * whose bytes at offset 16 are those of int64 -1 (all ones); a Const of
 * the wrong size or without its attributes is skipped with the reason. */
static void test_axis_of_every_integer_type(void **state)
{
    (void)state;
    static const struct {
        const char *type;
        int bytes;
        jit_dtype t;
        int64_t axis;
    } types[] = {
        {"i8", 1, JIT_I8, -1},       {"u8", 1, JIT_U8, 255},
        {"i16", 2, JIT_I16, -1},     {"u16", 2, JIT_U16, 65535},
        {"i32", 4, JIT_I32, -1},     {"u32", 4, JIT_U32, 4294967295LL},
        {"u64", 8, JIT_U64, -1}, /* 1 - 2^64: the bytes 2^64 - 1 below */
    };
    char data[128];
    for (size_t i = 0; i < sizeof types / sizeof *types - 1; i++) {
        snprintf(data, sizeof data, "<data element_type=\"%s\" shape=\"\" offset=\"16\" size=\"%d\"/>",
                 types[i].type, types[i].bytes);
        write_model("typed_axis", with_axis_data(data), 24);
        tj_model m = read_ok("typed_axis");
        const tj_model_layer *sc = &m.layers[1];
        if (sc->sig.axis != types[i].axis || sc->sig.axis_type != types[i].t)
            fail_msg("%s axis: %lld (type %s), expected %lld", types[i].type,
                     (long long)sc->sig.axis, jit_dtype_name(sc->sig.axis_type),
                     (long long)types[i].axis);
        tj_model_free(&m);
    }
    /* a u64 beyond int64 is refused with its own value (once read as the
     * largest int64, which the messages then showed) */
    write_model("u64_axis", with_axis_data("<data element_type=\"u64\" shape=\"\" offset=\"16\" "
                                           "size=\"8\"/>"), 24);
    tj_model um = read_ok("u64_axis");
    expect_layer_refused(&um.layers[1], "axis Const holds 18446744073709551615 (u64), more than an int64 holds");
    tj_model_free(&um);
    /* an axis Const of no integer type: its bytes are no axis (an f32's
     * four were once read into an int64 whose other four were never set) */
    static const char *const not_integers[][2] = {
        {"f32", "4"}, {"f16", "2"}, {"bf16", "2"}, {"f64", "8"}, {"boolean", "1"}};
    for (size_t i = 0; i < sizeof not_integers / sizeof *not_integers; i++) {
        char want[96];
        snprintf(data, sizeof data, "<data element_type=\"%s\" shape=\"\" offset=\"16\" size=\"%s\"/>",
                 not_integers[i][0], not_integers[i][1]);
        write_model("float_axis", with_axis_data(data), 24);
        tj_model fm = read_ok("float_axis");
        snprintf(want, sizeof want, "axis Const is %s, not an integer type", not_integers[i][0]);
        expect_layer_refused(&fm.layers[1], want);
        tj_model_free(&fm);
    }
    /* a size other than one integer's, or a type of no whole bytes, is a
     * Const at odds with itself or with the op's scalar input: refused */
    static const char *const odd[][3] = {
        {"i16", "3", "axis Const holds 3 bytes of i16; one integer (2 bytes) was expected"},
        {"i64", "16", "axis Const holds 16 bytes of i64; one integer (8 bytes) was expected"},
        {"u4", "1", "axis Const is u4, not a type of whole bytes"},
        {"q7", "1", "axis Const is q7, not an element type"}};
    for (size_t i = 0; i < sizeof odd / sizeof *odd; i++) {
        snprintf(data, sizeof data, "<data element_type=\"%s\" shape=\"\" offset=\"16\" size=\"%s\"/>",
                 odd[i][0], odd[i][1]);
        write_model("odd_axis", with_axis_data(data), 24);
        tj_model om = read_ok("odd_axis");
        expect_layer_refused(&om.layers[1], odd[i][2]);
        tj_model_free(&om);
    }
    tj_model m;
    write_model("bare_axis", with_axis_data("<data element_type=\"i64\" shape=\"\"/>"), 24);
    m = read_ok("bare_axis");
    assert_false(m.layers[1].usable);
    assert_string_equal(m.layers[1].skip, "axis Const lacks element_type, offset or size");
    tj_model_free(&m);
    /* the ScatterUpdate layer without its port 3 */
    static char xml[sizeof model_xml];
    snprintf(xml, sizeof xml, "%s", model_xml);
    char *port3 = strstr(xml, "<port id=\"3\" precision=\"I64\"/>");
    assert_non_null(port3);
    memset(port3, ' ', strlen("<port id=\"3\" precision=\"I64\"/>"));
    write_model("no_port3", xml, 24);
    m = read_ok("no_port3");
    assert_false(m.layers[1].usable);
    assert_string_equal(m.layers[1].skip, "input port 3 (axis) is missing");
    tj_model_free(&m);
}

/* An integer attribute is checked against the range its field can hold
 * before it is narrowed into the signature: batch_dims 4294967297 once
 * became the int 1, a valid GatherND-8 that compiled and passed --check. */
static void test_integer_attribute_out_of_range(void **state)
{
    (void)state;
    static const char *const wrapping[] = {"4294967297", "-4294967295", "2147483648",
                                           "99999999999999999999", "33", "-33"};
    for (size_t i = 0; i < sizeof wrapping / sizeof *wrapping; i++) {
        tj_model m = with_batch_dims(wrapping[i]);
        char want[128];
        snprintf(want, sizeof want, "batch_dims '%s' is not in [-%d, %d]", wrapping[i],
                 JIT_MAX_RANK, JIT_MAX_RANK);
        expect_layer_refused(&m.layers[0], want);
        assert_true(m.layers[1].usable); /* the other layer is read as before */
        tj_model_free(&m);
    }
    /* the ends of the range are read; the library judges them by the ranks */
    tj_model m = with_batch_dims("-32");
    assert_true(m.layers[0].usable);
    assert_int_equal(m.layers[0].sig.batch_dims, -JIT_MAX_RANK);
    tj_model_free(&m);
    m = with_batch_dims("x1");
    expect_layer_refused(&m.layers[0], "batch_dims 'x1' is not an integer");
    tj_model_free(&m);
    /* GatherElements' axis attribute, the same way */
    char frag[512], err[256], want[128];
    snprintf(frag, sizeof frag, "<layer type=\"GatherElements\" version=\"opset6\">"
             "<data axis=\"4294967297\"/><input><port><dim>2</dim></port><port><dim>2</dim>"
             "</port></input></layer>");
    assert_int_equal(tj_model_parse(frag, strlen(frag), "ge", NULL, &defaults, &m, err,
                                    sizeof err), 0);
    snprintf(want, sizeof want, "axis '4294967297' is not in [-%d, %d]", JIT_MAX_RANK,
             JIT_MAX_RANK - 1);
    expect_layer_refused(&m.layers[0], want);
    tj_model_free(&m);
}

/* version="opsetN" with an N no int holds: once read (by sscanf's %d) as
 * whatever N wrapped to, opset4294967304 as opset8. */
static void test_opset_number_out_of_range(void **state)
{
    (void)state;
    write_model("opset", model_with("version=\"opset8\"", "version=\"opset4294967304\""), 24);
    tj_model m = read_ok("opset");
    expect_layer_refused(&m.layers[0], "version 'opset4294967304': the opset number is not "
                                       "in [1, 2147483647]");
    tj_model_free(&m);
    write_model("opset", model_with("version=\"opset8\"", "version=\"opset9\""), 24);
    m = read_ok("opset"); /* a later opset than the op's last version: that version */
    assert_true(m.layers[0].usable);
    assert_int_equal(m.layers[0].sig.opset, 8);
    tj_model_free(&m);
}

/* The ScatterUpdate layer (layers[1]) of model_xml with its axis Const at
 * offset="off" size="size". */
static tj_model with_axis_at(const char *off, const char *size)
{
    char data[160];
    snprintf(data, sizeof data, "<data element_type=\"i64\" shape=\"\" offset=\"%s\" "
             "size=\"%s\"/>", off, size);
    write_model("axis_at", with_axis_data(data), 24);
    return read_ok("axis_at");
}

/* A Const's offset + size is checked without overflow and the message
 * names the real range: an offset near INT64_MAX once wrapped the end to a
 * negative number, in the check and in the message. */
static void test_const_range_overflow(void **state)
{
    (void)state;
    static const struct {
        const char *offset, *end;
    } far[] = {{"9223372036854775807", "9223372036854775815"},
               {"9223372036854775800", "9223372036854775808"},
               {"17", "25"}};
    for (size_t i = 0; i < sizeof far / sizeof *far; i++) {
        tj_model m = with_axis_at(far[i].offset, "8");
        char want[160];
        snprintf(want, sizeof want, "axis Const: the constant's bytes [%s, %s) are not in ",
                 far[i].offset, far[i].end);
        if (m.layers[1].usable || strncmp(m.layers[1].skip, want, strlen(want)) != 0 ||
            !strstr(m.layers[1].skip, "(24 bytes)"))
            fail_msg("offset %s: '%s'; expected '%s...(24 bytes)'", far[i].offset,
                     m.layers[1].skip, want);
        assert_false(m.layers[1].refused); /* a .bin that does not match: skipped, as before */
        tj_model_free(&m);
    }
    /* offset and size are read whole: atoll took "16abc" as 16 and read
     * the axis, and wrapped what no int64 holds */
    static const struct {
        const char *offset, *size, *why;
    } bad[] = {
        {"16abc", "8", "axis Const: offset '16abc' is not an integer"},
        {"", "8", "axis Const: offset '' is not an integer"},
        {"-8", "8", "axis Const: offset '-8' is not in [0, 9223372036854775807]"},
        {"99999999999999999999", "8",
         "axis Const: offset '99999999999999999999' is not in [0, 9223372036854775807]"},
        {"16", "8 bytes", "axis Const: size '8 bytes' is not an integer"},
        {"16", "-8", "axis Const: size '-8' is not in [0, 9223372036854775807]"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        tj_model m = with_axis_at(bad[i].offset, bad[i].size);
        expect_layer_refused(&m.layers[1], bad[i].why);
        tj_model_free(&m);
    }
    tj_model m = with_axis_at(" 16", "8"); /* strtoll's leading space: still 16 */
    assert_true(m.layers[1].usable);
    assert_int_equal(m.layers[1].sig.axis, -1);
    tj_model_free(&m);
}

/* A Gather-1 of data [2,64,8] by indices [10] along the axis a Const
 * reads from the .bin (offset 0); its output port declares `out`. */
static tj_model gather_declaring(const char *out, int64_t axis)
{
    char xml[2048];
    snprintf(xml, sizeof xml,
             "<?xml version=\"1.0\"?>\n<net name=\"det\" version=\"10\"><layers>\n"
             "<layer id=\"0\" name=\"feat\" type=\"Parameter\" version=\"opset1\">"
             "<data shape=\"2,64,8\" element_type=\"f32\"/><output><port id=\"0\" "
             "precision=\"FP32\"><dim>2</dim><dim>64</dim><dim>8</dim></port></output></layer>\n"
             "<layer id=\"1\" name=\"idx\" type=\"Parameter\" version=\"opset1\">"
             "<data shape=\"10\" element_type=\"i64\"/><output><port id=\"0\" precision=\"I64\">"
             "<dim>10</dim></port></output></layer>\n"
             "<layer id=\"2\" name=\"axis\" type=\"Const\" version=\"opset1\">"
             "<data element_type=\"i64\" shape=\"\" offset=\"0\" size=\"8\"/><output>"
             "<port id=\"0\" precision=\"I64\"/></output></layer>\n"
             "<layer id=\"3\" name=\"pick\" type=\"Gather\" version=\"opset1\"><input>"
             "<port id=\"0\"><dim>2</dim><dim>64</dim><dim>8</dim></port>"
             "<port id=\"1\"><dim>10</dim></port><port id=\"2\"/></input>"
             "<output><port id=\"3\" precision=\"FP32\">%s</port></output></layer>\n"
             "</layers><edges>"
             "<edge from-layer=\"0\" from-port=\"0\" to-layer=\"3\" to-port=\"0\"/>"
             "<edge from-layer=\"1\" from-port=\"0\" to-layer=\"3\" to-port=\"1\"/>"
             "<edge from-layer=\"2\" from-port=\"0\" to-layer=\"3\" to-port=\"2\"/>"
             "</edges></net>\n",
             out);
    write_file("det.xml", xml, strlen(xml));
    write_file("det.bin", &axis, sizeof axis);
    return read_ok("det");
}

/* A layer whose output shape (jit_output_shape of its signature) is not
 * the one its own output port declares is refused with both: a .bin whose
 * axis Const read 0 where the model meant 1 once compiled 84 Gather-1
 * layers of real models to the wrong shape, and --check passed, the JIT
 * and the reference sharing the wrong signature. */
static void test_output_port_contradiction(void **state)
{
    (void)state;
    const char *declared = "<dim>2</dim><dim>10</dim><dim>8</dim>";
    tj_model m = gather_declaring(declared, 1);
    assert_true(m.layers[0].usable); /* the axis the model means */
    assert_int_equal(m.layers[0].sig.axis, 1);
    tj_model_free(&m);
    m = gather_declaring(declared, 0);
    expect_layer_refused(&m.layers[0], "the output shape of its inputs and attributes [10,64,8] "
                                       "contradicts the IR's output port [2,10,8]");
    assert_int_equal(m.layers[0].sig.axis, 0); /* as read: the message is about this one */
    tj_model_free(&m);
    /* a rank the inputs cannot give */
    m = gather_declaring("<dim>2</dim><dim>10</dim>", 1);
    expect_layer_refused(&m.layers[0], "the output shape of its inputs and attributes [2,10,8] "
                                       "contradicts the IR's output port [2,10]");
    tj_model_free(&m);
    /* a dynamic declared dim (-1, ?, an interval) matches any; the static
     * ones are still compared */
    static const struct {
        const char *dims;
        int usable;
    } dynamic[] = {
        {"<dim>-1</dim><dim>10</dim><dim>8</dim>", 1},
        {"<dim>?</dim><dim>?</dim><dim>?</dim>", 1},
        {"<dim>1..4</dim><dim>10</dim><dim>..8</dim>", 1},
        {"<dim>-1</dim><dim>64</dim><dim>8</dim>", 0},
        {"<dim>?</dim><dim>10</dim><dim>9</dim>", 0},
    };
    for (size_t i = 0; i < sizeof dynamic / sizeof *dynamic; i++) {
        m = gather_declaring(dynamic[i].dims, 1);
        if (m.layers[0].usable != dynamic[i].usable || m.layers[0].refused == dynamic[i].usable)
            fail_msg("output port %s: usable %d, '%s'", dynamic[i].dims, m.layers[0].usable,
                     m.layers[0].skip);
        tj_model_free(&m);
    }
    m = gather_declaring("<dim>-1</dim><dim>64</dim><dim>8</dim>", 1);
    assert_string_equal(m.layers[0].skip, "the output shape of its inputs and attributes "
                                          "[2,10,8] contradicts the IR's output port [?,64,8]");
    tj_model_free(&m);
}

/* The same for the element type: every op here outputs its data's type,
 * so an output port of another precision is a signature the model does
 * not mean (data f16 read, FP32 declared). A type the IR does not state
 * (a fragment's --dtype default) is not compared. */
static void test_output_port_type_contradiction(void **state)
{
    (void)state;
    const char *fp16 = "<port id=\"2\" precision=\"FP16\"><dim>4</dim><dim>2</dim><dim>5</dim></port>";
    write_model("out_type", model_with(fp16, "<port id=\"2\" precision=\"FP32\"><dim>4</dim>"
                                             "<dim>2</dim><dim>5</dim></port>"), 24);
    tj_model m = read_ok("out_type");
    expect_layer_refused(&m.layers[0], "the output's element type f16 (its data's) contradicts "
                                       "the IR's output port FP32");
    assert_true(m.layers[1].usable);
    tj_model_free(&m);
    const char frag[] = "<layer type=\"GatherND\" version=\"opset8\"><input>"
                        "<port><dim>4</dim><dim>3</dim></port><port><dim>2</dim><dim>1</dim>"
                        "</port></input><output><port precision=\"FP16\"><dim>2</dim><dim>3</dim>"
                        "</port></output></layer>";
    char err[256];
    assert_int_equal(tj_model_parse(frag, strlen(frag), "f", NULL, &defaults, &m, err, sizeof err),
                     0);
    if (!m.layers[0].usable)
        fail_msg("a default type refused: %s", m.layers[0].skip);
    tj_model_free(&m);
}

/* A dynamic dim of the derived shape is compared with nothing: the IR may
 * know more (PointPillars' GatherND declares [?,64] of data [?,64]). */
static void test_output_port_dynamic_inputs(void **state)
{
    (void)state;
    const char frag[] = "<layer type=\"GatherND\" version=\"opset8\"><input>"
                        "<port><dim>-1</dim><dim>64</dim></port><port><dim>-1</dim><dim>1</dim>"
                        "</port></input><output><port><dim>5</dim><dim>64</dim></port></output>"
                        "</layer>";
    tj_model m;
    char err[256];
    assert_int_equal(tj_model_parse(frag, strlen(frag), "f", NULL, &defaults, &m, err, sizeof err),
                     0);
    if (!m.layers[0].usable)
        fail_msg("refused: %s", m.layers[0].skip);
    tj_model_free(&m);
}

/* An EfficientDet-like preprocessing Loop (opset5, as OpenVINO writes it:
 * port_map, back_edges, a <body> with its own <layers> and <edges>) whose
 * body gathers and scatters boxes and holds a TensorIterator with a
 * GatherND in its own body; an If whose then and else bodies each hold a
 * layer named "flip"; and a Gather outside. Ids restart in every body:
 * body layer 2 is the body's axis Const (0, at offset 8), the outer layer
 * 2 another Const (1, at offset 0). */
static const char loop_xml[] =
    "<?xml version=\"1.0\"?>\n"
    "<net name=\"effdet\" version=\"11\">\n"
    " <layers>\n"
    "  <layer id=\"0\" name=\"boxes\" type=\"Parameter\" version=\"opset1\">\n"
    "   <data shape=\"5,4\" element_type=\"f32\"/>\n"
    "   <output><port id=\"0\" precision=\"FP32\"><dim>5</dim><dim>4</dim></port></output>\n"
    "  </layer>\n"
    "  <layer id=\"1\" name=\"exec_cond\" type=\"Const\" version=\"opset1\">\n"
    "   <data element_type=\"boolean\" shape=\"\" offset=\"48\" size=\"1\"/>\n"
    "   <output><port id=\"0\" precision=\"BOOL\"/></output>\n"
    "  </layer>\n"
    "  <layer id=\"2\" name=\"trip_count\" type=\"Const\" version=\"opset1\">\n"
    "   <data element_type=\"i64\" shape=\"\" offset=\"0\" size=\"8\"/>\n"
    "   <output><port id=\"0\" precision=\"I64\"/></output>\n"
    "  </layer>\n"
    "  <layer id=\"3\" name=\"preprocess\" type=\"Loop\" version=\"opset5\">\n"
    "   <input><port id=\"0\" precision=\"I64\"/><port id=\"1\" precision=\"BOOL\"/>\n"
    "          <port id=\"2\" precision=\"FP32\"><dim>5</dim><dim>4</dim></port></input>\n"
    "   <output><port id=\"3\" precision=\"FP32\"><dim>5</dim><dim>4</dim></port></output>\n"
    "   <port_map>\n"
    "    <input external_port_id=\"2\" internal_layer_id=\"0\"/>\n"
    "    <output external_port_id=\"3\" internal_layer_id=\"9\"/>\n"
    "    <output external_port_id=\"-1\" internal_layer_id=\"11\" purpose=\"execution_condition\"/>\n"
    "   </port_map>\n"
    "   <back_edges><edge from-layer=\"9\" to-layer=\"0\"/></back_edges>\n"
    "   <body>\n"
    "    <layers>\n"
    "     <layer id=\"0\" name=\"boxes_in\" type=\"Parameter\" version=\"opset1\">\n"
    "      <data shape=\"5,4\" element_type=\"f32\"/>\n"
    "      <output><port id=\"0\" precision=\"FP32\"><dim>5</dim><dim>4</dim></port></output>\n"
    "     </layer>\n"
    "     <layer id=\"1\" name=\"order\" type=\"Const\" version=\"opset1\">\n"
    "      <data element_type=\"i64\" shape=\"3\" offset=\"24\" size=\"24\"/>\n"
    "      <output><port id=\"0\" precision=\"I64\"><dim>3</dim></port></output>\n"
    "     </layer>\n"
    "     <layer id=\"2\" name=\"gather_axis\" type=\"Const\" version=\"opset1\">\n"
    "      <data element_type=\"i64\" shape=\"\" offset=\"8\" size=\"8\"/>\n"
    "      <output><port id=\"0\" precision=\"I64\"/></output>\n"
    "     </layer>\n"
    "     <layer id=\"3\" name=\"pick_boxes\" type=\"Gather\" version=\"opset8\">\n"
    "      <data batch_dims=\"0\"/>\n"
    "      <input><port id=\"0\" precision=\"FP32\"><dim>5</dim><dim>4</dim></port>\n"
    "             <port id=\"1\" precision=\"I64\"><dim>3</dim></port>\n"
    "             <port id=\"2\" precision=\"I64\"/></input>\n"
    "      <output><port id=\"3\" precision=\"FP32\"><dim>3</dim><dim>4</dim></port></output>\n"
    "     </layer>\n"
    "     <layer id=\"5\" name=\"put_boxes\" type=\"ScatterUpdate\" version=\"opset3\">\n"
    "      <input><port id=\"0\" precision=\"FP32\"><dim>5</dim><dim>4</dim></port>\n"
    "             <port id=\"1\" precision=\"I64\"><dim>3</dim></port>\n"
    "             <port id=\"2\" precision=\"FP32\"><dim>3</dim><dim>4</dim></port>\n"
    "             <port id=\"3\" precision=\"I64\"/></input>\n"
    "      <output><port id=\"4\" precision=\"FP32\"><dim>5</dim><dim>4</dim></port></output>\n"
    "     </layer>\n"
    "     <layer id=\"6\" name=\"per_box\" type=\"TensorIterator\" version=\"opset1\">\n"
    "      <input><port id=\"0\" precision=\"FP32\"><dim>5</dim><dim>4</dim></port></input>\n"
    "      <output><port id=\"1\" precision=\"FP32\"><dim>5</dim><dim>2</dim><dim>4</dim></port>"
    "</output>\n"
    "      <port_map>\n"
    "       <input axis=\"0\" external_port_id=\"0\" internal_layer_id=\"0\"/>\n"
    "       <output axis=\"0\" external_port_id=\"1\" internal_layer_id=\"3\"/>\n"
    "      </port_map>\n"
    "      <back_edges/>\n"
    "      <body>\n"
    "       <layers>\n"
    "        <layer id=\"0\" name=\"box\" type=\"Parameter\" version=\"opset1\">\n"
    "         <data shape=\"1,4\" element_type=\"f32\"/>\n"
    "         <output><port id=\"0\" precision=\"FP32\"><dim>1</dim><dim>4</dim></port></output>\n"
    "        </layer>\n"
    "        <layer id=\"1\" name=\"corner\" type=\"Parameter\" version=\"opset1\">\n"
    "         <data shape=\"2,1\" element_type=\"i32\"/>\n"
    "         <output><port id=\"0\" precision=\"I32\"><dim>2</dim><dim>1</dim></port></output>\n"
    "        </layer>\n"
    "        <layer id=\"2\" name=\"corners\" type=\"GatherND\" version=\"opset8\">\n"
    "         <input><port id=\"0\"><dim>1</dim><dim>4</dim></port>\n"
    "                <port id=\"1\"><dim>2</dim><dim>1</dim></port></input>\n"
    "         <output><port id=\"2\" precision=\"FP32\"><dim>2</dim><dim>4</dim></port></output>\n"
    "        </layer>\n"
    "        <layer id=\"3\" name=\"corners_out\" type=\"Result\" version=\"opset1\">\n"
    "         <input><port id=\"0\"><dim>2</dim><dim>4</dim></port></input>\n"
    "        </layer>\n"
    "       </layers>\n"
    "       <edges>\n"
    "        <edge from-layer=\"0\" from-port=\"0\" to-layer=\"2\" to-port=\"0\"/>\n"
    "        <edge from-layer=\"1\" from-port=\"0\" to-layer=\"2\" to-port=\"1\"/>\n"
    "        <edge from-layer=\"2\" from-port=\"2\" to-layer=\"3\" to-port=\"0\"/>\n"
    "       </edges>\n"
    "      </body>\n"
    "     </layer>\n"
    "     <layer id=\"9\" name=\"boxes_out\" type=\"Result\" version=\"opset1\">\n"
    "      <input><port id=\"0\"><dim>5</dim><dim>4</dim></port></input>\n"
    "     </layer>\n"
    "    </layers>\n"
    "    <edges>\n"
    "     <edge from-layer=\"0\" from-port=\"0\" to-layer=\"3\" to-port=\"0\"/>\n"
    "     <edge from-layer=\"1\" from-port=\"0\" to-layer=\"3\" to-port=\"1\"/>\n"
    "     <edge from-layer=\"2\" from-port=\"0\" to-layer=\"3\" to-port=\"2\"/>\n"
    "     <edge from-layer=\"0\" from-port=\"0\" to-layer=\"5\" to-port=\"0\"/>\n"
    "     <edge from-layer=\"1\" from-port=\"0\" to-layer=\"5\" to-port=\"1\"/>\n"
    "     <edge from-layer=\"3\" from-port=\"3\" to-layer=\"5\" to-port=\"2\"/>\n"
    "     <edge from-layer=\"2\" from-port=\"0\" to-layer=\"5\" to-port=\"3\"/>\n"
    "     <edge from-layer=\"5\" from-port=\"4\" to-layer=\"6\" to-port=\"0\"/>\n"
    "     <edge from-layer=\"5\" from-port=\"4\" to-layer=\"9\" to-port=\"0\"/>\n"
    "    </edges>\n"
    "   </body>\n"
    "  </layer>\n"
    "  <layer id=\"4\" name=\"maybe_flip\" type=\"If\" version=\"opset8\">\n"
    "   <input><port id=\"0\" precision=\"BOOL\"/>\n"
    "          <port id=\"1\" precision=\"FP32\"><dim>5</dim><dim>4</dim></port></input>\n"
    "   <output><port id=\"2\" precision=\"FP32\"><dim>5</dim><dim>4</dim></port></output>\n"
    "   <then_port_map>\n"
    "    <input external_port_id=\"1\" internal_layer_id=\"0\"/>\n"
    "    <output external_port_id=\"2\" internal_layer_id=\"3\"/>\n"
    "   </then_port_map>\n"
    "   <else_port_map>\n"
    "    <input external_port_id=\"1\" internal_layer_id=\"0\"/>\n"
    "    <output external_port_id=\"2\" internal_layer_id=\"3\"/>\n"
    "   </else_port_map>\n"
    "   <then_body>\n"
    "    <layers>\n"
    "     <layer id=\"0\" name=\"in\" type=\"Parameter\" version=\"opset1\">\n"
    "      <data shape=\"5,4\" element_type=\"f32\"/>\n"
    "      <output><port id=\"0\" precision=\"FP32\"><dim>5</dim><dim>4</dim></port></output>\n"
    "     </layer>\n"
    "     <layer id=\"2\" name=\"flip\" type=\"GatherElements\" version=\"opset6\">\n"
    "      <data axis=\"1\"/>\n"
    "      <input><port id=\"0\" precision=\"FP32\"><dim>5</dim><dim>4</dim></port>\n"
    "             <port id=\"1\" precision=\"I32\"><dim>5</dim><dim>4</dim></port></input>\n"
    "      <output><port id=\"2\" precision=\"FP32\"><dim>5</dim><dim>4</dim></port></output>\n"
    "     </layer>\n"
    "    </layers>\n"
    "    <edges><edge from-layer=\"0\" from-port=\"0\" to-layer=\"2\" to-port=\"0\"/></edges>\n"
    "   </then_body>\n"
    "   <else_body>\n"
    "    <layers>\n"
    "     <layer id=\"0\" name=\"in\" type=\"Parameter\" version=\"opset1\">\n"
    "      <data shape=\"5,4\" element_type=\"f32\"/>\n"
    "      <output><port id=\"0\" precision=\"FP32\"><dim>5</dim><dim>4</dim></port></output>\n"
    "     </layer>\n"
    "     <layer id=\"1\" name=\"axis\" type=\"Const\" version=\"opset1\">\n"
    "      <data element_type=\"i32\" shape=\"\" offset=\"8\" size=\"4\"/>\n"
    "      <output><port id=\"0\" precision=\"I32\"/></output>\n"
    "     </layer>\n"
    "     <layer id=\"2\" name=\"flip\" type=\"Gather\" version=\"opset8\">\n"
    "      <input><port id=\"0\" precision=\"FP32\"><dim>5</dim><dim>4</dim></port>\n"
    "             <port id=\"1\" precision=\"I64\"><dim>5</dim></port>\n"
    "             <port id=\"2\"/></input>\n"
    "      <output><port id=\"3\" precision=\"FP32\"><dim>5</dim><dim>4</dim></port></output>\n"
    "     </layer>\n"
    "    </layers>\n"
    "    <edges>\n"
    "     <edge from-layer=\"0\" from-port=\"0\" to-layer=\"2\" to-port=\"0\"/>\n"
    "     <edge from-layer=\"1\" from-port=\"0\" to-layer=\"2\" to-port=\"2\"/>\n"
    "    </edges>\n"
    "   </else_body>\n"
    "  </layer>\n"
    "  <layer id=\"5\" name=\"outer_gather\" type=\"Gather\" version=\"opset8\">\n"
    "   <input><port id=\"0\" precision=\"FP32\"><dim>5</dim><dim>4</dim></port>\n"
    "          <port id=\"1\" precision=\"I64\"><dim>3</dim></port>\n"
    "          <port id=\"2\" precision=\"I64\"/></input>\n"
    "   <output><port id=\"3\" precision=\"FP32\"><dim>5</dim><dim>3</dim></port></output>\n"
    "  </layer>\n"
    " </layers>\n"
    " <edges>\n"
    "  <edge from-layer=\"2\" from-port=\"0\" to-layer=\"3\" to-port=\"0\"/>\n"
    "  <edge from-layer=\"1\" from-port=\"0\" to-layer=\"3\" to-port=\"1\"/>\n"
    "  <edge from-layer=\"0\" from-port=\"0\" to-layer=\"3\" to-port=\"2\"/>\n"
    "  <edge from-layer=\"1\" from-port=\"0\" to-layer=\"4\" to-port=\"0\"/>\n"
    "  <edge from-layer=\"3\" from-port=\"3\" to-layer=\"4\" to-port=\"1\"/>\n"
    "  <edge from-layer=\"4\" from-port=\"2\" to-layer=\"5\" to-port=\"0\"/>\n"
    "  <edge from-layer=\"2\" from-port=\"0\" to-layer=\"5\" to-port=\"2\"/>\n"
    " </edges>\n"
    "</net>\n";

/* The .bin of loop_xml: the outer Const 1 at 0, the bodies' axis 0 at 8,
 * the box order {0, 2, 4} at 24, the loop condition true at 48. */
static void write_loop_model(const char *name)
{
    char x[64], b[64];
    snprintf(x, sizeof x, "%s.xml", name);
    snprintf(b, sizeof b, "%s.bin", name);
    write_file(x, loop_xml, strlen(loop_xml));
    unsigned char bin[56] = {0};
    int64_t words[6] = {1, 0, 0, 0, 2, 4};
    memcpy(bin, words, sizeof words);
    bin[48] = 1;
    write_file(b, bin, sizeof bin);
}

/* The indexing layers in the bodies of Loop, TensorIterator and If
 * (nested too) are listed under the body's name, each body a graph with
 * its own ids and edges, and read like the others: a real EfficientDet's
 * 9 in its preprocessing Loop were never listed. */
static void test_layers_in_bodies(void **state)
{
    (void)state;
    write_loop_model("effdet");
    tj_model m = read_ok("effdet");
    static const struct {
        const char *name, *id;
        jit_op op;
        int64_t axis;
    } want[] = {
        {"preprocess/body/pick_boxes", "3", JIT_OP_GATHER, 0},
        {"preprocess/body/put_boxes", "5", JIT_OP_SCATTER_UPDATE, 0},
        {"preprocess/body/per_box/body/corners", "2", JIT_OP_GATHER_ND, 0},
        {"maybe_flip/then_body/flip", "2", JIT_OP_GATHER_ELEMENTS, 1},
        {"maybe_flip/else_body/flip", "2", JIT_OP_GATHER, 0},
        {"outer_gather", "5", JIT_OP_GATHER, 1},
    };
    assert_int_equal(m.count, (int)(sizeof want / sizeof *want));
    for (int i = 0; i < m.count; i++) {
        const tj_model_layer *l = &m.layers[i];
        if (strcmp(l->name, want[i].name) != 0 || strcmp(l->id, want[i].id) != 0)
            fail_msg("layer %d: %s id %s, expected %s id %s", i, l->name, l->id, want[i].name,
                     want[i].id);
        if (!l->usable)
            fail_msg("%s: %s", l->name, l->skip);
        assert_int_equal(l->sig.op, want[i].op);
        /* each axis from its own graph's Const: body Const 2 is 0, the
         * outer Const 2 is 1 */
        if (want[i].op != JIT_OP_GATHER_ND && l->sig.axis != want[i].axis)
            fail_msg("%s: axis %lld, expected %lld", l->name, (long long)l->sig.axis,
                     (long long)want[i].axis);
        jit_kernel fn = jit_compile(&l->sig);
        if (!fn)
            fail_msg("%s: %s", l->name, jit_last_error());
    }
    assert_int_equal(m.layers[1].sig.updates_shape.dims[0], 3);
    assert_int_equal(m.layers[2].sig.index_type, JIT_I32); /* from the body's Parameter */
    assert_int_equal(m.layers[4].sig.axis_type, JIT_I32);
    tj_model_free(&m);
    jit_shutdown();
}

static void test_truncated_bin(void **state)
{
    (void)state;
    write_model("short", model_xml, 20); /* the axis needs bytes [16, 24) */
    tj_model m = read_ok("short");
    assert_false(m.layers[1].usable);
    assert_non_null(strstr(m.layers[1].skip, "axis Const: the constant's bytes [16, 24) are not in"));
    assert_non_null(strstr(m.layers[1].skip, "(20 bytes)"));
    tj_model_free(&m);
    remove(path_of("short.bin"));
    m = read_ok("short");
    assert_non_null(strstr(m.layers[1].skip, "cannot open"));
    tj_model_free(&m);
}

/* A FIFO (or any file not regular) where the .bin goes, as a hostile model
 * archive can carry: its open must not wait for a writer forever (alarm()
 * ends a test that hangs); the layer is skipped with the reason. */
static void test_bin_not_a_regular_file(void **state)
{
    (void)state;
    write_model("fifo", model_xml, 24);
    remove(path_of("fifo.bin"));
    assert_int_equal(mkfifo(path_of("fifo.bin"), 0600), 0);
    alarm(60);
    tj_model m = read_ok("fifo");
    alarm(0);
    assert_false(m.layers[1].usable);
    assert_non_null(strstr(m.layers[1].skip, "is not a regular file"));
    tj_model_free(&m);
    remove(path_of("fifo.bin"));
}

/* Dynamic dims as OpenVINO writes them (its IR reader's strToDimension):
 * ? and -1 are dynamic; a..b, a.. and ..b intervals are dynamic with b
 * as the bound; a..a is static; anything else is refused. */
static void test_dynamic_dims(void **state)
{
    (void)state;
    char *xml = strdup(model_xml);
    char *d = strstr(xml, "<input><port id=\"0\"><dim>4</dim>");
    d[25] = '?'; /* the data's first dim */
    write_model("dyn", xml, 24);
    tj_model m = read_ok("dyn");
    assert_true(m.layers[0].usable);
    assert_int_equal(m.layers[0].sig.data_shape.dims[0], JIT_DIM_DYNAMIC);
    assert_int_equal(m.layers[0].sig.data_bound[0], 0);
    assert_int_equal(m.layers[0].sig.data_shape.dims[1], 3);
    assert_true(jit_sig_is_dynamic(&m.layers[0].sig));
    assert_true(m.layers[1].usable);
    tj_model_free(&m);
    free(xml);
    static const struct {
        const char *dim;
        int64_t v, bound;
    } ok[] = {{"-1", JIT_DIM_DYNAMIC, 0},   {"?", JIT_DIM_DYNAMIC, 0},
              {"1..10", JIT_DIM_DYNAMIC, 10}, {"2..", JIT_DIM_DYNAMIC, 0},
              {"..7", JIT_DIM_DYNAMIC, 7},    {" 0..-1 ", JIT_DIM_DYNAMIC, 0},
              {"5..5", 5, 0},                 {" 12 ", 12, 0},
              {"..", JIT_DIM_DYNAMIC, 0}};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        char frag[512], err[256];
        snprintf(frag, sizeof frag,
                 "<layer type=\"GatherND\" version=\"opset8\"><input>"
                 "<port><dim>%s</dim><dim>3</dim></port><port><dim>2</dim><dim>1</dim>"
                 "</port></input></layer>",
                 ok[i].dim);
        assert_int_equal(
            tj_model_parse(frag, strlen(frag), "f", NULL, &defaults, &m, err, sizeof err), 0);
        if (!m.layers[0].usable)
            fail_msg("<dim>%s</dim>: %s", ok[i].dim, m.layers[0].skip);
        assert_int_equal(m.layers[0].sig.data_shape.dims[0], ok[i].v);
        assert_int_equal(m.layers[0].sig.data_bound[0], ok[i].bound);
        tj_model_free(&m);
    }
    static const char *const bad[] = {"x", "3..1", "-2", "1..x", "1...2", ""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char frag[512], err[256], want[128];
        snprintf(frag, sizeof frag,
                 "<layer type=\"GatherND\" version=\"opset8\"><input>"
                 "<port><dim>%s</dim><dim>3</dim></port><port><dim>2</dim><dim>1</dim>"
                 "</port></input></layer>",
                 bad[i]);
        assert_int_equal(
            tj_model_parse(frag, strlen(frag), "f", NULL, &defaults, &m, err, sizeof err), 0);
        snprintf(want, sizeof want, "input port 0 (data): dim 0 is not a size '%s'", bad[i]);
        expect_layer_refused(&m.layers[0], want);
        tj_model_free(&m);
    }
    /* the output port's dims too, which a layer otherwise usable is held to */
    const char *out_frag = "<layer type=\"GatherND\" version=\"opset8\"><input>"
                           "<port><dim>4</dim><dim>3</dim></port><port><dim>2</dim><dim>1</dim>"
                           "</port></input><output><port><dim>2</dim><dim>-2</dim></port>"
                           "</output></layer>";
    char err[256];
    assert_int_equal(
        tj_model_parse(out_frag, strlen(out_frag), "f", NULL, &defaults, &m, err, sizeof err), 0);
    expect_layer_refused(&m.layers[0], "output port: dim 1 is not a size '-2'");
    tj_model_free(&m);
}

/* PointPillars' scatter of pillars (GatherND data [-1,64], indices
 * [-1,1]), a ScatterNDUpdate with a bounded count of index tuples and a
 * Gather of a dynamic batch and sequence: read as dynamic layers,
 * compiled into dynamic kernels and run on one concrete shape each
 * against the reference kernel of that shape. */
static const char dynamic_xml[] =
    "<?xml version=\"1.0\"?>\n"
    "<net name=\"pillars\" version=\"11\">\n"
    " <layers>\n"
    "  <layer id=\"2\" name=\"pillar_gather\" type=\"GatherND\" version=\"opset8\">\n"
    "   <data batch_dims=\"0\"/>\n"
    "   <input><port id=\"0\" precision=\"FP32\"><dim>-1</dim><dim>64</dim></port>\n"
    "          <port id=\"1\" precision=\"I64\"><dim>-1</dim><dim>1</dim></port></input>\n"
    "   <output><port id=\"2\" precision=\"FP32\"><dim>-1</dim><dim>64</dim></port></output>\n"
    "  </layer>\n"
    "  <layer id=\"6\" name=\"scatter_canvas\" type=\"ScatterNDUpdate\" version=\"opset3\">\n"
    "   <input><port id=\"0\" precision=\"FP32\"><dim>4</dim><dim>8</dim></port>\n"
    "          <port id=\"1\" precision=\"I32\"><dim>1..100</dim><dim>2</dim></port>\n"
    "          <port id=\"2\" precision=\"FP32\"><dim>?</dim></port></input>\n"
    "   <output><port id=\"3\" precision=\"FP32\"><dim>4</dim><dim>8</dim></port></output>\n"
    "  </layer>\n"
    "  <layer id=\"9\" name=\"axis\" type=\"Const\" version=\"opset1\">\n"
    "   <data element_type=\"i64\" shape=\"\" offset=\"0\" size=\"8\"/>\n"
    "   <output><port id=\"0\" precision=\"I64\"/></output>\n"
    "  </layer>\n"
    "  <layer id=\"10\" name=\"embed_lookup\" type=\"Gather\" version=\"opset8\">\n"
    "   <data batch_dims=\"0\"/>\n"
    "   <input><port id=\"0\" precision=\"FP32\"><dim>50</dim><dim>16</dim></port>\n"
    "          <port id=\"1\" precision=\"I64\"><dim>-1</dim><dim>..128</dim></port>\n"
    "          <port id=\"2\" precision=\"I64\"/></input>\n"
    "   <output><port id=\"3\" precision=\"FP32\"><dim>-1</dim><dim>..128</dim><dim>16</dim>"
    "</port></output>\n"
    "  </layer>\n"
    " </layers>\n"
    " <edges>\n"
    "  <edge from-layer=\"9\" from-port=\"0\" to-layer=\"10\" to-port=\"2\"/>\n"
    " </edges>\n"
    "</net>\n";

/* One call of the layer's dynamic kernel with every dynamic dim 3
 * (bounds allow it) against the reference kernel of that shape. */
static void run_dynamic_layer(const tj_model_layer *l)
{
    int64_t dims[3 * JIT_MAX_RANK];
    const jit_shape *in[3] = {&l->sig.data_shape, &l->sig.indices_shape, &l->sig.updates_shape};
    int n = l->sig.op == JIT_OP_SCATTER_ND_UPDATE ? 3 : 2, at = 0;
    for (int i = 0; i < n; i++)
        for (int d = 0; d < in[i]->rank; d++)
            dims[at++] = in[i]->dims[d] == JIT_DIM_DYNAMIC ? 3 : in[i]->dims[d];
    jit_sig concrete;
    jit_kernel_info info;
    jit_kernel fn = jit_compile(&l->sig);
    assert_non_null(fn);
    assert_int_equal(jit_info(fn, &info), 0);
    assert_int_equal(info.dynamic, 1);
    assert_int_equal(jit_sig_bind(&l->sig, dims, &concrete), 0);
    concrete.engine = JIT_ENGINE_REFERENCE;
    jit_kernel ref = jit_compile(&concrete);
    assert_non_null(ref);
    assert_int_equal(jit_info(ref, &info), 0);
    float data[512], upd[16], out1[512], out2[512];
    int64_t idx[16];
    for (int i = 0; i < 512; i++)
        data[i] = (float)i;
    for (int i = 0; i < 16; i++) {
        idx[i] = i % 3;
        upd[i] = -1.0f - (float)i;
    }
    int32_t idx32[16];
    for (int i = 0; i < 16; i++)
        idx32[i] = (int32_t)idx[i];
    const void *ip = l->sig.index_type == JIT_I32 ? (const void *)idx32 : (const void *)idx;
    assert_true(info.out_bytes <= (int64_t)sizeof out1);
    assert_int_equal(jit_call_dynamic(fn, data, ip, upd, out1, dims), JIT_OK);
    assert_int_equal(jit_call(ref, data, ip, upd, out2), JIT_OK);
    assert_memory_equal(out1, out2, (size_t)info.out_bytes);
}

static void test_dynamic_layers(void **state)
{
    (void)state;
    write_file("pillars.xml", dynamic_xml, strlen(dynamic_xml));
    int64_t axis = 0;
    write_file("pillars.bin", &axis, sizeof axis);
    tj_model m = read_ok("pillars");
    assert_int_equal(m.count, 3);
    for (int i = 0; i < 3; i++) {
        if (!m.layers[i].usable)
            fail_msg("%s: %s", m.layers[i].name, m.layers[i].skip);
        assert_true(jit_sig_is_dynamic(&m.layers[i].sig));
        run_dynamic_layer(&m.layers[i]);
    }
    const jit_sig *g = &m.layers[0].sig, *s = &m.layers[1].sig, *e = &m.layers[2].sig;
    assert_int_equal(g->data_shape.dims[0], JIT_DIM_DYNAMIC);
    assert_int_equal(g->data_shape.dims[1], 64);
    assert_int_equal(g->indices_shape.dims[0], JIT_DIM_DYNAMIC);
    assert_int_equal(s->indices_shape.dims[0], JIT_DIM_DYNAMIC);
    assert_int_equal(s->indices_bound[0], 100);
    assert_int_equal(s->updates_shape.dims[0], JIT_DIM_DYNAMIC);
    assert_int_equal(s->data_shape.dims[0], 4);
    assert_int_equal(e->indices_bound[1], 128);
    assert_int_equal(m.layers[2].ir_output.dims[1], JIT_DIM_DYNAMIC);
    assert_int_equal(m.layers[2].ir_output_bound[1], 128);
    jit_shape out;
    assert_int_equal(jit_output_shape(e, &out), 0);
    assert_int_equal(out.rank, 3);
    assert_int_equal(out.dims[0], JIT_DIM_DYNAMIC);
    assert_int_equal(out.dims[2], 16);
    tj_model_free(&m);
    jit_shutdown();
}

/* GatherElements-6 as OpenVINO's IR writes it (axis an attribute of
 * <data>), read, compiled and run on the spec's 2x2 example. */
static void test_gather_elements_layer(void **state)
{
    (void)state;
    const char frag[] = "<layer id=\"3\" name=\"ge\" type=\"GatherElements\" version=\"opset6\">"
                        "<data axis=\"1\"/><input>"
                        "<port id=\"0\" precision=\"FP32\"><dim>2</dim><dim>2</dim></port>"
                        "<port id=\"1\" precision=\"I32\"><dim>2</dim><dim>2</dim></port>"
                        "</input><output><port id=\"2\"><dim>2</dim><dim>2</dim></port>"
                        "</output></layer>";
    tj_model_opts opts = {.dtype = JIT_F32, .index_type = JIT_I64};
    tj_model m;
    char err[256];
    assert_int_equal(tj_model_parse(frag, strlen(frag), "ge", NULL, &opts, &m, err, sizeof err),
                     0);
    assert_int_equal(m.count, 1);
    assert_true(m.layers[0].usable);
    const jit_sig *s = &m.layers[0].sig;
    assert_int_equal(s->op, JIT_OP_GATHER_ELEMENTS);
    assert_int_equal(s->opset, 6);
    assert_int_equal(s->axis, 1);
    assert_int_equal(s->index_type, JIT_I32);
    float data[4] = {1, 2, 3, 4}, out[4], want[4] = {1, 2, 3, 3};
    int32_t idx[4] = {0, 1, 0, 0};
    jit_kernel fn = jit_compile(s);
    assert_non_null(fn);
    assert_int_equal(jit_call(fn, data, idx, NULL, out), 0);
    assert_memory_equal(out, want, sizeof want);
    tj_model_free(&m);
    const char no_axis[] = "<layer type=\"GatherElements\" version=\"opset6\"><input>"
                           "<port><dim>2</dim></port><port><dim>2</dim></port></input></layer>";
    assert_int_equal(tj_model_parse(no_axis, strlen(no_axis), "ge", NULL, &opts, &m, err,
                                    sizeof err), 0);
    assert_false(m.layers[0].usable);
    assert_string_equal(m.layers[0].skip, "<data> has no axis attribute");
    tj_model_free(&m);
    jit_shutdown();
}

/* Exactly as the GatherND-5/8 and ScatterUpdate-3 specs print them. */
static void test_spec_fragments(void **state)
{
    (void)state;
    const char frag[] =
        "<layer id=\"1\" type=\"GatherND\">\n"
        "    <data batch_dims=2 />\n"
        "    <input>\n"
        "        <port id=\"0\"><dim>30</dim><dim>2</dim><dim>100</dim><dim>35</dim></port>\n"
        "        <port id=\"1\"><dim>30</dim><dim>2</dim><dim>3</dim><dim>1</dim></port>\n"
        "    </input>\n"
        "    <output><port id=\"3\"><dim>60</dim><dim>3</dim><dim>35</dim></port></output>\n"
        "</layer>\n"
        "<layer ... type=\"ScatterUpdate\">\n"
        "<input>\n"
        "<port id=\"0\"> <!-- data -->\n<dim>3</dim> <!-- {{-1.0f, 1.0f}} -->\n<dim>5</dim>\n"
        "</port>\n<port id=\"1\"> <!-- indices -->\n<dim>2</dim> <!-- {0, 2} -->\n</port>\n"
        "<port id=\"2\"><dim>3</dim><dim>2</dim></port>\n"
        "<port id=\"3\"> <!-- axis -->\n<dim>1</dim> <!-- {1} -->\n</port>\n"
        "</input>\n</layer>\n";
    tj_model m;
    char err[256];
    tj_model_opts opts = {.dtype = JIT_F32, .index_type = JIT_I32, .opset = 5};
    assert_int_equal(tj_model_parse(frag, strlen(frag), "spec", NULL, &opts, &m, err, sizeof err),
                     0);
    assert_true(m.fragment);
    assert_int_equal(m.count, 2);
    assert_int_equal(m.layers[0].sig.batch_dims, 2); /* the unquoted value */
    assert_int_equal(m.layers[0].sig.opset, 5);
    assert_int_equal(m.layers[0].sig.index_type, JIT_I32);
    jit_shape out;
    assert_int_equal(jit_output_shape(&m.layers[0].sig, &out), 0);
    assert_int_equal(out.rank, m.layers[0].ir_output.rank); /* [60,3,35] either way */
    assert_int_equal(out.dims[0], 60);
    assert_non_null(strstr(m.layers[0].note, "dtype f32 (default: the IR names none)"));
    assert_false(m.layers[1].usable); /* no axis value: a fragment carries no constants */
    assert_string_equal(m.layers[1].skip,
                        "a fragment carries no constants: give the axis with --axis");
    tj_model_free(&m);
    opts.have_axis = 1;
    opts.axis = 1;
    assert_int_equal(tj_model_parse(frag, strlen(frag), "spec", NULL, &opts, &m, err, sizeof err),
                     0);
    assert_true(m.layers[1].usable);
    assert_int_equal(m.layers[1].sig.axis, 1);
    assert_int_equal(m.layers[1].sig.axis_shape.rank, 1);
    assert_non_null(jit_compile(&m.layers[1].sig));
    tj_model_free(&m);
    jit_shutdown();
}

/* The ScatterElementsUpdate-12 and ScatterNDUpdate-15 specs print the
 * attributes on the <layer> tag, not in <data>; read from <data> only,
 * their reduction and use_init_val were dropped without a word and the
 * layers compiled as plain updates. A fragment's tag counts; a model's
 * does not (its IR keeps them in <data>). */
static void test_spec_attributes_on_the_layer_tag(void **state)
{
    (void)state;
    const char frag[] =
        "    <layer ... use_init_val=\"false\" reduction=\"sum\" type=\"ScatterElementsUpdate\">\n"
        "        <input>\n"
        "            <port id=\"0\">>  <!-- data -->\n"
        "                <dim>4</dim>  <!-- values: [2, 3, 4, 6] -->\n"
        "            </port>\n"
        "            <port id=\"1\"><dim>6</dim></port>\n"
        "            <port id=\"2\">><dim>6</dim></port>\n"
        "            <port id=\"3\">     <!-- values: [0] -->\n<dim>1</dim></port>\n"
        "        </input>\n"
        "        <output><port id=\"4\" precision=\"FP32\"><dim>4</dim></port></output>\n"
        "    </layer>\n"
        "    <layer ... reduction=\"prod\" type=\"ScatterNDUpdate\">\n"
        "        <input>\n"
        "            <port id=\"0\" precision=\"FP16\"><dim>4</dim></port>\n"
        "            <port id=\"1\" precision=\"I32\"><dim>5</dim><dim>1</dim></port>\n"
        "            <port id=\"2\" precision=\"FP16\"><dim>5</dim></port>\n"
        "        </input>\n"
        "    </layer>\n";
    tj_model_opts opts = defaults;
    opts.have_axis = 1;
    tj_model m;
    char err[256];
    assert_int_equal(tj_model_parse(frag, strlen(frag), "spec", NULL, &opts, &m, err, sizeof err),
                     0);
    assert_int_equal(m.count, 2);
    assert_true(m.layers[0].usable);
    assert_int_equal(m.layers[0].sig.reduction, JIT_REDUCTION_SUM);
    assert_true(m.layers[0].sig.no_init_val);
    assert_true(m.layers[1].usable);
    assert_int_equal(m.layers[1].sig.reduction, JIT_REDUCTION_PROD);
    tj_model_free(&m);
    /* in a model, an attribute on the tag is not the layer's */
    const char net[] =
        "<net name=\"n\" version=\"11\"><layers>"
        "<layer id=\"1\" name=\"s\" type=\"ScatterNDUpdate\" version=\"opset15\" "
        "reduction=\"prod\"><input>"
        "<port id=\"0\" precision=\"FP16\"><dim>4</dim></port>"
        "<port id=\"1\" precision=\"I32\"><dim>5</dim><dim>1</dim></port>"
        "<port id=\"2\" precision=\"FP16\"><dim>5</dim></port></input></layer>"
        "</layers></net>";
    assert_int_equal(tj_model_parse(net, strlen(net), "net", NULL, &defaults, &m, err, sizeof err),
                     0);
    assert_int_equal(m.count, 1);
    assert_true(m.layers[0].usable);
    assert_int_equal(m.layers[0].sig.reduction, JIT_REDUCTION_NONE);
    tj_model_free(&m);
}

static void expect_refused(const char *text, size_t len, const char *want)
{
    tj_model m;
    char err[256];
    if (tj_model_parse(text, len, "bad.xml", NULL, &defaults, &m, err, sizeof err) == 0)
        fail_msg("accepted; expected '%s'", want);
    if (!strstr(err, want))
        fail_msg("message '%s' lacks '%s'", err, want);
    assert_null(strchr(err, '\n'));
}

static void test_garbage(void **state)
{
    (void)state;
    expect_refused("PK\x03\x04\x14\x00\x08", 7, "bad.xml:1: ");
    expect_refused("", 0, "bad.xml:");
    expect_refused("<net><layers><layer id=\"1\"></layers></net>", 42, "bad.xml:1: ");
    expect_refused("<?xml version=\"1.0\"?>\n<model/>\n", 30,
                   "bad.xml:2: the root element is <model>, not <net> or <layer>");
    expect_refused("<net/>", 6, "bad.xml:1: <net> has no <layers>");
    unsigned char noise[4096];
    uint64_t x = 99;
    for (int round = 0; round < 200; round++) {
        for (size_t i = 0; i < sizeof noise; i++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            noise[i] = (unsigned char)(x >> 56);
        }
        if (round % 2)
            memcpy(noise, "<layer", 6); /* the fragment path too */
        tj_model m;
        char err[256];
        if (tj_model_parse((const char *)noise, sizeof noise, "noise", NULL, &defaults, &m, err,
                           sizeof err) == 0)
            tj_model_free(&m);
    }
    tj_model m;
    char err[256];
    assert_int_equal(tj_model_read(path_of("missing.xml"), &defaults, &m, err, sizeof err), -1);
    assert_non_null(strstr(err, "missing.xml: cannot open"));
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/tj_models_XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd);
}

/* ScatterNDUpdate-15's spec prints its examples as type="ScatterNdUpdate":
 * a fragment's type is read whatever its case, saying so; a model's only
 * as OpenVINO's reader matches it, exactly. */
static void test_type_case_in_fragments(void **state)
{
    (void)state;
    const char frag[] = "<layer ... reduction=\"sum\" type=\"ScatterNdUpdate\"><input>"
                        "<port id=\"0\" precision=\"FP16\"><dim>4</dim></port>"
                        "<port id=\"1\" precision=\"I32\"><dim>5</dim><dim>1</dim></port>"
                        "<port id=\"2\" precision=\"FP16\"><dim>5</dim></port></input></layer>";
    tj_model m;
    char err[256];
    assert_int_equal(tj_model_parse(frag, strlen(frag), "spec", NULL, &defaults, &m, err,
                                    sizeof err), 0);
    assert_int_equal(m.count, 1);
    if (!m.layers[0].usable)
        fail_msg("%s", m.layers[0].skip);
    assert_int_equal(m.layers[0].sig.op, JIT_OP_SCATTER_ND_UPDATE);
    assert_int_equal(m.layers[0].sig.reduction, JIT_REDUCTION_SUM);
    assert_string_equal(m.layers[0].type, "ScatterNDUpdate");
    assert_string_equal(m.layers[0].note, "type 'ScatterNdUpdate' read as ScatterNDUpdate, "
                                          "no version read as ScatterNDUpdate-15");
    tj_model_free(&m);
    static char xml[sizeof model_xml];
    snprintf(xml, sizeof xml, "%s", model_xml);
    memcpy(strstr(xml, "type=\"GatherND\""), "type=\"GatherNd\"", strlen("type=\"GatherNd\""));
    assert_int_equal(tj_model_parse(xml, strlen(xml), "m", NULL, &defaults, &m, err, sizeof err),
                     0);
    assert_int_equal(m.count, 1);
    assert_string_equal(m.layers[0].type, "ScatterUpdate");
    tj_model_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_whole_model),   cmocka_unit_test(test_axis_not_known),
        cmocka_unit_test(test_truncated_bin), cmocka_unit_test(test_dynamic_dims),
        cmocka_unit_test(test_bin_not_a_regular_file),
        cmocka_unit_test(test_spec_fragments),
        cmocka_unit_test(test_spec_attributes_on_the_layer_tag),
        cmocka_unit_test(test_garbage),
        cmocka_unit_test(test_gather_elements_layer),
        cmocka_unit_test(test_axis_of_every_integer_type),
        cmocka_unit_test(test_dynamic_layers),
        cmocka_unit_test(test_integer_attribute_out_of_range),
        cmocka_unit_test(test_opset_number_out_of_range),
        cmocka_unit_test(test_const_range_overflow),
        cmocka_unit_test(test_output_port_contradiction),
        cmocka_unit_test(test_output_port_dynamic_inputs),
        cmocka_unit_test(test_output_port_type_contradiction),
        cmocka_unit_test(test_layers_in_bodies),
        cmocka_unit_test(test_type_case_in_fragments),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
