/*
 * tests/mp/mp_api_test.c: multi-process test of ucoll's nonblocking (ucoll_i*), persistent
 * (*_init + ucoll_start) and communicator (ucoll_comm_split / ucoll_comm_free) API, written
 * against include/ucoll.h only. One ucoll_init per process.
 *
 * Every rank's input is a deterministic function of (kind, world rank, salt, index)
 * (mpt_fill_input), so each rank computes the exact expected result of every collective itself,
 * on any communicator, from the list of the communicator's members (their world ranks, in
 * new-rank order) that the test derives on its own from the color/key rules of the split.
 * Every result is compared exactly (the floating-point inputs make every sum exact). Guard bytes
 * behind every result, send buffers and exscan's rank-0 buffer are checked to be left untouched.
 *
 * Sections (on world and on split communicators: odd/even, reversed key order, color = rank%3
 * with tied keys, a split of a split, all tied keys, a communicator without world rank 0):
 *   nonblocking  every collective as ucoll_i*, completed by ucoll_wait or by ucoll_test polling;
 *                in place, reduce with recvbuf NULL off the root; ibarrier checked by a file
 *   persistent   every *_init collective, all requests started together three times with new
 *                input before every start, completed in changing orders
 *   concurrent   64 mixed nonblocking collectives outstanding at once on two communicators
 *                (also two new ones with equal sequence numbers), a blocking collective issued
 *                in between, completed by ucoll_wait in a per-rank shuffled order, by
 *                ucoll_test polling, or both
 *   progress     a root's ibcast moved only by a blocking call; a split while a collective is
 *                outstanding; a persistent request in flight across blocking calls
 *   split        sizes, ranks and members of the new communicators; color < 0 gives NULL;
 *                ucoll_comm_free and use after free; 5000 split/free cycles
 *   misuse       ucoll_start / ucoll_request_free / ucoll_comm_free with an active request give
 *                UCOLL_ERR_STATE; NULL and invalid arguments; a request outliving its comm
 *
 * Usage: mp_api_test --expect-size N [--big COUNT] [--split-cycles N (5000)] [--verbose]
 * Prints FAIL lines on failure; exit status 0 only if every check passed on every rank. Rank 0
 * ends with "mp_api_test np=N: C checks on all ranks, P passed, F failed, S skipped; verdict: ...".
 */
#define _POSIX_C_SOURCE 200809L

#include <ucoll.h>

#include "mp_util.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define GUARD 32      /* bytes behind every result buffer that must stay untouched */
#define SENTINEL 0x5C /* their value, and the value of unwritten result buffers */
#define MAX_FAIL_PRINTS 40
#define POLL_TIMEOUT_S 90.0
#define NCONC 64
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* ---------------------------------------------------------------- kinds: (dtype, op) pairs */

enum {
    K_I32_SUM,
    K_I64_MAX,
    K_F64_SUM,
    K_U8_BXOR,
    K_I16_MIN,
    K_F32_MAX,
    K_U32_BAND,
    K_I8_LOR,
    K_U16_PROD,
    K_I64_SUM,
    K_MAT, /* user op, not commutative: 2x2 matrix product over Z/2^16 */
    NKINDS
};
#define NBUILTIN K_MAT

static struct {
    const char *name;
    ucoll_dtype_t dt;
    ucoll_op_t op; /* K_MAT's handle is filled in after ucoll_op_create */
} kinds[NKINDS] = {
    {"int32-sum", UCOLL_INT32, UCOLL_OP_SUM},     {"int64-max", UCOLL_INT64, UCOLL_OP_MAX},
    {"float64-sum", UCOLL_FLOAT64, UCOLL_OP_SUM}, {"uint8-bxor", UCOLL_UINT8, UCOLL_OP_BXOR},
    {"int16-min", UCOLL_INT16, UCOLL_OP_MIN},     {"float32-max", UCOLL_FLOAT32, UCOLL_OP_MAX},
    {"uint32-band", UCOLL_UINT32, UCOLL_OP_BAND}, {"int8-lor", UCOLL_INT8, UCOLL_OP_LOR},
    {"uint16-prod", UCOLL_UINT16, UCOLL_OP_PROD}, {"int64-sum", UCOLL_INT64, UCOLL_OP_SUM},
    {"uint64-user-matrix", UCOLL_UINT64, -1},
};

/* 2x2 matrices over Z/2^16 packed a | b << 16 | c << 32 | d << 48; returns x * y */
static uint64_t mat_mul(uint64_t x, uint64_t y)
{
    uint32_t xa = x & 0xffff, xb = (x >> 16) & 0xffff, xc = (x >> 32) & 0xffff, xd = x >> 48;
    uint32_t ya = y & 0xffff, yb = (y >> 16) & 0xffff, yc = (y >> 32) & 0xffff, yd = y >> 48;
    uint64_t a = (xa * ya + xb * yc) & 0xffff, b = (xa * yb + xb * yd) & 0xffff;
    uint64_t c = (xc * ya + xd * yc) & 0xffff, d = (xc * yb + xd * yd) & 0xffff;
    return a | b << 16 | c << 32 | d << 48;
}

static const int mat_arg_tag = 0x6d61;
static volatile int mat_bad_calls; /* calls with a wrong dtype or arg */

/* inout = in * inout: `in` holds the lower ranks, so products keep rank order */
static void mat_user_fn(const void *in, void *inout, size_t count, ucoll_dtype_t dtype, void *arg)
{
    if (dtype != UCOLL_UINT64 || arg != (void *)&mat_arg_tag) {
        mat_bad_calls++;
        return;
    }
    const uint64_t *x = in;
    uint64_t *y = inout;
    for (size_t i = 0; i < count; i++)
        y[i] = mat_mul(x[i], y[i]);
}

/* the input of world rank `wrank` for `kind` under `salt`, elements [0, n); the matrices
 * are any 64 bits */
static void gen_input(int kind, int wrank, unsigned salt, void *buf, size_t n)
{
    mpt_fill_input(buf, n, kinds[kind].dt, kind == K_MAT ? -1 : kinds[kind].op, wrank,
                   (uint64_t)kind << 32 | salt);
}

/* acc[i] = acc[i] (+) x[i], acc holding lower ranks; plain C, independent of the library */
static void ref_combine(int kind, void *acc, const void *x, size_t n)
{
    if (kind == K_MAT) {
        for (size_t i = 0; i < n; i++)
            ((uint64_t *)acc)[i] = mat_mul(((uint64_t *)acc)[i], ((const uint64_t *)x)[i]);
        return;
    }
    mpt_ref_combine(kinds[kind].dt, kinds[kind].op, acc, x, n);
}

/* bcast payload of `root_wrank` under `salt` */
static void gen_bytes(int root_wrank, unsigned salt, unsigned char *buf, size_t len)
{
    mpt_fill_input(buf, len, UCOLL_UINT8, UCOLL_OP_BXOR, root_wrank, (uint64_t)NKINDS << 32 | salt);
}

/* ---------------------------------------------------------------- checks and reporting */

static int g_wrank = -1, g_wsize;
static long g_skips; /* checks and failures: mpt_tally */
static int g_verbose;
static size_t g_big = 20000;
static int g_split_cycles = 5000;
static unsigned char *g_ref, *g_tmp; /* scratch for references, g_big elements of 8 bytes */

/* errors after which the job cannot go on: report, leave without finalize */
static void fatal_if(ucoll_status_t st, const char *name)
{
    if (st == UCOLL_ERR_TIMED_OUT || st == UCOLL_ERR_PEER_FAILED || st == UCOLL_ERR_TRANSPORT) {
        printf("FATAL rank %d: %s: status %d (%s); aborting this process\n", g_wrank, name, (int)st,
               ucoll_strerror(st));
        fflush(stdout);
        exit(3);
    }
}

