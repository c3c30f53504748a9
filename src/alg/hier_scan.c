/*
 * Node-aware exscan and scan (docs/algorithms.md 4.1), for layouts whose hosts hold consecutive
 * ranks (the builders refuse others). Each host's leader is its last rank.
 *   1. local exscan (best-doubling) or scan (doubling) among the host's n ranks, into OUT; the
 *      leader forms its host's total T (exscan: T = OUT (+) V, scan: T = OUT);
 *   2. the leaders' exscan of the totals (sched_args_t.leaders_build) into E: on host g the
 *      (+) of every rank on hosts 0..g-1;
 *   3. on hosts g >= 1, a local bcast of E from the leader (local_bcast_build, binomial by
 *      default), then OUT = E (+) OUT (exscan's
 *      first rank of a host: OUT = E).
 * Invariant: E covers exactly the ranks below the host's first, OUT after step 1 the host's
 * ranks below (exscan) or up to (scan) this one, so E (+) OUT keeps operand order.
 * Cost: R_local(n) + R_leaders(h) + R_bcast(n) rounds; across hosts exactly the leaders'
 * exscan on h ranks; (+) on the critical path: the local one's + 1 + the leaders' + 1.
 */
#include "hier.h"

#include <stdlib.h>

static int scan_phases(sched_t *s, const sched_args_t *a, int exclusive)
{
    hier_me_t me;
    if (hier_me(a, &me) != 0 || !me.H->contiguous)
        return -1;
    const size_t m = a->count;
    const sched_build_fn_t local = exclusive ? exscan_best_doubling_build : scan_doubling_build;
    /* TMP2: [0, m) the total T, [m, 2m) E */
    const sched_region_t T = sched_region(SCHED_BUF_TMP2, 0, m);
    const sched_region_t E = sched_region(SCHED_BUF_TMP2, m, m);
    const sched_region_t OUT = SCHED_WHOLE(SCHED_BUF_OUT, a), IN = SCHED_WHOLE(SCHED_BUF_IN, a);
    int *leaders = hier_leaders(a, -1, 1);
    if (leaders == NULL) {
        s->failed = 1;
        return -1;
    }
    int rc = -1;
    uint32_t ra, rb = 0;
    hier_buf_t map[SCHED_NBUFS];
    const int lead = me.n - 1;
    if (hier_local_rounds(a, local, 0, m, -1, 1, &ra) != 0)
        goto out;
    hier_map_default(map, 2 * m);
    const hier_phase_t A = {.build = local, .n = me.n, .root = lead, .count = m};
    if ((me.n > 1 || !exclusive) && hier_append(s, a, &A, me.local, me.members, 0, map, NULL) != 0)
        goto out;
    const hier_phase_t B = {
        .build = a->leaders_build, .param = a->leaders_param, .n = me.H->nhosts, .count = m};
    if (me.local == lead) {
        uint8_t total = SCHED_BUF_OUT; /* scan: OUT is the host's total on its last rank */
        if (exclusive && me.n == 1) {
            total = SCHED_BUF_IN;
        } else if (exclusive) {
            sched_copy(s, IN, T);
            sched_reduce(s, OUT, T);
            total = SCHED_BUF_TMP2;
        }
        hier_map_default(map, 2 * m);
        map[SCHED_BUF_IN] = (hier_buf_t){total, 0};
        map[SCHED_BUF_OUT] = (hier_buf_t){SCHED_BUF_TMP2, m};
        if (hier_append(s, a, &B, me.host, leaders, ra, map, &rb) != 0)
            goto out;
    } else if (hier_rounds_of(a, &B, me.host, &rb) != 0) {
        goto out;
    }
    if (me.host > 0) {
        if (me.n > 1) {
            hier_map_default(map, 2 * m);
            map[SCHED_BUF_OUT] = (hier_buf_t){SCHED_BUF_TMP2, m};
            const hier_phase_t C = {
                .build = hier_local_bcast(a), .n = me.n, .root = lead, .count = m};
            if (hier_append(s, a, &C, me.local, me.members, ra + rb, map, NULL) != 0)
                goto out;
        }
        if (exclusive && me.local == 0)
            sched_copy(s, E, OUT);
        else
            sched_reduce(s, E, OUT);
    }
    rc = 0;
out:
    free(leaders);
    return rc != 0 || s->failed ? -1 : 0;
}

int hier_exscan_build(sched_t *s, const sched_args_t *a)
{
    return scan_phases(s, a, 1);
}

int hier_scan_build(sched_t *s, const sched_args_t *a)
{
    return scan_phases(s, a, 0);
}
