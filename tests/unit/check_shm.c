/*
 * Unit tests of the on-host small-message channel (ucx_transport/shm.c) without UCX or a
 * launcher: two channels, "rank 0" and "rank 1", attached to each other's memfd segments through
 * /proc/<pid>/fd, in one process (so every step is under the test's control) and in two
 * (a parent and a forked child, so the rings are read and written concurrently). Expected
 * values are the messages the tests wrote and the counts they caused.
 */
#include "shm.h"
#include "shm_region.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

enum { CHECKED = 1u << 15 }; /* a tag bit left out of matching and compared after it */

typedef struct {
    shm_chan_t *ch[2];
    int fd[2]; /* their segments (owned by the channels) */
} pair_t;

/* attaches ranks 0 and 1 of this process to each other (two segments, one pid) */
static void pair_open(pair_t *p)
{
    long pid[2] = {(long)getpid(), (long)getpid()};
    int fd[2] = {shm_segment_create(), shm_segment_create()};
    ck_assert_int_ge(fd[0], 0);
    ck_assert_int_ge(fd[1], 0);
    const int locals[2] = {0, 1};
    for (int r = 0; r < 2; r++) {
        p->fd[r] = fd[r];
        ck_assert_int_eq(shm_attach(r, 2, locals, 2, fd[r], &p->ch[r]), UCOLL_OK);
        ck_assert_ptr_nonnull(p->ch[r]);
    }
    for (int r = 0; r < 2; r++)
        shm_enable_peer(p->ch[r], 1 - r, pid[1 - r], fd[1 - r]);
}

static void pair_close(pair_t *p)
{
    shm_destroy(p->ch[0]);
    shm_destroy(p->ch[1]);
}

static void op_init(tp_op_t *op, int peer, size_t len, int is_recv)
{
    memset(op, 0, sizeof(*op));
    op->status = UCOLL_OK;
    op->expected = len;
    op->peer = peer;
    op->is_recv = is_recv;
}

static void send_msg(shm_chan_t *ch, int peer, const void *buf, size_t len, uint64_t tag,
                     tp_op_t *op)
{
    op_init(op, peer, len, 0);
    shm_send(ch, peer, buf, len, tag, op);
}

static void recv_msg(shm_chan_t *ch, int peer, void *buf, size_t len, uint64_t tag, tp_op_t *op)
{
    op_init(op, peer, len, 1);
    shm_recv(ch, peer, buf, tag, CHECKED, op); /* op->expected holds len */
}

static shm_stats_t stats(const shm_chan_t *ch)
{
    shm_stats_t s;
    shm_get_stats(ch, &s);
    return s;
}

/* a receive posted before its message: the message lands in place, nothing unexpected */
START_TEST(posted_then_sent)
{
    pair_t p;
    pair_open(&p);
    uint64_t in = 0x0123456789abcdefULL, out = 0;
    tp_op_t s, r;
    recv_msg(p.ch[1], 0, &out, 8, 42, &r);
    ck_assert_int_eq(r.done, 0);
    ck_assert_uint_eq(shm_progress(p.ch[1]), 0);
    send_msg(p.ch[0], 1, &in, 8, 42, &s);
    ck_assert_int_eq(s.done, 1); /* copied into the ring */
    ck_assert_int_eq(r.done, 0);
    ck_assert_uint_eq(shm_progress(p.ch[1]), 1);
    ck_assert_int_eq(r.done, 1);
    ck_assert_int_eq(r.status, UCOLL_OK);
    ck_assert(out == in);
    ck_assert_uint_eq(stats(p.ch[0]).sent, 1);
    ck_assert_uint_eq(stats(p.ch[1]).received, 1);
    ck_assert_uint_eq(stats(p.ch[1]).unexpected, 0);
    pair_close(&p);
}
END_TEST

/* a message read before its receive is posted waits in the unexpected list */
START_TEST(sent_then_posted)
{
    pair_t p;
    pair_open(&p);
    char in[100], out[100];
    for (int i = 0; i < 100; i++)
        in[i] = (char)(i * 7 + 1);
    memset(out, 0, sizeof(out));
    tp_op_t s, r;
    send_msg(p.ch[0], 1, in, 100, 7, &s);
    ck_assert_uint_eq(shm_progress(p.ch[1]), 1);
    ck_assert_uint_eq(stats(p.ch[1]).unexpected, 1);
    recv_msg(p.ch[1], 0, out, 100, 7, &r);
    ck_assert_int_eq(r.done, 1); /* completed by the post itself */
    ck_assert_int_eq(r.status, UCOLL_OK);
    ck_assert_mem_eq(in, out, 100);
    pair_close(&p);
}
END_TEST

/* receives match by tag, not by order; the largest message fits */
START_TEST(matching_by_tag)
{
    pair_t p;
    pair_open(&p);
    static unsigned char a[SHM_MAX_MESSAGE], b[3], got_a[SHM_MAX_MESSAGE], got_b[3];
    memset(a, 0xa5, sizeof(a));
    memset(b, 0x5a, sizeof(b));
    tp_op_t ra, rb, sa, sb;
    recv_msg(p.ch[1], 0, got_b, 3, 200, &rb);
    recv_msg(p.ch[1], 0, got_a, SHM_MAX_MESSAGE, 100, &ra);
    send_msg(p.ch[0], 1, a, SHM_MAX_MESSAGE, 100, &sa);
    send_msg(p.ch[0], 1, b, 3, 200, &sb);
    ck_assert_uint_eq(shm_progress(p.ch[1]), 2);
    ck_assert(ra.done && rb.done && ra.status == UCOLL_OK && rb.status == UCOLL_OK);
    ck_assert_mem_eq(got_a, a, SHM_MAX_MESSAGE);
    ck_assert_mem_eq(got_b, b, 3);
    ck_assert_uint_eq(stats(p.ch[1]).unexpected, 0);
    pair_close(&p);
}
END_TEST

/* another length, or another value of the checked tag bit, is UCOLL_ERR_TRUNCATED */
START_TEST(mismatch_is_truncated)
{
    pair_t p;
    pair_open(&p);
    uint32_t in[4] = {1, 2, 3, 4}, out[4];
    tp_op_t s, r;
    recv_msg(p.ch[1], 0, out, 12, 5, &r);
    send_msg(p.ch[0], 1, in, 16, 5, &s); /* 4 bytes longer */
    shm_progress(p.ch[1]);
    ck_assert_int_eq(r.done, 1);
    ck_assert_int_eq(r.status, UCOLL_ERR_TRUNCATED);
    recv_msg(p.ch[1], 0, out, 16, 6, &r);
    send_msg(p.ch[0], 1, in, 16, 6 | CHECKED, &s); /* matches, but the checked bit differs */
    shm_progress(p.ch[1]);
    ck_assert_int_eq(r.done, 1);
    ck_assert_int_eq(r.status, UCOLL_ERR_TRUNCATED);
    recv_msg(p.ch[1], 0, out, 16, 8 | CHECKED, &r);
    send_msg(p.ch[0], 1, in, 16, 8 | CHECKED, &s); /* agrees */
    shm_progress(p.ch[1]);
    ck_assert_int_eq(r.status, UCOLL_OK);
    ck_assert_mem_eq(out, in, 16);
    pair_close(&p);
}
END_TEST

/* more sends than slots: the rest wait in order and go once the reader has consumed */
START_TEST(full_ring_waits)
{
    pair_t p;
    pair_open(&p);
    enum { N = 3 * SHM_SLOTS + 1 };
    int in[N], out[N];
    tp_op_t s[N], r[N];
    for (int i = 0; i < N; i++) {
        in[i] = 1000 + i;
        out[i] = -1;
        send_msg(p.ch[0], 1, &in[i], sizeof(int), (uint64_t)i, &s[i]);
        ck_assert_int_eq(s[i].done, i < SHM_SLOTS);
    }
    for (int i = N - 1; i >= 0; i--) /* posted in reverse */
        recv_msg(p.ch[1], 0, &out[i], sizeof(int), (uint64_t)i, &r[i]);
    int rounds = 0;
    while (!r[N - 1].done && rounds++ < 100) {
        shm_progress(p.ch[1]);
        shm_progress(p.ch[0]);
    }
    for (int i = 0; i < N; i++) {
        ck_assert_int_eq(s[i].done, 1);
        ck_assert_int_eq(r[i].done, 1);
        ck_assert_int_eq(out[i], 1000 + i);
    }
    ck_assert_int_le(rounds, N / SHM_SLOTS + 2);
    ck_assert_uint_eq(stats(p.ch[0]).sent, N);
    ck_assert_uint_eq(stats(p.ch[1]).received, N);
    pair_close(&p);
}
END_TEST

/* the 32-bit message counters wrap: 3 rings' worth of messages from 4 before 2^32, with the
 * ring full on the way. Message 2^32 - 1 has sequence number 0: its slot must not be read
 * before it is written */
