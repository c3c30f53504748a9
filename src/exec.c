/*
 * The schedule executor: runs one process's schedule (sched.h) over ucx_transport. A request
 * is a state machine (next step, whether its round's messages are posted) so that blocking,
 * nonblocking and persistent collectives are the same code: blocking calls wait, the others
 * are advanced by ucoll_test/ucoll_wait and by every other ucoll call (ctx_progress).
 *
 * Each round's message carries the tag (comm id, sender, collective sequence number, round,
 * segment; tag.h says why no collective takes another one's message). A round with at most 8 KiB to
 * receive sends first (its send is the critical path: back-to-back np=2 allreduce and barrier
 * 12 % faster), a larger one posts its receive first (so that the data lands in place rather
 * than in UCX's unexpected-message buffers). Scratch buffers are registered chunks from the
 * transport's pool: a persistent request keeps them, a comm's cached blocking request while it
 * is the most recently used one (no allocation per call either way).
 */
#include "ucoll_int.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

_Static_assert(UCOLL_MAX_ROUNDS == COST_MAX_ROUNDS, "auto's round limit is the tag's");

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

void exec_release_scratch(ucoll_request_t *req)
{
    tp_ctx_t *tp = req->comm->ctx->tp;
    req->prepared = 0;
    for (int b = 0; b < SCHED_NBUFS; b++) {
        tp_pool_put(tp, req->chunk[b]);
        req->chunk[b] = NULL;
    }
}

void exec_release(ucoll_request_t *req)
{
    tp_ctx_t *tp = req->comm->ctx->tp;
    exec_release_scratch(req); /* its scratch and op slots go */
    tp_ops_free(req->send_ops);
    tp_ops_free(req->recv_ops);
    tp_ops_free(req->early_ops);
    req->send_ops = req->recv_ops = req->early_ops = NULL;
    req->ops_cap = 0;
    for (int b = 0; b < SCHED_NBUFS; b++) {
        tp_mem_unmap(tp, req->user_memh[b]);
        req->user_memh[b] = NULL;
    }
    if (req->check != NULL) { /* UCOLL_CHECK's agreement request (agree.c) */
        exec_release(req->check);
        sched_destroy(&req->check->sched);
        free(req->check);
        req->check = NULL;
    }
}

static int is_block(const ucoll_request_t *req)
{
    return req->coll >= UCOLL_COLL_ALLGATHER;
}

/* the block collectives' user buffers, each with its own size (sched.h) */
static ucoll_status_t register_block_buffers(ucoll_request_t *req)
{
    tp_ctx_t *tp = req->comm->ctx->tp;
    ucoll_status_t st = UCOLL_OK;
    if (!req->no_out && !req->out_scratch && req->out_bytes > 0)
        st = tp_mem_map(tp, req->recvbuf, req->out_bytes, &req->user_memh[SCHED_BUF_OUT]);
    if (st == UCOLL_OK && !req->no_in && (!req->in_place || req->out_scratch) && req->in_bytes > 0)
        st = tp_mem_map(tp, (void *)req->sendbuf, req->in_bytes, &req->user_memh[SCHED_BUF_IN]);
    return st;
}

/* persistent requests: the user's buffers are registered once, here */
ucoll_status_t exec_register_user_buffers(ucoll_request_t *req)
{
    tp_ctx_t *tp = req->comm->ctx->tp;
    const size_t bytes = req->count * req->elem_size;
    ucoll_status_t st = UCOLL_OK;
    if (is_block(req))
        return register_block_buffers(req);
    if (bytes == 0)
        return UCOLL_OK;
    const int recv_used = req->coll != UCOLL_COLL_REDUCE || req->comm->rank == req->root;
    if (req->recvbuf != NULL && recv_used)
        st = tp_mem_map(tp, req->recvbuf, bytes, &req->user_memh[SCHED_BUF_OUT]);
    if (st == UCOLL_OK && !req->in_place && req->sendbuf != NULL && req->coll != UCOLL_COLL_BCAST &&
        req->coll != UCOLL_COLL_BARRIER)
        st = tp_mem_map(tp, (void *)req->sendbuf, bytes, &req->user_memh[SCHED_BUF_IN]);
    return st;
}

static void unlink_active(ucoll_request_t *req)
{
    ucoll_comm_t *comm = req->comm;
    *(req->comm_prev != NULL ? &req->comm_prev->comm_next : &comm->oldest) = req->comm_next;
    *(req->comm_next != NULL ? &req->comm_next->comm_prev : &comm->newest) = req->comm_prev;
    req->comm_prev = req->comm_next = NULL;
    ucoll_request_t **p = &req->comm->ctx->active;
    while (*p != NULL && *p != req)
        p = &(*p)->next_active;
    if (*p == req)
        *p = req->next_active;
    req->next_active = NULL;
}

static void abandon_round(ucoll_request_t *req);

