/*
 * tests/mp/stats_test.c: lazy connections, checked against the schedules themselves. Every
 * rank runs a fixed set of collectives with explicit algorithms (several collectives, sizes and
 * roots), then builds, with the library's own schedule builders (src/alg), the schedule of
 * every collective it ran, finalize's two barriers included, and collects the distinct peers of
 * their rounds and the messages it sent. At finalize, UCOLL_STATS=1 prints this rank's line on
 * stderr, which the test captures in a file and compares:
 *   - endpoints == distinct peers; address_lookups == distinct peers (PMIx fetches a peer's
 *     address on its first use only);
 *   - messages_ucx + messages_shm == messages sent; with the default channels (no UCOLL_SHM
 *     or UCOLL_FAILURE_DETECTION set) messages_shm == those of at most 4096 bytes to peers on
 *     this rank's host, and rings == the distinct peers they went to: every message to another
 *     host, and every larger one, went through UCX.
 * The hosts: with UCOLL_TEST_HOSTS=N (simulated) rank r acts as on host r % N; with
 * STATS_TEST_HOSTS=H0,H1,... (a launch across real hosts: one host index per rank) rank r runs
 * on host Hr, which the test checks against SLURM_NODEID when Slurm sets it; otherwise every
 * rank is on one host.
 * The collectives are chosen so that no rank talks to every other one (checked at 8 ranks and
 * more): a library that connects every peer at init (endpoints
 * == p - 1) fails. The node-aware forms run where the layout has more than one host and more
 * than one rank on some host (cost_node_aware_serves), with the leaders' algorithm the
 * library's model picks from the cost figures set here; finalize's barriers stay flat.
 * Init runs one collective of its own, the comparison of the settings that must agree across
 * ranks (src/agree.h: an allreduce of AGREE_ALG), on more than one host the gather of the
 * hosts (HOSTS_GATHER_ALG), and no measurement: the test sets the cost
 * model's figures (UCOLL_ALPHA_US, UCOLL_BETA_NS_PER_BYTE, UCOLL_GAMMA_NS_PER_BYTE), and uses no
 * auto selection. With UCOLL_CHECK=1 in the environment every collective (finalize's barriers
 * included) is preceded by its comparison, another such allreduce, and the test expects those
 * too; without it, no message beyond the schedules. Run under mpirun (np 8 and 16 in
 * tests/run-tests.sh); exits 0 when every check holds.
 */
#include "agree.h"
#include "alg/alg.h"
#include "alg/cost.h"
#include "ucoll.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { SHM_LIMIT = 4096 }; /* the rings' size limit (ucx_transport/shm.h) */

typedef struct {
    ucoll_coll_t coll;
    const char *alg;
    size_t count; /* int32 elements */
    int root;     /* < 0: p + root */
} call_t;

static const call_t calls[] = {
    {UCOLL_COLL_BCAST, "binomial", 16, 0},
    {UCOLL_COLL_BCAST, "binomial", 3000, -3}, /* 12000 bytes: through UCX */
    {UCOLL_COLL_REDUCE, "binomial", 100, -1},
    {UCOLL_COLL_ALLREDUCE, "recursive-doubling", 7, 0},
    {UCOLL_COLL_ALLREDUCE, "recursive-doubling", 2000, 0}, /* 8000 bytes */
    {UCOLL_COLL_EXSCAN, "recursive-doubling", 5, 0},
    {UCOLL_COLL_BARRIER, "dissemination", 0, 0},
    /* run only where the layout takes them (node_aware_runs): else "node-aware" would be
     * auto's choice */
    {UCOLL_COLL_ALLREDUCE, "node-aware", 7, 0},
    {UCOLL_COLL_ALLREDUCE, "node-aware", 2000, 0},
    {UCOLL_COLL_BCAST, "node-aware", 3000, -3},
    {UCOLL_COLL_REDUCE, "node-aware", 100, -1},
    {UCOLL_COLL_EXSCAN, "node-aware", 5, 0},
    {UCOLL_COLL_BARRIER, "node-aware", 0, 0},
};
#define NCALLS (sizeof(calls) / sizeof(calls[0]))

