/*
 * attrs_featwrite: the arrays of a feature directory, named, described,
 * written and merged from shards (declared in attrs.h and attrs_impl.h).
 * features.h is their reader.
 */
#include "attrs/attrs_impl.h"

#include <stdlib.h>

#include "core/util.h"

size_t
kg_attrs_files(const struct kg_attrs_model *m, size_t i, char *names[3])
{
	const struct kg_attr_spec *sp = &m->schema.attrs[i];

	names[0] = kg_xasprintf("has_%s.npy", sp->output);
	if (sp->kind == KG_ATTR_TEXT) {
		names[1] = kg_xasprintf("%s.npy", sp->output);
		return 2;
	}
	names[1] = kg_xasprintf("%s_offsets.npy", sp->output);
	names[2] = kg_xasprintf("%s_indices.npy", sp->output);
	return 3;
}

json_t *
kg_attrs_describe(const struct kg_attrs_model *m)
{
	json_t *list = json_array();
	size_t i;

	for (i = 0; i < m->schema.n_attrs; i++) {
		const struct kg_attr_spec *sp = &m->schema.attrs[i];
		json_t *a = json_object();

		json_object_set_new(a, "name", json_string(sp->name));
		json_object_set_new(a, "output", json_string(sp->output));
		json_object_set_new(a, "kind",
		    json_string(kg_attr_kind_name(sp->kind)));
		json_object_set_new(a, sp->kind == KG_ATTR_TEXT ? "dim" :
		    "slots", json_integer((json_int_t)m->enc[i].slots));
		json_array_append_new(list, a);
	}
	return list;
}


int
kg_attrs_write_array(const char *dir, const char *name, enum kg_dtype dt,
    int ndim, const uint64_t *shape, const void *data)
{
	struct kg_npy_writer w;
	char *path = kg_path_join(dir, name);
	int rc = kg_npy_writer_open(&w, path, dt, ndim, shape + 1);

	free(path);
	if (rc < 0)
		return -1;
	if (shape[0] > 0 && kg_npy_writer_append(&w, data, shape[0]) < 0) {
		kg_npy_writer_abort(&w);
		return -1;
	}
	return kg_npy_writer_close(&w);
}


/* Append the data of shards[s]/name (checked dtype and row shape) to w;
 * offsets are shifted by *base and the first entry dropped after the
 * first shard. */
static int
merge_file(const char *const *shards, size_t n, const char *name,
    enum kg_dtype dt, int ndim, const uint64_t *row_shape, int offsets,
    const char *dir)
{
	struct kg_npy_writer w;
	char *out = kg_path_join(dir, name);
	int64_t base = 0;
	size_t s;
	int rc;

	rc = kg_npy_writer_open(&w, out, dt, ndim, row_shape);
	free(out);
	if (rc < 0)
		return -1;
	for (s = 0; s < n; s++) {
		struct kg_npy a = KG_NPY_INIT;
		char *path = kg_path_join(shards[s], name);
		uint64_t i, rows;

		rc = kg_npy_read_expect(path, dt, ndim, &a);
		if (rc == 0 && ndim == 2 && a.shape[1] != row_shape[0]) {
			kg_error("%s: %llu columns, expected %llu", path,
			    (unsigned long long)a.shape[1],
			    (unsigned long long)row_shape[0]);
			rc = -1;
		}
		free(path);
		if (rc < 0) {
			kg_npy_writer_abort(&w);
			return -1;
		}
		rows = a.shape[0];
		if (offsets) {
			const int64_t *o = a.data;
			int64_t buf[4096];
			uint64_t start = s == 0 ? 0 : 1, m;

			for (i = start; rc == 0 && i < rows; i += m) {
				uint64_t j;

				m = rows - i < 4096 ? rows - i : 4096;
				for (j = 0; j < m; j++)
					buf[j] = o[i + j] + base;
				rc = kg_npy_writer_append(&w, buf, m);
			}
			if (rows > 0)
				base += o[rows - 1];
		} else if (rows > 0)
			rc = kg_npy_writer_append(&w, a.data, rows);
		kg_npy_release(&a);
		if (rc < 0) {
			kg_npy_writer_abort(&w);
			return -1;
		}
	}
	return kg_npy_writer_close(&w);
}

int
kg_attrs_merge_arrays(const struct kg_attrs_model *m,
    const char *const *shards, size_t n, const char *dir)
{
	size_t i, k, nf;
	int rc = 0;

	for (i = 0; rc == 0 && i < m->schema.n_attrs; i++) {
		char *names[3];
		uint64_t row[1] = { m->enc[i].slots };

		nf = kg_attrs_files(m, i, names);
		rc = merge_file(shards, n, names[0], KG_DT_U1, 1, row, 0, dir);
		if (rc == 0 && nf == 2)
			rc = merge_file(shards, n, names[1], KG_DT_F4, 2, row,
			    0, dir);
		else if (rc == 0) {
			rc = merge_file(shards, n, names[1], KG_DT_I8, 1, row,
			    1, dir);
			if (rc == 0)
				rc = merge_file(shards, n, names[2], KG_DT_I4,
				    1, row, 0, dir);
		}
		for (k = 0; k < nf; k++)
			free(names[k]);
	}
	return rc;
}
