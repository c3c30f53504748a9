/*
 * Unit tests (Check) of the allgather / reduce-scatter family builders and the block-based
 * allreduce and bcast (algorithms.md 4.1-4.3, 4.6), on the schedules themselves: the exact
 * peers and message sizes of each round, which the general symbolic sweep does not pin down,
 * and the allreduce/bcast figures (rounds, volume) through the symbolic executor.
 */
#include "alg/alg.h"
#include "alg/cost.h"
#include "sched.h"
#include "symbolic.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define REQUIRE(cond, ...)                                                                         \
    do {                                                                                           \
        if (!(cond))                                                                               \
            ck_abort_msg(__VA_ARGS__);                                                             \
    } while (0)

static const alg_desc_t *alg_of(ucoll_coll_t coll, const char *name)
{
    int param = 0;
    const alg_desc_t *alg = alg_lookup(coll, name, &param);
    REQUIRE(alg != NULL, "%s %s is not in the registry", alg_coll_name(coll), name);
    return alg;
}

/* builds rank r's schedule of alg; returns the builder's value */
static int build(const alg_desc_t *alg, int p, int r, size_t c, int commutative,
                 const size_t *counts, sched_t *s)
{
    sched_args_t a;
    memset(&a, 0, sizeof(a));
    a.rank = r;
    a.size = p;
    a.count = counts != NULL && (alg->coll == UCOLL_COLL_ALLGATHERV) ? counts[r] : c;
    a.elem_size = 4;
    a.commutative = commutative;
    a.recv_counts = counts;
    sched_init(s);
    return alg->build(s, &a);
}

/* the XCHG of round k in s, or NULL */
static const sched_step_t *round_step(const sched_t *s, uint32_t k)
{
    for (size_t i = 0; i < s->nsteps; i++)
        if (s->steps[i].kind == SCHED_XCHG && s->steps[i].round == k)
            return &s->steps[i];
    return NULL;
}

static size_t xchgs(const sched_t *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->nsteps; i++)
        n += s->steps[i].kind == SCHED_XCHG;
    return n;
}

static int mod(int a, int p)
{
    return ((a % p) + p) % p;
}

/* ---------------------------------------------------------------- allgather */

START_TEST(test_allgather_ring_peers)
{
    const alg_desc_t *alg = alg_of(UCOLL_COLL_ALLGATHER, "ring");
    const size_t c = 3;
    for (int p = 1; p <= 17; p++)
        for (int r = 0; r < p; r++) {
            sched_t s;
            REQUIRE(build(alg, p, r, c, 1, NULL, &s) == 0, "p=%d r=%d: build", p, r);
            REQUIRE(xchgs(&s) == (size_t)(p - 1), "p=%d: %zu rounds", p, xchgs(&s));
            for (int k = 0; k + 1 < p; k++) {
                const sched_step_t *st = round_step(&s, (uint32_t)k);
                REQUIRE(st != NULL, "p=%d r=%d: no round %d", p, r, k);
                REQUIRE(st->send_peer == mod(r + 1, p) && st->recv_peer == mod(r - 1, p),
                        "p=%d r=%d round %d: peers %d/%d", p, r, k, st->send_peer, st->recv_peer);
                REQUIRE(st->send.buf == SCHED_BUF_OUT && st->send.count == c &&
                            st->send.off == (size_t)mod(r - k, p) * c,
                        "p=%d r=%d round %d: sends OUT[%zu,+%zu)", p, r, k, st->send.off,
                        st->send.count);
                REQUIRE(st->recv.buf == SCHED_BUF_OUT && st->recv.count == c &&
                            st->recv.off == (size_t)mod(r - k - 1, p) * c,
                        "p=%d r=%d round %d: receives OUT[%zu,+%zu)", p, r, k, st->recv.off,
                        st->recv.count);
            }
            sched_destroy(&s);
        }
}
END_TEST

