/*
 * tabread: see tabread.h.  TSV lines are split in place in one big
 * buffer; CSV lines from the same buffer are fed, one line at a time, to
 * libcsv, whose callbacks copy fields into a record store.  Feeding whole
 * lines is what lets us give each CSV record the line it starts on.
 * A mapped input's buffer is tabread_map.c's (tabread_impl.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "io/tabread_impl.h"
#include "io/dropbehind.h"
#include "core/util.h"

#define BUF_INIT ((size_t)4 << 20)
/* Read in pieces that stay in the L2 cache between the kernel's (or
 * zlib's) copy and our scan of them; 4 MiB reads came back from L3. */
#define READ_MAX ((size_t)256 << 10)

/* libcsv's parser state before the first byte of a record (libcsv.c's
 * ROW_NOT_BEGUN; the state field is part of the public struct). */
#define CSV_ROW_NOT_BEGUN 0

const char *
kg_tabread_name(const struct kg_tabread *r)
{
	return r->name;
}

uint64_t
kg_tabread_line(const struct kg_tabread *r)
{
	return r->rec_line;
}

uint64_t
kg_tabread_lines(const struct kg_tabread *r)
{
	return r->lineno;
}

uint64_t
kg_tabread_comments(const struct kg_tabread *r)
{
	return r->comments;
}

uint64_t
kg_tabread_first_comment(const struct kg_tabread *r)
{
	return r->first_comment;
}

uint64_t
kg_tabread_blanks(const struct kg_tabread *r)
{
	return r->blanks;
}

uint64_t
kg_tabread_bytes(const struct kg_tabread *r)
{
	return r->bytes;
}

static int
keep_spaces(unsigned char c)
{
	(void)c;
	return 0;
}

/*
 * The fields of one physical line: delimiters plus one; in CSV a
 * delimiter inside quotes is text, and a line that ends inside quotes
 * (a record that goes on) counts 0.
 */
static size_t
line_fields(const struct kg_tabread *r, const char *s, size_t len)
{
	const char delim = r->opts.delim;
	int csv = r->opts.format == KG_TAB_CSV, quoted = 0;
	size_t i, n = 1;

	for (i = 0; i < len; i++) {
		if (csv && s[i] == '"')
			quoted = !quoted;
		else if (s[i] == delim && !quoted)
			n++;
	}
	return quoted ? 0 : n;
}

/*
 * Is a line of len > 0 bytes a comment?  nfields is its field count when
 * the caller has it, or 0 to count here (only for lines that start with
 * the comment byte).
 */
static int
is_comment(const struct kg_tabread *r, const char *s, size_t len,
    size_t nfields)
{
	if (r->opts.comment == '\0' || s[0] != r->opts.comment)
		return 0;
	if (r->opts.fields == 0)
		return 1;
	if (nfields == 0)
		nfields = line_fields(r, s, len);
	return nfields != r->opts.fields;
}

/* Count a comment on the line just consumed. */
static void
count_comment(struct kg_tabread *r)
{
	if (r->comments++ == 0)
		r->first_comment = r->lineno;
}

/* read(2) that retries after a signal; as read otherwise. */
static ssize_t
read_some(int fd, void *buf, size_t n)
{
	ssize_t got;

	do
		got = read(fd, buf, n);
	while (got < 0 && errno == EINTR);
	return got;
}

/*
 * Read fd directly, after a look at its first two bytes for gzip's
 * magic (they stay buffered): a regular file that is not gzip (read(2)
 * into the buffer, without zlib's copy of every byte), and with
 * interactive set input on a pipe, terminal or socket (plain, or
 * inflated here as it comes).  Returns 0 for other input, left as it
 * was (zlib reads it); 1 with r->direct set when the reader is ready,
 * or 1 with r->direct DIRECT_NONE after kg_error().  The buffer is
 * allocated by the caller afterwards only for zlib input, so this sets
 * it up itself.
 */
