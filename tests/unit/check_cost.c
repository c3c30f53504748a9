/*
 * Unit tests of auto's cost model (src/alg/cost.c, exscan_figures.c): figures counted from the
 * schedules, the critical-path (+) count, the closed forms against the schedules for every
 * p <= 4096, and which exscan algorithm auto picks. Expected values come from algorithms.md
 * (the 1.4 table, the linear chain), hand calculation and the schedules themselves, not from
 * the closed forms.
 */
#include "alg/alg.h"
#include "alg/cost.h"
#include "symbolic.h"
#include "tag.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

/*
 * The figures of sched_figures, counted from the schedules with memory reused across calls:
 * each rank's schedule is built into one sched_t and reduced to its exchanges (round, peer it
 * receives from, (+) applied before it), which are then replayed round by round. Checked
 * against sched_figures below; fast enough to sweep every p up to 4096.
 */
typedef struct {
    uint32_t round, nreduce;
    int32_t rank, from;
    /* a receive whose message is not lent: by the executor's own predicate
     * (sched_receive_lendable), so only the chain is counted independently here; run-tests.sh
     * ties the predicate to the executor's lent counts */
    int copied;
} xchg_event_t;

typedef struct {
    sched_t s;
    xchg_event_t *ev, *sorted;
    size_t *first; /* counting sort of events by round */
    unsigned *ops, *path, *sent, *tail, *cpath, *csent;
    size_t ev_cap, round_cap, p_cap;
} counter_t;

static void *grow(void *p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return p;
    size_t c = *cap ? *cap : 256;
    while (c < need)
        c *= 2;
    p = realloc(p, c * elem);
    if (p == NULL)
        ck_abort_msg("out of memory");
    *cap = c;
    return p;
}

static void counter_free(counter_t *c)
{
    sched_destroy(&c->s);
    free(c->ev);
    free(c->sorted);
    free(c->first);
    free(c->ops);
    free(c->path);
    free(c->sent);
    free(c->tail);
    free(c->cpath);
    free(c->csent);
}

static void count_figures(counter_t *c, const alg_desc_t *alg, int param, int p,
                          sched_figures_t *fig)
{
    size_t nev = 0;
    memset(fig, 0, sizeof(*fig));
    if ((size_t)p > c->p_cap) {
        size_t cap = c->p_cap;
        c->ops = grow(c->ops, &cap, (size_t)p, sizeof(unsigned));
        cap = c->p_cap;
        c->path = grow(c->path, &cap, (size_t)p, sizeof(unsigned));
        cap = c->p_cap;
        c->sent = grow(c->sent, &cap, (size_t)p, sizeof(unsigned));
        cap = c->p_cap;
        c->tail = grow(c->tail, &cap, (size_t)p, sizeof(unsigned));
        cap = c->p_cap;
        c->cpath = grow(c->cpath, &cap, (size_t)p, sizeof(unsigned));
        cap = c->p_cap;
        c->csent = grow(c->csent, &cap, (size_t)p, sizeof(unsigned));
        c->p_cap = cap;
    }
    for (int r = 0; r < p; r++) {
        sched_args_t a = {.rank = r, .size = p, .count = 1, .elem_size = 1, .param = param};
        sched_clear(&c->s);
        /* plain ifs in this loop: every ck_assert reports a mark point to the parent process */
        if (alg->build(&c->s, &a) != 0)
            ck_abort_msg("%s p=%d rank %d: the builder failed", alg->name, p, r);
        uint32_t nreduce = 0;
        int64_t last_round = -1;
        for (size_t i = 0; i < c->s.nsteps; i++) {
            const sched_step_t *st = &c->s.steps[i];
            if (st->kind == SCHED_REDUCE)
                nreduce++;
            if (st->kind != SCHED_XCHG)
                continue;
            /* sched_figures, too, expects one exchange per round, in round order */
            if ((int64_t)st->round <= last_round)
                ck_abort_msg("%s p=%d rank %d: two exchanges in round %u", alg->name, p, r,
                             st->round);
            last_round = st->round;
            if (nev == c->ev_cap) {
                size_t cap = c->ev_cap;
                c->sorted = grow(c->sorted, &cap, nev + 1, sizeof(xchg_event_t));
                c->ev = grow(c->ev, &c->ev_cap, nev + 1, sizeof(xchg_event_t));
            }
            c->ev[nev++] = (xchg_event_t){st->round, nreduce, r, st->recv_peer,
                                          st->recv_peer >= 0 && !sched_receive_lendable(&c->s, i)};
            nreduce = 0;
        }
        c->tail[r] = nreduce; /* (+) after the last exchange */
        if (c->s.nrounds > fig->rounds)
            fig->rounds = c->s.nrounds;
    }
    c->first = grow(c->first, &c->round_cap, (size_t)fig->rounds + 1, sizeof(size_t));
    memset(c->first, 0, ((size_t)fig->rounds + 1) * sizeof(size_t));
    for (size_t i = 0; i < nev; i++)
        c->first[c->ev[i].round + 1]++;
    for (uint32_t k = 1; k <= fig->rounds; k++)
        c->first[k] += c->first[k - 1];
    for (size_t i = 0; i < nev; i++)
        c->sorted[c->first[c->ev[i].round]++] = c->ev[i];
    memset(c->ops, 0, (size_t)p * sizeof(unsigned));
    memset(c->path, 0, (size_t)p * sizeof(unsigned));
    memset(c->cpath, 0, (size_t)p * sizeof(unsigned));
    for (size_t b = 0, e; b < nev; b = e) {
        /* one round: every (+) before the exchange, then every message delivered */
        for (e = b; e < nev && c->sorted[e].round == c->sorted[b].round; e++) {
            const xchg_event_t *x = &c->sorted[e];
            c->ops[x->rank] += x->nreduce;
            c->path[x->rank] += x->nreduce;
            c->sent[x->rank] = c->path[x->rank];
            c->csent[x->rank] = c->cpath[x->rank];
        }
        for (size_t i = b; i < e; i++) {
            const xchg_event_t *x = &c->sorted[i];
            if (x->from >= 0 && c->sent[x->from] > c->path[x->rank])
                c->path[x->rank] = c->sent[x->from];
            if (x->from >= 0 && c->csent[x->from] > c->cpath[x->rank])
                c->cpath[x->rank] = c->csent[x->from];
            c->cpath[x->rank] += x->copied;
        }
    }
    for (int r = 0; r < p; r++) {
        const unsigned ops = c->ops[r] + c->tail[r], path = c->path[r] + c->tail[r];
        fig->max_ops = ops > fig->max_ops ? ops : fig->max_ops;
        fig->path_ops = path > fig->path_ops ? path : fig->path_ops;
        fig->copied_path = c->cpath[r] > fig->copied_path ? c->cpath[r] : fig->copied_path;
    }
}

