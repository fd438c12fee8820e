/*
 * Unit tests of the attribute encoder: bin edges against hand-computed
 * numpy/scikit-learn values, number and date parsing, the schema checks,
 * the table reader's error reports, the encodings of each kind, the text
 * encoder and the model round trip; the feature-directory reader
 * (attrs/features.h) on what the encoder writes and on broken
 * directories.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "attrs/attrs.h"
#include "attrs/attrs_bins.h"
#include "attrs/attrs_table.h"
#include "attrs/attrs_text.h"
#include "attrs/features.h"
#include "io/manifest.h"
#include "io/npy.h"
#include "core/util.h"
#include "test.h"

static char *
write_tmp(const char *name, const char *text)
{
	char *path = kg_path_join(t_tmpdir(), name);
	FILE *f = fopen(path, "w");

	if (f == NULL) {
		perror(path);
		exit(1);
	}
	fputs(text, f);
	fclose(f);
	return path;
}

static int
schema_from(struct kg_attr_schema *s, const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);
	int rc;

	if (j == NULL) {
		fprintf(stderr, "bad test JSON: %s\n", e.text);
		return -1;
	}
	rc = kg_attr_schema_from_json(s, j, "schema.json");
	json_decref(j);
	return rc;
}

static void
entities(struct kg_dict *d, const char *const *names, size_t n)
{
	size_t i;

	kg_dict_init(d);
	for (i = 0; i < n; i++)
		(void)kg_dict_intern(d, names[i], strlen(names[i]), NULL);
}

/* ---- bins ---- */

static void
test_uniform_edges(void)
{
	/* numpy.linspace(0, 10, 5) = 0, 2.5, 5, 7.5, 10 */
	double x[] = { 7, 0, 2.5, 10, 3.3, 9.99 }, e[5];
	double want[] = { 0, 2.5, 5, 7.5, 10 };
	uint32_t nb = kg_bins_fit(x, 6, 4, KG_BINS_UNIFORM, e), i;

	T_CHECK(nb == 4);
	for (i = 0; i < 5; i++)
		T_NEAR(e[i], want[i], 0);
	/* linspace(-1, 2, 4): step (2 - -1) / 3 = 1 -> -1, 0, 1, 2 */
	{
		double y[] = { 2, -1, 0.5 }, f[4];

		T_CHECK(kg_bins_fit(y, 3, 3, KG_BINS_UNIFORM, f) == 3);
		T_NEAR(f[0], -1, 0);
		T_NEAR(f[1], 0, 0);
		T_NEAR(f[2], 1, 0);
		T_NEAR(f[3], 2, 0);
	}
	/* searchsorted(edges[1:-1], x, side="right"): an inner edge value
	 * goes up, values outside the range are clipped. */
	T_CHECK(kg_bins_find(want, 4, -5) == 0);
	T_CHECK(kg_bins_find(want, 4, 0) == 0);
	T_CHECK(kg_bins_find(want, 4, 2.4999) == 0);
	T_CHECK(kg_bins_find(want, 4, 2.5) == 1);
	T_CHECK(kg_bins_find(want, 4, 7.5) == 3);
	T_CHECK(kg_bins_find(want, 4, 10) == 3);
	T_CHECK(kg_bins_find(want, 4, 1e9) == 3);
}

static void
test_quantile_edges(void)
{
	/* numpy.percentile(1..10, [0, 25, 50, 75, 100]): virtual indices
	 * 0, 2.25, 4.5, 6.75, 9 -> 1, 3.25, 5.5, 7.75, 10. */
	double x[] = { 10, 9, 8, 7, 6, 5, 4, 3, 2, 1 }, e[5];
	double want[] = { 1, 3.25, 5.5, 7.75, 10 };
	uint32_t i;

	T_CHECK(kg_bins_fit(x, 10, 4, KG_BINS_QUANTILE, e) == 4);
	for (i = 0; i < 5; i++)
		T_NEAR(e[i], want[i], 1e-12);
	/* With repeated values: percentiles of [1,1,1,1,1,1,2,3] at
	 * indices 0, 1.75, 3.5, 5.25, 7 are 1, 1, 1, 1.25, 3; edges closer
	 * than 1e-8 are dropped as scikit-learn does: 1, 1.25, 3. */
	{
		double y[] = { 1, 2, 1, 1, 3, 1, 1, 1 }, f[5];

		T_CHECK(kg_bins_fit(y, 8, 4, KG_BINS_QUANTILE, f) == 2);
		T_NEAR(f[0], 1, 0);
		T_NEAR(f[1], 1.25, 1e-12);
		T_NEAR(f[2], 3, 0);
		T_CHECK(kg_bins_find(f, 2, 1) == 0);
		T_CHECK(kg_bins_find(f, 2, 2) == 1);
		T_CHECK(kg_bins_find(f, 2, 3) == 1);
	}
	/* One distinct value: a single bin (-inf, inf). */
	{
		double z[] = { 4, 4, 4 }, f[3];

		T_CHECK(kg_bins_fit(z, 3, 2, KG_BINS_QUANTILE, f) == 1);
		T_CHECK(isinf(f[0]) && f[0] < 0 && isinf(f[1]) && f[1] > 0);
		T_CHECK(kg_bins_find(f, 1, 4) == 0);
	}
}

static void
test_numbers(void)
{
	double v;

	T_CHECK(kg_parse_number("+2025137", 8, &v) == 0 && v == 2025137);
	T_CHECK(kg_parse_number("2.08469e+09", 11, &v) == 0 &&
	    v == 2.08469e9);
	T_CHECK(kg_parse_number("-0.5", 4, &v) == 0 && v == -0.5);
	T_CHECK(kg_parse_number(".5", 2, &v) == 0 && v == 0.5);
	T_CHECK(kg_parse_number("1,5", 3, &v) < 0);
	T_CHECK(kg_parse_number("inf", 3, &v) < 0);
	T_CHECK(kg_parse_number("nan", 3, &v) < 0);
	T_CHECK(kg_parse_number("0x10", 4, &v) < 0);
	T_CHECK(kg_parse_number("", 0, &v) < 0);
	T_CHECK(kg_parse_number(" 1", 2, &v) < 0);
	T_CHECK(kg_parse_number("12abc", 5, &v) < 0);
	T_CHECK(kg_parse_number("1e999", 5, &v) < 0);
}

static int
date(const char *s, enum kg_date_format f, const char *fmt, double *d)
{
	return kg_parse_date(s, strlen(s), f, fmt, d);
}

