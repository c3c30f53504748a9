/*
 * Inclusive scan (algorithms.md 1.5). I_r (the inclusive partial result) lives in OUT.
 *
 * linear: chain; rank r receives I_(r-1) in round r - 1, sets I_r = I_(r-1) (+) V_r and sends it
 *   to r + 1 in round r. Cost: p - 1 rounds, 1 (+), m bytes per round.
 * doubling (Hillis-Steele / Kogge-Stone): skips s = 1, 2, 4, ...: send I_r to r + s, receive
 *   T from r - s, I_r <- T (+) I_r. Invariant after the round with skip s: I_r covers
 *   [max(0, r - 2s + 1), r]. Cost: ceil(log2 p) rounds, <= ceil(log2 p) (+), m bytes per round.
 * recursive-doubling: butterfly r XOR 2^k exchanging the block partial P; a lower partner's
 *   T gives I <- T (+) I and P <- T (+) P, a higher one P <- P (+) T. Invariant after round k:
 *   P covers r's aligned 2^(k+1)-block (clipped to p), I covers [block start, r].
 *   Cost: ceil(log2 p) rounds, up to 2 (+) per round, m bytes per round.
 */
#include "alg.h"

/* I <- T (+) V from the partial of a lower rank: a commutative op receives it straight into I
 * and adds V there (no copy of V); an ordered one needs V in I first */
static void receive_partial(sched_t *s, const sched_args_t *a, uint32_t round, int from,
                            sched_region_t I, sched_region_t T)
{
    const sched_region_t V = SCHED_WHOLE(SCHED_BUF_IN, a);
    if (a->commutative) {
        sched_recv(s, round, from, I);
        sched_reduce(s, V, I);
    } else {
        sched_copy(s, V, I);
        sched_recv(s, round, from, T);
        sched_reduce(s, T, I);
    }
}

int scan_linear_build(sched_t *s, const sched_args_t *a)
{
    const int r = a->rank, p = a->size;
    const sched_region_t V = SCHED_WHOLE(SCHED_BUF_IN, a);
    const sched_region_t I = SCHED_WHOLE(SCHED_BUF_OUT, a);
    const sched_region_t T = SCHED_WHOLE(SCHED_BUF_TMP, a);

    if (r == 0) { /* I_0 = V_0: sent from IN, which no copy has just dirtied */
        if (p > 1)
            sched_send(s, 0, 1, V);
        sched_copy(s, V, I);
        return s->failed ? -1 : 0;
    }
    receive_partial(s, a, (uint32_t)(r - 1), r - 1, I, T);
    if (r + 1 < p)
        sched_send(s, (uint32_t)r, r + 1, I);
    return s->failed ? -1 : 0;
}

int scan_doubling_build(sched_t *s, const sched_args_t *a)
{
    const int r = a->rank, p = a->size;
    const sched_region_t I = SCHED_WHOLE(SCHED_BUF_OUT, a);
    const sched_region_t T = SCHED_WHOLE(SCHED_BUF_TMP, a);
    uint32_t round = 0;

    if (p == 1)
        sched_copy(s, SCHED_WHOLE(SCHED_BUF_IN, a), I);
    for (int64_t skip = 1; skip < p; skip <<= 1, round++) {
        int to = (r + skip < p) ? (int)(r + skip) : -1;
        int from = (r - skip >= 0) ? (int)(r - skip) : -1;
        if (skip == 1) { /* I = V yet: send from IN, which no copy has just dirtied */
            const sched_region_t V = SCHED_WHOLE(SCHED_BUF_IN, a);
            const int land_in_I = from >= 0 && a->commutative;
            sched_xchg(s, round, to, V, from, land_in_I ? I : T);
            if (land_in_I) {
                sched_reduce(s, V, I);
            } else {
                sched_copy(s, V, I);
                if (from >= 0)
                    sched_reduce(s, T, I);
            }
            continue;
        }
        /* rank 0 never receives: its I stays V, sent from IN */
        sched_xchg(s, round, to, r == 0 ? SCHED_WHOLE(SCHED_BUF_IN, a) : I, from, T);
        if (from >= 0)
            sched_reduce(s, T, I);
    }
    return s->failed ? -1 : 0;
}

int scan_recursive_doubling_build(sched_t *s, const sched_args_t *a)
{
    const int r = a->rank, p = a->size;
    const sched_region_t I = SCHED_WHOLE(SCHED_BUF_OUT, a);
    int pbuf = SCHED_BUF_IN;
    uint32_t round = 0;

    sched_copy(s, SCHED_WHOLE(SCHED_BUF_IN, a), I);
    for (int64_t mask = 1; mask < p; mask <<= 1, round++) {
        const int partner = (int)(r ^ mask);
        if (partner >= p)
            continue;
        const int tbuf = (pbuf == SCHED_BUF_TMP) ? SCHED_BUF_TMP2 : SCHED_BUF_TMP;
        const sched_region_t P = SCHED_WHOLE(pbuf, a);
        const sched_region_t T = SCHED_WHOLE(tbuf, a);
        int need_p = 0;
        for (int64_t m = mask << 1; m < p; m <<= 1)
            need_p |= (r ^ m) < p;
        sched_xchg(s, round, partner, P, partner, T);
        if (partner < r) {
            sched_reduce(s, T, I);
            if (need_p) {
                if (pbuf == SCHED_BUF_IN) {
                    sched_copy(s, P, SCHED_WHOLE(SCHED_BUF_ACC, a));
                    pbuf = SCHED_BUF_ACC;
                }
                sched_reduce(s, T, SCHED_WHOLE(pbuf, a));
            }
        } else if (need_p) {
            sched_reduce(s, P, T);
            pbuf = tbuf;
        }
    }
    return s->failed ? -1 : 0;
}
