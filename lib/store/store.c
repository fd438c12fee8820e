/*
 * store: the dispatch and the parts every implementation shares; see
 * store.h.
 */
#include "store/store_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/npy.h"

void
kg_init_fill(enum kg_init_kind kind, double scale, struct kg_rng *rng,
    float *w, uint64_t n)
{
	uint64_t i;

	if (kind == KG_INIT_ZERO) {
		memset(w, 0, n * sizeof(float));
		return;
	}
	for (i = 0; i < n; i++)
		w[i] = (float)(kind == KG_INIT_NORMAL ?
		    scale * kg_rng_normal(rng) :
		    scale * (2.0 * kg_rng_uniform(rng) - 1.0));
}

/* Advance rng past k values of kind: the raw draws kg_init_fill would
 * make for them (one for U(-1, 1), two for N(0, 1)), without computing
 * them. */
static void
skip_values(struct kg_rng *rng, enum kg_init_kind kind, uint64_t k)
{
	uint64_t n = kind == KG_INIT_NORMAL ? 2 * k : k;

	while (n-- > 0)
		(void)kg_rng_next(rng);
}

/* Per thread, the place of the last read of each partition's fresh rows
 * (partition p in slot p % CURSORS): a read that starts at or after it
 * continues that stream, so that reading partitions in order, even
 * interleaved, draws each value once. */
#define CURSORS 64

struct cursor {
	int live;
	enum kg_init_kind kind;
	uint64_t seed;
	enum kg_stream purpose;
	uint32_t p;
	uint64_t drawn;
	struct kg_rng rng;
};

static _Thread_local struct cursor cursors[CURSORS];

void
kg_store_init_rows(const struct kg_store *st, uint32_t p, uint64_t skip,
    uint64_t n, float *dst)
{
	struct cursor *c = &cursors[p % CURSORS];
	struct kg_rng rng;
	uint64_t k = skip * st->dim;

	if (st->init.kind == KG_INIT_ZERO) {
		memset(dst, 0, n * st->dim * sizeof(float));
		return;
	}
	if (c->live && c->kind == st->init.kind && c->seed == st->init.seed &&
	    c->purpose == st->init.purpose && c->p == p && c->drawn <= k) {
		rng = c->rng;
		skip_values(&rng, st->init.kind, k - c->drawn);
	} else {
		kg_rng_stream(&rng, st->init.seed, st->init.purpose, p, 0, 0,
		    0);
		skip_values(&rng, st->init.kind, k);
	}
	kg_init_fill(st->init.kind, st->init.scale, &rng, dst, n * st->dim);
	c->live = 1;
	c->kind = st->init.kind;
	c->seed = st->init.seed;
	c->purpose = st->init.purpose;
	c->p = p;
	c->drawn = k + n * st->dim;
	c->rng = rng;
}

int
kg_store_base_init(struct kg_store *st, const struct kg_store_ops *ops,
    const struct kg_store_layout *l, const struct kg_store_init *init)
{
	uint32_t p;

	memset(st, 0, sizeof(*st));
	st->ops = ops;
	if (l->n_parts == 0 || l->dim == 0 || (l->n_parts > 1 &&
	    l->off == NULL)) {
		kg_error("bad store layout: %u partitions of rows of %u",
		    l->n_parts, l->dim);
		return -1;
	}
	st->n_rows = l->n_rows;
	st->dim = l->dim;
	st->state_width = l->state_width;
	st->n_parts = l->n_parts;
	st->off = kg_xmallocarray((size_t)l->n_parts + 1, sizeof(*st->off));
	st->off[0] = 0;
	st->off[l->n_parts] = l->n_rows;
	for (p = 1; p < l->n_parts; p++)
		st->off[p] = (uint64_t)l->off[p];
	for (p = 0; p < l->n_parts; p++)
		if (st->off[p + 1] <= st->off[p] || (l->off != NULL &&
		    (l->off[0] != 0 || (uint64_t)l->off[l->n_parts] !=
		    l->n_rows))) {
			kg_error("partition offsets do not cover the %llu "
			    "rows in non-empty ranges (partition %u)",
			    (unsigned long long)l->n_rows, p);
			kg_store_base_release(st);
			return -1;
		}
	if (init != NULL)
		st->init = *init;
	return 0;
}

