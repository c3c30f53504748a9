/*
 * tests/mp/thread_test.c: UCOLL_THREAD_MULTIPLE. ucoll_init_thread must provide MULTIPLE; then
 * T threads (default 4), each with a communicator of its own (split from world in the main
 * thread, all ranks in each, keys rotated so that each comm's rank order differs), run at the
 * same time:
 *   phase 1: K (default 10000) blocking collectives per thread, cycling through allreduce,
 *            exscan, bcast, reduce and barrier on int64 vectors whose values every rank
 *            computes from (thread, iteration, rank) alone, so each result is checked exactly;
 *   phase 2: R (default 200) rounds in which thread t posts iallreduce, iexscan, ibcast,
 *            ireduce and ibarrier on its comm and hands the requests to thread t+1, which
 *            completes them (ucoll_test in a loop for some, ucoll_wait for the others), checks
 *            the results and frees the requests;
 *   phase 3: S (default 300) steps in which two threads run a blocking allreduce each on one
 *            shared communicator (world), in the same order on every rank: thread 0 first
 *            (recursive doubling, a user op that also raises a flag), thread 1 once that op has
 *            run here (or thread 0's call returned, on a rank that applies no op), so that at
 *            np >= 3 thread 0's collective is mostly still in flight when thread 1's starts
 *            on the same communicator;
 *   phase 4: P (default 50) times in every thread at once: a split of the thread's comm, 4
 *            checked allreduces on the new comm, its free (concurrent splits must give the
 *            new comms distinct tags in this process).
 * Every call must return UCOLL_OK. Usage: thread_test --expect-size N [--threads T]
 * [--iters K] [--rounds R] [--shared S] [--splits P] [--vlen E]: vectors of E int64 (default 3;
 * 1024 makes 8 KiB messages, past the on-host rings' 4 KiB, e.g. for single copy). Output: FAIL
 * lines, then one verdict line per rank. Exit 0 when everything is right.
 */
#include <ucoll.h>

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_THREADS 16
#define VLEN_MAX 1024 /* most elements per vector (--vlen) */
#define NREQ 5        /* requests per thread and round in phase 2 */
#define SENTINEL INT64_C(-777)

static int g_rank, g_size, g_threads = 4;
static int g_vlen = 3; /* elements per vector */
static long g_iters = 10000, g_rounds = 200, g_shared = 300, g_splits = 50;
static atomic_long g_checks, g_fails;
static ucoll_comm_t *g_comm[MAX_THREADS];
static pthread_barrier_t g_phase, g_shared_step;

static void fail(int t, long i, const char *what, long long got, long long want)
{
    if (atomic_fetch_add(&g_fails, 1) < 20)
        printf("FAIL rank %d thread %d iteration %ld: %s: got %lld, expected %lld\n", g_rank, t, i,
               what, got, want);
}

static void check_st(int t, long i, const char *what, ucoll_status_t st)
{
    atomic_fetch_add(&g_checks, 1);
    if (st != UCOLL_OK && atomic_fetch_add(&g_fails, 1) < 20)
        printf("FAIL rank %d thread %d iteration %ld: %s: %s\n", g_rank, t, i, what,
               ucoll_strerror(st));
}

static void check_vec(int t, long i, const char *what, const int64_t *got, const int64_t *want)
{
    for (int j = 0; j < g_vlen; j++) {
        atomic_fetch_add(&g_checks, 1);
        if (got[j] != want[j]) {
            fail(t, i, what, (long long)got[j], (long long)want[j]);
            return;
        }
    }
}

/* element j of comm rank r's input in thread t's iteration i: distinct per (t, i, r, j) */
static int64_t value(int t, long i, int r, int j)
{
    return (int64_t)(r + 1) * 1000003 + (int64_t)i * 131 + (int64_t)t * 17 + j;
}

/* want[j] = sum of value(t, i, q, j) over q in [lo, hi) */
static void sum_range(int t, long i, int lo, int hi, int64_t *want)
{
    for (int j = 0; j < g_vlen; j++) {
        want[j] = 0;
        for (int q = lo; q < hi; q++)
            want[j] += value(t, i, q, j);
    }
}

static void fill(int t, long i, int r, int64_t *v)
{
    for (int j = 0; j < g_vlen; j++)
        v[j] = value(t, i, r, j);
}

static void fill_sentinel(int64_t *v)
{
    for (int j = 0; j < g_vlen; j++)
        v[j] = SENTINEL;
}

