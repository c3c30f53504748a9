/*
 * PMIx bootstrap: rank and size from PMIx_Init / PMIX_JOB_SIZE, the ranks of this host from
 * PMIX_LOCAL_PEERS, and each rank's blob through PMIx_Put + PMIx_Commit + one PMIx_Fence without
 * data collection; a peer's blob is fetched with PMIx_Get when it is first needed (the PMIx
 * server answers from its own store, or asks the peer's node: direct modex), so a rank holds
 * only the blobs of the peers it talks to. PMIx_Init is called at most once per process
 * (re-initialising inside one job fails intermittently). Without a launcher PMIx_Init returns
 * PMIX_ERR_UNREACH and the process runs as a 1-rank job.
 */
#include "bootstrap.h"

#include <pmix.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOB_KEY "ucoll.addr"

typedef struct {
    pmix_proc_t me;
    int singleton;
    void *own; /* singleton: the published blob */
    size_t own_len;
} pmix_impl_t;

static int pmix_initialised_once;

static int get_u32(const pmix_proc_t *who, const char *key, uint32_t *out)
{
    pmix_value_t *val = NULL;
    if (PMIx_Get(who, key, NULL, 0, &val) != PMIX_SUCCESS || val == NULL)
        return -1;
    int rc = 0;
    switch (val->type) {
    case PMIX_UINT32:
        *out = val->data.uint32;
        break;
    case PMIX_UINT16:
        *out = val->data.uint16;
        break;
    case PMIX_INT:
        *out = (uint32_t)val->data.integer;
        break;
    default:
        rc = -1;
    }
    PMIX_VALUE_RELEASE(val);
    return rc;
}

static ucoll_status_t pmix_fence(bootstrap_t *bs)
{
    pmix_impl_t *impl = bs->impl;
    if (impl->singleton)
        return UCOLL_OK;
    pmix_status_t rc = PMIx_Fence(NULL, 0, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "ucoll: PMIx_Fence failed: %s\n", PMIx_Error_string(rc));
        return UCOLL_ERR_BOOTSTRAP;
    }
    return UCOLL_OK;
}

static ucoll_status_t pmix_publish(bootstrap_t *bs, const void *blob, size_t len)
{
    pmix_impl_t *impl = bs->impl;
    if (impl->singleton) {
        if ((impl->own = malloc(len ? len : 1)) == NULL)
            return UCOLL_ERR_NO_MEMORY;
        memcpy(impl->own, blob, len);
        impl->own_len = len;
        return UCOLL_OK;
    }
    pmix_value_t value;
    PMIX_VALUE_CONSTRUCT(&value);
    value.type = PMIX_BYTE_OBJECT;
    value.data.bo.bytes = (char *)blob;
    value.data.bo.size = len;
    pmix_status_t rc;
    if ((rc = PMIx_Put(PMIX_GLOBAL, BLOB_KEY, &value)) != PMIX_SUCCESS ||
        (rc = PMIx_Commit()) != PMIX_SUCCESS)
        goto fail;
    /* every rank has committed once this returns; nothing is gathered (lookups fetch) */
    pmix_info_t info;
    bool collect = false;
    PMIX_INFO_CONSTRUCT(&info);
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    rc = PMIx_Fence(NULL, 0, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS)
        goto fail;
    return UCOLL_OK;
fail:
    fprintf(stderr, "ucoll: PMIx publication of the worker addresses failed: %s\n",
            PMIx_Error_string(rc));
    return UCOLL_ERR_BOOTSTRAP;
}

static ucoll_status_t pmix_lookup(bootstrap_t *bs, int peer, void **blob, size_t *len)
{
    pmix_impl_t *impl = bs->impl;
    const void *src = impl->own;
    size_t n = impl->own_len;
    pmix_value_t *val = NULL;
    *blob = NULL;
    *len = 0;
    if (peer < 0 || peer >= bs->size)
        return UCOLL_ERR_INVALID_ARG;
    if (!impl->singleton) {
        pmix_proc_t who;
        PMIX_PROC_LOAD(&who, impl->me.nspace, (pmix_rank_t)peer);
        bs->lookups++;
        pmix_status_t rc = PMIx_Get(&who, BLOB_KEY, NULL, 0, &val);
        if (rc != PMIX_SUCCESS || val == NULL || val->type != PMIX_BYTE_OBJECT) {
            fprintf(stderr, "ucoll: PMIx_Get of rank %d's address failed: %s\n", peer,
                    PMIx_Error_string(rc == PMIX_SUCCESS ? PMIX_ERR_TYPE_MISMATCH : rc));
            if (val != NULL)
                PMIX_VALUE_RELEASE(val);
            return UCOLL_ERR_BOOTSTRAP;
        }
        src = val->data.bo.bytes;
        n = val->data.bo.size;
    }
    if (src == NULL || (*blob = malloc(n ? n : 1)) == NULL) {
        if (val != NULL)
            PMIX_VALUE_RELEASE(val);
        return src == NULL ? UCOLL_ERR_STATE : UCOLL_ERR_NO_MEMORY;
    }
    memcpy(*blob, src, n);
    *len = n;
    if (val != NULL)
        PMIX_VALUE_RELEASE(val);
    return UCOLL_OK;
}

