/*
 * Gather and scatter, binomial tree (algorithms.md 4.5), any root. Virtual rank
 * v = (r - root) mod p. The subtree of v > 0 is the virtual ranks [v, min(p, v + 2^b)), 2^b the
 * lowest set bit of v; the root's is all p.
 * Gather: in round k (mask 2^k) a v whose lowest set bit is k sends its subtree's blocks to
 * v - 2^k and is done; a v with no bit up to k receives the blocks of [v + 2^k,
 * min(p, v + 2^(k+1))) from v + 2^k, if that is < p.
 * Invariant after round k: a v with no bit up to k holds the blocks of [v, min(p, v + 2^(k+1))).
 * Scatter runs the same tree backwards: its round q-1-k is gather's round k with every message
 * reversed.
 * A process keeps its subtree's blocks in virtual order, its own first (non-roots in TMP), so
 * that a subtree is one contiguous message. On the root virtual block u is rank (u + root) mod
 * p's block, at that place of its buffer in rank order, so the root sends (scatter) from IN and
 * receives (gather) into OUT directly, except for the one subtree whose ranks wrap past p-1:
 * that one goes through TMP and is rotated by two copies. A leaf (subtree of one) sends from IN
 * (gather) or receives into OUT (scatter).
 * Cost: q = ceil(log2 p) rounds, no (+); gather's round k carries up to 2^k blocks (scatter's
 * round q-1-k the same), min(2^k, p - 2^k) on the root's path: volume p - 1 blocks. Scratch:
 * TMP of at most 2^(q-1) blocks.
 */
#include "alg.h"

/* how many virtual ranks the subtree of v > 0 has: [v, min(p, v + lowest bit of v)) */
static int64_t subtree_size(int64_t p, int64_t v)
{
    if (v == 0)
        return p;
    const int64_t low = v & -v;
    return v + low < p ? low : p - v;
}

/* the blocks of virtual ranks [lo, hi) seen from the root: where they are in the root's buffer
 * `buf` (rank order), or -1 when they wrap and must go through TMP */
static int64_t root_offset(const sched_args_t *a, int64_t lo, int64_t hi)
{
    const int64_t p = a->size, first = (lo + a->root) % p;
    return first + (hi - lo) <= p ? first * (int64_t)a->count : -1;
}

/* copies between TMP [0, (hi-lo)*c), virtual ranks [lo, hi), and the root's buffer `buf`:
 * to_tmp = 1: buf -> TMP, else TMP -> buf; two pieces, split where the ranks wrap */
static void rotate(sched_t *s, const sched_args_t *a, int buf, int64_t lo, int64_t hi, int to_tmp)
{
    const int64_t p = a->size, first = (lo + a->root) % p, head = p - first;
    const size_t c = a->count;
    const sched_region_t t0 = sched_region(SCHED_BUF_TMP, 0, (size_t)head * c);
    const sched_region_t t1 =
        sched_region(SCHED_BUF_TMP, (size_t)head * c, (size_t)(hi - lo - head) * c);
    const sched_region_t b0 = sched_region(buf, (size_t)first * c, (size_t)head * c);
    const sched_region_t b1 = sched_region(buf, 0, (size_t)(hi - lo - head) * c);
    if (to_tmp) {
        sched_copy(s, b0, t0);
        sched_copy(s, b1, t1);
    } else {
        sched_copy(s, t0, b0);
        sched_copy(s, t1, b1);
    }
}

