/*
 * Regions: memory a process allocates through ucoll (ucoll_mem_alloc) that the other ranks of
 * its host may map and read in place. Each region is a memfd of its own, named
 * "ucoll-mem-<serial>", mapped shared by its owner; a peer finds it as /proc/<pid>/fd/<fd> and
 * checks the name, so a descriptor number reused by a later region is never taken for an earlier
 * one. The registry is process-wide and thread-safe.
 */
#ifndef UCOLL_SHM_REGION_H
#define UCOLL_SHM_REGION_H

#include <stddef.h>
#include <stdint.h>

#define SHM_REGION_NAME "ucoll-mem-"

/* what a peer needs to map the region that holds a buffer: the region's descriptor in its
 * owner, serial number and length, and the buffer's offset in it */
typedef struct {
    int32_t fd;
    uint32_t pad;
    uint64_t serial, len, off;
} shm_region_ref_t;

/* a new region of at least len bytes (> 0), zero-filled, at *ptr; 0, or an errno value */
int shm_region_alloc(size_t len, void **ptr);
/* frees the region that starts at ptr; 0, or -1 if ptr starts none */
int shm_region_free(void *ptr);
/* 1 if [addr, addr + len) lies inside one region (*ref then says which and where) */
int shm_region_find(const void *addr, size_t len, shm_region_ref_t *ref);
/* the regions not freed yet (tests) */
unsigned shm_region_count(void);

#endif