START_TEST(counters_wrap)
{
    pair_t p;
    pair_open(&p);
    const uint32_t start = UINT32_MAX - 3;
    shm_test_start_counts(p.ch[0], 1, start);
    shm_test_start_counts(p.ch[1], 0, start);
    enum { N = 3 * SHM_SLOTS };
    uint64_t in[N], out[N];
    tp_op_t s[N], r[N];
    for (int i = 0; i < N; i++) {
        in[i] = 0x5eed0000u + (uint64_t)i;
        out[i] = 0;
        recv_msg(p.ch[1], 0, &out[i], 8, (uint64_t)i, &r[i]);
    }
    for (int i = 0; i < 3; i++)
        send_msg(p.ch[0], 1, &in[i], 8, (uint64_t)i, &s[i]);
    ck_assert_uint_eq(shm_progress(p.ch[1]), 3); /* not the unwritten slot of message 3 */
    ck_assert_int_eq(r[3].done, 0);
    for (int i = 3; i < N; i++) {
        send_msg(p.ch[0], 1, &in[i], 8, (uint64_t)i, &s[i]);
        ck_assert_int_eq(s[i].done, i < 3 + SHM_SLOTS); /* slots free once the reader reads */
    }
    for (int pass = 0; pass < 10 && !r[N - 1].done; pass++) {
        shm_progress(p.ch[1]);
        shm_progress(p.ch[0]);
    }
    for (int i = 0; i < N; i++) {
        ck_assert_int_eq(r[i].done, 1);
        ck_assert_int_eq(r[i].status, UCOLL_OK);
        ck_assert(out[i] == in[i]);
    }
    ck_assert_uint_eq(stats(p.ch[1]).unexpected, 0);
    pair_close(&p);
}
END_TEST

/* a cancelled receive or waiting send never completes; the next message goes elsewhere */
START_TEST(cancel)
{
    pair_t p;
    pair_open(&p);
    int in = 77, out = 0, other = 0;
    tp_op_t s, r, r2, w[SHM_SLOTS + 1];
    recv_msg(p.ch[1], 0, &out, sizeof(int), 1, &r);
    shm_cancel(p.ch[1], &r);
    send_msg(p.ch[0], 1, &in, sizeof(int), 1, &s);
    shm_progress(p.ch[1]);
    ck_assert_int_eq(r.done, 0);
    ck_assert_int_eq(out, 0);
    ck_assert_uint_eq(stats(p.ch[1]).unexpected, 1);
    recv_msg(p.ch[1], 0, &other, sizeof(int), 1, &r2);
    ck_assert_int_eq(r2.done, 1);
    ck_assert_int_eq(other, 77);
    for (int i = 0; i < SHM_SLOTS + 1; i++) /* the last one waits */
        send_msg(p.ch[0], 1, &in, sizeof(int), 50 + (uint64_t)i, &w[i]);
    ck_assert_int_eq(w[SHM_SLOTS].done, 0);
    shm_cancel(p.ch[0], &w[SHM_SLOTS]);
    shm_progress(p.ch[1]);
    shm_progress(p.ch[0]);
    ck_assert_int_eq(w[SHM_SLOTS].done, 0);
    ck_assert_uint_eq(stats(p.ch[0]).sent, 1 + SHM_SLOTS);
    pair_close(&p);
}
END_TEST

/* ---- forged ring contents: what another process of this user could write there. The ring
 * written by rank 0 and read by rank 1 is ring 0 of rank 1's segment; the test maps it a
 * second time, as such a process would, and writes slot headers by the layout of shm.c:
 * control line, then slots of { seq u32, len u32, tag u64, data }. */

static unsigned char *map_ring_0_to_1(const pair_t *p)
{
    void *m = mmap(NULL, SHM_RING_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, p->fd[1], 0);
    ck_assert_ptr_ne(m, MAP_FAILED);
    return m;
}

static void forge_slot(unsigned char *ring, int slot, uint32_t seq, uint32_t len, uint64_t tag)
{
    unsigned char *h = ring + SHM_RING_CONTROL + (size_t)slot * SHM_SLOT_BYTES;
    memcpy(h + 4, &len, 4);
    memcpy(h + 8, &tag, 8);
    __atomic_store_n((uint32_t *)(void *)h, seq, __ATOMIC_RELEASE);
}

/* the rank-1 side of the pair gives up rank 0: every op with it fails, nothing is written */
static void assert_abandoned(pair_t *p)
{
    unsigned char out[16], want[16];
    memset(out, 0x3c, sizeof(out));
    memcpy(want, out, sizeof(out));
    tp_op_t r, s;
    recv_msg(p->ch[1], 0, out, 8, 9, &r);
    ck_assert_int_eq(r.done, 1);
    ck_assert_int_eq(r.status, UCOLL_ERR_TRANSPORT);
    send_msg(p->ch[1], 0, out, 8, 9, &s);
    ck_assert_int_eq(s.done, 1);
    ck_assert_int_eq(s.status, UCOLL_ERR_TRANSPORT);
    ck_assert_mem_eq(out, want, sizeof(out));
    ck_assert_uint_eq(stats(p->ch[1]).received, 0);
    ck_assert_uint_eq(stats(p->ch[1]).unexpected, 0);
    ck_assert_uint_eq(stats(p->ch[1]).sent, 0);
}

/* a slot whose length is beyond any message, with no receive posted (the message would be
 * copied to the unexpected list: 4 GiB out of a 4 KiB slot) */
START_TEST(forged_length_unexpected)
{
    pair_t p;
    pair_open(&p);
    unsigned char *ring = map_ring_0_to_1(&p);
    forge_slot(ring, 0, 1, 0xfffffff0u, 9);
    shm_progress(p.ch[1]);
    shm_progress(p.ch[1]);
    assert_abandoned(&p);
    munmap(ring, SHM_RING_BYTES);
    pair_close(&p);
}
END_TEST

/* the same with a receive posted, and a length just over the limit: the receive fails with
 * UCOLL_ERR_TRANSPORT (not TRUNCATED: the peer did not send it) and its buffer is untouched */
START_TEST(forged_length_posted)
{
    pair_t p;
    pair_open(&p);
    unsigned char *ring = map_ring_0_to_1(&p);
    unsigned char out[16], want[16];
    memset(out, 0x77, sizeof(out));
    memcpy(want, out, sizeof(out));
    tp_op_t r;
    recv_msg(p.ch[1], 0, out, 8, 9, &r);
    ck_assert_int_eq(r.done, 0);
    forge_slot(ring, 0, 1, SHM_MAX_MESSAGE + 1, 9);
    ck_assert_uint_eq(shm_progress(p.ch[1]), 1); /* the failed receive */
    ck_assert_int_eq(r.done, 1);
    ck_assert_int_eq(r.status, UCOLL_ERR_TRANSPORT);
    ck_assert_mem_eq(out, want, sizeof(out));
    assert_abandoned(&p);
    munmap(ring, SHM_RING_BYTES);
    pair_close(&p);
}
END_TEST

/* a genuine message, then a forged one in the next slot: the first is delivered, the second
 * abandons the ring */
START_TEST(forged_after_genuine)
{
    pair_t p;
    pair_open(&p);
    unsigned char *ring = map_ring_0_to_1(&p);
    uint64_t in = 0x1122334455667788ULL, out = 0;
    tp_op_t s, r;
    send_msg(p.ch[0], 1, &in, 8, 4, &s);
    forge_slot(ring, 1, 2, UINT32_MAX, 5);
    recv_msg(p.ch[1], 0, &out, 8, 4, &r);
    shm_progress(p.ch[1]);
    ck_assert_int_eq(r.done, 1);
    ck_assert_int_eq(r.status, UCOLL_OK);
    ck_assert(out == in);
    ck_assert_uint_eq(stats(p.ch[1]).received, 1);
    tp_op_t r2;
    uint64_t out2 = 0;
    recv_msg(p.ch[1], 0, &out2, 8, 5, &r2);
    ck_assert_int_eq(r2.done, 1);
    ck_assert_int_eq(r2.status, UCOLL_ERR_TRANSPORT);
    ck_assert(out2 == 0);
    munmap(ring, SHM_RING_BYTES);
    pair_close(&p);
}
END_TEST

/* the reader's consumed count, forged beyond what the writer wrote: rank 0's next send to a
 * full ring fails instead of overwriting slots or waiting for ever */
START_TEST(forged_consumed_count)
{
    pair_t p;
    pair_open(&p);
    unsigned char *ring = map_ring_0_to_1(&p);
    int in = 5;
    tp_op_t s[SHM_SLOTS + 1];
    for (int i = 0; i < SHM_SLOTS; i++) {
        send_msg(p.ch[0], 1, &in, sizeof(int), (uint64_t)i, &s[i]);
        ck_assert_int_eq(s[i].done, 1);
    }
    __atomic_store_n((uint32_t *)(void *)ring, 1000u, __ATOMIC_RELEASE);
    send_msg(p.ch[0], 1, &in, sizeof(int), 99, &s[SHM_SLOTS]);
    ck_assert_int_eq(s[SHM_SLOTS].done, 1);
    ck_assert_int_eq(s[SHM_SLOTS].status, UCOLL_ERR_TRANSPORT);
    ck_assert_uint_eq(stats(p.ch[0]).sent, SHM_SLOTS);
    munmap(ring, SHM_RING_BYTES);
    pair_close(&p);
}
END_TEST

