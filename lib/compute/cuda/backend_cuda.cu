/*
 * The CUDA backend (backend.h): cuBLAS for the products, and for the rest
 * kernels that each call one thread function of lib/compute/devops_*.h,
 * the arithmetic the host-emulated tests (tests/unit/t_devops*.c) check
 * against the CPU backend.  Operations and the ordered uploads go on one
 * compute stream, the asynchronous copies on a second; nothing is
 * allocated after the backend is open except what the caller asks for.
 * cuBLAS is loaded
 * with dlopen when the first backend opens (libcublas.so.N, N the major
 * version of the headers, from the library path or KG_CUDA_LIBDIR), so
 * the tools neither load it nor need it unless a GPU is used.  Every
 * call first makes the backend's GPU the thread's current device (use()),
 * and each kernel and cuBLAS call is counted (backend.h's counters).
 * The GNN operations are in backend_cuda_gnn.cu, what both files share
 * in cuda_impl.h.
 */
#include "compute/cuda/cuda_impl.h"
#include "compute/devops_loss.h"
#include "compute/devops_optim.h"
#include "compute/devops_pool.h"
#include "compute/devops_query.h"
#include "compute/devops_rank.h"
#include "compute/devops_rows.h"
#include "compute/devops_tile.h"
#include "compute/devops_transr.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <dlfcn.h>

namespace kg_cuda {

int
cuda_fail(struct kg_backend *be, const char *what, cudaError_t e)
{
	(void)cudaGetLastError();
	kg_error("cuda:%d: %s: %s", be->dev.index, what,
	    cudaGetErrorString(e));
	return -1;
}

int
use(struct kg_backend *be)
{
	int cur;

	if (cudaGetDevice(&cur) == cudaSuccess && cur == impl(be)->dev)
		return 0;
	CK(be, cudaSetDevice(impl(be)->dev));
	return 0;
}

} /* namespace kg_cuda */

