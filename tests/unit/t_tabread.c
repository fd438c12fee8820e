/*
 * Unit tests for lib/tabread: TSV splitting, CRLF, empty and comment
 * lines, headers, a final line without newline, lines longer than the
 * buffer, gzip input, CSV quoting (delimiters, quotes and newlines inside
 * fields) with the right line numbers, every error case, raw access
 * (kg_tabread_raw) in pieces of every size, and the page cache that a
 * large file leaves behind.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <zlib.h>

#include "io/tabread.h"
#include "test.h"
#include "core/util.h"

static char *
write_file(const char *name, const char *data, size_t len)
{
	char *path = kg_path_join(t_tmpdir(), name);
	FILE *f = fopen(path, "wb");

	if (f == NULL || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
		perror(path);
		exit(1);
	}
	return path;
}

static char *
write_gz(const char *name, const char *data, size_t len)
{
	char *path = kg_path_join(t_tmpdir(), name);
	gzFile g = gzopen(path, "wb");

	if (g == NULL || gzwrite(g, data, (unsigned)len) != (int)len ||
	    gzclose(g) != Z_OK) {
		fprintf(stderr, "cannot write %s\n", path);
		exit(1);
	}
	return path;
}

/* Read every record of path into "f1|f2|f3@line;" form. */
static char *
dump(const char *path, const struct kg_tab_opts *o, int *rc)
{
	struct kg_tabread *r;
	struct kg_field f[4];
	size_t n, k, len = 0, cap = 1 << 16;
	char *out = kg_xmalloc(cap);

	out[0] = '\0';
	*rc = kg_tabread_open(&r, path, o);
	if (*rc < 0)
		return out;
	while ((*rc = kg_tabread_next(r, f, 4, &n)) == 1) {
		for (k = 0; k < n && k < 4; k++) {
			if (len + f[k].len + 64 > cap) {
				cap = (len + f[k].len + 64) * 2;
				out = kg_xrealloc(out, cap);
			}
			if (k > 0)
				out[len++] = '|';
			memcpy(out + len, f[k].s, f[k].len);
			len += f[k].len;
		}
		len += (size_t)snprintf(out + len, 64, "%s@%llu;",
		    n > 4 ? "+" : "", (unsigned long long)kg_tabread_line(r));
	}
	out[len] = '\0';
	kg_tabread_close(r);
	return out;
}

static void
t_tsv(void)
{
	static const char text[] =
	    "# a comment\n"
	    "a\tb\tc\n"
	    "\n"
	    "d\t\tf\r\n"
	    "x y\tb\"q\"\t,\n"
	    "only\n"
	    "1\t2\t3\t4\t5\n"
	    "last\tline\tno-newline";
	struct kg_tab_opts o = KG_TAB_OPTS_INIT;
	char *path = write_file("a.tsv", text, sizeof(text) - 1);
	char *got;
	int rc;

	got = dump(path, &o, &rc);
	T_CHECK(rc == 0);
	T_CHECKF(strcmp(got, "a|b|c@2;d||f@4;x y|b\"q\"|,@5;only@6;"
	    "1|2|3|4+@7;last|line|no-newline@8;") == 0, "%s", got);
	free(got);
	/* Without comments the first line is a record; with a header the
	 * first record is skipped. */
	o.comment = '\0';
	o.header = 1;
	got = dump(path, &o, &rc);
	T_CHECKF(rc == 0 && strncmp(got, "a|b|c@2;d||f@4;", 15) == 0, "%s",
	    got);
	free(got);
	o.header = 0;
	got = dump(path, &o, &rc);
	T_CHECKF(rc == 0 && strncmp(got, "# a comment@1;a|b|c@2;", 22) == 0,
	    "%s", got);
	free(got);
	free(path);
}

