/*
 * tests/mp/badinput_test.c: the bad-input matrix of ucoll's public API (include/ucoll.h), run
 * on every rank of a job of at least 3 ranks, UCOLL_TIMEOUT (<= 30 s) set. Public API only.
 *
 * Argument errors (every rank makes the same bad call, so none waits for another): NULL
 * buffers with count > 0, IN_PLACE without recvbuf, unknown dtype, unknown or freed op,
 * bitwise and logical ops on float16/bfloat16/float32/float64, AVG on integer types and with
 * exscan or scan, root out of range, count * element size beyond SIZE_MAX, a NULL request
 * pointer, NULL and garbage communicators, bad algorithm names; each collective in its
 * blocking, nonblocking and persistent (*_init) form. Each must return
 * UCOLL_ERR_INVALID_ARG, leave every byte of the send and receive buffers (and 64 guard bytes
 * either side) and the request pointer as they were, and a correct collective afterwards must
 * succeed with the right result ("usable after ...").
 * The block collectives (allgather ... scatterv), each form: NULL request pointer, unknown dtype,
 * NULL send or receive buffer, buffers overlapping either way or equal, IN_PLACE without recvbuf,
 * IN_PLACE as scatter(v)'s sendbuf or off the root, count * size * p beyond SIZE_MAX, roots out
 * of range, unknown op and BAND on float64 (reduce_scatter(_block)), NULL count or displacement
 * arrays, displacement + count or a sum of counts beyond SIZE_MAX (or their bytes), sendcount !=
 * recvcounts[rank] (allgatherv, gatherv's root, scatterv's root, alltoallv's own block): each
 * INVALID_ARG with every byte of both buffers and the count arrays unchanged.
 * Requests: a freed request, a pointer that never was a request, NULL (INVALID_ARG); starting
 * a nonblocking or an active persistent request and freeing an active one (UCOLL_ERR_STATE).
 * Root-only errors (reduce with a NULL recvbuf at the root) run on 1-rank communicators from
 * ucoll_comm_split, where every member is the root.
 *
 * Misuse (every rank alike): send and receive buffers that overlap without UCOLL_IN_PLACE
 * (equal, or shifted by 1 or 3 elements either way) in exscan, scan and allreduce, and in
 * reduce at the root of a 1-rank communicator, each form: UCOLL_ERR_INVALID_ARG with every
 * byte unchanged; adjacent buffers, and a reduce whose non-roots pass recvbuf == sendbuf (not
 * used there), succeed with the right result. ucoll_op_free of a user op that a persistent or
 * nonblocking request not yet freed uses: UCOLL_ERR_STATE, and the request still applies it
 * (no new op takes its handle); once the request is freed, the op frees. A user op that calls
 * ucoll (collectives, nonblocking and persistent forms, split, set_algorithm, op_create,
 * finalize, init): every call gives UCOLL_ERR_STATE and the outer collective is right. A forked
 * child calls collectives, split, op_create, finalize and init: each UCOLL_ERR_STATE, nothing
 * written through its arguments; the parents' next allreduce is right.
 *
 * Mismatched counts (the one case where ranks disagree): a bcast where rank 1's count is
 * smaller, then larger, than the root's (twice: once both messages small, once on either side
 * of the on-host channel's 4096-byte limit, so that the message comes through the channel the
 * receiver is not waiting on); an allreduce where the last rank's count is smaller;
 * a segmented bcast (several UCOLL_SEGMENT_SIZE pieces) where rank 1's count is smaller; bcasts
 * and an allreduce whose counts differ by whole segments (same segment lengths, one fewer or
 * more of them).
 * Asserted, and why:
 *   - the rank that receives a message of the wrong length gets UCOLL_ERR_TRUNCATED: in the
 *     unsegmented bcasts that is rank 1, whose parent in every bcast tree is a rank with the
 *     root's count, so rank 1 is checked by name; in the others the receiving rank depends on
 *     the algorithm, so at least one rank must report UCOLL_ERR_TRUNCATED;
 *   - the others may end with UCOLL_OK (a rank that got all it expected: the root of a bcast, a
 *     subtree the mismatch does not feed), UCOLL_ERR_TRUNCATED, or UCOLL_ERR_TIMED_OUT (waiting
 *     for a rank that gave up): nothing else, and a rank that returns UCOLL_OK holds the right
 *     data for its count;
 *   - every call returns within UCOLL_TIMEOUT + 5 s, no rank writes outside its buffer (guard
 *     bytes), no send buffer changes; each runs on a split of world of its own, which is then
 *     revoked (UCOLL_ERR_STATE) on every rank whose call failed and is freed, and a new split
 *     and world work, once every rank has left the failed call (the test waits until
 *     UCOLL_TIMEOUT + 1 s after it started).
 *   The statuses are exchanged with an allreduce, so every rank checks all of them.
 *
 * A late rank: one rank enters a bcast (as its root) or an allreduce UCOLL_TIMEOUT + 1 s after
 * the others (on a split of its own, as above). The others must get UCOLL_ERR_TIMED_OUT within
 * UCOLL_TIMEOUT + 5 s; once the late rank has come and gone, nothing it sent may land in any
 * buffer of theirs (every byte of recvbuf stays as the call left it) and the next collectives
 * (on a new split and on world) must be right.
 *
 * After ucoll_finalize: every call with the finalized communicator gives UCOLL_ERR_STATE
 * (collectives, nonblocking, persistent, split, free, set_algorithm, a second finalize), rank
 * and size give -1, a request kept from before can no longer be started, tested or waited
 * (UCOLL_ERR_STATE) and ucoll_request_free releases it (UCOLL_OK); a second ucoll_init gives
 * UCOLL_ERR_STATE.
 *
 * Output: "FAIL rank R: <case>: <what>" for every failed check; rank 0 ends with
 * "badinput np=N: C checks on rank 0, F failed over all ranks; verdict: PASS|FAIL" (F counted
 * over all ranks before finalize, then rank 0's own after it). Exit status 0 only if this rank
 * had no failure.
 */
#include <ucoll.h>

#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mp_util.h"

#define GUARD 64
#define GUARD_BYTE 0xCA
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static int g_rank = -1, g_size;
static long n_checks, n_failed;
static double g_timeout;