static void
test_dates(void)
{
	double d;

	T_CHECK(date("1970-01-01", KG_DATE_ISO, NULL, &d) == 0 && d == 0);
	/* 2000-03-01: 30 years with 7 leap days + Jan + Feb (29) */
	T_CHECK(date("2000-03-01", KG_DATE_ISO, NULL, &d) == 0 &&
	    d == 30 * 365 + 7 + 31 + 29);
	T_CHECK(date("1969-12-31", KG_DATE_ISO, NULL, &d) == 0 && d == -1);
	T_CHECK(date("2001", KG_DATE_ISO, NULL, &d) == 0 && d == 11323);
	T_CHECK(date("2001-02", KG_DATE_ISO, NULL, &d) == 0 &&
	    d == 11323 + 31);
	T_CHECK(date("1970-01-02T12:00:00Z", KG_DATE_ISO, NULL, &d) == 0 &&
	    d == 1.5);
	T_CHECK(date("1970-01-02T12:00:00+12:00", KG_DATE_ISO, NULL, &d) ==
	    0 && d == 1.0);
	T_CHECK(date("1970-01-01 06:00", KG_DATE_ISO, NULL, &d) == 0 &&
	    d == 0.25);
	T_CHECK(date("1970-01-01T00:00:43.2Z", KG_DATE_ISO, NULL, &d) == 0);
	T_NEAR(d, 43.2 / 86400, 1e-12);
	/* Year 0 is 1 BCE; -0399-01-01 is 2369 years before 1970, with
	 * 2369 * 365 + leap days: multiples of 4 in [-399, 1969] (592), less
	 * centuries (23), plus multiples of 400 (0, 400, ..., 1600: 5), 574. */
	T_CHECK(date("-0399-01-01T00:00:00Z", KG_DATE_ISO, NULL, &d) == 0);
	T_NEAR(d, (double)kg_days_from_civil(-399, 1, 1), 0);
	T_NEAR(kg_days_from_civil(-399, 1, 1), -(2369.0 * 365 + 574), 0);
	/* Zones on dates without a time (xsd:date, gYear, gYearMonth). */
	T_CHECK(date("2000-03-01Z", KG_DATE_ISO, NULL, &d) == 0 &&
	    d == 30 * 365 + 7 + 31 + 29);
	T_CHECK(date("1970-01-02+12:00", KG_DATE_ISO, NULL, &d) == 0 &&
	    d == 0.5);
	T_CHECK(date("1970-01-02-06:00", KG_DATE_ISO, NULL, &d) == 0 &&
	    d == 1.25);
	T_CHECK(date("2001Z", KG_DATE_ISO, NULL, &d) == 0 && d == 11323);
	T_CHECK(date("2001-02Z", KG_DATE_ISO, NULL, &d) == 0 &&
	    d == 11323 + 31);
	T_CHECK(date("1970-01-01T00:00:00+01:30", KG_DATE_ISO, NULL, &d) ==
	    0 && d == -0.0625);
	T_CHECK(date("1970-01-01Zx", KG_DATE_ISO, NULL, &d) < 0);
	T_CHECK(date("1970-01-01+15:00", KG_DATE_ISO, NULL, &d) < 0);
	T_CHECK(date("1970-01-01+05:60", KG_DATE_ISO, NULL, &d) < 0);
	T_CHECK(date("1970-01-01+", KG_DATE_ISO, NULL, &d) < 0);
	T_CHECK(date("1970-01-01T06:00Z+01:00", KG_DATE_ISO, NULL, &d) < 0);
	T_CHECK(date("2001-02-29", KG_DATE_ISO, NULL, &d) < 0);
	T_CHECK(date("2000-02-29", KG_DATE_ISO, NULL, &d) == 0);
	T_CHECK(date("2001-13-01", KG_DATE_ISO, NULL, &d) < 0);
	T_CHECK(date("2001-1-1", KG_DATE_ISO, NULL, &d) < 0);
	T_CHECK(date("201", KG_DATE_ISO, NULL, &d) < 0);
	T_CHECK(date("2001-01-01T25:00", KG_DATE_ISO, NULL, &d) < 0);
	T_CHECK(date("yesterday", KG_DATE_ISO, NULL, &d) < 0);
	T_CHECK(date("01/03/2000", KG_DATE_STRPTIME, "%d/%m/%Y", &d) == 0 &&
	    d == 30 * 365 + 7 + 31 + 29);
	T_CHECK(date("31/02/2000", KG_DATE_STRPTIME, "%d/%m/%Y", &d) < 0);
	T_CHECK(date("01/03/2000x", KG_DATE_STRPTIME, "%d/%m/%Y", &d) < 0);
	T_CHECK(date("1970.5", KG_DATE_DECIMAL_YEAR, NULL, &d) == 0);
	T_NEAR(d, 0.5 * 365.2425, 1e-9);
	T_CHECK(date("x1970", KG_DATE_DECIMAL_YEAR, NULL, &d) < 0);
}

/* ---- schema ---- */

static void
expect_schema_error(const char *text, const char *pattern)
{
	struct kg_attr_schema s;

	kg_error_mute(1);
	T_CHECKF(schema_from(&s, text) < 0, "accepted: %s", text);
	kg_error_mute(0);
	T_CHECKF(strstr(kg_error_last(), pattern) != NULL,
	    "message '%s' lacks '%s'", kg_error_last(), pattern);
}

#define TAB_LONG "\"tables\": [{\"path\": \"a.tsv\", \"form\": \"long\"}]"