namespace {

using namespace kg_cuda;

#define STR_(x) #x
#define STR(x) STR_(x)
#define CUBLAS_SONAME "libcublas.so." STR(CUBLAS_VER_MAJOR)

/* The cuBLAS functions the backend calls, from dlopen. */
struct blas_api {
	decltype(&cublasCreate_v2) create;
	decltype(&cublasDestroy_v2) destroy;
	decltype(&cublasSetStream_v2) set_stream;
	decltype(&cublasSgemm_v2) sgemm;
	decltype(&cublasSgemmStridedBatched) sgemm_sb;
};

blas_api blas;

/* Load cuBLAS once; 0, or -1 after kg_error(). */
int
load_blas(int dev)
{
	static void *lib;
	const char *err;

	if (lib != NULL)
		return 0;
	lib = dlopen(CUBLAS_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL)
		lib = dlopen(KG_CUDA_LIBDIR "/" CUBLAS_SONAME,
		    RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) {
		err = dlerror();
		kg_error("cuda:%d: cannot load cuBLAS (%s): %s", dev,
		    CUBLAS_SONAME, err != NULL ? err : "not found");
		return -1;
	}
	blas.create = reinterpret_cast<decltype(blas.create)>(
	    dlsym(lib, "cublasCreate_v2"));
	blas.destroy = reinterpret_cast<decltype(blas.destroy)>(
	    dlsym(lib, "cublasDestroy_v2"));
	blas.set_stream = reinterpret_cast<decltype(blas.set_stream)>(
	    dlsym(lib, "cublasSetStream_v2"));
	blas.sgemm = reinterpret_cast<decltype(blas.sgemm)>(
	    dlsym(lib, "cublasSgemm_v2"));
	blas.sgemm_sb = reinterpret_cast<decltype(blas.sgemm_sb)>(
	    dlsym(lib, "cublasSgemmStridedBatched"));
	if (blas.create == NULL || blas.destroy == NULL ||
	    blas.set_stream == NULL || blas.sgemm == NULL ||
	    blas.sgemm_sb == NULL) {
		kg_error("cuda:%d: %s lacks a function kgpipe calls", dev,
		    CUBLAS_SONAME);
		dlclose(lib);
		lib = NULL;
		return -1;
	}
	return 0;
}

int
blas_fail(struct kg_backend *be, const char *what, cublasStatus_t s)
{
	kg_error("cuda:%d: %s: cuBLAS status %d", be->dev.index, what,
	    static_cast<int>(s));
	return -1;
}

/* Launch a tiled kernel over a gx x gy x gz grid of KG_DEV_TILE_THREADS-
 * thread blocks (gy within CUDA's 65,535) and check it. */
template <typename K, typename... A>
int
launch_tiles(struct kg_backend *be, const char *what, size_t gx, size_t gy,
    unsigned gz, K k, A... args)
{
	cudaError_t e;

	if (gx == 0 || gy == 0)
		return 0;
	if (gx > static_cast<size_t>(INT_MAX) || gy > 65535) {
		kg_error("cuda:%d: %s: a %zu x %zu grid of tiles exceeds one "
		    "grid", be->dev.index, what, gx, gy);
		return -1;
	}
	if (use(be) < 0)
		return -1;
	k<<<dim3(static_cast<unsigned>(gx), static_cast<unsigned>(gy), gz),
	    KG_DEV_TILE_THREADS, 0, impl(be)->comp>>>(args...);
	e = cudaGetLastError();
	if (e != cudaSuccess)
		return cuda_fail(be, what, e);
	be->counts.launches++;
	return 0;
}


/* The kernels: one line each, the thread functions of devops_*.h (the
 * tiled ones above them: the phases of devops_tile.h's block
 * functions). */
__global__ void
k_gather(size_t n, size_t d, const float *t, const int64_t *idx, float *o)
{
	kg_dev_t_gather(TID, n, d, t, idx, o);
}

__global__ void
k_scatter_add(size_t n, size_t d, const float *s, const int64_t *idx,
    float *t)
{
	kg_dev_t_scatter_add(TID, n, d, s, idx, t);
}

__global__ void
k_gather_sets(kg_dev_rowsets rs)
{
	kg_dev_t_gather_sets(TID, rs);
}

__global__ void
k_scatter_add_sets(kg_dev_rowsets rs)
{
	kg_dev_t_scatter_add_sets(TID, rs);
}

/*
 * The tiled chunk forward and backward (devops_tile.h's block functions): a
 * block of KG_DEV_TILE_THREADS runs the phases there, with the barriers
 * between them.
 */
__global__ void __launch_bounds__(KG_DEV_TILE_THREADS)
k_chunk_tile(kg_dev_tile a)
{
	__shared__ kg_dev_tile_smem sm;
	float acc[KG_DEV_TSUB * KG_DEV_TSUB] = { 0 };
	size_t s, ns = kg_dev_tile_fwd_slabs(a);

	for (s = 0; s < ns; s++) {
		kg_dev_tile_fwd_load(blockIdx.x, blockIdx.y, threadIdx.x, a, s,
		    &sm);
		__syncthreads();
		kg_dev_tile_fwd_acc(threadIdx.x, a, s, &sm, acc);
		__syncthreads();
	}
	kg_dev_tile_fwd_store(blockIdx.x, blockIdx.y, threadIdx.x, a, acc);
}

/* Both sides in one launch: blocks with z = 0 make gq, z = 1 gc (out
 * gc); a block past its side's grid leaves at once, before any
 * barrier. */
__global__ void __launch_bounds__(KG_DEV_TILE_THREADS)
k_chunk_bwd_tile(kg_dev_tile a, float *gc)
{
	__shared__ kg_dev_tile_smem sm;
	float own[2 * KG_DEV_TSUB * KG_DEV_TSUB];
	float acc[2 * KG_DEV_TSUB * KG_DEV_TSUB];
	size_t s, ns;

	if (!kg_dev_tile_bwd_block(&a, blockIdx.x, blockIdx.y, blockIdx.z, gc))
		return;
	ns = kg_dev_tile_bwd_slabs(a);

	kg_dev_tile_bwd_init(blockIdx.x, blockIdx.y, threadIdx.x, a, own, acc);
	for (s = 0; s < ns; s++) {
		kg_dev_tile_bwd_load(blockIdx.x, blockIdx.y, threadIdx.x, a, s,
		    &sm);
		__syncthreads();
		kg_dev_tile_bwd_acc(threadIdx.x, a, s, &sm, own, acc);
		__syncthreads();
	}
	kg_dev_tile_bwd_store(blockIdx.x, blockIdx.y, threadIdx.x, a, acc);
}

__global__ void
k_pairs(int sim, size_t n, size_t d, float gamma, const float *q,
    const float *c, float *out, float *dist)
{
	kg_dev_t_pairs(TID, sim, n, d, gamma, q, c, out, dist);
}

__global__ void
k_pairs_bwd(int sim, size_t n, size_t d, const float *q, const float *c,
    const float *g, const float *dist, float *gq, float *gc)
{
	kg_dev_t_pairs_bwd(TID, sim, n, d, q, c, g, dist, gq, gc);
}

__global__ void
k_query(int form, int side, size_t n, size_t d, const float *f,
    const float *r, float *q)
{
	kg_dev_t_query(TID, form, side, n, d, f, r, q);
}

__global__ void
k_query_bwd(int form, int side, size_t n, size_t d, const float *f,
    const float *r, const float *gq, float *gf, float *gr)
{
	kg_dev_t_query_bwd(TID, form, side, n, d, f, r, gq, gf, gr);
}

__global__ void
k_scale(size_t n, float alpha, float *x)
{
	kg_dev_t_scale(TID, n, alpha, x);
}

/* devops_base.h's block sum of each thread's v into *acc: the phases
 * with a barrier after each, one atomic a block (blocks of
 * KG_DEV_BLOCK threads, a power of two). */
__device__ void
block_sum(double v, double *acc)
{
	__shared__ double sm[KG_DEV_BLOCK];
	unsigned s;

	kg_dev_bsum_put(threadIdx.x, v, sm);
	__syncthreads();
	for (s = blockDim.x / 2; s > 0; s /= 2) {
		kg_dev_bsum_step(threadIdx.x, s, sm);
		__syncthreads();
	}
	kg_dev_bsum_out(threadIdx.x, sm, acc);
}

__global__ void
k_dsum(size_t n, const double *x, double *acc)
{
	block_sum(kg_dev_v_dsum(TID, n, x), acc);
}

__global__ void
k_loss(int kind, double margin, float adv, size_t rows, size_t n,
    const float *pos, const float *neg, const uint8_t *skip, float *gpos,
    float *gneg, double *loss)
{
	kg_dev_t_loss(TID, kind, margin, adv, rows, n, pos, neg, skip, gpos,
	    gneg, loss);
}

__global__ void
k_loss_sum(int kind, double margin, float adv, size_t rows, size_t n,
    const float *pos, const float *neg, const uint8_t *skip, float scale,
    float *gpos, float *gneg, double *loss, double *acc)
{
	block_sum(kg_dev_v_loss_sum(TID, kind, margin, adv, rows, n, pos, neg,
	    skip, scale, gpos, gneg, loss), acc);
}

/* devops_loss.h's warp per row: the phases with a warp barrier after
 * each phase, step and keep; then the block's sum of the losses. */
__global__ void __launch_bounds__(KG_DEV_BLOCK)
k_loss_sum_warp(kg_dev_wloss a, float scale, double *acc)
{
	__shared__ kg_dev_wl_smem sm[KG_DEV_BLOCK / KG_DEV_WARP];
	kg_dev_wl_smem *w = &sm[threadIdx.x / KG_DEV_WARP];
	unsigned l = threadIdx.x % KG_DEV_WARP, ph, s;
	size_t i = kg_dev_tid(TID) / KG_DEV_WARP;

	for (ph = 0; ph < KG_DEV_WL_PHASES; ph++) {
		kg_dev_wl_phase(ph, l, i, a, w);
		__syncwarp();
		for (s = KG_DEV_WARP / 2; s > 0; s /= 2) {
			kg_dev_wl_step(a.kind, ph, l, s, w);
			__syncwarp();
		}
		kg_dev_wl_keep(ph, l, w);
		__syncwarp();
	}
	block_sum(kg_dev_wl_out(l, i, a, scale, w), acc);
}

__global__ void
k_adagrad(size_t n, size_t d, float lr, const int64_t *idx,
    const float *grad, float *table, float *state)
{
	kg_dev_t_adagrad(TID, n, d, lr, idx, grad, table, state);
}

/* devops_optim.h's warp-per-row Adagrad, a warp barrier after each
 * phase and step. */
__global__ void __launch_bounds__(KG_DEV_BLOCK)
k_adagrad_warp(size_t n, size_t d, float lr, const int64_t *idx,
    const float *grad, float *table, float *state)
{
	__shared__ kg_dev_wa_smem sm[KG_DEV_BLOCK / KG_DEV_WARP];
	kg_dev_wa_smem *w = &sm[threadIdx.x / KG_DEV_WARP];
	unsigned l = threadIdx.x % KG_DEV_WARP, s;
	size_t i = kg_dev_tid(TID) / KG_DEV_WARP;

	kg_dev_wa_sq(l, i, n, d, grad, w);
	__syncwarp();
	for (s = KG_DEV_WARP / 2; s > 0; s /= 2) {
		kg_dev_wa_step(l, s, w);
		__syncwarp();
	}
	kg_dev_wa_state(l, i, n, d, lr, idx, state, w);
	__syncwarp();
	kg_dev_wa_update(l, i, n, d, idx, grad, table, w);
}

__global__ void
k_adagrad_elem(size_t n, size_t d, float lr, const int64_t *idx,
    const float *grad, float *table, float *state)
{
	kg_dev_t_adagrad_elem(TID, n, d, lr, idx, grad, table, state);
}

__global__ void
k_adam(size_t n, size_t d, float lr, float b1, float b2, float eps,
    const int64_t *idx, const float *grad, float *table, float *state)
{
	kg_dev_t_adam(TID, n, d, lr, b1, b2, eps, idx, grad, table, state);
}

__global__ void
k_regularise(size_t n, const float *x, float *g, double coef, unsigned p,
    double scale, double *value)
{
	block_sum(kg_dev_v_regularise(TID, n, x, g, coef, p, scale), value);
}

__global__ void
k_regularise_sets(kg_dev_regsets rs, double coef, unsigned p, double scale,
    double *value)
{
	block_sum(kg_dev_v_regularise_sets(TID, rs, coef, p, scale), value);
}

__global__ void
k_rank_counts(size_t nq, size_t nc, const float *scores, const float *s,
    const int64_t *excl_off, const int64_t *excl, uint64_t *greater,
    uint64_t *equal)
{
	kg_dev_t_rank_counts(TID, nq, nc, scores, s, excl_off, excl, greater,
	    equal);
}

/* The streams and events of c, and c. */
void
destroy_streams(cuda_impl *c)
{
	int i;

	for (i = 0; i < c->n_ev; i++)
		cudaEventDestroy(c->ev[i]);
	cudaStreamDestroy(c->comp);
	cudaStreamDestroy(c->copy);
	free(c);
}

void
cu_release(struct kg_backend *be)
{
	cuda_impl *c = impl(be);

	if (c == NULL)
		return;
	cudaSetDevice(c->dev);
	cudaStreamSynchronize(c->comp);
	cudaStreamSynchronize(c->copy);
	blas.destroy(c->blas);
	destroy_streams(c);
	be->impl = NULL;
}

/* A failed allocation is reported here and its error cleared (the
 * runtime would otherwise hand it to the next launch's check). */
void *
cu_alloc(struct kg_backend *be, size_t bytes)
{
	void *p = NULL;
	cudaError_t e;

	if (use(be) < 0)
		return NULL;
	e = cudaMalloc(&p, bytes > 0 ? bytes : 256);
	if (e != cudaSuccess) {
		(void)cudaGetLastError();
		kg_error("cuda:%d: cannot allocate %zu bytes of GPU memory: "
		    "%s", be->dev.index, bytes, cudaGetErrorString(e));
		return NULL;
	}
	return p;
}

void
cu_free(struct kg_backend *be, void *p)
{
	if (use(be) == 0)
		cudaFree(p);
}

void *
cu_host_alloc(struct kg_backend *be, size_t bytes)
{
	void *p = NULL;
	cudaError_t e;

	if (use(be) < 0)
		return NULL;
	e = cudaMallocHost(&p, bytes > 0 ? bytes : 256);
	if (e != cudaSuccess) {
		(void)cudaGetLastError();
		kg_error("cuda:%d: cannot allocate %zu bytes of pinned host "
		    "memory: %s", be->dev.index, bytes, cudaGetErrorString(e));
		return NULL;
	}
	return p;
}

void
cu_host_free(struct kg_backend *be, void *p)
{
	if (use(be) == 0)
		cudaFreeHost(p);
}

int
cu_zero(struct kg_backend *be, void *p, size_t bytes)
{
	if (use(be) < 0)
		return -1;
	CK(be, cudaMemsetAsync(p, 0, bytes, impl(be)->comp));
	return 0;
}

int
cu_copy(struct kg_backend *be, void *dst, const void *src, size_t bytes,
    int to_dev, int async)
{
	cuda_impl *c = impl(be);
	cudaMemcpyKind kind = to_dev ? cudaMemcpyHostToDevice :
	    cudaMemcpyDeviceToHost;

	if (use(be) < 0)
		return -1;
	if (async) {
		CK(be, cudaMemcpyAsync(dst, src, bytes, kind, c->copy));
		return 0;
	}
	CK(be, cudaMemcpyAsync(dst, src, bytes, kind, c->comp));
	CK(be, cudaStreamSynchronize(c->comp));
	return 0;
}

int
cu_upload_ordered(struct kg_backend *be, void *dst, const void *src,
    size_t bytes)
{
	if (use(be) < 0)
		return -1;
	CK(be, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice,
	    impl(be)->comp));
	return 0;
}

