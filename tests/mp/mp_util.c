/* tests/mp/mp_util.c: the helpers of mp_util.h (libmptest) */
#include "mp_util.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *const mpt_form_names[MPT_NFORMS] = {"blocking", "nonblocking", "persistent"};

mpt_tally_t mpt_tally = {.rank = -1};

static void vfail(const char *name, const char *fmt, va_list ap)
{
    mpt_tally.fails++;
    if (mpt_tally.max_prints > 0 && mpt_tally.prints++ >= mpt_tally.max_prints) {
        if (mpt_tally.prints == mpt_tally.max_prints + 1)
            printf("FAIL rank %d: (further failure messages of this rank suppressed)\n",
                   mpt_tally.rank);
        return;
    }
    char msg[600];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    printf("FAIL rank %d: %s: %s\n", mpt_tally.rank, name, msg);
    fflush(stdout);
}

void mpt_fail(const char *name, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(name, fmt, ap);
    va_end(ap);
}

int mpt_check(int cond, const char *name, const char *fmt, ...)
{
    mpt_tally.checks++;
    if (cond)
        return 1;
    va_list ap;
    va_start(ap, fmt);
    vfail(name, fmt, ap);
    va_end(ap);
    return 0;
}

int mpt_expect_st(ucoll_status_t st, ucoll_status_t want, const char *name, const char *what)
{
    int ok = mpt_check(st == want, name, "%s: status %d (%s), expected %d (%s)", what, (int)st,
                       ucoll_strerror(st), (int)want, ucoll_strerror(want));
    if (!ok && want == UCOLL_OK && mpt_tally.fatal_lost_job &&
        (st == UCOLL_ERR_TIMED_OUT || st == UCOLL_ERR_PEER_FAILED || st == UCOLL_ERR_TRANSPORT)) {
        printf("FATAL rank %d: %s: status %d (%s); aborting this process\n", mpt_tally.rank, name,
               (int)st, ucoll_strerror(st));
        fflush(stdout);
        exit(3);
    }
    return ok;
}

const char *mpt_coll_name(ucoll_coll_t coll)
{
    static const char *const names[] = {"exscan",         "scan",       "reduce",
                                        "allreduce",      "bcast",      "barrier",
                                        "allgather",      "allgatherv", "reduce_scatter_block",
                                        "reduce_scatter", "alltoall",   "alltoallv",
                                        "gather",         "gatherv",    "scatter",
                                        "scatterv"};
    return (unsigned)coll < sizeof(names) / sizeof(names[0]) ? names[coll] : "?";
}

const char *mpt_status_name(ucoll_status_t st)
{
    switch (st) {
    case UCOLL_OK:
        return "UCOLL_OK";
    case UCOLL_INPROGRESS:
        return "UCOLL_INPROGRESS";
    case UCOLL_ERR_INVALID_ARG:
        return "UCOLL_ERR_INVALID_ARG";
    case UCOLL_ERR_NO_MEMORY:
        return "UCOLL_ERR_NO_MEMORY";
    case UCOLL_ERR_NOT_SUPPORTED:
        return "UCOLL_ERR_NOT_SUPPORTED";
    case UCOLL_ERR_BOOTSTRAP:
        return "UCOLL_ERR_BOOTSTRAP";
    case UCOLL_ERR_TRANSPORT:
        return "UCOLL_ERR_TRANSPORT";
    case UCOLL_ERR_PEER_FAILED:
        return "UCOLL_ERR_PEER_FAILED";
    case UCOLL_ERR_TIMED_OUT:
        return "UCOLL_ERR_TIMED_OUT";
    case UCOLL_ERR_TRUNCATED:
        return "UCOLL_ERR_TRUNCATED";
    case UCOLL_ERR_STATE:
        return "UCOLL_ERR_STATE";
    case UCOLL_ERR_MISMATCH:
        return "UCOLL_ERR_MISMATCH";
    }
    return "UNKNOWN";
}

