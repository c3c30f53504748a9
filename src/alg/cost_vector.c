/*
 * Closed forms of the figures of reduce, allreduce, bcast, scan and barrier (cost.h,
 * vector_figures_t), in O(log p) arithmetic, no schedule built, and auto's choice among them.
 * tests/unit/check_cost_vector.c holds every formula to the symbolic executor's count of the
 * schedules for every p <= 256 (rounds for more p). m = the vector's elements; q = ceil(log2 p),
 * f = floor(log2 p), N = 2^f. Volume = sum over rounds of the largest message any process
 * sends or receives; (+) = elements combined by the busiest process. Every algorithm has 0
 * rounds, no volume and no (+) at p = 1; below p >= 2.
 *
 *   reduce binomial        q rounds, q m, (+) q m (the root receives every round); for a
 *                          non-commutative op and root != 0 one more round and m (rank 0
 *                          forwards the ordered result)
 *   reduce rhrd            p = N: 2f rounds, 2 (N-1)/N m, (+) (N-1)/N m;
 *                          p != N: 2f + 1 rounds, (5N - 4)/(2N) m = (1/2 + 2(N-1)/N) m,
 *                          (+) (3N - 2)/(2N) m = (1/2 + (N-1)/N) m (4i of S0: both halves'
 *                          rounds, then the core's halving)
 *   reduce rhrd-classic    p = N: as rhrd; p != N: 2f + 2 rounds, (3N - 2)/N m, (+) as rhrd
 *                          (the odd partner's reduced half is received, not combined)
 *   allreduce recursive-doubling
 *                          f + 2[p != N] rounds of m each, (+) (f + [p != N]) m
 *   allreduce rhrd         p = N: as reduce; p != N: 2f + 2 rounds, (3N - 2)/N m, (+) as reduce
 *   allreduce rhrd-classic p = N: as rhrd; p != N: 2f + 3 rounds, (4N - 2)/N m, (+) as reduce
 *   allreduce rs-ag        2q rounds, 2 (p-1)/p m, (+) (p-1)/p m
 *   allreduce ring         2 (p-1) rounds, 2 (p-1)/p m, (+) (p-1)/p m; non-commutative
 *                          (two-part messages): (3p - 4)/p m, (+) m (p >= 3; 1/2 m at p = 2)
 *   bcast binomial         q rounds, q m;  scatter-allgather 2q rounds, 2 (p-1)/p m
 *   bcast pipeline:K       as scan pipeline:K without (+): p + k' - 2 rounds of one segment
 *   scan linear            p - 1 rounds, (p - 1) m, (+) m
 *   scan doubling          q rounds, q m, (+) q m (rank p - 1 receives every round)
 *   scan recursive-doubling
 *                          q rounds, q m, (+) (2f - 1) m (rank 2^f - 1: every partner lower
 *                          and a block partial to extend in all its rounds but the last)
 *   scan pipeline:K        k' = min(K, max(count, 1)) segments: p + k' - 2 rounds, den k',
 *                          volume p + k' - 2 segments, (+) k' segments = m (ranks 1..p-1),
 *                          path p + k' - 2 segments (segment j's (+) on rank r waits for
 *                          segment j's on r - 1 and segment j - 1's on r); exact when k'
 *                          divides m (otherwise the first segments are one element longer and
 *                          the volume is (p - 2) ceil(m/k') + m). Plain `pipeline` takes the
 *                          builder's own k for count elements of one byte (cost_pipeline_k
 *                          with the default alpha and beta); auto prices it with the k of its
 *                          own alpha and beta, the k the library then runs it with.
 *   barrier dissemination  q rounds of empty messages
 * The model's gamma term takes the (+) on the critical path (the longest chain of (+) that wait
 * for each other through messages), as exscan's does. It is the busiest process's (+) but for
 * two scans: linear, (p - 1) m (each rank's one (+) waits for its predecessor's), and
 * recursive-doubling, (2f - 1 + [2p >= 3N]) m (a partial block above N lengthens the chain by
 * one once it holds half of N ranks). For the whole-vector algorithms the unit test checks
 * the path against the schedules (sched_figures); for those on pieces (rhrd, rs-ag, ring) it
 * is taken as the busiest process's: its (+) are one chain (each combines a received piece
 * before it sends the next), and in every round it combines as much as any process (the core
 * steps and the ring and Bruck rounds are the same size on every process, and rhrd's first
 * two rounds combine half vectors), so no chain through messages is longer.
 * Copies (COPY steps of the busiest process) and the most messages of one round, for the
 * crowded-host factor, are in algorithms.md's table; the unit test holds them to the schedules
 * too (p >= 2).
 * These agree with algorithms.md 2 and 4.3 / 4.6. The rhrd forms fall back to binomial /
 * recursive-doubling for m < N (their builders do), and so do their figures here.
 */
