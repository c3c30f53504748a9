/*
 * tests/mp/block_test.c: multi-process test of the block collectives (allgather(v),
 * reduce_scatter(_block), alltoall(v), gather(v), scatter(v)) through the public API only.
 *
 * Every case is one collective x algorithm (each one named, and auto) x in place or not x form
 * (blocking, nonblocking, persistent) x kind (int32 sum, float64 sum, and for the reductions a
 * non-commutative user op on uint64: affine maps composed in rank order, and float64 avg: the
 * exact sum divided once by p) x count x root.
 * The 16-bit kinds run every algorithm and count but one variant each (in place or not, form,
 * root rotating along the grid of algorithms and counts, so each variant is met), half of those
 * with --small, and the count above a segment (seg+1) with one of them per algorithm in turn
 * (float16-bits, bfloat16-bits; float16-sum, bfloat16-sum, float16-avg):
 *   - data movement: float16-bits and bfloat16-bits, raw uint16_t patterns (element 0 of every
 *     block a NaN pattern, the rest every pattern in turn: NaNs, infinities, subnormals, -0),
 *     which must arrive bit for bit;
 *   - reductions: float16-sum (quarters), bfloat16-sum (integers), each |x| <= 8 and p |x| <=
 *     512 resp. 256, so every partial sum in any order is exact; float16-avg: those exact
 *     sums divided by p, rounded once to nearest, ties to even (the reference rounds the exact
 *     rational itself: p need not divide the sum). The references are integer arithmetic, no
 *     compiler half type, compared bit for bit.
 * Element
 * e of the block that rank i contributes for rank j has a value that depends on (i, j, e) only,
 * so every rank computes the exact expected contents of its whole receive buffer itself:
 *   - every element a block must deliver (float sums are of quarters: exact in any order);
 *   - every element outside the blocks (gaps between the v forms' blocks, a gather's recvbuf off
 *     the root, the rest of an in-place reduce_scatter's input) unchanged, and 64 guard bytes
 *     either side of every buffer; the send buffer unchanged.
 * The v forms' counts vary by rank (some 0) and their blocks lie in reverse rank order with
 * one-element gaps; the count arrays are the same few arrays for every case (so a cached
 * schedule must be told apart by their contents), and a nonblocking or persistent call's arrays
 * are overwritten with garbage as soon as the call has returned (ucoll must keep its own copy).
 * Persistent requests are started twice, the buffers reset in between. Arrays that are not
 * significant on a rank (gatherv's receive arrays off the root, scatterv's send side, alltoallv's
 * send side in place) are passed as NULL.
 * An algorithm that ucoll_set_algorithm does not know is a failure (never skipped), and so is
 * any call that does not return UCOLL_OK (recursive-doubling / recursive-halving on a size that
 * is no power of two included: ucoll replaces them there by auto's choice).
 *
 * Counts: tokens of --counts, each a number, "p-1" (size - 1) or "seg+1" (one element more than
 * fits UCOLL_SEGMENT_SIZE, 262144 bytes unless set; in elements of the case's dtype).
 * Usage: block_test --expect-size N [--colls a,b] [--counts 0,1,p-1,1000,seg+1]
 *        [--alg-list COLL=a,b ...] [--small] [--mem] [--verbose]
 * --mem: every buffer from ucoll_mem_alloc (peers on the host read it in place).
 * --small runs about a third of the cases (every collective and algorithm still with every count).
 * BLOCK_TEST_PRINTS=N (environment): FAIL lines printed per rank at most (40).
 * Output: FAIL lines; rank 0 ends with "block_test np=N: C checks on rank 0, F failed over all
 * ranks; verdict: PASS|FAIL". Exit status 0 only if no rank failed.
 */
#define _POSIX_C_SOURCE 200809L

#include <ucoll.h>

#include "mp_util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD 64
#define SENTINEL 0xA5
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define FIRST_BLOCK UCOLL_COLL_ALLGATHER
#define NBLOCK 10

enum {
    K_I32_SUM,
    K_F64_SUM,
    K_U64_AFFINE,
    K_F64_AVG,
    K_F16_BITS,
    K_BF16_BITS,
    K_F16_SUM,
    K_BF16_SUM,
    K_F16_AVG,
    NKINDS
};
static const char *const kind_names[NKINDS] = {"int32-sum",   "float64-sum",  "uint64-user-affine",
                                               "float64-avg", "float16-bits", "bfloat16-bits",
                                               "float16-sum", "bfloat16-sum", "float16-avg"};
static const ucoll_dtype_t kind_dtype[NKINDS] = {UCOLL_INT32,   UCOLL_FLOAT64,  UCOLL_UINT64,
                                                 UCOLL_FLOAT64, UCOLL_FLOAT16,  UCOLL_BFLOAT16,
                                                 UCOLL_FLOAT16, UCOLL_BFLOAT16, UCOLL_FLOAT16};
/* the moved kinds' op is never passed */
static ucoll_op_t kind_op[NKINDS] = {UCOLL_OP_SUM, UCOLL_OP_SUM, -1,          UCOLL_OP_AVG, 0, 0,
                                     UCOLL_OP_SUM, UCOLL_OP_SUM, UCOLL_OP_AVG};
/* which collectives run a kind; KF_SAMPLED: one variant per (algorithm, count), see the header */
enum { KF_MOVE = 1, KF_REDUCE = 2, KF_SAMPLED = 4 };
static const int kind_flags[NKINDS] = {KF_MOVE | KF_REDUCE,
                                       KF_MOVE | KF_REDUCE,
                                       KF_REDUCE,
                                       KF_REDUCE,
                                       KF_MOVE | KF_SAMPLED,
                                       KF_MOVE | KF_SAMPLED,
                                       KF_REDUCE | KF_SAMPLED,
                                       KF_REDUCE | KF_SAMPLED,
                                       KF_REDUCE | KF_SAMPLED};

