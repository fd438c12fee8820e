#include "predict/typed.h"

#include <stdlib.h>

#include "core/util.h"

static void
set_bit(uint64_t *bits, uint64_t s)
{
	bits[s >> 6] |= (uint64_t)1 << (s & 63);
}

int
kg_typed_build(struct kg_typed *t, const struct kg_dataset *ds)
{
	const struct kg_triples *tr = &ds->split[KG_SPLIT_TRAIN];
	uint64_t i;

	if (ds->types == NULL) {
		kg_error("--typed: dataset '%s' has no entity types (kg-ingest "
		    "--types)", ds->dir);
		return -1;
	}
	t->types = ds->types;
	t->slots = ds->n_types + 1;
	t->words = (t->slots + 63) / 64;
	t->head = kg_xcalloc(ds->n_relations * t->words + 1, sizeof(uint64_t));
	t->tail = kg_xcalloc(ds->n_relations * t->words + 1, sizeof(uint64_t));
	for (i = 0; i < tr->n; i++) {
		const int32_t *x = tr->hrt + 3 * i;
		int32_t th = ds->types[x[0]], tt = ds->types[x[2]];

		set_bit(t->head + (uint64_t)x[1] * t->words, th < 0 ?
		    t->slots - 1 : (uint64_t)th);
		set_bit(t->tail + (uint64_t)x[1] * t->words, tt < 0 ?
		    t->slots - 1 : (uint64_t)tt);
	}
	return 0;
}

void
kg_typed_release(struct kg_typed *t)
{
	free(t->head);
	free(t->tail);
	*t = (struct kg_typed)KG_TYPED_INIT;
}