static void assert_same(const sched_figures_t *got, const sched_figures_t *want, const char *name,
                        int param, int p, const char *what)
{
    if (got->rounds != want->rounds || got->max_ops != want->max_ops ||
        got->path_ops != want->path_ops || got->copied_path != want->copied_path)
        ck_abort_msg("%s (param %d) p=%d: %s rounds/max_ops/path_ops/copied_path %u/%u/%u/%u, "
                     "schedules %u/%u/%u/%u",
                     name, param, p, what, got->rounds, got->max_ops, got->path_ops,
                     got->copied_path, want->rounds, want->max_ops, want->path_ops,
                     want->copied_path);
}

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
        /* and through the closed forms */
        int param = 0;
        const alg_desc_t *alg = alg_lookup(UCOLL_COLL_EXSCAN, rows[i].alg, &param);
        sched_figures_t c;
        ck_assert_int_eq(cost_exscan_figures(alg, param, rows[i].p, &c), 0);
        ck_assert_msg(c.rounds == rows[i].rounds && c.max_ops == rows[i].ops,
                      "%s p=%d: closed form %u/%u, table says %u/%u", rows[i].alg, rows[i].p,
                      c.rounds, c.max_ops, rows[i].rounds, rows[i].ops);
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
    const cost_params_t cheap = COST_PARAMS(1.0, 0.1, 0.0), costly = COST_PARAMS(1.0, 0.1, 50.0);
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
        /* expensive (+), 8 KiB, p = 100: one more round (8 vs 7) buys fewer (+) on the path
         * (7 vs 8): 1-doubling (the pipeline's k = 9 puts 106/9 vectors of (+) on its path) */
        {100, 8192, &costly, "1-doubling"},
        /* at 64 KiB the pipeline: k = 25, 123 rounds of m/25 and 122 segments (4.9 vectors) of
         * (+) on the path, 16146 us against 1-doubling's 22998 */
        {100, 65536, &costly, "pipeline"},
        /* p = 2: a single round with no (+) for everyone: first candidate */
        {2, 8, &costly, "roughly-halving"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        sched_figures_t fig;
        const char *got = cost_auto_exscan(cases[i].p, cases[i].bytes, cases[i].cost, &fig);
        ck_assert_ptr_nonnull(got);
        ck_assert_msg(strcmp(got, cases[i].expect) == 0, "p=%d m=%g: auto picked %s, expected %s",
                      cases[i].p, cases[i].bytes, got, cases[i].expect);
        /* the selection entry point the library calls picks the same */
        ck_assert_str_eq(cost_select(UCOLL_COLL_EXSCAN, cases[i].p, (size_t)cases[i].bytes, 1,
                                     cases[i].cost, 0, 0),
                         got);
        ck_assert_str_eq(cost_select(UCOLL_COLL_EXSCAN, cases[i].p, (size_t)cases[i].bytes, 0,
                                     cases[i].cost, 0, 0),
                         got);
        /* the chosen one's figures, as the schedules give them (pipeline: with the k the
         * library resolves it to, on the whole vector) */
        int param = 0;
        const alg_desc_t *alg = alg_lookup(UCOLL_COLL_EXSCAN, got, &param);
        ck_assert_ptr_nonnull(alg);
        param =
            cost_resolve_param(alg, param, cases[i].p, (size_t)cases[i].bytes, 1, cases[i].cost);
        sched_figures_t want;
        ck_assert_int_eq(
            sched_figures(alg, param, cases[i].p, (size_t)cases[i].bytes, 1, 0, 0, &want), 0);
        assert_same(&fig, &want, got, param, cases[i].p, "auto's");
    }
}
END_TEST

