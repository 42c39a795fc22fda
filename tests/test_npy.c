/* The .npy reader on hand-made files: both format versions, every dtype,
 * and every kind of malformed input refused with its reason. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "npy.h"

/* magic + version + header length + header (padded) + payload */
static size_t make(unsigned char *buf, int major, const char *header, const void *payload,
                   size_t n)
{
    size_t hl = strlen(header), pre = major == 1 ? 10 : 12, off = 0;
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (unsigned char)major;
    buf[7] = 0;
    buf[8] = (unsigned char)(hl & 0xff);
    buf[9] = (unsigned char)(hl >> 8);
    if (major != 1)
        buf[10] = buf[11] = 0;
    off = pre;
    memcpy(buf + off, header, hl);
    off += hl;
    if (n)
        memcpy(buf + off, payload, n);
    return off + n;
}

static void parse_ok(const unsigned char *buf, size_t len, tj_npy *a)
{
    char err[256];
    if (tj_npy_parse(buf, len, a, err, sizeof err) != 0)
        fail_msg("refused: %s", err);
}

static void parse_fails(const unsigned char *buf, size_t len, const char *want)
{
    char err[256];
    tj_npy a;
    if (tj_npy_parse(buf, len, &a, err, sizeof err) == 0)
        fail_msg("accepted; expected '%s'", want);
    if (!strstr(err, want))
        fail_msg("message '%s' lacks '%s'", err, want);
}

static void test_versions_and_shapes(void **state)
{
    (void)state;
    unsigned char buf[512];
    float v[6] = {1, 2, 3, 4, 5, 6};
    tj_npy a;
    size_t n = make(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n", v,
                    sizeof v);
    parse_ok(buf, n, &a);
    assert_int_equal(a.dtype, JIT_F32);
    assert_int_equal(a.shape.rank, 2);
    assert_int_equal(a.shape.dims[1], 3);
    assert_memory_equal(a.data, v, sizeof v);
    tj_npy_free(&a);
    n = make(buf, 2, "{\"shape\": (6,), \"fortran_order\": False, \"descr\": \"<f4\"}   \n", v,
             sizeof v);
    parse_ok(buf, n, &a);
    assert_int_equal(a.shape.rank, 1);
    assert_int_equal(a.shape.dims[0], 6);
    tj_npy_free(&a);
    n = make(buf, 1, "{'descr': '<i8', 'fortran_order': False, 'shape': (), }\n", v, 8);
    parse_ok(buf, n, &a);
    assert_int_equal(a.shape.rank, 0);
    assert_int_equal(a.bytes, 8);
    tj_npy_free(&a);
    n = make(buf, 1, "{'descr': '|u1', 'fortran_order': False, 'shape': (0, 5), }\n", v, 0);
    parse_ok(buf, n, &a);
    assert_int_equal(a.bytes, 0);
    tj_npy_free(&a);
}

static void test_dtypes(void **state)
{
    (void)state;
    static const struct {
        const char *descr;
        jit_dtype t;
    } map[] = {{"|b1", JIT_BOOL}, {"|i1", JIT_I8},  {"|u1", JIT_U8},  {"<i2", JIT_I16},
               {"<u2", JIT_U16},  {"<f2", JIT_F16}, {"<i4", JIT_I32}, {"<u4", JIT_U32},
               {"<f4", JIT_F32},  {"<i8", JIT_I64}, {"<u8", JIT_U64}, {"<f8", JIT_F64}};
    unsigned char buf[512], payload[8] = {0};
    for (size_t i = 0; i < sizeof map / sizeof *map; i++) {
        char h[128];
        snprintf(h, sizeof h, "{'descr': '%s', 'fortran_order': False, 'shape': (1,), }\n",
                 map[i].descr);
        tj_npy a;
        parse_ok(buf, make(buf, 1, h, payload, (size_t)jit_dtype_size(map[i].t)), &a);
        assert_int_equal(a.dtype, map[i].t);
        tj_npy_free(&a);
    }
}

static void test_refusals(void **state)
{
    (void)state;
    unsigned char buf[512], p[64] = {0};
    parse_fails((const unsigned char *)"PK\3\4 not npy at all", 20, "wrong magic");
    size_t n = make(buf, 3, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }\n", p, 4);
    parse_fails(buf, n, "format 3.0 is not supported");
    n = make(buf, 1, "{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }\n", p, 4);
    parse_fails(buf, n, "big-endian");
    n = make(buf, 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }\n", p, 4);
    parse_fails(buf, n, "Fortran order");
    n = make(buf, 1, "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }\n", p, 8);
    parse_fails(buf, n, "dtype '<c8' is not supported");
    n = make(buf, 1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }\n", p,
             4);
    parse_fails(buf, n, "not a simple dtype");
    n = make(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }\n", p, 8);
    parse_fails(buf, n, "claims 16 bytes of data but the file holds 8");
    n = make(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }\n", p, 12);
    parse_fails(buf, n, "claims 4 bytes of data but the file holds 12");
    n = make(buf, 1, "{'descr': '<f4', 'fortran_order': False, }\n", p, 4);
    parse_fails(buf, n, "lacks 'shape'");
    n = make(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }\n", p, 4);
    parse_fails(buf, n, "non-negative integer");
    n = make(buf, 1,
             "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, "
             "4294967296), }\n", p, 4);
    parse_fails(buf, n, "overflows int64");
    n = make(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }\n", p, 4);
    parse_fails(buf, 30, "header claims");
    /* a v2 header length of 4 GiB */
    memcpy(buf, "\x93NUMPY\x02\x00\xff\xff\xff\xff", 12);
    parse_fails(buf, 64, "larger than");
}

static void test_write_then_read(void **state)
{
    (void)state;
    char path[] = "/tmp/tj_npy_test_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    int16_t v[24];
    for (int i = 0; i < 24; i++)
        v[i] = (int16_t)(i * 100 - 1000);
    jit_shape s = {3, {2, 3, 4}};
    char err[256];
    assert_int_equal(tj_npy_write(path, JIT_I16, &s, v, err, sizeof err), 0);
    tj_npy a;
    assert_int_equal(tj_npy_read(path, &a, err, sizeof err), 0);
    assert_int_equal(a.dtype, JIT_I16);
    assert_int_equal(a.shape.rank, 3);
    assert_memory_equal(a.data, v, sizeof v);
    tj_npy_free(&a);
    /* data starts on a 64-byte boundary, as numpy writes it */
    FILE *f = fopen(path, "rb");
    fseek(f, 0, SEEK_END);
    assert_int_equal((ftell(f) - (long)sizeof v) % 64, 0);
    fclose(f);
    remove(path);
    assert_int_equal(tj_npy_read("/nonexistent/x.npy", &a, err, sizeof err), -1);
    assert_non_null(strstr(err, "cannot open"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_versions_and_shapes),
        cmocka_unit_test(test_dtypes),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_write_then_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
