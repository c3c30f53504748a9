/*
 * Unit tests of the block collectives (Check): allgather(v), reduce_scatter(_block),
 * alltoall(v), gather(v), scatter(v).
 *
 * First the symbolic executor's verdicts: schedules written here, independently of the
 * library's builders (every block sent straight to its destination, one round per peer), must
 * pass with equal and with irregular counts, and each broken variant must fail with the reason.
 * Then every registered block algorithm against the figures of algorithms.md 4, recomputed
 * here from the text, for every p up to 256 (the "long" case; CK_EXCLUDE_TAGS=long runs
 * p <= 33 only), the closed forms of cost.c against the schedules, the builders on irregular
 * per-rank counts, auto's choices, and allreduce rs-ag / ring and bcast scatter-allgather
 * (4.3, 4.6).
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

#define MAXP 17

/* ---------------------------------------------------------------- arguments */

/* every rank's arguments and the arrays they point to */
typedef struct {
    int p;
    sched_args_t a[MAXP];
    size_t sc[MAXP][MAXP], sd[MAXP][MAXP], rc[MAXP][MAXP], rd[MAXP][MAXP];
} call_t;

static void call_init(call_t *k, ucoll_coll_t coll, int p, size_t c, int root, int comm)
{
    memset(k, 0, sizeof(*k));
    k->p = p;
    for (int r = 0; r < p; r++) {
        sched_args_t *a = &k->a[r];
        a->rank = r;
        a->size = p;
        a->root = root;
        a->count = c;
        a->elem_size = 1;
        a->commutative = comm;
        for (int i = 0; i < p; i++) {
            k->sc[r][i] = k->rc[r][i] = c;
            k->sd[r][i] = k->rd[r][i] = (size_t)i * c;
        }
        const int v = coll == UCOLL_COLL_ALLGATHERV || coll == UCOLL_COLL_REDUCE_SCATTER ||
                      coll == UCOLL_COLL_ALLTOALLV || (coll == UCOLL_COLL_GATHERV && r == root) ||
                      (coll == UCOLL_COLL_SCATTERV && r == root);
        if (v) {
            a->send_counts = k->sc[r];
            a->send_displs = k->sd[r];
            a->recv_counts = k->rc[r];
            a->recv_displs = k->rd[r];
        }
    }
}

/* irregular blocks: block i -> j has (i + 2j) % 3 elements (some empty); every rank lays its
 * blocks out in reverse order with a gap of 2 before each (elements there stay untouched) */
static void call_irregular(call_t *k, ucoll_coll_t coll, int p, int root, int comm)
{
    call_init(k, coll, p, 0, root, comm);
    for (int r = 0; r < p; r++) {
        size_t off = 2;
        for (int i = p - 1; i >= 0; i--) {
            k->rc[r][i] = (size_t)((i + 2 * r) % 3); /* from i to r */
            k->rd[r][i] = off;
            off += k->rc[r][i] + 2;
        }
        off = 2;
        for (int j = p - 1; j >= 0; j--) {
            k->sc[r][j] = (size_t)((r + 2 * j) % 3); /* from r to j */
            k->sd[r][j] = off;
            off += k->sc[r][j] + 2;
        }
    }
    for (int r = 0; r < p; r++) {
        sched_args_t *a = &k->a[r];
        switch (coll) {
        case UCOLL_COLL_ALLGATHERV: /* rank i sends rc[*][i] = its own count to everyone */
        case UCOLL_COLL_GATHERV:
            a->count = (size_t)(r % 3) + 1;
            for (int j = 0; j < p; j++)
                for (int i = 0; i < p; i++)
                    k->rc[j][i] = (size_t)(i % 3) + 1;
            break;
        case UCOLL_COLL_SCATTERV:
            a->count = (size_t)(root + 2 * r) % 3; /* the root's sc[root][r] */
            break;
        case UCOLL_COLL_REDUCE_SCATTER: /* the same counts everywhere, back to back */
            for (int i = 0; i < p; i++)
                k->rc[r][i] = (size_t)(i % 3);
            break;
        default:
            break;
        }
    }
    /* allgatherv / gatherv: displacements again, for the counts just set */
    if (coll == UCOLL_COLL_ALLGATHERV || coll == UCOLL_COLL_GATHERV)
        for (int r = 0; r < p; r++) {
            size_t off = 2;
            for (int i = p - 1; i >= 0; i--) {
                k->rd[r][i] = off;
                off += k->rc[r][i] + 2;
            }
        }
}

/* ---------------------------------------------------------------- reference schedules */

/* where rank r's block from i / for j lies, per collective */
static sched_region_t out_block(const call_t *k, ucoll_coll_t coll, int r, int i)
{
    const sched_args_t *a = &k->a[r];
    switch (coll) {
    case UCOLL_COLL_ALLGATHERV:
    case UCOLL_COLL_GATHERV:
    case UCOLL_COLL_ALLTOALLV:
        return sched_region(SCHED_BUF_OUT, a->recv_displs[i], a->recv_counts[i]);
    case UCOLL_COLL_SCATTER:
    case UCOLL_COLL_SCATTERV:
        return sched_region(SCHED_BUF_OUT, 0, a->count);
    default:
        return sched_region(SCHED_BUF_OUT, (size_t)i * a->count, a->count);
    }
}

static sched_region_t in_block(const call_t *k, ucoll_coll_t coll, int r, int j)
{
    const sched_args_t *a = &k->a[r];
    switch (coll) {
    case UCOLL_COLL_ALLTOALLV:
    case UCOLL_COLL_SCATTERV:
        return sched_region(SCHED_BUF_IN, a->send_displs[j], a->send_counts[j]);
    case UCOLL_COLL_ALLTOALL:
    case UCOLL_COLL_SCATTER:
        return sched_region(SCHED_BUF_IN, (size_t)j * a->count, a->count);
    default:
        return sched_region(SCHED_BUF_IN, 0, a->count);
    }
}

/* the (+) blocks of a reduce-scatter: block j of IN */
static sched_region_t rs_block(const call_t *k, ucoll_coll_t coll, int r, int j, int buf)
{
    const sched_args_t *a = &k->a[r];
    if (coll == UCOLL_COLL_REDUCE_SCATTER_BLOCK)
        return sched_region(buf, (size_t)j * a->count, a->count);
    size_t first = 0;
    for (int i = 0; i < j; i++)
        first += a->recv_counts[i];
    return sched_region(buf, first, a->recv_counts[j]);
}

