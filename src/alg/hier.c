/* Node-aware forms: the layout, phases and their placement (hier.h). */
#include "hier.h"

#include <stdlib.h>

int hier_me(const sched_args_t *a, hier_me_t *me)
{
    const sched_hosts_t *H = a->hosts;
    if (H == NULL || H->size != a->size || a->rank < 0 || a->rank >= a->size ||
        a->leaders_build == NULL)
        return -1;
    me->H = H;
    me->host = H->host_of[a->rank];
    me->members = H->ranks_by_host + H->host_start[me->host];
    me->n = H->host_start[me->host + 1] - H->host_start[me->host];
    me->local = hier_index_of(me, a->rank);
    return me->local < 0 ? -1 : 0;
}

int hier_index_of(const hier_me_t *me, int r)
{
    int lo = 0, hi = me->n - 1; /* members ascend */
    while (lo <= hi) {
        const int mid = lo + (hi - lo) / 2;
        if (me->members[mid] == r)
            return mid;
        if (me->members[mid] < r)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

void hier_map_default(hier_buf_t map[SCHED_NBUFS], size_t tmp2_reserved)
{
    for (int b = 0; b < SCHED_NBUFS; b++)
        map[b] = (hier_buf_t){(uint8_t)b, b == SCHED_BUF_TMP2 ? tmp2_reserved : 0};
}

static int build_phase(const sched_args_t *a, const hier_phase_t *ph, int sub_rank, sched_t *sub)
{
    sched_args_t sa = *a;
    sa.rank = sub_rank;
    sa.size = ph->n;
    sa.root = ph->root;
    sa.count = ph->count;
    sa.param = ph->param;
    sa.send_counts = sa.send_displs = NULL;
    sa.recv_counts = ph->recv_counts;
    sa.recv_displs = ph->recv_displs;
    sa.hosts = NULL;
    sa.leaders_build = sa.local_reduce_build = sa.local_bcast_build = NULL;
    sa.leaders_param = 0;
    sched_init(sub);
    return ph->build(sub, &sa);
}

static int place(const hier_buf_t map[SCHED_NBUFS], sched_region_t r, int empty,
                 sched_region_t *out)
{
    if (r.buf >= SCHED_NBUFS || map[r.buf].buf == HIER_NONE)
        return -1;
    *out = sched_region(map[r.buf].buf, empty ? 0 : map[r.buf].off + r.off, empty ? 0 : r.count);
    return 0;
}

int hier_append(sched_t *s, const sched_args_t *a, const hier_phase_t *ph, int sub_rank,
                const int *group, uint32_t base, const hier_buf_t map[SCHED_NBUFS],
                uint32_t *rounds)
{
    sched_t sub;
    int rc = build_phase(a, ph, sub_rank, &sub);
    if (rc != 0) {
        s->failed |= sub.failed;
        sched_destroy(&sub);
        return -1;
    }
    for (size_t i = 0; i < sub.nsteps && rc == 0; i++) {
        const sched_step_t *st = &sub.steps[i];
        sched_region_t x = {0, 0, 0}, y = {0, 0, 0};
        if (st->kind == SCHED_XCHG) {
            const int sp = st->send_peer, rp = st->recv_peer;
            if ((sp >= 0 && place(map, st->send, ph->messages_only, &x) != 0) ||
                (rp >= 0 && place(map, st->recv, ph->messages_only, &y) != 0)) {
                rc = -1;
                break;
            }
            sched_xchg(s, base + st->round, sp >= 0 ? group[sp] : -1, x, rp >= 0 ? group[rp] : -1,
                       y);
        } else if (!ph->messages_only) {
            if (place(map, st->src, 0, &x) != 0 || place(map, st->dst, 0, &y) != 0) {
                rc = -1;
                break;
            }
            if (st->kind == SCHED_COPY)
                sched_copy(s, x, y);
            else
                sched_reduce(s, x, y);
        }
    }
    if (rounds != NULL)
        *rounds = sub.nrounds;
    sched_destroy(&sub);
    return rc != 0 || s->failed ? -1 : 0;
}

int hier_rounds_of(const sched_args_t *a, const hier_phase_t *ph, int sub_rank, uint32_t *rounds)
{
    sched_t sub;
    const int rc = build_phase(a, ph, sub_rank, &sub);
    *rounds = sub.nrounds;
    sched_destroy(&sub);
    return rc;
}

int *hier_leaders(const sched_args_t *a, int root_rank, int at_last)
{
    const sched_hosts_t *H = a->hosts;
    int *leaders = malloc((size_t)H->nhosts * sizeof(int));
    if (leaders == NULL)
        return NULL;
    for (int g = 0; g < H->nhosts; g++)
        leaders[g] = H->ranks_by_host[at_last ? H->host_start[g + 1] - 1 : H->host_start[g]];
    if (root_rank >= 0)
        leaders[H->host_of[root_rank]] = root_rank;
    return leaders;
}

int hier_local_rounds(const sched_args_t *a, sched_build_fn_t build, int param, size_t count,
                      int root_rank, int at_last, uint32_t *rounds)
{
    const sched_hosts_t *H = a->hosts;
    enum { SEEN = 16 };
    struct seen_pair {
        int n, root;
    } seen[SEEN]; /* (size, root) pairs already counted: most layouts have one or two */
    int nseen = 0;
    uint32_t most = 0;
    for (int g = 0; g < H->nhosts; g++) {
        const int first = H->host_start[g], n = H->host_start[g + 1] - first;
        int root = at_last ? n - 1 : 0;
        if (root_rank >= 0 && H->host_of[root_rank] == g) {
            const hier_me_t on = {H, g, n, 0, H->ranks_by_host + first};
            root = hier_index_of(&on, root_rank);
        }
        int known = 0;
        for (int i = 0; i < nseen && !known; i++)
            known = seen[i].n == n && seen[i].root == root;
        if (known)
            continue;
        if (nseen < SEEN)
            seen[nseen++] = (struct seen_pair){n, root};
        const hier_phase_t ph = {
            .build = build, .param = param, .n = n, .root = root, .count = count};
        for (int i = 0; i < n; i++) {
            uint32_t r;
            if (hier_rounds_of(a, &ph, i, &r) != 0)
                return -1;
            if (r > most)
                most = r;
        }
    }
    *rounds = most;
    return 0;
}