static void
test_schema_errors(void)
{
	struct kg_attr_schema s;
	char *path;

	expect_schema_error("{" TAB_LONG ", \"attributes\": {\"a\": "
	    "{\"kind\": \"colour\"}}}", "unknown kind 'colour'");
	expect_schema_error("{" TAB_LONG ", \"attributes\": {\"a\": "
	    "{\"kind\": \"numeric\", \"bins\": 3}}}", "unknown key 'bins'");
	expect_schema_error("{" TAB_LONG ", \"attributes\": {\"a\": "
	    "{\"kind\": \"numeric\", \"n_bins\": 1}}}", "out of range");
	expect_schema_error("{" TAB_LONG ", \"attributes\": {\"a\": "
	    "{\"kind\": \"numeric\", \"strategy\": \"kmeans\"}}}",
	    "'kmeans' is neither");
	expect_schema_error("{" TAB_LONG ", \"attributes\": {\"a\": "
	    "{\"kind\": \"text\", \"dim\": \"8\"}}}", "expected an integer");
	expect_schema_error("{" TAB_LONG ", \"attributes\": {\"a\": "
	    "{\"kind\": \"date\", \"format\": \"dmy\"}}}", "strptime");
	expect_schema_error("{" TAB_LONG ", \"attributes\": {}}",
	    "non-empty object");
	expect_schema_error("{\"attributes\": {\"a\": {\"kind\": "
	    "\"text\"}}}", "\"tables\" must be");
	expect_schema_error("{" TAB_LONG ", \"attributes\": {\"a/b\": "
	    "{\"kind\": \"text\"}, \"a_b\": {\"kind\": \"text\"}}}",
	    "same output name");
	expect_schema_error("{\"tables\": [{\"path\": \"w.csv\", \"form\": "
	    "\"wide\"}], \"attributes\": {\"a\": {\"kind\": \"text\"}}}",
	    "needs \"header\"");
	expect_schema_error("{" TAB_LONG ", \"attributes\": {\"a\": "
	    "{\"kind\": \"numeric\"}, \"a_offsets\": {\"kind\": "
	    "\"text\"}}}", "would both write 'a_offsets.npy'");
	expect_schema_error("{\"tables\": [{\"path\": \"w.csv\", \"form\": "
	    "\"wide\", \"columns\": [\"b\"]}], \"attributes\": {\"a\": "
	    "{\"kind\": \"text\"}}}", "'b' is not in");
	expect_schema_error("{\"tables\": [{\"path\": \"w.csv\", \"form\": "
	    "\"tall\"}], \"attributes\": {\"a\": {\"kind\": \"text\"}}}",
	    "neither \"long\" nor \"wide\"");
	expect_schema_error("{\"tables\": [{\"path\": \"w.csv\", \"form\": "
	    "\"long\", \"delimiter\": \";;\"}], \"attributes\": {\"a\": "
	    "{\"kind\": \"text\"}}}", "one character");
	expect_schema_error("{" TAB_LONG ", \"attributes\": {\"a\": "
	    "{\"kind\": \"text\", \"output\": \"../x\"}}}",
	    "not a plain file-name");
	/* A JSON syntax error is reported with its line. */
	path = write_tmp("bad.json", "{\n \"tables\": [\n ,\n]}\n");
	kg_error_mute(1);
	T_CHECK(kg_attr_schema_load(&s, path) < 0);
	kg_error_mute(0);
	T_CHECKF(strstr(kg_error_last(), "bad.json:3:") != NULL, "%s",
	    kg_error_last());
	free(path);
	/* Defaults. */
	T_CHECK(schema_from(&s, "{\"tables\": [{\"path\": \"x.csv.gz\", "
	    "\"form\": \"long\"}], \"attributes\": {\"n\": {\"kind\": "
	    "\"numeric\"}, \"t\": {\"kind\": \"text\"}, \"m\": {\"kind\": "
	    "\"multi-label\"}, \"<http://x/y>\": {\"kind\": "
	    "\"categorical\"}}}") == 0);
	T_CHECK(s.tables[0].delimiter == ',' && s.tables[0].quote == '"');
	T_CHECK(s.attrs[0].n_bins == 5 &&
	    s.attrs[0].strategy == KG_BINS_QUANTILE);
	T_CHECK(s.attrs[1].dim == 32 && s.attrs[1].normalize == 1);
	T_CHECK(s.attrs[2].kind == KG_ATTR_MULTILABEL &&
	    strcmp(s.attrs[2].separator, ",") == 0);
	T_CHECK(strcmp(s.attrs[3].output, "_http___x_y_") == 0);
	kg_attr_schema_release(&s);
}

/* ---- tables, fit and encode ---- */

static const char *const ents5[] = { "a", "b", "c", "d", "e" };

/* Collect, fit and encode the tables; NULL model on failure. */
static int
fit_and_encode(const char *schema_text, const char *const *paths,
    const char *outdir, struct kg_attrs_model *m, uint64_t max_errors)
{
	struct kg_attr_schema s;
	struct kg_dict ents;
	struct kg_attrs_data d;
	int rc = -1;

	memset(m, 0, sizeof(*m));
	if (schema_from(&s, schema_text) < 0)
		return -1;
	entities(&ents, ents5, 5);
	if (kg_attrs_collect(&d, &s, paths, &ents, 0, 5, max_errors) == 0) {
		rc = kg_attrs_fit(m, &s, &d, 5, NULL);
		if (rc == 0 && outdir != NULL)
			rc = kg_attrs_encode(m, &d, NULL, outdir, NULL);
		kg_attrs_data_release(&d);
	}
	kg_dict_release(&ents);
	kg_attr_schema_release(&s);
	return rc;
}

/* Row e of a CSR attribute as a string "1,3". */
static void
csr_row(const char *dir, const char *out, uint64_t e, char *buf, size_t cap)
{
	struct kg_npy o = KG_NPY_INIT, ix = KG_NPY_INIT;
	char *p1 = kg_xasprintf("%s/%s_offsets.npy", dir, out);
	char *p2 = kg_xasprintf("%s/%s_indices.npy", dir, out);
	size_t used = 0;
	int64_t k;

	buf[0] = '\0';
	if (kg_npy_read_expect(p1, KG_DT_I8, 1, &o) == 0 &&
	    kg_npy_read_expect(p2, KG_DT_I4, 1, &ix) == 0) {
		const int64_t *off = o.data;
		const int32_t *idx = ix.data;

		for (k = off[e]; k < off[e + 1]; k++)
			used += (size_t)snprintf(buf + used, cap - used, "%s%d",
			    k > off[e] ? "," : "", idx[k]);
	} else
		snprintf(buf, cap, "unreadable");
	kg_npy_release(&o);
	kg_npy_release(&ix);
	free(p1);
	free(p2);
}

static int
has_value(const char *dir, const char *out, uint64_t e)
{
	struct kg_npy h = KG_NPY_INIT;
	char *p = kg_xasprintf("%s/has_%s.npy", dir, out);
	int v = -1;

	if (kg_npy_read_expect(p, KG_DT_U1, 1, &h) == 0)
		v = ((const uint8_t *)h.data)[e];
	kg_npy_release(&h);
	free(p);
	return v;
}

#define ROW(dir, out, e, want) do {					\
	char rb_[256];							\
	csr_row(dir, out, e, rb_, sizeof(rb_));				\
	T_CHECKF(strcmp(rb_, want) == 0, "%s row %d: '%s', want '%s'",	\
	    out, (int)(e), rb_, want);					\
} while (0)

