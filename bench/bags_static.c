/* The bag workloads' C peers, generated with every shape a #define and
 * compiled at bench time by the system's C compiler (-O3 -march=native
 * -ffp-contract=off: SPEC 10 forbids fused multiply-adds):
 * - static_ID: the plain loop a hand-written kernel for that layer would
 *   be; each index and offset checked in the loop that reads it. Its
 *   output is the one every other implementation must equal.
 * - prefetch_ID: the same, prefetching every line of the row 16 lookups
 *   ahead (FBGEMM's fixed distance).
 * - probe_ID: the same work with the prefetch distance a run-time
 *   argument (searched by the bench) into L2, and streaming stores of the
 *   output: the rate this core fetches rows of that index stream.
 * - probe_range_ID: the probe over bags [b0, b1), which the bench runs on
 *   two threads ("probe x2": the rate two cores fetch that stream, the
 *   limit for a kernel split in two). */
#include <stdio.h>
#include <string.h>

#include "bags.h"
#include "bench.h"

static const char tj_bag_prelude[] =
    "#include <stdint.h>\n#include <string.h>\n"
    "#if defined(__x86_64__)\n#include <immintrin.h>\n#endif\n"
    "static inline float tj_f32(float v) { return v; }\n"
    "static inline float tj_bf16(uint16_t h)\n"
    "{\n    uint32_t u = (uint32_t)h << 16;\n    float f;\n    memcpy(&f, &u, 4);\n"
    "    return f;\n}\n"
    "static inline float tj_to_f32(float v) { return v; }\n"
    "static inline uint16_t tj_to_bf16(float f) /* nearest even; NaN stays NaN */\n"
    "{\n    uint32_t u;\n    memcpy(&u, &f, 4);\n"
    "    if ((u & 0x7fffffffu) > 0x7f800000u)\n        return (uint16_t)((u >> 16) | 0x40u);\n"
    "    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);\n}\n";

/* One kernel; the #defines before it say which. The accumulator is an
 * array of WIDTH floats that the compiler keeps in vector registers. */
static const char tj_bag_body[] =
    "int KNAME(const void *restrict t_, const void *restrict i_, const void *restrict o_,\n"
    "          const void *restrict w_, void *restrict out_\n"
    "#if PROBE\n          , long long dist\n#endif\n"
    "#if RANGE\n          , long long b0, long long b1\n#endif\n          )\n"
    "{\n"
    "    const elem_t *table = t_;\n    const idx_t *ix = i_;\n    const idx_t *off = o_;\n"
    "    const elem_t *wt = w_;\n    elem_t *out = out_;\n"
    "    (void)off, (void)wt;\n"
    "#if !RANGE\n    const long long b0 = 0, b1 = BAGS;\n#endif\n"
    "    for (long long b = b0; b < b1; b++) {\n"
    "#if PACKED\n        long long lo = b * LEN, hi = lo + LEN;\n"
    "#else\n        long long lo = off[b], hi = b + 1 < BAGS ? (long long)off[b + 1] : N;\n"
    "        if (lo < 0 || lo > hi || hi > N)\n            return 1;\n#endif\n"
    "        float acc[WIDTH];\n"
    "        for (long long d = 0; d < WIDTH; d++)\n            acc[d] = 0.0f;\n"
    "        for (long long j = lo; j < hi; j++) {\n"
    "#if PREFETCH\n"
    "            if (j + DIST < N) {\n"
    "                unsigned long long p = (unsigned long long)(long long)ix[j + DIST];\n"
    "                if (p < ROWS)\n"
    "                    for (long long c = 0; c < ROW_BYTES; c += 64)\n"
    "                        __builtin_prefetch((const char *)(table + p * WIDTH) + c, 0, "
    "LOCALITY);\n"
    "            }\n"
    "#endif\n"
    "            unsigned long long r = (unsigned long long)(long long)ix[j];\n"
    "            if (r >= ROWS)\n                return 1;\n"
    "            const elem_t *row = table + r * WIDTH;\n"
    "#if WEIGHTED\n            float w = LOAD(wt[j]);\n"
    "            for (long long d = 0; d < WIDTH; d++)\n"
    "                acc[d] += w * LOAD(row[d]);\n"
    "#else\n            for (long long d = 0; d < WIDTH; d++)\n"
    "                acc[d] += LOAD(row[d]);\n#endif\n"
    "        }\n"
    "#if MEAN\n        if (hi > lo)\n            for (long long d = 0; d < WIDTH; d++)\n"
    "                acc[d] = acc[d] / (float)(hi - lo);\n#endif\n"
    "        elem_t res[WIDTH];\n"
    "        for (long long d = 0; d < WIDTH; d++)\n            res[d] = STORE(acc[d]);\n"
    "#if PROBE && defined(__AVX512F__) && ROW_BYTES % 64 == 0\n"
    "        for (long long c = 0; c < ROW_BYTES; c += 64)\n"
    "            _mm512_stream_si512((void *)((char *)(out + b * WIDTH) + c),\n"
    "                                _mm512_loadu_si512((const char *)res + c));\n"
    "#elif PROBE && defined(__SSE2__) && ROW_BYTES % 16 == 0\n"
    "        for (long long c = 0; c < ROW_BYTES; c += 16)\n"
    "            _mm_stream_si128((__m128i *)((char *)(out + b * WIDTH) + c),\n"
    "                             _mm_loadu_si128((const __m128i *)((const char *)res + c)));\n"
    "#else\n        memcpy(out + b * WIDTH, res, sizeof res);\n#endif\n"
    "    }\n"
    "#if PROBE && defined(__SSE2__)\n    _mm_sfence();\n#endif\n"
    "    return 0;\n}\n";

