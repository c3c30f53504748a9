/* The hosts of a communicator (sched.h): numbered by their lowest rank, ranks grouped by host. */
#include "../sched.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    int id, rank;
} id_rank_t;

static int by_id_then_rank(const void *x, const void *y)
{
    const id_rank_t *a = x, *b = y;
    if (a->id != b->id)
        return a->id < b->id ? -1 : 1;
    return a->rank < b->rank ? -1 : a->rank > b->rank;
}

void sched_hosts_free(sched_hosts_t *H)
{
    free(H->host_of);
    free(H->host_start);
    free(H->ranks_by_host);
    memset(H, 0, sizeof(*H));
}

int sched_hosts_init(sched_hosts_t *H, int size, const int *host_id)
{
    memset(H, 0, sizeof(*H));
    const size_t n = size > 0 ? (size_t)size : 1;
    id_rank_t *pairs = malloc(n * sizeof(*pairs));
    int *first = malloc(n * sizeof(int)); /* group g (in id order) -> its lowest rank */
    H->host_of = malloc(n * sizeof(int));
    H->host_start = malloc((n + 1) * sizeof(int));
    H->ranks_by_host = malloc(n * sizeof(int));
    if (pairs == NULL || first == NULL || H->host_of == NULL || H->host_start == NULL ||
        H->ranks_by_host == NULL) {
        free(pairs);
        free(first);
        sched_hosts_free(H);
        return -1;
    }
    H->size = size;
    for (int r = 0; r < size; r++)
        pairs[r] = (id_rank_t){host_id[r], r};
    qsort(pairs, (size_t)size, sizeof(*pairs), by_id_then_rank);
    /* groups in id order; each group's ranks ascending, so its first entry is its lowest rank */
    int ngroups = 0;
    for (int i = 0; i < size; i++)
        if (i == 0 || pairs[i].id != pairs[i - 1].id)
            first[ngroups++] = pairs[i].rank;
    /* host numbers in the order of lowest ranks: a rank starts a host iff it is its group's
     * first, and walking ranks upward meets the hosts in that order */
    int *group_host = H->host_start; /* borrowed: group -> host, overwritten below */
    int g = 0;
    for (int i = 0; i < size; i++) {
        if (i > 0 && pairs[i].id != pairs[i - 1].id)
            g++;
        H->host_of[pairs[i].rank] = g; /* the group for now */
    }
    int nhosts = 0;
    for (int r = 0; r < size; r++)
        if (first[H->host_of[r]] == r)
            group_host[H->host_of[r]] = nhosts++;
    for (int r = 0; r < size; r++)
        H->host_of[r] = group_host[H->host_of[r]];
    H->nhosts = nhosts;
    /* counting sort by host; ranks ascend within each host */
    memset(H->host_start, 0, (n + 1) * sizeof(int));
    for (int r = 0; r < size; r++)
        H->host_start[H->host_of[r] + 1]++;
    for (int h = 0; h < nhosts; h++) {
        const int k = H->host_start[h + 1];
        if (k > H->max_per_host)
            H->max_per_host = k;
        H->host_start[h + 1] += H->host_start[h];
    }
    memcpy(first, H->host_start, (size_t)nhosts * sizeof(int)); /* next free slot per host */
    /* hosts numbered by lowest rank: consecutive blocks iff host_of never decreases */
    H->contiguous = 1;
    for (int r = 0; r < size; r++) {
        H->ranks_by_host[first[H->host_of[r]]++] = r;
        if (r > 0 && H->host_of[r] < H->host_of[r - 1])
            H->contiguous = 0;
    }
    free(pairs);
    free(first);
    return 0;
}
