/*
 * gnn_xneg_check: checks the exchange of shared negatives between ranks
 * (lib/gnntrain/xneg.c, train_state.h's kg_gnn_xneg) under mpirun (any rank
 * count) or as a plain process, against references every rank computes
 * alone: over 300 steps with chunk counts that differ between the ranks
 * and steps (some ranks with none), each chunk's gathered rows must be
 * its source rank's candidate rows, a linear loss's gradients must come
 * back to the ranks that own the candidates, summed over every chunk on
 * every rank that used them (exact: the values are binary fractions),
 * and the sources must follow the pools' odds.  Rank 0 prints one
 * "ok - " / "not ok - " line per check; the exit status is 1 if any rank
 * saw a failure.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "core/util.h"
#include "dist/dist.h"
#include "gnntrain/train_state.h"

enum { KC = 3, DL = 4, NROWS = 11, STEPS = 300, MAXCH = 8 };

static struct kg_dist d;
static int failures;

static void
report(const char *name, int good)
{
	uint64_t bad = !good;

	kg_dist_max_u64(&d, &bad, 1);
	if (bad)
		failures++;
	if (d.rank == 0)
		printf("%s - gnn_xneg_check (%d ranks): %s\n", bad ? "not ok" :
		    "ok", d.size, name);
}

/* Rank r's chunks at step s (any rank can tell): 0 .. r + 2, with a
 * step where rank 1 has none. */
static size_t
chunks_of(int r, int s)
{
	if (r == 1 && s % 7 == 3)
		return 0;
	return (size_t)((s + r) % (r + 3)) + 1;
}

/* Rank r's candidate i at step s: a row of its h. */
static int32_t
cand_of(int r, int s, size_t i)
{
	return (int32_t)((i * 5 + (size_t)s + (size_t)r) % NROWS);
}

/* Row i of rank r's encoder output. */
static float
h_of(int r, size_t i, size_t k)
{
	return (float)(r * 1000) + (float)(i * 10 + k);
}

/* The loss's gradient on a candidate row: rank r, chunk c, slot j. */
static float
q_of(int r, size_t c, size_t j, size_t k)
{
	return 0.5f * (float)(r + 1) + (float)c + 0.25f * (float)j +
	    0.125f * (float)k;
}

