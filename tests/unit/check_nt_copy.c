/*
 * Unit tests of nt_copy (ucx_transport/nt_copy.c): for every alignment of source and
 * destination and every length around the 16- and 64-byte steps of its loops, exactly the n
 * bytes of the source land at the destination and no byte beside them changes.
 */
#include "nt_copy.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { GUARD = 0xA5, SLACK = 128 };

/* byte i of the source: a pattern whose period (251) matches no loop step */
static unsigned char pattern(size_t i)
{
    return (unsigned char)(i % 251 + 1);
}

/* copies n bytes from src + soff into dst + doff of buffers of n + 2 SLACK bytes and checks
 * every byte of dst; 0 or the index of the first wrong byte + 1 */
static size_t copy_and_check(size_t n, size_t soff, size_t doff)
{
    const size_t len = n + 2 * SLACK;
    unsigned char *src = aligned_alloc(64, (len + 63) / 64 * 64);
    unsigned char *dst = aligned_alloc(64, (len + 63) / 64 * 64);
    ck_assert_ptr_nonnull(src);
    ck_assert_ptr_nonnull(dst);
    for (size_t i = 0; i < len; i++)
        src[i] = pattern(i);
    memset(dst, GUARD, len);
    nt_copy(dst + doff, src + soff, n);
    nt_fence();
    size_t bad = 0;
    for (size_t i = 0; i < len && bad == 0; i++) {
        const int inside = i >= doff && i < doff + n;
        const unsigned char want = inside ? pattern(i - doff + soff) : GUARD;
        if (dst[i] != want)
            bad = i + 1;
    }
    free(src);
    free(dst);
    return bad;
}

START_TEST(every_alignment_small_lengths)
{
    for (size_t n = 0; n <= 300; n++)
        for (size_t doff = 0; doff < 64; doff++)
            for (size_t soff = 0; soff < 16; soff += 5) {
                const size_t bad = copy_and_check(n, soff, doff);
                ck_assert_msg(bad == 0, "n %zu src offset %zu dst offset %zu: byte %zu wrong", n,
                              soff, doff, bad - 1);
            }
}
END_TEST

START_TEST(large_lengths)
{
    /* NT_COPY_MIN and around it, as the library calls it */
    const size_t lens[] = {NT_COPY_MIN - 1, NT_COPY_MIN, NT_COPY_MIN + 17, 3 * NT_COPY_MIN + 63};
    const size_t offs[][2] = {{0, 0}, {3, 0}, {0, 40}, {7, 63}, {64, 16}};
    for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
        for (size_t j = 0; j < sizeof(offs) / sizeof(offs[0]); j++) {
            const size_t bad = copy_and_check(lens[i], offs[j][0], offs[j][1]);
            ck_assert_msg(bad == 0, "n %zu src offset %zu dst offset %zu: byte %zu wrong", lens[i],
                          offs[j][0], offs[j][1], bad - 1);
        }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("nt_copy");
    TCase *tc = tcase_create("copy");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, every_alignment_small_lengths);
    tcase_add_test(tc, large_lengths);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