/* cost_sort: ascending, duplicates and negative values kept, in place; n 0 and 1 touch
 * nothing beyond v[0] */
START_TEST(sort_ascending_in_place)
{
    double v[7] = {3.5, -1, 8, 3.5, 0, 2e6, -7.25};
    const double want[7] = {-7.25, -1, 0, 3.5, 3.5, 8, 2e6};
    cost_sort(v, 7);
    for (int i = 0; i < 7; i++)
        ck_assert_double_eq(v[i], want[i]);
    double one[2] = {5, 1};
    cost_sort(one, 1);
    ck_assert_double_eq(one[0], 5);
    ck_assert_double_eq(one[1], 1);
    cost_sort(one, 0);
    ck_assert_double_eq(one[0], 5);
    ck_assert_double_eq(one[1], 1);
    double desc[5] = {5, 4, 3, 2, 1};
    cost_sort(desc, 5);
    for (int i = 0; i < 5; i++)
        ck_assert_double_eq(desc[i], i + 1);
}
END_TEST

/* fit (cost_fit_line or cost_fit_path) of the first n points of x, y returns 0 with intercept
 * want_a and slope want_b; a macro, so that a failure names the case's line */
#define ASSERT_FITS(fit, x, y, n, want_a, want_b)                                                  \
    do {                                                                                           \
        double got_a = -1, got_b = -1;                                                             \
        ck_assert_int_eq(fit(x, y, n, &got_a, &got_b), 0);                                         \
        ck_assert_double_eq(got_a, want_a);                                                        \
        ck_assert_double_eq(got_b, want_b);                                                        \
    } while (0)

/* the line through chained-bcast times: exact on a line, and one stretched time (a rank
 * descheduled during its chain) moves neither the slope nor the intercept; a two-point fit
 * would take the slope from the stretched point */
START_TEST(fit_line_ignores_one_outlier)
{
    const double x[4] = {1, 2, 4, 8};
    const double on_line[4] = {3.5, 4, 5, 7}; /* 3 + x/2 */
    ASSERT_FITS(cost_fit_line, x, on_line, 4, 3, 0.5);
    const double last_stretched[4] = {3.5, 4, 5, 100};
    ASSERT_FITS(cost_fit_line, x, last_stretched, 4, 3, 0.5);
    const double first_stretched[4] = {30, 4, 5, 7};
    ASSERT_FITS(cost_fit_line, x, first_stretched, 4, 3, 0.5);
    /* bcast sizes of 64 KiB to 512 KiB in us, the second one stretched: 2 + x / 65536 */
    const double bytes[4] = {65536, 131072, 262144, 524288}, second[4] = {3, 40, 6, 10};
    ASSERT_FITS(cost_fit_line, bytes, second, 4, 2, 1.0 / 65536);
    /* two points: their line */
    ASSERT_FITS(cost_fit_line, x, on_line, 2, 3, 0.5);
    /* refused, the outputs untouched */
    const double dup[2] = {1, 1};
    double a = -7, b = -7;
    ck_assert_int_eq(cost_fit_line(x, on_line, 1, &a, &b), -1);
    ck_assert_int_eq(cost_fit_line(dup, on_line, 2, &a, &b), -1);
    ck_assert_int_eq(cost_fit_line(x, on_line, COST_FIT_MAX_POINTS + 1, &a, &b), -1);
    ck_assert_double_eq(a, -7);
    ck_assert_double_eq(b, -7);
}
END_TEST

/* the rings' alpha and beta from chained-bcast times from 8 B up: the fitted line, except that
 * an intercept at or below 0 (two stretched chains can give one) takes the smallest size's
 * time instead, and a falling line prices no bytes at its median time */
START_TEST(fit_path_keeps_alpha_positive)
{
    const double x[4] = {1024, 2048, 4096, 8192};
    const double above[4] = {1.5, 2.5, 4.5, 8.5}; /* 0.5 + x / 1024 */
    ASSERT_FITS(cost_fit_path, x, above, 4, 0.5, 1.0 / 1024);
    const double below[4] = {0.5, 1.5, 3.5, 7.5}; /* -0.5 + x / 1024 */
    ASSERT_FITS(cost_fit_path, x, below, 4, 0.5, 1.0 / 1024);
    const double falling[4] = {8, 6, 4, 2};
    ASSERT_FITS(cost_fit_path, x, falling, 4, 5, 0); /* the median time, no slope */
    /* one size: its time, no slope */
    ASSERT_FITS(cost_fit_path, x, above, 1, 1.5, 0);
    double a = -7, b = -7;
    ck_assert_int_eq(cost_fit_path(x, above, 0, &a, &b), -1);
    ck_assert_double_eq(a, -7);
    ck_assert_double_eq(b, -7);
}
END_TEST

/* UCX's and single copy's alpha and beta from chained-bcast times of 64 KiB or more: the
 * fitted line where its bytes make at least a quarter of the largest size's time; else (the
 * smaller sizes' chains stretched under load: a CI run at 3 ranks on 2 CPUs fitted single
 * copy's beta <= 0, and init then left single copy out of the model) each byte is priced at
 * the largest size's time per byte and alpha at 0, so that the largest size costs what it
 * measured (cost_floor_alphas then raises alpha to the rings') */
