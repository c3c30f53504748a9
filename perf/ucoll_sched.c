/*
 * ucoll_sched: the schedule inspector. Builds the schedules of all P processes of one collective
 * with the library's own algorithm builders, runs them through the symbolic executor (no
 * processes, no UCX) and prints the exact figures on one line:
 *
 *   coll=<c> alg=<a> p=<P> bytes=<m> rounds=<R> max_ops=<X> volume=<V>
 *
 * Elements are bytes (element size 1, count = m). For the block collectives (allgather ...
 * scatterv) m is the bytes of one block (algorithms.md 4), the v forms run with every block m
 * bytes, block i at i*m, and volume stays in bytes (divide by m for blocks). max_ops is the
 * largest number of (+) applications of one process, volume the sum over rounds of the largest
 * message any process sends or receives in that round. --ranks adds a per-rank listing with every
 * step.
 * --predict ALPHA_US,BETA_NS,GAMMA_NS appends path_ops=<n> predicted_us=<t>, the cost model
 * of `auto` (src/alg/cost.h): rounds*(alpha + m*beta) + path_ops*m*gamma, path_ops being the
 * (+) on the critical path; for reduce, allreduce, bcast, scan and barrier the model of
 * cost_vector.c instead, rounds*alpha + volume*beta + path*gamma from the closed forms, path_ops
 * being the vectors' worth of (+) on the critical path (e.g. 0.8 for rs-ag at p = 5).
 * -a pipeline (exscan, scan) runs with the k the library would give it for this vector, from
 * --predict's alpha and beta (else 1 us, 0.1 ns/B); -a auto prints a chosen pipeline as
 * alg=pipeline:<k>.
 * -a auto names the algorithm the library's own selection (cost_select) picks (alg=<name> auto=1):
 * for exscan by that cost model with alpha, beta, gamma from --predict, else UCOLL_ALPHA_US /
 * UCOLL_BETA_NS_PER_BYTE / UCOLL_GAMMA_NS_PER_BYTE, else 1,0.1,0.1, and prints the chosen
 * algorithm's closed-form figures with path_ops, predicted_us and the parameters assumed, without
 * building a schedule (with --ranks: the schedules' figures); for reduce, allreduce, bcast, scan
 * and barrier by the same alpha, beta, gamma over their algorithms' closed-form figures
 * (rounds*alpha + volume*beta + (+) on the critical path*gamma, cost_vector.c; elements of one
 * byte), unless UCOLL_REDUCE_RHRD_MIN / UCOLL_ALLREDUCE_RHRD_MIN is set (non-zero): then by that
 * threshold, as the library does; for the block collectives by the same alpha, beta, gamma over
 * their algorithms' block figures.
 * A layout (--hosts H --per-host K, --layout N1,N2,..., -p P --round-robin H) runs the schedules
 * on it and adds hosts=, cross_msgs=, cross_bytes= (every message and byte whose two ends are on
 * different hosts) and max_rank_cross_msgs= / max_rank_cross_bytes= (the most one rank sends
 * across); -a node-aware (and auto where the layout takes it, as the library's selection) prints
 * its phases' algorithms (leaders=, local_reduce=, local_bcast=); -a all prints one line per
 * algorithm that serves the layout. Exit status: 0 correct, 1 the schedules are incorrect (the
 * error is on stderr), 2 usage.
 */
#include "alg/alg.h"
#include "alg/cost.h"
#include "ucoll_int.h"
#include "sched.h"
#include "symbolic.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_P (1 << 20)

