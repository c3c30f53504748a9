/*
 * The cost model's inputs, measured once at init on world (README, "Algorithm choice"):
 *   alpha, beta  from binomial bcasts (UCOLL_ALPHA_US and UCOLL_BETA_NS_PER_BYTE state one
 *                pair for every message instead). When every rank is on this host and the
 *                rings carry the small messages, two paths: the rings' alpha and beta from 8 B,
 *                a quarter, half and all of the rings' largest message, UCX's from 64 KiB to
 *                1 MiB, each as one message's time in chains of bcasts (time_bcast_chain), the
 *                line through them by repeated medians (cost_fit_large_path; the rings'
 *                by cost_fit_path: one stretched chain does not tilt it); under
 *                UCOLL_SINGLE_COPY_MIN=auto with single copy on, single copy's from chains of
 *                128 KiB (its smallest message) to 1 MiB with it allowed.
 *                Otherwise one path, from 8 B and 256 KiB after barriers. Both keep the lower
 *                quartile, not the median: right after start-up a rank's wait is sometimes
 *                stretched by the launcher's threads (4 us instead of 0.2 at np = 2 here),
 *                which is not what later collectives see
 *   gamma        of every predefined op on every dtype it applies to, each timed on this
 *                process over a small vector (UCOLL_GAMMA_NS_PER_BYTE states one value for all);
 *                AVG's is SUM's (the same kernel)
 * All measured values are agreed in ONE allreduce (maximum over ranks), so every rank's
 * selection sees the same numbers and never needs a message later. With all three variables
 * set init runs no collective for this. Called by init only; selection (select.c) reads ctx.
 */
#include "ucoll_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* bytes of the vector each gamma is timed on: in L1, long enough for the clock (about 1 us) */
#define GAMMA_BYTES 8192
#define GAMMA_REPS 3
/* agreed words of the network's cost: alpha, beta, the big path's alpha and beta, single
 * copy's alpha and beta (0 where it is not measured) */
#define NET_WORDS 6

/* this rank's time of each of `iters` bcasts of `bytes` from rank 0, each after a barrier */
static void time_bcast(ucoll_comm_t *world, void *buf, size_t bytes, int iters, double *t)
{
    for (int i = 0; i < 3; i++) /* warm-up: a path's first messages set it up */
        ucoll_bcast(world, buf, bytes, UCOLL_UINT8, 0);
    for (int i = 0; i < iters; i++) {
        ucoll_barrier(world);
        double t0 = now_seconds();
        ucoll_bcast(world, buf, bytes, UCOLL_UINT8, 0);
        t[i] = now_seconds() - t0;
    }
}

/* lower quartile of n times (sorted in place) */
static double lower_quartile(double *t, int n)
{
    cost_sort(t, n);
    return t[n / 4];
}

/* the time per bcast of `bytes` in chains of CHAIN_BCASTS bcasts whose root moves one rank on
 * each time (the lower quartile over `chains` chains). Rank r + 1 of a binomial bcast from r
 * receives in its first round, so each bcast waits for the one message that brought the last
 * one's data to its root: one message's time, with no barrier between that a leaf could leave
 * last and find its data already there (bcasts after a barrier measured 0.06 us a round at 3
 * ranks on 2 CPUs, whose collectives take microseconds a round) */
enum { CHAIN_BCASTS = 16 };
/* root_buf: the root's buffer, buf every other rank's (the root's then holds data it did not
 * just receive, as an algorithm's input is) */
static double time_bcast_chain_from(ucoll_comm_t *world, void *root_buf, void *buf, size_t bytes,
                                    int chains)
{
    double t[16];
    if (chains > 16)
        chains = 16;
    for (int i = 0; i < 4; i++) /* warm-up: a path's first messages set it up */
        ucoll_bcast(world, i % world->size == world->rank ? root_buf : buf, bytes, UCOLL_UINT8,
                    i % world->size);
    for (int c = 0; c < chains; c++) {
        ucoll_barrier(world);
        double t0 = now_seconds();
        for (int i = 0; i < CHAIN_BCASTS; i++)
            ucoll_bcast(world, i % world->size == world->rank ? root_buf : buf, bytes, UCOLL_UINT8,
                        i % world->size);
        t[c] = (now_seconds() - t0) / CHAIN_BCASTS;
    }
    return lower_quartile(t, chains);
}

