/*
 * The cost model `auto` uses to choose an algorithm, for every collective (exscan below; the
 * block collectives and reduce, allreduce, bcast, scan, barrier further down). For exscan:
 *   time = rounds * (alpha + m * beta) + path_ops * m * gamma
 * with m the vector's bytes, rounds and path_ops from each candidate's closed form
 * (exscan_figures.c, checked against the schedules by the unit tests), alpha (us per round),
 * beta (ns per byte) and gamma (ns per byte of one (+)) measured or stated. Selection is a pure
 * function of its inputs (cost_select): it builds no schedule and talks to no process.
 * path_ops is the number of (+) on the critical path: the longest chain of (+) applications
 * that depend on each other through messages. For the round-optimal algorithms it is close to
 * max_ops (the most (+) of any one process); for `linear` it is p - 2, not 1, because each
 * rank's (+) waits for its predecessor's.
 */
#ifndef UCOLL_COST_H
#define UCOLL_COST_H

#include "alg.h"

typedef struct {
    double alpha_us; /* latency per round */
    double beta_ns;  /* per byte moved in a round */
    double gamma_ns; /* per byte of one (+) application */
    /* a second path for messages of more than small_max bytes (on one host: UCX above the
     * rings' largest message); small_max 0: alpha and beta price every message */
    size_t small_max;
    double big_alpha_us, big_beta_ns;
    /* > 0 when the ranks share fewer CPUs than there are ranks on the host: a round of more
     * than crowd_cpus messages runs msgs / crowd_cpus times slower (vector collectives,
     * cost_vector_predict_us); 0: every rank has a CPU */
    unsigned crowd_cpus;
    /* 1 when every message is copied by the CPUs of both its ends (every rank on one host, no
     * single copy): a round in which a process sends and receives costs it both copies, so
     * the bandwidth term takes cpu_volume instead of volume (vector collectives) */
    int duplex_copies;
    /* single copy on one host (sc_beta_ns > 0: measured at init): a message of sc_min..sc_max
     * bytes (sc_max 0: no bound) of an algorithm that sends its input (ALG_SENDS_INPUT), or of
     * every algorithm when sc_every (a stated UCOLL_SINGLE_COPY_MIN), is read by its receiver
     * alone, priced sc_alpha_us + bytes * sc_beta_ns and copied by one CPU only. sends_input:
     * the algorithm being priced is one of those (set by the caller on its copy of the
     * parameters) */
    size_t sc_min, sc_max;
    double sc_alpha_us, sc_beta_ns;
    int sc_every;
    int sends_input;
    /* 1 when single copy reads from regions (UCOLL_SINGLE_COPY_MIN=regions: the program's
     * buffers come from ucoll_mem_alloc): a receive the next (+) reads in place is lent, no
     * copy, so a single-copy message's bandwidth term counts the figures' copied_path, not
     * their rounds (cost_predict_us) */
    int sc_lends;
} cost_params_t;

/* one path for every message, every rank with a CPU of its own */
#define COST_PARAMS(alpha, beta, gamma)                                                            \
    ((cost_params_t){.alpha_us = (alpha), .beta_ns = (beta), .gamma_ns = (gamma)})

/* raises the large-message paths' alpha (UCX's where small_max > 0, single copy's where
 * measured) to the rings' alpha where it is below: a large message waits as long as a small
 * one for its ranks to run, and its path's alpha, an intercept fitted to large sizes, may
 * come out below that */
void cost_floor_alphas(cost_params_t *c);

/* 1 if a message of msg_bytes of the algorithm c prices goes by single copy */
static inline int cost_single_copy(const cost_params_t *c, double msg_bytes)
{
    return (c->sends_input || c->sc_every) && c->sc_beta_ns > 0 && msg_bytes >= (double)c->sc_min &&
           (c->sc_max == 0 || msg_bytes <= (double)c->sc_max);
}

/* alpha and beta of the path a message of msg_bytes takes */
static inline void cost_path(const cost_params_t *c, double msg_bytes, double *alpha_us,
                             double *beta_ns)
{
    if (cost_single_copy(c, msg_bytes)) {
        *alpha_us = c->sc_alpha_us;
        *beta_ns = c->sc_beta_ns;
        return;
    }
    const int big = c->small_max > 0 && msg_bytes > (double)c->small_max;
    *alpha_us = big ? c->big_alpha_us : c->alpha_us;
    *beta_ns = big ? c->big_beta_ns : c->beta_ns;
}

