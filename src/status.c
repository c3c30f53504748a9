/* ucoll_strerror: what each status code means, phrased for the user. */
#include "ucoll_int.h"

UCOLL_EXPORT const char *ucoll_strerror(ucoll_status_t status)
{
    switch (status) {
    case UCOLL_OK:
        return "success";
    case UCOLL_INPROGRESS:
        return "operation in progress";
    case UCOLL_ERR_INVALID_ARG:
        return "invalid argument (NULL buffer, unknown dtype/op/algorithm, op not defined for "
               "the dtype, root out of range, or count too large)";
    case UCOLL_ERR_NO_MEMORY:
        return "out of memory";
    case UCOLL_ERR_NOT_SUPPORTED:
        return "operation not supported";
    case UCOLL_ERR_BOOTSTRAP:
        return "bootstrap failed (PMIx, the out-of-band allgather or the store)";
    case UCOLL_ERR_TRANSPORT:
        return "UCX transport error";
    case UCOLL_ERR_PEER_FAILED:
        return "a peer process failed or became unreachable";
    case UCOLL_ERR_TIMED_OUT:
        return "timed out (UCOLL_TIMEOUT)";
    case UCOLL_ERR_TRUNCATED:
        return "message size mismatch (ranks passed different counts or dtypes)";
    case UCOLL_ERR_STATE:
        return "call not allowed in this state (before init, after finalize, request active, "
               "or init called twice)";
    case UCOLL_ERR_MISMATCH:
        return "ranks called one collective with different arguments or algorithms "
               "(UCOLL_CHECK=1)";
    }
    return "unknown status code";
}
