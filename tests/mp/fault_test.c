/*
 * tests/mp/fault_test.c: one rank dies (SIGKILL) in the middle of a loop of mixed collectives;
 * every other rank must get an error (UCOLL_ERR_PEER_FAILED, or UCOLL_ERR_TIMED_OUT when
 * UCOLL_TIMEOUT is set) instead of hanging. Public API only. One launch = one repetition:
 * tests/mp/run_fault.sh launches it many times with different seeds and checks the records.
 *
 * Usage: fault_test --seed S --dir DIR [--iters N] [--max-delay-ms MS] [--mode M] [--big B]
 *        (N = 100, MS = 300; --big: every collective moves B bytes, so that the victim dies
 *        during large transfers: on one host, single-copy reads of its buffers; --mem: send
 *        and receive buffers from ucoll_mem_alloc, so that those reads go through mappings of
 *        the victim's memory, or reduce straight out of it)
 * Every rank derives the same plan from the seed:
 *   victim   the rank that dies (any rank, 0 included)
 *   mode     before: raise(SIGKILL) just before the call of iteration K (0 <= K < N);
 *            nonblocking: start a nonblocking allreduce at iteration K, call ucoll_test J times
 *            (J in 0..4), then raise(SIGKILL) with the collective half done;
 *            timer: an interval timer fires after D microseconds (0 <= D < --max-delay-ms) of
 *            the loop and its handler raises SIGKILL, wherever the victim is (usually inside a
 *            blocking or nonblocking collective, sometimes between two)
 *   (--mode forces one, and also offers stop: like before, but raise(SIGSTOP): a rank that
 *   hangs instead of dying, whose connections stay open, so the survivors can only time out;
 *   and gone: rank 0 dies once every rank is through the first barrier, and each survivor
 *   waits until its process is gone before it starts an allreduce of 32 Ki elements: its first
 *   sends to the dead rank are posted before anything noticed the death, and UCX fails some
 *   of them itself (with UCX 1.13's shared memory, a send that needs a segment of the dead
 *   rank's it has not attached yet; here that is most often one of rank 0's);
 *   and external: no rank kills itself; every rank writes DIR/ready-R once through the first
 *   barrier, and something outside (tests/cluster/run-host-faults.sh) kills a whole host or
 *   cuts its link)
 * The loop issues collectives of every kind (exscan, scan, reduce, allreduce, bcast, barrier),
 * blocking and in batches of 1..3 nonblocking ones, with counts skewed to small (up to 32 Ki
 * elements of up to 8 bytes), and checks every result that succeeds against a local reference.
 *
 * Records (text, one file per rank, written before the rank ends; times are CLOCK_REALTIME
 * seconds, comparable between the processes of one host):
 *   DIR/pid-R        the process id of rank R                   (written after ucoll_init)
 *   DIR/victim       victim=R mode=M iter=K pid=P t_kill=T      (written just before the signal)
 *   DIR/rank-R       rank=R status=NAME code=C iter=I call_s=S t_err=T wrong=W completed=N
 *                    init_s=S loop_s=S  (init and first barrier; the loop up to the error)
 *                    then, after ucoll_finalize: fin_status=NAME fin_s=S
 * status is the first error a survivor got (NO_ERROR if it looped 60 s without one);
 * call_s is how long that call took; wrong counts results that did not match the reference.
 * The exit status of a survivor is 0 once its record is written (run_fault.sh judges it).
 */
#include "mp_util.h"

#include <ucoll.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define MAX_BATCH 3
#define MAX_WALL_S 60.0

/* the plan's random stream: identical on every rank */
static uint64_t rng_state;
static uint64_t rng_next(void)
{
    rng_state = mpt_mix64(rng_state);
    return rng_state;
}
static uint64_t rng_below(uint64_t n)
{
    return n ? rng_next() % n : 0;
}

