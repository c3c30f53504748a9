/* The algorithm registry: names accepted by ucoll_set_algorithm and their builders. */
#include "alg.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const alg_desc_t exscan_algs[] = {
    {UCOLL_COLL_EXSCAN, "linear", exscan_linear_build, 0, ALG_ORDER_PRESERVING | ALG_SENDS_INPUT,
     "chain 0->1->...->p-1: p-1 rounds, 1 (+)"},
    {UCOLL_COLL_EXSCAN, "recursive-doubling", exscan_recursive_doubling_build, 0,
     ALG_ORDER_PRESERVING | ALG_SENDS_INPUT,
     "butterfly r^2^k: ceil(log2 p) rounds, up to 2 (+) per round"},
    {UCOLL_COLL_EXSCAN, "1-doubling", exscan_doubling_build, 1,
     ALG_ORDER_PRESERVING | ALG_SENDS_INPUT, "doubling q'=1: 1+ceil(log2(p-1)) rounds, <= q-1 (+)"},
    {UCOLL_COLL_EXSCAN, "123-doubling", exscan_doubling_build, 2,
     ALG_ORDER_PRESERVING | ALG_SENDS_INPUT,
     "doubling q'=2 (skips 1,2,3,6,12,...): ceil(log2(p-1)+log2(4/3)) rounds"},
    {UCOLL_COLL_EXSCAN, "best-doubling", exscan_best_doubling_build, 0,
     ALG_ORDER_PRESERVING | ALG_SENDS_INPUT,
     "doubling with the smallest q' giving ceil(log2 p) rounds"},
    {UCOLL_COLL_EXSCAN, "two-op-doubling", exscan_two_op_doubling_build, 0,
     ALG_ORDER_PRESERVING | ALG_SENDS_INPUT,
     "doubling q'=ceil(log2 p): ceil(log2 p) rounds, two (+) per middle round"},
    {UCOLL_COLL_EXSCAN, "doubling", exscan_doubling_build, 0,
     ALG_ORDER_PRESERVING | ALG_SENDS_INPUT | ALG_PARAM_REQUIRED, "doubling:Q, explicit q'=Q>=1"},
    {UCOLL_COLL_EXSCAN, "roughly-halving", exscan_roughly_halving_build, 0,
     ALG_ORDER_PRESERVING | ALG_SENDS_INPUT,
     "roughly halving skips: ceil(log2 p) rounds, <= q+popcount(p-1)-2-[p even] (+)"},
    {UCOLL_COLL_EXSCAN, "pipeline", exscan_pipeline_build, 0,
     ALG_ORDER_PRESERVING | ALG_SENDS_INPUT | ALG_PARAM_OPTIONAL,
     "chain in k segments (pipeline:K, or k from the model): p+k-2 rounds of m/k, 1 vector of (+)"},
    {UCOLL_COLL_EXSCAN, "tree", exscan_tree_build, 0,
     ALG_ORDER_PRESERVING | ALG_SENDS_INPUT | ALG_PARAM_OPTIONAL,
     "pipelined in-order binary tree in k segments (tree:K, or k from the model): "
     "at most 3(k-1+D)+3 rounds of m/k, D <= 2 floor(log2 p) + 1"},
};

static const alg_desc_t scan_algs[] = {
    {UCOLL_COLL_SCAN, "linear", scan_linear_build, 0, ALG_ORDER_PRESERVING | ALG_SENDS_INPUT,
     "chain 0->1->...->p-1: p-1 rounds, 1 (+)"},
    {UCOLL_COLL_SCAN, "doubling", scan_doubling_build, 0, ALG_ORDER_PRESERVING | ALG_SENDS_INPUT,
     "Hillis-Steele skips 1,2,4,...: ceil(log2 p) rounds, <= ceil(log2 p) (+)"},
    {UCOLL_COLL_SCAN, "recursive-doubling", scan_recursive_doubling_build, 0,
     ALG_ORDER_PRESERVING | ALG_SENDS_INPUT,
     "butterfly r^2^k: ceil(log2 p) rounds, up to 2 (+) per round"},
    {UCOLL_COLL_SCAN, "pipeline", scan_pipeline_build, 0,
     ALG_ORDER_PRESERVING | ALG_SENDS_INPUT | ALG_PARAM_OPTIONAL,
     "chain in k segments (pipeline:K, or k from the model): p+k-2 rounds of m/k, 1 vector of (+)"},
    {UCOLL_COLL_SCAN, "tree", scan_tree_build, 0,
     ALG_ORDER_PRESERVING | ALG_SENDS_INPUT | ALG_PARAM_OPTIONAL,
     "pipelined in-order binary tree in k segments (tree:K, or k from the model): "
     "at most 3(k-1+D)+3 rounds of m/k, D <= 2 floor(log2 p) + 1"},
};