size_t mpt_dtype_size(ucoll_dtype_t dt)
{
    switch (dt) {
    case UCOLL_INT8:
    case UCOLL_UINT8:
        return 1;
    case UCOLL_INT16:
    case UCOLL_UINT16:
    case UCOLL_FLOAT16:
    case UCOLL_BFLOAT16:
        return 2;
    case UCOLL_INT32:
    case UCOLL_UINT32:
    case UCOLL_FLOAT32:
        return 4;
    case UCOLL_INT64:
    case UCOLL_UINT64:
    case UCOLL_FLOAT64:
        return 8;
    }
    return 0;
}

/* inlined where inputs are made: libmptest is built position-independent, so mpt_mix64
 * itself is called, not inlined, and the call was a quarter of a large test's time */
static inline uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

uint64_t mpt_mix64(uint64_t x)
{
    return mix64(x);
}

uint64_t mpt_affine_then(uint64_t first, uint64_t second)
{
    uint32_t a1 = (uint32_t)first, b1 = (uint32_t)(first >> 32);
    uint32_t a2 = (uint32_t)second, b2 = (uint32_t)(second >> 32);
    return ((uint64_t)(a2 * b1 + b2) << 32) | (uint32_t)(a1 * a2);
}

/* integer types: T the type, U the unsigned type of its width (sums and products wrap) */
#define REF_INT(T, U)                                                                              \
    do {                                                                                           \
        T *a = acc;                                                                                \
        const T *b = x;                                                                            \
        for (size_t i = 0; i < n; i++) {                                                           \
            switch (op) {                                                                          \
            case UCOLL_OP_SUM:                                                                     \
                a[i] = (T)(U)((U)a[i] + (U)b[i]);                                                  \
                break;                                                                             \
            case UCOLL_OP_PROD:                                                                    \
                a[i] = (T)(U)((uintmax_t)(U)a[i] * (uintmax_t)(U)b[i]);                            \
                break;                                                                             \
            case UCOLL_OP_MIN:                                                                     \
                a[i] = b[i] < a[i] ? b[i] : a[i];                                                  \
                break;                                                                             \
            case UCOLL_OP_MAX:                                                                     \
                a[i] = b[i] > a[i] ? b[i] : a[i];                                                  \
                break;                                                                             \
            case UCOLL_OP_LAND:                                                                    \
                a[i] = (T)(a[i] != 0 && b[i] != 0);                                                \
                break;                                                                             \
            case UCOLL_OP_LOR:                                                                     \
                a[i] = (T)(a[i] != 0 || b[i] != 0);                                                \
                break;                                                                             \
            case UCOLL_OP_LXOR:                                                                    \
                a[i] = (T)((a[i] != 0) != (b[i] != 0));                                            \
                break;                                                                             \
            case UCOLL_OP_BAND:                                                                    \
                a[i] = (T)(a[i] & b[i]);                                                           \
                break;                                                                             \
            case UCOLL_OP_BOR:                                                                     \
                a[i] = (T)(a[i] | b[i]);                                                           \
                break;                                                                             \
            case UCOLL_OP_BXOR:                                                                    \
                a[i] = (T)(a[i] ^ b[i]);                                                           \
                break;                                                                             \
            default:                                                                               \
                return -1;                                                                         \
            }                                                                                      \
        }                                                                                          \
        return 0;                                                                                  \
    } while (0)

#define REF_FLOAT(T)                                                                               \
    do {                                                                                           \
        T *a = acc;                                                                                \
        const T *b = x;                                                                            \
        for (size_t i = 0; i < n; i++) {                                                           \
            switch (op) {                                                                          \
            case UCOLL_OP_SUM:                                                                     \
                a[i] += b[i];                                                                      \
                break;                                                                             \
            case UCOLL_OP_PROD:                                                                    \
                a[i] *= b[i];                                                                      \
                break;                                                                             \
            case UCOLL_OP_MIN:                                                                     \
                a[i] = b[i] < a[i] ? b[i] : a[i];                                                  \
                break;                                                                             \
            case UCOLL_OP_MAX:                                                                     \
                a[i] = b[i] > a[i] ? b[i] : a[i];                                                  \
                break;                                                                             \
            default:                                                                               \
                return -1;                                                                         \
            }                                                                                      \
        }                                                                                          \
        return 0;                                                                                  \
    } while (0)

