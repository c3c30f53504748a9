/*
 * Node-aware allgather (docs/algorithms.md 4.1): a binomial gather of each host's blocks to its
 * first rank (the host's bundle, in rank order), an allgatherv of the bundles among the leaders
 * (sched_args_t.leaders_build), then a local bcast of the whole result on every host
 * (local_bcast_build, binomial by default).
 * Invariant: after the leaders' phase every leader holds every block; where a host's ranks are
 * not consecutive the bundles arrive host by host and are copied to their ranks' places.
 * Cost: ceil(log2 n) + R_leaders(h) + R_bcast(n) rounds; across hosts exactly the leaders'
 * allgatherv of bundles (n_h blocks from host h); within a host (n-1) blocks to the leader and
 * p blocks to each rank; no (+).
 */
#include "hier.h"

#include <stdlib.h>

int hier_allgather_build(sched_t *s, const sched_args_t *a)
{
    hier_me_t me;
    if (hier_me(a, &me) != 0)
        return -1;
    const sched_hosts_t *H = me.H;
    const size_t c = a->count, p = (size_t)a->size, h = (size_t)H->nhosts;
    /* TMP2: [0, p c) every block host by host (unless OUT is in that order), then the bundle */
    const size_t all = H->contiguous ? 0 : p * c, bundle = all, reserved = all + (size_t)me.n * c;
    int *leaders = hier_leaders(a, -1, 0);
    size_t *counts = malloc(2 * h * sizeof(size_t));
    int rc = -1;
    if (leaders == NULL || counts == NULL) {
        s->failed = 1;
        goto out;
    }
    for (size_t g = 0; g < h; g++) {
        counts[g] = (size_t)(H->host_start[g + 1] - H->host_start[g]) * c;
        counts[h + g] = (size_t)H->host_start[g] * c;
    }
    uint32_t ra, rb = 0;
    hier_buf_t map[SCHED_NBUFS];
    if (hier_local_rounds(a, gather_binomial_build, 0, c, -1, 0, &ra) != 0)
        goto out;
    int lead_in = SCHED_BUF_IN;
    size_t lead_off = 0;
    if (me.n > 1) {
        hier_map_default(map, reserved);
        map[SCHED_BUF_OUT] = (hier_buf_t){SCHED_BUF_TMP2, bundle};
        const hier_phase_t A = {.build = gather_binomial_build, .n = me.n, .count = c};
        if (hier_append(s, a, &A, me.local, me.members, 0, map, NULL) != 0)
            goto out;
        lead_in = SCHED_BUF_TMP2;
        lead_off = bundle;
    }
    const hier_phase_t B = {.build = a->leaders_build,
                            .param = a->leaders_param,
                            .n = (int)h,
                            .count = (size_t)me.n * c,
                            .recv_counts = counts,
                            .recv_displs = counts + h};
    if (me.local == 0) {
        hier_map_default(map, reserved);
        map[SCHED_BUF_IN] = (hier_buf_t){(uint8_t)lead_in, lead_off};
        if (!H->contiguous)
            map[SCHED_BUF_OUT] = (hier_buf_t){SCHED_BUF_TMP2, 0};
        if (hier_append(s, a, &B, me.host, leaders, ra, map, &rb) != 0)
            goto out;
        /* host-by-host order to rank order, runs of consecutive ranks in one copy */
        for (size_t q = 0; !H->contiguous && q < p;) {
            size_t e = q + 1;
            while (e < p && H->ranks_by_host[e] == H->ranks_by_host[e - 1] + 1)
                e++;
            sched_copy(s, sched_region(SCHED_BUF_TMP2, q * c, (e - q) * c),
                       sched_region(SCHED_BUF_OUT, (size_t)H->ranks_by_host[q] * c, (e - q) * c));
            q = e;
        }
    } else if (hier_rounds_of(a, &B, me.host, &rb) != 0) {
        goto out;
    }
    if (me.n > 1) {
        hier_map_default(map, 0);
        const hier_phase_t C = {.build = hier_local_bcast(a), .n = me.n, .count = p * c};
        if (hier_append(s, a, &C, me.local, me.members, ra + rb, map, NULL) != 0)
            goto out;
    }
    rc = 0;
out:
    free(leaders);
    free(counts);
    return rc != 0 || s->failed ? -1 : 0;
}
