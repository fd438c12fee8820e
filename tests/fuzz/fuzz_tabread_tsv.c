/*
 * fuzz_tabread_tsv: the TSV reader (lib/io/tabread.c's fast and slow
 * paths, record by record and in batches) against the reference split of
 * tabread_ref.c: the same records, fields, line numbers and counters, and
 * never an error for a plain file.
 */
#include <stdlib.h>

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

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tab_case c;
	struct tab_recs got, want;
	char *path;

	if (tab_case_parse(data, size, KG_TAB_TSV, &c) < 0)
		return 0;
	path = fuzz_write("in.tsv", c.text, c.len);
	tab_read_file(path, &c, &got);
	/* zlib reads a file that starts with the gzip magic as gzip. */
	if (c.len < 2 || (unsigned char)c.text[0] != 0x1f ||
	    (unsigned char)c.text[1] != 0x8b) {
		tab_reference(&c, &want);
		FUZZ_CHECK(!got.failed, "a plain TSV file failed to read");
		FUZZ_CHECK(tab_recs_equal(&got, &want),
		    "TSV records differ from the reference split");
		tab_recs_release(&want);
	}
	tab_recs_release(&got);
	free(path);
	return 0;
}
