#include "io/fatal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/util.h"

#define MAX_PATHS 8
#define MAX_CHILDREN 4
#define SLOT_LEN 4096		/* a path and its NUL */
#define DEAD_SUFFIX ".dead"

/*
 * The tables the handler reads.  A path lives in a slot's own buffers,
 * which are never freed, and the slot's state says whether the handler
 * may read them: FREE, BUSY (being written, skipped) or LIVE.  The state
 * is written last when a slot is filled and first when it is emptied, so
 * the handler never reads a half-written path.  Once a handler has begun
 * ("dying"), no slot is filled again, so a path the handler is reading
 * cannot be overwritten under it even from another thread.
 */
enum { SLOT_FREE, SLOT_BUSY, SLOT_LIVE };

struct path_slot {
	atomic_int state;
	char path[SLOT_LEN];
	char dead[SLOT_LEN + sizeof(DEAD_SUFFIX)];
};

static struct path_slot slots[MAX_PATHS];
static atomic_int children[MAX_CHILDREN];
static atomic_int dying;
static atomic_int installed;
/* The line the handler prints first (kg_fatal_set_note); note_len 0:
 * none.  Changed only by the owner with the fatal signals blocked. */
static char note[1024];
static atomic_int note_len;
static pthread_t owner;		/* the thread that cleans up */

static const int fatal_sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };

/* The mapped inputs a SIGBUS may come from (kg_fatal_watch_map), each
 * with the line the handler prints for it; a slot's state is FREE, BUSY
 * or LIVE as a path slot's is, so the handler reads only whole entries. */
struct map_slot {
	atomic_int state;
	uintptr_t lo, hi;
	char line[1200];
	size_t line_len;
};

static struct map_slot maps[KG_FATAL_MAX_MAPS];
static atomic_int bus_installed;

_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "the handler needs lock-free "
    "atomics");

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

/* Stop the children and remove the temporaries (the handler's work). */
static void
clean_up(void)
{
	int i;

	for (i = 0; i < MAX_CHILDREN; i++) {
		pid_t c = (pid_t)atomic_load(&children[i]);

		if (c > 0)
			kg_fatal_stop_child(c);
	}
	for (i = 0; i < MAX_PATHS; i++) {
		struct path_slot *s = &slots[i];
		const char *p = s->path;

		if (atomic_load(&s->state) != SLOT_LIVE)
			continue;
		if (rename(p, s->dead) == 0)
			p = s->dead;
		(void)rm_at(AT_FDCWD, p, 0);
	}
}

/*
 * Every fatal signal is blocked while this runs (sa_mask), so a second one
 * waits instead of entering it again.  A signal that lands on another
 * thread (an OpenMP worker or the store's I/O thread, when they did not
 * block it) is sent on to the owner, the thread that registers: it blocks
 * these signals while it changes the tables, so the clean-up never runs
 * beside a half-done registration.
 */
static void
on_signal(int sig)
{
	int saved = errno;

	if (!pthread_equal(pthread_self(), owner)) {
		pthread_kill(owner, sig);
		errno = saved;
		return;
	}
	atomic_store(&dying, 1);
	if (atomic_load(&note_len) > 0)
		(void)!write(STDERR_FILENO, note, (size_t)atomic_load(&note_len));
	clean_up();
	/* Still blocked here: it arrives with the default action once the
	 * handler returns and the mask is restored. */
	signal(sig, SIG_DFL);
	raise(sig);
	errno = saved;
}

/*
 * OpenMP workers inherit the mask of the thread that creates them, and
 * keep theirs across parallel regions: block the fatal signals in every
 * worker of the pool now, creating the pool at the larger of the default
 * team size and the number of processors (teams up to that size reuse
 * these threads).  A worker created later for a larger team does not
 * have them blocked; its signal is sent on to the owner (on_signal).
 */
static void
block_in_workers(void)
{
	int n = omp_get_max_threads();
	sigset_t old;

	if (n < omp_get_num_procs())
		n = omp_get_num_procs();
	kg_fatal_block(&old);
#pragma omp parallel num_threads(n)
	{
		sigset_t set;
		size_t i;

		sigemptyset(&set);
		for (i = 0; i < KG_ARRAY_LEN(fatal_sigs); i++)
			sigaddset(&set, fatal_sigs[i]);
		pthread_sigmask(SIG_BLOCK, &set, NULL);
	}
	kg_fatal_unblock(&old);
}

static void
install(void)
{
	size_t i;

	if (atomic_load(&installed))
		return;
	owner = pthread_self();
	block_in_workers();
	for (i = 0; i < KG_ARRAY_LEN(fatal_sigs); i++) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sigaction(fatal_sigs[i], NULL, &sa);
		if (sa.sa_handler == SIG_IGN)
			continue;	/* respect nohup and friends */
		sa.sa_handler = on_signal;
		sigfillset(&sa.sa_mask);
		sa.sa_flags = 0;
		sigaction(fatal_sigs[i], &sa, NULL);
	}
	atomic_store(&installed, 1);
}

