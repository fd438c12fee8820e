/* The filtering index of lib/eval/eval.h: the known tails of every
 * (head, relation) and heads of every (relation, tail), as sorted CSR
 * arrays. */
#include "eval/eval.h"

#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "eval/eval_impl.h"

static uint64_t
pack_key(int32_t r, int32_t e)
{
	return (uint64_t)(uint32_t)r << 32 | (uint32_t)e;
}

static int
cmp_keyval(const void *a, const void *b)
{
	const struct keyval *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->val > y->val) - (x->val < y->val);
}

/* Sort kv, drop duplicates and split it into distinct keys, offsets and
 * values (all new arrays).  Returns the number of distinct pairs. */
static uint64_t
build_csr(struct keyval *kv, uint64_t n, uint64_t **keys, uint64_t **off,
    int32_t **vals, uint64_t *nkeys)
{
	uint64_t i, m = 0, k = 0;

	qsort(kv, n, sizeof(*kv), cmp_keyval);
	for (i = 0; i < n; i++)
		if (m == 0 || cmp_keyval(&kv[m - 1], &kv[i]) != 0)
			kv[m++] = kv[i];
	for (i = 0; i < m; i++)
		if (i == 0 || kv[i].key != kv[i - 1].key)
			k++;
	*keys = kg_xmallocarray(k + 1, sizeof(**keys));
	*off = kg_xmallocarray(k + 1, sizeof(**off));
	*vals = kg_xmallocarray(m + 1, sizeof(**vals));
	k = 0;
	for (i = 0; i < m; i++) {
		if (i == 0 || kv[i].key != kv[i - 1].key) {
			(*keys)[k] = kv[i].key;
			(*off)[k++] = i;
		}
		(*vals)[i] = kv[i].val;
	}
	(*off)[k] = m;
	*nkeys = k;
	return m;
}

void
kg_filter_build(struct kg_filter *f, const struct kg_triples *sets,
    size_t nsets)
{
	uint64_t total = 0, i, j = 0;
	struct keyval *kv;
	size_t s;

	*f = (struct kg_filter)KG_FILTER_INIT;
	for (s = 0; s < nsets; s++)
		total += sets[s].n;
	kv = kg_xmallocarray(total + 1, sizeof(*kv));
	for (s = 0; s < nsets; s++)
		for (i = 0; i < sets[s].n; i++, j++) {
			const int32_t *x = sets[s].hrt + 3 * i;

			kv[j].key = pack_key(x[1], x[0]);
			kv[j].val = x[2];
		}
	f->n_triples = build_csr(kv, total, &f->tail_key, &f->tail_off,
	    &f->tails, &f->n_tail_keys);
	for (s = 0, j = 0; s < nsets; s++)
		for (i = 0; i < sets[s].n; i++, j++) {
			const int32_t *x = sets[s].hrt + 3 * i;

			kv[j].key = pack_key(x[1], x[2]);
			kv[j].val = x[0];
		}
	build_csr(kv, total, &f->head_key, &f->head_off, &f->heads,
	    &f->n_head_keys);
	free(kv);
}

void
kg_filter_release(struct kg_filter *f)
{
	free(f->tail_key);
	free(f->tail_off);
	free(f->tails);
	free(f->head_key);
	free(f->head_off);
	free(f->heads);
	*f = (struct kg_filter)KG_FILTER_INIT;
}

static const int32_t *
csr_lookup(const uint64_t *keys, const uint64_t *off, const int32_t *vals,
    uint64_t nkeys, uint64_t key, size_t *n)
{
	uint64_t lo = 0, hi = nkeys;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (keys[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == nkeys || keys[lo] != key) {
		*n = 0;
		return NULL;
	}
	*n = off[lo + 1] - off[lo];
	return vals + off[lo];
}

const int32_t *
kg_filter_tails(const struct kg_filter *f, int32_t h, int32_t r, size_t *n)
{
	return csr_lookup(f->tail_key, f->tail_off, f->tails, f->n_tail_keys,
	    pack_key(r, h), n);
}

const int32_t *
kg_filter_heads(const struct kg_filter *f, int32_t r, int32_t t, size_t *n)
{
	return csr_lookup(f->head_key, f->head_off, f->heads, f->n_head_keys,
	    pack_key(r, t), n);
}

int
kg_filter_contains(const struct kg_filter *f, int32_t h, int32_t r,
    int32_t t)
{
	size_t n, lo = 0, hi;
	const int32_t *v = kg_filter_tails(f, h, r, &n);

	hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid] < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo] == t;
}