static double now_real(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---------------------------------------------------------------- the victim's last words */

enum {
    MODE_BEFORE,
    MODE_NONBLOCKING,
    MODE_TIMER,
    NRANDOM_MODES,
    MODE_STOP = NRANDOM_MODES,
    MODE_GONE,
    MODE_EXTERNAL,
    NMODES
};
static const char *const mode_names[NMODES] = {"before", "nonblocking", "timer",
                                               "stop",   "gone",        "external"};

static int victim_fd = -1;
static int victim_rank, victim_mode;
static volatile sig_atomic_t current_iter;

/* async-signal-safe decimal formatting (the timer path runs in a signal handler) */
static char *put_str(char *p, const char *s)
{
    while (*s)
        *p++ = *s++;
    return p;
}
static char *put_u64(char *p, uint64_t v, int min_digits)
{
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0 || n < min_digits);
    while (n > 0)
        *p++ = tmp[--n];
    return p;
}

/* writes DIR/victim and dies (or, in stop mode, stops: run_fault.sh kills it once the
 * survivors are done); safe inside a signal handler */
static void die_now(void)
{
    struct timespec ts;
    char line[160], *p = line;
    clock_gettime(CLOCK_REALTIME, &ts);
    p = put_str(p, "victim=");
    p = put_u64(p, (uint64_t)victim_rank, 1);
    p = put_str(p, " mode=");
    p = put_str(p, mode_names[victim_mode]);
    p = put_str(p, " iter=");
    p = put_u64(p, (uint64_t)current_iter, 1);
    p = put_str(p, " pid=");
    p = put_u64(p, (uint64_t)getpid(), 1);
    p = put_str(p, " t_kill=");
    p = put_u64(p, (uint64_t)ts.tv_sec, 1);
    p = put_str(p, ".");
    p = put_u64(p, (uint64_t)ts.tv_nsec, 9);
    p = put_str(p, "\n");
    if (write(victim_fd, line, (size_t)(p - line)) < 0) {
        /* nothing to do: the missing record fails the test */
    }
    raise(victim_mode == MODE_STOP ? SIGSTOP : SIGKILL);
    raise(SIGKILL); /* continued: die all the same */
}

static void on_timer(int sig)
{
    (void)sig;
    die_now();
}

/* ---------------------------------------------------------------- data and reference */

/* (dtype, op) pairs whose reference is exact */
typedef struct {
    ucoll_dtype_t dtype;
    ucoll_op_t op;
    size_t esize;
} kind_t;
static const kind_t kinds[] = {
    {UCOLL_INT64, UCOLL_OP_SUM, 8},
    {UCOLL_UINT32, UCOLL_OP_BXOR, 4},
    {UCOLL_FLOAT64, UCOLL_OP_MAX, 8},
    {UCOLL_INT32, UCOLL_OP_MIN, 4},
};
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

static void gen(const kind_t *k, int rank, uint64_t salt, size_t n, void *buf)
{
    mpt_fill_input(buf, n, k->dtype, k->op, rank, salt);
}

/* the combination of ranks lo..hi-1's inputs into out (hi > lo) */
static void reference(const kind_t *k, int lo, int hi, uint64_t salt, size_t n, void *out,
                      void *tmp)
{
    mpt_ref_range(out, tmp, n, k->dtype, k->op, NULL, lo, hi, salt);
}

/* ---------------------------------------------------------------- one collective */

enum { C_EXSCAN, C_SCAN, C_REDUCE, C_ALLREDUCE, C_BCAST, C_BARRIER, NCOLLS };

typedef struct {
    int coll, root;
    const kind_t *kind;
    size_t count;
    uint64_t salt;
    void *send, *recv, *expect, *tmp;
    size_t send_n, recv_n, expect_n, tmp_n; /* their sizes: at least count elements */
    ucoll_request_t *req;
} op_t;

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (p == NULL) {
        fprintf(stderr, "fault_test: out of memory\n");
        exit(2);
    }
    return p;
}

/* --big: the bytes of every collective's vector; 0: drawn (draw_count) */
static size_t big_bytes;
/* --mem: send and receive buffers from ucoll_mem_alloc */
static int mem_alloc;

/* --big: a collective's buffers are kept for the next one instead of freed. Fresh 64 MiB
 * buffers cost more in page faults than the transfers take, and the victim is meant to die
 * in those transfers. Two kinds: the send and receive buffers, and the references' scratch. */
enum { KEPT_IO, KEPT_SCRATCH };
#define KEPT_MAX (2 * MAX_BATCH)
static struct {
    void *p;
    size_t n;
} kept[2][KEPT_MAX];
static int nkept[2];

