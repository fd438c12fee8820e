/*
 * warmstart: start a shallow model's training from rows made before: a
 * kg-train model directory (--init_from), matched to the dataset by
 * name, or entity embeddings made elsewhere (--init_entities).
 *
 * Matching goes through both dictionaries: the names of the dataset the
 * model was trained on (its config.dataset, whose entities.tsv and
 * relations.tsv must still be those the model recorded) and the names
 * of the dataset being trained.  So a model carries over to a dataset
 * made by kg-ingest --extend (the same IDs) and to any other dataset
 * that shares names with its own.  A matched row is copied bit for bit,
 * with its optimiser state (entity_state.npy, relation_state.npy of
 * the model directory) unless reset_optimizer.  An entity of the new
 * dataset that the model lacks ("added") starts by init_new:
 *   NEIGHBOURS  the mean, over the train triples linking it to a matched
 *               entity, of what the model says it should be: TransE
 *               (L1, L2) t = h + r and h = t - r, RotatE t = h o r and
 *               h = t o conj(r), through matched relations only; the
 *               other models (DistMult, ComplEx, RESCAL, TransR) the
 *               plain mean of the neighbours' rows.  An entity with no
 *               such triple falls back to RANDOM;
 *   RANDOM      the trainer's own fresh draw (the store's init rule);
 *   ZERO        zeros.
 * Added relations keep the trainer's random draw; rows of the model no
 * longer in the dataset are "dropped".  Optimiser state of added rows is
 * zero.  With freeze_old the matched rows are frozen (the trainer's
 * frozen_ent; with freeze_relations frozen_rel too): they score, and
 * their gradients reach the rows that train through the loss, but they
 * and their optimiser state stay as the source had them.  The matched
 * rows are a set, not a bound: with kg-ingest --extend they are the IDs
 * below the old dataset's count, across other datasets any IDs.
 *
 * The rows are written through the trainer's store (acquire, write,
 * release dirty), partition by partition, so any writable store will do;
 * call before the first epoch and before a resume (which replaces them).
 */
#ifndef KG_WARMSTART_H
#define KG_WARMSTART_H

#include <stdint.h>

#include <jansson.h>

#include "io/dataset.h"
#include "kge/train.h"

enum kg_init_new {
	KG_INIT_NEW_NEIGHBOURS = 0,
	KG_INIT_NEW_RANDOM,
	KG_INIT_NEW_ZERO
};

struct kg_warmstart_opts {
	const char *init_from;		/* a kg-train model dir, or NULL */
	const char *init_entities;	/* float32 [rows, dim] .npy, or NULL */
	const char *entity_map;		/* "row<TAB>name" lines for
					 * init_entities; NULL: row = ID */
	enum kg_init_new init_new;
	int reset_optimizer;		/* optimiser state starts at zero */
	int no_train;			/* --epochs 0: write the model as
					 * started, without training */
	int freeze_old;			/* the matched entity rows (and
					 * with freeze_relations the
					 * matched relation rows) do not
					 * train: the trainer's frozen
					 * bitmaps */
	int freeze_relations;
};

#define KG_WARMSTART_OPTS_INIT { .init_new = KG_INIT_NEW_NEIGHBOURS }

/* Row counts of one table. */
struct kg_warmstart_rows {
	uint64_t matched, added, dropped;
	uint64_t from_neighbours;	/* of added: by init_new neighbours */
};

struct kg_warmstart_stats {
	struct kg_warmstart_rows ent, rel;
	uint64_t frozen_ent, frozen_rel;	/* rows frozen (relations:
						 * forward rows) */
	int state;		/* 1: optimiser state carried; 0: zero */
	const char *state_why;	/* why not carried (static), or NULL */
};

/*
 * What model m says entity x is from its neighbour row nb through
 * relation row rel (NULL: none known): x the tail of (nb, rel, x) when
 * head_known, else the head of (x, rel, nb); dim floats into out.  TransE
 * and RotatE solve their score exactly (x = nb + r, nb - r; nb o r,
 * nb o conj(r)) and need rel; the other models give nb itself.  Returns
 * 1, or 0 (out untouched) when rel is needed and NULL.
 */
int kg_warmstart_guess(const struct kg_model *m, const float *nb,
    const float *rel, int head_known, float *out);

/*
 * Map ds's entities and relations onto those of the model directory md
 * (loaded from dir) by name: emap[i] (ds->n_entities of them) and rmap[i]
 * (ds->n_relations) get the model's ID of ds's entity or relation i, or
 * -1 where the model lacks the name; st->ent.matched and st->rel.matched
 * count the others (nothing else of st is touched).  The same
 * dictionaries map every ID to itself; others go through the model's
 * dataset (config.dataset), which must still hold the names it was
 * trained on.  0, or -1 after kg_error() (a dictionary holding a name
 * twice: "file:line: duplicate entity name 'x'").
 */
