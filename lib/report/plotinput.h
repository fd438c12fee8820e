/*
 * plotinput: what kg-plot draws, read from the path it is given.
 *
 * A directory is a kg-train model directory: its manifest.json (for the
 * title) and its train_log.jsonl.  A file is a kg-eval report when
 * kg_evalreport_is_report says so, and a training log otherwise.
 */
#ifndef KG_PLOTINPUT_H
#define KG_PLOTINPUT_H

#include "report/evalreport.h"
#include "report/trainlog.h"

struct kg_plot_input {
	struct kg_trainlog log;		/* when !is_report */
	struct kg_evalreport rep;	/* when is_report */
	int is_report;
	/* A default title: the model (encoder + decoder), its dimension
	 * and the directory; or the report's model, dataset, split and
	 * setting; or the log's path.  Owned. */
	char *title;
};

#define KG_PLOT_INPUT_INIT { .log = KG_TRAINLOG_INIT, \
	.rep = KG_EVALREPORT_INIT }

/*
 * Read path into in.  Returns 0; -1 after kg_error() for a missing
 * path, a directory that is not a model directory or has no
 * train_log.jsonl, or a bad log or report; KG_ERR_VERSION when the
 * model directory's manifest has an unknown format version.  On error
 * in is left empty.
 */
int kg_plot_input_load(struct kg_plot_input *in, const char *path);
/* Free everything; in becomes KG_PLOT_INPUT_INIT.  Safe on INIT. */
void kg_plot_input_release(struct kg_plot_input *in);

#endif
