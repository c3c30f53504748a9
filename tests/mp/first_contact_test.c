/*
 * tests/mp/first_contact_test.c: a rank whose host has lost its network, asked by a collective
 * to reach a rank it has not exchanged anything with yet, must get UCOLL_ERR_PEER_FAILED: UCX
 * then refuses to create the endpoint at once ("Destination is unreachable"). Every other rank
 * must get PEER_FAILED or TIMED_OUT, and no rank a wrong result or a hang. Public API only.
 * tests/cluster/run-first-contact.sh runs it: 8 ranks, two per test host, started through the
 * store, and cuts the last rank's host off once every rank has written DIR/ready-R.
 *
 * Usage: first_contact_test --dir DIR   (with UCOLL_SCATTER_ALG=linear)
 * Every rank: ucoll_init, whose exchanges (bruck allgather, recursive-doubling allreduce) give
 * the last rank, 7, peers 0, 1, 3, 5 and 6 only; DIR/ready-R; waits for DIR/go; then one
 * scatter of one int32 per rank from root 7. The linear scatter sends to ranks 0, 1, 2, ... in
 * turn, so the root meets rank 2 for the first time with its host cut off; that refused
 * endpoint ends its call (rank 4, also new to it, is not reached).
 * Record DIR/rank-R: "rank=R status=NAME call_s=S wrong=W", then after ucoll_finalize
 * "fin_status=NAME fin_s=S". wrong is 1 where a scatter that returned OK delivered a value
 * other than the root's block for the rank.
 */
#include "mp_util.h"

#include <ucoll.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WAIT_S 60

static int wait_for_file(const char *path)
{
    for (int i = 0; i < WAIT_S * 100; i++) {
        if (access(path, F_OK) == 0)
            return 1;
        usleep(10000);
    }
    fprintf(stderr, "first_contact_test: no %s after %d s\n", path, WAIT_S);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3 || strcmp(argv[1], "--dir") != 0) {
        fprintf(stderr, "usage: first_contact_test --dir DIR\n");
        return 2;
    }
    const char *dir = argv[2];
    ucoll_comm_t *world;
    ucoll_status_t st = ucoll_init(&world);
    if (st != UCOLL_OK) {
        fprintf(stderr, "first_contact_test: ucoll_init: %s\n", ucoll_strerror(st));
        return 1;
    }
    const int rank = ucoll_comm_rank(world), size = ucoll_comm_size(world);
    if (size != 8) {
        fprintf(stderr, "first_contact_test: needs 8 ranks, has %d\n", size);
        return 1;
    }
    const int root = size - 1;
    char path[4096];
    snprintf(path, sizeof(path), "%s/ready-%d", dir, rank);
    FILE *rf = fopen(path, "w");
    if (rf == NULL || fclose(rf) != 0) {
        perror(path);
        return 1;
    }
    snprintf(path, sizeof(path), "%s/go", dir);
    if (!wait_for_file(path))
        return 1;

    int32_t blocks[8], mine = -1;
    for (int r = 0; r < size; r++)
        blocks[r] = 1000 + r;
    const double t0 = now_s();
    st = ucoll_scatter(world, rank == root ? blocks : NULL, &mine, 1, UCOLL_INT32, root);
    const double call_s = now_s() - t0;
    const int wrong = st == UCOLL_OK && mine != 1000 + rank;

    snprintf(path, sizeof(path), "%s/rank-%d", dir, rank);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        perror(path);
        return 1;
    }
    fprintf(f, "rank=%d status=%s call_s=%.6f wrong=%d\n", rank, mpt_status_name(st), call_s,
            wrong);
    fflush(f);
    const double t_fin = now_s();
    st = ucoll_finalize(world);
    fprintf(f, "fin_status=%s fin_s=%.6f\n", mpt_status_name(st), now_s() - t_fin);
    return fclose(f) == 0 ? 0 : 1;
}
