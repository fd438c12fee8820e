#include "attrs/attrs_schema.h"

#include <string.h>

#include "core/util.h"

static const char *const kind_names[] = {
	[KG_ATTR_NUMERIC] = "numeric",
	[KG_ATTR_DATE] = "date",
	[KG_ATTR_CATEGORICAL] = "categorical",
	[KG_ATTR_MULTILABEL] = "multi_label",
	[KG_ATTR_TEXT] = "text",
};

const char *
kg_attr_kind_name(enum kg_attr_kind kind)
{
	return kind_names[kind];
}

static int
parse_kind(const char *s, enum kg_attr_kind *kind)
{
	size_t i;

	if (strcmp(s, "multi-label") == 0 || strcmp(s, "multilabel") == 0)
		s = "multi_label";
	for (i = 0; i < KG_ARRAY_LEN(kind_names); i++) {
		if (strcmp(s, kind_names[i]) == 0) {
			*kind = (enum kg_attr_kind)i;
			return 0;
		}
	}
	return -1;
}

/* Only keys from "allowed" (NULL-terminated) may appear in obj. */
static int
check_keys(const char *file, const char *where, json_t *obj,
    const char *const *allowed)
{
	const char *key;
	json_t *v;
	size_t i;

	json_object_foreach(obj, key, v) {
		for (i = 0; allowed[i] != NULL; i++)
			if (strcmp(key, allowed[i]) == 0)
				break;
		if (allowed[i] == NULL) {
			kg_error("%s: %s: unknown key '%s'", file, where, key);
			return -1;
		}
	}
	return 0;
}

static int
get_string(const char *file, const char *where, json_t *obj, const char *key,
    const char *def, const char **out)
{
	json_t *v = json_object_get(obj, key);

	if (v == NULL) {
		*out = def;
		return 0;
	}
	if (!json_is_string(v)) {
		kg_error("%s: %s.%s: expected a string", file, where, key);
		return -1;
	}
	*out = json_string_value(v);
	return 0;
}

static int
get_bool(const char *file, const char *where, json_t *obj, const char *key,
    int def, int *out)
{
	json_t *v = json_object_get(obj, key);

	if (v == NULL) {
		*out = def;
		return 0;
	}
	if (!json_is_boolean(v)) {
		kg_error("%s: %s.%s: expected true or false", file, where, key);
		return -1;
	}
	*out = json_is_true(v);
	return 0;
}

static int
get_u32(const char *file, const char *where, json_t *obj, const char *key,
    uint32_t def, uint32_t min, uint32_t max, uint32_t *out)
{
	json_t *v = json_object_get(obj, key);
	json_int_t x;

	if (v == NULL) {
		*out = def;
		return 0;
	}
	if (!json_is_integer(v)) {
		kg_error("%s: %s.%s: expected an integer", file, where, key);
		return -1;
	}
	x = json_integer_value(v);
	if (x < (json_int_t)min || x > (json_int_t)max) {
		kg_error("%s: %s.%s: %lld is out of range [%u, %u]", file,
		    where, key, (long long)x, min, max);
		return -1;
	}
	*out = (uint32_t)x;
	return 0;
}

/* A one-character option ("delimiter", "quote"); empty allowed if
 * allow_empty. */
static int
get_char(const char *file, const char *where, json_t *obj, const char *key,
    char def, int allow_empty, char *out)
{
	const char *s;

	if (get_string(file, where, obj, key, NULL, &s) < 0)
		return -1;
	if (s == NULL) {
		*out = def;
		return 0;
	}
	if ((s[0] == '\0' && allow_empty) || (s[0] != '\0' && s[1] == '\0')) {
		if (s[0] == '\n' || s[0] == '\r') {
			kg_error("%s: %s.%s: a line end cannot be used", file,
			    where, key);
			return -1;
		}
		*out = s[0];
		return 0;
	}
	kg_error("%s: %s.%s: expected one character", file, where, key);
	return -1;
}

