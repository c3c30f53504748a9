/*
 * ucoll: collective operations (exclusive scan, scan, reduce, allreduce, bcast, barrier, and the
 * block collectives: allgather(v), reduce_scatter(_block), alltoall(v), gather(v), scatter(v))
 * for programs that are not MPI programs. Bootstraps through PMIx (srun --mpi=pmix, prterun,
 * Open MPI's mpirun; a run without a launcher is a 1-rank job), through the caller's own
 * out-of-band allgather, or through a TCP store that rank 0 serves (no launcher, no PMIx), and
 * moves data with UCX UCP tagged messages.
 *
 * Version 1 of the API. Link with -lucoll (pkg-config name: ucoll).
 *
 * Semantics:
 * - Every collective is called by every rank of the communicator with the same count, dtype,
 *   op, root and algorithm choice. Collectives on one communicator are issued in the same
 *   order by every rank.
 * - Exscan: rank r receives V_0 (+) ... (+) V_(r-1). Rank 0's recvbuf is left untouched.
 * - Scan and Exscan need only associativity of (+): operands are always combined in rank
 *   order ("lower ranks on the left"). Reduce and allreduce algorithms that reorder operands
 *   are used only for commutative ops; a non-commutative op is routed to an order-preserving
 *   algorithm whatever algorithm is selected.
 * - UCOLL_IN_PLACE as sendbuf: the input is taken from recvbuf (for reduce: at the root).
 *   Otherwise sendbuf and recvbuf must not overlap: each spans count * element size bytes
 *   (reduce's recvbuf only at the root; bcast has one buffer); any overlapping byte is
 *   UCOLL_ERR_INVALID_ARG. Adjacent buffers are fine.
 * - Buffers need no alignment for their dtype (a user op is handed the caller's addresses,
 *   aligned or not).
 * - A user op must not call ucoll: every call made from inside one that returns a status
 *   returns UCOLL_ERR_STATE (ucoll_comm_rank, ucoll_comm_size, ucoll_strerror still answer).
 *   ucoll_op_free of a user op that a request not yet freed with ucoll_request_free refers
 *   to (persistent or nonblocking, active or complete), or that a blocking call of another
 *   thread is running with, returns UCOLL_ERR_STATE; the request or call keeps working with it.
 * - fork: a child of a process that called ucoll_init cannot use ucoll (its connections and
 *   shared-memory rings are the parent's): every call there that returns a status returns
 *   UCOLL_ERR_STATE and touches nothing, ucoll_finalize included. The parent goes on unaffected.
 * - Threads: ucoll_init_thread grants the level asked for. Up to SERIALIZED ucoll takes no
 *   lock (the caller keeps its calls apart). With UCOLL_THREAD_MULTIPLE any thread may call any
 *   function at any time. Calls take turns under one process-wide lock: a call waiting for a
 *   collective lets go of it between its progress passes when another thread wants in, and
 *   each pass advances every thread's collectives, so calls on different communicators
 *   proceed concurrently and never wait for each other. Collectives on one
 *   communicator must still be started in the same order on every rank (threads sharing one
 *   order it themselves); a request may be tested or waited for by any thread, but by one at
 *   a time, and freed by one only after its waits returned. A user op runs with the lock held
 *   (from inside one, ucoll refuses only that thread's calls): it must not wait for a thread
 *   that is calling ucoll. ucoll_init_thread and ucoll_finalize are called by one thread while
 *   no other is inside ucoll.
 *
 * - Logical ops (LAND, LOR, LXOR) give 0 or 1 wherever two operands were combined; where a
 *   result is one rank's own input (scan at rank 0, exscan at rank 1, a 1-rank reduce) it is
 *   that input unchanged, as in MPI.
 *
 * Errors. Every call reports through its status; ucoll itself never aborts or exits, and prints
 * (to stderr) only for bad UCOLL_* or UCX settings at init and at Limits. UCX aborts a process on
 * an error of an endpoint without UCX error handling (the default for peers on the same host,
 * which use shared memory). The one such error known, a peer dying while this process reads
 * its memory in a zero-copy rendezvous (CMA), cannot happen: ranks on the same host talk
 * through a UCP context of their own that uses no rendezvous. Setting UCX_RNDV_THRESH brings
 * rendezvous (and the risk) back there.
 * - ucoll_init compares across ranks the UCOLL_* settings that change what a rank sends (the
 *   UCOLL_<COLL>_ALG ones, UCOLL_SEGMENT_SIZE, the auto thresholds, UCOLL_ALPHA_US,
 *   UCOLL_BETA_NS_PER_BYTE, UCOLL_GAMMA_NS_PER_BYTE, UCOLL_CHECK; UCOLL_FAILURE_DETECTION when
 *   connecting): any that differ are named on stderr on every rank, and every rank's
 *   ucoll_init returns UCOLL_ERR_INVALID_ARG.
 * - UCOLL_ERR_INVALID_ARG, found on the calling rank before anything is sent: NULL buffers
 *   with count > 0 (a reduce's recvbuf may be NULL off the root), UCOLL_IN_PLACE without a
 *   recvbuf, an unknown dtype or op (a freed user op included), a bitwise or logical op on
 *   a floating type, AVG on an integer type or with exscan or scan, a root out of range,
 *   count * element size beyond SIZE_MAX, a NULL or foreign comm or request, a NULL request
 *   pointer, an unknown algorithm name. The call does nothing: no byte of any buffer and no
 *   *req is written, nothing is sent, and the same communicator works afterwards. Because the
 *   check is local, a call that is bad on some ranks only (a NULL recvbuf at the root alone)
 *   leaves the communicator out of step: its later collectives may fail, time out or deliver
 *   wrong data.
 * - UCOLL_ERR_STATE: any call from inside a user op or in a forked child (see above), freeing
 *   a user op a request refers to; use after ucoll_finalize or ucoll_comm_free (a freed
 *   communicator is recognised while it is among the last 1024 freed; older ones are released,
 *   and using them is undefined, as with any freed object), a second ucoll_init or
 *   ucoll_finalize, ucoll_start of a nonblocking or still active request, ucoll_request_free
 *   of an active one. Before ucoll_init there is no communicator: a NULL comm is INVALID_ARG.
 * - Errors of a collective in flight; a nonblocking one reports them from ucoll_test or
 *   ucoll_wait (its request still needs ucoll_request_free):
 *   UCOLL_ERR_PEER_FAILED  a rank of the communicator is known to be dead or unreachable.
 *       How (UCOLL_FAILURE_DETECTION): by default a rank on the same host is watched through
 *       its process id while a wait lasts (a vanished or zombie process is seen within about
 *       20 ms; shared memory stays in use), a rank on another host by UCX peer error handling
 *       (connection reset: a fraction of a second; a silent host: UCX_KEEPALIVE_INTERVAL).
 *       `ucx` uses UCX peer error handling for every rank (UCX 1.13 then talks TCP even on one
 *       host), `timeout` none at all. A process that hangs is not noticed: only UCOLL_TIMEOUT
 *       ends the wait.
 *   UCOLL_ERR_TIMED_OUT  the collective made no progress for UCOLL_TIMEOUT seconds
 *       (environment; unset or inf = wait forever) of time spent inside ucoll: the clock
 *       starts at the blocking call, ucoll_i* or ucoll_start, starts again whenever a round
 *       of its schedule completes, and stops while the caller is outside ucoll. So a blocking
 *       call gives up after UCOLL_TIMEOUT seconds without progress; a nonblocking or
 *       persistent one is charged only the time spent in ucoll_wait, ucoll_test and other
 *       ucoll calls, so computing between the post and the wait costs nothing, and a request
 *       whose messages arrived completes with UCOLL_OK however late it is waited for.
 *       Without UCOLL_TIMEOUT, a rank that waits for a rank that gave up (after TRUNCATED, or
 *       a TIMED_OUT of its own) or for one that hangs waits forever.
 *   UCOLL_ERR_TRUNCATED  a message of another length than expected arrived: the ranks passed
 *       different counts or dtypes. The rank that receives it reports it; ranks that depend
 *       on that rank time out (UCOLL_TIMEOUT), and ranks that got all they needed return
 *       UCOLL_OK. Nothing is ever written outside a buffer's count.
 *   UCOLL_ERR_MISMATCH  only with UCOLL_CHECK=1 (environment, the same on every rank): each
 *       collective first compares its kind, count, dtype, op, root and algorithm across the
 *       ranks in one small allreduce of its own (nonblocking and persistent calls too, without
 *       blocking in ucoll_i* or ucoll_start). If any differ, every rank gets this status and a
 *       line on stderr naming the field; the collective sent nothing and wrote no buffer, and
 *       the communicator stays usable. Unset, there is no comparison and no extra message.
 *   UCOLL_ERR_TRANSPORT, UCOLL_ERR_NO_MEMORY  any other UCX failure; memory.
 *   After any of these, recvbuf holds undefined data within its count (sendbuf is never
 *   written), and other ranks may see another error or success. A failed call returns only
 *   once the messages it sent have left its buffers, waiting up to 2 s more for a live peer
 *   that has not taken them yet; if a peer takes longer (it is stopped, or computes for
 *   seconds without calling ucoll), UCX may still read the failed call's buffers later, so
 *   keep them until that peer has called ucoll again (or until ucoll_finalize).
 *   A collective that failed after it could have sent (PEER_FAILED, TIMED_OUT, TRUNCATED,
 *   TRANSPORT, NO_MEMORY while running) REVOKES its communicator on the rank that saw the error,
 *   world included: every later collective, ucoll_start and ucoll_comm_split on it there returns
 *   UCOLL_ERR_STATE and sends nothing; ucoll_comm_free, ucoll_comm_rank/size and the requests
 *   already in flight on it (they finish or fail as they would) still work. Its late messages may
 *   still arrive, so its communicator id is not reused by any communicator containing that rank
 *   until ucoll_finalize. Ranks that did not see the error go on; their next collective with the
 *   revoked rank fails (UCOLL_TIMEOUT) or, without a timeout, waits forever. After PEER_FAILED no
 *   collective on a communicator that contains the dead rank can complete; ucoll_finalize still
 *   returns promptly (with the error) and releases everything, so every surviving rank should call
 *   it, then exit.
 * - Limits (from the 64-bit message tag): at most 4094 communicators from ucoll_comm_split live at
 *   a time besides world, revoked ones counted until ucoll_finalize (beyond: ucoll_comm_split
 *   returns UCOLL_ERR_NOT_SUPPORTED on every rank, with a line on stderr); at most 131072 ranks
 *   (ucoll_init returns UCOLL_ERR_NOT_SUPPORTED); at most 255 rounds in a schedule (e.g. exscan
 *   `linear` on more than 256 ranks: UCOLL_ERR_NOT_SUPPORTED at the call or *_init) unless every
 *   message between two ranks falls in one round (alltoall(v) `pairwise`, gather(v) and
 *   scatter(v) `linear`: any number of ranks). A rank refuses to start
 *   a collective (UCOLL_ERR_STATE, nothing sent) while 4095 earlier ones on the same communicator
 *   are active on it, and revokes that communicator (as above: other ranks may have started the
 *   call, and their messages of it must never be taken by a later one); the requests in flight
 *   on it still complete.
 * - Launchers: Open MPI's mpirun ends the whole job when a rank dies by a signal unless run
 *   with --enable-recovery; with it the survivors get PEER_FAILED and mpirun ends when they
 *   have exited.
 */
