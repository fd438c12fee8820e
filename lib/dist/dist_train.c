#include "dist/dist_train.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "io/dataset.h"
#include "io/manifest.h"
#include "io/modeldir.h"
#include "io/npy.h"
#include "io/outdir.h"
#include "graph/partition.h"
#include "core/util.h"

/* RNG streams of the driver (train.c uses 1 << 61 and 1 << 62). */
#define STREAM_PART_INIT (1ULL << 59)
#define STREAM_BUCKET_SHUFFLE (1ULL << 58)

/* Where a partition is between rounds. */
enum { W_NONE, W_MEM, W_PARK, W_CKPT };

struct drv {
	struct kg_dist *d;
	const struct kg_train_opts *o;
	const struct kg_train_job *j;
	const struct kg_dist_train_opts *x;
	struct kg_dataset ds;
	struct kg_partition_book pb;
	struct kg_trainer tr;
	struct kg_dist_sched s;
	uint32_t P;
	size_t dim;
	int32_t *loc;		/* [P] rank holding or parking it */
	uint8_t *where;		/* [P] W_* */
	float **mem;		/* [P] this rank's buffers: rows x (dim + 1) */
	char *park;		/* this rank's parking directory */
	char *ckpt;
	double scale;
	int32_t *pos;		/* positives of a bucket */
	size_t pos_cap;
	struct kg_strbuf log;	/* rank 0: the whole log */
	struct kg_strbuf mine;	/* this rank's lines of the current epoch */
	float *rel_base, *rel_state_base;	/* relations at the last merge */
	int32_t *types;		/* entity types in new IDs (--neg_types) */
	uint64_t held, held_max;	/* bytes of partition buffers */
};

int
kg_dist_mode_parse(const char *s, enum kg_dist_mode *m)
{
	if (strcmp(s, "buckets") == 0)
		*m = KG_DIST_BUCKETS;
	else if (strcmp(s, "ssgd") == 0)
		*m = KG_DIST_SSGD;
	else
		return -1;
	return 0;
}

static uint64_t
part_rows(const struct drv *v, uint32_t p)
{
	return (uint64_t)(v->pb.offsets[p + 1] - v->pb.offsets[p]);
}

static size_t
part_floats(const struct drv *v, uint32_t p)
{
	return (size_t)part_rows(v, p) * (v->dim + 1);
}

static float *
part_alloc(struct drv *v, uint32_t p)
{
	v->held += part_floats(v, p) * sizeof(float);
	if (v->held > v->held_max)
		v->held_max = v->held;
	return kg_xaligned_alloc(64, part_floats(v, p) * sizeof(float));
}

static void
part_free(struct drv *v, uint32_t p, float *buf)
{
	if (buf == NULL)
		return;
	v->held -= part_floats(v, p) * sizeof(float);
	free(buf);
}

static void
attach(struct drv *v, uint32_t p, float *buf)
{
	v->mem[p] = buf;
	v->tr.parts[p].w = buf;
	v->tr.parts[p].state = buf + part_rows(v, p) * v->dim;
}

static void
detach(struct drv *v, uint32_t p)
{
	part_free(v, p, v->mem[p]);
	v->mem[p] = NULL;
	v->tr.parts[p].w = NULL;
	v->tr.parts[p].state = NULL;
}

/* Fresh rows of partition p from the stream (seed, p), state zero. */
static void
part_init(const struct drv *v, uint32_t p, float *buf)
{
	uint64_t n = part_rows(v, p) * v->dim, i;
	struct kg_rng rng;

	kg_rng_seed(&rng, v->o->seed, STREAM_PART_INIT + p);
	for (i = 0; i < n; i++)
		buf[i] = (float)(v->o->init == KG_INIT_NORMAL ?
		    v->scale * kg_rng_normal(&rng) :
		    v->scale * (2.0 * kg_rng_uniform(&rng) - 1.0));
	memset(buf + n, 0, part_rows(v, p) * sizeof(float));
}

static char *
park_path(const struct drv *v, uint32_t p)
{
	char name[32];

	snprintf(name, sizeof(name), "p%u.bin", p);
	return kg_path_join(v->park, name);
}

static int
park_write(const struct drv *v, uint32_t p, const float *buf)
{
	char *path = park_path(v, p);
	size_t bytes = part_floats(v, p) * sizeof(float), done = 0;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600), rc = 0;

	if (fd < 0) {
		kg_error_errno("cannot park partition %u in '%s'", p, path);
		free(path);
		return -1;
	}
	while (done < bytes) {
		ssize_t w = write(fd, (const char *)buf + done, bytes - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			kg_error_errno("cannot write '%s'", path);
			rc = -1;
			break;
		}
		done += (size_t)w;
	}
	if (close(fd) != 0 && rc == 0) {
		kg_error_errno("cannot write '%s'", path);
		rc = -1;
	}
	free(path);
	return rc;
}

static int
park_read(const struct drv *v, uint32_t p, float *buf)
{
	char *path = park_path(v, p);
	size_t bytes = part_floats(v, p) * sizeof(float), done = 0;
	int fd = open(path, O_RDONLY), rc = 0;

	if (fd < 0) {
		kg_error_errno("cannot read parked partition '%s'", path);
		free(path);
		return -1;
	}
	while (done < bytes) {
		ssize_t r = read(fd, (char *)buf + done, bytes - done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			kg_error_errno("cannot read '%s'", path);
			rc = -1;
			break;
		}
		done += (size_t)r;
	}
	close(fd);
	unlink(path);
	free(path);
	return rc;
}

/* Read dir/name (float32, rows x cols) into dst. */
static int
read_f32(const char *dir, const char *name, uint64_t rows, uint64_t cols,
    float *dst)
{
	struct kg_npy a = KG_NPY_INIT;
	char *path = kg_path_join(dir, name);
	int rc = -1;

	if (kg_npy_read_expect(path, KG_DT_F4, cols > 0 ? 2 : 1, &a) < 0)
		goto out;
	if (a.shape[0] != rows || (cols > 0 && a.shape[1] != cols)) {
		kg_error("checkpoint file '%s' does not have %llu rows of "
		    "%llu", path, (unsigned long long)rows,
		    (unsigned long long)(cols ? cols : 1));
		goto out;
	}
	memcpy(dst, a.data, a.nbytes);
	rc = 0;
out:
	kg_npy_release(&a);
	free(path);
	return rc;
}

