/*
 * tests/mp/mp_util.h: what the multi-process test programs share (libmptest, mp_util.c): the
 * collectives' and forms' names, element sizes, the input hash, the reference (+) of the
 * built-in operations in plain C, and one call of any collective in any form (blocking,
 * nonblocking, persistent). Nothing here uses the library beyond its public API.
 */
#ifndef UCOLL_TESTS_MP_UTIL_H
#define UCOLL_TESTS_MP_UTIL_H

#include <ucoll.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

/* the forms a collective can be called in */
typedef enum { MPT_BLOCKING, MPT_NONBLOCKING, MPT_PERSISTENT, MPT_NFORMS } mpt_form_t;
extern const char *const mpt_form_names[MPT_NFORMS]; /* "blocking", ... */

/* "exscan", "scan", ..., "barrier", "allgather", ..., "scatterv" (the names of `ucoll_info -a`);
 * "?" for anything else */
const char *mpt_coll_name(ucoll_coll_t coll);

/* "UCOLL_OK", "UCOLL_ERR_TIMED_OUT", ...; "UNKNOWN" for anything else */
const char *mpt_status_name(ucoll_status_t st);

/* bytes of one element of dt (0 for an unknown dtype) */
size_t mpt_dtype_size(ucoll_dtype_t dt);

/* the splitmix64 finalizer: the tests' hash for inputs and shared random streams */
uint64_t mpt_mix64(uint64_t x);

/* the non-commutative user op of the tests: a uint64 holds the map x -> a x + b (mod 2^32), a
 * in the low half, b in the high half; the result is `first`, then `second`:
 * x -> a2 (a1 x + b1) + b2 */
uint64_t mpt_affine_then(uint64_t first, uint64_t second);

/* buf[0..n) = rank's input for a collective on (dt, op) under salt. Element i depends on
 * (salt, rank, i) only, so the input for count n is a prefix of that for any larger count.
 * Every value is exact in dt, and so is every combination of up to 4096 ranks' values (sums
 * of floats: multiples of 1/4 of magnitude at most 2^10) or of 256 (products of floats: +-1/2,
 * 1 or 2, whose exponents stay far from float32's range in practice). The values suit the
 * op: BAND clears one or two bits, BOR sets one, LAND is true 7 times in 8, LOR once in 8, LXOR
 * half the time, a true value of rank 0 being 1 (so every single-operand result is 0 or 1),
 * of other ranks any non-zero value; integer products take odd factors (never 0 modulo
 * 2^width). Any other op (user ops) takes uniformly random bits (floats: as for SUM).
 * FLOAT16 and BFLOAT16 are not covered (zeros; mpt_ref_combine returns -1): half_test.c has
 * inputs and a reference of its own. */
void mpt_fill_input(void *buf, size_t n, ucoll_dtype_t dt, ucoll_op_t op, int rank, uint64_t salt);

/* out[0..n) = the combination, in rank order, of the mpt_fill_input inputs of ranks
 * map[lo], ..., map[hi - 1] (ranks lo..hi-1 when map is NULL); hi > lo. tmp: n elements of
 * scratch. Returns -1 (out unspecified) where mpt_ref_combine does. */
int mpt_ref_range(void *out, void *tmp, size_t n, ucoll_dtype_t dt, ucoll_op_t op, const int *map,
                  int lo, int hi, uint64_t salt);

/* acc[i] = acc[i] (+) x[i] for i < n with a built-in op on dt, acc holding the lower ranks;
 * plain C, independent of the library. Integer sums and products wrap (as unsigned
 * arithmetic); the logical ops give 0 or 1. Returns -1 (nothing done) for a pair the library
 * does not define (a logical or bitwise op on a floating-point type). */
int mpt_ref_combine(ucoll_dtype_t dt, ucoll_op_t op, void *acc, const void *x, size_t n);

/* One call of collective coll in the given form: ucoll_X, ucoll_iX (the request in *req) or
 * ucoll_X_init (the persistent request in *req). s and r are the send and receive buffers
 * (bcast uses r only, barrier neither); root matters for reduce and bcast. There is no
 * persistent barrier in the API: MPT_PERSISTENT with the barrier calls ucoll_ibarrier. */
