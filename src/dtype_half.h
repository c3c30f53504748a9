/*
 * The 16-bit floating dtypes, held by the user as uint16_t bit patterns:
 *   FLOAT16   IEEE 754 binary16: sign, 5 exponent bits (bias 15), 10 fraction bits
 *   BFLOAT16  the upper 16 bits of a binary32: sign, 8 exponent bits (bias 127), 7 fraction bits
 * No compiler half type (_Float16, __fp16) is used: the conversions below work on the binary32
 * encoding with integer operations (and, for subnormals, one float addition or subtraction
 * each). To float they are exact; from float they round to nearest, ties to even, overflow to
 * infinity and keep NaNs NaN (their payload's top bits kept, so every 16-bit pattern goes to
 * float and back unchanged).
 */
#ifndef UCOLL_DTYPE_HALF_H
#define UCOLL_DTYPE_HALF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof(u));
    return u;
}

static inline float f32_from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof(f));
    return f;
}

/* Written without branches (mask selects) so that the kernels' loops vectorise; GCC does not
 * if-convert ?: chains around float operations. The two float operations below are exact or
 * rounded as intended under the default rounding mode (to nearest, ties to even), the one
 * ucoll assumes throughout. */
static inline uint32_t select_u32(int cond, uint32_t a, uint32_t b)
{
    const uint32_t m = 0u - (uint32_t)(cond != 0);
    return (a & m) | (b & ~m);
}

static inline float half_to_float(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    const uint32_t em = h & 0x7fffu; /* exponent and fraction */
    const uint32_t shifted = em << 13;
    const uint32_t normal = shifted + ((uint32_t)(127 - 15) << 23);  /* rebias 15 -> 127 */
    const uint32_t special = shifted + ((uint32_t)(255 - 31) << 23); /* infinity and NaNs */
    /* zero and subnormals, em * 2^-24: (2^-14 + em * 2^-24) - 2^-14, both steps exact */
    const uint32_t tiny = f32_bits(f32_from_bits(shifted + (113u << 23)) - 0x1p-14f);
    const uint32_t out =
        select_u32(em >= 0x7c00u, special, select_u32(em >= 0x0400u, normal, tiny));
    return f32_from_bits(sign | out);
}

static inline uint16_t float_to_half(float f)
{
    const uint32_t x = f32_bits(f);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t ax = x & 0x7fffffffu;
    /* normal results: round away the 13 low fraction bits (ties to even), rebias; a carry
     * into the exponent is the correct rounding up */
    const uint32_t normal = (ax + 0xfffu + ((ax >> 13) & 1u) - ((uint32_t)(127 - 15) << 23)) >> 13;
    /* below 2^-14: |f| + 0.5 is |f| rounded to a multiple of 2^-24 (the spacing of floats in
     * [0.5, 1)); its fraction bits are the subnormal's, 1024 (the smallest normal) included */
    const uint32_t tiny = f32_bits(f32_from_bits(ax) + 0.5f) - f32_bits(0.5f);
    /* NaNs keep the top 10 payload bits, made non-zero if they all are 0 */
    const uint32_t payload = (ax >> 13) & 0x3ffu;
    const uint32_t nan = 0x7c00u | select_u32(payload != 0, payload, 0x200u);
    uint32_t out = select_u32(ax >= 0x38800000u, normal, tiny);
    out = select_u32(ax >= 0x477ff000u, 0x7c00u, out); /* >= 65520: halfway to 2^16, or more */
    out = select_u32(ax > 0x7f800000u, nan, out);
    return (uint16_t)(sign | out);
}

static inline float bf16_to_float(uint16_t b)
{
    return f32_from_bits((uint32_t)b << 16);
}

static inline uint16_t float_to_bf16(float f)
{
    const uint32_t x = f32_bits(f);
    /* round away the 16 low bits, ties to even; a carry may reach the exponent, and from the
     * largest finite value on to infinity, both correct */
    const uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
    /* NaNs keep their top payload bits, made non-zero if they all are 0 */
    const uint32_t nan = (x >> 16) | select_u32((x & 0x007f0000u) != 0, 0, 0x0040u);
    return (uint16_t)select_u32((x & 0x7fffffffu) > 0x7f800000u, nan, rounded);
}

/* inout[i] = in[i] (+) inout[i] on FLOAT16 (f16) and BFLOAT16 (bf16) elements; no alignment
 * needed, in and inout must not overlap (dtype.c's table of kernels) */
void half_sum_f16(const void *in, void *inout, size_t n);
void half_prod_f16(const void *in, void *inout, size_t n);
void half_min_f16(const void *in, void *inout, size_t n);
void half_max_f16(const void *in, void *inout, size_t n);
void half_sum_bf16(const void *in, void *inout, size_t n);
void half_prod_bf16(const void *in, void *inout, size_t n);
void half_min_bf16(const void *in, void *inout, size_t n);
void half_max_bf16(const void *in, void *inout, size_t n);
/* buf[i] = buf[i] / divisor, rounded once to the type (AVG's final step) */
void half_div_f16(void *buf, size_t n, unsigned divisor);
void half_div_bf16(void *buf, size_t n, unsigned divisor);

#endif
