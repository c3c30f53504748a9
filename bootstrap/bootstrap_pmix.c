/*
 * PMIx bootstrap: rank and size from PMIx_Init / PMIX_JOB_SIZE, worker addresses through
 * PMIx_Put + PMIx_Commit + PMIx_Fence(collect data) + PMIx_Get. PMIx_Init is called at most
 * once per process (re-initialising inside one job fails intermittently). Without a launcher
 * PMIx_Init returns PMIX_ERR_UNREACH and the process runs as a 1-rank job.
 */
#include "bootstrap.h"

#include <pmix.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    pmix_proc_t me;
    int singleton;
    unsigned exchanges; /* makes each exchange's key unique */
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

static ucoll_status_t pmix_allgatherv(bootstrap_t *bs, const void *mine, size_t len,
                                      void ***blobs_out, size_t **lens_out)
{
    pmix_impl_t *impl = bs->impl;
    void **blobs = calloc((size_t)bs->size, sizeof(*blobs));
    size_t *lens = calloc((size_t)bs->size, sizeof(*lens));
    char key[PMIX_MAX_KEYLEN + 1];
    pmix_status_t rc = PMIX_SUCCESS;

    if (blobs == NULL || lens == NULL)
        goto nomem;
    if (impl->singleton) {
        if ((blobs[0] = malloc(len ? len : 1)) == NULL)
            goto nomem;
        memcpy(blobs[0], mine, len);
        lens[0] = len;
        goto done;
    }
    snprintf(key, sizeof(key), "ucoll.blob.%u", impl->exchanges++);
    pmix_value_t value;
    PMIX_VALUE_CONSTRUCT(&value);
    value.type = PMIX_BYTE_OBJECT;
    value.data.bo.bytes = (char *)mine;
    value.data.bo.size = len;
    if ((rc = PMIx_Put(PMIX_GLOBAL, key, &value)) != PMIX_SUCCESS ||
        (rc = PMIx_Commit()) != PMIX_SUCCESS)
        goto fail;
    pmix_info_t info;
    bool collect = true;
    PMIX_INFO_CONSTRUCT(&info);
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    rc = PMIx_Fence(NULL, 0, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS)
        goto fail;
    for (int i = 0; i < bs->size; i++) {
        pmix_proc_t peer;
        pmix_value_t *val = NULL;
        PMIX_PROC_LOAD(&peer, impl->me.nspace, (pmix_rank_t)i);
        rc = PMIx_Get(&peer, key, NULL, 0, &val);
        if (rc != PMIX_SUCCESS || val == NULL || val->type != PMIX_BYTE_OBJECT) {
            if (rc == PMIX_SUCCESS)
                rc = PMIX_ERR_TYPE_MISMATCH;
            if (val != NULL)
                PMIX_VALUE_RELEASE(val);
            goto fail;
        }
        lens[i] = val->data.bo.size;
        blobs[i] = malloc(lens[i] ? lens[i] : 1);
        if (blobs[i] == NULL) {
            PMIX_VALUE_RELEASE(val);
            goto nomem;
        }
        memcpy(blobs[i], val->data.bo.bytes, lens[i]);
        PMIX_VALUE_RELEASE(val);
    }
done:
    *blobs_out = blobs;
    *lens_out = lens;
    return UCOLL_OK;
fail:
    fprintf(stderr, "ucoll: PMIx exchange of worker addresses failed: %s\n", PMIx_Error_string(rc));
    bootstrap_free_blobs(bs->size, blobs, lens);
    return UCOLL_ERR_BOOTSTRAP;
nomem:
    bootstrap_free_blobs(bs->size, blobs, lens);
    return UCOLL_ERR_NO_MEMORY;
}

static void pmix_finalize(bootstrap_t *bs)
{
    pmix_impl_t *impl = bs->impl;
    PMIx_Finalize(NULL, 0);
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
    bs->local_size = 1;
    if (!impl->singleton) {
        pmix_proc_t wildcard;
        uint32_t size = 0, local = 0;
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
        if (get_u32(&wildcard, PMIX_LOCAL_SIZE, &local) == 0 && local > 0)
            bs->local_size = (int)local;
    }
    bs->allgatherv = pmix_allgatherv;
    bs->fence = pmix_fence;
    bs->finalize = pmix_finalize;
    *out = bs;
    return UCOLL_OK;
}

void bootstrap_free_blobs(int n, void **blobs, size_t *lens)
{
    if (blobs != NULL)
        for (int i = 0; i < n; i++)
            free(blobs[i]);
    free(blobs);
    free(lens);
}
