/*
 * UCOLL_THREAD_MULTIPLE: one process-wide lock that every entry point touching library state
 * holds while it runs. At the other levels there is no lock at all: the calls below cost one
 * test of a global flag. A thread takes the lock once however deep ucoll's entry points call
 * each other (ucoll_comm_split runs ucoll_allreduce). A wait loop lets waiting threads in
 * between its passes (entry_let_others_in): the thread holding the lock progresses every
 * active request, so a thread blocked on the lock is never what a collective waits for.
 */
#ifndef UCOLL_ENTRY_LOCK_H
#define UCOLL_ENTRY_LOCK_H

#include "ucoll.h"

extern int entry_multiple; /* 1 once init set UCOLL_THREAD_MULTIPLE */

/* at init, before the first lock: the level this process runs at */
void entry_set_level(ucoll_thread_level_t level);

void entry_lock_slow(void);
void entry_unlock_slow(void);
void entry_let_others_in_slow(void);

/* ucoll calls of this thread now running, at every level: callbacks run when the outermost
 * one returns (progress.c), never inside a call that ucoll makes itself */
extern _Thread_local int entry_calls __attribute__((tls_model("initial-exec")));
extern int entry_callbacks_pending; /* completed requests whose callback has not run yet */
void entry_run_callbacks(void);

static inline void entry_lock(void)
{
    entry_calls++;
    if (entry_multiple)
        entry_lock_slow();
}

static inline void entry_unlock(void)
{
    if (entry_multiple)
        entry_unlock_slow();
    if (--entry_calls == 0 &&
        __builtin_expect(__atomic_load_n(&entry_callbacks_pending, __ATOMIC_RELAXED), 0))
        entry_run_callbacks();
}

/* the lock alone, without counting a call (the callback loop between two callbacks) */
static inline void entry_lock_slow_if_multiple(void)
{
    if (entry_multiple)
        entry_lock_slow();
}
static inline void entry_unlock_slow_if_multiple(void)
{
    if (entry_multiple)
        entry_unlock_slow();
}

/* UCOLL_WAIT_MODE=sleep: lets go of the lock however deeply held (returns the depth to give
 * entry_retake) while the thread sleeps; 0 and nothing done when no lock is held */
int entry_release_all(void);
void entry_retake(int depth);

/* between two passes of a wait loop: releases and retakes the lock if a thread waits for it */
static inline void entry_let_others_in(void)
{
    if (entry_multiple)
        entry_let_others_in_slow();
}

#endif
