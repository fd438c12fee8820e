/*
 * rdf_schema: datatype classes and the proposed attribute schema (see
 * rdf_schema.h).
 */
#include "ingest/rdf_schema.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

#define XSD "http://www.w3.org/2001/XMLSchema#"

static const char *const numeric_types[] = { "integer", "decimal",
	"double", "float", "int", "long", "short", "byte",
	"nonNegativeInteger", "positiveInteger", "negativeInteger",
	"nonPositiveInteger", "unsignedLong", "unsignedInt", "unsignedShort",
	"unsignedByte" };
static const char *const date_types[] = { "date", "dateTime",
	"dateTimeStamp", "gYear", "gYearMonth" };

/* The local name of an XSD datatype IRI, or NULL. */
static const char *
xsd_name(const struct kg_rdf_term *dt)
{
	size_t n = strlen(XSD);

	if (dt->s == NULL || dt->len <= n || memcmp(dt->s, XSD, n) != 0)
		return NULL;
	return dt->s + n;
}

static int
in_list(const char *s, const char *const *list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(s, list[i]) == 0)
			return 1;
	return 0;
}

/* A number as the encoder parses it: decimal, finite, no blanks, hex,
 * "inf" or "nan". */
static int
is_number(const char *s, size_t len)
{
	char buf[128], *end;
	double v;

	if (len == 0 || len >= sizeof(buf))
		return 0;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (!(isdigit((unsigned char)buf[0]) || buf[0] == '+' ||
	    buf[0] == '-' || buf[0] == '.') || strpbrk(buf, "xXnNiI") != NULL)
		return 0;
	errno = 0;
	v = strtod(buf, &end);
	return end != buf && *end == '\0' && isfinite(v);
}

/* n digits at *p (advanced), or -1. */
static long
digits(const char **p, const char *end, int n)
{
	long v = 0;

	for (; n > 0; n--, (*p)++) {
		if (*p >= end || !isdigit((unsigned char)**p))
			return -1;
		v = v * 10 + (**p - '0');
	}
	return v;
}

static int
month_days(long y, long m)
{
	static const int d[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30,
	    31 };
	int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	return m == 2 && leap ? 29 : d[m - 1];
}

/* The time and zone after a date's 'T'; 1 if well formed. */
static int
is_time(const char *p, const char *end)
{
	long h, mi, s;

	if ((h = digits(&p, end, 2)) < 0 || h > 24 || p >= end || *p++ != ':' ||
	    (mi = digits(&p, end, 2)) < 0 || mi > 59)
		return 0;
	if (p < end && *p == ':') {
		p++;
		if ((s = digits(&p, end, 2)) < 0 || s > 60)
			return 0;
		if (p < end && (*p == '.' || *p == ',')) {
			p++;
			if (p >= end || !isdigit((unsigned char)*p))
				return 0;
			while (p < end && isdigit((unsigned char)*p))
				p++;
		}
	}
	if (p < end && *p == 'Z')
		p++;
	else if (p < end && (*p == '+' || *p == '-')) {
		p++;
		if ((h = digits(&p, end, 2)) < 0 || h > 14)
			return 0;
		if (p < end && *p == ':')
			p++;
		if (p < end && digits(&p, end, 2) < 0)
			return 0;
	}
	return p == end;
}

/* An ISO 8601 date as the encoder parses it (lib/attrs: at least four
 * year digits, then optional month, day, time and zone). */
static int
is_date(const char *s, size_t len)
{
	const char *p = s, *end = s + len;
	long y = 0, m, d;
	int nd = 0;

	if (p < end && (*p == '+' || *p == '-'))
		p++;
	while (p < end && isdigit((unsigned char)*p) && nd < 9) {
		y = y * 10 + (*p++ - '0');
		nd++;
	}
	if (nd < 4)
		return 0;
	if (p == end)
		return 1;
	if (*p++ != '-' || (m = digits(&p, end, 2)) < 1 || m > 12)
		return 0;
	if (p == end)
		return 1;
	if (*p++ != '-' || (d = digits(&p, end, 2)) < 1 ||
	    d > month_days(y, m))
		return 0;
	if (p == end)
		return 1;
	if (*p != 'T' && *p != ' ')
		return 0;
	return is_time(p + 1, end);
}

