/*
 * Unit tests of the algorithms that run on any number of ranks although the message tag's
 * round field has 8 bits (ALG_ONE_ROUND_PER_PAIR): every message from one rank to another falls
 * in one round, so the tag, whose round field wraps, still tells every message of one sender
 * apart. Checked from the schedules themselves (every rank's, built as the executor would) for
 * p up to 513, beyond the 255 rounds of the field; the symbolic executor's verdict at p = 257 and
 * 300; and that selection and the executor's gate accept exactly these algorithms there.
 */
#include "alg/alg.h"
#include "alg/cost.h"
#include "sched.h"
#include "symbolic.h"
#include "tag.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* fails only on failure (ck_assert_* writes a checkpoint on every passing assertion) */
#define REQUIRE(cond, ...)                                                                         \
    do {                                                                                           \
        if (!(cond))                                                                               \
            ck_abort_msg(__VA_ARGS__);                                                             \
    } while (0)

static const int PS[] = {1, 2, 3, 4, 5, 7, 8, 17, 64, 100, 255, 256, 257, 258, 300, 513};
#define NPS (sizeof(PS) / sizeof(PS[0]))

/* for every ordered pair (from, to): the one round its messages use, or -1 for none yet; a
 * second round for the same pair fails the test. Sends and receives are checked separately,
 * the receiver's view by the peer it names. */
static void check_one_round_per_pair(const alg_desc_t *alg, int p)
{
    int64_t *send_round = malloc((size_t)p * (size_t)p * sizeof(*send_round));
    int64_t *recv_round = malloc((size_t)p * (size_t)p * sizeof(*recv_round));
    ck_assert_ptr_nonnull(send_round);
    ck_assert_ptr_nonnull(recv_round);
    for (size_t i = 0; i < (size_t)p * (size_t)p; i++)
        send_round[i] = recv_round[i] = -1;
    const int root = p / 3;
    uint32_t most_rounds = 0;
    for (int r = 0; r < p; r++) {
        sched_t s;
        sched_init(&s);
        REQUIRE(symbolic_build(alg, alg->param, p, r, 3, 4, root, 1, &s) == 0, "%s p=%d rank %d",
                alg->name, p, r);
        if (s.nrounds > most_rounds)
            most_rounds = s.nrounds;
        for (size_t k = 0; k < s.nsteps; k++) {
            const sched_step_t *st = &s.steps[k];
            if (st->kind != SCHED_XCHG)
                continue;
            if (st->send_peer >= 0) {
                int64_t *slot = &send_round[(size_t)r * (size_t)p + (size_t)st->send_peer];
                REQUIRE(*slot < 0 || *slot == st->round,
                        "%s p=%d: %d sends to %d in rounds %lld, %u", alg->name, p, r,
                        st->send_peer, (long long)*slot, st->round);
                *slot = st->round;
            }
            if (st->recv_peer >= 0) {
                int64_t *slot = &recv_round[(size_t)st->recv_peer * (size_t)p + (size_t)r];
                REQUIRE(*slot < 0 || *slot == st->round,
                        "%s p=%d: %d receives from %d in rounds %lld, %u", alg->name, p, r,
                        st->recv_peer, (long long)*slot, st->round);
                *slot = st->round;
            }
        }
        sched_destroy(&s);
    }
    /* a sender's message and its receive are in the same round */
    for (size_t i = 0; i < (size_t)p * (size_t)p; i++)
        REQUIRE(send_round[i] == recv_round[i],
                "%s p=%d: pair %zu->%zu sent in %lld, received %lld", alg->name, p, i / (size_t)p,
                i % (size_t)p, (long long)send_round[i], (long long)recv_round[i]);
    /* p - 1 rounds: the field wraps from p = 257 on */
    REQUIRE(most_rounds == (uint32_t)(p > 1 ? p - 1 : 0), "%s p=%d: %u rounds", alg->name, p,
            most_rounds);
    free(send_round);
    free(recv_round);
}

START_TEST(flagged_algorithms_use_one_round_per_pair)
{
    int flagged = 0;
    for (int c = 0; c < UCOLL_NCOLLS; c++) {
        size_t n;
        const alg_desc_t *algs = alg_list((ucoll_coll_t)c, &n);
        for (size_t a = 0; a < n; a++) {
            if (!(algs[a].flags & ALG_ONE_ROUND_PER_PAIR))
                continue;
            flagged++;
            for (size_t i = 0; i < NPS; i++)
                check_one_round_per_pair(&algs[a], PS[i]);
        }
    }
    /* alltoall and alltoallv pairwise, gather, gatherv, scatter, scatterv linear */
    ck_assert_int_eq(flagged, 6);
}
END_TEST