static int
open_direct(struct kg_tabread *r, int fd, int interactive)
{
	struct stat st;
	ssize_t got = 0;
	size_t have = 0;
	int regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode), gzip;
	unsigned char magic[2];
	off_t off0;

	if (!regular && !interactive)
		return 0;
	off0 = regular ? lseek(fd, 0, SEEK_CUR) : -1;
	while (have < 2 && (got = read_some(fd, magic + have, 2 - have)) > 0)
		have += (size_t)got;
	if (have < 2 && got < 0) {
		kg_error_errno("%s: read error", r->name);
		return 1;
	}
	gzip = have == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
	if (regular && gzip) {
		/* A regular gzip file: zlib's, from where it was. */
		if (lseek(fd, -2, SEEK_CUR) < 0) {
			kg_error_errno("%s: cannot read", r->name);
			return 1;
		}
		return 0;
	}
	/* Mapped (kg_tabread_map_open), or read into a buffer that starts
	 * with the bytes read. */
	if (!gzip && regular && off0 == 0 && have == 2)
		kg_tabread_map_open(r, fd, &st);
	if (r->map_len == 0) {
		r->cap = BUF_INIT;
		r->buf = kg_xmalloc(r->cap);
		memcpy(r->buf, magic, have);
	}
	r->fd = fd;
	r->bytes = have;
	/* Read from start to end: the kernel may read ahead further. */
	if (regular)
		(void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	if (gzip) {
		r->zin = kg_xmalloc(READ_MAX);
		memcpy(r->zin, magic, 2);
		r->zs.next_in = r->zin;
		r->zs.avail_in = 2;
		if (inflateInit2(&r->zs, 16 + MAX_WBITS) != Z_OK) {
			kg_error("%s: cannot set up gzip decompression",
			    r->name);
			return 1;
		}
		r->direct = DIRECT_GZIP;
		r->bytes = 0;
	} else {
		r->len = have;
		r->direct = DIRECT_PLAIN;
		if (have < 2)
			r->eof = got == 0;
		if (regular) {
			kg_dropbehind_plan(&r->drop, fd, &st, off0);
			r->file_off0 = (uint64_t)off0;
		}
	}
	if (r->opts.format == KG_TAB_CSV) {
		if (csv_init(&r->csv, CSV_STRICT | CSV_STRICT_FINI) != 0) {
			kg_error("%s: cannot set up the CSV parser", r->name);
			if (r->direct == DIRECT_GZIP)
				inflateEnd(&r->zs);
			r->direct = DIRECT_NONE;
			return 1;
		}
		r->csv_ready = 1;
		csv_set_delim(&r->csv, (unsigned char)r->opts.delim);
		csv_set_space_func(&r->csv, keep_spaces);
	}
	return 1;
}

int
kg_tabread_open(struct kg_tabread **rp, const char *path,
    const struct kg_tab_opts *opts)
{
	struct kg_tabread *r;
	int fd;

	*rp = NULL;
	if (strcmp(path, "-") == 0) {
		fd = dup(STDIN_FILENO);
		if (fd < 0) {
			kg_error_errno("stdin: cannot read");
			return -1;
		}
	} else {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			kg_error_errno("%s: cannot open", path);
			return -1;
		}
	}
	r = kg_xcalloc(1, sizeof(*r));
	r->name = kg_xstrdup(strcmp(path, "-") == 0 ? "stdin" : path);
	r->opts = *opts;
	r->fd = -1;
	if (open_direct(r, fd, opts->interactive) != 0) {
		if (r->direct == DIRECT_NONE) {
			if (r->fd < 0)	/* else kg_tabread_close closes it */
				close(fd);
			kg_tabread_close(r);
			return -1;
		}
		*rp = r;
		return 0;
	}
	r->gz = gzdopen(fd, "rb");
	if (r->gz == NULL) {
		close(fd);
		kg_error("%s: cannot open: out of memory", r->name);
		kg_tabread_close(r);
		return -1;
	}
	gzbuffer(r->gz, 1u << 17);
	r->cap = BUF_INIT;
	r->buf = kg_xmalloc(r->cap);
	if (opts->format == KG_TAB_CSV) {
		if (csv_init(&r->csv, CSV_STRICT | CSV_STRICT_FINI) != 0) {
			kg_error("%s: cannot set up the CSV parser", r->name);
			kg_tabread_close(r);
			return -1;
		}
		r->csv_ready = 1;
		csv_set_delim(&r->csv, (unsigned char)opts->delim);
		csv_set_space_func(&r->csv, keep_spaces);
	}
	*rp = r;
	return 0;
}

