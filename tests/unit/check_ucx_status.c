/*
 * Unit tests of the UCX status mapping (ucx_transport/ucx_status.c): which ucoll status a
 * failed send or receive gets. A peer that died, or left the job, must come out as
 * UCOLL_ERR_PEER_FAILED whatever UCX error showed it, also before anything marked the peer;
 * errors with a meaning of their own keep it; any error once the peer is marked is the peer's.
 */
#include "ucx_status.h"

#include <check.h>
#include <stdlib.h>

/* the errors that say the peer or the connection to it is gone */
static const ucs_status_t peer_gone[] = {
    UCS_ERR_CONNECTION_RESET,
    UCS_ERR_ENDPOINT_TIMEOUT,
    UCS_ERR_UNREACHABLE,
    UCS_ERR_REJECTED,
    UCS_ERR_NOT_CONNECTED,
    UCS_ERR_IO_ERROR,
    UCS_ERR_SOME_CONNECTS_FAILED,
    UCS_ERR_SHMEM_SEGMENT,
    UCS_ERR_FIRST_LINK_FAILURE,
    UCS_ERR_LAST_LINK_FAILURE,
    UCS_ERR_FIRST_ENDPOINT_FAILURE,
    UCS_ERR_LAST_ENDPOINT_FAILURE,
};
#define NGONE (sizeof(peer_gone) / sizeof(peer_gone[0]))

/* errors of this process's own doing, not the peer's */
static const ucs_status_t local[] = {
    UCS_ERR_NO_RESOURCE, UCS_ERR_INVALID_PARAM, UCS_ERR_UNSUPPORTED,
    UCS_ERR_BUSY,        UCS_ERR_NO_ELEM,       UCS_ERR_EXCEEDS_LIMIT,
};
#define NLOCAL (sizeof(local) / sizeof(local[0]))

START_TEST(peer_gone_is_peer_failed)
{
    for (int is_recv = 0; is_recv <= 1; is_recv++)
        for (size_t i = 0; i < NGONE; i++) {
            ck_assert_msg(ucx_op_status(peer_gone[i], is_recv, 0) == UCOLL_ERR_PEER_FAILED,
                          "%s before the peer is marked: %d", ucs_status_string(peer_gone[i]),
                          (int)ucx_op_status(peer_gone[i], is_recv, 0));
            ck_assert_int_eq(ucx_op_status(peer_gone[i], is_recv, 1), UCOLL_ERR_PEER_FAILED);
        }
}
END_TEST

START_TEST(local_error_is_transport_until_the_peer_is_marked)
{
    for (int is_recv = 0; is_recv <= 1; is_recv++)
        for (size_t i = 0; i < NLOCAL; i++) {
            ck_assert_int_eq(ucx_op_status(local[i], is_recv, 0), UCOLL_ERR_TRANSPORT);
            ck_assert_msg(ucx_op_status(local[i], is_recv, 1) == UCOLL_ERR_PEER_FAILED,
                          "%s after the peer is marked: %d", ucs_status_string(local[i]),
                          (int)ucx_op_status(local[i], is_recv, 1));
        }
}
END_TEST

/* ucoll cancels receives (a round given up, a message that came the other way) but never a
 * send: UCX cancels a send only when its endpoint failed, possibly before the error handler */
START_TEST(cancelled_send_is_the_peers)
{
    ck_assert_int_eq(ucx_op_status(UCS_ERR_CANCELED, 0, 0), UCOLL_ERR_PEER_FAILED);
    ck_assert_int_eq(ucx_op_status(UCS_ERR_CANCELED, 0, 1), UCOLL_ERR_PEER_FAILED);
    ck_assert_int_eq(ucx_op_status(UCS_ERR_CANCELED, 1, 0), UCOLL_ERR_TRANSPORT);
    ck_assert_int_eq(ucx_op_status(UCS_ERR_CANCELED, 1, 1), UCOLL_ERR_PEER_FAILED);
}
END_TEST

START_TEST(own_meanings_stay)
{
    for (int is_recv = 0; is_recv <= 1; is_recv++)
        for (int failed = 0; failed <= 1; failed++) {
            ck_assert_int_eq(ucx_op_status(UCS_OK, is_recv, failed), UCOLL_OK);
            ck_assert_int_eq(ucx_op_status(UCS_ERR_MESSAGE_TRUNCATED, is_recv, failed),
                             UCOLL_ERR_TRUNCATED);
            ck_assert_int_eq(ucx_op_status(UCS_ERR_NO_MEMORY, is_recv, failed),
                             UCOLL_ERR_NO_MEMORY);
            ck_assert_int_eq(ucx_op_status(UCS_ERR_TIMED_OUT, is_recv, failed),
                             UCOLL_ERR_TIMED_OUT);
        }
}
END_TEST

