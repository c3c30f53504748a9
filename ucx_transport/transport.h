/*
 * ucx_transport: UCP contexts and workers (one for the peers on this host, one for the rest,
 * see tp_create), an endpoint to every peer, tagged send/receive, registered scratch memory,
 * and a progress call that yields the CPU when ranks outnumber cores. Small messages to peers
 * on this host take ucoll's own shared-memory rings instead of UCX (shm.h), behind the same
 * tp_isend/tp_irecv. Knows nothing about schedules or collectives.
 */
#ifndef UCOLL_TRANSPORT_H
#define UCOLL_TRANSPORT_H

#include "ucoll.h"

#include <stddef.h>
#include <stdint.h>

typedef struct tp_ctx tp_ctx_t;

/* one outstanding send or receive; filled in by the transport */
typedef struct tp_op {
    volatile int done;     /* 1 once complete (successfully or not) */
    ucoll_status_t status; /* valid when done */
    size_t expected;       /* bytes posted */
    uint64_t tag, checked; /* receive: tag bits in `checked` must equal these after a match */
    int peer;
    int is_recv;
    void *ucp_req;      /* UCP request while in flight */
    void *tp;           /* owning context */
    int via_shm;        /* travels through the on-host channel (shm.h), not UCX */
    int crossed;        /* a UCX receive cancelled because its message came through shm */
    void *buf;          /* shm: the data (a receive's destination) */
    struct tp_op *next; /* shm: the next op of its peer's posted or pending list */
} tp_op_t;

/* a piece of registered memory from the pool */
typedef struct tp_chunk {
    void *addr;
    size_t size;
    void *memh;                /* ucp_mem_h */
    struct tp_chunk *next;     /* free list of its size class */
    struct tp_chunk *all_next; /* every chunk mapped, for tp_destroy */
} tp_chunk_t;

typedef enum { TP_YIELD_AUTO, TP_YIELD_ALWAYS, TP_YIELD_NEVER } tp_yield_mode_t;

/* how a dead peer is noticed. UCX 1.13 uses no shared memory on an endpoint with peer error
 * handling, so:
 *   AUTO     peers on this host: no UCX error handling (shared memory), their process ids are
 *            probed while a wait lasts; other hosts: UCX peer error handling
 *   UCX      UCX peer error handling for every peer (TCP/IB only, also on one host)
 *   TIMEOUT  no error handling at all: only UCOLL_TIMEOUT ends a wait for a dead peer */
typedef enum { TP_FAILURE_AUTO, TP_FAILURE_UCX, TP_FAILURE_TIMEOUT } tp_failure_mode_t;

/* creates the UCP contexts and workers; nranks peers will be connected by tp_connect.
 * local_pid[i] > 0 marks rank i as running on this host (this one included), which decides
 * CPU yielding and the contexts; local_fd[i] is its on-host segment (shm.h, from its
 * shm_segment_create), shm_fd this rank's (taken over; -1: no on-host channel).
 * mode AUTO gives two contexts, each with its own worker:
 *   HOST  the peers on this host, endpoints without UCX error handling (shared memory), and
 *         no rendezvous protocol (UCX_RNDV_THRESH=inf unless the user set UCX_RNDV_THRESH):
 *         UCX treats an error on such an endpoint as fatal, and a peer that died while this
 *         process read its memory in a zero-copy rendezvous (CMA process_vm_readv) aborted
 *         this process. Eager messages go through shared-memory FIFOs only, which a dead
 *         peer cannot break. Cost at np=2 against Open MPI's pml ucx: up to 1.3-1.7x at
 *         256 KiB-4 MiB (README, Errors and failures).
 *   NET   the peers on other hosts (created only if there are any), UCX peer error handling,
 *         UCX's protocols as configured; the only context that registers memory.
 * Modes UCX and TIMEOUT: NET only, for every peer. */
ucoll_status_t tp_create(int rank, int nranks, const long *local_pid, const int *local_fd,
                         int shm_fd, tp_yield_mode_t yield_mode, tp_failure_mode_t mode,
                         tp_ctx_t **tp);
