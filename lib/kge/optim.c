/* The optimiser names and state sizes; the row updates are in
 * lib/compute/rowops.c. */
#include "kge/optim.h"

#include <strings.h>

#include "core/util.h"

int
kg_optim_parse(const char *name, enum kg_optim_kind *kind)
{
	if (strcasecmp(name, "adagrad") == 0)
		*kind = KG_OPTIM_ADAGRAD;
	else if (strcasecmp(name, "adam") == 0)
		*kind = KG_OPTIM_ADAM;
	else if (strcasecmp(name, "adagrad_elem") == 0)
		*kind = KG_OPTIM_ADAGRAD_ELEM;
	else {
		kg_error("unknown optimiser '%s' (expected adagrad, "
		    "adagrad_elem or adam)", name);
		return -1;
	}
	return 0;
}

const char *
kg_optim_name(enum kg_optim_kind kind)
{
	return kind == KG_OPTIM_ADAM ? "adam" : kind ==
	    KG_OPTIM_ADAGRAD_ELEM ? "adagrad_elem" : "adagrad";
}

size_t
kg_optim_state_width(enum kg_optim_kind kind, size_t n)
{
	return kind == KG_OPTIM_ADAM ? 2 * n + 1 : kind ==
	    KG_OPTIM_ADAGRAD_ELEM ? n : 1;
}
