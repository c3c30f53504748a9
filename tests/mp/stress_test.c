/*
 * tests/mp/stress_test.c: a long random mix of collectives, every result checked, and no
 * growth of memory. Public API only; one ucoll_init per process.
 *
 * Every rank draws the same sequence from a shared seed: on the world communicator or on a
 * split half of it (color rank % 2, keys reversed), any of the 16 collectives (half of the
 * calls one of exscan, scan, reduce, allreduce, bcast, barrier, the other half one of the block
 * collectives allgather(v), reduce_scatter(_block), alltoall(v), gather(v), scatter(v)),
 * with a random kind: a (dtype, op) pair of 17 (all 10 integer and 32/64-bit float dtypes,
 * all 10 predefined ops but AVG, a commutative and a non-commutative user op), AVG on float64
 * and float32 (reduce, allreduce, reduce_scatter(_block) only), FLOAT16 / BFLOAT16 bit
 * patterns (only where nothing is combined: bcast and the block collectives that move data;
 * NaNs, infinities, subnormals arrive bit for bit), or FLOAT16 sum and max, BFLOAT16 sum and
 * min on small integers whose every partial sum is exact (AVG on them, which rounds, is left
 * to half_test and block_test). A size from 0 B to 1 MiB (log-uniform, skewed to small; a block
 * collective's blocks are size / p, so the buffers of p blocks stay within it), a random root,
 * sometimes UCOLL_IN_PLACE (wherever the API allows it: for reduce, gather(v) and scatter(v) at the
 * root), and, before about a third of the calls, a random algorithm for that collective set with
 * ucoll_set_algorithm (the names come from --alg-list, which tests/run-tests.sh fills from
 * `ucoll_info -a`). The v forms' counts vary per block (0 one time in 5, else 0 .. the block size)
 * and their displacements put the blocks in rank order or reversed with gaps of 0..3 elements, all
 * derived from the call's salt so every rank agrees (alltoallv in place: symmetric counts).
 * Calls are blocking, or batches of 2-4 that mix nonblocking and blocking calls (the
 * nonblocking ones waited for in a rank-dependent order, some polled with ucoll_test first),
 * or starts of persistent requests (up to 3 alive, recreated now and then; every collective
 * but the barrier, which has none).
 *
 * Checked for every call: the status, the result against a reference computed here (inputs
 * from mpt_fill_input, keyed by (call, rank, index), for a moved block by (call, from, to,
 * index); integer and float results are exact (float sums are of quarters; AVG is that exact
 * sum divided once by p); mpt_ref_combine combines them), the receive buffer untouched where
 * the collective must not write (exscan at rank 0, reduce, gather(v) off the root, the v
 * forms' gaps, the root's recvbuf of scatter(v) in place, the rest of an in-place
 * reduce_scatter's input), 64 guard bytes either side of every buffer, and the send buffer
 * unchanged (scatter(v)'s off the root included, passed though not read).
 *
 * Memory: the library keeps what it allocates for reuse (scratch chunks per size class,
 * schedules, UCX's memory pools), so its footprint grows until every size class has been used
 * at the highest concurrency the mix reaches. The warm-up gets there: a sweep (every algorithm
 * of every collective on both communicators at sizes 0 B .. 1 MiB, blocking and nonblocking,
 * the block collectives at fewer sizes; then per collective 3 live persistent requests, a
 * blocking call on each communicator and 4 nonblocking calls at once, all of 1 MiB, and again
 * of 512 KiB) and --warmup-ops (2000) random calls like the main run's. The resident set size
 * (from /proc/self/statm) after the --ops (10000) calls of the main run must then be within
 * --rss-tolerance (10 %) of the one after the warm-up, on every rank. With glibc, the test
 * fixes malloc's mmap and trim thresholds (128 KiB) so that memory freed by anyone goes back to
 * the system instead of staying resident at glibc's discretion.
 *
 * Usage: stress_test [--ops N] [--warmup-ops N] [--seed S] [--max-bytes B]
 *                    [--rss-tolerance F] [--expect-size N] [--alg-list COLL=A,B,...]...
 * Rank 0 prints progress every 1000 calls and ends with
 * "stress np=N: ... verdict: PASS|FAIL"; exit status 0 only if every check passed on every
 * rank. Failures print "FAIL rank R: call #K (...): what".
 */
#include <ucoll.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef __GLIBC__ /* defined by any glibc header above */
#include <malloc.h>
#endif

#include "mp_util.h"

#define GUARD 64
#define GUARD_BYTE 0xA5
#define FILL_BYTE 0x3C
#define MAX_BATCH 4
#define MAX_PERSISTENT 3
#define MAX_ALGS 32
#define NCOLL 16 /* every ucoll_coll_t */
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static int g_rank = -1, g_size = 1;
static long n_failed, n_verified;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (n_failed < 40) {
        printf("FAIL rank %d: ", g_rank);
        vprintf(fmt, ap);
        printf("\n");
        fflush(stdout);
    }
    va_end(ap);
    n_failed++;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static long rss_kib(void)
{
    long pages_total = 0, pages_resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f == NULL)
        return -1;
    if (fscanf(f, "%ld %ld", &pages_total, &pages_resident) != 2)
        pages_resident = -1;
    fclose(f);
    return pages_resident < 0 ? -1 : pages_resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* the shared random stream: every rank draws the same numbers in the same order */
static uint64_t rng_state;
static uint64_t rnd(uint64_t n)
{
    rng_state = mpt_mix64(rng_state);
    return n ? rng_state % n : 0;
}

/* ---------------------------------------------------------------- (dtype, op) pairs */

typedef enum {
    K_I64_SUM,
    K_I32_SUM,
    K_U8_SUM,
    K_I16_MAX,
    K_F64_SUM,
    K_F32_MIN,
    K_U32_BXOR,
    K_U16_BOR,
    K_U64_BAND,
    K_U64_PROD,
    K_I8_LAND,
    K_I8_LOR,
    K_U8_LXOR,
    K_F64_MAX,
    K_I32_MIN,
    K_U64_AFFINE,
    K_U32_USERSUM,
    K_F64_AVG,   /* reduce, allreduce, reduce_scatter(_block) only */
    K_F32_AVG,   /* the same */
    K_F16_BITS,  /* moved, never combined: bcast and the block collectives that move data */
    K_BF16_BITS, /* the same */
    K_F16_SUM,   /* small integers, every partial sum exact (half_int) */
    K_BF16_SUM,
    K_F16_MAX,
    K_BF16_MIN,
    NKINDS
} kind_t;

typedef struct {
    const char *name;
    ucoll_dtype_t dtype;
    ucoll_op_t op; /* user ops: filled in at start */
    size_t esize;
    int is_float;
} kind_info_t;

