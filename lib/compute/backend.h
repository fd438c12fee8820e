/*
 * backend: the device seam.  A compute backend, opened by name, owns
 * memory on its device and runs there the operations a shallow training
 * step and filtered evaluation need; the caller sends index batches and
 * reads results back when it wants them (ggml-backend's shape: a backend
 * object, buffers, operations queued in order, a synchronisation point).
 *
 * Backends:
 *   "cpu"            today's code on the calling thread (backend_cpu.c):
 *                    kernels.h, compute.h and rowops.h, so each operation
 *                    gives the same bits as those functions called
 *                    directly; device memory is host memory.
 *   "cuda", "cuda:N" GPU N (0 for "cuda") through the CUDA runtime and
 *                    cuBLAS (lib/compute/cuda/), present only in a build
 *                    with nvcc (KG_HAVE_CUDA; the Makefile's CUDA
 *                    setting).  Its kernels run devops_*.h's thread
 *                    functions, so its results match the CPU's within
 *                    rounding (relative 1e-5 in the tests), not bit for
 *                    bit: it sums in other orders and with atomics.
 *
 * Memory.  kg_be_alloc returns device memory: a pointer the caller may
 * only hand to this backend's functions (it is host memory for "cpu").
 * kg_be_host_alloc returns host memory the device copies from and to
 * asynchronously (pinned for CUDA).  Every pointer argument of an
 * operation below is device memory of the same backend; host memory is
 * reached only by the copies.
 *
 * Order.  Operations run in call order on the backend's compute stream;
 * kg_be_upload_async and kg_be_download_async run on a separate copy
 * stream, so a copy overlaps computation: the caller orders the two with
 * kg_be_sync, which waits for everything queued on both.  kg_be_upload
 * and kg_be_download wait for the compute stream and complete before
 * they return.  kg_be_upload_ordered queues a copy on the compute stream
 * itself, ordered with the operations around it, and does not wait;
 * events (kg_be_event_record, kg_be_event_wait) tell the host when the
 * compute stream has passed a point, so that it can refill the host
 * memory such a copy read while the device works on.  A pointer that an
 * operation reads or writes must stay allocated until the next
 * kg_be_sync.
 *
 * Errors.  Functions return 0, or -1 after kg_error() naming the device
 * call that failed; an error of the CUDA runtime is sticky, and the
 * backend can then only be freed.  The operations check their sizes, not
 * the contents of index arrays: an index outside the table is undefined
 * behaviour, as in the CPU code.  Empty work (no rows, no threads: an
 * attention pass over an empty set too) is a no-op returning 0 on every
 * backend.
 *
 * Threads: a backend is used by one thread at a time; two backends (even
 * of one device) are independent.  Nothing is allocated inside the
 * operations; what a step needs is allocated once, before the step loop.
 */
#ifndef KG_BACKEND_H
#define KG_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "compute/compute.h"
#include "compute/devops_types.h"
#include "compute/kernels.h"
#include "compute/kinds.h"
#include "compute/rowops.h"

enum kg_device_kind { KG_DEVICE_CPU, KG_DEVICE_CUDA };

struct kg_device {
	enum kg_device_kind kind;
	int index;		/* GPU number, 0 for the CPU */
};

#define KG_DEVICE_INIT { .kind = KG_DEVICE_CPU }

/* The largest GPU number "cuda:N" accepts. */
#define KG_DEVICE_MAX_INDEX 1023

/*
 * Parse "cpu", "cuda" (GPU 0) or "cuda:N" (0 <= N <= KG_DEVICE_MAX_INDEX,
 * through kg_parse_u32) into *d; what names the option in the message
 * ("--device").  Returns 0, or -1 after kg_error().
 */
int kg_device_parse(const char *what, const char *s, struct kg_device *d);

/* "cpu" or "cuda:N" into buf (n bytes, at least 16); returns buf. */
char *kg_device_format(const struct kg_device *d, char *buf, size_t n);

/* 1 when this build has the CUDA backend, 0 when not. */
int kg_backend_have_cuda(void);

/* The GPUs the CUDA runtime sees: 0 without the CUDA backend, without a
 * GPU, or when the runtime fails (kg_backend_check says why). */
int kg_backend_gpu_count(void);