/* a kept buffer of kind k of at least *n bytes, *n becoming its size; NULL if there is none,
 * *n becoming the size to allocate (at least big_bytes, to be kept for any later collective) */
static void *kept_get(int k, size_t *n)
{
    if (big_bytes == 0)
        return NULL;
    for (int i = 0; i < nkept[k]; i++)
        if (kept[k][i].n >= *n) {
            void *p = kept[k][i].p;
            *n = kept[k][i].n;
            kept[k][i] = kept[k][--nkept[k]];
            return p;
        }
    if (*n < big_bytes)
        *n = big_bytes;
    return NULL;
}

/* 1 if p (of n bytes) is kept for a later collective */
static int kept_put(int k, void *p, size_t n)
{
    if (big_bytes == 0 || nkept[k] == KEPT_MAX)
        return 0;
    kept[k][nkept[k]].p = p;
    kept[k][nkept[k]++].n = n;
    return 1;
}

static void *scratch_get(size_t *n)
{
    void *p = kept_get(KEPT_SCRATCH, n);
    return p != NULL ? p : xmalloc(*n);
}

static void scratch_put(void *p, size_t n)
{
    if (!kept_put(KEPT_SCRATCH, p, n))
        free(p);
}

/* *np: the bytes wanted; becomes the buffer's size */
static void *buffer_get(size_t *np)
{
    void *p = kept_get(KEPT_IO, np);
    const size_t n = *np;
    if (p != NULL)
        return p;
    if (!mem_alloc)
        return xmalloc(n);
    if (ucoll_mem_alloc(n ? n : 1, &p) != UCOLL_OK) {
        fprintf(stderr, "fault_test: ucoll_mem_alloc of %zu bytes failed\n", n);
        exit(1);
    }
    return p;
}

static void buffer_put(void *p, size_t n)
{
    if (kept_put(KEPT_IO, p, n))
        return;
    if (!mem_alloc) {
        free(p);
    } else if (ucoll_mem_free(p) != UCOLL_OK) {
        fprintf(stderr, "fault_test: ucoll_mem_free refused a buffer it gave\n");
        exit(1);
    }
}

/* counts: mostly tiny, some medium, a few up to 32 Ki elements (256 KiB of 8-byte elements:
 * segmented, rendezvous messages) */
static size_t draw_count(void)
{
    uint64_t r = rng_below(100);
    if (r < 10)
        return 0;
    if (r < 70)
        return 1 + rng_below(64);
    if (r < 95)
        return 65 + rng_below(4096 - 64);
    return 4097 + rng_below(32 * 1024 - 4096);
}

static void op_plan(op_t *o, int size, uint64_t iter_salt)
{
    memset(o, 0, sizeof(*o));
    o->coll = (int)rng_below(NCOLLS);
    o->kind = &kinds[rng_below(NKINDS)];
    o->count = big_bytes > 0 ? big_bytes / o->kind->esize : draw_count();
    o->root = (int)rng_below((uint64_t)size);
    o->salt = iter_salt;
}

/* the fill of a receive buffer before the call; exscan's rank 0 must keep it */
#define FILL 0x5C

static void op_prepare(op_t *o, int rank)
{
    size_t bytes = o->count * o->kind->esize;
    o->send_n = o->recv_n = o->expect_n = o->tmp_n = bytes;
    o->send = buffer_get(&o->send_n);
    o->recv = buffer_get(&o->recv_n);
    o->expect = scratch_get(&o->expect_n);
    o->tmp = scratch_get(&o->tmp_n);
    gen(o->kind, rank, o->salt, o->count, o->send);
    memset(o->recv, FILL, bytes);
    if (o->coll == C_BCAST && rank == o->root)
        memcpy(o->recv, o->send, bytes);
}

