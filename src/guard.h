/*
 * Calls ucoll refuses whatever their arguments: from inside a user op (they would re-enter the
 * executor that is applying it) and in a forked child of an initialised process (its rings and
 * endpoints are the parent's). Two flags, read by every entry point before it takes the
 * entry lock (entry_lock.h); the first one is per thread.
 */
#ifndef UCOLL_GUARD_H
#define UCOLL_GUARD_H

#include "ucoll.h"

/* UCOLL_ERR_STATE inside a user op or in a forked child, else UCOLL_OK */
ucoll_status_t guard_check(void);
/* around the call of a user op's function */
void guard_enter_user_fn(void);
void guard_leave_user_fn(void);
/* from the fork handler in the child: every later call is refused */
void guard_mark_forked(void);

#endif
