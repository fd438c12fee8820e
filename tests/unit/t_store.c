/*
 * The embedding store (lib/store/store.h) and the table writer
 * (lib/io/table_writer.h): fresh rows as the trainers always drew them,
 * round trips through every implementation, take and put, views across
 * partitions, parking that gives back the same bytes, checkpoint sources,
 * and a streamed entities.npy equal to the table written whole.
 */
#include <dirent.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "core/util.h"
#include "io/npy.h"
#include "io/table_writer.h"
#include "store/order.h"
#include "store/store.h"
#include "test.h"

#define DIM 5
#define SW 1
#define N 23

/* Three partitions of 7, 9 and 7 rows. */
static const int64_t off3[4] = { 0, 7, 16, N };

static struct kg_store_layout
layout(uint32_t parts)
{
	struct kg_store_layout l = { N, DIM, SW, parts,
	    parts > 1 ? off3 : NULL };

	return l;
}

static struct kg_store_init
rule(enum kg_init_kind kind)
{
	struct kg_store_init in = { kind, 0.25, 42, KG_STREAM_ENTITY_INIT };

	return in;
}

/* Open one of the two writable kinds: 0 memory, 1 parking. */
static struct kg_store *
open_kind(int kind, uint32_t parts, enum kg_init_kind init)
{
	struct kg_store_layout l = layout(parts);
	struct kg_store_init in = rule(init);

	return kind ? kg_store_open_park(&l, &in, t_tmpdir()) :
	    kg_store_open_mem(&l, &in);
}

/* The whole table (rows, then state) through acquire, in a new array. */
static float *
snapshot(struct kg_store *st, float **state)
{
	float *w = kg_xmallocarray(N * DIM, sizeof(float));
	uint32_t p;

	*state = kg_xmallocarray(N * SW, sizeof(float));
	for (p = 0; p < st->n_parts; p++) {
		const struct kg_store_part *a = kg_store_acquire(st, p);

		memcpy(w + a->base * DIM, a->w, a->rows * DIM * sizeof(float));
		memcpy(*state + a->base * SW, a->state, a->rows * SW *
		    sizeof(float));
		kg_store_release(st, p, 0);
	}
	return w;
}

/* Give every row and state value of the store a distinct value. */
static void
fill(struct kg_store *st, float salt)
{
	uint32_t p;
	uint64_t i;

	for (p = 0; p < st->n_parts; p++) {
		const struct kg_store_part *a = kg_store_acquire(st, p);

		for (i = 0; i < a->rows * DIM; i++)
			a->w[i] = salt + (float)(a->base * DIM + i) * 0.5f;
		for (i = 0; i < a->rows * SW; i++)
			a->state[i] = -salt - (float)(a->base + i);
		kg_store_release(st, p, 1);
	}
}

/* Fresh rows are the trainers' draws: partition p from the stream
 * (purpose, p), value by value, and zero state; for one partition or
 * three. */
static void
t_fresh_rows(void)
{
	int k, parts;

	for (k = 0; k < 2; k++)
		for (parts = 1; parts <= 3; parts += 2) {
			enum kg_init_kind kind = k ? KG_INIT_NORMAL :
			    KG_INIT_UNIFORM;
			struct kg_store *st = open_kind(0, (uint32_t)parts,
			    kind);
			float *state, *w = snapshot(st, &state);
			uint32_t p;
			uint64_t i;

			for (p = 0; p < (uint32_t)parts; p++) {
				struct kg_rng rng;
				uint64_t base = parts > 1 ? (uint64_t)off3[p] : 0;
				uint64_t rows = kg_store_part_rows(st, p);

				kg_rng_stream(&rng, 42, KG_STREAM_ENTITY_INIT, p, 0, 0,
				    0);
				for (i = 0; i < rows * DIM; i++) {
					double u = kind == KG_INIT_NORMAL ?
					    0.25 * kg_rng_normal(&rng) : 0.25 *
					    (2.0 * kg_rng_uniform(&rng) - 1.0);

					T_CHECK(w[base * DIM + i] == (float)u);
				}
			}
			for (i = 0; i < N * SW; i++)
				T_CHECK(state[i] == 0.0f);
			free(w);
			free(state);
			kg_store_free(st);
		}
}

/* A view across partitions of a store nobody touched draws exactly the
 * rows that acquiring them later gives, without making them resident. */
static void
t_view_fresh(void)
{
	int kind;

	for (kind = 0; kind < 2; kind++) {
		struct kg_store *st = open_kind(kind, 3, KG_INIT_UNIFORM);
		float scratch[N * DIM], *state, *w;
		const float *v = kg_store_view(st, 3, 17, scratch);

		T_CHECK(v == scratch);
		T_CHECK(!kg_store_resident(st, 0) && !kg_store_resident(st, 1));
		w = snapshot(st, &state);
		T_CHECK(memcmp(v, w + 3 * DIM, 17 * DIM * sizeof(float)) == 0);
		/* Inside one resident partition: a pointer in place. */
		T_CHECK(kg_store_acquire(st, 1) != NULL);
		v = kg_store_view(st, 8, 4, scratch);
		T_CHECK(v != scratch && memcmp(v, w + 8 * DIM, 4 * DIM *
		    sizeof(float)) == 0);
		kg_store_release(st, 1, 0);
		free(w);
		free(state);
		kg_store_free(st);
	}
}

/* Fresh rows viewed a piece at a time, forwards, backwards and
 * alternating between two partitions, are the rows one whole draw
 * gives: a read continues the last one's stream only where that is the
 * same draw. */