int
cu_event_record(struct kg_backend *be, unsigned ev)
{
	if (use(be) < 0)
		return -1;
	CK(be, cudaEventRecord(impl(be)->ev[ev], impl(be)->comp));
	return 0;
}

int
cu_event_wait(struct kg_backend *be, unsigned ev)
{
	if (use(be) < 0)
		return -1;
	CK(be, cudaEventSynchronize(impl(be)->ev[ev]));
	return 0;
}

int
cu_sync(struct kg_backend *be)
{
	if (use(be) < 0)
		return -1;
	CK(be, cudaStreamSynchronize(impl(be)->comp));
	CK(be, cudaStreamSynchronize(impl(be)->copy));
	return 0;
}

/* A size cuBLAS takes as int; fits or an error. */
bool
fits(size_t x)
{
	return x <= static_cast<size_t>(INT_MAX);
}

cublasOperation_t
op(enum kg_trans t)
{
	return t == KG_TRANS ? CUBLAS_OP_T : CUBLAS_OP_N;
}

/*
 * Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: cuBLAS
 * gets B first, m and n swapped, the same transpose flags.
 */
int
cu_sgemm_batched(struct kg_backend *be, enum kg_trans ta, enum kg_trans tb,
    size_t m, size_t n, size_t k, float alpha, const float *a, size_t lda,
    size_t sa, const float *b, size_t ldb, size_t sb, float beta, float *c,
    size_t ldc, size_t sc, size_t batch)
{
	cublasStatus_t s;
	int ilda = lda > 0 ? static_cast<int>(lda) : 1;
	int ildb = ldb > 0 ? static_cast<int>(ldb) : 1;
	int ildc = ldc > 0 ? static_cast<int>(ldc) : 1;

	if (!fits(m) || !fits(n) || !fits(k) || !fits(lda) || !fits(ldb) ||
	    !fits(ldc) || !fits(batch)) {
		kg_error("cuda:%d: matrix size exceeds cuBLAS's int",
		    be->dev.index);
		return -1;
	}
	if (use(be) < 0)
		return -1;
	if (batch == 1)
		s = blas.sgemm(impl(be)->blas, op(tb), op(ta),
		    static_cast<int>(n), static_cast<int>(m),
		    static_cast<int>(k), &alpha, b, ildb, a, ilda, &beta, c,
		    ildc);
	else
		s = blas.sgemm_sb(impl(be)->blas, op(tb), op(ta),
		    static_cast<int>(n), static_cast<int>(m),
		    static_cast<int>(k), &alpha, b, ildb,
		    static_cast<long long>(sb), a, ilda,
		    static_cast<long long>(sa), &beta, c, ildc,
		    static_cast<long long>(sc), static_cast<int>(batch));
	if (s != CUBLAS_STATUS_SUCCESS)
		return blas_fail(be, "sgemm", s);
	be->counts.launches++;
	return 0;
}

