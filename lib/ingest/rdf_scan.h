/*
 * rdf_scan: the byte scans of the RDF readers' fast paths.  An N-Triples
 * line of three plain IRIs is parsed here in 16-byte (SSE2) or 32-byte
 * (AVX2, where the CPU has it) vectors; the Turtle fast path finds the
 * end of an IRI with the same test.  What the grammar alone decides
 * (IRIs of ASCII bytes without escapes) is answered here; everything
 * else is left to Serd.  No state, no allocation, thread-safe.
 */
#ifndef KG_RDF_SCAN_H
#define KG_RDF_SCAN_H

#include <stddef.h>

/* Bytes s[0..len) of a line. */
struct kg_rdf_span {
	const char *s;
	size_t len;
};

/*
 * A line of N-Triples, line[0..len) without its line break, that is
 * three IRIs of ASCII bytes without escapes, each with a scheme, then
 * '.' (spaces and tabs between): its terms in t[0..3) (pointing into the
 * line) and 1; 0 for any other line, which Serd must read.
 */
typedef int kg_rdf_fast_line_fn(const char *line, size_t len,
    struct kg_rdf_span t[3]);

/* The widest such function this CPU runs (decided once a call). */
kg_rdf_fast_line_fn *kg_rdf_pick_fast_line(void);

/* The first byte from p (line <= p <= end) that an IRIREF may not hold
 * unescaped, or that is not ASCII, or end.  Reads nothing before line
 * or from end. */
const unsigned char *kg_rdf_iri_end(const unsigned char *line,
    const unsigned char *p, const unsigned char *end);

/* 1 if s[0..len) starts with an IRI scheme and ':', else 0. */
int kg_rdf_has_scheme(const unsigned char *s, size_t len);

#endif
