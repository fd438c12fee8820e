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

#define KG_SAMPLER_INIT { 0 }

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
 * The negative pool of partitioned training: stale copies of up to k rows
 * of every partition, so that a bucket's negatives come from the whole
 * table and not only from its two partitions (PyTorch-BigGraph's way,
 * which costs accuracy: on UMLS with 4 partitions the model never learns
 * to rank a tail below the entities of the other partitions).
 *
 * Partition q has min(k, rows of q) slots, the rows chosen per epoch
 * (all of them when they fit), each slot a global ID and a copy of its
 * row.  A pool negative's row may be on disk or on another rank, so its
 * gradient is summed into the slot (grad, pending) and applied to the
 * row later, when its partition is next in the trainer's hands
 * (kg_trainer_pool_settle).  A partition's slots are valid once filled.
 * Rows are read by every training thread and written between buckets;
 * each thread adds gradients to a copy of its own, and kg_neg_pool_fold
 * sums the copies into the first (grad's first slots x dim floats)
 * before they are read.
 *
 * Beside the summed gradient a slot keeps the sum of its gradients'
 * squared norms over dim (sq), which is what the row-wise Adagrad state
 * would have gained had each gradient been applied on its own: the
 * summed gradient's own square, of a row pushed the same way by many
 * chunks, is up to as many times larger, and taking it inflated the
 * state of the rows the pool serves (see kg_trainer_bucket).
 */
struct kg_neg_pool {
	uint32_t n_parts, k, dim, nthreads;
	const uint64_t *part_off;	/* n_parts + 1 (borrowed, the store's) */
	uint64_t *off;		/* n_parts + 1 slot offsets */
	uint64_t *gid;		/* a slot's global entity ID */
	float *rows;		/* a slot's row, dim floats */
	float *grad;		/* nthreads copies of slots x dim floats */
	float *sq;		/* nthreads copies of slots floats */
	uint8_t *pending;	/* n_parts: some slot of it has a gradient */
	uint8_t *valid;		/* n_parts */
	/* The gradients of the epoch before, for the rows it had chosen,
	 * until their partitions are next in hand. */
	uint64_t *carry_gid;
	float *carry_grad, *carry_sq;
	uint8_t *carry_pending;
};

#define KG_NEG_POOL_INIT { 0 }

/* Slots for n_parts partitions of dim-float rows at part_off, gradients
 * from nthreads threads (k = 0: an empty pool that draws nothing). */
void kg_neg_pool_init(struct kg_neg_pool *np, uint32_t n_parts,
    const uint64_t *part_off, uint32_t k, uint32_t dim, uint32_t nthreads);
void kg_neg_pool_release(struct kg_neg_pool *np);
/* Choose partition q's rows for an epoch (from the stream
 * KG_STREAM_NEG_POOL of seed, epoch and q; in increasing ID) and
 * invalidate its copies; gradients still pending for the rows chosen
 * before move to the carry (which must be empty). */
void kg_neg_pool_choose(struct kg_neg_pool *np, uint32_t q, uint64_t seed,
    uint32_t epoch);
/* Copy partition q's chosen rows from its rows w (local IDs from the
 * partition's first) and make them valid. */
void kg_neg_pool_fill(struct kg_neg_pool *np, uint32_t q, const float *w);
/* How many of n negatives for a chunk corrupting into partition q the
 * pool gives: n times the share of the table's (valid) rows outside q,
 * rounded; 0 for an empty pool. */
size_t kg_neg_pool_share(const struct kg_neg_pool *np, uint32_t q,
    size_t n);
/* Draw n slots (out) uniformly over the rows of the valid partitions
 * other than q, each partition weighted by its size. */
void kg_neg_pool_draw(const struct kg_neg_pool *np, struct kg_rng *rng,
    uint32_t q, size_t n, uint32_t *out);
/* Add gradient g (dim floats) to slot "slot" in thread t's copy, and
 * its squared norm over dim to the slot's sq. */
void kg_neg_pool_add_grad(struct kg_neg_pool *np, uint32_t t, uint32_t slot,
    const float *g);
/* Sum the threads' gradients (and sq) of partition q (q >= n_parts: of
 * every partition) into the first copy, in thread order; between
 * buckets. */
void kg_neg_pool_fold(struct kg_neg_pool *np, uint32_t q);
/* The partition of slot "slot". */
uint32_t kg_neg_pool_part_of(const struct kg_neg_pool *np, uint64_t slot);

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

#define KG_TRIPLESET_INIT { 0 }

/* Build from n triples (hrt, rows of 3); 0, or -1 after kg_error() when
 * n_entities^2 * n_relations does not fit in 64 bits. */
int kg_tripleset_build(struct kg_tripleset *ts, const int32_t *hrt,
    uint64_t n, uint64_t n_entities, uint64_t n_relations);
int kg_tripleset_has(const struct kg_tripleset *ts, uint64_t h, uint64_t r,
    uint64_t t);
void kg_tripleset_release(struct kg_tripleset *ts);

/*
 * RotatE's subsampling weights (Sun et al. 2019, after word2vec): a
 * training triple (h, r, t) weighs 1 / sqrt(c(h, r) + c(t, r^-1)), where
 * c(h, r) counts the training triples with head h and relation r, and
 * c(t, r^-1) those with tail t and relation r, each plus 3 (RotatE counts
 * from 4).  Weights are divided by their mean over the training triples,
 * so they average 1 and leave the rate as it was.  A triple and its
 * reciprocal copy (t, r + n_relations, h) weigh the same.  A hash table
 * of at most 2 n (entity, relation, side) keys in 4 n to 8 n slots of 12
 * bytes; read-only after building, so threads share it.
 */
struct kg_query_weights {
	uint64_t *keys;		/* open addressing; key + 1, 0 = empty */
	uint32_t *count;
	uint64_t mask;
	uint64_t n_relations;
	double norm;		/* 1 / the mean raw weight */
};

#define KG_QUERY_WEIGHTS_INIT { .norm = 1.0 }

/* Count the n triples (hrt); 0, or -1 after kg_error() when the keys do
 * not fit in 64 bits. */
int kg_query_weights_build(struct kg_query_weights *qw, const int32_t *hrt,
    uint64_t n, uint64_t n_entities, uint64_t n_relations);
/* The weight of triple x (relation >= n_relations: a reciprocal copy);
 * a query never counted weighs as one seen once. */
double kg_query_weight(const struct kg_query_weights *qw, const int32_t *x);
void kg_query_weights_release(struct kg_query_weights *qw);

#endif
