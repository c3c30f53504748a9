/*
 * tests/mp/isolation_test.c: a collective takes only its own messages, also after a failed
 * collective left late messages behind, across wraps of the tag's sequence field, and with
 * many nonblocking collectives in flight. World has 4 ranks (asserted); P = {0,1} and {2,3}.
 *   1. TIMED_OUT: the first allreduce on P; P's rank 1 enters 4 s late, P's rank 0 (the only
 *      ranks with UCOLL_TIMEOUT=1, set here before ucoll_init) gives up, and rank 1's message
 *      arrives after it did. Rank 0's P is revoked: collectives, starts, split give
 *      UCOLL_ERR_STATE; rank/size still answer. P is freed and new comms are split from
 *      world and from {1,3} (which may get P's id again): their first allreduce is exact (the
 *      late message of P, value 1000001, must not be taken there).
 *   2. TRUNCATED: ranks of a 2-rank comm pass counts 2 and 1 (recursive doubling: one
 *      exchange): both see TRUNCATED, then UCOLL_ERR_STATE.
 *   3. --collectives K allreduces and exscans, alternating, with inputs distinct per call, on
 *      a comm of all ranks (K > 4096: the 12-bit sequence field wraps), each checked.
 *   4. --inflight M iallreduce/iexscan in flight on world, waited in random order, then M more
 *      waited in reverse order; then 4095 in flight: a further start (nonblocking, persistent,
 *      blocking) gives UCOLL_ERR_STATE and writes no request; the 4095 then complete exactly
 *      and world keeps working.
 *   5. --phases ...,ids: splits of world until the 4094 comm ids for splits run out (the one of
 *      the failed comms is still taken): UCOLL_ERR_NOT_SUPPORTED, then all freed, a split works.
 * --phases late,truncated,many,inflight,ids picks steps 1 to 5 (default: all but late). With
 * step 1 ranks 0 and 2 run with UCOLL_TIMEOUT=1 (the others with the caller's setting), too
 * short for 3 and 4 on a loaded machine (4095 requests in flight wait their turn inside ucoll):
 * late goes with truncated only.
 * --stale-wrap N (not in the suite: it shows the sequence wrap of an older tag layout): after
 * step 1 the P ranks go on with N allreduces on P if the library lets them, each checked.
 * Usage: isolation_test --expect-size 4 [--phases LIST] [--collectives K] [--inflight M]
 *        [--stale-wrap N].
 * Public API only. Exit 0 when every check passed.
 */
#include <ucoll.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { LATE_S = 4, LIMIT = 4095 };

static int g_rank = -1, failures;

static void expect_status(const char *what, long i, ucoll_status_t got, ucoll_status_t want)
{
    if (got != want) {
        printf("FAIL isolation_test rank %d: %s (#%ld): %s, expected %s\n", g_rank, what, i,
               ucoll_strerror(got), ucoll_strerror(want));
        failures++;
    }
}

static int expect_value(const char *what, long i, int64_t got, int64_t want)
{
    if (got != want) {
        printf("FAIL isolation_test rank %d: %s (#%ld): %lld, expected %lld\n", g_rank, what, i,
               (long long)got, (long long)want);
        failures++;
        return 0;
    }
    return 1;
}

/* a barrier that tolerates ranks that stay outside ucoll for seconds: time between tests is
 * not charged to UCOLL_TIMEOUT */
static void patient_barrier(ucoll_comm_t *c)
{
    ucoll_request_t *req = NULL;
    ucoll_status_t st = ucoll_ibarrier(c, &req);
    expect_status("patient barrier start", 0, st, UCOLL_OK);
    if (st != UCOLL_OK)
        return;
    while ((st = ucoll_test(req)) == UCOLL_INPROGRESS)
        usleep(100 * 1000);
    expect_status("patient barrier", 0, st, UCOLL_OK);
    ucoll_request_free(req);
}

/* rank r's input to call i on a comm of size p: distinct per call and rank */
static int64_t input(long i, int r)
{
    return (int64_t)i * 7919 + (int64_t)r * 1000003 + 1;
}

static int64_t prefix(long i, int r) /* the sum of input(i, q) over q < r */
{
    int64_t s = 0;
    for (int q = 0; q < r; q++)
        s += input(i, q);
    return s;
}