static void
t_tsv_delimiter_and_gzip(void)
{
	static const char text[] = "h r t\n#c\nx  y\n";
	struct kg_tab_opts o = KG_TAB_OPTS_INIT;
	struct kg_tabread *r;
	struct kg_field f[3];
	size_t n;
	char *path = write_gz("b.tsv.gz", text, sizeof(text) - 1);
	char *got;
	int rc;

	o.delim = ' ';
	got = dump(path, &o, &rc);
	T_CHECKF(rc == 0 && strcmp(got, "h|r|t@1;x||y@3;") == 0, "%s", got);
	free(got);
	T_CHECK(kg_tabread_open(&r, path, &o) == 0);
	while (kg_tabread_next(r, f, 3, &n) == 1)
		;
	T_CHECK(kg_tabread_lines(r) == 3 && kg_tabread_comments(r) == 1);
	T_CHECK(kg_tabread_bytes(r) == sizeof(text) - 1);
	kg_tabread_close(r);
	free(path);
}

/* A 9 MB line (the buffer starts at 4 MB) between short ones. */
/*
 * A UTF-8 byte-order mark at the start is not part of the first field
 * (TSV, CSV, gzip, with a header or a comment first); one anywhere else
 * is data (issue 12, item 6).
 */
static void
t_bom(void)
{
	static const char tsv[] = "\xef\xbb\xbf" "a\tr\tb\n\xef\xbb\xbf" "c\tr\td\n";
	static const char csv[] = "\xef\xbb\xbf" "\"a\",r,b\nc,r,d\n";
	static const char hdr[] = "\xef\xbb\xbf" "# x\nh\tr\tt\na\tr\tb\n";
	static const char two[] = "\xef\xbb";
	struct kg_tab_opts o = KG_TAB_OPTS_INIT;
	char *path, *got;
	int rc;

	path = write_file("bom.tsv", tsv, sizeof(tsv) - 1);
	got = dump(path, &o, &rc);
	T_CHECKF(rc == 0 && strcmp(got, "a|r|b@1;\xef\xbb\xbf" "c|r|d@2;") ==
	    0, "%s", got);
	free(got);
	free(path);
	path = write_gz("bom.tsv.gz", tsv, sizeof(tsv) - 1);
	got = dump(path, &o, &rc);
	T_CHECKF(rc == 0 && strncmp(got, "a|r|b@1;", 8) == 0, "%s", got);
	free(got);
	free(path);
	o.header = 1;
	path = write_file("bomh.tsv", hdr, sizeof(hdr) - 1);
	got = dump(path, &o, &rc);
	T_CHECKF(rc == 0 && strcmp(got, "a|r|b@3;") == 0, "%s", got);
	free(got);
	free(path);
	o.header = 0;
	o.format = KG_TAB_CSV;
	o.delim = ',';
	path = write_file("bom.csv", csv, sizeof(csv) - 1);
	got = dump(path, &o, &rc);
	T_CHECKF(rc == 0 && strcmp(got, "a|r|b@1;c|r|d@2;") == 0, "%s", got);
	free(got);
	free(path);
	/* Part of a mark is data. */
	o = (struct kg_tab_opts)KG_TAB_OPTS_INIT;
	path = write_file("two.tsv", two, sizeof(two) - 1);
	got = dump(path, &o, &rc);
	T_CHECKF(rc == 0 && strcmp(got, "\xef\xbb@1;") == 0, "%s", got);
	free(got);
	free(path);
}

static void
t_long_line(void)
{
	size_t big = 9u << 20, len = 0;
	char *text = kg_xmalloc(big + 64), *path;
	struct kg_tab_opts o = KG_TAB_OPTS_INIT;
	struct kg_tabread *r;
	struct kg_field f[3];
	size_t n;

	len += (size_t)snprintf(text, 64, "a\tb\tc\n");
	memset(text + len, 'x', big);
	text[len + 10] = '\t';
	len += big;
	len += (size_t)snprintf(text + len, 64, "\nd\te\tf\n");
	path = write_file("long.tsv", text, len);
	T_CHECK(kg_tabread_open(&r, path, &o) == 0);
	T_CHECK(kg_tabread_next(r, f, 3, &n) == 1 && n == 3);
	T_CHECK(kg_tabread_next(r, f, 3, &n) == 1 && n == 2 &&
	    f[0].len == 10 && f[1].len == big - 11 && f[1].s[0] == 'x' &&
	    kg_tabread_line(r) == 2);
	T_CHECK(kg_tabread_next(r, f, 3, &n) == 1 && n == 3 &&
	    f[2].len == 1 && f[2].s[0] == 'f' && kg_tabread_line(r) == 3);
	T_CHECK(kg_tabread_next(r, f, 3, &n) == 0);
	kg_tabread_close(r);
	free(text);
	free(path);
}

