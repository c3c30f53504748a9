/*
 * Unit tests of the pipelined chain, exscan and scan `pipeline` (src/alg/scan_pipeline.c): every
 * p in 1..256 with several k and counts, run by the symbolic executor with a non-commutative op,
 * against figures known independently of the builder: with k' = max(1, min(k, count)) segments
 * and p >= 2, exactly p + k' - 2 rounds (rank r < p - 1 takes part up to round r + k' - 1),
 * the whole vector sent by ranks 0..p-2 and received by 1..p-1, k' (+) steps combining count
 * elements on the ranks that combine (exscan 1..p-2, scan 1..p-1; none for count 0), and a
 * volume of
 * (p - 2) ceil(count / k') + count elements. Then the closed forms auto prices it with, its k
 * for plain `pipeline`, the rounds bound of the tag and auto's choices. The sweeps beyond p = 64
 * are the "long" case (CK_EXCLUDE_TAGS=long skips it).
 */
#include "alg/alg.h"
#include "alg/cost.h"
#include "symbolic.h"
#include "tag.h"

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

static const alg_desc_t *pipeline(ucoll_coll_t coll)
{
    int param = -1;
    const alg_desc_t *alg = alg_lookup(coll, "pipeline", &param);
    REQUIRE(alg != NULL && param == 0, "%s pipeline is not in the registry", alg_coll_name(coll));
    return alg;
}

/* one symbolic run of pipeline:k (k = 0: plain, expecting kk segments) from root (bcast; the
 * scans' chain starts at 0) checked rank by rank */
static void check_run_root(ucoll_coll_t coll, int p, int k, size_t count, size_t elem, int comm,
                           size_t kk, int root)
{
    const alg_desc_t *alg = pipeline(coll);
    const char *cn = alg_coll_name(coll);
    symbolic_result_t res;
    const int rc = symbolic_run_ws(ws, alg, k, coll, p, count, elem, root, comm, &res);
    REQUIRE(rc == 0 && res.ok, "%s pipeline:%d p=%d root=%d count=%zu: %s", cn, k, p, root, count,
            res.error);
    const uint64_t bytes = (uint64_t)count * elem, seg = (count + kk - 1) / kk;
    const int exscan = coll == UCOLL_COLL_EXSCAN;
    const unsigned rounds = p >= 2 ? (unsigned)(p - 2 + (int)kk) : 0;
    REQUIRE(res.rounds == rounds, "%s pipeline:%d p=%d count=%zu: %u rounds, expected %u", cn, k, p,
            count, res.rounds, rounds);
    const uint64_t volume = p >= 2 ? ((uint64_t)(p - 2) * seg + count) * elem : 0;
    REQUIRE(res.volume_bytes == volume, "%s pipeline:%d p=%d count=%zu: volume %llu, expected %llu",
            cn, k, p, count, (unsigned long long)res.volume_bytes, (unsigned long long)volume);
    REQUIRE(res.total_bytes == (uint64_t)(p - 1) * bytes, "%s pipeline:%d p=%d: %llu bytes in all",
            cn, k, p, (unsigned long long)res.total_bytes);
    for (int r = 0; r < p; r++) {
        const int v = (r - root + p) % p; /* the place in the chain */
        const unsigned rr = p < 2 ? 0 : v < p - 1 ? (unsigned)v + (unsigned)kk : rounds;
        const uint64_t sent = v < p - 1 ? bytes : 0, recv = v >= 1 ? bytes : 0;
        /* an empty vector has no (+) step (sched_reduce drops empty ones) */
        const int combines =
            coll != UCOLL_COLL_BCAST && v >= 1 && (exscan ? v < p - 1 : 1) && count > 0;
        REQUIRE(res.rank_rounds[r] == rr && res.rank_bytes_sent[r] == sent &&
                    res.rank_bytes_recv[r] == recv && res.rank_ops[r] == (combines ? kk : 0) &&
                    res.rank_op_elems[r] == (combines ? count : 0),
                "%s pipeline:%d p=%d count=%zu rank %d: %u rounds, sent %llu, received %llu, "
                "%llu (+) of %llu elements; expected %u, %llu, %llu, %zu, %zu",
                cn, k, p, count, r, res.rank_rounds[r], (unsigned long long)res.rank_bytes_sent[r],
                (unsigned long long)res.rank_bytes_recv[r], (unsigned long long)res.rank_ops[r],
                (unsigned long long)res.rank_op_elems[r], rr, (unsigned long long)sent,
                (unsigned long long)recv, combines ? kk : 0, combines ? count : 0);
    }
    symbolic_result_free(&res);
}

