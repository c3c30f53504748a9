/*
 * Pipelined chain for exscan and scan on large vectors (algorithms.md 1.6). The doubling family
 * moves the whole vector ceil(log2 p) times; here it crosses each link of the chain
 * 0 -> 1 -> ... -> p-1 once, cut into k segments that follow each other down the chain.
 * pipeline_chain, the chain from any root, also builds bcast's `pipeline` (bcast_pipeline.c).
 *
 * Segments: count elements into k' = max(1, min(k, count)) parts, the first count % k' of them
 * one element longer (segment j starts at j*floor(count/k') + min(j, count % k')). k is the
 * parameter (pipeline:K). The library never builds plain `pipeline` with param 0: it resolves
 * it first to the k of cost_pipeline_k for the call's vector and its agreed alpha and beta
 * (select.c); a build with param 0 (the tools, the tests) takes cost_pipeline_k for count
 * elements of one byte with the default alpha and beta, a function of p and count alone, which
 * cost_vector_figures can reproduce. k' = 1 is the linear chain.
 *
 * Invariant: rank r has segment j of W_r (the ranks 0..r-1) after round r - 1 + j, and sends
 * segment j of what r + 1 needs in round r + j. Every round is one XCHG: receive segment j + 1
 * from r - 1 while sending segment j to r + 1.
 *   exscan  rank 0 sends V_0; rank r in 1..p-2 receives W_r into OUT (its result) and sends
 *           W_r (+) V_r, computed segment by segment in TMP (TMP = V_r first, then
 *           TMP[j] <- OUT[j] (+) TMP[j]: the lower ranks on the left); rank p-1 only receives.
 *           Rank 0's OUT is untouched.
 *   scan    rank r >= 1 receives I_(r-1) into TMP, OUT[j] <- TMP[j] (+) OUT[j] with OUT = V_r
 *           first, and sends OUT[j] on; a commutative op receives into OUT and adds V_r there,
 *           OUT[j] <- V[j] (+) OUT[j], without the copy (rank 0 sends V_0 from IN and copies it
 *           to OUT after; rank p-1 only receives and combines).
 * Cost, exact, for p >= 2 (p = 1: no round, no (+)):
 *   rounds   p + k' - 2; rank r < p - 1 takes part up to round r + k' - 1
 *   messages one segment each (m/k' when k' divides m)
 *   bytes    the whole vector sent by ranks 0..p-2 and received by 1..p-1
 *   (+)      k' steps, m elements in all, on ranks 1..p-2 (exscan) or 1..p-1 (scan); none
 *            elsewhere, none at all for m = 0 (sched_reduce drops empty steps)
 *   volume   (sum over rounds of the largest message) (p - 2) ceil(m/k') + m
 *   path     (+) on the critical path: p + k' - 3 segments (exscan, p >= 3; 0 at p = 2),
 *            p + k' - 2 (scan)
 * Time (p + k' - 2)(alpha + beta m/k'), least near k* = sqrt((p - 2) beta m / alpha).
 */
#include "alg.h"
#include "cost.h"

int pipeline_segments(const sched_args_t *a)
{
    int k = a->param;
    if (k < 1)
        k = cost_pipeline_k(a->size, a->count, 1, COST_DEFAULT_ALPHA_US, COST_DEFAULT_BETA_NS);
    if ((size_t)k > a->count)
        k = a->count > 0 ? (int)a->count : 1;
    return k;
}

sched_region_t pipeline_segment(int buf, size_t count, int k, int j)
{
    const size_t base = count / (size_t)k, extra = count % (size_t)k, uj = (size_t)j;
    return sched_region(buf, uj * base + (uj < extra ? uj : extra), base + (uj < extra));
}

int pipeline_chain(sched_t *s, const sched_args_t *a, int root, int send_buf, int recv_buf, int src,
                   int dst)
{
    const int p = a->size, r = (a->rank - root + p) % p, k = pipeline_segments(a);
    const size_t n = a->count;
    const int first = r >= 1 ? r - 1 : 0, last = r + 1 < p ? r + k - 1 : r + k - 2;
    for (int t = first; t <= last; t++) {
        const int js = t - r, jr = t - r + 1;
        const int to = (r + 1 < p && js >= 0 && js < k) ? (r + 1 + root) % p : -1;
        const int from = (r >= 1 && jr >= 0 && jr < k) ? (r - 1 + root) % p : -1;
        const sched_region_t none = sched_region(send_buf, 0, 0);
        sched_xchg(s, (uint32_t)t, to, to >= 0 ? pipeline_segment(send_buf, n, k, js) : none, from,
                   from >= 0 ? pipeline_segment(recv_buf, n, k, jr) : none);
        if (from >= 0 && dst >= 0)
            sched_reduce(s, pipeline_segment(src, n, k, jr), pipeline_segment(dst, n, k, jr));
    }
    return s->failed ? -1 : 0;
}

int exscan_pipeline_build(sched_t *s, const sched_args_t *a)
{
    const int r = a->rank, p = a->size;
    if (p < 2)
        return 0;
    if (r == 0)
        return pipeline_chain(s, a, 0, SCHED_BUF_IN, SCHED_BUF_OUT, -1, -1);
    if (r == p - 1)
        return pipeline_chain(s, a, 0, SCHED_BUF_OUT, SCHED_BUF_OUT, -1, -1);
    sched_copy(s, SCHED_WHOLE(SCHED_BUF_IN, a), SCHED_WHOLE(SCHED_BUF_TMP, a));
    return pipeline_chain(s, a, 0, SCHED_BUF_TMP, SCHED_BUF_OUT, SCHED_BUF_OUT, SCHED_BUF_TMP);
}

int scan_pipeline_build(sched_t *s, const sched_args_t *a)
{
    const sched_region_t V = SCHED_WHOLE(SCHED_BUF_IN, a), I = SCHED_WHOLE(SCHED_BUF_OUT, a);
    if (a->size < 2 || a->rank == 0) { /* I_0 = V_0: sent from IN, copied once it is sent */
        if (a->size >= 2 && pipeline_chain(s, a, 0, SCHED_BUF_IN, SCHED_BUF_TMP, -1, -1) != 0)
            return -1;
        sched_copy(s, V, I);
        return s->failed ? -1 : 0;
    }
    if (a->commutative) /* segments land in OUT, V added there: no copy of V */
        return pipeline_chain(s, a, 0, SCHED_BUF_OUT, SCHED_BUF_OUT, SCHED_BUF_IN, SCHED_BUF_OUT);
    sched_copy(s, V, I);
    return pipeline_chain(s, a, 0, SCHED_BUF_OUT, SCHED_BUF_TMP, SCHED_BUF_TMP, SCHED_BUF_OUT);
}