START_TEST(test_allgather_bruck_rounds)
{
    const alg_desc_t *alg = alg_of(UCOLL_COLL_ALLGATHER, "bruck");
    const size_t c = 2;
    for (int p = 1; p <= 40; p++) {
        int f = 0;
        while ((2 << f) <= p)
            f++;
        const unsigned q = sched_ceil_log2((uint64_t)p);
        for (int r = 0; r < p; r++) {
            sched_t s;
            REQUIRE(build(alg, p, r, c, 1, NULL, &s) == 0, "p=%d r=%d: build", p, r);
            REQUIRE(xchgs(&s) == q, "p=%d: %zu rounds, expected %u", p, xchgs(&s), q);
            for (unsigned k = 0; k < q; k++) {
                const sched_step_t *st = round_step(&s, k);
                const int d = 1 << k;
                /* round k < f moves 2^k blocks; the last of p != 2^f moves p - 2^f */
                const size_t blocks = (int)k < f ? (size_t)d : (size_t)(p - (1 << f));
                REQUIRE(st != NULL && st->send_peer == mod(r - d, p) &&
                            st->recv_peer == mod(r + d, p),
                        "p=%d r=%d round %u: peers", p, r, k);
                REQUIRE(st->send.count == blocks * c && st->recv.count == blocks * c,
                        "p=%d r=%d round %u: %zu elements, expected %zu", p, r, k, st->send.count,
                        blocks * c);
            }
            sched_destroy(&s);
        }
    }
}
END_TEST

START_TEST(test_allgather_recursive_doubling)
{
    const alg_desc_t *alg = alg_of(UCOLL_COLL_ALLGATHER, "recursive-doubling");
    REQUIRE(alg->flags & ALG_POWER_OF_TWO, "recursive-doubling is not marked p = 2^k");
    for (int p = 1; p <= 64; p++) {
        sched_t s;
        const int pow2 = (p & (p - 1)) == 0;
        for (int r = 0; r < p; r++) {
            const int rc = build(alg, p, r, 5, 1, NULL, &s);
            REQUIRE(rc == (pow2 ? 0 : -1), "p=%d r=%d: builder returned %d", p, r, rc);
            if (pow2)
                for (int k = 0; (1 << k) < p; k++) {
                    const sched_step_t *st = round_step(&s, (uint32_t)k);
                    REQUIRE(st != NULL && st->send_peer == (r ^ (1 << k)) &&
                                st->recv_peer == (r ^ (1 << k)) &&
                                st->send.count == (size_t)(5 << k) &&
                                st->send.off == (size_t)(r & ~((1 << k) - 1)) * 5 &&
                                st->recv.off == (size_t)((r ^ (1 << k)) & ~((1 << k) - 1)) * 5,
                            "p=%d r=%d round %d", p, r, k);
                }
            sched_destroy(&s);
        }
    }
}
END_TEST

/* ---------------------------------------------------------------- reduce-scatter */

START_TEST(test_reduce_scatter_ring_messages)
{
    const ucoll_coll_t colls[2] = {UCOLL_COLL_REDUCE_SCATTER_BLOCK, UCOLL_COLL_REDUCE_SCATTER};
    for (int ci = 0; ci < 2; ci++) {
        const alg_desc_t *alg = alg_of(colls[ci], "ring");
        REQUIRE(alg->flags & ALG_ORDER_PRESERVING, "ring is not marked order-preserving");
        for (int p = 1; p <= 17; p++)
            for (int comm = 0; comm <= 1; comm++)
                for (int r = 0; r < p; r++) {
                    sched_t s;
                    REQUIRE(build(alg, p, r, 4, comm, NULL, &s) == 0, "p=%d r=%d: build", p, r);
                    REQUIRE(xchgs(&s) == (size_t)(p - 1), "p=%d: %zu rounds", p, xchgs(&s));
                    for (int k = 0; k + 1 < p; k++) {
                        const sched_step_t *st = round_step(&s, (uint32_t)k);
                        /* non-commutative: two parts (L | U) once the chain has wrapped */
                        const size_t sent = !comm && r < k ? 8 : 4;
                        const size_t got = !comm && r - 1 < k && r > 0 ? 8 : 4;
                        REQUIRE(st != NULL && st->send_peer == mod(r + 1, p) &&
                                    st->recv_peer == mod(r - 1, p),
                                "p=%d r=%d round %d: peers", p, r, k);
                        REQUIRE(st->send.count == sent && st->recv.count == got,
                                "p=%d r=%d comm=%d round %d: sends %zu, receives %zu", p, r, comm,
                                k, st->send.count, st->recv.count);
                        if (k == 0)
                            REQUIRE(st->send.buf == SCHED_BUF_IN &&
                                        st->send.off == (size_t)mod(r - 1, p) * 4,
                                    "p=%d r=%d: round 0 sends its input block r-1", p, r);
                    }
                    sched_destroy(&s);
                }
    }
}
END_TEST

