/* The chunk planner: see plan.h. */
#include "kge/plan.h"

#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "core/util.h"
#include "kge/sampler.h"

void
kg_plan_init(struct kg_plan *p, const struct kg_trainer *tr)
{
	size_t B = kg_train_chunk_size(&tr->o), N = tr->o.neg_sample_size;
	size_t nb = tr->o.neg_in_batch ? B : 0, nocc = 2 * B + N + nb;

	memset(p, 0, sizeof(*p));
	p->cap_B = B;
	p->cap_N = N;
	p->in_batch = tr->o.neg_in_batch != 0;
	p->tri = kg_xmallocarray(3 * (B ? B : 1), sizeof(*p->tri));
	p->neg = kg_xmallocarray(N + 1, sizeof(*p->neg));
	p->occ = kg_xmallocarray(nocc, sizeof(*p->occ));
	p->slot = kg_xmallocarray(nocc, sizeof(*p->slot));
	p->uent = kg_xmallocarray(nocc, sizeof(*p->uent));
	p->rslot = kg_xmallocarray(B ? B : 1, sizeof(*p->rslot));
	p->urel = kg_xmallocarray(B ? B : 1, sizeof(*p->urel));
	/* A bucket holds at most two partitions (one without partitions). */
	p->n_stamp = tr->n_parts == 1 ? tr->n_entities :
	    2 * tr->max_part_rows;
	p->n_rel_rows = tr->n_rel_rows;
	p->ent_stamp = kg_xcalloc(p->n_stamp, sizeof(uint32_t));
	p->ent_slot = kg_xmallocarray(p->n_stamp, sizeof(uint32_t));
	p->rel_stamp = kg_xcalloc(tr->n_rel_rows, sizeof(uint32_t));
	p->rel_slot = kg_xmallocarray(tr->n_rel_rows, sizeof(uint32_t));
}

void
kg_plan_release(struct kg_plan *p)
{
	free(p->tri);
	free(p->neg);
	free(p->occ);
	free(p->slot);
	free(p->uent);
	free(p->rslot);
	free(p->urel);
	free(p->ent_stamp);
	free(p->ent_slot);
	free(p->rel_stamp);
	free(p->rel_slot);
	memset(p, 0, sizeof(*p));
}

void
kg_plan_bucket(struct kg_plan *p, const struct kg_trainer *tr, uint32_t ph,
    uint32_t pt, int ova)
{
	const struct kg_store *st = tr->ents;

	p->part[0] = ph;
	p->part[1] = pt;
	p->base[0] = st->off[ph];
	p->base[1] = st->off[pt];
	p->rows[0] = kg_store_part_rows(st, ph);
	p->rows[1] = ph == pt ? 0 : kg_store_part_rows(st, pt);
	p->ova = ova;
}

static void
next_stamp(struct kg_plan *p)
{
	if (++p->stamp == 0) {
		memset(p->ent_stamp, 0, p->n_stamp * sizeof(uint32_t));
		memset(p->rel_stamp, 0, p->n_rel_rows * sizeof(uint32_t));
		p->stamp = 1;
	}
}

/* Occurrence k is entity e: its slot, a new one if e is new. */
static inline void
put_ent(struct kg_plan *p, size_t k, uint64_t e)
{
	uint64_t key = e - p->base[0] < p->rows[0] ? e - p->base[0] :
	    p->rows[0] + (e - p->base[1]);

	if (p->ent_stamp[key] != p->stamp) {
		p->ent_stamp[key] = p->stamp;
		p->ent_slot[key] = (uint32_t)p->n_ent;
		p->uent[p->n_ent++] = e;
	}
	p->occ[k] = e;
	p->slot[k] = p->ent_slot[key];
}

/*
 * Of the n_pool slots drawn at neg + n_local, move those of rows in pf
 * (pinned with pc, and not pc) to the front as local IDs of pf (n_other
 * of them): their rows are in hand, so an engine scores them as they are
 * and updates them at once, not through the pool's stale copy and
 * waiting gradient.  The draw is the same; only where its rows come
 * from changes.
 */
static void
pool_to_other(struct kg_plan *p, const struct kg_neg_pool *np)
{
	uint32_t *ids = p->neg + p->n_local, t;
	uint64_t rows = p->pf == p->part[0] ? p->rows[0] : p->rows[1];
	size_t j, k = 0;

	p->n_other = 0;
	if (p->pf == p->pc)
		return;
	for (j = 0; j < p->n_pool; j++) {
		uint64_t g = np->gid[ids[j]];

		if (g - p->pf_base >= rows)
			continue;
		t = ids[k];
		ids[k] = (uint32_t)(g - p->pf_base);
		ids[j] = k == j ? ids[k] : t;
		k++;
	}
	p->n_other = k;
	p->n_pool -= k;
}

