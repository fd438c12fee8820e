/*
 * The chunk planner (lib/kge/plan.h) on the bundled UMLS triples cut
 * into 4 ID-range partitions, with the negative pool, in-batch and typed
 * negatives: every chunk of every bucket is planned and its plan checked
 * against what plan.h promises (each occurrence's slot points at its
 * row, the distinct rows are distinct and numbered by first occurrence,
 * negatives lie in the partition they must be in, the pool's share has
 * its size, in-batch negatives repeat the positives' corrupted rows and
 * the CPU step masks each positive's own), across a stamp wrap.  Errors
 * planted in a real plan must each be caught by the same checker.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "kge/plan.h"
#include "kge/sampler.h"
#include "test.h"

#include "umls_fixture.h"

#define P 4
#define NTYPES 3

/* UMLS's train triples by bucket (partition of head, of tail) of P
 * equal ID ranges. */
static struct {
	int64_t off[P + 1];
	int32_t *pos[P * P];
	uint64_t n[P * P];
} bk;
static int32_t *types;

static uint32_t
part_of(int32_t e)
{
	uint32_t p = 0;

	while (e >= bk.off[p + 1])
		p++;
	return p;
}

static void
cut(void)
{
	uint64_t i;
	uint32_t p, k;

	for (p = 0; p <= P; p++)
		bk.off[p] = (int64_t)(umls.ent.n * p / P);
	for (k = 0; k < P * P; k++)
		bk.pos[k] = kg_xmallocarray(3 * umls.n[0], sizeof(int32_t));
	for (i = 0; i < umls.n[0]; i++) {
		const int32_t *t = umls.split[0] + 3 * i;

		k = part_of(t[0]) * P + part_of(t[2]);
		memcpy(bk.pos[k] + 3 * bk.n[k]++, t, 3 * sizeof(int32_t));
	}
}

/* A trainer over a memory store of the P partitions, every pool
 * partition chosen and valid; 0 or -1. */
static int
setup(struct kg_trainer *tr, struct kg_store **st, int in_batch, int typed)
{
	struct kg_train_opts o = KG_TRAIN_OPTS_INIT;
	struct kg_store_layout l;
	struct kg_store_init in;
	uint32_t q;

	o.model = KG_MODEL_COMPLEX;
	o.dim = 8;
	o.batch_size = 64;
	o.neg_sample_size = 24;
	o.threads = 1;
	o.neg_pool = 16;
	o.neg_in_batch = in_batch;
	o.use_types = typed;
	l = kg_train_layout(&o, umls.ent.n, P, bk.off);
	in = kg_train_init_rule(&o, KG_STREAM_BUCKET_ENTITY_INIT);
	*st = kg_store_open_mem(&l, &in);
	if (*st == NULL || kg_trainer_init_store(tr, &o, *st, umls.rel.n,
	    umls.split[0], umls.n[0], NULL, 0, typed ? types : NULL,
	    typed ? NTYPES : 0) < 0)
		return -1;
	tr->bucket_chunks = 1;
	for (q = 0; q < P; q++) {
		kg_neg_pool_choose(&tr->pool, q, o.seed, 0);
		tr->pool.valid[q] = 1;
	}
	return 0;
}

static int
in_range(uint64_t e, uint64_t base, uint64_t rows)
{
	return e - base < rows;
}

/* Whether partition q has an entity of type t. */
static int
has_type(uint32_t q, int32_t t)
{
	int64_t e;

	for (e = bk.off[q]; e < bk.off[q + 1]; e++)
		if (types[e] == t)
			return 1;
	return 0;
}

/*
 * The faults of plan p of chunk ch (positives hrt + 3 order[i]), each
 * with one line on stderr when loud; 0 for a plan that keeps plan.h's
 * promises.
 */
