#include "attrs/attrs_bins.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/util.h"

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* numpy's linear-method percentile, including its lerp formula, so that
 * edges agree with numpy to the last bit where possible. */
static double
percentile_linear(const double *x, size_t n, double q)
{
	double virt = (double)(n - 1) * q, below = floor(virt), t, a, b;
	size_t i = (size_t)below;

	if (i >= n - 1)
		return x[n - 1];
	t = virt - below;
	a = x[i];
	b = x[i + 1];
	if (t >= 0.5)
		return b - (b - a) * (1.0 - t);
	return a + (b - a) * t;
}

uint32_t
kg_bins_fit(double *x, size_t n, uint32_t n_bins,
    enum kg_bins_strategy strategy, double *edges)
{
	double lo, hi, step;
	uint32_t i, k;

	qsort(x, n, sizeof(double), cmp_double);
	lo = x[0];
	hi = x[n - 1];
	if (lo == hi) {
		edges[0] = -INFINITY;
		edges[1] = INFINITY;
		return 1;
	}
	if (strategy == KG_BINS_UNIFORM) {
		step = (hi - lo) / n_bins;
		for (i = 0; i < n_bins; i++)
			edges[i] = (double)i * step + lo;
		edges[n_bins] = hi;
		return n_bins;
	}
	for (i = 0; i <= n_bins; i++) {
		/* numpy.linspace(0, 100, n + 1) / 100 */
		double q = i == n_bins ? 100.0 :
		    (double)i * (100.0 / n_bins);

		edges[i] = percentile_linear(x, n, q / 100.0);
	}
	/* Drop edges within 1e-8 of the previous kept one (scikit-learn's
	 * np.ediff1d(edges, to_begin=inf) > 1e-8 mask compares neighbours
	 * of the original array). */
	k = 1;
	for (i = 1; i <= n_bins; i++)
		if (edges[i] - edges[i - 1] > 1e-8)
			edges[k++] = edges[i];
	return k - 1;
}

