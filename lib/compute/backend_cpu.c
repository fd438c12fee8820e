/*
 * The CPU backend (backend.h): every operation calls the code the CPU
 * paths call today (kernels.h, compute.h, rowops.h) on the calling
 * thread, so its results are those functions' bits.  Device memory is
 * host memory; copies are memcpy and complete at once, unless a test
 * defers the asynchronous ones (kg_backend_cpu_defer_copies), which also
 * watches the host memory of ordered uploads.
 */
#include "compute/backend_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compute/devops_optim.h"
#include "compute/devops_query.h"
#include "compute/devops_transr.h"
#include "core/util.h"

/* Asynchronous copies a test deferred, run at the next sync in call
 * order; a full queue runs then, which a copy stream may also do. */
#define CPU_COPY_QUEUE 64

/* Ordered uploads whose host memory a deferring backend watches. */
#define CPU_WATCH 16

struct cpu_impl {
	int defer;
	size_t n;
	struct {
		void *dst;
		const void *src;
		size_t bytes;
	} q[CPU_COPY_QUEUE];
	/* While deferring: the ordered uploads whose event the host has not
	 * waited for, their source's checksum, the event recorded after
	 * each (-1: none yet). */
	size_t nw;
	struct {
		const void *src;
		size_t bytes;
		uint64_t sum;
		int ev;
	} w[CPU_WATCH];
};

/* FNV-1a over bytes: what a watched source held. */
static uint64_t
checksum(const void *p, size_t bytes)
{
	const unsigned char *b = p;
	uint64_t h = 14695981039346656037ULL;
	size_t i;

	for (i = 0; i < bytes; i++)
		h = (h ^ b[i]) * 1099511628211ULL;
	return h;
}

/*
 * Every watched source unchanged; then drop those of event ev (-2: all,
 * -3: none).  A GPU may run an ordered upload any time until the event
 * behind it completes, so a host that changed its source before waiting
 * for that event may have sent the device the new bytes or the old:
 * 0, or -1 after kg_error() saying so.
 */
static int
check_watch(struct kg_backend *be, int ev)
{
	struct cpu_impl *c = be->impl;
	size_t i, k = 0;

	for (i = 0; i < c->nw; i++)
		if (checksum(c->w[i].src, c->w[i].bytes) != c->w[i].sum) {
			kg_error("%s: the host memory of an ordered upload "
			    "(%zu bytes) changed before the event after it "
			    "was waited for", be->name, c->w[i].bytes);
			c->nw = 0;
			return -1;
		}
	for (i = 0; i < c->nw; i++)
		if (ev != -2 && c->w[i].ev != ev)
			c->w[k++] = c->w[i];
	c->nw = ev == -3 ? c->nw : k;
	return 0;
}

static void
run_copies(struct cpu_impl *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		memmove(c->q[i].dst, c->q[i].src, c->q[i].bytes);
	c->n = 0;
}

/*
 * Count n launches: what the CUDA backend (cuda/backend_cuda.cu) queues
 * for the same call, so that backend.h's counters read here what a GPU
 * would; 0.  One per operation but where that backend makes two: both
 * sides of a DOT chunk's backward (two products), TransR's backward
 * with both gradients, the GNN operations below their own table.
 */
static int
launched(struct kg_backend *be, uint64_t n)
{
	be->counts.launches += n;
	return 0;
}

static void
cpu_release(struct kg_backend *be)
{
	free(be->impl);
}

static void *
cpu_alloc(struct kg_backend *be, size_t bytes)
{
	(void)be;
	return kg_xmalloc(bytes > 0 ? bytes : 1);
}

static void
cpu_free(struct kg_backend *be, void *p)
{
	(void)be;
	free(p);
}

static int
cpu_zero(struct kg_backend *be, void *p, size_t bytes)
{
	(void)be;
	memset(p, 0, bytes);
	return 0;
}

