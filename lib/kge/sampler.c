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

void
kg_neg_pool_init(struct kg_neg_pool *np, uint32_t n_parts,
    const uint64_t *part_off, uint32_t k, uint32_t dim, uint32_t nthreads)
{
	uint32_t q;

	*np = (struct kg_neg_pool)KG_NEG_POOL_INIT;
	if (k == 0)
		return;
	np->n_parts = n_parts;
	np->k = k;
	np->dim = dim;
	np->nthreads = nthreads ? nthreads : 1;
	np->part_off = part_off;
	np->off = kg_xmallocarray((size_t)n_parts + 1, sizeof(*np->off));
	np->off[0] = 0;
	for (q = 0; q < n_parts; q++) {
		uint64_t rows = part_off[q + 1] - part_off[q];

		np->off[q + 1] = np->off[q] + (rows < k ? rows : k);
	}
	np->gid = kg_xmallocarray(np->off[n_parts] + 1, sizeof(*np->gid));
	/* Until an epoch chooses: each partition's first rows. */
	for (q = 0; q < n_parts; q++) {
		uint64_t i;

		for (i = np->off[q]; i < np->off[q + 1]; i++)
			np->gid[i] = part_off[q] + (i - np->off[q]);
	}
	np->rows = kg_xcalloc(np->off[n_parts] * dim + 1, sizeof(float));
	np->grad = kg_xcalloc((size_t)np->nthreads * np->off[n_parts] * dim + 1,
	    sizeof(float));
	np->sq = kg_xcalloc((size_t)np->nthreads * np->off[n_parts] + 1,
	    sizeof(float));
	np->pending = kg_xcalloc(n_parts, 1);
	np->valid = kg_xcalloc(n_parts, 1);
	np->carry_gid = kg_xcalloc(np->off[n_parts] + 1, sizeof(uint64_t));
	np->carry_grad = kg_xcalloc(np->off[n_parts] * dim + 1,
	    sizeof(float));
	np->carry_sq = kg_xcalloc(np->off[n_parts] + 1, sizeof(float));
	np->carry_pending = kg_xcalloc(n_parts, 1);
}