static void
test_encode_kinds(void)
{
	char *dir = kg_path_join(t_tmpdir(), "enc");
	char *paths[2];
	struct kg_attrs_model m;
	const char *schema =
	    "{\"tables\": [{\"path\": \"w.csv\", \"form\": \"wide\", "
	    "\"header\": true}, {\"path\": \"l.tsv\", \"form\": \"long\"}],"
	    " \"attributes\": {"
	    " \"age\": {\"kind\": \"numeric\", \"strategy\": \"uniform\","
	    "  \"n_bins\": 4},"
	    " \"born\": {\"kind\": \"date\", \"strategy\": \"uniform\","
	    "  \"n_bins\": 2},"
	    " \"dept\": {\"kind\": \"categorical\", \"min_count\": 2},"
	    " \"tags\": {\"kind\": \"multi_label\", \"separator\": \";\"}}}";

	T_CHECK(mkdir(dir, 0755) == 0);
	/* age 0..40 uniform 4 bins: edges 0, 10, 20, 30, 40 (+ missing 4) */
	paths[0] = write_tmp("w.csv", "entity,age,dept,tags\n"
	    "a,0,sales,\"x; y\"\n"
	    "b,10,sales,y\n"
	    "c,,eng,\n"
	    "d,40,hr,z;x;x\n");
	paths[1] = write_tmp("l.tsv", "e\tage\t25\n"
	    "e\tage\t39\n"
	    "a\tborn\t2000-01-01\n"
	    "b\tborn\t2000-01-03\n"
	    "c\tborn\t2000-01-02T00:00:00Z\n"
	    "e\tdept\teng\n");
	T_CHECK(fit_and_encode(schema, (const char *const *)paths, dir, &m,
	    0) == 0);
	T_CHECK(m.enc[0].slots == 5 && m.enc[0].n_bins == 4);
	ROW(dir, "age", 0, "0");
	ROW(dir, "age", 1, "1");	/* 10 is an inner edge: goes up */
	ROW(dir, "age", 2, "4");	/* missing bin */
	ROW(dir, "age", 3, "3");
	ROW(dir, "age", 4, "2,3");	/* two values, two bins */
	T_CHECK(has_value(dir, "age", 2) == 0 && has_value(dir, "age", 4) ==
	    1);
	/* born: days 10957, 10958, 10959 -> edges 10957, 10958, 10959 */
	ROW(dir, "born", 0, "0");
	ROW(dir, "born", 1, "1");
	ROW(dir, "born", 2, "1");
	ROW(dir, "born", 3, "2");
	ROW(dir, "born", 4, "2");
	/* dept with min_count 2: eng (c, e) and sales (a, b); hr is rare
	 * and goes to the unknown slot 2 */
	T_CHECK(m.enc[2].n_vocab == 2 && m.enc[2].slots == 3);
	ROW(dir, "dept", 0, "1");
	ROW(dir, "dept", 2, "0");
	ROW(dir, "dept", 3, "2");
	ROW(dir, "dept", 4, "0");
	/* tags: vocabulary x, y, z; trimmed, de-duplicated, sorted */
	ROW(dir, "tags", 0, "0,1");
	ROW(dir, "tags", 1, "1");
	ROW(dir, "tags", 2, "");
	ROW(dir, "tags", 3, "0,2");
	T_CHECK(has_value(dir, "tags", 2) == 0 && has_value(dir, "tags", 4) ==
	    0 && has_value(dir, "tags", 3) == 1);
	kg_attrs_model_release(&m);
	free(paths[0]);
	free(paths[1]);
	free(dir);
}

/* A bad table must fail with "file:line: message". */
static void
expect_table_error(const char *schema, const char *table, const char *pat,
    uint64_t max_errors)
{
	char *path = write_tmp("bad.tsv", table);
	struct kg_attrs_model m;
	int rc;

	kg_error_mute(1);
	rc = fit_and_encode(schema, (const char *const *)&path, NULL, &m,
	    max_errors);
	kg_error_mute(0);
	T_CHECKF(rc < 0, "accepted: %s", table);
	if (rc == 0)
		kg_attrs_model_release(&m);
	T_CHECKF(strstr(kg_error_last(), pat) != NULL,
	    "message '%s' lacks '%s'", kg_error_last(), pat);
	free(path);
}

static void
test_bad_tables(void)
{
	const char *s = "{\"tables\": [{\"path\": \"bad.tsv\", \"form\": "
	    "\"long\"}], \"attributes\": {\"n\": {\"kind\": \"numeric\"},"
	    " \"d\": {\"kind\": \"date\"}}}";
	const char *w = "{\"tables\": [{\"path\": \"bad.tsv\", \"form\": "
	    "\"wide\", \"header\": true, \"delimiter\": \",\"}], "
	    "\"attributes\": {\"n\": {\"kind\": \"numeric\"}}}";
	char *path;
	struct kg_attrs_model m;

	expect_table_error(s, "a\tn\t1\nzz\tn\t2\n",
	    "bad.tsv:2: unknown entity 'zz'", 0);
	expect_table_error(s, "a\tn\t1\n\nb\tn\t1.2.3\n",
	    "bad.tsv:3: attribute 'n': cannot parse '1.2.3' as a number", 0);
	expect_table_error(s, "a\td\t2001-02-30\n",
	    "bad.tsv:1: attribute 'd': cannot parse '2001-02-30' as a date", 0);
	expect_table_error(s, "a\tn\t1\na\tcolour\tred\n",
	    "bad.tsv:2: attribute 'colour' is not in the schema", 0);
	expect_table_error(s, "a\tn\n", "bad.tsv:1: expected 3 fields", 0);
	expect_table_error(s, "\tn\t1\n", "bad.tsv:1: empty entity name", 0);
	expect_table_error(w, "entity,n,x\na,1,2\n",
	    "bad.tsv:1: attribute 'x' is not in the schema", 0);
	expect_table_error(w, "entity,n\na,1\nb,2,3\n",
	    "bad.tsv:3: expected 2 fields, found 3", 0);
	/* A stray quote must not swallow the following rows. */
	expect_table_error(w, "entity,n\na,1\nb,\"2\nc,3\n",
	    "bad.tsv:3: unterminated quoted field", 0);
	/* Two bad rows with --max-errors 1: the second one fails. */
	expect_table_error(s, "zz\tn\t1\na\tn\tx\n",
	    "bad.tsv:2: attribute 'n': cannot parse 'x'", 1);
	/* Two bad rows with --max-errors 2: both skipped, the rest kept. */
	path = write_tmp("bad.tsv", "zz\tn\t1\na\tn\tx\nb\tn\t3\nc\tn\t4\n");
	kg_error_mute(1);
	T_CHECK(fit_and_encode(s, (const char *const *)&path, NULL, &m, 2) ==
	    0);
	kg_error_mute(0);
	T_CHECK(m.enc[0].n_values == 2 && m.enc[0].n_entities == 2);
	kg_attrs_model_release(&m);
	free(path);
	/* With "multiline" a quoted line end is part of the value; after a
	 * tolerated stray quote the parser restarts at the next line. */
	path = write_tmp("bad.tsv", "entity,t\na,\"x\ny\"\nb,\"z\nc,w\n");
	T_CHECK(fit_and_encode("{\"tables\": [{\"path\": \"bad.tsv\", "
	    "\"form\": \"wide\", \"header\": true, \"delimiter\": \",\", "
	    "\"multiline\": true}], \"attributes\": {\"t\": {\"kind\": "
	    "\"categorical\"}}}", (const char *const *)&path, NULL, &m, 0) ==
	    0);
	T_CHECK(m.enc[0].n_vocab == 2 &&
	    kg_dict_find(&m.enc[0].vocab, "x\ny", 3) == 0);
	kg_attrs_model_release(&m);
	kg_error_mute(1);
	T_CHECK(fit_and_encode("{\"tables\": [{\"path\": \"bad.tsv\", "
	    "\"form\": \"wide\", \"header\": true, \"delimiter\": \",\"}], "
	    "\"attributes\": {\"t\": {\"kind\": \"categorical\"}}}",
	    (const char *const *)&path, NULL, &m, 3) == 0);
	kg_error_mute(0);
	/* Three errors: line 2 (a,"x), line 3 (y" alone: one field) and
	 * line 4 (b,"z); line 5 (c,w) is read. */
	if (m.enc != NULL) {
		T_CHECK(m.enc[0].n_values == 1 &&
		    kg_dict_find(&m.enc[0].vocab, "w", 1) == 0);
		kg_attrs_model_release(&m);
	}
	free(path);
	/* A missing table. */
	path = kg_path_join(t_tmpdir(), "absent.tsv");
	kg_error_mute(1);
	T_CHECK(fit_and_encode(s, (const char *const *)&path, NULL, &m, 0) <
	    0);
	kg_error_mute(0);
	T_CHECK(strstr(kg_error_last(), "absent.tsv") != NULL);
	free(path);
}

