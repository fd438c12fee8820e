/*
 * typed: kg-predict --typed.  For every relation, the entity types seen
 * as its heads and as its tails in the train triples of a dataset with
 * types (kg-ingest --types: types.npy, one type ID per entity, -1 for
 * none, which counts as a type of its own here).  An answer to
 * (h, r, ?) is allowed when its type was seen as a tail of r, an answer
 * to (?, r, t) when its type was seen as a head of r, and a relation r
 * answering (h, ?, t) when the type of h was seen as a head of r and the
 * type of t as a tail.
 *
 * Memory: two bitmaps of n_relations x (n_types + 1) bits.
 */
#ifndef KG_TYPED_H
#define KG_TYPED_H

#include <stdint.h>

#include "io/dataset.h"

struct kg_typed {
	const int32_t *types;	/* the dataset's, not owned */
	uint64_t slots;		/* n_types + 1: slot n_types is "untyped" */
	uint64_t words;		/* 64-bit words per relation */
	uint64_t *head, *tail;	/* relation r: words [r * words, ...) */
};

#define KG_TYPED_INIT { NULL, 0, 0, NULL, NULL }

/*
 * Build from ds's train split.  0, or -1 after kg_error() when ds has no
 * types.  ds must outlive t.
 */
int kg_typed_build(struct kg_typed *t, const struct kg_dataset *ds);
void kg_typed_release(struct kg_typed *t);

/* 1 if entity e may be a tail (tail != 0) or a head of relation r. */
static inline int
kg_typed_allows(const struct kg_typed *t, int tail, int32_t r, int64_t e)
{
	int64_t ty = t->types[e];
	uint64_t s = ty < 0 ? t->slots - 1 : (uint64_t)ty;
	const uint64_t *bits = (tail ? t->tail : t->head) +
	    (uint64_t)r * t->words;

	return (int)((bits[s >> 6] >> (s & 63)) & 1);
}

#endif
