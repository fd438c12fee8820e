#include "io/dataset.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

static const char *const split_names[KG_NSPLITS] = { "train", "valid", "test" };

const char *
kg_split_name(enum kg_split s)
{
	return (unsigned)s < KG_NSPLITS ? split_names[s] : "?";
}

/* Map one triples file and check its IDs. */
static int
load_split(struct kg_dataset *ds, enum kg_split s)
{
	char *name = kg_xasprintf("%s.npy", split_names[s]);
	char *path = kg_path_join(ds->dir, name);
	struct kg_npy *a = &ds->arr[s];
	const int32_t *p;
	uint64_t i;

	if (!kg_path_exists(path)) {
		kg_error("'%s' has no %s", ds->dir, name);
		free(name);
		free(path);
		return -1;
	}
	free(name);
	if (kg_npy_read(path, a) < 0) {
		free(path);
		return -1;
	}
	if (a->dtype == KG_DT_I8) {
		kg_error("%s: int64 triples (more than 2^31 IDs) are not "
		    "supported yet", path);
		goto fail;
	}
	if (a->dtype != KG_DT_I4 || a->ndim != 2 || a->shape[1] != 3) {
		kg_error("%s: expected int32 triples of shape [n, 3]", path);
		goto fail;
	}
	p = a->data;
	for (i = 0; i < a->shape[0]; i++, p += 3) {
		if (p[0] < 0 || (uint64_t)p[0] >= ds->n_entities ||
		    p[2] < 0 || (uint64_t)p[2] >= ds->n_entities ||
		    p[1] < 0 || (uint64_t)p[1] >= ds->n_relations) {
			kg_error("%s: row %llu: ID out of range (%d %d %d; "
			    "%llu entities, %llu relations)", path,
			    (unsigned long long)i, p[0], p[1], p[2],
			    (unsigned long long)ds->n_entities,
			    (unsigned long long)ds->n_relations);
			goto fail;
		}
	}
	ds->split[s].n = a->shape[0];
	ds->split[s].hrt = a->data;
	free(path);
	return 0;
fail:
	kg_npy_release(a);
	free(path);
	return -1;
}

/*
 * types.npy: one type ID per entity, -1 for none, each below the count
 * of types in the manifest (figures.types, at most one per entity), so a
 * reader can size per-type tables by it.
 */
static int
load_types(struct kg_dataset *ds)
{
	char *path = kg_path_join(ds->dir, "types.npy");
	struct kg_npy *a = &ds->arr[KG_NSPLITS];
	const int32_t *t;
	uint64_t i, n_types;
	int32_t max = -1;

	if (!kg_path_exists(path)) {
		free(path);
		return 0;
	}
	if (kg_manifest_get_u64(&ds->manifest, "figures.types", &n_types) < 0 ||
	    n_types > ds->n_entities) {
		kg_error("%s/manifest.json: figures.types missing or above the "
		    "%llu entities", ds->dir,
		    (unsigned long long)ds->n_entities);
		goto fail_quiet;
	}
	if (kg_npy_read_expect(path, KG_DT_I4, 1, a) < 0)
		goto fail_quiet;
	if (a->shape[0] != ds->n_entities) {
		kg_error("%s: %llu rows for %llu entities", path,
		    (unsigned long long)a->shape[0],
		    (unsigned long long)ds->n_entities);
		goto fail;
	}
	t = a->data;
	for (i = 0; i < a->shape[0]; i++) {
		if (t[i] < -1 || (t[i] >= 0 && (uint64_t)t[i] >= n_types)) {
			kg_error("%s: row %llu: type ID %d out of range (%llu "
			    "types)", path, (unsigned long long)i, t[i],
			    (unsigned long long)n_types);
			goto fail;
		}
		if (t[i] > max)
			max = t[i];
	}
	ds->types = t;
	ds->n_types = (uint64_t)(max + 1);
	free(path);
	return 0;
fail:
	kg_npy_release(a);
fail_quiet:
	free(path);
	return -1;
}

