/*
 * Reduce and allreduce for large vectors: `rhrd` and `rhrd-classic` (algorithms.md 2.2-2.4).
 * Commutative (+) only. P processes, N = largest power of two <= P, r = P - N, m = count; a
 * reduce numbers processes virtually, v = (rank - root) mod P, so that the root is v = 0
 * (allreduce: v = rank).
 *
 * Splits. The vector [0, m) is halved recursively, a range [lo, hi) into [lo, mid) and
 * [mid, hi) with mid = lo + ceil((hi - lo) / 2); H0 = [0, ceil(m/2)), H1 = the rest.
 *
 * The core (Rabenseifner) runs on N remaining processes u = 0..N-1. Halving step k = 0..log2 N - 1
 * pairs u with u ^ 2^k; the lower keeps the first part of its current range and receives the
 * partner's partial result of it, the higher keeps the second. A core process "represents" its
 * own input and those folded into it before the core. Invariant after step k: in its
 * accumulator A, on its range R_(k+1)(u) (~m / 2^(k+1) elements), u holds the (+) of the inputs
 * represented by the 2^(k+1) core processes that share u's bits above k.
 * Allgather (allreduce) replays the steps backwards, k = log2 N - 1 .. 0: the partners swap
 * their ranges, which land at their final place. Gather (reduce): the same towards u = 0 only:
 * at step k the processes left are those with no bit above k; u with bit k set sends all it
 * has to u - 2^k and stops.
 *
 * rhrd, P = N: the core on every process; step 0 takes the data from IN.
 *
 * rhrd, P != N (the patent's half-vector method, 2.4). S0 = v < 2r, S1 = v >= 2r.
 *   round 0: pairs (2i, 2i+1) of S0 swap halves; the even one reduces H0, the odd one H1.
 *   round 1 (consolidation): 4-groups: 4i+2 sends its H0 to 4i, 4i+3 its H1 to 4i+1, which
 *     reduce; 4i+2, 4i+3 sit out. r odd: the triple (2r-2, 2r-1, 2r): 2r-1 sends its H1 to 2r,
 *     2r sends the H0 of its input to 2r-2, both reduce; 2r-1 sits out. The rest of S1 pair up
 *     (lower keeps H0) and swap the halves of their inputs.
 *   Now N processes remain, u numbered so that u even holds H0, u odd H1, and u, u+1 form a
 *   pair; together they cover all P inputs once: this is the core's state after its step 0,
 *     u < r:  v = 2u (u even) or 2u - 1 (u odd);  u >= r:  v = u + r.
 *   The core's steps 1 .. log2 N - 1 and back down to step 1 (allreduce) or 0 (reduce: the H1
 *   holder u = 1 sends its half to the root in the last round).
 *   allreduce round 2 log2 N (redistribution): 4i -> 4i+2 (H0), 4i+1 -> 4i+3 (H1); the S1
 *     pairs swap halves (now complete); r odd: 2r-2 -> 2r (H0; 2r complete), 2r -> 2r-1 (H1).
 *   allreduce round 2 log2 N + 1: the S0 pairs (2i, 2i+1) swap halves.
 *
 * rhrd-classic (2.3, the prior art): round 0 as above; round 1: 2i+1 sends its reduced H1 to 2i
 * and drops out; the core runs on full vectors on u < r: v = 2u, u >= r: v = u + r, from round
 * 2; allreduce: a last round where 2i sends the whole result to 2i+1.
 *
 * Cost (L = m * elem_size; volume = sum over rounds of the largest message of the round;
 * exact when m is a multiple of 2N; otherwise the first part of every split is the larger,
 * see tests/unit/check_rhrd.c for the exact rounding):
 *   rounds          allreduce                reduce
 *     P = N          2 log2 N                 2 log2 N
 *     rhrd           2 + 2 log2 N             1 + 2 log2 N
 *     rhrd-classic   3 + 2 log2 N             2 + 2 log2 N
 *   volume
 *     P = N          2 (N-1)/N L              (N-1)/N L + (N-1)/N L = 2 (N-1)/N L
 *     rhrd           (1 + 2 (N-1)/N) L        (1/2 + 2 (N-1)/N) L
 *     rhrd-classic   (2 + 2 (N-1)/N) L        (1 + 2 (N-1)/N) L
 *   (+): rhrd <= 1 + log2 N REDUCE steps per process (P != N), on (1/2 + (N-1)/N) m elements
 *   at most; rhrd-classic log2 N + 1 steps on (1/2 + (N-1)/N) m.
 *
 * Small vectors: with m < N some block of the core would be empty (the smallest block of a
 * range of s elements split k times is floor(s / 2^k), and H1 has floor(m/2) elements for N/2
 * blocks), so m < N (and P = 1) use the small-vector algorithms instead: reduce `binomial`,
 * allreduce `recursive-doubling`. For m >= N every message carries at least one element.
 *
 * Pipelining contract with the executor: a received region that is then combined is combined
 * by the REDUCE right after its XCHG, with exactly that region as src or dst; a round never
 * reduces into the region it sends.
 */