enum kg_rdf_class
kg_rdf_classify(const struct kg_rdf_term *lex,
    const struct kg_rdf_term *datatype, const struct kg_rdf_term *lang)
{
	const char *x;

	if (lang->s != NULL || datatype->s == NULL)
		return KG_RDF_TEXT;
	if ((x = xsd_name(datatype)) == NULL)
		return KG_RDF_CATEGORICAL;
	if (strcmp(x, "string") == 0)
		return KG_RDF_TEXT;
	if (in_list(x, numeric_types, KG_ARRAY_LEN(numeric_types)))
		return is_number(lex->s, lex->len) ? KG_RDF_NUMERIC :
		    KG_RDF_CATEGORICAL;
	if (in_list(x, date_types, KG_ARRAY_LEN(date_types)))
		return is_date(lex->s, lex->len) ? KG_RDF_DATE :
		    KG_RDF_CATEGORICAL;
	return KG_RDF_CATEGORICAL;
}

const char *
kg_rdf_kind_of(const uint64_t *counts)
{
	static const char *const kind[KG_RDF_N_CLASSES] = { "numeric", "date",
	    "text", "categorical", "multi_label" };
	int k, only = -1;

	for (k = 0; k < KG_RDF_N_CLASSES; k++) {
		if (counts[k] == 0)
			continue;
		if (only >= 0)
			return "categorical";
		only = k;
	}
	return kind[only < 0 ? KG_RDF_CATEGORICAL : only];
}

/* A file-name stem from the IRI's last segment: [A-Za-z0-9_.-], not
 * starting with '.', never one of the encoder's derived names. */
static char *
output_stem(const char *iri)
{
	const char *a = iri, *p;
	char *s;
	size_t i, n;

	for (p = iri; *p != '\0'; p++)
		if ((*p == '/' || *p == '#' || *p == ':') && p[1] != '\0')
			a = p + 1;
	n = strlen(a);
	s = kg_xasprintf("%s%s", n == 0 || a[0] == '.' ||
	    strncmp(a, "has_", 4) == 0 ? "p_" : "", a);
	for (i = 0; s[i] != '\0'; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_' ||
		    s[i] == '-' || s[i] == '.'))
			s[i] = '_';
	return s;
}

/* The spec of one attribute of kind "kind". */
static json_t *
attr_json(const char *kind, const char *output)
{
	json_t *a = json_pack("{s:s}", "kind", kind);
	int bins = strcmp(kind, "numeric") == 0 || strcmp(kind, "date") == 0;

	if (strcmp(kind, "date") == 0)
		json_object_set_new(a, "format", json_string("iso8601"));
	if (bins) {
		json_object_set_new(a, "strategy", json_string("quantile"));
		json_object_set_new(a, "n_bins", json_integer(5));
	}
	if (strcmp(kind, "text") == 0)
		json_object_set_new(a, "dim", json_integer(32));
	if (strcmp(kind, "multi_label") == 0)
		json_object_set_new(a, "separator", json_string(" "));
	json_object_set_new(a, "output", json_string(output));
	return a;
}

json_t *
kg_rdf_schema_json(const char *const *names, size_t n,
    const uint64_t *counts, const char *table, const char *description)
{
	json_t *root = json_object(), *attrs = json_object(), *used =
	    json_object();
	size_t i;

	json_object_set_new(root, "description", json_string(description));
	json_object_set_new(root, "tables", json_pack("[{s:s,s:s,s:s,s:s,"
	    "s:s,s:s,s:b}]", "path", table, "form", "long", "delimiter", "\t",
	    "quote", "\"", "literals", "rdf", "unknown_entities", "skip",
	    "multiline", 1));
	for (i = 0; i < n; i++) {
		char *stem = output_stem(names[i]), *out = kg_xstrdup(stem);
		unsigned k = 2;

		while (json_object_get(used, out) != NULL) {
			free(out);
			out = kg_xasprintf("%s_%u", stem, k++);
		}
		json_object_set_new(used, out, json_true());
		json_object_set_new(attrs, names[i], attr_json(kg_rdf_kind_of(
		    counts + i * KG_RDF_N_CLASSES), out));
		free(stem);
		free(out);
	}
	json_object_set_new(root, "attributes", attrs);
	json_decref(used);
	return root;
}
