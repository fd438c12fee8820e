/*
 * tabread_impl: the reader's state, shared by the two files of the
 * tabread module and nobody else.  tabread.c opens the input, buffers
 * and splits it (TSV, CSV, gzip, interactive input); tabread_map.c
 * handles a mapped input: mapping a large regular file, handing out
 * its bytes a piece at a time, unmapping what was consumed, noticing a
 * file that shrank and unmapping it at the end.  Single-threaded, like
 * the reader.
 */
#ifndef KG_TABREAD_IMPL_H
#define KG_TABREAD_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include <csv.h>
#include <zlib.h>

#include "io/tabread.h"
#include "io/dropbehind.h"

struct csv_rec {
	size_t first;		/* index of its first field in fields[] */
	size_t n;
	uint64_t line;
};

/* Interactive input: the fd read directly, plain or inflated. */
enum { DIRECT_NONE, DIRECT_PLAIN, DIRECT_GZIP };

struct kg_tabread {
	char *name;
	gzFile gz;
	int direct;		/* DIRECT_*: gz is NULL unless NONE */
	int fd;			/* direct input */
	z_stream zs;		/* DIRECT_GZIP: inflating zin */
	unsigned char *zin;
	int zs_end;		/* the last gzip member ended */
	struct kg_tab_opts opts;
	char *buf;		/* unconsumed input is buf[pos..len) */
	size_t cap, pos, len;
	int eof;
	int bom_checked;	/* a UTF-8 byte-order mark was looked for */
	int no_refill;		/* batch: pointers out, the buffer must stay */
	/* A regular file: dropped behind the reader (dropbehind.h); the
	 * fd's offset was file_off0 before the first byte read. */
	struct kg_dropbehind drop;
	uint64_t file_off0;
	/* A mapped file (kg_tabread_map_open): buf is its mapping of
	 * map_len bytes, of which [0, unmapped) are consumed and unmapped
	 * again; 0 when the file is read. */
	size_t map_len, unmapped;
	uint64_t lineno;	/* physical lines consumed */
	uint64_t rec_line;	/* start line of the record last returned */
	uint64_t comments, blanks, bytes;
	uint64_t first_comment;	/* line of the first comment, or 0 */
	int header_done;

	/* CSV only. */
	struct csv_parser csv;
	int csv_ready;
	char *store;		/* field bytes of open and finished records */
	size_t store_len, store_cap;
	size_t *foff, *flen;	/* per field: offset in store, length */
	size_t nfields, fields_cap;
	size_t open_first;	/* first field of the record being parsed */
	struct csv_rec *recs;	/* finished records, recs[rec_head..nrecs) */
	size_t nrecs, recs_cap, rec_head;
	uint64_t open_line;	/* line where the open record started */
};

/*
 * Map the regular file fd (st its fstat; its first two bytes read, not
 * gzip, its reader starting at offset 0) when it is large enough: buf
 * becomes the mapping, cap and map_len its size, and the range is
 * watched for SIGBUS (io/fatal.h).  A file that is too
 * small, or one that cannot be mapped, is left to read(2): r unchanged,
 * map_len 0.  Nothing here fails.
 */
void kg_tabread_map_open(struct kg_tabread *r, int fd, const struct stat *st);

/*
 * A mapped file (map_len > 0): MAP_STEP more bytes made available in
 * buf[len..) (the rest at the end, eof set then) and counted in bytes,
 * after unmapping the pages consumed before pos and dropping them
 * behind (io/dropbehind.h).  0, or -1 after kg_error() when the file
 * is seen to have shrunk below map_len.  The caller skips a
 * byte-order mark.
 */
int kg_tabread_map_refill(struct kg_tabread *r);

/*
 * Unmap a mapped file (map_len > 0) and stop watching its range; what
 * the drop-behind plan holds is dropped.  buf is left dangling; the
 * plan, fd and the rest are still the caller's to release.
 */
void kg_tabread_map_close(struct kg_tabread *r);

#endif