static int
ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

static char *
default_output(const char *name)
{
	char *out = kg_xstrdup(name);
	char *p;

	for (p = out; *p != '\0'; p++) {
		unsigned char c = (unsigned char)*p;

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.'))
			*p = '_';
	}
	if (out[0] == '.')
		out[0] = '_';
	return out;
}

static int
valid_output(const char *s)
{
	const char *p;

	if (s[0] == '\0' || s[0] == '.' || strlen(s) > 200)
		return 0;
	for (p = s; *p != '\0'; p++) {
		unsigned char c = (unsigned char)*p;

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.'))
			return 0;
	}
	return 1;
}

/*
 * A string option that takes one of two words: the word found is stored as
 * its index in "words" (so the first is 0), "def" when the key is absent.
 * Any other string is the error "FILE: WHERE.KEY: ['VALUE' ]WRONG".
 */
struct choice {
	const char *key;
	const char *words[2];
	const char *def;
	int quote_value;	/* the message shows the value */
	const char *wrong;
};

static const struct choice form_choice = { "form", { "long", "wide" },
	NULL, 1, "is neither \"long\" nor \"wide\"" };
static const struct choice entities_choice = { "unknown_entities",
	{ "error", "skip" }, "error", 0, "expected \"error\" or \"skip\"" };
static const struct choice attributes_choice = { "unknown_attributes",
	{ "error", "skip" }, "error", 0, "expected \"error\" or \"skip\"" };
static const struct choice literals_choice = { "literals",
	{ "plain", "rdf" }, "plain", 0, "expected \"plain\" or \"rdf\"" };
static const struct choice strategy_choice = { "strategy",
	{ "uniform", "quantile" }, "quantile", 1,
	"is neither \"uniform\" nor \"quantile\"" };

/* Which word of c the string s is. */
static int
pick(const char *file, const char *where, const struct choice *c,
    const char *s, int *out)
{
	int i;

	for (i = 0; i < 2; i++)
		if (strcmp(s, c->words[i]) == 0) {
			*out = i;
			return 0;
		}
	if (c->quote_value)
		kg_error("%s: %s.%s: '%s' %s", file, where, c->key, s,
		    c->wrong);
	else
		kg_error("%s: %s.%s: %s", file, where, c->key, c->wrong);
	return -1;
}

static int
get_choice(const char *file, const char *where, json_t *obj,
    const struct choice *c, int *out)
{
	const char *s;

	if (get_string(file, where, obj, c->key, c->def, &s) < 0)
		return -1;
	return pick(file, where, c, s, out);
}

/* "path" and "form", both required. */
static int
parse_table_path(const char *file, const char *where, json_t *t,
    struct kg_attr_table *tab, const char **path)
{
	const char *form;

	if (get_string(file, where, t, "path", NULL, path) < 0 ||
	    get_string(file, where, t, "form", NULL, &form) < 0)
		return -1;
	if (*path == NULL || (*path)[0] == '\0') {
		kg_error("%s: %s: missing \"path\"", file, where);
		return -1;
	}
	tab->path = kg_xstrdup(*path);
	if (form == NULL) {
		kg_error("%s: %s: missing \"form\" (\"long\" or \"wide\")",
		    file, where);
		return -1;
	}
	return pick(file, where, &form_choice, form, &tab->wide);
}

/* How the rows are written: delimiter, quote, header, multiline. */
static int
parse_table_syntax(const char *file, const char *where, json_t *t,
    const char *path, struct kg_attr_table *tab)
{
	if (get_char(file, where, t, "delimiter",
	    ends_with(path, ".csv") || ends_with(path, ".csv.gz") ? ',' : '\t',
	    0, &tab->delimiter) < 0 ||
	    get_char(file, where, t, "quote", '"', 1, &tab->quote) < 0 ||
	    get_bool(file, where, t, "header", 0, &tab->header) < 0 ||
	    get_bool(file, where, t, "multiline", 0, &tab->multiline) < 0)
		return -1;
	if (tab->quote != '\0' && tab->quote == tab->delimiter) {
		kg_error("%s: %s: quote and delimiter are the same", file,
		    where);
		return -1;
	}
	return 0;
}