/* this process's on-host segment for the first exchange (shm.h); -1 if none */
int tp_shm_segment(void);
/* the worker addresses to publish to the other ranks, packed in one blob */
ucoll_status_t tp_local_address(tp_ctx_t *tp, const void **addr, size_t *len);
/* creates endpoints to every peer from their published blobs (addrs[i], lens[i]);
 * local_pid[i] is the process id of a peer on this host, 0 for one elsewhere */
ucoll_status_t tp_connect(tp_ctx_t *tp, const void *const *addrs, const size_t *lens,
                          const long *local_pid);
/* while waiting: every few ms, marks failed the on-host peers whose process is gone */
void tp_check_liveness(tp_ctx_t *tp);
/* how many times tp_check_liveness has looked: a waiting request whose last tp_check_crossed
 * saw another value runs it again (so every request does, whichever one made the look) */
unsigned tp_probe_epoch(const tp_ctx_t *tp);
/* a receive from an on-host peer still waiting on one channel (shm or UCX) for a message that
 * came through the other: the two ranks' lengths lie on either side of the shm size limit
 * (mismatched counts). Completes it with UCOLL_ERR_TRUNCATED, as a wrong length on one
 * channel does. */
void tp_check_crossed(tp_ctx_t *tp, tp_op_t *op);
/* closes endpoints (flushing them) and destroys worker and context; the caller makes sure
 * every rank has finished communicating first */
void tp_destroy(tp_ctx_t *tp);

ucoll_status_t tp_isend(tp_ctx_t *tp, int peer, const void *buf, size_t len, void *memh,
                        uint64_t tag, tp_op_t *op);
/* receives exactly len bytes with this tag (from peer, which is recorded for failure checks);
 * the tag bits in `checked` are left out of matching and compared after it. A message of
 * another length, or whose `checked` bits differ, completes the op with UCOLL_ERR_TRUNCATED. */
ucoll_status_t tp_irecv(tp_ctx_t *tp, int peer, void *buf, size_t len, void *memh, uint64_t tag,
                        uint64_t checked, tp_op_t *op);
/* ends an op: frees its UCP request; an incomplete receive is cancelled, an incomplete send is
 * released to finish inside UCX (its buffer must stay valid until then: only error paths do
 * this). Afterwards op->done is 1 and no callback touches op any more. */
void tp_abandon(tp_ctx_t *tp, tp_op_t *op);

/* one progress pass; returns the number of events (0 = nothing happened) */
unsigned tp_progress(tp_ctx_t *tp);
/* called when a wait loop made no progress: spins, then yields the CPU */
void tp_idle(tp_ctx_t *tp, unsigned *idle_passes);
/* 1 if the peer's endpoint reported an error (the peer died or is unreachable) */
int tp_peer_failed(const tp_ctx_t *tp, int peer);
int tp_any_peer_failed(const tp_ctx_t *tp);
/* tp_destroy will close every endpoint by force (the ranks did not all get through the
 * finalize barrier: sends of failed collectives may still be queued to peers that left) */
void tp_close_by_force(tp_ctx_t *tp);

/* registered memory of at least `size` bytes, mapped once with ucp_mem_map and recycled */
tp_chunk_t *tp_pool_get(tp_ctx_t *tp, size_t size);
void tp_pool_put(tp_ctx_t *tp, tp_chunk_t *chunk);

/* registers a user buffer (for persistent requests): *memh for tp_isend/tp_irecv */
ucoll_status_t tp_mem_map(tp_ctx_t *tp, void *addr, size_t len, void **memh);
void tp_mem_unmap(tp_ctx_t *tp, void *memh);

/* messages that went through the on-host channel, for tests and tools: sent, received,
 * and received before their receive was posted; zeros if it is not in use */
void tp_shm_counts(const tp_ctx_t *tp, unsigned long long counts[3]);

#endif
