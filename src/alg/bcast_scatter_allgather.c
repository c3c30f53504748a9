/*
 * Bcast for large vectors, `scatter-allgather` (algorithms.md 4.6). Virtual rank
 * v = (r - root) mod p; the vector in OUT is split into p blocks of ceil(m/p) or floor(m/p)
 * elements, block j for v = j.
 * Binomial scatter, masks 2^(q-1) .. 1: v with no bits below 2*mask sends blocks
 * [v + mask, min(v + 2 mask, p)) to v + mask; v whose lowest set bit is mask receives
 * [v, min(v + mask, p)) from v - mask. Invariant after the round of mask: v holds the blocks
 * of the virtual ranks [v, min(v + mask, p)) it is responsible for, v a multiple of mask.
 * Then the Bruck allgather (block_phases.c) on a rotated copy in TMP, and the received blocks
 * are copied into OUT. Rounds 2 ceil(log2 p), volume (p-1) + (p-1) blocks =
 * (p-1)/p L + (p-1)/p L when p divides m, for every p (the scatter moves at most the p - 1
 * blocks below the root on the root's path), no (+).
 */
#include "block_phases.h"

static sched_region_t span(const blocks_t *b, int j0, int j1)
{
    return sched_region(SCHED_BUF_OUT, b->pre[j0], b->pre[j1] - b->pre[j0]);
}

int bcast_scatter_allgather_build(sched_t *s, const sched_args_t *a)
{
    const int p = a->size;
    const int v = (a->rank - a->root + p) % p;
    const unsigned q = sched_ceil_log2((uint64_t)p);
    blocks_t b;
    if (blocks_split(&b, p, a->count) != 0)
        return -1;
    b.shift = a->root;
    uint32_t round = 0;
    for (int64_t mask = q > 0 ? (int64_t)1 << (q - 1) : 0; mask >= 1; mask /= 2, round++) {
        if (v % (2 * mask) == 0 && v + mask < p) {
            const int to = (int)(v + mask), end = (int)(v + 2 * mask < p ? v + 2 * mask : p);
            sched_send(s, round, blocks_real(&b, to), span(&b, to, end));
        } else if (v % (2 * mask) == mask) {
            const int end = (int)(v + mask < p ? v + mask : p);
            sched_recv(s, round, blocks_real(&b, (int)(v - mask)), span(&b, v, end));
        }
    }
    sched_copy(s, span(&b, v, v + 1), sched_region(SCHED_BUF_TMP, 0, b.cnt[v]));
    bruck_allgather(s, &b, v, SCHED_BUF_TMP, q);
    blocks_unrotate(s, &b, v, SCHED_BUF_TMP, 1);
    blocks_free(&b);
    return s->failed ? -1 : 0;
}