START_TEST(fit_large_path_never_free_bytes)
{
    const double x[4] = {131072, 262144, 524288, 1048576};
    const double rising[4] = {12, 14, 18, 26}; /* 10 + x / 65536: bytes 16 of 26 us */
    ASSERT_FITS(cost_fit_large_path, x, rising, 4, 10, 1.0 / 65536);
    const double stretched_small[4] = {200, 180, 60, 100};
    double a = 0, b = 0;
    ck_assert_int_eq(cost_fit_line(x, stretched_small, 4, &a, &b), 0);
    ck_assert(b < 0);
    ASSERT_FITS(cost_fit_large_path, x, stretched_small, 4, 0, 100.0 / 1048576);
    const double flat[4] = {50, 50, 50, 50};
    ASSERT_FITS(cost_fit_large_path, x, flat, 4, 0, 50.0 / 1048576);
    /* rising, but its bytes only 4 of 64 us at 1 MiB (less than a quarter) */
    const double barely[4] = {60.5, 61, 62, 64}; /* 60 + x / 262144 */
    ASSERT_FITS(cost_fit_line, x, barely, 4, 60, 1.0 / 262144);
    ASSERT_FITS(cost_fit_large_path, x, barely, 4, 0, 64.0 / 1048576);
    /* a quarter exactly keeps the line: 48 + x / 65536, 16 of 64 us */
    const double quarter[4] = {50, 52, 56, 64};
    ASSERT_FITS(cost_fit_large_path, x, quarter, 4, 48, 1.0 / 65536);
    /* refused as cost_fit_line refuses, the outputs untouched */
    const double dup[2] = {1, 1};
    a = -7, b = -7;
    ck_assert_int_eq(cost_fit_large_path(x, rising, 1, &a, &b), -1);
    ck_assert_int_eq(cost_fit_large_path(dup, rising, 2, &a, &b), -1);
    ck_assert_double_eq(a, -7);
    ck_assert_double_eq(b, -7);
}
END_TEST

/* ranks on several hosts: alpha and beta from 8 B and 256 KiB bcasts (per round): alpha the
 * small time, beta the slope; where the large time is not above the small one (the small
 * iterations stretched) beta would be 0 or below, pricing no bytes across hosts: it is the
 * large time per byte instead, and alpha the smaller of the two times (the large time bounds
 * both; alpha is not 0, no other path floors it there) */
START_TEST(two_sizes_never_free_bytes)
{
    double a = -1, b = -1;
    cost_two_sizes(10, 10 + 262144 * 0.5e-3, 262144, &a, &b); /* 0.5 ns/B */
    ck_assert_double_eq(a, 10);
    ck_assert_double_eq_tol(b, 0.5, 1e-12);
    cost_two_sizes(10, 8, 262144, &a, &b);
    ck_assert_double_eq(a, 8);
    ck_assert_double_eq(b, 8e3 / 262144);
    cost_two_sizes(10, 10, 262144, &a, &b);
    ck_assert_double_eq(a, 10);
    ck_assert_double_eq(b, 10e3 / 262144);
}
END_TEST

/* a large message's fixed cost is never below a ring message's: an intercept fitted to large
 * sizes may fall below it (at 3 ranks on 2 CPUs 1-3 us against the rings' 4 us, each message
 * waiting for its rank to be scheduled), which priced extra rounds as nearly free */
START_TEST(large_paths_alpha_at_least_rings)
{
    cost_params_t c = COST_PARAMS(4.5, 0.2, 0.03);
    c.small_max = 4096;
    c.big_alpha_us = 1.5;
    c.big_beta_ns = 0.06;
    c.sc_min = 131072;
    c.sc_alpha_us = 0.5;
    c.sc_beta_ns = 0.05;
    cost_floor_alphas(&c);
    ck_assert_double_eq(c.big_alpha_us, 4.5);
    ck_assert_double_eq(c.sc_alpha_us, 4.5);
    ck_assert_double_eq(c.alpha_us, 4.5);
    ck_assert_double_eq(c.big_beta_ns, 0.06);
    ck_assert_double_eq(c.sc_beta_ns, 0.05);
    /* above the rings' already: unchanged */
    c.big_alpha_us = 6;
    c.sc_alpha_us = 5;
    cost_floor_alphas(&c);
    ck_assert_double_eq(c.big_alpha_us, 6);
    ck_assert_double_eq(c.sc_alpha_us, 5);
    /* no single copy, or one path only: nothing to floor */
    cost_params_t one = COST_PARAMS(2, 0.1, 0.1);
    cost_floor_alphas(&one);
    ck_assert_double_eq(one.big_alpha_us, 0);
    ck_assert_double_eq(one.sc_alpha_us, 0);
    c.sc_beta_ns = 0;
    c.sc_alpha_us = 0;
    cost_floor_alphas(&c);
    ck_assert_double_eq(c.sc_alpha_us, 0);
}
END_TEST

