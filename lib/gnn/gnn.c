/*
 * gnn: attribute layer, R-GCN and attention layers; see gnn.h.
 */
#include <math.h>
#include <omp.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "gnn/gnn.h"
#include "compute/compute.h"
#include "io/manifest.h"

#define LEAKY_SLOPE 0.2f

/* C[m, n] (+)= A[m, k] B[k, n] */
static void
mm(size_t m, size_t n, size_t k, const float *a, const float *b, float beta,
    float *c)
{
	if (m == 0 || n == 0)
		return;
	kg_sgemm(KG_NO_TRANS, KG_NO_TRANS, m, n, k, 1.0f, a, k, b, n, beta, c,
	    n);
}

/* C[k, n] += A[m, k]^T B[m, n] */
static void
mm_tn(size_t m, size_t n, size_t k, const float *a, const float *b, float *c)
{
	if (m == 0 || n == 0 || k == 0)
		return;
	kg_sgemm(KG_TRANS, KG_NO_TRANS, k, n, m, 1.0f, a, k, b, n, 1.0f, c, n);
}

/* C[m, k] (+)= A[m, n] B[k, n]^T */
static void
mm_nt(size_t m, size_t n, size_t k, const float *a, const float *b,
    float beta, float *c)
{
	if (m == 0 || k == 0)
		return;
	kg_sgemm(KG_NO_TRANS, KG_TRANS, m, k, n, 1.0f, a, n, b, n, beta, c, k);
}

/* -O2 leaves these loops scalar; each element is computed alone, so
 * vectorising them (omp simd) changes no result. */
static inline void
axpy(size_t n, float a, const float *restrict x, float *restrict y)
{
	size_t k;

#pragma omp simd
	for (k = 0; k < n; k++)
		y[k] += a * x[k];
}

/* Eight partial sums, so the compiler can vectorise without reordering
 * float additions on its own (the order stays fixed: deterministic). */
static inline float
dot(size_t n, const float *restrict x, const float *restrict y)
{
	float acc[8] = { 0 }, s;
	size_t k = 0, j;

	for (; k + 8 <= n; k += 8)
		for (j = 0; j < 8; j++)
			acc[j] += x[k + j] * y[k + j];
	s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) +
	    ((acc[4] + acc[5]) + (acc[6] + acc[7]));
	for (; k < n; k++)
		s += x[k] * y[k];
	return s;
}

/* y += a x + b z */
static inline void
axpy2(size_t n, float a, const float *restrict x, float b,
    const float *restrict z, float *restrict y)
{
	size_t k;

#pragma omp simd
	for (k = 0; k < n; k++)
		y[k] += a * x[k] + b * z[k];
}

/* ---- graph ---- */

void
kg_gnn_graph_build(struct kg_gnn_graph *g, uint64_t n_nodes,
    uint32_t n_relations, const int32_t *hrt, uint64_t n)
{
	uint64_t i, k, *fill;
	uint32_t *cnt;
	uint32_t T = 2 * n_relations;

	memset(g, 0, sizeof(*g));
	g->n_nodes = n_nodes;
	g->n_types = T;
	g->n_msgs = 2 * n;
	g->off = kg_xcalloc(n_nodes + 1, sizeof(*g->off));
	g->src = kg_xmallocarray(g->n_msgs + 1, sizeof(*g->src));
	g->type = kg_xmallocarray(g->n_msgs + 1, sizeof(*g->type));
	g->norm = kg_xmallocarray(g->n_msgs + 1, sizeof(*g->norm));
	for (i = 0; i < n; i++) {
		g->off[hrt[3 * i + 2] + 1]++;
		g->off[hrt[3 * i] + 1]++;
	}
	for (i = 0; i < n_nodes; i++)
		g->off[i + 1] += g->off[i];
	fill = kg_xmallocarray(n_nodes + 1, sizeof(*fill));
	memcpy(fill, g->off, (n_nodes + 1) * sizeof(*fill));
	for (i = 0; i < n; i++) {
		int32_t h = hrt[3 * i], r = hrt[3 * i + 1], t = hrt[3 * i + 2];

		k = fill[t]++;
		g->src[k] = h;
		g->type[k] = r;
		k = fill[h]++;
		g->src[k] = t;
		g->type[k] = r + (int32_t)n_relations;
	}
	free(fill);
	cnt = kg_xcalloc(T ? T : 1, sizeof(*cnt));
	kg_gnn_graph_normalise(g, cnt);
	free(cnt);
}

void
kg_gnn_graph_normalise(struct kg_gnn_graph *g, uint32_t *cnt)
{
	uint64_t i, k;

	/* c_{i,r}: count each type among i's messages (lists are short, so a
	 * quadratic count per node would do, but hubs make it costly: count
	 * with a per-type scratch array instead). */
	for (i = 0; i < g->n_nodes; i++) {
		for (k = g->off[i]; k < g->off[i + 1]; k++)
			cnt[g->type[k]]++;
		for (k = g->off[i]; k < g->off[i + 1]; k++)
			g->norm[k] = 1.0f / (float)cnt[g->type[k]];
		for (k = g->off[i]; k < g->off[i + 1]; k++)
			cnt[g->type[k]] = 0;
	}
}

void
kg_gnn_graph_release(struct kg_gnn_graph *g)
{
	free(g->off);
	free(g->src);
	free(g->type);
	free(g->norm);
	memset(g, 0, sizeof(*g));
}

/* ---- features ---- */

void
kg_gnn_features_release(struct kg_gnn_features *f)
{
	size_t i;

	if (f->attrs != NULL) {
		for (i = 0; i < f->n_attrs; i++) {
			struct kg_gnn_attr *a = &f->attrs[i];

			free(a->name);
			free(a->off);
			kg_npy_release(&a->a_idx);
			kg_npy_release(&a->a_vec);
			kg_npy_release(&a->a_has);
		}
	}
	free(f->attrs);
	memset(f, 0, sizeof(*f));
}