static void fail(const char *name, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(const char *name, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("FAIL rank %d: %s: ", g_rank, name);
    vprintf(fmt, ap);
    printf("\n");
    fflush(stdout);
    va_end(ap);
    n_failed++;
}

/* the status's name without the UCOLL_ prefix */
static const char *st_name(ucoll_status_t st)
{
    const char *name = mpt_status_name(st);
    return strncmp(name, "UCOLL_", 6) == 0 ? name + 6 : name;
}

static int expect(const char *name, ucoll_status_t got, ucoll_status_t want)
{
    n_checks++;
    if (got == want)
        return 1;
    fail(name, "got %s (%d), expected %s (%d)", st_name(got), (int)got, st_name(want), (int)want);
    return 0;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---------------------------------------------------------------- guarded buffers */

/* [GUARD bytes][payload][GUARD bytes] and a copy of all of it taken before a call */
typedef struct {
    unsigned char *mem, *snap;
    size_t bytes;
} gbuf_t;

static void *xalloc(size_t n)
{
    void *p = aligned_alloc(64, (n + 63) / 64 * 64);
    if (p == NULL) {
        printf("FATAL rank %d: out of memory\n", g_rank);
        exit(2);
    }
    return p;
}

/* The buffers handed to ucoll are mappings of their own (not malloc's), unmapped by gb_free:
 * anything that still touches one after its call returned and the test freed it (UCX
 * finishing a send that a failed call left behind) faults at once, where freed heap memory
 * would be read silently (glibc's free of a large block unmaps it only until its mmap
 * threshold has grown, which made such a crash depend on the run). */
static unsigned char *map_bytes(size_t n)
{
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        printf("FATAL rank %d: out of memory (mmap of %zu bytes)\n", g_rank, n);
        exit(2);
    }
    return p;
}

static void gb_init(gbuf_t *b, size_t bytes, unsigned seed)
{
    b->bytes = bytes;
    b->mem = map_bytes(bytes + 2 * GUARD);
    b->snap = xalloc(bytes + 2 * GUARD);
    memset(b->mem, GUARD_BYTE, GUARD);
    memset(b->mem + GUARD + bytes, GUARD_BYTE, GUARD);
    for (size_t i = 0; i < bytes; i++)
        b->mem[GUARD + i] = (unsigned char)(seed * 31u + i * 7u + 1u);
    memcpy(b->snap, b->mem, bytes + 2 * GUARD);
}

static void *gb_ptr(const gbuf_t *b)
{
    return b->mem + GUARD;
}

static void gb_snapshot(gbuf_t *b)
{
    memcpy(b->snap, b->mem, b->bytes + 2 * GUARD);
}

/* every byte, guards included, as at the last snapshot */
static int gb_check_unchanged(const gbuf_t *b, const char *name, const char *what)
{
    n_checks++;
    for (size_t i = 0; i < b->bytes + 2 * GUARD; i++) {
        if (b->mem[i] != b->snap[i]) {
            long off = (long)i - GUARD;
            fail(name, "%s changed at byte %ld (of %zu): 0x%02x, was 0x%02x", what, off, b->bytes,
                 b->mem[i], b->snap[i]);
            return 0;
        }
    }
    return 1;
}

/* only the guard bytes */
static int gb_check_guards(const gbuf_t *b, const char *name, const char *what)
{
    n_checks++;
    for (size_t i = 0; i < GUARD; i++) {
        if (b->mem[i] != GUARD_BYTE || b->mem[GUARD + b->bytes + i] != GUARD_BYTE) {
            fail(name, "%s: write outside the buffer (guard byte %zu %s it)", what, i,
                 b->mem[i] != GUARD_BYTE ? "before" : "after");
            return 0;
        }
    }
    return 1;
}

static void gb_free(gbuf_t *b)
{
    munmap(b->mem, b->bytes + 2 * GUARD);
    free(b->snap);
    b->mem = b->snap = NULL;
}

/* ---------------------------------------------------------------- one call, any form */

/* a request pointer's value before a call that must fail: it must stay so */
#define REQ_SENTINEL ((ucoll_request_t *)(uintptr_t)0x5e47)

/* Makes the call in the given form with guarded buffers of `bytes` (sendbuf and recvbuf may
 * be replaced by NULL or UCOLL_IN_PLACE through the flags) and checks: status == want, both
 * buffers unchanged, the request pointer unchanged. An unexpected success is completed and
 * released so that the ranks stay in step. */
enum { NULL_SEND = 1, NULL_RECV = 2, IN_PLACE = 4, NULL_REQ = 8 };
static void bad_call(const char *what, int form, ucoll_coll_t coll, ucoll_comm_t *c, int flags,
                     size_t count, size_t bytes, ucoll_dtype_t dt, ucoll_op_t op, int root,
                     ucoll_status_t want)
{
    char name[256];
    snprintf(name, sizeof(name), "%s %s: %s", mpt_coll_name(coll), mpt_form_names[form], what);
    gbuf_t sb, rb;
    gb_init(&sb, bytes, 1);
    gb_init(&rb, bytes, 2);
    const void *s = flags & NULL_SEND ? NULL : flags & IN_PLACE ? UCOLL_IN_PLACE : gb_ptr(&sb);
    void *r = flags & NULL_RECV ? NULL : gb_ptr(&rb);
    ucoll_request_t *req = REQ_SENTINEL;
    ucoll_status_t st = mpt_call((mpt_form_t)form, coll, c, s, r, count, dt, op, root,
                                 flags & NULL_REQ ? NULL : &req);
    if (!expect(name, st, want) && st == UCOLL_OK && form != MPT_BLOCKING && !(flags & NULL_REQ)) {
        if (form == MPT_NONBLOCKING)
            ucoll_wait(req);
        ucoll_request_free(req);
        req = REQ_SENTINEL;
    }
    gb_check_unchanged(&sb, name, "sendbuf");
    gb_check_unchanged(&rb, name, "recvbuf");
    n_checks++;
    if (req != REQ_SENTINEL)
        fail(name, "the request pointer was written although the call failed");
    gb_free(&sb);
    gb_free(&rb);
}

/* a correct allreduce (checked) and barrier on comm: the library is still usable */
static void usable(ucoll_comm_t *c, const char *after)
{
    char name[256];
    snprintf(name, sizeof(name), "usable after %s", after);
    const int p = ucoll_comm_size(c), r = ucoll_comm_rank(c);
    int64_t in[7], out[7];
    for (int i = 0; i < 7; i++) {
        in[i] = (int64_t)r * 1000 + i;
        out[i] = -1;
    }
    if (!expect(name, ucoll_allreduce(c, in, out, 7, UCOLL_INT64, UCOLL_OP_SUM), UCOLL_OK))
        return;
    n_checks++;
    for (int i = 0; i < 7; i++) {
        int64_t want = (int64_t)1000 * p * (p - 1) / 2 + (int64_t)p * i;
        if (out[i] != want) {
            fail(name, "allreduce element %d = %lld, expected %lld", i, (long long)out[i],
                 (long long)want);
            break;
        }
    }
    expect(name, ucoll_barrier(c), UCOLL_OK);
}

/* A failed collective revokes its communicator on the ranks that saw the error, so the
 * mismatched and late calls run on a split of world of their own: afterwards it gives
 * UCOLL_ERR_STATE on every rank whose call failed, is freed, and a new split of world and
 * world itself must work (no late message of the failed call may reach them). */
static ucoll_comm_t *failing_comm(ucoll_comm_t *w, const char *name)
{
    ucoll_comm_t *c = NULL;
    expect(name, ucoll_comm_split(w, 0, g_rank, &c), UCOLL_OK);
    return c;
}

static void retire_comm(ucoll_comm_t *w, ucoll_comm_t *c, ucoll_status_t st, const char *name)
{
    char what[300];
    snprintf(what, sizeof(what), "%s: its communicator afterwards", name);
    if (st != UCOLL_OK)
        expect(what, ucoll_barrier(c), UCOLL_ERR_STATE);
    expect(what, ucoll_comm_free(c), UCOLL_OK);
    ucoll_comm_t *next = NULL;
    if (expect(what, ucoll_comm_split(w, 0, g_rank, &next), UCOLL_OK)) {
        usable(next, what);
        expect(what, ucoll_comm_free(next), UCOLL_OK);
    }
    usable(w, name);
}

/* ---------------------------------------------------------------- the argument matrix */

static void never_called(const void *in, void *inout, size_t n, ucoll_dtype_t dt, void *arg)
{
    (void)in, (void)inout, (void)n, (void)dt, (void)arg;
    fail("freed user op", "its function was called");
}

static const ucoll_coll_t data_colls[] = {UCOLL_COLL_EXSCAN, UCOLL_COLL_SCAN, UCOLL_COLL_REDUCE,
                                          UCOLL_COLL_ALLREDUCE, UCOLL_COLL_BCAST};
static const ucoll_coll_t op_colls[] = {UCOLL_COLL_EXSCAN, UCOLL_COLL_SCAN, UCOLL_COLL_REDUCE,
                                        UCOLL_COLL_ALLREDUCE};

static void test_arguments(ucoll_comm_t *w)
{
    const int p = ucoll_comm_size(w);
    char what[160];

    for (int f = 0; f < MPT_NFORMS; f++) {
        /* NULL buffers with count > 0 */
        for (size_t i = 0; i < NELEM(op_colls); i++)
            bad_call("NULL sendbuf, count 4", f, op_colls[i], w, NULL_SEND, 4, 16, UCOLL_INT32,
                     UCOLL_OP_SUM, 0, UCOLL_ERR_INVALID_ARG);
        const ucoll_coll_t every_rank_recv[] = {UCOLL_COLL_EXSCAN, UCOLL_COLL_SCAN,
                                                UCOLL_COLL_ALLREDUCE, UCOLL_COLL_BCAST};
        for (size_t i = 0; i < NELEM(every_rank_recv); i++)
            bad_call("NULL recvbuf, count 4", f, every_rank_recv[i], w, NULL_RECV, 4, 16,
                     UCOLL_INT32, UCOLL_OP_SUM, 0, UCOLL_ERR_INVALID_ARG);
        for (size_t i = 0; i < NELEM(op_colls); i++)
            bad_call("IN_PLACE with NULL recvbuf, count 4", f, op_colls[i], w, IN_PLACE | NULL_RECV,
                     4, 16, UCOLL_INT32, UCOLL_OP_SUM, 0, UCOLL_ERR_INVALID_ARG);
        bad_call("NULL sendbuf and recvbuf, count 1", f, UCOLL_COLL_ALLREDUCE, w,
                 NULL_SEND | NULL_RECV, 1, 8, UCOLL_INT64, UCOLL_OP_SUM, 0, UCOLL_ERR_INVALID_ARG);

        /* unknown dtypes */
        const int bad_dtypes[] = {UCOLL_BFLOAT16 + 1, 99, -1, INT_MAX}; /* the first past the end */
        for (size_t d = 0; d < NELEM(bad_dtypes); d++)
            for (size_t i = 0; i < NELEM(data_colls); i++) {
                snprintf(what, sizeof(what), "unknown dtype %d", bad_dtypes[d]);
                bad_call(what, f, data_colls[i], w, 0, 4, 64, (ucoll_dtype_t)bad_dtypes[d],
                         UCOLL_OP_SUM, 0, UCOLL_ERR_INVALID_ARG);
            }

        /* unknown ops: out of range, a user handle never created, a freed user op */
        const int bad_ops[] = {UCOLL_OP_AVG + 1, -1, 999, 1000, 5000, INT_MIN};
        for (size_t o = 0; o < NELEM(bad_ops); o++)
            for (size_t i = 0; i < NELEM(op_colls); i++) {
                snprintf(what, sizeof(what), "unknown op %d", bad_ops[o]);
                bad_call(what, f, op_colls[i], w, 0, 4, 16, UCOLL_INT32, bad_ops[o], 0,
                         UCOLL_ERR_INVALID_ARG);
            }

        /* bitwise and logical ops on floating types */
        const ucoll_op_t int_only[] = {UCOLL_OP_BAND, UCOLL_OP_BOR, UCOLL_OP_BXOR,
                                       UCOLL_OP_LAND, UCOLL_OP_LOR, UCOLL_OP_LXOR};
        const ucoll_dtype_t floats[] = {UCOLL_FLOAT32, UCOLL_FLOAT64, UCOLL_FLOAT16,
                                        UCOLL_BFLOAT16};
        const char *const float_names[] = {"float32", "float64", "float16", "bfloat16"};
        for (size_t o = 0; o < NELEM(int_only); o++)
            for (size_t d = 0; d < NELEM(floats); d++)
                for (size_t i = 0; i < NELEM(op_colls); i++) {
                    snprintf(what, sizeof(what), "op %d on %s", int_only[o], float_names[d]);
                    bad_call(what, f, op_colls[i], w, 0, 4, 32, floats[d], int_only[o], 0,
                             UCOLL_ERR_INVALID_ARG);
                }

        /* AVG: on integer types, and with exscan or scan whatever the type */
        const ucoll_dtype_t ints[] = {UCOLL_INT8,  UCOLL_UINT8,  UCOLL_INT16, UCOLL_UINT16,
                                      UCOLL_INT32, UCOLL_UINT32, UCOLL_INT64, UCOLL_UINT64};
        for (size_t d = 0; d < NELEM(ints); d++)
            for (size_t i = 0; i < NELEM(op_colls); i++) {
                snprintf(what, sizeof(what), "avg on integer dtype %d", (int)ints[d]);
                bad_call(what, f, op_colls[i], w, 0, 4, 32, ints[d], UCOLL_OP_AVG, 0,
                         UCOLL_ERR_INVALID_ARG);
            }
        for (size_t d = 0; d < NELEM(floats); d++)
            for (size_t i = 0; i < 2; i++) { /* op_colls[0..1]: exscan, scan */
                snprintf(what, sizeof(what), "avg on %s", float_names[d]);
                bad_call(what, f, op_colls[i], w, 0, 4, 32, floats[d], UCOLL_OP_AVG, 0,
                         UCOLL_ERR_INVALID_ARG);
                bad_call(what, f, op_colls[i], w, IN_PLACE, 4, 32, floats[d], UCOLL_OP_AVG, 0,
                         UCOLL_ERR_INVALID_ARG);
            }

        /* root out of range */
        const int bad_roots[] = {-1, p, p + 1, INT_MAX, INT_MIN};
        const ucoll_coll_t rooted[] = {UCOLL_COLL_REDUCE, UCOLL_COLL_BCAST};
        for (size_t k = 0; k < NELEM(bad_roots); k++)
            for (size_t i = 0; i < NELEM(rooted); i++) {
                snprintf(what, sizeof(what), "root %d of %d ranks", bad_roots[k], p);
                bad_call(what, f, rooted[i], w, 0, 4, 16, UCOLL_INT32, UCOLL_OP_SUM, bad_roots[k],
                         UCOLL_ERR_INVALID_ARG);
                snprintf(what, sizeof(what), "root %d of %d ranks, count 0", bad_roots[k], p);
                bad_call(what, f, rooted[i], w, 0, 0, 16, UCOLL_INT32, UCOLL_OP_SUM, bad_roots[k],
                         UCOLL_ERR_INVALID_ARG);
            }

        /* count * element size beyond SIZE_MAX (the buffers are small: never touched) */
        const struct {
            ucoll_dtype_t dt;
            size_t count;
        } huge[] = {{UCOLL_INT16, SIZE_MAX / 2 + 1},
                    {UCOLL_INT32, SIZE_MAX / 4 + 1},
                    {UCOLL_FLOAT64, SIZE_MAX / 8 + 1},
                    {UCOLL_UINT64, SIZE_MAX},
                    {UCOLL_INT32, SIZE_MAX / 2}};
        for (size_t k = 0; k < NELEM(huge); k++)
            for (size_t i = 0; i < NELEM(data_colls); i++) {
                snprintf(what, sizeof(what), "count %zu of dtype %d (overflows size_t)",
                         huge[k].count, (int)huge[k].dt);
                bad_call(what, f, data_colls[i], w, 0, huge[k].count, 64, huge[k].dt, UCOLL_OP_SUM,
                         0, UCOLL_ERR_INVALID_ARG);
            }

        /* no communicator, or a pointer that is not one */
        static uint64_t garbage[64];
        for (size_t i = 0; i < NELEM(data_colls); i++) {
            bad_call("NULL comm", f, data_colls[i], NULL, 0, 4, 16, UCOLL_INT32, UCOLL_OP_SUM, 0,
                     UCOLL_ERR_INVALID_ARG);
            bad_call("comm pointer to zeroed memory", f, data_colls[i],
                     (ucoll_comm_t *)(void *)garbage, 0, 4, 16, UCOLL_INT32, UCOLL_OP_SUM, 0,
                     UCOLL_ERR_INVALID_ARG);
        }
        if (f != MPT_PERSISTENT) {
            bad_call("NULL comm", f, UCOLL_COLL_BARRIER, NULL, 0, 0, 0, UCOLL_INT32, UCOLL_OP_SUM,
                     0, UCOLL_ERR_INVALID_ARG);
            bad_call("comm pointer to zeroed memory", f, UCOLL_COLL_BARRIER,
                     (ucoll_comm_t *)(void *)garbage, 0, 0, 0, UCOLL_INT32, UCOLL_OP_SUM, 0,
                     UCOLL_ERR_INVALID_ARG);
        }

        /* a NULL request pointer: nothing may be started */
        if (f != MPT_BLOCKING) {
            for (size_t i = 0; i < NELEM(data_colls); i++)
                bad_call("NULL request pointer", f, data_colls[i], w, NULL_REQ, 4, 16, UCOLL_INT32,
                         UCOLL_OP_SUM, 0, UCOLL_ERR_INVALID_ARG);
            if (f == MPT_NONBLOCKING)
                bad_call("NULL request pointer", f, UCOLL_COLL_BARRIER, w, NULL_REQ, 0, 0,
                         UCOLL_INT32, UCOLL_OP_SUM, 0, UCOLL_ERR_INVALID_ARG);
        }
        snprintf(what, sizeof(what), "the %s argument errors", mpt_form_names[f]);
        usable(w, what);
    }

    /* a freed user op */
    {
        const char *name = "freed user op";
        ucoll_op_t op;
        if (expect(name, ucoll_op_create(never_called, NULL, 1, &op), UCOLL_OK)) {
            expect(name, ucoll_op_free(op), UCOLL_OK);
            for (int f = 0; f < MPT_NFORMS; f++)
                for (size_t i = 0; i < NELEM(op_colls); i++)
                    bad_call("freed user op", f, op_colls[i], w, 0, 4, 16, UCOLL_INT32, op, 0,
                             UCOLL_ERR_INVALID_ARG);
            expect("ucoll_op_free twice", ucoll_op_free(op), UCOLL_ERR_INVALID_ARG);
        }
        expect("ucoll_op_free(UCOLL_OP_SUM)", ucoll_op_free(UCOLL_OP_SUM), UCOLL_ERR_INVALID_ARG);
        expect("ucoll_op_create(NULL fn)", ucoll_op_create(NULL, NULL, 1, &op),
               UCOLL_ERR_INVALID_ARG);
        usable(w, "freed user op");
    }

    /* algorithm names */
    {
        const struct {
            ucoll_coll_t coll;
            const char *alg;
        } bad[] = {{UCOLL_COLL_EXSCAN, "no-such-algorithm"}, {UCOLL_COLL_EXSCAN, ""},
                   {UCOLL_COLL_EXSCAN, "doubling:0"},        {UCOLL_COLL_EXSCAN, "doubling:x"},
                   {UCOLL_COLL_EXSCAN, "doubling:-2"},       {UCOLL_COLL_EXSCAN, "AUTO"},
                   {UCOLL_COLL_SCAN, "roughly-halving"},     {UCOLL_COLL_REDUCE, "dissemination"},
                   {UCOLL_COLL_ALLREDUCE, "binomial"},       {UCOLL_COLL_BCAST, "rhrd"},
                   {UCOLL_COLL_BARRIER, "binomial"},         {UCOLL_COLL_BARRIER, "auto "}};
        for (size_t i = 0; i < NELEM(bad); i++) {
            snprintf(what, sizeof(what), "ucoll_set_algorithm(%s, \"%s\")",
                     mpt_coll_name(bad[i].coll), bad[i].alg);
            expect(what, ucoll_set_algorithm(w, bad[i].coll, bad[i].alg), UCOLL_ERR_INVALID_ARG);
        }
        expect("ucoll_set_algorithm(NULL name)", ucoll_set_algorithm(w, UCOLL_COLL_SCAN, NULL),
               UCOLL_ERR_INVALID_ARG);
        expect("ucoll_set_algorithm(collective 16)",
               ucoll_set_algorithm(w, (ucoll_coll_t)16, "auto"), UCOLL_ERR_INVALID_ARG);
        expect("ucoll_set_algorithm(collective -1)",
               ucoll_set_algorithm(w, (ucoll_coll_t)-1, "auto"), UCOLL_ERR_INVALID_ARG);
        expect("ucoll_set_algorithm(NULL comm)", ucoll_set_algorithm(NULL, UCOLL_COLL_SCAN, "auto"),
               UCOLL_ERR_INVALID_ARG);
        usable(w, "bad algorithm names");
    }

    /* communicator calls */
    {
        ucoll_comm_t *nc = (ucoll_comm_t *)(uintptr_t)0x1;
        expect("ucoll_comm_split(NULL newcomm)", ucoll_comm_split(w, 0, 0, NULL),
               UCOLL_ERR_INVALID_ARG);
        expect("ucoll_comm_split(NULL comm)", ucoll_comm_split(NULL, 0, 0, &nc),
               UCOLL_ERR_INVALID_ARG);
        n_checks++;
        if (nc != (ucoll_comm_t *)(uintptr_t)0x1)
            fail("ucoll_comm_split(NULL comm)", "wrote *newcomm although it failed");
        expect("ucoll_comm_free(world)", ucoll_comm_free(w), UCOLL_ERR_INVALID_ARG);
        expect("ucoll_comm_free(NULL)", ucoll_comm_free(NULL), UCOLL_ERR_INVALID_ARG);
        n_checks += 2;
        if (ucoll_comm_rank(NULL) != -1 || ucoll_comm_size(NULL) != -1)
            fail("ucoll_comm_rank/size(NULL)", "not -1");
        if (ucoll_comm_rank(w) != g_rank || ucoll_comm_size(w) != g_size)
            fail("ucoll_comm_rank/size(world)", "changed");
        ucoll_comm_t *again = (ucoll_comm_t *)(uintptr_t)0x1;
        expect("second ucoll_init", ucoll_init(&again), UCOLL_ERR_STATE);
        expect("ucoll_init(NULL)", ucoll_init(NULL), UCOLL_ERR_INVALID_ARG);
        usable(w, "communicator call errors");
    }
}

/* reduce with a NULL recvbuf is an error only at the root: on 1-rank communicators every rank
 * is the root, so every rank sees the error at once */
static void test_root_only(ucoll_comm_t *w)
{
    ucoll_comm_t *self = NULL;
    if (!expect("ucoll_comm_split(color = rank)", ucoll_comm_split(w, g_rank, 0, &self), UCOLL_OK))
        return;
    n_checks++;
    if (ucoll_comm_size(self) != 1 || ucoll_comm_rank(self) != 0) {
        fail("ucoll_comm_split(color = rank)", "size %d rank %d, expected 1 and 0",
             ucoll_comm_size(self), ucoll_comm_rank(self));
        return;
    }
    for (int f = 0; f < MPT_NFORMS; f++) {
        bad_call("1-rank comm: NULL recvbuf at the root", f, UCOLL_COLL_REDUCE, self, NULL_RECV, 4,
                 16, UCOLL_INT32, UCOLL_OP_SUM, 0, UCOLL_ERR_INVALID_ARG);
        bad_call("1-rank comm: root 1", f, UCOLL_COLL_REDUCE, self, 0, 4, 16, UCOLL_INT32,
                 UCOLL_OP_SUM, 1, UCOLL_ERR_INVALID_ARG);
        bad_call("1-rank comm: root 1", f, UCOLL_COLL_BCAST, self, 0, 4, 16, UCOLL_INT32,
                 UCOLL_OP_SUM, 1, UCOLL_ERR_INVALID_ARG);
    }
    usable(self, "errors on a 1-rank communicator");
    expect("ucoll_comm_free(1-rank comm)", ucoll_comm_free(self), UCOLL_OK);
    expect("ucoll_comm_free twice", ucoll_comm_free(self), UCOLL_ERR_STATE);
    expect("barrier on a freed comm", ucoll_barrier(self), UCOLL_ERR_STATE);

    /* the valid counterpart on world: NULL recvbuf everywhere but at the root */
    const char *name = "reduce with NULL recvbuf at non-roots";
    int64_t in[3] = {g_rank, 2 * g_rank, 1}, out[3] = {-1, -1, -1};
    const int root = g_size - 1;
    if (expect(name,
               ucoll_reduce(w, in, g_rank == root ? out : NULL, 3, UCOLL_INT64, UCOLL_OP_SUM, root),
               UCOLL_OK) &&
        g_rank == root) {
        int64_t s = (int64_t)g_size * (g_size - 1) / 2;
        n_checks++;
        if (out[0] != s || out[1] != 2 * s || out[2] != g_size)
            fail(name, "result %lld %lld %lld, expected %lld %lld %d", (long long)out[0],
                 (long long)out[1], (long long)out[2], (long long)s, (long long)(2 * s), g_size);
    }
    usable(w, "the 1-rank communicator tests");
}

/* ---------------------------------------------------------------- block collectives */

/* the arguments of one block collective's call */
typedef struct {
    ucoll_coll_t coll;
    const void *s;
    void *r;
    size_t n; /* count, sendcount or recvcount */
    const size_t *sc, *sd, *rc, *rd;
    ucoll_dtype_t dt;
    ucoll_op_t op;
    int root;
} blk_args_t;

static const char *blk_name(ucoll_coll_t c)
{
    static const char *const names[] = {"allgather",      "allgatherv", "reduce_scatter_block",
                                        "reduce_scatter", "alltoall",   "alltoallv",
                                        "gather",         "gatherv",    "scatter",
                                        "scatterv"};
    return c >= UCOLL_COLL_ALLGATHER && c <= UCOLL_COLL_SCATTERV ? names[c - UCOLL_COLL_ALLGATHER]
                                                                 : "?";
}

static ucoll_status_t blk_call(int form, ucoll_comm_t *c, const blk_args_t *a, ucoll_request_t **q)
{
#define FORM3(name, ...)                                                                           \
    (form == MPT_BLOCKING      ? ucoll_##name(__VA_ARGS__)                                         \
     : form == MPT_NONBLOCKING ? ucoll_i##name(__VA_ARGS__, q)                                     \
                               : ucoll_##name##_init(__VA_ARGS__, q))
    switch (a->coll) {
    case UCOLL_COLL_ALLGATHER:
        return FORM3(allgather, c, a->s, a->r, a->n, a->dt);
    case UCOLL_COLL_ALLGATHERV:
        return FORM3(allgatherv, c, a->s, a->n, a->r, a->rc, a->rd, a->dt);
    case UCOLL_COLL_REDUCE_SCATTER_BLOCK:
        return FORM3(reduce_scatter_block, c, a->s, a->r, a->n, a->dt, a->op);
    case UCOLL_COLL_REDUCE_SCATTER:
        return FORM3(reduce_scatter, c, a->s, a->r, a->rc, a->dt, a->op);
    case UCOLL_COLL_ALLTOALL:
        return FORM3(alltoall, c, a->s, a->r, a->n, a->dt);
    case UCOLL_COLL_ALLTOALLV:
        return FORM3(alltoallv, c, a->s, a->sc, a->sd, a->r, a->rc, a->rd, a->dt);
    case UCOLL_COLL_GATHER:
        return FORM3(gather, c, a->s, a->r, a->n, a->dt, a->root);
    case UCOLL_COLL_GATHERV:
        return FORM3(gatherv, c, a->s, a->n, a->r, a->rc, a->rd, a->dt, a->root);
    case UCOLL_COLL_SCATTER:
        return FORM3(scatter, c, a->s, a->r, a->n, a->dt, a->root);
    case UCOLL_COLL_SCATTERV:
        return FORM3(scatterv, c, a->s, a->sc, a->sd, a->r, a->n, a->dt, a->root);
    default:
        return UCOLL_ERR_INVALID_ARG;
    }
#undef FORM3
}

/* buffers of the block cases: 4 elements of int32 per rank, and guards */
static gbuf_t blk_sb, blk_rb;
static ucoll_comm_t *g_blk_comm;
enum { BLK_C = 4 };

/* where a case's buffer pointers lead: the guarded buffers, NULL, IN_PLACE or into the other */
enum { B_OWN, B_NULL, B_IN_PLACE, B_INTO_RECV, B_INTO_SEND };
static void *blk_ptr(int which, int send)
{
    switch (which) {
    case B_NULL:
        return NULL;
    case B_IN_PLACE:
        return (void *)UCOLL_IN_PLACE;
    case B_INTO_RECV: /* one element into the receive buffer */
        return (unsigned char *)gb_ptr(&blk_rb) + 4;
    case B_INTO_SEND:
        return (unsigned char *)gb_ptr(&blk_sb) + 4;
    default:
        return gb_ptr(send ? &blk_sb : &blk_rb);
    }
}

/* one bad block call in every form: INVALID_ARG, every byte of both buffers and the request
 * pointer unchanged (an unexpected success is completed, so the ranks stay in step) */
static void blk_bad(const char *what, blk_args_t a, int send, int recv, int null_req)
{
    a.s = blk_ptr(send, 1);
    a.r = blk_ptr(recv, 0);
    for (int f = 0; f < MPT_NFORMS; f++) {
        if (null_req && f == MPT_BLOCKING)
            continue;
        char name[256];
        snprintf(name, sizeof(name), "%s %s: %s", blk_name(a.coll), mpt_form_names[f], what);
        gb_snapshot(&blk_sb);
        gb_snapshot(&blk_rb);
        ucoll_request_t *req = REQ_SENTINEL;
        ucoll_status_t st = blk_call(f, g_blk_comm, &a, null_req ? NULL : &req);
        if (!expect(name, st, UCOLL_ERR_INVALID_ARG) && st == UCOLL_OK && f != MPT_BLOCKING &&
            !null_req) {
            if (f == MPT_PERSISTENT)
                ucoll_start(req);
            ucoll_wait(req);
            ucoll_request_free(req);
            req = REQ_SENTINEL;
        }
        gb_check_unchanged(&blk_sb, name, "sendbuf");
        gb_check_unchanged(&blk_rb, name, "recvbuf");
        n_checks++;
        if (req != REQ_SENTINEL)
            fail(name, "the request pointer was written although the call failed");
    }
}

/* The block collectives' argument errors. Errors every rank sees alike are made by every rank;
 * an error only a root sees (NULL receive arrays of gatherv, ...) is made by every rank naming
 * itself the root; one only non-roots see (IN_PLACE off the root) by ranks 1.. with root 0,
 * rank 0 making no call. Each is found before anything is sent, so the ranks stay in step. */
/* ucoll_mem_alloc / ucoll_mem_free: bad arguments refused; memory zeroed, usable by a
 * collective, freed exactly once */
static void test_mem_alloc(ucoll_comm_t *w)
{
    void *p = (void *)&g_rank;
    expect("ucoll_mem_alloc(0)", ucoll_mem_alloc(0, &p), UCOLL_ERR_INVALID_ARG);
    if (p != (void *)&g_rank)
        fail("ucoll_mem_alloc(0)", "changed *ptr");
    expect("ucoll_mem_alloc(ptr NULL)", ucoll_mem_alloc(64, NULL), UCOLL_ERR_INVALID_ARG);
    expect("ucoll_mem_free(NULL)", ucoll_mem_free(NULL), UCOLL_ERR_INVALID_ARG);
    long *heap = xalloc(64);
    expect("ucoll_mem_free(malloc's)", ucoll_mem_free(heap), UCOLL_ERR_INVALID_ARG);
    free(heap);
    long *in = NULL, *out = NULL;
    if (!expect("ucoll_mem_alloc", ucoll_mem_alloc(7 * sizeof(long), (void **)&in), UCOLL_OK))
        return;
    if (!expect("ucoll_mem_alloc", ucoll_mem_alloc(7 * sizeof(long), (void **)&out), UCOLL_OK)) {
        ucoll_mem_free(in);
        return;
    }
    for (int i = 0; i < 7; i++) {
        if (in[i] != 0 || out[i] != 0)
            fail("ucoll_mem_alloc", "memory not zeroed at %d", i);
        in[i] = g_rank + i;
    }
    if (expect("allreduce in ucoll_mem_alloc memory",
               ucoll_allreduce(w, in, out, 7, UCOLL_INT64, UCOLL_OP_SUM), UCOLL_OK))
        for (int i = 0; i < 7; i++)
            if (out[i] != (long)g_size * (g_size - 1) / 2 + (long)g_size * i)
                fail("allreduce in ucoll_mem_alloc memory", "element %d: %ld", i, out[i]);
    expect("ucoll_mem_free(inside)", ucoll_mem_free(in + 1), UCOLL_ERR_INVALID_ARG);
    expect("ucoll_mem_free", ucoll_mem_free(in), UCOLL_OK);
    expect("ucoll_mem_free twice", ucoll_mem_free(in), UCOLL_ERR_INVALID_ARG);
    expect("ucoll_mem_free", ucoll_mem_free(out), UCOLL_OK);
}

static void test_block_arguments(ucoll_comm_t *w)
{
    const int p = g_size, r = g_rank;
    const size_t c = BLK_C, big = SIZE_MAX / 2;
    size_t *cnt = xalloc((size_t)p * sizeof(size_t)), *dsp = xalloc((size_t)p * sizeof(size_t));
    size_t *cnt2 = xalloc((size_t)p * sizeof(size_t)), *dsp2 = xalloc((size_t)p * sizeof(size_t));
    g_blk_comm = w;
    gb_init(&blk_sb, (size_t)p * c * 4 + 64, 11);
    gb_init(&blk_rb, (size_t)p * c * 4 + 64, 12);
    for (int j = 0; j < p; j++)
        cnt[j] = cnt2[j] = c, dsp[j] = dsp2[j] = (size_t)j * c;
    const blk_args_t base = {.n = c,
                             .sc = cnt,
                             .sd = dsp,
                             .rc = cnt2,
                             .rd = dsp2,
                             .dt = UCOLL_INT32,
                             .op = UCOLL_OP_SUM,
                             .root = 0};
    blk_args_t a;
    for (ucoll_coll_t coll = UCOLL_COLL_ALLGATHER; coll <= UCOLL_COLL_SCATTERV; coll++) {
        const int rooted = coll >= UCOLL_COLL_GATHER;
        const int scatters = coll == UCOLL_COLL_SCATTER || coll == UCOLL_COLL_SCATTERV;
        a = base, a.coll = coll;
        blk_bad("NULL request pointer", a, B_OWN, B_OWN, 1);
        a.dt = (ucoll_dtype_t)99;
        blk_bad("unknown dtype", a, B_OWN, B_OWN, 0);
        a = base, a.coll = coll, a.root = r; /* every rank its own root: the root's view */
        blk_bad("NULL sendbuf", a, B_NULL, B_OWN, 0);
        blk_bad("NULL recvbuf", a, B_OWN, B_NULL, 0);
        blk_bad("sendbuf overlapping recvbuf", a, B_INTO_RECV, B_OWN, 0);
        blk_bad("recvbuf overlapping sendbuf", a, B_OWN, B_INTO_SEND, 0);
        blk_bad("sendbuf == recvbuf", a, B_INTO_RECV, B_INTO_RECV, 0);
        if (!scatters)
            blk_bad("UCOLL_IN_PLACE without recvbuf", a, B_IN_PLACE, B_NULL, 0);
        else
            blk_bad("UCOLL_IN_PLACE as sendbuf", a, B_IN_PLACE, B_OWN, 0);
        if (coll == UCOLL_COLL_ALLGATHER || coll == UCOLL_COLL_REDUCE_SCATTER_BLOCK ||
            coll == UCOLL_COLL_ALLTOALL || coll == UCOLL_COLL_GATHER ||
            coll == UCOLL_COLL_SCATTER) {
            a.n = big; /* count * size (times p) beyond SIZE_MAX */
            blk_bad("count beyond SIZE_MAX bytes", a, B_OWN, B_OWN, 0);
            a.n = c;
        }
        if (rooted) {
            a.root = -1;
            blk_bad("root -1", a, B_OWN, B_OWN, 0);
            a.root = p;
            blk_bad("root = size", a, B_OWN, B_OWN, 0);
            /* IN_PLACE off the root: ranks 1.. only */
            a.root = 0;
            if (r != 0)
                blk_bad("UCOLL_IN_PLACE off the root", a, scatters ? B_OWN : B_IN_PLACE,
                        scatters ? B_IN_PLACE : B_OWN, 0);
        }
    }
    /* ops of the reductions */
    for (ucoll_coll_t coll = UCOLL_COLL_REDUCE_SCATTER_BLOCK; coll <= UCOLL_COLL_REDUCE_SCATTER;
         coll++) {
        a = base, a.coll = coll, a.op = 1234;
        blk_bad("unknown op", a, B_OWN, B_OWN, 0);
        a.op = UCOLL_OP_BAND, a.dt = UCOLL_FLOAT64;
        blk_bad("BAND on float64", a, B_OWN, B_OWN, 0);
    }
    /* the count arrays: NULL, a sum or extent beyond SIZE_MAX, sendcount != recvcounts[rank] */
    const ucoll_coll_t with_rc[] = {UCOLL_COLL_ALLGATHERV, UCOLL_COLL_REDUCE_SCATTER,
                                    UCOLL_COLL_ALLTOALLV, UCOLL_COLL_GATHERV};
    for (size_t i = 0; i < NELEM(with_rc); i++) {
        a = base, a.coll = with_rc[i], a.root = r;
        a.rc = NULL;
        blk_bad("NULL recvcounts", a, B_OWN, B_OWN, 0);
        a.rc = cnt2;
        if (a.coll != UCOLL_COLL_REDUCE_SCATTER) {
            a.rd = NULL;
            blk_bad("NULL receive displacements", a, B_OWN, B_OWN, 0);
            a.rd = dsp2;
            dsp2[p - 1] = SIZE_MAX - 1; /* displacement + count wraps */
            blk_bad("displacement + count beyond SIZE_MAX", a, B_OWN, B_OWN, 0);
            dsp2[p - 1] = SIZE_MAX / 2; /* the extent's bytes do */
            blk_bad("extent beyond SIZE_MAX bytes", a, B_OWN, B_OWN, 0);
            dsp2[p - 1] = (size_t)(p - 1) * c;
        } else {
            cnt2[0] = SIZE_MAX - 1; /* the sum wraps */
            blk_bad("sum of recvcounts beyond SIZE_MAX", a, B_OWN, B_OWN, 0);
            cnt2[0] = SIZE_MAX / 2; /* its bytes do */
            blk_bad("recvcounts' bytes beyond SIZE_MAX", a, B_OWN, B_OWN, 0);
            cnt2[0] = c;
        }
        if (a.coll == UCOLL_COLL_ALLGATHERV || a.coll == UCOLL_COLL_GATHERV) {
            a.n = c - 1;
            blk_bad("sendcount != recvcounts[rank]", a, B_OWN, B_OWN, 0);
        }
    }
    a = base, a.coll = UCOLL_COLL_ALLTOALLV;
    a.sc = NULL;
    blk_bad("NULL sendcounts", a, B_OWN, B_OWN, 0);
    a.sc = cnt, a.sd = NULL;
    blk_bad("NULL sdispls", a, B_OWN, B_OWN, 0);
    a.sd = dsp;
    cnt[r] = c - 1;
    blk_bad("sendcounts[rank] != recvcounts[rank]", a, B_OWN, B_OWN, 0);
    cnt[r] = c;
    dsp[0] = SIZE_MAX - 2;
    blk_bad("send displacement + count beyond SIZE_MAX", a, B_OWN, B_OWN, 0);
    dsp[0] = 0;
    a = base, a.coll = UCOLL_COLL_SCATTERV, a.root = r;
    a.sc = NULL;
    blk_bad("NULL sendcounts at the root", a, B_OWN, B_OWN, 0);
    a.sc = cnt, a.sd = NULL;
    blk_bad("NULL displs at the root", a, B_OWN, B_OWN, 0);
    a.sd = dsp, a.n = c + 1;
    blk_bad("recvcount != sendcounts[root]", a, B_OWN, B_OWN, 0);
    /* the count arrays were only read */
    n_checks++;
    for (int j = 0; j < p; j++)
        if (cnt[j] != c || cnt2[j] != c || dsp[j] != (size_t)j * c || dsp2[j] != (size_t)j * c) {
            fail("block collectives", "a count array changed at %d", j);
            break;
        }
    gb_free(&blk_sb);
    gb_free(&blk_rb);
    free(cnt), free(cnt2), free(dsp), free(dsp2);
    usable(w, "the block collectives' bad arguments");
}

/* ---------------------------------------------------------------- requests */

static void test_requests(ucoll_comm_t *w)
{
    ucoll_request_t *req = NULL, *stale;
    int32_t in[4] = {1, 2, 3, 4}, out[4];
    int not_a_request[64] = {0};

    /* a freed nonblocking request */
    if (expect("ibarrier", ucoll_ibarrier(w, &req), UCOLL_OK)) {
        expect("wait ibarrier", ucoll_wait(req), UCOLL_OK);
        expect("ucoll_start on a nonblocking request", ucoll_start(req), UCOLL_ERR_STATE);
        expect("free ibarrier", ucoll_request_free(req), UCOLL_OK);
        stale = req; /* checked before any other request can take its address */
        expect("ucoll_test on a freed request", ucoll_test(stale), UCOLL_ERR_INVALID_ARG);
        expect("ucoll_wait on a freed request", ucoll_wait(stale), UCOLL_ERR_INVALID_ARG);
        expect("ucoll_start on a freed request", ucoll_start(stale), UCOLL_ERR_INVALID_ARG);
        expect("ucoll_request_free twice", ucoll_request_free(stale), UCOLL_ERR_INVALID_ARG);
    }
    /* a freed persistent request */
    if (expect("allreduce_init",
               ucoll_allreduce_init(w, in, out, 4, UCOLL_INT32, UCOLL_OP_SUM, &req), UCOLL_OK)) {
        expect("start", ucoll_start(req), UCOLL_OK);
        expect("ucoll_start on an active persistent request", ucoll_start(req), UCOLL_ERR_STATE);
        if (expect("ucoll_request_free on an active request", ucoll_request_free(req),
                   UCOLL_ERR_STATE)) {
            expect("wait", ucoll_wait(req), UCOLL_OK);
            n_checks++;
            for (int i = 0; i < 4; i++)
                if (out[i] != (i + 1) * g_size) {
                    fail("persistent allreduce", "element %d = %d, expected %d", i, out[i],
                         (i + 1) * g_size);
                    break;
                }
            expect("free persistent", ucoll_request_free(req), UCOLL_OK);
            stale = req;
            expect("ucoll_start on a freed persistent request", ucoll_start(stale),
                   UCOLL_ERR_INVALID_ARG);
            expect("ucoll_test on a freed persistent request", ucoll_test(stale),
                   UCOLL_ERR_INVALID_ARG);
        }
    }
    ucoll_request_t *fake = (ucoll_request_t *)(void *)not_a_request;
    expect("ucoll_test on a pointer that never was a request", ucoll_test(fake),
           UCOLL_ERR_INVALID_ARG);
    expect("ucoll_wait on a pointer that never was a request", ucoll_wait(fake),
           UCOLL_ERR_INVALID_ARG);
    expect("ucoll_start on a pointer that never was a request", ucoll_start(fake),
           UCOLL_ERR_INVALID_ARG);
    expect("ucoll_request_free on a pointer that never was a request", ucoll_request_free(fake),
           UCOLL_ERR_INVALID_ARG);
    expect("ucoll_test(NULL)", ucoll_test(NULL), UCOLL_ERR_INVALID_ARG);
    expect("ucoll_wait(NULL)", ucoll_wait(NULL), UCOLL_ERR_INVALID_ARG);
    expect("ucoll_start(NULL)", ucoll_start(NULL), UCOLL_ERR_INVALID_ARG);
    expect("ucoll_request_free(NULL)", ucoll_request_free(NULL), UCOLL_ERR_INVALID_ARG);
    n_checks++;
    for (size_t i = 0; i < NELEM(not_a_request); i++)
        if (not_a_request[i] != 0) {
            fail("calls on a pointer that never was a request", "wrote into it");
            break;
        }
    usable(w, "request errors");
}

/* ---------------------------------------------------------------- misuse */

/* A call whose send and receive buffers overlap (without UCOLL_IN_PLACE), recvbuf `shift`
 * elements after sendbuf in one guarded mapping: UCOLL_ERR_INVALID_ARG, nothing changed. */
static void alias_call(int form, ucoll_coll_t coll, ucoll_comm_t *c, size_t count, long shift)
{
    char name[256];
    snprintf(name, sizeof(name), "%s %s: recvbuf %ld elements after sendbuf (overlapping)",
             mpt_coll_name(coll), mpt_form_names[form], shift);
    const size_t esz = sizeof(int32_t), span = count + 4;
    gbuf_t b;
    gb_init(&b, span * esz, 3);
    int32_t *s = (int32_t *)gb_ptr(&b) + 2;
    int32_t *r = s + shift;
    ucoll_request_t *req = REQ_SENTINEL;
    ucoll_status_t st =
        mpt_call((mpt_form_t)form, coll, c, s, r, count, UCOLL_INT32, UCOLL_OP_SUM, 0, &req);
    if (!expect(name, st, UCOLL_ERR_INVALID_ARG) && st == UCOLL_OK && form != MPT_BLOCKING) {
        if (form == MPT_NONBLOCKING)
            ucoll_wait(req);
        ucoll_request_free(req);
        req = REQ_SENTINEL;
    }
    gb_check_unchanged(&b, name, "the buffers");
    n_checks++;
    if (req != REQ_SENTINEL)
        fail(name, "the request pointer was written although the call failed");
    gb_free(&b);
}

static void check_i64(const char *name, const int64_t *got, const int64_t *want, size_t n)
{
    n_checks++;
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i]) {
            fail(name, "element %zu = %lld, expected %lld", i, (long long)got[i],
                 (long long)want[i]);
            return;
        }
}