START_TEST(prediction_formula)
{
    sched_figures_t f = {4, 3, 5, 1, 4};
    cost_params_t c = COST_PARAMS(2.0, 0.5, 0.25);
    /* 4*(2 + 1000*0.5e-3) + 5*1000*0.25e-3 = 10 + 1.25 */
    ck_assert_double_eq_tol(cost_predict_us(&f, 1000, &c), 11.25, 1e-9);
    /* a second path above 512 bytes, alpha 10, beta 0.1: 4*(10 + 1000*0.1e-3) + 1.25 = 41.65;
     * 500 bytes stay on the first: 4*(2 + 0.25) + 5*500*0.25e-3 = 9.625 */
    c.small_max = 512;
    c.big_alpha_us = 10;
    c.big_beta_ns = 0.1;
    ck_assert_double_eq_tol(cost_predict_us(&f, 1000, &c), 41.65, 1e-9);
    ck_assert_double_eq_tol(cost_predict_us(&f, 500, &c), 9.625, 1e-9);
    /* 4 segments of 250 bytes take the first path: 4*(2 + 0.125) + 5*250*0.25e-3 = 8.8125 */
    f.segments = 4;
    ck_assert_double_eq_tol(cost_predict_us(&f, 1000, &c), 8.8125, 1e-9);
}
END_TEST

/* single copy from regions (sc_lends): a lent receive costs no copy, so the bandwidth term
 * takes copied_path instead of rounds, for the messages that go by single copy only */
START_TEST(prediction_with_lent_receives)
{
    sched_figures_t f = {4, 3, 5, 1, 2};
    cost_params_t c = COST_PARAMS(2.0, 0.5, 0.25);
    c.sc_min = 1000;
    c.sc_alpha_us = 3;
    c.sc_beta_ns = 0.2;
    c.sc_every = 1;
    /* no lending: 4*(3 + 1000*0.2e-3) + 5*1000*0.25e-3 = 12.8 + 1.25 */
    ck_assert_double_eq_tol(cost_predict_us(&f, 1000, &c), 14.05, 1e-9);
    /* lending: 4*3 + 2*1000*0.2e-3 + 1.25 = 13.65 */
    c.sc_lends = 1;
    ck_assert_double_eq_tol(cost_predict_us(&f, 1000, &c), 13.65, 1e-9);
    /* below sc_min nothing is lent: 4*(2 + 999*0.5e-3) + 5*999*0.25e-3 */
    ck_assert_double_eq_tol(cost_predict_us(&f, 999, &c), 4 * (2 + 0.4995) + 1.24875, 1e-9);
}
END_TEST

/* 3 ranks on 2 CPUs under UCOLL_SINGLE_COPY_MIN=regions, as measured at init (2026-12-07):
 * single copy from 128 KiB, alpha 3.915 us, beta 0.0488 ns/B, gamma 0.0244. Priced with
 * every message copied, the pipeline wins from 256 KiB: at 16 MiB (k = 12) 13 (3.915 +
 * 68.2) + 409.4 = 1347 us against a doubling's 2 (3.915 + 818.7) + 409.4 = 2055. The
 * doublings' second receive at rank 2 is lent (its (+) reads it in place), the pipeline's
 * never are (each segment lands in OUT): 7.8 + 818.7 + 409.4 = 1236 us, and a doubling wins
 * (roughly-halving, the first of equals). ucoll_perf -M measured 2519-2540 us for the
 * doublings, 3142 for the pipeline. */
START_TEST(auto_with_lent_receives)
{
    cost_params_t c = COST_PARAMS(3.915, 0.1984, 0.0244);
    c.small_max = 4096;
    c.big_alpha_us = 4.054;
    c.big_beta_ns = 0.0371;
    c.crowd_cpus = 2;
    c.duplex_copies = 1;
    c.sc_min = 131072;
    c.sc_alpha_us = 3.915;
    c.sc_beta_ns = 0.0488;
    c.sc_every = 1;
    static const size_t sizes[] = {262144, 1048576, 4194304, 16777216};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        c.sc_lends = 0;
        ck_assert_str_eq(cost_select(UCOLL_COLL_EXSCAN, 3, sizes[i], 1, &c, 0, 0), "pipeline");
        c.sc_lends = 1;
        ck_assert_str_eq(cost_select(UCOLL_COLL_EXSCAN, 3, sizes[i], 1, &c, 0, 0),
                         "roughly-halving");
    }
    /* below single copy's minimum nothing is lent: the same pick either way */
    c.sc_lends = 0;
    const char *unlent = cost_select(UCOLL_COLL_EXSCAN, 3, 65536, 1, &c, 0, 0);
    c.sc_lends = 1;
    ck_assert_str_eq(cost_select(UCOLL_COLL_EXSCAN, 3, 65536, 1, &c, 0, 0), unlent);
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

/* the test's counter agrees with sched_figures, the library's own count */
START_TEST(counter_matches_sched_figures)
{
    counter_t c = {0};
    size_t n;
    const char *const *names = cost_exscan_candidates(&n);
    for (int p = 1; p <= 130; p++)
        for (size_t i = 0; i < n; i++) {
            int param = 0;
            const alg_desc_t *alg = alg_lookup(UCOLL_COLL_EXSCAN, names[i], &param);
            sched_figures_t got, want;
            count_figures(&c, alg, param, p, &got);
            ck_assert_int_eq(sched_figures(alg, param, p, 1, 1, 0, 0, &want), 0);
            assert_same(&got, &want, names[i], param, p, "counter's");
        }
    counter_free(&c);
}
END_TEST