static int
cpu_copy(struct kg_backend *be, void *dst, const void *src, size_t bytes,
    int to_dev, int async)
{
	struct cpu_impl *c = be->impl;

	(void)to_dev;
	if (async && c->defer) {
		if (c->n == CPU_COPY_QUEUE)
			run_copies(c);
		c->q[c->n].dst = dst;
		c->q[c->n].src = src;
		c->q[c->n].bytes = bytes;
		c->n++;
		return 0;
	}
	memmove(dst, src, bytes);
	/* A blocking copy waits for the compute stream: its ordered
	 * uploads have run. */
	return async ? 0 : check_watch(be, -2);
}

static int
cpu_sync(struct kg_backend *be)
{
	run_copies(be->impl);
	return check_watch(be, -2);
}

/*
 * On the compute stream, which has run everything before it: a copy at
 * once.  Deferring, the source is watched until the host waits for the
 * event recorded after the copy (or syncs), as a GPU may read it that
 * late.
 */
static int
cpu_upload_ordered(struct kg_backend *be, void *dst, const void *src,
    size_t bytes)
{
	struct cpu_impl *c = be->impl;

	memmove(dst, src, bytes);
	if (!c->defer)
		return 0;
	if (check_watch(be, -3) < 0)
		return -1;
	if (c->nw == CPU_WATCH) {
		kg_error("%s: more than %d ordered uploads wait for their "
		    "events", be->name, CPU_WATCH);
		return -1;
	}
	c->w[c->nw].src = src;
	c->w[c->nw].bytes = bytes;
	c->w[c->nw].sum = checksum(src, bytes);
	c->w[c->nw++].ev = -1;
	return 0;
}

static int
cpu_event_record(struct kg_backend *be, unsigned ev)
{
	struct cpu_impl *c = be->impl;
	size_t i;

	if (check_watch(be, -3) < 0)
		return -1;
	for (i = 0; i < c->nw; i++)
		if (c->w[i].ev < 0)
			c->w[i].ev = (int)ev;
	return 0;
}

static int
cpu_event_wait(struct kg_backend *be, unsigned ev)
{
	return check_watch(be, (int)ev);
}

int
kg_backend_cpu_defer_copies(struct kg_backend *be, int on)
{
	struct cpu_impl *c = be->impl;

	if (be->ops->sync != cpu_sync) {
		kg_error("%s: only a CPU backend defers copies", be->name);
		return -1;
	}
	run_copies(c);
	c->nw = 0;
	c->defer = on != 0;
	return 0;
}

static int
cpu_sgemm_batched(struct kg_backend *be, enum kg_trans ta, enum kg_trans tb,
    size_t m, size_t n, size_t k, float alpha, const float *a, size_t lda,
    size_t sa, const float *b, size_t ldb, size_t sb, float beta, float *c,
    size_t ldc, size_t sc, size_t batch)
{
	size_t i;

	for (i = 0; i < batch; i++)
		kg_sgemm(ta, tb, m, n, k, alpha, a + i * sa, lda, b + i * sb,
		    ldb, beta, c + i * sc, ldc);
	return launched(be, 1);
}

static int
cpu_gather(struct kg_backend *be, size_t n, size_t d, const float *table,
    const int64_t *idx, float *out)
{
	size_t i;

	for (i = 0; i < n; i++)
		memcpy(out + i * d, table + (size_t)idx[i] * d,
		    d * sizeof(*out));
	return launched(be, 1);
}

static int
cpu_scatter_add(struct kg_backend *be, size_t n, size_t d, const float *src,
    const int64_t *idx, float *table)
{
	size_t i, l;

	for (i = 0; i < n; i++) {
		float *row = table + (size_t)idx[i] * d;
		const float *s = src + i * d;

		for (l = 0; l < d; l++)
			row[l] += s[l];
	}
	return launched(be, 1);
}

/* Each set as cpu_gather or cpu_scatter_add does it, in set order; one
 * launch. */
static int
cpu_row_sets(struct kg_backend *be, const struct kg_dev_rowsets *rs,
    int scatter)
{
	size_t i, l, d;
	unsigned k;

	for (k = 0; k < rs->nsets; k++) {
		d = rs->d[k];
		for (i = 0; i < rs->n[k]; i++) {
			const float *s;
			float *o;

			if (!scatter) {
				memcpy(rs->dst[k] + i * d, rs->src[k] +
				    (size_t)rs->idx[k][i] * d,
				    d * sizeof(float));
				continue;
			}
			s = rs->src[k] + i * d;
			o = rs->dst[k] + (size_t)rs->idx[k][i] * d;
			for (l = 0; l < d; l++)
				o[l] += s[l];
		}
	}
	return launched(be, 1);
}

