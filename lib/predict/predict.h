/*
 * predict: kg-predict's engine.  The best answers of a batch of queries
 * (query.h) by a trained model, and the nearest entities of entities.
 *
 * Entity queries ((h, r, ?) and (?, r, t)) are scored as kg-eval ranks:
 * blocks of up to "batch" queries of one side, ordered by relation,
 * against the candidate entities in tiles of KG_EVAL_TILE at fixed
 * positions, one kg_model_score_many call (one GEMM for the bilinear
 * models and TransE L2) per (block, tile), in OpenMP threads; each
 * query keeps its k best in a heap (topk.h).  With reciprocal
 * relations (?, r, t) is scored as (t, r + n_relations, ?), as kg-eval
 * does.  Relation queries (h, ?, t) score every relation with
 * kg_model_score (reciprocal models: the forward relations only).
 * With o->dev the entity queries' tiles of scores are computed on a
 * device (eval_device.h's scorer, the same blocks and tiles, so on the
 * CPU backend the same bits) and read back; masking and the top k stay
 * on the host.
 *
 * Nearest entities compare an entity's row with every other entity's:
 *   cosine  x.y / (|x| |y|)  (a zero row scores NaN and never appears)
 *   dot     x.y
 *   l2      -|x - y|_2
 *   l1      -|x - y|_1
 *   model   the model's own score with the identity relation, score(x,
 *           1, y): DistMult, ComplEx and RESCAL give x.y, TransE and
 *           RotatE gamma - distance (L1, L2 or the sum of complex
 *           moduli); TransR only when rel_dim = dim (M = I, r = 0).
 * cosine, dot, l2 and model are one GEMM per (block, tile); l1 a loop.
 * The entity itself is never its own neighbour.
 *
 * Filtering leaves out every answer that would form a triple the filter
 * knows (lib/eval/eval.h: kg_filter_*).  With typed (typed.h), entity
 * and relation answers of types never seen in that position of the
 * relation are left out too (nearest queries are not typed).  Ties are broken by the lower ID.
 *
 * Sharding (MPI ranks): shard s of S offers only the candidate tiles
 * [T s / S, T (s + 1) / S) of the T tiles, and relation queries only on
 * shard 0; scores do not depend on the shard (fixed tiles, identical
 * blocks), so merging the shards' top-k lists with kg_topk_push gives
 * exactly what one process finds.
 */
#ifndef KG_PREDICT_H
#define KG_PREDICT_H

#include <stddef.h>
#include <stdint.h>

#include "core/progress.h"
#include "eval/eval.h"
#include "eval/eval_device.h"
#include "kge/modeldir.h"
#include "predict/query.h"
#include "predict/topk.h"
#include "predict/typed.h"

enum kg_sim { KG_SIM_COSINE, KG_SIM_DOT, KG_SIM_L2, KG_SIM_L1,
	KG_SIM_MODEL };

/* Parse "cosine", "dot", "l2", "l1" or "model"; 0, or -1 after
 * kg_error(). */
int kg_sim_parse(const char *s, enum kg_sim *out);
const char *kg_sim_name(enum kg_sim s);

struct kg_predict_opts {
	const struct kg_filter *filter;	/* NULL: no filtering */
	enum kg_sim sim;	/* nearest entities */
	size_t batch;		/* queries per block */
	int threads;		/* OpenMP threads; 0: OpenMP's default */
	int shard, nshards;	/* this process's share (nshards 0 or 1:
				 * all) */
	struct kg_progress *progress;	/* NULL: none */
	uint64_t progress_base;	/* queries answered before this call */
	const struct kg_typed *typed;	/* NULL: answers of any type */
	/* Where entity queries are scored: NULL, the CPU; else a device
	 * (eval/eval_device.h, one thread on the host; nearest and relation
	 * queries stay on the CPU). */
	struct kg_dev_scorer *dev;
};

#define KG_PREDICT_OPTS_INIT { .sim = KG_SIM_COSINE, .batch = 1024, \
	.nshards = 1 }

/*
 * Check that md can answer with o (the model similarity needs an
 * identity relation).  0, or -1 after kg_error().
 */
int kg_predict_check(const struct kg_modeldir *md,
    const struct kg_predict_opts *o);

/*
 * Offer this shard's candidates for queries q[0..nq) to top (reset by
 * the caller to at least nq queries; query i goes to top's query i).
 * IDs in q must be in range of md.  The entity rows are read through
 * md's store (kg_modeldir_ents: the mapped array, or a store md lends,
 * such as one that reads a table larger than memory from disk), or, with
 * o->dev, scored on the device from its own copy of the table.  0, or -1
 * after kg_error() when a read or a device call failed (top then holds
 * part of the answers).
 */
int kg_predict_answer(const struct kg_modeldir *md,
    const struct kg_predict_opts *o, const struct kg_query *q, size_t nq,
    struct kg_topk *top);

/*
 * The scores of the triples (h, r, t) of q[0..nq) (any kind; the asked
 * parts must be filled) into out[0..nq), with kg_model_score: the
 * forward relation, also for reciprocal models; entity rows through
 * md's store as above.  In OpenMP threads.  0, or -1 after kg_error()
 * when a read failed.
 */
int kg_predict_score(const struct kg_modeldir *md, int threads,
    const struct kg_query *q, size_t nq, float *out);

#endif