#ifndef UCOLL_H
#define UCOLL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define UCOLL_VERSION_MAJOR 0
#define UCOLL_VERSION_MINOR 1
#define UCOLL_API_VERSION 1

/* status codes: 0 success, 1 in progress, negative errors */
typedef enum {
    UCOLL_OK = 0,
    UCOLL_INPROGRESS = 1,
    UCOLL_ERR_INVALID_ARG = -1,
    UCOLL_ERR_NO_MEMORY = -2,
    UCOLL_ERR_NOT_SUPPORTED = -3,
    UCOLL_ERR_BOOTSTRAP = -4,
    UCOLL_ERR_TRANSPORT = -5,
    UCOLL_ERR_PEER_FAILED = -6,
    UCOLL_ERR_TIMED_OUT = -7,
    UCOLL_ERR_TRUNCATED = -8,
    UCOLL_ERR_STATE = -9,
    UCOLL_ERR_MISMATCH = -10 /* ranks called one collective differently (UCOLL_CHECK=1) */
} ucoll_status_t;

/* A static, human-readable description of a status code (never NULL). */
const char *ucoll_strerror(ucoll_status_t status);

typedef enum {
    UCOLL_INT8,
    UCOLL_UINT8,
    UCOLL_INT16,
    UCOLL_UINT16,
    UCOLL_INT32,
    UCOLL_UINT32,
    UCOLL_INT64,
    UCOLL_UINT64,
    UCOLL_FLOAT32,
    UCOLL_FLOAT64,
    /* 16-bit floating types, held in the user's buffers as uint16_t bit patterns (no compiler
     * half type is needed): FLOAT16 is IEEE 754 binary16 (1 sign, 5 exponent, 10 fraction bits;
     * largest finite 65504), BFLOAT16 the upper half of a binary32 (1, 8, 7). (+) converts both
     * operands to float, combines them there and rounds the result once to the nearest value
     * of the type, ties to even (README, "Datatypes and ops", states the error bounds). */
    UCOLL_FLOAT16,
    UCOLL_BFLOAT16
} ucoll_dtype_t;

