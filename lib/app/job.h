/*
 * job: what kg-train's two shallow drivers share about one training run
 * (application layer): the in-memory run over the whole table
 * (app/train_run.h) and the partitioned run over edge buckets, in one
 * process, out of core, on a device's buffer or under mpirun
 * (app/train_buckets.h).  A struct kg_job holds the run's options and
 * paths, the dataset with its dictionaries, the trainer and the store of
 * its entity rows, the engine the steps run on, the checkpoint path, the
 * settings the checkpoints and the model dir record, and the epoch
 * loop's state; the functions below are the set-up steps, the hooks of
 * the epoch loop (kge/epochs.h) and the figures both drivers need.  A
 * driver embeds a job (KG_JOB_EMBED) and adds what is its own; it
 * supplies what differs through struct kg_job_ops.  Nothing here uses
 * MPI: where a step is collective the driver calls it on every rank.
 */
#ifndef KG_APP_JOB_H
#define KG_APP_JOB_H

#include <jansson.h>

#include "eval/eval.h"
#include "io/dataset.h"
#include "kge/engine.h"
#include "kge/epochs.h"
#include "kge/modeldir.h"
#include "kge/train_job.h"

struct kg_job_ops;

/*
 * The members of a job:
 *   o, j      the trainer's and the job's options (the caller's)
 *   ds        the dataset and its dictionaries
 *   tr        the trainer
 *   st        the store of the entity rows (tr.ents once the trainer is
 *             set up); the driver's own unless the trainer owns it
 *             (tr.own_store): kg_job_release frees it then
 *   eng       the engine the steps run on (kge/engine.h), or NULL
 *   ckpt      the checkpoint dir (kg_train_job_ckpt), or NULL
 *   config    the settings the checkpoints and the model dir record
 *   show      epoch lines and messages on stderr: not quiet, rank 0,
 *             not a follower
 *   progress  the line inside an epoch: shown, on a terminal or with
 *             --progress
 *   ep        the epoch loop: validation, stops, the log
 *   steps     the steps the loop counts: the trainer's (tr.step) or the
 *             driver's
 *   valid     the valid triples in the trainer's entity IDs, and
 *   valid_own their array when the job holds a copy (else NULL)
 *   filter    the known triples of every split, for validation
 *   ops, ctx  the driver's side (struct kg_job_ops) and its argument
 */
#define KG_JOB_MEMBERS \
	const struct kg_train_opts *o; \
	const struct kg_train_job *j; \
	struct kg_dataset ds; \
	struct kg_trainer tr; \
	struct kg_store *st; \
	struct kg_engine *eng; \
	char *ckpt; \
	json_t *config; \
	int show; \
	int progress; \
	struct kg_epochs ep; \
	uint64_t *steps; \
	struct kg_triples valid; \
	int32_t *valid_own; \
	struct kg_filter filter; \
	const struct kg_job_ops *ops; \
	void *ctx;

struct kg_job {
	KG_JOB_MEMBERS
};

/*
 * A driver's struct begins with KG_JOB_EMBED: the job as a whole is
 * "job" (what the functions below take) and its members read as the
 * driver's own (v->tr is v->job.tr), as the two members of the union
 * have the same members in the same order.
 */
#define KG_JOB_EMBED \
	union { \
		struct kg_job job; \
		struct { KG_JOB_MEMBERS }; \
	}

/*
 * The driver's side of the epoch loop; ctx is the job's.  Each returns
 * 0, or -1 after kg_error() (on every rank, where the driver's steps are
 * collective).
 *   train    run the next epoch (kge/epochs.h's train hook)
 *   save     write a checkpoint of the epoch (not called with
 *            --no_checkpoint)
 *   unpin    (may be NULL) let go of the rows it holds, before
 *            validation or a snapshot reads every row through the store
 *   figures  (may be NULL) the epoch line's own figures (kge/epochs.h's
 *            figures hook)
 */
struct kg_job_ops {
	int (*train)(void *ctx, struct kg_epoch_report *r);
	int (*save)(void *ctx);
	void (*unpin)(void *ctx);
	void (*figures)(void *ctx, const struct kg_epoch_report *r,
	    char **json, char **text);
};

/*
 * Start job b: zeroed, with the options (the caller keeps o and j), the
 * loop's options from them, show as given, the progress line when shown
 * on a terminal or with --progress, ops (may be NULL until
 * kg_job_epochs) and ctx; steps is the trainer's until the driver points
 * it elsewhere.  Release it with kg_job_release
 * whatever happens next.
 */
void kg_job_init(struct kg_job *b, const struct kg_train_opts *o,
    const struct kg_train_job *j, int show, const struct kg_job_ops *ops,
    void *ctx);
/* Free what b holds: the engine, the trainer, a store of the driver's,
 * the dataset, the loop's state, the settings and the paths. */
void kg_job_release(struct kg_job *b);

/* The checkpoint dir of job j: checkpoint_dir, or OUTPUT.ckpt; a new
 * string. */
char *kg_train_job_ckpt(const struct kg_train_job *j);

