/*
 * Process-level API: init (PMIx, the caller's OOB allgather or the store), finalize, communicators
 * (rank, size, split, free) and algorithm selection by name.
 */
#include "agree.h"
#include "ucoll_int.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static ucoll_ctx_t *g_ctx; /* the one live context of this process */

/* the process that initialised ucoll: a forked child shares its rings and endpoints, so every
 * call there is refused (the fork handler marks the child; the calls here also compare pids,
 * which covers a child made without fork handlers) */
static pid_t g_init_pid;

static void mark_forked_child(void)
{
    guard_mark_forked();
}

static ucoll_status_t api_guard(void)
{
    if (guard_check() != UCOLL_OK || (g_init_pid != 0 && getpid() != g_init_pid))
        return UCOLL_ERR_STATE;
    return UCOLL_OK;
}

/* the communicator structs of finalized contexts: they stay allocated, dead, so that a later
 * call with one is answered with UCOLL_ERR_STATE; this list keeps them reachable (memory kept
 * on purpose, not leaked: LeakSanitizer and valgrind would report it as lost otherwise) */
static ucoll_comm_t *g_dead_comms;

/* the tag's comm id of ucoll_finalize's barrier; no communicator gets it */
enum { FINALIZE_COMM_ID = UCOLL_MAX_COMMS - 1 };
/* after a failure, how long finalize waits for the other survivors at most */
#define FINALIZE_SYNC_S 2.0

static ucoll_comm_t *comm_new(ucoll_ctx_t *ctx, int rank, int size, uint32_t id)
{
    ucoll_comm_t *comm = calloc(1, sizeof(*comm));
    if (comm == NULL)
        return NULL;
    comm->world_rank = calloc((size_t)size, sizeof(int));
    if (comm->world_rank == NULL) {
        free(comm);
        return NULL;
    }
    comm->magic = COMM_MAGIC;
    comm->ctx = ctx;
    comm->rank = rank;
    comm->size = size;
    comm->id = id;
    comm->next = ctx->comms;
    ctx->comms = comm;
    return comm;
}

/* releases what a comm holds; the struct itself stays, marked dead, so that later calls with
 * it give UCOLL_ERR_STATE instead of touching freed memory */
static void comm_kill(ucoll_comm_t *comm)
{
    for (int i = 0; i < COMM_BLOCKING_CACHE; i++) {
        ucoll_request_t *req = comm->blocking[i];
        if (req == NULL)
            continue;
        exec_abort(req, UCOLL_ERR_STATE);
        exec_release(req);
        sched_destroy(&req->sched);
        free(req->vcounts);
        free(req);
        comm->blocking[i] = NULL;
    }
    comm->scratch_holder = NULL;
    free(comm->world_rank);
    comm->world_rank = NULL;
    select_comm_cleanup(comm);
    comm->magic = COMM_DEAD;
}

/* a comm comm_new just made that will not be handed out (it is ctx->comms' first) */
static void comm_discard(ucoll_comm_t *comm)
{
    comm->ctx->comms = comm->next;
    comm_kill(comm);
    free(comm);
}

/* the router's look-up of a peer's published blob, on its first use */
static ucoll_status_t lookup_peer(void *arg, int peer, void **blob, size_t *len)
{
    bootstrap_t *bs = arg;
    return bs->lookup(bs, peer, blob, len);
}

/* every rank's host as the lowest world rank on it, gathered on world (still flat: its hosts are
 * unknown until this returns) for the node-aware forms. A table that does not describe hosts
 * (a leader whose own leader differs, from launchers disagreeing) is dropped on every rank
 * alike: the collectives stay flat. */
static ucoll_status_t gather_hosts(ucoll_ctx_t *ctx, int host_leader)
{
    const int p = ctx->world->size;
    int32_t mine = host_leader, *all = malloc((size_t)p * sizeof(*all));
    if (all == NULL)
        return UCOLL_ERR_NO_MEMORY;
    /* a fixed algorithm (agree.h), for tests that count messages */
    int param = 0;
    const alg_desc_t *fixed = alg_lookup(UCOLL_COLL_ALLGATHER, HOSTS_GATHER_ALG, &param);
    ctx->world->alg[UCOLL_COLL_ALLGATHER] = (alg_choice_t){fixed, param};
    const ucoll_status_t st = ucoll_allgather(ctx->world, &mine, all, 1, UCOLL_INT32);
    ctx->world->alg[UCOLL_COLL_ALLGATHER] = (alg_choice_t){NULL, 0};
    if (st != UCOLL_OK) {
        free(all);
        return st;
    }
    int ok = 1;
    for (int q = 0; q < p && ok; q++)
        ok = all[q] >= 0 && all[q] <= q && all[all[q]] == all[q];
    if (!ok) {
        if (ctx->world->rank == 0)
            fprintf(stderr, "ucoll: the launcher's local ranks do not describe hosts: the "
                            "collectives do not use the hosts\n");
        free(all);
        return UCOLL_OK;
    }
    _Static_assert(sizeof(int32_t) == sizeof(int), "the table is used as int");
    ctx->world_host = (int *)all;
    return comm_init_hosts(ctx->world);
}

