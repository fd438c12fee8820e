#include "report/evalreport.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include <jansson.h>

#include "core/util.h"

static const char *const side_keys[KG_DIRS] = { "both", "head", "tail" };
static const char *const metric_keys[KG_METRICS] = {
	"mrr", "hits@1", "hits@3", "hits@10"
};
static const char *const metric_names[KG_METRICS] = {
	"MRR", "Hits@1", "Hits@3", "Hits@10"
};

const char *
kg_dir_name(enum kg_dir s)
{
	return (unsigned)s < KG_DIRS ? side_keys[s] : "?";
}

const char *
kg_metric_name(enum kg_metric m)
{
	return (unsigned)m < KG_METRICS ? metric_names[m] : "?";
}

void
kg_evalreport_release(struct kg_evalreport *rep)
{
	struct kg_evalreport z = KG_EVALREPORT_INIT;
	size_t i;

	for (i = 0; i < rep->n_rows; i++)
		free(rep->rows[i].name);
	free(rep->rows);
	free(rep->model);
	free(rep->encoder);
	free(rep->decoder);
	free(rep->dataset);
	free(rep->split);
	free(rep->setting);
	*rep = z;
}

/* 1 if the first line that is not blank holds only "{". */
static int
opens_alone(const char *text, size_t len)
{
	size_t i = 0;

	while (i < len && (text[i] == ' ' || text[i] == '\t' ||
	    text[i] == '\r' || text[i] == '\n'))
		i++;
	if (i == len || text[i++] != '{')
		return 0;
	while (i < len && (text[i] == ' ' || text[i] == '\t' ||
	    text[i] == '\r'))
		i++;
	return i == len || text[i] == '\n';
}

int
kg_evalreport_is_report(const char *text, size_t len)
{
	json_t *root = json_loadb(text, len, 0, NULL);
	int yes;

	if (root == NULL)
		return opens_alone(text, len);
	yes = json_is_object(root) && json_object_get(root, "metrics") != NULL;
	json_decref(root);
	return yes;
}

/*
 * Fill one direction of a row from the object sides[side]; where names
 * the object in messages ("metrics", "per_relation[3]").  0 or -1.
 */
static int
read_side(struct kg_evalrow *row, json_t *sides, enum kg_dir side,
    const char *name, const char *where)
{
	json_t *o = json_object_get(sides, side_keys[side]), *v;
	int k;

	if (!json_is_object(o)) {
		kg_error("%s: %s: no object \"%s\"", name, where,
		    side_keys[side]);
		return -1;
	}
	v = json_object_get(o, "n");
	if (!json_is_integer(v) || json_integer_value(v) < 0) {
		kg_error("%s: %s.%s: no count \"n\"", name, where,
		    side_keys[side]);
		return -1;
	}
	row->n[side] = (uint64_t)json_integer_value(v);
	for (k = 0; k < KG_METRICS; k++) {
		v = json_object_get(o, metric_keys[k]);
		if (json_is_null(v)) {
			row->m[side][k] = NAN;
			continue;
		}
		if (!json_is_number(v) || !(json_number_value(v) >= 0.0 &&
		    json_number_value(v) <= 1.0)) {
			kg_error("%s: %s.%s: \"%s\" is not a number in "
			    "[0, 1]", name, where, side_keys[side],
			    metric_keys[k]);
			return -1;
		}
		row->m[side][k] = json_number_value(v);
	}
	return 0;
}

static int
read_row(struct kg_evalrow *row, json_t *sides, const char *name,
    const char *where)
{
	int s;

	for (s = 0; s < KG_DIRS; s++)
		if (read_side(row, sides, (enum kg_dir)s, name, where) < 0)
			return -1;
	return 0;
}

/* The rows of "per_relation" (absent: none) after row 0. */
static int
read_relations(struct kg_evalreport *rep, json_t *root, const char *name)
{
	json_t *a = json_object_get(root, "per_relation"), *e;
	size_t i;

	if (a == NULL)
		return 0;
	if (!json_is_array(a)) {
		kg_error("%s: \"per_relation\" is not an array", name);
		return -1;
	}
	rep->rows = kg_xreallocarray(rep->rows, 1 + json_array_size(a),
	    sizeof(*rep->rows));
	json_array_foreach(a, i, e) {
		struct kg_evalrow *row = &rep->rows[rep->n_rows];
		json_t *id = json_object_get(e, "relation");
		json_t *nm = json_object_get(e, "name");
		char *where = kg_xasprintf("per_relation[%zu]", i);
		int rc;

		if (!json_is_integer(id)) {
			kg_error("%s: %s: no integer \"relation\"", name, where);
			free(where);
			return -1;
		}
		row->name = json_is_string(nm) ? kg_xstrdup(json_string_value(
		    nm)) : kg_xasprintf("relation %" JSON_INTEGER_FORMAT,
		    json_integer_value(id));
		rep->n_rows++;
		rc = read_row(row, e, name, where);
		free(where);
		if (rc < 0)
			return -1;
	}
	return 0;
}

static char *
opt_string(json_t *root, const char *key)
{
	json_t *v = json_object_get(root, key);

	return json_is_string(v) ? kg_xstrdup(json_string_value(v)) : NULL;
}

static int
parse_root(struct kg_evalreport *rep, json_t *root, const char *name)
{
	json_t *m = json_object_get(root, "metrics");

	if (!json_is_object(m)) {
		kg_error("%s: not a kg-eval report (no object \"metrics\")",
		    name);
		return -1;
	}
	rep->rows = kg_xcalloc(1, sizeof(*rep->rows));
	rep->rows[0].name = kg_xstrdup("(all)");
	rep->n_rows = 1;
	if (read_row(&rep->rows[0], m, name, "metrics") < 0 ||
	    read_relations(rep, root, name) < 0)
		return -1;
	rep->model = opt_string(root, "model");
	rep->encoder = opt_string(root, "encoder");
	rep->decoder = opt_string(root, "decoder");
	rep->dataset = opt_string(root, "dataset");
	rep->split = opt_string(root, "split");
	rep->setting = opt_string(root, "setting");
	return 0;
}

int
kg_evalreport_parse(struct kg_evalreport *rep, const char *text, size_t len,
    const char *name)
{
	struct kg_evalreport z = KG_EVALREPORT_INIT;
	json_error_t err;
	json_t *root;
	int rc;

	*rep = z;
	root = json_loadb(text, len, 0, &err);
	if (root == NULL) {
		kg_error("%s:%d: %s", name, err.line, err.text);
		return -1;
	}
	rc = parse_root(rep, root, name);
	json_decref(root);
	if (rc < 0)
		kg_evalreport_release(rep);
	return rc;
}
