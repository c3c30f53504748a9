/*
 * Unit tests (Check) of the datatypes and (+) kernels of src/dtype.c: every dtype x op kernel
 * against a reference computed here from first principles, the invalid combinations, unknown
 * dtypes and ops, count 0, user-defined ops (create/apply/free, commutativity, exhaustion of
 * the table) and the name tables. The 16-bit floating types (src/dtype_half.c): conversions
 * exhaustively and at every rounding tie, kernels against exact double results (correct
 * rounding and the stated error bound), AVG's division.
 */
#include "dtype.h"
#include "dtype_half.h"

#include <check.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 1000     /* elements per array */
#define GUARD 4    /* untouched elements before and after the applied region */
#define ELEM_MAX 8 /* largest element size */

/* -------------------------------------------------------------------------------------------
 * the dtypes as the test knows them, independently of dtype.c
 */

static const struct {
    const char *name;
    int width; /* bits */
    int is_signed;
    int is_float;
} T[UCOLL_NDTYPES] = {
    [UCOLL_INT8] = {"int8", 8, 1, 0},        [UCOLL_UINT8] = {"uint8", 8, 0, 0},
    [UCOLL_INT16] = {"int16", 16, 1, 0},     [UCOLL_UINT16] = {"uint16", 16, 0, 0},
    [UCOLL_INT32] = {"int32", 32, 1, 0},     [UCOLL_UINT32] = {"uint32", 32, 0, 0},
    [UCOLL_INT64] = {"int64", 64, 1, 0},     [UCOLL_UINT64] = {"uint64", 64, 0, 0},
    [UCOLL_FLOAT32] = {"float32", 32, 1, 1}, [UCOLL_FLOAT64] = {"float64", 64, 1, 1},
    [UCOLL_FLOAT16] = {"float16", 16, 1, 1}, [UCOLL_BFLOAT16] = {"bfloat16", 16, 1, 1},
};
/* the dtypes before the 16-bit floating ones (test_kernel's generators know these) */
#define NDTYPES_WIDE (UCOLL_FLOAT64 + 1)

static const char *const OPNAME[UCOLL_NOPS] = {"sum",  "prod", "min", "max",  "land", "lor",
                                               "lxor", "band", "bor", "bxor", "avg"};

static int op_is_bit_or_logical(int op)
{
    return op >= UCOLL_OP_LAND && op <= UCOLL_OP_BXOR;
}

static int is_half(int d)
{
    return d == UCOLL_FLOAT16 || d == UCOLL_BFLOAT16;
}

/* the pairs the library rejects: bit/logical ops on floats, AVG on integers */
static int pair_invalid(int op, int d)
{
    return T[d].is_float ? op_is_bit_or_logical(op) : op == UCOLL_OP_AVG;
}

/* exact 16-bit encodings of small values (test_unaligned): v = m * 2^e with |m| < 2^7 */
static uint16_t half_exact_bits(int d, double v);

static uint64_t mask_of(int w)
{
    return w == 64 ? UINT64_MAX : ((uint64_t)1 << w) - 1;
}

/* the w-bit pattern `bits` read as a signed number */
static int64_t sext(uint64_t bits, int w)
{
    bits &= mask_of(w);
    if (w < 64 && ((bits >> (w - 1)) & 1))
        return -(int64_t)(mask_of(w) - bits) - 1;
    if (w == 64 && bits > (uint64_t)INT64_MAX)
        return -(int64_t)(UINT64_MAX - bits) - 1;
    return (int64_t)bits;
}

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* -------------------------------------------------------------------------------------------
 * integer values are carried as w-bit patterns in a uint64_t
 */

static void store_int(int d, void *buf, size_t i, uint64_t bits)
{
    int w = T[d].width;
    switch (d) {
    case UCOLL_INT8:
        ((int8_t *)buf)[i] = (int8_t)sext(bits, w);
        break;
    case UCOLL_UINT8:
        ((uint8_t *)buf)[i] = (uint8_t)bits;
        break;
    case UCOLL_INT16:
        ((int16_t *)buf)[i] = (int16_t)sext(bits, w);
        break;
    case UCOLL_UINT16:
        ((uint16_t *)buf)[i] = (uint16_t)bits;
        break;
    case UCOLL_INT32:
        ((int32_t *)buf)[i] = (int32_t)sext(bits, w);
        break;
    case UCOLL_UINT32:
        ((uint32_t *)buf)[i] = (uint32_t)bits;
        break;
    case UCOLL_INT64:
        ((int64_t *)buf)[i] = sext(bits, w);
        break;
    case UCOLL_UINT64:
        ((uint64_t *)buf)[i] = bits;
        break;
    default:
        ck_abort_msg("store_int(%d)", d);
    }
}

static uint64_t load_int(int d, const void *buf, size_t i)
{
    uint64_t m = mask_of(T[d].width);
    switch (d) {
    case UCOLL_INT8:
        return (uint64_t)((const int8_t *)buf)[i] & m;
    case UCOLL_UINT8:
        return ((const uint8_t *)buf)[i];
    case UCOLL_INT16:
        return (uint64_t)((const int16_t *)buf)[i] & m;
    case UCOLL_UINT16:
        return ((const uint16_t *)buf)[i];
    case UCOLL_INT32:
        return (uint64_t)((const int32_t *)buf)[i] & m;
    case UCOLL_UINT32:
        return ((const uint32_t *)buf)[i];
    case UCOLL_INT64:
        return (uint64_t)((const int64_t *)buf)[i];
    case UCOLL_UINT64:
        return ((const uint64_t *)buf)[i];
    default:
        ck_abort_msg("load_int(%d)", d);
    }
    return 0;
}

/* Integer values mixing the full range with zeros, small numbers and the extremes; the first
 * 64 pairs (kind of a, kind of b) = (i / 8, i % 8) cover every pair of kinds. */
static uint64_t gen_int(int d, uint64_t *rng, int kind)
{
    int w = T[d].width;
    uint64_t m = mask_of(w);
    uint64_t r = splitmix(rng);
    switch (kind) {
    case 0:
    case 1:
        return r & m; /* anything */
    case 2:
        return 0; /* zero */
    case 3:
        return (uint64_t)(int64_t)((int)(r % 9) - 4) & m; /* -4..4 (wraps if unsigned) */
    case 4:
        return T[d].is_signed ? (uint64_t)1 << (w - 1) : 0; /* MIN */
    case 5:
        return T[d].is_signed ? ((uint64_t)1 << (w - 1)) - 1 : m; /* MAX */
    case 6:
        return (r & 1) ? 1 : m; /* 1 or -1 */
    default:
        return ((uint64_t)1 << (r % (uint64_t)w)) & m; /* a power of 2 */
    }
}

/* the reference (+), straight from the definitions: a = in[i], b = inout[i] */
static uint64_t ref_int(int op, int d, uint64_t a, uint64_t b)
{
    int w = T[d].width;
    uint64_t m = mask_of(w);
    int64_t sa = sext(a, w), sb = sext(b, w);
    switch (op) {
    case UCOLL_OP_SUM:
        if (w == 64)
            return a + b; /* arithmetic modulo 2^64 */
        /* exact in 64 bits, then reduced modulo 2^w */
        return T[d].is_signed ? (uint64_t)(sa + sb) & m : (a + b) & m;
    case UCOLL_OP_PROD:
        if (w == 64)
            return a * b;
        /* |product| < 2^62 signed, < 2^64 unsigned: exact, then reduced modulo 2^w */
        return T[d].is_signed ? (uint64_t)(sa * sb) & m : (a * b) & m;
    case UCOLL_OP_MIN:
        if (T[d].is_signed)
            return sa <= sb ? a : b;
        return a <= b ? a : b;
    case UCOLL_OP_MAX:
        if (T[d].is_signed)
            return sa >= sb ? a : b;
        return a >= b ? a : b;
    case UCOLL_OP_LAND:
        return (a != 0 && b != 0) ? 1 : 0;
    case UCOLL_OP_LOR:
        return (a != 0 || b != 0) ? 1 : 0;
    case UCOLL_OP_LXOR:
        return ((a != 0) != (b != 0)) ? 1 : 0;
    case UCOLL_OP_BAND:
        return a & b;
    case UCOLL_OP_BOR:
        return a | b;
    case UCOLL_OP_BXOR:
        return a ^ b;
    }
    ck_abort_msg("ref_int(%d)", op);
    return 0;
}

/* -------------------------------------------------------------------------------------------
 * floats are carried as doubles (every generated float32 value is exactly representable)
 */

static void store_flt(int d, void *buf, size_t i, double v)
{
    if (is_half(d))
        ((uint16_t *)buf)[i] = half_exact_bits(d, v);
    else if (d == UCOLL_FLOAT32)
        ((float *)buf)[i] = (float)v;
    else
        ((double *)buf)[i] = v;
}

static double load_flt(int d, const void *buf, size_t i)
{
    return d == UCOLL_FLOAT32 ? (double)((const float *)buf)[i] : ((const double *)buf)[i];
}

/* small integers, quarters, signed zeros, +-1, the largest and smallest normal numbers and
 * infinities: every sum and product is exact, overflows to infinity, underflows to zero or
 * is a NaN whatever the evaluation precision, so results can be compared exactly */
static double gen_flt(int d, uint64_t *rng, int kind)
{
    uint64_t r = splitmix(rng);
    double sign = (r & 1) ? -1.0 : 1.0;
    r >>= 1;
    switch (kind) {
    case 0:
        return (double)((int)(r % 201) - 100);
    case 1:
        return (double)((int)(r % 801) - 400) / 4.0;
    case 2:
        return 0.0;
    case 3:
        return -0.0;
    case 4:
        return sign;
    case 5:
        return sign * (d == UCOLL_FLOAT32 ? (double)FLT_MAX : DBL_MAX);
    case 6:
        return sign * INFINITY;
    default:
        return sign * (d == UCOLL_FLOAT32 ? (double)FLT_MIN : DBL_MIN);
    }
}

static double ref_f64(int op, double a, double b)
{
    switch (op) {
    case UCOLL_OP_SUM:
    case UCOLL_OP_AVG: /* its (+) is the sum; the division is op_finish's */
        return a + b;
    case UCOLL_OP_PROD:
        return a * b;
    case UCOLL_OP_MIN:
        return a < b ? a : b; /* documented: plain comparison, ties -> inout */
    case UCOLL_OP_MAX:
        return a > b ? a : b;
    }
    ck_abort_msg("ref_f64(%d)", op);
    return 0;
}

