/*
 * The collective entry points: argument checks (nothing is touched before they pass),
 * algorithm selection, and the blocking / nonblocking / persistent forms, which all run
 * through the executor (exec.c).
 */
#include "ucoll_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { REQ_MAGIC = 0x72657175 };

/* the requests handed to the user and not yet freed: a freed or foreign pointer is
 * recognised without reading through it */
static ucoll_request_t *live_requests;

static ucoll_status_t check_comm(const ucoll_comm_t *comm)
{
    if (comm == NULL)
        return UCOLL_ERR_INVALID_ARG;
    if (comm->magic == COMM_DEAD)
        return UCOLL_ERR_STATE;
    return comm->magic == COMM_MAGIC ? UCOLL_OK : UCOLL_ERR_INVALID_ARG;
}

typedef struct {
    ucoll_coll_t coll;
    const void *sendbuf;
    void *recvbuf;
    size_t count;
    ucoll_dtype_t dtype;
    ucoll_op_t op;
    int root;
} coll_args_t;

static ucoll_status_t check_args(const ucoll_comm_t *comm, const coll_args_t *a)
{
    ucoll_status_t st = check_comm(comm);
    if (st != UCOLL_OK)
        return st;
    if (a->coll == UCOLL_COLL_BARRIER)
        return UCOLL_OK;
    const size_t esize = dtype_size(a->dtype);
    if (esize == 0)
        return UCOLL_ERR_INVALID_ARG;
    size_t bytes;
    if (__builtin_mul_overflow(a->count, esize, &bytes)) /* count * size beyond SIZE_MAX */
        return UCOLL_ERR_INVALID_ARG;
    if ((a->coll == UCOLL_COLL_REDUCE || a->coll == UCOLL_COLL_BCAST) &&
        (a->root < 0 || a->root >= comm->size))
        return UCOLL_ERR_INVALID_ARG;
    if (a->coll == UCOLL_COLL_BCAST)
        return (a->count > 0 && a->recvbuf == NULL) ? UCOLL_ERR_INVALID_ARG : UCOLL_OK;
    if ((st = op_check_coll(a->coll, a->op, a->dtype)) != UCOLL_OK)
        return st;
    if (a->count == 0)
        return UCOLL_OK;
    const int in_place = a->sendbuf == UCOLL_IN_PLACE;
    if (!in_place && a->sendbuf == NULL)
        return UCOLL_ERR_INVALID_ARG;
    const int recv_used = a->coll != UCOLL_COLL_REDUCE || comm->rank == a->root;
    if ((recv_used || in_place) && a->recvbuf == NULL)
        return UCOLL_ERR_INVALID_ARG;
    /* the schedule reads sendbuf after it has written recvbuf: overlapping bytes would be
     * read back changed (each buffer spans count * size bytes here) */
    if (!in_place && recv_used) {
        const uintptr_t s = (uintptr_t)a->sendbuf, r = (uintptr_t)a->recvbuf;
        if (s < r + bytes && r < s + bytes)
            return UCOLL_ERR_INVALID_ARG;
    }
    return UCOLL_OK;
}

/* a predefined op: commutative, and never freed */
static int predefined_op(ucoll_op_t op)
{
    return op >= 0 && op < UCOLL_NOPS;
}

/* what the schedule of a call depends on (zeroed padding: compared with memcmp) */
static void sched_args_of(const ucoll_comm_t *comm, const coll_args_t *a, int param,
                          sched_args_t *sa)
{
    memset(sa, 0, sizeof(*sa));
    sa->rank = comm->rank;
    sa->size = comm->size;
    sa->root = a->coll == UCOLL_COLL_REDUCE || a->coll == UCOLL_COLL_BCAST ? a->root : 0;
    sa->count = a->coll == UCOLL_COLL_BARRIER ? 0 : a->count;
    sa->elem_size = a->coll == UCOLL_COLL_BARRIER ? 1 : dtype_size(a->dtype);
    sa->param = param;
    sa->commutative = a->coll == UCOLL_COLL_BCAST || a->coll == UCOLL_COLL_BARRIER ||
                      predefined_op(a->op) || op_is_commutative(a->op);
}