/* The chunk's negatives from rng: n_local inside pc (of the chunk's
 * type), then the pool's share, its draws in pf moved to the front. */
static void
draw(struct kg_plan *p, const struct kg_trainer *tr, struct kg_rng *rng,
    int32_t type)
{
	const struct kg_sampler *s = &tr->samplers[p->pc];
	size_t n = tr->o.neg_sample_size;

	p->n_pool = type < 0 ? kg_neg_pool_share(&tr->pool, p->pc, n) : 0;
	p->n_local = n - p->n_pool;
	if (type < 0 || kg_sampler_draw_type(s, rng, type, p->n_local,
	    p->neg) < 0)
		kg_sampler_draw(s, rng, p->n_local, p->neg);
	kg_neg_pool_draw(&tr->pool, rng, p->pc, p->n_pool, p->neg +
	    p->n_local);
	pool_to_other(p, &tr->pool);
}

/* The distinct rows and every occurrence's slot (plan.h's order). */
static void
slots(struct kg_plan *p)
{
	size_t len = p->len, hand = p->n_local + p->n_other, i, j;

	next_stamp(p);
	p->n_ent = p->n_rel = 0;
	for (i = 0; i < len; i++) {
		const int32_t *x = p->tri + 3 * i;
		uint32_t r = (uint32_t)x[1];

		if (!p->ova || p->pf != p->pc)
			put_ent(p, i, (uint64_t)x[p->fcol]);
		if (!p->ova)
			put_ent(p, len + i, (uint64_t)x[p->ccol]);
		if (p->rel_stamp[r] != p->stamp) {
			p->rel_stamp[r] = p->stamp;
			p->rel_slot[r] = (uint32_t)p->n_rel;
			p->urel[p->n_rel++] = r;
		}
		p->rslot[i] = p->rel_slot[r];
	}
	if (p->ova) {
		p->n_occ = p->pf != p->pc ? len : 0;
		return;
	}
	for (j = 0; j < p->n_local; j++)
		put_ent(p, 2 * len + j, p->pc_base + p->neg[j]);
	for (; j < hand; j++)
		put_ent(p, 2 * len + j, p->pf_base + p->neg[j]);
	for (i = 0; i < p->n_batch; i++)
		put_ent(p, 2 * len + hand + i, p->occ[len + i]);
	p->n_occ = 2 * len + hand + p->n_batch;
}

void
kg_plan_chunk(struct kg_plan *p, const struct kg_trainer *tr,
    const struct kg_chunk *ch, uint64_t c, const int32_t *hrt,
    const uint64_t *order)
{
	int tail = ch->side == KG_SIDE_TAIL;
	struct kg_rng rng;
	size_t i;

	p->len = ch->len;
	p->side = ch->side;
	p->fcol = tail ? 0 : 2;
	p->ccol = 2 - p->fcol;
	p->pc = p->part[tail ? 1 : 0];
	p->pf = p->part[tail ? 0 : 1];
	p->pc_base = p->base[tail ? 1 : 0];
	p->pf_base = p->base[tail ? 0 : 1];
	p->n_local = p->n_other = p->n_pool = p->n_batch = 0;
	p->n_occ = p->n_ent = p->n_rel = 0;
	if (ch->len == 0)
		return;
	for (i = 0; i < ch->len; i++)
		memcpy(p->tri + 3 * i, hrt + 3 * (order ? order[i] : i),
		    3 * sizeof(int32_t));
	if (!p->ova) {
		kg_rng_stream(&rng, tr->o.seed, KG_STREAM_CHUNK, tr->epoch,
		    p->part[0], p->part[1], tr->chunk_base + c);
		draw(p, tr, &rng, ch->type);
		p->n_batch = p->in_batch ? ch->len : 0;
	}
	slots(p);
}

size_t
kg_plan_even(const struct kg_trainer *tr, uint64_t n, uint32_t bucket,
    struct kg_chunk *c)
{
	uint64_t cs = kg_train_chunk_size(&tr->o), m = (n + cs - 1) / cs, k;
	uint64_t flip = tr->epoch + (tr->chunk_base >> 32);

	/* From the bucket's parity alone, a bucket of one chunk would
	 * corrupt the same side in every epoch and never the other. */
	for (k = 0; k < m; k++) {
		c[k].start = n * k / m;
		c[k].len = (uint32_t)(n * (k + 1) / m - c[k].start);
		c[k].side = tr->o.reciprocal ? KG_SIDE_TAIL :
		    (uint8_t)((k + bucket + flip) % 2);
		c[k].type = -1;
		c[k].whole = c[k].len;
	}
	return (size_t)m;
}

