#include "dist/dist.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "core/util.h"
#include "io/fatal.h"

/* Elements per collective call and bytes per message piece: MPI counts
 * are int. */
#define COLL_PIECE ((size_t)1 << 26)
#define MSG_PIECE ((size_t)1 << 30)

int
kg_dist_launched(void)
{
	static const char *const vars[] = { "OMPI_COMM_WORLD_SIZE",
	    "PMIX_RANK", "PMI_RANK" };
	size_t i;

	for (i = 0; i < KG_ARRAY_LEN(vars); i++)
		if (getenv(vars[i]) != NULL)
			return 1;
	return 0;
}

int
kg_dist_launched_size(void)
{
	static const char *const vars[] = { "OMPI_COMM_WORLD_SIZE",
	    "PMI_SIZE" };
	const char *v;
	size_t i;
	long n;

	for (i = 0; i < KG_ARRAY_LEN(vars); i++)
		if ((v = getenv(vars[i])) != NULL && (n = atol(v)) > 0)
			return n < INT_MAX ? (int)n : INT_MAX;
	return 1;
}

int
kg_dist_init(struct kg_dist *d, int *argc, char ***argv)
{
	int provided;

	*d = (struct kg_dist)KG_DIST_INIT;
	if (!kg_dist_launched())
		return 0;
	if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) !=
	    MPI_SUCCESS) {
		kg_error("cannot initialise MPI");
		return -1;
	}
	d->mpi = 1;
	MPI_Comm_rank(MPI_COMM_WORLD, &d->rank);
	MPI_Comm_size(MPI_COMM_WORLD, &d->size);
	return 0;
}

void
kg_dist_finalize(struct kg_dist *d)
{
	if (d->mpi)
		MPI_Finalize();
	free(d->buf[0].p);
	free(d->buf[1].p);
	*d = (struct kg_dist)KG_DIST_INIT;
}

/* Buffer k of d with at least bytes bytes: grown by half again when too
 * small, never shrunk; its old contents are not kept. */
static void *
dist_buf(struct kg_dist *d, int k, size_t bytes)
{
	struct kg_dist_buf *b = &d->buf[k];

	if (bytes > b->cap) {
		size_t cap = b->cap + b->cap / 2;

		free(b->p);
		b->cap = cap > bytes ? cap : bytes;
		b->p = kg_xmalloc(b->cap);
	}
	return b->p;
}

/* Carve n bytes at *off from base, 16-byte aligned; *off moves on. */
static void *
carve(void *base, size_t *off, size_t n)
{
	void *p = (char *)base + *off;

	*off += (n + 15) & ~(size_t)15;
	return p;
}

/* The bytes carve() takes for pieces of the given sizes. */
static size_t
carved(const size_t *n, size_t k)
{
	size_t i, sum = 0;

	for (i = 0; i < k; i++)
		sum += (n[i] + 15) & ~(size_t)15;
	return sum;
}

void
kg_dist_abort(const struct kg_dist *d, int code)
{
	if (d->mpi && d->size > 1) {
		fflush(stdout);
		fflush(stderr);
		MPI_Abort(MPI_COMM_WORLD, code);
	}
}

void
kg_dist_note_epoch(const struct kg_dist *d, uint32_t epoch, const char *ckpt,
    uint32_t ckpt_epoch)
{
	char host[256], *line, *where;

	if (!d->mpi || d->size < 2 || d->rank != 0)
		return;
	if (epoch == 0) {
		kg_fatal_set_note(NULL);
		return;
	}
	if (gethostname(host, sizeof(host)) != 0)
		snprintf(host, sizeof(host), "unknown");
	host[sizeof(host) - 1] = '\0';
	where = ckpt != NULL ? kg_xasprintf("the last checkpoint is '%s', "
	    "after epoch %u", ckpt, ckpt_epoch) :
	    kg_xstrdup("no checkpoint was written");
	line = kg_xasprintf("%s: rank 0 (host %s) of %d ended by a signal "
	    "during epoch %u: Open MPI stops every rank so when a rank or "
	    "its host is lost, and its report names it; %s", kg_progname(),
	    host, d->size, epoch, where);
	kg_fatal_set_note(line);
	free(line);
	free(where);
}