static ucoll_status_t finish(ucoll_request_t *req, ucoll_status_t status)
{
    tp_ctx_t *tp = req->comm->ctx->tp;
    if (req->posted)
        abandon_round(req);
    for (int k = 0; k < 2; k++)
        if (req->early_pc[k] != 0) { /* a later round's offered receive */
            tp_abandon(tp, tp_op_at(req->early_ops, (size_t)k));
            req->early_pc[k] = 0;
        }
    /* a receive given up on a writer that had stopped inside its write (here, or in another
     * call of this process meanwhile): that writer may yet change a block of this call's
     * scratch, which no later call may then have */
    if (__builtin_expect(tp_writes_outrun(tp) != req->writes_outrun, 0)) {
        for (int b = 0; b < SCHED_NBUFS; b++)
            tp_pool_quarantine(tp, req->chunk[b]);
        exec_release_scratch(req); /* a persistent request's next start takes new scratch */
    }
    if (req->check != NULL && req->check->active)
        finish(req->check, status);
    req->status = status;
    req->active = 0;
    unlink_active(req);
    if (req->blocking) {
        /* its waiter may sleep on the fd while another thread's progress pass finished it */
        if (__atomic_load_n(&req->comm->ctx->sleepers, __ATOMIC_RELAXED) > 0)
            tp_wake(req->comm->ctx->tp);
        return status;
    }
    if (!req->internal) {
        req->comm->ctx->completions++;
        if (req->cb != NULL)
            exec_queue_callback(req, status);
    }
    if (!req->persistent)
        exec_release(req);
    return status;
}

void exec_abort(ucoll_request_t *req, ucoll_status_t status)
{
    if (req->active)
        finish(req, status);
}

static size_t segment_elems(const ucoll_request_t *req, int peer, size_t count);
static size_t segments(size_t count, size_t seg);
static ucoll_status_t reserve_ops(ucoll_request_t *req, size_t n);

/* buffer b of the schedule is its scratch chunk (NULL: none) */
static void set_chunk_buf(ucoll_request_t *req, int b)
{
    req->buf[b] = req->chunk[b] != NULL ? req->chunk[b]->addr : NULL;
    req->memh[b] = req->chunk[b] != NULL ? req->chunk[b]->memh : NULL;
}

/* everything a start needs that may allocate: the schedule, registered scratch, per-segment
 * op slots. A persistent request does it once; a blocking one reuses what the last call had. */
ucoll_status_t exec_prepare(ucoll_request_t *req)
{
    ucoll_status_t st;
    if (req->sched_valid && req->prepared == 1 + req->in_place)
        return UCOLL_OK; /* a blocking call repeating the last one's arguments */
    req->prepared = 0;
    if (!req->sched_valid) {
        /* the tag's round field (tag.h), judged by a bound every rank computes alike: this
         * rank's own schedule may have fewer rounds than another's */
        if (!(req->alg->flags & ALG_NODE_AWARE) && /* (selection bounded its rounds) */
            !cost_fits_tag(req->alg, req->param, req->comm->size))
            return UCOLL_ERR_NOT_SUPPORTED;
        sched_clear(&req->sched);
        if (req->alg->build(&req->sched, &req->sched_args) != 0)
            return req->sched.failed ? UCOLL_ERR_NO_MEMORY : UCOLL_ERR_INVALID_ARG;
        req->sched_valid = 1;
    }
    for (int b = SCHED_FIRST_SCRATCH; b < SCHED_NBUFS; b++)
        if (req->sched.scratch[b] > 0 &&
            (st = ensure_chunk(req, b, req->sched.scratch[b] * req->elem_size)) != UCOLL_OK)
            return st;
    if (req->in_place && is_block(req)) {
        /* scatter's root keeps its own block in sendbuf: OUT is scratch; elsewhere IN is */
        const int b = req->out_scratch ? SCHED_BUF_OUT : SCHED_BUF_IN;
        const size_t bytes = req->out_scratch ? req->out_bytes : req->in_bytes;
        if (bytes > 0 && (st = ensure_chunk(req, b, bytes)) != UCOLL_OK)
            return st;
    } else if (req->in_place && req->coll != UCOLL_COLL_BCAST && req->coll != UCOLL_COLL_BARRIER &&
               (st = ensure_chunk(req, SCHED_BUF_IN, req->count * req->elem_size)) != UCOLL_OK)
        return st;
    size_t most = 1;
    for (size_t i = 0; i < req->sched.nsteps; i++) {
        const sched_step_t *step = &req->sched.steps[i];
        if (step->kind != SCHED_XCHG)
            continue;
        size_t n =
            segments(step->send.count, segment_elems(req, step->send_peer, step->send.count));
        size_t m =
            segments(step->recv.count, segment_elems(req, step->recv_peer, step->recv.count));
        most = n > most ? n : most;
        most = m > most ? m : most;
    }
    if ((st = reserve_ops(req, most)) != UCOLL_OK)
        return st;
    /* the scratch buffers' addresses hold while prepared does: only this and
     * exec_release_scratch (which clears prepared) change the chunks; IN and OUT are set by
     * every start */
    for (int b = SCHED_FIRST_SCRATCH; b < SCHED_NBUFS; b++)
        set_chunk_buf(req, b);
    req->prepared = 1 + req->in_place;
    return UCOLL_OK;
}

/* UCOLL_TIMEOUT counts only time spent inside ucoll: a gap between two progress passes longer
 * than this was spent by the caller (computing between a post and its wait), and every active
 * request's deadline moves on by it */
#define OUTSIDE_GAP_S 0.05