/* init: which ranks share this host (PMIx tells; OOB: one allgather), the UCX contexts and the
 * on-host segment, then one publication of this rank's blob (worker addresses, process id,
 * segment). No peer is connected here: the router connects each on its first use. */
static ucoll_status_t init_common(bootstrap_t *bs, ucoll_thread_level_t level, ucoll_comm_t **world)
{
    ucoll_ctx_t *ctx = calloc(1, sizeof(*ctx));
    int *local_ranks = NULL, nlocal = 0;
    int shm_fd = -1; /* ours until tp_create takes it */
    ucoll_status_t st;

    if (ctx == NULL) {
        bs->finalize(bs);
        return UCOLL_ERR_NO_MEMORY;
    }
    ctx->bs = bs;
    if ((st = config_read(&ctx->cfg)) != UCOLL_OK)
        goto fail;
    if (bs->size > UCOLL_MAX_RANKS) { /* the tag's sender field (tag.h) */
        if (bs->rank == 0)
            fprintf(stderr, "ucoll: a job of %d ranks: at most %d are supported\n", bs->size,
                    UCOLL_MAX_RANKS);
        st = UCOLL_ERR_NOT_SUPPORTED;
        goto fail;
    }
    if ((st = bs->local_ranks(bs, &local_ranks, &nlocal)) != UCOLL_OK)
        goto fail;
    if (ctx->cfg.shm && ctx->cfg.failure == TP_FAILURE_AUTO && nlocal > 1)
        shm_fd = tp_shm_segment();
    /* the launcher's "same node" may still be another container: the router probes and maps
     * only peers of the same machine identity */
    char id[BOOTSTRAP_ID_BYTES];
    bootstrap_machine_identity(id, bs->rank);
    uint64_t machine = UINT64_C(14695981039346656037); /* FNV-1a */
    for (size_t i = 0; i < sizeof(id); i++)
        machine = (machine ^ (unsigned char)id[i]) * UINT64_C(1099511628211);
    const int rings = shm_fd >= 0;
    st = tp_create(bs->rank, bs->size, local_ranks, nlocal, machine, shm_fd, ctx->cfg.yield,
                   ctx->cfg.failure, level, lookup_peer, bs, &ctx->tp);
    shm_fd = -1; /* tp_create took it */
    const int host_leader = local_ranks[0], all_local = nlocal == bs->size;
    ctx->ring_max = rings && all_local ? TP_RING_MAX_MESSAGE : 0;
    ctx->one_host = all_local;
    const int cpus = tp_host_cpus();
    ctx->crowd_cpus = all_local && nlocal > cpus ? (unsigned)cpus : 0;
    ctx->host_crowded = nlocal > cpus;
    free(local_ranks);
    local_ranks = NULL;
    if (st != UCOLL_OK)
        goto fail;
    ctx->rings_missing = nlocal > 1 && !tp_has_rings(ctx->tp);

    const void *addr;
    size_t addr_len;
    tp_local_address(ctx->tp, &addr, &addr_len);
    if ((st = bs->publish(bs, addr, addr_len)) != UCOLL_OK)
        goto fail;

    ucoll_comm_t *comm = comm_new(ctx, bs->rank, bs->size, 0);
    if (comm == NULL) {
        st = UCOLL_ERR_NO_MEMORY;
        goto fail;
    }
    for (int i = 0; i < bs->size; i++)
        comm->world_rank[i] = i;
    ctx->world = comm;
    /* world is id 0; the finalize barrier's id is never handed out */
    ctx->comm_ids_used[0] = 1;
    ctx->comm_ids_used[FINALIZE_COMM_ID / 64] |= UINT64_C(1) << (FINALIZE_COMM_ID % 64);
    /* before anything whose messages they decide (the measurement's collectives included) */
    if ((st = agree_settings(ctx)) != UCOLL_OK)
        goto fail;
    /* every rank agrees whether all share a host: the launcher's local ranks are one list */
    if (!all_local && (st = gather_hosts(ctx, host_leader)) != UCOLL_OK)
        goto fail;
    for (int c = 0; c < UCOLL_NCOLLS; c++) {
        const char *name = ctx->cfg.alg_env[c];
        if (name == NULL || *name == '\0')
            continue;
        if (ucoll_set_algorithm(comm, (ucoll_coll_t)c, name) != UCOLL_OK) {
            char var[32]; /* the variable's own name: UCOLL_EXSCAN_ALG */
            snprintf(var, sizeof(var), "UCOLL_%s_ALG", alg_coll_name((ucoll_coll_t)c));
            for (char *v = var; *v != '\0'; v++)
                *v = (char)toupper((unsigned char)*v);
            fprintf(stderr,
                    "ucoll: %s=%s is not an algorithm of %s; run `ucoll_info -a` for the names\n",
                    var, name, alg_coll_name((ucoll_coll_t)c));
            st = UCOLL_ERR_INVALID_ARG;
            goto fail;
        }
    }
    if ((st = measure_cost_model(ctx)) != UCOLL_OK)
        goto fail;
    g_ctx = ctx;
    if (g_init_pid == 0 && pthread_atfork(NULL, NULL, mark_forked_child) != 0) {
        fprintf(stderr, "ucoll: pthread_atfork failed: calls in a forked child are refused by "
                        "process id only\n");
    }
    g_init_pid = getpid();
    *world = comm;
    return UCOLL_OK;

fail:
    if (shm_fd >= 0)
        close(shm_fd);
    free(local_ranks);
    while (ctx->comms != NULL) {
        ucoll_comm_t *c = ctx->comms;
        ctx->comms = c->next;
        comm_kill(c);
        free(c);
    }
    tp_destroy(ctx->tp);
    bs->finalize(bs);
    free(ctx->world_host);
    free(ctx);
    return st;
}

