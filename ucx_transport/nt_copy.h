/*
 * Copies of large messages whose destination is not read again soon: the receiver's buffer of
 * a single-copy read, the result a REDUCE writes into its own buffer and into the next round's
 * receiver. Non-temporal stores skip the read of every destination line that an ordinary store
 * makes first, and leave the caches to the data still to be read.
 */
#ifndef UCOLL_NT_COPY_H
#define UCOLL_NT_COPY_H

#include <stddef.h>

/* messages from this size up take nt_copy: below it the destination may still be in a cache
 * when it is next read (a loop over the same buffers), and non-temporal stores would evict it */
#define NT_COPY_MIN ((size_t)8 << 20)

/* n bytes from src to dst (which must not overlap), by non-temporal stores where the CPU has
 * them (x86-64: SSE2), else memcpy. The stores are weakly ordered: nt_fence() must follow
 * before another process or thread is told the bytes are there. */
void nt_copy(void *dst, const void *src, size_t n);

/* orders every nt_copy store before the stores that follow it */
void nt_fence(void);

#endif
