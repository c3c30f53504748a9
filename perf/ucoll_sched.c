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
 * their algorithms' block figures. Exit status: 0 correct, 1 the schedules are incorrect (the error
 * is on stderr), 2 usage.
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
            "      --predict A,B,G    append the cost model's time: alpha us/round, beta ns/byte,\n"
            "                         gamma ns/byte of one (+)\n"
            "  -a auto                the algorithm the library's auto picks (its cost model,\n"
            "                         parameters from --predict or UCOLL_*_NS/US)\n",
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

int main(int argc, char **argv)
{
    enum { OPT_RANKS = 256, OPT_NONCOMM, OPT_PREDICT };
    static const struct option opts[] = {
        {"coll", required_argument, NULL, 'c'},
        {"alg", required_argument, NULL, 'a'},
        {"procs", required_argument, NULL, 'p'},
        {"bytes", required_argument, NULL, 'm'},
        {"root", required_argument, NULL, 'r'},
        {"ranks", no_argument, NULL, OPT_RANKS},
        {"noncommutative", no_argument, NULL, OPT_NONCOMM},
        {"predict", required_argument, NULL, OPT_PREDICT},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *coll_s = NULL, *alg_s = NULL, *p_s = NULL, *m_s = "8", *root_s = "0";
    int ranks = 0, commutative = 1, c, predict = 0;
    cost_params_t cost = {COST_DEFAULT_ALPHA_US, COST_DEFAULT_BETA_NS, COST_DEFAULT_GAMMA_NS};

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
        case OPT_PREDICT: {
            char *end;
            predict = 1;
            cost.alpha_us = strtod(optarg, &end);
            if (*end == ',')
                cost.beta_ns = strtod(end + 1, &end);
            if (*end == ',')
                cost.gamma_ns = strtod(end + 1, &end);
            if (*end != '\0' || cost.alpha_us < 0 || cost.beta_ns < 0 || cost.gamma_ns < 0 ||
                strchr(optarg, ',') == NULL || strchr(strchr(optarg, ',') + 1, ',') == NULL) {
                fprintf(stderr,
                        "ucoll_sched: --predict '%s': give ALPHA_US,BETA_NS,GAMMA_NS, "
                        "three numbers >= 0 (e.g. --predict 1.5,0.2,0.5)\n",
                        optarg);
                return 2;
            }
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
    if (coll_s == NULL || alg_s == NULL || p_s == NULL) {
        fprintf(stderr, "ucoll_sched: -c COLL, -a ALG and -p P are required\n");
        usage(stderr);
        return 2;
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
    char resolved[64];
    long long p, m, root;
    /* auto is resolved below, once p and m are known (for a non-commutative op it only
     * picks order-preserving algorithms, as the library does) */
    const alg_desc_t *alg = is_auto ? NULL : alg_lookup(coll, alg_s, &param);
    if (alg == NULL && !is_auto) {
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
    printf("coll=%s alg=%s p=%lld bytes=%lld rounds=%" PRIu32 " max_ops=%" PRIu64
           " volume=%" PRIu64,
           coll_s, alg_s, p, m, res.rounds, res.max_ops, res.volume_bytes);
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
