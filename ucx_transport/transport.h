/*
 * ucx_transport: the router, the one channel interface the executor sees. It sends and
 * receives tagged messages to and from world ranks, progresses, abandons, and answers whether
 * a peer failed; which channel carries a message is its business alone:
 *   - UCX HOST context: peers on this host (AUTO failure detection), shared memory;
 *   - UCX NET context: peers on other hosts, or every peer (failure detection UCX / TIMEOUT);
 *   - ucoll's on-host rings (shm.h): messages of at most SHM_MAX_MESSAGE to peers on this host.
 * It also owns liveness (process-id probes of on-host peers, UCX endpoint errors) and crossed
 * messages (a receive waiting on one channel for a message that came through the other).
 *
 * Connections are lazy: a peer's published address is looked up (tp_lookup_fn), its endpoint
 * created, its process probed, and this rank's ring in its segment mapped (on the first send),
 * only when a schedule first sends to or receives from it. A rank keeps O(p) bytes of peer
 * state and O(peers it talks to) endpoints. Knows nothing about schedules or collectives.
 */
#ifndef UCOLL_TRANSPORT_H
#define UCOLL_TRANSPORT_H

#include "ucoll.h"

#include <stddef.h>
#include <stdint.h>

typedef struct tp_ctx tp_ctx_t;

/* one outstanding send or receive. Opaque to the executor, which keeps arrays of them
 * (tp_ops_resize, tp_op_at) and reads only whether one is done and how it ended: the two
 * fields of tp_op_head_t, which the router's op (ucx_transport/op.h) begins with. The
 * accessors are inline because the executor tests them on every pass of a wait. */
typedef struct tp_op tp_op_t;
typedef struct {
    volatile int done;     /* 1 once complete (successfully or not) */
    ucoll_status_t status; /* valid when done */
} tp_op_head_t;
/* bytes of one op in an array (op.h asserts that the op fits) */
enum { TP_OP_BYTES = 128 };
/* like realloc for an array of n ops (NULL: nothing changed); no op of it may be in flight */
tp_op_t *tp_ops_resize(tp_op_t *ops, size_t n);
void tp_ops_free(tp_op_t *ops);
static inline tp_op_t *tp_op_at(tp_op_t *ops, size_t i)
{
    return (tp_op_t *)((char *)ops + i * TP_OP_BYTES);
}
/* 1 once the op has completed, successfully or not */
static inline int tp_op_done(const tp_op_t *op)
{
    return ((const tp_op_head_t *)(const void *)op)->done;
}
/* how it ended; valid once done */
static inline ucoll_status_t tp_op_status(const tp_op_t *op)
{
    return ((const tp_op_head_t *)(const void *)op)->status;
}

/* a piece of registered memory from the pool */
typedef struct tp_chunk {
    void *addr;
    size_t size;
    void *memh;                /* ucp_mem_h */
    struct tp_chunk *next;     /* free list of its size class */
    struct tp_chunk *all_next; /* every chunk mapped, for tp_destroy */
    int in_region;             /* its memory is a region (shm_region.h), not malloc's */
    int stale;                 /* taken before tp_pool_use_regions, or quarantined: not recycled */
} tp_chunk_t;

typedef enum { TP_YIELD_AUTO, TP_YIELD_ALWAYS, TP_YIELD_NEVER } tp_yield_mode_t;

/* the largest message the on-host rings carry (SHM_MAX_MESSAGE); longer ones go through UCX */
enum { TP_RING_MAX_MESSAGE = 4096 };

/* online CPUs of this host (not this process's affinity mask, which a launcher that binds
 * ranks narrows to one CPU): ranks compete for CPUs when more of them share the host */
int tp_host_cpus(void);

/* how a dead peer is noticed. UCX 1.13 uses no shared memory on an endpoint with peer error
 * handling, so:
 *   AUTO     peers on this host: no UCX error handling (shared memory), their process ids are
 *            probed while a wait lasts; other hosts: UCX peer error handling
 *   UCX      UCX peer error handling for every peer (TCP/IB only, also on one host)
 *   TIMEOUT  no error handling at all: only UCOLL_TIMEOUT ends a wait for a dead peer */