static void
t_view_fresh_pieces(void)
{
	int k, kind;

	for (k = 0; k < 2; k++)
		for (kind = 0; kind < 2; kind++) {
			enum kg_init_kind init = k ? KG_INIT_NORMAL :
			    KG_INIT_UNIFORM;
			struct kg_store *ref = open_kind(0, 3, init);
			struct kg_store *st = open_kind(kind, 3, init);
			float scratch[N * DIM], *state, *w = snapshot(ref, &state);
			size_t row = DIM * sizeof(float);
			const float *v;
			int bad = 0;
			uint64_t i;

			for (i = 0; i + 3 <= N; i += 3) {
				v = kg_store_view(st, i, 3, scratch);
				bad += memcmp(v, w + i * DIM, 3 * row) != 0;
			}
			for (i = N; i >= 2; i -= 2) {
				v = kg_store_view(st, i - 2, 2, scratch);
				bad += memcmp(v, w + (i - 2) * DIM, 2 * row) != 0;
			}
			for (i = 0; i < 7; i++) {
				v = kg_store_view(st, i, 1, scratch);
				bad += memcmp(v, w + i * DIM, row) != 0;
				v = kg_store_view(st, 16 + i, 1, scratch);
				bad += memcmp(v, w + (16 + i) * DIM, row) != 0;
			}
			T_CHECKF(bad == 0, "%d pieces differ (init %d, store %d)",
			    bad, k, kind);
			free(w);
			free(state);
			kg_store_free(st);
			kg_store_free(ref);
		}
}

/* Rows written through acquire come back through acquire, view and read
 * for both writable kinds; pins nest. */
static void
t_round_trip(void)
{
	int kind;

	for (kind = 0; kind < 2; kind++) {
		struct kg_store *st = open_kind(kind, 3, KG_INIT_NORMAL);
		const struct kg_store_part *a, *b;
		float *state, *w, row[2 * DIM];

		fill(st, 3.0f);
		w = snapshot(st, &state);
		T_CHECK(w[0] == 3.0f && w[N * DIM - 1] == 3.0f +
		    (float)(N * DIM - 1) * 0.5f && state[N - 1] == -3.0f -
		    (float)(N - 1));
		T_CHECK(kg_store_read(st, 15, 2, row) == 0);
		T_CHECK(memcmp(row, w + 15 * DIM, 2 * DIM * sizeof(float)) ==
		    0);
		a = kg_store_acquire(st, 2);
		b = kg_store_acquire(st, 2);
		T_CHECK(a == b && a->base == 16 && a->rows == 7 &&
		    a->state == a->w + a->rows * DIM);
		kg_store_release(st, 2, 0);
		kg_store_release(st, 2, 0);
		T_CHECK(kg_store_part_of(st, 0) == 0 &&
		    kg_store_part_of(st, 15) == 1 &&
		    kg_store_part_of(st, 16) == 2 &&
		    kg_store_part_of(st, N - 1) == 2);
		kg_error_mute(1);
		T_CHECK(kg_store_view(st, 20, 4, row) == NULL);
		T_CHECK(kg_store_acquire(st, 3) == NULL);
		kg_error_mute(0);
		free(w);
		free(state);
		kg_store_free(st);
	}
}

/* A partition parked to make room comes back byte for byte, rows and
 * state, whether it changed before parking or not; a view reads it from
 * the parking file without bringing it back. */
static void
t_park_survives(void)
{
	struct kg_store *st = open_kind(1, 3, KG_INIT_UNIFORM);
	float *state, *w, *state2, *w2, *buf, scratch[N * DIM];
	const float *v;
	uint64_t written = 0;
	int round;

	fill(st, -7.0f);
	w = snapshot(st, &state);
	for (round = 0; round < 2; round++) {
		/* Nothing pinned: asking for a buffer parks them all. */
		buf = kg_store_buf_alloc(st, 0);
		T_CHECK(buf != NULL && !kg_store_resident(st, 0) &&
		    !kg_store_resident(st, 1) && !kg_store_resident(st, 2));
		T_CHECK(st->stats.evictions > 0);
		kg_store_buf_free(st, 0, buf);
		if (round == 0)
			written = st->stats.bytes_written;
		v = kg_store_view(st, 5, 12, scratch);
		T_CHECK(v != NULL && !kg_store_resident(st, 1) &&
		    memcmp(v, w + 5 * DIM, 12 * DIM * sizeof(float)) == 0);
		w2 = snapshot(st, &state2);
		T_CHECK(memcmp(w, w2, N * DIM * sizeof(float)) == 0);
		T_CHECK(memcmp(state, state2, N * SW * sizeof(float)) == 0);
		free(w2);
		free(state2);
	}
	/* Each partition was written once, when it changed; reading it back
	 * and parking it again wrote nothing. */
	T_CHECK(written == N * (DIM + SW) * sizeof(float));
	T_CHECK(st->stats.bytes_written == written);
	/* A pinned partition is never parked. */
	T_CHECK(kg_store_acquire(st, 1) != NULL);
	buf = kg_store_buf_alloc(st, 0);
	T_CHECK(kg_store_resident(st, 1) && !kg_store_resident(st, 0));
	kg_store_buf_free(st, 0, buf);
	kg_store_release(st, 1, 0);
	free(w);
	free(state);
	kg_store_free(st);
}

/* take hands the buffer over (as MPI sends it) and put adopts one (as
 * received): the rows move between stores unchanged. */
