/*
 * Unit tests of lib/dist without mpirun: the bucket schedule, the sparse
 * row merge, and the one-rank behaviour of every collective.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dist/dist.h"
#include "dist/dist_train.h"
#include "eval/eval.h"
#include "kge/modeldir.h"
#include "core/util.h"
#include "test.h"

/* Every property the distributed trainer relies on, for schedule s of
 * (P, R). */
static int
sched_props(const struct kg_dist_sched *sp, uint32_t P, uint32_t R)
{
	const struct kg_dist_sched s = *sp;
	uint32_t *count, round, k, busy_rounds = 0;
	uint8_t *held;
	int good = 1;
	size_t n, i;

	count = kg_xcalloc((size_t)P * P, sizeof(*count));
	held = kg_xcalloc(P, 1);
	for (round = 0; round < s.nrounds; round++) {
		uint32_t busy = 0;

		memset(held, 0, P);
		for (k = 0; k < R; k++) {
			const int32_t *h = kg_dist_sched_hold(&s, round, k);
			const uint32_t *b = kg_dist_sched_buckets(&s, round, k,
			    &n);
			int j;

			for (j = 0; j < 2; j++) {
				if (h[j] < 0)
					continue;
				if (h[j] >= (int32_t)P || held[h[j]]) {
					fprintf(stderr, "P=%u R=%u round %u: "
					    "partition %d held twice\n", P, R,
					    round, h[j]);
					good = 0;
				} else
					held[h[j]] = 1;
			}
			if (h[0] >= 0)
				busy++;
			for (i = 0; i < n; i++) {
				int32_t a = (int32_t)(b[i] / P);
				int32_t c = (int32_t)(b[i] % P);

				if ((a != h[0] && a != h[1]) ||
				    (c != h[0] && c != h[1])) {
					fprintf(stderr, "P=%u R=%u: bucket "
					    "(%d, %d) trained without its "
					    "partitions\n", P, R, a, c);
					good = 0;
				}
				count[b[i]]++;
			}
		}
		if (busy == R)
			busy_rounds++;
	}
	for (i = 0; i < (size_t)P * P; i++)
		if (count[i] != 1) {
			fprintf(stderr, "P=%u R=%u: bucket %zu trained %u "
			    "times\n", P, R, i, count[i]);
			good = 0;
		}
	/* With P = 2R, every rank works in each of the 2R - 1 rounds. */
	if (P == 2 * R && R > 1 && (s.nrounds != 2 * R - 1 ||
	    busy_rounds != s.nrounds)) {
		fprintf(stderr, "P=%u R=%u: %u rounds, %u busy\n", P, R,
		    s.nrounds, busy_rounds);
		good = 0;
	}
	free(count);
	free(held);
	return good;
}

/* The built schedule of (P, R) and two relabellings of it (partitions
 * reversed, rotated by one) have every property, and a relabelled one
 * holds and trains the renamed partitions and buckets of the built one,
 * in the same rounds, on the same ranks, in the same order. */
static int
sched_ok(uint32_t P, uint32_t R)
{
	struct kg_dist_sched s, t = KG_DIST_SCHED_INIT;
	uint32_t *perm, v, p;
	size_t i, nb;
	int good;

	if (kg_dist_sched_build(&s, P, R) < 0)
		return 0;
	good = sched_props(&s, P, R);
	perm = kg_xmallocarray(P, sizeof(*perm));
	nb = s.off[(size_t)s.nrounds * R];
	for (v = 0; v < 2 && good; v++) {
		for (p = 0; p < P; p++)
			perm[p] = v == 0 ? P - 1 - p : (p + 1) % P;
		kg_dist_sched_relabel(&t, &s, perm);
		good = sched_props(&t, P, R) && t.nrounds == s.nrounds &&
		    memcmp(t.off, s.off, ((size_t)s.nrounds * R + 1) *
		    sizeof(*s.off)) == 0;
		for (i = 0; good && i < 2 * (size_t)s.nrounds * R; i++)
			good = t.hold[i] == (s.hold[i] < 0 ? -1 :
			    (int32_t)perm[s.hold[i]]);
		for (i = 0; good && i < nb; i++)
			good = t.buckets[i] == perm[s.buckets[i] / P] * P +
			    perm[s.buckets[i] % P];
	}
	kg_dist_sched_relabel(&t, &s, NULL);
	good = good && memcmp(t.buckets, s.buckets, nb * sizeof(*s.buckets))
	    == 0 && memcmp(t.hold, s.hold, 2 * (size_t)s.nrounds * R *
	    sizeof(*s.hold)) == 0;
	free(perm);
	kg_dist_sched_release(&t);
	kg_dist_sched_release(&s);
	return good;
}