static int g_failed;

static void check(int ok, int rank, const char *what)
{
    if (!ok) {
        printf("stats_test rank %d: FAIL: %s\n", rank, what);
        g_failed++;
    }
}

static ucoll_status_t run_call(ucoll_comm_t *w, const call_t *c, int root, int rank, int p)
{
    int32_t *a = calloc(c->count + 1, sizeof(*a)), *b = calloc(c->count + 1, sizeof(*b));
    ucoll_status_t st = UCOLL_ERR_NO_MEMORY;
    if (a == NULL || b == NULL)
        goto out;
    for (size_t i = 0; i < c->count; i++)
        a[i] = (int32_t)(rank + 1) * (int32_t)(i + 1);
    if ((st = ucoll_set_algorithm(w, c->coll, c->alg)) != UCOLL_OK)
        goto out;
    switch (c->coll) {
    case UCOLL_COLL_BCAST:
        st = ucoll_bcast(w, a, c->count, UCOLL_INT32, root);
        for (size_t i = 0; st == UCOLL_OK && i < c->count; i++)
            check(a[i] == (int32_t)(root + 1) * (int32_t)(i + 1), rank, "bcast value");
        break;
    case UCOLL_COLL_REDUCE:
        st = ucoll_reduce(w, a, b, c->count, UCOLL_INT32, UCOLL_OP_SUM, root);
        for (size_t i = 0; st == UCOLL_OK && rank == root && i < c->count; i++)
            check(b[i] == (int32_t)(p * (p + 1) / 2) * (int32_t)(i + 1), rank, "reduce value");
        break;
    case UCOLL_COLL_ALLREDUCE:
        st = ucoll_allreduce(w, a, b, c->count, UCOLL_INT32, UCOLL_OP_SUM);
        for (size_t i = 0; st == UCOLL_OK && i < c->count; i++)
            check(b[i] == (int32_t)(p * (p + 1) / 2) * (int32_t)(i + 1), rank, "allreduce value");
        break;
    case UCOLL_COLL_EXSCAN:
        st = ucoll_exscan(w, a, b, c->count, UCOLL_INT32, UCOLL_OP_SUM);
        for (size_t i = 0; st == UCOLL_OK && rank > 0 && i < c->count; i++)
            check(b[i] == (int32_t)(rank * (rank + 1) / 2) * (int32_t)(i + 1), rank,
                  "exscan value");
        break;
    case UCOLL_COLL_BARRIER:
        st = ucoll_barrier(w);
        break;
    default:
        st = UCOLL_ERR_INVALID_ARG;
    }
out:
    free(a);
    free(b);
    return st;
}

typedef struct {
    unsigned char *peer, *ring_peer; /* per rank: a round talks to it; a ring send goes to it */
    unsigned long long messages, ring_messages;
    int tested_hosts; /* the layout: see host_of */
    int *host_map;
    sched_hosts_t hosts; /* the same layout, as the node-aware forms see it */
    cost_params_t cost;  /* what main sets, as the library reads it */
} expect_t;

/* the host rank r runs on (see the header) */
static int host_of(const expect_t *e, int r)
{
    if (e->tested_hosts > 0)
        return r % e->tested_hosts;
    return e->host_map != NULL ? e->host_map[r] : 0;
}

/* STATS_TEST_HOSTS: exactly p non-negative host indices, comma-separated; NULL if malformed */
static int *parse_hosts(const char *list, int p)
{
    int *map = calloc((size_t)p, sizeof(int)), n = 0;
    const char *c = list;
    while (map != NULL && *c != '\0' && n < p) {
        char *end;
        long v = strtol(c, &end, 10);
        if (end == c || v < 0 || v > 1000000 || (*end != ',' && *end != '\0'))
            break;
        map[n++] = (int)v;
        c = *end == ',' ? end + 1 : end;
    }
    if (map != NULL && (n != p || *c != '\0')) {
        free(map);
        map = NULL;
    }
    return map;
}

