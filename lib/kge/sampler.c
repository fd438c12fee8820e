#include "kge/sampler.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int
kg_neg_parse(const char *name, enum kg_neg_kind *kind, double *degree_frac)
{
	if (strcasecmp(name, "uniform") == 0) {
		*kind = KG_SAMPLE_UNIFORM;
		*degree_frac = 0.0;
	} else if (strcasecmp(name, "degree") == 0) {
		*kind = KG_SAMPLE_DEGREE;
		*degree_frac = 1.0;
	} else if (strcasecmp(name, "mixed") == 0) {
		*kind = KG_SAMPLE_MIXED;
		*degree_frac = 0.5;
	} else {
		kg_error("unknown negative sampler '%s' (expected uniform, "
		    "degree or mixed)", name);
		return -1;
	}
	return 0;
}

/* Vose's alias method over weights w (n > 0, sum > 0). */
static void
build_alias(const uint64_t *w, uint64_t n, float *prob, uint32_t *alias)
{
	uint32_t *small = kg_xmallocarray(n, sizeof(*small));
	uint32_t *large = kg_xmallocarray(n, sizeof(*large));
	double *p = kg_xmallocarray(n, sizeof(*p)), sum = 0.0;
	uint64_t i, ns = 0, nl = 0;

	for (i = 0; i < n; i++)
		sum += (double)w[i];
	for (i = 0; i < n; i++) {
		p[i] = (double)w[i] * (double)n / sum;
		alias[i] = (uint32_t)i;
		if (p[i] < 1.0)
			small[ns++] = (uint32_t)i;
		else
			large[nl++] = (uint32_t)i;
	}
	while (ns > 0 && nl > 0) {
		uint32_t s = small[--ns], l = large[nl - 1];

		prob[s] = (float)p[s];
		alias[s] = l;
		p[l] -= 1.0 - p[s];
		if (p[l] < 1.0) {
			nl--;
			small[ns++] = l;
		}
	}
	while (nl > 0)
		prob[large[--nl]] = 1.0f;
	while (ns > 0)
		prob[small[--ns]] = 1.0f;
	free(small);
	free(large);
	free(p);
}

int
kg_sampler_init(struct kg_sampler *s, uint64_t n, const uint64_t *degree,
    double degree_frac)
{
	uint64_t i, total = 0;

	memset(s, 0, sizeof(*s));
	if (n == 0 || n > UINT32_MAX) {
		kg_error("cannot sample negatives among %llu entities",
		    (unsigned long long)n);
		return -1;
	}
	if (!(degree_frac >= 0.0 && degree_frac <= 1.0)) {
		kg_error("degree fraction %g is not in [0, 1]", degree_frac);
		return -1;
	}
	s->n = n;
	s->degree_frac = degree_frac;
	if (degree_frac == 0.0)
		return 0;
	for (i = 0; i < n; i++)
		total += degree[i];
	if (total == 0) {
		kg_error("cannot sample negatives by degree: no edges");
		return -1;
	}
	s->prob = kg_xmallocarray(n, sizeof(*s->prob));
	s->alias = kg_xmallocarray(n, sizeof(*s->alias));
	build_alias(degree, n, s->prob, s->alias);
	return 0;
}

int
kg_sampler_set_types(struct kg_sampler *s, const int32_t *types,
    uint32_t n_types)
{
	uint64_t i, *fill;

	if (n_types == 0) {
		kg_error("entity types given but no type is defined");
		return -1;
	}
	s->n_types = n_types;
	s->type_off = kg_xcalloc((size_t)n_types + 1, sizeof(*s->type_off));
	for (i = 0; i < s->n; i++) {
		if (types[i] < -1 || types[i] >= (int64_t)n_types) {
			kg_error("entity %llu has type %d, outside [-1, %u)",
			    (unsigned long long)i, types[i], n_types);
			return -1;
		}
		if (types[i] >= 0)
			s->type_off[types[i] + 1]++;
	}
	for (i = 0; i < n_types; i++)
		s->type_off[i + 1] += s->type_off[i];
	s->type_ents = kg_xmallocarray(s->type_off[n_types] + 1,
	    sizeof(*s->type_ents));
	fill = kg_xmallocarray(n_types, sizeof(*fill));
	memcpy(fill, s->type_off, n_types * sizeof(*fill));
	for (i = 0; i < s->n; i++)
		if (types[i] >= 0)
			s->type_ents[fill[types[i]]++] = (uint32_t)i;
	free(fill);
	return 0;
}