static void
t_take_put(void)
{
	int kind;

	for (kind = 0; kind < 2; kind++) {
		struct kg_store *a = open_kind(kind, 3, KG_INIT_UNIFORM);
		struct kg_store *b = open_kind(1 - kind, 3, KG_INIT_NORMAL);
		float *state, *w, *state2, *w2, *buf;
		const struct kg_store_part *x;

		fill(a, 11.0f);
		w = snapshot(a, &state);
		/* Park it first in the parking store: take reads it back. */
		if (kind == 1)
			kg_store_buf_free(a, 0, kg_store_buf_alloc(a, 0));
		buf = kg_store_take(a, 1);
		T_CHECK(buf != NULL);
		kg_error_mute(1);
		T_CHECK(kg_store_acquire(a, 1) == NULL);
		T_CHECK(kg_store_take(a, 1) == NULL);
		kg_error_mute(0);
		x = kg_store_acquire(b, 1);
		kg_error_mute(1);
		T_CHECK(kg_store_take(b, 1) == NULL);	/* pinned */
		T_CHECK(kg_store_put(b, 1, buf) < 0);	/* resident */
		kg_error_mute(0);
		kg_store_release(b, 1, 0);
		T_CHECK(x != NULL && kg_store_put(b, 1, kg_store_take(b, 1)) ==
		    0);
		kg_store_buf_free(b, 1, kg_store_take(b, 1));
		T_CHECK(kg_store_put(b, 1, buf) == 0);
		T_CHECK(kg_store_put(a, 1, kg_store_take(b, 1)) == 0);
		w2 = snapshot(a, &state2);
		T_CHECK(memcmp(w, w2, N * DIM * sizeof(float)) == 0 &&
		    memcmp(state, state2, N * SW * sizeof(float)) == 0);
		free(w);
		free(state);
		free(w2);
		free(state2);
		kg_store_free(a);
		kg_store_free(b);
	}
}

/* save_part and set_source: a checkpoint's partitions read back equal,
 * now (memory) or when first needed (parking); bad files are refused. */
static void
t_save_and_source(void)
{
	char *e = kg_path_join(t_tmpdir(), "e.npy");
	char *s = kg_path_join(t_tmpdir(), "s.npy");
	int kind;

	for (kind = 0; kind < 2; kind++) {
		struct kg_store *a = open_kind(kind, 3, KG_INIT_UNIFORM);
		struct kg_store *b = open_kind(kind, 3, KG_INIT_NORMAL);
		float *state, *w, *state2, *w2, scratch[9 * DIM];
		const float *v;

		fill(a, 5.0f);
		w = snapshot(a, &state);
		T_CHECK(kg_store_save_part(a, 1, e, s) == 0);
		T_CHECK(kg_store_set_source(b, 1, e, s) == 0);
		T_CHECK(kg_store_resident(b, 1) == !kind);
		v = kg_store_view(b, 7, 9, scratch);
		T_CHECK(v != NULL && memcmp(v, w + 7 * DIM, 9 * DIM *
		    sizeof(float)) == 0);
		w2 = snapshot(b, &state2);
		T_CHECK(memcmp(w + 7 * DIM, w2 + 7 * DIM, 9 * DIM *
		    sizeof(float)) == 0 && memcmp(state + 7, state2 + 7, 9 *
		    sizeof(float)) == 0);
		/* Another partition's files do not fit partition 0. */
		kg_error_mute(1);
		T_CHECK(kg_store_set_source(b, 0, e, s) < 0);
		T_CHECK(kg_store_set_source(b, 0, e, NULL) < 0);
		kg_error_mute(0);
		free(w);
		free(state);
		free(w2);
		free(state2);
		kg_store_free(a);
		kg_store_free(b);
	}
	free(e);
	free(s);
}

/* Bytes of a whole file. */
static char *
slurp(const char *path, size_t *len)
{
	char *x = kg_read_file(path, len);

	T_CHECK(x != NULL);
	return x;
}

/* A partition's buffer written by kg_store_buf_save gives the very bytes
 * kg_store_save_part writes (a checkpoint that rank 0 writes for every
 * rank equals one each rank writes), and kg_store_buf_load reads them
 * back; files of another partition's shape are refused. */
static void
t_buf_save_load(void)
{
	char *e = kg_path_join(t_tmpdir(), "be.npy");
	char *s = kg_path_join(t_tmpdir(), "bs.npy");
	char *e2 = kg_path_join(t_tmpdir(), "be2.npy");
	char *s2 = kg_path_join(t_tmpdir(), "bs2.npy");
	struct kg_store *a = open_kind(0, 3, KG_INIT_UNIFORM);
	size_t n = kg_store_part_floats(a, 1), l1, l2, l3, l4;
	float *back = kg_xcalloc(n, sizeof(float));
	const struct kg_store_part *pa;
	char *x1, *x2, *x3, *x4;

	fill(a, 3.0f);
	T_CHECK(kg_store_save_part(a, 1, e, s) == 0);
	pa = kg_store_acquire(a, 1);
	T_CHECK(pa != NULL && pa->state == pa->w + pa->rows * DIM);
	T_CHECK(kg_store_buf_save(a, 1, pa->w, e2, s2) == 0);
	x1 = slurp(e, &l1);
	x2 = slurp(e2, &l2);
	x3 = slurp(s, &l3);
	x4 = slurp(s2, &l4);
	T_CHECK(l1 == l2 && memcmp(x1, x2, l1) == 0);
	T_CHECK(l3 == l4 && memcmp(x3, x4, l3) == 0);
	T_CHECK(kg_store_buf_load(a, 1, back, e2, s2) == 0);
	T_CHECK(memcmp(back, pa->w, n * sizeof(float)) == 0);
	kg_store_release(a, 1, 0);
	kg_error_mute(1);
	T_CHECK(kg_store_buf_load(a, 0, back, e2, s2) < 0);
	T_CHECK(strstr(kg_error_last(), "does not hold") != NULL);
	kg_error_mute(0);
	free(x1);
	free(x2);
	free(x3);
	free(x4);
	free(back);
	kg_store_free(a);
	free(e);
	free(s);
	free(e2);
	free(s2);
}

