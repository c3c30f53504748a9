/*
 * Block tables and the ring / Bruck phases on them (block_phases.h).
 *
 * Bruck allgather (algorithms.md 4.1), f = floor(log2 p): v's rotated layout holds block
 * (v + j) mod p at relative position j. Round k < f: send relative [0, 2^k) to v - 2^k, receive
 * relative [2^k, 2^(k+1)) from v + 2^k (that peer's [0, 2^k) are the same blocks). If p != 2^f,
 * a last round sends [0, p - 2^f) to v - 2^f and receives [2^f, p) from v + 2^f.
 * Invariant after round k: relative [0, min(p, 2^(k+1))) are in place. Rounds q, volume p - 1
 * blocks, then the unrotation (copies).
 *
 * Bruck reduce-scatter: the allgather backwards in time with messages reversed. A first round
 * (p != 2^f) sends the partials of relative [2^f, p) to v + 2^f and adds those of relative
 * [0, p - 2^f) coming from v - 2^f; then rounds k = f-1 .. 0 send relative [2^k, 2^(k+1)) to
 * v + 2^k and add relative [0, 2^k) from v - 2^k. Invariant: before the round of 2^k, relative
 * block j < 2^(k+1) of v holds the (+) of the inputs of the ranks whose messages reached it;
 * at the end relative 0 has all p. The sets combined are not contiguous ranks: commutative
 * only. Rounds q, volume p - 1 blocks, (+) on p - 1 blocks per process.
 *
 * Ring allgather: round k = 0 .. p-2 sends block (v - k) mod p to v + 1 and receives block
 * (v - k - 1) mod p from v - 1, in place. Rounds p - 1, volume p - 1 blocks.
 */
#include "block_phases.h"

#include <stdlib.h>

static int alloc_tables(blocks_t *b, int p)
{
    const size_t n = p > 0 ? (size_t)p : 1;
    b->p = p;
    b->shift = 0;
    b->max = 0;
    b->cnt = malloc(n * sizeof(size_t));
    b->pre = malloc((n + 1) * sizeof(size_t));
    b->off = malloc(n * sizeof(size_t));
    if (b->cnt == NULL || b->pre == NULL || b->off == NULL) {
        blocks_free(b);
        return -1;
    }
    return 0;
}

static void finish_tables(blocks_t *b, const size_t *displs)
{
    b->pre[0] = 0;
    for (int j = 0; j < b->p; j++) {
        b->pre[j + 1] = b->pre[j] + b->cnt[j];
        if (b->cnt[j] > b->max)
            b->max = b->cnt[j];
    }
    for (int j = 0; j < b->p; j++)
        b->off[j] = displs != NULL ? displs[j] : b->pre[j];
}

int blocks_init(blocks_t *b, int p, size_t c, const size_t *counts, const size_t *displs)
{
    if (alloc_tables(b, p) != 0)
        return -1;
    for (int j = 0; j < p; j++)
        b->cnt[j] = counts != NULL ? counts[j] : c;
    finish_tables(b, displs);
    return 0;
}

int blocks_split(blocks_t *b, int p, size_t m)
{
    if (alloc_tables(b, p) != 0)
        return -1;
    for (int j = 0; j < p; j++)
        b->cnt[j] = m / (size_t)p + ((size_t)j < m % (size_t)p ? 1 : 0);
    finish_tables(b, NULL);
    return 0;
}

void blocks_free(blocks_t *b)
{
    free(b->cnt);
    free(b->pre);
    free(b->off);
    b->cnt = b->pre = b->off = NULL;
}

size_t blocks_rot_off(const blocks_t *b, int v, int j)
{
    const int p = b->p;
    if (v + j <= p)
        return b->pre[v + j] - b->pre[v];
    return (b->pre[p] - b->pre[v]) + b->pre[v + j - p];
}

