/*
 * Reduce-scatter (block and v), `bruck` (algorithms.md 4.2): the Bruck allgather run backwards
 * (block_phases.c). IN is copied into ACC rotated so that relative block j is block
 * (r + j) mod p. Commutative (+) only: the ranks combined into one partial are not an interval.
 * Rounds ceil(log2 p) for every p, volume p - 1 blocks, (+) on p - 1 blocks per process.
 */
#include "block_phases.h"

static int build(sched_t *s, const sched_args_t *a, const size_t *counts)
{
    blocks_t b;
    if (blocks_init(&b, a->size, a->count, counts, NULL) != 0)
        return -1;
    const int r = a->rank;
    blocks_rotate_in(s, &b, r, SCHED_BUF_ACC);
    bruck_reduce_scatter(s, &b, r, 0);
    sched_copy(s, sched_region(SCHED_BUF_ACC, 0, b.cnt[r]),
               sched_region(SCHED_BUF_OUT, 0, b.cnt[r]));
    blocks_free(&b);
    return s->failed ? -1 : 0;
}

int reduce_scatter_block_bruck_build(sched_t *s, const sched_args_t *a)
{
    return build(s, a, NULL);
}

/* recv_counts NULL: every block `count` elements */
int reduce_scatter_bruck_build(sched_t *s, const sched_args_t *a)
{
    return build(s, a, a->recv_counts);
}