typedef struct {
    unsigned rounds;   /* 1 + highest round index of any process */
    unsigned max_ops;  /* largest number of REDUCE steps of any process */
    unsigned path_ops; /* REDUCE steps on the longest dependency chain */
    /* every message and REDUCE step is 1/segments of the vector (pipeline: its k; 0 or 1: the
     * whole vector, as for every other exscan algorithm) */
    unsigned segments;
    /* receives on the longest dependency chain of receives whose message its receiver copies,
     * not lent (sched_receive_lendable): under single copy from regions a lent message costs
     * no copy, and this replaces rounds in the bandwidth term (cost_predict_us) */
    unsigned copied_path;
} sched_figures_t;

/* the most rounds a schedule may have: the executor's tag has a round field of 8 bits (tag.h
 * asserts the two agree); auto never names an algorithm beyond it */
#define COST_MAX_ROUNDS 255u

/* what ucoll_sched assumes when neither the environment nor --predict says otherwise */
#define COST_DEFAULT_ALPHA_US 1.0
#define COST_DEFAULT_BETA_NS 0.1
#define COST_DEFAULT_GAMMA_NS 0.1

/* builds every rank's schedule and counts rounds and (+) steps, following messages round by
 * round for path_ops; -1 if a build fails or memory runs out. The v forms get equal blocks of
 * `count` elements. O(p log p) time and memory: for tools and tests, never for selection */
int sched_figures(const alg_desc_t *alg, int param, int p, size_t count, size_t elem_size, int root,
                  int commutative, sched_figures_t *fig);
/* schedules sched_figures has built in this process (tests: selection builds none) */
unsigned long sched_figures_builds(void);

/* the figures of an exscan candidate (any exscan algorithm of the registry, doubling:Q with its
 * param) for p processes, from closed forms in O(log p); -1 for an algorithm without one */
int cost_exscan_figures(const alg_desc_t *alg, int param, int p, sched_figures_t *fig);

/* at least the rounds of every rank's schedule of alg for p processes, the same on every rank
 * (the executor refuses, on all ranks alike, a schedule beyond the tag's round field): exact
 * for the exscan candidates and the block algorithms; for reduce, allreduce, bcast, scan and
 * barrier the closed form's rounds for large vectors with a root that costs a round (binomial
 * reduce), the most any vector or root gives */
unsigned cost_rounds_bound(const alg_desc_t *alg, int param, int p);

/* 1 when the executor can run alg for p processes: its rounds fit the tag's round field, or its
 * messages between any two ranks fall in one round (ALG_ONE_ROUND_PER_PAIR), so that a wrapped
 * round field still tells every message of one sender apart; the same on every rank */
int cost_fits_tag(const alg_desc_t *alg, int param, int p);

/* v[0..n-1] in ascending order, in place (an insertion sort: the measurements sort a few
 * times each); n <= 0 leaves v alone */
void cost_sort(double *v, int n);

/* the most points cost_fit_line takes */
#define COST_FIT_MAX_POINTS 8

/* the line y = intercept + slope * x through n points (2 <= n <= COST_FIT_MAX_POINTS, distinct
 * x) by repeated medians: slope = the median over i of the median of the slopes from point i
 * to the others, intercept = the median of y_i - slope * x_i (a median of an even count is
 * the mean of its middle two). One point far off the line, of four or more, moves neither: a
 * time stretched by a descheduled rank does not tilt the line as a fit through two points
 * would (two of five can). 0; -1 with the outputs untouched for bad n or equal x. */
int cost_fit_line(const double *x, const double *y, int n, double *intercept, double *slope);

/* alpha and beta of a path from times y (us) of sizes x (bytes, increasing, the first small,
 * 1 <= n <= COST_FIT_MAX_POINTS): cost_fit_line's intercept and slope, but never a rounds'
 * cost of 0 or less: an intercept <= 0 takes y[0], and a falling line (beta < 0) beta 0 and
 * alpha the median of y; one point: y[0] and 0. 0; -1 with the outputs untouched for bad n
 * or equal x. */
int cost_fit_path(const double *x, const double *y, int n, double *alpha, double *beta);

