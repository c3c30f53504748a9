/*
 * tests/mp/agree_test.c: ranks that disagree are told so instead of hanging or reading garbage.
 *
 * --init VAR EVEN ODD: ranks of even rank set VAR=EVEN, odd ranks VAR=ODD ("-": unset), then
 *   call ucoll_init. Every rank must get UCOLL_ERR_INVALID_ARG and a line on stderr naming VAR
 *   ("ucoll: VAR differs between ranks"). The launcher's timeout catches a hang.
 * --check: with UCOLL_CHECK=1, each field of a collective mismatching in turn (kind, count,
 *   dtype of another size and of the same size, op, root, algorithm), in the blocking,
 *   nonblocking and persistent forms: UCOLL_ERR_MISMATCH on every rank with a message naming
 *   the field, and then a matching allreduce gives the exact sum. The block collectives alike
 *   (count, dtype, op, root, algorithm, and allgatherv's and reduce_scatter's recvcounts). Matching
 * calls of every collective in every form give exact results.
 * --expect-size N: the job must have N ranks. Public API only. Exit 0 when every check holds.
 */
#include "mp_util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int launcher_rank(void)
{
    const char *r = getenv("PMIX_RANK");
    if (r == NULL)
        r = getenv("OMPI_COMM_WORLD_RANK");
    return r != NULL ? atoi(r) : 0;
}

static int init_mismatch(const char *var, const char *even, const char *odd)
{
    const int rank = launcher_rank();
    const char *mine = rank % 2 == 0 ? even : odd;
    mpt_tally.rank = rank;
    if (strcmp(mine, "-") == 0)
        unsetenv(var);
    else
        setenv(var, mine, 1);
    char text[8192], want[256];
    ucoll_comm_t *w = NULL;
    mpt_capture_stderr_begin();
    ucoll_status_t st = ucoll_init(&w);
    mpt_capture_stderr_end(text, sizeof(text), 1); /* the log keeps it */
    mpt_expect_st(st, UCOLL_ERR_INVALID_ARG, "init", var);
    snprintf(want, sizeof(want), "ucoll: %s differs between ranks", var);
    mpt_check(strstr(text, want) != NULL, "init message", "stderr lacks \"%s\"", want);
    if (st == UCOLL_OK)
        ucoll_finalize(w);
    printf("agree_test --init %s rank %d: %ld checks, %ld failed; verdict: %s\n", var, rank,
           mpt_tally.checks, mpt_tally.fails, mpt_tally.fails == 0 ? "PASS" : "FAIL");
    return mpt_tally.fails == 0 ? 0 : 1;
}

/* a matching allreduce after each case: the communicator must still work */
static void expect_usable(ucoll_comm_t *w, const char *name)
{
    const int rank = ucoll_comm_rank(w), p = ucoll_comm_size(w);
    int64_t in[3], out[3] = {0, 0, 0};
    for (int i = 0; i < 3; i++)
        in[i] = (int64_t)(rank + 1) * (i + 1);
    ucoll_status_t st = ucoll_allreduce(w, in, out, 3, UCOLL_INT64, UCOLL_OP_SUM);
    if (mpt_expect_st(st, UCOLL_OK, name, "the matching allreduce after it"))
        for (int i = 0; i < 3; i++)
            mpt_check(out[i] == (int64_t)p * (p + 1) / 2 * (i + 1), name,
                      "allreduce after it: [%d] = %lld", i, (long long)out[i]);
}

/* runs one call in a form to its end: its status */
static ucoll_status_t run_form(mpt_form_t form, ucoll_coll_t coll, ucoll_comm_t *w, const void *s,
                               void *r, size_t n, ucoll_dtype_t dt, ucoll_op_t op, int root)
{
    ucoll_request_t *req = NULL;
    ucoll_status_t st = mpt_call(form, coll, w, s, r, n, dt, op, root, &req);
    if (form == MPT_BLOCKING || st != UCOLL_OK)
        return st;
    if (form == MPT_PERSISTENT && coll != UCOLL_COLL_BARRIER) {
        /* twice: a persistent request is checked at every start */
        for (int k = 0; k < 2 && st == UCOLL_OK; k++)
            if ((st = ucoll_start(req)) == UCOLL_OK)
                st = ucoll_wait(req);
    } else {
        st = ucoll_wait(req);
    }
    ucoll_request_free(req);
    return st;
}

typedef struct {
    const char *field; /* as the message names it */
    ucoll_coll_t coll[2];
    size_t count[2];
    ucoll_dtype_t dt[2];
    ucoll_op_t op[2];
    int root[2];
    const char *alg[2]; /* NULL: auto */
} mismatch_t;

