/*
 * The router (see transport.h): UCP contexts, workers and endpoints, the on-host rings, and
 * for every message the choice between them.
 *
 * A peer is connected on its first send or receive (peer_connect): its blob is looked up, an
 * endpoint created on the context it is reached through, its process id kept for probing
 * (on-host, AUTO), and the rings enabled for it. Sends and receives complete through callbacks
 * that write into the op; a dead peer is reported by the endpoint's error handler
 * (UCP_ERR_HANDLING_MODE_PEER), or for a peer on this host without one by probing its process
 * id, which marks the peer so that waits on receives from it can give up (a tag receive is not
 * tied to an endpoint and would otherwise wait forever). A receive is posted on the worker of
 * the context its peer is reached through. Receives from peers reached through the rings are
 * watched for crossed messages by the same periodic check that probes processes.
 */
#include "transport.h"

#include "op.h"
#include "shm.h"
#include "shm_region.h"
#include "ucx_status.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <ucp/api/ucp.h>
#include <time.h>
#include <unistd.h>

#define TP_POOL_CLASSES 48

/* UCP contexts: HOST for the peers on this host that have no UCX error handling (AUTO
 * failure detection), NET for every other peer. Each has its own worker; a context is created
 * only if some peer uses it. */
enum { TP_HOST = 0, TP_NET = 1, TP_NCTX = 2 };
_Static_assert((int)TP_RING_MAX_MESSAGE == (int)SHM_MAX_MESSAGE,
               "transport.h names the rings' limit");

struct tp_ucp {
    ucp_context_h context;
    ucp_worker_h worker;
    ucp_address_t *address;
    size_t address_len;
};

/* one world rank as seen from here: O(p) of these, and an endpoint only once it is used */
struct tp_peer {
    ucp_ep_h ep;            /* NULL until the first send or receive (peer_connect) */
    tp_ctx_t *tp;           /* for ep_error_cb */
    long probe_pid;         /* > 0: on this host without UCX error handling: probe this process */
    double send_wait_until; /* tp_abandon: end of the current wait for sends to this peer */
    ucoll_status_t connect_status; /* != OK: connecting failed, so do its ops */
    unsigned char ctx;             /* TP_HOST or TP_NET: the context it is reached through */
    unsigned char on_host;         /* runs on this host (tp_create's local_ranks) */
    unsigned char shm;             /* its small messages go through the rings */
    unsigned char ucx_errh;        /* the endpoint has UCX peer error handling */
    unsigned char failed;
};

struct tp_ctx {
    struct tp_ucp ucp[TP_NCTX];
    unsigned char *address; /* both worker addresses, packed (tp_local_address) */
    size_t address_len;
    tp_failure_mode_t mode;
    int rank, nranks;
    struct tp_peer *peers;
    shm_chan_t *shm;      /* small messages to on-host peers (AUTO only); NULL: none */
    size_t single_copy;   /* on-host messages of at least this many bytes: shm single copy */
    unsigned ucx_skipped; /* tp_progress passes that left UCX out after shm events */
    int any_failed;
    int close_by_force; /* tp_destroy: no flushing close (tp_close_by_force) */
    int warned_machine; /* peer_connect said that a node's peer is another machine */
    int oversubscribed;
    tp_yield_mode_t yield_mode;
    uint64_t machine;    /* this machine's identity hash (tp_create) */
    tp_lookup_fn lookup; /* a peer's blob, on first use */
    void *lookup_arg;
    int *probed; /* peers with probe_pid > 0 */
    int nprobed, probed_cap;
    tp_op_t *watched;                                 /* receives that may cross channels */
    unsigned long long endpoints, sent_ucx, sent_shm; /* tp_get_stats */
    unsigned probe_polls;                     /* wait passes since the last look at the clock */
    double next_probe;                        /* clock time of the next liveness probe */
    tp_chunk_t *free_chunks[TP_POOL_CLASSES]; /* class k holds chunks of 2^k bytes */
    tp_chunk_t *all_chunks;                   /* every chunk ever mapped (for destroy) */
    int pool_regions;                         /* tp_pool_use_regions */
    unsigned long long pool_quarantined;      /* tp_pool_quarantine */
    unsigned pool_region_chunks;              /* chunks whose memory is a region */
    /* tp_event_fd: an epoll set of the workers' efds, the bounded-sleep timer and the kick
     * eventfd; -1 until first asked for (or if UCX gives no efd) */
    int event_fd, timer_fd, kick_fd;
    int event_fd_failed; /* tp_event_fd could not make one: not tried again */
    int armed;           /* tp_arm returned OK and no progress pass has run since */
};

static double tp_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPUs of this host, not of this process: a launcher that binds every rank to a core of its
 * own (mpirun does by default) leaves each rank an affinity mask of one CPU, yet the ranks do
 * not compete. Ranks share CPUs when there are more of them on the host than online CPUs. */
int tp_host_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n > 0)
        return (int)n;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0)
        return CPU_COUNT(&set);
    return 1;
}

/* UCX's TCP connect blocks by default: to a host whose link is cut it sits in connect() for the
 * kernel's SYN retries (about 2 min), past any UCOLL_TIMEOUT. The network context asks for
 * non-blocking connects unless the user chose (UCX_TCP_CONN_NB) or left TCP out (UCX_TLS):
 * UCX warns of a key no interface takes. The key is the transport's own name before UCX 1.17. */
static const char *tcp_conn_nb_key(void)
{
    if (getenv("UCX_TCP_CONN_NB") != NULL)
        return NULL;
    const char *tls = getenv("UCX_TLS");
    if (tls != NULL && tls[0] != '^' && strstr(tls, "tcp") == NULL && strstr(tls, "all") == NULL)
        return NULL;
    unsigned major, minor, release;
    ucp_get_version(&major, &minor, &release);
    return major == 1 && minor < 17 ? "CONN_NB" : "TCP_CONN_NB";
}

/* 1 if UCX_TLS lets in posix or sysv, read as UCX 1.13 reads it (a leading ^ negates, "all"
 * alone or first allows all, a leading backslash marks a strict name, "name:aux" a wireup-only
 * one, "sm", "shm" and "mm" name both): the key below must reach one, or UCX warns of a key no
 * interface takes. A setting in ucx.conf is not seen here. */
