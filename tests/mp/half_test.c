/*
 * tests/mp/half_test.c: the 16-bit floating dtypes (FLOAT16, BFLOAT16) and UCOLL_OP_AVG through
 * the public API only, on every rank of a job.
 *
 * allreduce and reduce (every root) with float16 and bfloat16 x sum, prod, min, max, avg and
 * float32, float64 x avg; counts 0, 1, 7, 1000 and one above UCOLL_SEGMENT_SIZE (read from the
 * environment, default 262144 bytes); in place and not; blocking, nonblocking and persistent
 * (started twice, with new inputs the second time); under `auto` in every combination, and
 * under each explicit algorithm with the form and in-place rotating. Exscan and scan with
 * float16 and bfloat16 sums, every form. Each rank computes the reference locally, in double,
 * from every rank's inputs (a hash of salt, rank and index):
 *   exact inputs (small integers; products of +-1/2, 1, 2; quarters for min/max): sums,
 *     products, min and max must be exact; AVG the exact sum divided by p rounded once to
 *     nearest (checked against both neighbouring values, ties to even);
 *   random inputs (any fraction bits, magnitudes 2^-6..2^6; factors 1/2..2; min/max: any finite
 *     pattern, subnormals included): with u the unit roundoff (2^-11, 2^-8, 2^-24, 2^-53) and
 *     g = (p-1)u / (1 - (p-1)u), a p-rank sum is within g * sum|x| of the exact sum, AVG within
 *     g * sum|x| / p + u * (|S| + g * sum|x|) / p of S/p, a product within g * |P|; min and max
 *     exact.
 * Also: send buffers unchanged, nothing written beyond recvbuf's count, a reduce's recvbuf off
 * the root untouched, exscan's rank 0 untouched, every rank of an allreduce holding the same bits.
 * With UCOLL_CHECK=1 in the environment: an allreduce where rank 0 passes AVG and the others
 * SUM gives UCOLL_ERR_MISMATCH on every rank, buffers untouched.
 *
 * Usage: half_test --expect-size N [--quick]   (--quick: `auto` only)
 * Output: "FAIL rank R: ..." per failed check; rank 0 ends with
 * "half_test np=N: C checks on rank 0, F failed over all ranks; verdict: PASS|FAIL".
 * Exit status 0 only if every rank passed.
 */
#include <ucoll.h>

#include "mp_util.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD 32
#define SENTINEL 0x5c

typedef struct {
    const char *name;
    ucoll_dtype_t dt;
    size_t size;
    int frac_bits, exp_bits, bias;
    double u; /* unit roundoff */
} tdt_t;

static const tdt_t F16 = {"float16", UCOLL_FLOAT16, 2, 10, 5, 15, 0x1p-11};
static const tdt_t BF16 = {"bfloat16", UCOLL_BFLOAT16, 2, 7, 8, 127, 0x1p-8};
static const tdt_t F32 = {"float32", UCOLL_FLOAT32, 4, 23, 8, 127, 0x1p-24};
static const tdt_t F64 = {"float64", UCOLL_FLOAT64, 8, 52, 11, 1023, 0x1p-53};

static int is16(const tdt_t *t)
{
    return t->size == 2;
}

static int g_rank, g_size;
static ucoll_comm_t *g_world;

/* ---------------------------------------------------------------- 16-bit encodings */

static double dec16(const tdt_t *t, uint16_t h)
{
    const unsigned mag = h & 0x7fffu, inf = ((1u << t->exp_bits) - 1) << t->frac_bits;
    const unsigned e = mag >> t->frac_bits, m = mag & ((1u << t->frac_bits) - 1);
    double v;
    if (mag > inf)
        v = NAN;
    else if (mag == inf)
        v = INFINITY;
    else if (e == 0)
        v = ldexp(m, 1 - t->bias - t->frac_bits);
    else
        v = ldexp(m + (1u << t->frac_bits), (int)e - t->bias - t->frac_bits);
    return (h & 0x8000u) ? -v : v;
}