/* Predefined ops and handles returned by ucoll_op_create. Logical ops (LAND, LOR, LXOR) give
 * 0 or 1; bitwise (BAND, BOR, BXOR) and logical ops on the floating types (FLOAT16, BFLOAT16,
 * FLOAT32, FLOAT64) are UCOLL_ERR_INVALID_ARG.
 * AVG is the sum divided by the communicator's size: the collective sums, then each rank that
 * holds a result (every rank for allreduce and reduce_scatter(_block), the root for reduce)
 * divides it once, rounding once per element. Floating types only, and only for reduce,
 * allreduce and reduce_scatter(_block): AVG with an integer type, exscan or scan is
 * UCOLL_ERR_INVALID_ARG. The sum is carried in the dtype itself: a FLOAT16 sum beyond 65504
 * is Inf before it is divided (8 ranks averaging 10000 give Inf); BFLOAT16 has float's range. */
typedef int ucoll_op_t;
enum {
    UCOLL_OP_SUM,
    UCOLL_OP_PROD,
    UCOLL_OP_MIN,
    UCOLL_OP_MAX,
    UCOLL_OP_LAND,
    UCOLL_OP_LOR,
    UCOLL_OP_LXOR,
    UCOLL_OP_BAND,
    UCOLL_OP_BOR,
    UCOLL_OP_BXOR,
    UCOLL_OP_AVG
};

/* inout[i] = in[i] (+) inout[i]; `in` always covers lower ranks than `inout` */
typedef void (*ucoll_user_fn_t)(const void *in, void *inout, size_t count, ucoll_dtype_t dtype,
                                void *arg);
/* Create a user-defined op, usable with every dtype and every collective. A non-commutative
 * op (commutative == 0) is never reordered. Ops are process-local handles: create them in the
 * same order on every rank. */
ucoll_status_t ucoll_op_create(ucoll_user_fn_t fn, void *arg, int commutative, ucoll_op_t *op);
/* UCOLL_ERR_STATE while a request not yet freed refers to op; INVALID_ARG if op is no live
 * user op */
ucoll_status_t ucoll_op_free(ucoll_op_t op);
/* States the cost of one application of a user op, in nanoseconds per byte of the vector, for
 * the cost model of `auto` (README, "Algorithm choice"). Without it the op is assumed to cost
 * as much as the costliest predefined op on the same dtype (measured at init). Call it with the
 * same value on every rank. */
ucoll_status_t ucoll_op_set_cost(ucoll_op_t op, double ns_per_byte);

