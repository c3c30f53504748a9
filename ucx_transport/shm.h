/*
 * shm: the on-host channel for small messages (at most SHM_MAX_MESSAGE = 4 KiB) between ranks
 * of one host, beside UCX.
 *
 * Why: at np=2 a one-way 8-byte message through UCX 1.13's shared-memory transport took 1.27x
 * ucx_perftest's tag_lat inside a collective, and Open MPI's vader BTL beat both; perf put the
 * time in uct_mm_ep_am_short (a lock cmpxchg on the receiver FIFO's head, a line every sender
 * to that receiver writes) and UCP's request handling. Here each ordered pair of ranks has a
 * ring of its own: one writer, one reader, no atomic read-modify-write, no shared head, and a
 * message of up to 48 bytes is one cache line (header and data together).
 *
 * Layout: every rank owns one segment (a memfd, so nothing outlives the job) holding one ring
 * per rank of its host, ring j written only by local rank j. The writer fills slot m % SLOTS
 * with message m and publishes it by a release-store of sequence number m + 1 into the slot;
 * the reader, which only reads slots, copies it out and release-stores how many it has consumed
 * into the ring's control line. The writer reads that line only when its own count says the
 * ring may be full, so a message costs two cache-line transfers (the writer's store, the
 * reader's load), not three (a `full` flag that the reader clears makes the writer fetch the
 * line before it can write it). A rank maps its own ring of a peer's segment, found through
 * /proc/<pid>/fd/<fd> of the owner (both from the peer's published address), on its first
 * send to that peer: a rank that talks to few peers of its host maps few rings. It reads the
 * rings of its own segment from the start, so a message that comes before the router has
 * looked its sender up waits in the unexpected list.
 *
 * Matching is by tag as with UCX: a message is matched against the receives posted for its
 * sender (tag bits in `checked` left out, then compared, like tp_irecv); one that arrives
 * before its receive is copied to the sender's unexpected list. A send finds its slot free or
 * waits in the sender's pending list, which progress drains. A dead peer is noticed by the
 * transport's process-id probes, as for UCX's shared memory.
 *
 * Single copy (shm_set_single_copy): a message of at least the set size goes through the ring as
 * a descriptor of the sender's buffer (address, length, cell, generation), and the receiver
 * reads the data straight into its destination with process_vm_readv: one copy instead of
 * UCX's two, and a dead sender is an error code (ESRCH), not an abort as in UCX's CMA
 * rendezvous. The answer goes into the cell, one 32-bit word per descriptor in flight in the
 * ring (SHM_CELLS of them), by compare-and-swap from POSTED: DONE, REJECTED (length or
 * checked tag bits differ) or FAILED (the read failed). A sender that gives up a send swaps
 * POSTED for CANCELLED; exactly one side wins, so a receiver whose swap lost returns an error,
 * never data its sender may since have changed. The send completes when its answer comes:
 * rendezvous semantics. The generation in the cell makes an answer to a stale descriptor fail.
 */
#ifndef UCOLL_SHM_H
#define UCOLL_SHM_H

#include "op.h"

/* The size limit: at np=2 (ucoll_vs_mpi against Open MPI's pml ucx) 4 KiB messages took
 * 0.84-0.93x pml ucx through the rings, 1.15-1.32x through UCX. Memory: SHM_RING_BYTES of
 * address space per ordered pair of ranks on a host; every reader polls the first slot of each
 * of its rings (one page per ring, and one cache-line load per ring in each progress pass),
 * the rest is touched by pairs that talk. */
enum {
    SHM_MAX_MESSAGE = 4096,
    SHM_SLOT_HEADER = 16,
    SHM_SLOT_BYTES = 4160,     /* header and data, rounded up to 64-byte cache lines */
    SHM_SLOTS = 8,             /* per ring: messages in flight per pair */
    SHM_RING_CONTROL = 64,     /* the ring's control line, before its slots */
    SHM_RING_BYTES = 9 * 4096, /* control and slots, rounded up to pages (mmap offsets) */
    SHM_CELLS = 64,            /* single-copy descriptors in flight per ordered pair */
};

typedef struct shm_chan shm_chan_t;
typedef struct tp_op tp_op_t;

/* this process's segment, made before its address is published: a memfd descriptor, -1 if none */
int shm_segment_create(void);

/* sizes the own segment `fd` (taken over: closed by shm_destroy) for the nlocal ranks of this
 * host, local_ranks (world ranks, ascending, this one included), and maps it. Maps nothing of
 * the peers yet. Fails (and prints why) if the segment cannot be made: the caller then goes
 * without. */
ucoll_status_t shm_attach(int rank, int nranks, const int *local_ranks, int nlocal, int fd,
                          shm_chan_t **out);
/* peer, a rank of this host whose segment is descriptor fd of process pid, is reached through
 * shm from now on (the router's first use of it); nothing happens for a peer of another host */
void shm_enable_peer(shm_chan_t *ch, int peer, long pid, int fd);
/* 1 if a message of len bytes to or from peer goes through shm */
int shm_reaches(const shm_chan_t *ch, int peer, size_t len);
/* messages of at least min_bytes (> SHM_MAX_MESSAGE; 0: none) go by single copy from now on;
 * both sides of a pair must set the same before either sends such a message. Returns the
 * threshold in force: min_bytes, raised past SHM_MAX_MESSAGE (0: none) */