static int same_schedule(const ucoll_request_t *req, const alg_desc_t *alg, const sched_args_t *sa)
{
    return req->sched_valid && req->alg == alg && memcmp(sa, &req->sched_args, sizeof(*sa)) == 0;
}

/* fills req from validated arguments; keeps its schedule when nothing it depends on changed
 * (same: same_schedule(req, alg, sa), already known) */
static void setup_request(ucoll_request_t *req, ucoll_comm_t *comm, const coll_args_t *a,
                          const alg_desc_t *alg, int param, const sched_args_t *sa, int same)
{
    if (!same)
        req->sched_valid = req->prepared = 0;
    req->magic = REQ_MAGIC;
    req->comm = comm;
    req->coll = a->coll;
    req->sendbuf = a->sendbuf;
    req->recvbuf = a->recvbuf;
    req->count = sa->count;
    req->dtype = a->dtype;
    req->op = a->op;
    req->root = sa->root;
    req->in_place = a->sendbuf == UCOLL_IN_PLACE;
    req->elem_size = sa->elem_size;
    req->alg = alg;
    req->param = param;
    req->sched_args = *sa;
}

/* a blocking call owns its request from its start until it returns: another thread's pass may
 * complete it meanwhile, and it must neither be restarted nor lose its status before then */
static int in_use(const ucoll_request_t *req)
{
    return req->active || req->owned;
}

/* whether a schedule takes scratch from the pool */
static int needs_scratch(const sched_t *sched)
{
    for (int b = SCHED_FIRST_SCRATCH; b < SCHED_NBUFS; b++)
        if (sched->scratch[b] > 0)
            return 1;
    return 0;
}

/* the comm's blocking request that already holds this schedule, else a free slot's or the
 * least recently used one; moved to the front. A request still running in another thread
 * (UCOLL_THREAD_MULTIPLE, threads sharing the comm) is never taken, nor its scratch: when every
 * slot is busy the call gets a request of its own, outside the cache (run_blocking frees it). NULL:
 * out of memory */
static ucoll_request_t *blocking_request(ucoll_comm_t *comm, const alg_desc_t *alg,
                                         const sched_args_t *sa, int in_place, int *same)
{
    int pick = -1;
    for (int i = 0; i < COMM_BLOCKING_CACHE && comm->blocking[i] != NULL && pick < 0; i++)
        if (same_schedule(comm->blocking[i], alg, sa) && !in_use(comm->blocking[i]))
            pick = i;
    const int hit = pick >= 0;
    *same = hit;
    if (pick < 0) {
        pick = 0;
        while (pick < COMM_BLOCKING_CACHE - 1 && comm->blocking[pick] != NULL)
            pick++;
        while (pick >= 0 && comm->blocking[pick] != NULL && in_use(comm->blocking[pick]))
            pick--; /* the least recently used slot not in use */
        if (pick < 0 || comm->blocking[pick] == NULL) {
            ucoll_request_t *req = calloc(1, sizeof(*req));
            if (req == NULL)
                return NULL;
            sched_init(&req->sched);
            req->blocking = 1;
            req->comm = comm;
            if (pick < 0)
                return req;
            comm->blocking[pick] = req;
        }
    }
    ucoll_request_t *req = comm->blocking[pick];
    /* the pool lends the holder's scratch to the next request that needs scratch */
    if (comm->scratch_holder != req && (!hit || in_place || needs_scratch(&req->sched))) {
        if (comm->scratch_holder != NULL && !in_use(comm->scratch_holder))
            exec_release_scratch(comm->scratch_holder);
        comm->scratch_holder = req;
    }
    memmove(&comm->blocking[1], &comm->blocking[0], (size_t)pick * sizeof(req));
    comm->blocking[0] = req;
    return req;
}

/* a request of blocking_request's that is not in the cache */
static int outside_cache(const ucoll_request_t *req)
{
    if (req->comm->blocking[0] == req) /* where blocking_request put it */
        return 0;
    for (int i = 1; i < COMM_BLOCKING_CACHE; i++)
        if (req->comm->blocking[i] == req)
            return 0;
    return 1;
}

/* nothing to communicate: an empty vector (every rank passes count 0). Under UCOLL_CHECK the
 * executor still compares it (another rank's count may not be 0). */
static int trivially_done(const ucoll_comm_t *comm, const coll_args_t *a)
{
    return a->coll != UCOLL_COLL_BARRIER && a->count == 0 && !comm_checks(comm);
}

