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
    /* the v forms: the arrays as passed (NULL where the collective has none) */
    const size_t *send_counts, *send_displs, *recv_counts, *recv_displs;
} coll_args_t;

/* what a call means on this rank, from its validated arguments: the buffers' extents, IN and
 * OUT of the schedule (sched.h), where in place takes the input from, and whether no rank has
 * anything to send. For the first six collectives only `empty` is used. */
typedef struct {
    size_t send_ext, recv_ext; /* bytes of sendbuf / recvbuf the call reads or writes */
    size_t in_bytes, out_bytes, in_src_off;
    size_t count;        /* the schedule's count (sched.h) */
    size_t select_count; /* elements auto decides by: the same on every rank */
    int in_place, no_in, no_out, out_scratch, empty;
    const size_t *send_counts, *send_displs, *recv_counts, *recv_displs; /* for the builder */
} layout_t;

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

/* ---------------------------------------------------------------------------------------------
 * the block collectives' arguments
 */

static int is_block(ucoll_coll_t coll)
{
    return coll >= UCOLL_COLL_ALLGATHER;
}

/* what each block collective allows; in_place: sendbuf may be UCOLL_IN_PLACE (IP_ALL: on every
 * rank, IP_ROOT: at the root only), recv_in_place: recvbuf may be at the root */
enum { IP_NONE, IP_ALL, IP_ROOT };
static const struct block_rule {
    unsigned char reduces, rooted, in_place, recv_in_place;
} block_rules[UCOLL_NCOLLS - UCOLL_COLL_ALLGATHER] = {
    [UCOLL_COLL_ALLGATHER - UCOLL_COLL_ALLGATHER] = {0, 0, IP_ALL, 0},
    [UCOLL_COLL_ALLGATHERV - UCOLL_COLL_ALLGATHER] = {0, 0, IP_ALL, 0},
    [UCOLL_COLL_REDUCE_SCATTER_BLOCK - UCOLL_COLL_ALLGATHER] = {1, 0, IP_ALL, 0},
    [UCOLL_COLL_REDUCE_SCATTER - UCOLL_COLL_ALLGATHER] = {1, 0, IP_ALL, 0},
    [UCOLL_COLL_ALLTOALL - UCOLL_COLL_ALLGATHER] = {0, 0, IP_ALL, 0},
    [UCOLL_COLL_ALLTOALLV - UCOLL_COLL_ALLGATHER] = {0, 0, IP_ALL, 0},
    [UCOLL_COLL_GATHER - UCOLL_COLL_ALLGATHER] = {0, 1, IP_ROOT, 0},
    [UCOLL_COLL_GATHERV - UCOLL_COLL_ALLGATHER] = {0, 1, IP_ROOT, 0},
    [UCOLL_COLL_SCATTER - UCOLL_COLL_ALLGATHER] = {0, 1, IP_NONE, 1},
    [UCOLL_COLL_SCATTERV - UCOLL_COLL_ALLGATHER] = {0, 1, IP_NONE, 1},
};

static const struct block_rule *rule_of(ucoll_coll_t coll)
{
    return &block_rules[coll - UCOLL_COLL_ALLGATHER];
}

/* elements * esize, or -1 past SIZE_MAX */
static int bytes_of(size_t elements, size_t esize, size_t *bytes)
{
    return __builtin_mul_overflow(elements, esize, bytes) ? -1 : 0;
}

/* the sum of p counts, or -1 past SIZE_MAX */
static int sum_of(const size_t *counts, int p, size_t *sum)
{
    *sum = 0;
    for (int i = 0; i < p; i++)
        if (__builtin_add_overflow(*sum, counts[i], sum))
            return -1;
    return 0;
}

/* bytes from a buffer's start to the end of its last non-empty block, or -1 past SIZE_MAX */
static int extent_of(const size_t *counts, const size_t *displs, int p, size_t esize, size_t *ext)
{
    size_t most = 0, end;
    for (int i = 0; i < p; i++) {
        if (counts[i] == 0)
            continue; /* an empty block's displacement is never used */
        if (__builtin_add_overflow(displs[i], counts[i], &end))
            return -1;
        most = end > most ? end : most;
    }
    return bytes_of(most, esize, ext);
}

/* fills L for a block collective whose dtype is known; INVALID_ARG for what the contract
 * forbids (include/ucoll.h) */
