/*
 * two_copy_ceiling: how fast a two-rank allreduce (float32 sum) can be on this host when the
 * data moves through shared memory, measured without ucoll, UCX or MPI, so that the figure
 * bounds what any channel with two copies can reach here.
 *
 * Two processes (fork), one per CPU, each with its own input and output (private memory, like a
 * caller's buffers). Each direction has a ring of NB chunks of CH bytes in a shared mapping,
 * small enough to stay in cache: the writer copies a chunk in and publishes it by a
 * release-store of its count; the reader consumes it and release-stores its own count. The
 * allreduce is the half-vector one: each rank streams the half it does not own to its peer,
 * reduces the peer's chunks straight out of the ring into its own half (no scratch buffer), then
 * streams its reduced half back and copies the peer's into place. Work per rank: read L
 * (input), write L (output), 2 x L/2 through the ring each way; no synchronisation but the
 * ring counts. It also times memcpy of L bytes alone in the same process, and the result is
 * checked.
 *
 * Usage: two_copy_ceiling [-s BYTES] [-c CHUNK] [-k CHUNKS] [-n ITERS]
 * (defaults 16 MiB, 64 KiB, 8, 20); prints each rank's best time, GB/s (L / time) and its
 * percentage of memcpy's.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_setaffinity */
#endif

#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    _Atomic unsigned long written; /* chunks published by the writer */
    char pad[56];
    _Atomic unsigned long consumed; /* chunks the reader is done with */
    char pad2[56];
} ring_ctl_t;

typedef struct {
    ring_ctl_t *ctl;
    char *data;
    unsigned long count; /* this side's count: chunks written (writer) or consumed (reader) */
} ring_t;

static size_t chunk_bytes = 65536;
static unsigned long nchunks = 8;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* copies n <= chunk_bytes into the ring's next chunk; 0 if the reader has not freed it */
static int ring_put(ring_t *r, const void *src, size_t n)
{
    if (r->count - atomic_load_explicit(&r->ctl->consumed, memory_order_acquire) >= nchunks)
        return 0;
    memcpy(r->data + (r->count % nchunks) * chunk_bytes, src, n);
    atomic_store_explicit(&r->ctl->written, ++r->count, memory_order_release);
    return 1;
}

/* consumes the ring's next chunk of n bytes: dst = own + chunk (own != NULL) or dst = chunk;
 * 0 if it has not been written yet */
static int ring_take(ring_t *r, float *dst, const float *own, size_t n)
{
    if (atomic_load_explicit(&r->ctl->written, memory_order_acquire) <= r->count)
        return 0;
    const float *c = (const float *)(r->data + (r->count % nchunks) * chunk_bytes);
    if (own != NULL)
        for (size_t i = 0; i < n / sizeof(float); i++)
            dst[i] = own[i] + c[i];
    else
        memcpy(dst, c, n);
    atomic_store_explicit(&r->ctl->consumed, ++r->count, memory_order_release);
    return 1;
}

/* streams `bytes` of src out through `out` while taking as many from `in` into dst (reduced
 * with own when own != NULL); exits after 10 s without progress (the peer died) */
static void exchange(ring_t *out, const char *src, ring_t *in, char *dst, const char *own,
                     size_t bytes)
{
    size_t sent = 0, got = 0, idle = 0;
    double idle_since = 0;
    while (sent < bytes || got < bytes) {
        const size_t before = sent + got;
        const size_t s = bytes - sent < chunk_bytes ? bytes - sent : chunk_bytes;
        const size_t g = bytes - got < chunk_bytes ? bytes - got : chunk_bytes;
        if (sent < bytes && ring_put(out, src + sent, s))
            sent += s;
        if (got < bytes &&
            ring_take(in, (float *)(dst + got), own != NULL ? (const float *)(own + got) : NULL, g))
            got += g;
        if (sent + got != before) {
            idle = 0;
        } else if (++idle % 1000000 == 0) { /* the clock only now and then */
            if (idle == 1000000) {
                idle_since = now_s();
            } else if (now_s() - idle_since > 10) {
                fprintf(stderr, "two_copy_ceiling: no progress for 10 s: the peer is gone\n");
                exit(1);
            }
        }
    }
}

