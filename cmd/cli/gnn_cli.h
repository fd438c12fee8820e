/*
 * gnn_cli: GNN training from the command line, shared by kg-train (which
 * routes --model_name RGCN|RelGNN here) and build/aux/gnn_train.  Its
 * options are the GNN uses of kg-train's option table
 * (cli/train_opts.h); this module checks their combinations and runs
 * kg_gnn_train_run, under MPI when started by mpirun.
 */
#ifndef KG_GNN_CLI_H
#define KG_GNN_CLI_H

/*
 * Parse argv as kg-train's GNN options (a JSON --config file with the
 * same keys, the command line winning), check them and train; joins the
 * MPI job when started by mpirun.  Returns the exit status.
 */
int kg_gnn_cli(int argc, char *argv[]);

/* 1 when argv asks for a GNN model (--model_name RGCN|RelGNN, on the
 * command line or in a --config file). */
int kg_gnn_cli_wanted(int argc, char *argv[]);

#endif