int mpt_ref_combine(ucoll_dtype_t dt, ucoll_op_t op, void *acc, const void *x, size_t n)
{
    switch (dt) {
    case UCOLL_INT8:
        REF_INT(int8_t, uint8_t);
    case UCOLL_UINT8:
        REF_INT(uint8_t, uint8_t);
    case UCOLL_INT16:
        REF_INT(int16_t, uint16_t);
    case UCOLL_UINT16:
        REF_INT(uint16_t, uint16_t);
    case UCOLL_INT32:
        REF_INT(int32_t, uint32_t);
    case UCOLL_UINT32:
        REF_INT(uint32_t, uint32_t);
    case UCOLL_INT64:
        REF_INT(int64_t, uint64_t);
    case UCOLL_UINT64:
        REF_INT(uint64_t, uint64_t);
    case UCOLL_FLOAT32:
        REF_FLOAT(float);
    case UCOLL_FLOAT64:
        REF_FLOAT(double);
    case UCOLL_FLOAT16: /* not here: half_test.c has its own reference */
    case UCOLL_BFLOAT16:
        break;
    }
    return -1;
}

/* width of an integer dtype in bits; 0 for the floating types */
static unsigned int_bits(ucoll_dtype_t dt)
{
    return dt == UCOLL_FLOAT32 || dt == UCOLL_FLOAT64 || dt == UCOLL_FLOAT16 || dt == UCOLL_BFLOAT16
               ? 0
               : 8 * (unsigned)mpt_dtype_size(dt);
}

/* an input of LAND, LOR or LXOR: true (any nonzero pattern of `bits`, 1 on rank 0) as often
 * as keeps the result in doubt */
static uint64_t logical_input(uint64_t h, unsigned bits, ucoll_op_t op, int rank)
{
    const unsigned r = (h >> 3) % 8; /* true: LAND 7 in 8, LOR 1 in 8, LXOR 4 in 8 */
    const int truth = op == UCOLL_OP_LAND ? r != 0 : op == UCOLL_OP_LOR ? r == 0 : r < 4;
    const uint64_t ones = bits == 64 ? ~0ULL : (1ULL << bits) - 1;
    return !truth ? 0 : rank == 0 ? 1 : 1 + (h >> 8) % ones; /* 1 .. 2^bits - 1 */
}

/* a floating input: a multiple of 1/4 of magnitude at most 2^10 (sums of 4096 ranks stay
 * within 2^24 quarters, exact in float32), or a product factor that is a power of two */
static double float_input(uint64_t h, ucoll_op_t op)
{
    if (op == UCOLL_OP_PROD) {
        static const double factor[4] = {1.0, 1.0, 2.0, 0.5};
        return (h & 4 ? -1.0 : 1.0) * factor[h & 3];
    }
    return (double)((int64_t)(h >> 40) % 8192 - 4096 + 1) * 0.25;
}

/* buf[i] = (T)(value), value an expression of element i's hash h; the dtype and op are chosen
 * once per buffer, not per element */
#define FILL_EACH(T, value)                                                                        \
    for (size_t i = 0; i < n; i++) {                                                               \
        const uint64_t h = mix64(base ^ (0x9e3779b97f4a7c15ULL * (uint64_t)(i + 1)));              \
        ((T *)buf)[i] = (T)(value);                                                                \
    }
/* an integer input as the bit pattern of its width (the low `bits` bits count), one loop per
 * op: PROD odd factors, BAND one or two zero bits, BOR one set bit, the logical ops
 * logical_input, the rest (SUM wraps, MIN, MAX, BXOR, user ops) the hash itself */
