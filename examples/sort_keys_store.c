/*
 * examples/sort_keys_store.c: the second demo, started with no launcher at all. Every rank
 * holds keys of its own; together they sort them across the ranks, so that rank r ends with
 * the r-th of p equal key ranges, sorted:
 *   1. the key range each rank owns is fixed (keys are 32-bit, owner = key * p / 2^32);
 *   2. ucoll_alltoall of the counts tells every rank how many keys each other rank sends it;
 *   3. ucoll_alltoallv moves the keys to their owners, which sort them locally;
 *   4. checks: ucoll_allreduce sums the key counts and a checksum of the keys (nothing lost or
 *      duplicated), ucoll_allgather of each rank's smallest and largest key shows the ranges in
 *      order, and every rank checks its own keys are sorted and in its range.
 * The job starts through the store: rank 0 serves HOST:PORT and the others connect to it.
 *
 * Usage: sort_keys_store HOST:PORT RANK SIZE [KEYS_PER_RANK]   (default 100000)
 *   or, with UCOLL_STORE, UCOLL_RANK and UCOLL_SIZE set: sort_keys_store [KEYS_PER_RANK]
 * examples/run-store-demo.sh starts N of them from a shell loop. Exit status 0 when the keys
 * are sorted and complete (every rank), 1 otherwise.
 */
#define _POSIX_C_SOURCE 200809L

#include <ucoll.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* rank r's i-th key: a fixed pseudo-random function of (r, i), the same on every run */
static uint32_t key_of(int rank, size_t i)
{
    uint64_t x = ((uint64_t)(uint32_t)rank << 40) ^ (uint64_t)i ^ UINT64_C(0x9E3779B97F4A7C15);
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    x ^= x >> 33;
    x *= UINT64_C(0xc4ceb9fe1a85ec53);
    x ^= x >> 33;
    return (uint32_t)x;
}

/* the counts travel as UCOLL_UINT64 */
_Static_assert(sizeof(size_t) == sizeof(uint64_t), "size_t is 64 bits");

static int owner_of(uint32_t key, int size)
{
    return (int)(((uint64_t)key * (uint64_t)size) >> 32);
}

