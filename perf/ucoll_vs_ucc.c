/*
 * ucoll_vs_ucc: ucoll, UCC and MPI in the same processes of one launch, alternating, float32
 * sum, for the targets of perf/targets.sh. Built by that script only (it needs a UCC install,
 * which Debian does not package), never by make.
 *
 * For every collective and size, iteration i runs "own barrier, timed collective, own barrier"
 * once through each library, the order rotated with i so that a change of machine load hits all
 * alike. An iteration's latency is the maximum over ranks; a sleeping barrier separates the
 * libraries (see quiet_barrier); the median is printed. UCC has no scan or exscan: those rows have
 * no UCC column. The first iteration's results are compared (inputs are small integers, exact in
 * float32): a mismatch stops the run with exit 1.
 *
 * It also prints the memcpy bandwidth of the largest size: rank 0 alone before MPI_Init (the
 * others sleep), and every rank at once after it, each repeating one copy (warm caches), as
 * the slowest rank's and as each rank's own; and rank 0 alone with 64 MiB written before each
 * copy. And every rank's memcpy of each size takes a turn in the rotation, between the
 * libraries' calls and timed like them (after a barrier, the slowest rank's): a copy from the
 * caches the libraries' calls leave, as a library's call starts from (this VM's caches hold
 * more than 64 MiB: a copy of 16 MiB alone runs faster than the same copy in the rotation).
 *
 * Usage: mpirun -np N ucoll_vs_ucc [-c allreduce,reduce,bcast,exscan,scan] [-s 64K,1M,16M]
 *                                  [-l LABEL] [-M] [-B own|mpi] [-T]
 * -M: ucoll's buffers come from ucoll_mem_alloc (the others' from malloc, as always).
 * -B mpi: MPI_Barrier around every library's timed call instead of the library's own barrier.
 *    How the ranks leave a barrier decides when the next call's messages can start (on a host
 *    with more ranks than CPUs, whose rank is off its CPU); this shows that part apart.
 * -T: a timeline comment per library, collective and size (see print_timeline): when each
 *    rank left the barrier and ended its call, on the host's one monotonic clock.
 * Output: CSV label,np,coll,bytes,ucoll_us,ucc_us,mpi_us, each row followed by
 * "# memcpy in the rotation LABEL NP COLL BYTES: T us (X GB/s)", then memcpy lines as comments.
 */
#define _DEFAULT_SOURCE

#include <mpi.h>
#include <ucc/api/ucc.h>
#include <ucoll.h>

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { LIB_UCOLL, LIB_UCC, LIB_MPI, NLIBS };
enum { SLOT_MEMCPY = NLIBS, NSLOTS }; /* the rotation: the libraries and a plain memcpy */
/* the rotation's order: the memcpy goes between ucoll and UCC, so that ucoll still follows MPI
 * (the order before the memcpy joined); UCC follows the memcpy instead of ucoll, and so does
 * MPI for scan and exscan, which UCC lacks */
static const int slot_order[NSLOTS] = {LIB_UCOLL, SLOT_MEMCPY, LIB_UCC, LIB_MPI};
enum { C_ALLREDUCE, C_REDUCE, C_BCAST, C_EXSCAN, C_SCAN, NCOLLS };
static const char *const coll_names[NCOLLS] = {"allreduce", "reduce", "bcast", "exscan", "scan"};

typedef struct {
    ucoll_comm_t *uc;
    ucc_context_h ctx;
    ucc_team_h team;
    int rank, size;
    float *send[NLIBS], *recv[NLIBS]; /* each library's own, equal inputs */
    int ucc_yields;                   /* this host has more ranks than CPUs */
} run_t;

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