void
kg_dist_test_hook(const struct kg_dist *d, uint64_t when)
{
	const char *r = getenv("KG_TEST_DIE_RANK"), *at;
	uint64_t rank, at_n = 1;

	if (r == NULL || d->size < 2)
		return;
	kg_error_mute(1);
	if (kg_parse_u64("KG_TEST_DIE_RANK", r, 0, UINT64_MAX, &rank) < 0) {
		kg_error_mute(0);
		return;
	}
	at = getenv("KG_TEST_DIE_AT");
	if (at != NULL && kg_parse_u64("KG_TEST_DIE_AT", at, 0, UINT64_MAX,
	    &at_n) < 0)
		at_n = 1;
	kg_error_mute(0);
	if (rank != (uint64_t)d->rank || when != at_n)
		return;
	fprintf(stderr, "%s: rank %d: dying on purpose (KG_TEST_DIE_RANK)\n",
	    kg_progname(), d->rank);
	fflush(stderr);
	_exit(1);
}

void
kg_dist_barrier(struct kg_dist *d)
{
	double t0;

	if (!d->mpi || d->size == 1)
		return;
	t0 = kg_now();
	MPI_Barrier(MPI_COMM_WORLD);
	d->comm_seconds += kg_now() - t0;
}

/* In-place allreduce in pieces; counts traffic as the payload handed in
 * and received back. */
static void
allreduce(struct kg_dist *d, void *x, size_t n, size_t esize,
    MPI_Datatype type, MPI_Op op)
{
	char *p = x;
	double t0;
	size_t k;

	if (!d->mpi || d->size == 1 || n == 0)
		return;
	t0 = kg_now();
	for (k = 0; k < n; k += COLL_PIECE) {
		size_t m = n - k < COLL_PIECE ? n - k : COLL_PIECE;

		MPI_Allreduce(MPI_IN_PLACE, p + k * esize, (int)m, type, op,
		    MPI_COMM_WORLD);
	}
	d->bytes_sent += n * esize;
	d->bytes_received += n * esize;
	d->comm_seconds += kg_now() - t0;
}

void
kg_dist_sum_u64(struct kg_dist *d, uint64_t *x, size_t n)
{
	allreduce(d, x, n, sizeof(*x), MPI_UINT64_T, MPI_SUM);
}

void
kg_dist_max_u64(struct kg_dist *d, uint64_t *x, size_t n)
{
	allreduce(d, x, n, sizeof(*x), MPI_UINT64_T, MPI_MAX);
}

void
kg_dist_sum_f64(struct kg_dist *d, double *x, size_t n)
{
	allreduce(d, x, n, sizeof(*x), MPI_DOUBLE, MPI_SUM);
}

void
kg_dist_comm_table(struct kg_dist *d, double *out)
{
	int n = d->size, r = d->rank;

	memset(out, 0, 3 * (size_t)n * sizeof(*out));
	out[r] = (double)d->bytes_sent;
	out[n + r] = (double)d->bytes_received;
	out[2 * n + r] = d->comm_seconds;
	kg_dist_sum_f64(d, out, 3 * (size_t)n);
}

json_t *
kg_dist_comm_json(struct kg_dist *d)
{
	static const char *const key[3] = { "bytes_sent_per_rank",
	    "bytes_received_per_rank", "comm_seconds_per_rank" };
	double *t = kg_xmallocarray(3 * (size_t)d->size, sizeof(*t));
	json_t *o = json_object();
	int k, r;

	kg_dist_comm_table(d, t);
	for (k = 0; k < 3; k++) {
		json_t *a = json_array();

		for (r = 0; r < d->size; r++)
			json_array_append_new(a, k < 2 ? json_integer(
			    (json_int_t)t[k * d->size + r]) :
			    json_real(t[k * d->size + r]));
		json_object_set_new(o, key[k], a);
	}
	free(t);
	return o;
}

void
kg_dist_sum_f32(struct kg_dist *d, float *x, size_t n)
{
	allreduce(d, x, n, sizeof(*x), MPI_FLOAT, MPI_SUM);
}

