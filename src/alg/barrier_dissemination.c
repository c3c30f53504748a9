/*
 * Barrier, dissemination (algorithms.md 3). In round k every rank sends a zero-byte message to
 * (r + 2^k) mod p and receives one from (r - 2^k) mod p.
 * Invariant after round k: rank r has (transitively) heard from ranks r - 2^(k+1) + 1 .. r.
 * Cost: ceil(log2 p) rounds, no (+), 0 bytes.
 */
#include "alg.h"

int barrier_dissemination_build(sched_t *s, const sched_args_t *a)
{
    const int p = a->size, r = a->rank;
    const sched_region_t none = sched_region(SCHED_BUF_OUT, 0, 0);
    uint32_t round = 0;

    for (int64_t skip = 1; skip < p; skip <<= 1, round++)
        sched_xchg(s, round, (int)((r + skip) % p), none, (int)((r - skip % p + p) % p), none);
    return s->failed ? -1 : 0;
}