int
cu_gather(struct kg_backend *be, size_t n, size_t d, const float *table,
    const int64_t *idx, float *out)
{
	return launch(be, "gather", n * d, k_gather, n, d, table, idx, out);
}

int
cu_scatter_add(struct kg_backend *be, size_t n, size_t d, const float *src,
    const int64_t *idx, float *table)
{
	return launch(be, "scatter_add", n * d, k_scatter_add, n, d, src, idx,
	    table);
}

int
cu_row_sets(struct kg_backend *be, const struct kg_dev_rowsets *rs,
    int scatter)
{
	size_t n = 0;
	unsigned k;

	for (k = 0; k < rs->nsets; k++)
		n += rs->n[k] * rs->d[k];
	return scatter ? launch(be, "scatter_add_sets", n, k_scatter_add_sets,
	    *rs) : launch(be, "gather_sets", n, k_gather_sets, *rs);
}

size_t
cu_work_size(enum kg_kern_sim sim, size_t nq, size_t nc)
{
	(void)sim;
	(void)nq;
	(void)nc;
	return 0;
}

int
cu_chunk(struct kg_backend *be, enum kg_kern_sim sim, size_t nq, size_t nc,
    size_t d, float gamma, const float *q, const float *c, float *out,
    float *dist, float *work)
{
	(void)work;
	if (sim == KG_KERN_DOT)
		return cu_sgemm_batched(be, KG_NO_TRANS, KG_TRANS, nq, nc, d,
		    1.0f, q, d, 0, c, d, 0, 0.0f, out, nc, 0, 1);
	/* The L2 kinds go by differences (no GEMM form): more accurate. */
	kg_dev_tile a = { static_cast<int>(sim), 0, nq, nc, d, gamma, q, c,
		NULL, dist, out };

	return launch_tiles(be, "chunk", kg_dev_tile_fwd_gx(a),
	    kg_dev_tile_fwd_gy(a), 1, k_chunk_tile, a);
}