/* the 16-bit pattern of v, which must be 0 or a normal value exact in the type */
static uint16_t enc16(const tdt_t *t, double v)
{
    uint16_t h = signbit(v) ? 0x8000u : 0;
    if (v != 0) {
        int e;
        const double m = frexp(fabs(v), &e);
        const unsigned fr = (unsigned)ldexp(m, t->frac_bits + 1);
        h |= (uint16_t)(((unsigned)(e - 1 + t->bias) << t->frac_bits) |
                        (fr & ((1u << t->frac_bits) - 1)));
    }
    if (dec16(t, h) != v) {
        printf("FATAL rank %d: %a is not exact in %s\n", g_rank, v, t->name);
        exit(2);
    }
    return h;
}

/* 1 if h is x rounded to nearest, ties to even (x finite, h finite and not near overflow) */
static int nearest16(const tdt_t *t, uint16_t h, double x)
{
    const unsigned mag = h & 0x7fffu;
    if (mag != 0 && !(h & 0x8000u) != !signbit(x))
        return 0;
    const double ax = fabs(x), dv = fabs(ax - dec16(t, (uint16_t)mag));
    for (int s = -1; s <= 1; s += 2) {
        if (mag == 0 && s < 0)
            continue;
        const double dn = fabs(ax - dec16(t, (uint16_t)(mag + (unsigned)s)));
        if (dn < dv || (dn == dv && (mag & 1u)))
            return 0;
    }
    return 1;
}

/* ---------------------------------------------------------------- elements */

static double get(const tdt_t *t, const void *buf, size_t i)
{
    const unsigned char *p = (const unsigned char *)buf + i * t->size;
    if (is16(t)) {
        uint16_t h;
        memcpy(&h, p, 2);
        return dec16(t, h);
    }
    if (t->dt == UCOLL_FLOAT32) {
        float f;
        memcpy(&f, p, 4);
        return f;
    }
    double d;
    memcpy(&d, p, 8);
    return d;
}

static uint64_t bits_of(const tdt_t *t, const void *buf, size_t i)
{
    uint64_t b = 0;
    memcpy(&b, (const unsigned char *)buf + i * t->size, t->size); /* little endian */
    return b;
}

static void put_bits(const tdt_t *t, void *buf, size_t i, uint64_t b)
{
    memcpy((unsigned char *)buf + i * t->size, &b, t->size);
}

/* an exact value v (0 or normal, exact in the type) */
static void put_exact(const tdt_t *t, void *buf, size_t i, double v)
{
    if (is16(t)) {
        put_bits(t, buf, i, enc16(t, v));
    } else if (t->dt == UCOLL_FLOAT32) {
        const float f = (float)v;
        memcpy((unsigned char *)buf + i * 4, &f, 4);
    } else {
        memcpy((unsigned char *)buf + i * 8, &v, 8);
    }
}

/* a value of sign s, exponent e (unbiased) and `fbits` random fraction bits (the top ones) */
static uint64_t make_bits(const tdt_t *t, int s, int e, uint64_t frac, int fbits)
{
    const int drop = t->frac_bits - fbits;
    frac &= (fbits >= 64 ? ~0ULL : (1ULL << fbits) - 1);
    return ((uint64_t)s << (8 * t->size - 1)) | ((uint64_t)(e + t->bias) << t->frac_bits) |
           (frac << drop);
}

enum { EXACT, RANDOM };

/* rank q's element i under (op, kind, salt), stored at buf (one element) */
static void gen(const tdt_t *t, ucoll_op_t op, int kind, uint64_t salt, int q, size_t i, void *buf)
{
    const uint64_t h = mpt_mix64(salt * 0x100000001b3ULL ^ mpt_mix64((uint64_t)q << 32 | i));
    const int s = (int)(h & 1);
    if (kind == EXACT) {
        if (op == UCOLL_OP_PROD) {
            static const double f[4] = {1.0, 2.0, 0.5, 1.0};
            put_exact(t, buf, 0, (s ? -1 : 1) * f[(h >> 1) & 3]);
        } else if (op == UCOLL_OP_MIN || op == UCOLL_OP_MAX) {
            put_exact(t, buf, 0, (double)((int)((h >> 1) % 201) - 100) / 4);
        } else { /* sums of p <= 2048/8 ranks stay exact even in float16 */
            put_exact(t, buf, 0, (double)((int)((h >> 1) % 17) - 8));
        }
        return;
    }
    const int fbits = t->dt == UCOLL_FLOAT64 ? 20 : t->frac_bits; /* double: sums exact */
    if (op == UCOLL_OP_PROD) {
        put_bits(t, buf, 0, make_bits(t, s, -(int)((h >> 1) & 1), h >> 8, fbits));
    } else if ((op == UCOLL_OP_MIN || op == UCOLL_OP_MAX) && is16(t)) {
        uint64_t b = h >> 16; /* any finite pattern: subnormals, zeros, huge values */
        const unsigned inf = ((1u << t->exp_bits) - 1) << t->frac_bits;
        while ((b & 0x7fffu) >= inf)
            b = mpt_mix64(b) & 0xffffu;
        put_bits(t, buf, 0, b & 0xffffu);
    } else {
        put_bits(t, buf, 0, make_bits(t, s, (int)((h >> 1) % 12) - 6, h >> 8, fbits));
    }
}

