/*
 * fuzz_tabread_gzip: the gzip path of lib/io/tabread.c.  The input is
 * read as it is (the seeds are gzip files, so mutations give corrupt and
 * truncated streams, which must fail cleanly), and its text is also
 * compressed here, in one or two gzip members, and must read back as the
 * same records as the plain text; cut short, it must fail, never end
 * quietly.  Bit 6 of byte 0 reads CSV instead of TSV, bit 7 writes two
 * members.
 */
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "fuzz.h"
#include "tabread_ref.h"
#include "core/util.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet();
	return 0;
}

/* Append one gzip member holding text[0..len) to buf (grown as needed). */
static void
gzip_member(const char *text, size_t len, unsigned char **buf, size_t *blen)
{
	z_stream z;
	size_t cap = len + len / 2 + 64;

	memset(&z, 0, sizeof(z));
	FUZZ_CHECK(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8,
	    Z_DEFAULT_STRATEGY) == Z_OK, "deflateInit2");
	*buf = kg_xrealloc(*buf, *blen + cap);
	z.next_in = (unsigned char *)(uintptr_t)text;
	z.avail_in = (uInt)len;
	z.next_out = *buf + *blen;
	z.avail_out = (uInt)cap;
	FUZZ_CHECK(deflate(&z, Z_FINISH) == Z_STREAM_END, "deflate");
	*blen += cap - z.avail_out;
	deflateEnd(&z);
}

/* 1 when text (read as plain) would be taken for gzip or is quoted CSV. */
static int
no_reference(const struct tab_case *c)
{
	if (c->len >= 2 && (unsigned char)c->text[0] == 0x1f &&
	    (unsigned char)c->text[1] == 0x8b)
		return 1;
	return c->opts.format == KG_TAB_CSV &&
	    (memchr(c->text, '"', c->len) != NULL ||
	    memchr(c->text, '\r', c->len) != NULL);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tab_case c;
	struct tab_recs raw, got, want, cut;
	unsigned char *gz = NULL;
	size_t glen = 0, half;
	char *path;

	if (size < 1 || tab_case_parse(data, size, (data[0] & 64) ?
	    KG_TAB_CSV : KG_TAB_TSV, &c) < 0)
		return 0;
	path = fuzz_write("raw.gz", c.text, c.len);
	tab_read_file(path, &c, &raw);
	free(path);

	/* The text compressed, in two members when bit 7 says so. */
	half = (c.extra & 2) ? c.len / 2 : c.len;
	gzip_member(c.text, half, &gz, &glen);
	if (half < c.len)
		gzip_member(c.text + half, c.len - half, &gz, &glen);
	path = fuzz_write("text.gz", gz, glen);
	tab_read_file(path, &c, &got);
	free(path);
	FUZZ_CHECK(!got.failed || c.opts.format == KG_TAB_CSV,
	    "a well-formed gzip file failed to read as TSV");
	if (!no_reference(&c)) {
		tab_reference(&c, &want);
		FUZZ_CHECK(tab_recs_equal(&got, &want),
		    "records from gzip differ from the plain text's");
		tab_recs_release(&want);
	}

	/* One member cut inside: an error, after a prefix of the records. */
	if (half == c.len && glen > 18) {
		path = fuzz_write("cut.gz", gz, glen - 1 - c.len % 8);
		tab_read_file(path, &c, &cut);
		free(path);
		FUZZ_CHECK(cut.failed, "a truncated gzip file read quietly");
		FUZZ_CHECK(tab_recs_prefix(&cut, &got),
		    "a truncated gzip file gave records the whole did not");
		tab_recs_release(&cut);
	}
	tab_recs_release(&raw);
	tab_recs_release(&got);
	free(gz);
	return 0;
}
