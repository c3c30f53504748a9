/*
 * Store bootstrap: neither PMIx nor the caller's runtime. Rank 0 listens on HOST:PORT; every
 * other rank connects (retrying until rank 0 is up or the timeout passes) and says which rank
 * of how many it is. Once all size - 1 have joined with consistent claims, rank 0 welcomes
 * them, and the star serves allgather rounds: every rank sends its bytes, rank 0 returns the
 * concatenation in rank order. Those rounds are the allgather of the out-of-band bootstrap
 * (bootstrap_oob.c), so locality, publication and look-ups work as with ucoll_init_oob.
 * Cost: a round moves (p - 1) * (p + 1) * len bytes through rank 0, which holds p - 1 sockets
 * until finalize. Every wait is bounded by the timeout; a refusal reaches every joined rank.
 */
#include "bootstrap.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { STORE_MAGIC = 0x75637374, STORE_VERSION = 1, HEADER_BYTES = 32 };

/* what a header says: a join, a welcome, a round's contribution or reply, or why not */
typedef enum {
    CODE_OK = 0,
    CODE_SIZE,       /* rank `rank` said the job has `size` ranks, rank 0 has `expected` */
    CODE_DUPLICATE,  /* rank `rank` joined twice */
    CODE_VERSION,    /* rank `rank` speaks another version of this protocol */
    CODE_INCOMPLETE, /* `size` of `expected` ranks joined before the timeout; `rank` missing */
    CODE_LENGTH,     /* rank `rank` gave `len` bytes to a round, rank 0 `expected` */
    CODE_LOST        /* rank `rank` closed its connection or did not answer in time */
} store_code_t;

typedef struct {
    uint32_t magic, version;
    int32_t code, rank, size, expected;
    uint64_t len;
} header_t;

typedef struct {
    int rank, size;
    double timeout_s;
    char address[256]; /* as given, for messages */
    int *fds;          /* rank 0: fds[r] to rank r (fds[0] unused); others: fds[0] to rank 0 */
} store_t;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (24 - 8 * i));
}

static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void encode(const header_t *h, unsigned char b[HEADER_BYTES])
{
    const uint32_t w[8] = {h->magic,
                           h->version,
                           (uint32_t)h->code,
                           (uint32_t)h->rank,
                           (uint32_t)h->size,
                           (uint32_t)h->expected,
                           (uint32_t)(h->len >> 32),
                           (uint32_t)h->len};
    for (int i = 0; i < 8; i++)
        put32(b + 4 * i, w[i]);
}

static void decode(const unsigned char b[HEADER_BYTES], header_t *h)
{
    h->magic = get32(b);
    h->version = get32(b + 4);
    h->code = (int32_t)get32(b + 8);
    h->rank = (int32_t)get32(b + 12);
    h->size = (int32_t)get32(b + 16);
    h->expected = (int32_t)get32(b + 20);
    h->len = (uint64_t)get32(b + 24) << 32 | get32(b + 28);
}

/* ---------------------------------------------------------------- bounded socket I/O */

typedef enum { IO_OK, IO_CLOSED, IO_TIMEOUT, IO_ERROR } io_t;

/* fd ready for `events` (or hung up: the next read or write says so) before the deadline */
static io_t wait_fd(int fd, short events, double deadline)
{
    for (;;) {
        const double left = deadline - now_s();
        if (left <= 0)
            return IO_TIMEOUT;
        struct pollfd pfd = {fd, events, 0};
        const int rc = poll(&pfd, 1, left > 1000 ? 1000000 : (int)(left * 1000) + 1);
        if (rc > 0)
            return IO_OK;
        if (rc < 0 && errno != EINTR)
            return IO_ERROR;
    }
}

/* all len bytes of buf out (send != 0) or in, on a nonblocking socket, before the deadline */
static io_t transfer(int fd, void *buf, size_t len, int send_it, double deadline)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = send_it ? send(fd, (char *)buf + done, len - done, MSG_NOSIGNAL)
                            : recv(fd, (char *)buf + done, len - done, 0);
        if (n > 0) {
            done += (size_t)n;
            continue;
        }
        if (n == 0 && !send_it)
            return IO_CLOSED;
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
            return errno == EPIPE || errno == ECONNRESET ? IO_CLOSED : IO_ERROR;
        io_t w = wait_fd(fd, send_it ? POLLOUT : POLLIN, deadline);
        if (w != IO_OK)
            return w;
    }
    return IO_OK;
}

