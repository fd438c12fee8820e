/*
 * store_write: a store streamed into a table writer in the table's
 * original order (kg_store_write), for stores whose partitions live on
 * disk.
 *
 * Writing partition by partition puts each row of a randomly relabelled
 * table at a scattered position: one pwrite per row, and, for a table
 * larger than memory, pages of the output written and read back as many
 * times as there are partitions.  kg-partition numbers each partition's
 * entities in increasing original ID, so the rows a window of the output
 * needs from one partition are one contiguous run of it: the output is
 * written window by window, sequentially, each window gathered with one
 * read per partition, and the table is read once.
 */
#include "store/store_impl.h"

#include <stdlib.h>
#include <string.h>

/* Output windows of about this many bytes (rows and state). */
#define WINDOW_BYTES ((size_t)64 << 20)

/* 1 when order rises inside every partition. */
static int
rises_per_part(const struct kg_store *st, const int32_t *order)
{
	uint32_t p;
	uint64_t i;

	for (p = 0; p < st->n_parts; p++)
		for (i = st->off[p] + 1; i < st->off[p + 1]; i++)
			if (order[i] <= order[i - 1])
				return 0;
	return 1;
}

/* Gather the rows of the output window [o0, o1) that partition p holds
 * (from *cur on) into win; 0 or -1. */
static int
gather(struct kg_store *st, uint32_t p, const int32_t *order,
    uint64_t *cur, uint64_t o0, uint64_t o1, float *tmp, float *win)
{
	size_t d = st->dim, sw = st->state_width, W = (size_t)(o1 - o0);
	uint64_t c = *cur, e = c, i;
	float *ts, *ws = win + W * d;

	while (e < st->off[p + 1] && (uint64_t)order[e] < o1)
		e++;
	if (e == c)
		return 0;
	ts = tmp + (size_t)(e - c) * d;
	if (st->ops->read(st, p, c, e - c, tmp, ts) < 0)
		return -1;
	for (i = c; i < e; i++) {
		uint64_t at = (uint64_t)order[i] - o0;

		memcpy(win + at * d, tmp + (i - c) * d, d * sizeof(float));
		if (sw > 0)
			memcpy(ws + at * sw, ts + (i - c) * sw, sw *
			    sizeof(float));
	}
	*cur = e;
	return 0;
}

/* 0 written, -1 failed, 1 not possible here (the caller goes by
 * partition). */
int
kg_store_write_ordered(struct kg_store *st, struct kg_table_writer *w)
{
	size_t d = st->dim, sw = st->state_width, W;
	uint64_t o0, *cur;
	float *win, *tmp;
	uint32_t p;
	int rc = 0;

	if (w->order == NULL || st->ops->read == NULL ||
	    !rises_per_part(st, w->order))
		return 1;
	W = WINDOW_BYTES / ((d + sw) * sizeof(float));
	if (W == 0)
		W = 1;
	if (W > st->n_rows)
		W = (size_t)st->n_rows;
	win = kg_xmallocarray(W, (d + sw) * sizeof(float));
	tmp = kg_xmallocarray(W, (d + sw) * sizeof(float));
	cur = kg_xmallocarray(st->n_parts, sizeof(*cur));
	for (p = 0; p < st->n_parts; p++)
		cur[p] = st->off[p];
	for (o0 = 0; o0 < st->n_rows && rc == 0; o0 += W) {
		uint64_t o1 = o0 + W < st->n_rows ? o0 + W : st->n_rows;

		for (p = 0; p < st->n_parts && rc == 0; p++)
			rc = gather(st, p, w->order, &cur[p], o0, o1, tmp, win);
		if (rc == 0)
			rc = kg_table_writer_put_at(w, o0, o1 - o0, win,
			    sw > 0 ? win + (o1 - o0) * d : NULL);
	}
	free(win);
	free(tmp);
	free(cur);
	return rc;
}
