/*
 * Unit tests of the message tag (src/tag.h): each field lands in its own bits (comm 63..52,
 * sender 51..35, sequence 34..23, round 22..15, last 14, segment 13..0), values wrap modulo
 * their field, the limits derived from the widths are the documented ones, and tags that
 * differ in any field differ.
 */
#include "tag.h"

#include <check.h>
#include <stdlib.h>

START_TEST(fields_in_their_bits)
{
    ck_assert_uint_eq(ucoll_tag(1, 0, 0, 0, 0, 0), UINT64_C(1) << 52);
    ck_assert_uint_eq(ucoll_tag(0, 1, 0, 0, 0, 0), UINT64_C(1) << 35);
    ck_assert_uint_eq(ucoll_tag(0, 0, 1, 0, 0, 0), UINT64_C(1) << 23);
    ck_assert_uint_eq(ucoll_tag(0, 0, 0, 1, 0, 0), UINT64_C(1) << 15);
    ck_assert_uint_eq(ucoll_tag(0, 0, 0, 0, 0, 1), UINT64_C(1) << 14);
    ck_assert_uint_eq(ucoll_tag(0, 0, 0, 0, 1, 0), UINT64_C(1));
    ck_assert_uint_eq(UCOLL_TAG_LAST_SEGMENT, UINT64_C(1) << 14);
    /* every field at its largest value: all 64 bits set, none spilling into another */
    ck_assert_uint_eq(ucoll_tag(4095, 131071, 4095, 255, 16383, 1), UINT64_MAX);
    ck_assert_uint_eq(ucoll_tag(4095, 0, 0, 0, 0, 0), UINT64_C(0xFFF) << 52);
    ck_assert_uint_eq(ucoll_tag(0, 131071, 0, 0, 0, 0), UINT64_C(0x1FFFF) << 35);
    ck_assert_uint_eq(ucoll_tag(0, 0, 4095, 0, 0, 0), UINT64_C(0xFFF) << 23);
    ck_assert_uint_eq(ucoll_tag(0, 0, 0, 255, 0, 0), UINT64_C(0xFF) << 15);
    ck_assert_uint_eq(ucoll_tag(0, 0, 0, 0, 16383, 0), UINT64_C(0x3FFF));
}
END_TEST

START_TEST(values_wrap_within_their_field)
{
    ck_assert_uint_eq(ucoll_tag(7, 9, 4096 + 5, 3, 2, 0), ucoll_tag(7, 9, 5, 3, 2, 0));
    ck_assert_uint_eq(ucoll_tag(7, 9, 5, 256 + 3, 2, 0), ucoll_tag(7, 9, 5, 3, 2, 0));
    ck_assert_uint_eq(ucoll_tag(7, 9, 5, 3, 16384 + 2, 0), ucoll_tag(7, 9, 5, 3, 2, 0));
    ck_assert_uint_eq(ucoll_tag(7, 131072 + 9, 5, 3, 2, 0), ucoll_tag(7, 9, 5, 3, 2, 0));
    ck_assert_uint_eq(ucoll_tag(4096 + 7, 9, 5, 3, 2, 0), ucoll_tag(7, 9, 5, 3, 2, 0));
}
END_TEST

START_TEST(limits)
{
    ck_assert_int_eq(UCOLL_MAX_COMMS, 4096);
    ck_assert_int_eq(UCOLL_MAX_RANKS, 131072);
    ck_assert_int_eq(UCOLL_MAX_ROUNDS, 255);
    ck_assert_int_eq(UCOLL_MAX_SEGMENTS, 16383);
    ck_assert_uint_eq(UCOLL_SEQ_WINDOW, 4095);
}
END_TEST

START_TEST(any_field_tells_tags_apart)
{
    const uint64_t base = ucoll_tag(3, 100, 200, 10, 20, 0);
    ck_assert_uint_ne(base, ucoll_tag(4, 100, 200, 10, 20, 0));
    ck_assert_uint_ne(base, ucoll_tag(3, 101, 200, 10, 20, 0));
    ck_assert_uint_ne(base, ucoll_tag(3, 100, 201, 10, 20, 0));
    ck_assert_uint_ne(base, ucoll_tag(3, 100, 200, 11, 20, 0));
    ck_assert_uint_ne(base, ucoll_tag(3, 100, 200, 10, 21, 0));
    /* "last" is the only bit receives leave out of matching */
    ck_assert_uint_eq(base ^ ucoll_tag(3, 100, 200, 10, 20, 1), UCOLL_TAG_LAST_SEGMENT);
    /* two senders of one collective round never share a tag */
    for (uint32_t a = 0; a < 64; a++)
        for (uint32_t b = a + 1; b < 64; b++)
            ck_assert_uint_ne(ucoll_tag(1, a, 0, 0, 0, 0), ucoll_tag(1, b, 0, 0, 0, 0));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("tag");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, fields_in_their_bits);
    tcase_add_test(tc, values_wrap_within_their_field);
    tcase_add_test(tc, limits);
    tcase_add_test(tc, any_field_tells_tags_apart);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
