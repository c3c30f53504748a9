/*
 * Unit tests (Check) of the datatypes and (+) kernels of src/dtype.c: every dtype x op kernel
 * against a reference computed here from first principles, the invalid combinations, unknown
 * dtypes and ops, count 0, user-defined ops (create/apply/free, commutativity, exhaustion of
 * the table) and the name tables.
 */
#include "dtype.h"

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
};

static const char *const OPNAME[UCOLL_NOPS] = {"sum", "prod", "min",  "max", "land",
                                               "lor", "lxor", "band", "bor", "bxor"};

static int op_is_bit_or_logical(int op)
{
    return op >= UCOLL_OP_LAND && op <= UCOLL_OP_BXOR;
}

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
    if (d == UCOLL_FLOAT32)
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
 * every dtype x op: loop test over _i = op * UCOLL_NDTYPES + dtype
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

START_TEST(test_kernel)
{
    int op = _i / UCOLL_NDTYPES, d = _i % UCOLL_NDTYPES;
    if (T[d].is_float && op_is_bit_or_logical(op)) {
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
            int want_invalid = T[d].is_float && op_is_bit_or_logical(op);
            ucoll_status_t s = op_check(op, (ucoll_dtype_t)d);
            ck_assert_int_eq(s, want_invalid ? UCOLL_ERR_INVALID_ARG : UCOLL_OK);
            invalid += s == UCOLL_ERR_INVALID_ARG;
        }
    }
    /* LAND, LOR, LXOR, BAND, BOR, BXOR on FLOAT32 and FLOAT64 */
    ck_assert_int_eq(invalid, 12);
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
        ck_assert_int_eq(op_check(p, UCOLL_INT32), UCOLL_OK); /* still there */
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
    static const size_t sizes[UCOLL_NDTYPES] = {1, 1, 2, 2, 4, 4, 8, 8, 4, 8};
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

static Suite *kernels_suite(void)
{
    Suite *s = suite_create("kernels");

    TCase *tc = tcase_create("kernels");
    tcase_set_timeout(tc, 60); /* generous: make check may run on a loaded machine */
    tcase_add_loop_test(tc, test_kernel, 0, UCOLL_NOPS * UCOLL_NDTYPES);
    tcase_add_loop_test(tc, test_unaligned, 0, UCOLL_NOPS * UCOLL_NDTYPES);
    tcase_add_test(tc, test_invalid_combinations);
    tcase_add_test(tc, test_spot_integers);
    tcase_add_test(tc, test_spot_floats);
    tcase_add_test(tc, test_nan_and_signed_zero);
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