/* shm_reaches: only enabled peers of this host, only messages that fit a slot */
START_TEST(reaches)
{
    long pid[3] = {(long)getpid(), (long)getpid(), 0};
    int fd[3] = {shm_segment_create(), shm_segment_create(), -1};
    const int locals[2] = {0, 1}; /* rank 2 is on another host */
    shm_chan_t *ch0 = NULL, *ch1 = NULL;
    ck_assert_int_eq(shm_attach(0, 3, locals, 2, fd[0], &ch0), UCOLL_OK);
    ck_assert_int_eq(shm_attach(1, 3, locals, 2, fd[1], &ch1), UCOLL_OK);
    ck_assert_int_eq(shm_reaches(ch0, 1, 8), 0); /* not enabled yet */
    shm_enable_peer(ch0, 1, pid[1], fd[1]);
    shm_enable_peer(ch0, 2, (long)getpid(), fd[0]); /* another host's: stays off */
    ck_assert_int_eq(shm_reaches(ch0, 1, 0), 1);
    ck_assert_int_eq(shm_reaches(ch0, 1, SHM_MAX_MESSAGE), 1);
    ck_assert_int_eq(shm_reaches(ch0, 1, SHM_MAX_MESSAGE + 1), 0);
    ck_assert_int_eq(shm_reaches(ch0, 2, 8), 0);
    ck_assert_int_eq(shm_reaches(NULL, 1, 8), 0);
    shm_enable_peer(ch1, 0, pid[0], -1); /* a peer without a segment (UCOLL_SHM=0 there) */
    ck_assert_int_eq(shm_reaches(ch1, 0, 8), 0);
    shm_destroy(ch0);
    shm_destroy(ch1);
}
END_TEST

/* a rank not among its host's ranks, or without a segment: attach fails, says so, and leaves
 * nothing (its own segment closed) */
START_TEST(attach_failure)
{
    int fd = shm_segment_create();
    const int locals[1] = {1};
    shm_chan_t *ch = (shm_chan_t *)&fd; /* must be reset */
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(shm_attach(0, 2, locals, 1, fd, &ch), UCOLL_ERR_TRANSPORT);
    ck_assert_ptr_null(ch);
    ck_assert_int_eq(fcntl(fd, F_GETFD), -1);
    ch = (shm_chan_t *)&fd;
    ck_assert_int_eq(shm_attach(1, 2, locals, 1, -1, &ch), UCOLL_ERR_TRANSPORT);
    ck_assert_ptr_null(ch);
}
END_TEST

/* rings are mapped on the first send to a peer, once; a peer's segment that cannot be opened
 * fails that send with UCOLL_ERR_TRANSPORT */
START_TEST(ring_mapped_on_first_send)
{
    long pid = (long)getpid();
    int fd[3] = {shm_segment_create(), shm_segment_create(), 1000000}; /* 2: no such fd */
    const int locals[3] = {0, 1, 2};
    shm_chan_t *ch = NULL;
    ck_assert_int_eq(shm_attach(0, 3, locals, 3, fd[0], &ch), UCOLL_OK);
    ck_assert_int_eq(ftruncate(fd[1], 3 * SHM_RING_BYTES), 0); /* as rank 1's attach would */
    ck_assert_uint_eq(stats(ch).rings, 0);
    shm_enable_peer(ch, 1, pid, fd[1]);
    shm_enable_peer(ch, 2, pid, fd[2]);
    ck_assert_uint_eq(stats(ch).rings, 0); /* enabling maps nothing */
    uint32_t v = 7;
    tp_op_t s[3];
    send_msg(ch, 1, &v, 4, 1, &s[0]);
    send_msg(ch, 1, &v, 4, 2, &s[1]);
    ck_assert(s[0].done && s[0].status == UCOLL_OK && s[1].done && s[1].status == UCOLL_OK);
    ck_assert_uint_eq(stats(ch).rings, 1);
    send_msg(ch, 2, &v, 4, 1, &s[2]);
    ck_assert(s[2].done);
    ck_assert_int_eq(s[2].status, UCOLL_ERR_TRANSPORT);
    ck_assert_uint_eq(stats(ch).rings, 1);
    ck_assert_uint_eq(stats(ch).sent, 2);
    shm_destroy(ch);
    close(fd[1]);
}
END_TEST

/* rank 0's channel, with rank 1 on this host as process pid (descriptor 3: never its segment) */
static shm_chan_t *channel_with_peer(pid_t pid)
{
    int fd0 = shm_segment_create();
    const int locals[2] = {0, 1};
    shm_chan_t *ch = NULL;
    ck_assert_int_eq(shm_attach(0, 2, locals, 2, fd0, &ch), UCOLL_OK);
    shm_enable_peer(ch, 1, (long)pid, 3);
    return ch;
}

/* a peer that died before this rank's first send to it: the ring cannot be mapped because the
 * process is gone, which is the peer's failure (PEER_FAILED), not the channel's (TRANSPORT) */
START_TEST(first_send_to_a_dead_peer)
{
    pid_t dead = fork();
    ck_assert_int_ge(dead, 0);
    if (dead == 0)
        _exit(0);
    int status;
    ck_assert_int_eq(waitpid(dead, &status, 0), dead); /* reaped: its pid names no process */
    shm_chan_t *ch = channel_with_peer(dead);
    uint32_t v = 7;
    tp_op_t s[2];
    send_msg(ch, 1, &v, 4, 1, &s[0]);
    ck_assert(s[0].done);
    ck_assert_int_eq(s[0].status, UCOLL_ERR_PEER_FAILED);
    send_msg(ch, 1, &v, 4, 2, &s[1]); /* and every later send alike */
    ck_assert(s[1].done);
    ck_assert_int_eq(s[1].status, UCOLL_ERR_PEER_FAILED);
    ck_assert_uint_eq(stats(ch).rings, 0);
    shm_destroy(ch);
}
END_TEST

/* the same for a peer killed but not yet reaped by its parent (a launcher reaps it a moment
 * later): a zombie still answers kill(pid, 0), yet it has no descriptors left to map */
START_TEST(first_send_to_a_zombie_peer)
{
    pid_t dead = fork();
    ck_assert_int_ge(dead, 0);
    if (dead == 0)
        _exit(0);
    siginfo_t info;
    /* dead, left unreaped (WNOWAIT) */
    ck_assert_int_eq(waitid(P_PID, (id_t)dead, &info, WEXITED | WNOWAIT), 0);
    ck_assert_int_eq(kill(dead, 0), 0);
    shm_chan_t *ch = channel_with_peer(dead);
    uint32_t v = 7;
    tp_op_t s;
    send_msg(ch, 1, &v, 4, 1, &s);
    ck_assert(s.done);
    ck_assert_int_eq(s.status, UCOLL_ERR_PEER_FAILED);
    shm_destroy(ch);
    int status;
    ck_assert_int_eq(waitpid(dead, &status, 0), dead);
}
END_TEST

/* two processes: N round trips of a counter, then a burst from the child with receives posted
 * late (every message unexpected) */
/* progresses ch until *done: spins a little, then sleeps for a moment between polls. Yielding
 * alone is not enough on a loaded machine: a yielding process waits behind every CPU-bound one
 * for a whole time slice, each turn of the ping-pong (10000 turns took over 60 s beside six busy
 * loops); one woken from a sleep is run ahead of them. */
static void progress_until(shm_chan_t *ch, volatile int *done)
{
    for (unsigned spins = 0; !*done; spins++) {
        shm_progress(ch);
        if (spins >= 64) {
            const struct timespec pause = {0, 20 * 1000};
            nanosleep(&pause, NULL);
        }
    }
}

START_TEST(two_processes)
{
    enum { ROUND_TRIPS = 10000, BURST = 1000 }; /* 625 wraps of an 8-slot ring each way */
    int fd[2] = {shm_segment_create(), shm_segment_create()};
    int sync[2][2];
    ck_assert_int_eq(pipe(sync[0]), 0);
    ck_assert_int_eq(pipe(sync[1]), 0);
    long pid[2] = {(long)getpid(), 0};
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    const int me = child == 0;
    pid[1] = child == 0 ? (long)getpid() : (long)child;
    close(fd[1 - me]); /* the other's copy; it is reached through /proc/<pid>/fd */
    shm_chan_t *ch = NULL;
    char byte = 0;
    /* the child's /proc/<pid>/fd exists once it runs: both attach after a first handshake,
     * and send after a second (a segment must be sized before its owner's peer writes) */
    if (me == 1)
        ck_assert_int_eq(write(sync[1][1], &byte, 1), 1);
    else
        ck_assert_int_eq(read(sync[1][0], &byte, 1), 1);
    const int locals[2] = {0, 1};
    if (shm_attach(me, 2, locals, 2, fd[me], &ch) != UCOLL_OK)
        _exit(3);
    shm_enable_peer(ch, 1 - me, pid[1 - me], fd[1 - me]);
    ck_assert_int_eq(write(sync[me][1], &byte, 1), 1);
    ck_assert_int_eq(read(sync[1 - me][0], &byte, 1), 1);
    uint64_t value = 0, got = 0;
    int bad = 0;
    for (long i = 0; i < ROUND_TRIPS; i++) {
        tp_op_t s, r;
        if ((i & 1) == (long)me) { /* my turn: send value + 1 */
            value++;
            send_msg(ch, 1 - me, &value, 8, (uint64_t)i, &s);
            progress_until(ch, &s.done);
        } else {
            recv_msg(ch, 1 - me, &got, 8, (uint64_t)i, &r);
            progress_until(ch, &r.done);
            bad += r.status != UCOLL_OK || got != value + 1;
            value = got;
        }
    }
    if (me == 1) {
        static uint32_t v[BURST];
        tp_op_t s[BURST];
        for (int i = 0; i < BURST; i++) {
            v[i] = 3u * (uint32_t)i;
            send_msg(ch, 0, &v[i], 4, (uint64_t)(ROUND_TRIPS + i), &s[i]);
            progress_until(ch, &s[i].done);
        }
    } else {
        while (stats(ch).received < ROUND_TRIPS / 2 + BURST) { /* no receive posted yet */
            const struct timespec pause = {0, 20 * 1000};
            shm_progress(ch);
            nanosleep(&pause, NULL);
        }
        for (int i = 0; i < BURST; i++) {
            uint32_t x = 0;
            tp_op_t r;
            recv_msg(ch, 1, &x, 4, (uint64_t)(ROUND_TRIPS + i), &r);
            bad += !r.done || r.status != UCOLL_OK || x != 3u * (uint32_t)i;
        }
        ck_assert_uint_eq(stats(ch).unexpected, BURST);
        ck_assert_uint_eq(stats(ch).received, ROUND_TRIPS / 2 + BURST);
        ck_assert_uint_eq(stats(ch).sent, ROUND_TRIPS / 2);
    }
    shm_destroy(ch);
    if (me == 1)
        _exit(bad == 0 ? 0 : 4);
    int status = 0;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: status 0x%x", status);
    ck_assert_int_eq(bad, 0);
    ck_assert_uint_eq(value, ROUND_TRIPS);
}
END_TEST