/* Streaming a partitioned (partly parked) store gives the same
 * entities.npy and entity_state.npy, byte for byte, as kg_npy_write of
 * the table in memory; with an order every row lands at order[i]. */
static void
t_stream_equals_table(void)
{
	char *e1 = kg_path_join(t_tmpdir(), "ent1.npy");
	char *s1 = kg_path_join(t_tmpdir(), "st1.npy");
	char *e2 = kg_path_join(t_tmpdir(), "ent2.npy");
	char *s2 = kg_path_join(t_tmpdir(), "st2.npy");
	struct kg_store *st = open_kind(1, 3, KG_INIT_NORMAL);
	struct kg_table_writer tw;
	struct kg_npy a = KG_NPY_INIT;
	uint64_t es[2] = { N, DIM }, ss[1] = { N }, i;
	int32_t order[N];
	float *state, *w;
	char *x, *y;
	size_t lx, ly;

	fill(st, 1.0f);
	w = snapshot(st, &state);
	kg_store_buf_free(st, 0, kg_store_buf_alloc(st, 0));
	T_CHECK(kg_store_acquire(st, 2) != NULL);
	T_CHECK(kg_npy_write(e1, KG_DT_F4, 2, es, w) == 0 &&
	    kg_npy_write(s1, KG_DT_F4, 1, ss, state) == 0);
	T_CHECK(kg_table_writer_open(&tw, e2, s2, N, DIM, SW, NULL) == 0);
	T_CHECK(kg_store_write(st, &tw) == 0 && kg_table_writer_close(&tw) ==
	    0);
	x = slurp(e1, &lx);
	y = slurp(e2, &ly);
	T_CHECK(lx == ly && memcmp(x, y, lx) == 0);
	free(x);
	free(y);
	x = slurp(s1, &lx);
	y = slurp(s2, &ly);
	T_CHECK(lx == ly && memcmp(x, y, lx) == 0);
	free(x);
	free(y);
	for (i = 0; i < N; i++)
		order[i] = (int32_t)((i * 7 + 3) % N);
	T_CHECK(kg_table_writer_open(&tw, e2, NULL, N, DIM, SW, order) == 0);
	T_CHECK(kg_store_write(st, &tw) == 0 && kg_table_writer_close(&tw) ==
	    0);
	T_CHECK(kg_npy_read(e2, &a) == 0);
	for (i = 0; i < N; i++)
		T_CHECK(memcmp((float *)a.data + order[i] * DIM, w + i * DIM,
		    DIM * sizeof(float)) == 0);
	kg_npy_release(&a);
	kg_store_release(st, 2, 0);
	/* A table with rows missing is refused and leaves no file. */
	T_CHECK(kg_table_writer_open(&tw, e2, s2, N, DIM, SW, NULL) == 0);
	T_CHECK(kg_store_write_part(st, 1, &tw) == 0);
	kg_error_mute(1);
	T_CHECK(kg_table_writer_put(&tw, N - 1, 2, w, state) < 0);
	T_CHECK(kg_table_writer_close(&tw) < 0);
	kg_error_mute(0);
	T_CHECK(!kg_path_exists(e2) && !kg_path_exists(s2));
	free(w);
	free(state);
	kg_store_free(st);
	free(e1);
	free(s1);
	free(e2);
	free(s2);
}

/* The read-only stores: views in place, no writes. */
static void
t_read_only(void)
{
	char *path = kg_path_join(t_tmpdir(), "ro.npy");
	float rows[N * DIM], scratch[N * DIM];
	uint64_t sh[2] = { N, DIM }, i;
	struct kg_store *st;
	int k;

	for (i = 0; i < N * DIM; i++)
		rows[i] = (float)i / 3.0f;
	T_CHECK(kg_npy_write(path, KG_DT_F4, 2, sh, rows) == 0);
	for (k = 0; k < 2; k++) {
		const float *v;

		st = k ? kg_store_open_npy(path) : kg_store_open_rows(rows, N,
		    DIM);
		T_CHECK(st != NULL);
		if (st == NULL)
			continue;
		T_CHECK(st->n_rows == N && st->dim == DIM && st->read_only);
		v = kg_store_view(st, 4, 10, scratch);
		T_CHECK(v != scratch && memcmp(v, rows + 4 * DIM, 10 * DIM *
		    sizeof(float)) == 0);
		kg_error_mute(1);
		T_CHECK(kg_store_take(st, 0) == NULL);
		T_CHECK(kg_store_set_source(st, 0, path, path) < 0);
		kg_error_mute(0);
		kg_store_free(st);
	}
	free(path);
}

/* Entries of dir whose name starts with prefix. */
static int
count_entries(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d != NULL && (e = readdir(d)) != NULL)
		n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
	if (d != NULL)
		closedir(d);
	return n;
}

