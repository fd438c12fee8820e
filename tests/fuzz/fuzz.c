/*
 * fuzz: see fuzz.h.  The scratch directory lives under $TMPDIR (or /tmp)
 * so that parallel fuzzers, each a process, never share a file; the
 * files written are remembered and removed at exit with the directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "core/util.h"

#define MAX_NAMES 16

static char *scratch;
static char *names[MAX_NAMES];	/* files written, to remove at exit */
static size_t n_names;

/* Remove the files written and the scratch directory. */
static void
remove_scratch(void)
{
	size_t i;

	for (i = 0; i < n_names; i++) {
		char *path = kg_path_join(scratch, names[i]);

		unlink(path);
		free(path);
		free(names[i]);
	}
	n_names = 0;
	if (scratch != NULL && rmdir(scratch) != 0)
		fprintf(stderr, "fuzz: cannot remove %s: %s\n", scratch,
		    strerror(errno));
	free(scratch);
	scratch = NULL;
}

/* Remember name for remove_scratch (once). */
static void
note_name(const char *name)
{
	size_t i;

	for (i = 0; i < n_names; i++)
		if (strcmp(names[i], name) == 0)
			return;
	if (n_names == MAX_NAMES || strchr(name, '/') != NULL) {
		fprintf(stderr, "fuzz: bad scratch file name '%s'\n", name);
		abort();
	}
	names[n_names++] = kg_xstrdup(name);
}

const char *
fuzz_scratch(void)
{
	const char *tmp = getenv("TMPDIR");

	if (scratch != NULL)
		return scratch;
	scratch = kg_xasprintf("%s/kgfuzz.XXXXXX",
	    tmp != NULL && *tmp != '\0' ? tmp : "/tmp");
	if (mkdtemp(scratch) == NULL) {
		fprintf(stderr, "fuzz: cannot make %s: %s\n", scratch,
		    strerror(errno));
		abort();
	}
	atexit(remove_scratch);
	return scratch;
}

char *
fuzz_write(const char *name, const void *data, size_t size)
{
	char *path = kg_path_join(fuzz_scratch(), name);
	const char *p = data;
	int fd;

	note_name(name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0) {
		fprintf(stderr, "fuzz: cannot write %s: %s\n", path,
		    strerror(errno));
		abort();
	}
	while (size > 0) {
		ssize_t n = write(fd, p, size);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fprintf(stderr, "fuzz: cannot write %s: %s\n", path,
			    strerror(errno));
			abort();
		}
		p += n;
		size -= (size_t)n;
	}
	if (close(fd) != 0)
		abort();
	return path;
}

void
fuzz_quiet(void)
{
	kg_setprogname("kgfuzz");
	kg_error_mute(1);
}

void
fuzz_fail(const char *file, int line, const char *what)
{
	fprintf(stderr, "fuzz: %s:%d: %s\n", file, line, what);
	abort();
}
