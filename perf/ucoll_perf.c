/*
 * ucoll_perf: latency of ucoll collectives, measured the way ucx_perftest measures
 * point-to-point operations, written against include/ucoll.h only.
 *
 * Per iteration every rank enters a barrier, then times one collective; after the loop the
 * per-iteration times are reduced with MAX to rank 0, so that an iteration's latency is that
 * of its slowest rank. Rank 0 prints a box naming the run and a table with one row per
 * message size (or, with -v, CSV). The result of the first iteration of every size is
 * checked on every rank against a locally computed reference: a wrong result stops the run
 * (exit 1) before any timing of it is printed.
 *
 * The block collectives (allgather(v), reduce_scatter(_block), alltoall(v), gather(v),
 * scatter(v)) take a size as the bytes of ONE block; their buffers hold N blocks, so the
 * iterations scale with the N blocks' bytes. Their v forms run with every count equal to the
 * block and the blocks back to back, so that they move what the fixed-size form moves.
 *
 * Launch under any PMIx launcher, e.g. `mpirun -np 4 ucoll_perf -c exscan -a linear,auto`.
 * Exit status: 0 success, 1 run-time error or wrong result, 2 bad option.
 */
#define _POSIX_C_SOURCE 200809L

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

#define MAX_ALGS 32
#define DEFAULT_ITERS 1000
#define DEFAULT_WARMUP 100
#define SCALE_ABOVE (64 * 1024) /* default -n/-w shrink above this size (bytes) */
#define MIN_SCALED_ITERS 20

/* ------------------------------------------------------------------ names and options */

static const char *const coll_names[] = {"exscan",         "scan",       "reduce",
                                         "allreduce",      "bcast",      "barrier",
                                         "allgather",      "allgatherv", "reduce_scatter_block",
                                         "reduce_scatter", "alltoall",   "alltoallv",
                                         "gather",         "gatherv",    "scatter",
                                         "scatterv"};
static const ucoll_coll_t coll_ids[] = {
    UCOLL_COLL_EXSCAN,         UCOLL_COLL_SCAN,       UCOLL_COLL_REDUCE,
    UCOLL_COLL_ALLREDUCE,      UCOLL_COLL_BCAST,      UCOLL_COLL_BARRIER,
    UCOLL_COLL_ALLGATHER,      UCOLL_COLL_ALLGATHERV, UCOLL_COLL_REDUCE_SCATTER_BLOCK,
    UCOLL_COLL_REDUCE_SCATTER, UCOLL_COLL_ALLTOALL,   UCOLL_COLL_ALLTOALLV,
    UCOLL_COLL_GATHER,         UCOLL_COLL_GATHERV,    UCOLL_COLL_SCATTER,
    UCOLL_COLL_SCATTERV};
#define NCOLLS (sizeof(coll_names) / sizeof(coll_names[0]))

/* a collective whose buffers hold one block per rank */
static int is_block_coll(ucoll_coll_t c)
{
    return c >= UCOLL_COLL_ALLGATHER;
}

static int is_reduce_scatter(ucoll_coll_t c)
{
    return c == UCOLL_COLL_REDUCE_SCATTER_BLOCK || c == UCOLL_COLL_REDUCE_SCATTER;
}

static int is_rooted_block(ucoll_coll_t c)
{
    return c == UCOLL_COLL_GATHER || c == UCOLL_COLL_GATHERV || c == UCOLL_COLL_SCATTER ||
           c == UCOLL_COLL_SCATTERV;
}

static const struct {
    const char *name;
    ucoll_dtype_t dtype;
    size_t size;
    int is_float, is_signed;
} dtypes[] = {
    {"int8", UCOLL_INT8, 1, 0, 1},       {"uint8", UCOLL_UINT8, 1, 0, 0},
    {"int16", UCOLL_INT16, 2, 0, 1},     {"uint16", UCOLL_UINT16, 2, 0, 0},
    {"int32", UCOLL_INT32, 4, 0, 1},     {"uint32", UCOLL_UINT32, 4, 0, 0},
    {"int64", UCOLL_INT64, 8, 0, 1},     {"uint64", UCOLL_UINT64, 8, 0, 0},
    {"float32", UCOLL_FLOAT32, 4, 1, 1}, {"float64", UCOLL_FLOAT64, 8, 1, 1},
};
#define NDTYPES (sizeof(dtypes) / sizeof(dtypes[0]))

static const struct {
    const char *name;
    ucoll_op_t op;
    int int_only;
} ops[] = {
    {"sum", UCOLL_OP_SUM, 0},   {"prod", UCOLL_OP_PROD, 0}, {"min", UCOLL_OP_MIN, 0},
    {"max", UCOLL_OP_MAX, 0},   {"land", UCOLL_OP_LAND, 1}, {"lor", UCOLL_OP_LOR, 1},
    {"lxor", UCOLL_OP_LXOR, 1}, {"band", UCOLL_OP_BAND, 1}, {"bor", UCOLL_OP_BOR, 1},
    {"bxor", UCOLL_OP_BXOR, 1},
};
#define NOPS (sizeof(ops) / sizeof(ops[0]))

typedef struct {
    unsigned coll; /* index into coll_names */
    char *algs[MAX_ALGS];
    int nalgs;
    size_t min_bytes, max_bytes, factor;
    long iters, warmup; /* -1: default, scaled down for large sizes */
    unsigned dtype;     /* index into dtypes */
    unsigned op;        /* index into ops */
    int root;
    double percentile;
    int in_place, persistent, csv;
    int mem_alloc;      /* -M */
    int interleave;     /* -I */
    int thread_level;   /* -t: 1 + ucoll_thread_level_t; 0: plain ucoll_init */
    double spin_ns;     /* -S: > 0 runs OP as a user op that also spins this long per element */
    int cache_state;    /* -C: one of CACHE_* */
    size_t cache_bytes; /* -C dirty and clean: bytes of other memory */
} opts_t;

/* what the caches hold when a timed call starts (-C), set up before each iteration's barrier */
enum {
    CACHE_WARM,    /* what the previous iteration left: inputs not touched since */
    CACHE_WRITTEN, /* the inputs just written again, as by a program that computed them */
    CACHE_DIRTY,   /* cache_bytes of other memory just written, as other work leaves them */
    CACHE_CLEAN    /* cache_bytes of other memory just read */
};
static const char *const cache_states[] = {"warm", "written", "dirty", "clean"};
enum { DEFAULT_CACHE_BYTES = 64 << 20 };

