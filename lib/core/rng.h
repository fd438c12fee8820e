/*
 * rng: kgpipe's random numbers, and the one place their streams come from.
 *
 * The generator is xoshiro256** (one struct per thread, no locks).  Every
 * random draw of kgpipe comes from a stream named by a purpose and up to
 * four indices (an epoch, a partition, a bucket, a chunk, a rank, a
 * row...):
 *
 *     kg_rng_stream(&rng, seed, KG_STREAM_CHUNK, epoch, ph, pt, chunk);
 *
 * The stream's state is a hash of (seed, purpose, i0, i1, i2, i3): every
 * field is mixed in whole (splitmix64 over each in turn), so no index
 * can spill into another however large it gets (a bucket ID packed into
 * bits by hand once collided with the next epoch from 17 partitions on).
 * Two different tuples collide only as two random 64-bit values do.
 * Unused indices are 0.  The purposes are listed here, each with what
 * its indices mean, so that a new use takes a new name rather than a
 * number picked by hand.
 */
#ifndef KG_RNG_H
#define KG_RNG_H

#include <stdint.h>

enum kg_stream {
	KG_STREAM_ENTITY_INIT = 1,	/* shallow rows: partition */
	KG_STREAM_BUCKET_ENTITY_INIT,	/* bucket-mode rows: partition */
	KG_STREAM_RELATION_INIT,	/* shallow relation table */
	KG_STREAM_CHUNK,		/* negatives: epoch, head part,
					 * tail part, chunk (pass k of a
					 * bucket adds k << 32) */
	KG_STREAM_SHUFFLE,		/* positives' order: epoch */
	KG_STREAM_BUCKET_SHUFFLE,	/* a bucket's positives: epoch,
					 * head part, tail part */
	KG_STREAM_GNN_INIT,		/* dense GNN weights */
	KG_STREAM_GNN_LEARNED_ROW,	/* a learned node row: global ID */
	KG_STREAM_GNN_RELATION_INIT,	/* the GNN decoder's relations */
	KG_STREAM_GNN_TRAIN,		/* batches and negatives: rank */
	KG_STREAM_INGEST_SPLIT,		/* kg-ingest --split shuffle */
	KG_STREAM_PARTITION,		/* kg-partition random method */
	KG_STREAM_EXPAND,		/* kg-expand fan-out caps: part */
	KG_STREAM_EVAL_NEG,		/* sampled ranking: task */
	KG_STREAM_EVAL_AUC,		/* AUC negatives */
	KG_STREAM_TEXT_SVD,		/* the text encoder's projection */
	KG_STREAM_GNN_NEG_CHUNK,	/* GNN shared negatives: rank,
					 * epoch, step, chunk */
	KG_STREAM_BUCKET_ORDER,		/* out-of-core bucket order: pass
					 * (epoch * passes + pass) */
	KG_STREAM_NEG_POOL,		/* negative pool's rows: epoch,
					 * partition */
	KG_STREAM_BUCKET_SCHEDULE	/* MPI bucket schedule's partition
					 * names: pass (epoch * passes +
					 * pass) */
};

/* splitmix64: seeding helper and a decent 64-bit mix. */
static inline uint64_t
kg_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

struct kg_rng {
	uint64_t s[4];
};

/* The 64-bit stream ID of (purpose, i0, i1, i2, i3); exposed for tests. */
uint64_t kg_stream_id(enum kg_stream purpose, uint64_t i0, uint64_t i1,
    uint64_t i2, uint64_t i3);

/* Seed r with the stream (purpose, i0..i3) of seed. */
void kg_rng_stream(struct kg_rng *r, uint64_t seed, enum kg_stream purpose,
    uint64_t i0, uint64_t i1, uint64_t i2, uint64_t i3);

/*
 * Seed r from (seed, raw stream ID).  For the library's own draws use
 * kg_rng_stream; this is for test programs and generators that need a
 * plain seeded generator.
 */
void kg_rng_seed(struct kg_rng *r, uint64_t seed, uint64_t stream);

static inline uint64_t
kg_rng_next(struct kg_rng *r)
{
	uint64_t *s = r->s;
	uint64_t x = s[1] * 5;
	uint64_t result = ((x << 7) | (x >> 57)) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = (s[3] << 45) | (s[3] >> 19);
	return result;
}

/* Uniform integer in [0, n), n >= 1 (Lemire's multiply-shift, unbiased
 * enough for n far below 2^64). */
static inline uint64_t
kg_rng_below(struct kg_rng *r, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)kg_rng_next(r) * n) >> 64);
}

/* Uniform double in [0, 1). */
static inline double
kg_rng_uniform(struct kg_rng *r)
{
	return (double)(kg_rng_next(r) >> 11) * 0x1.0p-53;
}

/* Standard normal deviate (Box-Muller, one value per call). */
double kg_rng_normal(struct kg_rng *r);

#endif
