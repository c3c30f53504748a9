/*
 * Agreement among ranks: one small allreduce with MAX over a (v, ~v) pair per value, after
 * which every rank knows the largest v and, as ~max(~v), the smallest: all ranks hold the same
 * v exactly when the two are equal. It always runs AGREE_ALG unsegmented, so that the settings
 * and arguments being compared cannot make the comparison itself mismatch.
 *   - at init (agree_settings): the UCOLL_* settings that change which messages a rank sends;
 *   - under UCOLL_CHECK=1, before every collective (check_start, check_result): its kind,
 *     count, dtype, op, root and algorithm, as an internal request with its own sequence
 *     number, so that nonblocking and persistent calls are compared without blocking.
 * Cost: one allreduce of 8 * AGREE_*_WORDS bytes (ceil(log2 p) rounds, +2 off powers of two).
 */
#include "agree.h"

#include "ucoll_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash_text(const char *s)
{
    uint64_t h = UINT64_C(14695981039346656037); /* FNV-1a */
    for (; *s != '\0'; s++)
        h = (h ^ (unsigned char)*s) * UINT64_C(1099511628211);
    return h;
}

static uint64_t double_bits(double x)
{
    uint64_t v;
    memcpy(&v, &x, sizeof(v));
    return v;
}

/* makes r an agreement request on comm over words in[], result in out[] */
static void agree_setup(ucoll_request_t *r, ucoll_comm_t *comm, const uint64_t *in, uint64_t *out,
                        size_t words)
{
    int param = 0;
    r->comm = comm;
    r->coll = UCOLL_COLL_ALLREDUCE;
    r->sendbuf = in;
    r->recvbuf = out;
    r->count = words;
    r->dtype = UCOLL_UINT64;
    r->op = UCOLL_OP_MAX;
    r->elem_size = sizeof(uint64_t);
    r->alg = alg_lookup(UCOLL_COLL_ALLREDUCE, AGREE_ALG, &param);
    r->param = param;
    r->persistent = 1; /* its owner releases it */
    r->internal = 1;
    r->status = UCOLL_OK;
    memset(&r->sched_args, 0, sizeof(r->sched_args));
    r->sched_args.rank = comm->rank;
    r->sched_args.size = comm->size;
    r->sched_args.count = words;
    r->sched_args.elem_size = sizeof(uint64_t);
    r->sched_args.param = param;
    r->sched_args.commutative = 1;
}

static void put_pair(uint64_t *w, size_t i, uint64_t v)
{
    w[2 * i] = v;
    w[2 * i + 1] = ~v;
}

static int pair_differs(const uint64_t *w, size_t i)
{
    return w[2 * i] != ~w[2 * i + 1];
}

