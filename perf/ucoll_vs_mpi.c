/*
 * ucoll_vs_mpi: the same collectives through ucoll and through MPI, alternately, in the same
 * processes of one launch, with the ratio of their latencies. Uses include/ucoll.h and MPI
 * only.
 *
 * For every collective and size, iteration i runs "barrier, timed collective, barrier" once
 * through each library (their own barriers; the second is untimed, see time_ucoll), MPI
 * first on even i and ucoll first on odd i, so that a change of machine load during the run
 * hits both alike. An iteration's latency is the maximum over ranks (gathered after the
 * loop). The first iteration's results of the two libraries are compared on every rank
 * (inputs are small integers, so every dtype and op gives exact results): a mismatch stops
 * the run (exit 1) before its timings are printed.
 *
 * The block collectives (allgather, reduce_scatter_block, alltoall, gather, scatter) take a
 * size as the bytes of ONE block: their buffers hold up to N blocks, so a row whose N blocks
 * exceed BLOCK_BUFFER_CAP bytes is left out, and their iterations scale with the N blocks'
 * bytes as the others' do with their size above 64 KiB.
 *
 * ucoll is initialised after MPI_Init with ucoll_init (PMIx; Open MPI's mpirun provides it);
 * -O bootstraps it instead with ucoll_init_oob over MPI_Allgather. ucoll's algorithm choice
 * comes from UCOLL_<COLL>_ALG in the environment (default auto).
 *
 * Usage: mpirun -np 2 ucoll_vs_mpi [-c exscan,scan,...] [-b 8] [-e 16M] [-v] [-l LABEL]
 * Exit status: 0 success, 1 run-time error or mismatch, 2 bad option.
 */
#define _POSIX_C_SOURCE 200809L

#include <mpi.h>
#include <ucoll.h>

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_ITERS 1000
#define DEFAULT_WARMUP 100
#define SCALE_ABOVE (64 * 1024)
#define MIN_SCALED_ITERS 20
#define MAX_SIZES 64
/* the most bytes of N blocks in one buffer of a block collective: the largest buffer the
 * default -e gives the others */
#define BLOCK_BUFFER_CAP ((size_t)16 << 20)

enum {
    C_EXSCAN,
    C_SCAN,
    C_REDUCE,
    C_ALLREDUCE,
    C_BCAST,
    C_ALLGATHER,
    C_REDUCE_SCATTER_BLOCK,
    C_ALLTOALL,
    C_GATHER,
    C_SCATTER,
    NCOLLS
};
static const char *const coll_names[NCOLLS] = {
    "exscan",   "scan",   "reduce", "allreduce", "bcast", "allgather", "reduce_scatter_block",
    "alltoall", "gather", "scatter"};
static const char *const alg_env[NCOLLS] = {"UCOLL_EXSCAN_ALG",
                                            "UCOLL_SCAN_ALG",
                                            "UCOLL_REDUCE_ALG",
                                            "UCOLL_ALLREDUCE_ALG",
                                            "UCOLL_BCAST_ALG",
                                            "UCOLL_ALLGATHER_ALG",
                                            "UCOLL_REDUCE_SCATTER_BLOCK_ALG",
                                            "UCOLL_ALLTOALL_ALG",
                                            "UCOLL_GATHER_ALG",
                                            "UCOLL_SCATTER_ALG"};

static int is_block_coll(int coll)
{
    return coll >= C_ALLGATHER;
}

static const struct {
    const char *name;
    ucoll_dtype_t dtype;
    size_t size;
    int is_float;
} dtypes[] = {
    {"int8", UCOLL_INT8, 1, 0},       {"uint8", UCOLL_UINT8, 1, 0},
    {"int16", UCOLL_INT16, 2, 0},     {"uint16", UCOLL_UINT16, 2, 0},
    {"int32", UCOLL_INT32, 4, 0},     {"uint32", UCOLL_UINT32, 4, 0},
    {"int64", UCOLL_INT64, 8, 0},     {"uint64", UCOLL_UINT64, 8, 0},
    {"float32", UCOLL_FLOAT32, 4, 1}, {"float64", UCOLL_FLOAT64, 8, 1},
};
#define NDTYPES (sizeof(dtypes) / sizeof(dtypes[0]))

static MPI_Datatype mpi_dtype(ucoll_dtype_t dt)
{
    switch (dt) {
    case UCOLL_INT8:
        return MPI_INT8_T;
    case UCOLL_UINT8:
        return MPI_UINT8_T;
    case UCOLL_INT16:
        return MPI_INT16_T;
    case UCOLL_UINT16:
        return MPI_UINT16_T;
    case UCOLL_INT32:
        return MPI_INT32_T;
    case UCOLL_UINT32:
        return MPI_UINT32_T;
    case UCOLL_INT64:
        return MPI_INT64_T;
    case UCOLL_UINT64:
        return MPI_UINT64_T;
    case UCOLL_FLOAT32:
        return MPI_FLOAT;
    case UCOLL_FLOAT64:
        return MPI_DOUBLE;
    case UCOLL_FLOAT16: /* no MPI counterpart; not in dtypes[] */
    case UCOLL_BFLOAT16:
        break;
    }
    return MPI_DATATYPE_NULL;
}