/* every candidate's closed form against its schedules, for every p up to 4096 */
START_TEST(closed_forms_every_p)
{
    counter_t c = {0};
    size_t n;
    const char *const *names = cost_exscan_candidates(&n);
    for (size_t i = 0; i < n; i++) {
        int param = 0;
        const alg_desc_t *alg = alg_lookup(UCOLL_COLL_EXSCAN, names[i], &param);
        ck_assert_ptr_nonnull(alg);
        for (int p = 1; p <= 4096; p++) {
            sched_figures_t closed, counted;
            if (cost_exscan_figures(alg, param, p, &closed) != 0)
                ck_abort_msg("%s p=%d: no closed form", names[i], p);
            count_figures(&c, alg, param, p, &counted);
            assert_same(&closed, &counted, names[i], param, p, "closed form's");
        }
    }
    counter_free(&c);
}
END_TEST

/* doubling:Q's closed form for every Q (best-doubling uses any), beyond the four named ones */
START_TEST(closed_forms_doubling_q)
{
    counter_t c = {0};
    int param = 0;
    const alg_desc_t *alg = alg_lookup(UCOLL_COLL_EXSCAN, "doubling:1", &param);
    ck_assert_ptr_nonnull(alg);
    for (int q = 1; q <= 12; q++)
        for (int p = 1; p <= 600; p++) {
            sched_figures_t closed, counted;
            if (cost_exscan_figures(alg, q, p, &closed) != 0)
                ck_abort_msg("doubling:%d p=%d: no closed form", q, p);
            count_figures(&c, alg, q, p, &counted);
            assert_same(&closed, &counted, "doubling", q, p, "closed form's");
        }
    ck_assert_int_eq(cost_exscan_figures(alg, 0, 8, &(sched_figures_t){0}), -1);
    counter_free(&c);
}
END_TEST

/* the symbolic executor (a second, independent count) agrees on rounds and max_ops, and every
 * exscan message is the whole vector: volume = rounds * m (what ucoll_sched -a auto prints) */
START_TEST(closed_forms_against_symbolic_run)
{
    static const int ps[] = {1, 2, 3, 5, 8, 13, 24, 33, 100, 257};
    const size_t m = 6;
    size_t n;
    const char *const *names = cost_exscan_candidates(&n);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < sizeof(ps) / sizeof(ps[0]); j++) {
            int param = 0;
            const alg_desc_t *alg = alg_lookup(UCOLL_COLL_EXSCAN, names[i], &param);
            sched_figures_t f;
            symbolic_result_t res;
            ck_assert_int_eq(cost_exscan_figures(alg, param, ps[j], &f), 0);
            ck_assert_int_eq(symbolic_run(alg, param, UCOLL_COLL_EXSCAN, ps[j], m, 1, 0, 0, &res),
                             0);
            ck_assert_msg(res.ok, "%s p=%d: %s", names[i], ps[j], res.error);
            ck_assert_uint_eq(res.rounds, f.rounds);
            ck_assert_uint_eq(res.max_ops, f.max_ops);
            ck_assert_uint_eq(res.volume_bytes, (uint64_t)f.rounds * m);
            symbolic_result_free(&res);
        }
    /* no closed form for other collectives' algorithms */
    int param = 0;
    const alg_desc_t *scan = alg_lookup(UCOLL_COLL_SCAN, "doubling", &param);
    ck_assert_ptr_nonnull(scan);
    ck_assert_int_eq(cost_exscan_figures(scan, param, 8, &(sched_figures_t){0}), -1);
}
END_TEST

/* selection for a new comm (here: the sizes of a split of 16 ranks and of 65536) builds no
 * schedule; the counter it is judged by does count sched_figures' builds */
/* auto's exscan never needs more rounds than the tag's round field names (UCOLL_MAX_ROUNDS:
 * more is UCOLL_ERR_NOT_SUPPORTED), up to the largest job (UCOLL_MAX_RANKS), however costly
 * the op: `linear`, p - 1 rounds, loses on its p - 2 chained (+) too */
/* some algorithm of coll serves p (and the op's commutativity) within the tag's round field */
static int any_fits(ucoll_coll_t coll, int p, int commutative)
{
    size_t n;
    const alg_desc_t *algs = alg_list(coll, &n);
    for (size_t i = 0; i < n; i++) {
        const int reduces = coll == UCOLL_COLL_REDUCE_SCATTER_BLOCK ||
                            coll == UCOLL_COLL_REDUCE_SCATTER || coll == UCOLL_COLL_REDUCE ||
                            coll == UCOLL_COLL_ALLREDUCE;
        if ((reduces && !commutative && !(algs[i].flags & ALG_ORDER_PRESERVING)) ||
            ((algs[i].flags & ALG_POWER_OF_TWO) && (p & (p - 1)) != 0) ||
            (algs[i].flags & ALG_PARAM_REQUIRED))
            continue;
        if (cost_fits_tag(&algs[i], algs[i].param, p))
            return 1;
    }
    return 0;
}

