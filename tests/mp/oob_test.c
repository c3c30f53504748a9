/*
 * tests/mp/oob_test.c: ucoll_init_oob with an allgather that is not PMIx. The program forks N
 * ranks itself (before any ucoll call; no launcher needed) and serves their allgathers as the
 * hub of a star of socketpairs: every rank sends its block to the parent, which waits for all
 * N blocks of the round, checks that they have the same length, and sends every rank the
 * blocks in rank order. Every read and write is bounded by a deadline; the parent kills the
 * ranks when it passes, and a rank whose parent goes away is killed (PR_SET_PDEATHSIG).
 *
 * Each rank checks: invalid ucoll_oob_t arguments are refused without calling the allgather;
 * an allgather that fails gives UCOLL_ERR_BOOTSTRAP; then a real ucoll_init_oob gives a world of
 * exactly N ranks with the forked rank numbers, and a second init gives UCOLL_ERR_STATE; exact
 * results of blocking, nonblocking and persistent collectives, a barrier checked through a file
 * in a shared temporary directory, a split; ucoll_finalize (which uses the allgather again).
 *
 * Usage: oob_test --ranks N [--timeout SECONDS]
 * Exit status 0 only if every rank exited 0 and the hub saw no protocol error. The parent ends
 * with "oob_test ranks=N: ...; verdict: PASS|FAIL"; ranks print FAIL lines with details.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* prctl, MSG_NOSIGNAL, mkdtemp */
#endif

#include <ucoll.h>

#include "mp_util.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_RANKS 64
#define ERR_LEN UINT64_MAX /* reply header of a failed round */

/* ---------------------------------------------------------------- bounded socket I/O */

/* waits until fd is readable/writable or the deadline passes; 0 = ready */
static int wait_fd(int fd, short events, double deadline)
{
    for (;;) {
        double left = deadline - now_s();
        if (left <= 0)
            return -1;
        struct pollfd pfd = {fd, events, 0};
        int rc = poll(&pfd, 1, (int)(left * 1000) + 1);
        if (rc > 0)
            return 0;
        if (rc < 0 && errno != EINTR)
            return -1;
    }
}

/* reads exactly len bytes; 0 = ok, 1 = EOF before the first byte, -1 = error or timeout */
static int read_full(int fd, void *buf, size_t len, double deadline)
{
    size_t got = 0;
    while (got < len) {
        if (wait_fd(fd, POLLIN, deadline) != 0)
            return -1;
        ssize_t n = read(fd, (char *)buf + got, len - got);
        if (n == 0)
            return got == 0 ? 1 : -1;
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            return -1;
        }
        got += (size_t)n;
    }
    return 0;
}

static int write_full(int fd, const void *buf, size_t len, double deadline)
{
    size_t put = 0;
    while (put < len) {
        if (wait_fd(fd, POLLOUT, deadline) != 0)
            return -1;
        ssize_t n = send(fd, (const char *)buf + put, len - put, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            return -1;
        }
        put += (size_t)n;
    }
    return 0;
}

/* ---------------------------------------------------------------- rank side */

typedef struct {
    int fd, rank, size;
    double timeout_s;
    long calls;
    int fail_next; /* the next call fails at once (error path of ucoll_init_oob) */
    int bad_reply; /* the hub's answer was inconsistent */
} oob_ctx_t;

static int oob_allgather(const void *src, void *dst, size_t len, void *arg)
{
    oob_ctx_t *c = arg;
    c->calls++;
    if (c->fail_next) {
        c->fail_next = 0;
        return -1;
    }
    double deadline = now_s() + c->timeout_s;
    uint64_t hdr = len;
    if (write_full(c->fd, &hdr, sizeof(hdr), deadline) != 0 ||
        write_full(c->fd, src, len, deadline) != 0)
        return -1;
    if (read_full(c->fd, &hdr, sizeof(hdr), deadline) != 0)
        return -1;
    if (hdr == ERR_LEN || hdr != (uint64_t)len * (uint64_t)c->size) {
        c->bad_reply = 1;
        return -1;
    }
    if (read_full(c->fd, dst, len * (size_t)c->size, deadline) != 0)
        return -1;
    /* our own block must come back in our slot */
    if (len > 0 && memcmp((const char *)dst + (size_t)c->rank * len, src, len) != 0) {
        c->bad_reply = 1;
        return -1;
    }
    return 0;
}