/* Parking leaves nothing on disk by name, however the process ends. */
static void
t_park_nameless(void)
{
	struct kg_store *st = open_kind(1, 3, KG_INIT_UNIFORM);

	fill(st, 2.0f);
	kg_store_buf_free(st, 0, kg_store_buf_alloc(st, 0));
	T_CHECK(st->stats.bytes_written > 0);
	T_CHECK(count_entries(t_tmpdir(), "kgpipe-park") == 0);
	kg_store_free(st);
	kg_error_mute(1);
	{
		struct kg_store_layout l = layout(3);
		struct kg_store_init in = rule(KG_INIT_UNIFORM);

		T_CHECK(kg_store_open_park(&l, &in, "/no/such/dir") == NULL);
	}
	kg_error_mute(0);
}


/* Every bucket once, states one swap apart and holding their buckets,
 * and the swap count of the construction equal to its formula and not
 * below the lower bound, for every P up to 24 and every buffer size. */
static void
t_order(void)
{
	uint32_t P, C, s, k;
	uint32_t first[2] = { 5, 2 };
	struct kg_order o;

	for (P = 1; P <= 24; P++)
		for (C = 2; C <= P + 1; C++) {
			uint8_t *seen = kg_xcalloc((size_t)P * P, 1);
			int ok = 1;

			T_CHECK(kg_order_build(&o, P, C, NULL, 0, 7, P) == 0);
			for (s = 0; s < o.nstates; s++) {
				const uint32_t *st = kg_order_state(&o, s);
				uint64_t n, i;
				const uint32_t *b = kg_order_buckets(&o, s, &n);
				uint32_t diff = 0;

				for (i = 0; i < n; i++) {
					uint32_t in = 0;

					for (k = 0; k < o.width; k++)
						in += (st[k] == b[i] / P) +
						    (st[k] == b[i] % P);
					ok &= in >= 2 && !seen[b[i]]++;
				}
				for (k = 0; s > 0 && k < o.width; k++)
					diff += st[k] != kg_order_state(&o,
					    s - 1)[k];
				ok &= s == 0 || (diff == 1 && o.in[s] < P);
			}
			for (k = 0; k < P * P; k++)
				ok &= seen[k] == 1;
			T_CHECKF(ok, "P %u C %u", P, C);
			T_CHECKF(o.swaps == kg_order_swaps_formula(P, C) &&
			    o.swaps == o.nstates - 1 && o.swaps >=
			    kg_order_swaps_lower_bound(P, C), "P %u C %u: %llu "
			    "swaps", P, C, (unsigned long long)o.swaps);
			free(seen);
			kg_order_release(&o);
		}
	/* Values quoted in order.h, and C = 2 meets the bound. */
	T_CHECK(kg_order_swaps_formula(16, 4) == 42 &&
	    kg_order_swaps_lower_bound(16, 4) == 38);
	T_CHECK(kg_order_swaps_formula(32, 6) == 107 &&
	    kg_order_swaps_lower_bound(32, 6) == 97);
	T_CHECK(kg_order_swaps_formula(40, 2) == 40 * 39 / 2 - 1 &&
	    kg_order_swaps_lower_bound(40, 2) == 40 * 39 / 2 - 1);
	/* An epoch starts with what is in memory. */
	T_CHECK(kg_order_build(&o, 9, 3, first, 2, 1, 1) == 0);
	T_CHECK((o.state[0] == 5 || o.state[1] == 5 || o.state[2] == 5) &&
	    (o.state[0] == 2 || o.state[1] == 2 || o.state[2] == 2));
	kg_order_release(&o);
	kg_error_mute(1);
	T_CHECK(kg_order_build(&o, 4, 1, NULL, 0, 1, 1) < 0);
	kg_error_mute(0);
	T_CHECK(kg_order_build(&o, 1, 1, NULL, 0, 1, 1) == 0 &&
	    o.nstates == 1 && o.off[1] == 1);
	kg_order_release(&o);
}

static struct kg_store *
open_buffer(uint32_t cap)
{
	struct kg_store_layout l = layout(3);
	struct kg_store_init in = rule(KG_INIT_UNIFORM);

	return kg_store_open_buffer(&l, &in, t_tmpdir(), cap);
}

/* One random change to partition p's rows and state. */
static void
poke(struct kg_store *st, uint32_t p, struct kg_rng *rng)
{
	const struct kg_store_part *a = kg_store_acquire(st, p);
	uint64_t i;

	T_CHECK(a != NULL);
	if (a == NULL)
		return;
	i = kg_rng_below(rng, a->rows);
	a->w[i * DIM + kg_rng_below(rng, DIM)] += 1.0f;
	a->state[i] += 0.5f;
	kg_store_release(st, p, 1);
}

/* A buffer of one partition (so every other acquire swaps, with reads
 * ahead and write-backs on its thread) ends with the same table as the
 * memory store after the same changes, and leaves no file by name. */
