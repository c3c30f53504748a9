/*
 * tests/mp/store_test.c: the store bootstrap (ucoll_init_store, and ucoll_init with
 * UCOLL_STORE, UCOLL_RANK, UCOLL_SIZE) without any launcher. The program forks the ranks of
 * each job itself, before it calls ucoll, on a port of 127.0.0.1 picked at random in
 * 20000..59999 (a case whose rank 0 finds it in use runs again on another port, up to 3 times).
 *
 * Jobs, every rank checking its status, the line on stderr and how long init took:
 * - 4 ranks started in reverse order (rank 0 last, 1 s late), even ones through the variables
 *   (rank 0 ucoll_init, rank 2 ucoll_init_thread without an allgather), odd ones through
 *   ucoll_init_store: OK, world size 4, an allreduce of the ranks gives 6, finalize OK;
 * - ranks 0, 1 of 3 and a rank 2 that says 4: INVALID_ARG on all three, "says the job has";
 * - ranks 0, 1, 1 of 3: INVALID_ARG on all three, "two processes joined as rank 1";
 * - rank 1 of 2 with nobody serving, UCOLL_TIMEOUT=3: TIMED_OUT after 3 s (within 3 + 10 s);
 * - ranks 0, 1 of 3 (rank 2 never starts), UCOLL_TIMEOUT=3: TIMED_OUT on both, "rank 2 is
 *   missing";
 * - rank 0 of 2 on a port this program holds: BOOTSTRAP at once, "Address already in use".
 * Then in this process: malformed addresses, ranks and sizes, and incomplete or malformed
 * variables are INVALID_ARG naming the problem; after them a 1-rank store job works, again
 * after its finalize; ucoll_init through the variables works once, then gives ERR_STATE.
 * With --no-pmix (a build configured --without-pmix) ucoll_init without the variables first
 * gives NOT_SUPPORTED, saying how to start instead.
 *
 * Usage: store_test [--no-pmix]. Prints FAIL lines, a line per job and a summary ending in
 * "verdict: PASS|FAIL"; exit status 0 only on PASS.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* prctl */
#endif

#include <ucoll.h>

#include "mp_util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_RANKS 8
#define PORT_BUSY 42 /* a rank 0 child's exit status: its port was taken, try another */

static long n_checks, n_failed, n_jobs, n_jobs_failed;