/* The wide form names its columns in a header row or in "columns". */
static int
parse_table_columns(const char *file, const char *where, json_t *t,
    struct kg_attr_table *tab)
{
	json_t *cols = json_object_get(t, "columns");
	size_t i;

	if (cols == NULL) {
		if (!tab->wide || tab->header)
			return 0;
		kg_error("%s: %s: the wide form needs \"header\": true or "
		    "\"columns\"", file, where);
		return -1;
	}
	if (!tab->wide || tab->header) {
		kg_error("%s: %s.columns: only for the wide form without "
		    "header", file, where);
		return -1;
	}
	if (!json_is_array(cols) || json_array_size(cols) == 0) {
		kg_error("%s: %s.columns: expected a non-empty array of "
		    "strings", file, where);
		return -1;
	}
	tab->n_columns = json_array_size(cols);
	tab->columns = kg_xcalloc(tab->n_columns, sizeof(char *));
	for (i = 0; i < tab->n_columns; i++) {
		json_t *c = json_array_get(cols, i);

		if (!json_is_string(c)) {
			kg_error("%s: %s.columns[%zu]: expected a string",
			    file, where, i);
			return -1;
		}
		tab->columns[i] = kg_xstrdup(json_string_value(c));
	}
	return 0;
}

static int
parse_table_at(const char *file, const char *where, json_t *t,
    struct kg_attr_table *tab)
{
	static const char *const keys[] = { "path", "form", "delimiter",
		"quote", "header", "columns", "unknown_entities",
		"unknown_attributes", "literals", "multiline", NULL };
	const char *path;

	if (!json_is_object(t)) {
		kg_error("%s: %s: expected an object", file, where);
		return -1;
	}
	if (check_keys(file, where, t, keys) < 0 ||
	    parse_table_path(file, where, t, tab, &path) < 0 ||
	    parse_table_syntax(file, where, t, path, tab) < 0)
		return -1;
	if (get_choice(file, where, t, &entities_choice,
	    &tab->skip_unknown_entities) < 0 ||
	    get_choice(file, where, t, &attributes_choice,
	    &tab->skip_unknown_attributes) < 0 ||
	    get_choice(file, where, t, &literals_choice,
	    &tab->rdf_literals) < 0)
		return -1;
	return parse_table_columns(file, where, t, tab);
}

/* "kind" (required), then only the keys of that kind, then "output". */
static int
parse_attr_head(const char *file, const char *where, const char *name,
    json_t *a, struct kg_attr_spec *sp)
{
	static const char *const k_num[] = { "kind", "output", "strategy",
		"n_bins", NULL };
	static const char *const k_date[] = { "kind", "output", "strategy",
		"n_bins", "format", NULL };
	static const char *const k_cat[] = { "kind", "output", "min_count",
		NULL };
	static const char *const k_multi[] = { "kind", "output", "min_count",
		"separator", NULL };
	static const char *const k_text[] = { "kind", "output", "dim",
		"max_features", "min_df", "sublinear_tf", "normalize",
		"encoder", "model", "max_length", "batch_size", NULL };
	static const char *const *const by_kind[] = {
		[KG_ATTR_NUMERIC] = k_num, [KG_ATTR_DATE] = k_date,
		[KG_ATTR_CATEGORICAL] = k_cat, [KG_ATTR_MULTILABEL] = k_multi,
		[KG_ATTR_TEXT] = k_text,
	};
	const char *s;

	if (get_string(file, where, a, "kind", NULL, &s) < 0)
		return -1;
	if (s == NULL) {
		kg_error("%s: %s: missing \"kind\"", file, where);
		return -1;
	}
	if (parse_kind(s, &sp->kind) < 0) {
		kg_error("%s: %s.kind: unknown kind '%s' (numeric, date, "
		    "categorical, multi_label, text)", file, where, s);
		return -1;
	}
	if (check_keys(file, where, a, by_kind[sp->kind]) < 0 ||
	    get_string(file, where, a, "output", NULL, &s) < 0)
		return -1;
	if (s != NULL && !valid_output(s)) {
		kg_error("%s: %s.output: '%s' is not a plain file-name stem "
		    "([A-Za-z0-9_.-], not starting with '.')", file, where, s);
		return -1;
	}
	sp->output = s != NULL ? kg_xstrdup(s) : default_output(name);
	return 0;
}