/*
 * Every block straight to its destination. Data collectives: round k (1..p-1) rank r sends to
 * r + k and receives from r - k (gather / scatter: only the root's partner of that round).
 * Reduce-scatter: block j travels the chain 0 -> 1 -> ... -> p-1, each rank adding its own
 * block on the right (in order), then p-1 hands it to j; rounds j*p .. j*p + p - 1.
 */
static void ref_scheds(sched_t *s, const call_t *k, ucoll_coll_t coll)
{
    const int p = k->p, root = k->a[0].root;
    for (int r = 0; r < p; r++)
        sched_init(&s[r]);
    if (coll == UCOLL_COLL_REDUCE_SCATTER_BLOCK || coll == UCOLL_COLL_REDUCE_SCATTER) {
        for (int j = 0; j < p; j++) {
            const uint32_t r0 = (uint32_t)(j * p);
            for (int r = 0; r < p; r++) {
                const sched_region_t acc = rs_block(k, coll, r, j, SCHED_BUF_ACC);
                const sched_region_t tmp = rs_block(k, coll, r, j, SCHED_BUF_TMP);
                sched_copy(&s[r], rs_block(k, coll, r, j, SCHED_BUF_IN), acc);
                if (r > 0) {
                    sched_recv(&s[r], r0 + (uint32_t)r - 1, r - 1, tmp);
                    sched_reduce(&s[r], tmp, acc);
                }
                if (r < p - 1)
                    sched_send(&s[r], r0 + (uint32_t)r, r + 1, acc);
                else if (j != p - 1)
                    sched_send(&s[r], r0 + (uint32_t)p - 1, j, acc);
                if (r == j && j != p - 1)
                    sched_recv(&s[r], r0 + (uint32_t)p - 1, p - 1,
                               sched_region(SCHED_BUF_OUT, 0, acc.count));
                if (r == j && j == p - 1)
                    sched_copy(&s[r], acc, sched_region(SCHED_BUF_OUT, 0, acc.count));
            }
        }
        return;
    }
    const int rooted = coll == UCOLL_COLL_GATHER || coll == UCOLL_COLL_GATHERV ||
                       coll == UCOLL_COLL_SCATTER || coll == UCOLL_COLL_SCATTERV;
    const int gathers = coll == UCOLL_COLL_GATHER || coll == UCOLL_COLL_GATHERV;
    const int scatters = coll == UCOLL_COLL_SCATTER || coll == UCOLL_COLL_SCATTERV;
    for (int r = 0; r < p; r++) {
        if (!scatters && (!gathers || r == root))
            sched_copy(&s[r], in_block(k, coll, r, r), out_block(k, coll, r, r));
        for (int d = 1; d < p; d++) {
            const uint32_t round = (uint32_t)d - 1;
            const int to = (r + d) % p, from = (r - d + p) % p;
            if (!rooted) {
                sched_xchg(&s[r], round, to, in_block(k, coll, r, to), from,
                           out_block(k, coll, r, from));
            } else if (gathers) {
                if (r == root)
                    sched_recv(&s[r], round, from, out_block(k, coll, r, from));
                else if (to == root)
                    sched_send(&s[r], round, to, in_block(k, coll, r, to));
            } else if (scatters) {
                if (r == root)
                    sched_send(&s[r], round, to, in_block(k, coll, r, to));
                else if (from == root)
                    sched_recv(&s[r], round, from, out_block(k, coll, r, from));
            }
        }
        if (scatters && r == root)
            sched_copy(&s[r], in_block(k, coll, r, r), out_block(k, coll, r, r));
    }
}

static void free_scheds(sched_t *s, int p)
{
    for (int r = 0; r < p; r++)
        sched_destroy(&s[r]);
}

static const ucoll_coll_t block_colls[] = {
    UCOLL_COLL_ALLGATHER,      UCOLL_COLL_ALLGATHERV, UCOLL_COLL_REDUCE_SCATTER_BLOCK,
    UCOLL_COLL_REDUCE_SCATTER, UCOLL_COLL_ALLTOALL,   UCOLL_COLL_ALLTOALLV,
    UCOLL_COLL_GATHER,         UCOLL_COLL_GATHERV,    UCOLL_COLL_SCATTER,
    UCOLL_COLL_SCATTERV};
#define NBLOCK_COLLS (sizeof(block_colls) / sizeof(block_colls[0]))

static void run_ok(sched_t *s, const call_t *k, ucoll_coll_t coll, const char *what)
{
    symbolic_result_t res;
    const int rc = symbolic_run_scheds_args(s, coll, k->p, k->a, &res);
    REQUIRE(rc == 0 && res.ok, "%s p=%d (%s): %s", alg_coll_name(coll), k->p, what, res.error);
    symbolic_result_free(&res);
}

static void run_error(sched_t *s, const call_t *k, ucoll_coll_t coll, const char *want)
{
    symbolic_result_t res;
    const int rc = symbolic_run_scheds_args(s, coll, k->p, k->a, &res);
    REQUIRE(rc == 0, "%s p=%d: the run failed: %s", alg_coll_name(coll), k->p, res.error);
    REQUIRE(!res.ok, "%s p=%d: a broken schedule passed (expected '%s')", alg_coll_name(coll), k->p,
            want);
    REQUIRE(strstr(res.error, want) != NULL, "%s p=%d: error '%s' does not mention '%s'",
            alg_coll_name(coll), k->p, res.error, want);
    symbolic_result_free(&res);
}

static void run_bad_args(sched_t *s, const call_t *k, ucoll_coll_t coll, const char *want)
{
    symbolic_result_t res;
    const int rc = symbolic_run_scheds_args(s, coll, k->p, k->a, &res);
    REQUIRE(rc == -1, "%s p=%d: arguments no call may pass were accepted", alg_coll_name(coll),
            k->p);
    REQUIRE(strstr(res.error, want) != NULL, "%s p=%d: error '%s' does not mention '%s'",
            alg_coll_name(coll), k->p, res.error, want);
    symbolic_result_free(&res);
}

/* ---------------------------------------------------------------- the verdicts */

