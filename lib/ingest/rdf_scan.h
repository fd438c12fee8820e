/*
 * rdf_scan: the byte scans of the RDF readers' fast paths.  An N-Triples
 * statement of three plain IRIs is parsed here together with its line
 * end, in 16-byte (SSE2) or 32-byte (AVX2, where the CPU has it)
 * vectors; the Turtle fast path finds the end of an IRI with the same
 * test.  What the grammar alone decides
 * (IRIs of ASCII bytes without escapes) is answered here; everything
 * else is left to Serd.  No state, no allocation, thread-safe.
 */
#ifndef KG_RDF_SCAN_H
#define KG_RDF_SCAN_H

#include <stddef.h>

#include "io/tabread.h"

/*
 * The statement of N-Triples at line (base <= line <= end, buffered
 * input base[0..end)) when it is three IRIs of ASCII bytes without
 * escapes, each with a scheme, then '.' (spaces and tabs between and
 * around), then the line break ("\n" or "\r\n"; with eof set, the end
 * of the input may stand for it): its terms in t[0..3) (pointing into
 * the buffer) and the first byte after the break.  NULL for any other
 * line, or when its break is not in [line, end): the caller finds the
 * line end itself and reads the line with Serd (or reads more input).
 * Reads nothing before base or from end.
 */
typedef const char *kg_rdf_fast_stmt_fn(const char *base, const char *line,
    const char *end, int eof, struct kg_field t[3]);

/* The widest such function this CPU runs (decided once a call), and
 * the SSE2 one (the same answers; for tests). */
kg_rdf_fast_stmt_fn *kg_rdf_pick_fast_stmt(void);
kg_rdf_fast_stmt_fn *kg_rdf_fast_stmt_sse2(void);

/* The first byte from p (line <= p <= end) that an IRIREF may not hold
 * unescaped, or that is not ASCII, or end.  Reads nothing before line
 * or from end. */
const unsigned char *kg_rdf_iri_end(const unsigned char *line,
    const unsigned char *p, const unsigned char *end);

/* The first byte from p (line <= p <= end) that is not an ASCII
 * letter, digit, '_' or '-' (the bytes of the Turtle fast path's
 * prefixed names), or end.  Reads nothing before line or from end. */
const unsigned char *kg_rdf_name_end(const unsigned char *line,
    const unsigned char *p, const unsigned char *end);

/* 1 if s[0..len) starts with an IRI scheme and ':', else 0. */
int kg_rdf_has_scheme(const unsigned char *s, size_t len);

#endif