static kind_info_t kinds[NKINDS] = {
    [K_I64_SUM] = {"int64-sum", UCOLL_INT64, UCOLL_OP_SUM, 8, 0},
    [K_I32_SUM] = {"int32-sum", UCOLL_INT32, UCOLL_OP_SUM, 4, 0},
    [K_U8_SUM] = {"uint8-sum", UCOLL_UINT8, UCOLL_OP_SUM, 1, 0},
    [K_I16_MAX] = {"int16-max", UCOLL_INT16, UCOLL_OP_MAX, 2, 0},
    [K_F64_SUM] = {"float64-sum", UCOLL_FLOAT64, UCOLL_OP_SUM, 8, 1},
    [K_F32_MIN] = {"float32-min", UCOLL_FLOAT32, UCOLL_OP_MIN, 4, 1},
    [K_U32_BXOR] = {"uint32-bxor", UCOLL_UINT32, UCOLL_OP_BXOR, 4, 0},
    [K_U16_BOR] = {"uint16-bor", UCOLL_UINT16, UCOLL_OP_BOR, 2, 0},
    [K_U64_BAND] = {"uint64-band", UCOLL_UINT64, UCOLL_OP_BAND, 8, 0},
    [K_U64_PROD] = {"uint64-prod", UCOLL_UINT64, UCOLL_OP_PROD, 8, 0},
    [K_I8_LAND] = {"int8-land", UCOLL_INT8, UCOLL_OP_LAND, 1, 0},
    [K_I8_LOR] = {"int8-lor", UCOLL_INT8, UCOLL_OP_LOR, 1, 0},
    [K_U8_LXOR] = {"uint8-lxor", UCOLL_UINT8, UCOLL_OP_LXOR, 1, 0},
    [K_F64_MAX] = {"float64-max", UCOLL_FLOAT64, UCOLL_OP_MAX, 8, 1},
    [K_I32_MIN] = {"int32-min", UCOLL_INT32, UCOLL_OP_MIN, 4, 0},
    [K_U64_AFFINE] = {"uint64-user-affine", UCOLL_UINT64, -1, 8, 0},
    [K_U32_USERSUM] = {"uint32-user-sum", UCOLL_UINT32, -1, 4, 0},
    [K_F64_AVG] = {"float64-avg", UCOLL_FLOAT64, UCOLL_OP_AVG, 8, 1},
    [K_F32_AVG] = {"float32-avg", UCOLL_FLOAT32, UCOLL_OP_AVG, 4, 1},
    [K_F16_BITS] = {"float16-bits", UCOLL_FLOAT16, UCOLL_OP_SUM, 2, 1},
    [K_BF16_BITS] = {"bfloat16-bits", UCOLL_BFLOAT16, UCOLL_OP_SUM, 2, 1},
    [K_F16_SUM] = {"float16-sum", UCOLL_FLOAT16, UCOLL_OP_SUM, 2, 1},
    [K_BF16_SUM] = {"bfloat16-sum", UCOLL_BFLOAT16, UCOLL_OP_SUM, 2, 1},
    [K_F16_MAX] = {"float16-max", UCOLL_FLOAT16, UCOLL_OP_MAX, 2, 1},
    [K_BF16_MIN] = {"bfloat16-min", UCOLL_BFLOAT16, UCOLL_OP_MIN, 2, 1},
};

static int is_avg(kind_t k)
{
    return k == K_F64_AVG || k == K_F32_AVG;
}

static int is_bits(kind_t k)
{
    return k == K_F16_BITS || k == K_BF16_BITS;
}

static int is_half_int(kind_t k)
{
    return k == K_F16_SUM || k == K_BF16_SUM || k == K_F16_MAX || k == K_BF16_MIN;
}

/* the collectives that combine nothing, only move data */
static int moves_only(int coll)
{
    return coll == UCOLL_COLL_BCAST || coll == UCOLL_COLL_ALLGATHER ||
           coll == UCOLL_COLL_ALLGATHERV || coll == UCOLL_COLL_ALLTOALL ||
           coll == UCOLL_COLL_ALLTOALLV || coll == UCOLL_COLL_GATHER ||
           coll == UCOLL_COLL_GATHERV || coll == UCOLL_COLL_SCATTER || coll == UCOLL_COLL_SCATTERV;
}

/* whether kind k may be drawn for coll: AVG only where the API defines it, the 16-bit kinds
 * only where nothing is combined (their sums would not be exact with these inputs) */
static int kind_ok(kind_t k, int coll)
{
    if (is_avg(k))
        return coll == UCOLL_COLL_REDUCE || coll == UCOLL_COLL_ALLREDUCE ||
               coll == UCOLL_COLL_REDUCE_SCATTER_BLOCK || coll == UCOLL_COLL_REDUCE_SCATTER;
    if (is_bits(k))
        return moves_only(coll);
    return 1;
}

/* user op 1, not commutative: mpt_affine_then */
static int user_arg_affine, user_arg_sum;
static long user_bad_calls;

static void affine_fn(const void *in, void *inout, size_t n, ucoll_dtype_t dt, void *arg)
{
    if (dt != UCOLL_UINT64 || arg != &user_arg_affine) {
        user_bad_calls++;
        return;
    }
    const uint64_t *a = in;
    uint64_t *b = inout;
    for (size_t i = 0; i < n; i++)
        b[i] = mpt_affine_then(a[i], b[i]);
}

/* user op 2, commutative: wrapping sum of uint32 */
static void usersum_fn(const void *in, void *inout, size_t n, ucoll_dtype_t dt, void *arg)
{
    if (dt != UCOLL_UINT32 || arg != &user_arg_sum) {
        user_bad_calls++;
        return;
    }
    const uint32_t *a = in;
    uint32_t *b = inout;
    for (size_t i = 0; i < n; i++)
        b[i] += a[i];
}

/* the most ranks whose combined inputs mpt_fill_input keeps exact */
#define MAX_RANKS 256

/* the built-in op whose inputs (mpt_fill_input) and reference (mpt_ref_combine) a kind uses;
 * the user sum is the built-in sum, AVG the sum divided afterwards, the affine maps have a
 * reference of their own */
static ucoll_op_t base_op(kind_t k)
{
    return k == K_U32_USERSUM || is_avg(k) || is_bits(k) ? UCOLL_OP_SUM
           : k == K_U64_AFFINE                           ? -1
                                                         : kinds[k].op;
}

/* the dtype whose inputs a kind takes: the 16-bit kinds any uint16 bit pattern (NaNs,
 * infinities and subnormals among them), which must arrive bit for bit */
static ucoll_dtype_t fill_dtype(kind_t k)
{
    return is_bits(k) ? UCOLL_UINT16 : kinds[k].dtype;
}

/* The 16-bit kinds that combine: integers of magnitude at most 2048 / size (FLOAT16) or 256 /
 * size (BFLOAT16) of the world, so that every partial sum, in any order, is an integer that the
 * type holds exactly (11 resp. 8 significant bits). Element i of rank r's input under salt. */
static int64_t half_int(kind_t k, uint64_t salt, int r, size_t i)
{
    const int64_t lim = (kinds[k].dtype == UCOLL_BFLOAT16 ? 256 : 2048) / g_size;
    const int64_t m = lim < 1 ? 1 : lim;
    const uint64_t h = mpt_mix64(mpt_mix64(salt ^ (0x4a1f0000ULL + (uint64_t)(unsigned)r)) ^
                                 (0x9e3779b97f4a7c15ULL * (uint64_t)(i + 1)));
    return (int64_t)(h % (uint64_t)(2 * m + 1)) - m;
}

/* the bits of integer v (|v| <= 2048) in the kind's type, by way of float's bits: BFLOAT16 is
 * float's upper half; FLOAT16 takes float's sign, exponent rebased from 127 to 15, and the top
 * 10 fraction bits (v has at most 11 significant bits: nothing is rounded) */
static uint16_t half_encode(kind_t k, int64_t v)
{
    const float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, sizeof(u));
    if (kinds[k].dtype == UCOLL_BFLOAT16)
        return (uint16_t)(u >> 16);
    if (v == 0)
        return 0;
    return (uint16_t)(((u >> 16) & 0x8000u) | ((((u >> 23) & 0xffu) - 112u) << 10) |
                      ((u >> 13) & 0x3ffu));
}

/* rank r's input for a call under salt; the affine maps' a is odd (a map that is invertible) */
static void gen_input(kind_t k, uint64_t salt, int r, size_t n, void *buf)
{
    if (is_half_int(k)) {
        for (size_t i = 0; i < n; i++)
            ((uint16_t *)buf)[i] = half_encode(k, half_int(k, salt, r, i));
        return;
    }
    mpt_fill_input(buf, n, fill_dtype(k), base_op(k), r, salt);
    if (k == K_U64_AFFINE)
        for (size_t i = 0; i < n; i++)
            ((uint64_t *)buf)[i] |= 1;
}