static void check_run(ucoll_coll_t coll, int p, int k, size_t count, size_t elem, int comm,
                      size_t kk)
{
    check_run_root(coll, p, k, count, elem, comm, kk, 0);
}

static size_t segments_for(int k, size_t count)
{
    return count == 0 ? 1 : (size_t)k < count ? (size_t)k : count;
}

/* coll's chains for every p in [p_lo, p_hi], k in {1, 2, 3, 8, 64} and counts 0, 1, 7, 1000 and
 * 3k + 1 (uneven segments), rooted at 0 (the scans) or, for bcast, at every root of p <= 64 and
 * at 0, p/2 and p - 1 beyond; comm: a commutative op. The runs made. */
static long sweep(ucoll_coll_t coll, int comm, int p_lo, int p_hi)
{
    static const int ks[] = {1, 2, 3, 8, 64};
    long runs = 0;
    for (int p = p_lo; p <= p_hi; p++)
        for (size_t ki = 0; ki < sizeof(ks) / sizeof(ks[0]); ki++) {
            const int k = ks[ki];
            const size_t counts[] = {0, 1, 7, 1000, 3 * (size_t)k + 1};
            const int roots = coll == UCOLL_COLL_BCAST ? p : 1;
            for (size_t ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++)
                for (int root = 0; root < roots; root++) {
                    if (p > 64 && root != 0 && root != p / 2 && root != p - 1)
                        continue;
                    check_run_root(coll, p, k, counts[ci], 1 + (size_t)(p % 8), comm,
                                   segments_for(k, counts[ci]), root);
                    runs++;
                }
        }
    return runs;
}

/* the scans with a non-commutative op, so every result must be built in rank order; p <= 64
 * here, the rest in the "long" case below */
START_TEST(test_every_p)
{
    const long runs = sweep(UCOLL_COLL_EXSCAN, 0, 1, 64) + sweep(UCOLL_COLL_SCAN, 0, 1, 64);
    /* and commutative, a few */
    check_run(UCOLL_COLL_EXSCAN, 5, 3, 10, 4, 1, 3);
    check_run(UCOLL_COLL_SCAN, 5, 3, 10, 4, 1, 3);
    fprintf(stderr, "check_pipeline: %ld symbolic runs, all correct\n", runs);
}
END_TEST

START_TEST(test_every_p_256)
{
    const long runs = sweep(UCOLL_COLL_EXSCAN, 0, 65, 256) + sweep(UCOLL_COLL_SCAN, 0, 65, 256);
    fprintf(stderr, "check_pipeline: %ld symbolic runs at 64 < p <= 256, all correct\n", runs);
}
END_TEST

/* bcast down the chain from its roots: the same chain, no (+), every rank's figures by its
 * place after the root */
START_TEST(test_bcast_every_p)
{
    fprintf(stderr, "check_pipeline: %ld bcast runs, all correct\n",
            sweep(UCOLL_COLL_BCAST, 1, 1, 64));
}
END_TEST

START_TEST(test_bcast_every_p_256)
{
    fprintf(stderr, "check_pipeline: %ld bcast runs at 64 < p <= 256, all correct\n",
            sweep(UCOLL_COLL_BCAST, 1, 65, 256));
}
END_TEST

