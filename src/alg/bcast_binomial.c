/*
 * Bcast, binomial tree (algorithms.md 3). Virtual rank v = (r - root) mod p; the data lives in
 * OUT (the user's buffer) on every rank. In round k (mask 2^k) every v < 2^k (which has the
 * data) sends it to v + 2^k (if < p); v in [2^k, 2^(k+1)) receives it from v - 2^k.
 * Invariant after round k: virtual ranks [0, min(p, 2^(k+1))) hold the data.
 * Cost: ceil(log2 p) rounds, no (+), m bytes per round.
 */
#include "alg.h"

int bcast_binomial_build(sched_t *s, const sched_args_t *a)
{
    const int p = a->size, r = a->rank, root = a->root;
    const int64_t v = (r - root + p) % p;
    const sched_region_t D = SCHED_WHOLE(SCHED_BUF_OUT, a);
    uint32_t round = 0;

    for (int64_t mask = 1; mask < p; mask <<= 1, round++) {
        if (v < mask && v + mask < p)
            sched_send(s, round, (int)((v + mask + root) % p), D);
        else if (v >= mask && v < 2 * mask)
            sched_recv(s, round, (int)((v - mask + root) % p), D);
    }
    return s->failed ? -1 : 0;
}
