/*
 * tests/mp/progress_test.c: progress driven by the caller (ucoll_request_set_callback,
 * ucoll_progress, ucoll_event_fd, ucoll_arm) and UCOLL_WAIT_MODE. One mode per launch:
 *   --mode epoll   1000 nonblocking collectives (iallreduce, ibcast, iexscan, iallgather, in
 *                  turn, up to 16 in flight) run to completion by callbacks only: the loop
 *                  sleeps in epoll_wait on the event fd whenever ucoll_arm says OK and calls
 *                  ucoll_progress, never ucoll_test/wait. Each callback checks its result
 *                  against values computed here and frees its request; a chain of 100
 *                  iallreduces on a split comm is posted from the callbacks themselves.
 *                  One last iallreduce, which the other ranks join 300 ms late, must find
 *                  rank 0 asleep on the fd.
 *   --mode thread  UCOLL_THREAD_MULTIPLE: a progress thread that only sleeps on the fd and
 *                  calls ucoll_progress completes 300 iallreduces the main thread posts and
 *                  waits for through a flag set by the callback, and 20 starts of a
 *                  persistent request (its callback once per start).
 *   --mode errors  the argument checks, set_callback twice, on a completed request, on an
 *                  inactive persistent one, ucoll_progress on a split comm, after finalize;
 *                  a persistent request started and completed twice from another request's
 *                  callback gets two callbacks.
 *   --mode sleepwait  UCOLL_THREAD_MULTIPLE under UCOLL_WAIT_MODE=sleep: rank 0's main thread
 *                  runs 200 blocking allreduces while its progress thread sleeps on the event
 *                  fd with no timeout between ucoll_progress calls; rank 1 comes 3 ms late to
 *                  each. The progress thread completing the main thread's request must not
 *                  leave the main thread asleep with nothing left to wake it.
 *   --mode idle    rank 1 joins a barrier 2 s after rank 0; rank 0 prints the CPU time
 *                  (getrusage user + sys) of its wait; with --max-cpu F it fails if that is
 *                  more than F of the wall time.
 * Usage: progress_test --expect-size N --mode MODE [--max-cpu F]
 * Exit status 0 only if every check passed on every rank; rank 0 prints a verdict line.
 */
#include <ucoll.h>

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static int g_rank, g_size;
static long g_fails;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            g_fails++;                                                                             \
            printf("FAIL rank %d (%s:%d): ", g_rank, __FILE__, __LINE__);                          \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
            fflush(stdout);                                                                        \
        }                                                                                          \
    } while (0)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* rank r's element j of collective i */
static int64_t input(int i, int r, int j)
{
    return (int64_t)i * 1000003 + (int64_t)r * 1009 + j;
}

/* ------------------------------------------------------------------------------ epoll mode */

enum { NCOLL = 1000, WINDOW = 16, COUNT = 3, CHAIN = 100 };

typedef struct {
    int index; /* collective number, -1: free slot */
    int calls; /* callback calls for this collective */
    int64_t in[COUNT], out[64 * COUNT];
} slot_t;

static slot_t g_slots[WINDOW];
static int g_completed;
static ucoll_comm_t *g_chain_comm;
static int g_chain_done; /* chain collectives completed */
static int64_t g_chain_val;

static void check_result(const slot_t *s)
{
    const int i = s->index;
    switch (i % 4) {
    case 0: /* allreduce sum */
        for (int j = 0; j < COUNT; j++) {
            int64_t want = 0;
            for (int r = 0; r < g_size; r++)
                want += input(i, r, j);
            CHECK(s->out[j] == want, "iallreduce %d [%d] = %lld, want %lld", i, j,
                  (long long)s->out[j], (long long)want);
        }
        break;
    case 1: /* bcast from root i % size, in place in out */
        for (int j = 0; j < COUNT; j++)
            CHECK(s->out[j] == input(i, i % g_size, j), "ibcast %d [%d] = %lld", i, j,
                  (long long)s->out[j]);
        break;
    case 2: /* exscan sum: rank 0's result is undefined */
        for (int j = 0; j < COUNT && g_rank > 0; j++) {
            int64_t want = 0;
            for (int r = 0; r < g_rank; r++)
                want += input(i, r, j);
            CHECK(s->out[j] == want, "iexscan %d [%d] = %lld, want %lld", i, j,
                  (long long)s->out[j], (long long)want);
        }
        break;
    case 3: /* allgather */
        for (int r = 0; r < g_size; r++)
            for (int j = 0; j < COUNT; j++)
                CHECK(s->out[r * COUNT + j] == input(i, r, j), "iallgather %d [%d][%d] = %lld", i,
                      r, j, (long long)s->out[r * COUNT + j]);
        break;
    }
}