/* Chunks of plain batches: batches of batch_size, chunks of cs inside,
 * sides alternating (tails only with reciprocal relations). */
static size_t
plan_plain(const struct kg_trainer *tr, uint64_t n, uint64_t nb,
    uint32_t bucket, struct kg_chunk *c, uint64_t *ord)
{
	uint64_t bs = tr->o.batch_size, cs = kg_train_chunk_size(&tr->o), b, k;
	size_t nch = 0;

	for (k = 0; k < n; k++)
		ord[k] = k;
	if (tr->bucket_chunks)
		return kg_plan_even(tr, n, bucket, c);
	for (b = 0; b < nb; b++) {
		uint64_t end = (b + 1) * bs < n ? (b + 1) * bs : n;

		for (k = b * bs; k < end; k += cs) {
			c[nch].start = k;
			c[nch].len = (uint32_t)(end - k < cs ? end - k : cs);
			c[nch].side = tr->o.reciprocal ? KG_SIDE_TAIL :
			    (uint8_t)(nch % 2);
			c[nch].type = -1;
			c[nch].whole = c[nch].len;
			nch++;
		}
	}
	return nch;
}

/* The (side, type of the corrupted entity) key of position k. */
static uint64_t
type_key(const struct kg_trainer *tr, const int32_t *hrt, uint64_t k,
    const int32_t *types)
{
	uint64_t cs = kg_train_chunk_size(&tr->o), T = tr->samplers[0].n_types;
	int side = tr->o.reciprocal ? 0 : (int)((k / cs) % 2);
	int32_t e = hrt[3 * k + (side == KG_SIDE_TAIL ? 2 : 0)];

	return (uint64_t)side * (T + 1) + (uint64_t)(types[e] + 1);
}

/* Chunks of positions grouped by (side, type) with a counting sort, so
 * that a chunk's negatives share the type. */
static size_t
plan_typed(const struct kg_trainer *tr, const int32_t *hrt, uint64_t n,
    const int32_t *types, struct kg_chunk *c, uint64_t *ord)
{
	uint64_t cs = kg_train_chunk_size(&tr->o), T = tr->samplers[0].n_types;
	uint64_t nkeys = 2 * (T + 1), key, k;
	uint64_t *cnt = kg_xcalloc(nkeys + 1, sizeof(*cnt));
	size_t nch = 0;

	for (k = 0; k < n; k++)
		cnt[type_key(tr, hrt, k, types) + 1]++;
	for (key = 0; key < nkeys; key++)
		cnt[key + 1] += cnt[key];
	for (key = 0; key < nkeys; key++) {
		uint64_t lo = cnt[key], hi = cnt[key + 1];

		for (k = lo; k < hi; k += cs) {
			c[nch].start = k;
			c[nch].len = (uint32_t)(hi - k < cs ? hi - k : cs);
			c[nch].side = (uint8_t)(key / (T + 1));
			c[nch].type = (int32_t)(key % (T + 1)) - 1;
			c[nch].whole = c[nch].len;
			nch++;
		}
	}
	for (k = 0; k < n; k++)
		ord[cnt[type_key(tr, hrt, k, types)]++] = k;
	free(cnt);
	return nch;
}

size_t
kg_plan_chunks(const struct kg_trainer *tr, const int32_t *hrt, uint64_t n,
    uint64_t max_batches, uint32_t bucket, struct kg_chunk **chunks,
    uint64_t **order)
{
	uint64_t bs = tr->o.batch_size, cs = kg_train_chunk_size(&tr->o), nb;
	const int32_t *types = tr->o.use_types ? tr->types : NULL;
	size_t nch, cap, k;

	nb = (n + bs - 1) / bs;
	if (max_batches > 0 && nb > max_batches)
		nb = max_batches;
	if (nb * bs < n)
		n = nb * bs;
	cap = (size_t)(nb * ((bs + cs - 1) / cs) + 4 * (uint64_t)
	    (types ? tr->samplers[0].n_types + 1 : 1));
	*chunks = kg_xmallocarray(cap, sizeof(**chunks));
	*order = kg_xmallocarray(n ? n : 1, sizeof(**order));
	nch = types == NULL ? plan_plain(tr, n, nb, bucket, *chunks, *order) :
	    plan_typed(tr, hrt, n, types, *chunks, *order);
	for (k = 0; tr->shard_size > 1 && k < nch; k++) {
		struct kg_chunk *ch = &(*chunks)[k];
		uint64_t lo = (uint64_t)ch->whole * tr->shard_rank /
		    tr->shard_size;
		uint64_t hi = (uint64_t)ch->whole * (tr->shard_rank + 1) /
		    tr->shard_size;

		ch->start += lo;
		ch->len = (uint32_t)(hi - lo);
	}
	return nch;
}