static float ref_f32(int op, float a, float b)
{
    volatile float r; /* rounded to float whatever FLT_EVAL_METHOD is */
    switch (op) {
    case UCOLL_OP_SUM:
    case UCOLL_OP_AVG:
        r = a + b;
        return r;
    case UCOLL_OP_PROD:
        r = a * b;
        return r;
    case UCOLL_OP_MIN:
        return a < b ? a : b;
    case UCOLL_OP_MAX:
        return a > b ? a : b;
    }
    ck_abort_msg("ref_f32(%d)", op);
    return 0;
}

static int same_flt(double x, double y)
{
    if (isnan(x) || isnan(y))
        return isnan(x) && isnan(y);
    return x == y && !signbit(x) == !signbit(y);
}

/* -------------------------------------------------------------------------------------------
 * every dtype x op: loop test over _i = op * NDTYPES_WIDE + dtype (the 16-bit floating types
 * have tests of their own, below)
 */

static const size_t COUNTS[] = {0,  1,  2,  3,  5,  7,  8,  9,   15,  16,
                                17, 31, 32, 33, 63, 64, 65, 127, 997, N};

static void run_kernel(int op, int d, size_t start, size_t count, uint64_t seed)
{
    size_t sz = (size_t)T[d].width / 8;
    size_t total = N + 2 * GUARD;
    unsigned char *in = malloc(total * sz), *io = malloc(total * sz);
    unsigned char *in0 = malloc(total * sz), *io0 = malloc(total * sz);
    ck_assert_ptr_nonnull(in);
    ck_assert_ptr_nonnull(io);
    ck_assert_ptr_nonnull(in0);
    ck_assert_ptr_nonnull(io0);

    uint64_t rng = seed;
    for (size_t i = 0; i < total; i++) {
        size_t j = i >= start ? i - start : i;
        int ka = j < 64 ? (int)(j / 8) : (int)(splitmix(&rng) % 8);
        int kb = j < 64 ? (int)(j % 8) : (int)(splitmix(&rng) % 8);
        if (T[d].is_float) {
            store_flt(d, in, i, gen_flt(d, &rng, ka));
            store_flt(d, io, i, gen_flt(d, &rng, kb));
        } else {
            store_int(d, in, i, gen_int(d, &rng, ka));
            store_int(d, io, i, gen_int(d, &rng, kb));
        }
    }
    memcpy(in0, in, total * sz);
    memcpy(io0, io, total * sz);

    op_apply(op, (ucoll_dtype_t)d, in + start * sz, io + start * sz, count);

    ck_assert_msg(memcmp(in, in0, total * sz) == 0, "%s %s: `in` modified", OPNAME[op], T[d].name);
    for (size_t i = 0; i < total; i++) {
        int inside = i >= start && i < start + count;
        if (!inside) {
            ck_assert_msg(memcmp(io + i * sz, io0 + i * sz, sz) == 0,
                          "%s %s count %zu: element %zu outside the range modified", OPNAME[op],
                          T[d].name, count, i);
            continue;
        }
        if (T[d].is_float) {
            double a = load_flt(d, in0, i), b = load_flt(d, io0, i), got = load_flt(d, io, i);
            double want =
                d == UCOLL_FLOAT32 ? (double)ref_f32(op, (float)a, (float)b) : ref_f64(op, a, b);
            ck_assert_msg(same_flt(got, want), "%s %s [%zu]: %a (+) %a = %a, expected %a",
                          OPNAME[op], T[d].name, i, a, b, got, want);
        } else {
            uint64_t a = load_int(d, in0, i), b = load_int(d, io0, i), got = load_int(d, io, i);
            uint64_t want = ref_int(op, d, a, b);
            ck_assert_msg(got == want, "%s %s [%zu]: 0x%llx (+) 0x%llx = 0x%llx, expected 0x%llx",
                          OPNAME[op], T[d].name, i, (unsigned long long)a, (unsigned long long)b,
                          (unsigned long long)got, (unsigned long long)want);
        }
    }
    free(in);
    free(io);
    free(in0);
    free(io0);
}

/* op_apply_to(in, right, out) writes exactly what op_apply(in, copy of right) does, and leaves
 * its inputs alone: every valid pair, counts across its pieces, one element off alignment */
START_TEST(test_apply_to)
{
    const int op = _i / UCOLL_NDTYPES, d = _i % UCOLL_NDTYPES;
    if (op_check(op, (ucoll_dtype_t)d) != UCOLL_OK)
        return;
    const size_t esz = dtype_size((ucoll_dtype_t)d), counts[] = {0, 1, 7, 4097, 100003};
    for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
        enum { CAP = 100003 * 8 + 1 }; /* the most bytes a case needs */
        const size_t n = counts[c], bytes = CAP;
        ck_assert_uint_le(n * esz + 1, CAP);
        unsigned char *in = malloc(bytes), *right = malloc(bytes), *want = malloc(bytes),
                      *got = malloc(bytes), *in0 = malloc(bytes), *right0 = malloc(bytes);
        ck_assert(in && right && want && got && in0 && right0);
        uint64_t x = 88172645463325252ull + (uint64_t)_i * 31 + c;
        for (size_t b = 0; b < bytes; b++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            in[b] = (unsigned char)x;
            right[b] = (unsigned char)(x >> 8);
        }
        memcpy(in0, in, bytes);
        memcpy(right0, right, bytes);
        memcpy(want + 1, right + 1, n * esz);
        op_apply(op, (ucoll_dtype_t)d, in + 1, want + 1, n);
        memset(got, 0xEE, bytes);
        op_apply_to(op, (ucoll_dtype_t)d, in + 1, right + 1, got + 1, n);
        ck_assert_int_eq(got[0], 0xEE);
        ck_assert_mem_eq(got + 1, want + 1, n * esz);
        ck_assert_mem_eq(in, in0, bytes);
        ck_assert_mem_eq(right, right0, bytes);
        free(in), free(right), free(want), free(got), free(in0), free(right0);
    }
}
END_TEST

START_TEST(test_kernel)
{
    int op = _i / NDTYPES_WIDE, d = _i % NDTYPES_WIDE;
    if (pair_invalid(op, d)) {
        ck_assert_int_eq(op_check(op, (ucoll_dtype_t)d), UCOLL_ERR_INVALID_ARG);
        /* op_apply is only for checked pairs, but must still leave the buffer alone */
        double in[4] = {1, 2, 3, 4}, io[4] = {5, 6, 7, 8};
        op_apply(op, (ucoll_dtype_t)d, in, io, 4);
        ck_assert(io[0] == 5 && io[1] == 6 && io[2] == 7 && io[3] == 8);
        return;
    }
    ck_assert_int_eq(op_check(op, (ucoll_dtype_t)d), UCOLL_OK);
    for (size_t c = 0; c < sizeof(COUNTS) / sizeof(COUNTS[0]); c++) {
        /* start GUARD: aligned; GUARD - 1 (count <= N - 1): one element off the alignment */
        size_t count = COUNTS[c];
        run_kernel(op, d, GUARD, count, 1000u * (uint64_t)_i + c);
        if (count < N)
            run_kernel(op, d, GUARD - 1, count, 7777u * (uint64_t)_i + c);
    }
}
END_TEST

START_TEST(test_invalid_combinations)
{
    int invalid = 0;
    for (int op = 0; op < UCOLL_NOPS; op++) {
        for (int d = 0; d < UCOLL_NDTYPES; d++) {
            int want_invalid = pair_invalid(op, d);
            ucoll_status_t s = op_check(op, (ucoll_dtype_t)d);
            ck_assert_int_eq(s, want_invalid ? UCOLL_ERR_INVALID_ARG : UCOLL_OK);
            invalid += s == UCOLL_ERR_INVALID_ARG;
        }
    }
    /* LAND, LOR, LXOR, BAND, BOR, BXOR on FLOAT16, BFLOAT16, FLOAT32 and FLOAT64; AVG on the
     * 8 integer types */
    ck_assert_int_eq(invalid, 24 + 8);
}
END_TEST

/* -------------------------------------------------------------------------------------------
 * hand-computed cases: wrap-around and the documented NaN / signed zero behaviour, on 37
 * elements so that both the vector body and the scalar tail see them
 */