/* ---- single copy: messages over SHM_MAX_MESSAGE between channels set to take them go as
 * descriptors; the receiver reads the sender's buffer (here: the same process). */

enum { SC_LEN = 3 * SHM_MAX_MESSAGE + 5 };

static void pair_open_single_copy(pair_t *p)
{
    pair_open(p);
    shm_set_single_copy(p->ch[0], SHM_MAX_MESSAGE + 1);
    shm_set_single_copy(p->ch[1], SHM_MAX_MESSAGE + 1);
}

static void fill(unsigned char *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)(i * 31u + seed);
}

/* a single-copy pair and one region of len bytes for the buffers a test offers or lends */
static void *pair_open_with_region(pair_t *p, size_t len)
{
    pair_open_single_copy(p);
    void *mem = NULL;
    ck_assert_int_eq(shm_region_alloc(len, &mem), 0);
    return mem;
}

static void pair_close_with_region(pair_t *p, void *mem)
{
    pair_close(p);
    ck_assert_int_eq(shm_region_free(mem), 0);
}

/* the receive posted first: the descriptor is read into place at once, and the send completes
 * only once the receiver's DONE has been seen */
START_TEST(single_copy_posted)
{
    pair_t p;
    pair_open_single_copy(&p);
    static unsigned char in[SC_LEN], out[SC_LEN], want[SC_LEN];
    fill(in, SC_LEN, 1);
    memcpy(want, in, SC_LEN);
    tp_op_t s, r;
    ck_assert(shm_reaches(p.ch[0], 1, SC_LEN));
    recv_msg(p.ch[1], 0, out, SC_LEN, 5, &r);
    send_msg(p.ch[0], 1, in, SC_LEN, 5, &s);
    ck_assert_int_eq(s.done, 0); /* rendezvous: waits for the answer */
    ck_assert_uint_eq(shm_progress(p.ch[1]), 1);
    ck_assert_int_eq(r.done, 1);
    ck_assert_int_eq(r.status, UCOLL_OK);
    ck_assert_mem_eq(out, want, SC_LEN);
    ck_assert_int_eq(s.done, 0);
    ck_assert_uint_eq(shm_progress(p.ch[0]), 1);
    ck_assert_int_eq(s.done, 1);
    ck_assert_int_eq(s.status, UCOLL_OK);
    ck_assert_uint_eq(stats(p.ch[0]).copies_sent, 1);
    ck_assert_uint_eq(stats(p.ch[1]).copies_read, 1);
    ck_assert_uint_eq(stats(p.ch[1]).unexpected, 0);
    pair_close(&p);
}
END_TEST

/* regions: a buffer is found only inside one; free takes exactly what alloc gave */
START_TEST(region_registry)
{
    void *a = NULL, *b = NULL;
    const unsigned before = shm_region_count();
    ck_assert_int_ne(shm_region_alloc(0, &a), 0);
    ck_assert_int_eq(shm_region_alloc(10000, &a), 0);
    ck_assert_int_eq(shm_region_alloc(4096, &b), 0);
    ck_assert_uint_eq(shm_region_count(), before + 2);
    const unsigned char zero[10000] = {0};
    ck_assert_mem_eq(a, zero, sizeof(zero));
    shm_region_ref_t ref;
    ck_assert_int_eq(shm_region_find((char *)a + 100, 9000, &ref), 1);
    ck_assert_uint_eq(ref.off, 100);
    ck_assert_uint_eq(ref.len, 12288); /* whole pages */
    ck_assert_int_ge(ref.fd, 0);
    ck_assert_int_eq(shm_region_find((char *)a + 100, 12288, &ref), 0); /* runs past its end */
    static unsigned char outside[64];
    ck_assert_int_eq(shm_region_find(outside, sizeof(outside), &ref), 0);
    shm_region_ref_t rb;
    ck_assert_int_eq(shm_region_find(b, 4096, &rb), 1);
    ck_assert_uint_ne(rb.serial, 0);
    ck_assert_int_eq(shm_region_find(a, 1, &ref), 1);
    ck_assert_uint_ne(rb.serial, ref.serial);
    ck_assert_int_eq(shm_region_free((char *)a + 1), -1); /* not its start */
    ck_assert_int_eq(shm_region_free(outside), -1);
    ck_assert_int_eq(shm_region_free(a), 0);
    ck_assert_int_eq(shm_region_free(a), -1); /* twice */
    ck_assert_int_eq(shm_region_free(b), 0);
    ck_assert_int_eq(shm_region_free(NULL), -1);
    ck_assert_uint_eq(shm_region_count(), before);
}
END_TEST

/* a sender's buffer inside a region: the receiver copies it through its mapping of the region
 * (counted as mapped), and the send completes on the DONE answer as before */
START_TEST(single_copy_from_region)
{
    pair_t p;
    void *mem = pair_open_with_region(&p, 2 * SC_LEN);
    unsigned char *in = (unsigned char *)mem + 64;
    static unsigned char out[SC_LEN], want[SC_LEN];
    fill(in, SC_LEN, 3);
    memcpy(want, in, SC_LEN);
    tp_op_t s, r;
    recv_msg(p.ch[1], 0, out, SC_LEN, 5, &r);
    send_msg(p.ch[0], 1, in, SC_LEN, 5, &s);
    ck_assert_uint_eq(shm_progress(p.ch[1]), 1);
    ck_assert_int_eq(r.done, 1);
    ck_assert_int_eq(r.status, UCOLL_OK);
    ck_assert_int_eq(r.lent, 0);
    ck_assert_mem_eq(out, want, SC_LEN);
    ck_assert_uint_eq(shm_progress(p.ch[0]), 1);
    ck_assert_int_eq(s.done, 1);
    ck_assert_int_eq(s.status, UCOLL_OK);
    ck_assert_uint_eq(stats(p.ch[1]).copies_read, 1);
    ck_assert_uint_eq(stats(p.ch[1]).copies_mapped, 1);
    ck_assert_uint_eq(stats(p.ch[1]).copies_lent, 0);
    pair_close_with_region(&p, mem);
}
END_TEST

/* a receive that may be lent: it completes pointing at the sender's bytes, nothing copied, and
 * the sender waits until the release; released unused, the send fails; a release after the
 * sender took its buffer back says the bytes do not count */
START_TEST(single_copy_lent)
{
    pair_t p;
    void *mem = pair_open_with_region(&p, SC_LEN);
    unsigned char *in = mem;
    static unsigned char out[SC_LEN], untouched[SC_LEN];
    fill(in, SC_LEN, 4);
    memset(out, 0xA5, SC_LEN);
    memset(untouched, 0xA5, SC_LEN);
    for (int round = 0; round < 3; round++) {
        tp_op_t s, r;
        recv_msg(p.ch[1], 0, out, SC_LEN, 7, &r);
        r.lend_ok = 1;
        send_msg(p.ch[0], 1, in, SC_LEN, 7, &s);
        ck_assert_uint_eq(shm_progress(p.ch[1]), 1);
        ck_assert_int_eq(r.done, 1);
        ck_assert_int_eq(r.status, UCOLL_OK);
        ck_assert_int_eq(r.lent, 1);
        ck_assert_ptr_ne(r.buf, in); /* the receiver's own mapping of the region */
        ck_assert_mem_eq(r.buf, in, SC_LEN);
        ck_assert_mem_eq(out, untouched, SC_LEN);
        shm_progress(p.ch[0]);
        ck_assert_int_eq(s.done, 0); /* the sender waits for the release */
        if (round == 0) {
            ck_assert_int_eq(shm_release(p.ch[1], &r, 1), UCOLL_OK);
            shm_progress(p.ch[0]);
            ck_assert_int_eq(s.done, 1);
            ck_assert_int_eq(s.status, UCOLL_OK);
        } else if (round == 1) {
            ck_assert_int_eq(shm_release(p.ch[1], &r, 0), UCOLL_OK); /* abandoned */
            shm_progress(p.ch[0]);
            ck_assert_int_eq(s.done, 1);
            ck_assert_int_eq(s.status, UCOLL_OK); /* as after a read */
        } else {
            shm_cancel(p.ch[0], &s); /* the sender gives up first */
            ck_assert_int_eq(shm_release(p.ch[1], &r, 1), UCOLL_ERR_PEER_FAILED);
        }
        ck_assert_int_eq(r.lent, 0);
        /* no longer lent: a second release answers nothing and keeps the status */
        const ucoll_status_t want = round == 2 ? UCOLL_ERR_PEER_FAILED : UCOLL_OK;
        ck_assert_int_eq(r.status, want);
        ck_assert_int_eq(shm_release(p.ch[1], &r, 1), want);
    }
    ck_assert_uint_eq(stats(p.ch[1]).copies_lent, 3);
    ck_assert_uint_eq(stats(p.ch[1]).copies_mapped, 0);
    pair_close_with_region(&p, mem);
}
END_TEST

