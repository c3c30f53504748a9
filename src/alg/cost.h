/*
 * The cost model `auto` uses to choose an exscan algorithm:
 *   time = rounds * (alpha + m * beta) + path_ops * m * gamma
 * with m the vector's bytes, rounds and path_ops read off the schedules themselves, alpha
 * (us per round), beta (ns per byte) and gamma (ns per byte of one (+)) measured or stated.
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
} cost_params_t;

typedef struct {
    unsigned rounds;   /* 1 + highest round index of any process */
    unsigned max_ops;  /* largest number of REDUCE steps of any process */
    unsigned path_ops; /* REDUCE steps on the longest dependency chain */
} sched_figures_t;

/* builds every rank's schedule and counts rounds and (+) steps, following messages round by
 * round for path_ops; -1 if a build fails or memory runs out */
int sched_figures(const alg_desc_t *alg, int param, int p, size_t count, size_t elem_size, int root,
                  int commutative, sched_figures_t *fig);

double cost_predict_us(const sched_figures_t *fig, double bytes, const cost_params_t *cost);

/* the exscan algorithms auto chooses among, in order of preference for ties */
const char *const *cost_exscan_candidates(size_t *n);

/* the cheapest exscan candidate for p processes and m bytes, given each candidate's figures
 * (figs[i] for cost_exscan_candidates()[i]); returns its index */
size_t cost_pick(const sched_figures_t *figs, size_t n, double bytes, const cost_params_t *cost);

/* auto for the collectives without a cost model: the algorithm's name for a vector of `bytes`
 * (rhrd for commutative reduce/allreduce from the given thresholds) */
const char *cost_auto_fixed(ucoll_coll_t coll, size_t bytes, int commutative,
                            size_t reduce_rhrd_min, size_t allreduce_rhrd_min);

/* the exscan algorithm auto picks for p processes and m bytes: figures counted from the
 * schedules (in figs, n = cost_exscan_candidates' length, computed when *have_figs is 0) */
const char *cost_auto_exscan(int p, double bytes, const cost_params_t *cost, sched_figures_t *figs,
                             int *have_figs);

#endif