void
kg_tabread_close(struct kg_tabread *r)
{
	if (r == NULL)
		return;
	if (r->map_len > 0)
		kg_tabread_map_close(r);
	else
		free(r->buf);
	kg_dropbehind_release(&r->drop);
	if (r->gz != NULL)
		gzclose(r->gz);
	if (r->direct == DIRECT_GZIP)
		inflateEnd(&r->zs);
	if (r->fd >= 0)
		close(r->fd);
	free(r->zin);
	if (r->csv_ready)
		csv_free(&r->csv);
	free(r->name);
	free(r->store);
	free(r->foff);
	free(r->flen);
	free(r->recs);
	free(r);
}

/*
 * A UTF-8 byte-order mark (EF BB BF) that some editors put at the start
 * of a file is not part of the first field.  gzread fills the first
 * buffer completely unless the input is shorter, so the mark is whole in
 * it when it is there.
 */
static void
skip_bom(struct kg_tabread *r)
{
	if (r->bom_checked)
		return;
	/* Interactive input arrives in pieces: wait for three bytes. */
	if (r->direct != DIRECT_NONE && r->len - r->pos < 3 &&
	    memchr(r->buf + r->pos, '\n', r->len - r->pos) == NULL)
		return;
	r->bom_checked = 1;
	if (r->len - r->pos >= 3 &&
	    memcmp(r->buf + r->pos, "\xef\xbb\xbf", 3) == 0)
		r->pos += 3;
}

/* Inflate what has arrived into buf[len..len + want); read more input
 * only when none is waiting.  0 (eof set at the end), or -1. */
static int
refill_gzip(struct kg_tabread *r, size_t want)
{
	for (;;) {
		int zr;

		if (r->zs.avail_in == 0) {
			ssize_t got = read_some(r->fd, r->zin, READ_MAX);

			if (got < 0) {
				kg_error_errno("%s: read error", r->name);
				return -1;
			}
			if (got == 0) {
				if (!r->zs_end) {
					kg_error("%s: truncated gzip input",
					    r->name);
					return -1;
				}
				r->eof = 1;
				return 0;
			}
			r->zs.next_in = r->zin;
			r->zs.avail_in = (uInt)got;
		}
		if (r->zs_end) {
			/* Another member follows (gzip files concatenate). */
			if (inflateReset(&r->zs) != Z_OK) {
				kg_error("%s: cannot decompress", r->name);
				return -1;
			}
			r->zs_end = 0;
		}
		r->zs.next_out = (unsigned char *)r->buf + r->len;
		r->zs.avail_out = (uInt)want;
		zr = inflate(&r->zs, Z_SYNC_FLUSH);
		if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR) {
			kg_error("%s: cannot decompress: %s", r->name,
			    r->zs.msg ? r->zs.msg : "bad data");
			return -1;
		}
		r->zs_end = zr == Z_STREAM_END;
		if (want - r->zs.avail_out > 0) {
			size_t got = want - r->zs.avail_out;

			r->len += got;
			r->bytes += got;
			skip_bom(r);
			return 0;
		}
	}
}

/* Refill from an interactive fd: what has arrived, at least a byte
 * unless at the end. */
static int
refill_direct(struct kg_tabread *r, size_t want)
{
	ssize_t got;

	if (r->direct == DIRECT_GZIP)
		return refill_gzip(r, want);
	got = read_some(r->fd, r->buf + r->len, want);
	if (got < 0) {
		kg_error_errno("%s: read error", r->name);
		return -1;
	}
	if (got == 0)
		r->eof = 1;
	r->len += (size_t)got;
	r->bytes += (uint64_t)got;
	kg_dropbehind_advance(&r->drop, r->fd, r->file_off0 + r->bytes,
	    r->eof);
	if (got == 0)
		return 0;
	skip_bom(r);
	return 0;
}

int
kg_tabread_ready(struct kg_tabread *r)
{
	struct pollfd p;

	if (r->direct == DIRECT_NONE || r->eof ||
	    memchr(r->buf + r->pos, '\n', r->len - r->pos) != NULL ||
	    (r->direct == DIRECT_GZIP && r->zs.avail_in > 0))
		return 1;
	p.fd = r->fd;
	p.events = POLLIN;
	p.revents = 0;
	return poll(&p, 1, 0) > 0;
}

/* Read more input after the unconsumed bytes; 0, or -1 after kg_error().
 * Sets eof when nothing more comes. */
