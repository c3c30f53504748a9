/*
 * Reduce, binomial tree (algorithms.md 2.1). Virtual rank v = (r - root) mod p. In round k a
 * process with bit k set in v sends its accumulator A to v - 2^k and stops; one with v + 2^k < p
 * receives T and sets A <- A (+) T (T covers higher virtual ranks).
 * Invariant after round k: A_v covers virtual ranks [v, min(p, v + 2^(k+1)) - 1].
 * Virtual ranks rotate the order of operands, so a non-commutative op with root != 0 runs the
 * tree rooted at rank 0 (order-preserving) and rank 0 sends the result to the root in one more
 * round.
 * Cost: ceil(log2 p) rounds (+1 in that case), <= ceil(log2 p) (+), m bytes per round.
 */
#include "alg.h"

int reduce_binomial_build(sched_t *s, const sched_args_t *a)
{
    const int p = a->size, r = a->rank, root = a->root;
    const int tree_root = (a->commutative || root == 0) ? root : 0;
    const int v = (r - tree_root + p) % p;
    const uint32_t tree_rounds = sched_ceil_log2((uint64_t)p);
    /* the accumulator: OUT where the tree's result is the user's result, else scratch. It starts
     * as IN itself: a leaf sends its input untouched, and the first message lands where the
     * accumulator will live (its data covers higher virtual ranks, so A <- V (+) T keeps operand
     * order). A non-commutative op alternates buffers so that A (+) T can land in T's. */
    const int final_buf = (r == root && tree_root == root) ? SCHED_BUF_OUT : SCHED_BUF_ACC;
    int abuf = SCHED_BUF_IN;
    uint32_t round = 0;

    for (int64_t mask = 1; mask < p; mask <<= 1, round++) {
        if (v & mask) {
            sched_send(s, round, (int)((v - mask + tree_root) % p), SCHED_WHOLE(abuf, a));
            break;
        }
        if (v + mask < p) {
            const int from = (int)((v + mask + tree_root) % p);
            if (abuf == SCHED_BUF_IN) {
                sched_recv(s, round, from, SCHED_WHOLE(final_buf, a));
                sched_reduce(s, SCHED_WHOLE(SCHED_BUF_IN, a), SCHED_WHOLE(final_buf, a));
                abuf = final_buf;
                continue;
            }
            const int tbuf = (abuf == SCHED_BUF_TMP) ? SCHED_BUF_TMP2 : SCHED_BUF_TMP;
            sched_recv(s, round, from, SCHED_WHOLE(tbuf, a));
            if (a->commutative) {
                sched_reduce(s, SCHED_WHOLE(tbuf, a), SCHED_WHOLE(abuf, a));
            } else {
                sched_reduce(s, SCHED_WHOLE(abuf, a), SCHED_WHOLE(tbuf, a));
                abuf = tbuf;
            }
        }
    }
    if (tree_root == root) {
        if (v == 0)
            sched_copy(s, SCHED_WHOLE(abuf, a), SCHED_WHOLE(SCHED_BUF_OUT, a));
    } else if (v == 0) { /* rank 0 forwards the ordered result to the root */
        sched_send(s, tree_rounds, root, SCHED_WHOLE(abuf, a));
    } else if (r == root) {
        sched_recv(s, tree_rounds, 0, SCHED_WHOLE(SCHED_BUF_OUT, a));
    }
    return s->failed ? -1 : 0;
}