static void test_aliasing(ucoll_comm_t *w)
{
    const long shifts[] = {0, 1, -1, 3, -3};
    /* reduce below: at a non-root recvbuf is unused, so only a root may refuse */
    for (size_t k = 0; k < NELEM(op_colls); k++)
        for (int f = 0; f < MPT_NFORMS && op_colls[k] != UCOLL_COLL_REDUCE; f++)
            for (size_t j = 0; j < NELEM(shifts); j++)
                alias_call(f, op_colls[k], w, 4, shifts[j]);
    usable(w, "overlapping buffers");

    /* adjacent, not overlapping: fine */
    const char *name = "allreduce with recvbuf right after sendbuf";
    int64_t both[8], want[4];
    for (int i = 0; i < 4; i++) {
        both[i] = g_rank + i;
        both[4 + i] = -1;
        want[i] = (int64_t)g_size * (g_size - 1) / 2 + (int64_t)g_size * i;
    }
    if (expect(name, ucoll_allreduce(w, both, both + 4, 4, UCOLL_INT64, UCOLL_OP_SUM), UCOLL_OK))
        check_i64(name, both + 4, want, 4);

    /* reduce: recvbuf is not used at a non-root, so there it may be anything */
    name = "reduce with recvbuf == sendbuf at the non-roots";
    int64_t in[4], out[4] = {-1, -1, -1, -1};
    for (int i = 0; i < 4; i++)
        in[i] = g_rank + i;
    ucoll_status_t st = ucoll_reduce(w, in, g_rank == 0 ? (void *)out : (void *)in, 4, UCOLL_INT64,
                                     UCOLL_OP_SUM, 0);
    if (expect(name, st, UCOLL_OK) && g_rank == 0)
        check_i64(name, out, want, 4);
    for (int i = 0; i < 4; i++)
        want[i] = g_rank + i;
    check_i64("reduce at a non-root: sendbuf unchanged", in, want, 4);

    /* reduce at the root of a 1-rank communicator: recvbuf counts there */
    ucoll_comm_t *self = NULL;
    if (expect("ucoll_comm_split(color = rank) for reduce aliasing",
               ucoll_comm_split(w, g_rank, 0, &self), UCOLL_OK)) {
        for (int f = 0; f < MPT_NFORMS; f++)
            alias_call(f, UCOLL_COLL_REDUCE, self, 4, 0);
        expect("ucoll_comm_free", ucoll_comm_free(self), UCOLL_OK);
    }
    usable(w, "overlapping buffers of reduce");
}