static int
ckpt_read(const struct drv *v, uint32_t p, float *buf)
{
	char e[48], s[48];

	snprintf(e, sizeof(e), "entities-p%u.npy", p);
	snprintf(s, sizeof(s), "entity_state-p%u.npy", p);
	return read_f32(v->ckpt, e, part_rows(v, p), v->dim, buf) < 0 ||
	    read_f32(v->ckpt, s, part_rows(v, p), 0, buf + part_rows(v, p) *
	    v->dim) < 0 ? -1 : 0;
}

/* Partition p's rows into a new buffer from wherever this rank keeps it
 * (memory excepted). */
static float *
part_fetch(struct drv *v, uint32_t p)
{
	float *buf = part_alloc(v, p);
	int rc = 0;

	switch (v->where[p]) {
	case W_NONE:
		part_init(v, p, buf);
		break;
	case W_PARK:
		rc = park_read(v, p, buf);
		break;
	case W_CKPT:
		rc = ckpt_read(v, p, buf);
		break;
	}
	if (rc < 0) {
		part_free(v, p, buf);
		return NULL;
	}
	return buf;
}

/*
 * Move the partitions so that every rank holds what round "round" needs
 * (round == nrounds: nothing, every held partition is parked).  Every
 * rank runs the same bookkeeping; each acts on its own part.
 */
static int
transition(struct drv *v, uint32_t round)
{
	uint32_t P = v->P, p, k;
	int me = v->d->rank, rc = -1;
	int32_t *need = kg_xmallocarray(P, sizeof(*need));
	float **rbuf = kg_xcalloc(P, sizeof(*rbuf));
	float **sbuf = kg_xcalloc(P, sizeof(*sbuf));
	struct kg_dist_xfer *xf = kg_xcalloc(2 * (size_t)P + 1, sizeof(*xf));
	size_t nx = 0;

	for (p = 0; p < P; p++)
		need[p] = -1;
	if (round < v->s.nrounds)
		for (k = 0; k < v->s.nranks; k++) {
			const int32_t *h = kg_dist_sched_hold(&v->s, round, k);

			if (h[0] >= 0)
				need[h[0]] = (int32_t)k;
			if (h[1] >= 0)
				need[h[1]] = (int32_t)k;
		}
	for (p = 0; p < P; p++) {
		int32_t s = v->loc[p];

		if (v->where[p] == W_NONE || need[p] == s)
			continue;
		if (need[p] < 0) {
			if (v->where[p] == W_MEM) {
				if (s == me) {
					if (park_write(v, p, v->mem[p]) < 0)
						goto out;
					detach(v, p);
				}
				v->where[p] = W_PARK;
			}
			continue;
		}
		if (s == me) {
			if (v->where[p] == W_MEM)
				sbuf[p] = v->mem[p];
			else if ((sbuf[p] = part_fetch(v, p)) == NULL)
				goto out;
			xf[nx++] = (struct kg_dist_xfer){ sbuf[p],
			    part_floats(v, p) * sizeof(float), need[p],
			    (int)p, 1 };
		}
		if (need[p] == me) {
			rbuf[p] = part_alloc(v, p);
			xf[nx++] = (struct kg_dist_xfer){ rbuf[p],
			    part_floats(v, p) * sizeof(float), s, (int)p, 0 };
		}
	}
	kg_dist_exchange(v->d, xf, nx);
	for (p = 0; p < P; p++) {
		if (sbuf[p] != NULL) {
			if (sbuf[p] == v->mem[p])
				detach(v, p);
			else
				part_free(v, p, sbuf[p]);
			sbuf[p] = NULL;
		}
		if (rbuf[p] != NULL) {
			attach(v, p, rbuf[p]);
			rbuf[p] = NULL;
		} else if (need[p] == me && v->mem[p] == NULL) {
			float *buf = part_fetch(v, p);

			if (buf == NULL)
				goto out;
			attach(v, p, buf);
		}
		if (need[p] >= 0) {
			v->loc[p] = need[p];
			v->where[p] = W_MEM;
		}
	}
	rc = 0;
out:
	for (p = 0; p < P; p++) {
		part_free(v, p, rbuf[p]);
		if (sbuf[p] != NULL && sbuf[p] != v->mem[p])
			part_free(v, p, sbuf[p]);
	}
	free(need);
	free(rbuf);
	free(sbuf);
	free(xf);
	return rc;
}

/* Gather the positives of bucket (a, b), shuffled for the epoch. */
static uint64_t
bucket_positives(struct drv *v, uint32_t a, uint32_t b)
{
	const int64_t *off = v->pb.bucket_off;
	uint32_t P = v->P, bk = a * P + b, inv = b * P + a;
	uint64_t n1 = (uint64_t)(off[bk + 1] - off[bk]), n2 = 0, n, i;
	int32_t nrel = (int32_t)v->ds.n_relations;
	struct kg_rng rng;

	if (v->o->reciprocal)
		n2 = (uint64_t)(off[inv + 1] - off[inv]);
	n = n1 + n2;
	if (3 * n > v->pos_cap) {
		v->pos_cap = 3 * n;
		v->pos = kg_xreallocarray(v->pos, v->pos_cap, sizeof(int32_t));
	}
	memcpy(v->pos, v->pb.bucket_hrt + 3 * off[bk], 3 * n1 *
	    sizeof(int32_t));
	for (i = 0; i < n2; i++) {
		const int32_t *x = v->pb.bucket_hrt + 3 * (off[inv] + (int64_t)i);
		int32_t *y = v->pos + 3 * (n1 + i);

		y[0] = x[2];
		y[1] = x[1] + nrel;
		y[2] = x[0];
	}
	kg_rng_seed(&rng, v->o->seed, STREAM_BUCKET_SHUFFLE +
	    (uint64_t)v->tr.epoch * P * P + bk);
	for (i = n; i > 1; i--) {
		uint64_t k = kg_rng_below(&rng, i);
		int32_t t[3];

		memcpy(t, v->pos + 3 * (i - 1), sizeof(t));
		memcpy(v->pos + 3 * (i - 1), v->pos + 3 * k, sizeof(t));
		memcpy(v->pos + 3 * k, t, sizeof(t));
	}
	return n;
}

