/*
 * kg-plot: draw a model's training curves or a kg-eval report's metrics
 * per relation as PNG or SVG with gnuplot.  Reading the inputs is in
 * lib/report/plotinput.c (with trainlog.c and evalreport.c), the gnuplot
 * script in plot.c, running gnuplot and the atomic outputs in render.c.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/tool.h"
#include "core/util.h"
#include "io/manifest.h"
#include "report/plot.h"
#include "report/plotinput.h"
#include "report/render.h"

enum { OPT_SCRIPT = 256, OPT_SIZE, OPT_VERSION };

struct plot_cli {
	const char *input, *output, *title;
	unsigned width, height, sides;
	int script, force, quiet;
};

static void
usage(FILE *fp)
{
	fputs("usage: kg-plot [-fq] [--script] [-d direction] [--size WxH] "
	    "[-t title]\n"
	    "               [-o output] input\n"
	    "\n"
	    "Draw a model's training curves (loss and validation MRR against "
	    "epoch and\n"
	    "training time) or a kg-eval report's MRR and Hits@1/3/10 per "
	    "relation,\n"
	    "as PNG or SVG, with gnuplot.  The input is a model directory (its\n"
	    "train_log.jsonl), a training log, or a kg-eval JSON report (made "
	    "with\n"
	    "--per-relation for the relations).\n"
	    "  -o, --output file     out.png or out.svg; any other name is a "
	    "prefix:\n"
	    "                        prefix.png and prefix.svg\n"
	    "      --script          print the gnuplot script, data included, "
	    "instead of\n"
	    "                        drawing (drawing into -o's files, or on "
	    "gnuplot's\n"
	    "                        default terminal without -o)\n"
	    "  -d, --direction d     report panels: all (default), both, head "
	    "or tail\n"
	    "      --size WxH        picture size in pixels (default: from the "
	    "contents)\n"
	    "  -t, --title text      title (default: from the input)\n"
	    "  -f, --force           replace existing output files\n"
	    "  -q, --quiet           do not name the files written\n"
	    "  -h, --help            this help\n"
	    "      --version         print the version\n", fp);
}

static const struct option long_opts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "script", no_argument, NULL, OPT_SCRIPT },
	{ "direction", required_argument, NULL, 'd' },
	{ "size", required_argument, NULL, OPT_SIZE },
	{ "title", required_argument, NULL, 't' },
	{ "force", no_argument, NULL, 'f' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 }
};

static int
parse_direction(const char *s, unsigned *sides)
{
	int k;

	if (strcmp(s, "all") == 0) {
		*sides = KG_PLOT_ALL_SIDES;
		return 0;
	}
	for (k = 0; k < KG_DIRS; k++)
		if (strcmp(s, kg_dir_name((enum kg_dir)k)) == 0) {
			*sides = 1u << k;
			return 0;
		}
	kg_error("--direction: unknown direction '%s' (all, both, head, "
	    "tail)", s);
	return -1;
}

static int
parse_size(const char *s, unsigned *w, unsigned *h)
{
	const char *x = strchr(s, 'x');
	char *ws;
	uint32_t a = 0, b = 0;
	int rc;

	if (x == NULL) {
		kg_error("--size: expected WIDTHxHEIGHT, got '%s'", s);
		return -1;
	}
	ws = kg_xstrdup(s);
	ws[x - s] = '\0';
	rc = kg_parse_u32("--size width", ws, 100, 20000, &a) < 0 ||
	    kg_parse_u32("--size height", x + 1, 100, 20000, &b) < 0 ? -1 : 0;
	free(ws);
	*w = a;
	*h = b;
	return rc;
}

/* An image format kg-plot does not write, by extension; -o would
 * otherwise take "plot.pdf" as a prefix. */
static int
other_format(const char *path)
{
	static const char *const other[] = {
		"pdf", "eps", "ps", "jpg", "jpeg", "gif", "tex", "html"
	};
	const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
	size_t i;

	if (dot == NULL || (slash != NULL && dot < slash))
		return 0;
	for (i = 0; i < KG_ARRAY_LEN(other); i++)
		if (strcasecmp(dot + 1, other[i]) == 0)
			return 1;
	return 0;
}

/* The files -o names: one, or a prefix's PNG and SVG.  New strings. */
static size_t
output_names(const char *output, char *names[2],
    enum kg_plot_format fmt[2])
{
	if (kg_plot_format_of(output, &fmt[0])) {
		names[0] = kg_xstrdup(output);
		return 1;
	}
	fmt[0] = KG_PLOT_PNG;
	fmt[1] = KG_PLOT_SVG;
	names[0] = kg_xasprintf("%s.png", output);
	names[1] = kg_xasprintf("%s.svg", output);
	return 2;
}