#include "alg.h"

#define MAX_LOG 31

typedef struct {
    sched_t *s;
    const sched_args_t *a;
    int reduce;  /* 1: reduce (result at v = 0 only), 0: allreduce */
    int classic; /* rhrd-classic */
    int p, log_n, r;
    int v;    /* virtual rank */
    int u;    /* number in the core, -1: not in it */
    int abuf; /* accumulator: OUT where this process's result goes, ACC otherwise */
    sched_region_t h0, h1, whole;
    /* the core's ranges of this process: [lo[k], hi[k]) = its range before step k (k = 0:
     * [0, m)), i.e. the range it keeps in step k - 1; given() is what it gives away in step k */
    size_t lo[MAX_LOG + 1], hi[MAX_LOG + 1];
    uint32_t round; /* next global round */
} rh_t;

static int real_rank(const rh_t *c, int v)
{
    return c->reduce ? (v + c->a->root) % c->p : v;
}

/* the virtual rank of remaining process u */
static int u_to_v(const rh_t *c, int u)
{
    if (u >= c->r)
        return u + c->r;
    if (c->classic)
        return 2 * u;
    return (u % 2 == 0) ? 2 * u : 2 * u - 1;
}

/* the remaining process number of virtual rank v, -1 if v sits out the core */
static int v_to_u(const rh_t *c, int v)
{
    if (v >= 2 * c->r)
        return v - c->r;
    if (c->classic)
        return (v % 2 == 0) ? v / 2 : -1;
    if (c->r % 2 == 1 && v == 2 * c->r - 1)
        return -1;
    if (v % 4 == 0)
        return v / 2;
    if (v % 4 == 1)
        return (v + 1) / 2;
    return -1;
}

static sched_region_t reg(int buf, size_t lo, size_t hi)
{
    return sched_region(buf, lo, hi - lo);
}

static int peer_of_u(const rh_t *c, int u)
{
    return real_rank(c, u_to_v(c, u));
}

static int peer_of_v(const rh_t *c, int v)
{
    return real_rank(c, v);
}

static void ranges(rh_t *c, int u)
{
    c->u = u;
    c->lo[0] = 0;
    c->hi[0] = c->a->count;
    for (int k = 0; k < c->log_n; k++) {
        const size_t lo = c->lo[k], hi = c->hi[k], mid = lo + (hi - lo + 1) / 2;
        const int upper = (u >> k) & 1;
        c->lo[k + 1] = upper ? mid : lo;
        c->hi[k + 1] = upper ? hi : mid;
    }
}

/* the part of [lo[k], hi[k]) that this process gives away in step k */
static sched_region_t given(const rh_t *c, int buf, int k)
{
    return ((c->u >> k) & 1) ? reg(buf, c->lo[k], c->lo[k + 1]) : reg(buf, c->hi[k + 1], c->hi[k]);
}

/* recursive halving, steps k0 .. log2 N - 1; the data is in IN (step k0 only) or in A */
static void halving(rh_t *c, int u, int k0, int from_in)
{
    for (int k = k0; k < c->log_n; k++, c->round++) {
        const int peer = peer_of_u(c, u ^ (1 << k));
        const sched_region_t keep_a = reg(c->abuf, c->lo[k + 1], c->hi[k + 1]);
        if (k == k0 && from_in) { /* A <- received (+) IN, no copy of IN into A first */
            sched_xchg(c->s, c->round, peer, given(c, SCHED_BUF_IN, k), peer, keep_a);
            sched_reduce(c->s, reg(SCHED_BUF_IN, c->lo[k + 1], c->hi[k + 1]), keep_a);
        } else {
            const sched_region_t t = reg(SCHED_BUF_TMP, c->lo[k + 1], c->hi[k + 1]);
            sched_xchg(c->s, c->round, peer, given(c, c->abuf, k), peer, t);
            sched_reduce(c->s, t, keep_a);
        }
    }
}