static const char *const op_names[] = {"sum", "prod", "min",  "max", "land",
                                       "lor", "lxor", "band", "bor", "bxor"};
static const ucoll_op_t ucoll_ops[] = {UCOLL_OP_SUM,  UCOLL_OP_PROD, UCOLL_OP_MIN,  UCOLL_OP_MAX,
                                       UCOLL_OP_LAND, UCOLL_OP_LOR,  UCOLL_OP_LXOR, UCOLL_OP_BAND,
                                       UCOLL_OP_BOR,  UCOLL_OP_BXOR};
#define NOPS (sizeof(op_names) / sizeof(op_names[0]))

static MPI_Op mpi_op(unsigned i)
{
    const MPI_Op m[] = {MPI_SUM, MPI_PROD, MPI_MIN,  MPI_MAX, MPI_LAND,
                        MPI_LOR, MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR};
    return m[i];
}

typedef struct {
    int colls[NCOLLS], ncolls;
    size_t min_bytes, max_bytes, factor;
    long iters, warmup;
    unsigned dtype, op;
    int root;
    double percentile;
    int in_place, csv, oob, no_drain, pingpong;
    const char *label;
} opts_t;

static int launcher_rank(void)
{
    const char *v = getenv("OMPI_COMM_WORLD_RANK");
    if (v == NULL)
        v = getenv("PMIX_RANK");
    return v != NULL ? atoi(v) : 0;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mpirun -np N ucoll_vs_mpi [options]\n"
            "  -c LIST      collectives, of exscan,scan,reduce,allreduce,bcast,allgather,\n"
            "               reduce_scatter_block,alltoall,gather,scatter (default all)\n"
            "  -b BYTES     smallest size per rank (default 8; suffixes K, M, G); for the\n"
            "               block collectives (allgather ... scatter) the bytes of ONE block,\n"
            "               rows whose N blocks exceed %zu MiB left out\n"
            "  -e BYTES     largest size per rank or block (default 16M)\n"
            "  -f FACTOR    size multiplier between rows (default 2)\n"
            "  -n ITERS     timed iterations per size and library (default %d, fewer above %d "
            "KiB)\n"
            "  -w WARMUP    untimed iterations per size and library (default %d, scaled alike)\n"
            "  -d DTYPE     int8|uint8|int16|uint16|int32|uint32|int64|uint64|float32|float64"
            " (default int64)\n"
            "  -o OP        sum|prod|min|max|land|lor|lxor|band|bor|bxor (default sum)\n"
            "  -r ROOT      root of reduce, bcast, gather and scatter (default 0)\n"
            "  -R PERCENT   percentile compared (default 50)\n"
            "  -i           in place (MPI_IN_PLACE / UCOLL_IN_PLACE, as MPI allows it; not\n"
            "               for bcast)\n"
            "  -l LABEL     first CSV column / table title (default \"mpi\")\n"
            "  -O           bootstrap ucoll with ucoll_init_oob over MPI_Allgather, not PMIx\n"
            "  -D           no untimed barrier after each timed collective (see the source)\n"
            "  -P           one-way latency instead: per size, bcasts whose root alternates\n"
            "               0, 1, 0, ... back to back (a ping-pong on 2 ranks), through each\n"
            "               library in turn; time per bcast, the best of 5 blocks of -n\n"
            "  -v           CSV: label,collective,size,count,iterations,ucoll_p<R>_us,"
            "mpi_p<R>_us,ratio_p<R>,ucoll_avg_us,mpi_avg_us,ratio_avg,ucoll_min_us,mpi_min_us\n"
            "ucoll's algorithms: UCOLL_EXSCAN_ALG, UCOLL_SCAN_ALG, ... (default auto)\n",
            BLOCK_BUFFER_CAP >> 20, DEFAULT_ITERS, SCALE_ABOVE / 1024, DEFAULT_WARMUP);
}

static void bad_option(const char *fmt, ...)
{
    if (launcher_rank() == 0) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "ucoll_vs_mpi: ");
        vfprintf(stderr, fmt, ap);
        fprintf(stderr, "\n(ucoll_vs_mpi -h for the options)\n");
        va_end(ap);
    }
    exit(2);
}

