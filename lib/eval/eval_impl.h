#ifndef KG_EVAL_IMPL_H
#define KG_EVAL_IMPL_H

/* Private to lib/eval: a (key, value) pair, sorted by key then value.
 * The filtering index (filter.c) packs (relation, entity) keys with
 * entity values; sampled ranking (eval.c) sorts (entity, column) pairs. */

#include <stdint.h>

struct keyval {
	uint64_t key;
	int32_t val;
};

#endif