int gather_binomial_build(sched_t *s, const sched_args_t *a)
{
    const int p = a->size, r = a->rank, root = a->root;
    const int64_t v = (r - root + p) % p;
    const size_t c = a->count;
    const sched_region_t own = sched_region(SCHED_BUF_IN, 0, c);
    /* the root collects into OUT; a leaf (its subtree is itself alone) sends IN itself */
    const int buf = v == 0 ? SCHED_BUF_OUT : subtree_size(p, v) == 1 ? SCHED_BUF_IN : SCHED_BUF_TMP;
    int64_t held = 1; /* blocks of virtual ranks [v, v + held) */

    if (v == 0)
        sched_copy(s, own, sched_region(SCHED_BUF_OUT, (size_t)r * c, c));
    else if (buf == SCHED_BUF_TMP)
        sched_copy(s, own, sched_region(SCHED_BUF_TMP, 0, c));
    for (int64_t mask = 1; mask < p; mask <<= 1) {
        const uint32_t round = sched_ceil_log2((uint64_t)mask);
        if (v & mask) {
            sched_send(s, round, (int)((v - mask + root) % p),
                       sched_region(buf, 0, (size_t)held * c));
            break;
        }
        if (v + mask >= p)
            continue;
        const int64_t lo = v + mask, hi = v + 2 * mask < p ? v + 2 * mask : p;
        const int from = (int)((lo + root) % p);
        const size_t n = (size_t)(hi - lo) * c;
        if (v != 0) {
            sched_recv(s, round, from, sched_region(SCHED_BUF_TMP, (size_t)mask * c, n));
        } else if (root_offset(a, lo, hi) >= 0) {
            sched_recv(s, round, from,
                       sched_region(SCHED_BUF_OUT, (size_t)root_offset(a, lo, hi), n));
        } else {
            sched_recv(s, round, from, sched_region(SCHED_BUF_TMP, 0, n));
            rotate(s, a, SCHED_BUF_OUT, lo, hi, 0);
        }
        held = hi - v;
    }
    return s->failed ? -1 : 0;
}

int scatter_binomial_build(sched_t *s, const sched_args_t *a)
{
    const int p = a->size, r = a->rank, root = a->root;
    const int64_t v = (r - root + p) % p;
    const size_t c = a->count;
    const uint32_t q = sched_ceil_log2((uint64_t)p);
    /* lowest set bit of v: the mask of the round v receives in (the root: above all) */
    const int64_t low = v == 0 ? (int64_t)1 << q : v & -v;
    /* a leaf (its subtree is itself alone) receives straight into OUT */
    const int64_t subtree = subtree_size(p, v);
    const int buf = v == 0 ? SCHED_BUF_IN : subtree == 1 ? SCHED_BUF_OUT : SCHED_BUF_TMP;

    for (int64_t mask = (int64_t)1 << q >> 1; mask >= 1; mask >>= 1) {
        const uint32_t round = q - 1 - sched_ceil_log2((uint64_t)mask);
        if (mask > low)
            continue; /* not yet in the tree */
        if (mask == low) {
            sched_recv(s, round, (int)((v - mask + root) % p),
                       sched_region(buf, 0, (size_t)subtree * c));
            continue;
        }
        if (v + mask >= p)
            continue;
        const int64_t lo = v + mask, hi = v + 2 * mask < p ? v + 2 * mask : p;
        const int to = (int)((lo + root) % p);
        const size_t n = (size_t)(hi - lo) * c;
        if (v != 0) {
            sched_send(s, round, to, sched_region(SCHED_BUF_TMP, (size_t)mask * c, n));
        } else if (root_offset(a, lo, hi) >= 0) {
            sched_send(s, round, to, sched_region(SCHED_BUF_IN, (size_t)root_offset(a, lo, hi), n));
        } else {
            rotate(s, a, SCHED_BUF_IN, lo, hi, 1);
            sched_send(s, round, to, sched_region(SCHED_BUF_TMP, 0, n));
        }
    }
    if (v == 0)
        sched_copy(s, sched_region(SCHED_BUF_IN, (size_t)r * c, c),
                   sched_region(SCHED_BUF_OUT, 0, c));
    else if (buf == SCHED_BUF_TMP)
        sched_copy(s, sched_region(SCHED_BUF_TMP, 0, c), sched_region(SCHED_BUF_OUT, 0, c));
    return s->failed ? -1 : 0;
}
