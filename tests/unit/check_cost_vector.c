/*
 * Unit tests of auto's cost model for reduce, allreduce, bcast, scan and barrier
 * (src/alg/cost_vector.c): every closed form against the symbolic executor's count of the
 * schedules (rounds, volume in bytes, elements combined by the busiest process) for every
 * p <= 256, roots 0 and p - 1, commutative and not where the algorithm serves both, with a
 * count the figures' denominator divides; rounds alone for sampled p <= 4096 where a schedule
 * is O(log p) steps; the (+) on the critical path against the schedules' chains; the literal
 * rows of algorithms.md 2.4 and 4.3; and what auto picks.
 */
#include "alg/alg.h"
#include "alg/cost.h"
#include "log2_ref.h"
#include "symbolic.h"

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* fails only on failure (ck_assert_* writes a checkpoint on every passing assertion) */
#define REQUIRE(cond, ...)                                                                         \
    do {                                                                                           \
        if (!(cond))                                                                               \
            ck_abort_msg(__VA_ARGS__);                                                             \
    } while (0)

static const ucoll_coll_t vector_colls[] = {UCOLL_COLL_REDUCE, UCOLL_COLL_ALLREDUCE,
                                            UCOLL_COLL_BCAST, UCOLL_COLL_SCAN, UCOLL_COLL_BARRIER};
#define NVECTOR_COLLS (sizeof(vector_colls) / sizeof(vector_colls[0]))

static symbolic_ws_t *ws;

static void ws_setup(void)
{
    ws = symbolic_ws_new();
    ck_assert_ptr_nonnull(ws);
}

static void ws_teardown(void)
{
    symbolic_ws_free(ws);
    ws = NULL;
}

static const alg_desc_t *lookup(ucoll_coll_t coll, const char *name)
{
    int param = 0;
    const alg_desc_t *alg = alg_lookup(coll, name, &param);
    REQUIRE(alg != NULL, "%s %s is not registered", alg_coll_name(coll), name);
    return alg;
}

/* one symbolic run against the closed form for that count (the closed form's den must divide
 * count, or the algorithm's figures must not depend on it) */
static void compare(const alg_desc_t *alg, int p, size_t count, size_t elem, int root, int comm)
{
    const char *cn = alg_coll_name(alg->coll);
    vector_figures_t f;
    REQUIRE(cost_vector_figures(alg, p, count, root, comm, &f) == 0, "%s %s p=%d: no closed form",
            cn, alg->name, p);
    REQUIRE(count % f.den == 0, "%s %s p=%d: count %zu is not a multiple of den %llu", cn,
            alg->name, p, count, (unsigned long long)f.den);
    symbolic_result_t res;
    const int rc = symbolic_run_ws(ws, alg, 0, alg->coll, p, count, elem, root, comm, &res);
    REQUIRE(rc == 0 && res.ok, "%s %s p=%d count=%zu root=%d commutative=%d: %s", cn, alg->name, p,
            count, root, comm, res.error);
    const uint64_t unit = count / f.den;
    uint64_t op_elems = 0;
    for (int r = 0; r < p; r++)
        op_elems = res.rank_op_elems[r] > op_elems ? res.rank_op_elems[r] : op_elems;
    REQUIRE(res.rounds == f.rounds && res.volume_bytes == f.volume * unit * elem &&
                op_elems == f.ops * unit,
            "%s %s p=%d count=%zu root=%d commutative=%d: closed form %u rounds, %llu/%llu "
            "volume, %llu/%llu (+); schedules %u rounds, %llu bytes, %llu elements",
            cn, alg->name, p, count, root, comm, f.rounds, (unsigned long long)f.volume,
            (unsigned long long)f.den, (unsigned long long)f.ops, (unsigned long long)f.den,
            res.rounds, (unsigned long long)res.volume_bytes, (unsigned long long)op_elems);
    REQUIRE(res.cpu_volume_bytes == f.cpu_volume * unit * elem,
            "%s %s p=%d count=%zu root=%d commutative=%d: closed form cpu volume %llu/%llu; "
            "schedules %llu bytes",
            cn, alg->name, p, count, root, comm, (unsigned long long)f.cpu_volume,
            (unsigned long long)f.den, (unsigned long long)res.cpu_volume_bytes);
    uint64_t copy_elems = 0;
    for (int r = 0; r < p; r++)
        copy_elems = res.rank_copy_elems[r] > copy_elems ? res.rank_copy_elems[r] : copy_elems;
    /* p = 1: the figures are 0 by definition (nothing to choose), the schedule still copies */
    REQUIRE(p == 1 || (copy_elems == f.copies * unit && res.max_msgs == f.msgs),
            "%s %s p=%d count=%zu root=%d commutative=%d: closed form copies %llu/%llu, %u "
            "messages a round; "
            "schedules copy %llu elements, %u messages",
            cn, alg->name, p, count, root, comm, (unsigned long long)f.copies,
            (unsigned long long)f.den, f.msgs, (unsigned long long)copy_elems, res.max_msgs);
    REQUIRE(cost_rounds_bound(alg, 0, p) >= res.rounds, "%s %s p=%d: rounds bound %u < %u", cn,
            alg->name, p, cost_rounds_bound(alg, 0, p), res.rounds);
    symbolic_result_free(&res);
}

