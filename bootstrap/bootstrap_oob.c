/*
 * Out-of-band bootstrap: the caller's allgather (ucoll_oob_t) instead of PMIx. Locality comes
 * from one allgather of machine identities; the blobs from one allgatherv (two allgathers: the
 * lengths, then every blob padded to the longest), kept as the table lookups read: O(p) bytes
 * of addresses, no connection. The store (bootstrap_store.c) supplies an allgather of its own.
 */
#include "bootstrap.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    ucoll_oob_t oob;        /* the caller's allgather, or */
    bootstrap_gather_t own; /* ucoll's own (own.allgather != NULL) */
    void **blobs;           /* publish: every rank's blob */
    size_t *lens;
} oob_impl_t;

/* one allgather round, the caller's or ucoll's own */
static ucoll_status_t gather(bootstrap_t *bs, const void *src, void *dst, size_t len)
{
    oob_impl_t *impl = bs->impl;
    if (impl->own.allgather != NULL)
        return impl->own.allgather(src, dst, len, impl->own.ctx);
    if (impl->oob.allgather(src, dst, len, impl->oob.ctx) == 0)
        return UCOLL_OK;
    fprintf(stderr, "ucoll: the out-of-band allgather (ucoll_oob_t.allgather) failed\n");
    return UCOLL_ERR_BOOTSTRAP;
}

static void free_blobs(int n, void **blobs, size_t *lens)
{
    if (blobs != NULL)
        for (int i = 0; i < n; i++)
            free(blobs[i]);
    free(blobs);
    free(lens);
}

static ucoll_status_t oob_allgatherv(bootstrap_t *bs, const void *mine, size_t len,
                                     void ***blobs_out, size_t **lens_out)
{
    const size_t n = (size_t)bs->size;
    uint64_t my_len = len, max_len = 0;
    uint64_t *all_lens = calloc(n, sizeof(*all_lens));
    void **blobs = calloc(n, sizeof(*blobs));
    size_t *lens = calloc(n, sizeof(*lens));
    char *padded = NULL, *all = NULL;
    ucoll_status_t st = UCOLL_ERR_NO_MEMORY;

    if (all_lens == NULL || blobs == NULL || lens == NULL)
        goto fail;
    if ((st = gather(bs, &my_len, all_lens, sizeof(my_len))) != UCOLL_OK)
        goto fail;
    for (size_t i = 0; i < n; i++)
        max_len = all_lens[i] > max_len ? all_lens[i] : max_len;
    padded = calloc(1, max_len ? max_len : 1);
    all = malloc(n * (max_len ? max_len : 1));
    st = UCOLL_ERR_NO_MEMORY;
    if (padded == NULL || all == NULL)
        goto fail;
    memcpy(padded, mine, len);
    if ((st = gather(bs, padded, all, max_len)) != UCOLL_OK)
        goto fail;
    st = UCOLL_ERR_NO_MEMORY;
    for (size_t i = 0; i < n; i++) {
        lens[i] = all_lens[i];
        if ((blobs[i] = malloc(lens[i] ? lens[i] : 1)) == NULL)
            goto fail;
        memcpy(blobs[i], all + i * max_len, lens[i]);
    }
    free(all_lens);
    free(padded);
    free(all);
    *blobs_out = blobs;
    *lens_out = lens;
    return UCOLL_OK;
fail:
    free(all_lens);
    free(padded);
    free(all);
    free_blobs(bs->size, blobs, lens);
    return st;
}

enum { HOST_BYTES = BOOTSTRAP_ID_BYTES };

void bootstrap_machine_identity(char id[BOOTSTRAP_ID_BYTES], int rank)
{
    char host[64] = "", boot[40] = "";
    struct stat ns;
    memset(id, 0, HOST_BYTES);
    gethostname(host, sizeof(host) - 1);
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f != NULL) {
        if (fgets(boot, sizeof(boot), f) == NULL)
            boot[0] = '\0';
        fclose(f);
        boot[strcspn(boot, "\n")] = '\0';
    }
    unsigned long long pidns =
        stat("/proc/self/ns/pid", &ns) == 0 ? (unsigned long long)ns.st_ino : 0;
    const int nfake = bootstrap_test_hosts();
    snprintf(id, HOST_BYTES, "%s|%s|%llu|%d", host, boot, pidns, nfake > 1 ? rank % nfake : 0);
}

