/*
 * Unit tests of the schedules (Check): every algorithm of the registry, for every collective and
 * every p = 1..256, runs in the symbolic executor and must give the collective's exact result;
 * its rounds, (+) counts and volume must equal the figures of docs/algorithms.md, which are
 * recomputed here independently of the builders (and for the Exscan table of section 1.4,
 * written down literally). Exscan figures are also checked for every p up to 4096 (the
 * exscan_sweep_4096 case, tagged "long": most of the run time; CK_EXCLUDE_TAGS=long skips it).
 * Broken hand-made schedules check that the executor does catch each kind of error.
 */
#include "alg/alg.h"
#include "sched.h"
#include "log2_ref.h"
#include "symbolic.h"

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* ck_assert_* records a checkpoint on every passing assertion (a write to Check's channel);
 * this fails only on failure, so that millions of checks stay cheap */
#define REQUIRE(cond, ...)                                                                         \
    do {                                                                                           \
        if (!(cond))                                                                               \
            ck_abort_msg(__VA_ARGS__);                                                             \
    } while (0)

/* ---------------------------------------------------------------- independent arithmetic */

static unsigned popcount(uint64_t n)
{
    unsigned c = 0;
    for (; n; n &= n - 1)
        c++;
    return c;
}

/*
 * Rounds of the doubling family with parameter q' (algorithms.md 1.2):
 * q = ceil(log2(p-1) + log2(2^q' / (2^q' - 1))) = ceil(log2((p-1) 2^q' / (2^q' - 1))), i.e. the
 * smallest q >= 0 with (2^q' - 1) 2^q >= 2^q' (p - 1). This form also holds when p is so small
 * that phase 1 stops before q' rounds (then it is ceil(log2 p)). For q' = 1 it is
 * 1 + ceil(log2(p-1)); for q' = 2, the smallest q with 3 * 2^q >= 4 (p - 1).
 */
static unsigned doubling_rounds(int p, int qprime)
{
    if (p <= 1)
        return 0;
    const uint64_t a = (UINT64_C(1) << qprime) - 1, b = (UINT64_C(1) << qprime) * (uint64_t)(p - 1);
    unsigned q = 0;
    while ((a << q) < b)
        q++;
    return q;
}

/*
 * best-doubling's q' = ceil(q - log2(2^q - p + 1)), q = ceil(log2 p). With x = 2^q - p + 1 >= 1
 * and q an integer, ceil(q - log2 x) = q - floor(log2 x). p = 1 has q = 0 and gets q' = 1 (the
 * smallest parameter there is; no round is run anyway).
 */
static int best_qprime(int p)
{
    const unsigned q = clog2((uint64_t)p);
    const int qp = (int)q - (int)flog2((UINT64_C(1) << q) - (uint64_t)p + 1);
    return qp < 1 ? 1 : qp;
}

/* ---------------------------------------------------------------- expected figures */

typedef struct {
    unsigned rounds;
    uint64_t ops_lo, ops_hi; /* max (+) per process lies in [ops_lo, ops_hi] */
    int full_vectors;        /* every round moves one whole vector: volume = rounds * bytes */
} expect_t;

/* q' the exscan doubling members run with (param: the registry's or doubling:Q's) */
static int exscan_qprime(const char *name, int param, int p)
{
    if (strcmp(name, "best-doubling") == 0)
        return best_qprime(p);
    if (strcmp(name, "two-op-doubling") == 0) {
        const int q = (int)clog2((uint64_t)p);
        return q < 1 ? 1 : q;
    }
    return param; /* 1-doubling, 123-doubling, doubling:Q */
}

static int is_doubling_member(const char *name)
{
    return strcmp(name, "1-doubling") == 0 || strcmp(name, "123-doubling") == 0 ||
           strcmp(name, "best-doubling") == 0 || strcmp(name, "two-op-doubling") == 0 ||
           strcmp(name, "doubling") == 0;
}

static uint64_t max0(int64_t x)
{
    return x < 0 ? 0 : (uint64_t)x;
}

/* 0 and *e filled when the algorithm's figures are known, -1 otherwise */
static int expected(ucoll_coll_t coll, const char *name, int param, int p, int root,
                    int commutative, expect_t *e)
{
    const unsigned q = clog2((uint64_t)p);
    const unsigned logn = flog2((uint64_t)p); /* N = 2^logn */
    e->full_vectors = 1;
    switch (coll) {
    case UCOLL_COLL_EXSCAN:
        if (strcmp(name, "linear") == 0) {
            e->rounds = (unsigned)(p - 1);
            e->ops_lo = e->ops_hi = p >= 3 ? 1 : 0; /* the middle ranks compute W (+) V */
            return 0;
        }
        if (strcmp(name, "recursive-doubling") == 0) {
            e->rounds = q;
            /* algorithms.md 1.1: up to 2 floor(log2 p) - 1. Rank 2^logn - 1 has only lower
             * partners: W (+)= T in every round but the first, P (+)= T in every round but the
             * last, so at least 2 logn - 2; and that is the maximum for every 4 <= p <= 4096
             * (the sweep checks all of them). p = 3: rank 0 computes P (+) T for round 1. */
            e->ops_lo = e->ops_hi = p == 3 ? 1 : max0(2 * (int64_t)logn - 2);
            return 0;
        }
        if (is_doubling_member(name)) {
            const int qp = exscan_qprime(name, param, p);
            e->rounds = doubling_rounds(p, qp);
            e->ops_hi = max0(qp == 1 ? (int64_t)e->rounds - 1 : (int64_t)e->rounds + qp - 2);
            /* q' = 1: rank p-1 copies in round 0 and combines in every later round, so the
             * bound is attained */
            e->ops_lo = qp == 1 ? e->ops_hi : 0;
            return 0;
        }
        if (strcmp(name, "pipeline") == 0 && param == 0) {
            /* plain pipeline here is the chain (k = 1): these sweeps run at most 3 elements
             * and 4096 ranks, where cost_pipeline_k's k* = sqrt((p-2) 1e-4 m) stays below 1.
             * pipeline:K's figures: check_pipeline.c */
            e->rounds = p >= 2 ? (unsigned)(p - 1) : 0;
            e->ops_lo = e->ops_hi = p >= 3 ? 1 : 0;
            return 0;
        }
        if (strcmp(name, "roughly-halving") == 0) {
            e->rounds = q;
            /* algorithms.md 1.3 gives it as a bound; the schedule attains it for every
             * 3 <= p <= 4096 (the sweep checks all of them), so it is asserted exactly. For
             * p <= 2 the formula is negative; no process combines anything there. */
            e->ops_hi = max0((int64_t)q + popcount((uint64_t)(p - 1)) - 2 - (p % 2 == 0));
            e->ops_lo = e->ops_hi;
            return 0;
        }
        return -1;
    case UCOLL_COLL_SCAN:
        if (strcmp(name, "linear") == 0) {
            e->rounds = (unsigned)(p - 1);
            e->ops_lo = e->ops_hi = p >= 2 ? 1 : 0;
            return 0;
        }
        if (strcmp(name, "doubling") == 0) {
            /* rank p-1 receives in every round */
            e->rounds = q;
            e->ops_lo = e->ops_hi = q;
            return 0;
        }
        if (strcmp(name, "pipeline") == 0 && param == 0) { /* the chain, as for exscan */
            e->rounds = p >= 2 ? (unsigned)(p - 1) : 0;
            e->ops_lo = e->ops_hi = p >= 2 ? 1 : 0;
            return 0;
        }
        if (strcmp(name, "recursive-doubling") == 0) {
            e->rounds = q;
            e->ops_lo = p >= 2 ? 1 : 0;
            e->ops_hi = max0(2 * (int64_t)q - 1);
            return 0;
        }
        return -1;
    case UCOLL_COLL_REDUCE:
        if (strcmp(name, "binomial") == 0) {
            /* the tree root combines one subtree per round; a non-commutative op with a
             * non-zero root reduces at 0 and forwards the result in one more round */
            e->rounds = q + (!commutative && root != 0 ? 1 : 0);
            e->ops_lo = e->ops_hi = q;
            return 0;
        }
        return -1;
    case UCOLL_COLL_ALLREDUCE:
        if (strcmp(name, "recursive-doubling") == 0) {
            const int folded = p != (1 << logn);
            e->rounds = logn + 2 * (unsigned)folded;
            e->ops_lo = e->ops_hi = logn + (unsigned)folded;
            return 0;
        }
        return -1;
    case UCOLL_COLL_BCAST:
        if (strcmp(name, "binomial") == 0) {
            e->rounds = q;
            e->ops_lo = e->ops_hi = 0;
            return 0;
        }
        if (strcmp(name, "pipeline") == 0 && param == 0) { /* the chain from the root, k = 1 */
            e->rounds = p >= 2 ? (unsigned)(p - 1) : 0;
            e->ops_lo = e->ops_hi = 0;
            return 0;
        }
        return -1;
    case UCOLL_COLL_BARRIER:
        if (strcmp(name, "dissemination") == 0) {
            e->rounds = q;
            e->ops_lo = e->ops_hi = 0;
            e->full_vectors = 0; /* zero-byte messages */
            return 0;
        }
        return -1;
    default: /* the block collectives are checked in their own tests */
        break;
    }
    return -1;
}

/* algorithms whose figures other tests assert (rhrd's half-vector volumes: check_rhrd.c; the
 * block-based allreduce and bcast: check_blocks.c, check_blocks_ag.c); here they are checked
 * for correctness only */
static int figures_elsewhere(ucoll_coll_t coll, const char *name)
{
    if (coll == UCOLL_COLL_ALLREDUCE && (strcmp(name, "rs-ag") == 0 || strcmp(name, "ring") == 0))
        return 1;
    if (coll == UCOLL_COLL_BCAST && strcmp(name, "scatter-allgather") == 0)
        return 1;
    if ((coll == UCOLL_COLL_EXSCAN || coll == UCOLL_COLL_SCAN) && strcmp(name, "tree") == 0)
        return 1; /* check_tree.c */
    return (coll == UCOLL_COLL_REDUCE || coll == UCOLL_COLL_ALLREDUCE) &&
           (strcmp(name, "rhrd") == 0 || strcmp(name, "rhrd-classic") == 0);
}

/* ---------------------------------------------------------------- helpers */

static symbolic_ws_t *ws;

static void ws_setup(void)
{
    ws = symbolic_ws_new();
    ck_assert_ptr_nonnull(ws);
}

static void ws_teardown(void)
{
    symbolic_ws_free(ws);
    ws = NULL;
}

static const alg_desc_t *find_alg(ucoll_coll_t coll, const char *name, int *param)
{
    const alg_desc_t *alg = alg_lookup(coll, name, param);
    REQUIRE(alg != NULL, "%s %s is not in the registry", alg_coll_name(coll), name);
    return alg;
}

/* runs one collective and checks correctness and figures; returns the result (caller frees) */
static void run_checked(const alg_desc_t *alg, int param, int p, size_t count, size_t elem,
                        int root, int comm, symbolic_result_t *res)
{
    const char *cn = alg_coll_name(alg->coll);
    int rc = symbolic_run_ws(ws, alg, param, alg->coll, p, count, elem, root, comm, res);
    REQUIRE(rc == 0 && res->ok, "%s %s (param %d) p=%d root=%d commutative=%d count=%zu: %s", cn,
            alg->name, param, p, root, comm, count, res->error);
    expect_t e;
    if (figures_elsewhere(alg->coll, alg->name))
        return;
    REQUIRE(expected(alg->coll, alg->name, param, p, root, comm, &e) == 0,
            "no expected figures for %s %s: add them to expected() in %s", cn, alg->name, __FILE__);
    REQUIRE(res->rounds == e.rounds,
            "%s %s (param %d) p=%d root=%d commutative=%d: %u rounds, "
            "expected %u",
            cn, alg->name, param, p, root, comm, res->rounds, e.rounds);
    REQUIRE(res->max_ops >= e.ops_lo && res->max_ops <= e.ops_hi,
            "%s %s (param %d) p=%d root=%d commutative=%d: max (+) %llu, expected %llu..%llu", cn,
            alg->name, param, p, root, comm, (unsigned long long)res->max_ops,
            (unsigned long long)e.ops_lo, (unsigned long long)e.ops_hi);
    const uint64_t vol = e.full_vectors ? (uint64_t)e.rounds * count * elem : 0;
    REQUIRE(res->volume_bytes == vol, "%s %s p=%d root=%d: volume %llu bytes, expected %llu", cn,
            alg->name, p, root, (unsigned long long)res->volume_bytes, (unsigned long long)vol);
    /* per-rank figures add up */
    uint64_t sent = 0, recvd = 0, mo = 0;
    unsigned mr = 0;
    for (int r = 0; r < p; r++) {
        sent += res->rank_bytes_sent[r];
        recvd += res->rank_bytes_recv[r];
        mo = res->rank_ops[r] > mo ? res->rank_ops[r] : mo;
        mr = res->rank_rounds[r] > mr ? res->rank_rounds[r] : mr;
    }
    REQUIRE(sent == recvd && sent == res->total_bytes && mo == res->max_ops && mr == res->rounds,
            "%s %s p=%d: per-rank figures do not add up", cn, alg->name, p);
}

/* ---------------------------------------------------------------- registry, p = 1..256 */

START_TEST(test_registry_p256)
{
    long runs = 0;
    for (int c = 0; c < UCOLL_NCOLLS; c++) {
        size_t n;
        const alg_desc_t *algs = alg_list((ucoll_coll_t)c, &n);
        ck_assert_uint_gt(n, 0);
        if (c >= UCOLL_COLL_ALLGATHER)
            continue; /* the block collectives: tests/unit/check_blocks.c sweeps them */
        for (size_t i = 0; i < n; i++) {
            const alg_desc_t *alg = &algs[i];
            int params[8], nparams = 0;
            if (alg->flags & ALG_PARAM_REQUIRED) {
                const int qs[] = {1, 2, 3, 4, 5, 9};
                for (size_t k = 0; k < sizeof(qs) / sizeof(qs[0]); k++)
                    params[nparams++] = qs[k];
            } else {
                params[nparams++] = alg->param;
            }
            for (int pi = 0; pi < nparams; pi++)
                for (int p = 1; p <= 256; p++) {
                    int roots[3] = {0, p - 1, p / 2}, nroots = 1;
                    if (c == UCOLL_COLL_REDUCE || c == UCOLL_COLL_BCAST)
                        nroots = 3;
                    for (int comm = 1; comm >= 0; comm--) {
                        if (!comm && !(alg->flags & ALG_ORDER_PRESERVING))
                            continue;
                        for (int ri = 0; ri < nroots; ri++) {
                            symbolic_result_t res;
                            /* a few vector lengths and element sizes, so volume is checked */
                            size_t count = 1 + (size_t)(p % 3), elem = 1 + (size_t)(p % 8);
                            if (c == UCOLL_COLL_BARRIER)
                                count = 0; /* as the library builds it */
                            run_checked(alg, params[pi], p, count, elem, roots[ri], comm, &res);
                            symbolic_result_free(&res);
                            runs++;
                        }
                    }
                }
        }
    }
    fprintf(stderr, "check_schedules: registry: %ld symbolic runs, all correct\n", runs);
}
END_TEST

/* large p, symbolically: exscan and scan up to 4096 processes at a few sizes */
START_TEST(test_scans_large_p)
{
    const int ps[] = {257, 1023, 1024, 1025, 2049, 3001, 4095, 4096};
    for (int c = UCOLL_COLL_EXSCAN; c <= UCOLL_COLL_SCAN; c++) {
        size_t n;
        const alg_desc_t *algs = alg_list((ucoll_coll_t)c, &n);
        for (size_t i = 0; i < n; i++) {
            const int param = (algs[i].flags & ALG_PARAM_REQUIRED) ? 3 : algs[i].param;
            for (size_t k = 0; k < sizeof(ps) / sizeof(ps[0]); k++) {
                symbolic_result_t res;
                run_checked(&algs[i], param, ps[k], 1, 8, 0, 0, &res);
                symbolic_result_free(&res);
            }
        }
    }
}
END_TEST

/* ---------------------------------------------------------------- algorithms.md 1.4 table */

/* the table, written down as printed: rounds / max (+) per process */
static const struct {
    int p, q;
    int one[2], onetwothree[2];
    int best_qprime;
    int best[2], twoop[2], halving[2];
} table14[] = {
    {2, 1, {1, 0}, {1, 0}, 1, {1, 0}, {1, 0}, {1, 0}},
    {3, 2, {2, 1}, {2, 1}, 1, {2, 1}, {2, 1}, {2, 1}},
    {4, 2, {3, 2}, {2, 1}, 2, {2, 1}, {2, 1}, {2, 1}},
    {5, 3, {3, 2}, {3, 2}, 1, {3, 2}, {3, 2}, {3, 2}},
    {6, 3, {4, 3}, {3, 2}, 2, {3, 2}, {3, 2}, {3, 2}},
    {7, 3, {4, 3}, {3, 3}, 2, {3, 3}, {3, 3}, {3, 3}},
    {8, 3, {4, 3}, {4, 3}, 3, {3, 3}, {3, 3}, {3, 3}},
    {9, 4, {4, 3}, {4, 3}, 1, {4, 3}, {4, 4}, {4, 3}},
    {10, 4, {5, 4}, {4, 4}, 2, {4, 4}, {4, 4}, {4, 3}},
    {12, 4, {5, 4}, {4, 4}, 2, {4, 4}, {4, 4}, {4, 4}},
    {13, 4, {5, 4}, {4, 4}, 2, {4, 4}, {4, 5}, {4, 4}},
    {16, 4, {5, 4}, {5, 5}, 4, {4, 5}, {4, 5}, {4, 5}},
    {17, 5, {5, 4}, {5, 5}, 1, {5, 4}, {5, 6}, {5, 4}},
    {24, 5, {6, 5}, {5, 5}, 2, {5, 5}, {5, 6}, {5, 6}},
    {25, 5, {6, 5}, {5, 5}, 2, {5, 5}, {5, 7}, {5, 5}},
    {26, 5, {6, 5}, {6, 5}, 3, {5, 6}, {5, 7}, {5, 5}},
    {30, 5, {6, 5}, {6, 6}, 4, {5, 7}, {5, 7}, {5, 6}},
    {31, 5, {6, 5}, {6, 6}, 4, {5, 7}, {5, 7}, {5, 7}},
    {32, 5, {6, 5}, {6, 6}, 5, {5, 7}, {5, 7}, {5, 7}},
    {33, 6, {6, 5}, {6, 6}, 1, {6, 5}, {6, 8}, {6, 5}},
    {36, 6, {7, 6}, {6, 6}, 2, {6, 6}, {6, 8}, {6, 6}},
};

static void check_table_entry(const char *name, int p, const int want[2], int comm)
{
    int param;
    const alg_desc_t *alg = find_alg(UCOLL_COLL_EXSCAN, name, &param);
    symbolic_result_t res;
    int rc = symbolic_run_ws(ws, alg, param, UCOLL_COLL_EXSCAN, p, 1, 8, 0, comm, &res);
    REQUIRE(rc == 0 && res.ok, "exscan %s p=%d: %s", name, p, res.error);
    REQUIRE((int)res.rounds == want[0] && (int)res.max_ops == want[1],
            "exscan %s p=%d: %u rounds / %llu (+), algorithms.md 1.4 says %d / %d", name, p,
            res.rounds, (unsigned long long)res.max_ops, want[0], want[1]);
    symbolic_result_free(&res);
}

START_TEST(test_exscan_table_1_4)
{
    for (size_t i = 0; i < sizeof(table14) / sizeof(table14[0]); i++) {
        const int p = table14[i].p;
        ck_assert_uint_eq(clog2((uint64_t)p), (unsigned)table14[i].q);
        ck_assert_int_eq(exscan_best_doubling_qprime(p), table14[i].best_qprime);
        ck_assert_int_eq(best_qprime(p), table14[i].best_qprime);
        for (int comm = 0; comm <= 1; comm++) {
            check_table_entry("1-doubling", p, table14[i].one, comm);
            check_table_entry("123-doubling", p, table14[i].onetwothree, comm);
            check_table_entry("best-doubling", p, table14[i].best, comm);
            check_table_entry("two-op-doubling", p, table14[i].twoop, comm);
            check_table_entry("roughly-halving", p, table14[i].halving, comm);
            /* best-doubling is doubling with its q' */
            char name[32];
            snprintf(name, sizeof(name), "doubling:%d", table14[i].best_qprime);
            check_table_entry(name, p, table14[i].best, comm);
        }
    }
}
END_TEST

/* ---------------------------------------------------------------- exscan, every p <= 4096 */

/*
 * Figures only (rounds = max sched.nrounds, (+) = max REDUCE steps, the same definitions the
 * symbolic executor uses), from each rank's schedule built into one reused sched_t: building
 * all ranks for every p up to 4096 is the whole cost (correctness at large p is
 * test_scans_large_p's). Worker w of nw does the p with p % nw == w; returns 0, or -1 with the
 * first mismatch in err.
 */
static int sweep_part(const char *name, int pmax, int w, int nw, char *err, size_t len)
{
    int param;
    const alg_desc_t *alg = alg_lookup(UCOLL_COLL_EXSCAN, name, &param);
    const int linear = strcmp(name, "linear") == 0;
    int rc = 0;
    sched_t s;
    if (alg == NULL) {
        snprintf(err, len, "exscan %s is not in the registry", name);
        return -1;
    }
    sched_init(&s);
    for (int p = 1 + w; p <= pmax && rc == 0; p += nw) {
        unsigned rounds = 0;
        uint64_t ops = 0;
        for (int r = 0; r < p && rc == 0; r++) {
            sched_clear(&s);
            if (symbolic_build(alg, param, p, r, 1, 1, 0, 0, &s) != 0) {
                snprintf(err, len, "exscan %s p=%d rank %d: builder failed", name, p, r);
                rc = -1;
            }
            uint64_t o = 0;
            for (size_t i = 0; i < s.nsteps; i++)
                o += s.steps[i].kind == SCHED_REDUCE;
            if (linear && o != (r >= 1 && r + 1 < p ? 1u : 0u)) {
                snprintf(err, len, "exscan linear p=%d rank %d: %llu (+)", p, r,
                         (unsigned long long)o);
                rc = -1;
            }
            ops = o > ops ? o : ops;
            rounds = s.nrounds > rounds ? s.nrounds : rounds;
        }
        expect_t e;
        if (rc != 0)
            break;
        if (expected(UCOLL_COLL_EXSCAN, name, param, p, 0, 0, &e) != 0) {
            snprintf(err, len, "no expected figures for exscan %s", name);
            rc = -1;
        } else if (rounds != e.rounds) {
            snprintf(err, len, "exscan %s p=%d: %u rounds, expected %u", name, p, rounds, e.rounds);
            rc = -1;
        } else if (ops < e.ops_lo || ops > e.ops_hi) {
            snprintf(err, len, "exscan %s p=%d: max (+) %llu, expected %llu..%llu", name, p,
                     (unsigned long long)ops, (unsigned long long)e.ops_lo,
                     (unsigned long long)e.ops_hi);
            rc = -1;
        }
    }
    sched_destroy(&s);
    return rc;
}

/* the sweep in two processes, for the machine's two cores */
#define SWEEP_WORKERS 2

static void sweep(const char *name, int pmax)
{
    pid_t pid[SWEEP_WORKERS];
    int fd[SWEEP_WORKERS];
    for (int w = 0; w < SWEEP_WORKERS; w++) {
        int pfd[2];
        ck_assert_int_eq(pipe(pfd), 0);
        pid[w] = fork();
        ck_assert_int_ge(pid[w], 0);
        if (pid[w] == 0) { /* worker: no Check calls here, only the pipe and the exit code */
            char err[512] = "";
            close(pfd[0]);
            const int rc = sweep_part(name, pmax, w, SWEEP_WORKERS, err, sizeof(err));
            if (rc != 0 && write(pfd[1], err, strlen(err)) < 0)
                _exit(2);
            _exit(rc == 0 ? 0 : 1);
        }
        close(pfd[1]);
        fd[w] = pfd[0];
    }
    char msg[SWEEP_WORKERS][512];
    int status[SWEEP_WORKERS];
    for (int w = 0; w < SWEEP_WORKERS; w++) {
        ssize_t n, got = 0;
        while ((n = read(fd[w], msg[w] + got, sizeof(msg[w]) - 1 - (size_t)got)) > 0)
            got += n;
        msg[w][got] = '\0';
        close(fd[w]);
        ck_assert_int_eq(waitpid(pid[w], &status[w], 0), pid[w]);
    }
    for (int w = 0; w < SWEEP_WORKERS; w++)
        REQUIRE(WIFEXITED(status[w]) && WEXITSTATUS(status[w]) == 0, "sweep of %s: %s", name,
                msg[w][0] ? msg[w] : "worker died");
}

#define SWEEP_P 4096

START_TEST(test_sweep_linear)
{
    sweep("linear", SWEEP_P);
}
END_TEST

START_TEST(test_sweep_recursive_doubling)
{
    sweep("recursive-doubling", SWEEP_P);
}
END_TEST

START_TEST(test_sweep_1_doubling)
{
    sweep("1-doubling", SWEEP_P);
}
END_TEST

START_TEST(test_sweep_123_doubling)
{
    sweep("123-doubling", SWEEP_P);
}
END_TEST

START_TEST(test_sweep_best_doubling)
{
    sweep("best-doubling", SWEEP_P);
}
END_TEST

START_TEST(test_sweep_two_op_doubling)
{
    sweep("two-op-doubling", SWEEP_P);
}
END_TEST

START_TEST(test_sweep_roughly_halving)
{
    sweep("roughly-halving", SWEEP_P);
}
END_TEST

/* the rounds formulas of algorithms.md 1.2 and best-doubling's q', for every p <= 4096 */
START_TEST(test_formulas)
{
    for (int p = 1; p <= SWEEP_P; p++) {
        const unsigned q = clog2((uint64_t)p);
        if (p >= 2) {
            REQUIRE(doubling_rounds(p, 1) == 1 + clog2((uint64_t)(p - 1)), "1-doubling p=%d", p);
            /* 123-doubling: ceil(log2(p-1) + log2(4/3)) = smallest q with 3 * 2^q >= 4(p-1) */
            unsigned q123 = 0;
            while ((UINT64_C(3) << q123) < UINT64_C(4) * (uint64_t)(p - 1))
                q123++;
            REQUIRE(doubling_rounds(p, 2) == q123, "123-doubling p=%d", p);
        }
        /* two-op-doubling (q' = q) runs phase 1 only: ceil(log2 p) rounds */
        REQUIRE(doubling_rounds(p, q < 1 ? 1 : (int)q) == q, "two-op p=%d", p);
        /* best-doubling: round-optimal, and its q' is the smallest that is */
        const int qp = best_qprime(p);
        REQUIRE(exscan_best_doubling_qprime(p) == qp,
                "best-doubling p=%d: builder q'=%d, "
                "ceil(q - log2(2^q - p + 1)) = %d",
                p, exscan_best_doubling_qprime(p), qp);
        REQUIRE(doubling_rounds(p, qp) == q, "best-doubling p=%d not round-optimal", p);
        REQUIRE(qp == 1 || doubling_rounds(p, qp - 1) > q, "best-doubling p=%d: q' not minimal", p);
    }
}
END_TEST

/* ---------------------------------------------------------------- the executor catches errors */

/* runs hand-made schedules and requires the error message to contain `what` */
static void expect_error(sched_t *s, int p, ucoll_coll_t coll, size_t count, int root, int comm,
                         const char *what)
{
    symbolic_result_t res;
    int rc = symbolic_run_scheds(s, coll, p, count, 1, root, comm, &res);
    REQUIRE(rc == 0, "the run itself failed: %s", res.error);
    REQUIRE(!res.ok, "a broken schedule passed (expected an error about '%s')", what);
    REQUIRE(strstr(res.error, what) != NULL, "error '%s' does not mention '%s'", res.error, what);
    symbolic_result_free(&res);
    for (int r = 0; r < p; r++)
        sched_destroy(&s[r]);
}

static void expect_ok(sched_t *s, int p, ucoll_coll_t coll, size_t count, int root, int comm)
{
    symbolic_result_t res;
    int rc = symbolic_run_scheds(s, coll, p, count, 1, root, comm, &res);
    REQUIRE(rc == 0 && res.ok, "a correct hand-made schedule failed: %s", res.error);
    symbolic_result_free(&res);
    for (int r = 0; r < p; r++)
        sched_destroy(&s[r]);
}

static void init_all(sched_t *s, int p)
{
    for (int r = 0; r < p; r++)
        sched_init(&s[r]);
}

#define IN1 sched_region(SCHED_BUF_IN, 0, 1)
#define OUT1 sched_region(SCHED_BUF_OUT, 0, 1)
#define TMP1 sched_region(SCHED_BUF_TMP, 0, 1)

/* exscan p = 3, linear, hand-made; `variant` breaks it in one way */
static void exscan3(sched_t *s, int variant)
{
    init_all(s, 3);
    sched_send(&s[0], 0, 1, variant == 1 ? TMP1 : IN1); /* 1: sends never-written scratch */
    sched_recv(&s[1], 0, 0, OUT1);
    if (variant == 2) {
        sched_copy(&s[1], OUT1, TMP1);
        sched_reduce(&s[1], IN1, TMP1); /* 2: V1 (+) W: the wrong order */
    } else {
        sched_copy(&s[1], IN1, TMP1);
        sched_reduce(&s[1], OUT1, TMP1); /* W (+) V1 */
    }
    sched_send(&s[1], 1, 2, TMP1);
    if (variant == 3)
        sched_recv(&s[2], 2, 1, OUT1); /* 3: receives in the wrong round */
    else if (variant == 4)
        sched_recv(&s[2], 1, 0, OUT1); /* 4: receives from the wrong peer */
    else
        sched_recv(&s[2], 1, 1, OUT1);
    if (variant == 5)
        sched_reduce(&s[2], IN1, OUT1); /* 5: adds its own input too */
    if (variant == 6)
        sched_copy(&s[0], IN1, OUT1); /* 6: rank 0's result is to stay untouched */
}

START_TEST(test_catches_broken_exscan)
{
    sched_t s[3];
    exscan3(s, 0);
    expect_ok(s, 3, UCOLL_COLL_EXSCAN, 1, 0, 0);
    exscan3(s, 1);
    expect_error(s, 3, UCOLL_COLL_EXSCAN, 1, 0, 0, "undefined");
    exscan3(s, 2);
    expect_error(s, 3, UCOLL_COLL_EXSCAN, 1, 0, 0, "in order");
    exscan3(s, 2); /* the same order is fine for a commutative op */
    expect_ok(s, 3, UCOLL_COLL_EXSCAN, 1, 0, 1);
    exscan3(s, 3);
    expect_error(s, 3, UCOLL_COLL_EXSCAN, 1, 0, 0, "does not receive from 1 in round 1");
    exscan3(s, 4);
    expect_error(s, 3, UCOLL_COLL_EXSCAN, 1, 0, 0, "in round 1");
    exscan3(s, 5);
    expect_error(s, 3, UCOLL_COLL_EXSCAN, 1, 0, 1, "expected inputs 0..1");
    exscan3(s, 6);
    expect_error(s, 3, UCOLL_COLL_EXSCAN, 1, 0, 0, "expected it untouched");
}
END_TEST

START_TEST(test_catches_mismatches)
{
    sched_t s[2];
    /* element counts differ */
    init_all(s, 2);
    sched_send(&s[0], 0, 1, sched_region(SCHED_BUF_IN, 0, 2));
    sched_recv(&s[1], 0, 0, sched_region(SCHED_BUF_OUT, 0, 1));
    expect_error(s, 2, UCOLL_COLL_EXSCAN, 2, 0, 0, "sends 2 elements but rank 1 receives 1");
    /* a receive nobody sends */
    init_all(s, 2);
    sched_recv(&s[1], 0, 0, OUT1);
    expect_error(s, 2, UCOLL_COLL_EXSCAN, 1, 0, 0, "rank 0 sends nothing to 1 in round 0");
    /* two XCHGs of one round on one process (hand-edited, as sched_xchg would allow it) */
    init_all(s, 2);
    sched_send(&s[0], 0, 1, IN1);
    sched_send(&s[0], 0, 1, IN1);
    sched_recv(&s[1], 0, 0, OUT1);
    expect_error(s, 2, UCOLL_COLL_EXSCAN, 1, 0, 0, "at most one XCHG per round");
    /* nrounds that does not fit the steps */
    init_all(s, 2);
    sched_send(&s[0], 0, 1, IN1);
    sched_recv(&s[1], 0, 0, OUT1);
    s[1].nrounds = 3;
    expect_error(s, 2, UCOLL_COLL_EXSCAN, 1, 0, 0, "sched.nrounds is 3");
    /* a peer outside the communicator */
    init_all(s, 2);
    sched_send(&s[0], 0, 2, IN1);
    expect_error(s, 2, UCOLL_COLL_EXSCAN, 1, 0, 0, "peer out of range");
    /* writing the read-only input */
    init_all(s, 2);
    sched_copy(&s[0], OUT1, IN1);
    expect_error(s, 2, UCOLL_COLL_SCAN, 1, 0, 0, "read-only");
    /* a region past the end of the vector */
    init_all(s, 2);
    sched_copy(&s[0], sched_region(SCHED_BUF_IN, 1, 1), OUT1);
    expect_error(s, 2, UCOLL_COLL_SCAN, 1, 0, 0, "outside IN");
    /* overlapping copy */
    init_all(s, 2);
    sched_copy(&s[0], sched_region(SCHED_BUF_IN, 0, 3), sched_region(SCHED_BUF_ACC, 0, 3));
    sched_copy(&s[0], sched_region(SCHED_BUF_ACC, 0, 2), sched_region(SCHED_BUF_ACC, 1, 2));
    expect_error(s, 2, UCOLL_COLL_SCAN, 3, 0, 0, "overlap");
}
END_TEST

/* allreduce of p = 2 on halves of a 5-element vector (first half [0, 3)): pieces of vectors,
 * uneven splits and runs that merge again; variant 1 misaligns the halves */
static void halves2(sched_t *s, int variant)
{
    init_all(s, 2);
    const sched_region_t first = sched_region(SCHED_BUF_OUT, 0, 3);
    const sched_region_t second = sched_region(SCHED_BUF_OUT, 3, 2);
    for (int r = 0; r < 2; r++)
        sched_copy(&s[r], sched_region(SCHED_BUF_IN, 0, 5), sched_region(SCHED_BUF_OUT, 0, 5));
    /* rank 0 keeps the first half: OUT[0,3) = OUT[0,3) (+) T (T from rank 1 covers rank 1) */
    sched_xchg(&s[0], 0, 1, second, 1, sched_region(SCHED_BUF_TMP, 0, 3));
    sched_reduce(&s[0], first, sched_region(SCHED_BUF_TMP, 0, 3));
    sched_copy(&s[0], sched_region(SCHED_BUF_TMP, 0, 3), first);
    /* rank 1 keeps the second half: OUT[3,5) = T (+) OUT[3,5) */
    sched_xchg(&s[1], 0, 0, first, 0, sched_region(SCHED_BUF_TMP, 0, 2));
    sched_reduce(&s[1], sched_region(SCHED_BUF_TMP, 0, 2),
                 variant == 1 ? sched_region(SCHED_BUF_OUT, 2, 2) : second);
    /* swap the reduced halves */
    sched_xchg(&s[0], 1, 1, first, 1, second);
    sched_xchg(&s[1], 1, 0, second, 0, first);
}

START_TEST(test_catches_pieces)
{
    sched_t s[2];
    halves2(s, 0);
    expect_ok(s, 2, UCOLL_COLL_ALLREDUCE, 5, 0, 0);
    halves2(s, 1);
    expect_error(s, 2, UCOLL_COLL_ALLREDUCE, 5, 0, 0, "combines element 3");
}
END_TEST

START_TEST(test_catches_other_collectives)
{
    sched_t s[4];
    /* reduce: a non-root writing OUT (its recvbuf is not significant) */
    init_all(s, 2);
    sched_copy(&s[1], IN1, OUT1);
    sched_send(&s[1], 0, 0, OUT1);
    sched_copy(&s[0], IN1, OUT1);
    sched_recv(&s[0], 0, 1, TMP1);
    sched_reduce(&s[0], OUT1, TMP1);
    sched_copy(&s[0], TMP1, OUT1);
    expect_error(s, 2, UCOLL_COLL_REDUCE, 1, 0, 0, "non-root");
    /* reduce: the root gets rank 1's input twice instead of 0's and 1's */
    init_all(s, 2);
    sched_send(&s[1], 0, 0, IN1);
    sched_recv(&s[0], 0, 1, TMP1);
    sched_copy(&s[0], TMP1, OUT1);
    sched_reduce(&s[0], TMP1, OUT1);
    expect_error(s, 2, UCOLL_COLL_REDUCE, 1, 0, 1, "expected inputs 0..1");
    /* bcast: the root sends IN, which bcast does not have */
    init_all(s, 2);
    sched_send(&s[0], 0, 1, IN1);
    sched_recv(&s[1], 0, 0, OUT1);
    expect_error(s, 2, UCOLL_COLL_BCAST, 1, 0, 0, "undefined");
    /* bcast: a rank that never gets the data */
    init_all(s, 3);
    sched_send(&s[0], 0, 1, OUT1);
    sched_recv(&s[1], 0, 0, OUT1);
    expect_error(s, 3, UCOLL_COLL_BCAST, 1, 0, 0, "rank 2: OUT[0,1) is untouched");
    /* barrier: only the skip-1 round of a dissemination on 4 ranks */
    init_all(s, 4);
    for (int r = 0; r < 4; r++)
        sched_xchg(&s[r], 0, (r + 1) % 4, sched_region(SCHED_BUF_OUT, 0, 0), (r + 3) % 4,
                   sched_region(SCHED_BUF_OUT, 0, 0));
    expect_error(s, 4, UCOLL_COLL_BARRIER, 0, 0, 0, "has heard from 2 of the 4 ranks");
}
END_TEST

/* the registry's own builders, run wrongly on purpose: a mismatch of root or commutativity
 * that the schedules are not built for must be caught, not pass */
START_TEST(test_catches_wrong_use)
{
    int param;
    const alg_desc_t *alg = find_alg(UCOLL_COLL_REDUCE, "binomial", &param);
    sched_t s[5];
    /* built for root 2 (commutative tree rooted at 2), run as root 0 */
    for (int r = 0; r < 5; r++) {
        sched_init(&s[r]);
        ck_assert_int_eq(symbolic_build(alg, param, 5, r, 1, 1, 2, 1, &s[r]), 0);
    }
    expect_error(s, 5, UCOLL_COLL_REDUCE, 1, 0, 1, "non-root");
    /* built for a commutative op with root 3 (virtual ranks rotate the order), run as
     * non-commutative */
    for (int r = 0; r < 5; r++) {
        sched_init(&s[r]);
        ck_assert_int_eq(symbolic_build(alg, param, 5, r, 1, 1, 3, 1, &s[r]), 0);
    }
    expect_error(s, 5, UCOLL_COLL_REDUCE, 1, 3, 0, "in order");
}
END_TEST

/* ---------------------------------------------------------------- the step formatter */

START_TEST(test_step_str)
{
    sched_t s;
    char buf[200];
    sched_init(&s);
    sched_xchg(&s, 2, 5, sched_region(SCHED_BUF_OUT, 0, 8), 1, sched_region(SCHED_BUF_TMP, 0, 8));
    sched_reduce(&s, sched_region(SCHED_BUF_TMP, 0, 8), sched_region(SCHED_BUF_OUT, 0, 8));
    sched_copy(&s, sched_region(SCHED_BUF_IN, 2, 3), sched_region(SCHED_BUF_TMP2, 0, 3));
    ck_assert_str_eq(symbolic_step_str(&s.steps[0], buf, sizeof(buf)),
                     "round 2: send OUT[0,8) to 5, recv TMP[0,8) from 1");
    ck_assert_str_eq(symbolic_step_str(&s.steps[1], buf, sizeof(buf)),
                     "OUT[0,8) = TMP[0,8) (+) OUT[0,8)");
    ck_assert_str_eq(symbolic_step_str(&s.steps[2], buf, sizeof(buf)), "TMP2[0,3) = IN[2,5)");
    sched_destroy(&s);
}
END_TEST

static Suite *schedules_suite(void)
{
    Suite *su = suite_create("schedules");
    TCase *tc = tcase_create("symbolic");
    tcase_add_checked_fixture(tc, ws_setup, ws_teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_step_str);
    tcase_add_test(tc, test_catches_broken_exscan);
    tcase_add_test(tc, test_catches_mismatches);
    tcase_add_test(tc, test_catches_pieces);
    tcase_add_test(tc, test_catches_other_collectives);
    tcase_add_test(tc, test_catches_wrong_use);
    tcase_add_test(tc, test_exscan_table_1_4);
    tcase_add_test(tc, test_registry_p256);
    tcase_add_test(tc, test_scans_large_p);
    suite_add_tcase(su, tc);

    TCase *sw = tcase_create("exscan_sweep_4096");
    tcase_set_tags(sw, "long");
    tcase_set_timeout(sw, 600);
    tcase_add_test(sw, test_formulas);
    tcase_add_test(sw, test_sweep_linear);
    tcase_add_test(sw, test_sweep_recursive_doubling);
    tcase_add_test(sw, test_sweep_1_doubling);
    tcase_add_test(sw, test_sweep_123_doubling);
    tcase_add_test(sw, test_sweep_best_doubling);
    tcase_add_test(sw, test_sweep_two_op_doubling);
    tcase_add_test(sw, test_sweep_roughly_halving);
    suite_add_tcase(su, sw);
    return su;
}

int main(void)
{
    SRunner *sr = srunner_create(schedules_suite());
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