static const char *const coll_names[NBLOCK] = {
    "allgather",      "allgatherv", "reduce_scatter_block",
    "reduce_scatter", "alltoall",   "alltoallv",
    "gather",         "gatherv",    "scatter",
    "scatterv"};

/* the algorithms of each collective, auto included; --alg-list COLL=... replaces one list */
static const char *default_algs[NBLOCK] = {"auto,ring,recursive-doubling,bruck",
                                           "auto,ring,bruck",
                                           "auto,ring,recursive-halving,bruck",
                                           "auto,ring,recursive-halving,bruck",
                                           "auto,pairwise,bruck",
                                           "auto,pairwise",
                                           "auto,binomial,linear",
                                           "auto,linear",
                                           "auto,binomial,linear",
                                           "auto,linear"};
static char *alg_lists[NBLOCK];

static ucoll_comm_t *g_comm;
static int g_p, g_r, g_small, g_verbose;
static size_t g_seg = 262144;
static uint64_t g_salt = 0x5ca77e4;

static int is_reduction(ucoll_coll_t c)
{
    return c == UCOLL_COLL_REDUCE_SCATTER_BLOCK || c == UCOLL_COLL_REDUCE_SCATTER;
}

static int is_rooted(ucoll_coll_t c)
{
    return c == UCOLL_COLL_GATHER || c == UCOLL_COLL_GATHERV || c == UCOLL_COLL_SCATTER ||
           c == UCOLL_COLL_SCATTERV;
}

/* ---------------------------------------------------------------- values */

/* mpt_mix64 of each block's (from, to) key, made once: the references hash every element */
static uint64_t *g_block_seed;

static void make_block_seeds(void)
{
    g_block_seed = malloc((size_t)g_p * (size_t)g_p * sizeof(uint64_t));
    if (g_block_seed == NULL) {
        printf("FATAL rank %d: out of memory for %d x %d seeds\n", g_r, g_p, g_p);
        exit(2);
    }
    for (int from = 0; from < g_p; from++)
        for (int to = 0; to < g_p; to++)
            g_block_seed[(size_t)from * (size_t)g_p + (size_t)to] =
                mpt_mix64(g_salt ^ ((uint64_t)(unsigned)from << 32 | (unsigned)to));
}

/* the value of element e of what rank `from` contributes for rank `to` */
static uint64_t hash_of(int from, int to, size_t e)
{
    return mpt_mix64(g_block_seed[(size_t)from * (size_t)g_p + (size_t)to] ^ (uint64_t)e);
}

static size_t esize_of(int kind)
{
    return mpt_dtype_size(kind_dtype[kind]);
}

/* The 16-bit kinds' bit patterns, written by integer arithmetic (no compiler half type).
 * num / den rounded once to nearest, ties to even, into a format of `frac` fraction bits and
 * exponent bias `bias` (FLOAT16: 10, 15; BFLOAT16: 7, 127); +-infinity beyond its range. */
static uint16_t half_bits_of(int64_t num, int64_t den, int frac, int bias)
{
    const uint16_t sign = num < 0 ? 0x8000u : 0;
    uint64_t a = (uint64_t)(num < 0 ? -num : num), d = (uint64_t)den;
    if (a == 0)
        return sign;
    int e = 0; /* 2^e <= a/d < 2^(e+1) */
    while (a >= d << (e + 1))
        e++;
    while (e > -64 && (e >= 0 ? a < d << e : a << -e < d))
        e--;
    if (e < 1 - bias)
        e = 1 - bias; /* a subnormal: the smallest normal's exponent, no implicit bit */
    if (frac - e >= 0)
        a <<= frac - e;
    else
        d <<= e - frac;
    uint64_t m = a / d;
    const uint64_t rem = a % d;
    if (2 * rem > d || (2 * rem == d && (m & 1)))
        m++;
    if (m == (uint64_t)2 << frac) {
        m >>= 1;
        e++;
    }
    const int expmax = (1 << (15 - frac)) - 1;
    if (m < (uint64_t)1 << frac) /* subnormal (or 0 rounded up to the smallest normal below) */
        return (uint16_t)(sign | m);
    if (e + bias >= expmax)
        return (uint16_t)(sign | (uint32_t)expmax << frac);
    return (uint16_t)(sign | (uint32_t)(e + bias) << frac | (m - ((uint64_t)1 << frac)));
}

static int is_bf16(int kind)
{
    return kind_dtype[kind] == UCOLL_BFLOAT16;
}

static int64_t half_unit_den(int kind)
{
    return is_bf16(kind) ? 1 : 4;
}

static int64_t g_half_max[NKINDS];    /* the largest |n| of a reduction kind's inputs */
static uint16_t *g_half_bits[NKINDS]; /* [n + p * max]: n units (AVG: n units / p), rounded */

/* the reductions' 16-bit inputs: FLOAT16 in quarters, BFLOAT16 in units; |n| <= 2048 / p
 * quarters (at most 8.0) resp. 256 / p units (at most 8), so every partial sum of any order has
 * at most 11 resp. 8 significant bits: exact */
static int64_t half_units(int kind, uint64_t h)
{
    const int64_t m = g_half_max[kind];
    return (int64_t)((h >> 40) % (uint64_t)(2 * m + 1)) - m;
}

/* the bits of n units (the input or sum of a SUM kind; the sum of an AVG kind, divided by p) */
static uint16_t half_bits_table(int kind, int64_t n)
{
    return g_half_bits[kind][n + g_p * g_half_max[kind]];
}

