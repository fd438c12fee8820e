/*
 * order: the order in which a partition buffer trains the P x P edge
 * buckets of an epoch (Marius's BETA idea, our own construction).
 *
 * A buffer holds C partitions.  Bucket (i, j) can be trained while i and
 * j are both in it.  An order is a sequence of buffer states, each one
 * partition different from the one before ("a swap": one partition read,
 * one evicted), and the buckets trained in each state: every one of the
 * P^2 buckets exactly once per epoch, in the first state holding both of
 * its partitions.
 *
 * Construction.  Partitions are taken in a random order pi (from the
 * seed); pi starts with the partitions given as "first" (those already in
 * memory, so that an epoch can begin where the last one ended).  Phase 0
 * keeps G0 = pi[0 .. C-2] fixed and moves every other partition through
 * the remaining slot, one swap each.  Phase k >= 1 loads the next group
 * G_k of min(C - 1, m_k - 1) partitions that have not been fixed yet (m_k
 * of them are left, one of which sits in the moving slot and stays), then
 * moves the rest of them through the slot, starting with the one already
 * there.  Every pair of partitions meets: a fixed group meets everything
 * that passes the slot after it is loaded, and the partitions of the last
 * phase all sit together.  Swaps (reads after the first C):
 *     (P - C) + sum_{k >= 1, m_k >= 2} (m_k - 1),  m_k = P - k (C - 1),
 * for P > C >= 2; none for C >= P (every partition fits).
 *
 * Lower bound.  The first C partitions meet C(C-1)/2 pairs, and each
 * swap brings one partition that meets at most C - 1 new ones; every
 * partition must also be read once:
 *     max(P - C, ceil((P(P-1)/2 - C(C-1)/2) / (C - 1))).
 * The construction stays within 10% of it while C <= P / 4 (P = 16,
 * C = 4: 42 against 38; P = 32, C = 6: 107 against 97; C = 2 meets it),
 * and within a few swaps when C is near P (tests/unit/t_store.c checks
 * both formulas against the counts).
 */
#ifndef KG_ORDER_H
#define KG_ORDER_H

#include <stdint.h>

struct kg_order {
	uint32_t nparts, capacity, nstates;
	uint32_t width;		/* partitions per state: min(C, P) */
	uint32_t *state;	/* [nstates * width]: slot contents */
	uint32_t *in;		/* [nstates]: the partition state s reads
				 * (state 0: UINT32_MAX, the first fill) */
	uint64_t *off;		/* [nstates + 1] into buckets */
	uint32_t *buckets;	/* a * P + b, trained in state s in order */
	uint64_t swaps;		/* states after the first */
};

#define KG_ORDER_INIT { 0 }

/*
 * Build the order of P partitions for a buffer of C (C >= 2, or any C
 * with P = 1), pi drawn from the stream
 * KG_STREAM_BUCKET_ORDER of (seed, pass: epoch * passes + pass),
 * starting with the nfirst
 * (<= min(C, P), distinct) partitions in first (may be NULL).  0, or -1
 * after kg_error() for a bad P or C.
 */
int kg_order_build(struct kg_order *o, uint32_t P, uint32_t C,
    const uint32_t *first, uint32_t nfirst, uint64_t seed, uint64_t pass);
void kg_order_release(struct kg_order *o);

/* The partitions of state s (o->width of them). */
static inline const uint32_t *
kg_order_state(const struct kg_order *o, uint32_t s)
{
	return o->state + (uint64_t)s * o->width;
}

/* The buckets of state s: *n of them. */
static inline const uint32_t *
kg_order_buckets(const struct kg_order *o, uint32_t s, uint64_t *n)
{
	*n = o->off[s + 1] - o->off[s];
	return o->buckets + o->off[s];
}

/* Swaps of the construction above, and the lower bound, by formula. */
uint64_t kg_order_swaps_formula(uint32_t P, uint32_t C);
uint64_t kg_order_swaps_lower_bound(uint32_t P, uint32_t C);

#endif
