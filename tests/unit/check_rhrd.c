/*
 * Unit tests (Check) of the large-vector reduce/allreduce schedules `rhrd` and `rhrd-classic`
 * (src/alg/rhrd.c, algorithms.md 2.2-2.4), run through the symbolic executor: every process's
 * result for P = 1..64 and a sample of P up to 4096, and the exact critical-path figures
 * (rounds, volume) of the algorithms.md 2.4 table.
 *
 * N = largest power of two <= P, n = log2 N, L = count * elem_size bytes. When count is a
 * multiple of 2N (so every split is even):
 *                     allreduce                          reduce
 *   P = N (both)      2n rounds, 2(N-1)/N L              2n rounds, 2(N-1)/N L
 *   rhrd              2+2n rounds, (1 + 2(N-1)/N) L      1+2n rounds, (1/2 + 2(N-1)/N) L
 *   rhrd-classic      3+2n rounds, (2 + 2(N-1)/N) L      2+2n rounds, (1 + 2(N-1)/N) L
 *
 * How odd sizes round (count = m elements, m >= N; c(j) = ceil(m / 2^j), the largest block after
 * j halvings, since nested ceilings compose; g(k) = floor(c(k) / 2), the largest second part of
 * a split at depth k, which is what a gather step towards the root moves). In element units:
 *   allreduce P = N     2 * sum_{j=1..n} c(j)
 *   allreduce rhrd      4 c(1) + 2 * sum_{j=2..n} c(j)
 *   allreduce classic   c(1) + floor(m/2) + 2 * sum_{j=1..n} c(j) + m
 *   reduce P = N        sum_{j=1..n} c(j) + sum_{k=0..n-1} g(k)
 *   reduce rhrd         2 c(1) + sum_{j=2..n} c(j) + sum_{k=0..n-1} g(k)
 *   reduce classic      c(1) + floor(m/2) + sum_{j=1..n} c(j) + sum_{k=0..n-1} g(k)
 * i.e. every half-vector step costs the larger (first) half, the classic fold-in sends the
 * smaller one, and the gather to the root moves second parts only. Rounds do not depend on m.
 * For m < N (and P = 1) the builders fall back to reduce `binomial` / allreduce
 * `recursive-doubling`, whose figures they then have.
 */
#include "alg/alg.h"
#include "sched.h"
#include "symbolic.h"

#include <check.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { RHRD = 0, CLASSIC = 1 };
static const char *const ALG_NAME[2] = {"rhrd", "rhrd-classic"};

/* P beyond 64 that are checked too */
static const int BIG_P[] = {65,  96,   100,  127,  128,  129,  255,  256,  257,  383, 511,
                            513, 1000, 1023, 1024, 1025, 2047, 2049, 3000, 4095, 4096};
#define NBIG (int)(sizeof(BIG_P) / sizeof(BIG_P[0]))

static symbolic_ws_t *ws;

static void setup(void)
{
    ws = symbolic_ws_new();
    ck_assert_ptr_nonnull(ws);
}

static void teardown(void)
{
    symbolic_ws_free(ws);
    ws = NULL;
}

static int pow2_floor(int p)
{
    int n = 1;
    while (n <= p / 2)
        n *= 2;
    return n;
}

static int log2_of(int n)
{
    int k = 0;
    while ((1 << k) < n)
        k++;
    return k;
}

/* the P of test index i: 2..64, then BIG_P */
static int p_of(int i)
{
    return i < 63 ? i + 2 : BIG_P[i - 63];
}
#define NP (63 + NBIG)

static const alg_desc_t *get_alg(ucoll_coll_t coll, int which)
{
    int param = -1;
    const alg_desc_t *alg = alg_lookup(coll, ALG_NAME[which], &param);
    ck_assert_msg(alg != NULL, "%s not registered for %s", ALG_NAME[which], alg_coll_name(coll));
    ck_assert_int_eq(param, 0);
    return alg;
}

/* runs one collective; asserts it is correct; the result is returned for more checks */
static void run_ok(ucoll_coll_t coll, int which, int p, size_t count, size_t elem_size, int root,
                   symbolic_result_t *res)
{
    const alg_desc_t *alg = get_alg(coll, which);
    int rc = symbolic_run_ws(ws, alg, 0, coll, p, count, elem_size, root, 1, res);
    ck_assert_msg(rc == 0 && res->ok, "%s %s p=%d count=%zu elem=%zu root=%d: %s",
                  alg_coll_name(coll), ALG_NAME[which], p, count, elem_size, root, res->error);
}