/* rank of this process as the launcher tells it, before ucoll_init (for printing once) */
static int launcher_rank(void)
{
    const char *vars[] = {"PMIX_RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        const char *v = getenv(vars[i]);
        if (v != NULL && *v != '\0')
            return atoi(v);
    }
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: ucoll_perf [options]   (launch with mpirun/srun/prterun; alone = 1 rank)\n"
            "  -c COLL      exscan|scan|reduce|allreduce|bcast|barrier|allgather|allgatherv|\n"
            "               reduce_scatter_block|reduce_scatter|alltoall|alltoallv|gather|\n"
            "               gatherv|scatter|scatterv (default exscan)\n"
            "  -a ALG[,ALG] algorithms to compare, names as in `ucoll_info -a` (default auto)\n"
            "  -b BYTES     smallest message size per rank (default 8; suffixes K, M, G); for\n"
            "               the block collectives (allgather ... scatterv) the bytes of ONE\n"
            "               block, buffers of N blocks; v forms with equal counts\n"
            "  -e BYTES     largest message size per rank or block (default 1M)\n"
            "  -f FACTOR    size multiplier between rows (default 2)\n"
            "  -n ITERS     timed iterations per size (default %d, fewer above %d KiB)\n"
            "  -w WARMUP    untimed iterations per size (default %d, fewer above %d KiB)\n"
            "  -d DTYPE     int8|uint8|int16|uint16|int32|uint32|int64|uint64|float32|float64"
            " (default int64)\n"
            "  -o OP        sum|prod|min|max|land|lor|lxor|band|bor|bxor (default sum)\n"
            "  -r ROOT      root of reduce, bcast, gather(v) and scatter(v) (default 0)\n"
            "  -R PERCENT   percentile reported in the first latency column (default 50)\n"
            "  -S NS        OP as a user-defined op costing NS more nanoseconds per element\n"
            "               (an artificially expensive (+), e.g. -S 1000)\n"
            "  -i           in place (UCOLL_IN_PLACE as sendbuf; gather(v): at the root;\n"
            "               scatter(v): as the root's recvbuf)\n"
            "  -p           persistent requests (ucoll_*_init once, ucoll_start + ucoll_wait)\n"
            "  -M           send and receive buffers from ucoll_mem_alloc (peers on the host\n"
            "               read them in place)\n"
            "  -C STATE     the caches when each timed call starts: warm (default: what the\n"
            "               last iteration left), written (the inputs written again before\n"
            "               it), dirty[:BYTES] or clean[:BYTES] (BYTES, default 64M, of other\n"
            "               memory written or read before it); with -i and for bcast the\n"
            "               inputs are written again before every call in any state\n"
            "  -t LEVEL     init by ucoll_init_thread at single|funneled|serialized|multiple\n"
            "               (default: ucoll_init, single), to measure what a level costs\n"
            "  -I           interleaved: every algorithm on a communicator of its own, their\n"
            "               iterations alternating (in a fresh order each), one row each per size\n"
            "  -v           CSV output: algorithm,size,count,iterations,p<R>_us,avg_us,min_us,"
            "max_us,bw_mbs\n"
            "  -h           this help\n"
            "Latency of an iteration = max over ranks; a barrier precedes every iteration.\n",
            DEFAULT_ITERS, SCALE_ABOVE / 1024, DEFAULT_WARMUP, SCALE_ABOVE / 1024);
}

static void bad_option(const char *fmt, ...)
{
    if (launcher_rank() == 0) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "ucoll_perf: ");
        vfprintf(stderr, fmt, ap);
        fprintf(stderr, "\n(ucoll_perf -h for the options)\n");
        va_end(ap);
    }
    exit(2);
}

/* a byte count with an optional K/M/G (binary) suffix */
static size_t parse_bytes(const char *opt, const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || errno != 0 || *s == '-')
        bad_option("%s: '%s' is not a byte count", opt, s);
    unsigned shift = 0;
    switch (*end) {
    case '\0':
        break;
    case 'k':
    case 'K':
        shift = 10;
        break;
    case 'm':
    case 'M':
        shift = 20;
        break;
    case 'g':
    case 'G':
        shift = 30;
        break;
    default:
        bad_option("%s: '%s' is not a byte count (suffixes: K, M, G)", opt, s);
    }
    if (*end != '\0' && end[1] != '\0')
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