static double time_bcast_chain(ucoll_comm_t *world, void *buf, size_t bytes, int chains)
{
    return time_bcast_chain_from(world, buf, buf, bytes, chains);
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

/* UCX's path is fitted to 64 KiB to 1 MiB, single copy's to its smallest message under auto
 * to 1 MiB, four sizes or more, doubling: with two, one chain stretched by a descheduled rank
 * tilted the line (at 3 ranks on 2 CPUs UCX's beta came out anywhere from 0.004 to 0.072 ns/B
 * between launches; about 0.06 from chains of 1 and 2 MiB) */
enum { BIG_BYTES = 1024 * 1024, MID_BYTES = 64 * 1024, SC_MID_BYTES = UCOLL_SINGLE_COPY_AUTO_MIN };
_Static_assert(8 * SC_MID_BYTES <= BIG_BYTES, "single copy's line needs four sizes");

/* intercept and slope (us, ns/B) of the line through chained bcasts of the sizes from `mid`
 * doubling to BIG_BYTES whose `copies` copies per bcast share the host's CPUs (see
 * measure_one_host); a line that hardly rises (the small sizes' chains stretched under load)
 * gives way to the largest size's time per byte (cost_fit_large_path): a beta of 0 would drop
 * single copy from the model, or price UCX's large messages without their bytes */
static void time_big_path(ucoll_comm_t *world, void *root_buf, void *buf, size_t mid, double copies,
                          double *alpha_us, double *beta_ns)
{
    double bytes[COST_FIT_MAX_POINTS], us[COST_FIT_MAX_POINTS];
    const double share = copies > 1 ? copies : 1;
    int n = 0;
    for (size_t b = mid; b <= BIG_BYTES && n < COST_FIT_MAX_POINTS; b *= 2, n++) {
        bytes[n] = (double)b;
        /* half the chains from 512 KiB: the fit outvotes one stretched size, and init's time
         * grows with these (a 1 MiB chain at 3 ranks here: about 5 ms) */
        us[n] =
            time_bcast_chain_from(world, root_buf, buf, b, b >= 512 * 1024 ? 4 : 8) * 1e6 / share;
    }
    double a = 0, slope = 0;
    (void)cost_fit_large_path(bytes, us, n, &a, &slope); /* n >= 4: cannot fail */
    *beta_ns = slope * 1e3;
    *alpha_us = a;
}

/* every rank on this host, the rings carrying messages up to ring_max: mine[0..5] = the rings'
 * alpha and beta, UCX's alpha and beta (the line through 64 KiB to 1 MiB), single copy's
 * alpha and beta (under auto, 128 KiB to 1 MiB; else left 0), each from one
 * message's time.
 * A chain of small bcasts waits for one message a bcast. A chain of large ones is bound by the
 * CPUs instead once a bcast's copies outweigh one message: its p - 1 messages are 2 (p - 1)
 * copies (UCX's copy in and copy out, which one message overlaps on two CPUs) over min(p, CPUs)
 * CPUs, so a large message is the chain's time over max(1, 2 (p - 1) / min(p, CPUs)): at 3
 * ranks on 2 CPUs a chained 64 KiB bcast took twice a 64 KiB bcast alone */
static ucoll_status_t measure_one_host(ucoll_ctx_t *ctx, size_t ring_max, double *mine)
{
    ucoll_comm_t *world = ctx->world;
    /* under regions the program's large buffers are regions, read through mappings (a
     * memcpy, or none where a (+) reads them in place): from malloc's buffers single copy's
     * line would time process_vm_readv instead, about 3x slower here. Where a region cannot
     * be had, malloc's (that path then is what the line measures) */
    char *buf = NULL;
    const int in_region =
        ctx->cfg.single_copy_regions && tp_region_alloc(2 * BIG_BYTES, (void **)&buf) == 0;
    if (!in_region)
        buf = malloc(2 * BIG_BYTES);
    if (buf == NULL)
        return UCOLL_ERR_NO_MEMORY;
    char *input = buf + BIG_BYTES;
    /* pages of their own, not the zero page calloc leaves unwritten */
    memset(buf, 1, 2 * BIG_BYTES);
    tp_stats_t before, after; /* this measurement's single-copy messages */
    tp_get_stats(ctx->tp, &before);
    /* the rings' line: 8 B, then ring_max / 4, / 2 and itself where they are larger */
    double ring_bytes[4], ring_us[4];
    int nring = 0;
    for (int i = 0; i < 4; i++) {
        const size_t b = i == 0 ? 8 : ring_max >> (3 - i);
        if (nring > 0 && (double)b <= ring_bytes[nring - 1])
            continue;
        ring_bytes[nring] = (double)b;
        ring_us[nring++] = time_bcast_chain(world, buf, b, 8) * 1e6;
    }
    const int cpus = tp_host_cpus(), busy = world->size < cpus ? world->size : cpus;
    const double links = (double)(world->size - 1) / (busy > 0 ? busy : 1);
    /* 1 <= nring <= 4 increasing sizes: cannot fail; alpha > 0 */
    (void)cost_fit_path(ring_bytes, ring_us, nring, &mine[0], &mine[1]);
    mine[1] *= 1e3; /* us per byte to ns */
    /* bcast does not go by auto's single copy: these are UCX's two copies. Untimed first, a
     * chain of large bcasts touches the pages of UCX's receive segments (its pool grows 512 at
     * a time): timed cold, the 64 KiB chain at 3 ranks on 2 CPUs took as long as the 256 KiB
     * one (alpha 24-40 us, beta 0) with 20 KiB segments */
    (void)time_bcast_chain_from(world, buf, buf, BIG_BYTES, 1);
    time_big_path(world, buf, buf, MID_BYTES, 2 * links, &mine[2], &mine[3]);
    /* single copy's own path (the receiver's copy alone): bcasts with single copy allowed
     * whose roots send from a buffer of their own, not the one the last bcast wrote (a read of
     * data the peer has just written measured slower). Under auto for the algorithms that send
     * their input; under a stated minimum (regions too) for every algorithm, which the cost
     * model must then price with one copy per message, not UCX's two (the bcasts above may
     * have gone by single copy already, but priced as two copies shared by the CPUs). Only
     * where every size takes single copy: messages within its bounds (else the line would mix
     * the two paths). Such a message goes whole, whatever UCOLL_SEGMENT_SIZE */
    const ucoll_config_t *cfg = &ctx->cfg;
    const int stated_line = !cfg->single_copy_auto && tp_single_copy_min(ctx->tp) <= SC_MID_BYTES;
    if (ctx->single_copy_on && (cfg->single_copy_auto || stated_line) &&
        (cfg->single_copy_max == 0 || cfg->single_copy_max >= BIG_BYTES)) {
        ctx->single_copy_forced = 1;
        time_big_path(world, input, buf, SC_MID_BYTES, links, &mine[4], &mine[5]);
        ctx->single_copy_forced = 0;
    }
    /* not the application's (UCOLL_TEST_SHM_COUNTS) */
    tp_get_stats(ctx->tp, &after);
    ctx->measure_copies_sent = after.copies_sent - before.copies_sent;
    ctx->measure_copies_read = after.copies_read - before.copies_read;
    ctx->measure_copies_mapped = after.copies_mapped - before.copies_mapped;
    if (in_region)
        (void)tp_region_free(buf);
    else
        free(buf);
    return UCOLL_OK;
}

/* ranks on several hosts (or no rings): mine[0..1] = alpha and beta of one path, from bcasts
 * of 8 B and 256 KiB after a barrier, a round being 1/ceil(log2 p) of one. Each iteration's
 * time is its slowest rank's, as a collective's is: a rank's own times alone may all be short
 * (a leaf that left the barrier last finds its data there) */
enum { HOSTS_BIG_BYTES = 256 * 1024 };
static ucoll_status_t measure_hosts(ucoll_comm_t *world, double *mine)
{
    enum { SMALL_ITERS = 31, BIG_ITERS = 15 };
    double t[SMALL_ITERS + BIG_ITERS], t_max[SMALL_ITERS + BIG_ITERS];
    char *buf = calloc(1, HOSTS_BIG_BYTES);
    if (buf == NULL)
        return UCOLL_ERR_NO_MEMORY;
    time_bcast(world, buf, 8, SMALL_ITERS, t);
    time_bcast(world, buf, HOSTS_BIG_BYTES, BIG_ITERS, t + SMALL_ITERS);
    free(buf);
    ucoll_status_t st =
        ucoll_allreduce(world, t, t_max, sizeof(t) / sizeof(t[0]), UCOLL_FLOAT64, UCOLL_OP_MAX);
    if (st != UCOLL_OK)
        return st;
    const double rounds = sched_ceil_log2((uint64_t)world->size);
    const double t_small = lower_quartile(t_max, SMALL_ITERS);
    const double t_big = lower_quartile(t_max + SMALL_ITERS, BIG_ITERS);
    /* a slope at or below 0 (the 8 B times stretched) would price no bytes across hosts */
    cost_two_sizes(t_small * 1e6 / rounds, t_big * 1e6 / rounds, HOSTS_BIG_BYTES, &mine[0],
                   &mine[1]);
    return UCOLL_OK;
}

ucoll_status_t measure_cost_model(ucoll_ctx_t *ctx)
{
    ucoll_comm_t *world = ctx->world;
    const ucoll_config_t *cfg = &ctx->cfg;
    const int measure_net = world->size > 1 && (cfg->alpha_us < 0 || cfg->beta_ns < 0);
    /* mine[0..5]: alpha, beta, the big path's and single copy's alpha and beta; then
     * gamma[op][dtype] */
    double mine[NET_WORDS + UCOLL_NOPS * UCOLL_NDTYPES],
        agreed[NET_WORDS + UCOLL_NOPS * UCOLL_NDTYPES];
    double *gamma = &mine[NET_WORDS];
    size_t n = 0; /* values to agree, from the start of mine */
    const size_t ring_max = ctx->ring_max;

    memset(mine, 0, sizeof(mine));
    ctx->net = (cost_params_t){0};
    ctx->net.alpha_us = cfg->alpha_us >= 0 ? cfg->alpha_us : COST_DEFAULT_ALPHA_US;
    ctx->net.beta_ns = cfg->beta_ns >= 0 ? cfg->beta_ns : COST_DEFAULT_BETA_NS;
    if (measure_net) {
        /* timed as the flat binomial tree the formulas assume, whatever auto or
         * UCOLL_BCAST_ALG would run (node-aware on more than one host) */
        int param = 0;
        const alg_choice_t chosen = world->alg[UCOLL_COLL_BCAST];
        world->alg[UCOLL_COLL_BCAST] =
            (alg_choice_t){alg_lookup(UCOLL_COLL_BCAST, "binomial", &param), param};
        ucoll_status_t st =
            ring_max > 0 ? measure_one_host(ctx, ring_max, mine) : measure_hosts(world, mine);
        world->alg[UCOLL_COLL_BCAST] = chosen;
        if (st != UCOLL_OK)
            return st;
        for (int i = 1; i < NET_WORDS; i++)
            if (mine[i] < 0)
                mine[i] = 0;
        n = NET_WORDS;
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
    int big_floored = 0, sc_floored = 0; /* raised to the rings' alpha (cost_floor_alphas) */
    /* two paths only when both were measured: a stated alpha or beta prices every message */
    if (measure_net && ring_max > 0 && cfg->alpha_us < 0 && cfg->beta_ns < 0) {
        ctx->net.small_max = ring_max;
        ctx->net.big_alpha_us = mine[2];
        ctx->net.big_beta_ns = mine[3];
        if (mine[5] > 0) { /* single copy measured on every rank (its words are maxima) */
            /* the minimum in force: regions' is raised where ranks share CPUs (agree.c) */
            ctx->net.sc_min = tp_single_copy_min(ctx->tp);
            ctx->net.sc_max = cfg->single_copy_max;
            ctx->net.sc_every = !cfg->single_copy_auto;
            ctx->net.sc_lends = cfg->single_copy_regions;
            ctx->net.sc_alpha_us = mine[4];
            ctx->net.sc_beta_ns = mine[5];
        }
        cost_floor_alphas(&ctx->net);
        big_floored = ctx->net.big_alpha_us > mine[2];
        sc_floored = ctx->net.sc_beta_ns > 0 && ctx->net.sc_alpha_us > mine[4];
    }
    ctx->net.crowd_cpus = ctx->crowd_cpus;
    /* from the launcher's layout, which every rank shares. Single copy lifts it only for the
     * messages that take it (cost_single_copy): an exchange of data the peer had just written
     * (rhrd, ring) measured slower by single copy than by two copies, and auto leaves those
     * algorithms on two copies */
    ctx->net.duplex_copies = ctx->one_host;
    if (cfg->gamma_ns < 0)
        memcpy(ctx->gamma_ns, gamma, sizeof(ctx->gamma_ns));
    if (cfg->print_cost && world->rank == 0) {
        const cost_params_t *c = &ctx->net;
        if (c->crowd_cpus > 0)
            fprintf(stderr,
                    "ucoll: cost model: %d ranks share %u CPUs, a round of more than %u "
                    "messages is priced messages/%u times longer\n",
                    world->size, c->crowd_cpus, c->crowd_cpus, c->crowd_cpus);
        if (c->duplex_copies)
            fprintf(stderr, "ucoll: cost model: one host: a rank that sends and receives in one "
                            "round is priced both copies (CPU volume)\n");
        if (c->sc_beta_ns > 0)
            fprintf(stderr,
                    "ucoll: cost model: single copy of %zu to %zu B (%s) alpha %.3f us%s, beta "
                    "%.4f ns/B (measured), the receiver's copy alone; %llu of rank 0's %llu "
                    "single-copy reads at init through mappings\n",
                    c->sc_min, c->sc_max,
                    c->sc_every ? "every algorithm, stated" : "algorithms that send their input",
                    c->sc_alpha_us, sc_floored ? " (the rings')" : "", c->sc_beta_ns,
                    ctx->measure_copies_mapped, ctx->measure_copies_read);
        if (c->sc_beta_ns > 0 && c->sc_lends)
            fprintf(stderr, "ucoll: cost model: single copy from regions: a receive that the "
                            "next (+) reads in place is lent, priced without a copy\n");
        if (c->small_max > 0)
            fprintf(stderr,
                    "ucoll: cost model on %d ranks: up to %zu B (rings) alpha %.3f us, beta %.4f "
                    "ns/B; above (UCX) alpha %.3f us%s, beta %.4f ns/B (measured); gamma of "
                    "sum %.4f ns/B on float32, %.4f on float64\n",
                    world->size, c->small_max, c->alpha_us, c->beta_ns, c->big_alpha_us,
                    big_floored ? " (the rings')" : "", c->big_beta_ns,
                    ctx->gamma_ns[UCOLL_OP_SUM][UCOLL_FLOAT32],
                    ctx->gamma_ns[UCOLL_OP_SUM][UCOLL_FLOAT64]);
        else
            fprintf(stderr,
                    "ucoll: cost model on %d ranks: alpha %.3f us, beta %.4f ns/B (%s); gamma "
                    "of sum %.4f ns/B on float32, %.4f on float64\n",
                    world->size, c->alpha_us, c->beta_ns,
                    measure_net ? "measured" : "stated or default",
                    ctx->gamma_ns[UCOLL_OP_SUM][UCOLL_FLOAT32],
                    ctx->gamma_ns[UCOLL_OP_SUM][UCOLL_FLOAT64]);
    }
    return UCOLL_OK;
}
