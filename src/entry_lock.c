/* The entry lock of UCOLL_THREAD_MULTIPLE (entry_lock.h). */
#include "entry_lock.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

int entry_multiple;

static pthread_mutex_t entry_mutex = PTHREAD_MUTEX_INITIALIZER;
/* threads blocked in pthread_mutex_lock: only then does a wait loop let go of the lock */
static atomic_int entry_waiters;
/* entry points of this thread now running (nested calls take the mutex once) */
static _Thread_local int entry_depth __attribute__((tls_model("initial-exec")));

_Thread_local int entry_calls __attribute__((tls_model("initial-exec")));

void entry_set_level(ucoll_thread_level_t level)
{
    entry_multiple = level == UCOLL_THREAD_MULTIPLE;
}

static void take_mutex(void)
{
    if (pthread_mutex_trylock(&entry_mutex) == 0)
        return;
    atomic_fetch_add_explicit(&entry_waiters, 1, memory_order_relaxed);
    pthread_mutex_lock(&entry_mutex);
    atomic_fetch_sub_explicit(&entry_waiters, 1, memory_order_relaxed);
}

void entry_lock_slow(void)
{
    if (entry_depth++ == 0)
        take_mutex();
}

void entry_unlock_slow(void)
{
    /* depth 0: the level changed to MULTIPLE while this call ran unlocked (only a call made
     * concurrently with init): nothing to release */
    if (entry_depth > 0 && --entry_depth == 0)
        pthread_mutex_unlock(&entry_mutex);
}

void entry_let_others_in_slow(void)
{
    if (entry_depth == 0 || atomic_load_explicit(&entry_waiters, memory_order_relaxed) == 0)
        return;
    /* the whole nesting lets go: a thread may be inside ucoll_comm_split's allreduce while
     * another one has to start the collective a peer waits for. The yield gives the woken
     * thread the chance to take the mutex before this one takes it back. */
    pthread_mutex_unlock(&entry_mutex);
    sched_yield();
    take_mutex();
}

int entry_release_all(void)
{
    const int depth = entry_depth;
    if (depth > 0) {
        entry_depth = 0;
        pthread_mutex_unlock(&entry_mutex);
    }
    return depth;
}

void entry_retake(int depth)
{
    if (depth > 0) {
        take_mutex();
        entry_depth = depth;
    }
}