/* literal cases, worked out by hand */
START_TEST(test_literal)
{
    /* p = 5, k = 3, 20 elements of 1 byte: segments 7, 7, 6; 6 rounds; volume 3*7 + 20 */
    check_run(UCOLL_COLL_EXSCAN, 5, 3, 20, 1, 0, 3);
    symbolic_result_t res;
    ck_assert_int_eq(symbolic_run_ws(ws, pipeline(UCOLL_COLL_EXSCAN), 3, UCOLL_COLL_EXSCAN, 5, 20,
                                     1, 0, 0, &res),
                     0);
    ck_assert(res.ok);
    ck_assert_uint_eq(res.rounds, 6);
    ck_assert_uint_eq(res.volume_bytes, 41);
    ck_assert_uint_eq(res.max_ops, 3);
    ck_assert_uint_eq(res.rank_ops[0], 0);
    ck_assert_uint_eq(res.rank_ops[4], 0);
    ck_assert_uint_eq(res.rank_bytes_sent[4], 0);
    ck_assert_uint_eq(res.rank_bytes_sent[0], 20);
    symbolic_result_free(&res);
    /* scan: rank p - 1 combines too */
    ck_assert_int_eq(
        symbolic_run_ws(ws, pipeline(UCOLL_COLL_SCAN), 3, UCOLL_COLL_SCAN, 5, 20, 1, 0, 0, &res),
        0);
    ck_assert(res.ok);
    ck_assert_uint_eq(res.rank_ops[4], 3);
    ck_assert_uint_eq(res.rank_op_elems[4], 20);
    symbolic_result_free(&res);
    /* k > count: 5 segments of one element for k = 8, count = 5: 4 + 5 - 2 = 7 rounds */
    check_run(UCOLL_COLL_EXSCAN, 4, 8, 5, 8, 0, 5);
    /* count = 0: one empty message per link, the chain's p - 1 rounds */
    check_run(UCOLL_COLL_SCAN, 6, 8, 0, 8, 0, 1);
    /* p = 2: k rounds; p = 1: nothing */
    check_run(UCOLL_COLL_EXSCAN, 2, 8, 100, 4, 0, 8);
    check_run(UCOLL_COLL_SCAN, 1, 8, 100, 4, 0, 8);
}
END_TEST

/* plain pipeline's k: cost_pipeline_k, the integer next to sqrt((p-2) beta m / alpha) with the
 * smaller k alpha + (p-2) beta m / k, within [1, min(count, 257 - p)] */
START_TEST(test_plain_k)
{
    /* p = 8, 16 MiB, 1 us, 0.1 ns/B: k* = sqrt(6 * 1677.7216) = 100.33; 100 + 100.66 against
     * 101 + 99.67: 100 */
    ck_assert_int_eq(cost_pipeline_k(8, 16777216, 1, 1.0, 0.1), 100);
    ck_assert_int_eq(cost_pipeline_k(8, 2097152, 8, 1.0, 0.1), 100); /* the same bytes */
    /* 64 KiB: k* = sqrt(6 * 6.5536) = 6.27; 6 + 6.55 against 7 + 5.62: 6 */
    ck_assert_int_eq(cost_pipeline_k(8, 65536, 1, 1.0, 0.1), 6);
    /* p = 100, 64 KiB: sqrt(98 * 6.5536) = 25.34: 25 */
    ck_assert_int_eq(cost_pipeline_k(100, 65536, 1, 1.0, 0.1), 25);
    /* small vectors, p <= 2, no beta: the chain */
    ck_assert_int_eq(cost_pipeline_k(8, 8, 1, 1.0, 0.1), 1);
    ck_assert_int_eq(cost_pipeline_k(2, 1u << 30, 1, 1.0, 0.1), 1);
    ck_assert_int_eq(cost_pipeline_k(1, 1u << 30, 1, 1.0, 0.1), 1);
    ck_assert_int_eq(cost_pipeline_k(8, 1u << 30, 1, 1.0, 0.0), 1);
    ck_assert_int_eq(cost_pipeline_k(8, 0, 1, 1.0, 0.1), 1);
    /* at most count segments: sqrt(6 * 0.1e-3 * 5e7) = 173 > 50 */
    ck_assert_int_eq(cost_pipeline_k(8, 50, 1000000, 1.0, 0.1), 50);
    /* at most 257 - p, so that p + k - 2 <= 255 rounds; none of it from p = 256 on */
    ck_assert_int_eq(cost_pipeline_k(200, 1u << 30, 1, 1.0, 0.1), 57);
    ck_assert_int_eq(cost_pipeline_k(256, 1u << 30, 1, 1.0, 0.1), 1);
    ck_assert_int_eq(cost_pipeline_k(300, 1u << 30, 1, 1.0, 0.1), 1);
    ck_assert_int_eq(cost_pipeline_k_max(200), 57);
    ck_assert_int_eq(cost_pipeline_k_max(2), 255);
    ck_assert_int_eq(cost_pipeline_k_max(257), 1);
    /* no latency: as many as may be */
    ck_assert_int_eq(cost_pipeline_k(10, 1000, 1, 0.0, 0.1), 247);
    ck_assert_int_eq(cost_pipeline_k(10, 100, 1, 0.0, 0.1), 100);
    /* the builder's own k for param 0 is that of count elements of one byte, default model */
    const sched_args_t a = {.rank = 3, .size = 8, .count = 65536, .elem_size = 8};
    ck_assert_int_eq(pipeline_segments(&a), 6);
    const sched_args_t b = {.rank = 0, .size = 8, .count = 5, .elem_size = 8, .param = 9};
    ck_assert_int_eq(pipeline_segments(&b), 5);
    /* and runs it: p = 8, 65536 elements, plain pipeline is pipeline:6 */
    check_run(UCOLL_COLL_EXSCAN, 8, 0, 65536, 1, 0, 6);
    check_run(UCOLL_COLL_SCAN, 8, 0, 65536, 2, 0, 6);
    /* what the library runs for plain pipeline: the k of its own alpha and beta */
    const cost_params_t slow = COST_PARAMS(10.0, 0.1, 0.0);
    int param = 0;
    const alg_desc_t *alg = alg_lookup(UCOLL_COLL_SCAN, "pipeline", &param);
    ck_assert_ptr_nonnull(alg);
    /* sqrt(6 * 0.1e-3 * 16 MiB / 10) = 31.7: 32 (32 * 10 + 10066 / 32 = 634.6 against 31's
     * 634.7) */
    ck_assert_int_eq(cost_resolve_param(alg, 0, 8, 16777216, 1, &slow), 32);
    ck_assert_int_eq(cost_resolve_param(alg, 5, 8, 16777216, 1, &slow), 5);
    const alg_desc_t *lin = alg_lookup(UCOLL_COLL_SCAN, "linear", &param);
    ck_assert_int_eq(cost_resolve_param(lin, 0, 8, 16777216, 1, &slow), 0);
}
END_TEST

