/*
 * The on-host small-message channel (see shm.h).
 *
 * Invariant: message m of the pair (s -> r) is in slot m % SHM_SLOTS of the ring, written only
 * by s once r's consumed count is > m - SHM_SLOTS, and read only by r once the slot's sequence
 * number is m + 1; each side owns its counter (s: head, r: tail = consumed), so the messages of
 * one pair are read in the order they were written. Cost per message of n <= 4096 bytes: one
 * copy in, one copy out (into the posted receive, or into an unexpected buffer and later out
 * of it), two release-stores, no atomic read-modify-write; r never writes a slot.
 *
 * Single copy: cell c of the pair's ring belongs to s's send with generation g from the store
 * of (g, POSTED) until s has seen any other value there (an answer, or its own CANCELLED); r
 * writes a cell only by one compare-and-swap from (g, POSTED), after a read of the sender's
 * buffer that the swap's success makes valid. Cost per message of n bytes: one descriptor
 * through the ring, one process_vm_readv of n bytes (pinning the sender's pages), one swap.
 * A sender's buffer inside a region (shm_region.h) is read through the receiver's mapping of
 * that region instead: one memcpy, or none when the receiver borrows it (shm_recv's `lend`) and
 * reduces straight out of it; the cell is then answered only once the borrower is done.
 *
 * Offers reverse the roles: the receiver r takes a cell of its own ring to s, stores (g,
 * POSTED) and sends the offer; s may swap it to CLAIMED, write the message into r's buffer
 * through a writable mapping of r's region, and store DONE by a second swap; r withdraws an
 * offer by swapping POSTED (or, after a bounded wait, CLAIMED) to CANCELLED. The receive
 * completes on DONE only, so it never holds a partial write. Cost: one ring message and two
 * swaps instead of a descriptor, a swap and the receiver's copy; the sender's writes are its
 * own pass over data it has in cache.
 */
#include "shm.h"
#include "shm_region.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sched.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

struct shm_slot {
    _Atomic uint32_t seq; /* message number + 1 (mod 2^32) once the slot holds it */
    uint32_t len;
    uint64_t tag;
    unsigned char data[SHM_SLOT_BYTES - SHM_SLOT_HEADER]; /* SHM_MAX_MESSAGE used */
};

/* one pair's ring: the reader's count on a line of its own, then the slots, then the cells of
 * the single-copy descriptors in flight (written by both sides) */
struct shm_ring {
    _Atomic uint32_t consumed;
    unsigned char pad[SHM_RING_CONTROL - sizeof(uint32_t)];
    struct shm_slot slot[SHM_SLOTS];
    _Atomic uint32_t cell[SHM_CELLS];
};

/* a single-copy message as it travels through a slot: the slot's len is SLOT_DESCRIPTOR | the
 * descriptor's size, its data the descriptor */
struct shm_desc {
    uint64_t addr, len; /* the sender's buffer */
    uint32_t cell, gen;
    shm_region_ref_t region; /* the region holding it; fd -1: none */
};
#define SLOT_DESCRIPTOR 0x80000000u
/* a receiver's offer of its buffer (shm_recv_offer) as it travels through a slot: the slot's
 * len is SLOT_OFFER | the offer's size, its tag the receive's */
struct shm_offer {
    struct shm_desc d; /* the receiver's buffer, and the cell of the receiver's ring */
    uint64_t checked;  /* the receive's tag bits compared after matching */
};
#define SLOT_OFFER 0x40000000u
/* a cell holds (generation << CELL_STATE_BITS) | state. A descriptor's cell goes from POSTED
 * to one answer; an offer's from POSTED (offered) to CLAIMED (the sender writes) to DONE
 * (written), or to CANCELLED (withdrawn by the receiver) */
enum { CELL_POSTED = 1, CELL_DONE, CELL_REJECTED, CELL_FAILED, CELL_CANCELLED, CELL_CLAIMED };
#define CELL_STATE_BITS 3
#define CELL_STATE_MASK ((UINT32_C(1) << CELL_STATE_BITS) - 1)
#define CELL_GEN_MASK ((UINT32_C(1) << (32 - CELL_STATE_BITS)) - 1)
_Static_assert(SHM_CELLS == 64, "a peer's cells in use are one 64-bit mask");

static inline uint32_t cell_word(uint32_t gen, uint32_t state)
{
    return (gen << CELL_STATE_BITS) | state;
}

/* CAS of a cell from (gen, POSTED) to (gen, state); 1 if this side won */
static int cell_answer(_Atomic uint32_t *cell, uint32_t gen, uint32_t state)
{
    uint32_t expected = cell_word(gen, CELL_POSTED);
    return atomic_compare_exchange_strong_explicit(cell, &expected, cell_word(gen, state),
                                                   memory_order_acq_rel, memory_order_acquire);
}
_Static_assert(sizeof(struct shm_slot) == SHM_SLOT_BYTES, "slot layout");
_Static_assert(sizeof(struct shm_ring) <= SHM_RING_BYTES && SHM_RING_BYTES % 4096 == 0,
               "ring layout");
_Static_assert((SHM_SLOTS & (SHM_SLOTS - 1)) == 0, "SHM_SLOTS is a power of two");

/* a message that came before its receive */
struct shm_msg {
    struct shm_msg *next;
    uint64_t tag;
    size_t len;
    int descriptor; /* data holds a struct shm_desc */
    unsigned char data[SHM_MAX_MESSAGE];
};

/* a FIFO of ops linked through tp_op_t.next */
typedef struct {
    tp_op_t *head, *tail;
} op_list_t;

static void op_list_push(op_list_t *l, tp_op_t *op)
{
    op->next = NULL;
    if (l->tail != NULL)
        l->tail->next = op;
    else
        l->head = op;
    l->tail = op;
}

/* puts op back at the head of the list */
static void op_list_push_front(op_list_t *l, tp_op_t *op)
{
    op->next = l->head;
    l->head = op;
    if (l->tail == NULL)
        l->tail = op;
}

/* takes op, which follows prev (NULL: op is the head), off the list */
static void op_list_remove(op_list_t *l, tp_op_t *prev, tp_op_t *op)
{
    if (prev != NULL)
        prev->next = op->next;
    else
        l->head = op->next;
    if (l->tail == op)
        l->tail = prev;
    op->next = NULL;
}

/* a peer's region mapped into this process: read-only, or writable for its offers */
struct peer_map {
    void *base; /* NULL: unused */
    uint64_t serial, len;
    int fd;
    unsigned lent; /* receives lent bytes of it, or writes into it, not yet finished: it stays
                    * mapped */
    int writable;
};

/* an offer that came from a peer, kept until a send claims it or it is found withdrawn */
struct shm_offer_rec {
    struct shm_offer_rec *next;
    uint64_t tag;
    struct shm_offer o;
    int map; /* claimed: the entry of the peer's mapped regions written into */
};
/* regions kept mapped per peer; the oldest not lent goes first */
enum { SHM_PEER_MAPS = 8 };

