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

int sched_regions_overlap(sched_region_t a, sched_region_t b)
{
    return a.buf == b.buf && a.off < b.off + b.count && b.off < a.off + a.count;
}

int sched_same_region(sched_region_t a, sched_region_t b)
{
    return a.buf == b.buf && a.off == b.off && a.count == b.count;
}

static int region_covers(sched_region_t a, sched_region_t r)
{
    return a.buf == r.buf && a.off <= r.off && r.off + r.count <= a.off + a.count;
}

int sched_region_read_later(const sched_t *sched, size_t from, sched_region_t r)
{
    for (size_t i = from; i < sched->nsteps; i++) {
        const sched_step_t *s = &sched->steps[i];
        int reads = 0, covers = 0;
        if (s->kind == SCHED_XCHG) {
            reads = s->send_peer >= 0 && sched_regions_overlap(s->send, r);
            covers = s->recv_peer >= 0 && region_covers(s->recv, r);
            if (!covers && s->recv_peer >= 0 && sched_regions_overlap(s->recv, r))
                return 1; /* written in part: the rest may be read later */
        } else {
            reads = sched_regions_overlap(s->src, r) ||
                    (s->kind == SCHED_REDUCE && sched_regions_overlap(s->dst, r));
            covers = s->kind == SCHED_COPY && region_covers(s->dst, r);
            if (!covers && sched_regions_overlap(s->dst, r))
                return 1;
        }
        if (reads)
            return 1;
        if (covers)
            return 0;
    }
    return 0;
}

int sched_receive_lendable(const sched_t *sched, size_t pc)
{
    if (pc + 1 >= sched->nsteps)
        return 0;
    const sched_step_t *step = &sched->steps[pc], *next = &sched->steps[pc + 1];
    if (step->kind != SCHED_XCHG || step->recv_peer < 0 || next->kind != SCHED_REDUCE)
        return 0;
    return (sched_same_region(next->dst, step->recv) ||
            (sched_same_region(next->src, step->recv) && step->recv.buf >= SCHED_FIRST_SCRATCH &&
             !sched_region_read_later(sched, pc + 2, step->recv))) &&
           !sched_regions_overlap(next->src, next->dst) &&
           !(step->send_peer >= 0 && sched_regions_overlap(next->dst, step->send));
}

unsigned sched_ceil_log2(uint64_t n)
{
    unsigned k = 0;
    while (k < 64 && (UINT64_C(1) << k) < n)
        k++;
    return k;
}