void
kg_store_base_release(struct kg_store *st)
{
	free(st->off);
	st->off = NULL;
}

size_t
kg_store_part_floats(const struct kg_store *st, uint32_t p)
{
	return (size_t)(st->off[p + 1] - st->off[p]) *
	    ((size_t)st->dim + st->state_width);
}

uint64_t
kg_store_part_rows(const struct kg_store *st, uint32_t p)
{
	return st->off[p + 1] - st->off[p];
}

int
kg_store_resident(const struct kg_store *st, uint32_t p)
{
	return p < st->n_parts && st->ops->resident(st, p);
}

uint32_t
kg_store_part_of(const struct kg_store *st, uint64_t id)
{
	uint32_t lo = 0, hi = st->n_parts - 1;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo + 1) / 2;

		if (st->off[mid] <= id)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

float *
kg_store_buf_new(struct kg_store *st, uint32_t p)
{
	size_t bytes = kg_store_part_floats(st, p) * sizeof(float);

	st->stats.bytes_held += bytes;
	if (st->stats.bytes_held > st->stats.bytes_held_max)
		st->stats.bytes_held_max = st->stats.bytes_held;
	return kg_xaligned_alloc(64, bytes ? bytes : 64);
}

void
kg_store_buf_del(struct kg_store *st, uint32_t p, float *buf)
{
	if (buf == NULL)
		return;
	st->stats.bytes_held -= kg_store_part_floats(st, p) * sizeof(float);
	free(buf);
}

void
kg_store_free(struct kg_store *st)
{
	if (st == NULL)
		return;
	kg_store_snap_free(st);
	st->ops->free(st);
}

/* A partition number the store has, or an error. */
static int
check_part(const struct kg_store *st, uint32_t p, const char *what)
{
	if (p < st->n_parts)
		return 0;
	kg_error("%s: no partition %u (the store has %u)", what, p,
	    st->n_parts);
	return -1;
}

const struct kg_store_part *
kg_store_acquire(struct kg_store *st, uint32_t p)
{
	if (check_part(st, p, "acquire") < 0)
		return NULL;
	return st->ops->acquire(st, p);
}

void
kg_store_release(struct kg_store *st, uint32_t p, int dirty)
{
	if (p < st->n_parts)
		st->ops->release(st, p, dirty);
}

void
kg_store_prefetch(struct kg_store *st, uint32_t p)
{
	if (p < st->n_parts && st->ops->prefetch != NULL)
		st->ops->prefetch(st, p);
}

float *
kg_store_take(struct kg_store *st, uint32_t p)
{
	if (check_part(st, p, "take") < 0)
		return NULL;
	if (st->ops->take == NULL) {
		kg_error("take: the store is read-only");
		return NULL;
	}
	return st->ops->take(st, p);
}

int
kg_store_put(struct kg_store *st, uint32_t p, float *buf)
{
	if (check_part(st, p, "put") < 0)
		return -1;
	if (st->ops->put == NULL) {
		kg_error("put: the store is read-only");
		return -1;
	}
	return st->ops->put(st, p, buf);
}

float *
kg_store_buf_alloc(struct kg_store *st, uint32_t p)
{
	if (check_part(st, p, "buffer") < 0)
		return NULL;
	if (st->ops->reserve != NULL && st->ops->reserve(st,
	    kg_store_part_floats(st, p) * sizeof(float)) < 0)
		return NULL;
	return kg_store_buf_new(st, p);
}