/* the collectives over the OOB-bootstrapped world */
static void rank_collectives(ucoll_comm_t *w, int r, int p, const char *dir)
{
    const char *name;
    enum { N = 1000, BIG = 50000 };
    static int64_t in[N], out[N], want[N], tmp[N];
    static double din[BIG], dout[BIG], dwant[BIG], dtmp[BIG];

    name = "allreduce int64 sum";
    mpt_fill_input(in, N, UCOLL_INT64, UCOLL_OP_SUM, r, 1);
    if (mpt_expect_st(ucoll_allreduce(w, in, out, N, UCOLL_INT64, UCOLL_OP_SUM), UCOLL_OK, name,
                      "call")) {
        mpt_ref_range(want, tmp, N, UCOLL_INT64, UCOLL_OP_SUM, NULL, 0, p, 1);
        size_t bad = 0;
        for (size_t i = 0; i < N; i++)
            bad += out[i] != want[i];
        mpt_check(bad == 0, name, "%zu of %d elements wrong", bad, N);
    }

    for (int inclusive = 0; inclusive < 2; inclusive++) {
        name = inclusive ? "scan int64 sum" : "exscan int64 sum";
        const uint64_t salt = 2 + (uint64_t)inclusive;
        mpt_fill_input(in, N, UCOLL_INT64, UCOLL_OP_SUM, r, salt);
        for (size_t i = 0; i < N; i++)
            out[i] = -77;
        ucoll_status_t st = inclusive ? ucoll_scan(w, in, out, N, UCOLL_INT64, UCOLL_OP_SUM)
                                      : ucoll_exscan(w, in, out, N, UCOLL_INT64, UCOLL_OP_SUM);
        if (mpt_expect_st(st, UCOLL_OK, name, "call")) {
            const int hi = r + inclusive; /* ranks 0..hi-1 count; none: untouched */
            if (hi > 0)
                mpt_ref_range(want, tmp, N, UCOLL_INT64, UCOLL_OP_SUM, NULL, 0, hi, salt);
            size_t bad = 0;
            for (size_t i = 0; i < N; i++)
                bad += hi == 0 ? out[i] != -77 : out[i] != want[i];
            mpt_check(bad == 0, name, "%zu of %d elements wrong (rank 0 exscan: untouched)", bad,
                      N);
        }
    }

    name = "reduce float64 max to the last rank";
    mpt_fill_input(din, N, UCOLL_FLOAT64, UCOLL_OP_MAX, r, 4);
    if (mpt_expect_st(ucoll_reduce(w, din, dout, N, UCOLL_FLOAT64, UCOLL_OP_MAX, p - 1), UCOLL_OK,
                      name, "call") &&
        r == p - 1) {
        mpt_ref_range(dwant, dtmp, N, UCOLL_FLOAT64, UCOLL_OP_MAX, NULL, 0, p, 4);
        size_t bad = 0;
        for (size_t i = 0; i < N; i++)
            bad += dout[i] != dwant[i];
        mpt_check(bad == 0, name, "%zu of %d elements wrong", bad, N);
    }

    name = "allreduce float64 sum, 50000 elements";
    mpt_fill_input(din, BIG, UCOLL_FLOAT64, UCOLL_OP_SUM, r, 5);
    if (mpt_expect_st(ucoll_allreduce(w, din, dout, BIG, UCOLL_FLOAT64, UCOLL_OP_SUM), UCOLL_OK,
                      name, "call")) {
        /* the inputs are multiples of 1/4 small enough that every sum is exact */
        mpt_ref_range(dwant, dtmp, BIG, UCOLL_FLOAT64, UCOLL_OP_SUM, NULL, 0, p, 5);
        size_t bad = 0;
        for (size_t i = 0; i < BIG; i++)
            bad += dout[i] != dwant[i];
        mpt_check(bad == 0, name, "%zu of %d elements wrong", bad, BIG);
    }

    name = "bcast from every root";
    for (int root = 0; root < p; root++) {
        mpt_fill_input(want, N, UCOLL_INT64, UCOLL_OP_SUM, root, 6);
        for (size_t i = 0; i < N; i++)
            out[i] = r == root ? want[i] : 0;
        if (!mpt_expect_st(ucoll_bcast(w, out, N, UCOLL_INT64, root), UCOLL_OK, name, "call"))
            break;
        size_t bad = 0;
        for (size_t i = 0; i < N; i++)
            bad += out[i] != want[i];
        mpt_check(bad == 0, name, "root %d: %zu of %d elements wrong", root, bad, N);
    }

    /* barrier: rank k % p arrives 50 ms late each round; after the barrier, everybody's mark
     * of that round must be in the shared file */
    name = "barrier through a file in the shared directory";
    {
        char path[512];
        snprintf(path, sizeof(path), "%s/barrier", dir);
        int fd = open(path, O_RDWR | O_CREAT, 0600);
        if (mpt_check(fd >= 0, name, "open %s: %s", path, strerror(errno))) {
            for (int k = 0; k < 3; k++) {
                if (r == k % p) {
                    struct timespec d = {0, 50 * 1000 * 1000};
                    nanosleep(&d, NULL);
                }
                char b = 'x';
                if (pwrite(fd, &b, 1, (off_t)(k * p + r)) != 1)
                    mpt_check(0, name, "pwrite: %s", strerror(errno));
                if (!mpt_expect_st(ucoll_barrier(w), UCOLL_OK, name, "call"))
                    break;
                char seen[MAX_RANKS * 4];
                ssize_t got = pread(fd, seen, (size_t)((k + 1) * p), 0);
                int marks = 0;
                for (ssize_t i = 0; i < got; i++)
                    marks += seen[i] == 'x';
                mpt_check(marks == (k + 1) * p, name, "after barrier %d: %d of %d marks", k, marks,
                          (k + 1) * p);
            }
            close(fd);
        }
    }

    name = "nonblocking iallreduce + ibcast outstanding together";
    {
        int32_t a = 3 * r + 1, asum = 0;
        int64_t b[8];
        for (int i = 0; i < 8; i++)
            b[i] = r == 0 ? 1000 + i : -1;
        ucoll_request_t *ra = NULL, *rb = NULL;
        if (mpt_expect_st(ucoll_iallreduce(w, &a, &asum, 1, UCOLL_INT32, UCOLL_OP_SUM, &ra),
                          UCOLL_OK, name, "iallreduce") &&
            mpt_expect_st(ucoll_ibcast(w, b, 8, UCOLL_INT64, 0, &rb), UCOLL_OK, name, "ibcast")) {
            mpt_expect_st(ucoll_wait(rb), UCOLL_OK, name, "wait ibcast");
            mpt_expect_st(ucoll_wait(ra), UCOLL_OK, name, "wait iallreduce");
            mpt_check(asum == 3 * p * (p - 1) / 2 + p, name, "sum %d", (int)asum);
            int bad = 0;
            for (int i = 0; i < 8; i++)
                bad += b[i] != 1000 + i;
            mpt_check(bad == 0, name, "%d bcast elements wrong", bad);
            ucoll_request_free(ra);
            ucoll_request_free(rb);
        }
    }

    name = "persistent scan started twice with new input";
    {
        int64_t x[3], y[3];
        ucoll_request_t *req = NULL;
        if (mpt_expect_st(ucoll_scan_init(w, x, y, 3, UCOLL_INT64, UCOLL_OP_MAX, &req), UCOLL_OK,
                          name, "scan_init")) {
            for (int it = 0; it < 2; it++) {
                const uint64_t salt = 10 + (uint64_t)it;
                mpt_fill_input(x, 3, UCOLL_INT64, UCOLL_OP_MAX, r, salt);
                for (int i = 0; i < 3; i++)
                    y[i] = 0;
                if (!mpt_expect_st(ucoll_start(req), UCOLL_OK, name, "start") ||
                    !mpt_expect_st(ucoll_wait(req), UCOLL_OK, name, "wait"))
                    break;
                int64_t m[3], t[3];
                mpt_ref_range(m, t, 3, UCOLL_INT64, UCOLL_OP_MAX, NULL, 0, r + 1, salt);
                int bad = 0;
                for (int i = 0; i < 3; i++)
                    bad += y[i] != m[i];
                mpt_check(bad == 0, name, "start %d: %d elements wrong", it + 1, bad);
            }
            mpt_expect_st(ucoll_request_free(req), UCOLL_OK, name, "free");
        }
    }

    name = "split reversed, exscan on it, free";
    {
        ucoll_comm_t *c = NULL;
        if (mpt_expect_st(ucoll_comm_split(w, 1, -r, &c), UCOLL_OK, name, "split") &&
            mpt_check(ucoll_comm_size(c) == p && ucoll_comm_rank(c) == p - 1 - r, name,
                      "rank %d of %d, expected %d of %d", ucoll_comm_rank(c), ucoll_comm_size(c),
                      p - 1 - r, p)) {
            int64_t v = 1 + r, pre = -5, want = 0;
            for (int q = r + 1; q < p; q++) /* lower new ranks are higher world ranks */
                want += 1 + q;
            if (mpt_expect_st(ucoll_exscan(c, &v, &pre, 1, UCOLL_INT64, UCOLL_OP_SUM), UCOLL_OK,
                              name, "exscan"))
                mpt_check(r == p - 1 ? pre == -5 : pre == want, name, "got %lld expected %lld",
                          (long long)pre, (long long)(r == p - 1 ? -5 : want));
            mpt_expect_st(ucoll_comm_free(c), UCOLL_OK, name, "free");
        }
    }
}