/* every registered algorithm of the five collectives, every p in [p0, p1] */
static void sweep(int p0, int p1)
{
    for (size_t ci = 0; ci < NVECTOR_COLLS; ci++) {
        size_t n;
        const alg_desc_t *algs = alg_list(vector_colls[ci], &n);
        const int rooted =
            vector_colls[ci] == UCOLL_COLL_REDUCE || vector_colls[ci] == UCOLL_COLL_BCAST;
        for (size_t i = 0; i < n; i++)
            for (int p = p0; p <= p1; p++) {
                const int roots[] = {0, p - 1};
                for (int ri = 0; ri < (rooted && p > 1 ? 2 : 1); ri++)
                    for (int comm = 1; comm >= 0; comm--) {
                        if (!comm && !(algs[i].flags & ALG_ORDER_PRESERVING))
                            continue;
                        const size_t elem = 1 + (size_t)(p % 3);
                        if (vector_colls[ci] == UCOLL_COLL_BARRIER) {
                            compare(&algs[i], p, 0, elem, 0, comm);
                            continue;
                        }
                        vector_figures_t f;
                        REQUIRE(cost_vector_figures(&algs[i], p, SIZE_MAX, 0, comm, &f) == 0,
                                "%s %s: no closed form", alg_coll_name(algs[i].coll), algs[i].name);
                        /* two units per piece: no piece empty, none of a single element */
                        compare(&algs[i], p, 2 * (size_t)f.den, elem, roots[ri], comm);
                        /* below N elements the rhrd forms are binomial / recursive-doubling,
                         * whose figures hold for any count */
                        const size_t below = ((size_t)1 << flog2((uint64_t)p)) - 1;
                        if (strncmp(algs[i].name, "rhrd", 4) == 0 && below >= 1)
                            compare(&algs[i], p, below, elem, roots[ri], comm);
                    }
            }
    }
}

START_TEST(test_sweep_small)
{
    sweep(1, 40);
}
END_TEST

START_TEST(test_sweep_256)
{
    sweep(41, 256);
}
END_TEST

/* the (+) on the critical path of the algorithms on whole vectors (den 1), against the chains
 * sched_figures follows through the schedules' messages (REDUCE steps, each one vector here);
 * the pieces algorithms' path is their busiest process's (+) */
START_TEST(test_path)
{
    for (size_t ci = 0; ci < NVECTOR_COLLS; ci++) {
        size_t n;
        const alg_desc_t *algs = alg_list(vector_colls[ci], &n);
        for (size_t i = 0; i < n; i++)
            for (int p = 1; p <= 130; p++)
                for (int comm = 1; comm >= 0; comm--) {
                    if (!comm && !(algs[i].flags & ALG_ORDER_PRESERVING))
                        continue;
                    const int root = p - 1;
                    /* 1 element: the rhrd forms run their small-vector fallback */
                    vector_figures_t f;
                    REQUIRE(cost_vector_figures(&algs[i], p, 1, root, comm, &f) == 0,
                            "%s: no closed form", algs[i].name);
                    if (strcmp(algs[i].name, "tree") == 0) { /* a bound on the chain */
                        sched_figures_t sf;
                        REQUIRE(sched_figures(&algs[i], 0, p, 1, 1, root, comm, &sf) == 0,
                                "tree: sched_figures failed");
                        REQUIRE(f.path >= sf.path_ops && f.path >= f.ops,
                                "%s tree p=%d: path bound %llu, schedules %u, ops %llu",
                                alg_coll_name(algs[i].coll), p, (unsigned long long)f.path,
                                sf.path_ops, (unsigned long long)f.ops);
                        continue;
                    }
                    if (f.den != 1) {
                        REQUIRE(f.path == f.ops, "%s %s p=%d: path %llu, ops %llu",
                                alg_coll_name(algs[i].coll), algs[i].name, p,
                                (unsigned long long)f.path, (unsigned long long)f.ops);
                        continue;
                    }
                    sched_figures_t sf;
                    REQUIRE(sched_figures(&algs[i], 0, p, 1, 1, root, comm, &sf) == 0,
                            "%s: sched_figures failed", algs[i].name);
                    REQUIRE(sf.path_ops == f.path && sf.max_ops == f.ops,
                            "%s %s p=%d commutative=%d: closed form path %llu, ops %llu; "
                            "schedules %u, %u",
                            alg_coll_name(algs[i].coll), algs[i].name, p, comm,
                            (unsigned long long)f.path, (unsigned long long)f.ops, sf.path_ops,
                            sf.max_ops);
                }
    }
    /* literal: the linear scan's chain is p - 1, its busiest process 1 (+) */
    vector_figures_t f;
    ck_assert_int_eq(cost_vector_figures(lookup(UCOLL_COLL_SCAN, "linear"), 9, 1, 0, 0, &f), 0);
    ck_assert_uint_eq(f.path, 8);
    ck_assert_uint_eq(f.ops, 1);
    /* recursive-doubling scan at p = 6: 2*2 - 1 + [12 >= 12] = 4 on the path, 3 at most */
    ck_assert_int_eq(
        cost_vector_figures(lookup(UCOLL_COLL_SCAN, "recursive-doubling"), 6, 1, 0, 0, &f), 0);
    ck_assert_uint_eq(f.path, 4);
    ck_assert_uint_eq(f.ops, 3);
}
END_TEST