static void sum_i64(const void *in, void *inout, size_t n, ucoll_dtype_t dt, void *arg)
{
    (void)dt, (void)arg;
    for (size_t i = 0; i < n; i++) {
        int64_t a, b;
        memcpy(&a, (const char *)in + 8 * i, 8);
        memcpy(&b, (char *)inout + 8 * i, 8);
        b += a;
        memcpy((char *)inout + 8 * i, &b, 8);
    }
}

static void max_i64(const void *in, void *inout, size_t n, ucoll_dtype_t dt, void *arg)
{
    (void)dt, (void)arg;
    for (size_t i = 0; i < n; i++) {
        int64_t a, b;
        memcpy(&a, (const char *)in + 8 * i, 8);
        memcpy(&b, (char *)inout + 8 * i, 8);
        b = a > b ? a : b;
        memcpy((char *)inout + 8 * i, &b, 8);
    }
}

/* a user op that is in use by a request that is not freed cannot be freed */
static void test_op_in_use(ucoll_comm_t *w)
{
    ucoll_op_t sum, other;
    int64_t in[3], out[3], want[3];
    for (int i = 0; i < 3; i++) {
        in[i] = g_rank * 10 + i;
        want[i] = (int64_t)10 * g_size * (g_size - 1) / 2 + (int64_t)g_size * i;
    }
    if (!expect("op_create(sum)", ucoll_op_create(sum_i64, NULL, 1, &sum), UCOLL_OK))
        return;
    ucoll_request_t *req = NULL;
    const char *name = "persistent allreduce with a user op that op_free refused";
    if (expect("allreduce_init with a user op",
               ucoll_allreduce_init(w, in, out, 3, UCOLL_INT64, sum, &req), UCOLL_OK)) {
        expect("ucoll_op_free of an op a persistent request uses", ucoll_op_free(sum),
               UCOLL_ERR_STATE);
        /* had the free gone through, this create would take the same handle */
        if (expect("op_create(max)", ucoll_op_create(max_i64, NULL, 1, &other), UCOLL_OK)) {
            n_checks++;
            if (other == sum)
                fail(name, "a new op got the handle of the op in use");
        }
        for (int round = 0; round < 2; round++) {
            memset(out, 0xff, sizeof(out));
            if (expect(name, ucoll_start(req), UCOLL_OK) && expect(name, ucoll_wait(req), UCOLL_OK))
                check_i64(name, out, want, 3);
        }
        expect("ucoll_op_free of an op a completed, unfreed request uses", ucoll_op_free(sum),
               UCOLL_ERR_STATE);
        expect("request_free", ucoll_request_free(req), UCOLL_OK);
        expect("op_free(max)", ucoll_op_free(other), UCOLL_OK);
    }
    name = "nonblocking allreduce with a user op that op_free refused";
    memset(out, 0xff, sizeof(out));
    if (expect("iallreduce with a user op", ucoll_iallreduce(w, in, out, 3, UCOLL_INT64, sum, &req),
               UCOLL_OK)) {
        expect("ucoll_op_free of an op an active request uses", ucoll_op_free(sum),
               UCOLL_ERR_STATE);
        if (expect(name, ucoll_wait(req), UCOLL_OK))
            check_i64(name, out, want, 3);
        expect("ucoll_op_free of an op a completed, unfreed request uses", ucoll_op_free(sum),
               UCOLL_ERR_STATE);
        expect("request_free", ucoll_request_free(req), UCOLL_OK);
    }
    expect("ucoll_op_free once no request uses it", ucoll_op_free(sum), UCOLL_OK);
    expect("ucoll_op_free twice", ucoll_op_free(sum), UCOLL_ERR_INVALID_ARG);
    usable(w, "freeing an op in use");
}