static void tj_emit_variant(FILE *f, const char *prefix, const char *id, int prefetch,
                            int probe, int range)
{
    fprintf(f, "#define KNAME %s_%s\n#define PREFETCH %d\n#define PROBE %d\n#define RANGE %d\n",
            prefix, id, prefetch, probe, range);
    fprintf(f, "#define DIST %s\n#define LOCALITY %d\n", probe ? "dist" : "16LL", probe ? 2 : 3);
    fputs(tj_bag_body, f);
    fprintf(f, "#undef KNAME\n#undef PREFETCH\n#undef PROBE\n#undef RANGE\n#undef DIST\n"
               "#undef LOCALITY\n\n");
}

static void tj_emit_workload(FILE *f, const tj_bag_workload *w, int64_t n)
{
    int64_t elem = w->bf16 ? 2 : 4;
    fprintf(f, "#define ROWS %lldULL\n#define WIDTH %lldLL\n#define BAGS %lldLL\n"
               "#define N %lldLL\n#define LEN %lldLL\n#define ROW_BYTES %lldLL\n",
            (long long)w->rows, (long long)w->width, (long long)w->bags, (long long)n,
            (long long)w->length, (long long)(w->width * elem));
    fprintf(f, "#define idx_t %s\n#define elem_t %s\n#define LOAD %s\n#define STORE %s\n",
            w->index_size == 4 ? "int32_t" : "int64_t", w->bf16 ? "uint16_t" : "float",
            w->bf16 ? "tj_bf16" : "tj_f32", w->bf16 ? "tj_to_bf16" : "tj_to_f32");
    fprintf(f, "#define PACKED %d\n#define WEIGHTED %d\n#define MEAN %d\n\n", w->packed,
            w->weighted, w->mean);
    tj_emit_variant(f, "static", w->id, 0, 0, 0);
    tj_emit_variant(f, "prefetch", w->id, 1, 0, 0);
    tj_emit_variant(f, "probe", w->id, 1, 1, 0);
    tj_emit_variant(f, "probe_range", w->id, 1, 1, 1);
    fprintf(f, "#undef ROWS\n#undef WIDTH\n#undef BAGS\n#undef N\n#undef LEN\n#undef ROW_BYTES\n"
               "#undef idx_t\n#undef elem_t\n#undef LOAD\n#undef STORE\n#undef PACKED\n"
               "#undef WEIGHTED\n#undef MEAN\n\n");
}

typedef struct tj_bag_static_set {
    const tj_bag_workload *const *ws;
    const int64_t *ns;
    int count;
} tj_bag_static_set;

static void tj_emit_all(FILE *f, const void *arg)
{
    const tj_bag_static_set *set = arg;
    fputs(tj_bag_prelude, f);
    for (int i = 0; i < set->count; i++)
        tj_emit_workload(f, set->ws[i], set->ns[i]);
}

int tj_bag_static_build(const tj_bag_workload *const *ws, const int64_t *ns, int count,
                        void **handle, char *why, size_t len)
{
    tj_bag_static_set set = {ws, ns, count};
    return tj_bench_cc_load("bags", "-O3 -march=native -ffp-contract=off", tj_emit_all, &set,
                            handle, why, len);
}

void *tj_bag_static_find(void *handle, const char *prefix, const char *id)
{
    return tj_bench_cc_find(handle, prefix, id);
}

void tj_bag_static_close(void *handle)
{
    tj_bench_cc_close(handle);
}