static unsigned char *ref_tmp; /* one rank's input while the reference is built, max_bytes */

/* the combination of ranks lo..hi-1's inputs, in rank order (one rank: its input); AVG: their
 * exact sum divided once by hi - lo (the communicator's size: AVG is drawn only for collectives
 * that combine every rank) */
static void reference(kind_t k, uint64_t salt, int lo, int hi, size_t n, void *out)
{
    if (is_half_int(k)) { /* in integers, then the bits */
        for (size_t i = 0; i < n; i++) {
            int64_t acc = half_int(k, salt, lo, i);
            for (int r = lo + 1; r < hi; r++) {
                const int64_t v = half_int(k, salt, r, i);
                acc = kinds[k].op == UCOLL_OP_SUM   ? acc + v
                      : kinds[k].op == UCOLL_OP_MAX ? (v > acc ? v : acc)
                                                    : (v < acc ? v : acc);
            }
            ((uint16_t *)out)[i] = half_encode(k, acc);
        }
        return;
    }
    if (hi - lo == 1 || k == K_U64_AFFINE) {
        gen_input(k, salt, lo, n, out);
        for (int r = lo + 1; r < hi; r++) {
            gen_input(k, salt, r, n, ref_tmp);
            for (size_t i = 0; i < n; i++)
                ((uint64_t *)out)[i] =
                    mpt_affine_then(((uint64_t *)out)[i], ((uint64_t *)ref_tmp)[i]);
        }
    } else if (mpt_ref_range(out, ref_tmp, n, fill_dtype(k), base_op(k), NULL, lo, hi, salt) != 0) {
        fail("no reference for %s", kinds[k].name);
    }
    if (k == K_F64_AVG)
        for (size_t i = 0; i < n; i++)
            ((double *)out)[i] /= (double)(hi - lo);
    if (k == K_F32_AVG)
        for (size_t i = 0; i < n; i++)
            ((float *)out)[i] /= (float)(hi - lo);
}

/* ---------------------------------------------------------------- communicators, algorithms */

static const char *builtin_algs[NCOLL] = {
    "auto,linear,recursive-doubling,1-doubling,123-doubling,best-doubling,two-op-doubling,"
    "doubling:3,roughly-halving",
    "auto,linear,doubling,recursive-doubling",
    "auto,binomial,rhrd,rhrd-classic",
    "auto,recursive-doubling,rhrd,rhrd-classic,rs-ag,ring",
    "auto,binomial,scatter-allgather",
    "auto,dissemination",
    "auto,ring,recursive-doubling,bruck",
    "auto,ring,bruck",
    "auto,ring,recursive-halving,bruck",
    "auto,ring,recursive-halving,bruck",
    "auto,pairwise,bruck",
    "auto,pairwise",
    "auto,binomial,linear",
    "auto,linear",
    "auto,binomial,linear",
    "auto,linear"};
static char *alg_names[NCOLL][MAX_ALGS];
static int n_algs[NCOLL];

static void parse_alg_list(int coll, const char *list)
{
    char *copy = strdup(list), *save = NULL;
    n_algs[coll] = 0;
    for (char *t = strtok_r(copy, ",", &save); t != NULL && n_algs[coll] < MAX_ALGS;
         t = strtok_r(NULL, ",", &save))
        alg_names[coll][n_algs[coll]++] = strdup(t);
    free(copy);
}

typedef struct {
    ucoll_comm_t *comm;
    const char *name;
    int rank, size;
    const char *alg[NCOLL]; /* current choice */
} comm_t;

/* ---------------------------------------------------------------- one call */

enum {
    FORM_BLOCKING = MPT_BLOCKING,
    FORM_NONBLOCKING = MPT_NONBLOCKING,
    FORM_PERSISTENT = MPT_PERSISTENT
};

typedef struct {
    unsigned char *send_mem, *recv_mem; /* GUARD + capacity + GUARD */
    size_t cap;
} slot_t;

typedef struct {
    long index;
    comm_t *c;
    int coll;
    kind_t kind;
    size_t count; /* block collectives: elements of one block (the v forms: at most) */
    int root, in_place, form;
    uint64_t salt;
    slot_t *slot;
    ucoll_request_t *req;
    int done;
    /* block collectives: the one count argument, the extents of the two buffers (elements),
     * the count and displacement arrays (send side, receive side) */
    size_t n_arg, send_el, recv_el;
    size_t sc[MAX_RANKS], sd[MAX_RANKS], rc[MAX_RANKS], rd[MAX_RANKS];
} call_t;

static unsigned char *expect_buf;  /* the receive buffer as it must be, max_bytes */
static unsigned char *expect_send; /* the send buffer as it must be (block collectives) */
static unsigned char *ref_out;     /* a reduction over whole send buffers (reduce_scatter) */
static size_t max_bytes = 1u << 20;

static void *send_ptr(const call_t *k)
{
    return k->slot->send_mem + GUARD;
}
static void *recv_ptr(const call_t *k)
{
    return k->slot->recv_mem + GUARD;
}

static void describe(const call_t *k, char *s, size_t len)
{
    snprintf(s, len, "call #%ld (%s %s on %s, %s, count %zu, root %d%s, alg %s)", k->index,
             mpt_form_names[k->form], mpt_coll_name((ucoll_coll_t)k->coll), k->c->name,
             kinds[k->kind].name, k->count, k->root, k->in_place ? ", in place" : "",
             k->c->alg[k->coll]);
}

static int is_block(int coll)
{
    return coll >= UCOLL_COLL_ALLGATHER;
}
static void block_prepare(call_t *k);
static ucoll_status_t block_call(call_t *k, mpt_form_t form);

/* fills the buffers for a call */
static void prepare(call_t *k)
{
    if (is_block(k->coll)) {
        block_prepare(k);
        return;
    }
    const size_t bytes = k->count * kinds[k->kind].esize;
    unsigned char *s = k->slot->send_mem, *r = k->slot->recv_mem;
    memset(s, GUARD_BYTE, GUARD);
    memset(s + GUARD + bytes, GUARD_BYTE, GUARD);
    memset(r, GUARD_BYTE, GUARD);
    memset(r + GUARD + bytes, GUARD_BYTE, GUARD);
    memset(r + GUARD, FILL_BYTE, bytes);
    if (k->coll == UCOLL_COLL_BARRIER)
        return;
    const int mine_in_recv = k->coll == UCOLL_COLL_BCAST || k->in_place;
    if (k->coll == UCOLL_COLL_BCAST && k->c->rank != k->root)
        return;
    gen_input(k->kind, k->salt, k->c->rank, k->count, mine_in_recv ? r + GUARD : s + GUARD);
}

static ucoll_status_t issue(call_t *k, int nonblocking)
{
    if (is_block(k->coll))
        return block_call(k, nonblocking ? MPT_NONBLOCKING : MPT_BLOCKING);
    return mpt_call(nonblocking ? MPT_NONBLOCKING : MPT_BLOCKING, (ucoll_coll_t)k->coll, k->c->comm,
                    k->in_place ? UCOLL_IN_PLACE : send_ptr(k), recv_ptr(k), k->count,
                    kinds[k->kind].dtype, kinds[k->kind].op, k->root, &k->req);
}

/* every collective but the barrier (the API has no persistent barrier) */
static ucoll_status_t make_persistent(call_t *k)
{
    if (is_block(k->coll))
        return block_call(k, MPT_PERSISTENT);
    return mpt_call(MPT_PERSISTENT, (ucoll_coll_t)k->coll, k->c->comm,
                    k->in_place ? UCOLL_IN_PLACE : send_ptr(k), recv_ptr(k), k->count,
                    kinds[k->kind].dtype, kinds[k->kind].op, k->root, &k->req);
}