void
kg_dist_allgather(struct kg_dist *d, const void *mine, size_t bytes,
    void *all)
{
	double t0;

	if (!d->mpi || d->size == 1) {
		if (bytes > 0)
			memcpy(all, mine, bytes);
		return;
	}
	if (bytes > INT_MAX) {
		fprintf(stderr, "%s: an allgather of %zu bytes per rank is "
		    "too large\n", kg_progname(), bytes);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	t0 = kg_now();
	MPI_Allgather(mine, (int)bytes, MPI_BYTE, all, (int)bytes, MPI_BYTE,
	    MPI_COMM_WORLD);
	d->bytes_sent += bytes;
	d->bytes_received += bytes * (size_t)(d->size - 1);
	d->comm_seconds += kg_now() - t0;
}

void
kg_dist_reduce_scatter_f32(struct kg_dist *d, const float *x, size_t n,
    float *out)
{
	double t0;

	if (!d->mpi || d->size == 1) {
		if (n > 0)
			memcpy(out, x, n * sizeof(float));
		return;
	}
	if (n > INT_MAX) {
		fprintf(stderr, "%s: a reduce-scatter of %zu floats per rank "
		    "is too large\n", kg_progname(), n);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	t0 = kg_now();
	MPI_Reduce_scatter_block(x, out, (int)n, MPI_FLOAT, MPI_SUM,
	    MPI_COMM_WORLD);
	d->bytes_sent += n * sizeof(float) * (size_t)d->size;
	d->bytes_received += n * sizeof(float);
	d->comm_seconds += kg_now() - t0;
}

void
kg_dist_average_f32(struct kg_dist *d, float *x, size_t n)
{
	double *y;
	size_t i;

	if (!d->mpi || d->size == 1 || n == 0)
		return;
	y = dist_buf(d, 0, kg_xmul(n, sizeof(*y)));
	for (i = 0; i < n; i++)
		y[i] = x[i];
	kg_dist_sum_f64(d, y, n);
	for (i = 0; i < n; i++)
		x[i] = (float)(y[i] / (double)d->size);
}

void
kg_dist_bcast(struct kg_dist *d, void *buf, size_t bytes, int root)
{
	char *p = buf;
	double t0;
	size_t k;

	if (!d->mpi || d->size == 1 || bytes == 0)
		return;
	t0 = kg_now();
	for (k = 0; k < bytes; k += MSG_PIECE) {
		size_t m = bytes - k < MSG_PIECE ? bytes - k : MSG_PIECE;

		MPI_Bcast(p + k, (int)m, MPI_BYTE, root, MPI_COMM_WORLD);
	}
	if (d->rank == root)
		d->bytes_sent += bytes * (size_t)(d->size - 1);
	else
		d->bytes_received += bytes;
	d->comm_seconds += kg_now() - t0;
}

void
kg_dist_exchange(struct kg_dist *d, struct kg_dist_xfer *x, size_t n)
{
	MPI_Request *req;
	size_t i, j, nreq = 0, cap = 0;
	double t0 = kg_now();

	/* Transfers to this rank itself: match sends to receives by tag. */
	for (i = 0; i < n; i++) {
		if (!x[i].send || x[i].peer != d->rank)
			continue;
		for (j = 0; j < n; j++)
			if (!x[j].send && x[j].peer == d->rank &&
			    x[j].tag == x[i].tag && x[j].bytes == x[i].bytes) {
				memcpy(x[j].buf, x[i].buf, x[i].bytes);
				break;
			}
	}
	for (i = 0; i < n; i++)
		if (x[i].peer != d->rank)
			cap += x[i].bytes / MSG_PIECE + 1;
	if (cap == 0 || !d->mpi)
		return;
	req = kg_xmallocarray(cap, sizeof(*req));
	for (i = 0; i < n; i++) {
		char *p = x[i].buf;
		size_t k = 0;

		if (x[i].peer == d->rank)
			continue;
		do {
			size_t m = x[i].bytes - k < MSG_PIECE ?
			    x[i].bytes - k : MSG_PIECE;

			if (x[i].send)
				MPI_Isend(p + k, (int)m, MPI_BYTE, x[i].peer,
				    x[i].tag, MPI_COMM_WORLD, &req[nreq++]);
			else
				MPI_Irecv(p + k, (int)m, MPI_BYTE, x[i].peer,
				    x[i].tag, MPI_COMM_WORLD, &req[nreq++]);
			k += m;
		} while (k < x[i].bytes);
		if (x[i].send) {
			d->bytes_sent += x[i].bytes;
			d->messages++;
		} else
			d->bytes_received += x[i].bytes;
	}
	MPI_Waitall((int)nreq, req, MPI_STATUSES_IGNORE);
	free(req);
	d->comm_seconds += kg_now() - t0;
}

void
kg_dist_gather_text(struct kg_dist *d, const char *text, int root,
    char **out)
{
	int len = (int)strlen(text), *lens = NULL, *displs = NULL, i, total;
	char *buf = NULL;
	double t0;

	*out = NULL;
	if (!d->mpi || d->size == 1) {
		*out = kg_xstrdup(text);
		return;
	}
	t0 = kg_now();
	if (d->rank == root) {
		lens = kg_xmallocarray((size_t)d->size, sizeof(*lens));
		displs = kg_xmallocarray((size_t)d->size, sizeof(*displs));
	}
	MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, root, MPI_COMM_WORLD);
	if (d->rank == root) {
		for (i = 0, total = 0; i < d->size; i++) {
			displs[i] = total;
			total += lens[i];
		}
		buf = kg_xmalloc((size_t)total + 1);
		buf[total] = '\0';
		d->bytes_received += (size_t)total;
	}
	MPI_Gatherv(text, len, MPI_CHAR, buf, lens, displs, MPI_CHAR, root,
	    MPI_COMM_WORLD);
	d->bytes_sent += (size_t)len;
	free(lens);
	free(displs);
	*out = buf;
	d->comm_seconds += kg_now() - t0;
}

void
kg_sparse_rows_release(struct kg_sparse_rows *s)
{
	free(s->ids);
	free(s->g);
	free(s->work);
	*s = (struct kg_sparse_rows)KG_SPARSE_ROWS_INIT;
}

struct idpos {
	uint64_t id;
	size_t pos;	/* global row index: list order, then row order */
};

static int
cmp_idpos(const void *a, const void *b)
{
	const struct idpos *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return (x->pos > y->pos) - (x->pos < y->pos);
}

void
kg_sparse_merge(const uint64_t *ids, const float *g, const size_t *counts,
    size_t nlists, size_t w, struct kg_sparse_rows *out)
{
	size_t total = 0, i, k, l;
	struct idpos *ix;

	for (k = 0; k < nlists; k++)
		total += counts[k];
	if (total > out->cap || out->w != w) {
		free(out->ids);
		free(out->g);
		out->cap = total > 0 ? total : 1;
		out->ids = kg_xmallocarray(out->cap, sizeof(*out->ids));
		out->g = kg_xmallocarray(out->cap * (w > 0 ? w : 1),
		    sizeof(*out->g));
	}
	out->w = w;
	out->n = 0;
	if (total == 0)
		return;
	if (total > out->work_cap) {
		free(out->work);
		out->work_cap = total + total / 2;
		out->work = kg_xmallocarray(out->work_cap, sizeof(*ix));
	}
	ix = out->work;
	for (i = 0; i < total; i++) {
		ix[i].id = ids[i];
		ix[i].pos = i;
	}
	/* Sorting by (id, position) sums each ID's rows in rank order. */
	qsort(ix, total, sizeof(*ix), cmp_idpos);
	for (i = 0; i < total; i++) {
		const float *src = g + ix[i].pos * w;
		float *dst;

		if (out->n > 0 && out->ids[out->n - 1] == ix[i].id) {
			dst = out->g + (out->n - 1) * w;
			for (l = 0; l < w; l++)
				dst[l] += src[l];
			continue;
		}
		out->ids[out->n] = ix[i].id;
		memcpy(out->g + out->n * w, src, w * sizeof(float));
		out->n++;
	}
}

/* Room for total IDs and total rows of w floats, in buffer 1. */
static void
packed(struct kg_dist *d, size_t total, size_t w, uint64_t **ids,
    float **g)
{
	size_t piece[2] = { kg_xmul(total + 1, sizeof(uint64_t)),
	    kg_xmul(kg_xmul(total + 1, w > 0 ? w : 1), sizeof(float)) };
	size_t off = 0;
	char *base = dist_buf(d, 1, carved(piece, 2));

	*ids = carve(base, &off, piece[0]);
	*g = carve(base, &off, piece[1]);
}

/* The one-collective form: fixed slots of 8 + max_n * (8 + 4w) bytes. */
static void
sparse_sum_slots(struct kg_dist *d, const uint64_t *ids, const float *g,
    size_t n, size_t w, size_t max_n, struct kg_sparse_rows *out)
{
	size_t slot = sizeof(uint64_t) + max_n * (sizeof(uint64_t) +
	    w * sizeof(float)), size = (size_t)d->size, k, total = 0, off = 0;
	size_t piece[3] = { slot, kg_xmul(size, slot),
	    size * sizeof(size_t) };
	char *mine, *all, *base;
	uint64_t *all_ids, nn = n;
	size_t *counts;
	float *all_g;
	double t0 = kg_now();

	if (n > max_n || slot * size > INT_MAX) {
		fprintf(stderr, "%s: %zu sparse rows exceed their slots of "
		    "%zu\n", kg_progname(), n, max_n);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	base = dist_buf(d, 0, carved(piece, 3));
	mine = carve(base, &off, piece[0]);
	all = carve(base, &off, piece[1]);
	counts = carve(base, &off, piece[2]);
	memcpy(mine, &nn, sizeof(nn));
	memcpy(mine + sizeof(nn), ids, n * sizeof(uint64_t));
	memcpy(mine + sizeof(nn) + max_n * sizeof(uint64_t), g,
	    n * w * sizeof(float));
	MPI_Allgather(mine, (int)slot, MPI_BYTE, all, (int)slot, MPI_BYTE,
	    MPI_COMM_WORLD);
	d->bytes_sent += slot;
	d->bytes_received += slot * (size - 1);
	d->comm_seconds += kg_now() - t0;
	for (k = 0; k < size; k++) {
		memcpy(&nn, all + k * slot, sizeof(nn));
		counts[k] = (size_t)nn;
		total += counts[k];
	}
	/* Pack the lists one after another, as kg_sparse_merge wants. */
	packed(d, total, w, &all_ids, &all_g);
	for (k = 0, total = 0; k < size; k++) {
		const char *s = all + k * slot + sizeof(nn);

		memcpy(all_ids + total, s, counts[k] * sizeof(uint64_t));
		memcpy(all_g + total * w, s + max_n * sizeof(uint64_t),
		    counts[k] * w * sizeof(float));
		total += counts[k];
	}
	kg_sparse_merge(all_ids, all_g, counts, size, w, out);
}

void
kg_dist_sparse_sum(struct kg_dist *d, const uint64_t *ids, const float *g,
    size_t n, size_t w, size_t max_n, struct kg_sparse_rows *out)
{
	uint64_t *cnt, *all_ids;
	size_t *counts, total = 0, k, off = 0, sz = (size_t)d->size;
	size_t piece[6] = { sz * sizeof(uint64_t), sz * sizeof(size_t),
	    sz * sizeof(int), sz * sizeof(int), sz * sizeof(int),
	    sz * sizeof(int) };
	int *rc, *rd, *gc, *gd, size = d->size;
	float *all_g;
	char *base;
	double t0;

	if (!d->mpi || size == 1) {
		kg_sparse_merge(ids, g, &n, 1, w, out);
		return;
	}
	if (max_n > 0) {
		sparse_sum_slots(d, ids, g, n, w, max_n, out);
		return;
	}
	t0 = kg_now();
	base = dist_buf(d, 0, carved(piece, 6));
	cnt = carve(base, &off, piece[0]);
	counts = carve(base, &off, piece[1]);
	rc = carve(base, &off, piece[2]);
	rd = carve(base, &off, piece[3]);
	gc = carve(base, &off, piece[4]);
	gd = carve(base, &off, piece[5]);
	{
		uint64_t mine = n;

		MPI_Allgather(&mine, 1, MPI_UINT64_T, cnt, 1, MPI_UINT64_T,
		    MPI_COMM_WORLD);
	}
	for (k = 0; k < (size_t)size; k++) {
		counts[k] = (size_t)cnt[k];
		if (total + counts[k] > INT_MAX / (w > 0 ? w : 1)) {
			fprintf(stderr, "%s: sparse gradient exchange too "
			    "large for one message\n", kg_progname());
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
		rc[k] = (int)counts[k];
		rd[k] = (int)total;
		gc[k] = (int)(counts[k] * w);
		gd[k] = (int)(total * w);
		total += counts[k];
	}
	packed(d, total, w, &all_ids, &all_g);
	MPI_Allgatherv(ids, (int)n, MPI_UINT64_T, all_ids, rc, rd,
	    MPI_UINT64_T, MPI_COMM_WORLD);
	MPI_Allgatherv(g, (int)(n * w), MPI_FLOAT, all_g, gc, gd, MPI_FLOAT,
	    MPI_COMM_WORLD);
	d->bytes_sent += n * (sizeof(uint64_t) + w * sizeof(float)) +
	    sizeof(uint64_t);
	d->bytes_received += (total - n) * (sizeof(uint64_t) +
	    w * sizeof(float));
	d->comm_seconds += kg_now() - t0;
	kg_sparse_merge(all_ids, all_g, counts, (size_t)size, w, out);
}

/* ---- the bucket schedule ---- */

void
kg_dist_sched_release(struct kg_dist_sched *s)
{
	free(s->hold);
	free(s->off);
	free(s->buckets);
	*s = (struct kg_dist_sched)KG_DIST_SCHED_INIT;
}

void
kg_dist_sched_relabel(struct kg_dist_sched *s,
    const struct kg_dist_sched *base, const uint32_t *perm)
{
	size_t nk = (size_t)base->nrounds * base->nranks, nb = base->off[nk], i;
	uint32_t P = base->nparts;

	if (s->hold == NULL) {
		s->hold = kg_xmallocarray(2 * nk + 1, sizeof(*s->hold));
		s->off = kg_xmallocarray(nk + 1, sizeof(*s->off));
		s->buckets = kg_xmallocarray(nb + 1, sizeof(*s->buckets));
	}
	s->nparts = P;
	s->nranks = base->nranks;
	s->nrounds = base->nrounds;
	memcpy(s->off, base->off, (nk + 1) * sizeof(*s->off));
	for (i = 0; i < 2 * nk; i++)
		s->hold[i] = base->hold[i] < 0 || perm == NULL ?
		    base->hold[i] : (int32_t)perm[base->hold[i]];
	for (i = 0; i < nb; i++)
		s->buckets[i] = perm == NULL ? base->buckets[i] :
		    perm[base->buckets[i] / P] * P + perm[base->buckets[i] % P];
}

/* Pairs of circle round c over m (even) slots, dummy slot "dummy" (or
 * UINT32_MAX) left out; returns the count, each pair a < b. */
static uint32_t
circle_round(uint32_t m, uint32_t c, uint32_t dummy, uint32_t *pairs)
{
	uint32_t i, np = 0, a, b, t;

	for (i = 0; i < m / 2; i++) {
		if (i == 0) {
			a = m - 1;
			b = c;
		} else {
			a = (c + i) % (m - 1);
			b = (c + (m - 1) - i) % (m - 1);
		}
		if (a == dummy || b == dummy)
			continue;
		if (a > b) {
			t = a;
			a = b;
			b = t;
		}
		pairs[2 * np] = a;
		pairs[2 * np + 1] = b;
		np++;
	}
	return np;
}

static uint32_t
overlap(const int32_t *prev, uint32_t a, uint32_t b)
{
	return (uint32_t)(prev[0] == (int32_t)a || prev[1] == (int32_t)a) +
	    (uint32_t)(prev[0] == (int32_t)b || prev[1] == (int32_t)b);
}

/* What building the schedule keeps between circle rounds. */
struct sched_build {
	struct kg_dist_sched *s;
	uint32_t *pairs, *taken;
	uint8_t *seen;		/* diagonal bucket of a partition scheduled */
	int32_t *prev;		/* [2R]: what each rank held last */
	uint32_t round;		/* schedule rounds made */
	size_t nb;		/* buckets scheduled */
};

/*
 * Give rank k the untaken pair among pairs [first, last) that overlaps
 * most with what it held (the first such on ties), and schedule its
 * buckets: the diagonals not yet trained, then (a, b) and (b, a).
 */
static void
assign_rank(struct sched_build *b, uint32_t k, uint32_t first,
    uint32_t last)
{
	struct kg_dist_sched *s = b->s;
	uint32_t P = s->nparts, R = s->nranks, best = UINT32_MAX, bo = 0;
	uint32_t i, x, y;
	int32_t *h = s->hold + 2 * ((size_t)b->round * R + k);

	for (i = first; i < last; i++) {
		uint32_t o;

		if (b->taken[i])
			continue;
		o = overlap(b->prev + 2 * k, b->pairs[2 * i],
		    b->pairs[2 * i + 1]);
		if (best == UINT32_MAX || o > bo) {
			best = i;
			bo = o;
		}
	}
	s->off[(size_t)b->round * R + k] = b->nb;
	if (best == UINT32_MAX)
		return;
	b->taken[best] = 1;
	x = b->pairs[2 * best];
	y = b->pairs[2 * best + 1];
	h[0] = (int32_t)x;
	h[1] = (int32_t)y;
	if (!b->seen[x])
		s->buckets[b->nb++] = x * P + x;
	if (!b->seen[y])
		s->buckets[b->nb++] = y * P + y;
	b->seen[x] = b->seen[y] = 1;
	s->buckets[b->nb++] = x * P + y;
	s->buckets[b->nb++] = y * P + x;
	b->prev[2 * k] = h[0];
	b->prev[2 * k + 1] = h[1];
}

/* The schedule of one partition: one round, bucket (0, 0). */
static void
sched_single(struct kg_dist_sched *s)
{
	s->nrounds = 1;
	s->hold = kg_xmallocarray(2, sizeof(*s->hold));
	s->hold[0] = 0;
	s->hold[1] = -1;
	s->off = kg_xcalloc(2, sizeof(*s->off));
	s->off[1] = 1;
	s->buckets = kg_xcalloc(1, sizeof(*s->buckets));
}

int
kg_dist_sched_build(struct kg_dist_sched *s, uint32_t P, uint32_t R)
{
	uint32_t m, dummy, c, np, first, k, i, nrounds;
	struct sched_build b;

	*s = (struct kg_dist_sched)KG_DIST_SCHED_INIT;
	if (P == 0 || R == 0) {
		kg_error("cannot schedule %u partitions on %u ranks", P, R);
		return -1;
	}
	if (R > 1 && P < 2 * R) {
		kg_error("%u partitions cannot keep %u ranks busy: run "
		    "kg-partition with at least %u partitions (2 per rank) or "
		    "start at most %u ranks", P, R, 2 * R, P / 2 ? P / 2 : 1);
		return -1;
	}
	s->nparts = P;
	s->nranks = R;
	if (P == 1) {
		sched_single(s);
		return 0;
	}
	m = P % 2 == 0 ? P : P + 1;
	dummy = P % 2 == 0 ? UINT32_MAX : P;
	np = m / 2;
	nrounds = (m - 1) * ((np + R - 1) / R);
	s->nrounds = nrounds;
	s->hold = kg_xmallocarray((size_t)nrounds * R * 2, sizeof(*s->hold));
	for (i = 0; i < nrounds * R * 2; i++)
		s->hold[i] = -1;
	s->off = kg_xcalloc((size_t)nrounds * R + 1, sizeof(*s->off));
	s->buckets = kg_xmallocarray((size_t)P * P, sizeof(*s->buckets));
	memset(&b, 0, sizeof(b));
	b.s = s;
	b.pairs = kg_xmallocarray(2 * (size_t)np, sizeof(*b.pairs));
	b.taken = kg_xcalloc(np, sizeof(*b.taken));
	b.seen = kg_xcalloc(P, 1);
	b.prev = kg_xmallocarray(2 * (size_t)R, sizeof(*b.prev));
	for (i = 0; i < 2 * R; i++)
		b.prev[i] = -1;
	for (c = 0; c < m - 1; c++) {
		uint32_t n = circle_round(m, c, dummy, b.pairs);

		for (first = 0; first < np; first += R) {
			uint32_t last = first + R < n ? first + R : n;

			memset(b.taken, 0, np * sizeof(*b.taken));
			for (k = 0; k < R; k++)
				assign_rank(&b, k, first, last);
			b.round++;
			if (first + R >= n)
				break;
		}
	}
	/* Fill the offsets of trailing (round, rank) slots and the end. */
	for (i = 0; i <= nrounds * R; i++)
		if (i >= b.round * R)
			s->off[i] = b.nb;
	s->nrounds = b.round;
	free(b.pairs);
	free(b.taken);
	free(b.seen);
	free(b.prev);
	return 0;
}
