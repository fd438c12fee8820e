/*
 * train_run: kg-train's shallow path run from directories (application
 * layer): the job kge/train_job.h describes, as that header says.
 */
#ifndef KG_APP_TRAIN_RUN_H
#define KG_APP_TRAIN_RUN_H

#include "kge/train_job.h"

/* 0, -1 after kg_error(), or KG_ERR_VERSION (exit 3). */
int kg_train_run(const struct kg_train_opts *o, const struct kg_train_job *j);

#endif
