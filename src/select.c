/*
 * Algorithm selection. An explicitly chosen algorithm is used unless it would reorder a
 * non-commutative op or builds only for powers of two and the comm's size is none. `auto` is
 * cost_select (alg/cost.h), a pure function of this call's collective, the comm's size, the
 * vector's count and element size, the op's commutativity, the cost parameters and the
 * UCOLL_*_RHRD_MIN overrides:
 *   exscan     the cost model over the candidates of cost_exscan_candidates():
 *              time = rounds*(alpha + m*beta) + path_ops*m*gamma, rounds and path_ops from
 *              each candidate's closed form; then `pipeline` with its k for this vector,
 *              whose messages and (+) steps are m/k (cost_auto_exscan_elems).
 *   reduce, allreduce, bcast, scan, barrier
 *              the cost model over cost_vector_candidates(): time = rounds*alpha +
 *              volume*beta + (+) on the critical path*gamma, from closed forms
 *              (cost_vector.c), so allreduce takes rs-ag for large vectors on p != 2^k.
 *              UCOLL_REDUCE_RHRD_MIN / UCOLL_ALLREDUCE_RHRD_MIN, when set (non-zero), force
 *              the old rule on that collective instead: rhrd (commutative ops) from that many
 *              bytes, binomial / recursive-doubling below.
 *   the block collectives
 *              the same model over their registered algorithms (cost_block_figures).
 * alpha, beta and the gamma of every predefined (op, dtype) are agreed by all ranks at init
 * (measure.c) or stated in the environment; a user op's gamma is from ucoll_op_set_cost, else
 * the largest gamma of the predefined ops on that dtype. Every collective that applies an op
 * (cost_reduces) gets its gamma; the others none.
 * Plain `pipeline` (exscan, scan; chosen or auto's) leaves here with its k (cost_resolve_param:
 * cost_pipeline_k of this vector and the agreed alpha and beta), never with param 0.
 * Every input is the same on every rank, so every rank picks the same algorithm without a
 * message; nothing here communicates, blocks or builds a schedule.
 */
#include "ucoll_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* gamma of op on dtype, the same on every rank */
static double op_gamma(const ucoll_ctx_t *ctx, ucoll_op_t op, ucoll_dtype_t dtype)
{
    if ((unsigned)dtype >= UCOLL_NDTYPES)
        return 0;
    if (op >= 0 && op < UCOLL_NOPS)
        return ctx->gamma_ns[op][dtype];
    const double stated = op_stated_gamma(op);
    if (stated >= 0)
        return stated;
    /* a user op is a call through a pointer per vector: no cheaper than a predefined kernel */
    double worst = 0;
    for (int o = 0; o < UCOLL_NOPS; o++)
        if (ctx->gamma_ns[o][dtype] > worst)
            worst = ctx->gamma_ns[o][dtype];
    return worst;
}

/* the node-aware form of coll with its leaders' algorithm, when the comm's layout gets one
 * (cost_node_aware_serves); *alg NULL otherwise */
static ucoll_status_t select_node_aware(ucoll_comm_t *comm, ucoll_coll_t coll, ucoll_dtype_t dtype,
                                        size_t elems, int commutative, const cost_params_t *cost,
                                        const alg_desc_t **alg, leaders_choice_t *leaders)
{
    const sched_hosts_t *H = comm->hosts;
    *alg = NULL;
    if (!cost_node_aware_serves(coll, H, commutative))
        return UCOLL_OK;
    const ucoll_config_t *cfg = &comm->ctx->cfg;
    if (cost_node_aware_plan(coll, H, elems, dtype_size(dtype), commutative, cost,
                             cfg->reduce_rhrd_min, cfg->allreduce_rhrd_min, leaders) == 0)
        *alg = alg_node_aware(coll);
    else
        memset(leaders, 0, sizeof(*leaders));
    return UCOLL_OK;
}