#include "cost.h"

#include <string.h>

static unsigned floor_log2(uint64_t n)
{
    unsigned k = 0;
    while (n >>= 1)
        k++;
    return k;
}

int cost_has_vector(ucoll_coll_t coll)
{
    return coll == UCOLL_COLL_SCAN || coll == UCOLL_COLL_REDUCE || coll == UCOLL_COLL_ALLREDUCE ||
           coll == UCOLL_COLL_BCAST || coll == UCOLL_COLL_BARRIER;
}

static void set(vector_figures_t *f, unsigned rounds, uint64_t den, uint64_t volume, uint64_t ops)
{
    f->rounds = rounds;
    f->den = den;
    f->volume = volume;
    f->ops = ops;
    f->path = ops;
    f->cpu_volume = volume; /* no process sends and receives in one round */
    f->copies = 0;
    f->msgs = 0;
}

/* copies (in units) and the most messages of one round */
static void set_local(vector_figures_t *f, uint64_t copies, uint64_t msgs)
{
    f->copies = copies;
    f->msgs = (unsigned)msgs;
}

int cost_vector_figures(const alg_desc_t *alg, int p, size_t count, int root, int commutative,
                        vector_figures_t *f)
{
    return cost_vector_figures_param(alg, alg != NULL ? alg->param : 0, p, count, root, commutative,
                                     f);
}