static const alg_desc_t reduce_algs[] = {
    {UCOLL_COLL_REDUCE, "binomial", reduce_binomial_build, 0,
     ALG_ORDER_PRESERVING | ALG_SENDS_INPUT,
     "binomial tree: ceil(log2 p) rounds (+1 to a non-zero root for non-commutative ops)"},
    {UCOLL_COLL_REDUCE, "rhrd", reduce_rhrd_build, 0, 0,
     "halving/gather; half-vector method for p != 2^k: (1/2 + 2(N-1)/N) m bytes, commutative"},
    {UCOLL_COLL_REDUCE, "rhrd-classic", reduce_rhrd_classic_build, 0, 0,
     "prior-art rhrd for p != 2^k (fold, then rhrd on N): (1 + 2(N-1)/N) m bytes, commutative"},
};

static const alg_desc_t allreduce_algs[] = {
    {UCOLL_COLL_ALLREDUCE, "recursive-doubling", allreduce_recursive_doubling_build, 0,
     ALG_ORDER_PRESERVING, "butterfly on N=2^floor(log2 p), extra ranks folded in and out"},
    {UCOLL_COLL_ALLREDUCE, "rhrd", allreduce_rhrd_build, 0, 0,
     "Rabenseifner; half-vector method for p != 2^k: (1 + 2(N-1)/N) m bytes, commutative"},
    {UCOLL_COLL_ALLREDUCE, "rhrd-classic", allreduce_rhrd_classic_build, 0, 0,
     "prior-art rhrd for p != 2^k (fold in/out): (2 + 2(N-1)/N) m bytes, commutative"},
    {UCOLL_COLL_ALLREDUCE, "rs-ag", allreduce_rs_ag_build, 0, 0,
     "Bruck reduce-scatter + Bruck allgather on p blocks: 2q rounds, 2(p-1)/p m bytes, "
     "commutative"},
    {UCOLL_COLL_ALLREDUCE, "ring", allreduce_ring_build, 0, ALG_ORDER_PRESERVING,
     "ring reduce-scatter + ring allgather on p blocks: 2(p-1) rounds, 2(p-1)/p m bytes "
     "(non-commutative: (3p-4)/p m)"},
};

static const alg_desc_t bcast_algs[] = {
    {UCOLL_COLL_BCAST, "binomial", bcast_binomial_build, 0, ALG_ORDER_PRESERVING,
     "binomial tree: ceil(log2 p) rounds"},
    {UCOLL_COLL_BCAST, "scatter-allgather", bcast_scatter_allgather_build, 0, ALG_ORDER_PRESERVING,
     "binomial scatter of p blocks + Bruck allgather: 2q rounds, 2(p-1)/p m bytes"},
    {UCOLL_COLL_BCAST, "pipeline", bcast_pipeline_build, 0,
     ALG_ORDER_PRESERVING | ALG_PARAM_OPTIONAL,
     "chain from the root in k segments (pipeline:K, or k from the model): p+k-2 rounds of m/k"},
};

static const alg_desc_t barrier_algs[] = {
    {UCOLL_COLL_BARRIER, "dissemination", barrier_dissemination_build, 0, ALG_ORDER_PRESERVING,
     "dissemination: ceil(log2 p) rounds of zero-byte messages"},
};

static const alg_desc_t allgather_algs[] = {
    {UCOLL_COLL_ALLGATHER, "ring", allgather_ring_build, 0, ALG_ORDER_PRESERVING,
     "ring: p-1 rounds of one block"},
    {UCOLL_COLL_ALLGATHER, "recursive-doubling", allgather_recursive_doubling_build, 0,
     ALG_ORDER_PRESERVING | ALG_POWER_OF_TWO, "p = 2^k: log2 p rounds of 1, 2, 4, ... blocks"},
    {UCOLL_COLL_ALLGATHER, "bruck", allgather_bruck_build, 0, ALG_ORDER_PRESERVING,
     "Bruck: ceil(log2 p) rounds, p-1 blocks, one local rotation"},
};

static const alg_desc_t allgatherv_algs[] = {
    {UCOLL_COLL_ALLGATHERV, "ring", allgatherv_ring_build, 0, ALG_ORDER_PRESERVING,
     "ring: p-1 rounds of one block"},
    {UCOLL_COLL_ALLGATHERV, "bruck", allgatherv_bruck_build, 0, ALG_ORDER_PRESERVING,
     "Bruck on variable blocks: ceil(log2 p) rounds, one local rotation"},
};