/* UCOLL_PRINT_ALG: one line per new choice, by the comm's rank 0 (every rank chooses alike) */
static void print_choice(const ucoll_comm_t *comm, ucoll_coll_t coll, ucoll_dtype_t dtype,
                         size_t count, const alg_desc_t *alg, int param,
                         const leaders_choice_t *leaders)
{
    if (!comm->ctx->cfg.print_alg || comm->rank != 0)
        return;
    char name[192];
    int n = 0;
    if (param != 0 && (alg->flags & (ALG_PARAM_REQUIRED | ALG_PARAM_OPTIONAL)))
        n = snprintf(name, sizeof(name), "%s:%d", alg->name, param);
    else
        n = snprintf(name, sizeof(name), "%s", alg->name);
    /* a node-aware form: what its phases run, those it has (as ucoll_sched prints them) */
    const alg_desc_t *lead = leaders->leaders;
    if (lead != NULL) {
        if (leaders->leaders_param != 0 &&
            (lead->flags & (ALG_PARAM_REQUIRED | ALG_PARAM_OPTIONAL)))
            n += snprintf(name + n, sizeof(name) - (size_t)n, " (leaders: %s:%d", lead->name,
                          leaders->leaders_param);
        else
            n += snprintf(name + n, sizeof(name) - (size_t)n, " (leaders: %s", lead->name);
        if (leaders->local_reduce != NULL)
            n += snprintf(name + n, sizeof(name) - (size_t)n, ", local reduce: %s",
                          leaders->local_reduce->name);
        if (leaders->local_bcast != NULL)
            n += snprintf(name + n, sizeof(name) - (size_t)n, ", local bcast: %s",
                          leaders->local_bcast->name);
        snprintf(name + n, sizeof(name) - (size_t)n, ")");
    }
    const char *dname = dtype_name(dtype);
    fprintf(stderr, "ucoll: auto on comm %u (%d ranks): %s of %zu %s (%zu B): %s\n", comm->id,
            comm->size, alg_coll_name(coll), count, dname != NULL ? dname : "?",
            count * dtype_size(dtype), name);
}

/* auto's choice when the comm's last one for coll does not apply, remembered for the next
 * call; apart from the hit path so that a small collective's selection stays a short leaf */
__attribute__((noinline)) static ucoll_status_t select_auto(ucoll_comm_t *comm, ucoll_coll_t coll,
                                                            ucoll_op_t op, ucoll_dtype_t dtype,
                                                            size_t count, int commutative,
                                                            double gamma_ns, const alg_desc_t **alg,
                                                            int *param, leaders_choice_t *leaders)
{
    const ucoll_ctx_t *ctx = comm->ctx;
    cost_params_t cost = ctx->net;
    cost.gamma_ns = gamma_ns;
    const size_t elems = coll == UCOLL_COLL_BARRIER ? 0 : count;
    *leaders = (leaders_choice_t){NULL, 0, NULL, NULL};
    ucoll_status_t st =
        select_node_aware(comm, coll, dtype, elems, commutative, &cost, alg, leaders);
    if (st != UCOLL_OK)
        return st;
    if (*alg != NULL) {
        *param = 0;
        comm->last_auto[coll] = (struct auto_choice){1,        commutative, op,     dtype,   count,
                                                     gamma_ns, *alg,        *param, *leaders};
        print_choice(comm, coll, dtype, elems, *alg, *param, leaders);
        return UCOLL_OK;
    }
    const char *name =
        cost_select_elems(coll, comm->size, elems, dtype_size(dtype), commutative, &cost,
                          ctx->cfg.reduce_rhrd_min, ctx->cfg.allreduce_rhrd_min);
    if (name == NULL)
        return UCOLL_ERR_NOT_SUPPORTED; /* a collective with no algorithm in this build */
    if ((*alg = alg_lookup(coll, name, param)) == NULL)
        return UCOLL_ERR_INVALID_ARG; /* not reached: cost_select names registry entries */
    /* pipeline: remembered with the k it runs with, the k the model priced */
    *param = cost_resolve_param(*alg, *param, comm->size, count, dtype_size(dtype), &ctx->net);
    comm->last_auto[coll] = (struct auto_choice){
        1, commutative, op, dtype, count, gamma_ns, *alg, *param, {NULL, 0, NULL, NULL}};
    print_choice(comm, coll, dtype, elems, *alg, *param, leaders);
    return UCOLL_OK;
}

