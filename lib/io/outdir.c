#include "io/outdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"
#include "io/fatal.h"

static int fsync_path(const char *path, int dir);

int
kg_rmtree(const char *path)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	int rc = 0;

	if (lstat(path, &st) != 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlink(path);
	d = opendir(path);
	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		char *sub;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		sub = kg_path_join(path, e->d_name);
		if (kg_rmtree(sub) != 0)
			rc = -1;
		free(sub);
	}
	closedir(d);
	if (rmdir(path) != 0)
		rc = -1;
	return rc;
}

/* Split "path" into the parent directory and the base name. */
static void
split_path(const char *path, char **parent, char **base)
{
	char *copy = kg_xstrdup(path);
	size_t len = strlen(copy);
	char *slash;

	while (len > 1 && copy[len - 1] == '/')
		copy[--len] = '\0';
	slash = strrchr(copy, '/');
	if (slash == NULL) {
		*parent = kg_xstrdup(".");
		*base = copy;
	} else {
		*base = kg_xstrdup(slash + 1);
		if (slash == copy)
			slash[1] = '\0';
		else
			*slash = '\0';
		*parent = copy;
	}
}

/*
 * A temporary or an aside copy of output "base" left by a process that no
 * longer exists: ".BASE.tmp.PID", ".BASE.tmp.PID.dead" (renamed by the
 * signal handler) or ".BASE.old.PID".  Returns the PID, or 0 when the name
 * does not have exactly this form; *old tells the aside copy.
 */
static long
stale_pid(const char *name, const char *base, int *old)
{
	size_t bl = strlen(base);
	const char *p;
	char *end;
	long pid;

	if (name[0] != '.' || strncmp(name + 1, base, bl) != 0)
		return 0;
	p = name + 1 + bl;
	if (strncmp(p, ".tmp.", 5) == 0)
		*old = 0;
	else if (strncmp(p, ".old.", 5) == 0)
		*old = 1;
	else
		return 0;
	p += 5;
	if (*p < '1' || *p > '9')
		return 0;
	errno = 0;
	pid = strtol(p, &end, 10);
	if (errno != 0 || pid <= 0 || (pid_t)pid != pid)
		return 0;
	if (*end == '\0' || (!*old && strcmp(end, ".dead") == 0))
		return pid;
	return 0;
}

/*
 * Remove what killed runs left next to "final" (git removes stale lock
 * files the same way): only names of the exact forms above whose PID no
 * longer exists (kill(pid, 0) fails with ESRCH).  An aside copy is the
 * old output of a run killed between its two renames; when the output is
 * missing it is put back rather than removed.
 */
static void
remove_stale(const char *parent, const char *base, const char *final)
{
	DIR *d = opendir(parent);
	struct dirent *e;

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		int old = 0;
		long pid = stale_pid(e->d_name, base, &old);
		char *p;

		if (pid == 0 || pid == (long)getpid() ||
		    kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		p = kg_path_join(parent, e->d_name);
		if (old && !kg_path_exists(final) && rename(p, final) == 0)
			kg_warn("restored '%s' from '%s', left by process %ld "
			    "that ended while replacing it", final, p, pid);
		else if (kg_rmtree(p) != 0)
			kg_warn("cannot remove stale temporary '%s'", p);
		free(p);
	}
	closedir(d);
}

/*
 * The checks both kinds of output share: a path, a parent directory,
 * stale temporaries removed, and an existing output only with force (and
 * then of the same kind).  *parent and *base are new strings on success.
 */
static int
prepare(const char *path, int force, int want_dir, char **parent,
    char **base)
{
	struct stat st;

	if (path == NULL || *path == '\0') {
		kg_error("empty output path");
		return -1;
	}
	split_path(path, parent, base);
	if (stat(*parent, &st) != 0) {
		kg_error_errno("output parent '%s' is not a directory",
		    *parent);
		goto fail;
	}
	if (!S_ISDIR(st.st_mode)) {
		kg_error("output parent '%s' is not a directory", *parent);
		goto fail;
	}
	remove_stale(*parent, *base, path);
	if (lstat(path, &st) == 0) {
		if (!force) {
			kg_error("output '%s' exists; use --force to replace "
			    "it", path);
			goto fail;
		}
		if (want_dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)) {
			kg_error("output '%s' exists and is not a %s", path,
			    want_dir ? "directory" : "regular file");
			goto fail;
		}
	}
	return 0;
fail:
	free(*parent);
	free(*base);
	return -1;
}

