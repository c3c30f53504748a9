/*
 * Allgather and allgatherv, `bruck` (algorithms.md 4.1): the Bruck rounds of block_phases.c on
 * a rotated copy in TMP (relative block j is block (r + j) mod p), then one unrotation into
 * OUT. Rounds ceil(log2 p) for every p, volume p - 1 blocks, no (+).
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
    sched_copy(s, SCHED_WHOLE(SCHED_BUF_IN, a), sched_region(SCHED_BUF_TMP, 0, a->count));
    bruck_allgather(s, &b, r, SCHED_BUF_TMP, 0);
    blocks_unrotate(s, &b, r, SCHED_BUF_TMP, 0);
    blocks_free(&b);
    return s->failed ? -1 : 0;
}

int allgather_bruck_build(sched_t *s, const sched_args_t *a)
{
    return build(s, a, NULL, NULL);
}

/* recv_counts NULL: every block `count` elements; recv_displs NULL: packed */
int allgatherv_bruck_build(sched_t *s, const sched_args_t *a)
{
    return build(s, a, a->recv_counts, a->recv_displs);
}