static void
sched_covers_every_bucket_once(void)
{
	static const uint32_t cases[][2] = { { 1, 1 }, { 2, 1 }, { 3, 1 },
	    { 5, 1 }, { 4, 2 }, { 5, 2 }, { 6, 2 }, { 7, 2 }, { 8, 2 },
	    { 8, 4 }, { 9, 4 }, { 12, 4 }, { 16, 3 }, { 32, 8 }, { 33, 16 } };
	size_t i;

	for (i = 0; i < KG_ARRAY_LEN(cases); i++)
		T_CHECKF(sched_ok(cases[i][0], cases[i][1]), "P=%u R=%u",
		    cases[i][0], cases[i][1]);
}

/* Each partition changes hands rarely: count partitions that a rank must
 * receive per round against the trivial bound of 2 per rank. */
static void
sched_keeps_partitions(void)
{
	struct kg_dist_sched s;
	uint32_t round, k, moves = 0, slots = 0;

	T_CHECK(kg_dist_sched_build(&s, 8, 4) == 0);
	for (round = 1; round < s.nrounds; round++)
		for (k = 0; k < 4; k++) {
			const int32_t *h = kg_dist_sched_hold(&s, round, k);
			const int32_t *p = kg_dist_sched_hold(&s, round - 1,
			    k);
			int j;

			for (j = 0; j < 2; j++) {
				slots++;
				if (h[j] != p[0] && h[j] != p[1])
					moves++;
			}
		}
	/* The circle method keeps one partition per pair each round. */
	T_CHECKF(moves * 2 <= slots, "%u of %u slots changed", moves, slots);
	kg_dist_sched_release(&s);
}

static void
sched_rejects_too_few_partitions(void)
{
	struct kg_dist_sched s;

	kg_error_mute(1);
	T_CHECK(kg_dist_sched_build(&s, 3, 2) < 0);
	T_CHECK(strstr(kg_error_last(), "at least 4 partitions") != NULL);
	T_CHECK(kg_dist_sched_build(&s, 1, 2) < 0);
	T_CHECK(kg_dist_sched_build(&s, 0, 1) < 0);
	T_CHECK(kg_dist_sched_build(&s, 7, 4) < 0);
	kg_error_mute(0);
	T_CHECK(s.hold == NULL && s.buckets == NULL);
}

/* The merge against a brute-force reference: per ID, the float sum in
 * list order (the bits must match) and the double sum (tolerance). */