static void make_half_tables(void)
{
    const int kinds[] = {K_F16_SUM, K_BF16_SUM, K_F16_AVG};
    for (size_t i = 0; i < NELEM(kinds); i++) {
        const int kind = kinds[i];
        const int64_t lim = is_bf16(kind) ? 256 / g_p : 2048 / g_p, cap = is_bf16(kind) ? 8 : 32;
        const int64_t m = lim < 1 ? 1 : lim > cap ? cap : lim, span = g_p * m;
        const int64_t den = half_unit_den(kind) * (kind == K_F16_AVG ? g_p : 1);
        g_half_max[kind] = m;
        g_half_bits[kind] = malloc((size_t)(2 * span + 1) * sizeof(uint16_t));
        if (g_half_bits[kind] == NULL) {
            printf("FATAL rank %d: out of memory for the 16-bit tables\n", g_r);
            exit(2);
        }
        for (int64_t n = -span; n <= span; n++)
            g_half_bits[kind][n + span] =
                half_bits_of(n, den, is_bf16(kind) ? 7 : 10, is_bf16(kind) ? 127 : 15);
    }
}

/* the moved kinds: element 0 a NaN pattern (quiet or signalling, either sign) named by the
 * block (from, to), distinct over blocks up to 45 ranks (FLOAT16) resp. 15 (BFLOAT16); element
 * e >= 1 the block's offset (distinct over blocks up to 256 ranks) plus e times an odd number,
 * so distinct within a block of up to 65536 elements, every pattern (NaNs, infinities,
 * subnormals, -0) among them */
static uint16_t moved_bits(int kind, int from, int to, size_t e)
{
    const unsigned idx = (unsigned)from * (unsigned)g_p + (unsigned)to;
    if (e == 0) {
        const unsigned nfrac = is_bf16(kind) ? 127 : 1023, k = idx % (2 * nfrac);
        const uint16_t exp = is_bf16(kind) ? 0x7f80u : 0x7c00u;
        return (uint16_t)((k >= nfrac ? 0x8000u : 0) | exp | (k % nfrac + 1));
    }
    return (uint16_t)((uint16_t)g_salt + idx * 0x9e3bu + (uint64_t)e * 40503u);
}

static void put_value(int kind, void *dst, int from, int to, size_t e)
{
    if (kind == K_F16_BITS || kind == K_BF16_BITS) {
        const uint16_t b = moved_bits(kind, from, to, e);
        memcpy(dst, &b, 2);
        return;
    }
    const uint64_t h = hash_of(from, to, e);
    uint16_t b;
    switch (kind) {
    case K_F16_SUM:
    case K_BF16_SUM:
    case K_F16_AVG:
        b = half_bits_table(kind == K_F16_AVG ? K_F16_SUM : kind, half_units(kind, h));
        memcpy(dst, &b, 2);
        break;
    case K_I32_SUM: {
        uint32_t v = (uint32_t)h;
        memcpy(dst, &v, 4);
        break;
    }
    case K_F64_SUM:
    case K_F64_AVG: { /* a quarter of magnitude <= 2^10: sums of any order are exact */
        double v = (double)((int64_t)(h >> 40) % 8192 - 4095) * 0.25;
        memcpy(dst, &v, 8);
        break;
    }
    default:
        memcpy(dst, &h, 8);
        break;
    }
}

/* acc = acc (+) x, acc holding the lower ranks */
static void combine(int kind, void *acc, const void *x)
{
    switch (kind) {
    case K_I32_SUM: {
        uint32_t a, b;
        memcpy(&a, acc, 4);
        memcpy(&b, x, 4);
        a += b;
        memcpy(acc, &a, 4);
        break;
    }
    case K_F64_SUM:
    case K_F64_AVG: {
        double a, b;
        memcpy(&a, acc, 8);
        memcpy(&b, x, 8);
        a += b;
        memcpy(acc, &a, 8);
        break;
    }
    default: {
        uint64_t a, b;
        memcpy(&a, acc, 8);
        memcpy(&b, x, 8);
        a = mpt_affine_then(a, b);
        memcpy(acc, &a, 8);
        break;
    }
    }
}

static int affine_bad_call;
static void affine_fn(const void *in, void *inout, size_t count, ucoll_dtype_t dtype, void *arg)
{
    (void)arg;
    if (dtype != UCOLL_UINT64) {
        affine_bad_call = 1;
        return;
    }
    const uint64_t *a = in;
    uint64_t *b = inout;
    for (size_t i = 0; i < count; i++)
        b[i] = mpt_affine_then(a[i], b[i]);
}

/* the reduction over ranks 0..p-1 (in order) of element e of their blocks for rank `to` */
static void reduced_value(int kind, void *dst, int to, size_t e)
{
    unsigned char x[8];
    if (kind == K_F16_SUM || kind == K_BF16_SUM || kind == K_F16_AVG) {
        /* the exact sum, in integers; AVG: that sum divided by p, rounded once */
        int64_t sum = 0;
        for (int i = 0; i < g_p; i++)
            sum += half_units(kind, hash_of(i, to, e));
        const uint16_t b = half_bits_table(kind, sum);
        memcpy(dst, &b, 2);
        return;
    }
    put_value(kind, dst, 0, to, e);
    for (int i = 1; i < g_p; i++) {
        put_value(kind, x, i, to, e);
        combine(kind, dst, x);
    }
    if (kind == K_F64_AVG) { /* the exact sum, divided once: one correct rounding */
        double v;
        memcpy(&v, dst, 8);
        v /= g_p;
        memcpy(dst, &v, 8);
    }
}