#define SPOT_N 37
#define SPOT(TYPE, DT, OP, A, B, R)                                                                \
    do {                                                                                           \
        TYPE in_[SPOT_N], io_[SPOT_N];                                                             \
        for (int k_ = 0; k_ < SPOT_N; k_++) {                                                      \
            in_[k_] = (TYPE)(A);                                                                   \
            io_[k_] = (TYPE)(B);                                                                   \
        }                                                                                          \
        op_apply(OP, DT, in_, io_, SPOT_N);                                                        \
        for (int k_ = 0; k_ < SPOT_N; k_++) {                                                      \
            ck_assert_msg(io_[k_] == (TYPE)(R), "%s %s(%s, %s) [%d] != %s", #TYPE, #OP, #A, #B,    \
                          k_, #R);                                                                 \
            ck_assert(in_[k_] == (TYPE)(A));                                                       \
        }                                                                                          \
    } while (0)

START_TEST(test_spot_integers)
{
    SPOT(int8_t, UCOLL_INT8, UCOLL_OP_SUM, 127, 1, -128);
    SPOT(int8_t, UCOLL_INT8, UCOLL_OP_SUM, -128, -1, 127);
    SPOT(int8_t, UCOLL_INT8, UCOLL_OP_PROD, -128, -1, -128);
    SPOT(int8_t, UCOLL_INT8, UCOLL_OP_PROD, 16, 16, 0);
    SPOT(int8_t, UCOLL_INT8, UCOLL_OP_PROD, 100, 3, 44);
    SPOT(int8_t, UCOLL_INT8, UCOLL_OP_PROD, -3, 5, -15);
    SPOT(int8_t, UCOLL_INT8, UCOLL_OP_MIN, -128, 127, -128);
    SPOT(int8_t, UCOLL_INT8, UCOLL_OP_MAX, -128, 127, 127);
    SPOT(int8_t, UCOLL_INT8, UCOLL_OP_MAX, -5, -7, -5);
    SPOT(int8_t, UCOLL_INT8, UCOLL_OP_LAND, 5, -3, 1);
    SPOT(int8_t, UCOLL_INT8, UCOLL_OP_LAND, 0, 7, 0);
    SPOT(int8_t, UCOLL_INT8, UCOLL_OP_LOR, 0, 0, 0);
    SPOT(int8_t, UCOLL_INT8, UCOLL_OP_LOR, 0, -128, 1);
    SPOT(int8_t, UCOLL_INT8, UCOLL_OP_LXOR, 3, -3, 0);
    SPOT(int8_t, UCOLL_INT8, UCOLL_OP_LXOR, 0, 9, 1);
    SPOT(int8_t, UCOLL_INT8, UCOLL_OP_BAND, 0x0f, -1, 0x0f);
    SPOT(int8_t, UCOLL_INT8, UCOLL_OP_BOR, 0x0f, 0x30, 0x3f);
    SPOT(int8_t, UCOLL_INT8, UCOLL_OP_BXOR, -1, 0x55, -86);

    SPOT(uint8_t, UCOLL_UINT8, UCOLL_OP_SUM, 255, 1, 0);
    SPOT(uint8_t, UCOLL_UINT8, UCOLL_OP_PROD, 200, 2, 144);
    SPOT(uint8_t, UCOLL_UINT8, UCOLL_OP_PROD, 255, 255, 1);
    SPOT(uint8_t, UCOLL_UINT8, UCOLL_OP_MIN, 0, 255, 0);
    SPOT(uint8_t, UCOLL_UINT8, UCOLL_OP_MAX, 128, 127, 128);
    SPOT(uint8_t, UCOLL_UINT8, UCOLL_OP_LXOR, 128, 1, 0);

    SPOT(int16_t, UCOLL_INT16, UCOLL_OP_SUM, 32767, 1, -32768);
    SPOT(int16_t, UCOLL_INT16, UCOLL_OP_PROD, 300, 300, 24464);
    SPOT(int16_t, UCOLL_INT16, UCOLL_OP_PROD, -32768, -1, -32768);
    SPOT(int16_t, UCOLL_INT16, UCOLL_OP_MIN, -1, 1, -1);

    /* 65535 * 65535 overflows int after the usual promotions: must be done unsigned */
    SPOT(uint16_t, UCOLL_UINT16, UCOLL_OP_PROD, 65535, 65535, 1);
    SPOT(uint16_t, UCOLL_UINT16, UCOLL_OP_SUM, 65535, 65535, 65534);
    SPOT(uint16_t, UCOLL_UINT16, UCOLL_OP_MAX, 65535, 0, 65535);

    SPOT(int32_t, UCOLL_INT32, UCOLL_OP_SUM, INT32_MAX, 1, INT32_MIN);
    SPOT(int32_t, UCOLL_INT32, UCOLL_OP_SUM, INT32_MIN, INT32_MIN, 0);
    SPOT(int32_t, UCOLL_INT32, UCOLL_OP_PROD, 65536, 65536, 0);
    SPOT(int32_t, UCOLL_INT32, UCOLL_OP_PROD, INT32_MIN, -1, INT32_MIN);
    SPOT(int32_t, UCOLL_INT32, UCOLL_OP_PROD, 46341, 46341, -2147479015);
    SPOT(int32_t, UCOLL_INT32, UCOLL_OP_MIN, INT32_MIN, INT32_MAX, INT32_MIN);

    SPOT(uint32_t, UCOLL_UINT32, UCOLL_OP_SUM, UINT32_MAX, 2, 1);
    SPOT(uint32_t, UCOLL_UINT32, UCOLL_OP_PROD, UINT32_MAX, UINT32_MAX, 1);
    SPOT(uint32_t, UCOLL_UINT32, UCOLL_OP_MIN, 0x80000000u, 0x7fffffffu, 0x7fffffffu);

    SPOT(int64_t, UCOLL_INT64, UCOLL_OP_SUM, INT64_MAX, 1, INT64_MIN);
    SPOT(int64_t, UCOLL_INT64, UCOLL_OP_PROD, INT64_MIN, -1, INT64_MIN);
    SPOT(int64_t, UCOLL_INT64, UCOLL_OP_PROD, (int64_t)1 << 32, (int64_t)1 << 32, 0);
    SPOT(int64_t, UCOLL_INT64, UCOLL_OP_PROD, ((int64_t)1 << 62) + 1, 4, 4);
    SPOT(int64_t, UCOLL_INT64, UCOLL_OP_PROD, -3000000000, 3000000000, -9000000000000000000);
    SPOT(int64_t, UCOLL_INT64, UCOLL_OP_MAX, INT64_MIN, -1, -1);
    SPOT(int64_t, UCOLL_INT64, UCOLL_OP_LAND, INT64_MIN, 2, 1);
    SPOT(int64_t, UCOLL_INT64, UCOLL_OP_BXOR, INT64_MIN, -1, INT64_MAX);

    SPOT(uint64_t, UCOLL_UINT64, UCOLL_OP_SUM, UINT64_MAX, 1, 0);
    SPOT(uint64_t, UCOLL_UINT64, UCOLL_OP_PROD, UINT64_MAX, UINT64_MAX, 1);
    SPOT(uint64_t, UCOLL_UINT64, UCOLL_OP_MIN, UINT64_MAX, 1, 1);
    SPOT(uint64_t, UCOLL_UINT64, UCOLL_OP_MAX, (uint64_t)1 << 63, 1, (uint64_t)1 << 63);
    SPOT(uint64_t, UCOLL_UINT64, UCOLL_OP_LOR, (uint64_t)1 << 63, 0, 1);
}
END_TEST

START_TEST(test_spot_floats)
{
    SPOT(float, UCOLL_FLOAT32, UCOLL_OP_SUM, 1.5f, -4.25f, -2.75f);
    SPOT(float, UCOLL_FLOAT32, UCOLL_OP_SUM, 16777216.0f, 1.0f, 16777216.0f); /* rounding */
    SPOT(float, UCOLL_FLOAT32, UCOLL_OP_PROD, -3.0f, 0.5f, -1.5f);
    SPOT(float, UCOLL_FLOAT32, UCOLL_OP_PROD, FLT_MAX, 2.0f, INFINITY);
    SPOT(float, UCOLL_FLOAT32, UCOLL_OP_MIN, -INFINITY, 3.0f, -INFINITY);
    SPOT(float, UCOLL_FLOAT32, UCOLL_OP_MAX, -1.0f, -2.0f, -1.0f);
    SPOT(double, UCOLL_FLOAT64, UCOLL_OP_SUM, 0.25, 0.5, 0.75);
    SPOT(double, UCOLL_FLOAT64, UCOLL_OP_SUM, 9007199254740992.0, 1.0, 9007199254740992.0);
    SPOT(double, UCOLL_FLOAT64, UCOLL_OP_PROD, 1e200, 1e200, INFINITY);
    SPOT(double, UCOLL_FLOAT64, UCOLL_OP_MIN, 2.0, -7.5, -7.5);
    SPOT(double, UCOLL_FLOAT64, UCOLL_OP_MAX, DBL_MAX, INFINITY, INFINITY);
}
END_TEST

/* documented in dtype.c: MIN/MAX keep `inout` when the comparison is false (NaN or equal) */
START_TEST(test_nan_and_signed_zero)
{
    for (int op = UCOLL_OP_MIN; op <= UCOLL_OP_MAX; op++) {
        float fin[5] = {NAN, 1.0f, NAN, -0.0f, 0.0f}, fio[5] = {1.0f, NAN, NAN, 0.0f, -0.0f};
        op_apply(op, UCOLL_FLOAT32, fin, fio, 5);
        ck_assert(fio[0] == 1.0f);
        ck_assert(isnan(fio[1]));
        ck_assert(isnan(fio[2]));
        ck_assert(fio[3] == 0.0f && !signbit(fio[3]));
        ck_assert(fio[4] == 0.0f && signbit(fio[4]));

        double din[5] = {NAN, 1.0, NAN, -0.0, 0.0}, dio[5] = {1.0, NAN, NAN, 0.0, -0.0};
        op_apply(op, UCOLL_FLOAT64, din, dio, 5);
        ck_assert(dio[0] == 1.0);
        ck_assert(isnan(dio[1]));
        ck_assert(isnan(dio[2]));
        ck_assert(dio[3] == 0.0 && !signbit(dio[3]));
        ck_assert(dio[4] == 0.0 && signbit(dio[4]));
    }
    /* SUM and PROD propagate NaN from either side */
    double din[2] = {NAN, 2.0}, dio[2] = {3.0, NAN};
    op_apply(UCOLL_OP_SUM, UCOLL_FLOAT64, din, dio, 2);
    ck_assert(isnan(dio[0]) && isnan(dio[1]));
    float fin[2] = {NAN, 2.0f}, fio[2] = {3.0f, NAN};
    op_apply(UCOLL_OP_PROD, UCOLL_FLOAT32, fin, fio, 2);
    ck_assert(isnan(fio[0]) && isnan(fio[1]));
}
END_TEST

/* -------------------------------------------------------------------------------------------
 * unknown dtypes and ops, count 0
 */

static const int BAD_DTYPES[] = {UCOLL_NDTYPES, UCOLL_NDTYPES + 1, -1, 100, INT_MAX, INT_MIN};
static const int BAD_OPS[] = {UCOLL_NOPS,
                              UCOLL_NOPS + 1,
                              999,
                              -1,
                              INT_MIN,
                              INT_MAX,
                              UCOLL_USER_OP_BASE - 1,
                              UCOLL_USER_OP_BASE, /* no user op was created */
                              UCOLL_USER_OP_BASE + UCOLL_MAX_USER_OPS - 1,
                              UCOLL_USER_OP_BASE + UCOLL_MAX_USER_OPS};
#define NELEMS(a) (sizeof(a) / sizeof((a)[0]))

START_TEST(test_unknown_dtype)
{
    for (size_t k = 0; k < NELEMS(BAD_DTYPES); k++) {
        ucoll_dtype_t d = (ucoll_dtype_t)BAD_DTYPES[k];
        ck_assert_uint_eq(dtype_size(d), 0);
        ck_assert_ptr_null(dtype_name(d));
        for (int op = 0; op < UCOLL_NOPS; op++) {
            ck_assert_int_eq(op_check(op, d), UCOLL_ERR_INVALID_ARG);
            int64_t in[4] = {1, 2, 3, 4}, io[4] = {5, 6, 7, 8};
            op_apply(op, d, in, io, 4);
            ck_assert(io[0] == 5 && io[1] == 6 && io[2] == 7 && io[3] == 8);
        }
    }
}
END_TEST

START_TEST(test_unknown_op)
{
    for (size_t k = 0; k < NELEMS(BAD_OPS); k++) {
        ucoll_op_t op = BAD_OPS[k];
        ck_assert_ptr_null(op_name(op));
        ck_assert_int_eq(op_is_commutative(op), 0);
        ck_assert_int_eq(ucoll_op_free(op), UCOLL_ERR_INVALID_ARG);
        for (int d = 0; d < UCOLL_NDTYPES; d++) {
            ck_assert_int_eq(op_check(op, (ucoll_dtype_t)d), UCOLL_ERR_INVALID_ARG);
            int64_t in[4] = {1, 2, 3, 4}, io[4] = {5, 6, 7, 8};
            op_apply(op, (ucoll_dtype_t)d, in, io, 4);
            ck_assert(io[0] == 5 && io[1] == 6 && io[2] == 7 && io[3] == 8);
        }
    }
}
END_TEST

START_TEST(test_count_zero)
{
    for (int op = 0; op < UCOLL_NOPS; op++) {
        for (int d = 0; d < UCOLL_NDTYPES; d++) {
            if (op_check(op, (ucoll_dtype_t)d) != UCOLL_OK)
                continue;
            unsigned char in[16], io[16], io0[16];
            for (int k = 0; k < 16; k++) {
                in[k] = (unsigned char)(0x11 * k + 1);
                io[k] = io0[k] = (unsigned char)(0xf0 - 3 * k);
            }
            uint64_t ain[2], aio[2]; /* aligned copies */
            memcpy(ain, in, 16);
            memcpy(aio, io, 16);
            op_apply(op, (ucoll_dtype_t)d, ain, aio, 0);
            ck_assert_msg(memcmp(aio, io0, 16) == 0, "%s %s count 0 modified", OPNAME[op],
                          T[d].name);
            op_apply(op, (ucoll_dtype_t)d, NULL, NULL, 0); /* no access at all */
        }
    }
}
END_TEST

/* -------------------------------------------------------------------------------------------
 * user ops
 */

typedef struct {
    int calls;
    const void *in;
    void *inout;
    size_t count;
    ucoll_dtype_t dtype;
} record_t;

/* inout = in - inout for int32 and float64 (not commutative); records its arguments */
static void sub_fn(const void *in, void *inout, size_t count, ucoll_dtype_t dtype, void *arg)
{
    record_t *r = arg;
    r->calls++;
    r->in = in;
    r->inout = inout;
    r->count = count;
    r->dtype = dtype;
    if (dtype == UCOLL_INT32) {
        for (size_t i = 0; i < count; i++)
            ((int32_t *)inout)[i] = ((const int32_t *)in)[i] - ((int32_t *)inout)[i];
    } else if (dtype == UCOLL_FLOAT64) {
        for (size_t i = 0; i < count; i++)
            ((double *)inout)[i] = ((const double *)in)[i] - ((double *)inout)[i];
    }
}

static void noop_fn(const void *in, void *inout, size_t count, ucoll_dtype_t dtype, void *arg)
{
    (void)in;
    (void)inout;
    (void)count;
    (void)dtype;
    (void)arg;
}

static int is_user_handle(ucoll_op_t op)
{
    return op >= UCOLL_USER_OP_BASE && op < UCOLL_USER_OP_BASE + UCOLL_MAX_USER_OPS;
}

START_TEST(test_user_op_apply)
{
    record_t rec = {0};
    ucoll_op_t op = -12345;
    ck_assert_int_eq(ucoll_op_create(sub_fn, &rec, 0, &op), UCOLL_OK);
    ck_assert(is_user_handle(op));
    ck_assert_str_eq(op_name(op), "user");
    ck_assert_int_eq(op_is_commutative(op), 0);
    for (int d = 0; d < UCOLL_NDTYPES; d++)
        ck_assert_int_eq(op_check(op, (ucoll_dtype_t)d), UCOLL_OK);
    for (size_t k = 0; k < NELEMS(BAD_DTYPES); k++)
        ck_assert_int_eq(op_check(op, (ucoll_dtype_t)BAD_DTYPES[k]), UCOLL_ERR_INVALID_ARG);

    int32_t in[100], io[100];
    for (int i = 0; i < 100; i++) {
        in[i] = 3 * i - 50;
        io[i] = 1000 - i * i;
    }
    op_apply(op, UCOLL_INT32, in, io, 100);
    ck_assert_int_eq(rec.calls, 1);
    ck_assert_ptr_eq(rec.in, in);
    ck_assert_ptr_eq(rec.inout, io);
    ck_assert_uint_eq(rec.count, 100);
    ck_assert_int_eq(rec.dtype, UCOLL_INT32);
    for (int i = 0; i < 100; i++) {
        ck_assert_int_eq(io[i], (3 * i - 50) - (1000 - i * i)); /* in - inout, not inout - in */
        ck_assert_int_eq(in[i], 3 * i - 50);
    }

    double din[3] = {1.5, 2.0, -4.0}, dio[3] = {0.5, 8.0, 1.0};
    op_apply(op, UCOLL_FLOAT64, din, dio, 3);
    ck_assert_int_eq(rec.calls, 2);
    ck_assert_int_eq(rec.dtype, UCOLL_FLOAT64);
    ck_assert(dio[0] == 1.0 && dio[1] == -6.0 && dio[2] == -5.0);

    /* every dtype reaches the function */
    for (int d = 0; d < UCOLL_NDTYPES; d++) {
        uint64_t a[2] = {0}, b[2] = {0};
        op_apply(op, (ucoll_dtype_t)d, a, b, 2);
        ck_assert_int_eq(rec.dtype, d);
        ck_assert_uint_eq(rec.count, 2);
    }
    int calls = rec.calls;
    ck_assert_int_eq(calls, 2 + UCOLL_NDTYPES);

    /* count 0 does not call the function (which might not expect NULL buffers) */
    op_apply(op, UCOLL_INT32, NULL, NULL, 0);
    ck_assert_int_eq(rec.calls, calls);

    ck_assert_int_eq(ucoll_op_free(op), UCOLL_OK);
    ck_assert_int_eq(ucoll_op_free(op), UCOLL_ERR_INVALID_ARG);
    ck_assert_ptr_null(op_name(op));
    ck_assert_int_eq(op_is_commutative(op), 0);
    ck_assert_int_eq(op_check(op, UCOLL_INT32), UCOLL_ERR_INVALID_ARG);
    io[0] = 77;
    op_apply(op, UCOLL_INT32, in, io, 100); /* a stale handle does nothing */
    ck_assert_int_eq(rec.calls, calls);
    ck_assert_int_eq(io[0], 77);
}
END_TEST

START_TEST(test_user_op_commutative_and_args)
{
    record_t ra = {0}, rb = {0}, rc = {0};
    ucoll_op_t a, b, c;
    ck_assert_int_eq(ucoll_op_create(sub_fn, &ra, 1, &a), UCOLL_OK);
    ck_assert_int_eq(ucoll_op_create(sub_fn, &rb, 0, &b), UCOLL_OK);
    ck_assert_int_eq(ucoll_op_create(sub_fn, &rc, 7, &c), UCOLL_OK);
    ck_assert(is_user_handle(a) && is_user_handle(b) && is_user_handle(c));
    ck_assert(a != b && b != c && a != c);
    ck_assert_int_eq(op_is_commutative(a), 1);
    ck_assert_int_eq(op_is_commutative(b), 0);
    ck_assert_int_eq(op_is_commutative(c), 1);
    for (int op = 0; op < UCOLL_NOPS; op++)
        ck_assert_int_eq(op_is_commutative(op), 1);

    int32_t x = 1, y = 2;
    op_apply(b, UCOLL_INT32, &x, &y, 1);
    ck_assert(ra.calls == 0 && rb.calls == 1 && rc.calls == 0);
    op_apply(c, UCOLL_INT32, &x, &y, 1);
    ck_assert(ra.calls == 0 && rb.calls == 1 && rc.calls == 1);

    /* freeing one leaves the others intact */
    ck_assert_int_eq(ucoll_op_free(b), UCOLL_OK);
    ck_assert_int_eq(op_check(a, UCOLL_INT8), UCOLL_OK);
    ck_assert_int_eq(op_check(b, UCOLL_INT8), UCOLL_ERR_INVALID_ARG);
    ck_assert_int_eq(op_check(c, UCOLL_INT8), UCOLL_OK);
    ck_assert_int_eq(op_is_commutative(c), 1);
    ck_assert_int_eq(ucoll_op_free(a), UCOLL_OK);
    ck_assert_int_eq(ucoll_op_free(c), UCOLL_OK);
}
END_TEST

START_TEST(test_user_op_bad_args)
{
    ucoll_op_t op = -12345;
    ck_assert_int_eq(ucoll_op_create(NULL, NULL, 1, &op), UCOLL_ERR_INVALID_ARG);
    ck_assert_int_eq(op, -12345);
    ck_assert_int_eq(ucoll_op_create(noop_fn, NULL, 1, NULL), UCOLL_ERR_INVALID_ARG);
    ck_assert_int_eq(ucoll_op_create(NULL, NULL, 0, NULL), UCOLL_ERR_INVALID_ARG);
    for (int p = 0; p < UCOLL_NOPS; p++) {
        ck_assert_int_eq(ucoll_op_free(p), UCOLL_ERR_INVALID_ARG);
        ck_assert_int_eq(op_check(p, UCOLL_INT32), /* still there (AVG: floats only) */
                         p == UCOLL_OP_AVG ? UCOLL_ERR_INVALID_ARG : UCOLL_OK);
    }
    /* the failed creates took no slot: the whole table is still available */
    static ucoll_op_t ops[UCOLL_MAX_USER_OPS + 1];
    int n = 0;
    while (n <= UCOLL_MAX_USER_OPS && ucoll_op_create(noop_fn, NULL, 1, &ops[n]) == UCOLL_OK)
        n++;
    ck_assert_int_eq(n, UCOLL_MAX_USER_OPS);
    for (int k = 0; k < n; k++)
        ck_assert_int_eq(ucoll_op_free(ops[k]), UCOLL_OK);
}
END_TEST

START_TEST(test_user_op_exhaustion)
{
    static ucoll_op_t ops[UCOLL_MAX_USER_OPS];
    static char seen[UCOLL_MAX_USER_OPS];
    memset(seen, 0, sizeof(seen));
    for (int k = 0; k < UCOLL_MAX_USER_OPS; k++) {
        ck_assert_int_eq(ucoll_op_create(noop_fn, NULL, k & 1, &ops[k]), UCOLL_OK);
        ck_assert(is_user_handle(ops[k]));
        ck_assert_msg(!seen[ops[k] - UCOLL_USER_OP_BASE], "handle %d given twice", ops[k]);
        seen[ops[k] - UCOLL_USER_OP_BASE] = 1;
    }
    ucoll_op_t extra = -12345;
    ck_assert_int_eq(ucoll_op_create(noop_fn, NULL, 1, &extra), UCOLL_ERR_NO_MEMORY);
    ck_assert_int_eq(extra, -12345);
    for (int k = 0; k < UCOLL_MAX_USER_OPS; k++)
        ck_assert_int_eq(op_is_commutative(ops[k]), k & 1);

    /* freeing makes room again, and only for one */
    ucoll_op_t victim = ops[UCOLL_MAX_USER_OPS / 2];
    ck_assert_int_eq(ucoll_op_free(victim), UCOLL_OK);
    ck_assert_int_eq(op_check(victim, UCOLL_FLOAT64), UCOLL_ERR_INVALID_ARG);
    ck_assert_int_eq(ucoll_op_create(noop_fn, NULL, 1, &extra), UCOLL_OK);
    ck_assert_int_eq(extra, victim); /* the lowest free slot: deterministic handles */
    ck_assert_int_eq(op_is_commutative(extra), 1);
    ucoll_op_t extra2 = -12345;
    ck_assert_int_eq(ucoll_op_create(noop_fn, NULL, 1, &extra2), UCOLL_ERR_NO_MEMORY);
    ck_assert_int_eq(extra2, -12345);

    for (int k = 0; k < UCOLL_MAX_USER_OPS; k++)
        ck_assert_int_eq(ucoll_op_free(ops[k]), UCOLL_OK);
    for (int k = 0; k < UCOLL_MAX_USER_OPS; k++)
        ck_assert_int_eq(ucoll_op_free(ops[k]), UCOLL_ERR_INVALID_ARG);
    /* empty again: creation restarts at the first slot */
    ck_assert_int_eq(ucoll_op_create(noop_fn, NULL, 0, &extra), UCOLL_OK);
    ck_assert_int_eq(extra, UCOLL_USER_OP_BASE);
    ck_assert_int_eq(ucoll_op_free(extra), UCOLL_OK);
}
END_TEST

/* -------------------------------------------------------------------------------------------
 * names
 */

START_TEST(test_dtype_names)
{
    static const size_t sizes[UCOLL_NDTYPES] = {1, 1, 2, 2, 4, 4, 8, 8, 4, 8, 2, 2};
    for (int d = 0; d < UCOLL_NDTYPES; d++) {
        ck_assert_uint_eq(dtype_size((ucoll_dtype_t)d), sizes[d]);
        ck_assert_uint_eq(dtype_size((ucoll_dtype_t)d) * 8, (size_t)T[d].width);
        ck_assert_ptr_nonnull(dtype_name((ucoll_dtype_t)d));
        ck_assert_str_eq(dtype_name((ucoll_dtype_t)d), T[d].name);
        ucoll_dtype_t back = (ucoll_dtype_t)77;
        ck_assert_int_eq(dtype_from_name(T[d].name, &back), 0);
        ck_assert_int_eq(back, d);
    }
    static const char *const bad[] = {"",       "INT8",   "int",  "int8 ", " int8",   "float",
                                      "double", "int128", "uint", "sum",   "float32x"};
    for (size_t k = 0; k < NELEMS(bad); k++) {
        ucoll_dtype_t out = (ucoll_dtype_t)77;
        ck_assert_int_eq(dtype_from_name(bad[k], &out), -1);
        ck_assert_int_eq((int)out, 77);
    }
    ucoll_dtype_t out;
    ck_assert_int_eq(dtype_from_name(NULL, &out), -1);
    ck_assert_int_eq(dtype_from_name("int8", NULL), -1);
}
END_TEST

START_TEST(test_op_names)
{
    for (int op = 0; op < UCOLL_NOPS; op++) {
        ck_assert_ptr_nonnull(op_name(op));
        ck_assert_str_eq(op_name(op), OPNAME[op]);
        ucoll_op_t back = -7;
        ck_assert_int_eq(op_from_name(OPNAME[op], &back), 0);
        ck_assert_int_eq(back, op);
    }
    static const char *const bad[] = {"",        "SUM", "user", "add", "sum ",
                                      "minimum", "xor", "and",  "int8"};
    for (size_t k = 0; k < NELEMS(bad); k++) {
        ucoll_op_t out = -7;
        ck_assert_int_eq(op_from_name(bad[k], &out), -1);
        ck_assert_int_eq(out, -7);
    }
    ucoll_op_t out;
    ck_assert_int_eq(op_from_name(NULL, &out), -1);
    ck_assert_int_eq(op_from_name("sum", NULL), -1);

    /* a user op is "user" while it lives, and op_from_name never gives it back */
    ucoll_op_t u;
    ck_assert_int_eq(ucoll_op_create(noop_fn, NULL, 1, &u), UCOLL_OK);
    ck_assert_str_eq(op_name(u), "user");
    ck_assert_int_eq(op_from_name("user", &out), -1);
    ck_assert_int_eq(ucoll_op_free(u), UCOLL_OK);
    ck_assert_ptr_null(op_name(u));
}
END_TEST

/* Buffers off the dtype's alignment (by 1 and 3 bytes, also differently for in and inout): the
 * same bytes as an aligned run, element by element, and nothing outside the range. Under the
 * sanitizer build UBSan reports any misaligned access of the kernels. */
START_TEST(test_unaligned)
{
    int op = _i / UCOLL_NDTYPES, d = _i % UCOLL_NDTYPES;
    if (op_check(op, (ucoll_dtype_t)d) != UCOLL_OK)
        return;
    const size_t sz = (size_t)T[d].width / 8, n = 1000, bytes = n * sz;
    static const size_t counts[] = {1, 7, 33, 1000};
    static const size_t shifts[][2] = {{1, 1}, {1, 3}, {3, 0}, {0, 3}};
    unsigned char *in = malloc(bytes), *want = malloc(bytes);
    unsigned char *raw_in = malloc(bytes + 16), *raw_io = malloc(bytes + 16);
    unsigned char *io0 = malloc(bytes);
    ck_assert(in != NULL && want != NULL && raw_in != NULL && raw_io != NULL && io0 != NULL);
    uint64_t rng = 99 + (uint64_t)_i;
    for (size_t i = 0; i < n; i++) {
        if (T[d].is_float) { /* small halves: exact in every op, no NaN */
            store_flt(d, in, i, (double)((int)(splitmix(&rng) % 17) - 8) * 0.5);
            store_flt(d, io0, i, (double)((int)(splitmix(&rng) % 17) - 8) * 0.5);
        } else {
            store_int(d, in, i, splitmix(&rng));
            store_int(d, io0, i, splitmix(&rng));
        }
    }
    for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
        memcpy(want, io0, bytes);
        op_apply(op, (ucoll_dtype_t)d, in, want, counts[c]);
        for (size_t k = 0; k < sizeof(shifts) / sizeof(shifts[0]); k++) {
            unsigned char *pi = raw_in + shifts[k][0], *po = raw_io + shifts[k][1];
            memset(raw_in, 0xa5, bytes + 16);
            memset(raw_io, 0x5a, bytes + 16);
            memcpy(pi, in, bytes);
            memcpy(po, io0, bytes);
            op_apply(op, (ucoll_dtype_t)d, pi, po, counts[c]);
            ck_assert_msg(memcmp(po, want, bytes) == 0, "%s %s count %zu shifts %zu/%zu: differs",
                          OPNAME[op], T[d].name, counts[c], shifts[k][0], shifts[k][1]);
            ck_assert_msg(memcmp(pi, in, bytes) == 0, "%s %s: `in` modified", OPNAME[op],
                          T[d].name);
            for (size_t b = 0; b < shifts[k][1]; b++)
                ck_assert_int_eq(raw_io[b], 0x5a);
            for (size_t b = shifts[k][1] + bytes; b < bytes + 16; b++)
                ck_assert_int_eq(raw_io[b], 0x5a);
        }
    }
    free(in);
    free(want);
    free(raw_in);
    free(raw_io);
    free(io0);
}
END_TEST