/* the most rounds of any rank's schedule, each built alone (no symbolic run) */
static unsigned built_rounds(sched_t *s, const alg_desc_t *alg, int p, size_t count, int root,
                             int comm)
{
    unsigned rounds = 0;
    for (int r = 0; r < p; r++) {
        sched_args_t a = {.rank = r,
                          .size = p,
                          .root = root,
                          .count = count,
                          .elem_size = 1,
                          .commutative = comm};
        sched_clear(s);
        REQUIRE(alg->build(s, &a) == 0, "%s %s p=%d rank %d: the builder failed",
                alg_coll_name(alg->coll), alg->name, p, r);
        rounds = s->nrounds > rounds ? s->nrounds : rounds;
    }
    return rounds;
}

/* p beyond 256 whose rounds are checked: around every power of two (where the formulas change)
 * and every 97th; every p up to 4096 would be about 90 M schedule builds, a minute */
static int sampled(int p)
{
    for (int k = 9; k <= 12; k++) {
        const int n = 1 << k;
        if (p == n - 1 || p == n || p == n + 1 || p == 3 * (n / 2))
            return 1;
    }
    return p % 97 == 0;
}

/* rounds for p up to 4096, for the algorithms whose schedules are O(log p) steps (the
 * pieces algorithms' are O(p) each: the sweep up to 256 covers them) */
START_TEST(test_rounds_4096)
{
    static const struct {
        ucoll_coll_t coll;
        const char *name;
        int root; /* 1: p - 1 */
        int comm;
    } algs[] = {
        {UCOLL_COLL_REDUCE, "binomial", 1, 0},
        {UCOLL_COLL_REDUCE, "binomial", 0, 1},
        {UCOLL_COLL_REDUCE, "rhrd", 1, 1},
        {UCOLL_COLL_REDUCE, "rhrd-classic", 1, 1},
        {UCOLL_COLL_ALLREDUCE, "recursive-doubling", 0, 0},
        {UCOLL_COLL_ALLREDUCE, "rhrd", 0, 1},
        {UCOLL_COLL_ALLREDUCE, "rhrd-classic", 0, 1},
        {UCOLL_COLL_BCAST, "binomial", 1, 1},
        {UCOLL_COLL_SCAN, "doubling", 0, 0},
        {UCOLL_COLL_SCAN, "recursive-doubling", 0, 0},
        {UCOLL_COLL_BARRIER, "dissemination", 0, 1},
    };
    sched_t s;
    sched_init(&s);
    for (size_t a = 0; a < sizeof(algs) / sizeof(algs[0]); a++) {
        const alg_desc_t *alg = lookup(algs[a].coll, algs[a].name);
        for (int p = 257; p <= 4096; p++) {
            if (!sampled(p))
                continue;
            const int root = algs[a].root ? p - 1 : 0;
            vector_figures_t f;
            REQUIRE(cost_vector_figures(alg, p, 2 * (size_t)p, root, algs[a].comm, &f) == 0,
                    "%s: no closed form", algs[a].name);
            const unsigned got = built_rounds(&s, alg, p, 2 * (size_t)p, root, algs[a].comm);
            REQUIRE(got == f.rounds, "%s %s p=%d: closed form %u rounds, schedules %u",
                    alg_coll_name(alg->coll), alg->name, p, f.rounds, got);
        }
    }
    sched_destroy(&s);
}
END_TEST

/* algorithms.md 2.4's table and 4.3's figures, as literal values: allreduce rhrd / rhrd-classic
 * rounds and volume as fractions of L, and rs-ag at p = 5, 6 */
START_TEST(test_literal_rows)
{
    static const struct {
        const char *name;
        int p;
        unsigned rounds;
        uint64_t vol_num, vol_den; /* volume = vol_num / vol_den of L */
    } rows[] = {
        {"rhrd", 3, 4, 2, 1},     {"rhrd-classic", 3, 5, 3, 1},
        {"rhrd", 5, 6, 5, 2},     {"rhrd-classic", 7, 7, 7, 2},
        {"rhrd", 9, 8, 11, 4},    {"rhrd-classic", 15, 9, 15, 4},
        {"rhrd", 17, 10, 23, 8},  {"rhrd-classic", 31, 11, 31, 8},
        {"rhrd", 33, 12, 47, 16}, {"rhrd-classic", 63, 13, 63, 16},
        {"rs-ag", 5, 6, 8, 5},    {"rs-ag", 6, 6, 5, 3},
        {"rhrd", 8, 6, 7, 4},     {"recursive-doubling", 5, 4, 4, 1},
        {"ring", 5, 8, 8, 5},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const alg_desc_t *alg = lookup(UCOLL_COLL_ALLREDUCE, rows[i].name);
        vector_figures_t f;
        ck_assert_int_eq(cost_vector_figures(alg, rows[i].p, SIZE_MAX, 0, 1, &f), 0);
        ck_assert_msg(f.rounds == rows[i].rounds &&
                          f.volume * rows[i].vol_den == rows[i].vol_num * f.den,
                      "%s p=%d: %u rounds, %llu/%llu L; algorithms.md: %u, %llu/%llu", rows[i].name,
                      rows[i].p, f.rounds, (unsigned long long)f.volume, (unsigned long long)f.den,
                      rows[i].rounds, (unsigned long long)rows[i].vol_num,
                      (unsigned long long)rows[i].vol_den);
    }
    /* reduce at p = 5: rhrd (1/2 + 2 * 3/4) L = 2 L in 5 rounds, classic (1 + 3/2) L in 6 */
    vector_figures_t f;
    ck_assert_int_eq(cost_vector_figures(lookup(UCOLL_COLL_REDUCE, "rhrd"), 5, SIZE_MAX, 0, 1, &f),
                     0);
    ck_assert_uint_eq(f.rounds, 5);
    ck_assert_uint_eq(f.volume, 2 * f.den);
    ck_assert_int_eq(
        cost_vector_figures(lookup(UCOLL_COLL_REDUCE, "rhrd-classic"), 5, SIZE_MAX, 0, 1, &f), 0);
    ck_assert_uint_eq(f.rounds, 6);
    ck_assert_uint_eq(2 * f.volume, 5 * f.den);
    /* a non-commutative reduce to a non-zero root: one more round, one more vector */
    const alg_desc_t *bin = lookup(UCOLL_COLL_REDUCE, "binomial");
    ck_assert_int_eq(cost_vector_figures(bin, 5, 8, 3, 0, &f), 0);
    ck_assert_uint_eq(f.rounds, 4);
    ck_assert_uint_eq(f.volume, 4);
    ck_assert_int_eq(cost_vector_figures(bin, 5, 8, 3, 1, &f), 0);
    ck_assert_uint_eq(f.rounds, 3);
    /* no closed form for another collective's algorithm */
    ck_assert_int_eq(cost_vector_figures(lookup(UCOLL_COLL_EXSCAN, "linear"), 5, 8, 0, 1, &f), -1);
}
END_TEST

