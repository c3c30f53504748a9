/*
 * The symbolic executor: runs the schedules of ALL p processes of one collective together, with
 * no processes and no UCX, and gives the exact figures (rounds, (+) applications, bytes) and a
 * verdict on whether every process ends with exactly the result the collective must produce.
 *
 * A vector element's symbolic value records which ranks' inputs it combines: the rank interval
 * [lo, hi], how many inputs n, the sum h of a 64-bit hash of each input's rank, whether it was
 * always built as `in (+) inout` with in.hi + 1 == inout.lo ("ordered"), and which element of the
 * vectors it is. Scratch starts undefined, OUT starts "untouched" (the user's content), IN holds
 * rank r's input. Every buffer is an interval map of runs, so the cost is proportional to the
 * number of distinct runs, not to the vector length.
 *
 * Errors reported (res->ok = 0, res->error says which rank, step and round): reading undefined
 * or untouched data (sending, copying or reducing it), combining different element indices,
 * writing IN, regions outside a buffer, overlapping source and destination, a receive without a
 * matching send from that peer in the same round with the same element count (or the reverse),
 * more than one XCHG per round on a process or round indices not increasing, a reduce touching
 * OUT on a non-root, and a final result that is not the collective's:
 *   exscan     rank 0: OUT untouched; rank r > 0: OUT = inputs 0..r-1
 *   scan       OUT = inputs 0..r
 *   reduce     root: OUT = inputs 0..p-1; other ranks never touch OUT (their recvbuf is not
 *              significant and may be NULL)
 *   allreduce  every rank: OUT = inputs 0..p-1
 *   bcast      every rank: OUT = the root's original OUT (IN does not exist and is undefined)
 *   barrier    every rank has (transitively) heard from every rank
 * "= inputs a..b" means every element i holds element i of exactly the inputs a..b, each once
 * (n and the hash sum match); with a non-commutative op it must also be ordered.
 *
 * The block collectives: IN and OUT have the sizes of the contract in sched.h, a buffer that
 * does not exist on a rank (gather's OUT, scatter's IN off the root) may not be named, and IN
 * element e of rank r holds "element e of rank r's input". With c = count, {i, e} = element e of
 * rank i's input and OUT_j = rank j's OUT, the verdicts are:
 *   allgather             OUT_j[i*c + e] = {i, e}
 *   allgatherv            OUT_j[recv_displs_j[i] + e] = {i, e}, e < recv_counts_j[i]
 *   reduce_scatter_block  OUT_j[e] = element j*c + e of inputs 0..p-1
 *   reduce_scatter        OUT_j[e] = element (sum of counts[i], i < j) + e of inputs 0..p-1
 *   alltoall              OUT_j[i*c + e] = {i, j*c + e}
 *   alltoallv             OUT_j[recv_displs_j[i] + e] = {i, send_displs_i[j] + e}
 *   gather(v)             the root's OUT as allgather(v)'s
 *   scatter               OUT_j[e] = {root, j*c + e}
 *   scatterv              OUT_j[e] = {root, send_displs_root[j] + e}
 * and every element of OUT outside these blocks stays untouched. Arguments that describe no
 * correct call (a block's two sides disagreeing on its length, overlapping blocks of OUT, count
 * arrays missing where the rank needs them) make the run fail with -1 before anything is built.
 */
#ifndef UCOLL_SYMBOLIC_H
#define UCOLL_SYMBOLIC_H

#include "alg/alg.h"
#include "alg/cost.h"
#include "sched.h"

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int ok;          /* 1: ran and every process's result is correct */
    char error[512]; /* the first problem found ("" when ok) */
    int p;           /* number of processes (length of the per-rank arrays) */
    uint32_t rounds; /* max over processes of sched.nrounds */
    /* max over processes of the number of REDUCE steps, i.e. of (+) applications on (pieces
     * of) vectors. For the scans, where every REDUCE is on a whole vector, this is exactly the
     * "(+) count" of algorithms.md 0 (a copy into an empty W costs nothing, W (+) V costs one). */
    uint64_t max_ops;
    /* sum over rounds of the largest max(bytes sent, bytes received) of any process in that
     * round: the bandwidth term of the critical path */
    uint64_t volume_bytes;
    /* sum over rounds of the largest bytes sent plus bytes received of any process in that
     * round: on one host a rank's CPU copies both its outgoing and its incoming messages */
    uint64_t cpu_volume_bytes;
    uint64_t total_bytes; /* all bytes sent by all processes */
    /* the most non-empty messages of one round */
    uint32_t max_msgs;
    /* per rank (p entries each; NULL when the run could not start) */
    uint32_t *rank_rounds;     /* sched.nrounds of the rank's schedule */
    uint64_t *rank_ops;        /* REDUCE steps */
    uint64_t *rank_op_elems;   /* elements combined by them */
    uint64_t *rank_copy_elems; /* elements moved by COPY steps */
    uint64_t *rank_bytes_sent;
    uint64_t *rank_bytes_recv;
    int *rank_heard; /* how many ranks (itself included) it has heard from */
    /* with a layout (args' hosts; every run through symbolic_run_args with it set): the
     * messages and bytes whose sender and receiver are on different hosts, per sending rank
     * and in all (0 without a layout) */
    uint64_t *rank_cross_msgs, *rank_cross_bytes;
    uint64_t cross_msgs, cross_bytes;
} symbolic_result_t;

