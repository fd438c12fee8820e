/*
 * train_job: the description of a shallow training job (the options
 * that are not the trainer's), run by kg_train_run (lib/app/train_run.h):
 * what kg-train does with a shallow model: load the dataset
 * dir, train (resuming from the checkpoint when asked), checkpoint at
 * every epoch end, optionally stop early on validation MRR, and write the
 * model dir atomically (lib/kge/modeldir.h).
 *
 * Training stops at the first of: epochs completed (when epochs > 0),
 * max_step batches (when max_step > 0), early stopping, the time budget
 * or the target validation MRR; the manifest's figure "stopped_by" says
 * which ("epochs", "max_step", "early_stopping", "time_budget",
 * "target_mrr").  With one_vs_all_plateau the manifest's figure
 * "one_vs_all_after" gives the epoch count at which 1-vs-all began.
 */
#ifndef KG_TRAIN_JOB_H
#define KG_TRAIN_JOB_H

#include "compute/backend.h"
#include "kge/train.h"

struct kg_warmstart_opts;

struct kg_train_job {
	const char *dataset;
	const char *output;
	const char *checkpoint_dir;	/* NULL: OUTPUT.ckpt */
	int force;
	int resume;
	int no_checkpoint;
	int keep_checkpoint;		/* keep it after success */
	int quiet, progress;
	uint32_t valid_every;		/* epochs between validations; 0 off */
	uint32_t patience;		/* validations without improvement */
	int argc;
	char *const *argv;
	/*
	 * Distributed runs (lib/dist/ssgd.c): after_init is called once the
	 * trainer is set up (and resumed), after_epoch after every epoch
	 * (before the log line); both return 0, or -1 after kg_error().  A
	 * follower (an MPI rank other than 0) writes no checkpoint and no
	 * model dir and prints nothing.
	 */
	int (*after_init)(void *ctx, struct kg_trainer *tr);
	int (*after_epoch)(void *ctx, struct kg_trainer *tr);
	void *hook_ctx;
	int follower;
	/* Time to accuracy: stop once the training seconds reach
	 * time_budget, or once a validation reaches target_mrr (0: off). */
	double time_budget;
	double target_mrr;
	/* Two stages: once this many validations in a row have not
	 * improved the best MRR, train 1-vs-all from the next epoch on
	 * (tr.o.one_vs_all_after); 0: off.  Needs valid_every. */
	uint32_t one_vs_all_plateau;
	/*
	 * Where the step runs: on a CUDA device, or with seam set on the CPU
	 * backend, the device trainer (kge/train_device.h) trains in place
	 * of kg_trainer_epoch, and the parameters come back to the host
	 * after every epoch (for validation, checkpoints and the model
	 * dir).  The default (a CPU device, seam 0) is the CPU trainer.
	 * seam is a test hook (kg-train's KG_TRAIN_SEAM=cpu), so that the
	 * device path runs end to end where there is no GPU.
	 */
	struct kg_device device;
	int seam;
	/*
	 * Under mpirun with a device: the GPU of every rank, in rank order
	 * (n_gpus of them; lib/dist/gpus.h), for the manifest's figures
	 * ("devices"); gpus_emulated when the choice was the test hook's
	 * (KG_DEVICE_COUNT with the seam: the steps ran on the CPU backend).
	 * n_gpus 0: none recorded.
	 */
	const int *gpus;
	int n_gpus;
	int gpus_emulated;
	/* Rows to start from (kge/warmstart.h), or NULL: a fresh start. */
	const struct kg_warmstart_opts *warm;
};

#define KG_TRAIN_JOB_INIT { 0 }

/* The job options that need others or exclude them (target_mrr and
 * one_vs_all_plateau need valid_every; the plateau switch excludes a
 * fixed one), for a command line to refuse before any work (also part
 * of kg_train_run).  0, or -1 after kg_error(). */
int kg_train_job_check(const struct kg_train_opts *o,
    const struct kg_train_job *j);

#endif
