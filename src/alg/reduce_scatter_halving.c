/*
 * Reduce-scatter (block and v), `recursive-halving` (algorithms.md 4.2), p = 2^n only (other p:
 * the builder returns -1). Order-preserving.
 *
 * Step i = 0 .. n-1 pairs r with r ^ 2^i. The blocks are laid out in ACC in bit-reversed order
 * of their index, so that the blocks whose low i bits equal r's are one contiguous range; step
 * i halves it by bit i of the block index: r keeps the half of the blocks that share its bit i,
 * sends the other half to the partner and combines the partner's partials of its own half.
 * Invariant after step i: on its range, r's partials cover the 2^(i+1) ranks that share r's
 * bits above i, an aligned interval of ranks, so the lower partner's part goes on the left.
 * The accumulator moves between ACC and TMP when the received part is the left operand.
 * Rounds n, volume p/2 + p/4 + ... + 1 = p - 1 blocks, (+) on p - 1 blocks per process.
 */
#include "block_phases.h"

#include <stdlib.h>

static unsigned bit_reverse(unsigned x, int n)
{
    unsigned y = 0;
    for (int i = 0; i < n; i++)
        y |= ((x >> i) & 1u) << (n - 1 - i);
    return y;
}

static int build(sched_t *s, const sched_args_t *a, const size_t *counts)
{
    const int p = a->size, r = a->rank;
    int n = 0;
    while ((1 << n) < p)
        n++;
    if (p < 1 || (1 << n) != p)
        return -1;
    blocks_t b;
    size_t *pos_off = malloc(((size_t)p + 1) * sizeof(size_t)); /* offset of position j in ACC */
    if (pos_off == NULL || blocks_init(&b, p, a->count, counts, NULL) != 0) {
        free(pos_off);
        return -1;
    }
    pos_off[0] = 0;
    for (int j = 0; j < p; j++)
        pos_off[j + 1] = pos_off[j] + b.cnt[bit_reverse((unsigned)j, n)];
    for (int j = 0; j < p; j++) {
        const int blk = (int)bit_reverse((unsigned)j, n);
        sched_copy(s, sched_region(SCHED_BUF_IN, b.pre[blk], b.cnt[blk]),
                   sched_region(SCHED_BUF_ACC, pos_off[j], b.cnt[blk]));
    }
    int acc = SCHED_BUF_ACC, lo = 0;
    for (int i = 0; i < n; i++) {
        const int half = (p >> i) / 2, mine = (r >> i) & 1, partner = r ^ (1 << i);
        const int keep = lo + mine * half, give = lo + (1 - mine) * half;
        const int other = acc == SCHED_BUF_ACC ? SCHED_BUF_TMP : SCHED_BUF_ACC;
        const size_t ko = pos_off[keep], kc = pos_off[keep + half] - ko;
        const size_t go = pos_off[give], gc = pos_off[give + half] - go;
        sched_xchg(s, (uint32_t)i, partner, sched_region(acc, go, gc), partner,
                   sched_region(other, ko, kc));
        if (partner < r) {
            sched_reduce(s, sched_region(other, ko, kc), sched_region(acc, ko, kc));
        } else {
            sched_reduce(s, sched_region(acc, ko, kc), sched_region(other, ko, kc));
            acc = other;
        }
        lo = keep;
    }
    sched_copy(s, sched_region(acc, pos_off[lo], b.cnt[r]),
               sched_region(SCHED_BUF_OUT, 0, b.cnt[r]));
    blocks_free(&b);
    free(pos_off);
    return s->failed ? -1 : 0;
}

int reduce_scatter_block_recursive_halving_build(sched_t *s, const sched_args_t *a)
{
    return build(s, a, NULL);
}

/* recv_counts NULL: every block `count` elements */
int reduce_scatter_recursive_halving_build(sched_t *s, const sched_args_t *a)
{
    return build(s, a, a->recv_counts);
}