/* one rank of this host, seen from this process */
struct shm_peer {
    int rank; /* world rank */
    int enabled;
    long pid;                  /* enabled: the process holding its segment */
    int fd;                    /* enabled: the segment's descriptor in that process */
    struct shm_ring *out;      /* our ring in its segment (mapped on the first send) */
    int map_failed;            /* mapping it failed (and was reported) */
    ucoll_status_t map_status; /* then: PEER_FAILED (the process was gone) or TRANSPORT */
    uint32_t out_head;         /* messages written */
    uint32_t out_consumed;     /* the reader's count as last read */
    op_list_t pending;         /* sends waiting for a free slot (or a free cell) */
    op_list_t inflight;        /* single-copy sends waiting for their answer */
    uint64_t cells_used;       /* cells of our ring in its segment held by those */
    uint32_t gen;              /* the last single-copy generation used */
    struct shm_ring *in;       /* its ring in our segment */
    uint32_t in_tail;          /* messages consumed */
    op_list_t posted;          /* receives waiting for a message */
    struct shm_msg *unexp_head, *unexp_tail;
    int broken; /* its ring held something no writer could have put there: abandoned */
    struct peer_map maps[SHM_PEER_MAPS];
    unsigned next_map;            /* the entry replaced next */
    struct shm_offer_rec *offers; /* its offers not yet claimed, oldest first */
};

struct shm_chan {
    int rank, nranks, nlocal, me; /* me: this rank's local index */
    int fd;
    void *segment; /* our segment: nlocal rings */
    size_t segment_bytes;
    struct shm_peer *locals; /* by local index (ascending world rank) */
    int *local_of;           /* world rank -> local index, -1 elsewhere */
    unsigned npending;
    unsigned ninflight;    /* single-copy sends waiting for their answer, all peers */
    unsigned noffered;     /* posted receives whose buffer is offered, all peers */
    size_t single_copy;    /* messages of at least this many bytes go by single copy; 0: none */
    int read_failure_said; /* a failed read of a live peer was reported */
    struct shm_msg *free_msgs;
    shm_stats_t stats;
};

#define SHM_MEMFD_NAME "ucoll-shm"

/* frees p's offers: all, or (withdrawn_only) those whose receiver has withdrawn them */
static void drop_offers(struct shm_peer *p, int withdrawn_only)
{
    for (struct shm_offer_rec **r = &p->offers; *r != NULL;) {
        const struct shm_offer_rec *o = *r;
        if (withdrawn_only &&
            atomic_load_explicit(&p->in->cell[o->o.d.cell], memory_order_acquire) ==
                cell_word(o->o.d.gen, CELL_POSTED)) {
            r = &(*r)->next;
            continue;
        }
        *r = o->next;
        free((void *)o);
    }
}

int shm_segment_create(void)
{
    return memfd_create(SHM_MEMFD_NAME, MFD_CLOEXEC);
}

/* maps our ring (local index `slot_index`) of the segment held as descriptor fd by pid */
/* 1 if process pid no longer runs (gone, or a zombie waiting to be reaped) */
int shm_process_gone(long pid)
{
    if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
        return 1;
    char path[64], buf[256];
    snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return 0; /* no procfs: kill() alone decides */
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *close_paren = strrchr(buf, ')'); /* "pid (comm) S ..." */
    return close_paren != NULL && close_paren[1] == ' ' && close_paren[2] == 'Z';
}

/* 1 if descriptor fd of process pid is a memfd named `name` (the kernel may append
 * " (deleted)"); path_out (64 bytes) gets its /proc path. The number may since name another
 * file: a peer that gave up its channel or freed its region has closed it. */
static int proc_fd_is_memfd(long pid, int fd, const char *name, char *path_out)
{
    char target[96], want[64];
    snprintf(path_out, 64, "/proc/%ld/fd/%d", pid, fd);
    snprintf(want, sizeof(want), "/memfd:%s", name);
    const ssize_t n = readlink(path_out, target, sizeof(target) - 1);
    if (n < 0)
        return 0;
    target[n] = '\0';
    const size_t wl = strlen(want);
    return strncmp(target, want, wl) == 0 && (target[wl] == '\0' || target[wl] == ' ');
}

/* the ring of slot_index in peer pid's segment (its descriptor fd); NULL with errno */
static struct shm_ring *map_peer_ring(long pid, int fd, int slot_index)
{
    char path[64];
    errno = 0;
    if (!proc_fd_is_memfd(pid, fd, SHM_MEMFD_NAME, path)) {
        errno = errno != 0 ? errno : EBADF;
        return NULL;
    }
    int pfd = open(path, O_RDWR | O_CLOEXEC);
    if (pfd < 0)
        return NULL;
    void *p = mmap(NULL, SHM_RING_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, pfd,
                   (off_t)slot_index * SHM_RING_BYTES);
    int saved = errno;
    close(pfd);
    errno = saved;
    return p == MAP_FAILED ? NULL : p;
}

