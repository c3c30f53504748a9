/*
 * Algorithm selection. An explicitly chosen algorithm is used unless it would reorder a
 * non-commutative op. `auto` is:
 *   exscan     the cost model of alg/cost.h over the candidates of cost_exscan_candidates():
 *              time = rounds*(alpha + m*beta) + ops*m*gamma, rounds and ops counted from the
 *              schedules for this comm's size; alpha, beta measured at init (or
 *              UCOLL_ALPHA_US / UCOLL_BETA_NS_PER_BYTE), gamma measured once per (op, dtype)
 *              and comm, or stated for a user op with ucoll_op_set_cost. Measured values are
 *              agreed (maximum over ranks) so that every rank picks the same algorithm.
 *   reduce, allreduce
 *              rhrd (bandwidth-lean, commutative ops only) for vectors of at least
 *              UCOLL_REDUCE_RHRD_MIN / UCOLL_ALLREDUCE_RHRD_MIN bytes, below that (and for
 *              non-commutative ops) binomial / recursive-doubling. Defaults from measurements
 *              on the development machine (README, "Algorithm choice").
 *   scan       doubling;  bcast binomial;  barrier dissemination.
 */
#include "ucoll_int.h"

#include <stdlib.h>
#include <string.h>

/* time of one (+) application over a buffer, per byte, measured on this process */
static double measure_gamma(ucoll_op_t op, ucoll_dtype_t dtype)
{
    const size_t esz = dtype_size(dtype);
    size_t n = 64;
    double best = 0;
    for (;;) {
        char *in = calloc(n, esz), *inout = calloc(n, esz);
        if (in == NULL || inout == NULL) {
            free(in);
            free(inout);
            return best > 0 ? best : 1.0;
        }
        best = 0;
        double elapsed = 0;
        for (int rep = 0; rep < 3; rep++) {
            double t0 = now_seconds();
            op_apply(op, dtype, in, inout, n);
            double t = now_seconds() - t0;
            elapsed += t;
            if (rep == 0 || t < best)
                best = t;
        }
        free(in);
        free(inout);
        if (elapsed > 100e-6 || n >= (1u << 20))
            return best * 1e9 / (double)(n * esz);
        n *= 4;
    }
}

static ucoll_status_t agreed_gamma(ucoll_comm_t *comm, ucoll_op_t op, ucoll_dtype_t dtype,
                                   double *gamma)
{
    for (size_t i = 0; i < comm->ngammas; i++)
        if (comm->gammas[i].op == op && comm->gammas[i].dtype == dtype) {
            *gamma = comm->gammas[i].gamma_ns;
            return UCOLL_OK;
        }
    double g = op_stated_gamma(op);
    if (g < 0) {
        double mine = measure_gamma(op, dtype);
        ucoll_status_t st = ucoll_allreduce(comm, &mine, &g, 1, UCOLL_FLOAT64, UCOLL_OP_MAX);
        if (st != UCOLL_OK)
            return st;
    }
    struct gamma_entry *e = realloc(comm->gammas, (comm->ngammas + 1) * sizeof(*e));
    if (e == NULL)
        return UCOLL_ERR_NO_MEMORY;
    comm->gammas = e;
    e[comm->ngammas].op = op;
    e[comm->ngammas].dtype = dtype;
    e[comm->ngammas].gamma_ns = g;
    comm->ngammas++;
    *gamma = g;
    return UCOLL_OK;
}

static ucoll_status_t auto_exscan(ucoll_comm_t *comm, ucoll_op_t op, ucoll_dtype_t dtype,
                                  size_t count, const alg_desc_t **alg, int *param)
{
    size_t n;
    cost_exscan_candidates(&n);
    if (comm->exscan_figs == NULL &&
        (comm->exscan_figs = calloc(n, sizeof(sched_figures_t))) == NULL)
        return UCOLL_ERR_NO_MEMORY;
    cost_params_t cost = comm->ctx->net;
    ucoll_status_t st = UCOLL_OK;
    if (comm->size > 2) /* with p <= 2 every candidate is one round without (+) */
        st = agreed_gamma(comm, op, dtype, &cost.gamma_ns);
    if (st != UCOLL_OK)
        return st;
    const char *name = cost_auto_exscan(comm->size, (double)(count * dtype_size(dtype)), &cost,
                                        comm->exscan_figs, &comm->have_exscan_figs);
    if (name == NULL)
        return UCOLL_ERR_NO_MEMORY;
    *alg = alg_lookup(UCOLL_COLL_EXSCAN, name, param);
    return UCOLL_OK;
}