START_TEST(test_reference_schedules_pass)
{
    sched_t s[MAXP];
    call_t k;
    for (size_t ci = 0; ci < NBLOCK_COLLS; ci++) {
        const ucoll_coll_t coll = block_colls[ci];
        for (int p = 1; p <= MAXP; p++)
            for (int root = 0; root < p; root += (p > 3 ? p - 1 : 1)) {
                for (size_t c = 0; c <= 3; c++) {
                    call_init(&k, coll, p, c, root, 0);
                    ref_scheds(s, &k, coll);
                    run_ok(s, &k, coll, "equal blocks");
                    free_scheds(s, p);
                }
                call_irregular(&k, coll, p, root, 0);
                ref_scheds(s, &k, coll);
                run_ok(s, &k, coll, "irregular blocks");
                free_scheds(s, p);
            }
    }
}
END_TEST

/* the entries without per-rank arguments give the v forms equal blocks, block i at i*c */
START_TEST(test_equal_blocks_entry)
{
    sched_t s[MAXP];
    call_t k;
    for (size_t ci = 0; ci < NBLOCK_COLLS; ci++) {
        const ucoll_coll_t coll = block_colls[ci];
        call_init(&k, coll, 5, 3, 2, 0);
        ref_scheds(s, &k, coll);
        symbolic_result_t res;
        const int rc = symbolic_run_scheds(s, coll, 5, 3, 1, 2, 0, &res);
        REQUIRE(rc == 0 && res.ok, "%s: %s", alg_coll_name(coll), res.error);
        /* the reference sends every block once: 5 * 4 blocks of 3 bytes (reduce-scatter: the
         * chain of 4 hops per block, and 4 of the 5 results handed on) */
        const uint64_t want =
            (coll == UCOLL_COLL_REDUCE_SCATTER_BLOCK || coll == UCOLL_COLL_REDUCE_SCATTER)
                ? (5 * 4 + 4) * 3
            : (coll == UCOLL_COLL_ALLGATHER || coll == UCOLL_COLL_ALLGATHERV ||
               coll == UCOLL_COLL_ALLTOALL || coll == UCOLL_COLL_ALLTOALLV)
                ? 5 * 4 * 3
                : 4 * 3;
        REQUIRE(res.total_bytes == want, "%s: %llu bytes sent, expected %llu", alg_coll_name(coll),
                (unsigned long long)res.total_bytes, (unsigned long long)want);
        symbolic_result_free(&res);
        free_scheds(s, 5);
    }
}
END_TEST

START_TEST(test_catches_wrong_blocks)
{
    sched_t s[MAXP];
    call_t k;
    /* allgather: rank 1 puts rank 0's block where rank 2's belongs */
    call_init(&k, UCOLL_COLL_ALLGATHER, 3, 2, 0, 1);
    ref_scheds(s, &k, UCOLL_COLL_ALLGATHER);
    s[1].steps[0].dst.off = 4; /* its own copy into block 2 */
    run_error(s, &k, UCOLL_COLL_ALLGATHER,
              "rank 1: OUT[2,4) is untouched; expected element 0 "
              "of inputs 1..1");
    free_scheds(s, 3);

    /* alltoall: every block arrives, but rank 0 sends block 0 (its own) to everyone */
    call_init(&k, UCOLL_COLL_ALLTOALL, 3, 2, 0, 1);
    ref_scheds(s, &k, UCOLL_COLL_ALLTOALL);
    for (size_t i = 0; i < s[0].nsteps; i++)
        if (s[0].steps[i].kind == SCHED_XCHG)
            s[0].steps[i].send.off = 0;
    run_error(s, &k, UCOLL_COLL_ALLTOALL,
              "holds element 0 of 1 inputs spanning ranks 0..0 "
              "(ordered); expected element 2 of inputs 0..0");
    free_scheds(s, 3);

    /* alltoallv with gaps: a stray copy into the gap before the first block */
    call_irregular(&k, UCOLL_COLL_ALLTOALLV, 4, 0, 1);
    ref_scheds(s, &k, UCOLL_COLL_ALLTOALLV);
    sched_copy(&s[2], sched_region(SCHED_BUF_IN, 2, 1), sched_region(SCHED_BUF_OUT, 0, 1));
    run_error(s, &k, UCOLL_COLL_ALLTOALLV,
              "rank 2: OUT[0,1) holds element 2 of 1 inputs spanning ranks 2..2 (ordered); "
              "expected it untouched (outside every block)");
    free_scheds(s, 4);

    /* alltoallv: rank 1 reads its block for rank 3 one element too late */
    call_irregular(&k, UCOLL_COLL_ALLTOALLV, 4, 0, 1);
    ref_scheds(s, &k, UCOLL_COLL_ALLTOALLV);
    REQUIRE(k.sc[1][3] == 1, "the layout changed");
    for (size_t i = 0; i < s[1].nsteps; i++)
        if (s[1].steps[i].kind == SCHED_XCHG && s[1].steps[i].send_peer == 3)
            s[1].steps[i].send.off++;
    run_error(s, &k, UCOLL_COLL_ALLTOALLV, "rank 3: OUT[");
    free_scheds(s, 4);

    /* gather: the root puts rank 2's block (its last) over rank 3's */
    call_init(&k, UCOLL_COLL_GATHER, 4, 1, 1, 1);
    ref_scheds(s, &k, UCOLL_COLL_GATHER);
    for (size_t i = 0; i < s[1].nsteps; i++)
        if (s[1].steps[i].kind == SCHED_XCHG && s[1].steps[i].recv_peer == 2)
            s[1].steps[i].recv.off = 3; /* over rank 3's, which comes later */
    run_error(s, &k, UCOLL_COLL_GATHER,
              "rank 1: OUT[2,3) is untouched; expected element 0 of "
              "inputs 2..2");
    free_scheds(s, 4);

    /* scatter: the root keeps block 0 instead of its own block 2 */
    call_init(&k, UCOLL_COLL_SCATTER, 3, 2, 2, 1);
    ref_scheds(s, &k, UCOLL_COLL_SCATTER);
    s[2].steps[s[2].nsteps - 1].src.off = 0;
    run_error(s, &k, UCOLL_COLL_SCATTER,
              "rank 2: OUT[0,2) holds element 0 of 1 inputs spanning ranks 2..2 (ordered); "
              "expected element 4 of inputs 2..2");
    free_scheds(s, 3);
}
END_TEST