static void die(const char *what)
{
    fprintf(stderr, "ucoll_vs_ucc: %s\n", what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* UCC's out-of-band allgather: a blocking MPI_Allgather, complete when it returns */
static ucc_status_t oob_allgather(void *src, void *dst, size_t len, void *info, void **req)
{
    MPI_Allgather(src, (int)len, MPI_BYTE, dst, (int)len, MPI_BYTE, (MPI_Comm)info);
    *req = NULL;
    return UCC_OK;
}
static ucc_status_t oob_test(void *req)
{
    (void)req;
    return UCC_OK;
}
static ucc_status_t oob_free(void *req)
{
    (void)req;
    return UCC_OK;
}

/* UCC polls without ever giving up the CPU: where a host has more ranks than CPUs, a waiting
 * rank would keep the peer it waits for off its CPU until the scheduler's tick (4-16 ms a call
 * at 3 ranks on 2 CPUs here). Open MPI (mpi_yield_when_idle, set when mpirun oversubscribes)
 * and ucoll (UCOLL_PROGRESS_YIELD=auto) yield there; so does this loop, for a fair comparison. */
static void ucc_progress(run_t *r)
{
    ucc_context_progress(r->ctx);
    if (r->ucc_yields)
        sched_yield();
}

static void ucc_start(run_t *r)
{
    ucc_lib_config_h lib_cfg;
    ucc_context_config_h ctx_cfg;
    ucc_lib_h lib;
    ucc_lib_params_t lp = {.mask = UCC_LIB_PARAM_FIELD_THREAD_MODE,
                           .thread_mode = UCC_THREAD_SINGLE};
    ucc_oob_coll_t oob = {.allgather = oob_allgather,
                          .req_test = oob_test,
                          .req_free = oob_free,
                          .coll_info = (void *)MPI_COMM_WORLD,
                          .n_oob_eps = (uint32_t)r->size,
                          .oob_ep = (uint32_t)r->rank};
    if (ucc_lib_config_read(NULL, NULL, &lib_cfg) != UCC_OK ||
        ucc_init(&lp, lib_cfg, &lib) != UCC_OK)
        die("ucc_init failed");
    ucc_lib_config_release(lib_cfg);
    ucc_context_params_t cp = {.mask = UCC_CONTEXT_PARAM_FIELD_OOB, .oob = oob};
    if (ucc_context_config_read(lib, NULL, &ctx_cfg) != UCC_OK ||
        ucc_context_create(lib, &cp, ctx_cfg, &r->ctx) != UCC_OK)
        die("ucc_context_create failed");
    ucc_context_config_release(ctx_cfg);
    ucc_team_params_t tp = {.mask = UCC_TEAM_PARAM_FIELD_OOB | UCC_TEAM_PARAM_FIELD_EP |
                                    UCC_TEAM_PARAM_FIELD_EP_RANGE,
                            .oob = oob,
                            .ep = (uint64_t)r->rank,
                            .ep_range = UCC_COLLECTIVE_EP_RANGE_CONTIG};
    if (ucc_team_create_post(&r->ctx, 1, &tp, &r->team) != UCC_OK)
        die("ucc_team_create_post failed");
    ucc_status_t st;
    while ((st = ucc_team_create_test(r->team)) == UCC_INPROGRESS)
        ucc_progress(r);
    if (st != UCC_OK)
        die("ucc_team_create_test failed");
}

static void ucc_run(run_t *r, ucc_coll_type_t type, const void *src, void *dst, size_t count)
{
    ucc_coll_args_t a;
    memset(&a, 0, sizeof(a));
    a.coll_type = type;
    a.op = UCC_OP_SUM;
    a.root = 0;
    a.src.info = (ucc_coll_buffer_info_t){(void *)src, count, UCC_DT_FLOAT32, UCC_MEMORY_TYPE_HOST};
    a.dst.info = (ucc_coll_buffer_info_t){dst, count, UCC_DT_FLOAT32, UCC_MEMORY_TYPE_HOST};
    if (type == UCC_COLL_TYPE_BCAST)
        a.src.info.buffer = dst; /* bcast's one buffer is src */
    ucc_coll_req_h req;
    if (ucc_collective_init(&a, &req, r->team) != UCC_OK || ucc_collective_post(req) != UCC_OK)
        die("a UCC collective failed to start");
    ucc_status_t st;
    while ((st = ucc_collective_test(req)) == UCC_INPROGRESS)
        ucc_progress(r);
    if (st != UCC_OK)
        die("a UCC collective failed");
    ucc_collective_finalize(req);
}

/* between two libraries' calls: a barrier whose waiting ranks sleep, so that no rank spins in
 * the next library while a peer, short of a core (more ranks than cores), still finishes the
 * last one's call; each library's own barrier follows */
static void quiet_barrier(void)
{
    MPI_Request req;
    int done = 0;
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    for (MPI_Test(&req, &done, MPI_STATUS_IGNORE); !done; MPI_Test(&req, &done, MPI_STATUS_IGNORE))
        usleep(20);
}

static int mpi_barrier_for_all; /* -B mpi */

static void barrier(run_t *r, int lib)
{
    if (mpi_barrier_for_all)
        MPI_Barrier(MPI_COMM_WORLD);
    else if (lib == LIB_UCOLL)
        ucoll_barrier(r->uc);
    else if (lib == LIB_UCC)
        ucc_run(r, UCC_COLL_TYPE_BARRIER, NULL, NULL, 0);
    else
        MPI_Barrier(MPI_COMM_WORLD);
}

static const char *const lib_names[NLIBS] = {"ucoll", "UCC", "MPI"};

static volatile char copy_sink; /* reads of the rotation's copies */

static void call(run_t *r, int lib, int coll, size_t n)
{
    float *out = r->recv[lib];
    const int c = (int)n;
    ucoll_status_t st = UCOLL_OK;
    switch (coll) {
    case C_ALLREDUCE:
        if (lib == LIB_UCOLL)
            st = ucoll_allreduce(r->uc, r->send[lib], out, n, UCOLL_FLOAT32, UCOLL_OP_SUM);
        else if (lib == LIB_UCC)
            ucc_run(r, UCC_COLL_TYPE_ALLREDUCE, r->send[lib], out, n);
        else
            MPI_Allreduce(r->send[lib], out, c, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        break;
    case C_REDUCE:
        if (lib == LIB_UCOLL)
            st = ucoll_reduce(r->uc, r->send[lib], out, n, UCOLL_FLOAT32, UCOLL_OP_SUM, 0);
        else if (lib == LIB_UCC)
            ucc_run(r, UCC_COLL_TYPE_REDUCE, r->send[lib], out, n);
        else
            MPI_Reduce(r->send[lib], out, c, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
        break;
    case C_BCAST:
        if (r->rank == 0)
            memcpy(out, r->send[lib], n * sizeof(float));
        if (lib == LIB_UCOLL)
            st = ucoll_bcast(r->uc, out, n, UCOLL_FLOAT32, 0);
        else if (lib == LIB_UCC)
            ucc_run(r, UCC_COLL_TYPE_BCAST, NULL, out, n);
        else
            MPI_Bcast(out, c, MPI_FLOAT, 0, MPI_COMM_WORLD);
        break;
    case C_EXSCAN:
        if (lib == LIB_UCOLL)
            st = ucoll_exscan(r->uc, r->send[lib], out, n, UCOLL_FLOAT32, UCOLL_OP_SUM);
        else
            MPI_Exscan(r->send[lib], out, c, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        break;
    case C_SCAN:
        if (lib == LIB_UCOLL)
            st = ucoll_scan(r->uc, r->send[lib], out, n, UCOLL_FLOAT32, UCOLL_OP_SUM);
        else
            MPI_Scan(r->send[lib], out, c, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        break;
    }
    if (st != UCOLL_OK)
        die(ucoll_strerror(st));
}

/* the result every rank must hold: rank q's element i is (q + i) % 7 */
static int check(const run_t *r, int coll, size_t n, const float *got)
{
    int lo = 0, hi = r->size; /* ranks summed: [lo, hi) */
    if (coll == C_REDUCE && r->rank != 0)
        return 0;
    if (coll == C_BCAST)
        hi = 1;
    if (coll == C_EXSCAN) {
        if (r->rank == 0)
            return 0; /* undefined there */
        hi = r->rank;
    }
    if (coll == C_SCAN)
        hi = r->rank + 1;
    for (size_t i = 0; i < n; i++) {
        float want = 0;
        for (int q = lo; q < hi; q++)
            want += (float)((q + i) % 7);
        if (got[i] != want)
            return 1;
    }
    return 0;
}

static int cmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof(*t), cmp);
    return t[n / 2];
}

/*
 * -T: "# timeline LABEL np coll bytes LIB: exit ..., end ...; last out ...", medians over the
 * iterations of each rank's exit from the barrier before the call and of its call's end, in us
 * after the iteration's first exit (all ranks read one host's CLOCK_MONOTONIC), how often each
 * rank left the barrier last, and for reduce (root 0) the median of rank 0's end after the
 * later of its own exit and the other ranks' ends: its own share once its inputs were sent.
 * The reported latency, the slowest rank's own interval, leaves out a rank's wait to get out.
 */
static void print_timeline(const run_t *r, const char *label, int coll, size_t bytes, int lib,
                           double *t0, double *t1, int iters)
{
    const int p = r->size;
    double *a0 = NULL, *a1 = NULL, *col = NULL;
    int *last = NULL;
    if (r->rank == 0) {
        a0 = malloc(sizeof(double) * (size_t)iters * (size_t)p);
        a1 = malloc(sizeof(double) * (size_t)iters * (size_t)p);
        col = malloc(sizeof(double) * (size_t)iters);
        last = calloc((size_t)p, sizeof(int));
        if (a0 == NULL || a1 == NULL || col == NULL || last == NULL)
            die("out of memory");
    }
    MPI_Gather(t0, iters, MPI_DOUBLE, a0, iters, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Gather(t1, iters, MPI_DOUBLE, a1, iters, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (r->rank != 0)
        return;
    /* rank q's iteration i: a0[q * iters + i]; each iteration relative to its first exit */
    for (int i = 0; i < iters; i++) {
        double first = a0[i];
        int lq = 0;
        for (int q = 1; q < p; q++) {
            first = a0[q * iters + i] < first ? a0[q * iters + i] : first;
            lq = a0[q * iters + i] > a0[lq * iters + i] ? q : lq;
        }
        last[lq]++;
        for (int q = 0; q < p; q++) {
            a0[q * iters + i] -= first;
            a1[q * iters + i] -= first;
        }
    }
    printf("# timeline %s %d %s %zu %s:", label, p, coll_names[coll], bytes, lib_names[lib]);
    for (int k = 0; k < 2; k++) {
        const double *a = k == 0 ? a0 : a1;
        printf("%s", k == 0 ? " exit" : ", end");
        for (int q = 0; q < p; q++) {
            memcpy(col, a + (size_t)q * iters, sizeof(double) * (size_t)iters);
            printf(" r%d %.1f", q, median(col, iters));
        }
    }
    printf("; last out");
    for (int q = 0; q < p; q++)
        printf(" r%d %d", q, last[q]);
    if (coll == C_REDUCE) {
        for (int i = 0; i < iters; i++) {
            double ready = a0[i];
            for (int q = 1; q < p; q++)
                ready = a1[q * iters + i] > ready ? a1[q * iters + i] : ready;
            col[i] = a1[i] - ready;
        }
        printf("; root after the others %.1f", median(col, iters));
    }
    printf("\n");
    free(a0);
    free(a1);
    free(col);
    free(last);
}

enum { COLD_BYTES = 64 << 20 }; /* written before each cold copy (this VM's caches hold more) */

/* median over iterations of the slowest rank's memcpy of `bytes`; cold: COLD_BYTES written
 * before each (untimed). own_us (may be NULL): this rank's own median */
static double memcpy_us(size_t bytes, int iters, int all_ranks, int cold, double *own_us)
{
    char *a = malloc(bytes), *b = malloc(bytes);
    char *junk = cold ? malloc(COLD_BYTES) : NULL;
    double *t = malloc(sizeof(double) * (size_t)iters);
    if (a == NULL || b == NULL || t == NULL || (cold && junk == NULL))
        die("out of memory");
    memset(a, 1, bytes);
    memset(b, 2, bytes);
    memcpy(b, a, bytes);
    for (int i = 0; i < iters; i++) {
        if (cold)
            memset(junk, i, COLD_BYTES);
        if (all_ranks)
            MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = now_us();
        memcpy(b, a, bytes);
        t[i] = now_us() - t0;
        a[i % bytes]++;
    }
    if (own_us != NULL) {
        double *mine = malloc(sizeof(double) * (size_t)iters);
        if (mine == NULL)
            die("out of memory");
        memcpy(mine, t, sizeof(double) * (size_t)iters);
        *own_us = median(mine, iters);
        free(mine);
    }
    if (all_ranks)
        MPI_Allreduce(MPI_IN_PLACE, t, iters, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    const double m = median(t, iters);
    free(a);
    free(b);
    free(junk);
    free(t);
    return m;
}

static size_t parse_size(const char *s)
{
    char *end;
    size_t v = strtoull(s, &end, 10);
    if (*end == 'K')
        v <<= 10;
    else if (*end == 'M')
        v <<= 20;
    return v;
}

int main(int argc, char **argv)
{
    const char *colls = "allreduce,reduce,bcast,exscan,scan", *sizes = "64K,1M,16M", *label = "";
    int opt;
    int mem_alloc = 0, timeline = 0;
    while ((opt = getopt(argc, argv, "c:s:l:MB:T")) != -1) {
        if (opt == 'M')
            mem_alloc = 1;
        else if (opt == 'T')
            timeline = 1;
        else if (opt == 'B') {
            mpi_barrier_for_all = strcmp(optarg, "mpi") == 0;
            if (!mpi_barrier_for_all && strcmp(optarg, "own") != 0) {
                fprintf(stderr, "ucoll_vs_ucc: -B %s: use own or mpi\n", optarg);
                return 2;
            }
        } else if (opt == 'c')
            colls = optarg;
        else if (opt == 's')
            sizes = optarg;
        else if (opt == 'l')
            label = optarg;
        else
            return 2;
    }
    size_t sz[16];
    int nsz = 0;
    char *list = strdup(sizes);
    for (char *s = strtok(list, ","); s != NULL && nsz < 16; s = strtok(NULL, ","))
        if ((sz[nsz++] = parse_size(s)) < sizeof(float)) {
            fprintf(stderr, "ucoll_vs_ucc: -s %s: every size must be at least %zu bytes\n", sizes,
                    sizeof(float));
            return 2;
        }
    size_t biggest = 0;
    for (int i = 0; i < nsz; i++)
        biggest = sz[i] > biggest ? sz[i] : biggest;

    /* rank 0's memcpy alone, before any library polls a core */
    const char *lr = getenv("OMPI_COMM_WORLD_RANK");
    double alone_us = 0, cold_us = 0;
    if (lr == NULL || atoi(lr) == 0) {
        alone_us = memcpy_us(biggest, 30, 0, 0, NULL);
        cold_us = memcpy_us(biggest, 30, 0, 1, NULL);
    } else
        sleep(2);

    run_t r;
    memset(&r, 0, sizeof(r));
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &r.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &r.size);
    if (ucoll_init(&r.uc) != UCOLL_OK)
        die("ucoll_init failed");
    MPI_Comm host;
    int on_host;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host);
    MPI_Comm_size(host, &on_host);
    MPI_Comm_free(&host);
    r.ucc_yields = on_host > sysconf(_SC_NPROCESSORS_ONLN);
    ucc_start(&r);
    double own_us = 0;
    const double together_us = memcpy_us(biggest, 30, 1, 0, &own_us);
    /* each rank's own figure while all copy: the CPUs of one host need not be alike (a
     * virtual machine's), and an even split of work waits for the slowest */
    double *each_us = r.rank == 0 ? malloc(sizeof(double) * (size_t)r.size) : NULL;
    if (r.rank == 0 && each_us == NULL)
        die("out of memory");
    MPI_Gather(&own_us, 1, MPI_DOUBLE, each_us, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);

    const size_t n_max = biggest / sizeof(float);
    for (int l = 0; l < NLIBS; l++) {
        void *sb = NULL, *rb = NULL;
        if (l == LIB_UCOLL && mem_alloc) {
            if (ucoll_mem_alloc(biggest, &sb) != UCOLL_OK ||
                ucoll_mem_alloc(biggest, &rb) != UCOLL_OK)
                die("ucoll_mem_alloc failed");
        } else {
            sb = malloc(biggest);
            rb = malloc(biggest);
        }
        r.send[l] = sb;
        r.recv[l] = rb;
    }
    double *t[NSLOTS], *t0s[NLIBS], *t1s[NLIBS]; /* -T: each call's start and end */
    for (int l = 0; l < NSLOTS; l++)
        if ((t[l] = malloc(sizeof(double) * 1000)) == NULL)
            die("out of memory");
    char *copy_src = malloc(biggest), *copy_dst = malloc(biggest);
    if (copy_src == NULL || copy_dst == NULL)
        die("out of memory");
    memset(copy_src, 1, biggest);
    memset(copy_dst, 2, biggest);
    for (int l = 0; l < NLIBS; l++) {
        t0s[l] = malloc(sizeof(double) * 1000);
        t1s[l] = malloc(sizeof(double) * 1000);
    }
    for (int l = 0; l < NLIBS; l++) {
        if (t0s[l] == NULL || t1s[l] == NULL)
            die("out of memory");
        if (r.send[l] == NULL || r.recv[l] == NULL)
            die("out of memory");
        for (size_t i = 0; i < n_max; i++)
            r.send[l][i] = (float)((r.rank + i) % 7);
    }
    if (r.rank == 0)
        printf("label,np,coll,bytes,ucoll_us,ucc_us,mpi_us\n");

    char *clist = strdup(colls);
    for (char *cn = strtok(clist, ","); cn != NULL; cn = strtok(NULL, ",")) {
        int coll = -1;
        for (int c = 0; c < NCOLLS; c++)
            if (strcmp(cn, coll_names[c]) == 0)
                coll = c;
        if (coll < 0)
            die("unknown collective");
        const int has_ucc = coll != C_EXSCAN && coll != C_SCAN;
        for (int k = 0; k < nsz; k++) {
            const size_t n = sz[k] / sizeof(float);
            const int iters = sz[k] <= 65536 ? 1000 : sz[k] <= (1 << 20) ? 200 : 30;
            const int warm = iters / 10 + 2;
            for (int i = -warm; i < iters; i++) {
                for (int j = 0; j < NSLOTS; j++) {
                    const int lib = slot_order[((i + warm) + j) % NSLOTS];
                    if (lib == LIB_UCC && !has_ucc)
                        continue;
                    if (lib == SLOT_MEMCPY) {
                        quiet_barrier();
                        MPI_Barrier(MPI_COMM_WORLD);
                        const double t0 = now_us();
                        memcpy(copy_dst, copy_src, sz[k]);
                        if (i >= 0)
                            t[SLOT_MEMCPY][i] = now_us() - t0;
                        /* read the copy (it must not be optimised away), change the source */
                        copy_sink += copy_dst[(size_t)(i + warm) % sz[k]];
                        copy_src[(size_t)(i + warm) % sz[k]]++;
                        continue;
                    }
                    quiet_barrier();
                    barrier(&r, lib);
                    const double t0 = now_us();
                    call(&r, lib, coll, n);
                    const double t1 = now_us();
                    if (i >= 0) {
                        t[lib][i] = t1 - t0;
                        t0s[lib][i] = t0;
                        t1s[lib][i] = t1;
                    }
                    /* untimed: what a rank still owes its peers (rendezvous replies) moves
                     * only inside the library that owes it */
                    barrier(&r, lib);
                    if (i == -warm && check(&r, coll, n, r.recv[lib])) {
                        fprintf(stderr, "ucoll_vs_ucc: rank %d: %s %zu B: wrong result from %s\n",
                                r.rank, cn, sz[k], lib_names[lib]);
                        MPI_Abort(MPI_COMM_WORLD, 1);
                    }
                }
            }
            MPI_Allreduce(MPI_IN_PLACE, t[SLOT_MEMCPY], iters, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            const double copy_us = median(t[SLOT_MEMCPY], iters);
            double med[NLIBS] = {0, 0, 0};
            for (int l = 0; l < NLIBS; l++) {
                if (l == LIB_UCC && !has_ucc)
                    continue;
                if (timeline)
                    print_timeline(&r, label, coll, sz[k], l, t0s[l], t1s[l], iters);
                MPI_Allreduce(MPI_IN_PLACE, t[l], iters, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
                med[l] = median(t[l], iters);
            }
            if (r.rank == 0) {
                printf("%s,%d,%s,%zu,%.2f,", label, r.size, cn, sz[k], med[LIB_UCOLL]);
                if (has_ucc)
                    printf("%.2f", med[LIB_UCC]);
                printf(",%.2f\n", med[LIB_MPI]);
                printf("# memcpy in the rotation %s %d %s %zu: %.1f us (%.2f GB/s)\n", label,
                       r.size, cn, sz[k], copy_us, sz[k] / copy_us * 1e-3);
                fflush(stdout);
            }
        }
    }
    if (r.rank == 0)
        printf("# memcpy %zu B: rank 0 alone %.1f us (%.2f GB/s), all %d ranks at once %.1f us "
               "(%.2f GB/s), rank 0 cold %.1f us (%.2f GB/s)\n",
               biggest, alone_us, biggest / alone_us * 1e-3, r.size, together_us,
               biggest / together_us * 1e-3, cold_us, biggest / cold_us * 1e-3);
    if (r.rank == 0) {
        printf("# each rank's memcpy %zu B while all %d copy:", biggest, r.size);
        for (int q = 0; q < r.size; q++)
            printf(" rank %d %.1f us (%.2f GB/s)%s", q, each_us[q], biggest / each_us[q] * 1e-3,
                   q + 1 < r.size ? "," : "\n");
    }
    free(each_us);
    free(copy_src);
    free(copy_dst);
    for (int l = 0; l < NSLOTS; l++)
        free(t[l]);
    for (int l = 0; l < NLIBS; l++) {
        free(t0s[l]);
        free(t1s[l]);
    }
    while (ucc_team_destroy(r.team) == UCC_INPROGRESS)
        ucc_progress(&r);
    ucoll_finalize(r.uc);
    MPI_Finalize();
    return 0;
}