static void chain_post(void);

static void chain_cb(ucoll_request_t *req, ucoll_status_t status, void *arg)
{
    (void)arg;
    CHECK(status == UCOLL_OK, "chain status %d", (int)status);
    const int sub = ucoll_comm_size(g_chain_comm);
    int64_t want = 0;
    for (int r = 0; r < sub; r++)
        want += (int64_t)g_chain_done * 7 + r;
    CHECK(g_chain_val == want, "chain %d = %lld, want %lld", g_chain_done, (long long)g_chain_val,
          (long long)want);
    CHECK(ucoll_request_free(req) == UCOLL_OK, "free from the chain callback");
    if (++g_chain_done < CHAIN)
        chain_post(); /* a new collective started from inside a callback */
}

static void chain_post(void)
{
    ucoll_request_t *req = NULL;
    g_chain_val = (int64_t)g_chain_done * 7 + ucoll_comm_rank(g_chain_comm);
    ucoll_status_t st = ucoll_iallreduce(g_chain_comm, UCOLL_IN_PLACE, &g_chain_val, 1, UCOLL_INT64,
                                         UCOLL_OP_SUM, &req);
    CHECK(st == UCOLL_OK, "chain iallreduce %d: %d", g_chain_done, (int)st);
    if (st == UCOLL_OK)
        CHECK(ucoll_request_set_callback(req, chain_cb, NULL) == UCOLL_OK, "chain set_callback");
    else
        g_chain_done = CHAIN;
}

static void coll_cb(ucoll_request_t *req, ucoll_status_t status, void *arg)
{
    slot_t *s = arg;
    s->calls++;
    CHECK(s->calls == 1, "collective %d: callback %d times", s->index, s->calls);
    CHECK(status == UCOLL_OK, "collective %d: status %d", s->index, (int)status);
    if (status == UCOLL_OK)
        check_result(s);
    CHECK(ucoll_request_free(req) == UCOLL_OK, "free from the callback");
    s->index = -1;
    g_completed++;
}

static void post(ucoll_comm_t *w, slot_t *s, int i)
{
    ucoll_request_t *req = NULL;
    ucoll_status_t st = UCOLL_ERR_INVALID_ARG;
    s->index = i;
    s->calls = 0;
    for (int j = 0; j < COUNT; j++)
        s->in[j] = input(i, g_rank, j);
    memset(s->out, 0xa5, sizeof(s->out));
    switch (i % 4) {
    case 0:
        st = ucoll_iallreduce(w, s->in, s->out, COUNT, UCOLL_INT64, UCOLL_OP_SUM, &req);
        break;
    case 1:
        memcpy(s->out, s->in, sizeof(s->in));
        st = ucoll_ibcast(w, s->out, COUNT, UCOLL_INT64, i % g_size, &req);
        break;
    case 2:
        st = ucoll_iexscan(w, s->in, s->out, COUNT, UCOLL_INT64, UCOLL_OP_SUM, &req);
        break;
    case 3:
        st = ucoll_iallgather(w, s->in, s->out, COUNT, UCOLL_INT64, &req);
        break;
    }
    CHECK(st == UCOLL_OK, "post %d: %d", i, (int)st);
    if (st == UCOLL_OK)
        st = ucoll_request_set_callback(req, coll_cb, s);
    CHECK(st == UCOLL_OK, "set_callback %d: %d", i, (int)st);
    if (st != UCOLL_OK) {
        s->index = -1;
        g_completed++;
    }
}