/* Date "format": iso8601, decimal_year or a strptime(3) format. */
static int
parse_date_format(const char *file, const char *where, json_t *a,
    struct kg_attr_spec *sp)
{
	const char *s;

	if (get_string(file, where, a, "format", "iso8601", &s) < 0)
		return -1;
	if (strcmp(s, "iso8601") == 0)
		sp->date_format = KG_DATE_ISO;
	else if (strcmp(s, "decimal_year") == 0)
		sp->date_format = KG_DATE_DECIMAL_YEAR;
	else if (strchr(s, '%') != NULL) {
		sp->date_format = KG_DATE_STRPTIME;
		sp->strptime_format = kg_xstrdup(s);
	} else {
		kg_error("%s: %s.format: '%s' is not \"iso8601\", "
		    "\"decimal_year\" or a strptime format", file, where, s);
		return -1;
	}
	return 0;
}

/* Numbers and dates: "strategy" and "n_bins". */
static int
parse_bins(const char *file, const char *where, json_t *a,
    struct kg_attr_spec *sp)
{
	int strategy;

	if (get_choice(file, where, a, &strategy_choice, &strategy) < 0)
		return -1;
	sp->strategy = strategy == 0 ? KG_BINS_UNIFORM : KG_BINS_QUANTILE;
	return get_u32(file, where, a, "n_bins", 5, 2, KG_ATTR_MAX_BINS,
	    &sp->n_bins);
}

/* Multi-label "separator": not empty. */
static int
parse_separator(const char *file, const char *where, json_t *a,
    struct kg_attr_spec *sp)
{
	const char *s;

	if (get_string(file, where, a, "separator", ",", &s) < 0)
		return -1;
	if (s[0] == '\0') {
		kg_error("%s: %s.separator: must not be empty", file, where);
		return -1;
	}
	sp->separator = kg_xstrdup(s);
	return 0;
}

static const struct choice encoder_choice = { "encoder",
	{ "tfidf", "transformer" }, "tfidf", 1,
	"is neither \"tfidf\" nor \"transformer\"" };

/* The keys of one encoder found with the other's. */
static int
check_encoder_keys(const char *file, const char *where, json_t *a,
    int transformer)
{
	static const char *const tfidf[] = { "max_features", "min_df",
		"sublinear_tf", "normalize", NULL };
	static const char *const tr[] = { "model", "max_length", "batch_size",
		NULL };
	const char *const *k = transformer ? tfidf : tr;

	for (; *k != NULL; k++)
		if (json_object_get(a, *k) != NULL) {
			kg_error("%s: %s.%s: only for the %s encoder", file,
			    where, *k, transformer ? "tfidf" : "transformer");
			return -1;
		}
	return 0;
}

/* "model" (required), "max_length", "batch_size"; "dim" 0 when absent. */
static int
parse_transformer(const char *file, const char *where, json_t *a,
    struct kg_attr_spec *sp)
{
	const char *s;
	char *base, *slash;

