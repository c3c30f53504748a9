/*
 * The cost model `auto` uses to choose an exscan algorithm:
 *   time = rounds * (alpha + m * beta) + ops * m * gamma
 * with m the vector's bytes, rounds and ops (the largest number of (+) applications of any
 * process) read off the schedules themselves, alpha (us per message), beta (ns per byte) and
 * gamma (ns per byte of (+)) measured or stated.
 */
#ifndef UCOLL_COST_H
#define UCOLL_COST_H

#include "alg.h"

typedef struct {
    double alpha_us;       /* latency per round */
    double beta_ns;        /* per byte moved in a round */
    double gamma_ns;       /* per byte of one (+) application */
} cost_params_t;

typedef struct {
    unsigned rounds;  /* 1 + highest round index of any process */
    unsigned max_ops; /* largest number of REDUCE steps of any process */
} sched_figures_t;

/* builds every rank's schedule and counts rounds and (+) steps; -1 if a build fails */
int sched_figures(const alg_desc_t *alg, int param, int p, size_t count, size_t elem_size,
                  int root, int commutative, sched_figures_t *fig);

double cost_predict_us(const sched_figures_t *fig, double bytes, const cost_params_t *cost);

/* the exscan algorithms auto chooses among, in order of preference for ties */
const char *const *cost_exscan_candidates(size_t *n);

/* the cheapest exscan candidate for p processes and m bytes, given each candidate's figures
 * (figs[i] for cost_exscan_candidates()[i]); returns its index */
size_t cost_pick(const sched_figures_t *figs, size_t n, double bytes, const cost_params_t *cost);

#endif