#define FILL_INT(T)                                                                                \
    do {                                                                                           \
        switch (op) {                                                                              \
        case UCOLL_OP_PROD:                                                                        \
            FILL_EACH(T, h | 1)                                                                    \
            break;                                                                                 \
        case UCOLL_OP_BAND:                                                                        \
            FILL_EACH(T, ~((1ULL << (h % bits)) | (bits > 8 ? 1ULL << ((h >> 6) % bits) : 0)))     \
            break;                                                                                 \
        case UCOLL_OP_BOR:                                                                         \
            FILL_EACH(T, 1ULL << (h % bits))                                                       \
            break;                                                                                 \
        case UCOLL_OP_LAND:                                                                        \
        case UCOLL_OP_LOR:                                                                         \
        case UCOLL_OP_LXOR:                                                                        \
            FILL_EACH(T, logical_input(h, bits, op, rank))                                         \
            break;                                                                                 \
        default:                                                                                   \
            FILL_EACH(T, h)                                                                        \
            break;                                                                                 \
        }                                                                                          \
    } while (0)

void mpt_fill_input(void *buf, size_t n, ucoll_dtype_t dt, ucoll_op_t op, int rank, uint64_t salt)
{
    const unsigned bits = int_bits(dt);
    const uint64_t base = mix64(salt ^ mix64(0x5157 + (uint64_t)(unsigned)rank));
    switch (dt) {
    case UCOLL_INT8:
    case UCOLL_UINT8:
        FILL_INT(uint8_t);
        break;
    case UCOLL_INT16:
    case UCOLL_UINT16:
        FILL_INT(uint16_t);
        break;
    case UCOLL_INT32:
    case UCOLL_UINT32:
        FILL_INT(uint32_t);
        break;
    case UCOLL_INT64:
    case UCOLL_UINT64:
        FILL_INT(uint64_t);
        break;
    case UCOLL_FLOAT32:
        FILL_EACH(float, float_input(h, op));
        break;
    case UCOLL_FLOAT64:
        FILL_EACH(double, float_input(h, op));
        break;
    case UCOLL_FLOAT16: /* not here (mp_util.h) */
    case UCOLL_BFLOAT16:
        memset(buf, 0, n * sizeof(uint16_t));
        break;
    }
}

int mpt_ref_range(void *out, void *tmp, size_t n, ucoll_dtype_t dt, ucoll_op_t op, const int *map,
                  int lo, int hi, uint64_t salt)
{
    mpt_fill_input(out, n, dt, op, map ? map[lo] : lo, salt);
    for (int r = lo + 1; r < hi; r++) {
        mpt_fill_input(tmp, n, dt, op, map ? map[r] : r, salt);
        if (mpt_ref_combine(dt, op, out, tmp, n) != 0)
            return -1;
    }
    return 0;
}

ucoll_status_t mpt_call(mpt_form_t form, ucoll_coll_t coll, ucoll_comm_t *c, const void *s, void *r,
                        size_t n, ucoll_dtype_t dt, ucoll_op_t op, int root, ucoll_request_t **req)
{
    switch (coll) {
    case UCOLL_COLL_EXSCAN:
        return form == MPT_BLOCKING      ? ucoll_exscan(c, s, r, n, dt, op)
               : form == MPT_NONBLOCKING ? ucoll_iexscan(c, s, r, n, dt, op, req)
                                         : ucoll_exscan_init(c, s, r, n, dt, op, req);
    case UCOLL_COLL_SCAN:
        return form == MPT_BLOCKING      ? ucoll_scan(c, s, r, n, dt, op)
               : form == MPT_NONBLOCKING ? ucoll_iscan(c, s, r, n, dt, op, req)
                                         : ucoll_scan_init(c, s, r, n, dt, op, req);
    case UCOLL_COLL_REDUCE:
        return form == MPT_BLOCKING      ? ucoll_reduce(c, s, r, n, dt, op, root)
               : form == MPT_NONBLOCKING ? ucoll_ireduce(c, s, r, n, dt, op, root, req)
                                         : ucoll_reduce_init(c, s, r, n, dt, op, root, req);
    case UCOLL_COLL_ALLREDUCE:
        return form == MPT_BLOCKING      ? ucoll_allreduce(c, s, r, n, dt, op)
               : form == MPT_NONBLOCKING ? ucoll_iallreduce(c, s, r, n, dt, op, req)
                                         : ucoll_allreduce_init(c, s, r, n, dt, op, req);
    case UCOLL_COLL_BCAST:
        return form == MPT_BLOCKING      ? ucoll_bcast(c, r, n, dt, root)
               : form == MPT_NONBLOCKING ? ucoll_ibcast(c, r, n, dt, root, req)
                                         : ucoll_bcast_init(c, r, n, dt, root, req);
    case UCOLL_COLL_BARRIER:
        return form == MPT_BLOCKING ? ucoll_barrier(c) : ucoll_ibarrier(c, req);
    default: /* the block collectives: mpt_block_call */
        break;
    }
    return UCOLL_ERR_INVALID_ARG;
}

