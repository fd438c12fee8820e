/*
 * fuzz_attrs_schema: the attribute schema reader of kg-encode-attrs
 * (lib/attrs/attrs_schema.c).  A schema that loads must hold what the
 * header promises: at least one table and one attribute, every attribute
 * found by its name, output stems unique, made of [A-Za-z0-9_.-] and not
 * starting with a dot,
 * counts inside their limits, wide columns that name attributes; and
 * loading from the file and from the parsed document must agree.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "attrs/attrs_schema.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet();
	return 0;
}

static int
stem_ok(const char *s)
{
	if (*s == '\0' || *s == '.')
		return 0;
	for (; *s; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
		    (*s >= '0' && *s <= '9') || *s == '_' || *s == '.' ||
		    *s == '-'))
			return 0;
	return 1;
}

static void
check_attr(const struct kg_attr_schema *s, size_t i)
{
	const struct kg_attr_spec *a = &s->attrs[i];
	size_t j;

	FUZZ_CHECK(kg_attr_schema_find(s, a->name, strlen(a->name)) ==
	    (int64_t)i, "an attribute is not found by its name");
	FUZZ_CHECK(stem_ok(a->output), "an output stem is not a file name");
	for (j = 0; j < i; j++)
		FUZZ_CHECK(strcmp(s->attrs[j].output, a->output) != 0,
		    "two attributes share an output stem");
	FUZZ_CHECK(kg_attr_kind_name(a->kind) != NULL, "an unknown kind");
	if (a->kind == KG_ATTR_NUMERIC || a->kind == KG_ATTR_DATE)
		FUZZ_CHECK(a->n_bins >= 1 && a->n_bins <= KG_ATTR_MAX_BINS,
		    "n_bins out of range");
	if (a->kind == KG_ATTR_DATE && a->date_format == KG_DATE_STRPTIME)
		FUZZ_CHECK(a->strptime_format != NULL &&
		    strchr(a->strptime_format, '%') != NULL,
		    "a strptime date format without a conversion");
	if (a->kind == KG_ATTR_MULTILABEL)
		FUZZ_CHECK(a->separator != NULL && a->separator[0] != '\0',
		    "a multi-label attribute without a separator");
	if (a->kind == KG_ATTR_TEXT)
		FUZZ_CHECK(a->dim >= 1 && a->dim <= KG_ATTR_MAX_DIM &&
		    a->max_features >= 1 &&
		    a->max_features <= KG_ATTR_MAX_FEATURES,
		    "text sizes out of range");
}

static void
check_schema(const struct kg_attr_schema *s)
{
	size_t i, j;

	FUZZ_CHECK(s->n_tables >= 1 && s->n_attrs >= 1,
	    "a schema without tables or attributes");
	for (i = 0; i < s->n_attrs; i++)
		check_attr(s, i);
	for (i = 0; i < s->n_tables; i++) {
		const struct kg_attr_table *t = &s->tables[i];

		FUZZ_CHECK(t->path != NULL && t->delimiter != '\n' &&
		    t->delimiter != '\r', "a table without a path or with a "
		    "line end for delimiter");
		for (j = 0; j < t->n_columns; j++)
			FUZZ_CHECK(kg_attr_schema_find(s, t->columns[j],
			    strlen(t->columns[j])) >= 0,
			    "a wide column names no attribute");
	}
	for (i = 0; i < s->n_na; i++)
		FUZZ_CHECK(kg_attr_schema_is_na(s, s->na_values[i],
		    strlen(s->na_values[i])), "an NA value is not NA");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kg_attr_schema s, t;
	char *path = fuzz_write("schema.json", data, size);
	json_t *root = json_loadb((const char *)data, size,
	    JSON_REJECT_DUPLICATES, NULL);
	int rc = kg_attr_schema_load(&s, path);

	if (rc == 0) {
		check_schema(&s);
		kg_attr_schema_release(&s);
	}
	FUZZ_CHECK(rc < 0 || root != NULL,
	    "a schema that is not JSON loads");
	if (root != NULL) {
		FUZZ_CHECK((kg_attr_schema_from_json(&t, root, path) == 0) ==
		    (rc == 0), "the file and its parsed document differ");
		if (rc == 0)
			kg_attr_schema_release(&t);
		json_decref(root);
	}
	free(path);
	return 0;
}