static int
refill(struct kg_tabread *r)
{
	size_t rest = r->len - r->pos, want;
	int got, errnum;
	const char *msg;

	if (r->map_len > 0) {
		if (kg_tabread_map_refill(r) < 0)
			return -1;
		skip_bom(r);
		return 0;
	}
	if (r->pos > 0) {
		memmove(r->buf, r->buf + r->pos, rest);
		r->pos = 0;
		r->len = rest;
	}
	if (r->len == r->cap) {
		/* A line longer than the buffer. */
		r->cap *= 2;
		r->buf = kg_xrealloc(r->buf, r->cap);
	}
	want = r->cap - r->len;
	if (want > READ_MAX)
		want = READ_MAX;
	if (r->direct != DIRECT_NONE)
		return refill_direct(r, want);
	got = gzread(r->gz, r->buf + r->len, (unsigned)want);
	if (got > 0) {
		r->len += (size_t)got;
		r->bytes += (uint64_t)got;
		skip_bom(r);
		return 0;
	}
	msg = gzerror(r->gz, &errnum);
	if (errnum == Z_ERRNO) {
		kg_error_errno("%s: read error", r->name);
		return -1;
	}
	if (got < 0 || errnum != Z_OK) {
		if (errnum == Z_BUF_ERROR)
			kg_error("%s: truncated gzip input", r->name);
		else
			kg_error("%s: cannot decompress: %s", r->name, msg);
		return -1;
	}
	r->eof = 1;
	return 0;
}

/*
 * The next physical line (without its "\n") in *line, *len.  Returns 1,
 * 0 at the end of input, -1 on error, and -2 when the line is not in the
 * buffer yet and no_refill forbids moving it.  A last line without "\n"
 * counts.
 */
static int
next_line(struct kg_tabread *r, char **line, size_t *len, int *has_nl)
{
	char *p, *nl;

	for (;;) {
		p = r->buf + r->pos;
		nl = memchr(p, '\n', r->len - r->pos);
		if (nl != NULL) {
			*line = p;
			*len = (size_t)(nl - p);
			*has_nl = 1;
			r->pos += *len + 1;
			r->lineno++;
			return 1;
		}
		if (r->eof) {
			if (r->pos == r->len)
				return 0;
			*line = p;
			*len = r->len - r->pos;
			*has_nl = 0;
			r->pos = r->len;
			r->lineno++;
			return 1;
		}
		if (r->no_refill)
			return -2;
		if (refill(r) < 0)
			return -1;
	}
}

static int
next_tsv_slow(struct kg_tabread *r, struct kg_field *f, size_t max,
    size_t *n)
{
	char *line, *end, *p, *q;
	const char delim = r->opts.delim;
	size_t len, k;
	int has_nl, rc;

	for (;;) {
		rc = next_line(r, &line, &len, &has_nl);
		if (rc <= 0)
			return rc;
		if (len > 0 && line[len - 1] == '\r')
			len--;
		if (len == 0) {
			r->blanks++;
			continue;
		}
		if (is_comment(r, line, len, 0)) {
			count_comment(r);
			continue;
		}
		if (r->opts.header && !r->header_done) {
			r->header_done = 1;
			continue;
		}
		break;
	}
	r->rec_line = r->lineno;
	end = line + len;
	k = 0;
	for (p = line;; p = q + 1) {
		q = memchr(p, delim, (size_t)(end - p));
		if (q == NULL)
			q = end;
		if (k < max) {
			f[k].s = p;
			f[k].len = (size_t)(q - p);
		}
		k++;
		if (q == end)
			break;
	}
	*n = k;
	return 1;
}

/* The first byte equal to a or b in [p, end), or end. */
static inline const char *
find2(const char *p, const char *end, char a, char b)
{
#ifdef __SSE2__
	const __m128i va = _mm_set1_epi8(a), vb = _mm_set1_epi8(b);

	while (end - p >= 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
		int m = _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(x, va),
		    _mm_cmpeq_epi8(x, vb)));

		if (m != 0)
			return p + __builtin_ctz((unsigned)m);
		p += 16;
	}
#endif
	for (; p < end; p++)
		if (*p == a || *p == b)
			return p;
	return end;
}

