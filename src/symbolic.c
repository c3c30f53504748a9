/*
 * The symbolic executor (see symbolic.h): all p processes' schedules run together, round by
 * round, on symbolic vectors stored as interval maps (sorted runs [start, end) -> value).
 *
 * Round k: every process with an XCHG in round k first runs its local steps up to it and
 * snapshots what it sends (message contents and its heard-from set); then every send is matched
 * with the receive of the same round on the peer (and vice versa), and the messages are
 * delivered. After the last round every process runs its remaining local steps. Work per round
 * is proportional to the processes active in it, so a chain of p - 1 rounds costs O(p).
 */
#include "symbolic.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* a round index above this is taken as a broken schedule (it would need that much memory) */
#define SYM_MAX_ROUNDS (UINT32_C(1) << 24)

enum { SV_UNDEF = 0, SV_UNTOUCHED = 1, SV_DATA = 2 };

typedef struct {
    uint64_t h;      /* sum of hash(rank) over the inputs combined, mod 2^64 */
    uint64_t n;      /* inputs combined */
    int32_t lo, hi;  /* lowest and highest rank combined */
    uint8_t kind;    /* SV_* */
    uint8_t ordered; /* always built as in (+) inout with in.hi + 1 == inout.lo */
} symval_t;

typedef struct {
    size_t start, end; /* positions [start, end) in the buffer (or message) */
    size_t elem;       /* SV_DATA: which vector element is at `start` */
    symval_t v;
} run_t;

typedef struct {
    run_t *r;
    size_t n, cap;
} runvec_t;

/* rank intervals [a, b), sorted, disjoint, not adjacent */
typedef struct {
    uint32_t a, b;
} ival_t;

typedef struct {
    ival_t *v;
    size_t n, cap;
} ivec_t;

typedef struct {
    runvec_t runs[SCHED_NBUFS]; /* each sorted, covering [0, size[b]), equal neighbours merged */
    size_t size[SCHED_NBUFS];
    uint8_t
        absent[SCHED_NBUFS]; /* the buffer does not exist on this rank (gather's non-root OUT) */
    const sched_t *s;
    size_t pc;       /* next step to run */
    int64_t last;    /* round of the last XCHG reached, -1 = none */
    int32_t next;    /* next process in the same round's bucket, -1 = end */
    ivec_t heard;    /* ranks this process has heard from, itself included */
    sched_step_t xs; /* the XCHG being run (a copy, so that peers look here) */
    uint32_t stamp;  /* 1 + round of xs, 0 = none yet */
    size_t msg;      /* its message in the round's message table */
} proc_t;

typedef struct {
    size_t run0, nruns; /* in the run arena */
    size_t iv0, niv;    /* sender's heard-from set, in the interval arena */
} msg_t;

typedef struct {
    proc_t *procs;
    size_t proccap;       /* procs[0..proccap) are initialised (their vectors keep their memory) */
    int32_t *head, *tail; /* round k's bucket: processes whose next XCHG is of round k */
    size_t bucketcap;
    size_t hcap;
    int p;
    ucoll_coll_t coll;
    size_t elem_size;
    int root, commutative;
    const sched_args_t *args; /* p entries, args[r] is rank r's */
    symbolic_result_t *res;
    const sched_hosts_t *hosts; /* args' layout, for the messages that cross hosts (or NULL) */
    runvec_t t1, t2, t3, t4;    /* temporaries (t3 belongs to map_write) */
    runvec_t arena;             /* message contents of the current round */
    ivec_t iarena, itmp;        /* heard-from snapshots of the current round; temporary */
    msg_t *msgs;
    size_t nmsgs, msgcap;
    uint64_t *hpre;         /* hpre[i] = sum of hash(j), j < i */
    struct block_seg *segs; /* the expected blocks of one rank's OUT (verdict) */
    size_t segcap;
    int failed;
    int oom; /* the failure is ours, not the schedules' */
} sim_t;

struct symbolic_ws {
    sim_t S;
    sched_t *scheds; /* for symbolic_run_ws: kept with their step arrays */
    size_t nscheds;
    /* the per-rank arguments the entries without them make up (v forms: equal blocks) */
    sched_args_t *args;
    size_t nargs;
    size_t *eq_counts, *eq_displs;
    size_t neq;
};

/* one block of a rank's expected OUT: positions [off, off + len) hold elements elem0.. of the
 * (+) of inputs lo..hi */
typedef struct block_seg {
    size_t off, len, elem0;
    int lo, hi;
} block_seg_t;

/* ---------------------------------------------------------------- small helpers */