static void credit_time_outside(ucoll_ctx_t *ctx)
{
    if (ctx->cfg.timeout_s <= 0)
        return; /* no deadlines: no clock reads either */
    const double t = now_seconds();
    const double gap = t - ctx->last_pass;
    if (ctx->last_pass > 0 && gap > OUTSIDE_GAP_S)
        for (ucoll_request_t *r = ctx->active; r != NULL; r = r->next_active)
            if (r->deadline > 0)
                r->deadline += gap;
    ctx->last_pass = t;
}

ucoll_status_t exec_may_start(ucoll_comm_t *comm)
{
    if (comm->revoked)
        return UCOLL_ERR_STATE;
    if (comm->oldest != NULL && comm->seq - comm->oldest->seq >= UCOLL_SEQ_WINDOW) {
        /* other ranks may have accepted this call (the window is local): their messages of it
         * would sit here unmatched, so the comm is revoked and its id never reused */
        comm->revoked = 1;
        return UCOLL_ERR_STATE;
    }
    return UCOLL_OK;
}

static char empty_message; /* zero-byte messages need a valid address */

/* IN and OUT of a block collective with their own sizes; a buffer that does not exist on this
 * rank (gather's OUT off the root, scatter's IN) stays NULL, an empty one gets a valid address */
static void map_block_buffers(ucoll_request_t *req)
{
    void *const none = &empty_message;
    if (req->no_out) {
        req->buf[SCHED_BUF_OUT] = NULL;
        req->memh[SCHED_BUF_OUT] = NULL;
    } else if (!req->out_scratch) {
        req->buf[SCHED_BUF_OUT] = req->out_bytes > 0 ? req->recvbuf : none;
        req->memh[SCHED_BUF_OUT] = req->user_memh[SCHED_BUF_OUT];
    } else if (req->out_bytes == 0) {
        req->buf[SCHED_BUF_OUT] = none;
    }
    if (req->no_in) {
        req->buf[SCHED_BUF_IN] = NULL;
        req->memh[SCHED_BUF_IN] = NULL;
    } else if (req->in_bytes == 0) {
        req->buf[SCHED_BUF_IN] = none;
        req->memh[SCHED_BUF_IN] = NULL;
    } else if (req->in_place && !req->out_scratch) {
        /* the schedule may overwrite OUT before it has read all of IN */
        memcpy(req->buf[SCHED_BUF_IN], (const char *)req->recvbuf + req->in_src_off, req->in_bytes);
    } else {
        req->buf[SCHED_BUF_IN] = (void *)req->sendbuf;
        req->memh[SCHED_BUF_IN] = req->user_memh[SCHED_BUF_IN];
    }
}

ucoll_status_t exec_start(ucoll_request_t *req)
{
    ucoll_comm_t *comm = req->comm;
    ucoll_ctx_t *ctx = comm->ctx;
    ucoll_status_t st;
    /* a call with nothing to send runs only its UCOLL_CHECK comparison */
    const int empty = req->empty;

    /* (exec_prepare's own first test, here: a repeated call skips the call) */
    const int prepared = req->sched_valid && req->prepared == 1 + req->in_place;
    if ((st = exec_may_start(comm)) != UCOLL_OK ||
        (!empty && !prepared && (st = exec_prepare(req)) != UCOLL_OK))
        return st;
    /* prepared: the scratch buffers are set; a call with nothing to send prepares nothing */
    set_chunk_buf(req, SCHED_BUF_IN);
    set_chunk_buf(req, SCHED_BUF_OUT);
    for (int b = SCHED_FIRST_SCRATCH; empty && b < SCHED_NBUFS; b++)
        set_chunk_buf(req, b);
    if (__builtin_expect(is_block(req), 0)) {
        if (!empty)
            map_block_buffers(req);
    } else {
        req->buf[SCHED_BUF_OUT] = req->recvbuf;
        req->memh[SCHED_BUF_OUT] = req->user_memh[SCHED_BUF_OUT];
    }
    if (!empty && req->coll != UCOLL_COLL_BCAST && req->coll != UCOLL_COLL_BARRIER &&
        !is_block(req)) {
        if (req->in_place) { /* the schedule may overwrite OUT before it has read all of IN */
            memcpy(req->buf[SCHED_BUF_IN], req->recvbuf, req->count * req->elem_size);
        } else {
            req->buf[SCHED_BUF_IN] = (void *)req->sendbuf;
            req->memh[SCHED_BUF_IN] = req->user_memh[SCHED_BUF_IN];
        }
    }
    /* UCOLL_CHECK: the comparison's sequence number comes right before this call's own */
    req->checking = !req->internal && comm_checks(comm);
    if (req->checking && (st = check_start(req)) != UCOLL_OK)
        return st;
    req->seq = comm->seq++;
    /* the tag fields fixed for the whole call (tag.h); each message adds the rest */
    req->recv_tag = ucoll_tag(comm->id, 0, req->seq, 0, 0, 0);
    req->send_tag = req->recv_tag | ucoll_tag(0, (uint32_t)comm->rank, 0, 0, 0, 0);
    /* auto's single copy only where the message is the sender's input (ALG_SENDS_INPUT), or
     * in the bcasts init times its path with (every rank alike) */
    req->single_copy =
        ctx->single_copy_on && (!ctx->cfg.single_copy_auto || ctx->single_copy_forced ||
                                (req->alg != NULL && (req->alg->flags & ALG_SENDS_INPUT)));
    req->pc = 0;
    req->posted = 0;
    req->early_pc[0] = req->early_pc[1] = req->written_pc = 0;
    req->write_min = req->single_copy && !req->internal ? tp_single_copy_min(ctx->tp) : 0;
    req->writes_outrun = tp_writes_outrun(ctx->tp);
    req->status = UCOLL_INPROGRESS;
    req->active = 1;
    credit_time_outside(ctx); /* before req joins: the time before its start is not its own */
    req->deadline = ctx->cfg.timeout_s > 0 ? now_seconds() + ctx->cfg.timeout_s : 0;
    req->next_active = ctx->active;
    ctx->active = req;
    req->comm_next = NULL;
    req->comm_prev = comm->newest;
    *(comm->newest != NULL ? &comm->newest->comm_next : &comm->oldest) = req;
    comm->newest = req;
    tp_kick(ctx->tp); /* a thread asleep on the event fd has work now */
    return UCOLL_OK;
}