static void
test_rdf_and_skip(void)
{
	const char *s = "{\"tables\": [{\"path\": \"r.tsv\", \"form\": "
	    "\"long\", \"quote\": \"\", \"literals\": \"rdf\", "
	    "\"unknown_entities\": \"skip\", \"unknown_attributes\": "
	    "\"skip\"}], \"attributes\": {\"n\": {\"kind\": \"numeric\", "
	    "\"strategy\": \"uniform\", \"n_bins\": 2}, \"d\": {\"kind\": "
	    "\"date\", \"n_bins\": 2}}}";
	char *path = write_tmp("r.tsv",
	    "a\tn\t\"+0.5\"^^<http://www.w3.org/2001/XMLSchema#decimal>\n"
	    "b\tn\t\"2.5e+00\"^^<http://www.w3.org/2001/XMLSchema#double>\n"
	    "q\tn\t\"7\"^^<x>\n"
	    "c\tother\tfoo\n"
	    "a\td\t\"-0399-01-01T00:00:00Z\"^^<http://www.w3.org/2001/"
	    "XMLSchema#dateTime>\n");
	struct kg_attrs_model m;

	T_CHECK(fit_and_encode(s, (const char *const *)&path, NULL, &m, 0) ==
	    0);
	T_NEAR(m.enc[0].edges[0], 0.5, 0);
	T_NEAR(m.enc[0].edges[1], 1.5, 0);
	T_NEAR(m.enc[0].edges[2], 2.5, 0);
	T_CHECK(m.enc[1].n_values == 1);
	kg_attrs_model_release(&m);
	free(path);
	/* A bad literal is quoted without its type. */
	path = write_tmp("r.tsv", "a\tn\t\"1,5\"^^<http://x#decimal>\n");
	kg_error_mute(1);
	T_CHECK(fit_and_encode(s, (const char *const *)&path, NULL, &m, 0) <
	    0);
	kg_error_mute(0);
	T_CHECKF(strstr(kg_error_last(), "cannot parse '1,5' as a number") !=
	    NULL, "%s", kg_error_last());
	free(path);
}

/* A shard's collect (which skips other entities' simple rows unparsed)
 * keeps exactly the values the full collect has for its entities, also
 * across a quoted multi-line field whose continuation looks like a row. */
static void
test_collect_range(void)
{
	const char *sch = "{\"tables\": [{\"path\": \"m.csv\", \"form\": "
	    "\"wide\", \"header\": true, \"multiline\": true, "
	    "\"unknown_entities\": \"skip\"}], \"attributes\": {\"t\": "
	    "{\"kind\": \"categorical\"}}}";
	char *path = write_tmp("m.csv", "entity,t\n"
	    "a,p\n"
	    "c,\"x\n"
	    "a,1\"\n"
	    "zz,q\n"
	    "e,oops,extra\n"
	    "d,y\n"
	    "b,\"r\"\n"
	    "c,z\n");
	struct kg_attr_schema s;
	struct kg_dict ents;
	struct kg_attrs_data d;
	size_t len;
	const char *v;

	T_CHECK(schema_from(&s, sch) == 0);
	entities(&ents, ents5, 5);
	/* The full collect sees the bad row of e. */
	kg_error_mute(1);
	T_CHECK(kg_attrs_collect(&d, &s, (const char *const *)&path, &ents, 0,
	    5, 0) < 0);
	kg_error_mute(0);
	T_CHECK(strstr(kg_error_last(), "m.csv:6: expected 2 fields") != NULL);
	/* Entities [2, 4) = c, d: the row of e is skipped unparsed. */
	T_CHECK(kg_attrs_collect(&d, &s, (const char *const *)&path, &ents, 2,
	    4, 0) == 0);
	T_CHECK(d.cols[0].n == 3);
	T_CHECK(d.cols[0].start[1] - d.cols[0].start[0] == 2);
	v = d.cols[0].arena + d.cols[0].off[d.cols[0].order[0]];
	len = d.cols[0].len[d.cols[0].order[0]];
	T_CHECKF(len == 5 && memcmp(v, "x\na,1", 5) == 0, "c: '%.*s'",
	    (int)len, v);
	v = d.cols[0].arena + d.cols[0].off[d.cols[0].order[1]];
	T_CHECK(strcmp(v, "z") == 0);
	v = d.cols[0].arena + d.cols[0].off[d.cols[0].order[2]];
	T_CHECK(strcmp(v, "y") == 0);
	T_CHECK(d.n_skipped_entities == 1);
	kg_attrs_data_release(&d);
	kg_dict_release(&ents);
	kg_attr_schema_release(&s);
	free(path);
}

/* ---- text ---- */

static double
cosine(const float *a, const float *b, uint32_t n)
{
	double ab = 0, aa = 0, bb = 0;
	uint32_t i;

	for (i = 0; i < n; i++) {
		ab += (double)a[i] * b[i];
		aa += (double)a[i] * a[i];
		bb += (double)b[i] * b[i];
	}
	return aa > 0 && bb > 0 ? ab / sqrt(aa * bb) : 0;
}

static const char *const corpus[] = {
	"the quick brown fox jumps over the lazy dog",
	"a quick brown fox leaps over a sleeping dog",
	"the lazy dog sleeps while the brown fox runs",
	"foxes and dogs live in the forest near the river",
	"stock markets fell sharply as interest rates rose",
	"interest rates and inflation worry stock investors",
	"the central bank raised interest rates again today",
	"investors sold shares when the markets fell",
	"the compiler optimises loops and inlines small functions",
	"a fast compiler turns source code into machine code",
	"functions and loops in source code are optimised",
	"machine code from the compiler runs fast",
};