/* [0]: rank 0's arguments, [1]: every other rank's */
static const mismatch_t cases[] = {
    {"collective",
     {UCOLL_COLL_ALLREDUCE, UCOLL_COLL_BCAST},
     {4, 4},
     {UCOLL_INT32, UCOLL_INT32},
     {UCOLL_OP_SUM, UCOLL_OP_SUM},
     {0, 0},
     {NULL, NULL}},
    {"count",
     {UCOLL_COLL_ALLREDUCE, UCOLL_COLL_ALLREDUCE},
     {5, 4},
     {UCOLL_INT32, UCOLL_INT32},
     {UCOLL_OP_SUM, UCOLL_OP_SUM},
     {0, 0},
     {NULL, NULL}},
    {"dtype",
     {UCOLL_COLL_ALLREDUCE, UCOLL_COLL_ALLREDUCE},
     {4, 4},
     {UCOLL_INT64, UCOLL_INT32},
     {UCOLL_OP_SUM, UCOLL_OP_SUM},
     {0, 0},
     {NULL, NULL}},
    {"dtype",
     {UCOLL_COLL_ALLREDUCE, UCOLL_COLL_ALLREDUCE},
     {4, 4},
     {UCOLL_INT32, UCOLL_FLOAT32},
     {UCOLL_OP_SUM, UCOLL_OP_SUM},
     {0, 0},
     {NULL, NULL}},
    {"op",
     {UCOLL_COLL_ALLREDUCE, UCOLL_COLL_ALLREDUCE},
     {4, 4},
     {UCOLL_INT32, UCOLL_INT32},
     {UCOLL_OP_SUM, UCOLL_OP_MAX},
     {0, 0},
     {NULL, NULL}},
    {"root",
     {UCOLL_COLL_REDUCE, UCOLL_COLL_REDUCE},
     {4, 4},
     {UCOLL_INT32, UCOLL_INT32},
     {UCOLL_OP_SUM, UCOLL_OP_SUM},
     {0, 1},
     {NULL, NULL}},
    {"root",
     {UCOLL_COLL_BCAST, UCOLL_COLL_BCAST},
     {4, 4},
     {UCOLL_INT32, UCOLL_INT32},
     {UCOLL_OP_SUM, UCOLL_OP_SUM},
     {0, 1},
     {NULL, NULL}},
    {"algorithm",
     {UCOLL_COLL_ALLREDUCE, UCOLL_COLL_ALLREDUCE},
     {4, 4},
     {UCOLL_INT32, UCOLL_INT32},
     {UCOLL_OP_SUM, UCOLL_OP_SUM},
     {0, 0},
     {"rhrd", "recursive-doubling"}},
    {"count",
     {UCOLL_COLL_EXSCAN, UCOLL_COLL_EXSCAN},
     {0, 3},
     {UCOLL_INT32, UCOLL_INT32},
     {UCOLL_OP_SUM, UCOLL_OP_SUM},
     {0, 0},
     {NULL, NULL}},
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

static void mismatches(ucoll_comm_t *w)
{
    const int rank = ucoll_comm_rank(w);
    const int side = rank == 0 ? 0 : 1;
    char text[8192], name[128], want[128];
    int64_t s[8], r[8];
    for (int form = 0; form < MPT_NFORMS; form++)
        for (size_t c = 0; c < NCASES; c++) {
            const mismatch_t *m = &cases[c];
            const ucoll_coll_t coll = m->coll[side];
            snprintf(name, sizeof(name), "%s %s mismatch (case %zu)", mpt_form_names[form],
                     m->field, c);
            for (int i = 0; i < 8; i++)
                s[i] = r[i] = rank + 1;
            if (m->alg[side] != NULL)
                mpt_expect_st(ucoll_set_algorithm(w, coll, m->alg[side]), UCOLL_OK, name,
                              "ucoll_set_algorithm");
            mpt_capture_stderr_begin();
            ucoll_status_t st = run_form((mpt_form_t)form, coll, w, s, r, m->count[side],
                                         m->dt[side], m->op[side], m->root[side]);
            mpt_capture_stderr_end(text, sizeof(text), 1); /* the log keeps it */
            ucoll_set_algorithm(w, coll, "auto");
            mpt_expect_st(st, UCOLL_ERR_MISMATCH, name, "the mismatching call");
            snprintf(want, sizeof(want), "ucoll: %s: %s differs between ranks", mpt_coll_name(coll),
                     m->field);
            mpt_check(strstr(text, want) != NULL, name, "stderr lacks \"%s\"", want);
            for (int i = 0; i < 8; i++) /* the collective itself ran nowhere */
                mpt_check(r[i] == rank + 1 && (coll == UCOLL_COLL_BCAST || s[i] == rank + 1), name,
                          "buffers untouched");
            expect_usable(w, name);
        }
}

static void add_int64(const void *in, void *inout, size_t count, ucoll_dtype_t dtype, void *arg)
{
    (void)dtype;
    (void)arg;
    for (size_t i = 0; i < count; i++)
        ((int64_t *)inout)[i] += ((const int64_t *)in)[i];
}

/* one handle, created alike everywhere, commutative on rank 0 only: the schedules would differ */
static void commutativity_mismatch(ucoll_comm_t *w)
{
    const int rank = ucoll_comm_rank(w);
    char text[8192], name[128];
    const char *want = "ucoll: allreduce: op commutativity differs between ranks";
    ucoll_op_t op;
    mpt_expect_st(ucoll_op_create(add_int64, NULL, rank == 0, &op), UCOLL_OK,
                  "op commutativity mismatch", "ucoll_op_create");
    for (int form = 0; form < MPT_NFORMS; form++) {
        int64_t s[8], r[8];
        for (int i = 0; i < 8; i++)
            s[i] = r[i] = rank + 1;
        snprintf(name, sizeof(name), "%s op commutativity mismatch", mpt_form_names[form]);
        mpt_capture_stderr_begin();
        ucoll_status_t st =
            run_form((mpt_form_t)form, UCOLL_COLL_ALLREDUCE, w, s, r, 4, UCOLL_INT64, op, 0);
        mpt_capture_stderr_end(text, sizeof(text), 1); /* the log keeps it */
        mpt_expect_st(st, UCOLL_ERR_MISMATCH, name, "the mismatching call");
        mpt_check(strstr(text, want) != NULL, name, "stderr lacks \"%s\"", want);
        for (int i = 0; i < 8; i++)
            mpt_check(r[i] == rank + 1 && s[i] == rank + 1, name, "buffers untouched");
        expect_usable(w, name);
    }
    mpt_expect_st(ucoll_op_free(op), UCOLL_OK, "op commutativity mismatch", "ucoll_op_free");
}

/* the block collectives: one field each differs between rank 0 and the others (the counts of
 * allgatherv and reduce_scatter: in the last rank's entry of recvcounts); an explicit algorithm
 * each, so that the comparison, not auto, decides */
typedef struct {
    const char *field;
    ucoll_coll_t coll;
    const char *alg[2];
    size_t count[2];
    ucoll_dtype_t dt[2];
    ucoll_op_t op[2];
    int root[2];
} block_mismatch_t;

static const block_mismatch_t block_cases[] = {
    {"count",
     UCOLL_COLL_ALLGATHER,
     {"ring", "ring"},
     {4, 3},
     {UCOLL_INT32, UCOLL_INT32},
     {0, 0},
     {0, 0}},
    {"dtype",
     UCOLL_COLL_ALLTOALL,
     {"pairwise", "pairwise"},
     {2, 2},
     {UCOLL_INT64, UCOLL_INT32},
     {0, 0},
     {0, 0}},
    {"op",
     UCOLL_COLL_REDUCE_SCATTER_BLOCK,
     {"ring", "ring"},
     {2, 2},
     {UCOLL_INT64, UCOLL_INT64},
     {UCOLL_OP_SUM, UCOLL_OP_MAX},
     {0, 0}},
    {"root",
     UCOLL_COLL_GATHER,
     {"linear", "linear"},
     {2, 2},
     {UCOLL_INT64, UCOLL_INT64},
     {0, 0},
     {0, 1}},
    {"algorithm",
     UCOLL_COLL_SCATTER,
     {"linear", "binomial"},
     {2, 2},
     {UCOLL_INT64, UCOLL_INT64},
     {0, 0},
     {0, 0}},
    {"count",
     UCOLL_COLL_REDUCE_SCATTER,
     {"ring", "ring"},
     {2, 3},
     {UCOLL_INT64, UCOLL_INT64},
     {UCOLL_OP_SUM, UCOLL_OP_SUM},
     {0, 0}},
    {"count",
     UCOLL_COLL_ALLGATHERV,
     {"ring", "ring"},
     {2, 3},
     {UCOLL_INT64, UCOLL_INT64},
     {0, 0},
     {0, 0}},
};

static ucoll_status_t block_form(mpt_form_t form, ucoll_comm_t *w, const block_mismatch_t *m,
                                 int side, const int64_t *s, int64_t *r, const size_t *counts,
                                 const size_t *displs)
{
    ucoll_request_t *req = NULL, **q = form == MPT_BLOCKING ? NULL : &req;
    const size_t n = m->count[side];
    const ucoll_dtype_t dt = m->dt[side];
    const int root = m->root[side], rank = ucoll_comm_rank(w);
    ucoll_status_t st;
#define FORM3(name, ...)                                                                           \
    (form == MPT_BLOCKING      ? ucoll_##name(__VA_ARGS__)                                         \
     : form == MPT_NONBLOCKING ? ucoll_i##name(__VA_ARGS__, q)                                     \
                               : ucoll_##name##_init(__VA_ARGS__, q))
    switch (m->coll) {
    case UCOLL_COLL_ALLGATHER:
        st = FORM3(allgather, w, s, r, n, dt);
        break;
    case UCOLL_COLL_ALLTOALL:
        st = FORM3(alltoall, w, s, r, n, dt);
        break;
    case UCOLL_COLL_REDUCE_SCATTER_BLOCK:
        st = FORM3(reduce_scatter_block, w, s, r, n, dt, m->op[side]);
        break;
    case UCOLL_COLL_GATHER:
        st = FORM3(gather, w, s, r, n, dt, root);
        break;
    case UCOLL_COLL_SCATTER:
        st = FORM3(scatter, w, s, r, n, dt, root);
        break;
    case UCOLL_COLL_REDUCE_SCATTER:
        st = FORM3(reduce_scatter, w, s, r, counts, dt, m->op[side]);
        break;
    default:
        st = FORM3(allgatherv, w, s, counts[rank], r, counts, displs, dt);
        break;
    }
#undef FORM3
    if (form == MPT_BLOCKING || st != UCOLL_OK)
        return st;
    for (int k = 0; form == MPT_PERSISTENT && k < 2 && st == UCOLL_OK; k++)
        if ((st = ucoll_start(req)) == UCOLL_OK)
            st = ucoll_wait(req);
    if (form == MPT_NONBLOCKING)
        st = ucoll_wait(req);
    ucoll_request_free(req);
    return st;
}

static void block_mismatches(ucoll_comm_t *w)
{
    const int rank = ucoll_comm_rank(w), p = ucoll_comm_size(w);
    const int side = rank == 0 ? 0 : 1;
    char text[8192], name[160], want[160];
    enum { CAP = 64 };
    int64_t *s = calloc(CAP * (size_t)p, sizeof(int64_t)),
            *r = calloc(CAP * (size_t)p, sizeof(int64_t));
    size_t *counts = calloc((size_t)p, sizeof(size_t)), *displs = calloc((size_t)p, sizeof(size_t));
    for (int form = 0; form < MPT_NFORMS; form++)
        for (size_t c = 0; c < sizeof(block_cases) / sizeof(block_cases[0]); c++) {
            const block_mismatch_t *m = &block_cases[c];
            snprintf(name, sizeof(name), "%s %s: %s mismatch", mpt_form_names[form], m->alg[0],
                     m->field);
            for (size_t i = 0; i < CAP * (size_t)p; i++)
                s[i] = r[i] = rank + 1;
            for (int j = 0; j < p; j++) { /* the v forms: 2 each, the last rank's differs */
                counts[j] = j == p - 1 ? m->count[side] : 2;
                displs[j] = 4 * (size_t)j;
            }
            mpt_expect_st(ucoll_set_algorithm(w, m->coll, m->alg[side]), UCOLL_OK, name,
                          "ucoll_set_algorithm");
            mpt_capture_stderr_begin();
            ucoll_status_t st = block_form((mpt_form_t)form, w, m, side, s, r, counts, displs);
            mpt_capture_stderr_end(text, sizeof(text), 1);
            ucoll_set_algorithm(w, m->coll, "auto");
            mpt_expect_st(st, UCOLL_ERR_MISMATCH, name, "the mismatching call");
            /* the collective's name as ucoll prints it */
            static const char *const names[] = {
                "allgather",      "allgatherv", "reduce_scatter_block",
                "reduce_scatter", "alltoall",   "alltoallv",
                "gather",         "gatherv",    "scatter",
                "scatterv"};
            snprintf(want, sizeof(want), "ucoll: %s: %s differs between ranks",
                     names[m->coll - UCOLL_COLL_ALLGATHER], m->field);
            mpt_check(strstr(text, want) != NULL, name, "stderr lacks \"%s\"", want);
            int untouched = 1;
            for (size_t i = 0; i < CAP * (size_t)p; i++)
                untouched &= s[i] == rank + 1 && r[i] == rank + 1;
            mpt_check(untouched, name, "buffers untouched");
            expect_usable(w, name);
        }
    free(s), free(r), free(counts), free(displs);
}

/* matching calls of every collective in every form give exact results under UCOLL_CHECK */
static void matching(ucoll_comm_t *w)
{
    const int rank = ucoll_comm_rank(w), p = ucoll_comm_size(w);
    char name[128];
    for (int form = 0; form < MPT_NFORMS; form++)
        for (int coll = 0; coll <= UCOLL_COLL_BARRIER; coll++) {
            int64_t s[5], r[5];
            const int root = p - 1;
            for (int i = 0; i < 5; i++) {
                s[i] = (int64_t)(rank + 1) * (i + 1);
                r[i] = coll == UCOLL_COLL_BCAST && rank == root ? s[i] : -1;
            }
            snprintf(name, sizeof(name), "%s %s matching", mpt_form_names[form],
                     mpt_coll_name((ucoll_coll_t)coll));
            ucoll_status_t st = run_form((mpt_form_t)form, (ucoll_coll_t)coll, w, s, r, 5,
                                         UCOLL_INT64, UCOLL_OP_SUM, root);
            if (!mpt_expect_st(st, UCOLL_OK, name, "the call"))
                continue;
            for (int i = 0; i < 5; i++) {
                int64_t want = -1; /* exscan's rank 0 and reduce's non-roots: untouched */
                const int64_t k = i + 1;
                switch ((ucoll_coll_t)coll) {
                case UCOLL_COLL_EXSCAN:
                    want = rank > 0 ? (int64_t)rank * (rank + 1) / 2 * k : -1;
                    break;
                case UCOLL_COLL_SCAN:
                    want = (int64_t)(rank + 1) * (rank + 2) / 2 * k;
                    break;
                case UCOLL_COLL_REDUCE:
                    want = rank == root ? (int64_t)p * (p + 1) / 2 * k : -1;
                    break;
                case UCOLL_COLL_ALLREDUCE:
                    want = (int64_t)p * (p + 1) / 2 * k;
                    break;
                case UCOLL_COLL_BCAST:
                    want = (int64_t)(root + 1) * k;
                    break;
                default:
                    break;
                }
                mpt_check(r[i] == want, name, "[%d] = %lld, want %lld", i, (long long)r[i],
                          (long long)want);
            }
        }
}

int main(int argc, char **argv)
{
    int expect_size = -1, check_mode = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--init") == 0 && i + 3 < argc)
            return init_mismatch(argv[i + 1], argv[i + 2], argv[i + 3]);
        if (strcmp(argv[i], "--expect-size") == 0 && i + 1 < argc)
            expect_size = atoi(argv[++i]);
        else if (strcmp(argv[i], "--check") == 0)
            check_mode = 1;
        else {
            fprintf(stderr, "usage: agree_test --init VAR EVEN ODD | --check [--expect-size N]\n");
            return 2;
        }
    }
    if (!check_mode) {
        fprintf(stderr, "usage: agree_test --init VAR EVEN ODD | --check [--expect-size N]\n");
        return 2;
    }
    setenv("UCOLL_CHECK", "1", 1);
    ucoll_comm_t *w = NULL;
    ucoll_status_t st = ucoll_init(&w);
    if (st != UCOLL_OK) {
        printf("agree_test: ucoll_init: %s\n", ucoll_strerror(st));
        return 1;
    }
    mpt_tally.rank = ucoll_comm_rank(w);
    const int p = ucoll_comm_size(w);
    mpt_check(expect_size < 0 || p == expect_size, "job size", "%d ranks, want %d", p, expect_size);
    if (p >= 2) {
        mismatches(w);
        commutativity_mismatch(w);
        block_mismatches(w);
    }
    matching(w);
    mpt_expect_st(ucoll_finalize(w), UCOLL_OK, "finalize", "ucoll_finalize");
    printf("agree_test --check np=%d rank %d: %ld checks, %ld failed; verdict: %s\n", p,
           mpt_tally.rank, mpt_tally.checks, mpt_tally.fails,
           mpt_tally.fails == 0 ? "PASS" : "FAIL");
    return mpt_tally.fails == 0 ? 0 : 1;
}