static void
t_buffer_equals_memory(void)
{
	struct kg_store *a = open_kind(0, 3, KG_INIT_UNIFORM), *b =
	    open_buffer(1);
	struct kg_rng r1, r2;
	float *sa, *wa, *sb, *wb;
	int i;

	T_CHECK(b != NULL);
	if (b == NULL)
		return;
	kg_rng_seed(&r1, 3, 0);
	kg_rng_seed(&r2, 3, 0);
	for (i = 0; i < 200; i++) {
		uint32_t p = (uint32_t)kg_rng_below(&r1, 3);

		(void)kg_rng_below(&r2, 3);
		poke(a, p, &r1);
		if (i % 3 == 0)
			kg_store_prefetch(b, (p + 1) % 3);
		poke(b, p, &r2);
	}
	wa = snapshot(a, &sa);
	wb = snapshot(b, &sb);
	T_CHECK(memcmp(wa, wb, N * DIM * sizeof(float)) == 0);
	T_CHECK(memcmp(sa, sb, N * SW * sizeof(float)) == 0);
	T_CHECK(b->stats.evictions > 0 && b->stats.bytes_written > 0 &&
	    b->stats.bytes_read > 0);
	/* Two frames of the largest partition (9 rows), never more. */
	T_CHECK(b->stats.bytes_held_max == 2 * 9 * (DIM + SW) *
	    sizeof(float));
	T_CHECK(kg_store_flush(b) == 0);
	T_CHECK(count_entries(t_tmpdir(), ".kgpipe-part") == 0);
	free(wa);
	free(sa);
	free(wb);
	free(sb);
	kg_store_free(a);
	kg_store_free(b);
}

/* Poke partitions 0 and 1 of stores[0..n) alike, k times. */
static void
poke_all(struct kg_store **st, int n, uint64_t seed, int k)
{
	int i, j;

	for (j = 0; j < n; j++) {
		struct kg_rng r;

		kg_rng_seed(&r, seed, 0);
		for (i = 0; i < k; i++) {
			uint32_t p = (uint32_t)kg_rng_below(&r, 2);

			poke(st[j], p, &r);
		}
	}
}

/*
 * The snapshot of an early-stopping run's best epoch: the buffer store
 * (one partition in memory, so partitions swap between the snapshot and
 * the restore; partition 2 still fresh at the snapshot) puts back the
 * same rows as the memory and parking stores, keeps the current state,
 * holds no copy in memory and no more than its two frames; a saved
 * snapshot (a link of the buffer's file) has the memory store's bytes
 * and loads back into a new store.  Restoring without one is refused.
 */
static void
t_snapshot_restore(void)
{
	struct kg_store *st[3] = { open_kind(0, 3, KG_INIT_UNIFORM),
	    open_kind(1, 3, KG_INIT_UNIFORM), open_buffer(1) };
	struct kg_store *fresh[2] = { open_kind(0, 3, KG_INIT_UNIFORM),
	    open_buffer(1) };
	float *w0, *s0, *w1, *s1, *w, *s;
	char *path[2][3];
	uint32_t p;
	int j, k;

	poke_all(st, 3, 5, 40);
	w0 = snapshot(st[0], &s0);
	for (j = 0; j < 3; j++)
		T_CHECK(kg_store_snapshot(st[j]) == 0);
	poke_all(st, 3, 6, 40);
	w1 = snapshot(st[0], &s1);
	T_CHECK(memcmp(w0, w1, N * DIM * sizeof(float)) != 0);
	for (j = 0; j < 2; j++)
		for (p = 0; p < 3; p++) {
			char name[32];

			snprintf(name, sizeof(name), "snap%d-%u.npy", j, p);
			path[j][p] = kg_path_join(t_tmpdir(), name);
			T_CHECK(kg_store_snapshot_save(st[j ? 2 : 0], p,
			    path[j][p]) == 0);
		}
	for (j = 0; j < 3; j++) {
		T_CHECK(kg_store_restore(st[j]) == 0);
		w = snapshot(st[j], &s);
		T_CHECKF(memcmp(w, w0, N * DIM * sizeof(float)) == 0 &&
		    memcmp(s, s1, N * SW * sizeof(float)) == 0, "store %d", j);
		free(w);
		free(s);
	}
	T_CHECK(st[0]->stats.bytes_snapshot == N * DIM * sizeof(float));
	T_CHECK(st[2]->stats.bytes_snapshot == 0 &&
	    st[2]->stats.bytes_held_max == 2 * 9 * (DIM + SW) *
	    sizeof(float));
	for (p = 0; p < 3; p++) {
		size_t la, lb;
		char *a = slurp(path[0][p], &la), *b = slurp(path[1][p], &lb);

		T_CHECKF(a != NULL && b != NULL && la == lb &&
		    memcmp(a, b, la) == 0, "partition %u", p);
		free(a);
		free(b);
	}
	/* A resumed run: its snapshot from the saved files. */
	for (j = 0; j < 2; j++) {
		for (p = 0; p < 3; p++)
			T_CHECK(kg_store_snapshot_load(fresh[j], p,
			    path[1][p]) == 0);
		T_CHECK(kg_store_restore(fresh[j]) == 0);
		w = snapshot(fresh[j], &s);
		T_CHECK(memcmp(w, w0, N * DIM * sizeof(float)) == 0);
		free(w);
		free(s);
	}
	kg_error_mute(1);
	kg_store_free(fresh[0]);
	fresh[0] = open_kind(0, 3, KG_INIT_UNIFORM);
	T_CHECK(kg_store_snapshot_load(fresh[0], 0, path[1][0]) == 0);
	T_CHECK(kg_store_restore(fresh[0]) < 0 && strstr(kg_error_last(),
	    "partition 1 has no snapshot") != NULL);
	T_CHECK(kg_store_snapshot_load(fresh[0], 1, path[1][0]) < 0 &&
	    strstr(kg_error_last(), "is not float32 [9, 5]") != NULL);
	kg_error_mute(0);
	for (k = 0; k < 2; k++) {
		kg_store_free(fresh[k]);
		for (p = 0; p < 3; p++)
			free(path[k][p]);
	}
	for (j = 0; j < 3; j++)
		kg_store_free(st[j]);
	T_CHECK(count_entries(t_tmpdir(), ".kgpipe-part") == 0);
	free(w0);
	free(s0);
	free(w1);
	free(s1);
}