/* expected rounds when count >= N */
static uint32_t expected_rounds(ucoll_coll_t coll, int which, int p)
{
    const int n2 = pow2_floor(p), n = log2_of(n2);
    if (p == n2)
        return (uint32_t)(2 * n);
    if (coll == UCOLL_COLL_ALLREDUCE)
        return (uint32_t)(which == RHRD ? 2 + 2 * n : 3 + 2 * n);
    return (uint32_t)(which == RHRD ? 1 + 2 * n : 2 + 2 * n);
}

/* the table's volume, L a multiple of 2N: written as the table writes it */
static uint64_t table_volume(ucoll_coll_t coll, int which, int p, uint64_t L)
{
    const uint64_t N = (uint64_t)pow2_floor(p);
    const uint64_t rs = 2 * (N - 1) * L / N; /* Rabenseifner's 2(N-1)/N L */
    if ((uint64_t)p == N)
        return rs;
    if (coll == UCOLL_COLL_ALLREDUCE)
        return which == RHRD ? L + rs : 2 * L + rs;
    return which == RHRD ? L / 2 + rs : L + rs;
}

/* the odd-size volume in elements (see the header comment); m >= N */
static uint64_t rounded_volume(ucoll_coll_t coll, int which, int p, uint64_t m)
{
    const int N = pow2_floor(p), n = log2_of(N);
    uint64_t c[64], halving = 0, gather = 0;
    c[0] = m;
    for (int j = 1; j <= n; j++)
        c[j] = (c[j - 1] + 1) / 2;
    for (int k = 0; k < n; k++)
        gather += c[k] / 2;
    if (p == N) {
        for (int j = 1; j <= n; j++)
            halving += c[j];
        return coll == UCOLL_COLL_ALLREDUCE ? 2 * halving : halving + gather;
    }
    if (which == RHRD) {
        for (int j = 2; j <= n; j++)
            halving += c[j];
        return coll == UCOLL_COLL_ALLREDUCE ? 4 * c[1] + 2 * halving : 2 * c[1] + halving + gather;
    }
    for (int j = 1; j <= n; j++)
        halving += c[j];
    if (coll == UCOLL_COLL_ALLREDUCE)
        return c[1] + m / 2 + 2 * halving + m;
    return c[1] + m / 2 + halving + gather;
}

static void check_figures(ucoll_coll_t coll, int which, int p, size_t count, size_t elem_size,
                          int root)
{
    symbolic_result_t res;
    run_ok(coll, which, p, count, elem_size, root, &res);
    const uint64_t L = (uint64_t)count * elem_size;
    const uint32_t er = expected_rounds(coll, which, p);
    const uint64_t ev = table_volume(coll, which, p, L);
    ck_assert_msg(res.rounds == er && res.volume_bytes == ev,
                  "%s %s p=%d L=%" PRIu64 " root=%d: rounds %" PRIu32 " (want %" PRIu32
                  "), volume %" PRIu64 " (want %" PRIu64 ")",
                  alg_coll_name(coll), ALG_NAME[which], p, L, root, res.rounds, er,
                  res.volume_bytes, ev);
    symbolic_result_free(&res);
}

/* ---------------------------------------------------------------- the table's figures */

/* loop index: P index * 4 + (coll, alg) */
START_TEST(test_table_figures)
{
    const int p = p_of(_i / 4);
    const ucoll_coll_t coll = (_i % 4) < 2 ? UCOLL_COLL_ALLREDUCE : UCOLL_COLL_REDUCE;
    const int which = _i % 2;
    const size_t n2 = (size_t)pow2_floor(p);
    const int roots[3] = {0, p - 1, p / 2};
    const int nroots = coll == UCOLL_COLL_REDUCE ? 3 : 1;
    for (int ri = 0; ri < nroots; ri++) {
        check_figures(coll, which, p, 2 * n2, 1, roots[ri]);
        check_figures(coll, which, p, 2 * n2 * 3, 1, roots[ri]);
        check_figures(coll, which, p, 2 * n2, 8, roots[ri]);
    }
}
END_TEST