/* what a user op that calls ucoll got back */
typedef struct {
    ucoll_comm_t *w;
    int calls;
    int nst;
    ucoll_status_t st[16];
} reentry_t;

static void reentrant_sum(const void *in, void *inout, size_t n, ucoll_dtype_t dt, void *arg)
{
    reentry_t *r = arg;
    int64_t x = 1, y = 0;
    ucoll_request_t *req = REQ_SENTINEL;
    ucoll_comm_t *nc = NULL;
    ucoll_op_t op;
    r->calls++;
    r->nst = 0;
    r->st[r->nst++] = ucoll_barrier(r->w);
    r->st[r->nst++] = ucoll_allreduce(r->w, &x, &y, 1, UCOLL_INT64, UCOLL_OP_SUM);
    r->st[r->nst++] = ucoll_iallreduce(r->w, &x, &y, 1, UCOLL_INT64, UCOLL_OP_SUM, &req);
    r->st[r->nst++] = ucoll_allreduce_init(r->w, &x, &y, 1, UCOLL_INT64, UCOLL_OP_SUM, &req);
    r->st[r->nst++] = ucoll_bcast(r->w, &x, 1, UCOLL_INT64, 0);
    r->st[r->nst++] = ucoll_comm_split(r->w, 0, 0, &nc);
    r->st[r->nst++] = ucoll_set_algorithm(r->w, UCOLL_COLL_ALLREDUCE, "auto");
    r->st[r->nst++] = ucoll_op_create(sum_i64, NULL, 1, &op);
    r->st[r->nst++] = ucoll_finalize(r->w);
    r->st[r->nst++] = ucoll_init(&nc);
    if (req != REQ_SENTINEL || nc != NULL || x != 1 || y != 0)
        r->st[r->nst++] = UCOLL_OK; /* a call wrote through its arguments */
    sum_i64(in, inout, n, dt, NULL);
}