/*
 * Merge the ranks' relation tables: each rank's change since the last
 * merge is summed onto the merged value (the sum of everyone's updates,
 * what one shared table would hold), for the parameters and for their
 * optimiser state.  A plain average would divide the relations' step by
 * the rank count.  Nothing to do with one rank.
 */
static void
merge_table(struct drv *v, float *x, float *base, size_t n)
{
	double *delta;
	size_t i;

	if (v->d->size == 1)
		return;
	delta = kg_xmallocarray(n, sizeof(*delta));
	for (i = 0; i < n; i++)
		delta[i] = (double)x[i] - (double)base[i];
	kg_dist_sum_f64(v->d, delta, n);
	for (i = 0; i < n; i++)
		base[i] = x[i] = (float)((double)base[i] + delta[i]);
	free(delta);
}

static void
sync_relations(struct drv *v)
{
	merge_table(v, v->tr.rel, v->rel_base, v->tr.n_rel_rows *
	    v->tr.model.rel_width);
	merge_table(v, v->tr.rel_state, v->rel_state_base,
	    v->tr.n_rel_rows * v->tr.rel_state_width);
}

/* The merge base: the tables as every rank has them now. */
static void
sync_base(struct drv *v)
{
	size_t nr = v->tr.n_rel_rows * v->tr.model.rel_width;
	size_t ns = v->tr.n_rel_rows * v->tr.rel_state_width;

	if (v->rel_base == NULL) {
		v->rel_base = kg_xmallocarray(nr, sizeof(float));
		v->rel_state_base = kg_xmallocarray(ns, sizeof(float));
	}
	memcpy(v->rel_base, v->tr.rel, nr * sizeof(float));
	memcpy(v->rel_state_base, v->tr.rel_state, ns * sizeof(float));
}

/* One epoch; *stats gets { loss sum, positives } over all ranks. */
static int
run_epoch(struct drv *v, double stats[2], double *secs)
{
	uint32_t round, P = v->P;
	int me = v->d->rank;
	double loss_sum = 0.0, t0 = kg_now();
	uint64_t done_sum = 0;
	char *line;

	for (round = 0; round < v->s.nrounds; round++) {
		const uint32_t *b;
		size_t nb, i;

		if (transition(v, round) < 0)
			return -1;
		b = kg_dist_sched_buckets(&v->s, round, (uint32_t)me, &nb);
		for (i = 0; i < nb; i++) {
			uint32_t a = b[i] / P, c = b[i] % P;
			uint64_t n = bucket_positives(v, a, c), done = 0;
			double loss = 0.0, tb = kg_now();

			if (kg_trainer_bucket(&v->tr, a, c, v->pos, n, b[i], 0,
			    &loss, &done) < 0)
				return -1;
			loss_sum += loss;
			done_sum += done;
			line = kg_xasprintf("{\"epoch\": %u, \"round\": %u, "
			    "\"rank\": %d, \"bucket\": [%u, %u], "
			    "\"triples\": %llu, \"loss\": %.9g, "
			    "\"seconds\": %.4f}\n", v->tr.epoch + 1, round, me,
			    a, c, (unsigned long long)done, done ?
			    loss / (double)done : 0.0, kg_now() - tb);
			kg_strbuf_add(&v->mine, line);
			free(line);
		}
		kg_dist_test_hook(v->d, (uint64_t)v->tr.epoch *
		    v->s.nrounds + round + 1);
		if (v->x->rel_sync > 0 && (round + 1) % v->x->rel_sync == 0 &&
		    round + 1 < v->s.nrounds)
			sync_relations(v);
	}
	sync_relations(v);
	stats[0] = loss_sum;
	stats[1] = (double)done_sum;
	kg_dist_sum_f64(v->d, stats, 2);
	*secs = kg_now() - t0;
	return 0;
}

static json_t *
shape_json(const struct drv *v)
{
	json_t *st = kg_trainer_shape(&v->tr);

	json_object_set_new(st, "nparts", json_integer((json_int_t)v->P));
	json_object_set_new(st, "nranks", json_integer((json_int_t)v->d->size));
	return st;
}

/* Rank 0's manifest of a checkpoint: every file with its shape and
 * checksum, so that a resumed run can check what the ranks wrote. */
static int
write_ckpt_manifest(const struct drv *v, const char *tmp)
{
	static const char *const shared[] = { "relations.npy",
	    "relation_state.npy", "state.json", "train_log.jsonl" };
	struct kg_manifest man = KG_MANIFEST_INIT;
	char name[48];
	uint32_t p;
	size_t i;
	int rc = -1;

	kg_manifest_init(&man, v->j->argc, v->j->argv);
	for (i = 0; i < KG_ARRAY_LEN(shared); i++)
		if (kg_manifest_add_file(&man, tmp, shared[i]) < 0)
			goto out;
	for (p = 0; p < v->P; p++) {
		snprintf(name, sizeof(name), "entities-p%u.npy", p);
		if (kg_manifest_add_file(&man, tmp, name) < 0)
			goto out;
		snprintf(name, sizeof(name), "entity_state-p%u.npy", p);
		if (kg_manifest_add_file(&man, tmp, name) < 0)
			goto out;
	}
	kg_manifest_set_config(&man, "partitions",
	    json_string(v->x->partitions));
	rc = kg_manifest_write(&man, tmp);
out:
	kg_manifest_release(&man);
	return rc;
}

/* Every rank writes the partitions it keeps into the checkpoint; rank 0
 * writes the rest and its manifest, and renames it into place. */