int
kg_outdir_begin(struct kg_outdir *od, const char *path, int force)
{
	struct kg_outdir z = KG_OUTDIR_INIT;
	char *parent, *base;

	*od = z;
	if (prepare(path, force, 1, &parent, &base) < 0)
		return -1;
	od->final = kg_xstrdup(path);
	od->tmp = kg_xasprintf("%s/.%s.tmp.%ld", parent, base, (long)getpid());
	free(parent);
	free(base);
	od->force = force;
	kg_rmtree(od->tmp);	/* a leftover of a killed run with our PID */
	/* Tracked before it exists, so no signal can come in between. */
	kg_fatal_track_path(od->tmp);
	if (mkdir(od->tmp, 0755) != 0) {
		kg_error_errno("cannot create '%s'", od->tmp);
		kg_fatal_untrack_path(od->tmp);
		free(od->final);
		free(od->tmp);
		*od = z;
		return -1;
	}
	od->active = 1;
	return 0;
}

static int
write_fd(int fd, const char *p, size_t len)
{
	while (len > 0) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

int
kg_outdir_write_file(const char *path, int force, const void *data,
    size_t len)
{
	char *parent, *base, *tmp;
	int fd, rc = -1;

	if (prepare(path, force, 0, &parent, &base) < 0)
		return -1;
	tmp = kg_xasprintf("%s/.%s.tmp.%ld", parent, base, (long)getpid());
	unlink(tmp);		/* a leftover of a killed run with our PID */
	kg_fatal_track_path(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		kg_error_errno("cannot create '%s'", tmp);
		goto out;
	}
	if (write_fd(fd, data, len) < 0 || fsync(fd) < 0) {
		kg_error_errno("cannot write '%s'", tmp);
		close(fd);
		unlink(tmp);
		goto out;
	}
	if (close(fd) < 0 || rename(tmp, path) < 0) {
		kg_error_errno("cannot write '%s'", path);
		unlink(tmp);
		goto out;
	}
	fsync_path(parent, 1);
	rc = 0;
out:
	kg_fatal_untrack_path(tmp);
	free(tmp);
	free(parent);
	free(base);
	return rc;
}

char *
kg_outdir_file(const struct kg_outdir *od, const char *name)
{
	return kg_path_join(od->tmp, name);
}

int
kg_outdir_mkdir(const struct kg_outdir *od, const char *name)
{
	char *p = kg_path_join(od->tmp, name);
	int rc = mkdir(p, 0755);

	if (rc != 0)
		kg_error_errno("cannot create '%s'", p);
	free(p);
	return rc == 0 ? 0 : -1;
}

static int
fsync_path(const char *path, int dir)
{
	int fd = open(path, (dir ? O_RDONLY | O_DIRECTORY : O_RDONLY) |
	    O_CLOEXEC);
	int rc;

	if (fd < 0)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

/* fsync every file and directory below path (files first). */
static int
fsync_tree(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int rc = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		struct stat st;
		char *p;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		p = kg_path_join(path, e->d_name);
		if (lstat(p, &st) == 0) {
			if (S_ISDIR(st.st_mode))
				rc |= fsync_tree(p);
			else if (S_ISREG(st.st_mode))
				rc |= fsync_path(p, 0);
		}
		free(p);
	}
	closedir(d);
	return rc | fsync_path(path, 1);
}

static void
release(struct kg_outdir *od)
{
	struct kg_outdir z = KG_OUTDIR_INIT;

	if (od->tmp != NULL)
		kg_fatal_untrack_path(od->tmp);
	free(od->final);
	free(od->tmp);
	*od = z;
}

int
kg_outdir_commit(struct kg_outdir *od)
{
	char *parent, *base, *old = NULL;
	int rc = -1;

	if (!od->active) {
		kg_error("output directory was not started");
		return -1;
	}
	if (fsync_tree(od->tmp) != 0) {
		kg_error_errno("cannot sync '%s'", od->tmp);
		kg_outdir_abort(od);
		return -1;
	}
	split_path(od->final, &parent, &base);
	if (kg_path_exists(od->final)) {
		if (!od->force) {
			kg_error("output '%s' appeared while we worked; use "
			    "--force to replace it", od->final);
			goto out;
		}
		/* Move the old one aside so the swap is two renames. */
		old = kg_xasprintf("%s/.%s.old.%ld", parent, base,
		    (long)getpid());
		kg_rmtree(old);
		if (rename(od->final, old) != 0) {
			kg_error_errno("cannot move old '%s' aside", od->final);
			goto out;
		}
	}
	if (rename(od->tmp, od->final) != 0) {
		kg_error_errno("cannot rename '%s' to '%s'", od->tmp,
		    od->final);
		if (old)
			rename(old, od->final);
		goto out;
	}
	fsync_path(parent, 1);
	if (old && kg_rmtree(old) != 0)
		kg_warn("cannot remove old output '%s'", old);
	rc = 0;
out:
	free(parent);
	free(base);
	free(old);
	if (rc == 0)
		release(od);
	else
		kg_outdir_abort(od);
	return rc;
}

void
kg_outdir_abort(struct kg_outdir *od)
{
	if (od->active && od->tmp)
		kg_rmtree(od->tmp);
	if (od->tmp || od->final)
		release(od);
}