/*
 * The snapshot read and set in memory (the GNN's best_params.npy holds
 * the learned rows and more): rows read back by local number are the
 * snapshot's, for a memory store and a buffer store (rows on disk, one
 * partition in memory); rows set on a new store restore as if
 * snapshot there.  A read past a partition's end, or of a partition
 * without a snapshot, is refused.
 */
static void
t_snapshot_in_memory(void)
{
	struct kg_store *st[2] = { open_kind(0, 3, KG_INIT_UNIFORM),
	    open_buffer(1) };
	struct kg_store *fresh[2] = { open_kind(0, 3, KG_INIT_UNIFORM),
	    open_buffer(1) };
	float *w0, *s0, *w, *s, got[N * DIM];
	uint32_t p;
	int j;

	poke_all(st, 2, 7, 40);
	w0 = snapshot(st[0], &s0);
	for (j = 0; j < 2; j++)
		T_CHECK(kg_store_snapshot(st[j]) == 0);
	poke_all(st, 2, 8, 40);
	for (j = 0; j < 2; j++) {
		memset(got, 0, sizeof(got));
		for (p = 0; p < 3; p++) {
			uint64_t rows = (uint64_t)(off3[p + 1] - off3[p]);

			/* The partition in two pieces. */
			T_CHECK(kg_store_snapshot_read(st[j], p, 0, 2,
			    got + off3[p] * DIM) == 0);
			T_CHECK(kg_store_snapshot_read(st[j], p, 2, rows - 2,
			    got + (off3[p] + 2) * DIM) == 0);
		}
		T_CHECKF(memcmp(got, w0, sizeof(got)) == 0, "store %d", j);
		for (p = 0; p < 3; p++)
			T_CHECK(kg_store_snapshot_set(fresh[j], p, w0 +
			    off3[p] * DIM) == 0);
		T_CHECK(kg_store_restore(fresh[j]) == 0);
		w = snapshot(fresh[j], &s);
		T_CHECKF(memcmp(w, w0, N * DIM * sizeof(float)) == 0,
		    "store %d", j);
		free(w);
		free(s);
	}
	kg_error_mute(1);
	T_CHECK(kg_store_snapshot_read(st[0], 1, 8, 2, got) < 0 &&
	    strstr(kg_error_last(), "rows 8..10 are outside partition 1") !=
	    NULL);
	kg_store_free(fresh[0]);
	fresh[0] = open_kind(0, 3, KG_INIT_UNIFORM);
	T_CHECK(kg_store_snapshot_read(fresh[0], 0, 0, 1, got) < 0 &&
	    strstr(kg_error_last(), "partition 0 has no snapshot") != NULL);
	kg_error_mute(0);
	for (j = 0; j < 2; j++) {
		kg_store_free(st[j]);
		kg_store_free(fresh[j]);
	}
	free(w0);
	free(s0);
}

/*
 * KG_INIT_ZERO: fresh rows and state are +0 bit for bit, acquired from a
 * memory store (a partition of many pages, whose inner pages are given
 * back rather than written), read from the parking store and viewed
 * without being made resident; after a write and a re-open, fresh again.
 */
static void
t_zero_init(void)
{
	enum { ZR = 20000 };
	struct kg_store_layout l = { ZR, DIM, SW, 1, NULL };
	struct kg_store_init in = { KG_INIT_ZERO, 0.25, 42,
	    KG_STREAM_ENTITY_INIT };
	float *zero = kg_xcalloc(ZR * (DIM + SW), sizeof(float));
	float *scratch = kg_xmallocarray(ZR * DIM, sizeof(float));
	int round, kind;

	for (round = 0; round < 2; round++)
		for (kind = 0; kind < 2; kind++) {
			struct kg_store *st = kind ? kg_store_open_park(&l,
			    &in, t_tmpdir()) : kg_store_open_mem(&l, &in);
			const struct kg_store_part *a;
			const float *v;

			memset(scratch, 0xff, ZR * DIM * sizeof(float));
			v = kg_store_view(st, 0, ZR, scratch);
			T_CHECKF(v != NULL && memcmp(v, zero, ZR * DIM *
			    sizeof(float)) == 0, "view, kind %d", kind);
			a = kg_store_acquire(st, 0);
			T_CHECKF(memcmp(a->w, zero, ZR * DIM *
			    sizeof(float)) == 0 && memcmp(a->state, zero,
			    ZR * SW * sizeof(float)) == 0, "acquire, kind %d",
			    kind);
			/* Dirty memory for the next store to be given. */
			memset(a->w, 0xff, ZR * (DIM + SW) * sizeof(float));
			kg_store_release(st, 0, 1);
			kg_store_free(st);
		}
	free(zero);
	free(scratch);
}

/* Inode of path (0 when absent). */
static ino_t
inode_of(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 ? sb.st_ino : 0;
}

/*
 * Checkpoints of the buffer link its files (no copy), keep their bytes
 * when the partition changes afterwards, and read back equal; a table
 * streamed in an order rising inside each partition lands every row at
 * order[i], partitions on disk or in memory.
 */
