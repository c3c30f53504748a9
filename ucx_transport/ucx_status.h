/*
 * ucx_status: UCX statuses as ucoll statuses. Pure functions (no UCX calls), so that the unit
 * tests check them without processes.
 */
#ifndef UCOLL_UCX_STATUS_H
#define UCOLL_UCX_STATUS_H

#include <ucoll.h>
#include <ucs/type/status.h>

/* the ucoll status of a UCX status in general (initialisation, memory registration) */
ucoll_status_t ucx_status(ucs_status_t status);

/* the status of a send (is_recv 0) or receive that UCX completed (or refused) with `status`,
 * to or from a peer that is (peer_failed != 0) or is not yet marked failed */
ucoll_status_t ucx_op_status(ucs_status_t status, int is_recv, int peer_failed);

/* the status of a peer whose endpoint ucp_ep_create refused with `status`: a failed peer where
 * UCX could not reach it (UNREACHABLE, REJECTED, ...), as ucx_status maps them */
ucoll_status_t ucx_connect_status(ucs_status_t status);

#endif