/* got against want, n elements of `kind`, exactly (the inputs make every result exact) */
static int check_elems(const char *name, const char *what, int kind, const void *got,
                       const void *want, size_t n)
{
    ucoll_dtype_t dt = kinds[kind].dt;
    size_t es = mpt_dtype_size(dt), bad = 0, first = 0;
    for (size_t i = 0; i < n; i++) {
        const unsigned char *g = (const unsigned char *)got + i * es;
        const unsigned char *w = (const unsigned char *)want + i * es;
        if (memcmp(g, w, es) != 0 && bad++ == 0)
            first = i;
    }
    char gs[64] = "", ws[64] = "";
    if (bad) {
        fmt_elem(dt, (const unsigned char *)got + first * es, gs, sizeof(gs));
        fmt_elem(dt, (const unsigned char *)want + first * es, ws, sizeof(ws));
    }
    return mpt_check(bad == 0, name,
                     "%s: %zu of %zu elements wrong, first [%zu]: got %s expected %s", what, bad, n,
                     first, gs, ws);
}

static int check_untouched(const char *name, const char *what, const void *buf, size_t len)
{
    const unsigned char *b = buf;
    size_t i = 0;
    while (i < len && b[i] == SENTINEL)
        i++;
    return mpt_check(i == len, name, "%s: byte %zu of %zu is 0x%02x, expected untouched 0x%02x",
                     what, i, len, i < len ? b[i] : 0, SENTINEL);
}

/* ---------------------------------------------------------------- communicators under test */

typedef struct {
    ucoll_comm_t *comm;
    char label[32];
    int rank, size;
    int *members; /* new rank -> world rank, as the test expects it */
} tcomm_t;

/* acc = V_lo (+) ... (+) V_hi over the members of tc (new ranks lo..hi) */
static void ref_range(const tcomm_t *tc, int kind, unsigned salt, int lo, int hi, void *acc,
                      size_t n)
{
    gen_input(kind, tc->members[lo], salt, acc, n);
    for (int r = lo + 1; r <= hi; r++) {
        gen_input(kind, tc->members[r], salt, g_tmp, n);
        ref_combine(kind, acc, g_tmp, n);
    }
}

/* ---------------------------------------------------------------- one collective ("job") */

typedef struct {
    ucoll_coll_t coll;
    int kind; /* bcast: selects the dtype */
    size_t count;
    int root;
    int in_place;
    int null_recv; /* reduce: non-root ranks pass recvbuf NULL (it is not significant there) */
    unsigned salt;
    unsigned char *send, *recv; /* send: count elements; recv: count elements + GUARD */
    ucoll_request_t *req;
    int done;
    ucoll_status_t status;
    const tcomm_t *tc;
} job_t;

static void job_name(const job_t *j, const char *form, char *out, size_t len)
{
    char extra[48] = "";
    if (j->coll == UCOLL_COLL_BARRIER) {
        snprintf(out, len, "%s barrier on %s (size %d)", form, j->tc->label, j->tc->size);
        return;
    }
    if (j->coll == UCOLL_COLL_REDUCE || j->coll == UCOLL_COLL_BCAST)
        snprintf(extra, sizeof(extra), " root=%d", j->root);
    snprintf(out, len, "%s %s on %s (size %d): %s n=%zu%s%s%s salt=%u", form,
             mpt_coll_name(j->coll), j->tc->label, j->tc->size, kinds[j->kind].name, j->count,
             extra, j->in_place ? " in-place" : "", j->null_recv ? " recvbuf-NULL-off-root" : "",
             j->salt);
}

static size_t job_es(const job_t *j)
{
    return mpt_dtype_size(kinds[j->kind].dt);
}

static int job_setup(job_t *j, const tcomm_t *tc, ucoll_coll_t coll, int kind, size_t count,
                     int root, int in_place)
{
    memset(j, 0, sizeof(*j));
    j->tc = tc;
    j->coll = coll;
    j->kind = kind;
    j->count = count;
    j->root = root;
    j->in_place = in_place && coll != UCOLL_COLL_BCAST && coll != UCOLL_COLL_BARRIER;
    size_t bytes = count * job_es(j);
    j->send = malloc(bytes + 8);
    j->recv = malloc(bytes + GUARD);
    if (j->send == NULL || j->recv == NULL) {
        fprintf(stderr, "mp_api_test: out of memory\n");
        exit(1);
    }
    return 0;
}

static void job_release(job_t *j)
{
    free(j->send);
    free(j->recv);
    j->send = j->recv = NULL;
}

/* the reduce root passes UCOLL_IN_PLACE, other reduce ranks a send buffer */
static int job_uses_in_place(const job_t *j)
{
    return j->in_place && (j->coll != UCOLL_COLL_REDUCE || j->tc->rank == j->root);
}

/* writes this rank's input for j->salt */
static void job_fill(job_t *j)
{
    size_t bytes = j->count * job_es(j);
    memset(j->recv, SENTINEL, bytes + GUARD);
    memset(j->send, SENTINEL, bytes + 8);
    j->done = 0;
    j->status = UCOLL_INPROGRESS;
    switch (j->coll) {
    case UCOLL_COLL_BARRIER:
        break;
    case UCOLL_COLL_BCAST:
        if (j->tc->rank == j->root)
            gen_bytes(j->tc->members[j->root], j->salt, j->recv, bytes);
        break;
    default:
        gen_input(j->kind, j->tc->members[j->tc->rank], j->salt,
                  job_uses_in_place(j) ? j->recv : j->send, j->count);
        break;
    }
}

/* the recvbuf passed to the library */
static void *job_recvbuf(const job_t *j)
{
    if (j->null_recv && j->coll == UCOLL_COLL_REDUCE && j->tc->rank != j->root)
        return NULL;
    return j->recv;
}

static const void *job_sendbuf(const job_t *j)
{
    return job_uses_in_place(j) ? UCOLL_IN_PLACE : (const void *)j->send;
}

static ucoll_status_t job_issue(job_t *j)
{
    return mpt_call(MPT_NONBLOCKING, j->coll, j->tc->comm, job_sendbuf(j), job_recvbuf(j), j->count,
                    kinds[j->kind].dt, kinds[j->kind].op, j->root, &j->req);
}

/* no persistent barrier in the API */
static ucoll_status_t job_init_persistent(job_t *j)
{
    if (j->coll == UCOLL_COLL_BARRIER)
        return UCOLL_ERR_INVALID_ARG;
    return mpt_call(MPT_PERSISTENT, j->coll, j->tc->comm, job_sendbuf(j), job_recvbuf(j), j->count,
                    kinds[j->kind].dt, kinds[j->kind].op, j->root, &j->req);
}

/* checks a completed job's buffers */
static void job_check(const job_t *j, const char *name)
{
    const tcomm_t *tc = j->tc;
    const int r = tc->rank, p = tc->size;
    const size_t n = j->count, bytes = n * job_es(j);

    if (j->coll == UCOLL_COLL_BARRIER)
        return;
    check_untouched(name, "guard bytes behind the result", j->recv + bytes, GUARD);
    if (j->coll == UCOLL_COLL_BCAST) {
        gen_bytes(tc->members[j->root], j->salt, g_ref, bytes);
        mpt_check(memcmp(j->recv, g_ref, bytes) == 0, name, "bcast data differs from the root's");
        return;
    }
    /* the send buffer (when used) still holds the input */
    if (!job_uses_in_place(j)) {
        gen_input(j->kind, tc->members[r], j->salt, g_ref, n);
        mpt_check(memcmp(j->send, g_ref, bytes) == 0, name, "send buffer was modified");
    }
    switch (j->coll) {
    case UCOLL_COLL_EXSCAN:
        if (r == 0) {
            if (job_uses_in_place(j)) {
                gen_input(j->kind, tc->members[0], j->salt, g_ref, n);
                mpt_check(memcmp(j->recv, g_ref, bytes) == 0, name,
                          "rank 0's in-place buffer was modified");
            } else {
                check_untouched(name, "rank 0's recvbuf", j->recv, bytes);
            }
        } else {
            ref_range(tc, j->kind, j->salt, 0, r - 1, g_ref, n);
            check_elems(name, "exscan result", j->kind, j->recv, g_ref, n);
        }
        break;
    case UCOLL_COLL_SCAN:
        ref_range(tc, j->kind, j->salt, 0, r, g_ref, n);
        check_elems(name, "scan result", j->kind, j->recv, g_ref, n);
        break;
    case UCOLL_COLL_REDUCE:
        if (r == j->root) {
            ref_range(tc, j->kind, j->salt, 0, p - 1, g_ref, n);
            check_elems(name, "reduce result at the root", j->kind, j->recv, g_ref, n);
        } else if (j->null_recv) {
            check_untouched(name, "non-root recv buffer (NULL was passed)", j->recv, bytes);
        }
        break;
    case UCOLL_COLL_ALLREDUCE:
        ref_range(tc, j->kind, j->salt, 0, p - 1, g_ref, n);
        check_elems(name, "allreduce result", j->kind, j->recv, g_ref, n);
        break;
    default:
        break;
    }
}

