/*
 * bootstrap: who am I, how many are we, which ranks share my host, and the publication of one
 * blob per rank (its UCP worker addresses, process id and on-host segment) that peers look up
 * when they first need it, through PMIx, through the caller's out-of-band allgather, or through
 * ucoll's own TCP store (rank 0 serves an address, the others connect).
 */
#ifndef UCOLL_BOOTSTRAP_H
#define UCOLL_BOOTSTRAP_H

#include "ucoll.h"

#include <stddef.h>

typedef struct bootstrap bootstrap_t;
struct bootstrap {
    int rank, size;
    /* the world ranks on this rank's host, this one included, ascending (*ranks malloc'ed).
     * PMIx: PMIX_LOCAL_PEERS, no exchange; OOB and store: one allgather of machine identities.
     * UCOLL_TEST_HOSTS=N (tests only) keeps the ranks r with r % N == rank % N. */
    ucoll_status_t (*local_ranks)(bootstrap_t *bs, int **ranks, int *n);
    /* makes this rank's blob available to every rank; collective (every rank calls it once) */
    ucoll_status_t (*publish)(bootstrap_t *bs, const void *blob, size_t len);
    /* rank peer's published blob, a malloc'ed copy the caller frees. PMIx: one PMIx_Get
     * (counted in `lookups`); OOB: a copy from the table publish gathered (not counted) */
    ucoll_status_t (*lookup)(bootstrap_t *bs, int peer, void **blob, size_t *len);
    ucoll_status_t (*fence)(bootstrap_t *bs);
    void (*finalize)(bootstrap_t *bs);
    unsigned long long lookups; /* blobs fetched from the launcher so far */
    void *impl;
};

/* PMIx_Init (once per process: a second call gives UCOLL_ERR_STATE). Without a launcher the
 * process is a 1-rank job. */
ucoll_status_t bootstrap_pmix_create(bootstrap_t **bs);
/* the caller's allgather (ucoll_oob_t); validated here */
ucoll_status_t bootstrap_oob_create(const ucoll_oob_t *oob, bootstrap_t **bs);
/* an allgather of ucoll's own behind the same bootstrap: it reports its failures on stderr
 * and as statuses; release(ctx) runs at finalize (not when the create fails) */
typedef struct {
    ucoll_status_t (*allgather)(const void *src, void *dst, size_t len, void *ctx);
    void (*release)(void *ctx);
    void *ctx;
} bootstrap_gather_t;
ucoll_status_t bootstrap_gather_create(const bootstrap_gather_t *g, int rank, int size,
                                       bootstrap_t **bs);
/* the store ("HOST:PORT"; bootstrap_store.c): rank 0 serves it, the others connect; every wait
 * at most timeout_s. Validates its arguments, with a message naming what is wrong. */
ucoll_status_t bootstrap_store_create(const char *address, int rank, int size, double timeout_s,
                                      bootstrap_t **bs);
/* this machine as seen from this process: the host name, the kernel's boot id and the inode of
 * the pid namespace, so that containers sharing a host name, or one machine's pid namespaces,
 * are not taken for one host whose process ids can be probed; and the UCOLL_TEST_HOSTS host of
 * rank. Zero-padded. */
enum { BOOTSTRAP_ID_BYTES = 128 };
void bootstrap_machine_identity(char id[BOOTSTRAP_ID_BYTES], int rank);
/* UCOLL_TEST_HOSTS=N (tests only): rank r acts as if on host r % N of this machine, so that one
 * machine can run the code paths of a job that spans hosts; 0 when unset */
int bootstrap_test_hosts(void);

#endif
