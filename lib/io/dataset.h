/*
 * dataset: a kg-ingest output directory, read back.
 *
 * Layout (see man/man5/kgpipe-formats.5): manifest.json, entities.tsv,
 * relations.tsv, train.npy, valid.npy, test.npy (int32 or int64 [n, 3] as
 * head, relation, tail), types.npy (int32 [n_entities]) and types.tsv when
 * node types were given.  Loading checks the manifest (tool kg-ingest,
 * format version), that every recorded file matches its shape and dtype,
 * and that every ID is in range: triples against the manifest's entity and
 * relation counts (figures.entities, figures.relations, at most 2^31),
 * type IDs against figures.types (at most the entity count).  Arrays are
 * mmapped and exposed as int32; an int64 dataset (IDs past 2^31) is
 * refused with a clear message for now.
 */
#ifndef KG_DATASET_H
#define KG_DATASET_H

#include <stdint.h>

#include <jansson.h>

#include "io/manifest.h"
#include "io/npy.h"

enum kg_split { KG_SPLIT_TRAIN, KG_SPLIT_VALID, KG_SPLIT_TEST, KG_NSPLITS };

struct kg_triples {
	uint64_t n;
	const int32_t *hrt;	/* n rows of (head, relation, tail) */
};

struct kg_dataset {
	char *dir;
	struct kg_manifest manifest;
	uint64_t n_entities;
	uint64_t n_relations;
	uint64_t n_types;	/* largest type ID + 1 (<= figures.types); 0
				 * without types.npy */
	struct kg_triples split[KG_NSPLITS];
	const int32_t *types;	/* n_entities type IDs, or NULL */
	struct kg_npy arr[KG_NSPLITS + 1];	/* backing mappings */
};

#define KG_DATASET_INIT { 0 }

const char *kg_split_name(enum kg_split s);

/*
 * Load "dir".  Returns 0, -1 after kg_error(), or KG_ERR_VERSION when the
 * manifest was written by an unknown format version (exit 3).
 */
int kg_dataset_load(struct kg_dataset *ds, const char *dir);
void kg_dataset_release(struct kg_dataset *ds);

/* Read entities.tsv or relations.tsv names into a new array of n strings
 * (one allocation each; free with kg_names_free).  0 or -1. */
int kg_dataset_names(const struct kg_dataset *ds, const char *file,
    char ***names, uint64_t *n);
void kg_names_free(char **names, uint64_t n);

/*
 * What names a dataset's IDs: the checksums of entities.tsv and
 * relations.tsv from its manifest m, as a new object { "entities.tsv":
 * "xxh3-64:...", "relations.tsv": "..." }, or NULL when m records
 * neither.  Writers of models and checkpoints record it; readers compare
 * it with kg_dataset_dict_same.
 */
json_t *kg_dataset_dicts(const struct kg_manifest *m);

/*
 * The one comparison of a recorded dictionary with a dataset's: 1 when
 * "recorded" (as kg_dataset_dicts gives; NULL: none) names the same
 * "file" (entities.tsv or relations.tsv) as ds's manifest, 0 when it
 * names another, -1 when either side records none (nothing to compare).
 */
int kg_dataset_dict_same(json_t *recorded, const struct kg_dataset *ds,
    const char *file);

/*
 * For what cannot be mapped by name (a checkpoint to resume): 0 when
 * recorded names the same dictionaries as ds's (or nothing to compare),
 * -1 after kg_error() when either differs ("checkpoint 'x' was written
 * for a dataset with other entity IDs than 'ds'"; what is "checkpoint
 * 'x'").
 */
int kg_dataset_check_dicts(json_t *recorded, const struct kg_dataset *ds,
    const char *what);

#endif
