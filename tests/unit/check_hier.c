/*
 * Unit tests of the node-aware forms (src/alg/hier_*.c, cost_hier.c) on the symbolic executor:
 * every form's result on contiguous, uneven, round-robin and random layouts with every leaders'
 * algorithm that serves the hosts, commutative and not, every root of the rooted ones; the
 * messages and bytes that cross hosts against the leaders' algorithm run alone on one rank per
 * host and against figures worked out by hand (docs/algorithms.md 4.1); the rounds; the flat forms'
 * cross-host figures on a layout; and where auto takes a node-aware form.
 */
#include "alg/alg.h"
#include "alg/cost.h"
#include "symbolic.h"

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REQUIRE(cond, ...)                                                                         \
    do {                                                                                           \
        if (!(cond))                                                                               \
            ck_abort_msg(__VA_ARGS__);                                                             \
    } while (0)

static const ucoll_coll_t hier_colls[] = {
    UCOLL_COLL_ALLREDUCE, UCOLL_COLL_REDUCE, UCOLL_COLL_BCAST, UCOLL_COLL_BARRIER,
    UCOLL_COLL_ALLGATHER, UCOLL_COLL_EXSCAN, UCOLL_COLL_SCAN};
#define NCOLLS (sizeof(hier_colls) / sizeof(hier_colls[0]))

typedef struct {
    sched_hosts_t H;
    sched_args_t *args;
} layout_run_t;

/* p ranks, rank r on host id[r] */
static void layout_init(layout_run_t *L, int p, const int *id)
{
    REQUIRE(sched_hosts_init(&L->H, p, id) == 0, "sched_hosts_init p=%d", p);
    L->args = calloc((size_t)p, sizeof(*L->args));
    REQUIRE(L->args != NULL, "no memory");
}

static void layout_free(layout_run_t *L)
{
    sched_hosts_free(&L->H);
    free(L->args);
}

/* hosts of `sizes` (nh of them) holding consecutive ranks; returns p */
static int contiguous_ids(int *id, const int *sizes, int nh)
{
    int p = 0;
    for (int g = 0; g < nh; g++)
        for (int i = 0; i < sizes[g]; i++)
            id[p++] = 100 - g; /* any identifiers: the hosts are numbered by lowest rank */
    return p;
}

/* runs alg (node-aware with plan, or flat with plan NULL) on L's layout */
static int run_on(layout_run_t *L, const alg_desc_t *alg, size_t count, int root, int comm,
                  const node_aware_plan_t *plan, symbolic_result_t *res)
{
    const int p = L->H.size;
    for (int r = 0; r < p; r++) {
        sched_args_t *a = &L->args[r];
        memset(a, 0, sizeof(*a));
        a->rank = r;
        a->size = p;
        a->root = root;
        a->count = alg->coll == UCOLL_COLL_BARRIER ? 0 : count;
        a->elem_size = 1;
        a->commutative = comm;
        a->hosts = &L->H;
        if (plan != NULL)
            cost_plan_args(plan, &L->H, a);
    }
    return symbolic_run_args(alg, alg->coll, p, L->args, res);
}

/* the algorithms the leaders may run for coll on h hosts (non-commutative: order-preserving) */
static const alg_desc_t *leader_algs(ucoll_coll_t coll, size_t *n)
{
    const ucoll_coll_t lc = coll == UCOLL_COLL_SCAN        ? UCOLL_COLL_EXSCAN
                            : coll == UCOLL_COLL_ALLGATHER ? UCOLL_COLL_ALLGATHERV
                                                           : coll;
    return alg_list(lc, n);
}

static int leader_serves(const alg_desc_t *l, int h, int comm)
{
    if ((l->flags & ALG_POWER_OF_TWO) && (h & (h - 1)) != 0)
        return 0;
    if (l->flags & ALG_PARAM_REQUIRED)
        return 0;
    return comm || (l->flags & ALG_ORDER_PRESERVING);
}

static const alg_desc_t *named(ucoll_coll_t coll, const char *name);

