/*
 * fuzz_manifest: the manifest reader of lib/io/manifest.c and the dataset
 * loader over it (lib/io/dataset.c).  The input is manifest.json in a
 * scratch directory that also holds the files of a small real dataset
 * (tests/fuzz/data/dataset/, copied in at start).  A manifest that loads
 * must answer lookups, verify or fail cleanly against those files, and
 * write back into one that loads equal; a dataset that loads must have
 * every triple's IDs and every type ID inside the counts its manifest
 * gives.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "core/util.h"
#include "io/dataset.h"
#include "io/manifest.h"

#ifndef FUZZ_DATA
#define FUZZ_DATA "tests/fuzz/data"
#endif

static const char *const files[] = { "train.npy", "valid.npy", "test.npy",
	"types.npy", "entities.tsv", "relations.tsv", "types.tsv" };

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	size_t i;

	(void)argc;
	(void)argv;
	fuzz_quiet();
	for (i = 0; i < KG_ARRAY_LEN(files); i++) {
		char *src = kg_xasprintf("%s/dataset/%s", FUZZ_DATA, files[i]);
		size_t len;
		char *text = kg_read_file(src, &len);

		if (text == NULL) {
			fprintf(stderr, "fuzz: cannot read %s\n", src);
			abort();
		}
		free(fuzz_write(files[i], text, len));
		free(text);
		free(src);
	}
	return 0;
}

/* Lookups that every reader makes; they may find nothing, never crash. */
static void
lookups(const struct kg_manifest *m)
{
	static const char *const paths[] = { "figures.entities",
		"figures.relations", "figures.triples.train", "config.seed",
		"files.train.npy.shape", "tool", "inputs", "format_version",
		"figures", "" };
	uint64_t u;
	size_t i;

	for (i = 0; i < KG_ARRAY_LEN(paths); i++) {
		json_t *v = kg_manifest_get(m, paths[i]);

		if (kg_manifest_get_u64(m, paths[i], &u) == 0)
			FUZZ_CHECK(json_is_integer(v),
			    "kg_manifest_get_u64 read a non-integer");
	}
}

/* Write m into the scratch directory and load it again: equal JSON. */
static void
round_trip(const struct kg_manifest *m, const char *dir)
{
	struct kg_manifest b = KG_MANIFEST_INIT;

	FUZZ_CHECK(kg_manifest_write(m, dir) == 0,
	    "a loaded manifest cannot be written");
	FUZZ_CHECK(kg_manifest_load(&b, dir, NULL) == 0,
	    "a written manifest cannot be loaded");
	FUZZ_CHECK(json_equal(m->root, b.root),
	    "a manifest changed in a write and load");
	kg_manifest_release(&b);
}

/* Every ID of a loaded dataset is inside its counts. */
static void
check_dataset(const struct kg_dataset *ds)
{
	uint64_t i;
	int s;

	for (s = 0; s < KG_NSPLITS; s++)
		for (i = 0; i < ds->split[s].n; i++) {
			const int32_t *t = ds->split[s].hrt + 3 * i;
			uint64_t ne = ds->n_entities, nr = ds->n_relations;

			FUZZ_CHECK(t[0] >= 0 && (uint64_t)t[0] < ne &&
			    t[2] >= 0 && (uint64_t)t[2] < ne &&
			    t[1] >= 0 && (uint64_t)t[1] < nr,
			    "a loaded dataset has an ID out of range");
		}
	if (ds->types != NULL)
		for (i = 0; i < ds->n_entities; i++)
			FUZZ_CHECK(ds->types[i] >= -1 &&
			    (ds->types[i] < 0 ||
			    (uint64_t)ds->types[i] < ds->n_types),
			    "a loaded dataset has a type out of range");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kg_manifest m = KG_MANIFEST_INIT;
	struct kg_dataset ds = KG_DATASET_INIT;
	const char *dir = fuzz_scratch();
	char *path = fuzz_write("manifest.json", data, size);
	int rc;

	rc = kg_manifest_load(&m, dir, NULL);
	FUZZ_CHECK(rc == 0 || rc == -1 || rc == KG_ERR_VERSION,
	    "kg_manifest_load returned an unknown code");
	if (rc == 0) {
		lookups(&m);
		(void)kg_manifest_verify(&m, dir, 1);
		round_trip(&m, dir);
		kg_manifest_release(&m);
		/* Put the input back: the round trip rewrote it. */
		free(fuzz_write("manifest.json", data, size));
	}
	if (kg_dataset_load(&ds, dir) == 0) {
		FUZZ_CHECK(rc == 0, "a dataset loads with a bad manifest");
		check_dataset(&ds);
	}
	kg_dataset_release(&ds);
	free(path);
	return 0;
}
