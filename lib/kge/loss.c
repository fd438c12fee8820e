/* The loss names; the arithmetic is in lib/compute/rowops.c. */
#include "kge/loss.h"

#include <strings.h>

#include "core/util.h"

static const char *const loss_names[] = {
	[KG_LOSS_LOGISTIC] = "logistic",
	[KG_LOSS_MARGIN] = "margin",
	[KG_LOSS_SOFTMAX] = "softmax",
	[KG_LOSS_BCE] = "bce",
};

int
kg_loss_parse(const char *name, enum kg_loss_kind *kind)
{
	size_t i;

	for (i = 0; i < KG_ARRAY_LEN(loss_names); i++)
		if (strcasecmp(name, loss_names[i]) == 0) {
			*kind = (enum kg_loss_kind)i;
			return 0;
		}
	if (strcasecmp(name, "ranking") == 0) {
		*kind = KG_LOSS_MARGIN;
		return 0;
	}
	kg_error("unknown loss '%s' (expected logistic, margin, softmax or "
	    "bce)", name);
	return -1;
}

const char *
kg_loss_name(enum kg_loss_kind kind)
{
	return (size_t)kind < KG_ARRAY_LEN(loss_names) ? loss_names[kind] :
	    "unknown";
}
