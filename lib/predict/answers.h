/*
 * answers: kg-predict's output, TSV or JSON lines (the layouts are in
 * predict_run.h).  Names are written byte for byte (kg-ingest keeps tabs
 * and line breaks out of them); in JSON, quotes, backslashes and control
 * bytes are escaped.
 */
#ifndef KG_ANSWERS_H
#define KG_ANSWERS_H

#include <stddef.h>
#include <stdio.h>

#include "predict/predict.h"
#include "predict/query.h"
#include "predict/topk.h"

struct kg_answers_fmt {
	int json;		/* JSON lines, else TSV */
	int nearest;		/* queries are entities */
	enum kg_sim sim;	/* named in nearest JSON */
	int score;		/* triples to score */
	int rank;		/* scores with their filtered ranks */
};

/* The TSV header line (nothing for JSON). */
void kg_answers_header(FILE *f, const struct kg_answers_fmt *fmt);

/*
 * The answers of q[0..nq), top holding them sorted best first (query i
 * in top's query i).  Write errors show in ferror(f).
 */
void kg_answers_write(FILE *f, const struct kg_answers_fmt *fmt,
    const struct kg_names *names, const struct kg_query *q, size_t nq,
    const struct kg_topk *top);

/*
 * The scores of the triples q[0..nq): TSV head, relation, tail, score
 * and with fmt->rank the realistic filtered rank of the tail and of the
 * head (tail_rank[i], head_rank[i]); JSON {"line", "head", "relation",
 * "tail", "score"[, "tail_rank", "head_rank"]}.
 */
void kg_answers_write_scores(FILE *f, const struct kg_answers_fmt *fmt,
    const struct kg_names *names, const struct kg_query *q, size_t nq,
    const float *score, const double *tail_rank, const double *head_rank);

/* s as a JSON string, quotes included. */
void kg_json_string(FILE *f, const char *s);

#endif