/* with two paths, the k of the path its segments take: the big path's, unless its segments
 * are small messages */
START_TEST(test_paths_k)
{
    cost_params_t c = COST_PARAMS(0.2, 0.5, 0.0);
    c.small_max = 4096;
    c.big_alpha_us = 1.0;
    c.big_beta_ns = 0.1;
    /* 64 KiB: the big path's k 6 (as test_plain_k), segments of 10923 B */
    ck_assert_int_eq(cost_pipeline_k_paths(8, 65536, 1, &c), 6);
    /* 8 KiB: the big path's k* = sqrt(6 * 0.8192) = 2.2: 2 + 2.46 against 3 + 1.64, k 2 of
     * 4096 B segments, small messages; the small path's k* = sqrt(6 * 0.5e-3 * 8192 / 0.2) =
     * 11.09: 2.2 + 2.234 against 2.4 + 2.048: 11 */
    ck_assert_int_eq(cost_pipeline_k_paths(8, 8192, 1, &c), 11);
    /* one path: alpha and beta */
    c.small_max = 0;
    ck_assert_int_eq(cost_pipeline_k_paths(8, 8192, 1, &c), 11);
    c.alpha_us = 1.0;
    c.beta_ns = 0.1;
    ck_assert_int_eq(cost_pipeline_k_paths(8, 8192, 1, &c), 2);
}
END_TEST

/* the closed forms against the schedules: exscan's (rounds, max_ops, path_ops, segments) with
 * sched_figures, scan's (cost_vector.c) with the symbolic executor and sched_figures, for
 * p in [p_lo, p_hi] */
