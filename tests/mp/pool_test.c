/*
 * tests/mp/pool_test.c: under UCOLL_SINGLE_COPY_MIN=regions ucoll's scratch comes from regions
 * (ucoll_mem_alloc's memory), each holding a file descriptor, but never more than a bounded
 * number of them, however many requests hold scratch at once: a library must not take a
 * process's descriptors.
 * R rounds of: N persistent allgathers (run it with UCOLL_ALLGATHER_ALG=bruck, whose every
 * request keeps a scratch buffer) from ucoll_mem_alloc buffers, all started, then all waited,
 * results checked exactly; this process's descriptors that name a region ("ucoll-mem-" in the
 * link of /proc/self/fd/N) counted, the program's own two included, at most --max; the
 * requests freed (their scratch goes back to ucoll's pool, which later rounds must reuse: with
 * UCOLL_TEST_SHM_COUNTS the finalize line's pool_chunks shows it).
 * Usage: pool_test --expect-size P [--requests N (200)] [--rounds R (1)]
 *        [--count C int32 per rank (4096)] [--max M (66)]. Public API only.
 * Prints "pool_test: ... verdict: PASS|FAIL".
 */
#include <ucoll.h>

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures;

static void fail(int rank, const char *what, ucoll_status_t st)
{
    printf("FAIL rank %d: %s: %s\n", rank, what, ucoll_strerror(st));
    failures++;
}

/* this process's open descriptors whose link names a region */
static int region_descriptors(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char path[300], link[256];
        snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
        ssize_t len = readlink(path, link, sizeof(link) - 1);
        if (len <= 0)
            continue;
        link[len] = '\0';
        n += strstr(link, "ucoll-mem-") != NULL;
    }
    closedir(d);
    return n;
}

int main(int argc, char **argv)
{
    int expect = -1, nreq = 200, max = 66, rounds = 1;
    size_t count = 4096;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--expect-size") == 0 && i + 1 < argc)
            expect = atoi(argv[++i]);
        else if (strcmp(argv[i], "--requests") == 0 && i + 1 < argc)
            nreq = atoi(argv[++i]);
        else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (strcmp(argv[i], "--count") == 0 && i + 1 < argc)
            count = (size_t)atol(argv[++i]);
        else if (strcmp(argv[i], "--max") == 0 && i + 1 < argc)
            max = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: pool_test --expect-size P [--requests N] [--rounds R] "
                            "[--count C] [--max M]\n");
            return 2;
        }
    }
    ucoll_comm_t *w = NULL;
    ucoll_status_t st = ucoll_init(&w);
    if (st != UCOLL_OK) {
        printf("pool_test: ucoll_init: %s; verdict: FAIL\n", ucoll_strerror(st));
        return 1;
    }
    const int rank = ucoll_comm_rank(w), p = ucoll_comm_size(w);
    if (expect > 0 && p != expect) {
        printf("pool_test: job size %d, expected %d; verdict: FAIL\n", p, expect);
        ucoll_finalize(w);
        return 1;
    }
    int32_t *in = NULL, *out = NULL;
    if (ucoll_mem_alloc(count * sizeof(int32_t), (void **)&in) != UCOLL_OK ||
        ucoll_mem_alloc((size_t)nreq * p * count * sizeof(int32_t), (void **)&out) != UCOLL_OK) {
        printf("pool_test: ucoll_mem_alloc failed; verdict: FAIL\n");
        ucoll_finalize(w); /* the others are not left waiting for this rank */
        return 1;
    }
    for (size_t i = 0; i < count; i++)
        in[i] = (int32_t)(rank * 1000003 + (int)i);
    ucoll_request_t **req = calloc((size_t)nreq, sizeof(*req));
    if (req == NULL) {
        printf("pool_test: out of memory; verdict: FAIL\n");
        ucoll_finalize(w);
        return 1;
    }
    int held = 0;
    for (int round = 0; round < rounds; round++) {
        /* a result left from the round before must not pass for this one */
        memset(out, 0, (size_t)nreq * p * count * sizeof(int32_t));
        for (int k = 0; k < nreq; k++) {
            st = ucoll_allgather_init(w, in, out + (size_t)k * p * count, count, UCOLL_INT32,
                                      &req[k]);
            if (st != UCOLL_OK) {
                fail(rank, "ucoll_allgather_init", st);
                req[k] = NULL;
            }
        }
        for (int k = 0; k < nreq; k++)
            if (req[k] != NULL && (st = ucoll_start(req[k])) != UCOLL_OK)
                fail(rank, "ucoll_start", st);
        for (int k = 0; k < nreq; k++)
            if (req[k] != NULL && (st = ucoll_wait(req[k])) != UCOLL_OK)
                fail(rank, "ucoll_wait", st);
        long wrong = 0;
        for (int k = 0; k < nreq; k++)
            for (int r = 0; r < p; r++)
                for (size_t i = 0; i < count; i++)
                    wrong += out[((size_t)k * p + (size_t)r) * count + i] !=
                             (int32_t)(r * 1000003 + (int)i);
        if (wrong != 0) {
            printf("FAIL rank %d: %ld wrong elements\n", rank, wrong);
            failures++;
        }
        held = region_descriptors();
        if (held < 0 || held > max) {
            printf("FAIL rank %d: %d descriptors name regions with %d requests held (at most %d)\n",
                   rank, held, nreq, max);
            failures++;
        }
        for (int k = 0; k < nreq; k++)
            if (req[k] != NULL)
                ucoll_request_free(req[k]);
    }
    free(req);
    ucoll_mem_free(in);
    ucoll_mem_free(out);
    if ((st = ucoll_finalize(w)) != UCOLL_OK)
        fail(rank, "ucoll_finalize", st);
    printf("pool_test rank %d: %d requests, %d region descriptors; verdict: %s\n", rank, nreq, held,
           failures == 0 ? "PASS" : "FAIL");
    return failures == 0 ? 0 : 1;
}