static ucoll_status_t run_blocking_locked(ucoll_comm_t *comm, const coll_args_t *a)
{
    ucoll_status_t st = check_args(comm, a);
    if (st != UCOLL_OK || (st = exec_may_start(comm)) != UCOLL_OK)
        return st; /* (before progress could make ranks disagree about the window) */
    if (comm->ctx->active != NULL) {
        ctx_progress(comm->ctx); /* let outstanding nonblocking collectives move */
        if (comm->revoked)
            return UCOLL_ERR_STATE; /* one of them failed on this comm just now */
    }
    if (trivially_done(comm, a)) {
        comm->seq++;
        return UCOLL_OK;
    }
    const alg_desc_t *alg;
    int param;
    if ((st = select_algorithm(comm, a->coll, a->op, a->dtype, a->count, &alg, &param)) != 0)
        return st;
    sched_args_t sa;
    sched_args_of(comm, a, param, &sa);
    int same;
    ucoll_request_t *req = blocking_request(comm, alg, &sa, a->sendbuf == UCOLL_IN_PLACE, &same);
    if (req == NULL)
        return UCOLL_ERR_NO_MEMORY;
    /* (a predefined op cannot be freed: no hold) */
    const int holds_op =
        a->coll != UCOLL_COLL_BCAST && a->coll != UCOLL_COLL_BARRIER && !predefined_op(a->op);
    if (holds_op && !op_hold(a->op)) /* freed by another thread since check_args */
        return UCOLL_ERR_INVALID_ARG;
    setup_request(req, comm, a, alg, param, &sa, same);
    req->owned = 1;
    if ((st = exec_start(req)) == UCOLL_OK)
        st = request_wait(req);
    req->owned = 0;
    if (holds_op)
        op_release(a->op);
    if (outside_cache(req)) {
        exec_release(req);
        sched_destroy(&req->sched);
        free(req);
    }
    return st;
}

static ucoll_status_t new_request_locked(ucoll_comm_t *comm, const coll_args_t *a, int persistent,
                                         ucoll_request_t **out)
{
    if (out == NULL)
        return UCOLL_ERR_INVALID_ARG;
    ucoll_status_t st = check_args(comm, a);
    if (st != UCOLL_OK)
        return st;
    if (comm->revoked || (!persistent && (st = exec_may_start(comm)) != UCOLL_OK))
        return UCOLL_ERR_STATE;
    const alg_desc_t *alg;
    int param;
    if ((st = select_algorithm(comm, a->coll, a->op, a->dtype, a->count, &alg, &param)) != 0)
        return st;
    /* held before anything runs, until ucoll_request_free: the op cannot be freed under it */
    const int holds_op = a->coll != UCOLL_COLL_BCAST && a->coll != UCOLL_COLL_BARRIER;
    if (holds_op && !op_hold(a->op)) /* freed by another thread since check_args */
        return UCOLL_ERR_INVALID_ARG;
    ucoll_request_t *req = calloc(1, sizeof(*req));
    if (req == NULL) {
        if (holds_op)
            op_release(a->op);
        return UCOLL_ERR_NO_MEMORY;
    }
    req->op_held = holds_op;
    sched_init(&req->sched);
    sched_args_t sa;
    sched_args_of(comm, a, param, &sa);
    setup_request(req, comm, a, alg, param, &sa, 0);
    req->persistent = persistent;
    req->status = UCOLL_OK;
    if (persistent) {
        /* built and registered once; every start reuses them without allocating */
        if ((st = exec_register_user_buffers(req)) != UCOLL_OK ||
            (st = exec_prepare(req)) != UCOLL_OK) {
            if (holds_op)
                op_release(a->op);
            exec_release(req);
            sched_destroy(&req->sched);
            free(req);
            return st;
        }
    } else {
        if (trivially_done(comm, a)) {
            comm->seq++;
        } else if ((st = exec_start(req)) != UCOLL_OK) {
            if (holds_op)
                op_release(a->op);
            exec_release(req);
            sched_destroy(&req->sched);
            free(req);
            return st;
        }
    }
    req->next_live = live_requests;
    live_requests = req;
    *out = req;
    return UCOLL_OK;
}

