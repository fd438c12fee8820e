/*
 * store_mem: the partition table behind kg_store_open_mem and
 * kg_store_open_park.  Both keep a resident partition in one buffer and
 * draw, read or adopt it on demand; they differ in what happens to a
 * partition nobody pins: the memory store keeps it, the parking store
 * moves it to its parking file (lib/store/store_park.h) when room is
 * wanted for another buffer, and reads it back from there.
 */
#include "store/store_impl.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "store/store_park.h"

/* Where a partition's rows are while it is not resident. */
enum { H_FRESH, H_PARKED, H_SOURCE, H_ABSENT };

struct tab_part {
	struct kg_store_part pub;	/* w and state set while resident */
	float *buf;			/* NULL: not resident */
	uint32_t pins;
	uint8_t home;			/* H_*, while not resident */
	uint8_t dirty;			/* buf differs from the parked copy */
	uint8_t parked;			/* the parking file holds a copy */
	struct kg_store_src src[2];	/* H_SOURCE: rows, state */
};

struct tab {
	struct kg_store st;		/* first */
	struct tab_part *parts;
	int parking;
	struct kg_park pk;
};

static const char *const home_name[] = { "fresh", "parked", "in a file",
    "absent (taken)" };

static void
close_sources(struct tab_part *q)
{
	kg_store_src_close(&q->src[0]);
	kg_store_src_close(&q->src[1]);
}

/* Make buf partition p's resident buffer, or (NULL) leave it not
 * resident. */
static void
make_resident(struct tab *t, uint32_t p, float *buf)
{
	struct tab_part *q = &t->parts[p];

	q->buf = buf;
	q->pub.w = buf;
	q->pub.state = buf != NULL && t->st.state_width ? buf + q->pub.rows *
	    t->st.dim : NULL;
}

/* Zero n floats at buf without touching the whole pages inside them
 * (given back to the kernel, they read as zeros and cost nothing until
 * written). */
static void
zero_untouched(float *buf, size_t n)
{
	uintptr_t a = (uintptr_t)buf, e = a + n * sizeof(float);
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = (a + pg - 1) / pg * pg, hi = e / pg * pg;

	if (pg == 0 || hi <= lo) {
		memset(buf, 0, n * sizeof(float));
		return;
	}
	memset(buf, 0, lo - a);
	memset((void *)hi, 0, e - hi);
	if (madvise((void *)lo, hi - lo, MADV_DONTNEED) != 0)
		memset((void *)lo, 0, hi - lo);
}

/* Fill buf with partition p's rows and state from wherever they are. */
static int
load(struct tab *t, uint32_t p, float *buf)
{
	struct tab_part *q = &t->parts[p];
	uint64_t rows = q->pub.rows, nw = rows * t->st.dim;
	int rc = 0;

	switch (q->home) {
	case H_FRESH:
		if (t->st.init.kind == KG_INIT_ZERO) {
			zero_untouched(buf, kg_store_part_floats(&t->st, p));
			break;
		}
		kg_store_init_rows(&t->st, p, 0, rows, buf);
		memset(buf + nw, 0, rows * t->st.state_width * sizeof(float));
		break;
	case H_PARKED:
		rc = kg_park_read(&t->pk, &t->st, p, 0,
		    kg_store_part_floats(&t->st, p), buf);
		break;
	case H_SOURCE:
		rc = kg_store_src_read(&q->src[0], 0, rows, t->st.dim, buf) < 0 ||
		    (t->st.state_width > 0 && kg_store_src_read(&q->src[1], 0,
		    rows, t->st.state_width, buf + nw) < 0) ? -1 : 0;
		if (rc == 0)
			t->st.stats.bytes_read += kg_store_part_floats(&t->st,
			    p) * sizeof(float);
		break;
	default:
		kg_error("partition %u is not in this store (it was taken)",
		    p);
		rc = -1;
	}
	return rc;
}

/* Park partition p (unpinned, resident) and free its buffer. */
static int
evict(struct tab *t, uint32_t p)
{
	struct tab_part *q = &t->parts[p];

	if ((!q->parked || q->dirty) && kg_park_write(&t->pk, &t->st, p,
	    q->buf) < 0)
		return -1;
	kg_store_buf_del(&t->st, p, q->buf);
	make_resident(t, p, NULL);
	q->parked = 1;
	q->dirty = 0;
	q->home = H_PARKED;
	t->st.stats.evictions++;
	return 0;
}

/* Parking keeps no unpinned partition in memory once room is wanted. */
static int
tab_reserve(struct kg_store *st, size_t bytes)
{
	struct tab *t = (struct tab *)st;
	uint32_t p;

	(void)bytes;
	if (!t->parking)
		return 0;
	for (p = 0; p < st->n_parts; p++)
		if (t->parts[p].buf != NULL && t->parts[p].pins == 0 &&
		    evict(t, p) < 0)
			return -1;
	return 0;
}

/* Make partition p resident (unpinned); 0 or -1. */
static int
materialise(struct tab *t, uint32_t p)
{
	struct tab_part *q = &t->parts[p];
	float *buf;

	if (q->buf != NULL)
		return 0;
	if (q->home == H_ABSENT) {
		kg_error("partition %u is not in this store (it was taken)",
		    p);
		return -1;
	}
	if (tab_reserve(&t->st, kg_store_part_floats(&t->st, p) *
	    sizeof(float)) < 0)
		return -1;
	buf = kg_store_buf_new(&t->st, p);
	if (load(t, p, buf) < 0) {
		kg_store_buf_del(&t->st, p, buf);
		return -1;
	}
	if (q->home == H_SOURCE)
		close_sources(q);
	make_resident(t, p, buf);
	return 0;
}

