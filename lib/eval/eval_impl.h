#ifndef KG_EVAL_IMPL_H
#define KG_EVAL_IMPL_H

/* Private to lib/eval: a (key, value) pair, sorted by key then value.
 * The filtering index (filter.c) packs (relation, entity) keys with
 * entity values; sampled ranking (eval.c) sorts (entity, column) pairs. */

#include <stdint.h>

#include "eval/eval.h"

struct keyval {
	uint64_t key;
	int32_t val;
};

/* Full ranking's output rows of one block stay below this many floats per
 * thread, so a graph with millions of entities gets small blocks instead
 * of gigabytes of scores (eval.c; the device ranker cuts the same blocks). */
#define KG_EVAL_BLOCK_FLOATS ((size_t)1 << 24)

/* The options and IDs can be ranked by kg_eval_rank; 0 or -1 after
 * kg_error(). */
int kg_eval_rank_check(const struct kg_modeldir *md,
    const struct kg_triples *test, const struct kg_eval_opts *opts);

/* Triple indices of test sorted by relation (counting sort, stable), so
 * that TransR blocks share candidate projections; test->n + 1 entries,
 * the caller frees them. */
uint64_t *kg_eval_order_by_relation(const struct kg_triples *test,
    uint64_t n_relations);

#endif