int cost_vector_figures_param(const alg_desc_t *alg, int param, int p, size_t count, int root,
                              int commutative, vector_figures_t *f)
{
    set(f, 0, 1, 0, 0);
    if (alg == NULL || p < 1 || !cost_has_vector(alg->coll))
        return -1;
    sched_build_fn_t b = alg->build;
    const unsigned q = sched_ceil_log2((uint64_t)p), lf = floor_log2((uint64_t)p);
    const uint64_t P = (uint64_t)p, N = UINT64_C(1) << lf;
    const int folded = P != N; /* p is not a power of two */
    /* the rhrd builders' own fallback for small vectors */
    const int rhrd_small = p <= 1 || count < N;
    if ((b == reduce_rhrd_build || b == reduce_rhrd_classic_build) && rhrd_small)
        b = reduce_binomial_build;
    if ((b == allreduce_rhrd_build || b == allreduce_rhrd_classic_build) && rhrd_small)
        b = allreduce_recursive_doubling_build;
    if (b != reduce_binomial_build && b != reduce_rhrd_build && b != reduce_rhrd_classic_build &&
        b != allreduce_recursive_doubling_build && b != allreduce_rhrd_build &&
        b != allreduce_rhrd_classic_build && b != allreduce_rs_ag_build &&
        b != allreduce_ring_build && b != bcast_binomial_build &&
        b != bcast_scatter_allgather_build && b != bcast_pipeline_build && b != scan_linear_build &&
        b != scan_doubling_build && b != scan_recursive_doubling_build &&
        b != scan_pipeline_build && b != scan_tree_build && b != barrier_dissemination_build)
        return -1;
    if (p == 1)
        return 0;
    if (b == scan_tree_build) {
        const sched_args_t a = {.size = p, .count = count, .elem_size = 1, .param = param};
        const int k = tree_segments(&a);
        scan_tree_figures_t tf;
        if (scan_tree_figures(p, k, 1, &tf) != 0)
            return -1;
        set(f, tf.rounds, (uint64_t)k, tf.volume, tf.ops);
        f->path = scan_tree_path_bound(p, k) + (uint64_t)k; /* and the closing (+) of V */
        f->cpu_volume = tf.cpu_volume;
        set_local(f, tf.copies, tf.msgs);
        return 0;
    }
    if (b == scan_pipeline_build || b == bcast_pipeline_build) {
        const sched_args_t a = {.size = p, .count = count, .elem_size = 1, .param = param};
        const uint64_t k = (uint64_t)pipeline_segments(&a);
        const int scan = b == scan_pipeline_build;
        set(f, (unsigned)(P + k - 2), k, P + k - 2, scan ? k : 0);
        f->path = scan ? P + k - 2 : 0;
        /* ranks 1..p-2 send segment j while receiving j + 1 in rounds 1..p+k-4 */
        if (P >= 3 && k >= 2)
            f->cpu_volume = 2 * (P + k - 3);
        /* a message per segment in flight; scan's (+) of V is a copy's worth of work */
        set_local(f, scan ? k : 0, k < P - 1 ? k : P - 1);
        return 0;
    }
    /* the most messages of one round: a fold's or a core's widest round max(N, 2 (p - N)),
     * a binomial tree's max(N/2, p - N) (reduce: floor(p/2)), the rings and doubling scans
     * about one per process */
    const uint64_t fold_msgs = N > 2 * (P - N) ? N : 2 * (P - N);
    const uint64_t tree_msgs = N / 2 > P - N ? N / 2 : P - N;
    if (b == reduce_binomial_build) {
        const unsigned forward = !commutative && root != 0;
        set(f, q + forward, 1, q + forward, q);
        /* the accumulator starts as IN: only an ordered root 0 with two or more children copies
         * its last partial to OUT */
        set_local(f, !commutative && root == 0 && P >= 3 ? 1 : 0, P / 2);
    } else if (b == reduce_rhrd_build || b == reduce_rhrd_classic_build ||
               b == allreduce_rhrd_build || b == allreduce_rhrd_classic_build) {
        const int reduce = b == reduce_rhrd_build || b == reduce_rhrd_classic_build;
        const int classic = b == reduce_rhrd_classic_build || b == allreduce_rhrd_classic_build;
        /* cpu_volume: the halving (and allreduce's doubling) rounds are exchanges, counted
         * twice; the gather to the root and the fold-in and fold-out messages once */
        if (!folded) { /* Rabenseifner: halving then doubling (or gather), (N-1)/N m each */
            set(f, 2 * lf, N, 2 * (N - 1), N - 1);
            f->cpu_volume = (reduce ? 3 : 4) * (N - 1);
        } else if (reduce) {
            set(f, 2 * lf + 1 + classic, 2 * N, classic ? 6 * N - 4 : 5 * N - 4, 3 * N - 2);
            f->cpu_volume = classic ? 9 * N - 6 : 8 * N - 6;
        } else {
            set(f, 2 * lf + 2 + classic, 2 * N, classic ? 8 * N - 4 : 6 * N - 4, 3 * N - 2);
            f->cpu_volume = classic ? 13 * N - 8 : 12 * N - 8;
        }
        set_local(f, 0, fold_msgs);
    } else if (b == allreduce_recursive_doubling_build) {
        set(f, lf + 2 * folded, 1, lf + 2 * folded, lf + folded);
        f->cpu_volume = 2 * (lf + folded);    /* butterfly rounds are exchanges */
        set_local(f, commutative ? 0 : 2, N); /* commutative: the accumulator starts as IN */
    } else if (b == allreduce_rs_ag_build) {
        set(f, 2 * q, P, 2 * (P - 1), P - 1);
        f->cpu_volume = 4 * (P - 1);
        set_local(f, 2 * P, P);
    } else if (b == allreduce_ring_build) {
        if (commutative)
            set(f, 2 * (unsigned)(p - 1), P, 2 * (P - 1), P - 1);
        else
            set(f, 2 * (unsigned)(p - 1), P, 3 * P - 4, p == 2 ? 1 : P);
        /* every round: each rank sends and receives a block (ordered: 6p - 9 from p = 3) */
        f->cpu_volume = commutative || p == 2 ? 2 * f->volume : 6 * P - 9;
        set_local(f, commutative ? 0 : 2 * P - 3, P);
    } else if (b == bcast_binomial_build) {
        set(f, q, 1, q, 0);
        set_local(f, 0, tree_msgs);
    } else if (b == bcast_scatter_allgather_build) {
        set(f, 2 * q, P, 2 * (P - 1), 0);
        f->cpu_volume = 3 * (P - 1); /* the allgather's rounds are exchanges */
        set_local(f, P, P);
    } else if (b == scan_linear_build) {
        set(f, (unsigned)(p - 1), 1, P - 1, 1);
        f->path = P - 1;
        set_local(f, 1, 1);
    } else if (b == scan_doubling_build) {
        set(f, q, 1, q, q);
        f->cpu_volume = 2 * q - 1; /* only the last skip (>= p/2) has no rank doing both */
        set_local(f, 1, P - 1);
    } else if (b == scan_recursive_doubling_build) {
        set(f, q, 1, q, 2 * lf - 1);
        f->cpu_volume = 2 * q;
        f->path = 2 * lf - 1 + (2 * P >= 3 * N);
        set_local(f, P >= 4 ? 2 : 1, 2 * (P / 2));
    } else { /* barrier dissemination: empty messages */
        set(f, q, 1, 0, 0);
    }
    return 0;
}

/*
 * The model's time for `count` elements of elem_size bytes. The figures are fractions of the
 * vector, exact when den divides count; otherwise the builders cut the vector into pieces of
 * ceil or floor of count / den, and every message is whole pieces, so the time takes each
 * unit 1/den as ceil(count / den) elements: an upper bound, exact when den divides count. For
 * the small vectors where count < den it counts every piece as one element (the real ones are
 * one element or empty), so that rs-ag on 3 elements is not priced as moving 2 (p-1)/p * 3
 * elements, a small fraction of one each round: tiny vectors keep the fewest rounds.
 */
