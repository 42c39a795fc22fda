/* The static-shape C kernel of each workload: the same loops as the
 * generic one, with every shape a #define, compiled at bench time by the
 * system's C compiler with -O3 -march=native, as a hand-written kernel
 * for exactly that layer would be. It validates the indices first, like
 * every implementation here, so that all keep one contract. */
#include <stdio.h>
#include <string.h>

#include "bench.h"

static const char *tj_index_ctype(const tj_bench_shape *s)
{
    switch (s->index_size) {
    case 1: return s->index_signed ? "int8_t" : "uint8_t";
    case 2: return s->index_signed ? "int16_t" : "uint16_t";
    case 4: return s->index_signed ? "int32_t" : "uint32_t";
    default: return s->index_signed ? "int64_t" : "uint64_t";
    }
}

static void tj_emit_defines(FILE *f, const tj_bench_shape *s)
{
    fprintf(f, "#define TUPLES %lldLL\n#define DEPTH %d\n#define BLOCK %lldLL\n"
               "#define DATA_BYTES %lldLL\n#define idx_t %s\n",
            (long long)(s->depth ? s->index_count / s->depth : 0), s->depth, (long long)s->block,
            (long long)s->data_bytes, tj_index_ctype(s));
    for (int e = 0; e < s->depth; e++)
        fprintf(f, "#define D%d %lldULL\n#define S%d %lldLL\n", e, (long long)s->dims[e], e,
                (long long)s->strides[e]);
}

static void tj_emit_undefs(FILE *f, const tj_bench_shape *s)
{
    fprintf(f, "#undef idx_t\n#undef TUPLES\n#undef DEPTH\n#undef BLOCK\n#undef DATA_BYTES\n");
    for (int e = 0; e < s->depth; e++)
        fprintf(f, "#undef D%d\n#undef S%d\n", e, e);
}

static void tj_emit_checks(FILE *f, const tj_bench_shape *s)
{
    fprintf(f, "    int bad = 0;\n    for (long long t = 0; t < TUPLES; t++) {\n");
    for (int e = 0; e < s->depth; e++)
        fprintf(f, "        bad |= (unsigned long long)(long long)ix[t * DEPTH + %d] >= D%d;\n",
                e, e);
    fprintf(f, "    }\n    if (bad)\n        return 1;\n");
}

/* One loop per level, every trip and step a constant: the position in
 * the index stream, on the indexed side and on the dense side as sums of
 * the loop variables times their steps. */
static void tj_emit_nest(FILE *f, const tj_bench_shape *s)
{
    int l = 0;
    for (; l < s->nlevels; l++)
        fprintf(f, "%*sfor (long long i%d = 0; i%d < %lldLL; i%d++)\n", 4 + 4 * l, "", l, l,
                (long long)s->levels[l].trip, l);
    int in = 4 + 4 * l;
    fprintf(f, "%*s{\n%*slong long at = 0, off = 0, dense = 0;\n", in, "", in + 4, "");
    for (int v = 0; v < s->nlevels; v++)
        fprintf(f, "%*sat += i%d * %lldLL; off += i%d * %lldLL; dense += i%d * %lldLL;\n", in + 4,
                "", v, (long long)s->levels[v].index_step, v,
                (long long)s->levels[v].indexed_step, v, (long long)s->levels[v].dense_step);
    for (int e = 0; e < s->depth; e++)
        fprintf(f, "%*soff += (long long)ix[at + %d] * S%d;\n", in + 4, "", e, e);
    if (s->sum)
        fprintf(f, "%*sfor (long long j = 0; j < BLOCK / 4; j++)\n%*s((float *)(out + off))[j] "
                   "+= ((const float *)(upd + dense))[j];\n", in + 4, "", in + 8, "");
    else if (s->scatter)
        fprintf(f, "%*smemcpy(out + off, upd + dense, BLOCK);\n", in + 4, "");
    else
        fprintf(f, "%*smemcpy(out + dense, data + off, BLOCK);\n", in + 4, "");
    fprintf(f, "%*s}\n", in, "");
}

static void tj_emit_kernel(FILE *f, const tj_workload *w, const tj_bench_shape *s)
{
    tj_emit_defines(f, s);
    if (!s->scatter)
        fprintf(f, "int static_%s(const void *restrict d_, const void *restrict i_, "
                   "void *restrict o_)\n{\n    const char *data = d_;\n    const idx_t *ix = i_;\n"
                   "    char *out = o_;\n", w->id);
    else
        fprintf(f, "int static_%s(const void *d_, const void *restrict i_, const void *restrict "
                   "u_, void *o_)\n{\n    const char *data = d_, *upd = u_;\n"
                   "    const idx_t *ix = i_;\n    char *out = o_;\n", w->id);
    tj_emit_checks(f, s);
    if (s->scatter)
        fprintf(f, "    if (out != data)\n        memcpy(out, data, DATA_BYTES);\n");
    tj_emit_nest(f, s);
    fprintf(f, "    return 0;\n}\n");
    tj_emit_undefs(f, s);
}

typedef struct tj_static_set {
    const tj_workload *const *ws;
    int n;
} tj_static_set;

static void tj_emit_all(FILE *f, const void *arg)
{
    const tj_static_set *set = arg;
    fprintf(f, "#include <stdint.h>\n#include <string.h>\n\n");
    for (int i = 0; i < set->n; i++) {
        tj_bench_shape s;
        tj_bench_shape_of(set->ws[i], &s);
        tj_emit_kernel(f, set->ws[i], &s);
    }
}

int tj_static_build(const tj_workload *const *ws, int n, void **handle, char *why, size_t len)
{
    char what[4400];
    tj_static_set set = {ws, n};
    if (tj_bench_cc_load("static", "-O3 -march=native", tj_emit_all, &set, handle, what,
                         sizeof what) == 0)
        return 0;
    snprintf(why, len, "no static kernel: %s", what);
    return -1;
}

void *tj_static_find(void *handle, const char *id)
{
    return tj_bench_cc_find(handle, "static", id);
}

void tj_static_close(void *handle)
{
    tj_bench_cc_close(handle);
}