static void closed_forms(int p_lo, int p_hi)
{
    static const int ks[] = {1, 2, 3, 5, 8, 17, 64, 200};
    const alg_desc_t *ex = pipeline(UCOLL_COLL_EXSCAN), *sc = pipeline(UCOLL_COLL_SCAN),
                     *bc = pipeline(UCOLL_COLL_BCAST);
    for (int p = p_lo; p <= p_hi; p++)
        for (size_t ki = 0; ki < sizeof(ks) / sizeof(ks[0]); ki++) {
            const int k = ks[ki];
            const size_t count = 3 * (size_t)k;
            sched_figures_t closed, counted;
            REQUIRE(cost_exscan_figures(ex, k, p, &closed) == 0, "no closed form");
            REQUIRE(sched_figures(ex, k, p, count, 1, 0, 0, &counted) == 0, "sched_figures");
            REQUIRE(closed.rounds == counted.rounds && closed.max_ops == counted.max_ops &&
                        closed.path_ops == counted.path_ops &&
                        closed.segments == counted.segments && closed.segments == (unsigned)k &&
                        closed.copied_path == counted.copied_path,
                    "exscan pipeline:%d p=%d: closed form %u/%u/%u/%u/%u, schedules %u/%u/%u/%u/%u",
                    k, p, closed.rounds, closed.max_ops, closed.path_ops, closed.segments,
                    closed.copied_path, counted.rounds, counted.max_ops, counted.path_ops,
                    counted.segments, counted.copied_path);
            /* no segment is lent (each lands in OUT, which the (+) only reads): the chain of
             * copies is the pipeline's, one per round */
            REQUIRE(closed.copied_path == closed.rounds, "exscan pipeline:%d p=%d: %u copied", k, p,
                    closed.copied_path);
            /* independently: p + k - 2 rounds, k (+), p + k - 3 on the path (p >= 3) */
            REQUIRE(closed.rounds == (p >= 2 ? (unsigned)(p + k - 2) : 0) &&
                        closed.max_ops == (p >= 3 ? (unsigned)k : 0) &&
                        closed.path_ops == (p >= 3 ? (unsigned)(p + k - 3) : 0),
                    "exscan pipeline:%d p=%d: %u/%u/%u", k, p, closed.rounds, closed.max_ops,
                    closed.path_ops);
            vector_figures_t f;
            REQUIRE(cost_vector_figures_param(sc, k, p, count, 0, 0, &f) == 0, "no closed form");
            symbolic_result_t res;
            REQUIRE(symbolic_run_ws(ws, sc, k, UCOLL_COLL_SCAN, p, count, 2, 0, 0, &res) == 0 &&
                        res.ok,
                    "scan pipeline:%d p=%d: %s", k, p, res.error);
            const uint64_t unit = p >= 2 ? count / f.den : 0;
            uint64_t op_elems = 0;
            for (int r = 0; r < p; r++)
                op_elems = res.rank_op_elems[r] > op_elems ? res.rank_op_elems[r] : op_elems;
            REQUIRE(res.rounds == f.rounds && res.volume_bytes == f.volume * unit * 2 &&
                        op_elems == f.ops * unit,
                    "scan pipeline:%d p=%d: closed form %u rounds, %llu, %llu of 1/%llu; "
                    "schedules %u, %llu bytes, %llu elements",
                    k, p, f.rounds, (unsigned long long)f.volume, (unsigned long long)f.ops,
                    (unsigned long long)f.den, res.rounds, (unsigned long long)res.volume_bytes,
                    (unsigned long long)op_elems);
            symbolic_result_free(&res);
            REQUIRE(sched_figures(sc, k, p, count, 1, 0, 0, &counted) == 0, "sched_figures");
            REQUIRE(counted.path_ops == f.path && counted.max_ops == f.ops,
                    "scan pipeline:%d p=%d: path %llu, ops %llu; schedules %u, %u", k, p,
                    (unsigned long long)f.path, (unsigned long long)f.ops, counted.path_ops,
                    counted.max_ops);
            /* bcast: the scan's rounds and volume, no (+), no copy; from a root in the middle */
            REQUIRE(cost_vector_figures_param(bc, k, p, count, 0, 1, &f) == 0, "no closed form");
            REQUIRE(symbolic_run_ws(ws, bc, k, UCOLL_COLL_BCAST, p, count, 2, p / 2, 1, &res) ==
                            0 &&
                        res.ok,
                    "bcast pipeline:%d p=%d: %s", k, p, res.error);
            REQUIRE(res.rounds == f.rounds && res.volume_bytes == f.volume * unit * 2 &&
                        res.max_ops == 0 && f.ops == 0 && f.path == 0 && f.copies == 0 &&
                        f.den == (p >= 2 ? (uint64_t)k : 1),
                    "bcast pipeline:%d p=%d: closed form %u rounds, %llu of 1/%llu, (+) %llu; "
                    "schedules %u, %llu bytes",
                    k, p, f.rounds, (unsigned long long)f.volume, (unsigned long long)f.den,
                    (unsigned long long)f.ops, res.rounds, (unsigned long long)res.volume_bytes);
            symbolic_result_free(&res);
        }
}

