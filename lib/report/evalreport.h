/*
 * evalreport: read a kg-eval JSON report (lib/eval/eval.c's writer) into
 * rows of metrics for plotting.
 *
 * A report is one JSON object with "metrics": {"tail", "head", "both"},
 * each {"n", "mrr", "mr", "hits@1", "hits@3", "hits@10"} (a metric is
 * null when n is 0), and with kg-eval --per-relation "per_relation": an
 * array of {"relation", "name", "tail", "head", "both"}.  Row 0 is the
 * whole split, named "(all)"; rows 1.. are the relations in the report's
 * order (named "relation ID" when the report has no name).
 */
#ifndef KG_EVALREPORT_H
#define KG_EVALREPORT_H

#include <stddef.h>
#include <stdint.h>

/* Directions of a report, in the order the plots show them (not kge/model.h's
 * kg_side, which is the side a candidate replaces). */
enum kg_dir { KG_DIR_BOTH, KG_DIR_HEAD, KG_DIR_TAIL, KG_DIRS };
/* Metrics a plot shows (MR is on another scale and left out). */
enum kg_metric { KG_MET_MRR, KG_MET_HITS1, KG_MET_HITS3, KG_MET_HITS10,
	KG_METRICS };

/* "both", "head", "tail" and "MRR", "Hits@1", ...; static strings. */
const char *kg_dir_name(enum kg_dir s);
const char *kg_metric_name(enum kg_metric m);

struct kg_evalrow {
	char *name;			/* owned */
	uint64_t n[KG_DIRS];		/* ranked triples */
	double m[KG_DIRS][KG_METRICS];	/* NaN where the report has null */
};

struct kg_evalreport {
	size_t n_rows;			/* 1 + relations */
	struct kg_evalrow *rows;	/* owned */
	/* Descriptive strings from the report, NULL when absent; owned.
	 * model is the model's label (report/label.h) in reports that
	 * have a decoder, the decoder's name in older ones. */
	char *model, *encoder, *decoder, *dataset, *split, *setting;
};

#define KG_EVALREPORT_INIT { 0 }

/*
 * 1 if text (len bytes) is a kg-eval report rather than a training log:
 * one JSON object with a "metrics" member, or text that is no JSON value
 * and opens with a line holding only "{" (a pretty-printed report cut
 * short or broken, which kg_evalreport_parse then reports with its line);
 * 0 otherwise.
 */
int kg_evalreport_is_report(const char *text, size_t len);

/*
 * Parse a report; name is used in messages ("name: per_relation[3].head:
 * no number \"mrr\"").  Returns 0, or -1 after kg_error() for text that
 * is not a JSON object with the members above, a metric that is neither
 * a number in [0, 1] nor null, or a missing member.  On error rep is left
 * empty.
 */
int kg_evalreport_parse(struct kg_evalreport *rep, const char *text,
    size_t len, const char *name);
/* Free everything; rep becomes KG_EVALREPORT_INIT.  Safe on INIT. */
void kg_evalreport_release(struct kg_evalreport *rep);

#endif