static int mm_in_tls(const char *tls)
{
    if (tls == NULL)
        return 1;
    const int negated = tls[0] == '^';
    int first = 1, posix = 0, sysv = 0;
    char list[256];
    snprintf(list, sizeof(list), "%s", negated ? tls + 1 : tls);
    char *save = NULL;
    for (char *t = strtok_r(list, ",", &save); t != NULL; t = strtok_r(NULL, ",", &save)) {
        if (first && !strcmp(t, "all"))
            return 1; /* UCX allows all, even after ^ */
        first = 0;
        const size_t len = strlen(t);
        if (len > 4 && !strcmp(t + len - 4, ":aux"))
            t[len - 4] = '\0';
        if (t[0] == '\\')
            t++;
        const int both = !strcmp(t, "sm") || !strcmp(t, "shm") || !strcmp(t, "mm");
        posix |= both || !strcmp(t, "posix");
        sysv |= both || !strcmp(t, "sysv");
    }
    return negated ? !(posix && sysv) : posix || sysv;
}

/* UCX's shared-memory transports carry an eager message in receive segments of 8256 bytes by
 * default: a 1 MiB message is 128 of them, each a FIFO handshake. The on-host context, which
 * is eager only, asks for HOST_MM_SEG_SIZE bytes unless the user set a segment size of that
 * family (UCX reads UCX_MM_SEG_SIZE for each of them too; the key would override it) or left
 * posix and sysv out (UCX_TLS). "MM_" is the name of the segment size's table inside the
 * posix, sysv and xpmem configurations: UCX 1.13 and later take it for each. */
#define HOST_MM_SEG_SIZE "20544"
static int host_mm_seg_size_wanted(void)
{
    static const char *const user_set[] = {"UCX_MM_SEG_SIZE", "UCX_POSIX_SEG_SIZE",
                                           "UCX_SYSV_SEG_SIZE", "UCX_XPMEM_SEG_SIZE"};
    for (size_t i = 0; i < sizeof(user_set) / sizeof(user_set[0]); i++)
        if (getenv(user_set[i]) != NULL)
            return 0;
    return mm_in_tls(getenv("UCX_TLS"));
}

/* one UCP context and worker; eager_only: no rendezvous (see transport.h); thread_mode: the
 * worker's, SERIALIZED when several threads use it one at a time */
static ucs_status_t ucp_open(struct tp_ucp *u, int nranks, int eager_only,
                             ucs_thread_mode_t thread_mode)
{
    ucp_config_t *config = NULL;
    ucp_params_t params;
    memset(&params, 0, sizeof(params));
    params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_ESTIMATED_NUM_EPS;
    params.features = UCP_FEATURE_TAG | UCP_FEATURE_WAKEUP; /* tp_event_fd */
    params.estimated_num_eps = (size_t)nranks;
    ucs_status_t st = ucp_config_read(NULL, NULL, &config);
    if (st != UCS_OK)
        return st;
    if (eager_only && getenv("UCX_RNDV_THRESH") == NULL)
        st = ucp_config_modify(config, "RNDV_THRESH", "inf");
    if (st == UCS_OK && eager_only && host_mm_seg_size_wanted())
        st = ucp_config_modify(config, "MM_SEG_SIZE", HOST_MM_SEG_SIZE);
    const char *conn_nb = eager_only ? NULL : tcp_conn_nb_key();
    if (st == UCS_OK && conn_nb != NULL)
        st = ucp_config_modify(config, conn_nb, "y");
    if (st == UCS_OK)
        st = ucp_init(&params, config, &u->context);
    ucp_config_release(config);
    if (st != UCS_OK)
        return st;
    ucp_worker_params_t wparams;
    memset(&wparams, 0, sizeof(wparams));
    wparams.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wparams.thread_mode = thread_mode;
    st = ucp_worker_create(u->context, &wparams, &u->worker);
    if (st != UCS_OK)
        return st;
    return ucp_worker_get_address(u->worker, &u->address, &u->address_len);
}

static void put_len(unsigned char *p, size_t len)
{
    uint32_t v = (uint32_t)len;
    memcpy(p, &v, sizeof(v));
}