/* allgather (allreduce) or gather to u = 0 (reduce), steps log2 N - 1 .. k1 */
static void doubling(rh_t *c, int u, int k1)
{
    for (int k = c->log_n - 1; k >= k1; k--, c->round++) {
        const int peer = peer_of_u(c, u ^ (1 << k));
        const sched_region_t mine = reg(c->abuf, c->lo[k + 1], c->hi[k + 1]);
        if (!c->reduce) {
            sched_xchg(c->s, c->round, peer, mine, peer, given(c, c->abuf, k));
        } else if ((u >> k) & 1) {
            sched_send(c->s, c->round, peer, mine);
            return;
        } else { /* bits above k are clear here: the senders have returned */
            sched_recv(c->s, c->round, peer, given(c, c->abuf, k));
        }
    }
}

/* S0 pairs (2i, 2i+1) swap halves of their inputs; the even one reduces H0, the odd one H1 */
static void pair_exchange(rh_t *c, uint32_t round)
{
    const int even = c->v % 2 == 0;
    const int peer = peer_of_v(c, even ? c->v + 1 : c->v - 1);
    const sched_region_t give = even ? c->h1 : c->h0, keep = even ? c->h0 : c->h1;
    const sched_region_t keep_a = sched_region(c->abuf, keep.off, keep.count);
    sched_xchg(c->s, round, peer, give, peer, keep_a);
    sched_reduce(c->s, keep, keep_a);
}

static sched_region_t in_a(const rh_t *c, sched_region_t g)
{
    return sched_region(c->abuf, g.off, g.count);
}

/* the half-vector method, P != N */
static void half_vector(rh_t *c)
{
    const int v = c->v, r = c->r, odd_r = r % 2 == 1;
    const int in_triple = odd_r && v >= 2 * r - 2 && v <= 2 * r;
    const int u = v_to_u(c, v);
    const uint32_t redistribution = 2 * (uint32_t)c->log_n;

    /* round 0 */
    if (v < 2 * r)
        pair_exchange(c, 0);
    /* round 1: consolidation */
    if (in_triple) {
        if (v == 2 * r - 2) {
            const sched_region_t t = sched_region(SCHED_BUF_TMP, c->h0.off, c->h0.count);
            sched_recv(c->s, 1, peer_of_v(c, 2 * r), t);
            sched_reduce(c->s, t, in_a(c, c->h0));
        } else if (v == 2 * r - 1) {
            sched_send(c->s, 1, peer_of_v(c, 2 * r), in_a(c, c->h1));
        } else {
            sched_xchg(c->s, 1, peer_of_v(c, 2 * r - 2), c->h0, peer_of_v(c, 2 * r - 1),
                       in_a(c, c->h1));
            sched_reduce(c->s, c->h1, in_a(c, c->h1));
        }
    } else if (v < 2 * r) {
        const sched_region_t half = (v % 2 == 0) ? c->h0 : c->h1;
        if (v % 4 < 2) {
            const sched_region_t t = sched_region(SCHED_BUF_TMP, half.off, half.count);
            sched_recv(c->s, 1, peer_of_v(c, v + 2), t);
            sched_reduce(c->s, t, in_a(c, half));
        } else {
            sched_send(c->s, 1, peer_of_v(c, v - 2), in_a(c, half));
        }
    } else {
        const int lower = u % 2 == 0;
        const int peer = peer_of_v(c, lower ? v + 1 : v - 1);
        const sched_region_t give = lower ? c->h1 : c->h0, keep = lower ? c->h0 : c->h1;
        sched_xchg(c->s, 1, peer, give, peer, in_a(c, keep));
        sched_reduce(c->s, keep, in_a(c, keep));
    }
    c->round = 2;
    /* the core from step 1 */
    if (u >= 0) {
        ranges(c, u);
        halving(c, u, 1, 0);
        doubling(c, u, c->reduce ? 0 : 1);
    }
    if (c->reduce)
        return;
    /* redistribution */
    if (in_triple) {
        if (v == 2 * r - 2)
            sched_send(c->s, redistribution, peer_of_v(c, 2 * r), in_a(c, c->h0));
        else if (v == 2 * r - 1)
            sched_recv(c->s, redistribution, peer_of_v(c, 2 * r), in_a(c, c->h1));
        else
            sched_xchg(c->s, redistribution, peer_of_v(c, 2 * r - 1), in_a(c, c->h1),
                       peer_of_v(c, 2 * r - 2), in_a(c, c->h0));
    } else if (v < 2 * r) {
        const sched_region_t half = in_a(c, (v % 2 == 0) ? c->h0 : c->h1);
        if (v % 4 < 2)
            sched_send(c->s, redistribution, peer_of_v(c, v + 2), half);
        else
            sched_recv(c->s, redistribution, peer_of_v(c, v - 2), half);
    } else {
        const int lower = u % 2 == 0;
        const int peer = peer_of_v(c, lower ? v + 1 : v - 1);
        sched_xchg(c->s, redistribution, peer, in_a(c, lower ? c->h0 : c->h1), peer,
                   in_a(c, lower ? c->h1 : c->h0));
    }
    /* final exchange in S0 */
    if (v < 2 * r) {
        const int even = v % 2 == 0;
        const int peer = peer_of_v(c, even ? v + 1 : v - 1);
        sched_xchg(c->s, redistribution + 1, peer, in_a(c, even ? c->h0 : c->h1), peer,
                   in_a(c, even ? c->h1 : c->h0));
    }
}

