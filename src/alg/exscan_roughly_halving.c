/*
 * Exclusive scan, roughly-halving (Traeff 2026, Algorithm 2; algorithms.md 1.3).
 * q = ceil(log2 p); skips s_k = floor((p-1)/2^(q-k)) + 1, k = 0..q (s_0 = 1, s_q = p,
 * s_k = ceil(s_(k+1)/2)).
 *
 * Invariant before round k: the window of W_r is [max(0, r - s_k + 1), r - 1].
 * Round k: if s_(k+1) is even, skip t = s_k: send W (+) V (V while W is empty) to r + t,
 *          receive from r - t >= 0;
 *          if s_(k+1) is odd, skip t = s_k - 1: send W (if non-empty) to r + t, receive from
 *          r - t >= 1. The receiver sets W <- T (+) W.
 *
 * Cost: exactly ceil(log2 p) rounds for every p, no (+) in round 0,
 * (+) per process <= q + popcount(p-1) - 2 - [p even]; every message is m bytes.
 */
#include "alg.h"

int exscan_roughly_halving_build(sched_t *s, const sched_args_t *a)
{
    const int r = a->rank, p = a->size;
    const unsigned q = sched_ceil_log2((uint64_t)(p < 1 ? 1 : p));
    const sched_region_t V = SCHED_WHOLE(SCHED_BUF_IN, a);
    const sched_region_t W = SCHED_WHOLE(SCHED_BUF_OUT, a);
    const sched_region_t T = SCHED_WHOLE(SCHED_BUF_TMP, a);
    const sched_region_t WV = SCHED_WHOLE(SCHED_BUF_TMP2, a);
    int w_empty = 1;

    for (unsigned k = 0; k < q; k++) {
        const int64_t s_k = (int64_t)((uint64_t)(p - 1) >> (q - k)) + 1;
        const int64_t s_next = (int64_t)((uint64_t)(p - 1) >> (q - k - 1)) + 1;
        const int inclusive = (s_next % 2) == 0;
        const int64_t t = inclusive ? s_k : s_k - 1;
        int to = -1, from = -1;
        sched_region_t out = W;
        if (inclusive) {
            to = (r + t < p) ? (int)(r + t) : -1;
            from = (r - t >= 0) ? (int)(r - t) : -1;
            out = V;
            if (to >= 0 && !w_empty) {
                sched_copy(s, V, WV);
                sched_reduce(s, W, WV);
                out = WV;
            }
        } else {
            to = (!w_empty && r + t < p) ? (int)(r + t) : -1;
            from = (r - t >= 1) ? (int)(r - t) : -1;
        }
        sched_xchg(s, k, to, out, from, w_empty ? W : T);
        if (from >= 0) {
            if (!w_empty)
                sched_reduce(s, T, W);
            w_empty = 0;
        }
    }
    return s->failed ? -1 : 0;
}