/* completion status of a job: OK expected */
static void job_completed(job_t *j, ucoll_status_t st, const char *form)
{
    char name[256];
    job_name(j, form, name, sizeof(name));
    j->done = 1;
    j->status = st;
    if (mpt_expect_st(st, UCOLL_OK, name, "completion"))
        job_check(j, name);
    if (g_verbose && g_wrank == 0)
        printf("done %s\n", name);
}

/* completes jobs[order[k]] by ucoll_wait, k = 0..n-1 */
static void complete_by_wait(job_t *jobs, const int *order, int n, const char *form)
{
    for (int k = 0; k < n; k++) {
        job_t *j = &jobs[order ? order[k] : k];
        if (j->done)
            continue;
        job_completed(j, ucoll_wait(j->req), form);
    }
}

/* completes every job by ucoll_test polling (round robin), with a deadline */
static void complete_by_test(job_t *jobs, int n, const char *form)
{
    double deadline = now_s() + POLL_TIMEOUT_S;
    int left;
    long polls = 0;
    do {
        left = 0;
        for (int k = 0; k < n; k++) {
            job_t *j = &jobs[k];
            if (j->done)
                continue;
            ucoll_status_t st = ucoll_test(j->req);
            polls++;
            if (st == UCOLL_INPROGRESS)
                left++;
            else
                job_completed(j, st, form);
        }
        if (left > 0 && now_s() > deadline) {
            printf("FATAL rank %d: %s: %d of %d requests still in progress after %.0f s of "
                   "ucoll_test polling (%ld polls)\n",
                   g_wrank, form, left, n, POLL_TIMEOUT_S, polls);
            fflush(stdout);
            exit(3);
        }
    } while (left > 0);
}

static void free_requests(job_t *jobs, int n, const char *form)
{
    for (int k = 0; k < n; k++) {
        if (jobs[k].req == NULL)
            continue;
        char name[256];
        job_name(&jobs[k], form, name, sizeof(name));
        mpt_expect_st(ucoll_request_free(jobs[k].req), UCOLL_OK, name, "ucoll_request_free");
        jobs[k].req = NULL;
    }
}

/* deterministic pseudo-random numbers (identical on every rank for the same seed) */
static uint64_t rng_next(uint64_t *s)
{
    *s = mpt_mix64(*s);
    return *s;
}

static void shuffle(int *a, int n, uint64_t seed)
{
    for (int i = 0; i < n; i++)
        a[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int k = (int)(rng_next(&seed) % (uint64_t)(i + 1));
        int t = a[i];
        a[i] = a[k];
        a[k] = t;
    }
}

/* ---------------------------------------------------------------- the set of collectives */

/* every collective in several shapes; identical on every rank of tc */
static int build_all(const tcomm_t *tc, job_t *jobs, int max, int with_barrier)
{
    const size_t counts[] = {0, 1, 7, 1000, g_big};
    const int p = tc->size;
    const int roots[3] = {0, p - 1, p / 2};
    int n = 0;
    for (int coll = UCOLL_COLL_EXSCAN; coll <= UCOLL_COLL_ALLREDUCE; coll++)
        for (size_t ci = 0; ci < NELEM(counts); ci++) {
            int k1 = (int)((ci * 3 + (size_t)coll * 2) % NBUILTIN);
            int root = roots[(ci + (size_t)coll) % 3];
            if (n + 2 > max)
                return n;
            job_setup(&jobs[n++], tc, (ucoll_coll_t)coll, k1, counts[ci], root, ci % 2 == 1);
            job_setup(&jobs[n++], tc, (ucoll_coll_t)coll, K_MAT, counts[ci], root, ci == 2);
        }
    for (size_t ci = 0; ci < NELEM(counts); ci++)
        for (int rs = 0; rs < 2 && n < max; rs++) {
            int kind = (int)((ci * 5 + (size_t)rs) % NBUILTIN);
            job_setup(&jobs[n++], tc, UCOLL_COLL_BCAST, kind, counts[ci], roots[(ci + 2 * rs) % 3],
                      0);
        }
    /* reduce with recvbuf NULL at non-root ranks, small and large (another algorithm) */
    for (size_t ci = 2; ci < NELEM(counts) && n < max; ci += 2) {
        job_setup(&jobs[n], tc, UCOLL_COLL_REDUCE, K_I64_SUM, counts[ci], roots[ci % 3], 0);
        jobs[n++].null_recv = 1;
    }
    if (with_barrier && n < max)
        job_setup(&jobs[n++], tc, UCOLL_COLL_BARRIER, 0, 0, 0, 0);
    return n;
}

/* ---------------------------------------------------------------- barrier through a file */

/* A file shared by the members of tc (same host): every rank appends one byte before the
 * k-th ibarrier, and after it the file must hold at least (k+1)*size bytes (every rank has
 * arrived) and fewer than (k+2)*size. One rank per round arrives 30 ms late. */
static void test_ibarrier_file(const tcomm_t *tc)
{
    char path[128];
    memset(path, 0, sizeof(path));
    char name[160];
    snprintf(name, sizeof(name), "ibarrier on %s (size %d)", tc->label, tc->size);
    int fd = -1;
    if (tc->rank == 0) {
        snprintf(path, sizeof(path), "/tmp/ucoll-mpapi-%d-XXXXXX", (int)getpid());
        fd = mkstemp(path);
        if (fd < 0)
            path[0] = '\0';
    }
    if (!mpt_expect_st(ucoll_bcast(tc->comm, path, sizeof(path), UCOLL_UINT8, 0), UCOLL_OK, name,
                       "bcast of the file name"))
        return;
    if (tc->rank != 0 && path[0] != '\0')
        fd = open(path, O_RDWR);
    int32_t mine = fd >= 0, all = 0;
    if (!mpt_expect_st(ucoll_allreduce(tc->comm, &mine, &all, 1, UCOLL_INT32, UCOLL_OP_LAND),
                       UCOLL_OK, name, "allreduce of file access"))
        return;
    if (all != 1) {
        if (tc->rank == 0)
            printf("note: %s: no shared file (ranks on several hosts?); skipped\n", name);
        g_skips++;
    } else {
        for (int k = 0; k < 4; k++) {
            if (tc->rank == k % tc->size) {
                struct timespec d = {0, 30 * 1000 * 1000};
                nanosleep(&d, NULL);
            }
            char b = 'x';
            if (pwrite(fd, &b, 1, (off_t)(k * tc->size + tc->rank)) != 1)
                mpt_fail(name, "pwrite: %s", strerror(errno));
            ucoll_request_t *req = NULL;
            if (!mpt_expect_st(ucoll_ibarrier(tc->comm, &req), UCOLL_OK, name, "ucoll_ibarrier"))
                break;
            ucoll_status_t st;
            if (k % 2 == 0) {
                st = ucoll_wait(req);
            } else {
                double deadline = now_s() + POLL_TIMEOUT_S;
                while ((st = ucoll_test(req)) == UCOLL_INPROGRESS && now_s() < deadline)
                    ;
            }
            mpt_expect_st(st, UCOLL_OK, name, k % 2 ? "ucoll_test" : "ucoll_wait");
            /* count the bytes written so far (holes read as 0) */
            unsigned char seen[4096];
            size_t want = (size_t)(k + 1) * (size_t)tc->size, cnt = 0;
            size_t upto = (size_t)(k + 2) * (size_t)tc->size;
            if (upto > sizeof(seen))
                upto = sizeof(seen);
            ssize_t got = pread(fd, seen, upto, 0);
            for (ssize_t i = 0; i < got; i++)
                cnt += seen[i] == 'x';
            size_t low = 0;
            for (size_t i = 0; i < want && (ssize_t)i < got; i++)
                low += seen[i] == 'x';
            mpt_check(low == want && cnt < upto, name,
                      "after barrier %d: %zu of the %zu arrivals due are in the file (%zu in all)",
                      k, low, want, cnt);
            mpt_expect_st(ucoll_request_free(req), UCOLL_OK, name, "ucoll_request_free");
        }
    }
    ucoll_barrier(tc->comm);
    if (fd >= 0)
        close(fd);
    if (tc->rank == 0 && path[0] != '\0')
        unlink(path);
}

