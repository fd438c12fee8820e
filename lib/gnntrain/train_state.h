/*
 * gnntrain/train_state: what kg_gnn_train (gnn_train.h) carries from step to
 * step, shared by its parts (internal to lib/gnn):
 *   driver.c     the driver: checks, set-up, the epochs;
 *   step.c       one step and its workspace;
 *   learned.c    the learned table by rows (its store, its sync across
 *                ranks, the final gather on rank 0);
 *   ckpt.c       checkpoints (save at epoch ends, resume).
 *
 * The workspace (struct kg_gnn_work) is allocated once, before the first
 * step, from bounds: the batch sizes are fixed, and the encoded graph has
 * at most max_nodes nodes and max_msgs messages (the whole graph, or the
 * sampling bounds of gnn/sample.h), and so are the decoder's and the
 * attribute layer's buffers.  A step then allocates nothing; only block
 * R-GCN's per-pair scratch, which has no cheap bound, grows (with
 * headroom) during the first steps and stays.  With several ranks the
 * collectives' buffers in struct kg_dist grow alike (dist/dist.h).
 */
#ifndef KG_GNN_TRAIN_STATE_H
#define KG_GNN_TRAIN_STATE_H

#include "gnn/gnn_decode.h"
#include "gnntrain/gnn_train.h"
#include "gnn/sample.h"
#include "core/rng.h"
#include "kge/epochs.h"
#include "kge/optim.h"
#include "store/store.h"

/* Global ID -> local row, sorted by global ID (both below 2^31). */
struct kg_gnn_gl_pair {
	uint32_t g, l;
};

/*
 * Shared negatives exchanged between ranks (neg_exchange, xneg.c): every
 * rank encodes its chunks' candidates as usual, but each chunk takes its
 * candidates from a rank s drawn with odds in proportion to the ranks'
 * pools (among the ranks with chunks this step), and from that rank one
 * chunk's block drawn uniformly; so a negative is a uniform draw over
 * the union of the pools, as one rank's is over the whole graph, while
 * every rank encodes only nodes of its own part.  Per step: an allgather
 * of each rank's candidates' encoder outputs (B rows of dl floats, B the
 * largest chunks x kc of any rank) and global IDs (B uint64: a chunk's
 * candidate that is the node one of its positives replaces then reads
 * that node's own row, step.c, so the decoder leaves it out of that
 * positive's negatives as it does for one rank), the decoder over this
 * rank's rows and the gathered ones, and a reduce-scatter that returns
 * to each rank the gradients the others took on its candidates, added to
 * its own before the backward pass.  One rank: every chunk is its own, which is
 * plain shared negatives.
 */
struct kg_gnn_xneg {
	size_t R, B, kc, dl;	/* ranks, rows per rank's block, ... */
	uint64_t *pool;		/* [R] each rank's pool (the odds) */
	uint64_t *nch;		/* [R] each rank's chunks this step */
	uint32_t *src, *blk;	/* per chunk of this rank: rank, block */
	int32_t *own;		/* [B] this rank's candidates' rows of h */
	float *send, *back;	/* [B dl] each */
	uint64_t *gsend;	/* [B] this rank's candidates' global IDs
				 * (the caller's, before the gather) */
	uint64_t *gall;		/* [R B] every rank's, gathered */
	float *hx;		/* [(max_rows + R B) dl]: h, then every
				 * rank's block (max_rows: of any step) */
};

/* Collective: B from every rank's max_chunks x kc, the pools gathered;
 * max_rows: the encoder output rows of any step. */
void kg_gnn_xneg_init(struct kg_gnn_xneg *x, struct kg_dist *d,
    size_t max_chunks, size_t kc, size_t dl, uint64_t pool,
    size_t max_rows);
void kg_gnn_xneg_release(struct kg_gnn_xneg *x);
/* Chunk c's source rank and block, drawn from rng (x->nch set for the
 * step, this rank's nonzero). */
