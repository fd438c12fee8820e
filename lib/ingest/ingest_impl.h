/*
 * ingest_impl: the state of one kg-ingest run, shared by the files of
 * lib/ingest and nobody else: ingest.c reads the records, ingest_dedup.c
 * finds repeated triples, ingest_split.c splits at random and renumbers,
 * ingest_write.c writes the arrays and dictionaries, ingest_manifest.c
 * fills the manifest and lib/app/ingest_run.c runs the whole.  Triples are held in
 * memory as provisional IDs (3 x uint32 per triple, in input order, split
 * files one after the other), because dropping, deduplicating and the
 * random split must all be decided before the final numbering is known;
 * the arrays are then written in one pass per split.  Single-threaded.
 */
#ifndef KG_INGEST_IMPL_H
#define KG_INGEST_IMPL_H

#include <stdint.h>

#include "core/progress.h"
#include "core/util.h"
#include "ingest/ingest.h"
#include "ingest/rdf.h"
#include "io/dict.h"
#include "io/manifest.h"
#include "io/stage.h"
#include "io/tabread.h"

#define NONE UINT32_MAX
#define DROPPED 3		/* label of a triple dropped after the split */
#define CHUNK_ROWS 65536
#define LINE_BITS 48		/* split mode: line number | file index << 48 */
#define DEDUP_BATCH 64		/* at least the records of one batch */
#define KG_INGEST_BATCH 32	/* records whose lookups overlap */

static const char *const split_names[3] = { "train", "valid", "test" };

/*
 * A set of triples (repeats are counted always, dropped with --dedup):
 * each slot holds the index + 1 of a triple in
 * the triple array (low 34 bits: 17 billion triples, far more than memory
 * holds) and the top 30 bits of its hash.  The slot position is taken from
 * the top bits of the hash, so the table doubles by re-placing slots from
 * their stored bits alone, without reading every triple again at random
 * (README, "Measured choices"); and a probe reads a triple only when the
 * stored bits match.
 */
#define TSET_IDX_BITS 34
#define TSET_IDX_MASK (((uint64_t)1 << TSET_IDX_BITS) - 1)
#define TSET_HI_BITS (64 - TSET_IDX_BITS)

struct tset {
	uint64_t *slots;
	uint64_t cap, n;
	unsigned bits;		/* log2(cap) */
};

struct ingest {
	const struct kg_ingest_opts *o;
	int col[3];			/* field index of head, relation, tail */
	struct kg_dict ent, rel;
	uint32_t *trip;			/* 3 provisional IDs per triple */
	uint64_t n, cap;
	uint64_t *where;		/* split mode + unseen error: origin */
	uint8_t *label;			/* split mode: split of each triple */
	uint64_t split_begin[3], split_end[3];	/* split files: ranges */
	uint64_t train_ent, train_rel;	/* split files: IDs below are train */
	uint32_t *perm_e, *perm_r;	/* split mode: provisional -> final */
	uint32_t *inv_e, *inv_r;	/* split mode: final -> provisional */
	uint64_t n_ent, n_rel;		/* final counts */
	uint64_t count[3];		/* triples kept per split */
	struct tset seen;
	uint8_t unseen_flag[DEDUP_BATCH];	/* --dedup: per triple of a batch */
	/* Figures. */
	uint64_t lines, records, comments, blanks, bytes;
	char *comment_file;		/* where the first comment was */
	uint64_t comment_line;
	uint64_t bad, dups, unseen_dropped, unseen_kept;
	uint64_t typed, types_unknown, n_types;
	uint64_t types_extra;		/* --rdf-types types: later types of
					 * an entity that has one, ignored */
	double t0, next_progress, t_read, t_write;
	struct kg_progress prog;	/* MB of plain files, else lines */
	int bytes_mode;
	double cpu0, cpu_read;		/* process CPU seconds */
	int id64;
	struct kg_dict types;
	int32_t *type_of;		/* node types, or NULL */
	struct ingest_rdf *rdf;		/* RDF input (ingest_rdf.c), or NULL */
	/* --extend: the earlier dataset's triples are trip[0, old_n), with
	 * their splits in old_label; its IDs are 0..old_ent, 0..old_rel. */
	uint64_t old_n, old_ent, old_rel;
	uint8_t *old_label;
};

/* The final ID of a provisional entity (relation) ID: NONE for one that
 * no kept triple names in split mode. */
static inline uint32_t
final_ent(const struct ingest *st, uint32_t id)
{
	return st->perm_e != NULL ? st->perm_e[id] : id;
}

static inline uint32_t
final_rel(const struct ingest *st, uint32_t id)
{
	return st->perm_r != NULL ? st->perm_r[id] : id;
}

