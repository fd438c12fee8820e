/*
 * gnn/init: the encoder's parameters, laid out and initialised; see
 * gnn.h.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gnn/gnn.h"

int
kg_gnn_encoder_parse(const char *name, enum kg_gnn_encoder *e)
{
	if (strcasecmp(name, "rgcn") == 0 || strcasecmp(name, "r-gcn") == 0)
		*e = KG_GNN_RGCN;
	else if (strcasecmp(name, "relgnn") == 0)
		*e = KG_GNN_RELGNN;
	else {
		kg_error("unknown GNN encoder '%s' (RGCN or RelGNN)", name);
		return -1;
	}
	return 0;
}

const char *
kg_gnn_encoder_name(enum kg_gnn_encoder e)
{
	return e == KG_GNN_RGCN ? "rgcn" : "relgnn";
}

static void
init_uniform(float *w, size_t n, double limit, struct kg_rng *rng)
{
	size_t k;

	for (k = 0; k < n; k++)
		w[k] = (float)((2.0 * kg_rng_uniform(rng) - 1.0) * limit);
}

static double
glorot(size_t fan_in, size_t fan_out)
{
	return sqrt(6.0 / (double)(fan_in + fan_out));
}

void
kg_gnn_learned_row_init(float *row, size_t d0, uint64_t seed, uint64_t id)
{
	struct kg_rng r;
	size_t k;

	kg_rng_stream(&r, seed, KG_STREAM_GNN_LEARNED_ROW, id, 0, 0, 0);
	for (k = 0; k < d0; k++)
		row[k] = (float)(kg_rng_normal(&r) / sqrt((double)d0));
}

static int
config_check(const struct kg_gnn_config *c)
{
	uint32_t l, L = c->n_layers, B = c->n_bases ? c->n_bases : 1;

	if (L > KG_GNN_MAX_LAYERS) {
		kg_error("at most %d graph layers", KG_GNN_MAX_LAYERS);
		return -1;
	}
	for (l = 0; l <= L; l++)
		if (c->dims[l] == 0) {
			kg_error("layer %u has dimension 0", l);
			return -1;
		}
	if (c->dropout < 0.0f || c->dropout >= 1.0f) {
		kg_error("dropout %g is not in [0, 1)", (double)c->dropout);
		return -1;
	}
	if (c->encoder == KG_GNN_RGCN && c->decomp == KG_GNN_BLOCK)
		for (l = 0; l < L; l++)
			if (c->dims[l] % B != 0 || c->dims[l + 1] % B != 0) {
				kg_error("block-diagonal R-GCN needs every "
				    "dimension divisible by the %u blocks", B);
				return -1;
			}
	return 0;
}

/* The attribute matrices of f, or none (learned embeddings only). */
static void
attrs_take(struct kg_gnn *m, const struct kg_features *f)
{
	size_t i;

	if (f == NULL || m->c.learned_only || f->n_attrs == 0) {
		m->c.learned_only = 1;
		return;
	}
	m->n_attrs = f->n_attrs;
	m->attr_width = kg_xcalloc(m->n_attrs, sizeof(*m->attr_width));
	m->attr_text = kg_xcalloc(m->n_attrs, sizeof(*m->attr_text));
	m->attr_off = kg_xcalloc(m->n_attrs, sizeof(*m->attr_off));
	for (i = 0; i < m->n_attrs; i++) {
		m->attr_width[i] = f->attrs[i].width;
		m->attr_text[i] = f->attrs[i].text;
	}
}

/* The offsets of every block (gnn.h's order); returns the total. */
static size_t
layout(struct kg_gnn *m)
{
	const struct kg_gnn_config *c = &m->c;
	size_t p = 0, i, T = 2 * (size_t)c->n_relations, B = c->n_bases;
	uint32_t l;

	m->learned = p;
	p += c->n_learned * c->dims[0];
	for (i = 0; i < m->n_attrs; i++) {
		m->attr_off[i] = p;
		p += m->attr_width[i] * c->dims[0];
	}
	for (l = 0; l < c->n_layers; l++) {
		struct kg_gnn_layer_off *o = &m->lay[l];
		size_t din = c->dims[l], dout = c->dims[l + 1];

		o->w0 = p;
		p += din * dout;
		o->bias = p;
		p += dout;
		if (c->encoder == KG_GNN_RGCN && c->decomp == KG_GNN_BASIS) {
			o->v = p;
			p += B * din * dout;
			o->a = p;
			p += T * B;
		} else if (c->encoder == KG_GNN_RGCN) {
			o->q = p;
			p += T * din * dout / B;
		} else {
			o->w = p;
			p += din * dout;
			o->a_dst = p;
			p += dout;
			o->a_src = p;
			p += dout;
			o->a_rel = p;
			p += dout;
			o->rel = p;
			p += T * dout;
		}
	}
	return p;
}

