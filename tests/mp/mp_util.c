/* tests/mp/mp_util.c: the helpers of mp_util.h (libmptest) */
#include "mp_util.h"

#include <stdarg.h>
#include <stdlib.h>

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
    static const char *const names[] = {"exscan",    "scan",  "reduce",
                                        "allreduce", "bcast", "barrier"};
    return (unsigned)coll < sizeof(names) / sizeof(names[0]) ? names[coll] : "?";
}

size_t mpt_dtype_size(ucoll_dtype_t dt)
{
    switch (dt) {
    case UCOLL_INT8:
    case UCOLL_UINT8:
        return 1;
    case UCOLL_INT16:
    case UCOLL_UINT16:
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

uint64_t mpt_mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
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
    }
    return -1;
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
    }
    return UCOLL_ERR_INVALID_ARG;
}