struct kg_modeldir;
int kg_warmstart_match(const struct kg_modeldir *md, const char *dir,
    const struct kg_dataset *ds, int64_t *emap, int64_t *rmap,
    struct kg_warmstart_stats *st);

/*
 * The embeddings of --init_entities: path, float32 [rows, dim] (rows the
 * entity count of ds without entity_map), read into a (the caller
 * releases it), all finite; emap[i] (ds->n_entities of them) gets entity
 * i's row of it, by entity_map's "row<TAB>name" lines (NULL: row i), or
 * -1 where the map names it not; *matched counts the others.  0, or -1
 * after kg_error() ("F: int32 with 2 dimensions; expected float32
 * [entities, 16]", a map line of no row below rows, a name given twice).
 */
struct kg_npy;
int kg_warmstart_read_entities(const char *path, const char *entity_map,
    const struct kg_dataset *ds, uint32_t dim, struct kg_npy *a,
    int64_t *emap, uint64_t *matched);

/* Parse "neighbours", "random" or "zero"; 0, or -1 after kg_error(). */
int kg_warmstart_parse_init_new(const char *s, enum kg_init_new *out);

/*
 * The option combinations a command line checks before any work: one
 * of init_from and init_entities; entity_map only with init_entities;
 * no_train and freeze_old only with one of them; freeze_relations only
 * with freeze_old and init_from.  0, or -1 after kg_error().
 */
int kg_warmstart_check(const struct kg_warmstart_opts *o);

/*
 * Set the trainer's rows (tr, set up by kg_trainer_init or _init_store
 * over ds, nothing trained yet) from o's source; nothing when o is NULL
 * or names none.  order maps the trainer's entity IDs to ds's: trainer
 * ID i is ds's entity order[i] (a bucket driver's new2old; NULL: the
 * same IDs).  Records config.init_from (path, manifest checksum and
 * the counts) or config.init_entities in config (may be NULL).  *st gets
 * the counts.  Returns 0, -1 after kg_error() (the rows may then be half
 * set; the caller writes nothing), or KG_ERR_VERSION for a model dir of
 * an unknown format version.  Refused: a model of another model kind,
 * dimension, relation dimension or reciprocal setting; a dictionary
 * (the model's dataset's or ds's) holding a name twice ("file:line:
 * duplicate entity name 'x'"); an init_entities array that is not
 * float32 [rows, dim] (rows the entity count without entity_map).
 */
int kg_warmstart_apply(struct kg_trainer *tr, const struct kg_dataset *ds,
    const int32_t *order, const struct kg_warmstart_opts *o, json_t *config,
    struct kg_warmstart_stats *st);

/*
 * kg_warmstart_apply, then the counts on stderr as one line when show:
 * the one call of a training run, after its trainer is set up and before
 * a resume.  0 when o is NULL.  Returns as kg_warmstart_apply.
 */
int kg_warmstart_run(struct kg_trainer *tr, const struct kg_dataset *ds,
    const int32_t *order, const struct kg_warmstart_opts *o, json_t *config,
    int show);

/*
 * kg_warmstart_run writing only the entity rows of the store partitions
 * p with parts[p] nonzero (parts NULL: all; one per partition of the
 * trainer's store): a rank of the bucket driver writes the partitions it
 * holds.  The relation rows, the frozen bitmaps, config and the counts
 * are those of every partition, and a partition's rows are the same
 * whichever partitions are written with it.  Returns as
 * kg_warmstart_apply.
 */
int kg_warmstart_run_parts(struct kg_trainer *tr, const struct kg_dataset *ds,
    const int32_t *order, const uint8_t *parts,
    const struct kg_warmstart_opts *o, json_t *config, int show);

/* Whether o names a source (init_from or init_entities); 0 for NULL. */
int kg_warmstart_given(const struct kg_warmstart_opts *o);

/* Whether the run trains at all: 0 for no_train, 1 otherwise (o NULL
 * too). */
int kg_warmstart_trains(const struct kg_warmstart_opts *o);

/* The counts as one line for stderr ("warm start from 'm': entities
 * ..."), into buf[cap]; returns buf. */
char *kg_warmstart_format(const struct kg_warmstart_opts *o,
    const struct kg_warmstart_stats *st, char *buf, size_t cap);

#endif