static io_t send_header(int fd, const header_t *h, double deadline)
{
    unsigned char b[HEADER_BYTES];
    encode(h, b);
    return transfer(fd, b, sizeof(b), 1, deadline);
}

/* a header of this protocol and version (anything else is IO_ERROR) */
static io_t recv_header(int fd, header_t *h, double deadline)
{
    unsigned char b[HEADER_BYTES];
    io_t r = transfer(fd, b, sizeof(b), 0, deadline);
    if (r != IO_OK)
        return r;
    decode(b, h);
    return h->magic == STORE_MAGIC ? IO_OK : IO_ERROR;
}

static int set_nonblocking(int fd)
{
    const int fl = fcntl(fd, F_GETFL);
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)); /* not TCP: harmless */
    return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* ---------------------------------------------------------------- messages */

static ucoll_status_t code_status(int code)
{
    return code == CODE_INCOMPLETE ? UCOLL_ERR_TIMED_OUT
           : code == CODE_LOST     ? UCOLL_ERR_BOOTSTRAP
                                   : UCOLL_ERR_INVALID_ARG;
}

/* the line every rank prints for a refusal rank 0 decided (and sent, when it is not rank 0) */
static void report(const store_t *st, const header_t *h)
{
    const char *a = st->address;
    const int me = st->rank;
    switch (h->code) {
    case CODE_SIZE:
        fprintf(stderr,
                "ucoll: store %s (rank %d): rank %d says the job has %d ranks, rank 0 says %d: "
                "every rank must be given the same size\n",
                a, me, h->rank, h->size, h->expected);
        break;
    case CODE_DUPLICATE:
        fprintf(stderr, "ucoll: store %s (rank %d): two processes joined as rank %d\n", a, me,
                h->rank);
        break;
    case CODE_VERSION:
        fprintf(stderr,
                "ucoll: store %s (rank %d): rank %d speaks store protocol %d, rank 0 %d (mixed "
                "ucoll versions)\n",
                a, me, h->rank, h->size, STORE_VERSION);
        break;
    case CODE_INCOMPLETE:
        fprintf(stderr,
                "ucoll: store %s (rank %d): only %d of %d ranks joined within %.0f s (UCOLL_TIMEOUT"
                "); rank %d is missing\n",
                a, me, h->size + 1, h->expected, st->timeout_s, h->rank);
        break;
    case CODE_LENGTH:
        fprintf(stderr,
                "ucoll: store %s (rank %d): rank %d gave %llu bytes to an allgather round, rank "
                "0 %d\n",
                a, me, h->rank, (unsigned long long)h->len, h->expected);
        break;
    default:
        fprintf(stderr,
                "ucoll: store %s (rank %d): rank %d closed its connection or did not answer "
                "within %.0f s\n",
                a, me, h->rank, st->timeout_s);
        break;
    }
}

static header_t header(int code, int rank, int size, int expected, uint64_t len)
{
    header_t h = {STORE_MAGIC, STORE_VERSION, code, rank, size, expected, len};
    return h;
}

/* rank 0: the refusal to every joined rank (best effort, a short wait each), then its own line */
static ucoll_status_t refuse_all(store_t *st, const header_t *h)
{
    const double deadline = now_s() + 2;
    for (int r = 1; r < st->size; r++)
        if (st->fds[r] >= 0)
            send_header(st->fds[r], h, deadline);
    report(st, h);
    return code_status(h->code);
}

/* ---------------------------------------------------------------- address */