static void check_guards(const call_t *k, const unsigned char *mem, size_t bytes, const char *w)
{
    for (size_t i = 0; i < GUARD; i++)
        if (mem[i] != GUARD_BYTE || mem[GUARD + bytes + i] != GUARD_BYTE) {
            char d[300];
            describe(k, d, sizeof(d));
            fail("%s: a guard byte of %s changed (%s the buffer)", d, w,
                 mem[i] != GUARD_BYTE ? "before" : "after");
            return;
        }
}

static void report_mismatch(const call_t *k, const void *got, const void *want, size_t n,
                            const char *what)
{
    const size_t es = kinds[k->kind].esize;
    for (size_t i = 0; i < n; i++) {
        if (memcmp((const char *)got + i * es, (const char *)want + i * es, es) == 0)
            continue;
        uint64_t g = 0, w = 0;
        memcpy(&g, (const char *)got + i * es, es);
        memcpy(&w, (const char *)want + i * es, es);
        char d[300];
        describe(k, d, sizeof(d));
        fail("%s: %s element %zu is 0x%llx, expected 0x%llx", d, what, i, (unsigned long long)g,
             (unsigned long long)w);
        return;
    }
}

/* ---------------------------------------------------------------- block collectives */

/* Element e of the block that rank `from` contributes for rank `to` depends on (call, from,
 * to, e) only (allgather(v) and gather(v): to = 0, one block for everyone), so every rank
 * computes its whole expected receive buffer itself. The reductions take the inputs of the
 * first six collectives, whole send buffers as one vector per rank. */

static int is_rooted(int coll)
{
    return coll == UCOLL_COLL_GATHER || coll == UCOLL_COLL_GATHERV || coll == UCOLL_COLL_SCATTER ||
           coll == UCOLL_COLL_SCATTERV;
}

static void gen_block(const call_t *k, int from, int to, size_t n, unsigned char *dst)
{
    mpt_fill_input(dst, n, fill_dtype(k->kind), UCOLL_OP_SUM, from * MAX_RANKS + to,
                   k->salt ^ 0xb10c);
}

/* a hash of (call, a, b), the same on every rank: the v forms' counts and gaps */
static uint64_t call_hash(const call_t *k, uint64_t a, uint64_t b)
{
    return mpt_mix64(k->salt ^ mpt_mix64((a << 32) ^ b ^ 0x7e57));
}

/* the v forms' count of block (i, j): 0 one time in 5, else 0 .. k->count; the same for (j, i)
 * if symmetric (alltoallv in place: what a rank sends to j is what it receives from j) */
static size_t v_count(const call_t *k, int i, int j, int symmetric)
{
    if (symmetric && i > j) {
        const int t = i;
        i = j;
        j = t;
    }
    const uint64_t h = call_hash(k, (uint64_t)i, (uint64_t)j);
    return h % 5 == 0 ? 0 : (size_t)((h >> 8) % (k->count + 1));
}

/* displacements of the blocks cnt[0..p) of one side of a call: in rank order or reversed, each
 * after a gap of 0..3 elements (no gaps where they would not fit into cap elements); returns
 * the extent. Only the counts need to agree across ranks, but every rank draws alike. */
static size_t v_displs(const call_t *k, uint64_t side, const size_t *cnt, size_t *displs,
                       size_t cap)
{
    const int p = k->c->size, reverse = (int)(call_hash(k, 0xd15, side) & 1);
    for (int gaps = 1;; gaps = 0) {
        size_t off = 0;
        for (int i = 0; i < p; i++) {
            const int j = reverse ? p - 1 - i : i;
            off += gaps ? (size_t)(call_hash(k, 0x9a9 + side, (uint64_t)j) % 4) : 0;
            displs[j] = off;
            off += cnt[j];
        }
        off += (size_t)gaps; /* one element after the last block */
        if (off <= cap || !gaps)
            return off;
    }
}

/* the arguments and extents of block call k: blocks of k->count elements (v forms: up to
 * that), all within max_bytes */
static void block_layout(call_t *k)
{
    const int p = k->c->size, r = k->c->rank, ip = k->in_place;
    const size_t c = k->count, pc = (size_t)p * c, cap = max_bytes / kinds[k->kind].esize;
    size_t total = 0;
    k->n_arg = c;
    switch (k->coll) {
    case UCOLL_COLL_ALLGATHER:
    case UCOLL_COLL_GATHER:
        k->send_el = ip ? 0 : c;
        k->recv_el = pc; /* gather off the root: passed, must stay untouched */
        break;
    case UCOLL_COLL_ALLGATHERV:
    case UCOLL_COLL_GATHERV:
        for (int j = 0; j < p; j++)
            k->rc[j] = v_count(k, j, 0, 0);
        k->n_arg = k->rc[r];
        k->send_el = ip ? 0 : k->rc[r];
        k->recv_el = v_displs(k, 0, k->rc, k->rd, cap);
        break;
    case UCOLL_COLL_REDUCE_SCATTER_BLOCK:
        k->send_el = ip ? 0 : pc;
        k->recv_el = ip ? pc : c;
        break;
    case UCOLL_COLL_REDUCE_SCATTER:
        for (int j = 0; j < p; j++)
            total += k->rc[j] = v_count(k, j, 0, 0);
        k->send_el = ip ? 0 : total;
        k->recv_el = ip ? total : k->rc[r];
        break;
    case UCOLL_COLL_ALLTOALL:
        k->send_el = ip ? 0 : pc;
        k->recv_el = pc;
        break;
    case UCOLL_COLL_ALLTOALLV:
        for (int j = 0; j < p; j++) {
            k->sc[j] = v_count(k, r, j, ip);
            k->rc[j] = v_count(k, j, r, ip);
        }
        k->send_el = ip ? 0 : v_displs(k, 1, k->sc, k->sd, cap);
        k->recv_el = v_displs(k, 0, k->rc, k->rd, cap);
        break;
    case UCOLL_COLL_SCATTER: /* the root in place: its recvbuf is not passed, stays untouched */
        k->send_el = pc;     /* passed on every rank, read at the root only */
        k->recv_el = c;
        break;
    case UCOLL_COLL_SCATTERV:
        for (int j = 0; j < p; j++)
            k->sc[j] = v_count(k, j, 0, 0);
        k->n_arg = k->sc[r];
        k->send_el = v_displs(k, 1, k->sc, k->sd, cap);
        k->recv_el = k->sc[r];
        break;
    default:
        break;
    }
}

/* the inputs of block call k on this rank into s and rv (send and receive buffer images whose
 * extents are already filled with FILL_BYTE) */
static void block_fill(const call_t *k, unsigned char *s, unsigned char *rv)
{
    const int p = k->c->size, r = k->c->rank, root = k->root;
    const size_t c = k->count, es = kinds[k->kind].esize;
    unsigned char *in = k->in_place ? rv : s;
    switch (k->coll) {
    case UCOLL_COLL_ALLGATHER:
    case UCOLL_COLL_GATHER:
        gen_block(k, r, 0, c, k->in_place ? rv + (size_t)r * c * es : s);
        break;
    case UCOLL_COLL_ALLGATHERV:
    case UCOLL_COLL_GATHERV:
        gen_block(k, r, 0, k->rc[r], k->in_place ? rv + k->rd[r] * es : s);
        break;
    case UCOLL_COLL_REDUCE_SCATTER_BLOCK:
    case UCOLL_COLL_REDUCE_SCATTER:
        gen_input(k->kind, k->salt, r, k->in_place ? k->recv_el : k->send_el, in);
        break;
    case UCOLL_COLL_ALLTOALL:
        for (int j = 0; j < p; j++)
            gen_block(k, r, j, c, in + (size_t)j * c * es);
        break;
    case UCOLL_COLL_ALLTOALLV:
        for (int j = 0; j < p; j++)
            if (k->in_place)
                gen_block(k, r, j, k->rc[j], rv + k->rd[j] * es);
            else
                gen_block(k, r, j, k->sc[j], s + k->sd[j] * es);
        break;
    case UCOLL_COLL_SCATTER:
        for (int j = 0; r == root && j < p; j++)
            gen_block(k, root, j, c, s + (size_t)j * c * es);
        break;
    case UCOLL_COLL_SCATTERV:
        for (int j = 0; r == root && j < p; j++)
            gen_block(k, root, j, k->sc[j], s + k->sd[j] * es);
        break;
    default:
        break;
    }
}