static int
cpu_chunk(struct kg_backend *be, enum kg_kern_sim sim, size_t nq, size_t nc,
    size_t d, float gamma, const float *q, const float *c, float *out,
    float *dist, float *work)
{
	kg_kern_chunk(sim, nq, nc, d, gamma, q, c, out, dist, work);
	return launched(be, 1);
}

static int
cpu_chunk_backward(struct kg_backend *be, enum kg_kern_sim sim, size_t nq,
    size_t nc, size_t d, const float *q, const float *c, const float *g,
    float *dist, float *gq, float *gc, float *work)
{
	kg_kern_chunk_backward(sim, nq, nc, d, q, c, g, dist, gq, gc, work);
	return launched(be, sim == KG_KERN_DOT && gc != NULL ? 2 : 1);
}

static int
cpu_pairs(struct kg_backend *be, enum kg_kern_sim sim, size_t n, size_t d,
    float gamma, const float *q, const float *c, float *out, float *dist)
{
	kg_kern_pairs(sim, n, d, gamma, q, c, out, dist);
	return launched(be, 1);
}

static int
cpu_pairs_backward(struct kg_backend *be, enum kg_kern_sim sim, size_t n,
    size_t d, const float *q, const float *c, const float *g,
    const float *dist, float *gq, float *gc)
{
	kg_kern_pairs_backward(sim, n, d, q, c, g, dist, gq, gc);
	return launched(be, 1);
}

/* The query forms: devops_query.h's element functions in row order (the
 * kge code they mirror sits above lib/compute). */
static int
cpu_query(struct kg_backend *be, enum kg_qform form, int side, size_t n,
    size_t d, const float *fixed, const float *rel, float *q)
{
	size_t rw = kg_dev_qform_width((int)form, d), i, l;

	for (i = 0; i < n; i++)
		for (l = 0; l < d; l++)
			q[i * d + l] = kg_dev_query_elem((int)form, side, d,
			    fixed + i * d, rel + i * rw, l);
	return launched(be, 1);
}

static int
cpu_query_backward(struct kg_backend *be, enum kg_qform form, int side,
    size_t n, size_t d, const float *fixed, const float *rel,
    const float *gq, float *gfixed, float *grel)
{
	size_t rw = kg_dev_qform_width((int)form, d), i, l;

	for (i = 0; i < n; i++) {
		const float *f = fixed + i * d, *r = rel + i * rw;
		const float *g = gq + i * d;

		for (l = 0; l < d; l++)
			gfixed[i * d + l] += kg_dev_query_df((int)form, side, d,
			    f, r, g, l);
		for (l = 0; l < rw; l++)
			grel[i * rw + l] += kg_dev_query_dr((int)form, side, d,
			    f, r, g, l);
	}
	return launched(be, 1);
}

static int
cpu_scale(struct kg_backend *be, size_t n, float alpha, float *x)
{
	size_t i;

	for (i = 0; i < n; i++)
		x[i] *= alpha;
	return launched(be, 1);
}

static int
cpu_dsum(struct kg_backend *be, size_t n, const double *x, double *acc)
{
	double s = *acc;
	size_t i;

	for (i = 0; i < n; i++)
		s += x[i];
	*acc = s;
	return launched(be, 1);
}

static int
cpu_loss(struct kg_backend *be, const struct kg_loss *l, size_t rows,
    size_t n, const float *pos, const float *neg, const uint8_t *skip,
    float *gpos, float *gneg, double *loss)
{
	size_t i;

	for (i = 0; i < rows; i++)
		loss[i] = kg_loss_eval(l, pos[i], neg + i * n, n,
		    skip != NULL ? skip + i * n : NULL, gpos + i, gneg + i * n);
	return launched(be, 1);
}

