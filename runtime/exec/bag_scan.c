/*
 * The check pass of a bag's JIT kernel, here rather than in its IR: the
 * same loop for every signature, so it costs no kernel any code
 * generation. Emitted per kernel it was about a fifth of E1's compile
 * (docs/performance.md, 'Compile time of a bag kernel'); here it runs at
 * the speed of memory like the kernel's own loop did. Each check is a
 * reduction with no early exit before its last vector: the unsigned
 * maximum of (value + add), wrapped to the element's width, against a
 * bound (a value out of its range wraps above it; AVX2's 64-bit lanes,
 * which have no unsigned maximum, compare each vector with the bound
 * instead), and for offsets whether one is less than the one before.
 * Whoever finds something asks bag_check.c to name it.
 */
#include "bag_scan.h"
#include "parts.h"

#include <string.h>


#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TJ_SCAN_X86 1
#include <immintrin.h>
#endif

/* ---- one element at a time: the tails, and hosts without AVX2 --------- */

static uint64_t tj_scan_load(const unsigned char *p, int64_t i, int wide)
{
    if (wide) {
        uint64_t v;
        memcpy(&v, p + 8 * i, 8);
        return v;
    }
    uint32_t v;
    memcpy(&v, p + 4 * i, 4);
    return v;
}

/* the largest (p[i] + add) mod 2^bits over [from, n) */
static uint64_t tj_scan_max_tail(const unsigned char *p, int64_t from, int64_t n, int wide,
                                 uint64_t add, uint64_t most)
{
    for (int64_t i = from; i < n; i++) {
        uint64_t v = tj_scan_load(p, i, wide) + add;
        if (!wide)
            v = (uint32_t)v;
        most = v > most ? v : most;
    }
    return most;
}

/* some p[i] < p[i - 1] (signed), i in [from, n), from >= 1 */
static int tj_scan_drops_tail(const unsigned char *p, int64_t from, int64_t n, int wide)
{
    int drop = 0;
    for (int64_t i = from; i < n; i++) {
        uint64_t a = tj_scan_load(p, i - 1, wide), b = tj_scan_load(p, i, wide);
        drop |= wide ? (int64_t)b < (int64_t)a : (int32_t)b < (int32_t)a;
    }
    return drop;
}

#ifdef TJ_SCAN_X86
/* ---- AVX-512: 64 bytes a load ------------------------------------------ */

__attribute__((target("avx512f"))) static uint64_t
tj_scan_max_avx512(const unsigned char *p, int64_t n, int wide, uint64_t add, int64_t *done)
{
    int64_t lanes = wide ? 8 : 16, i = 0;
    __m512i m0 = _mm512_setzero_si512(), m1 = m0;
    if (wide) {
        __m512i a = _mm512_set1_epi64((long long)add);
        for (; i + 16 <= n; i += 16) {
            m0 = _mm512_max_epu64(m0, _mm512_add_epi64(_mm512_loadu_si512(p + 8 * i), a));
            m1 = _mm512_max_epu64(m1, _mm512_add_epi64(_mm512_loadu_si512(p + 8 * i + 64), a));
        }
        for (; i + lanes <= n; i += lanes)
            m0 = _mm512_max_epu64(m0, _mm512_add_epi64(_mm512_loadu_si512(p + 8 * i), a));
        *done = i;
        return _mm512_reduce_max_epu64(_mm512_max_epu64(m0, m1));
    }
    __m512i a = _mm512_set1_epi32((int)(uint32_t)add);
    for (; i + 32 <= n; i += 32) {
        m0 = _mm512_max_epu32(m0, _mm512_add_epi32(_mm512_loadu_si512(p + 4 * i), a));
        m1 = _mm512_max_epu32(m1, _mm512_add_epi32(_mm512_loadu_si512(p + 4 * i + 64), a));
    }
    for (; i + lanes <= n; i += lanes)
        m0 = _mm512_max_epu32(m0, _mm512_add_epi32(_mm512_loadu_si512(p + 4 * i), a));
    *done = i;
    return _mm512_reduce_max_epu32(_mm512_max_epu32(m0, m1));
}