/*
 * Builds the schedule of every rank with alg->build (args: rank, p, root, count, elem_size,
 * param, commutative; for the v forms every block has `count` elements, block i at i*count, and
 * gatherv's / scatterv's arrays are given to the root only) and runs them. Returns 0 when the run
 * completed (the verdict is res->ok), -1 when it could not be run (bad arguments, a builder
 * refused, no memory; res->error says which). In both cases free res with symbolic_result_free.
 */
int symbolic_run(const alg_desc_t *alg, int param, ucoll_coll_t coll, int p, size_t count,
                 size_t elem_size, int root, int commutative, symbolic_result_t *res);

/* the same on schedules already built (scheds[r] is rank r's), e.g. hand-made ones in tests */
int symbolic_run_scheds(const sched_t *scheds, ucoll_coll_t coll, int p, size_t count,
                        size_t elem_size, int root, int commutative, symbolic_result_t *res);

/* the same with every rank's own arguments (p entries, args[r].rank == r, and the same root,
 * element size and commutativity on all): for the v forms, whose counts differ per rank. The
 * parameter of each rank's build is args[r].param. */
int symbolic_run_args(const alg_desc_t *alg, ucoll_coll_t coll, int p, const sched_args_t *args,
                      symbolic_result_t *res);
int symbolic_run_scheds_args(const sched_t *scheds, ucoll_coll_t coll, int p,
                             const sched_args_t *args, symbolic_result_t *res);

/* symbolic_run on a layout: every rank's arguments carry hosts (and, for a node-aware alg,
 * its plan's algorithms), and res gets the messages that cross hosts */
int symbolic_run_layout(const alg_desc_t *alg, int param, ucoll_coll_t coll, int p, size_t count,
                        size_t elem_size, int root, int commutative, const sched_hosts_t *hosts,
                        const node_aware_plan_t *plan, symbolic_result_t *res);

void symbolic_result_free(symbolic_result_t *res);

/* Memory kept from one run to the next (schedules, process states, temporaries): for callers
 * that run many collectives, e.g. every p up to thousands in the unit tests. One workspace
 * serves one run at a time. */
typedef struct symbolic_ws symbolic_ws_t;
symbolic_ws_t *symbolic_ws_new(void); /* NULL on no memory */
void symbolic_ws_free(symbolic_ws_t *ws);
/* symbolic_run with the memory of ws */
int symbolic_run_ws(symbolic_ws_t *ws, const alg_desc_t *alg, int param, ucoll_coll_t coll, int p,
                    size_t count, size_t elem_size, int root, int commutative,
                    symbolic_result_t *res);

/* symbolic_run_args with the memory of ws */
int symbolic_run_args_ws(symbolic_ws_t *ws, const alg_desc_t *alg, ucoll_coll_t coll, int p,
                         const sched_args_t *args, symbolic_result_t *res);

/* builds rank `rank`'s schedule (v forms: equal blocks, as symbolic_run) into s (initialised by the
 * caller); returns the builder's value */
int symbolic_build(const alg_desc_t *alg, int param, int p, int rank, size_t count,
                   size_t elem_size, int root, int commutative, sched_t *s);

/* "IN", "OUT", "ACC", "TMP", "TMP2" ("?" otherwise) */
const char *symbolic_buf_name(int buf);
/* human-readable step, e.g. "round 2: send OUT[0,8) to 5, recv TMP[0,8) from 1" or
 * "OUT[0,8) = TMP[0,8) (+) OUT[0,8)"; returns buf */
char *symbolic_step_str(const sched_step_t *step, char *buf, size_t len);

#endif
