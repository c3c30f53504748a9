/* The cost model of `auto` (see cost.h): figures counted from the schedules (for tools and
 * tests), and the choice from closed-form figures. */
#include "cost.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static atomic_ulong figures_builds;

unsigned long sched_figures_builds(void)
{
    return atomic_load(&figures_builds);
}

int sched_figures(const alg_desc_t *alg, int param, int p, size_t count, size_t elem_size, int root,
                  int commutative, sched_figures_t *fig)
{
    sched_t *s = calloc((size_t)p, sizeof(*s));
    size_t *pc = calloc((size_t)p, sizeof(*pc));
    unsigned *ops = calloc((size_t)p, sizeof(*ops));
    unsigned *path = calloc((size_t)p, sizeof(*path)); /* (+) chain ending here so far */
    unsigned *sent = calloc((size_t)p, sizeof(*sent)); /* path value sent this round */
    /* copied receives on the chain ending here so far, and the value sent this round */
    unsigned *cpath = calloc((size_t)p, sizeof(*cpath)), *csent = calloc((size_t)p, sizeof(*csent));
    int rc = -1;

    /* the v forms: every block `count` elements, block i at i * count */
    size_t *eq_counts = calloc((size_t)p, sizeof(size_t)),
           *eq_displs = calloc((size_t)p, sizeof(size_t));

    memset(fig, 0, sizeof(*fig));
    if (s == NULL || pc == NULL || ops == NULL || path == NULL || sent == NULL || cpath == NULL ||
        csent == NULL || eq_counts == NULL || eq_displs == NULL)
        goto out;
    for (int i = 0; i < p; i++) {
        eq_counts[i] = count;
        eq_displs[i] = (size_t)i * count;
    }
    for (int r = 0; r < p; r++) {
        sched_args_t a = {.rank = r,
                          .size = p,
                          .root = root,
                          .count = count,
                          .elem_size = elem_size,
                          .param = param,
                          .commutative = commutative};
        const ucoll_coll_t coll = alg->coll;
        if (coll == UCOLL_COLL_ALLGATHERV || coll == UCOLL_COLL_REDUCE_SCATTER ||
            coll == UCOLL_COLL_ALLTOALLV || (coll == UCOLL_COLL_GATHERV && r == root)) {
            a.recv_counts = eq_counts;
            a.recv_displs = eq_displs;
        }
        if (coll == UCOLL_COLL_ALLTOALLV || (coll == UCOLL_COLL_SCATTERV && r == root)) {
            a.send_counts = eq_counts;
            a.send_displs = eq_displs;
        }
        sched_init(&s[r]);
        atomic_fetch_add(&figures_builds, 1);
        if (alg->build(&s[r], &a) != 0)
            goto out;
        if (s[r].nrounds > fig->rounds)
            fig->rounds = s[r].nrounds;
    }
    for (uint32_t k = 0; k <= fig->rounds; k++) { /* the last pass runs trailing local steps */
        for (int r = 0; r < p; r++) {
            for (; pc[r] < s[r].nsteps; pc[r]++) {
                const sched_step_t *st = &s[r].steps[pc[r]];
                if (st->kind == SCHED_XCHG && st->round >= k)
                    break;
                if (st->kind == SCHED_REDUCE) {
                    ops[r]++;
                    path[r]++;
                }
            }
            if (pc[r] < s[r].nsteps && s[r].steps[pc[r]].round == k) {
                sent[r] = path[r];
                csent[r] = cpath[r];
            }
        }
        for (int r = 0; r < p; r++) {
            if (pc[r] >= s[r].nsteps || s[r].steps[pc[r]].round != k)
                continue;
            const int from = s[r].steps[pc[r]].recv_peer;
            if (from >= 0 && sent[from] > path[r])
                path[r] = sent[from];
            if (from >= 0 && csent[from] > cpath[r])
                cpath[r] = csent[from];
            if (from >= 0 && !sched_receive_lendable(&s[r], pc[r]))
                cpath[r]++;
            pc[r]++;
        }
    }
    if (alg->build == exscan_pipeline_build || alg->build == scan_pipeline_build ||
        alg->build == bcast_pipeline_build) {
        const sched_args_t a = {.size = p, .count = count, .elem_size = elem_size, .param = param};
        fig->segments = (unsigned)pipeline_segments(&a);
    }
    if (alg->build == exscan_tree_build || alg->build == scan_tree_build) {
        const sched_args_t a = {.size = p, .count = count, .elem_size = elem_size, .param = param};
        fig->segments = (unsigned)tree_segments(&a);
    }
    for (int r = 0; r < p; r++) {
        fig->max_ops = ops[r] > fig->max_ops ? ops[r] : fig->max_ops;
        fig->path_ops = path[r] > fig->path_ops ? path[r] : fig->path_ops;
        fig->copied_path = cpath[r] > fig->copied_path ? cpath[r] : fig->copied_path;
    }
    rc = 0;
out:
    if (s != NULL)
        for (int r = 0; r < p; r++)
            sched_destroy(&s[r]);
    free(s);
    free(pc);
    free(ops);
    free(path);
    free(sent);
    free(cpath);
    free(csent);
    free(eq_counts);
    free(eq_displs);
    return rc;
}

