/*
 * rdf_scan: the vector scans of the RDF fast paths (see rdf_scan.h).
 */
#include "ingest/rdf_scan.h"

#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* A byte an IRIREF may hold unescaped, ASCII only (N-Triples 1.1: not
 * 0x00-0x20, <>"{}|^`\); bytes from 0x80 are left to Serd, which checks
 * their UTF-8. */
static inline int
iri_ok(unsigned char c)
{
	return c > 0x20 && c < 0x7f && c != '<' && c != '>' && c != '"' &&
	    c != '{' && c != '}' && c != '|' && c != '^' && c != '`' &&
	    c != '\\';
}

#define KG_INLINE static inline __attribute__((always_inline))

/* An IRI scheme at s[0..len): ALPHA *(ALPHA / DIGIT / "+" / "-" / ".")
 * then ':'. */
KG_INLINE int
has_scheme(const unsigned char *s, size_t len)
{
	size_t i;

	/* The commonest schemes first. */
	if (len >= 6 && memcmp(s, "http", 4) == 0 && (s[4] == ':' ||
	    (s[4] == 's' && s[5] == ':')))
		return 1;
	if (len == 0 || !((s[0] | 0x20) >= 'a' && (s[0] | 0x20) <= 'z'))
		return 0;
	for (i = 1; i < len; i++) {
		unsigned char c = s[i];

		if (c == ':')
			return 1;
		if (!(((c | 0x20) >= 'a' && (c | 0x20) <= 'z') ||
		    (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.'))
			return 0;
	}
	return 0;
}

int
kg_rdf_has_scheme(const unsigned char *s, size_t len)
{
	return has_scheme(s, len);
}

/*
 * The end of an IRI's bytes from p: the first byte that an IRIREF may
 * not hold unescaped (or that is not ASCII), or end.  Vectors of 16
 * (SSE2) or 32 (AVX2) bytes; the last, short piece is the vector that
 * ends at end, read from before p (line <= end - width), its bits
 * shifted past what was checked already.
 */
#ifdef __SSE2__
/* The bytes of x that an IRIREF may not hold unescaped, as a bit mask.
 * Signed compares: bytes from 0x80 are negative, so "x < 0x21" catches
 * them with the control bytes; "x > 0x7a" but not '~' is {|}, DEL; x | 2
 * is '>' for <>, '^' for \^. */
KG_INLINE uint32_t
bad_sse2(__m128i x)
{
	__m128i x2 = _mm_or_si128(x, _mm_set1_epi8(2));
	__m128i b = _mm_or_si128(_mm_cmpgt_epi8(_mm_set1_epi8(0x21), x),
	    _mm_andnot_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8(0x7e)),
	    _mm_cmpgt_epi8(x, _mm_set1_epi8(0x7a))));

	b = _mm_or_si128(b, _mm_or_si128(_mm_cmpeq_epi8(x2,
	    _mm_set1_epi8(0x3e)), _mm_cmpeq_epi8(x2, _mm_set1_epi8(0x5e))));
	b = _mm_or_si128(b, _mm_or_si128(_mm_cmpeq_epi8(x,
	    _mm_set1_epi8(0x22)), _mm_cmpeq_epi8(x, _mm_set1_epi8(0x60))));
	return (uint32_t)_mm_movemask_epi8(b);
}

KG_INLINE const unsigned char *
iri_end_sse2(const unsigned char *line, const unsigned char *p,
    const unsigned char *end)
{
	uint32_t m;

	for (; end - p >= 16; p += 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);

		if ((m = bad_sse2(x)) != 0)
			return p + __builtin_ctz(m);
	}
	if (p < end && end - line >= 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)
		    (end - 16));

		m = bad_sse2(x) >> (16 - (end - p));
		return m != 0 ? p + __builtin_ctz(m) : end;
	}
	while (p < end && iri_ok(*p))
		p++;
	return p;
}
#endif

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define HAVE_AVX2_PATH 1
/* bad_sse2 on 32 bytes. */
__attribute__((target("avx2"))) KG_INLINE uint32_t
bad_avx2(__m256i x)
{
	__m256i x2 = _mm256_or_si256(x, _mm256_set1_epi8(2));
	__m256i b = _mm256_or_si256(_mm256_cmpgt_epi8(_mm256_set1_epi8(0x21),
	    x), _mm256_andnot_si256(_mm256_cmpeq_epi8(x,
	    _mm256_set1_epi8(0x7e)), _mm256_cmpgt_epi8(x,
	    _mm256_set1_epi8(0x7a))));

	b = _mm256_or_si256(b, _mm256_or_si256(_mm256_cmpeq_epi8(x2,
	    _mm256_set1_epi8(0x3e)), _mm256_cmpeq_epi8(x2,
	    _mm256_set1_epi8(0x5e))));
	b = _mm256_or_si256(b, _mm256_or_si256(_mm256_cmpeq_epi8(x,
	    _mm256_set1_epi8(0x22)), _mm256_cmpeq_epi8(x,
	    _mm256_set1_epi8(0x60))));
	return (uint32_t)_mm256_movemask_epi8(b);
}