/* how a process starts: PMIx (ucoll_init without the store's variables), the caller's allgather,
 * or the store (ucoll_init_store, or ucoll_init with UCOLL_STORE, UCOLL_RANK and UCOLL_SIZE) */
typedef enum { BOOT_PMIX, BOOT_OOB, BOOT_STORE } boot_kind_t;
typedef struct {
    boot_kind_t kind;
    const ucoll_oob_t *oob;
    const char *address;
    int rank, size;
    int from_env; /* ucoll_init's store: one per process, as PMIx */
} boot_args_t;

/* ucoll_init once started a job through the store's variables: a second one is refused as a
 * second PMIx start is */
static int g_env_store_used;

/* the store's timeout: UCOLL_TIMEOUT, else this many seconds (never wait forever for a rank
 * that was never started) */
enum { STORE_DEFAULT_TIMEOUT_S = 60 };

/* UCOLL_RANK or UCOLL_SIZE: decimal digits only, within int; -1 (message printed) if not */
static int env_int(const char *name, const char *v)
{
    long long x = 0;
    int ok = *v != '\0';
    for (const char *c = v; ok && *c != '\0'; c++) {
        ok = *c >= '0' && *c <= '9';
        x = ok ? x * 10 + (*c - '0') : x;
        ok = ok && x <= INT_MAX;
    }
    if (!ok)
        fprintf(stderr, "ucoll: %s=%s is not a number 0..%d (decimal digits only)\n", name, v,
                INT_MAX);
    return ok ? (int)x : -1;
}

/* ucoll_init's choice: the store when UCOLL_STORE, UCOLL_RANK and UCOLL_SIZE are all set
 * (non-empty), PMIx when none is; some but not all is INVALID_ARG, naming the missing ones */
static ucoll_status_t boot_from_env(boot_args_t *a)
{
    static const char *const names[3] = {"UCOLL_STORE", "UCOLL_RANK", "UCOLL_SIZE"};
    const char *v[3];
    int set = 0;
    for (int i = 0; i < 3; i++) {
        v[i] = getenv(names[i]);
        if (v[i] != NULL && *v[i] == '\0')
            v[i] = NULL;
        set += v[i] != NULL;
    }
    memset(a, 0, sizeof(*a));
    a->kind = BOOT_PMIX;
    if (set == 0)
        return UCOLL_OK;
    if (set < 3) {
        fprintf(stderr, "ucoll: the store needs UCOLL_STORE, UCOLL_RANK and UCOLL_SIZE; unset:");
        for (int i = 0; i < 3; i++)
            if (v[i] == NULL)
                fprintf(stderr, " %s", names[i]);
        fprintf(stderr, " (or unset all three to start through PMIx)\n");
        return UCOLL_ERR_INVALID_ARG;
    }
    a->kind = BOOT_STORE;
    a->from_env = 1;
    a->address = v[0];
    a->rank = env_int(names[1], v[1]);
    a->size = env_int(names[2], v[2]);
    return a->rank < 0 || a->size < 0 ? UCOLL_ERR_INVALID_ARG : UCOLL_OK;
}

static ucoll_status_t boot_create(const boot_args_t *a, bootstrap_t **bs)
{
    if (a->kind == BOOT_PMIX)
        return bootstrap_pmix_create(bs);
    if (a->kind == BOOT_OOB)
        return bootstrap_oob_create(a->oob, bs);
    /* UCOLL_TIMEOUT bounds the store's waits: read (and checked) before any connection */
    ucoll_config_t cfg;
    if (config_read(&cfg) != UCOLL_OK)
        return UCOLL_ERR_INVALID_ARG;
    const double t = cfg.timeout_s > 0 ? cfg.timeout_s : STORE_DEFAULT_TIMEOUT_S;
    return bootstrap_store_create(a->address, a->rank, a->size, t, bs);
}