static int
save_checkpoint(struct drv *v)
{
	struct kg_outdir od = KG_OUTDIR_INIT;
	char *tmp = NULL, name[48];
	uint64_t len = 0, rs[2], sh[2];
	uint32_t p;
	int rc = 0, me = v->d->rank, all;
	json_t *st, *own;

	if (me == 0) {
		rc = kg_outdir_begin(&od, v->ckpt, 1);
		if (rc == 0)
			len = strlen(od.tmp) + 1;
	}
	kg_dist_bcast(v->d, &len, sizeof(len), 0);
	if (len == 0)
		return -1;
	tmp = me == 0 ? kg_xstrdup(od.tmp) : kg_xmalloc(len);
	kg_dist_bcast(v->d, tmp, len, 0);
	for (p = 0; p < v->P && rc == 0; p++) {
		float *buf;

		if (v->loc[p] != me)
			continue;
		buf = v->mem[p] != NULL ? v->mem[p] : part_fetch(v, p);
		if (buf == NULL) {
			rc = -1;
			break;
		}
		if (v->where[p] == W_PARK && park_write(v, p, buf) < 0)
			rc = -1;
		sh[0] = part_rows(v, p);
		sh[1] = v->dim;
		snprintf(name, sizeof(name), "%s/entities-p%u.npy", tmp, p);
		if (rc == 0 && kg_npy_write(name, KG_DT_F4, 2, sh, buf) < 0)
			rc = -1;
		snprintf(name, sizeof(name), "%s/entity_state-p%u.npy", tmp,
		    p);
		if (rc == 0 && kg_npy_write(name, KG_DT_F4, 1, sh,
		    buf + sh[0] * v->dim) < 0)
			rc = -1;
		if (buf != v->mem[p])
			part_free(v, p, buf);
	}
	all = rc < 0;
	{
		uint64_t bad = (uint64_t)all;

		kg_dist_max_u64(v->d, &bad, 1);
		all = (int)bad;
	}
	if (me == 0) {
		char *p1 = kg_path_join(tmp, "relations.npy");
		char *p2 = kg_path_join(tmp, "relation_state.npy");
		char *js;

		st = shape_json(v);
		json_object_set_new(st, "epoch", json_integer(v->tr.epoch));
		json_object_set_new(st, "step", json_integer((json_int_t)
		    v->tr.step));
		json_object_set_new(st, "last_loss",
		    json_real(v->tr.last_loss));
		json_object_set_new(st, "seed", json_integer((json_int_t)
		    v->o->seed));
		own = json_array();
		for (p = 0; p < v->P; p++)
			json_array_append_new(own, json_integer(v->loc[p]));
		json_object_set_new(st, "partition_rank", own);
		js = json_dumps(st, JSON_INDENT(2) | JSON_SORT_KEYS);
		json_decref(st);
		rs[0] = v->tr.n_rel_rows;
		rs[1] = v->tr.model.rel_width;
		sh[0] = v->tr.n_rel_rows;
		sh[1] = v->tr.rel_state_width;
		if (!all && (kg_npy_write(p1, KG_DT_F4, 2, rs, v->tr.rel) < 0 ||
		    kg_npy_write(p2, KG_DT_F4, 2, sh, v->tr.rel_state) < 0 ||
		    kg_write_text(tmp, "state.json", js) < 0 ||
		    kg_write_text(tmp, "train_log.jsonl", v->log.s ?
		    v->log.s : "") < 0 || write_ckpt_manifest(v, tmp) < 0))
			all = 1;
		free(js);
		free(p1);
		free(p2);
		if (all) {
			kg_outdir_abort(&od);
			rc = -1;
		} else
			rc = kg_outdir_commit(&od);
	}
	free(tmp);
	kg_dist_barrier(v->d);
	return all ? -1 : rc;
}

static int
load_checkpoint(struct drv *v)
{
	struct kg_manifest man = KG_MANIFEST_INIT;
	json_error_t jerr;
	char *path = kg_path_join(v->ckpt, "state.json");
	json_t *have = json_load_file(path, 0, &jerr), *want = shape_json(v);
	json_t *own;
	size_t len;
	uint32_t p;
	int rc = -1;

	if (have == NULL) {
		kg_error("cannot read checkpoint '%s': %s", path, jerr.text);
		goto out;
	}
	/* Every file the ranks wrote, complete and of the recorded shape. */
	rc = kg_manifest_load(&man, v->ckpt, "kg-train");
	if (rc < 0 || (rc = kg_manifest_verify(&man, v->ckpt, 0)) < 0)
		goto out;
	rc = -1;
	if (kg_checkpoint_shape_check(v->ckpt, want, have) < 0)
		goto out;
	own = json_object_get(have, "partition_rank");
	if (!json_is_array(own) || json_array_size(own) != v->P) {
		kg_error("checkpoint '%s': partition_rank is missing", v->ckpt);
		goto out;
	}
	for (p = 0; p < v->P; p++) {
		json_int_t r = json_integer_value(json_array_get(own, p));

		if (r < 0 || r >= v->d->size) {
			kg_error("checkpoint '%s': bad partition_rank", v->ckpt);
			goto out;
		}
		v->loc[p] = (int32_t)r;
		v->where[p] = W_CKPT;
	}
	if (read_f32(v->ckpt, "relations.npy", v->tr.n_rel_rows,
	    v->tr.model.rel_width, v->tr.rel) < 0 ||
	    read_f32(v->ckpt, "relation_state.npy", v->tr.n_rel_rows,
	    v->tr.rel_state_width, v->tr.rel_state) < 0)
		goto out;
	v->tr.epoch = (uint32_t)json_integer_value(json_object_get(have,
	    "epoch"));
	v->tr.step = (uint64_t)json_integer_value(json_object_get(have,
	    "step"));
	v->tr.last_loss = json_number_value(json_object_get(have,
	    "last_loss"));
	if (v->d->rank == 0) {
		free(path);
		path = kg_path_join(v->ckpt, "train_log.jsonl");
		if (kg_path_exists(path)) {
			char *t = kg_read_file(path, &len);

			if (t == NULL)
				goto out;
			kg_strbuf_add(&v->log, t);
			free(t);
		}
	}
	rc = 0;
out:
	kg_manifest_release(&man);
	json_decref(have);
	json_decref(want);
	free(path);
	return rc;
}

/* A zero-filled float32 array file of the given shape; *off gets where
 * its data starts. */
