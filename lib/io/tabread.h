/*
 * tabread: a record reader for delimited text (TSV and CSV), from a file
 * or stdin, plain or gzip-compressed (zlib detects which).
 *
 * TSV (the fast path): one record per line, fields split on a delimiter
 * byte (tab by default) with no quoting; a final "\r" is dropped (CRLF
 * files).  Lines are found with memchr in a large buffer: a regular file
 * that is not gzip is mapped (mmap) piece by piece when it is large and
 * read with read(2) when not, other input comes through zlib.  A large
 * regular file that was not in the page cache when it was opened is
 * dropped from the cache behind the reader (POSIX_FADV_DONTNEED), so
 * that reading it leaves the cache as it found it; one that was cached
 * stays cached.  A mapped file is read up to the size it had when
 * opened; one that shrinks while it is read is an error (kg_error, -1)
 * when a refill sees it, and when a read faults first (SIGBUS, also the
 * signal of a failed disk read) the process ends with one line naming
 * it, its outputs cleaned up and status 1 (io/fatal.h,
 * kg_fatal_watch_map).  CSV goes through libcsv (RFC 4180
 * quoting: quoted fields may hold the delimiter, doubled quotes and
 * newlines; strict mode, so a stray quote is an error).  Spaces are kept
 * as part of fields.
 *
 * A UTF-8 byte-order mark at the start of the input is skipped.  In both
 * formats empty lines are skipped, and so are comment lines: lines whose
 * first byte is opts.comment (none when it is '\0'; a CSV line only when
 * no record is open).  With opts.fields set, a line that starts with the
 * comment byte but splits into exactly opts.fields fields (in CSV,
 * counting quoted delimiters as text) is a record all the same, so that a
 * name such as "#tag" is data; with opts.fields 0 every such line is a
 * comment.  The first record is skipped when opts.header is set.  Line
 * numbers count physical lines from 1; a record's line is the
 * line where it starts.
 *
 * Errors (unreadable file, read or decompression error, truncated gzip,
 * malformed CSV) are reported through kg_error() as "file: message" or
 * "file:line: message"; they are not recoverable.  Checking the number of
 * fields or their content is the caller's job.
 */
#ifndef KG_TABREAD_H
#define KG_TABREAD_H

#include <stddef.h>
#include <stdint.h>

enum kg_tab_format { KG_TAB_TSV, KG_TAB_CSV };

struct kg_tab_opts {
	enum kg_tab_format format;
	char delim;		/* '\t' for TSV, ',' for CSV by convention */
	int header;		/* skip the first record */
	char comment;		/* lines starting with it are comments; '\0':
				 * none */
	size_t fields;		/* a record's fields: a line of exactly this
				 * many is data even when it starts with the
				 * comment byte; 0: every such line is a
				 * comment */
	/*
	 * A pipe, terminal or socket is read with read(2), which returns
	 * what has arrived, instead of through zlib's buffered reader, which
	 * waits for a full buffer or the end; gzip input there is inflated
	 * as it comes.  A regular file is read as without it.  For a program
	 * that writes one request and waits for its answer (a coprocess).
	 */
	int interactive;
};

#define KG_TAB_OPTS_INIT { .format = KG_TAB_TSV, .delim = '\t', .comment = '#' }

/* One field: bytes s[0..len), not NUL-terminated. */
struct kg_field {
	const char *s;
	size_t len;
};

struct kg_tabread;

/*
 * Open "path" ("-" is stdin, shown as "stdin" in messages).  Returns 0
 * and a reader in *rp, or -1 after kg_error() ("x.tsv: cannot open: No
 * such file or directory").
 */
int kg_tabread_open(struct kg_tabread **rp, const char *path,
    const struct kg_tab_opts *opts);

/*
 * Read the next record: its first min(n, max) fields go to f[], the true
 * number of fields to *n.  The bytes stay valid until the next call.
 * Returns 1 for a record, 0 at the end of input, -1 after kg_error().
 */
int kg_tabread_next(struct kg_tabread *r, struct kg_field *f, size_t max,
    size_t *n);

/*
 * Read up to max_recs records whose fields all stay valid until the next
 * call, so that a caller can work on them together: record j's first
 * max_fields fields go to f[j * max_fields ...], its field count to n[j]
 * and its line to line[j].  A TSV batch ends early where the buffered
 * input ends; a CSV batch holds one record.  Returns the number of
 * records (at least 1), 0 at the end of input, -1 after kg_error().
 */
int kg_tabread_batch(struct kg_tabread *r, struct kg_field *f,
    size_t max_fields, size_t max_recs, size_t *n, uint64_t *line);

/*
 * Raw access, for a reader of a line syntax of its own (TSV format only;
 * the byte-order mark is skipped as for records, nothing else is): the
 * unconsumed buffered bytes in *p, *len, and in *eof 1 when no more
 * input follows them.  With more set, more input is read first (the
 * unconsumed bytes move to the start of the buffer, which grows when
 * they fill it), so a caller sets it when the bytes hold no whole line.
 * The bytes stay valid until the next call with more set.  Returns 0,
 * or -1 after kg_error() (read or decompression error).  Not to be mixed
 * with kg_tabread_next or kg_tabread_batch on one reader.
 */
int kg_tabread_raw(struct kg_tabread *r, int more, const char **p,
    size_t *len, int *eof);

/* The first n bytes that kg_tabread_raw gave are used: they held lines
 * physical lines (a last line without "\n" counts), blanks of them
 * empty.  n is at most the bytes it gave. */
void kg_tabread_consume(struct kg_tabread *r, size_t n, uint64_t lines,
    uint64_t blanks);

/*
 * 1 if the next kg_tabread_next call can return without waiting for
 * input that has not arrived: a whole line is buffered, the input is at
 * its end, or (opts.interactive) bytes are waiting to be read; 0 when it
 * would wait.  Always 1 for input read through zlib.
 */
int kg_tabread_ready(struct kg_tabread *r);

/* Line on which the last record returned starts (1-based). */
uint64_t kg_tabread_line(const struct kg_tabread *r);
/* The name used in messages: the path, or "stdin". */
const char *kg_tabread_name(const struct kg_tabread *r);
/* Counts so far: physical lines, comment lines and empty lines skipped,
 * and uncompressed bytes read. */
uint64_t kg_tabread_lines(const struct kg_tabread *r);
uint64_t kg_tabread_comments(const struct kg_tabread *r);
/* The line of the first comment skipped so far, or 0. */
uint64_t kg_tabread_first_comment(const struct kg_tabread *r);
uint64_t kg_tabread_blanks(const struct kg_tabread *r);
uint64_t kg_tabread_bytes(const struct kg_tabread *r);

/* Close and free; NULL is a no-op. */
void kg_tabread_close(struct kg_tabread *r);

/*
 * A field holding a plain decimal number (digits only, no sign, no
 * space) below lim into *out: 0, or -1 when it is anything else or too
 * large.  Sets no error: the caller names the file and line.
 */
int kg_field_u64(const struct kg_field *f, uint64_t lim, uint64_t *out);

#endif