typedef enum { TP_FAILURE_AUTO, TP_FAILURE_UCX, TP_FAILURE_TIMEOUT } tp_failure_mode_t;

/* a peer's published blob (tp_local_address of its rank): a malloc'ed copy the router frees */
typedef ucoll_status_t (*tp_lookup_fn)(void *arg, int peer, void **blob, size_t *len);

/* creates the UCP contexts and workers. local_ranks (nlocal world ranks, ascending, this one
 * included) run on this host, which decides CPU yielding and the contexts; of those, only the
 * ones that publish the same `machine` (a hash of the machine identity: boot id, pid
 * namespace) have their process probed and their rings used. shm_fd is this
 * rank's on-host segment (from tp_shm_segment; taken over; -1: no on-host channel). Peers are
 * connected on first use through lookup(lookup_arg, peer, ...).
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
 * Modes UCX and TIMEOUT: NET only, for every peer.
 * level: SERIALIZED and MULTIPLE (the caller serialises the calls) make UCX workers that
 * several threads may use one at a time; SINGLE and FUNNELED keep UCX's single-thread mode. */
ucoll_status_t tp_create(int rank, int nranks, const int *local_ranks, int nlocal, uint64_t machine,
                         int shm_fd, tp_yield_mode_t yield_mode, tp_failure_mode_t mode,
                         ucoll_thread_level_t level, tp_lookup_fn lookup, void *lookup_arg,
                         tp_ctx_t **tp);
/* messages of at least min_bytes (0: none) between ranks of this host that the rings reach go
 * by single copy (shm.h) from now on, where their send and receive allow it; every rank must
 * set the same before any such message. No effect without rings. */
void tp_set_single_copy(tp_ctx_t *tp, size_t min_bytes);
/* whether this rank has the on-host rings (tp_create made them: on-host peers, UCOLL_SHM=1,
 * AUTO failure detection, and their segment mapped) */
int tp_has_rings(const tp_ctx_t *tp);
/* whether a message of len bytes to or from peer is one that single copy takes, where its send
 * and receive allow it: the peer shares this host by tp_create's account and len reaches
 * tp_set_single_copy's threshold. The same on both ends before either connects (the segments
 * of a message are split by it), even where the rings turn out not to reach the peer, provided
 * every rank with on-host peers set the same threshold (agree.c: one without rings vetoes). */
int tp_single_copy_size(const tp_ctx_t *tp, int peer, size_t len);
/* the smallest message single copy takes on any peer (0: single copy is off): a bound the
 * executor tests before asking tp_single_copy_size per message */
size_t tp_single_copy_min(const tp_ctx_t *tp);
/* shm_single_copy_probe (shm.h): OK if this process may read its host's peers */
ucoll_status_t tp_single_copy_probe(char *why, size_t why_len);
/* single copy ended up off: undoes what a successful probe allowed */
void tp_single_copy_unprobe(void);
/* 1 while the probe's permission for any process of the user to read this one holds (tests) */
int tp_single_copy_ptracer_any(void);
/* this process's on-host segment, made before tp_create; -1 if none */
int tp_shm_segment(void);
/* what to publish to the other ranks: process id, on-host segment, worker addresses */
ucoll_status_t tp_local_address(tp_ctx_t *tp, const void **addr, size_t *len);
/* closes endpoints (flushing them) and destroys worker and context; the caller makes sure
 * every rank has finished communicating first */
void tp_destroy(tp_ctx_t *tp);

/* sends len bytes to peer (connecting it first if this is its first use); memh from
 * tp_mem_map or the pool, or NULL. single_copy: the message may go by single copy
 * (tp_set_single_copy's sizes); its receive must say the same. The op may be done at return. */
ucoll_status_t tp_isend(tp_ctx_t *tp, int peer, const void *buf, size_t len, void *memh,
                        uint64_t tag, int single_copy, tp_op_t *op);