static void
build_script(struct kg_strbuf *sb, const struct kg_plot_input *in,
    const struct plot_cli *c, const struct kg_plot_target *t, size_t n)
{
	struct kg_plot_opts o = KG_PLOT_OPTS_INIT;

	o.title = c->title ? c->title : in->title;
	o.source = c->input;
	o.width = c->width;
	o.height = c->height;
	o.sides = c->sides;
	o.targets = t;
	o.n_targets = n;
	if (in->is_report)
		kg_plot_report_script(sb, &in->rep, &o);
	else
		kg_plot_log_script(sb, &in->log, &o);
}

/* Print the script, or render it into the outputs.  An exit status. */
static int
draw(const struct kg_plot_input *in, const struct plot_cli *c)
{
	struct kg_render r = KG_RENDER_INIT;
	struct kg_strbuf sb = { NULL, 0, 0 };
	struct kg_plot_target t[2];
	enum kg_plot_format fmt[2];
	char *names[2] = { NULL, NULL };
	const char *ext[2];
	size_t n = 0, i;
	int rc = KG_EXIT_FAIL;

	if (c->output != NULL)
		n = output_names(c->output, names, fmt);
	for (i = 0; i < n; i++)
		ext[i] = kg_plot_format_ext(fmt[i]);
	if (!c->script && kg_render_begin(&r, (const char *const *)names,
	    ext, n, c->force) < 0)
		goto out;
	for (i = 0; i < n; i++) {
		t[i].path = c->script ? names[i] : r.tmp[i];
		t[i].format = fmt[i];
	}
	build_script(&sb, in, c, t, n);
	if (c->script) {
		fputs(sb.s, stdout);
		rc = KG_EXIT_OK;
	} else if (kg_render_run(&r, sb.s) == 0) {
		for (i = 0; i < n && !c->quiet; i++)
			fprintf(stderr, "kg-plot: wrote '%s'\n", names[i]);
		rc = KG_EXIT_OK;
	}
out:
	kg_render_abort(&r);
	free(sb.s);
	free(names[0]);
	free(names[1]);
	return rc;
}

/* Options into c; an exit status, or -1 to go on. */
static int
parse_options(int argc, char *argv[], struct plot_cli *c, int *dir_given)
{
	int ch;

	while ((ch = kg_tool_getopt(argc, argv, "o:d:t:fqh", long_opts,
	    NULL)) != -1) {
		switch (ch) {
		case 'o': c->output = optarg; break;
		case OPT_SCRIPT: c->script = 1; break;
		case 'd':
			if (parse_direction(optarg, &c->sides) < 0)
				return KG_EXIT_USAGE;
			*dir_given = 1;
			break;
		case OPT_SIZE:
			if (parse_size(optarg, &c->width, &c->height) < 0)
				return KG_EXIT_USAGE;
			break;
		case 't': c->title = optarg; break;
		case 'f': c->force = 1; break;
		case 'q': c->quiet = 1; break;
		case 'h':
			usage(stdout);
			return kg_close_stdout() < 0 ? KG_EXIT_FAIL :
			    KG_EXIT_OK;
		case OPT_VERSION:
			printf("kg-plot %s\n", KG_VERSION);
			return kg_close_stdout() < 0 ? KG_EXIT_FAIL :
			    KG_EXIT_OK;
		default:
			return kg_tool_usage_error();
		}
	}
	if (argc - optind != 1) {
		kg_error("expected one input");
		return kg_tool_usage_error();
	}
	c->input = argv[optind];
	if (c->output == NULL && !c->script) {
		kg_error("no output (-o FILE or --script)");
		return kg_tool_usage_error();
	}
	if (c->output != NULL && other_format(c->output)) {
		kg_error("--output: '%s': kg-plot writes .png or .svg (or "
		    "both, given a prefix)", c->output);
		return KG_EXIT_USAGE;
	}
	return -1;
}

int
main(int argc, char *argv[])
{
	struct plot_cli c = { NULL, NULL, NULL, 0, 0, KG_PLOT_ALL_SIDES, 0, 0,
		0 };
	struct kg_plot_input in = KG_PLOT_INPUT_INIT;
	int dir_given = 0, rc;

	kg_setprogname(argv[0]);
	rc = parse_options(argc, argv, &c, &dir_given);
	if (rc >= 0)
		return rc;
	rc = kg_plot_input_load(&in, c.input);
	rc = rc == KG_ERR_VERSION ? KG_EXIT_VERSION : rc < 0 ? KG_EXIT_FAIL :
	    KG_EXIT_OK;
	if (rc == KG_EXIT_OK && dir_given && !in.is_report) {
		kg_error("--direction applies to a kg-eval report, not to "
		    "training curves");
		rc = KG_EXIT_USAGE;
	}
	if (rc == KG_EXIT_OK)
		rc = draw(&in, &c);
	kg_plot_input_release(&in);
	if (kg_close_stdout() < 0 && rc == KG_EXIT_OK)
		rc = KG_EXIT_FAIL;
	return rc;
}
