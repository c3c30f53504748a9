/*
 * ucoll_comm_shrink's agreement: the members of a communicator that are still alive agree on
 * who is left and on the new communicator's id, while more of them may fail meanwhile.
 *
 * A member's coordinator is the lowest rank of the comm it has not found failed (the router
 * finds a peer failed once it talks to it: process gone, endpoint error; a send or receive
 * that ends in PEER_FAILED says the same).
 *  - Every member sends its coordinator a contribution: the members it found failed and the
 *    comm ids it uses. A member whose coordinator fails sends the next one its contribution.
 *  - The coordinator waits for a contribution from every member it has not found failed (one
 *    that fails meanwhile joins the failed set) and decides: failed = the union of every
 *    failed set and the members that sent nothing; id = the lowest id no contributor uses. It
 *    sends the decision to every contributor.
 *  - A decision, once made, is the only one. A member keeps its decision after the call returns
 *    (shrink_record_t, progressed with every later ucoll call): should its coordinator then
 *    fail, it contributes the decision itself to the next coordinator, or, being next, answers
 *    every contribution that comes to it with the decision. A coordinator that receives a
 *    decided contribution adopts that decision instead of making one.
 * Invariant: two members that return OK from one shrink hold the same decision (the first
 * coordinator to decide heard from every live member; any later one hears the decision from
 * every live member that holds it before it could decide anew).
 * Cost without failures during the call: 2 (p - 1) messages of 2 + 64 + ceil(p / 64) words, two
 * message latencies on the coordinator's path. Memory: O(p) bits and pointers per member, a
 * message buffer and an op per peer actually talked to (the coordinator: every member). After
 * the call, every TICK progress passes, O(1) work per record (O(p) while it answers).
 * Limits: 8 shrinks of one communicator (the messages' generation field; shrink the result),
 * and the id of a shrunk communicator stays taken until finalize (its record may still talk).
 */
#include "ucoll_int.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* message words: [0] DECIDED / NO_ID or 0 (a contribution), [1] the new comm's id, [2, 2 +
 * COMM_ID_WORDS) the ids the sender uses (contributions), then the failed members, a bit each */
enum { W_DECIDED = 0, W_ID = 1, W_USED = 2, W_FAILED = 2 + COMM_ID_WORDS };
enum { DECIDED = 1, NO_ID = 2 }; /* NO_ID: every comm id is taken (NOT_SUPPORTED everywhere) */

/* the records' checks run every TICK progress passes */
enum { TICK = 64 };

/* what this rank exchanges with one peer: one send and one receive at a time (a member sends a
 * given coordinator one message, a coordinator answers a member once) */
typedef struct {
    tp_op_t *send_op, *recv_op;
    uint64_t *send_buf, *recv_buf;
    int send_posted, recv_posted;
} peer_slot_t;

struct shrink_record {
    struct shrink_record *next;
    ucoll_ctx_t *ctx;
    int p, me;
    uint32_t comm_id;
    unsigned gen;
    int *wr; /* comm rank -> transport peer */
    size_t words;
    uint64_t *failed;    /* this rank's view: bit i = member i found failed */
    uint64_t *decision;  /* the decision's message (word W_DECIDED != 0 once there is one) */
    int coord;           /* the current coordinator in this rank's view */
    int answering;       /* after the call: this rank is coordinator and answers late members */
    int live;            /* takes part in later rounds (it holds a decision) */
    int nposted;         /* ops in flight */
    peer_slot_t **slots; /* per member, allocated on first use */
};

static size_t msg_words(int p)
{
    return W_FAILED + ((size_t)p + 63) / 64;
}

static int bit(const uint64_t *b, int i)
{
    return (int)(b[i / 64] >> (i % 64) & 1);
}

static void set_bit(uint64_t *b, int i)
{
    b[i / 64] |= UINT64_C(1) << (i % 64);
}

/* the tag of a message of this shrink from member src in coordinator coord's round: the
 * segment field's one value no collective's message carries, coord and the generation in the
 * sequence and round fields */
