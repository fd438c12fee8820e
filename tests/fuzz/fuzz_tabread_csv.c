/*
 * fuzz_tabread_csv: the CSV reader (lib/io/tabread.c over libcsv).  Any
 * input may be rejected, but never with a crash, a leak or a field
 * outside the record store; and text without quotes or carriage returns
 * must read exactly as the reference TSV split says (the same records,
 * fields and line numbers), since then CSV has nothing more to say.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "tabread_ref.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet();
	return 0;
}

/* 1 when text has neither a quote nor a "\r" and is not gzip. */
static int
plain_text(const struct tab_case *c)
{
	if (c->len >= 2 && (unsigned char)c->text[0] == 0x1f &&
	    (unsigned char)c->text[1] == 0x8b)
		return 0;
	return memchr(c->text, '"', c->len) == NULL &&
	    memchr(c->text, '\r', c->len) == NULL;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tab_case c;
	struct tab_recs got, want;
	char *path;

	if (tab_case_parse(data, size, KG_TAB_CSV, &c) < 0)
		return 0;
	path = fuzz_write("in.csv", c.text, c.len);
	tab_read_file(path, &c, &got);
	if (plain_text(&c)) {
		tab_reference(&c, &want);
		FUZZ_CHECK(!got.failed, "CSV without quotes failed to read");
		FUZZ_CHECK(tab_recs_equal(&got, &want),
		    "CSV without quotes differs from the plain split");
		tab_recs_release(&want);
	}
	tab_recs_release(&got);
	free(path);
	return 0;
}
