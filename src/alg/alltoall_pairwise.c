/*
 * Alltoall and alltoallv, pairwise exchange (algorithms.md 4.4). Rank r keeps its own block
 * (a local copy IN -> OUT) and in round k - 1, k = 1 .. p-1, sends its block for rank r + k
 * straight from IN and receives the block of rank r - k straight into OUT (ranks mod p). Every
 * pair of ranks meets in exactly one round, sender and receiver agreeing on it: r sends to
 * r + k in the round where r + k receives from (r + k) - k.
 * Invariant after round k - 1: OUT holds the blocks of ranks r, r - 1, ..., r - k.
 * alltoallv: the same with the blocks at send_displs / recv_displs, send_counts / recv_counts
 * elements; a zero-element block is still a (zero-byte) message, so that both ends agree on
 * the rounds without looking at each other's counts.
 * Cost: p - 1 rounds, no (+), volume p - 1 blocks (one block per round), no scratch.
 */
#include "alg.h"

int alltoall_pairwise_build(sched_t *s, const sched_args_t *a)
{
    const int p = a->size, r = a->rank;
    const size_t c = a->count;

    sched_copy(s, sched_region(SCHED_BUF_IN, (size_t)r * c, c),
               sched_region(SCHED_BUF_OUT, (size_t)r * c, c));
    for (int k = 1; k < p; k++) {
        const int to = (r + k) % p, from = (r - k + p) % p;
        sched_xchg(s, (uint32_t)(k - 1), to, sched_region(SCHED_BUF_IN, (size_t)to * c, c), from,
                   sched_region(SCHED_BUF_OUT, (size_t)from * c, c));
    }
    return s->failed ? -1 : 0;
}

int alltoallv_pairwise_build(sched_t *s, const sched_args_t *a)
{
    const int p = a->size, r = a->rank;
    const size_t *sc = a->send_counts, *sd = a->send_displs;
    const size_t *rc = a->recv_counts, *rd = a->recv_displs;

    if (sc == NULL || sd == NULL || rc == NULL || rd == NULL)
        return -1;
    sched_copy(s, sched_region(SCHED_BUF_IN, sd[r], sc[r]),
               sched_region(SCHED_BUF_OUT, rd[r], rc[r]));
    for (int k = 1; k < p; k++) {
        const int to = (r + k) % p, from = (r - k + p) % p;
        sched_xchg(s, (uint32_t)(k - 1), to, sched_region(SCHED_BUF_IN, sd[to], sc[to]), from,
                   sched_region(SCHED_BUF_OUT, rd[from], rc[from]));
    }
    return s->failed ? -1 : 0;
}