/* Everything but the learned table, from one stream in layout order. */
static void
init_dense(struct kg_gnn *m, uint64_t seed)
{
	const struct kg_gnn_config *c = &m->c;
	size_t i, k, d0 = c->dims[0], T = 2 * (size_t)c->n_relations;
	size_t B = c->n_bases;
	struct kg_rng rng;
	uint32_t l;

	kg_rng_stream(&rng, seed, KG_STREAM_GNN_INIT, 0, 0, 0, 0);
	for (i = 0; i < m->n_attrs; i++) {
		float *w = m->w + m->attr_off[i];

		if (m->attr_text[i])
			init_uniform(w, m->attr_width[i] * d0,
			    glorot(m->attr_width[i], d0), &rng);
		else
			for (k = 0; k < m->attr_width[i] * d0; k++)
				w[k] = (float)(kg_rng_normal(&rng) /
				    sqrt((double)d0));
	}
	for (l = 0; l < c->n_layers; l++) {
		const struct kg_gnn_layer_off *o = &m->lay[l];
		size_t din = c->dims[l], dout = c->dims[l + 1];

		init_uniform(m->w + o->w0, din * dout, glorot(din, dout), &rng);
		if (c->encoder == KG_GNN_RGCN && c->decomp == KG_GNN_BASIS) {
			init_uniform(m->w + o->v, B * din * dout,
			    glorot(din, dout), &rng);
			init_uniform(m->w + o->a, T * B, glorot(T, B), &rng);
		} else if (c->encoder == KG_GNN_RGCN)
			init_uniform(m->w + o->q, T * din * dout / B,
			    glorot(din / B, dout / B), &rng);
		else {
			init_uniform(m->w + o->w, din * dout, glorot(din, dout),
			    &rng);
			init_uniform(m->w + o->a_dst, 3 * dout,
			    glorot(dout, 1), &rng);
			init_uniform(m->w + o->rel, T * dout, glorot(T, dout),
			    &rng);
		}
	}
}

int
kg_gnn_init_rows(struct kg_gnn *m, const struct kg_gnn_config *c,
    const struct kg_features *f, uint64_t seed, const int32_t *gid,
    const uint8_t *need)
{
	size_t i, d0 = c->dims[0];

	memset(m, 0, sizeof(*m));
	if (config_check(c) < 0)
		return -1;
	m->c = *c;
	m->c.n_bases = c->n_bases ? c->n_bases : 1;
	attrs_take(m, f);
	m->n_params = layout(m);
	m->w = kg_xcalloc(m->n_params ? m->n_params : 1, sizeof(float));
	/* Learned rows from their own streams, so that the other parameters
	 * do not depend on how many rows there are (a rank holds only its
	 * part's). */
#pragma omp parallel for schedule(static, 4096)
	for (i = 0; i < c->n_learned; i++)
		if (need == NULL || need[i])
			kg_gnn_learned_row_init(m->w + m->learned + i * d0, d0,
			    seed, gid != NULL ? (uint64_t)gid[i] : i);
	init_dense(m, seed);
	return 0;
}

int
kg_gnn_init(struct kg_gnn *m, const struct kg_gnn_config *c,
    const struct kg_features *f, uint64_t seed)
{
	return kg_gnn_init_rows(m, c, f, seed, NULL, NULL);
}

void
kg_gnn_release(struct kg_gnn *m)
{
	free(m->attr_width);
	free(m->attr_text);
	free(m->attr_off);
	free(m->w);
	memset(m, 0, sizeof(*m));
}
