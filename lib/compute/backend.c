/* The backend seam (backend.h): device names, opening, dispatch. */
#include "compute/backend_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compute/devops_query.h"
#include "core/util.h"

int
kg_device_parse(const char *what, const char *s, struct kg_device *d)
{
	uint32_t n;

	if (strcmp(s, "cpu") == 0) {
		d->kind = KG_DEVICE_CPU;
		d->index = 0;
		return 0;
	}
	if (strcmp(s, "cuda") == 0) {
		d->kind = KG_DEVICE_CUDA;
		d->index = 0;
		return 0;
	}
	if (strncmp(s, "cuda:", 5) != 0) {
		kg_error("%s: unknown device '%s' (expected cpu, cuda or "
		    "cuda:N)", what, s);
		return -1;
	}
	if (kg_parse_u32(what, s + 5, 0, KG_DEVICE_MAX_INDEX, &n) < 0)
		return -1;
	d->kind = KG_DEVICE_CUDA;
	d->index = (int)n;
	return 0;
}

char *
kg_device_format(const struct kg_device *d, char *buf, size_t n)
{
	if (d->kind == KG_DEVICE_CPU)
		snprintf(buf, n, "cpu");
	else
		snprintf(buf, n, "cuda:%d", d->index);
	return buf;
}

int
kg_backend_have_cuda(void)
{
#if defined(KG_HAVE_CUDA)
	return 1;
#else
	return 0;
#endif
}

int
kg_backend_gpu_count(void)
{
#if defined(KG_HAVE_CUDA)
	char err[256];
	int n;

	if (kg_backend_cuda_count(&n, err, sizeof(err)) < 0)
		return 0;
	return n;
#else
	return 0;
#endif
}

int
kg_backend_check(const struct kg_device *d)
{
#if defined(KG_HAVE_CUDA)
	char err[256];
	int n;
#endif

	if (d->kind == KG_DEVICE_CPU)
		return 0;
#if defined(KG_HAVE_CUDA)
	if (kg_backend_cuda_count(&n, err, sizeof(err)) < 0) {
		kg_error("cuda:%d: no GPU is visible (%s)", d->index, err);
		return -1;
	}
	if (n == 0) {
		kg_error("cuda:%d: no GPU is visible (the CUDA runtime found "
		    "none)", d->index);
		return -1;
	}
	if (d->index >= n) {
		kg_error("cuda:%d: only %d GPU%s visible (cuda:0 to "
		    "cuda:%d)", d->index, n, n == 1 ? " is" : "s are", n - 1);
		return -1;
	}
	return 0;
#else
	kg_error("cuda:%d: this kgpipe was built without the CUDA backend "
	    "(rebuild with nvcc on PATH: make CUDA=1)", d->index);
	return -1;
#endif
}

struct kg_backend *
kg_backend_open(const struct kg_device *d)
{
	struct kg_backend *be;
	int rc;

	if (kg_backend_check(d) < 0)
		return NULL;
	be = kg_xcalloc(1, sizeof(*be));
	be->dev = *d;
#if defined(KG_HAVE_CUDA)
	rc = d->kind == KG_DEVICE_CPU ? kg_backend_cpu_init(be) :
	    kg_backend_cuda_init(be, d->index);
#else
	rc = kg_backend_cpu_init(be);
#endif
	if (rc < 0) {
		free(be);
		return NULL;
	}
	return be;
}

void
kg_backend_free(struct kg_backend *be)
{
	if (be == NULL)
		return;
	be->ops->release(be);
	free(be);
}

const char *
kg_backend_name(const struct kg_backend *be)
{
	return be->name;
}

struct kg_device
kg_backend_device(const struct kg_backend *be)
{
	return be->dev;
}

struct kg_be_counts
kg_backend_counts(const struct kg_backend *be)
{
	return be->counts;
}

void
kg_backend_counts_reset(struct kg_backend *be)
{
	memset(&be->counts, 0, sizeof(be->counts));
}

/* A copy (and, blocking, a wait for the device) that returned rc. */
static int
counted_copy(struct kg_backend *be, int rc, int blocking)
{
	if (rc == 0) {
		be->counts.copies++;
		be->counts.syncs += blocking != 0;
	}
	return rc;
}

void *
kg_be_alloc(struct kg_backend *be, size_t bytes)
{
	return be->ops->alloc(be, bytes);
}

void
kg_be_free(struct kg_backend *be, void *p)
{
	if (p != NULL)
		be->ops->dfree(be, p);
}