static void
t_csv(void)
{
	static const char text[] =
	    "head,rel,tail\n"
	    "# comment\n"
	    "a,b,c\n"
	    "\"x,y\",\"say \"\"hi\"\"\",\"two\n"
	    "lines\"\n"
	    "\n"
	    " sp ,\"\",z\r\n"
	    "\"#not a comment\",r,\"t\n"
	    "#inside\n"
	    "end\"\n"
	    "u,v,w";
	struct kg_tab_opts o = KG_TAB_OPTS_INIT;
	char *path = write_file("c.csv", text, sizeof(text) - 1);
	char *gzpath = write_gz("c.csv.gz", text, sizeof(text) - 1);
	char *got;
	const char *want =
	    "a|b|c@3;x,y|say \"hi\"|two\nlines@4;"
	    " sp ||z@7;#not a comment|r|t\n#inside\nend@8;u|v|w@11;";
	int rc;

	o.format = KG_TAB_CSV;
	o.delim = ',';
	o.header = 1;
	got = dump(path, &o, &rc);
	T_CHECKF(rc == 0 && strcmp(got, want) == 0, "%s", got);
	free(got);
	got = dump(gzpath, &o, &rc);
	T_CHECKF(rc == 0 && strcmp(got, want) == 0, "%s", got);
	free(got);
	/* Semicolons as delimiter. */
	free(path);
	path = write_file("d.csv", "a;\"b;c\";d\n", 10);
	o.delim = ';';
	o.header = 0;
	got = dump(path, &o, &rc);
	T_CHECKF(rc == 0 && strcmp(got, "a|b;c|d@1;") == 0, "%s", got);
	free(got);
	free(path);
	free(gzpath);
}

/* A first record whose fields are all empty (found by the fuzzer, as
 * "\b,,"-like input): every field is a valid empty string, never a NULL
 * pointer or NULL + 0. */
static void
t_csv_empty_fields(void)
{
	struct kg_tab_opts o = KG_TAB_OPTS_INIT;
	char *path = write_file("e.csv", ",,\n\"\",x\n", 8);
	struct kg_tabread *r;
	struct kg_field f[4];
	size_t n, k;

	o.format = KG_TAB_CSV;
	o.delim = ',';
	T_CHECK(kg_tabread_open(&r, path, &o) == 0);
	T_CHECK(kg_tabread_next(r, f, 4, &n) == 1 && n == 3);
	for (k = 0; k < 3; k++)
		T_CHECK(f[k].s != NULL && f[k].len == 0);
	T_CHECK(kg_tabread_next(r, f, 4, &n) == 1 && n == 2);
	T_CHECK(f[0].s != NULL && f[0].len == 0 && f[1].len == 1);
	T_CHECK(kg_tabread_next(r, f, 4, &n) == 0);
	kg_tabread_close(r);
	free(path);
}

/*
 * 200,000 random lines (1 to 5 fields of 0 to 40 bytes, some CRLF, blank
 * or comment lines), about 5 MB, so lines straddle every read: records
 * from kg_tabread_next and kg_tabread_batch, plain and gzip, must equal
 * a byte-at-a-time reference split.
 */