typedef struct ucoll_comm ucoll_comm_t;
typedef struct ucoll_request ucoll_request_t;
#define UCOLL_IN_PLACE ((const void *)-1) /* as sendbuf: input taken from recvbuf/buf */

/* One call per process; PMIx bootstrap (srun --mpi=pmix, prterun, mpirun; singleton = 1 rank),
 * or the store's (as ucoll_init_store) when UCOLL_STORE=HOST:PORT, UCOLL_RANK and UCOLL_SIZE
 * are all set: some of the three set but not all, or a rank or size that is not a plain
 * decimal number, is UCOLL_ERR_INVALID_ARG with a line on stderr. A build configured
 * --without-pmix returns UCOLL_ERR_NOT_SUPPORTED without the store's variables.
 * A second ucoll_init in the same process, also after ucoll_finalize, gives UCOLL_ERR_STATE
 * (PMIx cannot be initialised twice reliably). */
ucoll_status_t ucoll_init(ucoll_comm_t **world);

/* bootstrap through the caller's runtime instead of PMIx */
typedef struct {
    int (*allgather)(const void *src, void *dst, size_t len, void *ctx); /* 0 = success */
    void *ctx;
    int rank, size;
} ucoll_oob_t;
ucoll_status_t ucoll_init_oob(const ucoll_oob_t *oob, ucoll_comm_t **world);

/* bootstrap with neither PMIx nor the caller's runtime (torchrun/NCCL style): rank 0 serves
 * `address` ("HOST:PORT"), every rank connects to it. ucoll_init does the same when
 * UCOLL_STORE=HOST:PORT, UCOLL_RANK and UCOLL_SIZE are set.
 * Every rank passes the same address and size and its own rank. HOST is a name or address of
 * rank 0's machine ("[::1]" for IPv6) that rank 0 binds (127.0.0.1 serves this machine only);
 * the port must be free there. Ranks may start in any order: each retries until rank 0
 * serves, and every wait of the store is bounded by UCOLL_TIMEOUT (unset or inf: 60 s).
 * After the allgathers of init the connections stay open, idle, until ucoll_finalize.
 * Errors, with a line on stderr naming the problem: UCOLL_ERR_INVALID_ARG for a NULL or
 * malformed address, a rank outside 0..size-1, and, on every rank that has joined, ranks that
 * disagree on the size or two processes with one rank; UCOLL_ERR_BOOTSTRAP when rank 0 cannot
 * serve the address (in use) or a rank drops out; UCOLL_ERR_TIMED_OUT when rank 0 is not
 * serving, or not every rank has joined, within the timeout. A refused call keeps nothing: the
 * process may call it (or another init) again. Unlike ucoll_init, it may be called again after
 * ucoll_finalize. */
ucoll_status_t ucoll_init_store(const char *address, int rank, int size, ucoll_comm_t **world);

/* thread levels, as MPI's; ucoll_init and ucoll_init_oob mean UCOLL_THREAD_SINGLE */
typedef enum {
    UCOLL_THREAD_SINGLE,     /* one thread in the process */
    UCOLL_THREAD_FUNNELED,   /* several, only the one that called init calls ucoll */
    UCOLL_THREAD_SERIALIZED, /* any thread calls ucoll, never two at the same time */
    UCOLL_THREAD_MULTIPLE    /* any thread, any time (see "Threads" above) */
} ucoll_thread_level_t;
/* init with a thread level: oob == NULL bootstraps as ucoll_init (PMIx or the store's
 * variables), else as ucoll_init_oob. *provided (may be lower than required) is the level granted;
 * every level asked for is provided. */
ucoll_status_t ucoll_init_thread(const ucoll_oob_t *oob, ucoll_thread_level_t required,
                                 ucoll_thread_level_t *provided, ucoll_comm_t **world);
/* Collective over the world communicator; frees it and every communicator split from it.
 * With UCOLL_STATS=1 it prints, after its barrier, one line per rank on stderr:
 *   ucoll stats rank R: endpoints E, rings S, address_lookups A, messages_ucx U, messages_shm M
 * E: UCX endpoints created (peers are connected on first use: the distinct peers this rank's
 * collectives, the finalize barrier included, sent to or received from); S: on-host peers'
 * rings mapped (peers sent a message of at most 4096 bytes through them); A: peer addresses
 * fetched from PMIx (0 with ucoll_init_oob: the init allgather brought them); U, M: messages
 * (segments) this rank posted for sending through UCX and through the on-host rings.
 * After a member of world died (its barrier fails: UCOLL_ERR_PEER_FAILED), the survivors wait
 * up to 2 s for each other here (within UCOLL_TIMEOUT) before any closes its connections, so
 * that none fails the collectives other survivors still run on a shrunk communicator. */
ucoll_status_t ucoll_finalize(ucoll_comm_t *world);

/* Memory the other ranks of this host can read in place: a collective whose buffers lie in it
 * (on the ranks that send them) moves its large on-host messages by one memcpy instead of a
 * kernel copy, and its reductions read the sender's bytes without copying them first (see
 * README, "Buffers from ucoll_mem_alloc"). Any other buffer works as before. Callable with or
 * without an initialized ucoll, from any thread; the memory is zero-filled, page-aligned and
 * stays valid until ucoll_mem_free (not freed by ucoll_finalize). bytes 0 or ptr NULL:
 * INVALID_ARG; NO_MEMORY; NOT_SUPPORTED where the system has no memfd. ucoll_mem_free of
 * anything but a pointer ucoll_mem_alloc returned (and not freed since): INVALID_ARG. */