ucoll_status_t agree_settings(ucoll_ctx_t *ctx)
{
    ucoll_comm_t *world = ctx->world;
    const ucoll_config_t *cfg = &ctx->cfg;
    enum { N = AGREE_SETTINGS_PAIRS };
    char alg_vars[UCOLL_NCOLLS][32];
    const char *names[N];
    uint64_t v[N];
    size_t n = 0;

    if (world->size == 1)
        return UCOLL_OK;
    for (int c = 0; c < UCOLL_NCOLLS; c++, n++) {
        snprintf(alg_vars[c], sizeof(alg_vars[c]), "UCOLL_%s_ALG", alg_coll_name((ucoll_coll_t)c));
        for (char *p = alg_vars[c]; *p != '\0'; p++)
            *p = (char)toupper((unsigned char)*p);
        const char *a = cfg->alg_env[c];
        names[n] = alg_vars[c];
        v[n] = a == NULL || *a == '\0' || strcmp(a, "auto") == 0 ? 0 : hash_text(a);
    }
    names[n] = "UCOLL_SEGMENT_SIZE", v[n++] = cfg->segment_size;
    names[n] = "UCOLL_REDUCE_RHRD_MIN", v[n++] = cfg->reduce_rhrd_min;
    names[n] = "UCOLL_ALLREDUCE_RHRD_MIN", v[n++] = cfg->allreduce_rhrd_min;
    /* stated or not decides whether init measures (with collectives) */
    names[n] = "UCOLL_ALPHA_US", v[n++] = double_bits(cfg->alpha_us);
    names[n] = "UCOLL_BETA_NS_PER_BYTE", v[n++] = double_bits(cfg->beta_ns);
    names[n] = "UCOLL_GAMMA_NS_PER_BYTE", v[n++] = double_bits(cfg->gamma_ns);
    names[n] = "UCOLL_CHECK", v[n++] = (uint64_t)cfg->check;
    names[n] = "UCOLL_SINGLE_COPY_MIN", v[n++] = cfg->single_copy_auto      ? UINT64_MAX
                                                 : cfg->single_copy_regions ? UINT64_MAX - 1
                                                                            : cfg->single_copy_min;
    names[n] = "UCOLL_SINGLE_COPY_MAX", v[n++] = cfg->single_copy_max;

    uint64_t mine[2 * N + 3], all[2 * N + 3];
    for (size_t i = 0; i < n; i++)
        put_pair(mine, i, v[i]);
    /* single copy is used only where every rank may read its peers: the word is larger for
     * lower ranks that cannot, so the lowest of them says why */
    char why[192] = "";
    /* where ranks wait for CPUs single copy's rendezvous waits for a descheduled reader
     * (README, "Single copy on one host"): auto leaves it off (such a rank need not probe),
     * regions keeps it for messages of auto's minimum and up */
    const int modal = cfg->single_copy_auto || cfg->single_copy_regions;
    mine[2 * n + 1] = modal && ctx->host_crowded;
    const int auto_off = cfg->single_copy_auto && ctx->host_crowded;
    mine[2 * n] =
        cfg->single_copy_min > 0 && !auto_off && tp_single_copy_probe(why, sizeof(why)) != UCOLL_OK
            ? (uint64_t)(world->size - world->rank)
            : 0;
    /* a rank with on-host peers but no rings cannot take single copy's descriptors, and would
     * split a message its peers send whole (exec.c, segment_elems): off everywhere, silently
     * (UCOLL_SHM=0 or UCOLL_FAILURE_DETECTION say so; a failed mapping said why) */
    mine[2 * n + 2] = (modal || cfg->single_copy_min > 0) && ctx->rings_missing;
    ucoll_request_t *r = calloc(1, sizeof(*r));
    if (r == NULL)
        return UCOLL_ERR_NO_MEMORY;
    sched_init(&r->sched);
    agree_setup(r, world, mine, all, 2 * n + 3);
    ucoll_status_t st = exec_start(r);
    if (st == UCOLL_OK)
        st = request_wait(r);
    exec_release(r);
    sched_destroy(&r->sched);
    free(r);
    if (st != UCOLL_OK)
        return st;
    int differ = 0;
    for (size_t i = 0; i < n; i++) {
        if (!pair_differs(all, i))
            continue;
        const char *here = getenv(names[i]);
        if (here != NULL && *here != '\0')
            fprintf(stderr, "ucoll: %s differs between ranks (set to \"%s\" here, rank %d)\n",
                    names[i], here, world->rank);
        else
            fprintf(stderr, "ucoll: %s differs between ranks (unset here, rank %d)\n", names[i],
                    world->rank);
        differ = 1;
    }
    if (!differ) {
        const int crowded = all[2 * n + 1] != 0;
        const int off_crowded = crowded && cfg->single_copy_auto;
        size_t sc_min = cfg->single_copy_min;
        if (crowded && cfg->single_copy_regions && sc_min < UCOLL_SINGLE_COPY_AUTO_MIN)
            sc_min = UCOLL_SINGLE_COPY_AUTO_MIN;
        if (!off_crowded && all[2 * n] == (uint64_t)(world->size - world->rank) && all[2 * n] != 0)
            fprintf(stderr,
                    "ucoll: rank %d: single copy is off on every rank: %s (messages between ranks "
                    "of one host take UCX's two copies)\n",
                    world->rank, why);
        /* a stated maximum below the raised minimum leaves no message to take it */
        const int window = cfg->single_copy_max == 0 || cfg->single_copy_max >= sc_min;
        ctx->single_copy_on =
            all[2 * n] == 0 && all[2 * n + 2] == 0 && !off_crowded && sc_min > 0 && window;
        if (ctx->single_copy_on) {
            tp_set_single_copy(ctx->tp, sc_min);
            if (cfg->single_copy_regions)
                tp_pool_use_regions(ctx->tp);
        } else {
            tp_single_copy_unprobe();
        }
        return UCOLL_OK;
    }
    /* every rank found the same: all leave init together, none while a peer still receives */
    tp_single_copy_unprobe();
    ctx->bs->fence(ctx->bs);
    return UCOLL_ERR_INVALID_ARG;
}

