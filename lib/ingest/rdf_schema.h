/*
 * rdf_schema: what the literals of an RDF predicate become as a node
 * attribute, and the attribute schema kg-ingest proposes for them, in
 * the form kg-encode-attrs reads (lib/attrs/attrs_schema.h).
 *
 * Each literal falls in one class by its datatype: the XSD numeric types
 * (integer, decimal, double, float and those derived from them) are
 * numeric; xsd:date, dateTime, dateTimeStamp, gYear and gYearMonth are
 * dates; rdf:langString (a language tag), xsd:string and simple literals
 * are text; xsd:boolean and every other datatype are categorical.  A
 * numeric or date literal whose lexical form the encoder would not parse
 * (an ISO 8601 date: [+-]YYYY[-MM[-DD[Thh:mm[:ss[.f]][Z|+hh:mm]]]]; a
 * decimal number) counts as categorical, so that the proposed schema
 * always fits.  A predicate whose literals are all of one class gets
 * that kind; one with literals of several classes is categorical.  An
 * rdf:type written as an attribute is multi_label.
 */
#ifndef KG_RDF_SCHEMA_H
#define KG_RDF_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "ingest/rdf.h"

enum kg_rdf_class { KG_RDF_NUMERIC, KG_RDF_DATE, KG_RDF_TEXT,
	KG_RDF_CATEGORICAL, KG_RDF_MULTILABEL, KG_RDF_N_CLASSES };

/* The class of a literal (lexical form, datatype IRI or s NULL, language
 * tag or s NULL). */
enum kg_rdf_class kg_rdf_classify(const struct kg_rdf_term *lex,
    const struct kg_rdf_term *datatype, const struct kg_rdf_term *lang);

/* The attribute kind name ("numeric", ...) of a predicate whose literals
 * fall in the classes counts[0..KG_RDF_N_CLASSES). */
const char *kg_rdf_kind_of(const uint64_t *counts);

/*
 * The proposed schema for the predicates names[0..n) with the class
 * counts counts[i * KG_RDF_N_CLASSES ...], reading the long table
 * "table" (relative to the schema's directory).  Each attribute's output
 * is the IRI's last path segment or fragment, made a file-name stem and
 * unique.  A new reference.
 */
json_t *kg_rdf_schema_json(const char *const *names, size_t n,
    const uint64_t *counts, const char *table, const char *description);

#endif