/* ---------------------------------------------------------------- buffers */

typedef struct {
    unsigned char *mem; /* GUARD, bytes, GUARD */
    size_t bytes;
} buf_t;

static int g_mem; /* --mem */

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (p == NULL) {
        printf("FATAL rank %d: out of memory (%zu bytes)\n", g_r, n);
        exit(2);
    }
    return p;
}

static void buf_init(buf_t *b, size_t bytes)
{
    b->bytes = bytes;
    void *region = NULL;
    if (!g_mem) {
        b->mem = xmalloc(bytes + 2 * GUARD);
    } else if (ucoll_mem_alloc(bytes + 2 * GUARD, &region) == UCOLL_OK) {
        b->mem = region;
    } else {
        printf("FATAL rank %d: ucoll_mem_alloc of %zu bytes failed\n", g_r, bytes + 2 * GUARD);
        exit(2);
    }
    memset(b->mem, SENTINEL, bytes + 2 * GUARD);
}

static void *at(const buf_t *b, size_t byte)
{
    return b->mem + GUARD + byte;
}

static void buf_free(buf_t *b)
{
    if (!g_mem) {
        free(b->mem);
    } else if (b->mem != NULL && ucoll_mem_free(b->mem) != UCOLL_OK) {
        printf("FATAL rank %d: ucoll_mem_free refused a buffer it gave\n", g_r);
        exit(2);
    }
    b->mem = NULL;
}

/* first differing byte of two buffers of the same size, guards included; -1 if equal */
static long first_diff(const buf_t *x, const buf_t *y)
{
    if (memcmp(x->mem, y->mem, x->bytes + 2 * GUARD) == 0)
        return -1;
    for (size_t i = 0; i < x->bytes + 2 * GUARD; i++)
        if (x->mem[i] != y->mem[i])
            return (long)i - GUARD;
    return -1;
}

/* ---------------------------------------------------------------- count patterns */

/* the v forms' count of rank j's block for a case of count c: some 0, others c..c+2 */
static size_t vcount(size_t c, int j)
{
    return c == 0 || j % 4 == 1 ? 0 : c + (size_t)(j % 3);
}

/* alltoallv: what rank i sends to rank j; symmetric (in place needs it) or not */
static size_t a2a_count(size_t c, int i, int j, int symmetric)
{
    if (c == 0)
        return 0;
    if (symmetric)
        return (i + j) % 5 == 0 ? 0 : c + (size_t)((i * j) % 3);
    return (i + 2 * j) % 5 == 0 ? 0 : c + (size_t)((i + j) % 3);
}

/* blocks in reverse rank order, one element before each: returns the extent */
static size_t reverse_displs(const size_t *cnt, size_t *displs)
{
    size_t off = 0;
    for (int j = g_p - 1; j >= 0; j--) {
        off += 1;
        displs[j] = off;
        off += cnt[j];
    }
    return off + 1;
}

/* blocks in rank order, one element before each */
static size_t forward_displs(const size_t *cnt, size_t *displs)
{
    size_t off = 0;
    for (int j = 0; j < g_p; j++) {
        off += 1;
        displs[j] = off;
        off += cnt[j];
    }
    return off + 1;
}

/* ---------------------------------------------------------------- one case */

typedef struct {
    ucoll_coll_t coll;
    const char *alg;
    int kind, in_place, root;
    mpt_form_t form;
    size_t count;
} case_t;

/* the count arrays handed to ucoll: the same memory for every case */
static size_t *g_scounts, *g_sdispls, *g_rcounts, *g_rdispls;

typedef struct {
    buf_t send, recv, want_recv, want_send, init_recv;
    size_t scalar; /* the count argument */
    const size_t *sc, *sd, *rc, *rd;
    int send_null, recv_in_place;
} setup_t;