ucoll_status_t mpt_block_call(mpt_form_t form, ucoll_coll_t coll, ucoll_comm_t *c, const void *s,
                              const size_t *sc, const size_t *sd, void *r, const size_t *rc,
                              const size_t *rd, size_t n, ucoll_dtype_t dt, ucoll_op_t op, int root,
                              ucoll_request_t **req)
{
#define FORM3(name, ...)                                                                           \
    (form == MPT_BLOCKING      ? ucoll_##name(__VA_ARGS__)                                         \
     : form == MPT_NONBLOCKING ? ucoll_i##name(__VA_ARGS__, req)                                   \
                               : ucoll_##name##_init(__VA_ARGS__, req))
    switch (coll) {
    case UCOLL_COLL_ALLGATHER:
        return FORM3(allgather, c, s, r, n, dt);
    case UCOLL_COLL_ALLGATHERV:
        return FORM3(allgatherv, c, s, n, r, rc, rd, dt);
    case UCOLL_COLL_REDUCE_SCATTER_BLOCK:
        return FORM3(reduce_scatter_block, c, s, r, n, dt, op);
    case UCOLL_COLL_REDUCE_SCATTER:
        return FORM3(reduce_scatter, c, s, r, rc, dt, op);
    case UCOLL_COLL_ALLTOALL:
        return FORM3(alltoall, c, s, r, n, dt);
    case UCOLL_COLL_ALLTOALLV:
        return FORM3(alltoallv, c, s, sc, sd, r, rc, rd, dt);
    case UCOLL_COLL_GATHER:
        return FORM3(gather, c, s, r, n, dt, root);
    case UCOLL_COLL_GATHERV:
        return FORM3(gatherv, c, s, n, r, rc, rd, dt, root);
    case UCOLL_COLL_SCATTER:
        return FORM3(scatter, c, s, r, n, dt, root);
    case UCOLL_COLL_SCATTERV:
        return FORM3(scatterv, c, s, sc, sd, r, n, dt, root);
    default: /* the first six: mpt_call */
        break;
    }
#undef FORM3
    return UCOLL_ERR_INVALID_ARG;
}

static int capture_fd = -1, saved_stderr_fd = -1;

void mpt_capture_stderr_begin(void)
{
    char path[] = "/tmp/ucoll-mptest-stderr.XXXXXX";
    capture_fd = mkstemp(path);
    if (capture_fd < 0) {
        perror("mkstemp");
        exit(2);
    }
    unlink(path);
    fflush(stderr);
    saved_stderr_fd = dup(2);
    dup2(capture_fd, 2);
}

void mpt_capture_stderr_end(char *text, size_t cap, int echo)
{
    fflush(stderr);
    dup2(saved_stderr_fd, 2);
    close(saved_stderr_fd);
    ssize_t n = pread(capture_fd, text, cap - 1, 0);
    text[n > 0 ? n : 0] = '\0';
    close(capture_fd);
    if (echo)
        fputs(text, stderr);
}
