#include "cli/modelsrc_opts.h"

#include "core/util.h"

int
kg_modelsrc_opt(int ch, const char *arg, struct kg_modelsrc *src)
{
	switch (ch) {
	case KG_MSOPT_ENT: src->entities = arg; return 1;
	case KG_MSOPT_REL: src->relations = arg; return 1;
	case KG_MSOPT_MODEL: src->model = arg; return 1;
	case KG_MSOPT_GAMMA:
		return kg_parse_double("--gamma", arg, -1e30, 1e30,
		    &src->gamma) < 0 ? -1 : 1;
	case KG_MSOPT_RECIP: src->reciprocal = 1; return 1;
	case KG_MSOPT_EMAP: src->entity_map = arg; return 1;
	case KG_MSOPT_RMAP: src->relation_map = arg; return 1;
	}
	return 0;
}