/*
 * Report a bad record as "file:line: message" (ingest.c).  Returns 0 when
 * it may be skipped (within --max-errors; reported as a warning) or -1
 * when it is fatal (after kg_error()).
 */
int kg_ingest_bad_record(struct ingest *st, const char *file, uint64_t line,
    const char *fmt, ...) KG_PRINTF(4, 5);

/*
 * n <= KG_INGEST_BATCH triples of names from an input other than a table
 * (ingest.c): f[3 * j ...] head, relation, tail of triple j, from line
 * lines[j]; checked, numbered and kept as table records are, their
 * dictionary lookups overlapped.  0 (kept or skipped), or -1 after
 * kg_error().
 */
int kg_ingest_add_triples(struct ingest *st, const struct kg_field *f,
    const uint64_t *lines, int n, const char *file, int split,
    uint64_t file_index);

/* Tabread options for a file of nfields fields (ingest.c). */
struct kg_tab_opts kg_ingest_tab_opts(const struct kg_ingest_opts *o,
    size_t nfields);
/* Add the comment counts of a finished reader (ingest.c). */
void kg_ingest_count_comments(struct ingest *st, const struct kg_tabread *r);

/* Read one input (ingest.c).  split is 0..2 for split files, -1 for split
 * mode; file_index numbers split-mode inputs for messages.  0 or -1. */
int kg_ingest_read_input(struct ingest *st, const char *path, int split,
    uint64_t file_index);
/* Read an "entity<SEP>type" file into st->type_of (ingest.c).  With
 * first_wins an entity's later, different types are counted in
 * types_extra; otherwise they are bad records.  0 or -1. */
int kg_ingest_read_types(struct ingest *st, const char *path,
    const struct kg_tab_opts *to, int first_wins);

/*
 * RDF input (ingest_rdf.c).  kg_ingest_syntax_of: the syntax an input is
 * read in (KG_RDF_NONE: a table).  kg_ingest_rdf_begin: set up the
 * literal table and filters in the stage directory dir, before the first
 * RDF input; 0 or -1.  kg_ingest_read_rdf: read one RDF input, as
 * kg_ingest_read_input.  kg_ingest_rdf_types: after the final numbering,
 * the node types of --rdf-types types; 0 or -1.  kg_ingest_rdf_end:
 * finish the literal table, write the proposed attribute schema and add
 * both to the stage; 0 or -1.  kg_ingest_rdf_figures, _config: the
 * manifest's entries.  kg_ingest_rdf_free: release (NULL rdf is a no-op).
 */
enum kg_rdf_syntax kg_ingest_syntax_of(const struct kg_ingest_opts *o,
    const char *path);
int kg_ingest_rdf_begin(struct ingest *st, const char *dir);
int kg_ingest_read_rdf(struct ingest *st, const char *path,
    enum kg_rdf_syntax syntax, int split, uint64_t file_index);
int kg_ingest_rdf_types(struct ingest *st);
int kg_ingest_rdf_end(struct ingest *st, struct kg_stage *stage);
void kg_ingest_rdf_figures(struct kg_manifest *m, const struct ingest *st);
void kg_ingest_rdf_config(struct kg_manifest *m,
    const struct kg_ingest_opts *o);
void kg_ingest_rdf_free(struct ingest *st);

/* --dedup for the triples [first, n) of one batch (ingest_dedup.c). */
void kg_ingest_dedup_batch(struct ingest *st, uint64_t first);
/* Enter the triples [0, n) into the set of seen triples, dropping none
 * (ingest_dedup.c): the earlier dataset of --extend. */
void kg_ingest_dedup_seed(struct ingest *st);
/* Without --dedup: count the repeated triples (ingest_dedup.c). */
void kg_ingest_count_repeats(struct ingest *st);

/* Split mode (ingest_split.c): label every triple, apply the unseen
 * policy (0, or -1 for --unseen error), number the final IDs. */
void kg_ingest_assign_splits(struct ingest *st);
int kg_ingest_apply_unseen_split(struct ingest *st);
void kg_ingest_renumber_split(struct ingest *st);

/* The progress line of reading (ingest.c): start it (with an ETA when
 * every input is a plain file), and the units done so far, reader r
 * included (NULL between files): MB of plain files, else lines. */
void kg_ingest_progress_begin(struct ingest *st);
uint64_t kg_ingest_progress_units(const struct ingest *st,
    const struct kg_tabread *r);

/* Write every output file into the stage (ingest_write.c).  0 or -1. */
int kg_ingest_write_all(struct ingest *st, struct kg_stage *stage);

/* The manifest (ingest_manifest.c). */
double kg_ingest_cpu_seconds(void);
void kg_ingest_set_figures(struct kg_manifest *m, const struct ingest *st,
    double secs);
void kg_ingest_set_config(struct kg_manifest *m,
    const struct kg_ingest_opts *o);

#endif
