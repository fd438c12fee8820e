/*
 * sampler: negative sampling over the entities of one partition (local
 * IDs 0 .. n-1), and a set of known triples for filtering negatives.
 *
 * Draws are uniform, proportional to degree (an alias table, O(1) per
 * draw), or a mix: of "count" negatives, round(count * degree_frac) come
 * from the degree distribution and the rest uniformly (PBG: half and
 * half).  With entity types, kg_sampler_draw_type() draws uniformly among
 * the entities of one type.  Draws use the caller's RNG (one per thread),
 * so a sampler is shared read-only by threads.
 */
#ifndef KG_SAMPLER_H
#define KG_SAMPLER_H

#include <stddef.h>
#include <stdint.h>

#include "core/util.h"

enum kg_neg_kind { KG_SAMPLE_UNIFORM, KG_SAMPLE_DEGREE, KG_SAMPLE_MIXED };

struct kg_sampler {
	uint64_t n;
	double degree_frac;	/* 0 uniform, 1 degree, between: mixed */
	float *prob;		/* alias table (n), NULL when uniform */
	uint32_t *alias;
	uint32_t n_types;	/* 0 without types */
	uint64_t *type_off;	/* n_types + 1 offsets into type_ents */
	uint32_t *type_ents;	/* entities grouped by type */
};

#define KG_SAMPLER_INIT { 0, 0.0, NULL, NULL, 0, NULL, NULL }

/* "uniform", "degree" or "mixed" (degree fraction 0, 1, 0.5); 0 or -1. */
int kg_neg_parse(const char *name, enum kg_neg_kind *kind,
    double *degree_frac);

/*
 * Prepare sampling over n entities (1 <= n < 2^32).  degree (n counts) is
 * needed when degree_frac > 0; a graph with no edges at all cannot be
 * sampled by degree.  0, or -1 after kg_error().
 */
int kg_sampler_init(struct kg_sampler *s, uint64_t n, const uint64_t *degree,
    double degree_frac);

/* Group entities by type (types[i] in [0, n_types) or -1 = untyped, which
 * are never drawn by kg_sampler_draw_type).  0 or -1. */
int kg_sampler_set_types(struct kg_sampler *s, const int32_t *types,
    uint32_t n_types);

void kg_sampler_release(struct kg_sampler *s);

/* Draw count local IDs into out. */
void kg_sampler_draw(const struct kg_sampler *s, struct kg_rng *rng,
    size_t count, uint32_t *out);

/* Draw count IDs uniformly among entities of type "type"; returns 0, or
 * -1 when the type has no entity (nothing drawn). */
int kg_sampler_draw_type(const struct kg_sampler *s, struct kg_rng *rng,
    int32_t type, size_t count, uint32_t *out);

/*
 * A hash set of (head, relation, tail) triples, for leaving known
 * positives out of the negatives.  Read-only after building, so threads
 * share it.
 */
struct kg_tripleset {
	uint64_t *keys;		/* open addressing; 0 = empty */
	uint64_t mask;
	uint64_t n_entities, n_relations;
};

#define KG_TRIPLESET_INIT { NULL, 0, 0, 0 }

/* Build from n triples (hrt, rows of 3); 0, or -1 after kg_error() when
 * n_entities^2 * n_relations does not fit in 64 bits. */
int kg_tripleset_build(struct kg_tripleset *ts, const int32_t *hrt,
    uint64_t n, uint64_t n_entities, uint64_t n_relations);
int kg_tripleset_has(const struct kg_tripleset *ts, uint64_t h, uint64_t r,
    uint64_t t);
void kg_tripleset_release(struct kg_tripleset *ts);

#endif
