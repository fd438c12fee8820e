/*
 * train_device_impl: the device trainer's state, shared by its drivers
 * (lib/kge only): train_device.c (the whole table on the device),
 * engine_device.c (the partitions of a device tier, lib/store/dev_tier.h,
 * and one bucket at a time under mpirun) and train_device_pool.c (the
 * negative pool on the device).
 */
#ifndef KG_TRAIN_DEVICE_IMPL_H
#define KG_TRAIN_DEVICE_IMPL_H

#include "kge/plan.h"
#include "kge/train_device.h"
#include "kge/train_impl.h"

/* Device buffers: tables, a chunk's rows and gradients. */
struct dev_bufs {
	float *W, *Ws;		/* entity rows, their optimiser state */
	float *R, *Rs;		/* relation rows, their optimiser state */
	float *rows;		/* M x d: fixed | positive candidates | negatives */
	float *rel;		/* B x rw, one per positive */
	float *q, *gq;		/* B x qd */
	float *pos, *pdist, *gpos;	/* B */
	float *S, *dist, *G;	/* B x N */
	float *work;		/* kg_be_work_size */
	/* The gradients, one allocation (gall) so that one kg_be_zero
	 * clears them: grows, grel, ug, ugr in this order. */
	float *gall;
	float *grows;		/* M x d, as rows */
	float *grel;		/* B x rw */
	float *ug;		/* M x d: the distinct entity rows' sums */
	float *ugr;		/* B x rw: the distinct relation rows' sums */
	double *lrow;		/* B: each positive's loss */
	double *lsum;		/* 1: the epoch's loss sum */
	int64_t *idx;		/* the index batch (below) */
	/* TransR (queries of k floats): the positives' projections and
	 * their gradients (B x k); each query's projection of the shared
	 * negatives, its query repeated, and their gradients (B x N x k);
	 * rep[i N + j] = i; each query's share of the negatives' gradient
	 * (B x N x d) and B ones, which sum those shares in one GEMM. */
	float *pp, *gpp, *Pn, *gPn, *qx, *gqx, *gPC, *ones;
	int64_t *rep;
};

/*
 * The negative pool on the device (a device tier's buckets with
 * neg_pool; train_device_pool.c), kept with the device trainer because
 * its step gathers the pool's negatives from it: the device side of the
 * trainer's struct kg_neg_pool, whose host side (slots, IDs, the valid, pending and carry
 * flags, the draws) it keeps: the slots' rows, and two banks of the
 * slots' summed gradients and squares, each 2 slots rows (bank b of
 * slot i at b slots + i).  bank[q] names the bank that gathers partition
 * q's gradients of this epoch; the other holds its carry from the epoch
 * before (kg_neg_pool_choose's copy becomes a flip).
 */
struct dev_pool {
	float *rows;		/* slots x d */
	float *grad;		/* 2 slots x d */
	float *sq;		/* 2 slots */
	float *tg, *tsq;	/* k x d, k: a round of slots' gradients */
	int64_t *idx;		/* 2 k: device rows, then slot rows */
	int64_t *hidx;		/* host staging of idx */
	uint8_t *bank;		/* [P] */
	uint64_t slots, k;	/* all slots; the most of one partition */
};

struct kg_dev_trainer {
	struct kg_trainer *tr;
	struct kg_backend *be;
	const struct kg_store_part *part;
	enum kg_qform form;
	enum kg_kern_sim sim;
	size_t d, rw, esw, rsw;	/* widths: rows, relation rows, states */
	size_t qd;		/* a query's floats: d, or TransR's k */
	int transr;
	size_t B, N, M;		/* capacities: positives, negatives, rows */
	struct dev_bufs dv;
	int own_table;		/* dv.W and dv.Ws allocated here */
	/*
	 * The index batch, host side (pinned for a GPU): at fixed offsets
	 * of capacity, the entity rows to gather (M), each one's slot among
	 * the distinct rows (M), the distinct rows (M), then the same for
	 * relations (B each), then the pool negatives' slots and their
	 * rows in the banks (N each).  Two of them, hbuf[0] and hbuf[1],
	 * taken in turn (hidx the current one): chunk t's batch is copied
	 * to the device on the compute stream without a wait while the host
	 * builds chunk t + 1's in the other; backend event b, recorded after
	 * the copy from hbuf[b], is waited for before hbuf[b] is refilled.
	 */
	int64_t *hbuf[2], *hidx;
	unsigned cur;
	size_t n_idx;
	struct kg_plan plan;	/* the chunk's (kg_plan_chunk) */
	/*
	 * Where a chunk's rows are.  The whole table (kg_dev_trainer_open):
	 * row_shift NULL (entity e is device row e), bucket (0, 0).  The
	 * bucket places (engine_device.c) set them per bucket: entity e of
	 * partition p (on the device) is device row e + row_shift[p],
	 * and the chunks are planned as bucket (ph, pt)'s, which gives the
	 * partitions the negatives come from and the random stream.
	 */
	const int64_t *row_shift;
	uint32_t ph, pt;
	/*
	 * The negative pool (np NULL: none).  The plan's n_pool pool
	 * negatives are gathered from pool.rows and their gradients summed
	 * into the pool's bank; its draws of rows in the bucket's other
	 * partition are negatives in hand.
	 */
	struct kg_neg_pool *np;
	struct dev_pool pool;
	/*
	 * Data-parallel (the trainer's merge hook set; train_device.c): a
	 * chunk's distinct rows and their summed gradients downloaded into
	 * these host buffers (pinned for a GPU), handed to merge, and the
	 * merged sums uploaded and applied: M entity rows (IDs, M x d
	 * floats), B relation rows (IDs, B x rw floats).
	 */
	uint64_t *x_ent;
	float *x_ent_g;
	uint32_t *x_rel;
	float *x_rel_g;
	/*
	 * Frozen rows (the trainer's frozen_ent, frozen_rel; kge/train.h):
	 * the index batch lists a chunk's distinct rows that train first,
	 * nu_train of entities and nr_train of relations, and the frozen
	 * ones after them, each occurrence's slot renumbered by eperm and
	 * rperm (M and B, the plan's slot to the batch's); the optimiser
	 * steps the rows that train only, so a frozen row and its state
	 * stay as they are on every backend.  Without frozen rows eperm
	 * and rperm are NULL and the batch keeps the plan's order.
	 */
	uint32_t *eperm, *rperm;
	size_t nu_train, nr_train;
};

