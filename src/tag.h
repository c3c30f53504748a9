/*
 * The 64-bit tag of every message of a collective:
 *   | comm id 12 | sender's comm rank 17 | sequence 12 | round 8 | last 1 | segment 14 |
 * Why no collective can take another one's message:
 *  - UCP tag matching, and the rings, keep the order of the messages of one sender to one
 *    receiver. With the sender's rank in the tag, a receive matches only messages of its own
 *    (comm, sender, sequence mod 2^12), and of those it takes the oldest one not yet taken.
 *  - A rank never has two collectives of one comm active whose sequence numbers differ by
 *    UCOLL_SEQ_WINDOW or more (exec_start refuses, and revokes the comm): so while one is active
 *    here, no later one with the same sequence field has posted a receive, and the messages
 *    of its sender for it come before those for the later one. Once a collective completed
 *    here, every message addressed to it in it was taken (the ranks passed matching counts).
 *  - A collective that failed may leave messages behind: its comm is then revoked on this
 *    rank (no further collective on it) and its comm id stays taken here until finalize, so
 *    no comm that contains this rank numbers its messages alike again.
 * Round and segment are not needed for matching; they make the crossed-channel check (a
 * probe of the other channel for the same tag) and the length checks exact, so schedules
 * have at most UCOLL_MAX_ROUNDS rounds (or wrap the field when all messages between two ranks
 * fall in one round, ALG_ONE_ROUND_PER_PAIR) and messages at most UCOLL_MAX_SEGMENTS segments.
 * "last" marks a message's final segment: receives match with it masked out and compare it
 * afterwards (counts differing by whole segments would otherwise go unnoticed).
 */
#ifndef UCOLL_TAG_H
#define UCOLL_TAG_H

#include <stdint.h>

#define UCOLL_TAG_COMM_BITS 12
#define UCOLL_TAG_SOURCE_BITS 17
#define UCOLL_TAG_SEQ_BITS 12
#define UCOLL_TAG_ROUND_BITS 8
#define UCOLL_TAG_SEG_BITS 14
#define UCOLL_MAX_COMMS (1 << UCOLL_TAG_COMM_BITS)
#define UCOLL_MAX_RANKS (1 << UCOLL_TAG_SOURCE_BITS)
#define UCOLL_MAX_ROUNDS ((1 << UCOLL_TAG_ROUND_BITS) - 1)
#define UCOLL_MAX_SEGMENTS ((1 << UCOLL_TAG_SEG_BITS) - 1)
/* a start this far past the oldest active collective of its comm is refused */
#define UCOLL_SEQ_WINDOW ((1u << UCOLL_TAG_SEQ_BITS) - 1)
#define UCOLL_TAG_LAST_SEGMENT (UINT64_C(1) << UCOLL_TAG_SEG_BITS)

_Static_assert(UCOLL_TAG_COMM_BITS + UCOLL_TAG_SOURCE_BITS + UCOLL_TAG_SEQ_BITS +
                       UCOLL_TAG_ROUND_BITS + 1 + UCOLL_TAG_SEG_BITS ==
                   64,
               "the tag's fields fill 64 bits");

static inline uint64_t ucoll_tag(uint32_t comm_id, uint32_t source, uint32_t seq, uint32_t round,
                                 uint32_t seg, int last_seg)
{
    const int seg_at = 0, last_at = seg_at + UCOLL_TAG_SEG_BITS, round_at = last_at + 1;
    const int seq_at = round_at + UCOLL_TAG_ROUND_BITS, source_at = seq_at + UCOLL_TAG_SEQ_BITS;
    const int comm_at = source_at + UCOLL_TAG_SOURCE_BITS;
#define UCOLL_TAG_FIELD(v, bits) ((uint64_t)(v) & ((UINT64_C(1) << (bits)) - 1))
    return UCOLL_TAG_FIELD(comm_id, UCOLL_TAG_COMM_BITS) << comm_at |
           UCOLL_TAG_FIELD(source, UCOLL_TAG_SOURCE_BITS) << source_at |
           UCOLL_TAG_FIELD(seq, UCOLL_TAG_SEQ_BITS) << seq_at |
           UCOLL_TAG_FIELD(round, UCOLL_TAG_ROUND_BITS) << round_at |
           (last_seg ? UINT64_C(1) << last_at : 0) | UCOLL_TAG_FIELD(seg, UCOLL_TAG_SEG_BITS);
#undef UCOLL_TAG_FIELD
}

#endif
