/*
 * examples/record_offsets.c: the ucoll demo. Every rank holds a batch of text records of its
 * own, of a length no other rank knows. To write all batches into one shared file without any
 * coordinator, each rank needs the total size of the batches of the ranks before it: exactly
 * an exclusive prefix sum, ucoll_exscan(UCOLL_UINT64, UCOLL_OP_SUM). Each rank then writes its
 * part at that offset with pwrite; after a barrier rank 0 regenerates every rank's records and
 * checks the file byte for byte.
 *
 * Usage: record_offsets [OUTPUT_FILE]   (default /tmp/ucoll-record-offsets.txt)
 * Run it under a PMIx launcher, e.g. mpirun -np 4 ./record_offsets; without one it is 1 rank.
 * Exit status 0 when the file is correct, 1 otherwise (on every rank).
 */
#define _POSIX_C_SOURCE 200809L

#include <ucoll.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Rank r's batch: a deterministic number of records of deterministic, varying lengths, such as
 * "rank 2 record 3: kqzfw...\n". Returns the malloc'ed text and its length in *len. */
static char *make_batch(int rank, int *nrec, size_t *len)
{
    int n = 3 + (rank * 7 + 5) % 11;
    size_t cap = 0;
    for (int k = 0; k < n; k++)
        cap += 48 + 80;
    char *buf = malloc(cap + 1);
    if (buf == NULL)
        return NULL;
    size_t pos = 0;
    for (int k = 0; k < n; k++) {
        int payload = 4 + (rank * 31 + k * 17) % 76;
        pos += (size_t)snprintf(buf + pos, cap + 1 - pos, "rank %d record %d: ", rank, k);
        for (int j = 0; j < payload; j++)
            buf[pos++] = (char)('a' + (rank * 13 + k * 7 + j * 3) % 26);
        buf[pos++] = '\n';
    }
    *nrec = n;
    *len = pos;
    return buf;
}