/* ucp_ep_create's failure, met at the first send or receive with a peer. UCX 1.13 turns any
 * failed connect() into UNREACHABLE (a cut-off host: "Network is unreachable"), a refused one
 * into REJECTED: the peer cannot be had, a failed peer. The rest of the peer-gone errors of a
 * send (IO_ERROR, a shared-memory segment, the link and endpoint ranges) come at endpoint
 * creation from this process's own resources, e.g. socket() out of file descriptors gives
 * IO_ERROR: those stay the transport's, or a healthy peer would be shrunk away */
START_TEST(connect_failure)
{
    static const ucs_status_t unreachable[] = {UCS_ERR_UNREACHABLE, UCS_ERR_REJECTED,
                                               UCS_ERR_CONNECTION_RESET, UCS_ERR_ENDPOINT_TIMEOUT};
    static const ucs_status_t own[] = {UCS_ERR_IO_ERROR,
                                       UCS_ERR_SHMEM_SEGMENT,
                                       UCS_ERR_NOT_CONNECTED,
                                       UCS_ERR_SOME_CONNECTS_FAILED,
                                       UCS_ERR_FIRST_LINK_FAILURE,
                                       UCS_ERR_LAST_LINK_FAILURE,
                                       UCS_ERR_FIRST_ENDPOINT_FAILURE,
                                       UCS_ERR_LAST_ENDPOINT_FAILURE,
                                       UCS_ERR_CANCELED};
    ck_assert_int_eq(ucx_connect_status(UCS_OK), UCOLL_OK);
    for (size_t i = 0; i < sizeof(unreachable) / sizeof(unreachable[0]); i++)
        ck_assert_msg(ucx_connect_status(unreachable[i]) == UCOLL_ERR_PEER_FAILED,
                      "endpoint creation failed with %s: %d", ucs_status_string(unreachable[i]),
                      (int)ucx_connect_status(unreachable[i]));
    for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
        ck_assert_msg(ucx_connect_status(own[i]) == UCOLL_ERR_TRANSPORT,
                      "endpoint creation failed with %s: %d", ucs_status_string(own[i]),
                      (int)ucx_connect_status(own[i]));
    for (size_t i = 0; i < NLOCAL; i++)
        ck_assert_int_eq(ucx_connect_status(local[i]), UCOLL_ERR_TRANSPORT);
    ck_assert_int_eq(ucx_connect_status(UCS_ERR_NO_MEMORY), UCOLL_ERR_NO_MEMORY);
    ck_assert_int_eq(ucx_connect_status(UCS_ERR_TIMED_OUT), UCOLL_ERR_TIMED_OUT);
}
END_TEST

START_TEST(general_mapping)
{
    /* outside a send or receive (initialisation, registration) a shared-memory or I/O error
     * is this process's own */
    ck_assert_int_eq(ucx_status(UCS_OK), UCOLL_OK);
    ck_assert_int_eq(ucx_status(UCS_INPROGRESS), UCOLL_INPROGRESS);
    ck_assert_int_eq(ucx_status(UCS_ERR_NO_MEMORY), UCOLL_ERR_NO_MEMORY);
    ck_assert_int_eq(ucx_status(UCS_ERR_SHMEM_SEGMENT), UCOLL_ERR_TRANSPORT);
    ck_assert_int_eq(ucx_status(UCS_ERR_IO_ERROR), UCOLL_ERR_TRANSPORT);
    ck_assert_int_eq(ucx_status(UCS_ERR_CONNECTION_RESET), UCOLL_ERR_PEER_FAILED);
    ck_assert_int_eq(ucx_status(UCS_ERR_ENDPOINT_TIMEOUT), UCOLL_ERR_PEER_FAILED);
    ck_assert_int_eq(ucx_status(UCS_ERR_TIMED_OUT), UCOLL_ERR_TIMED_OUT);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ucx_status");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, peer_gone_is_peer_failed);
    tcase_add_test(tc, local_error_is_transport_until_the_peer_is_marked);
    tcase_add_test(tc, cancelled_send_is_the_peers);
    tcase_add_test(tc, own_meanings_stay);
    tcase_add_test(tc, connect_failure);
    tcase_add_test(tc, general_mapping);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