void
kg_store_buf_free(struct kg_store *st, uint32_t p, float *buf)
{
	if (p < st->n_parts)
		kg_store_buf_del(st, p, buf);
}

int
kg_store_set_source(struct kg_store *st, uint32_t p, const char *rows_path,
    const char *state_path)
{
	if (check_part(st, p, "source") < 0)
		return -1;
	if (st->ops->set_source == NULL) {
		kg_error("'%s': the store is read-only", rows_path);
		return -1;
	}
	if (st->state_width > 0 && state_path == NULL) {
		kg_error("'%s': no file for the optimiser state", rows_path);
		return -1;
	}
	return st->ops->set_source(st, p, rows_path, state_path);
}

const float *
kg_store_view(struct kg_store *st, uint64_t first, uint64_t n,
    float *scratch)
{
	uint32_t p;
	uint64_t done = 0;

	if (first > st->n_rows || n > st->n_rows - first) {
		kg_error("rows %llu to %llu are outside the table of %llu",
		    (unsigned long long)first, (unsigned long long)(first + n),
		    (unsigned long long)st->n_rows);
		return NULL;
	}
	p = kg_store_part_of(st, first);
	if (n == 0 || first + n <= st->off[p + 1])
		return st->ops->part_view(st, p, first, n, scratch);
	/* Across partitions: piece by piece into scratch. */
	while (done < n) {
		uint64_t at = first + done, k = st->off[p + 1] - at;
		float *dst = scratch + done * st->dim;
		const float *src;

		if (k > n - done)
			k = n - done;
		src = st->ops->part_view(st, p, at, k, dst);
		if (src == NULL)
			return NULL;
		if (src != dst)
			memcpy(dst, src, k * st->dim * sizeof(float));
		done += k;
		p++;
	}
	return scratch;
}

int
kg_store_read(struct kg_store *st, uint64_t first, uint64_t n, float *dst)
{
	const float *src = kg_store_view(st, first, n, dst);

	if (src == NULL)
		return -1;
	if (src != dst)
		memcpy(dst, src, n * st->dim * sizeof(float));
	return 0;
}

/* The file holding x of rows rows of width floats, as save_part writes
 * it: [rows, width], or [rows] for width 1 of a state. */
static int
put_rows(const char *path, uint64_t rows, uint32_t width, int flat,
    const float *x)
{
	uint64_t sh[2] = { rows, width };

	return kg_npy_write(path, KG_DT_F4, flat && width == 1 ? 1 : 2, sh, x);
}

static int
get_rows(const char *path, uint64_t rows, uint32_t width, int flat,
    float *x)
{
	struct kg_npy a = KG_NPY_INIT;
	int nd = flat && width == 1 ? 1 : 2, rc = -1;

	if (kg_npy_read_expect(path, KG_DT_F4, nd, &a) < 0)
		return -1;
	if (a.shape[0] != rows || (nd == 2 && a.shape[1] != width))
		kg_error("'%s' does not hold %llu rows of %u floats", path,
		    (unsigned long long)rows, width);
	else {
		memcpy(x, a.data, rows * width * sizeof(float));
		rc = 0;
	}
	kg_npy_release(&a);
	return rc;
}

int
kg_store_save_part(struct kg_store *st, uint32_t p, const char *rows_path,
    const char *state_path)
{
	if (check_part(st, p, "save") < 0)
		return -1;
	if (st->ops->save_part != NULL)
		return st->ops->save_part(st, p, rows_path, state_path);
	return kg_store_save_part_copy(st, p, rows_path, state_path);
}

int
kg_store_flush(struct kg_store *st)
{
	return st->ops->flush != NULL ? st->ops->flush(st) : 0;
}