int
cu_chunk_backward(struct kg_backend *be, enum kg_kern_sim sim, size_t nq,
    size_t nc, size_t d, const float *q, const float *c, const float *g,
    float *dist, float *gq, float *gc, float *work)
{
	(void)work;
	if (sim == KG_KERN_DOT) {
		if (cu_sgemm_batched(be, KG_NO_TRANS, KG_NO_TRANS, nq, d, nc,
		    1.0f, g, nc, 0, c, d, 0, 0.0f, gq, d, 0, 1) < 0)
			return -1;
		return gc == NULL ? 0 : cu_sgemm_batched(be, KG_TRANS,
		    KG_NO_TRANS, nc, d, nq, 1.0f, g, nc, 0, q, d, 0, 1.0f, gc,
		    d, 0, 1);
	}
	kg_dev_tile a = { static_cast<int>(sim), KG_DEV_TILE_GQ, nq, nc, d,
		0.0f, q, c, g, dist, gq };

	return launch_tiles(be, "chunk_backward", kg_dev_tile_bwd_gx2(a, gc),
	    kg_dev_tile_bwd_gy(a), gc != NULL ? 2u : 1u, k_chunk_bwd_tile, a,
	    gc);
}

int
cu_pairs(struct kg_backend *be, enum kg_kern_sim sim, size_t n, size_t d,
    float gamma, const float *q, const float *c, float *out, float *dist)
{
	return launch(be, "pairs", n, k_pairs, static_cast<int>(sim), n, d,
	    gamma, q, c, out, dist);
}

