/*
 * train_engine: what kg-train's two shallow drivers (train_run.h, the
 * whole table; train_buckets.h, partition buckets) share about a job:
 * its checkpoint's path, opening the run's engine (kge/engine.h) with
 * the line that says where it trains, and the manifest's figures of
 * where the steps ran.
 */
#ifndef KG_APP_TRAIN_ENGINE_H
#define KG_APP_TRAIN_ENGINE_H

#include <jansson.h>

#include "kge/engine.h"
#include "kge/train_job.h"

/* The checkpoint dir of job j: checkpoint_dir, or OUTPUT.ckpt; a new
 * string. */
char *kg_train_job_ckpt(const struct kg_train_job *j);

/*
 * Open the engine for run r on the trainer tr (kg_engine_open) and,
 * with show, say on stderr where it trains when that is not the host.
 * NULL after kg_error().
 */
struct kg_engine *kg_train_engine_open(const struct kg_engine_run *r,
    struct kg_trainer *tr, int show);

/*
 * Add to fig where the steps of engine e ran: on a device its device,
 * backend and "trainer": "device"; on the host, with host set, device
 * "cpu" and the CPU backend's name; and the GPUs of the ranks the job
 * records (j->gpus: "devices", "devices_emulated").
 */
void kg_train_engine_figures(json_t *fig, const struct kg_engine *e,
    const struct kg_train_job *j, int host);

#endif