/* a mapping that a lent receive points into is never evicted: with receives lent from 8
 * regions (every entry of the peer's), a ninth region's message is read by process_vm_readv,
 * and the lent bytes stay readable until released */
START_TEST(single_copy_lent_pins_mapping)
{
    enum { NREG = 9 };
    pair_t p;
    pair_open_single_copy(&p);
    void *mem[NREG];
    tp_op_t s[NREG], r[NREG];
    static unsigned char out[NREG][SC_LEN], want[SC_LEN];
    for (int k = 0; k < NREG; k++) {
        ck_assert_int_eq(shm_region_alloc(SC_LEN, &mem[k]), 0);
        fill(mem[k], SC_LEN, 10u + (unsigned)k);
        recv_msg(p.ch[1], 0, out[k], SC_LEN, 100u + (unsigned)k, &r[k]);
        r[k].lend_ok = 1;
        send_msg(p.ch[0], 1, mem[k], SC_LEN, 100u + (unsigned)k, &s[k]);
        while (!r[k].done)
            shm_progress(p.ch[1]);
        ck_assert_int_eq(r[k].status, UCOLL_OK);
        ck_assert_int_eq(r[k].lent, k < NREG - 1);
    }
    fill(want, SC_LEN, 10u + NREG - 1);
    ck_assert_mem_eq(out[NREG - 1], want, SC_LEN);
    ck_assert_uint_eq(stats(p.ch[1]).copies_lent, NREG - 1);
    ck_assert_uint_eq(stats(p.ch[1]).copies_mapped, 0);
    for (int k = 0; k < NREG - 1; k++) {
        fill(want, SC_LEN, 10u + (unsigned)k);
        ck_assert_mem_eq(r[k].buf, want, SC_LEN);
        ck_assert_int_eq(shm_release(p.ch[1], &r[k], 1), UCOLL_OK);
    }
    for (int k = 0; k < NREG; k++) {
        while (!s[k].done)
            shm_progress(p.ch[0]);
        ck_assert_int_eq(s[k].status, UCOLL_OK);
    }
    /* released: a tenth region may now take an entry */
    void *more = NULL;
    ck_assert_int_eq(shm_region_alloc(SC_LEN, &more), 0);
    tp_op_t s2, r2;
    recv_msg(p.ch[1], 0, out[0], SC_LEN, 200, &r2);
    send_msg(p.ch[0], 1, more, SC_LEN, 200, &s2);
    while (!r2.done)
        shm_progress(p.ch[1]);
    ck_assert_int_eq(r2.status, UCOLL_OK);
    ck_assert_uint_eq(stats(p.ch[1]).copies_mapped, 1);
    while (!s2.done)
        shm_progress(p.ch[0]);
    pair_close(&p);
    for (int k = 0; k < NREG; k++)
        ck_assert_int_eq(shm_region_free(mem[k]), 0);
    ck_assert_int_eq(shm_region_free(more), 0);
}
END_TEST

/* the peer's 8 entries filled by copies, a receive lent from the oldest, then a ninth region's
 * message: it takes another entry, and the lent bytes stay mapped */
START_TEST(single_copy_lent_oldest_kept)
{
    enum { NREG = 9 };
    pair_t p;
    pair_open_single_copy(&p);
    void *mem[NREG];
    static unsigned char out[SC_LEN], want[SC_LEN];
    tp_op_t s, r, s0, r0;
    for (int k = 0; k < NREG - 1; k++) { /* entries 0..7 by plain mapped copies */
        ck_assert_int_eq(shm_region_alloc(SC_LEN, &mem[k]), 0);
        fill(mem[k], SC_LEN, 40u + (unsigned)k);
        recv_msg(p.ch[1], 0, out, SC_LEN, 300u + (unsigned)k, &r);
        send_msg(p.ch[0], 1, mem[k], SC_LEN, 300u + (unsigned)k, &s);
        while (!r.done)
            shm_progress(p.ch[1]);
        while (!s.done)
            shm_progress(p.ch[0]);
        ck_assert_int_eq(r.status, UCOLL_OK);
    }
    ck_assert_uint_eq(stats(p.ch[1]).copies_mapped, NREG - 1);
    recv_msg(p.ch[1], 0, out, SC_LEN, 400, &r0); /* lent from region 0, the oldest entry */
    r0.lend_ok = 1;
    send_msg(p.ch[0], 1, mem[0], SC_LEN, 400, &s0);
    while (!r0.done)
        shm_progress(p.ch[1]);
    ck_assert_int_eq(r0.lent, 1);
    ck_assert_int_eq(shm_region_alloc(SC_LEN, &mem[NREG - 1]), 0);
    fill(mem[NREG - 1], SC_LEN, 99);
    recv_msg(p.ch[1], 0, out, SC_LEN, 401, &r);
    send_msg(p.ch[0], 1, mem[NREG - 1], SC_LEN, 401, &s);
    while (!r.done)
        shm_progress(p.ch[1]);
    ck_assert_int_eq(r.status, UCOLL_OK);
    ck_assert_uint_eq(stats(p.ch[1]).copies_mapped, NREG); /* mapped, in another entry */
    fill(want, SC_LEN, 40);
    ck_assert_mem_eq(r0.buf, want, SC_LEN);
    ck_assert_int_eq(shm_release(p.ch[1], &r0, 1), UCOLL_OK);
    while (!s.done || !s0.done)
        shm_progress(p.ch[0]);
    pair_close(&p);
    for (int k = 0; k < NREG; k++)
        ck_assert_int_eq(shm_region_free(mem[k]), 0);
}
END_TEST

/* the descriptor before its receive waits in the unexpected list; nothing is read until the
 * receive is posted, and then the sender's buffer as it is at that moment (the send has not
 * completed, so its buffer is still the message) */
START_TEST(single_copy_unexpected)
{
    pair_t p;
    pair_open_single_copy(&p);
    static unsigned char in[SC_LEN], out[SC_LEN], want[SC_LEN];
    fill(in, SC_LEN, 2);
    tp_op_t s, r;
    send_msg(p.ch[0], 1, in, SC_LEN, 6, &s);
    fill(in, SC_LEN, 22); /* after the descriptor went out, before anything was read */
    memcpy(want, in, SC_LEN);
    ck_assert_uint_eq(shm_progress(p.ch[1]), 1);
    ck_assert_uint_eq(stats(p.ch[1]).unexpected, 1);
    ck_assert_uint_eq(stats(p.ch[1]).copies_read, 0);
    shm_progress(p.ch[0]);
    ck_assert_int_eq(s.done, 0);
    recv_msg(p.ch[1], 0, out, SC_LEN, 6, &r);
    ck_assert_int_eq(r.done, 1);
    ck_assert_int_eq(r.status, UCOLL_OK);
    ck_assert_mem_eq(out, want, SC_LEN);
    shm_progress(p.ch[0]);
    ck_assert_int_eq(s.done, 1);
    ck_assert_int_eq(s.status, UCOLL_OK);
    pair_close(&p);
}
END_TEST

/* lengths that differ: nothing is read, both sides get UCOLL_ERR_TRUNCATED */
START_TEST(single_copy_length_mismatch)
{
    pair_t p;
    pair_open_single_copy(&p);
    static unsigned char in[SC_LEN], out[SC_LEN];
    fill(in, SC_LEN, 3);
    memset(out, 0x5a, SC_LEN);
    tp_op_t s, r;
    recv_msg(p.ch[1], 0, out, SC_LEN - 1, 7, &r);
    send_msg(p.ch[0], 1, in, SC_LEN, 7, &s);
    shm_progress(p.ch[1]);
    shm_progress(p.ch[0]);
    ck_assert(r.done && s.done);
    ck_assert_int_eq(r.status, UCOLL_ERR_TRUNCATED);
    ck_assert_int_eq(s.status, UCOLL_ERR_TRUNCATED);
    for (size_t i = 0; i < SC_LEN; i++)
        ck_assert_uint_eq(out[i], 0x5a);
    pair_close(&p);
}
END_TEST