static void
t_random_against_reference(void)
{
	enum { NLINES = 200000 };
	struct kg_rng rng;
	size_t cap = (size_t)NLINES * 220, len = 0, i;
	char *text = kg_xmalloc(cap), *path, *gzpath, *want, *got;
	struct kg_tab_opts o = KG_TAB_OPTS_INIT;
	uint64_t line = 0;
	size_t wlen = 0;
	int rc, pass;

	want = kg_xmalloc(cap * 2);
	kg_rng_seed(&rng, 11, 0);
	for (i = 0; i < NLINES; i++) {
		uint64_t kind = kg_rng_below(&rng, 20), nf, k, c;
		int crlf = kg_rng_below(&rng, 4) == 0;
		size_t start = len;

		line++;
		if (kind == 0) {		/* blank */
		} else if (kind == 1) {		/* comment */
			len += (size_t)snprintf(text + len, 64, "# c%zu", i);
		} else {
			nf = 1 + kg_rng_below(&rng, 5);
			for (k = 0; k < nf; k++) {
				uint64_t fl = kg_rng_below(&rng, 41);

				if (k > 0)
					text[len++] = '\t';
				for (c = 0; c < fl; c++)
					text[len++] = (char)('a' +
					    kg_rng_below(&rng, 26));
			}
		}
		if (crlf)
			text[len++] = '\r';
		text[len++] = '\n';
		/* The reference: the line without CR, fields by tabs. */
		if (kind >= 2 && len - start - 1 - crlf > 0) {
			size_t nfld = 1, j, e = len - 1 - crlf;

			for (j = start; j < e; j++)
				nfld += text[j] == '\t';
			/* Same format as dump(): at most 4 fields shown. */
			{
				size_t shown = 0, fs = start;

				for (j = start; j <= e && shown < 4; j++) {
					if (j == e || text[j] == '\t') {
						if (shown > 0)
							want[wlen++] = '|';
						memcpy(want + wlen, text + fs,
						    j - fs);
						wlen += j - fs;
						fs = j + 1;
						shown++;
					}
				}
				wlen += (size_t)snprintf(want + wlen, 64,
				    "%s@%llu;", nfld > 4 ? "+" : "",
				    (unsigned long long)line);
			}
		}
	}
	want[wlen] = '\0';
	path = write_file("random.tsv", text, len);
	gzpath = write_gz("random.tsv.gz", text, len);
	for (pass = 0; pass < 2; pass++) {
		got = dump(pass ? gzpath : path, &o, &rc);
		T_CHECKF(rc == 0 && strcmp(got, want) == 0,
		    "pass %d: records differ from the reference", pass);
		free(got);
	}
	/* Batches: the same records in the same order. */
	{
		struct kg_tabread *r;
		struct kg_field f[4 * 64];
		size_t n[64], glen = 0, j, k;
		uint64_t lines[64];
		int nb;

		got = kg_xmalloc(cap * 2);
		T_CHECK(kg_tabread_open(&r, path, &o) == 0);
		while ((nb = kg_tabread_batch(r, f, 4, 64, n, lines)) > 0) {
			for (j = 0; j < (size_t)nb; j++) {
				for (k = 0; k < n[j] && k < 4; k++) {
					if (k > 0)
						got[glen++] = '|';
					memcpy(got + glen, f[4 * j + k].s,
					    f[4 * j + k].len);
					glen += f[4 * j + k].len;
				}
				glen += (size_t)snprintf(got + glen, 64,
				    "%s@%llu;", n[j] > 4 ? "+" : "",
				    (unsigned long long)lines[j]);
			}
		}
		got[glen] = '\0';
		T_CHECK(nb == 0);
		T_CHECKF(strcmp(got, want) == 0, "batches differ");
		T_CHECK(kg_tabread_lines(r) == NLINES);
		kg_tabread_close(r);
		free(got);
	}
	free(path);
	free(gzpath);
	free(text);
	free(want);
}