/* 1 when the library runs coll's node-aware form on this layout (a commutative op) */
static int node_aware_runs(const expect_t *e, ucoll_coll_t coll)
{
    return cost_node_aware_serves(coll, &e->hosts, 1);
}

/* adds this rank's schedule of one call (as src/coll.c builds it) to what it expects; a
 * node-aware one with the leaders' algorithm the library picks */
static int add_schedule(expect_t *e, ucoll_coll_t coll, const char *name, size_t count,
                        size_t elem_size, int root, int rank, int p)
{
    int param = 0;
    const alg_desc_t *alg = alg_lookup(coll, name, &param);
    node_aware_plan_t plan;
    if (alg == NULL)
        return -1;
    if (alg->flags & ALG_NODE_AWARE) {
        const size_t elems = coll == UCOLL_COLL_BARRIER ? 0 : count;
        if (!node_aware_runs(e, coll) ||
            cost_node_aware_plan(coll, &e->hosts, elems, elem_size, 1, &e->cost, 0, 0, &plan) != 0)
            return -1;
    }
    sched_args_t a;
    memset(&a, 0, sizeof(a));
    a.rank = rank;
    a.size = p;
    a.root = coll == UCOLL_COLL_REDUCE || coll == UCOLL_COLL_BCAST ? root : 0;
    a.count = coll == UCOLL_COLL_BARRIER ? 0 : count;
    a.elem_size = coll == UCOLL_COLL_BARRIER ? 1 : elem_size;
    a.param = param;
    a.commutative = 1;
    if (alg->flags & ALG_NODE_AWARE)
        cost_plan_args(&plan, &e->hosts, &a);
    sched_t s;
    sched_init(&s);
    if (alg->build(&s, &a) != 0) {
        sched_destroy(&s);
        return -1;
    }
    for (size_t i = 0; i < s.nsteps; i++) {
        const sched_step_t *st = &s.steps[i];
        if (st->kind != SCHED_XCHG)
            continue;
        if (st->recv_peer >= 0)
            e->peer[st->recv_peer] = 1;
        if (st->send_peer >= 0) {
            /* one message per round: every message here is below UCOLL_SEGMENT_SIZE */
            const int ring = st->send.count * a.elem_size <= SHM_LIMIT &&
                             host_of(e, st->send_peer) == host_of(e, rank);
            e->peer[st->send_peer] = 1;
            e->ring_peer[st->send_peer] |= (unsigned char)ring;
            e->messages++;
            e->ring_messages += (unsigned long long)ring;
        }
    }
    sched_destroy(&s);
    return 0;
}

/* this rank's UCOLL_STATS line from the captured stderr; 0 if exactly one was there */
static int read_stats(const char *path, int rank, unsigned long long v[5])
{
    FILE *f = fopen(path, "r");
    char line[512];
    int found = 0;
    if (f == NULL)
        return -1;
    while (fgets(line, sizeof(line), f) != NULL) {
        fputs(line, stderr); /* the log keeps what finalize printed */
        int r;
        if (sscanf(line,
                   "ucoll stats rank %d: endpoints %llu, rings %llu, address_lookups %llu, "
                   "messages_ucx %llu, messages_shm %llu",
                   &r, &v[0], &v[1], &v[2], &v[3], &v[4]) != 6)
            continue;
        char exact[512];
        snprintf(exact, sizeof(exact),
                 "ucoll stats rank %d: endpoints %llu, rings %llu, address_lookups %llu, "
                 "messages_ucx %llu, messages_shm %llu\n",
                 r, v[0], v[1], v[2], v[3], v[4]);
        if (r == rank && strcmp(line, exact) == 0)
            found++;
    }
    fclose(f);
    return found == 1 ? 0 : -1;
}

static int env_set(const char *name)
{
    const char *v = getenv(name);
    return v != NULL && *v != '\0';
}