static void
sparse_merge_matches_reference(void)
{
	enum { L = 4, W = 5, MAXN = 40, NID = 30 };
	struct kg_sparse_rows out = KG_SPARSE_ROWS_INIT;
	uint64_t ids[L * MAXN];
	float g[L * MAXN * W], ref[NID * W];
	uint8_t present[NID];
	size_t counts[L], total = 0, i, k, l, j;
	struct kg_rng rng;
	int trial;

	kg_rng_seed(&rng, 7, 1);
	for (trial = 0; trial < 20; trial++) {
		total = 0;
		for (k = 0; k < L; k++) {
			counts[k] = (size_t)kg_rng_below(&rng, MAXN + 1);
			for (i = 0; i < counts[k]; i++, total++) {
				ids[total] = kg_rng_below(&rng, NID) * 1000003;
				for (l = 0; l < W; l++)
					g[total * W + l] = (float)(2.0 *
					    kg_rng_uniform(&rng) - 1.0);
			}
		}
		memset(ref, 0, sizeof(ref));
		memset(present, 0, sizeof(present));
		for (i = 0; i < total; i++) {
			size_t id = (size_t)(ids[i] / 1000003);

			for (l = 0; l < W; l++)
				ref[id * W + l] = present[id] ?
				    ref[id * W + l] + g[i * W + l] :
				    g[i * W + l];
			present[id] = 1;
		}
		kg_sparse_merge(ids, g, counts, L, W, &out);
		for (i = 0, j = 0; i < NID; i++)
			j += present[i];
		T_CHECK(out.n == j);
		for (j = 0; j < out.n; j++) {
			size_t id = (size_t)(out.ids[j] / 1000003);

			T_CHECK(out.ids[j] % 1000003 == 0 && present[id]);
			T_CHECK(j == 0 || out.ids[j] > out.ids[j - 1]);
			T_CHECK(memcmp(out.g + j * W, ref + id * W,
			    W * sizeof(float)) == 0);
		}
	}
	counts[0] = 0;
	kg_sparse_merge(ids, g, counts, 1, W, &out);
	T_CHECK(out.n == 0);
	kg_sparse_rows_release(&out);
}

/* Without mpirun every collective is the identity on rank 0 of 1. */
static void
single_rank_collectives(void)
{
	struct kg_dist d;
	uint64_t u[3] = { 1, 2, 3 };
	float f[2] = { 0.1f, -3.5f }, fb[2] = { 0.1f, -3.5f };
	float buf[4] = { 1, 2, 3, 4 }, got[4] = { 0 };
	struct kg_dist_xfer x[2] = { { buf, sizeof(buf), 0, 5, 1 },
	    { got, sizeof(got), 0, 5, 0 } };
	struct kg_sparse_rows out = KG_SPARSE_ROWS_INIT;
	uint64_t ids[3] = { 9, 4, 9 };
	float g[3] = { 1.0f, 2.0f, 0.5f };
	char *text;
	int argc = 1;
	char *args[] = { (char *)"t_dist", NULL }, **argv = args;

	unsetenv("OMPI_COMM_WORLD_SIZE");
	unsetenv("PMIX_RANK");
	unsetenv("PMI_RANK");
	T_CHECK(!kg_dist_launched());
	T_CHECK(kg_dist_init(&d, &argc, &argv) == 0);
	T_CHECK(d.mpi == 0 && d.rank == 0 && d.size == 1);
	kg_dist_sum_u64(&d, u, 3);
	kg_dist_average_f32(&d, f, 2);
	kg_dist_barrier(&d);
	T_CHECK(u[0] == 1 && u[1] == 2 && u[2] == 3);
	T_CHECK(memcmp(f, fb, sizeof(f)) == 0);
	kg_dist_exchange(&d, x, 2);
	T_CHECK(memcmp(buf, got, sizeof(buf)) == 0);
	kg_dist_gather_text(&d, "abc\n", 0, &text);
	T_CHECK(text != NULL && strcmp(text, "abc\n") == 0);
	free(text);
	kg_dist_sparse_sum(&d, ids, g, 3, 1, 0, &out);
	T_CHECK(out.n == 2 && out.ids[0] == 4 && out.ids[1] == 9);
	T_CHECK(out.g[0] == 2.0f && out.g[1] == 1.5f);
	T_CHECK(d.bytes_sent == 0 && d.bytes_received == 0);
	/* The die hook never fires in a job of one. */
	setenv("KG_TEST_DIE_RANK", "0", 1);
	kg_dist_test_hook(&d, 1);
	unsetenv("KG_TEST_DIE_RANK");
	kg_sparse_rows_release(&out);
	kg_dist_finalize(&d);
	T_CHECK(kg_dist_launched() == 0);
	setenv("PMIX_RANK", "0", 1);
	T_CHECK(kg_dist_launched() == 1);
	unsetenv("PMIX_RANK");
}

