/*
 * attrs_impl: what the files of the attrs module share and nobody else
 * needs (attrs_values.c, attrs_featwrite.c).  Single-threaded except
 * where said.
 */
#ifndef KG_ATTRS_IMPL_H
#define KG_ATTRS_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "attrs/attrs.h"
#include "io/npy.h"

/* Value i of a string column: its bytes (not NUL-terminated) and length. */
static inline const char *
kg_attrs_col_str(const struct kg_attrs_col *c, uint64_t i, size_t *len)
{
	*len = c->len[i];
	return c->arena + c->off[i];
}

/*
 * Call fn for each label of a categorical (the whole value) or multi-label
 * (separator-split, trimmed, non-empty) value v[0..len).
 */
void kg_attrs_for_each_label(const struct kg_attr_spec *sp, const char *v,
    size_t len, void (*fn)(void *arg, const char *s, size_t len), void *arg);

/* A growable list of uint32 indices; zero-initialise, free(v) when done. */
struct kg_attrs_idx {
	uint32_t *v;
	size_t n, cap;
};

void kg_attrs_idx_push(struct kg_attrs_idx *l, uint32_t x);
/* Sort the list and drop duplicates. */
void kg_attrs_idx_unique(struct kg_attrs_idx *l);

/* The texts of a column, one document per entity with a value (its rows
 * joined by a space): docs[k][0..lens[k]) is the text of entity ent[k]
 * (counted from the range start), for k < n; all owned. */
struct kg_attrs_docs {
	char *buf;
	const char **docs;
	size_t *lens;
	uint64_t *ent;
	size_t n;
};

/* Build t from a grouped column c of n_local entities. */
void kg_attrs_docs_build(struct kg_attrs_docs *t, const struct kg_attrs_col *c,
    uint64_t n_local);
void kg_attrs_docs_release(struct kg_attrs_docs *t);

/*
 * Write dir/name, an array of shape[0] rows of shape[1..ndim) (dtype dt)
 * from data, through the streaming writer as a merge writes it, so that
 * one shard and a merge of several give the same bytes.  0, or -1 after
 * kg_error() with nothing left behind.
 */
int kg_attrs_write_array(const char *dir, const char *name, enum kg_dtype dt,
    int ndim, const uint64_t *shape, const void *data);

/*
 * The transformer text encoder (attrs_bert.c).  Fit: load the model at
 * sp->model_path, check "dim" and "max_length" against it, record its
 * directory and SHA-256 sums in enc.  Encode: load enc->model_dir, refuse
 * it when its files changed since fit, encode each distinct value of the
 * n entities of c once (where pl says), write the mean vector of each entity with values
 * into out[e * dim ..) and has[e] = 1; fig (may be NULL) gets the counts.
 * Both 0, or -1 after kg_error().
 */
int kg_attrs_fit_transformer(struct kg_attr_enc *enc,
    const struct kg_attr_spec *sp);
int kg_attrs_encode_transformer(const struct kg_attr_enc *enc,
    const struct kg_attr_spec *sp, const struct kg_attrs_place *pl,
    const struct kg_attrs_col *c, uint64_t n,
    float *out, uint8_t *has, json_t *fig);

#endif