static void fill(const tdt_t *t, ucoll_op_t op, int kind, uint64_t salt, int q, void *buf, size_t n)
{
    for (size_t i = 0; i < n; i++)
        gen(t, op, kind, salt, q, i, (unsigned char *)buf + i * t->size);
}

/* ---------------------------------------------------------------- the reference check */

static const char *op_str(ucoll_op_t op)
{
    static const char *const names[] = {[UCOLL_OP_SUM] = "sum",
                                        [UCOLL_OP_PROD] = "prod",
                                        [UCOLL_OP_MIN] = "min",
                                        [UCOLL_OP_MAX] = "max",
                                        [UCOLL_OP_AVG] = "avg"};
    return names[op];
}

/* element i of the result of ranks lo..hi-1 combined by op (avg: over p = hi - lo ranks) */
static int check_elem(const char *name, const tdt_t *t, ucoll_op_t op, int kind, uint64_t salt,
                      int lo, int hi, const void *res, size_t i)
{
    unsigned char x[8];
    double S = 0, A = 0, P = 1, mn = INFINITY, mx = -INFINITY;
    for (int q = lo; q < hi; q++) {
        gen(t, op, kind, salt, q, i, x);
        const double v = get(t, x, 0);
        S += v; /* exact: see the generators */
        A += fabs(v);
        P *= v;
        mn = v < mn ? v : mn;
        mx = v > mx ? v : mx;
    }
    const int p = hi - lo;
    const double g = (p - 1) * t->u / (1 - (p - 1) * t->u);
    const double r = get(t, res, i);
    int ok;
    double want;
    switch (op) {
    case UCOLL_OP_MIN:
    case UCOLL_OP_MAX:
        want = op == UCOLL_OP_MIN ? mn : mx;
        ok = r == want;
        break;
    case UCOLL_OP_PROD:
        want = P; /* |P| in [2^-p, 2^p]: its rounding in double (p - 1 of them) is the slack */
        ok = kind == EXACT ? r == P : fabs(r - P) <= g * fabs(P) + p * 0x1p-53 * fabs(P);
        break;
    case UCOLL_OP_SUM:
        want = S;
        ok = kind == EXACT ? r == S : fabs(r - S) <= g * A;
        break;
    default: /* AVG */
        want = S / p;
        if (kind == EXACT && is16(t))
            ok = nearest16(t, (uint16_t)bits_of(t, res, i), S / p); /* S exact: one rounding */
        else if (kind == EXACT && t->dt == UCOLL_FLOAT32)
            ok = r == (double)(float)(S / p); /* 53 >= 2 * 24 + 2: that double rounding is exact */
        else if (kind == EXACT)
            ok = r == S / p;
        else
            ok = fabs(r - S / p) <= g * A / p + t->u * (fabs(S) + g * A) / p;
        break;
    }
    return mpt_check(ok, name, "%s %s element %zu: %.17g (0x%llx), expected %.17g%s", t->name,
                     op_str(op), i, r, (unsigned long long)bits_of(t, res, i), want,
                     kind == RANDOM ? " within the bound" : "");
}

/* ---------------------------------------------------------------- buffers */

typedef struct {
    unsigned char *mem; /* [GUARD][bytes][GUARD] */
    size_t bytes;
} gbuf_t;

static void gb_init(gbuf_t *b, size_t bytes)
{
    b->bytes = bytes;
    b->mem = malloc(bytes + 2 * GUARD);
    if (b->mem == NULL) {
        printf("FATAL rank %d: out of memory\n", g_rank);
        exit(2);
    }
    memset(b->mem, SENTINEL, bytes + 2 * GUARD);
}

