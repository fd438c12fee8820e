/*
 * ckpt: the checkpoint directory of kg-train's drivers, written and read
 * in one place.
 *
 * Layout:
 *   state.json           an object the driver fills: the keys that fix
 *                        the parameter shapes (a resume must match them)
 *                        and how far the run got (epoch, step, ...)
 *   train_log.jsonl      the log up to the checkpoint
 *   entities-pN.npy      rows of entity partition N (lib/store/store.h),
 *   entity_state-pN.npy  and their optimiser state; one process without
 *                        partitions writes partition 0 only
 *   ...                  the driver's other arrays (relations.npy,
 *                        relation_state.npy, per-rank files)
 *   manifest.json        every file above with its shape and checksum
 *
 * Writing is collective-friendly: the process that begins (rank 0 under
 * MPI) gets a temporary sibling of the directory (lib/io/outdir.h) whose
 * path it shares; every process writes its own files into it; then the
 * beginner commits: state.json, the log, a manifest of every file
 * present, and the rename into place.  An interrupted save leaves the old
 * checkpoint or the new one, never half of one.
 *
 * Reading checks, before anything is used, that every file the manifest
 * lists is complete and of its recorded shape, and that state.json has
 * each key of the run's shape with the same value.
 */
#ifndef KG_CKPT_H
#define KG_CKPT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "io/npy.h"
#include "io/outdir.h"

struct kg_ckpt_writer {
	struct kg_outdir od;	/* od.tmp: where every process writes */
};

#define KG_CKPT_WRITER_INIT { .od = KG_OUTDIR_INIT }

/* Start replacing the checkpoint dir (kept as it is until commit), after
 * refusing a dir that is, lies inside or holds one of the run's
 * inputs[0..n) (lib/io/stage.h; NULL entries skipped).  0, or -1 after
 * kg_error() with nothing written. */
int kg_ckpt_begin(struct kg_ckpt_writer *w, const char *dir,
    const char *const *inputs, size_t n);
/* Write state.json (state borrowed), train_log.jsonl (log NULL: none)
 * and the manifest (argv, and config keys unless config is NULL), then
 * rename into place.  0, or -1 after kg_error() with the temporary
 * removed.  Releases w either way. */
int kg_ckpt_commit(struct kg_ckpt_writer *w, json_t *state, const char *log,
    int argc, char *const *argv, json_t *config);
/* Give up: remove the temporary; safe on INIT and twice. */
void kg_ckpt_abort(struct kg_ckpt_writer *w);

/* The path of partition p's rows (state 0) or state (state 1) file in
 * dir, as a new string. */
char *kg_ckpt_part_path(const char *dir, uint32_t p, int state);
/* Write [rows, cols] (cols 0: [rows]) of dtype dt as dir/name; 0, or -1
 * after kg_error().  The files are recorded at commit. */
int kg_ckpt_put(const char *dir, const char *name, enum kg_dtype dt,
    uint64_t rows, uint64_t cols, const void *x);
/* kg_ckpt_put of float32. */
int kg_ckpt_put_f32(const char *dir, const char *name, uint64_t rows,
    uint64_t cols, const float *x);

/*
 * The settings recorded at the last save of checkpoint dir (its
 * manifest's config), as a new reference, or NULL when it recorded none
 * or cannot be read.
 */
json_t *kg_ckpt_config(const char *dir);

/*
 * What a resume changes: every key of now (the run's settings, borrowed)
 * whose value differs from old's (the checkpoint's, may be NULL: no
 * changes) or that old lacks, and every key of old that now lacks (its
 * "new" null, "none" in the line), but "dictionaries" and
 * "resumed_with_changes".  *changes
 * gets a new object { key: { "old": v, "new": w } }: old's own
 * "resumed_with_changes" (earlier resumes; "old" stays the first value)
 * updated with these, or NULL when both are empty; *line a new string
 * "lr 0.1 -> 0.05, loss ..." of this resume's changes alone, or NULL.
 */
void kg_ckpt_changes(json_t *old, json_t *now, json_t **changes,
    char **line);

/* A resumed run continues the checkpoint's: what it started from (old's
 * "init_from") is copied into now when now has none, so that neither
 * the manifest loses it nor kg_ckpt_changes reports it gone. */
void kg_ckpt_carry_start(json_t *old, json_t *now);

/*
 * Refuse a run that would start over on top of an existing checkpoint:
 * the checkpoint dir checkpoint_dir (NULL: OUTPUT.ckpt of output) exists
 * and neither resume (continue it) nor force (start over) is set.  A dir
 * that is, lies inside or holds one of inputs[0..n) passes here, for the
 * drivers to refuse as such (kg_modeldir_check_paths).  0, or -1 after
 * kg_error() saying both ways (a usage error, exit 2).
 */
int kg_ckpt_check_rerun(const char *checkpoint_dir, const char *output,
    int resume, int force, const char *const *inputs, size_t n);

struct kg_ckpt {
	char *dir;
	json_t *state;		/* state.json, owned */
};

#define KG_CKPT_INIT { 0 }

/*
 * Open the checkpoint in dir for a run whose shape is want (borrowed):
 * read state.json, verify the files against the manifest, and check that
 * every key of want is in state.json with the same value.  hints, when not
 * NULL, are { key, what sets it } pairs ending in { NULL, NULL }, used in
 * the message ("has dim 8, but --hidden_dim gives 16").  0, or -1 after
 * kg_error() with nothing to release.
 */
/* A copy of a checkpoint that another process opened and verified (the
 * files rank 0 sent a rank on a host of its own): read state.json only.
 * 0, or -1 after kg_error(). */
int kg_ckpt_adopt(struct kg_ckpt *c, const char *dir);
int kg_ckpt_open(struct kg_ckpt *c, const char *dir, json_t *want,
    const char *const (*hints)[2]);
/* Read dir/name, which must be float32 [rows, cols] (cols 0: [rows]),
 * into x.  0 or -1. */
int kg_ckpt_get_f32(const struct kg_ckpt *c, const char *name, uint64_t rows,
    uint64_t cols, float *x);
/* Integer and real values of state.json (0 when absent). */
uint64_t kg_ckpt_u64(const struct kg_ckpt *c, const char *key);
double kg_ckpt_real(const struct kg_ckpt *c, const char *key);
/* The log text (new string, "" without a log), or NULL after kg_error(). */
char *kg_ckpt_log(const struct kg_ckpt *c);
void kg_ckpt_close(struct kg_ckpt *c);

#endif
