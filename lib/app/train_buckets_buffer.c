/*
 * train_buckets_buffer: the out-of-core epoch of the bucket driver: one
 * process, its partitions in a partition buffer (lib/store/store.h), on
 * the device in a device tier over it (lib/store/dev_tier.h), the
 * buckets in the order of lib/store/order.h; see train_buckets.h.
 */
#include "app/train_buckets_impl.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The rows of the largest of P partitions at off. */
static uint64_t
most_rows(const int64_t *off, uint32_t P)
{
	uint64_t most = 0;
	uint32_t p;

	for (p = 0; p < P; p++)
		if ((uint64_t)(off[p + 1] - off[p]) > most)
			most = (uint64_t)(off[p + 1] - off[p]);
	return most;
}

/* C from --buffer_capacity, or from --mem_budget: the partitions that
 * fit, less one for reading ahead, into *cap.  0 or -1. */
static int
capacity_of(struct kg_buckets *v, const struct kg_store_layout *l,
    uint32_t *cap)
{
	const struct kg_dist_train_opts *x = v->x;
	uint64_t most = most_rows(l->off, v->P), bytes, fit;

	bytes = most * ((uint64_t)l->dim + l->state_width) * sizeof(float);
	*cap = x->buffer_capacity;
	if (x->mem_budget > 0) {
		fit = x->mem_budget / bytes;
		if (fit < 3 && v->P > 1) {
			kg_error("--mem_budget %llu holds %llu partitions of "
			    "%llu bytes; the buffer needs 3 (2 to train, 1 "
			    "to read ahead): use more partitions or a larger "
			    "budget", (unsigned long long)x->mem_budget,
			    (unsigned long long)fit, (unsigned long long)bytes);
			return -1;
		}
		fit = fit > 1 ? fit - 1 : 1;
		if (*cap == 0 || fit < *cap)
			*cap = fit > v->P ? v->P : (uint32_t)fit;
	}
	if (*cap > v->P)
		*cap = v->P;
	if (*cap < 2 && v->P > 1) {
		kg_error("--buffer_capacity %u cannot train %u partitions: a "
		    "bucket needs 2 in memory", *cap, v->P);
		return -1;
	}
	return 0;
}

int
kg_train_buckets_gpu_check(const struct kg_dist_train_opts *x,
    const struct kg_train_opts *o, uint32_t *capacity)
{
	struct kg_partition_book pb = KG_PARTITION_BOOK_INIT;
	struct kg_store_layout l;
	int rc = kg_partition_book_load(&pb, x->partitions);

	if (rc < 0)
		return rc == KG_ERR_VERSION ? rc : -2;
	l = kg_train_layout(o, pb.n_nodes, pb.nparts, pb.offsets);
	rc = kg_dev_tier_capacity(x->gpu_capacity, x->gpu_mem_budget,
	    pb.nparts, most_rows(pb.offsets, pb.nparts), l.dim, l.state_width,
	    capacity);
	kg_partition_book_release(&pb);
	return rc;
}

int
kg_buckets_buffer_open(struct kg_buckets *v, const struct kg_store_layout *l,
    const struct kg_store_init *in)
{
	const struct kg_train_job *j = v->j;
	char *dir, *ckpt;
	uint32_t p, host = 0;

	if (v->on_device) {
		/* The order is the device's; the host buffers only when
		 * asked to (disk -> RAM -> GPU). */
		if (kg_dev_tier_capacity(v->x->gpu_capacity,
		    v->x->gpu_mem_budget, v->P, most_rows(l->off, v->P),
		    l->dim, l->state_width, &v->capacity) < 0)
			return -1;
		if (v->x->buffer_capacity == 0 && v->x->mem_budget == 0) {
			v->st = kg_store_open_mem(l, in);
			goto opened;
		}
		if (capacity_of(v, l, &host) < 0)
			return -1;
	} else if (capacity_of(v, l, &v->capacity) < 0)
		return -1;
	else
		host = v->capacity;
	v->host_capacity = host;
	if (v->x->swap_dir != NULL)
		dir = kg_xstrdup(v->x->swap_dir);
	else {
		/* Beside the checkpoint, so that it links the files. */
		ckpt = kg_train_job_ckpt(j);
		dir = kg_path_parent(ckpt);
		free(ckpt);
	}
	/* A test hook: the same order over a memory store, to show that
	 * the trips to disk change no bit. */
	if (getenv("KG_TEST_BUFFER_IN_MEMORY") != NULL)
		v->st = kg_store_open_mem(l, in);
	else
		v->st = kg_store_open_buffer_as(l, in, dir, host,
		    v->x->disk_f16 ? KG_DISK_F16 : KG_DISK_F32);
	free(dir);
opened:
	if (v->st == NULL)
		return -1;
	/* The one process holds every partition, for the checkpoints. */
	for (p = 0; p < v->P; p++)
		v->loc[p] = 0;
	return 0;
}