ucoll_status_t ucoll_mem_alloc(size_t bytes, void **ptr);
ucoll_status_t ucoll_mem_free(void *ptr);

/* rank/size of the calling process in comm; -1 for a NULL or finalized comm */
int ucoll_comm_rank(const ucoll_comm_t *comm);
int ucoll_comm_size(const ucoll_comm_t *comm);
ucoll_status_t ucoll_comm_split(ucoll_comm_t *comm, int color, int key, ucoll_comm_t **newcomm);
ucoll_status_t ucoll_comm_free(ucoll_comm_t *comm);
/* After a failure (UCOLL_ERR_PEER_FAILED, or TIMED_OUT): collective over the members of comm
 * that are alive, revoked or not. They agree on the members found failed and get, each,
 * *newcomm: the others, ranks renumbered in comm's order, comm's algorithm choices. Members
 * that fail during the call are left out or, if they failed after the agreement, stay in (a
 * collective on *newcomm then fails with PEER_FAILED: shrink again). Every member that gets
 * OK gets the same communicator; a member that the others found failed gets PEER_FAILED. The
 * agreement keeps running inside later ucoll calls, answering members that are still in it.
 * Bounded by UCOLL_TIMEOUT (TIMED_OUT). comm itself stays as it was (ucoll_comm_free it). */
ucoll_status_t ucoll_comm_shrink(ucoll_comm_t *comm, ucoll_comm_t **newcomm);

/* algorithm choice, collectively and with equal arguments on every rank; "auto" = default.
 * Also read at init from UCOLL_EXSCAN_ALG, UCOLL_SCAN_ALG, UCOLL_REDUCE_ALG,
 * UCOLL_ALLREDUCE_ALG, UCOLL_BCAST_ALG, UCOLL_BARRIER_ALG and UCOLL_<NAME>_ALG of each block
 * collective (UCOLL_ALLGATHER_ALG, UCOLL_REDUCE_SCATTER_BLOCK_ALG, ...). Unknown name ->
 * INVALID_ARG. An algorithm for powers of two only (recursive-doubling of allgather,
 * recursive-halving), chosen on a communicator of another size, is replaced there by auto's
 * choice, as a reordering one is for a non-commutative op. */
typedef enum {
    UCOLL_COLL_EXSCAN,
    UCOLL_COLL_SCAN,
    UCOLL_COLL_REDUCE,
    UCOLL_COLL_ALLREDUCE,
    UCOLL_COLL_BCAST,
    UCOLL_COLL_BARRIER,
    UCOLL_COLL_ALLGATHER,
    UCOLL_COLL_ALLGATHERV,
    UCOLL_COLL_REDUCE_SCATTER_BLOCK,
    UCOLL_COLL_REDUCE_SCATTER,
    UCOLL_COLL_ALLTOALL,
    UCOLL_COLL_ALLTOALLV,
    UCOLL_COLL_GATHER,
    UCOLL_COLL_GATHERV,
    UCOLL_COLL_SCATTER,
    UCOLL_COLL_SCATTERV
} ucoll_coll_t;
ucoll_status_t ucoll_set_algorithm(ucoll_comm_t *comm, ucoll_coll_t coll, const char *alg);

/* blocking collectives */
ucoll_status_t ucoll_exscan(ucoll_comm_t *comm, const void *sendbuf, void *recvbuf, size_t count,
                            ucoll_dtype_t dtype, ucoll_op_t op);
ucoll_status_t ucoll_scan(ucoll_comm_t *comm, const void *sendbuf, void *recvbuf, size_t count,
                          ucoll_dtype_t dtype, ucoll_op_t op);
/* recvbuf is significant only at the root */
ucoll_status_t ucoll_reduce(ucoll_comm_t *comm, const void *sendbuf, void *recvbuf, size_t count,
                            ucoll_dtype_t dtype, ucoll_op_t op, int root);
ucoll_status_t ucoll_allreduce(ucoll_comm_t *comm, const void *sendbuf, void *recvbuf, size_t count,
                               ucoll_dtype_t dtype, ucoll_op_t op);
ucoll_status_t ucoll_bcast(ucoll_comm_t *comm, void *buf, size_t count, ucoll_dtype_t dtype,
                           int root);
ucoll_status_t ucoll_barrier(ucoll_comm_t *comm);

/* nonblocking: same arguments plus a request, progressed by ucoll_test/ucoll_wait */
ucoll_status_t ucoll_iexscan(ucoll_comm_t *comm, const void *sendbuf, void *recvbuf, size_t count,
                             ucoll_dtype_t dtype, ucoll_op_t op, ucoll_request_t **req);
ucoll_status_t ucoll_iscan(ucoll_comm_t *comm, const void *sendbuf, void *recvbuf, size_t count,
                           ucoll_dtype_t dtype, ucoll_op_t op, ucoll_request_t **req);
ucoll_status_t ucoll_ireduce(ucoll_comm_t *comm, const void *sendbuf, void *recvbuf, size_t count,
                             ucoll_dtype_t dtype, ucoll_op_t op, int root, ucoll_request_t **req);
ucoll_status_t ucoll_iallreduce(ucoll_comm_t *comm, const void *sendbuf, void *recvbuf,
                                size_t count, ucoll_dtype_t dtype, ucoll_op_t op,
                                ucoll_request_t **req);
