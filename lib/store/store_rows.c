/*
 * store_rows: the read-only store over one table of rows that is already
 * in memory (borrowed) or in an entities.npy (mapped): kg-eval's, and a
 * trained table handed to a writer.  One partition, no state; acquire
 * gives rows that must not be written.  The streamed kind reads an
 * entities.npy a view at a time (pread into the caller's scratch) and
 * cannot be acquired whole: a table larger than memory stays on disk.
 */
#include "store/store_impl.h"

#include <stdlib.h>

#include "io/npy.h"

struct rows {
	struct kg_store st;	/* first */
	struct kg_store_part part;
	struct kg_npy map;	/* kg_store_open_npy's mapping */
	struct kg_store_src src;	/* the streamed kind's file */
};

static const struct kg_store_part *
rows_acquire(struct kg_store *st, uint32_t p)
{
	(void)p;
	return &((struct rows *)st)->part;
}

static void
rows_release(struct kg_store *st, uint32_t p, int dirty)
{
	(void)st;
	(void)p;
	(void)dirty;
}

static int
rows_resident(const struct kg_store *st, uint32_t p)
{
	(void)st;
	(void)p;
	return 1;
}

static const float *
rows_view(struct kg_store *st, uint32_t p, uint64_t first, uint64_t n,
    float *scratch)
{
	(void)p;
	(void)n;
	(void)scratch;
	return ((struct rows *)st)->part.w + first * st->dim;
}

static const struct kg_store_part *
stream_acquire(struct kg_store *st, uint32_t p)
{
	(void)p;
	kg_error("'%s' is read a piece at a time, not whole",
	    ((struct rows *)st)->src.path);
	return NULL;
}

static int
stream_resident(const struct kg_store *st, uint32_t p)
{
	(void)st;
	(void)p;
	return 0;
}

static const float *
stream_view(struct kg_store *st, uint32_t p, uint64_t first, uint64_t n,
    float *scratch)
{
	(void)p;
	if (kg_store_src_read(&((struct rows *)st)->src, first, n, st->dim,
	    scratch) < 0)
		return NULL;
	return scratch;
}

static void
rows_free(struct kg_store *st)
{
	struct rows *r = (struct rows *)st;

	kg_store_src_close(&r->src);
	kg_npy_release(&r->map);
	kg_store_base_release(st);
	free(r);
}

static const struct kg_store_ops rows_ops = {
	.acquire = rows_acquire, .release = rows_release,
	.resident = rows_resident, .part_view = rows_view, .free = rows_free
};

static const struct kg_store_ops stream_ops = {
	.acquire = stream_acquire, .release = rows_release,
	.resident = stream_resident, .part_view = stream_view,
	.free = rows_free
};

struct kg_store *
kg_store_open_rows(const float *rows, uint64_t n, uint32_t dim)
{
	struct kg_store_layout l = { n, dim, 0, 1, NULL };
	struct rows *r = kg_xcalloc(1, sizeof(*r));

	r->map = (struct kg_npy)KG_NPY_INIT;
	r->src.fd = -1;
	if (kg_store_base_init(&r->st, &rows_ops, &l, NULL) < 0) {
		free(r);
		return NULL;
	}
	r->st.read_only = 1;
	r->part.rows = n;
	/* Writing through it is the caller's contract violation, and a
	 * mapped table is read-only memory. */
	r->part.w = (float *)rows;
	return &r->st;
}

struct kg_store *
kg_store_open_npy(const char *path)
{
	struct kg_npy a = KG_NPY_INIT;
	struct kg_store *st;

	if (kg_npy_read_expect(path, KG_DT_F4, 2, &a) < 0)
		return NULL;
	if (a.shape[1] == 0 || a.shape[1] > UINT32_MAX) {
		kg_error("%s: bad row width %llu", path,
		    (unsigned long long)a.shape[1]);
		kg_npy_release(&a);
		return NULL;
	}
	st = kg_store_open_rows(a.data, a.shape[0], (uint32_t)a.shape[1]);
	if (st == NULL) {
		kg_npy_release(&a);
		return NULL;
	}
	((struct rows *)st)->map = a;
	return st;
}

struct kg_store *
kg_store_open_npy_stream(const char *path)
{
	uint64_t shape[KG_NPY_MAXDIM];
	enum kg_dtype dt;
	size_t off;
	int ndim;
	struct kg_store *st;
	struct rows *r;

	if (kg_npy_read_header(path, &dt, &ndim, shape, &off) < 0)
		return NULL;
	if (dt != KG_DT_F4 || ndim != 2 || shape[1] == 0 ||
	    shape[1] > UINT32_MAX) {
		kg_error("'%s' is not a float32 table of rows", path);
		return NULL;
	}
	st = kg_store_open_rows(NULL, shape[0], (uint32_t)shape[1]);
	if (st == NULL)
		return NULL;
	r = (struct rows *)st;
	st->ops = &stream_ops;
	if (kg_store_src_open(&r->src, path, shape[0],
	    (uint32_t)shape[1]) < 0) {
		rows_free(st);
		return NULL;
	}
	return st;
}