/* the table of algorithms.md 2.4, literally (L = 2N * 64 bytes) */
START_TEST(test_table_rows)
{
    static const struct {
        int p, rounds_rhrd, rounds_classic;
        int num_rhrd, num_classic, den; /* volume / L as fractions */
    } rows[] = {
        {3, 4, 5, 2, 3, 1},       {5, 6, 7, 5, 7, 2},      {6, 6, 7, 5, 7, 2},
        {7, 6, 7, 5, 7, 2},       {9, 8, 9, 11, 15, 4},    {15, 8, 9, 11, 15, 4},
        {17, 10, 11, 23, 31, 8},  {31, 10, 11, 23, 31, 8}, {33, 12, 13, 47, 63, 16},
        {63, 12, 13, 47, 63, 16},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const int p = rows[i].p;
        const size_t count = 2 * (size_t)pow2_floor(p) * 64;
        symbolic_result_t res;
        run_ok(UCOLL_COLL_ALLREDUCE, RHRD, p, count, 1, 0, &res);
        ck_assert_uint_eq(res.rounds, (unsigned)rows[i].rounds_rhrd);
        ck_assert_uint_eq(res.volume_bytes * (uint64_t)rows[i].den,
                          (uint64_t)rows[i].num_rhrd * count);
        symbolic_result_free(&res);
        run_ok(UCOLL_COLL_ALLREDUCE, CLASSIC, p, count, 1, 0, &res);
        ck_assert_uint_eq(res.rounds, (unsigned)rows[i].rounds_classic);
        ck_assert_uint_eq(res.volume_bytes * (uint64_t)rows[i].den,
                          (uint64_t)rows[i].num_classic * count);
        symbolic_result_free(&res);
    }
}
END_TEST

/* ---------------------------------------------------------------- correctness, any count */

START_TEST(test_correct_any_count)
{
    const int p = _i + 1; /* 1..64 */
    const size_t n2 = (size_t)pow2_floor(p);
    const size_t counts[] = {0,      1,          2,          3,   n2 - 1, n2,  n2 + 1,
                             2 * n2, 2 * n2 + 1, 5 * n2 + 3, 999, 1000,   1001};
    const int roots[3] = {0, p - 1, p / 2};
    for (int c = 0; c < 2; c++) {
        const ucoll_coll_t coll = c == 0 ? UCOLL_COLL_ALLREDUCE : UCOLL_COLL_REDUCE;
        for (int which = 0; which < 2; which++)
            for (size_t ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++)
                for (int ri = 0; ri < (c == 0 ? 1 : 3); ri++) {
                    symbolic_result_t res;
                    run_ok(coll, which, p, counts[ci], 4, roots[ri], &res);
                    symbolic_result_free(&res);
                }
    }
}
END_TEST

START_TEST(test_correct_big_p)
{
    const int p = BIG_P[_i];
    const size_t n2 = (size_t)pow2_floor(p);
    const size_t counts[] = {3, n2 - 1, n2 + 1, 3 * n2 + 7, 100000};
    const int roots[3] = {0, p - 1, p / 2};
    for (int c = 0; c < 2; c++) {
        const ucoll_coll_t coll = c == 0 ? UCOLL_COLL_ALLREDUCE : UCOLL_COLL_REDUCE;
        for (int which = 0; which < 2; which++)
            for (size_t ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++)
                for (int ri = 0; ri < (c == 0 ? 1 : 3); ri++) {
                    symbolic_result_t res;
                    run_ok(coll, which, p, counts[ci], 1, roots[ri], &res);
                    symbolic_result_free(&res);
                }
    }
}
END_TEST

/* ---------------------------------------------------------------- odd sizes */