/* Replace the order by the one of pass number e (epoch * passes +
 * pass), starting where it ended. */
static int
next_order(struct kg_buckets *v, uint64_t e)
{
	uint32_t *first = NULL, nfirst = v->ord.nstates ? v->ord.width : 0;
	int rc;

	if (nfirst > 0) {
		first = kg_xmallocarray(nfirst, sizeof(*first));
		memcpy(first, kg_order_state(&v->ord, v->ord.nstates - 1),
		    nfirst * sizeof(*first));
	}
	kg_order_release(&v->ord);
	rc = kg_order_build(&v->ord, v->P, v->capacity, first, nfirst,
	    v->o->seed, e);
	free(first);
	return rc;
}

/*
 * The order of pass number e.  It starts from what the pass before left
 * in memory, which is where the order of pass e - 1 ended: a resumed run
 * (nothing in memory) rebuilds the orders from the first on, so that it
 * trains in the same order as a run that never stopped.
 */
static int
build_order(struct kg_buckets *v, uint64_t e)
{
	uint64_t k;

	/* Test the memory once: the orders built here fill it. */
	if (v->ord.nstates == 0)
		for (k = 0; k < e; k++)
			if (next_order(v, k) < 0)
				return -1;
	return next_order(v, e);
}

/* A test hook: KG_TEST_KILL_STATE="e:s" ends the process with SIGKILL
 * on entering state s of epoch e (1-based), as a crash would. */
static void
kill_hook(const struct kg_buckets *v, uint32_t s)
{
	const char *at = getenv("KG_TEST_KILL_STATE");
	unsigned e, k;

	if (at != NULL && sscanf(at, "%u:%u", &e, &k) == 2 &&
	    e == v->tr.epoch + 1 && k == s + 1)
		raise(SIGKILL);
}

/* Progress inside a long epoch (shown runs): a terminal line every 2 s,
 * a log line every 30 s. */
static void
report(const struct kg_buckets *v, uint32_t s, const double stats[2],
    double t0, double *last)
{
	double now = kg_now(), total = (double)v->ds.split[KG_SPLIT_TRAIN].n *
	    (v->o->reciprocal ? 2 : 1), rate;
	int tty = isatty(2);

	if (!v->progress || now - *last < (tty ? 2.0 : 30.0) || stats[1] <= 0)
		return;
	*last = now;
	rate = stats[1] / (now - t0);
	fprintf(stderr, "%s%s: epoch %u: state %u/%u of pass %u, %3.0f%%, "
	    "%.0f triples/s, eta %.0f s%s", tty ? "\r" : "", kg_progname(),
	    v->tr.epoch + 1, s + 1, v->ord.nstates, v->pass + 1,
	    100.0 * stats[1] / total, rate, (total - stats[1]) / rate,
	    tty ? " " : "\n");
	fflush(stderr);
}

/*
 * The tier a buffer run pins its states' partitions in: the engine's
 * device tier (t), else the trainer's store.  The same calls either way:
 * acquire what a state needs, release what it drops, prefetch what the
 * next states read.
 */
static int
tier_acquire(struct kg_buckets *v, struct kg_dev_tier *t, uint32_t p)
{
	return (t != NULL ? (const void *)kg_dev_tier_acquire(t, p) :
	    (const void *)kg_store_acquire(v->st, p)) == NULL ? -1 : 0;
}

static void
tier_release(struct kg_buckets *v, struct kg_dev_tier *t, uint32_t p)
{
	if (t != NULL)
		kg_dev_tier_release(t, p, 0);
	else
		kg_store_release(v->st, p, 0);
}

static void
tier_prefetch(struct kg_buckets *v, struct kg_dev_tier *t, uint32_t p)
{
	if (t != NULL)
		kg_dev_tier_prefetch(t, p);
	else
		kg_store_prefetch(v->st, p);
}

