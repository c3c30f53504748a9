/*
 * tests/api_user/api_user.c: a program that knows ucoll only through its documented API
 * (docs/api.md) and is built outside the tree against an installed ucoll:
 *     cc api_user.c $(pkg-config --cflags --libs ucoll)
 * It runs every collective with every algorithm name (plus "auto") and checks the results with
 * int64 sums and float64 maxima computed locally.
 *
 * Usage: api_user --expect-size N [COLL=ALG,ALG,...]...
 * COLL=... replaces the built-in algorithm list of COLL (exscan, scan, reduce, allreduce,
 * bcast, barrier), e.g. with the names `ucoll_info -a` prints. Exit status 0 if every result
 * was right.
 */
#include <ucoll.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXN 3000
#define MAXALGS 32

static int rank, size, failures;

static void fail(const char *what, const char *alg, size_t n, const char *detail)
{
    failures++;
    if (failures <= 20)
        printf("api_user FAIL rank %d: %s alg=%s count=%zu: %s\n", rank, what, alg, n, detail);
}

static int64_t val(int r, size_t i)
{
    return (int64_t)(r + 1) * 1000003 + (int64_t)i * 7919 - 5000000;
}

static double fval(int r, size_t i)
{
    return (double)((r * 7 + (int)i * 13) % 101) / 4.0 - 12.5;
}

/* sum of val(r, i) over r in [lo, hi] */
static int64_t sum(int lo, int hi, size_t i)
{
    int64_t s = 0;
    for (int r = lo; r <= hi; r++)
        s += val(r, i);
    return s;
}

static double fmax_of(int hi, size_t i)
{
    double m = fval(0, i);
    for (int r = 1; r <= hi; r++)
        m = fval(r, i) > m ? fval(r, i) : m;
    return m;
}

static void check(ucoll_status_t st, const char *what, const char *alg, size_t n)
{
    if (st != UCOLL_OK) {
        fail(what, alg, n, ucoll_strerror(st));
        exit(1); /* the job cannot go on in step */
    }
}