/* p <= 64 here, the rest in the "long" case */
START_TEST(test_closed_forms)
{
    closed_forms(1, 64);
    const alg_desc_t *sc = pipeline(UCOLL_COLL_SCAN), *ex = pipeline(UCOLL_COLL_EXSCAN);
    /* plain exscan pipeline has no closed form without the vector */
    ck_assert_int_eq(cost_exscan_figures(ex, 0, 8, &(sched_figures_t){0}), -1);
    /* plain scan pipeline's: the builder's own k for count one-byte elements (6 at p = 8 and
     * 64 KiB, see test_plain_k) */
    vector_figures_t f;
    ck_assert_int_eq(cost_vector_figures(sc, 8, 65536, 0, 0, &f), 0);
    ck_assert_uint_eq(f.den, 6);
    ck_assert_uint_eq(f.rounds, 12);
}
END_TEST

START_TEST(test_closed_forms_256)
{
    closed_forms(65, 256);
}
END_TEST

/* the tag's round field: p + k - 2 rounds must stay within UCOLL_MAX_ROUNDS, judged alike on
 * every rank by cost_rounds_bound */
START_TEST(test_rounds_bound)
{
    const alg_desc_t *ex = pipeline(UCOLL_COLL_EXSCAN), *sc = pipeline(UCOLL_COLL_SCAN);
    ck_assert_uint_eq(UCOLL_MAX_ROUNDS, 255);
    ck_assert_uint_eq(cost_rounds_bound(ex, 8, 1), 0);
    ck_assert_uint_eq(cost_rounds_bound(ex, 8, 2), 8);
    ck_assert_uint_eq(cost_rounds_bound(sc, 8, 100), 106);
    ck_assert(cost_fits_tag(ex, 8, 249));  /* 255 rounds */
    ck_assert(!cost_fits_tag(ex, 8, 250)); /* 256 */
    ck_assert(!cost_fits_tag(sc, 255, 3));
    ck_assert(cost_fits_tag(sc, 255, 2));
    /* plain: at most the k cost_pipeline_k may give */
    ck_assert_uint_eq(cost_rounds_bound(ex, 0, 8), 255);
    ck_assert(cost_fits_tag(ex, 0, 256));
    ck_assert(!cost_fits_tag(ex, 0, 257));
    ck_assert_uint_eq(cost_rounds_bound(sc, 0, 300), 299);
}
END_TEST

/* auto: the pipeline only where the model says it is faster */
START_TEST(test_auto)
{
    const cost_params_t dflt =
        COST_PARAMS(COST_DEFAULT_ALPHA_US, COST_DEFAULT_BETA_NS, COST_DEFAULT_GAMMA_NS);
    /* p = 8, 16 MiB: pipeline:100 106 * (1 + 16.78) + 105 * 16.78 = 3646 us against
     * roughly-halving's 3 * (1 + 1677.7) + 4 * 1677.7 = 11747 */
    sched_figures_t fig;
    ck_assert_str_eq(cost_auto_exscan(8, 16777216, &dflt, &fig), "pipeline");
    ck_assert_uint_eq(fig.rounds, 106);
    ck_assert_uint_eq(fig.segments, 100);
    ck_assert_uint_eq(fig.path_ops, 105);
    ck_assert_double_eq_tol(cost_predict_us(&fig, 16777216, &dflt), 3645.993, 1e-3);
    ck_assert_str_eq(cost_select(UCOLL_COLL_EXSCAN, 8, 16777216, 0, &dflt, 0, 0), "pipeline");
    ck_assert_str_eq(cost_select_elems(UCOLL_COLL_EXSCAN, 8, 2097152, 8, 0, &dflt, 0, 0),
                     "pipeline");
    ck_assert_str_eq(cost_select(UCOLL_COLL_SCAN, 8, 16777216, 0, &dflt, 0, 0), "pipeline");
    /* 8 bytes and 1 KiB: the round-optimal ones */
    ck_assert_str_eq(cost_auto_exscan(8, 8, &dflt, &fig), "roughly-halving");
    ck_assert_str_eq(cost_auto_exscan(8, 1024, &dflt, &fig), "roughly-halving");
    ck_assert_str_eq(cost_select(UCOLL_COLL_SCAN, 8, 8, 0, &dflt, 0, 0), "doubling");
    /* p = 2: k = 1, one round of the whole vector like every other: a tie, not the pipeline */
    ck_assert_str_eq(cost_auto_exscan(2, 1 << 30, &dflt, &fig), "roughly-halving");
    ck_assert_str_eq(cost_select(UCOLL_COLL_SCAN, 2, 1 << 30, 0, &dflt, 0, 0), "doubling");
    /* from p = 256 on its k is 1 (the tag's round field): the chain, never cheaper */
    for (int p = 256; p <= 300; p++) {
        ck_assert_str_ne(cost_auto_exscan(p, 1 << 30, &dflt, &fig), "pipeline");
        ck_assert_str_ne(cost_select(UCOLL_COLL_SCAN, p, 1 << 30, 0, &dflt, 0, 0), "pipeline");
    }
    /* every p up to 255 at 1 GiB: whatever auto picks fits the round field */
    for (int p = 1; p <= 255; p++) {
        const char *name = cost_auto_exscan(p, 1 << 30, &dflt, &fig);
        REQUIRE(fig.rounds <= UCOLL_MAX_ROUNDS, "p=%d: %s, %u rounds", p, name, fig.rounds);
    }
}
END_TEST

