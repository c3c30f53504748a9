/*
 * Node-aware allreduce, reduce, bcast and barrier (docs/algorithms.md 4.1): a local phase on every
 * host, the leaders' algorithm (sched_args_t.leaders_build) among one leader per host, a local
 * phase again.
 *   allreduce  local reduce to each host's first rank; leaders' allreduce; local bcast.
 *   reduce     local reduce to each host's leader (the root on its host, else the first
 *              rank); leaders' reduce to the root.
 *   bcast      leaders' bcast from the root; local bcast from each leader.
 *   barrier    the messages of binomial reduce and bcast, empty, around the leaders' barrier.
 * The local reduce and bcast are sched_args_t's local_*_build (auto: by the model for the
 * largest host, so rhrd and scatter-allgather for large vectors), binomial by default.
 * Invariant: after the first local phase a leader holds its host's reduction (its ranks are
 * consecutive when the op is not commutative, so a host's reduction is an interval and the
 * leaders, in host order, are in rank order); only the leaders' messages cross hosts.
 * Cost: R_reduce(n) + R_leaders(h) + R_bcast(n) rounds (n the most ranks on one host; reduce,
 * bcast: one local phase; binomial: ceil(log2 n) each); across hosts exactly the leaders'
 * algorithm's messages and bytes on h ranks; (+) the local reduce's + the leaders'.
 */
#include "hier.h"

#include <stdlib.h>

/* reduction to the leaders (and on to root_rank for reduce, or to everyone for allreduce and
 * barrier) */
static int reduce_phases(sched_t *s, const sched_args_t *a, int root_rank, int everyone,
                         int messages_only)
{
    hier_me_t me;
    /* a host's reduction is an interval of ranks only if its ranks are */
    if (hier_me(a, &me) != 0 || (!a->commutative && !messages_only && !me.H->contiguous))
        return -1;
    const size_t m = messages_only ? 1 : a->count;
    const int h = me.H->nhosts;
    int *leaders = hier_leaders(a, root_rank, 0);
    if (leaders == NULL) {
        s->failed = 1;
        return -1;
    }
    int rc = -1;
    uint32_t ra, rb = 0;
    hier_buf_t map[SCHED_NBUFS];
    const int lead = hier_index_of(&me, leaders[me.host]);
    /* TMP2[0, m): the host's reduction on its leader */
    int lead_in = SCHED_BUF_IN;
    /* barrier: the message pattern of binomial trees */
    const sched_build_fn_t reduce = messages_only ? reduce_binomial_build : hier_local_reduce(a);
    const sched_build_fn_t bcast = messages_only ? bcast_binomial_build : hier_local_bcast(a);
    if (hier_local_rounds(a, reduce, 0, m, root_rank, 0, &ra) != 0)
        goto out;
    if (me.n > 1) {
        hier_map_default(map, m);
        map[SCHED_BUF_OUT] = (hier_buf_t){SCHED_BUF_TMP2, 0};
        const hier_phase_t A = {
            .build = reduce, .n = me.n, .root = lead, .count = m, .messages_only = messages_only};
        if (hier_append(s, a, &A, me.local, me.members, 0, map, NULL) != 0)
            goto out;
        lead_in = SCHED_BUF_TMP2;
    }
    const hier_phase_t B = {.build = a->leaders_build,
                            .param = a->leaders_param,
                            .n = h,
                            .root = root_rank >= 0 ? me.H->host_of[root_rank] : 0,
                            .count = m,
                            .messages_only = messages_only};
    if (me.local == lead) {
        hier_map_default(map, m);
        map[SCHED_BUF_IN] = (hier_buf_t){(uint8_t)lead_in, 0};
        if (hier_append(s, a, &B, me.host, leaders, ra, map, &rb) != 0)
            goto out;
    } else if (everyone && hier_rounds_of(a, &B, me.host, &rb) != 0) {
        goto out;
    }
    if (everyone && me.n > 1) {
        hier_map_default(map, 0);
        const hier_phase_t C = {
            .build = bcast, .n = me.n, .root = lead, .count = m, .messages_only = messages_only};
        if (hier_append(s, a, &C, me.local, me.members, ra + rb, map, NULL) != 0)
            goto out;
    }
    rc = 0;
out:
    free(leaders);
    return rc != 0 || s->failed ? -1 : 0;
}

int hier_allreduce_build(sched_t *s, const sched_args_t *a)
{
    return reduce_phases(s, a, -1, 1, 0);
}

int hier_reduce_build(sched_t *s, const sched_args_t *a)
{
    return reduce_phases(s, a, a->root, 0, 0);
}

int hier_barrier_build(sched_t *s, const sched_args_t *a)
{
    return reduce_phases(s, a, -1, 1, 1);
}

int hier_bcast_build(sched_t *s, const sched_args_t *a)
{
    hier_me_t me;
    if (hier_me(a, &me) != 0)
        return -1;
    int *leaders = hier_leaders(a, a->root, 0);
    if (leaders == NULL) {
        s->failed = 1;
        return -1;
    }
    int rc = -1;
    uint32_t ra = 0;
    hier_buf_t map[SCHED_NBUFS];
    hier_map_default(map, 0);
    const int lead = hier_index_of(&me, leaders[me.host]);
    const hier_phase_t A = {.build = a->leaders_build,
                            .param = a->leaders_param,
                            .n = me.H->nhosts,
                            .root = me.H->host_of[a->root],
                            .count = a->count};
    if (me.local == lead ? hier_append(s, a, &A, me.host, leaders, 0, map, &ra)
                         : hier_rounds_of(a, &A, me.host, &ra))
        goto out;
    if (me.n > 1) {
        const hier_phase_t B = {
            .build = hier_local_bcast(a), .n = me.n, .root = lead, .count = a->count};
        if (hier_append(s, a, &B, me.local, me.members, ra, map, NULL) != 0)
            goto out;
    }
    rc = 0;
out:
    free(leaders);
    return rc != 0 || s->failed ? -1 : 0;
}