/*
 * The TSV fast path: split the next line where it lies in the buffer in
 * one scan for the delimiter and the newline together (memchr per field
 * and per line was a sixth of kg-ingest's time).  A line that is not
 * wholly buffered yet goes to next_tsv_slow, which refills.
 */
static int
next_tsv(struct kg_tabread *r, struct kg_field *f, size_t max, size_t *n)
{
	const char delim = r->opts.delim;
	const char *end = r->buf + r->len, *start, *p, *q;
	size_t k, len;

	for (;;) {
		start = p = r->buf + r->pos;
		k = 0;
		for (;;) {
			q = find2(p, end, delim, '\n');
			if (q == end)
				return next_tsv_slow(r, f, max, n);
			if (k < max) {
				f[k].s = p;
				f[k].len = (size_t)(q - p);
			}
			k++;
			if (*q == '\n')
				break;
			p = q + 1;
		}
		/* q is the newline; drop a final "\r" (CRLF files). */
		len = (size_t)(q - start);
		if (len > 0 && q[-1] == '\r') {
			len--;
			if (k <= max)
				f[k - 1].len--;
		}
		r->pos = (size_t)(q + 1 - r->buf);
		r->lineno++;
		if (len == 0)
			r->blanks++;
		else if (is_comment(r, start, len, k))
			count_comment(r);
		else if (r->opts.header && !r->header_done)
			r->header_done = 1;
		else
			break;
	}
	r->rec_line = r->lineno;
	*n = k;
	return 1;
}

static void
csv_field_cb(void *s, size_t len, void *data)
{
	struct kg_tabread *r = data;

	/* ">=": the store exists even when every field so far is empty, so
	 * a field's pointer is never NULL + 0. */
	if (r->store_len + len >= r->store_cap) {
		r->store_cap = (r->store_len + len) * 2 + 4096;
		r->store = kg_xrealloc(r->store, r->store_cap);
	}
	if (len > 0)
		memcpy(r->store + r->store_len, s, len);
	if (r->nfields == r->fields_cap) {
		r->fields_cap = r->fields_cap < 64 ? 64 : r->fields_cap * 2;
		r->foff = kg_xreallocarray(r->foff, r->fields_cap,
		    sizeof(*r->foff));
		r->flen = kg_xreallocarray(r->flen, r->fields_cap,
		    sizeof(*r->flen));
	}
	r->foff[r->nfields] = r->store_len;
	r->flen[r->nfields] = len;
	r->nfields++;
	r->store_len += len;
}

static void
csv_record_cb(int c, void *data)
{
	struct kg_tabread *r = data;

	(void)c;
	if (r->nrecs == r->recs_cap) {
		r->recs_cap = r->recs_cap < 16 ? 16 : r->recs_cap * 2;
		r->recs = kg_xreallocarray(r->recs, r->recs_cap,
		    sizeof(*r->recs));
	}
	r->recs[r->nrecs].first = r->open_first;
	r->recs[r->nrecs].n = r->nfields - r->open_first;
	r->recs[r->nrecs].line = r->open_line;
	r->nrecs++;
	r->open_first = r->nfields;
}

/* Drop finished records that were handed out, keeping the open one. */
static void
csv_compact(struct kg_tabread *r)
{
	size_t i, base, nopen = r->nfields - r->open_first;

	base = nopen > 0 ? r->foff[r->open_first] : r->store_len;
	if (base > 0 && r->store_len > base)
		memmove(r->store, r->store + base, r->store_len - base);
	r->store_len -= base;
	for (i = 0; i < nopen; i++) {
		r->foff[i] = r->foff[r->open_first + i] - base;
		r->flen[i] = r->flen[r->open_first + i];
	}
	r->nfields = nopen;
	r->open_first = 0;
	r->nrecs = r->rec_head = 0;
}

