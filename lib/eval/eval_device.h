/*
 * eval_device: filtered full ranking (eval.h's kg_eval_rank) written only
 * in calls of the device seam (lib/compute/backend.h), so that one code
 * ranks on the CPU backend (tested here) and on the CUDA backend
 * (kg-eval --device cuda).
 *
 * The entity and relation tables are uploaded once.  Then, per block of
 * test queries (the CPU evaluator's blocks: the triples in relation
 * order, opts->batch of them, at most KG_EVAL_BLOCK_FLOATS /
 * KG_EVAL_TILE), the host sends the block's indices and the columns to
 * leave out (the true entity and the filter's known positives, as
 * column lists per tile of KG_EVAL_TILE entities), and the device
 * gathers the rows, builds the queries (kg_be_query, TransR's
 * kg_be_transr), scores the true triples (kg_be_pairs on the tail query
 * form, as kg_model_score), scores every tile of entities (kg_be_chunk
 * with ranking's similarity; TransR projects the tile by one kg_be_sgemm
 * per run of queries with equal relation rows) and counts the scores
 * above and equal to the true one (kg_be_rank_counts).  The host reads
 * back two counts and the true score per query and makes the ranks as
 * eval.h defines them; ties, metrics and reports are eval.h's.
 *
 * On the CPU backend every score is the CPU evaluator's, bit for bit (the
 * same kernels, the same GEMM shapes, the same query arithmetic), so the
 * ranks are equal (tests/unit/t_eval_device.c).  On a GPU the scores agree
 * within rounding, so ranks can differ where two scores are within
 * rounding of each other.
 *
 * Supported: every shallow model (eval.h's full ranking, filtered or
 * raw, both sides, reciprocal relations).  Refused by
 * kg_eval_device_check: sampled ranking and ranking shared across MPI
 * ranks.
 *
 * On the CPU backend it is not a replacement for kg_eval_rank: it runs
 * on one thread (a backend serves one thread at a time), and the upload
 * copies the whole entity table into the backend's memory, so a streamed
 * table (kg_modeldir_ents) is held in memory after all
 * (bench/eval_paths.sh measures both rankers on the CPU).
 */
#ifndef KG_EVAL_DEVICE_H
#define KG_EVAL_DEVICE_H

#include "compute/backend.h"
#include "eval/eval.h"

/* Whether opts can rank on a device: 0, or -1 after kg_error() naming
 * the first option it does not support. */
int kg_eval_device_check(const struct kg_eval_opts *opts);

/*
 * kg_eval_rank on the backend be (borrowed; it must be free of other
 * work only in the sense that its streams are shared): upload md's
 * tables, rank both sides of every triple of test into *ranks (the
 * caller releases them with kg_eval_ranks_release), free the device
 * memory.  opts->threads is unused; progress is reported after each
 * block.  0, or -1 after kg_error() (options refused, IDs outside the
 * model, a device call failed, an entity row could not be read) with
 * nothing to release.
 */
int kg_eval_rank_device(struct kg_backend *be, const struct kg_modeldir *md,
    const struct kg_triples *test, const struct kg_eval_opts *opts,
    struct kg_eval_ranks *ranks);

/*
 * Scoring without ranking, for kg-predict: the scores of a block of
 * queries against tiles of entities, computed on the device as above and
 * read back, so that the host keeps the top k.  On the CPU backend the
 * bits of kg_model_score_many (kg-predict's CPU scores).
 */
struct kg_dev_scorer;

/* Upload md's tables (md must outlive the scorer) for blocks of at most
 * batch queries (capped as the ranker's blocks: kg_dev_scorer_batch).
 * NULL after kg_error(). */
struct kg_dev_scorer *kg_dev_scorer_open(struct kg_backend *be,
    const struct kg_modeldir *md, size_t batch);
size_t kg_dev_scorer_batch(const struct kg_dev_scorer *sc);

/*
 * Start a block of nb queries, scored on side sside (kg_model_score_many's
 * side; head queries of reciprocal models are tail queries of the inverse
 * relation): fixed[i] the entity row, rel[i] the relation row of query i.
 * Queries with equal relation rows should be next to each other (TransR
 * projects the candidates once per run).  0, or -1 after kg_error().
 */
int kg_dev_scorer_block(struct kg_dev_scorer *sc, enum kg_side sside,
    size_t nb, const int64_t *fixed, const int64_t *rel);

/* The block's scores against entities [t0, t0 + nc), nc <= KG_EVAL_TILE,
 * into out (host, nb x nc, out[i * nc + j]).  0, or -1 after kg_error(). */
int kg_dev_scorer_tile(struct kg_dev_scorer *sc, uint64_t t0, size_t nc,
    float *out);

/* Free the device memory and the scorer; NULL: no-op. */
void kg_dev_scorer_free(struct kg_dev_scorer *sc);

#endif