static void
t_buffer_save_and_stream(void)
{
	char *e = kg_path_join(t_tmpdir(), "be.npy");
	char *s = kg_path_join(t_tmpdir(), "bs.npy");
	char *e2 = kg_path_join(t_tmpdir(), "be2.npy");
	struct kg_store *b = open_buffer(1), *c = open_buffer(2);
	struct kg_table_writer tw;
	struct kg_npy x = KG_NPY_INIT;
	float *state, *w, *state2, *w2;
	int32_t order[N];
	uint64_t i;

	fill(b, 3.0f);
	w = snapshot(b, &state);
	T_CHECK(kg_store_flush(b) == 0);
	T_CHECK(kg_store_save_part(b, 1, e, s) == 0);
	T_CHECK(kg_store_set_source(c, 1, e, s) == 0);
	fill(b, 4.0f);
	T_CHECK(kg_store_flush(b) == 0);
	/* The checkpoint's copy is unchanged by later write-backs. */
	w2 = snapshot(c, &state2);
	T_CHECK(memcmp(w + 7 * DIM, w2 + 7 * DIM, 9 * DIM * sizeof(float)) ==
	    0 && memcmp(state + 7, state2 + 7, 9 * sizeof(float)) == 0);
	T_CHECK(inode_of(e) != 0);
	free(w2);
	free(state2);
	/* Rising inside each partition (7, 9, 7 rows), interleaved. */
	for (i = 0; i < N; i++)
		order[i] = (int32_t)(i < 7 ? 3 * i : i >= 16 ? 3 * (i - 16) + 1 :
		    i - 7 < 7 ? 3 * (i - 7) + 2 : 21 + (i - 14));
	free(w);
	free(state);
	w = snapshot(b, &state);
	T_CHECK(kg_table_writer_open(&tw, e2, NULL, N, DIM, SW, order) == 0);
	T_CHECK(kg_store_write(b, &tw) == 0 && kg_table_writer_close(&tw) ==
	    0);
	T_CHECK(kg_npy_read(e2, &x) == 0);
	for (i = 0; x.data != NULL && i < N; i++)
		T_CHECK(memcmp((float *)x.data + order[i] * DIM, w + i * DIM,
		    DIM * sizeof(float)) == 0);
	kg_npy_release(&x);
	free(w);
	free(state);
	kg_store_free(b);
	kg_store_free(c);
	free(e);
	free(s);
	free(e2);
}

/*
 * A write that fails (here the file size limit, as a full disk would)
 * is reported by the next call, naming the directory, and every later
 * call fails instead of training on.
 */
static void
t_buffer_disk_full(void)
{
	struct kg_store *b = open_buffer(1);
	struct rlimit old, lim;

	fill(b, 1.0f);
	T_CHECK(kg_store_flush(b) == 0);
	fill(b, 2.0f);
	signal(SIGXFSZ, SIG_IGN);
	getrlimit(RLIMIT_FSIZE, &old);
	lim = old;
	lim.rlim_cur = 64;
	setrlimit(RLIMIT_FSIZE, &lim);
	kg_error_mute(1);
	T_CHECK(kg_store_flush(b) < 0);
	T_CHECK(strstr(kg_error_last(), "cannot write partition") != NULL &&
	    strstr(kg_error_last(), t_tmpdir()) != NULL);
	T_CHECK(kg_store_acquire(b, 0) == NULL);
	kg_error_mute(0);
	setrlimit(RLIMIT_FSIZE, &old);
	signal(SIGXFSZ, SIG_DFL);
	kg_store_free(b);
}

/* kg-eval's streamed table reads the rows an array holds. */
static void
t_npy_stream(void)
{
	char *path = kg_path_join(t_tmpdir(), "str.npy");
	float rows[N * DIM], scratch[N * DIM];
	uint64_t sh[2] = { N, DIM }, i;
	struct kg_store *st;
	const float *v;

	for (i = 0; i < N * DIM; i++)
		rows[i] = (float)i * 0.25f;
	T_CHECK(kg_npy_write(path, KG_DT_F4, 2, sh, rows) == 0);
	st = kg_store_open_npy_stream(path);
	T_CHECK(st != NULL);
	if (st != NULL) {
		v = kg_store_view(st, 3, 17, scratch);
		T_CHECK(v == scratch && memcmp(v, rows + 3 * DIM, 17 * DIM *
		    sizeof(float)) == 0);
		kg_error_mute(1);
		T_CHECK(kg_store_acquire(st, 0) == NULL);
		kg_error_mute(0);
		kg_store_free(st);
	}
	free(path);
}

int
main(void)
{
	T_RUN(t_fresh_rows);
	T_RUN(t_view_fresh);
	T_RUN(t_view_fresh_pieces);
	T_RUN(t_round_trip);
	T_RUN(t_park_survives);
	T_RUN(t_take_put);
	T_RUN(t_save_and_source);
	T_RUN(t_buf_save_load);
	T_RUN(t_stream_equals_table);
	T_RUN(t_read_only);
	T_RUN(t_park_nameless);
	T_RUN(t_order);
	T_RUN(t_buffer_equals_memory);
	T_RUN(t_buffer_save_and_stream);
	T_RUN(t_buffer_disk_full);
	T_RUN(t_snapshot_restore);
	T_RUN(t_snapshot_in_memory);
	T_RUN(t_zero_init);
	T_RUN(t_npy_stream);
	return T_DONE();
}