void kg_gnn_xneg_pick(struct kg_gnn_xneg *x, size_t c, struct kg_rng *rng);
/* Collective: gather every rank's candidate rows (this rank's: h rows
 * cand[0 .. nch kc), kept in x->own) into x->hx after h's n rows, and
 * their global IDs (x->gsend, which the caller fills) into x->gall, and
 * point the candidates of chunks from other ranks at them.  Returns the
 * rows of x->hx. */
uint64_t kg_gnn_xneg_gather(struct kg_gnn_xneg *x, struct kg_dist *d,
    const float *h, uint64_t n, int32_t *cand, size_t nch, int rank);
/* Collective: gh has n + R B rows, the decoder's gradients over x->hx;
 * add to this rank's candidates' rows the gradients every rank took on
 * them (rows n + r B .. of each rank r). */
void kg_gnn_xneg_scatter(struct kg_gnn_xneg *x, struct kg_dist *d,
    float *gh, uint64_t n, size_t nch);

struct kg_gnn_work {
	size_t nb, nc;		/* positives this step, candidates each */
	size_t nb_max;		/* positives of any step */
	size_t nch, kc;		/* shared negatives: chunks this step,
				 * candidates per chunk */
	uint64_t max_nodes, max_msgs;	/* bounds of the encoded graph */
	uint64_t max_seeds;
	int32_t *pos;		/* [nb, 3] */
	int32_t *cand;		/* [nb * nc, 3]; shared: [nch, kc] nodes */
	uint8_t *side;		/* shared: [nch] 1 = heads replaced */
	int32_t *negs;		/* [nb * neg, 3] */
	int32_t *seeds;		/* [max_seeds] */
	float *dist;		/* adaptive negatives: nc per thread */
	float *grad;		/* every parameter's gradient */
	float *gh;		/* dL/d(encoder output) [max_nodes, dL] */
	uint8_t *mark;		/* learned rows taken this step [n_loc] */
	uint64_t *ids;		/* packed learned rows: global IDs */
	uint64_t *lr;		/* their local rows */
	float *rows;		/* their gradients */
	struct kg_sparse_rows merged;
	struct kg_gnn_sampler sb;
	struct kg_gnn_edrop ed;
	struct kg_gnn_state st;
	struct kg_gnn_decode_work dwork;
	int xneg_on;		/* neg_exchange on more than one rank */
	struct kg_gnn_xneg xneg;
};

/* Everything of a run besides the parameters in out; a checkpoint holds
 * both. */
