#include "io/outdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"

/*
 * Temporary directories to remove if a fatal signal arrives.  A tool has
 * one or two output directories at a time; a small fixed table avoids
 * allocation in the handler.
 */
#define MAX_ACTIVE 8
static char *volatile active[MAX_ACTIVE];
/* A second name for each, prepared outside the handler. */
static char *volatile dead[MAX_ACTIVE];
static int handlers_installed;

/*
 * The signal may run in one thread while another still writes into the
 * temporary.  Renaming it first makes every later create by path fail,
 * so the removal cannot race with a writer that adds a file behind
 * readdir's back.
 */
static void
on_signal(int sig)
{
	int i;

	for (i = 0; i < MAX_ACTIVE; i++) {
		if (active[i] == NULL)
			continue;
		if (rename(active[i], dead[i]) == 0)
			kg_rmtree(dead[i]);
		else
			kg_rmtree(active[i]);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static void
track(char *path)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };
	size_t i;

	if (!handlers_installed) {
		for (i = 0; i < KG_ARRAY_LEN(sigs); i++) {
			struct sigaction sa;

			memset(&sa, 0, sizeof(sa));
			sigaction(sigs[i], NULL, &sa);
			if (sa.sa_handler == SIG_IGN)
				continue;	/* respect nohup and friends */
			sa.sa_handler = on_signal;
			sigemptyset(&sa.sa_mask);
			sa.sa_flags = 0;
			sigaction(sigs[i], &sa, NULL);
		}
		handlers_installed = 1;
	}
	for (i = 0; i < MAX_ACTIVE; i++)
		if (active[i] == NULL) {
			dead[i] = kg_xasprintf("%s.dead", path);
			active[i] = path;
			return;
		}
}

static void
untrack(const char *path)
{
	int i;

	for (i = 0; i < MAX_ACTIVE; i++)
		if (active[i] == path) {
			active[i] = NULL;
			free(dead[i]);
			dead[i] = NULL;
		}
}

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
		char buf[4096];

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if ((size_t)snprintf(buf, sizeof(buf), "%s/%s", path,
		    e->d_name) >= sizeof(buf)) {
			rc = -1;
			continue;
		}
		if (kg_rmtree(buf) != 0)
			rc = -1;
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

int
kg_outdir_begin(struct kg_outdir *od, const char *path, int force)
{
	struct kg_outdir z = KG_OUTDIR_INIT;
	struct stat st;
	char *parent, *base;

	*od = z;
	if (path == NULL || *path == '\0') {
		kg_error("empty output path");
		return -1;
	}
	if (lstat(path, &st) == 0) {
		if (!force) {
			kg_error("output '%s' exists; use --force to replace "
			    "it", path);
			return -1;
		}
		if (!S_ISDIR(st.st_mode)) {
			kg_error("output '%s' exists and is not a directory",
			    path);
			return -1;
		}
	}
	split_path(path, &parent, &base);
	if (stat(parent, &st) != 0 || !S_ISDIR(st.st_mode)) {
		kg_error_errno("output parent '%s' is not a directory", parent);
		free(parent);
		free(base);
		return -1;
	}
	od->final = kg_xstrdup(path);
	od->tmp = kg_xasprintf("%s/.%s.tmp.%ld", parent, base, (long)getpid());
	free(parent);
	free(base);
	od->force = force;
	kg_rmtree(od->tmp);	/* a leftover of a killed run with our PID */
	/* Tracked before it exists, so no signal can come in between. */
	track(od->tmp);
	if (mkdir(od->tmp, 0755) != 0) {
		kg_error_errno("cannot create '%s'", od->tmp);
		untrack(od->tmp);
		free(od->final);
		free(od->tmp);
		*od = z;
		return -1;
	}
	od->active = 1;
	return 0;
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

	untrack(od->tmp);
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