/*
 * Distributed kg-eval without MPI: ranks summed over every shard of the
 * work (candidate tiles for full ranking, query blocks for sampled
 * ranking) equal the ranks of one process exactly.
 */
static int
shares_equal(const struct kg_modeldir *md, const struct kg_triples *test,
    const struct kg_filter *f, uint64_t neg, uint32_t nshares)
{
	struct kg_eval_opts o = KG_EVAL_OPTS_INIT;
	struct kg_eval_ranks one, part, sum;
	uint32_t k;
	uint64_t i;
	int s, bad = 0;

	o.filter = f;
	o.threads = 2;
	o.batch = 37;
	o.neg_sample = neg;
	if (kg_eval_rank(md, test, &o, &one) < 0)
		return -1;
	memset(&sum, 0, sizeof(sum));
	for (k = 0; k < nshares; k++) {
		o.shard = (int)k;
		o.nshards = (int)nshares;
		if (kg_eval_rank(md, test, &o, &part) < 0)
			return -1;
		if (k == 0) {
			sum = part;
			continue;
		}
		for (s = 0; s < 2; s++)
			for (i = 0; i < test->n; i++) {
				sum.opt[s][i] += part.opt[s][i];
				sum.pess[s][i] += part.pess[s][i];
			}
		kg_eval_ranks_release(&part);
	}
	for (s = 0; s < 2; s++)
		for (i = 0; i < test->n; i++)
			bad += sum.opt[s][i] != one.opt[s][i] ||
			    sum.pess[s][i] != one.pess[s][i];
	kg_eval_ranks_release(&one);
	kg_eval_ranks_release(&sum);
	return bad;
}

static void
eval_shards_sum_to_one_process(void)
{
	enum { NE = 2600, NR = 5, NT = 300, D = 16 };
	static const enum kg_model_kind kinds[] = { KG_MODEL_DISTMULT,
	    KG_MODEL_TRANSE_L2, KG_MODEL_COMPLEX, KG_MODEL_ROTATE };
	struct kg_triples sets[3];
	struct kg_filter f = KG_FILTER_INIT;
	int32_t *hrt = kg_xmallocarray(3 * 3 * NT, sizeof(int32_t));
	float *ent = kg_xmallocarray((size_t)NE * D, sizeof(float));
	float *rel = kg_xmallocarray((size_t)NR * D, sizeof(float));
	struct kg_rng rng;
	size_t k, i;

	kg_rng_seed(&rng, 5, 9);
	for (i = 0; i < 3 * NT; i++) {
		hrt[3 * i] = (int32_t)kg_rng_below(&rng, NE);
		hrt[3 * i + 1] = (int32_t)kg_rng_below(&rng, NR);
		/* Some tails near the heads, so filtering hits tiles. */
		hrt[3 * i + 2] = (int32_t)((hrt[3 * i] + (int32_t)
		    kg_rng_below(&rng, 50)) % NE);
	}
	for (i = 0; i < 3; i++) {
		sets[i].n = NT;
		sets[i].hrt = hrt + 3 * NT * i;
	}
	kg_filter_build(&f, sets, 3);
	for (k = 0; k < KG_ARRAY_LEN(kinds); k++) {
		struct kg_modeldir md = KG_MODELDIR_INIT;

		T_CHECK(kg_model_init(&md.model, kinds[k], D, 0, 12.0f) == 0);
		md.n_entities = NE;
		md.n_relations = NR;
		md.n_rel_rows = NR;
		for (i = 0; i < (size_t)NE * D; i++)
			ent[i] = (float)(2.0 * kg_rng_uniform(&rng) - 1.0);
		/* Duplicate rows make exact ties across tiles. */
		memcpy(ent + 2000 * D, ent + 7 * D, D * sizeof(float));
		for (i = 0; i < (size_t)NR * md.model.rel_width; i++)
			rel[i] = (float)(2.0 * kg_rng_uniform(&rng) - 1.0);
		md.entities = ent;
		md.relations = rel;
		T_CHECKF(shares_equal(&md, &sets[2], &f, 0, 2) == 0,
		    "%s full, 2 shares", kg_model_name(kinds[k]));
		T_CHECKF(shares_equal(&md, &sets[2], NULL, 0, 3) == 0,
		    "%s raw, 3 shares", kg_model_name(kinds[k]));
		T_CHECKF(shares_equal(&md, &sets[2], &f, 0, 5) == 0,
		    "%s full, 5 shares (some empty)", kg_model_name(kinds[k]));
		T_CHECKF(shares_equal(&md, &sets[2], &f, 100, 3) == 0,
		    "%s sampled, 3 shares", kg_model_name(kinds[k]));
	}
	/* A NaN true score ranks last once, not once per shard. */
	{
		struct kg_modeldir md = KG_MODELDIR_INIT;

		T_CHECK(kg_model_init(&md.model, KG_MODEL_DISTMULT, D, 0,
		    12.0f) == 0);
		md.n_entities = NE;
		md.n_relations = NR;
		md.n_rel_rows = NR;
		md.entities = ent;
		md.relations = rel;
		ent[(size_t)sets[2].hrt[2] * D] = NAN;
		T_CHECK(shares_equal(&md, &sets[2], &f, 0, 3) == 0);
	}
	kg_filter_release(&f);
	free(hrt);
	free(ent);
	free(rel);
}