/* the candidate lists are exactly the registered algorithms of each collective */
START_TEST(test_candidates_are_the_registry)
{
    for (size_t ci = 0; ci < NVECTOR_COLLS; ci++) {
        size_t n, nc;
        const alg_desc_t *algs = alg_list(vector_colls[ci], &n);
        const char *const *names = cost_vector_candidates(vector_colls[ci], &nc);
        ck_assert_uint_eq(n, nc);
        for (size_t i = 0; i < n; i++) {
            int found = 0;
            for (size_t j = 0; j < nc; j++)
                found += strcmp(algs[i].name, names[j]) == 0;
            ck_assert_msg(found == 1, "%s %s: %d times among auto's candidates",
                          alg_coll_name(vector_colls[ci]), algs[i].name, found);
        }
    }
    size_t n;
    ck_assert_ptr_null(cost_vector_candidates(UCOLL_COLL_EXSCAN, &n));
    ck_assert_uint_eq(n, 0);
    /* exscan's auto prices every candidate as sending its input (cost_auto_exscan_elems) */
    const alg_desc_t *exscan = alg_list(UCOLL_COLL_EXSCAN, &n);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(exscan[i].flags & ALG_SENDS_INPUT, "exscan %s does not send its input",
                      exscan[i].name);
}
END_TEST

START_TEST(test_prediction_formula)
{
    /* 3 rounds, 5/4 of the vector moved, 3/4 combined on the path (2/4 on the busiest
     * process); 10 elements of 8 bytes: a unit is ceil(10/4) = 3 elements = 24 bytes.
     * 3*2 + 5*24*0.5e-3 + 3*24*0.25e-3 = 6 + 0.06 + 0.018 */
    const vector_figures_t f = {.rounds = 3, .den = 4, .volume = 5, .ops = 2, .path = 3};
    const cost_params_t c = COST_PARAMS(2.0, 0.5, 0.25);
    ck_assert_double_eq_tol(cost_vector_predict_us(&f, 10, 8, &c), 6.078, 1e-9);
    ck_assert_double_eq_tol(cost_vector_predict_us(&f, 0, 8, &c), 6.0, 1e-9);
    /* 4/4 of the vector copied, priced as (+): 6 + 0.06 + (3 + 4)*24*0.25e-3 = 6.102 */
    vector_figures_t g = f;
    g.copies = 4;
    g.msgs = 3;
    ck_assert_double_eq_tol(cost_vector_predict_us(&g, 10, 8, &c), 6.102, 1e-9);
    /* 3 messages a round on 2 CPUs: every term 3/2 as long; on 3 CPUs unchanged */
    cost_params_t crowded = c;
    crowded.crowd_cpus = 2;
    ck_assert_double_eq_tol(cost_vector_predict_us(&g, 10, 8, &crowded), 9.153, 1e-9);
    crowded.crowd_cpus = 3;
    ck_assert_double_eq_tol(cost_vector_predict_us(&g, 10, 8, &crowded), 6.102, 1e-9);
    /* two paths: the rounds' average message, 5*24/3 = 40 bytes, is above small_max 32, so
     * alpha 10 and beta 0.1: 30 + 5*24*0.1e-3 + 7*24*0.25e-3 = 30.054; at small_max 40 the
     * small path's 6.102 */
    cost_params_t paths = c;
    paths.small_max = 32;
    paths.big_alpha_us = 10;
    paths.big_beta_ns = 0.1;
    ck_assert_double_eq_tol(cost_vector_predict_us(&g, 10, 8, &paths), 30.054, 1e-9);
    paths.small_max = 40;
    ck_assert_double_eq_tol(cost_vector_predict_us(&g, 10, 8, &paths), 6.102, 1e-9);
}
END_TEST

/* single copy (measured at init under auto): a message of sc_min..sc_max bytes of an
 * algorithm that sends its input takes its own alpha and beta, and only its receiver copies
 * it (volume, not cpu_volume, on one host) */