static size_t parse_bytes(const char *opt, const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    unsigned shift = 0;
    if (end == s || errno != 0 || *s == '-')
        bad_option("%s: '%s' is not a byte count", opt, s);
    if (*end == 'k' || *end == 'K')
        shift = 10;
    else if (*end == 'm' || *end == 'M')
        shift = 20;
    else if (*end == 'g' || *end == 'G')
        shift = 30;
    else if (*end != '\0')
        bad_option("%s: '%s' is not a byte count (suffixes: K, M, G)", opt, s);
    if (shift > 0 && end[1] != '\0')
        bad_option("%s: '%s' is not a byte count", opt, s);
    if (v > (SIZE_MAX >> shift))
        bad_option("%s: '%s' is too large", opt, s);
    return (size_t)v << shift;
}

static long parse_long(const char *opt, const char *s, long min, long max)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || errno != 0 || v < min || v > max)
        bad_option("%s: '%s' is not an integer in [%ld, %ld]", opt, s, min, max);
    return v;
}

static unsigned lookup(const char *opt, const char *s, const char *const *names, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    bad_option("%s: unknown name '%s'", opt, s);
    return 0;
}

static void parse_options(int argc, char **argv, opts_t *o)
{
    const char *dtype_names[NDTYPES];
    for (unsigned i = 0; i < NDTYPES; i++)
        dtype_names[i] = dtypes[i].name;
    memset(o, 0, sizeof(*o));
    o->min_bytes = 8;
    o->max_bytes = 16u << 20;
    o->factor = 2;
    o->iters = o->warmup = -1;
    o->dtype = 6; /* int64 */
    o->percentile = 50;
    o->label = "mpi";
    char *colls = NULL;
    int have_e = 0, c;

    opterr = 0;
    while ((c = getopt(argc, argv, ":c:b:e:f:n:w:d:o:r:R:il:ODPvh")) != -1) {
        switch (c) {
        case 'c':
            colls = optarg;
            break;
        case 'b':
            o->min_bytes = parse_bytes("-b", optarg);
            break;
        case 'e':
            o->max_bytes = parse_bytes("-e", optarg);
            have_e = 1;
            break;
        case 'f':
            o->factor = (size_t)parse_long("-f", optarg, 2, 1024);
            break;
        case 'n':
            o->iters = parse_long("-n", optarg, 1, 100000000);
            break;
        case 'w':
            o->warmup = parse_long("-w", optarg, 0, 100000000);
            break;
        case 'd':
            o->dtype = lookup("-d", optarg, dtype_names, NDTYPES);
            break;
        case 'o':
            o->op = lookup("-o", optarg, op_names, NOPS);
            break;
        case 'r':
            o->root = (int)parse_long("-r", optarg, 0, 1 << 30);
            break;
        case 'R': {
            char *end;
            errno = 0;
            o->percentile = strtod(optarg, &end);
            if (end == optarg || *end != '\0' || errno != 0 || !(o->percentile > 0) ||
                o->percentile > 100)
                bad_option("-R: '%s' is not a percentile in (0, 100]", optarg);
            break;
        }
        case 'i':
            o->in_place = 1;
            break;
        case 'l':
            o->label = optarg;
            break;
        case 'O':
            o->oob = 1;
            break;
        case 'D':
            o->no_drain = 1;
            break;
        case 'P':
            o->pingpong = 1;
            break;
        case 'v':
            o->csv = 1;
            break;
        case 'h':
            if (launcher_rank() == 0)
                usage(stdout);
            exit(0);
        case ':':
            bad_option("option -%c needs an argument", optopt);
            break;
        default:
            bad_option("unknown option -%c", optopt);
        }
    }
    if (optind < argc)
        bad_option("unexpected argument '%s'", argv[optind]);
    if (!have_e && o->max_bytes < o->min_bytes)
        o->max_bytes = o->min_bytes;
    if (o->max_bytes < o->min_bytes)
        bad_option("-b %zu is larger than -e %zu", o->min_bytes, o->max_bytes);
    if (dtypes[o->dtype].is_float && o->op >= 4)
        bad_option("-o %s is not defined on %s", op_names[o->op], dtypes[o->dtype].name);
    if (colls == NULL) {
        for (int i = 0; i < NCOLLS; i++)
            o->colls[o->ncolls++] = i;
    } else {
        for (char *save = NULL, *tok = strtok_r(colls, ",", &save); tok != NULL;
             tok = strtok_r(NULL, ",", &save)) {
            if (o->ncolls == NCOLLS)
                bad_option("-c: at most %d collectives", NCOLLS);
            o->colls[o->ncolls++] = (int)lookup("-c", tok, coll_names, NCOLLS);
        }
        if (o->ncolls == 0)
            bad_option("-c: no collective named");
    }
}

/* ---------------------------------------------------------------------------- inputs */