/* variant 0: binomial local phases; 1: rhrd (commutative) and scatter-allgather */
static node_aware_plan_t plan_of(const alg_desc_t *leaders, int param, int variant, int comm)
{
    node_aware_plan_t plan = {leaders, param, NULL, NULL};
    if (variant == 1) {
        plan.local_reduce = named(UCOLL_COLL_REDUCE, comm ? "rhrd" : "binomial");
        plan.local_bcast = named(UCOLL_COLL_BCAST, "scatter-allgather");
    }
    return plan;
}

static int refused_layout(ucoll_coll_t coll, const sched_hosts_t *H, int comm)
{
    return !H->contiguous &&
           (coll == UCOLL_COLL_EXSCAN || coll == UCOLL_COLL_SCAN ||
            (!comm && (coll == UCOLL_COLL_REDUCE || coll == UCOLL_COLL_ALLREDUCE)));
}

/* every form, leaders' algorithm, root and op kind on one layout */
static void check_layout(const int *id, int p, const char *what)
{
    layout_run_t L;
    layout_init(&L, p, id);
    const int h = L.H.nhosts;
    for (size_t ci = 0; ci < NCOLLS; ci++) {
        const ucoll_coll_t coll = hier_colls[ci];
        const alg_desc_t *na = alg_node_aware(coll);
        REQUIRE(na != NULL && (na->flags & ALG_NODE_AWARE), "%s: no node-aware form",
                alg_coll_name(coll));
        const int rooted = coll == UCOLL_COLL_REDUCE || coll == UCOLL_COLL_BCAST;
        size_t nl;
        const alg_desc_t *ls = leader_algs(coll, &nl);
        for (int comm = 0; comm <= 1; comm++) {
            for (size_t li = 0; li < nl; li++) {
                if (!leader_serves(&ls[li], h, comm))
                    continue;
                const int param = (ls[li].flags & ALG_PARAM_OPTIONAL) ? 2 : ls[li].param;
                for (int v = 0; v < 2; v++)
                    for (int root = 0; root < (rooted ? p : 1); root++) {
                        symbolic_result_t res;
                        const size_t count = coll == UCOLL_COLL_ALLGATHER ? 3 : 12;
                        const node_aware_plan_t plan = plan_of(&ls[li], param, v, comm);
                        const int rc = run_on(&L, na, count, root, comm, &plan, &res);
                        if (refused_layout(coll, &L.H, comm)) {
                            REQUIRE(rc == -1,
                                    "%s %s: %s node-aware built on a layout it cannot keep "
                                    "in order",
                                    what, alg_coll_name(coll),
                                    comm ? "commutative" : "non-commutative");
                        } else {
                            REQUIRE(rc == 0 && res.ok, "%s %s node-aware leaders=%s root=%d %s: %s",
                                    what, alg_coll_name(coll), ls[li].name, root,
                                    comm ? "commutative" : "non-commutative", res.error);
                        }
                        symbolic_result_free(&res);
                    }
            }
        }
    }
    layout_free(&L);
}

START_TEST(test_contiguous_layouts)
{
    static const int shapes[][6] = {
        {2, 2, 2, 2, 2, 0}, {1, 1, 1, 1, 0, 0}, {3, 3, 0, 0, 0, 0}, {4, 4, 4, 0, 0, 0},
        {3, 2, 1, 0, 0, 0}, {1, 4, 2, 1, 0, 0}, {5, 0, 0, 0, 0, 0}, {2, 3, 2, 3, 2, 0},
        {7, 1, 0, 0, 0, 0}, {1, 1, 6, 0, 0, 0},
    };
    for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
        int nh = 0, id[64];
        while (nh < 6 && shapes[s][nh] > 0)
            nh++;
        const int p = contiguous_ids(id, shapes[s], nh);
        char what[64];
        snprintf(what, sizeof(what), "layout #%zu (p=%d, %d hosts)", s, p, nh);
        check_layout(id, p, what);
    }
}
END_TEST