START_TEST(test_single_copy_formula)
{
    /* test_prediction_formula's g: 3 rounds, units of 24 bytes, the average message 40 B */
    const vector_figures_t g = {
        .rounds = 3, .den = 4, .volume = 5, .cpu_volume = 8, .ops = 2, .path = 3, .copies = 4};
    cost_params_t c = COST_PARAMS(2.0, 0.5, 0.25);
    c.small_max = 32;
    c.big_alpha_us = 10;
    c.big_beta_ns = 0.1;
    c.duplex_copies = 1;
    /* UCX: 3*10 + 8*24*0.1e-3 + 7*24*0.25e-3 = 30.0612 */
    ck_assert_double_eq_tol(cost_vector_predict_us(&g, 10, 8, &c), 30.0612, 1e-9);
    c.sc_min = 32;
    c.sc_max = 64;
    c.sc_alpha_us = 3;
    c.sc_beta_ns = 0.05;
    /* not an algorithm that sends its input: UCX's path still */
    ck_assert_double_eq_tol(cost_vector_predict_us(&g, 10, 8, &c), 30.0612, 1e-9);
    /* unless single copy was stated, which takes every algorithm's messages */
    c.sc_every = 1;
    ck_assert_double_eq_tol(cost_vector_predict_us(&g, 10, 8, &c), 9.048, 1e-9);
    c.sc_every = 0;
    /* single copy: 3*3 + 5*24*0.05e-3 + 7*24*0.25e-3 = 9.048 */
    c.sends_input = 1;
    ck_assert_double_eq_tol(cost_vector_predict_us(&g, 10, 8, &c), 9.048, 1e-9);
    c.sc_max = 0; /* no bound */
    ck_assert_double_eq_tol(cost_vector_predict_us(&g, 10, 8, &c), 9.048, 1e-9);
    c.sc_min = c.sc_max = 40; /* both bounds belong to the window */
    ck_assert_double_eq_tol(cost_vector_predict_us(&g, 10, 8, &c), 9.048, 1e-9);
    c.sc_min = 32;
    c.sc_max = 39; /* the 40 B message is above the bound */
    ck_assert_double_eq_tol(cost_vector_predict_us(&g, 10, 8, &c), 30.0612, 1e-9);
    c.sc_max = 64;
    c.sc_min = 41; /* below the minimum */
    ck_assert_double_eq_tol(cost_vector_predict_us(&g, 10, 8, &c), 30.0612, 1e-9);
    c.sc_min = 32;
    c.sc_beta_ns = 0; /* not measured */
    ck_assert_double_eq_tol(cost_vector_predict_us(&g, 10, 8, &c), 30.0612, 1e-9);
}
END_TEST

/* p = 2 on one host, 64 KiB = L (the rings to 4 KiB, UCX alpha 1.4 us and beta 0.075 ns/B, a
 * costly (+) of gamma 0.2): binomial reduce by two copies 1.4 + L*0.075 (its CPU volume, L)
 * + L*0.2 = 1.4 + 4.915 + 13.107 = 19.42 us; rhrd 2*1.4 + 1.5 L*0.075 (CPU volume: two halves
 * in, one out) + L/2*0.2 = 2.8 + 7.373 + 6.554 = 16.73: rhrd. Single copy measured fast (alpha
 * 1, beta 0.01) prices binomial 1 + 0.655 + 13.107 = 14.76: binomial; measured slow (alpha 10,
 * beta 0.2) 10 + 13.107 + 13.107 = 36.21: rhrd. At 1 MiB, outside the window, as without it.
 * Allreduce, whose algorithms do not send their input, chooses alike in every case */
START_TEST(test_single_copy_choice)
{
    const size_t m = 65536;
    cost_params_t c = COST_PARAMS(0.4, 0.2, 0.2);
    c.small_max = 4096;
    c.big_alpha_us = 1.4;
    c.big_beta_ns = 0.075;
    c.duplex_copies = 1;
    const cost_params_t two_copies = c;
    ck_assert_str_eq(cost_select_elems(UCOLL_COLL_REDUCE, 2, m, 1, 1, &c, 0, 0), "rhrd");
    const char *allreduce = cost_select_elems(UCOLL_COLL_ALLREDUCE, 2, m, 1, 1, &c, 0, 0);
    c.sc_min = 65536;
    c.sc_max = 524288;
    c.sc_alpha_us = 1;
    c.sc_beta_ns = 0.01;
    ck_assert_str_eq(cost_select_elems(UCOLL_COLL_REDUCE, 2, m, 1, 1, &c, 0, 0), "binomial");
    ck_assert_str_eq(cost_select_elems(UCOLL_COLL_ALLREDUCE, 2, m, 1, 1, &c, 0, 0), allreduce);
    ck_assert_str_eq(cost_select_elems(UCOLL_COLL_REDUCE, 2, 16 * m, 1, 1, &c, 0, 0),
                     cost_select_elems(UCOLL_COLL_REDUCE, 2, 16 * m, 1, 1, &two_copies, 0, 0));
    c.sc_alpha_us = 10;
    c.sc_beta_ns = 0.2;
    ck_assert_str_eq(cost_select_elems(UCOLL_COLL_REDUCE, 2, m, 1, 1, &c, 0, 0), "rhrd");
    ck_assert_str_eq(cost_select_elems(UCOLL_COLL_ALLREDUCE, 2, m, 1, 1, &c, 0, 0), allreduce);
}
END_TEST

