/*
 * Phases shared by the block builders (allgather, reduce-scatter, allreduce rs-ag / ring, bcast
 * scatter-allgather): a table of p blocks of possibly different sizes, and the ring and Bruck
 * rounds on it. Ranks are virtual: v = (rank - shift) mod p, so bcast can put its root at v = 0.
 */
#ifndef UCOLL_BLOCK_PHASES_H
#define UCOLL_BLOCK_PHASES_H

#include "alg.h"

typedef struct {
    int p;
    size_t *cnt; /* elements of block j */
    size_t *pre; /* p + 1 entries: sum of cnt[0..j), the packed layout */
    size_t *off; /* where block j lives in the user's layout (displacements, or pre) */
    size_t max;  /* the largest cnt */
    int shift;   /* real rank = (v + shift) mod p */
} blocks_t;

static inline int blocks_real(const blocks_t *b, int v)
{
    return (int)(((int64_t)v + b->shift) % b->p);
}

/* p blocks: cnt = counts[j] (NULL: every block c elements), off = displs[j] (NULL: packed);
 * -1 on no memory */
int blocks_init(blocks_t *b, int p, size_t c, const size_t *counts, const size_t *displs);
/* m elements split into p packed blocks, the first m mod p of them one element larger */
int blocks_split(blocks_t *b, int p, size_t m);
void blocks_free(blocks_t *b);

/* offset of relative block j (block (v + j) mod p) in v's rotated packed layout, 0 <= j <= p */
size_t blocks_rot_off(const blocks_t *b, int v, int j);

/* copies relative blocks [j0, p) of v's rotated layout in buffer wbuf to their places in the
 * user's layout in OUT (consecutive blocks that stay consecutive: one copy) */
void blocks_unrotate(sched_t *s, const blocks_t *b, int v, int wbuf, int j0);
/* copies IN (blocks packed) into v's rotated layout in buffer wbuf */
void blocks_rotate_in(sched_t *s, const blocks_t *b, int v, int wbuf);

/* Bruck allgather on v's rotated layout in wbuf (relative block 0 in place): rounds round0 ..
 * round0 + ceil(log2 p) - 1 */
void bruck_allgather(sched_t *s, const blocks_t *b, int v, int wbuf, uint32_t round0);
/* Bruck reduce-scatter (commutative) on v's rotated layout in ACC, received parts in TMP: q
 * rounds from round0; relative block 0 of ACC ends with the (+) of every rank's block v */
void bruck_reduce_scatter(sched_t *s, const blocks_t *b, int v, uint32_t round0);
/* ring allgather on the user's layout in OUT (block v in place): p - 1 rounds from round0 */
void ring_allgather(sched_t *s, const blocks_t *b, int v, uint32_t round0);
/* ring reduce-scatter of IN (blocks packed) into `result` (cnt[v] elements): p - 1 rounds
 * from round0; order-preserving when !commutative (see reduce_scatter_ring.c) */
void ring_reduce_scatter(sched_t *s, const blocks_t *b, int v, int commutative, uint32_t round0,
                         sched_region_t result);

#endif