START_TEST(test_catches_wrong_reductions)
{
    sched_t s[MAXP];
    call_t k;
    /* reduce_scatter_block, non-commutative: rank 1 adds its block on the left */
    call_init(&k, UCOLL_COLL_REDUCE_SCATTER_BLOCK, 3, 2, 0, 0);
    ref_scheds(s, &k, UCOLL_COLL_REDUCE_SCATTER_BLOCK);
    for (size_t i = 0; i < s[1].nsteps; i++)
        if (s[1].steps[i].kind == SCHED_REDUCE) { /* acc <- tmp (+) acc  becomes  tmp <- acc (+)
                                                     tmp, sent from tmp */
            sched_region_t t = s[1].steps[i].src;
            s[1].steps[i].src = s[1].steps[i].dst;
            s[1].steps[i].dst = t;
            s[1].steps[i + 1].send = t;
        }
    run_error(s, &k, UCOLL_COLL_REDUCE_SCATTER_BLOCK, "inputs 0..2 in order");
    /* the same schedule is right for a commutative op */
    for (int r = 0; r < 3; r++)
        k.a[r].commutative = 1;
    run_ok(s, &k, UCOLL_COLL_REDUCE_SCATTER_BLOCK, "commutative");
    free_scheds(s, 3);

    /* reduce_scatter: rank 2 leaves its own block out of the chain */
    call_irregular(&k, UCOLL_COLL_REDUCE_SCATTER, 4, 0, 1);
    ref_scheds(s, &k, UCOLL_COLL_REDUCE_SCATTER);
    for (size_t i = 0; i < s[2].nsteps; i++)
        if (s[2].steps[i].kind == SCHED_REDUCE && s[2].steps[i].src.count > 0) {
            s[2].steps[i].kind = SCHED_COPY;
            break;
        }
    run_error(s, &k, UCOLL_COLL_REDUCE_SCATTER, "expected element 0 of inputs 0..3");
    free_scheds(s, 4);

    /* reduce_scatter: rank 2 hands itself block 1 instead of its own block 2 */
    call_init(&k, UCOLL_COLL_REDUCE_SCATTER, 3, 2, 0, 1);
    ref_scheds(s, &k, UCOLL_COLL_REDUCE_SCATTER);
    for (int r = 0; r < 3; r++)
        for (size_t i = 0; i < s[r].nsteps; i++) {
            sched_step_t *st = &s[r].steps[i];
            if (st->kind == SCHED_COPY && st->dst.buf == SCHED_BUF_OUT)
                st->src.off = 2;
        }
    run_error(s, &k, UCOLL_COLL_REDUCE_SCATTER, "rank 2: OUT[0,2) holds element 2");
    free_scheds(s, 3);
}
END_TEST

START_TEST(test_catches_absent_buffers)
{
    sched_t s[MAXP];
    call_t k;
    /* gather: a non-root writes the OUT it does not have */
    call_init(&k, UCOLL_COLL_GATHER, 3, 2, 0, 1);
    ref_scheds(s, &k, UCOLL_COLL_GATHER);
    sched_copy(&s[2], sched_region(SCHED_BUF_IN, 0, 2), sched_region(SCHED_BUF_OUT, 0, 2));
    run_error(s, &k, UCOLL_COLL_GATHER,
              "rank 2 [OUT[0,2) = IN[0,2)]: destination region names OUT, which does not exist on "
              "this rank of a gather");
    free_scheds(s, 3);
    /* scatterv: a non-root reads the IN it does not have */
    call_irregular(&k, UCOLL_COLL_SCATTERV, 3, 1, 1);
    ref_scheds(s, &k, UCOLL_COLL_SCATTERV);
    sched_copy(&s[0], sched_region(SCHED_BUF_IN, 0, 1), sched_region(SCHED_BUF_TMP, 0, 1));
    run_error(s, &k, UCOLL_COLL_SCATTERV, "names IN, which does not exist on this rank");
    free_scheds(s, 3);
    /* allgather: OUT has p*c elements, not more */
    call_init(&k, UCOLL_COLL_ALLGATHER, 3, 2, 0, 1);
    ref_scheds(s, &k, UCOLL_COLL_ALLGATHER);
    sched_copy(&s[0], sched_region(SCHED_BUF_IN, 0, 2), sched_region(SCHED_BUF_OUT, 5, 2));
    run_error(s, &k, UCOLL_COLL_ALLGATHER, "lies outside OUT, which has 6 elements");
    free_scheds(s, 3);
    /* reduce_scatter_block: IN has p*c elements, OUT c */
    call_init(&k, UCOLL_COLL_REDUCE_SCATTER_BLOCK, 3, 2, 0, 1);
    ref_scheds(s, &k, UCOLL_COLL_REDUCE_SCATTER_BLOCK);
    sched_copy(&s[1], sched_region(SCHED_BUF_IN, 5, 1), sched_region(SCHED_BUF_OUT, 2, 1));
    run_error(s, &k, UCOLL_COLL_REDUCE_SCATTER_BLOCK, "lies outside OUT, which has 2 elements");
    free_scheds(s, 3);
}
END_TEST

