/*
 * eval: link-prediction ranking, sampled ranking, triple classification
 * (ROC AUC) and the metrics built on them; kg-eval's engine.
 *
 * Ranking.  For a triple (h, r, t) and side TAIL, every candidate c gets
 * score(h, r, c); with s the true tail's score, over the candidates other
 * than t that are not filtered out,
 *   greater = #{c : score > s},  equal = #{c : score == s},
 *   optimistic rank = 1 + greater,
 *   pessimistic rank = 1 + greater + equal,
 *   realistic rank = (optimistic + pessimistic) / 2.
 * Side HEAD is the same with (c, r, t).  In the filtered setting the
 * candidates that form a known triple (in any split given to the filter)
 * are left out; the true one is always left out of the counts.  A true
 * score that is NaN ranks last (both ranks = n_candidates below); NaN
 * candidate scores never count.  With reciprocal relations, head
 * prediction (?, r, t) is scored as (t, r + n_relations, ?).
 *
 * Full ranking scores blocks of queries against every entity, one tile
 * of KG_EVAL_TILE entities at a time, with kg_model_score_many (one GEMM
 * per tile for the bilinear models and TransE L2), in OpenMP threads;
 * the caller keeps OpenBLAS single-threaded
 * (openblas_set_num_threads(1)).  The filter is a sorted index, so the hot
 * loop only counts; known positives are subtracted afterwards.
 *
 * Sampled ranking (DGL-KE/PBG style) ranks the true entity against N
 * negatives drawn once per block of queries and shared by the block,
 * uniformly or in proportion to the entity's degree in the train split.
 * Draws of the true entity, and of known positives when filtering, are
 * left out of the counts; a negative drawn k times counts k times.  The
 * true scores come out of the same matrix product as the negatives'.
 * Results depend on the seed and batch size but not on the thread count.
 *
 * Work buffers are allocated once per thread per call; nothing is
 * allocated per block.
 */
#ifndef KG_EVAL_H
#define KG_EVAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>

#include "io/dataset.h"
#include "kge/model.h"
#include "kge/modeldir.h"

/*
 * The filtering index: for every (h, r) the sorted distinct tails, for
 * every (r, t) the sorted distinct heads, over the union of the triple
 * sets it was built from.  Keys are kept sorted, so a lookup is a binary
 * search.
 */
struct kg_filter {
	uint64_t n_tail_keys, n_head_keys;
	uint64_t *tail_key;	/* (r << 32 | h), sorted, distinct */
	uint64_t *tail_off;	/* n_tail_keys + 1 offsets into tails */
	int32_t *tails;
	uint64_t *head_key;	/* (r << 32 | t) */
	uint64_t *head_off;
	int32_t *heads;
	uint64_t n_triples;	/* distinct triples */
};

#define KG_FILTER_INIT { 0 }

/* Build from nsets triple sets (IDs must be non-negative).  Never fails
 * (allocation failure exits). */
void kg_filter_build(struct kg_filter *f, const struct kg_triples *sets,
    size_t nsets);
void kg_filter_release(struct kg_filter *f);
/* The known tails of (h, r), ascending; *n gets their count (0 if none). */
const int32_t *kg_filter_tails(const struct kg_filter *f, int32_t h,
    int32_t r, size_t *n);
/* The known heads of (r, t), ascending. */
const int32_t *kg_filter_heads(const struct kg_filter *f, int32_t r,
    int32_t t, size_t *n);
/* 1 if (h, r, t) is known, else 0. */
int kg_filter_contains(const struct kg_filter *f, int32_t h, int32_t r,
    int32_t t);

enum kg_ties { KG_TIES_REALISTIC, KG_TIES_OPTIMISTIC, KG_TIES_PESSIMISTIC };
enum kg_neg_mode { KG_NEG_UNIFORM, KG_NEG_DEGREE };

const char *kg_ties_name(enum kg_ties t);

/*
 * Full ranking scores the candidates in tiles of KG_EVAL_TILE entities at
 * fixed positions (0, KG_EVAL_TILE, ...), one GEMM per (block of queries,
 * tile), and the true entity with kg_model_score(): no score depends on
 * which process scores which range of candidates, so counts summed over
 * disjoint ranges equal the counts of one process exactly (BLAS results
 * can change with the shape of the matrices).
 */
#define KG_EVAL_TILE 1024

struct kg_eval_opts {
	const struct kg_filter *filter;	/* NULL: raw setting */
	size_t batch;		/* queries per block; full ranking caps it
				 * so a block's tile of scores stays under
				 * 64 MB */
	int threads;		/* OpenMP threads; 0 = OpenMP's default */
	uint64_t neg_sample;	/* 0: rank against all entities */
	enum kg_neg_mode neg_mode;
	const uint64_t *degree;	/* n_entities degrees for KG_NEG_DEGREE */
	uint64_t seed;
	/* Called about once a second from one thread, and once at the end
	 * with done == total; NULL for none. */
	void (*progress)(uint64_t done, uint64_t total, double seconds,
	    void *arg);
	void *progress_arg;
	/*
	 * Do share "shard" of nshards of the work (nshards 0 or 1: all), so
	 * that opt and pess summed over the shards (MPI ranks) are the ranks
	 * of one process.  Full ranking: every query against the candidate
	 * tiles [T * shard / nshards, T * (shard + 1) / nshards) of the T
	 * tiles, so a rank reads only its range of the entity table (and the
	 * query rows); the shard holding entity 0 adds the leading 1.
	 * Sampled ranking: the blocks with block % nshards == shard, other
	 * queries left 0.
	 */
	int shard, nshards;
};

