#include "report/plot.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Series colours (colour-blind safe, Okabe and Ito). */
static const char *const colours[] = {
	"#0072b2", "#e69f00", "#009e73", "#cc79a7"
};
#define LOSS_COLOUR "#0072b2"
#define VALID_COLOUR "#d55e00"

/* Lines with a marker on every point up to this many points. */
#define MAX_MARKED 60

static void sb_printf(struct kg_strbuf *sb, const char *fmt, ...)
    KG_PRINTF(2, 3);

static void
sb_printf(struct kg_strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	s = kg_xmalloc((size_t)(n < 0 ? 0 : n) + 1);
	va_start(ap, fmt);
	vsnprintf(s, (size_t)(n < 0 ? 0 : n) + 1, fmt, ap);
	va_end(ap);
	kg_strbuf_add(sb, s);
	free(s);
}

/* A number as a data field: "%.10g", "NaN" when undefined. */
static void
sb_number(struct kg_strbuf *sb, const char *sep, double x)
{
	if (isnan(x))
		sb_printf(sb, "%sNaN", sep);
	else
		sb_printf(sb, "%s%.10g", sep, x);
}

char *
kg_plot_quote(const char *text)
{
	size_t n = strlen(text), i, j = 0;
	char *q = kg_xmallocarray(2, n + 2);

	q[j++] = '\'';
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)text[i];

		if (c == '\'')
			q[j++] = '\'';
		q[j++] = c < 0x20 || c == 0x7f ? ' ' : (char)c;
	}
	q[j++] = '\'';
	q[j] = '\0';
	return q;
}

int
kg_plot_format_of(const char *path, enum kg_plot_format *fmt)
{
	size_t n = strlen(path);

	if (n > 4 && strcasecmp(path + n - 4, ".png") == 0) {
		*fmt = KG_PLOT_PNG;
		return 1;
	}
	if (n > 4 && strcasecmp(path + n - 4, ".svg") == 0) {
		*fmt = KG_PLOT_SVG;
		return 1;
	}
	return 0;
}

const char *
kg_plot_format_ext(enum kg_plot_format fmt)
{
	return fmt == KG_PLOT_SVG ? "svg" : "png";
}

/* The terminal and output of one target. */
static void
set_target(struct kg_strbuf *sb, const struct kg_plot_target *t,
    unsigned w, unsigned h)
{
	char *path = kg_plot_quote(t->path);

	if (t->format == KG_PLOT_SVG)
		sb_printf(sb, "set terminal svg size %u,%u noenhanced "
		    "font 'Sans,12' background rgb 'white'\n", w, h);
	else
		sb_printf(sb, "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) "
		    "{\n    set terminal pngcairo size %u,%u noenhanced "
		    "font 'Sans,10'\n} else {\n    set terminal png size %u,%u "
		    "noenhanced\n}\n", w, h, w, h);
	sb_printf(sb, "set output %s\n", path);
	free(path);
}

/* "set multiplot layout r,c" with the title, after a reset. */
static void
begin_page(struct kg_strbuf *sb, const struct kg_plot_opts *o, unsigned rows,
    unsigned cols)
{
	sb_printf(sb, "reset\nset multiplot layout %u,%u", rows, cols);
	if (o->title != NULL) {
		char *t = kg_plot_quote(o->title);

		sb_printf(sb, " title %s", t);
		free(t);
	}
	kg_strbuf_add(sb, "\n");
}

/* Every target in turn (or none: the default terminal) runs body. */
static void
for_targets(struct kg_strbuf *sb, const struct kg_plot_opts *o, unsigned w,
    unsigned h, void (*body)(struct kg_strbuf *, const void *,
    const struct kg_plot_opts *), const void *data)
{
	size_t i;

	if (o->n_targets == 0) {
		body(sb, data, o);
		return;
	}
	for (i = 0; i < o->n_targets; i++) {
		kg_strbuf_add(sb, "\n");
		set_target(sb, &o->targets[i], o->width ? o->width : w,
		    o->height ? o->height : h);
		body(sb, data, o);
		kg_strbuf_add(sb, "unset output\n");
	}
}

