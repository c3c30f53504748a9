/*
 * Unit tests of the alltoall(v), gather(v) and scatter(v) builders (Check): every one runs in
 * the symbolic executor and must give the collective's exact result with the rounds and volume
 * of algorithms.md 4.4 and 4.5, recomputed here from their definitions (volume in blocks:
 * pairwise and linear p - 1, binomial p - 1, bruck the sum over rounds k of the relative
 * indices 0 < j < p with bit k set), and no (+). The v forms run with per-rank counts that
 * differ, zeros included. The schedules' own structure is checked where 4.4 prescribes it
 * (pairwise's peers and blocks, bruck's per-round messages) and for the binomial trees (round k
 * carries at most 2^k blocks).
 */
#include "alg/alg.h"
#include "alg/cost.h"
#include "sched.h"
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

static const alg_desc_t *find(ucoll_coll_t coll, const char *name)
{
    int param;
    const alg_desc_t *alg = alg_lookup(coll, name, &param);
    ck_assert_msg(alg != NULL, "%s %s not registered", alg_coll_name(coll), name);
    return alg;
}

/* blocks moved by bruck alltoall in round k: relative indices 0 < j < p with bit k set */
static uint64_t bruck_round_blocks(int p, unsigned k)
{
    uint64_t n = 0;
    for (int j = 1; j < p; j++)
        n += (j >> k) & 1;
    return n;
}

static uint64_t bruck_volume(int p)
{
    uint64_t v = 0;
    for (unsigned k = 0; k < clog2(p); k++)
        v += bruck_round_blocks(p, k);
    return v;
}

/* ---------------------------------------------------------------- equal blocks */

typedef struct {
    ucoll_coll_t coll;
    const char *name;
    int rooted;
    int logarithmic; /* q rounds (else p - 1) */
} case_t;