/*
 * Whether d can be used here, without opening it: 0, or -1 after
 * kg_error() with the reason in one line: a build without CUDA ("built
 * without the CUDA backend ... rebuild with ..."), no GPU visible (the
 * CUDA runtime's error, or none found), or N past the GPUs there are.
 */
int kg_backend_check(const struct kg_device *d);

struct kg_backend;

/* Open a backend on d; NULL after kg_error() (as kg_backend_check). */
struct kg_backend *kg_backend_open(const struct kg_device *d);

/* Wait for its work, free its resources and the struct; NULL: no-op.
 * Memory from kg_be_alloc and kg_be_host_alloc must be freed first. */
void kg_backend_free(struct kg_backend *be);

/* "cpu:openblas:Haswell", "cuda:0:NVIDIA H100 80GB HBM3": for manifests
 * and logs; owned by the backend. */
const char *kg_backend_name(const struct kg_backend *be);

/* kg_backend_name of a CPU backend, without opening one (static). */
const char *kg_backend_cpu_name(void);

/* The device the backend was opened on. */
struct kg_device kg_backend_device(const struct kg_backend *be);

/*
 * What a backend has asked of its device since it opened or the last
 * kg_backend_counts_reset.  launches: the operations queued on the
 * compute stream, each kernel, each cuBLAS call (one, however many
 * kernels cuBLAS runs inside) and each kg_be_zero; copies: every
 * kg_be_upload, kg_be_download, their _async forms and
 * kg_be_upload_ordered; syncs: the times the host waited for all the
 * device's work, each blocking copy and each kg_be_sync; waits: the
 * times it waited for an event (kg_be_event_wait), which the device has
 * usually passed by then.  The CPU backend counts the launches the CUDA backend
 * makes for the same calls, so that a device step's counts can be read
 * without a GPU (tests/gpu/gpu_ops.c checks that the two agree).  Empty
 * work counts nothing.
 */
struct kg_be_counts {
	uint64_t launches, copies, syncs, waits;
};

struct kg_be_counts kg_backend_counts(const struct kg_backend *be);
void kg_backend_counts_reset(struct kg_backend *be);

/* ---- Memory and copies. ---- */

/* bytes of device memory (any alignment a float or int64_t needs), or
 * NULL after kg_error(); 0 bytes gives a valid pointer to free. */
void *kg_be_alloc(struct kg_backend *be, size_t bytes);
void kg_be_free(struct kg_backend *be, void *p);

/* bytes of host memory for asynchronous copies; NULL after kg_error(). */
void *kg_be_host_alloc(struct kg_backend *be, size_t bytes);
void kg_be_host_free(struct kg_backend *be, void *p);

/* Set bytes of device memory to 0 (on the compute stream). */
int kg_be_zero(struct kg_backend *be, void *dev, size_t bytes);

/* Synchronous copies: host src to device dst, device src to host dst. */
int kg_be_upload(struct kg_backend *be, void *dev, const void *host,
    size_t bytes);
int kg_be_download(struct kg_backend *be, void *host, const void *dev,
    size_t bytes);

/* The same on the copy stream; host memory from kg_be_host_alloc. */
int kg_be_upload_async(struct kg_backend *be, void *dev, const void *host,
    size_t bytes);
int kg_be_download_async(struct kg_backend *be, void *host, const void *dev,
    size_t bytes);

/* Wait for every operation and copy queued so far. */
int kg_be_sync(struct kg_backend *be);

/*
 * Host src (bytes, memory of kg_be_host_alloc) to device dst on the
 * compute stream, without waiting: the copy runs after the operations
 * queued before it, and those queued after it read its data.  src must
 * stay unchanged until the copy has run: record an event after the copy
 * and wait for it before writing src again.  The CPU backend copies at
 * once.
 */
int kg_be_upload_ordered(struct kg_backend *be, void *dev, const void *host,
    size_t bytes);

/* The events each backend holds. */
#define KG_BE_EVENTS 4

/*
 * Record event ev (< KG_BE_EVENTS) on the compute stream: it completes
 * once everything queued there before it has run.  kg_be_event_wait
 * returns once the last record of ev has completed (at once for an
 * event never recorded).  0, or -1 after kg_error().  No-ops on the CPU
 * backend, whose work is done when its call returns.
 */
int kg_be_event_record(struct kg_backend *be, unsigned ev);
int kg_be_event_wait(struct kg_backend *be, unsigned ev);