/* Training curves ----------------------------------------------------- */

static void
log_data(struct kg_strbuf *sb, const struct kg_trainlog *log)
{
	size_t i;

	kg_strbuf_add(sb, "# epoch, seconds since the start, training loss\n"
	    "$loss << EOD\n");
	for (i = 0; i < log->n; i++) {
		sb_printf(sb, "%u", log->epoch[i]);
		sb_number(sb, "\t", log->wall[i]);
		sb_number(sb, "\t", log->loss[i]);
		kg_strbuf_add(sb, "\n");
	}
	kg_strbuf_add(sb, "EOD\n");
	if (log->n_valid == 0)
		return;
	kg_strbuf_add(sb, "# epoch, seconds since the start, validation MRR\n"
	    "$valid << EOD\n");
	for (i = 0; i < log->n; i++) {
		if (isnan(log->valid[i]))
			continue;
		sb_printf(sb, "%u", log->epoch[i]);
		sb_number(sb, "\t", log->wall[i]);
		sb_number(sb, "\t", log->valid[i]);
		kg_strbuf_add(sb, "\n");
	}
	kg_strbuf_add(sb, "EOD\n");
}

/* One panel: block against column xcol (1 epoch, 2 seconds). */
static void
log_panel(struct kg_strbuf *sb, const struct kg_trainlog *log,
    const char *block, int xcol)
{
	int valid = strcmp(block, "$valid") == 0;
	int marked = valid || log->n <= MAX_MARKED;
	uint32_t e0 = log->epoch[0], e1 = log->epoch[log->n - 1];

	if (xcol == 1) {
		/* Both epoch panels share the loss's range, whole epochs. */
		sb_printf(sb, "set xlabel 'epoch'\nset xrange [%g:%g]\n",
		    e0 < e1 ? (double)e0 : e0 - 1.0,
		    e0 < e1 ? (double)e1 : e1 + 1.0);
		kg_strbuf_add(sb, e1 - e0 <= 10 ? "set xtics 1\n" :
		    "set xtics autofreq\n");
	} else
		kg_strbuf_add(sb, "set xlabel 'training time (s)'\n"
		    "set autoscale x\nset xtics autofreq\n");
	sb_printf(sb, "set ylabel '%s'\n", valid ? "validation MRR" :
	    "training loss");
	sb_printf(sb, "plot %s using %d:3 with %s lw 2 lc rgb '%s' "
	    "title '%s'\n", block, xcol, marked ? "linespoints pt 7 ps 0.6" :
	    "lines", valid ? VALID_COLOUR : LOSS_COLOUR, valid ? "valid MRR" :
	    "loss");
}

static void
log_body(struct kg_strbuf *sb, const void *data, const struct kg_plot_opts *o)
{
	const struct kg_trainlog *log = data;

	begin_page(sb, o, log->n_valid ? 2 : 1, log->has_wall ? 2 : 1);
	/* No key: each panel holds one curve, which its y label names, and
	 * a key inside the panel sat on the rising validation curve. */
	kg_strbuf_add(sb, "set grid\nunset key\n");
	log_panel(sb, log, "$loss", 1);
	if (log->has_wall)
		log_panel(sb, log, "$loss", 2);
	if (log->n_valid) {
		log_panel(sb, log, "$valid", 1);
		if (log->has_wall)
			log_panel(sb, log, "$valid", 2);
	}
	kg_strbuf_add(sb, "unset multiplot\n");
}

static void
header(struct kg_strbuf *sb, const struct kg_plot_opts *o, const char *what)
{
	sb_printf(sb, "# kg-plot %s: %s", KG_VERSION, what);
	if (o->source != NULL) {
		char *s = kg_plot_quote(o->source);

		sb_printf(sb, " of %s", s);
		free(s);
	}
	kg_strbuf_add(sb, "\n");
}

void
kg_plot_log_script(struct kg_strbuf *out, const struct kg_trainlog *log,
    const struct kg_plot_opts *o)
{
	header(out, o, "training curves");
	log_data(out, log);
	for_targets(out, o, log->has_wall ? 1200 : 700,
	    log->n_valid ? 800 : 450, log_body, log);
}

