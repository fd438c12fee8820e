/*
 * devops_base: what every devops_*.h header of device arithmetic shares,
 * the functions of one element, row or thread written once for the CPU
 * and the GPU.  Each of those functions is KG_HD: __host__ __device__
 * under nvcc (the CUDA backend, lib/compute/cuda/, launches them over a
 * grid) and static inline C11 under gcc, where the CPU backend calls the
 * element functions and the tests (tests/unit/devops_emu.h) run the
 * thread functions over an emulated grid.  Element functions
 * (kg_dev_fexp, kg_dev_sim, ...) are the maths of one value, the same
 * expressions the CPU kernels evaluate; thread functions (kg_dev_t_*)
 * are the body of one CUDA thread given its grid coordinates (block,
 * thread, block size): each computes its flat index, returns at once
 * when that index is past the work, and writes only what it owns, or
 * adds through kg_dev_atomic_add where threads share an output, so a
 * CUDA kernel is one line.  Sums over d run in the CPU kernels' order
 * (lib/compute/lanes.h: eight lanes, then the tail in lane 0, then the
 * lanes in order), so a result is close to the CPU's, often equal (the
 * tests allow a relative 1e-5).  Index arrays are int64_t row numbers
 * the callers keep in range; nothing here allocates, reports errors or
 * keeps state.  This header holds the grid arithmetic, the atomics, the
 * bit casts, the lane-ordered dot product and the phases of a block's
 * sum.
 */
#ifndef KG_DEVOPS_BASE_H
#define KG_DEVOPS_BASE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__CUDACC__)
#define KG_HD static inline __host__ __device__
#define KG_RESTRICT __restrict__
#elif defined(__GNUC__)
#define KG_HD static inline __attribute__((always_inline))
#define KG_RESTRICT restrict
#else
#define KG_HD static inline
#define KG_RESTRICT restrict
#endif

/* The lanes of the CPU kernels' sums (lanes.h). */
#define KG_DEV_LANES 8

/* Threads per block of every CUDA launch; the emulated grid uses it too. */
#define KG_DEV_BLOCK 256

/* Threads of a warp, the lanes of a warp-per-row kernel. */
#define KG_DEV_WARP 32

/* The flat index of a thread. */
KG_HD size_t
kg_dev_tid(unsigned block, unsigned thread, unsigned bdim)
{
	return (size_t)block * bdim + thread;
}

/* Blocks of bdim threads that cover n items. */
KG_HD size_t
kg_dev_nblocks(size_t n, unsigned bdim)
{
	return (n + bdim - 1) / bdim;
}

/* *p += v, atomically on the device (threads share p), plainly on the
 * host, where the emulated grid runs one thread at a time. */
KG_HD void
kg_dev_atomic_add(float *p, float v)
{
#if defined(__CUDA_ARCH__)
	atomicAdd(p, v);
#else
	*p += v;
#endif
}

KG_HD void
kg_dev_atomic_add_u64(uint64_t *p, uint64_t v)
{
#if defined(__CUDA_ARCH__)
	atomicAdd((unsigned long long *)p, (unsigned long long)v);
#else
	*p += v;
#endif
}

KG_HD void
kg_dev_atomic_add_d(double *p, double v)
{
#if defined(__CUDA_ARCH__)
	atomicAdd(p, v);
#else
	*p += v;
#endif
}

KG_HD float
kg_dev_as_float(int32_t i)
{
#if defined(__CUDA_ARCH__)
	return __int_as_float(i);
#else
	union {
		float f;
		int32_t i;
	} u;

	u.i = i;
	return u.f;
#endif
}

KG_HD int32_t
kg_dev_as_int(float f)
{
#if defined(__CUDA_ARCH__)
	return __float_as_int(f);
#else
	union {
		float f;
		int32_t i;
	} u;

	u.f = f;
	return u.i;
#endif
}

/*
 * sum_k a[k] b[k] over n floats in the CPU kernels' order (lanes.h's
 * sum_dot: eight lanes, the tail in lane 0, the lanes in order), so a
 * row product here gives the bits kg_kern_matvec's does.
 */
KG_HD float
kg_dev_dot(const float *a, const float *b, size_t n)
{
	float L[KG_DEV_LANES] = { 0 }, s = 0.0f;
	size_t k = 0, l;

	for (; k + KG_DEV_LANES <= n; k += KG_DEV_LANES)
		for (l = 0; l < KG_DEV_LANES; l++)
			L[l] += a[k + l] * b[k + l];
	for (; k < n; k++)
		L[0] += a[k] * b[k];
	for (l = 0; l < KG_DEV_LANES; l++)
		s += L[l];
	return s;
}

/*
 * A block's sum of one double per thread, with one atomic a block
 * instead of one a thread: the phases a kernel runs with a barrier after
 * each, over bdim threads (a power of two, at most KG_DEV_BLOCK), in
 * shared memory sm of bdim doubles:
 *
 *	put (every thread its value, 0 past the work)
 *	for s = bdim / 2, bdim / 4, ..., 1: step s
 *	out (thread 0 adds the block's sum to *acc)
 *
 * In step s thread t < s adds slot t + s into slot t, and no thread of
 * that step writes a slot another reads, so the phases run over a
 * block's threads one at a time, in any order, give the GPU's bits
 * (tests/unit/devops_emu.h's EMU_SUM).  Within a block the sum is a
 * fixed tree; the blocks' sums reach *acc in the order their atomics
 * land.
 */
KG_HD void
kg_dev_bsum_put(unsigned t, double v, double *sm)
{
	sm[t] = v;
}

KG_HD void
kg_dev_bsum_step(unsigned t, unsigned s, double *sm)
{
	if (t < s)
		sm[t] += sm[t + s];
}

KG_HD void
kg_dev_bsum_out(unsigned t, const double *sm, double *acc)
{
	if (t == 0)
		kg_dev_atomic_add_d(acc, sm[0]);
}

#endif