/* one verified blocking collective: kind i % 5 on thread t's comm */
static void blocking_step(int t, long i)
{
    ucoll_comm_t *c = g_comm[t];
    const int r = ucoll_comm_rank(c), p = ucoll_comm_size(c), root = (int)(i % p);
    int64_t in[VLEN_MAX], out[VLEN_MAX], want[VLEN_MAX];
    fill(t, i, r, in);
    fill_sentinel(out);
    switch (i % 5) {
    case 0:
        check_st(t, i, "allreduce", ucoll_allreduce(c, in, out, g_vlen, UCOLL_INT64, UCOLL_OP_SUM));
        sum_range(t, i, 0, p, want);
        check_vec(t, i, "allreduce", out, want);
        break;
    case 1:
        check_st(t, i, "exscan", ucoll_exscan(c, in, out, g_vlen, UCOLL_INT64, UCOLL_OP_SUM));
        if (r == 0)
            fill_sentinel(want); /* rank 0's recvbuf is left untouched */
        else
            sum_range(t, i, 0, r, want);
        check_vec(t, i, "exscan", out, want);
        break;
    case 2:
        if (r == root)
            fill(t, i, root, out);
        check_st(t, i, "bcast", ucoll_bcast(c, out, g_vlen, UCOLL_INT64, root));
        fill(t, i, root, want);
        check_vec(t, i, "bcast", out, want);
        break;
    case 3:
        check_st(t, i, "reduce", ucoll_reduce(c, in, out, g_vlen, UCOLL_INT64, UCOLL_OP_SUM, root));
        if (r == root)
            sum_range(t, i, 0, p, want);
        else
            fill_sentinel(want); /* off the root recvbuf is not written */
        check_vec(t, i, "reduce", out, want);
        break;
    default:
        check_st(t, i, "barrier", ucoll_barrier(c));
        break;
    }
}

/* phase 2: the requests thread t posted in the current round, for thread t+1 to complete */
struct handoff {
    ucoll_request_t *req[NREQ];
    int64_t in[NREQ][VLEN_MAX], out[NREQ][VLEN_MAX];
    long round;
};
static struct handoff g_handoff[MAX_THREADS];

static void post_round(int t, long round)
{
    ucoll_comm_t *c = g_comm[t];
    struct handoff *h = &g_handoff[t];
    const int r = ucoll_comm_rank(c), p = ucoll_comm_size(c), root = (int)(round % p);
    const long i = g_iters + round; /* inputs of their own */
    h->round = round;
    for (int k = 0; k < NREQ; k++) {
        fill(t, i + k, r, h->in[k]);
        fill_sentinel(h->out[k]);
        h->req[k] = NULL;
    }
    check_st(
        t, i, "iallreduce",
        ucoll_iallreduce(c, h->in[0], h->out[0], g_vlen, UCOLL_INT64, UCOLL_OP_SUM, &h->req[0]));
    check_st(t, i, "iexscan",
             ucoll_iexscan(c, h->in[1], h->out[1], g_vlen, UCOLL_INT64, UCOLL_OP_SUM, &h->req[1]));
    if (r == root)
        fill(t, i + 2, root, h->out[2]);
    check_st(t, i, "ibcast", ucoll_ibcast(c, h->out[2], g_vlen, UCOLL_INT64, root, &h->req[2]));
    check_st(
        t, i, "ireduce",
        ucoll_ireduce(c, h->in[3], h->out[3], g_vlen, UCOLL_INT64, UCOLL_OP_SUM, root, &h->req[3]));
    check_st(t, i, "ibarrier", ucoll_ibarrier(c, &h->req[4]));
}

/* completes and checks the requests thread `poster` posted (this is another thread) */
static void complete_round(int me, int poster)
{
    struct handoff *h = &g_handoff[poster];
    ucoll_comm_t *c = g_comm[poster];
    const int r = ucoll_comm_rank(c), p = ucoll_comm_size(c), root = (int)(h->round % p);
    const long i = g_iters + h->round;
    for (int k = 0; k < NREQ; k++) {
        if (h->req[k] == NULL)
            continue; /* its post failed, already reported */
        ucoll_status_t st;
        if ((k + h->round) % 2 == 0) {
            while ((st = ucoll_test(h->req[k])) == UCOLL_INPROGRESS)
                sched_yield();
        } else {
            st = ucoll_wait(h->req[k]);
        }
        check_st(me, i, "test/wait of another thread's request", st);
        check_st(me, i, "request_free", ucoll_request_free(h->req[k]));
    }
    int64_t want[VLEN_MAX];
    sum_range(poster, i, 0, p, want);
    check_vec(me, i, "iallreduce waited by another thread", h->out[0], want);
    if (r == 0)
        fill_sentinel(want);
    else
        sum_range(poster, i + 1, 0, r, want);
    check_vec(me, i, "iexscan waited by another thread", h->out[1], want);
    fill(poster, i + 2, root, want);
    check_vec(me, i, "ibcast waited by another thread", h->out[2], want);
    if (r == root)
        sum_range(poster, i + 3, 0, p, want);
    else
        fill_sentinel(want);
    check_vec(me, i, "ireduce waited by another thread", h->out[3], want);
}