START_TEST(test_reduce_scatter_halving_and_bruck)
{
    const alg_desc_t *rh = alg_of(UCOLL_COLL_REDUCE_SCATTER_BLOCK, "recursive-halving");
    const alg_desc_t *br = alg_of(UCOLL_COLL_REDUCE_SCATTER_BLOCK, "bruck");
    REQUIRE((rh->flags & ALG_POWER_OF_TWO) && (rh->flags & ALG_ORDER_PRESERVING),
            "recursive-halving flags");
    REQUIRE(!(br->flags & ALG_ORDER_PRESERVING), "bruck reduce-scatter is commutative only");
    for (int p = 1; p <= 40; p++)
        for (int r = 0; r < p; r++) {
            sched_t s;
            const int pow2 = (p & (p - 1)) == 0;
            REQUIRE(build(rh, p, r, 3, 0, NULL, &s) == (pow2 ? 0 : -1), "halving p=%d", p);
            /* step i swaps p / 2^(i+1) blocks with r ^ 2^i */
            for (int i = 0; pow2 && (1 << i) < p; i++) {
                const sched_step_t *st = round_step(&s, (uint32_t)i);
                REQUIRE(st != NULL && st->send_peer == (r ^ (1 << i)) &&
                            st->send.count == (size_t)(p >> (i + 1)) * 3,
                        "halving p=%d r=%d step %d", p, r, i);
            }
            sched_destroy(&s);
            /* bruck: a first round of p - 2^f blocks (p != 2^f), then 2^(f-1), ..., 1, to
             * r + d from r - d */
            REQUIRE(build(br, p, r, 3, 1, NULL, &s) == 0, "bruck p=%d", p);
            REQUIRE(xchgs(&s) == sched_ceil_log2((uint64_t)p), "bruck p=%d rounds", p);
            int n2 = 1;
            while (2 * n2 <= p)
                n2 *= 2;
            uint32_t k = 0;
            if (n2 < p) {
                const sched_step_t *st = round_step(&s, k++);
                REQUIRE(st->send_peer == mod(r + n2, p) && st->recv_peer == mod(r - n2, p) &&
                            st->send.count == (size_t)(p - n2) * 3,
                        "bruck p=%d r=%d first round", p, r);
            }
            for (int d = n2 / 2; d >= 1; d /= 2) {
                const sched_step_t *st = round_step(&s, k++);
                REQUIRE(st->send_peer == mod(r + d, p) && st->recv_peer == mod(r - d, p) &&
                            st->send.count == (size_t)d * 3 && st->recv.count == (size_t)d * 3,
                        "bruck p=%d r=%d round of %d", p, r, d);
            }
            sched_destroy(&s);
        }
}
END_TEST

/* the v forms lay variable blocks out back to back: message sizes follow the counts */
START_TEST(test_reduce_scatter_v_sizes)
{
    const size_t counts[5] = {4, 0, 7, 1, 3};
    const alg_desc_t *alg = alg_of(UCOLL_COLL_REDUCE_SCATTER, "ring");
    for (int r = 0; r < 5; r++) {
        sched_t s;
        REQUIRE(build(alg, 5, r, 0, 1, counts, &s) == 0, "r=%d: build", r);
        for (int k = 0; k < 4; k++) {
            const sched_step_t *st = round_step(&s, (uint32_t)k);
            REQUIRE(st->send.count == counts[mod(r - k - 1, 5)] &&
                        st->recv.count == counts[mod(r - k - 2, 5)],
                    "r=%d round %d", r, k);
        }
        sched_destroy(&s);
    }
}
END_TEST

/* ---------------------------------------------------------------- allreduce, bcast */

static void figures(const char *coll_name, const char *name, int p, size_t m, int root, int comm,
                    unsigned rounds, uint64_t volume_elems)
{
    ucoll_coll_t coll;
    REQUIRE(alg_coll_from_name(coll_name, &coll) == 0, "%s", coll_name);
    const alg_desc_t *alg = alg_of(coll, name);
    symbolic_result_t res;
    const int rc = symbolic_run(alg, 0, coll, p, m, 4, root, comm, &res);
    REQUIRE(rc == 0 && res.ok, "%s %s p=%d m=%zu root=%d comm=%d: %s", coll_name, name, p, m, root,
            comm, res.error);
    REQUIRE(res.rounds == rounds, "%s %s p=%d: %u rounds, expected %u", coll_name, name, p,
            res.rounds, rounds);
    REQUIRE(res.volume_bytes == volume_elems * 4,
            "%s %s p=%d m=%zu: volume %llu bytes, expected %llu", coll_name, name, p, m,
            (unsigned long long)res.volume_bytes, (unsigned long long)(volume_elems * 4));
    REQUIRE(cost_rounds_bound(alg, 0, p) >= res.rounds, "%s %s p=%d: rounds bound %u < %u",
            coll_name, name, p, cost_rounds_bound(alg, 0, p), res.rounds);
    symbolic_result_free(&res);
}