/* "HOST:PORT" (HOST may be "[v6 address]") resolved for a TCP stream; 0 or -1 (message printed) */
static int resolve(const char *address, int rank, struct addrinfo **out)
{
    char host[256];
    const char *colon = strrchr(address, ':');
    const char *port = colon != NULL ? colon + 1 : "";
    size_t hl = colon != NULL ? (size_t)(colon - address) : 0;
    const char *h = address;
    if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
        h++;
        hl -= 2;
    }
    long port_no = 0;
    int ok = colon != NULL && hl > 0 && hl < sizeof(host) && *port != '\0' && strlen(port) <= 5;
    for (const char *c = port; ok && *c != '\0'; c++)
        ok = *c >= '0' && *c <= '9';
    if (ok)
        port_no = strtol(port, NULL, 10);
    if (!ok || port_no < 1 || port_no > 65535 || memchr(h, ' ', hl) != NULL) {
        fprintf(stderr,
                "ucoll: store address \"%s\" (rank %d): give HOST:PORT, a host name or address "
                "and a port 1..65535 (e.g. 127.0.0.1:29500)\n",
                address, rank);
        return -1;
    }
    memcpy(host, h, hl);
    host[hl] = '\0';
    struct addrinfo hints;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    const int rc = getaddrinfo(host, port, &hints, out);
    if (rc != 0) {
        fprintf(stderr, "ucoll: store address %s (rank %d): cannot resolve %s: %s\n", address, rank,
                host, gai_strerror(rc));
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- rank 0: serve */

/* seconds rank 0 keeps answering latecomers with a refusal after the last connection */
enum { LINGER_S = 5 };

/* after a refusal: ranks still connecting get it too, until `seen` connections (joined or
 * refused) make size - 1, or none came for LINGER_S, or the deadline passed */
static void linger(const store_t *st, int lfd, const header_t *no, int seen, double deadline)
{
    double until = now_s() + LINGER_S;
    while (seen < st->size - 1 &&
           wait_fd(lfd, POLLIN, until < deadline ? until : deadline) == IO_OK) {
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        header_t hello;
        if (set_nonblocking(fd) == 0 && recv_header(fd, &hello, now_s() + 2) == IO_OK) {
            send_header(fd, no, now_s() + 2);
            seen++;
        }
        close(fd);
        until = now_s() + LINGER_S;
    }
}

static ucoll_status_t serve(store_t *st, const struct addrinfo *ai)
{
    const double deadline = now_s() + st->timeout_s;
    int lfd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    const int one = 1;
    if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        bind(lfd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(lfd, SOMAXCONN) != 0 ||
        set_nonblocking(lfd) != 0) {
        const int e = errno;
        fprintf(stderr, "ucoll: store %s (rank 0): cannot serve it: %s%s\n", st->address,
                strerror(e),
                e == EADDRINUSE ? " (another process serves it: another job, or a second rank "
                                  "0; pick another port)"
                                : "");
        if (lfd >= 0)
            close(lfd);
        return e == EADDRINUSE ? UCOLL_ERR_BOOTSTRAP : UCOLL_ERR_INVALID_ARG;
    }
    int joined = 0;
    ucoll_status_t result = UCOLL_OK;
    while (joined < st->size - 1) {
        io_t w = wait_fd(lfd, POLLIN, deadline);
        if (w != IO_OK) {
            int missing = 1;
            while (missing < st->size && st->fds[missing] >= 0)
                missing++;
            header_t h = header(CODE_INCOMPLETE, missing, joined, st->size, 0);
            result = refuse_all(st, &h);
            break;
        }
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK || errno == ECONNABORTED)
                continue;
            fprintf(stderr, "ucoll: store %s (rank 0): accept: %s\n", st->address, strerror(errno));
            header_t h = header(CODE_LOST, 0, 0, st->size, 0);
            refuse_all(st, &h);
            result = UCOLL_ERR_BOOTSTRAP;
            break;
        }
        header_t hello, no;
        /* a connection that says nothing for 10 s is not one of the job's ranks */
        const double hello_by = now_s() + 10 < deadline ? now_s() + 10 : deadline;
        if (set_nonblocking(fd) != 0 || recv_header(fd, &hello, hello_by) != IO_OK) {
            fprintf(stderr,
                    "ucoll: store %s (rank 0): a connection that is not a ucoll rank, ignored\n",
                    st->address);
            close(fd);
            continue;
        }
        if (hello.version != STORE_VERSION)
            no = header(CODE_VERSION, hello.rank, (int)hello.version, st->size, 0);
        else if (hello.size != st->size)
            no = header(CODE_SIZE, hello.rank, hello.size, st->size, 0);
        else if (hello.rank < 1 || hello.rank >= st->size || st->fds[hello.rank] >= 0)
            no = header(CODE_DUPLICATE, hello.rank, hello.size, st->size, 0);
        else
            no = header(CODE_OK, hello.rank, hello.size, st->size, 0);
        if (no.code != CODE_OK) {
            send_header(fd, &no, now_s() + 2);
            close(fd);
            result = refuse_all(st, &no);
            linger(st, lfd, &no, joined + 1, deadline);
            break;
        }
        st->fds[hello.rank] = fd;
        joined++;
    }
    close(lfd);
    if (result != UCOLL_OK)
        return result;
    header_t welcome = header(CODE_OK, 0, st->size, st->size, 0);
    for (int r = 1; r < st->size; r++)
        if (send_header(st->fds[r], &welcome, deadline) != IO_OK) {
            header_t h = header(CODE_LOST, r, 0, st->size, 0);
            return refuse_all(st, &h);
        }
    return UCOLL_OK;
}