START_TEST(test_round_robin_and_random_layouts)
{
    int id[40];
    for (int p = 2; p <= 12; p++)
        for (int nh = 2; nh < p; nh++) {
            for (int r = 0; r < p; r++)
                id[r] = r % nh;
            char what[64];
            snprintf(what, sizeof(what), "round-robin p=%d hosts=%d", p, nh);
            check_layout(id, p, what);
        }
    unsigned seed = 12345;
    for (int t = 0; t < 40; t++) {
        seed = seed * 1103515245u + 12345u;
        const int p = 2 + (int)((seed >> 16) % 19), nh = 1 + (int)((seed >> 8) % 5);
        for (int r = 0; r < p; r++) {
            seed = seed * 1103515245u + 12345u;
            id[r] = (int)((seed >> 16) % (unsigned)nh);
        }
        char what[64];
        snprintf(what, sizeof(what), "random layout #%d (p=%d)", t, p);
        check_layout(id, p, what);
    }
}
END_TEST

/* messages every rank of a flat run of alg on p ranks sends, in all */
static uint64_t messages_of(const alg_desc_t *alg, int param, int p, size_t count,
                            const size_t *counts, int root)
{
    uint64_t n = 0;
    size_t *displs = NULL;
    if (counts != NULL) {
        displs = calloc((size_t)p, sizeof(size_t));
        REQUIRE(displs != NULL, "no memory");
        for (int i = 1; i < p; i++)
            displs[i] = displs[i - 1] + counts[i - 1];
    }
    for (int r = 0; r < p; r++) {
        sched_t s;
        sched_init(&s);
        const sched_args_t a = {.rank = r,
                                .size = p,
                                .root = root,
                                .count = counts != NULL ? counts[r] : count,
                                .elem_size = 1,
                                .param = param,
                                .commutative = 1,
                                .recv_counts = counts,
                                .recv_displs = displs};
        REQUIRE(alg->build(&s, &a) == 0, "%s builds on %d ranks", alg->name, p);
        for (size_t i = 0; i < s.nsteps; i++)
            n += s.steps[i].kind == SCHED_XCHG && s.steps[i].send_peer >= 0;
        sched_destroy(&s);
    }
    free(displs);
    return n;
}

static const alg_desc_t *named(ucoll_coll_t coll, const char *name)
{
    int param;
    const alg_desc_t *a = alg_lookup(coll, name, &param);
    REQUIRE(a != NULL, "%s %s", alg_coll_name(coll), name);
    return a;
}

/* 4.7's example: allreduce rs-ag among 4 leaders of 2 ranks each, L = 1024 bytes: every leader
 * sends 2 ceil(log2 4) = 4 messages and 2 (4-1)/4 L = 1536 bytes across hosts, nobody else any;
 * 1 + 4 + 1 rounds. Flat recursive doubling on the same layout: partners r^2 and r^4 are on
 * other hosts, so each rank sends 2 messages of L across */