int bootstrap_test_hosts(void)
{
    const char *fake = getenv("UCOLL_TEST_HOSTS");
    const int n = fake != NULL ? atoi(fake) : 0;
    return n > 1 ? n : 0;
}

static ucoll_status_t oob_local_ranks(bootstrap_t *bs, int **ranks_out, int *n_out)
{
    char mine[HOST_BYTES];
    char *all = malloc((size_t)bs->size * HOST_BYTES);
    int *ranks = malloc((size_t)bs->size * sizeof(*ranks));
    int n = 0;
    if (all == NULL || ranks == NULL) {
        free(all);
        free(ranks);
        return UCOLL_ERR_NO_MEMORY;
    }
    bootstrap_machine_identity(mine, bs->rank);
    ucoll_status_t st = gather(bs, mine, all, HOST_BYTES);
    if (st != UCOLL_OK) {
        free(all);
        free(ranks);
        return st;
    }
    for (int i = 0; i < bs->size; i++)
        if (memcmp(all + (size_t)i * HOST_BYTES, mine, HOST_BYTES) == 0)
            ranks[n++] = i;
    free(all);
    *ranks_out = ranks;
    *n_out = n;
    return UCOLL_OK;
}

static ucoll_status_t oob_publish(bootstrap_t *bs, const void *blob, size_t len)
{
    oob_impl_t *impl = bs->impl;
    if (impl->blobs != NULL)
        return UCOLL_ERR_STATE;
    return oob_allgatherv(bs, blob, len, &impl->blobs, &impl->lens);
}

static ucoll_status_t oob_lookup(bootstrap_t *bs, int peer, void **blob, size_t *len)
{
    oob_impl_t *impl = bs->impl;
    *blob = NULL;
    *len = 0;
    if (impl->blobs == NULL || peer < 0 || peer >= bs->size)
        return impl->blobs == NULL ? UCOLL_ERR_STATE : UCOLL_ERR_INVALID_ARG;
    size_t n = impl->lens[peer];
    if ((*blob = malloc(n ? n : 1)) == NULL)
        return UCOLL_ERR_NO_MEMORY;
    memcpy(*blob, impl->blobs[peer], n);
    *len = n;
    return UCOLL_OK;
}

static ucoll_status_t oob_fence(bootstrap_t *bs)
{
    char *all = malloc((size_t)bs->size);
    char mine = 1;
    ucoll_status_t st = all == NULL ? UCOLL_ERR_NO_MEMORY : gather(bs, &mine, all, 1);
    free(all);
    return st;
}

static void oob_finalize(bootstrap_t *bs)
{
    oob_impl_t *impl = bs->impl;
    free_blobs(bs->size, impl->blobs, impl->lens);
    if (impl->own.release != NULL)
        impl->own.release(impl->own.ctx);
    free(impl);
    free(bs);
}

static ucoll_status_t create(const ucoll_oob_t *oob, const bootstrap_gather_t *own, int rank,
                             int size, bootstrap_t **out)
{
    bootstrap_t *bs = calloc(1, sizeof(*bs));
    oob_impl_t *impl = calloc(1, sizeof(*impl));
    if (bs == NULL || impl == NULL) {
        free(bs);
        free(impl);
        return UCOLL_ERR_NO_MEMORY;
    }
    if (oob != NULL)
        impl->oob = *oob;
    else
        impl->own = *own;
    bs->impl = impl;
    bs->rank = rank;
    bs->size = size;
    bs->local_ranks = oob_local_ranks;
    bs->publish = oob_publish;
    bs->lookup = oob_lookup;
    bs->fence = oob_fence;
    bs->finalize = oob_finalize;
    *out = bs;
    return UCOLL_OK;
}

ucoll_status_t bootstrap_oob_create(const ucoll_oob_t *oob, bootstrap_t **out)
{
    if (oob == NULL || oob->allgather == NULL || oob->size < 1 || oob->rank < 0 ||
        oob->rank >= oob->size)
        return UCOLL_ERR_INVALID_ARG;
    return create(oob, NULL, oob->rank, oob->size, out);
}

ucoll_status_t bootstrap_gather_create(const bootstrap_gather_t *g, int rank, int size,
                                       bootstrap_t **out)
{
    if (g == NULL || g->allgather == NULL || size < 1 || rank < 0 || rank >= size)
        return UCOLL_ERR_INVALID_ARG;
    return create(NULL, g, rank, size, out);
}
