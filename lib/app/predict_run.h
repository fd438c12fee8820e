/*
 * predict_run: kg-predict end to end.  Load a dataset (for its names and
 * known triples) and a model (lib/predict/modelsrc.h), read queries by
 * name (lib/predict/query.h) in chunks, answer them (predict.h) and
 * write the k best answers of each, in input order, as TSV or JSON
 * lines (stdout, or a file through lib/predict/outfile.h).
 *
 * TSV: one line per answer, after a header line unless no_header:
 *   head<TAB>relation<TAB>tail<TAB>score<TAB>rank    (triple queries)
 *   entity<TAB>neighbour<TAB>score<TAB>rank          (nearest)
 * with the asked part filled in and rank 1 for the best.  Triples to
 * score (no '?', or lists): head<TAB>relation<TAB>tail<TAB>score, with
 * rank also tail_rank<TAB>head_rank, the realistic filtered ranks of
 * lib/eval (kg-eval's); JSON {"line", "head", "relation", "tail",
 * "score"[, "tail_rank", "head_rank"]}.  Cartesian lists write only the
 * k best combinations, best first, "line" numbering the combination.  JSON lines:
 * one object per query, {"line", "head", "relation", "tail" (null for
 * the asked part), "answers": [{"tail": name, "score": x}, ...]}, or for
 * nearest {"line", "entity", "similarity", "answers": [{"entity",
 * "score"}, ...]}.  Scores are printed with 9 significant digits, so
 * they read back as the float32 values that were ranked.
 *
 * Under mpirun rank 0 reads the queries and broadcasts each chunk, every
 * rank scores its share of the candidate entities, and rank 0 merges
 * the top-k lists and writes: the output equals one process's.
 */
#ifndef KG_PREDICT_RUN_H
#define KG_PREDICT_RUN_H

#include <stddef.h>

#include "compute/backend.h"

#include "predict/modelsrc.h"
#include "predict/predict.h"

struct kg_predict_run_opts {
	const char *dataset;	/* kg-ingest output: names, known triples */
	struct kg_modelsrc src;	/* the model */
	const char *queries;	/* file, or "-" for stdin */
	const char *output;	/* NULL or "-": stdout */
	int force;		/* replace an existing output file */
	size_t k;		/* answers per query */
	int filter;		/* leave out known triples (all splits) */
	int nearest;		/* queries are entity names */
	enum kg_sim sim;	/* nearest: the similarity */
	int json;		/* JSON lines, else TSV */
	int no_header;		/* TSV without its header line */
	size_t batch;		/* queries per block */
	int threads;		/* OpenMP threads; 0: default */
	int quiet;		/* no notes */
	int progress;		/* progress line on stderr */
	int rank;		/* triples to score: their filtered ranks */
	const char *lists[3];	/* heads, relations, tails to score (NULL:
				 * queries from "queries") */
	int cartesian;		/* every combination of the lists; the k
				 * best are written */
	int typed;		/* answers of the types the relation has in
				 * that position (lib/predict/typed.h) */
	/*
	 * Where entity queries are scored: the CPU, or a CUDA device
	 * (lib/eval/eval_device.h's scorer; the top k is kept on the host),
	 * or with seam set the CPU backend through the same path (kg-predict's
	 * test hook KG_PREDICT_SEAM=cpu).  One process only.
	 */
	struct kg_device device;
	int seam;
	int stream;		/* entity rows read from disk as needed
				 * (kg_modelsrc_stream) */
};

#define KG_PREDICT_RUN_OPTS_INIT { .src = KG_MODELSRC_INIT, .queries = "-", \
	.k = 10, .sim = KG_SIM_COSINE, .batch = 1024 }

/*
 * Answer as o says.  argc and argv are main()'s, for joining an MPI job.
 * Returns 0, -1 after kg_error() (nothing written to a file output), or
 * KG_ERR_VERSION for an input of an unknown format version.
 */
int kg_predict_run(const struct kg_predict_run_opts *o, int *argc,
    char ***argv);

#endif