static int
cpu_loss_sum(struct kg_backend *be, const struct kg_loss *l, size_t rows,
    size_t n, const float *pos, const float *neg, const uint8_t *skip,
    float scale, float *gpos, float *gneg, double *loss, double *acc)
{
	double s;
	size_t i;

	for (i = 0; i < rows; i++)
		loss[i] = kg_loss_eval(l, pos[i], neg + i * n, n,
		    skip != NULL ? skip + i * n : NULL, gpos + i, gneg + i * n);
	s = *acc;
	for (i = 0; i < rows; i++)
		s += loss[i];
	*acc = s;
	for (i = 0; i < rows * n; i++)
		gneg[i] *= scale;
	for (i = 0; i < rows; i++)
		gpos[i] *= scale;
	return launched(be, 1);
}

static int
cpu_optim(struct kg_backend *be, enum kg_be_optim kind, size_t n, size_t d,
    const struct kg_adam *a, const int64_t *idx, const float *grad,
    float *table, float *state)
{
	size_t i;

	for (i = 0; i < n; i++) {
		size_t r = (size_t)idx[i];
		float *w = table + r * d;
		const float *g = grad + i * d;

		switch (kind) {
		case KG_BE_ADAGRAD:
			kg_adagrad_row(w, state + r, g, d, a->lr);
			break;
		case KG_BE_ADAGRAD_ELEM:
			kg_adagrad_elem_row(w, state + r * d, g, d, a->lr);
			break;
		case KG_BE_ADAM:
			kg_adam_row(w, state + r * (2 * d + 1), g, d, a);
			break;
		}
	}
	return launched(be, 1);
}

static int
cpu_regularise(struct kg_backend *be, size_t n, const float *x, float *g,
    double coef, unsigned p, double scale, double *value)
{
	*value += kg_regularise(x, g, n, coef, p, scale);
	return launched(be, 1);
}

static int
cpu_regularise_sets(struct kg_backend *be, const struct kg_dev_regsets *rs,
    double coef, unsigned p, double scale, double *value)
{
	unsigned k;

	for (k = 0; k < rs->nsets; k++)
		*value += kg_regularise(rs->x[k], rs->g[k], rs->n[k], coef, p,
		    scale);
	return launched(be, 1);
}

#define RANK_SPAN ((size_t)1 << 31)

static int
cpu_rank_counts(struct kg_backend *be, size_t nq, size_t nc,
    const float *scores, const float *s, const int64_t *excl_off,
    const int64_t *excl, uint64_t *greater, uint64_t *equal)
{
	size_t i, j;
	int64_t k;

	for (i = 0; i < nq; i++) {
		const float *row = scores + i * nc;
		uint64_t g = 0, e = 0;
		float si = s[i];
		size_t j0, j1;

		if (si != si)
			continue;
		/* 32-bit counts vectorise: spans of at most 2^31 columns. */
		for (j0 = 0; j0 < nc; j0 = j1) {
			uint32_t g32 = 0, e32 = 0;

			j1 = nc - j0 > RANK_SPAN ? j0 + RANK_SPAN : nc;
#pragma omp simd reduction(+:g32, e32)
			for (j = j0; j < j1; j++) {
				g32 += row[j] > si;
				e32 += row[j] == si;
			}
			g += g32;
			e += e32;
		}
		for (k = excl_off != NULL ? excl_off[i] : 0;
		    excl_off != NULL && k < excl_off[i + 1]; k++) {
			g -= row[excl[k]] > si;
			e -= row[excl[k]] == si;
		}
		greater[i] += g;
		equal[i] += e;
	}
	return launched(be, 1);
}

/* TransR: devops_transr.h's element functions in row order (the bits of
 * score.c's TransR query and projection, which they mirror). */
static int
cpu_transr(struct kg_backend *be, int sign, size_t n, size_t d, size_t k,
    const float *x, const float *rel, float *y)
{
	size_t rw = k + k * d, i, a;

	for (i = 0; i < n; i++)
		for (a = 0; a < k; a++)
			y[i * k + a] = kg_dev_transr_elem(sign, d, k, x + i * d,
			    rel + i * rw, a);
	return launched(be, 1);
}

