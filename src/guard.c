/* The two reasons to refuse any call (guard.h). Plain ints: ucoll is single-threaded. */
#include "guard.h"

static int user_fn_depth;
static int forked;

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