/* a few values worked out by hand from the header's rules */
START_TEST(test_odd_sizes_by_hand)
{
    static const struct {
        int p;
        size_t m;
        uint64_t all_rhrd, all_classic, red_rhrd, red_classic;
    } cases[] = {
        /* P=3, N=2, m=7: c(1)=4, floor(7/2)=3. allreduce rhrd 4 halves = 16; classic
         * 4 + 3 + 2*4 + 7 = 22; reduce rhrd 4 + 4 + 3 = 11; classic 4 + 3 + 4 + 3 = 14 */
        {3, 7, 16, 22, 11, 14},
        /* P=7, N=4, m=7: c=(4,2), g=(3,2). rhrd 4*4 + 2*2 = 20; classic 4+3+2*(4+2)+7 = 26;
         * reduce rhrd 8 + 2 + 5 = 15; classic 7 + 6 + 5 = 18 */
        {7, 7, 20, 26, 15, 18},
        /* P=4 (P = N), m=5: c=(3,2), g=(2,1): allreduce 2*(3+2) = 10; reduce 5 + 3 = 8 */
        {4, 5, 10, 10, 8, 8},
        /* P=12, N=8, m=29: c=(15,8,4), g=(14,7,4). rhrd 60 + 2*12 = 84; classic
         * 15+14+2*27+29 = 112; reduce rhrd 30 + 12 + 25 = 67; classic 29 + 27 + 25 = 81 */
        {12, 29, 84, 112, 67, 81},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const uint64_t want[2][2] = {{cases[i].all_rhrd, cases[i].all_classic},
                                     {cases[i].red_rhrd, cases[i].red_classic}};
        for (int c = 0; c < 2; c++)
            for (int which = 0; which < 2; which++) {
                const ucoll_coll_t coll = c == 0 ? UCOLL_COLL_ALLREDUCE : UCOLL_COLL_REDUCE;
                symbolic_result_t res;
                run_ok(coll, which, cases[i].p, cases[i].m, 1, 0, &res);
                ck_assert_msg(res.volume_bytes == want[c][which],
                              "%s %s p=%d m=%zu: volume %" PRIu64 ", want %" PRIu64,
                              alg_coll_name(coll), ALG_NAME[which], cases[i].p, cases[i].m,
                              res.volume_bytes, want[c][which]);
                ck_assert_uint_eq(res.rounds, expected_rounds(coll, which, cases[i].p));
                /* and the closed form agrees */
                ck_assert_uint_eq(res.volume_bytes,
                                  rounded_volume(coll, which, cases[i].p, cases[i].m));
                symbolic_result_free(&res);
            }
    }
}
END_TEST

/* the closed form for every P = 2..64 and several odd (and uneven) m >= N, elem_size 3 */
START_TEST(test_odd_sizes_closed_form)
{
    const int p = _i + 2;
    const size_t n2 = (size_t)pow2_floor(p);
    const size_t ms[] = {n2, n2 + 1, 2 * n2 + 1, 3 * n2 - 1, 1001, 4099};
    for (int c = 0; c < 2; c++)
        for (int which = 0; which < 2; which++)
            for (size_t mi = 0; mi < sizeof(ms) / sizeof(ms[0]); mi++) {
                const ucoll_coll_t coll = c == 0 ? UCOLL_COLL_ALLREDUCE : UCOLL_COLL_REDUCE;
                if (ms[mi] < n2)
                    continue;
                symbolic_result_t res;
                run_ok(coll, which, p, ms[mi], 3, p - 1, &res);
                const uint64_t want = 3 * rounded_volume(coll, which, p, ms[mi]);
                ck_assert_msg(
                    res.volume_bytes == want && res.rounds == expected_rounds(coll, which, p),
                    "%s %s p=%d m=%zu: volume %" PRIu64 " (want %" PRIu64 "), rounds %" PRIu32,
                    alg_coll_name(coll), ALG_NAME[which], p, ms[mi], res.volume_bytes, want,
                    res.rounds);
                symbolic_result_free(&res);
            }
}
END_TEST

/* ---------------------------------------------------------------- fallback, structure */

/* count < N (and P = 1): exactly the small-vector algorithm's figures */
START_TEST(test_small_fallback)
{
    const int p = _i == 0 ? 1 : p_of(_i - 1); /* 1, 2..64, BIG_P */
    const size_t n2 = (size_t)pow2_floor(p);
    const size_t counts[] = {0, 1, n2 - 1};
    for (int c = 0; c < 2; c++) {
        const ucoll_coll_t coll = c == 0 ? UCOLL_COLL_ALLREDUCE : UCOLL_COLL_REDUCE;
        int param;
        const alg_desc_t *small =
            alg_lookup(coll, c == 0 ? "recursive-doubling" : "binomial", &param);
        ck_assert_ptr_nonnull(small);
        for (size_t ci = 0; ci < 3; ci++) {
            if (counts[ci] >= n2 && p > 1)
                continue;
            symbolic_result_t want;
            ck_assert_int_eq(
                symbolic_run_ws(ws, small, param, coll, p, counts[ci], 8, p / 2, 1, &want), 0);
            const uint32_t rounds = want.rounds;
            const uint64_t volume = want.volume_bytes;
            symbolic_result_free(&want);
            for (int which = 0; which < 2; which++) {
                symbolic_result_t res;
                run_ok(coll, which, p, counts[ci], 8, p / 2, &res);
                ck_assert_uint_eq(res.rounds, rounds);
                ck_assert_uint_eq(res.volume_bytes, volume);
                symbolic_result_free(&res);
            }
        }
    }
}
END_TEST

static int same_region(sched_region_t x, sched_region_t y)
{
    return x.buf == y.buf && x.off == y.off && x.count == y.count;
}

