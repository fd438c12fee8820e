#include "core/rng.h"

#include <math.h>

uint64_t
kg_stream_id(enum kg_stream purpose, uint64_t i0, uint64_t i1, uint64_t i2,
    uint64_t i3)
{
	const uint64_t f[4] = { i0, i1, i2, i3 };
	uint64_t st = (uint64_t)purpose, h;
	int k;

	/* The purpose is mixed alone first: XOR-ing a small index into a
	 * small purpose number would make (purpose 4, index 1) equal
	 * (purpose 5, index 0).  Then each field goes through a full mix
	 * before the next is added, so the ID is a hash of the whole tuple,
	 * not of a packed word. */
	h = kg_splitmix64(&st);
	for (k = 0; k < 4; k++) {
		st = h ^ f[k];
		h = kg_splitmix64(&st) + (uint64_t)(k + 1);
	}
	st = h;
	return kg_splitmix64(&st);
}

void
kg_rng_stream(struct kg_rng *r, uint64_t seed, enum kg_stream purpose,
    uint64_t i0, uint64_t i1, uint64_t i2, uint64_t i3)
{
	kg_rng_seed(r, seed, kg_stream_id(purpose, i0, i1, i2, i3));
}

void
kg_rng_seed(struct kg_rng *r, uint64_t seed, uint64_t stream)
{
	uint64_t sm = seed ^ (stream * 0xd1342543de82ef95ULL);
	int i;

	for (i = 0; i < 4; i++)
		r->s[i] = kg_splitmix64(&sm);
	if ((r->s[0] | r->s[1] | r->s[2] | r->s[3]) == 0)
		r->s[0] = 1;
}

double
kg_rng_normal(struct kg_rng *r)
{
	double u1 = kg_rng_uniform(r), u2 = kg_rng_uniform(r);

	if (u1 < 1e-300)
		u1 = 1e-300;
	return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}
