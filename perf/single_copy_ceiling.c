/*
 * single_copy_ceiling: how fast a two-rank allreduce (float32 sum) can be on this host when each
 * rank reads its peer's memory with process_vm_readv (the kernel's one copy, as ucoll's single
 * copy does), measured without ucoll, UCX or MPI, so that the figure bounds what any
 * single-copy channel can reach here. perf/two_copy_ceiling is its counterpart for channels
 * through shared memory.
 *
 * Two processes (fork), one per CPU, each with its own input and output (private memory, like a
 * caller's buffers). The allreduce is the half-vector one with its copies fused: each rank
 * reads the half it owns of its peer's input in chunks of CHUNK bytes into a scratch buffer
 * (small enough to stay in cache) and adds each chunk to its own input into its output; once
 * both halves are reduced (a flag in a shared page), it reads its peer's reduced half straight
 * into its output. Work per rank: L/2 read across processes twice, L/2 reduced, nothing else;
 * the flags are the only synchronisation. It also times, in the same iterations, memcpy of L
 * bytes and one process_vm_readv of L bytes from the peer (both ranks at once), and checks
 * every iteration's result.
 *
 * Usage: single_copy_ceiling [-s BYTES] [-c CHUNK] [-n ITERS]
 * (defaults 16 MiB, 256 KiB, 20); prints each rank's best times, GB/s (L / time) and the
 * allreduce's percentage of memcpy's.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_setaffinity, process_vm_readv */
#endif

#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* one rank's progress, on a line of its own: iterations started, halves reduced, finished */
typedef struct {
    _Atomic unsigned long started, reduced, finished;
    char pad[64 - 3 * sizeof(unsigned long)];
} flags_t;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* waits until *flag reaches want; exits after 10 s (the peer died) */
static void wait_for(_Atomic unsigned long *flag, unsigned long want)
{
    double since = 0;
    for (unsigned long spins = 1; atomic_load_explicit(flag, memory_order_acquire) < want;
         spins++) {
        if (spins % 1000000 != 0)
            continue;
        if (since == 0) {
            since = now_s();
        } else if (now_s() - since > 10) {
            fprintf(stderr, "single_copy_ceiling: no progress for 10 s: the peer is gone\n");
            exit(1);
        }
    }
}

/* reads n bytes at the peer's address `from` into `to` */
static void read_peer(pid_t peer, void *to, const void *from, size_t n)
{
    size_t done = 0;
    while (done < n) {
        struct iovec local = {(char *)to + done, n - done};
        struct iovec remote = {(char *)(uintptr_t)from + done, n - done};
        const ssize_t got = process_vm_readv(peer, &local, 1, &remote, 1, 0);
        if (got <= 0) {
            perror("single_copy_ceiling: process_vm_readv (ptrace scope? see README)");
            exit(1);
        }
        done += (size_t)got;
    }
}