static void
test_text_encoder(void)
{
	struct kg_text_fit_opts o = { 6, 2048, 1, 0, 1, 0 };
	struct kg_text_model m, m2;
	struct kg_text_scratch sc = KG_TEXT_SCRATCH_INIT;
	size_t n = KG_ARRAY_LEN(corpus), i, lens[KG_ARRAY_LEN(corpus)];
	const char *dup1 = "the quick brown fox jumps over the lazy dog";
	const char *dup2 = "The quick brown fox jumped over the lazy dogs!";
	const char *other = "interest rates rose and the stock markets fell";
	float a[6], b[6], c[6], d[6];
	const char **words;
	double na = 0;
	uint32_t k;

	for (i = 0; i < n; i++)
		lens[i] = strlen(corpus[i]);
	T_CHECK(kg_text_fit(&m, &o, n, corpus, lens) == 0);
	T_CHECK(m.n_vocab > 20 && m.dim == 6);
	T_CHECK(m.energy > 0 && m.energy <= 1);
	/* Tokens: lowercased, 2+ characters; "a" is not a token. */
	T_CHECK(kg_dict_find(&m.vocab, "a", 1) < 0);
	T_CHECK(kg_dict_find(&m.vocab, "the", 3) >= 0);
	/* Smooth idf: "the" is in 7 of the 12 documents, ln(13 / 8) + 1. */
	T_NEAR(m.idf[kg_dict_find(&m.vocab, "the", 3)], log(13.0 / 8.0) + 1,
	    1e-12);
	kg_text_encode(&m, dup1, strlen(dup1), &sc, a);
	kg_text_encode(&m, dup2, strlen(dup2), &sc, b);
	kg_text_encode(&m, other, strlen(other), &sc, c);
	for (k = 0; k < 6; k++)
		na += (double)a[k] * a[k];
	T_NEAR(na, 1, 1e-5);
	T_CHECKF(cosine(a, b, 6) > 0.9, "near-duplicates: cos %.3f",
	    cosine(a, b, 6));
	T_CHECKF(cosine(a, b, 6) > cosine(a, c, 6) + 0.5,
	    "duplicate %.3f vs unrelated %.3f", cosine(a, b, 6),
	    cosine(a, c, 6));
	/* Out-of-vocabulary text gives a zero vector. */
	kg_text_encode(&m, "zzz qqq", 7, &sc, d);
	for (k = 0; k < 6; k++)
		T_CHECK(d[k] == 0);
	/* The projection's columns are orthonormal (eigenvectors). */
	for (k = 0; k < 6; k++) {
		double dot = 0;
		uint32_t j;

		for (j = 0; j < m.n_vocab; j++)
			dot += (double)m.proj[j * 6 + k] * m.proj[j * 6 + k];
		T_NEAR(dot, 1, 1e-5);
	}
	/* Rebuilt from its parts it encodes the same. */
	words = kg_xcalloc(m.n_vocab, sizeof(char *));
	for (k = 0; k < m.n_vocab; k++)
		words[k] = kg_dict_name(&m.vocab, k);
	T_CHECK(kg_text_model_set(&m2, 6, m.n_vocab, words, m.idf, m.proj, 0,
	    1) == 0);
	kg_text_encode(&m2, dup2, strlen(dup2), &sc, d);
	T_CHECK(memcmp(b, d, sizeof(b)) == 0);
	free(words);
	kg_text_model_release(&m2);
	kg_text_model_release(&m);
	kg_text_scratch_release(&sc);
}

/* The randomized range finder agrees with the exact decomposition: same
 * captured energy (sum of the top eigenvalues) and same encodings. */
static void
test_text_randomized(void)
{
	struct kg_text_fit_opts o = { 3, 2048, 1, 0, 1, 0 };
	struct kg_text_model ex, rn;
	struct kg_text_scratch sc = KG_TEXT_SCRATCH_INIT;
	size_t n = KG_ARRAY_LEN(corpus), i, lens[KG_ARRAY_LEN(corpus)];
	float a[3], b[3];

	for (i = 0; i < n; i++)
		lens[i] = strlen(corpus[i]);
	T_CHECK(kg_text_fit(&ex, &o, n, corpus, lens) == 0);
	o.exact_max = 1;
	T_CHECK(kg_text_fit(&rn, &o, n, corpus, lens) == 0);
	T_CHECK(ex.n_vocab == rn.n_vocab && ex.n_vocab > 1);
	T_NEAR(ex.energy, rn.energy, 1e-9);
	for (i = 0; i < n; i++) {
		kg_text_encode(&ex, corpus[i], lens[i], &sc, a);
		kg_text_encode(&rn, corpus[i], lens[i], &sc, b);
		T_CHECKF(cosine(a, b, 3) > 0.9999, "doc %zu: cos %.6f", i,
		    cosine(a, b, 3));
	}
	kg_text_model_release(&ex);
	kg_text_model_release(&rn);
	kg_text_scratch_release(&sc);
}

static void
test_text_small_vocab(void)
{
	/* Fewer terms than dim: the extra components are zero. */
	struct kg_text_fit_opts o = { 8, 2048, 1, 0, 0, 0 };
	const char *docs[] = { "red green", "green blue" };
	size_t lens[] = { 9, 10 };
	struct kg_text_model m;
	struct kg_text_scratch sc = KG_TEXT_SCRATCH_INIT;
	float v[8];
	double ref = 0;

	T_CHECK(kg_text_fit(&m, &o, 2, docs, lens) == 0);
	T_CHECK(m.n_vocab == 3);
	kg_text_encode(&m, "red", 3, &sc, v);
	T_CHECK(v[3] == 0 && v[7] == 0);
	/* Without normalisation the vector keeps the norm of the tf-idf row
	 * projected on the full eigenbasis (3 components span it): 1. */
	ref = (double)v[0] * v[0] + (double)v[1] * v[1] + (double)v[2] * v[2];
	T_NEAR(ref, 1, 1e-5);
	kg_text_model_release(&m);
	kg_text_scratch_release(&sc);
}

static void
test_text_command(void)
{
	const char *docs[] = { "one", "two\nlines", "three" };
	size_t lens[] = { 3, 9, 5 };
	float out[6];

	/* awk prints the length of each line; perl packs it as float32. */
	if (system("command -v perl >/dev/null 2>&1") != 0)
		T_SKIP("perl not found");
	T_CHECK(kg_text_command("perl -ne 'chomp; print pack(\"f<2\", "
	    "length($_), $.)'", 2, 3, docs, lens, out) == 0);
	T_CHECK(out[0] == 3 && out[1] == 1 && out[2] == 9 && out[3] == 2 &&
	    out[4] == 5 && out[5] == 3);
	kg_error_mute(1);
	T_CHECK(kg_text_command("perl -ne 'print pack(\"f<\", 1)'", 2, 3,
	    docs, lens, out) < 0);
	T_CHECK(strstr(kg_error_last(), "expected 24") != NULL);
	T_CHECK(kg_text_command("perl -ne 'print pack(\"f<3\", 1, 2, 3)'", 2,
	    3, docs, lens, out) < 0);
	T_CHECK(strstr(kg_error_last(), "more than") != NULL);
	T_CHECK(kg_text_command("exit 3", 2, 3, docs, lens, out) < 0);
	T_CHECK(strstr(kg_error_last(), "status 3") != NULL);
	kg_error_mute(0);
}

