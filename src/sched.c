/* Schedule construction helpers (see sched.h). */
#include "sched.h"

#include <stdlib.h>
#include <string.h>

void sched_init(sched_t *sched)
{
    memset(sched, 0, sizeof(*sched));
}

void sched_clear(sched_t *sched)
{
    sched->nsteps = 0;
    sched->nrounds = 0;
    sched->failed = 0;
    memset(sched->scratch, 0, sizeof(sched->scratch));
}

void sched_destroy(sched_t *sched)
{
    free(sched->steps);
    sched_init(sched);
}

static void note_region(sched_t *sched, sched_region_t r)
{
    if (r.buf >= SCHED_FIRST_SCRATCH && r.buf < SCHED_NBUFS &&
        r.off + r.count > sched->scratch[r.buf])
        sched->scratch[r.buf] = r.off + r.count;
}

static sched_step_t *append(sched_t *sched)
{
    if (sched->nsteps == sched->cap) {
        size_t cap = sched->cap ? 2 * sched->cap : 32;
        sched_step_t *steps = realloc(sched->steps, cap * sizeof(*steps));
        if (steps == NULL) {
            sched->failed = 1;
            return NULL;
        }
        sched->steps = steps;
        sched->cap = cap;
    }
    sched_step_t *step = &sched->steps[sched->nsteps++];
    memset(step, 0, sizeof(*step));
    step->send_peer = -1;
    step->recv_peer = -1;
    return step;
}

static void local_step(sched_t *sched, int kind, sched_region_t src, sched_region_t dst)
{
    if (src.count == 0)
        return;
    sched_step_t *step = append(sched);
    if (step == NULL)
        return;
    step->kind = (uint8_t)kind;
    step->src = src;
    step->dst = dst;
    note_region(sched, src);
    note_region(sched, dst);
}

void sched_copy(sched_t *sched, sched_region_t src, sched_region_t dst)
{
    if (src.buf == dst.buf && src.off == dst.off)
        return;
    local_step(sched, SCHED_COPY, src, dst);
}

void sched_reduce(sched_t *sched, sched_region_t src, sched_region_t dst)
{
    local_step(sched, SCHED_REDUCE, src, dst);
}

void sched_xchg(sched_t *sched, uint32_t round, int send_peer, sched_region_t send, int recv_peer,
                sched_region_t recv)
{
    if (send_peer < 0 && recv_peer < 0)
        return;
    sched_step_t *step = append(sched);
    if (step == NULL)
        return;
    step->kind = SCHED_XCHG;
    step->round = round;
    step->send_peer = send_peer;
    step->recv_peer = recv_peer;
    if (send_peer >= 0) {
        step->send = send;
        note_region(sched, send);
    }
    if (recv_peer >= 0) {
        step->recv = recv;
        note_region(sched, recv);
    }
    if (round + 1 > sched->nrounds)
        sched->nrounds = round + 1;
}

void sched_send(sched_t *sched, uint32_t round, int peer, sched_region_t send)
{
    sched_xchg(sched, round, peer, send, -1, send);
}

void sched_recv(sched_t *sched, uint32_t round, int peer, sched_region_t recv)
{
    sched_xchg(sched, round, -1, recv, peer, recv);
}

unsigned sched_ceil_log2(uint64_t n)
{
    unsigned k = 0;
    while (k < 64 && (UINT64_C(1) << k) < n)
        k++;
    return k;
}
