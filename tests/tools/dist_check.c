/*
 * dist_check: checks lib/dist's collectives and transfers under mpirun
 * (any rank count) against references every rank can compute alone.
 * Rank 0 prints one "ok - " / "not ok - " line per check; the exit
 * status is 1 if any rank saw a failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist/dist.h"
#include "core/util.h"

static struct kg_dist d;
static int failures;

/* Every rank's verdict; rank 0 reports. */
static void
report(const char *name, int good)
{
	uint64_t bad = !good;

	kg_dist_max_u64(&d, &bad, 1);
	if (bad)
		failures++;
	if (d.rank == 0)
		printf("%s - dist_check (%d ranks): %s\n", bad ? "not ok" : "ok",
		    d.size, name);
}

/* The sum of n rows (IDs below 40) by ID, ascending, each added in the
 * order given, into out (its ids and g allocated here). */
static void
brute_sum(const uint64_t *ids, const float *g, size_t n, size_t w,
    struct kg_sparse_rows *out)
{
	uint64_t id;
	size_t i, l, k = 0;
	int seen;

	out->ids = kg_xmallocarray(n ? n : 1, sizeof(*out->ids));
	out->g = kg_xmallocarray((n ? n : 1) * w, sizeof(*out->g));
	out->cap = n;
	out->w = w;
	for (id = 0; id < 40; id++) {
		seen = 0;
		for (i = 0; i < n; i++) {
			if (ids[i] != id)
				continue;
			if (!seen) {
				out->ids[k] = id;
				memcpy(out->g + k * w, g + i * w,
				    w * sizeof(float));
				seen = 1;
			} else
				for (l = 0; l < w; l++)
					out->g[k * w + l] += g[i * w + l];
		}
		k += (size_t)seen;
	}
	out->n = k;
}

/* The sparse rows rank r contributes (seeded by r, so any rank can
 * rebuild them). */
static size_t
rows_of(int r, uint64_t *ids, float *g, size_t w)
{
	struct kg_rng rng;
	size_t n, i, l;

	kg_rng_seed(&rng, 11, (uint64_t)r);
	n = (size_t)kg_rng_below(&rng, 50);
	for (i = 0; i < n; i++) {
		ids[i] = kg_rng_below(&rng, 40);
		for (l = 0; l < w; l++)
			g[i * w + l] = (float)(kg_rng_uniform(&rng) - 0.5);
	}
	return n;
}

