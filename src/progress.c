/*
 * Progress for runtimes that drive it themselves: request callbacks, ucoll_progress, and the
 * event fd with ucoll_arm (include/ucoll.h says what the caller may rely on).
 *
 * Callbacks are queued by the executor when a request completes (finish() in exec.c) and run
 * when the outermost ucoll call of the thread returns (entry_unlock), with the entry lock let
 * go: the library is between operations then, so a callback may call ucoll (free its request,
 * start the next collective); calls a callback makes queue their own completions, which the
 * running loop delivers before the outer call returns. The queue is process-wide and FIFO.
 */
#include "ucoll_int.h"

int entry_callbacks_pending;
static ucoll_request_t *cb_head, *cb_tail; /* under the entry lock */
static _Thread_local int delivering;       /* this thread is running callbacks */

void exec_queue_callback(ucoll_request_t *req, ucoll_status_t status)
{
    req->cb_status = status;
    if (req->cb_queued) { /* a persistent request restarted and completed from a callback */
        req->cb_pending++;
        return;
    }
    req->cb_pending = 1;
    req->cb_queued = 1;
    req->cb_next = NULL;
    *(cb_tail != NULL ? &cb_tail->cb_next : &cb_head) = req;
    cb_tail = req;
    __atomic_store_n(&entry_callbacks_pending, 1, __ATOMIC_RELAXED);
}

void exec_forget_callback(ucoll_request_t *req)
{
    if (!req->cb_queued)
        return;
    ucoll_request_t *prev = NULL;
    for (ucoll_request_t *r = cb_head; r != req; prev = r, r = r->cb_next)
        ;
    *(prev != NULL ? &prev->cb_next : &cb_head) = req->cb_next;
    if (cb_tail == req)
        cb_tail = prev;
    req->cb_queued = 0;
    __atomic_store_n(&entry_callbacks_pending, cb_head != NULL, __ATOMIC_RELAXED);
}

void entry_run_callbacks(void)
{
    if (delivering)
        return; /* a call from a callback: the loop below picks its completions up */
    delivering = 1;
    for (;;) {
        entry_lock_slow_if_multiple();
        ucoll_request_t *req = cb_head;
        ucoll_callback_t cb = NULL;
        void *arg = NULL;
        ucoll_status_t st = UCOLL_OK;
        if (req != NULL) {
            cb = req->cb;
            arg = req->cb_arg;
            if (req->cb_pending > 1) { /* an earlier completion of it: it ended OK */
                req->cb_pending--;
                st = UCOLL_OK;
            } else {
                exec_forget_callback(req);
                st = req->cb_status;
            }
        }
        entry_unlock_slow_if_multiple();
        if (req == NULL)
            break;
        cb(req, st, arg); /* req may be freed inside: not touched afterwards */
    }
    delivering = 0;
}

static ucoll_status_t set_callback_locked(ucoll_request_t *req, ucoll_callback_t cb, void *arg)
{
    ucoll_status_t st = coll_check_request(req);
    if (st != UCOLL_OK)
        return st;
    if (cb == NULL)
        return UCOLL_ERR_INVALID_ARG;
    if (req->cb != NULL)
        return UCOLL_ERR_STATE; /* one callback per request, set once */
    req->cb = cb;
    req->cb_arg = arg;
    /* a nonblocking request that has completed reports now (at this call's return); an
     * inactive persistent one reports its next start's completion */
    if (!req->active && !req->persistent)
        exec_queue_callback(req, req->status);
    return UCOLL_OK;
}

UCOLL_EXPORT ucoll_status_t ucoll_request_set_callback(ucoll_request_t *req, ucoll_callback_t cb,
                                                       void *arg)
{
    if (guard_check() != UCOLL_OK)
        return UCOLL_ERR_STATE;
    entry_lock();
    ucoll_status_t st = set_callback_locked(req, cb, arg);
    entry_unlock();
    return st;
}

/* OK if world is a live context's world comm */
static ucoll_status_t check_world(const ucoll_comm_t *world)
{
    if (world == NULL)
        return UCOLL_ERR_INVALID_ARG;
    if (world->magic == COMM_DEAD)
        return UCOLL_ERR_STATE;
    if (world->magic != COMM_MAGIC || world->ctx == NULL || world != world->ctx->world)
        return UCOLL_ERR_INVALID_ARG;
    return UCOLL_OK;
}

UCOLL_EXPORT int ucoll_progress(ucoll_comm_t *world)
{
    if (guard_check() != UCOLL_OK)
        return UCOLL_ERR_STATE;
    entry_lock();
    int n = check_world(world);
    if (n == UCOLL_OK) {
        ucoll_ctx_t *ctx = world->ctx;
        const unsigned long before = ctx->completions;
        ctx_progress(ctx);
        n = (int)(ctx->completions - before);
    }
    entry_unlock(); /* the callbacks of what completed run here */
    return n;
}

UCOLL_EXPORT int ucoll_event_fd(ucoll_comm_t *world)
{
    if (guard_check() != UCOLL_OK)
        return -1;
    entry_lock();
    int fd = check_world(world) == UCOLL_OK ? tp_event_fd(world->ctx->tp) : -1;
    entry_unlock();
    return fd;
}

UCOLL_EXPORT ucoll_status_t ucoll_arm(ucoll_comm_t *world)
{
    if (guard_check() != UCOLL_OK)
        return UCOLL_ERR_STATE;
    entry_lock();
    ucoll_status_t st = check_world(world);
    if (st == UCOLL_OK) {
        ucoll_ctx_t *ctx = world->ctx;
        if (__atomic_load_n(&entry_callbacks_pending, __ATOMIC_RELAXED) || exec_has_local_work(ctx))
            st = UCOLL_INPROGRESS;
        else
            st = tp_arm(ctx->tp, ctx->active != NULL ||
                                     __atomic_load_n(&ctx->sleepers, __ATOMIC_RELAXED) > 0);
    }
    entry_unlock();
    return st;
}
