/*
 * loss: the training losses' names.  The losses themselves (struct
 * kg_loss, kg_loss_eval, kg_loss_softmax_xent, kg_softplus, kg_sigmoid)
 * are defined in lib/compute/rowops.h, included here, so that the compute
 * backends run the same arithmetic.
 */
#ifndef KG_LOSS_H
#define KG_LOSS_H

#include "compute/rowops.h"

/* "logistic", "margin" (or "ranking"), "softmax", "bce"; 0, or -1 after
 * kg_error(). */
int kg_loss_parse(const char *name, enum kg_loss_kind *kind);
const char *kg_loss_name(enum kg_loss_kind kind);

#endif