/*
 * Enter state s of the order: release the partitions pinned (on[p]) that
 * it drops, acquire those it brings, and prefetch the partitions the
 * next two states read (a tier reads ahead what it has a slot for and
 * passes the rest to the store below it, or drops it).  The trainer pins
 * them again per bucket, as changed.  0 or -1.
 */
static int
enter_state(struct kg_buckets *v, struct kg_dev_tier *t, uint8_t *on,
    uint32_t s)
{
	const struct kg_order *o = &v->ord;
	const uint32_t *in = kg_order_state(o, s);
	uint32_t p, k;

	for (p = 0; p < v->P; p++) {
		int keep = 0;

		for (k = 0; k < o->width; k++)
			keep |= in[k] == p;
		if (on[p] && !keep) {
			tier_release(v, t, p);
			on[p] = 0;
		}
	}
	for (k = 0; k < o->width; k++) {
		p = in[k];
		if (on[p])
			continue;
		if (tier_acquire(v, t, p) < 0)
			return -1;
		on[p] = 1;
	}
	for (k = s + 1; k < o->nstates && k <= s + 2; k++)
		tier_prefetch(v, t, o->in[k]);
	return 0;
}

/*
 * One pass: the states of its order and their buckets.  A pass cut by
 * --max_step enters no state after the cut, so that it reads nothing it
 * will not train; its swaps are those of the states it entered (each
 * after the first is one), not the whole order's.
 */
static int
run_pass(struct kg_buckets *v, struct kg_dev_tier *t, uint8_t *on,
    double stats[2])
{
	uint32_t s;
	uint64_t n, i;
	double start = kg_now(), last = start;

	if (build_order(v, (uint64_t)v->tr.epoch * v->x->passes + v->pass) <
	    0)
		return -1;
	for (s = 0; s < v->ord.nstates; s++) {
		const uint32_t *b = kg_order_buckets(&v->ord, s, &n);
		double t0 = kg_now();

		if (v->o->max_step > 0 && v->step >= v->o->max_step)
			break;

		kill_hook(v, s);
		if (enter_state(v, t, on, s) < 0)
			return -1;
		v->io.wait_seconds += kg_now() - t0;
		for (i = 0; i < n; i++)
			if (kg_buckets_train(v, s, b[i], stats) < 0)
				return -1;
		report(v, s, stats, start, &last);
	}
	if (v->progress && isatty(2) && last > start)
		fputc('\n', stderr);
	v->io.swaps += s > 0 ? s - 1 : 0;
	v->io.order_swaps += s > 0 ? s - 1 : 0;
	v->io.swaps_bound += kg_order_swaps_lower_bound(v->P, v->capacity);
	return 0;
}

/* The passes of an epoch, then every pin released (the partitions stay
 * where they are, for the next epoch's start).  0 or -1. */
static int
run_passes(struct kg_buckets *v, struct kg_dev_tier *t, double stats[2])
{
	uint8_t *on = kg_xcalloc(v->P, sizeof(*on));
	uint32_t p;
	int rc = 0;

	for (v->pass = 0; rc == 0 && v->pass < v->x->passes; v->pass++)
		rc = run_pass(v, t, on, stats);
	for (p = 0; p < v->P; p++)
		if (on[p])
			tier_release(v, t, p);
	free(on);
	return rc;
}

int
kg_buckets_buffer_epoch(struct kg_buckets *v, double stats[2])
{
	struct kg_store_stats s0 = v->st->stats;
	struct kg_dev_tier *t = kg_engine_tier(v->eng);
	struct kg_dev_tier_stats d0 = { 0 };
	const struct kg_dev_tier_stats *ds;
	double t0;

	v->io.swaps = v->io.swaps_bound = v->io.order_swaps = 0;
	v->io.wait_seconds = 0.0;
	if (t != NULL)
		d0 = *kg_dev_tier_stats(t);
	if (run_passes(v, t, stats) < 0)
		return -1;
	/* The engine's partitions back in the store (a device's tables in
	 * the trainer too; its swaps are the ones its tier made). */
	if (kg_engine_download(v->eng) < 0)
		return -1;
	if (t != NULL) {
		ds = kg_dev_tier_stats(t);
		v->io.swaps = ds->swaps - d0.swaps;
		v->io.wait_seconds += ds->wait_seconds - d0.wait_seconds;
	}
	t0 = kg_now();
	if (kg_store_flush(v->st) < 0)
		return -1;
	v->io.wait_seconds += kg_now() - t0;
	v->io.bytes_read = v->st->stats.bytes_read - s0.bytes_read;
	v->io.bytes_written = v->st->stats.bytes_written - s0.bytes_written;
	v->io_total.swaps += v->io.swaps;
	v->io_total.order_swaps += v->io.order_swaps;
	v->io_total.swaps_bound += v->io.swaps_bound;
	v->io_total.bytes_read += v->io.bytes_read;
	v->io_total.bytes_written += v->io.bytes_written;
	v->io_total.wait_seconds += v->io.wait_seconds;
	return 0;
}