static int may_copy_once(const ucoll_request_t *req, size_t count);

/* elements per segment of a message of `count` elements to or from peer (of the comm; < 0:
 * none): messages longer than UCOLL_SEGMENT_SIZE travel as several tagged segments. Sender and
 * receiver derive the same split from the message length, so they agree without telling each
 * other. A message that goes by single copy is one segment: each segment would cost a
 * descriptor, an answer and a read that pins pages again, and its receiver, which does the
 * copying, cannot overlap one segment's read with the next anyway. */
static size_t segment_elems(const ucoll_request_t *req, int peer, size_t count)
{
    const size_t max_bytes = req->comm->ctx->cfg.segment_size;
    /* agreements (req->internal) never segment: the segment size is among what they compare */
    if (max_bytes == 0 || count * req->elem_size <= max_bytes || req->internal)
        return count > 0 ? count : 1;
    if (peer >= 0 && may_copy_once(req, count) &&
        tp_single_copy_size(req->comm->ctx->tp, req->comm->world_rank[peer],
                            count * req->elem_size))
        return count;
    size_t seg = max_bytes / req->elem_size; /* < count: the message does not fit one */
    if (seg == 0)
        return count;
    size_t fewest = (count + UCOLL_MAX_SEGMENTS - 1) / UCOLL_MAX_SEGMENTS; /* tag.h */
    return seg < fewest ? fewest : seg;
}

static size_t segments(size_t count, size_t seg)
{
    return count <= seg ? 1 : (count + seg - 1) / seg;
}

static ucoll_status_t reserve_ops(ucoll_request_t *req, size_t n)
{
    if (n <= req->ops_cap)
        return UCOLL_OK;
    tp_op_t *s = tp_ops_resize(req->send_ops, n);
    if (s != NULL)
        req->send_ops = s;
    tp_op_t *r = tp_ops_resize(req->recv_ops, n);
    if (r != NULL)
        req->recv_ops = r;
    if (s == NULL || r == NULL)
        return UCOLL_ERR_NO_MEMORY;
    req->ops_cap = n;
    return UCOLL_OK;
}

/* receives of at most this many bytes are posted after the round's send */
enum { SEND_FIRST_MAX_BYTES = 8192 };

/* a message of count elements may go by single copy: the request allows it, and the whole
 * message (not its segment) is at most UCOLL_SINGLE_COPY_MAX, so that both ends decide alike */
static int may_copy_once(const ucoll_request_t *req, size_t count)
{
    const size_t max = req->comm->ctx->cfg.single_copy_max;
    return req->single_copy && (max == 0 || count * req->elem_size <= max);
}

static void post_sends(ucoll_request_t *req, const sched_step_t *step, size_t sseg)
{
    const int once = may_copy_once(req, step->send.count);
    ucoll_comm_t *comm = req->comm;
    const size_t esz = req->elem_size;
    for (size_t j = 0; j < req->nsend; j++) {
        const uint64_t tag =
            req->send_tag | ucoll_tag(0, 0, 0, step->round, (uint32_t)j, j + 1 == req->nsend);
        size_t off = j * sseg, n = step->send.count - off < sseg ? step->send.count - off : sseg;
        const void *addr = n ? (char *)region_addr(req, step->send) + off * esz : &empty_message;
        tp_isend(comm->ctx->tp, comm->world_rank[step->send_peer], addr, n * esz,
                 n ? req->memh[step->send.buf] : NULL, tag, once, tp_op_at(req->send_ops, j));
    }
}

/* the slot of early_ops holding the current round's receive, posted ahead of the round
 * (offer_later_receive); -1 if none */
static int early_here(const ucoll_request_t *req)
{
    for (int k = 0; k < 2; k++)
        if (req->early_pc[k] != 0 && req->early_pc[k] == req->pc)
            return k;
    return -1;
}

/* receive segment j of the current round */
static tp_op_t *recv_op(const ucoll_request_t *req, size_t j)
{
    const int k = j == 0 ? early_here(req) : -1;
    return k >= 0 ? tp_op_at(req->early_ops, (size_t)k) : tp_op_at(req->recv_ops, j);
}