/* ---------------------------------------------------------------- sections */

/* every collective as ucoll_i*, one at a time: odd ones by ucoll_wait, even by ucoll_test */
static void test_nonblocking(const tcomm_t *tc, unsigned salt)
{
    job_t jobs[64];
    int n = build_all(tc, jobs, 64, 1);
    for (int k = 0; k < n; k++) {
        job_t *j = &jobs[k];
        char name[256];
        j->salt = salt + (unsigned)k;
        job_fill(j);
        job_name(j, "nonblocking", name, sizeof(name));
        if (!mpt_expect_st(job_issue(j), UCOLL_OK, name, "issue")) {
            j->req = NULL;
            continue;
        }
        if (k % 2)
            complete_by_wait(j, NULL, 1, "nonblocking");
        else
            complete_by_test(j, 1, "nonblocking");
        /* a completed request stays complete */
        mpt_expect_st(ucoll_test(j->req), UCOLL_OK, name, "ucoll_test after completion");
        mpt_expect_st(ucoll_wait(j->req), UCOLL_OK, name, "ucoll_wait after completion");
        free_requests(j, 1, "nonblocking");
    }
    for (int k = 0; k < n; k++)
        job_release(&jobs[k]);
    test_ibarrier_file(tc);
}

/* every persistent collective, all started together 3 times with new input each time */
static void test_persistent(const tcomm_t *tc, unsigned salt)
{
    job_t jobs[64];
    int n = build_all(tc, jobs, 64, 0);
    int order[64];
    for (int k = 0; k < n; k++) {
        char name[256];
        jobs[k].salt = salt;
        job_fill(&jobs[k]); /* the buffers hold data at init; new data comes before starts */
        job_name(&jobs[k], "persistent", name, sizeof(name));
        if (!mpt_expect_st(job_init_persistent(&jobs[k]), UCOLL_OK, name, "*_init"))
            jobs[k].req = NULL;
        /* an inactive persistent request tests complete */
        else
            mpt_expect_st(ucoll_test(jobs[k].req), UCOLL_OK, name, "ucoll_test before any start");
    }
    for (int it = 0; it < 3; it++) {
        for (int k = 0; k < n; k++) {
            if (jobs[k].req == NULL)
                continue;
            jobs[k].salt = salt + 1000u * (unsigned)(it + 1) + (unsigned)k;
            job_fill(&jobs[k]);
        }
        for (int k = 0; k < n; k++) {
            if (jobs[k].req == NULL) {
                jobs[k].done = 1;
                continue;
            }
            char name[256];
            job_name(&jobs[k], "persistent", name, sizeof(name));
            if (!mpt_expect_st(ucoll_start(jobs[k].req), UCOLL_OK, name, "ucoll_start"))
                jobs[k].done = 1;
        }
        if (it == 0) {
            complete_by_wait(jobs, NULL, n, "persistent (wait in order)");
        } else if (it == 1) {
            for (int k = 0; k < n; k++)
                order[k] = n - 1 - k;
            complete_by_wait(jobs, order, n, "persistent (wait in reverse)");
        } else {
            complete_by_test(jobs, n, "persistent (test polling)");
        }
    }
    free_requests(jobs, n, "persistent");
    for (int k = 0; k < n; k++)
        job_release(&jobs[k]);
}

/* NCONC mixed nonblocking collectives on two communicators at once; `mode` 0: ucoll_wait in a
 * per-rank shuffled order, 1: ucoll_test polling, 2: half by polling, the rest by wait */
static void test_concurrent(const tcomm_t *a, const tcomm_t *b, int mode, unsigned salt)
{
    static const ucoll_coll_t colls[] = {UCOLL_COLL_EXSCAN, UCOLL_COLL_SCAN,
                                         UCOLL_COLL_REDUCE, UCOLL_COLL_ALLREDUCE,
                                         UCOLL_COLL_BCAST,  UCOLL_COLL_BARRIER};
    static const size_t counts[] = {1, 3, 64, 1000, 9000};
    job_t jobs[NCONC];
    uint64_t seed = 0xC0FFEEULL + (uint64_t)mode; /* the same on every rank */
    const char *form = mode == 0   ? "concurrent (shuffled wait)"
                       : mode == 1 ? "concurrent (test polling)"
                                   : "concurrent (polling + wait)";
    for (int k = 0; k < NCONC; k++) {
        const tcomm_t *tc = rng_next(&seed) % 2 ? b : a;
        ucoll_coll_t coll = colls[k % NELEM(colls)];
        int kind = (int)(rng_next(&seed) % NKINDS);
        size_t count = counts[rng_next(&seed) % NELEM(counts)];
        int root = (int)(rng_next(&seed) % (uint64_t)tc->size);
        int in_place = rng_next(&seed) % 3 == 0;
        job_setup(&jobs[k], tc, coll, kind, count, root, in_place);
        jobs[k].salt = salt + (unsigned)k;
        job_fill(&jobs[k]);
    }
    for (int k = 0; k < NCONC; k++) {
        char name[256];
        job_name(&jobs[k], form, name, sizeof(name));
        if (!mpt_expect_st(job_issue(&jobs[k]), UCOLL_OK, name, "issue")) {
            jobs[k].req = NULL;
            jobs[k].done = 1;
        }
        if (k == NCONC / 2) {
            /* blocking collectives among the outstanding ones must not match their messages */
            const tcomm_t *tcs[2] = {a, b};
            for (int t = 0; t < 2; t++) {
                int64_t v = 1000 + tcs[t]->members[tcs[t]->rank], sum = -1, want = 0;
                for (int r = 0; r < tcs[t]->size; r++)
                    want += 1000 + tcs[t]->members[r];
                char bn[160];
                snprintf(bn, sizeof(bn), "%s: blocking allreduce on %s amid outstanding", form,
                         tcs[t]->label);
                if (mpt_expect_st(
                        ucoll_allreduce(tcs[t]->comm, &v, &sum, 1, UCOLL_INT64, UCOLL_OP_SUM),
                        UCOLL_OK, bn, "ucoll_allreduce"))
                    mpt_check(sum == want, bn, "got %lld expected %lld", (long long)sum,
                              (long long)want);
            }
        }
    }
    int order[NCONC];
    shuffle(order, NCONC, 0xABCDULL * (uint64_t)(g_wrank + 1) + (uint64_t)mode);
    if (mode == 0) {
        complete_by_wait(jobs, order, NCONC, form);
    } else if (mode == 1) {
        complete_by_test(jobs, NCONC, form);
    } else {
        complete_by_test(jobs, NCONC / 2, form);
        complete_by_wait(jobs, order, NCONC, form);
    }
    free_requests(jobs, NCONC, form);
    for (int k = 0; k < NCONC; k++)
        job_release(&jobs[k]);
}

/* a few quick collectives (blocking, nonblocking) on a communicator */
static void test_quick(const tcomm_t *tc, unsigned salt)
{
    job_t jobs[4];
    job_setup(&jobs[0], tc, UCOLL_COLL_SCAN, K_MAT, 33, 0, 0);
    job_setup(&jobs[1], tc, UCOLL_COLL_EXSCAN, K_I32_SUM, 1000, 0, 1);
    job_setup(&jobs[2], tc, UCOLL_COLL_REDUCE, K_MAT, 5, tc->size - 1, 0);
    job_setup(&jobs[3], tc, UCOLL_COLL_BCAST, K_I16_MIN, 77, tc->size / 2, 0);
    for (int k = 0; k < 4; k++) {
        jobs[k].salt = salt + (unsigned)k;
        job_fill(&jobs[k]);
        char name[256];
        job_name(&jobs[k], "nonblocking", name, sizeof(name));
        if (!mpt_expect_st(job_issue(&jobs[k]), UCOLL_OK, name, "issue")) {
            jobs[k].req = NULL;
            jobs[k].done = 1;
        }
    }
    int order[4] = {3, 1, 2, 0};
    complete_by_wait(jobs, order, 4, "nonblocking");
    free_requests(jobs, 4, "nonblocking");
    for (int k = 0; k < 4; k++)
        job_release(&jobs[k]);
}