static uint64_t shrink_tag(const shrink_record_t *r, int src, int coord)
{
    const uint32_t v = (uint32_t)coord | (r->gen & 7u) << UCOLL_TAG_SOURCE_BITS;
    return ucoll_tag(r->comm_id, (uint32_t)src, v & ((1u << UCOLL_TAG_SEQ_BITS) - 1),
                     v >> UCOLL_TAG_SEQ_BITS, UCOLL_MAX_SEGMENTS, 1);
}

static size_t msg_bytes(const shrink_record_t *r)
{
    return r->words * sizeof(uint64_t);
}

/* peer i's slot; NULL: out of memory */
static peer_slot_t *slot(shrink_record_t *r, int i)
{
    if (r->slots[i] != NULL)
        return r->slots[i];
    peer_slot_t *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return NULL;
    s->send_op = tp_ops_resize(NULL, 1);
    s->recv_op = tp_ops_resize(NULL, 1);
    s->send_buf = malloc(msg_bytes(r));
    s->recv_buf = malloc(msg_bytes(r));
    if (s->send_op == NULL || s->recv_op == NULL || s->send_buf == NULL || s->recv_buf == NULL) {
        tp_ops_free(s->send_op);
        tp_ops_free(s->recv_op);
        free(s->send_buf);
        free(s->recv_buf);
        free(s);
        return NULL;
    }
    return r->slots[i] = s;
}

/* member i is failed in this rank's view (updating it from the router) */
static int member_failed(shrink_record_t *r, int i)
{
    if (!bit(r->failed, i) && tp_peer_failed(r->ctx->tp, r->wr[i]))
        set_bit(r->failed, i);
    return bit(r->failed, i);
}

static int lowest_alive(shrink_record_t *r)
{
    for (int i = 0; i < r->p; i++)
        if (!member_failed(r, i))
            return i;
    return r->me; /* (this rank is alive) */
}

/* the send to peer i ends (done or not: a failed peer's is let go) */
static void end_send(shrink_record_t *r, int i)
{
    peer_slot_t *s = r->slots[i];
    if (s != NULL && s->send_posted) {
        tp_abandon(r->ctx->tp, s->send_op);
        s->send_posted = 0;
        r->nposted--;
    }
}

static void end_recv(shrink_record_t *r, int i)
{
    peer_slot_t *s = r->slots[i];
    if (s != NULL && s->recv_posted) {
        tp_abandon(r->ctx->tp, s->recv_op);
        s->recv_posted = 0;
        r->nposted--;
    }
}

/* sends message m to member i (its buffer kept until the record goes); a peer this rank
 * cannot even make a slot for counts as failed */
static void post_send(shrink_record_t *r, int i, const uint64_t *m, uint64_t tag)
{
    peer_slot_t *s = slot(r, i);
    if (s == NULL) {
        set_bit(r->failed, i);
        return;
    }
    end_send(r, i);
    memcpy(s->send_buf, m, msg_bytes(r));
    tp_isend(r->ctx->tp, r->wr[i], s->send_buf, msg_bytes(r), NULL, tag, 0, s->send_op);
    s->send_posted = 1;
    r->nposted++;
}

static void post_recv(shrink_record_t *r, int i, uint64_t tag)
{
    peer_slot_t *s = slot(r, i);
    if (s == NULL) {
        set_bit(r->failed, i);
        return;
    }
    end_recv(r, i);
    tp_irecv(r->ctx->tp, r->wr[i], s->recv_buf, msg_bytes(r), NULL, tag, 0, 0, s->recv_op);
    s->recv_posted = 1;
    r->nposted++;
}

static int recv_posted(const shrink_record_t *r, int i)
{
    return r->slots[i] != NULL && r->slots[i]->recv_posted;
}

/* 1 when the receive from i ended: OK (*ok = 1) or failed (i is then failed here) */
static int recv_ended(shrink_record_t *r, int i, int *ok)
{
    *ok = 0;
    if (!recv_posted(r, i))
        return 1;
    const tp_op_t *op = r->slots[i]->recv_op;
    if (tp_op_done(op)) {
        *ok = tp_op_status(op) == UCOLL_OK;
    } else if (!member_failed(r, i)) {
        return 0;
    }
    if (!*ok)
        set_bit(r->failed, i);
    end_recv(r, i);
    return 1;
}