static int
npy_zeros(const char *path, int ndim, const uint64_t *shape, size_t *off)
{
	struct kg_npy_writer w;
	uint64_t row_shape[1] = { ndim == 2 ? shape[1] : 0 }, i, sh[8];
	size_t rowf = ndim == 2 ? (size_t)shape[1] : 1, batch = 1024;
	float *zero = kg_xcalloc(batch * rowf, sizeof(float));
	enum kg_dtype dt;
	int nd, rc = 0;

	if (kg_npy_writer_open(&w, path, KG_DT_F4, ndim, row_shape) < 0) {
		free(zero);
		return -1;
	}
	for (i = 0; i < shape[0] && rc == 0; i += batch)
		rc = kg_npy_writer_append(&w, zero, shape[0] - i < batch ?
		    shape[0] - i : batch);
	free(zero);
	if (rc < 0) {
		kg_npy_writer_abort(&w);
		return -1;
	}
	if (kg_npy_writer_close(&w) < 0 ||
	    kg_npy_read_header(path, &dt, &nd, sh, off) < 0)
		return -1;
	return 0;
}

static int
pwrite_all(int fd, const void *buf, size_t n, off_t at, const char *path)
{
	const char *p = buf;

	while (n > 0) {
		ssize_t w = pwrite(fd, p, n, at);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			kg_error_errno("cannot write '%s'", path);
			return -1;
		}
		p += w;
		n -= (size_t)w;
		at += w;
	}
	return 0;
}

static json_t *
config_json(const struct drv *v)
{
	const struct kg_train_opts *o = v->o;

	return json_pack("{s:s, s:I, s:I, s:f, s:I, s:s, s:f, s:I, s:I, "
	    "s:I, s:s, s:s, s:I, s:I, s:I}",
	    "loss", kg_loss_name(o->loss.kind),
	    "batch_size", (json_int_t)o->batch_size,
	    "neg_sample_size", (json_int_t)o->neg_sample_size,
	    "lr", o->lr,
	    "epochs", (json_int_t)o->epochs,
	    "rel_optimizer", kg_optim_name(o->rel_optim),
	    "neg_degree_fraction", o->degree_frac,
	    "seed", (json_int_t)o->seed,
	    "num_thread", (json_int_t)o->threads,
	    "regularization_norm", (json_int_t)o->reg_norm,
	    "dist", "buckets",
	    "partitions", v->x->partitions,
	    "nparts", (json_int_t)v->P,
	    "ranks", (json_int_t)v->d->size,
	    "rel_sync", (json_int_t)v->x->rel_sync);
}

/*
 * Rank 0 writes the model dir; the others send it their partitions one at
 * a time, and rank 0 puts every row at its original entity ID.
 */
static int
write_model(struct drv *v, json_t *fig)
{
	struct kg_outdir od = KG_OUTDIR_INIT;
	struct kg_manifest man = KG_MANIFEST_INIT;
	uint64_t es[2] = { v->tr.n_entities, v->dim }, ss[1] = {
	    v->tr.n_entities }, rs[2] = { v->tr.n_rel_rows,
	    v->tr.model.rel_width }, bad = 0, i;
	char *ep = NULL, *sp = NULL, *rp = NULL;
	size_t eoff = 0, soff = 0;
	int me = v->d->rank, efd = -1, sfd = -1, rc = 0;
	const struct kg_model *m = &v->tr.model;
	const char *key;
	json_t *cfg, *val;
	uint32_t p;

	if (me == 0) {
		rc = kg_outdir_begin(&od, v->j->output, v->j->force);
		if (rc == 0) {
			ep = kg_outdir_file(&od, "entities.npy");
			sp = kg_outdir_file(&od, "entity_state.npy");
			rp = kg_outdir_file(&od, "relations.npy");
			rc = npy_zeros(ep, 2, es, &eoff) < 0 ||
			    npy_zeros(sp, 1, ss, &soff) < 0 ? -1 : 0;
		}
		if (rc == 0) {
			efd = open(ep, O_WRONLY);
			sfd = open(sp, O_WRONLY);
			if (efd < 0 || sfd < 0) {
				kg_error_errno("cannot open '%s'", ep);
				rc = -1;
			}
		}
	}
	bad = rc < 0;
	kg_dist_max_u64(v->d, &bad, 1);
	for (p = 0; p < v->P && !bad; p++) {
		int32_t s = v->loc[p];
		float *buf = NULL, *own = NULL;
		struct kg_dist_xfer xf;
		uint64_t rows = part_rows(v, p), base;

		if (s == me) {
			buf = v->mem[p] != NULL ? v->mem[p] :
			    (own = part_fetch(v, p));
			if (buf == NULL)
				return -1;
		}
		if (s != 0 && (me == s || me == 0)) {
			if (me == 0)
				buf = own = part_alloc(v, p);
			xf = (struct kg_dist_xfer){ buf, part_floats(v, p) *
			    sizeof(float), me == 0 ? s : 0, (int)p, me != 0 };
			kg_dist_exchange(v->d, &xf, 1);
		}
		if (me == 0) {
			base = (uint64_t)v->pb.offsets[p];
			for (i = 0; i < rows && rc == 0; i++) {
				uint64_t old = (uint64_t)v->pb.new2old[base + i];

				rc = pwrite_all(efd, buf + i * v->dim,
				    v->dim * sizeof(float), (off_t)(eoff +
				    old * v->dim * sizeof(float)), ep);
				if (rc == 0)
					rc = pwrite_all(sfd, buf + rows * v->dim +
					    i, sizeof(float), (off_t)(soff +
					    old * sizeof(float)), sp);
			}
		}
		part_free(v, p, own);
	}
	if (me != 0)
		return 0;
	if (efd >= 0 && (fsync(efd) != 0 || close(efd) != 0) && rc == 0) {
		kg_error_errno("cannot write '%s'", ep);
		rc = -1;
	}
	if (sfd >= 0 && (fsync(sfd) != 0 || close(sfd) != 0) && rc == 0) {
		kg_error_errno("cannot write '%s'", sp);
		rc = -1;
	}
	if (rc < 0 || bad)
		goto out;
	kg_manifest_init(&man, v->j->argc, v->j->argv);
	rc = -1;
	if (kg_manifest_add_input(&man, "dataset", v->j->dataset) < 0 ||
	    kg_manifest_add_input(&man, "partitions", v->x->partitions) < 0 ||
	    kg_npy_write(rp, KG_DT_F4, 2, rs, v->tr.rel) < 0 ||
	    kg_write_text(od.tmp, "train_log.jsonl", v->log.s ? v->log.s :
	    "") < 0 ||
	    kg_manifest_add_file(&man, od.tmp, "entities.npy") < 0 ||
	    kg_manifest_add_file(&man, od.tmp, "relations.npy") < 0 ||
	    kg_manifest_add_file(&man, od.tmp, "entity_state.npy") < 0 ||
	    kg_manifest_add_file(&man, od.tmp, "train_log.jsonl") < 0)
		goto out;
	kg_manifest_set_config(&man, "model",
	    json_string(kg_model_name(m->kind)));
	kg_manifest_set_config(&man, "dim", json_integer(m->dim));
	kg_manifest_set_config(&man, "rel_dim", json_integer(m->rel_dim));
	kg_manifest_set_config(&man, "gamma", json_real(m->gamma));
	kg_manifest_set_config(&man, "reciprocal",
	    json_boolean(v->o->reciprocal));
	kg_manifest_set_config(&man, "n_entities",
	    json_integer((json_int_t)v->tr.n_entities));
	kg_manifest_set_config(&man, "n_relations",
	    json_integer((json_int_t)v->tr.n_relations));
	kg_manifest_set_config(&man, "dataset", json_string(v->j->dataset));
	cfg = config_json(v);
	json_object_foreach(cfg, key, val)
		kg_manifest_set_config(&man, key, json_incref(val));
	json_decref(cfg);
	json_object_foreach(fig, key, val)
		kg_manifest_set_figure(&man, key, json_incref(val));
	if (kg_manifest_write(&man, od.tmp) < 0)
		goto out;
	rc = kg_outdir_commit(&od);
out:
	if (rc < 0 || bad)
		kg_outdir_abort(&od);
	kg_manifest_release(&man);
	free(ep);
	free(sp);
	free(rp);
	return rc < 0 || bad ? -1 : 0;
}