static void test_call_from_user_op(ucoll_comm_t *w)
{
    reentry_t r = {w, 0, 0, {0}};
    ucoll_op_t op;
    if (!expect("op_create(reentrant)", ucoll_op_create(reentrant_sum, &r, 1, &op), UCOLL_OK))
        return;
    int64_t in[2] = {g_rank, 1}, out[2] = {-1, -1};
    const int64_t want[2] = {(int64_t)g_size * (g_size - 1) / 2, g_size};
    const char *name = "allreduce with a user op that calls ucoll";
    if (expect(name, ucoll_allreduce(w, in, out, 2, UCOLL_INT64, op), UCOLL_OK))
        check_i64(name, out, want, 2);
    /* with some process counts not every rank applies the op; some rank must */
    int64_t calls = r.calls, all_calls = 0;
    if (expect(name, ucoll_allreduce(w, &calls, &all_calls, 1, UCOLL_INT64, UCOLL_OP_SUM),
               UCOLL_OK)) {
        n_checks++;
        if (all_calls == 0)
            fail(name, "the user op was called on no rank");
    }
    for (int i = 0; i < r.nst; i++)
        expect("a ucoll call from inside a user op", r.st[i], UCOLL_ERR_STATE);
    expect("op_free(reentrant)", ucoll_op_free(op), UCOLL_OK);
    usable(w, "ucoll calls from inside a user op");
}