static ucoll_status_t block_layout(const ucoll_comm_t *comm, const coll_args_t *a, size_t e,
                                   layout_t *L)
{
    const struct block_rule *rule = rule_of(a->coll);
    const int p = comm->size, r = comm->rank, at_root = r == a->root;
    const size_t c = a->count;
    size_t pc = 0, cb = 0, pcb = 0, total;
    memset(L, 0, sizeof(*L));
    L->in_place = a->sendbuf == UCOLL_IN_PLACE;
    if (L->in_place && (rule->in_place == IP_NONE || (rule->in_place == IP_ROOT && !at_root)))
        return UCOLL_ERR_INVALID_ARG;
    if (a->recvbuf == UCOLL_IN_PLACE && !(rule->recv_in_place && at_root))
        return UCOLL_ERR_INVALID_ARG;
    L->out_scratch = a->recvbuf == UCOLL_IN_PLACE;
    /* c, p*c elements and their bytes: checked only where the call uses them (MPI ignores a v
     * form's count where its arrays say everything, and so must every rank alike) */
    const int c_fits = bytes_of(c, e, &cb) == 0;
    const int pc_fits =
        c_fits && !__builtin_mul_overflow(c, (size_t)p, &pc) && bytes_of(pc, e, &pcb) == 0;
    L->count = L->select_count = c;
    L->empty = c == 0;
    switch (a->coll) {
    case UCOLL_COLL_ALLGATHER:
        if (!pc_fits)
            return UCOLL_ERR_INVALID_ARG;
        L->send_ext = L->in_place ? 0 : cb;
        L->recv_ext = L->out_bytes = pcb;
        L->in_bytes = cb;
        L->in_src_off = (size_t)r * cb;
        break;
    case UCOLL_COLL_ALLGATHERV:
        if (a->recv_counts == NULL || a->recv_displs == NULL || sum_of(a->recv_counts, p, &total) ||
            extent_of(a->recv_counts, a->recv_displs, p, e, &L->recv_ext))
            return UCOLL_ERR_INVALID_ARG;
        if (!L->in_place && c != a->recv_counts[r])
            return UCOLL_ERR_INVALID_ARG;
        L->count = a->recv_counts[r];
        L->select_count = total / (size_t)p + (total % (size_t)p != 0);
        L->empty = total == 0;
        L->in_bytes = L->count * e; /* within recv_ext: no overflow */
        L->send_ext = L->in_place ? 0 : L->in_bytes;
        L->out_bytes = L->recv_ext;
        L->in_src_off = a->recv_counts[r] ? a->recv_displs[r] * e : 0;
        L->recv_counts = a->recv_counts;
        L->recv_displs = a->recv_displs;
        break;
    case UCOLL_COLL_REDUCE_SCATTER_BLOCK:
        if (!pc_fits)
            return UCOLL_ERR_INVALID_ARG;
        L->send_ext = L->in_place ? 0 : pcb;
        L->recv_ext = L->in_place ? pcb : cb;
        L->in_bytes = pcb;
        L->out_bytes = cb;
        break;
    case UCOLL_COLL_REDUCE_SCATTER:
        if (a->recv_counts == NULL || sum_of(a->recv_counts, p, &total) ||
            bytes_of(total, e, &L->in_bytes))
            return UCOLL_ERR_INVALID_ARG;
        L->count = a->recv_counts[r];
        L->select_count = total / (size_t)p + (total % (size_t)p != 0);
        L->empty = total == 0;
        L->out_bytes = L->count * e;
        L->send_ext = L->in_place ? 0 : L->in_bytes;
        L->recv_ext = L->in_place ? L->in_bytes : L->out_bytes;
        L->recv_counts = a->recv_counts;
        break;
    case UCOLL_COLL_ALLTOALL:
        if (!pc_fits)
            return UCOLL_ERR_INVALID_ARG;
        L->send_ext = L->in_place ? 0 : pcb;
        L->recv_ext = L->in_bytes = L->out_bytes = pcb;
        break;
    case UCOLL_COLL_ALLTOALLV:
        if (a->recv_counts == NULL || a->recv_displs == NULL ||
            extent_of(a->recv_counts, a->recv_displs, p, e, &L->recv_ext))
            return UCOLL_ERR_INVALID_ARG;
        L->recv_counts = a->recv_counts;
        L->recv_displs = a->recv_displs;
        if (L->in_place) { /* the input is laid out as the output */
            L->send_counts = a->recv_counts;
            L->send_displs = a->recv_displs;
            L->in_bytes = L->recv_ext;
        } else {
            if (a->send_counts == NULL || a->send_displs == NULL ||
                extent_of(a->send_counts, a->send_displs, p, e, &L->send_ext) ||
                a->send_counts[r] != a->recv_counts[r])
                return UCOLL_ERR_INVALID_ARG;
            L->send_counts = a->send_counts;
            L->send_displs = a->send_displs;
            L->in_bytes = L->send_ext;
        }
        L->out_bytes = L->recv_ext;
        L->count = L->select_count = 0; /* no rank knows every count */
        L->empty = 0;
        break;
    case UCOLL_COLL_GATHER:
        if (!(at_root ? pc_fits : c_fits)) /* p*c is the root's alone */
            return UCOLL_ERR_INVALID_ARG;
        L->send_ext = L->in_place ? 0 : cb;
        L->in_bytes = cb;
        L->recv_ext = L->out_bytes = at_root ? pcb : 0;
        L->no_out = !at_root;
        L->in_src_off = (size_t)r * cb;
        break;
    case UCOLL_COLL_GATHERV:
        if (!at_root && !c_fits) /* at the root the arrays say everything */
            return UCOLL_ERR_INVALID_ARG;
        if (at_root) {
            if (a->recv_counts == NULL || a->recv_displs == NULL ||
                extent_of(a->recv_counts, a->recv_displs, p, e, &L->recv_ext))
                return UCOLL_ERR_INVALID_ARG;
            if (!L->in_place && c != a->recv_counts[r])
                return UCOLL_ERR_INVALID_ARG;
            L->count = a->recv_counts[r];
            L->out_bytes = L->recv_ext;
            L->in_src_off = L->count ? a->recv_displs[r] * e : 0;
            L->recv_counts = a->recv_counts;
            L->recv_displs = a->recv_displs;
        }
        L->no_out = !at_root;
        L->in_bytes = L->count * e; /* c: cb; the root's own block: within recv_ext */
        L->send_ext = L->in_place ? 0 : L->in_bytes;
        L->select_count = 0; /* only the root knows the counts */
        L->empty = 0;
        break;
    case UCOLL_COLL_SCATTER:
        if (!(at_root ? pc_fits : c_fits)) /* p*c is the root's alone */
            return UCOLL_ERR_INVALID_ARG;
        L->send_ext = L->in_bytes = at_root ? pcb : 0;
        L->no_in = !at_root;
        L->out_bytes = cb;
        L->recv_ext = L->out_scratch ? 0 : cb;
        break;
    case UCOLL_COLL_SCATTERV:
        if (!at_root && !c_fits) /* at the root the arrays say everything */
            return UCOLL_ERR_INVALID_ARG;
        if (at_root) {
            if (a->send_counts == NULL || a->send_displs == NULL ||
                extent_of(a->send_counts, a->send_displs, p, e, &L->send_ext))
                return UCOLL_ERR_INVALID_ARG;
            if (!L->out_scratch && c != a->send_counts[r])
                return UCOLL_ERR_INVALID_ARG;
            L->count = a->send_counts[r];
            L->in_bytes = L->send_ext;
            L->send_counts = a->send_counts;
            L->send_displs = a->send_displs;
        }
        L->no_in = !at_root;
        L->out_bytes = L->count * e; /* c: cb; the root's own block: within send_ext */
        L->recv_ext = L->out_scratch ? 0 : L->out_bytes;
        L->select_count = 0; /* only the root knows the counts */
        L->empty = 0;
        break;
    default:
        return UCOLL_ERR_INVALID_ARG;
    }
    return UCOLL_OK;
}

