/*
 * Unit tests for lib/ingest/rdf_scan: the N-Triples fast path against a
 * byte-at-a-time reference of the same grammar, for lines it must take
 * and lines it must leave to Serd, cut by the end of the buffer at every
 * byte (with and without eof), at every alignment and with bytes before
 * the line or none; both vector widths; the IRI end and the prefixed
 * name end of the Turtle path.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/rdf_scan.h"
#include "test.h"

/* An IRIREF byte without escapes, ASCII only (N-Triples 1.1). */
static int
ref_iri_byte(unsigned char c)
{
	return c > 0x20 && c < 0x7f && strchr("<>\"{}|^`\\", c) == NULL;
}

static size_t
ref_ws(const unsigned char *s, size_t i, size_t n)
{
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	return i;
}

/*
 * The reference: the statement at s[0..n) (n: the bytes buffered), as
 * the fast path must answer: the length through its line break, or -1.
 */
static long
ref_stmt(const unsigned char *s, size_t n, int eof, size_t off[3],
    size_t len[3])
{
	size_t i = ref_ws(s, 0, n), a;
	int k;

	for (k = 0; k < 3; k++) {
		if (i == n || s[i] != '<')
			return -1;
		a = ++i;
		while (i < n && ref_iri_byte(s[i]))
			i++;
		if (i == n || s[i] != '>' ||
		    !kg_rdf_has_scheme(s + a, i - a))
			return -1;
		off[k] = a;
		len[k] = i - a;
		i++;
		if (i == n || (s[i] != ' ' && s[i] != '\t'))
			return -1;
		i = ref_ws(s, i, n);
	}
	if (i == n || s[i++] != '.')
		return -1;
	i = ref_ws(s, i, n);
	if (i < n && s[i] == '\r')
		i++;
	if (i < n)
		return s[i] == '\n' ? (long)i + 1 : -1;
	return eof ? (long)i : -1;
}

static const char *const lines[] = {
	"<http://www.wikidata.org/entity/Q0e220a8397b1dcdaf> "
	    "<http://www.wikidata.org/prop/direct/P329> "
	    "<http://www.wikidata.org/entity/Q014ebd276658d1af4> .\n",
	"<a:b> <c:d> <e:f> .\n",
	"<a:b> <c:d> <e:f> .\r\n",
	"  <a:b>\t<c:d>  <e:f>\t. \t\r\n",
	"<a:b> <c:d> <e:f>.\n",
	"<a:b> <c:d> <e:f> .",
	"<a:b> <c:d> <e:f> .\r",
	"<https://x.org/a/very/long/iri/that/spans/more/than/one/vector/"
	    "of/thirty/two/bytes/in/each/term> <https://x.org/p> "
	    "<https://x.org/another/long/one/of/sixty/four/bytes/or/more/ok> "
	    ".\n",
	"<https://x.org/a/line/longer/than/the/mask/span/of/one/hundred/and/"
	    "ninety/two/bytes> <https://x.org/p/with/a/long/predicate/iri/too> "
	    "<https://x.org/and/an/object/iri/that/takes/it/past/two/hundred> "
	    ".\r\n",
	/* Lines the fast path must leave to Serd. */
	"<a:b> <c:d> \"lit\" .\n",
	"<a:b> <c:d> \"a \\\" b\" .\n",
	"<a:b> <c:d> <e:f> .\r \n",
	"<a:b> <c:d> <e:f> .\r\r\n",
	"<a:b> <c:d> <e:f> . # comment\n",
	"<a:b> <c:d> <e:f> <g:h> .\n",
	"<a:b> <c:d> <e:f> . <a:b> <c:d> <e:f> .\n",
	"<a:b><c:d> <e:f> .\n",
	"<a:b> <c:d> <e:f\n> .\n",
	"<a:b> <c:d> <e\\u0041:f> .\n",
	"<a:b> <c:d> <e:f\xc3\xa9> .\n",
	"<a:b> <c:d> <ef> .\n",
	"<a:b> <c:d> <1e:f> .\n",
	"<a:b> <c:d> _:x .\n",
	"<a:b> <c:d> <e:\x01f> .\n",
	"<a:b> <c:d> <e:f> .\x7f\n",
	"\n",
	"\r\n",
	"# a comment\n",
	"<a:b> <c:d> <e:f>",
	"<a:b> <c:d> <e:f> .x\n",
};

