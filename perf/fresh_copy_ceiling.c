/*
 * fresh_copy_ceiling: how fast a buffer that one core has just written reaches another
 * process's buffer on this host, by plain loads and stores through shared memory (what a
 * single-copy channel does once both sides are mapped), without any library. It bounds a
 * bcast whose root writes its data right before the call (perf/ucoll_vs_ucc does, inside the
 * timed call) and every message sent from data its sender has just computed.
 *
 * Two processes (fork), pinned to CPUs 0 and 1, share one mapping holding the writer's buffer
 * W and the reader's buffer R (L bytes each). Per iteration both sleep 200 us (as the
 * benchmarks' sleeping barriers do), the reader reads R (its last result, now in its cache),
 * then the timed part: the writer fills W from a private input (W dirty in the writer's
 * caches), and W goes to R in one of three ways:
 *   pull   the reader copies W to R (ucoll's single copy: the receiver reads)
 *   push   the writer copies W to R (ucoll's offered buffers: the sender writes)
 *   split  both at once, the writer the first half, the reader the second
 * The time is the writer's fill plus the copy, the later side's clock, median of -n
 * iterations, for each mode in turn (the modes alternate per iteration, so that the VM's
 * changes of speed hit all alike); every iteration's R is checked.
 *
 * Usage: fresh_copy_ceiling [-s BYTES] [-n ITERS]  (defaults 1 MiB, 200)
 * Prints a line per mode: median and least us, GB/s (L / median), and the same for a copy of
 * a buffer the writer did not just write (its fill outside the timed part), for comparison.
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

enum { PULL, PUSH, SPLIT, NMODES };
static const char *const mode_names[NMODES] = {"pull", "push", "split"};

/* shared state: a step counter each side advances to say where it is */
struct shared {
    _Atomic long step[2];
    double us[2];
};

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

static int by_value(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* side `me` says it reached `step` and waits until the other side has */
static void meet(struct shared *sh, int me, long step)
{
    atomic_store_explicit(&sh->step[me], step, memory_order_release);
    while (atomic_load_explicit(&sh->step[!me], memory_order_acquire) < step)
        ;
}

static void pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof(set), &set) != 0)
        perror("fresh_copy_ceiling: sched_setaffinity (unpinned)");
}

int main(int argc, char **argv)
{
    size_t len = 1 << 20;
    int iters = 200, opt;
    while ((opt = getopt(argc, argv, "s:n:h")) != -1) {
        if (opt == 's')
            len = strtoul(optarg, NULL, 0);
        else if (opt == 'n')
            iters = atoi(optarg);
        else {
            fprintf(stderr, "usage: fresh_copy_ceiling [-s BYTES] [-n ITERS]\n");
            return opt == 'h' ? 0 : 2;
        }
    }
    if (len < 2 || iters < 1) {
        fprintf(stderr, "fresh_copy_ceiling: -s must be at least 2 and -n at least 1\n");
        return 2;
    }
    char *map =
        mmap(NULL, 2 * len + 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED) {
        perror("fresh_copy_ceiling: mmap");
        return 1;
    }
    char *w = map, *r = map + len;
    struct shared *sh = (struct shared *)(map + 2 * len);
    memset(map, 0, 2 * len);
    const pid_t child = fork();
    if (child < 0) {
        perror("fresh_copy_ceiling: fork");
        return 1;
    }
    const int me = child == 0; /* 0: the writer, 1: the reader */
    pin(me);
    char *input = malloc(len), *seen = malloc(len);
    double *t[2][NMODES];
    for (int c = 0; c < 2; c++)
        for (int m = 0; m < NMODES; m++)
            t[c][m] = calloc((size_t)iters, sizeof(double));
    if (input == NULL || seen == NULL) {
        fprintf(stderr, "fresh_copy_ceiling: out of memory\n");
        return 1;
    }
    long step = 0, wrong = 0;
    const size_t half = len / 2;
    for (int i = 0; i < iters; i++)
        for (int k = 0; k < 2 * NMODES; k++) {
            const int mode = (i + k) % NMODES, fresh = k < NMODES;
            const struct timespec pause = {0, 200000};
            nanosleep(&pause, NULL);
            memset(input, (i * 2 * NMODES + k) % 251 + 1, len);
            if (me == 1)
                memcpy(seen, r, len); /* R in the reader's cache, as a last result is */
            if (!fresh && me == 0)
                memcpy(w, input, len);
            meet(sh, me, ++step);
            const double t0 = now_us();
            if (fresh && me == 0)
                memcpy(w, input, len);
            meet(sh, me, ++step); /* W is written: the copy may start */
            if (mode == PULL && me == 1)
                memcpy(r, w, len);
            else if (mode == PUSH && me == 0)
                memcpy(r, w, len);
            else if (mode == SPLIT)
                memcpy(r + half * (size_t)me, w + half * (size_t)me, me ? len - half : half);
            sh->us[me] = now_us() - t0;
            meet(sh, me, ++step);
            if (me == 0) {
                const double later = sh->us[0] > sh->us[1] ? sh->us[0] : sh->us[1];
                t[fresh][mode][i] = later;
                wrong += memcmp(r, input, len) != 0;
            }
            meet(sh, me, ++step); /* the writer has read R before the next fill */
        }
    if (me == 1)
        return 0;
    waitpid(child, NULL, 0);
    printf("fresh_copy_ceiling: %zu B, %d iterations per mode; us (median, least), GB/s\n", len,
           iters);
    for (int m = 0; m < NMODES; m++) {
        for (int c = 0; c < 2; c++)
            qsort(t[c][m], (size_t)iters, sizeof(double), by_value);
        const double fresh_med = t[1][m][iters / 2], old_med = t[0][m][iters / 2];
        printf("%-6s just written: %9.1f %9.1f %6.1f GB/s   written before: %9.1f %9.1f %6.1f "
               "GB/s\n",
               mode_names[m], fresh_med, t[1][m][0], (double)len / fresh_med * 1e-3, old_med,
               t[0][m][0], (double)len / old_med * 1e-3);
    }
    printf("fresh_copy_ceiling: %ld wrong results\n", wrong);
    return wrong != 0;
}
