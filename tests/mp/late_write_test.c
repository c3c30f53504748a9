/*
 * tests/mp/late_write_test.c: a receiver that gives up on a message a peer is writing into its
 * scratch (the writer claimed the receiver's offered buffer, then stopped for longer than the
 * 2 s the receiver waits for it) must not hand that scratch to a later call: the writer, once
 * it runs again, may still finish the block it was writing.
 * 4 ranks, buffers from ucoll_mem_alloc, run with UCOLL_SINGLE_COPY_MIN=regions,
 * UCOLL_REDUCE_ALG=binomial, UCOLL_TIMEOUT=3 and, for the stalled case,
 * UCOLL_TEST_WRITE_STALL_MS=10000. A binomial reduce to rank 0 of C int32 on the world: rank 2
 * reduces rank 3's vector into its own and writes the sum into rank 0's offered scratch (it
 * enters 1.5 s late, after a progress pass, so that it has read rank 0's offer), where it
 * stalls. The reduce is nonblocking, so that its scratch goes back to the pool when it ends.
 * Every rank then waits, outside ucoll, until 15 s after the first reduce began (the late
 * block is written by then) and reduces again on a copy of the world split off before, whose
 * rank 0 needs scratch of the same size. Results are checked exactly.
 * --stalled: rank 0 must get UCOLL_ERR_TIMED_OUT from the first reduce, rank 1 UCOLL_OK
 * (ranks 2 and 3, whose messages were cut off, either); without: every rank UCOLL_OK. The
 * second reduce must succeed on every rank. With UCOLL_TEST_SHM_COUNTS the finalize line's
 * pool_chunks shows whether rank 0 took new scratch for it (one more chunk than without the
 * stall) or the first reduce's again.
 * Usage: late_write_test --expect-size 4 [--stalled] [--count C (65536)]. Public API only.
 * Prints "late_write_test rank R: first STATUS, second STATUS; verdict: PASS|FAIL".
 */
#include <ucoll.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int failures;

static void expect_status(int rank, const char *what, ucoll_status_t got, int want_ok)
{
    if ((got == UCOLL_OK) != want_ok) {
        printf("FAIL rank %d: %s: %s (want %s)\n", rank, what, ucoll_strerror(got),
               want_ok ? "success" : "an error");
        failures++;
    }
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* rank 0's result of the reduce of 4 ranks' inputs rank * 1000003 + i */
static void check_sum(int rank, const char *what, const int32_t *out, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (out[i] != (int32_t)(6000018 + 4 * (int)i)) {
            printf("FAIL rank %d: %s: element %zu is %d\n", rank, what, i, (int)out[i]);
            failures++;
            return;
        }
}

int main(int argc, char **argv)
{
    int expect = -1, stalled = 0;
    size_t count = 65536;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--expect-size") == 0 && i + 1 < argc)
            expect = atoi(argv[++i]);
        else if (strcmp(argv[i], "--stalled") == 0)
            stalled = 1;
        else if (strcmp(argv[i], "--count") == 0 && i + 1 < argc)
            count = (size_t)atol(argv[++i]);
        else {
            fprintf(stderr, "usage: late_write_test --expect-size 4 [--stalled] [--count C]\n");
            return 2;
        }
    }
    ucoll_comm_t *w = NULL, *copy = NULL;
    ucoll_status_t st = ucoll_init(&w);
    if (st != UCOLL_OK) {
        printf("late_write_test: ucoll_init: %s; verdict: FAIL\n", ucoll_strerror(st));
        return 1;
    }
    const int rank = ucoll_comm_rank(w), p = ucoll_comm_size(w);
    if (p != 4 || (expect > 0 && p != expect)) {
        printf("late_write_test: job size %d, expected 4; verdict: FAIL\n", p);
        ucoll_finalize(w);
        return 1;
    }
    int32_t *in = NULL, *out = NULL;
    if (ucoll_mem_alloc(count * sizeof(int32_t), (void **)&in) != UCOLL_OK ||
        ucoll_mem_alloc(count * sizeof(int32_t), (void **)&out) != UCOLL_OK) {
        printf("late_write_test: ucoll_mem_alloc failed; verdict: FAIL\n");
        ucoll_finalize(w);
        return 1;
    }
    for (size_t i = 0; i < count; i++)
        in[i] = (int32_t)(rank * 1000003 + (int)i);
    if ((st = ucoll_comm_split(w, 0, rank, &copy)) != UCOLL_OK)
        expect_status(rank, "ucoll_comm_split", st, 1);
    if ((st = ucoll_barrier(w)) != UCOLL_OK)
        expect_status(rank, "ucoll_barrier", st, 1);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (rank == 2) { /* rank 0's offer is in rank 2's ring by then; a progress pass reads it */
        sleep_ms(1500);
        ucoll_progress(w);
    }
    memset(out, 0, count * sizeof(int32_t));
    /* nonblocking: its scratch goes back to the pool when it ends (a blocking call's stays with
     * the comm's cached request), where the second reduce would find it */
    ucoll_request_t *req = NULL;
    ucoll_status_t first = ucoll_ireduce(w, in, out, count, UCOLL_INT32, UCOLL_OP_SUM, 0, &req);
    if (first == UCOLL_OK)
        first = ucoll_wait(req);
    if (req != NULL)
        ucoll_request_free(req);
    if (!stalled || rank < 2)
        expect_status(rank, "the first reduce", first, !stalled || rank == 1);
    if (stalled && rank == 0 && first != UCOLL_ERR_TIMED_OUT) {
        printf("FAIL rank 0: the first reduce: %s (want timed out)\n", ucoll_strerror(first));
        failures++;
    }
    if (first == UCOLL_OK && rank == 0)
        check_sum(rank, "the first reduce", out, count);
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    const long spent_ms = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
    if (spent_ms < 15000)
        sleep_ms(15000 - spent_ms);
    ucoll_status_t second = UCOLL_ERR_STATE;
    if (copy != NULL) {
        memset(out, 0, count * sizeof(int32_t));
        second = ucoll_reduce(copy, in, out, count, UCOLL_INT32, UCOLL_OP_SUM, 0);
        expect_status(rank, "the second reduce", second, 1);
        if (second == UCOLL_OK && rank == 0)
            check_sum(rank, "the second reduce", out, count);
    }
    ucoll_mem_free(in);
    ucoll_mem_free(out);
    if (copy != NULL)
        ucoll_comm_free(copy);
    ucoll_finalize(w); /* after a failure it may answer an error: not judged here */
    printf("late_write_test rank %d: first %s, second %s; verdict: %s\n", rank,
           ucoll_strerror(first), ucoll_strerror(second), failures == 0 ? "PASS" : "FAIL");
    return failures == 0 ? 0 : 1;
}
