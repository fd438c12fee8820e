/*
 * attrs_textcmd: the external text encoder of attrs_text.h, a command fed
 * the texts on its standard input and read back as float32 vectors.
 */
#include "attrs/attrs_text.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/util.h"
#include "io/fatal.h"

/* Write every text, one per line, to the file descriptor fd. */
static int
write_texts(int fd, size_t n, const char *const *docs, const size_t *lens)
{
	char buf[1 << 16];
	size_t i, j, used = 0;

	for (i = 0; i < n; i++) {
		for (j = 0; j <= lens[i]; j++) {
			char c = j == lens[i] ? '\n' : docs[i][j];

			if (j < lens[i] && (c == '\n' || c == '\r' || c == '\0'))
				c = ' ';
			buf[used++] = c;
			if (used == sizeof(buf) || (i + 1 == n && j == lens[i])) {
				size_t off = 0;

				while (off < used) {
					ssize_t w = write(fd, buf + off,
					    used - off);

					if (w < 0 && errno == EINTR)
						continue;
					if (w < 0)
						return -1;
					off += (size_t)w;
				}
				used = 0;
			}
		}
	}
	return 0;
}

/*
 * Start "sh -c cmd" reading fd and writing into *out_fd, as the leader of
 * its own process group, registered with lib/io/fatal.h before any fatal
 * signal can come: a signal to the tool then stops the command and
 * everything it started instead of leaving them running.  The child's pid
 * (its group), or -1 after kg_error().
 */
static pid_t
spawn(const char *cmd, int fd, int *out_fd)
{
	sigset_t old;
	int pfd[2];
	pid_t pid;

	if (pipe(pfd) < 0) {
		kg_error_errno("pipe");
		return -1;
	}
	fflush(NULL);
	kg_fatal_block(&old);
	pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		kg_fatal_unblock(&old);
		dup2(fd, 0);
		dup2(pfd[1], 1);
		close(fd);
		close(pfd[0]);
		close(pfd[1]);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	if (pid > 0) {
		setpgid(pid, pid);	/* either side may run first */
		kg_fatal_track_child(pid);
	}
	kg_fatal_unblock(&old);
	close(pfd[1]);
	if (pid < 0) {
		kg_error_errno("fork");
		close(pfd[0]);
		return -1;
	}
	*out_fd = pfd[0];
	return pid;
}

/* Read up to want bytes; the count read (short at end of input or on a
 * read error). */
static size_t
read_upto(int fd, char *buf, size_t want)
{
	size_t got = 0;
	ssize_t r;

	while (got < want) {
		r = read(fd, buf + got, want - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	return got;
}

/* The command's exit status as an error; 0 when it exited with 0. */
static int
check_status(const char *cmd, int status)
{
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFEXITED(status))
		kg_error("text command '%s' exited with status %d", cmd,
		    WEXITSTATUS(status));
	else
		kg_error("text command '%s' was killed by signal %d", cmd,
		    WTERMSIG(status));
	return -1;
}

/*
 * Read the command's output and wait for it.  A command that writes more
 * than expected is stopped (its whole group) rather than waited for, so
 * it cannot hold the tool; one that closed its output early is waited
 * for and its exit status reported first.
 */
static int
collect(const char *cmd, pid_t pid, int rfd, uint32_t dim, size_t n,
    float *out)
{
	size_t want = n * dim * sizeof(float), got;
	int status = 0, rc = -1;
	char extra;
	ssize_t r = 0;

	got = read_upto(rfd, (char *)out, want);
	if (got == want)
		while ((r = read(rfd, &extra, 1)) < 0 && errno == EINTR)
			;
	close(rfd);
	if (r != 0) {
		kg_fatal_stop_child(pid);
		if (r > 0)
			kg_error("text command '%s' wrote more than the %zu "
			    "bytes expected (%zu texts x %u float32)", cmd,
			    want, n, dim);
		else
			kg_error_errno("cannot read from text command '%s'",
			    cmd);
		goto out;
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (check_status(cmd, status) < 0)
		goto out;
	if (got < want) {
		kg_error("text command '%s' wrote %zu bytes, expected %zu "
		    "(%zu texts x %u float32)", cmd, got, want, n, dim);
		goto out;
	}
	rc = 0;
out:
	kg_fatal_untrack_child(pid);
	return rc;
}

int
kg_text_command(const char *cmd, uint32_t dim, size_t n,
    const char *const *docs, const size_t *lens, float *out)
{
	char path[] = "/tmp/kg-attrs-texts.XXXXXX";
	const char *tmpdir = getenv("TMPDIR");
	char *tpath;
	int fd, rfd, rc = -1;
	size_t i;
	pid_t pid;

	tpath = tmpdir != NULL && *tmpdir != '\0' ?
	    kg_xasprintf("%s/kg-attrs-texts.XXXXXX", tmpdir) :
	    kg_xstrdup(path);
	fd = mkstemp(tpath);
	if (fd < 0) {
		kg_error_errno("cannot create a temporary file '%s'", tpath);
		free(tpath);
		return -1;
	}
	unlink(tpath);
	if (write_texts(fd, n, docs, lens) < 0 ||
	    lseek(fd, 0, SEEK_SET) < 0) {
		kg_error_errno("cannot write the texts for the text command");
		goto out;
	}
	pid = spawn(cmd, fd, &rfd);
	if (pid < 0 || collect(cmd, pid, rfd, dim, n, out) < 0)
		goto out;
	for (i = 0; i < n * dim; i++)
		if (!isfinite(out[i])) {
			kg_error("text command '%s': value %zu of text %zu is "
			    "not finite", cmd, i % dim, i / dim + 1);
			goto out;
		}
	rc = 0;
out:
	close(fd);
	free(tpath);
	return rc;
}