/*
 * The answer of fn for s[0..n) placed after pre junk bytes and followed
 * by tail bytes of more statements (the buffer's end tail bytes after
 * it: with 200 or more, the whole line is in the mask path's span),
 * against the reference: 1 if they agree (*taken incremented when a
 * statement was taken), else 0 with a note.
 */
static int
check_one(kg_rdf_fast_stmt_fn *fn, const char *what, const char *s,
    size_t n, size_t pre, size_t tail, int eof, int *taken)
{
	static char buf[1024];
	static const char more[] = "<http://e.org/a> <http://e.org/p> "
	    "<http://e.org/b> .\n";
	size_t off[3], len[3], i;
	struct kg_field t[3];
	const char *got;
	long want, at;
	int k;

	memset(buf, '\n', pre);
	memcpy(buf + pre, s, n);
	for (i = 0; i < tail; i++)
		buf[pre + n + i] = more[i % (sizeof(more) - 1)];
	want = ref_stmt((const unsigned char *)buf + pre, n + tail, eof, off,
	    len);
	got = fn(buf, buf + pre, buf + pre + n + tail, eof, t);
	at = got != NULL ? (long)(got - buf) - (long)pre : -1L;
	for (k = 0; got != NULL && k < 3 && at == want; k++)
		if (t[k].s != buf + pre + off[k] || t[k].len != len[k])
			at = -2;
	if (at != want) {
		printf("# %s: %zu bytes of a line from '%.12s' pre %zu eof "
		    "%d: got %ld, want %ld\n", what, n, s[0] == '<' ? s : "?",
		    pre, eof, at, want);
		return 0;
	}
	*taken += got != NULL;
	return 1;
}

/* Every cut of every line, placed at every offset 0..40 of a buffer
 * whose bytes before it are junk, and followed by 0, 40 or 260 bytes of
 * more statements. */
static void
check_fn(kg_rdf_fast_stmt_fn *fn, const char *what)
{
	static const size_t tails[] = { 0, 40, 260 };
	size_t i, cut, pre, j;
	int eof, bad = 0, taken = 0;

	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		for (pre = 0; pre <= 40; pre++)
			for (cut = 0; cut <= strlen(lines[i]); cut++)
				for (j = 0; j < 3; j++)
					for (eof = 0; eof < 2; eof++)
						if (!check_one(fn, what,
						    lines[i], cut, pre, tails[j],
						    eof, &taken) && bad++ > 5)
							goto out;
out:
	T_CHECKF(bad == 0, "%s: %d answers differ from the reference", what,
	    bad);
	/* The 9 lines it must take, at 41 offsets, 3 tails: whole, with
	 * and without eof, and cut before the break with eof. */
	T_CHECKF(taken > 3 * 2 * 9 * 41, "%s: %d statements taken", what,
	    taken);
}

/* Every byte value inside an IRI, in either way of the scan. */
static void
check_bytes(kg_rdf_fast_stmt_fn *fn, const char *what)
{
	char line[64];
	size_t n;
	int c, j, taken = 0, bad = 0;

	for (c = 0; c < 256; c++)
		for (j = 0; j < 2; j++) {
			snprintf(line, sizeof(line), "<http://e.org/%sX/b> "
			    "<c:d> <e:f> .\n", j ? "a/long/name/past/32/" : "");
			n = strlen(line);
			*strchr(line, 'X') = (char)c;
			if (!check_one(fn, what, line, n, 3, 0, 0, &taken) ||
			    !check_one(fn, what, line, n, 3, 260, 0, &taken))
				bad++;
		}
	/* Taken: 0x21..0x7e but for <>"{}|^`\, twice each of 2 ways. */
	T_CHECKF(bad == 0 && taken == 4 * (94 - 9), "%s: %d differ, %d taken",
	    what, bad, taken);
}

static void
t_fast_stmt(void)
{
	check_bytes(kg_rdf_pick_fast_stmt(), "widest");
	check_bytes(kg_rdf_fast_stmt_sse2(), "sse2");
	check_fn(kg_rdf_pick_fast_stmt(), "widest");
	check_fn(kg_rdf_fast_stmt_sse2(), "sse2");
}

/* The fast path takes exactly the lines the reference takes, for
 * lines made of random pieces (IRIs, spaces, breaks, odd bytes). */
