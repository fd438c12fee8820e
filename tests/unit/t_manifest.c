#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/ckpt.h"
#include "io/dataset.h"
#include "io/manifest.h"
#include "io/npy.h"
#include "io/outdir.h"
#include "core/util.h"
#include "test.h"

static char *
make_dir(const char *name)
{
	char *d = kg_path_join(t_tmpdir(), name);

	mkdir(d, 0755);
	return d;
}

static void
write_text(const char *dir, const char *name, const char *text)
{
	char *p = kg_path_join(dir, name);
	FILE *f = fopen(p, "w");

	fputs(text, f);
	fclose(f);
	free(p);
}

/* A tiny valid dataset dir: 4 entities, 2 relations. */
static char *
make_dataset(const char *name, int version)
{
	char *dir = make_dir(name);
	char *argv[] = { "kg-ingest", "x" };
	int32_t tr[] = { 0, 0, 1, 1, 1, 2, 2, 0, 3 }, va[] = { 0, 1, 3 };
	uint64_t s3[2] = { 3, 3 }, s1[2] = { 1, 3 };
	struct kg_manifest m;
	char *p;

	p = kg_path_join(dir, "train.npy");
	kg_npy_write(p, KG_DT_I4, 2, s3, tr);
	free(p);
	p = kg_path_join(dir, "valid.npy");
	kg_npy_write(p, KG_DT_I4, 2, s1, va);
	free(p);
	p = kg_path_join(dir, "test.npy");
	kg_npy_write(p, KG_DT_I4, 2, s1, va);
	free(p);
	write_text(dir, "entities.tsv", "0\ta\n1\tb\n2\tc\n3\td\n");
	write_text(dir, "relations.tsv", "0\tr\n1\ts\n");
	kg_setprogname("kg-ingest");
	kg_manifest_init(&m, 2, argv);
	kg_setprogname("t_manifest");
	T_CHECK(kg_manifest_add_file(&m, dir, "train.npy") == 0);
	T_CHECK(kg_manifest_add_file(&m, dir, "valid.npy") == 0);
	T_CHECK(kg_manifest_add_file(&m, dir, "test.npy") == 0);
	T_CHECK(kg_manifest_add_file(&m, dir, "entities.tsv") == 0);
	T_CHECK(kg_manifest_add_file(&m, dir, "relations.tsv") == 0);
	kg_manifest_set_figure(&m, "entities", json_integer(4));
	kg_manifest_set_figure(&m, "relations", json_integer(2));
	if (version != KG_FORMAT_VERSION)
		json_object_set_new(m.root, "format_version",
		    json_integer(version));
	T_CHECK(kg_manifest_write(&m, dir) == 0);
	kg_manifest_release(&m);
	return dir;
}

static void
t_write_load_verify(void)
{
	char *dir = make_dataset("ds", KG_FORMAT_VERSION);
	struct kg_manifest m;
	json_t *v;
	uint64_t n;

	T_CHECK(kg_manifest_load(&m, dir, "kg-ingest") == 0);
	T_CHECK(kg_manifest_verify(&m, dir, 1) == 0);
	v = kg_manifest_get(&m, "files.train.npy");
	T_CHECK(v == NULL);	/* dotted path splits on the dot in the name */
	v = json_object_get(kg_manifest_get(&m, "files"), "train.npy");
	T_CHECK(json_is_object(v));
	T_CHECK(strcmp(json_string_value(json_object_get(v, "dtype")),
	    "<i4") == 0);
	T_CHECK(json_integer_value(json_array_get(json_object_get(v, "shape"),
	    0)) == 3);
	T_CHECK(strncmp(json_string_value(json_object_get(v, "checksum")),
	    "xxh3-64:", 8) == 0);
	T_CHECK(kg_manifest_get_u64(&m, "figures.entities", &n) == 0 && n == 4);
	T_CHECK(kg_manifest_get_u64(&m, "figures.nothing", &n) < 0);
	T_CHECK(strcmp(json_string_value(kg_manifest_get(&m, "tool")),
	    "kg-ingest") == 0);
	T_CHECK(json_array_size(kg_manifest_get(&m, "argv")) == 2);
	kg_manifest_release(&m);

	kg_error_mute(1);
	T_CHECK(kg_manifest_load(&m, dir, "kg-partition") < 0);
	T_CHECK(strstr(kg_error_last(), "written by kg-ingest") != NULL);
	kg_error_mute(0);
	free(dir);
}