static void
t_errors(void)
{
	struct kg_tab_opts o = KG_TAB_OPTS_INIT;
	char *path, *got, *gz, *cut;
	size_t len;
	int rc;

	kg_error_mute(1);
	path = kg_path_join(t_tmpdir(), "absent.tsv");
	got = dump(path, &o, &rc);
	T_CHECK(rc == -1);
	T_CHECKF(strstr(kg_error_last(), "absent.tsv: cannot open: No such "
	    "file or directory") != NULL, "%s", kg_error_last());
	free(got);
	free(path);

	o.format = KG_TAB_CSV;
	o.delim = ',';
	path = write_file("bad.csv", "a,b,c\na,\"b\"x,c\n", 16);
	got = dump(path, &o, &rc);
	T_CHECK(rc == -1 && strcmp(got, "a|b|c@1;") == 0);
	T_CHECKF(strstr(kg_error_last(), "bad.csv:2: malformed CSV") != NULL,
	    "%s", kg_error_last());
	free(got);
	free(path);
	path = write_file("open.csv", "a,b,c\n\"a,b\n", 11);
	got = dump(path, &o, &rc);
	T_CHECK(rc == -1);
	T_CHECKF(strstr(kg_error_last(),
	    "open.csv:2: unterminated quoted field") != NULL, "%s",
	    kg_error_last());
	free(got);
	free(path);

	/* A gzip file cut short. */
	o = (struct kg_tab_opts)KG_TAB_OPTS_INIT;
	{
		char text[20000];
		size_t i;

		for (i = 0; i < sizeof(text); i++)
			text[i] = (i % 7 == 6) ? '\n' : (char)('a' + i % 13);
		gz = write_gz("t.gz", text, sizeof(text));
	}
	cut = kg_read_file(gz, &len);
	path = write_file("cut.gz", cut, len / 2);
	got = dump(path, &o, &rc);
	T_CHECK(rc == -1);
	T_CHECKF(strstr(kg_error_last(), "cut.gz: truncated gzip input") !=
	    NULL, "%s", kg_error_last());
	free(got);
	free(path);
	/* Corrupt deflate data. */
	memset(cut + 20, 0xff, 40);
	path = write_file("bad.gz", cut, len);
	got = dump(path, &o, &rc);
	T_CHECK(rc == -1);
	T_CHECKF(strstr(kg_error_last(), "bad.gz: cannot decompress") !=
	    NULL, "%s", kg_error_last());
	free(got);
	free(path);
	free(cut);
	free(gz);
	kg_error_mute(0);
}