static const alg_desc_t reduce_scatter_block_algs[] = {
    {UCOLL_COLL_REDUCE_SCATTER_BLOCK, "ring", reduce_scatter_block_ring_build, 0,
     ALG_ORDER_PRESERVING,
     "ring: p-1 rounds, p-1 blocks (non-commutative: two-part messages, 2p-3 blocks)"},
    {UCOLL_COLL_REDUCE_SCATTER_BLOCK, "recursive-halving",
     reduce_scatter_block_recursive_halving_build, 0, ALG_ORDER_PRESERVING | ALG_POWER_OF_TWO,
     "p = 2^k: log2 p rounds of p/2, p/4, ..., 1 blocks"},
    {UCOLL_COLL_REDUCE_SCATTER_BLOCK, "bruck", reduce_scatter_block_bruck_build, 0, 0,
     "reverse Bruck: ceil(log2 p) rounds, p-1 blocks, commutative"},
};

static const alg_desc_t reduce_scatter_algs[] = {
    {UCOLL_COLL_REDUCE_SCATTER, "ring", reduce_scatter_ring_build, 0, ALG_ORDER_PRESERVING,
     "ring: p-1 rounds, p-1 blocks (non-commutative: two-part messages, 2p-3 blocks)"},
    {UCOLL_COLL_REDUCE_SCATTER, "recursive-halving", reduce_scatter_recursive_halving_build, 0,
     ALG_ORDER_PRESERVING | ALG_POWER_OF_TWO, "p = 2^k: log2 p rounds of p/2, p/4, ..., 1 blocks"},
    {UCOLL_COLL_REDUCE_SCATTER, "bruck", reduce_scatter_bruck_build, 0, 0,
     "reverse Bruck: ceil(log2 p) rounds, p-1 blocks, commutative"},
};

static const alg_desc_t alltoall_algs[] = {
    {UCOLL_COLL_ALLTOALL, "pairwise", alltoall_pairwise_build, 0,
     ALG_ORDER_PRESERVING | ALG_ONE_ROUND_PER_PAIR,
     "round k sends to r+k, receives from r-k: p-1 rounds, one block each"},
    {UCOLL_COLL_ALLTOALL, "bruck", alltoall_bruck_build, 0, ALG_ORDER_PRESERVING,
     "Bruck: ceil(log2 p) rounds, round k moves the blocks with bit k of (dest-r) mod p"},
};

static const alg_desc_t alltoallv_algs[] = {
    {UCOLL_COLL_ALLTOALLV, "pairwise", alltoallv_pairwise_build, 0,
     ALG_ORDER_PRESERVING | ALG_ONE_ROUND_PER_PAIR,
     "round k sends to r+k, receives from r-k: p-1 rounds, one block each"},
};

static const alg_desc_t gather_algs[] = {
    {UCOLL_COLL_GATHER, "binomial", gather_binomial_build, 0, ALG_ORDER_PRESERVING,
     "binomial tree: ceil(log2 p) rounds, round k carries up to 2^k blocks"},
    {UCOLL_COLL_GATHER, "linear", gather_linear_build, 0,
     ALG_ORDER_PRESERVING | ALG_ONE_ROUND_PER_PAIR,
     "the root receives one block per round: p-1 rounds"},
};

static const alg_desc_t gatherv_algs[] = {
    {UCOLL_COLL_GATHERV, "linear", gatherv_linear_build, 0,
     ALG_ORDER_PRESERVING | ALG_ONE_ROUND_PER_PAIR,
     "the root receives one block per round: p-1 rounds"},
};

static const alg_desc_t scatter_algs[] = {
    {UCOLL_COLL_SCATTER, "binomial", scatter_binomial_build, 0, ALG_ORDER_PRESERVING,
     "binomial tree: ceil(log2 p) rounds, round q-1-k carries up to 2^k blocks"},
    {UCOLL_COLL_SCATTER, "linear", scatter_linear_build, 0,
     ALG_ORDER_PRESERVING | ALG_ONE_ROUND_PER_PAIR,
     "the root sends one block per round: p-1 rounds"},
};

static const alg_desc_t scatterv_algs[] = {
    {UCOLL_COLL_SCATTERV, "linear", scatterv_linear_build, 0,
     ALG_ORDER_PRESERVING | ALG_ONE_ROUND_PER_PAIR,
     "the root sends one block per round: p-1 rounds"},
};

/* kept out of alg_list: they need the comm's hosts (sched_args_t.hosts) and the leaders'
 * algorithm, which no layout-free caller (the cost model, the per-algorithm tests) provides */