/* step 1; returns P (rank 0 of P: revoked) */
static ucoll_comm_t *late_message(ucoll_comm_t *w, ucoll_comm_t **p_out, int *prank,
                                  int check_revoked)
{
    const int rank = ucoll_comm_rank(w);
    ucoll_comm_t *p = NULL, *q = NULL;
    expect_status("split P", 0, ucoll_comm_split(w, rank / 2, rank, &p), UCOLL_OK);
    *prank = ucoll_comm_rank(p);
    *p_out = p;
    int64_t in = 1000000 + *prank, out = -1;
    ucoll_request_t *pers = NULL;
    if (*prank == 0)
        expect_status("allreduce_init on P", 0,
                      ucoll_allreduce_init(p, &in, &out, 1, UCOLL_INT64, UCOLL_OP_SUM, &pers),
                      UCOLL_OK);
    patient_barrier(w);
    if (*prank == 1)
        sleep(LATE_S);
    ucoll_status_t st = ucoll_allreduce(p, &in, &out, 1, UCOLL_INT64, UCOLL_OP_SUM);
    if (*prank == 0) {
        expect_status("allreduce on P, partner 4 s late", 0, st, UCOLL_ERR_TIMED_OUT);
    }
    if (*prank == 0 && check_revoked) {
        expect_status("allreduce on P after its TIMED_OUT", 0,
                      ucoll_allreduce(p, &in, &out, 1, UCOLL_INT64, UCOLL_OP_SUM), UCOLL_ERR_STATE);
        ucoll_request_t *req = NULL;
        expect_status("iexscan on P after its TIMED_OUT", 0,
                      ucoll_iexscan(p, &in, &out, 1, UCOLL_INT64, UCOLL_OP_SUM, &req),
                      UCOLL_ERR_STATE);
        expect_value("iexscan on P after TIMED_OUT: no request", 0, req != NULL, 0);
        expect_status("barrier on P after its TIMED_OUT", 0, ucoll_barrier(p), UCOLL_ERR_STATE);
        expect_status("start on P after its TIMED_OUT", 0, ucoll_start(pers), UCOLL_ERR_STATE);
        expect_status("split of P after its TIMED_OUT", 0, ucoll_comm_split(p, 0, 0, &q),
                      UCOLL_ERR_STATE);
        expect_value("rank on a revoked P", 0, ucoll_comm_rank(p), 0);
        expect_value("size on a revoked P", 0, ucoll_comm_size(p), 2);
        expect_status("free of a persistent request on P", 0, ucoll_request_free(pers), UCOLL_OK);
    } else if (*prank == 1) {
        expect_status("allreduce on P, entered 4 s late", 0, st, UCOLL_OK);
        expect_value("allreduce on P, entered late", 0, out, 2000001);
    }
    patient_barrier(w); /* the late rank has sent its message */
    return p;
}

static void check_new_comms(ucoll_comm_t *w)
{
    const int rank = ucoll_comm_rank(w);
    ucoll_comm_t *q = NULL, *s = NULL, *s2 = NULL;
    for (int k = 0; k < 2; k++) { /* twice: P's id and the next */
        expect_status("split Q", k, ucoll_comm_split(w, rank / 2, rank, &q), UCOLL_OK);
        int64_t in = ucoll_comm_rank(q) + 1, out = -1;
        expect_status("first allreduce on Q", k,
                      ucoll_allreduce(q, &in, &out, 1, UCOLL_INT64, UCOLL_OP_SUM), UCOLL_OK);
        expect_value("first allreduce on Q", k, out, 3);
        expect_status("free Q", k, ucoll_comm_free(q), UCOLL_OK);
    }
    /* ranks 1 and 3 lost no message: a comm of theirs alone may reuse P's id */
    expect_status("split S", 0, ucoll_comm_split(w, rank % 2 ? 0 : -1, rank, &s), UCOLL_OK);
    if (rank % 2) {
        expect_status("split S2", 0, ucoll_comm_split(s, 0, 0, &s2), UCOLL_OK);
        int64_t in = ucoll_comm_rank(s2) + 1, out = -1;
        expect_status("first allreduce on S2", 0,
                      ucoll_allreduce(s2, &in, &out, 1, UCOLL_INT64, UCOLL_OP_SUM), UCOLL_OK);
        expect_value("first allreduce on S2", 0, out, 3);
        expect_status("free S2", 0, ucoll_comm_free(s2), UCOLL_OK);
        expect_status("free S", 0, ucoll_comm_free(s), UCOLL_OK);
    }
}

