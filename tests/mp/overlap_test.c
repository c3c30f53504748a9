/*
 * tests/mp/overlap_test.c: nonblocking collectives overlapped with computation longer than
 * UCOLL_TIMEOUT. The program sets UCOLL_TIMEOUT=2 itself before ucoll_init; every rank posts a
 * collective, computes (sleeps) 3 s without calling ucoll, then completes it. The time spent
 * outside ucoll is no wait for the collective, so each must end with UCOLL_OK and the exact
 * result on every rank:
 *   - iallreduce (int64 sum of rank + 1 + i over 5 elements), then ucoll_wait;
 *   - iallreduce again, then ucoll_test until it is no longer INPROGRESS;
 *   - a persistent allreduce started, then ucoll_wait, twice.
 * And the other side: time outside ucoll is not credited to a collective that starts later.
 * After a barrier every rank computes 3 s and enters a blocking allreduce, rank 0 only 4 s
 * later still: the others must give up with UCOLL_ERR_TIMED_OUT (2 s after they entered; had
 * their 3 s outside been added to the timeout they would have waited for rank 0 and
 * succeeded). Rank 0 times out too, or, where all it needs was sent before the others gave up
 * (np = 2), completes with the right result. That allreduce runs on a split of world (C): a
 * rank whose call timed out has C revoked (UCOLL_ERR_STATE). 13 s after the barrier every rank
 * frees C and runs one more allreduce on world, which must be right.
 * Usage: overlap_test --expect-size N. Output: FAIL lines, then
 * "overlap np=N: C checks, F failed; verdict: PASS|FAIL" on rank 0. Exit 0 only without failure.
 */
#include <ucoll.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define COUNT 5
#define COMPUTE_S 3

static int g_rank;
static long n_checks, n_failed;