static int
cpu_transr_backward(struct kg_backend *be, int sign, size_t n, size_t d,
    size_t k, const float *x, const float *rel, const float *gy, float *gx,
    float *grel)
{
	size_t rw = k + k * d, i, l;

	for (i = 0; i < n; i++) {
		if (gx != NULL)
			for (l = 0; l < d; l++)
				gx[i * d + l] += kg_dev_transr_dx(d, k,
				    rel + i * rw, gy + i * k, l);
		if (grel != NULL)
			for (l = 0; l < rw; l++)
				grel[i * rw + l] += kg_dev_transr_drel(sign, d,
				    k, x + i * d, gy + i * k, l);
	}
	return launched(be, (uint64_t)(gx != NULL && d > 0) + (grel != NULL));
}

/* As kg_neg_pool_add_grad sums a slot's squares. */
static int
cpu_scatter_sqnorm(struct kg_backend *be, size_t n, size_t d,
    const float *src, const int64_t *idx, float *out)
{
	size_t i, l;

	for (i = 0; i < n; i++) {
		const float *g = src + i * d;
		float ss = 0.0f;

#pragma omp simd reduction(+:ss)
		for (l = 0; l < d; l++)
			ss += g[l] * g[l];
		out[idx[i]] += ss / (float)d;
	}
	return launched(be, 1);
}

/* As lib/kge/train_bucket.c's apply_slots steps a pool slot. */
static int
cpu_adagrad_sq(struct kg_backend *be, size_t n, size_t d, float lr,
    const int64_t *idx, const float *grad, const float *sq, float *table,
    float *state)
{
	size_t i, l;

	for (i = 0; i < n; i++) {
		size_t r = (size_t)idx[i];
		float *w = table + r * d, step;
		const float *g = grad + i * d;

		if (sq[i] == 0.0f) {
			kg_adagrad_row(w, state + r, g, d, lr);
			continue;
		}
		state[r] += sq[i];
		step = kg_dev_adagrad_step(state[r], lr);
		for (l = 0; l < d; l++)
			w[l] -= step * g[l];
	}
	return launched(be, 1);
}

static const struct kg_backend_ops cpu_ops = {
	.release = cpu_release,
	.alloc = cpu_alloc,
	.dfree = cpu_free,
	.host_alloc = cpu_alloc,
	.host_free = cpu_free,
	.zero = cpu_zero,
	.copy = cpu_copy,
	.sync = cpu_sync,
	.upload_ordered = cpu_upload_ordered,
	.event_record = cpu_event_record,
	.event_wait = cpu_event_wait,
	.sgemm_batched = cpu_sgemm_batched,
	.gather = cpu_gather,
	.scatter_add = cpu_scatter_add,
	.row_sets = cpu_row_sets,
	.work_size = kg_kern_work_size,
	.chunk = cpu_chunk,
	.chunk_backward = cpu_chunk_backward,
	.pairs = cpu_pairs,
	.pairs_backward = cpu_pairs_backward,
	.query = cpu_query,
	.query_backward = cpu_query_backward,
	.scale = cpu_scale,
	.dsum = cpu_dsum,
	.loss = cpu_loss,
	.loss_sum = cpu_loss_sum,
	.optim = cpu_optim,
	.regularise = cpu_regularise,
	.regularise_sets = cpu_regularise_sets,
	.rank_counts = cpu_rank_counts,
	.transr = cpu_transr,
	.transr_backward = cpu_transr_backward,
	.scatter_sqnorm = cpu_scatter_sqnorm,
	.adagrad_sq = cpu_adagrad_sq,
};

/*
 * The GNN operations (backend_cpu_gnn.c), each counted as the CUDA
 * backend launches it: one kernel, two for Adam (the elements, then the
 * step count) and for a split sum (the parts, then their join), none
 * for an attention pass with no threads.
 */
#define CPU_GNN kg_backend_cpu_gnn_ops

static int
cg_seg_sum(struct kg_backend *be, size_t n_seg, size_t d,
    const struct kg_dev_seg *sg, const float *x, int beta, float *out,
    size_t ldo)
{
	return CPU_GNN.seg_sum(be, n_seg, d, sg, x, beta, out, ldo) < 0 ? -1 :
	    launched(be, 1);
}