static uint64_t rank_hash(int r)
{
    /* splitmix64 finaliser of the rank: distinct ranks get unrelated 64-bit values */
    uint64_t z = (uint64_t)(uint32_t)r + UINT64_C(0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

const char *symbolic_buf_name(int buf)
{
    static const char *names[SCHED_NBUFS] = {"IN", "OUT", "ACC", "TMP", "TMP2"};
    return (buf >= 0 && buf < SCHED_NBUFS) ? names[buf] : "?";
}

static int region_str(char *buf, size_t len, sched_region_t g)
{
    return snprintf(buf, len, "%s[%zu,%zu)", symbolic_buf_name(g.buf), g.off, g.off + g.count);
}

char *symbolic_step_str(const sched_step_t *st, char *buf, size_t len)
{
    char a[64], b[64];
    if (len == 0)
        return buf;
    buf[0] = '\0';
    switch (st->kind) {
    case SCHED_XCHG: {
        size_t n = (size_t)snprintf(buf, len, "round %" PRIu32 ":", st->round);
        if (st->send_peer >= 0 && n < len) {
            region_str(a, sizeof(a), st->send);
            n += (size_t)snprintf(buf + n, len - n, " send %s to %d", a, (int)st->send_peer);
        }
        if (st->recv_peer >= 0 && n < len) {
            region_str(b, sizeof(b), st->recv);
            n += (size_t)snprintf(buf + n, len - n, "%s recv %s from %d",
                                  st->send_peer >= 0 ? "," : "", b, (int)st->recv_peer);
        }
        if (st->send_peer < 0 && st->recv_peer < 0 && n < len)
            snprintf(buf + n, len - n, " nothing");
        break;
    }
    case SCHED_COPY:
        region_str(a, sizeof(a), st->src);
        region_str(b, sizeof(b), st->dst);
        snprintf(buf, len, "%s = %s", b, a);
        break;
    case SCHED_REDUCE:
        region_str(a, sizeof(a), st->src);
        region_str(b, sizeof(b), st->dst);
        snprintf(buf, len, "%s = %s (+) %s", b, a, b);
        break;
    default:
        snprintf(buf, len, "unknown step kind %d", (int)st->kind);
    }
    return buf;
}

/* records the first error; always returns -1 */
static int fail(sim_t *S, int rank, const sched_step_t *st, const char *fmt, ...)
{
    if (S->failed)
        return -1;
    S->failed = 1;
    char *e = S->res->error;
    const size_t len = sizeof(S->res->error);
    size_t n = 0;
    if (rank >= 0 && st != NULL) {
        char d[160];
        n = (size_t)snprintf(e, len, "rank %d [%s]: ", rank, symbolic_step_str(st, d, sizeof(d)));
    } else if (rank >= 0) {
        n = (size_t)snprintf(e, len, "rank %d: ", rank);
    }
    if (n < len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e + n, len - n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static int oom(sim_t *S)
{
    if (!S->failed)
        S->oom = 1;
    return fail(S, -1, NULL, "out of memory");
}

static int rv_reserve(sim_t *S, runvec_t *v, size_t need)
{
    if (need <= v->cap)
        return 0;
    size_t cap = v->cap ? v->cap : 4;
    while (cap < need)
        cap *= 2;
    run_t *r = realloc(v->r, cap * sizeof(*r));
    if (r == NULL)
        return oom(S);
    v->r = r;
    v->cap = cap;
    return 0;
}

static int rv_push(sim_t *S, runvec_t *v, run_t run)
{
    if (v->n == v->cap && rv_reserve(S, v, v->n + 1) != 0)
        return -1;
    v->r[v->n++] = run;
    return 0;
}

static int iv_reserve(sim_t *S, ivec_t *v, size_t need)
{
    if (need <= v->cap)
        return 0;
    size_t cap = v->cap ? v->cap : 4;
    while (cap < need)
        cap *= 2;
    ival_t *iv = realloc(v->v, cap * sizeof(*iv));
    if (iv == NULL)
        return oom(S);
    v->v = iv;
    v->cap = cap;
    return 0;
}

/* ---------------------------------------------------------------- interval maps */

static int same_value(const symval_t *a, const symval_t *b)
{
    return a->kind == b->kind && a->ordered == b->ordered && a->lo == b->lo && a->hi == b->hi &&
           a->n == b->n && a->h == b->h;
}

/* can b be appended to a as one run? */
static int mergeable(const run_t *a, const run_t *b)
{
    if (a->end != b->start || !same_value(&a->v, &b->v))
        return 0;
    return a->v.kind != SV_DATA || b->elem == a->elem + (a->end - a->start);
}

/* first run with end > pos (m->n if none) */
static size_t rv_find(const runvec_t *m, size_t pos)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->r[mid].end > pos)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* out <- the runs of [off, off + cnt), at positions relative to off */
static int map_read(sim_t *S, const runvec_t *m, size_t off, size_t cnt, runvec_t *out)
{
    out->n = 0;
    if (cnt == 0)
        return 0;
    const size_t end = off + cnt;
    for (size_t i = rv_find(m, off); i < m->n && m->r[i].start < end; i++) {
        const run_t *src = &m->r[i];
        const size_t a = src->start > off ? src->start : off;
        const size_t b = src->end < end ? src->end : end;
        run_t run = {a - off, b - off, src->elem + (a - src->start), src->v};
        if (rv_push(S, out, run) != 0)
            return -1;
    }
    return 0;
}

/* replaces [off, off + cnt) of m by src (runs at positions relative to off, covering [0, cnt)) */
static int map_write(sim_t *S, runvec_t *m, size_t off, size_t cnt, const runvec_t *src)
{
    if (cnt == 0)
        return 0;
    const size_t end = off + cnt;
    const size_t i = rv_find(m, off);
    if (src->n == 1 && m->r[i].start == off && m->r[i].end == end) {
        /* the common case: one run replaced by one run, without merging */
        run_t x = src->r[0];
        x.start = off;
        x.end = end;
        if ((i == 0 || !mergeable(&m->r[i - 1], &x)) &&
            (i + 1 == m->n || !mergeable(&x, &m->r[i + 1]))) {
            m->r[i] = x;
            return 0;
        }
    }
    const size_t j = rv_find(m, end - 1); /* runs i..j overlap the region */
    runvec_t *mid = &S->t3;
    if (src == mid)
        return fail(S, -1, NULL, "internal error: map_write from its own temporary");
    mid->n = 0;
    /* neighbours i - 1 and j + 1 are taken in too, so that merging is local to mid */
    const size_t lo = i > 0 ? i - 1 : 0;
    const size_t hi = j + 1 < m->n ? j + 1 : j;
    for (size_t k = lo; k < i; k++)
        if (rv_push(S, mid, m->r[k]) != 0)
            return -1;
    if (m->r[i].start < off) {
        run_t left = m->r[i];
        left.end = off;
        if (rv_push(S, mid, left) != 0)
            return -1;
    }
    for (size_t k = 0; k < src->n; k++) {
        run_t run = src->r[k];
        run.start += off;
        run.end += off;
        if (mid->n > 0 && mergeable(&mid->r[mid->n - 1], &run))
            mid->r[mid->n - 1].end = run.end;
        else if (rv_push(S, mid, run) != 0)
            return -1;
    }
    if (m->r[j].end > end) {
        run_t right = m->r[j];
        right.elem += end - right.start;
        right.start = end;
        if (mid->n > 0 && mergeable(&mid->r[mid->n - 1], &right))
            mid->r[mid->n - 1].end = right.end;
        else if (rv_push(S, mid, right) != 0)
            return -1;
    }
    for (size_t k = j + 1; k <= hi && k < m->n; k++) {
        if (mid->n > 0 && mergeable(&mid->r[mid->n - 1], &m->r[k]))
            mid->r[mid->n - 1].end = m->r[k].end;
        else if (rv_push(S, mid, m->r[k]) != 0)
            return -1;
    }
    /* splice: m->r[lo..hi] becomes mid */
    const size_t old = hi - lo + 1, tail = m->n - (hi + 1);
    if (rv_reserve(S, m, m->n - old + mid->n) != 0)
        return -1;
    memmove(&m->r[lo + mid->n], &m->r[hi + 1], tail * sizeof(run_t));
    memcpy(&m->r[lo], mid->r, mid->n * sizeof(run_t));
    m->n = m->n - old + mid->n;
    return 0;
}

/* ---------------------------------------------------------------- heard-from sets */

/* dst <- dst U src */
static int iv_union(sim_t *S, ivec_t *dst, const ival_t *src, size_t nsrc)
{
    ivec_t *t = &S->itmp;
    if (iv_reserve(S, t, dst->n + nsrc) != 0)
        return -1;
    t->n = 0;
    size_t i = 0, j = 0;
    while (i < dst->n || j < nsrc) {
        ival_t x;
        if (j >= nsrc || (i < dst->n && dst->v[i].a <= src[j].a))
            x = dst->v[i++];
        else
            x = src[j++];
        if (t->n > 0 && x.a <= t->v[t->n - 1].b) {
            if (x.b > t->v[t->n - 1].b)
                t->v[t->n - 1].b = x.b;
        } else {
            t->v[t->n++] = x;
        }
    }
    if (iv_reserve(S, dst, t->n) != 0)
        return -1;
    memcpy(dst->v, t->v, t->n * sizeof(ival_t));
    dst->n = t->n;
    return 0;
}

/* ---------------------------------------------------------------- steps */

static int check_region(sim_t *S, int r, const sched_step_t *st, sched_region_t g, int write,
                        const char *what)
{
    if (g.buf >= SCHED_NBUFS)
        return fail(S, r, st, "%s region names buffer %d, which does not exist", what, (int)g.buf);
    if (S->procs[r].absent[g.buf] && (g.count > 0 || g.off > 0))
        return fail(S, r, st, "%s region names %s, which does not exist on this rank of a %s", what,
                    symbolic_buf_name(g.buf), alg_coll_name(S->coll));
    const size_t size = S->procs[r].size[g.buf];
    if (g.count > size || g.off > size - g.count)
        return fail(S, r, st, "%s region lies outside %s, which has %zu elements%s", what,
                    symbolic_buf_name(g.buf), size,
                    g.buf >= SCHED_FIRST_SCRATCH ? " (sched.scratch)" : "");
    if (g.count == 0)
        return 0;
    if (write && g.buf == SCHED_BUF_IN)
        return fail(S, r, st, "writes IN, which is read-only");
    if (S->coll == UCOLL_COLL_REDUCE && r != S->root && g.buf == SCHED_BUF_OUT)
        return fail(S, r, st,
                    "a reduce touches OUT on a non-root rank (its recvbuf is not significant "
                    "and may be NULL)");
    return 0;
}

static int overlap(sched_region_t a, sched_region_t b)
{
    return a.buf == b.buf && a.count > 0 && b.count > 0 && a.off < b.off + b.count &&
           b.off < a.off + a.count;
}

/* every run of v (read from region g) must hold data */
static int require_data(sim_t *S, int r, const sched_step_t *st, sched_region_t g,
                        const runvec_t *v, const char *what)
{
    for (size_t k = 0; k < v->n; k++) {
        if (v->r[k].v.kind == SV_DATA)
            continue;
        return fail(S, r, st, "%s %s[%zu] %s", what, symbolic_buf_name(g.buf),
                    g.off + v->r[k].start,
                    v->r[k].v.kind == SV_UNTOUCHED
                        ? "before anything was written there (the user's original content)"
                        : "which is undefined (never written)");
    }
    return 0;
}

static symval_t combine(const symval_t *in, const symval_t *inout)
{
    symval_t c;
    c.kind = SV_DATA;
    c.lo = in->lo < inout->lo ? in->lo : inout->lo;
    c.hi = in->hi > inout->hi ? in->hi : inout->hi;
    c.n = in->n + inout->n;
    c.h = in->h + inout->h;
    c.ordered = in->ordered && inout->ordered && (int64_t)in->hi + 1 == (int64_t)inout->lo;
    return c;
}

static int run_local(sim_t *S, int r, const sched_step_t *st)
{
    proc_t *P = &S->procs[r];
    if (st->kind != SCHED_COPY && st->kind != SCHED_REDUCE)
        return fail(S, r, st, "unknown step kind");
    if (check_region(S, r, st, st->src, 0, "source") != 0 ||
        check_region(S, r, st, st->dst, 1, "destination") != 0)
        return -1;
    if (st->src.count != st->dst.count)
        return fail(S, r, st, "source has %zu elements, destination %zu", st->src.count,
                    st->dst.count);
    if (overlap(st->src, st->dst))
        return fail(S, r, st, "source and destination overlap");
    const size_t cnt = st->src.count;
    if (map_read(S, &P->runs[st->src.buf], st->src.off, cnt, &S->t1) != 0 ||
        require_data(S, r, st, st->src, &S->t1, "reads") != 0)
        return -1;
    if (st->kind == SCHED_COPY) {
        S->res->rank_copy_elems[r] += cnt;
        return map_write(S, &P->runs[st->dst.buf], st->dst.off, cnt, &S->t1);
    }

    S->res->rank_ops[r]++;
    S->res->rank_op_elems[r] += cnt;
    if (map_read(S, &P->runs[st->dst.buf], st->dst.off, cnt, &S->t2) != 0 ||
        require_data(S, r, st, st->dst, &S->t2, "reduces into") != 0)
        return -1;
    const runvec_t *a = &S->t1, *b = &S->t2;
    runvec_t *out = &S->t4;
    size_t i = 0, j = 0, pos = 0;
    out->n = 0;
    while (pos < cnt) {
        const run_t *x = &a->r[i], *y = &b->r[j];
        const size_t ex = x->elem + (pos - x->start), ey = y->elem + (pos - y->start);
        if (ex != ey)
            return fail(S, r, st, "combines element %zu (at %s[%zu]) with element %zu (at %s[%zu])",
                        ex, symbolic_buf_name(st->src.buf), st->src.off + pos, ey,
                        symbolic_buf_name(st->dst.buf), st->dst.off + pos);
        const size_t end = x->end < y->end ? x->end : y->end;
        run_t run = {pos, end, ey, combine(&x->v, &y->v)};
        if (rv_push(S, out, run) != 0)
            return -1;
        pos = end;
        if (x->end == end)
            i++;
        if (y->end == end)
            j++;
    }
    return map_write(S, &P->runs[st->dst.buf], st->dst.off, cnt, out);
}

/*
 * Runs process r's local steps from its pc up to its next XCHG, checks that XCHG (rounds
 * increase, peers exist) and files r in that round's bucket; at the end of the schedule, checks
 * sched.nrounds. Local steps may run this early: until its next XCHG nothing but r itself
 * touches r's buffers.
 */
static int advance(sim_t *S, int r)
{
    proc_t *P = &S->procs[r];
    const sched_t *s = P->s;
    for (; P->pc < s->nsteps; P->pc++) {
        const sched_step_t *st = &s->steps[P->pc];
        if (st->kind != SCHED_XCHG) {
            if (run_local(S, r, st) != 0)
                return -1;
            continue;
        }
        if ((int64_t)st->round <= P->last)
            return fail(S, r, st,
                        "comes after an XCHG of round %" PRId64
                        ": a process has at most one XCHG per round and round indices "
                        "must increase",
                        P->last);
        if (st->round >= s->nrounds)
            return fail(S, r, st, "sched.nrounds is %" PRIu32 ", too small for this round",
                        s->nrounds);
        if (st->send_peer < -1 || st->send_peer >= S->p || st->recv_peer < -1 ||
            st->recv_peer >= S->p)
            return fail(S, r, st, "peer out of range (p = %d)", S->p);
        if (st->send_peer == r || st->recv_peer == r)
            return fail(S, r, st, "a process sends to or receives from itself");
        P->last = st->round;
        P->next = -1;
        if (S->head[st->round] < 0)
            S->head[st->round] = r;
        else
            S->procs[S->tail[st->round]].next = r;
        S->tail[st->round] = r;
        return 0;
    }
    if ((int64_t)s->nrounds != P->last + 1)
        return fail(S, r, NULL,
                    "sched.nrounds is %" PRIu32 " but its last XCHG is in round %" PRId64,
                    s->nrounds, P->last);
    return 0;
}

/* ---------------------------------------------------------------- block collectives */

static int is_block_coll(ucoll_coll_t c)
{
    return c >= UCOLL_COLL_ALLGATHER && c <= UCOLL_COLL_SCATTERV;
}

/* max over the blocks of displs[i] + counts[i]; -1 when that does not fit a size_t. Empty
 * blocks count too, so that a schedule may name [displs[i], displs[i]) for them. */
static int extent(const size_t *counts, const size_t *displs, int p, size_t *ext)
{
    size_t m = 0;
    for (int i = 0; i < p; i++) {
        size_t e;
        if (__builtin_add_overflow(displs[i], counts[i], &e))
            return -1;
        if (e > m)
            m = e;
    }
    *ext = m;
    return 0;
}

/* IN and OUT of rank r as the contract of sched.h gives them (io[SCHED_BUF_IN],
 * io[SCHED_BUF_OUT]) and which of them do not exist; -1 when a size does not fit a size_t. The
 * count arrays the rank needs are known to be there (check_args). */
static int io_sizes(const sim_t *S, int r, size_t io[2], uint8_t absent[SCHED_NBUFS])
{
    const sched_args_t *a = &S->args[r];
    const size_t c = a->count, p = (size_t)S->p;
    const int root = r == S->root;
    size_t pc = 0;
    memset(absent, 0, SCHED_NBUFS);
    if (__builtin_mul_overflow(p, c, &pc))
        return -1;
    io[SCHED_BUF_IN] = io[SCHED_BUF_OUT] = c;
    switch (S->coll) {
    case UCOLL_COLL_ALLGATHER:
        io[SCHED_BUF_OUT] = pc;
        return 0;
    case UCOLL_COLL_ALLGATHERV:
        return extent(a->recv_counts, a->recv_displs, S->p, &io[SCHED_BUF_OUT]);
    case UCOLL_COLL_REDUCE_SCATTER_BLOCK:
        io[SCHED_BUF_IN] = pc;
        return 0;
    case UCOLL_COLL_REDUCE_SCATTER: {
        size_t sum = 0;
        for (int i = 0; i < S->p; i++)
            if (__builtin_add_overflow(sum, a->recv_counts[i], &sum))
                return -1;
        io[SCHED_BUF_IN] = sum;
        io[SCHED_BUF_OUT] = a->recv_counts[r];
        return 0;
    }
    case UCOLL_COLL_ALLTOALL:
        io[SCHED_BUF_IN] = io[SCHED_BUF_OUT] = pc;
        return 0;
    case UCOLL_COLL_ALLTOALLV:
        if (extent(a->send_counts, a->send_displs, S->p, &io[SCHED_BUF_IN]) != 0)
            return -1;
        return extent(a->recv_counts, a->recv_displs, S->p, &io[SCHED_BUF_OUT]);
    case UCOLL_COLL_GATHER:
    case UCOLL_COLL_GATHERV:
        absent[SCHED_BUF_OUT] = !root;
        io[SCHED_BUF_OUT] = 0;
        if (!root)
            return 0;
        if (S->coll == UCOLL_COLL_GATHER) {
            io[SCHED_BUF_OUT] = pc;
            return 0;
        }
        return extent(a->recv_counts, a->recv_displs, S->p, &io[SCHED_BUF_OUT]);
    case UCOLL_COLL_SCATTER:
    case UCOLL_COLL_SCATTERV:
        absent[SCHED_BUF_IN] = !root;
        io[SCHED_BUF_IN] = 0;
        if (!root)
            return 0;
        if (S->coll == UCOLL_COLL_SCATTER) {
            io[SCHED_BUF_IN] = pc;
            return 0;
        }
        return extent(a->send_counts, a->send_displs, S->p, &io[SCHED_BUF_IN]);
    default:
        return 0;
    }
}

static int seg_cmp(const void *x, const void *y)
{
    const block_seg_t *a = x, *b = y;
    return a->off < b->off ? -1 : a->off > b->off;
}

static int seg_push(sim_t *S, size_t *n, size_t off, size_t len, int lo, int hi, size_t elem0)
{
    if (len == 0)
        return 0;
    if (*n == S->segcap) {
        size_t cap = S->segcap ? 2 * S->segcap : 64;
        block_seg_t *g = realloc(S->segs, cap * sizeof(*g));
        if (g == NULL)
            return oom(S);
        S->segs = g;
        S->segcap = cap;
    }
    block_seg_t g = {off, len, elem0, lo, hi};
    S->segs[(*n)++] = g;
    return 0;
}

/*
 * The blocks rank j's OUT must hold at the end, sorted by position, into S->segs (*n of them;
 * empty blocks left out); everything of OUT outside them must stay untouched. Returns 1 when two
 * blocks overlap (arguments no collective accepts), -1 on no memory.
 */
static int expected_blocks(sim_t *S, int j, size_t *n)
{
    const sched_args_t *A = S->args, *a = &S->args[j];
    const int p = S->p, root = S->root;
    const size_t c = a->count;
    int rc = 0;
    *n = 0;
    switch (S->coll) {
    case UCOLL_COLL_GATHER:
        if (j != root)
            break;
        /* fall through */
    case UCOLL_COLL_ALLGATHER: /* block i at i*c: element e of rank i's input */
        for (int i = 0; i < p && rc == 0; i++)
            rc = seg_push(S, n, (size_t)i * c, c, i, i, 0);
        break;
    case UCOLL_COLL_GATHERV:
        if (j != root)
            break;
        /* fall through */
    case UCOLL_COLL_ALLGATHERV:
        for (int i = 0; i < p && rc == 0; i++)
            rc = seg_push(S, n, a->recv_displs[i], a->recv_counts[i], i, i, 0);
        break;
    case UCOLL_COLL_REDUCE_SCATTER_BLOCK: /* element j*c + e of every input, combined */
        rc = seg_push(S, n, 0, c, 0, p - 1, (size_t)j * c);
        break;
    case UCOLL_COLL_REDUCE_SCATTER: {
        size_t first = 0;
        for (int i = 0; i < j; i++)
            first += a->recv_counts[i];
        rc = seg_push(S, n, 0, a->recv_counts[j], 0, p - 1, first);
        break;
    }
    case UCOLL_COLL_ALLTOALL: /* block i: rank i's block for j */
        for (int i = 0; i < p && rc == 0; i++)
            rc = seg_push(S, n, (size_t)i * c, c, i, i, (size_t)j * c);
        break;
    case UCOLL_COLL_ALLTOALLV:
        for (int i = 0; i < p && rc == 0; i++)
            rc = seg_push(S, n, a->recv_displs[i], a->recv_counts[i], i, i, A[i].send_displs[j]);
        break;
    case UCOLL_COLL_SCATTER: /* the root's block j */
        rc = seg_push(S, n, 0, c, root, root, (size_t)j * c);
        break;
    case UCOLL_COLL_SCATTERV:
        rc = seg_push(S, n, 0, c, root, root, A[root].send_displs[j]);
        break;
    default:
        break;
    }
    if (rc != 0)
        return -1;
    if (*n > 1) /* (qsort of a NULL array is undefined, even of none) */
        qsort(S->segs, *n, sizeof(*S->segs), seg_cmp);
    for (size_t k = 1; k < *n; k++)
        if (S->segs[k].off < S->segs[k - 1].off + S->segs[k - 1].len)
            return 1;
    return 0;
}

static int bad_args(symbolic_result_t *res, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->error, sizeof(res->error), fmt, ap);
    va_end(ap);
    return -1;
}

/*
 * The per-rank arguments must describe one collective: ranks and sizes in place, the same root,
 * element size and commutativity everywhere, the count arrays present where the rank needs them,
 * and the two sides of every block agreeing on its length (what MPI requires of a correct call).
 */
static int check_args(sim_t *S, symbolic_result_t *res)
{
    const sched_args_t *A = S->args;
    const int p = S->p;
    const ucoll_coll_t coll = S->coll;
    const int need_recv = coll == UCOLL_COLL_ALLGATHERV || coll == UCOLL_COLL_REDUCE_SCATTER ||
                          coll == UCOLL_COLL_ALLTOALLV;
    for (int r = 0; r < p; r++) {
        const sched_args_t *a = &A[r];
        if (a->rank != r || a->size != p)
            return bad_args(res, "args[%d] is rank %d of %d, not rank %d of %d", r, a->rank,
                            a->size, r, p);
        if (a->root != S->root || a->elem_size != S->elem_size ||
            (a->commutative != 0) != S->commutative)
            return bad_args(res,
                            "rank %d's root, element size or commutativity differs from "
                            "rank 0's",
                            r);
        const int v_counts = coll == UCOLL_COLL_ALLGATHERV || coll == UCOLL_COLL_REDUCE_SCATTER ||
                             coll == UCOLL_COLL_ALLTOALLV || coll == UCOLL_COLL_GATHERV ||
                             coll == UCOLL_COLL_SCATTERV;
        if (!v_counts && a->count != A[0].count)
            return bad_args(res, "rank %d has count %zu, rank 0 %zu", r, a->count, A[0].count);
        const int recv = need_recv || (coll == UCOLL_COLL_GATHERV && r == S->root);
        const int send =
            coll == UCOLL_COLL_ALLTOALLV || (coll == UCOLL_COLL_SCATTERV && r == S->root);
        if ((recv && (a->recv_counts == NULL ||
                      (coll != UCOLL_COLL_REDUCE_SCATTER && a->recv_displs == NULL))) ||
            (send && (a->send_counts == NULL || a->send_displs == NULL)))
            return bad_args(res, "rank %d lacks the count or displacement arrays of a %s", r,
                            alg_coll_name(coll));
        size_t io[2];
        uint8_t absent[SCHED_NBUFS];
        if (io_sizes(S, r, io, absent) != 0)
            return bad_args(res, "rank %d: a buffer's size does not fit a size_t", r);
    }
    for (int j = 0; j < p; j++)
        for (int i = 0; i < p; i++) {
            size_t want, got;
            switch (coll) {
            case UCOLL_COLL_ALLGATHERV: /* rank j receives rank i's whole input */
                want = A[i].count, got = A[j].recv_counts[i];
                break;
            case UCOLL_COLL_GATHERV:
                if (j != S->root)
                    continue;
                want = A[i].count, got = A[j].recv_counts[i];
                break;
            case UCOLL_COLL_SCATTERV:
                if (j != S->root)
                    continue;
                want = A[j].send_counts[i], got = A[i].count;
                break;
            case UCOLL_COLL_REDUCE_SCATTER: /* every rank passes the same counts */
                want = A[0].recv_counts[i], got = A[j].recv_counts[i];
                break;
            case UCOLL_COLL_ALLTOALLV:
                want = A[i].send_counts[j], got = A[j].recv_counts[i];
                break;
            default:
                continue;
            }
            if (want != got)
                return bad_args(res, "block %d -> %d: %zu elements sent, %zu received",
                                coll == UCOLL_COLL_SCATTERV ? j : i,
                                coll == UCOLL_COLL_SCATTERV ? i : j, want, got);
        }
    if (is_block_coll(coll))
        for (int j = 0; j < p; j++) {
            size_t n;
            const int rc = expected_blocks(S, j, &n);
            if (rc < 0)
                return bad_args(res, "out of memory");
            if (rc > 0)
                return bad_args(res, "rank %d: two blocks of OUT overlap", j);
        }
    return 0;
}

/* ---------------------------------------------------------------- setup */

static int alloc_result(symbolic_result_t *res, int p)
{
    const size_t n = (size_t)p;
    res->p = p;
    res->rank_rounds = calloc(n, sizeof(*res->rank_rounds));
    res->rank_ops = calloc(n, sizeof(*res->rank_ops));
    res->rank_op_elems = calloc(n, sizeof(*res->rank_op_elems));
    res->rank_copy_elems = calloc(n, sizeof(*res->rank_copy_elems));
    res->rank_bytes_sent = calloc(n, sizeof(*res->rank_bytes_sent));
    res->rank_bytes_recv = calloc(n, sizeof(*res->rank_bytes_recv));
    res->rank_heard = calloc(n, sizeof(*res->rank_heard));
    res->rank_cross_msgs = calloc(n, sizeof(*res->rank_cross_msgs));
    res->rank_cross_bytes = calloc(n, sizeof(*res->rank_cross_bytes));
    if (!res->rank_rounds || !res->rank_ops || !res->rank_op_elems || !res->rank_copy_elems ||
        !res->rank_bytes_sent || !res->rank_bytes_recv || !res->rank_heard ||
        !res->rank_cross_msgs || !res->rank_cross_bytes)
        return -1;
    return 0;
}

void symbolic_result_free(symbolic_result_t *res)
{
    if (res == NULL)
        return;
    free(res->rank_rounds);
    free(res->rank_ops);
    free(res->rank_op_elems);
    free(res->rank_copy_elems);
    res->rank_copy_elems = NULL;
    free(res->rank_bytes_sent);
    free(res->rank_bytes_recv);
    free(res->rank_heard);
    free(res->rank_cross_msgs);
    free(res->rank_cross_bytes);
    res->rank_cross_msgs = res->rank_cross_bytes = NULL;
    res->rank_rounds = NULL;
    res->rank_ops = res->rank_op_elems = res->rank_bytes_sent = res->rank_bytes_recv = NULL;
    res->rank_heard = NULL;
}

static symval_t input_value(sim_t *S, int r)
{
    symval_t v = {S->hpre[r + 1] - S->hpre[r], 1, r, r, SV_DATA, 1};
    return v;
}

static int init_procs(sim_t *S, const sched_t *scheds)
{
    const size_t p = (size_t)S->p;
    if (p > S->proccap) {
        proc_t *procs = realloc(S->procs, p * sizeof(*procs));
        if (procs == NULL)
            return oom(S);
        memset(procs + S->proccap, 0, (p - S->proccap) * sizeof(*procs));
        S->procs = procs;
        S->proccap = p;
    }
    if (p + 1 > S->hcap) {
        uint64_t *h = realloc(S->hpre, (p + 1) * sizeof(*h));
        if (h == NULL)
            return oom(S);
        S->hpre = h;
        S->hcap = p + 1;
    }
    S->hpre[0] = 0;
    for (int r = 0; r < S->p; r++)
        S->hpre[r + 1] = S->hpre[r] + rank_hash(r);
    for (int r = 0; r < S->p; r++) {
        proc_t *P = &S->procs[r];
        P->s = &scheds[r];
        P->pc = 0;
        P->stamp = 0;
        P->last = -1;
        P->next = -1;
        size_t io[2];
        if (io_sizes(S, r, io, P->absent) != 0)
            return fail(S, r, NULL, "internal error: the buffer sizes do not fit a size_t");
        for (int b = 0; b < SCHED_NBUFS; b++) {
            P->runs[b].n = 0;
            P->size[b] = b < SCHED_FIRST_SCRATCH ? io[b] : scheds[r].scratch[b];
            if (P->size[b] == 0)
                continue;
            run_t run = {0, P->size[b], 0, {0, 0, 0, 0, SV_UNDEF, 0}};
            if (b == SCHED_BUF_IN && S->coll != UCOLL_COLL_BCAST)
                run.v = input_value(S, r); /* bcast has no input buffer: IN stays undefined */
            else if (b == SCHED_BUF_OUT && S->coll == UCOLL_COLL_BCAST && r == S->root)
                run.v = input_value(S, r); /* the root's data */
            else if (b == SCHED_BUF_OUT)
                run.v.kind = SV_UNTOUCHED;
            if (rv_push(S, &P->runs[b], run) != 0)
                return -1;
        }
        if (iv_reserve(S, &P->heard, 1) != 0)
            return -1;
        P->heard.v[0].a = (uint32_t)r;
        P->heard.v[0].b = (uint32_t)r + 1;
        P->heard.n = 1;
    }
    return 0;
}

/* ---------------------------------------------------------------- one round */

static int snapshot_send(sim_t *S, int r, const sched_step_t *st)
{
    proc_t *P = &S->procs[r];
    if (S->nmsgs == S->msgcap) {
        size_t cap = S->msgcap ? 2 * S->msgcap : 64;
        msg_t *m = realloc(S->msgs, cap * sizeof(*m));
        if (m == NULL)
            return oom(S);
        S->msgs = m;
        S->msgcap = cap;
    }
    msg_t *m = &S->msgs[S->nmsgs];
    if (map_read(S, &P->runs[st->send.buf], st->send.off, st->send.count, &S->t1) != 0 ||
        require_data(S, r, st, st->send, &S->t1, "sends") != 0)
        return -1;
    m->run0 = S->arena.n;
    m->nruns = S->t1.n;
    if (rv_reserve(S, &S->arena, S->arena.n + S->t1.n) != 0)
        return -1;
    if (S->t1.n > 0) /* the arena may still be NULL: no memcpy to NULL, even of 0 bytes */
        memcpy(&S->arena.r[S->arena.n], S->t1.r, S->t1.n * sizeof(run_t));
    S->arena.n += S->t1.n;
    m->iv0 = S->iarena.n;
    m->niv = P->heard.n;
    if (iv_reserve(S, &S->iarena, S->iarena.n + P->heard.n) != 0)
        return -1;
    if (P->heard.n > 0)
        memcpy(&S->iarena.v[S->iarena.n], P->heard.v, P->heard.n * sizeof(ival_t));
    S->iarena.n += P->heard.n;
    P->msg = S->nmsgs++;
    return 0;
}

static int run_round(sim_t *S, uint32_t k)
{
    const uint32_t stamp = k + 1;
    S->nmsgs = 0;
    S->arena.n = 0;
    S->iarena.n = 0;
    /* what is sent: the processes have run their local steps up to this XCHG */
    for (int r = S->head[k]; r >= 0; r = S->procs[r].next) {
        proc_t *P = &S->procs[r];
        P->xs = P->s->steps[P->pc];
        P->stamp = stamp;
        const sched_step_t *st = &P->xs;
        if (st->send_peer >= 0 && check_region(S, r, st, st->send, 0, "send") != 0)
            return -1;
        if (st->recv_peer >= 0 && check_region(S, r, st, st->recv, 1, "receive") != 0)
            return -1;
        if (st->send_peer >= 0 && st->recv_peer >= 0 && overlap(st->send, st->recv))
            return fail(S, r, st, "send and receive regions overlap");
        if (st->send_peer >= 0 && snapshot_send(S, r, st) != 0)
            return -1;
    }
    /* matching */
    for (int r = S->head[k]; r >= 0; r = S->procs[r].next) {
        const sched_step_t *st = &S->procs[r].xs;
        if (st->send_peer >= 0) {
            const proc_t *Q = &S->procs[st->send_peer];
            if (Q->stamp != stamp || Q->xs.recv_peer != r)
                return fail(S, r, st, "rank %d does not receive from %d in round %" PRIu32,
                            (int)st->send_peer, r, k);
            if (Q->xs.recv.count != st->send.count)
                return fail(S, r, st, "sends %zu elements but rank %d receives %zu", st->send.count,
                            (int)st->send_peer, Q->xs.recv.count);
        }
        if (st->recv_peer >= 0) {
            const proc_t *Q = &S->procs[st->recv_peer];
            if (Q->stamp != stamp || Q->xs.send_peer != r)
                return fail(S, r, st, "rank %d sends nothing to %d in round %" PRIu32,
                            (int)st->recv_peer, r, k);
        }
    }
    /* delivery, then on to each process's next XCHG */
    uint64_t round_max = 0, round_cpu_max = 0;
    uint32_t msgs = 0;
    for (int r = S->head[k]; r >= 0;) {
        proc_t *P = &S->procs[r];
        const sched_step_t *st = &P->xs;
        const int next = P->next; /* advance() files r in a later bucket */
        uint64_t sent = 0, recvd = 0;
        if (st->send_peer >= 0) {
            sent = (uint64_t)st->send.count * S->elem_size;
            S->res->rank_bytes_sent[r] += sent;
            S->res->total_bytes += sent;
            if (S->hosts != NULL && S->hosts->host_of[r] != S->hosts->host_of[st->send_peer]) {
                S->res->rank_cross_msgs[r]++;
                S->res->rank_cross_bytes[r] += sent;
                S->res->cross_msgs++;
                S->res->cross_bytes += sent;
            }
        }
        if (st->recv_peer >= 0) {
            const msg_t *m = &S->msgs[S->procs[st->recv_peer].msg];
            runvec_t content = {&S->arena.r[m->run0], m->nruns, m->nruns};
            if (map_write(S, &P->runs[st->recv.buf], st->recv.off, st->recv.count, &content) != 0 ||
                iv_union(S, &P->heard, &S->iarena.v[m->iv0], m->niv) != 0)
                return -1;
            recvd = (uint64_t)st->recv.count * S->elem_size;
            S->res->rank_bytes_recv[r] += recvd;
        }
        const uint64_t mx = sent > recvd ? sent : recvd;
        msgs += sent > 0;
        if (mx > round_max)
            round_max = mx;
        if (sent + recvd > round_cpu_max)
            round_cpu_max = sent + recvd;
        P->pc++;
        if (advance(S, r) != 0)
            return -1;
        r = next;
    }
    S->res->volume_bytes += round_max;
    S->res->cpu_volume_bytes += round_cpu_max;
    if (msgs > S->res->max_msgs)
        S->res->max_msgs = msgs;
    return 0;
}

/* ---------------------------------------------------------------- verdict */

static void describe(const run_t *run, char *buf, size_t len)
{
    if (run->v.kind == SV_UNDEF)
        snprintf(buf, len, "is undefined");
    else if (run->v.kind == SV_UNTOUCHED)
        snprintf(buf, len, "is untouched");
    else
        snprintf(buf, len,
                 "holds element %zu of %" PRIu64 " inputs spanning ranks %d..%d (%sordered)",
                 run->elem, run->v.n, (int)run->v.lo, (int)run->v.hi, run->v.ordered ? "" : "not ");
}

/* OUT of rank r must hold, at every position i, element i of exactly the inputs lo..hi */
static int expect_inputs(sim_t *S, int r, int lo, int hi, int need_order)
{
    const runvec_t *m = &S->procs[r].runs[SCHED_BUF_OUT];
    const uint64_t h = S->hpre[hi + 1] - S->hpre[lo];
    for (size_t k = 0; k < m->n; k++) {
        const run_t *x = &m->r[k];
        if (x->v.kind == SV_DATA && x->elem == x->start && x->v.lo == lo && x->v.hi == hi &&
            x->v.n == (uint64_t)(hi - lo + 1) && x->v.h == h && (x->v.ordered || !need_order))
            continue;
        char d[160];
        describe(x, d, sizeof(d));
        if (x->v.kind == SV_DATA && x->v.lo == lo && x->v.hi == hi &&
            x->v.n == (uint64_t)(hi - lo + 1) && x->v.h != h)
            snprintf(d + strlen(d), sizeof(d) - strlen(d), " but not each exactly once");
        return fail(S, r, NULL, "OUT[%zu,%zu) %s; expected inputs %d..%d%s", x->start, x->end, d,
                    lo, hi, need_order ? " in order" : "");
    }
    return 0;
}

static int expect_untouched(sim_t *S, int r)
{
    const runvec_t *m = &S->procs[r].runs[SCHED_BUF_OUT];
    for (size_t k = 0; k < m->n; k++)
        if (m->r[k].v.kind != SV_UNTOUCHED) {
            char d[160];
            describe(&m->r[k], d, sizeof(d));
            return fail(S, r, NULL, "OUT[%zu,%zu) %s; expected it untouched", m->r[k].start,
                        m->r[k].end, d);
        }
    return 0;
}

/* OUT of rank r must hold the blocks expected_blocks gives and be untouched everywhere else */
static int expect_blocks(sim_t *S, int r, int need_order)
{
    size_t n;
    if (expected_blocks(S, r, &n) != 0)
        return S->failed ? -1 : fail(S, r, NULL, "internal error: overlapping blocks");
    const runvec_t *m = &S->procs[r].runs[SCHED_BUF_OUT];
    const block_seg_t *g = S->segs;
    size_t pos = 0, k = 0, s = 0;
    while (k < m->n) {
        const run_t *x = &m->r[k];
        while (s < n && g[s].off + g[s].len <= pos)
            s++;
        const int inside = s < n && g[s].off <= pos;
        size_t end = inside ? g[s].off + g[s].len : (s < n ? g[s].off : SIZE_MAX);
        if (x->end < end)
            end = x->end;
        /* the piece [pos, end) of run x */
        run_t piece = {pos, end, x->elem + (pos - x->start), x->v};
        int good;
        if (inside) {
            const block_seg_t *b = &g[s];
            const uint64_t h = S->hpre[b->hi + 1] - S->hpre[b->lo];
            good = x->v.kind == SV_DATA && piece.elem == b->elem0 + (pos - b->off) &&
                   x->v.lo == b->lo && x->v.hi == b->hi &&
                   x->v.n == (uint64_t)(b->hi - b->lo + 1) && x->v.h == h &&
                   (x->v.ordered || !need_order || b->lo == b->hi);
        } else {
            good = x->v.kind == SV_UNTOUCHED;
        }
        if (!good) {
            char d[160], w[160];
            describe(&piece, d, sizeof(d));
            if (inside)
                snprintf(w, sizeof(w), "element %zu of inputs %d..%d%s",
                         g[s].elem0 + (pos - g[s].off), g[s].lo, g[s].hi,
                         need_order && g[s].lo != g[s].hi ? " in order" : "");
            else
                snprintf(w, sizeof(w), "it untouched (outside every block)");
            return fail(S, r, NULL, "OUT[%zu,%zu) %s; expected %s", pos, end, d, w);
        }
        pos = end;
        if (pos == x->end)
            k++;
    }
    return 0;
}

static int verdict(sim_t *S)
{
    const int p = S->p, ord = !S->commutative;
    for (int r = 0; r < p; r++) {
        const ivec_t *hd = &S->procs[r].heard;
        int heard = 0;
        for (size_t k = 0; k < hd->n; k++)
            heard += (int)(hd->v[k].b - hd->v[k].a);
        S->res->rank_heard[r] = heard;
    }
    for (int r = 0; r < p; r++) {
        int rc = 0;
        switch (S->coll) {
        case UCOLL_COLL_EXSCAN:
            rc = r == 0 ? expect_untouched(S, r) : expect_inputs(S, r, 0, r - 1, ord);
            break;
        case UCOLL_COLL_SCAN:
            rc = expect_inputs(S, r, 0, r, ord);
            break;
        case UCOLL_COLL_REDUCE:
            rc = r == S->root ? expect_inputs(S, r, 0, p - 1, ord) : expect_untouched(S, r);
            break;
        case UCOLL_COLL_ALLREDUCE:
            rc = expect_inputs(S, r, 0, p - 1, ord);
            break;
        case UCOLL_COLL_BCAST:
            rc = expect_inputs(S, r, S->root, S->root, 0);
            break;
        case UCOLL_COLL_BARRIER:
            if (S->res->rank_heard[r] != p)
                rc =
                    fail(S, r, NULL, "has heard from %d of the %d ranks", S->res->rank_heard[r], p);
            break;
        case UCOLL_COLL_ALLGATHER:
        case UCOLL_COLL_ALLGATHERV:
        case UCOLL_COLL_REDUCE_SCATTER_BLOCK:
        case UCOLL_COLL_REDUCE_SCATTER:
        case UCOLL_COLL_ALLTOALL:
        case UCOLL_COLL_ALLTOALLV:
        case UCOLL_COLL_GATHER:
        case UCOLL_COLL_GATHERV:
        case UCOLL_COLL_SCATTER:
        case UCOLL_COLL_SCATTERV:
            rc = expect_blocks(S, r, ord);
            break;
        default:
            rc = fail(S, r, NULL, "no verdict for the %s collective", alg_coll_name(S->coll));
            break;
        }
        if (rc != 0)
            return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- entry points */

symbolic_ws_t *symbolic_ws_new(void)
{
    return calloc(1, sizeof(symbolic_ws_t));
}

void symbolic_ws_free(symbolic_ws_t *ws)
{
    if (ws == NULL)
        return;
    sim_t *S = &ws->S;
    for (size_t r = 0; r < S->proccap; r++) {
        for (int b = 0; b < SCHED_NBUFS; b++)
            free(S->procs[r].runs[b].r);
        free(S->procs[r].heard.v);
    }
    free(S->procs);
    free(S->head);
    free(S->tail);
    free(S->t1.r);
    free(S->t2.r);
    free(S->t3.r);
    free(S->t4.r);
    free(S->arena.r);
    free(S->iarena.v);
    free(S->itmp.v);
    free(S->msgs);
    free(S->hpre);
    free(S->segs);
    for (size_t r = 0; r < ws->nscheds; r++)
        sched_destroy(&ws->scheds[r]);
    free(ws->scheds);
    free(ws->args);
    free(ws->eq_counts);
    free(ws->eq_displs);
    free(ws);
}

static int is_v_coll(ucoll_coll_t c)
{
    return c == UCOLL_COLL_ALLGATHERV || c == UCOLL_COLL_REDUCE_SCATTER ||
           c == UCOLL_COLL_ALLTOALLV || c == UCOLL_COLL_GATHERV || c == UCOLL_COLL_SCATTERV;
}

/* rank r's arguments where every block has `count` elements: eq_counts[i] = count and
 * eq_displs[i] = i * count (p entries each, only read for the v forms) */
static void fill_args(sched_args_t *a, ucoll_coll_t coll, int r, int p, size_t count,
                      size_t elem_size, int root, int commutative, int param,
                      const size_t *eq_counts, const size_t *eq_displs)
{
    memset(a, 0, sizeof(*a));
    a->rank = r;
    a->size = p;
    a->root = root;
    a->count = count;
    a->elem_size = elem_size;
    a->param = param;
    a->commutative = commutative != 0;
    switch (coll) {
    case UCOLL_COLL_ALLGATHERV:
        a->recv_counts = eq_counts, a->recv_displs = eq_displs;
        break;
    case UCOLL_COLL_REDUCE_SCATTER:
        a->recv_counts = eq_counts;
        break;
    case UCOLL_COLL_ALLTOALLV:
        a->recv_counts = a->send_counts = eq_counts;
        a->recv_displs = a->send_displs = eq_displs;
        break;
    case UCOLL_COLL_GATHERV: /* only the root's are significant */
        if (r == root)
            a->recv_counts = eq_counts, a->recv_displs = eq_displs;
        break;
    case UCOLL_COLL_SCATTERV:
        if (r == root)
            a->send_counts = eq_counts, a->send_displs = eq_displs;
        break;
    default:
        break;
    }
}

/* equal blocks of `count` elements for p ranks in eq_counts / eq_displs; -1 on no memory or
 * when p * count does not fit a size_t */
static int equal_blocks(size_t **counts, size_t **displs, size_t *cap, int p, size_t count)
{
    size_t total;
    if (__builtin_mul_overflow((size_t)p, count, &total))
        return -1;
    if ((size_t)p > *cap) {
        size_t *c = realloc(*counts, (size_t)p * sizeof(*c));
        if (c != NULL)
            *counts = c;
        size_t *d = realloc(*displs, (size_t)p * sizeof(*d));
        if (d != NULL)
            *displs = d;
        if (c == NULL || d == NULL)
            return -1;
        *cap = (size_t)p;
    }
    for (int i = 0; i < p; i++) {
        (*counts)[i] = count;
        (*displs)[i] = (size_t)i * count;
    }
    return 0;
}

/* every rank's arguments for the entries that take one count (v forms: equal blocks) */
static const sched_args_t *ws_args(symbolic_ws_t *ws, ucoll_coll_t coll, int p, size_t count,
                                   size_t elem_size, int root, int commutative, int param)
{
    if (p < 1)
        return NULL;
    if ((size_t)p > ws->nargs) {
        sched_args_t *a = realloc(ws->args, (size_t)p * sizeof(*a));
        if (a == NULL)
            return NULL;
        ws->args = a;
        ws->nargs = (size_t)p;
    }
    if (is_v_coll(coll) && equal_blocks(&ws->eq_counts, &ws->eq_displs, &ws->neq, p, count) != 0)
        return NULL;
    for (int r = 0; r < p; r++)
        fill_args(&ws->args[r], coll, r, p, count, elem_size, root, commutative, param,
                  ws->eq_counts, ws->eq_displs);
    return ws->args;
}

/* clears res and takes coll, p and args into S; -1 (res->error says why) when they do not
 * describe one collective */
static int prepare(sim_t *S, ucoll_coll_t coll, int p, const sched_args_t *args,
                   symbolic_result_t *res)
{
    memset(res, 0, sizeof(*res));
    if (p < 1 || alg_coll_name(coll) == NULL || args == NULL || args[0].root < 0 ||
        args[0].root >= p)
        return bad_args(res, "invalid arguments (p = %d, collective %d, root %d)", p, (int)coll,
                        args != NULL && p >= 1 ? args[0].root : -1);
    S->p = p;
    S->coll = coll;
    S->args = args;
    S->elem_size = args[0].elem_size;
    S->root = args[0].root;
    S->commutative = args[0].commutative != 0;
    S->res = res;
    S->failed = 0;
    S->oom = 0;
    const int rc = check_args(S, res);
    S->res = NULL;
    return rc;
}

static int run_scheds(sim_t *S, const sched_t *scheds, ucoll_coll_t coll, int p,
                      const sched_args_t *args, symbolic_result_t *res)
{
    if (prepare(S, coll, p, args, res) != 0)
        return -1;
    if (scheds == NULL)
        return bad_args(res, "no schedules");
    S->res = res;
    S->hosts =
        args != NULL && args[0].hosts != NULL && args[0].hosts->size == p ? args[0].hosts : NULL;
    uint32_t nrounds = 0;
    int rc = 0;
    if (alloc_result(res, p) != 0) {
        oom(S);
        goto out;
    }
    if (init_procs(S, scheds) != 0)
        goto out;
    for (int r = 0; r < p; r++) {
        if (scheds[r].failed) {
            fail(S, r, NULL, "building the schedule ran out of memory");
            goto out;
        }
        if (scheds[r].nrounds >= SYM_MAX_ROUNDS) {
            fail(S, r, NULL, "sched.nrounds is too large");
            goto out;
        }
        res->rank_rounds[r] = scheds[r].nrounds;
        if (scheds[r].nrounds > nrounds)
            nrounds = scheds[r].nrounds;
    }
    if (nrounds > S->bucketcap) {
        int32_t *h = realloc(S->head, nrounds * sizeof(*h));
        if (h != NULL)
            S->head = h;
        int32_t *t = realloc(S->tail, nrounds * sizeof(*t));
        if (t != NULL)
            S->tail = t;
        if (h == NULL || t == NULL) {
            oom(S);
            goto out;
        }
        S->bucketcap = nrounds;
    }
    for (uint32_t k = 0; k < nrounds; k++)
        S->head[k] = S->tail[k] = -1;
    /* from here on, problems (other than no memory) are verdicts on the schedules */
    res->rounds = nrounds;
    for (int r = 0; r < p; r++)
        if (advance(S, r) != 0)
            goto out;
    for (uint32_t k = 0; k < nrounds; k++)
        if (run_round(S, k) != 0)
            goto out;
    for (int r = 0; r < p; r++)
        if (res->rank_ops[r] > res->max_ops)
            res->max_ops = res->rank_ops[r];
    if (verdict(S) != 0)
        goto out;
    res->ok = 1;
out:
    if (S->oom)
        rc = -1;
    S->res = NULL;
    S->args = NULL;
    return rc;
}

static int no_memory(symbolic_result_t *res)
{
    memset(res, 0, sizeof(*res));
    snprintf(res->error, sizeof(res->error), "out of memory");
    return -1;
}

int symbolic_run_scheds(const sched_t *scheds, ucoll_coll_t coll, int p, size_t count,
                        size_t elem_size, int root, int commutative, symbolic_result_t *res)
{
    symbolic_ws_t *ws = symbolic_ws_new();
    if (ws == NULL)
        return no_memory(res);
    const sched_args_t *args = ws_args(ws, coll, p, count, elem_size, root, commutative, 0);
    int rc;
    if (args != NULL) {
        rc = run_scheds(&ws->S, scheds, coll, p, args, res);
    } else {
        memset(res, 0, sizeof(*res));
        rc = bad_args(res, "invalid arguments or out of memory (p = %d)", p);
    }
    symbolic_ws_free(ws);
    return rc;
}

int symbolic_run_scheds_args(const sched_t *scheds, ucoll_coll_t coll, int p,
                             const sched_args_t *args, symbolic_result_t *res)
{
    symbolic_ws_t *ws = symbolic_ws_new();
    if (ws == NULL)
        return no_memory(res);
    int rc = run_scheds(&ws->S, scheds, coll, p, args, res);
    symbolic_ws_free(ws);
    return rc;
}

int symbolic_build(const alg_desc_t *alg, int param, int p, int rank, size_t count,
                   size_t elem_size, int root, int commutative, sched_t *s)
{
    size_t *counts = NULL, *displs = NULL, cap = 0;
    if (is_v_coll(alg->coll) && equal_blocks(&counts, &displs, &cap, p, count) != 0) {
        free(counts);
        free(displs);
        return -1;
    }
    sched_args_t args;
    fill_args(&args, alg->coll, rank, p, count, elem_size, root, commutative, param, counts,
              displs);
    int rc = alg->build(s, &args);
    free(counts);
    free(displs);
    return rc;
}

/* builds every rank's schedule from args[r] into ws->scheds and runs them */
static int build_and_run(symbolic_ws_t *ws, const alg_desc_t *alg, ucoll_coll_t coll, int p,
                         const sched_args_t *args, symbolic_result_t *res)
{
    memset(res, 0, sizeof(*res));
    if (ws == NULL || alg == NULL || alg->build == NULL || p < 1 || args == NULL)
        return bad_args(res, "invalid arguments (p = %d)", p);
    if (alg->coll != coll)
        return bad_args(res, "algorithm %s is not one of %s", alg->name,
                        alg_coll_name(coll) ? alg_coll_name(coll) : "the collectives");
    /* no builder sees arguments that do not describe one collective */
    if (prepare(&ws->S, coll, p, args, res) != 0)
        return -1;
    if ((size_t)p > ws->nscheds) {
        sched_t *sc = realloc(ws->scheds, (size_t)p * sizeof(*sc));
        if (sc == NULL)
            return no_memory(res);
        for (size_t r = ws->nscheds; r < (size_t)p; r++)
            sched_init(&sc[r]);
        ws->scheds = sc;
        ws->nscheds = (size_t)p;
    }
    for (int r = 0; r < p; r++) {
        sched_clear(&ws->scheds[r]);
        if (alg->build(&ws->scheds[r], &args[r]) != 0)
            return bad_args(res, "rank %d: %s", r,
                            ws->scheds[r].failed ? "out of memory building the schedule"
                                                 : "the builder refused these arguments");
    }
    return run_scheds(&ws->S, ws->scheds, coll, p, args, res);
}

int symbolic_run_ws(symbolic_ws_t *ws, const alg_desc_t *alg, int param, ucoll_coll_t coll, int p,
                    size_t count, size_t elem_size, int root, int commutative,
                    symbolic_result_t *res)
{
    memset(res, 0, sizeof(*res));
    if (ws == NULL || p < 1 || root < 0 || root >= p)
        return bad_args(res, "invalid arguments (p = %d, root = %d)", p, root);
    const sched_args_t *args = ws_args(ws, coll, p, count, elem_size, root, commutative, param);
    if (args == NULL)
        return bad_args(res, "out of memory, or p * count does not fit a size_t");
    return build_and_run(ws, alg, coll, p, args, res);
}

int symbolic_run(const alg_desc_t *alg, int param, ucoll_coll_t coll, int p, size_t count,
                 size_t elem_size, int root, int commutative, symbolic_result_t *res)
{
    symbolic_ws_t *ws = symbolic_ws_new();
    if (ws == NULL)
        return no_memory(res);
    int rc = symbolic_run_ws(ws, alg, param, coll, p, count, elem_size, root, commutative, res);
    symbolic_ws_free(ws);
    return rc;
}

int symbolic_run_layout(const alg_desc_t *alg, int param, ucoll_coll_t coll, int p, size_t count,
                        size_t elem_size, int root, int commutative, const sched_hosts_t *hosts,
                        const node_aware_plan_t *plan, symbolic_result_t *res)
{
    memset(res, 0, sizeof(*res));
    if (p < 1 || root < 0 || root >= p || hosts == NULL || hosts->size != p)
        return bad_args(res, "invalid arguments (p = %d, root = %d, layout)", p, root);
    symbolic_ws_t *ws = symbolic_ws_new();
    if (ws == NULL)
        return no_memory(res);
    sched_args_t *args =
        (sched_args_t *)ws_args(ws, coll, p, count, elem_size, root, commutative, param);
    int rc;
    if (args == NULL) {
        rc = bad_args(res, "out of memory, or p * count does not fit a size_t");
    } else {
        for (int r = 0; r < p; r++) {
            args[r].hosts = hosts;
            if (plan != NULL)
                cost_plan_args(plan, hosts, &args[r]);
        }
        rc = build_and_run(ws, alg, coll, p, args, res);
    }
    symbolic_ws_free(ws);
    return rc;
}

int symbolic_run_args_ws(symbolic_ws_t *ws, const alg_desc_t *alg, ucoll_coll_t coll, int p,
                         const sched_args_t *args, symbolic_result_t *res)
{
    return build_and_run(ws, alg, coll, p, args, res);
}

int symbolic_run_args(const alg_desc_t *alg, ucoll_coll_t coll, int p, const sched_args_t *args,
                      symbolic_result_t *res)
{
    symbolic_ws_t *ws = symbolic_ws_new();
    if (ws == NULL)
        return no_memory(res);
    int rc = build_and_run(ws, alg, coll, p, args, res);
    symbolic_ws_free(ws);
    return rc;
}