/* the buffers and arguments of case k on this rank, and what must be in them afterwards */
static void setup_case(const case_t *k, setup_t *s)
{
    const int p = g_p, r = g_r, root = k->root, kind = k->kind;
    const size_t c = k->count, es = esize_of(kind);
    size_t send_el = 0, recv_el = 0;
    memset(s, 0, sizeof(*s));
    size_t *sc = g_scounts, *sd = g_sdispls, *rc = g_rcounts, *rd = g_rdispls;
    for (int j = 0; j < p; j++)
        sc[j] = sd[j] = rc[j] = rd[j] = (size_t)0x7777; /* nothing significant */
    s->scalar = c;
    /* sizes */
    switch (k->coll) {
    case UCOLL_COLL_ALLGATHER:
        send_el = c, recv_el = (size_t)p * c;
        break;
    case UCOLL_COLL_ALLGATHERV:
        for (int j = 0; j < p; j++)
            rc[j] = vcount(c, j);
        recv_el = reverse_displs(rc, rd);
        send_el = rc[r];
        s->scalar = rc[r];
        s->rc = rc, s->rd = rd;
        break;
    case UCOLL_COLL_REDUCE_SCATTER_BLOCK:
        send_el = (size_t)p * c, recv_el = k->in_place ? (size_t)p * c : c;
        break;
    case UCOLL_COLL_REDUCE_SCATTER: {
        size_t total = 0;
        for (int j = 0; j < p; j++)
            total += rc[j] = vcount(c, j);
        send_el = total, recv_el = k->in_place ? total : rc[r];
        s->rc = rc;
        break;
    }
    case UCOLL_COLL_ALLTOALL:
        send_el = recv_el = (size_t)p * c;
        break;
    case UCOLL_COLL_ALLTOALLV:
        for (int j = 0; j < p; j++) {
            sc[j] = a2a_count(c, r, j, k->in_place);
            rc[j] = a2a_count(c, j, r, k->in_place);
        }
        send_el = reverse_displs(sc, sd);
        recv_el = forward_displs(rc, rd);
        s->rc = rc, s->rd = rd;
        if (!k->in_place)
            s->sc = sc, s->sd = sd;
        break;
    case UCOLL_COLL_GATHER:
        send_el = c, recv_el = (size_t)p * c; /* off the root: passed, must stay untouched */
        break;
    case UCOLL_COLL_GATHERV:
        for (int j = 0; j < p; j++)
            rc[j] = vcount(c, j);
        send_el = rc[r];
        s->scalar = rc[r];
        recv_el = reverse_displs(rc, rd);
        if (r == root)
            s->rc = rc, s->rd = rd;
        break;
    case UCOLL_COLL_SCATTER:
        send_el = r == root ? (size_t)p * c : 0, recv_el = c;
        s->send_null = r != root;
        break;
    case UCOLL_COLL_SCATTERV:
        for (int j = 0; j < p; j++)
            sc[j] = vcount(c, j);
        recv_el = sc[r];
        s->scalar = sc[r];
        send_el = r == root ? reverse_displs(sc, sd) : 0;
        s->send_null = r != root;
        if (r == root)
            s->sc = sc, s->sd = sd;
        break;
    default:
        break;
    }
    buf_init(&s->send, send_el * es);
    buf_init(&s->recv, recv_el * es);
    /* inputs: block for rank j, element e = value (r, j, e); allgather/gather: to = 0 */
    const int in_place_here = k->in_place && (!is_rooted(k->coll) || r == root);
    buf_t *in = &s->send;
    if (in_place_here && k->coll != UCOLL_COLL_SCATTER && k->coll != UCOLL_COLL_SCATTERV)
        in = &s->recv; /* the input sits in recvbuf */
    switch (k->coll) {
    case UCOLL_COLL_ALLGATHER:
    case UCOLL_COLL_GATHER:
        for (size_t e = 0; e < c; e++)
            put_value(kind, at(in, ((in == &s->recv ? (size_t)r * c : 0) + e) * es), r, 0, e);
        break;
    case UCOLL_COLL_ALLGATHERV:
    case UCOLL_COLL_GATHERV:
        for (size_t e = 0; e < rc[r]; e++)
            put_value(kind, at(in, ((in == &s->recv ? rd[r] : 0) + e) * es), r, 0, e);
        break;
    case UCOLL_COLL_REDUCE_SCATTER_BLOCK:
    case UCOLL_COLL_ALLTOALL:
    case UCOLL_COLL_SCATTER:
        if (k->coll != UCOLL_COLL_SCATTER || r == root)
            for (int j = 0; j < p; j++)
                for (size_t e = 0; e < c; e++)
                    put_value(kind, at(in, ((size_t)j * c + e) * es), r, j, e);
        break;
    case UCOLL_COLL_REDUCE_SCATTER: {
        size_t off = 0;
        for (int j = 0; j < p; j++)
            for (size_t e = 0; e < rc[j]; e++, off++)
                put_value(kind, at(in, off * es), r, j, e);
        break;
    }
    case UCOLL_COLL_ALLTOALLV:
        for (int j = 0; j < p; j++) {
            const size_t *cnt = in == &s->recv ? rc : sc, *dsp = in == &s->recv ? rd : sd;
            for (size_t e = 0; e < cnt[j]; e++)
                put_value(kind, at(in, (dsp[j] + e) * es), r, j, e);
        }
        break;
    case UCOLL_COLL_SCATTERV:
        if (r == root)
            for (int j = 0; j < p; j++)
                for (size_t e = 0; e < sc[j]; e++)
                    put_value(kind, at(in, (sd[j] + e) * es), r, j, e);
        break;
    default:
        break;
    }
    s->recv_in_place =
        in_place_here && (k->coll == UCOLL_COLL_SCATTER || k->coll == UCOLL_COLL_SCATTERV);
    /* what must be there afterwards */
    buf_init(&s->want_send, s->send.bytes);
    memcpy(s->want_send.mem, s->send.mem, s->send.bytes + 2 * GUARD);
    buf_init(&s->want_recv, s->recv.bytes);
    memcpy(s->want_recv.mem, s->recv.mem, s->recv.bytes + 2 * GUARD);
    buf_init(&s->init_recv, s->recv.bytes);
    memcpy(s->init_recv.mem, s->recv.mem, s->recv.bytes + 2 * GUARD);
    buf_t *w = &s->want_recv;
    switch (k->coll) {
    case UCOLL_COLL_GATHER:
        if (r != root)
            break;
        /* fall through */
    case UCOLL_COLL_ALLGATHER:
        for (int j = 0; j < p; j++)
            for (size_t e = 0; e < c; e++)
                put_value(kind, at(w, ((size_t)j * c + e) * es), j, 0, e);
        break;
    case UCOLL_COLL_GATHERV:
        if (r != root)
            break;
        /* fall through */
    case UCOLL_COLL_ALLGATHERV:
        for (int j = 0; j < p; j++)
            for (size_t e = 0; e < rc[j]; e++)
                put_value(kind, at(w, (rd[j] + e) * es), j, 0, e);
        break;
    case UCOLL_COLL_REDUCE_SCATTER_BLOCK:
        for (size_t e = 0; e < c; e++)
            reduced_value(kind, at(w, e * es), r, e);
        break;
    case UCOLL_COLL_REDUCE_SCATTER:
        for (size_t e = 0; e < rc[r]; e++)
            reduced_value(kind, at(w, e * es), r, e);
        break;
    case UCOLL_COLL_ALLTOALL:
        for (int i = 0; i < p; i++)
            for (size_t e = 0; e < c; e++)
                put_value(kind, at(w, ((size_t)i * c + e) * es), i, r, e);
        break;
    case UCOLL_COLL_ALLTOALLV:
        for (int i = 0; i < p; i++)
            for (size_t e = 0; e < rc[i]; e++)
                put_value(kind, at(w, (rd[i] + e) * es), i, r, e);
        break;
    case UCOLL_COLL_SCATTER:
        if (!s->recv_in_place)
            for (size_t e = 0; e < c; e++)
                put_value(kind, at(w, e * es), root, r, e);
        break;
    case UCOLL_COLL_SCATTERV:
        if (!s->recv_in_place)
            for (size_t e = 0; e < sc[r]; e++)
                put_value(kind, at(w, e * es), root, r, e);
        break;
    default:
        break;
    }
}