static int rank_main(int rank, int size, int fd, double timeout_s, const char *dir)
{
    mpt_tally.rank = rank;
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    setenv("UCOLL_TIMEOUT", "60", 0); /* a hang becomes an error */

    oob_ctx_t ctx = {.fd = fd, .rank = rank, .size = size, .timeout_s = timeout_s};
    ucoll_oob_t oob = {oob_allgather, &ctx, rank, size};
    ucoll_comm_t *w = NULL;
    const char *name = "invalid ucoll_oob_t";

    ucoll_oob_t bad = oob;
    mpt_expect_st(ucoll_init_oob(NULL, &w), UCOLL_ERR_INVALID_ARG, name, "oob NULL");
    mpt_expect_st(ucoll_init_oob(&oob, NULL), UCOLL_ERR_INVALID_ARG, name, "world NULL");
    bad.size = 0;
    mpt_expect_st(ucoll_init_oob(&bad, &w), UCOLL_ERR_INVALID_ARG, name, "size 0");
    bad = oob;
    bad.rank = size;
    mpt_expect_st(ucoll_init_oob(&bad, &w), UCOLL_ERR_INVALID_ARG, name, "rank = size");
    bad.rank = -1;
    mpt_expect_st(ucoll_init_oob(&bad, &w), UCOLL_ERR_INVALID_ARG, name, "rank -1");
    bad = oob;
    bad.allgather = NULL;
    mpt_expect_st(ucoll_init_oob(&bad, &w), UCOLL_ERR_INVALID_ARG, name, "allgather NULL");
    mpt_check(ctx.calls == 0 && w == NULL, name, "the allgather was called %ld times, world %p",
              ctx.calls, (void *)w);

    name = "ucoll_init_oob with a failing allgather";
    ctx.fail_next = 1;
    mpt_expect_st(ucoll_init_oob(&oob, &w), UCOLL_ERR_BOOTSTRAP, name, "init");
    mpt_check(ctx.calls == 1 && w == NULL, name, "allgather calls %ld (expected 1), world %p",
              ctx.calls, (void *)w);

    name = "ucoll_init_oob";
    ucoll_status_t st = ucoll_init_oob(&oob, &w);
    if (!mpt_expect_st(st, UCOLL_OK, name, "init"))
        return 1;
    long calls_init = ctx.calls - 1;
    int r = ucoll_comm_rank(w), p = ucoll_comm_size(w);
    if (!mpt_check(p == size && r == rank, name,
                   "job size assertion: rank %d of %d, expected rank %d of %d", r, p, rank, size))
        return 1; /* no finalize: the ranks do not agree on the job */
    mpt_check(calls_init >= 1 && !ctx.bad_reply, name, "%ld allgather calls, bad reply %d",
              calls_init, ctx.bad_reply);
    ucoll_comm_t *again = NULL;
    mpt_expect_st(ucoll_init_oob(&oob, &again), UCOLL_ERR_STATE, name, "second ucoll_init_oob");
    mpt_expect_st(ucoll_init(&again), UCOLL_ERR_STATE, name, "ucoll_init after ucoll_init_oob");

    rank_collectives(w, r, p, dir);

    name = "ucoll_finalize";
    long calls_before = ctx.calls;
    mpt_expect_st(ucoll_finalize(w), UCOLL_OK, name, "finalize");
    mpt_check(ucoll_comm_size(w) == -1, name, "world size after finalize is %d",
              ucoll_comm_size(w));
    mpt_check(ctx.calls > calls_before, name, "finalize did not use the allgather (fence)");
    /* The header forbids only a second PMIx ucoll_init; a new OOB world after finalize is
     * either refused with UCOLL_ERR_STATE or a working world of the same ranks. */
    name = "ucoll_init_oob after ucoll_finalize";
    st = ucoll_init_oob(&oob, &again);
    mpt_check(st == UCOLL_OK || st == UCOLL_ERR_STATE, name, "status %d (%s)", (int)st,
              ucoll_strerror(st));
    if (st == UCOLL_OK) {
        int32_t one = 1, total = 0;
        mpt_check(ucoll_comm_size(again) == size && ucoll_comm_rank(again) == rank, name,
                  "rank %d of %d", ucoll_comm_rank(again), ucoll_comm_size(again));
        mpt_expect_st(ucoll_allreduce(again, &one, &total, 1, UCOLL_INT32, UCOLL_OP_SUM), UCOLL_OK,
                      name, "allreduce");
        mpt_check(total == size, name, "allreduce gave %d, expected %d", (int)total, size);
        mpt_expect_st(ucoll_finalize(again), UCOLL_OK, name, "second finalize");
        if (rank == 0)
            printf("note: ucoll_init_oob after ucoll_finalize gives a new world\n");
    }
    printf("oob_test rank %d: %ld checks, %ld failed, %ld allgather calls\n", rank,
           mpt_tally.checks, mpt_tally.fails, ctx.calls);
    fflush(stdout);
    close(fd);
    return mpt_tally.fails == 0 ? 0 : 1;
}

