/*
 * Closed forms of the exscan candidates' figures (cost.h): rounds, max_ops (most (+) of one
 * process) and path_ops ((+) on the critical path), in O(log p) arithmetic, no schedule built.
 * tests/unit/check_cost.c compares each against the schedules themselves for every p <= 4096
 * (and doubling:Q for every Q <= 12 up to p = 600). Below, q = ceil(log2 p), f = floor(log2 p);
 * every candidate has 0 rounds for p = 1 and one round without (+) for p = 2, so p >= 3 here.
 *
 * linear: p - 1 rounds, 1 (+) per rank, and rank r's (+) waits for rank r-1's: path p - 2.
 *
 * recursive-doubling: q rounds; max_ops 2f - 2 (1 at p = 3); path 2f - 2 + [2p >= 3 * 2^f]
 *   (the partial block above 2^f lengthens the path by one once it holds half of 2^f ranks).
 *
 * roughly-halving: q rounds; max_ops q + popcount(p-1) - 2 - [p even], path max_ops + [p even].
 *   These two were read off the schedules' counts; the test holds them to every p it checks.
 *
 * doubling with q' (1-, 123-, two-op-, best-doubling, doubling:Q): K = min(q', q) inclusive
 *   rounds, then R2 = the least j with (2^K - 1) * 2^j >= p - 1 exclusive rounds.
 *   An inclusive round k >= 1 adds two (+) to a full chain (W (+) V before sending, T (+) W
 *   after receiving), an exclusive round one: path 2(K - 1) + R2, less one when the inclusive
 *   rounds reach q and p <= 3 * 2^(q-2) (the last round's senders are below 2^(q-2), their
 *   chains short by one). max_ops is that path less one when q' >= 2 and either K = q (and
 *   p >= 4) or p - 1 - w <= 2^(q'-1) for the last exclusive skip w = (2^q' - 1) 2^(R2-1)
 *   (read off the schedules' counts, like the two above).
 *
 * copied_path (receives on the longest chain of receives that the receiver copies: those not
 *   lent, sched_receive_lendable): linear p - 1 (every receive lands in OUT, which the (+)
 *   only reads); recursive-doubling f; roughly-halving popcount(floor((2^q - p) / 2)) + 1;
 *   doubling max(R2, 1). Read off the schedules' counts, like max_ops above.
 *
 * pipeline:K (scan_pipeline.c), for a vector of at least K elements: p + K - 2 rounds of one
 *   segment each (segments = K); ranks 1..p-2 combine K segments (max_ops K), and segment j's
 *   (+) on rank r waits for segment j's on r - 1 and segment j - 1's on r: path p + K - 3.
 *   p = 2: K rounds, no (+). Plain `pipeline` has no closed form here: its k depends on the
 *   vector (cost_pipeline_k).
 */
#include "cost.h"

static unsigned floor_log2(uint64_t n)
{
    unsigned k = 0;
    while (n >>= 1)
        k++;
    return k;
}

static unsigned popcount(uint64_t n)
{
    unsigned c = 0;
    for (; n != 0; n &= n - 1)
        c++;
    return c;
}

static void linear_figures(uint64_t p, sched_figures_t *fig)
{
    fig->rounds = (unsigned)(p - 1);
    fig->max_ops = 1;
    fig->path_ops = (unsigned)(p - 2);
    fig->copied_path = (unsigned)(p - 1);
}

static void recursive_doubling_figures(uint64_t p, sched_figures_t *fig)
{
    const unsigned f = floor_log2(p);
    fig->rounds = sched_ceil_log2(p);
    fig->max_ops = p == 3 ? 1 : 2 * f - 2;
    fig->path_ops = 2 * f - 2 + (2 * p >= (UINT64_C(3) << f));
    fig->copied_path = f;
}

static void roughly_halving_figures(uint64_t p, sched_figures_t *fig)
{
    const unsigned q = sched_ceil_log2(p), even = p % 2 == 0;
    fig->rounds = q;
    fig->path_ops = q + popcount(p - 1) - 2;
    fig->max_ops = fig->path_ops - even;
    fig->copied_path = popcount(((UINT64_C(1) << q) - p) / 2) + 1;
}

static void doubling_figures(uint64_t p, unsigned qprime, sched_figures_t *fig)
{
    const unsigned q = sched_ceil_log2(p), k = qprime < q ? qprime : q;
    const uint64_t w0 = (UINT64_C(1) << k) - 1;
    unsigned r2 = 0;
    while ((w0 << r2) < p - 1)
        r2++;
    fig->rounds = k + r2;
    fig->path_ops = 2 * (k - 1) + r2 - (k == q && 4 * p <= (UINT64_C(3) << q));
    unsigned less = 0;
    if (qprime >= 2)
        less = k == q ? p >= 4 : p - 1 - (w0 << (r2 - 1)) <= (UINT64_C(1) << (qprime - 1));
    fig->max_ops = fig->path_ops - less;
    fig->copied_path = r2 > 0 ? r2 : 1;
}

int cost_exscan_figures(const alg_desc_t *alg, int param, int p, sched_figures_t *fig)
{
    const sched_build_fn_t b = alg != NULL ? alg->build : NULL;
    unsigned qprime = 0;
    fig->rounds = fig->max_ops = fig->path_ops = fig->copied_path = 0;
    fig->segments = 1;
    if (b == exscan_pipeline_build) {
        if (p < 1 || param < 1)
            return -1;
        fig->segments = (unsigned)param;
        if (p >= 2)
            fig->rounds = fig->copied_path = (unsigned)(p + param - 2);
        if (p >= 3) {
            fig->max_ops = (unsigned)param;
            fig->path_ops = (unsigned)(p + param - 3);
        }
        return 0;
    }
    if (b == exscan_tree_build) { /* every round priced as a segment's */
        scan_tree_figures_t tf;
        if (p < 1 || param < 1 || param > scan_tree_max_segments(p) ||
            scan_tree_figures(p, param, 0, &tf) != 0)
            return -1;
        fig->segments = (unsigned)param;
        fig->rounds = tf.rounds;
        fig->max_ops = (unsigned)tf.ops;
        fig->path_ops = p >= 3 ? scan_tree_path_bound(p, param) : 0;
        fig->copied_path = tf.rounds; /* a bound: priced as if every round copied */
        return 0;
    }
    if (b == exscan_doubling_build)
        qprime = (unsigned)param;
    else if (b == exscan_best_doubling_build)
        qprime = (unsigned)exscan_best_doubling_qprime(p);
    else if (b == exscan_two_op_doubling_build)
        qprime = sched_ceil_log2((uint64_t)(p < 1 ? 1 : p));
    else if (b != exscan_linear_build && b != exscan_recursive_doubling_build &&
             b != exscan_roughly_halving_build)
        return -1;
    if (p < 1 || (b == exscan_doubling_build && (param < 1 || param > 62)))
        return -1;
    if (p <= 2) {
        fig->rounds = fig->copied_path = (unsigned)(p - 1);
        return 0;
    }
    if (b == exscan_linear_build)
        linear_figures((uint64_t)p, fig);
    else if (b == exscan_recursive_doubling_build)
        recursive_doubling_figures((uint64_t)p, fig);
    else if (b == exscan_roughly_halving_build)
        roughly_halving_figures((uint64_t)p, fig);
    else
        doubling_figures((uint64_t)p, qprime < 1 ? 1 : qprime, fig);
    return 0;
}