static int
check_plan(const struct kg_trainer *tr, const struct kg_plan *p,
    const struct kg_chunk *ch, const int32_t *hrt, const uint64_t *order,
    int loud)
{
	const struct kg_store *st = tr->ents;
	uint64_t pcr = kg_store_part_rows(st, p->pc);
	uint64_t pfr = kg_store_part_rows(st, p->pf);
	size_t len = p->len, hand = p->n_local + p->n_other, i, j, k, seen = 0;
	size_t N = tr->o.neg_sample_size;
	int bad = 0;

#define FAULT(...) do {							\
	if (loud) {							\
		fprintf(stderr, "# chunk at %llu: ",			\
		    (unsigned long long)ch->start);			\
		fprintf(stderr, __VA_ARGS__);				\
		fputc('\n', stderr);					\
	}								\
	bad++;								\
} while (0)

	if (len != ch->len || p->side != ch->side)
		FAULT("len %zu side %u, not the chunk's", len, p->side);
	if (p->pc != (ch->side == KG_SIDE_TAIL ? p->part[1] : p->part[0]) ||
	    p->pc_base != st->off[p->pc] || p->pf_base != st->off[p->pf])
		FAULT("corrupted partition %u base %llu", p->pc,
		    (unsigned long long)p->pc_base);
	for (i = 0; i < len; i++)
		if (memcmp(p->tri + 3 * i, hrt + 3 * order[i],
		    3 * sizeof(int32_t)) != 0)
			FAULT("positive %zu is not the order's", i);
	/* Negatives: n in all, the pool's share untyped, each where it
	 * must be. */
	if (hand + p->n_pool != N)
		FAULT("%zu + %zu + %zu negatives, not %zu", p->n_local,
		    p->n_other, p->n_pool, N);
	k = ch->type < 0 ? kg_neg_pool_share(&tr->pool, p->pc, N) : 0;
	if (p->n_other + p->n_pool != k)
		FAULT("the pool gave %zu + %zu, its share is %zu", p->n_other,
		    p->n_pool, k);
	if (p->pf == p->pc && p->n_other != 0)
		FAULT("%zu pool draws moved inside one partition",
		    p->n_other);
	for (j = 0; j < p->n_local; j++)
		if (p->neg[j] >= pcr)
			FAULT("local negative %zu: %u outside partition %u", j,
			    p->neg[j], p->pc);
	for (j = p->n_local; j < hand; j++)
		if (p->neg[j] >= pfr)
			FAULT("other negative %zu: %u outside partition %u", j,
			    p->neg[j], p->pf);
	for (j = hand; j < N; j++) {
		uint64_t g;

		if (p->neg[j] >= tr->pool.off[P]) {
			FAULT("pool negative %zu: slot %u", j, p->neg[j]);
			continue;
		}
		g = tr->pool.gid[p->neg[j]];
		if (in_range(g, st->off[p->pc], pcr) ||
		    (p->pf != p->pc && in_range(g, st->off[p->pf], pfr)))
			FAULT("pool negative %zu (row %llu) is in the bucket", j,
			    (unsigned long long)g);
	}
	if (ch->type >= 0 && has_type(p->pc, ch->type))
		for (j = 0; j < p->n_local; j++)
			if (types[p->pc_base + p->neg[j]] != ch->type)
				FAULT("negative %zu of type %d in a chunk of "
				    "type %d", j,
				    types[p->pc_base + p->neg[j]], ch->type);
	/* Occurrences: the plan's order, each slot at its row, slots
	 * numbered by first occurrence, in-batch ones repeating. */
	if (p->n_batch != (tr->o.neg_in_batch ? len : 0) ||
	    p->n_occ != 2 * len + hand + p->n_batch)
		FAULT("%zu occurrences, %zu in-batch", p->n_occ, p->n_batch);
	for (i = 0; i < len && p->n_occ >= 2 * len; i++)
		if (p->occ[i] != (uint64_t)p->tri[3 * i + p->fcol] ||
		    p->occ[len + i] != (uint64_t)p->tri[3 * i + p->ccol])
			FAULT("occurrences of positive %zu", i);
	for (j = 0; j < hand && 2 * len + hand <= p->n_occ; j++)
		if (p->occ[2 * len + j] != (j < p->n_local ? p->pc_base :
		    p->pf_base) + p->neg[j])
			FAULT("occurrence of negative %zu", j);
	for (i = 0; i < p->n_batch && p->n_occ == 2 * len + hand +
	    p->n_batch; i++)
		if (p->occ[2 * len + hand + i] != p->occ[len + i])
			FAULT("in-batch negative %zu is not positive %zu's", i,
			    i);
	for (k = 0; k < p->n_occ; k++) {
		/* The plan's walk: fixed, corrupted, fixed, ..., the rest. */
		size_t o = k < 2 * len ? (k % 2 ? len + k / 2 : k / 2) : k;

		if (p->slot[o] > seen || p->slot[o] >= p->n_ent) {
			FAULT("occurrence %zu: slot %u, %zu rows before it", o,
			    p->slot[o], seen);
			continue;
		}
		if (p->slot[o] == seen)
			seen++;
		if (p->uent[p->slot[o]] != p->occ[o])
			FAULT("occurrence %zu (row %llu) in the slot of %llu",
			    o, (unsigned long long)p->occ[o],
			    (unsigned long long)p->uent[p->slot[o]]);
	}
	if (seen != p->n_ent)
		FAULT("%zu distinct rows met, %zu listed", seen, p->n_ent);
	for (k = 0; k < p->n_ent; k++)
		for (j = k + 1; j < p->n_ent; j++)
			if (p->uent[k] == p->uent[j])
				FAULT("rows %zu and %zu are both %llu", k, j,
				    (unsigned long long)p->uent[k]);
	for (i = 0; i < len; i++)
		if (p->rslot[i] >= p->n_rel ||
		    p->urel[p->rslot[i]] != (uint32_t)p->tri[3 * i + 1])
			FAULT("positive %zu's relation slot", i);
	for (k = 0; k < p->n_rel; k++)
		for (j = k + 1; j < p->n_rel; j++)
			if (p->urel[k] == p->urel[j])
				FAULT("relation rows %zu and %zu are both %u", k,
				    j, p->urel[k]);
