/* The cost model of `auto` (see cost.h): figures counted from the schedules, and the choice. */
#include "cost.h"

int sched_figures(const alg_desc_t *alg, int param, int p, size_t count, size_t elem_size,
                  int root, int commutative, sched_figures_t *fig)
{
    sched_t s;
    sched_init(&s);
    fig->rounds = 0;
    fig->max_ops = 0;
    for (int r = 0; r < p; r++) {
        sched_args_t a = {r, p, root, count, elem_size, param, commutative};
        sched_clear(&s);
        if (alg->build(&s, &a) != 0) {
            sched_destroy(&s);
            return -1;
        }
        unsigned ops = 0;
        for (size_t i = 0; i < s.nsteps; i++)
            ops += s.steps[i].kind == SCHED_REDUCE;
        if (ops > fig->max_ops)
            fig->max_ops = ops;
        if (s.nrounds > fig->rounds)
            fig->rounds = s.nrounds;
    }
    sched_destroy(&s);
    return 0;
}

double cost_predict_us(const sched_figures_t *fig, double bytes, const cost_params_t *cost)
{
    return fig->rounds * (cost->alpha_us + bytes * cost->beta_ns * 1e-3) +
           fig->max_ops * bytes * cost->gamma_ns * 1e-3;
}

/* round-optimal, fewest-(+) algorithms first: they win ties */
static const char *const exscan_candidates[] = {
    "roughly-halving", "best-doubling", "123-doubling", "1-doubling",
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
