/*
 * gnn_train: GNN training from the command line (cmd/cli/gnn_cli.h's
 * kg_gnn_cli, the options of kg-train --model_name RGCN|RelGNN), for
 * tests and benchmarks that must not depend on kg-train's routing.
 *
 * usage: gnn_train --model_name RGCN|RelGNN [options] DATASET MODEL_DIR
 * (see cmd/cli/gnn_cli.h).  Runs as a plain process or under
 * mpirun (one rank per expanded part).
 */
#include "cli/gnn_cli.h"
#include "cli/tool.h"
#include "core/util.h"

int
main(int argc, char *argv[])
{
	int rc;

	/* The model dir must say kg-train for kg-eval to read it. */
	kg_setprogname("kg-train");
	kg_tool_tune_blas(argv);
	rc = kg_gnn_cli(argc, argv);
	if (kg_close_stdout() < 0)
		rc = KG_EXIT_FAIL;
	return rc;
}
