/*
 * The process's regions (see shm_region.h). Invariant: every listed region is mapped at
 * [base, base + len) and its memfd is open as fd, both until shm_region_free takes it off the
 * list; serials are never reused within a process.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create */
#endif

#include "shm_region.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

struct region {
    struct region *next;
    char *base;
    size_t len;
    int fd;
    uint64_t serial;
};

static pthread_mutex_t regions_lock = PTHREAD_MUTEX_INITIALIZER;
static struct region *regions;
static uint64_t last_serial;
static unsigned nregions;

int shm_region_alloc(size_t len, void **ptr)
{
    if (len == 0 || ptr == NULL)
        return EINVAL;
    const long page = sysconf(_SC_PAGESIZE);
    const size_t psz = page > 0 ? (size_t)page : 4096;
    if (len > SIZE_MAX - psz)
        return ENOMEM;
    const size_t mapped = (len + psz - 1) / psz * psz;
    struct region *r = calloc(1, sizeof(*r));
    if (r == NULL)
        return ENOMEM;
    pthread_mutex_lock(&regions_lock);
    r->serial = ++last_serial;
    pthread_mutex_unlock(&regions_lock);
    char name[48];
    snprintf(name, sizeof(name), SHM_REGION_NAME "%llu", (unsigned long long)r->serial);
    int err = 0;
    r->fd = memfd_create(name, MFD_CLOEXEC);
    if (r->fd < 0) {
        err = errno;
    } else if (ftruncate(r->fd, (off_t)mapped) != 0) {
        err = errno;
    } else {
        r->base = mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
        if (r->base == MAP_FAILED)
            err = errno;
    }
    if (err != 0) {
        if (r->fd >= 0)
            close(r->fd);
        free(r);
        return err;
    }
    r->len = mapped;
    pthread_mutex_lock(&regions_lock);
    r->next = regions;
    regions = r;
    nregions++;
    pthread_mutex_unlock(&regions_lock);
    *ptr = r->base;
    return 0;
}

int shm_region_free(void *ptr)
{
    pthread_mutex_lock(&regions_lock);
    struct region **at = &regions;
    while (*at != NULL && (*at)->base != ptr)
        at = &(*at)->next;
    struct region *r = *at;
    if (r != NULL) {
        *at = r->next;
        nregions--;
    }
    pthread_mutex_unlock(&regions_lock);
    if (r == NULL || ptr == NULL)
        return -1;
    munmap(r->base, r->len);
    close(r->fd);
    free(r);
    return 0;
}

int shm_region_find(const void *addr, size_t len, shm_region_ref_t *ref)
{
    const char *a = addr;
    int found = 0;
    pthread_mutex_lock(&regions_lock);
    for (const struct region *r = regions; r != NULL; r = r->next)
        if (a >= r->base && (size_t)(a - r->base) <= r->len &&
            len <= r->len - (size_t)(a - r->base)) {
            ref->fd = r->fd;
            ref->pad = 0;
            ref->serial = r->serial;
            ref->len = r->len;
            ref->off = (uint64_t)(a - r->base);
            found = 1;
            break;
        }
    pthread_mutex_unlock(&regions_lock);
    return found;
}

unsigned shm_region_count(void)
{
    pthread_mutex_lock(&regions_lock);
    const unsigned n = nregions;
    pthread_mutex_unlock(&regions_lock);
    return n;
}
