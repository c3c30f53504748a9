/*
 * Unit tests of auto's cost model (src/alg/cost.c): figures counted from the schedules, the
 * critical-path (+) count, and which exscan algorithm auto picks. Expected values come from
 * algorithms.md (the 1.4 table, the linear chain) and hand calculation, not from the code.
 */
#include "alg/alg.h"
#include "alg/cost.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

static sched_figures_t figures(const char *name, int p)
{
    int param = 0;
    const alg_desc_t *alg = alg_lookup(UCOLL_COLL_EXSCAN, name, &param);
    sched_figures_t fig;
    ck_assert_ptr_nonnull(alg);
    ck_assert_int_eq(sched_figures(alg, param, p, 1, 1, 0, 0, &fig), 0);
    return fig;
}

/* the 1.4 table's rounds / max (+) for a few p, through sched_figures */
START_TEST(figures_match_table)
{
    static const struct {
        int p;
        const char *alg;
        unsigned rounds, ops;
    } rows[] = {
        {4, "1-doubling", 3, 2},     {9, "two-op-doubling", 4, 4},  {10, "roughly-halving", 4, 3},
        {17, "best-doubling", 5, 4}, {24, "roughly-halving", 5, 6}, {24, "best-doubling", 5, 5},
        {30, "best-doubling", 5, 7}, {36, "123-doubling", 6, 6},    {33, "two-op-doubling", 6, 8},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        sched_figures_t f = figures(rows[i].alg, rows[i].p);
        ck_assert_msg(f.rounds == rows[i].rounds && f.max_ops == rows[i].ops,
                      "%s p=%d: %u/%u, table says %u/%u", rows[i].alg, rows[i].p, f.rounds,
                      f.max_ops, rows[i].rounds, rows[i].ops);
        ck_assert_uint_ge(f.path_ops, 1);
    }
}
END_TEST

/* linear: one (+) per rank, but rank r's (+) waits for rank r-1's: p - 2 on the path */
START_TEST(linear_path_is_the_chain)
{
    for (int p = 3; p <= 64; p++) {
        sched_figures_t f = figures("linear", p);
        ck_assert_uint_eq(f.rounds, (unsigned)p - 1);
        ck_assert_uint_eq(f.max_ops, 1);
        ck_assert_uint_eq(f.path_ops, (unsigned)p - 2);
    }
    sched_figures_t f = figures("linear", 2);
    ck_assert_uint_eq(f.path_ops, 0);
}
END_TEST

/* a process's own (+) are one chain, so path_ops >= max_ops; each round adds at most two (+)
 * (W (+) V before sending, T (+) W after receiving). At p = 17, 1-doubling's last rank
 * receives in all 4 phase-2 rounds and every chain through it has 4 (+) (table: 5 / 4). */
START_TEST(path_bounds_max_ops_for_doubling)
{
    for (int p = 2; p <= 300; p++) {
        sched_figures_t f = figures("best-doubling", p);
        ck_assert_uint_ge(f.path_ops, f.max_ops); /* some process's own (+) form a chain */
        ck_assert_uint_le(f.path_ops, 2 * f.rounds);
    }
    ck_assert_uint_eq(figures("1-doubling", 17).path_ops, 4);
    ck_assert_uint_eq(figures("1-doubling", 17).max_ops, 4);
}
END_TEST

/* which exscan algorithm auto picks */
START_TEST(auto_choices)
{
    size_t n;
    cost_exscan_candidates(&n);
    sched_figures_t *figs = calloc(n, sizeof(*figs));
    const cost_params_t cheap = {1.0, 0.1, 0.0}, costly = {1.0, 0.1, 50.0};
    struct {
        int p;
        double bytes;
        const cost_params_t *cost;
        const char *expect;
    } cases[] = {
        /* free (+): fewest rounds; ties go to roughly-halving (first candidate) */
        {9, 8, &cheap, "roughly-halving"},
        /* p = 24: both ceil(log2 p) = 5 rounds; best-doubling 5 (+) vs roughly-halving 6 */
        {24, 8, &costly, "best-doubling"},
        /* p = 10: roughly-halving 3 (+) against best-doubling's 4, same rounds */
        {10, 8, &costly, "roughly-halving"},
        /* expensive (+), large vector, p = 100: one more round (8 vs 7) buys fewer (+) on the
         * path (7 vs 8): 1-doubling */
        {100, 65536, &costly, "1-doubling"},
        /* p = 2: a single round with no (+) for everyone: first candidate */
        {2, 8, &costly, "roughly-halving"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int have = 0;
        const char *got = cost_auto_exscan(cases[i].p, cases[i].bytes, cases[i].cost, figs, &have);
        ck_assert_ptr_nonnull(got);
        ck_assert_msg(strcmp(got, cases[i].expect) == 0, "p=%d m=%g: auto picked %s, expected %s",
                      cases[i].p, cases[i].bytes, got, cases[i].expect);
    }
    free(figs);
}
END_TEST

START_TEST(prediction_formula)
{
    sched_figures_t f = {4, 3, 5};
    cost_params_t c = {2.0, 0.5, 0.25};
    /* 4*(2 + 1000*0.5e-3) + 5*1000*0.25e-3 = 10 + 1.25 */
    ck_assert_double_eq_tol(cost_predict_us(&f, 1000, &c), 11.25, 1e-9);
}
END_TEST

START_TEST(fixed_auto_thresholds)
{
    ck_assert_str_eq(cost_auto_fixed(UCOLL_COLL_ALLREDUCE, 4095, 1, 4096, 4096),
                     "recursive-doubling");
    ck_assert_str_eq(cost_auto_fixed(UCOLL_COLL_ALLREDUCE, 4096, 1, 4096, 4096), "rhrd");
    ck_assert_str_eq(cost_auto_fixed(UCOLL_COLL_ALLREDUCE, 1 << 20, 0, 4096, 4096),
                     "recursive-doubling");
    ck_assert_str_eq(cost_auto_fixed(UCOLL_COLL_REDUCE, 1 << 20, 1, 4096, 4096), "rhrd");
    ck_assert_str_eq(cost_auto_fixed(UCOLL_COLL_REDUCE, 1 << 20, 0, 4096, 4096), "binomial");
    ck_assert_str_eq(cost_auto_fixed(UCOLL_COLL_SCAN, 8, 0, 0, 0), "doubling");
    ck_assert_ptr_null(cost_auto_fixed(UCOLL_COLL_EXSCAN, 8, 1, 0, 0));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cost");
    TCase *tc = tcase_create("cost");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, figures_match_table);
    tcase_add_test(tc, linear_path_is_the_chain);
    tcase_add_test(tc, path_bounds_max_ops_for_doubling);
    tcase_add_test(tc, auto_choices);
    tcase_add_test(tc, prediction_formula);
    tcase_add_test(tc, fixed_auto_thresholds);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