ucoll_status_t shm_attach(int rank, int nranks, const int *local_ranks, int nlocal, int fd,
                          shm_chan_t **out)
{
    *out = NULL;
    shm_chan_t *ch = calloc(1, sizeof(*ch));
    if (ch == NULL) {
        if (fd >= 0)
            close(fd);
        return UCOLL_ERR_NO_MEMORY;
    }
    ch->fd = fd;
    ch->rank = rank;
    ch->nranks = nranks;
    ch->nlocal = nlocal;
    ch->me = -1;
    ch->segment = MAP_FAILED;
    ch->local_of = malloc((size_t)nranks * sizeof(int));
    ch->locals = calloc((size_t)(nlocal > 0 ? nlocal : 1), sizeof(*ch->locals));
    if (ch->local_of == NULL || ch->locals == NULL) {
        shm_destroy(ch);
        return UCOLL_ERR_NO_MEMORY;
    }
    for (int i = 0; i < nranks; i++)
        ch->local_of[i] = -1;
    for (int k = 0; k < nlocal; k++) {
        ch->locals[k].rank = local_ranks[k];
        ch->locals[k].fd = -1;
        ch->local_of[local_ranks[k]] = k;
        ch->me = local_ranks[k] == rank ? k : ch->me;
    }
    const char *what = "this rank is not among the ranks of its host";
    if (ch->me < 0 || fd < 0) {
        what = fd < 0 ? "memfd_create failed" : what;
        goto fail;
    }
    ch->segment_bytes = (size_t)ch->nlocal * SHM_RING_BYTES;
    what = "cannot size its segment";
    if (ftruncate(fd, (off_t)ch->segment_bytes) != 0)
        goto fail;
    what = "cannot map its segment";
    ch->segment = mmap(NULL, ch->segment_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (ch->segment == MAP_FAILED)
        goto fail;
    for (int k = 0; k < ch->nlocal; k++)
        ch->locals[k].in = (struct shm_ring *)((char *)ch->segment + (size_t)k * SHM_RING_BYTES);
    *out = ch;
    return UCOLL_OK;

fail:
    fprintf(stderr,
            "ucoll: rank %d: on-host shared memory unavailable (%s: %s); small messages on this "
            "host go through UCX (UCOLL_SHM=0 silences this)\n",
            rank, what, strerror(errno));
    shm_destroy(ch);
    return UCOLL_ERR_TRANSPORT;
}

/* the pair state of a peer on this host (local_of[peer] >= 0) */
static struct shm_peer *peer_of(shm_chan_t *ch, int peer)
{
    return &ch->locals[ch->local_of[peer]];
}

static const struct shm_peer *peer_of_const(const shm_chan_t *ch, int peer)
{
    return &ch->locals[ch->local_of[peer]];
}

void shm_enable_peer(shm_chan_t *ch, int peer, long pid, int fd)
{
    if (peer < 0 || peer >= ch->nranks || peer == ch->rank || ch->local_of[peer] < 0 || fd < 0)
        return; /* another host's, or one without a channel (UCOLL_SHM=0 there) */
    struct shm_peer *p = peer_of(ch, peer);
    p->pid = pid;
    p->fd = fd;
    p->enabled = 1;
}

int shm_reaches(const shm_chan_t *ch, int peer, size_t len)
{
    return ch != NULL &&
           (len <= SHM_MAX_MESSAGE || (ch->single_copy > 0 && len >= ch->single_copy)) &&
           peer >= 0 && peer < ch->nranks && ch->local_of[peer] >= 0 &&
           peer_of_const(ch, peer)->enabled;
}

size_t shm_set_single_copy(shm_chan_t *ch, size_t min_bytes)
{
    ch->single_copy =
        min_bytes > 0 && min_bytes <= SHM_MAX_MESSAGE ? SHM_MAX_MESSAGE + 1 : min_bytes;
    return ch->single_copy;
}

/* the probe let any process of this user read this one (Yama's ptrace_scope 1) */
static int ptracer_any_set;

/* UCOLL_TEST_PTRACE_SCOPE (tests): the probe acts as under that Yama ptrace_scope, and where
 * the kernel has no Yama takes PR_SET_PTRACER's refusal for a grant */
static const char *test_scope(void)
{
    const char *v = getenv("UCOLL_TEST_PTRACE_SCOPE");
    return v != NULL && *v != '\0' ? v : NULL;
}

void shm_single_copy_unprobe(void)
{
    if (ptracer_any_set && (prctl(PR_SET_PTRACER, 0, 0, 0, 0) == 0 || test_scope() != NULL))
        ptracer_any_set = 0;
}

int shm_single_copy_ptracer_any(void)
{
    return ptracer_any_set;
}

ucoll_status_t shm_single_copy_probe(char *why, size_t why_len)
{
    static const char probe[32] = "ucoll single-copy probe";
    char got[sizeof(probe)] = "";
    struct iovec local = {got, sizeof(got)}, remote = {(void *)probe, sizeof(probe)};
    if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != (ssize_t)sizeof(probe) ||
        memcmp(got, probe, sizeof(probe)) != 0) {
        snprintf(why, why_len, "process_vm_readv of this very process failed: %s", strerror(errno));
        return UCOLL_ERR_NOT_SUPPORTED;
    }
    int scope = 0;
    const char *fake = test_scope();
    FILE *f = fake != NULL ? NULL : fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
    if (fake != NULL)
        scope = atoi(fake);
    if (f != NULL) {
        if (fscanf(f, "%d", &scope) != 1)
            scope = 0;
        fclose(f);
    }
    if (scope >= 2) {
        snprintf(why, why_len,
                 "kernel.yama.ptrace_scope is %d: only a privileged process may read another",
                 scope);
        return UCOLL_ERR_NOT_SUPPORTED;
    }
    if (scope == 1) {
        if (prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0) != 0 &&
            !(fake != NULL && errno == EINVAL)) {
            snprintf(why, why_len, "kernel.yama.ptrace_scope is 1 and PR_SET_PTRACER failed: %s",
                     strerror(errno));
            return UCOLL_ERR_NOT_SUPPORTED;
        }
        ptracer_any_set = 1;
    }
    return UCOLL_OK;
}

static void free_msg_list(struct shm_msg *m)
{
    while (m != NULL) {
        struct shm_msg *next = m->next;
        free(m);
        m = next;
    }
}

void shm_destroy(shm_chan_t *ch)
{
    if (ch == NULL)
        return;
    for (int k = 0; ch->locals != NULL && k < ch->nlocal; k++) {
        struct shm_peer *p = &ch->locals[k];
        if (p->out != NULL)
            munmap(p->out, SHM_RING_BYTES);
        for (int m = 0; m < SHM_PEER_MAPS; m++)
            if (p->maps[m].base != NULL)
                munmap(p->maps[m].base, p->maps[m].len);
        free_msg_list(p->unexp_head);
        drop_offers(p, 0);
    }
    if (ch->segment != MAP_FAILED)
        munmap(ch->segment, ch->segment_bytes);
    if (ch->fd >= 0)
        close(ch->fd);
    free_msg_list(ch->free_msgs);
    free(ch->locals);
    free(ch->local_of);
    free(ch);
}

/* memcpy of a message's bytes; one of 8 to 16 (most small collectives' messages) as two
 * overlapping 8-byte moves, without the library call. Both loads come before the stores. */
static inline void copy_bytes(void *dst, const void *src, size_t n)
{
    if (n >= 8 && n <= 16) {
        uint64_t head, tail;
        memcpy(&head, src, 8);
        memcpy(&tail, (const char *)src + n - 8, 8);
        memcpy(dst, &head, 8);
        memcpy((char *)dst + n - 8, &tail, 8);
        return;
    }
    memcpy(dst, src, n);
}

/* the descriptor an unexpected single-copy message holds (its cell checked on arrival) */
static struct shm_desc msg_descriptor(const struct shm_msg *m)
{
    struct shm_desc d;
    memcpy(&d, m->data, sizeof(d));
    return d;
}

/* an unexpected message's buffer, for the next one (take_message) */
static void msg_recycle(shm_chan_t *ch, struct shm_msg *m)
{
    m->next = ch->free_msgs;
    ch->free_msgs = m;
}

/* writes one message into the pair's next slot; 0 if the reader has not consumed it yet, -1 if
 * the reader's count is one it cannot have (beyond what was written, or further back than the
 * ring's size): shared memory is input, anyone of this user may have written it */
static int slot_write(struct shm_peer *p, const void *buf, size_t len, uint64_t tag, uint32_t flag)
{
    if (p->out_head - p->out_consumed >= SHM_SLOTS) {
        const uint32_t c = atomic_load_explicit(&p->out->consumed, memory_order_acquire);
        if ((uint32_t)(p->out_head - c) > SHM_SLOTS || (uint32_t)(c - p->out_consumed) > SHM_SLOTS)
            return -1;
        p->out_consumed = c;
        if (p->out_head - p->out_consumed >= SHM_SLOTS)
            return 0;
    }
    struct shm_slot *s = &p->out->slot[p->out_head & (SHM_SLOTS - 1)];
    s->len = (uint32_t)len | flag;
    s->tag = tag;
    copy_bytes(s->data, buf, len);
    atomic_store_explicit(&s->seq, p->out_head + 1, memory_order_release);
    p->out_head++;
    return 1;
}