static const struct kg_store_part *
tab_acquire(struct kg_store *st, uint32_t p)
{
	struct tab *t = (struct tab *)st;

	if (materialise(t, p) < 0)
		return NULL;
	t->parts[p].pins++;
	return &t->parts[p].pub;
}

static void
tab_release(struct kg_store *st, uint32_t p, int dirty)
{
	struct tab_part *q = &((struct tab *)st)->parts[p];

	if (q->pins > 0)
		q->pins--;
	if (dirty)
		q->dirty = 1;
}

static float *
tab_take(struct kg_store *st, uint32_t p)
{
	struct tab *t = (struct tab *)st;
	struct tab_part *q = &t->parts[p];
	float *buf;

	if (q->pins > 0) {
		kg_error("take: partition %u is in use", p);
		return NULL;
	}
	if (materialise(t, p) < 0)
		return NULL;
	buf = q->buf;
	make_resident(t, p, NULL);
	if (q->parked)
		kg_park_drop(&t->pk, st, p);
	q->parked = 0;
	q->dirty = 0;
	q->home = H_ABSENT;
	return buf;
}

static int
tab_put(struct kg_store *st, uint32_t p, float *buf)
{
	struct tab *t = (struct tab *)st;
	struct tab_part *q = &t->parts[p];

	if (q->buf != NULL) {
		kg_error("put: partition %u is already here", p);
		return -1;
	}
	close_sources(q);
	if (q->parked)
		kg_park_drop(&t->pk, st, p);
	q->parked = 0;
	q->dirty = 1;
	make_resident(t, p, buf);
	return 0;
}

static int
tab_set_source(struct kg_store *st, uint32_t p, const char *rows,
    const char *state)
{
	struct tab *t = (struct tab *)st;
	struct tab_part *q = &t->parts[p];

	if (q->pins > 0) {
		kg_error("'%s': partition %u is in use", rows, p);
		return -1;
	}
	close_sources(q);
	if (kg_store_src_open(&q->src[0], rows, q->pub.rows, st->dim) < 0 ||
	    (st->state_width > 0 && kg_store_src_open(&q->src[1], state,
	    q->pub.rows, st->state_width) < 0)) {
		close_sources(q);
		return -1;
	}
	kg_store_buf_del(st, p, q->buf);
	make_resident(t, p, NULL);
	if (q->parked)
		kg_park_drop(&t->pk, st, p);
	q->parked = 0;
	q->dirty = 0;
	q->home = H_SOURCE;
	/* The memory store keeps everything: read it now, so that a bad
	 * file is reported here. */
	return t->parking ? 0 : materialise(t, p);
}

static int
tab_resident(const struct kg_store *st, uint32_t p)
{
	return ((const struct tab *)st)->parts[p].buf != NULL;
}

static const float *
tab_view(struct kg_store *st, uint32_t p, uint64_t first, uint64_t n,
    float *scratch)
{
	struct tab *t = (struct tab *)st;
	struct tab_part *q = &t->parts[p];
	uint64_t at = first - q->pub.base;
	int rc = 0;

	if (q->buf != NULL)
		return q->buf + at * st->dim;
	switch (q->home) {
	case H_FRESH:
		kg_store_init_rows(st, p, at, n, scratch);
		break;
	case H_PARKED:
		rc = kg_park_read(&t->pk, st, p, at * st->dim, n * st->dim,
		    scratch);
		break;
	case H_SOURCE:
		rc = kg_store_src_read(&q->src[0], at, n, st->dim, scratch);
		break;
	default:
		kg_error("rows of partition %u: %s", p, home_name[q->home]);
		rc = -1;
	}
	return rc < 0 ? NULL : scratch;
}

static void
tab_free(struct kg_store *st)
{
	struct tab *t = (struct tab *)st;
	uint32_t p;

	for (p = 0; p < st->n_parts; p++) {
		kg_store_buf_del(st, p, t->parts[p].buf);
		close_sources(&t->parts[p]);
	}
	if (t->parking)
		kg_park_close(&t->pk);
	free(t->parts);
	kg_store_base_release(st);
	free(t);
}

static const struct kg_store_ops tab_ops = {
	.acquire = tab_acquire, .release = tab_release, .take = tab_take,
	.put = tab_put, .reserve = tab_reserve, .set_source = tab_set_source,
	.resident = tab_resident, .part_view = tab_view, .free = tab_free
};

static struct kg_store *
tab_open(const struct kg_store_layout *l, const struct kg_store_init *init,
    int parking, const char *tmpdir)
{
	struct tab *t = kg_xcalloc(1, sizeof(*t));
	uint32_t p;

	t->pk.fd = -1;
	if (kg_store_base_init(&t->st, &tab_ops, l, init) < 0) {
		free(t);
		return NULL;
	}
	t->parts = kg_xcalloc(l->n_parts, sizeof(*t->parts));
	for (p = 0; p < l->n_parts; p++) {
		struct tab_part *q = &t->parts[p];

		q->pub.base = t->st.off[p];
		q->pub.rows = t->st.off[p + 1] - t->st.off[p];
		q->home = H_FRESH;
		q->src[0].fd = q->src[1].fd = -1;
	}
	t->parking = parking;
	if (parking && kg_park_open(&t->pk, tmpdir) < 0) {
		tab_free(&t->st);
		return NULL;
	}
	return &t->st;
}

struct kg_store *
kg_store_open_mem(const struct kg_store_layout *l,
    const struct kg_store_init *init)
{
	return tab_open(l, init, 0, NULL);
}

struct kg_store *
kg_store_open_park(const struct kg_store_layout *l,
    const struct kg_store_init *init, const char *tmpdir)
{
	return tab_open(l, init, 1, tmpdir);
}
