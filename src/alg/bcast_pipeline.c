/*
 * Bcast down the chain root -> root + 1 -> ... -> root + p - 1 (mod p) in k segments that
 * follow each other (pipeline_chain). Binomial moves the whole vector ceil(log2 p) times one
 * after the other; here every rank but the root takes it in once, and from round 1 on up to
 * p - 1 links carry a segment at the same time, so for large vectors the time tends to one
 * transfer of m. Segments and k as scan_pipeline.c's (pipeline_segments): plain `pipeline` is
 * resolved to cost_pipeline_k's k for the call's vector before it is built (select.c).
 *
 * Invariant: the rank v places after the root holds segment j in OUT after round v - 1 + j and
 * sends it to the next rank in round v + j; every round is one XCHG (receive segment j + 1
 * while sending segment j), both in OUT, disjoint.
 * Cost, exact, for p >= 2 (p = 1: no round): k' = min(k, max(count, 1)) segments
 *   rounds   p + k' - 2
 *   messages one segment each (m/k' when k' divides m); no (+), no copy
 *   bytes    the vector crosses each of the p - 1 links once
 *   volume   (sum over rounds of the largest message) (p - 2) ceil(m/k') + m
 * Time (p + k' - 2)(alpha + beta m/k'), least near k* = sqrt((p - 2) beta m / alpha): for
 * p = 2 one segment, the single message binomial sends.
 */
#include "alg.h"

int bcast_pipeline_build(sched_t *s, const sched_args_t *a)
{
    if (a->size < 2)
        return 0;
    return pipeline_chain(s, a, a->root, SCHED_BUF_OUT, SCHED_BUF_OUT, -1, -1);
}