static void setup_free(setup_t *s)
{
    buf_free(&s->send);
    buf_free(&s->recv);
    buf_free(&s->want_send);
    buf_free(&s->want_recv);
    buf_free(&s->init_recv);
}

/* one call of the case's collective in its form (persistent: *_init only) */
static ucoll_status_t call(const case_t *k, const setup_t *s, ucoll_request_t **req)
{
    const void *sb = k->in_place && !s->recv_in_place && (!is_rooted(k->coll) || g_r == k->root)
                         ? UCOLL_IN_PLACE
                     : s->send_null ? NULL
                                    : at(&s->send, 0);
    void *rb = s->recv_in_place ? (void *)UCOLL_IN_PLACE : at(&s->recv, 0);
    return mpt_block_call(k->form, k->coll, g_comm, sb, s->sc, s->sd, rb, s->rc, s->rd, s->scalar,
                          kind_dtype[k->kind], kind_op[k->kind], k->root, req);
}

/* the count arrays overwritten: a request must not read the caller's after the call returned */
static void scribble_counts(void)
{
    for (int j = 0; j < g_p; j++)
        g_scounts[j] = g_sdispls[j] = g_rcounts[j] = g_rdispls[j] = (size_t)0xdead0000 + (size_t)j;
}

/* the buffers against what they must hold; returns 1 if both are right */
static int check_buffers(const char *name, const setup_t *s, const char *when)
{
    long d = first_diff(&s->recv, &s->want_recv);
    int ok = mpt_check(d < 0, name, "%s: recvbuf differs at byte %ld of %zu (0x%02x, want 0x%02x)",
                       when, d, s->recv.bytes, d < 0 ? 0 : s->recv.mem[d + GUARD],
                       d < 0 ? 0 : s->want_recv.mem[d + GUARD]);
    d = first_diff(&s->send, &s->want_send);
    ok &= mpt_check(d < 0, name, "%s: sendbuf changed at byte %ld of %zu", when, d, s->send.bytes);
    return ok;
}

static void run_case(const case_t *k)
{
    char name[200];
    snprintf(name, sizeof(name), "%s/%s %s %s%s count=%zu root=%d",
             coll_names[k->coll - FIRST_BLOCK], k->alg, kind_names[k->kind],
             mpt_form_names[k->form], k->in_place ? " in-place" : "", k->count, k->root);
    if (g_verbose && g_r == 0)
        printf("case %s\n", name);
    setup_t s;
    setup_case(k, &s);
    ucoll_request_t *req = NULL;
    ucoll_status_t st = call(k, &s, &req);
    if (!mpt_expect_st(st, UCOLL_OK, name,
                       k->form == MPT_BLOCKING      ? "blocking call"
                       : k->form == MPT_NONBLOCKING ? "nonblocking call"
                                                    : "*_init")) {
        setup_free(&s);
        return;
    }
    if (k->form != MPT_BLOCKING)
        scribble_counts();
    if (k->form == MPT_NONBLOCKING) {
        mpt_expect_st(ucoll_wait(req), UCOLL_OK, name, "ucoll_wait");
        mpt_expect_st(ucoll_request_free(req), UCOLL_OK, name, "ucoll_request_free");
        check_buffers(name, &s, "after wait");
    } else if (k->form == MPT_PERSISTENT) {
        /* the buffers as at *_init before every start: in place, the input is in recvbuf */
        for (int rep = 0; rep < 2; rep++) {
            if (rep > 0)
                memcpy(s.recv.mem, s.init_recv.mem, s.recv.bytes + 2 * GUARD);
            if (mpt_expect_st(ucoll_start(req), UCOLL_OK, name, "ucoll_start"))
                mpt_expect_st(ucoll_wait(req), UCOLL_OK, name, "ucoll_wait");
            check_buffers(name, &s, rep == 0 ? "first start" : "second start");
        }
        mpt_expect_st(ucoll_request_free(req), UCOLL_OK, name, "ucoll_request_free");
    } else {
        check_buffers(name, &s, "after the call");
    }
    if (affine_bad_call) {
        mpt_fail(name, "the user op was called with another dtype");
        affine_bad_call = 0;
    }
    setup_free(&s);
}

/* ---------------------------------------------------------------- the case list */

static int in_list(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p != NULL && *p != '\0';) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return 1;
        p = comma ? comma + 1 : NULL;
    }
    return 0;
}

/* the count token's value for a case of kind */
static size_t count_of(const char *tok, size_t len, int kind)
{
    if (len == 3 && strncmp(tok, "p-1", 3) == 0)
        return (size_t)(g_p - 1);
    if (len == 5 && strncmp(tok, "seg+1", 5) == 0)
        return (g_seg ? g_seg : 262144) / esize_of(kind) + 1;
    return (size_t)strtoul(tok, NULL, 10);
}