/* alpha and beta of a large messages' path (64 KiB and up, where bytes dominate) from times y
 * (us) of sizes x (bytes, increasing, 2 <= n <= COST_FIT_MAX_POINTS): cost_fit_line's line
 * where its bytes make at least a quarter of the largest size's time (slope * x[n-1] >=
 * y[n-1] / 4); else (the smaller sizes' chains stretched, the line flat or falling) beta is
 * the largest size's time per byte, y[n-1] / x[n-1], and alpha 0: that size then costs what
 * it measured, with no fixed cost taken from the stretched ones. So beta > 0 whenever
 * y[n-1] > 0. 0; -1 with the outputs untouched for bad n or equal x. */
int cost_fit_large_path(const double *x, const double *y, int n, double *alpha, double *beta);

/* alpha (us) and beta (ns/B) of ranks on several hosts from one round's time of a small
 * message, small_us, and of a large one of big_bytes > 0, big_us: alpha small_us and beta
 * (big_us - small_us) / big_bytes; where that is not above 0 (the small times stretched),
 * beta is big_us / big_bytes and alpha the smaller of the two times, never 0: no other path
 * floors it there. */
void cost_two_sizes(double small_us, double big_us, double big_bytes, double *alpha_us,
                    double *beta_ns);

/* rounds * (alpha + m/segments * beta) + path_ops * m/segments * gamma, m = bytes */
double cost_predict_us(const sched_figures_t *fig, double bytes, const cost_params_t *cost);

/* the segments k of a `pipeline` (exscan, scan) for p processes and count elements of elem_size
 * bytes: the integer next to k* = sqrt((p - 2) beta m / alpha) with the smaller
 * (p + k - 2)(alpha + beta m / k), ties to the smaller; at least 1, at most count and
 * COST_MAX_ROUNDS + 2 - p (so that its p + k - 2 rounds fit the tag's round field); 1 for
 * p <= 2 (no middle rank to overlap with), count <= 1 or alpha = beta = 0. The same on every
 * rank given the same inputs. */
int cost_pipeline_k(int p, size_t count, size_t elem_size, double alpha_us, double beta_ns);
/* cost_pipeline_k with the path its segments take: the big path's k, unless its segments
 * are small messages (then the small path's) */
int cost_pipeline_k_paths(int p, size_t count, size_t elem_size, const cost_params_t *cost);
/* the largest k cost_pipeline_k gives for p processes, any vector */
int cost_pipeline_k_max(int p);
/* the segments k of a `tree` (exscan, scan): as cost_pipeline_k with the tree's fill of D - 1
 * supersteps (D = scan_tree_max_offset(p)) instead of p - 2 rounds, at most
 * scan_tree_max_segments(p) */
int cost_tree_k(int p, size_t count, size_t elem_size, double alpha_us, double beta_ns);
/* cost_tree_k with the path its segments take (as cost_pipeline_k_paths) */
int cost_tree_k_paths(int p, size_t count, size_t elem_size, const cost_params_t *cost);

/* the exscan algorithms of fixed figures auto chooses among, in order of preference for ties
 * (cost_auto_exscan_elems then weighs `pipeline` with its k for the vector against the best) */
const char *const *cost_exscan_candidates(size_t *n);

/* the cheapest exscan candidate for p processes and m bytes, given each candidate's figures
 * (figs[i] for cost_exscan_candidates()[i]); returns its index */
size_t cost_pick(const sched_figures_t *figs, size_t n, double bytes, const cost_params_t *cost);

/* the threshold rule: the algorithm's name for a vector of `bytes` (rhrd for commutative
 * reduce/allreduce from the given thresholds; scan doubling, bcast binomial, barrier
 * dissemination). cost_select uses it for reduce / allreduce when their threshold is set */
const char *cost_auto_fixed(ucoll_coll_t coll, size_t bytes, int commutative,
                            size_t reduce_rhrd_min, size_t allreduce_rhrd_min);

/* the exscan algorithm auto picks for p processes and m bytes (closed-form figures); fig, if not
 * NULL, gets the chosen one's */
const char *cost_auto_exscan(int p, double bytes, const cost_params_t *cost, sched_figures_t *fig);
/* the same for count elements of elem_size bytes: the fixed candidates and `pipeline` with the
 * k of cost_pipeline_k for this vector (the library resolves plain `pipeline` to that k) */
const char *cost_auto_exscan_elems(int p, size_t count, size_t elem_size, const cost_params_t *cost,
                                   sched_figures_t *fig);

/* the parameter alg runs with: for an ALG_PARAM_OPTIONAL algorithm (pipeline) given param 0,
 * the k of cost_pipeline_k with cost's alpha and beta; param otherwise */
