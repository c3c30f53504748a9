/*
 * Pipelined in-order binary tree for exscan and scan on large vectors (algorithms.md 1.6; the
 * doubly pipelined tree of Sanders and Traff, EuroPVM/MPI 2006, in ucoll's one-ported rounds).
 *
 * Tree: the balanced in-order tree on ranks 0..p-1: the root of a range [lo, hi) is
 * lo + (hi - lo)/2, its left subtree [lo, root), its right one [root + 1, hi). Height of a
 * subtree of n ranks: floor(log2 n) (leaves 0). A node's subtree is a contiguous range, so
 *   up:   S_x = S_left (+) V_x (+) S_right            (the subtree's sum, sent to the parent)
 *   down: P_x = the (+) of the ranks before x's range (from the parent; none on the left
 *         spine, the ranges that start at rank 0): the left child gets P_x, the right child
 *         P_x (+) S_left (+) V_x, and x's exscan result is P_x (+) S_left.
 * The vector is cut into k' segments (as the chain pipeline cuts it), each going up and down.
 *
 * Rounds: a superstep is 3 rounds, one per colour of the tree's edges (a node's edge to its
 * parent and its two child edges have three different colours: the root's children 0 and 1,
 * below a node whose parent edge is c the two colours other than c, the smaller to the left).
 * In round 3s + c every edge of colour c carries, at the same time, segment s - h(child) up
 * and segment s - d(child) down, so a node sends at most one and receives at most one message
 * per round. d is the superstep offset of the prefix:
 *   left child of x: d(x) + 1;   right child R of x: 1 + max(d(x), h(left of x), h(R))
 * (d = -1 on the left spine), so everything a message needs arrived in an earlier superstep,
 * and a right child's prefix is formed after its subtree sum has left x (they share ACC).
 * Buffers per segment: OUT <- S_left; ACC = V, then S_left (+) V, then (right prefix) P (+)
 * ACC; TMP <- S_right, then ACC (+) TMP, sent up; TMP2 <- P (OUT without a left child).
 *
 * Cost: rounds 3 (k' - 1 + D) + c + 1 with D the largest offset of any message (at most
 * 2 floor(log2 p) + 1); every message m/k'; a node with two children does, per segment, up to
 * 3 sends and 3 receives, and up to 4 (+) of m/k' (exscan: S_left (+) V, (+) S_right, P (+)
 * S_left, P (+) ACC). Scan adds at the end, per rank, up to one (+) and one copy of the vector.
 * Exact figures: scan_tree_figures (below), which the unit test holds to the schedules.
 */
#include "alg.h"
#include "cost.h"

#include <stdlib.h>

/* floor(log2 n) for n >= 1, -1 for n = 0 (the height of a subtree of n ranks) */
static int height(int n)
{
    int h = -1;
    while (n > 0) {
        n >>= 1;
        h++;
    }
    return h;
}

static int max3(int a, int b, int c)
{
    const int m = a > b ? a : b;
    return m > c ? m : c;
}

/* the two colours other than c, smaller first */
static void other_colours(int c, int *lo, int *hi)
{
    *lo = c == 0 ? 1 : 0;
    *hi = c == 2 ? 1 : 2;
}

void scan_tree_node(int p, int r, scan_tree_node_t *t)
{
    int lo = 0, hi = p, colour = 2, spine = 1, delta = -1, parent = -1;
    for (;;) {
        const int mid = lo + (hi - lo) / 2;
        int lcol, rcol;
        other_colours(colour, &lcol, &rcol);
        const int hl = height(mid - lo), hr = height(hi - mid - 1);
        const int dright = 1 + max3(spine ? -1 : delta, hl, hr);
        if (mid == r) {
            t->parent = parent;
            t->left = mid > lo ? lo + (mid - lo) / 2 : -1;
            t->right = hi > mid + 1 ? mid + 1 + (hi - mid - 1) / 2 : -1;
            t->colour = colour;
            t->lcol = lcol;
            t->rcol = rcol;
            t->height = height(hi - lo);
            t->hl = hl;
            t->hr = hr;
            t->spine = spine;
            t->delta = spine ? -1 : delta;
            t->dl = spine ? -1 : delta + 1;
            t->dr = dright;
            return;
        }
        parent = mid;
        if (r < mid) {
            colour = lcol;
            delta = spine ? -1 : delta + 1;
            hi = mid;
        } else {
            colour = rcol;
            delta = dright;
            spine = 0;
            lo = mid + 1;
        }
    }
}