#undef FAULT
	return bad;
}

/* Plan every chunk of every bucket of tr in epochs e0 and e0 + 1 (sides
 * alternate); the count of faults, *nch_all the chunks planned, *n_other
 * the pool draws moved to the other partition, *n_typed typed chunks. */
static int
plan_all(struct kg_trainer *tr, uint32_t e0, size_t *nch_all,
    size_t *n_other, size_t *n_typed)
{
	struct kg_plan *p = tr->ws[0].plan;
	uint32_t ph, pt, e;
	int bad = 0;

	*nch_all = *n_other = *n_typed = 0;
	for (e = 0, tr->epoch = e0; e < 2; e++, tr->epoch++)
		for (ph = 0; ph < P; ph++)
			for (pt = 0; pt < P; pt++) {
				uint32_t k = ph * P + pt;
				struct kg_chunk *ch;
				uint64_t *order;
				size_t nch, c;

				nch = kg_plan_chunks(tr, bk.pos[k], bk.n[k], 0,
				    k, &ch, &order);
				kg_plan_bucket(p, tr, ph, pt, 0);
				for (c = 0; c < nch; c++) {
					kg_plan_chunk(p, tr, &ch[c], c,
					    bk.pos[k], order + ch[c].start);
					bad += check_plan(tr, p, &ch[c],
					    bk.pos[k], order + ch[c].start,
					    bad < 5);
					*n_other += p->n_other;
					*n_typed += ch[c].type >= 0;
				}
				*nch_all += nch;
				free(ch);
				free(order);
			}
	tr->epoch = 0;
	return bad;
}

/*
 * Chunk 1 of bucket (1, 2) planned right after chunk 0 across the
 * stamps' wrap: chunk 0 takes stamp 1, chunk 1 wraps to 1 again, and
 * must not take chunk 0's slots.  Its faults.
 */
static int
wrap_fault(struct kg_trainer *tr)
{
	struct kg_plan *p = tr->ws[0].plan;
	uint32_t k = 1 * P + 2;
	struct kg_chunk *ch;
	uint64_t *order;
	size_t nch;
	int bad = 0;

	nch = kg_plan_chunks(tr, bk.pos[k], bk.n[k], 0, k, &ch, &order);
	kg_plan_bucket(p, tr, 1, 2, 0);
	p->stamp = 0;
	kg_plan_chunk(p, tr, &ch[0], 0, bk.pos[k], order + ch[0].start);
	p->stamp = UINT32_MAX;
	if (nch < 2)
		bad++;
	else {
		kg_plan_chunk(p, tr, &ch[1], 1, bk.pos[k], order + ch[1].start);
		bad += check_plan(tr, p, &ch[1], bk.pos[k], order + ch[1].start,
		    1);
		bad += p->stamp != 1;
	}
	free(ch);
	free(order);
	return bad;
}

static void
t_invariants(void)
{
	struct kg_trainer tr;
	struct kg_store *st;
	size_t nch, n_other, n_typed;
	int bad;

	T_CHECK(setup(&tr, &st, 0, 0) == 0);
	bad = plan_all(&tr, 0, &nch, &n_other, &n_typed);
	T_CHECKF(bad == 0 && nch > 2 * P * P, "%d faults in %zu chunks", bad,
	    nch);
	/* The pool's draws of the other partition happen, or the check of
	 * where they go proves nothing. */
	T_CHECKF(n_other > 0, "%zu pool draws in the other partition",
	    n_other);
	T_CHECKF(wrap_fault(&tr) == 0, "a stale slot across the stamp wrap");
	kg_trainer_release(&tr);
	kg_store_free(st);
}

static void
t_typed_and_in_batch(void)
{
	struct kg_trainer tr;
	struct kg_store *st;
	size_t nch, n_other, n_typed;
	int bad;

	T_CHECK(setup(&tr, &st, 1, 1) == 0);
	bad = plan_all(&tr, 0, &nch, &n_other, &n_typed);
	T_CHECKF(bad == 0 && n_typed > 0, "%d faults in %zu chunks (%zu "
	    "typed)", bad, nch, n_typed);
	kg_trainer_release(&tr);
	kg_store_free(st);
}

/* A bucket trained with in-batch negatives: the CPU step's mask of the
 * last chunk excludes each positive's own corrupted entity among the
 * in-batch candidates, and exactly the equal ones. */