static void fail_op(tp_op_t *op)
{
    op->status = UCOLL_ERR_TRANSPORT;
    op->done = 1;
}

static void offer_withdraw(shm_chan_t *ch, struct shm_peer *p, tp_op_t *op);

/* gives up the pair with p after its ring broke the invariant: every waiting op of p fails
 * with UCOLL_ERR_TRANSPORT, its unexpected messages go, its ring is read no more, and later
 * ops with it fail at once; returns how many ops it completed */
static unsigned abandon_peer(shm_chan_t *ch, struct shm_peer *p, const char *what,
                             unsigned long long value)
{
    unsigned n = 0;
    if (p->broken)
        return 0;
    p->broken = 1;
    fprintf(stderr,
            "ucoll: rank %d: the on-host ring shared with rank %d holds %s %llu, which no "
            "writer of it can have put there; messages with rank %d fail (UCOLL_ERR_TRANSPORT)\n",
            ch->rank, p->rank, what, value, p->rank);
    for (tp_op_t *op; (op = p->posted.head) != NULL; n++) {
        op_list_remove(&p->posted, NULL, op);
        /* the receive fails and its buffer is the caller's: no claim may follow, and one the
         * peer holds is waited out as for a cancel (a write must not land after the failure) */
        if (op->offered)
            offer_withdraw(ch, p, op);
        fail_op(op);
    }
    drop_offers(p, 0);
    for (tp_op_t *op; (op = p->pending.head) != NULL; n++) {
        op_list_remove(&p->pending, NULL, op);
        fail_op(op);
        ch->npending--;
    }
    /* our descriptors are taken back before their sends fail: the peer's read must not win
     * once the caller may reuse the buffer */
    for (tp_op_t *op; (op = p->inflight.head) != NULL; n++) {
        op_list_remove(&p->inflight, NULL, op);
        cell_answer(&p->out->cell[op->sc_cell], op->sc_gen, CELL_CANCELLED);
        fail_op(op);
        ch->ninflight--;
    }
    p->cells_used = 0;
    while (p->unexp_head != NULL) {
        struct shm_msg *m = p->unexp_head;
        p->unexp_head = m->next;
        if (m->descriptor) { /* its sender waits for an answer */
            const struct shm_desc d = msg_descriptor(m);
            cell_answer(&p->in->cell[d.cell], d.gen, CELL_FAILED);
        }
        msg_recycle(ch, m);
    }
    p->unexp_tail = NULL;
    return n;
}

/* after a failed map: 1 if the peer's process is gone or dying. A killed process closes its
 * descriptors before it turns into a zombie, so one whose descriptor has just vanished gets
 * up to 200 ms to finish dying; a live peer closes its segment only at its finalize. */
static int peer_died(long pid)
{
    const int fd_gone = errno == ENOENT; /* (readlink's, or open's) */
    for (int ms = 0; ms < 200; ms++) {
        if (shm_process_gone(pid))
            return 1;
        if (!fd_gone)
            return 0;
        const struct timespec one_ms = {0, 1000000};
        nanosleep(&one_ms, NULL);
    }
    return 0;
}

/* the first send to p maps p's ring; 0 (op failed) when that fails. Out of shm_send's line so
 * that every later send stays short. */
__attribute__((noinline, cold)) static int map_on_first_send(shm_chan_t *ch, struct shm_peer *p,
                                                             tp_op_t *op)
{
    if (p->map_failed || (p->out = map_peer_ring(p->pid, p->fd, ch->me)) == NULL) {
        if (!p->map_failed) {
            /* a peer that died before this first send: its failure, not the channel's */
            const int map_errno = errno;
            p->map_status = peer_died(p->pid) ? UCOLL_ERR_PEER_FAILED : UCOLL_ERR_TRANSPORT;
            errno = map_errno;
            if (p->map_status == UCOLL_ERR_TRANSPORT)
                fprintf(stderr,
                        "ucoll: rank %d cannot map the shared memory of rank %d (pid %ld): %s "
                        "(UCOLL_SHM=0 sends small messages on this host through UCX instead)\n",
                        ch->rank, p->rank, p->pid, strerror(errno));
        }
        p->map_failed = 1; /* said once; every send to p fails alike */
        op->status = p->map_status;
        op->done = 1;
        return 0;
    }
    ch->stats.rings++;
    return 1;
}

/* the generation of p's next cell in use (never 0) */
static uint32_t next_gen(const struct shm_peer *p)
{
    const uint32_t gen = (p->gen + 1) & CELL_GEN_MASK;
    return gen != 0 ? gen : 1;
}

/* a free cell of p set POSTED under the next generation, named in d (0: none free). The cell
 * is p's only once cell_commit follows the slot that carries d: the slot's release-store
 * publishes the POSTED with it, and an unwritten slot leaves the cell free. */
static int cell_take(struct shm_peer *p, struct shm_desc *d)
{
    if (p->cells_used == UINT64_MAX)
        return 0;
    d->cell = (uint32_t)__builtin_ctzll(~p->cells_used);
    d->gen = next_gen(p);
    atomic_store_explicit(&p->out->cell[d->cell], cell_word(d->gen, CELL_POSTED),
                          memory_order_relaxed);
    return 1;
}

/* the cell of d, taken by cell_take and sent in a slot, is op's */
static void cell_commit(struct shm_peer *p, const struct shm_desc *d, tp_op_t *op)
{
    p->gen = d->gen;
    p->cells_used |= UINT64_C(1) << d->cell;
    op->sc_cell = d->cell;
    op->sc_gen = d->gen;
}

/* posts op's single-copy descriptor: a free cell set POSTED, then the descriptor in the next
 * slot; as slot_write: 1 posted (op waits in p's inflight list), 0 no free cell or slot, -1 the
 * reader's count is impossible */
static int single_copy_post(shm_chan_t *ch, struct shm_peer *p, tp_op_t *op)
{
    struct shm_desc d;
    memset(&d, 0, sizeof(d));
    if (!cell_take(p, &d))
        return 0;
    d.addr = (uint64_t)(uintptr_t)op->buf;
    d.len = op->expected;
    if (!shm_region_find(op->buf, op->expected, &d.region))
        d.region.fd = -1;
    const int rc = slot_write(p, &d, sizeof(d), op->tag, SLOT_DESCRIPTOR);
    if (rc <= 0)
        return rc;
    cell_commit(p, &d, op);
    op_list_push(&p->inflight, op);
    ch->ninflight++;
    ch->stats.copies_sent++;
    return 1;
}

/* writes op (a message, or a single-copy descriptor) into p's ring; as slot_write. A posted
 * message is done, a posted descriptor waits for its answer. */
static int post_send(shm_chan_t *ch, struct shm_peer *p, tp_op_t *op)
{
    if (op->expected > SHM_MAX_MESSAGE)
        return single_copy_post(ch, p, op);
    const int rc = slot_write(p, op->buf, op->expected, op->tag, 0);
    if (rc > 0)
        op->done = 1;
    return rc;
}

