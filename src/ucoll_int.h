/*
 * ucoll internals shared by the core files: the process context, communicators, requests and
 * the schedule executor.
 */
#ifndef UCOLL_INT_H
#define UCOLL_INT_H

#include "../bootstrap/bootstrap.h"
#include "../ucx_transport/transport.h"
#include "alg/alg.h"
#include "alg/cost.h"
#include "dtype.h"
#include "entry_lock.h"
#include "guard.h"
#include "sched.h"
#include "tag.h"
#include "ucoll.h"

#include <stdint.h>

#ifndef UCOLL_EXPORT
#define UCOLL_EXPORT __attribute__((visibility("default")))
#endif

#define COMM_ID_WORDS (UCOLL_MAX_COMMS / 64)
/* UCOLL_SINGLE_COPY_MIN=auto (the default; README, "Single copy on one host", says why):
 * single copy for messages of AUTO_MIN to AUTO_MAX bytes, on where no host has more ranks than
 * CPUs */
#define UCOLL_SINGLE_COPY_AUTO_MIN 131072
#define UCOLL_SINGLE_COPY_AUTO_MAX 4194304
/* UCOLL_SINGLE_COPY_MIN=regions (buffers from ucoll_mem_alloc, whose peers read them in
 * place): every message past the rings' 4 KiB from REGIONS_MIN, of every algorithm; where a
 * host has more ranks than CPUs from AUTO_MIN (a reader must wait for a descheduled sender) */
#define UCOLL_SINGLE_COPY_REGIONS_MIN 8192

/* configuration read from UCOLL_* environment variables at init (config.c) */
typedef struct {
    double timeout_s;       /* UCOLL_TIMEOUT; <= 0: wait forever */
    size_t segment_size;    /* UCOLL_SEGMENT_SIZE: bytes per message segment; 0 = no segments */
    size_t single_copy_min; /* UCOLL_SINGLE_COPY_MIN: on-host single copy from this size; 0 = off */
    size_t single_copy_max; /* UCOLL_SINGLE_COPY_MAX: ... in messages up to this size; 0 = any */
    int single_copy_auto;   /* UCOLL_SINGLE_COPY_MIN=auto: off where a host is crowded */
    int single_copy_regions;   /* UCOLL_SINGLE_COPY_MIN=regions: AUTO_MIN where a host is crowded */
    tp_yield_mode_t yield;     /* UCOLL_PROGRESS_YIELD */
    int shm;                   /* UCOLL_SHM: the on-host small-message channel */
    int stats;                 /* UCOLL_STATS: the finalize line of what this rank used */
    int check;                 /* UCOLL_CHECK: compare every collective's arguments first */
    int print_cost;            /* UCOLL_PRINT_COST: rank 0 prints the agreed cost model */
    int print_alg;             /* UCOLL_PRINT_ALG: a comm's rank 0 prints each new auto choice */
    tp_failure_mode_t failure; /* UCOLL_FAILURE_DETECTION */
    int wait_sleep;            /* UCOLL_WAIT_MODE=sleep: idle waits sleep on the event fd */
    const char *alg_env[UCOLL_NCOLLS]; /* UCOLL_<COLL>_ALG values or NULL */
    double alpha_us, beta_ns;          /* UCOLL_ALPHA_US, UCOLL_BETA_NS_PER_BYTE; < 0: measure */
    double gamma_ns;                   /* UCOLL_GAMMA_NS_PER_BYTE; < 0: measure */
    size_t reduce_rhrd_min, allreduce_rhrd_min; /* auto: rhrd from this many bytes; 0: model */
} ucoll_config_t;
ucoll_status_t config_read(ucoll_config_t *cfg);
/* one line per variable: name, default, meaning (for ucoll_info and docs) */
typedef struct {
    const char *name, *default_value, *meaning;
} config_var_t;
const config_var_t *config_vars(size_t *n);

typedef struct ucoll_ctx ucoll_ctx_t;
typedef struct shrink_record shrink_record_t;

enum { COMM_MAGIC = 0x75636f6c, COMM_DEAD = 0x64656164 };
/* freed comms kept allocated (dead) so that use after ucoll_comm_free is answered with
 * UCOLL_ERR_STATE; beyond this many the oldest is released, bounding split/free loops */
enum { COMM_QUARANTINE = 1024 };
enum { COMM_BLOCKING_CACHE = 4 };

typedef struct {
    const alg_desc_t *alg; /* NULL: auto */
    int param;
} alg_choice_t;
/* what the phases of a node-aware form run (leaders NULL for a flat form) */
typedef node_aware_plan_t leaders_choice_t;

