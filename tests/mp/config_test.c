/*
 * tests/mp/config_test.c: UCOLL_* values that are not what their variable takes make
 * ucoll_init fail with UCOLL_ERR_INVALID_ARG and a message on stderr that names the variable
 * and the value. One process, no launcher: ucoll_init_oob with a 1-rank allgather (a copy), so
 * that init can be tried again after each refusal. Refused: NaN, infinity where no limit is
 * meant, negative numbers, trailing or leading junk, numbers that overflow (a 20-digit size),
 * an unknown algorithm name, a UCOLL_CHECK other than 0 or 1, a UCOLL_SINGLE_COPY_MAX below
 * UCOLL_SINGLE_COPY_MIN (stated, auto's or regions'). Accepted, and a collective runs with
 * them: UCOLL_SINGLE_COPY_MIN=regions, alone and with a one-size window, and at the end
 * UCOLL_TIMEOUT=inf with small sizes and UCOLL_CHECK=1.
 * Output: FAIL lines, then "config_test: C checks, F failed; verdict: PASS|FAIL".
 */
#include "mp_util.h"

#include <ucoll.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long n_checks, n_failed;

static int one_rank_allgather(const void *src, void *dst, size_t len, void *ctx)
{
    (void)ctx;
    memcpy(dst, src, len);
    return 0;
}

static const ucoll_oob_t oob = {one_rank_allgather, NULL, 0, 1};

/* ucoll_init_oob with stderr going to a file; its text (at most cap - 1 bytes) into msg */
static ucoll_status_t init_capturing(ucoll_comm_t **w, char *msg, size_t cap)
{
    mpt_capture_stderr_begin();
    ucoll_status_t st = ucoll_init_oob(&oob, w);
    mpt_capture_stderr_end(msg, cap, 0);
    return st;
}

static void refused(const char *var, const char *value)
{
    char msg[4096];
    ucoll_comm_t *w = NULL;
    setenv(var, value, 1);
    ucoll_status_t st = init_capturing(&w, msg, sizeof(msg));
    unsetenv(var);
    char want[256];
    snprintf(want, sizeof(want), "%s=%s", var, value);
    n_checks += 2;
    if (st != UCOLL_ERR_INVALID_ARG) {
        n_failed++;
        printf("FAIL: %s: ucoll_init_oob gave %d (%s), expected UCOLL_ERR_INVALID_ARG\n", want,
               (int)st, ucoll_strerror(st));
        if (st == UCOLL_OK)
            ucoll_finalize(w);
    }
    if (strstr(msg, want) == NULL) {
        n_failed++;
        printf("FAIL: %s: the message does not name it: \"%s\"\n", want, msg);
    }
}

/* ucoll_init_oob succeeds with the settings of the environment (what says which), and an
 * allreduce on the one rank gives its input back */
static void accepted(const char *what)
{
    char msg[4096];
    ucoll_comm_t *w = NULL;
    ucoll_status_t st = init_capturing(&w, msg, sizeof(msg));
    n_checks++;
    if (st != UCOLL_OK) {
        n_failed++;
        printf("FAIL: %s: ucoll_init_oob gave %d: \"%s\"\n", what, (int)st, msg);
        return;
    }
    int64_t in[3] = {1, 2, 3}, out[3] = {0, 0, 0};
    st = ucoll_allreduce(w, in, out, 3, UCOLL_INT64, UCOLL_OP_SUM);
    n_checks++;
    if (st != UCOLL_OK || out[0] != 1 || out[1] != 2 || out[2] != 3) {
        n_failed++;
        printf("FAIL: %s: allreduce: %d, %lld %lld %lld\n", what, (int)st, (long long)out[0],
               (long long)out[1], (long long)out[2]);
    }
    n_checks++;
    if ((st = ucoll_finalize(w)) != UCOLL_OK) {
        n_failed++;
        printf("FAIL: %s: finalize: %d\n", what, (int)st);
    }
}