static void
t_detects_tampering(void)
{
	char *dir = make_dataset("ds2", KG_FORMAT_VERSION);
	struct kg_manifest m;
	char *p = kg_path_join(dir, "entities.tsv");
	FILE *f;

	T_CHECK(kg_manifest_load(&m, dir, NULL) == 0);
	/* Same size, other bytes: only the checksum sees it. */
	f = fopen(p, "r+");
	fputc('9', f);
	fclose(f);
	T_CHECK(kg_manifest_verify(&m, dir, 0) == 0);
	kg_error_mute(1);
	T_CHECK(kg_manifest_verify(&m, dir, 1) < 0);
	T_CHECK(strstr(kg_error_last(), "checksum") != NULL);
	/* Truncation: the size check sees it. */
	T_CHECK(truncate(p, 3) == 0);
	T_CHECK(kg_manifest_verify(&m, dir, 0) < 0);
	T_CHECK(strstr(kg_error_last(), "truncated") != NULL);
	/* A missing file. */
	unlink(p);
	T_CHECK(kg_manifest_verify(&m, dir, 0) < 0);
	kg_error_mute(0);
	kg_manifest_release(&m);
	free(p);
	free(dir);
}

static void
t_version_and_garbage(void)
{
	char *dir = make_dataset("ds3", 99);
	char *bad = make_dir("bad");
	struct kg_manifest m;
	struct kg_dataset ds;

	kg_error_mute(1);
	T_CHECK(kg_manifest_load(&m, dir, NULL) == KG_ERR_VERSION);
	T_CHECK(strstr(kg_error_last(), "format version 99") != NULL);
	T_CHECK(kg_dataset_load(&ds, dir) == KG_ERR_VERSION);
	T_CHECK(kg_manifest_load(&m, bad, NULL) == -1);
	T_CHECK(strstr(kg_error_last(), "not a kgpipe output") != NULL);
	write_text(bad, "manifest.json", "{\"format\": \"kgpipe\",");
	T_CHECK(kg_manifest_load(&m, bad, NULL) == -1);
	T_CHECK(strstr(kg_error_last(), "manifest.json:") != NULL);
	write_text(bad, "manifest.json", "{\"format\": \"other\"}");
	T_CHECK(kg_manifest_load(&m, bad, NULL) == -1);
	T_CHECK(strstr(kg_error_last(), "not a kgpipe manifest") != NULL);
	kg_error_mute(0);
	free(bad);
	free(dir);
}

static void
t_dataset_load(void)
{
	char *dir = make_dataset("ds4", KG_FORMAT_VERSION);
	struct kg_dataset ds;
	char **names;
	uint64_t n;

	T_CHECK(kg_dataset_load(&ds, dir) == 0);
	T_CHECK(ds.n_entities == 4 && ds.n_relations == 2);
	T_CHECK(ds.split[KG_SPLIT_TRAIN].n == 3);
	T_CHECK(ds.split[KG_SPLIT_TRAIN].hrt[5] == 2);
	T_CHECK(ds.split[KG_SPLIT_TEST].n == 1 && ds.types == NULL);
	T_CHECK(kg_dataset_names(&ds, "entities.tsv", &names, &n) == 0);
	T_CHECK(n == 4 && strcmp(names[3], "d") == 0);
	kg_names_free(names, n);
	kg_dataset_release(&ds);
	free(dir);

	/* An out-of-range ID is caught on load. */
	dir = make_dataset("ds5", KG_FORMAT_VERSION);
	{
		struct kg_manifest m;
		char *p = kg_path_join(dir, "manifest.json");

		T_CHECK(kg_manifest_load(&m, dir, NULL) == 0);
		kg_manifest_set_figure(&m, "entities", json_integer(3));
		T_CHECK(kg_manifest_write(&m, dir) == 0);
		kg_manifest_release(&m);
		free(p);
	}
	kg_error_mute(1);
	T_CHECK(kg_dataset_load(&ds, dir) < 0);
	T_CHECK(strstr(kg_error_last(), "out of range") != NULL);
	kg_error_mute(0);
	free(dir);
}