	if (get_string(file, where, a, "model", NULL, &s) < 0)
		return -1;
	if (s == NULL || s[0] == '\0') {
		kg_error("%s: %s: the transformer encoder needs \"model\" (a "
		    "model directory)", file, where);
		return -1;
	}
	sp->model = kg_xstrdup(s);
	base = kg_xstrdup(file);
	slash = strrchr(base, '/');
	if (s[0] == '/' || slash == NULL)
		sp->model_path = kg_xstrdup(s);
	else {
		*slash = '\0';
		sp->model_path = kg_path_join(base[0] ? base : "/", s);
	}
	free(base);
	return get_u32(file, where, a, "dim", 0, 1, KG_ATTR_MAX_DIM,
	    &sp->dim) < 0 ||
	    get_u32(file, where, a, "max_length", 0, 2, 1u << 16,
	    &sp->max_length) < 0 ||
	    get_u32(file, where, a, "batch_size", 32, 1, 4096,
	    &sp->batch_size) < 0 ? -1 : 0;
}

/* The options of the text encoders. */
static int
parse_text(const char *file, const char *where, json_t *a,
    struct kg_attr_spec *sp)
{
	if (get_choice(file, where, a, &encoder_choice,
	    &sp->transformer) < 0 ||
	    check_encoder_keys(file, where, a, sp->transformer) < 0)
		return -1;
	if (sp->transformer)
		return parse_transformer(file, where, a, sp);
	if (get_u32(file, where, a, "dim", 32, 1, KG_ATTR_MAX_DIM,
	    &sp->dim) < 0 ||
	    get_u32(file, where, a, "max_features", 2048, 1,
	    KG_ATTR_MAX_FEATURES, &sp->max_features) < 0 ||
	    get_u32(file, where, a, "min_df", 1, 1, UINT32_MAX,
	    &sp->min_df) < 0 ||
	    get_bool(file, where, a, "sublinear_tf", 0,
	    &sp->sublinear_tf) < 0 ||
	    get_bool(file, where, a, "normalize", 1, &sp->normalize) < 0)
		return -1;
	return 0;
}

static int
parse_attr_at(const char *file, const char *where, const char *name,
    json_t *a, struct kg_attr_spec *sp)
{
	sp->name = kg_xstrdup(name);
	if (name[0] == '\0') {
		kg_error("%s: attributes: empty attribute name", file);
		return -1;
	}
	if (!json_is_object(a)) {
		kg_error("%s: %s: expected an object", file, where);
		return -1;
	}
	if (parse_attr_head(file, where, name, a, sp) < 0)
		return -1;
	switch (sp->kind) {
	case KG_ATTR_DATE:
		if (parse_date_format(file, where, a, sp) < 0)
			return -1;
		/* FALLTHROUGH */
	case KG_ATTR_NUMERIC:
		return parse_bins(file, where, a, sp);
	case KG_ATTR_MULTILABEL:
		if (parse_separator(file, where, a, sp) < 0)
			return -1;
		/* FALLTHROUGH */
	case KG_ATTR_CATEGORICAL:
		return get_u32(file, where, a, "min_count", 1, 1, UINT32_MAX,
		    &sp->min_count);
	case KG_ATTR_TEXT:
		return parse_text(file, where, a, sp);
	}
	return 0;
}

/* The arrays of different attributes must not share a file name (text
 * "a_offsets" would write a_offsets.npy, as would index kind "a"). */
