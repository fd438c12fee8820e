/*
 * t_gnn_attr: the attribute layer's forward and backward passes against
 * a plain serial loop, bit for bit, at widths that take every path of
 * the blocked kernels (a text vector over several row blocks and a
 * partial one, node rows of a full 64-column chunk plus a remainder),
 * with index attributes beside it, nodes on their learned rows, feature
 * and learned rows mapped (frow, lrow), and 1, 2 and 3 threads.  The
 * reference adds every product in the order the layer's contract (one
 * product and one sum a term, nodes in order, then attributes, then
 * values) fixes, so any change of order or arithmetic shows.
 */
#include <omp.h>
#include <stdint.h>
#include <string.h>

#include "gnn/gnn.h"
#include "test.h"
#include "core/util.h"

#define NE 300		/* feature rows, learned rows */
#define NV 257		/* nodes of the pass */
#define TW 40		/* text width: two blocks of 16 and one of 8 */
#define CW 6		/* index slots */
#define D0 72		/* one chunk of 64 columns and 8 more */

static float tvec[NE * TW];
static uint8_t thas[NE], chas[NE];
static int64_t coff[NE + 1];
static int32_t cidx[NE * 3], frow[NV], lrow[NV];

static void
make_features(struct kg_features *f)
{
	struct kg_rng r;
	uint64_t e, k;

	kg_rng_seed(&r, 17, 1);
	for (e = 0; e < NE * TW; e++)
		tvec[e] = (float)(kg_rng_uniform(&r) * 2.0 - 1.0);
	for (e = 0; e < NE; e++) {
		uint64_t m = kg_rng_below(&r, 4);

		thas[e] = kg_rng_below(&r, 3) != 0;
		coff[e + 1] = coff[e] + (int64_t)m;
		for (k = 0; k < m; k++)
			cidx[coff[e] + (int64_t)k] = (int32_t)kg_rng_below(&r,
			    CW);
		chas[e] = m > 0;
	}
	for (e = 0; e < NV; e++) {
		frow[e] = (int32_t)kg_rng_below(&r, NE);
		lrow[e] = (int32_t)kg_rng_below(&r, NE);
	}
	memset(f, 0, sizeof(*f));
	f->n = NE;
	f->n_attrs = 2;
	f->attrs = kg_xcalloc(2, sizeof(*f->attrs));
	f->attrs[0].name = kg_xstrdup("cat");
	f->attrs[0].width = CW;
	f->attrs[0].off = coff;
	f->attrs[0].idx = cidx;
	f->attrs[0].has = chas;
	f->attrs[1].name = kg_xstrdup("txt");
	f->attrs[1].text = 1;
	f->attrs[1].width = TW;
	f->attrs[1].vec = tvec;
	f->attrs[1].has = thas;
}

/* The layer's output rows by the serial loop. */
static void
ref_forward(const struct kg_gnn *m, float *out)
{
	const float *C = m->w + m->attr_off[0], *T = m->w + m->attr_off[1];
	const float *L = kg_gnn_learned_rows(m);
	uint64_t i, j, c;
	int64_t k;

	for (i = 0; i < NV; i++) {
		uint64_t e = (uint64_t)frow[i];
		float *o = out + i * D0, sc;
		size_t cnt = 0;

		memset(o, 0, D0 * sizeof(float));
		if (chas[e])
			for (k = coff[e]; k < coff[e + 1]; k++, cnt++)
				for (c = 0; c < D0; c++)
					o[c] += 1.0f * C[(size_t)cidx[k] * D0 +
					    c];
		if (thas[e]) {
			for (j = 0; j < TW; j++)
				for (c = 0; c < D0; c++)
					o[c] += tvec[e * TW + j] * T[j * D0 + c];
			cnt++;
		}
		if (cnt == 0) {
			memcpy(o, L + (size_t)lrow[i] * D0, D0 * sizeof(float));
			continue;
		}
		sc = 1.0f / (float)cnt;
		for (c = 0; c < D0; c++)
			o[c] *= sc;
	}
}