/* the results of block call k on this rank written over rv, the image of its receive buffer
 * before the call: what is not written must be unchanged (gaps, gather off the root, the rest
 * of an in-place reduce_scatter's input) */
static void block_expect(const call_t *k, unsigned char *rv)
{
    const int p = k->c->size, r = k->c->rank, root = k->root;
    const size_t c = k->count, es = kinds[k->kind].esize;
    size_t off = 0, n = 0;
    switch (k->coll) {
    case UCOLL_COLL_GATHER:
        if (r != root)
            break;
        /* fall through */
    case UCOLL_COLL_ALLGATHER:
        for (int j = 0; j < p; j++)
            gen_block(k, j, 0, c, rv + (size_t)j * c * es);
        break;
    case UCOLL_COLL_GATHERV:
        if (r != root)
            break;
        /* fall through */
    case UCOLL_COLL_ALLGATHERV:
        for (int j = 0; j < p; j++)
            gen_block(k, j, 0, k->rc[j], rv + k->rd[j] * es);
        break;
    case UCOLL_COLL_REDUCE_SCATTER_BLOCK:
    case UCOLL_COLL_REDUCE_SCATTER:
        /* block r of the reduction of the whole send buffers (their prefix up to its end) */
        if (k->coll == UCOLL_COLL_REDUCE_SCATTER_BLOCK) {
            off = (size_t)r * c;
            n = c;
        } else {
            for (int j = 0; j < r; j++)
                off += k->rc[j];
            n = k->rc[r];
        }
        if (n > 0) {
            reference(k->kind, k->salt, 0, p, off + n, ref_out);
            memcpy(rv, ref_out + off * es, n * es);
        }
        break;
    case UCOLL_COLL_ALLTOALL:
        for (int i = 0; i < p; i++)
            gen_block(k, i, r, c, rv + (size_t)i * c * es);
        break;
    case UCOLL_COLL_ALLTOALLV:
        for (int i = 0; i < p; i++)
            gen_block(k, i, r, k->rc[i], rv + k->rd[i] * es);
        break;
    case UCOLL_COLL_SCATTER:
        if (!k->in_place)
            gen_block(k, root, r, c, rv);
        break;
    case UCOLL_COLL_SCATTERV:
        if (!k->in_place)
            gen_block(k, root, r, k->sc[r], rv);
        break;
    default:
        break;
    }
}

static void set_guards(unsigned char *mem, size_t bytes)
{
    memset(mem, GUARD_BYTE, GUARD);
    memset(mem + GUARD, FILL_BYTE, bytes);
    memset(mem + GUARD + bytes, GUARD_BYTE, GUARD);
}

static void block_prepare(call_t *k)
{
    const size_t es = kinds[k->kind].esize;
    set_guards(k->slot->send_mem, k->send_el * es);
    set_guards(k->slot->recv_mem, k->recv_el * es);
    block_fill(k, send_ptr(k), recv_ptr(k));
}

static ucoll_status_t block_call(call_t *k, mpt_form_t form)
{
    const int scatter = k->coll == UCOLL_COLL_SCATTER || k->coll == UCOLL_COLL_SCATTERV;
    const void *sb = k->in_place && !scatter ? UCOLL_IN_PLACE : send_ptr(k);
    void *rb = k->in_place && scatter ? (void *)UCOLL_IN_PLACE : recv_ptr(k);
    /* alltoallv in place ignores the send arrays: NULL */
    const int no_send_arrays = k->coll == UCOLL_COLL_ALLTOALLV && k->in_place;
    return mpt_block_call(form, (ucoll_coll_t)k->coll, k->c->comm, sb,
                          no_send_arrays ? NULL : k->sc, no_send_arrays ? NULL : k->sd, rb, k->rc,
                          k->rd, k->n_arg, kinds[k->kind].dtype, kinds[k->kind].op, k->root,
                          &k->req);
}

/* checks a completed block call whose status was UCOLL_OK: both buffers whole, guards included */
static void block_verify(const call_t *k)
{
    const size_t es = kinds[k->kind].esize, sbytes = k->send_el * es, rbytes = k->recv_el * es;
    check_guards(k, k->slot->send_mem, sbytes, "sendbuf");
    check_guards(k, k->slot->recv_mem, rbytes, "recvbuf");
    memset(expect_send, FILL_BYTE, sbytes);
    memset(expect_buf, FILL_BYTE, rbytes);
    block_fill(k, expect_send, expect_buf);
    if (memcmp(expect_send, send_ptr(k), sbytes) != 0)
        report_mismatch(k, send_ptr(k), expect_send, k->send_el, "sendbuf (must not change)");
    block_expect(k, expect_buf);
    if (memcmp(expect_buf, recv_ptr(k), rbytes) != 0)
        report_mismatch(k, recv_ptr(k), expect_buf, k->recv_el, "recvbuf");
}

/* checks a completed call */
static void verify(const call_t *k, ucoll_status_t st)
{
    char d[300];
    n_verified++;
    if (st != UCOLL_OK) {
        describe(k, d, sizeof(d));
        fail("%s: %s", d, ucoll_strerror(st));
        return;
    }
    if (is_block(k->coll)) {
        block_verify(k);
        return;
    }
    const size_t bytes = k->count * kinds[k->kind].esize;
    check_guards(k, k->slot->recv_mem, bytes, "recvbuf");
    if (k->coll == UCOLL_COLL_BARRIER)
        return;
    const int r = k->c->rank, p = k->c->size;
    const unsigned char *got = recv_ptr(k);
    if (!k->in_place && k->coll != UCOLL_COLL_BCAST) {
        check_guards(k, k->slot->send_mem, bytes, "sendbuf");
        gen_input(k->kind, k->salt, r, k->count, expect_buf);
        if (memcmp(expect_buf, send_ptr(k), bytes) != 0)
            report_mismatch(k, send_ptr(k), expect_buf, k->count, "sendbuf (must not change)");
    }
    int lo = 0, hi = p;
    switch (k->coll) {
    case UCOLL_COLL_EXSCAN:
        hi = r;
        break;
    case UCOLL_COLL_SCAN:
        hi = r + 1;
        break;
    case UCOLL_COLL_REDUCE:
        if (r != k->root)
            hi = 0; /* untouched */
        break;
    case UCOLL_COLL_BCAST:
        lo = k->root;
        hi = k->root + 1;
        break;
    default:
        break;
    }
    if (hi == 0) {
        /* no result here: the buffer keeps what it had (the input when in place) */
        if (k->in_place)
            gen_input(k->kind, k->salt, r, k->count, expect_buf);
        else
            memset(expect_buf, FILL_BYTE, bytes);
    } else {
        reference(k->kind, k->salt, lo, hi, k->count, expect_buf);
    }
    if (memcmp(expect_buf, got, bytes) != 0)
        report_mismatch(k, got, expect_buf, k->count, "result");
}

/* ---------------------------------------------------------------- drawing calls */

/* 0 B .. max_bytes, log-uniform with small sizes favoured: about 10 % empty, half of the rest
 * under 1 KiB, 3 % above 256 KiB */