int scan_tree_max_offset(int p)
{
    /* the deepest prefix offset: along any path d grows by at least one per level, by more
     * where a right child's left sibling subtree is taller; at most 2 floor(log2 p) + 1 */
    return p > 1 ? 2 * height(p) + 1 : 0;
}

int scan_tree_max_segments(int p)
{
    /* 3 (k - 1 + D) + 3 <= COST_MAX_ROUNDS */
    const int most = (int)COST_MAX_ROUNDS / 3 - scan_tree_max_offset(p);
    return most > 1 ? most : 1;
}

int tree_segments(const sched_args_t *a)
{
    int k = a->param;
    if (k < 1)
        k = cost_tree_k(a->size, a->count, 1, COST_DEFAULT_ALPHA_US, COST_DEFAULT_BETA_NS);
    if (k > scan_tree_max_segments(a->size))
        k = scan_tree_max_segments(a->size);
    if ((size_t)k > a->count)
        k = a->count > 0 ? (int)a->count : 1;
    return k;
}

enum { GOT_L = 1, GOT_R = 2, GOT_P = 4, DONE_L = 8, DONE_R = 16, DONE_Q = 32, DONE_RP = 64 };

typedef struct {
    const sched_args_t *a;
    const scan_tree_node_t *t;
    int k, inclusive, need_acc;
    uint8_t state[ALG_PARAM_OPTIONAL_MAX + 1];
} tree_ctx_t;

/* the (+) that segment j's arrivals so far allow, in the only order that keeps every operand
 * intact until its last use */
static void combine_ready(sched_t *s, tree_ctx_t *c, int j)
{
    const scan_tree_node_t *t = c->t;
    const size_t n = c->a->count;
    const int k = c->k, hasL = t->left >= 0, hasR = t->right >= 0, root = t->parent < 0;
    uint8_t *st = &c->state[j];
    if (hasL && c->need_acc && (*st & GOT_L) && !(*st & DONE_L)) { /* ACC = S_left (+) V */
        sched_reduce(s, pipeline_segment(SCHED_BUF_OUT, n, k, j),
                     pipeline_segment(SCHED_BUF_ACC, n, k, j));
        *st |= DONE_L;
    }
    const int left_in = !hasL || (*st & DONE_L);
    if (hasR && !root && (*st & GOT_R) && left_in && !(*st & DONE_R)) { /* TMP = S_x */
        const int a = hasL ? SCHED_BUF_ACC : SCHED_BUF_IN;
        sched_reduce(s, pipeline_segment(a, n, k, j), pipeline_segment(SCHED_BUF_TMP, n, k, j));
        *st |= DONE_R;
    }
    if (!c->inclusive && hasL && !t->spine && (*st & GOT_P) && (*st & DONE_L) &&
        !(*st & DONE_Q)) { /* OUT = P (+) S_left: the exscan result */
        sched_reduce(s, pipeline_segment(SCHED_BUF_TMP2, n, k, j),
                     pipeline_segment(SCHED_BUF_OUT, n, k, j));
        *st |= DONE_Q;
    }
    if (hasR && !t->spine && (*st & GOT_P) && left_in && (*st & DONE_R) && !(*st & DONE_RP)) {
        /* ACC = P (+) S_left (+) V: the right child's prefix */
        const int psrc = hasL ? SCHED_BUF_TMP2 : SCHED_BUF_OUT;
        sched_reduce(s, pipeline_segment(psrc, n, k, j), pipeline_segment(SCHED_BUF_ACC, n, k, j));
        *st |= DONE_RP;
    }
}

