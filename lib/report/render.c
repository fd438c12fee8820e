#include "report/render.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/util.h"
#include "io/fatal.h"

extern char **environ;

static void
release(struct kg_render *r)
{
	struct kg_render z = KG_RENDER_INIT;
	size_t i;

	free(r->dir);
	free(r->script);
	free(r->log);
	for (i = 0; i < r->n; i++) {
		free(r->tmp[i]);
		free(r->final[i]);
	}
	*r = z;
}

void
kg_render_abort(struct kg_render *r)
{
	size_t i;

	if (r->dir == NULL)
		return;
	unlink(r->script);
	unlink(r->log);
	for (i = 0; i < r->n; i++)
		unlink(r->tmp[i]);
	rmdir(r->dir);
	kg_fatal_untrack_path(r->dir);
	release(r);
}

/* Every output may be written: absent, or force and a plain file. */
static int
check_outputs(const char *const *outputs, size_t n, int force)
{
	struct stat st;
	size_t i;

	for (i = 0; i < n; i++) {
		if (lstat(outputs[i], &st) != 0)
			continue;
		if (!force) {
			kg_error("output '%s' exists; use --force to replace "
			    "it", outputs[i]);
			return -1;
		}
		if (!S_ISREG(st.st_mode)) {
			kg_error("output '%s' exists and is not a file",
			    outputs[i]);
			return -1;
		}
	}
	return 0;
}

/* The directory part of path ("." when none); a new string. */
static char *
parent_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *p;

	if (slash == NULL)
		return kg_xstrdup(".");
	if (slash == path)
		return kg_xstrdup("/");
	p = kg_xstrdup(path);
	p[slash - path] = '\0';
	return p;
}

int
kg_render_begin(struct kg_render *r, const char *const *outputs,
    const char *const *ext, size_t n, int force)
{
	struct kg_render z = KG_RENDER_INIT;
	sigset_t old;
	char *parent;
	size_t i;
	int made;

	*r = z;
	if (n == 0 || n > KG_RENDER_MAX) {
		kg_error("cannot render %zu outputs at once", n);
		return -1;
	}
	if (check_outputs(outputs, n, force) < 0)
		return -1;
	parent = parent_of(outputs[0]);
	r->dir = kg_xasprintf("%s/.kg-plot.XXXXXX", parent);
	free(parent);
	/* Made and registered with the fatal signals blocked, so that no
	 * signal comes in between; the handler of lib/io/fatal.h removes
	 * the directory and what it holds. */
	kg_fatal_block(&old);
	made = mkdtemp(r->dir) != NULL;
	if (made)
		kg_fatal_track_path(r->dir);
	kg_fatal_unblock(&old);
	if (!made) {
		kg_error_errno("cannot create a temporary directory '%s'",
		    r->dir);
		release(r);
		return -1;
	}
	r->n = n;
	r->script = kg_path_join(r->dir, "plot.gp");
	r->log = kg_path_join(r->dir, "gnuplot.log");
	for (i = 0; i < n; i++) {
		r->tmp[i] = kg_xasprintf("%s/plot-%zu.%s", r->dir, i, ext[i]);
		r->final[i] = kg_xstrdup(outputs[i]);
	}
	return 0;
}

/* The last non-empty line of gnuplot's messages (a new string, "" if
 * none), for the error message. */
static char *
last_message(const char *log)
{
	char *text = kg_read_file(log, NULL), *end, *start, *line;

	if (text == NULL)
		return kg_xstrdup("");
	end = text + strlen(text);
	while (end > text && (end[-1] == '\n' || end[-1] == ' ' ||
	    end[-1] == '\r'))
		end--;
	*end = '\0';
	start = strrchr(text, '\n');
	line = kg_xstrdup(start ? start + 1 : text);
	free(text);
	return line;
}

/* Run prog on the script; its stdout and stderr go to the log.  The exit
 * status (-1 after kg_error() when it cannot run or is killed). */
static int
run_gnuplot(const struct kg_render *r, const char *prog)
{
	posix_spawn_file_actions_t fa;
	sigset_t old;
	char *argv[3];
	pid_t pid;
	int rc, status;

	argv[0] = (char *)prog;
	argv[1] = r->script;
	argv[2] = NULL;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, r->log,
	    O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	/* Registered before a signal can come, for the handler to stop. */
	kg_fatal_block(&old);
	rc = posix_spawnp(&pid, prog, &fa, NULL, argv, environ);
	if (rc == 0)
		kg_fatal_track_child(pid);
	kg_fatal_unblock(&old);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0) {
		if (rc == ENOENT)
			kg_error("gnuplot not found ('%s'); install it "
			    "(Debian: apt-get install gnuplot-nox) or set "
			    "GNUPLOT to its path", prog);
		else {
			errno = rc;
			kg_error_errno("cannot run '%s'", prog);
		}
		return -1;
	}
	while ((rc = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
		;
	kg_fatal_untrack_child(pid);
	if (rc < 0) {
		kg_error_errno("waiting for '%s'", prog);
		return -1;
	}
	if (WIFSIGNALED(status)) {
		kg_error("'%s' was killed by signal %d", prog,
		    WTERMSIG(status));
		return -1;
	}
	return WEXITSTATUS(status);
}

/* Every picture written and not empty, synced to disk.  0 or -1. */
static int
check_pictures(const struct kg_render *r, const char *prog)
{
	struct stat st;
	size_t i;
	int fd, rc;

	for (i = 0; i < r->n; i++) {
		if (stat(r->tmp[i], &st) != 0 || st.st_size == 0) {
			char *msg = last_message(r->log);

			kg_error("'%s' wrote no picture for '%s'%s%s", prog,
			    r->final[i], *msg ? ": " : "", msg);
			free(msg);
			return -1;
		}
		fd = open(r->tmp[i], O_RDONLY | O_CLOEXEC);
		rc = fd >= 0 ? fsync(fd) : -1;
		if (fd >= 0)
			close(fd);
		if (rc != 0) {
			kg_error_errno("cannot sync '%s'", r->tmp[i]);
			return -1;
		}
	}
	return 0;
}

int
kg_render_run(struct kg_render *r, const char *script)
{
	const char *prog = getenv("GNUPLOT");
	int rc = -1, status;
	size_t i;

	if (prog == NULL || *prog == '\0')
		prog = "gnuplot";
	if (kg_write_text(r->dir, "plot.gp", script) < 0)
		goto out;
	status = run_gnuplot(r, prog);
	if (status < 0)
		goto out;
	if (status != 0) {
		char *msg = last_message(r->log);

		kg_error("'%s' failed (exit %d)%s%s", prog, status,
		    *msg ? ": " : "", msg);
		free(msg);
		goto out;
	}
	if (check_pictures(r, prog) < 0)
		goto out;
	for (i = 0; i < r->n; i++)
		if (rename(r->tmp[i], r->final[i]) != 0) {
			kg_error_errno("cannot rename '%s' to '%s'", r->tmp[i],
			    r->final[i]);
			goto out;
		}
	rc = 0;
out:
	kg_render_abort(r);
	return rc;
}