/* a forked child of an initialised process: every call is refused, and nothing of its goes to
 * the parent's peers */
static void test_fork_child(ucoll_comm_t *w)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        fail("fork", "%s", strerror(errno));
        return;
    }
    if (pid == 0) {
        int bad = 0;
        int64_t x = 5, y = -1;
        ucoll_request_t *req = REQ_SENTINEL;
        ucoll_comm_t *nc = NULL;
        ucoll_op_t op;
        ucoll_status_t st[] = {
            ucoll_barrier(w),
            ucoll_allreduce(w, &x, &y, 1, UCOLL_INT64, UCOLL_OP_SUM),
            ucoll_bcast(w, &x, 1, UCOLL_INT64, 0),
            ucoll_iallreduce(w, &x, &y, 1, UCOLL_INT64, UCOLL_OP_SUM, &req),
            ucoll_comm_split(w, 0, 0, &nc),
            ucoll_op_create(sum_i64, NULL, 1, &op),
            ucoll_finalize(w),
            ucoll_init(&nc),
        };
        for (size_t i = 0; i < NELEM(st); i++)
            if (st[i] != UCOLL_ERR_STATE) {
                printf("FAIL rank %d: forked child: call %zu gave %s, expected ERR_STATE\n", g_rank,
                       i, st_name(st[i]));
                bad = 1;
            }
        if (y != -1 || x != 5 || req != REQ_SENTINEL || nc != NULL) {
            printf("FAIL rank %d: forked child: a refused call wrote through its arguments\n",
                   g_rank);
            bad = 1;
        }
        fflush(stdout);
        _exit(bad);
    }
    int status = 0;
    n_checks++;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail("forked child", "exited with status 0x%x, expected 0", (unsigned)status);
    /* the parents' next collectives see only each other's data */
    int64_t in[3] = {g_rank, 1, 2 * g_rank}, out[3] = {-1, -1, -1};
    const int64_t s = (int64_t)g_size * (g_size - 1) / 2;
    const int64_t want[3] = {s, g_size, 2 * s};
    const char *name = "allreduce in the parents after a forked child called ucoll";
    if (expect(name, ucoll_allreduce(w, in, out, 3, UCOLL_INT64, UCOLL_OP_SUM), UCOLL_OK))
        check_i64(name, out, want, 3);
    usable(w, "a forked child's calls");
}

static void test_misuse(ucoll_comm_t *w)
{
    test_aliasing(w);
    test_op_in_use(w);
    test_call_from_user_op(w);
    test_fork_child(w);
}

/* ---------------------------------------------------------------- mismatched counts */

/* rank's int32 data under salt (only compared for being unchanged, or the root's arriving) */
static void fill_i32(int32_t *p, size_t n, int rank, int salt)
{
    mpt_fill_input(p, n, UCOLL_INT32, UCOLL_OP_BXOR, rank, (uint64_t)salt);
}

/* One mismatched collective: coll with count my_count on this rank (root 0 for bcast).
 * `detector`: the rank that must get ERR_TRUNCATED (-1: any one rank must). */
static void mismatch(ucoll_comm_t *w, const char *what, ucoll_coll_t coll, size_t my_count,
                     size_t root_count, int detector)
{
    char name[256];
    snprintf(name, sizeof(name), "mismatched counts: %s", what);
    ucoll_comm_t *c = failing_comm(w, name);
    if (c == NULL)
        return;
    gbuf_t sb, rb;
    gb_init(&sb, my_count * 4, 3);
    gb_init(&rb, my_count * 4, 4);
    fill_i32(gb_ptr(&sb), my_count, g_rank, 7);
    if (coll == UCOLL_COLL_BCAST && g_rank == 0)
        fill_i32(gb_ptr(&rb), my_count, 0, 11);
    gb_snapshot(&sb);
    gb_snapshot(&rb);
    double t0 = now();
    ucoll_status_t st =
        coll == UCOLL_COLL_BCAST
            ? ucoll_bcast(c, gb_ptr(&rb), my_count, UCOLL_INT32, 0)
            : ucoll_allreduce(c, gb_ptr(&sb), gb_ptr(&rb), my_count, UCOLL_INT32, UCOLL_OP_BXOR);
    double took = now() - t0;

    n_checks++;
    if (took > g_timeout + 5)
        fail(name, "the call took %.1f s, more than UCOLL_TIMEOUT + 5 s", took);
    gb_check_guards(&rb, name, "recvbuf");
    gb_check_unchanged(&sb, name, "sendbuf");
    if (coll == UCOLL_COLL_BCAST && g_rank == 0)
        gb_check_unchanged(&rb, name, "the root's buffer");
    n_checks++;
    if (st != UCOLL_OK && st != UCOLL_ERR_TRUNCATED && st != UCOLL_ERR_TIMED_OUT)
        fail(name, "got %s, expected ERR_TRUNCATED, ERR_TIMED_OUT or OK", st_name(st));
    if (st == UCOLL_OK && coll == UCOLL_COLL_BCAST && g_rank != 0) {
        /* a rank that returns OK got the root's data for its count */
        int32_t *want = xalloc(my_count * 4 + 4);
        fill_i32(want, my_count, 0, 11);
        n_checks++;
        if (my_count > root_count || memcmp(want, gb_ptr(&rb), my_count * 4) != 0)
            fail(name, "returned OK with data that is not the root's");
        free(want);
    }
    if (st == UCOLL_OK && coll == UCOLL_COLL_ALLREDUCE)
        fail(name, "an allreduce with mismatched counts returned OK");

    /* Ranks leave at different times (a rank waiting for one that gave up leaves at its
     * deadline), and a rank that enters the next collective UCOLL_TIMEOUT late makes the
     * others time out there too. Every rank started this call within moments of the others
     * (after the barrier of usable()), so all have left it by t0 + UCOLL_TIMEOUT + 1 s. */
    double resume = t0 + g_timeout + 1.0, left;
    while ((left = resume - now()) > 0) {
        struct timespec ts = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
        nanosleep(&ts, NULL);
    }

    /* every rank's status, to every rank (over world: the failed comm may be revoked) */
    int32_t *all = calloc((size_t)g_size, sizeof(*all)), *mine = calloc((size_t)g_size, 4);
    mine[g_rank] = (int32_t)st - 100; /* nonzero even for OK */
    if (expect("allreduce of the statuses",
               ucoll_allreduce(w, mine, all, (size_t)g_size, UCOLL_INT32, UCOLL_OP_SUM),
               UCOLL_OK)) {
        int truncated = 0;
        char list[512] = "";
        size_t len = 0;
        for (int r = 0; r < g_size; r++) {
            ucoll_status_t s = (ucoll_status_t)(all[r] + 100);
            truncated += s == UCOLL_ERR_TRUNCATED;
            len += (size_t)snprintf(list + len, sizeof(list) - len < 1 ? 1 : sizeof(list) - len,
                                    " %d:%s", r, st_name(s));
            if (len >= sizeof(list))
                len = sizeof(list) - 1;
        }
        n_checks++;
        if (detector >= 0 && (ucoll_status_t)(all[detector] + 100) != UCOLL_ERR_TRUNCATED) {
            if (g_rank == detector)
                fail(name, "rank %d got %s, expected ERR_TRUNCATED (statuses:%s)", detector,
                     st_name((ucoll_status_t)(all[detector] + 100)), list);
        } else if (detector < 0 && truncated == 0 && g_rank == 0) {
            fail(name, "no rank reported ERR_TRUNCATED (statuses:%s)", list);
        }
        if (g_rank == 0)
            printf("      %s: statuses%s\n", name, list);
    }
    free(all);
    free(mine);
    gb_free(&sb);
    gb_free(&rb);
    retire_comm(w, c, st, name);
}

