/*
 * Out-of-band bootstrap: the caller's allgather (ucoll_oob_t) instead of PMIx. Variable-length
 * blobs go in two allgathers: the lengths, then every blob padded to the longest.
 */
#include "bootstrap.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static ucoll_status_t oob_allgatherv(bootstrap_t *bs, const void *mine, size_t len,
                                     void ***blobs_out, size_t **lens_out)
{
    const ucoll_oob_t *oob = bs->impl;
    const size_t n = (size_t)bs->size;
    uint64_t my_len = len, max_len = 0;
    uint64_t *all_lens = calloc(n, sizeof(*all_lens));
    void **blobs = calloc(n, sizeof(*blobs));
    size_t *lens = calloc(n, sizeof(*lens));
    char *padded = NULL, *all = NULL;

    if (all_lens == NULL || blobs == NULL || lens == NULL)
        goto nomem;
    if (oob->allgather(&my_len, all_lens, sizeof(my_len), oob->ctx) != 0)
        goto fail;
    for (size_t i = 0; i < n; i++)
        max_len = all_lens[i] > max_len ? all_lens[i] : max_len;
    padded = calloc(1, max_len ? max_len : 1);
    all = malloc(n * (max_len ? max_len : 1));
    if (padded == NULL || all == NULL)
        goto nomem;
    memcpy(padded, mine, len);
    if (oob->allgather(padded, all, max_len, oob->ctx) != 0)
        goto fail;
    for (size_t i = 0; i < n; i++) {
        lens[i] = all_lens[i];
        if ((blobs[i] = malloc(lens[i] ? lens[i] : 1)) == NULL)
            goto nomem;
        memcpy(blobs[i], all + i * max_len, lens[i]);
    }
    free(all_lens);
    free(padded);
    free(all);
    *blobs_out = blobs;
    *lens_out = lens;
    return UCOLL_OK;
fail:
    fprintf(stderr, "ucoll: the out-of-band allgather (ucoll_oob_t.allgather) failed\n");
    free(all_lens);
    free(padded);
    free(all);
    bootstrap_free_blobs(bs->size, blobs, lens);
    return UCOLL_ERR_BOOTSTRAP;
nomem:
    free(all_lens);
    free(padded);
    free(all);
    bootstrap_free_blobs(bs->size, blobs, lens);
    return UCOLL_ERR_NO_MEMORY;
}

static ucoll_status_t oob_fence(bootstrap_t *bs)
{
    const ucoll_oob_t *oob = bs->impl;
    char *all = malloc((size_t)bs->size);
    char mine = 1;
    int rc = all == NULL ? -1 : oob->allgather(&mine, all, 1, oob->ctx);
    free(all);
    return rc == 0 ? UCOLL_OK : UCOLL_ERR_BOOTSTRAP;
}

static void oob_finalize(bootstrap_t *bs)
{
    free(bs->impl);
    free(bs);
}

ucoll_status_t bootstrap_oob_create(const ucoll_oob_t *oob, bootstrap_t **out)
{
    if (oob == NULL || oob->allgather == NULL || oob->size < 1 || oob->rank < 0 ||
        oob->rank >= oob->size)
        return UCOLL_ERR_INVALID_ARG;
    bootstrap_t *bs = calloc(1, sizeof(*bs));
    ucoll_oob_t *copy = malloc(sizeof(*copy));
    if (bs == NULL || copy == NULL) {
        free(bs);
        free(copy);
        return UCOLL_ERR_NO_MEMORY;
    }
    *copy = *oob;
    bs->impl = copy;
    bs->rank = oob->rank;
    bs->size = oob->size;
    bs->local_size = 1;
    bs->allgatherv = oob_allgatherv;
    bs->fence = oob_fence;
    bs->finalize = oob_finalize;
    *out = bs;
    return UCOLL_OK;
}