/* the round two steps after the current one, behind this round and one REDUCE, receives a
 * single-copy message into a region that neither touches: its receive is posted now, offering
 * the buffer to the sender, which may then write the message into it while it computes it
 * (tp_irecv_offer). Where the buffer is no region of this process, nothing is posted. */
static void offer_later_receive(ucoll_request_t *req, const sched_step_t *step)
{
    const sched_t *s = &req->sched;
    if (req->write_min == 0 || req->pc + 2 >= s->nsteps ||
        s->steps[req->pc + 1].kind != SCHED_REDUCE)
        return; /* write_min 0: no single copy, or an internal request */
    const sched_step_t *red = &s->steps[req->pc + 1], *later = &s->steps[req->pc + 2];
    tp_ctx_t *tp = req->comm->ctx->tp;
    if (later->kind != SCHED_XCHG || later->recv_peer < 0 || later->recv.count == 0 ||
        !may_copy_once(req, later->recv.count))
        return;
    const int peer = req->comm->world_rank[later->recv_peer];
    const size_t bytes = later->recv.count * req->elem_size;
    const sched_region_t r = later->recv;
    if (!tp_single_copy_size(tp, peer, bytes) ||
        (step->send_peer >= 0 && sched_regions_overlap(step->send, r)) ||
        (step->recv_peer >= 0 && sched_regions_overlap(step->recv, r)) ||
        sched_regions_overlap(red->src, r) || sched_regions_overlap(red->dst, r))
        return;
    if (req->early_ops == NULL && (req->early_ops = tp_ops_resize(NULL, 2)) == NULL)
        return;
    const int k = req->early_pc[0] == 0 ? 0 : 1; /* the other may be this round's */
    if (req->early_pc[k] != 0)
        return;
    const uint64_t tag =
        req->recv_tag | ucoll_tag(0, (uint32_t)later->recv_peer, 0, later->round, 0, 1);
    if (tp_irecv_offer(tp, peer, region_addr(req, r), bytes, tag, UCOLL_TAG_LAST_SEGMENT,
                       tp_op_at(req->early_ops, (size_t)k)))
        req->early_pc[k] = req->pc + 2;
}

/* posts the round's receive segments, then its send segments */
static ucoll_status_t post_round(ucoll_request_t *req, const sched_step_t *step)
{
    ucoll_comm_t *comm = req->comm;
    tp_ctx_t *tp = comm->ctx->tp;
    const size_t esz = req->elem_size;
    size_t rseg = 1, sseg = 1;

    req->nrecv = req->nsend = 0;
    req->reduced = 0;
    req->fused = 0;
    if (step->recv_peer >= 0) {
        rseg = segment_elems(req, step->recv_peer, step->recv.count);
        req->nrecv = segments(step->recv.count, rseg);
    }
    /* a send already written into its receiver's offered buffer is done */
    if (step->send_peer >= 0 && (req->written_pc == 0 || req->written_pc != req->pc)) {
        sseg = segment_elems(req, step->send_peer, step->send.count);
        req->nsend = segments(step->send.count, sseg);
    }
    ucoll_status_t st = reserve_ops(req, req->nrecv > req->nsend ? req->nrecv : req->nsend);
    if (st != UCOLL_OK)
        return st;
    req->posted = 1;
    req->seg_elems = rseg;
    /* the REDUCE that consumes the received data runs per segment, overlapping the transfer
     * of later segments, unless it would write what this round is still sending */
    if (req->nrecv > 1 && req->pc + 1 < req->sched.nsteps) {
        const sched_step_t *next = &req->sched.steps[req->pc + 1];
        req->fused = next->kind == SCHED_REDUCE &&
                     (sched_same_region(next->src, step->recv) ||
                      sched_same_region(next->dst, step->recv)) &&
                     !(step->send_peer >= 0 && sched_regions_overlap(next->dst, step->send));
    }
    /* a single message by single copy whose REDUCE comes next (sched_receive_lendable): that
     * REDUCE may read the sender's bytes in place where they lie in a region (ucoll_mem_alloc) */
    int lend = 0;
    if (req->nrecv == 1 && may_copy_once(req, step->recv.count) &&
        tp_single_copy_size(tp, comm->world_rank[step->recv_peer], step->recv.count * esz)) {
        lend = sched_receive_lendable(&req->sched, req->pc);
        req->fused = lend;
    }
    /* a small message goes out before this rank's receive is posted: its latency is the
     * round's critical path, and the peer's message needs at least a transfer time to arrive.
     * A large one waits for the receive to be posted, so that the peer's data lands in place
     * instead of in UCX's unexpected-message buffers (an extra copy). */
    const int send_first = step->recv.count * esz <= SEND_FIRST_MAX_BYTES;
    int early = early_here(req);
    if (early >= 0 && req->nrecv != 1) { /* cannot be: sizes decide alike */
        tp_abandon(tp, recv_op(req, 0));
        req->early_pc[early] = 0;
        early = -1;
    }
    offer_later_receive(req, step);
    if (send_first)
        post_sends(req, step, sseg);
    const int once = may_copy_once(req, step->recv.count);
    for (size_t j = early >= 0 ? 1 : 0; j < req->nrecv; j++) {
        const uint64_t tag = req->recv_tag | ucoll_tag(0, (uint32_t)step->recv_peer, 0, step->round,
                                                       (uint32_t)j, j + 1 == req->nrecv);
        size_t off = j * rseg, n = step->recv.count - off < rseg ? step->recv.count - off : rseg;
        void *addr = n ? (char *)region_addr(req, step->recv) + off * esz : &empty_message;
        tp_irecv(tp, comm->world_rank[step->recv_peer], addr, n * esz,
                 n ? req->memh[step->recv.buf] : NULL, tag, UCOLL_TAG_LAST_SEGMENT,
                 (once ? TP_SINGLE_COPY : 0) | (lend ? TP_LEND : 0), tp_op_at(req->recv_ops, j));
    }
    if (!send_first)
        post_sends(req, step, sseg);
    return UCOLL_OK;
}

