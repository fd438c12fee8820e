/*
 * The inside of struct kg_backend (backend.h): a table of operations
 * each backend fills (backend_cpu.c, cuda/backend_cuda.cu) and backend.c
 * dispatches to.  Internal to lib/compute; valid C11 and C++ (the CUDA
 * file includes it), so no restrict here.
 *
 * The dispatchers in backend.c return early for empty work, so no
 * operation below is called with n, rows, m or nq x nc of 0 (an
 * attention pass may be: its sets are checked by the backend).
 */
#ifndef KG_BACKEND_IMPL_H
#define KG_BACKEND_IMPL_H

#include "compute/backend.h"

enum kg_be_optim { KG_BE_ADAGRAD, KG_BE_ADAGRAD_ELEM, KG_BE_ADAM };

struct kg_backend_ops {
	void (*release)(struct kg_backend *be);
	void *(*alloc)(struct kg_backend *be, size_t bytes);
	void (*dfree)(struct kg_backend *be, void *p);
	void *(*host_alloc)(struct kg_backend *be, size_t bytes);
	void (*host_free)(struct kg_backend *be, void *p);
	int (*zero)(struct kg_backend *be, void *p, size_t bytes);
	/* to_dev: host to device; async: on the copy stream. */
	int (*copy)(struct kg_backend *be, void *dst, const void *src,
	    size_t bytes, int to_dev, int async);
	int (*sync)(struct kg_backend *be);
	/* backend.h's kg_be_upload_ordered and events. */
	int (*upload_ordered)(struct kg_backend *be, void *dst,
	    const void *src, size_t bytes);
	int (*event_record)(struct kg_backend *be, unsigned ev);
	int (*event_wait)(struct kg_backend *be, unsigned ev);
	int (*sgemm_batched)(struct kg_backend *be, enum kg_trans ta,
	    enum kg_trans tb, size_t m, size_t n, size_t k, float alpha,
	    const float *a, size_t lda, size_t sa, const float *b, size_t ldb,
	    size_t sb, float beta, float *c, size_t ldc, size_t sc,
	    size_t batch);
	int (*gather)(struct kg_backend *be, size_t n, size_t d,
	    const float *table, const int64_t *idx, float *out);
	int (*scatter_add)(struct kg_backend *be, size_t n, size_t d,
	    const float *src, const int64_t *idx, float *table);
	/* rs: 1 to KG_DEV_ROWSETS sets, none empty; scatter 0: gather. */
	int (*row_sets)(struct kg_backend *be, const struct kg_dev_rowsets *rs,
	    int scatter);
	size_t (*work_size)(enum kg_kern_sim sim, size_t nq, size_t nc);
	int (*chunk)(struct kg_backend *be, enum kg_kern_sim sim, size_t nq,
	    size_t nc, size_t d, float gamma, const float *q, const float *c,
	    float *out, float *dist, float *work);
	int (*chunk_backward)(struct kg_backend *be, enum kg_kern_sim sim,
	    size_t nq, size_t nc, size_t d, const float *q, const float *c,
	    const float *g, float *dist, float *gq, float *gc, float *work);
	int (*pairs)(struct kg_backend *be, enum kg_kern_sim sim, size_t n,
	    size_t d, float gamma, const float *q, const float *c, float *out,
	    float *dist);
	int (*pairs_backward)(struct kg_backend *be, enum kg_kern_sim sim,
	    size_t n, size_t d, const float *q, const float *c,
	    const float *g, const float *dist, float *gq, float *gc);
	int (*query)(struct kg_backend *be, enum kg_qform form, int side,
	    size_t n, size_t d, const float *fixed, const float *rel,
	    float *q);
	int (*query_backward)(struct kg_backend *be, enum kg_qform form,
	    int side, size_t n, size_t d, const float *fixed,
	    const float *rel, const float *gq, float *gfixed, float *grel);
	int (*scale)(struct kg_backend *be, size_t n, float alpha, float *x);
	int (*dsum)(struct kg_backend *be, size_t n, const double *x,
	    double *acc);
	int (*loss)(struct kg_backend *be, const struct kg_loss *l,
	    size_t rows, size_t n, const float *pos, const float *neg,
	    const uint8_t *skip, float *gpos, float *gneg, double *loss);
	int (*loss_sum)(struct kg_backend *be, const struct kg_loss *l,
	    size_t rows, size_t n, const float *pos, const float *neg,
	    const uint8_t *skip, float scale, float *gpos, float *gneg,
	    double *loss, double *acc);
	/* a->lr is the learning rate of every kind. */
	int (*optim)(struct kg_backend *be, enum kg_be_optim kind, size_t n,
	    size_t d, const struct kg_adam *a, const int64_t *idx,
	    const float *grad, float *table, float *state);
	int (*regularise)(struct kg_backend *be, size_t n, const float *x,
	    float *g, double coef, unsigned p, double scale, double *value);
	/* rs: 1 to KG_DEV_REGSETS sets, none empty. */
	int (*regularise_sets)(struct kg_backend *be,
	    const struct kg_dev_regsets *rs, double coef, unsigned p,
	    double scale, double *value);
	int (*rank_counts)(struct kg_backend *be, size_t nq, size_t nc,
	    const float *scores, const float *s, const int64_t *excl_off,
	    const int64_t *excl, uint64_t *greater, uint64_t *equal);
	/* TransR (backend.h's kg_be_transr*): gx, grel may be NULL. */
	int (*transr)(struct kg_backend *be, int sign, size_t n, size_t d,
	    size_t k, const float *x, const float *rel, float *y);
	int (*transr_backward)(struct kg_backend *be, int sign, size_t n,
	    size_t d, size_t k, const float *x, const float *rel,
	    const float *gy, float *gx, float *grel);
	/* The partition buffer's negative pool (backend.h). */
	int (*scatter_sqnorm)(struct kg_backend *be, size_t n, size_t d,
	    const float *src, const int64_t *idx, float *out);
	int (*adagrad_sq)(struct kg_backend *be, size_t n, size_t d, float lr,
	    const int64_t *idx, const float *grad, const float *sq,
	    float *table, float *state);
};