START_TEST(test_rejects_bad_arguments)
{
    sched_t s[MAXP];
    call_t k;
    /* alltoallv: rank 2 expects one element more from rank 1 than rank 1 sends it */
    call_irregular(&k, UCOLL_COLL_ALLTOALLV, 4, 0, 1);
    ref_scheds(s, &k, UCOLL_COLL_ALLTOALLV);
    k.rc[2][1]++;
    run_bad_args(s, &k, UCOLL_COLL_ALLTOALLV, "block 1 -> 2");
    /* overlapping receive blocks */
    call_irregular(&k, UCOLL_COLL_ALLTOALLV, 4, 0, 1);
    k.rd[3][2] = k.rd[3][1];
    REQUIRE(k.rc[3][1] > 0 && k.rc[3][2] > 0, "the layout changed");
    run_bad_args(s, &k, UCOLL_COLL_ALLTOALLV, "rank 3: two blocks of OUT overlap");
    /* missing arrays */
    call_irregular(&k, UCOLL_COLL_ALLTOALLV, 4, 0, 1);
    k.a[1].send_displs = NULL;
    run_bad_args(s, &k, UCOLL_COLL_ALLTOALLV, "rank 1 lacks");
    free_scheds(s, 4);
    /* reduce_scatter: the counts differ between ranks */
    call_init(&k, UCOLL_COLL_REDUCE_SCATTER, 3, 2, 0, 1);
    ref_scheds(s, &k, UCOLL_COLL_REDUCE_SCATTER);
    k.rc[1][2] = 1;
    run_bad_args(s, &k, UCOLL_COLL_REDUCE_SCATTER, "block 2 -> 1");
    /* allgather: the ranks' counts differ */
    call_init(&k, UCOLL_COLL_ALLGATHER, 3, 2, 0, 1);
    k.a[2].count = 1;
    run_bad_args(s, &k, UCOLL_COLL_ALLGATHER, "rank 2 has count 1");
    /* roots that differ, ranks out of place */
    call_init(&k, UCOLL_COLL_GATHER, 3, 2, 0, 1);
    k.a[1].root = 1;
    run_bad_args(s, &k, UCOLL_COLL_GATHER, "rank 1's root");
    call_init(&k, UCOLL_COLL_GATHER, 3, 2, 0, 1);
    k.a[1].rank = 2;
    run_bad_args(s, &k, UCOLL_COLL_GATHER, "args[1] is rank 2 of 3");
    /* gatherv: the root's count for rank 1 is not rank 1's count */
    call_irregular(&k, UCOLL_COLL_GATHERV, 3, 0, 1);
    k.a[1].count++;
    run_bad_args(s, &k, UCOLL_COLL_GATHERV, "block 1 -> 0");
    free_scheds(s, 3);
}
END_TEST

/* ---------------------------------------------------------------- the figures of 4 */

/* #{ 0 < j < p : bit k of j is 1 }, counted one by one */
static uint64_t count_bit(int p, unsigned k)
{
    uint64_t n = 0;
    for (int j = 1; j < p; j++)
        n += (uint64_t)((j >> k) & 1);
    return n;
}

typedef struct {
    int serves;      /* 0: the builder must refuse p */
    unsigned rounds; /* exact */
    uint64_t volume; /* blocks, exact */
    uint64_t ops;    /* blocks combined by the busiest process, exact */
    /* the largest message of round k, in blocks, for the algorithms 4 gives it for; -1 when
     * only an upper bound `per_round_max` applies, -2 when 4 says nothing per round */
    int per_round;
} want_t;

/* the largest message of round k as algorithms.md 4 describes it (per_round == 1) */
static uint64_t round_blocks(ucoll_coll_t coll, const char *name, int p, unsigned k)
{
    const unsigned f = flog2((uint64_t)p);
    if (strcmp(name, "recursive-doubling") == 0)
        return UINT64_C(1) << k;
    if (strcmp(name, "recursive-halving") == 0)
        return (uint64_t)p >> (k + 1);
    if (strcmp(name, "bruck") == 0 && coll == UCOLL_COLL_ALLTOALL)
        return count_bit(p, k);
    if (strcmp(name, "bruck") == 0) /* allgather(v): 2^k blocks, then the p - 2^f left */
        return k < f ? UINT64_C(1) << k : (uint64_t)p - (UINT64_C(1) << f);
    return 1; /* ring, pairwise, linear */
}

/* algorithms.md 4 for a block algorithm on p processes; -1 when it gives nothing for it */
static int want_figures(ucoll_coll_t coll, const char *name, int p, int comm, want_t *w)
{
    const unsigned q = clog2((uint64_t)p);
    const uint64_t pm1 = (uint64_t)p - 1;
    const int pow2 = (p & (p - 1)) == 0;
    const int reduces =
        coll == UCOLL_COLL_REDUCE_SCATTER_BLOCK || coll == UCOLL_COLL_REDUCE_SCATTER;
    memset(w, 0, sizeof(*w));
    w->serves = 1;
    w->per_round = 1;
    w->ops = reduces ? pm1 : 0;
    w->volume = pm1;
    switch (coll) {
    case UCOLL_COLL_ALLGATHER:
    case UCOLL_COLL_ALLGATHERV:
        if (strcmp(name, "ring") == 0)
            w->rounds = (unsigned)pm1;
        else if (strcmp(name, "bruck") == 0)
            w->rounds = q;
        else if (strcmp(name, "recursive-doubling") == 0 && coll == UCOLL_COLL_ALLGATHER)
            w->serves = pow2, w->rounds = q;
        else
            return -1;
        return 0;
    case UCOLL_COLL_REDUCE_SCATTER_BLOCK:
    case UCOLL_COLL_REDUCE_SCATTER:
        if (strcmp(name, "ring") == 0) {
            w->rounds = (unsigned)pm1;
            if (!comm && p >= 2) {
                /* the order-preserving form (4.2 gives no figures for it): the chain of block
                 * j runs j+1, ..., p-1, 0, ..., j, and from the wrap on it carries the part
                 * above j and the part from 0 apart, two blocks (every round after the first
                 * has such a message); ranks 1..p-2 add their block to p-1 partials and join
                 * their own result's two parts */
                w->volume = 2 * pm1 - 1;
                w->ops = p >= 3 ? (uint64_t)p : pm1;
                w->per_round = -2;
            }
        } else if (strcmp(name, "recursive-halving") == 0) {
            w->serves = pow2, w->rounds = q;
        } else if (strcmp(name, "bruck") == 0) {
            w->rounds = q;
            w->per_round = -2; /* 4.2: only the totals */
        } else {
            return -1;
        }
        return 0;
    case UCOLL_COLL_ALLTOALL:
    case UCOLL_COLL_ALLTOALLV:
        if (strcmp(name, "pairwise") == 0) {
            w->rounds = (unsigned)pm1;
        } else if (strcmp(name, "bruck") == 0 && coll == UCOLL_COLL_ALLTOALL) {
            w->rounds = q;
            w->volume = 0;
            for (unsigned k = 0; k < q; k++)
                w->volume += count_bit(p, k);
        } else {
            return -1;
        }
        return 0;
    case UCOLL_COLL_GATHER:
    case UCOLL_COLL_SCATTER:
    case UCOLL_COLL_GATHERV:
    case UCOLL_COLL_SCATTERV:
        if (strcmp(name, "linear") == 0) {
            w->rounds = (unsigned)pm1;
        } else if (strcmp(name, "binomial") == 0 &&
                   (coll == UCOLL_COLL_GATHER || coll == UCOLL_COLL_SCATTER)) {
            w->rounds = q;
            /* gather: round k carries up to 2^k blocks; scatter the same tree backwards */
            w->per_round = coll == UCOLL_COLL_GATHER ? -1 : -2;
        } else {
            return -1;
        }
        return 0;
    default:
        return -1;
    }
}

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