static size_t draw_bytes(void)
{
    if (rnd(10) == 0)
        return 0;
    int bits = 0;
    while (((size_t)1 << bits) < max_bytes)
        bits++;
    uint64_t u = rnd(1000000);
    int e = (int)((double)bits * ((double)u / 1e6) * ((double)u / 1e6) + 0.5);
    size_t hi = (size_t)1 << e, lo = e == 0 ? 1 : hi / 2;
    size_t b = lo + rnd(hi - lo + 1);
    return b > max_bytes ? max_bytes : b;
}

static void draw_call(call_t *k, long index, comm_t *c, int coll, size_t bytes)
{
    memset(k, 0, sizeof(*k));
    k->index = index;
    k->c = c;
    k->coll = coll;
    do
        k->kind = (kind_t)rnd(NKINDS);
    while (!kind_ok(k->kind, coll));
    /* the block collectives: bytes is what a buffer of p blocks holds */
    k->count = bytes / kinds[k->kind].esize / (is_block(coll) ? (size_t)c->size : 1);
    k->root = (int)rnd((uint64_t)c->size);
    k->salt = mpt_mix64(rng_state ^ (uint64_t)index);
    /* in place sometimes (drawn on every rank alike); for reduce, gather(v) and scatter(v) only
     * at the root */
    k->in_place = coll != UCOLL_COLL_BCAST && coll != UCOLL_COLL_BARRIER && rnd(8) == 0 &&
                  ((coll != UCOLL_COLL_REDUCE && !is_rooted(coll)) || c->rank == k->root);
    if (coll == UCOLL_COLL_BARRIER)
        k->count = 0;
    if (is_block(coll))
        block_layout(k);
}

/* the bytes a call moves through its larger buffer */
static long call_bytes(const call_t *k)
{
    const size_t el =
        is_block(k->coll) ? (k->send_el > k->recv_el ? k->send_el : k->recv_el) : k->count;
    return (long)(el * kinds[k->kind].esize);
}

/* a collective: half of the time one of the first six, else a block collective (the block
 * collectives' calls cost less, so the run's time per call stays near what it was with the
 * six alone); no barrier if persistent (the API has none) */
static int draw_coll(int persistent)
{
    if (rnd(2) == 0)
        return UCOLL_COLL_ALLGATHER + (int)rnd(NCOLL - UCOLL_COLL_ALLGATHER);
    return persistent ? (int)rnd(UCOLL_COLL_BARRIER) : (int)rnd(UCOLL_COLL_BARRIER + 1);
}

/* collectively: maybe a new algorithm for coll on c */
static void maybe_set_algorithm(comm_t *c, int coll)
{
    if (rnd(3) != 0 || n_algs[coll] == 0)
        return;
    const char *alg = alg_names[coll][rnd((uint64_t)n_algs[coll])];
    ucoll_status_t st = ucoll_set_algorithm(c->comm, (ucoll_coll_t)coll, alg);
    if (st != UCOLL_OK)
        fail("ucoll_set_algorithm(%s on %s, \"%s\"): %s", mpt_coll_name((ucoll_coll_t)coll),
             c->name, alg, ucoll_strerror(st));
    else
        c->alg[coll] = alg;
}

/* ---------------------------------------------------------------- main */

typedef struct {
    long calls, blocking, nonblocking, persistent, per_coll[NCOLL], bytes_total;
} counts_t;

static slot_t *new_slot(size_t cap)
{
    slot_t *s = calloc(1, sizeof(*s));
    s->cap = cap;
    s->send_mem = aligned_alloc(64, cap + 2 * GUARD);
    s->recv_mem = aligned_alloc(64, cap + 2 * GUARD);
    if (s->send_mem == NULL || s->recv_mem == NULL) {
        printf("FATAL rank %d: out of memory\n", g_rank);
        exit(2);
    }
    memset(s->send_mem, 0, cap + 2 * GUARD); /* resident from the start */
    memset(s->recv_mem, 0, cap + 2 * GUARD);
    return s;
}

static void run_blocking(call_t *k, counts_t *cnt)
{
    prepare(k);
    verify(k, issue(k, 0));
    cnt->blocking++;
}

/* a batch: nonblocking and blocking calls issued in order, the nonblocking ones completed in a
 * rank-dependent order afterwards */
static void run_batch(call_t *batch, int n, const int *blocking, counts_t *cnt)
{
    for (int b = 0; b < n; b++) {
        prepare(&batch[b]);
        if (blocking[b]) {
            verify(&batch[b], issue(&batch[b], 0));
            batch[b].done = 1;
            cnt->blocking++;
            continue;
        }
        ucoll_status_t st = issue(&batch[b], 1);
        if (st != UCOLL_OK) {
            verify(&batch[b], st);
            batch[b].done = 1;
        }
        cnt->nonblocking++;
    }
    for (int j = 0; j < n; j++) {
        int b = (g_rank % 2 == 0) ? j : n - 1 - j;
        if (batch[b].done)
            continue;
        ucoll_status_t st = UCOLL_INPROGRESS;
        if ((batch[b].index + g_rank) % 3 == 0)
            for (int t = 0; t < 100 && st == UCOLL_INPROGRESS; t++)
                st = ucoll_test(batch[b].req);
        if (st == UCOLL_INPROGRESS)
            st = ucoll_wait(batch[b].req);
        verify(&batch[b], st);
        ucoll_status_t fst = ucoll_request_free(batch[b].req);
        if (fst != UCOLL_OK)
            fail("ucoll_request_free after call #%ld: %s", batch[b].index, ucoll_strerror(fst));
        batch[b].done = 1;
    }
}

/* the state of a run: communicators, buffers, persistent requests, counters */
typedef struct {
    ucoll_comm_t *world;
    comm_t comms[2];
    slot_t *slots[MAX_BATCH], *pslots[MAX_PERSISTENT];
    call_t persistent[MAX_PERSISTENT];
    counts_t cnt;
    long index;
    long rss_base;
    double t_base;
} run_t;

/* every rank's RSS change since rss_base, max and min over ranks (a collective) */
static void rss_report(run_t *R, const char *what)
{
    long rss = rss_kib();
    double g[2], gmax[2] = {0, 0};
    g[0] = (double)(rss - R->rss_base) / (double)R->rss_base;
    g[1] = -g[0];
    ucoll_status_t st = ucoll_allreduce(R->world, g, gmax, 2, UCOLL_FLOAT64, UCOLL_OP_MAX);
    if (st != UCOLL_OK)
        fail("the allreduce of the RSS figures: %s", ucoll_strerror(st));
    if (g_rank == 0) {
        printf("  %s %5ld calls: %6.1f s, RSS %ld KiB (rank 0), change over ranks %+.1f %% .. "
               "%+.1f %%\n",
               what, R->cnt.calls, now() - R->t_base, rss, -100 * gmax[1], 100 * gmax[0]);
        fflush(stdout);
    }
}

