/* UCOLL_* environment variables: the table (for ucoll_info and the README) and their reading. */
#include "ucoll_int.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const config_var_t vars[] = {
    {"UCOLL_EXSCAN_ALG", "auto", "exclusive scan algorithm (see ucoll_info -a)"},
    {"UCOLL_SCAN_ALG", "auto", "inclusive scan algorithm"},
    {"UCOLL_REDUCE_ALG", "auto", "reduce algorithm"},
    {"UCOLL_ALLREDUCE_ALG", "auto", "allreduce algorithm"},
    {"UCOLL_BCAST_ALG", "auto", "bcast algorithm"},
    {"UCOLL_BARRIER_ALG", "auto", "barrier algorithm"},
    {"UCOLL_ALLGATHER_ALG", "auto", "allgather algorithm"},
    {"UCOLL_ALLGATHERV_ALG", "auto", "allgatherv algorithm"},
    {"UCOLL_REDUCE_SCATTER_BLOCK_ALG", "auto", "reduce_scatter_block algorithm"},
    {"UCOLL_REDUCE_SCATTER_ALG", "auto", "reduce_scatter algorithm"},
    {"UCOLL_ALLTOALL_ALG", "auto", "alltoall algorithm"},
    {"UCOLL_ALLTOALLV_ALG", "auto", "alltoallv algorithm"},
    {"UCOLL_GATHER_ALG", "auto", "gather algorithm"},
    {"UCOLL_GATHERV_ALG", "auto", "gatherv algorithm"},
    {"UCOLL_SCATTER_ALG", "auto", "scatter algorithm"},
    {"UCOLL_SCATTERV_ALG", "auto", "scatterv algorithm"},
    {"UCOLL_TIMEOUT", "unset (wait forever)",
     "seconds a collective may wait inside ucoll without progress (no round completing) before "
     "UCOLL_ERR_TIMED_OUT; time the caller spends outside ucoll does not count; inf = unset"},
    {"UCOLL_SEGMENT_SIZE", "262144",
     "bytes per message segment: longer messages go as segments, and the (+) of a received "
     "segment overlaps the transfer of the next; 0 = unsegmented. Equal on every rank"},
    {"UCOLL_ALPHA_US", "measured at init",
     "latency per round (us) in auto's cost model; set it (equal on all ranks) to skip the "
     "measurement"},
    {"UCOLL_BETA_NS_PER_BYTE", "measured at init",
     "transfer time per byte (ns) in auto's cost model"},
    {"UCOLL_GAMMA_NS_PER_BYTE", "measured at init",
     "time per byte (ns) of one (+) of every predefined op and dtype in auto's cost model (user "
     "ops: ucoll_op_set_cost). With UCOLL_ALPHA_US and UCOLL_BETA_NS_PER_BYTE also set, init "
     "runs no collective"},
    {"UCOLL_REDUCE_RHRD_MIN", "0 (the cost model decides)",
     "override of auto reduce's cost model: rhrd (commutative ops) from this many bytes, "
     "binomial below; 0 = no override"},
    {"UCOLL_ALLREDUCE_RHRD_MIN", "0 (the cost model decides)",
     "override of auto allreduce's cost model: rhrd (commutative ops) from this many bytes, "
     "recursive-doubling below; 0 = no override"},
    {"UCOLL_FAILURE_DETECTION", "auto",
     "how a dead peer is noticed: auto = peers on this host by probing their process id "
     "(keeps shared memory), others by UCX peer error handling; ucx = UCX peer error handling "
     "for all (UCX 1.13 then uses TCP even on one host); timeout = only UCOLL_TIMEOUT"},
    {"UCOLL_SHM", "1",
     "1: messages of at most 4096 bytes between ranks of one host go through ucoll's own "
     "shared-memory rings (with UCOLL_FAILURE_DETECTION=auto); 0: through UCX"},
    {"UCOLL_SINGLE_COPY_MIN", "auto",
     "bytes: messages of at least this size between ranks of one host go by single "
     "copy (the receiver reads the sender's buffer with process_vm_readv) instead of UCX's two "
     "copies, if every rank may read its peers (else off, said once); 0 = off; auto = 131072 "
     "where no host has more ranks than CPUs, else off; regions (buffers from ucoll_mem_alloc) "
     "= 8192, 131072 where a host has more ranks than CPUs. Needs UCOLL_SHM=1. Equal on every "
     "rank"},
    {"UCOLL_SINGLE_COPY_MAX", "4194304 with UCOLL_SINGLE_COPY_MIN=auto, else 0",
     "bytes: the largest message that goes by single copy (whole, not in segments); 0 = no "
     "bound. Equal on every rank"},
    {"UCOLL_STATS", "0",
     "1: ucoll_finalize prints one line per rank on stderr: endpoints created, peers' rings "
     "mapped, peer addresses fetched from PMIx, messages sent through UCX and through the "
     "rings"},
    {"UCOLL_PRINT_COST", "0",
     "1: rank 0 prints the cost model auto uses, as agreed at init (alpha, beta, and gamma of "
     "sum on float32 and float64), to stderr"},
    {"UCOLL_PRINT_ALG", "0",
     "1: rank 0 of each communicator prints, to stderr, every choice auto makes anew (the "
     "collective, its elements and bytes, the ranks, the algorithm); a repeated call reuses the "
     "last choice and prints nothing"},
    {"UCOLL_CHECK", "0",
     "1: every collective first compares its kind, count, dtype, op, root and algorithm across "
     "the ranks (one small allreduce); a mismatch is UCOLL_ERR_MISMATCH on every rank with a "
     "message naming the field, and nothing of the collective is sent. 0: no check, no cost. "
     "Equal on every rank"},
    {"UCOLL_PROGRESS_YIELD", "auto",
     "auto: yield the CPU when idle if ranks outnumber cores (else after 1000 idle polls); "
     "always; never"},
    {"UCOLL_STORE", "unset (PMIx)",
     "HOST:PORT: ucoll_init starts through the store instead of PMIx (rank 0 serves it, the "
     "others connect; waits bounded by UCOLL_TIMEOUT, unset or inf: 60 s); needs UCOLL_RANK and "
     "UCOLL_SIZE"},
    {"UCOLL_RANK", "unset", "with UCOLL_STORE: this process's rank, 0..UCOLL_SIZE-1"},
    {"UCOLL_SIZE", "unset", "with UCOLL_STORE: the number of ranks, the same on every rank"},
    {"UCOLL_WAIT_MODE", "poll",
     "poll: blocking calls poll (yielding as UCOLL_PROGRESS_YIELD says); sleep: after a few "
     "idle polls they sleep on ucoll_event_fd's fd (ring messages within 1 ms), using almost "
     "no CPU while they wait, at the cost of wake-up latency"},
};

