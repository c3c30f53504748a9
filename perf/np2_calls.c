/*
 * perf/np2_calls.c: the calls perf/np2_small.sh counts instructions of. Two ranks; per
 * collective (allreduce, reduce, exscan, scan, bcast; int64, sum, root 0) W untimed and then
 * N calls of COUNT elements, each after a barrier and, on the rank under measurement, a
 * sleep of SLEEP_MS: that rank arrives last, its peer's messages are already there, and its count
 * holds no waiting. Public API only.
 *
 * Usage: np2_calls MEASURED_RANK N W COUNT SLEEP_MS (under a launcher, 2 ranks)
 * Exit status 0 when every call returned UCOLL_OK and every result was right.
 */
#define _POSIX_C_SOURCE 200809L
#include <ucoll.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { MAX_COUNT = 512 };

static int64_t sbuf[MAX_COUNT], rbuf[MAX_COUNT];

static ucoll_status_t call(ucoll_comm_t *w, ucoll_coll_t coll, size_t n)
{
    switch (coll) {
    case UCOLL_COLL_ALLREDUCE:
        return ucoll_allreduce(w, sbuf, rbuf, n, UCOLL_INT64, UCOLL_OP_SUM);
    case UCOLL_COLL_REDUCE:
        return ucoll_reduce(w, sbuf, rbuf, n, UCOLL_INT64, UCOLL_OP_SUM, 0);
    case UCOLL_COLL_EXSCAN:
        return ucoll_exscan(w, sbuf, rbuf, n, UCOLL_INT64, UCOLL_OP_SUM);
    case UCOLL_COLL_SCAN:
        return ucoll_scan(w, sbuf, rbuf, n, UCOLL_INT64, UCOLL_OP_SUM);
    default:
        return ucoll_bcast(w, rbuf, n, UCOLL_INT64, 0);
    }
}

/* the result of rank r (inputs: rank r holds r + 1 in every element; bcast: the root's 1) */
static int64_t expected(ucoll_coll_t coll, int r)
{
    switch (coll) {
    case UCOLL_COLL_EXSCAN:
        return r == 0 ? -1 : 1; /* rank 0's buffer keeps its fill */
    case UCOLL_COLL_SCAN:
        return r == 0 ? 1 : 3;
    case UCOLL_COLL_REDUCE:
        return r == 0 ? 3 : -1; /* off the root the buffer keeps its fill */
    case UCOLL_COLL_BCAST:
        return 1;
    default:
        return 3;
    }
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: np2_calls MEASURED_RANK N W COUNT SLEEP_MS\n");
        return 2;
    }
    const int measured = atoi(argv[1]);
    const long iters = atol(argv[2]), warmup = atol(argv[3]);
    const size_t count = (size_t)atol(argv[4]);
    const long sleep_ms = atol(argv[5]);
    if (count < 1 || count > MAX_COUNT || iters < 0 || warmup < 0 || sleep_ms < 0 ||
        sleep_ms > 1000) {
        fprintf(stderr, "np2_calls: COUNT 1..%d, N and W >= 0, SLEEP_MS 0..1000\n", MAX_COUNT);
        return 2;
    }
    ucoll_comm_t *w;
    ucoll_status_t st = ucoll_init(&w);
    if (st != UCOLL_OK) {
        fprintf(stderr, "np2_calls: ucoll_init: %s\n", ucoll_strerror(st));
        return 2;
    }
    const int rank = ucoll_comm_rank(w);
    if (ucoll_comm_size(w) != 2) {
        fprintf(stderr, "np2_calls: needs 2 ranks\n");
        ucoll_finalize(w);
        return 2;
    }
    const struct timespec late = {0, sleep_ms * 1000000}; /* the peer has sent by then */
    static const ucoll_coll_t colls[] = {UCOLL_COLL_ALLREDUCE, UCOLL_COLL_REDUCE, UCOLL_COLL_EXSCAN,
                                         UCOLL_COLL_SCAN, UCOLL_COLL_BCAST};
    long wrong = 0;
    for (size_t c = 0; c < sizeof(colls) / sizeof(colls[0]) && st == UCOLL_OK; c++) {
        for (long it = 0; it < warmup + iters && st == UCOLL_OK; it++) {
            for (size_t i = 0; i < count; i++) {
                sbuf[i] = rank + 1;
                rbuf[i] = colls[c] == UCOLL_COLL_BCAST && rank == 0 ? 1 : -1;
            }
            if ((st = ucoll_barrier(w)) != UCOLL_OK)
                break;
            if (rank == measured)
                nanosleep(&late, NULL);
            st = call(w, colls[c], count);
            for (size_t i = 0; st == UCOLL_OK && i < count; i++)
                wrong += rbuf[i] != expected(colls[c], rank);
        }
    }
    if (st != UCOLL_OK)
        fprintf(stderr, "np2_calls rank %d: %s\n", rank, ucoll_strerror(st));
    if (wrong)
        fprintf(stderr, "np2_calls rank %d: %ld wrong elements\n", rank, wrong);
    ucoll_finalize(w);
    return st == UCOLL_OK && wrong == 0 ? 0 : 1;
}