/* the largest message of each round, in elements, from every rank's schedule; peers of the
 * ring (r+1 / r-1) and of the pairwise exchange (round k: r+k+1 / r-k-1) checked on the way */
static void check_rounds(const alg_desc_t *alg, int p, size_t c, int root, int comm,
                         const want_t *w)
{
    uint64_t mx[512] = {0};
    REQUIRE(w->rounds <= 512, "too many rounds to check");
    const int ring = strcmp(alg->name, "ring") == 0, pairwise = strcmp(alg->name, "pairwise") == 0;
    sched_t s;
    sched_init(&s);
    for (int r = 0; r < p; r++) {
        sched_clear(&s);
        REQUIRE(symbolic_build(alg, 0, p, r, c, 1, root, comm, &s) == 0, "build failed");
        for (size_t i = 0; i < s.nsteps; i++) {
            const sched_step_t *st = &s.steps[i];
            if (st->kind != SCHED_XCHG)
                continue;
            const uint64_t n = st->send_peer >= 0 ? st->send.count : 0;
            const uint64_t m = st->recv_peer >= 0 ? st->recv.count : 0;
            if ((n > m ? n : m) > mx[st->round])
                mx[st->round] = n > m ? n : m;
            const int d = pairwise ? (int)st->round + 1 : 1;
            if ((ring && alg->coll != UCOLL_COLL_REDUCE_SCATTER_BLOCK &&
                 alg->coll != UCOLL_COLL_REDUCE_SCATTER) ||
                pairwise)
                REQUIRE(st->send_peer == (r + d) % p && st->recv_peer == (r - d + p) % p,
                        "%s %s p=%d rank %d round %u: sends to %d, receives from %d; expected "
                        "%d and %d",
                        alg_coll_name(alg->coll), alg->name, p, r, (unsigned)st->round,
                        (int)st->send_peer, (int)st->recv_peer, (r + d) % p, (r - d + p) % p);
        }
    }
    sched_destroy(&s);
    for (unsigned k = 0; k < w->rounds; k++) {
        const uint64_t want = round_blocks(alg->coll, alg->name, p, k) * c;
        if (w->per_round == 1)
            REQUIRE(mx[k] == want,
                    "%s %s p=%d round %u: largest message %llu elements, expected %llu",
                    alg_coll_name(alg->coll), alg->name, p, k, (unsigned long long)mx[k],
                    (unsigned long long)want);
        else if (w->per_round == -1)
            REQUIRE(mx[k] <= (UINT64_C(1) << k) * c,
                    "%s %s p=%d round %u: %llu elements, more than 2^k blocks",
                    alg_coll_name(alg->coll), alg->name, p, k, (unsigned long long)mx[k]);
    }
}

/* one run with equal blocks of c elements of elem bytes: the verdict and every figure of 4,
 * and the closed forms of cost.c against it */
static void sweep_one(const alg_desc_t *alg, int p, size_t c, size_t elem, int root, int comm)
{
    const char *cn = alg_coll_name(alg->coll);
    want_t w;
    REQUIRE(want_figures(alg->coll, alg->name, p, comm, &w) == 0,
            "%s %s: algorithms.md 4 has no figures for it (add them to want_figures)", cn,
            alg->name);
    block_figures_t closed;
    const int crc = cost_block_figures(alg, p, &closed);
    symbolic_result_t res;
    const int rc = symbolic_run_ws(ws, alg, 0, alg->coll, p, c, elem, root, comm, &res);
    if (!w.serves) {
        REQUIRE(rc == -1 && strstr(res.error, "refused") != NULL,
                "%s %s p=%d: the builder must refuse p (%s)", cn, alg->name, p, res.error);
        REQUIRE(crc == 1, "%s %s p=%d: cost_block_figures must say it does not serve p", cn,
                alg->name, p);
        symbolic_result_free(&res);
        return;
    }
    REQUIRE(rc == 0 && res.ok, "%s %s p=%d c=%zu root=%d commutative=%d: %s", cn, alg->name, p, c,
            root, comm, res.error);
    const uint64_t block = (uint64_t)c * elem;
    uint64_t op_elems = 0;
    for (int r = 0; r < p; r++)
        op_elems = res.rank_op_elems[r] > op_elems ? res.rank_op_elems[r] : op_elems;
    REQUIRE(res.rounds == w.rounds, "%s %s p=%d root=%d commutative=%d: %u rounds, expected %u", cn,
            alg->name, p, root, comm, res.rounds, w.rounds);
    REQUIRE(res.volume_bytes == w.volume * block,
            "%s %s p=%d root=%d commutative=%d: volume %llu bytes = %.2f blocks, expected %llu", cn,
            alg->name, p, root, comm, (unsigned long long)res.volume_bytes,
            (double)res.volume_bytes / (double)block, (unsigned long long)w.volume);
    REQUIRE(op_elems == w.ops * c,
            "%s %s p=%d commutative=%d: %llu elements combined, expected %llu blocks", cn,
            alg->name, p, comm, (unsigned long long)op_elems, (unsigned long long)w.ops);
    /* the closed forms (for the commutative or order-free form: auto's figures) */
    if (comm) {
        REQUIRE(crc == 0, "%s %s p=%d: no closed form in cost.c", cn, alg->name, p);
        REQUIRE(closed.rounds == res.rounds && closed.volume == w.volume && closed.ops == w.ops,
                "%s %s p=%d: closed form %u rounds, %llu blocks, %llu (+); schedules %u, %llu, "
                "%llu",
                cn, alg->name, p, closed.rounds, (unsigned long long)closed.volume,
                (unsigned long long)closed.ops, res.rounds, (unsigned long long)w.volume,
                (unsigned long long)w.ops);
    }
    REQUIRE(cost_rounds_bound(alg, 0, p) == res.rounds,
            "%s %s p=%d: cost_rounds_bound %u, %u rounds", cn, alg->name, p,
            cost_rounds_bound(alg, 0, p), res.rounds);
    symbolic_result_free(&res);
    if (c == 2)
        check_rounds(alg, p, c, root, comm, &w);
}

