/*
 * The schedule executor: runs one process's schedule (sched.h) over ucx_transport. A request
 * is a state machine (next step, whether its round's messages are posted) so that blocking,
 * nonblocking and persistent collectives are the same code: blocking calls wait, the others
 * are advanced by ucoll_test/ucoll_wait and by every other ucoll call (ctx_progress).
 *
 * Each round's message carries the tag (comm id, collective sequence number, round, segment),
 * unique for every message of every outstanding collective; the receive is posted before the
 * send. Scratch buffers are registered chunks from the transport's pool and stay with the
 * request (a persistent or blocking request reuses them without allocating).
 */
#include "ucoll_int.h"

#include <string.h>
#include <time.h>

double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *region_addr(const ucoll_request_t *req, sched_region_t r)
{
    return (char *)req->buf[r.buf] + r.off * req->elem_size;
}

/* makes sure scratch buffer b holds at least `bytes` */
static ucoll_status_t ensure_chunk(ucoll_request_t *req, int b, size_t bytes)
{
    tp_ctx_t *tp = req->comm->ctx->tp;
    if (req->chunk[b] != NULL && req->chunk[b]->size >= bytes)
        return UCOLL_OK;
    tp_pool_put(tp, req->chunk[b]);
    req->chunk[b] = tp_pool_get(tp, bytes);
    return req->chunk[b] != NULL ? UCOLL_OK : UCOLL_ERR_NO_MEMORY;
}

void exec_release(ucoll_request_t *req)
{
    tp_ctx_t *tp = req->comm->ctx->tp;
    for (int b = 0; b < SCHED_NBUFS; b++) {
        tp_pool_put(tp, req->chunk[b]);
        req->chunk[b] = NULL;
    }
}

static void unlink_active(ucoll_request_t *req)
{
    ucoll_request_t **p = &req->comm->ctx->active;
    while (*p != NULL && *p != req)
        p = &(*p)->next_active;
    if (*p == req)
        *p = req->next_active;
    req->next_active = NULL;
}

static ucoll_status_t finish(ucoll_request_t *req, ucoll_status_t status)
{
    tp_ctx_t *tp = req->comm->ctx->tp;
    if (req->posted) {
        tp_abandon(tp, &req->recv_op);
        tp_abandon(tp, &req->send_op);
        req->posted = 0;
    }
    req->status = status;
    req->active = 0;
    unlink_active(req);
    if (!req->persistent && !req->blocking)
        exec_release(req);
    return status;
}

void exec_abort(ucoll_request_t *req, ucoll_status_t status)
{
    if (req->active)
        finish(req, status);
}

ucoll_status_t exec_start(ucoll_request_t *req)
{
    ucoll_comm_t *comm = req->comm;
    ucoll_ctx_t *ctx = comm->ctx;
    ucoll_status_t st;

    if (!req->sched_valid) {
        sched_clear(&req->sched);
        if (req->alg->build(&req->sched, &req->sched_args) != 0)
            return req->sched.failed ? UCOLL_ERR_NO_MEMORY : UCOLL_ERR_INVALID_ARG;
        req->sched_valid = 1;
    }
    for (int b = 0; b < SCHED_NBUFS; b++) {
        req->buf[b] = NULL;
        req->memh[b] = NULL;
    }
    for (int b = SCHED_FIRST_SCRATCH; b < SCHED_NBUFS; b++) {
        if (req->sched.scratch[b] == 0)
            continue;
        if ((st = ensure_chunk(req, b, req->sched.scratch[b] * req->elem_size)) != UCOLL_OK)
            return st;
        req->buf[b] = req->chunk[b]->addr;
        req->memh[b] = req->chunk[b]->memh;
    }
    if (req->coll == UCOLL_COLL_BCAST || req->coll == UCOLL_COLL_BARRIER) {
        req->buf[SCHED_BUF_OUT] = req->recvbuf;
    } else {
        req->buf[SCHED_BUF_OUT] = req->recvbuf;
        if (req->in_place) { /* the schedule may overwrite OUT before it has read all of IN */
            size_t bytes = req->count * req->elem_size;
            if ((st = ensure_chunk(req, SCHED_BUF_IN, bytes)) != UCOLL_OK)
                return st;
            memcpy(req->chunk[SCHED_BUF_IN]->addr, req->recvbuf, bytes);
            req->buf[SCHED_BUF_IN] = req->chunk[SCHED_BUF_IN]->addr;
            req->memh[SCHED_BUF_IN] = req->chunk[SCHED_BUF_IN]->memh;
        } else {
            req->buf[SCHED_BUF_IN] = (void *)req->sendbuf;
        }
    }
    req->seq = comm->seq++;
    req->pc = 0;
    req->posted = 0;
    req->status = UCOLL_INPROGRESS;
    req->active = 1;
    req->deadline = ctx->cfg.timeout_s > 0 ? now_seconds() + ctx->cfg.timeout_s : 0;
    req->next_active = ctx->active;
    ctx->active = req;
    return UCOLL_OK;
}