static void run_collective(int ci, const char *counts)
{
    const ucoll_coll_t coll = (ucoll_coll_t)(FIRST_BLOCK + ci);
    char algs[512];
    snprintf(algs, sizeof(algs), "%s", alg_lists[ci]);
    const int kind_mask = is_reduction(coll) ? KF_REDUCE : KF_MOVE;
    const int roots[2] = {0, g_p - 1};
    const int nroots = is_rooted(coll) && g_p > 1 ? 2 : 1;
    unsigned long pick = 0;
    int alg_i = 0;
    for (char *save = NULL, *alg = strtok_r(algs, ",", &save); alg != NULL;
         alg = strtok_r(NULL, ",", &save), alg_i++) {
        ucoll_status_t st = ucoll_set_algorithm(g_comm, coll, alg);
        char what[160];
        snprintf(what, sizeof(what), "ucoll_set_algorithm(%s, %s)", coll_names[ci], alg);
        if (!mpt_expect_st(st, UCOLL_OK, "algorithm", what))
            continue; /* an algorithm this build lacks: a failure */
        case_t k = {.coll = coll, .alg = alg};
        int count_i = 0;
        for (const char *tok = counts; tok != NULL && *tok != '\0'; count_i++) {
            const char *comma = strchr(tok, ',');
            const size_t len = comma ? (size_t)(comma - tok) : strlen(tok);
            for (k.kind = 0; k.kind < NKINDS; k.kind++) {
                if (!(kind_flags[k.kind] & kind_mask))
                    continue;
                k.count = count_of(tok, len, k.kind);
                if (kind_flags[k.kind] & KF_SAMPLED) {
                    /* above a segment (the costly count): one 16-bit kind per algorithm */
                    const int first = is_reduction(coll) ? K_F16_SUM : K_F16_BITS;
                    const int nsampled = is_reduction(coll) ? 3 : 2;
                    if (len == 5 && strncmp(tok, "seg+1", 5) == 0 &&
                        alg_i % nsampled != k.kind - first)
                        continue;
                    /* one variant, rotating over (in place, form, root) along the grid */
                    int v = alg_i * 5 + count_i + k.kind;
                    if (g_small && v % 2 != 0)
                        continue; /* --small: half of the grid */
                    if (g_small)
                        v /= 2;
                    k.in_place = v % 2;
                    k.form = (mpt_form_t)(v / 2 % MPT_NFORMS);
                    k.root = roots[(alg_i + count_i) % nroots];
                    run_case(&k);
                    continue;
                }
                for (k.in_place = 0; k.in_place < 2; k.in_place++)
                    for (int f = 0; f < MPT_NFORMS; f++)
                        for (int ri = 0; ri < nroots; ri++) {
                            k.form = (mpt_form_t)f;
                            k.root = roots[ri];
                            if (g_small && pick++ % 3 != (unsigned long)count_i % 3)
                                continue;
                            run_case(&k);
                        }
            }
            tok = comma ? comma + 1 : NULL;
        }
    }
    ucoll_set_algorithm(g_comm, coll, "auto");
}

/* MPI ignores the count a rank passes where the v form's arrays say everything: allgatherv's
 * sendcount in place, gatherv's at the root in place, scatterv's recvcount at the root with recvbuf
 * IN_PLACE. A value no buffer could hold there (SIZE_MAX) must not make that rank refuse the call
 * while the others run it. */
static void ignored_counts(void)
{
    const size_t p = (size_t)g_p, r = (size_t)g_r;
    size_t *counts = xmalloc(p * sizeof(size_t)), *displs = xmalloc(p * sizeof(size_t));
    int32_t *all = xmalloc(2 * p * sizeof(int32_t)), mine[2];
    for (size_t i = 0; i < p; i++) {
        counts[i] = 2;
        displs[i] = 2 * i;
    }
    ucoll_status_t st;
    /* allgatherv, every rank in place */
    for (size_t i = 0; i < 2 * p; i++)
        all[i] = i / 2 == r ? (int32_t)(1000 * r + i % 2) : -1;
    st = ucoll_allgatherv(g_comm, UCOLL_IN_PLACE, SIZE_MAX, all, counts, displs, UCOLL_INT32);
    int ok =
        mpt_expect_st(st, UCOLL_OK, "ignored counts", "allgatherv in place, sendcount SIZE_MAX");
    for (size_t i = 0; ok && i < 2 * p; i++)
        ok = mpt_check(all[i] == (int32_t)(1000 * (i / 2) + i % 2), "ignored counts",
                       "allgatherv: element %zu is %d", i, all[i]);
    /* gatherv to root p-1, in place there */
    const int root = g_p - 1;
    for (size_t i = 0; i < 2 * p; i++)
        all[i] = (int)r == root && i / 2 == r ? (int32_t)(1000 * r + i % 2) : -1;
    mine[0] = (int32_t)(1000 * r), mine[1] = (int32_t)(1000 * r + 1);
    if (g_r == root)
        st =
            ucoll_gatherv(g_comm, UCOLL_IN_PLACE, SIZE_MAX, all, counts, displs, UCOLL_INT32, root);
    else
        st = ucoll_gatherv(g_comm, mine, 2, NULL, NULL, NULL, UCOLL_INT32, root);
    ok = mpt_expect_st(st, UCOLL_OK, "ignored counts", "gatherv, root in place with SIZE_MAX");
    for (size_t i = 0; ok && g_r == root && i < 2 * p; i++)
        ok = mpt_check(all[i] == (int32_t)(1000 * (i / 2) + i % 2), "ignored counts",
                       "gatherv: element %zu is %d", i, all[i]);
    /* scatterv from root p-1, recvbuf IN_PLACE there */
    for (size_t i = 0; i < 2 * p; i++)
        all[i] = (int32_t)(1000 * (i / 2) + i % 2);
    mine[0] = mine[1] = -1;
    if (g_r == root)
        st = ucoll_scatterv(g_comm, all, counts, displs, (void *)UCOLL_IN_PLACE, SIZE_MAX,
                            UCOLL_INT32, root);
    else
        st = ucoll_scatterv(g_comm, NULL, NULL, NULL, mine, 2, UCOLL_INT32, root);
    ok = mpt_expect_st(st, UCOLL_OK, "ignored counts",
                       "scatterv, root's recvbuf in place, SIZE_MAX");
    if (ok && g_r != root)
        mpt_check(mine[0] == (int32_t)(1000 * r) && mine[1] == (int32_t)(1000 * r + 1),
                  "ignored counts", "scatterv: got %d %d", mine[0], mine[1]);
    free(counts);
    free(displs);
    free(all);
}

