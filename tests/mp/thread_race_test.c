/*
 * Two races of UCOLL_THREAD_MULTIPLE between a thread inside a blocking call and another thread
 * of the same rank, on 2 ranks (world shared by the threads of rank 0):
 *   --case status  (run with UCOLL_CHECK=1) thread A on rank 0 calls an allreduce whose count
 *                  differs from rank 1's; thread B meanwhile completes an ibarrier and at once
 *                  calls a matching allreduce of the same shape as A's. A must get its own
 *                  status, UCOLL_ERR_MISMATCH, every time: B may neither take over A's finished
 *                  request before A has returned nor hand A its own status.
 *   --case opfree  thread A on rank 0 runs a blocking allreduce with a user op while rank 1
 *                  joins late; rank 0's main thread tries to free that op meanwhile: it must
 *                  get UCOLL_ERR_STATE (the op is in use), and both ranks the exact sum.
 * Prints "verdict: PASS" per rank; exit status 1 on any failure.
 */
#include "ucoll.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static ucoll_comm_t *g_world;
static int g_rank, g_fails;
static atomic_int g_go, g_done;
static ucoll_status_t g_status_a;
static int64_t g_in[2], g_out[2];
static ucoll_op_t g_op;

static void fail(const char *what, long i, long long got, long long want)
{
    printf("FAIL thread_race_test rank %d: %s (#%ld): got %lld, expected %lld\n", g_rank, what, i,
           got, want);
    g_fails++;
}

/* rank 0's thread A: one allreduce of count 1 each time it is told to go; -1 ends it */
static void *status_thread(void *arg)
{
    (void)arg;
    for (;;) {
        int go;
        while ((go = atomic_load(&g_go)) == 0)
            usleep(10);
        if (go < 0)
            return NULL;
        atomic_store(&g_go, 0);
        g_status_a = ucoll_allreduce(g_world, g_in, g_out, 1, UCOLL_INT64, UCOLL_OP_SUM);
        atomic_store(&g_done, 1);
    }
}

/* per iteration, on world in this order everywhere: X (counts 1 and 2: MISMATCH), an ibarrier,
 * Z (count 1 everywhere: the sum 2) */
static void case_status(long iters)
{
    pthread_t a;
    if (g_rank == 0 && pthread_create(&a, NULL, status_thread, NULL) != 0) {
        fail("pthread_create", 0, 1, 0);
        return;
    }
    for (long i = 0; i < iters; i++) {
        int64_t z = 1, zsum = -1;
        ucoll_request_t *q = NULL;
        ucoll_status_t sx, sz;
        g_in[0] = g_in[1] = 7;
        if (g_rank == 0) {
            atomic_store(&g_done, 0);
            atomic_store(&g_go, 1);
            usleep(3000); /* A is inside X: rank 1 enters it 10 ms late */
            ucoll_status_t sq = ucoll_ibarrier(g_world, &q);
            if (sq == UCOLL_OK)
                while ((sq = ucoll_test(q)) == UCOLL_INPROGRESS)
                    ;
            if (sq != UCOLL_OK)
                fail("ibarrier", i, sq, UCOLL_OK);
            sz = ucoll_allreduce(g_world, &z, &zsum, 1, UCOLL_INT64, UCOLL_OP_SUM);
            while (!atomic_load(&g_done))
                usleep(10);
            sx = g_status_a;
        } else {
            usleep(10000);
            sx = ucoll_allreduce(g_world, g_in, g_out, 2, UCOLL_INT64, UCOLL_OP_SUM);
            ucoll_status_t sq = ucoll_ibarrier(g_world, &q);
            if (sq == UCOLL_OK)
                sq = ucoll_wait(q);
            if (sq != UCOLL_OK)
                fail("ibarrier", i, sq, UCOLL_OK);
            sz = ucoll_allreduce(g_world, &z, &zsum, 1, UCOLL_INT64, UCOLL_OP_SUM);
        }
        if (q != NULL)
            ucoll_request_free(q);
        if (sx != UCOLL_ERR_MISMATCH)
            fail("status of the mismatched allreduce", i, sx, UCOLL_ERR_MISMATCH);
        if (sz != UCOLL_OK || zsum != 2)
            fail("matching allreduce (status, then sum)", i, sz != UCOLL_OK ? sz : zsum,
                 sz != UCOLL_OK ? UCOLL_OK : 2);
    }
    if (g_rank == 0) {
        atomic_store(&g_go, -1);
        pthread_join(a, NULL);
    }
}