/* The GNN message-passing operations (backend.h's last section): a table
 * of its own, so that the shallow operations above stay as they are. */
struct kg_backend_gnn_ops {
	int (*seg_sum)(struct kg_backend *be, size_t n_seg, size_t d,
	    const struct kg_dev_seg *sg, const float *x, int beta, float *out,
	    size_t ldo);
	int (*edge_coef)(struct kg_backend *be, size_t n, size_t nb,
	    const float *norm, const int64_t *type, const float *a, float *w);
	int (*edge_dot)(struct kg_backend *be, size_t n, size_t d,
	    const float *a, const int64_t *ia, const float *b,
	    const int64_t *ib, float *out);
	int (*fill_rows)(struct kg_backend *be, size_t n, size_t d,
	    const float *row, float *out);
	int (*mul)(struct kg_backend *be, size_t n, const float *a,
	    const float *x, float *y);
	int (*relu)(struct kg_backend *be, size_t n, const float *x,
	    float *y);
	int (*relu_backward)(struct kg_backend *be, size_t n,
	    const float *pre, float *g);
	int (*adam_flat)(struct kg_backend *be, size_t n,
	    const struct kg_adam *a, const float *grad, float *w,
	    float *state);
	int (*seg_sum_split)(struct kg_backend *be, size_t n_seg, size_t d,
	    size_t parts, const struct kg_dev_seg *sg, const float *x,
	    int beta, float *out, size_t ldo, float *tmp);
	int (*attn)(struct kg_backend *be, enum kg_be_attn_pass pass,
	    const struct kg_dev_attn *at, const float *G, float *out);
};

/* The CPU backend's (backend_cpu_gnn.c). */
extern const struct kg_backend_gnn_ops kg_backend_cpu_gnn_ops;

struct kg_backend_text_ops;

struct kg_backend {
	const struct kg_backend_ops *ops;
	const struct kg_backend_gnn_ops *gnn;
	const struct kg_backend_text_ops *text;
	struct kg_device dev;
	char name[160];
	void *impl;		/* the backend's own state */
	/* backend.h's counters: copies, syncs and kg_be_zero counted by
	 * backend.c, the other launches by each backend's operations. */
	struct kg_be_counts counts;
};

/* Fill be (ops, name, impl) for the CPU; 0. */
int kg_backend_cpu_init(struct kg_backend *be);

#if defined(__cplusplus)
extern "C" {
#endif
/*
 * The CUDA backend (cuda/backend_cuda.cu), in builds with KG_HAVE_CUDA.
 * kg_backend_cuda_count: the number of GPUs visible into *n; 0, or -1
 * with the CUDA runtime's message in err (errlen bytes).  init: fill be
 * for GPU index; 0, or -1 after kg_error().
 */
int kg_backend_cuda_count(int *n, char *err, size_t errlen);
int kg_backend_cuda_init(struct kg_backend *be, int index);
#if defined(__cplusplus)
}
#endif


/* The text encoder's operations (backend.h's kg_be_text_*), a table of
 * their own as the GNN's, set by each backend's init: the CPU's
 * (backend_cpu_text.c) and, in builds with KG_HAVE_CUDA, the CUDA's
 * (cuda/backend_cuda_text.cu). */
struct kg_backend_text_ops {
	int (*embed)(struct kg_backend *be, const struct kg_dev_text *t,
	    const float *word, const float *pos, const float *type,
	    const float *g, const float *b, float eps, float *x);
	int (*bias)(struct kg_backend *be, size_t n, size_t ncol,
	    const float *bias, int gelu, float *y);
	int (*add_norm)(struct kg_backend *be, size_t n, size_t h,
	    const float *t, const float *g, const float *b, float eps,
	    float *x);
	int (*attn)(struct kg_backend *be, const struct kg_dev_text *t,
	    float scale, const float *qkv, float *ctx);
	int (*pool)(struct kg_backend *be, const struct kg_dev_text *t,
	    int mode, int normalize, const float *x, float *out);
};

#if defined(__cplusplus)
extern "C" {
#endif
extern const struct kg_backend_text_ops kg_backend_cpu_text_ops;
extern const struct kg_backend_text_ops kg_backend_cuda_text_ops;
#if defined(__cplusplus)
}
#endif

#endif