/* every init, at a thread level */
static ucoll_status_t init_at_level(const boot_args_t *a, ucoll_thread_level_t level,
                                    ucoll_comm_t **world)
{
    bootstrap_t *bs;
    if (api_guard() != UCOLL_OK)
        return UCOLL_ERR_STATE;
    if (world == NULL)
        return UCOLL_ERR_INVALID_ARG;
    if (g_ctx != NULL || (a->from_env && g_env_store_used))
        return UCOLL_ERR_STATE;
    entry_set_level(level); /* no other call can be running: there is no comm yet */
    entry_lock();
    ucoll_status_t st = boot_create(a, &bs);
    if (st == UCOLL_OK)
        st = init_common(bs, level, world);
    if (st == UCOLL_OK && a->from_env)
        g_env_store_used = 1;
    entry_unlock();
    return st;
}

/* ucoll_init and ucoll_init_thread without an allgather */
static ucoll_status_t init_process(ucoll_thread_level_t level, ucoll_comm_t **world)
{
    boot_args_t a;
    if (api_guard() != UCOLL_OK)
        return UCOLL_ERR_STATE;
    if (world != NULL && g_ctx != NULL)
        return UCOLL_ERR_STATE; /* before the variables are looked at */
    ucoll_status_t st = boot_from_env(&a);
    return st != UCOLL_OK ? st : init_at_level(&a, level, world);
}

UCOLL_EXPORT ucoll_status_t ucoll_init(ucoll_comm_t **world)
{
    return init_process(UCOLL_THREAD_SINGLE, world);
}

UCOLL_EXPORT ucoll_status_t ucoll_init_oob(const ucoll_oob_t *oob, ucoll_comm_t **world)
{
    const boot_args_t a = {BOOT_OOB, oob, NULL, 0, 0, 0};
    return init_at_level(&a, UCOLL_THREAD_SINGLE, world);
}

UCOLL_EXPORT ucoll_status_t ucoll_init_store(const char *address, int rank, int size,
                                             ucoll_comm_t **world)
{
    const boot_args_t a = {BOOT_STORE, NULL, address, rank, size, 0};
    return init_at_level(&a, UCOLL_THREAD_SINGLE, world);
}

UCOLL_EXPORT ucoll_status_t ucoll_init_thread(const ucoll_oob_t *oob, ucoll_thread_level_t required,
                                              ucoll_thread_level_t *provided, ucoll_comm_t **world)
{
    if (api_guard() != UCOLL_OK)
        return UCOLL_ERR_STATE;
    if ((unsigned)required > UCOLL_THREAD_MULTIPLE || provided == NULL)
        return UCOLL_ERR_INVALID_ARG;
    const boot_args_t a = {BOOT_OOB, oob, NULL, 0, 0, 0};
    ucoll_status_t st =
        oob == NULL ? init_process(required, world) : init_at_level(&a, required, world);
    if (st == UCOLL_OK)
        *provided = required; /* every level is implemented */
    return st;
}

/* a barrier on finalize's comm; bounded: waiting FINALIZE_SYNC_S per round at most (within
 * UCOLL_TIMEOUT) */
static ucoll_status_t finalize_barrier(ucoll_comm_t *fin, int bounded)
{
    ucoll_ctx_t *ctx = fin->ctx;
    const double saved = ctx->cfg.timeout_s;
    if (bounded)
        ctx->cfg.timeout_s = saved > 0 && saved < FINALIZE_SYNC_S ? saved : FINALIZE_SYNC_S;
    const ucoll_status_t st = ucoll_barrier(fin);
    ctx->cfg.timeout_s = saved;
    return st;
}