/* checks inside loops of millions: Check's ck_assert records its location on every success (a
 * system call), these only on failure */
#define HCHECK(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond))                                                                               \
            ck_abort_msg(__VA_ARGS__);                                                             \
    } while (0)
#define HCHECK1(cond) HCHECK(cond, "assertion '%s' failed", #cond)

/* -------------------------------------------------------------------------------------------
 * the 16-bit floating types, described independently of dtype_half.h: a value is decoded
 * from its fields with ldexp, and "correctly rounded" is checked against the neighbours
 */

typedef struct {
    int dtype;
    const char *name;
    int frac_bits, exp_bits, bias;
    double u;       /* unit roundoff: 2^-(frac_bits + 1) */
    double min_sub; /* smallest subnormal */
} hfmt_t;

static const hfmt_t F16 = {UCOLL_FLOAT16, "float16", 10, 5, 15, 0x1p-11, 0x1p-24};
static const hfmt_t BF16 = {UCOLL_BFLOAT16, "bfloat16", 7, 8, 127, 0x1p-8, 0x1p-133};

static const hfmt_t *hfmt_of(int d)
{
    return d == UCOLL_FLOAT16 ? &F16 : &BF16;
}

/* the magnitude bits of infinity; every pattern above it (in magnitude) is a NaN */
static unsigned hinf(const hfmt_t *f)
{
    return ((1u << f->exp_bits) - 1) << f->frac_bits;
}

