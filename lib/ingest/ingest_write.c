/*
 * ingest_write: the output files of kg-ingest, triples in final IDs and
 * the dictionaries (see ingest_impl.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "ingest/ingest_impl.h"
#include "io/npy.h"
#include "core/util.h"

/*
 * Write train.npy, valid.npy and test.npy in one pass over the triples
 * (with --split the three are interleaved; three passes read the whole
 * array three times), converting to final IDs through chunk buffers.
 */
static int
write_triples(struct ingest *st, const char *dir)
{
	struct kg_npy_writer w[3];
	uint64_t row = 3, i, k[3] = { 0, 0, 0 };
	size_t esize = st->id64 ? sizeof(int64_t) : sizeof(int32_t);
	char *buf[3] = { NULL, NULL, NULL };
	int s, opened = 0, rc = -1;

	for (s = 0; s < 3; s++) {
		char *name = kg_xasprintf("%s.npy", split_names[s]);
		char *path = kg_path_join(dir, name);

		free(name);
		rc = kg_npy_writer_open(&w[s], path, st->id64 ? KG_DT_I8 :
		    KG_DT_I4, 2, &row);
		free(path);
		if (rc < 0)
			goto out;
		opened++;
		buf[s] = kg_xmallocarray(CHUNK_ROWS, 3 * esize);
	}
	rc = -1;
	for (i = 0; i < st->n; i++) {
		const uint32_t *t = &st->trip[3 * i];
		uint32_t v[3];
		int c;

		if (st->label != NULL)
			s = st->label[i];
		else
			s = i < st->split_end[0] ? 0 : i < st->split_end[1] ?
			    1 : 2;
		if (s == DROPPED)
			continue;
		v[0] = final_ent(st, t[0]);
		v[1] = final_rel(st, t[1]);
		v[2] = final_ent(st, t[2]);
		for (c = 0; c < 3; c++) {
			if (st->id64)
				((int64_t *)(void *)buf[s])[3 * k[s] + c] = v[c];
			else
				((int32_t *)(void *)buf[s])[3 * k[s] + c] =
				    (int32_t)v[c];
		}
		if (++k[s] == CHUNK_ROWS) {
			if (kg_npy_writer_append(&w[s], buf[s], k[s]) < 0)
				goto out;
			k[s] = 0;
		}
	}
	for (s = 0; s < 3; s++)
		if (k[s] > 0 && kg_npy_writer_append(&w[s], buf[s], k[s]) < 0)
			goto out;
	rc = 0;
out:
	/* Close every writer; a failed close counts. */
	for (s = 0; s < opened; s++) {
		if (rc == 0) {
			if (kg_npy_writer_close(&w[s]) < 0)
				rc = -1;
		} else
			kg_npy_writer_abort(&w[s]);
		free(buf[s]);
	}
	return rc;
}

/* "id<TAB>name" per line in final-ID order; inv maps final to dictionary
 * IDs (NULL: the same). */
static int
write_names(const char *dir, const char *file, const struct kg_dict *d,
    const uint32_t *inv, uint64_t n)
{
	char *path;
	FILE *f = kg_wfile_open(dir, file, &path);
	uint64_t i;
	const char *ns, *local;
	size_t ns_len;

	if (f == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		fprintf(f, "%" PRIu64 "\t", i);
		local = kg_dict_name_parts(d, inv != NULL ? inv[i] :
		    (uint32_t)i, &ns, &ns_len);
		fwrite(ns, 1, ns_len, f);
		fputs(local, f);
		putc('\n', f);
	}
	return kg_wfile_close(f, path, 1);
}

int
kg_ingest_write_all(struct ingest *st, struct kg_stage *stage)
{
	static const char *const files[] = { "entities.tsv", "relations.tsv",
	    "train.npy", "valid.npy", "test.npy", "types.npy", "types.tsv" };
	const char *dir = stage->dir;
	size_t i, nfiles = st->type_of != NULL ? 7 : 5;

	st->id64 = st->n_ent > INT32_MAX || st->n_rel > INT32_MAX;
	if (write_names(dir, "entities.tsv", &st->ent, st->inv_e,
	    st->n_ent) < 0 ||
	    write_names(dir, "relations.tsv", &st->rel, st->inv_r,
	    st->n_rel) < 0)
		return -1;
	if (write_triples(st, dir) < 0)
		return -1;
	if (st->type_of != NULL) {
		uint64_t shape = st->n_ent;

		if (kg_manifest_put_npy(NULL, dir, "types.npy", KG_DT_I4, 1,
		    &shape, st->type_of) < 0 || write_names(dir, "types.tsv",
		    &st->types, NULL, kg_dict_size(&st->types)) < 0)
			return -1;
	}
	for (i = 0; i < nfiles; i++)
		if (kg_stage_add_file(stage, files[i]) < 0)
			return -1;
	return 0;
}
