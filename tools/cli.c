#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "half.h"

int tj_cli_fail(const char *fmt, ...)
{
    va_list ap;
    fputs("tensorjit: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return TJ_EXIT_USAGE;
}

int tj_cli_int(const char *opt, const char *text, int64_t lo, int64_t hi, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end != '\0') {
        tj_cli_fail("%s expects an integer, got '%s'", opt, text);
        return -1;
    }
    if (v < lo || v > hi) {
        tj_cli_fail("%s=%lld is outside [%" PRId64 ", %" PRId64 "]", opt, v, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

/* numpy's names of the element types (numpy.dtype(T).name; bfloat16 is
 * ml_dtypes'). */
static const struct {
    const char *numpy;
    jit_dtype t;
} tj_numpy_names[] = {
    {"bool", JIT_BOOL},       {"int8", JIT_I8},         {"uint8", JIT_U8},
    {"int16", JIT_I16},       {"uint16", JIT_U16},      {"float16", JIT_F16},
    {"bfloat16", JIT_BF16},   {"int32", JIT_I32},       {"uint32", JIT_U32},
    {"float32", JIT_F32},     {"int64", JIT_I64},       {"uint64", JIT_U64},
    {"float64", JIT_F64},
};

int tj_cli_dtype(const char *opt, const char *text, jit_dtype *out)
{
    *out = jit_dtype_from_name(text);
    for (size_t i = 0; i < sizeof tj_numpy_names / sizeof *tj_numpy_names; i++)
        if (strcmp(text, tj_numpy_names[i].numpy) == 0)
            *out = tj_numpy_names[i].t;
    if (*out != JIT_DTYPE_UNSET)
        return 0;
    tj_cli_fail("%s=%s is not an element type (bool, i8..i64, u8..u64, f16, bf16, f32, f64, "
                "or numpy's int8, uint8, float16, bfloat16, float32, ...)", opt, text);
    return -1;
}

/* The shortest %g that reads back as the value (numpy's repr does the
 * same): 16777217 printed as 1.67772e+07 looked equal to its neighbours.
 * f32: 6 to 9 digits; f64: 6 to 17. NaN and infinities as %g has them. */
static void tj_print_real(FILE *f, double v, int single)
{
    char buf[40];
    int most = single ? 9 : 17;
    for (int p = 6; p <= most; p++) {
        snprintf(buf, sizeof buf, "%.*g", p, v);
        if (v != v || (single ? strtof(buf, NULL) == (float)v : strtod(buf, NULL) == v))
            break;
    }
    fputs(buf, f);
}

void tj_cli_print_elem(FILE *f, jit_dtype t, const void *data, int64_t i)
{
    const unsigned char *p = (const unsigned char *)data + i * jit_dtype_size(t);
    union {
        int8_t i8; uint8_t u8; int16_t i16; uint16_t u16; int32_t i32; uint32_t u32;
        int64_t i64; uint64_t u64; float f32; double f64;
    } v;
    memcpy(&v, p, (size_t)jit_dtype_size(t));
    switch (t) {
    case JIT_BOOL: fputs(v.u8 ? "true" : "false", f); break;
    case JIT_I8: fprintf(f, "%d", v.i8); break;
    case JIT_U8: fprintf(f, "%u", v.u8); break;
    case JIT_I16: fprintf(f, "%d", v.i16); break;
    case JIT_U16: fprintf(f, "%u", v.u16); break;
    case JIT_F16: fprintf(f, "%g", (double)tj_half_to_float(v.u16)); break;
    case JIT_BF16: fprintf(f, "%g", (double)tj_bf16_to_float(v.u16)); break;
    case JIT_I32: fprintf(f, "%" PRId32, v.i32); break;
    case JIT_U32: fprintf(f, "%" PRIu32, v.u32); break;
    case JIT_F32: tj_print_real(f, (double)v.f32, 1); break;
    case JIT_I64: fprintf(f, "%" PRId64, v.i64); break;
    case JIT_U64: fprintf(f, "%" PRIu64, v.u64); break;
    case JIT_F64: tj_print_real(f, v.f64, 0); break;
    default: fputs("?", f); break;
    }
}

static void tj_print_level(FILE *f, jit_dtype t, const jit_shape *s, const void *data, int dim,
                           int64_t *flat, int64_t *shown)
{
    if (dim == s->rank) {
        if (*shown < 1000)
            tj_cli_print_elem(f, t, data, *flat);
        else if (*shown == 1000)
            fputs("...", f);
        (*flat)++;
        (*shown)++;
        return;
    }
    fputc('[', f);
    /* past the "..." nothing more is printed, separators included */
    for (int64_t i = 0; i < s->dims[dim] && *shown <= 1000; i++) {
        if (i && dim + 1 == s->rank)
            fputs(", ", f);
        else if (i)
            fprintf(f, ",\n%*s", dim + 1, "");
        tj_print_level(f, t, s, data, dim + 1, flat, shown);
    }
    fputc(']', f);
}

static int tj_shape_is_empty(const jit_shape *s)
{
    for (int i = 0; i < s->rank; i++)
        if (s->dims[i] == 0)
            return 1;
    return 0;
}

/* "[] (shape [N,0])": the nested form of an empty tensor is one "[]" per
 * index of the dims before its zero, as many lines as their product (2^60
 * for [2^60,0], where the element cap never trips), so it is never
 * printed; rank 1, whose "[]" is its shape, goes without. */
static void tj_print_empty(FILE *f, const jit_shape *s)
{
    fputs("[]", f);
    if (s->rank > 1) {
        fputs(" (shape [", f);
        for (int i = 0; i < s->rank; i++)
            fprintf(f, "%s%" PRId64, i ? "," : "", s->dims[i]);
        fputs("])", f);
    }
}

void tj_cli_print_tensor(FILE *f, jit_dtype t, const jit_shape *s, const void *data)
{
    int64_t flat = 0, shown = 0;
    if (tj_shape_is_empty(s))
        tj_print_empty(f, s);
    else
        tj_print_level(f, t, s, data, 0, &flat, &shown);
    fputc('\n', f);
}

void tj_cli_print_result(FILE *f, jit_dtype t, const jit_shape *s, const void *data)
{
    fputs("shape [", f);
    for (int i = 0; i < s->rank; i++)
        fprintf(f, "%s%" PRId64, i ? "," : "", s->dims[i]);
    fprintf(f, "], dtype %s\n", jit_dtype_name(t));
    tj_cli_print_tensor(f, t, s, data);
}

void tj_cli_print_engine(FILE *f, const jit_kernel_info *info)
{
    if (info->engine == JIT_ENGINE_JIT && info->cache_hit)
        fprintf(f, "engine: jit (from the disk cache in %.2f ms, no compile, %zu bytes of code)\n",
                info->compile_ms, info->code_bytes);
    else if (info->engine == JIT_ENGINE_JIT)
        fprintf(f, "engine: jit (compile %.2f ms, %zu bytes of code)\n", info->compile_ms,
                info->code_bytes);
    else
        fprintf(f, "engine: reference (%s)\n", info->why);
}

/* The engine of this call, not the family's: a dynamic kernel whose code
 * is JIT may run one call's shape on the reference kernel (a shape that
 * does not fit the nest its code was made for). */
void tj_cli_print_engine_dynamic(FILE *f, jit_kernel fn, const jit_kernel_info *info,
                                 const int64_t *dims, const char *names)
{
    jit_engine engine = info->engine;
    char why[512] = "";
    if (jit_dynamic_engine(fn, dims, &engine, why, sizeof why) != 0)
        engine = info->engine;
    if (engine == JIT_ENGINE_JIT)
        fprintf(f, "engine: jit (dynamic %s; %s %.2f ms, %zu bytes of code)\n", names,
                info->cache_hit ? "from the disk cache in" : "compile", info->compile_ms,
                info->code_bytes);
    else if (info->engine == JIT_ENGINE_JIT)
        fprintf(f, "engine: reference for this call (dynamic %s; %s; the family's JIT code, "
                   "%zu bytes, runs its other shapes)\n",
                names, why, info->code_bytes);
    else
        fprintf(f, "engine: reference (dynamic %s; %s)\n", names, info->why);
}

int tj_cli_open_cache(void)
{
    char dir[4096];
    const char *env = getenv("TENSORJIT_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    if (env && strcmp(env, "off") == 0)
        return 0;
    if (env && *env)
        snprintf(dir, sizeof dir, "%s", env);
    else if (xdg && *xdg)
        snprintf(dir, sizeof dir, "%s/tensorjit", xdg);
    else if (home && *home)
        snprintf(dir, sizeof dir, "%s/.cache/tensorjit", home);
    else
        return 0;
    static int refused; /* said once, however often asked */
    if (refused)
        return -1;
    if (jit_cache_open(dir) == 0)
        return 0;
    refused = 1;
    fprintf(stderr, "tensorjit: no disk cache: %s\n", jit_last_error());
    return -1;
}

int tj_cli_engine(const char *text, jit_engine *out)
{
    if (strcmp(text, "jit") == 0)
        *out = JIT_ENGINE_AUTO;
    else if (strcmp(text, "reference") == 0)
        *out = JIT_ENGINE_REFERENCE;
    else
        return tj_cli_fail("--engine=%s must be jit or reference", text), -1;
    return 0;
}

int tj_cli_policy(const char *text, jit_index_policy *out)
{
    if (jit_index_policy_from_name(text, out) != 0)
        return tj_cli_fail("--index-policy=%s must be error, negative-wraps, clamp, zero-fill "
                           "or negative-wraps-zero-fill", text), -1;
    return 0;
}

int tj_cli_dump_ir(const char *arg, int *dump)
{
    if (arg && strcmp(arg, "opt") != 0)
        return tj_cli_fail("--dump-ir=%s: only --dump-ir and --dump-ir=opt exist", arg), -1;
    *dump = arg ? JIT_DUMP_IR_OPT : JIT_DUMP_IR;
    return 0;
}