static int cmp_u32(const void *a, const void *b)
{
    const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static int die(const char *what, ucoll_status_t st)
{
    fprintf(stderr, "sort_keys_store: %s failed: %s\n", what, ucoll_strerror(st));
    return 1;
}

int main(int argc, char **argv)
{
    ucoll_comm_t *world = NULL;
    ucoll_status_t st;
    size_t nkeys = 100000;
    if (argc >= 4) { /* HOST:PORT RANK SIZE [KEYS] */
        if (argc == 5)
            nkeys = strtoul(argv[4], NULL, 10);
        st = ucoll_init_store(argv[1], atoi(argv[2]), atoi(argv[3]), &world);
    } else if (argc <= 2) { /* the environment names the store */
        if (argc == 2)
            nkeys = strtoul(argv[1], NULL, 10);
        st = ucoll_init(&world);
    } else {
        fprintf(stderr, "usage: sort_keys_store HOST:PORT RANK SIZE [KEYS_PER_RANK]\n"
                        "       UCOLL_STORE=HOST:PORT UCOLL_RANK=R UCOLL_SIZE=N "
                        "sort_keys_store [KEYS_PER_RANK]\n");
        return 2;
    }
    if (st != UCOLL_OK)
        return die("init", st);
    const int rank = ucoll_comm_rank(world), size = ucoll_comm_size(world);

    /* 1. my keys, grouped by owner (a counting sort by destination) */
    uint32_t *keys = malloc(nkeys * sizeof(*keys) + 1),
             *by_owner = malloc(nkeys * sizeof(*keys) + 1);
    size_t *send_counts = calloc((size_t)size, sizeof(size_t)),
           *send_displs = calloc((size_t)size, sizeof(size_t)),
           *recv_counts = calloc((size_t)size, sizeof(size_t)),
           *recv_displs = calloc((size_t)size, sizeof(size_t));
    uint32_t *bounds = malloc(2 * (size_t)size * sizeof(uint32_t));
    if (keys == NULL || by_owner == NULL || send_counts == NULL || send_displs == NULL ||
        recv_counts == NULL || recv_displs == NULL || bounds == NULL)
        return die("malloc", UCOLL_ERR_NO_MEMORY);
    uint64_t local[2] = {nkeys, 0}; /* key count, key sum */
    for (size_t i = 0; i < nkeys; i++) {
        keys[i] = key_of(rank, i);
        send_counts[owner_of(keys[i], size)]++;
        local[1] += keys[i];
    }
    for (int d = 1; d < size; d++)
        send_displs[d] = send_displs[d - 1] + send_counts[d - 1];
    {
        size_t *fill = calloc((size_t)size, sizeof(size_t));
        if (fill == NULL)
            return die("malloc", UCOLL_ERR_NO_MEMORY);
        for (size_t i = 0; i < nkeys; i++) {
            const int d = owner_of(keys[i], size);
            by_owner[send_displs[d] + fill[d]++] = keys[i];
        }
        free(fill);
    }

    /* 2. how many keys each rank sends me */
    if ((st = ucoll_alltoall(world, send_counts, recv_counts, 1, UCOLL_UINT64)) != UCOLL_OK)
        return die("alltoall of the counts", st);
    size_t mine = 0;
    for (int s = 0; s < size; s++) {
        recv_displs[s] = mine;
        mine += recv_counts[s];
    }

    /* 3. the keys to their owners, then a local sort */
    uint32_t *sorted = malloc(mine * sizeof(*sorted) + 1);
    if (sorted == NULL)
        return die("malloc", UCOLL_ERR_NO_MEMORY);
    if ((st = ucoll_alltoallv(world, by_owner, send_counts, send_displs, sorted, recv_counts,
                              recv_displs, UCOLL_UINT32)) != UCOLL_OK)
        return die("alltoallv of the keys", st);
    qsort(sorted, mine, sizeof(*sorted), cmp_u32);

    /* 4. checks: nothing lost, every range in order, every rank's keys sorted and its own */
    int ok = 1;
    uint64_t after[2] = {mine, 0}, total_before[2], total_after[2];
    for (size_t i = 0; i < mine; i++) {
        after[1] += sorted[i];
        if (owner_of(sorted[i], size) != rank || (i > 0 && sorted[i - 1] > sorted[i]))
            ok = 0;
    }
    /* an empty range reports (max, 0), which the order check below skips */
    const uint32_t my_bounds[2] = {mine ? sorted[0] : UINT32_MAX, mine ? sorted[mine - 1] : 0};
    if ((st = ucoll_allreduce(world, local, total_before, 2, UCOLL_UINT64, UCOLL_OP_SUM)) !=
            UCOLL_OK ||
        (st = ucoll_allreduce(world, after, total_after, 2, UCOLL_UINT64, UCOLL_OP_SUM)) !=
            UCOLL_OK ||
        (st = ucoll_allgather(world, my_bounds, bounds, 2, UCOLL_UINT32)) != UCOLL_OK)
        return die("the checks' collectives", st);
    const uint64_t expect_keys = (uint64_t)nkeys * (uint64_t)size;
    if (total_before[0] != expect_keys || total_after[0] != expect_keys ||
        total_after[1] != total_before[1])
        ok = 0;
    uint32_t last_max = 0;
    int seen = 0;
    for (int r = 0; r < size; r++) {
        if (bounds[2 * r] > bounds[2 * r + 1])
            continue; /* an empty range */
        if (seen && bounds[2 * r] < last_max)
            ok = 0;
        last_max = bounds[2 * r + 1];
        seen = 1;
    }
    int all_ok = 0;
    if ((st = ucoll_allreduce(world, &ok, &all_ok, 1, UCOLL_INT32, UCOLL_OP_MIN)) != UCOLL_OK)
        return die("allreduce of the verdicts", st);
    if (rank == 0)
        printf("sort_keys_store: %d ranks started by the store, %llu keys sorted across them "
               "(rank 0 holds %zu): %s\n",
               size, (unsigned long long)expect_keys, mine,
               all_ok ? "sorted and complete" : "WRONG");
    free(keys);
    free(by_owner);
    free(sorted);
    free(bounds);
    free(send_counts);
    free(send_displs);
    free(recv_counts);
    free(recv_displs);
    if ((st = ucoll_finalize(world)) != UCOLL_OK)
        return die("finalize", st);
    return all_ok ? 0 : 1;
}
