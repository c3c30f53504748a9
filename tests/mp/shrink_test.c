/*
 * tests/mp/shrink_test.c: ranks die (SIGKILL) while the others run collectives; the survivors
 * get an error, shrink (ucoll_comm_shrink, again if another rank dies meanwhile), agree on where
 * to go on, and then run --ops verified collectives of all sixteen kinds on the communicator of
 * exactly the survivors. Public API only. One launch = one repetition: tests/mp/run_shrink.sh
 * launches it with different seeds and judges the records.
 *
 * Usage: shrink_test --seed S --dir DIR [--victims K] [--ops N] [--coordinator 1]
 *                    [--finalize-only 1]
 *        (K = 1, N = 1000; --coordinator needs K = 2)
 * Every rank derives the same plan from the seed: K distinct victims, each with a way to die:
 *   before   raise(SIGKILL) just before the call of iteration I (0 <= I < 40);
 *   inside   at iteration I start the collective nonblocking, test it J (0..3) times, die;
 *   between  finish iteration I, sleep 20 ms (the others are inside the next one), die;
 *   timer    an interval timer raises SIGKILL after D (0 <= D < 300) ms, wherever the victim
 *            is: in a collective, between two, or inside ucoll_comm_shrink after an earlier
 *            victim's death;
 *   coordinator  (--coordinator, the second victim: the lowest rank that is not the first)
 *            dies inside its first ucoll_comm_shrink as the survivors' coordinator, after
 *            sending the decision to T of them (-3 <= T <= 3: the lowest first, or for T < 0
 *            the highest first; UCOLL_TEST_SHRINK_KILL).
 * Until it dies a victim runs like any rank (errors, shrinks). Iterations go on until the
 * communicator holds exactly the non-victims; after each shrink an allreduce (max) of the
 * iteration counter tells every member where to go on (a rank may have finished a collective
 * the others failed). Every result that comes back OK is checked against a reference computed
 * here from the inputs' formula.
 *
 * Records, one file per rank (the victims write theirs just before the signal):
 *   DIR/pid-R      the process id of rank R
 *   DIR/victim-R   mode=M iter=I
 *   DIR/rank-R     rank=R status=NAME shrinks=S final_size=N members_ok=0|1 ops=N wrong=W
 *                  shrink_s=SECONDS (spent in ucoll_comm_shrink)
 *                  then, after ucoll_finalize: fin_status=NAME fin_s=SECONDS
 * (--finalize-only: the victim dies once every rank has returned from ucoll_init, seen by the
 * pid records; the others call ucoll_finalize once it is gone, with UCOLL_TIMEOUT unset, and
 * record only rank=R finalize_only=1 and the fin line)
 * status: the first error that ended the test for this rank (UCOLL_OK if none); members_ok:
 * the final communicator's members, gathered from it, are exactly the non-victims in order.
 */
#define _POSIX_C_SOURCE 200809L
#include "mp_util.h"

#include <ucoll.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

enum { MAX_VICTIMS = 2, MAX_RANKS = 64, MAX_COUNT = 24, KILL_ITERS = 40 };
enum { MODE_BEFORE, MODE_INSIDE, MODE_BETWEEN, MODE_TIMER, NMODES, MODE_COORDINATOR = NMODES };
static const char *const mode_names[NMODES + 1] = {"before", "inside", "between", "timer",
                                                   "coordinator"};

typedef struct {
    int rank, mode, iter, tests, delay_ms;
} victim_t;

static victim_t victims[MAX_VICTIMS];
static int nvictims = 1, world_rank, world_size;
static const char *dir;
static long wrong;

static void write_record(const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd < 0)
        return;
    ssize_t n = write(fd, text, strlen(text));
    (void)n;
    close(fd);
}

static const victim_t *my_plan(void)
{
    for (int v = 0; v < nvictims; v++)
        if (victims[v].rank == world_rank)
            return &victims[v];
    return NULL;
}

static int is_victim(int r)
{
    for (int v = 0; v < nvictims; v++)
        if (victims[v].rank == r)
            return 1;
    return 0;
}

