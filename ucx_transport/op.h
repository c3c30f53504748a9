/*
 * The layout of one outstanding send or receive, private to ucx_transport/: the router
 * (transport.c) and the rings (shm.c) fill it in; src/ sees only the opaque tp_op_t and asks
 * tp_op_done / tp_op_status.
 */
#ifndef UCOLL_TP_OP_H
#define UCOLL_TP_OP_H

#include "transport.h"
#include "ucoll.h"

#include <stddef.h>
#include <stdint.h>

struct tp_op {
    /* the layout of tp_op_head_t, which the executor reads (transport.h) */
    struct {
        volatile int done;     /* 1 once complete (successfully or not) */
        ucoll_status_t status; /* valid when done */
    };
    size_t expected;       /* bytes posted */
    uint64_t tag, checked; /* receive: tag bits in `checked` must equal these after a match */
    int peer;
    int is_recv;
    void *ucp_req;      /* UCP request while in flight */
    struct tp_ctx *tp;  /* the owning router (the UCX callbacks read its peer state) */
    int via_shm;        /* travels through the on-host channel (shm.h), not UCX */
    int crossed;        /* a UCX receive cancelled because its message came through shm */
    void *buf;          /* shm: the data (a receive's destination) */
    struct tp_op *next; /* shm: the next op of its peer's posted or pending list */
    /* the router's list of receives from on-host peers that may cross channels */
    struct tp_op *watch_prev, *watch_next;
    int watched;
    /* shm single copy, a send: its cell in the receiver's ring and that cell's generation; a
     * lent receive: the sender's cell it must answer */
    uint32_t sc_cell, sc_gen;
    int lend_ok;  /* a receive that may be lent the sender's bytes (shm_release) */
    int lent;     /* it was: buf points at them, the sender waits */
    int lent_map; /* then: the entry of its peer's mapped regions they lie in */
    int offered;  /* a receive whose buffer is offered to its sender (shm_recv_offer): sc_cell
                   * and sc_gen are the cell of this side's ring that the sender answers */
};

_Static_assert(sizeof(struct tp_op) <= TP_OP_BYTES, "an op fits its slot in an op array");
_Static_assert(offsetof(struct tp_op, done) == offsetof(tp_op_head_t, done) &&
                   offsetof(struct tp_op, status) == offsetof(tp_op_head_t, status),
               "an op begins with tp_op_head_t's fields");

#endif