/* ---------------------------------------------------------------- the parent: hub */

typedef struct {
    int fd;
    pid_t pid;
    int open;
    int status; /* wait status */
    int reaped;
} child_t;

/* serves allgather rounds until every rank has closed its socket; returns the number of
 * rounds, or -1 after a protocol error or the deadline */
static long hub(child_t *ch, int n, double deadline, char *why, size_t whylen)
{
    long rounds = 0;
    char *data = NULL;
    size_t cap = 0;
    for (;;) {
        uint64_t len0 = 0;
        int got = 0, eof = 0, err = 0;
        for (int i = 0; i < n; i++) {
            if (!ch[i].open) {
                eof++;
                continue;
            }
            uint64_t len;
            int rc = read_full(ch[i].fd, &len, sizeof(len), deadline);
            if (rc == 1) {
                ch[i].open = 0;
                close(ch[i].fd);
                eof++;
                continue;
            }
            if (rc != 0 || len > ((uint64_t)1 << 30)) {
                snprintf(why, whylen, "round %ld: rank %d: %s", rounds, i,
                         rc ? "read failed or timed out" : "absurd length");
                err = 1;
                break;
            }
            if (got == 0)
                len0 = len;
            if (len != len0) {
                snprintf(why, whylen, "round %ld: rank %d sent %llu bytes, others %llu", rounds, i,
                         (unsigned long long)len, (unsigned long long)len0);
                err = 1;
                break;
            }
            if ((size_t)len * (size_t)n > cap) {
                cap = (size_t)len * (size_t)n;
                char *d = realloc(data, cap);
                if (d == NULL) {
                    snprintf(why, whylen, "out of memory");
                    err = 1;
                    break;
                }
                data = d;
            }
            if (read_full(ch[i].fd, data + (size_t)i * len, len, deadline) != 0) {
                snprintf(why, whylen, "round %ld: rank %d: payload read failed", rounds, i);
                err = 1;
                break;
            }
            got++;
        }
        if (!err && eof == n)
            break; /* everybody is done */
        if (!err && eof > 0) {
            snprintf(why, whylen, "round %ld: %d ranks closed their socket, %d joined", rounds, eof,
                     got);
            err = 1;
        }
        if (err) {
            uint64_t e = ERR_LEN;
            for (int i = 0; i < n; i++)
                if (ch[i].open)
                    write_full(ch[i].fd, &e, sizeof(e), now_s() + 1);
            free(data);
            return -1;
        }
        uint64_t total = len0 * (uint64_t)n;
        for (int i = 0; i < n; i++)
            if (write_full(ch[i].fd, &total, sizeof(total), deadline) != 0 ||
                write_full(ch[i].fd, data, (size_t)total, deadline) != 0) {
                snprintf(why, whylen, "round %ld: reply to rank %d failed", rounds, i);
                free(data);
                return -1;
            }
        rounds++;
    }
    free(data);
    return rounds;
}