static int
check_file_names(const struct kg_attr_schema *s, const char *what)
{
	char **names = kg_xcalloc(3 * s->n_attrs + 1, sizeof(char *));
	size_t *owner = kg_xcalloc(3 * s->n_attrs + 1, sizeof(size_t));
	size_t i, j, n = 0;
	int rc = 0;

	for (i = 0; i < s->n_attrs; i++) {
		const char *o = s->attrs[i].output;

		owner[n] = i;
		names[n++] = kg_xasprintf("has_%s", o);
		if (s->attrs[i].kind == KG_ATTR_TEXT) {
			owner[n] = i;
			names[n++] = kg_xstrdup(o);
		} else {
			owner[n] = i;
			names[n++] = kg_xasprintf("%s_offsets", o);
			owner[n] = i;
			names[n++] = kg_xasprintf("%s_indices", o);
		}
	}
	for (i = 0; i < n && rc == 0; i++)
		for (j = 0; j < i; j++)
			if (owner[i] != owner[j] &&
			    strcmp(names[i], names[j]) == 0) {
				kg_error("%s: attributes '%s' and '%s' would "
				    "both write '%s.npy'; give one another "
				    "\"output\"", what, s->attrs[owner[j]].name,
				    s->attrs[owner[i]].name, names[i]);
				rc = -1;
				break;
			}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(owner);
	return rc;
}


/* The key path in messages ("tables[2]", "attributes.NAME") is built to
 * its full length, however long the name. */
static int
parse_table(const char *file, size_t idx, json_t *t, struct kg_attr_table *tab)
{
	char *where = kg_xasprintf("tables[%zu]", idx);
	int rc = parse_table_at(file, where, t, tab);

	free(where);
	return rc;
}

static int
parse_attr(const char *file, const char *name, json_t *a,
    struct kg_attr_spec *sp)
{
	char *where = kg_xasprintf("attributes.%s", name);
	int rc = parse_attr_at(file, where, name, a, sp);

	free(where);
	return rc;
}

/* "na_values": an array of strings; absent means [""]. */
static int
parse_na_values(struct kg_attr_schema *s, json_t *root, const char *what)
{
	json_t *na = json_object_get(root, "na_values"), *v;
	size_t i;

	if (na == NULL) {
		s->n_na = 1;
		s->na_values = kg_xcalloc(1, sizeof(char *));
		s->na_values[0] = kg_xstrdup("");
		return 0;
	}
	if (!json_is_array(na)) {
		kg_error("%s: na_values: expected an array of strings", what);
		return -1;
	}
	s->n_na = json_array_size(na);
	s->na_values = kg_xcalloc(s->n_na + 1, sizeof(char *));
	json_array_foreach(na, i, v) {
		if (!json_is_string(v)) {
			kg_error("%s: na_values[%zu]: expected a string", what,
			    i);
			return -1;
		}
		s->na_values[i] = kg_xstrdup(json_string_value(v));
	}
	return 0;
}

static int
parse_tables(struct kg_attr_schema *s, json_t *root, const char *what)
{
	json_t *tables = json_object_get(root, "tables");
	size_t i;

	if (!json_is_array(tables) || json_array_size(tables) == 0) {
		kg_error("%s: \"tables\" must be a non-empty array", what);
		return -1;
	}
	s->n_tables = json_array_size(tables);
	s->tables = kg_xcalloc(s->n_tables, sizeof(*s->tables));
	for (i = 0; i < s->n_tables; i++)
		if (parse_table(what, i, json_array_get(tables, i),
		    &s->tables[i]) < 0)
			return -1;
	return 0;
}

static int
parse_attrs(struct kg_attr_schema *s, json_t *root, const char *what)
{
	json_t *attrs = json_object_get(root, "attributes"), *v;
	const char *key;

	if (!json_is_object(attrs) || json_object_size(attrs) == 0) {
		kg_error("%s: \"attributes\" must be a non-empty object", what);
		return -1;
	}
	s->attrs = kg_xcalloc(json_object_size(attrs), sizeof(*s->attrs));
	json_object_foreach(attrs, key, v) {
		if (parse_attr(what, key, v, &s->attrs[s->n_attrs++]) < 0)
			return -1;
	}
	return 0;
}

static int
check_outputs(const struct kg_attr_schema *s, const char *what)
{
	size_t i, j;

	for (i = 0; i < s->n_attrs; i++)
		for (j = 0; j < i; j++)
			if (strcmp(s->attrs[i].output, s->attrs[j].output) ==
			    0) {
				kg_error("%s: attributes '%s' and '%s' have "
				    "the same output name '%s'", what,
				    s->attrs[j].name, s->attrs[i].name,
				    s->attrs[i].output);
				return -1;
			}
	return 0;
}