static ucoll_status_t select_named(ucoll_comm_t *comm, ucoll_coll_t coll, ucoll_op_t op,
                                   ucoll_dtype_t dtype, size_t count, const alg_desc_t **alg,
                                   int *param, leaders_choice_t *leaders)
{
    const struct auto_choice *last = select_repeats(comm, coll, op, dtype, count);
    if (last != NULL) { /* without the checks below */
        *alg = last->alg;
        *param = last->param;
        *leaders = last->leaders;
        return UCOLL_OK;
    }
    last = &comm->last_auto[coll];
    *alg = comm->alg[coll].alg;
    *param = comm->alg[coll].param;
    *leaders = (leaders_choice_t){NULL, 0, NULL, NULL};
    const int commutative =
        coll == UCOLL_COLL_BCAST || coll == UCOLL_COLL_BARRIER || op_is_commutative(op);
    const double gamma_ns = cost_reduces(coll) ? op_gamma(comm->ctx, op, dtype) : 0;
    if (*alg != NULL && ((*alg)->flags & ALG_NODE_AWARE)) {
        /* chosen by name: used where the layout serves it, else auto's choice */
        cost_params_t cost = comm->ctx->net;
        cost.gamma_ns = gamma_ns;
        const ucoll_status_t st =
            select_node_aware(comm, coll, dtype, coll == UCOLL_COLL_BARRIER ? 0 : count,
                              commutative, &cost, alg, leaders);
        if (st != UCOLL_OK || *alg != NULL)
            return st;
    } else if (*alg != NULL && (commutative || ((*alg)->flags & ALG_ORDER_PRESERVING)) &&
               !(((*alg)->flags & ALG_POWER_OF_TWO) && (comm->size & (comm->size - 1)) != 0)) {
        return UCOLL_OK;
    }
    /* auto, a reordering algorithm chosen for a non-commutative op, one for powers of two
     * only chosen on another size, or a node-aware one the layout does not serve */
    if (last->valid && last->op == op && last->dtype == dtype && last->count == count &&
        last->commutative == commutative && last->gamma_ns == gamma_ns) {
        *alg = last->alg;
        *param = last->param;
        *leaders = last->leaders;
        return UCOLL_OK;
    }
    return select_auto(comm, coll, op, dtype, count, commutative, gamma_ns, alg, param, leaders);
}

ucoll_status_t select_algorithm(ucoll_comm_t *comm, ucoll_coll_t coll, ucoll_op_t op,
                                ucoll_dtype_t dtype, size_t count, const alg_desc_t **alg,
                                int *param, leaders_choice_t *leaders)
{
    const ucoll_status_t st = select_named(comm, coll, op, dtype, count, alg, param, leaders);
    /* plain `pipeline` (chosen or auto's): its k for this vector from the agreed alpha and
     * beta, the k auto priced it with; the same on every rank */
    if (st == UCOLL_OK && *param == 0 && ((*alg)->flags & ALG_PARAM_OPTIONAL))
        *param = cost_resolve_param(*alg, 0, comm->size, count, dtype_size(dtype), &comm->ctx->net);
    return st;
}

void select_comm_cleanup(ucoll_comm_t *comm)
{
    memset(comm->last_auto, 0, sizeof(comm->last_auto));
    if (comm->hosts != NULL)
        sched_hosts_free(comm->hosts);
    free(comm->hosts);
    comm->hosts = NULL;
}

ucoll_status_t comm_init_hosts(ucoll_comm_t *comm)
{
    const int *world_host = comm->ctx->world_host;
    if (world_host == NULL || comm->size <= 1)
        return UCOLL_OK; /* one host, or hosts unknown: flat */
    int *id = malloc((size_t)comm->size * sizeof(int));
    sched_hosts_t *H = malloc(sizeof(*H));
    if (id == NULL || H == NULL) {
        free(id);
        free(H);
        return UCOLL_ERR_NO_MEMORY;
    }
    for (int r = 0; r < comm->size; r++)
        id[r] = world_host[comm->world_rank[r]];
    const int rc = sched_hosts_init(H, comm->size, id);
    free(id);
    if (rc != 0) {
        free(H);
        return UCOLL_ERR_NO_MEMORY;
    }
    if (H->nhosts > 1) {
        comm->hosts = H;
    } else {
        sched_hosts_free(H);
        free(H);
    }
    return UCOLL_OK;
}
