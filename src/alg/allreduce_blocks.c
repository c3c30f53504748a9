/*
 * Allreduce for large vectors on p blocks, without folding (algorithms.md 4.3). The vector of
 * m elements is split into p blocks of ceil(m/p) or floor(m/p) elements (the larger first).
 *
 * `rs-ag`: Bruck reduce-scatter, then Bruck allgather (block_phases.c), both on the rotated
 * layout in ACC, which the reduce-scatter leaves with rank r's block at relative 0: exactly the
 * allgather's start. Commutative (+) only. Rounds 2 ceil(log2 p), volume 2 (p-1) blocks =
 * 2 (p-1)/p L when p divides m, (+) on p - 1 blocks per process.
 *
 * `ring`: ring reduce-scatter (reduce_scatter_ring.c; its order-preserving form for a
 * non-commutative (+)), the result in its place in OUT, then ring allgather in place. Rounds
 * 2 (p-1), volume 2 (p-1) blocks (non-commutative: 3p - 4 for p >= 2).
 */
#include "block_phases.h"

int allreduce_rs_ag_build(sched_t *s, const sched_args_t *a)
{
    const int p = a->size, r = a->rank;
    blocks_t b;
    if (blocks_split(&b, p, a->count) != 0)
        return -1;
    blocks_rotate_in(s, &b, r, SCHED_BUF_ACC);
    bruck_reduce_scatter(s, &b, r, 0);
    bruck_allgather(s, &b, r, SCHED_BUF_ACC, sched_ceil_log2((uint64_t)p));
    blocks_unrotate(s, &b, r, SCHED_BUF_ACC, 0);
    blocks_free(&b);
    return s->failed ? -1 : 0;
}

int allreduce_ring_build(sched_t *s, const sched_args_t *a)
{
    const int p = a->size, r = a->rank;
    blocks_t b;
    if (blocks_split(&b, p, a->count) != 0)
        return -1;
    ring_reduce_scatter(s, &b, r, a->commutative, 0,
                        sched_region(SCHED_BUF_OUT, b.off[r], b.cnt[r]));
    ring_allgather(s, &b, r, (uint32_t)(p - 1));
    blocks_free(&b);
    return s->failed ? -1 : 0;
}