/* kg_field_u64: plain decimals below the limit, nothing else. */
static void
t_field_u64(void)
{
	static const struct {
		const char *s;
		uint64_t lim;
		int rc;
		uint64_t want;
	} c[] = {
		{ "0", 10, 0, 0 }, { "9", 10, 0, 9 }, { "10", 10, -1, 0 },
		{ "007", 8, 0, 7 }, { "", 10, -1, 0 }, { "-1", 10, -1, 0 },
		{ "+1", 10, -1, 0 }, { " 1", 10, -1, 0 }, { "1 ", 10, -1, 0 },
		{ "1x", 10, -1, 0 }, { "0x1", 100, -1, 0 },
		{ "18446744073709551614", UINT64_MAX, 0,
		    18446744073709551614ULL },
		{ "18446744073709551616", UINT64_MAX, -1, 0 },
		{ "123456789012345678901234", UINT64_MAX, -1, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		/* The field is not NUL-terminated: a digit follows it. */
		char buf[64];
		struct kg_field f = { buf, strlen(c[i].s) };
		uint64_t v = 0;
		int rc;

		snprintf(buf, sizeof(buf), "%s7", c[i].s);
		rc = kg_field_u64(&f, c[i].lim, &v);
		T_CHECKF(rc == c[i].rc, "'%s': rc %d", c[i].s, rc);
		if (rc == 0)
			T_CHECKF(v == c[i].want, "'%s': %llu", c[i].s,
			    (unsigned long long)v);
	}
}

/*
 * The comment rule with opts.fields (issue 32): a '#' line of exactly
 * that many fields is a record ("#tag" is a name), other '#' lines are
 * comments; with fields 0 every '#' line is.  TSV on the fast path, the
 * slow path (a last line without "\n") and in batches; CSV counts a
 * quoted delimiter as text.
 */
static void
t_comment_fields(void)
{
	static const char text[] =
	    "#a\tb\tc\n# note\n#x\ty\n#p\tq\tr\ts\nd\te\tf\n#z\ty\tx";
	static const char csv[] =
	    "#a,\"b,c\",d\n# x, y\ne,f,g\n";
	struct kg_tab_opts o = KG_TAB_OPTS_INIT;
	char *path = write_file("cf.tsv", text, sizeof(text) - 1);
	char *cpath = write_file("cf.csv", csv, sizeof(csv) - 1);
	struct kg_tabread *r;
	struct kg_field f[4 * 8];
	size_t n[8];
	uint64_t line[8];
	char *got;
	int rc;

	o.fields = 3;
	got = dump(path, &o, &rc);
	T_CHECKF(rc == 0 && strcmp(got, "#a|b|c@1;d|e|f@5;#z|y|x@6;") == 0,
	    "%s", got);
	free(got);
	T_CHECK(kg_tabread_open(&r, path, &o) == 0);
	rc = kg_tabread_batch(r, f, 4, 8, n, line);
	T_CHECKF(rc == 2 && line[0] == 1 && line[1] == 5 && n[0] == 3,
	    "%d records", rc);
	T_CHECK(kg_tabread_batch(r, f, 4, 8, n, line) == 1 && line[0] == 6);
	T_CHECK(kg_tabread_comments(r) == 3 &&
	    kg_tabread_first_comment(r) == 2);
	kg_tabread_close(r);
	o.fields = 0;
	got = dump(path, &o, &rc);
	T_CHECKF(rc == 0 && strcmp(got, "d|e|f@5;") == 0, "%s", got);
	free(got);
	o.format = KG_TAB_CSV;
	o.delim = ',';
	o.fields = 3;
	got = dump(cpath, &o, &rc);
	T_CHECKF(rc == 0 && strcmp(got, "#a|b,c|d@1;e|f|g@3;") == 0, "%s",
	    got);
	free(got);
	free(path);
	free(cpath);
}

/*
 * Raw access reads a file whole, in order, whatever the pieces: lines
 * taken a random number at a time (some calls consuming nothing, so the
 * buffer must grow past a 5 MiB line), with a byte-order mark skipped,
 * plain and gzip; the counts of consumed lines and blanks add up.
 */
static void
raw_read(const char *path, const char *want, size_t want_len)
{
	struct kg_tab_opts o = KG_TAB_OPTS_INIT;
	struct kg_tabread *r;
	const char *p, *nl;
	char *got = kg_xmalloc(want_len + 1);
	size_t len, n = 0, used;
	uint64_t x = 42, lines = 0, blanks = 0;
	int eof = 0, more = 0, rc = 0, steps = 0;

	T_CHECK(kg_tabread_open(&r, path, &o) == 0);
	while (rc == 0 && (rc = kg_tabread_raw(r, more, &p, &len, &eof)) == 0) {
		int take, step = 0;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		take = (int)(x % 4);
		for (used = 0; take > 0; take--) {
			nl = memchr(p + used, '\n', len - used);
			if (nl == NULL)
				break;
			used = (size_t)(nl + 1 - p);
			step++;
		}
		if (n + used > want_len)
			break;
		memcpy(got + n, p, used);
		n += used;
		lines += (uint64_t)step;
		blanks += (uint64_t)(step / 2);
		kg_tabread_consume(r, used, (uint64_t)step, (uint64_t)(step / 2));
		if (eof && memchr(p + used, '\n', len - used) == NULL) {
			memcpy(got + n, p + used, len - used);
			n += len - used;
			kg_tabread_consume(r, len - used, 1, 0);
			lines++;
			break;
		}
		more = used == 0;
		steps++;
	}
	T_CHECKF(rc == 0 && n == want_len && memcmp(got, want, n) == 0,
	    "%s: rc %d, %zu of %zu bytes", path, rc, n, want_len);
	T_CHECKF(kg_tabread_bytes(r) == want_len + 3 && steps > 100,
	    "%s: %llu bytes, %d steps", path,
	    (unsigned long long)kg_tabread_bytes(r), steps);
	T_CHECKF(kg_tabread_lines(r) == lines && lines > 30000 &&
	    kg_tabread_blanks(r) == blanks, "%s: %llu lines", path,
	    (unsigned long long)kg_tabread_lines(r));
	kg_tabread_close(r);
	free(got);
}

static void
t_raw(void)
{
	size_t cap = 12u << 20, len = 3, i;
	char *text = kg_xmalloc(cap), *path;
	uint64_t x = 7;

	memcpy(text, "\xef\xbb\xbf", 3);
	while (len < (6u << 20)) {
		size_t n;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		n = x % 300;
		for (i = 0; i < n; i++)
			text[len++] = (char)('a' + (x + i) % 26);
		text[len++] = '\n';
	}
	memset(text + len, 'L', 5u << 20);
	len += 5u << 20;
	memcpy(text + len, "\nlast line without a break", 26);
	len += 26;
	path = write_file("raw.txt", text, len);
	raw_read(path, text + 3, len - 3);
	free(path);
	path = write_gz("raw.txt.gz", text, len);
	raw_read(path, text + 3, len - 3);
	free(path);
	free(text);
}

/* The fraction of path's pages (len bytes) in the page cache. */
static double
resident(const char *path, size_t len)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t n = (len + (size_t)page - 1) / (size_t)page, i, in = 0;
	unsigned char *v = kg_xmalloc(n);
	int fd = open(path, O_RDONLY);
	void *map = fd < 0 ? MAP_FAILED : mmap(NULL, len, PROT_READ,
	    MAP_SHARED, fd, 0);

	if (map == MAP_FAILED || mincore(map, len, v) != 0) {
		perror(path);
		exit(1);
	}
	for (i = 0; i < n; i++)
		in += v[i] & 1;
	munmap(map, len);
	close(fd);
	free(v);
	return (double)in / (double)n;
}