static const char *pick(ucoll_coll_t coll, int p, size_t count, size_t elem, int comm)
{
    const cost_params_t dflt =
        COST_PARAMS(COST_DEFAULT_ALPHA_US, COST_DEFAULT_BETA_NS, COST_DEFAULT_GAMMA_NS);
    const char *name = cost_select_elems(coll, p, count, elem, comm, &dflt, 0, 0);
    REQUIRE(name != NULL, "%s p=%d: no choice", alg_coll_name(coll), p);
    return name;
}

/* with the defaults of ucoll_sched (1 us, 0.1 ns/B, 0.1 ns/B) */
START_TEST(test_auto_choices)
{
    const size_t M16 = 16u << 20;
    /* p = 5, 16 MiB: ring 8 rounds, 8/5 L, (+) 4/5 L, no copies: 8 + 4027 us, against rs-ag's
     * 6 rounds of the same volume and (+) and its 2 L of copies (6 + 7382) and rhrd's 6, 5/2 L,
     * 5/4 L */
    ck_assert_str_eq(pick(UCOLL_COLL_ALLREDUCE, 5, M16, 1, 1), "ring");
    ck_assert_str_eq(cost_select(UCOLL_COLL_ALLREDUCE, 5, M16, 1,
                                 &COST_PARAMS(COST_DEFAULT_ALPHA_US, COST_DEFAULT_BETA_NS,
                                              COST_DEFAULT_GAMMA_NS),
                                 0, 0),
                     "ring");
    /* p = 8: rhrd and rs-ag (6 rounds, 7/4 L, 7/8 L), rs-ag copies 2 L: rhrd */
    ck_assert_str_eq(pick(UCOLL_COLL_ALLREDUCE, 8, M16, 1, 1), "rhrd");
    /* p = 2, 16 MiB: rhrd halves the (+) for one round more */
    ck_assert_str_eq(pick(UCOLL_COLL_ALLREDUCE, 2, M16, 1, 1), "rhrd");
    /* 8 bytes: the fewest rounds */
    ck_assert_str_eq(pick(UCOLL_COLL_ALLREDUCE, 5, 8, 1, 1), "recursive-doubling");
    ck_assert_str_eq(pick(UCOLL_COLL_ALLREDUCE, 5, 1, 8, 1), "recursive-doubling");
    /* non-commutative, 16 MiB at p = 5: the ordered ring (8 rounds, 11/5 L, (+) L) beats
     * recursive-doubling (4 rounds, 4 L, 3 L) */
    ck_assert_str_eq(pick(UCOLL_COLL_ALLREDUCE, 5, M16, 1, 0), "ring");
    ck_assert_str_eq(pick(UCOLL_COLL_ALLREDUCE, 5, 8, 1, 0), "recursive-doubling");
    /* reduce p = 5: rhrd 5 rounds, 2 L, 5/4 L against binomial's 3, 3 L, 3 L */
    ck_assert_str_eq(pick(UCOLL_COLL_REDUCE, 5, M16, 1, 1), "rhrd");
    ck_assert_str_eq(pick(UCOLL_COLL_REDUCE, 5, M16, 1, 0), "binomial");
    ck_assert_str_eq(pick(UCOLL_COLL_REDUCE, 5, 8, 1, 1), "binomial");
    /* bcast p = 5: scatter-allgather 6 rounds, 8/5 L (6 + 2684 us) against binomial's 3, 3 L;
     * the pipeline's k = 71 (sqrt(3 * 1677.7) = 70.9): 74 rounds of L/71, 74 * (1 + 23.6) =
     * 1823 us; 8 bytes: k = 1, the chain's 4 rounds against binomial's 3 */
    ck_assert_str_eq(pick(UCOLL_COLL_BCAST, 5, M16, 1, 1), "pipeline");
    ck_assert_str_eq(pick(UCOLL_COLL_BCAST, 5, 8, 1, 1), "binomial");
    /* p = 64: k = 193 (the tag's 255 rounds), 255 * (1 + 8.7) = 2471 us against
     * scatter-allgather's 12 + 2 (63/64) L = 3315; p = 250: k = 7, 255 * (1 + 240) */
    ck_assert_str_eq(pick(UCOLL_COLL_BCAST, 64, M16, 1, 1), "pipeline");
    ck_assert_str_eq(pick(UCOLL_COLL_BCAST, 250, M16, 1, 1), "scatter-allgather");
    /* scan p = 8, 1 KiB: doubling 3 (+) on the path against recursive-doubling's 5 (the
     * pipeline's k is 1 there: 7 rounds); 16 MiB: pipeline:100, 106 rounds of m/100 and 106
     * segments of (+) on the path, 1886 + 1779 us against doubling's 3 + 5033 + 5033 */
    ck_assert_str_eq(pick(UCOLL_COLL_SCAN, 8, 1024, 1, 0), "doubling");
    ck_assert_str_eq(pick(UCOLL_COLL_SCAN, 8, M16, 1, 0), "pipeline");
    ck_assert_str_eq(pick(UCOLL_COLL_SCAN, 8, 8, 1, 0), "doubling");
    /* p = 3: all three 2 rounds, 2 vectors, 2 (+) on the path: the first, doubling; p = 5,
     * 1 KiB: linear's one (+) per process would beat doubling's 3, its chain of 4 does not.
     * Large vectors go to the pipeline: p = 3, 16 MiB: k = 41, 42 rounds, 1761 + 1719 us
     * against 6713; p = 5, 64 KiB: k = 4, 7 rounds, 18.5 + 11.5 us against 22.7 + 19.7 */
    ck_assert_str_eq(pick(UCOLL_COLL_SCAN, 3, 8, 1, 0), "doubling");
    ck_assert_str_eq(pick(UCOLL_COLL_SCAN, 5, 1024, 1, 0), "doubling");
    ck_assert_str_eq(pick(UCOLL_COLL_SCAN, 3, M16, 1, 0), "pipeline");
    ck_assert_str_eq(pick(UCOLL_COLL_SCAN, 5, 65536, 1, 0), "pipeline");
    ck_assert_str_eq(pick(UCOLL_COLL_BARRIER, 8, 0, 1, 1), "dissemination");
    /* one process: every candidate 0 rounds, the first */
    ck_assert_str_eq(pick(UCOLL_COLL_ALLREDUCE, 1, M16, 1, 1), "recursive-doubling");
    /* the thresholds, when set, force the old rule on their collective only */
    const cost_params_t dflt =
        COST_PARAMS(COST_DEFAULT_ALPHA_US, COST_DEFAULT_BETA_NS, COST_DEFAULT_GAMMA_NS);
    ck_assert_str_eq(cost_select(UCOLL_COLL_ALLREDUCE, 5, M16, 1, &dflt, 0, 32768), "rhrd");
    ck_assert_str_eq(cost_select(UCOLL_COLL_ALLREDUCE, 5, 1000, 1, &dflt, 0, 32768),
                     "recursive-doubling");
    ck_assert_str_eq(cost_select(UCOLL_COLL_ALLREDUCE, 5, M16, 1, &dflt, 32768, 0), "ring");
    ck_assert_str_eq(cost_select(UCOLL_COLL_REDUCE, 5, 1000, 1, &dflt, 16, 0), "rhrd");
    ck_assert_str_eq(cost_select(UCOLL_COLL_REDUCE, 5, M16, 1, &dflt, 0, 1u << 30), "rhrd");
}
END_TEST

