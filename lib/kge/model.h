/*
 * model: shallow KG embedding models behind one interface.
 *
 * Parameters live in two tables so that entity tables can be split by
 * partition and relation parameters kept apart:
 *   entities:  n_entities rows of m->dim floats;
 *   relations: n_relations rows of m->rel_width floats.
 * Row layouts (d = dim):
 *   transe_l1, transe_l2, distmult: entity d, relation d;
 *   complex:  entity d = [re(d/2) | im(d/2)], relation the same (d even);
 *   rotate:   entity d = [re(d/2) | im(d/2)], relation d/2 phases;
 *   rescal:   entity d, relation d*d (row-major M, score h^T M t);
 *   transr:   entity d, relation [r (k) | M (k*d, row-major)], k = rel_dim,
 *             score gamma - ||M h + r - M t||_2.
 * Scores: higher is more plausible.  Distance models score gamma - dist
 * (transe_l1: L1, transe_l2: L2, rotate: sum of complex moduli of
 * h o r - t), as DGL-KE does.
 *
 * With reciprocal relations (LibKGE/kbc), relation r + n has the inverse
 * meaning of r; head prediction (?, r, t) is then tail prediction
 * (t, r + n, ?).
 */
#ifndef KG_MODEL_H
#define KG_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "compute/kinds.h"

enum kg_model_kind {
	KG_MODEL_TRANSE_L1,
	KG_MODEL_TRANSE_L2,
	KG_MODEL_DISTMULT,
	KG_MODEL_COMPLEX,
	KG_MODEL_ROTATE,
	KG_MODEL_RESCAL,
	KG_MODEL_TRANSR
};

struct kg_model {
	enum kg_model_kind kind;
	uint32_t dim;		/* floats per entity row */
	uint32_t rel_dim;	/* TransR relation space; = dim otherwise */
	uint32_t rel_width;	/* floats per relation row */
	float gamma;		/* margin of the distance models */
};

/* Model names as DGL-KE spells them: TransE_l1, TransE_l2, DistMult,
 * ComplEx, RotatE, RESCAL, TransR (case-insensitive; "transe" = l2).
 * 0, or -1 after kg_error() naming the models. */
int kg_model_parse(const char *name, enum kg_model_kind *kind);
/* The same without a message: 0, or -1 for a name that is none of them. */
int kg_model_find(const char *name, enum kg_model_kind *kind);
const char *kg_model_name(enum kg_model_kind kind);

/* Fill m; rel_dim 0 means dim.  Checks dim constraints (complex and
 * rotate need an even dim).  0, or -1 after kg_error(). */
int kg_model_init(struct kg_model *m, enum kg_model_kind kind, uint32_t dim,
    uint32_t rel_dim, float gamma);

#endif