void cost_sort(double *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
            const double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
}

/* the median of v[0..n-1], n >= 1, sorting v */
static double median_of(double *v, int n)
{
    cost_sort(v, n);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int cost_fit_line(const double *x, const double *y, int n, double *intercept, double *slope)
{
    if (n < 2 || n > COST_FIT_MAX_POINTS)
        return -1;
    double per_point[COST_FIT_MAX_POINTS], to_others[COST_FIT_MAX_POINTS - 1];
    for (int i = 0; i < n; i++) {
        int k = 0;
        for (int j = 0; j < n; j++) {
            if (j == i)
                continue;
            if (x[j] == x[i])
                return -1;
            to_others[k++] = (y[j] - y[i]) / (x[j] - x[i]);
        }
        per_point[i] = median_of(to_others, k);
    }
    const double b = median_of(per_point, n);
    double residual[COST_FIT_MAX_POINTS];
    for (int i = 0; i < n; i++)
        residual[i] = y[i] - b * x[i];
    *intercept = median_of(residual, n);
    *slope = b;
    return 0;
}

int cost_fit_path(const double *x, const double *y, int n, double *alpha, double *beta)
{
    if (n == 1) {
        *alpha = y[0];
        *beta = 0;
        return 0;
    }
    double a, b;
    if (cost_fit_line(x, y, n, &a, &b) != 0)
        return -1;
    if (b < 0) {
        double t[COST_FIT_MAX_POINTS];
        memcpy(t, y, (size_t)n * sizeof(*t));
        a = median_of(t, n);
        b = 0;
    }
    *alpha = a > 0 ? a : y[0];
    *beta = b;
    return 0;
}

int cost_fit_large_path(const double *x, const double *y, int n, double *alpha, double *beta)
{
    double a, b;
    if (cost_fit_line(x, y, n, &a, &b) != 0)
        return -1;
    const double per_byte = y[n - 1] / x[n - 1];
    if (4 * b < per_byte) { /* the line's bytes under a quarter of the largest size's time */
        b = per_byte;
        a = 0;
    }
    *alpha = a;
    *beta = b;
    return 0;
}

void cost_two_sizes(double small_us, double big_us, double big_bytes, double *alpha_us,
                    double *beta_ns)
{
    const double slope = (big_us - small_us) * 1e3 / big_bytes;
    if (slope > 0) {
        *alpha_us = small_us;
        *beta_ns = slope;
    } else {
        *alpha_us = big_us < small_us ? big_us : small_us;
        *beta_ns = big_us * 1e3 / big_bytes;
    }
}

void cost_floor_alphas(cost_params_t *c)
{
    if (c->small_max > 0 && c->big_alpha_us < c->alpha_us)
        c->big_alpha_us = c->alpha_us;
    if (c->sc_beta_ns > 0 && c->sc_alpha_us < c->alpha_us)
        c->sc_alpha_us = c->alpha_us;
}

double cost_predict_us(const sched_figures_t *fig, double bytes, const cost_params_t *cost)
{
    const double piece = fig->segments > 1 ? bytes / fig->segments : bytes;
    double alpha, beta;
    cost_path(cost, piece, &alpha, &beta);
    /* lent receives (sc_lends) cost their receiver no copy: only the chain of copied ones */
    const unsigned copies =
        cost->sc_lends && cost_single_copy(cost, piece) ? fig->copied_path : fig->rounds;
    return fig->rounds * alpha + copies * piece * beta * 1e-3 +
           fig->path_ops * piece * cost->gamma_ns * 1e-3;
}

int cost_pipeline_k_max(int p)
{
    const int most = (int)COST_MAX_ROUNDS + 2 - p;
    return most > 1 ? most : 1;
}

/* the square root of x >= 0 by Newton's iteration (no libm for the tools that link this) */
static double square_root(double x)
{
    if (!(x > 0))
        return 0;
    double r = x > 1 ? x : 1;
    for (int i = 0; i < 200; i++) {
        const double next = 0.5 * (r + x / r);
        if (next >= r)
            break; /* decreasing from above until it settles */
        r = next;
    }
    return r;
}

/* a pipeline's time without (+): (fill + k)(alpha + beta m / k) */
static double pipelined_us(double fill, double k, double bytes, double alpha_us, double beta_ns)
{
    return (fill + k) * (alpha_us + beta_ns * 1e-3 * bytes / k);
}

/* the integer next to k* = sqrt(fill beta m / alpha) with the smaller (fill + k)(alpha +
 * beta m / k), ties to the smaller, within 1..most */
static int best_segments(double fill, double most, double bytes, double alpha_us, double beta_ns)
{
    double lo = most, hi = most; /* alpha = 0: as many segments as may be */
    if (alpha_us > 0) {
        const double best = square_root(fill * beta_ns * 1e-3 * bytes / alpha_us);
        const double down = best < most ? (double)(uint64_t)best : most;
        lo = down < 1 ? 1 : down;
        hi = lo + 1 > most ? most : lo + 1;
    }
    return pipelined_us(fill, hi, bytes, alpha_us, beta_ns) <
                   pipelined_us(fill, lo, bytes, alpha_us, beta_ns) * (1 - 1e-12)
               ? (int)hi
               : (int)lo;
}

/* k for p ranks and count elements: `most` segments at most (and no more than count), `fill`
 * rounds (or supersteps) before the last segment starts */
static int segments_for(int p, size_t count, size_t elem_size, double alpha_us, double beta_ns,
                        double most, double fill)
{
    if (p <= 2 || count <= 1 || beta_ns <= 0)
        return 1;
    if ((double)count < most)
        most = (double)count;
    return best_segments(fill, most, (double)count * (double)elem_size, alpha_us, beta_ns);
}

int cost_pipeline_k(int p, size_t count, size_t elem_size, double alpha_us, double beta_ns)
{
    return segments_for(p, count, elem_size, alpha_us, beta_ns, cost_pipeline_k_max(p), p - 2);
}

int cost_tree_k(int p, size_t count, size_t elem_size, double alpha_us, double beta_ns)
{
    /* 3 (k - 1 + D) rounds of m/k: the fill is D - 1 supersteps */
    return segments_for(p, count, elem_size, alpha_us, beta_ns, scan_tree_max_segments(p),
                        scan_tree_max_offset(p) - 1);
}

/* k_of's k on the path its segments take: the big path's, unless its segments are small
 * messages (then the small path's) */
static int k_on_paths(int (*k_of)(int, size_t, size_t, double, double), int p, size_t count,
                      size_t elem_size, const cost_params_t *cost)
{
    if (cost->small_max == 0)
        return k_of(p, count, elem_size, cost->alpha_us, cost->beta_ns);
    const int k = k_of(p, count, elem_size, cost->big_alpha_us, cost->big_beta_ns);
    if ((double)count * (double)elem_size / k > (double)cost->small_max)
        return k;
    return k_of(p, count, elem_size, cost->alpha_us, cost->beta_ns);
}

int cost_pipeline_k_paths(int p, size_t count, size_t elem_size, const cost_params_t *cost)
{
    return k_on_paths(cost_pipeline_k, p, count, elem_size, cost);
}

int cost_tree_k_paths(int p, size_t count, size_t elem_size, const cost_params_t *cost)
{
    return k_on_paths(cost_tree_k, p, count, elem_size, cost);
}

int cost_resolve_param(const alg_desc_t *alg, int param, int p, size_t count, size_t elem_size,
                       const cost_params_t *cost)
{
    if (alg == NULL || !(alg->flags & ALG_PARAM_OPTIONAL) || param != 0)
        return param;
    if (alg->build == exscan_tree_build || alg->build == scan_tree_build)
        return cost_tree_k_paths(p, count, elem_size, cost);
    return cost_pipeline_k_paths(p, count, elem_size, cost);
}

/* round-optimal, fewest-(+) algorithms first: they win ties */
static const char *const exscan_candidates[] = {
    "roughly-halving", "best-doubling",      "123-doubling", "1-doubling",
    "two-op-doubling", "recursive-doubling", "linear",
};

const char *const *cost_exscan_candidates(size_t *n)
{
    *n = sizeof(exscan_candidates) / sizeof(exscan_candidates[0]);
    return exscan_candidates;
}

size_t cost_pick(const sched_figures_t *figs, size_t n, double bytes, const cost_params_t *cost)
{
    size_t best = 0;
    double best_t = cost_predict_us(&figs[0], bytes, cost);
    for (size_t i = 1; i < n; i++) {
        double t = cost_predict_us(&figs[i], bytes, cost);
        if (t < best_t * (1 - 1e-12)) { /* strictly cheaper, robust to rounding */
            best = i;
            best_t = t;
        }
    }
    return best;
}

const char *cost_auto_fixed(ucoll_coll_t coll, size_t bytes, int commutative,
                            size_t reduce_rhrd_min, size_t allreduce_rhrd_min)
{
    switch (coll) {
    case UCOLL_COLL_SCAN:
        return "doubling";
    case UCOLL_COLL_REDUCE:
        return commutative && bytes >= reduce_rhrd_min ? "rhrd" : "binomial";
    case UCOLL_COLL_ALLREDUCE:
        return commutative && bytes >= allreduce_rhrd_min ? "rhrd" : "recursive-doubling";
    case UCOLL_COLL_BCAST:
        return "binomial";
    case UCOLL_COLL_BARRIER:
        return "dissemination";
    default:
        return NULL;
    }
}

static const char *auto_exscan_fixed(int p, double bytes, const cost_params_t *cost,
                                     sched_figures_t *fig)
{
    size_t n;
    const char *const *names = cost_exscan_candidates(&n);
    sched_figures_t figs[sizeof(exscan_candidates) / sizeof(exscan_candidates[0])];
    for (size_t i = 0; i < n; i++) {
        int param = 0;
        const alg_desc_t *alg = alg_lookup(UCOLL_COLL_EXSCAN, names[i], &param);
        /* every candidate is in the registry and has a closed form (check_cost) */
        cost_exscan_figures(alg, param, p, &figs[i]);
    }
    const size_t best = cost_pick(figs, n, bytes, cost);
    if (fig != NULL)
        *fig = figs[best];
    return names[best];
}

const char *cost_auto_exscan_elems(int p, size_t count, size_t elem_size,
                                   const cost_params_t *params, sched_figures_t *fig)
{
    const double bytes = (double)count * (double)elem_size;
    /* every exscan algorithm sends its input (registry.c): single copy prices them alike */
    cost_params_t with_input = *params;
    with_input.sends_input = 1;
    const cost_params_t *cost = &with_input;
    sched_figures_t best;
    const char *name = auto_exscan_fixed(p, bytes, cost, &best);
    /* then the pipeline and the tree, each with the k it would run with for this vector
     * (cost_resolve_param): a tie keeps the earlier candidate */
    static const char *const segmented[] = {"pipeline", "tree"};
    for (size_t i = 0; i < sizeof(segmented) / sizeof(segmented[0]); i++) {
        int param = 0;
        const alg_desc_t *alg = alg_lookup(UCOLL_COLL_EXSCAN, segmented[i], &param);
        if (alg == NULL)
            continue;
        const int k = cost_resolve_param(alg, 0, p, count, elem_size, cost);
        sched_figures_t f;
        if (cost_fits_tag(alg, k, p) && cost_exscan_figures(alg, k, p, &f) == 0 &&
            cost_predict_us(&f, bytes, cost) < cost_predict_us(&best, bytes, cost) * (1 - 1e-12)) {
            name = alg->name;
            best = f;
        }
    }
    if (fig != NULL)
        *fig = best;
    return name;
}

const char *cost_auto_exscan(int p, double bytes, const cost_params_t *cost, sched_figures_t *fig)
{
    const size_t count = !(bytes > 0) ? 0 : bytes >= (double)SIZE_MAX ? SIZE_MAX : (size_t)bytes;
    return cost_auto_exscan_elems(p, count, 1, cost, fig);
}

/* ---------------------------------------------------------------- block collectives */

int cost_has_blocks(ucoll_coll_t coll)
{
    return coll >= UCOLL_COLL_ALLGATHER && coll <= UCOLL_COLL_SCATTERV;
}

/* #{ j < p : bit k of j is 1 } */
static uint64_t with_bit(uint64_t p, unsigned k)
{
    const uint64_t period = UINT64_C(2) << k, half = UINT64_C(1) << k;
    const uint64_t rest = p % period;
    return (p / period) * half + (rest > half ? rest - half : 0);
}

int cost_block_figures(const alg_desc_t *alg, int p, block_figures_t *f)
{
    memset(f, 0, sizeof(*f));
    if (alg == NULL || p < 1 || !cost_has_blocks(alg->coll))
        return -1;
    const ucoll_coll_t c = alg->coll;
    const char *n = alg->name;
    const unsigned q = sched_ceil_log2((uint64_t)p);
    const uint64_t pm1 = (uint64_t)p - 1;
    const int pow2 = (p & (p - 1)) == 0;
    const int reduces = c == UCOLL_COLL_REDUCE_SCATTER_BLOCK || c == UCOLL_COLL_REDUCE_SCATTER;
    /* p - 1 rounds of one block: ring, pairwise exchange, the root one peer per round */
    if (strcmp(n, "ring") == 0 || strcmp(n, "pairwise") == 0 || strcmp(n, "linear") == 0) {
        if (strcmp(n, "ring") == 0 && c != UCOLL_COLL_ALLGATHER && c != UCOLL_COLL_ALLGATHERV &&
            !reduces)
            return -1;
        if (strcmp(n, "pairwise") == 0 && c != UCOLL_COLL_ALLTOALL && c != UCOLL_COLL_ALLTOALLV)
            return -1;
        if (strcmp(n, "linear") == 0 && (c < UCOLL_COLL_GATHER || c > UCOLL_COLL_SCATTERV))
            return -1;
        f->rounds = (unsigned)pm1;
        f->volume = pm1;
        f->ops = reduces ? pm1 : 0;
        return 0;
    }
    /* log2 p rounds of 1, 2, 4, ... blocks (halving: ..., 4, 2, 1), p = 2^k only */
    if ((strcmp(n, "recursive-doubling") == 0 && c == UCOLL_COLL_ALLGATHER) ||
        (strcmp(n, "recursive-halving") == 0 && reduces)) {
        if (!pow2)
            return 1;
        f->rounds = q;
        f->volume = pm1;
        f->ops = reduces ? pm1 : 0;
        return 0;
    }
    if (strcmp(n, "bruck") == 0 &&
        (c == UCOLL_COLL_ALLGATHER || c == UCOLL_COLL_ALLGATHERV || reduces)) {
        f->rounds = q;
        f->volume = pm1;
        f->ops = reduces ? pm1 : 0;
        return 0;
    }
    if (strcmp(n, "bruck") == 0 && c == UCOLL_COLL_ALLTOALL) {
        /* round k moves every block whose relative index has bit k set */
        f->rounds = q;
        for (unsigned k = 0; k < q; k++)
            f->volume += with_bit((uint64_t)p, k);
        return 0;
    }
    if (strcmp(n, "binomial") == 0 && (c == UCOLL_COLL_GATHER || c == UCOLL_COLL_SCATTER)) {
        /* every block but the root's crosses the root's link, one message per round */
        f->rounds = q;
        f->volume = pm1;
        return 0;
    }
    return -1;
}

double cost_block_predict_us(const block_figures_t *f, double block_bytes,
                             const cost_params_t *cost)
{
    /* the path of the rounds' average message */
    double alpha, beta;
    cost_path(cost, f->rounds > 0 ? (double)f->volume * block_bytes / f->rounds : 0, &alpha, &beta);
    return f->rounds * alpha + (double)f->volume * block_bytes * beta * 1e-3 +
           (double)f->ops * block_bytes * cost->gamma_ns * 1e-3;
}

static const char *cost_auto_blocks(ucoll_coll_t coll, int p, double block_bytes, int commutative,
                                    const cost_params_t *cost)
{
    size_t n;
    const alg_desc_t *algs = alg_list(coll, &n);
    const char *best = NULL, *fallback = NULL;
    double best_t = 0;
    for (size_t i = 0; i < n; i++) {
        if (!commutative && cost_reduces(coll) && !(algs[i].flags & ALG_ORDER_PRESERVING))
            continue;
        if ((algs[i].flags & ALG_POWER_OF_TWO) && (p & (p - 1)) != 0)
            continue;
        if (!cost_fits_tag(&algs[i], algs[i].param, p))
            continue; /* the executor would refuse it, on every rank alike */
        block_figures_t f;
        const int rc = cost_block_figures(&algs[i], p, &f);
        if (rc > 0)
            continue; /* does not serve p */
        if (rc < 0) { /* no closed form (check_blocks requires one): only if nothing else */
            if (fallback == NULL)
                fallback = algs[i].name;
            continue;
        }
        const double t = cost_block_predict_us(&f, block_bytes, cost);
        if (best == NULL || t < best_t * (1 - 1e-12)) { /* strictly cheaper, robust to rounding */
            best = algs[i].name;
            best_t = t;
        }
    }
    return best != NULL ? best : fallback;
}

const char *cost_select_elems(ucoll_coll_t coll, int p, size_t count, size_t elem_size,
                              int commutative, const cost_params_t *cost, size_t reduce_rhrd_min,
                              size_t allreduce_rhrd_min)
{
    const size_t bytes = count * elem_size;
    /* every exscan candidate preserves operand order: commutativity does not matter there */
    if (coll == UCOLL_COLL_EXSCAN)
        return cost_auto_exscan_elems(p, count, elem_size, cost, NULL);
    if (cost_has_blocks(coll))
        return cost_auto_blocks(coll, p, (double)bytes, commutative, cost);
    /* a threshold the user set: the rule it names, not the model */
    if ((coll == UCOLL_COLL_REDUCE && reduce_rhrd_min != 0) ||
        (coll == UCOLL_COLL_ALLREDUCE && allreduce_rhrd_min != 0))
        return cost_auto_fixed(coll, bytes, commutative, reduce_rhrd_min, allreduce_rhrd_min);
    if (cost_has_vector(coll))
        return cost_auto_vector(coll, p, count, elem_size, commutative, cost);
    return NULL;
}

const char *cost_select(ucoll_coll_t coll, int p, size_t bytes, int commutative,
                        const cost_params_t *cost, size_t reduce_rhrd_min,
                        size_t allreduce_rhrd_min)
{
    return cost_select_elems(coll, p, bytes, 1, commutative, cost, reduce_rhrd_min,
                             allreduce_rhrd_min);
}

unsigned cost_rounds_bound(const alg_desc_t *alg, int param, int p)
{
    sched_figures_t fig;
    if (alg->build == exscan_pipeline_build || alg->build == scan_pipeline_build ||
        alg->build == bcast_pipeline_build) {
        /* p + k' - 2 rounds with k' <= k; plain `pipeline` runs with a k of cost_pipeline_k */
        const int k = param >= 1 ? param : cost_pipeline_k_max(p);
        return p >= 2 ? (unsigned)(p + k - 2) : 0;
    }
    if (alg->build == exscan_tree_build || alg->build == scan_tree_build) {
        /* rounds grow with k'; plain `tree` runs with a k of cost_tree_k, at most `most`; a
         * larger K is beyond the tag and priced as its bound (so that cost_fits_tag refuses
         * it, as it refuses pipeline:K) */
        const int most = scan_tree_max_segments(p);
        const uint64_t bound =
            3 * ((uint64_t)(param > most ? param : most) - 1 + (uint64_t)scan_tree_max_offset(p)) +
            3;
        scan_tree_figures_t tf;
        if (param <= most && scan_tree_figures(p, param >= 1 ? param : most,
                                               alg->build == scan_tree_build, &tf) == 0)
            return tf.rounds;
        return bound < UINT32_MAX ? (unsigned)bound : UINT32_MAX;
    }
    if (alg->coll == UCOLL_COLL_EXSCAN && cost_exscan_figures(alg, param, p, &fig) == 0)
        return fig.rounds;
    if (alg->build == scan_linear_build)
        return p > 1 ? (unsigned)(p - 1) : 0;
    block_figures_t bf;
    if (cost_has_blocks(alg->coll) && cost_block_figures(alg, p, &bf) == 0)
        return bf.rounds;
    /* a large vector (rhrd without its small-vector fallback, which has fewer rounds) and a
     * non-zero root of a non-commutative reduce (binomial's forwarding round) */
    vector_figures_t vf;
    if (cost_vector_figures(alg, p, SIZE_MAX, p > 1, 0, &vf) == 0)
        return vf.rounds;
    return 2 * sched_ceil_log2(p) + 2; /* not reached for a registered algorithm */
}

int cost_fits_tag(const alg_desc_t *alg, int param, int p)
{
    return (alg->flags & ALG_ONE_ROUND_PER_PAIR) ||
           cost_rounds_bound(alg, param, p) <= COST_MAX_ROUNDS;
}