static const case_t cases[] = {
    {UCOLL_COLL_ALLTOALL, "pairwise", 0, 0},  {UCOLL_COLL_ALLTOALL, "bruck", 0, 1},
    {UCOLL_COLL_ALLTOALLV, "pairwise", 0, 0}, {UCOLL_COLL_GATHER, "binomial", 1, 1},
    {UCOLL_COLL_GATHER, "linear", 1, 0},      {UCOLL_COLL_GATHERV, "linear", 1, 0},
    {UCOLL_COLL_SCATTER, "binomial", 1, 1},   {UCOLL_COLL_SCATTER, "linear", 1, 0},
    {UCOLL_COLL_SCATTERV, "linear", 1, 0},
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

static void run_equal(symbolic_ws_t *ws, const case_t *k, int p, size_t c, size_t elem, int root)
{
    const alg_desc_t *alg = find(k->coll, k->name);
    symbolic_result_t res;
    const int rc = symbolic_run_ws(ws, alg, 0, k->coll, p, c, elem, root, 0, &res);
    REQUIRE(rc == 0 && res.ok, "%s %s p=%d c=%zu root=%d: %s", alg_coll_name(k->coll), k->name, p,
            c, root, res.error);
    const uint32_t rounds = k->logarithmic ? clog2(p) : (uint32_t)(p - 1);
    const uint64_t blocks =
        k->coll == UCOLL_COLL_ALLTOALL && k->logarithmic ? bruck_volume(p) : (uint64_t)(p - 1);
    REQUIRE(res.rounds == rounds, "%s %s p=%d: %u rounds, want %u", alg_coll_name(k->coll), k->name,
            p, res.rounds, rounds);
    REQUIRE(res.volume_bytes == blocks * c * elem, "%s %s p=%d c=%zu: volume %llu bytes, want %llu",
            alg_coll_name(k->coll), k->name, p, c, (unsigned long long)res.volume_bytes,
            (unsigned long long)(blocks * c * elem));
    REQUIRE(res.max_ops == 0, "%s %s p=%d: %llu (+)", alg_coll_name(k->coll), k->name, p,
            (unsigned long long)res.max_ops);
    symbolic_result_free(&res);
}

/* p = 1..64, counts 0, 1, 3, every root */
START_TEST(equal_blocks_small_p)
{
    symbolic_ws_t *ws = symbolic_ws_new();
    ck_assert_ptr_nonnull(ws);
    const size_t counts[] = {0, 1, 3};
    for (size_t i = 0; i < NCASES; i++)
        for (int p = 1; p <= 64; p++)
            for (size_t ci = 0; ci < 3; ci++)
                for (int root = 0; root < (cases[i].rooted ? p : 1); root++)
                    run_equal(ws, &cases[i], p, counts[ci], 1 + (size_t)(p % 4), root);
    symbolic_ws_free(ws);
}
END_TEST

/* p = 65..256, roots 0, p - 1, p / 2 */
START_TEST(equal_blocks_to_256)
{
    symbolic_ws_t *ws = symbolic_ws_new();
    ck_assert_ptr_nonnull(ws);
    for (size_t i = 0; i < NCASES; i++)
        for (int p = 65; p <= 256; p++) {
            const int roots[] = {0, p - 1, p / 2};
            for (int ri = 0; ri < (cases[i].rooted ? 3 : 1); ri++)
                run_equal(ws, &cases[i], p, 2, 4, roots[ri]);
        }
    symbolic_ws_free(ws);
}
END_TEST

/* ---------------------------------------------------------------- irregular v forms */

typedef struct {
    int p;
    sched_args_t *a;
    size_t *sc, *sd, *rc, *rd; /* p x p, row = rank */
} vcall_t;

static void vcall_init(vcall_t *v, int p)
{
    v->p = p;
    v->a = calloc((size_t)p, sizeof(*v->a));
    v->sc = calloc((size_t)p * p, sizeof(size_t));
    v->sd = calloc((size_t)p * p, sizeof(size_t));
    v->rc = calloc((size_t)p * p, sizeof(size_t));
    v->rd = calloc((size_t)p * p, sizeof(size_t));
    ck_assert(v->a && v->sc && v->sd && v->rc && v->rd);
    for (int r = 0; r < p; r++) {
        v->a[r].rank = r;
        v->a[r].size = p;
        v->a[r].elem_size = 2;
    }
}

static void vcall_free(vcall_t *v)
{
    free(v->a);
    free(v->sc);
    free(v->sd);
    free(v->rc);
    free(v->rd);
}

/* elements rank i sends to rank j: often zero, up to 4 */
static size_t pair_count(int i, int j, int salt)
{
    return (size_t)((3 * i + 5 * j + salt) % 7) / 2 % 5;
}

/* alltoallv: every rank's blocks in reverse rank order with a gap of one element between */
static void vcall_alltoallv(vcall_t *v, int salt)
{
    const int p = v->p;
    for (int r = 0; r < p; r++) {
        size_t soff = 1, roff = 3;
        for (int j = p - 1; j >= 0; j--) {
            v->sc[r * p + j] = pair_count(r, j, salt);
            v->sd[r * p + j] = soff;
            soff += v->sc[r * p + j] + 1;
            v->rc[r * p + j] = pair_count(j, r, salt);
            v->rd[r * p + j] = roff;
            roff += v->rc[r * p + j] + 1;
        }
        v->a[r].send_counts = &v->sc[r * p];
        v->a[r].send_displs = &v->sd[r * p];
        v->a[r].recv_counts = &v->rc[r * p];
        v->a[r].recv_displs = &v->rd[r * p];
    }
}

START_TEST(alltoallv_irregular)
{
    symbolic_ws_t *ws = symbolic_ws_new();
    ck_assert_ptr_nonnull(ws);
    const alg_desc_t *alg = find(UCOLL_COLL_ALLTOALLV, "pairwise");
    for (int p = 1; p <= 256; p += p < 64 ? 1 : 17)
        for (int salt = 0; salt < 3; salt++) {
            vcall_t v;
            vcall_init(&v, p);
            vcall_alltoallv(&v, salt);
            /* round k - 1: every rank r sends pair_count(r, r + k) (and receives the same set) */
            uint64_t volume = 0;
            for (int k = 1; k < p; k++) {
                size_t most = 0;
                for (int r = 0; r < p; r++)
                    if (pair_count(r, (r + k) % p, salt) > most)
                        most = pair_count(r, (r + k) % p, salt);
                volume += most * 2;
            }
            symbolic_result_t res;
            const int rc = symbolic_run_args_ws(ws, alg, UCOLL_COLL_ALLTOALLV, p, v.a, &res);
            REQUIRE(rc == 0 && res.ok, "alltoallv p=%d salt=%d: %s", p, salt, res.error);
            REQUIRE(res.rounds == (uint32_t)(p - 1), "alltoallv p=%d: %u rounds", p, res.rounds);
            REQUIRE(res.volume_bytes == volume, "alltoallv p=%d salt=%d: volume %llu, want %llu", p,
                    salt, (unsigned long long)res.volume_bytes, (unsigned long long)volume);
            symbolic_result_free(&res);
            vcall_free(&v);
        }
    symbolic_ws_free(ws);
}
END_TEST

/* gatherv / scatterv: rank i's block has pair_count(i, root, salt) elements; only the root has
 * the arrays (blocks in reverse rank order, a gap of two between) */
START_TEST(gatherv_scatterv_irregular)
{
    symbolic_ws_t *ws = symbolic_ws_new();
    ck_assert_ptr_nonnull(ws);
    const ucoll_coll_t colls[] = {UCOLL_COLL_GATHERV, UCOLL_COLL_SCATTERV};
    for (int ci = 0; ci < 2; ci++) {
        const alg_desc_t *alg = find(colls[ci], "linear");
        for (int p = 1; p <= 256; p += p < 64 ? 1 : 17)
            for (int root = 0; root < p; root += p <= 16 ? 1 : p / 3)
                for (int salt = 0; salt < 2; salt++) {
                    vcall_t v;
                    vcall_init(&v, p);
                    size_t off = 2;
                    uint64_t others = 0;
                    for (int i = p - 1; i >= 0; i--) {
                        const size_t n = pair_count(i, root, salt);
                        v.a[i].root = root;
                        v.a[i].count = n;
                        v.rc[root * p + i] = v.sc[root * p + i] = n;
                        v.rd[root * p + i] = v.sd[root * p + i] = off;
                        off += n + 2;
                        others += i != root ? n : 0;
                    }
                    v.a[root].send_counts = v.a[root].recv_counts = &v.sc[root * p];
                    v.a[root].send_displs = v.a[root].recv_displs = &v.sd[root * p];
                    symbolic_result_t res;
                    const int rc = symbolic_run_args_ws(ws, alg, colls[ci], p, v.a, &res);
                    REQUIRE(rc == 0 && res.ok, "%s p=%d root=%d: %s", alg_coll_name(colls[ci]), p,
                            root, res.error);
                    REQUIRE(res.rounds == (uint32_t)(p - 1), "%s p=%d: %u rounds",
                            alg_coll_name(colls[ci]), p, res.rounds);
                    REQUIRE(res.volume_bytes == others * 2, "%s p=%d root=%d: volume %llu",
                            alg_coll_name(colls[ci]), p, root,
                            (unsigned long long)res.volume_bytes);
                    symbolic_result_free(&res);
                    vcall_free(&v);
                }
    }
    symbolic_ws_free(ws);
}
END_TEST

/* ---------------------------------------------------------------- schedule structure */

static void build(sched_build_fn_t fn, sched_t *s, int p, int r, size_t c, int root)
{
    sched_args_t a;
    memset(&a, 0, sizeof(a));
    a.rank = r;
    a.size = p;
    a.root = root;
    a.count = c;
    a.elem_size = 8;
    sched_clear(s);
    ck_assert_int_eq(fn(s, &a), 0);
}

/* the one XCHG of round `round` in s, or NULL */
static const sched_step_t *xchg_of(const sched_t *s, uint32_t round)
{
    for (size_t i = 0; i < s->nsteps; i++)
        if (s->steps[i].kind == SCHED_XCHG && s->steps[i].round == round)
            return &s->steps[i];
    return NULL;
}

/* 4.4: in round k = 1..p-1 (index k - 1) rank r sends IN block r + k to r + k and receives OUT
 * block r - k from r - k, straight between the user's buffers */
START_TEST(pairwise_peers_and_blocks)
{
    sched_t s;
    sched_init(&s);
    const size_t c = 3;
    for (int p = 1; p <= 64; p++)
        for (int r = 0; r < p; r++) {
            build(alltoall_pairwise_build, &s, p, r, c, 0);
            REQUIRE(s.nrounds == (uint32_t)(p - 1), "p=%d r=%d: %u rounds", p, r, s.nrounds);
            for (int k = 1; k < p; k++) {
                const sched_step_t *x = xchg_of(&s, (uint32_t)(k - 1));
                const int to = (r + k) % p, from = (r - k + p) % p;
                REQUIRE(x != NULL && x->send_peer == to && x->recv_peer == from, "p=%d r=%d k=%d",
                        p, r, k);
                REQUIRE(x->send.buf == SCHED_BUF_IN && x->send.off == (size_t)to * c &&
                            x->send.count == c,
                        "p=%d r=%d k=%d: send", p, r, k);
                REQUIRE(x->recv.buf == SCHED_BUF_OUT && x->recv.off == (size_t)from * c &&
                            x->recv.count == c,
                        "p=%d r=%d k=%d: recv", p, r, k);
            }
        }
    sched_destroy(&s);
}
END_TEST

/* 4.4: bruck's round k goes to r + 2^k and carries #{0 < j < p : bit k of j} blocks on every
 * rank; p = 5: 2 + 2 + 1 = 5 blocks in 3 rounds against pairwise's 4 in 4 */
START_TEST(bruck_rounds)
{
    ck_assert_uint_eq(bruck_round_blocks(5, 0), 2);
    ck_assert_uint_eq(bruck_round_blocks(5, 1), 2);
    ck_assert_uint_eq(bruck_round_blocks(5, 2), 1);
    symbolic_result_t res;
    ck_assert_int_eq(symbolic_run(find(UCOLL_COLL_ALLTOALL, "bruck"), 0, UCOLL_COLL_ALLTOALL, 5, 1,
                                  1, 0, 1, &res),
                     0);
    ck_assert(res.ok);
    ck_assert_uint_eq(res.rounds, 3);
    ck_assert_uint_eq(res.volume_bytes, 5);
    symbolic_result_free(&res);
    ck_assert_int_eq(symbolic_run(find(UCOLL_COLL_ALLTOALL, "pairwise"), 0, UCOLL_COLL_ALLTOALL, 5,
                                  1, 1, 0, 1, &res),
                     0);
    ck_assert(res.ok);
    ck_assert_uint_eq(res.rounds, 4);
    ck_assert_uint_eq(res.volume_bytes, 4);
    symbolic_result_free(&res);

    sched_t s;
    sched_init(&s);
    const size_t c = 2;
    for (int p = 1; p <= 130; p++)
        for (int r = 0; r < p; r++) {
            build(alltoall_bruck_build, &s, p, r, c, 0);
            REQUIRE(s.nrounds == clog2(p), "p=%d r=%d: %u rounds", p, r, s.nrounds);
            for (unsigned k = 0; k < clog2(p); k++) {
                const sched_step_t *x = xchg_of(&s, k);
                const int d = (int)((1L << k) % p);
                REQUIRE(x != NULL && x->send_peer == (r + d) % p && x->recv_peer == (r - d + p) % p,
                        "p=%d r=%d k=%u: peers", p, r, k);
                REQUIRE(x->send.count == bruck_round_blocks(p, k) * c &&
                            x->recv.count == x->send.count,
                        "p=%d r=%d k=%u: %zu elements", p, r, k, x->send.count);
            }
        }
    sched_destroy(&s);
}
END_TEST

/* 4.5: the binomial trees' round k (scatter: q - 1 - k) carries at most 2^k blocks, and the
 * root's messages are min(2^k, p - 2^k) blocks (p = 5: 1, 2, 1; p = 6: 1, 2, 2) */
START_TEST(binomial_messages)
{
    sched_t s;
    sched_init(&s);
    const size_t c = 3;
    for (int p = 1; p <= 130; p++)
        for (int root = 0; root < p; root += p <= 16 ? 1 : 7)
            for (int r = 0; r < p; r++)
                for (int g = 0; g < 2; g++) {
                    build(g ? gather_binomial_build : scatter_binomial_build, &s, p, r, c, root);
                    const unsigned q = clog2(p);
                    REQUIRE(s.nrounds <= q, "p=%d r=%d: %u rounds", p, r, s.nrounds);
                    for (unsigned k = 0; k < q; k++) {
                        const sched_step_t *x = xchg_of(&s, g ? k : q - 1 - k);
                        const size_t most = ((size_t)1 << k) * c;
                        if (x == NULL)
                            continue;
                        REQUIRE(x->send_peer < 0 || x->send.count <= most, "p=%d r=%d k=%u", p, r,
                                k);
                        REQUIRE(x->recv_peer < 0 || x->recv.count <= most, "p=%d r=%d k=%u", p, r,
                                k);
                        if (r == root) {
                            const long half = 1L << k;
                            const size_t blocks = (size_t)(half < p - half ? half : p - half);
                            const size_t n = g ? x->recv.count : x->send.count;
                            REQUIRE(n == blocks * c, "p=%d root=%d k=%u: %zu elements", p, root, k,
                                    n);
                        }
                    }
                }
    int expect5[] = {1, 2, 1}, expect6[] = {1, 2, 2};
    for (unsigned k = 0; k < 3; k++) {
        build(gather_binomial_build, &s, 5, 2, 1, 2);
        ck_assert_uint_eq(xchg_of(&s, k)->recv.count, (size_t)expect5[k]);
        build(gather_binomial_build, &s, 6, 0, 1, 0);
        ck_assert_uint_eq(xchg_of(&s, k)->recv.count, (size_t)expect6[k]);
        build(scatter_binomial_build, &s, 6, 5, 1, 5);
        ck_assert_uint_eq(xchg_of(&s, 2 - k)->send.count, (size_t)expect6[k]);
    }
    sched_destroy(&s);
}
END_TEST

/* the v forms refuse missing count arrays where the rank needs them; gatherv's and scatterv's
 * non-roots need none */
START_TEST(v_forms_need_their_counts)
{
    sched_t s;
    sched_init(&s);
    sched_args_t a;
    memset(&a, 0, sizeof(a));
    a.size = 4;
    a.count = 2;
    a.elem_size = 4;
    a.root = 1;
    a.rank = 0;
    ck_assert_int_eq(alltoallv_pairwise_build(&s, &a), -1);
    ck_assert_int_eq(gatherv_linear_build(&s, &a), 0);
    sched_clear(&s);
    ck_assert_int_eq(scatterv_linear_build(&s, &a), 0);
    sched_clear(&s);
    a.rank = 1;
    ck_assert_int_eq(gatherv_linear_build(&s, &a), -1);
    ck_assert_int_eq(scatterv_linear_build(&s, &a), -1);
    sched_destroy(&s);
}
END_TEST

/* the executor's round limit check: pairwise and linear have exactly p - 1 rounds */
START_TEST(rounds_bound)
{
    for (size_t i = 0; i < NCASES; i++) {
        const alg_desc_t *alg = find(cases[i].coll, cases[i].name);
        for (int p = 1; p <= 600; p++) {
            const unsigned bound = cost_rounds_bound(alg, 0, p);
            if (cases[i].logarithmic)
                REQUIRE(bound >= clog2(p) && bound <= 2 * clog2(p) + 2, "%s p=%d: %u",
                        cases[i].name, p, bound);
            else
                REQUIRE(bound == (unsigned)(p - 1), "%s %s p=%d: %u", alg_coll_name(cases[i].coll),
                        cases[i].name, p, bound);
        }
    }
}
END_TEST

static Suite *a2a_suite(void)
{
    Suite *s = suite_create("blocks_a2a");
    TCase *tc = tcase_create("builders");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, equal_blocks_small_p);
    tcase_add_test(tc, alltoallv_irregular);
    tcase_add_test(tc, gatherv_scatterv_irregular);
    tcase_add_test(tc, pairwise_peers_and_blocks);
    tcase_add_test(tc, bruck_rounds);
    tcase_add_test(tc, binomial_messages);
    tcase_add_test(tc, v_forms_need_their_counts);
    tcase_add_test(tc, rounds_bound);
    suite_add_tcase(s, tc);
    /* every p up to 256: most of the run time; CK_EXCLUDE_TAGS=long (the sanitizer build) skips
     * it */
    TCase *sw = tcase_create("to_256");
    tcase_set_timeout(sw, 600);
    tcase_set_tags(sw, "long");
    tcase_add_test(sw, equal_blocks_to_256);
    suite_add_tcase(s, sw);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(a2a_suite());
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
