/*
 * rdf_opts: kg-ingest's RDF options that name files or values, read and
 * checked apart from the statements: the IRI lists of --predicates and
 * --exclude-predicates, and --prefix's NAME=IRI pairs (--compact).
 */
#ifndef KG_RDF_OPTS_H
#define KG_RDF_OPTS_H

#include <stddef.h>

#include "ingest/ingest.h"
#include "io/dict.h"

/* A file of IRIs, one a line ("<iri>" or "iri"; '#' comments; trailing
 * blanks dropped), interned into d; 0, or -1 after kg_error(). */
int kg_rdf_read_iris(struct kg_dict *d, const char *path);

/* o's --prefix values into *names and *spaces (new arrays of *n new
 * strings, in the order given); 0, or -1 after kg_error() with nothing
 * to free.  kg_ingest_check_prefixes (ingest.h) is this without the
 * result. */
int kg_rdf_parse_prefixes(const struct kg_ingest_rdf_opts *o, char ***names,
    char ***spaces, size_t *n);

#endif