static void sweep(int pmax, const size_t *cs, size_t ncs)
{
    long runs = 0;
    for (size_t ci = 0; ci < NBLOCK_COLLS; ci++) {
        size_t n;
        const alg_desc_t *algs = alg_list(block_colls[ci], &n);
        for (size_t i = 0; i < n; i++)
            for (int p = 1; p <= pmax; p++) {
                const int rooted = block_colls[ci] >= UCOLL_COLL_GATHER;
                const int roots[3] = {0, p / 2, p - 1};
                for (int ri = 0; ri < (rooted ? 3 : 1); ri++)
                    for (int comm = 1; comm >= 0; comm--) {
                        if (!comm && !(algs[i].flags & ALG_ORDER_PRESERVING))
                            continue;
                        for (size_t k = 0; k < ncs; k++, runs++)
                            sweep_one(&algs[i], p, cs[k], 1 + (size_t)(p % 4), roots[ri], comm);
                    }
            }
    }
    fprintf(stderr, "check_blocks: %ld symbolic runs up to p = %d, all as algorithms.md 4 says\n",
            runs, pmax);
}

/* every block collective has an algorithm, each with its figures and a closed form */
START_TEST(test_every_block_collective_has_one)
{
    for (size_t ci = 0; ci < NBLOCK_COLLS; ci++) {
        size_t n;
        const alg_desc_t *algs = alg_list(block_colls[ci], &n);
        REQUIRE(n > 0, "%s has no algorithm", alg_coll_name(block_colls[ci]));
        for (size_t i = 0; i < n; i++) {
            want_t w;
            block_figures_t f;
            REQUIRE(want_figures(block_colls[ci], algs[i].name, 8, 1, &w) == 0 &&
                        cost_block_figures(&algs[i], 8, &f) == 0,
                    "%s %s: no figures", alg_coll_name(block_colls[ci]), algs[i].name);
        }
    }
}
END_TEST

START_TEST(test_sweep_small)
{
    const size_t cs[] = {0, 1, 2, 3};
    sweep(33, cs, 4);
}
END_TEST

START_TEST(test_sweep_256)
{
    const size_t cs[] = {2};
    sweep(256, cs, 1);
}
END_TEST

/* the builders on irregular per-rank counts (zeros, gaps, blocks out of order) for p <= 17,
 * every root of the rooted ones for p <= 5 */
START_TEST(test_builders_irregular)
{
    call_t k;
    long runs = 0;
    for (size_t ci = 0; ci < NBLOCK_COLLS; ci++) {
        const ucoll_coll_t coll = block_colls[ci];
        size_t n;
        const alg_desc_t *algs = alg_list(coll, &n);
        for (size_t i = 0; i < n; i++)
            for (int p = 1; p <= MAXP; p++)
                for (int root = 0; root < p; root += p <= 5 ? 1 : p - 1)
                    for (int comm = 1; comm >= 0; comm--) {
                        if (!comm && !(algs[i].flags & ALG_ORDER_PRESERVING))
                            continue;
                        want_t w;
                        REQUIRE(want_figures(coll, algs[i].name, p, comm, &w) == 0, "no figures");
                        if (!w.serves)
                            continue;
                        call_irregular(&k, coll, p, root, comm);
                        for (int r = 0; r < p; r++)
                            k.a[r].elem_size = 4;
                        symbolic_result_t res;
                        const int rc = symbolic_run_args_ws(ws, &algs[i], coll, p, k.a, &res);
                        REQUIRE(rc == 0 && res.ok,
                                "%s %s p=%d root=%d commutative=%d, irregular: %s",
                                alg_coll_name(coll), algs[i].name, p, root, comm, res.error);
                        REQUIRE(res.rounds == w.rounds,
                                "%s %s p=%d irregular: %u rounds, expected %u", alg_coll_name(coll),
                                algs[i].name, p, res.rounds, w.rounds);
                        symbolic_result_free(&res);
                        runs++;
                    }
    }
    fprintf(stderr, "check_blocks: %ld runs on irregular counts\n", runs);
}
END_TEST

/*
 * Allreduce `rs-ag` and `ring`, bcast `scatter-allgather` (algorithms.md 4.3, 4.6): the vector
 * of m elements in p pieces. Rounds 2 ceil(log2 p) (rs-ag, scatter-allgather) or 2(p - 1)
 * (ring) for every m; with p | m (pieces of m/p elements) the volume is exactly
 * 2 (p - 1)/p m, and the reducing ones combine (p - 1) pieces on the busiest process. The
 * order-preserving ring's non-commutative form: rounds and results.
 */
static void sweep_pieces(int pmax)
{
    const struct {
        ucoll_coll_t coll;
        const char *name;
    } algs[] = {{UCOLL_COLL_ALLREDUCE, "rs-ag"},
                {UCOLL_COLL_ALLREDUCE, "ring"},
                {UCOLL_COLL_BCAST, "scatter-allgather"}};
    for (size_t a = 0; a < sizeof(algs) / sizeof(algs[0]); a++) {
        int param = 0;
        const alg_desc_t *alg = alg_lookup(algs[a].coll, algs[a].name, &param);
        REQUIRE(alg != NULL, "%s %s is not registered", alg_coll_name(algs[a].coll), algs[a].name);
        const int ring = strcmp(algs[a].name, "ring") == 0;
        const int reduces = algs[a].coll == UCOLL_COLL_ALLREDUCE;
        for (int p = 1; p <= pmax; p++) {
            const unsigned q = clog2((uint64_t)p);
            const unsigned rounds = ring ? 2 * (unsigned)(p - 1) : 2 * q;
            const size_t ms[] = {3 * (size_t)p, 3 * (size_t)p + 1, 1};
            const int roots[] = {0, p / 2, p - 1};
            for (size_t mi = 0; mi < 3; mi++)
                for (int ri = 0; ri < (reduces ? 1 : 3); ri++)
                    for (int comm = 1; comm >= 0; comm--) {
                        if (!comm && !(alg->flags & ALG_ORDER_PRESERVING))
                            continue;
                        symbolic_result_t res;
                        const size_t m = ms[mi], elem = 1 + (size_t)(p % 3);
                        const int rc = symbolic_run_ws(ws, alg, 0, alg->coll, p, m, elem, roots[ri],
                                                       comm, &res);
                        REQUIRE(rc == 0 && res.ok, "%s %s p=%d m=%zu root=%d commutative=%d: %s",
                                alg_coll_name(alg->coll), alg->name, p, m, roots[ri], comm,
                                res.error);
                        REQUIRE(res.rounds == rounds, "%s %s p=%d m=%zu: %u rounds, expected %u",
                                alg_coll_name(alg->coll), alg->name, p, m, res.rounds, rounds);
                        REQUIRE(cost_rounds_bound(alg, 0, p) >= res.rounds,
                                "%s %s p=%d: rounds bound below the rounds",
                                alg_coll_name(alg->coll), alg->name, p);
                        if (mi == 0 && comm) {
                            const uint64_t vol = 2 * (uint64_t)(p - 1) * (m / (size_t)p) * elem;
                            REQUIRE(res.volume_bytes == vol,
                                    "%s %s p=%d m=%zu: volume %llu bytes, expected 2(p-1)/p m = "
                                    "%llu",
                                    alg_coll_name(alg->coll), alg->name, p, m,
                                    (unsigned long long)res.volume_bytes, (unsigned long long)vol);
                            uint64_t op_elems = 0;
                            for (int r = 0; r < p; r++)
                                if (res.rank_op_elems[r] > op_elems)
                                    op_elems = res.rank_op_elems[r];
                            const uint64_t ops = reduces ? (uint64_t)(p - 1) * (m / (size_t)p) : 0;
                            REQUIRE(op_elems == ops,
                                    "%s %s p=%d m=%zu: %llu elements combined, expected %llu",
                                    alg_coll_name(alg->coll), alg->name, p, m,
                                    (unsigned long long)op_elems, (unsigned long long)ops);
                        }
                        symbolic_result_free(&res);
                    }
        }
    }
}