/* Records of path read through tabread, or -1 on an error. */
static long
count_records(const char *path)
{
	struct kg_tab_opts o = KG_TAB_OPTS_INIT;
	struct kg_tabread *r;
	struct kg_field f[3];
	size_t n;
	long recs = 0;
	int rc;

	if (kg_tabread_open(&r, path, &o) < 0)
		return -1;
	while ((rc = kg_tabread_next(r, f, 3, &n)) == 1)
		recs += n == 3;
	kg_tabread_close(r);
	return rc < 0 ? -1 : recs;
}

/*
 * A file of 72 MiB that is not in the page cache is not left in it
 * after a read; one that is cached stays cached.
 */
static void
t_page_cache(void)
{
	const char rec[16] = "e0000001\tr1\te02\n";
	size_t len = (size_t)72 << 20, i;
	long want = (long)(len / sizeof(rec));
	char *text = kg_xmalloc(len), *path;
	double before, after = 0;
	int fd, dropped;

	for (i = 0; i < len; i += sizeof(rec))
		memcpy(text + i, rec, sizeof(rec));
	path = write_file("big.tsv", text, len);
	fd = open(path, O_RDONLY);
	T_CHECK(fd >= 0 && fdatasync(fd) == 0 &&
	    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0);
	close(fd);
	before = resident(path, len);
	dropped = before < 0.1;
	if (dropped) {
		T_CHECK(count_records(path) == want);
		after = resident(path, len);
		T_CHECKF(after < 0.05, "%.0f%% resident after a read",
		    100 * after);
		/* Cached before: cached after. */
		fd = open(path, O_RDONLY);
		while (fd >= 0 && read(fd, text, len) > 0)
			;
		close(fd);
		before = resident(path, len);
		T_CHECK(count_records(path) == want);
		after = resident(path, len);
		T_CHECKF(before < 0.9 || after > 0.9, "%.0f%% resident after "
		    "a read", 100 * after);
	}
	free(text);
	unlink(path);
	free(path);
	if (!dropped)
		T_SKIP("the page cache keeps the file (%.0f%% resident after "
		    "POSIX_FADV_DONTNEED)", 100 * before);
}

