#include "app/expand_run.h"

#include <stdlib.h>

#include "core/util.h"
#include "graph/partition.h"
#include "io/dataset.h"
#include "io/stage.h"

static void
set_config(struct kg_manifest *m, const struct kg_expand_run_opts *o)
{
	json_t *fan = json_array();
	uint32_t i;

	if (o->features != NULL)
		kg_manifest_set_config(m, "features",
		    json_string(o->features));
	kg_manifest_set_config(m, "hops", json_integer(o->x.hops));
	kg_manifest_set_config(m, "seed", json_integer((json_int_t)o->x.seed));
	for (i = 0; i < o->x.nfanout; i++)
		json_array_append_new(fan, json_integer(o->x.fanout[i]));
	kg_manifest_set_config(m, "fanout", fan);
}

/* The feature directory is recorded as an input when it has a manifest
 * (kg-encode-attrs merge writes one); it is checked against the output
 * either way. */
static const char *
features_role(const char *dir)
{
	char *fm;
	int has;

	if (dir == NULL)
		return NULL;
	fm = kg_path_join(dir, "manifest.json");
	has = kg_path_exists(fm);
	free(fm);
	return has ? "features" : NULL;
}

int
kg_expand_run(const struct kg_expand_run_opts *o)
{
	const struct kg_stage_input in[] = { { "dataset", o->dataset },
	    { "partitions", o->partitions },
	    { features_role(o->features), o->features } };
	struct kg_dataset ds = KG_DATASET_INIT;
	struct kg_partition_book b = KG_PARTITION_BOOK_INIT;
	struct kg_expand x = KG_EXPAND_INIT;
	struct kg_expand_stats stats = KG_EXPAND_STATS_INIT;
	struct kg_stage st = KG_STAGE_INIT;
	const struct kg_triples *tr;
	int rc;

	rc = kg_dataset_load(&ds, o->dataset);
	if (rc == 0)
		rc = kg_partition_book_load(&b, o->partitions);
	if (rc == 0 && kg_partition_book_check_dataset(&b, &ds,
	    o->partitions) < 0)
		rc = -1;
	if (rc == 0)
		rc = kg_stage_begin(&st, o->output, o->force, in,
		    KG_ARRAY_LEN(in), o->argc, o->argv);
	if (rc < 0)
		goto out;
	rc = -1;
	set_config(&st.manifest, o);
	tr = &ds.split[KG_SPLIT_TRAIN];
	if (kg_expand_init(&x, ds.n_entities, tr->hrt, tr->n, b.node_part,
	    b.edge_part, b.nparts) < 0 ||
	    kg_expand_write_all(&x, &o->x, st.dir, o->features, &st.manifest,
	    o->argc, o->argv, o->progress, &stats) < 0 ||
	    kg_stage_commit(&st) < 0)
		goto out;
	if (!o->quiet)
		kg_expand_print_stats(&stats, stderr);
	rc = 0;
out:
	kg_stage_release(&st);
	kg_expand_stats_release(&stats);
	kg_expand_release(&x);
	kg_partition_book_release(&b);
	kg_dataset_release(&ds);
	return rc;
}