int
main(int argc, char *argv[])
{
	enum { W = 3, MAXR = 64, XN = (1 << 20) + 13 };
	uint64_t u[4], *all_ids;
	float f[3], *all_g;
	size_t *counts, total = 0, i;
	struct kg_sparse_rows got = KG_SPARSE_ROWS_INIT, want =
	    KG_SPARSE_ROWS_INIT;
	char *text, line[32], *expect;
	unsigned char *sb, *rb, *self_s, *self_r;
	struct kg_dist_xfer x[4];
	int r, good, n, prev, next;

	kg_setprogname(argv[0]);
	if (kg_dist_init(&d, &argc, &argv) < 0)
		return 1;
	n = d.size;

	for (i = 0; i < 4; i++)
		u[i] = (uint64_t)d.rank * 1000 + i;
	kg_dist_sum_u64(&d, u, 4);
	good = 1;
	for (i = 0; i < 4; i++)
		good &= u[i] == (uint64_t)(1000 * n * (n - 1) / 2) +
		    (uint64_t)n * i;
	report("sum of uint64", good);

	f[0] = (float)d.rank;
	f[1] = 0.25f;
	f[2] = (float)(d.rank % 2);
	kg_dist_average_f32(&d, f, 3);
	report("average of float32", f[0] == (float)((n - 1) / 2.0) &&
	    f[1] == 0.25f && f[2] == (float)((n / 2) / (double)n));

	u[0] = (uint64_t)d.rank;
	kg_dist_max_u64(&d, u, 1);
	report("maximum", u[0] == (uint64_t)(n - 1));

	u[0] = d.rank == 0 ? 42 : 0;
	kg_dist_bcast(&d, u, sizeof(u[0]), 0);
	report("broadcast", u[0] == 42);

	/* A ring of 1 MiB messages plus one to this rank itself. */
	sb = kg_xmalloc(XN);
	rb = kg_xcalloc(XN, 1);
	self_s = kg_xmalloc(100);
	self_r = kg_xcalloc(100, 1);
	for (i = 0; i < XN; i++)
		sb[i] = (unsigned char)(i * 7 + (size_t)d.rank);
	for (i = 0; i < 100; i++)
		self_s[i] = (unsigned char)(i + 3);
	next = (d.rank + 1) % n;
	prev = (d.rank + n - 1) % n;
	x[0] = (struct kg_dist_xfer){ sb, XN, next, 7, 1 };
	x[1] = (struct kg_dist_xfer){ rb, XN, prev, 7, 0 };
	x[2] = (struct kg_dist_xfer){ self_s, 100, d.rank, 9, 1 };
	x[3] = (struct kg_dist_xfer){ self_r, 100, d.rank, 9, 0 };
	kg_dist_exchange(&d, x, 4);
	good = memcmp(self_s, self_r, 100) == 0;
	for (i = 0; i < XN; i++)
		good &= rb[i] == (unsigned char)(i * 7 + (size_t)prev);
	report("point-to-point ring", good);
	/* The exchange alone: the ring's message each way (the one to
	 * itself is a copy, not traffic).  A plain process sends nothing;
	 * one rank under mpirun neither (no peer). */
	{
		uint64_t sent = d.bytes_sent, recvd = d.bytes_received;
		uint64_t msgs = d.messages;

		d.bytes_sent = d.bytes_received = 0;
		d.messages = 0;
		kg_dist_exchange(&d, x, 4);
		report("bytes counted: one ring message each way, none to self",
		    n == 1 ? d.bytes_sent == 0 && d.bytes_received == 0 &&
		    d.messages == 0 : d.bytes_sent == XN &&
		    d.bytes_received == XN && d.messages == 1);
		d.bytes_sent += sent;
		d.bytes_received += recvd;
		d.messages += msgs;
	}

	/* Sparse rows: the distributed sum against a brute-force sum of
	 * every rank's rows rebuilt locally (each ID once, ascending, its
	 * rows added in rank order, then in order within a rank, as dist.h
	 * promises); the bits must match.  The reference is written here,
	 * not kg_sparse_merge, which kg_dist_sparse_sum itself calls. */
	all_ids = kg_xmallocarray((size_t)n * MAXR, sizeof(*all_ids));
	all_g = kg_xmallocarray((size_t)n * MAXR * W, sizeof(*all_g));
	counts = kg_xmallocarray((size_t)n, sizeof(*counts));
	for (r = 0; r < n; r++) {
		counts[r] = rows_of(r, all_ids + total, all_g + total * W, W);
		total += counts[r];
	}
	brute_sum(all_ids, all_g, total, W, &want);
	report("the brute-force reference has rows to compare",
	    want.n > 0 && total > want.n);
	{
		size_t off = 0;

		for (r = 0; r < d.rank; r++)
			off += counts[r];
		kg_dist_sparse_sum(&d, all_ids + off, all_g + off * W,
		    counts[d.rank], W, 0, &got);
		report("sparse row sum equals the brute-force sum",
		    got.n == want.n && memcmp(got.ids, want.ids, got.n *
		    sizeof(uint64_t)) == 0 && memcmp(got.g, want.g, got.n * W *
		    sizeof(float)) == 0);
		kg_dist_sparse_sum(&d, all_ids + off, all_g + off * W,
		    counts[d.rank], W, MAXR, &got);
		report("sparse row sum in fixed slots, the same",
		    got.n == want.n && memcmp(got.ids, want.ids, got.n *
		    sizeof(uint64_t)) == 0 && memcmp(got.g, want.g, got.n * W *
		    sizeof(float)) == 0);
	}

	/* Allgather: 3 words of each rank in rank order. */
	{
		uint64_t mine[3], *every = kg_xmallocarray((size_t)n * 3,
		    sizeof(*every));
		float *blocks = kg_xmallocarray((size_t)n * 5, sizeof(float));
		float got5[5];

		for (i = 0; i < 3; i++)
			mine[i] = (uint64_t)d.rank * 100 + i;
		kg_dist_allgather(&d, mine, sizeof(mine), every);
		good = 1;
		for (r = 0; r < n; r++)
			for (i = 0; i < 3; i++)
				good &= every[r * 3 + i] == (uint64_t)r * 100 + i;
		report("allgather in rank order", good);
		/* Reduce-scatter: rank r's block k holds r + k / 8 + i. */
		for (r = 0; r < n; r++)
			for (i = 0; i < 5; i++)
				blocks[r * 5 + i] = (float)d.rank +
				    (float)r / 8.0f + (float)i;
		kg_dist_reduce_scatter_f32(&d, blocks, 5, got5);
		good = 1;
		for (i = 0; i < 5; i++)
			good &= got5[i] == (float)(n * (n - 1) / 2) +
			    (float)n * ((float)d.rank / 8.0f + (float)i);
		report("reduce-scatter sums each rank's block", good);
		free(every);
		free(blocks);
	}

	snprintf(line, sizeof(line), "rank %d\n", d.rank);
	kg_dist_gather_text(&d, line, 0, &text);
	if (d.rank == 0) {
		expect = kg_xstrdup("");
		for (r = 0; r < n; r++) {
			char *t = kg_xasprintf("%srank %d\n", expect, r);

			free(expect);
			expect = t;
		}
		good = text != NULL && strcmp(text, expect) == 0;
		free(expect);
	} else
		good = text == NULL;
	report("text gathered in rank order", good);

	free(text);
	free(sb);
	free(rb);
	free(self_s);
	free(self_r);
	free(all_ids);
	free(all_g);
	free(counts);
	kg_sparse_rows_release(&got);
	kg_sparse_rows_release(&want);
	kg_dist_finalize(&d);
	return failures ? 1 : 0;
}