/* ---------------------------------------------------------------- split */

typedef enum {
    SPLIT_ODD_EVEN,
    SPLIT_REVERSED,
    SPLIT_MOD3_TIES,
    SPLIT_NO_RANK0,
    SPLIT_NONE,
    SPLIT_DUP
} rule_t;

static int rule_color(rule_t rule, int prank)
{
    switch (rule) {
    case SPLIT_ODD_EVEN:
        return prank % 2;
    case SPLIT_REVERSED:
        return 7;
    case SPLIT_MOD3_TIES:
        return prank % 3;
    case SPLIT_NO_RANK0:
        return prank == 0 ? -1 : 3;
    case SPLIT_NONE:
        return prank % 2 ? -1 : -1000;
    case SPLIT_DUP:
        return 0;
    }
    return -1;
}

static int rule_key(rule_t rule, int prank)
{
    switch (rule) {
    case SPLIT_REVERSED:
        return -prank;
    case SPLIT_MOD3_TIES:
        return (prank / 3) % 2 ? 5 : -2; /* ties broken by parent rank */
    case SPLIT_NO_RANK0:
        return 100 - prank % 2; /* odd ones first, ties inside */
    case SPLIT_DUP:
        return 42; /* all tied: parent order */
    default:
        return prank;
    }
}

/* the expected new communicator (members by new rank, as world ranks) of the calling rank */
static int expect_split(const tcomm_t *parent, rule_t rule, int *members, int *newrank)
{
    int color = rule_color(rule, parent->rank), n = 0;
    if (color < 0)
        return 0;
    int prs[256];
    for (int q = 0; q < parent->size; q++)
        if (rule_color(rule, q) == color)
            prs[n++] = q;
    /* insertion sort by (key, parent rank) */
    for (int i = 1; i < n; i++)
        for (int k = i; k > 0; k--) {
            int a = prs[k - 1], b = prs[k];
            int ka = rule_key(rule, a), kb = rule_key(rule, b);
            if (ka < kb || (ka == kb && a < b))
                break;
            prs[k - 1] = b;
            prs[k] = a;
        }
    for (int i = 0; i < n; i++) {
        members[i] = parent->members[prs[i]];
        if (prs[i] == parent->rank)
            *newrank = i;
    }
    return n;
}

/* splits parent by rule into tc and checks size, rank, NULL for color < 0 and the members
 * (by an allreduce of world ranks on the new communicator); returns 1 if tc->comm is usable */
/* do_split's result when there is no communicator: tc holds nothing to free */
static int no_split(tcomm_t *tc)
{
    free(tc->members);
    tc->members = NULL;
    return 0;
}

static int do_split(const tcomm_t *parent, rule_t rule, const char *label, tcomm_t *tc)
{
    char name[160];
    snprintf(name, sizeof(name), "split %s of %s", label, parent->label);
    memset(tc, 0, sizeof(*tc));
    snprintf(tc->label, sizeof(tc->label), "%s", label);
    tc->members = calloc((size_t)parent->size, sizeof(int));
    int newrank = -1;
    int n = expect_split(parent, rule, tc->members, &newrank);
    static int not_a_comm;
    ucoll_comm_t *nc = (ucoll_comm_t *)(void *)&not_a_comm; /* must be overwritten */
    ucoll_status_t st = ucoll_comm_split(parent->comm, rule_color(rule, parent->rank),
                                         rule_key(rule, parent->rank), &nc);
    if (!mpt_expect_st(st, UCOLL_OK, name, "ucoll_comm_split"))
        return no_split(tc);
    if (n == 0) {
        mpt_check(nc == NULL, name, "color < 0 gave newcomm %p, expected NULL", (void *)nc);
        return no_split(tc);
    }
    if (!mpt_check(nc != NULL && nc != (ucoll_comm_t *)(void *)&not_a_comm, name,
                   "color >= 0 gave no communicator"))
        return no_split(tc);
    tc->comm = nc;
    tc->rank = ucoll_comm_rank(nc);
    tc->size = ucoll_comm_size(nc);
    if (!mpt_check(tc->size == n && tc->rank == newrank, name,
                   "rank %d of size %d, expected rank %d of size %d", tc->rank, tc->size, newrank,
                   n)) {
        /* a communicator of the wrong shape would make every later check of it fail, or hang */
        printf("FATAL rank %d: %s: communicator of the wrong shape\n", g_wrank, name);
        fflush(stdout);
        exit(3);
    }
    /* members by an allreduce: slot[new rank] = 1 + world rank */
    int64_t *slots = calloc((size_t)n, sizeof(int64_t)), *all = calloc((size_t)n, 8);
    slots[tc->rank] = 1 + g_wrank;
    if (mpt_expect_st(ucoll_allreduce(nc, slots, all, (size_t)n, UCOLL_INT64, UCOLL_OP_SUM),
                      UCOLL_OK, name, "allreduce of members")) {
        int bad = -1;
        for (int i = 0; i < n && bad < 0; i++)
            if (all[i] != 1 + tc->members[i])
                bad = i;
        mpt_check(bad < 0, name, "new rank %d is world rank %lld, expected %d", bad,
                  bad < 0 ? 0LL : (long long)all[bad] - 1, bad < 0 ? 0 : tc->members[bad]);
    }
    free(slots);
    free(all);
    return 1;
}

static void free_tcomm(tcomm_t *tc)
{
    char name[160];
    snprintf(name, sizeof(name), "ucoll_comm_free(%s)", tc->label);
    if (tc->comm != NULL) {
        ucoll_comm_t *c = tc->comm;
        mpt_expect_st(ucoll_comm_free(c), UCOLL_OK, name, "free");
        /* a freed communicator answers, never crashes */
        mpt_check(ucoll_comm_size(c) == -1 && ucoll_comm_rank(c) == -1, name,
                  "size/rank after free are %d/%d, expected -1/-1", ucoll_comm_size(c),
                  ucoll_comm_rank(c));
        mpt_expect_st(ucoll_barrier(c), UCOLL_ERR_STATE, name, "ucoll_barrier after free");
        int32_t x = 1, y = 0;
        ucoll_request_t *req = NULL;
        mpt_expect_st(ucoll_iallreduce(c, &x, &y, 1, UCOLL_INT32, UCOLL_OP_SUM, &req),
                      UCOLL_ERR_STATE, name, "ucoll_iallreduce after free");
        mpt_check(y == 0, name, "ucoll_iallreduce after free wrote the result");
        mpt_expect_st(ucoll_comm_free(c), UCOLL_ERR_STATE, name, "second ucoll_comm_free");
    }
    free(tc->members);
    tc->members = NULL;
    tc->comm = NULL;
}