/* Load dir's manifest, let edit change it, write it back. */
static void
edit_manifest(const char *dir, void (*edit)(json_t *files, void *arg),
    void *arg)
{
	struct kg_manifest m;

	T_CHECK(kg_manifest_load(&m, dir, NULL) == 0);
	edit(json_object_get(m.root, "files"), arg);
	T_CHECK(kg_manifest_write(&m, dir) == 0);
	kg_manifest_release(&m);
}

/* Set files."train.npy".KEY to the JSON text value. */
struct entry_edit {
	const char *key, *value;
};

static void
set_train_key(json_t *files, void *arg)
{
	const struct entry_edit *e = arg;
	json_t *entry = json_object_get(files, "train.npy");

	if (e->value == NULL)
		json_object_del(entry, e->key);
	else
		json_object_set_new(entry, e->key, json_loads(e->value,
		    JSON_DECODE_ANY, NULL));
}

/*
 * A manifest entry that is not what a writer makes is an error naming the
 * manifest and the key, not a check skipped (issue 12, item 8).
 */
static void
t_malformed_entries(void)
{
	static const struct entry_edit cases[] = {
		{ "shape", "\"3,3\"" }, { "shape", "{\"n\": 3}" },
		{ "shape", NULL }, { "shape", "[3, \"3\"]" },
		{ "shape", "[3, -3]" }, { "dtype", "4" }, { "dtype", NULL },
		{ "bytes", "\"200\"" }, { "checksum", "null" },
	};
	static const char *const want[] = {
		"manifest.json: files.train.npy.shape is missing or not an "
		    "array of at most 8 sizes",
		"files.train.npy.shape is missing", "files.train.npy.shape",
		"manifest.json: files.train.npy.shape[1] is not a non-negative "
		    "integer",
		"files.train.npy.shape[1]",
		"manifest.json: files.train.npy.dtype is missing or not a "
		    "string",
		"files.train.npy.dtype", "files.train.npy.bytes",
		"files.train.npy.checksum",
	};
	struct kg_manifest m;
	struct kg_dataset ds;
	size_t i;

	for (i = 0; i < KG_ARRAY_LEN(cases); i++) {
		char name[16];
		char *dir;

		snprintf(name, sizeof(name), "mal%zu", i);
		dir = make_dataset(name, KG_FORMAT_VERSION);
		edit_manifest(dir, set_train_key, (void *)&cases[i]);
		T_CHECK(kg_manifest_load(&m, dir, NULL) == 0);
		kg_error_mute(1);
		T_CHECK(kg_manifest_verify(&m, dir, 0) < 0);
		T_CHECKF(strstr(kg_error_last(), want[i]) != NULL, "case %zu: "
		    "%s", i, kg_error_last());
		T_CHECK(kg_dataset_load(&ds, dir) < 0);
		kg_error_mute(0);
		kg_manifest_release(&m);
		free(dir);
	}
}

/* Rename the train.npy entry to the name in arg. */
static void
rename_train(json_t *files, void *arg)
{
	json_t *entry = json_object_get(files, "train.npy");

	json_object_set(files, (const char *)arg, entry);
	json_object_del(files, "train.npy");
}

/* A manifest may only list files inside its directory: "../x", "/x",
 * "a/../b", "./x" and "a//b" are refused before anything is opened. */
static void
t_entry_names(void)
{
	static const char *const bad[] = { "../train.npy", "/etc/passwd",
	    "a/../../train.npy", "./train.npy", "a//train.npy", "sub/" };
	struct kg_manifest m;
	size_t i;

	for (i = 0; i < KG_ARRAY_LEN(bad); i++) {
		char name[16];
		char *dir;

		snprintf(name, sizeof(name), "nm%zu", i);
		dir = make_dataset(name, KG_FORMAT_VERSION);
		edit_manifest(dir, rename_train, (void *)bad[i]);
		T_CHECK(kg_manifest_load(&m, dir, NULL) == 0);
		kg_error_mute(1);
		T_CHECKF(kg_manifest_verify(&m, dir, 0) < 0, "%s accepted",
		    bad[i]);
		T_CHECKF(strstr(kg_error_last(), "is not a file name inside") !=
		    NULL, "%s: %s", bad[i], kg_error_last());
		kg_error_mute(0);
		kg_manifest_release(&m);
		free(dir);
	}
}

