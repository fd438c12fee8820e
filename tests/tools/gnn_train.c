/*
 * gnn_train: GNN training from the command line (lib/gnn_train's
 * kg_gnn_cli, the options of kg-train --model_name RGCN|RelGNN), for
 * tests and benchmarks that must not depend on kg-train's routing.
 *
 * usage: gnn_train --model_name RGCN|RelGNN [options] DATASET MODEL_DIR
 * (see kg_gnn_cli in lib/gnn_train.h).  Runs as a plain process or under
 * mpirun (one rank per expanded part).
 */
#include <stdlib.h>
#include <unistd.h>

#include "gnn_cli.h"
#include "model.h"
#include "util.h"

int
main(int argc, char *argv[])
{
	int rc;

	/* The model dir must say kg-train for kg-eval to read it. */
	kg_setprogname("kg-train");
	{
		const char *core = kg_blas_better_core();

		if (core != NULL && setenv("OPENBLAS_CORETYPE", core, 1) == 0)
			execv("/proc/self/exe", argv);
	}
	rc = kg_gnn_cli(argc, argv);
	if (kg_close_stdout() < 0)
		rc = KG_EXIT_FAIL;
	return rc;
}
