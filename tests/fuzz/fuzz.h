/*
 * fuzz: what the libFuzzer harnesses of tests/fuzz/ share.  Each harness
 * is one fuzz_<target>.c with LLVMFuzzerTestOneInput; `make fuzz` builds
 * them with clang (-fsanitize=fuzzer,address,undefined) against the
 * library compiled the same way in build-fuzz/, and tests/fuzz/run.sh
 * runs each for a bounded time over its seed corpus in
 * tests/fuzz/corpus/<target>/.
 *
 * Readers that take a path get the input written to a file in a scratch
 * directory of their own process (removed at exit).  A harness checks
 * what the reader promises beyond "no crash" (records equal to a
 * reference split, round trips) with FUZZ_CHECK, which aborts so that
 * libFuzzer saves the input.
 */
#ifndef KG_FUZZ_H
#define KG_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* The process's scratch directory (made on first use, removed at exit);
 * aborts if it cannot be made. */
const char *fuzz_scratch(void);

/*
 * Write data[0..size) to the file "name" in the scratch directory,
 * replacing it, and return its path (owned by the caller; free it).
 * Aborts on I/O errors: they are the harness's, not the reader's.
 */
char *fuzz_write(const char *name, const void *data, size_t size);

/* Mute kgpipe's error messages (every rejected input prints one). */
void fuzz_quiet(void);

/* Abort with "fuzz: what" when cond is false: a reader broke a promise. */
#define FUZZ_CHECK(cond, what) \
	((cond) ? (void)0 : fuzz_fail(__FILE__, __LINE__, (what)))
void fuzz_fail(const char *file, int line, const char *what)
    __attribute__((noreturn));

#endif