START_TEST(test_allreduce_rs_ag_and_ring)
{
    /* m = 12 p: blocks of 12; volume 2 (p-1) blocks = 2 (p-1)/p L */
    for (int p = 1; p <= 33; p++) {
        const size_t m = 12 * (size_t)p;
        const unsigned q = sched_ceil_log2((uint64_t)p);
        figures("allreduce", "rs-ag", p, m, 0, 1, 2 * q, 2 * (uint64_t)(p - 1) * 12);
        figures("allreduce", "ring", p, m, 0, 1, 2 * (unsigned)(p - 1), 2 * (uint64_t)(p - 1) * 12);
        /* non-commutative: the ring reduce-scatter's two-part messages, 2p - 3 blocks */
        figures("allreduce", "ring", p, m, 0, 0, 2 * (unsigned)(p - 1),
                p >= 2 ? (uint64_t)(3 * p - 4) * 12 : 0);
    }
    /* algorithms.md 4.3: p = 5 and 6 in 6 rounds and 1.6 L and 1.67 L (L = 60 elements here) */
    figures("allreduce", "rs-ag", 5, 60, 0, 1, 6, 96);
    figures("allreduce", "rs-ag", 6, 60, 0, 1, 6, 100);
    /* uneven blocks: p = 5, m = 7 splits 2 2 1 1 1; the larger blocks set each round's maximum */
    figures("allreduce", "rs-ag", 5, 7, 0, 1, 6, 2 * (2 + 4 + 2)); /* 1, 2, 1 blocks a phase */
    REQUIRE(cost_rounds_bound(alg_of(UCOLL_COLL_ALLREDUCE, "ring"), 0, 100) == 198,
            "ring rounds bound at p = 100");
}
END_TEST

START_TEST(test_bcast_scatter_allgather)
{
    /* m = 8 p: the scatter moves p - 1 blocks on the root's path, the allgather p - 1 */
    for (int p = 1; p <= 33; p++)
        for (int root = 0; root < p; root += (p > 4 ? p / 3 : 1)) {
            const unsigned q = sched_ceil_log2((uint64_t)p);
            figures("bcast", "scatter-allgather", p, 8 * (size_t)p, root, 0, 2 * q,
                    2 * (uint64_t)(p - 1) * 8);
        }
    /* fewer elements than ranks: empty blocks, still every rank gets the vector */
    figures("bcast", "scatter-allgather", 7, 3, 4, 1, 6, (0 + 1 + 1) + (1 + 2 + 3));
}
END_TEST

START_TEST(test_rounds_bound_ring)
{
    const char *names[4] = {"allgather", "allgatherv", "reduce_scatter_block", "reduce_scatter"};
    for (int i = 0; i < 4; i++) {
        ucoll_coll_t coll;
        REQUIRE(alg_coll_from_name(names[i], &coll) == 0, "%s", names[i]);
        const alg_desc_t *alg = alg_of(coll, "ring");
        for (int p = 1; p <= 300; p++)
            REQUIRE(cost_rounds_bound(alg, 0, p) == (unsigned)(p - 1), "%s ring p=%d: bound %u",
                    names[i], p, cost_rounds_bound(alg, 0, p));
    }
}
END_TEST

/* ---------------------------------------------------------------- symbolic, every p */

typedef struct {
    unsigned rounds;
    uint64_t volume, ops; /* in blocks; ops: (+) on blocks, the most of any process */
} fig_t;

