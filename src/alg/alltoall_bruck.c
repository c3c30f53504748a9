/*
 * Alltoall, Bruck's algorithm (algorithms.md 4.4). Rank r numbers the blocks it starts with by
 * relative index j = (dest - r) mod p: block j is IN block (r + j) mod p (the local rotation,
 * done here by indexing rather than by copying). In round k, k = 0 .. q-1 with q = ceil(log2 p),
 * every rank sends the blocks whose j has bit k set to r + 2^k and receives the blocks of the
 * same indices from r - 2^k, which take their places. A block leaving rank s at index j moves
 * by 2^k for every bit k of j, so it ends at rank s + j, still at index j: on rank r, index j
 * then holds the block rank r - j sent to r, which goes to OUT block (r - j) mod p.
 * Invariant after round k: index j of rank r holds the block of rank r - (j mod 2^(k+1)) for
 * rank r - (j mod 2^(k+1)) + j.
 * Messages are contiguous: the blocks of a round are packed into TMP2 and the received ones
 * land in ACC, then are unpacked to TMP (index j at j*c), or to OUT in the round of j's highest
 * bit, j's last move. Index 0 never moves: IN block r is copied to OUT block r.
 * Cost: q rounds, no (+); round k moves #{0 < j < p : bit k of j is 1} blocks, volume the sum
 * of those (p = 5: 2 + 2 + 1 = 5); scratch TMP p*c, TMP2 and ACC ceil(p/2)*c elements.
 */
#include "alg.h"

/* a copy, merged into the previous step when both regions continue it (consecutive blocks) */
static void copy_run(sched_t *s, sched_region_t src, sched_region_t dst)
{
    if (s->nsteps > 0 && !s->failed) {
        sched_step_t *last = &s->steps[s->nsteps - 1];
        if (last->kind == SCHED_COPY && last->src.buf == src.buf &&
            last->src.off + last->src.count == src.off && last->dst.buf == dst.buf &&
            last->dst.off + last->dst.count == dst.off && src.count == dst.count) {
            last->src.count += src.count;
            last->dst.count += dst.count;
            if (dst.buf >= SCHED_FIRST_SCRATCH && dst.off + dst.count > s->scratch[dst.buf])
                s->scratch[dst.buf] = dst.off + dst.count;
            if (src.buf >= SCHED_FIRST_SCRATCH && src.off + src.count > s->scratch[src.buf])
                s->scratch[src.buf] = src.off + src.count;
            return;
        }
    }
    sched_copy(s, src, dst);
}

int alltoall_bruck_build(sched_t *s, const sched_args_t *a)
{
    const int p = a->size, r = a->rank;
    const size_t c = a->count;

    sched_copy(s, sched_region(SCHED_BUF_IN, (size_t)r * c, c),
               sched_region(SCHED_BUF_OUT, (size_t)r * c, c));
    for (uint32_t k = 0; ((int64_t)1 << k) < p; k++) {
        const int64_t bit = (int64_t)1 << k;
        size_t n = 0; /* blocks this round */
        for (int64_t j = bit; j < p; j++)
            if (j & bit) {
                /* before round k index j is where it started (IN) if it has no bit below k */
                const sched_region_t at =
                    (j & (bit - 1)) == 0 ? sched_region(SCHED_BUF_IN, (size_t)((r + j) % p) * c, c)
                                         : sched_region(SCHED_BUF_TMP, (size_t)j * c, c);
                copy_run(s, at, sched_region(SCHED_BUF_TMP2, n * c, c));
                n++;
            }
        sched_xchg(s, k, (int)((r + bit) % p), sched_region(SCHED_BUF_TMP2, 0, n * c),
                   (int)((r - bit % p + p) % p), sched_region(SCHED_BUF_ACC, 0, n * c));
        n = 0;
        for (int64_t j = bit; j < p; j++)
            if (j & bit) {
                const sched_region_t to =
                    (j >> (k + 1)) == 0
                        ? sched_region(SCHED_BUF_OUT, (size_t)((r - j + p) % p) * c, c)
                        : sched_region(SCHED_BUF_TMP, (size_t)j * c, c);
                copy_run(s, sched_region(SCHED_BUF_ACC, n * c, c), to);
                n++;
            }
    }
    return s->failed ? -1 : 0;
}