int
main(int argc, char *argv[])
{
	struct kg_gnn_xneg x;
	struct kg_rng rng;
	int R, me, s, r, good_rows = 1, good_grad = 1, good_b;
	uint32_t *plan;		/* [R][MAXCH][2] every rank's src, blk */
	uint64_t *picks, total_w = 0, npick = 0;
	float h[NROWS * DL], *gh, want[NROWS * DL];
	int32_t cand[MAXCH * KC];
	size_t c, j, k, i, maxc;

	kg_setprogname(argv[0]);
	if (kg_dist_init(&d, &argc, &argv) < 0)
		return 1;
	R = d.size;
	me = d.rank;
	if (R + 2 > MAXCH) {
		fprintf(stderr, "gnn_xneg_check: at most %d ranks\n",
		    MAXCH - 2);
		kg_dist_finalize(&d);
		return 1;
	}
	maxc = (size_t)me + 3;
	/* Pools 100, 200, ...: the odds of the sources. */
	kg_gnn_xneg_init(&x, &d, maxc, KC, DL, 100 * (uint64_t)(me + 1),
	    NROWS);
	good_b = x.B == (size_t)(R + 2) * KC && x.R == (size_t)R;
	for (r = 0; r < R; r++)
		good_b &= x.pool[r] == 100 * (uint64_t)(r + 1);
	report("block size and pools gathered", good_b);
	plan = kg_xcalloc((size_t)R * MAXCH * 2, sizeof(*plan));
	picks = kg_xcalloc((size_t)R, sizeof(*picks));
	gh = kg_xmallocarray((NROWS + (size_t)R * x.B) * DL, sizeof(float));
	for (r = 0; r < R; r++)
		total_w += x.pool[r];
	for (i = 0; i < NROWS; i++)
		for (k = 0; k < DL; k++)
			h[i * DL + k] = h_of(me, i, k);

	for (s = 0; s < STEPS; s++) {
		size_t nch = chunks_of(me, s), all_have = 1;
		uint32_t mine[MAXCH * 2] = { 0 };
		uint64_t nx;

		for (r = 0; r < R; r++) {
			x.nch[r] = chunks_of(r, s);
			all_have &= x.nch[r] > 0;
		}
		for (c = 0; c < nch; c++) {
			for (j = 0; j < KC; j++)
				cand[c * KC + j] = cand_of(me, s, c * KC + j);
			kg_rng_seed(&rng, 77 + (uint64_t)s, (uint64_t)(me * 64) +
			    c);
			kg_gnn_xneg_pick(&x, c, &rng);
			mine[2 * c] = x.src[c];
			mine[2 * c + 1] = x.blk[c];
			good_rows &= x.nch[x.src[c]] > 0 &&
			    x.blk[c] < x.nch[x.src[c]];
			if (all_have)
				picks[x.src[c]]++, npick++;
		}
		kg_dist_allgather(&d, mine, sizeof(mine), plan);
		nx = kg_gnn_xneg_gather(&x, &d, h, NROWS, cand, nch, me);
		good_rows &= nx == NROWS + (uint64_t)R * x.B;
		/* Each chunk reads its source's candidates. */
		for (c = 0; c < nch; c++)
			for (j = 0; j < KC; j++) {
				int src = (int)x.src[c];
				size_t ci = (size_t)x.blk[c] * KC + j;
				int32_t row = src == me ? cand_of(me, s, c * KC +
				    j) : cand_of(src, s, ci);

				if (src == me)
					good_rows &= cand[c * KC + j] == row;
				for (k = 0; k < DL; k++)
					good_rows &= x.hx[(size_t)cand[c * KC +
					    j] * DL + k] == h_of(src,
					    (size_t)row, k);
			}
		/* The linear loss: q on each row a chunk read. */
		memset(gh, 0, nx * DL * sizeof(float));
		for (c = 0; c < nch; c++)
			for (j = 0; j < KC; j++)
				for (k = 0; k < DL; k++)
					gh[(size_t)cand[c * KC + j] * DL + k] +=
					    q_of(me, c, j, k);
		kg_gnn_xneg_scatter(&x, &d, gh, NROWS, nch);
		/* Reference: every chunk on every rank whose source is this
		 * rank adds q to the h row of the candidate it read. */
		memset(want, 0, sizeof(want));
		for (r = 0; r < R; r++)
			for (c = 0; c < chunks_of(r, s); c++) {
				const uint32_t *pl = plan + ((size_t)r * MAXCH +
				    c) * 2;

				if ((int)pl[0] != me)
					continue;
				for (j = 0; j < KC; j++) {
					size_t ci = r == me ? c * KC + j :
					    (size_t)pl[1] * KC + j;
					int32_t row = cand_of(me, s, ci);

					for (k = 0; k < DL; k++)
						want[(size_t)row * DL + k] +=
						    q_of(r, c, j, k);
				}
			}
		for (i = 0; i < NROWS * DL; i++)
			good_grad &= gh[i] == want[i];
	}
	report("each chunk reads its source rank's candidate rows", good_rows);
	report("gradients return to the candidates' ranks, summed", good_grad);
	/* Odds: rank r's share of the picks against (r + 1) / sum; the
	 * picks are independent, so 5 standard errors is a loose bound. */
	kg_dist_sum_u64(&d, picks, (size_t)R);
	kg_dist_sum_u64(&d, &npick, 1);
	{
		int good = npick > 0;

		for (r = 0; r < R; r++) {
			double p = (double)x.pool[r] / (double)total_w;
			double se = sqrt(p * (1 - p) / (double)npick);

			good &= fabs((double)picks[r] / (double)npick - p) <=
			    5 * se + 1e-12;
		}
		report("sources drawn in proportion to the pools", good);
	}
	kg_gnn_xneg_release(&x);
	free(plan);
	free(picks);
	free(gh);
	kg_dist_finalize(&d);
	return failures ? 1 : 0;
}