int main(int argc, char **argv)
{
    int n = 0;
    double timeout_s = 120;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--ranks") == 0 && i + 1 < argc)
            n = atoi(argv[++i]);
        else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc)
            timeout_s = atof(argv[++i]);
        else {
            fprintf(stderr, "usage: oob_test --ranks N [--timeout SECONDS]\n");
            return 2;
        }
    }
    if (n < 1 || n > MAX_RANKS || timeout_s <= 0) {
        fprintf(stderr, "oob_test: --ranks N with 1 <= N <= %d is required\n", MAX_RANKS);
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    char dir[] = "/tmp/ucoll-oob-XXXXXX";
    if (mkdtemp(dir) == NULL) {
        printf("FAIL: mkdtemp: %s\n", strerror(errno));
        return 1;
    }
    printf("oob_test: forking %d ranks; allgather through the parent; shared directory %s\n", n,
           dir);

    child_t ch[MAX_RANKS];
    memset(ch, 0, sizeof(ch));
    const double deadline = now_s() + timeout_s;
    int forked = 0;
    for (int i = 0; i < n; i++) {
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
            printf("FAIL: socketpair: %s\n", strerror(errno));
            break;
        }
        fflush(stdout);
        pid_t pid = fork();
        if (pid < 0) {
            printf("FAIL: fork: %s\n", strerror(errno));
            close(sv[0]);
            close(sv[1]);
            break;
        }
        if (pid == 0) {
            for (int k = 0; k < i; k++)
                close(ch[k].fd);
            close(sv[0]);
            int rc = rank_main(i, n, sv[1], timeout_s, dir);
            fflush(stdout);
            _exit(rc);
        }
        close(sv[1]);
        ch[i].fd = sv[0];
        ch[i].pid = pid;
        ch[i].open = 1;
        forked++;
    }
    char why[256] = "";
    long rounds = -1;
    if (forked == n)
        rounds = hub(ch, n, deadline, why, sizeof(why));
    else
        snprintf(why, sizeof(why), "only %d of %d ranks started", forked, n);
    for (int i = 0; i < forked; i++)
        if (ch[i].open)
            close(ch[i].fd);

    /* reap the ranks; whoever is still there at the deadline (+5 s after an error) is killed */
    double reap_deadline = rounds < 0 ? now_s() + 5 : deadline;
    int left = forked;
    while (left > 0 && now_s() < reap_deadline) {
        for (int i = 0; i < forked; i++) {
            if (ch[i].reaped)
                continue;
            if (waitpid(ch[i].pid, &ch[i].status, WNOHANG) == ch[i].pid) {
                ch[i].reaped = 1;
                left--;
            }
        }
        if (left > 0) {
            struct timespec d = {0, 20 * 1000 * 1000};
            nanosleep(&d, NULL);
        }
    }
    int ok = rounds >= 0 && forked == n;
    if (!ok)
        printf("FAIL: the allgather hub: %s\n", why);
    char statuses[MAX_RANKS * 12] = "";
    for (int i = 0; i < forked; i++) {
        char s[32];
        if (!ch[i].reaped) {
            kill(ch[i].pid, SIGKILL);
            waitpid(ch[i].pid, &ch[i].status, 0);
            snprintf(s, sizeof(s), " killed");
            printf("FAIL: rank %d did not exit in time; killed\n", i);
            ok = 0;
        } else if (WIFEXITED(ch[i].status)) {
            snprintf(s, sizeof(s), " %d", WEXITSTATUS(ch[i].status));
            if (WEXITSTATUS(ch[i].status) != 0) {
                printf("FAIL: rank %d exited with status %d\n", i, WEXITSTATUS(ch[i].status));
                ok = 0;
            }
        } else {
            snprintf(s, sizeof(s), " sig%d",
                     WIFSIGNALED(ch[i].status) ? WTERMSIG(ch[i].status) : -1);
            printf("FAIL: rank %d died (signal %d)\n", i,
                   WIFSIGNALED(ch[i].status) ? WTERMSIG(ch[i].status) : -1);
            ok = 0;
        }
        strncat(statuses, s, sizeof(statuses) - strlen(statuses) - 1);
    }
    char path[600];
    snprintf(path, sizeof(path), "%s/barrier", dir);
    unlink(path);
    rmdir(dir);
    printf("oob_test ranks=%d: %ld allgather rounds through the parent, rank exit statuses:%s; "
           "verdict: %s\n",
           n, rounds, statuses, ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}