static int tree_build(sched_t *s, const sched_args_t *a, int inclusive)
{
    const int p = a->size, r = a->rank;
    const sched_region_t V = SCHED_WHOLE(SCHED_BUF_IN, a);
    if (p < 2) {
        if (inclusive)
            sched_copy(s, V, SCHED_WHOLE(SCHED_BUF_OUT, a));
        return s->failed ? -1 : 0;
    }
    scan_tree_node_t t;
    scan_tree_node(p, r, &t);
    tree_ctx_t c = {.a = a, .t = &t, .k = tree_segments(a), .inclusive = inclusive};
    if (c.k > ALG_PARAM_OPTIONAL_MAX) /* not reached: tree_segments keeps k within the tag */
        return -1;
    const int hasL = t.left >= 0, hasR = t.right >= 0, root = t.parent < 0;
    const size_t n = a->count;
    const int k = c.k;
    c.need_acc = inclusive ? r != 0 : (hasL && (!root || hasR)) || (hasR && !t.spine);
    for (int j = 0; j < k; j++)
        c.state[j] = 0;
    if (c.need_acc)
        sched_copy(s, V, SCHED_WHOLE(SCHED_BUF_ACC, a));
    const int up_buf = hasR ? SCHED_BUF_TMP : hasL ? SCHED_BUF_ACC : SCHED_BUF_IN;
    const int down_buf = hasL ? SCHED_BUF_TMP2 : SCHED_BUF_OUT; /* where P lands */
    /* the right child's prefix: ACC off the spine; on it S_left (+) V (ACC) or V */
    const int right_prefix = !t.spine || hasL ? SCHED_BUF_ACC : SCHED_BUF_IN;
    const int last = k - 1 + max3(max3(t.height, t.delta, t.dl), t.dr, 0);
    for (int step = 0; step <= last; step++) {
        for (int colour = 0; colour < 3; colour++) {
            int to = -1, from = -1, sj = -1, rj = -1, sbuf = 0, rbuf = 0, got = 0;
            if (!root && colour == t.colour) {
                if (step - t.height >= 0 && step - t.height < k)
                    to = t.parent, sj = step - t.height, sbuf = up_buf;
                if (!t.spine && step - t.delta >= 0 && step - t.delta < k)
                    from = t.parent, rj = step - t.delta, rbuf = down_buf, got = GOT_P;
            } else if (hasL && colour == t.lcol) {
                if (step - t.hl >= 0 && step - t.hl < k)
                    from = t.left, rj = step - t.hl, rbuf = SCHED_BUF_OUT, got = GOT_L;
                if (!t.spine && step - t.dl >= 0 && step - t.dl < k)
                    to = t.left, sj = step - t.dl, sbuf = SCHED_BUF_TMP2;
            } else if (hasR && colour == t.rcol) {
                if (step - t.hr >= 0 && step - t.hr < k)
                    from = t.right, rj = step - t.hr, rbuf = SCHED_BUF_TMP, got = GOT_R;
                if (step - t.dr >= 0 && step - t.dr < k)
                    to = t.right, sj = step - t.dr, sbuf = right_prefix;
            }
            if (to < 0 && from < 0)
                continue;
            const sched_region_t none = sched_region(SCHED_BUF_IN, 0, 0);
            sched_xchg(s, (uint32_t)(3 * step + colour), to,
                       to >= 0 ? pipeline_segment(sbuf, n, k, sj) : none, from,
                       from >= 0 ? pipeline_segment(rbuf, n, k, rj) : none);
            if (from >= 0) {
                c.state[rj] |= (uint8_t)got;
                combine_ready(s, &c, rj);
            }
        }
    }
    if (inclusive) { /* I = P (+) S_left (+) V, into OUT */
        if (r == 0) {
            sched_copy(s, V, SCHED_WHOLE(SCHED_BUF_OUT, a));
        } else {
            if (!t.spine && !hasR)
                sched_reduce(s, SCHED_WHOLE(down_buf, a), SCHED_WHOLE(SCHED_BUF_ACC, a));
            sched_copy(s, SCHED_WHOLE(SCHED_BUF_ACC, a), SCHED_WHOLE(SCHED_BUF_OUT, a));
        }
    }
    return s->failed ? -1 : 0;
}

int exscan_tree_build(sched_t *s, const sched_args_t *a)
{
    return tree_build(s, a, 0);
}

int scan_tree_build(sched_t *s, const sched_args_t *a)
{
    return tree_build(s, a, 1);
}

/* ---------------------------------------------------------------- exact figures */

/* ranks of the tree that are alike for every figure: subtrees of n ranks whose root has the
 * same parent-edge colour, prefix offset and spine flag, mult of them */
typedef struct {
    int n, colour, delta, spine;
    uint64_t mult;
} tree_kind_t;

static void add_kind(tree_kind_t *list, int *len, tree_kind_t k)
{
    for (int i = 0; i < *len; i++)
        if (list[i].n == k.n && list[i].colour == k.colour && list[i].delta == k.delta &&
            list[i].spine == k.spine) {
            list[i].mult += k.mult;
            return;
        }
    list[(*len)++] = k;
}

/* sends and receives of one kind in round 3s + c (each 0 or 1) */
static void kind_round(const scan_tree_node_t *t, int root, int k, int s, int c, int *sent,
                       int *recvd)
{
    *sent = *recvd = 0;
    if (!root && c == t->colour) {
        *sent = s >= t->height && s < t->height + k;
        *recvd = !t->spine && s >= t->delta && s < t->delta + k;
    } else if (t->left >= 0 && c == t->lcol) {
        *recvd = s >= t->hl && s < t->hl + k;
        *sent = !t->spine && s >= t->dl && s < t->dl + k;
    } else if (t->right >= 0 && c == t->rcol) {
        *recvd = s >= t->hr && s < t->hr + k;
        *sent = s >= t->dr && s < t->dr + k;
    }
}