void
kg_fatal_track_path(const char *path)
{
	size_t len = strlen(path);
	sigset_t old;
	int i;

	if (len >= SLOT_LEN)
		return;		/* not tracked: see fatal.h */
	install();
	kg_fatal_block(&old);
	for (i = 0; i < MAX_PATHS; i++) {
		struct path_slot *s = &slots[i];
		int expect = SLOT_FREE;

		if (!atomic_compare_exchange_strong(&s->state, &expect,
		    SLOT_BUSY))
			continue;
		if (atomic_load(&dying)) {
			atomic_store(&s->state, SLOT_FREE);
			break;
		}
		memcpy(s->path, path, len + 1);
		memcpy(s->dead, path, len);
		memcpy(s->dead + len, DEAD_SUFFIX, sizeof(DEAD_SUFFIX));
		atomic_store(&s->state, SLOT_LIVE);
		break;
	}
	kg_fatal_unblock(&old);
}

void
kg_fatal_untrack_path(const char *path)
{
	sigset_t old;
	int i;

	kg_fatal_block(&old);
	for (i = 0; i < MAX_PATHS; i++) {
		struct path_slot *s = &slots[i];

		if (atomic_load(&s->state) == SLOT_LIVE &&
		    strcmp(s->path, path) == 0) {
			atomic_store(&s->state, SLOT_FREE);
			break;
		}
	}
	kg_fatal_unblock(&old);
}

int
kg_fatal_tracked(const char *path)
{
	int i, n = 0;

	for (i = 0; i < MAX_PATHS; i++)
		n += atomic_load(&slots[i].state) == SLOT_LIVE &&
		    strcmp(slots[i].path, path) == 0;
	return n;
}

void
kg_fatal_track_child(pid_t pgid)
{
	sigset_t old;
	int i;

	install();
	kg_fatal_block(&old);
	for (i = 0; i < MAX_CHILDREN; i++) {
		int expect = 0;

		if (atomic_compare_exchange_strong(&children[i], &expect,
		    (int)pgid))
			break;
	}
	kg_fatal_unblock(&old);
}

void
kg_fatal_untrack_child(pid_t pgid)
{
	sigset_t old;
	int i;

	kg_fatal_block(&old);
	for (i = 0; i < MAX_CHILDREN; i++) {
		int expect = (int)pgid;

		if (atomic_compare_exchange_strong(&children[i], &expect, 0))
			break;
	}
	kg_fatal_unblock(&old);
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

void
kg_fatal_set_note(const char *text)
{
	size_t len = text != NULL ? strlen(text) : 0;
	sigset_t old;

	install();
	if (len >= sizeof(note) - 1)
		len = sizeof(note) - 2;	/* room for the newline */
	kg_fatal_block(&old);
	atomic_store(&note_len, 0);
	if (len > 0) {
		memcpy(note, text, len);
		if (note[len - 1] != '\n')
			note[len++] = '\n';
		atomic_store(&note_len, (int)len);
	}
	kg_fatal_unblock(&old);
}

/*
 * SIGBUS: a fault inside a watched mapping ends the process with its
 * line, the clean-up and status 1; any other goes back to the default
 * action, so the faulting access repeats and kills as it would have.
 */
static void
on_bus(int sig, siginfo_t *si, void *ctx)
{
	uintptr_t a = (uintptr_t)si->si_addr;
	size_t i;

	(void)ctx;
	for (i = 0; i < KG_FATAL_MAX_MAPS; i++) {
		struct map_slot *m = &maps[i];

		if (atomic_load(&m->state) != SLOT_LIVE || a < m->lo ||
		    a >= m->hi)
			continue;
		atomic_store(&dying, 1);
		(void)!write(STDERR_FILENO, m->line, m->line_len);
		clean_up();
		_exit(1);
	}
	signal(sig, SIG_DFL);
}

void
kg_fatal_watch_map(const void *addr, size_t len, const char *name)
{
	size_t i;
	int n;

	if (!atomic_load(&bus_installed)) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_bus;
		sigfillset(&sa.sa_mask);
		sa.sa_flags = SA_SIGINFO;
		sigaction(SIGBUS, &sa, NULL);
		atomic_store(&bus_installed, 1);
	}
	for (i = 0; i < KG_FATAL_MAX_MAPS; i++) {
		struct map_slot *m = &maps[i];
		int want = SLOT_FREE;

		if (!atomic_compare_exchange_strong(&m->state, &want,
		    SLOT_BUSY))
			continue;
		m->lo = (uintptr_t)addr;
		m->hi = (uintptr_t)addr + len;
		n = strlen(name) < 1000 ? snprintf(m->line, sizeof(m->line),
		    "%s: %s: the file shrank or a read of it failed while it "
		    "was mapped\n", kg_progname(), name) : -1;
		if (n < 0 || (size_t)n >= sizeof(m->line))
			n = snprintf(m->line, sizeof(m->line), "%s: an input "
			    "file shrank or a read of it failed while it was "
			    "mapped\n", kg_progname());
		m->line_len = n > 0 && (size_t)n < sizeof(m->line) ?
		    (size_t)n : 0;
		atomic_store(&m->state, SLOT_LIVE);
		return;
	}
}

void
kg_fatal_unwatch_map(const void *addr)
{
	size_t i;

	for (i = 0; i < KG_FATAL_MAX_MAPS; i++) {
		struct map_slot *m = &maps[i];

		if (atomic_load(&m->state) == SLOT_LIVE &&
		    m->lo == (uintptr_t)addr) {
			atomic_store(&m->state, SLOT_FREE);
			return;
		}
	}
}
