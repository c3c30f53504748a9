/* The two reasons to refuse any call (guard.h). The user-op depth is per thread: under
 * UCOLL_THREAD_MULTIPLE another thread's calls go on while one thread runs a user op. */
#include "guard.h"

static _Thread_local int user_fn_depth __attribute__((tls_model("initial-exec")));
static int forked; /* set in a forked child, which has one thread */

ucoll_status_t guard_check(void)
{
    return (user_fn_depth | forked) != 0 ? UCOLL_ERR_STATE : UCOLL_OK;
}

void guard_enter_user_fn(void)
{
    user_fn_depth++;
}

void guard_leave_user_fn(void)
{
    user_fn_depth--;
}

void guard_mark_forked(void)
{
    forked = 1;
}
