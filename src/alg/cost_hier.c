/*
 * auto's node-aware choice (cost.h): a node-aware form whenever the layout has more than one
 * host and more than one rank on some host, and the form serves it; the leaders' algorithm by
 * the same model as a flat call on one rank per host.
 */
#include "cost.h"

#include <string.h>

/* the local phases' rounds at most: two binomial trees (one more round for a non-commutative
 * reduce's root), or a doubling scan and a bcast */
static unsigned local_rounds_bound(int n)
{
    return 2 * sched_ceil_log2((uint64_t)(n > 0 ? n : 1)) + 1;
}

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

const alg_desc_t *cost_node_aware_leaders(ucoll_coll_t coll, const sched_hosts_t *H, size_t count,
                                          size_t elem_size, int commutative,
                                          const cost_params_t *cost, size_t reduce_rhrd_min,
                                          size_t allreduce_rhrd_min, int *param)
{
    const int h = H->nhosts;
    /* scan's leaders combine the host totals exclusively */
    const ucoll_coll_t lc = coll == UCOLL_COLL_SCAN ? UCOLL_COLL_EXSCAN : coll;
    const size_t lcount = coll == UCOLL_COLL_BARRIER ? 0 : count;
    /* allgather's leaders move a host's blocks (the largest host's, for the model) */
    const size_t scale = coll == UCOLL_COLL_ALLGATHER ? (size_t)H->max_per_host : 1;
    const char *name = cost_select_elems(lc, h, lcount * scale, elem_size, commutative, cost,
                                         reduce_rhrd_min, allreduce_rhrd_min);
    const alg_desc_t *alg = NULL;
    *param = 0;
    if (coll == UCOLL_COLL_ALLGATHER) /* of the v form: recursive doubling has none */
        alg = alg_lookup(UCOLL_COLL_ALLGATHERV,
                         name != NULL && strcmp(name, "ring") == 0 ? "ring" : "bruck", param);
    else if (name != NULL)
        alg = alg_lookup(lc, name, param);
    if (alg == NULL)
        return NULL;
    *param = cost_resolve_param(alg, *param, h, lcount, elem_size, cost);
    if (local_rounds_bound(H->max_per_host) + cost_rounds_bound(alg, *param, h) > COST_MAX_ROUNDS)
        return NULL; /* the tag's round field: the same verdict on every rank */
    return alg;
}
