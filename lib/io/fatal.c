#include "io/fatal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/util.h"

#define MAX_PATHS 8
#define MAX_CHILDREN 4

/*
 * The handler reads these; they are written outside it, the name to
 * remove last, so the handler never sees a path without its second name.
 * Each path is a string of our own that is freed only after its slot was
 * cleared.
 */
static char *volatile paths[MAX_PATHS];
static char *volatile dead[MAX_PATHS];
static volatile pid_t children[MAX_CHILDREN];
static int installed;

static const int fatal_sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };

/*
 * Remove name (relative to dirfd) and, for a directory, what it holds.
 * Each level keeps one small buffer on the stack, so the depth is bounded.
 * A directory is read again after a pass that removed something, in case
 * the removals moved entries behind the reading position.
 */
static int
rm_at(int dirfd, const char *name, int depth)
{
	char buf[1024] __attribute__((aligned(8)));
	int fd, rc = 0, removed;
	ssize_t n, off;

	if (unlinkat(dirfd, name, 0) == 0 || errno == ENOENT)
		return 0;
	if ((errno != EISDIR && errno != EPERM) || depth >= KG_FATAL_MAX_DEPTH)
		return -1;
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd < 0)
		return -1;
	do {
		removed = 0;
		while ((n = getdents64(fd, buf, sizeof(buf))) > 0) {
			for (off = 0; off < n;) {
				struct dirent64 *e = (void *)(buf + off);

				off += e->d_reclen;
				if (strcmp(e->d_name, ".") == 0 ||
				    strcmp(e->d_name, "..") == 0)
					continue;
				if (rm_at(fd, e->d_name, depth + 1) == 0)
					removed = 1;
				else
					rc = -1;
			}
		}
		if (n < 0)
			rc = -1;
	} while (removed && rc == 0 && lseek(fd, 0, SEEK_SET) == 0);
	close(fd);
	if (unlinkat(dirfd, name, AT_REMOVEDIR) != 0 && errno != ENOENT)
		rc = -1;
	return rc;
}

int
kg_fatal_rmtree(const char *path)
{
	return rm_at(AT_FDCWD, path, 0);
}

void
kg_fatal_stop_child(pid_t pgid)
{
	const struct timespec tick = { 0, 10 * 1000 * 1000 };
	int status, i;
	pid_t r;

	if (pgid <= 0)
		return;
	if (kill(-pgid, SIGTERM) != 0)
		kill(pgid, SIGTERM);
	for (i = 0; i < 200; i++) {
		r = waitpid(pgid, &status, WNOHANG);
		if (r == pgid || (r < 0 && errno != EINTR))
			return;
		nanosleep(&tick, NULL);
	}
	if (kill(-pgid, SIGKILL) != 0)
		kill(pgid, SIGKILL);
	while (waitpid(pgid, &status, 0) < 0 && errno == EINTR)
		;
}

static void
on_signal(int sig)
{
	int i;

	for (i = 0; i < MAX_CHILDREN; i++)
		if (children[i] > 0)
			kg_fatal_stop_child(children[i]);
	for (i = 0; i < MAX_PATHS; i++) {
		const char *p = paths[i], *d = dead[i];

		if (p == NULL)
			continue;
		if (d != NULL && rename(p, d) == 0)
			p = d;
		(void)rm_at(AT_FDCWD, p, 0);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static void
install(void)
{
	size_t i;

	if (installed)
		return;
	for (i = 0; i < KG_ARRAY_LEN(fatal_sigs); i++) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sigaction(fatal_sigs[i], NULL, &sa);
		if (sa.sa_handler == SIG_IGN)
			continue;	/* respect nohup and friends */
		sa.sa_handler = on_signal;
		sigemptyset(&sa.sa_mask);
		sa.sa_flags = 0;
		sigaction(fatal_sigs[i], &sa, NULL);
	}
	installed = 1;
}

void
kg_fatal_track_path(const char *path)
{
	int i;

	install();
	for (i = 0; i < MAX_PATHS; i++)
		if (paths[i] == NULL) {
			dead[i] = kg_xasprintf("%s.dead", path);
			paths[i] = kg_xstrdup(path);
			return;
		}
}

void
kg_fatal_untrack_path(const char *path)
{
	int i;

	for (i = 0; i < MAX_PATHS; i++) {
		char *p = paths[i], *d = dead[i];

		if (p == NULL || strcmp(p, path) != 0)
			continue;
		paths[i] = NULL;
		dead[i] = NULL;
		free(p);
		free(d);
		return;
	}
}

void
kg_fatal_track_child(pid_t pgid)
{
	int i;

	install();
	for (i = 0; i < MAX_CHILDREN; i++)
		if (children[i] <= 0) {
			children[i] = pgid;
			return;
		}
}

void
kg_fatal_untrack_child(pid_t pgid)
{
	int i;

	for (i = 0; i < MAX_CHILDREN; i++)
		if (children[i] == pgid) {
			children[i] = 0;
			return;
		}
}

void
kg_fatal_block(sigset_t *old)
{
	sigset_t set;
	size_t i;

	sigemptyset(&set);
	for (i = 0; i < KG_ARRAY_LEN(fatal_sigs); i++)
		sigaddset(&set, fatal_sigs[i]);
	pthread_sigmask(SIG_BLOCK, &set, old);
}

void
kg_fatal_unblock(const sigset_t *old)
{
	pthread_sigmask(SIG_SETMASK, old, NULL);
}