static void abandon_round(ucoll_request_t *req)
{
    tp_ctx_t *tp = req->comm->ctx->tp;
    for (size_t j = 0; j < req->nrecv; j++)
        tp_abandon(tp, recv_op(req, j));
    const int early = early_here(req);
    if (early >= 0)
        req->early_pc[early] = 0;
    for (size_t j = 0; j < req->nsend; j++)
        tp_abandon(tp, tp_op_at(req->send_ops, j));
    req->nrecv = req->nsend = 0;
    req->posted = 0;
}

/* elements [off, off + n) of the REDUCE red. lent: the bytes of its received operand (the
 * sender's, in place) instead of the receive region of the round xchg; where they stand for dst
 * (dst <- src (+) received), one three-operand pass writes dst */
static void reduce_part(ucoll_request_t *req, const sched_step_t *red, const sched_step_t *xchg,
                        const char *lent, size_t off, size_t n)
{
    const size_t b = off * req->elem_size;
    char *dst = (char *)region_addr(req, red->dst) + b;
    if (lent == NULL)
        op_apply(req->op, req->dtype, (const char *)region_addr(req, red->src) + b, dst, n);
    else if (!sched_same_region(red->dst, xchg->recv)) /* dst <- received (+) dst */
        op_apply(req->op, req->dtype, lent + b, dst, n);
    else
        op_apply_to(req->op, req->dtype, (const char *)region_addr(req, red->src) + b, lent + b,
                    dst, n);
}

/* where the round after the REDUCE sends its dst whole by single copy, the receiver's offered
 * buffer for it, claimed (NULL: none), and the receiver's world rank in *peer */
static void *write_target(ucoll_request_t *req, const sched_step_t *red, void **handle, int *peer)
{
    *handle = NULL;
    const size_t next = (size_t)(red - req->sched.steps) + 1;
    if (next >= req->sched.nsteps || req->internal)
        return NULL;
    const sched_step_t *later = &req->sched.steps[next];
    if (later->kind != SCHED_XCHG || later->send_peer < 0 ||
        !sched_same_region(later->send, red->dst) || !may_copy_once(req, later->send.count))
        return NULL;
    tp_ctx_t *tp = req->comm->ctx->tp;
    *peer = req->comm->world_rank[later->send_peer];
    const size_t bytes = later->send.count * req->elem_size;
    if (!tp_single_copy_size(tp, *peer, bytes))
        return NULL;
    const uint64_t tag = req->send_tag | ucoll_tag(0, 0, 0, later->round, 0, 1);
    return tp_write_target(tp, *peer, tag, bytes, handle);
}

/* a message of count elements may be one written into its receiver (write_target's
 * necessary condition, without its search) */
static inline int may_write(const ucoll_request_t *req, size_t count)
{
    return req->write_min != 0 && count * req->elem_size >= req->write_min;
}

/* bytes reduced before their copy goes to the receiver's buffer: while they are in cache */
enum { WRITE_BLOCK_BYTES = 16384 };

/* UCOLL_TEST_WRITE_STALL_MS (tests): the first written block of this process waits that long
 * between finding its receiver's claim standing and writing, as a writer stopped there would:
 * a receiver that gave up meanwhile gets the block late */