/* a send to i that ended: failed makes i failed here */
static void reap_send(shrink_record_t *r, int i)
{
    peer_slot_t *s = r->slots[i];
    if (s == NULL || !s->send_posted)
        return;
    if (tp_op_done(s->send_op)) {
        if (tp_op_status(s->send_op) != UCOLL_OK)
            set_bit(r->failed, i);
        end_send(r, i);
    } else if (member_failed(r, i)) {
        end_send(r, i);
    }
}

static void record_free(shrink_record_t *r)
{
    if (r->slots != NULL)
        for (int i = 0; i < r->p; i++) {
            peer_slot_t *s = r->slots[i];
            if (s == NULL)
                continue;
            tp_ops_free(s->send_op);
            tp_ops_free(s->recv_op);
            free(s->send_buf);
            free(s->recv_buf);
            free(s);
        }
    free(r->slots);
    free(r->wr);
    free(r->failed);
    free(r->decision);
    free(r);
}

static shrink_record_t *record_new(ucoll_comm_t *comm)
{
    shrink_record_t *r = calloc(1, sizeof(*r));
    if (r == NULL)
        return NULL;
    const int p = comm->size;
    r->ctx = comm->ctx;
    r->p = p;
    r->me = comm->rank;
    r->comm_id = comm->id;
    r->gen = comm->shrinks;
    r->words = msg_words(p);
    r->wr = malloc((size_t)p * sizeof(int));
    r->failed = calloc(r->words - W_FAILED, sizeof(uint64_t));
    r->decision = calloc(r->words, sizeof(uint64_t));
    r->slots = calloc((size_t)p, sizeof(*r->slots));
    if (r->wr == NULL || r->failed == NULL || r->decision == NULL || r->slots == NULL) {
        record_free(r);
        return NULL;
    }
    memcpy(r->wr, comm->world_rank, (size_t)p * sizeof(int));
    return r;
}

/* this rank's contribution: what it found failed and the comm ids it uses */
static void make_contribution(const shrink_record_t *r, uint64_t *m)
{
    memset(m, 0, msg_bytes(r));
    memcpy(m + W_USED, r->ctx->comm_ids_used, COMM_ID_WORDS * sizeof(uint64_t));
    memcpy(m + W_FAILED, r->failed, (r->words - W_FAILED) * sizeof(uint64_t));
}

/* one pass of the wait: progress (records included), idling when nothing happened; other
 * threads get the entry lock in between (UCOLL_THREAD_MULTIPLE), as in every wait */
static ucoll_status_t wait_pass(ucoll_ctx_t *ctx, unsigned *idle, double deadline)
{
    if (ctx_progress(ctx) == 0)
        tp_idle(ctx->tp, idle);
    else
        *idle = 0;
    entry_let_others_in();
    if (deadline > 0 && now_seconds() > deadline)
        return UCOLL_ERR_TIMED_OUT;
    return UCOLL_INPROGRESS;
}

/* the decision to every contributor that did not bring it (heard[i] == 1). UCOLL_TEST_SHRINK_KILL
 * =N (tests only): the coordinator sends it to its N lowest such contributors (-N: highest),
 * waits until those messages have left, and dies, so that the tests see later coordinators
 * take over from members that hold a decision. */
static void send_decision(shrink_record_t *r, const unsigned char *heard)
{
    const char *kill_env = getenv("UCOLL_TEST_SHRINK_KILL");
    const int kill_after = kill_env != NULL ? atoi(kill_env) : 0;
    int sent = 0;
    for (int k = 0; k < r->p; k++) {
        const int i = kill_after < 0 ? r->p - 1 - k : k;
        if (kill_env != NULL && sent == abs(kill_after))
            break;
        if (heard[i] == 1) {
            post_send(r, i, r->decision, shrink_tag(r, r->me, r->me));
            sent++;
        }
    }
    if (kill_env != NULL) {
        /* the sends done, then 100 ms more of progress: nothing unread in this process makes
         * its sockets reset when it dies, and what it sent gets out */
        const double until = now_seconds() + 2.0;
        for (int i = 0; i < r->p && now_seconds() < until; i++)
            while (r->slots[i] != NULL && r->slots[i]->send_posted &&
                   !tp_op_done(r->slots[i]->send_op) && now_seconds() < until)
                tp_progress(r->ctx->tp);
        for (const double t = now_seconds() + 0.1; now_seconds() < t;)
            tp_progress(r->ctx->tp);
        raise(SIGKILL);
    }
}