/* Per-relation metrics ------------------------------------------------ */

static void
report_data(struct kg_strbuf *sb, const struct kg_evalreport *rep)
{
	size_t i;
	int s, k;

	kg_strbuf_add(sb, "# row, triples, then MRR, Hits@1, Hits@3, Hits@10 "
	    "of both, head and tail\n$rel << EOD\n");
	for (i = 0; i < rep->n_rows; i++) {
		const struct kg_evalrow *r = &rep->rows[i];

		sb_printf(sb, "%zu\t%llu", i,
		    (unsigned long long)r->n[KG_DIR_BOTH]);
		for (s = 0; s < KG_DIRS; s++)
			for (k = 0; k < KG_METRICS; k++)
				sb_number(sb, "\t", r->m[s][k]);
		kg_strbuf_add(sb, "\n");
	}
	kg_strbuf_add(sb, "EOD\n");
	/* Names as script strings: data files mangle quotes and '#'. */
	sb_printf(sb, "array names[%zu] = [", rep->n_rows);
	for (i = 0; i < rep->n_rows; i++) {
		char *q = kg_plot_quote(rep->rows[i].name);

		sb_printf(sb, "%s%s", i ? ", " : "", q);
		free(q);
	}
	kg_strbuf_add(sb, "]\n");
}

static const char *const side_titles[KG_DIRS] = {
	"both directions", "head prediction (?, r, t)",
	"tail prediction (h, r, ?)"
};

static void
report_panel(struct kg_strbuf *sb, enum kg_dir side)
{
	int k;

	sb_printf(sb, "set title '%s'\nplot ", side_titles[side]);
	for (k = 0; k < KG_METRICS; k++)
		sb_printf(sb, "%s$rel using %d%s lc rgb '%s' title '%s'",
		    k ? ", \\\n     " : "", 3 + KG_METRICS * (int)side + k,
		    k ? "" : ":xtic(names[int($1) + 1])", colours[k],
		    kg_metric_name((enum kg_metric)k));
	kg_strbuf_add(sb, "\n");
}

static unsigned
count_sides(unsigned sides)
{
	unsigned n = 0, s;

	for (s = 0; s < KG_DIRS; s++)
		n += (sides >> s) & 1u;
	return n;
}

static void
report_body(struct kg_strbuf *sb, const void *data,
    const struct kg_plot_opts *o)
{
	int s;

	(void)data;
	begin_page(sb, o, count_sides(o->sides), 1);
	kg_strbuf_add(sb, "set datafile separator tab\n"
	    "set style data histograms\n"
	    "set style histogram clustered gap 1\n"
	    "set style fill solid 0.9 border -1\n"
	    "set yrange [0:1]\nset ytics 0.2\nset grid ytics\n"
	    "set xtics nomirror rotate by 90 right scale 0\n"
	    "set key outside right top vertical\n"
	    "set ylabel 'MRR, Hits@k'\n");
	for (s = 0; s < KG_DIRS; s++)
		if (o->sides & (1u << s))
			report_panel(sb, (enum kg_dir)s);
	kg_strbuf_add(sb, "unset multiplot\n");
}

void
kg_plot_report_script(struct kg_strbuf *out, const struct kg_evalreport *rep,
    const struct kg_plot_opts *o)
{
	size_t i, longest = 0;
	unsigned w, h;

	header(out, o, "metrics per relation");
	report_data(out, rep);
	for (i = 0; i < rep->n_rows; i++)
		if (strlen(rep->rows[i].name) > longest)
			longest = strlen(rep->rows[i].name);
	if (longest > 60)
		longest = 60;
	/* A bar group of 4 is about 36 pixels; rotated names need height. */
	w = 240 + 36 * (unsigned)(rep->n_rows < 400 ? rep->n_rows : 400);
	if (w < 900)
		w = 900;
	h = count_sides(o->sides) * (240 + 7 * (unsigned)longest);
	for_targets(out, o, w, h, report_body, rep);
}
