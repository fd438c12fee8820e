/*
 * devops_tile_emu: a tiled launch of compute/devops_tile.h (its block
 * functions kg_dev_tile_*) emulated on the CPU, as the CUDA backend's
 * k_chunk_tile and k_chunk_bwd_tile run it: every block of the grid,
 * each phase over all the block's threads before the next phase (the
 * barriers), one shared-memory struct a block and the threads' registers
 * as arrays.  The shared memory is poisoned with NaN before every load
 * phase, so a thread that reads a slot its block did not stage in this
 * slab makes a NaN; reverse runs the threads of each phase last to
 * first, which changes the result only if two threads' work overlaps
 * within a phase.  Tests only.
 */
#ifndef KG_TEST_DEVOPS_TILE_EMU_H
#define KG_TEST_DEVOPS_TILE_EMU_H

#include <math.h>
#include <stdlib.h>

#include "compute/devops_tile.h"
#include "core/util.h"

#define EMU_TSQ (KG_DEV_TSUB * KG_DEV_TSUB)

static inline void
emu_tile_poison(struct kg_dev_tile_smem *sm)
{
	float *p = (float *)sm;
	size_t i;

	for (i = 0; i < sizeof(*sm) / sizeof(float); i++)
		p[i] = NAN;
}

/* The thread a phase runs n-th. */
static inline unsigned
emu_tile_thread(unsigned n, int reverse)
{
	return reverse ? KG_DEV_TILE_THREADS - 1 - n : n;
}

/* The forward (kg_be_chunk's out and dist) of a.sim over a's rows. */
static inline void
emu_chunk_tile(struct kg_dev_tile a, int reverse)
{
	struct kg_dev_tile_smem *sm = kg_xmalloc(sizeof(*sm));
	float (*acc)[EMU_TSQ] = kg_xcalloc(KG_DEV_TILE_THREADS, sizeof(*acc));
	size_t gx = kg_dev_tile_fwd_gx(a), gy = kg_dev_tile_fwd_gy(a);
	size_t ns = kg_dev_tile_fwd_slabs(a), bx, by, s, k;
	unsigned n, t;

	for (bx = 0; bx < gx; bx++)
		for (by = 0; by < gy; by++) {
			for (n = 0; n < KG_DEV_TILE_THREADS; n++)
				for (k = 0; k < EMU_TSQ; k++)
					acc[n][k] = 0.0f;
			for (s = 0; s < ns; s++) {
				emu_tile_poison(sm);
				for (n = 0; n < KG_DEV_TILE_THREADS; n++) {
					t = emu_tile_thread(n, reverse);
					kg_dev_tile_fwd_load((unsigned)bx,
					    (unsigned)by, t, a, s, sm);
				}
				for (n = 0; n < KG_DEV_TILE_THREADS; n++) {
					t = emu_tile_thread(n, reverse);
					kg_dev_tile_fwd_acc(t, a, s, sm, acc[t]);
				}
			}
			for (n = 0; n < KG_DEV_TILE_THREADS; n++) {
				t = emu_tile_thread(n, reverse);
				kg_dev_tile_fwd_store((unsigned)bx, (unsigned)by,
				    t, a, acc[t]);
			}
		}
	free(sm);
	free(acc);
}

/* The backward as k_chunk_bwd_tile runs it: a.out (gq) overwritten and,
 * unless gc is NULL, gc added to, the two sides' blocks in one grid. */
static inline void
emu_chunk_bwd_tile(struct kg_dev_tile a0, float *gc, int reverse)
{
	struct kg_dev_tile_smem *sm = kg_xmalloc(sizeof(*sm));
	float (*own)[2 * EMU_TSQ] = kg_xcalloc(KG_DEV_TILE_THREADS,
	    sizeof(*own));
	float (*acc)[2 * EMU_TSQ] = kg_xcalloc(KG_DEV_TILE_THREADS,
	    sizeof(*acc));
	size_t gx = kg_dev_tile_bwd_gx2(a0, gc), gy = kg_dev_tile_bwd_gy(a0);
	size_t bx, by, s, ns;
	unsigned bz, gz = gc != NULL ? 2 : 1, n, t;

	for (bz = 0; bz < gz; bz++)
		for (bx = 0; bx < gx; bx++)
			for (by = 0; by < gy; by++) {
	struct kg_dev_tile a = a0;

	if (!kg_dev_tile_bwd_block(&a, (unsigned)bx, (unsigned)by, bz, gc))
		continue;
	ns = kg_dev_tile_bwd_slabs(a);
	for (n = 0; n < KG_DEV_TILE_THREADS; n++) {
		t = emu_tile_thread(n, reverse);
		kg_dev_tile_bwd_init((unsigned)bx, (unsigned)by, t, a, own[t],
		    acc[t]);
	}
	for (s = 0; s < ns; s++) {
		emu_tile_poison(sm);
		for (n = 0; n < KG_DEV_TILE_THREADS; n++) {
			t = emu_tile_thread(n, reverse);
			kg_dev_tile_bwd_load((unsigned)bx, (unsigned)by, t, a, s,
			    sm);
		}
		for (n = 0; n < KG_DEV_TILE_THREADS; n++) {
			t = emu_tile_thread(n, reverse);
			kg_dev_tile_bwd_acc(t, a, s, sm, own[t], acc[t]);
		}
	}
	for (n = 0; n < KG_DEV_TILE_THREADS; n++) {
		t = emu_tile_thread(n, reverse);
		kg_dev_tile_bwd_store((unsigned)bx, (unsigned)by, t, a, acc[t]);
	}
			}
	free(sm);
	free(own);
	free(acc);
}

/* kg_be_chunk through the tiles. */
static inline void
emu_tile_chunk(int sim, size_t nq, size_t nc, size_t d, float gamma,
    const float *q, const float *c, float *out, float *dist, int reverse)
{
	struct kg_dev_tile a = { sim, 0, nq, nc, d, gamma, q, c, NULL, dist,
		out };

	emu_chunk_tile(a, reverse);
}

/* kg_be_chunk_backward through the tiles (gc NULL: not computed). */
static inline void
emu_tile_chunk_backward(int sim, size_t nq, size_t nc, size_t d,
    const float *q, const float *c, const float *g, float *dist, float *gq,
    float *gc, int reverse)
{
	struct kg_dev_tile a = { sim, KG_DEV_TILE_GQ, nq, nc, d, 0.0f, q, c, g,
		dist, gq };

	emu_chunk_bwd_tile(a, gc, reverse);
}

#endif