int
kg_dataset_load(struct kg_dataset *ds, const char *dir)
{
	struct kg_dataset z = KG_DATASET_INIT;
	int rc, s;

	*ds = z;
	ds->dir = kg_xstrdup(dir);
	rc = kg_manifest_load(&ds->manifest, dir, "kg-ingest");
	if (rc < 0)
		goto fail;
	rc = -1;
	if (kg_manifest_verify(&ds->manifest, dir, 0) < 0)
		goto fail;
	if (kg_manifest_get_u64(&ds->manifest, "figures.entities",
	    &ds->n_entities) < 0 ||
	    kg_manifest_get_u64(&ds->manifest, "figures.relations",
	    &ds->n_relations) < 0) {
		kg_error("%s/manifest.json: figures.entities or "
		    "figures.relations missing", dir);
		goto fail;
	}
	/* IDs are int32 (an int64 dataset is refused by load_split). */
	if (ds->n_entities > (uint64_t)INT32_MAX + 1 ||
	    ds->n_relations > (uint64_t)INT32_MAX + 1) {
		kg_error("%s/manifest.json: figures.entities or "
		    "figures.relations above 2^31", dir);
		goto fail;
	}
	for (s = 0; s < KG_NSPLITS; s++)
		if (load_split(ds, (enum kg_split)s) < 0)
			goto fail;
	if (load_types(ds) < 0)
		goto fail;
	return 0;
fail:
	kg_dataset_release(ds);
	return rc;
}

void
kg_dataset_release(struct kg_dataset *ds)
{
	struct kg_dataset z = KG_DATASET_INIT;
	int i;

	for (i = 0; i <= KG_NSPLITS; i++)
		kg_npy_release(&ds->arr[i]);
	kg_manifest_release(&ds->manifest);
	free(ds->dir);
	*ds = z;
}

int
kg_dataset_names(const struct kg_dataset *ds, const char *file,
    char ***names, uint64_t *n)
{
	char *path = kg_path_join(ds->dir, file);
	size_t len;
	char *text = kg_read_file(path, &len), *p, *end, *nl, *tab;
	char **out = NULL;
	uint64_t k = 0, cap = 0, line = 0;

	if (text == NULL) {
		free(path);
		return -1;
	}
	end = text + len;
	for (p = text; p < end; p = nl + 1) {
		uint64_t id;
		char *e;

		line++;
		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL)
			nl = end;
		*nl = '\0';
		tab = strchr(p, '\t');
		if (tab == NULL) {
			kg_error("%s:%llu: expected 'id<TAB>name'", path,
			    (unsigned long long)line);
			goto fail;
		}
		*tab = '\0';
		id = strtoull(p, &e, 10);
		if (*e != '\0' || id != k) {
			kg_error("%s:%llu: expected ID %llu", path,
			    (unsigned long long)line, (unsigned long long)k);
			goto fail;
		}
		if (k == cap) {
			cap = cap ? cap * 2 : 1024;
			out = kg_xreallocarray(out, cap, sizeof(*out));
		}
		out[k++] = kg_xstrdup(tab + 1);
	}
	free(text);
	free(path);
	*names = out;
	*n = k;
	return 0;
fail:
	kg_names_free(out, k);
	free(text);
	free(path);
	return -1;
}

void
kg_names_free(char **names, uint64_t n)
{
	uint64_t i;

	for (i = 0; names != NULL && i < n; i++)
		free(names[i]);
	free(names);
}

/* The checksum string of dictionary "file" in a manifest, or NULL. */
static const char *
dict_sum(const struct kg_manifest *m, const char *file)
{
	json_t *files = m->root ? json_object_get(m->root, "files") : NULL;
	json_t *sum = json_object_get(json_object_get(files, file),
	    "checksum");

	return json_is_string(sum) ? json_string_value(sum) : NULL;
}

json_t *
kg_dataset_dicts(const struct kg_manifest *m)
{
	static const char *const files[2] = { "entities.tsv",
	    "relations.tsv" };
	json_t *d = NULL;
	int k;

	for (k = 0; k < 2; k++) {
		const char *sum = dict_sum(m, files[k]);

		if (sum == NULL)
			continue;
		if (d == NULL)
			d = json_object();
		json_object_set_new(d, files[k], json_string(sum));
	}
	return d;
}

int
kg_dataset_dict_same(json_t *recorded, const struct kg_dataset *ds,
    const char *file)
{
	json_t *r = json_object_get(recorded, file);
	const char *have = dict_sum(&ds->manifest, file);

	if (!json_is_string(r) || have == NULL)
		return -1;
	return strcmp(json_string_value(r), have) == 0;
}

int
kg_dataset_check_dicts(json_t *recorded, const struct kg_dataset *ds,
    const char *what)
{
	static const char *const files[2] = { "entities.tsv",
	    "relations.tsv" };
	static const char *const kinds[2] = { "entity", "relation" };
	int k;

	for (k = 0; k < 2; k++)
		if (kg_dataset_dict_same(recorded, ds, files[k]) == 0) {
			kg_error("%s was written for a dataset with other %s "
			    "names or IDs than '%s'; resume on the dataset it "
			    "was written for, or start over with --force", what,
			    kinds[k], ds->dir);
			return -1;
		}
	return 0;
}