static ucoll_status_t post_round(ucoll_request_t *req, const sched_step_t *step)
{
    ucoll_comm_t *comm = req->comm;
    tp_ctx_t *tp = comm->ctx->tp;
    const uint64_t tag = ucoll_tag(comm->id, req->seq, step->round, 0);
    static char empty; /* zero-byte messages need a valid address */

    req->recv_op.done = 1;
    req->recv_op.status = UCOLL_OK;
    req->recv_op.ucp_req = NULL;
    req->send_op = req->recv_op;
    req->posted = 1;
    if (step->recv_peer >= 0) {
        size_t bytes = step->recv.count * req->elem_size;
        void *addr = bytes ? region_addr(req, step->recv) : &empty;
        tp_irecv(tp, comm->world_rank[step->recv_peer], addr, bytes,
                 bytes ? req->memh[step->recv.buf] : NULL, tag, &req->recv_op);
    }
    if (step->send_peer >= 0) {
        size_t bytes = step->send.count * req->elem_size;
        const void *addr = bytes ? region_addr(req, step->send) : &empty;
        tp_isend(tp, comm->world_rank[step->send_peer], addr, bytes,
                 bytes ? req->memh[step->send.buf] : NULL, tag, &req->send_op);
    }
    return UCOLL_OK;
}

ucoll_status_t exec_advance(ucoll_request_t *req)
{
    if (!req->active)
        return req->status;
    tp_ctx_t *tp = req->comm->ctx->tp;
    const sched_t *s = &req->sched;

    while (req->pc < s->nsteps) {
        const sched_step_t *step = &s->steps[req->pc];
        switch (step->kind) {
        case SCHED_COPY:
            memmove(region_addr(req, step->dst), region_addr(req, step->src),
                    step->src.count * req->elem_size);
            break;
        case SCHED_REDUCE:
            op_apply(req->op, req->dtype, region_addr(req, step->src),
                     region_addr(req, step->dst), step->src.count);
            break;
        case SCHED_XCHG:
            if (!req->posted)
                post_round(req, step);
            if (!req->recv_op.done || !req->send_op.done) {
                if (!req->recv_op.done &&
                    tp_peer_failed(tp, req->comm->world_rank[step->recv_peer]))
                    return finish(req, UCOLL_ERR_PEER_FAILED);
                if (req->deadline > 0 && now_seconds() > req->deadline)
                    return finish(req, UCOLL_ERR_TIMED_OUT);
                return UCOLL_INPROGRESS;
            }
            tp_abandon(tp, &req->recv_op); /* both done: frees the UCP requests */
            tp_abandon(tp, &req->send_op);
            req->posted = 0;
            if (req->recv_op.status != UCOLL_OK)
                return finish(req, req->recv_op.status);
            if (req->send_op.status != UCOLL_OK)
                return finish(req, req->send_op.status);
            break;
        }
        req->pc++;
    }
    return finish(req, UCOLL_OK);
}

unsigned ctx_progress(ucoll_ctx_t *ctx)
{
    unsigned events = tp_progress(ctx->tp);
    ucoll_request_t *req = ctx->active;
    while (req != NULL) {
        ucoll_request_t *next = req->next_active; /* req may leave the list */
        exec_advance(req);
        req = next;
    }
    return events;
}

ucoll_status_t request_wait(ucoll_request_t *req)
{
    ucoll_ctx_t *ctx = req->comm->ctx;
    unsigned idle = 0;
    for (;;) {
        ucoll_status_t st = exec_advance(req);
        if (st != UCOLL_INPROGRESS)
            return st;
        if (ctx_progress(ctx) == 0)
            tp_idle(ctx->tp, &idle);
        else
            idle = 0;
    }
}