static int overlap(sched_region_t x, sched_region_t y)
{
    return x.buf == y.buf && x.off < y.off + y.count && y.off < x.off + x.count;
}

/* what the executor's pipeline relies on, and the one-port rule, for count >= N: every message
 * non-empty; every REDUCE right after the XCHG that received its src or dst region exactly;
 * never reducing into the region being sent; a reduce's non-roots never name OUT */
START_TEST(test_structure)
{
    const int p = _i + 2;
    const size_t n2 = (size_t)pow2_floor(p);
    const size_t counts[] = {n2, 2 * n2 + 1, 1000};
    sched_t s;
    sched_init(&s);
    for (int c = 0; c < 2; c++)
        for (int which = 0; which < 2; which++)
            for (size_t ci = 0; ci < 3; ci++)
                for (int rank = 0; rank < p; rank++) {
                    const ucoll_coll_t coll = c == 0 ? UCOLL_COLL_ALLREDUCE : UCOLL_COLL_REDUCE;
                    const int root = p / 2;
                    if (counts[ci] < n2)
                        continue;
                    sched_clear(&s);
                    ck_assert_int_eq(symbolic_build(get_alg(coll, which), 0, p, rank, counts[ci], 1,
                                                    root, 1, &s),
                                     0);
                    int64_t last_round = -1;
                    for (size_t i = 0; i < s.nsteps; i++) {
                        const sched_step_t *st = &s.steps[i];
                        if (coll == UCOLL_COLL_REDUCE && rank != root) {
                            const int touches_out =
                                st->kind == SCHED_XCHG
                                    ? ((st->send_peer >= 0 && st->send.buf == SCHED_BUF_OUT) ||
                                       (st->recv_peer >= 0 && st->recv.buf == SCHED_BUF_OUT))
                                    : (st->src.buf == SCHED_BUF_OUT ||
                                       st->dst.buf == SCHED_BUF_OUT);
                            ck_assert_msg(!touches_out, "p=%d rank %d uses OUT", p, rank);
                        }
                        if (st->kind == SCHED_XCHG) {
                            ck_assert_int_gt((int64_t)st->round, last_round);
                            last_round = st->round;
                            ck_assert(st->send_peer < 0 || st->send.count > 0);
                            ck_assert(st->recv_peer < 0 || st->recv.count > 0);
                        } else if (st->kind == SCHED_REDUCE) {
                            ck_assert_msg(i > 0 && s.steps[i - 1].kind == SCHED_XCHG &&
                                              s.steps[i - 1].recv_peer >= 0,
                                          "%s p=%d rank %d step %zu: REDUCE not after a receive",
                                          ALG_NAME[which], p, rank, i);
                            const sched_step_t *x = &s.steps[i - 1];
                            ck_assert(same_region(x->recv, st->src) ||
                                      same_region(x->recv, st->dst));
                            ck_assert(x->send_peer < 0 || !overlap(x->send, st->dst));
                        }
                    }
                }
    sched_destroy(&s);
}
END_TEST

START_TEST(test_registry)
{
    for (int c = 0; c < 2; c++)
        for (int which = 0; which < 2; which++) {
            const ucoll_coll_t coll = c == 0 ? UCOLL_COLL_ALLREDUCE : UCOLL_COLL_REDUCE;
            const alg_desc_t *alg = get_alg(coll, which);
            /* commutative only: the core reroutes non-commutative ops */
            ck_assert_uint_eq(alg->flags & ALG_ORDER_PRESERVING, 0);
            ck_assert_uint_eq(alg->flags & ALG_PARAM_REQUIRED, 0);
        }
}
END_TEST

static Suite *rhrd_suite(void)
{
    Suite *s = suite_create("rhrd");
    TCase *tc = tcase_create("figures");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, test_table_figures, 0, NP * 4);
    tcase_add_test(tc, test_table_rows);
    tcase_add_test(tc, test_odd_sizes_by_hand);
    tcase_add_loop_test(tc, test_odd_sizes_closed_form, 0, 63);
    suite_add_tcase(s, tc);

    tc = tcase_create("correctness");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, test_correct_any_count, 0, 64);
    tcase_add_loop_test(tc, test_correct_big_p, 0, NBIG);
    tcase_add_loop_test(tc, test_small_fallback, 0, NP + 1);
    suite_add_tcase(s, tc);

    tc = tcase_create("structure");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, test_structure, 0, 63);
    tcase_add_test(tc, test_registry);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(rhrd_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
