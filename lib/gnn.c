/*
 * gnn: attribute layer, R-GCN and attention layers; see gnn.h.
 */
#include <cblas.h>
#include <math.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "gnn.h"
#include "manifest.h"

#define LEAKY_SLOPE 0.2f

/* C[m, n] (+)= A[m, k] B[k, n] */
static void
mm(size_t m, size_t n, size_t k, const float *a, const float *b, float beta,
    float *c)
{
	if (m == 0 || n == 0)
		return;
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n,
	    (int)k, 1.0f, a, (int)k, b, (int)n, beta, c, (int)n);
}

/* C[k, n] += A[m, k]^T B[m, n] */
static void
mm_tn(size_t m, size_t n, size_t k, const float *a, const float *b, float *c)
{
	if (m == 0 || n == 0 || k == 0)
		return;
	cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)k, (int)n,
	    (int)m, 1.0f, a, (int)k, b, (int)n, 1.0f, c, (int)n);
}

/* C[m, k] (+)= A[m, n] B[k, n]^T */
static void
mm_nt(size_t m, size_t n, size_t k, const float *a, const float *b,
    float beta, float *c)
{
	if (m == 0 || k == 0)
		return;
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)m, (int)k,
	    (int)n, 1.0f, a, (int)n, b, (int)n, beta, c, (int)k);
}

static inline void
axpy(size_t n, float a, const float *restrict x, float *restrict y)
{
	size_t k;

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

	for (k = 0; k < n; k++)
		y[k] += a * x[k] + b * z[k];
}

/* ---- graph ---- */

