/*
 * tests/mp/owed_test.c: once a collective has returned on a rank, nothing of it may wait for
 * that rank's next ucoll call. Each case: a barrier on world, then one collective on world;
 * right after it returns, the sleepers (ranks 0, p / 2 and p - 1: the ends of chains and
 * rings, a tree's root, leaves and inner ranks) sleep SLEEP s outside ucoll, then join a
 * barrier on another communicator, in which every other rank is already waiting. Every rank
 * must finish the collective well before the sleepers wake: a last fragment left in a send
 * queue, or a rendezvous acknowledgement that only a sleeper's progress sends, would hold it
 * until they do. The sleepers sleep together: one held by another cannot return, so its own
 * call shows the hold, and a rank held by one sleeper is held as long with more of them
 * asleep. One case per collective thus checks what one per sleeper would, in a third of the
 * time.
 * Cases: bcast from roots 0 and p - 1 and allreduce, at a small and a large count (float32);
 * results checked exactly. Each case runs once with nobody asleep first: with the sleepers, a
 * call may take at most that long plus SLEEP / 2, on every rank.
 * Run it with ranks on different hosts (UCX's network path), with and without
 * UCX_RNDV_THRESH=0.
 * Usage: owed_test --expect-size N [--sleep S]. Public API only. Exit 0 when all is right.
 */
#include <ucoll.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int failures;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void check_st(int rank, const char *what, ucoll_status_t st)
{
    if (st != UCOLL_OK) {
        printf("FAIL rank %d: %s: %s\n", rank, what, ucoll_strerror(st));
        failures++;
    }
}

/* small integers: every sum of them is exact in float32 */
static float input(int rank, size_t i)
{
    return (float)((rank * 7 + (int)(i % 1021)) % 64);
}

/* r is 0 or p - 1 (or, with middle, p / 2) */
static int picked(int r, int p, int middle)
{
    return r == 0 || r == p - 1 || (middle && r == p / 2);
}

int main(int argc, char **argv)
{
    int expect = -1;
    double sleep_s = 3.0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--expect-size") == 0 && i + 1 < argc)
            expect = atoi(argv[++i]);
        else if (strcmp(argv[i], "--sleep") == 0 && i + 1 < argc)
            sleep_s = atof(argv[++i]);
        else {
            fprintf(stderr, "usage: owed_test --expect-size N [--sleep S]\n");
            return 2;
        }
    }
    ucoll_comm_t *world = NULL, *other = NULL;
    ucoll_status_t st = ucoll_init(&world);
    if (st != UCOLL_OK) {
        fprintf(stderr, "owed_test: ucoll_init: %s\n", ucoll_strerror(st));
        return 1;
    }
    int rank = ucoll_comm_rank(world), size = ucoll_comm_size(world);
    if (size != expect) {
        fprintf(stderr, "owed_test: job size %d, expected %d\n", size, expect);
        ucoll_finalize(world);
        return 1;
    }
    check_st(rank, "split", ucoll_comm_split(world, 0, rank, &other));
    const size_t counts[2] = {250, (size_t)1 << 20}; /* 1000 B and 4 MiB */
    float *buf = malloc(counts[1] * sizeof(float)), *in = malloc(counts[1] * sizeof(float));
    if (buf == NULL || in == NULL || other == NULL) {
        fprintf(stderr, "owed_test: out of memory or no split\n");
        return 1;
    }
    int cases = 0;
    for (int c = 0; c < 2; c++) {
        size_t n = counts[c];
        /* kind < size: bcast from root `kind` (0 or p - 1); kind == size: allreduce */
        for (int kind = 0; kind <= size; kind++) {
            if (kind != size && !picked(kind, size, 0))
                continue;
            char what[96];
            snprintf(what, sizeof(what), "%s%s%d, count %zu", kind < size ? "bcast" : "allreduce",
                     kind < size ? " root " : "", kind < size ? kind : 0, n);
            for (size_t i = 0; i < n; i++)
                in[i] = input(rank, i);
            /* twice: first with nobody asleep, for how long the call takes here now */
            double took = 0, base = 0;
            for (int pass = 0; pass < 2; pass++) {
                memcpy(buf, in, n * sizeof(float));
                check_st(rank, "start barrier", ucoll_barrier(world));
                double t0 = now_s();
                if (kind < size)
                    st = ucoll_bcast(world, buf, n, UCOLL_FLOAT32, kind);
                else
                    st = ucoll_allreduce(world, in, buf, n, UCOLL_FLOAT32, UCOLL_OP_SUM);
                took = now_s() - t0;
                if (pass == 0)
                    base = took;
                check_st(rank, what, st);
            }
            size_t bad = n;
            for (size_t i = 0; i < n && bad == n; i++) {
                float want = 0;
                if (kind < size)
                    want = input(kind, i);
                else
                    for (int r = 0; r < size; r++)
                        want += input(r, i);
                if (buf[i] != want)
                    bad = i;
            }
            if (bad != n) {
                printf("FAIL rank %d: %s: element %zu wrong\n", rank, what, bad);
                failures++;
            }
            if (took > base + sleep_s / 2) {
                printf("FAIL rank %d: %s: took %.3f s (%.3f s with nobody asleep) with the "
                       "sleepers asleep %.1f s\n",
                       rank, what, took, base, sleep_s);
                failures++;
            }
            if (picked(rank, size, 1))
                usleep((useconds_t)(sleep_s * 1e6));
            check_st(rank, "barrier on the other communicator", ucoll_barrier(other));
            cases++;
        }
    }
    free(buf);
    free(in);
    check_st(rank, "comm free", ucoll_comm_free(other));
    int local = failures, total = 0;
    st = ucoll_allreduce(world, &local, &total, 1, UCOLL_INT32, UCOLL_OP_SUM);
    check_st(rank, "tally", st);
    const ucoll_status_t fin = ucoll_finalize(world);
    check_st(rank, "finalize", fin);
    if (rank == 0)
        printf("owed_test np=%d verdict: %s (%d cases, %d failures)\n", size,
               total == 0 && st == UCOLL_OK && fin == UCOLL_OK ? "PASS" : "FAIL", cases, total);
    return total == 0 && failures == 0 ? 0 : 1;
}
