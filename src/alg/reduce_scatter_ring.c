/*
 * Reduce-scatter (block and v), `ring` (algorithms.md 4.2), and the ring phase it shares with
 * allreduce `ring`. IN holds p blocks back to back; block b's result goes to rank b.
 *
 * Commutative (+): in round k = 0 .. p-2 rank r sends its partial of block (r - k - 1) mod p to
 * r + 1 and receives the partial of block (r - k - 2) mod p from r - 1, adding its own input
 * block. Invariant after round k: the partial r holds covers the k + 2 ranks r - k - 1 .. r
 * (cyclically). Rounds p - 1, volume p - 1 blocks, (+) on p - 1 blocks per process.
 *
 * Non-commutative (+): the chain of block b runs b+1, ..., p-1, 0, ..., b, so once it passes
 * from p-1 to 0 the ranks it covers are no longer one interval. From there the message carries
 * two parts: L, the ranks 0 .. r (extended at each step on the right: L (+) own input), and U,
 * the ranks b+1 .. p-1 (complete, passed on). Rank b ends with (L (+) own) (+) U, in rank order.
 * A chain has wrapped at the sender r in round k exactly when r < k. Rounds p - 1, volume
 * 2p - 3 blocks (p >= 2: every round after the first has a two-part message), (+) on at most
 * p blocks per process (the middle ranks' last round combines three parts).
 */
#include "block_phases.h"

/* ACC holds two slots of two parts each: round k builds in slot k % 2 while slot (k - 1) % 2
 * is being sent */
static sched_region_t slot(const blocks_t *b, int k, size_t part, size_t count)
{
    return sched_region(SCHED_BUF_ACC, (size_t)(k % 2) * 2 * b->max + part * count, count);
}

static sched_region_t in_block(const blocks_t *b, int j)
{
    return sched_region(SCHED_BUF_IN, b->pre[j], b->cnt[j]);
}

static void commutative_ring(sched_t *s, const blocks_t *b, int r, uint32_t round0,
                             sched_region_t result)
{
    const int p = b->p, next = blocks_real(b, (r + 1) % p), prev = blocks_real(b, (r - 1 + p) % p);
    for (int k = 0; k + 1 < p; k++) {
        const int sb = (r - k - 1 + p) % p, rb = (r - k - 2 + 2 * p) % p;
        const sched_region_t send = k == 0 ? in_block(b, sb) : slot(b, k - 1, 0, b->cnt[sb]);
        const sched_region_t recv = k + 2 == p ? result : slot(b, k, 0, b->cnt[rb]);
        sched_xchg(s, round0 + (uint32_t)k, next, send, prev, recv);
        sched_reduce(s, in_block(b, rb), recv);
    }
}

static void ordered_ring(sched_t *s, const blocks_t *b, int r, uint32_t round0,
                         sched_region_t result)
{
    const int p = b->p, next = blocks_real(b, (r + 1) % p), prev = blocks_real(b, (r - 1 + p) % p);
    for (int k = 0; k + 1 < p; k++) {
        const int sb = (r - k - 1 + p) % p, rb = (r - k - 2 + 2 * p) % p;
        const int last = k + 2 == p;
        const size_t sc = b->cnt[sb], rc = b->cnt[rb];
        const sched_region_t send =
            k == 0 ? in_block(b, sb) : slot(b, k - 1, 0, r < k ? 2 * sc : sc);
        const uint32_t round = round0 + (uint32_t)k;
        if (r - k - 1 >= 0) { /* one part, ranks r-k-1 .. r-1: append own input on the right */
            const sched_region_t acc = last ? result : slot(b, k, 0, rc);
            const sched_region_t t = sched_region(SCHED_BUF_TMP, 0, rc);
            sched_copy(s, in_block(b, rb), acc);
            sched_xchg(s, round, next, send, prev, t);
            sched_reduce(s, t, acc);
        } else if (r == 0) { /* U arrives; own input starts L */
            if (last) {
                sched_xchg(s, round, next, send, prev, result);
                sched_reduce(s, in_block(b, rb), result);
            } else {
                sched_copy(s, in_block(b, rb), slot(b, k, 0, rc));
                sched_xchg(s, round, next, send, prev, slot(b, k, 1, rc));
            }
        } else { /* L | U arrive */
            const sched_region_t acc = last ? result : slot(b, k, 0, rc);
            const sched_region_t t = sched_region(SCHED_BUF_TMP, 0, 2 * rc);
            const sched_region_t tl = sched_region(SCHED_BUF_TMP, 0, rc);
            const sched_region_t tu = sched_region(SCHED_BUF_TMP, rc, rc);
            sched_copy(s, in_block(b, rb), acc);
            sched_xchg(s, round, next, send, prev, t);
            sched_reduce(s, tl, acc);
            if (last) {
                sched_reduce(s, acc, tu);
                sched_copy(s, tu, result);
            } else {
                sched_copy(s, tu, slot(b, k, 1, rc));
            }
        }
    }
}

void ring_reduce_scatter(sched_t *s, const blocks_t *b, int v, int commutative, uint32_t round0,
                         sched_region_t result)
{
    if (b->p == 1)
        sched_copy(s, in_block(b, 0), result);
    else if (commutative)
        commutative_ring(s, b, v, round0, result);
    else
        ordered_ring(s, b, v, round0, result);
}

static int build(sched_t *s, const sched_args_t *a, const size_t *counts)
{
    blocks_t b;
    if (blocks_init(&b, a->size, a->count, counts, NULL) != 0)
        return -1;
    ring_reduce_scatter(s, &b, a->rank, a->commutative, 0,
                        sched_region(SCHED_BUF_OUT, 0, b.cnt[a->rank]));
    blocks_free(&b);
    return s->failed ? -1 : 0;
}

int reduce_scatter_block_ring_build(sched_t *s, const sched_args_t *a)
{
    return build(s, a, NULL);
}

/* recv_counts NULL: every block `count` elements */
int reduce_scatter_ring_build(sched_t *s, const sched_args_t *a)
{
    return build(s, a, a->recv_counts);
}