static int record_exists(const char *name)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

/* the number a record file holds (a pid), or -1 while it is absent or not yet written */
static long record_number(const char *name)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    long v = -1;
    if (f != NULL) {
        if (fscanf(f, "%ld", &v) != 1)
            v = -1;
        fclose(f);
    }
    return v;
}

/* --finalize-only's order of events, by the records rather than by time (a rank that lags
 * under load would otherwise still be in ucoll_init when the victim dies, and ucoll_init may
 * then rightly fail): the victim dies once every rank's pid record says its ucoll_init has
 * returned; the survivors call ucoll_finalize once the victim's process is gone. Each wait is
 * bounded (60 s); past it the test goes on and its checks decide. */
static void wait_for_all_inits(void)
{
    const double until = now_s() + 60;
    for (int r = 0; r < world_size && now_s() < until; r++) {
        char name[64];
        snprintf(name, sizeof(name), "pid-%d", r);
        while (!record_exists(name) && now_s() < until)
            nanosleep(&(struct timespec){0, 5000000}, NULL);
    }
}

static void wait_for_victims_gone(void)
{
    const double until = now_s() + 60;
    for (int v = 0; v < nvictims; v++) {
        char name[64];
        snprintf(name, sizeof(name), "victim-%d", victims[v].rank);
        while (!record_exists(name) && now_s() < until)
            nanosleep(&(struct timespec){0, 5000000}, NULL);
        snprintf(name, sizeof(name), "pid-%d", victims[v].rank);
        const long pid = record_number(name);
        while (pid > 0 && now_s() < until && (kill((pid_t)pid, 0) == 0 || errno != ESRCH))
            nanosleep(&(struct timespec){0, 5000000}, NULL);
    }
}

static void die(const victim_t *v, long iter)
{
    char text[128];
    snprintf(text, sizeof(text), "mode=%s iter=%ld\n", mode_names[v->mode], iter);
    char name[64];
    snprintf(name, sizeof(name), "victim-%d", world_rank);
    write_record(name, text);
    raise(SIGKILL);
}

static void on_timer(int sig)
{
    (void)sig;
    const victim_t *v = my_plan();
    die(v, -1);
}

/* element i of rank r's input in iteration `it`, as block `b` where the collective has blocks */
static uint64_t val(long it, int r, int b, size_t i)
{
    return mpt_mix64((uint64_t)it * 0x100000001b3ULL ^ (uint64_t)r << 40 ^ (uint64_t)b << 20 ^ i);
}

/* the v forms' count of the block from rank a to rank b */
static size_t vcount(long it, int a, int b, size_t c)
{
    return c + (size_t)((mpt_mix64((uint64_t)it + (uint64_t)(a * 131 + b)) >> 7) % 3);
}

static uint64_t sbuf[MAX_RANKS * (MAX_COUNT + 2)], rbuf[MAX_RANKS * (MAX_COUNT + 2)];
static size_t scnt[MAX_RANKS], sdsp[MAX_RANKS], rcnt[MAX_RANKS], rdsp[MAX_RANKS];

static void expect(int cond, ucoll_coll_t coll, long it, const char *what)
{
    if (!mpt_check(cond, "shrink_test", "iteration %ld (%s): %s", it, mpt_coll_name(coll), what))
        wrong++;
}

/* one collective of kind `coll` on comm, iteration it: its inputs, the call, the check of an OK
 * result. A victim with mode inside at this iteration dies in the middle of it. */