/* Offsets into the index batch. */
#define I_ENT(dt) 0
#define I_ESLOT(dt) ((dt)->M)
#define I_UENT(dt) (2 * (dt)->M)
#define I_REL(dt) (3 * (dt)->M)
#define I_RSLOT(dt) (3 * (dt)->M + (dt)->B)
#define I_UREL(dt) (3 * (dt)->M + 2 * (dt)->B)
#define I_PSLOT(dt) (3 * (dt)->M + 3 * (dt)->B)	/* N: pool slots */
#define I_PBANK(dt) (I_PSLOT(dt) + (dt)->N)	/* N: their bank rows */

/*
 * A trainer for tr on be with a device entity table (rows and optimiser
 * state) of table_rows rows, every other buffer allocated, nothing
 * uploaded and no partition pinned (part NULL): the bucket places'
 * start.  table_rows 0: no entity table; the caller points dv.W and
 * dv.Ws at one it owns (a device tier's slots), which outlives the
 * trainer.  NULL after kg_error() (options refused, device memory).
 * Free with kg_dev_trainer_free.
 */
struct kg_dev_trainer *kg_dev_trainer_alloc(struct kg_trainer *tr,
    struct kg_backend *be, uint64_t table_rows);

/*
 * One chunk of len positives tri corrupting side, chunk number c of its
 * bucket (or epoch) at position start: the index batch is built and
 * uploaded, everything after runs on the device, the loss added to
 * dv.lsum.  0 or -1 after kg_error().
 */
int kg_dev_step(struct kg_dev_trainer *dt, const int32_t *tri, size_t len,
    int side, uint64_t c, uint64_t start);

/*
 * The negative pool on the device (struct dev_pool), for a trainer whose
 * partitions are those of a device tier (row_shift set for the
 * partitions named, which must be on the device); each returns 0 or -1
 * after kg_error().
 *   kg_dev_pool_open      allocate the pool's device buffers for tr's
 *                         pool (tr->pool.k > 0) and take a resumed run's
 *                         waiting gradients (the host pool's) into bank 0;
 *   kg_dev_pool_load      the epoch's pool (before its first bucket; no
 *                         pool: kg_trainer_pool_load's alone): the pool's
 *                         choice of rows (kg_trainer_pool_load, from the
 *                         store as the last flush left it) on the device,
 *                         the gradients still waiting moved to the carry;
 *   kg_dev_pool_apply     partition q's waiting gradients (carried from
 *                         the epoch before, then this epoch's) applied to
 *                         its rows, as train_bucket.c's apply_pool;
 *   kg_dev_pool_fill      the pool's copies of q's chosen rows as they are
 *                         now on the device (kg_neg_pool_fill);
 *   kg_dev_pool_download  this epoch's gradients into the host pool (for
 *                         a checkpoint);
 *   kg_dev_pool_free      free the device buffers (no pool: no-op).
 * Without a pool (np NULL) apply, fill and download do nothing.
 */
int kg_dev_pool_open(struct kg_dev_trainer *dt);
int kg_dev_pool_load(struct kg_dev_trainer *dt);
int kg_dev_pool_apply(struct kg_dev_trainer *dt, uint32_t q);
int kg_dev_pool_fill(struct kg_dev_trainer *dt, uint32_t q);
int kg_dev_pool_download(struct kg_dev_trainer *dt);
void kg_dev_pool_free(struct kg_dev_trainer *dt);

/* The optimiser kind of n rows idx (distinct) of a table with gradients
 * g: kg_be_adagrad, kg_be_adagrad_elem or kg_be_adam.  0 or -1. */
int kg_dev_optim(struct kg_backend *be, enum kg_optim_kind kind, size_t n,
    size_t d, float lr, const int64_t *idx, const float *g, float *w,
    float *state);

#endif