/* color < 0 everywhere; many split/free cycles; free of world */
static void test_split_misc(const tcomm_t *world)
{
    const char *name;
    tcomm_t none;
    if (do_split(world, SPLIT_NONE, "none", &none))
        free_tcomm(&none); /* (a failure: do_split has reported it) */
    else
        free(none.members);

    name = "ucoll_comm_free(world)";
    mpt_check(ucoll_comm_free(world->comm) != UCOLL_OK, name, "freeing world succeeded");
    int32_t one = 1, total = 0;
    if (mpt_expect_st(ucoll_allreduce(world->comm, &one, &total, 1, UCOLL_INT32, UCOLL_OP_SUM),
                      UCOLL_OK, name, "world still works"))
        mpt_check(total == world->size, name, "allreduce gave %d, expected %d", (int)total,
                  world->size);

    name = "ucoll_comm_split(NULL newcomm)";
    mpt_expect_st(ucoll_comm_split(world->comm, 0, 0, NULL), UCOLL_ERR_INVALID_ARG, name, "split");
    ucoll_comm_t *nc = NULL;
    mpt_expect_st(ucoll_comm_split(NULL, 0, 0, &nc), UCOLL_ERR_INVALID_ARG,
                  "ucoll_comm_split(NULL)", "split");

    /* many communicators over time (ids must not run out or collide) */
    /* A framework splits and frees groups as it goes: a communicator freed must not count
     * against a limit. Only world and the few communicators of main() are alive meanwhile. */
    name = "split/collective/free cycles";
    int bad = 0;
    size_t heap_at_2000 = 0; /* bytes malloc'd and not freed, after 2000 cycles */
    for (int i = 0; i < g_split_cycles && !bad; i++) {
        if (i == 2000)
            heap_at_2000 = mallinfo2().uordblks;
        ucoll_comm_t *c = NULL;
        int color = (world->rank + i) % 2;
        ucoll_status_t st =
            ucoll_comm_split(world->comm, color, i % 3 ? world->rank : -world->rank, &c);
        if (!mpt_check(st == UCOLL_OK, name,
                       "cycle %d of %d: ucoll_comm_split gave %d (%s) with only a handful of "
                       "communicators alive",
                       i, g_split_cycles, (int)st, ucoll_strerror(st))) {
            fatal_if(st, name);
            bad = 1;
            break;
        }
        if (i >= 200 && i % 50 != 0) { /* check the communicator now and then */
            if (!mpt_expect_st(ucoll_comm_free(c), UCOLL_OK, name, "free"))
                bad = 1;
            continue;
        }
        int expect_n = 0;
        for (int q = 0; q < world->size; q++)
            expect_n += (q + i) % 2 == color;
        int64_t v = 1 + world->rank, sum = 0, want = 0;
        for (int q = 0; q < world->size; q++)
            if ((q + i) % 2 == color)
                want += 1 + q;
        if (!mpt_expect_st(ucoll_allreduce(c, &v, &sum, 1, UCOLL_INT64, UCOLL_OP_SUM), UCOLL_OK,
                           name, "allreduce") ||
            !mpt_check(sum == want && ucoll_comm_size(c) == expect_n, name,
                       "cycle %d: sum %lld expected %lld, size %d expected %d", i, (long long)sum,
                       (long long)want, ucoll_comm_size(c), expect_n))
            bad = 1;
        if (!mpt_expect_st(ucoll_comm_free(c), UCOLL_OK, name, "free"))
            bad = 1;
    }
    /* freed communicators are kept (dead, to answer UCOLL_ERR_STATE) for the last 1024 frees
     * only: the heap must not grow with the number of cycles. Each kept one is some hundred
     * bytes, so 3000 more cycles without the bound grow the heap by more than 1 MB. */
    if (!bad && g_split_cycles >= 5000) {
        size_t heap_end = mallinfo2().uordblks;
        mpt_check(heap_end <= heap_at_2000 + 256 * 1024, "split/free cycles: bounded memory",
                  "heap in use grew from %zu to %zu bytes over cycles 2000..%d", heap_at_2000,
                  heap_end, g_split_cycles);
    }
}

/* ---------------------------------------------------------------- misuse */

static void test_misuse(const tcomm_t *world, const tcomm_t *other)
{
    const char *name;

    name = "NULL requests";
    mpt_expect_st(ucoll_start(NULL), UCOLL_ERR_INVALID_ARG, name, "ucoll_start(NULL)");
    mpt_expect_st(ucoll_test(NULL), UCOLL_ERR_INVALID_ARG, name, "ucoll_test(NULL)");
    mpt_expect_st(ucoll_wait(NULL), UCOLL_ERR_INVALID_ARG, name, "ucoll_wait(NULL)");
    mpt_expect_st(ucoll_request_free(NULL), UCOLL_ERR_INVALID_ARG, name,
                  "ucoll_request_free(NULL)");

    name = "invalid arguments to nonblocking and persistent calls";
    {
        int32_t s[4] = {1, 2, 3, 4}, r[4] = {9, 9, 9, 9};
        static int not_a_req;
        ucoll_request_t *req = (ucoll_request_t *)(void *)&not_a_req;
        ucoll_request_t *const untouched = req;
        ucoll_comm_t *c = world->comm;
        const int p = world->size;
        mpt_expect_st(ucoll_iallreduce(c, s, r, 4, UCOLL_INT32, UCOLL_OP_SUM, NULL),
                      UCOLL_ERR_INVALID_ARG, name, "iallreduce with req NULL");
        mpt_expect_st(ucoll_ireduce(c, s, r, 4, UCOLL_INT32, UCOLL_OP_SUM, p, &req),
                      UCOLL_ERR_INVALID_ARG, name, "ireduce root = size");
        mpt_expect_st(ucoll_ibcast(c, r, 4, UCOLL_INT32, -1, &req), UCOLL_ERR_INVALID_ARG, name,
                      "ibcast root -1");
        mpt_expect_st(ucoll_iscan(c, s, NULL, 4, UCOLL_INT32, UCOLL_OP_SUM, &req),
                      UCOLL_ERR_INVALID_ARG, name, "iscan recvbuf NULL");
        mpt_expect_st(ucoll_iexscan(c, s, r, 4, UCOLL_FLOAT32, UCOLL_OP_BXOR, &req),
                      UCOLL_ERR_INVALID_ARG, name, "iexscan bxor on float32");
        mpt_expect_st(ucoll_allreduce_init(c, NULL, r, 4, UCOLL_INT32, UCOLL_OP_SUM, &req),
                      UCOLL_ERR_INVALID_ARG, name, "allreduce_init sendbuf NULL");
        mpt_expect_st(ucoll_bcast_init(c, r, 4, UCOLL_INT32, p, &req), UCOLL_ERR_INVALID_ARG, name,
                      "bcast_init root = size");
        mpt_expect_st(ucoll_scan_init(c, s, r, 4, (ucoll_dtype_t)99, UCOLL_OP_SUM, &req),
                      UCOLL_ERR_INVALID_ARG, name, "scan_init unknown dtype");
        mpt_expect_st(ucoll_exscan_init(c, s, r, 4, UCOLL_INT32, 4242, &req), UCOLL_ERR_INVALID_ARG,
                      name, "exscan_init unknown op");
        mpt_expect_st(ucoll_reduce_init(c, s, r, 4, UCOLL_INT32, UCOLL_OP_SUM, -1, &req),
                      UCOLL_ERR_INVALID_ARG, name, "reduce_init root -1");
        mpt_check(req == untouched, name, "a failed call changed *req");
        mpt_check(r[0] == 9 && r[1] == 9 && r[2] == 9 && r[3] == 9, name,
                  "a failed call wrote recvbuf");
    }

    /* A persistent bcast from rank 0 of `other`. When `other` is not world, the other ranks
     * start it before rank 0 does (rank 0 waits for a world barrier that they enter only after
     * their checks), so their requests are certainly in progress. */
    name = other->comm == world->comm ? "misuse of an active request (world)"
                                      : "misuse of an active request (split)";
    {
        int64_t buf[16];
        ucoll_request_t *req = NULL;
        const int root = 0, me = other->rank, ordered = other->comm != world->comm;
        for (int i = 0; i < 16; i++)
            buf[i] = me == root ? 31 * i + 5 : -1;
        if (mpt_expect_st(ucoll_bcast_init(other->comm, buf, 16, UCOLL_INT64, root, &req), UCOLL_OK,
                          name, "bcast_init")) {
            if (ordered && me == root)
                mpt_expect_st(ucoll_barrier(world->comm), UCOLL_OK, name, "world barrier");
            mpt_expect_st(ucoll_start(req), UCOLL_OK, name, "first ucoll_start");
            if (ordered && me != root)
                mpt_expect_st(ucoll_test(req), UCOLL_INPROGRESS, name,
                              "ucoll_test before the root started");
            mpt_expect_st(ucoll_start(req), UCOLL_ERR_STATE, name,
                          "ucoll_start of an active request");
            mpt_expect_st(ucoll_request_free(req), UCOLL_ERR_STATE, name,
                          "ucoll_request_free of an active request");
            if (other->comm != world->comm)
                mpt_expect_st(ucoll_comm_free(other->comm), UCOLL_ERR_STATE, name,
                              "ucoll_comm_free with an active request on it");
            if (ordered && me != root)
                mpt_expect_st(ucoll_barrier(world->comm), UCOLL_OK, name, "world barrier");
            if (mpt_expect_st(ucoll_wait(req), UCOLL_OK, name, "ucoll_wait")) {
                int bad = 0;
                for (int i = 0; i < 16; i++)
                    bad += buf[i] != 31 * i + 5;
                mpt_check(bad == 0, name, "%d elements of the bcast wrong", bad);
            }
            /* inactive again: can be started again, then freed */
            for (int i = 0; i < 16; i++)
                buf[i] = me == root ? 7 * i - 3 : -1;
            mpt_expect_st(ucoll_start(req), UCOLL_OK, name, "ucoll_start after completion");
            if (mpt_expect_st(ucoll_wait(req), UCOLL_OK, name, "ucoll_wait")) {
                int bad = 0;
                for (int i = 0; i < 16; i++)
                    bad += buf[i] != 7 * i - 3;
                mpt_check(bad == 0, name, "second start: %d elements of the bcast wrong", bad);
            }
            mpt_expect_st(ucoll_request_free(req), UCOLL_OK, name, "ucoll_request_free");
        }
    }

    name = "ucoll_start of a nonblocking request";
    {
        int32_t x = 1 + world->rank, y = 0;
        ucoll_request_t *req = NULL;
        if (mpt_expect_st(ucoll_iallreduce(world->comm, &x, &y, 1, UCOLL_INT32, UCOLL_OP_SUM, &req),
                          UCOLL_OK, name, "iallreduce")) {
            mpt_expect_st(ucoll_wait(req), UCOLL_OK, name, "ucoll_wait");
            mpt_check(y == world->size * (world->size + 1) / 2, name, "sum %d", (int)y);
            ucoll_status_t st = ucoll_start(req);
            mpt_check(st == UCOLL_ERR_STATE || st == UCOLL_ERR_INVALID_ARG, name,
                      "ucoll_start gave %d (%s), expected an error", (int)st, ucoll_strerror(st));
            mpt_expect_st(ucoll_request_free(req), UCOLL_OK, name, "ucoll_request_free");
        }
    }
}

