/*
 * nt_copy: the destination's first bytes up to a 64-byte line and its last partial 16 bytes
 * by memcpy, the aligned middle by 16-byte non-temporal stores from unaligned loads, four per
 * line so that each line's write-combining buffer fills at once.
 */
#include "nt_copy.h"

#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) || defined(__SSE2__)
#include <emmintrin.h>

void nt_copy(void *dst, const void *src, size_t n)
{
    char *d = dst;
    const char *s = src;
    const size_t head = (64 - ((uintptr_t)d & 63)) & 63;
    if (n < head + 64) {
        memcpy(d, s, n);
        return;
    }
    memcpy(d, s, head);
    d += head, s += head, n -= head;
    for (; n >= 64; d += 64, s += 64, n -= 64) {
        const __m128i a = _mm_loadu_si128((const __m128i *)(const void *)s);
        const __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(s + 16));
        const __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(s + 32));
        const __m128i e = _mm_loadu_si128((const __m128i *)(const void *)(s + 48));
        _mm_stream_si128((__m128i *)(void *)d, a);
        _mm_stream_si128((__m128i *)(void *)(d + 16), b);
        _mm_stream_si128((__m128i *)(void *)(d + 32), c);
        _mm_stream_si128((__m128i *)(void *)(d + 48), e);
    }
    for (; n >= 16; d += 16, s += 16, n -= 16)
        _mm_stream_si128((__m128i *)(void *)d, _mm_loadu_si128((const __m128i *)(const void *)s));
    memcpy(d, s, n);
}

void nt_fence(void)
{
    _mm_sfence();
}

#else

void nt_copy(void *dst, const void *src, size_t n)
{
    memcpy(dst, src, n);
}

void nt_fence(void)
{
}

#endif