START_TEST(test_cross_host_by_hand)
{
    const int sizes[] = {2, 2, 2, 2};
    int id[8];
    const int p = contiguous_ids(id, sizes, 4);
    layout_run_t L;
    layout_init(&L, p, id);
    symbolic_result_t res;
    const alg_desc_t *na = alg_node_aware(UCOLL_COLL_ALLREDUCE);
    node_aware_plan_t plan = plan_of(named(UCOLL_COLL_ALLREDUCE, "rs-ag"), 0, 0, 1);
    REQUIRE(run_on(&L, na, 1024, 0, 1, &plan, &res) == 0 && res.ok, "%s", res.error);
    for (int r = 0; r < p; r++) {
        const int leader = r % 2 == 0;
        ck_assert_uint_eq(res.rank_cross_msgs[r], leader ? 4 : 0);
        ck_assert_uint_eq(res.rank_cross_bytes[r], leader ? 1536 : 0);
    }
    ck_assert_uint_eq(res.cross_msgs, 16);
    ck_assert_uint_eq(res.cross_bytes, 4 * 1536);
    ck_assert_uint_eq(res.rounds, 6);
    symbolic_result_free(&res);

    REQUIRE(run_on(&L, named(UCOLL_COLL_ALLREDUCE, "recursive-doubling"), 1024, 0, 1, NULL, &res) ==
                    0 &&
                res.ok,
            "%s", res.error);
    for (int r = 0; r < p; r++) {
        ck_assert_uint_eq(res.rank_cross_msgs[r], 2);
        ck_assert_uint_eq(res.rank_cross_bytes[r], 2 * 1024);
    }
    ck_assert_uint_eq(res.rounds, 3);
    symbolic_result_free(&res);

    /* barrier: dissemination on 4 leaders, 2 rounds of one empty message each */
    plan = plan_of(named(UCOLL_COLL_BARRIER, "dissemination"), 0, 0, 1);
    REQUIRE(run_on(&L, alg_node_aware(UCOLL_COLL_BARRIER), 0, 0, 1, &plan, &res) == 0 && res.ok,
            "%s", res.error);
    ck_assert_uint_eq(res.cross_msgs, 8);
    ck_assert_uint_eq(res.cross_bytes, 0);
    ck_assert_uint_eq(res.rounds, 1 + 2 + 1);
    symbolic_result_free(&res);

    /* bcast from rank 3: a binomial tree on 4 leaders, 3 messages of m across; rank 3 leads
     * its host, so the local tree of host 1 starts there */
    plan = plan_of(named(UCOLL_COLL_BCAST, "binomial"), 0, 0, 1);
    REQUIRE(run_on(&L, alg_node_aware(UCOLL_COLL_BCAST), 100, 3, 1, &plan, &res) == 0 && res.ok,
            "%s", res.error);
    ck_assert_uint_eq(res.cross_msgs, 3);
    ck_assert_uint_eq(res.cross_bytes, 300);
    ck_assert_uint_eq(res.rank_cross_msgs[3], 2);
    ck_assert_uint_eq(res.rounds, 2 + 1);
    symbolic_result_free(&res);

    /* exscan: best-doubling on 2 ranks (1 round), on 4 leaders (2 rounds), a bcast (1) */
    plan = plan_of(named(UCOLL_COLL_EXSCAN, "best-doubling"), 0, 0, 0);
    REQUIRE(run_on(&L, alg_node_aware(UCOLL_COLL_EXSCAN), 64, 0, 0, &plan, &res) == 0 && res.ok,
            "%s", res.error);
    ck_assert_uint_eq(res.rounds, 4);
    /* the leaders are the hosts' last ranks; the last of them sends nothing */
    for (int r = 0; r < p; r++) {
        const int sends = r % 2 == 1 && r != p - 1;
        ck_assert_int_eq(res.rank_cross_msgs[r] > 0, sends);
    }
    ck_assert_uint_eq(res.cross_msgs,
                      messages_of(named(UCOLL_COLL_EXSCAN, "best-doubling"), 0, 4, 64, NULL, 0));
    symbolic_result_free(&res);
    layout_free(&L);
}
END_TEST

/* every form on several layouts: across hosts exactly the leaders' algorithm run alone on one
 * rank per host (its messages, and its bytes) */