/* ---- Products (compute.h's conventions: row-major, C's order). ---- */

int kg_be_sgemm(struct kg_backend *be, enum kg_trans ta, enum kg_trans tb,
    size_t m, size_t n, size_t k, float alpha, const float *a, size_t lda,
    const float *b, size_t ldb, float beta, float *c, size_t ldc);

/* batch products C_i = alpha op(A_i) op(B_i) + beta C_i with A_i = a +
 * i * sa, B_i = b + i * sb, C_i = c + i * sc (strides in floats). */
int kg_be_sgemm_batched(struct kg_backend *be, enum kg_trans ta,
    enum kg_trans tb, size_t m, size_t n, size_t k, float alpha,
    const float *a, size_t lda, size_t sa, const float *b, size_t ldb,
    size_t sb, float beta, float *c, size_t ldc, size_t sc, size_t batch);

/* ---- Rows by index. ---- */

/* out[i] = table[idx[i]] for n rows of d floats. */
int kg_be_gather(struct kg_backend *be, size_t n, size_t d,
    const float *table, const int64_t *idx, float *out);

/* table[idx[i]] += src[i]; repeated indices add up (in index order on
 * the CPU, in no fixed order on a GPU). */
int kg_be_scatter_add(struct kg_backend *be, size_t n, size_t d,
    const float *src, const int64_t *idx, float *table);

/* The two above over the sets of rs (devops_types.h's struct
 * kg_dev_rowsets: 1 to KG_DEV_ROWSETS sets of device memory; gather:
 * src the table, dst the rows; scatter-add: src the rows, dst the
 * table): on the CPU backend the bits of one call a set in set order,
 * on a GPU one launch. */
int kg_be_gather_sets(struct kg_backend *be, const struct kg_dev_rowsets *rs);
int kg_be_scatter_add_sets(struct kg_backend *be,
    const struct kg_dev_rowsets *rs);

/* ---- Scores (kernels.h's contract, every enum kg_kern_sim). ---- */

/* Floats of work kg_be_chunk and kg_be_chunk_backward need. */
size_t kg_be_work_size(const struct kg_backend *be, enum kg_kern_sim sim,
    size_t nq, size_t nc);

int kg_be_chunk(struct kg_backend *be, enum kg_kern_sim sim, size_t nq,
    size_t nc, size_t d, float gamma, const float *q, const float *c,
    float *out, float *dist, float *work);
/* dist: what kg_be_chunk of the same backend wrote (L2 kinds). */
int kg_be_chunk_backward(struct kg_backend *be, enum kg_kern_sim sim,
    size_t nq, size_t nc, size_t d, const float *q, const float *c,
    const float *g, float *dist, float *gq, float *gc, float *work);
int kg_be_pairs(struct kg_backend *be, enum kg_kern_sim sim, size_t n,
    size_t d, float gamma, const float *q, const float *c, float *out,
    float *dist);
int kg_be_pairs_backward(struct kg_backend *be, enum kg_kern_sim sim,
    size_t n, size_t d, const float *q, const float *c, const float *g,
    const float *dist, float *gq, float *gc);

/* ---- Query forms (kinds.h's enum kg_qform: lib/kge/score.h's
 * Q(fixed, rel), every shallow model but TransR). ---- */

/* Floats of a relation row of form f with entity rows of d floats: d,
 * d / 2 (ROTATE) or d * d (RESCAL). */
size_t kg_qform_width(enum kg_qform f, size_t d);

/*
 * q[i] = Q(fixed[i], rel[i]) for n queries: fixed n x d, rel n x
 * kg_qform_width(form, d), q n x d; side 0 corrupts tails (the fixed
 * row is the head), 1 heads (enum kg_side).  d even for COMPLEX and
 * ROTATE.
 */
int kg_be_query(struct kg_backend *be, enum kg_qform form, int side,
    size_t n, size_t d, const float *fixed, const float *rel, float *q);

/* Given gq = dL/dq (n x d), ADD dL/dfixed to gfixed (n x d) and dL/drel
 * to grel (n x kg_qform_width(form, d)). */
int kg_be_query_backward(struct kg_backend *be, enum kg_qform form, int side,
    size_t n, size_t d, const float *fixed, const float *rel,
    const float *gq, float *gfixed, float *grel);

