/*
 * The cost model's inputs, measured once at init on world (README, "Algorithm choice"):
 *   alpha, beta  from the median times of bcasts of 8 B and 256 KiB (UCOLL_ALPHA_US and
 *                UCOLL_BETA_NS_PER_BYTE state them instead)
 *   gamma        of every predefined op on every dtype it applies to, each timed on this
 *                process over a small vector (UCOLL_GAMMA_NS_PER_BYTE states one value for all);
 *                AVG's is SUM's (the same kernel)
 * All measured values are agreed in ONE allreduce (maximum over ranks), so every rank's
 * selection sees the same numbers and never needs a message later. With all three variables
 * set init runs no collective for this. Called by init only; selection (select.c) reads ctx.
 */
#include "ucoll_int.h"

#include <stdlib.h>
#include <string.h>

/* bytes of the vector each gamma is timed on: in L1, long enough for the clock (about 1 us) */
#define GAMMA_BYTES 8192
#define GAMMA_REPS 3

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

/* ns per byte of one application of op on dtype here: the best of a few timed runs after a
 * warm-up (the best is the kernel's cost; slower runs were interrupted) */
static double time_op(ucoll_op_t op, ucoll_dtype_t dtype, const void *in, void *inout)
{
    const size_t n = GAMMA_BYTES / dtype_size(dtype);
    double best = 0;
    op_apply(op, dtype, in, inout, n);
    for (int rep = 0; rep < GAMMA_REPS; rep++) {
        double t0 = now_seconds();
        op_apply(op, dtype, in, inout, n);
        double t = now_seconds() - t0;
        if (rep == 0 || t < best)
            best = t;
    }
    return best * 1e9 / GAMMA_BYTES;
}

ucoll_status_t measure_cost_model(ucoll_ctx_t *ctx)
{
    ucoll_comm_t *world = ctx->world;
    const ucoll_config_t *cfg = &ctx->cfg;
    const int measure_net = world->size > 1 && (cfg->alpha_us < 0 || cfg->beta_ns < 0);
    /* mine[0], mine[1]: alpha, beta; then gamma[op][dtype] */
    double mine[2 + UCOLL_NOPS * UCOLL_NDTYPES], agreed[2 + UCOLL_NOPS * UCOLL_NDTYPES];
    double *gamma = &mine[2];
    size_t n = 0; /* values to agree, from the start of mine */

    memset(mine, 0, sizeof(mine));
    ctx->net.alpha_us = cfg->alpha_us >= 0 ? cfg->alpha_us : COST_DEFAULT_ALPHA_US;
    ctx->net.beta_ns = cfg->beta_ns >= 0 ? cfg->beta_ns : COST_DEFAULT_BETA_NS;
    ctx->net.gamma_ns = 0;
    if (measure_net) {
        const size_t big = 256 * 1024;
        char *buf = calloc(1, big);
        if (buf == NULL)
            return UCOLL_ERR_NO_MEMORY;
        const double rounds = sched_ceil_log2((uint64_t)world->size);
        /* timed as the flat binomial tree the formula assumes, whatever auto or
         * UCOLL_BCAST_ALG would run (node-aware on more than one host) */
        int param = 0;
        const alg_choice_t chosen = world->alg[UCOLL_COLL_BCAST];
        world->alg[UCOLL_COLL_BCAST] =
            (alg_choice_t){alg_lookup(UCOLL_COLL_BCAST, "binomial", &param), param};
        double t_small = time_bcast(world, buf, 8, 11);
        double t_big = time_bcast(world, buf, big, 5);
        world->alg[UCOLL_COLL_BCAST] = chosen;
        free(buf);
        mine[0] = t_small * 1e6 / rounds;
        mine[1] = (t_big - t_small) * 1e9 / (rounds * big);
        if (mine[1] < 0)
            mine[1] = 0;
        n = 2;
    }
    if (cfg->gamma_ns >= 0) {
        for (int op = 0; op < UCOLL_NOPS; op++)
            for (int dt = 0; dt < UCOLL_NDTYPES; dt++)
                ctx->gamma_ns[op][dt] =
                    op_check(op, (ucoll_dtype_t)dt) == UCOLL_OK ? cfg->gamma_ns : 0;
    } else {
        char *in = calloc(1, GAMMA_BYTES), *inout = calloc(1, GAMMA_BYTES);
        if (in == NULL || inout == NULL) {
            free(in);
            free(inout);
            return UCOLL_ERR_NO_MEMORY;
        }
        for (int op = 0; op < UCOLL_NOPS; op++)
            for (int dt = 0; dt < UCOLL_NDTYPES; dt++)
                if (op_check(op, (ucoll_dtype_t)dt) == UCOLL_OK && op != UCOLL_OP_AVG)
                    gamma[op * UCOLL_NDTYPES + dt] = time_op(op, (ucoll_dtype_t)dt, in, inout);
        /* AVG's (+) is SUM's kernel (its one division at the end is not a (+)) */
        for (int dt = 0; dt < UCOLL_NDTYPES; dt++)
            if (op_check(UCOLL_OP_AVG, (ucoll_dtype_t)dt) == UCOLL_OK)
                gamma[UCOLL_OP_AVG * UCOLL_NDTYPES + dt] = gamma[UCOLL_OP_SUM * UCOLL_NDTYPES + dt];
        free(in);
        free(inout);
        n = sizeof(mine) / sizeof(mine[0]);
    }
    if (n > 0 && world->size > 1) {
        ucoll_status_t st = ucoll_allreduce(world, mine, agreed, n, UCOLL_FLOAT64, UCOLL_OP_MAX);
        if (st != UCOLL_OK)
            return st;
        memcpy(mine, agreed, n * sizeof(double));
    }
    if (measure_net && cfg->alpha_us < 0)
        ctx->net.alpha_us = mine[0];
    if (measure_net && cfg->beta_ns < 0)
        ctx->net.beta_ns = mine[1];
    if (cfg->gamma_ns < 0)
        memcpy(ctx->gamma_ns, gamma, sizeof(ctx->gamma_ns));
    return UCOLL_OK;
}