START_TEST(test_cross_host_is_the_leaders)
{
    static const int shapes[][4] = {{2, 2, 2, 2}, {3, 2, 1, 0}, {4, 4, 4, 0}, {1, 3, 3, 1}};
    for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
        int nh = 0, id[32];
        while (nh < 4 && shapes[s][nh] > 0)
            nh++;
        const int p = contiguous_ids(id, shapes[s], nh);
        layout_run_t L;
        layout_init(&L, p, id);
        for (size_t ci = 0; ci < NCOLLS; ci++) {
            const ucoll_coll_t coll = hier_colls[ci];
            size_t nl;
            const alg_desc_t *ls = leader_algs(coll, &nl);
            const size_t c = coll == UCOLL_COLL_ALLGATHER ? 5 : 60;
            for (size_t li = 0; li < nl; li++) {
                if (!leader_serves(&ls[li], nh, 1))
                    continue;
                const int param = (ls[li].flags & ALG_PARAM_OPTIONAL) ? 3 : ls[li].param;
                const int root = coll == UCOLL_COLL_REDUCE || coll == UCOLL_COLL_BCAST ? p - 1 : 0;
                symbolic_result_t res, lead;
                /* whatever the local phases run */
                const node_aware_plan_t plan = plan_of(&ls[li], param, (int)(li % 2), 1);
                REQUIRE(run_on(&L, alg_node_aware(coll), c, root, 1, &plan, &res) == 0 && res.ok,
                        "%s leaders=%s: %s", alg_coll_name(coll), ls[li].name, res.error);
                /* the leaders alone: allgather's with each host's bundle */
                size_t counts[8];
                for (int g = 0; g < nh; g++)
                    counts[g] = (size_t)shapes[s][g] * c;
                const int lroot = root == 0 ? 0 : nh - 1;
                const size_t lc = coll == UCOLL_COLL_BARRIER ? 0 : c;
                const uint64_t msgs = messages_of(
                    &ls[li], param, nh, lc, coll == UCOLL_COLL_ALLGATHER ? counts : NULL, lroot);
                ck_assert_uint_eq(res.cross_msgs, msgs);
                if (coll == UCOLL_COLL_ALLGATHER) {
                    sched_args_t la[8];
                    size_t displs[8] = {0};
                    for (int g = 1; g < nh; g++)
                        displs[g] = displs[g - 1] + counts[g - 1];
                    for (int g = 0; g < nh; g++)
                        la[g] = (sched_args_t){.rank = g,
                                               .size = nh,
                                               .count = counts[g],
                                               .elem_size = 1,
                                               .param = param,
                                               .commutative = 1,
                                               .recv_counts = counts,
                                               .recv_displs = displs};
                    REQUIRE(symbolic_run_args(&ls[li], ls[li].coll, nh, la, &lead) == 0 && lead.ok,
                            "%s", lead.error);
                } else {
                    REQUIRE(symbolic_run(&ls[li], param, ls[li].coll, nh, lc, 1, lroot, 1, &lead) ==
                                    0 &&
                                lead.ok,
                            "%s", lead.error);
                }
                ck_assert_uint_eq(res.cross_bytes, lead.total_bytes);
                symbolic_result_free(&res);
                symbolic_result_free(&lead);
            }
        }
        layout_free(&L);
    }
}
END_TEST