static void run_epoll(ucoll_comm_t *w)
{
    CHECK(g_size <= 64, "size %d > 64", g_size);
    ucoll_comm_t *sub = NULL;
    /* the chain runs on the ranks but 0 (all of them at np 1) */
    ucoll_status_t st = ucoll_comm_split(w, g_size > 1 && g_rank == 0 ? -1 : 0, g_rank, &sub);
    CHECK(st == UCOLL_OK, "split: %d", (int)st);
    const int fd = ucoll_event_fd(w);
    CHECK(fd >= 0, "ucoll_event_fd = %d", fd);
    CHECK(ucoll_event_fd(w) == fd, "ucoll_event_fd changed");
    CHECK(ucoll_progress(sub != NULL ? sub : w) == (sub != NULL ? UCOLL_ERR_INVALID_ARG : 0),
          "ucoll_progress on a split comm");
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN};
    CHECK(ep >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == 0, "epoll_ctl: %s", strerror(errno));
    for (int k = 0; k < WINDOW; k++)
        g_slots[k].index = -1;
    g_chain_comm = sub;
    if (sub != NULL)
        chain_post();
    else
        g_chain_done = CHAIN;
    int posted = 0;
    long sleeps = 0, progresses = 0, completions = 0;
    while ((g_completed < NCOLL || g_chain_done < CHAIN) && g_fails < 20) {
        for (int k = 0; k < WINDOW && posted < NCOLL; k++)
            if (g_slots[k].index < 0 && posted - g_completed < WINDOW)
                post(w, &g_slots[k], posted++);
        st = ucoll_arm(w);
        if (st == UCOLL_OK) {
            struct epoll_event out;
            int n = epoll_wait(ep, &out, 1, 30000);
            CHECK(n == 1, "epoll_wait = %d after 30 s, %d of %d done, chain %d", n, g_completed,
                  NCOLL, g_chain_done);
            if (n != 1)
                break;
            sleeps++;
        } else {
            CHECK(st == UCOLL_INPROGRESS, "ucoll_arm = %d", (int)st);
        }
        int done = ucoll_progress(w);
        CHECK(done >= 0, "ucoll_progress = %d", done);
        completions += done > 0 ? done : 0;
        progresses++;
    }
    CHECK(g_completed == NCOLL, "%d of %d completed", g_completed, NCOLL);
    CHECK(g_chain_done == CHAIN, "chain: %d of %d", g_chain_done, CHAIN);
    /* every completion went through ucoll_progress (the chain's too) */
    CHECK(completions == NCOLL + (sub != NULL ? CHAIN : 0), "ucoll_progress counted %ld",
          completions);
    /* whether the loop slept so far depends on the machine's load (a rank that is always
     * behind finds its messages there); one more collective that the other ranks join 300 ms
     * late makes rank 0 wait, which it must do asleep on the fd */
    const long sleeps_before = sleeps;
    if (g_fails == 0 && g_size > 1) {
        if (g_rank != 0) {
            struct timespec late = {0, 300000000};
            nanosleep(&late, NULL);
        }
        post(w, &g_slots[0], NCOLL);
        const double give_up = now_s() + 60;
        while (g_completed < NCOLL + 1 && g_fails < 20 && now_s() < give_up) {
            if (ucoll_arm(w) == UCOLL_OK) {
                struct epoll_event out;
                if (epoll_wait(ep, &out, 1, 1000) == 1)
                    sleeps++;
            }
            CHECK(ucoll_progress(w) >= 0, "ucoll_progress");
        }
        CHECK(g_completed == NCOLL + 1, "the late collective did not complete");
        CHECK(g_rank != 0 || sleeps > sleeps_before,
              "rank 0 never slept on the fd while the others came late");
    }
    printf("rank %d: %d collectives and a chain of %d by callbacks: %ld sleeps in epoll_wait "
           "(%ld in the late one), %ld ucoll_progress calls\n",
           g_rank, NCOLL, sub != NULL ? CHAIN : 0, sleeps, sleeps - sleeps_before, progresses);
    close(ep);
    if (sub != NULL)
        CHECK(ucoll_comm_free(sub) == UCOLL_OK, "comm_free");
}

/* ----------------------------------------------------------------------------- thread mode */

enum { NTHREAD_COLL = 300, NSTARTS = 20 };

