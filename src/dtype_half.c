/*
 * (+) kernels of the 16-bit floating dtypes (dtype_half.h), and AVG's final division.
 *
 * Each element is converted to float (exactly), combined there, and rounded back once, to
 * nearest, ties to even. Float carries 24 significand bits, at least 2p + 2 for binary16
 * (p = 11) and bfloat16 (p = 8), so rounding the float result again to 16 bits gives the same
 * value as rounding the exact one (the double rounding is innocuous): SUM, PROD and the
 * division are correctly rounded. The guarantees, with u = 2^-11 (FLOAT16), 2^-8 (BFLOAT16):
 *   SUM, PROD  one application: |result - exact| <= u * |exact| while the exact value lies in
 *              the normal range; below it the error is at most half the smallest subnormal
 *              (2^-25, 2^-134); beyond the largest finite value (65504, about 3.39e38) the
 *              result is +-infinity from halfway to the next power of two on.
 *   MIN, MAX   exact: the result is one of the operands, bit for bit (plain comparison as for
 *              float32: a NaN in inout is kept, one in `in` ignored, of -0 and +0 inout wins).
 *   DIV        AVG's buf[i] / p, as SUM.
 * A p-rank SUM (or AVG) applies (+) p - 1 times along a tree, so the computed sum S' of the
 * exact sum S of inputs x_r obeys |S' - S| <= gamma * sum |x_r| with gamma = (p-1)u/(1-(p-1)u)
 * (no overflow or underflow); AVG adds the rounding of S'/p: |avg - S/p| <= gamma * sum |x_r|
 * / p + u * |S'/p|.
 */
#include "dtype_half.h"

/* elements accessed through a type aligned to 1 byte: the user's buffers need no alignment */
typedef uint16_t __attribute__((aligned(1), may_alias)) u16_unaligned;

/* as dtype.c's kernels: GCC's vectoriser on these loops at -O2 (the conversions are
 * branch-free for it) */
#if defined(__GNUC__) && !defined(__clang__) && defined(__OPTIMIZE__)
#define HALF_ATTR __attribute__((optimize("tree-loop-vectorize", "vect-cost-model=dynamic")))
#else
#define HALF_ATTR
#endif

#define HALF_KERNEL(NAME, TO_FLOAT, FROM_FLOAT, EXPR)                                              \
    HALF_ATTR void NAME(const void *restrict vin, void *restrict vinout, size_t n)                 \
    {                                                                                              \
        const u16_unaligned *restrict in = vin;                                                    \
        u16_unaligned *restrict inout = vinout;                                                    \
        for (size_t i = 0; i < n; i++) {                                                           \
            const uint16_t ha = in[i], hb = inout[i];                                              \
            const float a = TO_FLOAT(ha), b = TO_FLOAT(hb);                                        \
            inout[i] = (EXPR);                                                                     \
        }                                                                                          \
    }

/* MIN and MAX pick an operand's bits: no rounding, NaN payloads and zero signs as they were */
#define HALF_KERNELS(SUF, TO_FLOAT, FROM_FLOAT)                                                    \
    HALF_KERNEL(half_sum_##SUF, TO_FLOAT, FROM_FLOAT, FROM_FLOAT(a + b))                           \
    HALF_KERNEL(half_prod_##SUF, TO_FLOAT, FROM_FLOAT, FROM_FLOAT(a *b))                           \
    HALF_KERNEL(half_min_##SUF, TO_FLOAT, FROM_FLOAT, a < b ? ha : hb)                             \
    HALF_KERNEL(half_max_##SUF, TO_FLOAT, FROM_FLOAT, a > b ? ha : hb)                             \
    HALF_ATTR void half_div_##SUF(void *vbuf, size_t n, unsigned divisor)                          \
    {                                                                                              \
        u16_unaligned *buf = vbuf;                                                                 \
        const float d = (float)divisor; /* exact: a comm size is far below 2^24 */                 \
        for (size_t i = 0; i < n; i++)                                                             \
            buf[i] = FROM_FLOAT(TO_FLOAT(buf[i]) / d);                                             \
    }

HALF_KERNELS(f16, half_to_float, float_to_half)
HALF_KERNELS(bf16, bf16_to_float, float_to_bf16)