void
kg_buckets_buffer_figures(const struct kg_buckets *v, json_t *fig)
{
	const struct kg_store *st = v->st;
	struct kg_dev_tier *t = kg_engine_tier(v->eng);
	const struct kg_dev_tier_stats *ds = t != NULL ?
	    kg_dev_tier_stats(t) : NULL;
	uint64_t most = 0;
	uint32_t p;

	for (p = 0; p < v->P; p++)
		if (kg_store_part_rows(st, p) > most)
			most = kg_store_part_rows(st, p);
	if (ds != NULL) {
		json_object_set_new(fig, "gpu_buffer_capacity",
		    json_integer(v->capacity));
		json_object_set_new(fig, "order_swaps", json_integer(
		    (json_int_t)v->io_total.order_swaps));
		json_object_set_new(fig, "gpu_fills", json_integer(
		    (json_int_t)ds->fills));
		json_object_set_new(fig, "gpu_bytes_uploaded", json_integer(
		    (json_int_t)ds->bytes_up));
		json_object_set_new(fig, "gpu_bytes_downloaded", json_integer(
		    (json_int_t)ds->bytes_down));
		json_object_set_new(fig, "buffer_capacity", v->host_capacity ?
		    json_integer(v->host_capacity) : json_null());
	} else
		json_object_set_new(fig, "buffer_capacity",
		    json_integer(v->capacity));
	json_object_set_new(fig, "partition_bytes", json_integer((json_int_t)
	    (most * (st->dim + st->state_width) * sizeof(float))));
	json_object_set_new(fig, "swaps", json_integer((json_int_t)
	    v->io_total.swaps));
	json_object_set_new(fig, "swaps_lower_bound", json_integer(
	    (json_int_t)v->io_total.swaps_bound));
	json_object_set_new(fig, "bytes_read", json_integer((json_int_t)
	    v->io_total.bytes_read));
	json_object_set_new(fig, "bytes_written", json_integer((json_int_t)
	    v->io_total.bytes_written));
	json_object_set_new(fig, "io_wait_seconds", json_real(
	    v->io_total.wait_seconds));
}

void
kg_buckets_buffer_line(const struct kg_buckets *v, char **json, char **text)
{
	const struct kg_buckets_io *io = &v->io;
	int dev = kg_engine_tier(v->eng) != NULL;

	*json = kg_xasprintf(", \"%sbuffer_capacity\": %u, \"swaps\": %llu, "
	    "\"swaps_lower_bound\": %llu, \"bytes_read\": %llu, "
	    "\"bytes_written\": %llu, \"io_wait_seconds\": %.3f, "
	    "\"peak_rss_kib\": %llu", dev ? "gpu_" : "", v->capacity,
	    (unsigned long long)io->swaps, (unsigned long long)io->swaps_bound,
	    (unsigned long long)io->bytes_read,
	    (unsigned long long)io->bytes_written, io->wait_seconds,
	    (unsigned long long)kg_peak_rss_kib());
	if (dev)
		*text = kg_xasprintf("%llu swaps to the device (the order's "
		    "%llu, at least %llu), %.2f GB read, %.2f GB written",
		    (unsigned long long)io->swaps,
		    (unsigned long long)io->order_swaps,
		    (unsigned long long)io->swaps_bound,
		    (double)io->bytes_read / 1e9,
		    (double)io->bytes_written / 1e9);
	else
		*text = kg_xasprintf("%llu swaps (at least %llu), %.2f GB "
		    "read, %.2f GB written", (unsigned long long)io->swaps,
		    (unsigned long long)io->swaps_bound,
		    (double)io->bytes_read / 1e9,
		    (double)io->bytes_written / 1e9);
}