static void truncated(ucoll_comm_t *w)
{
    const int rank = ucoll_comm_rank(w);
    ucoll_comm_t *t = NULL;
    expect_status("split T", 0, ucoll_comm_split(w, rank / 2, rank, &t), UCOLL_OK);
    expect_status("T: recursive doubling", 0,
                  ucoll_set_algorithm(t, UCOLL_COLL_ALLREDUCE, "recursive-doubling"), UCOLL_OK);
    const int trank = ucoll_comm_rank(t);
    int64_t in[2] = {5, 6}, out[2] = {0, 0};
    expect_status("allreduce on T, counts 2 and 1", 0,
                  ucoll_allreduce(t, in, out, trank == 0 ? 2 : 1, UCOLL_INT64, UCOLL_OP_SUM),
                  UCOLL_ERR_TRUNCATED);
    expect_status("allreduce on T after TRUNCATED", 0,
                  ucoll_allreduce(t, in, out, 1, UCOLL_INT64, UCOLL_OP_SUM), UCOLL_ERR_STATE);
    expect_status("free T", 0, ucoll_comm_free(t), UCOLL_OK);
}

static void many_collectives(ucoll_comm_t *c, long k, const char *what)
{
    const int r = ucoll_comm_rank(c), p = ucoll_comm_size(c);
    int64_t total0 = prefix(0, p), step = 0;
    for (int q = 0; q < p; q++)
        step += 7919;
    for (long i = 0; i < k; i++) {
        int64_t in = input(i, r), out = -1;
        if (i % 2 == 0) {
            ucoll_status_t st = ucoll_allreduce(c, &in, &out, 1, UCOLL_INT64, UCOLL_OP_SUM);
            expect_status(what, i, st, UCOLL_OK);
            if (st != UCOLL_OK || !expect_value(what, i, out, total0 + step * i))
                return;
        } else {
            ucoll_status_t st = ucoll_exscan(c, &in, &out, 1, UCOLL_INT64, UCOLL_OP_SUM);
            expect_status(what, i, st, UCOLL_OK);
            if (st != UCOLL_OK || (r > 0 && !expect_value(what, i, out, prefix(i, r))))
                return;
        }
    }
}

/* n nonblocking collectives on c, inputs from call number base on; waited in `order` */
static void inflight(ucoll_comm_t *c, long base, long n, const long *order, const char *what)
{
    const int r = ucoll_comm_rank(c), p = ucoll_comm_size(c);
    int64_t *in = calloc((size_t)n, sizeof(*in)), *out = calloc((size_t)n, sizeof(*out));
    ucoll_request_t **req = calloc((size_t)n, sizeof(*req));
    for (long i = 0; i < n; i++) {
        in[i] = input(base + i, r);
        out[i] = -1;
        ucoll_status_t st =
            i % 2 ? ucoll_iexscan(c, &in[i], &out[i], 1, UCOLL_INT64, UCOLL_OP_SUM, &req[i])
                  : ucoll_iallreduce(c, &in[i], &out[i], 1, UCOLL_INT64, UCOLL_OP_SUM, &req[i]);
        expect_status(what, i, st, UCOLL_OK);
    }
    for (long k = 0; k < n; k++) {
        const long i = order[k];
        if (req[i] == NULL)
            continue;
        expect_status(what, i, ucoll_wait(req[i]), UCOLL_OK);
        if (i % 2 == 0)
            expect_value(what, i, out[i], prefix(base + i, p));
        else if (r > 0)
            expect_value(what, i, out[i], prefix(base + i, r));
        expect_status("request_free", i, ucoll_request_free(req[i]), UCOLL_OK);
    }
    free(in);
    free(out);
    free(req);
}

