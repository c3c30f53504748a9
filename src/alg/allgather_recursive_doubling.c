/*
 * Allgather, `recursive-doubling` (algorithms.md 4.1), p = 2^n only (other p: the builder
 * returns -1). In round k partners r and r ^ 2^k swap the 2^k blocks each has: the aligned
 * group of 2^k ranks containing it, contiguous in OUT. Invariant after round k: r has the
 * blocks of its aligned group of 2^(k+1). Rounds n, volume 1 + 2 + ... + p/2 = p - 1 blocks.
 */
#include "alg.h"

int allgather_recursive_doubling_build(sched_t *s, const sched_args_t *a)
{
    const int p = a->size, r = a->rank;
    const size_t c = a->count;
    if (p < 1 || (p & (p - 1)) != 0)
        return -1;
    sched_copy(s, SCHED_WHOLE(SCHED_BUF_IN, a), sched_region(SCHED_BUF_OUT, (size_t)r * c, c));
    uint32_t round = 0;
    for (int d = 1; d < p; d *= 2, round++) {
        const int partner = r ^ d;
        const size_t mine = (size_t)(r & ~(d - 1)), theirs = (size_t)(partner & ~(d - 1));
        sched_xchg(s, round, partner, sched_region(SCHED_BUF_OUT, mine * c, (size_t)d * c), partner,
                   sched_region(SCHED_BUF_OUT, theirs * c, (size_t)d * c));
    }
    return s->failed ? -1 : 0;
}