/* a sender that takes its message back before the receiver reads it: the receiver's swap
 * loses, and its receive fails instead of returning data the sender may have changed */
START_TEST(single_copy_cancelled)
{
    pair_t p;
    pair_open_single_copy(&p);
    static unsigned char in[SC_LEN], out[SC_LEN];
    fill(in, SC_LEN, 4);
    tp_op_t s, r;
    send_msg(p.ch[0], 1, in, SC_LEN, 8, &s);
    shm_progress(p.ch[1]); /* the descriptor is now unexpected */
    shm_progress(p.ch[0]);
    ck_assert_int_eq(s.done, 0); /* no answer yet */
    shm_cancel(p.ch[0], &s);
    ck_assert_int_eq(stats(p.ch[0]).copies_sent, 1);
    /* the cell is free again: the next message takes it with a new generation while the stale
     * descriptor still waits, unexpected */
    tp_op_t s2, r2;
    static unsigned char in2[SC_LEN], out2[SC_LEN];
    fill(in2, SC_LEN, 9);
    send_msg(p.ch[0], 1, in2, SC_LEN, 10, &s2);
    shm_progress(p.ch[1]);
    ck_assert_uint_eq(stats(p.ch[1]).unexpected, 2);
    recv_msg(p.ch[1], 0, out, SC_LEN, 8, &r); /* the stale one: read, then its swap loses */
    ck_assert_int_eq(r.done, 1);
    ck_assert_int_eq(r.status, UCOLL_ERR_PEER_FAILED);
    ck_assert_uint_eq(stats(p.ch[1]).copies_read, 1); /* read, then discarded */
    shm_progress(p.ch[0]);
    ck_assert_int_eq(s2.done, 0); /* the stale answer did not complete the new send */
    recv_msg(p.ch[1], 0, out2, SC_LEN, 10, &r2);
    shm_progress(p.ch[0]);
    ck_assert(r2.done && s2.done);
    ck_assert_int_eq(r2.status, UCOLL_OK);
    ck_assert_int_eq(s2.status, UCOLL_OK);
    ck_assert_mem_eq(out2, in2, SC_LEN);
    pair_close(&p);
}
END_TEST

/* more sends than cells: SHM_CELLS descriptors wait for answers, the rest in the pending list;
 * as receives are posted, answers free cells and the rest go out, all in order */
START_TEST(single_copy_cells_run_out)
{
    enum { N = SHM_CELLS + 10, LEN = SHM_MAX_MESSAGE + 8 };
    pair_t p;
    pair_open_single_copy(&p);
    static unsigned char in[N][LEN], out[N][LEN];
    static tp_op_t s[N], r[N];
    for (int i = 0; i < N; i++) {
        fill(in[i], LEN, (unsigned)i);
        send_msg(p.ch[0], 1, in[i], LEN, 100 + (uint64_t)i, &s[i]);
        shm_progress(p.ch[1]); /* slots drain into the unexpected list */
    }
    for (int k = 0; k < 4; k++)
        shm_progress(p.ch[1]);
    ck_assert_uint_eq(stats(p.ch[0]).copies_sent, SHM_CELLS);
    ck_assert_uint_eq(stats(p.ch[1]).unexpected, SHM_CELLS);
    for (int i = 0; i < N; i++) {
        recv_msg(p.ch[1], 0, out[i], LEN, 100 + (uint64_t)i, &r[i]);
        for (int k = 0; k < 3 && !r[i].done; k++) {
            shm_progress(p.ch[0]);
            shm_progress(p.ch[1]);
        }
        ck_assert_int_eq(r[i].done, 1);
        ck_assert_int_eq(r[i].status, UCOLL_OK);
        ck_assert_mem_eq(out[i], in[i], LEN);
    }
    shm_progress(p.ch[0]);
    for (int i = 0; i < N; i++) {
        ck_assert_int_eq(s[i].done, 1);
        ck_assert_int_eq(s[i].status, UCOLL_OK);
    }
    ck_assert_uint_eq(stats(p.ch[0]).copies_sent, N);
    ck_assert_uint_eq(stats(p.ch[1]).copies_read, N);
    pair_close(&p);
}
END_TEST

/* a descriptor of memory the sender does not have: the read fails, both sides fail with
 * UCOLL_ERR_TRANSPORT (the sender's process lives) */
