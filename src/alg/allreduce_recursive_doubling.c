/*
 * Allreduce, recursive doubling (algorithms.md 2.1). N = largest power of two <= p, e = p - N.
 * Fold-in round: of the first 2e ranks, even 2i sends V to odd 2i+1, which sets A = V_2i (+) V.
 * The N remaining ranks (odd ranks below 2e, all ranks from 2e) get new ranks 0..N-1 in rank
 * order and run a butterfly: in round k partners n XOR 2^k swap A; a lower partner's T gives
 * A <- T (+) A, a higher one's A <- A (+) T. Fold-out round: 2i+1 sends the result to 2i.
 * Invariant after butterfly round k: A covers the ranks of new ranks in n's aligned
 * 2^(k+1)-block, a contiguous range of real ranks. Order-preserving.
 * Cost: log2 N rounds (+2 when p != N), <= log2 N + 1 (+), m bytes per round.
 */
#include "alg.h"

int allreduce_recursive_doubling_build(sched_t *s, const sched_args_t *a)
{
    const int p = a->size, r = a->rank;
    int64_t n2 = 1;
    while (n2 * 2 <= p)
        n2 *= 2;
    const int extra = p - (int)n2;
    const uint32_t first = extra > 0 ? 1 : 0;
    int abuf = SCHED_BUF_OUT;
    uint32_t round = first;

    if (r < 2 * extra && r % 2 == 0) { /* folded out: send V, wait for the result */
        sched_send(s, 0, r + 1, SCHED_WHOLE(SCHED_BUF_IN, a));
        sched_recv(s, first + sched_ceil_log2((uint64_t)n2), r + 1, SCHED_WHOLE(SCHED_BUF_OUT, a));
        return s->failed ? -1 : 0;
    }
    if (a->commutative) {
        /* the accumulator starts as IN itself: the first message lands in OUT and OUT <- V (+) T
         * (commutative: the partner may be the lower one), so no copy of V and a clean send */
        abuf = SCHED_BUF_IN;
        if (r < 2 * extra) {
            sched_recv(s, 0, r - 1, SCHED_WHOLE(SCHED_BUF_OUT, a));
            sched_reduce(s, SCHED_WHOLE(SCHED_BUF_IN, a), SCHED_WHOLE(SCHED_BUF_OUT, a));
            abuf = SCHED_BUF_OUT;
        }
    } else {
        sched_copy(s, SCHED_WHOLE(SCHED_BUF_IN, a), SCHED_WHOLE(SCHED_BUF_OUT, a));
        if (r < 2 * extra) {
            sched_recv(s, 0, r - 1, SCHED_WHOLE(SCHED_BUF_TMP, a));
            sched_reduce(s, SCHED_WHOLE(SCHED_BUF_TMP, a), SCHED_WHOLE(SCHED_BUF_OUT, a));
        }
    }
    const int64_t n = (r < 2 * extra) ? r / 2 : r - extra;
    for (int64_t mask = 1; mask < n2; mask <<= 1, round++) {
        const int64_t pn = n ^ mask;
        const int partner = (int)(pn < extra ? 2 * pn + 1 : pn + extra);
        if (abuf == SCHED_BUF_IN) {
            sched_xchg(s, round, partner, SCHED_WHOLE(SCHED_BUF_IN, a), partner,
                       SCHED_WHOLE(SCHED_BUF_OUT, a));
            sched_reduce(s, SCHED_WHOLE(SCHED_BUF_IN, a), SCHED_WHOLE(SCHED_BUF_OUT, a));
            abuf = SCHED_BUF_OUT;
            continue;
        }
        const int tbuf = (abuf == SCHED_BUF_TMP) ? SCHED_BUF_TMP2 : SCHED_BUF_TMP;
        sched_xchg(s, round, partner, SCHED_WHOLE(abuf, a), partner, SCHED_WHOLE(tbuf, a));
        if (pn < n || a->commutative) {
            sched_reduce(s, SCHED_WHOLE(tbuf, a), SCHED_WHOLE(abuf, a));
        } else {
            sched_reduce(s, SCHED_WHOLE(abuf, a), SCHED_WHOLE(tbuf, a));
            abuf = tbuf;
        }
    }
    sched_copy(s, SCHED_WHOLE(abuf, a), SCHED_WHOLE(SCHED_BUF_OUT, a));
    if (r < 2 * extra)
        sched_send(s, round, r - 1, SCHED_WHOLE(SCHED_BUF_OUT, a));
    return s->failed ? -1 : 0;
}