/* n random calls (whole batches: a few more is possible), all drawn from the shared stream */
static void random_calls(run_t *R, long n, const char *what)
{
    counts_t *cnt = &R->cnt;
    const long end = cnt->calls + n;
    long next_report = cnt->calls + 1000;
    ucoll_status_t st;
    while (cnt->calls < end) {
        comm_t *c = &R->comms[rnd(5) == 0 ? 1 : 0];
        const uint64_t what_kind = rnd(100);
        if (what_kind < 55) { /* one blocking call */
            int coll = draw_coll(0);
            maybe_set_algorithm(c, coll);
            call_t k;
            draw_call(&k, R->index++, c, coll, draw_bytes());
            k.slot = R->slots[0];
            run_blocking(&k, cnt);
            cnt->calls++;
            cnt->per_coll[coll]++;
            cnt->bytes_total += call_bytes(&k);
        } else if (what_kind < 85) { /* a batch */
            call_t batch[MAX_BATCH];
            int blocking[MAX_BATCH];
            int nb = 2 + (int)rnd(MAX_BATCH - 1);
            for (int b = 0; b < nb; b++) {
                int coll = draw_coll(0);
                maybe_set_algorithm(c, coll);
                draw_call(&batch[b], R->index++, c, coll, draw_bytes());
                batch[b].slot = R->slots[b];
                blocking[b] = rnd(5) == 0;
                batch[b].form = blocking[b] ? FORM_BLOCKING : FORM_NONBLOCKING;
                cnt->per_coll[coll]++;
                cnt->bytes_total += call_bytes(&batch[b]);
            }
            run_batch(batch, nb, blocking, cnt);
            cnt->calls += nb;
        } else { /* a persistent request: created, started, sometimes freed and recreated */
            int p = (int)rnd(MAX_PERSISTENT);
            call_t *k = &R->persistent[p];
            if (k->req != NULL && rnd(4) == 0) {
                if ((st = ucoll_request_free(k->req)) != UCOLL_OK)
                    fail("ucoll_request_free(persistent): %s", ucoll_strerror(st));
                k->req = NULL;
            }
            if (k->req == NULL) {
                int coll = draw_coll(1); /* no persistent barrier */
                maybe_set_algorithm(c, coll);
                draw_call(k, R->index++, c, coll, draw_bytes());
                k->slot = R->pslots[p];
                k->form = FORM_PERSISTENT;
                prepare(k);
                if ((st = make_persistent(k)) != UCOLL_OK) {
                    verify(k, st);
                    k->req = NULL;
                    cnt->calls++;
                    continue;
                }
            }
            prepare(k);
            st = ucoll_start(k->req);
            if (st == UCOLL_OK && rnd(2) == 0)
                for (int t = 0; t < 50 && (st = ucoll_test(k->req)) == UCOLL_INPROGRESS; t++)
                    ;
            if (st == UCOLL_OK || st == UCOLL_INPROGRESS)
                st = ucoll_wait(k->req);
            verify(k, st);
            cnt->persistent++;
            cnt->calls++;
            cnt->per_coll[k->coll]++;
            cnt->bytes_total += call_bytes(k);
        }
        if (cnt->calls >= next_report) {
            rss_report(R, what);
            next_report += 1000;
        }
    }
}

/* Makes the library's caches as big as the main run can make them. The library keeps the
 * scratch memory it takes (per size class, for reuse), and a request holds its scratch while
 * it lives: a persistent one until freed, the blocking calls' request of a communicator for
 * good. So the peak for the largest size classes is: the MAX_PERSISTENT persistent requests,
 * a batch of MAX_BATCH nonblocking calls and a blocking call on each communicator, all of the
 * largest sizes. The sweep: every algorithm of every collective on both communicators at
 * sizes 0 B .. max (the block collectives: up to 100000 B), blocking and nonblocking; then,
 * for each collective but the barrier, and for max and max / 2, that peak at once. */
static void sweep(run_t *R)
{
    const size_t sizes[] = {0, 8, 4096, 100000, max_bytes / 2, max_bytes};
    for (int ci = 0; ci < 2; ci++)
        for (int coll = 0; coll < NCOLL; coll++) {
            comm_t *c = &R->comms[ci];
            for (int a = 0; a < n_algs[coll]; a++) {
                if (ucoll_set_algorithm(c->comm, (ucoll_coll_t)coll, alg_names[coll][a]) !=
                    UCOLL_OK) {
                    fail("ucoll_set_algorithm(%s, \"%s\") failed",
                         mpt_coll_name((ucoll_coll_t)coll), alg_names[coll][a]);
                    continue;
                }
                c->alg[coll] = alg_names[coll][a];
                for (size_t s = 0; s < NELEM(sizes); s++) {
                    /* the block collectives (ten of them, costly at large sizes with p
                     * ranks on few cores): up to 100000 B, on the half communicator up to
                     * 4096 B; the peaks below take them to max and max / 2 */
                    if (is_block(coll) && (sizes[s] > 100000 || (ci == 1 && s > 2)))
                        continue;
                    call_t k[2];
                    int blocking[2] = {1, 0};
                    for (int b = 0; b < 2; b++) {
                        draw_call(&k[b], R->index++, c, coll, sizes[s]);
                        k[b].slot = R->slots[b];
                    }
                    run_batch(k, 2, blocking, &R->cnt);
                }
            }
            ucoll_set_algorithm(c->comm, (ucoll_coll_t)coll, "auto");
            c->alg[coll] = "auto";
        }
    ucoll_status_t st;
    for (int coll = 0; coll < NCOLL; coll++)
        for (size_t bytes = max_bytes; coll != UCOLL_COLL_BARRIER && bytes >= max_bytes / 2;
             bytes /= 2) {
            call_t pers[MAX_PERSISTENT];
            for (int p = 0; p < MAX_PERSISTENT; p++) {
                call_t *k = &pers[p];
                draw_call(k, R->index++, &R->comms[0], coll, bytes);
                k->slot = R->pslots[p];
                k->form = FORM_PERSISTENT;
                prepare(k);
                if ((st = make_persistent(k)) != UCOLL_OK) {
                    verify(k, st);
                    k->req = NULL;
                    continue;
                }
                st = ucoll_start(k->req);
                verify(k, st == UCOLL_OK ? ucoll_wait(k->req) : st);
            }
            for (int ci = 0; ci < 2; ci++) {
                call_t k;
                draw_call(&k, R->index++, &R->comms[ci], coll, bytes);
                k.slot = R->slots[0];
                run_blocking(&k, &R->cnt);
            }
            call_t batch[MAX_BATCH];
            int blocking[MAX_BATCH] = {0};
            for (int b = 0; b < MAX_BATCH; b++) {
                draw_call(&batch[b], R->index++, &R->comms[0], coll, bytes);
                batch[b].slot = R->slots[b];
            }
            run_batch(batch, MAX_BATCH, blocking, &R->cnt);
            for (int p = 0; p < MAX_PERSISTENT; p++)
                if (pers[p].req != NULL && (st = ucoll_request_free(pers[p].req)) != UCOLL_OK)
                    fail("ucoll_request_free(persistent): %s", ucoll_strerror(st));
        }
}

int main(int argc, char **argv)
{
    long total_ops = 10000, warm_ops = 2000;
    uint64_t seed = 12345;
    double tolerance = 0.10;
    int expect_size = 0;
    for (int c = 0; c < NCOLL; c++)
        parse_alg_list(c, builtin_algs[c]);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--ops") == 0 && v) {
            total_ops = atol(v);
        } else if (strcmp(a, "--warmup-ops") == 0 && v) {
            warm_ops = atol(v);
        } else if (strcmp(a, "--seed") == 0 && v) {
            seed = strtoull(v, NULL, 0);
        } else if (strcmp(a, "--max-bytes") == 0 && v) {
            max_bytes = (size_t)strtoull(v, NULL, 0);
        } else if (strcmp(a, "--rss-tolerance") == 0 && v) {
            tolerance = atof(v);
        } else if (strcmp(a, "--expect-size") == 0 && v) {
            expect_size = atoi(v);
        } else if (strcmp(a, "--alg-list") == 0 && v) {
            const char *eq = strchr(v, '=');
            int c = 0;
            while (eq != NULL && c < NCOLL &&
                   (strlen(mpt_coll_name((ucoll_coll_t)c)) != (size_t)(eq - v) ||
                    strncmp(mpt_coll_name((ucoll_coll_t)c), v, (size_t)(eq - v)) != 0))
                c++;
            if (eq == NULL || c == NCOLL) {
                fprintf(stderr, "stress_test: --alg-list wants COLL=ALG,..., got %s\n", v);
                return 2;
            }
            parse_alg_list(c, eq + 1);
        } else {
            fprintf(stderr, "usage: stress_test [--ops N] [--warmup-ops N] [--seed S] "
                            "[--max-bytes B] [--rss-tolerance F] [--expect-size N] "
                            "[--alg-list COLL=A,B,...]...\n");
            return 2;
        }
        i++;
    }
    if (total_ops < 1 || warm_ops < 0 || max_bytes < 64 || tolerance <= 0)
        return 2;