static atomic_int g_stop;
static atomic_int g_flag[NTHREAD_COLL];
static atomic_int g_pstarts;
static atomic_long g_cb_thread_fails;
static pthread_t g_progress_thread;

static void *progress_main(void *arg)
{
    ucoll_comm_t *w = arg;
    const int fd = ucoll_event_fd(w);
    while (!atomic_load(&g_stop)) {
        ucoll_status_t st = ucoll_arm(w);
        if (st == UCOLL_OK) {
            struct pollfd p = {.fd = fd, .events = POLLIN};
            poll(&p, 1, 100);
        } else if (st != UCOLL_INPROGRESS) {
            atomic_fetch_add(&g_cb_thread_fails, 1);
        }
        if (ucoll_progress(w) < 0)
            atomic_fetch_add(&g_cb_thread_fails, 1);
    }
    return NULL;
}

static void flag_cb(ucoll_request_t *req, ucoll_status_t status, void *arg)
{
    (void)req;
    if (status != UCOLL_OK)
        atomic_fetch_add(&g_cb_thread_fails, 1);
    atomic_store((atomic_int *)arg, 1);
}

static void start_cb(ucoll_request_t *req, ucoll_status_t status, void *arg)
{
    (void)req;
    (void)arg;
    if (status != UCOLL_OK)
        atomic_fetch_add(&g_cb_thread_fails, 1);
    atomic_fetch_add(&g_pstarts, 1);
}

static int wait_flag(atomic_int *flag, int want)
{
    const double give_up = now_s() + 120;
    while (atomic_load(flag) < want) {
        if (now_s() > give_up)
            return 0;
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
    }
    return 1;
}

static void run_thread(ucoll_comm_t *w)
{
    CHECK(ucoll_event_fd(w) >= 0, "event fd");
    CHECK(pthread_create(&g_progress_thread, NULL, progress_main, w) == 0, "pthread_create");
    enum { W = 4 };
    ucoll_request_t *req[W] = {0};
    int64_t in[W], out[W];
    for (int i = 0; i < NTHREAD_COLL + W; i++) {
        const int k = i % W;
        if (i >= W) { /* the one posted W ago: done by the progress thread alone */
            const int j = i - W;
            CHECK(wait_flag(&g_flag[j], 1), "collective %d: no callback in 120 s", j);
            int64_t want = 0;
            for (int r = 0; r < g_size; r++)
                want += input(j, r, 0);
            CHECK(out[k] == want, "iallreduce %d = %lld, want %lld", j, (long long)out[k],
                  (long long)want);
            CHECK(ucoll_request_free(req[k]) == UCOLL_OK, "free %d", j);
        }
        if (i < NTHREAD_COLL) {
            in[k] = input(i, g_rank, 0);
            ucoll_status_t st =
                ucoll_iallreduce(w, &in[k], &out[k], 1, UCOLL_INT64, UCOLL_OP_SUM, &req[k]);
            CHECK(st == UCOLL_OK, "iallreduce %d: %d", i, (int)st);
            st = ucoll_request_set_callback(req[k], flag_cb, &g_flag[i]);
            CHECK(st == UCOLL_OK, "set_callback %d: %d", i, (int)st);
        }
        if (g_fails > 10)
            break;
    }
    /* a persistent request: its callback once per start */
    int64_t pin = g_rank + 1, pout = 0;
    ucoll_request_t *preq = NULL;
    CHECK(ucoll_allreduce_init(w, &pin, &pout, 1, UCOLL_INT64, UCOLL_OP_SUM, &preq) == UCOLL_OK,
          "allreduce_init");
    CHECK(ucoll_request_set_callback(preq, start_cb, NULL) == UCOLL_OK, "set_callback");
    for (int s = 0; s < NSTARTS && g_fails == 0; s++) {
        pout = 0;
        CHECK(ucoll_start(preq) == UCOLL_OK, "start %d", s);
        CHECK(wait_flag(&g_pstarts, s + 1), "start %d: no callback", s);
        CHECK(pout == (int64_t)g_size * (g_size + 1) / 2, "start %d: %lld", s, (long long)pout);
    }
    struct timespec ts = {0, 50000000};
    nanosleep(&ts, NULL); /* a second callback of the last start would come by now */
    CHECK(atomic_load(&g_pstarts) == NSTARTS, "persistent callbacks: %d for %d starts",
          atomic_load(&g_pstarts), NSTARTS);
    CHECK(ucoll_request_free(preq) == UCOLL_OK, "free persistent");
    atomic_store(&g_stop, 1);
    pthread_join(g_progress_thread, NULL);
    CHECK(atomic_load(&g_cb_thread_fails) == 0, "%ld failures in the progress thread",
          (long)atomic_load(&g_cb_thread_fails));
    printf("rank %d: %d collectives and %d persistent starts completed by the progress thread\n",
           g_rank, NTHREAD_COLL, NSTARTS);
}