static void check(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void check(int cond, const char *fmt, ...)
{
    n_checks++;
    if (cond)
        return;
    n_failed++;
    va_list ap;
    va_start(ap, fmt);
    printf("FAIL: ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    fflush(stdout);
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static unsigned next_random(void)
{
    static unsigned x;
    if (x == 0)
        x = (unsigned)getpid() * 2654435761u ^ (unsigned)time(NULL);
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return x;
}

/* a port of 127.0.0.1 that was free a moment ago */
static int pick_port(void)
{
    for (int tries = 0; tries < 100; tries++) {
        int port = 20000 + (int)(next_random() % 40000);
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in sa = {0};
        sa.sin_family = AF_INET;
        sa.sin_port = htons((uint16_t)port);
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        int ok = fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
        if (fd >= 0)
            close(fd);
        if (ok)
            return port;
    }
    return 20000 + (int)(next_random() % 40000);
}

/* one forked rank's part of a job */
typedef struct {
    int rank, size;   /* what it claims */
    double delay_s;   /* before it starts */
    int through_init; /* 1: ucoll_init with the variables, 2: ucoll_init_thread(NULL, MULTIPLE)
                       * with them, 0: ucoll_init_store */
} claim_t;

typedef struct {
    const char *name;
    int nranks;
    claim_t claims[MAX_RANKS];
    const char *timeout; /* UCOLL_TIMEOUT */
    ucoll_status_t want;
    const char *want_msg; /* in every rank's stderr (NULL: none looked for) */
    double min_s, max_s;  /* init's duration on every rank */
    int hold_port;        /* this process listens on the port during the job */
} job_t;

static const char *const init_names[3] = {"ucoll_init_store", "ucoll_init", "ucoll_init_thread"};

/* a child: one rank's init, checked; exit 0 if all checks passed */
static int run_rank(const job_t *job, const claim_t *c, int port)
{
    char addr[64], rank[16], size[16];
    snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
    snprintf(rank, sizeof(rank), "%d", c->rank);
    snprintf(size, sizeof(size), "%d", c->size);
    setenv("UCOLL_TIMEOUT", job->timeout, 1);
    if (c->through_init) {
        setenv("UCOLL_STORE", addr, 1);
        setenv("UCOLL_RANK", rank, 1);
        setenv("UCOLL_SIZE", size, 1);
    }
    sleep_s(c->delay_s);
    char msg[8192];
    ucoll_comm_t *world = NULL;
    const double t0 = now_s();
    mpt_capture_stderr_begin();
    ucoll_thread_level_t got = UCOLL_THREAD_SINGLE;
    ucoll_status_t st = c->through_init == 2
                            ? ucoll_init_thread(NULL, UCOLL_THREAD_MULTIPLE, &got, &world)
                        : c->through_init ? ucoll_init(&world)
                                          : ucoll_init_store(addr, c->rank, c->size, &world);
    mpt_capture_stderr_end(msg, sizeof(msg), 0);
    const double took = now_s() - t0;
    if (c->rank == 0 && st != UCOLL_OK && strstr(msg, "Address already in use") != NULL &&
        !job->hold_port)
        return PORT_BUSY;
    check(st == job->want, "%s, rank %d of %d (%s): status %d (%s), expected %s; stderr: %s",
          job->name, c->rank, c->size, init_names[c->through_init], (int)st, ucoll_strerror(st),
          mpt_status_name(job->want), msg);
    if (job->want_msg != NULL)
        check(strstr(msg, job->want_msg) != NULL, "%s, rank %d: stderr lacks \"%s\": \"%s\"",
              job->name, c->rank, job->want_msg, msg);
    check(took >= job->min_s && took <= job->max_s,
          "%s, rank %d: init took %.2f s, expected %.1f..%.1f", job->name, c->rank, took,
          job->min_s, job->max_s);
    if (st == UCOLL_OK && c->through_init == 2)
        check(got == UCOLL_THREAD_MULTIPLE, "%s, rank %d: ucoll_init_thread provided %d", job->name,
              c->rank, (int)got);
    if (st == UCOLL_OK) {
        check(ucoll_comm_size(world) == job->nranks && ucoll_comm_rank(world) == c->rank,
              "%s: rank %d: world rank %d of %d", job->name, c->rank, ucoll_comm_rank(world),
              ucoll_comm_size(world));
        int64_t mine = c->rank, sum = -1;
        st = ucoll_allreduce(world, &mine, &sum, 1, UCOLL_INT64, UCOLL_OP_SUM);
        const int64_t want = (int64_t)job->nranks * (job->nranks - 1) / 2;
        check(st == UCOLL_OK && sum == want,
              "%s: rank %d: allreduce gave %d, sum %lld, expected %lld", job->name, c->rank,
              (int)st, (long long)sum, (long long)want);
        st = ucoll_finalize(world);
        check(st == UCOLL_OK, "%s: rank %d: finalize gave %d", job->name, c->rank, (int)st);
    }
    return n_failed == 0 ? 0 : 1;
}

/* forks the job's ranks, waits for them (killing them 120 s on); 1 = passed, 0 = failed,
 * -1 = rank 0's port was taken */
static int run_job_once(const job_t *job, int port)
{
    pid_t pids[MAX_RANKS];
    int holder = -1;
    if (job->hold_port) {
        holder = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in sa = {0};
        sa.sin_family = AF_INET;
        sa.sin_port = htons((uint16_t)port);
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (holder < 0 || bind(holder, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
            listen(holder, 4) != 0) {
            if (holder >= 0)
                close(holder);
            return -1;
        }
    }
    fflush(stdout);
    for (int i = 0; i < job->nranks; i++) {
        pids[i] = fork();
        if (pids[i] == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (holder >= 0)
                close(holder);
            n_checks = n_failed = 0;
            int rc = run_rank(job, &job->claims[i], port);
            fflush(stdout);
            _exit(rc);
        }
    }
    int ok = 1, busy = 0;
    const double deadline = now_s() + 120;
    for (int i = 0; i < job->nranks; i++) {
        int status = 0;
        pid_t got;
        while ((got = waitpid(pids[i], &status, WNOHANG)) == 0 && now_s() < deadline)
            sleep_s(0.05);
        if (got != pids[i]) {
            printf("FAIL: %s: rank %d (pid %d) still running after 120 s: killed\n", job->name,
                   job->claims[i].rank, (int)pids[i]);
            kill(pids[i], SIGKILL);
            waitpid(pids[i], &status, 0);
            ok = 0;
            continue;
        }
        if (WIFEXITED(status) && WEXITSTATUS(status) == PORT_BUSY)
            busy = 1;
        else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            ok = 0;
    }
    if (holder >= 0)
        close(holder);
    return busy ? -1 : ok;
}

static void run_forked_job(const job_t *job)
{
    int r = -1;
    for (int attempt = 0; attempt < 3 && r < 0; attempt++) {
        const int port = pick_port();
        r = run_job_once(job, port);
        if (r < 0)
            printf("note: %s: port %d was taken, trying another\n", job->name, port);
    }
    n_jobs++;
    n_jobs_failed += r != 1;
    check(r == 1, "%s: %s", job->name, r < 0 ? "no free port in 3 tries" : "a rank failed");
    printf("%s: %s\n", r == 1 ? "ok  " : "FAIL", job->name);
    fflush(stdout);
}

/* ---------------------------------------------------------------- in this process */

static ucoll_status_t init_store_capturing(const char *addr, int rank, int size, ucoll_comm_t **w,
                                           char *msg, size_t cap)
{
    mpt_capture_stderr_begin();
    ucoll_status_t st = ucoll_init_store(addr, rank, size, w);
    mpt_capture_stderr_end(msg, cap, 0);
    return st;
}

static ucoll_status_t init_capturing(ucoll_comm_t **w, char *msg, size_t cap)
{
    mpt_capture_stderr_begin();
    ucoll_status_t st = ucoll_init(w);
    mpt_capture_stderr_end(msg, cap, 0);
    return st;
}

static void refused_store(const char *addr, int rank, int size, const char *want_msg)
{
    char msg[4096];
    ucoll_comm_t *w = NULL;
    ucoll_status_t st = init_store_capturing(addr, rank, size, &w, msg, sizeof(msg));
    check(st == UCOLL_ERR_INVALID_ARG && w == NULL,
          "ucoll_init_store(%s, %d, %d): status %d (%s), expected INVALID_ARG",
          addr ? addr : "NULL", rank, size, (int)st, ucoll_strerror(st));
    check(strstr(msg, want_msg) != NULL,
          "ucoll_init_store(%s, %d, %d): stderr lacks \"%s\": \"%s\"", addr ? addr : "NULL", rank,
          size, want_msg, msg);
    if (st == UCOLL_OK)
        ucoll_finalize(w);
}

/* ucoll_init with the three variables as given (NULL: unset) */
static void refused_env(const char *store, const char *rank, const char *size, const char *want_msg)
{
    const char *names[3] = {"UCOLL_STORE", "UCOLL_RANK", "UCOLL_SIZE"};
    const char *vals[3] = {store, rank, size};
    for (int i = 0; i < 3; i++) {
        if (vals[i] != NULL)
            setenv(names[i], vals[i], 1);
        else
            unsetenv(names[i]);
    }
    char msg[4096];
    ucoll_comm_t *w = NULL;
    ucoll_status_t st = init_capturing(&w, msg, sizeof(msg));
    check(st == UCOLL_ERR_INVALID_ARG,
          "ucoll_init, UCOLL_STORE=%s UCOLL_RANK=%s UCOLL_SIZE=%s: "
          "status %d (%s), expected INVALID_ARG",
          store ? store : "(unset)", rank ? rank : "(unset)", size ? size : "(unset)", (int)st,
          ucoll_strerror(st));
    check(strstr(msg, want_msg) != NULL,
          "ucoll_init, UCOLL_STORE=%s UCOLL_RANK=%s: stderr lacks "
          "\"%s\": \"%s\"",
          store ? store : "(unset)", rank ? rank : "(unset)", want_msg, msg);
    if (st == UCOLL_OK)
        ucoll_finalize(w);
    for (int i = 0; i < 3; i++)
        unsetenv(names[i]);
}

/* a 1-rank job: init, a bcast and finalize all OK */
static void one_rank_job(const char *what, int through_init)
{
    char msg[4096];
    ucoll_comm_t *w = NULL;
    ucoll_status_t st = through_init
                            ? init_capturing(&w, msg, sizeof(msg))
                            : init_store_capturing("127.0.0.1:9", 0, 1, &w, msg, sizeof(msg));
    check(st == UCOLL_OK, "%s: init gave %d (%s): %s", what, (int)st, ucoll_strerror(st), msg);
    if (st != UCOLL_OK)
        return;
    int32_t v = 41, r = 0;
    st = ucoll_allreduce(w, &v, &r, 1, UCOLL_INT32, UCOLL_OP_SUM);
    check(st == UCOLL_OK && r == 41 && ucoll_comm_size(w) == 1, "%s: 1-rank allreduce gave %d, %d",
          what, (int)st, (int)r);
    st = ucoll_finalize(w);
    check(st == UCOLL_OK, "%s: finalize gave %d", what, (int)st);
}

int main(int argc, char **argv)
{
    int no_pmix = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--no-pmix") == 0) {
            no_pmix = 1;
        } else {
            fprintf(stderr, "usage: store_test [--no-pmix]\n");
            return 2;
        }
    }
    unsetenv("UCOLL_STORE");
    unsetenv("UCOLL_RANK");
    unsetenv("UCOLL_SIZE");

    /* forked jobs first: this process has not used ucoll yet */
    const job_t jobs[] = {
        {"4 ranks, rank 0 last",
         4,
         {{3, 4, 0, 0}, {2, 4, 0.2, 2}, {1, 4, 0.4, 0}, {0, 4, 1.0, 1}},
         "60",
         UCOLL_OK,
         NULL,
         0,
         60,
         0},
        {"size mismatch: rank 2 says 4 of 3",
         3,
         {{0, 3, 0, 1}, {1, 3, 0, 0}, {2, 4, 0.5, 1}},
         "20",
         UCOLL_ERR_INVALID_ARG,
         "says the job has",
         0,
         15,
         0},
        {"duplicate rank 1",
         3,
         {{0, 3, 0, 1}, {1, 3, 0, 1}, {1, 3, 0.5, 0}},
         "20",
         UCOLL_ERR_INVALID_ARG,
         "two processes joined as rank 1",
         0,
         15,
         0},
        {"nobody serving, UCOLL_TIMEOUT=3",
         1,
         {{1, 2, 0, 1}},
         "3",
         UCOLL_ERR_TIMED_OUT,
         "did not serve",
         2.9,
         13,
         0},
        {"rank 2 never starts, UCOLL_TIMEOUT=3",
         2,
         {{0, 3, 0, 1}, {1, 3, 0, 0}},
         "3",
         UCOLL_ERR_TIMED_OUT,
         "rank 2 is missing",
         2.9,
         13,
         0},
        {"rank 0's port in use",
         1,
         {{0, 2, 0, 0}},
         "20",
         UCOLL_ERR_BOOTSTRAP,
         "Address already in use",
         0,
         5,
         1},
    };
    for (size_t j = 0; j < sizeof(jobs) / sizeof(jobs[0]); j++)
        run_forked_job(&jobs[j]);

    if (no_pmix) {
        char msg[4096];
        ucoll_comm_t *w = NULL;
        ucoll_status_t st = init_capturing(&w, msg, sizeof(msg));
        check(st == UCOLL_ERR_NOT_SUPPORTED,
              "--without-pmix: ucoll_init without the store's "
              "variables gave %d (%s), expected NOT_SUPPORTED",
              (int)st, ucoll_strerror(st));
        check(strstr(msg, "without PMIx") != NULL && strstr(msg, "UCOLL_STORE") != NULL,
              "--without-pmix: ucoll_init's message: \"%s\"", msg);
    }

    /* refusals that change nothing, then jobs that work in the same process */
    refused_store(NULL, 0, 1, "NULL");
    refused_store("127.0.0.1", 0, 1, "HOST:PORT");
    refused_store("127.0.0.1:", 0, 1, "HOST:PORT");
    refused_store(":29500", 0, 1, "HOST:PORT");
    refused_store("127.0.0.1:0", 0, 1, "HOST:PORT");
    refused_store("127.0.0.1:65536", 0, 1, "HOST:PORT");
    refused_store("127.0.0.1:29x0", 0, 1, "HOST:PORT");
    refused_store("127.0.0.1:29500", 1, 1, "rank 1 of a job of 1 ranks");
    refused_store("127.0.0.1:29500", -1, 4, "rank -1 of a job of 4 ranks");
    refused_store("127.0.0.1:29500", 0, 0, "rank 0 of a job of 0 ranks");
    refused_env("127.0.0.1:29500", NULL, NULL, "unset: UCOLL_RANK UCOLL_SIZE");
    refused_env(NULL, "0", "1", "unset: UCOLL_STORE");
    refused_env("127.0.0.1:29500", "x", "1", "UCOLL_RANK=x");
    refused_env("127.0.0.1:29500", "0", "-2", "UCOLL_SIZE=-2");
    refused_env("127.0.0.1:29500", "1", "1", "rank 1 of a job of 1 ranks");
    one_rank_job("ucoll_init_store after refusals", 0);
    one_rank_job("ucoll_init_store after ucoll_finalize", 0);
    setenv("UCOLL_STORE", "127.0.0.1:9", 1);
    setenv("UCOLL_RANK", "0", 1);
    setenv("UCOLL_SIZE", "1", 1);
    one_rank_job("ucoll_init through UCOLL_STORE", 1);
    ucoll_comm_t *w = NULL;
    ucoll_status_t st = ucoll_init(&w);
    check(st == UCOLL_ERR_STATE,
          "a second ucoll_init through UCOLL_STORE gave %d (%s), "
          "expected ERR_STATE",
          (int)st, ucoll_strerror(st));
    if (st == UCOLL_OK)
        ucoll_finalize(w);

    const int pass = n_failed == 0;
    printf("store_test: %ld forked jobs, %ld failed; %ld checks in this process (a job's "
           "ranks check their own), %ld failed; verdict: %s\n",
           n_jobs, n_jobs_failed, n_checks - n_jobs, n_failed - n_jobs_failed,
           pass ? "PASS" : "FAIL");
    return pass ? 0 : 1;
}