int cost_resolve_param(const alg_desc_t *alg, int param, int p, size_t count, size_t elem_size,
                       const cost_params_t *cost);

/*
 * The block collectives (allgather ... scatterv): figures in blocks (algorithms.md 4), a block
 * being the c elements of one rank's contribution, one destination's part or one result part;
 * the v forms' figures are those of equal blocks. For one block of B bytes,
 *   time = rounds * alpha + volume * B * beta + ops * B * gamma.
 */
typedef struct {
    unsigned rounds; /* 1 + highest round index of any process */
    uint64_t volume; /* sum over rounds of the largest message of the round, in blocks */
    uint64_t ops;    /* blocks combined by (+) on the busiest process */
} block_figures_t;

/* 1 for the block collectives */
int cost_has_blocks(ucoll_coll_t coll);
/* 1 for the collectives that apply an op (commutativity matters to them); inline: selection
 * asks it on every blocking call */
static inline int cost_reduces(ucoll_coll_t coll)
{
    return coll == UCOLL_COLL_EXSCAN || coll == UCOLL_COLL_SCAN || coll == UCOLL_COLL_REDUCE ||
           coll == UCOLL_COLL_ALLREDUCE || coll == UCOLL_COLL_REDUCE_SCATTER_BLOCK ||
           coll == UCOLL_COLL_REDUCE_SCATTER;
}

/* the closed-form figures of a block algorithm for p processes: 0; 1 when it does not serve p
 * (its builder refuses, e.g. recursive-doubling for p != 2^k); -1 for an algorithm without one */
int cost_block_figures(const alg_desc_t *alg, int p, block_figures_t *f);

double cost_block_predict_us(const block_figures_t *f, double block_bytes,
                             const cost_params_t *cost);

/*
 * reduce, allreduce, bcast, scan, barrier (cost_vector.c): figures as fractions of the vector
 * of m elements, exact when den divides m (every piece the schedule cuts is then m/den), and
 *   time = (rounds * alpha + volume_bytes * beta + (path_bytes + copy_bytes) * gamma) * crowd
 * (volume_bytes from cpu_volume instead of volume when cost->duplex_copies)
 * with volume_bytes, path_bytes and copy_bytes the fractions below of the vector's bytes
 * (pieces rounded up, see cost_vector_predict_us); a copy is priced as one (+) (it reads and
 * writes as much); crowd = max(1, msgs / crowd_cpus) when the host's CPUs are fewer than its
 * ranks (each message is copied in and out by the CPUs of its two ranks), else 1. path is the
 * busiest process's (+) (ops) except for the linear and recursive-doubling scans, whose chains are
 * longer.
 */
typedef struct {
    unsigned rounds; /* 1 + highest round index of any process */
    uint64_t den;    /* the unit: 1/den of the vector */
    uint64_t volume; /* sum over rounds of the largest message of the round, in units */
    /* sum over rounds of the most bytes one process sends and receives in the round, in units:
     * what the busiest CPU copies when both ends of every message copy it (one host) */
    uint64_t cpu_volume;
    uint64_t ops;    /* elements combined by (+) on the busiest process, in units */
    uint64_t path;   /* elements combined on the critical path (a chain of (+)), in units */
    uint64_t copies; /* elements the busiest process copies locally (COPY steps), in units */
    unsigned msgs;   /* the most messages of one round */
} vector_figures_t;

/* 1 for reduce, allreduce, bcast, scan, barrier */
int cost_has_vector(ucoll_coll_t coll);

/* the closed-form figures of alg's schedules for p processes, `count` elements (which only
 * decides the rhrd forms' fallback to binomial / recursive-doubling below count < N), the root
 * and the op's commutativity (they matter to binomial reduce and ring allreduce): 0; -1 for an
 * algorithm without one. O(log p), no schedule built */
int cost_vector_figures(const alg_desc_t *alg, int p, size_t count, int root, int commutative,
                        vector_figures_t *f);
/* the same with the parameter the schedule is built with: the pipeline scan's k (param 0: the
 * builder's own k for count elements of one byte, cost_pipeline_k with the defaults; the
 * figures are exact when k' = min(k, count) divides count); cost_vector_figures passes
 * alg->param */
int cost_vector_figures_param(const alg_desc_t *alg, int param, int p, size_t count, int root,
                              int commutative, vector_figures_t *f);