static ucoll_status_t run_one(ucoll_comm_t *comm, ucoll_coll_t coll, long it, const victim_t *dies)
{
    const int p = ucoll_comm_size(comm), me = ucoll_comm_rank(comm);
    const size_t c = 1 + (size_t)(mpt_mix64((uint64_t)it) % MAX_COUNT);
    const int root = (int)(it % p);
    size_t total = 0;
    memset(rbuf, 0, sizeof(rbuf));
    ucoll_request_t *req = NULL;
    ucoll_status_t st;
    const int nb = dies != NULL;
    switch (coll) {
    case UCOLL_COLL_EXSCAN:
    case UCOLL_COLL_SCAN:
    case UCOLL_COLL_REDUCE:
    case UCOLL_COLL_ALLREDUCE:
    case UCOLL_COLL_BCAST:
    case UCOLL_COLL_BARRIER:
        for (size_t i = 0; i < c; i++)
            sbuf[i] = val(it, me, 0, i);
        if (coll == UCOLL_COLL_BCAST && me == root)
            memcpy(rbuf, sbuf, c * sizeof(uint64_t));
        st = mpt_call(nb ? MPT_NONBLOCKING : MPT_BLOCKING, coll, comm, sbuf, rbuf, c, UCOLL_UINT64,
                      UCOLL_OP_SUM, root, nb ? &req : NULL);
        break;
    default:
        for (int r = 0; r < p; r++) {
            scnt[r] = coll == UCOLL_COLL_ALLTOALLV
                          ? vcount(it, me, r, c)
                          : (coll == UCOLL_COLL_SCATTERV ? vcount(it, root, r, c) : c);
            sdsp[r] = r == 0 ? 0 : sdsp[r - 1] + scnt[r - 1];
            rcnt[r] = coll == UCOLL_COLL_ALLTOALLV ? vcount(it, r, me, c) : vcount(it, r, r, c);
            rdsp[r] = r == 0 ? 0 : rdsp[r - 1] + rcnt[r - 1];
        }
        switch (coll) {
        case UCOLL_COLL_ALLGATHER:
        case UCOLL_COLL_GATHER:
            total = c;
            break;
        case UCOLL_COLL_ALLGATHERV:
        case UCOLL_COLL_GATHERV:
            total = rcnt[me];
            break;
        case UCOLL_COLL_REDUCE_SCATTER:
            total = rdsp[p - 1] + rcnt[p - 1];
            break;
        case UCOLL_COLL_ALLTOALLV:
        case UCOLL_COLL_SCATTERV:
            total = sdsp[p - 1] + scnt[p - 1];
            break;
        default:
            total = (size_t)p * c;
        }
        for (size_t i = 0; i < total; i++)
            sbuf[i] = val(it, me, 0, i);
        st = mpt_block_call(nb ? MPT_NONBLOCKING : MPT_BLOCKING, coll, comm, sbuf, scnt, sdsp, rbuf,
                            rcnt, rdsp,
                            coll == UCOLL_COLL_ALLGATHERV || coll == UCOLL_COLL_GATHERV
                                ? rcnt[me]
                                : (coll == UCOLL_COLL_SCATTERV ? scnt[me] : c),
                            UCOLL_UINT64, UCOLL_OP_SUM, root, nb ? &req : NULL);
    }
    if (nb) {
        for (int t = 0; st == UCOLL_OK && t < dies->tests; t++)
            ucoll_test(req);
        die(dies, it);
    }
    if (st != UCOLL_OK)
        return st;
    /* the reference */
    switch (coll) {
    case UCOLL_COLL_EXSCAN:
    case UCOLL_COLL_SCAN:
    case UCOLL_COLL_REDUCE:
    case UCOLL_COLL_ALLREDUCE:
        if ((coll == UCOLL_COLL_EXSCAN && me == 0) || (coll == UCOLL_COLL_REDUCE && me != root))
            break;
        for (size_t i = 0; i < c; i++) {
            uint64_t ref = 0;
            const int hi = coll == UCOLL_COLL_EXSCAN ? me : coll == UCOLL_COLL_SCAN ? me + 1 : p;
            for (int r = 0; r < hi; r++)
                ref += val(it, r, 0, i);
            expect(rbuf[i] == ref, coll, it, "a wrong sum");
        }
        break;
    case UCOLL_COLL_BCAST:
        for (size_t i = 0; i < c; i++)
            expect(rbuf[i] == val(it, root, 0, i), coll, it, "not the root's element");
        break;
    case UCOLL_COLL_BARRIER:
        break;
    case UCOLL_COLL_ALLGATHER:
    case UCOLL_COLL_GATHER:
        if (coll == UCOLL_COLL_GATHER && me != root)
            break;
        for (int r = 0; r < p; r++)
            for (size_t i = 0; i < c; i++)
                expect(rbuf[(size_t)r * c + i] == val(it, r, 0, i), coll, it, "a wrong block");
        break;
    case UCOLL_COLL_ALLGATHERV:
    case UCOLL_COLL_GATHERV:
        if (coll == UCOLL_COLL_GATHERV && me != root)
            break;
        for (int r = 0; r < p; r++)
            for (size_t i = 0; i < rcnt[r]; i++)
                expect(rbuf[rdsp[r] + i] == val(it, r, 0, i), coll, it, "a wrong block");
        break;
    case UCOLL_COLL_REDUCE_SCATTER_BLOCK:
    case UCOLL_COLL_REDUCE_SCATTER: {
        const size_t off = coll == UCOLL_COLL_REDUCE_SCATTER ? rdsp[me] : (size_t)me * c;
        const size_t n = coll == UCOLL_COLL_REDUCE_SCATTER ? rcnt[me] : c;
        for (size_t i = 0; i < n; i++) {
            uint64_t ref = 0;
            for (int r = 0; r < p; r++)
                ref += val(it, r, 0, off + i);
            expect(rbuf[i] == ref, coll, it, "a wrong sum");
        }
        break;
    }
    case UCOLL_COLL_ALLTOALL:
        for (int r = 0; r < p; r++)
            for (size_t i = 0; i < c; i++)
                expect(rbuf[(size_t)r * c + i] == val(it, r, 0, (size_t)me * c + i), coll, it,
                       "a wrong block");
        break;
    case UCOLL_COLL_ALLTOALLV:
        for (int r = 0; r < p; r++) {
            size_t off = 0; /* where rank r's block for me starts in r's send buffer */
            for (int b = 0; b < me; b++)
                off += vcount(it, r, b, c);
            for (size_t i = 0; i < rcnt[r]; i++)
                expect(rbuf[rdsp[r] + i] == val(it, r, 0, off + i), coll, it, "a wrong block");
        }
        break;
    case UCOLL_COLL_SCATTER:
        for (size_t i = 0; i < c; i++)
            expect(rbuf[i] == val(it, root, 0, (size_t)me * c + i), coll, it, "a wrong block");
        break;
    case UCOLL_COLL_SCATTERV: {
        size_t off = 0;
        for (int b = 0; b < me; b++)
            off += vcount(it, root, b, c);
        for (size_t i = 0; i < scnt[me]; i++)
            expect(rbuf[i] == val(it, root, 0, off + i), coll, it, "a wrong block");
        break;
    }
    default:
        break;
    }
    return UCOLL_OK;
}