int main(int argc, char **argv)
{
    static const char *algs[6][MAXALGS] = {
        [UCOLL_COLL_EXSCAN] = {"linear", "recursive-doubling", "1-doubling", "123-doubling",
                               "best-doubling", "two-op-doubling", "doubling:3", "roughly-halving",
                               "auto", NULL},
        [UCOLL_COLL_SCAN] = {"linear", "doubling", "recursive-doubling", "auto", NULL},
        [UCOLL_COLL_REDUCE] = {"binomial", "auto", NULL},
        [UCOLL_COLL_ALLREDUCE] = {"recursive-doubling", "auto", NULL},
        [UCOLL_COLL_BCAST] = {"binomial", "auto", NULL},
        [UCOLL_COLL_BARRIER] = {"dissemination", "auto", NULL},
    };
    static const size_t counts[] = {1, 5, MAXN};
    static int64_t in[MAXN], out[MAXN];
    static double fin[MAXN], fout[MAXN];
    int expect = -1, cases = 0;
    char msg[160];

    static const char *colls[6] = {"exscan", "scan", "reduce", "allreduce", "bcast", "barrier"};
    for (int i = 1; i < argc; i++) {
        char *eq = strchr(argv[i], '=');
        int coll = -1;
        for (int c = 0; eq != NULL && c < 6; c++)
            if (strlen(colls[c]) == (size_t)(eq - argv[i]) &&
                strncmp(argv[i], colls[c], (size_t)(eq - argv[i])) == 0)
                coll = c;
        if (strcmp(argv[i], "--expect-size") == 0 && i + 1 < argc) {
            expect = atoi(argv[++i]);
        } else if (coll >= 0) {
            int n = 0;
            for (char *t = strtok(eq + 1, ","); t != NULL && n < MAXALGS - 1; t = strtok(NULL, ","))
                algs[coll][n++] = t;
            algs[coll][n] = NULL;
        } else {
            fprintf(stderr, "usage: api_user --expect-size N [COLL=ALG,ALG,...]...\n");
            return 2;
        }
    }
    ucoll_comm_t *world;
    ucoll_status_t st = ucoll_init(&world);
    if (st != UCOLL_OK) {
        fprintf(stderr, "api_user: ucoll_init: %s\n", ucoll_strerror(st));
        return 1;
    }
    rank = ucoll_comm_rank(world);
    size = ucoll_comm_size(world);
    if (expect >= 1 && size != expect) {
        fprintf(stderr, "api_user: job size %d, expected %d\n", size, expect);
        return 1;
    }

    for (int coll = UCOLL_COLL_EXSCAN; coll <= UCOLL_COLL_BARRIER; coll++) {
        for (int a = 0; algs[coll][a] != NULL; a++) {
            const char *alg = algs[coll][a];
            check(ucoll_set_algorithm(world, (ucoll_coll_t)coll, alg), "set_algorithm", alg, 0);
            for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
                size_t n = counts[c];
                int root = (int)(c + (size_t)a) % size;
                for (size_t i = 0; i < n; i++) {
                    in[i] = val(rank, i);
                    out[i] = -1;
                    fin[i] = fval(rank, i);
                    fout[i] = -1e300;
                }
                cases++;
                switch ((ucoll_coll_t)coll) {
                case UCOLL_COLL_EXSCAN:
                    check(ucoll_exscan(world, in, out, n, UCOLL_INT64, UCOLL_OP_SUM), "exscan", alg,
                          n);
                    for (size_t i = 0; i < n; i++)
                        if (out[i] != (rank == 0 ? -1 : sum(0, rank - 1, i))) {
                            snprintf(msg, sizeof(msg), "[%zu] = %lld", i, (long long)out[i]);
                            fail("exscan", alg, n, msg);
                            break;
                        }
                    break;
                case UCOLL_COLL_SCAN:
                    check(ucoll_scan(world, fin, fout, n, UCOLL_FLOAT64, UCOLL_OP_MAX), "scan", alg,
                          n);
                    check(ucoll_scan(world, UCOLL_IN_PLACE, in, n, UCOLL_INT64, UCOLL_OP_SUM),
                          "scan in place", alg, n);
                    for (size_t i = 0; i < n; i++)
                        if (in[i] != sum(0, rank, i) || fout[i] != fmax_of(rank, i)) {
                            snprintf(msg, sizeof(msg), "[%zu] = %lld / %g", i, (long long)in[i],
                                     fout[i]);
                            fail("scan", alg, n, msg);
                            break;
                        }
                    break;
                case UCOLL_COLL_REDUCE:
                    check(ucoll_reduce(world, in, out, n, UCOLL_INT64, UCOLL_OP_SUM, root),
                          "reduce", alg, n);
                    for (size_t i = 0; rank == root && i < n; i++)
                        if (out[i] != sum(0, size - 1, i)) {
                            snprintf(msg, sizeof(msg), "root %d [%zu] = %lld", root, i,
                                     (long long)out[i]);
                            fail("reduce", alg, n, msg);
                            break;
                        }
                    break;
                case UCOLL_COLL_ALLREDUCE:
                    check(ucoll_allreduce(world, in, out, n, UCOLL_INT64, UCOLL_OP_SUM),
                          "allreduce", alg, n);
                    check(
                        ucoll_allreduce(world, UCOLL_IN_PLACE, fin, n, UCOLL_FLOAT64, UCOLL_OP_MAX),
                        "allreduce in place", alg, n);
                    for (size_t i = 0; i < n; i++)
                        if (out[i] != sum(0, size - 1, i) || fin[i] != fmax_of(size - 1, i)) {
                            snprintf(msg, sizeof(msg), "[%zu] = %lld / %g", i, (long long)out[i],
                                     fin[i]);
                            fail("allreduce", alg, n, msg);
                            break;
                        }
                    break;
                case UCOLL_COLL_BCAST:
                    check(ucoll_bcast(world, in, n, UCOLL_INT64, root), "bcast", alg, n);
                    for (size_t i = 0; i < n; i++)
                        if (in[i] != val(root, i)) {
                            snprintf(msg, sizeof(msg), "root %d [%zu] = %lld", root, i,
                                     (long long)in[i]);
                            fail("bcast", alg, n, msg);
                            break;
                        }
                    break;
                case UCOLL_COLL_BARRIER:
                    check(ucoll_barrier(world), "barrier", alg, 0);
                    break;
                default: /* the loop runs over the first six collectives only */
                    fail("collective", alg, n, "outside the six this program calls");
                    break;
                }
            }
        }
    }

    int32_t mine = failures, all = 0;
    check(ucoll_allreduce(world, &mine, &all, 1, UCOLL_INT32, UCOLL_OP_SUM), "allreduce", "final",
          1);
    if (rank == 0)
        printf("api_user np=%d: %d cases per rank, %d failures on all ranks: %s\n", size, cases,
               (int)all, all == 0 ? "PASS" : "FAIL");
    check(ucoll_finalize(world), "finalize", "-", 0);
    return all == 0 && failures == 0 ? 0 : 1;
}
