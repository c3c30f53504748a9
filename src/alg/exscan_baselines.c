/*
 * Exclusive scan baselines (algorithms.md 1.1), what other libraries do.
 *
 * linear: chain. Invariant: before round r-1, W_r is empty; rank r receives W_(r-1) (+) V_(r-1)
 *   = V_0..V_(r-1) from r - 1 in round r - 1 and sends W_r (+) V_r to r + 1 in round r.
 *   Cost: p - 1 rounds, 1 (+) per process, m bytes per round.
 *
 * recursive-doubling: butterfly with partner r XOR 2^k (as Open MPI / MPICH). P_r (the
 *   partial over r's aligned block of size 2^k) starts as V_r; in round k the partners swap P.
 *   A partner below r covers the aligned block just below r's, so W <- T (+) W and
 *   P <- T (+) P; a partner above gives P <- P (+) T. P is not updated when no later round
 *   sends it. Invariant after round k: P_r covers r's aligned 2^(k+1)-block (clipped to p),
 *   W_r covers [start of that block, r - 1].
 *   Cost: ceil(log2 p) rounds, m bytes per round; max (+) per process is exactly
 *   2 floor(log2 p) - 2 for p >= 4 (rank 2^floor(log2 p) - 1), and 1 for p = 3 (rank 0 computes
 *   P (+) T for round 1), within algorithms.md's 2 floor(log2 p) - 1.
 */
#include "alg.h"

int exscan_linear_build(sched_t *s, const sched_args_t *a)
{
    const int r = a->rank, p = a->size;
    const sched_region_t V = SCHED_WHOLE(SCHED_BUF_IN, a);
    const sched_region_t W = SCHED_WHOLE(SCHED_BUF_OUT, a);
    const sched_region_t WV = SCHED_WHOLE(SCHED_BUF_TMP2, a);

    if (r >= 1)
        sched_recv(s, (uint32_t)(r - 1), r - 1, W);
    if (r + 1 < p) {
        sched_region_t out = V;
        if (r >= 1) {
            sched_copy(s, V, WV);
            sched_reduce(s, W, WV);
            out = WV;
        }
        sched_send(s, (uint32_t)r, r + 1, out);
    }
    return s->failed ? -1 : 0;
}

/* is there a round after `mask` in which rank r has a partner (and so sends P)? */
static int sends_later(int r, int p, int64_t mask)
{
    for (int64_t m = mask << 1; m < p; m <<= 1)
        if ((r ^ m) < p)
            return 1;
    return 0;
}

int exscan_recursive_doubling_build(sched_t *s, const sched_args_t *a)
{
    const int r = a->rank, p = a->size;
    const sched_region_t W = SCHED_WHOLE(SCHED_BUF_OUT, a);
    /* P rotates among IN (initially) and three scratch buffers; T is never P's buffer */
    int pbuf = SCHED_BUF_IN;
    int w_empty = 1;
    uint32_t round = 0;

    for (int64_t mask = 1; mask < p; mask <<= 1, round++) {
        const int partner = (int)(r ^ mask);
        if (partner >= p)
            continue;
        const int tbuf = (pbuf == SCHED_BUF_TMP) ? SCHED_BUF_TMP2 : SCHED_BUF_TMP;
        const sched_region_t P = SCHED_WHOLE(pbuf, a);
        const sched_region_t T = SCHED_WHOLE(tbuf, a);
        sched_xchg(s, round, partner, P, partner, T);
        const int need_p = sends_later(r, p, mask);
        if (partner < r) {
            if (w_empty)
                sched_copy(s, T, W);
            else
                sched_reduce(s, T, W);
            w_empty = 0;
            if (need_p) {
                if (pbuf == SCHED_BUF_IN) { /* IN is read-only: continue P in ACC */
                    sched_copy(s, P, SCHED_WHOLE(SCHED_BUF_ACC, a));
                    pbuf = SCHED_BUF_ACC;
                }
                sched_reduce(s, T, SCHED_WHOLE(pbuf, a));
            }
        } else if (need_p) {
            sched_reduce(s, P, T); /* P (+) T, result in T's buffer */
            pbuf = tbuf;
        }
    }
    return s->failed ? -1 : 0;
}
