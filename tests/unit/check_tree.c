/*
 * Unit tests of the pipelined in-order binary tree, exscan and scan `tree` (src/alg/scan_tree.c):
 * every p in 1..256 and some up to 4096, k in {1, 2, 3, 5, 8}, a non-commutative op, run by the
 * symbolic executor. Known independently of the builder: every edge carries the vector up once
 * and, off the left spine (floor(log2 p) + 1 ranks get no prefix), down once, so
 * (2p - floor(log2 p) - 2) vectors are sent in all; the offsets stay within
 * scan_tree_max_offset; p = 3 worked out by hand. The exact figures auto prices it with
 * (scan_tree_figures, counted from the tree's shape without a schedule) against the schedules.
 */
#include "alg/alg.h"
#include "alg/cost.h"
#include "symbolic.h"

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* fails only on failure (ck_assert_* writes a checkpoint on every passing assertion) */
#define REQUIRE(cond, ...)                                                                         \
    do {                                                                                           \
        if (!(cond))                                                                               \
            ck_abort_msg(__VA_ARGS__);                                                             \
    } while (0)

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

static const alg_desc_t *tree(ucoll_coll_t coll)
{
    int param = -1;
    const alg_desc_t *alg = alg_lookup(coll, "tree", &param);
    REQUIRE(alg != NULL && param == 0, "%s tree is not in the registry", alg_coll_name(coll));
    return alg;
}

static int floor_log2(int n)
{
    int h = 0;
    while (n >>= 1)
        h++;
    return h;
}

static uint64_t max_over_ranks(const uint64_t *v, int p)
{
    uint64_t m = 0;
    for (int r = 0; r < p; r++)
        m = v[r] > m ? v[r] : m;
    return m;
}

/* one symbolic run of tree:k checked against the figures; count a multiple of k when exact */
static void check_run(ucoll_coll_t coll, int p, int k, size_t count, size_t elem, int comm)
{
    const alg_desc_t *alg = tree(coll);
    const char *cn = alg_coll_name(coll);
    const int inclusive = coll == UCOLL_COLL_SCAN;
    symbolic_result_t res;
    const int rc = symbolic_run_ws(ws, alg, k, coll, p, count, elem, 0, comm, &res);
    REQUIRE(rc == 0 && res.ok, "%s tree:%d p=%d count=%zu: %s", cn, k, p, count, res.error);
    const uint64_t bytes = (uint64_t)count * elem;
    const uint64_t vectors = p >= 2 ? 2 * (uint64_t)p - (uint64_t)floor_log2(p) - 2 : 0;
    REQUIRE(res.total_bytes == vectors * bytes, "%s tree:%d p=%d: %llu bytes sent, expected %llu",
            cn, k, p, (unsigned long long)res.total_bytes, (unsigned long long)(vectors * bytes));
    const sched_args_t a = {.size = p, .count = count, .elem_size = elem, .param = k};
    const int kk = tree_segments(&a);
    scan_tree_figures_t f;
    REQUIRE(scan_tree_figures(p, kk, inclusive, &f) == 0, "figures p=%d", p);
    REQUIRE(res.rounds == f.rounds, "%s tree:%d p=%d count=%zu: %u rounds, figures %u", cn, k, p,
            count, res.rounds, f.rounds);
    REQUIRE(res.rounds <= 3 * (unsigned)(kk - 1 + scan_tree_max_offset(p)) + 3,
            "%s tree:%d p=%d: %u rounds beyond the bound", cn, k, p, res.rounds);
    if (count % (size_t)kk == 0 && p >= 2) {
        const uint64_t seg = bytes / (uint64_t)kk, unit = count / (size_t)kk;
        REQUIRE(res.volume_bytes == f.volume * seg && res.cpu_volume_bytes == f.cpu_volume * seg &&
                    res.max_msgs == f.msgs &&
                    max_over_ranks(res.rank_op_elems, p) == f.ops * unit &&
                    max_over_ranks(res.rank_copy_elems, p) == f.copies * unit,
                "%s tree:%d p=%d count=%zu: volume %llu, cpu %llu, msgs %u, (+) %llu, copies "
                "%llu; figures %llu, %llu, %u, %llu, %llu segments of %llu",
                cn, k, p, count, (unsigned long long)res.volume_bytes,
                (unsigned long long)res.cpu_volume_bytes, res.max_msgs,
                (unsigned long long)max_over_ranks(res.rank_op_elems, p),
                (unsigned long long)max_over_ranks(res.rank_copy_elems, p),
                (unsigned long long)f.volume, (unsigned long long)f.cpu_volume, f.msgs,
                (unsigned long long)f.ops, (unsigned long long)f.copies, (unsigned long long)seg);
    }
    symbolic_result_free(&res);
}

