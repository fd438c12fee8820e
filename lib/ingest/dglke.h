/*
 * dglke: kg-ingest for datasets that come with their own ID
 * dictionaries, as DGL-KE lays them out, keeping those IDs (so DGL-KE's
 * own embeddings line up with the dataset, row for row).
 *
 * Dictionaries: one "id<DELIM>name" record a line (DGL-KE's
 * entities.dict and relations.dict); the IDs must be 0 .. n-1 in any
 * order, each once, and names must be distinct.  Triples: three fields
 * in the column order "columns" (DGL-KE's udd_hrt, udd_htr, ...), holding
 * either IDs (DGL-KE's udd_* format) or names found in the dictionaries
 * (its built-in datasets: FB15k, wn18, ... with entities.dict and
 * train.txt).  A dataset folder (entities.dict, relations.dict,
 * train.{tsv,txt}, optional valid and test) is read with
 * kg_dglke_folder.
 *
 * Output: the same dataset directory kg-ingest writes (ingest.h), with
 * entity and relation IDs equal to the dictionaries'.  Entities that no
 * triple mentions stay in the dataset.  Errors name the file and line:
 * a bad ID, an ID out of range or repeated, a repeated name, an unknown
 * name, a record with another number of fields.  Repeated triples are
 * counted ("duplicates"), not dropped.
 */
#ifndef KG_DGLKE_H
#define KG_DGLKE_H

#include <stddef.h>

#include "io/tabread.h"

enum kg_dglke_triples {
	KG_DGLKE_DETECT,	/* names if the first record's relation
				 * field is a relation name, else IDs if its
				 * fields are numbers, else names */
	KG_DGLKE_IDS,		/* udd_*: integers */
	KG_DGLKE_NAMES		/* built_in: names of the dictionaries */
};

struct kg_dglke_opts {
	struct kg_tab_opts tab;	/* delimiter (tab by default) */
	char columns[4];	/* order of h, r, t in a record */
	const char *entities;	/* entities.dict */
	const char *relations;	/* relations.dict */
	const char *train, *valid, *test;	/* valid, test may be NULL */
	enum kg_dglke_triples triples;
	int progress;		/* progress line on stderr */
	const char *output;
	int force;
	int argc;		/* for the manifest */
	char *const *argv;
};

#define KG_DGLKE_OPTS_INIT { { KG_TAB_TSV, '\t', 0, 0, 0 }, "hrt", NULL, \
	NULL, NULL, NULL, NULL, KG_DGLKE_DETECT, 0, NULL, 0, 0, NULL }

/*
 * Fill the file names of o from a DGL-KE dataset folder: entities.dict,
 * relations.dict and train.tsv or train.txt (also with .gz), valid and
 * test the same way when present.  The strings are new (free with
 * kg_dglke_folder_free).  0, or -1 after kg_error() naming what is
 * missing.
 */
int kg_dglke_folder(struct kg_dglke_opts *o, const char *dir);
void kg_dglke_folder_free(struct kg_dglke_opts *o);

/*
 * Ingest as o says and commit the output directory.  Returns 0, or -1
 * after kg_error() with no output left behind.
 */
int kg_dglke_run(const struct kg_dglke_opts *o);

#endif