void
kg_sampler_release(struct kg_sampler *s)
{
	free(s->prob);
	free(s->alias);
	free(s->type_off);
	free(s->type_ents);
	memset(s, 0, sizeof(*s));
}

void
kg_sampler_draw(const struct kg_sampler *s, struct kg_rng *rng,
    size_t count, uint32_t *out)
{
	size_t n_deg = (size_t)llround((double)count * s->degree_frac), i;

	for (i = 0; i < n_deg; i++) {
		uint32_t j = (uint32_t)kg_rng_below(rng, s->n);

		out[i] = kg_rng_uniform(rng) < s->prob[j] ? j : s->alias[j];
	}
	for (; i < count; i++)
		out[i] = (uint32_t)kg_rng_below(rng, s->n);
}

int
kg_sampler_draw_type(const struct kg_sampler *s, struct kg_rng *rng,
    int32_t type, size_t count, uint32_t *out)
{
	uint64_t lo, hi;
	size_t i;

	if (type < 0 || (uint32_t)type >= s->n_types)
		return -1;
	lo = s->type_off[type];
	hi = s->type_off[type + 1];
	if (hi == lo)
		return -1;
	for (i = 0; i < count; i++)
		out[i] = s->type_ents[lo + kg_rng_below(rng, hi - lo)];
	return 0;
}

static uint64_t
triple_key(const struct kg_tripleset *ts, uint64_t h, uint64_t r,
    uint64_t t)
{
	/* +1 keeps 0 free as the empty marker. */
	return (h * ts->n_relations + r) * ts->n_entities + t + 1;
}

static uint64_t
key_hash(uint64_t k)
{
	uint64_t s = k;

	return kg_splitmix64(&s);
}

int
kg_tripleset_build(struct kg_tripleset *ts, const int32_t *hrt, uint64_t n,
    uint64_t n_entities, uint64_t n_relations)
{
	uint64_t cap = 16, i;

	memset(ts, 0, sizeof(*ts));
	if (n_entities == 0 || n_relations == 0 ||
	    n_entities > UINT64_MAX / n_entities / n_relations - 1) {
		kg_error("too many entities to filter known triples");
		return -1;
	}
	while (cap < 2 * n + 16)
		cap *= 2;
	ts->keys = kg_xcalloc(cap, sizeof(*ts->keys));
	ts->mask = cap - 1;
	ts->n_entities = n_entities;
	ts->n_relations = n_relations;
	for (i = 0; i < n; i++) {
		const int32_t *x = hrt + 3 * i;
		uint64_t k = triple_key(ts, (uint64_t)x[0], (uint64_t)x[1],
		    (uint64_t)x[2]);
		uint64_t p = key_hash(k) & ts->mask;

		while (ts->keys[p] != 0 && ts->keys[p] != k)
			p = (p + 1) & ts->mask;
		ts->keys[p] = k;
	}
	return 0;
}

int
kg_tripleset_has(const struct kg_tripleset *ts, uint64_t h, uint64_t r,
    uint64_t t)
{
	uint64_t k = triple_key(ts, h, r, t), p = key_hash(k) & ts->mask;

	while (ts->keys[p] != 0) {
		if (ts->keys[p] == k)
			return 1;
		p = (p + 1) & ts->mask;
	}
	return 0;
}

void
kg_tripleset_release(struct kg_tripleset *ts)
{
	free(ts->keys);
	memset(ts, 0, sizeof(*ts));
}
