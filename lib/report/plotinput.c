#include "report/plotinput.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "core/util.h"
#include "io/manifest.h"
#include "report/label.h"

/* The title of a model directory: its label, dimension, directory. */
static char *
model_title(const struct kg_manifest *m, const char *dir)
{
	json_t *dim = kg_manifest_get(m, "config.dim");
	char label[96];
	char *d = json_is_integer(dim) ? kg_xasprintf(", d=%lld",
	    (long long)json_integer_value(dim)) : kg_xstrdup("");
	char *t = kg_xasprintf("%s%s (%s)", kg_label_manifest(m, label,
	    sizeof(label)), d, dir);

	free(d);
	return t;
}

/* A model directory: its manifest (kg-train's) and train_log.jsonl.
 * 0, -1 or KG_ERR_VERSION. */
static int
load_model_dir(struct kg_plot_input *in, const char *dir)
{
	struct kg_manifest m = KG_MANIFEST_INIT;
	char *path;
	int rc;

	rc = kg_manifest_load(&m, dir, "kg-train");
	if (rc < 0)
		return rc;
	in->title = model_title(&m, dir);
	kg_manifest_release(&m);
	path = kg_path_join(dir, "train_log.jsonl");
	if (!kg_path_exists(path)) {
		kg_error("model directory '%s' has no train_log.jsonl (its "
		    "trainer writes no training log)", dir);
		rc = -1;
	} else
		rc = kg_trainlog_read(&in->log, path);
	free(path);
	return rc;
}

/* The title of a report: the model's label (made here for a report
 * older than the label), dataset, split, setting and path. */
static char *
report_title(const struct kg_evalreport *r, const char *path)
{
	char label[96];

	if (r->decoder == NULL)
		kg_label_model(r->encoder, r->model ? r->model : "model", label,
		    sizeof(label));
	else
		snprintf(label, sizeof(label), "%s", r->model ? r->model :
		    r->decoder);
	return kg_xasprintf("%s on %s, %s split, %s (%s)", label,
	    r->dataset ? r->dataset : "?", r->split ? r->split : "?",
	    r->setting ? r->setting : "?", path);
}

/* A file: a kg-eval report, or else a training log.  0 or -1. */
static int
load_file(struct kg_plot_input *in, const char *path)
{
	size_t len;
	char *text = kg_read_file(path, &len);
	int rc;

	if (text == NULL)
		return -1;
	in->is_report = kg_evalreport_is_report(text, len);
	if (in->is_report) {
		rc = kg_evalreport_parse(&in->rep, text, len, path);
		if (rc == 0)
			in->title = report_title(&in->rep, path);
	} else {
		rc = kg_trainlog_parse(&in->log, text, len, path);
		if (rc == 0)
			in->title = kg_xasprintf("training log (%s)", path);
	}
	free(text);
	return rc;
}

void
kg_plot_input_release(struct kg_plot_input *in)
{
	struct kg_plot_input z = KG_PLOT_INPUT_INIT;

	kg_trainlog_release(&in->log);
	kg_evalreport_release(&in->rep);
	free(in->title);
	*in = z;
}

int
kg_plot_input_load(struct kg_plot_input *in, const char *path)
{
	struct kg_plot_input z = KG_PLOT_INPUT_INIT;
	struct stat st;
	int rc;

	*in = z;
	if (stat(path, &st) != 0) {
		kg_error_errno("cannot open '%s'", path);
		return -1;
	}
	rc = S_ISDIR(st.st_mode) ? load_model_dir(in, path) :
	    load_file(in, path);
	if (rc < 0)
		kg_plot_input_release(in);
	return rc;
}