/* Add types.npy (and figures.types unless negative) to a dataset. */
static void
add_types(const char *dir, const int32_t types[4], long long n_types)
{
	struct kg_manifest m;
	uint64_t shape[1] = { 4 };
	char *p = kg_path_join(dir, "types.npy");

	T_CHECK(kg_npy_write(p, KG_DT_I4, 1, shape, types) == 0);
	free(p);
	T_CHECK(kg_manifest_load(&m, dir, NULL) == 0);
	T_CHECK(kg_manifest_add_file(&m, dir, "types.npy") == 0);
	if (n_types >= 0)
		kg_manifest_set_figure(&m, "types", json_integer(n_types));
	T_CHECK(kg_manifest_write(&m, dir) == 0);
	kg_manifest_release(&m);
}

/*
 * Type IDs are checked against figures.types before anyone sizes a table
 * by them: 2^31 - 1 used to make n_types = max + 1 overflow (issue 12,
 * item 3).
 */
static void
t_types_range(void)
{
	static const int32_t good[4] = { 0, -1, 1, 0 };
	static const int32_t huge[4] = { 0, INT32_MAX, 1, 0 };
	static const int32_t neg[4] = { 0, -2, 1, 0 };
	struct kg_dataset ds;
	char *dir;

	dir = make_dataset("ty0", KG_FORMAT_VERSION);
	add_types(dir, good, 2);
	T_CHECK(kg_dataset_load(&ds, dir) == 0);
	T_CHECK(ds.n_types == 2 && ds.types != NULL && ds.types[1] == -1);
	kg_dataset_release(&ds);
	free(dir);

	kg_error_mute(1);
	dir = make_dataset("ty1", KG_FORMAT_VERSION);
	add_types(dir, huge, 2);
	T_CHECK(kg_dataset_load(&ds, dir) < 0);
	T_CHECK(strstr(kg_error_last(), "row 1: type ID 2147483647 out of "
	    "range (2 types)") != NULL);
	free(dir);
	dir = make_dataset("ty2", KG_FORMAT_VERSION);
	add_types(dir, neg, 2);
	T_CHECK(kg_dataset_load(&ds, dir) < 0);
	T_CHECK(strstr(kg_error_last(), "type ID -2") != NULL);
	free(dir);
	dir = make_dataset("ty3", KG_FORMAT_VERSION);
	add_types(dir, good, -1);
	T_CHECK(kg_dataset_load(&ds, dir) < 0);
	T_CHECK(strstr(kg_error_last(), "figures.types missing") != NULL);
	free(dir);
	dir = make_dataset("ty4", KG_FORMAT_VERSION);
	add_types(dir, huge, (long long)INT32_MAX + 1);
	T_CHECK(kg_dataset_load(&ds, dir) < 0);
	T_CHECK(strstr(kg_error_last(), "above the 4 entities") != NULL);
	free(dir);
	kg_error_mute(0);
}

/* Entity and relation counts beyond int32 IDs are refused. */
static void
t_counts_range(void)
{
	char *dir = make_dataset("cnt", KG_FORMAT_VERSION);
	struct kg_manifest m;
	struct kg_dataset ds;

	T_CHECK(kg_manifest_load(&m, dir, NULL) == 0);
	kg_manifest_set_figure(&m, "entities", json_integer(1LL << 40));
	T_CHECK(kg_manifest_write(&m, dir) == 0);
	kg_manifest_release(&m);
	kg_error_mute(1);
	T_CHECK(kg_dataset_load(&ds, dir) < 0);
	T_CHECK(strstr(kg_error_last(), "above 2^31") != NULL);
	kg_error_mute(0);
	free(dir);
}

/* Whether path holds exactly the bytes of ref. */
static int
same_bytes(const char *path, const char *ref)
{
	size_t na, nb;
	char *a = kg_read_file(path, &na), *b = kg_read_file(ref, &nb);
	int same = a != NULL && b != NULL && na == nb &&
	    memcmp(a, b, na) == 0;

	free(a);
	free(b);
	return same;
}

