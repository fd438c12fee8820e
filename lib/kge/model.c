#include "kge/model.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/util.h"

static const struct {
	const char *name;
	enum kg_model_kind kind;
} model_names[] = {
	{ "TransE_l1", KG_MODEL_TRANSE_L1 },
	{ "TransE_l2", KG_MODEL_TRANSE_L2 },
	{ "DistMult", KG_MODEL_DISTMULT },
	{ "ComplEx", KG_MODEL_COMPLEX },
	{ "RotatE", KG_MODEL_ROTATE },
	{ "RESCAL", KG_MODEL_RESCAL },
	{ "TransR", KG_MODEL_TRANSR },
};

int
kg_model_parse(const char *name, enum kg_model_kind *kind)
{
	if (kg_model_find(name, kind) == 0)
		return 0;
	kg_error("unknown model '%s' (expected TransE_l1, TransE_l2, "
	    "DistMult, ComplEx, RotatE, RESCAL or TransR)", name);
	return -1;
}

int
kg_model_find(const char *name, enum kg_model_kind *kind)
{
	size_t i;

	if (strcasecmp(name, "transe") == 0) {
		*kind = KG_MODEL_TRANSE_L2;
		return 0;
	}
	for (i = 0; i < KG_ARRAY_LEN(model_names); i++) {
		if (strcasecmp(name, model_names[i].name) == 0) {
			*kind = model_names[i].kind;
			return 0;
		}
	}
	return -1;
}

const char *
kg_model_name(enum kg_model_kind kind)
{
	size_t i;

	for (i = 0; i < KG_ARRAY_LEN(model_names); i++)
		if (model_names[i].kind == kind)
			return model_names[i].name;
	return "unknown";
}

int
kg_model_init(struct kg_model *m, enum kg_model_kind kind, uint32_t dim,
    uint32_t rel_dim, float gamma)
{
	uint64_t width;

	memset(m, 0, sizeof(*m));
	if (dim == 0) {
		kg_error("model dimension must be at least 1");
		return -1;
	}
	if (!isfinite(gamma)) {
		kg_error("gamma must be finite");
		return -1;
	}
	/* rel_dim only means something for TransR; elsewhere it is dim. */
	if (kind != KG_MODEL_TRANSR || rel_dim == 0)
		rel_dim = dim;
	switch (kind) {
	case KG_MODEL_TRANSE_L1:
	case KG_MODEL_TRANSE_L2:
	case KG_MODEL_DISTMULT:
		width = dim;
		break;
	case KG_MODEL_COMPLEX:
	case KG_MODEL_ROTATE:
		if (dim % 2 != 0) {
			kg_error("%s needs an even dimension, got %u",
			    kg_model_name(kind), dim);
			return -1;
		}
		width = kind == KG_MODEL_COMPLEX ? dim : dim / 2;
		break;
	case KG_MODEL_RESCAL:
		width = (uint64_t)dim * dim;
		break;
	case KG_MODEL_TRANSR:
		width = (uint64_t)rel_dim + (uint64_t)rel_dim * dim;
		break;
	default:
		kg_error("unknown model kind %d", (int)kind);
		return -1;
	}
	/* BLAS takes int sizes and leading dimensions. */
	if (width > INT_MAX || dim > INT_MAX / 2) {
		kg_error("%s with dimension %u: relation rows too large",
		    kg_model_name(kind), dim);
		return -1;
	}
	m->kind = kind;
	m->dim = dim;
	m->rel_dim = rel_dim;
	m->rel_width = (uint32_t)width;
	m->gamma = gamma;
	return 0;
}