static ucoll_status_t op_issue(ucoll_comm_t *w, op_t *o, int nonblocking)
{
    ucoll_request_t **rq = nonblocking ? &o->req : NULL;
    const void *s = o->send;
    void *r = o->recv;
    size_t n = o->count;
    ucoll_dtype_t dt = o->kind->dtype;
    ucoll_op_t op = o->kind->op;
    switch (o->coll) {
    case C_EXSCAN:
        return rq ? ucoll_iexscan(w, s, r, n, dt, op, rq) : ucoll_exscan(w, s, r, n, dt, op);
    case C_SCAN:
        return rq ? ucoll_iscan(w, s, r, n, dt, op, rq) : ucoll_scan(w, s, r, n, dt, op);
    case C_REDUCE:
        return rq ? ucoll_ireduce(w, s, r, n, dt, op, o->root, rq)
                  : ucoll_reduce(w, s, r, n, dt, op, o->root);
    case C_ALLREDUCE:
        return rq ? ucoll_iallreduce(w, s, r, n, dt, op, rq) : ucoll_allreduce(w, s, r, n, dt, op);
    case C_BCAST:
        return rq ? ucoll_ibcast(w, r, n, dt, o->root, rq) : ucoll_bcast(w, r, n, dt, o->root);
    default:
        return rq ? ucoll_ibarrier(w, rq) : ucoll_barrier(w);
    }
}

/* 1 if the result of a completed collective is right */
static int op_verify(op_t *o, int rank, int size)
{
    size_t bytes = o->count * o->kind->esize;
    if (o->count == 0)
        return 1;
    switch (o->coll) {
    case C_EXSCAN:
        if (rank == 0) {
            memset(o->expect, FILL, bytes);
            break;
        }
        reference(o->kind, 0, rank, o->salt, o->count, o->expect, o->tmp);
        break;
    case C_SCAN:
        reference(o->kind, 0, rank + 1, o->salt, o->count, o->expect, o->tmp);
        break;
    case C_REDUCE:
        if (rank != o->root) {
            memset(o->expect, FILL, bytes);
            break;
        }
        reference(o->kind, 0, size, o->salt, o->count, o->expect, o->tmp);
        break;
    case C_ALLREDUCE:
        reference(o->kind, 0, size, o->salt, o->count, o->expect, o->tmp);
        break;
    case C_BCAST:
        gen(o->kind, o->root, o->salt, o->count, o->expect);
        break;
    default:
        return 1;
    }
    return memcmp(o->expect, o->recv, bytes) == 0;
}

static void op_release(op_t *o)
{
    buffer_put(o->send, o->send_n);
    buffer_put(o->recv, o->recv_n);
    scratch_put(o->expect, o->expect_n);
    scratch_put(o->tmp, o->tmp_n);
    o->send = o->recv = o->expect = o->tmp = NULL;
}

/* ---------------------------------------------------------------- main */

/* waits (at most 10 s) until the process whose id is in file `path` has ended: gone, or a
 * zombie that its parent has yet to reap */