START_TEST(test_every_p)
{
    static const int ks[] = {1, 2, 3, 5, 8};
    long runs = 0;
    for (int coll = UCOLL_COLL_EXSCAN; coll <= UCOLL_COLL_SCAN; coll++)
        for (int p = 1; p <= 256; p++)
            for (size_t ki = 0; ki < sizeof(ks) / sizeof(ks[0]); ki++) {
                const int k = ks[ki];
                const size_t elem = 1 + (size_t)(p % 3);
                check_run((ucoll_coll_t)coll, p, k, 4 * (size_t)k, elem, 0);     /* even */
                check_run((ucoll_coll_t)coll, p, k, 3 * (size_t)k + 1, elem, 0); /* uneven */
                runs += 2;
            }
    static const int big[] = {1000, 1023, 1024, 1025, 4096};
    for (size_t i = 0; i < sizeof(big) / sizeof(big[0]); i++)
        for (int coll = UCOLL_COLL_EXSCAN; coll <= UCOLL_COLL_SCAN; coll++) {
            check_run((ucoll_coll_t)coll, big[i], 4, 8, 1, 0);
            runs++;
        }
    check_run(UCOLL_COLL_EXSCAN, 9, 3, 12, 4, 1); /* commutative */
    check_run(UCOLL_COLL_SCAN, 9, 3, 12, 4, 1);
    fprintf(stderr, "check_tree: %ld symbolic runs, all correct\n", runs + 2);
}
END_TEST

/* every prefix offset within the bound, and the most segments keep the rounds in the tag */
START_TEST(test_offsets)
{
    for (int p = 1; p <= 4096; p++) {
        int most = 0;
        for (int r = 0; r < p; r++) {
            scan_tree_node_t t;
            scan_tree_node(p, r, &t);
            const int d = t.delta > t.height ? t.delta : t.height;
            most = d > most ? d : most;
        }
        REQUIRE(most <= scan_tree_max_offset(p), "p=%d: offset %d beyond %d", p, most,
                scan_tree_max_offset(p));
    }
    static const int ps[] = {2, 3, 100, 4096, 65536, 1 << 20};
    for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
        scan_tree_figures_t f;
        const int k = scan_tree_max_segments(ps[i]);
        ck_assert_int_eq(scan_tree_figures(ps[i], k, 1, &f), 0);
        REQUIRE(f.rounds <= COST_MAX_ROUNDS, "p=%d k=%d: %u rounds", ps[i], k, f.rounds);
    }
}
END_TEST

/* the (+) chain and the chain of copies auto prices the tree with are bounds on the
 * schedules' longest chains */
START_TEST(test_path_bound)
{
    static const int ks[] = {1, 3, 9, 20};
    for (int p = 3; p <= 1000; p = p < 64 ? p + 1 : p * 3 / 2)
        for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); i++) {
            sched_figures_t sf;
            ck_assert_int_eq(sched_figures(tree(UCOLL_COLL_EXSCAN), ks[i], p, 1000, 1, 0, 0, &sf),
                             0);
            scan_tree_figures_t f;
            ck_assert_int_eq(scan_tree_figures(p, ks[i], 0, &f), 0);
            sched_figures_t closed;
            ck_assert_int_eq(cost_exscan_figures(tree(UCOLL_COLL_EXSCAN), ks[i], p, &closed), 0);
            REQUIRE(sf.max_ops == f.ops && sf.rounds == f.rounds &&
                        sf.path_ops <= scan_tree_path_bound(p, ks[i]) &&
                        sf.copied_path <= closed.copied_path,
                    "p=%d k=%d: schedules %u rounds, %u (+), chain %u, copied %u; figures %u, "
                    "%llu, bound %u, copied %u",
                    p, ks[i], sf.rounds, sf.max_ops, sf.path_ops, sf.copied_path, f.rounds,
                    (unsigned long long)f.ops, scan_tree_path_bound(p, ks[i]), closed.copied_path);
        }
}
END_TEST