ucoll_status_t ucoll_ibcast(ucoll_comm_t *comm, void *buf, size_t count, ucoll_dtype_t dtype,
                            int root, ucoll_request_t **req);
ucoll_status_t ucoll_ibarrier(ucoll_comm_t *comm, ucoll_request_t **req);

/* persistent: *_init once, ucoll_start many times, ucoll_request_free at the end */
ucoll_status_t ucoll_exscan_init(ucoll_comm_t *comm, const void *sendbuf, void *recvbuf,
                                 size_t count, ucoll_dtype_t dtype, ucoll_op_t op,
                                 ucoll_request_t **req);
ucoll_status_t ucoll_scan_init(ucoll_comm_t *comm, const void *sendbuf, void *recvbuf, size_t count,
                               ucoll_dtype_t dtype, ucoll_op_t op, ucoll_request_t **req);
ucoll_status_t ucoll_reduce_init(ucoll_comm_t *comm, const void *sendbuf, void *recvbuf,
                                 size_t count, ucoll_dtype_t dtype, ucoll_op_t op, int root,
                                 ucoll_request_t **req);
ucoll_status_t ucoll_allreduce_init(ucoll_comm_t *comm, const void *sendbuf, void *recvbuf,
                                    size_t count, ucoll_dtype_t dtype, ucoll_op_t op,
                                    ucoll_request_t **req);
ucoll_status_t ucoll_bcast_init(ucoll_comm_t *comm, void *buf, size_t count, ucoll_dtype_t dtype,
                                int root, ucoll_request_t **req);
/* ---------------------------------------------------------------------------------------------
 * Block collectives. Counts and displacements are in elements of dtype; a displacement is where
 * a block starts in its buffer. Every rank passes the same count (or, for the v forms, count
 * arrays that agree with the other ranks' as in MPI), dtype, op and root. UCOLL_IN_PLACE follows
 * MPI: where it is allowed it is passed as sendbuf (scatter and scatterv: as recvbuf at the
 * root), and it is UCOLL_ERR_INVALID_ARG anywhere else (at a non-root of gather(v) and
 * scatter(v), as sendbuf of scatter(v)). Count arrays are read during the call only (ucoll keeps
 * its own copy): a persistent request keeps the counts it was created with.
 * UCOLL_ERR_INVALID_ARG also for: a NULL count or displacement array this rank must read (at the
 * root only for gatherv's receive and scatterv's send arrays), a count or buffer extent
 * (displacement + count, times the element size; or a sum of counts) beyond SIZE_MAX, a
 * sendcount that differs from recvcounts[rank] where both describe this rank's own block
 * (allgatherv, gatherv at the root, scatterv at the root, alltoallv's block to itself), and a
 * send buffer overlapping the receive buffer (each spanning its extent) other than through
 * UCOLL_IN_PLACE.
 * Under UCOLL_CHECK the ranks compare the count (fixed-size forms) or a hash of recvcounts
 * (allgatherv, reduce_scatter); the per-rank counts of gatherv, scatterv and alltoallv are not
 * compared. Algorithm names: `ucoll_info -a`; auto decides from the size of one block (of the
 * average block for allgatherv and reduce_scatter; gatherv, scatterv and alltoallv, whose counts
 * no rank knows in full, from the communicator size alone).
 */

/* recvbuf holds size*count elements, rank r's block at r*count; IN_PLACE: own block in place */
ucoll_status_t ucoll_allgather(ucoll_comm_t *comm, const void *sendbuf, void *recvbuf, size_t count,
                               ucoll_dtype_t dtype);
/* rank r's sendcount (== recvcounts[r]) elements land at displs[r] of every recvbuf;
 * IN_PLACE: own block already at displs[rank] */
ucoll_status_t ucoll_allgatherv(ucoll_comm_t *comm, const void *sendbuf, size_t sendcount,
                                void *recvbuf, const size_t *recvcounts, const size_t *displs,
                                ucoll_dtype_t dtype);
/* sendbuf holds size*recvcount elements; rank r gets the reduction of block r;
 * IN_PLACE: the input is recvbuf (size*recvcount elements), the result its first block */
ucoll_status_t ucoll_reduce_scatter_block(ucoll_comm_t *comm, const void *sendbuf, void *recvbuf,
                                          size_t recvcount, ucoll_dtype_t dtype, ucoll_op_t op);
/* sendbuf holds the blocks back to back, block j recvcounts[j] elements; rank r gets the
 * reduction of block r; IN_PLACE: the input is recvbuf, the result at its start */
ucoll_status_t ucoll_reduce_scatter(ucoll_comm_t *comm, const void *sendbuf, void *recvbuf,
                                    const size_t *recvcounts, ucoll_dtype_t dtype, ucoll_op_t op);
/* block j of rank i's sendbuf ends as block i of rank j's recvbuf (size*count elements each);
 * IN_PLACE: recvbuf is the input too */
ucoll_status_t ucoll_alltoall(ucoll_comm_t *comm, const void *sendbuf, void *recvbuf, size_t count,
                              ucoll_dtype_t dtype);
/* sendcounts[j] elements at sdispls[j] go to rank j, recvcounts[i] from rank i land at
 * rdispls[i]; IN_PLACE: sendcounts and sdispls are ignored, recvbuf is the input, laid out by
 * recvcounts and rdispls */