/* auto never names an algorithm the executor would refuse for its rounds, for any collective
 * (pairwise and linear wrap the round field: check_round_wrap); a non-commutative
 * reduce-scatter at 300 ranks has only ring, whose rank r hears from r - 1 in all 299 rounds,
 * and no choice */
START_TEST(auto_fits_the_round_field_blocks)
{
    const int ps[] = {2, 255, 256, 257, 300, 1000, 4096, 65537};
    const cost_params_t costs[] = {COST_PARAMS(1.0, 0.1, 0.0), COST_PARAMS(1.0, 0.1, 50.0),
                                   COST_PARAMS(100.0, 0.001, 0.0)};
    const size_t sizes[] = {8, 8192, 1 << 20};
    for (int c = 0; c < UCOLL_NCOLLS; c++)
        for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++)
            for (size_t k = 0; k < sizeof(costs) / sizeof(costs[0]); k++)
                for (size_t b = 0; b < sizeof(sizes) / sizeof(sizes[0]); b++)
                    for (int commutative = 0; commutative <= 1; commutative++) {
                        const char *name = cost_select((ucoll_coll_t)c, ps[i], sizes[b],
                                                       commutative, &costs[k], 32768, 32768);
                        if (name == NULL) {
                            ck_assert_msg(!any_fits((ucoll_coll_t)c, ps[i], commutative),
                                          "%s p=%d: no choice, though one fits",
                                          alg_coll_name((ucoll_coll_t)c), ps[i]);
                            continue;
                        }
                        int param;
                        const alg_desc_t *alg = alg_lookup((ucoll_coll_t)c, name, &param);
                        ck_assert_ptr_nonnull(alg);
                        ck_assert_msg(cost_fits_tag(alg, param, ps[i]),
                                      "%s p=%d %zu B: auto chose %s, %u rounds",
                                      alg_coll_name((ucoll_coll_t)c), ps[i], sizes[b], name,
                                      cost_rounds_bound(alg, param, ps[i]));
                    }
    const cost_params_t cost = COST_PARAMS(1.0, 0.1, 0.0);
    ck_assert_str_eq(cost_select(UCOLL_COLL_ALLTOALL, 256, 8192, 1, &cost, 0, 0), "pairwise");
    ck_assert_ptr_null(cost_select(UCOLL_COLL_REDUCE_SCATTER_BLOCK, 300, 8192, 0, &cost, 0, 0));
}
END_TEST

START_TEST(auto_fits_the_round_field)
{
    const int ps[] = {2, 255, 256, 257, 1000, 4096, 65537, UCOLL_MAX_RANKS};
    const cost_params_t costs[] = {COST_PARAMS(1.0, 0.1, 0.0), COST_PARAMS(1.0, 0.1, 50.0),
                                   COST_PARAMS(0.01, 0.001, 1e6)};
    const double sizes[] = {8, 1 << 20, 1 << 30};
    for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++)
        for (size_t c = 0; c < sizeof(costs) / sizeof(costs[0]); c++)
            for (size_t b = 0; b < sizeof(sizes) / sizeof(sizes[0]); b++) {
                sched_figures_t fig;
                const char *name = cost_auto_exscan(ps[i], sizes[b], &costs[c], &fig);
                ck_assert_msg(fig.rounds <= UCOLL_MAX_ROUNDS, "p=%d: %s has %u rounds", ps[i], name,
                              fig.rounds);
            }
}
END_TEST

/* whether a schedule fits the tag's round field is decided alike on every rank: the bound is
 * at least the highest round of any rank (sched_figures builds them all), and it is beyond
 * UCOLL_MAX_ROUNDS exactly when the schedule is, for every algorithm of every collective */
START_TEST(rounds_bound_is_every_ranks)
{
    const int ps[] = {1, 2, 3, 5, 8, 17, 100, 255, 256, 257, 258, 300, 513};
    for (int c = 0; c < UCOLL_NCOLLS; c++) {
        size_t n;
        const alg_desc_t *algs = alg_list((ucoll_coll_t)c, &n);
        for (size_t a = 0; a < n; a++)
            for (int param = 1; param <= ((algs[a].flags & ALG_PARAM_REQUIRED) ? 64 : 1);
                 param += param == 12 ? 50 : 1) /* 1..12 and the widest, 62..64 */
                for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
                    const int q = (algs[a].flags & ALG_PARAM_REQUIRED) ? param : algs[a].param;
                    for (int commutative = 0; commutative <= 1; commutative++) {
                        sched_figures_t fig;
                        const int pow2 = (ps[i] & (ps[i] - 1)) == 0;
                        if ((algs[a].flags & ALG_POWER_OF_TWO) && !pow2) { /* refused */
                            ck_assert_int_eq(sched_figures(&algs[a], q, ps[i], 4, 8, ps[i] / 2,
                                                           commutative, &fig),
                                             -1);
                            continue;
                        }
                        ck_assert_int_eq(
                            sched_figures(&algs[a], q, ps[i], 4, 8, ps[i] / 2, commutative, &fig),
                            0);
                        const unsigned bound = cost_rounds_bound(&algs[a], q, ps[i]);
                        ck_assert_msg(bound >= fig.rounds, "%s:%d p=%d: bound %u < %u rounds",
                                      algs[a].name, q, ps[i], bound, fig.rounds);
                        ck_assert_msg((bound > UCOLL_MAX_ROUNDS) == (fig.rounds > UCOLL_MAX_ROUNDS),
                                      "%s:%d p=%d: bound %u, %u rounds", algs[a].name, q, ps[i],
                                      bound, fig.rounds);
                    }
                }
    }
}
END_TEST