__attribute__((target("avx512f"))) static int tj_scan_drops_avx512(const unsigned char *p,
                                                                   int64_t n, int wide,
                                                                   int64_t *done)
{
    int64_t size = wide ? 8 : 4, lanes = 64 / size, i = 1;
    unsigned drop = 0;
    for (; i + lanes <= n; i += lanes) {
        __m512i now = _mm512_loadu_si512(p + size * i);
        __m512i before = _mm512_loadu_si512(p + size * (i - 1));
        drop |= wide ? _mm512_cmplt_epi64_mask(now, before) : _mm512_cmplt_epi32_mask(now, before);
    }
    *done = i;
    return drop != 0;
}

/* ---- AVX2: 32 bytes a load; no unsigned 64-bit maximum, so a compare of
 * values moved by 2^63 (signed order) against the bound -------------------- */

__attribute__((target("avx2"))) static int tj_scan_above64_avx2(const unsigned char *p,
                                                                int64_t n, uint64_t add,
                                                                uint64_t bound, int64_t *done)
{
    const uint64_t flip = (uint64_t)1 << 63;
    __m256i a = _mm256_set1_epi64x((long long)(add ^ flip)); /* (v + add) ^ flip */
    __m256i top = _mm256_set1_epi64x((long long)((bound - 1) ^ flip));
    __m256i bad = _mm256_setzero_si256();
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        __m256i v = _mm256_add_epi64(_mm256_loadu_si256((const __m256i *)(p + 8 * i)), a);
        bad = _mm256_or_si256(bad, _mm256_cmpgt_epi64(v, top));
    }
    *done = i;
    return !_mm256_testz_si256(bad, bad);
}

__attribute__((target("avx2"))) static uint64_t tj_scan_max32_avx2(const unsigned char *p,
                                                                   int64_t n, uint64_t add,
                                                                   int64_t *done)
{
    __m256i a = _mm256_set1_epi32((int)(uint32_t)add), m = _mm256_setzero_si256();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        m = _mm256_max_epu32(m, _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(p + 4 * i)),
                                                 a));
    *done = i;
    uint32_t lane[8];
    _mm256_storeu_si256((__m256i *)lane, m);
    uint32_t most = 0;
    for (int j = 0; j < 8; j++)
        most = lane[j] > most ? lane[j] : most;
    return most;
}

__attribute__((target("avx2"))) static int tj_scan_drops_avx2(const unsigned char *p, int64_t n,
                                                              int wide, int64_t *done)
{
    int64_t size = wide ? 8 : 4, lanes = 32 / size, i = 1;
    __m256i drop = _mm256_setzero_si256();
    for (; i + lanes <= n; i += lanes) {
        __m256i now = _mm256_loadu_si256((const __m256i *)(p + size * i));
        __m256i before = _mm256_loadu_si256((const __m256i *)(p + size * (i - 1)));
        drop = _mm256_or_si256(drop, wide ? _mm256_cmpgt_epi64(before, now)
                                          : _mm256_cmpgt_epi32(before, now));
    }
    *done = i;
    return !_mm256_testz_si256(drop, drop);
}
#endif

/* ---- the level of instructions in use ----------------------------------- */

static int tj_scan_host_level(void)
{
#ifdef TJ_SCAN_X86
    if (__builtin_cpu_supports("avx512f"))
        return 2;
    if (__builtin_cpu_supports("avx2"))
        return 1;
#endif
    return 0;
}

static int tj_scan_level_now = -1; /* -1: not read yet; atomic */

#ifdef TJ_SCAN_X86 /* only the vector scans ask */
static int tj_scan_level(void)
{
    int level = __atomic_load_n(&tj_scan_level_now, __ATOMIC_RELAXED);
    if (level < 0) {
        level = tj_scan_host_level();
        __atomic_store_n(&tj_scan_level_now, level, __ATOMIC_RELAXED);
    }
    return level;
}
#endif

int tj_bag_scan_level(int most)
{
    int host = tj_scan_host_level();
    int level = most < 0 || most > host ? host : most;
    __atomic_store_n(&tj_scan_level_now, level, __ATOMIC_RELAXED);
    return level;
}

/* ---- the checks ---------------------------------------------------------- */

/* some (p[i] + add) mod 2^bits >= bound, i in [0, n) (bits: 64 if wide,
 * else 32; bound 0: any element) */