static void
test_model_roundtrip(void)
{
	char *dir = kg_path_join(t_tmpdir(), "model");
	char *dir1 = kg_path_join(t_tmpdir(), "out1");
	char *dir2 = kg_path_join(t_tmpdir(), "out2");
	char *path;
	struct kg_attrs_model m, m2;
	struct kg_attr_schema s;
	struct kg_dict ents;
	struct kg_attrs_data d;
	const char *schema = "{\"tables\": [{\"path\": \"t.tsv\", \"form\": "
	    "\"long\"}], \"attributes\": {\"n\": {\"kind\": \"numeric\"}, "
	    "\"c\": {\"kind\": \"categorical\"}, \"t\": {\"kind\": "
	    "\"text\", \"dim\": 3}}}";
	const char *names[] = { "n_offsets.npy", "n_indices.npy", "has_n.npy",
		"c_offsets.npy", "c_indices.npy", "t.npy", "has_t.npy" };
	size_t i;

	path = write_tmp("t.tsv", "a\tn\t1\nb\tn\t5\nc\tn\t2\nd\tn\t9\n"
	    "a\tc\tx\nb\tc\ty\na\tt\tgreen apples\nb\tt\tred apples\n"
	    "c\tt\tred cars and green cars\n");
	T_CHECK(mkdir(dir, 0755) == 0 && mkdir(dir1, 0755) == 0 &&
	    mkdir(dir2, 0755) == 0);
	T_CHECK(schema_from(&s, schema) == 0);
	entities(&ents, ents5, 5);
	T_CHECK(kg_attrs_collect(&d, &s, (const char *const *)&path, &ents, 0,
	    5, 0) == 0);
	T_CHECK(kg_attrs_fit(&m, &s, &d, 5, NULL) == 0);
	json_decref(m.tables);
	m.tables = json_pack("[{s:s, s:s}]", "path", path, "checksum", "x");
	T_CHECK(kg_attrs_model_write(&m, dir) == 0);
	T_CHECK(kg_attrs_model_read(&m2, dir) == 0);
	T_CHECK(kg_attrs_encode(&m, &d, NULL, dir1, NULL) == 0);
	T_CHECK(kg_attrs_encode(&m2, &d, NULL, dir2, NULL) == 0);
	for (i = 0; i < KG_ARRAY_LEN(names); i++) {
		char *p1 = kg_path_join(dir1, names[i]);
		char *p2 = kg_path_join(dir2, names[i]);
		size_t l1, l2;
		char *b1 = kg_read_file(p1, &l1), *b2 = kg_read_file(p2, &l2);

		T_CHECKF(b1 != NULL && b2 != NULL && l1 == l2 &&
		    memcmp(b1, b2, l1) == 0, "%s differs", names[i]);
		free(b1);
		free(b2);
		free(p1);
		free(p2);
	}
	kg_attrs_model_release(&m);
	kg_attrs_model_release(&m2);
	kg_attrs_data_release(&d);
	kg_dict_release(&ents);
	kg_attr_schema_release(&s);
	free(path);
	free(dir);
	free(dir1);
	free(dir2);
}

/* ---- the feature-directory reader ---- */

static void
put_npy(const char *dir, const char *name, enum kg_dtype dt, int ndim,
    uint64_t rows, uint64_t cols, const void *data)
{
	char *path = kg_path_join(dir, name);
	uint64_t sh[2] = { rows, cols };

	T_CHECK(kg_npy_write(path, dt, ndim, sh, data) == 0);
	free(path);
}

static void
put_attributes(const char *dir, json_t *attrs)
{
	struct kg_manifest man = KG_MANIFEST_INIT;

	kg_manifest_init(&man, 0, NULL);
	if (attrs != NULL)
		kg_manifest_set_config(&man, "attributes", attrs);
	T_CHECK(kg_manifest_write(&man, dir) == 0);
	kg_manifest_release(&man);
}

/* What kg_attrs_encode wrote, read back through kg_features_load, equals
 * the arrays on disk. */
static void
test_features_roundtrip(void)
{
	char *dir = kg_path_join(t_tmpdir(), "featrt"), *path;
	struct kg_attrs_model m;
	struct kg_features f = KG_FEATURES_INIT;
	const char *schema = "{\"tables\": [{\"path\": \"ft.tsv\", \"form\": "
	    "\"long\"}], \"attributes\": {\"n\": {\"kind\": \"numeric\"}, "
	    "\"c\": {\"kind\": \"multi_label\", \"separator\": \";\"}, "
	    "\"t\": {\"kind\": \"text\", \"dim\": 3}}}";
	uint64_t e, j;

	path = write_tmp("ft.tsv", "a\tn\t1\nb\tn\t5\nc\tn\t2\nd\tn\t9\n"
	    "a\tc\tx;y\nb\tc\ty\nd\tc\tz;x\na\tt\tgreen apples\n"
	    "c\tt\tred cars and green cars\n");
	T_CHECK(mkdir(dir, 0755) == 0);
	T_CHECK(fit_and_encode(schema, (const char *const *)&path, dir, &m,
	    0) == 0);
	put_attributes(dir, kg_attrs_describe(&m));
	T_CHECK(kg_features_load(&f, dir, NULL, 5) == 0);
	T_CHECK(f.n == 5 && f.n_attrs == 3);
	if (f.n_attrs == 3) {
		const struct kg_features_attr *n = &f.attrs[0], *c = &f.attrs[1];
		const struct kg_features_attr *t = &f.attrs[2];
		char want[64], got[64];

		T_CHECK(strcmp(n->name, "n") == 0 && !n->text &&
		    n->width == m.enc[0].slots);
		T_CHECK(strcmp(c->name, "c") == 0 && c->width == 4);
		T_CHECK(t->text && t->width == 3 && t->vec != NULL);
		for (e = 0; e < 5; e++) {
			size_t used = 0;

			T_CHECK(c->has[e] == has_value(dir, "c", e));
			T_CHECK(t->has[e] == has_value(dir, "t", e));
			csr_row(dir, "c", e, want, sizeof(want));
			got[0] = '\0';
			for (j = (uint64_t)c->off[e]; j < (uint64_t)c->off[e + 1];
			    j++)
				used += (size_t)snprintf(got + used,
				    sizeof(got) - used, "%s%d",
				    j > (uint64_t)c->off[e] ? "," : "", c->idx[j]);
			T_CHECKF(strcmp(got, want) == 0, "row %d: %s, want %s",
			    (int)e, got, want);
		}
		/* a and c have texts, b, d and e a zero vector */
		T_CHECK(t->vec[3 * 1] == 0.0f && t->vec[3 * 4 + 2] == 0.0f);
		T_CHECK(fabsf(t->vec[0]) + fabsf(t->vec[1]) + fabsf(t->vec[2]) >
		    0.0f);
	}
	kg_features_release(&f);
	kg_attrs_model_release(&m);
	free(path);
	free(dir);
}

enum feat_break { FB_NONE, FB_OFF32, FB_SLOT, FB_NAN, FB_DECREASING,
	FB_HAS_ROWS, FB_NO_INDICES, FB_NO_LIST };

/* Four entities: "c" multi-hot over 3 slots, "t" text of dim 2, plus a
 * member and an unrelated array; broken as asked. */
