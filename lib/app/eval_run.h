/*
 * eval_run: kg-eval end to end.  Load a dataset and a model (a model
 * directory, or .npy arrays from another tool, float32 or float64,
 * in the dataset's order or with name-to-row mappings: see
 * lib/predict/modelsrc.h), check that they agree, rank a split
 * (lib/eval/eval.h), optionally add the AUC of triple classification, and
 * write the JSON report (stdout, or a file through lib/io/stage.h) and a
 * table on stderr.
 *
 * Under mpirun every rank ranks its share of the work and rank 0 writes
 * the report; a rank that fails stops the others (lib/dist/dist.h).
 *
 * With stream, the entity table is not kept in memory: after loading
 * (which checks every value) its pages are dropped, and the ranking reads
 * the query rows and each tile of candidates from disk when it needs
 * them (lib/store/store.h), the same scores, so the same metrics, for a
 * table larger than memory.
 */
#ifndef KG_EVAL_RUN_H
#define KG_EVAL_RUN_H

#include <stdint.h>

#include "compute/backend.h"
#include "eval/eval.h"

struct kg_eval_run_opts {
	const char *dataset;	/* kg-ingest output */
	const char *modeldir;	/* kg-train output, or NULL with: */
	const char *entities;	/* float32 .npy entity embeddings */
	const char *relations;	/* float32 .npy relation parameters */
	const char *model;	/* model name for the arrays */
	double gamma;		/* margin of the distance models (arrays) */
	int reciprocal;		/* the arrays hold reciprocal relations */
	const char *entity_map;	/* "row<TAB>name" rows of entities, or NULL */
	const char *relation_map;	/* the same for relations */
	enum kg_split split;	/* KG_SPLIT_VALID or KG_SPLIT_TEST */
	enum kg_ties ties;
	int raw;		/* no filtering of known triples */
	int per_relation;	/* metrics of every relation too */
	int auc;		/* ROC AUC of triple classification */
	uint64_t auc_neg;	/* negatives per positive for the AUC */
	int quiet;		/* no table on stderr */
	const char *output;	/* report file; NULL or "-": stdout */
	int force;		/* replace an existing report file */
	struct kg_eval_opts ev;	/* batch, threads, sampling, progress */
	int stream;		/* read entity rows from disk as they are
				 * needed (kg_store_open_npy_stream) */
	/*
	 * Where the ranking runs: the CPU evaluator, or the device ranker
	 * (lib/eval/eval_device.h) on a CUDA device, or with seam set on
	 * the CPU backend (kg-eval's test hook KG_EVAL_SEAM=cpu).  The
	 * report then names the backend ("backend").
	 */
	struct kg_device device;
	int seam;
};

#define KG_EVAL_RUN_OPTS_INIT { .gamma = 12.0, .split = KG_SPLIT_TEST, \
	.ties = KG_TIES_REALISTIC, .auc_neg = 1, .ev = KG_EVAL_OPTS_INIT }

/*
 * Evaluate as o says.  argc and argv are main()'s, for joining an MPI
 * job.  An existing report file (without force) and a report path equal
 * to or inside an input are refused before any work.  Returns 0, -1
 * after kg_error(), or KG_ERR_VERSION when an input was written by an
 * unknown format version.
 */
int kg_eval_run(const struct kg_eval_run_opts *o, int *argc, char ***argv);

#endif
