/*
 * train_opts: kg-train's options, shallow models and GNN encoders, as one
 * table (cli/opttab.h): each option named once with where its value goes
 * for each kind of model, its default and its help line.  An option the
 * model kind does not take is unknown to it, as getopt reports.  Parsing
 * fills a struct kg_train_cli; cmd/kg-train.c and cli/gnn_cli.c check
 * the combinations and run.  --help and man/man1/kg-train.1 follow from
 * the table (tests/cli/man/kg-train.sh checks the page against it).
 */
#ifndef KG_TRAIN_OPTS_H
#define KG_TRAIN_OPTS_H

#include <stdint.h>
#include <stdio.h>

#include "cli/opttab.h"
#include "compute/backend.h"
#include "dist/dist_train.h"
#include "dist/gpus.h"
#include "gnntrain/gnn_train.h"
#include "kge/train.h"
#include "kge/warmstart.h"
#include "app/train_run.h"

/* The kinds of model, as the table's kind bits. */
enum { KG_TRAIN_SHALLOW = 1u, KG_TRAIN_GNN = 2u };

/* What the shallow models' options set. */
struct kg_train_shallow {
	struct kg_train_opts o;
	struct kg_train_job j;
	struct kg_dist_train_opts x;
	int double_ent, double_rel;	/* -de, -dr */
	struct kg_device device;	/* --device, --gpu */
	int pinned;		/* --device cuda:N or --gpu N: every rank on N */
	int gpus[KG_GPU_LIST_MAX];	/* --gpus: one per local rank */
	size_t n_gpus;
	int ship;		/* --ship_inputs */
	struct kg_warmstart_opts warm;	/* --init_from and the rest */
};

/* What the GNN encoders' options set. */
struct kg_train_gnn {
	struct kg_gnn_train_opts o;
	struct kg_gnn_run r;
	uint32_t hidden, dim;	/* --gnn_hidden, --hidden_dim */
	uint32_t threads;	/* --num_thread; 0: OpenMP's default */
	int progress;		/* --progress */
	struct kg_device device;	/* --device, --gpu */
	int ship;		/* --ship_inputs */
};

#define KG_TRAIN_MAX_OPTS 160

struct kg_train_cli {
	struct kg_train_shallow sh;
	struct kg_train_gnn gnn;
	unsigned char given[KG_TRAIN_MAX_OPTS];	/* by table index */
	char **av;		/* the normalised argv the values point into */
	int argc;
	const char *operand[2];	/* DATASET_DIR, MODEL_DIR */
};

/* The table. */
extern const struct kg_opttab kg_train_opttab;

/* Both kinds' defaults into c (nothing given, no argv). */
void kg_train_cli_init(struct kg_train_cli *c);

/*
 * Parse argv for kind (KG_TRAIN_SHALLOW or KG_TRAIN_GNN) into c, which it
 * initialises: the options, the --config files, --help and --version
 * (printed), and the two operands.  Returns 0 to go on, or the exit
 * status + 1 when done (help, version, a usage error after its message).
 * Free c's argv copy with kg_train_cli_release whatever the result, once
 * the options' values are no longer needed.
 */
int kg_train_cli_parse(struct kg_train_cli *c, unsigned kind, int argc,
    char *argv[]);
void kg_train_cli_release(struct kg_train_cli *c);

/* 1 when the option named name was given (command line or config). */
int kg_train_cli_given(const struct kg_train_cli *c, const char *name);

#endif
