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
    int rc = -1;

    memset(fig, 0, sizeof(*fig));
    if (s == NULL || pc == NULL || ops == NULL || path == NULL || sent == NULL)
        goto out;
    for (int r = 0; r < p; r++) {
        sched_args_t a = {r, p, root, count, elem_size, param, commutative, NULL, NULL, NULL, NULL};
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
            if (pc[r] < s[r].nsteps && s[r].steps[pc[r]].round == k)
                sent[r] = path[r];
        }
        for (int r = 0; r < p; r++) {
            if (pc[r] >= s[r].nsteps || s[r].steps[pc[r]].round != k)
                continue;
            const int from = s[r].steps[pc[r]].recv_peer;
            if (from >= 0 && sent[from] > path[r])
                path[r] = sent[from];
            pc[r]++;
        }
    }
    for (int r = 0; r < p; r++) {
        fig->max_ops = ops[r] > fig->max_ops ? ops[r] : fig->max_ops;
        fig->path_ops = path[r] > fig->path_ops ? path[r] : fig->path_ops;
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
    return rc;
}

double cost_predict_us(const sched_figures_t *fig, double bytes, const cost_params_t *cost)
{
    return fig->rounds * (cost->alpha_us + bytes * cost->beta_ns * 1e-3) +
           fig->path_ops * bytes * cost->gamma_ns * 1e-3;
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

const char *cost_auto_exscan(int p, double bytes, const cost_params_t *cost, sched_figures_t *fig)
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

const char *cost_select(ucoll_coll_t coll, int p, size_t bytes, int commutative,
                        const cost_params_t *cost, size_t reduce_rhrd_min,
                        size_t allreduce_rhrd_min)
{
    /* every exscan candidate preserves operand order: commutativity does not matter there */
    if (coll == UCOLL_COLL_EXSCAN)
        return cost_auto_exscan(p, (double)bytes, cost, NULL);
    return cost_auto_fixed(coll, bytes, commutative, reduce_rhrd_min, allreduce_rhrd_min);
}

unsigned cost_rounds_bound(const alg_desc_t *alg, int param, int p)
{
    sched_figures_t fig;
    if (alg->coll == UCOLL_COLL_EXSCAN && cost_exscan_figures(alg, param, p, &fig) == 0)
        return fig.rounds;
    if (alg->build == scan_linear_build || alg->build == allgather_ring_build ||
        alg->build == allgatherv_ring_build || alg->build == reduce_scatter_block_ring_build ||
        alg->build == reduce_scatter_ring_build)
        return p > 1 ? (unsigned)(p - 1) : 0;
    if (alg->build == allreduce_ring_build)
        return p > 1 ? 2 * (unsigned)(p - 1) : 0;
    if (alg->build == alltoall_pairwise_build || alg->build == alltoallv_pairwise_build ||
        alg->build == gather_linear_build || alg->build == scatter_linear_build ||
        alg->build == gatherv_linear_build || alg->build == scatterv_linear_build)
        return p > 1 ? (unsigned)(p - 1) : 0; /* one peer per round */
    return 2 * sched_ceil_log2(p) + 2; /* trees, butterflies, halving and doubling */
}