/* 16 MiB: on p = 2^k rhrd (rs-ag's volume and (+) in as many rounds, but 2 L of copies);
 * otherwise the ring (2 (p-1)/p L and (p-1)/p L (+), no copies) while its 2 (p - 1) rounds fit
 * the tag's round field (p <= 128), then rhrd: (3N-2)/N L and (3N-2)/(2N) L (+), below rs-ag's
 * 2 (p-1)/p L, (p-1)/p L and 2 L of copies (4.48 against 4.98 L at p = 129, gamma = beta) */
START_TEST(test_large_allreduce_choice)
{
    for (int p = 2; p <= 4096; p++) {
        const char *got = pick(UCOLL_COLL_ALLREDUCE, p, 16u << 20, 1, 1);
        const char *want = (p & (p - 1)) == 0 ? "rhrd" : p <= 128 ? "ring" : "rhrd";
        REQUIRE(strcmp(got, want) == 0, "allreduce p=%d 16 MiB: auto %s, expected %s", p, got,
                want);
    }
}
END_TEST

/* on one host with fewer CPUs than ranks (3 ranks on 2 CPUs, as np = 3 here), a round of
 * scatter-allgather has 3 messages, binomial's 1 and the pipeline's 2. With a CPU per rank and
 * cheap copies (gamma 0.01) scatter-allgather takes 16 MiB in 4/3 L * 0.1 + L * 0.01 = 0.143 L
 * ns against binomial's 2 L * 0.1; crowded, 3/2 of that, 0.215 L: never scatter-allgather.
 * The pipeline (k = 92: sqrt(0.1e-3 * 16 MiB / 0.2) = 91.6) takes 93 rounds of L/92, 0.102 L
 * ns, crowded or not; from 4 KiB (k = 2: 3 (0.2 + 0.205) = 1.215 against binomial's 0.4 +
 * 0.819) it beats binomial. Where both ends copy (duplex copies) its middle rank copies every
 * segment twice, 2 L like binomial's two rounds, in more rounds: binomial at every size */
