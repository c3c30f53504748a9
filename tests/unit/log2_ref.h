/* The unit tests' own integer logarithms, computed one step at a time so that the expected
 * figures do not lean on the library's sched_ceil_log2. */
#ifndef UCOLL_TESTS_LOG2_REF_H
#define UCOLL_TESTS_LOG2_REF_H

#include <stdint.h>

/* smallest k with 2^k >= n (n >= 1) */
static inline unsigned clog2(uint64_t n)
{
    unsigned k = 0;
    while ((UINT64_C(1) << k) < n)
        k++;
    return k;
}

/* largest k with 2^k <= n (n >= 1) */
static inline unsigned flog2(uint64_t n)
{
    unsigned k = 0;
    while (n >>= 1)
        k++;
    return k;
}

#endif
