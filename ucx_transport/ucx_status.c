/* UCX statuses as ucoll statuses (see ucx_status.h) */
#include "ucx_status.h"

ucoll_status_t ucx_status(ucs_status_t status)
{
    switch (status) {
    case UCS_OK:
        return UCOLL_OK;
    case UCS_INPROGRESS:
        return UCOLL_INPROGRESS;
    case UCS_ERR_NO_MEMORY:
        return UCOLL_ERR_NO_MEMORY;
    case UCS_ERR_MESSAGE_TRUNCATED:
        return UCOLL_ERR_TRUNCATED;
    case UCS_ERR_CONNECTION_RESET:
    case UCS_ERR_ENDPOINT_TIMEOUT:
    case UCS_ERR_UNREACHABLE:
    case UCS_ERR_REJECTED:
        return UCOLL_ERR_PEER_FAILED;
    case UCS_ERR_TIMED_OUT:
        return UCOLL_ERR_TIMED_OUT;
    default:
        return UCOLL_ERR_TRANSPORT;
    }
}

/* 1 for the errors by which UCX shows a send or receive whose peer, or the connection to it,
 * is gone: a connection reset, refused, timed out or closed by the peer (UCX's TCP reports a
 * closed one as NOT_CONNECTED), a socket error, and on this host a shared-memory segment of
 * the peer's that can no longer be attached (it went with the peer's worker) */
static int peer_gone(ucs_status_t status)
{
    switch (status) {
    case UCS_ERR_CONNECTION_RESET:
    case UCS_ERR_ENDPOINT_TIMEOUT:
    case UCS_ERR_UNREACHABLE:
    case UCS_ERR_REJECTED:
    case UCS_ERR_NOT_CONNECTED:
    case UCS_ERR_IO_ERROR:
    case UCS_ERR_SOME_CONNECTS_FAILED:
    case UCS_ERR_SHMEM_SEGMENT:
        return 1;
    default:
        return UCS_IS_LINK_ERROR(status) || UCS_IS_ENDPOINT_ERROR(status);
    }
}

/* A send or receive may fail before the endpoint's error handler or the liveness probe has
 * marked its peer: UCX 1.13 completes an endpoint's requests with the error (or cancels those
 * in flight) before it calls the handler, and a send to a dead rank's shared memory fails as it
 * is posted. So the error itself must say that the peer is gone; a cancelled send does, since
 * ucoll cancels only receives. Once the peer is marked, any error but those with a meaning of
 * their own is the peer's. */
ucoll_status_t ucx_op_status(ucs_status_t status, int is_recv, int peer_failed)
{
    const ucoll_status_t st = ucx_status(status);
    if (st == UCOLL_ERR_TRANSPORT &&
        (peer_failed || peer_gone(status) || (!is_recv && status == UCS_ERR_CANCELED)))
        return UCOLL_ERR_PEER_FAILED;
    return st;
}

/* A rank whose host is cut off meets the cut at the first exchange with a new peer: UCX's TCP
 * connect() fails at once ("Network is unreachable") and the endpoint with UNREACHABLE (any
 * failed connect() is that in UCX 1.13). That peer is as lost to this rank as one whose send
 * failed. Not so the other errors a send may show a gone peer by: at endpoint creation they
 * come from this process's own resources (socket() out of descriptors gives IO_ERROR) */
ucoll_status_t ucx_connect_status(ucs_status_t status)
{
    return ucx_status(status);
}