static ucoll_status_t finalize_locked(ucoll_comm_t *world)
{
    if (world == NULL)
        return UCOLL_ERR_INVALID_ARG;
    if (world->magic == COMM_DEAD)
        return UCOLL_ERR_STATE;
    if (world->magic != COMM_MAGIC || world->ctx == NULL || world != world->ctx->world)
        return UCOLL_ERR_INVALID_ARG;
    ucoll_ctx_t *ctx = world->ctx;

    /* every rank has finished its collectives before endpoints close. The barrier has a tag
     * space of its own: after a failed collective the ranks' sequence numbers disagree, and a
     * barrier numbered like the user's collectives would match the messages of a rank still
     * inside one (which would then get UCOLL_ERR_TRUNCATED instead of the failure). */
    const double timeout = ctx->cfg.timeout_s, start = now_seconds();
    ucoll_status_t st = UCOLL_ERR_NO_MEMORY, st2 = UCOLL_OK;
    /* UCOLL_STATS' messages: as after the first barrier. The second may be cut short by peers
     * that already left (their endpoints' errors end it at once), skipping its later sends:
     * what it sends is not a count any rank could know. It talks to the first's peers only. */
    tp_stats_t sent;
    int counted = 0;
    ucoll_comm_t *fin = comm_new(ctx, world->rank, world->size, FINALIZE_COMM_ID);
    if (fin != NULL) {
        memcpy(fin->world_rank, world->world_rank, (size_t)world->size * sizeof(int));
        /* flat (no comm_init_hosts): where the second barrier meets a peer that already left,
         * a node-aware one would skip its fan-out and keep its host's ranks waiting out the
         * limit. After a failure on world (a peer dead or unreachable) this first one rarely
         * completes: it is the survivors' try to leave together, bounded like their agreement
         * below, instead of a full UCOLL_TIMEOUT more for a host that does not answer */
        st = finalize_barrier(fin, world->revoked || tp_any_peer_failed(ctx->tp));
        tp_get_stats(ctx->tp, &sent);
        counted = 1;
        /* A rank through the barrier knows that all have entered it, not that its own last
         * messages have arrived: closing its endpoints now could drop them (a network
         * endpoint closed by force discards what it still queues), failing a peer's barrier.
         * The PMIx fence is no barrier under every launcher (Slurm's returns at once across
         * nodes), so a second barrier holds every rank until all are through the first. Its
         * own end may meet peers that left already: its result is not finalize's, and it
         * waits FINALIZE_SYNC_S per round at most. When it fails, what it leaves queued to
         * peers that left is closed by force, and the fence is skipped as after a failure. */
        if (st == UCOLL_OK && world->size > 1)
            st2 = finalize_barrier(fin, 1);
        ctx->comms = fin->next; /* comm_new put it first */
        comm_kill(fin);
        free(fin);
    }
    /* a member died: the survivors still try to leave together. One that closed its
     * endpoints or exited now would fail the collectives other survivors still run with it (on
     * a shrunk communicator), so it first waits, in ucoll_comm_shrink's agreement over world,
     * until every survivor has come here, for FINALIZE_SYNC_S at most (within UCOLL_TIMEOUT):
     * a survivor stuck in this barrier for a peer it never talked to (so it cannot see it died)
     * learns of the failure only when the others leave. */
    if (st == UCOLL_ERR_PEER_FAILED) {
        double until = now_seconds() + FINALIZE_SYNC_S;
        if (timeout > 0 && start + timeout < until)
            until = start + timeout;
        uint64_t *failed = NULL;
        uint32_t id;
        if (until > now_seconds() && shrink_agree(world, until, &failed, &id) == UCOLL_OK)
            free(failed);
    }
    while (ctx->active != NULL)
        exec_abort(ctx->active, UCOLL_ERR_STATE);
    coll_release_requests(ctx);
    shrink_end_ops(ctx);
    /* after a failed barrier (a dead peer, a timeout) the fence would wait for the dead */
    const int all_through = st == UCOLL_OK && st2 == UCOLL_OK;
    ucoll_status_t fst = all_through ? ctx->bs->fence(ctx->bs) : UCOLL_OK;
    if (!all_through)
        tp_close_by_force(ctx->tp);
    /* the live comms and the freed ones kept for ERR_STATE all stay, dead (comm_kill of an
     * already freed one does nothing more) */
    ucoll_comm_t *lists[2] = {ctx->comms, ctx->freed_head};
    for (int l = 0; l < 2; l++)
        for (ucoll_comm_t *c = lists[l], *next; c != NULL; c = next) {
            next = c->next;
            comm_kill(c);
            c->ctx = NULL;
            c->next = g_dead_comms;
            g_dead_comms = c;
        }
    ctx->comms = ctx->freed_head = ctx->freed_tail = NULL;
    tp_stats_t ts;
    tp_get_stats(ctx->tp, &ts);
    if (!counted)
        sent = ts;
    if (ctx->cfg.stats) /* the first finalize barrier counts like any other collective */
        fprintf(stderr,
                "ucoll stats rank %d: endpoints %llu, rings %llu, address_lookups %llu, "
                "messages_ucx %llu, messages_shm %llu\n",
                ctx->bs->rank, ts.endpoints, ts.rings, ctx->bs->lookups, sent.sent_ucx,
                sent.sent_shm);
    if (getenv("UCOLL_TEST_SHM_COUNTS") != NULL) /* tests: was the on-host channel used */
        fprintf(stderr,
                "ucoll: rank %d shm sent %llu received %llu unexpected %llu copies_sent %llu "
                "copies_read %llu copies_mapped %llu copies_lent %llu offers_sent %llu "
                "copies_written %llu writes_taken %llu ptracer_any %d pool_chunks %llu "
                "writes_outrun %llu quarantined %llu\n",
                ctx->bs->rank, ts.shm_sent, ts.shm_received, ts.shm_unexpected,
                ts.copies_sent - ctx->measure_copies_sent,
                ts.copies_read - ctx->measure_copies_read,
                ts.copies_mapped - ctx->measure_copies_mapped, ts.copies_lent, ts.offers_sent,
                ts.copies_written, ts.writes_taken, tp_single_copy_ptracer_any(), ts.pool_chunks,
                ts.writes_outrun, ts.pool_quarantined);
    tp_destroy(ctx->tp);
    shrink_free_all(ctx); /* (UCX may read an abandoned send's buffer until tp_destroy) */
    ctx->bs->finalize(ctx->bs);
    free(ctx->world_host);
    free(ctx);
    g_ctx = NULL;
    return st != UCOLL_OK ? st : fst;
}

