/*
 * eval_mkmodel: a test helper that writes a kg-train style model
 * directory (lib/kge/modeldir.h) with seeded random embeddings for a dataset,
 * so that kg-eval can be tested without training.
 *
 *   eval_mkmodel [options] DATASET_DIR OUT_DIR MODEL DIM
 *     --reciprocal      twice the relation rows
 *     --rel-dim K       TransR relation dimension
 *     --gamma G         margin (default 12)
 *     --seed N          seed (default 1)
 *     --scale S         standard deviation of the values (default 0.5)
 *     --zeros           all values 0 (every score ties)
 *     --nan R           put a NaN into entity row R
 *     --extra-entities N  N more entity rows than the dataset has
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "io/dataset.h"
#include "io/manifest.h"
#include "kge/model.h"
#include "kge/modeldir.h"
#include "io/outdir.h"
#include "core/util.h"

int
main(int argc, char *argv[])
{
	static const struct option lo[] = {
		{ "reciprocal", no_argument, NULL, 'r' },
		{ "rel-dim", required_argument, NULL, 'k' },
		{ "gamma", required_argument, NULL, 'g' },
		{ "seed", required_argument, NULL, 's' },
		{ "scale", required_argument, NULL, 'S' },
		{ "zeros", no_argument, NULL, 'z' },
		{ "nan", required_argument, NULL, 'n' },
		{ "extra-entities", required_argument, NULL, 'x' },
		{ NULL, 0, NULL, 0 }
	};
	struct kg_dataset ds = KG_DATASET_INIT;
	struct kg_outdir od = KG_OUTDIR_INIT;
	struct kg_manifest man;
	struct kg_model m;
	struct kg_rng rng;
	enum kg_model_kind kind;
	uint64_t seed = 1, nan_row = UINT64_MAX, extra = 0, ne, nrows, i;
	uint32_t dim, rel_dim = 0;
	double gamma = 12, scale = 0.5;
	int recip = 0, zeros = 0, ch, rc = 1;
	float *ent, *rel;

	kg_setprogname("kg-train");
	while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (ch) {
		case 'r': recip = 1; break;
		case 'z': zeros = 1; break;
		case 'k':
			if (kg_parse_u32("--rel-dim", optarg, 1, 4096,
			    &rel_dim) < 0)
				return 2;
			break;
		case 'g':
			if (kg_parse_double("--gamma", optarg, -1e9, 1e9,
			    &gamma) < 0)
				return 2;
			break;
		case 's':
			if (kg_parse_u64("--seed", optarg, 0, UINT64_MAX,
			    &seed) < 0)
				return 2;
			break;
		case 'S':
			if (kg_parse_double("--scale", optarg, 0, 1e9,
			    &scale) < 0)
				return 2;
			break;
		case 'n':
			if (kg_parse_u64("--nan", optarg, 0, UINT64_MAX,
			    &nan_row) < 0)
				return 2;
			break;
		case 'x':
			if (kg_parse_u64("--extra-entities", optarg, 0, 1000,
			    &extra) < 0)
				return 2;
			break;
		default:
			return 2;
		}
	}
	if (argc - optind != 4) {
		fprintf(stderr, "usage: eval_mkmodel [options] DATASET_DIR "
		    "OUT_DIR MODEL DIM\n");
		return 2;
	}
	if (kg_model_parse(argv[optind + 2], &kind) < 0 ||
	    kg_parse_u32("DIM", argv[optind + 3], 1, 4096, &dim) < 0 ||
	    kg_model_init(&m, kind, dim, rel_dim, (float)gamma) < 0 ||
	    kg_dataset_load(&ds, argv[optind]) < 0)
		return 1;
	ne = ds.n_entities + extra;
	nrows = ds.n_relations * (recip ? 2 : 1);
	ent = kg_xcalloc(ne * dim, sizeof(float));
	rel = kg_xcalloc(nrows * m.rel_width, sizeof(float));
	kg_rng_seed(&rng, seed, 0);
	for (i = 0; !zeros && i < ne * dim; i++)
		ent[i] = (float)(scale * kg_rng_normal(&rng));
	for (i = 0; !zeros && i < nrows * m.rel_width; i++)
		rel[i] = (float)(scale * kg_rng_normal(&rng));
	if (nan_row < ne)
		ent[nan_row * dim] = NAN;
	kg_manifest_init(&man, argc, argv);
	if (kg_outdir_begin(&od, argv[optind + 1], 1) == 0 &&
	    kg_modeldir_write(od.tmp, &m, recip, ne, ds.n_relations, ent, rel,
	    argv[optind], &man) == 0 &&
	    kg_manifest_write(&man, od.tmp) == 0 &&
	    kg_outdir_commit(&od) == 0)
		rc = 0;
	else
		kg_outdir_abort(&od);
	kg_manifest_release(&man);
	kg_dataset_release(&ds);
	free(ent);
	free(rel);
	return rc;
}