static double hdecode(const hfmt_t *f, uint16_t h)
{
    const unsigned mag = h & 0x7fffu, e = mag >> f->frac_bits, m = mag & ((1u << f->frac_bits) - 1);
    double v;
    if (mag > hinf(f))
        v = NAN;
    else if (mag == hinf(f))
        v = INFINITY;
    else if (e == 0)
        v = ldexp(m, 1 - f->bias - f->frac_bits);
    else
        v = ldexp(m + (1u << f->frac_bits), (int)e - f->bias - f->frac_bits);
    return (h & 0x8000u) ? -v : v;
}

static int hisnan(const hfmt_t *f, uint16_t h)
{
    return (h & 0x7fffu) > hinf(f);
}

/* for rounding purposes infinity stands for the next power of two after the largest finite
 * value: a value rounds to infinity from halfway between the two on */
static double hround_value(const hfmt_t *f, unsigned mag)
{
    if (mag == hinf(f))
        return ldexp(1.0, (1 << (f->exp_bits - 1)));
    return hdecode(f, (uint16_t)mag);
}

/* 1 if h (finite or infinite) is x rounded to nearest, ties to even; x not NaN */
static int hnearest(const hfmt_t *f, uint16_t h, double x)
{
    if (hisnan(f, h))
        return 0;
    const unsigned mag = h & 0x7fffu;
    const int neg = (h & 0x8000u) != 0;
    if (mag != 0 && neg != (signbit(x) != 0))
        return 0; /* a non-zero result has x's sign */
    const double ax = fabs(x), v = hround_value(f, mag), dv = fabs(ax - v);
    if (mag == hinf(f) && ax >= v)
        return 1; /* beyond the stand-in for infinity */
    for (int step = -1; step <= 1; step += 2) {
        if ((mag == 0 && step < 0) || (mag == hinf(f) && step > 0))
            continue; /* -0's and +0's neighbour below is the other sign's smallest subnormal:
                       * never nearer to |x| than 0 is */
        const double dn = fabs(ax - hround_value(f, mag + (unsigned)step));
        if (dn < dv || (dn == dv && (mag & 1u)))
            return 0;
    }
    return 1;
}