static void usage(FILE *f)
{
    fprintf(f,
            "usage: ucoll_sched -c COLL -a ALG -p P [-m BYTES] [-r ROOT] [--noncommutative] "
            "[--ranks]\n"
            "  -c, --coll COLL        exscan, scan, reduce, allreduce, bcast, barrier,\n"
            "                         allgather, allgatherv, reduce_scatter_block,\n"
            "                         reduce_scatter, alltoall, alltoallv, gather, gatherv,\n"
            "                         scatter, scatterv\n"
            "  -a, --alg ALG          an algorithm of COLL (an unknown name lists them)\n"
            "  -p, --procs P          number of processes, 1..%d\n"
            "  -m, --bytes BYTES      vector length in bytes (= elements), default 8 (barrier: 0)\n"
            "                         block collectives: one block (v forms: every block)\n"
            "  -r, --root ROOT        root of reduce, bcast, gather(v), scatter(v), default 0\n"
            "      --noncommutative   treat the op as non-commutative (default commutative)\n"
            "      --ranks            also list every rank's figures and steps\n"
            "      --predict A,B,G[,S,A2,B2]\n"
            "                         append the cost model's time: alpha us/round, beta ns/byte,\n"
            "                         gamma ns/byte of one (+); S,A2,B2: messages above S bytes\n"
            "                         take alpha A2 and beta B2 (UCOLL_PRINT_COST=1 shows them;\n"
            "                         an A2 below A is raised to A, as init does)\n"
            "  -a auto                the algorithm the library's auto picks (its cost model,\n"
            "                         parameters from --predict or UCOLL_*_NS/US)\n"
            "layouts (ranks on hosts; -p may be left out): every line adds hosts=, cross_msgs=,\n"
            "cross_bytes= (all messages and bytes whose ends are on different hosts) and the\n"
            "most one rank sends across (max_rank_cross_msgs=, max_rank_cross_bytes=)\n"
            "      --hosts H --per-host K   H hosts of K consecutive ranks each\n"
            "      --layout N1,N2,...       hosts of N1, N2, ... consecutive ranks\n"
            "      --round-robin H          rank r on host r %% H (needs -p)\n"
            "  -a node-aware          the node-aware form, its phases' algorithms by the model\n"
            "                         (leaders=, local_reduce=, local_bcast=)\n"
            "  -a all                 (with a layout) one line per algorithm that serves it\n",
            MAX_P);
}

static void list_algs(FILE *f, ucoll_coll_t coll)
{
    size_t n;
    const alg_desc_t *algs = alg_list(coll, &n);
    fprintf(f, "valid algorithms for %s:", alg_coll_name(coll));
    for (size_t i = 0; i < n; i++)
        fprintf(f, " %s%s", algs[i].name,
                (algs[i].flags & ALG_PARAM_REQUIRED)   ? ":Q"
                : (algs[i].flags & ALG_PARAM_OPTIONAL) ? "[:K]"
                                                       : "");
    fprintf(f, "\n");
    for (size_t i = 0; i < n; i++) {
        char name[64];
        snprintf(name, sizeof(name), "%s%s", algs[i].name,
                 (algs[i].flags & ALG_PARAM_REQUIRED)   ? ":Q"
                 : (algs[i].flags & ALG_PARAM_OPTIONAL) ? "[:K]"
                                                        : "");
        fprintf(f, "  %-20s %s\n", name, algs[i].summary);
    }
}