static void add_int64(const void *in, void *inout, size_t count, ucoll_dtype_t dtype, void *arg)
{
    (void)dtype;
    (void)arg;
    for (size_t i = 0; i < count; i++)
        ((int64_t *)inout)[i] += ((const int64_t *)in)[i];
}

static void *opfree_thread(void *arg)
{
    (void)arg;
    g_status_a = ucoll_allreduce(g_world, g_in, g_out, 1, UCOLL_INT64, g_op);
    atomic_store(&g_done, 1);
    return NULL;
}

static void case_opfree(long iters)
{
    for (long i = 0; i < iters; i++) {
        ucoll_status_t st = ucoll_op_create(add_int64, NULL, 1, &g_op);
        if (st != UCOLL_OK) {
            fail("op_create", i, st, UCOLL_OK);
            return;
        }
        g_in[0] = g_rank + 1 + i;
        g_out[0] = -1;
        const int64_t want = 3 + 2 * i; /* (1 + i) + (2 + i) */
        if (g_rank == 0) {
            pthread_t a;
            atomic_store(&g_done, 0);
            if (pthread_create(&a, NULL, opfree_thread, NULL) != 0) {
                fail("pthread_create", i, 1, 0);
                return;
            }
            usleep(20000); /* A is inside the allreduce: rank 1 joins 100 ms late */
            if (!atomic_load(&g_done)) {
                st = ucoll_op_free(g_op);
                if (st != UCOLL_ERR_STATE)
                    fail("op_free while a blocking call uses it", i, st, UCOLL_ERR_STATE);
                if (st == UCOLL_OK) /* gone already: a new op may take its handle */
                    ucoll_op_create(add_int64, NULL, 1, &(ucoll_op_t){0});
            } else {
                fail("the allreduce waited for rank 1", i, 0, 1);
            }
            pthread_join(a, NULL);
        } else {
            usleep(100000);
            g_status_a = ucoll_allreduce(g_world, g_in, g_out, 1, UCOLL_INT64, g_op);
        }
        if (g_status_a != UCOLL_OK)
            fail("allreduce with the user op", i, g_status_a, UCOLL_OK);
        else if (g_out[0] != want)
            fail("allreduce with the user op: sum", i, g_out[0], want);
        st = ucoll_op_free(g_op);
        if (st != UCOLL_OK && !(g_rank == 0 && g_fails > 0))
            fail("op_free after the call", i, st, UCOLL_OK);
    }
}

int main(int argc, char **argv)
{
    const char *which = NULL;
    long iters = 100;
    for (int a = 1; a + 1 < argc; a += 2) {
        if (strcmp(argv[a], "--case") == 0)
            which = argv[a + 1];
        else if (strcmp(argv[a], "--iters") == 0)
            iters = atol(argv[a + 1]);
    }
    if (which == NULL || (strcmp(which, "status") != 0 && strcmp(which, "opfree") != 0)) {
        fprintf(stderr, "usage: thread_race_test --case status|opfree [--iters N]\n");
        return 2;
    }
    ucoll_thread_level_t provided;
    ucoll_status_t st = ucoll_init_thread(NULL, UCOLL_THREAD_MULTIPLE, &provided, &g_world);
    if (st != UCOLL_OK || provided != UCOLL_THREAD_MULTIPLE) {
        fprintf(stderr, "thread_race_test: ucoll_init_thread: %s, level %d\n", ucoll_strerror(st),
                (int)provided);
        return 1;
    }
    g_rank = ucoll_comm_rank(g_world);
    if (ucoll_comm_size(g_world) != 2) {
        fprintf(stderr, "thread_race_test: needs exactly 2 ranks, not %d\n",
                ucoll_comm_size(g_world));
        ucoll_finalize(g_world);
        return 1;
    }
    if (strcmp(which, "status") == 0)
        case_status(iters);
    else
        case_opfree(iters);
    st = ucoll_finalize(g_world);
    if (st != UCOLL_OK)
        fail("finalize", 0, st, UCOLL_OK);
    printf("thread_race_test --case %s rank %d: %ld iterations, %d failures; verdict: %s\n", which,
           g_rank, iters, g_fails, g_fails ? "FAIL" : "PASS");
    return g_fails ? 1 : 0;
}