static int
setup(struct drv *v)
{
	const struct kg_train_opts *o = v->o;
	uint64_t n, nk, i;
	int32_t *known;
	uint32_t p;
	int rc;

	rc = kg_dataset_load(&v->ds, v->j->dataset);
	if (rc < 0)
		return rc;
	rc = kg_partition_book_load(&v->pb, v->x->partitions);
	if (rc < 0)
		return rc;
	n = v->ds.split[KG_SPLIT_TRAIN].n;
	if (v->pb.n_nodes != v->ds.n_entities || v->pb.n_edges != n) {
		kg_error("partitions '%s' were made for %llu entities and %llu "
		    "train triples, but dataset '%s' has %llu and %llu; re-run "
		    "kg-partition", v->x->partitions,
		    (unsigned long long)v->pb.n_nodes,
		    (unsigned long long)v->pb.n_edges, v->j->dataset,
		    (unsigned long long)v->ds.n_entities,
		    (unsigned long long)n);
		return -1;
	}
	if (o->use_types && v->ds.types == NULL) {
		kg_error("--neg_types: dataset '%s' has no entity types",
		    v->j->dataset);
		return -1;
	}
	v->P = v->pb.nparts;
	for (p = 0; p < v->P; p++)
		if (part_rows(v, p) == 0) {
			kg_error("partition %u of '%s' is empty; use fewer "
			    "partitions", p, v->x->partitions);
			return -1;
		}
	if (kg_dist_sched_build(&v->s, v->P, (uint32_t)v->d->size) < 0)
		return -1;
	/* Known positives in new IDs: the train triples and, with
	 * reciprocal relations, their inverses. */
	nk = o->reciprocal ? 2 * n : n;
	known = kg_xmallocarray(3 * nk + 3, sizeof(*known));
	memcpy(known, v->pb.bucket_hrt, 3 * n * sizeof(*known));
	for (i = n; i < nk; i++) {
		const int32_t *x = v->pb.bucket_hrt + 3 * (i - n);

		known[3 * i] = x[2];
		known[3 * i + 1] = x[1] + (int32_t)v->ds.n_relations;
		known[3 * i + 2] = x[0];
	}
	if (o->use_types) {
		v->types = kg_xmallocarray(v->ds.n_entities, sizeof(*v->types));
		for (i = 0; i < v->ds.n_entities; i++)
			v->types[i] = v->ds.types[v->pb.new2old[i]];
	}
	/* The trainer allocates no entity rows: partitions come and go. */
	rc = kg_trainer_init_parts(&v->tr, o, v->ds.n_entities,
	    v->ds.n_relations, v->P, v->pb.offsets, v->pb.bucket_hrt, n,
	    known, nk, v->types, (uint32_t)v->ds.n_types);
	free(known);
	if (rc < 0)
		return -1;
	if (v->tr.own_parts) {
		/* One partition: the trainer made the rows, the driver
		 * brings its own. */
		free(v->tr.parts[0].w);
		free(v->tr.parts[0].state);
		v->tr.parts[0].w = NULL;
		v->tr.parts[0].state = NULL;
		v->tr.own_parts = 0;
	}
	v->dim = v->tr.model.dim;
	v->scale = o->init_scale > 0.0 ? o->init_scale :
	    (o->gamma + 2.0) / (double)o->dim;
	v->loc = kg_xmallocarray(v->P, sizeof(*v->loc));
	v->where = kg_xcalloc(v->P, sizeof(*v->where));
	v->mem = kg_xcalloc(v->P, sizeof(*v->mem));
	for (p = 0; p < v->P; p++)
		v->loc[p] = -1;
	return 0;
}

static void
teardown(struct drv *v)
{
	uint32_t p;

	if (v->mem != NULL)
		for (p = 0; p < v->P; p++)
			detach(v, p);
	if (v->tr.parts != NULL)
		kg_trainer_release(&v->tr);
	free(v->types);
	kg_dist_sched_release(&v->s);
	kg_partition_book_release(&v->pb);
	kg_dataset_release(&v->ds);
	if (v->park != NULL)
		kg_rmtree(v->park);
	free(v->park);
	free(v->ckpt);
	free(v->loc);
	free(v->where);
	free(v->mem);
	free(v->pos);
	free(v->rel_base);
	free(v->rel_state_base);
	free(v->log.s);
	free(v->mine.s);
}

