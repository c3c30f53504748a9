/*
 * The algorithm registry: every algorithm ucoll_set_algorithm accepts, per collective, with
 * the schedule builder that defines it. Builders are in one file per family in src/alg/.
 */
#ifndef UCOLL_ALG_H
#define UCOLL_ALG_H

#include "../sched.h"
#include "ucoll.h"

enum {
    ALG_ORDER_PRESERVING = 1, /* correct for non-commutative (+) */
    ALG_PARAM_REQUIRED = 2,   /* name takes ":Q" (e.g. doubling:3) */
    ALG_POWER_OF_TWO = 4,     /* builds only for p = 2^k (other p: the builder returns -1) */
    /* every message from one rank to another falls in one round, so a message's tag stays
     * unique when the tag's round field wraps: any number of rounds may run */
    ALG_ONE_ROUND_PER_PAIR = 8,
    /* name takes an optional ":K" (pipeline:8); without it the builder gets param 0 */
    ALG_PARAM_OPTIONAL = 16,
    /* needs the comm's hosts (sched_args_t.hosts, leaders_build): not in alg_list */
    ALG_NODE_AWARE = 32,
    /* on two ranks its messages carry the sender's input, not data it wrote during the call:
     * single copy's reader then finds them clean in the sender's cache. Auto's single copy
     * (UCOLL_SINGLE_COPY_MIN=auto) is used for these only (bcast's root, whose caller has often
     * just written its buffer, measured slower with it; so did the recursive-doubling allreduce,
     * where both ranks read at once) */
    ALG_SENDS_INPUT = 64,
};

/* the largest K of an ALG_PARAM_OPTIONAL name: a pipeline of more segments than the tag's
 * round field can number would never run (p + k - 2 rounds, at least k) */
#define ALG_PARAM_OPTIONAL_MAX 255

typedef struct {
    ucoll_coll_t coll;
    const char *name;
    sched_build_fn_t build;
    int param;      /* fixed parameter passed to build (e.g. q' of 1-doubling) */
    unsigned flags; /* ALG_* */
    const char *summary;
} alg_desc_t;

#define UCOLL_NCOLLS 16

/* Finds `name` (with an optional ":Q" suffix for ALG_PARAM_REQUIRED algorithms) for coll.
 * Returns the descriptor and stores the parameter, or NULL. "auto" is not in the table. */
const alg_desc_t *alg_lookup(ucoll_coll_t coll, const char *name, int *param);
/* all descriptors of a collective, in registry order; *n gets how many */
const alg_desc_t *alg_list(ucoll_coll_t coll, size_t *n);
/* the node-aware form of coll ("node-aware", ALG_NODE_AWARE; alg_lookup finds it), or NULL */
const alg_desc_t *alg_node_aware(ucoll_coll_t coll);
/* "exscan", "scan", ... ; NULL for an unknown value */
const char *alg_coll_name(ucoll_coll_t coll);
int alg_coll_from_name(const char *name, ucoll_coll_t *coll);

/* builders, by family */
int exscan_linear_build(sched_t *s, const sched_args_t *a);
int exscan_recursive_doubling_build(sched_t *s, const sched_args_t *a);
int exscan_doubling_build(sched_t *s, const sched_args_t *a); /* param = q' */
int exscan_best_doubling_build(sched_t *s, const sched_args_t *a);
int exscan_two_op_doubling_build(sched_t *s, const sched_args_t *a);
int exscan_roughly_halving_build(sched_t *s, const sched_args_t *a);
int scan_linear_build(sched_t *s, const sched_args_t *a);
int scan_doubling_build(sched_t *s, const sched_args_t *a);
int scan_recursive_doubling_build(sched_t *s, const sched_args_t *a);
/* the pipelined chain (scan_pipeline.c): param = k segments, 0 = chosen from the vector */
int exscan_pipeline_build(sched_t *s, const sched_args_t *a);
int scan_pipeline_build(sched_t *s, const sched_args_t *a);
/* the k' segments a pipeline schedule of these arguments has (1 <= k' <= max(1, count)) */
int pipeline_segments(const sched_args_t *a);
/* segment j of k of buffer buf: count elements in k parts, the first count % k one longer */
sched_region_t pipeline_segment(int buf, size_t count, int k, int j);
/* the chain root -> root + 1 -> ... (mod p) in pipeline_segments(a) segments: the rank v places
 * after root sends segment t - v of send_buf to the next and receives segment t - v + 1 into
 * recv_buf from the one before in round t, then combines the received segment j (none when
 * dst < 0): dst[j] <- src[j] (+) dst[j] */
int pipeline_chain(sched_t *s, const sched_args_t *a, int root, int send_buf, int recv_buf, int src,
                   int dst);