/* -------------------------------------------------------------------------- sleepwait mode */

static void *progress_forever(void *arg)
{
    ucoll_comm_t *w = arg;
    const int fd = ucoll_event_fd(w);
    while (!atomic_load(&g_stop)) {
        if (ucoll_arm(w) == UCOLL_OK) {
            struct pollfd p = {.fd = fd, .events = POLLIN};
            poll(&p, 1, -1); /* only ucoll's fd wakes it */
        }
        if (ucoll_progress(w) < 0)
            atomic_fetch_add(&g_cb_thread_fails, 1);
    }
    return NULL;
}

static void run_sleepwait(ucoll_comm_t *w)
{
    enum { N = 200 };
    pthread_t t;
    const int threaded = g_rank == 0;
    CHECK(ucoll_event_fd(w) >= 0, "event fd");
    if (threaded)
        CHECK(pthread_create(&t, NULL, progress_forever, w) == 0, "pthread_create");
    for (int i = 0; i < N && g_fails == 0; i++) {
        if (g_rank == 1) {
            struct timespec late = {0, 3000000};
            nanosleep(&late, NULL);
        }
        int64_t in = input(i, g_rank, 0), out = 0, want = 0;
        for (int r = 0; r < g_size; r++)
            want += input(i, r, 0);
        ucoll_status_t st = ucoll_allreduce(w, &in, &out, 1, UCOLL_INT64, UCOLL_OP_SUM);
        CHECK(st == UCOLL_OK && out == want, "allreduce %d: status %d, %lld, want %lld", i, (int)st,
              (long long)out, (long long)want);
    }
    if (threaded) {
        atomic_store(&g_stop, 1);
        /* the thread may be asleep on the fd with nothing outstanding: a collective wakes it */
        ucoll_status_t st = ucoll_barrier(w);
        CHECK(st == UCOLL_OK, "barrier: %d", (int)st);
        pthread_join(t, NULL);
    } else {
        CHECK(ucoll_barrier(w) == UCOLL_OK, "barrier");
    }
    CHECK(atomic_load(&g_cb_thread_fails) == 0, "%ld failures in the progress thread",
          (long)atomic_load(&g_cb_thread_fails));
    printf("rank %d: %d blocking allreduces in sleep mode beside a progress thread\n", g_rank, N);
}

/* ----------------------------------------------------------------------------- errors mode */

static int g_count_calls;
static ucoll_status_t g_count_status = 12345;

static void count_cb(ucoll_request_t *req, ucoll_status_t status, void *arg)
{
    (void)req;
    (void)arg;
    g_count_calls++;
    g_count_status = status;
}

/* frees the request arg (a later one of the same delivery, or one already reported) */
static int g_free_order; /* 1: free_other_cb ran first, 2: count_cb ran first */
static void free_other_cb(ucoll_request_t *req, ucoll_status_t status, void *arg)
{
    (void)req;
    (void)status;
    if (g_free_order == 0)
        g_free_order = 1;
    CHECK(ucoll_request_free(arg) == UCOLL_OK, "free of another request from a callback");
}

static void order_cb(ucoll_request_t *req, ucoll_status_t status, void *arg)
{
    (void)req;
    (void)status;
    (void)arg;
    g_count_calls++;
    if (g_free_order == 0)
        g_free_order = 2;
}

/* starts the persistent request arg and waits for it, twice: two completions, whose two
 * callbacks must both come although the first has not run when the second completes */
