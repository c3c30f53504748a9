/*
 * Allgather and allgatherv, `ring` (algorithms.md 4.1): the own block is copied from IN to its
 * place in OUT, then in round k = 0 .. p-2 rank r sends block (r - k) mod p to r + 1 and
 * receives block (r - k - 1) mod p from r - 1, in place. Invariant after round k: blocks
 * r - k - 1 .. r (cyclically) are in OUT. Rounds p - 1, volume p - 1 blocks, no (+).
 */
#include "block_phases.h"

static int build(sched_t *s, const sched_args_t *a, const size_t *counts, const size_t *displs)
{
    const int r = a->rank;
    blocks_t b;
    if (blocks_init(&b, a->size, a->count, counts, displs) != 0)
        return -1;
    if (b.cnt[r] != a->count) { /* IN is this rank's block */
        blocks_free(&b);
        return -1;
    }
    sched_copy(s, SCHED_WHOLE(SCHED_BUF_IN, a), sched_region(SCHED_BUF_OUT, b.off[r], b.cnt[r]));
    ring_allgather(s, &b, r, 0);
    blocks_free(&b);
    return s->failed ? -1 : 0;
}

int allgather_ring_build(sched_t *s, const sched_args_t *a)
{
    return build(s, a, NULL, NULL);
}

/* recv_counts NULL: every block `count` elements; recv_displs NULL: packed */
int allgatherv_ring_build(sched_t *s, const sched_args_t *a)
{
    return build(s, a, a->recv_counts, a->recv_displs);
}