int main(int argc, char **argv)
{
    size_t bytes = 16u << 20;
    int iters = 20, opt;
    while ((opt = getopt(argc, argv, "s:c:k:n:h")) != -1) {
        switch (opt) {
        case 's':
            bytes = strtoul(optarg, NULL, 0);
            break;
        case 'c':
            chunk_bytes = strtoul(optarg, NULL, 0);
            break;
        case 'k':
            nchunks = strtoul(optarg, NULL, 0);
            break;
        case 'n':
            iters = atoi(optarg);
            break;
        default:
            fprintf(stderr, "usage: %s [-s BYTES] [-c CHUNK] [-k CHUNKS] [-n ITERS]\n", argv[0]);
            return opt == 'h' ? 0 : 2;
        }
    }
    if (bytes == 0 || bytes % (2 * sizeof(float)) != 0 || chunk_bytes == 0 ||
        chunk_bytes % sizeof(float) != 0 || nchunks == 0 || iters <= 0) {
        fprintf(stderr, "%s: BYTES a positive multiple of 8, CHUNK of 4, CHUNKS and ITERS > 0\n",
                argv[0]);
        return 2;
    }
    const size_t ring_bytes = (sizeof(ring_ctl_t) + nchunks * chunk_bytes + 4095) & ~(size_t)4095;
    char *shared =
        mmap(NULL, 2 * ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    const size_t n = bytes / sizeof(float), half = bytes / 2;
    float *input = malloc(bytes), *output = malloc(bytes);
    char *copy_src = malloc(bytes), *copy_dst = malloc(bytes);
    if (input == NULL || output == NULL || copy_src == NULL || copy_dst == NULL) {
        perror("malloc");
        return 1;
    }
    const pid_t child = fork();
    if (child < 0) {
        perror("fork");
        return 1;
    }
    const int me = child == 0;
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    CPU_SET(me, &cpus);
    sched_setaffinity(0, sizeof(cpus), &cpus); /* a hint: fine if it fails */

    /* ring r is written by rank r */
    ring_t out = {(ring_ctl_t *)(shared + (size_t)me * ring_bytes),
                  shared + (size_t)me * ring_bytes + sizeof(ring_ctl_t), 0};
    ring_t in = {(ring_ctl_t *)(shared + (size_t)(1 - me) * ring_bytes),
                 shared + (size_t)(1 - me) * ring_bytes + sizeof(ring_ctl_t), 0};
    for (size_t i = 0; i < n; i++)
        input[i] = (float)((me + i) % 7);
    memset(output, 0, bytes);
    memset(copy_src, 1, bytes);
    memset(copy_dst, 0, bytes);

    /* rank 0 owns the lower half, rank 1 the upper */
    const size_t mine = me ? half : 0, theirs = me ? 0 : half;
    double best = 1e30, best_copy = 1e30;
    for (int it = 0; it < iters; it++) {
        double t0 = now_s();
        memcpy(copy_dst, copy_src, bytes);
        const double tc = now_s() - t0;
        best_copy = tc < best_copy ? tc : best_copy;
        t0 = now_s();
        exchange(&out, (const char *)input + theirs, &in, (char *)output + mine,
                 (const char *)input + mine, half);
        exchange(&out, (const char *)output + mine, &in, (char *)output + theirs, NULL, half);
        const double t = now_s() - t0;
        best = t < best ? t : best;
    }
    int wrong = 0;
    for (size_t i = 0; i < n && !wrong; i++)
        wrong = output[i] != (float)(i % 7 + (1 + i) % 7);
    printf("rank %d: %zu B, %zu B x %lu chunks: allreduce %.0f us (%.2f GB/s), memcpy %.0f us "
           "(%.2f GB/s): %.0f %% of memcpy%s\n",
           me, bytes, chunk_bytes, nchunks, best * 1e6, (double)bytes / best * 1e-9,
           best_copy * 1e6, (double)bytes / best_copy * 1e-9, 100 * best_copy / best,
           wrong ? "  WRONG RESULT" : "");
    fflush(stdout);
    if (child > 0) {
        int status = 0;
        waitpid(child, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            wrong = 1;
    }
    return wrong;
}