UCOLL_EXPORT ucoll_status_t ucoll_mem_alloc(size_t bytes, void **ptr)
{
    if (bytes == 0 || ptr == NULL)
        return UCOLL_ERR_INVALID_ARG;
    const int err = tp_region_alloc(bytes, ptr);
    if (err == 0)
        return UCOLL_OK;
    /* out of memory, of space in the memfd's file system, or of descriptors (one per region) */
    return err == ENOMEM || err == ENOSPC || err == EFBIG || err == EMFILE || err == ENFILE
               ? UCOLL_ERR_NO_MEMORY
               : UCOLL_ERR_NOT_SUPPORTED;
}

UCOLL_EXPORT ucoll_status_t ucoll_mem_free(void *ptr)
{
    return tp_region_free(ptr) == 0 ? UCOLL_OK : UCOLL_ERR_INVALID_ARG;
}

UCOLL_EXPORT int ucoll_comm_rank(const ucoll_comm_t *comm)
{
    return (comm != NULL && comm->magic == COMM_MAGIC) ? comm->rank : -1;
}

UCOLL_EXPORT int ucoll_comm_size(const ucoll_comm_t *comm)
{
    return (comm != NULL && comm->magic == COMM_MAGIC) ? comm->size : -1;
}

/* a communicator handle as the caller passed it: NULL or not one of ours, INVALID_ARG; freed
 * or finalized, STATE */
static ucoll_status_t comm_handle_status(const ucoll_comm_t *comm)
{
    if (comm == NULL)
        return UCOLL_ERR_INVALID_ARG;
    if (comm->magic == COMM_DEAD)
        return UCOLL_ERR_STATE;
    return comm->magic == COMM_MAGIC ? UCOLL_OK : UCOLL_ERR_INVALID_ARG;
}

static ucoll_status_t set_algorithm_locked(ucoll_comm_t *comm, ucoll_coll_t coll, const char *alg)
{
    const ucoll_status_t st = comm_handle_status(comm);
    if (st != UCOLL_OK)
        return st;
    if ((unsigned)coll >= UCOLL_NCOLLS || alg == NULL)
        return UCOLL_ERR_INVALID_ARG;
    if (strcmp(alg, "auto") == 0) {
        comm->alg[coll].alg = NULL;
        comm->alg[coll].param = 0;
        return UCOLL_OK;
    }
    int param = 0;
    const alg_desc_t *desc = alg_lookup(coll, alg, &param);
    if (desc == NULL)
        return UCOLL_ERR_INVALID_ARG;
    comm->alg[coll].alg = desc;
    comm->alg[coll].param = param;
    return UCOLL_OK;
}

typedef struct {
    int64_t color, key, rank;
} split_entry_t;

static int split_order(const void *a, const void *b)
{
    const split_entry_t *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->rank < y->rank ? -1 : (x->rank > y->rank);
}

/* the lowest comm id no member of comm uses, agreed by all of them and marked used here.
 * Under UCOLL_THREAD_MULTIPLE another thread's split may take an id while this one's
 * allreduces wait (they let the entry lock go): every rank then reserves the id found, all
 * learn whether any rank had it taken meanwhile, and if so try again (seeing the reservation).
 * `used` has room for COMM_ID_WORDS words. */
static ucoll_status_t agree_comm_id(ucoll_comm_t *comm, uint64_t *used, uint32_t *out)
{
    uint64_t *mine = comm->ctx->comm_ids_used;
    for (;;) {
        memcpy(used, mine, COMM_ID_WORDS * sizeof(*used));
        ucoll_status_t st =
            ucoll_allreduce(comm, UCOLL_IN_PLACE, used, COMM_ID_WORDS, UCOLL_UINT64, UCOLL_OP_BOR);
        if (st != UCOLL_OK)
            return st;
        uint32_t id = 0;
        while (id < UCOLL_MAX_COMMS && (used[id / 64] >> (id % 64) & 1))
            id++;
        if (id >= UCOLL_MAX_COMMS) { /* every rank of comm sees the same bitmap: all fail */
            if (comm->rank == 0)
                fprintf(stderr,
                        "ucoll: ucoll_comm_split: all %d ids for split communicators are "
                        "taken (failed ones stay taken until ucoll_finalize)\n",
                        UCOLL_MAX_COMMS - 2);
            return UCOLL_ERR_NOT_SUPPORTED;
        }
        const uint64_t bit = UINT64_C(1) << (id % 64);
        const int free_here = !(mine[id / 64] & bit);
        mine[id / 64] |= bit;
        *out = id;
        if (!entry_multiple)
            return UCOLL_OK; /* no other thread: the snapshot is still true */
        int64_t all_free = free_here;
        st = ucoll_allreduce(comm, UCOLL_IN_PLACE, &all_free, 1, UCOLL_INT64, UCOLL_OP_MIN);
        if (st == UCOLL_OK && all_free)
            return UCOLL_OK;
        if (st != UCOLL_OK)
            return st; /* the reservation stays: other ranks may have made the comm */
        if (free_here)
            mine[id / 64] &= ~bit; /* the reservation goes; another split's mark stays */
    }
}