static int
make_park_dir(struct drv *v)
{
	const char *base = getenv("TMPDIR");
	char *tmpl = kg_xasprintf("%s/kgpipe-park.%d.XXXXXX",
	    base && *base ? base : "/tmp", v->d->rank);

	if (mkdtemp(tmpl) == NULL) {
		kg_error_errno("cannot create a parking directory '%s'", tmpl);
		free(tmpl);
		return -1;
	}
	v->park = tmpl;
	return 0;
}

/* 0 on every rank, or -1 on every rank when any rank failed. */
static int
agree(struct drv *v, int rc)
{
	uint64_t bad = rc < 0;

	kg_dist_max_u64(v->d, &bad, 1);
	return bad ? -1 : 0;
}

int
kg_dist_train_run(struct kg_dist *d, const struct kg_train_opts *o,
    const struct kg_train_job *j, const struct kg_dist_train_opts *x)
{
	struct drv v;
	uint64_t *rss = NULL, bytes0 = 0, bytes[2];
	double secs_total = 0.0, st[2], secs = 0.0;
	int rc = -1, show = d->rank == 0 && !j->quiet && (j->progress ||
	    isatty(2));
	json_t *fig, *jr;
	char *gathered, *line;
	int i;

	memset(&v, 0, sizeof(v));
	v.d = d;
	v.o = o;
	v.j = j;
	v.x = x;
	if (kg_train_opts_check(o) < 0)
		return -1;
	if (o->max_step > 0 || j->valid_every > 0) {
		kg_error("--max_step and --valid_every are not supported with "
		    "partitions");
		return -1;
	}
	if (d->rank == 0 && !j->force && kg_path_exists(j->output)) {
		kg_error("output '%s' exists; use --force to replace it",
		    j->output);
		rc = -1;
	} else
		rc = 0;
	if (agree(&v, rc) < 0)
		return -1;
	rc = setup(&v);
	if (agree(&v, rc) < 0) {
		teardown(&v);
		return rc == KG_ERR_VERSION ? KG_ERR_VERSION : -1;
	}
	rc = make_park_dir(&v);
	v.ckpt = j->checkpoint_dir ? kg_xstrdup(j->checkpoint_dir) :
	    kg_xasprintf("%s.ckpt", j->output);
	if (rc == 0 && j->resume) {
		if (kg_path_exists(v.ckpt)) {
			rc = load_checkpoint(&v);
			if (rc == 0 && show)
				fprintf(stderr, "%s: resuming after epoch %u "
				    "from '%s'\n", kg_progname(), v.tr.epoch,
				    v.ckpt);
		} else if (!j->quiet && d->rank == 0)
			kg_warn("no checkpoint '%s' to resume from; starting "
			    "afresh", v.ckpt);
	}
	if (agree(&v, rc) < 0)
		goto out;
	sync_base(&v);
	while (v.tr.epoch < o->epochs) {
		bytes0 = d->bytes_sent;
		v.mine.len = 0;
		if (v.mine.s != NULL)
			v.mine.s[0] = '\0';
		rc = run_epoch(&v, st, &secs);
		if (rc < 0)	/* peers may be waiting for our partitions */
			kg_dist_abort(d, KG_EXIT_FAIL);
		if (agree(&v, rc) < 0)
			goto out;
		v.tr.epoch++;
		v.tr.last_loss = st[1] > 0 ? st[0] / st[1] : 0.0;
		if (!isfinite(v.tr.last_loss)) {
			if (d->rank == 0)
				kg_error("training diverged in epoch %u; try a "
				    "smaller --lr, --max_grad_norm or a "
				    "regulariser", v.tr.epoch);
			rc = -1;
			goto out;
		}
		secs_total += secs;
		bytes[0] = d->bytes_sent - bytes0;
		kg_dist_sum_u64(d, bytes, 1);
		kg_dist_gather_text(d, v.mine.s ? v.mine.s : "", 0, &gathered);
		if (d->rank == 0) {
			kg_strbuf_add(&v.log, gathered);
			line = kg_xasprintf("{\"epoch\": %u, \"loss\": %.9g, "
			    "\"seconds\": %.3f, \"triples_per_second\": %.1f, "
			    "\"ranks\": %d, \"bytes_sent\": %llu}\n",
			    v.tr.epoch, v.tr.last_loss, secs, secs > 0 ?
			    st[1] / secs : 0.0, d->size,
			    (unsigned long long)bytes[0]);
			kg_strbuf_add(&v.log, line);
			free(line);
			if (show)
				fprintf(stderr, "%s: epoch %u/%u: loss %.5f, "
				    "%.0f triples/s, %.1f s, %llu bytes sent\n",
				    kg_progname(), v.tr.epoch, o->epochs,
				    v.tr.last_loss, secs > 0 ? st[1] / secs :
				    0.0, secs, (unsigned long long)bytes[0]);
		}
		free(gathered);
		if (!j->no_checkpoint && save_checkpoint(&v) < 0) {
			rc = -1;
			goto out;
		}
	}
	if (kg_check_finite("relation parameters", v.tr.rel,
	    v.tr.n_rel_rows, v.tr.model.rel_width) < 0) {
		rc = -1;
		goto out;
	}
	rss = kg_xcalloc(2 * (size_t)d->size, sizeof(*rss));
	rss[d->rank] = kg_peak_rss_kib();
	rss[d->size + d->rank] = v.held_max;
	kg_dist_sum_u64(d, rss, 2 * (size_t)d->size);
	bytes[0] = d->bytes_sent;
	bytes[1] = d->bytes_received;
	kg_dist_sum_u64(d, bytes, 2);
	fig = json_object();
	json_object_set_new(fig, "epochs", json_integer(v.tr.epoch));
	json_object_set_new(fig, "final_loss", json_real(v.tr.last_loss));
	json_object_set_new(fig, "train_seconds", json_real(secs_total));
	json_object_set_new(fig, "ranks", json_integer(d->size));
	json_object_set_new(fig, "nparts", json_integer(v.P));
	json_object_set_new(fig, "rounds_per_epoch",
	    json_integer(v.s.nrounds));
	json_object_set_new(fig, "threads", json_integer(v.tr.nthreads));
	json_object_set_new(fig, "bytes_sent", json_integer((json_int_t)
	    bytes[0]));
	jr = json_array();
	for (i = 0; i < d->size; i++)
		json_array_append_new(jr, json_integer((json_int_t)rss[i]));
	json_object_set_new(fig, "peak_rss_kib_per_rank", jr);
	/* The entity rows and Adagrad state a rank had in memory at once,
	 * against the whole table (what one process holds). */
	jr = json_array();
	for (i = 0; i < d->size; i++)
		json_array_append_new(jr, json_integer((json_int_t)
		    rss[d->size + i]));
	json_object_set_new(fig, "partition_bytes_held_max_per_rank", jr);
	json_object_set_new(fig, "entity_table_bytes", json_integer(
	    (json_int_t)(v.tr.n_entities * (v.dim + 1) * sizeof(float))));
	rc = write_model(&v, fig);
	json_decref(fig);
	rc = agree(&v, rc);
	if (rc == 0 && d->rank == 0 && !j->no_checkpoint &&
	    !j->keep_checkpoint && j->checkpoint_dir == NULL &&
	    kg_path_exists(v.ckpt))
		kg_rmtree(v.ckpt);
out:
	free(rss);
	teardown(&v);
	return rc;
}