static int tj_scan_above(const unsigned char *p, int64_t n, int wide, uint64_t add,
                         uint64_t bound)
{
    if (n <= 0)
        return 0;
    if (bound == 0)
        return 1;
    if (!wide && bound > UINT32_MAX)
        return 0;
    int64_t done = 0;
    uint64_t most = 0;
#ifdef TJ_SCAN_X86
    int level = tj_scan_level();
    if (level == 2)
        most = tj_scan_max_avx512(p, n, wide, add, &done);
    else if (level == 1 && wide && tj_scan_above64_avx2(p, n, add, bound, &done))
        return 1;
    else if (level == 1 && !wide)
        most = tj_scan_max32_avx2(p, n, add, &done);
#endif
    return tj_scan_max_tail(p, done, n, wide, add, most) >= bound;
}

/* some p[i] < p[i - 1] (signed), i in [1, n) */
static int tj_scan_drops(const unsigned char *p, int64_t n, int wide)
{
    int64_t done = 1;
#ifdef TJ_SCAN_X86
    int level = tj_scan_level();
    if (level == 2 && tj_scan_drops_avx512(p, n, wide, &done))
        return 1;
    if (level == 1 && tj_scan_drops_avx2(p, n, wide, &done))
        return 1;
#endif
    return tj_scan_drops_tail(p, done, n, wide);
}

/* The bound of a value range [0, count) as an unsigned compare of the
 * element: i32 values are below 2^31 whatever the count. */
static uint64_t tj_scan_bound(int64_t count, int wide)
{
    const int64_t i32_values = (int64_t)1 << 31;
    return (uint64_t)(wide || count < i32_values ? count : i32_values);
}

/* An offset read as a position in [0, N]: after the whole scan's check it
 * is one already; in a part, one out of it is found by the part whose
 * slice holds it, and is only kept from leading a read out of the indices
 * here. */
static int64_t tj_scan_offset_at(const unsigned char *o, int64_t i, int wide, int64_t lookups)
{
    uint64_t raw = tj_scan_load(o, i, wide);
    int64_t v = wide ? (int64_t)raw : (int64_t)(int32_t)raw;
    return v < 0 ? 0 : v > lookups ? lookups : v;
}

/* Offsets each in [0, N] and non-decreasing, then [*first, *end): the
 * indices bags read (none without bags). 1: an offset is bad. */
static int tj_scan_offsets(const unsigned char *o, int64_t len, int64_t lookups, int64_t bags,
                           int64_t flags, int64_t *first, int64_t *end)
{
    int wide = (flags & TJ_SCAN_I64) != 0;
    *first = *end = 0;
    if (len <= 0)
        return 0;
    if (tj_scan_above(o, len, wide, 0, tj_scan_bound(lookups + 1, wide)) ||
        tj_scan_drops(o, len, wide))
        return 1;
    if (bags == 0)
        return 0;
    *first = tj_scan_offset_at(o, 0, wide, lookups);
    *end = flags & TJ_SCAN_LAST_OFFSET ? tj_scan_offset_at(o, len - 1, wide, lookups) : lookups;
    return 0;
}

/* Indices [first, end) under the policy of flags: 1 when one is bad. */
static int tj_scan_indices(const void *indices, int64_t first, int64_t end, int64_t rows,
                           int64_t flags)
{
    int wide = (flags & TJ_SCAN_I64) != 0;
    if (first >= end)
        return 0;
    const unsigned char *at = (const unsigned char *)indices + (wide ? 8 : 4) * first;
    if (flags & TJ_SCAN_CLAMP)
        return rows == 0;
    if (flags & TJ_SCAN_ERROR)
        return tj_scan_above(at, end - first, wide, 0, tj_scan_bound(rows, wide));
    if (flags & TJ_SCAN_WRAPS) { /* v + E in [0, 2E); no i32 is out of [-E, E) past 2^31 */
        if (!wide && rows >= ((int64_t)1 << 31))
            return 0;
        return tj_scan_above(at, end - first, wide, (uint64_t)rows, 2 * (uint64_t)rows);
    }
    return 0;
}

