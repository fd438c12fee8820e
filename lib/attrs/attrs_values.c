/*
 * attrs_values: the views of a collected column that fit and encode share
 * (declared in attrs_impl.h).
 */
#include "attrs/attrs_impl.h"

#include <stdlib.h>
#include <string.h>

#include "core/util.h"

void
kg_attrs_for_each_label(const struct kg_attr_spec *sp, const char *v,
    size_t len, void (*fn)(void *arg, const char *s, size_t len), void *arg)
{
	const char *p = v, *end = v + len, *q;
	size_t seplen;

	if (sp->kind != KG_ATTR_MULTILABEL) {
		fn(arg, v, len);
		return;
	}
	seplen = strlen(sp->separator);
	while (p <= end) {
		const char *a, *b;

		q = memmem(p, (size_t)(end - p), sp->separator, seplen);
		if (q == NULL)
			q = end;
		a = p;
		b = q;
		while (a < b && (*a == ' ' || *a == '\t'))
			a++;
		while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
			b--;
		if (b > a)
			fn(arg, a, (size_t)(b - a));
		p = q + seplen;
	}
}

void
kg_attrs_idx_push(struct kg_attrs_idx *l, uint32_t x)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		l->v = kg_xreallocarray(l->v, l->cap, sizeof(uint32_t));
	}
	l->v[l->n++] = x;
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

void
kg_attrs_idx_unique(struct kg_attrs_idx *l)
{
	size_t i, k = 0;

	if (l->n < 2)
		return;
	qsort(l->v, l->n, sizeof(uint32_t), cmp_u32);
	for (i = 0; i < l->n; i++)
		if (k == 0 || l->v[i] != l->v[k - 1])
			l->v[k++] = l->v[i];
	l->n = k;
}

void
kg_attrs_docs_build(struct kg_attrs_docs *t, const struct kg_attrs_col *c,
    uint64_t n_local)
{
	uint64_t e, j, total = 0, pos = 0;
	size_t *offs, k = 0;

	memset(t, 0, sizeof(*t));
	for (e = 0; e < n_local; e++)
		if (c->start[e + 1] > c->start[e])
			t->n++;
	for (j = 0; j < c->n; j++)
		total += c->len[j] + 1;
	t->buf = kg_xmalloc(total + 1);
	t->docs = kg_xcalloc(t->n + 1, sizeof(char *));
	t->lens = kg_xcalloc(t->n + 1, sizeof(size_t));
	t->ent = kg_xcalloc(t->n + 1, sizeof(uint64_t));
	offs = kg_xcalloc(t->n + 1, sizeof(size_t));
	for (e = 0; e < n_local; e++) {
		if (c->start[e + 1] == c->start[e])
			continue;
		offs[k] = pos;
		for (j = c->start[e]; j < c->start[e + 1]; j++) {
			size_t len;
			const char *s = kg_attrs_col_str(c, c->order[j], &len);

			if (j > c->start[e])
				t->buf[pos++] = ' ';
			memcpy(t->buf + pos, s, len);
			pos += len;
		}
		t->lens[k] = pos - offs[k];
		t->ent[k] = e;
		k++;
	}
	for (k = 0; k < t->n; k++)
		t->docs[k] = t->buf + offs[k];
	free(offs);
}

void
kg_attrs_docs_release(struct kg_attrs_docs *t)
{
	free(t->buf);
	free(t->docs);
	free(t->lens);
	free(t->ent);
	memset(t, 0, sizeof(*t));
}