void shm_send(shm_chan_t *ch, int peer, const void *buf, size_t len, uint64_t tag, tp_op_t *op)
{
    struct shm_peer *p = peer_of(ch, peer);
    op->via_shm = 1;
    op->buf = (void *)buf;
    op->tag = tag;
    if (p->out == NULL && !p->broken && !map_on_first_send(ch, p, op))
        return;
    if (p->broken) {
        fail_op(op);
        return;
    }
    op->expected = len;
    if (p->pending.head == NULL) {
        const int rc = post_send(ch, p, op);
        if (rc > 0) {
            ch->stats.sent++;
            return;
        }
        if (rc < 0) {
            abandon_peer(ch, p, "a consumed count of",
                         (unsigned long long)atomic_load(&p->out->consumed));
            fail_op(op);
            return;
        }
    }
    op_list_push(&p->pending, op);
    ch->npending++;
}

static int tags_match(uint64_t a, uint64_t b, uint64_t checked)
{
    return ((a ^ b) & ~checked) == 0;
}

/* completes a matched receive: the length and the `checked` tag bits must agree */
static void deliver(tp_op_t *op, uint64_t tag, const void *data, size_t len)
{
    copy_bytes(op->buf, data, len < op->expected ? len : op->expected);
    op->status = len == op->expected && ((tag ^ op->tag) & op->checked) == 0 ? UCOLL_OK
                                                                             : UCOLL_ERR_TRUNCATED;
    op->done = 1;
}

/* reads len bytes at addr of process pid into buf; 0, or -1 with errno */
static int read_peer(long pid, void *buf, uint64_t addr, uint64_t len)
{
    uint64_t done = 0;
    while (done < len) {
        struct iovec local = {(char *)buf + done, (size_t)(len - done)};
        struct iovec remote = {(void *)(uintptr_t)(addr + done), (size_t)(len - done)};
        const ssize_t n = process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0);
        if (n <= 0) {
            if (n == 0)
                errno = EFAULT;
            return -1;
        }
        done += (uint64_t)n;
    }
    return 0;
}

/* 1 if descriptor fd of process pid is the memfd of region `serial` (path_out as
 * proc_fd_is_memfd's) */
static int names_region(long pid, int fd, uint64_t serial, char *path_out)
{
    char name[48];
    snprintf(name, sizeof(name), SHM_REGION_NAME "%llu", (unsigned long long)serial);
    return proc_fd_is_memfd(pid, fd, name, path_out);
}

/* p's region that ref names, mapped read-only here (on its first use), its entry in p->maps at
 * *slot_out; NULL if it cannot be (or every entry is lent): the caller then reads the sender's
 * memory by process_vm_readv */