/* the error bound dtype_half.c states for one rounding of the exact value x into h */
static int hwithin_bound(const hfmt_t *f, uint16_t h, double x)
{
    const double v = hdecode(f, h), min_normal = ldexp(1.0, 1 - f->bias);
    if (isinf(v))
        return 1; /* overflow: hnearest says when */
    if (fabs(x) >= min_normal)
        return fabs(v - x) <= f->u * fabs(x);
    return fabs(v - x) <= f->min_sub / 2;
}

static uint16_t half_exact_bits(int d, double v)
{
    const hfmt_t *f = hfmt_of(d);
    uint16_t h = signbit(v) ? 0x8000u : 0;
    if (v != 0) {
        int e;
        double m = frexp(fabs(v), &e); /* |v| = m 2^e, m in [0.5, 1) */
        unsigned fr = (unsigned)ldexp(m, f->frac_bits + 1);
        ck_assert_msg(ldexp(fr, e - f->frac_bits - 1) == fabs(v), "%a not exact", v);
        ck_assert(e - 1 + f->bias > 0); /* a normal value */
        h |= (uint16_t)(((unsigned)(e - 1 + f->bias) << f->frac_bits) |
                        (fr & ((1u << f->frac_bits) - 1)));
    }
    ck_assert(hdecode(f, h) == v);
    return h;
}

static float to_float(int d, uint16_t h)
{
    return d == UCOLL_FLOAT16 ? half_to_float(h) : bf16_to_float(h);
}

static uint16_t from_float(int d, float x)
{
    return d == UCOLL_FLOAT16 ? float_to_half(x) : float_to_bf16(x);
}

static float float_of_bits(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof(x));
    return x;
}

/* every one of the 65536 patterns: to float exactly (the decoded value), and back unchanged,
 * NaNs included (their payloads and signs too) */
START_TEST(test_half_roundtrip)
{
    const int d = _i ? UCOLL_BFLOAT16 : UCOLL_FLOAT16;
    const hfmt_t *f = hfmt_of(d);
    long nans = 0;
    for (uint32_t h = 0; h <= 0xffffu; h++) {
        const float x = to_float(d, (uint16_t)h);
        const double want = hdecode(f, (uint16_t)h);
        if (isnan(want)) {
            HCHECK(isnan(x), "%s 0x%04x: not NaN", f->name, h);
            nans++;
        } else {
            HCHECK((double)x == want && !signbit(x) == !signbit(want),
                   "%s 0x%04x -> %a, expected %a", f->name, h, (double)x, want);
        }
        const uint16_t back = from_float(d, x);
        HCHECK(back == h, "%s 0x%04x -> %a -> 0x%04x", f->name, h, (double)x, back);
    }
    /* NaNs: 2 signs x (2^frac - 1) non-zero fractions */
    ck_assert_int_eq(nans, 2 * ((1L << f->frac_bits) - 1));
}
END_TEST