ucoll_status_t ucoll_alltoallv(ucoll_comm_t *comm, const void *sendbuf, const size_t *sendcounts,
                               const size_t *sdispls, void *recvbuf, const size_t *recvcounts,
                               const size_t *rdispls, ucoll_dtype_t dtype);
/* the root's recvbuf (size*count elements; ignored elsewhere) gets rank r's block at r*count;
 * IN_PLACE (root only): the root's own block already in place */
ucoll_status_t ucoll_gather(ucoll_comm_t *comm, const void *sendbuf, void *recvbuf, size_t count,
                            ucoll_dtype_t dtype, int root);
/* recvbuf, recvcounts and displs significant at the root only */
ucoll_status_t ucoll_gatherv(ucoll_comm_t *comm, const void *sendbuf, size_t sendcount,
                             void *recvbuf, const size_t *recvcounts, const size_t *displs,
                             ucoll_dtype_t dtype, int root);
/* the root's sendbuf (size*count elements; ignored elsewhere): block r goes to rank r's recvbuf;
 * recvbuf IN_PLACE (root only): the root's own block stays where it is in sendbuf */
ucoll_status_t ucoll_scatter(ucoll_comm_t *comm, const void *sendbuf, void *recvbuf, size_t count,
                             ucoll_dtype_t dtype, int root);
/* sendbuf, sendcounts and displs significant at the root only */
ucoll_status_t ucoll_scatterv(ucoll_comm_t *comm, const void *sendbuf, const size_t *sendcounts,
                              const size_t *displs, void *recvbuf, size_t recvcount,
                              ucoll_dtype_t dtype, int root);

ucoll_status_t ucoll_iallgather(ucoll_comm_t *comm, const void *sendbuf, void *recvbuf,
                                size_t count, ucoll_dtype_t dtype, ucoll_request_t **req);
ucoll_status_t ucoll_iallgatherv(ucoll_comm_t *comm, const void *sendbuf, size_t sendcount,
                                 void *recvbuf, const size_t *recvcounts, const size_t *displs,
                                 ucoll_dtype_t dtype, ucoll_request_t **req);
ucoll_status_t ucoll_ireduce_scatter_block(ucoll_comm_t *comm, const void *sendbuf, void *recvbuf,
                                           size_t recvcount, ucoll_dtype_t dtype, ucoll_op_t op,
                                           ucoll_request_t **req);
ucoll_status_t ucoll_ireduce_scatter(ucoll_comm_t *comm, const void *sendbuf, void *recvbuf,
                                     const size_t *recvcounts, ucoll_dtype_t dtype, ucoll_op_t op,
                                     ucoll_request_t **req);
ucoll_status_t ucoll_ialltoall(ucoll_comm_t *comm, const void *sendbuf, void *recvbuf, size_t count,
                               ucoll_dtype_t dtype, ucoll_request_t **req);
ucoll_status_t ucoll_ialltoallv(ucoll_comm_t *comm, const void *sendbuf, const size_t *sendcounts,
                                const size_t *sdispls, void *recvbuf, const size_t *recvcounts,
                                const size_t *rdispls, ucoll_dtype_t dtype, ucoll_request_t **req);
ucoll_status_t ucoll_igather(ucoll_comm_t *comm, const void *sendbuf, void *recvbuf, size_t count,
                             ucoll_dtype_t dtype, int root, ucoll_request_t **req);
ucoll_status_t ucoll_igatherv(ucoll_comm_t *comm, const void *sendbuf, size_t sendcount,
                              void *recvbuf, const size_t *recvcounts, const size_t *displs,
                              ucoll_dtype_t dtype, int root, ucoll_request_t **req);
ucoll_status_t ucoll_iscatter(ucoll_comm_t *comm, const void *sendbuf, void *recvbuf, size_t count,
                              ucoll_dtype_t dtype, int root, ucoll_request_t **req);
ucoll_status_t ucoll_iscatterv(ucoll_comm_t *comm, const void *sendbuf, const size_t *sendcounts,
                               const size_t *displs, void *recvbuf, size_t recvcount,
                               ucoll_dtype_t dtype, int root, ucoll_request_t **req);

ucoll_status_t ucoll_allgather_init(ucoll_comm_t *comm, const void *sendbuf, void *recvbuf,
                                    size_t count, ucoll_dtype_t dtype, ucoll_request_t **req);
ucoll_status_t ucoll_allgatherv_init(ucoll_comm_t *comm, const void *sendbuf, size_t sendcount,
                                     void *recvbuf, const size_t *recvcounts, const size_t *displs,
                                     ucoll_dtype_t dtype, ucoll_request_t **req);
ucoll_status_t ucoll_reduce_scatter_block_init(ucoll_comm_t *comm, const void *sendbuf,
                                               void *recvbuf, size_t recvcount, ucoll_dtype_t dtype,
                                               ucoll_op_t op, ucoll_request_t **req);
ucoll_status_t ucoll_reduce_scatter_init(ucoll_comm_t *comm, const void *sendbuf, void *recvbuf,
                                         const size_t *recvcounts, ucoll_dtype_t dtype,
                                         ucoll_op_t op, ucoll_request_t **req);
ucoll_status_t ucoll_alltoall_init(ucoll_comm_t *comm, const void *sendbuf, void *recvbuf,
                                   size_t count, ucoll_dtype_t dtype, ucoll_request_t **req);
