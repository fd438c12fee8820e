/*
 * order: the edge-bucket order of a partition buffer; see order.h.
 */
#include "store/order.h"

#include <stdlib.h>
#include <string.h>

#include "core/util.h"

/* What the construction accumulates. */
struct builder {
	struct kg_order *o;
	uint32_t *slots;	/* the current state, o->width */
	uint64_t cap;		/* states allocated */
};

/* Record the current slots as a new state that read partition "in". */
static void
push_state(struct builder *b, uint32_t in)
{
	struct kg_order *o = b->o;

	if (o->nstates == b->cap) {
		b->cap = b->cap ? 2 * b->cap : 16;
		o->state = kg_xreallocarray(o->state, b->cap * o->width,
		    sizeof(*o->state));
		o->in = kg_xreallocarray(o->in, b->cap, sizeof(*o->in));
	}
	memcpy(o->state + (uint64_t)o->nstates * o->width, b->slots,
	    o->width * sizeof(*b->slots));
	o->in[o->nstates++] = in;
}

/* Put partition x in slot k, as one swap. */
static void
swap_in(struct builder *b, uint32_t k, uint32_t x)
{
	b->slots[k] = x;
	b->o->swaps++;
	push_state(b, x);
}

/* pi: first, then the other partitions in a random order. */
static uint32_t *
permutation(uint32_t P, const uint32_t *first, uint32_t nfirst,
    uint64_t seed, uint64_t pass)
{
	uint32_t *pi = kg_xmallocarray(P, sizeof(*pi)), i, n = nfirst;
	uint8_t *used = kg_xcalloc(P, 1);
	struct kg_rng rng;

	for (i = 0; i < nfirst; i++) {
		pi[i] = first[i];
		used[first[i]] = 1;
	}
	for (i = 0; i < P; i++)
		if (!used[i])
			pi[n++] = i;
	kg_rng_stream(&rng, seed, KG_STREAM_BUCKET_ORDER, pass, 0, 0, 0);
	for (i = P; i > nfirst + 1; i--) {
		uint32_t j = nfirst + (uint32_t)kg_rng_below(&rng, i - nfirst);
		uint32_t t = pi[i - 1];

		pi[i - 1] = pi[j];
		pi[j] = t;
	}
	free(used);
	return pi;
}

/*
 * The states for P > C: phase 0, then phases k >= 1 over rem (the m
 * partitions not fixed yet; rem[m - 1] sits in the moving slot C - 1).
 */
static void
build_states(struct builder *b, const uint32_t *pi)
{
	uint32_t P = b->o->nparts, C = b->o->capacity, m, g, i, k;
	uint32_t *rem = kg_xmallocarray(P, sizeof(*rem));

	memcpy(b->slots, pi, C * sizeof(*pi));
	push_state(b, UINT32_MAX);
	for (i = C; i < P; i++)
		swap_in(b, C - 1, pi[i]);
	/* Not fixed yet: pi[C-1 ..], the one in the slot (pi[P-1]) last. */
	m = P - C + 1;
	memcpy(rem, pi + C - 1, m * sizeof(*rem));
	while (m >= 2) {
		g = m - 1 < C - 1 ? m - 1 : C - 1;
		for (k = 0; k < g; k++)
			swap_in(b, k, rem[k]);
		/* The rest passes the slot, the one already there first. */
		memmove(rem, rem + g, (m - g) * sizeof(*rem));
		m -= g;
		for (i = 0; i + 1 < m; i++)
			swap_in(b, C - 1, rem[i]);
		/* The last one moved stays in the slot: put it last. */
		if (m > 1) {
			uint32_t t = rem[m - 2];

			rem[m - 2] = rem[m - 1];
			rem[m - 1] = t;
		}
	}
	free(rem);
}

/* Each bucket in the first state holding both of its partitions. */
static void
assign_buckets(struct kg_order *o)
{
	uint32_t P = o->nparts, W = o->width, s, i, j;
	uint8_t *met = kg_xcalloc((size_t)P * P, 1);
	uint64_t nb = 0;

	o->off = kg_xmallocarray((size_t)o->nstates + 1, sizeof(*o->off));
	o->buckets = kg_xmallocarray((size_t)P * P, sizeof(*o->buckets));
	for (s = 0; s < o->nstates; s++) {
		const uint32_t *st = kg_order_state(o, s);

		o->off[s] = nb;
		for (i = 0; i < W; i++)
			for (j = 0; j < W; j++) {
				uint32_t bk = st[i] * P + st[j];

				if (met[bk])
					continue;
				met[bk] = 1;
				o->buckets[nb++] = bk;
			}
	}
	o->off[o->nstates] = nb;
	free(met);
}

int
kg_order_build(struct kg_order *o, uint32_t P, uint32_t C,
    const uint32_t *first, uint32_t nfirst, uint64_t seed, uint64_t pass)
{
	struct builder b;
	uint32_t *pi;

	*o = (struct kg_order)KG_ORDER_INIT;
	if (P == 0 || C == 0 || (P > 1 && C < 2)) {
		kg_error("a buffer of %u partitions cannot train %u "
		    "partitions: it needs at least 2", C, P);
		return -1;
	}
	o->nparts = P;
	o->capacity = C;
	o->width = C < P ? C : P;
	if (nfirst > o->width)
		nfirst = o->width;
	pi = permutation(P, first, nfirst, seed, pass);
	memset(&b, 0, sizeof(b));
	b.o = o;
	b.slots = kg_xmallocarray(o->width, sizeof(*b.slots));
	if (C >= P) {
		memcpy(b.slots, pi, P * sizeof(*pi));
		push_state(&b, UINT32_MAX);
	} else
		build_states(&b, pi);
	assign_buckets(o);
	free(b.slots);
	free(pi);
	return 0;
}

void
kg_order_release(struct kg_order *o)
{
	free(o->state);
	free(o->in);
	free(o->off);
	free(o->buckets);
	*o = (struct kg_order)KG_ORDER_INIT;
}

uint64_t
kg_order_swaps_formula(uint32_t P, uint32_t C)
{
	uint64_t s, k, m;

	if (C >= P)
		return 0;
	s = P - C;
	for (k = 1; (uint64_t)P > k * (C - 1) + 1; k++) {
		m = P - k * (C - 1);
		s += m - 1;
	}
	return s;
}

uint64_t
kg_order_swaps_lower_bound(uint32_t P, uint32_t C)
{
	uint64_t pairs, first, lb;

	if (C >= P)
		return 0;
	pairs = (uint64_t)P * (P - 1) / 2;
	first = (uint64_t)C * (C - 1) / 2;
	lb = (pairs - first + C - 2) / (C - 1);
	return lb > P - C ? lb : P - C;
}