START_TEST(single_copy_bad_address)
{
    pair_t p;
    pair_open_single_copy(&p);
    /* reserved, never readable (an unmapped range could be taken by the ring's own mmap) */
    void *gone = mmap(NULL, 4 * SHM_MAX_MESSAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(gone, MAP_FAILED);
    static unsigned char out[SC_LEN];
    tp_op_t s, r;
    recv_msg(p.ch[1], 0, out, SC_LEN, 11, &r);
    send_msg(p.ch[0], 1, gone, SC_LEN, 11, &s);
    shm_progress(p.ch[1]);
    shm_progress(p.ch[0]);
    ck_assert(r.done && s.done);
    ck_assert_int_eq(r.status, UCOLL_ERR_TRANSPORT);
    ck_assert_int_eq(s.status, UCOLL_ERR_TRANSPORT);
    munmap(gone, 4 * SHM_MAX_MESSAGE);
    pair_close(&p);
}
END_TEST

/* a descriptor whose sender is dead (its pid names no process): PEER_FAILED, not TRANSPORT */
START_TEST(single_copy_dead_sender)
{
    pid_t dead = fork();
    ck_assert_int_ge(dead, 0);
    if (dead == 0)
        _exit(0);
    int status;
    ck_assert_int_eq(waitpid(dead, &status, 0), dead);
    pair_t p;
    pair_open_single_copy(&p);
    shm_enable_peer(p.ch[1], 0, (long)dead, p.fd[0]); /* rank 1 reads rank 0 as that pid */
    static unsigned char in[SC_LEN], out[SC_LEN];
    tp_op_t s, r;
    recv_msg(p.ch[1], 0, out, SC_LEN, 12, &r);
    send_msg(p.ch[0], 1, in, SC_LEN, 12, &s);
    shm_progress(p.ch[1]);
    ck_assert_int_eq(r.done, 1);
    ck_assert_int_eq(r.status, UCOLL_ERR_PEER_FAILED);
    pair_close(&p);
}
END_TEST

/* ---- offers: a receive posted ahead offers its buffer (in a region) to the sender, which
 * writes the message into it instead of sending it */

static void offer_recv(shm_chan_t *ch, int peer, void *buf, size_t len, uint64_t tag, tp_op_t *op,
                       int want_posted)
{
    op_init(op, peer, len, 1);
    ck_assert_int_eq(shm_recv_offer(ch, peer, buf, tag, CHECKED, op), want_posted);
}

/* written: the receive completes OK only after shm_write_done, with the writer's bytes in the
 * receiver's buffer; three rounds reuse the cells */
START_TEST(offer_written)
{
    pair_t p;
    void *mem = pair_open_with_region(&p, SC_LEN + 64);
    unsigned char *out = (unsigned char *)mem + 64;
    static unsigned char want[SC_LEN];
    for (int round = 0; round < 3; round++) {
        tp_op_t r;
        void *handle = NULL;
        offer_recv(p.ch[1], 0, out, SC_LEN, 20 + round, &r, 1);
        ck_assert_ptr_null(shm_write_target(p.ch[0], 1, 20 + round, SC_LEN, &handle));
        ck_assert_uint_eq(shm_progress(p.ch[0]), 1); /* the offer arrives */
        /* another tag or length claims nothing */
        ck_assert_ptr_null(shm_write_target(p.ch[0], 1, 99, SC_LEN, &handle));
        unsigned char *t = shm_write_target(p.ch[0], 1, 20 + round, SC_LEN, &handle);
        ck_assert_ptr_nonnull(t);
        ck_assert_ptr_ne(t, out); /* the writer's own mapping of the region */
        fill(want, SC_LEN, 7 + (unsigned)round);
        memcpy(t, want, SC_LEN);
        shm_progress(p.ch[1]);
        ck_assert_int_eq(r.done, 0); /* claimed, not written yet */
        ck_assert_int_eq(shm_write_done(p.ch[0], 1, handle, 1), UCOLL_OK);
        ck_assert_uint_eq(shm_progress(p.ch[1]), 1);
        ck_assert_int_eq(r.done, 1);
        ck_assert_int_eq(r.status, UCOLL_OK);
        ck_assert_mem_eq(out, want, SC_LEN);
        /* claimed once: the same tag finds nothing now */
        ck_assert_ptr_null(shm_write_target(p.ch[0], 1, 20 + round, SC_LEN, &handle));
    }
    ck_assert_uint_eq(stats(p.ch[1]).offers_sent, 3);
    ck_assert_uint_eq(stats(p.ch[0]).offers_received, 3);
    ck_assert_uint_eq(stats(p.ch[0]).copies_written, 3);
    ck_assert_uint_eq(stats(p.ch[1]).writes_taken, 3);
    ck_assert_uint_eq(stats(p.ch[0]).copies_sent, 0);
    pair_close_with_region(&p, mem);
}
END_TEST

/* an offer the sender does not claim: its ordinary message completes the receive (the offer
 * withdrawn first), and the offer can no longer be claimed */
START_TEST(offer_not_claimed)
{
    pair_t p;
    void *mem = pair_open_with_region(&p, SC_LEN);
    static unsigned char in[SC_LEN];
    fill(in, SC_LEN, 11);
    tp_op_t s, r;
    void *handle = NULL;
    offer_recv(p.ch[1], 0, mem, SC_LEN, 30, &r, 1);
    send_msg(p.ch[0], 1, in, SC_LEN, 30, &s); /* its progress pass takes the offer too */
    shm_progress(p.ch[0]);
    shm_progress(p.ch[1]);
    ck_assert_int_eq(r.done, 1);
    ck_assert_int_eq(r.status, UCOLL_OK);
    ck_assert_mem_eq(mem, in, SC_LEN);
    shm_progress(p.ch[0]);
    ck_assert_int_eq(s.done, 1);
    ck_assert_int_eq(s.status, UCOLL_OK);
    ck_assert_ptr_null(shm_write_target(p.ch[0], 1, 30, SC_LEN, &handle));
    ck_assert_uint_eq(stats(p.ch[0]).copies_written, 0);
    ck_assert_uint_eq(stats(p.ch[1]).writes_taken, 0);
    ck_assert_uint_eq(stats(p.ch[1]).copies_read, 1);
    pair_close_with_region(&p, mem);
}
END_TEST

/* nothing is offered (nor posted) for a buffer outside every region, a message the rings carry
 * whole, a message that has already arrived, while a send waits for room, or on a channel
 * without single copy */
START_TEST(offer_refused)
{
    pair_t p;
    void *mem = pair_open_with_region(&p, SC_LEN);
    static unsigned char plain[SC_LEN], in[SC_LEN];
    tp_op_t r, s;
    offer_recv(p.ch[1], 0, plain, SC_LEN, 40, &r, 0);
    offer_recv(p.ch[1], 0, mem, SHM_MAX_MESSAGE, 40, &r, 0);
    send_msg(p.ch[0], 1, in, SC_LEN, 41, &s);
    shm_progress(p.ch[1]); /* unexpected now */
    offer_recv(p.ch[1], 0, mem, SC_LEN, 41, &r, 0);
    recv_msg(p.ch[1], 0, mem, SC_LEN, 41, &r);
    ck_assert_int_eq(r.done, 1);
    ck_assert_int_eq(r.status, UCOLL_OK);
    /* a send of rank 1 waits for room: its cells go to descriptors first */
    tp_op_t full[SHM_SLOTS + 1];
    for (int i = 0; i <= SHM_SLOTS; i++)
        send_msg(p.ch[1], 0, in, 8, 100 + (uint64_t)i, &full[i]);
    ck_assert_int_eq(full[SHM_SLOTS].done, 0);
    offer_recv(p.ch[1], 0, mem, SC_LEN, 43, &r, 0);
    shm_set_single_copy(p.ch[1], 0);
    offer_recv(p.ch[1], 0, mem, SC_LEN, 42, &r, 0);
    ck_assert_uint_eq(stats(p.ch[1]).offers_sent, 0);
    pair_close_with_region(&p, mem);
}
END_TEST

/* a cancelled offered receive: its offer cannot be claimed afterwards; one claimed by a writer
 * whose process is gone is given up at once, and that writer's DONE is refused */
START_TEST(offer_cancelled)
{
    pid_t dead = fork();
    ck_assert_int_ge(dead, 0);
    if (dead == 0)
        _exit(0);
    int status;
    ck_assert_int_eq(waitpid(dead, &status, 0), dead);
    pair_t p;
    void *mem = pair_open_with_region(&p, SC_LEN);
    tp_op_t r;
    void *handle = NULL;
    offer_recv(p.ch[1], 0, mem, SC_LEN, 50, &r, 1);
    shm_progress(p.ch[0]);
    shm_cancel(p.ch[1], &r);
    ck_assert_ptr_null(shm_write_target(p.ch[0], 1, 50, SC_LEN, &handle));

    offer_recv(p.ch[1], 0, mem, SC_LEN, 51, &r, 1);
    shm_progress(p.ch[0]);
    ck_assert_ptr_nonnull(shm_write_target(p.ch[0], 1, 51, SC_LEN, &handle));
    shm_enable_peer(p.ch[1], 0, (long)dead, p.fd[0]); /* the writer, as rank 1 sees it, died */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    shm_cancel(p.ch[1], &r);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    ck_assert_int_lt(t1.tv_sec - t0.tv_sec, 2);
    ck_assert_int_eq(shm_write_done(p.ch[0], 1, handle, 1), UCOLL_ERR_PEER_FAILED);
    ck_assert_uint_eq(stats(p.ch[0]).copies_written, 0);
    pair_close_with_region(&p, mem);
}
END_TEST

/* a writer that reduces out of a lent buffer learns only at the release whether those bytes
 * counted: rank 1 borrows rank 0's input, claims rank 0's offer and writes into it, and rank 0
 * takes its input back meanwhile. The write must then not complete rank 0's receive with OK:
 * the release comes first, and a write whose source failed is ended as failed. */
START_TEST(offer_written_from_revoked_loan)
{
    pair_t p;
    void *mem = pair_open_with_region(&p, 2 * SC_LEN);
    unsigned char *in = mem, *out = (unsigned char *)mem + SC_LEN;
    static unsigned char tmp[SC_LEN];
    fill(in, SC_LEN, 21);
    tp_op_t o, r, s;
    void *handle = NULL;
    offer_recv(p.ch[0], 1, out, SC_LEN, 61, &o, 1);
    recv_msg(p.ch[1], 0, tmp, SC_LEN, 60, &r);
    r.lend_ok = 1;
    send_msg(p.ch[0], 1, in, SC_LEN, 60, &s);
    shm_progress(p.ch[1]); /* the offer and the loan arrive */
    ck_assert_int_eq(r.lent, 1);
    unsigned char *t = shm_write_target(p.ch[1], 0, 61, SC_LEN, &handle);
    ck_assert_ptr_nonnull(t);
    shm_cancel(p.ch[0], &s); /* rank 0 takes its input back and reuses it */
    memset(in, 0xEE, SC_LEN);
    memcpy(t, r.buf, SC_LEN); /* rank 1's reduction, written on */
    ck_assert_int_eq(shm_release(p.ch[1], &r, 1), UCOLL_ERR_PEER_FAILED);
    shm_write_done(p.ch[1], 0, handle, 0);
    shm_progress(p.ch[0]);
    ck_assert_int_eq(o.done, 1);
    ck_assert_int_ne(o.status, UCOLL_OK);
    ck_assert_uint_eq(stats(p.ch[1]).copies_written, 0);
    pair_close_with_region(&p, mem);
}
END_TEST

/* rank 1 gives up rank 0 (a forged slot on their ring) while `offered` is posted: the offered
 * receive fails at once */
static void abandon_with_offer(pair_t *p, const tp_op_t *offered)
{
    unsigned char *ring = map_ring_0_to_1(p);
    forge_slot(ring, 0, 1, SHM_MAX_MESSAGE + 1, 9);
    shm_progress(p->ch[1]);
    ck_assert_int_eq(offered->done, 1);
    ck_assert_int_eq(offered->status, UCOLL_ERR_TRANSPORT);
    munmap(ring, SHM_RING_BYTES);
}

/* a pair given up (its ring forged) fails its offered receives and withdraws their offers:
 * the peer cannot claim one and write into a buffer whose receive has already failed */
START_TEST(offer_abandoned_pair)
{
    pair_t p;
    void *mem = pair_open_with_region(&p, SC_LEN);
    tp_op_t o;
    void *handle = NULL;
    offer_recv(p.ch[1], 0, mem, SC_LEN, 70, &o, 1);
    shm_progress(p.ch[0]); /* rank 0 holds the offer */
    abandon_with_offer(&p, &o);
    ck_assert_ptr_null(shm_write_target(p.ch[0], 1, 70, SC_LEN, &handle));
    pair_close_with_region(&p, mem);
}
END_TEST

/* a pair given up while the peer holds a claim on an offer: the receive fails and its buffer is
 * the caller's again, so the claim must be gone by then. The writer (this process, so it
 * cannot write during the withdrawal's wait) checks its claim before writing, as
 * reduce_writing does before each block, and its DONE is refused. */
START_TEST(offer_abandoned_after_claim)
{
    pair_t p;
    void *mem = pair_open_with_region(&p, SC_LEN);
    static unsigned char want[SC_LEN], mine[SC_LEN];
    tp_op_t o;
    void *handle = NULL;
    offer_recv(p.ch[1], 0, mem, SC_LEN, 71, &o, 1);
    shm_progress(p.ch[0]);
    unsigned char *t = shm_write_target(p.ch[0], 1, 71, SC_LEN, &handle);
    ck_assert_ptr_nonnull(t);
    abandon_with_offer(&p, &o);
    fill(mine, SC_LEN, 3); /* the caller reuses its buffer */
    memcpy(mem, mine, SC_LEN);
    fill(want, SC_LEN, 5);
    if (shm_write_claimed(p.ch[0], 1, handle))
        memcpy(t, want, SC_LEN);
    ck_assert_int_eq(shm_write_done(p.ch[0], 1, handle, 1), UCOLL_ERR_PEER_FAILED);
    ck_assert_mem_eq(mem, mine, SC_LEN);
    ck_assert_uint_eq(stats(p.ch[0]).copies_written, 0);
    pair_close_with_region(&p, mem);
}
END_TEST

/* a forged offer (a cell beyond the ring's) abandons the pair as a forged descriptor does */
START_TEST(offer_forged_cell)
{
    pair_t p;
    pair_open_single_copy(&p);
    unsigned char *ring = map_ring_0_to_1(&p);
    uint64_t o[8] = {0};
    o[2] = (uint64_t)SHM_CELLS | (1ull << 32);
    memcpy(ring + SHM_RING_CONTROL + SHM_SLOT_HEADER, o, sizeof(o));
    forge_slot(ring, 0, 1, 0x40000000u | (uint32_t)sizeof(o), 9);
    shm_progress(p.ch[1]);
    assert_abandoned(&p);
    munmap(ring, SHM_RING_BYTES);
    pair_close(&p);
}
END_TEST

/* a forged descriptor, a cell beyond the ring's, abandons the pair as a forged length does */
START_TEST(single_copy_forged_cell)
{
    pair_t p;
    pair_open_single_copy(&p);
    unsigned char *ring = map_ring_0_to_1(&p);
    const uint64_t d[3] = {(uint64_t)(uintptr_t)ring, SC_LEN, (uint64_t)SHM_CELLS | (1ull << 32)};
    memcpy(ring + SHM_RING_CONTROL + SHM_SLOT_HEADER, d, sizeof(d));
    forge_slot(ring, 0, 1, 0x80000000u | (uint32_t)sizeof(d), 9);
    shm_progress(p.ch[1]);
    assert_abandoned(&p);
    munmap(ring, SHM_RING_BYTES);
    pair_close(&p);
}
END_TEST

/* generation 0 is never sent (the sender skips it): a descriptor with it is forged */
START_TEST(single_copy_forged_generation)
{
    pair_t p;
    pair_open_single_copy(&p);
    unsigned char *ring = map_ring_0_to_1(&p);
    const uint64_t d[3] = {(uint64_t)(uintptr_t)ring, SC_LEN, 0};
    memcpy(ring + SHM_RING_CONTROL + SHM_SLOT_HEADER, d, sizeof(d));
    forge_slot(ring, 0, 1, 0x80000000u | (uint32_t)sizeof(d), 9);
    shm_progress(p.ch[1]);
    assert_abandoned(&p);
    munmap(ring, SHM_RING_BYTES);
    pair_close(&p);
}
END_TEST

/* a descriptor that reaches a rank before that rank has turned single copy on (its sender left
 * init's agreement first) waits, and is read once the rank receives with single copy on */
START_TEST(single_copy_before_set)
{
    pair_t p;
    pair_open(&p);
    shm_set_single_copy(p.ch[0], SHM_MAX_MESSAGE + 1); /* rank 1 still agreeing */
    static unsigned char in[SC_LEN], out[SC_LEN];
    fill(in, SC_LEN, 5);
    tp_op_t s, r;
    send_msg(p.ch[0], 1, in, SC_LEN, 14, &s);
    ck_assert_uint_eq(shm_progress(p.ch[1]), 1);
    ck_assert_uint_eq(stats(p.ch[1]).unexpected, 1);
    shm_set_single_copy(p.ch[1], SHM_MAX_MESSAGE + 1);
    recv_msg(p.ch[1], 0, out, SC_LEN, 14, &r);
    shm_progress(p.ch[0]);
    ck_assert(r.done && s.done);
    ck_assert_int_eq(r.status, UCOLL_OK);
    ck_assert_int_eq(s.status, UCOLL_OK);
    ck_assert_mem_eq(out, in, SC_LEN);
    pair_close(&p);
}
END_TEST

/* a pair given up (a forged slot) with single copy in flight both ways: our descriptor is
 * taken back before our send fails, so the peer's read of it cannot succeed; the peer's
 * descriptor waiting here is answered FAILED, so the peer's send ends instead of waiting */
START_TEST(single_copy_abandoned_pair)
{
    pair_t p;
    pair_open_single_copy(&p);
    static unsigned char a[SC_LEN], b[SC_LEN], out[SC_LEN];
    fill(a, SC_LEN, 6);
    fill(b, SC_LEN, 7);
    tp_op_t s0, s1, r1;
    send_msg(p.ch[0], 1, a, SC_LEN, 15, &s0); /* 0 -> 1, in flight */
    send_msg(p.ch[1], 0, b, SC_LEN, 16, &s1); /* 1 -> 0, unexpected at 0 */
    shm_progress(p.ch[1]);
    shm_progress(p.ch[0]);
    ck_assert_uint_eq(stats(p.ch[0]).unexpected, 1);
    /* ring 1 -> 0 is ring 1 of rank 0's segment; its next slot (1) gets an impossible length */
    unsigned char *ring =
        mmap(NULL, SHM_RING_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, p.fd[0], SHM_RING_BYTES);
    ck_assert_ptr_ne(ring, MAP_FAILED);
    forge_slot(ring, 1, 2, SHM_MAX_MESSAGE + 1, 9);
    shm_progress(p.ch[0]); /* rank 0 gives rank 1 up */
    ck_assert_int_eq(s0.done, 1);
    ck_assert_int_eq(s0.status, UCOLL_ERR_TRANSPORT);
    recv_msg(p.ch[1], 0, out, SC_LEN, 15, &r1); /* reads a, but its swap loses */
    ck_assert_int_eq(r1.done, 1);
    ck_assert_int_eq(r1.status, UCOLL_ERR_PEER_FAILED);
    shm_progress(p.ch[1]);
    ck_assert_int_eq(s1.done, 1);
    ck_assert_int_eq(s1.status, UCOLL_ERR_TRANSPORT);
    munmap(ring, SHM_RING_BYTES);
    pair_close(&p);
}
END_TEST

/* a descriptor taken as a crossed message (its receive waited on UCX): the sender is told */
START_TEST(single_copy_taken_unexpected)
{
    pair_t p;
    pair_open_single_copy(&p);
    static unsigned char in[SC_LEN];
    tp_op_t s;
    send_msg(p.ch[0], 1, in, SC_LEN, 13, &s);
    shm_progress(p.ch[1]);
    ck_assert_int_eq(shm_take_unexpected(p.ch[1], 0, 13, CHECKED), 1);
    shm_progress(p.ch[0]);
    ck_assert_int_eq(s.done, 1);
    ck_assert_int_eq(s.status, UCOLL_ERR_TRUNCATED);
    pair_close(&p);
}
END_TEST

/* this process may read its peers here (no seccomp filter, Yama's scope below 2) */
START_TEST(single_copy_probe_here)
{
    char why[160] = "";
    ck_assert_msg(shm_single_copy_probe(why, sizeof(why)) == UCOLL_OK, "%s", why);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("shm");
    TCase *tc = tcase_create("channel");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, posted_then_sent);
    tcase_add_test(tc, sent_then_posted);
    tcase_add_test(tc, matching_by_tag);
    tcase_add_test(tc, mismatch_is_truncated);
    tcase_add_test(tc, full_ring_waits);
    tcase_add_test(tc, counters_wrap);
    tcase_add_test(tc, cancel);
    tcase_add_test(tc, reaches);
    tcase_add_test(tc, attach_failure);
    tcase_add_test(tc, ring_mapped_on_first_send);
    tcase_add_test(tc, first_send_to_a_dead_peer);
    tcase_add_test(tc, first_send_to_a_zombie_peer);
    tcase_add_test(tc, two_processes);
    tcase_add_test(tc, forged_length_unexpected);
    tcase_add_test(tc, forged_length_posted);
    tcase_add_test(tc, forged_after_genuine);
    tcase_add_test(tc, forged_consumed_count);
    tcase_add_test(tc, single_copy_posted);
    tcase_add_test(tc, single_copy_unexpected);
    tcase_add_test(tc, region_registry);
    tcase_add_test(tc, single_copy_from_region);
    tcase_add_test(tc, single_copy_lent);
    tcase_add_test(tc, single_copy_lent_pins_mapping);
    tcase_add_test(tc, single_copy_lent_oldest_kept);
    tcase_add_test(tc, single_copy_length_mismatch);
    tcase_add_test(tc, single_copy_cancelled);
    tcase_add_test(tc, single_copy_cells_run_out);
    tcase_add_test(tc, single_copy_bad_address);
    tcase_add_test(tc, single_copy_dead_sender);
    tcase_add_test(tc, single_copy_forged_cell);
    tcase_add_test(tc, single_copy_forged_generation);
    tcase_add_test(tc, single_copy_before_set);
    tcase_add_test(tc, offer_written);
    tcase_add_test(tc, offer_not_claimed);
    tcase_add_test(tc, offer_refused);
    tcase_add_test(tc, offer_cancelled);
    tcase_add_test(tc, offer_written_from_revoked_loan);
    tcase_add_test(tc, offer_abandoned_pair);
    tcase_add_test(tc, offer_abandoned_after_claim);
    tcase_add_test(tc, offer_forged_cell);
    tcase_add_test(tc, single_copy_abandoned_pair);
    tcase_add_test(tc, single_copy_taken_unexpected);
    tcase_add_test(tc, single_copy_probe_here);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