/* x *= alpha over n floats. */
int kg_be_scale(struct kg_backend *be, size_t n, float alpha, float *x);

/* *acc += the sum of n doubles x (acc one device double). */
int kg_be_dsum(struct kg_backend *be, size_t n, const double *x,
    double *acc);

/* ---- Losses (rowops.h's kg_loss_eval, one row per positive). ---- */

/*
 * For each of rows positives: kg_loss_eval(l, pos[i], neg + i * n, n,
 * skip ? skip + i * n : NULL, gpos + i, gneg + i * n) into loss[i].
 */
int kg_be_loss(struct kg_backend *be, const struct kg_loss *l, size_t rows,
    size_t n, const float *pos, const float *neg, const uint8_t *skip,
    float *gpos, float *gneg, double *loss);

/*
 * kg_be_loss, then *acc += the sum of the rows' losses, and gpos (rows)
 * and gneg (rows x n) multiplied by scale: on the CPU backend the bits
 * of kg_be_loss, kg_be_dsum(rows, loss, acc), kg_be_scale(rows n, scale,
 * gneg) and kg_be_scale(rows, scale, gpos) in that order; one launch on
 * a GPU, a warp a row for n >= 32 (a thread a row below), whose sum of
 * the losses runs per block (acc one device double).
 */
int kg_be_loss_sum(struct kg_backend *be, const struct kg_loss *l,
    size_t rows, size_t n, const float *pos, const float *neg,
    const uint8_t *skip, float scale, float *gpos, float *gneg,
    double *loss, double *acc);

/* ---- Optimiser rows: rows idx[0..n) of table (width d) take the
 * gradients grad (n x d).  Indices must be distinct within one call. ---- */

/* Row-wise Adagrad, state one float per table row. */
int kg_be_adagrad(struct kg_backend *be, size_t n, size_t d, float lr,
    const int64_t *idx, const float *grad, float *table, float *state);
/* Element-wise Adagrad, state d floats per table row. */
int kg_be_adagrad_elem(struct kg_backend *be, size_t n, size_t d, float lr,
    const int64_t *idx, const float *grad, float *table, float *state);
/* Adam, state 2d + 1 floats per table row. */
int kg_be_adam(struct kg_backend *be, size_t n, size_t d,
    const struct kg_adam *a, const int64_t *idx, const float *grad,
    float *table, float *state);

/* The L2 (p = 2) or N3 (p = 3) regulariser of rowops.h's kg_regularise
 * over n floats of x: g += scale * gradient, *value (one device double)
 * += its value. */
int kg_be_regularise(struct kg_backend *be, size_t n, const float *x,
    float *g, double coef, unsigned p, double scale, double *value);

/* kg_be_regularise over the sets of rs (devops_types.h's struct
 * kg_dev_regsets: 1 to KG_DEV_REGSETS sets of device memory): on the CPU
 * backend the bits of one call a set in set order, on a GPU one
 * launch. */
int kg_be_regularise_sets(struct kg_backend *be,
    const struct kg_dev_regsets *rs, double coef, unsigned p, double scale,
    double *value);

/* ---- Evaluation. ---- */

/*
 * Filtered rank counts over a tile of scores (nq x nc, row i against the
 * true score s[i]): greater[i] += #{j : scores[i][j] > s[i]}, equal[i] +=
 * #{j : == s[i]}, leaving out the columns excl[excl_off[i] ..
 * excl_off[i + 1]) (the true entity and the known positives in the tile,
 * each once, as column numbers; excl_off NULL: none).  A NaN s[i] adds
 * nothing; NaN scores never count.
 */
int kg_be_rank_counts(struct kg_backend *be, size_t nq, size_t nc,
    const float *scores, const float *s, const int64_t *excl_off,
    const int64_t *excl, uint64_t *greater, uint64_t *equal);

/* ---- The partition buffer's test hook (lib/store/dev_tier.c). ---- */

/*
 * On a CPU backend, with on set, defer every asynchronous copy
 * (kg_be_upload_async, kg_be_download_async) to the next kg_be_sync and
 * run them then, in call order: as late as a GPU's copy stream may run
 * them, so that a caller who uses a copy's destination before the sync
 * that orders it sees stale data (the CPU otherwise copies at once and
 * hides the mistake).  With on set the backend also watches the host
 * memory of each kg_be_upload_ordered until the host waits for the
 * event recorded after it (or syncs): a change before then, which on a
 * GPU may reach the device or not, makes the next upload_ordered, event
 * call or sync fail with kg_error().  on 0 runs what waits and copies at
 * once again and stops watching.  0, or -1 after kg_error() for a
 * backend other than the CPU's.
 */