int
cu_pairs_backward(struct kg_backend *be, enum kg_kern_sim sim, size_t n,
    size_t d, const float *q, const float *c, const float *g,
    const float *dist, float *gq, float *gc)
{
	return launch(be, "pairs_backward", n * d, k_pairs_bwd,
	    static_cast<int>(sim), n, d, q, c, g, dist, gq, gc);
}

int
cu_query(struct kg_backend *be, enum kg_qform form, int side, size_t n,
    size_t d, const float *fixed, const float *rel, float *q)
{
	return launch(be, "query", n * d, k_query, static_cast<int>(form),
	    side, n, d, fixed, rel, q);
}

int
cu_query_backward(struct kg_backend *be, enum kg_qform form, int side,
    size_t n, size_t d, const float *fixed, const float *rel,
    const float *gq, float *gfixed, float *grel)
{
	size_t rw = kg_dev_qform_width(static_cast<int>(form), d);

	return launch(be, "query_backward", n * (d + rw), k_query_bwd,
	    static_cast<int>(form), side, n, d, fixed, rel, gq, gfixed, grel);
}

int
cu_scale(struct kg_backend *be, size_t n, float alpha, float *x)
{
	return launch(be, "scale", n, k_scale, n, alpha, x);
}

int
cu_dsum(struct kg_backend *be, size_t n, const double *x, double *acc)
{
	return launch(be, "dsum", n, k_dsum, n, x, acc);
}

int
cu_loss(struct kg_backend *be, const struct kg_loss *l, size_t rows,
    size_t n, const float *pos, const float *neg, const uint8_t *skip,
    float *gpos, float *gneg, double *loss)
{
	return launch(be, "loss", rows, k_loss, static_cast<int>(l->kind),
	    l->margin, static_cast<float>(l->adv_temp), rows, n, pos, neg,
	    skip, gpos, gneg, loss);
}