static int g_twice_calls;
static void twice_cb(ucoll_request_t *req, ucoll_status_t status, void *arg)
{
    (void)req;
    (void)arg;
    g_twice_calls += status == UCOLL_OK;
}
static void start_twice_cb(ucoll_request_t *req, ucoll_status_t status, void *arg)
{
    (void)req;
    (void)status;
    for (int k = 0; k < 2; k++) {
        CHECK(ucoll_start(arg) == UCOLL_OK, "start %d from a callback", k);
        CHECK(ucoll_wait(arg) == UCOLL_OK, "wait %d from a callback", k);
    }
}

static void run_errors(ucoll_comm_t *w)
{
    {
        int64_t pin = 1, pout = 0, qin = 1, qout = 0;
        ucoll_request_t *p = NULL, *q = NULL;
        CHECK(ucoll_allreduce_init(w, &pin, &pout, 1, UCOLL_INT64, UCOLL_OP_SUM, &p) == UCOLL_OK,
              "allreduce_init");
        CHECK(ucoll_request_set_callback(p, twice_cb, NULL) == UCOLL_OK, "set_callback p");
        CHECK(ucoll_iallreduce(w, &qin, &qout, 1, UCOLL_INT64, UCOLL_OP_SUM, &q) == UCOLL_OK,
              "iallreduce");
        CHECK(ucoll_request_set_callback(q, start_twice_cb, p) == UCOLL_OK, "set_callback q");
        const double give_up = now_s() + 120; /* a loaded machine: by time, not by passes */
        while (g_twice_calls < 2 && now_s() < give_up)
            ucoll_progress(w);
        CHECK(g_twice_calls == 2, "persistent request completed twice: %d callbacks",
              g_twice_calls);
        CHECK(pout == g_size && qout == g_size, "results %lld %lld", (long long)pout,
              (long long)qout);
        CHECK(ucoll_request_free(q) == UCOLL_OK && ucoll_request_free(p) == UCOLL_OK, "free");
    }
    ucoll_request_t *req = NULL;
    int64_t a = g_rank, b = 0;
    CHECK(ucoll_request_set_callback(NULL, count_cb, NULL) == UCOLL_ERR_INVALID_ARG, "NULL req");
    CHECK(ucoll_progress(NULL) == UCOLL_ERR_INVALID_ARG, "progress(NULL)");
    CHECK(ucoll_arm(NULL) == UCOLL_ERR_INVALID_ARG, "arm(NULL)");
    CHECK(ucoll_event_fd(NULL) == -1, "event_fd(NULL)");
    uint64_t fake[64] = {0};
    CHECK(ucoll_request_set_callback((ucoll_request_t *)fake, count_cb, NULL) ==
              UCOLL_ERR_INVALID_ARG,
          "foreign req");
    CHECK(ucoll_progress((ucoll_comm_t *)fake) == UCOLL_ERR_INVALID_ARG, "progress(foreign)");
    CHECK(ucoll_iallreduce(w, &a, &b, 1, UCOLL_INT64, UCOLL_OP_SUM, &req) == UCOLL_OK, "post");
    CHECK(ucoll_request_set_callback(req, NULL, NULL) == UCOLL_ERR_INVALID_ARG, "NULL cb");
    CHECK(ucoll_request_set_callback(req, count_cb, NULL) == UCOLL_OK, "set");
    CHECK(ucoll_request_set_callback(req, count_cb, NULL) == UCOLL_ERR_STATE, "set twice");
    CHECK(ucoll_wait(req) == UCOLL_OK, "wait");
    /* ucoll_wait completed it: its callback ran before ucoll_wait returned */
    CHECK(g_count_calls == 1 && g_count_status == UCOLL_OK, "callback after wait: %d calls, %d",
          g_count_calls, (int)g_count_status);
    CHECK(b == (int64_t)g_size * (g_size - 1) / 2, "allreduce %lld", (long long)b);
    for (int i = 0; i < 10; i++)
        CHECK(ucoll_progress(w) == 0, "progress with nothing outstanding");
    CHECK(ucoll_test(req) == UCOLL_OK, "test");
    CHECK(g_count_calls == 1, "callback ran %d times", g_count_calls);
    /* a peer's next message may already be arriving (INPROGRESS); once taken in, OK */
    ucoll_status_t armed = UCOLL_INPROGRESS;
    for (int i = 0; i < 1000 && armed == UCOLL_INPROGRESS; i++)
        if ((armed = ucoll_arm(w)) == UCOLL_INPROGRESS)
            CHECK(ucoll_progress(w) == 0, "progress with nothing outstanding");
    CHECK(armed == UCOLL_OK, "arm with nothing outstanding: %d", (int)armed);
    CHECK(ucoll_request_set_callback(req, count_cb, NULL) == UCOLL_ERR_STATE, "set after firing");
    CHECK(ucoll_request_free(req) == UCOLL_OK, "free");
    CHECK(ucoll_request_set_callback(req, count_cb, NULL) == UCOLL_ERR_INVALID_ARG, "freed req");

    /* completed before set_callback: runs inside it */
    CHECK(ucoll_iallreduce(w, &a, &b, 1, UCOLL_INT64, UCOLL_OP_SUM, &req) == UCOLL_OK, "post");
    CHECK(ucoll_wait(req) == UCOLL_OK, "wait");
    g_count_calls = 0;
    CHECK(ucoll_request_set_callback(req, count_cb, NULL) == UCOLL_OK, "set on completed");
    CHECK(g_count_calls == 1 && g_count_status == UCOLL_OK, "completed: %d calls", g_count_calls);
    CHECK(ucoll_request_free(req) == UCOLL_OK, "free");

    /* persistent: nothing until a start, then once per start */
    g_count_calls = 0;
    CHECK(ucoll_allreduce_init(w, &a, &b, 1, UCOLL_INT64, UCOLL_OP_SUM, &req) == UCOLL_OK, "init");
    CHECK(ucoll_request_set_callback(req, count_cb, NULL) == UCOLL_OK, "set persistent");
    CHECK(ucoll_progress(w) == 0 && g_count_calls == 0, "persistent before start: %d calls",
          g_count_calls);
    for (int s = 1; s <= 3; s++) {
        CHECK(ucoll_start(req) == UCOLL_OK, "start");
        CHECK(ucoll_wait(req) == UCOLL_OK, "wait");
        CHECK(g_count_calls == s, "start %d: %d calls", s, g_count_calls);
    }
    CHECK(ucoll_request_free(req) == UCOLL_OK, "free persistent");

    /* a request freed by another callback before its own callback ran gets none */
    ucoll_request_t *ra = NULL, *rb = NULL;
    int64_t b2 = 0;
    g_count_calls = 0;
    CHECK(ucoll_iallreduce(w, &a, &b, 1, UCOLL_INT64, UCOLL_OP_SUM, &ra) == UCOLL_OK, "post a");
    CHECK(ucoll_iallreduce(w, &a, &b2, 1, UCOLL_INT64, UCOLL_OP_SUM, &rb) == UCOLL_OK, "post b");
    CHECK(ucoll_request_set_callback(ra, free_other_cb, rb) == UCOLL_OK, "set a");
    CHECK(ucoll_request_set_callback(rb, order_cb, NULL) == UCOLL_OK, "set b");
    CHECK(ucoll_wait(rb) == UCOLL_OK && ucoll_wait(ra) == UCOLL_OK, "wait a, b");
    CHECK(g_free_order != 0, "no callback ran");
    CHECK(g_count_calls == (g_free_order == 1 ? 0 : 1), "b's callback ran %d times (order %d)",
          g_count_calls, g_free_order);
    CHECK(ucoll_request_free(ra) == UCOLL_OK, "free a");

    ucoll_comm_t *sub = NULL;
    CHECK(ucoll_comm_split(w, 0, -g_rank, &sub) == UCOLL_OK, "split");
    CHECK(ucoll_progress(sub) == UCOLL_ERR_INVALID_ARG, "progress(split comm)");
    CHECK(ucoll_arm(sub) == UCOLL_ERR_INVALID_ARG, "arm(split comm)");
    CHECK(ucoll_event_fd(sub) == -1, "event_fd(split comm)");
    CHECK(ucoll_comm_free(sub) == UCOLL_OK, "comm_free");
}