/* algorithms.md 4.1-4.2 for p ranks; -1 where the builder must refuse p */
static int expect(ucoll_coll_t coll, const char *name, int p, int comm, fig_t *e)
{
    const unsigned q = sched_ceil_log2((uint64_t)p);
    const int pow2 = (p & (p - 1)) == 0;
    const int reduces =
        coll == UCOLL_COLL_REDUCE_SCATTER_BLOCK || coll == UCOLL_COLL_REDUCE_SCATTER;
    e->volume = (uint64_t)(p - 1);
    e->ops = reduces ? (uint64_t)(p - 1) : 0;
    if (strcmp(name, "ring") == 0) {
        e->rounds = (unsigned)(p - 1);
        if (reduces && !comm && p >= 2) { /* two-part messages after the first round */
            e->volume = 2 * (uint64_t)p - 3;
            e->ops = p >= 3 ? (uint64_t)p : 1;
        }
        return 0;
    }
    if (strcmp(name, "recursive-doubling") == 0 || strcmp(name, "recursive-halving") == 0) {
        e->rounds = q;
        return pow2 ? 0 : -1;
    }
    e->rounds = q; /* bruck */
    return 0;
}

static void sweep_one(const alg_desc_t *alg, int p, size_t c, int comm)
{
    const char *cn = alg_coll_name(alg->coll);
    const size_t elem = 1 + (size_t)(p % 5);
    fig_t e;
    const int valid = expect(alg->coll, alg->name, p, comm, &e) == 0;
    symbolic_result_t res;
    const int rc = symbolic_run(alg, 0, alg->coll, p, c, elem, 0, comm, &res);
    if (!valid) {
        REQUIRE(rc == -1, "%s %s p=%d: built for a p it does not support", cn, alg->name, p);
        symbolic_result_free(&res);
        return;
    }
    REQUIRE(rc == 0 && res.ok, "%s %s p=%d c=%zu comm=%d: %s", cn, alg->name, p, c, comm,
            res.error);
    uint64_t op_elems = 0;
    for (int r = 0; r < p; r++)
        op_elems = res.rank_op_elems[r] > op_elems ? res.rank_op_elems[r] : op_elems;
    REQUIRE(res.rounds == e.rounds, "%s %s p=%d c=%zu comm=%d: %u rounds, expected %u", cn,
            alg->name, p, c, comm, res.rounds, e.rounds);
    REQUIRE(res.volume_bytes == e.volume * c * elem,
            "%s %s p=%d c=%zu comm=%d: volume %llu bytes, expected %llu blocks", cn, alg->name, p,
            c, comm, (unsigned long long)res.volume_bytes, (unsigned long long)e.volume);
    REQUIRE(op_elems == e.ops * c,
            "%s %s p=%d c=%zu comm=%d: (+) on %llu elements, expected %llu blocks", cn, alg->name,
            p, c, comm, (unsigned long long)op_elems, (unsigned long long)e.ops);
    REQUIRE(cost_rounds_bound(alg, 0, p) >= res.rounds, "%s %s p=%d: rounds bound %u < %u", cn,
            alg->name, p, cost_rounds_bound(alg, 0, p), res.rounds);
    symbolic_result_free(&res);
}

START_TEST(test_sweep_figures)
{
    const ucoll_coll_t colls[4] = {UCOLL_COLL_ALLGATHER, UCOLL_COLL_ALLGATHERV,
                                   UCOLL_COLL_REDUCE_SCATTER_BLOCK, UCOLL_COLL_REDUCE_SCATTER};
    const int big[] = {65, 100, 127, 128, 129, 200, 255, 256};
    const size_t counts[3] = {0, 1, 3};
    for (int ci = 0; ci < 4; ci++) {
        size_t n;
        const alg_desc_t *algs = alg_list(colls[ci], &n);
        REQUIRE(n > 0, "%s has no algorithm", alg_coll_name(colls[ci]));
        for (size_t i = 0; i < n; i++)
            for (int pi = 0; pi < 64 + (int)(sizeof(big) / sizeof(big[0])); pi++) {
                const int p = pi < 64 ? pi + 1 : big[pi - 64];
                for (int comm = 1; comm >= 0; comm--) {
                    if (!comm && !(algs[i].flags & ALG_ORDER_PRESERVING)) {
                        /* the flag is needed: the verdict rejects the unordered result */
                        symbolic_result_t res;
                        const int rc = symbolic_run(&algs[i], 0, colls[ci], p, 2, 4, 0, 0, &res);
                        REQUIRE(p < 3 || (rc == 0 && !res.ok),
                                "%s %s p=%d: ordered without the flag", alg_coll_name(colls[ci]),
                                algs[i].name, p);
                        symbolic_result_free(&res);
                        continue;
                    }
                    for (int k = 0; k < 3; k++)
                        sweep_one(&algs[i], p, counts[k], comm);
                }
            }
    }
}
END_TEST