struct kg_gnn_tstate {
	struct kg_gnn_trained *out;
	const struct kg_gnn_problem *p;
	const struct kg_gnn_train_opts *o;
	struct kg_dist *d;
	size_t n_loc, d0, dl;
	size_t n_lf;		/* learned table floats (offset 0) */
	size_t n_dense;		/* the other encoder parameters */
	size_t n_rel_f;		/* decoder relation floats */
	size_t n_all;		/* encoder + decoder parameters */
	float *st_enc;		/* Adam: 2 n_dense + 1 */
	/* The learned rows and their Adam states: a memory store of n_loc
	 * rows of d0, state 2 d0 + 1 each, one partition, kept pinned
	 * while training (kg_gnn_learned_pin) with out->enc.lw at its rows
	 * and st_learn at their states; out->enc.w's learned block stays
	 * untouched until kg_gnn_learned_unload writes it. */
	struct kg_store *learn;
	int learn_pinned;
	float *st_learn;	/* n_loc x (2 d0 + 1) */
	float *st_rel;		/* 2 n_rel_f + 1 */
	struct kg_adam adam;
	struct kg_gnn_gl_pair *map;	/* n_loc */
	uint8_t *need;			/* learned rows read; NULL: all */
	/* freeze_old (gnn_train.h's struct kg_gnn_frozen, borrowed from
	 * o->warm, NULL: nothing frozen), and frozen_learn[i] = 1 where
	 * local row i is frozen (owned; NULL: none). */
	const struct kg_gnn_frozen *frozen;
	uint8_t *frozen_learn;
	struct kg_rng rng;
	uint64_t *order, cursor;	/* positives: permutation, next */
	uint32_t epoch;			/* epochs done */
	/* The epoch: steps, this step's index, and with batches_per_epoch
	 * every rank's positives per epoch (share) and this step's sum
	 * over the ranks (step_pos). */
	uint64_t steps_per_epoch, estep;
	/* Rank 0's progress line: steps run by this process, when it
	 * started and when the line was last shown. */
	uint64_t steps_run;
	double t_run, t_shown;
	uint64_t *share, step_pos;
	struct kg_gnn_graph full;	/* the problem's whole graph */
	struct kg_gnn_work w;
	/* The epoch loop (kge/epochs.h: validation, stops, the log) and
	 * the best epoch's parameters: the learned rows in the snapshot of
	 * ts->learn, the n_dense other encoder floats and the n_rel_f
	 * relation floats here (NULL: none yet). */
	struct kg_epochs ep;
	float *best_w, *best_rel;
	/* Tests only (tests/tools/gnn_ssgd_check.c): when set, kg_gnn_step
	 * calls it in place of drawing the batch, to fill w.pos and w.cand
	 * (with shared negatives also w.side, w.nch and, exchanged, the
	 * chunks' sources w.xneg.src and w.xneg.blk) for w.nb positives in
	 * local IDs; NULL in every run. */
	void (*draw)(struct kg_gnn_tstate *ts, void *ctx);
	void *draw_ctx;
	/* The device step (device.c; NULL: the CPU's) on its backend, and
	 * whether a step on it failed (kg_error() said why).  The training
	 * state lives on the device between steps: dev_ahead when the
	 * device's is newer than the host's parameters and Adam states
	 * (until kg_gnn_device_sync_host), dev_stale when the host's are
	 * (set at open, a resume or a restored snapshot: pushed before the
	 * next step). */
	struct kg_backend *be;
	struct kg_gnn_dstep *dev;
	int dev_err, dev_ahead, dev_stale;
	double t_dev;
	/* The device step's next batch (step.c), drawn and sampled while
	 * the device ran the one before, within an epoch: ready, and what
	 * step_size and the sampling gave for it. */
	struct kg_gnn_next {
		int ready, empty;
		float scale;
		uint64_t step_pos;
		const struct kg_gnn_graph *g;
		const int32_t *lrow;
		uint64_t n_dst[KG_GNN_MAX_LAYERS];
		int blocks;
	} next;
};

/* driver.c: the paper's epoch (gnn_train.h, Batch sizes) */
/* Positives per epoch of rank r: E split in proportion to the ranks'
 * core triples (cum: their running sums, R + 1 of them, cum[0] = 0). */
uint64_t kg_gnn_epoch_share(const uint64_t *cum, uint32_t R, uint32_t r,
    uint64_t E);
/* Of a rank's e positives per epoch, those of step s of S. */
uint64_t kg_gnn_step_share(uint64_t e, uint64_t S, uint64_t s);

/* driver.c: kg_gnn_train is kg_gnn_tstate_init, a resume, the epochs,
 * the final gather and kg_gnn_tstate_release; tests step a state by
 * hand (kg_gnn_step) between the first and the last. */
/* Check the options, build the models (out's, zeroed first) and every
 * buffer of a run on p; ts borrows out, o, p and d.  Collective: 0 on
 * every rank, or -1 on every rank after kg_error() on the one(s) that
 * failed; call kg_gnn_tstate_release either way. */
int kg_gnn_tstate_init(struct kg_gnn_tstate *ts, struct kg_gnn_trained *out,
    const struct kg_gnn_train_opts *o, const struct kg_gnn_problem *p,
    struct kg_dist *d);
