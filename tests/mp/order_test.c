/*
 * tests/mp/order_test.c: collectives on two communicators, started in different orders on
 * different ranks. Rank 0 starts an exscan on A (auto algorithm), then a barrier on B, then
 * waits for the exscan; the other ranks do the barrier on B first, then start the exscan on A
 * and wait. This is a valid program: a nonblocking or persistent start must not block, so no
 * ucoll call may run a collective of its own inside it (the first auto exscan of an (op, dtype)
 * once agreed a measured cost with a blocking allreduce there, which waited for ranks that were
 * in the barrier on B: a deadlock, or UCOLL_ERR_TIMED_OUT with UCOLL_TIMEOUT).
 * Three rounds, each with a new (op, dtype): ucoll_iexscan int64 sum, ucoll_exscan_init +
 * ucoll_start float64 max, ucoll_iexscan with a user op (no ucoll_op_set_cost) on int32.
 * A = a split of world with one color (keys reversed: rank order differs from world's), B = world.
 * Every call must return UCOLL_OK and every rank >= 1 the exact exclusive prefix.
 * Usage: order_test --expect-size N. Public API only. Exit 0 when all is right.
 */
#include <ucoll.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COUNT 5

static int failures;

static void check(int rank, const char *what, ucoll_status_t st)
{
    if (st != UCOLL_OK) {
        fprintf(stderr, "order_test rank %d: %s: %s\n", rank, what, ucoll_strerror(st));
        failures++;
    }
}

/* inout = in + inout, as a user op the library knows nothing about */
static void user_sum(const void *in, void *inout, size_t count, ucoll_dtype_t dtype, void *arg)
{
    (void)dtype;
    (void)arg;
    const int32_t *a = in;
    int32_t *b = inout;
    for (size_t i = 0; i < count; i++)
        b[i] = a[i] + b[i];
}

/* rank 0 of `a` starts first and meets the barrier on b in between; the others go the other way */
static ucoll_status_t start_and_wait(ucoll_comm_t *a, ucoll_comm_t *b, int arank,
                                     ucoll_status_t (*start)(ucoll_comm_t *, void *,
                                                             ucoll_request_t **),
                                     void *arg, int world_rank)
{
    ucoll_request_t *req = NULL;
    ucoll_status_t st;
    if (arank == 0) {
        check(world_rank, "start on A", st = start(a, arg, &req));
        if (st != UCOLL_OK)
            return st;
        check(world_rank, "barrier on B", ucoll_barrier(b));
    } else {
        check(world_rank, "barrier on B", ucoll_barrier(b));
        check(world_rank, "start on A", st = start(a, arg, &req));
        if (st != UCOLL_OK)
            return st;
    }
    check(world_rank, "wait on A", st = ucoll_wait(req));
    check(world_rank, "request_free", ucoll_request_free(req));
    return st;
}

struct bufs {
    void *send, *recv;
    ucoll_op_t user_op;
};

static ucoll_status_t start_iexscan_int64(ucoll_comm_t *c, void *arg, ucoll_request_t **req)
{
    struct bufs *b = arg;
    return ucoll_iexscan(c, b->send, b->recv, COUNT, UCOLL_INT64, UCOLL_OP_SUM, req);
}

static ucoll_status_t start_persistent_float64(ucoll_comm_t *c, void *arg, ucoll_request_t **req)
{
    struct bufs *b = arg;
    ucoll_status_t st =
        ucoll_exscan_init(c, b->send, b->recv, COUNT, UCOLL_FLOAT64, UCOLL_OP_MAX, req);
    return st == UCOLL_OK ? ucoll_start(*req) : st;
}

static ucoll_status_t start_iexscan_user(ucoll_comm_t *c, void *arg, ucoll_request_t **req)
{
    struct bufs *b = arg;
    return ucoll_iexscan(c, b->send, b->recv, COUNT, UCOLL_INT32, b->user_op, req);
}