/* The parameter gradients of dout by the serial loop, added to grad. */
static void
ref_backward(const struct kg_gnn *m, const float *dout, float *grad)
{
	uint64_t i, j, c;
	int64_t k;

	for (i = 0; i < NV; i++) {
		uint64_t e = (uint64_t)frow[i];
		const float *g = dout + i * D0;
		size_t cnt = (size_t)(chas[e] ? coff[e + 1] - coff[e] : 0) +
		    thas[e];
		float sc;

		if (cnt == 0) {
			for (c = 0; c < D0; c++)
				grad[m->learned + (size_t)lrow[i] * D0 + c] +=
				    1.0f * g[c];
			continue;
		}
		sc = 1.0f / (float)cnt;
		if (chas[e])
			for (k = coff[e]; k < coff[e + 1]; k++)
				for (c = 0; c < D0; c++)
					grad[m->attr_off[0] +
					    (size_t)cidx[k] * D0 + c] +=
					    sc * g[c];
		if (thas[e])
			for (j = 0; j < TW; j++) {
				float cf = sc * tvec[e * TW + j];

				for (c = 0; c < D0; c++)
					grad[m->attr_off[1] + j * D0 + c] +=
					    cf * g[c];
			}
	}
}

static void
attr_layer_bits(void)
{
	struct kg_features f;
	struct kg_gnn m = KG_GNN_INIT;
	struct kg_gnn_config c;
	struct kg_gnn_graph g = KG_GNN_GRAPH_INIT;
	int32_t hrt[3] = { 0, 0, 1 };
	size_t no = (size_t)NV * D0, k, nz = 0, learned = 0;
	float *ref = kg_xmallocarray(no, sizeof(float));
	float *dout = kg_xmallocarray(no, sizeof(float));
	float *g0, *rgrad, *grad;
	int nt, saved = omp_get_max_threads();

	make_features(&f);
	memset(&c, 0, sizeof(c));
	c.encoder = KG_GNN_RGCN;
	c.decomp = KG_GNN_BASIS;
	c.n_layers = 0;
	c.dims[0] = D0;
	c.n_bases = 1;
	c.n_relations = 1;
	c.n_learned = NE;
	T_CHECK(kg_gnn_init(&m, &c, &f, 9) == 0);
	kg_gnn_graph_build(&g, NV, 1, hrt, 1);
	for (k = 0; k < no; k++)
		dout[k] = (float)((k * 7919) % 1000) * 1e-3f - 0.5f;
	g0 = kg_xmallocarray(m.n_params, sizeof(float));
	rgrad = kg_xmallocarray(m.n_params, sizeof(float));
	grad = kg_xmallocarray(m.n_params, sizeof(float));
	/* A gradient already holding terms: the passes add to it. */
	for (k = 0; k < m.n_params; k++)
		g0[k] = (float)k * 1e-4f;
	memcpy(rgrad, g0, m.n_params * sizeof(float));
	ref_backward(&m, dout, rgrad);
	for (k = 0; k < m.n_params; k++)
		nz += rgrad[k] != g0[k];
	for (k = 0; k < NV; k++)
		learned += !thas[frow[k]] && !chas[frow[k]];
	T_CHECKF(learned > 0 && learned < NV / 2, "%zu nodes on learned rows",
	    learned);
	ref_forward(&m, ref);
	for (nt = 1; nt <= 3; nt++) {
		struct kg_gnn_state s = KG_GNN_STATE_INIT;

		omp_set_num_threads(nt);
		memcpy(grad, g0, m.n_params * sizeof(float));
		kg_gnn_forward(&m, &g, &f, frow, lrow, NULL, &s);
		T_CHECKF(memcmp(s.h[0], ref, no * sizeof(float)) == 0,
		    "forward, %d threads", nt);
		kg_gnn_backward(&m, &g, &f, frow, lrow, &s, dout, grad);
		T_CHECKF(memcmp(grad, rgrad, m.n_params * sizeof(float)) == 0,
		    "backward, %d threads", nt);
		kg_gnn_state_release(&s);
	}
	/* Every table took terms: text, index and learned rows. */
	T_CHECKF(nz > (size_t)TW * D0, "%zu gradients changed", nz);
	omp_set_num_threads(saved);
	kg_gnn_graph_release(&g);
	kg_gnn_release(&m);
	kg_features_release(&f);
	free(ref);
	free(dout);
	free(g0);
	free(rgrad);
	free(grad);
}

int
main(void)
{
	T_RUN(attr_layer_bits);
	return T_DONE();
}
