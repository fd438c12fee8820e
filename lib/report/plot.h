/*
 * plot: gnuplot scripts for training curves and per-relation metrics
 * (kg-plot's pictures).
 *
 * A script is self-contained: its data come first as gnuplot datablocks
 * ($loss, $valid, $rel) of tab-separated numbers, then, for each target,
 * the terminal, the output file and the plot commands.  Without targets
 * the script sets no terminal, so gnuplot draws on its default one
 * ("kg-plot --script ... | gnuplot -p").
 *
 * Training curves: loss against epoch and against training time, and
 * below them the validation MRR likewise when the log has any; the time
 * panels only when the log has the times.  $loss rows are
 * "epoch <TAB> seconds <TAB> loss", $valid rows "epoch <TAB> seconds
 * <TAB> mrr" (seconds NaN when unknown).
 *
 * Metrics: one panel per direction asked for (both, head, tail), each a
 * clustered bar chart of MRR, Hits@1, Hits@3 and Hits@10 per relation,
 * the whole split first.  $rel rows are "name <TAB> n" followed by the
 * four metrics of both, head and tail directions (NaN where undefined).
 *
 * PNG uses the pngcairo terminal when gnuplot has it, else png; SVG the
 * svg terminal.  Text is drawn "noenhanced", so names print as written.
 */
#ifndef KG_PLOT_H
#define KG_PLOT_H

#include <stddef.h>

#include "core/util.h"
#include "report/evalreport.h"
#include "report/trainlog.h"

enum kg_plot_format { KG_PLOT_PNG, KG_PLOT_SVG };

struct kg_plot_target {
	const char *path;		/* file gnuplot writes */
	enum kg_plot_format format;
};

struct kg_plot_opts {
	const char *title;		/* NULL: none */
	const char *source;		/* the input, named in a comment */
	unsigned width, height;		/* pixels; 0: from the contents */
	unsigned sides;			/* metrics: bit (1 << KG_DIR_x) */
	const struct kg_plot_target *targets;
	size_t n_targets;
};

#define KG_PLOT_ALL_SIDES ((1u << KG_DIRS) - 1)
#define KG_PLOT_OPTS_INIT { .sides = KG_PLOT_ALL_SIDES }

/*
 * The format named by path's extension (".png" or ".svg"): 1 and *fmt
 * set, or 0 when path has neither (kg-plot then takes it as a prefix).
 */
int kg_plot_format_of(const char *path, enum kg_plot_format *fmt);
/* "png" or "svg". */
const char *kg_plot_format_ext(enum kg_plot_format fmt);

/*
 * Append the script of a training log's curves (log->n >= 1) or of a
 * report's metrics (rep->n_rows >= 1, o->sides not 0) to out.  Never
 * fail (allocation failure exits).
 */
void kg_plot_log_script(struct kg_strbuf *out, const struct kg_trainlog *log,
    const struct kg_plot_opts *o);
void kg_plot_report_script(struct kg_strbuf *out,
    const struct kg_evalreport *rep, const struct kg_plot_opts *o);

/*
 * text as a gnuplot single-quoted string (quotes doubled, control
 * characters as spaces); a new string.
 */
char *kg_plot_quote(const char *text);

#endif