static const alg_desc_t node_aware_algs[] = {
    {UCOLL_COLL_EXSCAN, "node-aware", hier_exscan_build, 0, ALG_ORDER_PRESERVING | ALG_NODE_AWARE,
     "local exscan, leaders' exscan of host totals, local bcast; consecutive ranks per host"},
    {UCOLL_COLL_SCAN, "node-aware", hier_scan_build, 0, ALG_ORDER_PRESERVING | ALG_NODE_AWARE,
     "local scan, leaders' exscan of host totals, local bcast; consecutive ranks per host"},
    {UCOLL_COLL_REDUCE, "node-aware", hier_reduce_build, 0, ALG_NODE_AWARE,
     "local reduce per host (binomial or rhrd), leaders' reduce to the root"},
    {UCOLL_COLL_ALLREDUCE, "node-aware", hier_allreduce_build, 0, ALG_NODE_AWARE,
     "local reduce per host, leaders' allreduce, local bcast per host (each by the model)"},
    {UCOLL_COLL_BCAST, "node-aware", hier_bcast_build, 0, ALG_NODE_AWARE,
     "leaders' bcast, local bcast per host (binomial or scatter-allgather)"},
    {UCOLL_COLL_BARRIER, "node-aware", hier_barrier_build, 0, ALG_NODE_AWARE,
     "fan-in per host, leaders' barrier, fan-out per host"},
    {UCOLL_COLL_ALLGATHER, "node-aware", hier_allgather_build, 0, ALG_NODE_AWARE,
     "binomial gather per host, leaders' allgatherv of the hosts' blocks, local bcast"},
};

const alg_desc_t *alg_node_aware(ucoll_coll_t coll)
{
    for (size_t i = 0; i < sizeof(node_aware_algs) / sizeof(node_aware_algs[0]); i++)
        if (node_aware_algs[i].coll == coll)
            return &node_aware_algs[i];
    return NULL;
}

#define LIST(a)                                                                                    \
    {                                                                                              \
        a, sizeof(a) / sizeof(a[0])                                                                \
    }
static const struct {
    const alg_desc_t *algs;
    size_t n;
} registry[UCOLL_NCOLLS] = {
    LIST(exscan_algs),
    LIST(scan_algs),
    LIST(reduce_algs),
    LIST(allreduce_algs),
    LIST(bcast_algs),
    LIST(barrier_algs),
    /* the block collectives */
    LIST(allgather_algs),
    LIST(allgatherv_algs),
    LIST(reduce_scatter_block_algs),
    LIST(reduce_scatter_algs),
    LIST(alltoall_algs),
    LIST(alltoallv_algs),
    LIST(gather_algs),
    LIST(gatherv_algs),
    LIST(scatter_algs),
    LIST(scatterv_algs),
};

static const char *coll_names[UCOLL_NCOLLS] = {
    "exscan",         "scan",       "reduce",
    "allreduce",      "bcast",      "barrier",
    "allgather",      "allgatherv", "reduce_scatter_block",
    "reduce_scatter", "alltoall",   "alltoallv",
    "gather",         "gatherv",    "scatter",
    "scatterv"};

const alg_desc_t *alg_list(ucoll_coll_t coll, size_t *n)
{
    if ((unsigned)coll >= UCOLL_NCOLLS) {
        *n = 0;
        return NULL;
    }
    *n = registry[coll].n;
    return registry[coll].algs;
}

const char *alg_coll_name(ucoll_coll_t coll)
{
    return (unsigned)coll < UCOLL_NCOLLS ? coll_names[coll] : NULL;
}

int alg_coll_from_name(const char *name, ucoll_coll_t *coll)
{
    for (int c = 0; c < UCOLL_NCOLLS; c++)
        if (name != NULL && strcmp(name, coll_names[c]) == 0) {
            *coll = (ucoll_coll_t)c;
            return 0;
        }
    return -1;
}

const alg_desc_t *alg_lookup(ucoll_coll_t coll, const char *name, int *param)
{
    size_t n;
    const alg_desc_t *algs = alg_list(coll, &n);
    if (name == NULL)
        return NULL;
    const alg_desc_t *na = alg_node_aware(coll);
    if (na != NULL && strcmp(name, na->name) == 0) {
        *param = 0;
        return na;
    }
    const char *colon = strchr(name, ':');
    size_t len = colon ? (size_t)(colon - name) : strlen(name);
    for (size_t i = 0; i < n; i++) {
        if (strlen(algs[i].name) != len || strncmp(algs[i].name, name, len) != 0)
            continue;
        const int optional = (algs[i].flags & ALG_PARAM_OPTIONAL) != 0;
        if (!(algs[i].flags & ALG_PARAM_REQUIRED) && (!optional || colon == NULL)) {
            if (colon != NULL)
                return NULL;
            *param = algs[i].param;
            return &algs[i];
        }
        if (colon == NULL || colon[1] < '0' || colon[1] > '9')
            return NULL;
        char *end;
        errno = 0;
        long q = strtol(colon + 1, &end, 10);
        if (errno != 0 || *end != '\0' || q < 1 || q > (optional ? ALG_PARAM_OPTIONAL_MAX : 62))
            return NULL;
        *param = (int)q;
        return &algs[i];
    }
    return NULL;
}
