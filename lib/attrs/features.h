/*
 * features: the one reader of a feature directory, the format
 * kg-encode-attrs writes (attrs.h: has_OUT.npy, OUT_offsets.npy +
 * OUT_indices.npy or OUT.npy per attribute, config.attributes in the
 * manifest) and kg-expand slices per part (graph/expand.h).
 *
 * Two views of one reading:
 *
 * The directory (struct kg_features_dir): every .npy file of it, mapped
 * (kg_npy_read) in name order and classified against its n rows:
 *   KG_FEATURES_CSR_OFFSETS  X_offsets.npy, int32 or int64 [n + 1], with
 *                            an X_indices.npy: checked to start at 0,
 *                            never decrease and end at the number of
 *                            entries of X_indices.npy;
 *   KG_FEATURES_CSR_MEMBER   X_*.npy with one row per entry of such a
 *                            group (X_indices.npy itself; the longest
 *                            group prefix wins);
 *   KG_FEATURES_ROWS         any other array whose first dimension is n;
 *   KG_FEATURES_OTHER        the rest (kept, for the caller to judge).
 * kg-expand slices every array but the others, by row.
 *
 * The attributes (struct kg_features): the config.attributes list of a
 * manifest (name, output, kind, slots or dim) bound to the arrays of the
 * directory and checked: has_OUT uint8 [n]; text kinds OUT float32
 * [n, dim], every value finite; index kinds a CSR group OUT_offsets +
 * OUT_indices (int32) whose indices are below the slots.  The GNN
 * encoders read this view.
 *
 * Ownership: both structs own their mappings and names; release them
 * with the matching function (safe on the zero initialiser).  Read-only
 * after loading, so any number of threads may read them.
 */
#ifndef KG_FEATURES_H
#define KG_FEATURES_H

#include <stddef.h>
#include <stdint.h>

#include "io/npy.h"

enum kg_features_kind {
	KG_FEATURES_OTHER,
	KG_FEATURES_ROWS,
	KG_FEATURES_CSR_OFFSETS,
	KG_FEATURES_CSR_MEMBER
};

struct kg_features_array {
	char *name;			/* file name, "X.npy" */
	struct kg_npy a;		/* mapped */
	enum kg_features_kind kind;
	size_t group;			/* members: index of their offsets */
	size_t row_bytes;		/* bytes of one row (entry) */
};

struct kg_features_dir {
	uint64_t n;			/* rows */
	size_t n_arrays;
	struct kg_features_array *arr;	/* sorted by name */
};

#define KG_FEATURES_DIR_INIT { 0 }

/*
 * Map and classify every .npy of "dir" (see above) for n rows.  0, or -1
 * after kg_error() (unreadable directory or array, a CSR group whose
 * offsets have the wrong type or shape or do not run from 0 to its
 * entries) with nothing to release.
 */
int kg_features_dir_open(struct kg_features_dir *fd, const char *dir,
    uint64_t n);
void kg_features_dir_release(struct kg_features_dir *fd);
/* The array called name ("X.npy"), or NULL. */
const struct kg_features_array *kg_features_dir_find(
    const struct kg_features_dir *fd, const char *name);
/* Entry i of a CSR offsets array (int32 or int64). */
uint64_t kg_features_offset(const struct kg_npy *off, uint64_t i);

/* One attribute, its arrays pointing into the directory's mappings. */
struct kg_features_attr {
	char *name;
	int text;		/* 0: index kind, 1: dense vector */
	uint64_t width;		/* slots (index) or dim (text) */
	const int64_t *off;	/* index kinds: [n + 1] */
	const int32_t *idx;	/* index kinds: [off[n]] slots */
	const float *vec;	/* text: [n, width] */
	const uint8_t *has;	/* [n] */
	int64_t *off_own;	/* int32 offsets widened (owned), or NULL */
};

struct kg_features {
	uint64_t n;		/* rows */
	size_t n_attrs;
	struct kg_features_attr *attrs;
	struct kg_features_dir dir;
};

#define KG_FEATURES_INIT { .dir = KG_FEATURES_DIR_INIT }

/*
 * Load the attributes of the feature directory "dir" for n rows; the
 * attribute list comes from config.attributes of the manifest in
 * "manifest_dir" (dir itself when NULL: a kg-expand part's features/
 * has no manifest of its own and takes the merged directory's; a
 * directory's own manifest is verified: every file it lists has the
 * recorded size, dtype and shape).  0, or
 * -1 (KG_ERR_VERSION for a manifest of an unknown version) after
 * kg_error() with nothing to release.
 */
int kg_features_load(struct kg_features *f, const char *dir,
    const char *manifest_dir, uint64_t n);
void kg_features_release(struct kg_features *f);

#endif