int
cu_loss_sum(struct kg_backend *be, const struct kg_loss *l, size_t rows,
    size_t n, const float *pos, const float *neg, const uint8_t *skip,
    float scale, float *gpos, float *gneg, double *loss, double *acc)
{
	kg_dev_wloss a = { static_cast<int>(l->kind), l->margin,
		static_cast<float>(l->adv_temp), rows, n, pos, neg, skip, gpos,
		gneg, loss };

	/* A warp a row where rows are long enough to share out. */
	if (n >= KG_DEV_WARP)
		return launch(be, "loss_sum", rows * KG_DEV_WARP,
		    k_loss_sum_warp, a, scale, acc);
	return launch(be, "loss_sum", rows, k_loss_sum,
	    static_cast<int>(l->kind), l->margin,
	    static_cast<float>(l->adv_temp), rows, n, pos, neg, skip, scale,
	    gpos, gneg, loss, acc);
}

int
cu_optim(struct kg_backend *be, enum kg_be_optim kind, size_t n, size_t d,
    const struct kg_adam *a, const int64_t *idx, const float *grad,
    float *table, float *state)
{
	switch (kind) {
	case KG_BE_ADAGRAD:
		if (d >= KG_DEV_WARP)	/* a warp a row */
			return launch(be, "adagrad", n * KG_DEV_WARP,
			    k_adagrad_warp, n, d, a->lr, idx, grad, table,
			    state);
		return launch(be, "adagrad", n, k_adagrad, n, d, a->lr, idx,
		    grad, table, state);
	case KG_BE_ADAGRAD_ELEM:
		return launch(be, "adagrad_elem", n * d, k_adagrad_elem, n, d,
		    a->lr, idx, grad, table, state);
	case KG_BE_ADAM:
		return launch(be, "adam", n, k_adam, n, d, a->lr, a->beta1,
		    a->beta2, a->eps, idx, grad, table, state);
	}
	return -1;
}

int
cu_regularise(struct kg_backend *be, size_t n, const float *x, float *g,
    double coef, unsigned p, double scale, double *value)
{
	return launch(be, "regularise", n, k_regularise, n, x, g, coef, p,
	    scale, value);
}

int
cu_regularise_sets(struct kg_backend *be, const struct kg_dev_regsets *rs,
    double coef, unsigned p, double scale, double *value)
{
	size_t n = 0;
	unsigned k;

	for (k = 0; k < rs->nsets; k++)
		n += rs->n[k];
	return launch(be, "regularise_sets", n, k_regularise_sets, *rs, coef,
	    p, scale, value);
}

int
cu_rank_counts(struct kg_backend *be, size_t nq, size_t nc,
    const float *scores, const float *s, const int64_t *excl_off,
    const int64_t *excl, uint64_t *greater, uint64_t *equal)
{
	return launch(be, "rank_counts", nq * KG_DEV_RANK_LANES, k_rank_counts,
	    nq, nc, scores, s, excl_off, excl, greater, equal);
}

__global__ void
k_transr(int sign, size_t n, size_t d, size_t k, const float *x,
    const float *rel, float *y)
{
	kg_dev_t_transr(TID, sign, n, d, k, x, rel, y);
}

__global__ void
k_transr_bwd_x(size_t n, size_t d, size_t k, const float *rel,
    const float *gy, float *gx)
{
	kg_dev_t_transr_bwd_x(TID, n, d, k, rel, gy, gx);
}

__global__ void
k_transr_bwd_r(int sign, size_t n, size_t d, size_t k, const float *x,
    const float *gy, float *grel)
{
	kg_dev_t_transr_bwd_r(TID, sign, n, d, k, x, gy, grel);
}

int
cu_transr(struct kg_backend *be, int sign, size_t n, size_t d, size_t k,
    const float *x, const float *rel, float *y)
{
	return launch(be, "transr", n * k, k_transr, sign, n, d, k, x, rel,
	    y);
}

int
cu_transr_backward(struct kg_backend *be, int sign, size_t n, size_t d,
    size_t k, const float *x, const float *rel, const float *gy, float *gx,
    float *grel)
{
	if (gx != NULL && d > 0 && launch(be, "transr_backward", n * d,
	    k_transr_bwd_x, n, d, k, rel, gy, gx) < 0)
		return -1;
	if (grel == NULL)
		return 0;
	return launch(be, "transr_backward", n * (k + k * d), k_transr_bwd_r,
	    sign, n, d, k, x, gy, grel);
}