START_TEST(test_crowded_host_choice)
{
    cost_params_t c = COST_PARAMS(0.2, 0.1, 0.01);
    ck_assert_str_eq(cost_select_elems(UCOLL_COLL_BCAST, 3, 16u << 20, 1, 1, &c, 0, 0), "pipeline");
    c.crowd_cpus = 2;
    for (size_t m = 1; m <= (16u << 20); m *= 4) {
        const char *want = m >= 4096 ? "pipeline" : "binomial";
        const char *got = cost_select_elems(UCOLL_COLL_BCAST, 3, m, 1, 1, &c, 0, 0);
        REQUIRE(strcmp(got, want) == 0, "bcast p=3 %zu B on 2 CPUs: %s, expected %s", m, got, want);
    }
    /* no pipeline: binomial on 2 CPUs, scatter-allgather with a CPU per rank */
    const alg_desc_t *pipe = alg_lookup(UCOLL_COLL_BCAST, "pipeline", &(int){0});
    ck_assert_ptr_nonnull(pipe);
    vector_figures_t f;
    ck_assert_int_eq(cost_vector_figures_param(pipe, 92, 3, 16u << 20, 0, 1, &f), 0);
    ck_assert_uint_eq(f.msgs, 2);
    c.duplex_copies = 1;
    for (size_t m = 1; m <= (16u << 20); m *= 4) {
        const char *got = cost_select_elems(UCOLL_COLL_BCAST, 3, m, 1, 1, &c, 0, 0);
        REQUIRE(strcmp(got, "binomial") == 0, "bcast p=3 %zu B on 2 CPUs, both ends copying: %s", m,
                got);
    }
    /* a stated single copy from 128 KiB (the same alpha and beta): only the receiver copies, the
     * pipeline's segments of 16 MiB / 92 = 182 KiB are in the window, its middle rank copies
     * each once: the pipeline again at 16 MiB; bcast is no ALG_SENDS_INPUT algorithm, so auto's
     * single copy (sc_every 0) leaves it binomial */
    c.sc_min = 131072;
    c.sc_max = 0;
    c.sc_alpha_us = 0.2;
    c.sc_beta_ns = 0.1;
    ck_assert_str_eq(cost_select_elems(UCOLL_COLL_BCAST, 3, 16u << 20, 1, 1, &c, 0, 0), "binomial");
    c.sc_every = 1;
    ck_assert_str_eq(cost_select_elems(UCOLL_COLL_BCAST, 3, 16u << 20, 1, 1, &c, 0, 0), "pipeline");
    /* 64 KiB: below the window, both ends copy, binomial */
    ck_assert_str_eq(cost_select_elems(UCOLL_COLL_BCAST, 3, 65536, 1, 1, &c, 0, 0), "binomial");
}
END_TEST

/* tiny vectors (fewer elements than processes) keep the small-vector algorithms: the pieces
 * of rs-ag and scatter-allgather are whole elements, not count/p of one */
START_TEST(test_tiny_vectors)
{
    for (int p = 2; p <= 256; p++) {
        const size_t counts[] = {1, (size_t)p - 1};
        for (size_t i = 0; i < 2; i++) {
            REQUIRE(strcmp(pick(UCOLL_COLL_ALLREDUCE, p, counts[i], 8, 1), "recursive-doubling") ==
                        0,
                    "allreduce p=%d %zu doubles: %s", p, counts[i],
                    pick(UCOLL_COLL_ALLREDUCE, p, counts[i], 8, 1));
            REQUIRE(strcmp(pick(UCOLL_COLL_REDUCE, p, counts[i], 8, 1), "binomial") == 0,
                    "reduce p=%d %zu doubles: %s", p, counts[i],
                    pick(UCOLL_COLL_REDUCE, p, counts[i], 8, 1));
            REQUIRE(strcmp(pick(UCOLL_COLL_BCAST, p, counts[i], 8, 1), "binomial") == 0,
                    "bcast p=%d %zu doubles: %s", p, counts[i],
                    pick(UCOLL_COLL_BCAST, p, counts[i], 8, 1));
        }
    }
}
END_TEST

/* auto never names an algorithm beyond the tag's round field: ring allreduce (2(p-1) rounds)
 * and linear scan (p - 1) drop out from p = 129 and 257, however cheap the model finds them */
START_TEST(test_round_field)
{
    const cost_params_t free_rounds = COST_PARAMS(0.0, 1.0, 0.0);
    /* no latency: at p = 200 the ring (398 rounds) would tie rs-ag on volume; non-commutative
     * leaves recursive-doubling and the ring only */
    ck_assert_str_eq(cost_select(UCOLL_COLL_ALLREDUCE, 200, 1u << 20, 0, &free_rounds, 0, 0),
                     "recursive-doubling");
    ck_assert_str_eq(cost_select(UCOLL_COLL_ALLREDUCE, 128, 1u << 20, 0, &free_rounds, 0, 0),
                     "ring");
    ck_assert_uint_eq(cost_rounds_bound(lookup(UCOLL_COLL_ALLREDUCE, "ring"), 0, 129), 256);
    ck_assert_uint_eq(cost_rounds_bound(lookup(UCOLL_COLL_SCAN, "linear"), 0, 257), 256);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cost_vector");
    TCase *tc = tcase_create("cost_vector");
    tcase_add_checked_fixture(tc, ws_setup, ws_teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_literal_rows);
    tcase_add_test(tc, test_candidates_are_the_registry);
    tcase_add_test(tc, test_prediction_formula);
    tcase_add_test(tc, test_auto_choices);
    tcase_add_test(tc, test_large_allreduce_choice);
    tcase_add_test(tc, test_crowded_host_choice);
    tcase_add_test(tc, test_tiny_vectors);
    tcase_add_test(tc, test_round_field);
    tcase_add_test(tc, test_single_copy_formula);
    tcase_add_test(tc, test_single_copy_choice);
    tcase_add_test(tc, test_path);
    tcase_add_test(tc, test_sweep_small);
    suite_add_tcase(s, tc);
    /* p up to 256 against the symbolic runs and rounds up to 4096: most of the run time;
     * CK_EXCLUDE_TAGS=long (the sanitizer build) leaves it out */
    TCase *sw = tcase_create("closed forms, p <= 256 / 4096");
    tcase_add_checked_fixture(sw, ws_setup, ws_teardown);
    tcase_set_tags(sw, "long");
    tcase_set_timeout(sw, 1200);
    tcase_add_test(sw, test_sweep_256);
    tcase_add_test(sw, test_rounds_4096);
    suite_add_tcase(s, sw);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