int kg_backend_cpu_defer_copies(struct kg_backend *be, int on);

/* ---- TransR's projections (devops_transr.h's kg_dev_transr_*).  A
 * TransR relation row is [r (k) | M (k x d, row-major)], k + k d floats
 * (lib/kge/model.h).  Candidates projected by one shared M are one
 * kg_be_sgemm: P = C M^T, as kernels.h's kg_kern_project. ---- */

/*
 * y[i] = M_i x[i] + sign r_i for n rows: x n x d, rel n x (k + k d)
 * (row i's relation row), y n x k.  sign +1: the tail query M h + r,
 * -1: the head query M t - r, 0: a candidate's projection M c.  On the
 * CPU backend the bits of lib/kge/score.c's TransR query and pairs
 * projection.
 */
int kg_be_transr(struct kg_backend *be, int sign, size_t n, size_t d,
    size_t k, const float *x, const float *rel, float *y);

/* Given gy = dL/dy (n x k) of kg_be_transr with the same arguments, ADD
 * dL/dx to gx (n x d) and dL/drel to grel (n x (k + k d)); gx or grel
 * may be NULL (not computed). */
int kg_be_transr_backward(struct kg_backend *be, int sign, size_t n,
    size_t d, size_t k, const float *x, const float *rel, const float *gy,
    float *gx, float *grel);

/* ---- GNN message passing (lib/gnn/layers_device.h): the R-GCN layers'
 * per-message work.  Each output element is summed by one thread in an
 * order fixed by the arguments, on a GPU too (no atomics), so these give
 * the same bits on every run. ---- */

/*
 * out[i * ldo + k] = (beta ? out[i * ldo + k] : 0) + sum_q sum_c
 * w_c(e) x_c[idx(e)][k] for the n_seg segments i and k < d, sg as
 * devops_types.h's struct kg_dev_seg (item q of segment i in off[i] ..
 * off[i + 1), e = perm[q], rows idx[e] of the sg->nb blocks of x,
 * weights w[c * ws + e]; perm, idx, w may be NULL), summed over q in
 * order and, for each q, over c in order.  ldo >= d; out does not
 * overlap x.  Every pointer in sg is device memory.
 */
int kg_be_seg_sum(struct kg_backend *be, size_t n_seg, size_t d,
    const struct kg_dev_seg *sg, const float *x, int beta, float *out,
    size_t ldo);

/*
 * kg_be_seg_sum for few long segments: on a GPU each segment's items are
 * summed in parts strided partial sums, then the parts in order
 * (devops_gnn.h's kg_dev_t_seg_part and kg_dev_t_seg_join; tmp: n_seg x
 * parts x d device floats of scratch), a fixed order that differs from
 * kg_be_seg_sum's only in rounding.  parts <= 1, and the CPU backend
 * always, sum as kg_be_seg_sum does, bit for bit.
 */
int kg_be_seg_sum_split(struct kg_backend *be, size_t n_seg, size_t d,
    size_t parts, const struct kg_dev_seg *sg, const float *x, int beta,
    float *out, size_t ldo, float *tmp);

/*
 * The passes of the relation-aware attention layer over the graph at
 * (devops_types.h's struct kg_dev_attn), each devops_gnn.h's thread
 * function of that name: SCORES writes at->u and at->al; MSGS adds the
 * messages to out [n_dst, d]; BACK_SCORES writes at->da and at->nsum
 * from G; BACK_DZ overwrites out [n_src, d] with dL/dz; BACK_REL adds
 * the relation rows' gradients to out [n_types, d].  Sums in a fixed order,
 * as lib/gnn/layers_attn.c's (G unused by the forward passes).
 */
enum kg_be_attn_pass {
	KG_BE_ATTN_SCORES, KG_BE_ATTN_MSGS, KG_BE_ATTN_BACK_SCORES,
	KG_BE_ATTN_BACK_DZ, KG_BE_ATTN_BACK_REL
};
int kg_be_attn(struct kg_backend *be, enum kg_be_attn_pass pass,
    const struct kg_dev_attn *at, const float *G, float *out);