int scan_tree_figures(int p, int k, int inclusive, scan_tree_figures_t *f)
{
    f->rounds = f->msgs = 0;
    f->volume = f->cpu_volume = f->ops = f->copies = 0;
    if (k > ALG_PARAM_OPTIONAL_MAX) /* beyond any tag's rounds; its arrays would overflow */
        return -1;
    if (p < 2 || k < 1)
        return p >= 1 && k >= 1 ? 0 : -1;
    /* a level holds at most 2 subtree sizes x 3 colours x offsets x 2 spine flags */
    const int hmax = height(p), smax = k + 2 * hmax + 3, nrounds = 3 * smax;
    const int cap = 12 * (2 * hmax + 4);
    tree_kind_t *cur = malloc(sizeof(*cur) * (size_t)cap);
    tree_kind_t *next = malloc(sizeof(*next) * (size_t)cap);
    uint64_t *msgs = calloc((size_t)nrounds, sizeof(*msgs));
    uint8_t *cpu = calloc((size_t)nrounds, 1);
    int rc = -1, ncur = 0, last = -1;
    if (cur == NULL || next == NULL || msgs == NULL || cpu == NULL)
        goto out;
    cur[ncur++] = (tree_kind_t){p, 2, -1, 1, 1};
    for (int level = 0; ncur > 0; level++) {
        int nnext = 0;
        for (int i = 0; i < ncur; i++) {
            const tree_kind_t *kd = &cur[i];
            const int nl = kd->n / 2, nr = kd->n - kd->n / 2 - 1, root = level == 0;
            scan_tree_node_t t;
            t.colour = kd->colour;
            other_colours(kd->colour, &t.lcol, &t.rcol);
            t.height = height(kd->n);
            t.hl = height(nl);
            t.hr = height(nr);
            t.left = nl > 0 ? 0 : -1;
            t.right = nr > 0 ? 0 : -1;
            t.spine = kd->spine;
            t.delta = kd->spine ? -1 : kd->delta;
            t.dl = kd->spine ? -1 : kd->delta + 1;
            t.dr = 1 + max3(t.delta, t.hl, t.hr);
            const int hasL = nl > 0, hasR = nr > 0, rank0 = kd->spine && kd->n == 1;
            for (int s = 0; s < smax; s++)
                for (int c = 0; c < 3; c++) {
                    int sent, recvd;
                    kind_round(&t, root, k, s, c, &sent, &recvd);
                    if (!sent && !recvd)
                        continue;
                    const int r = 3 * s + c;
                    last = r > last ? r : last;
                    msgs[r] += (uint64_t)sent * kd->mult;
                    if (sent + recvd > cpu[r])
                        cpu[r] = (uint8_t)(sent + recvd);
                }
            const int need_acc =
                inclusive ? !rank0 : (hasL && (!root || hasR)) || (hasR && !kd->spine);
            const uint64_t K = (uint64_t)k;
            const uint64_t ops = (hasL && need_acc ? K : 0) + (hasR && !root ? K : 0) +
                                 (!inclusive && hasL && !kd->spine ? K : 0) +
                                 (hasR && !kd->spine ? K : 0) +
                                 (inclusive && !rank0 && !kd->spine && !hasR ? K : 0);
            const uint64_t copies = (need_acc ? K : 0) + (inclusive ? K : 0);
            f->ops = ops > f->ops ? ops : f->ops;
            f->copies = copies > f->copies ? copies : f->copies;
            if (hasL)
                add_kind(next, &nnext, (tree_kind_t){nl, t.lcol, t.dl, kd->spine, kd->mult});
            if (hasR)
                add_kind(next, &nnext, (tree_kind_t){nr, t.rcol, t.dr, 0, kd->mult});
            if (nnext > cap - 2)
                goto out; /* not reached: see cap */
        }
        tree_kind_t *swap = cur;
        cur = next;
        next = swap;
        ncur = nnext;
    }
    f->rounds = (unsigned)(last + 1);
    for (int r = 0; r <= last; r++) {
        f->volume += msgs[r] > 0;
        f->cpu_volume += cpu[r];
        f->msgs = msgs[r] > f->msgs ? (unsigned)msgs[r] : f->msgs;
    }
    rc = 0;
out:
    free(cur);
    free(next);
    free(msgs);
    free(cpu);
    return rc;
}

unsigned scan_tree_path_bound(int p, int k)
{
    return 4 * (unsigned)(k - 1 + scan_tree_max_offset(p));
}
