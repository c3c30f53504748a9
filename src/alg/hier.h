/*
 * The pieces the node-aware forms (hier_*.c) share. A node-aware schedule is the concatenation
 * of phases, each an existing algorithm's schedule run by a group of ranks (the ranks of one
 * host, or one leader per host): its group ranks become comm ranks, its rounds are shifted by
 * the phase's base round, and its buffers are placed in the whole schedule's (IN, OUT, or a
 * region of scratch), so that the phases' scratch never overlaps what a later phase reads.
 * A phase's base is the same on both ends of every message: the leaders' phase starts after
 * the longest local phase of any host, and a host's last local phase after its own leader's
 * rounds (its messages never leave the host).
 */
#ifndef UCOLL_ALG_HIER_H
#define UCOLL_ALG_HIER_H

#include "alg.h"

/* where a phase's buffer lives in the whole schedule; HIER_NONE: the phase may not name it */
typedef struct {
    uint8_t buf;
    size_t off;
} hier_buf_t;
#define HIER_NONE SCHED_NBUFS

/* this rank's place in the layout */
typedef struct {
    const sched_hosts_t *H;
    int host;           /* this rank's host */
    int n;              /* ranks on it */
    int local;          /* this rank's index among them */
    const int *members; /* them, ascending (into H->ranks_by_host) */
} hier_me_t;

/* one phase: `build` run by n ranks with root (group index), count and param; v arrays for
 * allgatherv; messages_only keeps only the messages, emptied (barrier) */
typedef struct {
    sched_build_fn_t build;
    int param, n, root;
    size_t count;
    const size_t *recv_counts, *recv_displs;
    int messages_only;
} hier_phase_t;

/* the local phases' reduce and bcast: the plan's (sched_args_t), else binomial */
static inline sched_build_fn_t hier_local_reduce(const sched_args_t *a)
{
    return a->local_reduce_build != NULL ? a->local_reduce_build : reduce_binomial_build;
}
static inline sched_build_fn_t hier_local_bcast(const sched_args_t *a)
{
    return a->local_bcast_build != NULL ? a->local_bcast_build : bcast_binomial_build;
}

/* -1 when a carries no layout or the layout is not a's comm's */
int hier_me(const sched_args_t *a, hier_me_t *me);
/* the group index of comm rank r on me's host (r must be on it) */
int hier_index_of(const hier_me_t *me, int r);
/* every map entry to its own buffer, TMP2 shifted by tmp2_reserved (the whole schedule's
 * staging area is TMP2[0, tmp2_reserved)) */
void hier_map_default(hier_buf_t map[SCHED_NBUFS], size_t tmp2_reserved);
/* appends rank sub_rank's schedule of phase ph, group[i] being group rank i's comm rank;
 * *rounds (may be NULL) gets that schedule's nrounds. -1 if the phase cannot be built. */
int hier_append(sched_t *s, const sched_args_t *a, const hier_phase_t *ph, int sub_rank,
                const int *group, uint32_t base, const hier_buf_t map[SCHED_NBUFS],
                uint32_t *rounds);
/* the nrounds sub_rank's schedule of ph has, without appending it */
int hier_rounds_of(const sched_args_t *a, const hier_phase_t *ph, int sub_rank, uint32_t *rounds);
/* the leader of each host (nhosts entries, malloc'ed): root_rank on its host (-1: none), else
 * the host's last rank if at_last, else its first */
int *hier_leaders(const sched_args_t *a, int root_rank, int at_last);
/* the most rounds of any rank of any host in a local phase of build: each host's group runs
 * it with root = its leader of hier_leaders(a, root_rank, at_last) */
int hier_local_rounds(const sched_args_t *a, sched_build_fn_t build, int param, size_t count,
                      int root_rank, int at_last, uint32_t *rounds);

#endif
