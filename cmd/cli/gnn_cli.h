/*
 * gnn_cli: the command line of GNN training, shared by kg-train (which
 * routes --model_name RGCN|RelGNN here) and build/aux/gnn_train; it parses
 * options and a --config file into gnn_train.h's options and runs
 * kg_gnn_train_run, under MPI when started by mpirun.
 */
#ifndef KG_GNN_CLI_H
#define KG_GNN_CLI_H

#include <stdio.h>

/*
 * The command line of GNN training, shared by kg-train (which routes
 * --model_name RGCN|RelGNN here) and build/aux/gnn_train.  Options are
 * spelled as kg-train's (dashes or underscores; a JSON --config file with
 * the same keys, the command line winning):
 *   --model_name RGCN|RelGNN (also --encoder), --decoder NAME (DistMult),
 *   --features DIR, --learned_only, --expanded DIR (kg-expand output: one
 *   rank per part under mpirun), --layers N (graph layers, 2),
 *   --gnn_hidden N (attribute and hidden layer width, 64), --hidden_dim N
 *   (entity embedding = last layer, 32), --decomposition basis|block,
 *   --num_bases N (bases or blocks, 2), --dropout P (0.2), --fanout A,B
 *   (mini-batches; one value per layer, the output layer's first),
 *   --loss NAME (bce), --gamma G, --adversarial_temperature T, --lr LR
 *   (0.01), --regularization_coef C (0), --batch_size N (1024, global),
 *   --neg_sample_size N (8), --neg_chunk_size N (positives sharing
 *   their negatives; default none), --neg_candidates N, --neg_pool_seeds,
 *   --neg_exchange (with shared negatives on several ranks: from every
 *   rank's pool, exchanged),
 *   --blocks (with --fanout: each layer only where the next one reads),
 *   --epochs N (10), --batches_per_epoch N (the paper's epoch),
 *   --lr_scale_ranks none|sqrt|linear (with it, lr x sqrt(R) or x R on R
 *   ranks, whose steps take R batches), --max_step
 *   N, --seed N, --checkpoint_dir DIR, --resume, --no_checkpoint,
 *   --keep_checkpoint, --num_thread N (OpenMP threads of the encoder;
 *   without it and OMP_NUM_THREADS, the ranks mpirun starts on one machine
 *   share its cores), --force, --progress (progress and ETA on stderr,
 *   also when stderr is a terminal), -q (neither progress nor epoch
 *   lines).
 * Joins the MPI job when started by mpirun.  Returns the exit status.
 */
int kg_gnn_cli(int argc, char *argv[]);
/* 1 when argv asks for a GNN model (--model_name RGCN|RelGNN, on the
 * command line or in a --config file). */
int kg_gnn_cli_wanted(int argc, char *argv[]);
void kg_gnn_cli_usage(FILE *f);

#endif