ucoll_status_t mpt_call(mpt_form_t form, ucoll_coll_t coll, ucoll_comm_t *c, const void *s, void *r,
                        size_t n, ucoll_dtype_t dt, ucoll_op_t op, int root, ucoll_request_t **req);

/* One call of block collective coll (allgather .. scatterv) in the given form, with the
 * arguments its signature takes among these: s, sc, sd the send buffer, counts and
 * displacements; r, rc, rd the receive side; n the one count it takes (count, sendcount or
 * recvcount); op for the reductions, root for the rooted ones. The first six: mpt_call. */
ucoll_status_t mpt_block_call(mpt_form_t form, ucoll_coll_t coll, ucoll_comm_t *c, const void *s,
                              const size_t *sc, const size_t *sd, void *r, const size_t *rc,
                              const size_t *rd, size_t n, ucoll_dtype_t dt, ucoll_op_t op, int root,
                              ucoll_request_t **req);

/* The checks of a test process: mpt_check counts one check and reports it when it fails, as
 * "FAIL rank R: NAME: MESSAGE" on stdout. Fields set by the test: rank (printed), max_prints
 * (FAIL lines printed at most, then one line saying the rest are suppressed; 0: no limit) and
 * fatal_lost_job (mpt_expect_st ends the process with status 3 when a call that had to succeed
 * timed out, lost a peer or the transport: the job cannot go on). */
typedef struct {
    int rank;
    long checks, fails;
    int max_prints, prints;
    int fatal_lost_job;
} mpt_tally_t;
extern mpt_tally_t mpt_tally;

/* one failure (not a check of its own) */
/* stderr of this process into a temporary file from capture_begin to capture_end, which puts
 * its text (at most cap - 1 bytes) into text and, if echo, writes it to stderr after all */
void mpt_capture_stderr_begin(void);
void mpt_capture_stderr_end(char *text, size_t cap, int echo);

void mpt_fail(const char *name, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* one check: counts it, reports it when cond is false; returns cond */
int mpt_check(int cond, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* the check that a call (`what`) returned want */
int mpt_expect_st(ucoll_status_t st, ucoll_status_t want, const char *name, const char *what);

/* seconds on the monotonic clock */
static inline double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* one element of dtype dt as text: decimal, hexadecimal for the unsigned 32/64-bit types */
static inline void fmt_elem(ucoll_dtype_t dt, const void *p, char *out, size_t outlen)
{
    switch (dt) {
    case UCOLL_INT8:
        snprintf(out, outlen, "%d", *(const int8_t *)p);
        break;
    case UCOLL_UINT8:
        snprintf(out, outlen, "%u", *(const uint8_t *)p);
        break;
    case UCOLL_INT16:
        snprintf(out, outlen, "%d", *(const int16_t *)p);
        break;
    case UCOLL_UINT16:
        snprintf(out, outlen, "%u", *(const uint16_t *)p);
        break;
    case UCOLL_INT32:
        snprintf(out, outlen, "%ld", (long)*(const int32_t *)p);
        break;
    case UCOLL_UINT32:
        snprintf(out, outlen, "%lu", (unsigned long)*(const uint32_t *)p);
        break;
    case UCOLL_INT64:
        snprintf(out, outlen, "%lld", (long long)*(const int64_t *)p);
        break;
    case UCOLL_UINT64:
        snprintf(out, outlen, "0x%llx", (unsigned long long)*(const uint64_t *)p);
        break;
    case UCOLL_FLOAT32:
        snprintf(out, outlen, "%.9g", (double)*(const float *)p);
        break;
    case UCOLL_FLOAT64:
        snprintf(out, outlen, "%.17g", *(const double *)p);
        break;
    case UCOLL_FLOAT16: /* the bit pattern */
    case UCOLL_BFLOAT16:
        snprintf(out, outlen, "0x%04x", (unsigned)*(const uint16_t *)p);
        break;
    }
}

#endif