/* An 8 MiB mapped TSV file: its reader, with one record read. */
static struct kg_tabread *
open_mapped(const char *path)
{
	struct kg_tab_opts o = KG_TAB_OPTS_INIT;
	struct kg_tabread *r;
	struct kg_field f[3];
	size_t n;

	if (kg_tabread_open(&r, path, &o) < 0)
		return NULL;
	if (kg_tabread_next(r, f, 3, &n) != 1) {
		kg_tabread_close(r);
		return NULL;
	}
	return r;
}

/* Records until the end or an error: 0 at the end, -1 on an error. */
static int
drain(struct kg_tabread *r)
{
	struct kg_field f[3];
	size_t n;
	int rc;

	while ((rc = kg_tabread_next(r, f, 3, &n)) == 1)
		;
	return rc;
}

/*
 * A mapped file that shrinks under its reader: seen at a refill, an error
 * naming it; met inside the mapped window first (SIGBUS), the process
 * ends with one line naming it and status 1, not with the signal.
 */
static void
t_shrink(void)
{
	const char rec[16] = "e0000001\tr1\te02\n";
	size_t len = (size_t)8 << 20, i;
	char *text = kg_xmalloc(len), *path, msg[512];
	struct kg_tabread *r;
	int pipefd[2], status = 0;
	ssize_t got;
	pid_t pid;

	for (i = 0; i < len; i += sizeof(rec))
		memcpy(text + i, rec, sizeof(rec));
	path = write_file("shrink.tsv", text, len);
	r = open_mapped(path);
	T_CHECK(r != NULL);
	if (r != NULL) {
		/* Past the first window: the next refill sees it. */
		T_CHECK(truncate(path, (off_t)(len / 2)) == 0);
		kg_error_mute(1);
		T_CHECK(drain(r) < 0);
		T_CHECKF(strstr(kg_error_last(), "shrink.tsv: the file shrank "
		    "while it was read") != NULL, "%s", kg_error_last());
		kg_error_mute(0);
		kg_tabread_close(r);
	}
	free(path);
	path = write_file("shrink.tsv", text, len);
	T_CHECK(pipe(pipefd) == 0);
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		close(pipefd[0]);
		dup2(pipefd[1], 2);
		r = open_mapped(path);
		/* Inside the window already mapped: the reads fault. */
		if (r == NULL || truncate(path, 0) != 0)
			_exit(3);
		drain(r);
		_exit(4);
	}
	close(pipefd[1]);
	got = read(pipefd[0], msg, sizeof(msg) - 1);
	msg[got > 0 ? got : 0] = '\0';
	close(pipefd[0]);
	T_CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	T_CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 1,
	    "status %#x", status);
	T_CHECKF(strncmp(msg, "t_tabread: ", 11) == 0 && strstr(msg, "shrink.tsv: "
	    "the file shrank or a read of it failed while it was mapped\n") !=
	    NULL, "'%s'", msg);
	unlink(path);
	free(path);
	free(text);
}

int
main(void)
{
	kg_setprogname("t_tabread");
	T_RUN(t_field_u64);
	T_RUN(t_tsv);
	T_RUN(t_tsv_delimiter_and_gzip);
	T_RUN(t_bom);
	T_RUN(t_long_line);
	T_RUN(t_csv);
	T_RUN(t_csv_empty_fields);
	T_RUN(t_comment_fields);
	T_RUN(t_random_against_reference);
	T_RUN(t_errors);
	T_RUN(t_raw);
	T_RUN(t_page_cache);
	T_RUN(t_shrink);
	return T_DONE();
}