static void *gb(const gbuf_t *b)
{
    return b->mem + GUARD;
}

/* 1 if bytes [from, to) of the payload and both guards still hold the sentinel */
static int gb_untouched(const gbuf_t *b, size_t from, size_t to)
{
    for (size_t k = 0; k < GUARD; k++)
        if (b->mem[k] != SENTINEL || b->mem[GUARD + b->bytes + k] != SENTINEL)
            return 0;
    for (size_t k = from; k < to; k++)
        if (b->mem[GUARD + k] != SENTINEL)
            return 0;
    return 1;
}

/* ---------------------------------------------------------------- one case */

typedef struct {
    ucoll_coll_t coll;
    const tdt_t *t;
    ucoll_op_t op;
    int kind;
    size_t count;
    int root, in_place;
    mpt_form_t form;
    const char *alg;
} case_t;

static uint64_t g_salt = 1;

/* every rank's result bits equal (allreduce), by a MIN and a MAX over them */
static void check_same_bits(const char *name, const case_t *c, const void *res)
{
    const ucoll_dtype_t ut = c->t->size == 2   ? UCOLL_UINT16
                             : c->t->size == 4 ? UCOLL_UINT32
                                               : UCOLL_UINT64;
    const size_t bytes = c->count * c->t->size;
    unsigned char *lo = malloc(bytes), *hi = malloc(bytes);
    if (lo == NULL || hi == NULL)
        exit(2);
    mpt_expect_st(ucoll_allreduce(g_world, res, lo, c->count, ut, UCOLL_OP_MIN), UCOLL_OK, name,
                  "MIN of the result bits");
    mpt_expect_st(ucoll_allreduce(g_world, res, hi, c->count, ut, UCOLL_OP_MAX), UCOLL_OK, name,
                  "MAX of the result bits");
    mpt_check(memcmp(lo, res, bytes) == 0 && memcmp(hi, res, bytes) == 0, name,
              "the ranks' results differ");
    free(lo);
    free(hi);
}

static void run_case(const case_t *c)
{
    char name[256];
    snprintf(name, sizeof(name), "%s %s %s %s count %zu root %d%s %s alg %s",
             mpt_coll_name(c->coll), c->t->name, op_str(c->op),
             c->kind == EXACT ? "exact" : "random", c->count, c->root,
             c->in_place ? " in place" : "", mpt_form_names[c->form], c->alg);
    const size_t bytes = c->count * c->t->size;
    const int is_reduce = c->coll == UCOLL_COLL_REDUCE;
    const int holds = !is_reduce || g_rank == c->root;
    /* reduce in place: the root only (the others pass their input as sendbuf) */
    const int in_place = c->in_place && (!is_reduce || g_rank == c->root);
    gbuf_t sb, rb;
    gb_init(&sb, bytes);
    gb_init(&rb, bytes);
    ucoll_request_t *req = NULL;
    const int reps = c->form == MPT_PERSISTENT ? 2 : 1;
    for (int rep = 0; rep < reps; rep++) {
        const uint64_t salt = g_salt + (uint64_t)rep;
        memset(rb.mem, SENTINEL, bytes + 2 * GUARD);
        fill(c->t, c->op, c->kind, salt, g_rank, in_place ? gb(&rb) : gb(&sb), c->count);
        ucoll_status_t st = UCOLL_OK;
        if (rep == 0) {
            st = mpt_call(c->form, c->coll, g_world, in_place ? UCOLL_IN_PLACE : gb(&sb), gb(&rb),
                          c->count, c->t->dt, c->op, c->root, &req);
            if (!mpt_expect_st(st, UCOLL_OK, name, "the call"))
                break;
        }
        if (c->form == MPT_PERSISTENT)
            st = ucoll_start(req);
        if (st == UCOLL_OK && c->form != MPT_BLOCKING)
            st = ucoll_wait(req);
        if (!mpt_expect_st(st, UCOLL_OK, name, rep ? "the second start" : "the wait"))
            break;
        /* the input, as it was filled */
        if (!in_place) {
            gbuf_t want;
            gb_init(&want, bytes);
            fill(c->t, c->op, c->kind, salt, g_rank, gb(&want), c->count);
            mpt_check(memcmp(sb.mem, want.mem, bytes + 2 * GUARD) == 0, name, "sendbuf changed");
            free(want.mem);
        }
        if (!holds || c->count == 0) {
            mpt_check(gb_untouched(&rb, in_place ? bytes : 0, bytes), name,
                      "recvbuf written where no result belongs");
            continue;
        }
        mpt_check(gb_untouched(&rb, bytes, bytes), name, "write beyond recvbuf's count");
        long bad = 0;
        for (size_t i = 0; i < c->count && bad < 3; i++) {
            int lo = 0, hi = g_size;
            if (c->coll == UCOLL_COLL_SCAN)
                hi = g_rank + 1;
            else if (c->coll == UCOLL_COLL_EXSCAN)
                hi = g_rank;
            if (c->coll == UCOLL_COLL_EXSCAN && g_rank == 0)
                break; /* checked below */
            bad += !check_elem(name, c->t, c->op, c->kind, salt, lo, hi, gb(&rb), i);
        }
        if (c->coll == UCOLL_COLL_EXSCAN && g_rank == 0) {
            if (in_place) { /* its input stays */
                gbuf_t want;
                gb_init(&want, bytes);
                fill(c->t, c->op, c->kind, salt, g_rank, gb(&want), c->count);
                mpt_check(memcmp(rb.mem, want.mem, bytes + 2 * GUARD) == 0, name,
                          "exscan rank 0's recvbuf changed");
                free(want.mem);
            } else {
                mpt_check(gb_untouched(&rb, 0, bytes), name, "exscan rank 0's recvbuf written");
            }
        }
        if (c->coll == UCOLL_COLL_ALLREDUCE)
            check_same_bits(name, c, gb(&rb));
    }
    if (req != NULL && c->form != MPT_BLOCKING)
        mpt_expect_st(ucoll_request_free(req), UCOLL_OK, name, "request free");
    free(sb.mem);
    free(rb.mem);
    g_salt += 2;
}