/* the wrapped schedules still give the collective's exact result */
START_TEST(flagged_algorithms_correct_beyond_the_field)
{
    const int big[] = {257, 300};
    for (int c = 0; c < UCOLL_NCOLLS; c++) {
        size_t n;
        const alg_desc_t *algs = alg_list((ucoll_coll_t)c, &n);
        for (size_t a = 0; a < n; a++) {
            if (!(algs[a].flags & ALG_ONE_ROUND_PER_PAIR))
                continue;
            for (size_t i = 0; i < sizeof(big) / sizeof(big[0]); i++) {
                symbolic_result_t res;
                const int rc = symbolic_run(&algs[a], algs[a].param, (ucoll_coll_t)c, big[i], 2, 4,
                                            big[i] - 1, 1, &res);
                REQUIRE(rc == 0 && res.ok, "%s %s p=%d: %s", alg_coll_name((ucoll_coll_t)c),
                        algs[a].name, big[i], res.error);
                ck_assert_uint_eq(res.rounds, (uint32_t)(big[i] - 1));
                symbolic_result_free(&res);
            }
        }
    }
}
END_TEST

static const alg_desc_t *find(ucoll_coll_t coll, const char *name)
{
    int param;
    const alg_desc_t *alg = alg_lookup(coll, name, &param);
    ck_assert_msg(alg != NULL, "%s %s not registered", alg_coll_name(coll), name);
    return alg;
}

/* the executor's gate (exec_prepare refuses what cost_fits_tag refuses) */
START_TEST(gate_accepts_exactly_the_flagged_ones)
{
    ck_assert_int_eq(cost_fits_tag(find(UCOLL_COLL_ALLTOALLV, "pairwise"), 0, 300), 1);
    ck_assert_int_eq(cost_fits_tag(find(UCOLL_COLL_ALLTOALL, "pairwise"), 0, UCOLL_MAX_RANKS), 1);
    ck_assert_int_eq(cost_fits_tag(find(UCOLL_COLL_GATHERV, "linear"), 0, 100000), 1);
    ck_assert_int_eq(cost_fits_tag(find(UCOLL_COLL_SCATTERV, "linear"), 0, 100000), 1);
    /* ring's rank r hears from r - 1 in every round: the wrapped field would alias them */
    ck_assert_int_eq(cost_fits_tag(find(UCOLL_COLL_ALLGATHER, "ring"), 0, 256), 1);
    ck_assert_int_eq(cost_fits_tag(find(UCOLL_COLL_ALLGATHER, "ring"), 0, 257), 0);
    ck_assert_int_eq(cost_fits_tag(find(UCOLL_COLL_EXSCAN, "linear"), 0, 257), 0);
    ck_assert_int_eq(cost_fits_tag(find(UCOLL_COLL_ALLGATHER, "bruck"), 0, UCOLL_MAX_RANKS), 1);
}
END_TEST

/* auto on more than 256 ranks: alltoallv, gatherv and scatterv have their one algorithm again,
 * and alltoall may take pairwise when the model prefers it */
START_TEST(auto_beyond_the_field)
{
    const cost_params_t cost = COST_PARAMS(1.0, 0.1, 0.0);
    const int ps[] = {257, 300, 4096, 100000};
    for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
        ck_assert_str_eq(cost_select(UCOLL_COLL_ALLTOALLV, ps[i], 8192, 1, &cost, 0, 0),
                         "pairwise");
        ck_assert_str_eq(cost_select(UCOLL_COLL_GATHERV, ps[i], 8, 1, &cost, 0, 0), "linear");
        ck_assert_str_eq(cost_select(UCOLL_COLL_SCATTERV, ps[i], 8, 1, &cost, 0, 0), "linear");
    }
    /* p = 300, 8 KiB blocks: pairwise 299 rounds, 299 blocks (299 + 244.9 us) against bruck
     * 9 rounds, 1180 blocks (9 + 966.7 us) */
    ck_assert_str_eq(cost_select(UCOLL_COLL_ALLTOALL, 300, 8192, 1, &cost, 0, 0), "pairwise");
    /* 8-byte blocks: bruck's 9 rounds win */
    ck_assert_str_eq(cost_select(UCOLL_COLL_ALLTOALL, 300, 8, 1, &cost, 0, 0), "bruck");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("round_wrap");
    TCase *tc = tcase_create("round_wrap");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, flagged_algorithms_use_one_round_per_pair);
    tcase_add_test(tc, flagged_algorithms_correct_beyond_the_field);
    tcase_add_test(tc, gate_accepts_exactly_the_flagged_ones);
    tcase_add_test(tc, auto_beyond_the_field);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
