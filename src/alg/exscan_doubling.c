/*
 * Exclusive scan, the doubling family with parameter q' >= 1 (Traeff 2026, Algorithm 1;
 * algorithms.md 1.2). W (the exclusive partial result) lives in OUT, V in IN.
 *
 * Invariant: after the phase-1 round with skip s = 2^k the window of W_r is
 * [max(0, r - 2s + 1), r - 1]; after the phase-2 round with skip w it is [max(0, r - 2w), r - 1].
 *
 * Phase 1 ("inclusive" rounds), k < q' and 2^k - 1 < p - 1, skip s = 2^k:
 *   send W (+) V (V alone while W is empty) to r + s, receive T from r - s, W <- T (+) W.
 * Phase 2 ("exclusive" rounds), w = 2^k - 1, 2w, 4w, ... while w < p - 1:
 *   send W (if non-empty) to r + w, receive T from r - w if r - w >= 1, W <- T (+) W.
 *
 * Cost: rounds q(q') = q' + max(0, ceil(log2((p-1)/(2^q'-1)))); (+) per process
 * <= q + q' - 2 (<= q - 1 for q' = 1); every message is one full vector (m bytes).
 * Members: 1-doubling (q'=1), 123-doubling (q'=2), two-op-doubling (q'=ceil(log2 p)),
 * best-doubling (smallest q' with q(q') = ceil(log2 p)), doubling:Q.
 */
#include "alg.h"

/* number of rounds of the doubling algorithm with parameter qprime for p processes */
static unsigned doubling_rounds(int p, int qprime)
{
    unsigned rounds = 0;
    uint64_t k = 0;
    while ((int)k < qprime && (UINT64_C(1) << k) - 1 < (uint64_t)(p - 1))
        k++, rounds++;
    for (uint64_t w = (UINT64_C(1) << k) - 1; w < (uint64_t)(p - 1); w *= 2)
        rounds++;
    return rounds;
}

int exscan_best_doubling_qprime(int p)
{
    unsigned q = sched_ceil_log2((uint64_t)(p < 1 ? 1 : p));
    for (int qprime = 1; qprime < 63; qprime++)
        if (doubling_rounds(p, qprime) <= q)
            return qprime;
    return (int)(q < 1 ? 1 : q);
}

int exscan_doubling_build(sched_t *s, const sched_args_t *a)
{
    const int r = a->rank, p = a->size, qprime = a->param;
    const sched_region_t V = SCHED_WHOLE(SCHED_BUF_IN, a);
    const sched_region_t W = SCHED_WHOLE(SCHED_BUF_OUT, a);
    const sched_region_t T = SCHED_WHOLE(SCHED_BUF_TMP, a);
    const sched_region_t WV = SCHED_WHOLE(SCHED_BUF_TMP2, a);
    int w_empty = 1;
    uint32_t round = 0;
    uint64_t k = 0;

    if (qprime < 1)
        return -1;
    /* phase 1: inclusive rounds */
    for (; (int)k < qprime && (UINT64_C(1) << k) - 1 < (uint64_t)(p - 1); k++, round++) {
        const int64_t skip = INT64_C(1) << k;
        int to = (r + skip < p) ? (int)(r + skip) : -1;
        int from = (r - skip >= 0) ? (int)(r - skip) : -1;
        sched_region_t out = V;
        if (to >= 0 && !w_empty) {
            sched_copy(s, V, WV);
            sched_reduce(s, W, WV); /* W (+) V: W covers lower ranks */
            out = WV;
        }
        sched_xchg(s, round, to, out, from, w_empty ? W : T);
        if (from >= 0) {
            if (!w_empty)
                sched_reduce(s, T, W);
            w_empty = 0;
        }
    }
    /* phase 2: exclusive rounds */
    for (uint64_t w = (UINT64_C(1) << k) - 1; w < (uint64_t)(p - 1); w *= 2, round++) {
        int to = (!w_empty && r + (int64_t)w < p) ? (int)(r + (int64_t)w) : -1;
        int from = (r - (int64_t)w >= 1) ? (int)(r - (int64_t)w) : -1;
        sched_xchg(s, round, to, W, from, T);
        if (from >= 0)
            sched_reduce(s, T, W);
    }
    return s->failed ? -1 : 0;
}

int exscan_best_doubling_build(sched_t *s, const sched_args_t *a)
{
    sched_args_t b = *a;
    b.param = exscan_best_doubling_qprime(a->size);
    return exscan_doubling_build(s, &b);
}

int exscan_two_op_doubling_build(sched_t *s, const sched_args_t *a)
{
    sched_args_t b = *a;
    unsigned q = sched_ceil_log2((uint64_t)(a->size < 1 ? 1 : a->size));
    b.param = q < 1 ? 1 : (int)q;
    return exscan_doubling_build(s, &b);
}