/* A request (persistent, inactive) that outlives its communicator must still be freeable, or
 * the free of the communicator must be refused while the request exists. */
static void test_request_outlives_comm(const tcomm_t *world)
{
    const char *name = "persistent request freed after ucoll_comm_free of its communicator";
    ucoll_comm_t *c = NULL;
    if (!mpt_expect_st(ucoll_comm_split(world->comm, 0, world->rank, &c), UCOLL_OK, name, "split"))
        return;
    int32_t x = 1, y = 0;
    ucoll_request_t *req = NULL;
    if (!mpt_expect_st(ucoll_allreduce_init(c, &x, &y, 1, UCOLL_INT32, UCOLL_OP_SUM, &req),
                       UCOLL_OK, name, "allreduce_init")) {
        ucoll_comm_free(c);
        return;
    }
    mpt_expect_st(ucoll_start(req), UCOLL_OK, name, "start");
    mpt_expect_st(ucoll_wait(req), UCOLL_OK, name, "wait");
    mpt_check(y == world->size, name, "allreduce gave %d, expected %d", (int)y, world->size);
    ucoll_status_t fst = ucoll_comm_free(c);
    if (fst == UCOLL_OK) {
        ucoll_status_t rst = ucoll_request_free(req);
        mpt_check(rst == UCOLL_OK, name,
                  "ucoll_comm_free succeeded, then ucoll_request_free of the (inactive) request "
                  "gave %d (%s): the request can never be freed",
                  (int)rst, ucoll_strerror(rst));
    } else {
        mpt_check(fst == UCOLL_ERR_STATE, name, "ucoll_comm_free gave %d (%s)", (int)fst,
                  ucoll_strerror(fst));
        mpt_expect_st(ucoll_request_free(req), UCOLL_OK, name, "request_free");
        mpt_expect_st(ucoll_comm_free(c), UCOLL_OK, name, "comm_free after request_free");
    }
}

/* ---------------------------------------------------------------- progress by other calls */

/* The root of a large ibcast (several segments, several tree rounds) does not touch its request
 * until a blocking allreduce has completed, which the other ranks enter only after their ibcast
 * completed: only the progress made by the blocking call can move the root's ibcast along.
 * Then: a split of world while an iallreduce on world is outstanding, and a persistent request
 * in flight across blocking collectives on its communicator. */
static void test_progress(const tcomm_t *tc, const tcomm_t *world)
{
    char name[160];
    snprintf(name, sizeof(name), "ibcast progressed by a blocking allreduce on %s", tc->label);
    job_t j;
    job_setup(&j, tc, UCOLL_COLL_BCAST, K_I64_SUM, g_big, 0, 0);
    j.salt = 4242;
    job_fill(&j);
    if (mpt_expect_st(job_issue(&j), UCOLL_OK, name, "ucoll_ibcast")) {
        int64_t v = 1 + tc->members[tc->rank], sum = 0, want = 0;
        for (int r = 0; r < tc->size; r++)
            want += 1 + tc->members[r];
        if (tc->rank != 0)
            job_completed(&j, ucoll_wait(j.req), "progress");
        if (mpt_expect_st(ucoll_allreduce(tc->comm, &v, &sum, 1, UCOLL_INT64, UCOLL_OP_SUM),
                          UCOLL_OK, name, "blocking allreduce"))
            mpt_check(sum == want, name, "allreduce gave %lld expected %lld", (long long)sum,
                      (long long)want);
        if (tc->rank == 0)
            job_completed(&j, ucoll_wait(j.req), "progress");
        free_requests(&j, 1, "progress");
    }
    job_release(&j);

    snprintf(name, sizeof(name), "split of world while an iallreduce on world is outstanding");
    {
        job_t a;
        job_setup(&a, world, UCOLL_COLL_ALLREDUCE, K_MAT, 1000, 0, 0);
        a.salt = 4343;
        job_fill(&a);
        if (mpt_expect_st(job_issue(&a), UCOLL_OK, name, "ucoll_iallreduce")) {
            tcomm_t oe;
            int have = do_split(world, SPLIT_ODD_EVEN, "odd/even-2", &oe);
            if (have) {
                test_quick(&oe, 4400);
                free_tcomm(&oe);
            }
            job_completed(&a, ucoll_wait(a.req), "progress");
            free_requests(&a, 1, "progress");
        }
        job_release(&a);
    }

    snprintf(name, sizeof(name), "persistent scan in flight across blocking calls on %s",
             tc->label);
    {
        job_t ps;
        job_setup(&ps, tc, UCOLL_COLL_SCAN, K_MAT, 500, 0, 0);
        ps.salt = 4545;
        job_fill(&ps);
        if (mpt_expect_st(job_init_persistent(&ps), UCOLL_OK, name, "scan_init")) {
            for (int it = 0; it < 2; it++) {
                ps.salt = 4546 + (unsigned)it;
                job_fill(&ps);
                if (!mpt_expect_st(ucoll_start(ps.req), UCOLL_OK, name, "ucoll_start"))
                    break;
                for (int b = 0; b < 3; b++)
                    mpt_expect_st(ucoll_barrier(tc->comm), UCOLL_OK, name, "ucoll_barrier");
                job_completed(&ps, ucoll_wait(ps.req), "progress");
            }
            free_requests(&ps, 1, "progress");
        }
        job_release(&ps);
    }
}

/* ---------------------------------------------------------------- main */

static void section_done(const char *what, double t0, long fails0)
{
    if (g_wrank == 0) {
        printf("  %-44s %6.1f s%s\n", what, now_s() - t0,
               mpt_tally.fails > fails0 ? "  (failures on rank 0)" : "");
        fflush(stdout);
    }
}

#define SECTION(what, ...)                                                                         \
    do {                                                                                           \
        double t0_ = now_s();                                                                      \
        long f0_ = mpt_tally.fails;                                                                \
        __VA_ARGS__;                                                                               \
        section_done(what, t0_, f0_);                                                              \
    } while (0)