struct ucoll_comm {
    uint32_t magic;
    ucoll_ctx_t *ctx;
    int rank, size;
    int *world_rank;  /* comm rank -> transport peer */
    uint32_t id;      /* tag field */
    uint32_t seq;     /* next collective sequence number */
    int revoked;      /* a collective failed here: no more on it, its id is never released */
    unsigned shrinks; /* ucoll_comm_shrink calls on it so far (its messages' generation) */
    int shrunk;       /* shrunk at least once: its id is never released (shrink.c) */
    /* active requests in start order: the oldest one bounds the next start (tag.h) */
    struct ucoll_request *oldest, *newest;
    alg_choice_t alg[UCOLL_NCOLLS];
    /* which host each rank runs on (comm_init_hosts); NULL: one host, or unknown */
    sched_hosts_t *hosts;
    /* requests of blocking calls, most recently used first, each keeping its schedule and
     * scratch: a program alternating collectives, roots or sizes rebuilds nothing */
    ucoll_request_t *blocking[COMM_BLOCKING_CACHE];
    /* the one of them that last took scratch from the pool (NULL: none), keeping it while
     * calls that need none (a barrier between two calls) run: it allocates nothing again */
    ucoll_request_t *scratch_holder;
    /* auto's last choice per collective: repeated calls skip the cost model and the lookup */
    struct auto_choice {
        int valid, commutative; /* (a freed op's handle may come back non-commutative) */
        ucoll_op_t op;
        ucoll_dtype_t dtype;
        size_t count;
        double gamma_ns; /* ucoll_op_set_cost may change a user op's */
        const alg_desc_t *alg;
        int param;
        leaders_choice_t leaders; /* a node-aware alg's */
    } last_auto[UCOLL_NCOLLS];
    struct ucoll_comm *next; /* every comm of the context */
};

struct ucoll_request {
    uint32_t magic;
    ucoll_comm_t *comm;
    ucoll_coll_t coll;
    int persistent; /* from *_init: kept after completion */
    int active;     /* started and not yet completed */
    int blocking;   /* the comm's reusable request */
    int owned;      /* a blocking call runs it and has not returned yet */
    int op_held;    /* op_hold was called for op (released by ucoll_request_free) */
    int internal;   /* an agreement of the library's own (agree.c): fixed algorithm, unsegmented */
    int checking;   /* UCOLL_CHECK: waits for `check` before its own first round */
    struct ucoll_request *check; /* UCOLL_CHECK: the agreement on this call's arguments */
    ucoll_status_t status;
    /* arguments */
    const void *sendbuf;
    void *recvbuf;
    size_t count;
    ucoll_dtype_t dtype;
    ucoll_op_t op;
    int root;
    int in_place;
    size_t elem_size;
    /* 1 when no rank has anything to send (every rank knows it alike): only UCOLL_CHECK runs */
    int empty;
    /* the block collectives (coll >= UCOLL_COLL_ALLGATHER): IN and OUT on this rank, in bytes
     * (no_in / no_out: the buffer does not exist here, sched.h); in place, IN is scratch filled
     * from recvbuf + in_src_off, except at a scatter(v) root, whose OUT is scratch instead */
    size_t in_bytes, out_bytes, in_src_off;
    int no_in, no_out, out_scratch;
    size_t *vcounts; /* the request's copy of the count arrays sched_args points into */
    size_t vcounts_cap;
    const alg_desc_t *alg;
    int param;
    int single_copy; /* its messages may go by single copy (exec_start, from alg and settings) */
    /* schedule, built once per argument set */
    sched_t sched;
    sched_args_t sched_args;
    int sched_valid;
    int prepared; /* exec_prepare done for this schedule: 1 + in_place, 0 = not done */
    /* execution state */
    size_t pc;
    int posted; /* the current round's messages are posted */
    int fused;  /* the REDUCE after the current round runs segment by segment */
    uint32_t seq;
    uint64_t send_tag, recv_tag;  /* comm id and seq; send_tag: this rank as sender too */
    tp_op_t *send_ops, *recv_ops; /* one per segment of the current round */
    size_t nsend, nrecv, ops_cap;
    size_t seg_elems; /* elements per segment of the current round */
    size_t reduced;   /* segments of the fused REDUCE applied so far */
    /* writes into the receiver (transport.h tp_irecv_offer): receives posted two steps ahead
     * of their round as offers, early_ops[k] for step early_pc[k] (0: unused; the current
     * round's and the next one's), and the step whose send this rank has already written into
     * its receiver's offered buffer (0: none); write_min: the smallest message that may be
     * written so (exec_start; 0: none may), so that a small REDUCE skips the search */
    tp_op_t *early_ops;
    size_t early_pc[2], written_pc, write_min;
    unsigned long long writes_outrun; /* tp_writes_outrun at the start (finish) */
    void *buf[SCHED_NBUFS];
    void *memh[SCHED_NBUFS];
    tp_chunk_t *chunk[SCHED_NBUFS];
    void *user_memh[SCHED_NBUFS]; /* persistent: the user's IN/OUT registered once */
    double deadline; /* UCOLL_TIMEOUT: moved on by progress and by time spent outside ucoll */
    struct ucoll_request *next_active;
    struct ucoll_request *comm_prev, *comm_next; /* the comm's active ones (oldest..newest) */
    struct ucoll_request *next_live;             /* every request the user holds (coll.c) */
    /* ucoll_request_set_callback (progress.c): run at the outermost ucoll call's return once
     * finish() queued it; cb_status is how the last start it reports ended, cb_pending how
     * many completions are queued (a persistent request restarted and completed again from
     * another callback before its own ran: every one but the last ended OK, since a failed
     * collective revokes its comm and no later start runs) */
    ucoll_callback_t cb;
    void *cb_arg;
    ucoll_status_t cb_status;
    int cb_queued;
    unsigned cb_pending;
    struct ucoll_request *cb_next;
};