START_TEST(test_pieces_small)
{
    sweep_pieces(33);
}
END_TEST

START_TEST(test_pieces_256)
{
    sweep_pieces(256);
}
END_TEST

/* auto: the registered algorithms that serve p and the op, by rounds * alpha + volume * B *
 * beta + (+) * B * gamma with the figures of 4, ties to the registry's order */
START_TEST(test_auto_choices)
{
    const cost_params_t cost = COST_PARAMS(1.0, 0.1, 0.1);
    const struct {
        ucoll_coll_t coll;
        int p;
        size_t block;
        int comm;
        const char *want;
    } cases[] = {
        /* ring 4 rounds, bruck 3, the same 4 blocks; recursive-doubling does not serve 5 */
        {UCOLL_COLL_ALLGATHER, 5, 8, 1, "bruck"},
        {UCOLL_COLL_ALLGATHER, 5, 1 << 20, 1, "bruck"},
        /* 3 rounds and 7 blocks each: recursive-doubling comes first in the registry */
        {UCOLL_COLL_ALLGATHER, 8, 1 << 20, 1, "recursive-doubling"},
        {UCOLL_COLL_ALLGATHERV, 5, 8, 1, "bruck"},
        /* bruck: 3 rounds, 5 blocks; pairwise: 4 rounds, 4 blocks (1 MiB: 0.1 ms a block) */
        {UCOLL_COLL_ALLTOALL, 5, 8, 1, "bruck"},
        {UCOLL_COLL_ALLTOALL, 5, 1 << 20, 1, "pairwise"},
        {UCOLL_COLL_ALLTOALLV, 5, 8, 1, "pairwise"},
        /* non-commutative: no bruck; p = 8: halving's 3 rounds beat the ring's 7 */
        {UCOLL_COLL_REDUCE_SCATTER_BLOCK, 8, 8, 0, "recursive-halving"},
        {UCOLL_COLL_REDUCE_SCATTER_BLOCK, 6, 8, 0, "ring"},
        {UCOLL_COLL_REDUCE_SCATTER_BLOCK, 6, 8, 1, "bruck"},
        {UCOLL_COLL_REDUCE_SCATTER, 6, 1 << 20, 0, "ring"},
        {UCOLL_COLL_REDUCE_SCATTER, 6, 1 << 20, 1, "bruck"},
        {UCOLL_COLL_GATHER, 5, 8, 1, "binomial"},
        {UCOLL_COLL_SCATTER, 5, 1 << 20, 1, "binomial"},
        {UCOLL_COLL_GATHERV, 5, 8, 1, "linear"},
        {UCOLL_COLL_SCATTERV, 5, 8, 1, "linear"},
        /* one process: every algorithm is 0 rounds; the first registered */
        {UCOLL_COLL_ALLGATHER, 1, 8, 1, "ring"},
        {UCOLL_COLL_ALLTOALL, 1, 8, 1, "pairwise"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *got =
            cost_select(cases[i].coll, cases[i].p, cases[i].block, cases[i].comm, &cost, 0, 0);
        REQUIRE(got != NULL && strcmp(got, cases[i].want) == 0,
                "%s p=%d block %zu: auto %s, expected %s", alg_coll_name(cases[i].coll), cases[i].p,
                cases[i].block, got ? got : "(none)", cases[i].want);
    }
}
END_TEST

static Suite *blocks_suite(void)
{
    Suite *su = suite_create("blocks");
    TCase *tc = tcase_create("verdicts");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_reference_schedules_pass);
    tcase_add_test(tc, test_equal_blocks_entry);
    tcase_add_test(tc, test_catches_wrong_blocks);
    tcase_add_test(tc, test_catches_wrong_reductions);
    tcase_add_test(tc, test_catches_absent_buffers);
    tcase_add_test(tc, test_rejects_bad_arguments);
    suite_add_tcase(su, tc);

    TCase *fig = tcase_create("figures");
    tcase_add_checked_fixture(fig, ws_setup, ws_teardown);
    tcase_set_timeout(fig, 600);
    tcase_add_test(fig, test_every_block_collective_has_one);
    tcase_add_test(fig, test_auto_choices);
    tcase_add_test(fig, test_pieces_small);
    tcase_add_test(fig, test_sweep_small);
    tcase_add_test(fig, test_builders_irregular);
    suite_add_tcase(su, fig);

    /* every p up to 256: most of the run time; CK_EXCLUDE_TAGS=long (the sanitizer build)
     * leaves it out */
    TCase *sw = tcase_create("figures_p256");
    tcase_add_checked_fixture(sw, ws_setup, ws_teardown);
    tcase_set_tags(sw, "long");
    tcase_set_timeout(sw, 1200);
    tcase_add_test(sw, test_sweep_256);
    tcase_add_test(sw, test_pieces_256);
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