static int write_all(int fd, const char *buf, size_t len, off_t off)
{
    while (len > 0) {
        ssize_t w = pwrite(fd, buf, len, off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        buf += w;
        len -= (size_t)w;
        off += w;
    }
    return 0;
}

static int die(const char *what, ucoll_status_t st)
{
    fprintf(stderr, "record_offsets: %s failed: %s\n", what, ucoll_strerror(st));
    return 1;
}

/* rank 0: does the file hold every rank's batch, in rank order, and nothing else? */
static int verify(const char *path, int size, const uint64_t *offsets)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        printf("  cannot open %s: %s\n", path, strerror(errno));
        return 0;
    }
    int ok = 1;
    uint64_t expect_off = 0;
    for (int r = 0; r < size && ok; r++) {
        int nrec;
        size_t len;
        char *want = make_batch(r, &nrec, &len);
        char *got = malloc(len + 1);
        if (want == NULL || got == NULL) {
            printf("  out of memory\n");
            ok = 0;
        } else if (offsets[r] != expect_off) {
            printf("  rank %d computed offset %llu, expected %llu\n", r,
                   (unsigned long long)offsets[r], (unsigned long long)expect_off);
            ok = 0;
        } else if (fread(got, 1, len, f) != len || memcmp(got, want, len) != 0) {
            printf("  rank %d's part (bytes %llu..%llu) does not match its records\n", r,
                   (unsigned long long)expect_off, (unsigned long long)(expect_off + len - 1));
            ok = 0;
        }
        expect_off += len;
        free(want);
        free(got);
    }
    if (ok && fgetc(f) != EOF) {
        printf("  the file is longer than the %llu bytes of all parts\n",
               (unsigned long long)expect_off);
        ok = 0;
    }
    fclose(f);
    if (ok)
        printf("  %s: %llu bytes; rank 0 regenerated all %d ranks' records: identical\n", path,
               (unsigned long long)expect_off, size);
    return ok;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "/tmp/ucoll-record-offsets.txt";
    ucoll_comm_t *world;
    ucoll_status_t st = ucoll_init(&world);
    if (st != UCOLL_OK)
        return die("ucoll_init", st);
    int rank = ucoll_comm_rank(world), size = ucoll_comm_size(world);

    int nrec;
    size_t len;
    char *batch = make_batch(rank, &nrec, &len);
    if (batch == NULL)
        return die("malloc", UCOLL_ERR_NO_MEMORY);

    /* my byte offset = sum of the lengths of ranks 0..rank-1. Rank 0's recvbuf is left
     * untouched by ucoll_exscan, so its offset is the 0 we put there. */
    uint64_t mybytes = len, offset = 0;
    st = ucoll_exscan(world, &mybytes, &offset, 1, UCOLL_UINT64, UCOLL_OP_SUM);
    if (st != UCOLL_OK)
        return die("ucoll_exscan", st);

    /* rank 0 creates (truncates) the file before anybody writes to it */
    int fd = -1;
    int32_t open_ok = 1;
    if (rank == 0) {
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        open_ok = fd >= 0;
    }
    if ((st = ucoll_bcast(world, &open_ok, 1, UCOLL_INT32, 0)) != UCOLL_OK)
        return die("ucoll_bcast", st);
    if (!open_ok) {
        if (rank == 0)
            fprintf(stderr, "record_offsets: cannot create %s\n", path);
        ucoll_finalize(world);
        return 1;
    }
    if (rank != 0)
        fd = open(path, O_WRONLY);
    int32_t write_ok = fd >= 0 && write_all(fd, batch, len, (off_t)offset) == 0;
    if (fd >= 0)
        close(fd);
    if (!write_ok)
        fprintf(stderr, "record_offsets: rank %d cannot write %s: %s\n", rank, path,
                strerror(errno));

    /* collect what every rank did, for the report: slot r of each array is rank r's
     * (a reduction of arrays that are zero except at one's own slot) */
    uint64_t *mine = calloc(3 * (size_t)size, sizeof(uint64_t));
    uint64_t *all = calloc(3 * (size_t)size, sizeof(uint64_t));
    if (mine == NULL || all == NULL)
        return die("calloc", UCOLL_ERR_NO_MEMORY);
    mine[rank] = (uint64_t)nrec;
    mine[size + rank] = len;
    mine[2 * size + rank] = offset;
    int32_t writes_ok = 0;
    if ((st = ucoll_allreduce(world, &write_ok, &writes_ok, 1, UCOLL_INT32, UCOLL_OP_LAND)) ||
        (st = ucoll_reduce(world, mine, all, 3 * (size_t)size, UCOLL_UINT64, UCOLL_OP_SUM, 0)))
        return die("collecting the report", st);
    if ((st = ucoll_barrier(world)) != UCOLL_OK) /* every pwrite is done */
        return die("ucoll_barrier", st);

    int32_t verdict = 0;
    if (rank == 0) {
        printf("record_offsets: %d rank%s write one file; offsets from ucoll_exscan\n", size,
               size == 1 ? "" : "s");
        printf("  %5s %8s %8s %12s\n", "rank", "records", "bytes", "offset");
        for (int r = 0; r < size; r++)
            printf("  %5d %8llu %8llu %12llu\n", r, (unsigned long long)all[r],
                   (unsigned long long)all[size + r], (unsigned long long)all[2 * size + r]);
        verdict = writes_ok && verify(path, size, all + 2 * size);
        printf("  verdict: %s\n", verdict ? "OK, the file is correct" : "MISMATCH");
        fflush(stdout);
    }
    if ((st = ucoll_bcast(world, &verdict, 1, UCOLL_INT32, 0)) != UCOLL_OK)
        return die("ucoll_bcast", st);

    free(batch);
    free(mine);
    free(all);
    st = ucoll_finalize(world);
    if (st != UCOLL_OK)
        return die("ucoll_finalize", st);
    return verdict ? 0 : 1;
}