int main(int argc, char **argv)
{
    size_t bytes = 16u << 20, chunk = 256u << 10;
    int iters = 20, opt;
    while ((opt = getopt(argc, argv, "s:c:n:h")) != -1) {
        switch (opt) {
        case 's':
            bytes = strtoul(optarg, NULL, 0);
            break;
        case 'c':
            chunk = strtoul(optarg, NULL, 0);
            break;
        case 'n':
            iters = atoi(optarg);
            break;
        default:
            fprintf(stderr, "usage: %s [-s BYTES] [-c CHUNK] [-n ITERS]\n", argv[0]);
            return opt == 'h' ? 0 : 2;
        }
    }
    if (bytes == 0 || bytes % (2 * sizeof(float)) != 0 || chunk == 0 ||
        chunk % sizeof(float) != 0 || iters <= 0) {
        fprintf(stderr, "%s: BYTES a positive multiple of 8, CHUNK of 4, ITERS > 0\n", argv[0]);
        return 2;
    }
    flags_t *flags =
        mmap(NULL, 2 * sizeof(flags_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (flags == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    const size_t n = bytes / sizeof(float), half = bytes / 2;
    /* the same virtual addresses in both processes after fork, each its own pages */
    float *input = malloc(bytes), *output = malloc(bytes), *scratch = malloc(chunk);
    char *copy_src = malloc(bytes), *copy_dst = malloc(bytes);
    if (input == NULL || output == NULL || scratch == NULL || copy_src == NULL ||
        copy_dst == NULL) {
        perror("malloc");
        return 1;
    }
    const pid_t parent = getpid(), child = fork();
    if (child < 0) {
        perror("fork");
        return 1;
    }
    const int me = child == 0;
    const pid_t peer = me ? parent : child;
    /* under Yama's ptrace_scope 1 a process may read only its descendants' memory unless it
     * is named: the parent lets the child read it (before either reads: the first read comes
     * after both have started). Without Yama the call fails with EINVAL and is not needed. */
    if (!me && prctl(PR_SET_PTRACER, (unsigned long)child, 0, 0, 0) != 0 && errno != EINVAL)
        perror("single_copy_ceiling: prctl(PR_SET_PTRACER) (reads may be refused)");
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    CPU_SET(me, &cpus);
    sched_setaffinity(0, sizeof(cpus), &cpus); /* a hint: fine if it fails */
    flags_t *mine_f = &flags[me], *peer_f = &flags[1 - me];

    for (size_t i = 0; i < n; i++)
        input[i] = (float)((me + i) % 7);
    memset(output, 0, bytes);
    memset(scratch, 0, chunk);
    memset(copy_src, 1, bytes);
    memset(copy_dst, 0, bytes);

    /* rank 0 owns the lower half, rank 1 the upper */
    const size_t mine = me ? half : 0, theirs = me ? 0 : half;
    double best = 1e30, best_copy = 1e30, best_read = 1e30;
    int wrong = 0;
    for (unsigned long it = 1; it <= (unsigned long)iters; it++) {
        double t0 = now_s();
        memcpy(copy_dst, copy_src, bytes);
        const double tc = now_s() - t0;
        best_copy = tc < best_copy ? tc : best_copy;

        /* both start together */
        atomic_store_explicit(&mine_f->started, it, memory_order_release);
        wait_for(&peer_f->started, it);
        t0 = now_s();
        read_peer(peer, copy_dst, copy_src, bytes);
        const double tr = now_s() - t0;
        best_read = tr < best_read ? tr : best_read;

        atomic_store_explicit(&mine_f->finished, 2 * it - 1, memory_order_release);
        wait_for(&peer_f->finished, 2 * it - 1);
        t0 = now_s();
        for (size_t off = 0; off < half; off += chunk) {
            const size_t len = half - off < chunk ? half - off : chunk;
            read_peer(peer, scratch, (const char *)input + mine + off, len);
            const float *own = (const float *)((const char *)input + mine + off);
            float *dst = (float *)((char *)output + mine + off);
            for (size_t i = 0; i < len / sizeof(float); i++)
                dst[i] = own[i] + scratch[i];
        }
        atomic_store_explicit(&mine_f->reduced, it, memory_order_release);
        wait_for(&peer_f->reduced, it);
        read_peer(peer, (char *)output + theirs, (const char *)output + theirs, half);
        const double t = now_s() - t0;
        best = t < best ? t : best;
        /* every iteration's result, outside the timing; then a fresh output for the next */
        for (size_t i = 0; i < n && !wrong; i++)
            wrong = output[i] != (float)(i % 7 + (1 + i) % 7);
        /* the peer may still be reading this rank's half: neither writes its output again
         * (the memset here, the next iteration's reduce) before both are done */
        atomic_store_explicit(&mine_f->finished, 2 * it, memory_order_release);
        wait_for(&peer_f->finished, 2 * it);
        memset(output, 0, bytes);
    }
    printf("rank %d: %zu B, chunks of %zu B: allreduce %.0f us (%.2f GB/s), memcpy %.0f us "
           "(%.2f GB/s), process_vm_readv of L %.0f us (%.2f GB/s): allreduce %.0f %% of "
           "memcpy%s\n",
           me, bytes, chunk, best * 1e6, (double)bytes / best * 1e-9, best_copy * 1e6,
           (double)bytes / best_copy * 1e-9, best_read * 1e6, (double)bytes / best_read * 1e-9,
           100 * best_copy / best, wrong ? "  WRONG RESULT" : "");
    fflush(stdout);
    if (me)
        return wrong;
    int status = 1;
    waitpid(child, &status, 0);
    return wrong || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
}