static int64_t input_value(unsigned op, int r, size_t i)
{
    const int64_t ri = (int64_t)r, ii = (int64_t)(i % 1024);
    switch (ucoll_ops[op]) {
    case UCOLL_OP_PROD:
        return (ri + ii) % 8 == 0 ? 2 : 1;
    case UCOLL_OP_MIN:
    case UCOLL_OP_MAX:
        return (ri * 7 + ii * 3) % 11;
    case UCOLL_OP_LAND:
    case UCOLL_OP_LOR:
    case UCOLL_OP_LXOR:
        return (ri + ii) % 3 == 0 ? 0 : (ri + ii) % 3 + 1;
    case UCOLL_OP_BAND:
    case UCOLL_OP_BOR:
    case UCOLL_OP_BXOR:
        return (ri * 37 + ii * 11) & 0x7f;
    default:
        return (ri * 3 + ii) % 5;
    }
}

static void fill_input(ucoll_dtype_t dt, unsigned op, int r, void *buf, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        int64_t v = input_value(op, r, i);
        switch (dt) {
        case UCOLL_INT8:
        case UCOLL_UINT8:
            ((uint8_t *)buf)[i] = (uint8_t)v;
            break;
        case UCOLL_INT16:
        case UCOLL_UINT16:
            ((uint16_t *)buf)[i] = (uint16_t)v;
            break;
        case UCOLL_INT32:
        case UCOLL_UINT32:
            ((uint32_t *)buf)[i] = (uint32_t)v;
            break;
        case UCOLL_INT64:
        case UCOLL_UINT64:
            ((uint64_t *)buf)[i] = (uint64_t)v;
            break;
        case UCOLL_FLOAT32:
            ((float *)buf)[i] = (float)v;
            break;
        case UCOLL_FLOAT64:
            ((double *)buf)[i] = (double)v;
            break;
        case UCOLL_FLOAT16: /* not in dtypes[] */
        case UCOLL_BFLOAT16:
            break;
        }
    }
}

/* ---------------------------------------------------------------------------- the run */

typedef struct {
    const opts_t *o;
    ucoll_comm_t *comm;
    int rank, size;
    ucoll_dtype_t dtype;
    MPI_Datatype mdtype;
    size_t esize;
    void *input, *u_send, *u_recv, *m_send, *m_recv;
    double *t[2], *tmax[2]; /* [0] ucoll, [1] MPI */
} run_t;

