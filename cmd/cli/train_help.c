#include "cli/train_help.h"

#include <string.h>

#include "cli/opttab.h"
#include "cli/train_opts.h"

static const char shallow[] =
"Train TransE_l1, TransE_l2, DistMult, ComplEx, RotatE, RESCAL or TransR on "
"the train split of DATASET_DIR (kg-ingest) and write embeddings, optimiser "
"state, train_log.jsonl and a manifest into MODEL_DIR.  Options are spelled "
"as DGL-KE's (dashes or underscores); a JSON --config file holds the same "
"options as keys, and the command line wins.  Defaults are kgpipe's.";

static const char gnn[] =
"GNN encoders (--model_name RGCN or RelGNN), over kg-encode-attrs features "
"or learned rows, with a shallow decoder, take these options, with these "
"defaults:";

static const char gnn_shared[] =
"and, as above, with the same defaults:";

void
kg_train_usage(FILE *f, int full)
{
	const struct kg_opttab *t = &kg_train_opttab;

	kg_opttab_synopsis(f, t, KG_TRAIN_SHALLOW, "usage: kg-train",
	    "DATASET_DIR MODEL_DIR");
	fputs("       kg-train --model_name RGCN|RelGNN [GNN options] "
	    "DATASET_DIR MODEL_DIR\n", f);
	if (!full)
		return;
	fputc('\n', f);
	kg_opt_wrap(f, shallow, 0, 0);
	fputc('\n', f);
	kg_opttab_help(f, t, KG_TRAIN_SHALLOW, 0, 0);
	fputc('\n', f);
	kg_opt_wrap(f, gnn, 0, 0);
	kg_opttab_help(f, t, KG_TRAIN_GNN, KG_TRAIN_SHALLOW, 0);
	kg_opt_wrap(f, gnn_shared, 0, 0);
	kg_opttab_shared(f, t, KG_TRAIN_GNN, KG_TRAIN_SHALLOW);
	fputc('\n', f);
	kg_opttab_help(f, t, KG_TRAIN_SHALLOW, 0, 1);
}

void
kg_train_gnn_usage(FILE *f)
{
	kg_opttab_synopsis(f, &kg_train_opttab, KG_TRAIN_GNN,
	    "usage: kg-train --model_name RGCN|RelGNN",
	    "DATASET_DIR MODEL_DIR");
}

int
kg_train_help_wanted(int argc, char *argv[])
{
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "--help") == 0 ||
		    strcmp(argv[i], "-h") == 0)
			return 1;
	}
	return 0;
}