START_TEST(test_auto_serves)
{
    int id[16];
    const int s42[] = {2, 2, 2, 2}, s41[] = {1, 1, 1, 1}, s8[] = {8}, s321[] = {3, 2, 1};
    layout_run_t L;
    struct {
        const int *sizes;
        int nh, served;
    } shapes[] = {{s42, 4, 1}, {s41, 4, 0}, {s8, 1, 0}, {s321, 3, 1}};
    for (size_t s = 0; s < 4; s++) {
        const int p = contiguous_ids(id, shapes[s].sizes, shapes[s].nh);
        layout_init(&L, p, id);
        for (size_t ci = 0; ci < NCOLLS; ci++)
            for (int comm = 0; comm <= 1; comm++)
                ck_assert_int_eq(cost_node_aware_serves(hier_colls[ci], &L.H, comm),
                                 shapes[s].served);
        ck_assert_int_eq(cost_node_aware_serves(UCOLL_COLL_ALLTOALL, &L.H, 1), 0);
        layout_free(&L);
    }
    /* round robin: only what does not need the hosts' ranks in order */
    for (int r = 0; r < 8; r++)
        id[r] = r % 4;
    layout_init(&L, 8, id);
    ck_assert_int_eq(L.H.contiguous, 0);
    ck_assert_int_eq(cost_node_aware_serves(UCOLL_COLL_ALLREDUCE, &L.H, 1), 1);
    ck_assert_int_eq(cost_node_aware_serves(UCOLL_COLL_ALLREDUCE, &L.H, 0), 0);
    ck_assert_int_eq(cost_node_aware_serves(UCOLL_COLL_EXSCAN, &L.H, 1), 0);
    ck_assert_int_eq(cost_node_aware_serves(UCOLL_COLL_BCAST, &L.H, 1), 1);
    ck_assert_int_eq(cost_node_aware_serves(UCOLL_COLL_ALLGATHER, &L.H, 1), 1);
    /* each phase: the model's flat choice for as many ranks (4 leaders, 2 ranks per host);
     * allgather's leaders run a v form, scan's an exscan of the totals */
    const cost_params_t cost = {.alpha_us = 1, .beta_ns = 0.1, .gamma_ns = 0.1};
    node_aware_plan_t plan;
    REQUIRE(cost_node_aware_plan(UCOLL_COLL_ALLGATHER, &L.H, 8, 1, 1, &cost, 0, 0, &plan) == 0 &&
                plan.leaders->coll == UCOLL_COLL_ALLGATHERV && plan.local_reduce == NULL,
            "allgather's leaders");
    REQUIRE(cost_node_aware_plan(UCOLL_COLL_SCAN, &L.H, 8, 1, 1, &cost, 0, 0, &plan) == 0 &&
                plan.leaders->coll == UCOLL_COLL_EXSCAN,
            "scan's leaders run exscan");
    REQUIRE(cost_node_aware_plan(UCOLL_COLL_BARRIER, &L.H, 0, 1, 1, &cost, 0, 0, &plan) == 0 &&
                plan.local_reduce == NULL && plan.local_bcast == NULL,
            "barrier's local phases are fixed");
    for (size_t m = 8; m <= ((size_t)1 << 24); m *= 64) {
        REQUIRE(cost_node_aware_plan(UCOLL_COLL_ALLREDUCE, &L.H, m, 1, 1, &cost, 0, 0, &plan) == 0,
                "allreduce plan");
        const char *lead = cost_select_elems(UCOLL_COLL_ALLREDUCE, 4, m, 1, 1, &cost, 0, 0);
        const char *red = cost_select_elems(UCOLL_COLL_REDUCE, 2, m, 1, 1, &cost, 0, 0);
        const char *bc = cost_select_elems(UCOLL_COLL_BCAST, 2, m, 1, 1, &cost, 0, 0);
        REQUIRE(strcmp(plan.leaders->name, lead) == 0 &&
                    strcmp(plan.local_reduce->name, red) == 0 &&
                    strcmp(plan.local_bcast->name, bc) == 0,
                "allreduce m=%zu: %s/%s/%s, the model's %s/%s/%s", m, plan.leaders->name,
                plan.local_reduce->name, plan.local_bcast->name, lead, red, bc);
    }
    layout_free(&L);
    /* 2 hosts of 5: a flat 16 MiB bcast on 5 ranks is the pipeline, but a local phase takes no
     * parameter: the model's choice among the others (scatter-allgather, test_auto_choices in
     * check_cost_vector.c), and the plan stands */
    static const int s55[] = {5, 5};
    layout_init(&L, contiguous_ids(id, s55, 2), id);
    ck_assert_str_eq(cost_select_elems(UCOLL_COLL_BCAST, 5, 16u << 20, 1, 1, &cost, 0, 0),
                     "pipeline");
    ck_assert_int_eq(
        cost_node_aware_plan(UCOLL_COLL_BCAST, &L.H, 16u << 20, 1, 1, &cost, 0, 0, &plan), 0);
    ck_assert_str_eq(plan.local_bcast->name, "scatter-allgather");
    ck_assert_int_eq(
        cost_node_aware_plan(UCOLL_COLL_ALLREDUCE, &L.H, 16u << 20, 1, 1, &cost, 0, 0, &plan), 0);
    ck_assert_str_eq(plan.local_bcast->name, "scatter-allgather");
    layout_free(&L);
}
END_TEST

/* the executor trusts the plan's bound instead of cost_fits_tag: every schedule of an accepted
 * plan stays within it (and so within the tag's 255 rounds), and plans past it are refused */
