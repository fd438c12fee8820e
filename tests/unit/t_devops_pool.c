/*
 * The negative pool's device operations (backend.h's kg_be_scatter_sqnorm
 * and kg_be_adagrad_sq): the CPU backend against lib/kge's own pool
 * (kg_neg_pool_add_grad's squares, apply_slots's Adagrad step written out
 * from train_bucket.c's contract), and the thread functions of
 * devops_pool.h, which the CUDA kernels wrap, over an emulated grid
 * against the CPU backend within a relative 1e-5: blocks of 256 and 32 threads, row
 * counts that fill neither, repeated indices where they may repeat, and
 * guard floats past every output that no thread may touch.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compute/backend.h"
#include "compute/devops_pool.h"
#include "core/rng.h"
#include "core/util.h"
#include "kge/sampler.h"
#include "devops_emu.h"
#include "test.h"

static struct kg_backend *cpu;

/* Whether got is within a relative 1e-5 of want over n floats and the
 * guard past got is untouched. */
static int
close_rel(const float *got, const float *want, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (fabsf(got[i] - want[i]) > 1e-5f * fmaxf(1.0f,
		    fabsf(want[i])))
			return 0;
	for (i = 0; i < GUARD; i++)
		if (got[n + i] != POISON)
			return 0;
	return 1;
}

/* The squares a pool slot gains: the CPU backend gives the bits of
 * kg_neg_pool_add_grad on one thread, the grid the same within 1e-5. */
static void
t_scatter_sqnorm(void)
{
	const size_t d = 13, slots = 11, parts = 2;
	uint64_t off[3] = { 0, 6, 11 };
	struct kg_neg_pool np = KG_NEG_POOL_INIT;
	struct kg_rng r;
	size_t k, n;

	kg_rng_seed(&r, 31, 0);
	kg_neg_pool_init(&np, (uint32_t)parts, off, 8, (uint32_t)d, 1);
	for (n = 1; n <= 300; n += 299)
		for (k = 0; k < KG_ARRAY_LEN(bdims); k++) {
			float *g = rnd(&r, n * d, -1, 1);
			float *sq = rnd(&r, slots, 0, 1), *sq2 = dup(sq, slots);
			int64_t *idx = kg_xmallocarray(n, sizeof(*idx));
			size_t i;

			memcpy(np.sq, sq, slots * sizeof(float));
			/* Repeated slots, as a chunk draws them. */
			for (i = 0; i < n; i++) {
				idx[i] = (int64_t)((i * 5 + 2) % slots);
				kg_neg_pool_add_grad(&np, 0, (uint32_t)idx[i],
				    g + i * d);
			}
			T_CHECK(kg_be_scatter_sqnorm(cpu, n, d, g, idx, sq) ==
			    0);
			T_CHECKF(memcmp(sq, np.sq, slots * sizeof(float)) == 0,
			    "n %zu: the pool's squares", n);
			EMU(bdims[k], n, kg_dev_t_scatter_sqnorm, n, d, g, idx,
			    sq2);
			T_CHECKF(close_rel(sq2, sq, slots), "n %zu, block %u",
			    n, bdims[k]);
			free(g);
			free(sq);
			free(sq2);
			free(idx);
		}
	kg_neg_pool_release(&np);
}

/* A slot's step: state + sq, then lr / (sqrt(state) + eps) times the
 * summed gradient (sq 0: the plain row-wise step). */
static void
t_adagrad_sq(void)
{
	const size_t rows = 40, d = 9;
	struct kg_rng r;
	size_t k, n;

	kg_rng_seed(&r, 32, 0);
	for (n = 3; n <= 37; n += 34)
		for (k = 0; k < KG_ARRAY_LEN(bdims); k++) {
			float *tab = rnd(&r, rows * d, -1, 1);
			float *st = rnd(&r, rows, 0, 1);
			float *grad = rnd(&r, n * d, -1, 1);
			float *sq = rnd(&r, n, 0.1f, 2);
			float *tab2 = dup(tab, rows * d), *st2 = dup(st, rows);
			float *tab0 = dup(tab, rows * d), *st0 = dup(st, rows);
			float *orig = dup(tab, rows * d);
			int64_t *idx = kg_xmallocarray(n, sizeof(*idx));
			size_t i, l;
			int exact = 1;

			sq[1] = 0.0f;	/* the plain step */
			for (i = 0; i < n; i++)
				idx[i] = (int64_t)((i * 7 + 3) % rows);
			T_CHECK(kg_be_adagrad_sq(cpu, n, d, 0.1f, idx, grad, sq,
			    tab, st) == 0);
			/* The reference, written from the contract. */
			for (i = 0; i < n; i++) {
				size_t rr = (size_t)idx[i];
				float inc = sq[i], step;

				if (inc == 0.0f) {
					float ss = 0.0f;

					for (l = 0; l < d; l++)
						ss += grad[i * d + l] *
						    grad[i * d + l];
					inc = ss / (float)d;
				}
				st0[rr] += inc;
				step = 0.1f / (sqrtf(st0[rr]) + 1e-10f);
				for (l = 0; l < d; l++)
					tab0[rr * d + l] -= step *
					    grad[i * d + l];
			}
			for (i = 0; i < rows * d; i++)
				exact &= fabsf(tab0[i] - tab[i]) <= 1e-6f;
			T_CHECKF(exact && close_rel(st, st0, rows),
			    "n %zu: the reference step", n);
			EMU(bdims[k], n, kg_dev_t_adagrad_sq, n, d, 0.1f, idx,
			    grad, sq, tab2, st2);
			T_CHECKF(close_rel(tab2, tab, rows * d) &&
			    close_rel(st2, st, rows), "n %zu, block %u", n,
			    bdims[k]);
			/* Not vacuous: the rows moved. */
			T_CHECK(tab[(size_t)idx[0] * d] != orig[(size_t)idx[0] *
			    d]);
			free(tab);
			free(st);
			free(grad);
			free(sq);
			free(tab2);
			free(st2);
			free(tab0);
			free(st0);
			free(orig);
			free(idx);
		}
}

int
main(void)
{
	struct kg_device d = KG_DEVICE_INIT;

	cpu = kg_backend_open(&d);
	if (cpu == NULL)
		return 1;
	T_RUN(t_scatter_sqnorm);
	T_RUN(t_adagrad_sq);
	kg_backend_free(cpu);
	return T_DONE();
}