/* the two above under the entry lock (UCOLL_THREAD_MULTIPLE only), after the guard */
static ucoll_status_t run_blocking(ucoll_comm_t *comm, const coll_args_t *a)
{
    if (guard_check() != UCOLL_OK)
        return UCOLL_ERR_STATE;
    entry_lock();
    ucoll_status_t st = run_blocking_locked(comm, a);
    entry_unlock();
    return st;
}

static ucoll_status_t new_request(ucoll_comm_t *comm, const coll_args_t *a, int persistent,
                                  ucoll_request_t **out)
{
    if (guard_check() != UCOLL_OK)
        return UCOLL_ERR_STATE;
    entry_lock();
    ucoll_status_t st = new_request_locked(comm, a, persistent, out);
    entry_unlock();
    return st;
}

static ucoll_status_t check_request(const ucoll_request_t *req)
{
    const ucoll_request_t *r = live_requests;
    while (r != NULL && r != req)
        r = r->next_live;
    if (req == NULL || r == NULL)
        return UCOLL_ERR_INVALID_ARG;
    return check_comm(req->comm);
}

#define ARGS(c, s, r, n, d, o, rt)                                                                 \
    {                                                                                              \
        (c), (s), (r), (n), (d), (o), (rt)                                                         \
    }

UCOLL_EXPORT ucoll_status_t ucoll_exscan(ucoll_comm_t *comm, const void *sendbuf, void *recvbuf,
                                         size_t count, ucoll_dtype_t dtype, ucoll_op_t op)
{
    coll_args_t a = ARGS(UCOLL_COLL_EXSCAN, sendbuf, recvbuf, count, dtype, op, 0);
    return run_blocking(comm, &a);
}

UCOLL_EXPORT ucoll_status_t ucoll_scan(ucoll_comm_t *comm, const void *sendbuf, void *recvbuf,
                                       size_t count, ucoll_dtype_t dtype, ucoll_op_t op)
{
    coll_args_t a = ARGS(UCOLL_COLL_SCAN, sendbuf, recvbuf, count, dtype, op, 0);
    return run_blocking(comm, &a);
}

UCOLL_EXPORT ucoll_status_t ucoll_reduce(ucoll_comm_t *comm, const void *sendbuf, void *recvbuf,
                                         size_t count, ucoll_dtype_t dtype, ucoll_op_t op, int root)
{
    coll_args_t a = ARGS(UCOLL_COLL_REDUCE, sendbuf, recvbuf, count, dtype, op, root);
    return run_blocking(comm, &a);
}

UCOLL_EXPORT ucoll_status_t ucoll_allreduce(ucoll_comm_t *comm, const void *sendbuf, void *recvbuf,
                                            size_t count, ucoll_dtype_t dtype, ucoll_op_t op)
{
    coll_args_t a = ARGS(UCOLL_COLL_ALLREDUCE, sendbuf, recvbuf, count, dtype, op, 0);
    return run_blocking(comm, &a);
}

UCOLL_EXPORT ucoll_status_t ucoll_bcast(ucoll_comm_t *comm, void *buf, size_t count,
                                        ucoll_dtype_t dtype, int root)
{
    coll_args_t a = ARGS(UCOLL_COLL_BCAST, buf, buf, count, dtype, UCOLL_OP_SUM, root);
    return run_blocking(comm, &a);
}

UCOLL_EXPORT ucoll_status_t ucoll_barrier(ucoll_comm_t *comm)
{
    coll_args_t a = ARGS(UCOLL_COLL_BARRIER, NULL, NULL, 0, UCOLL_UINT8, UCOLL_OP_SUM, 0);
    return run_blocking(comm, &a);
}

UCOLL_EXPORT ucoll_status_t ucoll_iexscan(ucoll_comm_t *comm, const void *sendbuf, void *recvbuf,
                                          size_t count, ucoll_dtype_t dtype, ucoll_op_t op,
                                          ucoll_request_t **req)
{
    coll_args_t a = ARGS(UCOLL_COLL_EXSCAN, sendbuf, recvbuf, count, dtype, op, 0);
    return new_request(comm, &a, 0, req);
}

