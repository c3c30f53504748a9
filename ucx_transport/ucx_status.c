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

ucoll_status_t ucx_op_status(ucs_status_t status, int peer_failed)
{
    (void)peer_failed;
    return ucx_status(status);
}