/* bcast down that chain (bcast_pipeline.c): param = k segments, 0 = chosen from the vector */
int bcast_pipeline_build(sched_t *s, const sched_args_t *a);
/* the pipelined in-order binary tree (scan_tree.c): param = k segments, 0 = from the vector */
int exscan_tree_build(sched_t *s, const sched_args_t *a);
int scan_tree_build(sched_t *s, const sched_args_t *a);
/* the k' segments a tree schedule of these arguments has */
int tree_segments(const sched_args_t *a);
/* rank r's place in the tree of p ranks; offsets in supersteps of 3 rounds (-1: none) */
typedef struct {
    int parent, left, right; /* ranks, -1: none */
    int colour, lcol, rcol;  /* of the edges to the parent (root: 2) and to the children */
    int height, hl, hr;      /* of r's subtree and of its children's (-1: none) */
    int spine;               /* r's range starts at rank 0: no prefix comes from above */
    int delta, dl, dr;       /* offsets of the prefix to r and to its children (-1: none) */
} scan_tree_node_t;
void scan_tree_node(int p, int r, scan_tree_node_t *t);
/* a bound on every prefix offset of the tree of p ranks: 2 floor(log2 p) + 1 */
int scan_tree_max_offset(int p);
/* the most segments whose rounds fit the tag's round field */
int scan_tree_max_segments(int p);
/* the tree's exact figures for p ranks and k' segments (segment units: a message is one, a
 * whole-vector (+) or copy k'), without building a schedule: ranks alike for every figure are
 * counted together, O(log^2 p) kinds. 0, or -1 on no memory */
typedef struct {
    unsigned rounds;
    uint64_t volume;     /* rounds with a message (each message is one segment) */
    uint64_t cpu_volume; /* sum over rounds of the most segments one rank sends and receives */
    uint64_t ops;        /* (+) of the busiest rank */
    uint64_t copies;     /* copies of the busiest rank */
    unsigned msgs;       /* the most messages of one round */
} scan_tree_figures_t;
int scan_tree_figures(int p, int k, int inclusive, scan_tree_figures_t *f);
/* a bound on the (+) segments on the tree's longest chain: a rank combines at most 4 segments
 * per superstep, over k - 1 + D supersteps (D = scan_tree_max_offset) */
unsigned scan_tree_path_bound(int p, int k);
int reduce_binomial_build(sched_t *s, const sched_args_t *a);
int allreduce_recursive_doubling_build(sched_t *s, const sched_args_t *a);
int reduce_rhrd_build(sched_t *s, const sched_args_t *a);
int allreduce_rhrd_build(sched_t *s, const sched_args_t *a);
int reduce_rhrd_classic_build(sched_t *s, const sched_args_t *a);
int allreduce_rhrd_classic_build(sched_t *s, const sched_args_t *a);
int bcast_binomial_build(sched_t *s, const sched_args_t *a);
int barrier_dissemination_build(sched_t *s, const sched_args_t *a);
/* the v forms take NULL count arrays as "every block `count` elements, packed" */
int allgather_ring_build(sched_t *s, const sched_args_t *a);
int allgather_recursive_doubling_build(sched_t *s, const sched_args_t *a); /* p = 2^k */
int allgather_bruck_build(sched_t *s, const sched_args_t *a);
int allgatherv_ring_build(sched_t *s, const sched_args_t *a);
int allgatherv_bruck_build(sched_t *s, const sched_args_t *a);
int reduce_scatter_block_ring_build(sched_t *s, const sched_args_t *a);
int reduce_scatter_block_recursive_halving_build(sched_t *s, const sched_args_t *a); /* 2^k */
int reduce_scatter_block_bruck_build(sched_t *s, const sched_args_t *a);
int reduce_scatter_ring_build(sched_t *s, const sched_args_t *a);
int reduce_scatter_recursive_halving_build(sched_t *s, const sched_args_t *a); /* p = 2^k */
int reduce_scatter_bruck_build(sched_t *s, const sched_args_t *a);
int allreduce_rs_ag_build(sched_t *s, const sched_args_t *a);
int allreduce_ring_build(sched_t *s, const sched_args_t *a);
int bcast_scatter_allgather_build(sched_t *s, const sched_args_t *a);
int alltoall_pairwise_build(sched_t *s, const sched_args_t *a);
int alltoall_bruck_build(sched_t *s, const sched_args_t *a);
int alltoallv_pairwise_build(sched_t *s, const sched_args_t *a);
int gather_binomial_build(sched_t *s, const sched_args_t *a);
int scatter_binomial_build(sched_t *s, const sched_args_t *a);
int gather_linear_build(sched_t *s, const sched_args_t *a);
int scatter_linear_build(sched_t *s, const sched_args_t *a);
int gatherv_linear_build(sched_t *s, const sched_args_t *a);
int scatterv_linear_build(sched_t *s, const sched_args_t *a);

/* the node-aware forms (hier_*.c): args->hosts and args->leaders_build set */
int hier_exscan_build(sched_t *s, const sched_args_t *a);
int hier_scan_build(sched_t *s, const sched_args_t *a);
int hier_reduce_build(sched_t *s, const sched_args_t *a);
int hier_allreduce_build(sched_t *s, const sched_args_t *a);
int hier_bcast_build(sched_t *s, const sched_args_t *a);
int hier_barrier_build(sched_t *s, const sched_args_t *a);
int hier_allgather_build(sched_t *s, const sched_args_t *a);

/* q' of best-doubling for p processes */
int exscan_best_doubling_qprime(int p);

#endif