int main(void)
{
    /* no measurement at init, so that only the collectives below (and finalize's barriers) run */
    setenv("UCOLL_ALPHA_US", "1", 1);
    setenv("UCOLL_BETA_NS_PER_BYTE", "0.1", 1);
    setenv("UCOLL_GAMMA_NS_PER_BYTE", "0.5", 1);
    setenv("UCOLL_STATS", "1", 1);
    ucoll_comm_t *w = NULL;
    ucoll_status_t st = ucoll_init(&w);
    if (st != UCOLL_OK) {
        printf("stats_test: ucoll_init: %s\n", ucoll_strerror(st));
        return 1;
    }
    const int rank = ucoll_comm_rank(w), p = ucoll_comm_size(w);
    expect_t e;
    memset(&e, 0, sizeof(e));
    e.peer = calloc((size_t)p, 1);
    e.ring_peer = calloc((size_t)p, 1);
    if (e.peer == NULL || e.ring_peer == NULL)
        return 1;
    if (env_set("UCOLL_TEST_HOSTS")) {
        e.tested_hosts = atoi(getenv("UCOLL_TEST_HOSTS"));
        check(e.tested_hosts > 0, rank, "UCOLL_TEST_HOSTS is a number of hosts");
    } else if (env_set("STATS_TEST_HOSTS")) {
        e.host_map = parse_hosts(getenv("STATS_TEST_HOSTS"), p);
        check(e.host_map != NULL, rank, "STATS_TEST_HOSTS lists one host index per rank");
        if (e.host_map != NULL && env_set("SLURM_NODEID"))
            check(atoi(getenv("SLURM_NODEID")) == e.host_map[rank], rank,
                  "SLURM_NODEID == this rank's host in STATS_TEST_HOSTS");
    }
    int *ids = calloc((size_t)p, sizeof(int));
    if (ids == NULL)
        return 1;
    for (int r = 0; r < p; r++)
        ids[r] = host_of(&e, r);
    check(sched_hosts_init(&e.hosts, p, ids) == 0, rank, "the layout");
    free(ids);
    e.cost = (cost_params_t){.alpha_us = 1, .beta_ns = 0.1, .gamma_ns = 0.5};
    const char *check_env = getenv("UCOLL_CHECK");
    const int checked = check_env != NULL && strcmp(check_env, "1") == 0 && p > 1;
    /* init's comparison of the settings; on more than one host the hosts' gather */
    check(p == 1 || add_schedule(&e, UCOLL_COLL_ALLREDUCE, AGREE_ALG, AGREE_SETTINGS_WORDS,
                                 sizeof(uint64_t), 0, rank, p) == 0,
          rank, "init agreement schedule");
    if (e.hosts.nhosts > 1) {
        check(add_schedule(&e, UCOLL_COLL_ALLGATHER, HOSTS_GATHER_ALG, 1, sizeof(int32_t), 0, rank,
                           p) == 0,
              rank, "init hosts gather schedule");
        check(!checked || add_schedule(&e, UCOLL_COLL_ALLREDUCE, AGREE_ALG, AGREE_CHECK_WORDS,
                                       sizeof(uint64_t), 0, rank, p) == 0,
              rank, "the hosts gather's UCOLL_CHECK agreement schedule");
    }
    int node_aware_calls = 0;
    for (size_t i = 0; i < NCALLS; i++) {
        const call_t *c = &calls[i];
        const int root = ((c->root % p) + p) % p;
        if (strcmp(c->alg, "node-aware") == 0) {
            if (!node_aware_runs(&e, c->coll))
                continue;
            node_aware_calls++;
        }
        st = run_call(w, c, root, rank, p);
        if (st != UCOLL_OK) {
            printf("stats_test rank %d: call %zu (%s %s): %s\n", rank, i, alg_coll_name(c->coll),
                   c->alg, ucoll_strerror(st));
            return 1;
        }
        check(add_schedule(&e, c->coll, c->alg, c->count, sizeof(int32_t), root, rank, p) == 0,
              rank, "schedule builds");
        check(!checked || add_schedule(&e, UCOLL_COLL_ALLREDUCE, AGREE_ALG, AGREE_CHECK_WORDS,
                                       sizeof(uint64_t), 0, rank, p) == 0,
              rank, "UCOLL_CHECK agreement schedule");
    }
    /* finalize's barriers: auto on a flat comm of all ranks (never node-aware), so the
     * registry's one barrier */
    size_t nbarrier = 0;
    const alg_desc_t *barriers = alg_list(UCOLL_COLL_BARRIER, &nbarrier);
    check(nbarrier == 1, rank, "one barrier algorithm, the one finalize runs");
    const char *fin_barrier = barriers[0].name;
    /* two of them: the second holds every rank until all are through the first. Its peers are
     * the first's; its messages are not counted (UCOLL_STATS counts up to the first: the second
     * may end early where peers already left, skipping sends) */
    unsigned long long first_messages = 0, first_ring = 0;
    for (int b = 0; b < (p > 1 ? 2 : 1); b++) {
        check(add_schedule(&e, UCOLL_COLL_BARRIER, fin_barrier, 0, 1, 0, rank, p) == 0, rank,
              "finalize barrier schedule");
        check(!checked || add_schedule(&e, UCOLL_COLL_ALLREDUCE, AGREE_ALG, AGREE_CHECK_WORDS,
                                       sizeof(uint64_t), 0, rank, p) == 0,
              rank, "finalize barrier's UCOLL_CHECK agreement schedule");
        if (b == 0) {
            first_messages = e.messages;
            first_ring = e.ring_messages;
        }
    }
    e.messages = first_messages;
    e.ring_messages = first_ring;
    unsigned long long npeers = 0, nring = 0;
    for (int i = 0; i < p; i++) {
        npeers += e.peer[i];
        nring += e.ring_peer[i];
    }
    check(e.peer[rank] == 0, rank, "no schedule talks to its own rank");
    /* the test can tell lazy from eager connections only if some peer is left out; below 8
     * ranks the calls reach every peer of some rank (with the node-aware ones, at 8 ranks on 3
     * simulated hosts too: not a layout the suite runs) */
    check(p < 8 || npeers < (unsigned long long)(p - 1), rank, "some peer is never talked to");

    char path[] = "/tmp/ucoll-stats.XXXXXX";
    int fd = mkstemp(path), saved = dup(2);
    if (fd < 0 || saved < 0)
        return 1;
    fflush(stderr);
    dup2(fd, 2);
    st = ucoll_finalize(w);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(fd);
    unsigned long long v[5] = {0};
    const int have = read_stats(path, rank, v) == 0;
    unlink(path);
    check(st == UCOLL_OK, rank, "ucoll_finalize");
    check(have, rank, "exactly one stats line of this rank, in the documented format");
    const int default_channels = !env_set("UCOLL_SHM") && !env_set("UCOLL_FAILURE_DETECTION");
    if (have) {
        check(v[0] == npeers, rank, "endpoints == distinct peers of the schedules");
        check(v[2] == npeers, rank, "address_lookups == distinct peers (PMIx)");
        check(v[3] + v[4] == e.messages, rank, "messages_ucx + messages_shm == messages sent");
        if (default_channels && p > 1) {
            check(v[4] == e.ring_messages, rank,
                  "messages_shm == messages of <= 4096 bytes to peers on this host");
            check(v[3] == e.messages - e.ring_messages, rank,
                  "messages_ucx == messages to other hosts and larger ones");
            check(v[1] == nring, rank, "rings == on-host peers sent messages of <= 4096 bytes");
        }
    }
    printf("stats_test rank %d of %d: %d hosts, %d node-aware calls, distinct peers %llu, "
           "messages %llu (%llu by ring), ring peers %llu; stats: endpoints %llu rings %llu "
           "address_lookups %llu messages_ucx %llu messages_shm %llu: %s\n",
           rank, p, e.hosts.nhosts, node_aware_calls, npeers, e.messages, e.ring_messages, nring,
           v[0], v[1], v[2], v[3], v[4], g_failed == 0 ? "PASS" : "FAIL");
    sched_hosts_free(&e.hosts);
    free(e.peer);
    free(e.ring_peer);
    free(e.host_map);
    return g_failed == 0 ? 0 : 1;
}