void
kg_neg_pool_release(struct kg_neg_pool *np)
{
	free(np->off);
	free(np->gid);
	free(np->rows);
	free(np->grad);
	free(np->sq);
	free(np->pending);
	free(np->valid);
	free(np->carry_gid);
	free(np->carry_grad);
	free(np->carry_sq);
	free(np->carry_pending);
	*np = (struct kg_neg_pool)KG_NEG_POOL_INIT;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

void
kg_neg_pool_choose(struct kg_neg_pool *np, uint32_t q, uint64_t seed,
    uint32_t epoch)
{
	uint64_t base, rows, n, i, *g;
	struct kg_rng rng;

	if (np->k == 0)
		return;
	base = np->part_off[q];
	rows = np->part_off[q + 1] - base;
	n = np->off[q + 1] - np->off[q];
	g = np->gid + np->off[q];
	np->valid[q] = 0;
	kg_neg_pool_fold(np, q);
	if (np->pending[q]) {
		memcpy(np->carry_gid + np->off[q], g, n * sizeof(*g));
		memcpy(np->carry_grad + np->off[q] * np->dim, np->grad +
		    np->off[q] * np->dim, n * np->dim * sizeof(float));
		memset(np->grad + np->off[q] * np->dim, 0, n * np->dim *
		    sizeof(float));
		memcpy(np->carry_sq + np->off[q], np->sq + np->off[q], n *
		    sizeof(float));
		memset(np->sq + np->off[q], 0, n * sizeof(float));
		np->carry_pending[q] = 1;
		np->pending[q] = 0;
	}
	if (n == rows) {
		for (i = 0; i < n; i++)
			g[i] = base + i;
		return;
	}
	kg_rng_stream(&rng, seed, KG_STREAM_NEG_POOL, epoch, q, 0, 0);
	for (i = 0; i < n; i++)
		g[i] = base + kg_rng_below(&rng, rows);
	qsort(g, n, sizeof(*g), cmp_u64);
}

void
kg_neg_pool_fill(struct kg_neg_pool *np, uint32_t q, const float *w)
{
	uint64_t i, base;
	size_t d = np->dim;

	if (np->k == 0)
		return;
	base = np->part_off[q];
	for (i = np->off[q]; i < np->off[q + 1]; i++)
		memcpy(np->rows + i * d, w + (np->gid[i] - base) * d,
		    d * sizeof(float));
	np->valid[q] = 1;
}

/* Rows of the valid partitions other than q. */
static uint64_t
others(const struct kg_neg_pool *np, uint32_t q)
{
	uint64_t n = 0;
	uint32_t p;

	for (p = 0; p < np->n_parts; p++)
		if (p != q && np->valid[p])
			n += np->part_off[p + 1] - np->part_off[p];
	return n;
}

size_t
kg_neg_pool_share(const struct kg_neg_pool *np, uint32_t q, size_t n)
{
	uint64_t out, in;

	if (np->k == 0 || (out = others(np, q)) == 0)
		return 0;
	in = np->part_off[q + 1] - np->part_off[q];
	return (size_t)llround((double)n * (double)out / (double)(out + in));
}

void
kg_neg_pool_draw(const struct kg_neg_pool *np, struct kg_rng *rng,
    uint32_t q, size_t n, uint32_t *out)
{
	uint64_t total = others(np, q);
	size_t i;

	for (i = 0; i < n; i++) {
		uint64_t x = kg_rng_below(rng, total), rows = 0;
		uint32_t p;

		/* The partition holding the x-th row outside q. */
		for (p = 0; p < np->n_parts; p++) {
			if (p == q || !np->valid[p])
				continue;
			rows = np->part_off[p + 1] - np->part_off[p];
			if (x < rows)
				break;
			x -= rows;
		}
		out[i] = (uint32_t)(np->off[p] + kg_rng_below(rng,
		    np->off[p + 1] - np->off[p]));
	}
}

void
kg_neg_pool_add_grad(struct kg_neg_pool *np, uint32_t t, uint32_t slot,
    const float *g)
{
	float *dst = np->grad + ((size_t)t * np->off[np->n_parts] + slot) *
	    np->dim, ss = 0.0f;
	uint32_t i, q = kg_neg_pool_part_of(np, slot);

#pragma omp simd reduction(+:ss)
	for (i = 0; i < np->dim; i++) {
		dst[i] += g[i];
		ss += g[i] * g[i];
	}
	np->sq[(size_t)t * np->off[np->n_parts] + slot] += ss /
	    (float)np->dim;
	if (!np->pending[q]) {
#pragma omp atomic write
		np->pending[q] = 1;
	}
}

void
kg_neg_pool_fold(struct kg_neg_pool *np, uint32_t q)
{
	uint64_t lo, hi, i, n;
	uint32_t t;

	if (np->k == 0 || np->nthreads < 2)
		return;
	n = np->off[np->n_parts] * np->dim;
	lo = q < np->n_parts ? np->off[q] * np->dim : 0;
	hi = q < np->n_parts ? np->off[q + 1] * np->dim : n;
	for (t = 1; t < np->nthreads; t++) {
		float *src = np->grad + (size_t)t * n;
		float *sq = np->sq + (size_t)t * np->off[np->n_parts];

		for (i = lo; i < hi; i++) {
			np->grad[i] += src[i];
			src[i] = 0.0f;
		}
		for (i = lo / np->dim; i < hi / np->dim; i++) {
			np->sq[i] += sq[i];
			sq[i] = 0.0f;
		}
	}
}

uint32_t
kg_neg_pool_part_of(const struct kg_neg_pool *np, uint64_t slot)
{
	uint32_t lo = 0, hi = np->n_parts - 1;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo + 1) / 2;

		if (np->off[mid] <= slot)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
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

/* The slot of key k (not 0) in an open-addressing table of mask + 1
 * slots, linear probing, 0 = empty: where k is, or the empty slot it
 * would take.  The triple set and the query weights share it. */
static uint64_t
key_slot(const uint64_t *keys, uint64_t mask, uint64_t k)
{
	uint64_t p = key_hash(k) & mask;

	while (keys[p] != 0 && keys[p] != k)
		p = (p + 1) & mask;
	return p;
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

		ts->keys[key_slot(ts->keys, ts->mask, k)] = k;
	}
	return 0;
}