/* w[c * n + e] = norm[e] a[type[e] * nb + c] for e < n, c < nb. */
int kg_be_edge_coef(struct kg_backend *be, size_t n, size_t nb,
    const float *norm, const int64_t *type, const float *a, float *w);

/* out[e] = a[ia[e]] . b[ib[e]] for n items, rows of d floats (ia, ib
 * NULL: row e), summed as lib/gnn/kernels.h's dot. */
int kg_be_edge_dot(struct kg_backend *be, size_t n, size_t d, const float *a,
    const int64_t *ia, const float *b, const int64_t *ib, float *out);

/* out[i] = row (d floats) for n rows. */
int kg_be_fill_rows(struct kg_backend *be, size_t n, size_t d,
    const float *row, float *out);

/* y = a * x element-wise over n floats (y may be a or x). */
int kg_be_mul(struct kg_backend *be, size_t n, const float *a,
    const float *x, float *y);

/* y = x < 0 ? 0 : x over n floats (y may be x); the backward sets g to 0
 * where pre < 0. */
int kg_be_relu(struct kg_backend *be, size_t n, const float *x, float *y);
int kg_be_relu_backward(struct kg_backend *be, size_t n, const float *pre,
    float *g);

/* Adam a over n floats w that share one step count (rowops.h's
 * kg_adam_row on one row of n, the same arithmetic): state holds m[n],
 * v[n] and the count (2n + 1 floats), all device memory; one thread per
 * element on a GPU. */
int kg_be_adam_flat(struct kg_backend *be, size_t n, const struct kg_adam *a,
    const float *grad, float *w, float *state);

/* ---- The negative pool of the partition buffer
 * (lib/kge/train_device_pool.c; devops_pool.h's kg_dev_t_scatter_sqnorm
 * and kg_dev_t_adagrad_sq). ---- */

/* out[idx[i]] += (the sum of the squares of src[i]) / d for n rows of d
 * floats; repeated indices add up (in index order on the CPU). */
int kg_be_scatter_sqnorm(struct kg_backend *be, size_t n, size_t d,
    const float *src, const int64_t *idx, float *out);

/* Row-wise Adagrad (kg_be_adagrad) whose row idx[i] gains state sq[i]
 * (n floats) instead of the mean square of grad[i]; sq[i] 0: the plain
 * step.  Indices must be distinct within one call. */
int kg_be_adagrad_sq(struct kg_backend *be, size_t n, size_t d, float lr,
    const int64_t *idx, const float *grad, const float *sq, float *table,
    float *state);


/* ---- The text encoder's forward pass besides its GEMMs
 * (lib/attrs/bert_device.c): devops_text.h's thread functions of the
 * same names, whose struct kg_dev_text describes a batch of packed texts
 * (its tok in device memory).  Each operation is one launch, the pooling
 * two with normalize; the CPU backend sums as the thread functions do. ---- */

struct kg_dev_text;

/* x [n, h] = LayerNorm(word[id] + pos[position] + type) * g + b for each
 * token of t (word, pos rows of h floats, type one row). */
int kg_be_text_embed(struct kg_backend *be, const struct kg_dev_text *t,
    const float *word, const float *pos, const float *type, const float *g,
    const float *b, float eps, float *x);

/* y [n, ncol] += bias on every row; gelu set: y = GELU(y + bias). */
int kg_be_text_bias(struct kg_backend *be, size_t n, size_t ncol,
    const float *bias, int gelu, float *y);

/* x [n, h] = LayerNorm(x + t) * g + b, row by row. */
int kg_be_text_add_norm(struct kg_backend *be, size_t n, size_t h,
    const float *t, const float *g, const float *b, float eps, float *x);

/* ctx [n, h] = for each token and head softmax(scale q k') v over the
 * tokens of its text, from qkv [n, 3h] (Q, K, V a row). */
int kg_be_text_attn(struct kg_backend *be, const struct kg_dev_text *t,
    float scale, const float *qkv, float *ctx);

/* out [nb, h] = each text's pooling of its rows of x (enum
 * kg_dev_text_pool), then with normalize each row divided by
 * max(|row|, 1e-12). */
int kg_be_text_pool(struct kg_backend *be, const struct kg_dev_text *t,
    int mode, int normalize, const float *x, float *out);

#endif
