/*
 * Gather, scatter, gatherv and scatterv, linear (algorithms.md 4.5): the root exchanges one
 * block with one rank per round. Virtual rank v = (r - root) mod p; v > 0 sends its block to
 * the root (gather) or receives it from the root (scatter) in round v - 1, straight between IN
 * and OUT; the root copies its own block locally.
 * Invariant after round k: the root has exchanged the blocks of virtual ranks 0 .. k + 1.
 * v forms: only the root knows every count (gatherv: recv_counts / recv_displs, scatterv:
 * send_counts / send_displs); a non-root sends or receives its `count` elements, and the root
 * copies its own `count` elements.
 * Cost: p - 1 rounds, no (+), volume p - 1 blocks (v forms: the sum of the other ranks' counts),
 * no scratch.
 */
#include "alg.h"

/* one block: its offset and elements in the root's buffer for virtual rank v's comm rank */
typedef struct {
    size_t off, count;
} block_t;

static block_t root_block(const sched_args_t *a, const size_t *counts, const size_t *displs,
                          int rank)
{
    block_t b = {(size_t)rank * a->count, a->count};
    if (counts != NULL) {
        b.off = displs[rank];
        b.count = counts[rank];
    }
    return b;
}

/* gather (counts NULL) or gatherv: the root receives into OUT */
static int gather_linear(sched_t *s, const sched_args_t *a, const size_t *counts,
                         const size_t *displs)
{
    const int p = a->size, r = a->rank, root = a->root;
    const int v = (r - root + p) % p;

    if (v != 0) {
        sched_send(s, (uint32_t)(v - 1), root, sched_region(SCHED_BUF_IN, 0, a->count));
        return s->failed ? -1 : 0;
    }
    const block_t own = root_block(a, counts, displs, r);
    sched_copy(s, sched_region(SCHED_BUF_IN, 0, a->count),
               sched_region(SCHED_BUF_OUT, own.off, a->count));
    for (int u = 1; u < p; u++) {
        const int from = (u + root) % p;
        const block_t b = root_block(a, counts, displs, from);
        sched_recv(s, (uint32_t)(u - 1), from, sched_region(SCHED_BUF_OUT, b.off, b.count));
    }
    return s->failed ? -1 : 0;
}

/* scatter (counts NULL) or scatterv: the root sends from IN */
static int scatter_linear(sched_t *s, const sched_args_t *a, const size_t *counts,
                          const size_t *displs)
{
    const int p = a->size, r = a->rank, root = a->root;
    const int v = (r - root + p) % p;

    if (v != 0) {
        sched_recv(s, (uint32_t)(v - 1), root, sched_region(SCHED_BUF_OUT, 0, a->count));
        return s->failed ? -1 : 0;
    }
    const block_t own = root_block(a, counts, displs, r);
    sched_copy(s, sched_region(SCHED_BUF_IN, own.off, a->count),
               sched_region(SCHED_BUF_OUT, 0, a->count));
    for (int u = 1; u < p; u++) {
        const int to = (u + root) % p;
        const block_t b = root_block(a, counts, displs, to);
        sched_send(s, (uint32_t)(u - 1), to, sched_region(SCHED_BUF_IN, b.off, b.count));
    }
    return s->failed ? -1 : 0;
}

int gather_linear_build(sched_t *s, const sched_args_t *a)
{
    return gather_linear(s, a, NULL, NULL);
}

int scatter_linear_build(sched_t *s, const sched_args_t *a)
{
    return scatter_linear(s, a, NULL, NULL);
}

int gatherv_linear_build(sched_t *s, const sched_args_t *a)
{
    if (a->rank == a->root && (a->recv_counts == NULL || a->recv_displs == NULL))
        return -1;
    return gather_linear(s, a, a->rank == a->root ? a->recv_counts : NULL, a->recv_displs);
}

int scatterv_linear_build(sched_t *s, const sched_args_t *a)
{
    if (a->rank == a->root && (a->send_counts == NULL || a->send_displs == NULL))
        return -1;
    return scatter_linear(s, a, a->rank == a->root ? a->send_counts : NULL, a->send_displs);
}