/* on a split of w: the refusal revokes the comm it happens on */
static void limit(ucoll_comm_t *w)
{
    ucoll_comm_t *c = NULL;
    expect_status("split for the limit", 0, ucoll_comm_split(w, 0, g_rank, &c), UCOLL_OK);
    if (c == NULL)
        return;
    const int r = ucoll_comm_rank(c), p = ucoll_comm_size(c);
    int64_t *in = calloc(LIMIT, sizeof(*in)), *out = calloc(LIMIT, sizeof(*out));
    ucoll_request_t **req = calloc(LIMIT, sizeof(*req)), *pers = NULL, *extra = NULL;
    int64_t pin = input(99, r), pout = -1, x = 1, y = -1;
    expect_status("allreduce_init", 0,
                  ucoll_allreduce_init(c, &pin, &pout, 1, UCOLL_INT64, UCOLL_OP_SUM, &pers),
                  UCOLL_OK);
    for (long i = 0; i < LIMIT; i++) {
        in[i] = input(50000 + i, r);
        out[i] = -1;
        expect_status("iallreduce below the limit", i,
                      ucoll_iallreduce(c, &in[i], &out[i], 1, UCOLL_INT64, UCOLL_OP_SUM, &req[i]),
                      UCOLL_OK);
    }
    expect_status("iexscan beyond the limit", 0,
                  ucoll_iexscan(c, &x, &y, 1, UCOLL_INT64, UCOLL_OP_SUM, &extra), UCOLL_ERR_STATE);
    expect_value("iexscan beyond the limit: no request", 0, extra != NULL, 0);
    expect_value("iexscan beyond the limit: recvbuf untouched", 0, y, -1);
    expect_status("persistent start beyond the limit", 0, ucoll_start(pers), UCOLL_ERR_STATE);
    expect_status("allreduce beyond the limit", 0,
                  ucoll_allreduce(c, &x, &y, 1, UCOLL_INT64, UCOLL_OP_SUM), UCOLL_ERR_STATE);
    expect_value("allreduce beyond the limit: recvbuf untouched", 0, y, -1);
    for (long i = 0; i < LIMIT; i++) {
        if (req[i] == NULL)
            continue;
        expect_status("wait at the limit", i, ucoll_wait(req[i]), UCOLL_OK);
        expect_value("iallreduce at the limit", i, out[i], prefix(50000 + i, p));
        ucoll_request_free(req[i]);
    }
    expect_status("persistent start after the refusal (revoked)", 0, ucoll_start(pers),
                  UCOLL_ERR_STATE);
    expect_status("allreduce after the refusal (revoked)", 0,
                  ucoll_allreduce(c, &x, &y, 1, UCOLL_INT64, UCOLL_OP_SUM), UCOLL_ERR_STATE);
    expect_value("persistent recvbuf untouched", 0, pout, -1);
    ucoll_request_free(pers);
    expect_status("free of the revoked comm", 0, ucoll_comm_free(c), UCOLL_OK);
    many_collectives(w, 10, "collectives on world after the limit");
    free(in);
    free(out);
    free(req);
}

/* splits of world until the comm ids run out: 4094 ids for splits, less those still taken
 * (`taken`: revoked ones of this job so far, held until finalize); the next split gives
 * UCOLL_ERR_NOT_SUPPORTED on every rank, and once they are freed a split works again */
static void ids(ucoll_comm_t *w, int taken)
{
    enum { SPLIT_IDS = 4094 };
    ucoll_comm_t **c = calloc(SPLIT_IDS, sizeof(*c));
    int n = 0;
    ucoll_status_t st = UCOLL_OK;
    while (n < SPLIT_IDS && (st = ucoll_comm_split(w, 0, g_rank, &c[n])) == UCOLL_OK)
        n++;
    expect_value("splits before the ids ran out", 0, n, SPLIT_IDS - taken);
    expect_status("the split after the ids ran out", n, st, UCOLL_ERR_NOT_SUPPORTED);
    int64_t in = 1, out = -1;
    if (n > 0) {
        expect_status("allreduce on the last split", n,
                      ucoll_allreduce(c[n - 1], &in, &out, 1, UCOLL_INT64, UCOLL_OP_SUM), UCOLL_OK);
        expect_value("allreduce on the last split", n, out, ucoll_comm_size(w));
    }
    for (int i = 0; i < n; i++)
        expect_status("free of a split", i, ucoll_comm_free(c[i]), UCOLL_OK);
    ucoll_comm_t *again = NULL;
    expect_status("split after freeing them", 0, ucoll_comm_split(w, 0, g_rank, &again), UCOLL_OK);
    if (again != NULL)
        ucoll_comm_free(again);
    free(c);
}

static void stale_wrap(ucoll_comm_t *w, ucoll_comm_t *p, int prank, long n)
{
    /* rank 0 of P finds out whether P still runs collectives, and tells its partner */
    int64_t in = input(1, prank), out = -1, refused[2] = {0, 0};
    ucoll_request_t *req = NULL;
    if (prank == 0) {
        ucoll_status_t st = ucoll_iallreduce(p, &in, &out, 1, UCOLL_INT64, UCOLL_OP_SUM, &req);
        refused[0] = st != UCOLL_OK;
    }
    expect_status("stale-wrap: share", 0,
                  ucoll_allreduce(w, UCOLL_IN_PLACE, refused, 2, UCOLL_INT64, UCOLL_OP_SUM),
                  UCOLL_OK);
    if (refused[0] != 0) {
        printf("isolation_test rank %d: stale-wrap: P refuses collectives after its failure\n",
               g_rank);
        return;
    }
    ucoll_status_t st =
        prank == 0 ? ucoll_wait(req) : ucoll_allreduce(p, &in, &out, 1, UCOLL_INT64, UCOLL_OP_SUM);
    expect_status("stale-wrap", 1, st, UCOLL_OK);
    expect_value("stale-wrap", 1, out, prefix(1, 2));
    if (req != NULL)
        ucoll_request_free(req);
    for (long i = 2; i < n; i++) {
        in = input(i, prank);
        st = ucoll_allreduce(p, &in, &out, 1, UCOLL_INT64, UCOLL_OP_SUM);
        expect_status("stale-wrap", i, st, UCOLL_OK);
        if (st != UCOLL_OK || !expect_value("stale-wrap", i, out, prefix(i, 2)))
            return;
    }
}