ucoll_status_t ucoll_alltoallv_init(ucoll_comm_t *comm, const void *sendbuf,
                                    const size_t *sendcounts, const size_t *sdispls, void *recvbuf,
                                    const size_t *recvcounts, const size_t *rdispls,
                                    ucoll_dtype_t dtype, ucoll_request_t **req);
ucoll_status_t ucoll_gather_init(ucoll_comm_t *comm, const void *sendbuf, void *recvbuf,
                                 size_t count, ucoll_dtype_t dtype, int root,
                                 ucoll_request_t **req);
ucoll_status_t ucoll_gatherv_init(ucoll_comm_t *comm, const void *sendbuf, size_t sendcount,
                                  void *recvbuf, const size_t *recvcounts, const size_t *displs,
                                  ucoll_dtype_t dtype, int root, ucoll_request_t **req);
ucoll_status_t ucoll_scatter_init(ucoll_comm_t *comm, const void *sendbuf, void *recvbuf,
                                  size_t count, ucoll_dtype_t dtype, int root,
                                  ucoll_request_t **req);
ucoll_status_t ucoll_scatterv_init(ucoll_comm_t *comm, const void *sendbuf,
                                   const size_t *sendcounts, const size_t *displs, void *recvbuf,
                                   size_t recvcount, ucoll_dtype_t dtype, int root,
                                   ucoll_request_t **req);

ucoll_status_t ucoll_start(ucoll_request_t *req);
ucoll_status_t ucoll_test(ucoll_request_t *req); /* OK, INPROGRESS or the error; progresses */
ucoll_status_t ucoll_wait(ucoll_request_t *req);
ucoll_status_t ucoll_request_free(ucoll_request_t *req);

/* ---------------------------------------------------------------------------------------------
 * Runtimes that drive progress themselves (an event loop, a progress thread).
 *
 * Callbacks: cb(req, status, arg) runs exactly once per completion, from inside a ucoll call
 * of the thread that completed req (ucoll_progress, ucoll_test/wait, any collective call,
 * ucoll_arm, ucoll_request_set_callback itself), when that outermost call is about to return:
 * no ucoll lock is held then and the library is between operations, so the callback may call
 * ucoll: free req (it is not touched after the callback), start or wait for other
 * collectives; completions of calls made from a callback are delivered by the same loop before
 * the outer call returns. Callbacks run in completion order. A request that has completed
 * when ucoll_request_set_callback is called runs cb before that call returns. A persistent
 * request keeps its callback: it runs once per ucoll_start (set on an inactive persistent
 * request, it applies from the next start). A request freed (from another callback) before its
 * callback ran gets none. Requests still active at ucoll_finalize end with UCOLL_ERR_STATE,
 * their callbacks run as finalize returns. Errors: NULL, foreign or freed req, or NULL cb:
 * UCOLL_ERR_INVALID_ARG; a second set_callback on one request: UCOLL_ERR_STATE (one callback
 * per request); after finalize: UCOLL_ERR_STATE. Under UCOLL_THREAD_MULTIPLE the callback
 * runs as the next outermost ucoll call of any thread returns (usually the one that completed
 * the request); a callback must not wait for another thread that is inside ucoll.
 *
 * ucoll_progress(world): one progress pass over every outstanding request of the process
 * (all communicators); returns how many requests completed in it (their callbacks have run
 * when it returns), or a negative status: UCOLL_ERR_INVALID_ARG for anything but the world
 * communicator ucoll_init returned (progress is per process, so a split comm is refused
 * rather than silently progressing every other comm too), UCOLL_ERR_STATE after finalize or
 * from inside a user op.
 *
 * ucoll_event_fd(world): an epoll fd (add it to a poll/epoll/select set, read nothing from
 * it) holding UCX's event fds of both UCX workers, an eventfd that a new post kicks, and a
 * timer; the same fd until ucoll_finalize closes it; -1 if UCX gives no event fd or world is not
 * the world comm. ucoll_arm(world): UCOLL_OK = nothing to do now, safe to sleep on the fd;
 * UCOLL_INPROGRESS = call ucoll_progress (messages arrived, a request has a round to post,
 * callbacks are pending); a negative error otherwise. Wake-up design: a message on ucoll's
 * on-host rings is a store into shared memory that no fd sees, so while any request is
 * outstanding ucoll_arm also arms the timer: the fd turns readable after at most 1 ms if the
 * rings are in use, 20 ms if not (for liveness probes and UCOLL_TIMEOUT), or at once on UCX
 * traffic or a new post from this process. An armed process therefore never sleeps longer
 * than 1 ms on a ring message, and with nothing outstanding it sleeps until UCX traffic or a
 * post. (A cross-process signal from the ring's sender would cut that latency; it needs the
 * receiver's fd in every sender, which the rings' address exchange does not carry yet.)
 *
 * UCOLL_WAIT_MODE=sleep makes blocking calls and ucoll_wait do the same after a few idle
 * polls (README: environment), letting go of the entry lock while they sleep.
 */
typedef void (*ucoll_callback_t)(ucoll_request_t *req, ucoll_status_t status, void *arg);
ucoll_status_t ucoll_request_set_callback(ucoll_request_t *req, ucoll_callback_t cb, void *arg);
int ucoll_progress(ucoll_comm_t *world);
int ucoll_event_fd(ucoll_comm_t *world);
ucoll_status_t ucoll_arm(ucoll_comm_t *world);

#ifdef __cplusplus
}
#endif
#endif /* UCOLL_H */