/* --coordinator: the second victim is the lowest rank that is not the first; it dies inside
 * its first ucoll_comm_shrink as the coordinator (UCOLL_TEST_SHRINK_KILL: after sending the
 * decision to `tests` members, the lowest ones first, or to -tests, the highest first) */
static int coordinator_dies;
/* --finalize-only: the victim dies right after ucoll_init, before anyone talked to it, and the
 * others go straight to ucoll_finalize without UCOLL_TIMEOUT: it must still return (its wait
 * for the other survivors is bounded), with PEER_FAILED */
static int finalize_only;

static int parse_args(int argc, char **argv, uint64_t *seed, long *ops)
{
    *ops = 1000;
    int have_seed = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--seed") == 0) {
            *seed = strtoull(argv[i + 1], NULL, 10);
            have_seed = 1;
        } else if (strcmp(argv[i], "--dir") == 0) {
            dir = argv[i + 1];
        } else if (strcmp(argv[i], "--victims") == 0) {
            nvictims = atoi(argv[i + 1]);
        } else if (strcmp(argv[i], "--finalize-only") == 0) {
            finalize_only = atoi(argv[i + 1]);
        } else if (strcmp(argv[i], "--coordinator") == 0) {
            coordinator_dies = atoi(argv[i + 1]);
        } else if (strcmp(argv[i], "--ops") == 0) {
            *ops = atol(argv[i + 1]);
        } else {
            return 0;
        }
    }
    return have_seed && dir != NULL && nvictims >= 1 && nvictims <= MAX_VICTIMS && *ops > 0 &&
           (!coordinator_dies || nvictims == 2);
}