int tj_rt_bag_scan(const void *indices, const void *offsets, int64_t offsets_len,
                   int64_t lookups, int64_t rows, int64_t bags, int64_t flags)
{
    int wide = (flags & TJ_SCAN_I64) != 0;
    int64_t first = 0, end = lookups;
    if ((flags & TJ_SCAN_OFFSETS) &&
        tj_scan_offsets(offsets, offsets_len, lookups, bags, flags, &first, &end))
        return 1;
    if ((flags & TJ_SCAN_SEGMENTS) &&
        tj_scan_above(offsets, offsets_len, wide, 0, tj_scan_bound(bags, wide)))
        return 1;
    return tj_scan_indices(indices, first, end, rows, flags);
}

/* The offsets' slice of part/parts: each in [0, N], none below the one
 * before it (the first compared with the slice before's last); then the
 * bags' reach [*first, *end), as the whole scan takes it. */
static int tj_scan_offsets_part(const unsigned char *o, int64_t len, int64_t lookups,
                                int64_t bags, int64_t flags, int64_t part, int64_t parts,
                                int64_t *first, int64_t *end)
{
    int wide = (flags & TJ_SCAN_I64) != 0, size = wide ? 8 : 4;
    int64_t b, e;
    tj_part_bounds(len, part, parts, &b, &e);
    int64_t from = b > 0 ? b - 1 : 0;
    if (b < e && (tj_scan_above(o + size * b, e - b, wide, 0, tj_scan_bound(lookups + 1, wide)) ||
                  tj_scan_drops(o + size * from, e - from, wide)))
        return 1;
    *first = *end = 0;
    if (len <= 0 || bags == 0)
        return 0;
    *first = tj_scan_offset_at(o, 0, wide, lookups);
    *end = flags & TJ_SCAN_LAST_OFFSET ? tj_scan_offset_at(o, len - 1, wide, lookups) : lookups;
    return 0;
}

int tj_bag_scan_plan_part(const tj_bag_plan *g, const void *indices, const void *offsets,
                          int64_t part, int64_t parts)
{
    int64_t flags = tj_bag_scan_flags(g);
    if (!flags)
        return 0;
    int wide = (flags & TJ_SCAN_I64) != 0;
    int64_t first = 0, end = g->lookups, b, e;
    if ((flags & TJ_SCAN_OFFSETS) &&
        tj_scan_offsets_part(offsets, g->offsets_len, g->lookups, g->bags, flags, part, parts,
                             &first, &end))
        return 1;
    if (flags & TJ_SCAN_SEGMENTS) { /* one id per index: the indices' slice */
        tj_part_bounds(g->lookups, part, parts, &b, &e);
        const unsigned char *ids = offsets;
        if (b < e &&
            tj_scan_above(ids + (wide ? 8 : 4) * b, e - b, wide, 0, tj_scan_bound(g->bags, wide)))
            return 1;
    }
    if (first >= end)
        return 0;
    tj_part_bounds(end - first, part, parts, &b, &e);
    return tj_scan_indices(indices, first + b, first + e, g->rows, flags);
}

int tj_bag_scan_plan(const tj_bag_plan *g, const void *indices, const void *offsets)
{
    int64_t flags = tj_bag_scan_flags(g);
    if (!flags)
        return 0;
    /* a segments kernel's ids are its offsets buffer, one per index */
    int64_t offsets_len = g->form == TJ_BAG_OFFSETS    ? g->offsets_len
                          : g->form == TJ_BAG_SEGMENTS ? g->lookups
                                                       : 0;
    return tj_rt_bag_scan(indices, offsets, offsets_len, g->lookups, g->rows, g->bags, flags);
}

int64_t tj_bag_scan_flags(const tj_bag_plan *g)
{
    int64_t f = g->form == TJ_BAG_OFFSETS    ? TJ_SCAN_OFFSETS
                : g->form == TJ_BAG_SEGMENTS ? TJ_SCAN_SEGMENTS
                                             : 0;
    if (g->policy == JIT_INDEX_CLAMP)
        f |= TJ_SCAN_CLAMP;
    else if (g->policy == JIT_INDEX_NEGATIVE_WRAPS)
        f |= TJ_SCAN_WRAPS;
    else if (!tj_policy_fills(g->policy))
        f |= TJ_SCAN_ERROR;
    if (!f)
        return 0;
    if (g->include_last_offset)
        f |= TJ_SCAN_LAST_OFFSET;
    return g->index_type == JIT_I64 ? f | TJ_SCAN_I64 : f;
}