START_TEST(selection_builds_no_schedule)
{
    const cost_params_t cost = COST_PARAMS(1.0, 0.1, 5.0);
    const unsigned long before = sched_figures_builds();
    static const int ps[] = {16, 65536, 1 << 20};
    /* the thresholds' rule (32768) and the cost model (0) for reduce and allreduce; both
     * commutativities for every collective */
    static const size_t thresholds[] = {32768, 0};
    for (size_t j = 0; j < sizeof(ps) / sizeof(ps[0]); j++)
        for (int coll = 0; coll < UCOLL_NCOLLS; coll++)
            for (size_t bytes = 8; bytes <= (1u << 20); bytes *= 32)
                for (size_t t = 0; t < 2; t++)
                    for (int comm = 0; comm <= 1; comm++) {
                        const char *name = cost_select((ucoll_coll_t)coll, ps[j], bytes, comm,
                                                       &cost, thresholds[t], thresholds[t]);
                        /* none only where no algorithm of the collective fits the round field
                         * at p */
                        ck_assert_msg(name != NULL || !any_fits((ucoll_coll_t)coll, ps[j], comm),
                                      "%s p=%d: no choice", alg_coll_name((ucoll_coll_t)coll),
                                      ps[j]);
                        /* with elements of 8 bytes, too */
                        const char *elems =
                            cost_select_elems((ucoll_coll_t)coll, ps[j], bytes / 8, 8, comm, &cost,
                                              thresholds[t], thresholds[t]);
                        ck_assert_msg(elems != NULL || name == NULL, "%s p=%d: no choice",
                                      alg_coll_name((ucoll_coll_t)coll), ps[j]);
                    }
    ck_assert_uint_eq(sched_figures_builds(), before);
    /* the closed forms behind the model build none either */
    for (int coll = 0; coll < UCOLL_NCOLLS; coll++) {
        size_t n;
        const alg_desc_t *algs = alg_list((ucoll_coll_t)coll, &n);
        for (size_t i = 0; i < n; i++) {
            vector_figures_t vf;
            if (cost_has_vector((ucoll_coll_t)coll))
                ck_assert_int_eq(cost_vector_figures(&algs[i], 1 << 20, 1 << 20, 1, 0, &vf), 0);
        }
    }
    ck_assert_uint_eq(sched_figures_builds(), before);
    /* 16 ranks, expensive (+), 8 KiB: 1-doubling (5 rounds, 4 (+) on the path: 173 us) beats
     * the 4-round ones (6 (+) on the path: 253 us) and pipeline:3 (17 rounds, 16 segments of
     * (+) on the path: 240 us); at 1 MiB pipeline:38 (52 rounds, 51 segments: 7232 us against
     * 1-doubling's 21500) */
    ck_assert_str_eq(cost_select(UCOLL_COLL_EXSCAN, 16, 8192, 1, &cost, 0, 0), "1-doubling");
    ck_assert_str_eq(cost_select(UCOLL_COLL_EXSCAN, 16, 1 << 20, 1, &cost, 0, 0), "pipeline");
    sched_figures_t f;
    int param = 0;
    ck_assert_int_eq(
        sched_figures(alg_lookup(UCOLL_COLL_EXSCAN, "linear", &param), param, 16, 1, 1, 0, 0, &f),
        0);
    ck_assert_uint_eq(sched_figures_builds(), before + 16);
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
    tcase_add_test(tc, prediction_with_lent_receives);
    tcase_add_test(tc, auto_with_lent_receives);
    tcase_add_test(tc, fixed_auto_thresholds);
    tcase_add_test(tc, counter_matches_sched_figures);
    tcase_add_test(tc, closed_forms_doubling_q);
    tcase_add_test(tc, closed_forms_against_symbolic_run);
    tcase_add_test(tc, selection_builds_no_schedule);
    tcase_add_test(tc, auto_fits_the_round_field);
    tcase_add_test(tc, auto_fits_the_round_field_blocks);
    tcase_add_test(tc, rounds_bound_is_every_ranks);
    tcase_add_test(tc, fit_line_ignores_one_outlier);
    tcase_add_test(tc, fit_path_keeps_alpha_positive);
    tcase_add_test(tc, fit_large_path_never_free_bytes);
    tcase_add_test(tc, two_sizes_never_free_bytes);
    tcase_add_test(tc, large_paths_alpha_at_least_rings);
    tcase_add_test(tc, sort_ascending_in_place);
    suite_add_tcase(s, tc);
    /* about 60 M schedule builds: minutes on a loaded machine, so a wide timeout */
    TCase *sweep = tcase_create("closed forms, p <= 4096");
    tcase_set_timeout(sweep, 1200);
    /* most of the run time; the sanitizer build leaves it out (CK_EXCLUDE_TAGS=long), the
     * normal make check runs it */
    tcase_set_tags(sweep, "long");
    tcase_add_test(sweep, closed_forms_every_p);
    suite_add_tcase(s, sweep);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