static void check(int ok, const char *what, long got, long want)
{
    n_checks++;
    if (!ok) {
        n_failed++;
        printf("FAIL rank %d: %s: got %ld, expected %ld\n", g_rank, what, got, want);
        fflush(stdout);
    }
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static void compute(void)
{
    sleep_s(COMPUTE_S);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void check_sum(const char *what, const int64_t *out, int size)
{
    for (int i = 0; i < COUNT; i++) {
        /* sum over r of (r + 1 + i) */
        const long want = (long)size * (size + 1) / 2 + (long)size * i;
        check(out[i] == want, what, (long)out[i], want);
    }
}

static void fill(int64_t *in, int64_t *out)
{
    for (int i = 0; i < COUNT; i++) {
        in[i] = g_rank + 1 + i;
        out[i] = -1;
    }
}

int main(int argc, char **argv)
{
    int expect_size = -1;
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--expect-size") == 0)
            expect_size = atoi(argv[i + 1]);
    if (expect_size < 1) {
        fprintf(stderr, "usage: overlap_test --expect-size N\n");
        return 2;
    }
    setenv("UCOLL_TIMEOUT", "2", 1);
    ucoll_comm_t *w;
    ucoll_status_t st = ucoll_init(&w);
    if (st != UCOLL_OK) {
        printf("FATAL overlap_test: ucoll_init: %s\n", ucoll_strerror(st));
        return 2;
    }
    g_rank = ucoll_comm_rank(w);
    const int size = ucoll_comm_size(w);
    check(size == expect_size, "job size", size, expect_size);

    int64_t in[COUNT], out[COUNT];
    ucoll_request_t *req = NULL;

    fill(in, out);
    st = ucoll_iallreduce(w, in, out, COUNT, UCOLL_INT64, UCOLL_OP_SUM, &req);
    check(st == UCOLL_OK, "iallreduce post", st, UCOLL_OK);
    compute();
    st = ucoll_wait(req);
    check(st == UCOLL_OK, "iallreduce: wait after 3 s of computation", st, UCOLL_OK);
    check_sum("iallreduce + wait: result", out, size);
    check(ucoll_request_free(req) == UCOLL_OK, "request_free", 0, 0);

    fill(in, out);
    st = ucoll_iallreduce(w, in, out, COUNT, UCOLL_INT64, UCOLL_OP_SUM, &req);
    check(st == UCOLL_OK, "iallreduce post (test loop)", st, UCOLL_OK);
    compute();
    while ((st = ucoll_test(req)) == UCOLL_INPROGRESS)
        ;
    check(st == UCOLL_OK, "iallreduce: test loop after 3 s of computation", st, UCOLL_OK);
    check_sum("iallreduce + test: result", out, size);
    check(ucoll_request_free(req) == UCOLL_OK, "request_free", 0, 0);

    st = ucoll_allreduce_init(w, in, out, COUNT, UCOLL_INT64, UCOLL_OP_SUM, &req);
    check(st == UCOLL_OK, "allreduce_init", st, UCOLL_OK);
    for (int round = 0; round < 2 && st == UCOLL_OK; round++) {
        fill(in, out);
        st = ucoll_start(req);
        check(st == UCOLL_OK, "persistent start", st, UCOLL_OK);
        compute();
        st = ucoll_wait(req);
        check(st == UCOLL_OK, "persistent allreduce: wait after 3 s of computation", st, UCOLL_OK);
        check_sum("persistent allreduce: result", out, size);
    }
    check(ucoll_request_free(req) == UCOLL_OK, "request_free", 0, 0);

    /* a late rank 0: nothing of the others' 3 s outside ucoll extends their timeout */
    ucoll_comm_t *c = NULL;
    st = ucoll_comm_split(w, 0, g_rank, &c);
    check(st == UCOLL_OK, "split of world for the late allreduce", st, UCOLL_OK);
    st = ucoll_barrier(w);
    check(st == UCOLL_OK, "barrier before the late allreduce", st, UCOLL_OK);
    const double t0 = now_s();
    compute();
    if (g_rank == 0)
        sleep_s(4);
    fill(in, out);
    st = ucoll_allreduce(c, in, out, COUNT, UCOLL_INT64, UCOLL_OP_SUM);
    const ucoll_status_t late_st = st;
    if (g_rank != 0) {
        check(st == UCOLL_ERR_TIMED_OUT,
              "allreduce whose rank 0 comes 4 s late, after 3 s outside ucoll: status", st,
              UCOLL_ERR_TIMED_OUT);
    } else if (st == UCOLL_OK) { /* np = 2: the other's only message was waiting for it */
        check_sum("allreduce entered 4 s late, complete from what was sent: result", out, size);
    } else {
        check(st == UCOLL_ERR_TIMED_OUT, "allreduce entered 4 s after the others: status", st,
              UCOLL_ERR_TIMED_OUT);
    }
    const double resync = t0 + 13 - now_s();
    if (resync > 0)
        sleep_s(resync);
    if (late_st != UCOLL_OK) {
        st = ucoll_barrier(c);
        check(st == UCOLL_ERR_STATE, "barrier on the comm of the timed-out allreduce", st,
              UCOLL_ERR_STATE);
    }
    st = ucoll_comm_free(c);
    check(st == UCOLL_OK, "free of the comm of the timed-out allreduce", st, UCOLL_OK);
    fill(in, out);
    st = ucoll_allreduce(w, in, out, COUNT, UCOLL_INT64, UCOLL_OP_SUM);
    check(st == UCOLL_OK, "allreduce after the timed-out one", st, UCOLL_OK);
    check_sum("allreduce after the timed-out one: result", out, size);

    /* every rank's failures */
    int64_t f = n_failed, total = -1;
    st = ucoll_allreduce(w, &f, &total, 1, UCOLL_INT64, UCOLL_OP_SUM);
    check(st == UCOLL_OK, "allreduce of the failure counts", st, UCOLL_OK);
    if (st != UCOLL_OK)
        total = n_failed;
    st = ucoll_finalize(w);
    check(st == UCOLL_OK, "finalize", st, UCOLL_OK);
    if (g_rank == 0)
        printf("overlap np=%d: %ld checks on rank 0, %lld failed over all ranks; verdict: %s\n",
               size, n_checks, (long long)total, total == 0 && n_failed == 0 ? "PASS" : "FAIL");
    return n_failed == 0 ? 0 : 1;
}