static void parse_options(int argc, char **argv, opts_t *o)
{
    memset(o, 0, sizeof(*o));
    o->min_bytes = 8;
    o->max_bytes = 1 << 20;
    o->factor = 2;
    o->iters = o->warmup = -1;
    o->dtype = 6; /* int64 */
    o->percentile = 50;
    int have_e = 0;
    static char default_alg[] = "auto";
    char *alg_list = default_alg;
    int c;

    opterr = 0;
    while ((c = getopt(argc, argv, ":c:a:b:e:f:n:w:d:o:r:R:S:t:C:iIMpvh")) != -1) {
        switch (c) {
        case 'c': {
            unsigned i;
            for (i = 0; i < NCOLLS && strcmp(optarg, coll_names[i]) != 0; i++)
                ;
            if (i == NCOLLS)
                bad_option("-c: unknown collective '%s' (exscan, scan, reduce, allreduce, "
                           "bcast, barrier, allgather, allgatherv, reduce_scatter_block, "
                           "reduce_scatter, alltoall, alltoallv, gather, gatherv, scatter, "
                           "scatterv)",
                           optarg);
            o->coll = i;
            break;
        }
        case 'a':
            alg_list = optarg;
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
        case 'd': {
            unsigned i;
            for (i = 0; i < NDTYPES && strcmp(optarg, dtypes[i].name) != 0; i++)
                ;
            if (i == NDTYPES)
                bad_option("-d: unknown datatype '%s'", optarg);
            o->dtype = i;
            break;
        }
        case 'o': {
            unsigned i;
            for (i = 0; i < NOPS && strcmp(optarg, ops[i].name) != 0; i++)
                ;
            if (i == NOPS)
                bad_option("-o: unknown op '%s'", optarg);
            o->op = i;
            break;
        }
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
        case 't': {
            static const char *const levels[] = {"single", "funneled", "serialized", "multiple"};
            o->thread_level = -1;
            for (int l = 0; l < 4; l++)
                if (strcmp(optarg, levels[l]) == 0)
                    o->thread_level = l;
            if (o->thread_level < 0)
                bad_option("-t: '%s' is not single, funneled, serialized or multiple", optarg);
            o->thread_level++; /* 0: not given */
            break;
        }
        case 'p':
            o->persistent = 1;
            break;
        case 'C': {
            char *colon = strchr(optarg, ':');
            if (colon != NULL)
                *colon = '\0';
            o->cache_state = -1;
            for (int k = 0; k < (int)(sizeof(cache_states) / sizeof(cache_states[0])); k++)
                if (strcmp(optarg, cache_states[k]) == 0)
                    o->cache_state = k;
            if (o->cache_state < 0)
                bad_option("-C: '%s' is not warm, written, dirty or clean", optarg);
            if (colon != NULL && o->cache_state != CACHE_DIRTY && o->cache_state != CACHE_CLEAN)
                bad_option("-C %s takes no size", optarg);
            o->cache_bytes = colon != NULL ? parse_bytes("-C", colon + 1) : DEFAULT_CACHE_BYTES;
            if (o->cache_bytes == 0)
                bad_option("-C %s: the size must be at least 1 byte", optarg);
            break;
        }
        case 'M':
            o->mem_alloc = 1;
            break;
        case 'I':
            o->interleave = 1;
            break;
        case 'v':
            o->csv = 1;
            break;
        case 'S': {
            char *end;
            errno = 0;
            o->spin_ns = strtod(optarg, &end);
            if (end == optarg || *end != '\0' || errno != 0 || !(o->spin_ns >= 0) ||
                o->spin_ns > 1e9)
                bad_option("-S: '%s' is not a number of nanoseconds in [0, 1e9]", optarg);
            break;
        }
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
        o->max_bytes = o->min_bytes; /* -b alone: that one size */
    if (o->max_bytes < o->min_bytes)
        bad_option("-b %zu is larger than -e %zu", o->min_bytes, o->max_bytes);

    const ucoll_coll_t coll = coll_ids[o->coll];
    if (ops[o->op].int_only && dtypes[o->dtype].is_float)
        bad_option("-o %s is not defined on %s", ops[o->op].name, dtypes[o->dtype].name);
    if (o->in_place && (coll == UCOLL_COLL_BCAST || coll == UCOLL_COLL_BARRIER))
        bad_option("-i applies to every collective but bcast and barrier");
    if (o->persistent && coll == UCOLL_COLL_BARRIER)
        bad_option("-p: ucoll has no persistent barrier");
    if (o->persistent && o->interleave)
        bad_option("-I and -p: one persistent request per algorithm is not measured interleaved");

    for (char *save = NULL, *tok = strtok_r(alg_list, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        if (o->nalgs == MAX_ALGS)
            bad_option("-a: at most %d algorithms", MAX_ALGS);
        o->algs[o->nalgs++] = tok;
    }
    if (o->nalgs == 0)
        bad_option("-a: no algorithm named");
}

/* ------------------------------------------------ inputs and the reference (+), for checks */

/* rank r's input element i: small integers, so that every dtype and op gives exact results */
static int64_t input_value(ucoll_op_t op, int r, size_t i)
{
    const int64_t ri = (int64_t)r, ii = (int64_t)(i % 1024);
    switch (op) {
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

static void store(ucoll_dtype_t dt, void *buf, size_t i, int64_t v)
{
    switch (dt) {
    case UCOLL_INT8:
        ((int8_t *)buf)[i] = (int8_t)v;
        break;
    case UCOLL_UINT8:
        ((uint8_t *)buf)[i] = (uint8_t)v;
        break;
    case UCOLL_INT16:
        ((int16_t *)buf)[i] = (int16_t)v;
        break;
    case UCOLL_UINT16:
        ((uint16_t *)buf)[i] = (uint16_t)v;
        break;
    case UCOLL_INT32:
        ((int32_t *)buf)[i] = (int32_t)v;
        break;
    case UCOLL_UINT32:
        ((uint32_t *)buf)[i] = (uint32_t)v;
        break;
    case UCOLL_INT64:
        ((int64_t *)buf)[i] = v;
        break;
    case UCOLL_UINT64:
        ((uint64_t *)buf)[i] = (uint64_t)v;
        break;
    case UCOLL_FLOAT32:
        ((float *)buf)[i] = (float)v;
        break;
    case UCOLL_FLOAT64:
        ((double *)buf)[i] = (double)v;
        break;
    case UCOLL_FLOAT16: /* not offered by -d (dtypes[]) */
    case UCOLL_BFLOAT16:
        break;
    }
}

/* element i as a double, for messages */
static double load(ucoll_dtype_t dt, const void *buf, size_t i)
{
    switch (dt) {
    case UCOLL_INT8:
        return ((const int8_t *)buf)[i];
    case UCOLL_UINT8:
        return ((const uint8_t *)buf)[i];
    case UCOLL_INT16:
        return ((const int16_t *)buf)[i];
    case UCOLL_UINT16:
        return ((const uint16_t *)buf)[i];
    case UCOLL_INT32:
        return ((const int32_t *)buf)[i];
    case UCOLL_UINT32:
        return ((const uint32_t *)buf)[i];
    case UCOLL_INT64:
        return (double)((const int64_t *)buf)[i];
    case UCOLL_UINT64:
        return (double)((const uint64_t *)buf)[i];
    case UCOLL_FLOAT32:
        return ((const float *)buf)[i];
    case UCOLL_FLOAT64:
        return ((const double *)buf)[i];
    case UCOLL_FLOAT16: /* not offered by -d (dtypes[]) */
    case UCOLL_BFLOAT16:
        break;
    }
    return 0;
}

static void fill_input(ucoll_dtype_t dt, ucoll_op_t op, int r, void *buf, size_t count)
{
    for (size_t i = 0; i < count; i++)
        store(dt, buf, i, input_value(op, r, i));
}

/* a (+) b on unsigned 64-bit values: sums and products wrap like the narrower types do */
static uint64_t combine_int(ucoll_op_t op, uint64_t a, uint64_t b, int is_signed)
{
    switch (op) {
    case UCOLL_OP_SUM:
        return a + b;
    case UCOLL_OP_PROD:
        return a * b;
    case UCOLL_OP_MIN:
        return is_signed ? ((int64_t)a < (int64_t)b ? a : b) : (a < b ? a : b);
    case UCOLL_OP_MAX:
        return is_signed ? ((int64_t)a > (int64_t)b ? a : b) : (a > b ? a : b);
    case UCOLL_OP_LAND:
        return a && b;
    case UCOLL_OP_LOR:
        return a || b;
    case UCOLL_OP_LXOR:
        return !a != !b;
    case UCOLL_OP_BAND:
        return a & b;
    case UCOLL_OP_BOR:
        return a | b;
    default:
        return a ^ b;
    }
}

static double combine_float(ucoll_op_t op, double a, double b)
{
    switch (op) {
    case UCOLL_OP_SUM:
        return a + b;
    case UCOLL_OP_PROD:
        return a * b;
    case UCOLL_OP_MIN:
        return a < b ? a : b;
    default:
        return a > b ? a : b;
    }
}

/* inout[i] = in[i] (+) inout[i], computed in the element type's own width */
static void ref_combine(unsigned dti, ucoll_op_t op, const void *in, void *inout, size_t n)
{
    const ucoll_dtype_t dt = dtypes[dti].dtype;
    const int sgn = dtypes[dti].is_signed;
    for (size_t i = 0; i < n; i++) {
        if (dtypes[dti].is_float) {
            double v = combine_float(op, load(dt, in, i), load(dt, inout, i));
            if (dt == UCOLL_FLOAT32)
                ((float *)inout)[i] = (float)v;
            else
                ((double *)inout)[i] = v;
            continue;
        }
        uint64_t a, b;
        switch (dt) {
#define INT_CASE(ID, T, W)                                                                         \
    case ID:                                                                                       \
        a = (uint64_t)(W)((const T *)in)[i];                                                       \
        b = (uint64_t)(W)((T *)inout)[i];                                                          \
        ((T *)inout)[i] = (T)combine_int(op, a, b, sgn);                                           \
        break;
            INT_CASE(UCOLL_INT8, int8_t, int64_t)
            INT_CASE(UCOLL_UINT8, uint8_t, uint64_t)
            INT_CASE(UCOLL_INT16, int16_t, int64_t)
            INT_CASE(UCOLL_UINT16, uint16_t, uint64_t)
            INT_CASE(UCOLL_INT32, int32_t, int64_t)
            INT_CASE(UCOLL_UINT32, uint32_t, uint64_t)
            INT_CASE(UCOLL_INT64, int64_t, int64_t)
            INT_CASE(UCOLL_UINT64, uint64_t, uint64_t)
#undef INT_CASE
        default:
            break;
        }
    }
}

/* -S: the op as a user op that computes the same and then spins ns per element */
typedef struct {
    unsigned dti;
    ucoll_op_t op;
    double ns;
} spin_op_t;

static void spin_op_fn(const void *in, void *inout, size_t count, ucoll_dtype_t dtype, void *arg)
{
    const spin_op_t *s = arg;
    struct timespec t0, t;
    (void)dtype;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ref_combine(s->dti, s->op, in, inout, count);
    const double until = s->ns * (double)count;
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((double)(t.tv_sec - t0.tv_sec) * 1e9 + (double)(t.tv_nsec - t0.tv_nsec) < until);
}

/* (+) of the inputs of ranks first..last (in rank order) into out; tmp is scratch */
static void ref_fold(unsigned dti, ucoll_op_t op, int first, int last, void *out, void *tmp,
                     size_t count)
{
    const ucoll_dtype_t dt = dtypes[dti].dtype;
    fill_input(dt, op, first, out, count);
    for (int q = first + 1; q <= last; q++) {
        fill_input(dt, op, q, tmp, count);
        ref_combine(dti, op, out, tmp, count); /* tmp = acc (+) V_q: acc covers lower ranks */
        memcpy(out, tmp, count * dtypes[dti].size);
    }
}

/* ------------------------------------------------------------------------------ the run */

typedef struct {
    const opts_t *o;
    ucoll_comm_t *comm;
    int rank, size;
    ucoll_coll_t coll;
    ucoll_dtype_t dtype;
    ucoll_op_t op;      /* the op results are checked against */
    ucoll_op_t call_op; /* the op the collectives get (a user op with -S) */
    size_t esize;
    void *sendbuf, *recvbuf, *input, *expect, *tmp;
    size_t span;             /* bytes of this size's sendbuf (N blocks for block collectives) */
    unsigned char *other;    /* -C dirty and clean: the other memory */
    size_t *counts, *displs; /* the v forms': every count one block, blocks back to back */
    double *t, *tmax;
} run_t;

static void die(run_t *r, const char *what, ucoll_status_t st)
{
    fprintf(stderr, "ucoll_perf: rank %d: %s: %s\n", r->rank, what, ucoll_strerror(st));
    exit(1);
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

/* the send buffer argument of this run */
static const void *send_arg(const run_t *r)
{
    return r->o->in_place ? UCOLL_IN_PLACE : r->sendbuf;
}

/* gather(v)'s send argument: in place at the root only */
static const void *gather_send_arg(const run_t *r)
{
    return r->o->in_place && r->rank == r->o->root ? UCOLL_IN_PLACE : r->sendbuf;
}

/* scatter(v)'s receive argument: in place at the root only */
static void *scatter_recv_arg(const run_t *r)
{
    return r->o->in_place && r->rank == r->o->root ? (void *)UCOLL_IN_PLACE : r->recvbuf;
}

/* the v forms' count arrays for blocks of `count` elements */
static void set_counts(run_t *r, size_t count)
{
    for (int j = 0; j < r->size; j++) {
        r->counts[j] = count;
        r->displs[j] = (size_t)j * count;
    }
}

static ucoll_status_t run_blocking(run_t *r, size_t count)
{
    const int root = r->o->root;
    const size_t *n = r->counts, *d = r->displs;
    switch (r->coll) {
    case UCOLL_COLL_EXSCAN:
        return ucoll_exscan(r->comm, send_arg(r), r->recvbuf, count, r->dtype, r->call_op);
    case UCOLL_COLL_SCAN:
        return ucoll_scan(r->comm, send_arg(r), r->recvbuf, count, r->dtype, r->call_op);
    case UCOLL_COLL_REDUCE:
        return ucoll_reduce(r->comm, send_arg(r), r->recvbuf, count, r->dtype, r->call_op, root);
    case UCOLL_COLL_ALLREDUCE:
        return ucoll_allreduce(r->comm, send_arg(r), r->recvbuf, count, r->dtype, r->call_op);
    case UCOLL_COLL_BCAST:
        return ucoll_bcast(r->comm, r->recvbuf, count, r->dtype, root);
    case UCOLL_COLL_BARRIER:
        return ucoll_barrier(r->comm);
    case UCOLL_COLL_ALLGATHER:
        return ucoll_allgather(r->comm, send_arg(r), r->recvbuf, count, r->dtype);
    case UCOLL_COLL_ALLGATHERV:
        return ucoll_allgatherv(r->comm, send_arg(r), count, r->recvbuf, n, d, r->dtype);
    case UCOLL_COLL_REDUCE_SCATTER_BLOCK:
        return ucoll_reduce_scatter_block(r->comm, send_arg(r), r->recvbuf, count, r->dtype,
                                          r->call_op);
    case UCOLL_COLL_REDUCE_SCATTER:
        return ucoll_reduce_scatter(r->comm, send_arg(r), r->recvbuf, n, r->dtype, r->call_op);
    case UCOLL_COLL_ALLTOALL:
        return ucoll_alltoall(r->comm, send_arg(r), r->recvbuf, count, r->dtype);
    case UCOLL_COLL_ALLTOALLV:
        return ucoll_alltoallv(r->comm, send_arg(r), n, d, r->recvbuf, n, d, r->dtype);
    case UCOLL_COLL_GATHER:
        return ucoll_gather(r->comm, gather_send_arg(r), r->recvbuf, count, r->dtype, root);
    case UCOLL_COLL_GATHERV:
        return ucoll_gatherv(r->comm, gather_send_arg(r), count, r->recvbuf, n, d, r->dtype, root);
    case UCOLL_COLL_SCATTER:
        return ucoll_scatter(r->comm, r->sendbuf, scatter_recv_arg(r), count, r->dtype, root);
    case UCOLL_COLL_SCATTERV:
        return ucoll_scatterv(r->comm, r->sendbuf, n, d, scatter_recv_arg(r), count, r->dtype,
                              root);
    }
    return UCOLL_ERR_INVALID_ARG;
}

static ucoll_status_t make_persistent(run_t *r, size_t count, ucoll_request_t **req)
{
    const int root = r->o->root;
    const size_t *n = r->counts, *d = r->displs;
    switch (r->coll) {
    case UCOLL_COLL_EXSCAN:
        return ucoll_exscan_init(r->comm, send_arg(r), r->recvbuf, count, r->dtype, r->call_op,
                                 req);
    case UCOLL_COLL_SCAN:
        return ucoll_scan_init(r->comm, send_arg(r), r->recvbuf, count, r->dtype, r->call_op, req);
    case UCOLL_COLL_REDUCE:
        return ucoll_reduce_init(r->comm, send_arg(r), r->recvbuf, count, r->dtype, r->call_op,
                                 root, req);
    case UCOLL_COLL_ALLREDUCE:
        return ucoll_allreduce_init(r->comm, send_arg(r), r->recvbuf, count, r->dtype, r->call_op,
                                    req);
    case UCOLL_COLL_BCAST:
        return ucoll_bcast_init(r->comm, r->recvbuf, count, r->dtype, root, req);
    case UCOLL_COLL_BARRIER:
        break;
    case UCOLL_COLL_ALLGATHER:
        return ucoll_allgather_init(r->comm, send_arg(r), r->recvbuf, count, r->dtype, req);
    case UCOLL_COLL_ALLGATHERV:
        return ucoll_allgatherv_init(r->comm, send_arg(r), count, r->recvbuf, n, d, r->dtype, req);
    case UCOLL_COLL_REDUCE_SCATTER_BLOCK:
        return ucoll_reduce_scatter_block_init(r->comm, send_arg(r), r->recvbuf, count, r->dtype,
                                               r->call_op, req);
    case UCOLL_COLL_REDUCE_SCATTER:
        return ucoll_reduce_scatter_init(r->comm, send_arg(r), r->recvbuf, n, r->dtype, r->call_op,
                                         req);
    case UCOLL_COLL_ALLTOALL:
        return ucoll_alltoall_init(r->comm, send_arg(r), r->recvbuf, count, r->dtype, req);
    case UCOLL_COLL_ALLTOALLV:
        return ucoll_alltoallv_init(r->comm, send_arg(r), n, d, r->recvbuf, n, d, r->dtype, req);
    case UCOLL_COLL_GATHER:
        return ucoll_gather_init(r->comm, gather_send_arg(r), r->recvbuf, count, r->dtype, root,
                                 req);
    case UCOLL_COLL_GATHERV:
        return ucoll_gatherv_init(r->comm, gather_send_arg(r), count, r->recvbuf, n, d, r->dtype,
                                  root, req);
    case UCOLL_COLL_SCATTER:
        return ucoll_scatter_init(r->comm, r->sendbuf, scatter_recv_arg(r), count, r->dtype, root,
                                  req);
    case UCOLL_COLL_SCATTERV:
        return ucoll_scatterv_init(r->comm, r->sendbuf, n, d, scatter_recv_arg(r), count, r->dtype,
                                   root, req);
    }
    return UCOLL_ERR_NOT_SUPPORTED;
}

/* puts the buffers in their state before an iteration: inputs where the collective reads them
 * (in place: recvbuf; bcast: the root's buffer) */
static void reset_buffers(run_t *r, size_t count)
{
    const size_t bytes = count * r->esize;
    const ucoll_coll_t c = r->coll;
    if (c == UCOLL_COLL_ALLGATHER || c == UCOLL_COLL_ALLGATHERV || c == UCOLL_COLL_GATHER ||
        c == UCOLL_COLL_GATHERV) { /* in place: the own block at its place in recvbuf */
        if ((c == UCOLL_COLL_ALLGATHER || c == UCOLL_COLL_ALLGATHERV || r->rank == r->o->root) &&
            r->o->in_place)
            memcpy((char *)r->recvbuf + (size_t)r->rank * bytes, r->input, bytes);
    } else if (c == UCOLL_COLL_SCATTER || c == UCOLL_COLL_SCATTERV) {
        /* in place, the root's own block stays in its sendbuf, which is never written */
    } else if (is_block_coll(c)) { /* in place: recvbuf holds all N blocks of input */
        if (r->o->in_place)
            memcpy(r->recvbuf, r->input, (size_t)r->size * bytes);
    } else if (r->coll == UCOLL_COLL_BCAST) {
        if (r->rank == r->o->root)
            memcpy(r->recvbuf, r->input, bytes);
    } else if (r->o->in_place) {
        memcpy(r->recvbuf, r->input, bytes);
    }
}

/* block `b` (of `count` elements) of rank q's input into dst */
static void input_block(run_t *r, int q, int b, size_t count, void *dst)
{
    fill_input(r->dtype, r->op, q, r->tmp, (size_t)r->size * count);
    memcpy(dst, (char *)r->tmp + (size_t)b * count * r->esize, count * r->esize);
}

/* the expected extent of recvbuf in elements, in r->expect; 0 if it is not checked here */
static size_t expected_result(run_t *r, size_t count)
{
    const unsigned dti = r->o->dtype;
    const int root = r->o->root;
    const size_t bytes = count * r->esize, span = (size_t)r->size * count;
    char *e = r->expect;
    switch (r->coll) {
    case UCOLL_COLL_EXSCAN:
        if (r->rank == 0) /* left untouched: the sentinel, or (in place) the input */
            return 0;
        ref_fold(dti, r->op, 0, r->rank - 1, r->expect, r->tmp, count);
        return count;
    case UCOLL_COLL_SCAN:
        ref_fold(dti, r->op, 0, r->rank, r->expect, r->tmp, count);
        return count;
    case UCOLL_COLL_REDUCE:
        if (r->rank != root)
            return 0;
        ref_fold(dti, r->op, 0, r->size - 1, r->expect, r->tmp, count);
        return count;
    case UCOLL_COLL_ALLREDUCE:
        ref_fold(dti, r->op, 0, r->size - 1, r->expect, r->tmp, count);
        return count;
    case UCOLL_COLL_BCAST:
        fill_input(r->dtype, r->op, root, r->expect, count);
        return count;
    case UCOLL_COLL_BARRIER:
        break;
    case UCOLL_COLL_GATHER:
    case UCOLL_COLL_GATHERV:
        if (r->rank != root)
            return 0;
        /* fall through */
    case UCOLL_COLL_ALLGATHER:
    case UCOLL_COLL_ALLGATHERV: /* block q: rank q's first block */
        for (int q = 0; q < r->size; q++)
            input_block(r, q, 0, count, e + (size_t)q * bytes);
        return span;
    case UCOLL_COLL_REDUCE_SCATTER_BLOCK:
    case UCOLL_COLL_REDUCE_SCATTER: /* block rank of the fold over ranks; tmp is scratch */
        ref_fold(dti, r->op, 0, r->size - 1, e, r->tmp, span);
        memmove(e, e + (size_t)r->rank * bytes, bytes);
        return count;
    case UCOLL_COLL_ALLTOALL:
    case UCOLL_COLL_ALLTOALLV: /* block q: rank q's block for this rank */
        for (int q = 0; q < r->size; q++)
            input_block(r, q, r->rank, count, e + (size_t)q * bytes);
        return span;
    case UCOLL_COLL_SCATTER:
    case UCOLL_COLL_SCATTERV:
        if (r->o->in_place && r->rank == root)
            return 0; /* recvbuf not passed */
        input_block(r, root, r->rank, count, e);
        return count;
    }
    return 0;
}

#define SENTINEL 0xA5

/* checks this rank's result of the first iteration; returns 0 if right */
static int check_result(run_t *r, const char *alg, size_t block)
{
    size_t count = block;
    if (r->coll == UCOLL_COLL_BARRIER || count == 0)
        return 0;
    if (r->coll == UCOLL_COLL_EXSCAN && r->rank == 0) {
        /* rank 0's recvbuf must be left as it was */
        if (r->o->in_place)
            memcpy(r->expect, r->input, count * r->esize);
        else
            memset(r->expect, SENTINEL, count * r->esize);
    } else if ((count = expected_result(r, block)) == 0) {
        return 0;
    }
    const size_t bytes = count * r->esize;
    if (memcmp(r->recvbuf, r->expect, bytes) == 0)
        return 0;
    size_t i = 0;
    while (i < count && memcmp((char *)r->recvbuf + i * r->esize, (char *)r->expect + i * r->esize,
                               r->esize) == 0)
        i++;
    fprintf(stderr,
            "ucoll_perf: rank %d: %s algorithm %s, %zu elements: WRONG RESULT at element %zu: "
            "got %.17g, expected %.17g\n",
            r->rank, coll_names[r->o->coll], alg, count, i, load(r->dtype, r->recvbuf, i),
            load(r->dtype, r->expect, i));
    return 1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct {
    double pct, avg, min, max;
} stats_t;

static stats_t statistics(double *t, long n, double percentile)
{
    stats_t s = {0, 0, 0, 0};
    double sum = 0;
    for (long i = 0; i < n; i++)
        sum += t[i];
    qsort(t, (size_t)n, sizeof(*t), cmp_double);
    long k = (long)ceil(percentile / 100.0 * (double)n) - 1; /* nearest rank */
    if (k < 0)
        k = 0;
    if (k >= n)
        k = n - 1;
    s.pct = t[k];
    s.avg = sum / (double)n;
    s.min = t[0];
    s.max = t[n - 1];
    return s;
}

/* ------------------------------------------------------------------------------ output */

/* the table's columns (inner widths, spaces included); the box above it is as wide */
static const int col_w[] = {14, 12, 14, 12, 11, 11, 11, 18};
#define NCOLS (sizeof(col_w) / sizeof(col_w[0]))
#define LAT_FIRST 3 /* the four latency columns */
#define LAT_LAST 6

static int table_width(void)
{
    int w = 1;
    for (size_t c = 0; c < NCOLS; c++)
        w += col_w[c] + 1;
    return w;
}

static void box_line(const char *label, const char *fmt, ...)
{
    char text[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    printf("| %-14s%-*s |\n", label, table_width() - 4 - 14, text);
}

static void rule(void)
{
    putchar('+');
    for (int i = 0; i < table_width() - 2; i++)
        putchar('-');
    printf("+\n");
}

static void print_box(const run_t *r, const char *alg)
{
    const opts_t *o = r->o;
    const char *tls = getenv("UCX_TLS");
    const char *dev = getenv("UCX_NET_DEVICES");
    rule();
    box_line("Collective:", "%s", coll_names[o->coll]);
    box_line("Algorithm:", "%s", alg);
    if (r->coll != UCOLL_COLL_BARRIER) {
        box_line("Datatype:", "%s (%zu B)", dtypes[o->dtype].name, r->esize);
        const int has_op =
            r->coll != UCOLL_COLL_BCAST && (!is_block_coll(r->coll) || is_reduce_scatter(r->coll));
        if (has_op && o->spin_ns > 0)
            box_line("Operation:", "%s as a user op, +%g ns/element", ops[o->op].name, o->spin_ns);
        else if (has_op)
            box_line("Operation:", "%s", ops[o->op].name);
        if (is_block_coll(r->coll))
            box_line("Sizes:", "of one block; buffers of %d blocks%s", r->size,
                     r->coll == UCOLL_COLL_ALLGATHERV || r->coll == UCOLL_COLL_ALLTOALLV ||
                             r->coll == UCOLL_COLL_REDUCE_SCATTER ||
                             r->coll == UCOLL_COLL_GATHERV || r->coll == UCOLL_COLL_SCATTERV
                         ? ", every count the same"
                         : "");
    }
    if (r->coll == UCOLL_COLL_REDUCE || r->coll == UCOLL_COLL_BCAST || is_rooted_block(r->coll))
        box_line("Root:", "%d", o->root);
    box_line("Ranks:", "%d", r->size);
    if (o->cache_state == CACHE_DIRTY || o->cache_state == CACHE_CLEAN)
        box_line("Caches:", "%s: %zu B of other memory %s before each call",
                 cache_states[o->cache_state], o->cache_bytes,
                 o->cache_state == CACHE_DIRTY ? "written" : "read");
    else if (o->cache_state == CACHE_WRITTEN)
        box_line("Caches:", "written: the inputs written again before each call");
    box_line("Transports:", "UCX_TLS=%s, UCX_NET_DEVICES=%s", tls != NULL ? tls : "all",
             dev != NULL ? dev : "all");
    /* the on-host channel's switches (README, UCOLL_SHM): on unless one of them is off */
    const char *shm = getenv("UCOLL_SHM"), *fd = getenv("UCOLL_FAILURE_DETECTION");
    const int shm_on = (shm == NULL || strcmp(shm, "0") != 0) &&
                       (fd == NULL || *fd == '\0' || strcmp(fd, "auto") == 0);
    box_line("On host:", "%s",
             shm_on ? "messages <= 4096 B through ucoll's shared-memory rings"
                    : "every message through UCX (UCOLL_SHM=0 or "
                      "UCOLL_FAILURE_DETECTION not auto)");
    box_line("Calls:", "%s%s", o->persistent ? "persistent (init, then start + wait)" : "blocking",
             o->in_place ? ", in place" : "");
    box_line("Latency:", "of each iteration, the maximum over ranks; a barrier before each");
    rule();
}

/* a separator row; `join_latency` leaves the latency columns as one */
static void table_rule(int join_latency)
{
    putchar('+');
    for (size_t c = 0; c < NCOLS; c++) {
        for (int i = 0; i < col_w[c]; i++)
            putchar('-');
        putchar(join_latency && c >= LAT_FIRST && c < LAT_LAST ? '-' : '+');
    }
    putchar('\n');
}

/* one header row: text centred in each column; a NULL entry continues the previous cell */
static void table_row(const char *const *cells)
{
    putchar('|');
    for (size_t c = 0; c < NCOLS;) {
        int w = col_w[c];
        size_t next = c + 1;
        while (next < NCOLS && cells[next] == NULL) {
            w += col_w[next] + 1;
            next++;
        }
        int len = (int)strlen(cells[c]);
        int left = (w - len) / 2;
        printf("%*s%s%*s|", left, "", cells[c], w - len - left, "");
        c = next;
    }
    putchar('\n');
}

static void print_table_head(double percentile)
{
    char pct[32];
    snprintf(pct, sizeof(pct), "%.1f%%ile", percentile);
    const char *top[NCOLS] = {"", "", "", "latency (usec)", NULL, NULL, NULL, ""};
    const char *names[NCOLS] = {"size (B)", "count", "# iterations", pct,
                                "average",  "min",   "max",          "bandwidth (MB/s)"};
    table_rule(1);
    table_row(top);
    table_row(names);
    table_rule(0);
}

/* ------------------------------------------------------------------------------ main */

/* iterations (or warm-up iterations) at `bytes`: the option, else the default scaled down so
 * that large sizes do not take minutes */
static long scaled(long opt, long dflt, long floor, size_t bytes)
{
    if (opt >= 0)
        return opt;
    if (bytes <= SCALE_ABOVE)
        return dflt;
    double n = (double)dflt * SCALE_ABOVE / (double)bytes;
    return n < floor ? floor : (long)n;
}

/* inputs and buffers of one size, and the persistent request of -p */
static void prepare_size(run_t *r, size_t count, size_t span, ucoll_request_t **req)
{
    ucoll_status_t st;
    /* inputs and the state the check of rank 0's exscan relies on */
    fill_input(r->dtype, r->op, r->rank, r->input, span / r->esize);
    memcpy(r->sendbuf, r->input, span);
    r->span = span;
    memset(r->recvbuf, SENTINEL, span);
    set_counts(r, count);
    if (r->o->persistent && (st = make_persistent(r, count, req)) != UCOLL_OK)
        die(r, "creating the persistent request", st);
}

/* elements of sendbuf this rank's call reads: what -C written writes again. In place,
 * reset_buffers already wrote the input the call reads from recvbuf (and bcast's root's) */
static size_t sendbuf_read(const run_t *r, size_t count)
{
    const ucoll_coll_t c = r->coll;
    const int at_root = r->rank == r->o->root;
    if (c == UCOLL_COLL_BARRIER || c == UCOLL_COLL_BCAST)
        return 0;
    if (c == UCOLL_COLL_GATHER || c == UCOLL_COLL_GATHERV) /* in place at the root only */
        return r->o->in_place && at_root ? 0 : count;
    if (c == UCOLL_COLL_ALLGATHER || c == UCOLL_COLL_ALLGATHERV)
        return r->o->in_place ? 0 : count;
    if (c == UCOLL_COLL_SCATTER || c == UCOLL_COLL_SCATTERV) /* the root's N blocks */
        return at_root ? r->span / r->esize : 0;
    return r->o->in_place ? 0 : r->span / r->esize;
}

/* -C: the caches as the option asks, before iteration `it`. Plain loops, not memcpy or
 * memset: a C library may store large blocks past the caches (non-temporal stores) */
static void set_caches(run_t *r, size_t count, long it)
{
    volatile unsigned char *other = r->other;
    switch (r->o->cache_state) {
    case CACHE_WRITTEN: /* the same values again */
        fill_input(r->dtype, r->op, r->rank, r->sendbuf, sendbuf_read(r, count));
        break;
    case CACHE_DIRTY: /* a store in every line makes it dirty */
        for (size_t i = 0; i < r->o->cache_bytes; i += 64)
            other[i] = (unsigned char)it;
        break;
    case CACHE_CLEAN: /* a volatile read is never left out */
        for (size_t i = 0; i < r->o->cache_bytes; i += 64)
            (void)other[i];
        break;
    }
}

/* iteration `it` of alg on r->comm: a barrier, then the timed collective; the first one's
 * result checked, agreed by every rank */
static double time_one(run_t *r, ucoll_request_t *req, const char *alg, size_t bytes, size_t count,
                       long it)
{
    const opts_t *o = r->o;
    ucoll_status_t st;
    if (o->in_place || r->coll == UCOLL_COLL_BCAST)
        reset_buffers(r, count);
    set_caches(r, count, it);
    if ((st = ucoll_barrier(r->comm)) != UCOLL_OK)
        die(r, "ucoll_barrier", st);
    double t0 = now_us();
    if (req != NULL) {
        st = ucoll_start(req);
        if (st == UCOLL_OK)
            st = ucoll_wait(req);
    } else {
        st = run_blocking(r, count);
    }
    double t1 = now_us();
    if (st != UCOLL_OK)
        die(r, coll_names[o->coll], st);
    if (it == 0) {
        int32_t bad = check_result(r, alg, count), any_bad = 0;
        if ((st = ucoll_allreduce(r->comm, &bad, &any_bad, 1, UCOLL_INT32, UCOLL_OP_MAX)))
            die(r, "ucoll_allreduce (result check)", st);
        if (any_bad) {
            if (r->rank == 0)
                fprintf(stderr,
                        "ucoll_perf: %s algorithm %s gave a wrong result at %zu bytes: "
                        "no timings reported\n",
                        coll_names[o->coll], alg, bytes);
            exit(1);
        }
    }
    return t1 - t0;
}

/* an iteration's latency is that of its slowest rank: t's maximum over ranks, printed */
static void report(run_t *r, const char *alg, size_t count, long iters, double *t)
{
    ucoll_status_t st;
    if ((st = ucoll_reduce(r->comm, t, r->tmax, (size_t)iters, UCOLL_FLOAT64, UCOLL_OP_MAX, 0)) !=
        UCOLL_OK)
        die(r, "ucoll_reduce (gathering the times)", st);
    if (r->rank != 0)
        return;
    const opts_t *o = r->o;
    stats_t s = statistics(r->tmax, iters, o->percentile);
    const size_t shown = count * r->esize;
    const double bw = s.avg > 0 ? (double)shown / s.avg : 0; /* bytes/us = MB/s */
    if (o->csv)
        printf("%s,%zu,%zu,%ld,%.3f,%.3f,%.3f,%.3f,%.2f\n", alg, shown, count, iters, s.pct, s.avg,
               s.min, s.max, bw);
    else
        printf("| %12zu | %10zu | %12ld | %10.3f | %9.3f | %9.3f | %9.3f | %16.2f |\n", shown,
               count, iters, s.pct, s.avg, s.min, s.max, bw);
    fflush(stdout);
}

static void run_size(run_t *r, const char *alg, size_t bytes)
{
    const opts_t *o = r->o;
    const size_t count = r->coll == UCOLL_COLL_BARRIER ? 0 : bytes / r->esize;
    /* a block collective's buffers hold N blocks: its iterations scale with all of them */
    const size_t span = is_block_coll(r->coll) ? (size_t)r->size * bytes : bytes;
    const long iters = scaled(o->iters, DEFAULT_ITERS, MIN_SCALED_ITERS, span);
    const long warmup = scaled(o->warmup, DEFAULT_WARMUP, 2, span);
    ucoll_request_t *req = NULL;
    ucoll_status_t st;

    prepare_size(r, count, span, &req);
    for (long it = 0; it < warmup + iters; it++) {
        const double t = time_one(r, req, alg, bytes, count, it);
        if (it >= warmup)
            r->t[it - warmup] = t;
    }
    if (req != NULL && (st = ucoll_request_free(req)) != UCOLL_OK)
        die(r, "ucoll_request_free", st);
    report(r, alg, count, iters, r->t);
}

/* -I: every algorithm on a communicator of its own (comms[a]), their iterations interleaved,
 * so that a change of the machine's speed hits all alike */
static void run_size_interleaved(run_t *r, ucoll_comm_t **comms, size_t bytes, double *times,
                                 long max_iters)
{
    const opts_t *o = r->o;
    const size_t count = r->coll == UCOLL_COLL_BARRIER ? 0 : bytes / r->esize;
    const size_t span = is_block_coll(r->coll) ? (size_t)r->size * bytes : bytes;
    const long iters = scaled(o->iters, DEFAULT_ITERS, MIN_SCALED_ITERS, span);
    const long warmup = scaled(o->warmup, DEFAULT_WARMUP, 2, span);
    ucoll_comm_t *world = r->comm;

    prepare_size(r, count, span, NULL);
    /* a fresh order every iteration, the same on every rank: a rotation would put each
     * algorithm after the same one, and a slow one leaves its successor's ranks out of step */
    int order[MAX_ALGS];
    uint64_t seed = 0x9e3779b97f4a7c15u ^ (uint64_t)bytes;
    for (long it = 0; it < warmup + iters; it++) {
        for (int j = 0; j < o->nalgs; j++)
            order[j] = j;
        for (int j = o->nalgs - 1; j > 0; j--) { /* Fisher-Yates with a 64-bit LCG */
            seed = seed * 6364136223846793005u + 1442695040888963407u;
            const int k = (int)((seed >> 33) % (uint64_t)(j + 1)), x = order[j];
            order[j] = order[k];
            order[k] = x;
        }
        for (int j = 0; j < o->nalgs; j++) {
            const int a = order[j];
            r->comm = comms[a];
            const double t = time_one(r, NULL, o->algs[a], bytes, count, it);
            if (it >= warmup)
                times[(size_t)a * (size_t)max_iters + (size_t)(it - warmup)] = t;
        }
    }
    for (int a = 0; a < o->nalgs; a++) {
        r->comm = comms[a];
        report(r, o->algs[a], count, iters, &times[(size_t)a * (size_t)max_iters]);
    }
    r->comm = world;
}

int main(int argc, char **argv)
{
    opts_t o;
    parse_options(argc, argv, &o);

    run_t r;
    memset(&r, 0, sizeof(r));
    r.o = &o;
    r.coll = coll_ids[o.coll];
    r.dtype = dtypes[o.dtype].dtype;
    r.op = ops[o.op].op;
    r.call_op = r.op;
    r.esize = dtypes[o.dtype].size;

    ucoll_thread_level_t provided = UCOLL_THREAD_SINGLE;
    ucoll_status_t st = o.thread_level == 0
                            ? ucoll_init(&r.comm)
                            : ucoll_init_thread(NULL, (ucoll_thread_level_t)(o.thread_level - 1),
                                                &provided, &r.comm);
    if (st == UCOLL_OK && o.thread_level > 0 && (int)provided != o.thread_level - 1) {
        fprintf(stderr, "ucoll_perf: -t: thread level %d provided, %d asked for\n", (int)provided,
                o.thread_level - 1);
        ucoll_finalize(r.comm);
        return 1;
    }
    if (st != UCOLL_OK) {
        fprintf(stderr, "ucoll_perf: ucoll_init: %s\n", ucoll_strerror(st));
        return 1;
    }
    r.rank = ucoll_comm_rank(r.comm);
    r.size = ucoll_comm_size(r.comm);
    if (o.spin_ns > 0) {
        static spin_op_t spin;
        spin.dti = o.dtype;
        spin.op = r.op;
        spin.ns = o.spin_ns;
        if (ucoll_op_create(spin_op_fn, &spin, 1, &r.call_op) != UCOLL_OK) {
            fprintf(stderr, "ucoll_perf: ucoll_op_create failed\n");
            ucoll_finalize(r.comm);
            return 1;
        }
    }
    if ((r.coll == UCOLL_COLL_REDUCE || r.coll == UCOLL_COLL_BCAST || is_rooted_block(r.coll)) &&
        o.root >= r.size) {
        if (r.rank == 0)
            fprintf(stderr, "ucoll_perf: -r %d: there are only %d ranks\n", o.root, r.size);
        ucoll_finalize(r.comm);
        return 2;
    }
    for (int a = 0; a < o.nalgs; a++)
        if (ucoll_set_algorithm(r.comm, r.coll, o.algs[a]) != UCOLL_OK) {
            if (r.rank == 0)
                fprintf(stderr,
                        "ucoll_perf: -a: '%s' is not an algorithm of %s (see `ucoll_info"
                        " -a`)\n",
                        o.algs[a], coll_names[o.coll]);
            ucoll_finalize(r.comm);
            return 2;
        }

    /* the sizes, and buffers for the largest */
    size_t sizes[64];
    int nsizes = 0;
    if (r.coll == UCOLL_COLL_BARRIER) {
        sizes[nsizes++] = 0;
    } else {
        for (size_t b = o.min_bytes; b <= o.max_bytes && nsizes < 64; b *= o.factor) {
            size_t rounded = b / r.esize * r.esize;
            if (rounded == 0)
                rounded = r.esize; /* at least one element */
            if (nsizes == 0 || sizes[nsizes - 1] != rounded)
                sizes[nsizes++] = rounded;
            if (b > SIZE_MAX / o.factor)
                break;
        }
    }
    /* a block collective's buffers hold N blocks */
    const size_t nblocks = is_block_coll(r.coll) ? (size_t)r.size : 1;
    if (sizes[nsizes - 1] > SIZE_MAX / nblocks) {
        if (r.rank == 0)
            fprintf(stderr, "ucoll_perf: -e: %d blocks of %zu bytes do not fit in memory\n", r.size,
                    sizes[nsizes - 1]);
        ucoll_finalize(r.comm);
        return 2;
    }
    const size_t max_bytes = sizes[nsizes - 1] > 0 ? nblocks * sizes[nsizes - 1] : 1;
    long max_iters = 1;
    for (int i = 0; i < nsizes; i++) {
        long n = scaled(o.iters, DEFAULT_ITERS, MIN_SCALED_ITERS, nblocks * sizes[i]);
        max_iters = n > max_iters ? n : max_iters;
    }
    r.counts = calloc((size_t)r.size, sizeof(size_t));
    r.displs = calloc((size_t)r.size, sizeof(size_t));
    if (o.mem_alloc) {
        void *sb = NULL, *rb = NULL;
        ucoll_status_t st;
        if ((st = ucoll_mem_alloc(max_bytes, &sb)) != UCOLL_OK ||
            (st = ucoll_mem_alloc(max_bytes, &rb)) != UCOLL_OK) {
            fprintf(stderr, "ucoll_perf: rank %d: ucoll_mem_alloc: %s\n", r.rank,
                    ucoll_strerror(st));
            return 1;
        }
        r.sendbuf = sb;
        r.recvbuf = rb;
    } else {
        r.sendbuf = malloc(max_bytes);
        r.recvbuf = malloc(max_bytes);
    }
    if (o.cache_state == CACHE_DIRTY || o.cache_state == CACHE_CLEAN) {
        if ((r.other = malloc(o.cache_bytes)) == NULL) {
            fprintf(stderr, "ucoll_perf: rank %d: out of memory for -C's %zu bytes\n", r.rank,
                    o.cache_bytes);
            return 1;
        }
        memset(r.other, 1, o.cache_bytes); /* its pages exist before any timed call */
    }
    r.input = malloc(max_bytes);
    r.expect = malloc(max_bytes);
    r.tmp = malloc(max_bytes);
    r.t = calloc((size_t)max_iters, sizeof(double));
    r.tmax = calloc((size_t)max_iters, sizeof(double));
    if (!r.sendbuf || !r.recvbuf || !r.input || !r.expect || !r.tmp || !r.t || !r.tmax ||
        !r.counts || !r.displs) {
        fprintf(stderr, "ucoll_perf: rank %d: out of memory for %zu-byte buffers\n", r.rank,
                max_bytes);
        return 1;
    }

    if (r.rank == 0 && o.csv)
        printf("algorithm,size,count,iterations,p%g_us,avg_us,min_us,max_us,bw_mbs\n",
               o.percentile);
    if (o.interleave) {
        ucoll_comm_t *comms[MAX_ALGS];
        double *times = calloc((size_t)o.nalgs * (size_t)max_iters, sizeof(double));
        if (times == NULL) {
            fprintf(stderr, "ucoll_perf: rank %d: out of memory for the times\n", r.rank);
            return 1;
        }
        for (int a = 0; a < o.nalgs; a++)
            if ((st = ucoll_comm_split(r.comm, 0, r.rank, &comms[a])) != UCOLL_OK ||
                (st = ucoll_set_algorithm(comms[a], r.coll, o.algs[a])) != UCOLL_OK)
                die(&r, "a communicator per algorithm (-I)", st);
        if (r.rank == 0 && !o.csv) {
            print_box(&r, "interleaved, one row per algorithm and size");
            print_table_head(o.percentile);
        }
        for (int i = 0; i < nsizes; i++)
            run_size_interleaved(&r, comms, sizes[i], times, max_iters);
        if (r.rank == 0 && !o.csv)
            table_rule(0);
        for (int a = 0; a < o.nalgs; a++)
            if ((st = ucoll_comm_free(comms[a])) != UCOLL_OK)
                die(&r, "ucoll_comm_free", st);
        free(times);
    }
    for (int a = 0; !o.interleave && a < o.nalgs; a++) {
        ucoll_set_algorithm(r.comm, r.coll, o.algs[a]); /* checked above */
        if (r.rank == 0 && !o.csv) {
            print_box(&r, o.algs[a]);
            print_table_head(o.percentile);
        }
        for (int i = 0; i < nsizes; i++)
            run_size(&r, o.algs[a], sizes[i]);
        if (r.rank == 0 && !o.csv) {
            table_rule(0);
            if (a + 1 < o.nalgs)
                putchar('\n');
        }
    }

    if (o.mem_alloc) {
        ucoll_mem_free(r.sendbuf);
        ucoll_mem_free(r.recvbuf);
    } else {
        free(r.sendbuf);
        free(r.recvbuf);
    }
    free(r.other);
    free(r.input);
    free(r.expect);
    free(r.tmp);
    free(r.t);
    free(r.tmax);
    free(r.counts);
    free(r.displs);
    if ((st = ucoll_finalize(r.comm)) != UCOLL_OK) {
        fprintf(stderr, "ucoll_perf: rank %d: ucoll_finalize: %s\n", r.rank, ucoll_strerror(st));
        return 1;
    }
    return 0;
}