void *
kg_be_host_alloc(struct kg_backend *be, size_t bytes)
{
	return be->ops->host_alloc(be, bytes);
}

void
kg_be_host_free(struct kg_backend *be, void *p)
{
	if (p != NULL)
		be->ops->host_free(be, p);
}

int
kg_be_zero(struct kg_backend *be, void *dev, size_t bytes)
{
	if (bytes == 0)
		return 0;
	if (be->ops->zero(be, dev, bytes) < 0)
		return -1;
	be->counts.launches++;
	return 0;
}

int
kg_be_upload(struct kg_backend *be, void *dev, const void *host,
    size_t bytes)
{
	return bytes == 0 ? 0 : counted_copy(be, be->ops->copy(be, dev, host,
	    bytes, 1, 0), 1);
}

int
kg_be_download(struct kg_backend *be, void *host, const void *dev,
    size_t bytes)
{
	return bytes == 0 ? 0 : counted_copy(be, be->ops->copy(be, host, dev,
	    bytes, 0, 0), 1);
}

int
kg_be_upload_async(struct kg_backend *be, void *dev, const void *host,
    size_t bytes)
{
	return bytes == 0 ? 0 : counted_copy(be, be->ops->copy(be, dev, host,
	    bytes, 1, 1), 0);
}

int
kg_be_download_async(struct kg_backend *be, void *host, const void *dev,
    size_t bytes)
{
	return bytes == 0 ? 0 : counted_copy(be, be->ops->copy(be, host, dev,
	    bytes, 0, 1), 0);
}

int
kg_be_sync(struct kg_backend *be)
{
	if (be->ops->sync(be) < 0)
		return -1;
	be->counts.syncs++;
	return 0;
}

int
kg_be_upload_ordered(struct kg_backend *be, void *dev, const void *host,
    size_t bytes)
{
	return bytes == 0 ? 0 : counted_copy(be, be->ops->upload_ordered(be,
	    dev, host, bytes), 0);
}

/* An event number in range; 0, or -1 after kg_error(). */
static int
event_ok(const struct kg_backend *be, unsigned ev)
{
	if (ev < KG_BE_EVENTS)
		return 0;
	kg_error("%s: event %u (a backend holds %d)", be->name, ev,
	    KG_BE_EVENTS);
	return -1;
}

int
kg_be_event_record(struct kg_backend *be, unsigned ev)
{
	return event_ok(be, ev) < 0 ? -1 : be->ops->event_record(be, ev);
}

int
kg_be_event_wait(struct kg_backend *be, unsigned ev)
{
	if (event_ok(be, ev) < 0 || be->ops->event_wait(be, ev) < 0)
		return -1;
	be->counts.waits++;
	return 0;
}

int
kg_be_sgemm(struct kg_backend *be, enum kg_trans ta, enum kg_trans tb,
    size_t m, size_t n, size_t k, float alpha, const float *a, size_t lda,
    const float *b, size_t ldb, float beta, float *c, size_t ldc)
{
	if (m == 0 || n == 0)
		return 0;
	return be->ops->sgemm_batched(be, ta, tb, m, n, k, alpha, a, lda, 0,
	    b, ldb, 0, beta, c, ldc, 0, 1);
}

int
kg_be_sgemm_batched(struct kg_backend *be, enum kg_trans ta,
    enum kg_trans tb, size_t m, size_t n, size_t k, float alpha,
    const float *a, size_t lda, size_t sa, const float *b, size_t ldb,
    size_t sb, float beta, float *c, size_t ldc, size_t sc, size_t batch)
{
	if (m == 0 || n == 0 || batch == 0)
		return 0;
	return be->ops->sgemm_batched(be, ta, tb, m, n, k, alpha, a, lda, sa,
	    b, ldb, sb, beta, c, ldc, sc, batch);
}

int
kg_be_gather(struct kg_backend *be, size_t n, size_t d, const float *table,
    const int64_t *idx, float *out)
{
	return n == 0 || d == 0 ? 0 : be->ops->gather(be, n, d, table, idx,
	    out);
}

int
kg_be_scatter_add(struct kg_backend *be, size_t n, size_t d,
    const float *src, const int64_t *idx, float *table)
{
	return n == 0 || d == 0 ? 0 : be->ops->scatter_add(be, n, d, src, idx,
	    table);
}