int main(int argc, char **argv)
{
    int expect_size = -1;
    const char *colls = NULL, *counts = "0,1,p-1,1000,seg+1";
    for (int c = 0; c < NBLOCK; c++)
        alg_lists[c] = (char *)default_algs[c];
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--expect-size") == 0 && i + 1 < argc) {
            expect_size = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--colls") == 0 && i + 1 < argc) {
            colls = argv[++i];
        } else if (strcmp(argv[i], "--counts") == 0 && i + 1 < argc) {
            counts = argv[++i];
        } else if (strcmp(argv[i], "--alg-list") == 0 && i + 1 < argc) {
            char *eq = strchr(argv[++i], '=');
            for (int c = 0; eq != NULL && c < NBLOCK; c++)
                if (strlen(coll_names[c]) == (size_t)(eq - argv[i]) &&
                    strncmp(argv[i], coll_names[c], (size_t)(eq - argv[i])) == 0)
                    alg_lists[c] = eq + 1; /* other collectives' lists are not ours */
        } else if (strcmp(argv[i], "--small") == 0) {
            g_small = 1;
        } else if (strcmp(argv[i], "--mem") == 0) {
            g_mem = 1;
        } else if (strcmp(argv[i], "--verbose") == 0) {
            g_verbose = 1;
        } else {
            fprintf(stderr, "usage: block_test --expect-size N [--colls a,b] [--counts list] "
                            "[--alg-list COLL=a,b] [--small] [--verbose]\n");
            return 2;
        }
    }
    const char *seg = getenv("UCOLL_SEGMENT_SIZE");
    if (seg != NULL && *seg != '\0')
        g_seg = (size_t)strtoul(seg, NULL, 10);
    ucoll_status_t st = ucoll_init(&g_comm);
    if (st != UCOLL_OK) {
        printf("FATAL: ucoll_init: %s\n", ucoll_strerror(st));
        return 2;
    }
    g_p = ucoll_comm_size(g_comm);
    g_r = ucoll_comm_rank(g_comm);
    mpt_tally.rank = g_r;
    make_block_seeds();
    make_half_tables();
    mpt_tally.max_prints = getenv("BLOCK_TEST_PRINTS") ? atoi(getenv("BLOCK_TEST_PRINTS")) : 40;
    mpt_tally.fatal_lost_job = 1;
    if (expect_size >= 0)
        mpt_check(g_p == expect_size, "size", "job of %d ranks, expected %d", g_p, expect_size);
    if ((st = ucoll_op_create(affine_fn, NULL, 0, &kind_op[K_U64_AFFINE])) != UCOLL_OK) {
        printf("FATAL rank %d: ucoll_op_create: %s\n", g_r, ucoll_strerror(st));
        return 2;
    }
    g_scounts = xmalloc((size_t)g_p * sizeof(size_t));
    g_sdispls = xmalloc((size_t)g_p * sizeof(size_t));
    g_rcounts = xmalloc((size_t)g_p * sizeof(size_t));
    g_rdispls = xmalloc((size_t)g_p * sizeof(size_t));
    const double t0 = now_s();
    for (int c = 0; c < NBLOCK; c++) {
        if (colls != NULL && !in_list(colls, coll_names[c]))
            continue;
        const double tc = now_s();
        run_collective(c, counts);
        if (g_r == 0)
            printf("block_test np=%d: %s done (%.1f s)\n", g_p, coll_names[c], now_s() - tc);
        fflush(stdout);
    }
    if (colls == NULL)
        ignored_counts();
    /* every rank's failures, summed */
    int64_t mine = mpt_tally.fails, all = -1;
    st = ucoll_allreduce(g_comm, &mine, &all, 1, UCOLL_INT64, UCOLL_OP_SUM);
    mpt_expect_st(st, UCOLL_OK, "summary", "allreduce of the failure counts");
    if (g_r == 0)
        printf("block_test np=%d: %ld checks on rank 0, %lld failed over all ranks (%.1f s); "
               "verdict: %s\n",
               g_p, mpt_tally.checks, (long long)all, now_s() - t0,
               st == UCOLL_OK && all == 0 ? "PASS" : "FAIL");
    fflush(stdout);
    ucoll_op_free(kind_op[K_U64_AFFINE]);
    ucoll_finalize(g_comm);
    free(g_scounts);
    free(g_sdispls);
    free(g_rcounts);
    free(g_rdispls);
    free(g_block_seed);
    for (int kind = 0; kind < NKINDS; kind++)
        free(g_half_bits[kind]);
    return mpt_tally.fails == 0 && st == UCOLL_OK && all == 0 ? 0 : 1;
}