/* receives exactly len bytes with this tag from peer (connecting it first, so that its
 * endpoint can report its failure); the tag bits in `checked` are left out of matching and
 * compared after it. A message of another length, or whose `checked` bits differ, or one from
 * an on-host peer that came through the other channel (counts on either side of the rings'
 * size limit), completes the op with UCOLL_ERR_TRUNCATED. */
ucoll_status_t tp_irecv(tp_ctx_t *tp, int peer, void *buf, size_t len, void *memh, uint64_t tag,
                        uint64_t checked, int single_copy, tp_op_t *op);
/* tp_irecv's single_copy is TP_SINGLE_COPY, or 0; with TP_LEND added, a message from a sender's
 * region (ucoll_mem_alloc) may complete the receive without landing in buf: tp_op_lent then
 * gives its bytes in place (read-only), and the sender waits until tp_release, which says
 * whether the bytes read meanwhile count (OK, or PEER_FAILED). tp_abandon of a lent receive
 * releases it unused. */
enum { TP_SINGLE_COPY = 1, TP_LEND = 2 };
const void *tp_op_lent(const tp_op_t *op);
ucoll_status_t tp_release(tp_ctx_t *tp, tp_op_t *op);
/* a single-copy receive posted ahead of its round whose buffer, where it lies in a region of
 * this process, is offered to the sender (shm.h): the sender may write the message into it
 * (tp_write_target) instead of sending it. 1 if posted so (it completes as any receive); 0 if
 * nothing was posted (no region, another channel, no room): the caller receives as usual. */
int tp_irecv_offer(tp_ctx_t *tp, int peer, void *buf, size_t len, uint64_t tag, uint64_t checked,
                   tp_op_t *op);
/* the sender's side: where peer offered to take the message of len bytes with this tag, claimed
 * (the message is then not sent: tp_write_done delivers it); NULL if it did not */
void *tp_write_target(tp_ctx_t *tp, int peer, uint64_t tag, size_t len, void **handle);
/* the claimed target holds the message: OK, or PEER_FAILED (the receiver gave up on it).
 * valid 0: it must not count (its inputs turned out to have changed): the receive fails */
ucoll_status_t tp_write_done(tp_ctx_t *tp, int peer, void *handle, int valid);
/* 1 while the receiver still waits for the claimed write; 0: it gave up, stop writing */
int tp_write_claimed(const tp_ctx_t *tp, int peer, const void *handle);
/* ends an op: frees its UCP request; an incomplete receive is cancelled, an incomplete send is
 * released to finish inside UCX (its buffer must stay valid until then: only error paths do
 * this). Afterwards the op is done and no callback touches it any more. */
void tp_abandon(tp_ctx_t *tp, tp_op_t *op);

/* one progress pass over every channel, and every few ms the liveness probes and the
 * crossed-message checks; returns the number of events (0 = nothing happened) */
unsigned tp_progress(tp_ctx_t *tp);
/* called when a wait loop made no progress: spins, then yields the CPU */
void tp_idle(tp_ctx_t *tp, unsigned *idle_passes);
/* 1 if the peer was found dead: its endpoint reported an error, or (on this host) its
 * process is gone; never for a peer not yet used */
int tp_peer_failed(const tp_ctx_t *tp, int peer);
int tp_any_peer_failed(const tp_ctx_t *tp);
/* tp_destroy will close every endpoint by force (the ranks did not all get through the
 * finalize barrier: sends of failed collectives may still be queued to peers that left) */
void tp_close_by_force(tp_ctx_t *tp);

/* registered memory of at least `size` bytes, mapped once with ucp_mem_map and recycled */
tp_chunk_t *tp_pool_get(tp_ctx_t *tp, size_t size);
void tp_pool_put(tp_ctx_t *tp, tp_chunk_t *chunk);
/* from now on the pool's memory comes from regions, so that the host's peers read messages
 * sent from it in place as they read the caller's regions (UCOLL_SINGLE_COPY_MIN=regions);
 * chunks that exist already are not recycled (they go at tp_destroy). A region holds a
 * descriptor: past TP_POOL_MAX_REGIONS chunks the pool's memory is malloc's again, and those
 * chunks are recycled like any other */