__attribute__((target("avx2"))) KG_INLINE const unsigned char *
iri_end_avx2(const unsigned char *line, const unsigned char *p,
    const unsigned char *end)
{
	uint32_t m;

	for (; end - p >= 32; p += 32) {
		__m256i x = _mm256_loadu_si256((const __m256i *)(const void *)
		    p);

		if ((m = bad_avx2(x)) != 0)
			return p + __builtin_ctz(m);
	}
	if (p < end && end - line >= 32) {
		__m256i x = _mm256_loadu_si256((const __m256i *)(const void *)
		    (end - 32));

		m = bad_avx2(x) >> (32 - (end - p));
		return m != 0 ? p + __builtin_ctz(m) : end;
	}
	return iri_end_sse2(line, p, end);
}
#endif

#ifndef __SSE2__
KG_INLINE const unsigned char *
iri_end_sse2(const unsigned char *line, const unsigned char *p,
    const unsigned char *end)
{
	(void)line;
	while (p < end && iri_ok(*p))
		p++;
	return p;
}
#endif

typedef const unsigned char *iri_end_fn(const unsigned char *,
    const unsigned char *, const unsigned char *);

/* Spaces and tabs from p, up to end. */
KG_INLINE const unsigned char *
skip_ws(const unsigned char *p, const unsigned char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

/*
 * The commonest statement, three IRIs of ASCII bytes without escapes
 * and a final '.', which the grammar alone decides, found with its line
 * end in one scan: the IRI scan stops at the line break as at any byte
 * an IRI may not hold.  Whitespace is spaces and tabs, as in N-Triples;
 * a "\r" just before the break belongs to the break.  Inlined into one
 * function per vector width, iri_end a constant.
 */
KG_INLINE const char *
fast_stmt_body(const char *base, const char *line, const char *end0,
    int eof, struct kg_field t[3], iri_end_fn *iri_end)
{
	const unsigned char *l = (const unsigned char *)base;
	const unsigned char *p = (const unsigned char *)line;
	const unsigned char *end = (const unsigned char *)end0, *a;
	int k;

	p = skip_ws(p, end);
	for (k = 0; k < 3; k++) {
		if (p == end || *p != '<')
			return NULL;
		a = ++p;
		p = iri_end(l, p, end);
		if (p == end || *p != '>' ||
		    !has_scheme(a, (size_t)(p - a)))
			return NULL;
		t[k].s = (const char *)a;
		t[k].len = (size_t)(p - a);
		p++;
		if (p == end || (*p != ' ' && *p != '\t'))
			return NULL;
		p = skip_ws(p, end);
	}
	if (p == end || *p++ != '.')
		return NULL;
	p = skip_ws(p, end);
	if (p < end && *p == '\r')
		p++;
	if (p < end)
		return *p == '\n' ? (const char *)p + 1 : NULL;
	return eof ? (const char *)p : NULL;
}

/*
 * The same answers for a line that has at least MASK_SPAN + 8 bytes of
 * the buffer from its start, the commonest case, from one bit mask of
 * the bytes that an IRI may not hold over its first MASK_SPAN bytes:
 * the vector tests are independent of one another and of where the
 * terms end, so they overlap, and each term's end is the next bit set.
 * A statement that does not end within them goes to fast_stmt_body.
 */
#define MASK_SPAN 192

typedef uint64_t bad64_fn(const unsigned char *s);

/* The first bit set at or after i in the MASK_SPAN-bit mask m, or
 * MASK_SPAN. */
KG_INLINE size_t
next_bit(const uint64_t m[3], size_t i)
{
	size_t w = i >> 6;
	uint64_t b;

	if (w >= 3)
		return MASK_SPAN;
	b = m[w] & (~0ull << (i & 63));
	while (b == 0) {
		if (++w == 3)
			return MASK_SPAN;
		b = m[w];
	}
	return w * 64 + (size_t)__builtin_ctzll(b);
}

/* Spaces and tabs from s[i]; MASK_SPAN when they reach it. */
KG_INLINE size_t
mask_ws(const unsigned char *s, size_t i)
{
	while (i < MASK_SPAN && (s[i] == ' ' || s[i] == '\t'))
		i++;
	return i;
}

KG_INLINE const char *
fast_stmt_mask(const char *base, const char *line, const char *end, int eof,
    struct kg_field t[3], bad64_fn *bad64, iri_end_fn *iri_end)
{
	const unsigned char *s = (const unsigned char *)line;
	uint64_t m[3];
	size_t i, a, e;
	int k;

	if (end - line < MASK_SPAN + 8)
		return fast_stmt_body(base, line, end, eof, t, iri_end);
	m[0] = bad64(s);
	m[1] = bad64(s + 64);
	m[2] = bad64(s + 128);
	i = mask_ws(s, 0);
	for (k = 0; k < 3; k++) {
		if (i == MASK_SPAN)
			break;
		if (s[i] != '<')
			return NULL;
		a = i + 1;
		if ((e = next_bit(m, a)) == MASK_SPAN)
			break;
		if (s[e] != '>' || !has_scheme(s + a, e - a))
			return NULL;
		t[k].s = (const char *)s + a;
		t[k].len = e - a;
		i = e + 1;
		if (s[i] != ' ' && s[i] != '\t')
			return NULL;
		i = mask_ws(s, i);
	}
	/* From here on at most MASK_SPAN + 3 < MASK_SPAN + 8 bytes. */
	if (k == 3 && i < MASK_SPAN && s[i] == '.') {
		i = mask_ws(s, i + 1);
		if (i < MASK_SPAN) {
			i += s[i] == '\r';
			return s[i] == '\n' ? line + i + 1 : NULL;
		}
	} else if (k == 3 && i < MASK_SPAN)
		return NULL;
	return fast_stmt_body(base, line, end, eof, t, iri_end);
}

#ifdef __SSE2__
KG_INLINE uint64_t
bad64_sse2(const unsigned char *s)
{
	uint64_t m = 0;
	int j;

	for (j = 0; j < 4; j++)
		m |= (uint64_t)bad_sse2(_mm_loadu_si128((const __m128i *)
		    (const void *)(s + 16 * j))) << (16 * j);
	return m;
}

static const char *
fast_stmt_sse2(const char *base, const char *line, const char *end, int eof,
    struct kg_field t[3])
{
	return fast_stmt_mask(base, line, end, eof, t, bad64_sse2,
	    iri_end_sse2);
}
#else
static const char *
fast_stmt_sse2(const char *base, const char *line, const char *end, int eof,
    struct kg_field t[3])
{
	return fast_stmt_body(base, line, end, eof, t, iri_end_sse2);
}
#endif

#ifdef HAVE_AVX2_PATH
__attribute__((target("avx2"))) KG_INLINE uint64_t
bad64_avx2(const unsigned char *s)
{
	uint64_t lo = bad_avx2(_mm256_loadu_si256((const __m256i *)
	    (const void *)s));
	uint64_t hi = bad_avx2(_mm256_loadu_si256((const __m256i *)
	    (const void *)(s + 32)));

	return lo | hi << 32;
}

__attribute__((target("avx2"))) static const char *
fast_stmt_avx2(const char *base, const char *line, const char *end, int eof,
    struct kg_field t[3])
{
	return fast_stmt_mask(base, line, end, eof, t, bad64_avx2,
	    iri_end_avx2);
}
#endif

kg_rdf_fast_stmt_fn *
kg_rdf_pick_fast_stmt(void)
{
#ifdef HAVE_AVX2_PATH
	if (__builtin_cpu_supports("avx2"))
		return fast_stmt_avx2;
#endif
	return fast_stmt_sse2;
}

kg_rdf_fast_stmt_fn *
kg_rdf_fast_stmt_sse2(void)
{
	return fast_stmt_sse2;
}

const unsigned char *
kg_rdf_iri_end(const unsigned char *line, const unsigned char *p,
    const unsigned char *end)
{
	return iri_end_sse2(line, p, end);
}

/* A letter, digit, '_' or '-'. */
static inline int
name_ok(unsigned char c)
{
	return ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || (c >= '0' &&
	    c <= '9') || c == '_' || c == '-';
}

#ifdef __SSE2__
/* The bytes of x that name_ok refuses, as a bit mask.  Signed compares:
 * bytes from 0x80 are negative and in no range. */
KG_INLINE uint32_t
not_name_sse2(__m128i x)
{
	__m128i lc = _mm_or_si128(x, _mm_set1_epi8(0x20));
	__m128i ok = _mm_and_si128(_mm_cmpgt_epi8(lc, _mm_set1_epi8('a' - 1)),
	    _mm_cmpgt_epi8(_mm_set1_epi8('z' + 1), lc));

	ok = _mm_or_si128(ok, _mm_and_si128(_mm_cmpgt_epi8(x,
	    _mm_set1_epi8('0' - 1)), _mm_cmpgt_epi8(_mm_set1_epi8('9' + 1),
	    x)));
	ok = _mm_or_si128(ok, _mm_or_si128(_mm_cmpeq_epi8(x,
	    _mm_set1_epi8('_')), _mm_cmpeq_epi8(x, _mm_set1_epi8('-'))));
	return ~(uint32_t)_mm_movemask_epi8(ok) & 0xffffu;
}
#endif

const unsigned char *
kg_rdf_name_end(const unsigned char *line, const unsigned char *p,
    const unsigned char *end)
{
#ifdef __SSE2__
	uint32_t m;

	for (; end - p >= 16; p += 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);

		if ((m = not_name_sse2(x)) != 0)
			return p + __builtin_ctz(m);
	}
	if (p < end && end - line >= 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)
		    (end - 16));

		m = not_name_sse2(x) >> (16 - (end - p));
		return m != 0 ? p + __builtin_ctz(m) : end;
	}
#else
	(void)line;
#endif
	while (p < end && name_ok(*p))
		p++;
	return p;
}