/* kg_manifest_put_npy writes what kg_npy_write writes and records it as
 * kg_manifest_add_file does; without a manifest it only writes; an empty
 * array needs no data; a failed write records nothing. */
static void
t_put_npy(void)
{
	char *dir = make_dir("put"), *ref = make_dir("put-ref"), *p, *q;
	char *missing = kg_path_join(dir, "no/such");
	int32_t x[6] = { 1, -2, 3, -4, 5, -6 };
	uint64_t sh[2] = { 2, 3 }, sh0[2] = { 0, 3 };
	struct kg_manifest m, r;
	json_t *files, *e;
	struct kg_npy a = KG_NPY_INIT;

	kg_manifest_init(&m, 0, NULL);
	kg_manifest_init(&r, 0, NULL);
	T_CHECK(kg_manifest_put_npy(&m, dir, "x.npy", KG_DT_I4, 2, sh,
	    x) == 0);
	p = kg_path_join(dir, "x.npy");
	q = kg_path_join(ref, "x.npy");
	T_CHECK(kg_npy_write(q, KG_DT_I4, 2, sh, x) == 0);
	T_CHECK(same_bytes(p, q));
	T_CHECK(kg_manifest_add_file(&r, ref, "x.npy") == 0);
	files = json_object_get(m.root, "files");
	e = json_object_get(files, "x.npy");
	T_CHECK(e != NULL && json_equal(e, json_object_get(json_object_get(
	    r.root, "files"), "x.npy")));
	T_CHECK(e != NULL && json_integer_value(json_array_get(
	    json_object_get(e, "shape"), 1)) == 3);
	free(p);
	free(q);

	T_CHECK(kg_manifest_put_npy(NULL, dir, "y.npy", KG_DT_I4, 1, sh,
	    x) == 0);
	p = kg_path_join(dir, "y.npy");
	T_CHECK(kg_npy_read_expect(p, KG_DT_I4, 1, &a) == 0 &&
	    a.shape[0] == 2 && ((const int32_t *)a.data)[1] == -2);
	kg_npy_release(&a);
	T_CHECK(json_object_get(files, "y.npy") == NULL);
	free(p);

	T_CHECK(kg_manifest_put_npy(&m, dir, "empty.npy", KG_DT_I4, 2, sh0,
	    NULL) == 0);
	p = kg_path_join(dir, "empty.npy");
	T_CHECK(kg_npy_read_expect(p, KG_DT_I4, 2, &a) == 0 &&
	    a.shape[0] == 0 && a.shape[1] == 3);
	kg_npy_release(&a);
	T_CHECK(json_object_get(files, "empty.npy") != NULL);
	free(p);

	kg_error_mute(1);
	T_CHECK(kg_manifest_put_npy(&m, missing, "z.npy", KG_DT_I4, 2, sh,
	    x) < 0);
	kg_error_mute(0);
	T_CHECKF(strstr(kg_error_last(), "cannot create") != NULL, "%s",
	    kg_error_last());
	T_CHECK(json_object_size(files) == 2);
	kg_manifest_release(&m);
	kg_manifest_release(&r);
	free(missing);
	free(ref);
	free(dir);
}

/* kg_manifest_add_dir records every file of a directory but the
 * manifest and dot files, each as kg_manifest_add_file would. */
static void
t_add_dir(void)
{
	char *dir = make_dir("adddir"), *missing = kg_path_join(dir, "nope");
	int32_t x[3] = { 7, 8, 9 };
	uint64_t sh = 3;
	struct kg_manifest m, r;
	json_t *files;

	write_text(dir, "b.tsv", "0\tb\n");
	write_text(dir, ".hidden", "x\n");
	write_text(dir, "manifest.json", "{}\n");
	kg_manifest_init(&r, 0, NULL);
	T_CHECK(kg_manifest_put_npy(&r, dir, "a.npy", KG_DT_I4, 1, &sh,
	    x) == 0);
	T_CHECK(kg_manifest_add_file(&r, dir, "b.tsv") == 0);
	kg_manifest_init(&m, 0, NULL);
	T_CHECK(kg_manifest_add_dir(&m, dir) == 0);
	files = json_object_get(m.root, "files");
	T_CHECK(json_object_size(files) == 2);
	T_CHECK(json_equal(files, json_object_get(r.root, "files")));
	kg_error_mute(1);
	T_CHECK(kg_manifest_add_dir(&m, missing) < 0);
	kg_error_mute(0);
	T_CHECKF(strstr(kg_error_last(), "cannot list") != NULL, "%s",
	    kg_error_last());
	T_CHECK(json_object_size(files) == 2);
	kg_manifest_release(&m);
	kg_manifest_release(&r);
	free(missing);
	free(dir);
}