static void test_mismatch(ucoll_comm_t *w)
{
    const size_t n = 16;
    mismatch(w, "bcast, rank 1's count 8 < the root's 16", UCOLL_COLL_BCAST,
             g_rank == 1 ? n / 2 : n, n, 1);
    mismatch(w, "bcast, rank 1's count 24 > the root's 16", UCOLL_COLL_BCAST,
             g_rank == 1 ? n + n / 2 : n, n, 1);
    mismatch(w, "allreduce, last rank's count 4 < the others' 8", UCOLL_COLL_ALLREDUCE,
             g_rank == g_size - 1 ? 4 : 8, 8, -1);
    /* lengths on either side of the on-host channel's limit (4096 B): one rank waits on the
     * shared-memory rings for a message that came through UCX, or the other way round */
    mismatch(w, "bcast, rank 1's count 800 (3200 B, on-host rings) < the root's 1600 (6400 B, UCX)",
             UCOLL_COLL_BCAST, g_rank == 1 ? 800 : 1600, 1600, 1);
    mismatch(w, "bcast, rank 1's count 1600 (6400 B, UCX) > the root's 800 (3200 B, on-host rings)",
             UCOLL_COLL_BCAST, g_rank == 1 ? 1600 : 800, 800, 1);
    /* several segments of UCOLL_SEGMENT_SIZE (256 KiB by default): 5 segments' worth at the
     * root, 3 at rank 1, so the last segments differ in length */
    const char *env = getenv("UCOLL_SEGMENT_SIZE");
    const size_t seg = env != NULL && atol(env) >= 64 ? (size_t)atol(env) / 4 : 262144 / 4;
    mismatch(w, "segmented bcast, rank 1's count 3/5 of the root's", UCOLL_COLL_BCAST,
             g_rank == 1 ? seg * 3 : seg * 5, seg * 5, -1);
    /* counts that differ by whole segments: every segment of the shorter message has the
     * length of the longer one's; only the tag's last-segment flag tells them apart */
    mismatch(w, "segmented bcast, rank 1's count one whole segment shorter", UCOLL_COLL_BCAST,
             g_rank == 1 ? seg : 2 * seg, 2 * seg, 1);
    mismatch(w, "segmented bcast, rank 1's count one whole segment longer", UCOLL_COLL_BCAST,
             g_rank == 1 ? 3 * seg : 2 * seg, 2 * seg, 1);
    mismatch(w, "segmented allreduce, last rank's count two whole segments shorter",
             UCOLL_COLL_ALLREDUCE, g_rank == g_size - 1 ? 2 * seg : 4 * seg, 4 * seg, -1);
}

/* ---------------------------------------------------------------- a late rank */

static void sleep_until(double t)
{
    double left;
    while ((left = t - now()) > 0) {
        struct timespec ts = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
        nanosleep(&ts, NULL);
    }
}

/* One rank (`late`) enters the collective UCOLL_TIMEOUT + 1 s after the others, which time out.
 * When it comes, its messages of that collective must go nowhere: a rank's buffers stay as
 * they were when its call returned, and the next collectives (which reuse the library's
 * scratch memory) give the right results. The late rank itself may complete (it may have got
 * all it needed before the others gave up) or time out. */
static void late_rank(ucoll_comm_t *w, const char *what, ucoll_coll_t coll, size_t count, int late)
{
    char name[256];
    snprintf(name, sizeof(name), "a late rank: %s", what);
    ucoll_comm_t *c = failing_comm(w, name);
    if (c == NULL)
        return;
    gbuf_t sb, rb;
    gb_init(&sb, count * 4, 5);
    gb_init(&rb, count * 4, 6);
    fill_i32(gb_ptr(&sb), count, g_rank, 13);
    if (coll == UCOLL_COLL_BCAST && g_rank == late)
        fill_i32(gb_ptr(&rb), count, late, 17);
    gb_snapshot(&sb);
    gb_snapshot(&rb);
    const double t0 = now();
    if (g_rank == late)
        sleep_until(t0 + g_timeout + 1.0);
    ucoll_status_t st =
        coll == UCOLL_COLL_BCAST
            ? ucoll_bcast(c, gb_ptr(&rb), count, UCOLL_INT32, late)
            : ucoll_allreduce(c, gb_ptr(&sb), gb_ptr(&rb), count, UCOLL_INT32, UCOLL_OP_BXOR);
    const double took = now() - t0;
    n_checks++;
    if (g_rank != late) {
        expect(name, st, UCOLL_ERR_TIMED_OUT);
        if (took > g_timeout + 5)
            fail(name, "the call took %.1f s, more than UCOLL_TIMEOUT + 5 s", took);
    } else if (st != UCOLL_OK && st != UCOLL_ERR_TIMED_OUT) {
        fail(name, "the late rank got %s, expected OK or ERR_TIMED_OUT", st_name(st));
    }
    gb_snapshot(&rb); /* as the call left it */
    /* the late rank has left by t0 + 2 UCOLL_TIMEOUT + 1 s; then progress (usable()) delivers
     * whatever it sent */
    sleep_until(t0 + 2 * g_timeout + 2.0);
    retire_comm(w, c, st, name);
    gb_check_unchanged(&rb, name, "recvbuf after the call returned");
    gb_check_unchanged(&sb, name, "sendbuf");
    gb_free(&sb);
    gb_free(&rb);
}

static void test_late(ucoll_comm_t *w)
{
    late_rank(w, "bcast of 64 int32 from a root that comes late", UCOLL_COLL_BCAST, 64, 0);
    late_rank(w, "bcast of 40 Ki int32 (several segments) from a root that comes late",
              UCOLL_COLL_BCAST, 40 * 1024, 0);
    late_rank(w, "allreduce of 1 Ki int32 with the last rank late", UCOLL_COLL_ALLREDUCE, 1024,
              g_size - 1);
}

/* ---------------------------------------------------------------- after finalize */

static void test_after_finalize(ucoll_comm_t *w, ucoll_request_t *kept)
{
    for (int f = 0; f < MPT_NFORMS; f++) {
        for (size_t i = 0; i < NELEM(data_colls); i++)
            bad_call("after ucoll_finalize", f, data_colls[i], w, 0, 4, 16, UCOLL_INT32,
                     UCOLL_OP_SUM, 0, UCOLL_ERR_STATE);
        if (f != MPT_PERSISTENT)
            bad_call("after ucoll_finalize", f, UCOLL_COLL_BARRIER, w, 0, 0, 0, UCOLL_INT32,
                     UCOLL_OP_SUM, 0, UCOLL_ERR_STATE);
    }
    ucoll_comm_t *nc = NULL;
    expect("ucoll_comm_split after ucoll_finalize", ucoll_comm_split(w, 0, 0, &nc),
           UCOLL_ERR_STATE);
    expect("ucoll_comm_free after ucoll_finalize", ucoll_comm_free(w), UCOLL_ERR_STATE);
    expect("ucoll_set_algorithm after ucoll_finalize",
           ucoll_set_algorithm(w, UCOLL_COLL_SCAN, "auto"), UCOLL_ERR_STATE);
    n_checks += 2;
    if (ucoll_comm_rank(w) != -1)
        fail("ucoll_comm_rank after ucoll_finalize", "%d, expected -1", ucoll_comm_rank(w));
    if (ucoll_comm_size(w) != -1)
        fail("ucoll_comm_size after ucoll_finalize", "%d, expected -1", ucoll_comm_size(w));
    if (kept != NULL) {
        expect("ucoll_start on a request from before ucoll_finalize", ucoll_start(kept),
               UCOLL_ERR_STATE);
        expect("ucoll_test on a request from before ucoll_finalize", ucoll_test(kept),
               UCOLL_ERR_STATE);
        expect("ucoll_wait on a request from before ucoll_finalize", ucoll_wait(kept),
               UCOLL_ERR_STATE);
        expect("ucoll_request_free on a request from before ucoll_finalize",
               ucoll_request_free(kept), UCOLL_OK);
    }
    expect("ucoll_finalize twice", ucoll_finalize(w), UCOLL_ERR_STATE);
    ucoll_comm_t *again = NULL;
    expect("ucoll_init after ucoll_finalize", ucoll_init(&again), UCOLL_ERR_STATE);
}

int main(int argc, char **argv)
{
    /* --only-misuse: only the misuse cases (for a quick run by hand; the suite runs all) */
    const int only_misuse = argc > 1 && strcmp(argv[1], "--only-misuse") == 0;
    const char *t = getenv("UCOLL_TIMEOUT");
    g_timeout = t != NULL ? atof(t) : 0;
    if (g_timeout <= 0 || g_timeout > 30) {
        printf("FATAL badinput_test: set UCOLL_TIMEOUT to 1..30 s (the mismatched counts make "
               "some ranks wait for ranks that gave up)\n");
        return 2;
    }
    /* before init */
    expect("barrier(NULL) before ucoll_init", ucoll_barrier(NULL), UCOLL_ERR_INVALID_ARG);
    expect("ucoll_finalize(NULL) before ucoll_init", ucoll_finalize(NULL), UCOLL_ERR_INVALID_ARG);

    ucoll_comm_t *w;
    ucoll_status_t st = ucoll_init(&w);
    if (st != UCOLL_OK) {
        printf("FATAL badinput_test: ucoll_init: %s\n", ucoll_strerror(st));
        return 2;
    }
    g_rank = ucoll_comm_rank(w);
    g_size = ucoll_comm_size(w);
    if (g_size < 3) {
        printf("FATAL badinput_test: needs at least 3 ranks, got %d\n", g_size);
        return 2;
    }
    if (!only_misuse) {
        test_arguments(w);
        test_block_arguments(w);
        test_mem_alloc(w);
        test_root_only(w);
        test_requests(w);
    }
    test_misuse(w);
    if (!only_misuse) {
        test_mismatch(w);
        test_late(w);
    }

    /* a persistent request kept across ucoll_finalize */
    int32_t in = 1, out = 0;
    ucoll_request_t *kept = NULL;
    expect("allreduce_init kept across finalize",
           ucoll_allreduce_init(w, &in, &out, 1, UCOLL_INT32, UCOLL_OP_SUM, &kept), UCOLL_OK);

    /* every rank's failures, while the library still works */
    int64_t f = n_failed, total = -1;
    if (!expect("allreduce of the failure counts",
                ucoll_allreduce(w, &f, &total, 1, UCOLL_INT64, UCOLL_OP_SUM), UCOLL_OK))
        total = n_failed;
    const long before = n_failed;
    expect("ucoll_finalize", ucoll_finalize(w), UCOLL_OK);
    test_after_finalize(w, kept);
    total += n_failed - before;
    if (g_rank == 0)
        printf("badinput np=%d: %ld checks on rank 0, %lld failed over all ranks; verdict: %s\n",
               g_size, n_checks, (long long)total, total == 0 ? "PASS" : "FAIL");
    return n_failed == 0 ? 0 : 1;
}