/* The non-empty sets of rs to the backend, one launch; 0 or -1. */
static int
row_sets(struct kg_backend *be, const struct kg_dev_rowsets *rs, int scatter)
{
	struct kg_dev_rowsets nz;
	unsigned k;

	if (rs->nsets > KG_DEV_ROWSETS) {
		kg_error("%u row sets (at most %d)", rs->nsets, KG_DEV_ROWSETS);
		return -1;
	}
	memset(&nz, 0, sizeof(nz));
	for (k = 0; k < rs->nsets; k++)
		if (rs->n[k] > 0 && rs->d[k] > 0) {
			nz.src[nz.nsets] = rs->src[k];
			nz.idx[nz.nsets] = rs->idx[k];
			nz.dst[nz.nsets] = rs->dst[k];
			nz.n[nz.nsets] = rs->n[k];
			nz.d[nz.nsets++] = rs->d[k];
		}
	return nz.nsets == 0 ? 0 : be->ops->row_sets(be, &nz, scatter);
}

int
kg_be_gather_sets(struct kg_backend *be, const struct kg_dev_rowsets *rs)
{
	return row_sets(be, rs, 0);
}

int
kg_be_scatter_add_sets(struct kg_backend *be, const struct kg_dev_rowsets *rs)
{
	return row_sets(be, rs, 1);
}

size_t
kg_be_work_size(const struct kg_backend *be, enum kg_kern_sim sim,
    size_t nq, size_t nc)
{
	return be->ops->work_size(sim, nq, nc);
}

int
kg_be_chunk(struct kg_backend *be, enum kg_kern_sim sim, size_t nq,
    size_t nc, size_t d, float gamma, const float *q, const float *c,
    float *out, float *dist, float *work)
{
	if (nq == 0 || nc == 0)
		return 0;
	return be->ops->chunk(be, sim, nq, nc, d, gamma, q, c, out, dist,
	    work);
}

int
kg_be_chunk_backward(struct kg_backend *be, enum kg_kern_sim sim,
    size_t nq, size_t nc, size_t d, const float *q, const float *c,
    const float *g, float *dist, float *gq, float *gc, float *work)
{
	if (nq == 0 || d == 0)
		return 0;
	if (nc == 0)
		return kg_be_zero(be, gq, nq * d * sizeof(*gq));
	return be->ops->chunk_backward(be, sim, nq, nc, d, q, c, g, dist, gq,
	    gc, work);
}

int
kg_be_pairs(struct kg_backend *be, enum kg_kern_sim sim, size_t n,
    size_t d, float gamma, const float *q, const float *c, float *out,
    float *dist)
{
	return n == 0 ? 0 : be->ops->pairs(be, sim, n, d, gamma, q, c, out,
	    dist);
}

int
kg_be_pairs_backward(struct kg_backend *be, enum kg_kern_sim sim, size_t n,
    size_t d, const float *q, const float *c, const float *g,
    const float *dist, float *gq, float *gc)
{
	return n == 0 || d == 0 ? 0 : be->ops->pairs_backward(be, sim, n, d,
	    q, c, g, dist, gq, gc);
}

size_t
kg_qform_width(enum kg_qform f, size_t d)
{
	return kg_dev_qform_width((int)f, d);
}

int
kg_be_query(struct kg_backend *be, enum kg_qform form, int side, size_t n,
    size_t d, const float *fixed, const float *rel, float *q)
{
	return n == 0 || d == 0 ? 0 : be->ops->query(be, form, side, n, d,
	    fixed, rel, q);
}

int
kg_be_query_backward(struct kg_backend *be, enum kg_qform form, int side,
    size_t n, size_t d, const float *fixed, const float *rel,
    const float *gq, float *gfixed, float *grel)
{
	return n == 0 || d == 0 ? 0 : be->ops->query_backward(be, form, side,
	    n, d, fixed, rel, gq, gfixed, grel);
}

int
kg_be_scale(struct kg_backend *be, size_t n, float alpha, float *x)
{
	return n == 0 ? 0 : be->ops->scale(be, n, alpha, x);
}

int
kg_be_dsum(struct kg_backend *be, size_t n, const double *x, double *acc)
{
	return n == 0 ? 0 : be->ops->dsum(be, n, x, acc);
}

int
kg_be_loss(struct kg_backend *be, const struct kg_loss *l, size_t rows,
    size_t n, const float *pos, const float *neg, const uint8_t *skip,
    float *gpos, float *gneg, double *loss)
{
	return rows == 0 ? 0 : be->ops->loss(be, l, rows, n, pos, neg, skip,
	    gpos, gneg, loss);
}