static void wait_until_gone(const char *path)
{
    FILE *f = fopen(path, "r");
    long pid = 0;
    if (f == NULL || fscanf(f, "%ld", &pid) != 1 || pid <= 0) {
        fprintf(stderr, "fault_test: no process id in %s\n", path);
        exit(1);
    }
    fclose(f);
    char stat_path[64];
    snprintf(stat_path, sizeof(stat_path), "/proc/%ld/stat", pid);
    const double give_up = now_real() + 10.0;
    while (now_real() < give_up) {
        if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
            return;
        char buf[256] = "";
        FILE *s = fopen(stat_path, "r");
        if (s != NULL) {
            size_t n = fread(buf, 1, sizeof(buf) - 1, s);
            fclose(s);
            buf[n] = '\0';
            const char *paren = strrchr(buf, ')'); /* "pid (comm) S ..." */
            if (paren != NULL && paren[1] == ' ' && paren[2] == 'Z')
                return;
        }
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

/* 1 once file `path` exists; 0 if it does not within 10 s */
static int wait_for_file(const char *path)
{
    const double give_up = now_real() + 10.0;
    while (access(path, F_OK) != 0) {
        if (now_real() > give_up) {
            fprintf(stderr, "fault_test: no %s after 10 s\n", path);
            return 0;
        }
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return 1;
}

static void usage(void)
{
    fprintf(stderr, "usage: fault_test --seed S --dir DIR [--iters N] [--max-delay-ms MS] "
                    "[--mode before|nonblocking|timer|stop|gone|external] [--big BYTES] [--mem]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    uint64_t seed = 0;
    const char *dir = NULL;
    int iters = 100, have_seed = 0;
    long max_delay_ms = 300;
    int force_mode = -1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
            seed = strtoull(argv[++i], NULL, 0);
            have_seed = 1;
        } else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc) {
            dir = argv[++i];
        } else if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc) {
            iters = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--big") == 0 && i + 1 < argc) {
            big_bytes = (size_t)strtoull(argv[++i], NULL, 0);
            if (big_bytes < 8)
                usage();
        } else if (strcmp(argv[i], "--mem") == 0) {
            mem_alloc = 1;
        } else if (strcmp(argv[i], "--max-delay-ms") == 0 && i + 1 < argc) {
            max_delay_ms = atol(argv[++i]);
        } else if (strcmp(argv[i], "--mode") == 0 && i + 1 < argc) {
            const char *m = argv[++i];
            for (int k = 0; k < NMODES; k++)
                if (strcmp(m, mode_names[k]) == 0)
                    force_mode = k;
            if (force_mode < 0)
                usage();
        } else {
            usage();
        }
    }
    if (!have_seed || dir == NULL || iters < 1 || max_delay_ms < 1)
        usage();

    const double t_main = now_real();
    ucoll_comm_t *world;
    ucoll_status_t st = ucoll_init(&world);
    if (st != UCOLL_OK) {
        fprintf(stderr, "fault_test: ucoll_init: %s\n", ucoll_strerror(st));
        return 1;
    }
    const int rank = ucoll_comm_rank(world), size = ucoll_comm_size(world);
    if (size < 2) {
        fprintf(stderr, "fault_test: needs at least 2 ranks\n");
        return 1;
    }
    char path[4096];
    snprintf(path, sizeof(path), "%s/pid-%d", dir, rank); /* to clean up after a bad run */
    FILE *pf = fopen(path, "w");
    if (pf == NULL || fprintf(pf, "%ld\n", (long)getpid()) < 0 || fclose(pf) != 0) {
        perror(path);
        return 1;
    }

    /* the plan */
    rng_state = mpt_mix64(seed);
    victim_rank = (int)rng_below((uint64_t)size);
    victim_mode = (int)rng_below(NRANDOM_MODES);
    const int kill_iter = (int)rng_below((uint64_t)iters);
    const int nb_tests = (int)rng_below(5);
    const long delay_us = (long)rng_below((uint64_t)max_delay_ms * 1000);
    if (force_mode >= 0)
        victim_mode = force_mode;
    if (victim_mode == MODE_GONE)
        victim_rank = 0;
    if (victim_mode == MODE_EXTERNAL)
        victim_rank = -1;
    const int victim = rank == victim_rank;
    if (victim) {
        snprintf(path, sizeof(path), "%s/victim", dir);
        victim_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (victim_fd < 0) {
            perror(path);
            return 1;
        }
    }

    /* everybody is up and connected before the loop starts */
    if ((st = ucoll_barrier(world)) != UCOLL_OK) {
        fprintf(stderr, "fault_test: rank %d: first barrier: %s\n", rank, ucoll_strerror(st));
        return 1;
    }
    if (victim_mode == MODE_GONE) {
        /* the victim dies once every survivor is through the barrier */
        if (victim) {
            for (int r = 0; r < size; r++) {
                snprintf(path, sizeof(path), "%s/ready-%d", dir, r);
                if (r != rank && !wait_for_file(path))
                    return 1;
            }
            die_now();
        }
        snprintf(path, sizeof(path), "%s/ready-%d", dir, rank);
        FILE *rf = fopen(path, "w");
        if (rf == NULL || fclose(rf) != 0) {
            perror(path);
            return 1;
        }
        snprintf(path, sizeof(path), "%s/pid-%d", dir, victim_rank);
        wait_until_gone(path);
    }
    if (victim_mode == MODE_EXTERNAL) {
        /* whoever kills from outside starts its clock once every rank is in the loop */
        snprintf(path, sizeof(path), "%s/ready-%d", dir, rank);
        FILE *rf = fopen(path, "w");
        if (rf == NULL || fclose(rf) != 0) {
            perror(path);
            return 1;
        }
    }
    if (victim && victim_mode == MODE_TIMER) {
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = on_timer;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGALRM, &sa, NULL);
        struct itimerval it;
        memset(&it, 0, sizeof(it));
        it.it_value.tv_sec = delay_us / 1000000;
        it.it_value.tv_usec = delay_us % 1000000 + (delay_us == 0); /* 0 would disarm */
        setitimer(ITIMER_REAL, &it, NULL);
    }

    op_t ops[MAX_BATCH];
    ucoll_status_t first_err = UCOLL_OK;
    int err_iter = -1, wrong = 0;
    long completed = 0;
    double call_s = 0, t_err = 0;
    const double t_loop = now_real();
    for (int it = 0; first_err == UCOLL_OK; it++) {
        current_iter = it;
        if (now_real() - t_loop > MAX_WALL_S)
            break;
        const uint64_t iter_salt = mpt_mix64(seed ^ ((uint64_t)it << 32));
        int nonblocking = rng_below(3) == 0;
        int batch = nonblocking ? 1 + (int)rng_below(MAX_BATCH) : 1;
        const int nb_iter = victim_mode == MODE_NONBLOCKING && it == kill_iter;
        const int nb_kill = victim && nb_iter;
        const int gone_iter = victim_mode == MODE_GONE && it == 0;
        if (nb_iter) { /* every rank: one nonblocking allreduce, which the victim half does */
            nonblocking = 1;
            batch = 1;
        }
        if (gone_iter) {
            nonblocking = 0;
            batch = 1;
        }
        for (int b = 0; b < batch; b++) {
            op_plan(&ops[b], size, iter_salt + (uint64_t)b);
            if (nb_iter) {
                ops[b].coll = C_ALLREDUCE;
                ops[b].count = 1 + ops[b].count % 4096;
            }
            if (gone_iter) { /* segmented, rendezvous messages: through UCX, not the rings */
                ops[b].coll = C_ALLREDUCE;
                ops[b].count = 32 * 1024;
            }
            op_prepare(&ops[b], rank);
        }
        if (victim && (victim_mode == MODE_BEFORE || victim_mode == MODE_STOP) && it == kill_iter)
            die_now();

        double t0 = now_real();
        int issued = 0;
        for (int b = 0; b < batch && first_err == UCOLL_OK; b++) {
            st = op_issue(world, &ops[b], nonblocking);
            if (st != UCOLL_OK) {
                first_err = st;
                break;
            }
            issued++;
            if (!nonblocking && !op_verify(&ops[b], rank, size))
                wrong++;
        }
        if (nb_kill) {
            for (int j = 0; j < nb_tests; j++)
                ucoll_test(ops[0].req);
            die_now();
        }
        for (int b = 0; b < issued && nonblocking; b++) {
            if (first_err == UCOLL_OK) {
                st = ucoll_wait(ops[b].req);
                if (st != UCOLL_OK)
                    first_err = st;
                else if (!op_verify(&ops[b], rank, size))
                    wrong++;
            }
        }
        if (first_err != UCOLL_OK) {
            t_err = now_real();
            call_s = t_err - t0;
            err_iter = it;
        } else {
            completed += batch;
        }
        for (int b = 0; b < issued && nonblocking && first_err == UCOLL_OK; b++)
            ucoll_request_free(ops[b].req);
        /* after an error, requests may still be active: ucoll_finalize stops them and
         * ucoll_request_free releases them then; their buffers stay allocated until exit */
        for (int b = 0; b < batch && first_err == UCOLL_OK; b++)
            op_release(&ops[b]);
    }
    if (victim) {
        fprintf(stderr, "fault_test: rank %d is the victim and is still alive\n", rank);
        return 1;
    }

    snprintf(path, sizeof(path), "%s/rank-%d", dir, rank);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        perror(path);
        return 1;
    }
    if (first_err == UCOLL_OK)
        t_err = now_real();
    fprintf(f,
            "rank=%d status=%s code=%d iter=%d call_s=%.6f t_err=%.6f wrong=%d completed=%ld "
            "init_s=%.3f loop_s=%.3f\n",
            rank, first_err == UCOLL_OK ? "NO_ERROR" : mpt_status_name(first_err), (int)first_err,
            err_iter, call_s, t_err, wrong, completed, t_loop - t_main, t_err - t_loop);
    fflush(f);
    double t_fin = now_real();
    st = ucoll_finalize(world);
    fprintf(f, "fin_status=%s fin_s=%.6f\n", mpt_status_name(st), now_real() - t_fin);
    fclose(f);
    return 0;
}