struct ucoll_ctx {
    bootstrap_t *bs;
    tp_ctx_t *tp;
    ucoll_config_t cfg;
    ucoll_comm_t *world;
    ucoll_comm_t *comms;                   /* live ones, newest first */
    ucoll_comm_t *freed_head, *freed_tail; /* freed ones, oldest first (COMM_QUARANTINE) */
    size_t nfreed;
    ucoll_request_t *active;   /* started, incomplete requests (progressed by every call) */
    double last_pass;          /* now_seconds() of the last progress pass (UCOLL_TIMEOUT) */
    unsigned long completions; /* user requests completed so far (ucoll_progress's count) */
    /* threads asleep in a blocking wait (UCOLL_WAIT_MODE=sleep): while there are any, an
     * armed fd keeps its timer, and a request's completion wakes them */
    int sleepers;
    uint64_t comm_ids_used[COMM_ID_WORDS]; /* tag comm ids of this process's live comms */
    cost_params_t net; /* alpha and beta agreed by all ranks at init (gamma unused here) */
    /* the largest message of the rings when every rank is on this host and the rings carry
     * the small messages (the cost model then prices two paths); 0 otherwise */
    size_t ring_max;
    /* every rank of the job is on this host (the launcher's local ranks are all of them) */
    int one_host;
    /* single copy is on for every rank, as agree_settings found (the same on all ranks) */
    int single_copy_on;
    int single_copy_forced; /* init's cost model: every request may go by single copy */
    /* single-copy descriptors init's cost model sent and read (left out of test counts) */
    unsigned long long measure_copies_sent, measure_copies_read, measure_copies_mapped;
    int host_crowded;  /* this rank's host has more ranks (of this job) than CPUs */
    int rings_missing; /* this rank has on-host peers but no rings (UCOLL_SHM=0, mapping failed) */
    /* the host's CPUs when every rank is on this host and they are fewer than the ranks (the
     * cost model then stretches the rounds that keep more ranks busy); 0 otherwise */
    unsigned crowd_cpus;
    /* world rank -> the lowest world rank on its host, gathered at init from each rank's
     * launcher-given local ranks; NULL while unknown and when every rank shares one host */
    int *world_host;
    /* gamma (ns per byte) of each predefined op on each dtype, agreed at init; 0 where the op
     * does not apply to the dtype */
    double gamma_ns[UCOLL_NOPS][UCOLL_NDTYPES];
    /* every ucoll_comm_shrink of this process (shrink.c): each keeps its decision for members
     * that ask for it later */
    shrink_record_t *shrink_records;
    unsigned shrink_passes;
};

/* executor (exec.c) */
ucoll_status_t exec_prepare(ucoll_request_t *req);
ucoll_status_t exec_start(ucoll_request_t *req);
/* UCOLL_ERR_STATE if comm is revoked, or if a start now would come UCOLL_SEQ_WINDOW or more
 * after its oldest active collective (that call then still takes its sequence number) */
ucoll_status_t exec_may_start(ucoll_comm_t *comm);
/* advances req as far as possible without blocking; OK, INPROGRESS or an error */
ucoll_status_t exec_advance(ucoll_request_t *req);
/* stops an active request after an error: cancels what is in flight, releases scratch */
void exec_abort(ucoll_request_t *req, ucoll_status_t status);
void exec_release(ucoll_request_t *req);
/* returns an inactive request's scratch to the pool; its schedule stays */
void exec_release_scratch(ucoll_request_t *req);
ucoll_status_t exec_register_user_buffers(ucoll_request_t *req);
/* one progress pass over the transport and every active request of ctx */
unsigned ctx_progress(ucoll_ctx_t *ctx);
/* waits for req; honours UCOLL_TIMEOUT and peer failures */
ucoll_status_t request_wait(ucoll_request_t *req);
double now_seconds(void);
/* callbacks (progress.c): queues req's callback if it has one (finish() of a user request);
 * takes a queued one back (ucoll_request_free); runs the queue (entry_unlock, outermost) */