int
kg_tripleset_has(const struct kg_tripleset *ts, uint64_t h, uint64_t r,
    uint64_t t)
{
	uint64_t k = triple_key(ts, h, r, t);

	return ts->keys[key_slot(ts->keys, ts->mask, k)] == k;
}

void
kg_tripleset_release(struct kg_tripleset *ts)
{
	free(ts->keys);
	memset(ts, 0, sizeof(*ts));
}

/* The key of query (e, r) on side s (0: e is the head, 1: the tail). */
static uint64_t
query_key(const struct kg_query_weights *qw, uint64_t e, uint64_t r, int s)
{
	return (e * qw->n_relations + r) * 2 + (uint64_t)s + 1;
}

/* The raw weight of (h, r, t), r < n_relations. */
static double
query_raw(const struct kg_query_weights *qw, uint64_t h, uint64_t r,
    uint64_t t)
{
	uint64_t a = key_slot(qw->keys, qw->mask, query_key(qw, h, r, 0));
	uint64_t b = key_slot(qw->keys, qw->mask, query_key(qw, t, r, 1));
	double c = (double)(qw->keys[a] ? qw->count[a] : 1) + 3.0 +
	    (double)(qw->keys[b] ? qw->count[b] : 1) + 3.0;

	return 1.0 / sqrt(c);
}

int
kg_query_weights_build(struct kg_query_weights *qw, const int32_t *hrt,
    uint64_t n, uint64_t n_entities, uint64_t n_relations)
{
	uint64_t cap = 16, i;
	double sum = 0.0;
	int s;

	memset(qw, 0, sizeof(*qw));
	qw->norm = 1.0;
	if (n_entities == 0 || n_relations == 0 ||
	    n_entities > (UINT64_MAX / 2 - 1) / n_relations) {
		kg_error("too many entities for subsampling weights");
		return -1;
	}
	while (cap < 4 * n + 16)
		cap *= 2;
	qw->keys = kg_xcalloc(cap, sizeof(*qw->keys));
	qw->count = kg_xcalloc(cap, sizeof(*qw->count));
	qw->mask = cap - 1;
	qw->n_relations = n_relations;
	for (i = 0; i < n; i++) {
		const int32_t *x = hrt + 3 * i;

		for (s = 0; s < 2; s++) {
			uint64_t k = query_key(qw, (uint64_t)x[2 * s],
			    (uint64_t)x[1], s);
			uint64_t p = key_slot(qw->keys, qw->mask, k);

			qw->keys[p] = k;
			qw->count[p]++;
		}
	}
	for (i = 0; i < n; i++)
		sum += query_raw(qw, (uint64_t)hrt[3 * i],
		    (uint64_t)hrt[3 * i + 1], (uint64_t)hrt[3 * i + 2]);
	if (n > 0)
		qw->norm = (double)n / sum;
	return 0;
}

double
kg_query_weight(const struct kg_query_weights *qw, const int32_t *x)
{
	uint64_t r = (uint64_t)x[1];

	if (r >= qw->n_relations)
		return query_raw(qw, (uint64_t)x[2], r - qw->n_relations,
		    (uint64_t)x[0]) * qw->norm;
	return query_raw(qw, (uint64_t)x[0], r, (uint64_t)x[2]) * qw->norm;
}

void
kg_query_weights_release(struct kg_query_weights *qw)
{
	free(qw->keys);
	free(qw->count);
	memset(qw, 0, sizeof(*qw));
	qw->norm = 1.0;
}