/* What the training buffers hold (not the trained parameters in out). */
void kg_gnn_tstate_release(struct kg_gnn_tstate *ts);

/* step.c */
/* Allocate ts->w for ts's options and problem (full built already, and
 * the epoch planned). */
void kg_gnn_work_init(struct kg_gnn_tstate *ts);
void kg_gnn_work_release(struct kg_gnn_work *w);
/* Step ts->estep of the epoch; returns the summed loss of this rank's
 * positives.  With batches_per_epoch, ts->step_pos gets the step's
 * positives over all ranks (0: the step was empty and skipped). */
double kg_gnn_step(struct kg_gnn_tstate *ts);

/* device.c */
/* Open the backend and the device step when o->device is CUDA or o->seam
 * (after the models are set up): 0, or -1 after kg_error(). */
int kg_gnn_device_open(struct kg_gnn_tstate *ts);
void kg_gnn_device_close(struct kg_gnn_tstate *ts);
/* device_dist.c: the device this rank's steps run on (o->device, its GPU
 * chosen by local rank under mpirun; the CPU with o->seam).  Collective
 * under mpirun.  0, or -1 after kg_error(). */
int kg_gnn_device_of_rank(const struct kg_gnn_tstate *ts,
    struct kg_device *dev);
/* step.c's encode_decode on the device for several ranks, whose
 * gradients are averaged on the host (the update there too): the
 * gradients into ts->w.grad (every parameter's), the encoded rows into
 * ts->w.st.rows; returns the summed loss, or 0 with ts->dev_err set after
 * kg_error(). */
double kg_gnn_device_encode_decode(struct kg_gnn_tstate *ts,
    const struct kg_gnn_graph *g, const uint64_t *n_dst, const int32_t *lrow,
    float scale);
/* step.c's encode_decode and update on the device (ts->dev), in two
 * halves (gnn/step_device.h's kg_gnn_dstep_train_begin and _end): the
 * state pushed first when the host's is newer, the encoded rows into
 * ts->w.st.rows; _begin returns 0, _end the summed loss; after an error
 * -1 or 0.0 with ts->dev_err set after kg_error(). */
int kg_gnn_device_step_begin(struct kg_gnn_tstate *ts,
    const struct kg_gnn_graph *g, const uint64_t *n_dst, const int32_t *lrow,
    float scale);
double kg_gnn_device_step_end(struct kg_gnn_tstate *ts);
/* Before the host reads the parameters or Adam states (validation,
 * snapshots, checkpoints, the end): the device's copied back when newer.
 * 0 (also without a device step), or -1 after kg_error(). */
int kg_gnn_device_sync_host(struct kg_gnn_tstate *ts);
/* After the host changed them: pushed again before the next step. */
void kg_gnn_device_host_changed(struct kg_gnn_tstate *ts);

/* learned.c */
/* ts->map from the problem's global IDs; 0, or -1 after kg_error() when
 * one is out of range or repeated. */
int kg_gnn_learned_map(struct kg_gnn_tstate *ts);
/*
 * An encoder with a learned table of n_rows rows, row i for global ID
 * gid[i] (NULL: i), drawn only where need[i] (NULL: all; gnn.h's
 * kg_gnn_init_rows).  kg_gnn_init draws the other parameters
 * independently of n_rows, which differs between ranks.  0 or -1 after
 * kg_error().
 */
int kg_gnn_model_init(struct kg_gnn *m, const struct kg_gnn_config *c,
    const struct kg_features *f, uint64_t seed, uint64_t n_rows,
    const int32_t *gid, const uint8_t *need);
/*
 * The learned rows training reads: need[i] = 1 when node i (feature row
 * frow[i], NULL: i) has no attribute value.  NULL when every row is read
 * (learned only, or no features).  Caller frees.
 */
