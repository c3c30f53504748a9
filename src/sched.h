/*
 * Schedules: an algorithm is a pure function (rank, size, count, element size, params) ->
 * schedule. A schedule is the list of steps ONE process performs:
 *   - XCHG: one communication round: at most one send and at most one receive, to/from
 *     possibly different peers (one-ported simultaneous send-receive). `round` is the global
 *     round index; a message's sender and receiver use the same round index for it.
 *   - COPY:   dst <- src                       (costs no (+))
 *   - REDUCE: dst <- src (+) dst               (one (+) application; src covers lower ranks
 *                                               than dst whenever order matters)
 * Steps run in order; the send region of an XCHG is read and its receive region written only
 * while that XCHG is in progress. Regions name abstract buffers and are counted in elements.
 * Nothing here knows about UCX: the real executor (src/exec.c) and the symbolic executor
 * (src/symbolic.c) run the same schedules.
 */
#ifndef UCOLL_SCHED_H
#define UCOLL_SCHED_H

#include <stddef.h>
#include <stdint.h>

/* abstract buffers a step refers to */
typedef enum {
    SCHED_BUF_IN = 0,   /* the process's input vector V (read-only; count elements) */
    SCHED_BUF_OUT = 1,  /* the user's result buffer (count elements; bcast: the data buffer) */
    SCHED_BUF_ACC = 2,  /* scratch */
    SCHED_BUF_TMP = 3,  /* scratch */
    SCHED_BUF_TMP2 = 4, /* scratch */
    SCHED_NBUFS = 5
} sched_buf_t;
#define SCHED_FIRST_SCRATCH SCHED_BUF_ACC

typedef struct {
    uint8_t buf;  /* sched_buf_t */
    size_t off;   /* first element */
    size_t count; /* elements */
} sched_region_t;

typedef enum { SCHED_XCHG, SCHED_COPY, SCHED_REDUCE } sched_step_kind_t;

typedef struct {
    uint8_t kind;        /* sched_step_kind_t */
    uint32_t round;      /* XCHG: global round index */
    int32_t send_peer;   /* XCHG: rank to send to, -1 = no send */
    int32_t recv_peer;   /* XCHG: rank to receive from, -1 = no receive */
    sched_region_t send; /* XCHG: what is sent */
    sched_region_t recv; /* XCHG: where the received message lands */
    sched_region_t src;  /* COPY/REDUCE */
    sched_region_t dst;  /* COPY/REDUCE */
} sched_step_t;

struct sched {
    sched_step_t *steps;
    size_t nsteps, cap;
    size_t scratch[SCHED_NBUFS]; /* elements each scratch buffer must hold */
    uint32_t nrounds;            /* 1 + highest round index of any XCHG here (0: none) */
    int failed;                  /* an allocation failed while building */
};

/*
 * What a builder is given. For the block collectives `count` is c, the elements of one block,
 * and IN / OUT hold (p ranks, elements; "-" = the buffer does not exist on that rank and no step
 * may name it):
 *   allgather             IN c                       OUT p*c, rank r's block at r*c
 *   allgatherv            IN count                   OUT rank r's block at recv_displs[r],
 *                                                        recv_counts[r] elements
 *   reduce_scatter_block  IN p*c, block j at j*c      OUT c: the (+) of every rank's block r
 *   reduce_scatter        IN the blocks back to back, block j recv_counts[j] elements
 *                                                    OUT recv_counts[r]
 *   alltoall              IN p*c, block j for rank j OUT p*c, block i from rank i
 *   alltoallv             IN block j at send_displs[j], send_counts[j] elements
 *                                                    OUT block i at recv_displs[i], recv_counts[i]
 *   gather                IN c                       OUT root: p*c; others: -
 *   gatherv               IN count                   OUT root: as allgatherv's; others: -
 *   scatter               IN root: p*c; others: -    OUT c
 *   scatterv              IN root: block j at send_displs[j], send_counts[j] elements;
 *                            others: -               OUT count
 * The count arrays are the ones this rank passed (indexed by comm rank; NULL where the
 * collective has none or the rank's are not significant, e.g. gatherv's on a non-root).
 * UCOLL_IN_PLACE never reaches a builder: the executor copies the rank's input out of the user's
 * receive buffer into IN first (scatter's root: OUT is scratch).
 */