typedef struct {
    ucoll_request_t req; /* first: a check_req_t is freed as its request */
    uint64_t mine[AGREE_CHECK_WORDS], all[AGREE_CHECK_WORDS];
} check_req_t;

/* commutativity too: two ranks' user ops of one handle may differ in it, and it shapes the
 * schedule (reduce's tree root, allreduce's butterfly) */
static const char *const check_fields[AGREE_CHECK_FIELDS] = {
    "collective", "count", "dtype", "op", "root", "algorithm", "op commutativity"};

/* FNV-1a over n counts: the same on every rank that holds the same counts */
static uint64_t hash_counts(const size_t *counts, int n)
{
    uint64_t h = UINT64_C(14695981039346656037);
    for (int i = 0; i < n; i++)
        for (unsigned b = 0; b < sizeof(size_t); b++)
            h = (h ^ (uint64_t)((counts[i] >> (8 * b)) & 0xff)) * UINT64_C(1099511628211);
    return h;
}

/* the block collectives: the count every rank passes alike, or a hash of the counts every rank
 * holds alike (allgatherv's and reduce_scatter's recvcounts; displacements are each rank's own
 * layout); 0 for gatherv, scatterv and alltoallv, whose counts differ between ranks */
static void block_fields(const ucoll_request_t *req, uint64_t *count, int *reduces, int *rooted)
{
    const ucoll_coll_t c = req->coll;
    *reduces = c == UCOLL_COLL_REDUCE_SCATTER_BLOCK || c == UCOLL_COLL_REDUCE_SCATTER;
    *rooted = c == UCOLL_COLL_GATHER || c == UCOLL_COLL_GATHERV || c == UCOLL_COLL_SCATTER ||
              c == UCOLL_COLL_SCATTERV;
    if (c == UCOLL_COLL_ALLGATHERV || c == UCOLL_COLL_REDUCE_SCATTER)
        *count = hash_counts(req->sched_args.recv_counts, req->comm->size);
    else if (c == UCOLL_COLL_GATHERV || c == UCOLL_COLL_SCATTERV || c == UCOLL_COLL_ALLTOALLV)
        *count = 0;
}

ucoll_status_t check_start(ucoll_request_t *req)
{
    check_req_t *c = (check_req_t *)req->check;
    if (c == NULL) {
        if ((c = calloc(1, sizeof(*c))) == NULL)
            return UCOLL_ERR_NO_MEMORY;
        sched_init(&c->req.sched);
        agree_setup(&c->req, req->comm, c->mine, c->all, AGREE_CHECK_WORDS);
        req->check = &c->req;
    }
    /* what does not apply to a collective is compared as 0 */
    const int data = req->coll != UCOLL_COLL_BARRIER;
    int reduces = data && req->coll != UCOLL_COLL_BCAST;
    int rooted = req->coll == UCOLL_COLL_REDUCE || req->coll == UCOLL_COLL_BCAST;
    uint64_t count = (uint64_t)req->count;
    if (req->coll >= UCOLL_COLL_ALLGATHER)
        block_fields(req, &count, &reduces, &rooted);
    const uint64_t v[AGREE_CHECK_FIELDS] = {
        (uint64_t)req->coll,
        data ? count : 0,
        data ? (uint64_t)req->dtype : 0,
        reduces ? (uint64_t)req->op : 0,
        rooted ? (uint64_t)req->root : 0,
        hash_text(req->alg->name) ^ (uint64_t)req->param,
        reduces ? (uint64_t)req->sched_args.commutative : 0,
    };
    for (size_t i = 0; i < AGREE_CHECK_FIELDS; i++)
        put_pair(c->mine, i, v[i]);
    return exec_start(&c->req);
}

ucoll_status_t check_result(ucoll_request_t *req)
{
    const check_req_t *c = (const check_req_t *)req->check;
    if (c->req.active) /* it advances in the progress passes like any request */
        return UCOLL_INPROGRESS;
    if (c->req.status != UCOLL_OK)
        return c->req.status;
    ucoll_status_t st = UCOLL_OK;
    for (size_t i = 0; i < AGREE_CHECK_FIELDS; i++)
        if (pair_differs(c->all, i)) {
            fprintf(stderr, "ucoll: %s: %s differs between ranks (rank %d of the communicator)\n",
                    alg_coll_name(req->coll), check_fields[i], req->comm->rank);
            st = UCOLL_ERR_MISMATCH;
        }
    return st;
}