static sched_region_t rot(const blocks_t *b, int buf, int v, int j0, int j1)
{
    const size_t lo = blocks_rot_off(b, v, j0);
    return sched_region(buf, lo, blocks_rot_off(b, v, j1) - lo);
}

void blocks_unrotate(sched_t *s, const blocks_t *b, int v, int wbuf, int j0)
{
    const int p = b->p;
    int j = j0;
    while (j < p) {
        int e = j + 1; /* extend while the next block follows in the user's layout too */
        while (e < p && b->off[(v + e) % p] == b->off[(v + e - 1) % p] + b->cnt[(v + e - 1) % p])
            e++;
        const sched_region_t src = rot(b, wbuf, v, j, e);
        sched_copy(s, src, sched_region(SCHED_BUF_OUT, b->off[(v + j) % p], src.count));
        j = e;
    }
}

void blocks_rotate_in(sched_t *s, const blocks_t *b, int v, int wbuf)
{
    const int p = b->p;
    const size_t tail = b->pre[p] - b->pre[v];
    sched_copy(s, sched_region(SCHED_BUF_IN, b->pre[v], tail), sched_region(wbuf, 0, tail));
    if (v > 0)
        sched_copy(s, sched_region(SCHED_BUF_IN, 0, b->pre[v]),
                   sched_region(wbuf, tail, b->pre[v]));
}

void bruck_allgather(sched_t *s, const blocks_t *b, int v, int wbuf, uint32_t round0)
{
    const int p = b->p;
    uint32_t round = round0;
    int64_t d = 1;
    for (; 2 * d <= p; d *= 2, round++)
        sched_xchg(s, round, blocks_real(b, (int)((v - d + p) % p)), rot(b, wbuf, v, 0, (int)d),
                   blocks_real(b, (int)((v + d) % p)), rot(b, wbuf, v, (int)d, (int)(2 * d)));
    if (d < p)
        sched_xchg(s, round, blocks_real(b, (int)((v - d + p) % p)),
                   rot(b, wbuf, v, 0, (int)(p - d)), blocks_real(b, (int)((v + d) % p)),
                   rot(b, wbuf, v, (int)d, p));
}

void bruck_reduce_scatter(sched_t *s, const blocks_t *b, int v, uint32_t round0)
{
    const int p = b->p;
    uint32_t round = round0;
    int64_t d = 1;
    while (2 * d <= p)
        d *= 2;
    if (d < p) {
        const sched_region_t part = rot(b, SCHED_BUF_TMP, v, 0, (int)(p - d));
        sched_xchg(s, round++, blocks_real(b, (int)((v + d) % p)),
                   rot(b, SCHED_BUF_ACC, v, (int)d, p), blocks_real(b, (int)((v - d + p) % p)),
                   part);
        sched_reduce(s, part, sched_region(SCHED_BUF_ACC, 0, part.count));
    }
    for (d /= 2; d >= 1; d /= 2) {
        const sched_region_t part = rot(b, SCHED_BUF_TMP, v, 0, (int)d);
        sched_xchg(s, round++, blocks_real(b, (int)((v + d) % p)),
                   rot(b, SCHED_BUF_ACC, v, (int)d, (int)(2 * d)),
                   blocks_real(b, (int)((v - d + p) % p)), part);
        sched_reduce(s, part, sched_region(SCHED_BUF_ACC, 0, part.count));
    }
}

static sched_region_t user_block(const blocks_t *b, int j)
{
    return sched_region(SCHED_BUF_OUT, b->off[j], b->cnt[j]);
}

void ring_allgather(sched_t *s, const blocks_t *b, int v, uint32_t round0)
{
    const int p = b->p;
    for (int k = 0; k + 1 < p; k++)
        sched_xchg(s, round0 + (uint32_t)k, blocks_real(b, (v + 1) % p),
                   user_block(b, (v - k + p) % p), blocks_real(b, (v - 1 + p) % p),
                   user_block(b, (v - k - 1 + 2 * p) % p));
}
