/*
 * ingest_split: split mode, a seeded shuffle into train, valid and test,
 * the unseen policy and the final numbering (see ingest_impl.h).
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/ingest_impl.h"
#include "core/util.h"

void
kg_ingest_assign_splits(struct ingest *st)
{
	const double *p = st->o->split;
	/* The triples of an extended dataset keep their splits; the new ones
	 * (all of them without --extend) are split. */
	uint64_t o = st->old_n, m = st->n - o;
	uint64_t nv = (uint64_t)llround(p[1] * (double)m);
	uint64_t nt = (uint64_t)llround(p[2] * (double)m);
	uint8_t *lab;
	uint64_t i, j;
	struct kg_rng rng;
	uint8_t tmp;

	if (nv + nt > m)
		nt = m - nv;
	st->label = kg_xmalloc(st->n ? st->n : 1);
	if (o > 0)
		memcpy(st->label, st->old_label, o);
	lab = st->label + o;
	for (i = 0; i < m; i++)
		lab[i] = i < m - nv - nt ? 0 : i < m - nt ? 1 : 2;
	/* Fisher-Yates over the labels: exact counts, input order kept. */
	kg_rng_stream(&rng, st->o->seed, KG_STREAM_INGEST_SPLIT, 0, 0, 0, 0);
	for (i = m; i > 1; i--) {
		j = kg_rng_below(&rng, i);
		tmp = lab[i - 1];
		lab[i - 1] = lab[j];
		lab[j] = tmp;
	}
}

int
kg_ingest_apply_unseen_split(struct ingest *st)
{
	uint8_t *in_e = kg_xcalloc(kg_dict_size(&st->ent) + 1, 1);
	uint8_t *in_r = kg_xcalloc(kg_dict_size(&st->rel) + 1, 1);
	uint64_t i;
	int k, rc = 0;

	for (i = 0; i < st->n; i++) {
		if (st->label[i] != 0)
			continue;
		in_e[st->trip[3 * i]] = 1;
		in_r[st->trip[3 * i + 1]] = 1;
		in_e[st->trip[3 * i + 2]] = 1;
	}
	for (i = st->old_n; i < st->n && rc == 0; i++) {
		const uint32_t *t = &st->trip[3 * i];

		if (st->label[i] == 0 || (in_e[t[0]] && in_r[t[1]] &&
		    in_e[t[2]]))
			continue;
		switch (st->o->unseen) {
		case KG_UNSEEN_KEEP:
			st->unseen_kept++;
			break;
		case KG_UNSEEN_DROP:
			st->label[i] = DROPPED;
			st->unseen_dropped++;
			break;
		case KG_UNSEEN_ERROR: {
			uint64_t w = st->where[i];
			const char *file = st->o->inputs[w >> LINE_BITS];
			const char *ns, *local;
			size_t ns_len;

			k = !in_e[t[0]] ? 0 : !in_r[t[1]] ? 1 : 2;
			local = kg_dict_name_parts(k == 1 ? &st->rel : &st->ent,
			    t[k], &ns, &ns_len);
			kg_error("%s:%" PRIu64 ": %s '%.*s%s' of a %s triple "
			    "does not occur in train", strcmp(file, "-") == 0 ?
			    "stdin" : file, w & (((uint64_t)1 << LINE_BITS) - 1),
			    k == 1 ? "relation" : "entity", (int)ns_len, ns,
			    local, split_names[st->label[i]]);
			rc = -1;
			break;
		}
		}
	}
	free(in_e);
	free(in_r);
	return rc;
}

static uint32_t
renumber(uint32_t *perm, uint32_t *inv, uint64_t *n, uint32_t id)
{
	if (perm[id] == NONE) {
		perm[id] = (uint32_t)*n;
		inv[*n] = id;
		(*n)++;
	}
	return perm[id];
}

/* Final IDs in order of first appearance in train, valid, test. */
void
kg_ingest_renumber_split(struct ingest *st)
{
	uint64_t ne = kg_dict_size(&st->ent), nr = kg_dict_size(&st->rel), i;
	int s;

	st->perm_e = kg_xmallocarray(ne + 1, sizeof(uint32_t));
	st->perm_r = kg_xmallocarray(nr + 1, sizeof(uint32_t));
	st->inv_e = kg_xmallocarray(ne + 1, sizeof(uint32_t));
	st->inv_r = kg_xmallocarray(nr + 1, sizeof(uint32_t));
	memset(st->perm_e, 0xff, (ne + 1) * sizeof(uint32_t));
	memset(st->perm_r, 0xff, (nr + 1) * sizeof(uint32_t));
	st->n_ent = st->n_rel = 0;
	/* An extended dataset's IDs first, unchanged. */
	for (i = 0; i < st->old_ent; i++)
		renumber(st->perm_e, st->inv_e, &st->n_ent, (uint32_t)i);
	for (i = 0; i < st->old_rel; i++)
		renumber(st->perm_r, st->inv_r, &st->n_rel, (uint32_t)i);
	for (s = 0; s < 3; s++) {
		for (i = 0; i < st->n; i++) {
			uint32_t *t = &st->trip[3 * i];

			if (st->label[i] != s)
				continue;
			renumber(st->perm_e, st->inv_e, &st->n_ent, t[0]);
			renumber(st->perm_r, st->inv_r, &st->n_rel, t[1]);
			renumber(st->perm_e, st->inv_e, &st->n_ent, t[2]);
			st->count[s]++;
		}
	}
}