static ucoll_status_t check_block_args(const ucoll_comm_t *comm, const coll_args_t *a, layout_t *L)
{
    const struct block_rule *rule = rule_of(a->coll);
    const size_t e = dtype_size(a->dtype);
    ucoll_status_t st;
    if (e == 0)
        return UCOLL_ERR_INVALID_ARG;
    if (rule->rooted && (a->root < 0 || a->root >= comm->size))
        return UCOLL_ERR_INVALID_ARG;
    if (rule->reduces && (st = op_check_coll(a->coll, a->op, a->dtype)) != UCOLL_OK)
        return st;
    if ((st = block_layout(comm, a, e, L)) != UCOLL_OK)
        return st;
    if (L->send_ext > 0 && a->sendbuf == NULL)
        return UCOLL_ERR_INVALID_ARG;
    if (L->recv_ext > 0 && a->recvbuf == NULL)
        return UCOLL_ERR_INVALID_ARG;
    /* a schedule may read sendbuf after it has written recvbuf */
    if (L->send_ext > 0 && L->recv_ext > 0) {
        const uintptr_t s = (uintptr_t)a->sendbuf, r = (uintptr_t)a->recvbuf;
        if (s < r + L->recv_ext && r < s + L->send_ext)
            return UCOLL_ERR_INVALID_ARG;
    }
    return UCOLL_OK;
}

/* check_args, and for every collective the layout of the call */
static ucoll_status_t check_call(const ucoll_comm_t *comm, const coll_args_t *a, layout_t *L)
{
    if (__builtin_expect(is_block(a->coll), 0)) {
        ucoll_status_t st = check_comm(comm);
        return st != UCOLL_OK ? st : check_block_args(comm, a, L);
    }
    L->empty = a->coll != UCOLL_COLL_BARRIER && a->count == 0;
    return check_args(comm, a);
}

