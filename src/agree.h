/*
 * What the agreements among ranks (agree.c) send, for tests that count messages: every
 * agreement is one allreduce of this algorithm over 64-bit words, unsegmented.
 */
#ifndef UCOLL_AGREE_H
#define UCOLL_AGREE_H

#define AGREE_ALG "recursive-doubling"
/* init: one (value, ~value) pair per setting compared (the UCOLL_<COLL>_ALG ones, then
 * segment size, the two rhrd thresholds, alpha, beta, gamma, UCOLL_CHECK and
 * UCOLL_SINGLE_COPY_MIN and _MAX), then two words: nonzero if some rank cannot use single copy,
 * nonzero if some rank's host has more ranks than CPUs */
#define AGREE_SETTINGS_PAIRS (UCOLL_NCOLLS + 9)
#define AGREE_SETTINGS_WORDS (2 * AGREE_SETTINGS_PAIRS + 2)
/* UCOLL_CHECK: one pair per compared field of a collective */
#define AGREE_CHECK_FIELDS 7
#define AGREE_CHECK_WORDS (2 * AGREE_CHECK_FIELDS)
/* init on more than one host, after the settings: an allgather of one int32 per rank (its
 * host's lowest rank) with this algorithm, for the node-aware forms */
#define HOSTS_GATHER_ALG "bruck"

#endif