/* The partition buffer's negative pool. */
__global__ void
k_scatter_sqnorm(size_t n, size_t d, const float *src, const int64_t *idx,
    float *out)
{
	kg_dev_t_scatter_sqnorm(TID, n, d, src, idx, out);
}

__global__ void
k_adagrad_sq(size_t n, size_t d, float lr, const int64_t *idx,
    const float *grad, const float *sq, float *table, float *state)
{
	kg_dev_t_adagrad_sq(TID, n, d, lr, idx, grad, sq, table, state);
}

int
cu_scatter_sqnorm(struct kg_backend *be, size_t n, size_t d,
    const float *src, const int64_t *idx, float *out)
{
	return launch(be, "scatter_sqnorm", n, k_scatter_sqnorm, n, d, src,
	    idx, out);
}

int
cu_adagrad_sq(struct kg_backend *be, size_t n, size_t d, float lr,
    const int64_t *idx, const float *grad, const float *sq, float *table,
    float *state)
{
	return launch(be, "adagrad_sq", n, k_adagrad_sq, n, d, lr, idx, grad,
	    sq, table, state);
}

const struct kg_backend_ops cuda_ops = {
	cu_release, cu_alloc, cu_free, cu_host_alloc, cu_host_free, cu_zero,
	cu_copy, cu_sync, cu_upload_ordered, cu_event_record, cu_event_wait,
	cu_sgemm_batched, cu_gather, cu_scatter_add, cu_row_sets,
	cu_work_size, cu_chunk,
	cu_chunk_backward, cu_pairs, cu_pairs_backward, cu_query,
	cu_query_backward, cu_scale, cu_dsum, cu_loss, cu_loss_sum, cu_optim,
	cu_regularise, cu_regularise_sets, cu_rank_counts, cu_transr,
	cu_transr_backward, cu_scatter_sqnorm, cu_adagrad_sq,
};

} /* namespace */

extern "C" int
kg_backend_cuda_count(int *n, char *err, size_t errlen)
{
	cudaError_t e = cudaGetDeviceCount(n);

	if (e != cudaSuccess) {
		snprintf(err, errlen, "%s: %s", cudaGetErrorName(e),
		    cudaGetErrorString(e));
		*n = 0;
		return -1;
	}
	return 0;
}

extern "C" int
kg_backend_cuda_init(struct kg_backend *be, int index)
{
	cudaDeviceProp prop;
	cuda_impl *c;
	cublasStatus_t s;
	cudaError_t e;

	if (load_blas(index) < 0)
		return -1;
	CK(be, cudaSetDevice(index));
	CK(be, cudaGetDeviceProperties(&prop, index));
	c = static_cast<cuda_impl *>(calloc(1, sizeof(*c)));
	if (c == NULL) {
		kg_error("out of memory");
		return -1;
	}
	c->dev = index;
	e = cudaStreamCreateWithFlags(&c->comp, cudaStreamNonBlocking);
	if (e != cudaSuccess) {
		free(c);
		return cuda_fail(be, "cudaStreamCreate", e);
	}
	e = cudaStreamCreateWithFlags(&c->copy, cudaStreamNonBlocking);
	if (e != cudaSuccess) {
		cudaStreamDestroy(c->comp);
		free(c);
		return cuda_fail(be, "cudaStreamCreate", e);
	}
	for (; c->n_ev < KG_BE_EVENTS; c->n_ev++) {
		e = cudaEventCreateWithFlags(&c->ev[c->n_ev],
		    cudaEventDisableTiming);
		if (e != cudaSuccess) {
			destroy_streams(c);
			return cuda_fail(be, "cudaEventCreate", e);
		}
	}
	s = blas.create(&c->blas);
	if (s != CUBLAS_STATUS_SUCCESS) {
		destroy_streams(c);
		return blas_fail(be, "cublasCreate", s);
	}
	s = blas.set_stream(c->blas, c->comp);
	if (s != CUBLAS_STATUS_SUCCESS) {
		blas.destroy(c->blas);
		destroy_streams(c);
		return blas_fail(be, "cublasSetStream", s);
	}
	be->ops = &cuda_ops;
	be->gnn = &kg_cuda::cuda_gnn_ops;
	be->text = &kg_backend_cuda_text_ops;
	be->impl = c;
	snprintf(be->name, sizeof(be->name), "cuda:%d:%.120s", index, prop.name);
	return 0;
}