const config_var_t *config_vars(size_t *n)
{
    *n = sizeof(vars) / sizeof(vars[0]);
    return vars;
}

/* a number of seconds or similar: digits as strtod reads them, nothing after, not NaN, not
 * negative, finite unless inf_ok (then "inf" means no limit); 0 or -1 (message printed) */
static int parse_double(const char *name, const char *v, int inf_ok, double *out)
{
    char *end;
    errno = 0;
    const double x = strtod(v, &end);
    const char *why = NULL;
    if (end == v || *end != '\0' || isspace((unsigned char)v[0]))
        why = "not a number";
    else if (isnan(x))
        why = "not a number (NaN)";
    else if (x < 0)
        why = "negative";
    else if (isinf(x) && errno == ERANGE)
        why = "too large"; /* overflowed; a tiny number that underflowed is fine */
    else if (isinf(x) && !inf_ok)
        why = "infinite";
    if (why != NULL) {
        fprintf(stderr, "ucoll: %s=%s is %s: give a number >= 0%s\n", name, v, why,
                inf_ok ? " (or inf)" : "");
        return -1;
    }
    *out = x;
    return 0;
}

/* a count of bytes: decimal digits only (no sign, no space, no suffix), within size_t */
static int parse_bytes(const char *name, const char *v, size_t *out)
{
    const char *why = NULL;
    unsigned long long x = 0;
    for (const char *c = v; *c != '\0' && why == NULL; c++) {
        if (*c < '0' || *c > '9')
            why = "not a number of bytes (decimal digits only)";
        else if (x > (ULLONG_MAX - (unsigned)(*c - '0')) / 10)
            why = "too large";
        else
            x = x * 10 + (unsigned)(*c - '0');
    }
    if (why == NULL && x > SIZE_MAX)
        why = "too large";
    if (why != NULL) {
        fprintf(stderr, "ucoll: %s=%s is %s\n", name, v, why);
        return -1;
    }
    *out = (size_t)x;
    return 0;
}