static char *peer_region(struct shm_peer *p, const shm_region_ref_t *ref, int writable,
                         int *slot_out)
{
    if (ref->fd < 0 || ref->len == 0 || ref->off > ref->len)
        return NULL;
    for (int m = 0; m < SHM_PEER_MAPS; m++)
        if (p->maps[m].base != NULL && p->maps[m].serial == ref->serial &&
            p->maps[m].fd == ref->fd && p->maps[m].len == ref->len &&
            p->maps[m].writable >= writable) {
            *slot_out = m;
            return p->maps[m].base;
        }
    /* entries of regions their owner has freed go first (their memory stays taken as long as
     * they are mapped), then the oldest; never one a lent receive points into */
    int victim = -1;
    for (int m = 0; m < SHM_PEER_MAPS; m++) {
        struct peer_map *e = &p->maps[m];
        char stale_path[64];
        if (e->base != NULL && e->lent == 0 &&
            !names_region(p->pid, e->fd, e->serial, stale_path)) {
            munmap(e->base, e->len);
            e->base = NULL;
        }
        if (e->base == NULL && victim < 0)
            victim = m;
    }
    for (int k = 0; k < SHM_PEER_MAPS && victim < 0; k++) {
        const int m = (int)((p->next_map + (unsigned)k) % SHM_PEER_MAPS);
        if (p->maps[m].lent == 0)
            victim = m;
    }
    if (victim < 0)
        return NULL;
    char path[64];
    /* the descriptor must name that very region: its number may since name another file */
    if (!names_region(p->pid, ref->fd, ref->serial, path))
        return NULL;
    const int fd = open(path, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    void *base = MAP_FAILED;
    if (fstat(fd, &st) == 0 && st.st_size >= 0 && (uint64_t)st.st_size >= ref->len)
        base = mmap(NULL, ref->len, PROT_READ | (writable ? PROT_WRITE : 0), MAP_SHARED, fd, 0);
    close(fd);
    if (base == MAP_FAILED)
        return NULL;
    struct peer_map *slot = &p->maps[victim];
    p->next_map = (unsigned)(victim + 1) % SHM_PEER_MAPS;
    if (slot->base != NULL)
        munmap(slot->base, slot->len);
    *slot = (struct peer_map){base, ref->serial, ref->len, ref->fd, 0, writable};
    *slot_out = victim;
    return base;
}

/* completes a receive matched to a single-copy descriptor of p: checks it, reads the sender's
 * buffer into op's, and answers in the descriptor's cell. Data counts only if the DONE swap
 * won: a sender that cancelled first may have changed its buffer during the read. */
static void single_copy_read(shm_chan_t *ch, struct shm_peer *p, tp_op_t *op, uint64_t tag,
                             const struct shm_desc *d)
{
    _Atomic uint32_t *cell = &p->in->cell[d->cell]; /* d->cell checked on arrival */
    const char *mapped = NULL;
    int slot = 0;
    if (d->len != op->expected || ((tag ^ op->tag) & op->checked) != 0) {
        cell_answer(cell, d->gen, CELL_REJECTED);
        op->status = UCOLL_ERR_TRUNCATED;
    } else if (d->region.fd >= 0 && d->len <= d->region.len - d->region.off &&
               (mapped = peer_region(p, &d->region, 0, &slot)) != NULL) {
        if (op->lend_ok) { /* the cell stays POSTED until shm_release */
            op->buf = (void *)(mapped + d->region.off);
            op->lent = 1;
            op->lent_map = slot;
            p->maps[slot].lent++;
            op->sc_cell = d->cell;
            op->sc_gen = d->gen;
            op->status = UCOLL_OK;
            ch->stats.copies_lent++;
            ch->stats.copies_read++;
        } else {
            memcpy(op->buf, mapped + d->region.off, d->len);
            op->status = cell_answer(cell, d->gen, CELL_DONE) ? UCOLL_OK : UCOLL_ERR_PEER_FAILED;
            ch->stats.copies_mapped += op->status == UCOLL_OK;
            ch->stats.copies_read += op->status == UCOLL_OK;
        }
    } else if (read_peer(p->pid, op->buf, d->addr, d->len) != 0) {
        const int err = errno;
        const int dead = err == ESRCH || shm_process_gone(p->pid);
        cell_answer(cell, d->gen, CELL_FAILED);
        op->status = dead ? UCOLL_ERR_PEER_FAILED : UCOLL_ERR_TRANSPORT;
        if (!dead && !ch->read_failure_said) {
            ch->read_failure_said = 1;
            fprintf(stderr,
                    "ucoll: rank %d cannot read %llu bytes of rank %d (pid %ld) by single copy: "
                    "%s (UCOLL_SINGLE_COPY_MIN=0 turns single copy off)\n",
                    ch->rank, (unsigned long long)d->len, p->rank, p->pid, strerror(err));
        }
    } else {
        op->status = cell_answer(cell, d->gen, CELL_DONE) ? UCOLL_OK : UCOLL_ERR_PEER_FAILED;
        ch->stats.copies_read++;
    }
    op->done = 1;
}

/* the first unexpected message of p that a receive of tag would match, off the list */
static struct shm_msg *unexpected_take(struct shm_peer *p, uint64_t tag, uint64_t checked)
{
    for (struct shm_msg **m = &p->unexp_head, *prev = NULL; *m != NULL;
         prev = *m, m = &(*m)->next) {
        if (!tags_match((*m)->tag, tag, checked))
            continue;
        struct shm_msg *hit = *m;
        *m = hit->next;
        if (p->unexp_tail == hit)
            p->unexp_tail = prev;
        return hit;
    }
    return NULL;
}

int shm_take_unexpected(shm_chan_t *ch, int peer, uint64_t tag, uint64_t checked)
{
    struct shm_peer *p = peer_of(ch, peer);
    struct shm_msg *hit = unexpected_take(p, tag, checked);
    if (hit == NULL)
        return 0;
    if (hit->descriptor) { /* its sender waits for an answer */
        const struct shm_desc d = msg_descriptor(hit);
        cell_answer(&p->in->cell[d.cell], d.gen, CELL_REJECTED);
    }
    msg_recycle(ch, hit);
    return 1;
}

static unsigned take_ready(shm_chan_t *ch, struct shm_peer *p);

/* 1 if p's ring holds the next message (p's ring of our segment is read from the start) */
static int slot_ready(const struct shm_peer *p)
{
    const struct shm_slot *s = &p->in->slot[p->in_tail & (SHM_SLOTS - 1)];
    return atomic_load_explicit(&s->seq, memory_order_acquire) == p->in_tail + 1;
}

void shm_recv(shm_chan_t *ch, int peer, void *buf, uint64_t tag, uint64_t checked, tp_op_t *op)
{
    struct shm_peer *p = peer_of(ch, peer);
    op->via_shm = 1;
    op->buf = buf;
    op->tag = tag;
    op->checked = checked;
    if (p->broken) {
        fail_op(op);
        return;
    }
    struct shm_msg *hit = unexpected_take(p, tag, checked);
    if (hit != NULL) {
        if (hit->descriptor) {
            const struct shm_desc d = msg_descriptor(hit);
            single_copy_read(ch, p, op, hit->tag, &d);
        } else {
            deliver(op, hit->tag, hit->data, hit->len);
        }
        msg_recycle(ch, hit);
        return;
    }
    op_list_push(&p->posted, op);
    /* the sender ran ahead and its message waits in the ring: p's part of the next progress
     * pass, now (the same messages in the same order, a pass of waiting sooner) */
    if (slot_ready(p))
        take_ready(ch, p);
}

/* takes op off list l; 1 if it was there */
static int op_list_cancel(op_list_t *l, tp_op_t *op)
{
    for (tp_op_t *o = l->head, *prev = NULL; o != NULL; prev = o, o = o->next)
        if (o == op) {
            op_list_remove(l, prev, op);
            return 1;
        }
    return 0;
}

int shm_recv_offer(shm_chan_t *ch, int peer, void *buf, uint64_t tag, uint64_t checked, tp_op_t *op)
{
    struct shm_peer *p = peer_of(ch, peer);
    struct shm_offer o;
    memset(&o, 0, sizeof(o));
    /* sends waiting for a cell, or fewer than a quarter free: the cells go to descriptors,
     * whose rounds come first */
    if (p->broken || op->expected <= SHM_MAX_MESSAGE || ch->single_copy == 0 ||
        op->expected < ch->single_copy || p->pending.head != NULL ||
        __builtin_popcountll(p->cells_used) > SHM_CELLS - SHM_CELLS / 4 ||
        !shm_region_find(buf, op->expected, &o.d.region))
        return 0;
    for (const struct shm_msg *m = p->unexp_head; m != NULL; m = m->next)
        if (tags_match(m->tag, tag, checked))
            return 0; /* the message is here already: an ordinary receive takes it */
    if (p->out == NULL) {
        if (p->map_failed || (p->out = map_peer_ring(p->pid, p->fd, ch->me)) == NULL)
            return 0; /* the first send reports it */
        ch->stats.rings++;
    }
    if (!cell_take(p, &o.d)) /* not reached: a quarter of the cells is free */
        return 0;
    o.d.addr = (uint64_t)(uintptr_t)buf;
    o.d.len = op->expected;
    o.checked = checked;
    if (slot_write(p, &o, sizeof(o), tag, SLOT_OFFER) <= 0)
        return 0; /* a full ring: not worth waiting for; an impossible count: the sends say so */
    cell_commit(p, &o.d, op);
    op->via_shm = 1;
    op->buf = buf;
    op->tag = tag;
    op->checked = checked;
    op->offered = 1;
    op_list_push(&p->posted, op);
    ch->noffered++;
    ch->stats.offers_sent++;
    return 1;
}

/* takes back op's offer, before op completes some other way or is cancelled. A sender that has
 * claimed it gets up to 2 s to finish its write (unless its process is gone), since the caller
 * may reuse the buffer once this returns; one still writing after that finds its DONE refused
 * (its send fails), and the cell, with a new generation, can answer nothing of it. */
static void offer_withdraw(shm_chan_t *ch, struct shm_peer *p, tp_op_t *op)
{
    _Atomic uint32_t *cell = &p->out->cell[op->sc_cell];
    uint32_t w = cell_word(op->sc_gen, CELL_POSTED);
    const uint32_t claimed = cell_word(op->sc_gen, CELL_CLAIMED);
    if (!atomic_compare_exchange_strong_explicit(cell, &w, cell_word(op->sc_gen, CELL_CANCELLED),
                                                 memory_order_acq_rel, memory_order_acquire)) {
        struct timespec t0, t;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (unsigned spins = 1; w == claimed; spins++) {
            if (spins % 1024 == 0) {
                clock_gettime(CLOCK_MONOTONIC, &t);
                if (t.tv_sec - t0.tv_sec >= 2 || shm_process_gone(p->pid))
                    break;
                sched_yield();
            }
            w = atomic_load_explicit(cell, memory_order_acquire);
        }
    }
    if (w == claimed) {
        /* a live writer past its last check may still write one block into op's buffer */
        ch->stats.writes_outrun += !shm_process_gone(p->pid);
        atomic_compare_exchange_strong_explicit(cell, &w, cell_word(op->sc_gen, CELL_CANCELLED),
                                                memory_order_acq_rel, memory_order_acquire);
    }
    p->cells_used &= ~(UINT64_C(1) << op->sc_cell);
    ch->noffered--;
    op->offered = 0;
}

void *shm_write_target(shm_chan_t *ch, int peer, uint64_t tag, size_t len, void **handle)
{
    struct shm_peer *p = peer_of(ch, peer);
    *handle = NULL;
    if (p->broken || p->offers == NULL)
        return NULL;
    drop_offers(p, 1);
    for (struct shm_offer_rec **r = &p->offers; *r != NULL; r = &(*r)->next) {
        struct shm_offer_rec *o = *r;
        if (!tags_match(tag, o->tag, o->o.checked))
            continue;
        *r = o->next;
        const shm_region_ref_t *ref = &o->o.d.region;
        uint32_t w = cell_word(o->o.d.gen, CELL_POSTED);
        char *mapped = NULL;
        int slot = 0;
        /* a length that differs: the receive fails when the ordinary message comes */
        if (o->o.d.len == len && ref->off <= ref->len && len <= ref->len - ref->off &&
            (mapped = peer_region(p, ref, 1, &slot)) != NULL &&
            atomic_compare_exchange_strong_explicit(&p->in->cell[o->o.d.cell], &w,
                                                    cell_word(o->o.d.gen, CELL_CLAIMED),
                                                    memory_order_acq_rel, memory_order_acquire)) {
            o->map = slot;
            p->maps[slot].lent++;
            *handle = o;
            return mapped + ref->off;
        }
        free(o);
        return NULL;
    }
    return NULL;
}

ucoll_status_t shm_write_done(shm_chan_t *ch, int peer, void *handle, int valid)
{
    struct shm_peer *p = peer_of(ch, peer);
    struct shm_offer_rec *o = handle;
    uint32_t w = cell_word(o->o.d.gen, CELL_CLAIMED);
    /* the release orders the written bytes before DONE; the swap fails only if the receiver
     * gave up waiting for this write (its receive has failed) */
    const int won = atomic_compare_exchange_strong_explicit(
        &p->in->cell[o->o.d.cell], &w, cell_word(o->o.d.gen, valid ? CELL_DONE : CELL_FAILED),
        memory_order_acq_rel, memory_order_acquire);
    p->maps[o->map].lent--;
    free(o);
    ch->stats.copies_written += won && valid;
    return won && valid ? UCOLL_OK : UCOLL_ERR_PEER_FAILED;
}

int shm_write_claimed(const shm_chan_t *ch, int peer, const void *handle)
{
    const struct shm_peer *p = peer_of_const(ch, peer);
    const struct shm_offer_rec *o = handle;
    return atomic_load_explicit(&p->in->cell[o->o.d.cell], memory_order_acquire) ==
           cell_word(o->o.d.gen, CELL_CLAIMED);
}

ucoll_status_t shm_release(shm_chan_t *ch, tp_op_t *op, int used)
{
    if (!op->lent)
        return op->status;
    struct shm_peer *p = peer_of(ch, op->peer);
    op->lent = 0;
    op->buf = NULL;
    p->maps[op->lent_map].lent--;
    /* the data counts only if DONE wins: a sender that cancelled first may have changed it.
     * Unused (the receiver gave up), the sender is done with it as after any read. */
    const int won = cell_answer(&p->in->cell[op->sc_cell], op->sc_gen, CELL_DONE);
    if (!used)
        return op->status;
    return op->status = won ? UCOLL_OK : UCOLL_ERR_PEER_FAILED;
}

void shm_cancel(shm_chan_t *ch, tp_op_t *op)
{
    struct shm_peer *p = peer_of(ch, op->peer);
    if (op->is_recv) {
        if (op_list_cancel(&p->posted, op) && op->offered)
            offer_withdraw(ch, p, op);
    } else if (op_list_cancel(&p->pending, op)) {
        ch->npending--;
    } else if (op_list_cancel(&p->inflight, op)) {
        /* the receiver reads no more of the buffer once this swap wins; if it lost, the
         * receiver has answered and is done with it too. The cell is ours again either way */
        cell_answer(&p->out->cell[op->sc_cell], op->sc_gen, CELL_CANCELLED);
        p->cells_used &= ~(UINT64_C(1) << op->sc_cell);
        ch->ninflight--;
    }
}

/* the slot's message to its posted receive, or to the unexpected list; 0 if no memory for
 * the latter (the message stays in its slot until a later pass) */
static int take_message(shm_chan_t *ch, struct shm_peer *p, const struct shm_slot *s, uint64_t tag,
                        size_t len, const struct shm_desc *desc)
{
    for (tp_op_t *op = p->posted.head, *prev = NULL; op != NULL; prev = op, op = op->next) {
        if (!tags_match(tag, op->tag, op->checked))
            continue;
        op_list_remove(&p->posted, prev, op);
        if (op->offered) /* the sender sends after all: it did not claim the offer */
            offer_withdraw(ch, p, op);
        if (desc != NULL) {
            single_copy_read(ch, p, op, tag, desc);
            return 2;
        }
        deliver(op, tag, s->data, len);
        return 1;
    }
    struct shm_msg *m = ch->free_msgs;
    if (m != NULL)
        ch->free_msgs = m->next;
    else if ((m = malloc(sizeof(*m))) == NULL)
        return 0;
    m->next = NULL;
    m->tag = tag;
    m->len = len;
    m->descriptor = desc != NULL;
    if (desc != NULL)
        memcpy(m->data, desc, sizeof(*desc));
    else
        memcpy(m->data, s->data, len);
    if (p->unexp_tail != NULL)
        p->unexp_tail->next = m;
    else
        p->unexp_head = m;
    p->unexp_tail = m;
    ch->stats.unexpected++;
    return 1;
}

/* an offer in slot s of p's ring, kept for the send it names; 0 if it is malformed. Without
 * memory for it the offer is dropped: its receiver takes it back when the message comes. */
static int take_offer(shm_chan_t *ch, struct shm_peer *p, const struct shm_slot *s,
                      uint32_t len_word, uint64_t tag)
{
    struct shm_offer o;
    if ((len_word & ~SLOT_OFFER) != sizeof(o))
        return 0;
    memcpy(&o, s->data, sizeof(o)); /* once, then checked: the slot may change */
    if (o.d.cell >= SHM_CELLS || o.d.gen == 0 || o.d.gen > CELL_GEN_MASK)
        return 0;
    drop_offers(p, 1);
    struct shm_offer_rec *r = malloc(sizeof(*r));
    if (r == NULL)
        return 1;
    r->next = NULL;
    r->tag = tag;
    r->o = o;
    r->map = -1;
    struct shm_offer_rec **tail = &p->offers;
    while (*tail != NULL)
        tail = &(*tail)->next;
    *tail = r;
    ch->stats.offers_received++;
    return 1;
}

/* the messages waiting in p's ring, in order. Out of line, as is write_pending: an idle pass
 * reads one sequence number per peer and keeps the register saves of these loops out of it */
static __attribute__((noinline)) unsigned take_ready(shm_chan_t *ch, struct shm_peer *p)
{
    unsigned events = 0;
    for (int n = 0; n < SHM_SLOTS; n++) { /* a busy sender cannot hold this pass */
        struct shm_slot *s = &p->in->slot[p->in_tail & (SHM_SLOTS - 1)];
        if (atomic_load_explicit(&s->seq, memory_order_acquire) != p->in_tail + 1)
            break;
        /* each header field read once: the slot may change under us */
        const uint32_t len_word = *(volatile const uint32_t *)&s->len;
        const uint64_t tag = *(volatile const uint64_t *)&s->tag;
        if (len_word & SLOT_OFFER) {
            if (!take_offer(ch, p, s, len_word, tag)) {
                events += abandon_peer(ch, p, "an offer word of", len_word);
                break;
            }
            p->in_tail++;
            atomic_store_explicit(&p->in->consumed, p->in_tail, memory_order_release);
            ch->stats.received++;
            events++;
            continue;
        }
        const int descriptor = (len_word & SLOT_DESCRIPTOR) != 0;
        const uint32_t len = len_word & ~SLOT_DESCRIPTOR;
        struct shm_desc d;
        memset(&d, 0, sizeof(d));
        if (descriptor && len == sizeof(d))
            memcpy(&d, s->data, sizeof(d)); /* once, then checked: the slot may change */
        /* a descriptor is taken even before this rank turned single copy on: the rank that
         * sent it may have left init's agreement first; only a receive posted for a length
         * the rings carry can read it */
        if (descriptor
                ? len != sizeof(d) || d.cell >= SHM_CELLS || d.gen == 0 || d.gen > CELL_GEN_MASK
                : len > SHM_MAX_MESSAGE) {
            events += abandon_peer(
                ch, p, descriptor ? "a descriptor word of" : "a message length of", len_word);
            break;
        }
        const int taken = take_message(ch, p, s, tag, len, descriptor ? &d : NULL);
        if (!taken)
            break;
        p->in_tail++;
        atomic_store_explicit(&p->in->consumed, p->in_tail, memory_order_release);
        ch->stats.received++;
        events++;
        if (taken == 2) /* a read: let the caller use the data while it is in cache */
            break;
    }
    return events;
}

/* the sends that waited for a free slot, in order, as far as slots are free */
static __attribute__((noinline)) unsigned write_pending(shm_chan_t *ch)
{
    unsigned events = 0;
    for (int k = 0; ch->npending > 0 && k < ch->nlocal; k++) {
        struct shm_peer *p = &ch->locals[k];
        while (p->pending.head != NULL) {
            tp_op_t *op = p->pending.head;
            op_list_remove(&p->pending, NULL, op); /* post_send may list it as in flight */
            const int rc = post_send(ch, p, op);
            if (rc <= 0)
                op_list_push_front(&p->pending, op);
            if (rc < 0)
                events += abandon_peer(ch, p, "a consumed count of",
                                       (unsigned long long)atomic_load(&p->out->consumed));
            if (rc <= 0)
                break;
            ch->npending--;
            ch->stats.sent++;
            events++;
        }
    }
    return events;
}

/* completes the offered receives whose senders wrote their buffers */
static __attribute__((noinline)) unsigned take_writes(shm_chan_t *ch)
{
    unsigned events = 0;
    for (int k = 0; ch->noffered > 0 && k < ch->nlocal; k++) {
        struct shm_peer *p = &ch->locals[k];
        for (tp_op_t *op = p->posted.head, *prev = NULL, *next; op != NULL; op = next) {
            next = op->next;
            const uint32_t w =
                op->offered ? atomic_load_explicit(&p->out->cell[op->sc_cell], memory_order_acquire)
                            : 0;
            if (!op->offered || w == cell_word(op->sc_gen, CELL_POSTED) ||
                w == cell_word(op->sc_gen, CELL_CLAIMED)) {
                prev = op;
                continue;
            }
            op_list_remove(&p->posted, prev, op);
            p->cells_used &= ~(UINT64_C(1) << op->sc_cell);
            ch->noffered--;
            op->offered = 0;
            op->status = w == cell_word(op->sc_gen, CELL_DONE)     ? UCOLL_OK
                         : w == cell_word(op->sc_gen, CELL_FAILED) ? UCOLL_ERR_PEER_FAILED
                                                                   : UCOLL_ERR_TRANSPORT;
            ch->stats.writes_taken += op->status == UCOLL_OK;
            op->done = 1;
            events++;
        }
    }
    return events;
}

/* completes the single-copy sends whose receivers answered */
static __attribute__((noinline)) unsigned take_answers(shm_chan_t *ch)
{
    unsigned events = 0;
    for (int k = 0; ch->ninflight > 0 && k < ch->nlocal; k++) {
        struct shm_peer *p = &ch->locals[k];
        for (tp_op_t *op = p->inflight.head, *prev = NULL, *next; op != NULL; op = next) {
            next = op->next;
            const uint32_t w =
                atomic_load_explicit(&p->out->cell[op->sc_cell], memory_order_acquire);
            if (w == cell_word(op->sc_gen, CELL_POSTED)) {
                prev = op;
                continue;
            }
            op_list_remove(&p->inflight, prev, op);
            p->cells_used &= ~(UINT64_C(1) << op->sc_cell);
            ch->ninflight--;
            const uint32_t state = w >> CELL_STATE_BITS != op->sc_gen ? 0 : w & CELL_STATE_MASK;
            op->status = state == CELL_DONE       ? UCOLL_OK
                         : state == CELL_REJECTED ? UCOLL_ERR_TRUNCATED
                                                  : UCOLL_ERR_TRANSPORT; /* FAILED, or forged */
            op->done = 1;
            events++;
        }
    }
    return events;
}

unsigned shm_progress(shm_chan_t *ch)
{
    unsigned events = 0;
    if (ch->ninflight > 0)
        events += take_answers(ch);
    if (ch->noffered > 0)
        events += take_writes(ch);
    for (int k = 0; k < ch->nlocal; k++) {
        struct shm_peer *p = &ch->locals[k];
        if (k == ch->me || p->broken)
            continue; /* every other rank of this host may write its ring before it is enabled */
        if (slot_ready(p))
            events += take_ready(ch, p);
    }
    if (ch->npending > 0)
        events += write_pending(ch);
    return events;
}

void shm_test_start_counts(shm_chan_t *ch, int peer, uint32_t start)
{
    struct shm_peer *p = peer_of(ch, peer);
    p->out_head = p->out_consumed = start;
    p->in_tail = start;
    atomic_store_explicit(&p->in->consumed, start, memory_order_release);
    /* each slot as if it held the message SHM_SLOTS before the next one it will hold */
    for (uint32_t j = 0; j < SHM_SLOTS; j++)
        atomic_store_explicit(&p->in->slot[(start + j) & (SHM_SLOTS - 1)].seq,
                              start + j - SHM_SLOTS + 1, memory_order_release);
}

unsigned long long shm_writes_outrun(const shm_chan_t *ch)
{
    return ch != NULL ? ch->stats.writes_outrun : 0;
}

void shm_get_stats(const shm_chan_t *ch, shm_stats_t *stats)
{
    if (ch == NULL)
        memset(stats, 0, sizeof(*stats));
    else
        *stats = ch->stats;
}
