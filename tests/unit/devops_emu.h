/*
 * devops_emu: what the host-emulated device tests (t_devops*.c) share: a
 * CUDA launch emulated over the thread functions of compute/devops_*.h,
 * arrays with poisoned guard floats after them, and a relative
 * comparison that also checks the guards.  Tests only.
 */
#ifndef KG_TEST_DEVOPS_EMU_H
#define KG_TEST_DEVOPS_EMU_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compute/devops_base.h"
#include "core/rng.h"
#include "core/util.h"

/* Run thread function fn over the threads that cover n items, bdim a
 * block, as a CUDA launch of grid(n) blocks would. */
#define EMU(bdim, n, fn, ...) do {					\
	size_t emu_nb_ = kg_dev_nblocks((n), (bdim)), emu_b_;		\
	unsigned emu_t_;						\
	for (emu_b_ = 0; emu_b_ < emu_nb_; emu_b_++)			\
		for (emu_t_ = 0; emu_t_ < (bdim); emu_t_++)		\
			fn((unsigned)emu_b_, emu_t_, (bdim), __VA_ARGS__); \
} while (0)

/*
 * A launch of a kernel that sums per block (cuda/backend_cuda.cu's
 * block_sum): thread function fn(b, t, bdim, ...) returns each thread's
 * value, and devops_base.h's phases kg_dev_bsum_* run over each block's
 * threads one at a time, first to last or (rev) last to first, the
 * shared memory poisoned with NaN before each block, into *acc.  skip:
 * a step size left out (0: none), to plant a broken tree.
 */
#define EMU_SUM(bdim, rev, skip, n, acc, fn, ...) do {			\
	size_t es_nb_ = kg_dev_nblocks((n), (bdim)), es_b_;		\
	double es_sm_[KG_DEV_BLOCK];					\
	unsigned es_k_, es_t_, es_s_;					\
	for (es_b_ = 0; es_b_ < es_nb_; es_b_++) {			\
		for (es_k_ = 0; es_k_ < KG_DEV_BLOCK; es_k_++)		\
			es_sm_[es_k_] = NAN;				\
		for (es_k_ = 0; es_k_ < (bdim); es_k_++) {		\
			es_t_ = (rev) ? (bdim) - 1 - es_k_ : es_k_;	\
			kg_dev_bsum_put(es_t_, fn((unsigned)es_b_, es_t_, \
			    (bdim), __VA_ARGS__), es_sm_);		\
		}							\
		for (es_s_ = (bdim) / 2; es_s_ > 0; es_s_ /= 2)		\
			for (es_k_ = 0; es_s_ != (unsigned)(skip) &&	\
			    es_k_ < (bdim); es_k_++)			\
				kg_dev_bsum_step((rev) ? (bdim) - 1 -	\
				    es_k_ : es_k_, es_s_, es_sm_);	\
		for (es_k_ = 0; es_k_ < (bdim); es_k_++)		\
			kg_dev_bsum_out(es_k_, es_sm_, (acc));		\
	}								\
} while (0)

#define GUARD 8
#define POISON 12345.0f

/* The block sizes every emulated launch is tried with. */
static const unsigned bdims[] = { KG_DEV_BLOCK, 32 };

/* n floats uniform in [lo, hi), then GUARD poison floats. */
static inline float *
rnd(struct kg_rng *r, size_t n, float lo, float hi)
{
	float *x = kg_xmallocarray(n + GUARD, sizeof(*x));
	size_t i;

	for (i = 0; i < n; i++)
		x[i] = lo + (hi - lo) * (float)kg_rng_uniform(r);
	for (i = 0; i < GUARD; i++)
		x[n + i] = POISON;
	return x;
}

/* A copy of x's n floats and its guards. */
static inline float *
dup(const float *x, size_t n)
{
	float *y = kg_xmallocarray(n + GUARD, sizeof(*y));

	memcpy(y, x, (n + GUARD) * sizeof(*y));
	return y;
}

/* |a - b| <= tol max(1, |b|) for n floats, and the guards untouched. */
static inline int
close_tol(const float *a, const float *b, size_t n, float tol,
    const char *what)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!(fabsf(a[i] - b[i]) <= tol * fmaxf(1.0f, fabsf(b[i])))) {
			fprintf(stderr, "%s[%zu]: %.9g against %.9g\n", what, i,
			    (double)a[i], (double)b[i]);
			return 0;
		}
	for (i = n; i < n + GUARD; i++)
		if (a[i] != POISON) {
			fprintf(stderr, "%s: guard %zu written\n", what, i - n);
			return 0;
		}
	return 1;
}

#endif
