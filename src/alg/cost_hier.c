/*
 * auto's node-aware choice (cost.h): a node-aware form whenever the layout has more than one
 * host and more than one rank on some host, and the form serves it; each phase's algorithm by
 * the same model as a flat call on as many ranks.
 */
#include "cost.h"

#include <string.h>

int cost_node_aware_serves(ucoll_coll_t coll, const sched_hosts_t *H, int commutative)
{
    if (alg_node_aware(coll) == NULL || H == NULL || H->nhosts < 2 || H->nhosts >= H->size)
        return 0;
    /* host totals in host order are intervals of ranks only when the hosts' ranks are */
    const int ordered =
        coll == UCOLL_COLL_EXSCAN || coll == UCOLL_COLL_SCAN ||
        ((coll == UCOLL_COLL_REDUCE || coll == UCOLL_COLL_ALLREDUCE) && !commutative);
    return !ordered || H->contiguous;
}

/* coll's algorithm by the model for p ranks and count elements, with its parameter */
static const alg_desc_t *model_pick(ucoll_coll_t coll, int p, size_t count, size_t elem_size,
                                    int commutative, const cost_params_t *cost, size_t rmin,
                                    size_t amin, int *param)
{
    const char *name = cost_select_elems(coll, p, count, elem_size, commutative, cost, rmin, amin);
    const alg_desc_t *alg = name != NULL ? alg_lookup(coll, name, param) : NULL;
    if (alg != NULL)
        *param = cost_resolve_param(alg, *param, p, count, elem_size, cost);
    return alg;
}

int cost_node_aware_plan(ucoll_coll_t coll, const sched_hosts_t *H, size_t count, size_t elem_size,
                         int commutative, const cost_params_t *cost, size_t reduce_rhrd_min,
                         size_t allreduce_rhrd_min, node_aware_plan_t *plan)
{
    const int h = H->nhosts, n = H->max_per_host;
    const size_t rmin = reduce_rhrd_min, amin = allreduce_rhrd_min;
    const size_t lcount = coll == UCOLL_COLL_BARRIER ? 0 : count;
    int unused;
    memset(plan, 0, sizeof(*plan));
    /* the leaders: scan's combine the host totals exclusively; allgather's move a host's
     * blocks (the largest host's, for the model) with the v form */
    if (coll == UCOLL_COLL_ALLGATHER) {
        const char *name = cost_select_elems(coll, h, lcount * (size_t)n, elem_size, commutative,
                                             cost, rmin, amin);
        plan->leaders = alg_lookup(UCOLL_COLL_ALLGATHERV,
                                   name != NULL && strcmp(name, "ring") == 0 ? "ring" : "bruck",
                                   &plan->leaders_param);
    } else {
        const ucoll_coll_t lc = coll == UCOLL_COLL_SCAN ? UCOLL_COLL_EXSCAN : coll;
        plan->leaders = model_pick(lc, h, lcount, elem_size, commutative, cost, rmin, amin,
                                   &plan->leaders_param);
    }
    if (plan->leaders == NULL)
        return -1;
    if (coll == UCOLL_COLL_ALLREDUCE || coll == UCOLL_COLL_REDUCE) {
        plan->local_reduce = model_pick(UCOLL_COLL_REDUCE, n, lcount, elem_size, commutative, cost,
                                        rmin, amin, &unused);
        if (plan->local_reduce == NULL)
            return -1;
    }
    if (coll != UCOLL_COLL_REDUCE && coll != UCOLL_COLL_BARRIER) {
        const size_t whole = coll == UCOLL_COLL_ALLGATHER ? lcount * (size_t)H->size : lcount;
        /* the local phases run their builder without a parameter: no pipeline */
        const char *name = cost_auto_vector_whole(UCOLL_COLL_BCAST, n, whole, elem_size, 1, cost);
        plan->local_bcast = name != NULL ? alg_lookup(UCOLL_COLL_BCAST, name, &unused) : NULL;
        if (plan->local_bcast == NULL)
            return -1;
    }
    if (cost_node_aware_bound(plan, H) > COST_MAX_ROUNDS)
        return -1; /* the tag's round field: the same verdict on every rank */
    return 0;
}

unsigned cost_node_aware_bound(const node_aware_plan_t *plan, const sched_hosts_t *H)
{
    const int n = H->max_per_host;
    unsigned rounds = cost_rounds_bound(plan->leaders, plan->leaders_param, H->nhosts);
    if (plan->local_reduce != NULL)
        rounds += cost_rounds_bound(plan->local_reduce, 0, n);
    if (plan->local_bcast != NULL)
        rounds += cost_rounds_bound(plan->local_bcast, 0, n);
    /* the fixed ones: binomial fan-in/out and gather, doubling scans, ceil(log2 n) each, and
     * a non-commutative binomial reduce's forwarding round */
    return rounds + 2 * sched_ceil_log2((uint64_t)n) + 1;
}

void cost_plan_args(const node_aware_plan_t *plan, const sched_hosts_t *H, sched_args_t *a)
{
    a->hosts = H;
    a->leaders_build = plan->leaders != NULL ? plan->leaders->build : NULL;
    a->leaders_param = plan->leaders_param;
    a->local_reduce_build = plan->local_reduce != NULL ? plan->local_reduce->build : NULL;
    a->local_bcast_build = plan->local_bcast != NULL ? plan->local_bcast->build : NULL;
}