/* ---------------------------------------------------------------- other ranks: join */

/* one connection to any of the addresses, or -1 (refused, unreachable: try again later) */
static int connect_once(const struct addrinfo *list, double deadline)
{
    for (const struct addrinfo *ai = list; ai != NULL; ai = ai->ai_next) {
        int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0)
            continue;
        if (set_nonblocking(fd) != 0) {
            close(fd);
            continue;
        }
        int rc = connect(fd, ai->ai_addr, ai->ai_addrlen);
        if (rc != 0 && errno == EINPROGRESS && wait_fd(fd, POLLOUT, deadline) == IO_OK) {
            int err = 0;
            socklen_t el = sizeof(err);
            rc = getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) == 0 && err == 0 ? 0 : -1;
        }
        if (rc == 0)
            return fd;
        close(fd);
    }
    return -1;
}

/* how much longer than rank 0 a joined rank waits for rank 0's welcome or refusal */
enum { VERDICT_GRACE_S = 5 };

static ucoll_status_t join(store_t *st, const struct addrinfo *ai)
{
    const double deadline = now_s() + st->timeout_s;
    double pause = 0.01;
    for (;;) {
        int fd = connect_once(ai, deadline);
        if (fd >= 0) {
            /* once connected, rank 0 owes the verdict: it gives it within its own timeout */
            const double verdict_by = now_s() + st->timeout_s + VERDICT_GRACE_S;
            header_t hello = header(CODE_OK, st->rank, st->size, 0, 0), reply;
            io_t r = send_header(fd, &hello, verdict_by);
            if (r == IO_OK)
                r = recv_header(fd, &reply, verdict_by);
            if (r == IO_OK && reply.code == CODE_OK) {
                st->fds[0] = fd;
                return UCOLL_OK;
            }
            close(fd);
            if (r == IO_OK) {
                report(st, &reply);
                return code_status(reply.code);
            }
            if (r == IO_TIMEOUT)
                break;
            fprintf(stderr, "ucoll: store %s (rank %d): %s\n", st->address, st->rank,
                    r == IO_CLOSED ? "rank 0 closed the connection before welcoming this rank "
                                     "(it gave up on the job: see its message)"
                                   : "what serves this address is not a ucoll rank 0 of this "
                                     "version");
            return UCOLL_ERR_BOOTSTRAP;
        }
        const double left = deadline - now_s();
        if (left <= 0)
            break;
        const double nap = pause < left ? pause : left;
        struct timespec ts = {(time_t)nap, (long)((nap - (time_t)nap) * 1e9)};
        nanosleep(&ts, NULL);
        pause = pause * 2 < 0.5 ? pause * 2 : 0.5;
    }
    fprintf(stderr,
            "ucoll: store %s (rank %d): rank 0 did not serve it, or did not welcome this rank, "
            "within %.0f s (UCOLL_TIMEOUT)\n",
            st->address, st->rank, st->timeout_s);
    return UCOLL_ERR_TIMED_OUT;
}

/* ---------------------------------------------------------------- allgather rounds */