uint8_t *kg_gnn_learned_need(const struct kg_gnn_config *c,
    const struct kg_features *f, const int32_t *frow, uint64_t n);
/*
 * The store of the learned rows (ts->learn): open it with row i drawn
 * as kg_gnn_model_init would (where ts->need, or every row) and pin it;
 * pin and unpin (around the store's snapshot, which wants nothing
 * pinned) set and clear out->enc.lw and ts->st_learn.  0, or -1 after
 * kg_error().
 */
int kg_gnn_learned_open(struct kg_gnn_tstate *ts);
int kg_gnn_learned_pin(struct kg_gnn_tstate *ts);
void kg_gnn_learned_unpin(struct kg_gnn_tstate *ts, int dirty);
/* The end of training: the rows into out->enc.w's learned block (the
 * single parameter array again, lw NULL) and the store closed. */
void kg_gnn_learned_unload(struct kg_gnn_tstate *ts);
/* The rows training never read get their initial values, as if drawn
 * at the start (before the final gather or write). */
void kg_gnn_learned_fill(struct kg_gnn_tstate *ts);
/*
 * The learned rows this step used (nodes of g without attribute values;
 * lrow gives each node its local row): pack their gradients by global ID
 * (zeroing them in grad), sum them over the ranks, and take one lazy Adam
 * step on each merged row this rank holds (with the L2 term of the row),
 * so every rank holding a row applies the same update.  Rows are averaged
 * over the ranks like the dense gradients.  Collective.
 */
void kg_gnn_learned_sync(struct kg_gnn_tstate *ts,
    const struct kg_gnn_graph *g, const int32_t *frow, const int32_t *lrow,
    float *grad);
/*
 * Rank 0 takes the whole learned table: every rank sends the rows of the
 * nodes it owns (by global ID), rank 0 puts them into an encoder of
 * o->enc.n_learned rows (the first sender of a row wins; a row nobody
 * sends keeps its initial value) with the dense parameters of its own.
 * Collective; 0 or -1 after kg_error() on rank 0.
 */
int kg_gnn_learned_gather(struct kg_gnn_tstate *ts);

/* valid.c */
/* The epoch loop's valid and snapshot hooks (kge/epochs.h): the filtered
 * valid MRR of the current parameters; the parameters kept as the best
 * (back 0) or put back (back 1).  0, or -1 after kg_error(). */
int kg_gnn_valid_mrr(struct kg_gnn_tstate *ts, double *mrr);
int kg_gnn_snapshot(struct kg_gnn_tstate *ts, int back);
void kg_gnn_valid_release(struct kg_gnn_tstate *ts);

/* ckpt.c (both collective: 0 on every rank or -1 on every rank) */
/* Resume from o->ckpt when asked and the directory exists. */
int kg_gnn_ckpt_resume(struct kg_gnn_tstate *ts);
/* Save the state into o->ckpt->dir, replacing it atomically. */
int kg_gnn_ckpt_save(struct kg_gnn_tstate *ts);

/* warm.c */
/* After kg_gnn_tstate_init, before a resume: ts's parameters from w
 * (gnn_train.h's struct kg_gnn_warm, laid out for the same dataset):
 * the dense encoder parameters, each local node's learned row (by its
 * global ID) where training reads it, and the decoder relations; and
 * w's frozen parameters (ts->frozen, ts->frozen_learn).  The Adam states
 * stay zero. */
void kg_gnn_warm_apply(const struct kg_gnn_warm *w, struct kg_gnn_tstate *ts);

/* step.c: zero the gradients of the frozen dense and relation floats
 * (ts->frozen) in grad (every parameter's, as ts->w.grad), before the
 * Adam steps; nothing without ts->frozen. */
void kg_gnn_frozen_mask(const struct kg_gnn_tstate *ts, float *grad);

/* 1 on every rank when any rank passes bad != 0.  Collective. */
int kg_gnn_any_rank(struct kg_dist *d, int bad);

#endif
