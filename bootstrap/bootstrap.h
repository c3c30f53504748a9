/*
 * bootstrap: who am I, how many are we, and the one exchange ucoll needs at start-up (every
 * rank's UCP worker address), through PMIx or through the caller's out-of-band allgather.
 */
#ifndef UCOLL_BOOTSTRAP_H
#define UCOLL_BOOTSTRAP_H

#include "ucoll.h"

#include <stddef.h>

typedef struct bootstrap bootstrap_t;
struct bootstrap {
    int rank, size;
    int local_size; /* ranks on this node (for progress yielding); 1 if unknown */
    /* allgather of one variable-length blob per rank: on success *blobs[i] (length lens[i])
     * is rank i's blob; free both arrays and the blobs with bootstrap_free_blobs */
    ucoll_status_t (*allgatherv)(bootstrap_t *bs, const void *mine, size_t len, void ***blobs,
                                 size_t **lens);
    ucoll_status_t (*fence)(bootstrap_t *bs);
    void (*finalize)(bootstrap_t *bs);
    void *impl;
};

/* PMIx_Init (once per process: a second call gives UCOLL_ERR_STATE). Without a launcher the
 * process is a 1-rank job. */
ucoll_status_t bootstrap_pmix_create(bootstrap_t **bs);
/* the caller's allgather (ucoll_oob_t); validated here */
ucoll_status_t bootstrap_oob_create(const ucoll_oob_t *oob, bootstrap_t **bs);
void bootstrap_free_blobs(int n, void **blobs, size_t *lens);

#endif