static char *
feature_dir(const char *name, enum feat_break b)
{
	char *dir = kg_path_join(t_tmpdir(), name);
	int64_t off[5] = { 0, 1, 1, 3, 3 };
	int32_t off32[5] = { 0, 1, 1, 3, 3 }, idx[3] = { 0, 2, 1 };
	float vals[3] = { 0.5f, 1.5f, 2.5f }, vec[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	uint8_t hasc[5] = { 1, 0, 1, 0, 0 }, hast[4] = { 1, 1, 0, 1 };
	int32_t junk[7] = { 0 };

	T_CHECK(mkdir(dir, 0755) == 0);
	idx[2] = b == FB_SLOT ? 3 : 1;
	vec[5] = b == FB_NAN ? NAN : 6.0f;
	off[2] = b == FB_DECREASING ? 0 : 1;
	if (b == FB_OFF32)
		put_npy(dir, "c_offsets.npy", KG_DT_I4, 1, 5, 0, off32);
	else
		put_npy(dir, "c_offsets.npy", KG_DT_I8, 1, 5, 0, off);
	if (b != FB_NO_INDICES)
		put_npy(dir, "c_indices.npy", KG_DT_I4, 1, 3, 0, idx);
	put_npy(dir, "c_values.npy", KG_DT_F4, 1, 3, 0, vals);
	put_npy(dir, "has_c.npy", KG_DT_U1, 1, b == FB_HAS_ROWS ? 5 : 4, 0,
	    hasc);
	put_npy(dir, "t.npy", KG_DT_F4, 2, 4, 2, vec);
	put_npy(dir, "has_t.npy", KG_DT_U1, 1, 4, 0, hast);
	put_npy(dir, "junk.npy", KG_DT_I4, 1, 7, 0, junk);
	put_attributes(dir, b == FB_NO_LIST ? NULL : json_pack(
	    "[{s:s, s:s, s:s, s:i}, {s:s, s:s, s:s, s:i}]",
	    "name", "cat", "output", "c", "kind", "multi_label", "slots", 3,
	    "name", "txt", "output", "t", "kind", "text", "dim", 2));
	return dir;
}

static void
test_features_dir(void)
{
	char *dir = feature_dir("fdir", FB_NONE);
	struct kg_features_dir fd = KG_FEATURES_DIR_INIT;
	struct kg_features f = KG_FEATURES_INIT, f32 = KG_FEATURES_INIT;
	static const struct { const char *name; enum kg_features_kind k; }
	    want[] = { { "c_indices.npy", KG_FEATURES_CSR_MEMBER },
	    { "c_offsets.npy", KG_FEATURES_CSR_OFFSETS },
	    { "c_values.npy", KG_FEATURES_CSR_MEMBER },
	    { "has_c.npy", KG_FEATURES_ROWS },
	    { "has_t.npy", KG_FEATURES_ROWS },
	    { "junk.npy", KG_FEATURES_OTHER },
	    { "t.npy", KG_FEATURES_ROWS } };
	char *d32 = feature_dir("fdir32", FB_OFF32);
	size_t i;

	T_CHECK(kg_features_dir_open(&fd, dir, 4) == 0);
	T_CHECK(fd.n_arrays == KG_ARRAY_LEN(want));
	for (i = 0; i < fd.n_arrays && i < KG_ARRAY_LEN(want); i++) {
		T_CHECKF(strcmp(fd.arr[i].name, want[i].name) == 0 &&
		    fd.arr[i].kind == want[i].k, "%s: kind %d", fd.arr[i].name,
		    (int)fd.arr[i].kind);
		if (fd.arr[i].kind == KG_FEATURES_CSR_MEMBER)
			T_CHECK(strcmp(fd.arr[fd.arr[i].group].name,
			    "c_offsets.npy") == 0);
	}
	T_CHECK(kg_features_dir_find(&fd, "t.npy")->row_bytes == 8);
	T_CHECK(kg_features_dir_find(&fd, "nope.npy") == NULL);
	T_CHECK(kg_features_load(&f, dir, NULL, 4) == 0);
	T_CHECK(kg_features_load(&f32, d32, NULL, 4) == 0);
	if (f.n_attrs == 2 && f32.n_attrs == 2) {
		T_CHECK(strcmp(f.attrs[0].name, "cat") == 0 &&
		    f.attrs[0].width == 3 && f.attrs[0].off_own == NULL);
		T_CHECK(f32.attrs[0].off_own != NULL);
		for (i = 0; i <= 4; i++)
			T_CHECK(f.attrs[0].off[i] == f32.attrs[0].off[i]);
		T_CHECK(f.attrs[0].idx[2] == 1 && f.attrs[0].has[2] == 1);
		T_CHECK(f.attrs[1].text && f.attrs[1].vec[7] == 8.0f &&
		    f.attrs[1].has[2] == 0);
	}
	kg_features_release(&f);
	kg_features_release(&f32);
	kg_features_dir_release(&fd);
	free(dir);
	free(d32);
}

/* Each broken directory is refused with a message naming what broke. */
static void
test_features_bad(void)
{
	static const struct { enum feat_break b; const char *msg; } cases[] = {
		{ FB_SLOT, "c_indices.npy': entry 2 (3) is not below the 3 "
		    "slots" },
		{ FB_NAN, "t.npy': row 2 is not finite" },
		{ FB_DECREASING, "c_offsets.npy: offsets not increasing" },
		{ FB_HAS_ROWS, "has_c.npy': expected |u1 [4]" },
		{ FB_NO_INDICES, "c_offsets.npy and c_indices.npy do not form "
		    "a CSR group" },
		{ FB_NO_LIST, "manifest has no config.attributes list" },
	};
	struct kg_features f = KG_FEATURES_INIT;
	char name[32], *dir;
	size_t i;

	kg_error_mute(1);
	for (i = 0; i < KG_ARRAY_LEN(cases); i++) {
		snprintf(name, sizeof(name), "fbad%zu", i);
		dir = feature_dir(name, cases[i].b);
		T_CHECK(kg_features_load(&f, dir, NULL, 4) == -1);
		T_CHECKF(strstr(kg_error_last(), cases[i].msg) != NULL,
		    "'%s' lacks '%s'", kg_error_last(), cases[i].msg);
		T_CHECK(f.attrs == NULL && f.dir.arr == NULL);
		free(dir);
	}
	/* The right files for another number of rows. */
	dir = feature_dir("fbadn", FB_NONE);
	T_CHECK(kg_features_load(&f, dir, NULL, 5) == -1);
	T_CHECK(strstr(kg_error_last(), "c_offsets.npy: expected int32 or "
	    "int64 offsets of shape [6]") != NULL);
	T_CHECK(kg_features_load(&f, "/nonexistent/dir", dir, 4) == -1);
	T_CHECK(strstr(kg_error_last(), "cannot open feature directory") !=
	    NULL);
	kg_error_mute(0);
	free(dir);
}

int
main(void)
{
	kg_setprogname("t_attrs");
	T_RUN(test_uniform_edges);
	T_RUN(test_quantile_edges);
	T_RUN(test_numbers);
	T_RUN(test_dates);
	T_RUN(test_schema_errors);
	T_RUN(test_encode_kinds);
	T_RUN(test_bad_tables);
	T_RUN(test_rdf_and_skip);
	T_RUN(test_collect_range);
	T_RUN(test_text_encoder);
	T_RUN(test_text_randomized);
	T_RUN(test_text_small_vocab);
	T_RUN(test_text_command);
	T_RUN(test_model_roundtrip);
	T_RUN(test_features_roundtrip);
	T_RUN(test_features_dir);
	T_RUN(test_features_bad);
	return T_DONE();
}