/* the model's time for count elements of elem_size bytes, each unit taken as ceil(count/den)
 * elements */
double cost_vector_predict_us(const vector_figures_t *f, size_t count, size_t elem_size,
                              const cost_params_t *cost);

/* the algorithms auto chooses among for one of these collectives, in order of preference for
 * ties (the small-vector one first); NULL and *n = 0 for another collective */
const char *const *cost_vector_candidates(ucoll_coll_t coll, size_t *n);

/* the cheapest candidate that serves p and the op (order-preserving for a non-commutative one)
 * within COST_MAX_ROUNDS, by cost_vector_predict_us; ties to the earlier */
const char *cost_auto_vector(ucoll_coll_t coll, int p, size_t count, size_t elem_size,
                             int commutative, const cost_params_t *cost);
/* the same without the segmented candidates (ALG_PARAM_OPTIONAL: pipeline), for a phase that
 * runs its algorithm without a parameter (the node-aware forms' local bcast) */
const char *cost_auto_vector_whole(ucoll_coll_t coll, int p, size_t count, size_t elem_size,
                                   int commutative, const cost_params_t *cost);

/* auto's choice for one call, the same on every rank given the same inputs: the algorithm's
 * name for coll on p processes, a vector of `bytes` (block collectives: one block's bytes; for
 * the v forms the caller's measure of a block, e.g. the largest), an op that is (not)
 * commutative, the cost parameters (gamma: of this op and dtype) and the reduce/allreduce rhrd
 * thresholds. Block collectives: the registered algorithms that serve p (and a
 * non-commutative op, where there is one) by block_figures' time, ties to the registry's
 * order; NULL when the collective has no algorithm. reduce, allreduce, bcast, scan, barrier:
 * cost_auto_vector, except that a non-zero reduce_rhrd_min (allreduce_rhrd_min) forces the
 * threshold rule of cost_auto_fixed on reduce (allreduce): the override of
 * UCOLL_REDUCE_RHRD_MIN / UCOLL_ALLREDUCE_RHRD_MIN; 0 lets the model decide. cost_select takes
 * elements of one byte, cost_select_elems count elements of elem_size bytes. */
const char *cost_select(ucoll_coll_t coll, int p, size_t bytes, int commutative,
                        const cost_params_t *cost, size_t reduce_rhrd_min,
                        size_t allreduce_rhrd_min);
const char *cost_select_elems(ucoll_coll_t coll, int p, size_t count, size_t elem_size,
                              int commutative, const cost_params_t *cost, size_t reduce_rhrd_min,
                              size_t allreduce_rhrd_min);

/* node-aware forms (cost_hier.c). cost_node_aware_serves: 1 when coll has one and the layout
 * gets it from auto: more than one host, more than one rank on some host, and consecutive
 * ranks per host for exscan, scan and a non-commutative reduce or allreduce.
 * cost_node_aware_plan: what its phases run, by the model of a flat call on as many ranks:
 * the leaders, among the H->nhosts of them, the algorithm cost_select_elems picks (scan:
 * exscan of the totals; allgather: allgatherv, ring where the model takes ring, else bruck);
 * the local reduce and bcast (of allreduce, reduce, bcast, exscan, scan, allgather's whole
 * result) the reduce and bcast it picks for the largest host. -1 when no leaders' algorithm
 * serves or the whole schedule could exceed the tag's rounds. Both the same on every rank. */
typedef struct {
    const alg_desc_t *leaders;
    int leaders_param;
    const alg_desc_t *local_reduce, *local_bcast; /* NULL: binomial */
} node_aware_plan_t;
int cost_node_aware_serves(ucoll_coll_t coll, const sched_hosts_t *H, int commutative);
int cost_node_aware_plan(ucoll_coll_t coll, const sched_hosts_t *H, size_t count, size_t elem_size,
                         int commutative, const cost_params_t *cost, size_t reduce_rhrd_min,
                         size_t allreduce_rhrd_min, node_aware_plan_t *plan);
/* the most rounds a schedule of plan on H can have (every phase's cost_rounds_bound; the
 * executor relies on it instead of cost_fits_tag) */
unsigned cost_node_aware_bound(const node_aware_plan_t *plan, const sched_hosts_t *H);
/* the plan into a's node-aware fields (hosts H) */
void cost_plan_args(const node_aware_plan_t *plan, const sched_hosts_t *H, sched_args_t *a);

#endif