/* a K beyond the tag's rounds is refused, as pipeline:K's is, not quietly cut down; the figures
 * refuse a k they cannot count without overflow */
START_TEST(test_too_many_segments)
{
    for (int coll = UCOLL_COLL_EXSCAN; coll <= UCOLL_COLL_SCAN; coll++) {
        const alg_desc_t *alg = tree((ucoll_coll_t)coll);
        static const int ps[] = {2, 8, 100, 4096};
        for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
            const int most = scan_tree_max_segments(ps[i]);
            REQUIRE(cost_fits_tag(alg, most, ps[i]), "%s tree:%d p=%d refused",
                    alg_coll_name(alg->coll), most, ps[i]);
            REQUIRE(!cost_fits_tag(alg, most + 1, ps[i]) && !cost_fits_tag(alg, 200, ps[i]),
                    "%s tree:%d p=%d accepted beyond the tag", alg_coll_name(alg->coll), most + 1,
                    ps[i]);
        }
    }
    sched_figures_t fig;
    ck_assert_int_eq(cost_exscan_figures(tree(UCOLL_COLL_EXSCAN), 200, 8, &fig), -1);
    scan_tree_figures_t f;
    ck_assert_int_eq(scan_tree_figures(8, 1 << 30, 0, &f), -1);
    ck_assert_int_eq(scan_tree_figures(8, ALG_PARAM_OPTIONAL_MAX + 1, 1, &f), -1);
}
END_TEST

/* p = 3 by hand: rank 1 is the root, 0 its left child (edge colour 0), 2 its right one (1);
 * round 0: 0 sends V0 up, round 1: 2 sends V2 up, round 4 (superstep 1, colour 1): 1 sends
 * V0 (+) V1 down to 2. Exscan: rank 1 combines once (V0 (+) V1 for 2), rank 2 only receives */
START_TEST(test_literal)
{
    symbolic_result_t res;
    ck_assert_int_eq(
        symbolic_run_ws(ws, tree(UCOLL_COLL_EXSCAN), 1, UCOLL_COLL_EXSCAN, 3, 5, 1, 0, 0, &res), 0);
    ck_assert(res.ok);
    ck_assert_uint_eq(res.rounds, 5);
    ck_assert_uint_eq(res.volume_bytes, 15);
    ck_assert_uint_eq(res.rank_ops[1], 1);
    ck_assert_uint_eq(res.rank_ops[2], 0);
    ck_assert_uint_eq(res.rank_bytes_sent[0], 5);
    ck_assert_uint_eq(res.rank_bytes_sent[1], 5);
    ck_assert_uint_eq(res.rank_bytes_recv[2], 5);
    symbolic_result_free(&res);
    /* scan: rank 2 adds its own V to the prefix at the end */
    ck_assert_int_eq(
        symbolic_run_ws(ws, tree(UCOLL_COLL_SCAN), 1, UCOLL_COLL_SCAN, 3, 5, 1, 0, 0, &res), 0);
    ck_assert(res.ok);
    ck_assert_uint_eq(res.rounds, 5);
    ck_assert_uint_eq(res.rank_ops[2], 1);
    symbolic_result_free(&res);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("tree");
    TCase *tc = tcase_create("tree");
    tcase_add_checked_fixture(tc, ws_setup, ws_teardown);
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_every_p);
    tcase_add_test(tc, test_offsets);
    tcase_add_test(tc, test_literal);
    tcase_add_test(tc, test_path_bound);
    tcase_add_test(tc, test_too_many_segments);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