/* an on/off variable: "0" or "1" sets *on, unset or empty leaves it; anything else is said
 * and refused (-1) */
static int read_switch(const char *name, int *on)
{
    const char *v = getenv(name);
    if (v == NULL || *v == '\0')
        return 0;
    if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0) {
        fprintf(stderr, "ucoll: %s=%s: use 1 (on) or 0 (off)\n", name, v);
        return -1;
    }
    *on = v[0] == '1';
    return 0;
}

ucoll_status_t config_read(ucoll_config_t *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    for (int c = 0; c < UCOLL_NCOLLS; c++)
        cfg->alg_env[c] = getenv(vars[c].name);

    const char *t = getenv("UCOLL_TIMEOUT");
    if (t != NULL && *t != '\0') {
        double v;
        if (parse_double("UCOLL_TIMEOUT", t, 1, &v) != 0)
            return UCOLL_ERR_INVALID_ARG;
        cfg->timeout_s = isinf(v) ? 0 : v; /* inf: no limit, as unset */
    }
    cfg->alpha_us = cfg->beta_ns = cfg->gamma_ns = -1;
    const char *names[3] = {"UCOLL_ALPHA_US", "UCOLL_BETA_NS_PER_BYTE", "UCOLL_GAMMA_NS_PER_BYTE"};
    double *dst[3] = {&cfg->alpha_us, &cfg->beta_ns, &cfg->gamma_ns};
    for (int i = 0; i < 3; i++) {
        const char *v = getenv(names[i]);
        if (v == NULL || *v == '\0')
            continue;
        if (parse_double(names[i], v, 0, dst[i]) != 0)
            return UCOLL_ERR_INVALID_ARG;
    }
    cfg->segment_size = 262144;
    cfg->single_copy_auto = 1;
    cfg->single_copy_regions = 0;
    cfg->single_copy_min = UCOLL_SINGLE_COPY_AUTO_MIN;
    const char *sc_min = getenv("UCOLL_SINGLE_COPY_MIN");
    if (sc_min != NULL && strcmp(sc_min, "regions") == 0) {
        cfg->single_copy_auto = 0;
        cfg->single_copy_regions = 1;
        cfg->single_copy_min = UCOLL_SINGLE_COPY_REGIONS_MIN;
    } else if (sc_min != NULL && *sc_min != '\0' && strcmp(sc_min, "auto") != 0) {
        if (parse_bytes("UCOLL_SINGLE_COPY_MIN", sc_min, &cfg->single_copy_min) != 0)
            return UCOLL_ERR_INVALID_ARG;
        /* the two largest sizes stand for auto and regions in agree_settings */
        if ((uint64_t)cfg->single_copy_min >= UINT64_MAX - 1) {
            fprintf(stderr, "ucoll: UCOLL_SINGLE_COPY_MIN=%s: too large (use 0 for off)\n", sc_min);
            return UCOLL_ERR_INVALID_ARG;
        }
        cfg->single_copy_auto = 0;
    }
    cfg->single_copy_max = cfg->single_copy_auto ? UCOLL_SINGLE_COPY_AUTO_MAX : 0;
    /* 0: the cost model decides (cost_select); a value the user sets forces the threshold */
    cfg->reduce_rhrd_min = 0;
    cfg->allreduce_rhrd_min = 0;
    const char *byte_vars[4] = {"UCOLL_SEGMENT_SIZE", "UCOLL_REDUCE_RHRD_MIN",
                                "UCOLL_ALLREDUCE_RHRD_MIN", "UCOLL_SINGLE_COPY_MAX"};
    size_t *byte_dst[4] = {&cfg->segment_size, &cfg->reduce_rhrd_min, &cfg->allreduce_rhrd_min,
                           &cfg->single_copy_max};
    for (int i = 0; i < 4; i++) {
        const char *v = getenv(byte_vars[i]);
        if (v == NULL || *v == '\0')
            continue;
        if (parse_bytes(byte_vars[i], v, byte_dst[i]) != 0)
            return UCOLL_ERR_INVALID_ARG;
    }
    if (cfg->single_copy_min > 0 && cfg->single_copy_max > 0 &&
        cfg->single_copy_max < cfg->single_copy_min) {
        fprintf(stderr,
                "ucoll: UCOLL_SINGLE_COPY_MAX=%zu is below UCOLL_SINGLE_COPY_MIN=%zu: no message "
                "could go by single copy (UCOLL_SINGLE_COPY_MIN=0 turns it off)\n",
                cfg->single_copy_max, cfg->single_copy_min);
        return UCOLL_ERR_INVALID_ARG;
    }
    cfg->failure = TP_FAILURE_AUTO;
    const char *fd = getenv("UCOLL_FAILURE_DETECTION");
    if (fd != NULL && *fd != '\0') {
        if (strcmp(fd, "ucx") == 0) {
            cfg->failure = TP_FAILURE_UCX;
        } else if (strcmp(fd, "timeout") == 0) {
            cfg->failure = TP_FAILURE_TIMEOUT;
        } else if (strcmp(fd, "auto") != 0) {
            fprintf(stderr, "ucoll: UCOLL_FAILURE_DETECTION=%s: use auto, ucx or timeout\n", fd);
            return UCOLL_ERR_INVALID_ARG;
        }
    }
    cfg->shm = 1;
    if (read_switch("UCOLL_SHM", &cfg->shm) != 0 || read_switch("UCOLL_STATS", &cfg->stats) != 0 ||
        read_switch("UCOLL_PRINT_COST", &cfg->print_cost) != 0 ||
        read_switch("UCOLL_PRINT_ALG", &cfg->print_alg) != 0 ||
        read_switch("UCOLL_CHECK", &cfg->check) != 0)
        return UCOLL_ERR_INVALID_ARG;
    const char *y = getenv("UCOLL_PROGRESS_YIELD");
    cfg->yield = TP_YIELD_AUTO;
    if (y != NULL && *y != '\0') {
        if (strcmp(y, "always") == 0) {
            cfg->yield = TP_YIELD_ALWAYS;
        } else if (strcmp(y, "never") == 0) {
            cfg->yield = TP_YIELD_NEVER;
        } else if (strcmp(y, "auto") != 0) {
            fprintf(stderr, "ucoll: UCOLL_PROGRESS_YIELD=%s: use auto, always or never\n", y);
            return UCOLL_ERR_INVALID_ARG;
        }
    }
    const char *w = getenv("UCOLL_WAIT_MODE");
    cfg->wait_sleep = 0;
    if (w != NULL && *w != '\0') {
        if (strcmp(w, "sleep") == 0) {
            cfg->wait_sleep = 1;
        } else if (strcmp(w, "poll") != 0) {
            fprintf(stderr, "ucoll: UCOLL_WAIT_MODE=%s: use poll or sleep\n", w);
            return UCOLL_ERR_INVALID_ARG;
        }
    }
    /* single copy's descriptors travel in the rings: without them auto and regions mean off */
    if ((cfg->single_copy_auto || cfg->single_copy_regions) &&
        (!cfg->shm || cfg->failure != TP_FAILURE_AUTO))
        cfg->single_copy_min = 0;
    return UCOLL_OK;
}