int
kg_be_loss_sum(struct kg_backend *be, const struct kg_loss *l, size_t rows,
    size_t n, const float *pos, const float *neg, const uint8_t *skip,
    float scale, float *gpos, float *gneg, double *loss, double *acc)
{
	return rows == 0 ? 0 : be->ops->loss_sum(be, l, rows, n, pos, neg,
	    skip, scale, gpos, gneg, loss, acc);
}

int
kg_be_adagrad(struct kg_backend *be, size_t n, size_t d, float lr,
    const int64_t *idx, const float *grad, float *table, float *state)
{
	struct kg_adam a = KG_ADAM_INIT;

	a.lr = lr;
	return n == 0 || d == 0 ? 0 : be->ops->optim(be, KG_BE_ADAGRAD, n, d,
	    &a, idx, grad, table, state);
}

int
kg_be_adagrad_elem(struct kg_backend *be, size_t n, size_t d, float lr,
    const int64_t *idx, const float *grad, float *table, float *state)
{
	struct kg_adam a = KG_ADAM_INIT;

	a.lr = lr;
	return n == 0 || d == 0 ? 0 : be->ops->optim(be, KG_BE_ADAGRAD_ELEM, n,
	    d, &a, idx, grad, table, state);
}

int
kg_be_adam(struct kg_backend *be, size_t n, size_t d,
    const struct kg_adam *a, const int64_t *idx, const float *grad,
    float *table, float *state)
{
	return n == 0 || d == 0 ? 0 : be->ops->optim(be, KG_BE_ADAM, n, d, a,
	    idx, grad, table, state);
}

int
kg_be_regularise(struct kg_backend *be, size_t n, const float *x, float *g,
    double coef, unsigned p, double scale, double *value)
{
	if (p != 2 && p != 3) {
		kg_error("regulariser power %u (expected 2 or 3)", p);
		return -1;
	}
	return n == 0 ? 0 : be->ops->regularise(be, n, x, g, coef, p, scale,
	    value);
}

int
kg_be_regularise_sets(struct kg_backend *be, const struct kg_dev_regsets *rs,
    double coef, unsigned p, double scale, double *value)
{
	struct kg_dev_regsets nz;
	unsigned k;

	if (p != 2 && p != 3) {
		kg_error("regulariser power %u (expected 2 or 3)", p);
		return -1;
	}
	if (rs->nsets > KG_DEV_REGSETS) {
		kg_error("%u regulariser sets (at most %d)", rs->nsets,
		    KG_DEV_REGSETS);
		return -1;
	}
	memset(&nz, 0, sizeof(nz));
	for (k = 0; k < rs->nsets; k++)
		if (rs->n[k] > 0) {
			nz.x[nz.nsets] = rs->x[k];
			nz.g[nz.nsets] = rs->g[k];
			nz.n[nz.nsets++] = rs->n[k];
		}
	return nz.nsets == 0 ? 0 : be->ops->regularise_sets(be, &nz, coef, p,
	    scale, value);
}

int
kg_be_rank_counts(struct kg_backend *be, size_t nq, size_t nc,
    const float *scores, const float *s, const int64_t *excl_off,
    const int64_t *excl, uint64_t *greater, uint64_t *equal)
{
	if (nq == 0 || nc == 0)
		return 0;
	return be->ops->rank_counts(be, nq, nc, scores, s, excl_off, excl,
	    greater, equal);
}

int
kg_be_transr(struct kg_backend *be, int sign, size_t n, size_t d, size_t k,
    const float *x, const float *rel, float *y)
{
	return n == 0 || k == 0 ? 0 : be->ops->transr(be, sign, n, d, k, x,
	    rel, y);
}

int
kg_be_transr_backward(struct kg_backend *be, int sign, size_t n, size_t d,
    size_t k, const float *x, const float *rel, const float *gy, float *gx,
    float *grel)
{
	if (n == 0 || k == 0 || (gx == NULL && grel == NULL))
		return 0;
	return be->ops->transr_backward(be, sign, n, d, k, x, rel, gy, gx,
	    grel);
}

int
kg_be_scatter_sqnorm(struct kg_backend *be, size_t n, size_t d,
    const float *src, const int64_t *idx, float *out)
{
	return n == 0 || d == 0 ? 0 : be->ops->scatter_sqnorm(be, n, d, src,
	    idx, out);
}

int
kg_be_adagrad_sq(struct kg_backend *be, size_t n, size_t d, float lr,
    const int64_t *idx, const float *grad, const float *sq, float *table,
    float *state)
{
	return n == 0 || d == 0 ? 0 : be->ops->adagrad_sq(be, n, d, lr, idx,
	    grad, sq, table, state);
}