size_t shm_set_single_copy(shm_chan_t *ch, size_t min_bytes);
/* whether process_vm_readv may read the peers of this host: OK, or NOT_SUPPORTED with the
 * reason in why (a seccomp filter or a kernel without it: reading this process itself fails;
 * Yama's ptrace_scope 2 or 3). Under ptrace_scope 1 it lets any process of this user read this
 * one (PR_SET_PTRACER_ANY, as Open MPI does for CMA). Different users have no rings at all:
 * opening a peer's /proc/<pid>/fd takes the same ptrace permission. */
ucoll_status_t shm_single_copy_probe(char *why, size_t why_len);
/* undoes what a successful probe allowed (single copy ended up off) */
void shm_single_copy_unprobe(void);
/* 1 while the probe's PR_SET_PTRACER_ANY holds */
int shm_single_copy_ptracer_any(void);
void shm_destroy(shm_chan_t *ch);

/* as tp_isend / tp_irecv (op set up by the caller: peer, expected); the op may be done at
 * return. The first send to a peer maps this rank's ring in the peer's segment; if that fails
 * (said on stderr) the send completes with UCOLL_ERR_TRANSPORT. */
void shm_send(shm_chan_t *ch, int peer, const void *buf, size_t len, uint64_t tag, tp_op_t *op);
void shm_recv(shm_chan_t *ch, int peer, void *buf, uint64_t tag, uint64_t checked, tp_op_t *op);
/* a receive with op->lend_ok set that met a sender's buffer inside a region this process can map
 * completes with op->lent set and op->buf pointing at the sender's bytes (read-only), instead of
 * a copy: the sender waits until shm_release. used: the caller consumed the bytes, and the
 * return says whether they count (OK, or PEER_FAILED if the sender took them back first); not
 * used (the receive was abandoned): the sender's send completes as after a read. Does nothing
 * to an op that was not lent. */
ucoll_status_t shm_release(shm_chan_t *ch, tp_op_t *op, int used);
/* Writes into the receiver ("offers"). A receive posted ahead of its round may offer its buffer,
 * where that lies in a region of this process (ucoll_mem_alloc) and the message goes by single
 * copy: the sender, if it claims the offer before it sends, writes the message straight into
 * the buffer while it computes it (one pass instead of a write and the receiver's copy) and
 * sends nothing. Failure safety as for single copy: the receive completes only on DONE, which
 * a dead or stopped writer never stores.
 *
 * shm_recv_offer: as shm_recv, with the offer sent ahead; 1 if posted so, 0 if nothing was
 * posted (no region, no cell or slot free, the message already here). The receive completes
 * OK once the sender has written it all, or as any receive if the sender sends the message. */
int shm_recv_offer(shm_chan_t *ch, int peer, void *buf, uint64_t tag, uint64_t checked,
                   tp_op_t *op);
/* the sender's side: peer's offer of a receive that a message of len bytes with this tag
 * matches, claimed: where to write those bytes (*handle for shm_write_done); NULL if none */
void *shm_write_target(shm_chan_t *ch, int peer, uint64_t tag, size_t len, void **handle);
/* the bytes are written: completes the receive. valid 0: they must not count (what they were
 * computed from turned out to have changed), the receive fails. OK, or PEER_FAILED if the
 * receiver gave up waiting for them (its receive failed) or valid was 0 */
ucoll_status_t shm_write_done(shm_chan_t *ch, int peer, void *handle, int valid);
/* 1 while the claim still holds (the receiver has not given up on it): a writer stops early
 * once it is 0 */
int shm_write_claimed(const shm_chan_t *ch, int peer, const void *handle);
/* takes an incomplete op off its list: it will not complete. A single-copy send in flight is
 * taken back (its receiver's read then fails, or has already succeeded). */
void shm_cancel(shm_chan_t *ch, tp_op_t *op);
/* removes an arrived, unmatched message from peer that a receive of this tag would match;
 * 1 if there was one (the router's crossed-message check) */
int shm_take_unexpected(shm_chan_t *ch, int peer, uint64_t tag, uint64_t checked);
/* reads arrived messages, retries waiting sends; returns how many completed */
unsigned shm_progress(shm_chan_t *ch);

/* tests only: counters of the pair with peer (both directions) start at `start`, and the slots
 * of peer's ring hold the sequence numbers they would by then, so that a test can cross the
 * 2^32 wrap; before any message to or from peer */
void shm_test_start_counts(shm_chan_t *ch, int peer, uint32_t start);

/* messages sent and received through shm, and of those received, how many arrived before
 * their receive was posted; rings: peers' rings this rank has mapped to write into (for tests
 * and tools) */
typedef struct {
    unsigned long long sent, received, unexpected, rings;
    unsigned long long copies_sent, copies_read;     /* single copy: descriptors sent, data read */
    unsigned long long copies_mapped, copies_lent;   /* of the reads: by memcpy from a mapped
                                                      * region, and lent in place */
    unsigned long long offers_sent, offers_received; /* receivers' buffers offered */
    unsigned long long copies_written, writes_taken; /* messages written into offered buffers,
                                                      * as the sender and as the receiver */
    /* offers withdrawn while a live writer still held its claim (it stopped for over 2 s): that
     * writer may yet write a block into the offered buffer */
    unsigned long long writes_outrun;
} shm_stats_t;
/* 1 if process pid no longer runs: gone, or a zombie not yet reaped by its parent */
int shm_process_gone(long pid);
void shm_get_stats(const shm_chan_t *ch, shm_stats_t *stats);
/* its writes_outrun alone (0 without a channel): read at every collective's start and end */
unsigned long long shm_writes_outrun(const shm_chan_t *ch);

#endif