void exec_queue_callback(ucoll_request_t *req, ucoll_status_t status);
void exec_forget_callback(ucoll_request_t *req);
/* 1 if a request of ctx has work that is not waiting for a message (ucoll_arm) */
int exec_has_local_work(const ucoll_ctx_t *ctx);
/* UCOLL_ERR_INVALID_ARG / UCOLL_ERR_STATE for a request ucoll does not hold for the user */
ucoll_status_t coll_check_request(const ucoll_request_t *req);

/* at finalize: stops and releases the scratch of every request the user still holds */
void coll_release_requests(ucoll_ctx_t *ctx);
/* 1 if a request not yet freed with ucoll_request_free refers to comm */
int coll_comm_has_requests(const ucoll_comm_t *comm);

/* algorithm selection (select.c): gathers the cost model's inputs and calls cost_select; local
 * arithmetic only, no message, no schedule built */
ucoll_status_t select_algorithm(ucoll_comm_t *comm, ucoll_coll_t coll, ucoll_op_t op,
                                ucoll_dtype_t dtype, size_t count, const alg_desc_t **alg,
                                int *param, leaders_choice_t *leaders);
/* the comm's layout for the node-aware forms, from ctx->world_host and its world ranks, made
 * where the comm is (a failure fails that call, not a later collective on one rank only):
 * comm->hosts stays NULL when its ranks share one host or the hosts are unknown */
ucoll_status_t comm_init_hosts(ucoll_comm_t *comm);
/* select_algorithm's first answer: for a predefined op, auto's last choice for the same op,
 * dtype and count holds (the op is commutative and its gamma fixed); NULL when it does not
 * apply. Inline: a blocking call repeating its arguments (coll.c) asks it on every call. */
static inline const struct auto_choice *select_repeats(const ucoll_comm_t *comm, ucoll_coll_t coll,
                                                       ucoll_op_t op, ucoll_dtype_t dtype,
                                                       size_t count)
{
    const struct auto_choice *last = &comm->last_auto[coll];
    if (op >= 0 && op < UCOLL_NOPS && comm->alg[coll].alg == NULL && last->valid &&
        last->op == op && last->dtype == dtype && last->count == count &&
        (!cost_reduces(coll) || last->gamma_ns == comm->ctx->gamma_ns[op][dtype]))
        return last;
    return NULL;
}
void select_comm_cleanup(ucoll_comm_t *comm);
/* at init (measure.c): alpha, beta and every predefined (op, dtype)'s gamma, measured on world
 * and agreed in one allreduce, or taken from the environment (all three set: no collective) */
ucoll_status_t measure_cost_model(ucoll_ctx_t *ctx);

/* ucoll_comm_shrink's agreement (shrink.c), given up at deadline (now_seconds(); 0: never)
 * with UCOLL_ERR_TIMED_OUT: OK with the members found failed (a malloc'ed
 * bitmap, bit i = comm rank i) and the new comm's id, the same on every member that gets OK.
 * shrink_progress runs with every progress pass; at finalize shrink_end_ops ends what is in
 * flight before the transport goes, shrink_free_all frees the records after it. */
ucoll_status_t shrink_agree(ucoll_comm_t *comm, double deadline, uint64_t **failed, uint32_t *id);
void shrink_progress(ucoll_ctx_t *ctx);
void shrink_end_ops(ucoll_ctx_t *ctx);
void shrink_free_all(ucoll_ctx_t *ctx);

/* agreement among ranks (agree.c). At init: the settings that change which messages a rank
 * sends, compared across world before any other collective; a mismatch is named on stderr and
 * gives UCOLL_ERR_INVALID_ARG on every rank. */
ucoll_status_t agree_settings(ucoll_ctx_t *ctx);
/* UCOLL_CHECK: comm_checks says whether comm's collectives are compared first; check_start
 * starts req's comparison (taking its sequence number before req's own), check_result is
 * INPROGRESS until it completed, then OK or UCOLL_ERR_MISMATCH (message printed) */
static inline int comm_checks(const ucoll_comm_t *comm)
{
    return comm->ctx->cfg.check && comm->size > 1;
}
ucoll_status_t check_start(ucoll_request_t *req);
ucoll_status_t check_result(ucoll_request_t *req);

#endif