double cost_vector_predict_us(const vector_figures_t *f, size_t count, size_t elem_size,
                              const cost_params_t *cost)
{
    const double unit = (double)((count + f->den - 1) / f->den) * (double)elem_size;
    /* the path of the rounds' average message */
    double alpha, beta;
    const double msg = f->rounds > 0 ? (double)f->volume * unit / f->rounds : 0;
    cost_path(cost, msg, &alpha, &beta);
    const double crowd = cost->crowd_cpus > 0 && f->msgs > cost->crowd_cpus
                             ? (double)f->msgs / cost->crowd_cpus
                             : 1.0;
    /* by single copy only the receiver copies: a process that sends and receives in a round
     * copies its receive alone */
    const uint64_t volume =
        cost->duplex_copies && !cost_single_copy(cost, msg) ? f->cpu_volume : f->volume;
    return crowd * (f->rounds * alpha + (double)volume * unit * beta * 1e-3 +
                    (double)(f->path + f->copies) * unit * cost->gamma_ns * 1e-3);
}

/* auto's candidates per collective, in order of preference for ties: the small-vector
 * algorithm (today's choice for small vectors) first, then the bandwidth-lean ones */
static const char *const reduce_candidates[] = {"binomial", "rhrd", "rhrd-classic"};
static const char *const allreduce_candidates[] = {"recursive-doubling", "rhrd", "rhrd-classic",
                                                   "rs-ag", "ring"};
static const char *const bcast_candidates[] = {"binomial", "scatter-allgather", "pipeline"};
static const char *const scan_candidates[] = {"doubling", "recursive-doubling", "linear",
                                              "pipeline", "tree"};
static const char *const barrier_candidates[] = {"dissemination"};

const char *const *cost_vector_candidates(ucoll_coll_t coll, size_t *n)
{
#define CANDIDATES(a)                                                                              \
    do {                                                                                           \
        *n = sizeof(a) / sizeof(a[0]);                                                             \
        return a;                                                                                  \
    } while (0)
    switch (coll) {
    case UCOLL_COLL_REDUCE:
        CANDIDATES(reduce_candidates);
    case UCOLL_COLL_ALLREDUCE:
        CANDIDATES(allreduce_candidates);
    case UCOLL_COLL_BCAST:
        CANDIDATES(bcast_candidates);
    case UCOLL_COLL_SCAN:
        CANDIDATES(scan_candidates);
    case UCOLL_COLL_BARRIER:
        CANDIDATES(barrier_candidates);
    default:
        *n = 0;
        return NULL;
    }
#undef CANDIDATES
}

static const char *auto_vector(ucoll_coll_t coll, int p, size_t count, size_t elem_size,
                               int commutative, const cost_params_t *cost, int segmented)
{
    size_t n;
    const char *const *names = cost_vector_candidates(coll, &n);
    const char *best = NULL;
    double best_t = 0;
    for (size_t i = 0; i < n; i++) {
        int param = 0;
        const alg_desc_t *alg = alg_lookup(coll, names[i], &param);
        if (alg == NULL)
            continue; /* not reached: check_cost_vector holds the lists to the registry */
        if (!commutative && cost_reduces(coll) && !(alg->flags & ALG_ORDER_PRESERVING))
            continue;
        if ((alg->flags & ALG_POWER_OF_TWO) && (p & (p - 1)) != 0)
            continue;
        if (!segmented && (alg->flags & ALG_PARAM_OPTIONAL))
            continue;
        /* pipeline: with the k the library will run it with for this vector */
        param = cost_resolve_param(alg, param, p, count, elem_size, cost);
        if (!cost_fits_tag(alg, param, p))
            continue; /* the executor would refuse it, on every rank alike */
        vector_figures_t f;
        /* the root does not change the choice: only binomial serves a non-commutative op,
         * where the root costs a round */
        if (cost_vector_figures_param(alg, param, p, count, 0, commutative, &f) != 0)
            continue;
        cost_params_t c = *cost;
        c.sends_input = (alg->flags & ALG_SENDS_INPUT) != 0;
        const double t = cost_vector_predict_us(&f, count, elem_size, &c);
        if (best == NULL || t < best_t * (1 - 1e-12)) { /* strictly cheaper, robust to rounding */
            best = names[i];
            best_t = t;
        }
    }
    return best;
}

const char *cost_auto_vector(ucoll_coll_t coll, int p, size_t count, size_t elem_size,
                             int commutative, const cost_params_t *cost)
{
    return auto_vector(coll, p, count, elem_size, commutative, cost, 1);
}

const char *cost_auto_vector_whole(ucoll_coll_t coll, int p, size_t count, size_t elem_size,
                                   int commutative, const cost_params_t *cost)
{
    return auto_vector(coll, p, count, elem_size, commutative, cost, 0);
}