static void
t_in_batch_mask(void)
{
	struct kg_trainer tr;
	struct kg_store *st;
	const struct kg_plan *p;
	const struct kg_train_ws *ws;
	size_t i, j, nc, self, wrong = 0, own = 0;
	double loss;
	uint64_t done;

	T_CHECK(setup(&tr, &st, 1, 0) == 0);
	T_CHECK(kg_trainer_bucket(&tr, 1, 2, bk.pos[1 * P + 2], bk.n[1 * P + 2],
	    0, &loss, &done) == 0 && done == bk.n[1 * P + 2]);
	ws = &tr.ws[0];
	p = ws->plan;
	self = p->n_local + p->n_other + p->n_pool;
	nc = self + p->n_batch;
	T_CHECK(p->len > 1 && p->n_batch == p->len);
	for (i = 0; i < p->len; i++)
		for (j = 0; j < nc; j++) {
			int want = j >= self && p->occ[p->len + (j - self)] ==
			    p->occ[p->len + i];

			wrong += ws->skip[i * nc + j] != want;
			own += j == self + i && ws->skip[i * nc + j];
		}
	T_CHECKF(wrong == 0 && own == p->len, "%zu masks wrong, %zu of %zu "
	    "own ones masked", wrong, own, p->len);
	kg_trainer_release(&tr);
	kg_store_free(st);
}

/* Errors planted in a real plan, one at a time: each is caught. */
static void
t_planted(void)
{
	struct kg_trainer tr;
	struct kg_store *st;
	struct kg_plan *p;
	struct kg_chunk *ch;
	uint64_t *order;
	size_t nch, c, len, caught = 0, planted = 0;
	uint32_t k = 1 * P + 3, keep;
	uint64_t keep64;

	T_CHECK(setup(&tr, &st, 1, 0) == 0);
	p = tr.ws[0].plan;
	nch = kg_plan_chunks(&tr, bk.pos[k], bk.n[k], 0, k, &ch, &order);
	kg_plan_bucket(p, &tr, 1, 3, 0);
	for (c = 0; c < nch; c++) {
		kg_plan_chunk(p, &tr, &ch[c], c, bk.pos[k],
		    order + ch[c].start);
		if (p->n_other > 0 && p->n_pool > 0)
			break;
	}
	T_CHECK(c < nch && check_plan(&tr, p, &ch[c], bk.pos[k],
	    order + ch[c].start, 1) == 0);
	len = p->len;
#define PLANT(what, undo) do {						\
	planted++;							\
	what;								\
	caught += check_plan(&tr, p, &ch[c], bk.pos[k],			\
	    order + ch[c].start, 0) > 0;				\
	undo;								\
} while (0)
	/* A slot pointing at another row. */
	keep = p->slot[len];
	PLANT(p->slot[len] = p->slot[0] == keep ? keep + 1 : p->slot[0],
	    p->slot[len] = keep);
	/* Two distinct rows the same. */
	keep64 = p->uent[1];
	PLANT(p->uent[1] = p->uent[0], p->uent[1] = keep64);
	/* A negative outside its partition. */
	keep = p->neg[0];
	PLANT(p->neg[0] = (uint32_t)kg_store_part_rows(st, p->pc),
	    p->neg[0] = keep);
	/* A pool draw of the other partition left in the pool. */
	PLANT(p->n_other--; p->n_pool++, p->n_other++; p->n_pool--);
	/* The pool's share one short. */
	PLANT(p->n_local++; p->n_pool--, p->n_local--; p->n_pool++);
	/* An in-batch negative that is not its positive's. */
	keep64 = p->occ[p->n_occ - 1];
	PLANT(p->occ[p->n_occ - 1] = p->occ[len], p->occ[p->n_occ - 1] =
	    keep64);
	/* A relation slot at another relation. */
	keep = p->rslot[0];
	PLANT(p->rslot[0] = p->n_rel, p->rslot[0] = keep);
#undef PLANT
	T_CHECKF(caught == planted, "%zu of %zu planted errors caught", caught,
	    planted);
	T_CHECK(check_plan(&tr, p, &ch[c], bk.pos[k], order + ch[c].start,
	    1) == 0);
	free(ch);
	free(order);
	kg_trainer_release(&tr);
	kg_store_free(st);
}

int
main(void)
{
	uint64_t e;

	if (load_umls() < 0) {
		printf("1..0 # SKIP examples/data/umls not readable\n");
		return 0;
	}
	cut();
	types = kg_xmallocarray(umls.ent.n, sizeof(*types));
	for (e = 0; e < umls.ent.n; e++)
		types[e] = (int32_t)(e * 7 % NTYPES);
	T_RUN(t_invariants);
	T_RUN(t_typed_and_in_batch);
	T_RUN(t_in_batch_mask);
	T_RUN(t_planted);
	return T_DONE();
}