int main(int argc, char **argv)
{
    int expect = -1;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--expect-size") == 0 && i + 1 < argc)
            expect = atoi(argv[++i]);
    if (expect < 1) {
        fprintf(stderr, "usage: order_test --expect-size N\n");
        return 2;
    }
    ucoll_comm_t *world, *a;
    ucoll_status_t st = ucoll_init(&world);
    if (st != UCOLL_OK) {
        fprintf(stderr, "order_test: ucoll_init: %s\n", ucoll_strerror(st));
        return 1;
    }
    const int rank = ucoll_comm_rank(world), size = ucoll_comm_size(world);
    if (size != expect) {
        fprintf(stderr, "order_test rank %d: job has %d ranks, expected %d\n", rank, size, expect);
        ucoll_finalize(world);
        return 1;
    }
    check(rank, "comm_split", st = ucoll_comm_split(world, 7, size - 1 - rank, &a));
    if (st != UCOLL_OK) {
        ucoll_finalize(world);
        return 1;
    }
    const int arank = ucoll_comm_rank(a), asize = ucoll_comm_size(a);
    if (asize != size || arank != size - 1 - rank) {
        fprintf(stderr, "order_test rank %d: A has rank %d of %d\n", rank, arank, asize);
        failures++;
    }

    /* round 1: int64 sum; element i of A-rank j's input is 1000 * j + i + 1 */
    int64_t s64[COUNT], r64[COUNT];
    struct bufs b = {s64, r64, 0};
    for (int i = 0; i < COUNT; i++) {
        s64[i] = 1000 * (int64_t)arank + i + 1;
        r64[i] = -1;
    }
    if (start_and_wait(a, world, arank, start_iexscan_int64, &b, rank) == UCOLL_OK && arank > 0)
        for (int i = 0; i < COUNT; i++) {
            /* sum over j < arank of (1000 j + i + 1) */
            int64_t want = 1000 * (int64_t)arank * (arank - 1) / 2 + (int64_t)arank * (i + 1);
            if (r64[i] != want) {
                fprintf(stderr, "order_test rank %d: int64 sum [%d] = %lld, want %lld\n", rank, i,
                        (long long)r64[i], (long long)want);
                failures++;
            }
        }

    /* round 2: float64 max, persistent; input of A-rank j is (j * 7) mod 5 + i: the prefix
     * maximum is computed here from the same values */
    double sd[COUNT], rd[COUNT];
    b = (struct bufs){sd, rd, 0};
    for (int i = 0; i < COUNT; i++) {
        sd[i] = (double)((arank * 7) % 5 + i);
        rd[i] = -1;
    }
    if (start_and_wait(a, world, arank, start_persistent_float64, &b, rank) == UCOLL_OK &&
        arank > 0)
        for (int i = 0; i < COUNT; i++) {
            double want = -1;
            for (int j = 0; j < arank; j++)
                if ((double)((j * 7) % 5 + i) > want)
                    want = (double)((j * 7) % 5 + i);
            if (rd[i] != want) {
                fprintf(stderr, "order_test rank %d: float64 max [%d] = %g, want %g\n", rank, i,
                        rd[i], want);
                failures++;
            }
        }

    /* round 3: a user op without a stated cost, int32 */
    int32_t s32[COUNT], r32[COUNT];
    b = (struct bufs){s32, r32, 0};
    check(rank, "op_create", ucoll_op_create(user_sum, NULL, 1, &b.user_op));
    for (int i = 0; i < COUNT; i++) {
        s32[i] = 3 * arank + i;
        r32[i] = -1;
    }
    if (start_and_wait(a, world, arank, start_iexscan_user, &b, rank) == UCOLL_OK && arank > 0)
        for (int i = 0; i < COUNT; i++) {
            int32_t want = 3 * arank * (arank - 1) / 2 + arank * i;
            if (r32[i] != want) {
                fprintf(stderr, "order_test rank %d: user sum [%d] = %d, want %d\n", rank, i,
                        (int)r32[i], (int)want);
                failures++;
            }
        }
    check(rank, "op_free", ucoll_op_free(b.user_op));

    check(rank, "comm_free", ucoll_comm_free(a));
    check(rank, "finalize", ucoll_finalize(world));
    printf("order_test np=%d rank %d: %s\n", size, rank, failures == 0 ? "OK" : "FAILED");
    return failures == 0 ? 0 : 1;
}