/*
 * Which host each rank of a communicator runs on, for the node-aware forms (hier_*.c). Hosts are
 * numbered 0..nhosts-1 in the order of their lowest rank; ranks_by_host lists every rank, host
 * by host, ascending within a host: host h's ranks are ranks_by_host[host_start[h] ..
 * host_start[h + 1]). `contiguous`: ranks_by_host is 0, 1, ..., p-1 (every host's ranks are
 * consecutive), the layout under which the node-aware forms keep operand order.
 */
typedef struct {
    int size, nhosts, max_per_host, contiguous;
    int *host_of;       /* comm rank -> host */
    int *host_start;    /* nhosts + 1 entries */
    int *ranks_by_host; /* size entries */
} sched_hosts_t;

typedef struct sched sched_t;
typedef struct sched_args sched_args_t;
/* returns 0, or -1 when the schedule cannot be built (sched->failed set on no memory) */
typedef int (*sched_build_fn_t)(sched_t *sched, const sched_args_t *args);

struct sched_args {
    int rank, size;   /* in the communicator */
    int root;         /* reduce, bcast, gather(v), scatter(v) */
    size_t count;     /* elements of the vector, or of one block (see above) */
    size_t elem_size; /* bytes per element */
    int param;        /* algorithm parameter (doubling q'), 0 = none */
    int commutative;  /* the op is commutative */
    const size_t *send_counts, *send_displs; /* v forms, elements per comm rank */
    const size_t *recv_counts, *recv_displs;
    /* the node-aware forms only (NULL elsewhere): the comm's hosts, and the algorithm (and its
     * parameter) the leaders, one per host, run among themselves */
    const sched_hosts_t *hosts;
    sched_build_fn_t leaders_build;
    int leaders_param;
    /* their local phases' reduce and bcast (NULL: binomial) */
    sched_build_fn_t local_reduce_build, local_bcast_build;
};

static inline sched_region_t sched_region(int buf, size_t off, size_t count)
{
    sched_region_t r = {(uint8_t)buf, off, count};
    return r;
}
/* the whole vector of one buffer */
#define SCHED_WHOLE(buf, args) sched_region((buf), 0, (args)->count)

void sched_init(sched_t *sched);
void sched_clear(sched_t *sched); /* keeps the allocation for reuse */
void sched_destroy(sched_t *sched);
/* append steps; each records needed scratch sizes and nrounds */
void sched_copy(sched_t *sched, sched_region_t src, sched_region_t dst);
void sched_reduce(sched_t *sched, sched_region_t src, sched_region_t dst);
/* one round: send `send` to send_peer (-1: none), receive into `recv` from recv_peer (-1: none) */
void sched_xchg(sched_t *sched, uint32_t round, int send_peer, sched_region_t send, int recv_peer,
                sched_region_t recv);
void sched_send(sched_t *sched, uint32_t round, int peer, sched_region_t send);
void sched_recv(sched_t *sched, uint32_t round, int peer, sched_region_t recv);

/* H from any host identifiers per rank (equal: same host); -1 on no memory (H then empty) */
int sched_hosts_init(sched_hosts_t *H, int size, const int *host_id);
void sched_hosts_free(sched_hosts_t *H);

int sched_regions_overlap(sched_region_t a, sched_region_t b);
int sched_same_region(sched_region_t a, sched_region_t b);
/* 1 unless the steps from `from` on overwrite region r (one XCHG receive or COPY covering it)
 * before any of them reads it: a region a lent message never lands in must not be read */
int sched_region_read_later(const sched_t *sched, size_t from, sched_region_t r);
/* 1 if step pc is an XCHG whose received message the next step, a REDUCE, may read in place
 * (lent the sender's bytes under single copy from regions, src/exec.c): the receive region is
 * that REDUCE's dst, or scratch that nothing later reads as its src (IN and OUT are the
 * caller's to see, so they must hold the bytes); the REDUCE's src and dst do not overlap, and
 * its dst does not overlap the round's send. The executor lends such a receive unless it
 * posted it early with an offer (offer_later_receive), which spares the receiver's copy too
 * when the sender's (+) writes into it */
int sched_receive_lendable(const sched_t *sched, size_t pc);

/* ceil(log2(n)) for n >= 1 */
unsigned sched_ceil_log2(uint64_t n);

#endif