#ifdef __GLIBC__
    /* fixed thresholds: glibc otherwise raises them after big blocks are freed and then keeps
     * up to a few MiB of freed memory resident, which would come and go in the RSS figures
     * independently of what the library holds */
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
    mallopt(M_TRIM_THRESHOLD, 128 * 1024);
#endif
    static run_t R;
    ucoll_status_t st = ucoll_init(&R.world);
    if (st != UCOLL_OK) {
        printf("FATAL stress_test: ucoll_init: %s\n", ucoll_strerror(st));
        return 2;
    }
    const double t_start = now();
    g_rank = ucoll_comm_rank(R.world);
    g_size = ucoll_comm_size(R.world);
    const int size = ucoll_comm_size(R.world);
    if (expect_size > 0 && size != expect_size) {
        printf("FATAL rank %d: job size %d, expected %d\n", g_rank, size, expect_size);
        return 2;
    }
    if (size > MAX_RANKS) {
        printf("FATAL stress_test: at most %d ranks\n", MAX_RANKS);
        return 2;
    }
    if ((st = ucoll_op_create(affine_fn, &user_arg_affine, 0, &kinds[K_U64_AFFINE].op)) != 0 ||
        (st = ucoll_op_create(usersum_fn, &user_arg_sum, 1, &kinds[K_U32_USERSUM].op)) != 0) {
        printf("FATAL stress_test: ucoll_op_create: %s\n", ucoll_strerror(st));
        return 2;
    }

    /* world and its halves: color rank % 2, keys reversed */
    R.comms[0].comm = R.world;
    R.comms[0].name = "world";
    ucoll_comm_t *half = NULL;
    if ((st = ucoll_comm_split(R.world, g_rank % 2, -g_rank, &half)) != UCOLL_OK) {
        printf("FATAL stress_test: ucoll_comm_split: %s\n", ucoll_strerror(st));
        return 2;
    }
    R.comms[1].comm = half;
    R.comms[1].name = "half";
    for (int i = 0; i < 2; i++) {
        R.comms[i].rank = ucoll_comm_rank(R.comms[i].comm);
        R.comms[i].size = ucoll_comm_size(R.comms[i].comm);
        for (int c = 0; c < NCOLL; c++)
            R.comms[i].alg[c] = "auto";
    }
    expect_buf = aligned_alloc(64, max_bytes + 64);
    expect_send = aligned_alloc(64, max_bytes + 64);
    ref_tmp = aligned_alloc(64, max_bytes + 64);
    ref_out = aligned_alloc(64, max_bytes + 64);
    if (expect_buf == NULL || expect_send == NULL || ref_tmp == NULL || ref_out == NULL)
        return 2;
    memset(expect_buf, 0, max_bytes + 64); /* all resident from the start */
    memset(expect_send, 0, max_bytes + 64);
    memset(ref_tmp, 0, max_bytes + 64);
    memset(ref_out, 0, max_bytes + 64);
    for (int i = 0; i < MAX_BATCH; i++)
        R.slots[i] = new_slot(max_bytes);
    for (int i = 0; i < MAX_PERSISTENT; i++)
        R.pslots[i] = new_slot(max_bytes);
    rng_state = mpt_mix64(seed);

    /* warm-up: the sweep, then warm_ops random calls like the main run's */
    R.t_base = t_start;
    R.rss_base = rss_kib();
    sweep(&R);
    const long sweep_calls = R.index;
    random_calls(&R, warm_ops, "warm-up");
    const long warm_calls = R.index;
    const double t_warm = now();
    const long rss_warm = rss_kib();
    if (g_rank == 0)
        printf("warm-up: %ld calls (sweep %ld) in %.1f s; RSS %ld KiB (rank 0)\n", warm_calls,
               sweep_calls, t_warm - t_start, rss_warm);

    /* the main run */
    memset(&R.cnt, 0, sizeof(R.cnt));
    R.rss_base = rss_warm;
    R.t_base = t_warm;
    n_verified = 0;
    random_calls(&R, total_ops, "run");
    for (int p = 0; p < MAX_PERSISTENT; p++)
        if (R.persistent[p].req != NULL && ucoll_request_free(R.persistent[p].req) != UCOLL_OK)
            fail("ucoll_request_free(persistent) at the end");
    const double t_end = now();
    const long rss_end = rss_kib();
    if (user_bad_calls != 0)
        fail("a user op was called %ld times with the wrong dtype or argument", user_bad_calls);

    /* memory */
    double growth = rss_warm > 0 ? (double)(rss_end - rss_warm) / (double)rss_warm : 1.0;
    if (rss_warm <= 0 || rss_end <= 0)
        fail("cannot read /proc/self/statm");
    else if (growth > tolerance)
        fail("RSS grew from %ld KiB after the warm-up to %ld KiB at the end (+%.1f %%, limit "
             "%.0f %%)",
             rss_warm, rss_end, 100 * growth, 100 * tolerance);

    /* the verdict over all ranks */
    double mine[2] = {growth, -growth}, all[2] = {0, 0};
    int64_t f = n_failed, failed_anywhere = n_failed;
    if ((st = ucoll_allreduce(R.world, mine, all, 2, UCOLL_FLOAT64, UCOLL_OP_MAX)) != UCOLL_OK ||
        (st = ucoll_allreduce(R.world, &f, &failed_anywhere, 1, UCOLL_INT64, UCOLL_OP_SUM)) !=
            UCOLL_OK) {
        fail("the final allreduces: %s", ucoll_strerror(st));
        failed_anywhere = n_failed;
    }
    const counts_t *cnt = &R.cnt;
    if (g_rank == 0) {
        char per_coll[NCOLL * 32] = "";
        for (int c = 0; c < NCOLL; c++)
            snprintf(per_coll + strlen(per_coll), sizeof(per_coll) - strlen(per_coll), "%s%s %ld",
                     c ? ", " : "", mpt_coll_name((ucoll_coll_t)c), cnt->per_coll[c]);
        printf("stress np=%d: %ld calls after %ld warm-up calls (%ld blocking, %ld nonblocking, "
               "%ld persistent; %s; %.1f MiB of vectors), %ld results verified on rank 0, %lld "
               "failed checks over all ranks; %.1f s (warm-up %.1f s); RSS rank 0: %ld KiB after "
               "warm-up, %ld KiB at the end; RSS change over ranks %+.1f %% .. %+.1f %% "
               "(limit +%.0f %%); verdict: %s\n",
               size, cnt->calls, warm_calls, cnt->blocking, cnt->nonblocking, cnt->persistent,
               per_coll, (double)cnt->bytes_total / 1048576.0, n_verified,
               (long long)failed_anywhere, t_end - t_warm, t_warm - t_start, rss_warm, rss_end,
               -100 * all[1], 100 * all[0], 100 * tolerance,
               failed_anywhere == 0 ? "PASS" : "FAIL");
        fflush(stdout);
    }
    if ((st = ucoll_comm_free(half)) != UCOLL_OK)
        fail("ucoll_comm_free: %s", ucoll_strerror(st));
    if ((st = ucoll_finalize(R.world)) != UCOLL_OK)
        fail("ucoll_finalize: %s", ucoll_strerror(st));
    return n_failed == 0 ? 0 : 1;
}