static size_t get_len(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

int tp_shm_segment(void)
{
    return shm_segment_create();
}

ucoll_status_t tp_single_copy_probe(char *why, size_t why_len)
{
    return shm_single_copy_probe(why, why_len);
}

void tp_single_copy_unprobe(void)
{
    shm_single_copy_unprobe();
}

int tp_single_copy_ptracer_any(void)
{
    return shm_single_copy_ptracer_any();
}

/* the published blob: process id (8 bytes), machine identity hash (8), on-host segment
 * descriptor (4, -1: no channel), UCOLL_FAILURE_DETECTION (4: it decides which context a peer
 * is reached through, so a rank set otherwise is refused by name), then for each context a
 * 4-byte length (0: none) and its worker address */
enum { BLOB_PID = 0, BLOB_MACHINE = 8, BLOB_FD = 16, BLOB_MODE = 20, BLOB_ADDRS = 24 };

static const char *mode_name(int32_t mode)
{
    return mode == TP_FAILURE_AUTO ? "auto" : mode == TP_FAILURE_UCX ? "ucx" : "timeout";
}

ucoll_status_t tp_create(int rank, int nranks, const int *local_ranks, int nlocal, uint64_t machine,
                         int shm_fd, tp_yield_mode_t yield_mode, tp_failure_mode_t mode,
                         ucoll_thread_level_t level, tp_lookup_fn lookup, void *lookup_arg,
                         tp_ctx_t **out)
{
    tp_ctx_t *tp = calloc(1, sizeof(*tp));
    ucs_status_t st = UCS_OK;

    if (tp == NULL) {
        if (shm_fd >= 0)
            close(shm_fd);
        return UCOLL_ERR_NO_MEMORY;
    }
    tp->rank = rank;
    tp->nranks = nranks;
    tp->mode = mode;
    tp->yield_mode = yield_mode;
    tp->lookup = lookup;
    tp->lookup_arg = lookup_arg;
    tp->oversubscribed = nlocal > tp_host_cpus();
    tp->event_fd = tp->timer_fd = tp->kick_fd = -1;
    tp->peers = calloc((size_t)nranks, sizeof(*tp->peers));
    if (tp->peers == NULL) {
        if (shm_fd >= 0)
            close(shm_fd);
        goto err_nomem;
    }
    for (int k = 0; k < nlocal; k++)
        tp->peers[local_ranks[k]].on_host = 1;
    for (int i = 0; i < nranks; i++) {
        tp->peers[i].tp = tp;
        tp->peers[i].ctx = mode == TP_FAILURE_AUTO && tp->peers[i].on_host ? TP_HOST : TP_NET;
    }
    /* the on-host channel: with AUTO failure detection only (the others exist to keep shared
     * memory out); without it every message goes through UCX */
    if (shm_fd >= 0 && mode == TP_FAILURE_AUTO && nlocal > 1)
        shm_attach(rank, nranks, local_ranks, nlocal, shm_fd, &tp->shm); /* NULL if it fails */
    else if (shm_fd >= 0)
        close(shm_fd);

    /* AUTO: HOST for the ranks on this host (this one included), NET if there are others;
     * otherwise NET for all */
    const int need_host = mode == TP_FAILURE_AUTO;
    const int need_net = mode != TP_FAILURE_AUTO || nlocal < nranks;
    const ucs_thread_mode_t tm =
        level >= UCOLL_THREAD_SERIALIZED ? UCS_THREAD_MODE_SERIALIZED : UCS_THREAD_MODE_SINGLE;
    if (need_host && (st = ucp_open(&tp->ucp[TP_HOST], nranks, 1, tm)) != UCS_OK)
        goto err_ucs;
    if (need_net && (st = ucp_open(&tp->ucp[TP_NET], nranks, 0, tm)) != UCS_OK)
        goto err_ucs;

    tp->address_len = BLOB_ADDRS + 2 * sizeof(uint32_t) + tp->ucp[TP_HOST].address_len +
                      tp->ucp[TP_NET].address_len;
    if ((tp->address = malloc(tp->address_len)) == NULL)
        goto err_nomem;
    int64_t pid = (int64_t)getpid();
    int32_t fd = tp->shm != NULL ? (int32_t)shm_fd : -1;
    tp->machine = machine;
    memcpy(tp->address + BLOB_PID, &pid, sizeof(pid));
    memcpy(tp->address + BLOB_MACHINE, &machine, sizeof(machine));
    memcpy(tp->address + BLOB_FD, &fd, sizeof(fd));
    int32_t mode32 = (int32_t)mode;
    memcpy(tp->address + BLOB_MODE, &mode32, sizeof(mode32));
    unsigned char *p = tp->address + BLOB_ADDRS;
    for (int c = 0; c < TP_NCTX; c++) {
        put_len(p, tp->ucp[c].address_len);
        p += sizeof(uint32_t);
        if (tp->ucp[c].address_len > 0)
            memcpy(p, tp->ucp[c].address, tp->ucp[c].address_len);
        p += tp->ucp[c].address_len;
    }
    *out = tp;
    return UCOLL_OK;

err_ucs:
    fprintf(stderr, "ucoll: UCX initialisation failed: %s (check UCX_TLS / UCX_NET_DEVICES)\n",
            ucs_status_string(st));
    tp_destroy(tp);
    return UCOLL_ERR_TRANSPORT;
err_nomem:
    tp_destroy(tp);
    return UCOLL_ERR_NO_MEMORY;
}

ucoll_status_t tp_local_address(tp_ctx_t *tp, const void **addr, size_t *len)
{
    *addr = tp->address;
    *len = tp->address_len;
    return UCOLL_OK;
}

static void ep_error_cb(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    struct tp_peer *peer = arg;
    (void)ep;
    (void)status;
    peer->failed = 1;
    peer->tp->any_failed = 1;
}

/* the address of context c inside a peer's published blob; NULL if it has none */
static const void *peer_address(const void *blob, size_t len, int c)
{
    const unsigned char *p = blob, *end = p + len;
    if (len < BLOB_ADDRS)
        return NULL;
    p += BLOB_ADDRS;
    for (int i = 0; i <= c; i++) {
        if ((size_t)(end - p) < sizeof(uint32_t))
            return NULL;
        size_t n = get_len(p);
        p += sizeof(uint32_t);
        if ((size_t)(end - p) < n)
            return NULL;
        if (i == c)
            return n > 0 ? p : NULL;
        p += n;
    }
    return NULL;
}

static int probe_add(tp_ctx_t *tp, int peer)
{
    if (tp->nprobed == tp->probed_cap) {
        int cap = tp->probed_cap > 0 ? 2 * tp->probed_cap : 16;
        int *p = realloc(tp->probed, (size_t)cap * sizeof(*p));
        if (p == NULL)
            return -1;
        tp->probed = p;
        tp->probed_cap = cap;
    }
    tp->probed[tp->nprobed++] = peer;
    return 0;
}

/* the first use of peer i: its blob, its endpoint, its probes and rings; OK if already done */
__attribute__((noinline, cold)) static ucoll_status_t peer_connect(tp_ctx_t *tp, int i)
{
    struct tp_peer *peer = &tp->peers[i];
    if (peer->ep != NULL || peer->connect_status != UCOLL_OK)
        return peer->connect_status;
    void *blob = NULL;
    size_t len = 0;
    ucoll_status_t st = tp->lookup(tp->lookup_arg, i, &blob, &len);
    if (st != UCOLL_OK) {
        fprintf(stderr, "ucoll: rank %d cannot look up the address of rank %d\n", tp->rank, i);
        return peer->connect_status = st;
    }
    int32_t peer_mode = (int32_t)tp->mode;
    if (len >= BLOB_ADDRS)
        memcpy(&peer_mode, (const char *)blob + BLOB_MODE, sizeof(peer_mode));
    if (peer_mode != (int32_t)tp->mode) {
        fprintf(stderr,
                "ucoll: UCOLL_FAILURE_DETECTION differs between ranks (\"%s\" on rank %d, "
                "\"%s\" on rank %d): set it the same on every rank\n",
                mode_name((int32_t)tp->mode), tp->rank, mode_name(peer_mode), i);
        free(blob);
        return peer->connect_status = UCOLL_ERR_INVALID_ARG;
    }
    const void *addr = peer_address(blob, len, peer->ctx);
    if (addr == NULL || tp->ucp[peer->ctx].worker == NULL) {
        fprintf(stderr,
                "ucoll: rank %d cannot connect to rank %d: no matching UCX worker (set "
                "UCOLL_FAILURE_DETECTION the same on every rank)\n",
                tp->rank, i);
        free(blob);
        return peer->connect_status = UCOLL_ERR_TRANSPORT;
    }
    int64_t pid;
    uint64_t machine;
    int32_t fd;
    memcpy(&pid, (const char *)blob + BLOB_PID, sizeof(pid));
    memcpy(&machine, (const char *)blob + BLOB_MACHINE, sizeof(machine));
    memcpy(&fd, (const char *)blob + BLOB_FD, sizeof(fd));
    /* on this node by the launcher's account, yet another container or pid namespace: its
     * process id means nothing here and its segment cannot be opened */
    const int same_machine = peer->on_host && machine == tp->machine;
    if (peer->on_host && !same_machine && !tp->warned_machine) {
        tp->warned_machine = 1;
        fprintf(stderr,
                "ucoll: rank %d: rank %d shares this node but not its pid namespace: its death "
                "is noticed by UCOLL_TIMEOUT only, and small messages to it go through UCX\n",
                tp->rank, i);
    }
    ucp_ep_params_t ep_params;
    memset(&ep_params, 0, sizeof(ep_params));
    ep_params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
    ep_params.address = (const ucp_address_t *)addr;
    if (tp->mode == TP_FAILURE_UCX || (tp->mode == TP_FAILURE_AUTO && !peer->on_host)) {
        ep_params.field_mask |=
            UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | UCP_EP_PARAM_FIELD_ERR_HANDLER;
        ep_params.err_mode = UCP_ERR_HANDLING_MODE_PEER;
        ep_params.err_handler.cb = ep_error_cb;
        ep_params.err_handler.arg = peer;
        peer->ucx_errh = 1;
    }
    ucs_status_t ust = ucp_ep_create(tp->ucp[peer->ctx].worker, &ep_params, &peer->ep);
    free(blob);
    if (ust != UCS_OK) {
        fprintf(stderr, "ucoll: rank %d cannot connect to rank %d: %s\n", tp->rank, i,
                ucs_status_string(ust));
        peer->ep = NULL;
        return peer->connect_status = ucx_connect_status(ust);
    }
    tp->endpoints++;
    if (tp->mode == TP_FAILURE_AUTO && same_machine && i != tp->rank && pid > 0) {
        if (probe_add(tp, i) != 0)
            return peer->connect_status = UCOLL_ERR_NO_MEMORY;
        peer->probe_pid = (long)pid;
    }
    if (tp->shm != NULL && same_machine) {
        shm_enable_peer(tp->shm, i, (long)pid, fd);
        peer->shm = (unsigned char)shm_reaches(tp->shm, i, 0);
    }
    return UCOLL_OK;
}

/* peer_connect's answer without a call once the peer is connected: every send and receive asks */
static inline ucoll_status_t peer_ready(tp_ctx_t *tp, int i)
{
    const struct tp_peer *peer = &tp->peers[i];
    if (__builtin_expect(peer->ep != NULL && peer->connect_status == UCOLL_OK, 1))
        return UCOLL_OK;
    return peer_connect(tp, i);
}

/* waits for a close request, at most `seconds`; then lets it go (UCX keeps it) */
static void wait_request(tp_ctx_t *tp, ucs_status_ptr_t req, double seconds)
{
    unsigned idle = 0;
    if (req == NULL || UCS_PTR_IS_ERR(req))
        return;
    const double give_up = tp_clock() + seconds;
    while (ucp_request_check_status(req) == UCS_INPROGRESS && tp_clock() < give_up)
        if (tp_progress(tp) == 0)
            tp_idle(tp, &idle);
    ucp_request_free(req);
}

/* the context that registers memory: NET (rendezvous); HOST sends eagerly, needs none */
static ucp_context_h mem_context(const tp_ctx_t *tp)
{
    return tp->ucp[TP_NET].context;
}

static void tp_event_close(tp_ctx_t *tp);

/* a chunk's memory, a region's or malloc's */
static void chunk_memory_free(tp_chunk_t *c)
{
    if (c->in_region)
        shm_region_free(c->addr);
    else
        free(c->addr);
}

void tp_destroy(tp_ctx_t *tp)
{
    if (tp == NULL)
        return;
    if (tp->peers != NULL) {
        const double give_up = tp_clock() + 2.0;
        for (int i = 0; i < tp->nranks; i++) {
            if (tp->peers[i].ep == NULL)
                continue;
            ucp_request_param_t param;
            memset(&param, 0, sizeof(param));
            param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
            /* A flushing close waits for the peer: forever for a stopped one, and after a
             * dead one UCX 1.13 asserted (ucp_ep.c:437 proto_reqs) in ucp_worker_destroy.
             * Once any peer failed, sends abandoned by failed collectives may still be queued
             * to live peers that have since left (a large eager message whose receiver
             * exited): flushing those never ends either, so then every endpoint closes by
             * force (so also after a failed finalize barrier: tp_close_by_force). Otherwise
             * every rank has passed finalize's barriers, nothing is owed, and the flushes are
             * quick; they share a 2 s budget all the same, after which the rest close by
             * force. */
            const double left = give_up - tp_clock();
            const int force = tp->close_by_force || tp->any_failed || tp->peers[i].failed ||
                              tp->peers[i].ucx_errh || left <= 0;
            param.flags = force ? UCP_EP_CLOSE_FLAG_FORCE : 0;
            wait_request(tp, ucp_ep_close_nbx(tp->peers[i].ep, &param), left > 0 ? left : 0.1);
        }
    }
    shm_destroy(tp->shm);
    tp_event_close(tp);
    while (tp->all_chunks != NULL) {
        tp_chunk_t *c = tp->all_chunks;
        tp->all_chunks = c->all_next;
        if (c->memh != NULL)
            ucp_mem_unmap(mem_context(tp), c->memh);
        chunk_memory_free(c);
        free(c);
    }
    for (int c = 0; c < TP_NCTX; c++) {
        struct tp_ucp *u = &tp->ucp[c];
        if (u->address != NULL)
            ucp_worker_release_address(u->worker, u->address);
        if (u->worker != NULL)
            ucp_worker_destroy(u->worker);
        if (u->context != NULL)
            ucp_cleanup(u->context);
    }
    free(tp->address);
    free(tp->peers);
    free(tp->probed);
    free(tp);
}

/* 1 if the peer of op is marked failed (by ep_error_cb or a liveness probe) */
static int op_peer_failed(const tp_op_t *op)
{
    const tp_ctx_t *tp = op->tp;
    return tp->peers[op->peer].failed;
}

static void send_cb(void *request, ucs_status_t status, void *user_data)
{
    tp_op_t *op = user_data;
    (void)request;
    op->status = ucx_op_status(status, op->is_recv, op_peer_failed(op));
    op->done = 1;
}

static void recv_cb(void *request, ucs_status_t status, const ucp_tag_recv_info_t *info,
                    void *user_data)
{
    tp_op_t *op = user_data;
    (void)request;
    op->status = ucx_op_status(status, op->is_recv, op_peer_failed(op));
    if (status == UCS_OK &&
        (info->length != op->expected || ((info->sender_tag ^ op->tag) & op->checked) != 0))
        op->status = UCOLL_ERR_TRUNCATED;
    if (status == UCS_ERR_CANCELED && op->crossed)
        op->status = UCOLL_ERR_TRUNCATED;
    op->done = 1;
}

/* the worker of the context through which peer is reached */
static ucp_worker_h peer_worker(const tp_ctx_t *tp, int peer)
{
    return tp->ucp[tp->peers[peer].ctx].worker;
}

/* a receive's parameters: it always completes through cb (NO_IMM_CMPL), since UCX 1.13
 * leaves recv_info unset on immediate completion and the callbacks check the length */
static ucp_request_param_t recv_param(ucp_tag_recv_nbx_callback_t cb, void *user_data)
{
    ucp_request_param_t param;
    memset(&param, 0, sizeof(param));
    param.op_attr_mask =
        UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
    param.cb.recv = cb;
    param.user_data = user_data;
    return param;
}

static void drained_cb(void *request, ucs_status_t status, const ucp_tag_recv_info_t *info,
                       void *user_data)
{
    (void)status;
    (void)info;
    free(user_data);
    ucp_request_free(request);
}

/* receives a probed message nobody wants into a scratch buffer and drops it: left in UCX it
 * would hold UCX's memory, keep a rendezvous sender waiting, and could match a later receive
 * of a reused tag */
static void drain_message(ucp_worker_h worker, ucp_tag_message_h msg, size_t len)
{
    static char sink; /* without memory for the data, UCX still needs a receive */
    void *buf = malloc(len > 0 ? len : 1);
    ucp_request_param_t param = recv_param(drained_cb, buf);
    ucs_status_ptr_t req =
        ucp_tag_msg_recv_nbx(worker, buf != NULL ? buf : &sink, buf != NULL ? len : 0, msg, &param);
    if (req == NULL || UCS_PTR_IS_ERR(req))
        free(buf);
}

/* a receive from an on-host peer still waiting on one channel (shm or UCX) for a message that
 * came through the other: the two ranks' lengths lie on either side of the shm size limit
 * (mismatched counts). Completes it with UCOLL_ERR_TRUNCATED, as a wrong length on one
 * channel does. */
static void check_crossed(tp_ctx_t *tp, tp_op_t *op)
{
    if (op->done)
        return;
    if (op->via_shm) { /* did the message come through UCX? */
        ucp_tag_recv_info_t info;
        ucp_worker_h worker = peer_worker(tp, op->peer);
        ucp_tag_message_h msg = ucp_tag_probe_nb(worker, op->tag, ~op->checked, 1, &info);
        if (msg == NULL)
            return;
        drain_message(worker, msg, info.length);
        shm_cancel(tp->shm, op);
        op->status = UCOLL_ERR_TRUNCATED;
        op->done = 1;
    } else if (op->ucp_req != NULL && !op->crossed &&
               shm_take_unexpected(tp->shm, op->peer, op->tag, op->checked)) {
        op->crossed = 1; /* recv_cb turns the cancellation into UCOLL_ERR_TRUNCATED */
        ucp_request_cancel(peer_worker(tp, op->peer), op->ucp_req);
    }
}

/* every few ms while ranks wait: the process-id probes of the on-host peers used so far, and
 * the crossed-message check of every watched receive */
static __attribute__((noinline, cold)) void periodic_checks_due(tp_ctx_t *tp)
{
    tp->probe_polls = 0;
    double now = tp_clock();
    if (now < tp->next_probe)
        return;
    tp->next_probe = now + 0.02;
    for (int k = 0; k < tp->nprobed; k++) {
        struct tp_peer *peer = &tp->peers[tp->probed[k]];
        if (!peer->failed && shm_process_gone(peer->probe_pid)) {
            peer->failed = 1;
            tp->any_failed = 1;
        }
    }
    for (tp_op_t *op = tp->watched; op != NULL; op = op->watch_next)
        check_crossed(tp, op);
}

/* inline: the pass count only; the clock and the checks out of line (their register saves and
 * stack frame would otherwise weigh on every pass) */
static inline void periodic_checks(tp_ctx_t *tp)
{
    if (tp->nprobed > 0 && ++tp->probe_polls >= 256)
        periodic_checks_due(tp);
}

static void watch(tp_ctx_t *tp, tp_op_t *op)
{
    op->watched = 1;
    op->watch_prev = NULL;
    op->watch_next = tp->watched;
    if (tp->watched != NULL)
        tp->watched->watch_prev = op;
    tp->watched = op;
}

static void unwatch(tp_ctx_t *tp, tp_op_t *op)
{
    if (!op->watched)
        return;
    if (op->watch_prev != NULL)
        op->watch_prev->watch_next = op->watch_next;
    else
        tp->watched = op->watch_next;
    if (op->watch_next != NULL)
        op->watch_next->watch_prev = op->watch_prev;
    op->watched = 0;
    op->watch_prev = op->watch_next = NULL;
}

static ucoll_status_t finish_post(tp_op_t *op, ucs_status_ptr_t req)
{
    if (req == NULL) {
        op->done = 1;
        return op->status;
    }
    if (UCS_PTR_IS_ERR(req)) {
        op->status = ucx_op_status(UCS_PTR_STATUS(req), op->is_recv, op_peer_failed(op));
        op->done = 1;
        return op->status;
    }
    op->ucp_req = req;
    return UCOLL_OK;
}

static void op_reset(tp_ctx_t *tp, tp_op_t *op, int peer, size_t len)
{
    op->tp = tp;
    op->done = 0;
    op->status = UCOLL_OK;
    op->expected = len;
    op->peer = peer;
    op->ucp_req = NULL;
    op->is_recv = 0;
    op->tag = op->checked = 0;
    op->via_shm = op->crossed = 0;
    op->lend_ok = op->lent = op->offered = 0;
    op->watched = 0;
    op->watch_prev = op->watch_next = NULL;
}

/* an op that ends at once with status */
static ucoll_status_t op_fail(tp_op_t *op, ucoll_status_t status)
{
    op->status = status;
    op->done = 1;
    return status;
}

tp_op_t *tp_ops_resize(tp_op_t *ops, size_t n)
{
    return realloc(ops, (n > 0 ? n : 1) * (size_t)TP_OP_BYTES);
}

void tp_ops_free(tp_op_t *ops)
{
    free(ops);
}

/* The UCX halves of tp_isend and tp_irecv, out of their line so that a message through the
 * on-host rings (the small-message path) runs short code. */
__attribute__((noinline)) static ucoll_status_t
ucx_send(tp_ctx_t *tp, int peer, const void *buf, size_t len, void *memh, uint64_t tag, tp_op_t *op)
{
    tp->sent_ucx++;
    ucp_request_param_t param;
    memset(&param, 0, sizeof(param));
    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    param.cb.send = send_cb;
    param.user_data = op;
    if (memh != NULL && tp->peers[peer].ctx == TP_NET) {
        param.op_attr_mask |= UCP_OP_ATTR_FIELD_MEMH;
        param.memh = memh;
    }
    return finish_post(op, ucp_tag_send_nbx(tp->peers[peer].ep, buf, len, tag, &param));
}

__attribute__((noinline)) static ucoll_status_t ucx_recv(tp_ctx_t *tp, int peer, void *buf,
                                                         size_t len, void *memh, uint64_t tag,
                                                         uint64_t checked, tp_op_t *op)
{
    op->checked = checked;
    op->tag = tag;
    ucp_request_param_t param = recv_param(recv_cb, op);
    if (memh != NULL && tp->peers[peer].ctx == TP_NET) {
        param.op_attr_mask |= UCP_OP_ATTR_FIELD_MEMH;
        param.memh = memh;
    }
    ucs_status_ptr_t req = ucp_tag_recv_nbx(peer_worker(tp, peer), buf, len, tag, ~checked, &param);
    ucoll_status_t st = finish_post(op, req);
    if (tp->peers[peer].shm && !op->done)
        watch(tp, op);
    return st;
}

/* a message of len bytes to or from a peer reached by the rings goes through them (by single
 * copy if it is larger than their messages, when single_copy allows) */
static inline int through_shm(const tp_ctx_t *tp, size_t len, int single_copy)
{
    return len <= SHM_MAX_MESSAGE || (single_copy && tp->single_copy > 0 && len >= tp->single_copy);
}

void tp_set_single_copy(tp_ctx_t *tp, size_t min_bytes)
{
    if (tp->shm == NULL)
        return;
    tp->single_copy = shm_set_single_copy(tp->shm, min_bytes);
}

int tp_has_rings(const tp_ctx_t *tp)
{
    return tp->shm != NULL;
}

int tp_single_copy_size(const tp_ctx_t *tp, int peer, size_t len)
{
    return tp->single_copy > 0 && len >= tp->single_copy && tp->peers[peer].on_host;
}

size_t tp_single_copy_min(const tp_ctx_t *tp)
{
    return tp->single_copy;
}

ucoll_status_t tp_isend(tp_ctx_t *tp, int peer, const void *buf, size_t len, void *memh,
                        uint64_t tag, int single_copy, tp_op_t *op)
{
    op_reset(tp, op, peer, len);
    ucoll_status_t st = peer_ready(tp, peer);
    if (st != UCOLL_OK)
        return op_fail(op, st);
    if (tp->peers[peer].failed)
        return op_fail(op, UCOLL_ERR_PEER_FAILED);
    if (tp->peers[peer].shm && through_shm(tp, len, single_copy)) {
        tp->sent_shm++;
        shm_send(tp->shm, peer, buf, len, tag, op);
        return UCOLL_OK;
    }
    return ucx_send(tp, peer, buf, len, memh, tag, op);
}

ucoll_status_t tp_irecv(tp_ctx_t *tp, int peer, void *buf, size_t len, void *memh, uint64_t tag,
                        uint64_t checked, int single_copy, tp_op_t *op)
{
    op_reset(tp, op, peer, len);
    op->is_recv = 1; /* tp_abandon cancels it */
    ucoll_status_t st = peer_ready(tp, peer);
    if (st != UCOLL_OK)
        return op_fail(op, st);
    if (tp->peers[peer].shm && through_shm(tp, len, single_copy & TP_SINGLE_COPY)) {
        op->lend_ok = (single_copy & TP_LEND) != 0;
        shm_recv(tp->shm, peer, buf, tag, checked, op);
        if (!op->done)
            watch(tp, op);
        return UCOLL_OK;
    }
    return ucx_recv(tp, peer, buf, len, memh, tag, checked, op);
}

int tp_irecv_offer(tp_ctx_t *tp, int peer, void *buf, size_t len, uint64_t tag, uint64_t checked,
                   tp_op_t *op)
{
    if (tp->shm == NULL || tp->peers[peer].failed || !tp->peers[peer].on_host)
        return 0;
    op_reset(tp, op, peer, len);
    op->is_recv = 1;
    if (peer_ready(tp, peer) != UCOLL_OK || !tp->peers[peer].shm || !through_shm(tp, len, 1) ||
        !shm_recv_offer(tp->shm, peer, buf, tag, checked, op)) {
        op->done = 1; /* nothing posted: the op holds nothing */
        return 0;
    }
    watch(tp, op);
    return 1;
}

void *tp_write_target(tp_ctx_t *tp, int peer, uint64_t tag, size_t len, void **handle)
{
    *handle = NULL;
    if (tp->shm == NULL || !tp->peers[peer].shm || tp->peers[peer].failed)
        return NULL;
    return shm_write_target(tp->shm, peer, tag, len, handle);
}

ucoll_status_t tp_write_done(tp_ctx_t *tp, int peer, void *handle, int valid)
{
    return shm_write_done(tp->shm, peer, handle, valid);
}

int tp_write_claimed(const tp_ctx_t *tp, int peer, const void *handle)
{
    return shm_write_claimed(tp->shm, peer, handle);
}

/* tp_abandon of an op that is not done, or still holds a UCP request or its watch */
static __attribute__((noinline)) void abandon_slow(tp_ctx_t *tp, tp_op_t *op);

void tp_abandon(tp_ctx_t *tp, tp_op_t *op)
{
    /* a completed message of the rings, or one UCX completed in place: nothing left to end */
    if (__builtin_expect(op->done && op->ucp_req == NULL && !op->watched && !op->lent, 1))
        return;
    abandon_slow(tp, op);
}

int tp_region_alloc(size_t len, void **ptr)
{
    return shm_region_alloc(len, ptr);
}

int tp_region_free(void *ptr)
{
    return shm_region_free(ptr);
}

const void *tp_op_lent(const tp_op_t *op)
{
    return op->lent ? op->buf : NULL;
}

ucoll_status_t tp_release(tp_ctx_t *tp, tp_op_t *op)
{
    return shm_release(tp->shm, op, 1);
}

/* a send UCX has not finished packing (the peer's FIFO was full) still reads the caller's
 * buffer, which the caller may free once its failed call returns: give a live peer up to 2 s to
 * take it (one that is only late: still sleeping, computing, or leaving a failed call of its
 * own) */
static void give_send_time(tp_ctx_t *tp, tp_op_t *op)
{
    unsigned idle = 0;
    struct tp_peer *peer = &tp->peers[op->peer];
    const double now = tp_clock();
    if (now > peer->send_wait_until + 2.0) /* a new wait; the segments of one round, */
        peer->send_wait_until = now + 2.0; /* and the calls right after, share the last */
    while (!op->done && !peer->failed && tp_clock() < peer->send_wait_until)
        if (tp_progress(tp) == 0) /* probes the peer's process too */
            tp_idle(tp, &idle);
}

static void abandon_slow(tp_ctx_t *tp, tp_op_t *op)
{
    unwatch(tp, op);
    if (op->lent) /* its bytes unused: the sender may have its buffer back */
        shm_release(tp->shm, op, 0);
    /* the rings, a single-copy send included: taken back at once (its receiver's read then
     * fails, it cannot return the buffer's later contents) */
    if (!op->done && op->via_shm) {
        shm_cancel(tp->shm, op);
        op->status = UCOLL_ERR_PEER_FAILED;
        op->done = 1;
    }
    if (!op->done && op->ucp_req != NULL) {
        unsigned idle = 0;
        if (op->is_recv) {
            /* an unmatched receive cancels at the next progress; give a matched one in
             * flight a moment to end, then let it go */
            ucp_request_cancel(peer_worker(tp, op->peer), op->ucp_req);
            double give_up = tp_clock() + 1.0;
            while (!op->done && tp_clock() < give_up)
                if (tp_progress(tp) == 0)
                    tp_idle(tp, &idle);
        } else {
            /* a send UCX has not finished (the peer's FIFO was full): badinput saw UCX pack a
             * freed buffer and crash */
            give_send_time(tp, op);
        }
        if (!op->done) {
            /* after ucp_request_free UCX calls no callback for it: op may go away */
            op->status = UCOLL_ERR_PEER_FAILED;
            op->done = 1;
        }
    }
    if (op->ucp_req != NULL) {
        ucp_request_free(op->ucp_req);
        op->ucp_req = NULL;
    }
}

unsigned tp_progress(tp_ctx_t *tp)
{
    unsigned events = 0;
    tp->armed = 0;
    periodic_checks(tp);
    /* the on-host channel first; a pass in which it completed something leaves UCX out (up
     * to 8 passes in a row), so that the waiting request sees its message sooner */
    if (tp->shm != NULL && (events = shm_progress(tp->shm)) > 0 && ++tp->ucx_skipped < 8)
        return events;
    tp->ucx_skipped = 0;
    for (int c = 0; c < TP_NCTX; c++)
        if (tp->ucp[c].worker != NULL)
            events += ucp_worker_progress(tp->ucp[c].worker);
    return events;
}

void tp_idle(tp_ctx_t *tp, unsigned *idle_passes)
{
    (*idle_passes)++;
    switch (tp->yield_mode) {
    case TP_YIELD_NEVER:
        return;
    case TP_YIELD_ALWAYS:
        sched_yield();
        return;
    case TP_YIELD_AUTO:
        /* oversubscribed: a spinning rank starves the peer it waits for */
        if (tp->oversubscribed || *idle_passes > 1000)
            sched_yield();
        return;
    }
}

int tp_peer_failed(const tp_ctx_t *tp, int peer)
{
    return tp->peers[peer].failed;
}

int tp_any_peer_failed(const tp_ctx_t *tp)
{
    return tp->any_failed;
}

void tp_close_by_force(tp_ctx_t *tp)
{
    tp->close_by_force = 1;
}

static unsigned size_class(size_t size)
{
    unsigned k = 12; /* smallest chunk: 4 KiB */
    while (k < TP_POOL_CLASSES - 1 && ((size_t)1 << k) < size)
        k++;
    return k;
}

tp_chunk_t *tp_pool_get(tp_ctx_t *tp, size_t size)
{
    unsigned k = size_class(size);
    tp_chunk_t *c = tp->free_chunks[k];
    if (c != NULL) {
        tp->free_chunks[k] = c->next;
        c->next = NULL;
        return c;
    }
    c = calloc(1, sizeof(*c));
    if (c == NULL)
        return NULL;
    c->size = (size_t)1 << k;
    /* a region that cannot be had (descriptors, memfd refused) leaves process_vm_readv; each
     * holds a descriptor, so only the first TP_POOL_MAX_REGIONS chunks are regions */
    c->in_region = tp->pool_regions && tp->pool_region_chunks < TP_POOL_MAX_REGIONS &&
                   shm_region_alloc(c->size, &c->addr) == 0;
    if (!c->in_region && posix_memalign(&c->addr, 4096, c->size) != 0) {
        free(c);
        return NULL;
    }
    if (tp_mem_map(tp, c->addr, c->size, &c->memh) != UCOLL_OK) {
        chunk_memory_free(c);
        free(c);
        return NULL;
    }
    tp->pool_region_chunks += (unsigned)c->in_region;
    c->all_next = tp->all_chunks;
    tp->all_chunks = c;
    return c;
}

void tp_pool_put(tp_ctx_t *tp, tp_chunk_t *chunk)
{
    if (chunk == NULL)
        return;
    if (chunk->stale)
        return; /* still on all_chunks */
    unsigned k = size_class(chunk->size);
    chunk->next = tp->free_chunks[k];
    tp->free_chunks[k] = chunk;
}

void tp_pool_quarantine(tp_ctx_t *tp, tp_chunk_t *chunk)
{
    if (chunk == NULL || !chunk->in_region || chunk->stale)
        return;
    chunk->stale = 1; /* tp_pool_put drops it; all_chunks keeps it for tp_destroy */
    tp->pool_quarantined++;
}

unsigned long long tp_writes_outrun(const tp_ctx_t *tp)
{
    return shm_writes_outrun(tp->shm);
}

void tp_pool_use_regions(tp_ctx_t *tp)
{
    if (tp->pool_regions)
        return;
    tp->pool_regions = 1;
    for (tp_chunk_t *c = tp->all_chunks; c != NULL; c = c->all_next)
        c->stale = 1;
    for (unsigned k = 0; k < TP_POOL_CLASSES; k++)
        tp->free_chunks[k] = NULL;
}

ucoll_status_t tp_mem_map(tp_ctx_t *tp, void *addr, size_t len, void **memh)
{
    ucp_mem_map_params_t mp;
    ucp_mem_h h;
    *memh = NULL;
    if (mem_context(tp) == NULL)
        return UCOLL_OK; /* every peer is reached through HOST: nothing to register */
    memset(&mp, 0, sizeof(mp));
    mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
    mp.address = addr;
    mp.length = len;
    ucs_status_t st = ucp_mem_map(mem_context(tp), &mp, &h);
    if (st != UCS_OK)
        return ucx_status(st);
    *memh = h;
    return UCOLL_OK;
}

void tp_mem_unmap(tp_ctx_t *tp, void *memh)
{
    if (memh != NULL)
        ucp_mem_unmap(mem_context(tp), memh);
}

void tp_get_stats(const tp_ctx_t *tp, tp_stats_t *stats)
{
    shm_stats_t st;
    shm_get_stats(tp->shm, &st);
    stats->endpoints = tp->endpoints;
    stats->rings = st.rings;
    stats->sent_ucx = tp->sent_ucx;
    stats->sent_shm = tp->sent_shm;
    stats->shm_sent = st.sent;
    stats->shm_received = st.received;
    stats->shm_unexpected = st.unexpected;
    stats->copies_sent = st.copies_sent;
    stats->copies_read = st.copies_read;
    stats->copies_mapped = st.copies_mapped;
    stats->copies_lent = st.copies_lent;
    stats->offers_sent = st.offers_sent;
    stats->pool_chunks = 0;
    for (const tp_chunk_t *c = tp->all_chunks; c != NULL; c = c->all_next)
        stats->pool_chunks++;
    stats->copies_written = st.copies_written;
    stats->writes_taken = st.writes_taken;
    stats->writes_outrun = st.writes_outrun;
    stats->pool_quarantined = tp->pool_quarantined;
}

/* ---------------------------------------------------------------------------------------------
 * sleeping on an fd (tp_event_fd, tp_arm): UCX's worker efds wake the process for UCX traffic,
 * the kick eventfd for work posted by this process, and the timer bounds the sleep while
 * anything is outstanding, for what signals no fd: messages on the rings (a peer's store to
 * shared memory), sends waiting for ring space, liveness probes and UCOLL_TIMEOUT.
 */

static void tp_event_close(tp_ctx_t *tp)
{
    if (tp->event_fd >= 0)
        close(tp->event_fd);
    if (tp->timer_fd >= 0)
        close(tp->timer_fd);
    if (tp->kick_fd >= 0)
        close(tp->kick_fd);
    tp->event_fd = tp->timer_fd = tp->kick_fd = -1;
}

static int epoll_add(int epfd, int fd)
{
    struct epoll_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

int tp_event_fd(tp_ctx_t *tp)
{
    if (tp->event_fd >= 0 || tp->event_fd_failed)
        return tp->event_fd; /* (a failure is not retried on every wait) */
    tp->event_fd = epoll_create1(EPOLL_CLOEXEC);
    tp->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    tp->kick_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    int ok = tp->event_fd >= 0 && tp->timer_fd >= 0 && tp->kick_fd >= 0 &&
             epoll_add(tp->event_fd, tp->timer_fd) == 0 &&
             epoll_add(tp->event_fd, tp->kick_fd) == 0;
    for (int c = 0; ok && c < TP_NCTX; c++) {
        int efd;
        if (tp->ucp[c].worker == NULL)
            continue;
        ok = ucp_worker_get_efd(tp->ucp[c].worker, &efd) == UCS_OK &&
             epoll_add(tp->event_fd, efd) == 0;
    }
    if (!ok) {
        tp_event_close(tp);
        tp->event_fd_failed = 1;
    }
    return tp->event_fd;
}

static void drain_fd(int fd)
{
    uint64_t v;
    while (read(fd, &v, sizeof(v)) == (ssize_t)sizeof(v))
        ;
}

ucoll_status_t tp_arm(tp_ctx_t *tp, int outstanding)
{
    if (tp_event_fd(tp) < 0)
        return UCOLL_ERR_NOT_SUPPORTED;
    drain_fd(tp->timer_fd);
    drain_fd(tp->kick_fd);
    /* the rings first: a message already there wakes no fd */
    if (tp->shm != NULL && shm_progress(tp->shm) > 0)
        return UCOLL_INPROGRESS;
    for (int c = 0; c < TP_NCTX; c++) {
        if (tp->ucp[c].worker == NULL)
            continue;
        ucs_status_t st = ucp_worker_arm(tp->ucp[c].worker);
        if (st == UCS_ERR_BUSY)
            return UCOLL_INPROGRESS;
        if (st != UCS_OK)
            return UCOLL_ERR_TRANSPORT;
    }
    /* an expiry already pending stays: threads arming one after another (UCOLL_THREAD_MULTIPLE,
     * all sleeping on this fd) must not keep pushing it back */
    struct itimerspec t;
    memset(&t, 0, sizeof(t)); /* zero: disarmed, nothing to wait for but UCX and a kick */
    if (outstanding && timerfd_gettime(tp->timer_fd, &t) == 0 &&
        (t.it_value.tv_sec | t.it_value.tv_nsec) != 0) {
        tp->armed = 1;
        return UCOLL_OK;
    }
    memset(&t, 0, sizeof(t));
    if (outstanding)
        t.it_value.tv_nsec = (tp->shm != NULL ? TP_SLEEP_RING_US : TP_SLEEP_UCX_US) * 1000L;
    if (timerfd_settime(tp->timer_fd, 0, &t, NULL) != 0)
        return UCOLL_ERR_TRANSPORT;
    tp->armed = 1;
    return UCOLL_OK;
}

void tp_kick(tp_ctx_t *tp)
{
    const uint64_t one = 1;
    if (tp->armed && tp->kick_fd >= 0 && write(tp->kick_fd, &one, sizeof(one)) < 0)
        tp->armed = 1; /* (the counter is full: the fd is readable anyway) */
}

void tp_wake(tp_ctx_t *tp)
{
    const uint64_t one = 1;
    if (tp->kick_fd >= 0 && write(tp->kick_fd, &one, sizeof(one)) < 0)
        return; /* (the counter is full: the fd is readable anyway) */
}

int tp_sleep(tp_ctx_t *tp, int timeout_ms)
{
    struct epoll_event ev;
    return tp->event_fd >= 0 ? epoll_wait(tp->event_fd, &ev, 1, timeout_ms) : -1;
}