/*
 * Before any work, on the process that writes: nothing the run writes
 * (the model dir, the checkpoint unless --no_checkpoint, swap_dir when
 * not NULL) may be or hold one of its n inputs, an existing output
 * needs --force, and the parents of the model dir and the checkpoint
 * must be writable (kg_job_check_parents).  0, or -1 after kg_error().
 */
int kg_job_check_output(const struct kg_train_job *j, const char *swap_dir,
    const char *const *inputs, size_t n);
/*
 * Before any work, on the process that writes: the directories that will
 * hold the model dir "output" and the checkpoint dir "ckpt" (NULL: none)
 * exist and this process can add entries to them (kg_job_check_output
 * ends with it; the GNN run, which has no job, calls it itself).  0, or
 * -1 after kg_error() naming the directory.
 */
int kg_job_check_parents(const char *output, const char *ckpt);
/* The dataset has valid triples when the run validates; -1 after
 * kg_error() when it has none. */
int kg_job_check_valid(const struct kg_job *b);
/* The dataset has entity types when --neg_types draws by them; -1 after
 * kg_error() when it has none. */
int kg_job_check_types(const struct kg_job *b);

/*
 * The settings every shallow run records in its config (loss, margin,
 * adversarial_temperature, batch_size, neg_sample_size,
 * neg_degree_fraction, neg_in_batch, lr, rel_optimizer,
 * regularization_coef, regularization_norm, epochs, seed, num_thread);
 * a new object to which each driver adds its own keys.
 */
json_t *kg_job_config(const struct kg_train_opts *o);
/* Add dataset ds's dictionaries (kg_dataset_dicts) to config c. */
void kg_job_config_dicts(json_t *c, const struct kg_dataset *ds);

/*
 * Before a resume from b->ckpt (the process that reads it): the
 * checkpoint must come from this dataset (by its dictionaries); settings
 * changed since it was saved are said on stderr (unless quiet) and
 * recorded in b->config (resumed_with_changes).  0, or -1 after
 * kg_error().
 */
int kg_job_resume_changes(struct kg_job *b);
/* The lines of a resume: "resuming after epoch N from CKPT" when shown,
 * and the warning that there is no checkpoint to resume from unless
 * quiet (the caller decides which process says it). */
void kg_job_say_resumed(const struct kg_job *b);
void kg_job_say_no_ckpt(const struct kg_job *b);

/* The warm start of the trainer's rows when the job asks for one
 * (kge/warmstart.h; new2old: the trainer's IDs, NULL for the dataset's);
 * its settings go to b->config.  0, or -1 after kg_error(). */
int kg_job_warm_start(struct kg_job *b, const int32_t *new2old);

/*
 * The known positives the trainer filters its negatives by: with
 * --neg_filter the n train triples hrt and, with reciprocal relations,
 * their inverses (relation + n_relations); *nk gets their count (0
 * without --neg_filter).  A new array, never NULL; the caller frees it.
 */
int32_t *kg_job_known(const struct kg_train_opts *o, const int32_t *hrt,
    uint64_t n, uint64_t n_relations, uint64_t *nk);

/*
 * Open the engine for run r on the trainer (kg_engine_open) into
 * b->eng and, when shown, say on stderr where it trains when that is
 * not the host.  0, or -1 after kg_error().
 */
int kg_job_open_engine(struct kg_job *b, const struct kg_engine_run *r);

/* Filtered valid MRR (both sides, realistic ties) of the parameters as
 * they are, the rows read through b->st; 0 or -1. */
int kg_job_valid_mrr(struct kg_job *b, double *mrr);

/*
 * Every epoch through the epoch loop (kg_epochs_run), with the hooks
 * written here (validation, the best epoch's snapshot through the
 * trainer's, the plateau switch to 1-vs-all, checkpoint dispatch) and
 * the driver's ops; the loop reads tr.epoch, *b->steps and
 * tr.last_loss.  0, or -1 when a hook failed.
 */
int kg_job_epochs(struct kg_job *b);

/*
 * The model's figures both drivers record (epochs, steps, stopped_by,
 * final_loss, train_seconds, train_triples, triples_per_second,
 * threads, the best epoch when one was kept) and where the steps ran:
 * on a device its device, backend and "trainer": "device"; on the host,
 * with host set, device "cpu" and the CPU backend's name; and the GPUs
 * of the ranks the job records ("devices", "devices_emulated").  A new
 * object to which the driver adds its own.
 */
json_t *kg_job_figures(const struct kg_job *b, int host);

/* The model dir's spec as both drivers fill it: paths, arguments, the
 * model, the relations, the log, the settings and figures (the
 * caller's); the driver adds the entity order, the state and more
 * inputs. */
void kg_job_model_spec(const struct kg_job *b, struct kg_modeldir_spec *s,
    json_t *figures);

/* After success, on the process that writes: the checkpoint removed,
 * unless kept (--keep_checkpoint, --checkpoint_dir) or not written. */
void kg_job_drop_ckpt(const struct kg_job *b);

#endif