int main(int argc, char **argv)
{
    int expect_size = -1;
    long collectives = 10000, nflight = 1000, wrap = 0;
    const char *phases = "truncated,many,inflight,ids";
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--expect-size") == 0)
            expect_size = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--collectives") == 0)
            collectives = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--inflight") == 0)
            nflight = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--stale-wrap") == 0)
            wrap = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--phases") == 0)
            phases = argv[i + 1];
    }
    const char *pmix_rank = getenv("PMIX_RANK");
    if (expect_size != 4 || pmix_rank == NULL || nflight < 1) {
        fprintf(stderr, "usage: isolation_test --expect-size 4 [--phases LIST] [--collectives K] "
                        "[--inflight M] [--stale-wrap N], under a PMIx launcher\n");
        return 2;
    }
    const int late = strstr(phases, "late") != NULL || wrap > 0;
    if (late && (strstr(phases, "many") != NULL || strstr(phases, "inflight") != NULL)) {
        fprintf(stderr, "isolation_test: late runs ranks 0 and 2 with UCOLL_TIMEOUT=1, too short "
                        "for many or inflight under load: launch those separately\n");
        return 2;
    }
    if (late && atoi(pmix_rank) % 2 == 0) /* rank 0 of P gives up; its partner waits longer */
        setenv("UCOLL_TIMEOUT", "1", 1);
    ucoll_comm_t *w;
    ucoll_status_t st = ucoll_init(&w);
    if (st != UCOLL_OK) {
        printf("FATAL isolation_test: ucoll_init: %s\n", ucoll_strerror(st));
        return 2;
    }
    g_rank = ucoll_comm_rank(w);
    expect_value("job size", 0, ucoll_comm_size(w), expect_size);
    if (ucoll_comm_size(w) != expect_size) {
        ucoll_finalize(w);
        return 1;
    }
    ucoll_comm_t *p = NULL;
    int prank = -1;
    if (late)
        late_message(w, &p, &prank, wrap == 0);
    if (wrap > 0) {
        stale_wrap(w, p, prank, wrap);
    } else {
        if (late) {
            expect_status("free P", 0, ucoll_comm_free(p), UCOLL_OK);
            check_new_comms(w);
        }
        if (strstr(phases, "truncated") != NULL)
            truncated(w);
        ucoll_comm_t *all = NULL;
        expect_status("split ALL", 0, ucoll_comm_split(w, 0, g_rank, &all), UCOLL_OK);
        if (strstr(phases, "many") != NULL)
            many_collectives(all, collectives, "collective on a comm of all ranks");
        expect_status("free ALL", 0, ucoll_comm_free(all), UCOLL_OK);
    }
    if (wrap == 0 && strstr(phases, "inflight") != NULL) {
        long *order = calloc((size_t)nflight, sizeof(*order));
        srand(12345u + (unsigned)g_rank);
        for (long i = 0; i < nflight; i++)
            order[i] = i;
        for (long i = nflight - 1; i > 0; i--) { /* a random permutation */
            long j = rand() % (i + 1), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        inflight(w, 20000, nflight, order, "nonblocking, waited in random order");
        for (long i = 0; i < nflight; i++)
            order[i] = nflight - 1 - i;
        inflight(w, 30000, nflight, order, "nonblocking, waited in reverse order");
        free(order);
        limit(w);
    }
    if (wrap == 0 && strstr(phases, "ids") != NULL)
        ids(w, late + (strstr(phases, "truncated") != NULL) +
                   (strstr(phases, "inflight") != NULL)); /* P's, T's and the limit's ids */
    st = ucoll_finalize(w);
    expect_status("finalize", 0, st, UCOLL_OK);
    printf("isolation_test rank %d: verdict: %s (%d failures)\n", g_rank,
           failures ? "FAIL" : "PASS", failures);
    return failures ? 1 : 0;
}