int main(int argc, char **argv)
{
    int expect_size = -1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--verbose") == 0) {
            g_verbose = 1;
        } else if (strcmp(argv[i], "--expect-size") == 0 && i + 1 < argc) {
            expect_size = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--big") == 0 && i + 1 < argc) {
            g_big = (size_t)strtoul(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--split-cycles") == 0 && i + 1 < argc) {
            g_split_cycles = atoi(argv[++i]);
        } else {
            fprintf(stderr, "usage: mp_api_test --expect-size N [--big COUNT] [--split-cycles N]"
                            " [--verbose]\n");
            return 2;
        }
    }
    if (expect_size < 1 || expect_size > 256 || g_big < 1000) {
        fprintf(stderr, "mp_api_test: --expect-size N (1..256) is required; --big >= 1000\n");
        return 2;
    }
    ucoll_comm_t *wc = NULL;
    ucoll_status_t st = ucoll_init(&wc);
    if (st != UCOLL_OK) {
        printf("FAIL: ucoll_init: %d (%s)\n", (int)st, ucoll_strerror(st));
        return 1;
    }
    g_wrank = ucoll_comm_rank(wc);
    mpt_tally.rank = g_wrank;
    mpt_tally.max_prints = MAX_FAIL_PRINTS;
    mpt_tally.fatal_lost_job = 1; /* the job cannot go on */
    g_wsize = ucoll_comm_size(wc);
    if (g_wsize != expect_size || g_wrank < 0 || g_wrank >= g_wsize) {
        printf("FAIL rank %d: job size assertion: ucoll_comm_size = %d, expected %d\n", g_wrank,
               g_wsize, expect_size);
        return 1; /* no finalize: the ranks may not agree on who is there */
    }
    g_ref = malloc(g_big * 8 + GUARD);
    g_tmp = malloc(g_big * 8 + GUARD);
    if (g_ref == NULL || g_tmp == NULL) {
        printf("FAIL rank %d: out of memory\n", g_wrank);
        return 1;
    }
    ucoll_op_t mat;
    st = ucoll_op_create(mat_user_fn, (void *)&mat_arg_tag, 0, &mat);
    if (st != UCOLL_OK) {
        printf("FAIL rank %d: ucoll_op_create: %d (%s)\n", g_wrank, (int)st, ucoll_strerror(st));
        return 1;
    }
    kinds[K_MAT].op = mat;
    if (g_wrank == 0) {
        printf("mp_api_test: np=%d, largest count %zu\n", g_wsize, g_big);
        fflush(stdout);
    }

    tcomm_t world = {.comm = wc, .label = "world", .rank = g_wrank, .size = g_wsize};
    world.members = malloc((size_t)g_wsize * sizeof(int));
    for (int i = 0; i < g_wsize; i++)
        world.members[i] = i;

    tcomm_t oddeven, reversed, mod3, nested, norank0;
    int have_oe = 0, have_rev = 0, have_mod3 = 0, have_nested = 0, have_nr0 = 0;
    SECTION("split: odd/even, reversed, mod 3, nested", {
        have_oe = do_split(&world, SPLIT_ODD_EVEN, "odd/even", &oddeven);
        have_rev = do_split(&world, SPLIT_REVERSED, "reversed", &reversed);
        have_mod3 = do_split(&world, SPLIT_MOD3_TIES, "mod3-tied-keys", &mod3);
        if (have_oe)
            have_nested = do_split(&oddeven, SPLIT_REVERSED, "odd/even-reversed", &nested);
        have_nr0 = do_split(&world, SPLIT_NO_RANK0, "without-rank-0", &norank0);
    });
    if (!have_oe || !have_rev || !have_mod3 || !have_nested) {
        printf("FATAL rank %d: a split gave no communicator; cannot go on\n", g_wrank);
        return 1;
    }
    /* other schedules on some communicators */
    {
        const char *name = "ucoll_set_algorithm on split communicators";
        mpt_expect_st(ucoll_set_algorithm(reversed.comm, UCOLL_COLL_EXSCAN, "roughly-halving"),
                      UCOLL_OK, name, "reversed exscan roughly-halving");
        mpt_expect_st(ucoll_set_algorithm(reversed.comm, UCOLL_COLL_SCAN, "recursive-doubling"),
                      UCOLL_OK, name, "reversed scan recursive-doubling");
        mpt_expect_st(ucoll_set_algorithm(mod3.comm, UCOLL_COLL_EXSCAN, "linear"), UCOLL_OK, name,
                      "mod3 exscan linear");
        mpt_expect_st(ucoll_set_algorithm(mod3.comm, UCOLL_COLL_SCAN, "linear"), UCOLL_OK, name,
                      "mod3 scan linear");
    }

    SECTION("nonblocking on world", test_nonblocking(&world, 100));
    SECTION("nonblocking on odd/even", test_nonblocking(&oddeven, 200));
    SECTION("nonblocking on reversed", test_nonblocking(&reversed, 300));
    SECTION("nonblocking on mod3-tied-keys", test_nonblocking(&mod3, 400));
    SECTION("persistent on world", test_persistent(&world, 500));
    SECTION("persistent on odd/even", test_persistent(&oddeven, 600));
    SECTION("persistent on reversed", test_persistent(&reversed, 700));
    SECTION("quick on odd/even-reversed, without-rank-0", {
        test_quick(&nested, 800);
        if (have_nr0)
            test_quick(&norank0, 900);
    });

    tcomm_t dup;
    int have_dup = 0;
    SECTION("concurrent: 64 on world + dup, shuffled wait", {
        have_dup = do_split(&world, SPLIT_DUP, "dup", &dup);
        if (have_dup)
            test_concurrent(&world, &dup, 0, 1100);
    });
    SECTION("concurrent: 64 on world + reversed, test polling",
            test_concurrent(&world, &reversed, 1, 1200));
    SECTION("concurrent: 64 on world + odd/even, poll + wait",
            test_concurrent(&world, &oddeven, 2, 1300));
    SECTION("concurrent: 64 on mod3 + odd/even-reversed", test_concurrent(&mod3, &nested, 0, 1400));
    /* two new communicators of the same group: their collectives have the same sequence
     * numbers, only the communicator tells their messages apart */
    SECTION("concurrent: 64 on two fresh dups, poll + wait", {
        tcomm_t d1, d2;
        int h1 = do_split(&world, SPLIT_DUP, "dup-1", &d1);
        int h2 = do_split(&world, SPLIT_DUP, "dup-2", &d2);
        if (h1 && h2)
            test_concurrent(&d1, &d2, 2, 1500);
        if (h1)
            free_tcomm(&d1);
        if (h2)
            free_tcomm(&d2);
    });

    SECTION("progress by other calls", {
        test_progress(&world, &world);
        test_progress(&reversed, &world);
    });
    SECTION("misuse", {
        test_misuse(&world, &oddeven);
        test_misuse(&world, &world);
        test_request_outlives_comm(&world);
    });
    SECTION("split: color < 0, free, split/free cycles", test_split_misc(&world));
    SECTION("ucoll_comm_free of the split communicators", {
        free_tcomm(&oddeven);
        free_tcomm(&reversed);
        free_tcomm(&mod3);
        if (have_dup)
            free_tcomm(&dup);
        /* nested and without-rank-0 stay: ucoll_finalize frees them */
    });

    mpt_check(mat_bad_calls == 0, "user op", "called %d times with a wrong dtype or arg",
              (int)mat_bad_calls);

    int64_t mine[3] = {mpt_tally.checks, mpt_tally.fails, g_skips}, all[3] = {0, 0, 0};
    st = ucoll_allreduce(wc, mine, all, 3, UCOLL_INT64, UCOLL_OP_SUM);
    int ok = st == UCOLL_OK && mpt_tally.fails == 0 && all[1] == 0;
    if (st != UCOLL_OK)
        printf("FAIL rank %d: final allreduce of the counters: %s\n", g_wrank, ucoll_strerror(st));
    if (g_wrank == 0)
        printf("mp_api_test np=%d: %lld checks on all ranks, %lld passed, %lld failed, %lld "
               "skipped; verdict: %s\n",
               g_wsize, (long long)all[0], (long long)(all[0] - all[1]), (long long)all[1],
               (long long)all[2], ok ? "PASS" : "FAIL");
    fflush(stdout);

    ucoll_op_free(mat);
    st = ucoll_finalize(wc);
    if (st != UCOLL_OK) {
        printf("FAIL rank %d: ucoll_finalize: %d (%s)\n", g_wrank, (int)st, ucoll_strerror(st));
        ok = 0;
    }
    if (ucoll_comm_size(nested.comm) != -1 || (have_nr0 && ucoll_comm_size(norank0.comm) != -1)) {
        printf("FAIL rank %d: a split communicator is still alive after ucoll_finalize\n", g_wrank);
        ok = 0;
    }
    free(nested.members);
    if (have_nr0)
        free(norank0.members);
    free(world.members);
    free(g_ref);
    free(g_tmp);
    return ok ? 0 : 1;
}