static int
load_offsets(struct kg_gnn_attr *a, const char *dir, const char *out,
    uint64_t n)
{
	struct kg_npy o = KG_NPY_INIT;
	char *name = kg_xasprintf("%s_offsets.npy", out);
	char *path = kg_path_join(dir, name);
	uint64_t i;
	int rc = -1;

	free(name);
	if (kg_npy_read_expect(path, KG_DT_NONE, 1, &o) < 0)
		goto out;
	if ((o.dtype != KG_DT_I8 && o.dtype != KG_DT_I4) ||
	    o.shape[0] != n + 1) {
		kg_error("'%s': expected int32 or int64 [%llu], found another "
		    "dtype or shape", path, (unsigned long long)(n + 1));
		goto out;
	}
	a->off = kg_xmallocarray(n + 1, sizeof(*a->off));
	for (i = 0; i <= n; i++)
		a->off[i] = o.dtype == KG_DT_I8 ? ((const int64_t *)o.data)[i] :
		    ((const int32_t *)o.data)[i];
	for (i = 0; i < n; i++)
		if (a->off[i] > a->off[i + 1] || a->off[0] != 0) {
			kg_error("'%s': offsets not increasing at row %llu",
			    path, (unsigned long long)i);
			goto out;
		}
	rc = 0;
out:
	kg_npy_release(&o);
	free(path);
	return rc;
}

static int
load_attr(struct kg_gnn_attr *a, const char *dir, json_t *spec, uint64_t n)
{
	const char *out = json_string_value(json_object_get(spec, "output"));
	const char *kind = json_string_value(json_object_get(spec, "kind"));
	const char *nm = json_string_value(json_object_get(spec, "name"));
	json_t *w;
	char *name, *path;
	uint64_t i;
	int rc;

	if (out == NULL || kind == NULL) {
		kg_error("'%s': config.attributes entry lacks output or kind",
		    dir);
		return -1;
	}
	a->name = kg_xstrdup(nm != NULL ? nm : out);
	a->text = strcmp(kind, "text") == 0;
	w = json_object_get(spec, a->text ? "dim" : "slots");
	if (!json_is_integer(w) || json_integer_value(w) <= 0) {
		kg_error("'%s': attribute '%s' lacks %s", dir, a->name,
		    a->text ? "dim" : "slots");
		return -1;
	}
	a->width = (uint64_t)json_integer_value(w);
	name = kg_xasprintf("has_%s.npy", out);
	path = kg_path_join(dir, name);
	free(name);
	rc = kg_npy_read_expect(path, KG_DT_U1, 1, &a->a_has);
	if (rc == 0 && a->a_has.shape[0] != n) {
		kg_error("'%s': %llu rows, expected %llu", path,
		    (unsigned long long)a->a_has.shape[0],
		    (unsigned long long)n);
		rc = -1;
	}
	free(path);
	if (rc < 0)
		return -1;
	a->has = a->a_has.data;
	if (a->text) {
		name = kg_xasprintf("%s.npy", out);
		path = kg_path_join(dir, name);
		free(name);
		rc = kg_npy_read_expect(path, KG_DT_F4, 2, &a->a_vec);
		if (rc == 0 && (a->a_vec.shape[0] != n ||
		    a->a_vec.shape[1] != a->width)) {
			kg_error("'%s': shape does not match [%llu, %llu]",
			    path, (unsigned long long)n,
			    (unsigned long long)a->width);
			rc = -1;
		}
		free(path);
		if (rc < 0)
			return -1;
		a->vec = a->a_vec.data;
		for (i = 0; i < n * a->width; i++)
			if (!isfinite(a->vec[i])) {
				kg_error("'%s.npy': row %llu is not finite",
				    out, (unsigned long long)(i / a->width));
				return -1;
			}
		return 0;
	}
	if (load_offsets(a, dir, out, n) < 0)
		return -1;
	name = kg_xasprintf("%s_indices.npy", out);
	path = kg_path_join(dir, name);
	free(name);
	rc = kg_npy_read_expect(path, KG_DT_I4, 1, &a->a_idx);
	if (rc == 0 && a->a_idx.shape[0] != (uint64_t)a->off[n]) {
		kg_error("'%s': %llu entries, offsets say %lld", path,
		    (unsigned long long)a->a_idx.shape[0],
		    (long long)a->off[n]);
		rc = -1;
	}
	free(path);
	if (rc < 0)
		return -1;
	a->idx = a->a_idx.data;
	for (i = 0; i < (uint64_t)a->off[n]; i++)
		if (a->idx[i] < 0 || (uint64_t)a->idx[i] >= a->width) {
			kg_error("'%s_indices.npy': entry %llu (%d) is not "
			    "below the %llu slots", out, (unsigned long long)i,
			    a->idx[i], (unsigned long long)a->width);
			return -1;
		}
	return 0;
}

int
kg_gnn_features_load(struct kg_gnn_features *f, const char *dir,
    const char *manifest_dir, uint64_t n)
{
	struct kg_manifest man = KG_MANIFEST_INIT;
	json_t *list;
	size_t i;
	int rc;

	memset(f, 0, sizeof(*f));
	rc = kg_manifest_load(&man, manifest_dir ? manifest_dir : dir, NULL);
	if (rc < 0)
		return rc;
	list = kg_manifest_get(&man, "config.attributes");
	if (!json_is_array(list)) {
		kg_error("'%s': manifest has no config.attributes list",
		    manifest_dir ? manifest_dir : dir);
		kg_manifest_release(&man);
		return -1;
	}
	f->n = n;
	f->n_attrs = json_array_size(list);
	f->attrs = kg_xcalloc(f->n_attrs ? f->n_attrs : 1, sizeof(*f->attrs));
	for (i = 0; i < f->n_attrs; i++)
		if (load_attr(&f->attrs[i], dir, json_array_get(list, i),
		    n) < 0) {
			kg_manifest_release(&man);
			kg_gnn_features_release(f);
			return -1;
		}
	kg_manifest_release(&man);
	return 0;
}

/* ---- parameters ---- */

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

	kg_rng_seed(&r, seed, (0x6c726f77ULL << 32) | id);
	for (k = 0; k < d0; k++)
		row[k] = (float)(kg_rng_normal(&r) / sqrt((double)d0));
}