static void
t_fast_stmt_random(void)
{
	static const char *const piece[] = { "<", ">", " ", "\t", ".",
	    "\n", "\r", "http:", "a:", "x", "/y/zz", "\"", "\\", "\x80",
	    "#", "<http://www.wikidata.org/entity/Q0e220a8397b1dcdaf>",
	    "<e:f>", " .\n", "{", "\x01" };
	kg_rdf_fast_stmt_fn *fn[2] = { kg_rdf_pick_fast_stmt(),
	    kg_rdf_fast_stmt_sse2() };
	static char buf[1024];
	uint64_t x = 88172645463325252ull;
	size_t off[3], len[3];
	struct kg_field t[3];
	int it, j, f, bad = 0, taken = 0;

	for (it = 0; it < 200000; it++) {
		size_t n = 0, pre;
		int np, eof;
		long want;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		pre = x % 48;
		np = 1 + (int)((x >> 8) % 9);
		memset(buf, 'q', pre);
		/* Mostly well-formed: three IRIs, then a random tail. */
		for (j = 0; j < np; j++) {
			const char *s;

			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			s = j < 3 && (x & 3) != 0 ? (j == 0 ? "<a:b> " :
			    j == 1 ? "<http://p/q> " : "<e:f> ") :
			    piece[(x >> 16) % (sizeof(piece) / sizeof(*piece))];
			memcpy(buf + pre + n, s, strlen(s));
			n += strlen(s);
		}
		eof = (int)((x >> 40) & 1);
		/* Half of them with the buffer going on past the mask span. */
		if ((x >> 41) & 1) {
			memset(buf + pre + n, '\n', 256);
			n += 256;
		}
		want = ref_stmt((const unsigned char *)buf + pre, n, eof, off,
		    len);
		taken += want >= 0;
		for (f = 0; f < 2; f++) {
			const char *got = fn[f](buf, buf + pre, buf + pre + n,
			    eof, t);

			if ((got == NULL) != (want < 0) || (got != NULL &&
			    (got - buf - (long)pre != want ||
			    t[2].s != buf + pre + off[2] ||
			    t[2].len != len[2])))
				bad++;
		}
	}
	T_CHECKF(bad == 0 && taken > 1000, "%d differ, %d taken", bad, taken);
}

static void
t_iri_end(void)
{
	static const char s[] = "http://example.org/abcdefghijklmnopqrstuvwxyz"
	    "0123456789/more>tail";
	const unsigned char *u = (const unsigned char *)s;
	size_t n = sizeof(s) - 1, gt = (size_t)(strchr(s, '>') - s), e;
	int bad = 0;

	/* Every end: the '>' when it is inside, else the end. */
	for (e = 0; e <= n; e++)
		if (kg_rdf_iri_end(u, u, u + e) != u + (e > gt ? gt : e))
			bad++;
	T_CHECKF(bad == 0, "%d ends wrong", bad);
	T_CHECK(kg_rdf_iri_end(u, u + 4, u + n) == u + gt);
}

/* The end of a prefixed name's bytes, for every byte value at several
 * places, from every start, to every end. */
static void
t_name_end(void)
{
	static const char ok[] = "abcdefghijklmnopqrstuvwxyzABCDEF0123_-xy";
	static const size_t at[] = { 0, 5, 17, 31, 39 };
	unsigned char s[40];
	size_t i, p, e, want;
	int c, bad = 0, stops = 0;

	for (c = 0; c < 256; c++)
		for (i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
			int name = ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') ||
			    (c >= '0' && c <= '9') || c == '_' || c == '-';

			memcpy(s, ok, sizeof(s));
			s[at[i]] = (unsigned char)c;
			for (p = 0; p <= at[i]; p++)
				for (e = p; e <= sizeof(s); e++) {
					want = !name && at[i] < e ? at[i] : e;
					stops += want < e;
					if (kg_rdf_name_end(s, s + p, s + e) !=
					    s + want)
						bad++;
				}
		}
	/* 193 bytes stop a name; 5 places. */
	T_CHECKF(bad == 0 && stops > 193 * 5, "%d wrong, %d stops", bad,
	    stops);
}

int
main(void)
{
	T_RUN(t_fast_stmt);
	T_RUN(t_fast_stmt_random);
	T_RUN(t_iri_end);
	T_RUN(t_name_end);
	return T_DONE();
}
