/*
 * attrs_bins: numbers and dates for kg-encode-attrs: parsing, bin edges
 * as scikit-learn's KBinsDiscretizer computes them, and bin lookup.
 *
 * Edges (n_bins + 1 doubles, ascending):
 *   uniform:  edges[i] = min + i * ((max - min) / n_bins), edges[n] = max
 *             (numpy.linspace(min, max, n_bins + 1));
 *   quantile: edges[i] = numpy.percentile(x, 100 * i / n_bins) with linear
 *             interpolation; then, as scikit-learn does, edges closer than
 *             1e-8 to their predecessor are dropped (fewer bins).
 * When min == max (one distinct value) there is one bin with edges
 * (-inf, +inf).  A value's bin is the number of inner edges (edges[1] ..
 * edges[n-1]) that are <= the value (numpy.searchsorted(edges[1:-1], x,
 * side="right")), so values outside [min, max] fall in the first or last
 * bin.
 */
#ifndef KG_ATTRS_BINS_H
#define KG_ATTRS_BINS_H

#include <stddef.h>
#include <stdint.h>

#include "attrs/attrs_schema.h"

/*
 * Compute the edges of x[0..n) (n >= 1; x is sorted in place).  edges must
 * hold n_bins + 1 doubles; returns the number of bins actually made (<=
 * n_bins, >= 1).
 */
uint32_t kg_bins_fit(double *x, size_t n, uint32_t n_bins,
    enum kg_bins_strategy strategy, double *edges);

/* The bin of x for edges[0..n_bins]. */
uint32_t kg_bins_find(const double *edges, uint32_t n_bins, double x);

/*
 * Parse s[0..len) as a finite decimal number (leading sign and exponent
 * allowed, nothing else around it).  0 or -1 (no message).
 */
int kg_parse_number(const char *s, size_t len, double *out);

/*
 * Parse a date to days since 1970-01-01T00:00Z (proleptic Gregorian, a
 * fraction for the time of day).
 *   KG_DATE_ISO: [+-]YYYY[-MM[-DD[(T| )hh:mm[:ss[.fff]][Z|(+|-)hh[:]mm]]]]
 *     (at least 4 year digits; missing month or day mean the first);
 *   KG_DATE_DECIMAL_YEAR: a number, year + fraction (1912.5);
 *   KG_DATE_STRPTIME: strptime(3) with "fmt", whole string consumed.
 * 0 or -1 (no message).
 */
int kg_parse_date(const char *s, size_t len, enum kg_date_format format,
    const char *fmt, double *days);

/* Days from 1970-01-01 to the given civil date (month 1-12, day 1-31). */
int64_t kg_days_from_civil(int64_t y, unsigned m, unsigned d);

#endif