int
kg_store_save_part_copy(struct kg_store *st, uint32_t p,
    const char *rows_path, const char *state_path)
{
	const struct kg_store_part *a = kg_store_acquire(st, p);
	int rc;

	if (a == NULL)
		return -1;
	rc = put_rows(rows_path, a->rows, st->dim, 0, a->w);
	if (rc == 0 && state_path != NULL)
		rc = put_rows(state_path, a->rows, st->state_width, 1,
		    a->state);
	kg_store_release(st, p, 0);
	return rc;
}

int
kg_store_buf_save(const struct kg_store *st, uint32_t p, const float *buf,
    const char *rows_path, const char *state_path)
{
	uint64_t rows = st->off[p + 1] - st->off[p];

	if (put_rows(rows_path, rows, st->dim, 0, buf) < 0)
		return -1;
	if (state_path == NULL)
		return 0;
	return put_rows(state_path, rows, st->state_width, 1,
	    buf + rows * st->dim);
}

int
kg_store_buf_load(const struct kg_store *st, uint32_t p, float *buf,
    const char *rows_path, const char *state_path)
{
	uint64_t rows = st->off[p + 1] - st->off[p];

	if (get_rows(rows_path, rows, st->dim, 0, buf) < 0)
		return -1;
	if (state_path == NULL)
		return 0;
	return get_rows(state_path, rows, st->state_width, 1,
	    buf + rows * st->dim);
}

int
kg_store_write_part(struct kg_store *st, uint32_t p,
    struct kg_table_writer *w)
{
	const struct kg_store_part *a = kg_store_acquire(st, p);
	int rc;

	if (a == NULL)
		return -1;
	rc = kg_table_writer_put(w, a->base, a->rows, a->w, a->state);
	kg_store_release(st, p, 0);
	return rc;
}

int
kg_store_write(struct kg_store *st, struct kg_table_writer *w)
{
	uint32_t p;
	int rc = kg_store_write_ordered(st, w);

	if (rc <= 0)
		return rc;
	for (p = 0; p < st->n_parts; p++) {
		kg_store_prefetch(st, p + 1 < st->n_parts ? p + 1 : p);
		if (kg_store_write_part(st, p, w) < 0)
			return -1;
	}
	return 0;
}

/* ---- sources: .npy files a partition is read from ---- */

int
kg_store_src_open(struct kg_store_src *s, const char *path, uint64_t rows,
    uint32_t width)
{
	uint64_t shape[KG_NPY_MAXDIM];
	enum kg_dtype dt;
	struct stat sb;
	size_t off;
	int ndim;

	s->path = NULL;
	s->fd = -1;
	if (kg_npy_read_header(path, &dt, &ndim, shape, &off) < 0)
		return -1;
	if (dt != KG_DT_F4 || !((ndim == 2 && shape[0] == rows &&
	    shape[1] == width) || (width == 1 && ndim == 1 &&
	    shape[0] == rows))) {
		kg_error("'%s' is not float32 [%llu, %u]", path,
		    (unsigned long long)rows, width);
		return -1;
	}
	s->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (s->fd < 0 || fstat(s->fd, &sb) != 0) {
		kg_error_errno("cannot read '%s'", path);
		kg_store_src_close(s);
		return -1;
	}
	if ((uint64_t)sb.st_size < off + rows * width * sizeof(float)) {
		kg_error("'%s' is shorter than its header says", path);
		kg_store_src_close(s);
		return -1;
	}
	s->path = kg_xstrdup(path);
	s->data_off = off;
	return 0;
}

int
kg_store_src_read(struct kg_store_src *s, uint64_t first, uint64_t n,
    uint32_t width, float *dst)
{
	size_t row = (size_t)width * sizeof(float);

	if (kg_pread_full(s->fd, dst, n * row, (int64_t)(s->data_off +
	    first * row)) < 0) {
		kg_error_errno("cannot read '%s'", s->path);
		return -1;
	}
	return 0;
}

void
kg_store_src_close(struct kg_store_src *s)
{
	if (s->fd >= 0)
		close(s->fd);
	free(s->path);
	s->fd = -1;
	s->path = NULL;
}