static void make_plan(uint64_t seed)
{
    uint64_t h = mpt_mix64(seed * 7919 + 17);
    for (int v = 0; v < nvictims; v++) {
        int r;
        do {
            h = mpt_mix64(h);
            r = (int)(h % (uint64_t)world_size);
        } while (v > 0 && victims[0].rank == r);
        victims[v].rank = r;
        h = mpt_mix64(h);
        victims[v].mode = (int)(h % NMODES);
        victims[v].iter = (int)((h >> 8) % KILL_ITERS);
        victims[v].tests = (int)((h >> 16) % 4);
        victims[v].delay_ms = (int)((h >> 24) % 300);
    }
    if (coordinator_dies) {
        victims[1].rank = victims[0].rank == 0 ? 1 : 0;
        victims[1].mode = MODE_COORDINATOR;
        victims[1].iter = INT32_MAX;
        victims[1].tests = (int)(mpt_mix64(h) % 7) - 3; /* -3..3 */
    }
}

int main(int argc, char **argv)
{
    uint64_t seed = 0;
    long ops;
    if (!parse_args(argc, argv, &seed, &ops)) {
        fprintf(stderr, "usage: shrink_test --seed S --dir DIR [--victims 1|2] [--ops N] "
                        "[--coordinator 1 (with --victims 2)] [--finalize-only 1]\n");
        return 2;
    }
    ucoll_comm_t *world;
    if (finalize_only)
        unsetenv("UCOLL_TIMEOUT");
    ucoll_status_t st = ucoll_init(&world);
    if (st != UCOLL_OK) {
        fprintf(stderr, "shrink_test: ucoll_init: %s\n", mpt_status_name(st));
        return 1;
    }
    world_rank = ucoll_comm_rank(world);
    world_size = ucoll_comm_size(world);
    mpt_tally.rank = world_rank;
    mpt_tally.max_prints = 20;
    if (world_size < nvictims + 2 || world_size > MAX_RANKS) {
        fprintf(stderr, "shrink_test: needs %d to %d ranks\n", nvictims + 2, MAX_RANKS);
        return 2;
    }
    make_plan(seed);
    char text[512], name[64];
    snprintf(text, sizeof(text), "%ld\n", (long)getpid());
    snprintf(name, sizeof(name), "pid-%d", world_rank);
    write_record(name, text);
    const victim_t *mine = my_plan();
    if (finalize_only) {
        if (mine != NULL) {
            wait_for_all_inits();
            die(mine, -1);
        }
        wait_for_victims_gone();
        const double t0 = now_s();
        st = ucoll_finalize(world);
        snprintf(text, sizeof(text), "rank=%d finalize_only=1\nfin_status=%s fin_s=%.3f\n",
                 world_rank, mpt_status_name(st), now_s() - t0);
        snprintf(name, sizeof(name), "rank-%d", world_rank);
        write_record(name, text);
        return 0;
    }

    /* every pair talks once before anyone dies: a rank notices a dead peer it has talked to */
    st = run_one(world, UCOLL_COLL_ALLTOALL, -1, NULL);
    if (st == UCOLL_OK)
        st = ucoll_barrier(world);
    if (st != UCOLL_OK) {
        fprintf(stderr, "shrink_test: rank %d: the first collectives: %s\n", world_rank,
                mpt_status_name(st));
        return 1;
    }
    if (mine != NULL && mine->mode == MODE_TIMER) {
        signal(SIGALRM, on_timer);
        struct itimerval t = {{0, 0}, {mine->delay_ms / 1000, (mine->delay_ms % 1000) * 1000 + 1}};
        setitimer(ITIMER_REAL, &t, NULL);
    }

    ucoll_comm_t *comm = world;
    const int want_size = world_size - nvictims;
    long it = 0, done_after = 0;
    int shrinks = 0;
    double shrink_s = 0; /* time spent in ucoll_comm_shrink */
    ucoll_status_t end = UCOLL_OK;
    while (done_after < ops) {
        /* the sixteen kinds in turn (UCOLL_COLL_EXSCAN = 0 .. UCOLL_COLL_SCATTERV) */
        const ucoll_coll_t coll = (ucoll_coll_t)(it % (UCOLL_COLL_SCATTERV + 1));
        if (mine != NULL && it >= mine->iter && mine->mode == MODE_BEFORE)
            die(mine, it);
        const victim_t *dies =
            mine != NULL && it >= mine->iter && mine->mode == MODE_INSIDE ? mine : NULL;
        st = run_one(comm, coll, it, dies);
        if (st == UCOLL_OK) {
            if (mine != NULL && it >= mine->iter && mine->mode == MODE_BETWEEN) {
                nanosleep(&(struct timespec){0, 20000000}, NULL);
                die(mine, it);
            }
            if (ucoll_comm_size(comm) == want_size)
                done_after++;
            it++;
            continue;
        }
        fprintf(stderr, "shrink_test: rank %d: iteration %ld (%s) on %d ranks: %s\n", world_rank,
                it, mpt_coll_name(coll), ucoll_comm_size(comm), mpt_status_name(st));
        if (ucoll_comm_size(comm) == want_size) {
            end = st; /* every victim is out: no collective may fail any more */
            break;
        }
        /* shrink until a communicator agrees on the next iteration */
        for (;;) {
            ucoll_comm_t *nc = NULL;
            if (mine != NULL && mine->mode == MODE_COORDINATOR) {
                char arg[16];
                snprintf(arg, sizeof(arg), "%d", mine->tests);
                setenv("UCOLL_TEST_SHRINK_KILL", arg, 1);
                snprintf(text, sizeof(text), "mode=coordinator iter=%ld sends=%d\n", it,
                         mine->tests);
                snprintf(name, sizeof(name), "victim-%d", world_rank);
                write_record(name, text);
            }
            const double t_shrink = now_s();
            ucoll_status_t sst = ucoll_comm_shrink(comm, &nc);
            shrink_s += now_s() - t_shrink;
            if (sst != UCOLL_OK) {
                end = sst;
                break;
            }
            shrinks++;
            if (comm != world)
                ucoll_comm_free(comm);
            comm = nc;
            int64_t next = it + 1;
            if (ucoll_allreduce(comm, UCOLL_IN_PLACE, &next, 1, UCOLL_INT64, UCOLL_OP_MAX) ==
                UCOLL_OK) {
                it = next;
                break;
            }
        }
        if (end != UCOLL_OK)
            break;
    }
    int members_ok = 0;
    if (end == UCOLL_OK) {
        int64_t ranks[MAX_RANKS];
        int64_t mine_r = world_rank;
        st = ucoll_allgather(comm, &mine_r, ranks, 1, UCOLL_INT64);
        members_ok = st == UCOLL_OK;
        if (st != UCOLL_OK)
            fprintf(stderr, "shrink_test: rank %d: the members' allgather: %s\n", world_rank,
                    mpt_status_name(st));
        for (int r = 0, k = 0; members_ok && r < world_size; r++)
            if (!is_victim(r) && ranks[k++] != r)
                members_ok = 0;
        if (st != UCOLL_OK)
            end = st;
    }
    snprintf(text, sizeof(text),
             "rank=%d status=%s shrinks=%d final_size=%d members_ok=%d ops=%ld wrong=%ld "
             "shrink_s=%.3f\n",
             world_rank, mpt_status_name(end), shrinks, ucoll_comm_size(comm), members_ok,
             done_after, wrong + mpt_tally.fails, shrink_s);
    snprintf(name, sizeof(name), "rank-%d", world_rank);
    write_record(name, text);
    if (comm != world)
        ucoll_comm_free(comm);
    const double t0 = now_s();
    st = ucoll_finalize(world);
    snprintf(text, sizeof(text), "fin_status=%s fin_s=%.3f\n", mpt_status_name(st), now_s() - t0);
    write_record(name, text);
    return 0;
}