/* as coordinator: every contribution of a member not found failed, then the decision (or the
 * one a contributor brought), sent to every contributor that did not bring it */
static ucoll_status_t coordinate(shrink_record_t *r, double deadline)
{
    uint64_t used[COMM_ID_WORDS];
    memcpy(used, r->ctx->comm_ids_used, sizeof(used));
    r->coord = r->me;
    unsigned char *heard = calloc((size_t)r->p, 1);
    uint64_t *failed_union = calloc(r->words - W_FAILED, sizeof(uint64_t));
    if (heard == NULL || failed_union == NULL) {
        free(heard);
        free(failed_union);
        return UCOLL_ERR_NO_MEMORY;
    }
    int waiting = 0;
    for (int i = 0; i < r->p; i++)
        if (i != r->me && !member_failed(r, i)) {
            post_recv(r, i, shrink_tag(r, i, r->me));
            waiting += recv_posted(r, i);
        }
    const uint64_t *adopted = NULL;
    unsigned idle = 0;
    ucoll_status_t st = UCOLL_OK;
    while (waiting > 0) {
        for (int i = 0; i < r->p; i++) {
            int ok;
            if (!recv_posted(r, i) || !recv_ended(r, i, &ok))
                continue;
            waiting--;
            if (!ok)
                continue;
            const uint64_t *m = r->slots[i]->recv_buf;
            heard[i] = 1 + (m[W_DECIDED] != 0);
            if (m[W_DECIDED] != 0)
                adopted = m;
            for (size_t w = 0; w < COMM_ID_WORDS; w++)
                used[w] |= m[W_USED + w];
            for (size_t w = 0; w < r->words - W_FAILED; w++)
                failed_union[w] |= m[W_FAILED + w];
        }
        if (waiting > 0 && (st = wait_pass(r->ctx, &idle, deadline)) != UCOLL_INPROGRESS)
            break;
        st = UCOLL_OK;
    }
    if (st == UCOLL_OK) {
        uint64_t *d = r->decision;
        if (adopted != NULL) {
            memcpy(d, adopted, msg_bytes(r));
        } else {
            memset(d, 0, msg_bytes(r));
            for (int i = 0; i < r->p; i++)
                if (i != r->me && (heard[i] == 0 || bit(failed_union, i)))
                    set_bit(d + W_FAILED, i);
            uint32_t id = 0;
            while (id < UCOLL_MAX_COMMS && bit(used, (int)id))
                id++;
            d[W_ID] = id;
            d[W_DECIDED] = id < UCOLL_MAX_COMMS ? DECIDED : NO_ID;
        }
        send_decision(r, heard);
    }
    free(heard);
    free(failed_union);
    return st;
}

/* as a member: contributes to the coordinator and waits for its decision, moving on to the
 * next coordinator when one fails; this rank may turn out to be the next */
static ucoll_status_t take_part(shrink_record_t *r, double deadline)
{
    uint64_t *contribution = malloc(msg_bytes(r));
    if (contribution == NULL)
        return UCOLL_ERR_NO_MEMORY;
    ucoll_status_t st = UCOLL_OK;
    unsigned idle = 0;
    for (;;) {
        const int c = lowest_alive(r);
        if (c == r->me) {
            st = coordinate(r, deadline);
            break;
        }
        make_contribution(r, contribution);
        post_recv(r, c, shrink_tag(r, c, c));
        post_send(r, c, contribution, shrink_tag(r, r->me, c));
        int ok = 0;
        for (;;) {
            reap_send(r, c);
            if (bit(r->failed, c) || recv_ended(r, c, &ok))
                break;
            if ((st = wait_pass(r->ctx, &idle, deadline)) != UCOLL_INPROGRESS)
                break;
            st = UCOLL_OK;
        }
        if (st != UCOLL_OK)
            break;
        if (ok && !bit(r->failed, c)) {
            memcpy(r->decision, r->slots[c]->recv_buf, msg_bytes(r));
            r->coord = c;
            break;
        }
        end_recv(r, c);
        set_bit(r->failed, c);
    }
    free(contribution);
    return st;
}