static int rank_order(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* PMIX_LOCAL_PEERS: "r1,r2,..." of this node. Without it every other rank counts as elsewhere
 * (UCX with error handling, no rings: correct, if slower on one host). */
static ucoll_status_t pmix_local_ranks(bootstrap_t *bs, int **ranks_out, int *n_out)
{
    pmix_impl_t *impl = bs->impl;
    int *ranks = malloc(sizeof(*ranks) * (size_t)bs->size);
    int n = 0;
    if (ranks == NULL)
        return UCOLL_ERR_NO_MEMORY;
    pmix_value_t *val = NULL;
    pmix_proc_t wildcard;
    PMIX_PROC_LOAD(&wildcard, impl->me.nspace, PMIX_RANK_WILDCARD);
    if (!impl->singleton && PMIx_Get(&wildcard, PMIX_LOCAL_PEERS, NULL, 0, &val) == PMIX_SUCCESS &&
        val != NULL && val->type == PMIX_STRING && val->data.string != NULL) {
        const int nfake = bootstrap_test_hosts();
        for (const char *p = val->data.string; *p != '\0';) {
            char *end;
            long r = strtol(p, &end, 10);
            if (end == p)
                break;
            if (r >= 0 && r < bs->size && n < bs->size &&
                (nfake <= 1 || r % nfake == bs->rank % nfake))
                ranks[n++] = (int)r;
            p = *end == ',' ? end + 1 : end;
        }
    } else if (!impl->singleton) {
        fprintf(stderr,
                "ucoll: rank %d: PMIx gave no PMIX_LOCAL_PEERS; every other rank is "
                "treated as on another host\n",
                bs->rank);
    }
    if (val != NULL)
        PMIX_VALUE_RELEASE(val);
    int have_me = 0;
    for (int i = 0; i < n; i++)
        have_me |= ranks[i] == bs->rank;
    if (!have_me)
        ranks[n++] = bs->rank;
    qsort(ranks, (size_t)n, sizeof(*ranks), rank_order);
    *ranks_out = ranks;
    *n_out = n;
    return UCOLL_OK;
}

static void pmix_finalize(bootstrap_t *bs)
{
    pmix_impl_t *impl = bs->impl;
    PMIx_Finalize(NULL, 0);
    free(impl->own);
    free(impl);
    free(bs);
}

ucoll_status_t bootstrap_pmix_create(bootstrap_t **out)
{
    if (pmix_initialised_once) {
        fprintf(stderr, "ucoll: ucoll_init may be called only once per process (PMIx cannot "
                        "be re-initialised reliably)\n");
        return UCOLL_ERR_STATE;
    }
    bootstrap_t *bs = calloc(1, sizeof(*bs));
    pmix_impl_t *impl = calloc(1, sizeof(*impl));
    if (bs == NULL || impl == NULL) {
        free(bs);
        free(impl);
        return UCOLL_ERR_NO_MEMORY;
    }
    pmix_initialised_once = 1;
    pmix_status_t rc = PMIx_Init(&impl->me, NULL, 0);
    if (rc == PMIX_ERR_UNREACH) {
        impl->singleton = 1; /* no launcher: a 1-rank job */
    } else if (rc != PMIX_SUCCESS) {
        fprintf(stderr,
                "ucoll: PMIx_Init failed: %s (run under srun --mpi=pmix, prterun or "
                "mpirun, or without a launcher as a single rank)\n",
                PMIx_Error_string(rc));
        free(impl);
        free(bs);
        return UCOLL_ERR_BOOTSTRAP;
    }
    bs->impl = impl;
    bs->rank = 0;
    bs->size = 1;
    if (!impl->singleton) {
        pmix_proc_t wildcard;
        uint32_t size = 0;
        PMIX_PROC_LOAD(&wildcard, impl->me.nspace, PMIX_RANK_WILDCARD);
        if (get_u32(&wildcard, PMIX_JOB_SIZE, &size) != 0 || size == 0) {
            fprintf(stderr, "ucoll: PMIx did not give the job size (PMIX_JOB_SIZE)\n");
            PMIx_Finalize(NULL, 0);
            free(impl);
            free(bs);
            return UCOLL_ERR_BOOTSTRAP;
        }
        bs->rank = (int)impl->me.rank;
        bs->size = (int)size;
    }
    bs->local_ranks = pmix_local_ranks;
    bs->publish = pmix_publish;
    bs->lookup = pmix_lookup;
    bs->fence = pmix_fence;
    bs->finalize = pmix_finalize;
    *out = bs;
    return UCOLL_OK;
}