/* ---- synchronous data-parallel SGD ---- */

struct kg_dist_ssgd {
	struct kg_dist *d;
	size_t max_ent;		/* bound on a share's distinct entity rows */
	struct kg_sparse_rows ent;	/* merged entity rows of a chunk */
	float *rel;		/* n_rel_rows x (rel_width + 1): sum, touched */
	uint32_t *rel_ids;
	float *rel_g;
};

/* The trainer's sync hook: sum the chunk's row gradients over the ranks
 * and apply them, identically on every rank. */
static int
ssgd_sync(void *ctx, struct kg_trainer *tr, const struct kg_row_grads *g)
{
	struct kg_dist_ssgd *s = ctx;
	size_t rw = tr->model.rel_width, n = tr->n_rel_rows, i, nr = 0;

	kg_dist_sparse_sum(s->d, g->ent, g->ent_g, g->n_ent, tr->model.dim,
	    s->max_ent, &s->ent);
	/* Relations are the dense parameters: one all-reduce of the whole
	 * table, with a last column counting the ranks that touched the
	 * row, so that only touched rows are updated (as one process
	 * does; Adam would move untouched rows). */
	memset(s->rel, 0, n * (rw + 1) * sizeof(float));
	for (i = 0; i < g->n_rel; i++) {
		float *row = s->rel + (size_t)g->rel[i] * (rw + 1);

		memcpy(row, g->rel_g + i * rw, rw * sizeof(float));
		row[rw] = 1.0f;
	}
	kg_dist_sum_f32(s->d, s->rel, n * (rw + 1));
	for (i = 0; i < n; i++) {
		const float *row = s->rel + i * (rw + 1);

		if (row[rw] == 0.0f)
			continue;
		s->rel_ids[nr] = (uint32_t)i;
		memcpy(s->rel_g + nr * rw, row, rw * sizeof(float));
		nr++;
	}
	kg_trainer_apply(tr, s->ent.ids, s->ent.g, s->ent.n, s->rel_ids,
	    s->rel_g, nr);
	return 0;
}

struct kg_dist_ssgd *
kg_dist_ssgd_new(struct kg_dist *d)
{
	struct kg_dist_ssgd *s = kg_xcalloc(1, sizeof(*s));

	s->d = d;
	return s;
}

void
kg_dist_ssgd_free(struct kg_dist_ssgd *s)
{
	if (s == NULL)
		return;
	kg_sparse_rows_release(&s->ent);
	free(s->rel);
	free(s->rel_ids);
	free(s->rel_g);
	free(s);
}

int
kg_dist_ssgd_after_init(void *ctx, struct kg_trainer *tr)
{
	struct kg_dist_ssgd *s = ctx;
	struct kg_dist *d = s->d;
	size_t rw = tr->model.rel_width;
	uint64_t st[2] = { tr->epoch, tr->step };

	if (tr->o.one_vs_all) {
		kg_error("--dist ssgd does not support --one_vs_all");
		return -1;
	}
	/* Rank 0's parameters (a resumed checkpoint included) everywhere. */
	kg_dist_bcast(d, tr->parts[0].w, tr->n_entities * tr->model.dim *
	    sizeof(float), 0);
	kg_dist_bcast(d, tr->parts[0].state, tr->n_entities * sizeof(float),
	    0);
	kg_dist_bcast(d, tr->rel, tr->n_rel_rows * rw * sizeof(float), 0);
	kg_dist_bcast(d, tr->rel_state, tr->n_rel_rows * tr->rel_state_width *
	    sizeof(float), 0);
	kg_dist_bcast(d, st, sizeof(st), 0);
	kg_dist_bcast(d, &tr->last_loss, sizeof(tr->last_loss), 0);
	tr->epoch = (uint32_t)st[0];
	tr->step = st[1];
	s->rel = kg_xmallocarray(tr->n_rel_rows * (rw + 1), sizeof(float));
	s->rel_ids = kg_xmallocarray(tr->n_rel_rows, sizeof(uint32_t));
	s->rel_g = kg_xmallocarray(tr->n_rel_rows * rw, sizeof(float));
	/* A share of a chunk touches at most two rows per positive and the
	 * chunk's negatives. */
	{
		size_t cs = tr->o.chunk_size ? tr->o.chunk_size :
		    tr->o.neg_sample_size;

		if (cs > tr->o.batch_size)
			cs = tr->o.batch_size;
		s->max_ent = 2 * ((cs + (size_t)d->size - 1) /
		    (size_t)d->size) + tr->o.neg_sample_size;
	}
	tr->shard_rank = (uint32_t)d->rank;
	tr->shard_size = (uint32_t)d->size;
	tr->sync = ssgd_sync;
	tr->sync_ctx = s;
	return 0;
}

int
kg_dist_ssgd_after_epoch(void *ctx, struct kg_trainer *tr)
{
	struct kg_dist_ssgd *s = ctx;

	/* Each rank's mean is its share of the loss over the global count. */
	kg_dist_sum_f64(s->d, &tr->last_loss, 1);
	return 0;
}