UCOLL_EXPORT ucoll_status_t ucoll_iscan(ucoll_comm_t *comm, const void *sendbuf, void *recvbuf,
                                        size_t count, ucoll_dtype_t dtype, ucoll_op_t op,
                                        ucoll_request_t **req)
{
    coll_args_t a = ARGS(UCOLL_COLL_SCAN, sendbuf, recvbuf, count, dtype, op, 0);
    return new_request(comm, &a, 0, req);
}

UCOLL_EXPORT ucoll_status_t ucoll_ireduce(ucoll_comm_t *comm, const void *sendbuf, void *recvbuf,
                                          size_t count, ucoll_dtype_t dtype, ucoll_op_t op,
                                          int root, ucoll_request_t **req)
{
    coll_args_t a = ARGS(UCOLL_COLL_REDUCE, sendbuf, recvbuf, count, dtype, op, root);
    return new_request(comm, &a, 0, req);
}

UCOLL_EXPORT ucoll_status_t ucoll_iallreduce(ucoll_comm_t *comm, const void *sendbuf, void *recvbuf,
                                             size_t count, ucoll_dtype_t dtype, ucoll_op_t op,
                                             ucoll_request_t **req)
{
    coll_args_t a = ARGS(UCOLL_COLL_ALLREDUCE, sendbuf, recvbuf, count, dtype, op, 0);
    return new_request(comm, &a, 0, req);
}

UCOLL_EXPORT ucoll_status_t ucoll_ibcast(ucoll_comm_t *comm, void *buf, size_t count,
                                         ucoll_dtype_t dtype, int root, ucoll_request_t **req)
{
    coll_args_t a = ARGS(UCOLL_COLL_BCAST, buf, buf, count, dtype, UCOLL_OP_SUM, root);
    return new_request(comm, &a, 0, req);
}

UCOLL_EXPORT ucoll_status_t ucoll_ibarrier(ucoll_comm_t *comm, ucoll_request_t **req)
{
    coll_args_t a = ARGS(UCOLL_COLL_BARRIER, NULL, NULL, 0, UCOLL_UINT8, UCOLL_OP_SUM, 0);
    return new_request(comm, &a, 0, req);
}

UCOLL_EXPORT ucoll_status_t ucoll_exscan_init(ucoll_comm_t *comm, const void *sendbuf,
                                              void *recvbuf, size_t count, ucoll_dtype_t dtype,
                                              ucoll_op_t op, ucoll_request_t **req)
{
    coll_args_t a = ARGS(UCOLL_COLL_EXSCAN, sendbuf, recvbuf, count, dtype, op, 0);
    return new_request(comm, &a, 1, req);
}

UCOLL_EXPORT ucoll_status_t ucoll_scan_init(ucoll_comm_t *comm, const void *sendbuf, void *recvbuf,
                                            size_t count, ucoll_dtype_t dtype, ucoll_op_t op,
                                            ucoll_request_t **req)
{
    coll_args_t a = ARGS(UCOLL_COLL_SCAN, sendbuf, recvbuf, count, dtype, op, 0);
    return new_request(comm, &a, 1, req);
}

UCOLL_EXPORT ucoll_status_t ucoll_reduce_init(ucoll_comm_t *comm, const void *sendbuf,
                                              void *recvbuf, size_t count, ucoll_dtype_t dtype,
                                              ucoll_op_t op, int root, ucoll_request_t **req)
{
    coll_args_t a = ARGS(UCOLL_COLL_REDUCE, sendbuf, recvbuf, count, dtype, op, root);
    return new_request(comm, &a, 1, req);
}

UCOLL_EXPORT ucoll_status_t ucoll_allreduce_init(ucoll_comm_t *comm, const void *sendbuf,
                                                 void *recvbuf, size_t count, ucoll_dtype_t dtype,
                                                 ucoll_op_t op, ucoll_request_t **req)
{
    coll_args_t a = ARGS(UCOLL_COLL_ALLREDUCE, sendbuf, recvbuf, count, dtype, op, 0);
    return new_request(comm, &a, 1, req);
}

UCOLL_EXPORT ucoll_status_t ucoll_bcast_init(ucoll_comm_t *comm, void *buf, size_t count,
                                             ucoll_dtype_t dtype, int root, ucoll_request_t **req)
{
    coll_args_t a = ARGS(UCOLL_COLL_BCAST, buf, buf, count, dtype, UCOLL_OP_SUM, root);
    return new_request(comm, &a, 1, req);
}

