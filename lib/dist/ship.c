/*
 * ship: files carried between ranks' disks over MPI; see ship.h.
 */
#include "dist/ship.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/util.h"

/* A file's size travels first; this one means "absent". */
#define ABSENT UINT64_MAX

/* Tags of the size and bytes messages of file i (below 2^20). */
#define TAG_SIZE(i) ((int)(2 * (i) + 1))
#define TAG_DATA(i) ((int)(2 * (i) + 2))

static int
write_bytes(const char *path, const char *x, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (f == NULL) {
		kg_error_errno("cannot create '%s'", path);
		return -1;
	}
	if ((len > 0 && fwrite(x, 1, len, f) != len) || fflush(f) != 0) {
		kg_error_errno("cannot write '%s'", path);
		fclose(f);
		unlink(path);
		return -1;
	}
	if (fclose(f) != 0) {
		kg_error_errno("cannot write '%s'", path);
		unlink(path);
		return -1;
	}
	return 0;
}

static int
send_one(struct kg_dist *d, int to, const char *src, const char *name,
    size_t i, int optional)
{
	char *path = kg_path_join(src, name), *x = NULL;
	uint64_t len = ABSENT;
	struct kg_dist_xfer xf;
	size_t got = 0;
	int rc = 0;

	if (access(path, F_OK) == 0 || !optional) {
		x = kg_read_file(path, &got);
		if (x == NULL)
			rc = -1;
		else
			len = got;
	}
	xf = (struct kg_dist_xfer){ &len, sizeof(len), to, TAG_SIZE(i), 1 };
	kg_dist_exchange(d, &xf, 1);
	if (len != ABSENT && len > 0) {
		xf = (struct kg_dist_xfer){ x, len, to, TAG_DATA(i), 1 };
		kg_dist_exchange(d, &xf, 1);
	}
	free(x);
	free(path);
	return rc;
}

static int
recv_one(struct kg_dist *d, int from, const char *dst, const char *name,
    size_t i, int ok)
{
	uint64_t len = 0;
	struct kg_dist_xfer xf = { &len, sizeof(len), from, TAG_SIZE(i), 0 };
	char *x, *path;
	int rc = 0;

	kg_dist_exchange(d, &xf, 1);
	if (len == ABSENT)
		return 0;
	x = kg_xmalloc(len ? len : 1);
	if (len > 0) {
		xf = (struct kg_dist_xfer){ x, len, from, TAG_DATA(i), 0 };
		kg_dist_exchange(d, &xf, 1);
	}
	path = kg_path_join(dst, name);
	if (ok)
		rc = write_bytes(path, x, len);
	free(path);
	free(x);
	return rc;
}

int
kg_dist_ship_files(struct kg_dist *d, int from, int to, const char *src,
    const char *dst, const char *const *names, size_t n, int optional)
{
	size_t i;
	int rc = 0;

	if (from == to || (d->rank != from && d->rank != to))
		return 0;
	for (i = 0; i < n; i++) {
		/* Carry on after a failure, so the peer is not left waiting
		 * for a message that never comes. */
		int r = d->rank == from ? send_one(d, to, src, names[i], i,
		    optional) : recv_one(d, from, dst, names[i], i, rc == 0);

		if (r < 0)
			rc = -1;
	}
	return rc;
}

char *
kg_dist_local_tmpdir(void)
{
	const char *t = getenv("TMPDIR");
	char *path = kg_xasprintf("%s/kgpipe-ship.XXXXXX",
	    t != NULL && *t != '\0' ? t : "/tmp");

	if (mkdtemp(path) == NULL) {
		kg_error_errno("cannot make a directory like '%s'", path);
		free(path);
		return NULL;
	}
	return path;
}