static void fail(run_t *r, const char *what, const char *why)
{
    fprintf(stderr, "ucoll_vs_mpi: rank %d: %s: %s\n", r->rank, what, why);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static const void *u_sendarg(const run_t *r)
{
    return r->o->in_place ? UCOLL_IN_PLACE : r->u_send;
}

static const void *m_sendarg(const run_t *r)
{
    return r->o->in_place ? MPI_IN_PLACE : r->m_send;
}

static int at_root_in_place(const run_t *r)
{
    return r->o->in_place && r->rank == r->o->root;
}

static ucoll_status_t ucoll_call(run_t *r, int coll, size_t count)
{
    const ucoll_op_t op = ucoll_ops[r->o->op];
    switch (coll) {
    case C_EXSCAN:
        return ucoll_exscan(r->comm, u_sendarg(r), r->u_recv, count, r->dtype, op);
    case C_SCAN:
        return ucoll_scan(r->comm, u_sendarg(r), r->u_recv, count, r->dtype, op);
    case C_REDUCE:
        return ucoll_reduce(r->comm, u_sendarg(r), r->u_recv, count, r->dtype, op, r->o->root);
    case C_ALLREDUCE:
        return ucoll_allreduce(r->comm, u_sendarg(r), r->u_recv, count, r->dtype, op);
    case C_ALLGATHER:
        return ucoll_allgather(r->comm, u_sendarg(r), r->u_recv, count, r->dtype);
    case C_REDUCE_SCATTER_BLOCK:
        return ucoll_reduce_scatter_block(r->comm, u_sendarg(r), r->u_recv, count, r->dtype, op);
    case C_ALLTOALL:
        return ucoll_alltoall(r->comm, u_sendarg(r), r->u_recv, count, r->dtype);
    case C_GATHER: /* in place at the root only */
        return ucoll_gather(r->comm, at_root_in_place(r) ? UCOLL_IN_PLACE : r->u_send, r->u_recv,
                            count, r->dtype, r->o->root);
    case C_SCATTER: /* the root's recvbuf is the one in place */
        return ucoll_scatter(r->comm, r->u_send,
                             at_root_in_place(r) ? (void *)UCOLL_IN_PLACE : r->u_recv, count,
                             r->dtype, r->o->root);
    default:
        return ucoll_bcast(r->comm, r->u_recv, count, r->dtype, r->o->root);
    }
}

static int mpi_call(run_t *r, int coll, size_t count)
{
    const MPI_Op op = mpi_op(r->o->op);
    const int n = (int)count;
    /* MPI_IN_PLACE for reduce is the root's alone: the others pass their input */
    const void *reduce_send =
        r->o->in_place ? (r->rank == r->o->root ? MPI_IN_PLACE : r->m_recv) : r->m_send;
    switch (coll) {
    case C_EXSCAN:
        return MPI_Exscan(m_sendarg(r), r->m_recv, n, r->mdtype, op, MPI_COMM_WORLD);
    case C_SCAN:
        return MPI_Scan(m_sendarg(r), r->m_recv, n, r->mdtype, op, MPI_COMM_WORLD);
    case C_REDUCE:
        return MPI_Reduce(reduce_send, r->m_recv, n, r->mdtype, op, r->o->root, MPI_COMM_WORLD);
    case C_ALLREDUCE:
        return MPI_Allreduce(m_sendarg(r), r->m_recv, n, r->mdtype, op, MPI_COMM_WORLD);
    case C_ALLGATHER:
        return MPI_Allgather(m_sendarg(r), n, r->mdtype, r->m_recv, n, r->mdtype, MPI_COMM_WORLD);
    case C_REDUCE_SCATTER_BLOCK:
        return MPI_Reduce_scatter_block(m_sendarg(r), r->m_recv, n, r->mdtype, op, MPI_COMM_WORLD);
    case C_ALLTOALL:
        return MPI_Alltoall(m_sendarg(r), n, r->mdtype, r->m_recv, n, r->mdtype, MPI_COMM_WORLD);
    case C_GATHER:
        return MPI_Gather(at_root_in_place(r) ? MPI_IN_PLACE : r->m_send, n, r->mdtype, r->m_recv,
                          n, r->mdtype, r->o->root, MPI_COMM_WORLD);
    case C_SCATTER:
        return MPI_Scatter(r->m_send, n, r->mdtype, at_root_in_place(r) ? MPI_IN_PLACE : r->m_recv,
                           n, r->mdtype, r->o->root, MPI_COMM_WORLD);
    default:
        return MPI_Bcast(r->m_recv, n, r->mdtype, r->o->root, MPI_COMM_WORLD);
    }
}

/* inputs where each library reads them before every iteration (in place, bcast's root) */
static void reset_buffers(run_t *r, int coll, size_t count)
{
    const size_t bytes = count * r->esize;
    if (!r->o->in_place && coll != C_BCAST)
        return;
    if (coll == C_ALLGATHER || coll == C_GATHER) { /* own block at its place in recvbuf */
        if (coll == C_ALLGATHER || r->rank == r->o->root) {
            memcpy((char *)r->u_recv + (size_t)r->rank * bytes, r->input, bytes);
            memcpy((char *)r->m_recv + (size_t)r->rank * bytes, r->input, bytes);
        }
    } else if (coll == C_REDUCE_SCATTER_BLOCK || coll == C_ALLTOALL) { /* N blocks of input */
        memcpy(r->u_recv, r->input, (size_t)r->size * bytes);
        memcpy(r->m_recv, r->input, (size_t)r->size * bytes);
    } else if (coll == C_SCATTER) {
        /* the root's blocks stay in sendbuf, which neither library writes */
    } else if (coll == C_BCAST) {
        if (r->rank == r->o->root) {
            memcpy(r->u_recv, r->input, bytes);
            memcpy(r->m_recv, r->input, bytes);
        }
    } else if (r->o->in_place) {
        memcpy(r->u_recv, r->input, bytes);
        memcpy(r->m_recv, r->input, bytes);
    }
}

/* 1 if this rank's results of the two libraries differ where both are defined */
static int results_differ(const run_t *r, int coll, size_t count)
{
    if ((coll == C_EXSCAN && r->rank == 0) ||
        ((coll == C_REDUCE || coll == C_GATHER) && r->rank != r->o->root))
        return 0; /* MPI leaves these undefined */
    if (coll == C_ALLGATHER || coll == C_ALLTOALL || coll == C_GATHER)
        count *= (size_t)r->size; /* N blocks received */
    if (memcmp(r->u_recv, r->m_recv, count * r->esize) == 0)
        return 0;
    size_t i = 0;
    while (i < count && memcmp((char *)r->u_recv + i * r->esize, (char *)r->m_recv + i * r->esize,
                               r->esize) == 0)
        i++;
    fprintf(stderr,
            "ucoll_vs_mpi: rank %d: %s of %zu elements: ucoll and MPI differ at element "
            "%zu\n",
            r->rank, coll_names[coll], count, i);
    return 1;
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static double time_ucoll(run_t *r, int coll, size_t count)
{
    ucoll_status_t st = ucoll_barrier(r->comm);
    if (st != UCOLL_OK)
        fail(r, "ucoll_barrier", ucoll_strerror(st));
    double t0 = now_us();
    st = ucoll_call(r, coll, count);
    double t = now_us() - t0;
    if (st != UCOLL_OK)
        fail(r, coll_names[coll], ucoll_strerror(st));
    /* untimed: a rank that has its result may still owe its peers protocol messages (UCX
     * rendezvous acknowledgements) that only progress inside ucoll; without this barrier it
     * could wait in MPI while a peer waits in ucoll for them (-D leaves it out) */
    if (!r->o->no_drain && (st = ucoll_barrier(r->comm)) != UCOLL_OK)
        fail(r, "ucoll_barrier", ucoll_strerror(st));
    return t;
}

static double time_mpi(run_t *r, int coll, size_t count)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now_us();
    int rc = mpi_call(r, coll, count);
    double t = now_us() - t0;
    if (rc != MPI_SUCCESS)
        fail(r, coll_names[coll], "MPI error");
    if (!r->o->no_drain)
        MPI_Barrier(MPI_COMM_WORLD); /* the same untimed barrier as after ucoll's */
    return t;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct {
    double pct, avg, min;
} stats_t;

static stats_t statistics(double *t, long n, double percentile)
{
    double sum = 0;
    for (long i = 0; i < n; i++)
        sum += t[i];
    qsort(t, (size_t)n, sizeof(*t), cmp_double);
    long k = (long)ceil(percentile / 100.0 * (double)n) - 1;
    k = k < 0 ? 0 : (k >= n ? n - 1 : k);
    stats_t s = {t[k], sum / (double)n, t[0]};
    return s;
}

static long scaled(long opt, long dflt, long floor, size_t bytes)
{
    if (opt >= 0)
        return opt;
    if (bytes <= SCALE_ABOVE)
        return dflt;
    double n = (double)dflt * SCALE_ABOVE / (double)bytes;
    return n < floor ? floor : (long)n;
}

static void run_size(run_t *r, int coll, size_t bytes)
{
    const opts_t *o = r->o;
    const size_t count = bytes / r->esize;
    /* a block collective's buffers hold N blocks: its iterations scale with all of them */
    const size_t span = is_block_coll(coll) ? (size_t)r->size * bytes : bytes;
    const long iters = scaled(o->iters, DEFAULT_ITERS, MIN_SCALED_ITERS, span);
    const long warmup = scaled(o->warmup, DEFAULT_WARMUP, 2, span);

    fill_input(r->dtype, o->op, r->rank, r->input, span / r->esize);
    memcpy(r->u_send, r->input, span);
    memcpy(r->m_send, r->input, span);
    memset(r->u_recv, 0, span);
    memset(r->m_recv, 0, span);
    for (long it = 0; it < warmup + iters; it++) {
        double t[2];
        reset_buffers(r, coll, count);
        if (it % 2 == 0) {
            t[1] = time_mpi(r, coll, count);
            t[0] = time_ucoll(r, coll, count);
        } else {
            t[0] = time_ucoll(r, coll, count);
            t[1] = time_mpi(r, coll, count);
        }
        if (it >= warmup) {
            r->t[0][it - warmup] = t[0];
            r->t[1][it - warmup] = t[1];
        }
        if (it == 0) {
            int bad = results_differ(r, coll, count), any_bad = 0;
            MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
            if (any_bad) {
                if (r->rank == 0)
                    fprintf(stderr,
                            "ucoll_vs_mpi: %s at %zu bytes: ucoll's result differs from "
                            "MPI's: no timings reported\n",
                            coll_names[coll], bytes);
                MPI_Finalize();
                exit(1);
            }
        }
    }
    for (int l = 0; l < 2; l++)
        MPI_Reduce(r->t[l], r->tmax[l], (int)iters, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (r->rank != 0)
        return;
    stats_t u = statistics(r->tmax[0], iters, o->percentile);
    stats_t m = statistics(r->tmax[1], iters, o->percentile);
    const double ratio = m.pct > 0 ? u.pct / m.pct : 0, ratio_avg = m.avg > 0 ? u.avg / m.avg : 0;
    if (o->csv)
        printf("%s,%s,%zu,%zu,%ld,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f\n", o->label,
               coll_names[coll], bytes, count, iters, u.pct, m.pct, ratio, u.avg, m.avg, ratio_avg,
               u.min, m.min);
    else
        printf("| %-20s | %10zu | %8ld | %10.3f | %10.3f | %7.2f | %10.3f | %10.3f | %7.2f |\n",
               coll_names[coll], bytes, iters, u.pct, m.pct, ratio, u.avg, m.avg, ratio_avg);
    fflush(stdout);
}

/* 1 if N blocks of `bytes` fit one buffer of a block collective (BLOCK_BUFFER_CAP) */
static int block_row_fits(const run_t *r, size_t bytes)
{
    return bytes <= BLOCK_BUFFER_CAP / (size_t)r->size;
}

/* ucoll_init_oob's allgather, over MPI */
static int mpi_allgather(const void *src, void *dst, size_t len, void *ctx)
{
    (void)ctx;
    return MPI_Allgather(src, (int)len, MPI_BYTE, dst, (int)len, MPI_BYTE, MPI_COMM_WORLD) ==
                   MPI_SUCCESS
               ? 0
               : -1;
}

static void print_header(const run_t *r)
{
    const opts_t *o = r->o;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    lib[strcspn(lib, ",\n")] = '\0';
    const char *tls = getenv("UCX_TLS");
    const char *pml = getenv("OMPI_MCA_pml");
    printf("# ucoll_vs_mpi [%s]: %d ranks, %s %s, %s; ucoll bootstrap %s; UCX_TLS=%s\n", o->label,
           r->size, dtypes[o->dtype].name, op_names[o->op],
           o->in_place ? "in place" : "separate buffers", o->oob ? "OOB (MPI_Allgather)" : "PMIx",
           tls != NULL ? tls : "all");
    printf("# MPI: %s; pml=%s", lib, pml != NULL ? pml : "(default)");
    const char *mca[] = {"OMPI_MCA_pml_ucx_tls", "OMPI_MCA_pml_ucx_devices",
                         "OMPI_MCA_coll_tuned_use_dynamic_rules",
                         "OMPI_MCA_coll_tuned_exscan_algorithm"};
    for (size_t i = 0; i < sizeof(mca) / sizeof(mca[0]); i++) {
        const char *v = getenv(mca[i]);
        if (v != NULL)
            printf(" %s=%s", mca[i] + strlen("OMPI_MCA_"), v);
    }
    printf("\n# ucoll algorithms:");
    for (int c = 0; c < o->ncolls; c++) {
        const char *v = getenv(alg_env[o->colls[c]]);
        printf(" %s=%s", coll_names[o->colls[c]], v != NULL ? v : "auto");
    }
    printf("\n# latency = per iteration the max over ranks; the two libraries alternate\n");
    if (o->csv) {
        char p[32];
        snprintf(p, sizeof(p), "p%g", o->percentile);
        printf("label,collective,size,count,iterations,ucoll_%s_us,mpi_%s_us,ratio_%s,"
               "ucoll_avg_us,mpi_avg_us,ratio_avg,ucoll_min_us,mpi_min_us\n",
               p, p, p);
    } else {
        char p[32];
        snprintf(p, sizeof(p), "%g%%ile", o->percentile);
        printf("+----------------------+------------+----------+------------+------------+---------"
               "+------"
               "------+------------+---------+\n");
        printf("|                      |            |          |  ucoll     |  MPI       | ucoll/  "
               "| ucoll "
               "     | MPI        | ucoll/  |\n");
        printf("| coll                 |   size (B) |  # iters | %-7s us | %-7s us |   MPI   | "
               "average us"
               " | average us |   MPI   |\n",
               p, p);
        printf("+----------------------+------------+----------+------------+------------+---------"
               "+------"
               "------+------------+---------+\n");
    }
    fflush(stdout);
}

/* -P: one-way latency. n bcasts of `bytes` whose root alternates between ranks 0 and 1 run
 * back to back through one library, then through the other, 5 times; each library's figure is
 * its best block's time per bcast (on 2 ranks, half a round trip, as ucx_perftest's tag_lat;
 * no barrier skew in it) */
static void run_pingpong(run_t *r, size_t bytes)
{
    const size_t count = bytes / r->esize;
    const long n = r->o->iters >= 0 ? r->o->iters : 20 * DEFAULT_ITERS;
    double best[2] = {1e300, 1e300};
    memset(r->u_recv, 0, bytes);
    memset(r->m_recv, 0, bytes);
    for (int block = -1; block < 5; block++) { /* block -1: warm-up */
        for (int lib = 0; lib < 2; lib++) {
            ucoll_status_t st = ucoll_barrier(r->comm);
            if (st != UCOLL_OK)
                fail(r, "ucoll_barrier", ucoll_strerror(st));
            MPI_Barrier(MPI_COMM_WORLD);
            const double t0 = now_us();
            for (long i = 0; i < n; i++) {
                const int root = (int)(i & 1) % r->size;
                if (lib == 0) {
                    if ((st = ucoll_bcast(r->comm, r->u_recv, count, r->dtype, root)) != UCOLL_OK)
                        fail(r, "ucoll_bcast", ucoll_strerror(st));
                } else if (MPI_Bcast(r->m_recv, (int)count, r->mdtype, root, MPI_COMM_WORLD) !=
                           MPI_SUCCESS) {
                    fail(r, "MPI_Bcast", "MPI error");
                }
            }
            const double t = (now_us() - t0) / (double)n;
            if (block >= 0 && t < best[lib])
                best[lib] = t;
        }
    }
    double worst[2]; /* the slowest rank's figure */
    MPI_Reduce(best, worst, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (r->rank != 0)
        return;
    if (r->o->csv)
        printf("%s,pingpong,%zu,%zu,%ld,%.3f,%.3f,%.3f\n", r->o->label, bytes, count, n, worst[0],
               worst[1], worst[0] / worst[1]);
    else
        printf("| bcast ping-pong | %10zu | %10ld | %10.3f | %10.3f | %7.2f |\n", bytes, n,
               worst[0], worst[1], worst[0] / worst[1]);
}

int main(int argc, char **argv)
{
    opts_t o;
    parse_options(argc, argv, &o);

    run_t r;
    memset(&r, 0, sizeof(r));
    r.o = &o;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &r.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &r.size);
    r.dtype = dtypes[o.dtype].dtype;
    r.mdtype = mpi_dtype(r.dtype);
    r.esize = dtypes[o.dtype].size;
    if (o.root >= r.size) {
        if (r.rank == 0)
            fprintf(stderr, "ucoll_vs_mpi: -r %d: there are only %d ranks\n", o.root, r.size);
        MPI_Finalize();
        return 2;
    }

    ucoll_status_t st;
    if (o.oob) {
        ucoll_oob_t oob = {mpi_allgather, NULL, r.rank, r.size};
        st = ucoll_init_oob(&oob, &r.comm);
    } else {
        st = ucoll_init(&r.comm);
    }
    if (st != UCOLL_OK)
        fail(&r, o.oob ? "ucoll_init_oob" : "ucoll_init (after MPI_Init; try -O)",
             ucoll_strerror(st));
    if (ucoll_comm_rank(r.comm) != r.rank || ucoll_comm_size(r.comm) != r.size)
        fail(&r, "ucoll_init", "ucoll's rank/size differ from MPI_COMM_WORLD's");

    size_t sizes[MAX_SIZES];
    int nsizes = 0;
    for (size_t b = o.min_bytes; b <= o.max_bytes && nsizes < MAX_SIZES; b *= o.factor) {
        size_t rounded = b / r.esize * r.esize;
        rounded = rounded == 0 ? r.esize : rounded;
        if (rounded / r.esize > (size_t)INT32_MAX)
            break; /* MPI's count is an int */
        if (nsizes == 0 || sizes[nsizes - 1] != rounded)
            sizes[nsizes++] = rounded;
        if (b > SIZE_MAX / o.factor)
            break;
    }
    /* a block collective's buffers hold N blocks of its largest size within the cap */
    size_t max_bytes = sizes[nsizes - 1];
    for (int c = 0; c < o.ncolls; c++)
        for (int i = 0; is_block_coll(o.colls[c]) && i < nsizes; i++)
            if (block_row_fits(&r, sizes[i]) && (size_t)r.size * sizes[i] > max_bytes)
                max_bytes = (size_t)r.size * sizes[i];
    const long max_iters = o.iters >= 0 ? o.iters : DEFAULT_ITERS;
    r.input = malloc(max_bytes);
    r.u_send = malloc(max_bytes);
    r.u_recv = malloc(max_bytes);
    r.m_send = malloc(max_bytes);
    r.m_recv = malloc(max_bytes);
    for (int l = 0; l < 2; l++) {
        r.t[l] = calloc((size_t)max_iters, sizeof(double));
        r.tmax[l] = calloc((size_t)max_iters, sizeof(double));
        if (r.t[l] == NULL || r.tmax[l] == NULL)
            fail(&r, "malloc", "out of memory");
    }
    if (!r.input || !r.u_send || !r.u_recv || !r.m_send || !r.m_recv)
        fail(&r, "malloc", "out of memory");

    if (o.pingpong) {
        if (r.rank == 0) {
            if (o.csv)
                printf("label,collective,size,count,iterations,ucoll_us,mpi_us,ratio\n");
            else
                printf("# ucoll_vs_mpi -P: one-way latency, %d ranks, %s: bcasts with the root "
                       "alternating 0, 1, ...; us per bcast, the best of 5 blocks\n"
                       "| collective      |   size (B) | # per block|  ucoll us  |   MPI us   | "
                       "ucoll/  |\n"
                       "|                 |            |            |            |            |  "
                       " MPI   |\n",
                       r.size, dtypes[o.dtype].name);
        }
        for (int i = 0; i < nsizes; i++)
            run_pingpong(&r, sizes[i]);
        o.ncolls = 0;
    } else if (r.rank == 0) {
        print_header(&r);
    }
    for (int c = 0; c < o.ncolls; c++) {
        if (o.in_place && o.colls[c] == C_BCAST)
            continue; /* bcast is always in place */
        for (int i = 0; i < nsizes; i++)
            if (!is_block_coll(o.colls[c]) || block_row_fits(&r, sizes[i]))
                run_size(&r, o.colls[c], sizes[i]);
    }
    if (r.rank == 0 && !o.csv && !o.pingpong)
        printf("+----------------------+------------+----------+------------+------------+---------"
               "+------"
               "------+------------+---------+\n");

    free(r.input);
    free(r.u_send);
    free(r.u_recv);
    free(r.m_send);
    free(r.m_recv);
    for (int l = 0; l < 2; l++) {
        free(r.t[l]);
        free(r.tmax[l]);
    }
    if ((st = ucoll_finalize(r.comm)) != UCOLL_OK)
        fail(&r, "ucoll_finalize", ucoll_strerror(st));
    MPI_Finalize();
    return 0;
}