static ucoll_status_t start_locked(ucoll_request_t *req)
{
    ucoll_status_t st = check_request(req);
    if (st != UCOLL_OK)
        return st;
    if (!req->persistent || req->active)
        return UCOLL_ERR_STATE;
    if ((st = exec_may_start(req->comm)) != UCOLL_OK)
        return st;
    if (req->count == 0 && req->coll != UCOLL_COLL_BARRIER && !comm_checks(req->comm)) {
        req->comm->seq++;
        req->status = UCOLL_OK;
        return UCOLL_OK;
    }
    return exec_start(req);
}

static ucoll_status_t test_locked(ucoll_request_t *req)
{
    ucoll_status_t st = check_request(req);
    if (st != UCOLL_OK)
        return st;
    if (!req->active)
        return req->status;
    ctx_progress(req->comm->ctx);
    return req->active ? UCOLL_INPROGRESS : req->status;
}

static ucoll_status_t wait_locked(ucoll_request_t *req)
{
    ucoll_status_t st = check_request(req);
    if (st != UCOLL_OK)
        return st;
    return req->active ? request_wait(req) : req->status;
}

int coll_comm_has_requests(const ucoll_comm_t *comm)
{
    for (const ucoll_request_t *r = live_requests; r != NULL; r = r->next_live)
        if (r->comm == comm)
            return 1;
    return 0;
}

void coll_release_requests(ucoll_ctx_t *ctx)
{
    for (ucoll_request_t *r = live_requests; r != NULL; r = r->next_live)
        if (r->comm->ctx == ctx) {
            exec_abort(r, UCOLL_ERR_STATE);
            exec_release(r);
        }
}

static ucoll_status_t request_free_locked(ucoll_request_t *req)
{
    ucoll_status_t st = check_request(req);
    if (st == UCOLL_ERR_STATE) { /* after finalize: its resources went with the context */
        ucoll_request_t **p = &live_requests;
        while (*p != req)
            p = &(*p)->next_live;
        *p = req->next_live;
        /* after ucoll_comm_free (context alive): its registrations and scratch go back now,
         * or ucp_cleanup in ucoll_finalize aborts on the still-mapped user buffers */
        if (req->comm->ctx != NULL)
            exec_release(req);
        if (req->op_held)
            op_release(req->op);
        sched_destroy(&req->sched);
        free(req);
        return UCOLL_OK;
    }
    if (st != UCOLL_OK)
        return st;
    if (req->active)
        return UCOLL_ERR_STATE;
    ucoll_request_t **p = &live_requests;
    while (*p != req)
        p = &(*p)->next_live;
    *p = req->next_live;
    exec_release(req);
    if (req->op_held)
        op_release(req->op);
    sched_destroy(&req->sched);
    req->magic = 0;
    free(req);
    return UCOLL_OK;
}

/* ---------------------------------------------------------------------------------------------
 * the request entry points above, each under the entry lock (UCOLL_THREAD_MULTIPLE only) after
 * the guard's refusal
 */

UCOLL_EXPORT ucoll_status_t ucoll_start(ucoll_request_t *req)
{
    if (guard_check() != UCOLL_OK)
        return UCOLL_ERR_STATE;
    entry_lock();
    ucoll_status_t st = start_locked(req);
    entry_unlock();
    return st;
}

UCOLL_EXPORT ucoll_status_t ucoll_test(ucoll_request_t *req)
{
    if (guard_check() != UCOLL_OK)
        return UCOLL_ERR_STATE;
    entry_lock();
    ucoll_status_t st = test_locked(req);
    entry_unlock();
    return st;
}

UCOLL_EXPORT ucoll_status_t ucoll_wait(ucoll_request_t *req)
{
    if (guard_check() != UCOLL_OK)
        return UCOLL_ERR_STATE;
    entry_lock();
    ucoll_status_t st = wait_locked(req);
    entry_unlock();
    return st;
}

UCOLL_EXPORT ucoll_status_t ucoll_request_free(ucoll_request_t *req)
{
    if (guard_check() != UCOLL_OK)
        return UCOLL_ERR_STATE;
    entry_lock();
    ucoll_status_t st = request_free_locked(req);
    entry_unlock();
    return st;
}
