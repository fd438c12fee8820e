/*
 * Negative sampling: uniform and degree-proportional draws match their
 * distributions (chi-square against a generous bound), the mixed sampler
 * draws the right share by degree, type-restricted draws stay in the
 * type, the known-triple set answers exactly, and RotatE's subsampling
 * weights match counting by hand.
 */
#include "kge/sampler.h"

#include <math.h>

#include "core/util.h"
#include "test.h"

#define NE 10
#define DRAWS 200000

/* Pearson chi-square of counts against expected probabilities. */
static double
chi2(const uint64_t *cnt, const double *p, size_t n, uint64_t total)
{
	double s = 0.0;
	size_t i;

	for (i = 0; i < n; i++) {
		double e = p[i] * (double)total;

		if (e > 0)
			s += ((double)cnt[i] - e) * ((double)cnt[i] - e) / e;
		else if (cnt[i] > 0)
			return INFINITY;
	}
	return s;
}

static void
t_distributions(void)
{
	uint64_t deg[NE] = { 1, 2, 3, 0, 10, 4, 4, 1, 25, 50 }, cnt[NE];
	double p[NE], sum = 100.0;
	struct kg_sampler s = KG_SAMPLER_INIT;
	struct kg_rng rng;
	uint32_t *ids = kg_xmallocarray(DRAWS, sizeof(*ids));
	size_t i;

	kg_rng_seed(&rng, 9, 0);
	/* Degree-proportional; 9 degrees of freedom, 0.999 quantile 27.9. */
	T_CHECK(kg_sampler_init(&s, NE, deg, 1.0) == 0);
	kg_sampler_draw(&s, &rng, DRAWS, ids);
	memset(cnt, 0, sizeof(cnt));
	for (i = 0; i < DRAWS; i++)
		cnt[ids[i]]++;
	for (i = 0; i < NE; i++)
		p[i] = (double)deg[i] / sum;
	T_CHECK(cnt[3] == 0);
	T_CHECKF(chi2(cnt, p, NE, DRAWS) < 27.9, "chi2 %g",
	    chi2(cnt, p, NE, DRAWS));
	kg_sampler_release(&s);
	/* Uniform. */
	T_CHECK(kg_sampler_init(&s, NE, NULL, 0.0) == 0);
	kg_sampler_draw(&s, &rng, DRAWS, ids);
	memset(cnt, 0, sizeof(cnt));
	for (i = 0; i < DRAWS; i++)
		cnt[ids[i]]++;
	for (i = 0; i < NE; i++)
		p[i] = 1.0 / NE;
	T_CHECKF(chi2(cnt, p, NE, DRAWS) < 27.9, "chi2 %g",
	    chi2(cnt, p, NE, DRAWS));
	kg_sampler_release(&s);
	/* Mixed: the first half by degree (never entity 3), the rest
	 * uniform. */
	T_CHECK(kg_sampler_init(&s, NE, deg, 0.5) == 0);
	kg_sampler_draw(&s, &rng, DRAWS, ids);
	memset(cnt, 0, sizeof(cnt));
	for (i = DRAWS / 2; i < DRAWS; i++)
		cnt[ids[i]]++;
	T_CHECKF(chi2(cnt, p, NE, DRAWS / 2) < 27.9, "chi2 %g",
	    chi2(cnt, p, NE, DRAWS / 2));
	for (i = 0; i < DRAWS / 2; i++)
		T_CHECK(ids[i] != 3);
	kg_sampler_release(&s);
	free(ids);
}

static void
t_types(void)
{
	int32_t types[NE] = { 0, 1, 0, -1, 2, 2, 0, 1, 0, 2 };
	struct kg_sampler s = KG_SAMPLER_INIT;
	struct kg_rng rng;
	uint32_t ids[1000];
	size_t i;

	kg_rng_seed(&rng, 1, 1);
	T_CHECK(kg_sampler_init(&s, NE, NULL, 0.0) == 0);
	T_CHECK(kg_sampler_set_types(&s, types, 4) == 0);
	T_CHECK(kg_sampler_draw_type(&s, &rng, 2, 1000, ids) == 0);
	for (i = 0; i < 1000; i++)
		T_CHECK(types[ids[i]] == 2);
	T_CHECK(kg_sampler_draw_type(&s, &rng, 3, 10, ids) < 0);
	kg_sampler_release(&s);
	types[0] = 7;
	kg_error_mute(1);
	T_CHECK(kg_sampler_init(&s, NE, NULL, 0.0) == 0);
	T_CHECK(kg_sampler_set_types(&s, types, 4) < 0);
	kg_sampler_release(&s);
	T_CHECK(kg_sampler_init(&s, NE, (const uint64_t[NE]){ 0 }, 1.0) < 0);
	T_CHECK(strstr(kg_error_last(), "no edges") != NULL);
	kg_error_mute(0);
}

