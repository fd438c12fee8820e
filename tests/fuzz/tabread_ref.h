/*
 * tabread_ref: what the three tabread harnesses (TSV, CSV, gzip) share:
 * the options an input's first two bytes select, the records a reader
 * returns, and a reference splitter written from tabread.h's contract
 * alone to compare them with.
 *
 * Input layout: byte 0 holds flags (bit 0 header, bit 1 comments, bit 2
 * read in batches of 5 records, bits 3-5 the number of fields asked for,
 * 0-7, which is also the comment rule's opts.fields; bits 6-7 are the harness's own), byte 1 the delimiter (a line end,
 * which no caller accepts, reads as a tab; '"' reads as ',' for CSV),
 * and the rest is the text.
 */
#ifndef KG_FUZZ_TABREAD_REF_H
#define KG_FUZZ_TABREAD_REF_H

#include <stddef.h>
#include <stdint.h>

#include "io/tabread.h"

struct tab_case {
	struct kg_tab_opts opts;
	size_t max;		/* fields asked for per record */
	size_t batch;		/* records per kg_tabread_batch call, or 1 */
	unsigned extra;		/* bits 6-7 of byte 0 */
	const char *text;
	size_t len;
};

/* Records as read: for each, its field count, line and the first
 * min(n, max) fields, each as a length and its bytes. */
struct tab_recs {
	char *bytes;
	size_t len, cap;
	uint64_t n_recs;
	uint64_t lines, comments, blanks;	/* the reader's counters */
	int failed;		/* the reader returned -1 */
};

/* Split an input into options and text; 0, or -1 when it is too short. */
int tab_case_parse(const uint8_t *data, size_t size,
    enum kg_tab_format format, struct tab_case *c);

/* Read the file "path" with c's options into *out (zeroed first). */
void tab_read_file(const char *path, const struct tab_case *c,
    struct tab_recs *out);

/* The records the contract promises for c's text read as TSV with c's
 * options (no gzip detection: the caller rules that out). */
void tab_reference(const struct tab_case *c, struct tab_recs *out);

/* 1 when a and b hold the same records and counters. */
int tab_recs_equal(const struct tab_recs *a, const struct tab_recs *b);

/* 1 when a's records are a prefix of b's (counters not compared). */
int tab_recs_prefix(const struct tab_recs *a, const struct tab_recs *b);

void tab_recs_release(struct tab_recs *r);

#endif