#define KG_EVAL_OPTS_INIT { .batch = 1024, .neg_mode = KG_NEG_UNIFORM, \
	.seed = 1 }

/*
 * Ranks of the true tail (side TAIL) and true head (side HEAD) of each of
 * n triples: opt[side][i] and pess[side][i].
 */
struct kg_eval_ranks {
	uint64_t n;
	uint64_t n_candidates;	/* entities, or negatives + 1 when sampled */
	uint64_t *opt[2];
	uint64_t *pess[2];
};

#define KG_EVAL_RANKS_INIT { 0 }

/*
 * Rank both sides of every triple in "test" with the model in md (whose
 * n_entities and n_relations must cover the IDs) into *ranks, which the
 * caller frees with kg_eval_ranks_release.  Returns 0, or -1 after
 * kg_error() (bad options, IDs out of range) with nothing to release.
 */
int kg_eval_rank(const struct kg_modeldir *md, const struct kg_triples *test,
    const struct kg_eval_opts *opts, struct kg_eval_ranks *ranks);
void kg_eval_ranks_release(struct kg_eval_ranks *ranks);

/* The rank under the given tie policy. */
static inline double
kg_rank_of(enum kg_ties ties, uint64_t opt, uint64_t pess)
{
	return ties == KG_TIES_OPTIMISTIC ? (double)opt :
	    ties == KG_TIES_PESSIMISTIC ? (double)pess :
	    0.5 * ((double)opt + (double)pess);
}

/* Sums over ranks; kg_metrics_add one rank at a time. */
struct kg_metrics {
	uint64_t n;
	double sum_rr, sum_r;
	uint64_t hits1, hits3, hits10;
};

#define KG_METRICS_INIT { 0 }

void kg_metrics_add(struct kg_metrics *m, double rank);
/* Means (NaN when n is 0). */
double kg_metrics_mrr(const struct kg_metrics *m);
double kg_metrics_mr(const struct kg_metrics *m);
double kg_metrics_hits(const struct kg_metrics *m, int k);	/* 1, 3, 10 */

/*
 * Metrics of ranks for side TAIL, HEAD and both (out[0], out[1], out[2]),
 * over the triples whose relation is "rel" (rel < 0: all).
 */
void kg_eval_metrics(const struct kg_eval_ranks *ranks,
    const struct kg_triples *test, int64_t rel, enum kg_ties ties,
    struct kg_metrics out[3]);
/* The same for every relation in one pass: out[3 * r + side], for
 * relations r < n_relations (out holds 3 * n_relations, zeroed here). */
void kg_eval_metrics_per_relation(const struct kg_eval_ranks *ranks,
    const struct kg_triples *test, uint64_t n_relations, enum kg_ties ties,
    struct kg_metrics *out);

/* {"n", "mrr", "mr", "hits@1", "hits@3", "hits@10"} (a new reference;
 * means are null when n is 0). */
json_t *kg_metrics_json(const struct kg_metrics *m);
/* {"tail": ..., "head": ..., "both": ...} from out[3] as filled above. */
json_t *kg_metrics_sides_json(const struct kg_metrics m[3]);
/*
 * Add the metrics of ranks to the JSON object rep: "metrics" (sides under
 * the chosen tie policy), "by_ties" (all three policies) and, when
 * n_relations > 0, "per_relation" (an array over the relations present
 * in test, each {"relation", "name" when names is not NULL, "tail",
 * "head", "both"}).  out[3] gets the overall metrics under "ties".
 */
void kg_eval_report_metrics(json_t *rep, const struct kg_eval_ranks *ranks,
    const struct kg_triples *test, enum kg_ties ties, uint64_t n_relations,
    char *const *names, struct kg_metrics out[3]);
/*
 * Write a report as indented JSON with sorted keys to stdout (path NULL or
 * "-") or to path, atomically through a temporary sibling that is synced
 * and renamed; an existing path is refused unless force.  0 or -1 after
 * kg_error() (no temporary left).
 */
int kg_eval_write_report(const json_t *report, const char *path, int force);
/* Print a small table (rows tail, head, both) of m[3] to f. */
void kg_metrics_print(FILE *f, const struct kg_metrics m[3]);
/*
 * Print one row per relation present in the split (m[3 * r + 2].n > 0),
 * m as kg_eval_metrics_per_relation fills it, in relation order: its
 * name (names[r], or its ID when names is NULL), the triples, the tail
 * and head MRR and both sides' MRR, MR and Hits@1, 3, 10.
 */
void kg_metrics_print_per_relation(FILE *f, const struct kg_metrics *m,
    uint64_t n_relations, char *const *names);

/*
 * ROC AUC of positive against negative scores: the probability that a
 * random positive scores above a random negative, ties counting one half.
 * O((np + nn) log(np + nn)); NaN when either side is empty.
 */
double kg_auc(const float *pos, size_t np, const float *neg, size_t nn);

/*
 * Triple classification on "test": score every triple and, per positive,
 * k negatives that replace its head or its tail (a fair coin) by a
 * uniform entity, redrawn while the corrupted triple is in the filter (at
 * most 100 draws; filter may be NULL).  Stores the AUC in *auc.  0, or -1
 * after kg_error().  Deterministic for a seed.
 */
int kg_eval_auc(const struct kg_modeldir *md, const struct kg_triples *test,
    const struct kg_filter *filter, uint64_t k, uint64_t seed, double *auc);

#endif