static void test_write_stall(void)
{
    static long stall_ms = -1; /* -1: not read yet, 0: none (or spent) */
    if (__builtin_expect(stall_ms == 0, 1))
        return;
    if (stall_ms < 0) {
        const char *v = getenv("UCOLL_TEST_WRITE_STALL_MS");
        stall_ms = v != NULL ? atol(v) : 0;
        if (stall_ms <= 0) {
            stall_ms = 0;
            return;
        }
    }
    struct timespec ts = {stall_ms / 1000, (stall_ms % 1000) * 1000000L};
    stall_ms = 0;
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* the whole REDUCE red (reduce_part; xchg and lent_op, the lent receive whose bytes are
 * `lent`, may be NULL). Where the next round sends dst to a receiver that offered its buffer,
 * each block of dst is also written there as soon as it is reduced (until the receiver gives
 * up), and that send is done. A lent receive is released before the write completes: only a
 * release that finds the lender's bytes unchanged lets the written message count. */
static ucoll_status_t reduce_writing(ucoll_request_t *req, const sched_step_t *red,
                                     const sched_step_t *xchg, tp_op_t *lent_op)
{
    tp_ctx_t *tp = req->comm->ctx->tp;
    const char *lent = lent_op != NULL ? tp_op_lent(lent_op) : NULL;
    void *handle = NULL;
    int peer = -1;
    const size_t count = red->src.count, esz = req->elem_size;
    char *target = may_write(req, count) ? write_target(req, red, &handle, &peer) : NULL;
    if (target == NULL) {
        reduce_part(req, red, xchg, lent, 0, count);
        return lent_op != NULL ? tp_release(tp, lent_op) : UCOLL_OK;
    }
    const size_t block = WRITE_BLOCK_BYTES / esz > 0 ? WRITE_BLOCK_BYTES / esz : 1;
    const char *dst = region_addr(req, red->dst);
    int claimed = 1;
    for (size_t off = 0; off < count; off += block) {
        const size_t n = count - off < block ? count - off : block;
        reduce_part(req, red, xchg, lent, off, n);
        if (claimed && (claimed = tp_write_claimed(tp, peer, handle)) != 0) {
            test_write_stall();
            memcpy(target + off * esz, dst + off * esz, n * esz);
        }
    }
    ucoll_status_t st = lent_op != NULL ? tp_release(tp, lent_op) : UCOLL_OK;
    ucoll_status_t wst = tp_write_done(tp, peer, handle, st == UCOLL_OK && claimed);
    if (st == UCOLL_OK)
        st = wst;
    if (st == UCOLL_OK) /* the round after the REDUCE sends nothing */
        req->written_pc = (size_t)(red - req->sched.steps) + 1;
    return st;
}

/* applies the fused REDUCE to every received segment not yet reduced, in order */
static ucoll_status_t reduce_arrived_segments(ucoll_request_t *req, const sched_step_t *step)
{
    const sched_step_t *red = step + 1;
    while (req->reduced < req->nrecv && tp_op_done(recv_op(req, req->reduced))) {
        tp_op_t *op = recv_op(req, req->reduced);
        if (tp_op_status(op) != UCOLL_OK)
            return tp_op_status(op);
        /* the whole message (a lent receive is never segmented): it may be written on to
         * the next round's receiver as it is reduced */
        if (tp_op_lent(op) != NULL || req->nrecv == 1) {
            req->reduced++;
            ucoll_status_t st = reduce_writing(req, red, step, tp_op_lent(op) != NULL ? op : NULL);
            if (st != UCOLL_OK)
                return st;
            continue;
        }
        size_t off = req->reduced * req->seg_elems;
        size_t n =
            step->recv.count - off < req->seg_elems ? step->recv.count - off : req->seg_elems;
        reduce_part(req, red, step, NULL, off, n);
        req->reduced++;
    }
    return UCOLL_OK;
}

static int comm_has_failed_peer(const ucoll_comm_t *comm)
{
    for (int i = 0; i < comm->size; i++)
        if (tp_peer_failed(comm->ctx->tp, comm->world_rank[i]))
            return 1;
    return 0;
}

/* advances the current round; OK when it is complete (its fused REDUCE included) */
static ucoll_status_t advance_round(ucoll_request_t *req, const sched_step_t *step)
{
    tp_ctx_t *tp = req->comm->ctx->tp;
    ucoll_status_t st;

    if (!req->posted && (st = post_round(req, step)) != UCOLL_OK)
        return st;
    if (req->fused && (st = reduce_arrived_segments(req, step)) != UCOLL_OK)
        return st;
    /* a failed segment fails the round at once: its later segments may never come (a peer
     * whose count is shorter by whole segments sends fewer) */
    int done = 1;
    for (size_t j = 0; j < req->nrecv; j++) {
        const tp_op_t *op = recv_op(req, j);
        if (!tp_op_done(op))
            done = 0;
        else if (tp_op_status(op) != UCOLL_OK)
            return tp_op_status(op);
    }
    for (size_t j = 0; j < req->nsend; j++) {
        const tp_op_t *op = tp_op_at(req->send_ops, j);
        if (!tp_op_done(op))
            done = 0;
        else if (tp_op_status(op) != UCOLL_OK)
            return tp_op_status(op);
    }
    if (!done) {
        if (tp_any_peer_failed(tp) && comm_has_failed_peer(req->comm))
            return UCOLL_ERR_PEER_FAILED; /* the collective cannot complete without it */
        if (req->deadline > 0 && now_seconds() > req->deadline)
            return UCOLL_ERR_TIMED_OUT;
        return UCOLL_INPROGRESS;
    }
    if (req->fused)
        return reduce_arrived_segments(req, step);
    return UCOLL_OK;
}

/* AVG: the schedule summed; once it is complete, each rank that holds a result divides it by
 * the comm size (every message carried sums, whatever the algorithm) */
static void finish_result(ucoll_request_t *req)
{
    size_t n = 0;
    switch (req->coll) {
    case UCOLL_COLL_ALLREDUCE:
        n = req->count;
        break;
    case UCOLL_COLL_REDUCE:
        n = req->comm->rank == req->root ? req->count : 0;
        break;
    case UCOLL_COLL_REDUCE_SCATTER_BLOCK:
    case UCOLL_COLL_REDUCE_SCATTER: /* the rank's own block, at the start of recvbuf */
        n = req->count;
        break;
    default: /* op_check_coll admits AVG for no other collective */
        break;
    }
    op_finish(req->op, req->dtype, req->recvbuf, n, req->comm->size);
}

ucoll_status_t exec_advance(ucoll_request_t *req)
{
    if (!req->active)
        return req->status;
    if (__builtin_expect(req->checking, 0)) {
        ucoll_status_t st = check_result(req);
        if (st == UCOLL_INPROGRESS)
            return st;
        req->checking = 0;
        if (st != UCOLL_OK || req->empty)
            return finish(req, st);
        if (req->deadline > 0) /* its own rounds start now */
            req->deadline = now_seconds() + req->comm->ctx->cfg.timeout_s;
    }
    const sched_t *s = &req->sched;

    while (req->pc < s->nsteps) {
        const sched_step_t *step = &s->steps[req->pc];
        switch (step->kind) {
        case SCHED_COPY:
            memmove(region_addr(req, step->dst), region_addr(req, step->src),
                    step->src.count * req->elem_size);
            break;
        case SCHED_REDUCE: {
            if (!may_write(req, step->src.count)) {
                op_apply(req->op, req->dtype, region_addr(req, step->src),
                         region_addr(req, step->dst), step->src.count);
                break;
            }
            ucoll_status_t st = reduce_writing(req, step, NULL, NULL);
            if (st != UCOLL_OK) { /* the next round's receiver gave up on the written message */
                req->comm->revoked = 1;
                return finish(req, st);
            }
            break;
        }
        case SCHED_XCHG: {
            ucoll_status_t st = advance_round(req, step);
            if (st == UCOLL_INPROGRESS)
                return st;
            int fused = req->fused;
            abandon_round(req); /* everything is done: frees the UCP requests */
            if (st != UCOLL_OK) {
                /* messages may have been sent or left unreceived: revoked (tag.h) */
                req->comm->revoked = 1;
                return finish(req, st);
            }
            if (req->deadline > 0) /* a completed round is progress: the timeout starts anew */
                req->deadline = now_seconds() + req->comm->ctx->cfg.timeout_s;
            if (fused)
                req->pc++; /* its REDUCE is already applied */
            break;
        }
        }
        req->pc++;
    }
    if (__builtin_expect(op_has_finish(req->op), 0))
        finish_result(req);
    return finish(req, UCOLL_OK);
}

/* one transport progress pass, then every active request of ctx but `skip` advances */
static unsigned progress_except(ucoll_ctx_t *ctx, const ucoll_request_t *skip)
{
    credit_time_outside(ctx);
    unsigned events = tp_progress(ctx->tp);
    if (__builtin_expect(ctx->shrink_records != NULL, 0))
        shrink_progress(ctx);
    for (ucoll_request_t *r = ctx->active, *next; r != NULL; r = next) {
        next = r->next_active; /* r may leave the list */
        if (r != skip)
            exec_advance(r);
    }
    return events;
}

unsigned ctx_progress(ucoll_ctx_t *ctx)
{
    return progress_except(ctx, NULL);
}

/* UCOLL_WAIT_MODE=sleep: a few idle passes spin (a message due soon costs no sleep), then
 * the thread sleeps on the event fd with the entry lock let go; otherwise tp_idle's spinning
 * and yielding */
enum { SLEEP_AFTER_IDLE_PASSES = 64 };

static void wait_idle(ucoll_ctx_t *ctx, unsigned *idle)
{
    /* every SLEEP_AFTER_IDLE_PASSES idle passes a try to sleep; when it cannot (work of its
     * own, traffic, no event fd) the pass idles as in poll mode, yielding by its count */
    if (!ctx->cfg.wait_sleep || *idle == 0 || *idle % SLEEP_AFTER_IDLE_PASSES != 0 ||
        exec_has_local_work(ctx) || tp_arm(ctx->tp, 1) != UCOLL_OK) {
        tp_idle(ctx->tp, idle);
        return;
    }
    (*idle)++;
    /* counted before the lock goes: a thread that completes this request, or arms the fd
     * meanwhile, then knows someone sleeps here */
    __atomic_add_fetch(&ctx->sleepers, 1, __ATOMIC_RELAXED);
    const int held = entry_release_all();
    /* tp_arm's timer bounds it; the bound here holds even if another thread's arm or progress
     * took the timer's or a kick's expiry first */
    tp_sleep(ctx->tp, TP_SLEEP_UCX_US / 1000);
    entry_retake(held);
    __atomic_sub_fetch(&ctx->sleepers, 1, __ATOMIC_RELAXED);
}

ucoll_status_t request_wait(ucoll_request_t *req)
{
    ucoll_ctx_t *ctx = req->comm->ctx;
    unsigned idle = 0;
    credit_time_outside(ctx);
    for (;;) {
        ucoll_status_t st = exec_advance(req);
        if (st != UCOLL_INPROGRESS)
            return st;
        /* req itself was just advanced: once per pass is enough */
        if (progress_except(ctx, req) == 0)
            wait_idle(ctx, &idle);
        else
            idle = 0;
        entry_let_others_in(); /* UCOLL_THREAD_MULTIPLE: another thread may finish req */
    }
}

int exec_has_local_work(const ucoll_ctx_t *ctx)
{
    /* a started request whose round is not posted yet (its next advance posts it); one that
     * waits for its UCOLL_CHECK agreement waits for that one's messages */
    for (const ucoll_request_t *r = ctx->active; r != NULL; r = r->next_active)
        if (!r->posted && !r->checking)
            return 1;
    return 0;
}