/* the v forms with irregular counts (zeros included) and gaps between OUT blocks */
START_TEST(test_v_forms_irregular)
{
    const char *ag[2] = {"ring", "bruck"}, *rs[3] = {"ring", "recursive-halving", "bruck"};
    for (int p = 1; p <= 17; p++) {
        sched_args_t *args = calloc((size_t)p, sizeof(sched_args_t));
        size_t *cnt = calloc((size_t)p, sizeof(size_t)), *dsp = calloc((size_t)p, sizeof(size_t));
        REQUIRE(args && cnt && dsp, "no memory");
        size_t end = 0;
        for (int j = 0; j < p; j++) {
            cnt[j] = (size_t)((j * 7 + 3) % 5); /* 3 0 2 4 1 3 0 ... */
            dsp[j] = end + 1 + (size_t)(j % 2);
            end = dsp[j] + cnt[j];
        }
        for (int comm = 1; comm >= 0; comm--) {
            for (int r = 0; r < p; r++) {
                memset(&args[r], 0, sizeof(args[r]));
                args[r].rank = r;
                args[r].size = p;
                args[r].elem_size = 2;
                args[r].commutative = comm;
                args[r].recv_counts = cnt;
                args[r].recv_displs = dsp;
            }
            for (int i = 0; i < 2; i++) {
                const alg_desc_t *alg = alg_of(UCOLL_COLL_ALLGATHERV, ag[i]);
                for (int r = 0; r < p; r++)
                    args[r].count = cnt[r];
                symbolic_result_t res;
                const int rc = symbolic_run_args(alg, UCOLL_COLL_ALLGATHERV, p, args, &res);
                REQUIRE(rc == 0 && res.ok, "allgatherv %s p=%d: %s", ag[i], p, res.error);
                symbolic_result_free(&res);
            }
            for (int i = 0; i < 3; i++) {
                const alg_desc_t *alg = alg_of(UCOLL_COLL_REDUCE_SCATTER, rs[i]);
                if ((!comm && !(alg->flags & ALG_ORDER_PRESERVING)) ||
                    ((alg->flags & ALG_POWER_OF_TWO) && (p & (p - 1)) != 0))
                    continue;
                for (int r = 0; r < p; r++) {
                    args[r].count = cnt[r];
                    args[r].recv_displs = NULL;
                }
                symbolic_result_t res;
                const int rc = symbolic_run_args(alg, UCOLL_COLL_REDUCE_SCATTER, p, args, &res);
                REQUIRE(rc == 0 && res.ok, "reduce_scatter %s p=%d comm=%d: %s", rs[i], p, comm,
                        res.error);
                symbolic_result_free(&res);
                for (int r = 0; r < p; r++)
                    args[r].recv_displs = dsp;
            }
        }
        free(args);
        free(cnt);
        free(dsp);
    }
}
END_TEST

static Suite *blocks_suite(void)
{
    Suite *su = suite_create("blocks_ag");
    TCase *tc = tcase_create("schedules");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_allgather_ring_peers);
    tcase_add_test(tc, test_allgather_bruck_rounds);
    tcase_add_test(tc, test_allgather_recursive_doubling);
    tcase_add_test(tc, test_reduce_scatter_ring_messages);
    tcase_add_test(tc, test_reduce_scatter_halving_and_bruck);
    tcase_add_test(tc, test_reduce_scatter_v_sizes);
    tcase_add_test(tc, test_allreduce_rs_ag_and_ring);
    tcase_add_test(tc, test_bcast_scatter_allgather);
    tcase_add_test(tc, test_rounds_bound_ring);
    tcase_add_test(tc, test_v_forms_irregular);
    suite_add_tcase(su, tc);
    /* the symbolic sweep: most of the run time; CK_EXCLUDE_TAGS=long (the sanitizer build) skips
     * it */
    TCase *sw = tcase_create("sweep");
    tcase_set_timeout(sw, 600);
    tcase_set_tags(sw, "long");
    tcase_add_test(sw, test_sweep_figures);
    suite_add_tcase(su, sw);
    return su;
}

int main(void)
{
    SRunner *sr = srunner_create(blocks_suite());
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