/* what the schedule of a call depends on (the count arrays NULL where there are none) */
static void sched_args_fill(const ucoll_comm_t *comm, const coll_args_t *a, const layout_t *L,
                            int param, sched_args_t *sa)
{
    if (__builtin_expect(is_block(a->coll), 0)) {
        memset(sa, 0, sizeof(*sa));
        sa->rank = comm->rank;
        sa->size = comm->size;
        sa->root = rule_of(a->coll)->rooted ? a->root : 0;
        sa->count = L->count;
        sa->elem_size = dtype_size(a->dtype);
        sa->param = param;
        sa->commutative = !rule_of(a->coll)->reduces || op_is_commutative(a->op);
        sa->send_counts = L->send_counts;
        sa->send_displs = L->send_displs;
        sa->recv_counts = L->recv_counts;
        sa->recv_displs = L->recv_displs;
        return;
    }
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

static void sched_args_of(const ucoll_comm_t *comm, const coll_args_t *a, const layout_t *L,
                          int param, const leaders_choice_t *leaders, sched_args_t *sa)
{
    sched_args_fill(comm, a, L, param, sa);
    if (leaders->leaders != NULL) /* a node-aware form (select_algorithm read the hosts) */
        cost_plan_args(leaders, comm->hosts, sa);
}

static int same_counts(const size_t *x, const size_t *y, int p)
{
    return x == NULL || y == NULL ? x == y : memcmp(x, y, (size_t)p * sizeof(*x)) == 0;
}

/* every field of sched_args_t but the count arrays */
static int same_scalars(const sched_args_t *x, const sched_args_t *y)
{
    return x->rank == y->rank && x->size == y->size && x->root == y->root && x->count == y->count &&
           x->elem_size == y->elem_size && x->param == y->param &&
           x->commutative == y->commutative && x->hosts == y->hosts &&
           x->leaders_build == y->leaders_build && x->leaders_param == y->leaders_param &&
           x->local_reduce_build == y->local_reduce_build &&
           x->local_bcast_build == y->local_bcast_build;
}

/* the v forms: a request's arrays are its own copies, so their contents are compared */
static int same_v_schedule(const sched_args_t *x, const sched_args_t *y)
{
    return same_counts(x->send_counts, y->send_counts, x->size) &&
           same_counts(x->send_displs, y->send_displs, x->size) &&
           same_counts(x->recv_counts, y->recv_counts, x->size) &&
           same_counts(x->recv_displs, y->recv_displs, x->size);
}

static int same_schedule(const ucoll_request_t *req, const alg_desc_t *alg, const sched_args_t *sa)
{
    if (!req->sched_valid || req->alg != alg || !same_scalars(sa, &req->sched_args))
        return 0;
    const sched_args_t *r = &req->sched_args;
    if (sa->send_counts == r->send_counts && sa->send_displs == r->send_displs &&
        sa->recv_counts == r->recv_counts && sa->recv_displs == r->recv_displs)
        return 1; /* (both without count arrays: a copy's address never equals the caller's) */
    return (sa->send_counts != NULL || sa->recv_counts != NULL) && same_v_schedule(sa, r);
}

/* the request's own copy of sa's count arrays, sched_args pointing into it (vcounts has room
 * for four) */
static void copy_counts(ucoll_request_t *req, const sched_args_t *sa)
{
    const size_t *from[4] = {sa->send_counts, sa->send_displs, sa->recv_counts, sa->recv_displs};
    const size_t **to[4] = {&req->sched_args.send_counts, &req->sched_args.send_displs,
                            &req->sched_args.recv_counts, &req->sched_args.recv_displs};
    const size_t p = (size_t)sa->size;
    for (int i = 0; i < 4; i++)
        if (from[i] != NULL) {
            memcpy(req->vcounts + (size_t)i * p, from[i], p * sizeof(size_t));
            *to[i] = req->vcounts + (size_t)i * p;
        }
}

/* the block collectives' view of the buffers (exec.c maps them) */
static void set_block_layout(ucoll_request_t *req, const layout_t *L)
{
    req->in_place = L->in_place || L->out_scratch;
    req->in_bytes = L->in_bytes;
    req->out_bytes = L->out_bytes;
    req->in_src_off = L->in_src_off;
    req->no_in = L->no_in;
    req->no_out = L->no_out;
    req->out_scratch = L->out_scratch;
}

/* fills req from validated arguments; keeps its schedule when nothing it depends on changed
 * (same: same_schedule(req, alg, sa), already known). Fails (NO_MEMORY, req unchanged) only where
 * count arrays are copied. */
static ucoll_status_t setup_request(ucoll_request_t *req, ucoll_comm_t *comm, const coll_args_t *a,
                                    const layout_t *L, const alg_desc_t *alg, int param,
                                    const sched_args_t *sa, int same)
{
    if (!same && (sa->send_counts != NULL || sa->recv_counts != NULL)) {
        const size_t p = (size_t)sa->size;
        if (req->vcounts_cap < 4 * p) { /* before anything changes */
            size_t *v = realloc(req->vcounts, 4 * p * sizeof(*v));
            if (v == NULL)
                return UCOLL_ERR_NO_MEMORY;
            req->vcounts = v;
            req->vcounts_cap = 4 * p;
        }
    }
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
    req->empty = L->empty;
    if (__builtin_expect(is_block(a->coll), 0)) {
        set_block_layout(req, L);
        if (!same) { /* (equal contents otherwise: the copy stays) */
            req->sched_args = *sa;
            copy_counts(req, sa);
        }
        return UCOLL_OK;
    }
    req->sched_args = *sa;
    return UCOLL_OK;
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

/* comm->blocking[pick] for this call, moved to the front; hit: it already holds the call's
 * schedule. The pool lends the holder's scratch to the next request that needs scratch. */
static ucoll_request_t *claim_blocking(ucoll_comm_t *comm, int pick, int hit, int in_place)
{
    ucoll_request_t *req = comm->blocking[pick];
    if (comm->scratch_holder != req && (!hit || in_place || needs_scratch(&req->sched))) {
        if (comm->scratch_holder != NULL && !in_use(comm->scratch_holder))
            exec_release_scratch(comm->scratch_holder);
        comm->scratch_holder = req;
    }
    if (pick == 1) /* (two calls taking turns: no memmove call) */
        comm->blocking[1] = comm->blocking[0];
    else
        memmove(&comm->blocking[1], &comm->blocking[0], (size_t)pick * sizeof(req));
    comm->blocking[0] = req;
    return req;
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
    return claim_blocking(comm, pick, hit, in_place);
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
static int trivially_done(const ucoll_comm_t *comm, const layout_t *L)
{
    return L->empty && !comm_checks(comm);
}

/* the op a call holds while it runs: the reducing ones' */
static int holds_op_of(ucoll_coll_t coll)
{
    if (__builtin_expect(is_block(coll), 0))
        return rule_of(coll)->reduces;
    return coll != UCOLL_COLL_BCAST && coll != UCOLL_COLL_BARRIER;
}

/* A blocking call whose arguments are those a cached request last ran with (its fields hold
 * them: setup_request wrote them, and nothing else does), for a predefined op or none, where
 * that request holds its built schedule: check_call passed for them then and is a pure function
 * of them (a predefined op and a dtype never change, nor do the comm's rank and size), and
 * setup_request would change nothing. The vector collectives only: a block collective's count
 * arrays may hold other counts at the same addresses. NULL: the full path. */
static ucoll_request_t *repeated_call(const ucoll_comm_t *comm, const coll_args_t *a)
{
    if (comm == NULL || comm->magic != COMM_MAGIC || is_block(a->coll) ||
        (holds_op_of(a->coll) && !predefined_op(a->op)))
        return NULL;
    const int rooted = a->coll == UCOLL_COLL_REDUCE || a->coll == UCOLL_COLL_BCAST;
    const size_t count = a->coll == UCOLL_COLL_BARRIER ? 0 : a->count;
    for (int i = 0; i < COMM_BLOCKING_CACHE && comm->blocking[i] != NULL; i++) {
        ucoll_request_t *req = comm->blocking[i];
        if (req->coll == a->coll && req->sendbuf == a->sendbuf && req->recvbuf == a->recvbuf &&
            req->count == count && req->dtype == a->dtype && req->op == a->op &&
            req->root == (rooted ? a->root : 0) && req->sched_valid && !req->empty)
            return req;
    }
    return NULL;
}

/* whether a's node-aware fields are plan's (both flat included) */
static int same_plan(const node_aware_plan_t *plan, const sched_args_t *a)
{
    sched_args_t x;
    memset(&x, 0, sizeof(x));
    if (plan->leaders != NULL)
        cost_plan_args(plan, a->hosts, &x);
    return x.leaders_build == a->leaders_build && x.leaders_param == a->leaders_param &&
           x.local_reduce_build == a->local_reduce_build &&
           x.local_bcast_build == a->local_bcast_build;
}

/* repeated_call's request for this call, moved to the front as blocking_request moves a hit,
 * if it is free and selection picks the algorithm it holds; NULL: the full path */
static ucoll_request_t *repeated_request(ucoll_comm_t *comm, ucoll_request_t *req,
                                         const coll_args_t *a, int in_place)
{
    const struct auto_choice *last;
    if (in_use(req) || (last = select_repeats(comm, a->coll, a->op, a->dtype, a->count)) == NULL ||
        last->alg != req->alg || last->param != req->param ||
        !same_plan(&last->leaders, &req->sched_args))
        return NULL;
    int pick = 0;
    while (comm->blocking[pick] != req)
        pick++;
    return claim_blocking(comm, pick, 1, in_place);
}

/* the elements auto decides by (layout_t) */
static size_t select_count_of(const coll_args_t *a, const layout_t *L)
{
    return is_block(a->coll) ? L->select_count : a->count;
}

static void request_destroy(ucoll_request_t *req)
{
    sched_destroy(&req->sched);
    free(req->vcounts);
    free(req);
}

static ucoll_status_t run_blocking_locked(ucoll_comm_t *comm, const coll_args_t *a)
{
    layout_t L;
    ucoll_request_t *again = repeated_call(comm, a);
    ucoll_status_t st = UCOLL_OK;
    if (again != NULL)
        L.empty = 0; /* all check_call would tell a vector collective (req->empty is 0) */
    else
        st = check_call(comm, a, &L);
    if (st != UCOLL_OK || (st = exec_may_start(comm)) != UCOLL_OK)
        return st; /* (before progress could make ranks disagree about the window) */
    if (comm->ctx->active != NULL) {
        ctx_progress(comm->ctx); /* let outstanding nonblocking collectives move */
        if (comm->revoked)
            return UCOLL_ERR_STATE; /* one of them failed on this comm just now */
    }
    if (trivially_done(comm, &L)) {
        comm->seq++;
        return UCOLL_OK;
    }
    /* (scatter's root with recvbuf IN_PLACE: OUT is scratch) */
    const int scratch_io = a->sendbuf == UCOLL_IN_PLACE || a->recvbuf == UCOLL_IN_PLACE;
    ucoll_request_t *req = again != NULL ? repeated_request(comm, again, a, scratch_io) : NULL;
    /* (a predefined op cannot be freed: no hold; a repeated call has none) */
    const int holds_op = holds_op_of(a->coll) && !predefined_op(a->op);
    if (req == NULL) {
        const alg_desc_t *alg;
        int param;
        leaders_choice_t leaders;
        if ((st = select_algorithm(comm, a->coll, a->op, a->dtype, select_count_of(a, &L), &alg,
                                   &param, &leaders)) != 0)
            return st;
        sched_args_t sa;
        sched_args_of(comm, a, &L, param, &leaders, &sa);
        int same;
        req = blocking_request(comm, alg, &sa, scratch_io, &same);
        if (req == NULL)
            return UCOLL_ERR_NO_MEMORY;
        if (holds_op && !op_hold(a->op)) /* freed by another thread since check_args */
            return UCOLL_ERR_INVALID_ARG;
        st = setup_request(req, comm, a, &L, alg, param, &sa, same);
    }
    if (st == UCOLL_OK) {
        req->owned = 1;
        if ((st = exec_start(req)) == UCOLL_OK)
            st = request_wait(req);
        req->owned = 0;
    }
    if (holds_op)
        op_release(a->op);
    if (outside_cache(req)) {
        exec_release(req);
        request_destroy(req);
    }
    return st;
}

static ucoll_status_t new_request_locked(ucoll_comm_t *comm, const coll_args_t *a, int persistent,
                                         ucoll_request_t **out)
{
    if (out == NULL)
        return UCOLL_ERR_INVALID_ARG;
    layout_t L;
    ucoll_status_t st = check_call(comm, a, &L);
    if (st != UCOLL_OK)
        return st;
    if (comm->revoked || (!persistent && (st = exec_may_start(comm)) != UCOLL_OK))
        return UCOLL_ERR_STATE;
    const alg_desc_t *alg;
    int param;
    leaders_choice_t leaders;
    if ((st = select_algorithm(comm, a->coll, a->op, a->dtype, select_count_of(a, &L), &alg, &param,
                               &leaders)) != 0)
        return st;
    /* held before anything runs, until ucoll_request_free: the op cannot be freed under it */
    const int holds_op = holds_op_of(a->coll);
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
    sched_args_of(comm, a, &L, param, &leaders, &sa);
    if ((st = setup_request(req, comm, a, &L, alg, param, &sa, 0)) != UCOLL_OK) {
        if (holds_op)
            op_release(a->op);
        request_destroy(req);
        return st;
    }
    req->persistent = persistent;
    req->status = UCOLL_OK;
    if (persistent) {
        /* built and registered once; every start reuses them without allocating */
        if ((st = exec_register_user_buffers(req)) != UCOLL_OK ||
            (st = exec_prepare(req)) != UCOLL_OK) {
            if (holds_op)
                op_release(a->op);
            exec_release(req);
            request_destroy(req);
            return st;
        }
    } else {
        if (trivially_done(comm, &L)) {
            comm->seq++;
        } else if ((st = exec_start(req)) != UCOLL_OK) {
            if (holds_op)
                op_release(a->op);
            exec_release(req);
            request_destroy(req);
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
        .coll = (c), .sendbuf = (s), .recvbuf = (r), .count = (n), .dtype = (d), .op = (o),        \
        .root = (rt)                                                                               \
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

/* the block collectives: the op of those that do not reduce is never used (SUM: commutative) */
UCOLL_EXPORT ucoll_status_t ucoll_allgather(ucoll_comm_t *comm, const void *sendbuf, void *recvbuf,
                                            size_t count, ucoll_dtype_t dtype)
{
    coll_args_t a = ARGS(UCOLL_COLL_ALLGATHER, sendbuf, recvbuf, count, dtype, UCOLL_OP_SUM, 0);
    return run_blocking(comm, &a);
}

UCOLL_EXPORT ucoll_status_t ucoll_allgatherv(ucoll_comm_t *comm, const void *sendbuf,
                                             size_t sendcount, void *recvbuf,
                                             const size_t *recvcounts, const size_t *displs,
                                             ucoll_dtype_t dtype)
{
    coll_args_t a =
        ARGS(UCOLL_COLL_ALLGATHERV, sendbuf, recvbuf, sendcount, dtype, UCOLL_OP_SUM, 0);
    a.recv_counts = recvcounts;
    a.recv_displs = displs;
    return run_blocking(comm, &a);
}

UCOLL_EXPORT ucoll_status_t ucoll_reduce_scatter_block(ucoll_comm_t *comm, const void *sendbuf,
                                                       void *recvbuf, size_t recvcount,
                                                       ucoll_dtype_t dtype, ucoll_op_t op)
{
    coll_args_t a =
        ARGS(UCOLL_COLL_REDUCE_SCATTER_BLOCK, sendbuf, recvbuf, recvcount, dtype, op, 0);
    return run_blocking(comm, &a);
}

UCOLL_EXPORT ucoll_status_t ucoll_reduce_scatter(ucoll_comm_t *comm, const void *sendbuf,
                                                 void *recvbuf, const size_t *recvcounts,
                                                 ucoll_dtype_t dtype, ucoll_op_t op)
{
    coll_args_t a = ARGS(UCOLL_COLL_REDUCE_SCATTER, sendbuf, recvbuf, 0, dtype, op, 0);
    a.recv_counts = recvcounts;
    return run_blocking(comm, &a);
}

UCOLL_EXPORT ucoll_status_t ucoll_alltoall(ucoll_comm_t *comm, const void *sendbuf, void *recvbuf,
                                           size_t count, ucoll_dtype_t dtype)
{
    coll_args_t a = ARGS(UCOLL_COLL_ALLTOALL, sendbuf, recvbuf, count, dtype, UCOLL_OP_SUM, 0);
    return run_blocking(comm, &a);
}

UCOLL_EXPORT ucoll_status_t ucoll_alltoallv(ucoll_comm_t *comm, const void *sendbuf,
                                            const size_t *sendcounts, const size_t *sdispls,
                                            void *recvbuf, const size_t *recvcounts,
                                            const size_t *rdispls, ucoll_dtype_t dtype)
{
    coll_args_t a = ARGS(UCOLL_COLL_ALLTOALLV, sendbuf, recvbuf, 0, dtype, UCOLL_OP_SUM, 0);
    a.send_counts = sendcounts;
    a.send_displs = sdispls;
    a.recv_counts = recvcounts;
    a.recv_displs = rdispls;
    return run_blocking(comm, &a);
}

UCOLL_EXPORT ucoll_status_t ucoll_gather(ucoll_comm_t *comm, const void *sendbuf, void *recvbuf,
                                         size_t count, ucoll_dtype_t dtype, int root)
{
    coll_args_t a = ARGS(UCOLL_COLL_GATHER, sendbuf, recvbuf, count, dtype, UCOLL_OP_SUM, root);
    return run_blocking(comm, &a);
}

UCOLL_EXPORT ucoll_status_t ucoll_gatherv(ucoll_comm_t *comm, const void *sendbuf, size_t sendcount,
                                          void *recvbuf, const size_t *recvcounts,
                                          const size_t *displs, ucoll_dtype_t dtype, int root)
{
    coll_args_t a =
        ARGS(UCOLL_COLL_GATHERV, sendbuf, recvbuf, sendcount, dtype, UCOLL_OP_SUM, root);
    a.recv_counts = recvcounts;
    a.recv_displs = displs;
    return run_blocking(comm, &a);
}

UCOLL_EXPORT ucoll_status_t ucoll_scatter(ucoll_comm_t *comm, const void *sendbuf, void *recvbuf,
                                          size_t count, ucoll_dtype_t dtype, int root)
{
    coll_args_t a = ARGS(UCOLL_COLL_SCATTER, sendbuf, recvbuf, count, dtype, UCOLL_OP_SUM, root);
    return run_blocking(comm, &a);
}

UCOLL_EXPORT ucoll_status_t ucoll_scatterv(ucoll_comm_t *comm, const void *sendbuf,
                                           const size_t *sendcounts, const size_t *displs,
                                           void *recvbuf, size_t recvcount, ucoll_dtype_t dtype,
                                           int root)
{
    coll_args_t a =
        ARGS(UCOLL_COLL_SCATTERV, sendbuf, recvbuf, recvcount, dtype, UCOLL_OP_SUM, root);
    a.send_counts = sendcounts;
    a.send_displs = displs;
    return run_blocking(comm, &a);
}

UCOLL_EXPORT ucoll_status_t ucoll_iallgather(ucoll_comm_t *comm, const void *sendbuf, void *recvbuf,
                                             size_t count, ucoll_dtype_t dtype,
                                             ucoll_request_t **req)
{
    coll_args_t a = ARGS(UCOLL_COLL_ALLGATHER, sendbuf, recvbuf, count, dtype, UCOLL_OP_SUM, 0);
    return new_request(comm, &a, 0, req);
}

UCOLL_EXPORT ucoll_status_t ucoll_iallgatherv(ucoll_comm_t *comm, const void *sendbuf,
                                              size_t sendcount, void *recvbuf,
                                              const size_t *recvcounts, const size_t *displs,
                                              ucoll_dtype_t dtype, ucoll_request_t **req)
{
    coll_args_t a =
        ARGS(UCOLL_COLL_ALLGATHERV, sendbuf, recvbuf, sendcount, dtype, UCOLL_OP_SUM, 0);
    a.recv_counts = recvcounts;
    a.recv_displs = displs;
    return new_request(comm, &a, 0, req);
}

UCOLL_EXPORT ucoll_status_t ucoll_ireduce_scatter_block(ucoll_comm_t *comm, const void *sendbuf,
                                                        void *recvbuf, size_t recvcount,
                                                        ucoll_dtype_t dtype, ucoll_op_t op,
                                                        ucoll_request_t **req)
{
    coll_args_t a =
        ARGS(UCOLL_COLL_REDUCE_SCATTER_BLOCK, sendbuf, recvbuf, recvcount, dtype, op, 0);
    return new_request(comm, &a, 0, req);
}

UCOLL_EXPORT ucoll_status_t ucoll_ireduce_scatter(ucoll_comm_t *comm, const void *sendbuf,
                                                  void *recvbuf, const size_t *recvcounts,
                                                  ucoll_dtype_t dtype, ucoll_op_t op,
                                                  ucoll_request_t **req)
{
    coll_args_t a = ARGS(UCOLL_COLL_REDUCE_SCATTER, sendbuf, recvbuf, 0, dtype, op, 0);
    a.recv_counts = recvcounts;
    return new_request(comm, &a, 0, req);
}

UCOLL_EXPORT ucoll_status_t ucoll_ialltoall(ucoll_comm_t *comm, const void *sendbuf, void *recvbuf,
                                            size_t count, ucoll_dtype_t dtype,
                                            ucoll_request_t **req)
{
    coll_args_t a = ARGS(UCOLL_COLL_ALLTOALL, sendbuf, recvbuf, count, dtype, UCOLL_OP_SUM, 0);
    return new_request(comm, &a, 0, req);
}

UCOLL_EXPORT ucoll_status_t ucoll_ialltoallv(ucoll_comm_t *comm, const void *sendbuf,
                                             const size_t *sendcounts, const size_t *sdispls,
                                             void *recvbuf, const size_t *recvcounts,
                                             const size_t *rdispls, ucoll_dtype_t dtype,
                                             ucoll_request_t **req)
{
    coll_args_t a = ARGS(UCOLL_COLL_ALLTOALLV, sendbuf, recvbuf, 0, dtype, UCOLL_OP_SUM, 0);
    a.send_counts = sendcounts;
    a.send_displs = sdispls;
    a.recv_counts = recvcounts;
    a.recv_displs = rdispls;
    return new_request(comm, &a, 0, req);
}

UCOLL_EXPORT ucoll_status_t ucoll_igather(ucoll_comm_t *comm, const void *sendbuf, void *recvbuf,
                                          size_t count, ucoll_dtype_t dtype, int root,
                                          ucoll_request_t **req)
{
    coll_args_t a = ARGS(UCOLL_COLL_GATHER, sendbuf, recvbuf, count, dtype, UCOLL_OP_SUM, root);
    return new_request(comm, &a, 0, req);
}

UCOLL_EXPORT ucoll_status_t ucoll_igatherv(ucoll_comm_t *comm, const void *sendbuf,
                                           size_t sendcount, void *recvbuf,
                                           const size_t *recvcounts, const size_t *displs,
                                           ucoll_dtype_t dtype, int root, ucoll_request_t **req)
{
    coll_args_t a =
        ARGS(UCOLL_COLL_GATHERV, sendbuf, recvbuf, sendcount, dtype, UCOLL_OP_SUM, root);
    a.recv_counts = recvcounts;
    a.recv_displs = displs;
    return new_request(comm, &a, 0, req);
}

UCOLL_EXPORT ucoll_status_t ucoll_iscatter(ucoll_comm_t *comm, const void *sendbuf, void *recvbuf,
                                           size_t count, ucoll_dtype_t dtype, int root,
                                           ucoll_request_t **req)
{
    coll_args_t a = ARGS(UCOLL_COLL_SCATTER, sendbuf, recvbuf, count, dtype, UCOLL_OP_SUM, root);
    return new_request(comm, &a, 0, req);
}

UCOLL_EXPORT ucoll_status_t ucoll_iscatterv(ucoll_comm_t *comm, const void *sendbuf,
                                            const size_t *sendcounts, const size_t *displs,
                                            void *recvbuf, size_t recvcount, ucoll_dtype_t dtype,
                                            int root, ucoll_request_t **req)
{
    coll_args_t a =
        ARGS(UCOLL_COLL_SCATTERV, sendbuf, recvbuf, recvcount, dtype, UCOLL_OP_SUM, root);
    a.send_counts = sendcounts;
    a.send_displs = displs;
    return new_request(comm, &a, 0, req);
}

UCOLL_EXPORT ucoll_status_t ucoll_allgather_init(ucoll_comm_t *comm, const void *sendbuf,
                                                 void *recvbuf, size_t count, ucoll_dtype_t dtype,
                                                 ucoll_request_t **req)
{
    coll_args_t a = ARGS(UCOLL_COLL_ALLGATHER, sendbuf, recvbuf, count, dtype, UCOLL_OP_SUM, 0);
    return new_request(comm, &a, 1, req);
}

UCOLL_EXPORT ucoll_status_t ucoll_allgatherv_init(ucoll_comm_t *comm, const void *sendbuf,
                                                  size_t sendcount, void *recvbuf,
                                                  const size_t *recvcounts, const size_t *displs,
                                                  ucoll_dtype_t dtype, ucoll_request_t **req)
{
    coll_args_t a =
        ARGS(UCOLL_COLL_ALLGATHERV, sendbuf, recvbuf, sendcount, dtype, UCOLL_OP_SUM, 0);
    a.recv_counts = recvcounts;
    a.recv_displs = displs;
    return new_request(comm, &a, 1, req);
}

UCOLL_EXPORT ucoll_status_t ucoll_reduce_scatter_block_init(ucoll_comm_t *comm, const void *sendbuf,
                                                            void *recvbuf, size_t recvcount,
                                                            ucoll_dtype_t dtype, ucoll_op_t op,
                                                            ucoll_request_t **req)
{
    coll_args_t a =
        ARGS(UCOLL_COLL_REDUCE_SCATTER_BLOCK, sendbuf, recvbuf, recvcount, dtype, op, 0);
    return new_request(comm, &a, 1, req);
}

UCOLL_EXPORT ucoll_status_t ucoll_reduce_scatter_init(ucoll_comm_t *comm, const void *sendbuf,
                                                      void *recvbuf, const size_t *recvcounts,
                                                      ucoll_dtype_t dtype, ucoll_op_t op,
                                                      ucoll_request_t **req)
{
    coll_args_t a = ARGS(UCOLL_COLL_REDUCE_SCATTER, sendbuf, recvbuf, 0, dtype, op, 0);
    a.recv_counts = recvcounts;
    return new_request(comm, &a, 1, req);
}

UCOLL_EXPORT ucoll_status_t ucoll_alltoall_init(ucoll_comm_t *comm, const void *sendbuf,
                                                void *recvbuf, size_t count, ucoll_dtype_t dtype,
                                                ucoll_request_t **req)
{
    coll_args_t a = ARGS(UCOLL_COLL_ALLTOALL, sendbuf, recvbuf, count, dtype, UCOLL_OP_SUM, 0);
    return new_request(comm, &a, 1, req);
}

UCOLL_EXPORT ucoll_status_t ucoll_alltoallv_init(ucoll_comm_t *comm, const void *sendbuf,
                                                 const size_t *sendcounts, const size_t *sdispls,
                                                 void *recvbuf, const size_t *recvcounts,
                                                 const size_t *rdispls, ucoll_dtype_t dtype,
                                                 ucoll_request_t **req)
{
    coll_args_t a = ARGS(UCOLL_COLL_ALLTOALLV, sendbuf, recvbuf, 0, dtype, UCOLL_OP_SUM, 0);
    a.send_counts = sendcounts;
    a.send_displs = sdispls;
    a.recv_counts = recvcounts;
    a.recv_displs = rdispls;
    return new_request(comm, &a, 1, req);
}

UCOLL_EXPORT ucoll_status_t ucoll_gather_init(ucoll_comm_t *comm, const void *sendbuf,
                                              void *recvbuf, size_t count, ucoll_dtype_t dtype,
                                              int root, ucoll_request_t **req)
{
    coll_args_t a = ARGS(UCOLL_COLL_GATHER, sendbuf, recvbuf, count, dtype, UCOLL_OP_SUM, root);
    return new_request(comm, &a, 1, req);
}

UCOLL_EXPORT ucoll_status_t ucoll_gatherv_init(ucoll_comm_t *comm, const void *sendbuf,
                                               size_t sendcount, void *recvbuf,
                                               const size_t *recvcounts, const size_t *displs,
                                               ucoll_dtype_t dtype, int root, ucoll_request_t **req)
{
    coll_args_t a =
        ARGS(UCOLL_COLL_GATHERV, sendbuf, recvbuf, sendcount, dtype, UCOLL_OP_SUM, root);
    a.recv_counts = recvcounts;
    a.recv_displs = displs;
    return new_request(comm, &a, 1, req);
}

UCOLL_EXPORT ucoll_status_t ucoll_scatter_init(ucoll_comm_t *comm, const void *sendbuf,
                                               void *recvbuf, size_t count, ucoll_dtype_t dtype,
                                               int root, ucoll_request_t **req)
{
    coll_args_t a = ARGS(UCOLL_COLL_SCATTER, sendbuf, recvbuf, count, dtype, UCOLL_OP_SUM, root);
    return new_request(comm, &a, 1, req);
}

UCOLL_EXPORT ucoll_status_t ucoll_scatterv_init(ucoll_comm_t *comm, const void *sendbuf,
                                                const size_t *sendcounts, const size_t *displs,
                                                void *recvbuf, size_t recvcount,
                                                ucoll_dtype_t dtype, int root,
                                                ucoll_request_t **req)
{
    coll_args_t a =
        ARGS(UCOLL_COLL_SCATTERV, sendbuf, recvbuf, recvcount, dtype, UCOLL_OP_SUM, root);
    a.send_counts = sendcounts;
    a.send_displs = displs;
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
    if (req->empty && !comm_checks(req->comm)) {
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
        exec_forget_callback(req);
        request_destroy(req);
        return UCOLL_OK;
    }
    if (st != UCOLL_OK)
        return st;
    if (req->active)
        return UCOLL_ERR_STATE;
    exec_forget_callback(req); /* freed before its callback ran: it never will */
    ucoll_request_t **p = &live_requests;
    while (*p != req)
        p = &(*p)->next_live;
    *p = req->next_live;
    exec_release(req);
    if (req->op_held)
        op_release(req->op);
    req->magic = 0;
    request_destroy(req);
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

ucoll_status_t coll_check_request(const ucoll_request_t *req)
{
    return check_request(req);
}