void
kg_gnn_graph_build(struct kg_gnn_graph *g, uint64_t n_nodes,
    uint32_t n_relations, const int32_t *hrt, uint64_t n)
{
	uint64_t i, k, *fill;
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
	/* c_{i,r}: count each type among i's messages (lists are short, so a
	 * quadratic count per node would do, but hubs make it costly: count
	 * with a per-type scratch array instead). */
	{
		uint32_t *cnt = kg_xcalloc(T ? T : 1, sizeof(*cnt));

		for (i = 0; i < n_nodes; i++) {
			for (k = g->off[i]; k < g->off[i + 1]; k++)
				cnt[g->type[k]]++;
			for (k = g->off[i]; k < g->off[i + 1]; k++)
				g->norm[k] = 1.0f / (float)cnt[g->type[k]];
			for (k = g->off[i]; k < g->off[i + 1]; k++)
				cnt[g->type[k]] = 0;
		}
		free(cnt);
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
	kg_rng_seed(&rng, seed, 0x676e6e);
	for (i = 0; i < c->n_learned * d0; i++)
		m->w[m->learned + i] = (float)(kg_rng_normal(&rng) /
		    sqrt((double)d0));
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
	free(s->t2);
	free(s->dh);
	free(s->dh2);
	free(s->dt);
	free(s->wr);
	free(s->da);
	free(s->by_type);
	free(s->dst);
	free(s->toff);
	free(s->gx);
	free(s->gy);
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

static void
state_reserve(const struct kg_gnn *m, struct kg_gnn_state *s, uint64_t n,
    uint64_t n_msgs)
{
	size_t d = max_dim(m), B = m->c.n_bases, nd;
	uint32_t l;

	s->n = n;
	if (n > s->cap_n) {
		nd = n * d;
		for (l = 0; l <= m->c.n_layers; l++) {
			free(s->h[l]);
			s->h[l] = kg_xmallocarray(nd, sizeof(float));
		}
		for (l = 0; l < m->c.n_layers; l++) {
			free(s->hd[l]);
			free(s->mask[l]);
			free(s->pre[l]);
			s->hd[l] = kg_xmallocarray(nd, sizeof(float));
			s->mask[l] = kg_xmallocarray(nd, sizeof(float));
			s->pre[l] = kg_xmallocarray(nd, sizeof(float));
		}
		free(s->t1);
		free(s->dt);
		free(s->dh);
		free(s->dh2);
		s->t1 = kg_xmallocarray(nd * B, sizeof(float));
		s->dt = kg_xmallocarray(nd * B, sizeof(float));
		s->dh = kg_xmallocarray(nd, sizeof(float));
		s->dh2 = kg_xmallocarray(nd, sizeof(float));
		s->cap_n = n;
	}
	if (m->c.encoder == KG_GNN_RELGNN && n_msgs > s->cap_m) {
		for (l = 0; l < m->c.n_layers; l++) {
			free(s->u[l]);
			free(s->alpha[l]);
			s->u[l] = kg_xmallocarray(n_msgs, sizeof(float));
			s->alpha[l] = kg_xmallocarray(n_msgs, sizeof(float));
		}
		free(s->da);
		s->da = kg_xmallocarray(n_msgs, sizeof(float));
		s->cap_m = n_msgs;
	}
	if (s->wr == NULL)
		s->wr = kg_xmallocarray((size_t)d * d + 1, sizeof(float));
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
	size_t d0 = m->c.dims[0], a;
	uint64_t i;
	int64_t k;

	for (i = 0; i < n; i++) {
		float *o = out + i * d0;
		uint64_t e = row_of(frow, i);
		size_t cnt = 0;

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

static void
attr_backward(const struct kg_gnn *m, const struct kg_gnn_features *f,
    const int32_t *frow, const int32_t *lrow, uint64_t n, const float *dout,
    float *grad)
{
	size_t d0 = m->c.dims[0], a;
	uint64_t i;
	int64_t k;

	for (i = 0; i < n; i++) {
		const float *g = dout + i * d0;
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
			axpy(d0, 1.0f, g, grad + m->learned +
			    row_of(lrow, i) * d0);
			continue;
		}
		sc = 1.0f / (float)cnt;
		for (a = 0; a < m->n_attrs; a++) {
			const struct kg_gnn_attr *at = &f->attrs[a];
			float *G = grad + m->attr_off[a];

			if (!at->has[e])
				continue;
			if (at->text) {
				const float *v = at->vec + e * at->width;
				uint64_t j;

				for (j = 0; j < at->width; j++)
					axpy(d0, sc * v[j], g, G + j * d0);
				continue;
			}
			for (k = at->off[e]; k < at->off[e + 1]; k++)
				axpy(d0, sc, g, G + (size_t)at->idx[k] * d0);
		}
	}
}

/* ---- graph layers ---- */

/*
 * Block-diagonal R-GCN by relation: the messages of one type are gathered
 * into a matrix and multiplied block by block with one sgemm each, then
 * scattered to their destinations in a fixed order.  Small blocks (5 x 5
 * in the R-GCN paper) make per-message loops slow; per-relation GEMMs
 * are not.  by_type/dst/toff come from index_by_type.
 */
static void
index_by_type(const struct kg_gnn_graph *g, struct kg_gnn_state *s)
{
	uint64_t i, e, *fill;
	uint32_t r;

	if (g->n_msgs + 1 > s->cap_idx) {
		free(s->by_type);
		free(s->dst);
		s->cap_idx = g->n_msgs + 1;
		s->by_type = kg_xmallocarray(s->cap_idx, sizeof(*s->by_type));
		s->dst = kg_xmallocarray(s->cap_idx, sizeof(*s->dst));
	}
	free(s->toff);
	s->toff = kg_xcalloc((size_t)g->n_types + 1, sizeof(*s->toff));
	for (e = 0; e < g->n_msgs; e++)
		s->toff[g->type[e] + 1]++;
	s->max_type = 0;
	for (r = 0; r < g->n_types; r++) {
		if (s->toff[r + 1] > s->max_type)
			s->max_type = s->toff[r + 1];
		s->toff[r + 1] += s->toff[r];
	}
	fill = kg_xmallocarray((size_t)g->n_types + 1, sizeof(*fill));
	memcpy(fill, s->toff, ((size_t)g->n_types + 1) * sizeof(*fill));
	for (i = 0; i < g->n_nodes; i++)
		for (e = g->off[i]; e < g->off[i + 1]; e++) {
			s->dst[e] = (int32_t)i;
			s->by_type[fill[g->type[e]]++] = e;
		}
	free(fill);
}

static void
block_reserve(struct kg_gnn_state *s, size_t din, size_t dout)
{
	size_t need = s->max_type * (din > dout ? din : dout) + 1;

	if (need > s->cap_gx) {
		free(s->gx);
		free(s->gy);
		s->cap_gx = need;
		s->gx = kg_xmallocarray(need, sizeof(float));
		s->gy = kg_xmallocarray(need, sizeof(float));
	}
}

static void
block_forward(const struct kg_gnn *m, uint32_t l, const struct kg_gnn_graph *g,
    const float *x, float *out, struct kg_gnn_state *s)
{
	const struct kg_gnn_layer_off *o = &m->lay[l];
	size_t din = m->c.dims[l], dout = m->c.dims[l + 1], B = m->c.n_bases;
	size_t bi = din / B, bo = dout / B, c;
	uint64_t k, mr;
	uint32_t r;

	block_reserve(s, din, dout);
	for (r = 0; r < g->n_types; r++) {
		const uint64_t *ev = s->by_type + s->toff[r];
		const float *Q = m->w + o->q + (size_t)r * din * dout / B;

		mr = s->toff[r + 1] - s->toff[r];
		if (mr == 0)
			continue;
		for (k = 0; k < mr; k++)
			memcpy(s->gx + k * din, x + (size_t)g->src[ev[k]] * din,
			    din * sizeof(float));
		for (c = 0; c < B; c++)
			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans,
			    (int)mr, (int)bo, (int)bi, 1.0f, s->gx + c * bi,
			    (int)din, Q + c * bi * bo, (int)bo, 0.0f,
			    s->gy + c * bo, (int)dout);
		for (k = 0; k < mr; k++)
			axpy(dout, g->norm[ev[k]], s->gy + k * dout,
			    out + (size_t)s->dst[ev[k]] * dout);
	}
}

static void
block_backward(const struct kg_gnn *m, uint32_t l,
    const struct kg_gnn_graph *g, const float *x, const float *G, float *dx,
    struct kg_gnn_state *s, float *grad)
{
	const struct kg_gnn_layer_off *o = &m->lay[l];
	size_t din = m->c.dims[l], dout = m->c.dims[l + 1], B = m->c.n_bases;
	size_t bi = din / B, bo = dout / B, c, j;
	uint64_t k, mr;
	uint32_t r;

	block_reserve(s, din, dout);
	for (r = 0; r < g->n_types; r++) {
		const uint64_t *ev = s->by_type + s->toff[r];
		size_t qo = (size_t)r * din * dout / B;
		const float *Q = m->w + o->q + qo;
		float *gQ = grad + o->q + qo;

		mr = s->toff[r + 1] - s->toff[r];
		if (mr == 0)
			continue;
		for (k = 0; k < mr; k++) {
			const float *gi = G + (size_t)s->dst[ev[k]] * dout;
			float nm = g->norm[ev[k]], *dy = s->gy + k * dout;

			memcpy(s->gx + k * din, x + (size_t)g->src[ev[k]] * din,
			    din * sizeof(float));
			for (j = 0; j < dout; j++)
				dy[j] = nm * gi[j];
		}
		for (c = 0; c < B; c++)
			cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans,
			    (int)bi, (int)bo, (int)mr, 1.0f, s->gx + c * bi,
			    (int)din, s->gy + c * bo, (int)dout, 1.0f,
			    gQ + c * bi * bo, (int)bo);
		/* The gathered inputs are no longer needed: reuse gx for
		 * the input gradients of these messages. */
		for (c = 0; c < B; c++)
			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans,
			    (int)mr, (int)bi, (int)bo, 1.0f, s->gy + c * bo,
			    (int)dout, Q + c * bi * bo, (int)bo, 0.0f,
			    s->gx + c * bi, (int)din);
		for (k = 0; k < mr; k++)
			axpy(din, 1.0f, s->gx + k * din,
			    dx + (size_t)g->src[ev[k]] * din);
	}
}