/* after the call: the record's part in later coordinators' rounds */
static void record_progress(shrink_record_t *r)
{
    if (r->nposted > 0)
        for (int i = 0; i < r->p; i++)
            reap_send(r, i);
    if (!r->answering && r->coord != r->me && member_failed(r, r->coord)) {
        const int next = lowest_alive(r);
        r->coord = next;
        if (next == r->me) {
            r->answering = 1;
            for (int i = 0; i < r->p; i++)
                if (i != r->me && !bit(r->decision + W_FAILED, i) && !member_failed(r, i))
                    post_recv(r, i, shrink_tag(r, i, r->me));
        } else {
            post_send(r, next, r->decision, shrink_tag(r, r->me, next));
        }
    }
    if (r->answering && r->nposted > 0)
        for (int i = 0; i < r->p; i++) {
            int ok;
            if (!recv_posted(r, i) || !recv_ended(r, i, &ok))
                continue;
            if (ok && r->slots[i]->recv_buf[W_DECIDED] == 0)
                post_send(r, i, r->decision, shrink_tag(r, r->me, r->me));
        }
}

void shrink_progress(ucoll_ctx_t *ctx)
{
    if (++ctx->shrink_passes < TICK)
        return;
    ctx->shrink_passes = 0;
    for (shrink_record_t *r = ctx->shrink_records; r != NULL; r = r->next)
        if (r->live)
            record_progress(r);
}

void shrink_end_ops(ucoll_ctx_t *ctx)
{
    for (shrink_record_t *r = ctx->shrink_records; r != NULL; r = r->next) {
        r->live = 0;
        for (int i = 0; i < r->p; i++) {
            end_recv(r, i);
            if (r->slots[i] != NULL && r->slots[i]->send_posted &&
                !tp_op_done(r->slots[i]->send_op))
                tp_close_by_force(ctx->tp); /* a send still queued: its peer may have left */
            end_send(r, i);
        }
    }
}

void shrink_free_all(ucoll_ctx_t *ctx)
{
    while (ctx->shrink_records != NULL) {
        shrink_record_t *r = ctx->shrink_records;
        ctx->shrink_records = r->next;
        record_free(r);
    }
}

ucoll_status_t shrink_agree(ucoll_comm_t *comm, double deadline, uint64_t **failed, uint32_t *id)
{
    if (comm->shrinks >= 8) {
        fprintf(stderr,
                "ucoll: ucoll_comm_shrink: a communicator can be shrunk 8 times (shrink the "
                "communicator the last shrink gave instead)\n");
        return UCOLL_ERR_NOT_SUPPORTED;
    }
    shrink_record_t *r = record_new(comm);
    if (r == NULL)
        return UCOLL_ERR_NO_MEMORY;
    comm->shrinks++;
    comm->shrunk = 1; /* its id stays taken: the record may still talk with its tags */
    ucoll_ctx_t *ctx = comm->ctx;
    ucoll_status_t st = r->p == 1 ? coordinate(r, deadline) : take_part(r, deadline);
    /* a decision, even one that leaves this rank out or found no id, is handed on later */
    r->live = st == UCOLL_OK;
    if (st == UCOLL_OK && r->decision[W_DECIDED] == NO_ID) {
        fprintf(stderr, "ucoll: ucoll_comm_shrink: all %d communicator ids are taken\n",
                UCOLL_MAX_COMMS - 2);
        st = UCOLL_ERR_NOT_SUPPORTED;
    }
    if (st == UCOLL_OK && bit(r->decision + W_FAILED, r->me)) {
        fprintf(stderr,
                "ucoll: ucoll_comm_shrink: rank %d of the communicator was found failed by the "
                "others and is not part of the new one\n",
                r->me);
        st = UCOLL_ERR_PEER_FAILED;
    }
    if (st == UCOLL_OK) {
        *failed = calloc(r->words - W_FAILED, sizeof(uint64_t));
        if (*failed == NULL)
            st = UCOLL_ERR_NO_MEMORY;
        else {
            memcpy(*failed, r->decision + W_FAILED, (r->words - W_FAILED) * sizeof(uint64_t));
            *id = (uint32_t)r->decision[W_ID];
        }
    }
    /* kept either way: its sends may still be in flight, its decision may be asked for */
    r->next = ctx->shrink_records;
    ctx->shrink_records = r;
    return st;
}