START_TEST(test_half_known_values)
{
    /* binary16 */
    ck_assert_uint_eq(float_to_half(1.0f), 0x3c00);
    ck_assert_uint_eq(float_to_half(-2.0f), 0xc000);
    ck_assert_uint_eq(float_to_half(0.5f), 0x3800);
    ck_assert_uint_eq(float_to_half(65504.0f), 0x7bff); /* largest finite */
    ck_assert_uint_eq(float_to_half(0x1p-14f), 0x0400); /* smallest normal */
    ck_assert_uint_eq(float_to_half(0x1p-24f), 0x0001); /* smallest subnormal */
    ck_assert_uint_eq(float_to_half(1023 * 0x1p-24f), 0x03ff);
    ck_assert_uint_eq(float_to_half(0.0f), 0x0000);
    ck_assert_uint_eq(float_to_half(-0.0f), 0x8000);
    ck_assert_uint_eq(float_to_half(INFINITY), 0x7c00);
    ck_assert_uint_eq(float_to_half(-INFINITY), 0xfc00);
    ck_assert_uint_eq(float_to_half(FLT_MAX), 0x7c00);
    ck_assert_uint_eq(float_to_half(1e-30f), 0x0000);
    ck_assert_uint_eq(float_to_half(-1e-30f), 0x8000);
    ck_assert_uint_eq(float_to_half(1.0f / 3.0f), 0x3555);
    ck_assert(half_to_float(0x3c00) == 1.0f);
    ck_assert(half_to_float(0x7bff) == 65504.0f);
    ck_assert(half_to_float(0x0001) == 0x1p-24f);
    ck_assert(half_to_float(0x8000) == 0.0f && signbit(half_to_float(0x8000)));
    ck_assert(isinf(half_to_float(0xfc00)) && half_to_float(0xfc00) < 0);
    ck_assert(isnan(half_to_float(0x7e00)) && isnan(half_to_float(0x7c01)));
    ck_assert(isnan(half_to_float(0xffff)));
    /* float NaNs stay NaN, also one whose payload lies only in bits that are dropped */
    ck_assert(hisnan(&F16, float_to_half(NAN)));
    ck_assert(hisnan(&F16, float_to_half(float_of_bits(0x7f800001u))));
    ck_assert(hisnan(&F16, float_to_half(float_of_bits(0xff800001u))));
    ck_assert_uint_eq(float_to_half(float_of_bits(0xff800001u)) & 0x8000u, 0x8000u);
    /* ties to even */
    ck_assert_uint_eq(float_to_half(1.0f + 0x1p-11f), 0x3c00);            /* to 1.0 (even) */
    ck_assert_uint_eq(float_to_half(1.0f + 3 * 0x1p-11f), 0x3c02);        /* to 1+2^-9 (even) */
    ck_assert_uint_eq(float_to_half(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01); /* above the tie */
    ck_assert_uint_eq(float_to_half(1.0f + 0x1p-11f - 0x1p-20f), 0x3c00); /* below it */
    ck_assert_uint_eq(float_to_half(65519.0f), 0x7bff);
    ck_assert_uint_eq(float_to_half(65520.0f), 0x7c00); /* the tie with 2^16: to infinity */
    ck_assert_uint_eq(float_to_half(0x1p-25f), 0x0000); /* tie of 0 and 2^-24: to 0 */
    ck_assert_uint_eq(float_to_half(-0x1p-25f), 0x8000);
    ck_assert_uint_eq(float_to_half(0x1p-25f + 0x1p-40f), 0x0001);
    ck_assert_uint_eq(float_to_half(3 * 0x1p-25f), 0x0002);    /* tie of 1 and 2 (x 2^-24) */
    ck_assert_uint_eq(float_to_half(5 * 0x1p-25f), 0x0002);    /* tie of 2 and 3 */
    ck_assert_uint_eq(float_to_half(2047 * 0x1p-25f), 0x0400); /* subnormal rounds to normal */

    /* bfloat16 */
    ck_assert_uint_eq(float_to_bf16(1.0f), 0x3f80);
    ck_assert_uint_eq(float_to_bf16(-2.0f), 0xc000);
    ck_assert_uint_eq(float_to_bf16(0.0f), 0x0000);
    ck_assert_uint_eq(float_to_bf16(-0.0f), 0x8000);
    ck_assert_uint_eq(float_to_bf16(INFINITY), 0x7f80);
    ck_assert_uint_eq(float_to_bf16(-INFINITY), 0xff80);
    ck_assert_uint_eq(float_to_bf16(FLT_MAX), 0x7f80); /* above the tie with 2^128 */
    ck_assert_uint_eq(float_to_bf16(float_of_bits(0x7f7f7fffu)), 0x7f7f); /* below it */
    ck_assert_uint_eq(float_to_bf16(float_of_bits(0x7f7f8000u)), 0x7f80); /* the tie: odd 7f7f */
    ck_assert_uint_eq(float_to_bf16(FLT_MIN), 0x0080);                    /* smallest normal */
    ck_assert_uint_eq(float_to_bf16(float_of_bits(0x00010000u)), 0x0001); /* a subnormal */
    ck_assert_uint_eq(float_to_bf16(float_of_bits(0x00000001u)), 0x0000);
    ck_assert_uint_eq(float_to_bf16(1.0f / 3.0f), 0x3eab);
    ck_assert_uint_eq(float_to_bf16(1.0f + 0x1p-8f), 0x3f80);            /* tie: to even */
    ck_assert_uint_eq(float_to_bf16(1.0f + 3 * 0x1p-8f), 0x3f82);        /* tie: to even */
    ck_assert_uint_eq(float_to_bf16(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81); /* above the tie */
    ck_assert(bf16_to_float(0x3f80) == 1.0f);
    ck_assert(bf16_to_float(0x7f7f) == float_of_bits(0x7f7f0000u));
    ck_assert(hisnan(&BF16, float_to_bf16(NAN)));
    ck_assert(hisnan(&BF16, float_to_bf16(float_of_bits(0x7f800001u)))); /* dropped payload */
    ck_assert_uint_eq(float_to_bf16(float_of_bits(0x7f800001u)) & 0xff80u, 0x7f80u);
    ck_assert(isnan(bf16_to_float(0x7fc0)) && isnan(bf16_to_float(0xff81)));
}
END_TEST

/* float -> 16 bits rounds to nearest, ties to even: at every tie between two neighbouring
 * finite values (exactly representable in float), one float step either side of it, and on
 * random float bit patterns over the whole range */
START_TEST(test_half_from_float_rounding)
{
    const int d = _i ? UCOLL_BFLOAT16 : UCOLL_FLOAT16;
    const hfmt_t *f = hfmt_of(d);
    for (unsigned mag = 0; mag < hinf(f); mag++) {
        for (int neg = 0; neg <= 1; neg++) {
            const double lo = hround_value(f, mag), hi = hround_value(f, mag + 1);
            const float mid = (float)((lo + hi) / 2);
            HCHECK1((double)mid == (lo + hi) / 2);
            const float xs[3] = {nextafterf(mid, 0), mid, nextafterf(mid, INFINITY)};
            for (int k = 0; k < 3; k++) {
                const float x = neg ? -xs[k] : xs[k];
                const uint16_t h = from_float(d, x);
                HCHECK(hnearest(f, h, x), "%s: %a -> 0x%04x", f->name, (double)x, h);
                HCHECK(!(h & 0x8000u) == !signbit(x), "%s: %a sign", f->name, (double)x);
            }
        }
    }
    uint64_t rng = 4242 + (uint64_t)_i;
    for (long k = 0; k < 2000000; k++) {
        const float x = float_of_bits((uint32_t)splitmix(&rng));
        const uint16_t h = from_float(d, x);
        if (isnan(x)) {
            HCHECK(hisnan(f, h), "%s: NaN -> 0x%04x", f->name, h);
            continue;
        }
        HCHECK(hnearest(f, h, x), "%s: %a -> 0x%04x", f->name, (double)x, h);
        HCHECK(!(h & 0x8000u) == !signbit(x), "%s: %a sign", f->name, (double)x);
    }
}
END_TEST

/* a random finite pattern (any sign, exponent and fraction: subnormals and zeros included) */
static uint16_t hrandom(const hfmt_t *f, uint64_t *rng)
{
    for (;;) {
        const uint16_t h = (uint16_t)splitmix(rng);
        if ((h & 0x7fffu) < hinf(f))
            return h;
    }
}

/* sum/prod/min/max against exact double results: correctly rounded (hence the bound, also
 * asserted), the sign of a zero result, min/max exact, `in` unchanged, nothing outside the
 * count written; aligned and one byte off */
START_TEST(test_half_kernels)
{
    const int d = (_i & 1) ? UCOLL_BFLOAT16 : UCOLL_FLOAT16;
    const int op = _i >> 1; /* SUM, PROD, MIN, MAX, and AVG's (+), which is SUM */
    const int rop = op == 4 ? UCOLL_OP_AVG : op;
    const hfmt_t *f = hfmt_of(d);
    enum { NH = 4096, PASSES = 50 };
    static uint16_t in[NH + 2], io[NH + 2], in0[NH + 2], io0[NH + 2];
    static unsigned char raw_in[2 * NH + 8], raw_io[2 * NH + 8];
    uint64_t rng = 777 + (uint64_t)_i;
    long bound_checked = 0;
    ck_assert_int_eq(op_check(rop, (ucoll_dtype_t)d), UCOLL_OK);
    for (int pass = 0; pass < PASSES; pass++) {
        for (size_t i = 0; i < NH + 2; i++) {
            in[i] = in0[i] = hrandom(f, &rng);
            io[i] = io0[i] = hrandom(f, &rng);
        }
        if (pass == 0) /* every pair of the small exact values too */
            for (size_t i = 0; i < 289; i++) {
                in[i + 1] = in0[i + 1] = half_exact_bits(d, (double)((int)(i / 17) - 8) / 2);
                io[i + 1] = io0[i + 1] = half_exact_bits(d, (double)((int)(i % 17) - 8) / 2);
            }
        const size_t count = NH - (size_t)pass; /* elements 1 .. count; 0 and beyond: guards */
        op_apply(rop, (ucoll_dtype_t)d, in + 1, io + 1, count);
        HCHECK1(memcmp(in, in0, sizeof(in)) == 0);
        HCHECK1(io[0] == io0[0]);
        for (size_t i = count + 1; i < NH + 2; i++)
            HCHECK1(io[i] == io0[i]);
        for (size_t i = 1; i <= count; i++) {
            const double a = hdecode(f, in0[i]), b = hdecode(f, io0[i]);
            const uint16_t r = io[i];
            if (op == UCOLL_OP_MIN || op == UCOLL_OP_MAX) {
                const int take_in = op == UCOLL_OP_MIN ? a < b : a > b;
                HCHECK(r == (take_in ? in0[i] : io0[i]), "%s %s 0x%04x 0x%04x -> 0x%04x",
                       OPNAME[rop], f->name, in0[i], io0[i], r);
                continue;
            }
            const double x = op == UCOLL_OP_PROD ? a * b : a + b; /* exact, see below */
            HCHECK(hnearest(f, r, x), "%s %s %a (+) %a = 0x%04x (%a), exact %a", OPNAME[rop],
                   f->name, a, b, r, hdecode(f, r), x);
            HCHECK(hwithin_bound(f, r, x), "%s %s %a (+) %a: bound", OPNAME[rop], f->name, a, b);
            bound_checked += !isinf(hdecode(f, r));
            if (x == 0) { /* sum: -0 only from -0 + -0; product: the signs' xor */
                const int neg =
                    op == UCOLL_OP_PROD ? !signbit(a) != !signbit(b) : signbit(a) && signbit(b);
                HCHECK((r & 0x7fffu) == 0 && !(r & 0x8000u) == !neg, "%s %s %a (+) %a: zero 0x%04x",
                       OPNAME[rop], f->name, a, b, r);
            }
        }
        /* one byte off the alignment, both buffers: the same result */
        memcpy(raw_in + 1, in0 + 1, count * 2);
        memcpy(raw_io + 1, io0 + 1, count * 2);
        op_apply(rop, (ucoll_dtype_t)d, raw_in + 1, raw_io + 1, count);
        HCHECK1(memcmp(raw_io + 1, io + 1, count * 2) == 0);
    }
    /* (products of two 16-bit values have at most 22 significant bits, sums of two float16
     * at most 40: both exact in double; bfloat16 sums may round in double, but only where one
     * operand is below 2^-45 of the other, far from any tie, so the nearest value is the same) */
    if (op != UCOLL_OP_MIN && op != UCOLL_OP_MAX)
        HCHECK1(bound_checked > PASSES * NH / 2);
}
END_TEST

/* infinities, NaNs, overflow and the MIN/MAX conventions, spelled out */
START_TEST(test_half_special)
{
    const int d = _i ? UCOLL_BFLOAT16 : UCOLL_FLOAT16;
    const hfmt_t *f = hfmt_of(d);
    const uint16_t inf = (uint16_t)hinf(f), ninf = inf | 0x8000u, one = half_exact_bits(d, 1.0);
    const uint16_t qnan = (uint16_t)(inf | (1u << (f->frac_bits - 1)));
    const uint16_t maxf = (uint16_t)(inf - 1), pz = 0, nz = 0x8000u;
    struct {
        int op;
        uint16_t a, b;
        int want_nan;
        uint16_t want;
    } cases[] = {
        {UCOLL_OP_SUM, inf, ninf, 1, 0},     {UCOLL_OP_SUM, qnan, one, 1, 0},
        {UCOLL_OP_SUM, one, qnan, 1, 0},     {UCOLL_OP_PROD, inf, pz, 1, 0},
        {UCOLL_OP_PROD, qnan, one, 1, 0},    {UCOLL_OP_SUM, inf, one, 0, inf},
        {UCOLL_OP_SUM, maxf, maxf, 0, inf},  {UCOLL_OP_PROD, maxf, ninf, 0, ninf},
        {UCOLL_OP_SUM, pz, nz, 0, pz},       {UCOLL_OP_SUM, nz, nz, 0, nz},
        {UCOLL_OP_PROD, nz, one, 0, nz},     {UCOLL_OP_MIN, qnan, one, 0, one},
        {UCOLL_OP_MIN, one, qnan, 0, qnan},  {UCOLL_OP_MAX, qnan, one, 0, one},
        {UCOLL_OP_MAX, one, qnan, 0, qnan},  {UCOLL_OP_MIN, nz, pz, 0, pz},
        {UCOLL_OP_MIN, pz, nz, 0, nz},       {UCOLL_OP_MAX, nz, pz, 0, pz},
        {UCOLL_OP_MIN, ninf, maxf, 0, ninf}, {UCOLL_OP_MAX, ninf, maxf, 0, maxf},
    };
    for (size_t k = 0; k < NELEMS(cases); k++) {
        uint16_t a = cases[k].a, b = cases[k].b;
        op_apply(cases[k].op, (ucoll_dtype_t)d, &a, &b, 1);
        if (cases[k].want_nan)
            ck_assert_msg(hisnan(f, b), "%s case %zu: 0x%04x", f->name, k, b);
        else
            ck_assert_msg(b == cases[k].want, "%s case %zu: 0x%04x, expected 0x%04x", f->name, k, b,
                          cases[k].want);
    }
    if (d == UCOLL_FLOAT16) {                         /* around the overflow threshold 65520 */
        uint16_t a = 0x7bff, b = float_to_half(8.0f); /* 65512: to 65504 */
        op_apply(UCOLL_OP_SUM, UCOLL_FLOAT16, &a, &b, 1);
        ck_assert_uint_eq(b, 0x7bff);
        a = 0x7bff, b = float_to_half(16.0f); /* 65520: the tie, to infinity */
        op_apply(UCOLL_OP_SUM, UCOLL_FLOAT16, &a, &b, 1);
        ck_assert_uint_eq(b, 0x7c00);
        a = float_to_half(256.0f), b = a; /* 65536 */
        op_apply(UCOLL_OP_PROD, UCOLL_FLOAT16, &a, &b, 1);
        ck_assert_uint_eq(b, 0x7c00);
        a = 0x0001, b = 0x0001; /* subnormals add exactly */
        op_apply(UCOLL_OP_SUM, UCOLL_FLOAT16, &a, &b, 1);
        ck_assert_uint_eq(b, 0x0002);
        a = 0x0001, b = 0x3800; /* 2^-24 * 0.5: the tie with 0, to 0 */
        op_apply(UCOLL_OP_PROD, UCOLL_FLOAT16, &a, &b, 1);
        ck_assert_uint_eq(b, 0x0000);
        a = 0x3c00, b = 0x1000; /* 1 + 2^-11: the tie, to 1 */
        op_apply(UCOLL_OP_SUM, UCOLL_FLOAT16, &a, &b, 1);
        ck_assert_uint_eq(b, 0x3c00);
    }
}
END_TEST

/* AVG: op_check per collective, its (+) is SUM, and op_finish's division */
START_TEST(test_avg)
{
    static const int floats[] = {UCOLL_FLOAT16, UCOLL_BFLOAT16, UCOLL_FLOAT32, UCOLL_FLOAT64};
    for (int d = 0; d < UCOLL_NDTYPES; d++) {
        const ucoll_status_t want = T[d].is_float ? UCOLL_OK : UCOLL_ERR_INVALID_ARG;
        ck_assert_int_eq(op_check(UCOLL_OP_AVG, (ucoll_dtype_t)d), want);
        ck_assert_int_eq(op_check_coll(UCOLL_COLL_REDUCE, UCOLL_OP_AVG, (ucoll_dtype_t)d), want);
        ck_assert_int_eq(op_check_coll(UCOLL_COLL_ALLREDUCE, UCOLL_OP_AVG, (ucoll_dtype_t)d), want);
        ck_assert_int_eq(op_check_coll(UCOLL_COLL_EXSCAN, UCOLL_OP_AVG, (ucoll_dtype_t)d),
                         UCOLL_ERR_INVALID_ARG);
        ck_assert_int_eq(op_check_coll(UCOLL_COLL_SCAN, UCOLL_OP_AVG, (ucoll_dtype_t)d),
                         UCOLL_ERR_INVALID_ARG);
        /* every other op: as op_check, for every collective */
        for (int op = 0; op < UCOLL_OP_AVG; op++)
            for (int c = UCOLL_COLL_EXSCAN; c <= UCOLL_COLL_ALLREDUCE; c++)
                ck_assert_int_eq(op_check_coll((ucoll_coll_t)c, op, (ucoll_dtype_t)d),
                                 op_check(op, (ucoll_dtype_t)d));
    }
    ck_assert_int_eq(op_has_finish(UCOLL_OP_AVG), 1);
    for (int op = 0; op < UCOLL_OP_AVG; op++)
        ck_assert_int_eq(op_has_finish(op), 0);
    ck_assert_str_eq(op_name(UCOLL_OP_AVG), "avg");

    /* known quotients */
    uint16_t h[4] = {float_to_half(3.0f), 0x3c00, 0xbc00, 0x7bff};
    op_finish(UCOLL_OP_AVG, UCOLL_FLOAT16, h, 4, 2);
    ck_assert(h[0] == 0x3e00 && h[1] == 0x3800 && h[2] == 0xb800 && h[3] == 0x77ff);
    uint16_t t[2] = {0x3c00, 0x3f80};
    op_finish(UCOLL_OP_AVG, UCOLL_FLOAT16, &t[0], 1, 3);
    op_finish(UCOLL_OP_AVG, UCOLL_BFLOAT16, &t[1], 1, 3);
    ck_assert_uint_eq(t[0], 0x3555); /* 1/3 rounded */
    ck_assert_uint_eq(t[1], 0x3eab);
    float x32[2] = {1.0f, -7.0f};
    op_finish(UCOLL_OP_AVG, UCOLL_FLOAT32, x32, 2, 3);
    ck_assert(x32[0] == 1.0f / 3.0f && x32[1] == -7.0f / 3.0f);
    double x64[2] = {1.0, 10.0};
    op_finish(UCOLL_OP_AVG, UCOLL_FLOAT64, x64, 2, 4);
    ck_assert(x64[0] == 0.25 && x64[1] == 2.5);
    /* one rank, count 0, other ops: nothing changes */
    uint16_t keep[2] = {0x7c01, 0x1234};
    op_finish(UCOLL_OP_AVG, UCOLL_FLOAT16, keep, 2, 1);
    op_finish(UCOLL_OP_AVG, UCOLL_FLOAT16, keep, 0, 5);
    op_finish(UCOLL_OP_AVG, UCOLL_FLOAT16, NULL, 0, 5);
    op_finish(UCOLL_OP_SUM, UCOLL_FLOAT16, keep, 2, 5);
    ck_assert(keep[0] == 0x7c01 && keep[1] == 0x1234);
    int32_t ints[1] = {10};
    op_finish(UCOLL_OP_AVG, UCOLL_INT32, ints, 1, 2);
    ck_assert_int_eq(ints[0], 10);

    /* the division rounds once, correctly: random finite values, divisors 2..9; one byte off
     * the alignment */
    uint64_t rng = 31337;
    for (int k = 0; k < 2; k++) {
        const hfmt_t *f = k ? &BF16 : &F16;
        static unsigned char raw[2 * 1000 + 1];
        uint16_t v[1000], r[1000];
        for (unsigned p = 2; p <= 9; p++) {
            for (int i = 0; i < 1000; i++)
                v[i] = hrandom(f, &rng);
            memcpy(raw + 1, v, sizeof(v));
            op_finish(UCOLL_OP_AVG, (ucoll_dtype_t)f->dtype, raw + 1, 1000, (int)p);
            memcpy(r, raw + 1, sizeof(r));
            for (int i = 0; i < 1000; i++) {
                const double q = hdecode(f, v[i]) / p; /* rounded in double: ties survive */
                HCHECK(hnearest(f, r[i], q), "%s 0x%04x / %u = 0x%04x", f->name, v[i], p, r[i]);
                HCHECK1(hwithin_bound(f, r[i], q));
            }
        }
    }
    /* its (+) is the sum */
    for (size_t k = 0; k < NELEMS(floats); k++) {
        unsigned char a[16], b[16], c[16];
        for (int i = 0; i < 16; i++)
            a[i] = b[i] = c[i] = 0;
        store_flt(floats[k], a, 0, 1.5);
        store_flt(floats[k], b, 0, 2.5);
        store_flt(floats[k], c, 0, 2.5);
        op_apply(UCOLL_OP_AVG, (ucoll_dtype_t)floats[k], a, b, 1);
        op_apply(UCOLL_OP_SUM, (ucoll_dtype_t)floats[k], a, c, 1);
        ck_assert(memcmp(b, c, 16) == 0);
        store_flt(floats[k], a, 0, 4.0);
        ck_assert(memcmp(b, a, 16) == 0);
    }
}
END_TEST

static Suite *kernels_suite(void)
{
    Suite *s = suite_create("kernels");

    TCase *tc = tcase_create("kernels");
    tcase_set_timeout(tc, 60); /* generous: make check may run on a loaded machine */
    tcase_add_loop_test(tc, test_kernel, 0, UCOLL_NOPS * NDTYPES_WIDE);
    tcase_add_loop_test(tc, test_apply_to, 0, UCOLL_NOPS * UCOLL_NDTYPES);
    tcase_add_loop_test(tc, test_unaligned, 0, UCOLL_NOPS * UCOLL_NDTYPES);
    tcase_add_test(tc, test_invalid_combinations);
    tcase_add_test(tc, test_spot_integers);
    tcase_add_test(tc, test_spot_floats);
    tcase_add_test(tc, test_nan_and_signed_zero);
    suite_add_tcase(s, tc);

    tc = tcase_create("half");
    tcase_set_timeout(tc, 120); /* generous: make check may run on a loaded machine */
    tcase_add_loop_test(tc, test_half_roundtrip, 0, 2);
    tcase_add_test(tc, test_half_known_values);
    tcase_add_loop_test(tc, test_half_from_float_rounding, 0, 2);
    tcase_add_loop_test(tc, test_half_kernels, 0, 10);
    tcase_add_loop_test(tc, test_half_special, 0, 2);
    tcase_add_test(tc, test_avg);
    suite_add_tcase(s, tc);

    tc = tcase_create("arguments");
    tcase_set_timeout(tc, 60); /* generous: make check may run on a loaded machine */
    tcase_add_test(tc, test_unknown_dtype);
    tcase_add_test(tc, test_unknown_op);
    tcase_add_test(tc, test_count_zero);
    suite_add_tcase(s, tc);

    tc = tcase_create("user_ops");
    tcase_set_timeout(tc, 60); /* generous: make check may run on a loaded machine */
    tcase_add_test(tc, test_user_op_apply);
    tcase_add_test(tc, test_user_op_commutative_and_args);
    tcase_add_test(tc, test_user_op_bad_args);
    tcase_add_test(tc, test_user_op_exhaustion);
    suite_add_tcase(s, tc);

    tc = tcase_create("names");
    tcase_set_timeout(tc, 60); /* generous: make check may run on a loaded machine */
    tcase_add_test(tc, test_dtype_names);
    tcase_add_test(tc, test_op_names);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(kernels_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