static ucoll_status_t comm_split_locked(ucoll_comm_t *comm, int color, int key,
                                        ucoll_comm_t **newcomm)
{
    if (newcomm == NULL)
        return UCOLL_ERR_INVALID_ARG;
    const ucoll_status_t handle = comm_handle_status(comm);
    if (handle != UCOLL_OK)
        return handle;
    if (comm->revoked)
        return UCOLL_ERR_STATE;
    ucoll_ctx_t *ctx = comm->ctx;
    const int p = comm->size;
    /* gather (color, key) of every rank: an allreduce-sum of zeros with each rank's own slot
     * filled, followed by the bitmaps of comm ids in use (or-ed) */
    int64_t *all = calloc((size_t)p * 2 + COMM_ID_WORDS, sizeof(*all));
    split_entry_t *members = calloc((size_t)p, sizeof(*members));
    if (all == NULL || members == NULL) {
        free(all);
        free(members);
        return UCOLL_ERR_NO_MEMORY;
    }
    all[2 * comm->rank] = color;
    all[2 * comm->rank + 1] = key;
    ucoll_status_t st =
        ucoll_allreduce(comm, UCOLL_IN_PLACE, all, (size_t)p * 2, UCOLL_INT64, UCOLL_OP_SUM);
    /* the lowest id no member of comm uses: each new comm's members are a subset, and the
     * comms of different colors are disjoint, so they may share it */
    uint32_t id = 0;
    if (st == UCOLL_OK)
        st = agree_comm_id(comm, (uint64_t *)all + 2 * p, &id);
    if (st != UCOLL_OK)
        goto out;
    int n = 0, my_new_rank = -1;
    for (int i = 0; i < p; i++) {
        if (color >= 0 && all[2 * i] == color) {
            members[n].color = color;
            members[n].key = all[2 * i + 1];
            members[n].rank = i;
            n++;
        }
    }
    if (color < 0) {
        ctx->comm_ids_used[id / 64] &= ~(UINT64_C(1) << (id % 64)); /* no comm here */
        *newcomm = NULL;
        goto out;
    }
    qsort(members, (size_t)n, sizeof(*members), split_order);
    for (int i = 0; i < n; i++)
        if (members[i].rank == comm->rank)
            my_new_rank = i;
    ucoll_comm_t *nc = comm_new(ctx, my_new_rank, n, id);
    if (nc == NULL) {
        ctx->comm_ids_used[id / 64] &= ~(UINT64_C(1) << (id % 64));
        st = UCOLL_ERR_NO_MEMORY;
        goto out;
    }
    for (int i = 0; i < n; i++)
        nc->world_rank[i] = comm->world_rank[members[i].rank];
    if ((st = comm_init_hosts(nc)) != UCOLL_OK) {
        ctx->comm_ids_used[id / 64] &= ~(UINT64_C(1) << (id % 64));
        comm_discard(nc);
        goto out;
    }
    memcpy(nc->alg, comm->alg, sizeof(nc->alg));
    *newcomm = nc;
out:
    free(all);
    free(members);
    return st;
}

/* the survivors' agreement (shrink.c), then the comm of the members it did not find failed,
 * in comm's order, with the agreed id and comm's algorithm choices */
static ucoll_status_t comm_shrink_locked(ucoll_comm_t *comm, ucoll_comm_t **newcomm)
{
    if (newcomm == NULL)
        return UCOLL_ERR_INVALID_ARG;
    const ucoll_status_t handle = comm_handle_status(comm);
    if (handle != UCOLL_OK)
        return handle;
    ucoll_ctx_t *ctx = comm->ctx;
    uint64_t *failed = NULL;
    uint32_t id = 0;
    const double timeout = ctx->cfg.timeout_s;
    ucoll_status_t st = shrink_agree(comm, timeout > 0 ? now_seconds() + timeout : 0, &failed, &id);
    if (st != UCOLL_OK)
        return st;
    int n = 0, my_new_rank = -1;
    for (int i = 0; i < comm->size; i++)
        if (!(failed[i / 64] >> (i % 64) & 1)) {
            if (i == comm->rank)
                my_new_rank = n;
            n++;
        }
    const uint64_t bit = UINT64_C(1) << (id % 64);
    if (ctx->comm_ids_used[id / 64] & bit) { /* the agreement takes ids no member uses */
        fprintf(stderr, "ucoll: ucoll_comm_shrink: the agreed id %u is in use here\n", id);
        free(failed);
        return UCOLL_ERR_STATE;
    }
    ucoll_comm_t *nc = comm_new(ctx, my_new_rank, n, id);
    if (nc == NULL) {
        free(failed);
        return UCOLL_ERR_NO_MEMORY;
    }
    for (int i = 0, k = 0; i < comm->size; i++)
        if (!(failed[i / 64] >> (i % 64) & 1))
            nc->world_rank[k++] = comm->world_rank[i];
    free(failed);
    if ((st = comm_init_hosts(nc)) != UCOLL_OK) {
        comm_discard(nc);
        return st;
    }
    ctx->comm_ids_used[id / 64] |= bit;
    memcpy(nc->alg, comm->alg, sizeof(nc->alg));
    *newcomm = nc;
    return UCOLL_OK;
}