/* phase 3: the shared communicator and the user op whose first application lets thread 1 go */
static ucoll_comm_t *g_world;
static ucoll_op_t g_flag_sum;
static atomic_int g_first_applied;

static void flag_sum(const void *in, void *inout, size_t count, ucoll_dtype_t dtype, void *arg)
{
    (void)dtype;
    (void)arg;
    const int64_t *a = in;
    int64_t *b = inout;
    for (size_t j = 0; j < count; j++)
        b[j] += a[j];
    atomic_store(&g_first_applied, 1);
}

/* step k of phase 3 in thread t (0 or 1): tag t + 100 keeps both threads' inputs apart */
static void shared_step(int t, long k)
{
    const int r = ucoll_comm_rank(g_world), p = ucoll_comm_size(g_world);
    const long i = g_iters + g_rounds + NREQ + k;
    int64_t in[VLEN_MAX], out[VLEN_MAX], want[VLEN_MAX];
    fill(t + 100, i, r, in);
    fill_sentinel(out);
    if (t == 1)
        while (atomic_load(&g_first_applied) == 0)
            sched_yield();
    check_st(
        t, i, "allreduce on the shared comm",
        ucoll_allreduce(g_world, in, out, g_vlen, UCOLL_INT64, t == 0 ? g_flag_sum : UCOLL_OP_SUM));
    if (t == 0) /* a rank that applies no op (one folded in at p != 2^k) lets thread 1 go now */
        atomic_store(&g_first_applied, 1);
    sum_range(t + 100, i, 0, p, want);
    check_vec(t, i, "allreduce on the shared comm", out, want);
}

/* phase 4, step k of thread t */
static void split_step(int t, long k)
{
    ucoll_comm_t *c = NULL;
    const long i = g_iters + g_rounds + NREQ + g_shared + 4 * k;
    check_st(t, i, "comm_split", ucoll_comm_split(g_comm[t], 0, ucoll_comm_rank(g_comm[t]), &c));
    if (c == NULL)
        return;
    const int r = ucoll_comm_rank(c), p = ucoll_comm_size(c);
    for (long j = i; j < i + 4; j++) {
        int64_t in[VLEN_MAX], out[VLEN_MAX], want[VLEN_MAX];
        fill(t + 200, j, r, in);
        fill_sentinel(out);
        check_st(t, j, "allreduce on a new comm",
                 ucoll_allreduce(c, in, out, g_vlen, UCOLL_INT64, UCOLL_OP_SUM));
        sum_range(t + 200, j, 0, p, want);
        check_vec(t, j, "allreduce on a new comm", out, want);
    }
    check_st(t, i, "comm_free", ucoll_comm_free(c));
}

static void *thread_main(void *arg)
{
    const int t = (int)(intptr_t)arg;
    for (long i = 0; i < g_iters; i++)
        blocking_step(t, i);
    for (long round = 0; round < g_rounds; round++) {
        post_round(t, round);
        pthread_barrier_wait(&g_phase); /* every thread's requests are posted */
        complete_round(t, (t + g_threads - 1) % g_threads);
        pthread_barrier_wait(&g_phase); /* every handoff slot is consumed */
    }
    for (long k = 0; k < g_shared && t < 2; k++) {
        shared_step(t, k);
        pthread_barrier_wait(&g_shared_step); /* both are done: the flag goes down */
        if (t == 0)
            atomic_store(&g_first_applied, 0);
        pthread_barrier_wait(&g_shared_step);
    }
    for (long k = 0; k < g_splits; k++)
        split_step(t, k);
    return NULL;
}

static const char *thread_level_name(ucoll_thread_level_t l)
{
    switch (l) {
    case UCOLL_THREAD_SINGLE:
        return "SINGLE";
    case UCOLL_THREAD_FUNNELED:
        return "FUNNELED";
    case UCOLL_THREAD_SERIALIZED:
        return "SERIALIZED";
    case UCOLL_THREAD_MULTIPLE:
        return "MULTIPLE";
    }
    return "?";
}