ucoll_status_t select_algorithm(ucoll_comm_t *comm, ucoll_coll_t coll, ucoll_op_t op,
                                ucoll_dtype_t dtype, size_t count, const alg_desc_t **alg,
                                int *param)
{
    *alg = comm->alg[coll].alg;
    *param = comm->alg[coll].param;
    const int commutative =
        coll == UCOLL_COLL_BCAST || coll == UCOLL_COLL_BARRIER || op_is_commutative(op);
    if (*alg != NULL && (commutative || ((*alg)->flags & ALG_ORDER_PRESERVING)))
        return UCOLL_OK;
    /* auto, or a reordering algorithm chosen for a non-commutative op */
    struct auto_choice *last = &comm->last_auto[coll];
    if (last->valid && last->op == op && last->dtype == dtype && last->count == count &&
        last->commutative == commutative) {
        *alg = last->alg;
        *param = last->param;
        return UCOLL_OK;
    }
    if (coll == UCOLL_COLL_EXSCAN) {
        ucoll_status_t st = auto_exscan(comm, op, dtype, count, alg, param);
        if (st != UCOLL_OK)
            return st;
    } else {
        const ucoll_config_t *cfg = &comm->ctx->cfg;
        const size_t bytes = coll == UCOLL_COLL_BARRIER ? 0 : count * dtype_size(dtype);
        *alg = alg_lookup(coll,
                          cost_auto_fixed(coll, bytes, commutative, cfg->reduce_rhrd_min,
                                          cfg->allreduce_rhrd_min),
                          param);
    }
    *last = (struct auto_choice){1, commutative, op, dtype, count, *alg, *param};
    return UCOLL_OK;
}

void select_comm_cleanup(ucoll_comm_t *comm)
{
    free(comm->exscan_figs);
    comm->exscan_figs = NULL;
    comm->have_exscan_figs = 0;
    free(comm->gammas);
    comm->gammas = NULL;
    comm->ngammas = 0;
}

/* median of the per-iteration times of a bcast of `bytes` from rank 0 */
static double time_bcast(ucoll_comm_t *world, void *buf, size_t bytes, int iters)
{
    double t[16];
    ucoll_bcast(world, buf, bytes, UCOLL_UINT8, 0); /* warm-up */
    for (int i = 0; i < iters; i++) {
        ucoll_barrier(world);
        double t0 = now_seconds();
        ucoll_bcast(world, buf, bytes, UCOLL_UINT8, 0);
        t[i] = now_seconds() - t0;
    }
    for (int i = 1; i < iters; i++) /* insertion sort: iters is small */
        for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
            double x = t[j];
            t[j] = t[j - 1];
            t[j - 1] = x;
        }
    return t[iters / 2];
}

ucoll_status_t select_measure_network(ucoll_ctx_t *ctx)
{
    ucoll_comm_t *world = ctx->world;
    ctx->net.alpha_us = ctx->cfg.alpha_us >= 0 ? ctx->cfg.alpha_us : 1.0;
    ctx->net.beta_ns = ctx->cfg.beta_ns >= 0 ? ctx->cfg.beta_ns : 0.1;
    if (world->size == 1 || (ctx->cfg.alpha_us >= 0 && ctx->cfg.beta_ns >= 0))
        return UCOLL_OK;
    const size_t big = 256 * 1024;
    char *buf = calloc(1, big);
    if (buf == NULL)
        return UCOLL_ERR_NO_MEMORY;
    const double rounds = sched_ceil_log2((uint64_t)world->size);
    double t_small = time_bcast(world, buf, 8, 11);
    double t_big = time_bcast(world, buf, big, 5);
    free(buf);
    double mine[2] = {t_small * 1e6 / rounds, (t_big - t_small) * 1e9 / (rounds * big)};
    double agreed[2];
    if (mine[1] < 0)
        mine[1] = 0;
    ucoll_status_t st = ucoll_allreduce(world, mine, agreed, 2, UCOLL_FLOAT64, UCOLL_OP_MAX);
    if (st != UCOLL_OK)
        return st;
    if (ctx->cfg.alpha_us < 0)
        ctx->net.alpha_us = agreed[0];
    if (ctx->cfg.beta_ns < 0)
        ctx->net.beta_ns = agreed[1];
    return UCOLL_OK;
}