static ucoll_status_t comm_free_locked(ucoll_comm_t *comm)
{
    const ucoll_status_t handle = comm_handle_status(comm);
    if (handle != UCOLL_OK)
        return handle;
    if (comm == comm->ctx->world)
        return UCOLL_ERR_INVALID_ARG;
    for (ucoll_request_t *r = comm->ctx->active; r != NULL; r = r->next_active)
        if (r->comm == comm)
            return UCOLL_ERR_STATE; /* collectives still running on it */
    ucoll_ctx_t *ctx = comm->ctx;
    /* a revoked one's late messages may still come, and a shrunk one's agreement may still
     * talk: their ids stay taken */
    if (!comm->revoked && !comm->shrunk)
        ctx->comm_ids_used[comm->id / 64] &= ~(UINT64_C(1) << (comm->id % 64));
    comm_kill(comm);
    /* off the live list, onto the end of the freed ones */
    ucoll_comm_t **p = &ctx->comms;
    while (*p != comm)
        p = &(*p)->next;
    *p = comm->next;
    comm->next = NULL;
    if (ctx->freed_tail != NULL)
        ctx->freed_tail->next = comm;
    else
        ctx->freed_head = comm;
    ctx->freed_tail = comm;
    ctx->nfreed++;
    /* beyond the quarantine, release the one freed longest ago that no request refers to */
    if (ctx->nfreed > COMM_QUARANTINE) {
        for (p = &ctx->freed_head; *p != NULL; p = &(*p)->next) {
            ucoll_comm_t *c = *p;
            if (coll_comm_has_requests(c))
                continue;
            *p = c->next;
            if (ctx->freed_tail == c) {
                ctx->freed_tail = NULL;
                for (ucoll_comm_t *t = ctx->freed_head; t != NULL; t = t->next)
                    ctx->freed_tail = t;
            }
            free(c);
            ctx->nfreed--;
            break;
        }
    }
    return UCOLL_OK;
}

/* ---------------------------------------------------------------------------------------------
 * the entry points above, each under the entry lock (UCOLL_THREAD_MULTIPLE only; entry_lock.h)
 * after the guard's refusals
 */

UCOLL_EXPORT ucoll_status_t ucoll_finalize(ucoll_comm_t *world)
{
    if (api_guard() != UCOLL_OK)
        return UCOLL_ERR_STATE;
    entry_lock();
    ucoll_status_t st = finalize_locked(world);
    entry_unlock();
    return st;
}

UCOLL_EXPORT ucoll_status_t ucoll_set_algorithm(ucoll_comm_t *comm, ucoll_coll_t coll,
                                                const char *alg)
{
    if (api_guard() != UCOLL_OK)
        return UCOLL_ERR_STATE;
    entry_lock();
    ucoll_status_t st = set_algorithm_locked(comm, coll, alg);
    entry_unlock();
    return st;
}

UCOLL_EXPORT ucoll_status_t ucoll_comm_split(ucoll_comm_t *comm, int color, int key,
                                             ucoll_comm_t **newcomm)
{
    if (api_guard() != UCOLL_OK)
        return UCOLL_ERR_STATE;
    entry_lock();
    ucoll_status_t st = comm_split_locked(comm, color, key, newcomm);
    entry_unlock();
    return st;
}

UCOLL_EXPORT ucoll_status_t ucoll_comm_shrink(ucoll_comm_t *comm, ucoll_comm_t **newcomm)
{
    if (api_guard() != UCOLL_OK)
        return UCOLL_ERR_STATE;
    entry_lock();
    ucoll_status_t st = comm_shrink_locked(comm, newcomm);
    entry_unlock();
    return st;
}

UCOLL_EXPORT ucoll_status_t ucoll_comm_free(ucoll_comm_t *comm)
{
    if (api_guard() != UCOLL_OK)
        return UCOLL_ERR_STATE;
    entry_lock();
    ucoll_status_t st = comm_free_locked(comm);
    entry_unlock();
    return st;
}