/* ---------------------------------------------------------------- the lists */

static const char *const allreduce_algs[] = {"auto", "recursive-doubling", "rhrd", "rhrd-classic"};
static const char *const reduce_algs[] = {"auto", "binomial", "rhrd", "rhrd-classic"};
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static void set_alg(ucoll_coll_t coll, const char *alg)
{
    mpt_expect_st(ucoll_set_algorithm(g_world, coll, alg), UCOLL_OK, alg, "ucoll_set_algorithm");
}

int main(int argc, char **argv)
{
    int expect_size = -1, quick = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--expect-size") == 0 && i + 1 < argc)
            expect_size = atoi(argv[++i]);
        else if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else {
            fprintf(stderr, "usage: half_test --expect-size N [--quick]\n");
            return 2;
        }
    }
    ucoll_comm_t *world = NULL;
    if (ucoll_init(&world) != UCOLL_OK) {
        printf("FATAL: ucoll_init failed\n");
        return 2;
    }
    g_world = world;
    g_rank = ucoll_comm_rank(world);
    g_size = ucoll_comm_size(world);
    mpt_tally.rank = g_rank;
    mpt_tally.max_prints = 40;
    mpt_tally.fatal_lost_job = 1;
    if (expect_size > 0)
        mpt_check(g_size == expect_size, "job size", "%d ranks, expected %d", g_size, expect_size);

    const char *seg_env = getenv("UCOLL_SEGMENT_SIZE");
    const size_t seg = seg_env != NULL ? (size_t)strtoull(seg_env, NULL, 10) : 262144;
    const struct {
        const tdt_t *t;
        ucoll_op_t op;
    } combos[] = {{&F16, UCOLL_OP_SUM},   {&F16, UCOLL_OP_PROD}, {&F16, UCOLL_OP_MIN},
                  {&F16, UCOLL_OP_MAX},   {&F16, UCOLL_OP_AVG},  {&BF16, UCOLL_OP_SUM},
                  {&BF16, UCOLL_OP_PROD}, {&BF16, UCOLL_OP_MIN}, {&BF16, UCOLL_OP_MAX},
                  {&BF16, UCOLL_OP_AVG},  {&F32, UCOLL_OP_AVG},  {&F64, UCOLL_OP_AVG}};
    const ucoll_coll_t colls[] = {UCOLL_COLL_ALLREDUCE, UCOLL_COLL_REDUCE};
    long cases = 0, rot = 0;
    for (size_t ci = 0; ci < NELEM(colls); ci++) {
        const ucoll_coll_t coll = colls[ci];
        const char *const *algs = coll == UCOLL_COLL_REDUCE ? reduce_algs : allreduce_algs;
        for (size_t a = 0; a < (quick ? 1 : NELEM(allreduce_algs)); a++) {
            set_alg(coll, algs[a]);
            for (int root = 0; root < (coll == UCOLL_COLL_REDUCE ? g_size : 1); root++)
                for (size_t k = 0; k < NELEM(combos); k++) {
                    const size_t counts[5] = {0, 1, 7, 1000, seg / combos[k].t->size + 1};
                    for (int kind = EXACT; kind <= RANDOM; kind++)
                        for (size_t n = 0; n < 5; n++) {
                            /* auto: every form, in place and not; an explicit algorithm: one
                             * of the six per case, rotating */
                            const long sel = rot++;
                            for (int v = 0; v < 2 * MPT_NFORMS; v++) {
                                const int f = a == 0 ? v % MPT_NFORMS : (int)(sel % MPT_NFORMS);
                                const int ip = a == 0 ? v / MPT_NFORMS : (int)(sel / 3 % 2);
                                case_t c = {coll, combos[k].t, combos[k].op,  kind,   counts[n],
                                            root, ip,          (mpt_form_t)f, algs[a]};
                                run_case(&c);
                                cases++;
                                if (a > 0)
                                    break;
                            }
                        }
                }
        }
        set_alg(coll, "auto");
    }
    /* prefix reductions with 16-bit sums (exact integers) */
    const ucoll_coll_t prefix[] = {UCOLL_COLL_EXSCAN, UCOLL_COLL_SCAN};
    const tdt_t *halves[] = {&F16, &BF16};
    for (size_t ci = 0; ci < NELEM(prefix); ci++)
        for (size_t h = 0; h < NELEM(halves); h++) {
            const size_t counts[5] = {0, 1, 7, 1000, seg / 2 + 1};
            for (size_t n = 0; n < 5; n++)
                for (int f = 0; f < MPT_NFORMS; f++)
                    for (int ip = 0; ip <= 1; ip++) {
                        case_t c = {prefix[ci], halves[h], UCOLL_OP_SUM,  EXACT, counts[n],
                                    0,          ip,        (mpt_form_t)f, "auto"};
                        run_case(&c);
                        cases++;
                    }
        }
    /* UCOLL_CHECK: AVG against SUM is a mismatch, found before anything is written */
    const char *check_env = getenv("UCOLL_CHECK");
    if (check_env != NULL && strcmp(check_env, "1") == 0 && g_size > 1) {
        gbuf_t sb, rb;
        gb_init(&sb, 14);
        gb_init(&rb, 14);
        fill(&F16, UCOLL_OP_SUM, EXACT, 99, g_rank, gb(&sb), 7);
        unsigned char snap[14 + 2 * GUARD];
        memcpy(snap, sb.mem, sizeof(snap));
        ucoll_status_t st = ucoll_allreduce(world, gb(&sb), gb(&rb), 7, UCOLL_FLOAT16,
                                            g_rank == 0 ? UCOLL_OP_AVG : UCOLL_OP_SUM);
        mpt_expect_st(st, UCOLL_ERR_MISMATCH, "UCOLL_CHECK avg against sum", "the allreduce");
        mpt_check(gb_untouched(&rb, 0, 14) && memcmp(snap, sb.mem, sizeof(snap)) == 0,
                  "UCOLL_CHECK avg against sum", "a buffer was written");
        free(sb.mem);
        free(rb.mem);
        cases++;
    }

    int64_t fails = mpt_tally.fails, total = 0;
    mpt_expect_st(ucoll_allreduce(world, &fails, &total, 1, UCOLL_INT64, UCOLL_OP_SUM), UCOLL_OK,
                  "summary", "allreduce of the failures");
    if (g_rank == 0)
        printf("half_test np=%d: %ld cases, %ld checks on rank 0, %ld failed over all ranks; "
               "verdict: %s\n",
               g_size, cases, mpt_tally.checks, (long)total, total == 0 ? "PASS" : "FAIL");
    fflush(stdout);
    mpt_expect_st(ucoll_finalize(world), UCOLL_OK, "finalize", "ucoll_finalize");
    return mpt_tally.fails == 0 && total == 0 ? 0 : 1;
}