void tp_pool_use_regions(tp_ctx_t *tp);
enum { TP_POOL_MAX_REGIONS = 64 };
/* a peer may still write into chunk: a region's chunk (the only memory a peer is offered) is
 * marked so that tp_pool_put never hands it out again; it goes at tp_destroy, not before, as
 * an abandoned UCX send may still read it. Any other chunk is left as it is */
void tp_pool_quarantine(tp_ctx_t *tp, tp_chunk_t *chunk);
/* how many receives so far were given up while a live peer still held the right to write
 * into their buffers (it had stopped for seconds): a rise during a call means that its
 * receive buffers may yet change under whoever uses them next */
unsigned long long tp_writes_outrun(const tp_ctx_t *tp);

/* memory the host's peers read in place (shm_region.h): 0 or an errno value; 0 or -1 if ptr
 * starts no region */
int tp_region_alloc(size_t len, void **ptr);
int tp_region_free(void *ptr);

/* registers a user buffer (for persistent requests): *memh for tp_isend/tp_irecv */
ucoll_status_t tp_mem_map(tp_ctx_t *tp, void *addr, size_t len, void **memh);
void tp_mem_unmap(tp_ctx_t *tp, void *memh);

/* what this rank has done so far (UCOLL_STATS, tests): endpoints created, peers' rings mapped,
 * messages posted for sending through UCX and through the rings (each segment one message),
 * and the on-host channel's counts: sent, received, received before their receive was posted,
 * single-copy descriptors sent and single-copy reads done */
typedef struct {
    unsigned long long endpoints, rings, sent_ucx, sent_shm;
    unsigned long long shm_sent, shm_received, shm_unexpected;
    unsigned long long copies_sent, copies_read, copies_mapped, copies_lent;
    unsigned long long offers_sent, copies_written, writes_taken; /* tp_irecv_offer's offers, and
                                                                   * messages written by them */
    unsigned long long pool_chunks;      /* scratch chunks allocated and registered, all alive */
    unsigned long long writes_outrun;    /* tp_writes_outrun */
    unsigned long long pool_quarantined; /* region chunks tp_pool_quarantine kept from reuse */
} tp_stats_t;
void tp_get_stats(const tp_ctx_t *tp, tp_stats_t *stats);

/* sleeping until there is work (ucoll_event_fd, ucoll_arm, UCOLL_WAIT_MODE=sleep). The fd is
 * an epoll set of both workers' UCX event fds, a kick eventfd and a timer; -1 if UCX gives no
 * event fd. A message on the rings signals no fd (the sender only stores to shared memory),
 * so while anything is outstanding an armed sleep ends after at most TP_SLEEP_RING_US (the
 * rings exist) or TP_SLEEP_UCX_US (UCX only: for liveness probes and UCOLL_TIMEOUT, which counts
 * only gaps between progress passes under 50 ms, exec.c). */
enum { TP_SLEEP_RING_US = 1000, TP_SLEEP_UCX_US = 20000 };
int tp_event_fd(tp_ctx_t *tp);
/* OK: the fd will turn readable on UCX traffic, a kick, or (outstanding != 0) the timer;
 * INPROGRESS: something is already there, progress first */
ucoll_status_t tp_arm(tp_ctx_t *tp, int outstanding);
/* makes the fd readable if tp_arm returned OK since the last progress pass (work was posted) */
void tp_kick(tp_ctx_t *tp);
/* makes the fd readable whether or not it was armed (a sleeping waiter's request is done) */
void tp_wake(tp_ctx_t *tp);
/* waits on the fd for at most timeout_ms (-1: no limit) */
int tp_sleep(tp_ctx_t *tp, int timeout_ms);

#endif