/*
 * A relation merge of 3 ranks, by hand: row 0 changed by one rank (+0.6),
 * row 1 by all three (+0.3, +0.6, -0.3), row 2 by none.  Rows divides
 * each row's summed change by the ranks that changed it: row 0 moves as
 * far as its one rank moved it, which the mean over all ranks (the
 * default before) shrank to a third.
 */
static void
rel_merge_divides_by_ranks_that_changed(void)
{
	const float base0[6] = { 1, 2, 3, 4, 5, 6 };
	float r0[6] = { 1.6f, 2.6f, 3.3f, 4, 5, 6 };	/* rank 0's copy */
	float r1[6] = { 1, 2, 3.6f, 4, 5, 6 };
	float r2[6] = { 1, 2, 2.7f, 4, 5, 6 };
	const float *ranks[3] = { r0, r1, r2 };
	double changed[3] = { 0, 0, 0 }, c[3], sum[6] = { 0 };
	const double want[3][6] = {
		{ 1.6, 2.6, 3.2, 4, 5, 6 },	/* rows */
		{ 1.2, 2.2, 3.2, 4, 5, 6 },	/* mean */
		{ 1.6, 2.6, 3.6, 4, 5, 6 },	/* sum */
	};
	const int how[3] = { KG_REL_MERGE_ROWS, KG_REL_MERGE_MEAN,
	    KG_REL_MERGE_SUM };
	int k, i, m;

	for (k = 0; k < 3; k++) {
		kg_rel_rows_changed(ranks[k], base0, 3, 2, c);
		for (i = 0; i < 3; i++)
			changed[i] += c[i];
		for (i = 0; i < 6; i++)
			sum[i] += (double)ranks[k][i] - (double)base0[i];
	}
	T_NEAR(changed[0], 1.0, 0.0);
	T_NEAR(changed[1], 3.0, 0.0);
	T_NEAR(changed[2], 0.0, 0.0);
	for (m = 0; m < 3; m++) {
		float x[6], base[6];

		memcpy(x, r0, sizeof(x));
		memcpy(base, base0, sizeof(base));
		kg_rel_merge_apply(x, base, sum, changed, 3, 2, how[m], 3);
		for (i = 0; i < 6; i++) {
			T_NEAR(x[i], want[m][i], 1e-6);
			T_NEAR(base[i], want[m][i], 1e-6);
		}
	}
}

int
main(void)
{
	T_RUN(sched_covers_every_bucket_once);
	T_RUN(sched_keeps_partitions);
	T_RUN(sched_rejects_too_few_partitions);
	T_RUN(sparse_merge_matches_reference);
	T_RUN(rel_merge_divides_by_ranks_that_changed);
	T_RUN(single_rank_collectives);
	T_RUN(eval_shards_sum_to_one_process);
	return T_DONE();
}