static void
t_tripleset(void)
{
	int32_t hrt[] = { 0, 0, 1, 1, 2, 3, 5, 1, 5, 0, 0, 1 };
	struct kg_tripleset ts = KG_TRIPLESET_INIT;
	uint64_t h, r, t, hits = 0;

	T_CHECK(kg_tripleset_build(&ts, hrt, 4, 6, 3) == 0);
	for (h = 0; h < 6; h++)
		for (r = 0; r < 3; r++)
			for (t = 0; t < 6; t++)
				hits += (uint64_t)kg_tripleset_has(&ts, h, r, t);
	T_CHECK(hits == 3);
	T_CHECK(kg_tripleset_has(&ts, 5, 1, 5));
	T_CHECK(!kg_tripleset_has(&ts, 1, 0, 0));
	kg_tripleset_release(&ts);
}

/* RotatE's weights against counting by hand: every triple's two query
 * counts (plus 3 each), 1 / sqrt of their sum, divided by the mean. */
static void
t_query_weights(void)
{
	enum { QE = 7, NR = 3, N = 9 };
	int32_t hrt[3 * N] = { 0, 0, 1, 0, 0, 2, 0, 0, 3, 4, 1, 1, 5, 1, 1,
	    6, 1, 1, 2, 2, 6, 2, 0, 1, 3, 2, 3 };
	struct kg_query_weights qw = KG_QUERY_WEIGHTS_INIT;
	double raw[N], mean = 0.0, w;
	int32_t x[3];
	size_t i, j;

	T_CHECK(kg_query_weights_build(&qw, hrt, N, QE, NR) == 0);
	for (i = 0; i < N; i++) {
		uint32_t ch = 3, ct = 3;

		for (j = 0; j < N; j++) {
			ch += hrt[3 * j] == hrt[3 * i] &&
			    hrt[3 * j + 1] == hrt[3 * i + 1];
			ct += hrt[3 * j + 2] == hrt[3 * i + 2] &&
			    hrt[3 * j + 1] == hrt[3 * i + 1];
		}
		raw[i] = 1.0 / sqrt((double)(ch + ct));
		mean += raw[i] / N;
	}
	for (i = 0; i < N; i++) {
		w = kg_query_weight(&qw, hrt + 3 * i);
		T_NEAR(w, raw[i] / mean, 1e-12);
		/* The reciprocal copy weighs the same. */
		x[0] = hrt[3 * i + 2];
		x[1] = hrt[3 * i + 1] + NR;
		x[2] = hrt[3 * i];
		T_NEAR(kg_query_weight(&qw, x), w, 1e-15);
	}
	/* (4, 1, 1) shares its tail query with two more triples: counts
	 * 4 + 6; (2, 2, 6) is alone in both: 4 + 4. */
	T_CHECK(kg_query_weight(&qw, hrt + 3 * 3) < kg_query_weight(&qw,
	    hrt + 3 * 6));
	/* Unseen queries count as seen once: (4, 2, 5) weighs like a
	 * triple whose two queries are its own. */
	x[0] = 4;
	x[1] = 2;
	x[2] = 5;
	T_NEAR(kg_query_weight(&qw, x), kg_query_weight(&qw, hrt + 3 * 6),
	    1e-15);
	kg_query_weights_release(&qw);
	kg_error_mute(1);
	T_CHECK(kg_query_weights_build(&qw, hrt, N, UINT64_MAX / 2, NR) < 0);
	kg_error_mute(0);
}

int
main(void)
{
	T_RUN(t_distributions);
	T_RUN(t_types);
	T_RUN(t_tripleset);
	T_RUN(t_query_weights);
	return T_DONE();
}