/* Parse lines until a record is finished or the input ends; 0 or -1. */
static int
csv_fill(struct kg_tabread *r)
{
	char *line;
	size_t len;
	int has_nl, rc;

	while (r->rec_head == r->nrecs) {
		csv_compact(r);
		rc = next_line(r, &line, &len, &has_nl);
		if (rc < 0)
			return -1;
		if (rc == 0) {
			if (csv_fini(&r->csv, csv_field_cb, csv_record_cb,
			    r) != 0) {
				kg_error("%s:%llu: unterminated quoted field",
				    r->name, (unsigned long long)r->open_line);
				return -1;
			}
			return 0;
		}
		if (r->csv.pstate == CSV_ROW_NOT_BEGUN) {
			if (len > 0 && is_comment(r, line, len, 0)) {
				count_comment(r);
				continue;
			}
			if (len == 0 || (len == 1 && line[0] == '\r')) {
				r->blanks++;
				continue;
			}
			r->open_line = r->lineno;
		}
		/* The "\n" is still in the buffer right after the line. */
		len += has_nl;
		if (csv_parse(&r->csv, line, len, csv_field_cb, csv_record_cb,
		    r) != len) {
			kg_error("%s:%llu: malformed CSV: %s", r->name,
			    (unsigned long long)r->lineno,
			    csv_strerror(csv_error(&r->csv)));
			return -1;
		}
	}
	return 0;
}

static int
next_csv(struct kg_tabread *r, struct kg_field *f, size_t max, size_t *n)
{
	struct csv_rec *rec;
	size_t k;

	for (;;) {
		if (r->rec_head == r->nrecs) {
			if (csv_fill(r) < 0)
				return -1;
			if (r->rec_head == r->nrecs)
				return 0;
		}
		rec = &r->recs[r->rec_head++];
		if (r->opts.header && !r->header_done) {
			r->header_done = 1;
			continue;
		}
		break;
	}
	r->rec_line = rec->line;
	for (k = 0; k < rec->n && k < max; k++) {
		f[k].s = r->store + r->foff[rec->first + k];
		f[k].len = r->flen[rec->first + k];
	}
	*n = rec->n;
	return 1;
}

int
kg_tabread_next(struct kg_tabread *r, struct kg_field *f, size_t max,
    size_t *n)
{
	if (r->opts.format == KG_TAB_CSV)
		return next_csv(r, f, max, n);
	return next_tsv(r, f, max, n);
}

int
kg_tabread_batch(struct kg_tabread *r, struct kg_field *f, size_t max_fields,
    size_t max_recs, size_t *n, uint64_t *line)
{
	size_t k = 0;
	int rc;

	if (r->opts.format == KG_TAB_CSV || max_recs <= 1) {
		rc = kg_tabread_next(r, f, max_fields, n);
		line[0] = r->rec_line;
		return rc;
	}
	rc = next_tsv(r, f, max_fields, n);
	if (rc <= 0)
		return rc;
	line[0] = r->rec_line;
	/* Later records only from what is buffered: a refill would move the
	 * bytes that the fields already handed out point to.  An unfinished
	 * line is left in place for the next call. */
	r->no_refill = 1;
	for (k = 1; k < max_recs; k++) {
		size_t pos = r->pos;
		uint64_t lineno = r->lineno, blanks = r->blanks;
		uint64_t comments = r->comments, first = r->first_comment;

		rc = next_tsv(r, f + k * max_fields, max_fields, n + k);
		if (rc == -2) {
			r->pos = pos;
			r->lineno = lineno;
			r->blanks = blanks;
			r->comments = comments;
			r->first_comment = first;
			break;
		}
		if (rc <= 0)
			break;
		line[k] = r->rec_line;
	}
	r->no_refill = 0;
	r->rec_line = line[k - 1];
	return (int)k;
}

int
kg_tabread_raw(struct kg_tabread *r, int more, const char **p, size_t *len,
    int *eof)
{
	/* The first read, which also skips a byte-order mark. */
	if ((more || !r->bom_checked) && !r->eof && refill(r) < 0)
		return -1;
	*p = r->buf + r->pos;
	*len = r->len - r->pos;
	*eof = r->eof;
	return 0;
}

void
kg_tabread_consume(struct kg_tabread *r, size_t n, uint64_t lines,
    uint64_t blanks)
{
	r->pos += n;
	r->lineno += lines;
	r->blanks += blanks;
	r->rec_line = r->lineno;
}

int
kg_field_u64(const struct kg_field *f, uint64_t lim, uint64_t *out)
{
	char buf[24];
	char *end;

	if (f->len == 0 || f->len >= sizeof(buf) || f->s[0] < '0' ||
	    f->s[0] > '9')
		return -1;
	memcpy(buf, f->s, f->len);
	buf[f->len] = '\0';
	errno = 0;
	*out = strtoull(buf, &end, 10);
	return *end != '\0' || errno != 0 || *out >= lim ? -1 : 0;
}