/* Wide columns must name schema attributes (checked here so that a typo
 * is a schema error, not a data error). */
static int
check_columns(const struct kg_attr_schema *s, const char *what)
{
	size_t i, j;

	for (i = 0; i < s->n_tables; i++)
		for (j = 0; j < s->tables[i].n_columns; j++)
			if (kg_attr_schema_find(s, s->tables[i].columns[j],
			    strlen(s->tables[i].columns[j])) < 0) {
				kg_error("%s: tables[%zu].columns: '%s' is "
				    "not in \"attributes\"", what, i,
				    s->tables[i].columns[j]);
				return -1;
			}
	return 0;
}

int
kg_attr_schema_from_json(struct kg_attr_schema *s, json_t *root,
    const char *what)
{
	static const char *const keys[] = { "tables", "attributes",
		"na_values", "description", NULL };

	memset(s, 0, sizeof(*s));
	s->path = kg_xstrdup(what);
	s->json = json_incref(root);
	if (!json_is_object(root)) {
		kg_error("%s: expected a JSON object", what);
		goto fail;
	}
	if (check_keys(what, "top level", root, keys) < 0 ||
	    parse_na_values(s, root, what) < 0 ||
	    parse_tables(s, root, what) < 0 ||
	    parse_attrs(s, root, what) < 0 ||
	    check_outputs(s, what) < 0 ||
	    check_file_names(s, what) < 0 ||
	    check_columns(s, what) < 0)
		goto fail;
	return 0;
fail:
	kg_attr_schema_release(s);
	return -1;
}

int
kg_attr_schema_load(struct kg_attr_schema *s, const char *path)
{
	json_error_t jerr;
	json_t *root;
	int rc;

	memset(s, 0, sizeof(*s));
	root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	if (root == NULL) {
		if (jerr.line > 0)
			kg_error("%s:%d: %s", path, jerr.line, jerr.text);
		else
			kg_error("%s: %s", path, jerr.text);
		return -1;
	}
	rc = kg_attr_schema_from_json(s, root, path);
	json_decref(root);
	return rc;
}

void
kg_attr_schema_release(struct kg_attr_schema *s)
{
	size_t i, j;

	if (s == NULL)
		return;
	for (i = 0; i < s->n_attrs; i++) {
		free(s->attrs[i].name);
		free(s->attrs[i].output);
		free(s->attrs[i].strptime_format);
		free(s->attrs[i].separator);
		free(s->attrs[i].model);
		free(s->attrs[i].model_path);
	}
	free(s->attrs);
	for (i = 0; i < s->n_tables; i++) {
		free(s->tables[i].path);
		for (j = 0; j < s->tables[i].n_columns; j++)
			free(s->tables[i].columns[j]);
		free(s->tables[i].columns);
	}
	free(s->tables);
	for (i = 0; i < s->n_na; i++)
		free(s->na_values[i]);
	free(s->na_values);
	free(s->path);
	if (s->json != NULL)
		json_decref(s->json);
	memset(s, 0, sizeof(*s));
}

int64_t
kg_attr_schema_find(const struct kg_attr_schema *s, const char *name,
    size_t len)
{
	size_t i;

	for (i = 0; i < s->n_attrs; i++)
		if (strlen(s->attrs[i].name) == len &&
		    memcmp(s->attrs[i].name, name, len) == 0)
			return (int64_t)i;
	return -1;
}

int
kg_attr_schema_is_na(const struct kg_attr_schema *s, const char *value,
    size_t len)
{
	size_t i;

	for (i = 0; i < s->n_na; i++)
		if (strlen(s->na_values[i]) == len &&
		    memcmp(s->na_values[i], value, len) == 0)
			return 1;
	return 0;
}
