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
 * line before it can write it). Peers map only their own ring of each segment, found through
 * /proc/<pid>/fd/<fd> of the owner (both learnt in ucoll_init's first exchange).
 *
 * Matching is by tag as with UCX: a message is matched against the receives posted for its
 * sender (tag bits in `checked` left out, then compared, like tp_irecv); one that arrives
 * before its receive is copied to the sender's unexpected list. A send finds its slot free or
 * waits in the sender's pending list, which progress drains. A dead peer is noticed by the
 * transport's process-id probes, as for UCX's shared memory.
 */
#ifndef UCOLL_SHM_H
#define UCOLL_SHM_H

#include "transport.h"

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
};

typedef struct shm_chan shm_chan_t;

/* this process's segment, before the first exchange: a memfd descriptor, -1 if none */
int shm_segment_create(void);

/* sizes the own segment `fd` (taken over: closed by shm_destroy) for the ranks of this host and
 * maps this rank's ring in each of their segments. local_pid[i] > 0 marks rank i as on this
 * host; local_fd[i] is its segment's descriptor in that process. Fails (and prints why) if any
 * segment cannot be mapped: the caller then goes without. */
ucoll_status_t shm_attach(int rank, int nranks, int fd, const long *local_pid, const int *local_fd,
                          shm_chan_t **out);
/* peer takes part (both sides attached); until then it is not reached through shm */
void shm_enable_peer(shm_chan_t *ch, int peer);
static inline int shm_reaches(const shm_chan_t *ch, int peer, size_t len);
void shm_destroy(shm_chan_t *ch);

/* as tp_isend / tp_irecv (op set up by the caller: tp, peer, expected); the op may be done at
 * return */
void shm_send(shm_chan_t *ch, int peer, const void *buf, size_t len, uint64_t tag, tp_op_t *op);
void shm_recv(shm_chan_t *ch, int peer, void *buf, uint64_t tag, uint64_t checked, tp_op_t *op);
/* takes an incomplete op off its list: it will not complete */
void shm_cancel(shm_chan_t *ch, tp_op_t *op);
/* removes an arrived, unmatched message from peer that a receive of this tag would match;
 * 1 if there was one (tp_check_crossed) */
int shm_take_unexpected(shm_chan_t *ch, int peer, uint64_t tag, uint64_t checked);
/* reads arrived messages, retries waiting sends; returns how many completed */
unsigned shm_progress(shm_chan_t *ch);

/* tests only: counters of the pair with peer (both directions) start at `start`, and the slots
 * of peer's ring hold the sequence numbers they would by then, so that a test can cross the
 * 2^32 wrap; before any message to or from peer */
void shm_test_start_counts(shm_chan_t *ch, int peer, uint32_t start);

/* messages sent and received through shm, and of those received, how many arrived before
 * their receive was posted (for tests and tools) */
typedef struct {
    unsigned long long sent, received, unexpected;
} shm_stats_t;
void shm_get_stats(const shm_chan_t *ch, shm_stats_t *stats);

/* ---- inline: the check on every send and receive ---- */
struct shm_chan_head {
    unsigned char *enabled; /* per world rank: reached through shm */
};

static inline int shm_reaches(const shm_chan_t *ch, int peer, size_t len)
{
    return ch != NULL && len <= SHM_MAX_MESSAGE &&
           ((const struct shm_chan_head *)(const void *)ch)->enabled[peer];
}

#endif