int main(int argc, char **argv)
{
    int expect = -1;
    for (int a = 1; a + 1 < argc; a += 2) {
        if (strcmp(argv[a], "--expect-size") == 0)
            expect = atoi(argv[a + 1]);
        else if (strcmp(argv[a], "--threads") == 0)
            g_threads = atoi(argv[a + 1]);
        else if (strcmp(argv[a], "--iters") == 0)
            g_iters = atol(argv[a + 1]);
        else if (strcmp(argv[a], "--rounds") == 0)
            g_rounds = atol(argv[a + 1]);
        else if (strcmp(argv[a], "--shared") == 0)
            g_shared = atol(argv[a + 1]);
        else if (strcmp(argv[a], "--splits") == 0)
            g_splits = atol(argv[a + 1]);
        else if (strcmp(argv[a], "--vlen") == 0)
            g_vlen = atoi(argv[a + 1]);
        else {
            fprintf(stderr, "thread_test: unknown option %s\n", argv[a]);
            return 2;
        }
    }
    if (expect < 1 || g_threads < 2 || g_threads > MAX_THREADS || g_iters < 0 || g_rounds < 0 ||
        g_shared < 0 || g_splits < 0 || g_vlen < 1 || g_vlen > VLEN_MAX) {
        fprintf(stderr,
                "usage: thread_test --expect-size N [--threads 2..%d] [--iters K] "
                "[--rounds R] [--shared S] [--splits P] [--vlen 1..%d]\n",
                MAX_THREADS, VLEN_MAX);
        return 2;
    }
    ucoll_comm_t *world = NULL;
    ucoll_thread_level_t provided = UCOLL_THREAD_SINGLE;
    ucoll_status_t st = ucoll_init_thread(NULL, UCOLL_THREAD_MULTIPLE, &provided, &world);
    if (st != UCOLL_OK) {
        printf("FAIL: ucoll_init_thread: %s\n", ucoll_strerror(st));
        return 1;
    }
    g_rank = ucoll_comm_rank(world);
    g_size = ucoll_comm_size(world);
    if (provided != UCOLL_THREAD_MULTIPLE) {
        printf("FAIL rank %d: provided %s, required MULTIPLE\n", g_rank,
               thread_level_name(provided));
        return 1;
    }
    if (g_size != expect) {
        printf("FAIL rank %d: job size %d, expected %d\n", g_rank, g_size, expect);
        return 1;
    }
    for (int t = 0; t < g_threads; t++) {
        check_st(t, -1, "comm_split",
                 ucoll_comm_split(world, t, (g_rank + t) % g_size, &g_comm[t]));
        if (g_comm[t] == NULL) {
            printf("FAIL rank %d: no communicator for thread %d\n", g_rank, t);
            return 1;
        }
    }
    g_world = world;
    check_st(-1, -1, "op_create", ucoll_op_create(flag_sum, NULL, 1, &g_flag_sum));
    check_st(-1, -1, "set_algorithm",
             ucoll_set_algorithm(world, UCOLL_COLL_ALLREDUCE, "recursive-doubling"));
    const double t0 = (double)clock();
    struct timespec w0, w1;
    clock_gettime(CLOCK_MONOTONIC, &w0);
    pthread_barrier_init(&g_phase, NULL, (unsigned)g_threads);
    pthread_barrier_init(&g_shared_step, NULL, 2);
    pthread_t th[MAX_THREADS];
    for (int t = 0; t < g_threads; t++)
        if (pthread_create(&th[t], NULL, thread_main, (void *)(intptr_t)t) != 0) {
            printf("FAIL rank %d: pthread_create\n", g_rank);
            return 1;
        }
    for (int t = 0; t < g_threads; t++)
        pthread_join(th[t], NULL);
    pthread_barrier_destroy(&g_phase);
    pthread_barrier_destroy(&g_shared_step);
    check_st(-1, -1, "op_free", ucoll_op_free(g_flag_sum));
    clock_gettime(CLOCK_MONOTONIC, &w1);
    const double cpu = ((double)clock() - t0) / CLOCKS_PER_SEC;
    for (int t = 0; t < g_threads; t++)
        check_st(t, -1, "comm_free", ucoll_comm_free(g_comm[t]));
    check_st(-1, -1, "finalize", ucoll_finalize(world));
    const long fails = atomic_load(&g_fails), checks = atomic_load(&g_checks);
    printf("thread_test rank %d np=%d threads=%d iters=%ld rounds=%ld shared=%ld splits=%ld: %ld "
           "checks, %ld "
           "failed, "
           "%.2f s wall, %.2f s cpu; verdict: %s\n",
           g_rank, g_size, g_threads, g_iters, g_rounds, g_shared, g_splits, checks, fails,
           (double)(w1.tv_sec - w0.tv_sec) + 1e-9 * (double)(w1.tv_nsec - w0.tv_nsec), cpu,
           fails == 0 ? "PASS" : "FAIL");
    return fails == 0 ? 0 : 1;
}