static int
cg_edge_coef(struct kg_backend *be, size_t n, size_t nb, const float *norm,
    const int64_t *type, const float *a, float *w)
{
	return CPU_GNN.edge_coef(be, n, nb, norm, type, a, w) < 0 ? -1 :
	    launched(be, 1);
}

static int
cg_edge_dot(struct kg_backend *be, size_t n, size_t d, const float *a,
    const int64_t *ia, const float *b, const int64_t *ib, float *out)
{
	return CPU_GNN.edge_dot(be, n, d, a, ia, b, ib, out) < 0 ? -1 :
	    launched(be, 1);
}

static int
cg_fill_rows(struct kg_backend *be, size_t n, size_t d, const float *row,
    float *out)
{
	return CPU_GNN.fill_rows(be, n, d, row, out) < 0 ? -1 :
	    launched(be, 1);
}

static int
cg_mul(struct kg_backend *be, size_t n, const float *a, const float *x,
    float *y)
{
	return CPU_GNN.mul(be, n, a, x, y) < 0 ? -1 : launched(be, 1);
}

static int
cg_relu(struct kg_backend *be, size_t n, const float *x, float *y)
{
	return CPU_GNN.relu(be, n, x, y) < 0 ? -1 : launched(be, 1);
}

static int
cg_relu_backward(struct kg_backend *be, size_t n, const float *pre,
    float *g)
{
	return CPU_GNN.relu_backward(be, n, pre, g) < 0 ? -1 :
	    launched(be, 1);
}

static int
cg_adam_flat(struct kg_backend *be, size_t n, const struct kg_adam *a,
    const float *grad, float *w, float *state)
{
	return CPU_GNN.adam_flat(be, n, a, grad, w, state) < 0 ? -1 :
	    launched(be, 2);
}

static int
cg_seg_sum_split(struct kg_backend *be, size_t n_seg, size_t d,
    size_t parts, const struct kg_dev_seg *sg, const float *x, int beta,
    float *out, size_t ldo, float *tmp)
{
	return CPU_GNN.seg_sum_split(be, n_seg, d, parts, sg, x, beta, out, ldo,
	    tmp) < 0 ? -1 : launched(be, parts <= 1 ? 1 : 2);
}

/* The threads of pass's launch on a GPU (cuda/backend_cuda.cu). */
static size_t
attn_threads(enum kg_be_attn_pass pass, const struct kg_dev_attn *at)
{
	switch (pass) {
	case KG_BE_ATTN_SCORES:
	case KG_BE_ATTN_BACK_SCORES:
		return at->n_dst;
	case KG_BE_ATTN_MSGS:
		return at->n_dst * at->d;
	case KG_BE_ATTN_BACK_DZ:
		return at->n_src * at->d;
	case KG_BE_ATTN_BACK_REL:
		return at->n_types * at->d;
	}
	return 0;
}

static int
cg_attn(struct kg_backend *be, enum kg_be_attn_pass pass,
    const struct kg_dev_attn *at, const float *G, float *out)
{
	return CPU_GNN.attn(be, pass, at, G, out) < 0 ? -1 :
	    launched(be, attn_threads(pass, at) > 0);
}

static const struct kg_backend_gnn_ops cpu_gnn_counted = {
	.seg_sum = cg_seg_sum,
	.edge_coef = cg_edge_coef,
	.edge_dot = cg_edge_dot,
	.fill_rows = cg_fill_rows,
	.mul = cg_mul,
	.relu = cg_relu,
	.relu_backward = cg_relu_backward,
	.adam_flat = cg_adam_flat,
	.seg_sum_split = cg_seg_sum_split,
	.attn = cg_attn,
};

const char *
kg_backend_cpu_name(void)
{
	static char name[96];

	if (name[0] == '\0')
		snprintf(name, sizeof(name), "cpu:%s", kg_compute_name());
	return name;
}

int
kg_backend_cpu_init(struct kg_backend *be)
{
	kg_compute_init();
	be->ops = &cpu_ops;
	be->gnn = &cpu_gnn_counted;
	be->text = &kg_backend_cpu_text_ops;
	snprintf(be->name, sizeof(be->name), "%s", kg_backend_cpu_name());
	be->impl = kg_xcalloc(1, sizeof(struct cpu_impl));
	return 0;
}
