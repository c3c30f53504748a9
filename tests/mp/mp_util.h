/*
 * tests/mp/mp_util.h: small helpers the multi-process test programs share.
 */
#ifndef UCOLL_TESTS_MP_UTIL_H
#define UCOLL_TESTS_MP_UTIL_H

#include <ucoll.h>

#include <stdint.h>
#include <stdio.h>
#include <time.h>

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
    }
}

#endif