static void
rgcn_forward(const struct kg_gnn *m, uint32_t l, const struct kg_gnn_graph *g,
    const float *x, float *out, struct kg_gnn_state *s)
{
	const struct kg_gnn_layer_off *o = &m->lay[l];
	size_t din = m->c.dims[l], dout = m->c.dims[l + 1], B = m->c.n_bases;
	uint64_t n = g->n_nodes, i;
	size_t b;

	for (i = 0; i < n; i++)
		memcpy(out + i * dout, m->w + o->bias, dout * sizeof(float));
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
		for (i = 0; i < n; i++)
			for (uint64_t q = g->off[i]; q < g->off[i + 1]; q++) {
				size_t r = (size_t)g->type[q], j = (size_t)g->src[q];

				for (size_t c = 0; c < B; c++)
					axpy(dout, g->norm[q] * A[r * B + c],
					    s->t1 + (c * n + j) * dout,
					    out + i * dout);
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
	uint64_t n = g->n_nodes, i, e;
	size_t b;

	mm_tn(n, dout, din, x, G, grad + o->w0);
	for (i = 0; i < n; i++)
		axpy(dout, 1.0f, G + i * dout, grad + o->bias);
	mm_nt(n, dout, din, G, m->w + o->w0, 0.0f, dx);
	if (m->c.decomp == KG_GNN_BASIS) {
		const float *A = m->w + o->a;
		float *gA = grad + o->a;

		/* Later layers reused t1: recompute this layer's x V_b. */
		for (b = 0; b < B; b++)
			mm(n, dout, din, x, m->w + o->v + b * din * dout, 0.0f,
			    s->t1 + b * n * dout);
		memset(s->dt, 0, B * n * dout * sizeof(float));
		for (i = 0; i < n; i++)
			for (e = g->off[i]; e < g->off[i + 1]; e++) {
				size_t r = (size_t)g->type[e], j = (size_t)g->src[e];
				const float *gi = G + i * dout;

				for (b = 0; b < B; b++) {
					gA[r * B + b] += g->norm[e] * dot(dout,
					    gi, s->t1 + (b * n + j) * dout);
					axpy(dout, g->norm[e] * A[r * B + b], gi,
					    s->dt + (b * n + j) * dout);
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
	uint64_t n = g->n_nodes, i;

	for (i = 0; i < n; i++)
		memcpy(out + i * dout, m->w + o->bias, dout * sizeof(float));
	mm(n, dout, din, x, m->w + o->w0, 1.0f, out);
	mm(n, dout, din, x, m->w + o->w, 0.0f, z);
	/* One thread per destination row (deterministic, see above). */
#pragma omp parallel for schedule(dynamic, 256)
	for (i = 0; i < n; i++) {
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
	float *dz = s->dt, *da = s->da;
	uint64_t n = g->n_nodes, i, e;

	/* z was overwritten by later layers' forward: recompute it. */
	mm(n, dout, din, x, m->w + o->w, 0.0f, s->t1);
	mm_tn(n, dout, din, x, G, grad + o->w0);
	for (i = 0; i < n; i++)
		axpy(dout, 1.0f, G + i * dout, grad + o->bias);
	mm_nt(n, dout, din, G, m->w + o->w0, 0.0f, dx);
	memset(dz, 0, n * dout * sizeof(float));
	for (i = 0; i < n; i++) {
		const float *gi = G + i * dout;
		double ssum = 0.0, dusum = 0.0;
		uint64_t e0 = g->off[i], e1 = g->off[i + 1];

		/* dL/dalpha_e = g_i . (z_j + e_r), kept in da[e]. */
		for (e = e0; e < e1; e++) {
			size_t j = (size_t)g->src[e], r = (size_t)g->type[e];

			da[e] = dot(dout, gi, z + j * dout) +
			    dot(dout, gi, rel + r * dout);
			ssum += al[e] * da[e];
		}
		for (e = e0; e < e1; e++) {
			size_t j = (size_t)g->src[e], r = (size_t)g->type[e];
			float dl = al[e] * (da[e] - (float)ssum);
			float du = dl * (u[e] > 0.0f ? 1.0f : LEAKY_SLOPE);

			axpy2(dout, al[e], gi, du, as, dz + j * dout);
			axpy2(dout, al[e], gi, du, ar, grel + r * dout);
			axpy(dout, du, z + j * dout, gas);
			axpy(dout, du, rel + r * dout, gar);
			dusum += du;
		}
		/* The destination's terms summed over its messages. */
		axpy(dout, (float)dusum, z + i * dout, gad);
		axpy(dout, (float)dusum, ad, dz + i * dout);
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
	uint64_t n = g->n_nodes, k;
	float p = rng != NULL ? m->c.dropout : 0.0f;

	state_reserve(m, s, n, g->n_msgs);
	if (m->c.encoder == KG_GNN_RGCN && m->c.decomp == KG_GNN_BLOCK &&
	    L > 0)
		index_by_type(g, s);
	attr_forward(m, f, frow, lrow, n, s->h[0]);
	for (l = 0; l < L; l++) {
		size_t din = m->c.dims[l], dout = m->c.dims[l + 1];
		size_t nd = n * din;
		float *x = s->h[l], keep = 1.0f / (1.0f - p);

		for (k = 0; k < nd; k++) {
			s->mask[l][k] = p > 0.0f ?
			    (kg_rng_uniform(rng) < p ? 0.0f : keep) : 1.0f;
			s->hd[l][k] = x[k] * s->mask[l][k];
		}
		if (m->c.encoder == KG_GNN_RGCN)
			rgcn_forward(m, l, g, s->hd[l], s->pre[l], s);
		else
			attn_forward(m, l, g, s->hd[l], s->pre[l], s);
		for (k = 0; k < n * dout; k++) {
			float v = s->pre[l][k];

			s->h[l + 1][k] = (l + 1 < L && v < 0.0f) ? 0.0f : v;
		}
	}
}

void
kg_gnn_backward(const struct kg_gnn *m, const struct kg_gnn_graph *g,
    const struct kg_gnn_features *f, const int32_t *frow,
    const int32_t *lrow, struct kg_gnn_state *s, float *dout, float *grad)
{
	uint32_t l, L = m->c.n_layers;
	uint64_t n = g->n_nodes, k;
	float *G = dout;

	for (l = L; l-- > 0;) {
		size_t din = m->c.dims[l], dd = m->c.dims[l + 1];
		float *dx = (G == s->dh) ? s->dh2 : s->dh;

		if (l + 1 < L)
			for (k = 0; k < n * dd; k++)
				if (s->pre[l][k] < 0.0f)
					G[k] = 0.0f;
		if (m->c.encoder == KG_GNN_RGCN)
			rgcn_backward(m, l, g, s->hd[l], G, dx, s, grad);
		else
			attn_backward(m, l, g, s->hd[l], G, dx, s, grad);
		for (k = 0; k < n * din; k++)
			dx[k] *= s->mask[l][k];
		G = dx;
	}
	attr_backward(m, f, frow, lrow, n, G, grad);
}
