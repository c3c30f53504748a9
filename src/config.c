/* UCOLL_* environment variables: the table (for ucoll_info and the README) and their reading. */
#include "ucoll_int.h"

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
    {"UCOLL_TIMEOUT", "unset (wait forever)",
     "seconds a blocking call or ucoll_wait may take before UCOLL_ERR_TIMED_OUT"},
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
    {"UCOLL_REDUCE_RHRD_MIN", "32768",
     "auto reduce: rhrd (commutative ops) from this many bytes, binomial below"},
    {"UCOLL_ALLREDUCE_RHRD_MIN", "32768",
     "auto allreduce: rhrd (commutative ops) from this many bytes, recursive-doubling below"},
    {"UCOLL_FAILURE_DETECTION", "auto",
     "how a dead peer is noticed: auto = peers on this host by probing their process id "
     "(keeps shared memory), others by UCX peer error handling; ucx = UCX peer error handling "
     "for all (UCX 1.13 then uses TCP even on one host); timeout = only UCOLL_TIMEOUT"},
    {"UCOLL_SHM", "1",
     "1: messages of at most 4096 bytes between ranks of one host go through ucoll's own "
     "shared-memory rings (with UCOLL_FAILURE_DETECTION=auto); 0: through UCX"},
    {"UCOLL_PROGRESS_YIELD", "auto",
     "auto: yield the CPU when idle if ranks outnumber cores (else after 1000 idle polls); "
     "always; never"},
};

const config_var_t *config_vars(size_t *n)
{
    *n = sizeof(vars) / sizeof(vars[0]);
    return vars;
}

ucoll_status_t config_read(ucoll_config_t *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    for (int c = 0; c < UCOLL_NCOLLS; c++)
        cfg->alg_env[c] = getenv(vars[c].name);

    const char *t = getenv("UCOLL_TIMEOUT");
    if (t != NULL && *t != '\0') {
        char *end;
        double v = strtod(t, &end);
        if (*end != '\0' || v < 0) {
            fprintf(stderr, "ucoll: UCOLL_TIMEOUT=%s is not a number of seconds >= 0\n", t);
            return UCOLL_ERR_INVALID_ARG;
        }
        cfg->timeout_s = v;
    }
    cfg->alpha_us = cfg->beta_ns = cfg->gamma_ns = -1;
    const char *names[3] = {"UCOLL_ALPHA_US", "UCOLL_BETA_NS_PER_BYTE", "UCOLL_GAMMA_NS_PER_BYTE"};
    double *dst[3] = {&cfg->alpha_us, &cfg->beta_ns, &cfg->gamma_ns};
    for (int i = 0; i < 3; i++) {
        const char *v = getenv(names[i]);
        if (v == NULL || *v == '\0')
            continue;
        char *end;
        double x = strtod(v, &end);
        if (*end != '\0' || x < 0) {
            fprintf(stderr, "ucoll: %s=%s is not a number >= 0\n", names[i], v);
            return UCOLL_ERR_INVALID_ARG;
        }
        *dst[i] = x;
    }
    cfg->segment_size = 262144;
    cfg->reduce_rhrd_min = 32768;
    cfg->allreduce_rhrd_min = 32768;
    const char *byte_vars[3] = {"UCOLL_SEGMENT_SIZE", "UCOLL_REDUCE_RHRD_MIN",
                                "UCOLL_ALLREDUCE_RHRD_MIN"};
    size_t *byte_dst[3] = {&cfg->segment_size, &cfg->reduce_rhrd_min, &cfg->allreduce_rhrd_min};
    for (int i = 0; i < 3; i++) {
        const char *v = getenv(byte_vars[i]);
        if (v == NULL || *v == '\0')
            continue;
        char *end;
        unsigned long long x = strtoull(v, &end, 10);
        if (*end != '\0' || v[0] == '-') {
            fprintf(stderr, "ucoll: %s=%s is not a number of bytes\n", byte_vars[i], v);
            return UCOLL_ERR_INVALID_ARG;
        }
        *byte_dst[i] = (size_t)x;
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
    const char *shm = getenv("UCOLL_SHM");
    if (shm != NULL && *shm != '\0') {
        if (strcmp(shm, "0") != 0 && strcmp(shm, "1") != 0) {
            fprintf(stderr, "ucoll: UCOLL_SHM=%s: use 1 (on) or 0 (off)\n", shm);
            return UCOLL_ERR_INVALID_ARG;
        }
        cfg->shm = shm[0] == '1';
    }
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
    return UCOLL_OK;
}