int main(void)
{
    static const struct {
        const char *var, *value;
    } bad[] = {
        {"UCOLL_TIMEOUT", "nan"},
        {"UCOLL_TIMEOUT", "NaN"},
        {"UCOLL_TIMEOUT", "-1"},
        {"UCOLL_TIMEOUT", "2s"},
        {"UCOLL_TIMEOUT", "abc"},
        {"UCOLL_TIMEOUT", "1e400"},
        {"UCOLL_TIMEOUT", " 3"},
        {"UCOLL_ALPHA_US", "nan"},
        {"UCOLL_ALPHA_US", "inf"},
        {"UCOLL_ALPHA_US", "-1"},
        {"UCOLL_ALPHA_US", "5x"},
        {"UCOLL_BETA_NS_PER_BYTE", "-0.5"},
        {"UCOLL_BETA_NS_PER_BYTE", "infinity"},
        {"UCOLL_SEGMENT_SIZE", "99999999999999999999"},
        {"UCOLL_SEGMENT_SIZE", "18446744073709551616"},
        {"UCOLL_SEGMENT_SIZE", "-5"},
        {"UCOLL_SEGMENT_SIZE", " -5"},
        {"UCOLL_SEGMENT_SIZE", "12k"},
        {"UCOLL_SEGMENT_SIZE", "0x10"},
        {"UCOLL_SEGMENT_SIZE", "1.5"},
        {"UCOLL_REDUCE_RHRD_MIN", "99999999999999999999"},
        {"UCOLL_ALLREDUCE_RHRD_MIN", "-1"},
        {"UCOLL_EXSCAN_ALG", "no-such-algorithm"},
        {"UCOLL_BCAST_ALG", "no-such-algorithm"},
        {"UCOLL_CHECK", "2"},
        {"UCOLL_CHECK", "yes"},
        {"UCOLL_CHECK", "1 "},
        {"UCOLL_PRINT_ALG", "2"},
        {"UCOLL_PRINT_ALG", "yes"},
        {"UCOLL_SINGLE_COPY_MIN", "autox"},
        {"UCOLL_SINGLE_COPY_MIN", "regionsx"},
        /* the agreement's words for auto and regions: no size can be meant by them */
        {"UCOLL_SINGLE_COPY_MIN", "18446744073709551615"},
        {"UCOLL_SINGLE_COPY_MIN", "18446744073709551614"},
        {"UCOLL_SINGLE_COPY_MIN", "Regions"},
        {"UCOLL_SINGLE_COPY_MIN", "-1"},
        {"UCOLL_SINGLE_COPY_MAX", "1M"},
        /* below auto's smallest single-copy message (128 KiB): no message could take it */
        {"UCOLL_SINGLE_COPY_MAX", "4096"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        refused(bad[i].var, bad[i].value);
    /* a window with nothing in it */
    setenv("UCOLL_SINGLE_COPY_MIN", "300000", 1);
    refused("UCOLL_SINGLE_COPY_MAX", "200000");
    /* below regions' smallest single-copy message (8 KiB) */
    setenv("UCOLL_SINGLE_COPY_MIN", "regions", 1);
    refused("UCOLL_SINGLE_COPY_MAX", "8191");
    unsetenv("UCOLL_SINGLE_COPY_MIN");

    /* regions alone, and regions with a window of one size: init works, a collective runs */
    setenv("UCOLL_SINGLE_COPY_MIN", "regions", 1);
    accepted("UCOLL_SINGLE_COPY_MIN=regions");
    setenv("UCOLL_SINGLE_COPY_MAX", "8192", 1);
    accepted("UCOLL_SINGLE_COPY_MIN=regions UCOLL_SINGLE_COPY_MAX=8192");
    unsetenv("UCOLL_SINGLE_COPY_MAX");
    unsetenv("UCOLL_SINGLE_COPY_MIN");

    /* valid values: init works and a collective runs with them */
    setenv("UCOLL_TIMEOUT", "inf", 1);
    setenv("UCOLL_SEGMENT_SIZE", "1000", 1);
    setenv("UCOLL_ALPHA_US", "1.5", 1);
    setenv("UCOLL_BETA_NS_PER_BYTE", "0.25", 1);
    setenv("UCOLL_CHECK", "1", 1); /* one rank: nothing to compare, the call runs as usual */
    setenv("UCOLL_SINGLE_COPY_MIN", "auto", 1);
    setenv("UCOLL_SINGLE_COPY_MAX", "131072", 1); /* the window may be one size */
    accepted("valid values");
    printf("config_test: %ld checks, %ld failed; verdict: %s\n", n_checks, n_failed,
           n_failed == 0 ? "PASS" : "FAIL");
    return n_failed == 0 ? 0 : 1;
}