/* parses a whole decimal number in [lo, hi]; 0 on success */
static int parse_num(const char *s, long long lo, long long hi, long long *out)
{
    char *end;
    errno = 0;
    if (s == NULL || *s == '\0')
        return -1;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static void print_ranks(const alg_desc_t *alg, int param, int p, size_t count, int root,
                        int commutative, const symbolic_result_t *res)
{
    sched_t s;
    sched_init(&s);
    for (int r = 0; r < p; r++) {
        printf("rank %d: rounds=%" PRIu32 " ops=%" PRIu64 " op_elems=%" PRIu64
               " bytes_sent=%" PRIu64 " bytes_recv=%" PRIu64 "\n",
               r, res->rank_rounds[r], res->rank_ops[r], res->rank_op_elems[r],
               res->rank_bytes_sent[r], res->rank_bytes_recv[r]);
        sched_clear(&s);
        if (symbolic_build(alg, param, p, r, count, 1, root, commutative, &s) != 0) {
            printf("  (schedule could not be rebuilt)\n");
            continue;
        }
        for (size_t i = 0; i < s.nsteps; i++) {
            char d[200];
            printf("  %s\n", symbolic_step_str(&s.steps[i], d, sizeof(d)));
        }
    }
    sched_destroy(&s);
}

/* one line of figures for alg on layout H (see usage); 0, 1 (incorrect) or 2 (usage) */
static int layout_line(const char *coll_s, ucoll_coll_t coll, const alg_desc_t *alg, int param,
                       long long m, int root, int commutative, const sched_hosts_t *H,
                       const cost_params_t *cost, const ucoll_config_t *cfg, int is_auto)
{
    const int p = H->size;
    const size_t count = coll == UCOLL_COLL_BARRIER ? 0 : (size_t)m;
    node_aware_plan_t plan = {NULL, 0, NULL, NULL};
    if (alg->flags & ALG_NODE_AWARE) {
        if (!cost_node_aware_serves(coll, H, commutative)) {
            fprintf(stderr,
                    "ucoll_sched: %s node-aware does not serve this layout (it needs more than "
                    "one host, a host of more than one rank%s)\n",
                    coll_s,
                    coll == UCOLL_COLL_EXSCAN || coll == UCOLL_COLL_SCAN || !commutative
                        ? ", and consecutive ranks per host"
                        : "");
            return 2;
        }
        if (cost_node_aware_plan(coll, H, count, 1, commutative, cost, cfg->reduce_rhrd_min,
                                 cfg->allreduce_rhrd_min, &plan) != 0) {
            fprintf(stderr, "ucoll_sched: no leaders' algorithm serves %d hosts\n", H->nhosts);
            return 1;
        }
    }
    param = cost_resolve_param(alg, param, p, count, 1, cost);
    symbolic_result_t res;
    const int rc = symbolic_run_layout(alg, param, coll, p, count, 1, root, commutative, H,
                                       plan.leaders != NULL ? &plan : NULL, &res);
    if (rc != 0 || !res.ok) {
        fprintf(stderr, "ucoll_sched: %s %s p=%d bytes=%lld: %s: %s\n", coll_s, alg->name, p, m,
                rc != 0 ? "cannot run" : "INCORRECT schedule", res.error);
        symbolic_result_free(&res);
        return 1;
    }
    uint64_t most_msgs = 0, most_bytes = 0;
    for (int r = 0; r < p; r++) {
        if (res.rank_cross_msgs[r] > most_msgs)
            most_msgs = res.rank_cross_msgs[r];
        if (res.rank_cross_bytes[r] > most_bytes)
            most_bytes = res.rank_cross_bytes[r];
    }
    char name[64];
    if (param != 0 && (alg->flags & (ALG_PARAM_OPTIONAL | ALG_PARAM_REQUIRED)))
        snprintf(name, sizeof(name), "%s:%d", alg->name, param);
    else
        snprintf(name, sizeof(name), "%s", alg->name);
    printf("coll=%s alg=%s p=%d bytes=%lld hosts=%d rounds=%" PRIu32 " max_ops=%" PRIu64
           " volume=%" PRIu64 " cross_msgs=%" PRIu64 " cross_bytes=%" PRIu64
           " max_rank_cross_msgs=%" PRIu64 " max_rank_cross_bytes=%" PRIu64,
           coll_s, name, p, m, H->nhosts, res.rounds, res.max_ops, res.volume_bytes, res.cross_msgs,
           res.cross_bytes, most_msgs, most_bytes);
    if (plan.leaders != NULL) {
        if (plan.leaders_param != 0 &&
            (plan.leaders->flags & (ALG_PARAM_OPTIONAL | ALG_PARAM_REQUIRED)))
            printf(" leaders=%s:%d", plan.leaders->name, plan.leaders_param);
        else
            printf(" leaders=%s", plan.leaders->name);
        if (plan.local_reduce != NULL)
            printf(" local_reduce=%s", plan.local_reduce->name);
        if (plan.local_bcast != NULL)
            printf(" local_bcast=%s", plan.local_bcast->name);
    }
    printf("%s\n", is_auto ? " auto=1" : "");
    symbolic_result_free(&res);
    return 0;
}

/* -a all on a layout: every registered algorithm that serves p and the op, then node-aware */
static int layout_all(const char *coll_s, ucoll_coll_t coll, long long m, int root, int commutative,
                      const sched_hosts_t *H, const cost_params_t *cost, const ucoll_config_t *cfg)
{
    size_t n;
    const alg_desc_t *algs = alg_list(coll, &n);
    const int p = H->size;
    int worst = 0;
    for (size_t i = 0; i < n; i++) {
        const alg_desc_t *a = &algs[i];
        if ((a->flags & ALG_PARAM_REQUIRED) ||
            ((a->flags & ALG_POWER_OF_TWO) && (p & (p - 1)) != 0) ||
            (!commutative && cost_reduces(coll) && !(a->flags & ALG_ORDER_PRESERVING)))
            continue;
        const int rc =
            layout_line(coll_s, coll, a, a->param, m, root, commutative, H, cost, cfg, 0);
        worst = rc > worst ? rc : worst;
    }
    const alg_desc_t *na = alg_node_aware(coll);
    if (na != NULL && cost_node_aware_serves(coll, H, commutative)) {
        const int rc = layout_line(coll_s, coll, na, 0, m, root, commutative, H, cost, cfg, 0);
        worst = rc > worst ? rc : worst;
    }
    return worst;
}

/* the host ids of --hosts/--per-host, --layout or --round-robin; p (0 for round-robin: -p) */
static int *layout_ids(long long hosts, long long per_host, const char *list, long long rr,
                       long long *p)
{
    int *id = NULL;
    if (list != NULL) {
        long long n = 0;
        for (const char *c = list; *c != '\0';) {
            char *end;
            errno = 0;
            const long long k = strtoll(c, &end, 10);
            if (end == c || errno != 0 || k < 1 || n + k > MAX_P || (*end != ',' && *end != '\0')) {
                free(id);
                return NULL;
            }
            int *grown = realloc(id, (size_t)(n + k) * sizeof(int));
            if (grown == NULL) {
                free(id);
                return NULL;
            }
            id = grown;
            for (long long i = 0; i < k; i++)
                id[n + i] = (int)(c - list); /* a distinct number per host */
            n += k;
            c = *end == ',' ? end + 1 : end;
        }
        *p = n;
        return id;
    }
    const long long n = rr > 0 ? *p : hosts * per_host;
    if (n < 1 || n > MAX_P || (id = malloc((size_t)n * sizeof(int))) == NULL)
        return NULL;
    for (long long r = 0; r < n; r++)
        id[r] = (int)(rr > 0 ? r % rr : r / per_host);
    *p = n;
    return id;
}

int main(int argc, char **argv)
{
    enum { OPT_RANKS = 256, OPT_NONCOMM, OPT_PREDICT, OPT_HOSTS, OPT_PER_HOST, OPT_LAYOUT, OPT_RR };
    static const struct option opts[] = {
        {"coll", required_argument, NULL, 'c'},
        {"alg", required_argument, NULL, 'a'},
        {"procs", required_argument, NULL, 'p'},
        {"bytes", required_argument, NULL, 'm'},
        {"root", required_argument, NULL, 'r'},
        {"ranks", no_argument, NULL, OPT_RANKS},
        {"noncommutative", no_argument, NULL, OPT_NONCOMM},
        {"predict", required_argument, NULL, OPT_PREDICT},
        {"hosts", required_argument, NULL, OPT_HOSTS},
        {"per-host", required_argument, NULL, OPT_PER_HOST},
        {"layout", required_argument, NULL, OPT_LAYOUT},
        {"round-robin", required_argument, NULL, OPT_RR},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *coll_s = NULL, *alg_s = NULL, *p_s = NULL, *m_s = "8", *root_s = "0";
    char resolved_p[32];
    sched_hosts_t layout_hosts = {0, 0, 0, 0, NULL, NULL, NULL};
    int ranks = 0, commutative = 1, c, predict = 0;
    const char *hosts_s = NULL, *per_host_s = NULL, *layout_s = NULL, *rr_s = NULL;
    cost_params_t cost = {.alpha_us = COST_DEFAULT_ALPHA_US,
                          .beta_ns = COST_DEFAULT_BETA_NS,
                          .gamma_ns = COST_DEFAULT_GAMMA_NS};

    while ((c = getopt_long(argc, argv, "c:a:p:m:r:h", opts, NULL)) != -1) {
        switch (c) {
        case 'c':
            coll_s = optarg;
            break;
        case 'a':
            alg_s = optarg;
            break;
        case 'p':
            p_s = optarg;
            break;
        case 'm':
            m_s = optarg;
            break;
        case 'r':
            root_s = optarg;
            break;
        case OPT_RANKS:
            ranks = 1;
            break;
        case OPT_NONCOMM:
            commutative = 0;
            break;
        case OPT_HOSTS:
            hosts_s = optarg;
            break;
        case OPT_PER_HOST:
            per_host_s = optarg;
            break;
        case OPT_LAYOUT:
            layout_s = optarg;
            break;
        case OPT_RR:
            rr_s = optarg;
            break;
        case OPT_PREDICT: {
            char *end;
            predict = 1;
            cost.alpha_us = strtod(optarg, &end);
            if (*end == ',')
                cost.beta_ns = strtod(end + 1, &end);
            if (*end == ',')
                cost.gamma_ns = strtod(end + 1, &end);
            double small_max = 0;
            int paths = 0;
            if (*end == ',') { /* the second path: SMALL_MAX,ALPHA2_US,BETA2_NS */
                paths = 1;
                small_max = strtod(end + 1, &end);
                if (*end == ',')
                    cost.big_alpha_us = strtod(end + 1, &end);
                else
                    paths = -1;
                if (*end == ',')
                    cost.big_beta_ns = strtod(end + 1, &end);
                else
                    paths = -1;
            }
            if (*end != '\0' || cost.alpha_us < 0 || cost.beta_ns < 0 || cost.gamma_ns < 0 ||
                paths < 0 || !(small_max >= 0 && small_max < 1e15) || cost.big_alpha_us < 0 ||
                cost.big_beta_ns < 0 || strchr(optarg, ',') == NULL ||
                strchr(strchr(optarg, ',') + 1, ',') == NULL) {
                fprintf(stderr,
                        "ucoll_sched: --predict '%s': give ALPHA_US,BETA_NS,GAMMA_NS, "
                        "three numbers >= 0 (e.g. --predict 1.5,0.2,0.5), optionally followed "
                        "by SMALL_MAX,ALPHA2_US,BETA2_NS for messages above SMALL_MAX bytes\n",
                        optarg);
                return 2;
            }
            cost.small_max = (size_t)small_max;
            cost_floor_alphas(&cost);
            break;
        }
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "ucoll_sched: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    const int layout = hosts_s != NULL || per_host_s != NULL || layout_s != NULL || rr_s != NULL;
    if (coll_s == NULL || alg_s == NULL || (p_s == NULL && (!layout || rr_s != NULL))) {
        fprintf(stderr, "ucoll_sched: -c COLL, -a ALG and -p P are required (-p may be left "
                        "out with --hosts/--per-host or --layout)\n");
        usage(stderr);
        return 2;
    }
    if (layout) {
        long long nh = 0, k = 0, rr = 0, lp = 0;
        const int kinds =
            (hosts_s != NULL || per_host_s != NULL) + (layout_s != NULL) + (rr_s != NULL);
        if (kinds != 1 || ((hosts_s != NULL) != (per_host_s != NULL)) ||
            (hosts_s != NULL && (parse_num(hosts_s, 1, MAX_P, &nh) != 0 ||
                                 parse_num(per_host_s, 1, MAX_P, &k) != 0 || nh * k > MAX_P)) ||
            (rr_s != NULL &&
             (parse_num(rr_s, 1, MAX_P, &rr) != 0 || parse_num(p_s, 1, MAX_P, &lp) != 0))) {
            fprintf(stderr,
                    "ucoll_sched: give one layout: --hosts H --per-host K (H, K >= 1, "
                    "H*K <= %d), --layout N1,N2,... or -p P --round-robin H\n",
                    MAX_P);
            return 2;
        }
        int *id = layout_ids(nh, k, layout_s, rr, &lp);
        long long given;
        if (id == NULL) {
            fprintf(stderr,
                    "ucoll_sched: --layout '%s': host sizes are integers >= 1, "
                    "comma-separated, %d ranks at most\n",
                    layout_s != NULL ? layout_s : "", MAX_P);
            return 2;
        }
        if (p_s != NULL && (parse_num(p_s, 1, MAX_P, &given) != 0 || given != lp)) {
            fprintf(stderr, "ucoll_sched: -p %s is not the layout's %lld ranks\n", p_s, lp);
            free(id);
            return 2;
        }
        snprintf(resolved_p, sizeof(resolved_p), "%lld", lp);
        p_s = resolved_p;
        if (sched_hosts_init(&layout_hosts, (int)lp, id) != 0) {
            free(id);
            fprintf(stderr, "ucoll_sched: out of memory\n");
            return 1;
        }
        free(id);
    }

    ucoll_coll_t coll;
    if (alg_coll_from_name(coll_s, &coll) != 0) {
        fprintf(stderr, "ucoll_sched: unknown collective '%s'; valid collectives:", coll_s);
        for (int i = 0; i < UCOLL_NCOLLS; i++)
            fprintf(stderr, " %s", alg_coll_name((ucoll_coll_t)i));
        fprintf(stderr, "\n");
        return 2;
    }
    int param = 0, is_auto = strcmp(alg_s, "auto") == 0;
    const int is_all = strcmp(alg_s, "all") == 0;
    if (is_all && !layout) {
        fprintf(stderr, "ucoll_sched: -a all needs a layout (--hosts/--per-host, --layout or "
                        "--round-robin)\n");
        return 2;
    }
    char resolved[64];
    long long p, m, root;
    /* auto is resolved below, once p and m are known (for a non-commutative op it only
     * picks order-preserving algorithms, as the library does) */
    const alg_desc_t *alg = is_auto || is_all ? NULL : alg_lookup(coll, alg_s, &param);
    if (alg != NULL && (alg->flags & ALG_NODE_AWARE) && !layout) {
        fprintf(stderr,
                "ucoll_sched: %s node-aware needs a layout (--hosts/--per-host, --layout "
                "or --round-robin)\n",
                coll_s);
        return 2;
    }
    if (alg == NULL && !is_auto && !is_all) {
        size_t n;
        const alg_desc_t *algs = alg_list(coll, &n);
        const size_t len = strcspn(alg_s, ":");
        for (size_t i = 0; i < n; i++) {
            if (strlen(algs[i].name) != len || strncmp(algs[i].name, alg_s, len) != 0)
                continue;
            if (algs[i].flags & ALG_PARAM_OPTIONAL) {
                fprintf(stderr,
                        "ucoll_sched: '%s': %s takes an optional parameter, %s:K with an "
                        "integer K in 1..%d segments (e.g. %s:8)\n",
                        alg_s, algs[i].name, algs[i].name, ALG_PARAM_OPTIONAL_MAX, algs[i].name);
                return 2;
            }
            if (algs[i].flags & ALG_PARAM_REQUIRED) {
                fprintf(stderr,
                        "ucoll_sched: '%s': %s takes a parameter, %s:Q with an integer Q in "
                        "1..62 (e.g. %s:2)\n",
                        alg_s, algs[i].name, algs[i].name, algs[i].name);
                return 2;
            }
        }
        fprintf(stderr, "ucoll_sched: unknown algorithm '%s' for %s\n", alg_s, coll_s);
        list_algs(stderr, coll);
        return 2;
    }

    if (parse_num(p_s, 1, MAX_P, &p) != 0) {
        fprintf(stderr,
                "ucoll_sched: -p '%s': the number of processes must be an integer in "
                "1..%d\n",
                p_s, MAX_P);
        return 2;
    }
    if (parse_num(m_s, 0, (long long)1 << 40, &m) != 0) {
        fprintf(stderr, "ucoll_sched: -m '%s': the byte count must be an integer in 0..2^40\n",
                m_s);
        return 2;
    }
    if (parse_num(root_s, 0, p - 1, &root) != 0) {
        fprintf(stderr, "ucoll_sched: -r '%s': the root must be an integer in 0..%lld\n", root_s,
                p - 1);
        return 2;
    }
    if (layout) { /* the layout's figures, schedules built on it (no closed forms) */
        ucoll_config_t cfg;
        if (config_read(&cfg) != UCOLL_OK)
            return 2;
        if (!predict) { /* what the library assumes when these variables are set */
            if (cfg.alpha_us >= 0)
                cost.alpha_us = cfg.alpha_us;
            if (cfg.beta_ns >= 0)
                cost.beta_ns = cfg.beta_ns;
            if (cfg.gamma_ns >= 0)
                cost.gamma_ns = cfg.gamma_ns;
        }
        int rc;
        if (is_all) {
            rc = layout_all(coll_s, coll, m, (int)root, commutative, &layout_hosts, &cost, &cfg);
        } else {
            if (is_auto) { /* as select.c: node-aware where the layout takes it */
                node_aware_plan_t plan;
                const size_t bytes = coll == UCOLL_COLL_BARRIER ? 0 : (size_t)m;
                alg = alg_node_aware(coll);
                if (!cost_node_aware_serves(coll, &layout_hosts, commutative) ||
                    cost_node_aware_plan(coll, &layout_hosts, bytes, 1, commutative, &cost,
                                         cfg.reduce_rhrd_min, cfg.allreduce_rhrd_min, &plan) != 0) {
                    alg_s = cost_select(coll, (int)p, bytes, commutative, &cost,
                                        cfg.reduce_rhrd_min, cfg.allreduce_rhrd_min);
                    alg = alg_s != NULL ? alg_lookup(coll, alg_s, &param) : NULL;
                }
                if (alg == NULL) {
                    fprintf(stderr, "ucoll_sched: cannot resolve auto\n");
                    sched_hosts_free(&layout_hosts);
                    return 1;
                }
            }
            if (!commutative && cost_reduces(coll) && !(alg->flags & ALG_ORDER_PRESERVING) &&
                !(alg->flags & ALG_NODE_AWARE)) {
                fprintf(stderr,
                        "ucoll_sched: %s %s reorders operands and is only for commutative ops\n",
                        coll_s, alg->name);
                sched_hosts_free(&layout_hosts);
                return 2;
            }
            rc = layout_line(coll_s, coll, alg, param, m, (int)root, commutative, &layout_hosts,
                             &cost, &cfg, is_auto);
        }
        sched_hosts_free(&layout_hosts);
        return rc;
    }
    if (is_auto) {
        ucoll_config_t cfg;
        if (config_read(&cfg) != UCOLL_OK)
            return 2;
        if (!predict) { /* what the library assumes when these variables are set */
            if (cfg.alpha_us >= 0)
                cost.alpha_us = cfg.alpha_us;
            if (cfg.beta_ns >= 0)
                cost.beta_ns = cfg.beta_ns;
            if (cfg.gamma_ns >= 0)
                cost.gamma_ns = cfg.gamma_ns;
        }
        const size_t bytes = coll == UCOLL_COLL_BARRIER ? 0 : (size_t)m;
        alg_s = cost_select(coll, (int)p, bytes, commutative, &cost, cfg.reduce_rhrd_min,
                            cfg.allreduce_rhrd_min);
        if (alg_s == NULL || (alg = alg_lookup(coll, alg_s, &param)) == NULL) {
            fprintf(stderr, "ucoll_sched: cannot resolve auto\n");
            return 1;
        }
        /* plain pipeline: the k the library would run it with (alg=pipeline:K) */
        param = cost_resolve_param(alg, param, (int)p, bytes, 1, &cost);
        if (param != 0 && (alg->flags & ALG_PARAM_OPTIONAL)) {
            snprintf(resolved, sizeof(resolved), "%s:%d", alg_s, param);
            alg_s = resolved;
        }
        sched_figures_t fig;
        if (coll == UCOLL_COLL_EXSCAN && !ranks &&
            cost_exscan_figures(alg, param, (int)p, &fig) == 0) {
            /* the closed forms the choice was made from: no schedule is built (every exscan
             * message is the whole vector, so the volume is rounds * m) */
            /* pipeline: p - 2 rounds' largest message is the first segment, and the vector
             * crosses the last link once */
            const unsigned long long um = (unsigned long long)m, k = fig.segments;
            const unsigned long long volume =
                k > 1 ? (unsigned long long)(p - 2) * ((um + k - 1) / k) + um : fig.rounds * um;
            printf("coll=%s alg=%s p=%lld bytes=%lld rounds=%u max_ops=%u volume=%llu auto=1 "
                   "path_ops=%u predicted_us=%.3f alpha_us=%g beta_ns=%g gamma_ns=%g\n",
                   coll_s, alg_s, p, m, fig.rounds, fig.max_ops, volume, fig.path_ops,
                   cost_predict_us(&fig, (double)m, &cost), cost.alpha_us, cost.beta_ns,
                   cost.gamma_ns);
            return 0;
        }
    }
    if (!commutative && cost_reduces(coll) && !(alg->flags & ALG_ORDER_PRESERVING)) {
        fprintf(stderr, "ucoll_sched: %s %s reorders operands and is only for commutative ops\n",
                coll_s, alg->name);
        return 2;
    }

    /* as the library does: a barrier's schedule is built for an empty vector */
    const size_t count = coll == UCOLL_COLL_BARRIER ? 0 : (size_t)m;
    /* plain pipeline: its k for this vector from the model's alpha and beta, as the library */
    param = cost_resolve_param(alg, param, (int)p, count, 1, &cost);
    symbolic_result_t res;
    int rc = symbolic_run(alg, param, coll, (int)p, count, 1, (int)root, commutative, &res);
    if (rc != 0 || !res.ok) {
        fprintf(stderr, "ucoll_sched: %s %s p=%lld bytes=%lld: %s: %s\n", coll_s, alg_s, p, m,
                rc != 0 ? "cannot run" : "INCORRECT schedule", res.error);
        symbolic_result_free(&res);
        return 1;
    }
    printf("coll=%s alg=%s p=%lld bytes=%lld rounds=%" PRIu32 " max_ops=%" PRIu64 " volume=%" PRIu64
           " cpu_volume=%" PRIu64,
           coll_s, alg_s, p, m, res.rounds, res.max_ops, res.volume_bytes, res.cpu_volume_bytes);
    if (is_auto)
        printf(" auto=1");
    vector_figures_t vf;
    if (predict && cost_has_vector(coll) &&
        cost_vector_figures(alg, (int)p, count, (int)root, commutative, &vf) == 0) {
        /* the model auto uses for these collectives, from the closed forms */
        printf(" path_ops=%.6g predicted_us=%.3f", (double)vf.path / (double)vf.den,
               cost_vector_predict_us(&vf, count, 1, &cost));
    } else if (predict) {
        sched_figures_t fig;
        if (sched_figures(alg, param, (int)p, count, 1, (int)root, commutative, &fig) != 0) {
            fprintf(stderr, "ucoll_sched: out of memory\n");
            symbolic_result_free(&res);
            return 1;
        }
        printf(" path_ops=%u predicted_us=%.3f", fig.path_ops,
               cost_predict_us(&fig, (double)m, &cost));
    }
    printf("\n");
    if (ranks)
        print_ranks(alg, param, (int)p, count, (int)root, commutative, &res);
    symbolic_result_free(&res);
    return 0;
}