uint32_t
kg_bins_find(const double *edges, uint32_t n_bins, double x)
{
	/* Count inner edges <= x by binary search over edges[1..n_bins-1]. */
	uint32_t lo = 1, hi = n_bins;	/* search in [lo, hi) */

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (edges[mid] <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo - 1;
}

int
kg_parse_number(const char *s, size_t len, double *out)
{
	char buf[128], *end;
	double v;

	if (len == 0 || len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	/* strtod would accept leading blanks, "inf", "nan" and hex. */
	if (!(isdigit((unsigned char)buf[0]) || buf[0] == '+' ||
	    buf[0] == '-' || buf[0] == '.'))
		return -1;
	if (strpbrk(buf, "xXnNiI") != NULL)
		return -1;
	errno = 0;
	v = strtod(buf, &end);
	if (end == buf || *end != '\0' || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

int64_t
kg_days_from_civil(int64_t y, unsigned m, unsigned d)
{
	/* Howard Hinnant's days_from_civil algorithm. */
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static unsigned
days_in_month(int64_t y, unsigned m)
{
	static const unsigned dm[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30,
		31, 30, 31 };
	int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	return m == 2 && leap ? 29 : dm[m - 1];
}

/* Read exactly n digits at *p; -1 if not there. */
static int64_t
digits(const char **p, const char *end, int n)
{
	int64_t v = 0;
	int i;

	for (i = 0; i < n; i++) {
		if (*p >= end || !isdigit((unsigned char)**p))
			return -1;
		v = v * 10 + (**p - '0');
		(*p)++;
	}
	return v;
}

/* A time zone at *p: Z, or +hh[[:]mm] / -hh[[:]mm] with hh <= 14, into
 * *minutes east of UTC; 0, or -1 when it is malformed. */
static int
parse_zone(const char **p, const char *end, int64_t *minutes)
{
	int sign;
	int64_t oh, om = 0;

	if (**p == 'Z') {
		(*p)++;
		*minutes = 0;
		return 0;
	}
	sign = *(*p)++ == '-' ? -1 : 1;
	if ((oh = digits(p, end, 2)) < 0 || oh > 14)
		return -1;
	if (*p < end && **p == ':')
		(*p)++;
	if (*p < end && ((om = digits(p, end, 2)) < 0 || om > 59))
		return -1;
	*minutes = sign * (oh * 60 + om);
	return 0;
}

static int
parse_iso(const char *s, size_t len, double *days)
{
	const char *p = s, *end = s + len;
	int64_t y = 0, mo = 1, d = 1, h = 0, mi = 0, off = 0, v;
	double sec = 0;
	int neg = 0, nd = 0, d_given = 0;

	if (p < end && (*p == '+' || *p == '-'))
		neg = *p++ == '-';
	while (p < end && isdigit((unsigned char)*p) && nd < 9) {
		y = y * 10 + (*p++ - '0');
		nd++;
	}
	if (nd < 4)
		return -1;
	if (neg)
		y = -y;
	if (p < end && *p == '-') {
		p++;
		if ((mo = digits(&p, end, 2)) < 1 || mo > 12)
			return -1;
		if (p < end && *p == '-') {
			p++;
			if ((d = digits(&p, end, 2)) < 1 ||
			    d > days_in_month(y, (unsigned)mo))
				return -1;
			d_given = 1;
			if (p < end && (*p == 'T' || *p == ' ')) {
				p++;
				if ((h = digits(&p, end, 2)) < 0 || h > 24 ||
				    p >= end || *p++ != ':' ||
				    (mi = digits(&p, end, 2)) < 0 || mi > 59)
					return -1;
				if (p < end && *p == ':') {
					p++;
					if ((v = digits(&p, end, 2)) < 0 ||
					    v > 60)
						return -1;
					sec = (double)v;
					if (p < end && (*p == '.' ||
					    *p == ',')) {
						double f = 0.1;

						p++;
						if (p >= end || !isdigit(
						    (unsigned char)*p))
							return -1;
						while (p < end && isdigit(
						    (unsigned char)*p)) {
							sec += f * (*p++ - '0');
							f /= 10;
						}
					}
				}
			}
		}
	}
	/* A zone after a whole date, with or without a time (xsd:date and
	 * xsd:dateTime); after a year or a year and month only Z or +hh,
	 * since -hh there would read as a month or a day. */
	if (p < end && (*p == 'Z' || *p == '+' ||
	    (*p == '-' && d_given)) && parse_zone(&p, end, &off) < 0)
		return -1;
	if (p != end)
		return -1;
	*days = (double)kg_days_from_civil(y, (unsigned)mo, (unsigned)d) +
	    ((double)(h * 60 + mi - off) * 60 + sec) / 86400.0;
	return 0;
}

static int
parse_strptime(const char *s, size_t len, const char *fmt, double *days)
{
	char buf[256];
	struct tm tm;
	const char *end;
	int64_t y;

	if (len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	memset(&tm, 0, sizeof(tm));
	tm.tm_mday = 1;
	end = strptime(buf, fmt, &tm);
	if (end == NULL || *end != '\0')
		return -1;
	y = (int64_t)tm.tm_year + 1900;
	if (tm.tm_mon < 0 || tm.tm_mon > 11 || tm.tm_mday < 1 ||
	    (unsigned)tm.tm_mday > days_in_month(y, (unsigned)tm.tm_mon + 1))
		return -1;
	*days = (double)kg_days_from_civil(y, (unsigned)tm.tm_mon + 1,
	    (unsigned)tm.tm_mday) +
	    ((double)tm.tm_hour * 3600 + tm.tm_min * 60 + tm.tm_sec) / 86400.0;
	return 0;
}

int
kg_parse_date(const char *s, size_t len, enum kg_date_format format,
    const char *fmt, double *days)
{
	double y;

	switch (format) {
	case KG_DATE_ISO:
		return parse_iso(s, len, days);
	case KG_DATE_DECIMAL_YEAR:
		if (kg_parse_number(s, len, &y) < 0 || fabs(y) > 1e9)
			return -1;
		*days = (y - 1970.0) * 365.2425;
		return 0;
	case KG_DATE_STRPTIME:
		return parse_strptime(s, len, fmt, days);
	}
	return -1;
}