int
kg_gnn_init(struct kg_gnn *m, const struct kg_gnn_config *c,
    const struct kg_gnn_features *f, uint64_t seed)
{
	struct kg_rng rng;
	size_t p = 0, i, T = 2 * (size_t)c->n_relations;
	uint32_t l, L = c->n_layers, B = c->n_bases ? c->n_bases : 1;
	size_t d0 = c->dims[0];

	memset(m, 0, sizeof(*m));
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
	m->c = *c;
	m->c.n_bases = B;
	if (f != NULL && !c->learned_only && f->n_attrs > 0) {
		m->n_attrs = f->n_attrs;
		m->attr_width = kg_xcalloc(m->n_attrs, sizeof(*m->attr_width));
		m->attr_text = kg_xcalloc(m->n_attrs, sizeof(*m->attr_text));
		m->attr_off = kg_xcalloc(m->n_attrs, sizeof(*m->attr_off));
		for (i = 0; i < m->n_attrs; i++) {
			m->attr_width[i] = f->attrs[i].width;
			m->attr_text[i] = f->attrs[i].text;
		}
	} else
		m->c.learned_only = 1;
	m->learned = p;
	p += c->n_learned * d0;
	for (i = 0; i < m->n_attrs; i++) {
		m->attr_off[i] = p;
		p += m->attr_width[i] * d0;
	}
	for (l = 0; l < L; l++) {
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
	m->n_params = p;
	m->w = kg_xcalloc(p ? p : 1, sizeof(float));
	/* Learned rows from their own streams, so that the other parameters
	 * do not depend on how many rows there are (a rank holds only its
	 * part's). */
	for (i = 0; i < c->n_learned; i++)
		kg_gnn_learned_row_init(m->w + m->learned + i * d0, d0, seed,
		    i);
	kg_rng_seed(&rng, seed, 0x676e6e);
	for (i = 0; i < m->n_attrs; i++) {
		if (m->attr_text[i])
			init_uniform(m->w + m->attr_off[i],
			    m->attr_width[i] * d0,
			    glorot(m->attr_width[i], d0), &rng);
		else {
			size_t k;

			for (k = 0; k < m->attr_width[i] * d0; k++)
				m->w[m->attr_off[i] + k] = (float)(
				    kg_rng_normal(&rng) / sqrt((double)d0));
		}
	}
	for (l = 0; l < L; l++) {
		struct kg_gnn_layer_off *o = &m->lay[l];
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
	return 0;
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

void
kg_gnn_state_release(struct kg_gnn_state *s)
{
	int l;

	for (l = 0; l <= KG_GNN_MAX_LAYERS; l++)
		free(s->h[l]);
	for (l = 0; l < KG_GNN_MAX_LAYERS; l++) {
		free(s->hd[l]);
		free(s->mask[l]);
		free(s->pre[l]);
		free(s->u[l]);
		free(s->alpha[l]);
	}
	free(s->t1);
	free(s->dh);
	free(s->dh2);
	free(s->dt);
	free(s->da);
	free(s->nsum);
	free(s->by_type);
	free(s->toff);
	free(s->by_src);
	free(s->soff);
	free(s->dst);
	free(s->fill);
	free(s->poff);
	free(s->tpoff);
	free(s->msg_pair);
	free(s->dpair);
	free(s->dpoff);
	free(s->pdst);
	free(s->py);
	free(s->tscr);
	memset(s, 0, sizeof(*s));
}

static uint32_t
max_dim(const struct kg_gnn *m)
{
	uint32_t l, d = 0;

	for (l = 0; l <= m->c.n_layers; l++)
		if (m->c.dims[l] > d)
			d = m->c.dims[l];
	return d;
}

/* Replace *p by an array of n elements of size sz (contents lost). */
static void
regrow(void *pp, uint64_t n, size_t sz)
{
	void **p = pp;

	free(*p);
	*p = kg_xmallocarray(n ? n : 1, sz);
}

static void
state_reserve(const struct kg_gnn *m, struct kg_gnn_state *s, uint64_t n,
    uint64_t n_msgs)
{
	size_t d = max_dim(m), B = m->c.n_bases, nd;
	uint32_t l;

	s->n = n;
	if (n > s->cap_n) {
		nd = n * d;
		for (l = 0; l <= m->c.n_layers; l++)
			regrow(&s->h[l], nd, sizeof(float));
		for (l = 0; l < m->c.n_layers; l++) {
			regrow(&s->hd[l], nd, sizeof(float));
			regrow(&s->mask[l], nd, sizeof(float));
			regrow(&s->pre[l], nd, sizeof(float));
		}
		regrow(&s->t1, nd * B, sizeof(float));
		regrow(&s->dt, nd * B, sizeof(float));
		regrow(&s->dh, nd, sizeof(float));
		regrow(&s->dh2, nd, sizeof(float));
		regrow(&s->nsum, n, sizeof(float));
		s->cap_n = n;
	}
	if (m->c.encoder == KG_GNN_RELGNN && n_msgs > s->cap_m) {
		for (l = 0; l < m->c.n_layers; l++) {
			regrow(&s->u[l], n_msgs, sizeof(float));
			regrow(&s->alpha[l], n_msgs, sizeof(float));
		}
		regrow(&s->da, n_msgs, sizeof(float));
		s->cap_m = n_msgs;
	}
}

/* ---- message orders ---- */

/*
 * The backward passes scatter to message sources and sum per message
 * type; to give every such sum to one thread, in an order that depends
 * on the graph only, the messages are also listed by type and by source
 * (counting sorts, stable: CSR order within a type or a source, which
 * is the order the single-threaded loops used to add them in).
 *
 * Block R-GCN works on (destination, type) pairs: since W_r is shared by
 * the messages of type r into i, sum_j (1 / c) h_j W_r = (sum_j (1 / c)
 * h_j) W_r, so the pair's inputs are summed first and multiplied once
 * (FB15k-237: 150k pairs for 544k messages).  Within a type, by_type
 * lists the messages by destination, so a pair is a run of by_type.
 */

/* A stable order of items 0 .. m - 1 by key[i] < nk: off [nk + 1] gets
 * each key's start in out, fill (nk + 1 entries) is scratch. */
static void
bucket_order(const int32_t *key, uint64_t m, uint64_t nk, uint64_t *off,
    uint64_t *fill, uint64_t *out)
{
	uint64_t i;

	memset(off, 0, (nk + 1) * sizeof(*off));
	for (i = 0; i < m; i++)
		off[key[i] + 1]++;
	for (i = 0; i < nk; i++)
		off[i + 1] += off[i];
	memcpy(fill, off, (nk + 1) * sizeof(*fill));
	for (i = 0; i < m; i++)
		out[fill[key[i]]++] = i;
}

static void
index_build(const struct kg_gnn *m, const struct kg_gnn_graph *g,
    struct kg_gnn_state *s)
{
	uint64_t n = g->n_nodes, M = g->n_msgs, T = g->n_types, i, e, k, p;
	uint64_t *fill, nf = (n > T ? n : T) + 1;
	int block = m->c.encoder == KG_GNN_RGCN && m->c.decomp == KG_GNN_BLOCK;

	if (M + 1 > s->cap_idx) {
		s->cap_idx = M + 1;
		regrow(&s->by_type, s->cap_idx, sizeof(*s->by_type));
		regrow(&s->by_src, s->cap_idx, sizeof(*s->by_src));
		regrow(&s->dst, s->cap_idx, sizeof(*s->dst));
		regrow(&s->poff, s->cap_idx, sizeof(*s->poff));
		regrow(&s->msg_pair, s->cap_idx, sizeof(*s->msg_pair));
		regrow(&s->dpair, s->cap_idx, sizeof(*s->dpair));
		regrow(&s->pdst, s->cap_idx, sizeof(*s->pdst));
	}
	if (n + 1 > s->cap_nidx) {
		s->cap_nidx = n + 1;
		regrow(&s->soff, s->cap_nidx, sizeof(*s->soff));
		regrow(&s->dpoff, s->cap_nidx, sizeof(*s->dpoff));
	}
	if (T + 1 > s->cap_t) {
		s->cap_t = T + 1;
		regrow(&s->toff, s->cap_t, sizeof(*s->toff));
		regrow(&s->tpoff, s->cap_t, sizeof(*s->tpoff));
	}
	if (nf > s->cap_fill) {
		s->cap_fill = nf;
		regrow(&s->fill, s->cap_fill, sizeof(*s->fill));
	}
	fill = s->fill;

	for (i = 0; i < n; i++)
		for (e = g->off[i]; e < g->off[i + 1]; e++)
			s->dst[e] = (int32_t)i;
	bucket_order(g->type, M, T, s->toff, fill, s->by_type);
	bucket_order(g->src, M, n, s->soff, fill, s->by_src);

	s->n_pairs = s->max_tpairs = 0;
	if (!block)
		return;
	p = 0;
	for (k = 0; k < T; k++) {
		uint64_t q;

		s->tpoff[k] = p;
		for (q = s->toff[k]; q < s->toff[k + 1]; q++) {
			e = s->by_type[q];
			if (q == s->toff[k] ||
			    s->dst[e] != s->dst[s->by_type[q - 1]]) {
				s->poff[p] = q;
				s->pdst[p] = s->dst[e];
				p++;
			}
			s->msg_pair[e] = p - 1;
		}
		if (p - s->tpoff[k] > s->max_tpairs)
			s->max_tpairs = p - s->tpoff[k];
	}
	s->tpoff[T] = p;
	s->poff[p] = M;
	s->n_pairs = p;
	bucket_order(s->pdst, p, n, s->dpoff, fill, s->dpair);
	if (s->n_pairs * max_dim(m) > s->cap_py) {
		s->cap_py = s->n_pairs * max_dim(m);
		regrow(&s->py, s->cap_py, sizeof(float));
	}
}

/* Scratch of per_thread floats for each of omp_get_max_threads()
 * threads; thread t's is tscr + t * per_thread. */
static void
tscr_reserve(struct kg_gnn_state *s, size_t per_thread)
{
	uint64_t need = (uint64_t)omp_get_max_threads() * per_thread;

	if (need > s->cap_tscr) {
		s->cap_tscr = need;
		regrow(&s->tscr, need, sizeof(float));
	}
}

/*
 * Sums into a global vector (biases, attention vectors) go by columns:
 * each thread owns chunks of COLS columns, copies them to a local array
 * (no false sharing), adds every row in order and stores them back, so
 * each element sees the additions of a single-threaded loop in the same
 * order.
 */
#define COLS 16

static long
col_chunks(size_t d)
{
	return (long)((d + COLS - 1) / COLS);
}

/* gb[d] += sum_i G[i] (rows in order) */
static void
sum_rows(size_t n, size_t d, const float *G, float *gb)
{
	long c;

#pragma omp parallel for schedule(static, 1)
	for (c = 0; c < col_chunks(d); c++) {
		size_t c0 = (size_t)c * COLS, w = d - c0 < COLS ? d - c0 : COLS;
		size_t i, k;
		float acc[COLS];

		memcpy(acc, gb + c0, w * sizeof(float));
		for (i = 0; i < n; i++)
			for (k = 0; k < w; k++)
				acc[k] += G[i * d + c0 + k];
		memcpy(gb + c0, acc, w * sizeof(float));
	}
}

/* out[i] = bias for every row i */
static void
fill_bias(size_t n, size_t d, const float *bias, float *out)
{
	long i;

#pragma omp parallel for schedule(static, 1024)
	for (i = 0; i < (long)n; i++)
		memcpy(out + (size_t)i * d, bias, d * sizeof(float));
}

/* ---- attribute layer ---- */

static uint64_t
row_of(const int32_t *map, uint64_t i)
{
	return map != NULL ? (uint64_t)map[i] : i;
}

int
kg_gnn_uses_learned(const struct kg_gnn *m, const struct kg_gnn_features *f,
    uint64_t frow)
{
	size_t a;

	for (a = 0; a < m->n_attrs; a++) {
		const struct kg_gnn_attr *at = &f->attrs[a];

		if (at->has[frow] && (at->text || at->off[frow + 1] >
		    at->off[frow]))
			return 0;
	}
	return 1;
}

static void
attr_forward(const struct kg_gnn *m, const struct kg_gnn_features *f,
    const int32_t *frow, const int32_t *lrow, uint64_t n, float *out)
{
	size_t d0 = m->c.dims[0];
	long ii;

	/* Each row is written by one thread only. */
#pragma omp parallel for schedule(dynamic, 256)
	for (ii = 0; ii < (long)n; ii++) {
		uint64_t i = (uint64_t)ii, e = row_of(frow, i);
		float *o = out + i * d0;
		size_t cnt = 0, a;
		int64_t k;

		memset(o, 0, d0 * sizeof(float));
		for (a = 0; a < m->n_attrs; a++) {
			const struct kg_gnn_attr *at = &f->attrs[a];
			const float *E = m->w + m->attr_off[a];

			if (!at->has[e])
				continue;
			if (at->text) {
				const float *v = at->vec + e * at->width;
				uint64_t j;

				for (j = 0; j < at->width; j++)
					axpy(d0, v[j], E + j * d0, o);
				cnt++;
				continue;
			}
			for (k = at->off[e]; k < at->off[e + 1]; k++) {
				axpy(d0, 1.0f, E + (size_t)at->idx[k] * d0, o);
				cnt++;
			}
		}
		if (cnt == 0)
			memcpy(o, m->w + m->learned + row_of(lrow, i) * d0,
			    d0 * sizeof(float));
		else {
			float sc = 1.0f / (float)cnt;
			size_t j;

			for (j = 0; j < d0; j++)
				o[j] *= sc;
		}
	}
}

/*
 * The gradients scatter to table rows shared by many nodes: split by
 * columns (see sum_rows), every thread walking all the nodes in order.
 */
static void
attr_backward(const struct kg_gnn *m, const struct kg_gnn_features *f,
    const int32_t *frow, const int32_t *lrow, uint64_t n, const float *dout,
    float *grad)
{
	size_t d0 = m->c.dims[0];
	long c;

#pragma omp parallel for schedule(static, 1)
	for (c = 0; c < col_chunks(d0); c++) {
		size_t c0 = (size_t)c * COLS;
		size_t w = d0 - c0 < COLS ? d0 - c0 : COLS, a;
		uint64_t i;
		int64_t k;

		for (i = 0; i < n; i++) {
			const float *g = dout + i * d0 + c0;
			uint64_t e = row_of(frow, i);
			size_t cnt = 0;
			float sc;

			for (a = 0; a < m->n_attrs; a++) {
				const struct kg_gnn_attr *at = &f->attrs[a];

				if (at->has[e])
					cnt += at->text ? 1 :
					    (size_t)(at->off[e + 1] - at->off[e]);
			}
			if (cnt == 0) {
				axpy(w, 1.0f, g, grad + m->learned +
				    row_of(lrow, i) * d0 + c0);
				continue;
			}
			sc = 1.0f / (float)cnt;
			for (a = 0; a < m->n_attrs; a++) {
				const struct kg_gnn_attr *at = &f->attrs[a];
				float *G = grad + m->attr_off[a] + c0;

				if (!at->has[e])
					continue;
				if (at->text) {
					const float *v = at->vec + e * at->width;
					uint64_t j;

					for (j = 0; j < at->width; j++)
						axpy(w, sc * v[j], g,
						    G + j * d0);
					continue;
				}
				for (k = at->off[e]; k < at->off[e + 1]; k++)
					axpy(w, sc, g,
					    G + (size_t)at->idx[k] * d0);
			}
		}
	}
}

/* ---- graph layers ---- */

/* Gathers by message hop through arrays far larger than the caches, one
 * row per message: ask for the row a few messages ahead. */
#define AHEAD 4

static inline void
prefetch_row(const float *p, size_t d)
{
	size_t k;

	for (k = 0; k < d; k += 16)
		__builtin_prefetch(p + k);
}

/* Row of pair p: the sum over its messages of norm * x[src]. */
static void
pair_input(const struct kg_gnn_graph *g, const struct kg_gnn_state *s,
    uint64_t p, const float *x, size_t din, float *row)
{
	uint64_t q = s->poff[p], e = s->by_type[q];
	const float *xs = x + (size_t)g->src[e] * din;
	float nm = g->norm[e];
	size_t k;

#pragma omp simd
	for (k = 0; k < din; k++)
		row[k] = nm * xs[k];
	for (q++; q < s->poff[p + 1]; q++) {
		if (q + AHEAD < g->n_msgs)
			prefetch_row(x + (size_t)g->src[s->by_type[q + AHEAD]] *
			    din, din);
		e = s->by_type[q];
		axpy(din, g->norm[e], x + (size_t)g->src[e] * din, row);
	}
}

/*
 * Block-diagonal R-GCN by type: the inputs of the pairs of one type are
 * summed into a matrix (one thread per type) and multiplied block by
 * block with one sgemm each: small blocks (5 x 5 in the R-GCN paper)
 * make per-message loops slow, per-type GEMMs are not.  The products
 * land in py, and each destination adds its pairs' rows, by type.
 */
static void
block_forward(const struct kg_gnn *m, uint32_t l, const struct kg_gnn_graph *g,
    const float *x, float *out, struct kg_gnn_state *s)
{
	const struct kg_gnn_layer_off *o = &m->lay[l];
	size_t din = m->c.dims[l], dout = m->c.dims[l + 1], B = m->c.n_bases;
	size_t bi = din / B, bo = dout / B, stride = s->max_tpairs * din;
	long r, i;

	tscr_reserve(s, stride);
#pragma omp parallel for schedule(dynamic, 1)
	for (r = 0; r < (long)g->n_types; r++) {
		const float *Q = m->w + o->q + (size_t)r * din * dout / B;
		uint64_t p0 = s->tpoff[r], np = s->tpoff[r + 1] - p0, p;
		float *gx = s->tscr + (size_t)omp_get_thread_num() * stride;
		size_t c;

		if (np == 0)
			continue;
		for (p = 0; p < np; p++)
			pair_input(g, s, p0 + p, x, din, gx + p * din);
		for (c = 0; c < B; c++)
			kg_sgemm(KG_NO_TRANS, KG_NO_TRANS, np, bo, bi, 1.0f,
			    gx + c * bi, din, Q + c * bi * bo, bo, 0.0f,
			    s->py + p0 * dout + c * bo, dout);
	}
#pragma omp parallel for schedule(dynamic, 256)
	for (i = 0; i < (long)g->n_nodes; i++) {
		uint64_t q;

		for (q = s->dpoff[i]; q < s->dpoff[i + 1]; q++)
			axpy(dout, 1.0f, s->py + s->dpair[q] * dout,
			    out + (size_t)i * dout);
	}
}

/* The weight gradient of a type is summed by the thread of that type;
 * the input gradients of the pairs go through py to the message
 * sources, each source summing its messages in CSR order. */
static void
block_backward(const struct kg_gnn *m, uint32_t l,
    const struct kg_gnn_graph *g, const float *x, const float *G, float *dx,
    struct kg_gnn_state *s, float *grad)
{
	const struct kg_gnn_layer_off *o = &m->lay[l];
	size_t din = m->c.dims[l], dout = m->c.dims[l + 1], B = m->c.n_bases;
	size_t bi = din / B, bo = dout / B;
	size_t stride = s->max_tpairs * (din + dout);
	long r, j;

	tscr_reserve(s, stride);
#pragma omp parallel for schedule(dynamic, 1)
	for (r = 0; r < (long)g->n_types; r++) {
		size_t qo = (size_t)r * din * dout / B, c;
		const float *Q = m->w + o->q + qo;
		float *gQ = grad + o->q + qo;
		uint64_t p0 = s->tpoff[r], np = s->tpoff[r + 1] - p0, p;
		float *gx = s->tscr + (size_t)omp_get_thread_num() * stride;
		float *gy = gx + s->max_tpairs * din;

		if (np == 0)
			continue;
		for (p = 0; p < np; p++) {
			pair_input(g, s, p0 + p, x, din, gx + p * din);
			memcpy(gy + p * dout, G + (size_t)s->pdst[p0 + p] * dout,
			    dout * sizeof(float));
		}
		for (c = 0; c < B; c++)
			kg_sgemm(KG_TRANS, KG_NO_TRANS, bi, bo, np, 1.0f,
			    gx + c * bi, din, gy + c * bo, dout, 1.0f,
			    gQ + c * bi * bo, bo);
		for (c = 0; c < B; c++)
			kg_sgemm(KG_NO_TRANS, KG_TRANS, np, bi, bo, 1.0f,
			    gy + c * bo, dout, Q + c * bi * bo, bo, 0.0f,
			    s->py + p0 * din + c * bi, din);
	}
#pragma omp parallel for schedule(dynamic, 256)
	for (j = 0; j < (long)g->n_nodes; j++) {
		uint64_t q;

		for (q = s->soff[j]; q < s->soff[j + 1]; q++) {
			uint64_t e = s->by_src[q];

			if (q + AHEAD < g->n_msgs)
				prefetch_row(s->py + s->msg_pair[s->by_src[
				    q + AHEAD]] * din, din);
			axpy(din, g->norm[e], s->py + s->msg_pair[e] * din,
			    dx + (size_t)j * din);
		}
	}
}

static void
rgcn_forward(const struct kg_gnn *m, uint32_t l, const struct kg_gnn_graph *g,
    const float *x, float *out, struct kg_gnn_state *s)
{
	const struct kg_gnn_layer_off *o = &m->lay[l];
	size_t din = m->c.dims[l], dout = m->c.dims[l + 1], B = m->c.n_bases;
	uint64_t n = g->n_nodes;
	size_t b;
	long i;

	fill_bias(n, dout, m->w + o->bias, out);
	mm(n, dout, din, x, m->w + o->w0, 1.0f, out);
	if (m->c.decomp == KG_GNN_BASIS) {
		const float *A = m->w + o->a;

		for (b = 0; b < B; b++)
			mm(n, dout, din, x, m->w + o->v + b * din * dout, 0.0f,
			    s->t1 + b * n * dout);
		/* Each destination row is written by one thread only, and
		 * in a fixed order, so the result does not depend on the
		 * thread count. */
#pragma omp parallel for schedule(dynamic, 256)
		for (i = 0; i < (long)n; i++)
			for (uint64_t q = g->off[i]; q < g->off[i + 1]; q++) {
				size_t r = (size_t)g->type[q], j = (size_t)g->src[q];

				for (size_t c = 0; c < B; c++)
					axpy(dout, g->norm[q] * A[r * B + c],
					    s->t1 + (c * n + j) * dout,
					    out + (size_t)i * dout);
			}
		return;
	}
	block_forward(m, l, g, x, out, s);
}

/* G: dL/d(out) [n, dout]; dx (n x din) is overwritten. */
static void
rgcn_backward(const struct kg_gnn *m, uint32_t l,
    const struct kg_gnn_graph *g, const float *x, const float *G, float *dx,
    struct kg_gnn_state *s, float *grad)
{
	const struct kg_gnn_layer_off *o = &m->lay[l];
	size_t din = m->c.dims[l], dout = m->c.dims[l + 1], B = m->c.n_bases;
	uint64_t n = g->n_nodes;
	size_t b;
	long r, j;

	mm_tn(n, dout, din, x, G, grad + o->w0);
	sum_rows(n, dout, G, grad + o->bias);
	mm_nt(n, dout, din, G, m->w + o->w0, 0.0f, dx);
	if (m->c.decomp == KG_GNN_BASIS) {
		const float *A = m->w + o->a;
		float *gA = grad + o->a;

		/* Later layers reused t1: recompute this layer's x V_b. */
		for (b = 0; b < B; b++)
			mm(n, dout, din, x, m->w + o->v + b * din * dout, 0.0f,
			    s->t1 + b * n * dout);
		/* dA[r] by type, dt (the gradient of x V_b) by source. */
#pragma omp parallel for schedule(dynamic, 1)
		for (r = 0; r < (long)g->n_types; r++) {
			uint64_t q;

			for (q = s->toff[r]; q < s->toff[r + 1]; q++) {
				uint64_t e = s->by_type[q];
				size_t i = (size_t)s->dst[e];
				size_t jj = (size_t)g->src[e], c;

				for (c = 0; c < B; c++)
					gA[(size_t)r * B + c] += g->norm[e] *
					    dot(dout, G + i * dout,
					    s->t1 + (c * n + jj) * dout);
			}
		}
#pragma omp parallel for schedule(dynamic, 256)
		for (j = 0; j < (long)n; j++) {
			size_t c;

			for (c = 0; c < B; c++) {
				float *row = s->dt + (c * n + (size_t)j) * dout;
				uint64_t q;

				memset(row, 0, dout * sizeof(float));
				for (q = s->soff[j]; q < s->soff[j + 1]; q++) {
					uint64_t e = s->by_src[q];
					size_t i = (size_t)s->dst[e];
					size_t rr = (size_t)g->type[e];

					axpy(dout, g->norm[e] * A[rr * B + c],
					    G + i * dout, row);
				}
			}
		}
		for (b = 0; b < B; b++) {
			mm_tn(n, dout, din, x, s->dt + b * n * dout,
			    grad + o->v + b * din * dout);
			mm_nt(n, dout, din, s->dt + b * n * dout,
			    m->w + o->v + b * din * dout, 1.0f, dx);
		}
		return;
	}
	block_backward(m, l, g, x, G, dx, s, grad);
}

static void
attn_forward(const struct kg_gnn *m, uint32_t l, const struct kg_gnn_graph *g,
    const float *x, float *out, struct kg_gnn_state *s)
{
	const struct kg_gnn_layer_off *o = &m->lay[l];
	size_t din = m->c.dims[l], dout = m->c.dims[l + 1];
	const float *ad = m->w + o->a_dst, *as = m->w + o->a_src;
	const float *ar = m->w + o->a_rel, *rel = m->w + o->rel;
	float *z = s->t1, *u = s->u[l], *al = s->alpha[l];
	uint64_t n = g->n_nodes;
	long ii;

	fill_bias(n, dout, m->w + o->bias, out);
	mm(n, dout, din, x, m->w + o->w0, 1.0f, out);
	mm(n, dout, din, x, m->w + o->w, 0.0f, z);
	/* One thread per destination row (deterministic, see above). */
#pragma omp parallel for schedule(dynamic, 256)
	for (ii = 0; ii < (long)n; ii++) {
		size_t i = (size_t)ii;
		float zi = dot(dout, ad, z + i * dout), mx = -INFINITY;
		uint64_t e;
		double sum = 0.0;
		float *oi = out + i * dout;

		for (e = g->off[i]; e < g->off[i + 1]; e++) {
			size_t j = (size_t)g->src[e], r = (size_t)g->type[e];
			float v = zi + dot(dout, as, z + j * dout) +
			    dot(dout, ar, rel + r * dout);
			float lv = v > 0.0f ? v : LEAKY_SLOPE * v;

			u[e] = v;
			al[e] = lv;
			if (lv > mx)
				mx = lv;
		}
		for (e = g->off[i]; e < g->off[i + 1]; e++) {
			al[e] = expf(al[e] - mx);
			sum += al[e];
		}
		for (e = g->off[i]; e < g->off[i + 1]; e++) {
			size_t j = (size_t)g->src[e], r = (size_t)g->type[e];

			al[e] = (float)(al[e] / sum);
			axpy(dout, al[e], z + j * dout, oi);
			axpy(dout, al[e], rel + r * dout, oi);
		}
	}
}

/*
 * Four passes, each sum owned by one thread and added in CSR order: per
 * destination, dL/du of each message (kept in da) and their sum (nsum);
 * per source, dz; per type, the relation rows; by columns, the attention
 * vectors.
 */
static void
attn_backward(const struct kg_gnn *m, uint32_t l,
    const struct kg_gnn_graph *g, const float *x, const float *G, float *dx,
    struct kg_gnn_state *s, float *grad)
{
	const struct kg_gnn_layer_off *o = &m->lay[l];
	size_t din = m->c.dims[l], dout = m->c.dims[l + 1];
	const float *ad = m->w + o->a_dst, *as = m->w + o->a_src;
	const float *ar = m->w + o->a_rel, *rel = m->w + o->rel;
	float *gad = grad + o->a_dst, *gas = grad + o->a_src;
	float *gar = grad + o->a_rel, *grel = grad + o->rel;
	const float *z = s->t1, *u = s->u[l], *al = s->alpha[l];
	float *dz = s->dt, *da = s->da, *nsum = s->nsum;
	uint64_t n = g->n_nodes;
	long ii, c;

	/* z was overwritten by later layers' forward: recompute it. */
	mm(n, dout, din, x, m->w + o->w, 0.0f, s->t1);
	mm_tn(n, dout, din, x, G, grad + o->w0);
	sum_rows(n, dout, G, grad + o->bias);
	mm_nt(n, dout, din, G, m->w + o->w0, 0.0f, dx);
#pragma omp parallel for schedule(dynamic, 256)
	for (ii = 0; ii < (long)n; ii++) {
		size_t i = (size_t)ii;
		const float *gi = G + i * dout;
		double ssum = 0.0, dusum = 0.0;
		uint64_t e0 = g->off[i], e1 = g->off[i + 1], e;

		/* dL/dalpha_e = g_i . (z_j + e_r) */
		for (e = e0; e < e1; e++) {
			size_t j = (size_t)g->src[e], r = (size_t)g->type[e];

			da[e] = dot(dout, gi, z + j * dout) +
			    dot(dout, gi, rel + r * dout);
			ssum += al[e] * da[e];
		}
		for (e = e0; e < e1; e++) {
			float dl = al[e] * (da[e] - (float)ssum);

			da[e] = dl * (u[e] > 0.0f ? 1.0f : LEAKY_SLOPE);
			dusum += da[e];
		}
		nsum[i] = (float)dusum;
	}
	/* dz_j: its messages as a source, and its own destination term
	 * where node j's turn came in CSR order (after the messages into
	 * nodes <= j). */
#pragma omp parallel for schedule(dynamic, 256)
	for (ii = 0; ii < (long)n; ii++) {
		size_t j = (size_t)ii;
		float *dzj = dz + j * dout;
		uint64_t q;
		int self = 0;

		memset(dzj, 0, dout * sizeof(float));
		for (q = s->soff[j]; q < s->soff[j + 1]; q++) {
			uint64_t e = s->by_src[q];
			size_t i = (size_t)s->dst[e];

			if (!self && i > j) {
				axpy(dout, nsum[j], ad, dzj);
				self = 1;
			}
			axpy2(dout, al[e], G + i * dout, da[e], as, dzj);
		}
		if (!self)
			axpy(dout, nsum[j], ad, dzj);
	}
#pragma omp parallel for schedule(dynamic, 1)
	for (ii = 0; ii < (long)g->n_types; ii++) {
		float *gr = grel + (size_t)ii * dout;
		uint64_t q;

		for (q = s->toff[ii]; q < s->toff[ii + 1]; q++) {
			uint64_t e = s->by_type[q];

			axpy2(dout, al[e], G + (size_t)s->dst[e] * dout, da[e],
			    ar, gr);
		}
	}
#pragma omp parallel for schedule(static, 1)
	for (c = 0; c < col_chunks(dout); c++) {
		size_t c0 = (size_t)c * COLS;
		size_t w = dout - c0 < COLS ? dout - c0 : COLS, i;
		float s_as[COLS], s_ar[COLS], s_ad[COLS];
		uint64_t e;

		memcpy(s_as, gas + c0, w * sizeof(float));
		memcpy(s_ar, gar + c0, w * sizeof(float));
		memcpy(s_ad, gad + c0, w * sizeof(float));
		for (i = 0; i < n; i++) {
			for (e = g->off[i]; e < g->off[i + 1]; e++) {
				size_t j = (size_t)g->src[e];
				size_t r = (size_t)g->type[e];

				axpy(w, da[e], z + j * dout + c0, s_as);
				axpy(w, da[e], rel + r * dout + c0, s_ar);
			}
			axpy(w, nsum[i], z + i * dout + c0, s_ad);
		}
		memcpy(gas + c0, s_as, w * sizeof(float));
		memcpy(gar + c0, s_ar, w * sizeof(float));
		memcpy(gad + c0, s_ad, w * sizeof(float));
	}
	mm_tn(n, dout, din, x, dz, grad + o->w);
	mm_nt(n, dout, din, dz, m->w + o->w, 1.0f, dx);
}

void
kg_gnn_forward(const struct kg_gnn *m, const struct kg_gnn_graph *g,
    const struct kg_gnn_features *f, const int32_t *frow,
    const int32_t *lrow, struct kg_rng *rng, struct kg_gnn_state *s)
{
	uint32_t l, L = m->c.n_layers;
	uint64_t n = g->n_nodes;
	float p = rng != NULL ? m->c.dropout : 0.0f;
	long k;

	state_reserve(m, s, n, g->n_msgs);
	if (L > 0)
		index_build(m, g, s);
	attr_forward(m, f, frow, lrow, n, s->h[0]);
	for (l = 0; l < L; l++) {
		size_t din = m->c.dims[l], dout = m->c.dims[l + 1];
		long nd = (long)(n * din), no = (long)(n * dout);
		float *x = s->h[l], keep = 1.0f / (1.0f - p);
		float *mask = s->mask[l], *hd = s->hd[l], *pre = s->pre[l];
		float *h = s->h[l + 1];
		int relu = l + 1 < L;

		/* The masks come from one random stream, in order. */
		if (p > 0.0f)
			for (k = 0; k < nd; k++)
				mask[k] = kg_rng_uniform(rng) < p ? 0.0f : keep;
#pragma omp parallel for schedule(static)
		for (k = 0; k < nd; k++) {
			if (p <= 0.0f)
				mask[k] = 1.0f;
			hd[k] = x[k] * mask[k];
		}
		if (m->c.encoder == KG_GNN_RGCN)
			rgcn_forward(m, l, g, hd, pre, s);
		else
			attn_forward(m, l, g, hd, pre, s);
#pragma omp parallel for schedule(static)
		for (k = 0; k < no; k++)
			h[k] = (relu && pre[k] < 0.0f) ? 0.0f : pre[k];
	}
}

void
kg_gnn_backward(const struct kg_gnn *m, const struct kg_gnn_graph *g,
    const struct kg_gnn_features *f, const int32_t *frow,
    const int32_t *lrow, struct kg_gnn_state *s, float *dout, float *grad)
{
	uint32_t l, L = m->c.n_layers;
	uint64_t n = g->n_nodes;
	float *G = dout;
	long k;

	for (l = L; l-- > 0;) {
		size_t din = m->c.dims[l], dd = m->c.dims[l + 1];
		float *dx = (G == s->dh) ? s->dh2 : s->dh;
		const float *pre = s->pre[l], *mask = s->mask[l];
		long nd = (long)(n * din), no = (long)(n * dd);

		if (l + 1 < L) {
#pragma omp parallel for schedule(static)
			for (k = 0; k < no; k++)
				if (pre[k] < 0.0f)
					G[k] = 0.0f;
		}
		if (m->c.encoder == KG_GNN_RGCN)
			rgcn_backward(m, l, g, s->hd[l], G, dx, s, grad);
		else
			attn_backward(m, l, g, s->hd[l], G, dx, s, grad);
#pragma omp parallel for schedule(static)
		for (k = 0; k < nd; k++)
			dx[k] *= mask[k];
		G = dx;
	}
	attr_backward(m, f, frow, lrow, n, G, grad);
}
