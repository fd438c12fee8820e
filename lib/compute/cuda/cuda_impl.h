/*
 * cuda_impl: what the CUDA backend's two files share
 * (backend_cuda.cu: the backend, its shallow operations;
 * backend_cuda_gnn.cu: the GNN message passing): the backend's state, the
 * error report, the device selection, and the launch of a thread
 * function's kernel over a grid, counted (backend.h's counters).
 * Internal to lib/compute/cuda; CUDA C++ only.
 */
#ifndef KG_CUDA_IMPL_H
#define KG_CUDA_IMPL_H

#define restrict __restrict__
#include "compute/backend_impl.h"
#undef restrict
#include "compute/devops_base.h"

#include <climits>

#include <cublas_v2.h>
#include <cuda_runtime.h>

extern "C" void kg_error(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

namespace kg_cuda {

struct cuda_impl {
	int dev;
	cudaStream_t comp, copy;
	cublasHandle_t blas;
	cudaEvent_t ev[KG_BE_EVENTS];
	int n_ev;		/* events created */
};

inline cuda_impl *
impl(struct kg_backend *be)
{
	return static_cast<cuda_impl *>(be->impl);
}

/* Report a failed runtime call; -1.  The runtime's last error is
 * cleared (a sticky one stays), so that the next launch's check reports
 * its own failure, not this one. */
int cuda_fail(struct kg_backend *be, const char *what, cudaError_t e);

#define CK(be, call) do {						\
	cudaError_t ck_e_ = (call);					\
	if (ck_e_ != cudaSuccess)					\
		return kg_cuda::cuda_fail((be), #call, ck_e_);		\
} while (0)

/*
 * Make the backend's GPU the calling thread's current device, which
 * every runtime call, launch and cuBLAS call of its streams needs (a
 * second backend, or another thread, may have set another): one
 * cudaGetDevice, a read of the runtime's per-thread state, when it
 * already is.  0, or -1 after kg_error().
 */
int use(struct kg_backend *be);

/* Blocks for n threads, or 0 when the grid would be too large. */
inline unsigned
grid(size_t n)
{
	size_t b = kg_dev_nblocks(n, KG_DEV_BLOCK);

	return b > static_cast<size_t>(INT_MAX) ? 0u :
	    static_cast<unsigned>(b);
}

/* Launch kernel k over n threads on the compute stream, counted, and
 * check it; 0 threads: nothing to do (as on the CPU backend), 0. */
template <typename K, typename... A>
int
launch(struct kg_backend *be, const char *what, size_t n, K k, A... args)
{
	unsigned g = grid(n);
	cudaError_t e;

	if (n == 0)
		return 0;
	if (g == 0) {
		kg_error("cuda:%d: %s: %zu threads exceed one grid",
		    be->dev.index, what, n);
		return -1;
	}
	if (use(be) < 0)
		return -1;
	k<<<g, KG_DEV_BLOCK, 0, impl(be)->comp>>>(args...);
	e = cudaGetLastError();
	if (e != cudaSuccess)
		return cuda_fail(be, what, e);
	be->counts.launches++;
	return 0;
}

/* The grid coordinates every thread function takes first. */
#define TID blockIdx.x, threadIdx.x, blockDim.x

/* The GNN operations (backend_cuda_gnn.cu). */
extern const struct kg_backend_gnn_ops cuda_gnn_ops;

} /* namespace kg_cuda */

#endif