START_TEST(test_round_bound)
{
    const cost_params_t cost = {.alpha_us = 1, .beta_ns = 0.1, .gamma_ns = 0.1};
    static const int hosts[] = {2, 5, 64, 127, 200, 250};
    static const size_t counts[] = {1, 4096, (size_t)1 << 20, (size_t)1 << 24};
    int refused = 0, accepted = 0;
    for (size_t hi = 0; hi < sizeof(hosts) / sizeof(hosts[0]); hi++)
        for (int k = 2; k <= 3; k++) {
            int id[750];
            const int p = hosts[hi] * k;
            for (int r = 0; r < p; r++)
                id[r] = r / k;
            layout_run_t L;
            layout_init(&L, p, id);
            for (size_t ci = 0; ci < NCOLLS; ci++)
                for (size_t mi = 0; mi < sizeof(counts) / sizeof(counts[0]); mi++) {
                    const ucoll_coll_t coll = hier_colls[ci];
                    /* allgather's count is one block: keep the whole result moderate */
                    const size_t m =
                        coll == UCOLL_COLL_ALLGATHER ? counts[mi] / 256 + 1 : counts[mi];
                    node_aware_plan_t plan;
                    if (cost_node_aware_plan(coll, &L.H, m, 1, 1, &cost, 0, 0, &plan) != 0) {
                        refused++;
                        continue;
                    }
                    accepted++;
                    const unsigned bound = cost_node_aware_bound(&plan, &L.H);
                    REQUIRE(bound <= 255, "%s h=%d: an accepted plan of %u rounds",
                            alg_coll_name(coll), hosts[hi], bound);
                    if (p > 400 && coll == UCOLL_COLL_ALLGATHER)
                        continue; /* (a symbolic run of p^2 blocks: the smaller layouts do) */
                    symbolic_result_t res;
                    REQUIRE(
                        run_on(&L, alg_node_aware(coll), m, p - 1, 1, &plan, &res) == 0 && res.ok,
                        "%s h=%d k=%d m=%zu: %s", alg_coll_name(coll), hosts[hi], k, m, res.error);
                    REQUIRE(res.rounds <= bound, "%s h=%d k=%d m=%zu: %u rounds, bound %u",
                            alg_coll_name(coll), hosts[hi], k, m, res.rounds, bound);
                    symbolic_result_free(&res);
                }
            layout_free(&L);
        }
    REQUIRE(refused > 0 && accepted > refused, "refused %d, accepted %d", refused, accepted);
}
END_TEST

START_TEST(test_hosts_numbering)
{
    const int id[] = {7, 3, 7, 9, 3, 9, 9};
    sched_hosts_t H;
    ck_assert_int_eq(sched_hosts_init(&H, 7, id), 0);
    ck_assert_int_eq(H.nhosts, 3);
    const int host_of[] = {0, 1, 0, 2, 1, 2, 2}, by_host[] = {0, 2, 1, 4, 3, 5, 6};
    const int start[] = {0, 2, 4, 7};
    for (int r = 0; r < 7; r++) {
        ck_assert_int_eq(H.host_of[r], host_of[r]);
        ck_assert_int_eq(H.ranks_by_host[r], by_host[r]);
    }
    for (int g = 0; g <= 3; g++)
        ck_assert_int_eq(H.host_start[g], start[g]);
    ck_assert_int_eq(H.max_per_host, 3);
    ck_assert_int_eq(H.contiguous, 0);
    sched_hosts_free(&H);
    const int blocks[] = {5, 5, 2, 2, 2, 8};
    ck_assert_int_eq(sched_hosts_init(&H, 6, blocks), 0);
    ck_assert_int_eq(H.contiguous, 1);
    ck_assert_int_eq(H.nhosts, 3);
    sched_hosts_free(&H);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("hier");
    TCase *tc = tcase_create("node-aware");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_hosts_numbering);
    tcase_add_test(tc, test_auto_serves);
    tcase_add_test(tc, test_cross_host_by_hand);
    tcase_add_test(tc, test_round_bound);
    tcase_add_test(tc, test_cross_host_is_the_leaders);
    tcase_add_test(tc, test_contiguous_layouts);
    tcase_add_test(tc, test_round_robin_and_random_layouts);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
