/*
 * ship: files carried between ranks' disks over MPI; see ship.h.
 */
#include "dist/ship.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"
#include "io/outdir.h"

/* A file's size travels first; this one means "absent". */
#define ABSENT UINT64_MAX

/* Tags of the size and bytes messages of file i (below 2^20). */
#define TAG_SIZE(i) ((int)(2 * (i) + 1))
#define TAG_DATA(i) ((int)(2 * (i) + 2))

/* The directories above path's last component, made as needed. */
static int
make_parents(const char *path)
{
	char *p = kg_xstrdup(path), *s;
	int rc = 0;

	for (s = strchr(p + 1, '/'); s != NULL && rc == 0;
	    s = strchr(s + 1, '/')) {
		*s = '\0';
		if (mkdir(p, 0777) != 0 && errno != EEXIST) {
			kg_error_errno("cannot create '%s'", p);
			rc = -1;
		}
		*s = '/';
	}
	free(p);
	return rc;
}

static int
write_bytes(const char *path, const char *x, size_t len)
{
	FILE *f;

	if (make_parents(path) < 0)
		return -1;
	f = fopen(path, "wb");

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

/* Every regular file below dir/rel, as paths relative to dir, appended
 * to names (sorted within each directory). */
static int
list_tree(const char *dir, const char *rel, char ***names, size_t *n,
    size_t *cap)
{
	char *path = rel[0] ? kg_path_join(dir, rel) : kg_xstrdup(dir);
	struct dirent **ents;
	int k, m, rc = 0;

	m = scandir(path, &ents, NULL, alphasort);
	if (m < 0) {
		kg_error_errno("cannot list '%s'", path);
		free(path);
		return -1;
	}
	for (k = 0; k < m; k++) {
		const char *e = ents[k]->d_name;
		char *sub, *full;
		struct stat sb;

		if (rc < 0 || strcmp(e, ".") == 0 || strcmp(e, "..") == 0) {
			free(ents[k]);
			continue;
		}
		sub = rel[0] ? kg_path_join(rel, e) : kg_xstrdup(e);
		full = kg_path_join(dir, sub);
		if (stat(full, &sb) != 0) {
			kg_error_errno("cannot read '%s'", full);
			rc = -1;
		} else if (S_ISDIR(sb.st_mode)) {
			rc = list_tree(dir, sub, names, n, cap);
		} else if (S_ISREG(sb.st_mode)) {
			if (*n == *cap) {
				*cap = *cap ? 2 * *cap : 64;
				*names = kg_xreallocarray(*names, *cap,
				    sizeof(**names));
			}
			(*names)[(*n)++] = sub;
			sub = NULL;
		}
		free(sub);
		free(full);
		free(ents[k]);
	}
	free(ents);
	free(path);
	return rc;
}

/* Rank 0's file list of dir to every rank: names NUL-separated. */
static int
share_list(struct kg_dist *d, const char *dir, char ***names, size_t *n)
{
	struct kg_strbuf b = { 0 };
	uint64_t len = 0, ok = 1;
	size_t cap = 0, i;
	char *p, *q;

	*names = NULL;
	*n = 0;
	if (d->rank == 0) {
		ok = list_tree(dir, "", names, n, &cap) == 0;
		for (i = 0; ok && i < *n; i++) {
			kg_strbuf_add(&b, (*names)[i]);
			kg_strbuf_add(&b, "\n");
		}
		len = b.len;
	}
	kg_dist_bcast(d, &ok, sizeof(ok), 0);
	if (!ok) {
		free(b.s);
		return -1;
	}
	kg_dist_bcast(d, &len, sizeof(len), 0);
	if (d->rank != 0) {
		b.s = kg_xmalloc(len + 1);
		b.s[len] = '\0';
	}
	kg_dist_bcast(d, b.s, len, 0);
	if (d->rank != 0)
		for (p = b.s; p < b.s + len; p = q + 1) {
			q = strchr(p, '\n');
			*q = '\0';
			if (*n == cap) {
				cap = cap ? 2 * cap : 64;
				*names = kg_xreallocarray(*names, cap,
				    sizeof(**names));
			}
			(*names)[(*n)++] = kg_xstrdup(p);
		}
	free(b.s);
	return 0;
}

int
kg_dist_ship_trees(struct kg_dist *d, const char *const *dirs, size_t n,
    int (*keep)(size_t i, const char *rel, int rank), char **local,
    char **out)
{
	uint64_t bad = 0;
	size_t i, j, m, k;
	char **names;
	const char **sel;
	int r;

	*local = NULL;
	for (i = 0; i < n; i++)
		out[i] = NULL;
	if (d->rank != 0 && d->size > 1 &&
	    (*local = kg_dist_local_tmpdir()) == NULL)
		bad = 1;
	kg_dist_max_u64(d, &bad, 1);
	if (bad)
		goto fail;
	for (i = 0; i < n; i++) {
		if (dirs[i] == NULL)
			continue;
		out[i] = d->rank == 0 ? kg_xstrdup(dirs[i]) :
		    kg_xasprintf("%s/in%zu", *local, i);
		if (d->size == 1)
			continue;
		if (share_list(d, dirs[i], &names, &m) < 0) {
			bad = 1;
			break;
		}
		sel = kg_xcalloc(m + 1, sizeof(*sel));
		for (r = 1; r < d->size; r++) {
			for (j = k = 0; j < m; j++)
				if (keep == NULL || keep(i, names[j], r))
					sel[k++] = names[j];
			if ((d->rank == 0 || d->rank == r) &&
			    kg_dist_ship_files(d, 0, r, dirs[i], out[i], sel, k,
			    0) < 0)
				bad = 1;
		}
		free(sel);
		for (j = 0; j < m; j++)
			free(names[j]);
		free(names);
	}
	kg_dist_max_u64(d, &bad, 1);
	if (!bad)
		return 0;
fail:
	for (i = 0; i < n; i++) {
		free(out[i]);
		out[i] = NULL;
	}
	if (*local != NULL) {
		kg_rmtree(*local);
		free(*local);
		*local = NULL;
	}
	return -1;
}

/* The list of a tree travels from "from" to "to" under this tag, which
 * no file's messages use. */
#define TAG_LIST 0

int
kg_dist_ship_tree(struct kg_dist *d, int from, int to, const char *src,
    const char *dst)
{
	struct kg_strbuf b = { 0 };
	struct kg_dist_xfer xf;
	uint64_t len = ABSENT;
	size_t n = 0, cap = 0, i;
	char **names = NULL, *p, *q;
	int rc = 0;

	if (from == to || (d->rank != from && d->rank != to))
		return 0;
	if (d->rank == from) {
		if (list_tree(src, "", &names, &n, &cap) == 0) {
			for (i = 0; i < n; i++) {
				kg_strbuf_add(&b, names[i]);
				kg_strbuf_add(&b, "\n");
			}
			len = b.len;
		} else {
			rc = -1;
		}
	}
	xf = (struct kg_dist_xfer){ &len, sizeof(len), d->rank == from ? to :
	    from, TAG_LIST, d->rank == from };
	kg_dist_exchange(d, &xf, 1);
	if (len == ABSENT)
		goto out;
	if (d->rank == to) {
		b.s = kg_xmalloc(len + 1);
		b.s[len] = '\0';
	}
	if (len > 0) {
		xf = (struct kg_dist_xfer){ b.s, len, d->rank == from ? to :
		    from, TAG_LIST, d->rank == from };
		kg_dist_exchange(d, &xf, 1);
	}
	if (d->rank == to)
		for (p = b.s; p < b.s + len; p = q + 1) {
			q = strchr(p, '\n');
			*q = '\0';
			if (n == cap) {
				cap = cap ? 2 * cap : 64;
				names = kg_xreallocarray(names, cap,
				    sizeof(*names));
			}
			names[n++] = kg_xstrdup(p);
		}
	rc = kg_dist_ship_files(d, from, to, src, dst,
	    (const char *const *)names, n, 0);
out:
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(b.s);
	return rc;
}
