/*
 * optim: the optimisers' names and state sizes.  The row updates
 * (kg_adagrad_row, kg_adagrad_elem_row, kg_adam_row, struct kg_adam) and
 * kg_regularise and kg_clip_row are defined in lib/compute/rowops.h,
 * included here, with what each optimiser keeps per row.
 */
#ifndef KG_OPTIM_H
#define KG_OPTIM_H

#include <stddef.h>

#include "compute/rowops.h"

enum kg_optim_kind { KG_OPTIM_ADAGRAD, KG_OPTIM_ADAM, KG_OPTIM_ADAGRAD_ELEM };

/* "adagrad" (row-wise), "adagrad_elem" or "adam"; 0 or -1 after
 * kg_error(). */
int kg_optim_parse(const char *name, enum kg_optim_kind *kind);
const char *kg_optim_name(enum kg_optim_kind kind);

/* Floats of optimiser state per row of width n. */
size_t kg_optim_state_width(enum kg_optim_kind kind, size_t n);

#endif