/* the prior-art method, P != N */
static void classic(rh_t *c)
{
    const int v = c->v, r = c->r;
    const int u = v_to_u(c, v);

    if (v < 2 * r) {
        pair_exchange(c, 0);
        if (v % 2 == 1)
            sched_send(c->s, 1, peer_of_v(c, v - 1), in_a(c, c->h1));
        else
            sched_recv(c->s, 1, peer_of_v(c, v + 1), in_a(c, c->h1));
    }
    c->round = 2;
    if (u >= 0) {
        ranges(c, u);
        halving(c, u, 0, v >= 2 * r);
        doubling(c, u, 0);
    }
    if (c->reduce || v >= 2 * r)
        return;
    const uint32_t last = 2 + 2 * (uint32_t)c->log_n;
    if (v % 2 == 0)
        sched_send(c->s, last, peer_of_v(c, v + 1), c->whole);
    else
        sched_recv(c->s, last, peer_of_v(c, v - 1), c->whole);
}

static int build(sched_t *s, const sched_args_t *a, int reduce, int classic_alg)
{
    const int p = a->size;
    int n = 1, log_n = 0;
    while (n <= p / 2) {
        n *= 2;
        log_n++;
    }
    if (p <= 1 || a->count < (size_t)n)
        return reduce ? reduce_binomial_build(s, a) : allreduce_recursive_doubling_build(s, a);

    rh_t c = {0};
    c.s = s;
    c.a = a;
    c.reduce = reduce;
    c.classic = classic_alg;
    c.p = p;
    c.log_n = log_n;
    c.r = p - n;
    c.v = reduce ? (a->rank - a->root + p) % p : a->rank;
    c.abuf = (!reduce || c.v == 0) ? SCHED_BUF_OUT : SCHED_BUF_ACC;
    const size_t h = (a->count + 1) / 2;
    c.h0 = sched_region(SCHED_BUF_IN, 0, h);
    c.h1 = sched_region(SCHED_BUF_IN, h, a->count - h);
    c.whole = SCHED_WHOLE(c.abuf, a);

    if (c.r == 0) { /* Rabenseifner */
        ranges(&c, c.v);
        halving(&c, c.v, 0, 1);
        doubling(&c, c.v, 0);
    } else if (classic_alg) {
        classic(&c);
    } else {
        half_vector(&c);
    }
    return s->failed ? -1 : 0;
}

int reduce_rhrd_build(sched_t *s, const sched_args_t *a)
{
    return build(s, a, 1, 0);
}

int allreduce_rhrd_build(sched_t *s, const sched_args_t *a)
{
    return build(s, a, 0, 0);
}

int reduce_rhrd_classic_build(sched_t *s, const sched_args_t *a)
{
    return build(s, a, 1, 1);
}

int allreduce_rhrd_classic_build(sched_t *s, const sched_args_t *a)
{
    return build(s, a, 0, 1);
}