/* names: pipeline and pipeline:K with K in 1..255 */
START_TEST(test_names)
{
    for (int coll = UCOLL_COLL_EXSCAN; coll <= UCOLL_COLL_SCAN; coll++) {
        int param = -1;
        const alg_desc_t *alg = alg_lookup((ucoll_coll_t)coll, "pipeline", &param);
        ck_assert_ptr_nonnull(alg);
        ck_assert_int_eq(param, 0);
        ck_assert(alg->flags & ALG_ORDER_PRESERVING);
        ck_assert(alg->flags & ALG_PARAM_OPTIONAL);
        ck_assert(!(alg->flags & ALG_PARAM_REQUIRED));
        ck_assert_ptr_eq(alg_lookup((ucoll_coll_t)coll, "pipeline:8", &param), alg);
        ck_assert_int_eq(param, 8);
        ck_assert_ptr_eq(alg_lookup((ucoll_coll_t)coll, "pipeline:255", &param), alg);
        ck_assert_int_eq(param, 255);
        static const char *bad[] = {"pipeline:",   "pipeline:0",  "pipeline:256", "pipeline:x",
                                    "pipeline:8x", "pipeline:-1", "pipelines"};
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
            ck_assert_ptr_null(alg_lookup((ucoll_coll_t)coll, bad[i], &param));
    }
    int param;
    /* the other forms keep their rules */
    ck_assert_ptr_null(alg_lookup(UCOLL_COLL_SCAN, "linear:3", &param));
    ck_assert_ptr_null(alg_lookup(UCOLL_COLL_EXSCAN, "doubling:63", &param));
    ck_assert_ptr_nonnull(alg_lookup(UCOLL_COLL_EXSCAN, "doubling:62", &param));
    ck_assert_ptr_null(alg_lookup(UCOLL_COLL_EXSCAN, "doubling", &param));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pipeline");
    TCase *tc = tcase_create("pipeline");
    tcase_add_checked_fixture(tc, ws_setup, ws_teardown);
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_every_p);
    tcase_add_test(tc, test_bcast_every_p);
    tcase_add_test(tc, test_literal);
    tcase_add_test(tc, test_plain_k);
    tcase_add_test(tc, test_paths_k);
    tcase_add_test(tc, test_closed_forms);
    tcase_add_test(tc, test_rounds_bound);
    tcase_add_test(tc, test_auto);
    tcase_add_test(tc, test_names);
    suite_add_tcase(s, tc);
    /* the same sweeps at 64 < p <= 256: the same code as p <= 64, most of the run time
     * (CK_EXCLUDE_TAGS=long leaves it out, as the sanitizer builds do) */
    TCase *sw = tcase_create("pipeline_sweep_256");
    tcase_add_checked_fixture(sw, ws_setup, ws_teardown);
    tcase_set_timeout(sw, 600);
    tcase_set_tags(sw, "long");
    tcase_add_test(sw, test_every_p_256);
    tcase_add_test(sw, test_bcast_every_p_256);
    tcase_add_test(sw, test_closed_forms_256);
    suite_add_tcase(s, sw);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
