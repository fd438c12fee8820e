#include "app/partition_run.h"

#include <inttypes.h>
#include <stdio.h>

#include "core/progress.h"
#include "core/util.h"
#include "io/dataset.h"
#include "io/stage.h"

static void
set_config(struct kg_manifest *m, const struct kg_partition_opts *o)
{
	kg_manifest_set_config(m, "method",
	    json_string(kg_part_method_name(o->method)));
	kg_manifest_set_config(m, "edges",
	    json_string(kg_edge_assign_name(o->edges)));
	kg_manifest_set_config(m, "nparts", json_integer(o->nparts));
	kg_manifest_set_config(m, "seed", json_integer((json_int_t)o->seed));
	kg_manifest_set_config(m, "imbalance", json_real(o->imbalance));
	kg_manifest_set_config(m, "lambda", json_real(o->lambda));
}

int
kg_partition_run(const struct kg_partition_run_opts *o)
{
	const struct kg_stage_input in[] = { { "dataset", o->dataset } };
	struct kg_dataset ds = KG_DATASET_INIT;
	struct kg_partition pt = KG_PARTITION_INIT;
	struct kg_stage st = KG_STAGE_INIT;
	struct kg_progress prog = KG_PROGRESS_INIT;
	const struct kg_triples *tr;
	int rc;

	rc = kg_dataset_load(&ds, o->dataset);
	if (rc < 0)
		return rc;
	tr = &ds.split[KG_SPLIT_TRAIN];
	if (o->part.nparts > ds.n_entities) {
		kg_error("%s: cannot cut %" PRIu64 " entities into %" PRIu32
		    " parts", o->dataset, ds.n_entities, o->part.nparts);
		rc = -1;
		goto out;
	}
	rc = kg_stage_begin(&st, o->output, o->force, in, 1, o->argc,
	    o->argv);
	if (rc < 0)
		goto out;
	rc = -1;
	if (o->progress)
		fprintf(stderr, "%s: %" PRIu64 " entities, %" PRIu64
		    " training triples, %s into %" PRIu32 " parts\n",
		    kg_progname(), ds.n_entities, tr->n,
		    kg_part_method_name(o->part.method), o->part.nparts);
	/* METIS is one call: the line comes at its end, with the rate. */
	kg_progress_begin(&prog, o->progress, "partitioned", "triples",
	    tr->n);
	if (kg_partition_compute(&pt, ds.n_entities, tr->hrt, tr->n,
	    &o->part) < 0)
		goto out;
	kg_progress_end(&prog, tr->n);
	if (kg_partition_write(&pt, st.dir, &st.manifest) < 0)
		goto out;
	set_config(&st.manifest, &o->part);
	if (kg_stage_commit(&st) < 0)
		goto out;
	if (!o->quiet)
		kg_partition_print_stats(&pt, stderr);
	rc = 0;
out:
	kg_stage_release(&st);
	kg_partition_release(&pt);
	kg_dataset_release(&ds);
	return rc;
}
