/* IEEE half and bfloat16 <-> float, round to nearest even: the reductions'
 * arithmetic on f16 and bf16 (through f32), and the CLI's and the tests'
 * printing and writing of such tensors (header-only, so they include it
 * from here). A NaN in f16 becomes the quiet NaN of its sign; in bf16 it keeps
 * its sign and payload, with the quiet bit set. */
#ifndef TJ_HALF_H
#define TJ_HALF_H

#include <stdint.h>
#include <string.h>

static inline float tj_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    if (exp == 0x1f)
        bits = sign | 0x7f800000 | (man << 13);
    else if (exp)
        bits = sign | ((exp + 112) << 23) | (man << 13);
    else if (!man)
        bits = sign;
    else {
        exp = 113;
        while (!(man & 0x400)) {
            man <<= 1;
            exp--;
        }
        bits = sign | (exp << 23) | ((man & 0x3ff) << 13);
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static inline uint16_t tj_float_to_half(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    uint32_t absx = x & 0x7fffffff;
    if (absx >= 0x7f800000) /* inf or nan */
        return sign | 0x7c00 | (absx > 0x7f800000 ? 0x200 : 0);
    if (absx >= 0x477ff000) /* rounds to >= 65520: overflow to inf */
        return sign | 0x7c00;
    if (absx < 0x38800000) { /* subnormal half: round(|f| * 2^24) to even, in integers */
        uint32_t e = absx >> 23, m = (absx & 0x7fffff) | 0x800000, s = 126 - e;
        if (e == 0 || s > 24) /* below half the smallest subnormal */
            return sign;
        uint32_t q = m >> s, rem = m & ((1u << s) - 1), half = 1u << (s - 1);
        q += rem > half || (rem == half && (q & 1));
        return sign | (uint16_t)q;
    }
    uint32_t r = absx + 0xfff + ((absx >> 13) & 1) - 0x38000000;
    return sign | (uint16_t)(r >> 13);
}

static inline float tj_bf16_to_float(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static inline uint16_t tj_float_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    if ((x & 0x7fffffff) > 0x7f800000)
        return (uint16_t)((x >> 16) | 0x40);
    return (uint16_t)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

#endif