static ucoll_status_t store_allgather(const void *src, void *dst, size_t len, void *ctx)
{
    store_t *st = ctx;
    const double deadline = now_s() + st->timeout_s;
    header_t h;
    if (st->rank != 0) {
        header_t mine = header(CODE_OK, st->rank, st->size, 0, len);
        io_t r = send_header(st->fds[0], &mine, deadline);
        if (r == IO_OK)
            r = transfer(st->fds[0], (void *)src, len, 1, deadline);
        if (r == IO_OK)
            r = recv_header(st->fds[0], &h, deadline);
        if (r == IO_OK && h.code != CODE_OK) {
            report(st, &h);
            return code_status(h.code);
        }
        if (r == IO_OK && h.len != (uint64_t)len * (uint64_t)st->size)
            r = IO_ERROR;
        if (r == IO_OK)
            r = transfer(st->fds[0], dst, len * (size_t)st->size, 0, deadline);
        if (r == IO_OK)
            return UCOLL_OK;
        h = header(CODE_LOST, 0, 0, 0, 0);
        report(st, &h);
        return r == IO_TIMEOUT ? UCOLL_ERR_TIMED_OUT : UCOLL_ERR_BOOTSTRAP;
    }
    memcpy(dst, src, len);
    for (int r = 1; r < st->size; r++) {
        io_t io = recv_header(st->fds[r], &h, deadline);
        if (io == IO_OK && h.len != len) {
            h = header(CODE_LENGTH, r, 0, (int)len, h.len);
            return refuse_all(st, &h);
        }
        if (io == IO_OK)
            io = transfer(st->fds[r], (char *)dst + (size_t)r * len, len, 0, deadline);
        if (io != IO_OK) {
            h = header(CODE_LOST, r, 0, 0, 0);
            refuse_all(st, &h);
            return io == IO_TIMEOUT ? UCOLL_ERR_TIMED_OUT : UCOLL_ERR_BOOTSTRAP;
        }
    }
    h = header(CODE_OK, 0, st->size, st->size, (uint64_t)len * (uint64_t)st->size);
    for (int r = 1; r < st->size; r++) {
        io_t io = send_header(st->fds[r], &h, deadline);
        if (io == IO_OK)
            io = transfer(st->fds[r], dst, len * (size_t)st->size, 1, deadline);
        if (io != IO_OK) {
            header_t lost = header(CODE_LOST, r, 0, 0, 0);
            report(st, &lost);
            return io == IO_TIMEOUT ? UCOLL_ERR_TIMED_OUT : UCOLL_ERR_BOOTSTRAP;
        }
    }
    return UCOLL_OK;
}

static void store_release(void *ctx)
{
    store_t *st = ctx;
    for (int r = 0; r < st->size; r++)
        if (st->fds[r] >= 0)
            close(st->fds[r]);
    free(st->fds);
    free(st);
}

ucoll_status_t bootstrap_store_create(const char *address, int rank, int size, double timeout_s,
                                      bootstrap_t **out)
{
    if (address == NULL) {
        fprintf(stderr, "ucoll: ucoll_init_store: the address is NULL (give \"HOST:PORT\")\n");
        return UCOLL_ERR_INVALID_ARG;
    }
    if (size < 1 || rank < 0 || rank >= size) {
        fprintf(stderr,
                "ucoll: store %s: rank %d of a job of %d ranks: the size must be >= 1 and the "
                "rank in 0..size-1\n",
                address, rank, size);
        return UCOLL_ERR_INVALID_ARG;
    }
    if (strlen(address) >= sizeof(((store_t *)0)->address)) {
        fprintf(stderr, "ucoll: store address of %zu characters (rank %d): too long\n",
                strlen(address), rank);
        return UCOLL_ERR_INVALID_ARG;
    }
    struct addrinfo *ai = NULL;
    if (resolve(address, rank, &ai) != 0)
        return UCOLL_ERR_INVALID_ARG;
    store_t *st = calloc(1, sizeof(*st));
    int *fds = malloc((size_t)size * sizeof(*fds));
    if (st == NULL || fds == NULL) {
        free(st);
        free(fds);
        freeaddrinfo(ai);
        return UCOLL_ERR_NO_MEMORY;
    }
    for (int r = 0; r < size; r++)
        fds[r] = -1;
    st->rank = rank;
    st->size = size;
    st->timeout_s = timeout_s;
    st->fds = fds;
    strcpy(st->address, address);
    /* a 1-rank job needs no server */
    ucoll_status_t s = size == 1 ? UCOLL_OK : rank == 0 ? serve(st, ai) : join(st, ai);
    freeaddrinfo(ai);
    const bootstrap_gather_t g = {store_allgather, store_release, st};
    if (s == UCOLL_OK)
        s = bootstrap_gather_create(&g, rank, size, out);
    if (s != UCOLL_OK)
        store_release(st);
    return s;
}