/* Counts above 2^32 keep every bit, in a figure and in an array. */
static void
t_figures_u64(void)
{
	uint64_t x[3] = { 3, 0, ((uint64_t)1 << 40) + 7 }, v = 0;
	struct kg_manifest m;
	json_t *a;

	kg_manifest_init(&m, 0, NULL);
	kg_manifest_set_figure_u64(&m, "big", x[2]);
	T_CHECK(kg_manifest_get_u64(&m, "figures.big", &v) == 0 &&
	    v == x[2]);
	a = kg_json_u64_array(x, 3);
	T_CHECK(json_array_size(a) == 3 &&
	    json_integer_value(json_array_get(a, 0)) == 3 &&
	    json_integer_value(json_array_get(a, 1)) == 0 &&
	    (uint64_t)json_integer_value(json_array_get(a, 2)) == x[2]);
	json_decref(a);
	T_CHECK(json_array_size(a = kg_json_u64_array(x, 0)) == 0);
	json_decref(a);
	kg_manifest_release(&m);
}

/* A resume's changes: a value that differs, a key only this run has, a
 * key only the checkpoint has, earlier resumes kept with their first
 * "old", and nothing for the same settings. */
static void
t_ckpt_changes(void)
{
	json_t *old = json_loads("{\"lr\": 0.5, \"dim\": 8, \"gone\": 1, "
	    "\"dictionaries\": 1, \"resumed_with_changes\": {\"dim\": "
	    "{\"old\": 4, \"new\": 8}}}", 0, NULL);
	json_t *now = json_loads("{\"lr\": 0.25, \"dim\": 8, \"added\": "
	    "true, \"dictionaries\": 2}", 0, NULL);
	json_t *same = json_loads("{\"lr\": 0.5, \"dim\": 8, \"gone\": 1}",
	    0, NULL);
	json_t *ch, *want;
	char *line;

	kg_ckpt_changes(old, now, &ch, &line);
	want = json_loads("{\"dim\": {\"old\": 4, \"new\": 8}, \"lr\": "
	    "{\"old\": 0.5, \"new\": 0.25}, \"added\": {\"old\": null, "
	    "\"new\": true}, \"gone\": {\"old\": 1, \"new\": null}}", 0,
	    NULL);
	T_CHECK(ch != NULL && json_equal(ch, want));
	T_CHECKF(line != NULL && strcmp(line, "lr 0.5 -> 0.25, added none -> "
	    "true, gone 1 -> none") == 0, "%s", line ? line : "(null)");
	json_decref(ch);
	json_decref(want);
	free(line);
	json_object_del(old, "resumed_with_changes");
	kg_ckpt_changes(old, same, &ch, &line);
	T_CHECK(ch == NULL && line == NULL);
	kg_ckpt_changes(NULL, now, &ch, &line);
	T_CHECK(ch == NULL && line == NULL);
	json_decref(old);
	json_decref(now);
	json_decref(same);
}

int
main(void)
{
	kg_setprogname("t_manifest");
	T_RUN(t_malformed_entries);
	T_RUN(t_entry_names);
	T_RUN(t_types_range);
	T_RUN(t_counts_range);
	T_RUN(t_write_load_verify);
	T_RUN(t_detects_tampering);
	T_RUN(t_version_and_garbage);
	T_RUN(t_dataset_load);
	T_RUN(t_put_npy);
	T_RUN(t_add_dir);
	T_RUN(t_figures_u64);
	T_RUN(t_ckpt_changes);
	return T_DONE();
}