/* ------------------------------------------------------------------------------- idle mode */

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
           (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

static void run_idle(ucoll_comm_t *w, double max_cpu)
{
    CHECK(ucoll_barrier(w) == UCOLL_OK, "first barrier");
    if (g_rank == 1)
        sleep(2);
    const double c0 = cpu_s(), t0 = now_s();
    CHECK(ucoll_barrier(w) == UCOLL_OK, "barrier");
    const double cpu = cpu_s() - c0, wall = now_s() - t0;
    if (g_rank == 0) {
        const char *mode = getenv("UCOLL_WAIT_MODE");
        printf("idle wait (UCOLL_WAIT_MODE=%s): rank 0 waited %.3f s wall, %.3f s CPU "
               "(user+sys)\n",
               mode != NULL ? mode : "", wall, cpu);
        CHECK(g_size < 2 || wall > 1.5, "rank 0 waited only %.3f s", wall);
        CHECK(max_cpu <= 0 || cpu <= max_cpu * wall, "CPU %.3f s is over %.2f of %.3f s", cpu,
              max_cpu, wall);
    }
}

int main(int argc, char **argv)
{
    int expect_size = 0;
    const char *mode = NULL;
    double max_cpu = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--expect-size") == 0 && i + 1 < argc)
            expect_size = atoi(argv[++i]);
        else if (strcmp(argv[i], "--mode") == 0 && i + 1 < argc)
            mode = argv[++i];
        else if (strcmp(argv[i], "--max-cpu") == 0 && i + 1 < argc)
            max_cpu = atof(argv[++i]);
        else
            mode = NULL, i = argc;
    }
    if (expect_size < 1 || mode == NULL) {
        fprintf(stderr,
                "usage: progress_test --expect-size N --mode epoll|thread|errors|idle|sleepwait "
                "[--max-cpu F]\n");
        return 2;
    }
    ucoll_comm_t *w = NULL;
    ucoll_status_t st;
    if (strcmp(mode, "thread") == 0 || strcmp(mode, "sleepwait") == 0) {
        ucoll_thread_level_t got = UCOLL_THREAD_SINGLE;
        st = ucoll_init_thread(NULL, UCOLL_THREAD_MULTIPLE, &got, &w);
        if (st == UCOLL_OK && got != UCOLL_THREAD_MULTIPLE) {
            printf("FAIL: thread level %d granted\n", (int)got);
            return 1;
        }
    } else {
        st = ucoll_init(&w);
    }
    if (st != UCOLL_OK) {
        printf("FAIL: ucoll_init: %d\n", (int)st);
        return 1;
    }
    g_rank = ucoll_comm_rank(w);
    g_size = ucoll_comm_size(w);
    CHECK(g_size == expect_size, "job size %d, expected %d", g_size, expect_size);
    if (g_size == expect_size) {
        if (strcmp(mode, "epoll") == 0)
            run_epoll(w);
        else if (strcmp(mode, "thread") == 0)
            run_thread(w);
        else if (strcmp(mode, "errors") == 0)
            run_errors(w);
        else if (strcmp(mode, "idle") == 0)
            run_idle(w, max_cpu);
        else if (strcmp(mode, "sleepwait") == 0)
            run_sleepwait(w);
        else
            CHECK(0, "unknown mode %s", mode);
    }
    int64_t fails = g_fails;
    st = ucoll_allreduce(w, UCOLL_IN_PLACE, &fails, 1, UCOLL_INT64, UCOLL_OP_SUM);
    CHECK(st == UCOLL_OK, "final allreduce: %d", (int)st);
    if (g_rank == 0)
        printf("progress_test --mode %s np=%d: %lld failures on all ranks; verdict: %s\n", mode,
               g_size, (long long)fails, fails == 0 && st == UCOLL_OK ? "PASS" : "FAIL");
    int local_fail = g_fails != 0 || fails != 0;
    st = ucoll_finalize(w);
    if (st != UCOLL_OK) {
        printf("FAIL: finalize %d\n", (int)st);
        local_fail = 1;
    }
    if (strcmp(mode, "errors") == 0 && ucoll_progress(w) != UCOLL_ERR_STATE) {
        printf("FAIL: ucoll_progress after finalize\n");
        local_fail = 1;
    }
    return local_fail;
}
