/*
 * Unit tests for lib/io/fatal: the handler removes exactly the tracked
 * temporaries, runs with every signal blocked, OpenMP workers block the
 * fatal signals, and a signal that lands on another thread while the
 * owner tracks and untracks paths is handled by the owner (issue 32,
 * item 6); the note it prints first.
 */
#include <sys/stat.h>
#include <sys/wait.h>
#include <errno.h>
#include <omp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "io/fatal.h"
#include "core/util.h"
#include "test.h"

static const int fatal_sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };

/* A directory holding a file and a subdirectory with a file. */
static char *
make_tree(const char *base, const char *name)
{
	char *dir = kg_path_join(base, name);
	char *sub = kg_path_join(dir, "sub");
	char *f = kg_path_join(sub, "f.txt");
	FILE *fp;

	mkdir(dir, 0755);
	mkdir(sub, 0755);
	fp = fopen(f, "w");
	if (fp != NULL) {
		fputs("x", fp);
		fclose(fp);
	}
	free(f);
	free(sub);
	return dir;
}

static int
exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/* Run fn in a child and return its wait status. */
static int
in_child(void (*fn)(void *), void *arg)
{
	int status = 0;
	pid_t pid = fork();

	if (pid == 0) {
		fn(arg);
		_exit(4);
	}
	waitpid(pid, &status, 0);
	return status;
}

struct trees {
	char *p[5];
};

static void
track_four_raise(void *arg)
{
	struct trees *t = arg;
	int i;

	for (i = 0; i < 4; i++)
		kg_fatal_track_path(t->p[i]);
	kg_fatal_untrack_path(t->p[1]);
	if (kg_fatal_tracked(t->p[0]) != 1 || kg_fatal_tracked(t->p[1]) != 0)
		_exit(5);
	raise(SIGTERM);
}

/* Tracked a, c, d are removed; untracked b and never tracked e stay. */
static void
t_removes_exactly_tracked(void)
{
	char *base = kg_path_join(t_tmpdir(), "exact");
	struct trees t;
	int i, status;

	mkdir(base, 0755);
	for (i = 0; i < 5; i++) {
		char name[2] = { (char)('a' + i), '\0' };

		t.p[i] = make_tree(base, name);
	}
	status = in_child(track_four_raise, &t);
	T_CHECKF(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM,
	    "status %d", status);
	T_CHECK(!exists(t.p[0]) && !exists(t.p[2]) && !exists(t.p[3]));
	T_CHECK(exists(t.p[1]) && exists(t.p[4]));
	for (i = 0; i < 5; i++) {
		char *dead = kg_xasprintf("%s.dead", t.p[i]);

		T_CHECK(!exists(dead));
		free(dead);
		kg_fatal_rmtree(t.p[i]);
		free(t.p[i]);
	}
	free(base);
}

/* While the handler runs every signal is blocked, so a second fatal
 * signal waits instead of entering it again. */
static void
t_handler_mask(void)
{
	struct sigaction sa;
	size_t i, j;

	kg_fatal_track_path("never-made");
	for (i = 0; i < KG_ARRAY_LEN(fatal_sigs); i++) {
		T_CHECK(sigaction(fatal_sigs[i], NULL, &sa) == 0);
		T_CHECK(sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN);
		for (j = 0; j < KG_ARRAY_LEN(fatal_sigs); j++)
			T_CHECKF(sigismember(&sa.sa_mask, fatal_sigs[j]) == 1,
			    "signal %d not blocked in the handler of %d",
			    fatal_sigs[j], fatal_sigs[i]);
	}
	kg_fatal_untrack_path("never-made");
	T_CHECK(kg_fatal_tracked("never-made") == 0);
}

/* After the first registration the OpenMP workers (of teams up to the
 * number of processors, and at least 3 here) block the fatal signals;
 * the calling thread does not. */
static void
t_workers_block(void)
{
	atomic_int unblocked = 0, workers = 0;
	int n = omp_get_num_procs() < 3 ? 3 : omp_get_num_procs();
	sigset_t cur;
	size_t i;

	kg_fatal_track_path("never-made");
#pragma omp parallel num_threads(n)
	{
		sigset_t m;

		pthread_sigmask(SIG_BLOCK, NULL, &m);
		if (omp_get_thread_num() != 0) {
			atomic_fetch_add(&workers, 1);
			for (i = 0; i < KG_ARRAY_LEN(fatal_sigs); i++)
				if (sigismember(&m, fatal_sigs[i]) != 1)
					atomic_fetch_add(&unblocked, 1);
		}
	}
	T_CHECKF(workers == n - 1, "%d workers", (int)workers);
	T_CHECKF(unblocked == 0, "%d signals unblocked in workers",
	    (int)unblocked);
	pthread_sigmask(SIG_BLOCK, NULL, &cur);
	T_CHECK(sigismember(&cur, SIGTERM) == 0);
	kg_fatal_untrack_path("never-made");
}

struct churn {
	char *kept, *churned, *sentinel;
	atomic_int go;
};

static void *
signal_self(void *arg)
{
	struct churn *c = arg;

	while (atomic_load(&c->go) < 1000)
		;
	pthread_kill(pthread_self(), SIGTERM);
	return NULL;
}

/*
 * A thread that does not block the signal gets SIGTERM while the owner
 * tracks and untracks a path in a loop: the process dies of SIGTERM with
 * the tracked tree removed and the untracked sentinel kept.
 */
static void
churn_child(void *arg)
{
	struct churn *c = arg;
	pthread_t th;
	sigset_t none;

	kg_fatal_track_path(c->kept);
	/* The new thread inherits an empty mask: the signal lands on it. */
	sigemptyset(&none);
	pthread_sigmask(SIG_SETMASK, &none, NULL);
	if (pthread_create(&th, NULL, signal_self, c) != 0)
		_exit(6);
	for (;;) {
		kg_fatal_track_path(c->churned);
		kg_fatal_untrack_path(c->churned);
		atomic_fetch_add(&c->go, 1);
	}
}

static void
t_signal_on_another_thread(void)
{
	char *base = kg_path_join(t_tmpdir(), "churn");
	struct churn c;
	int status;

	mkdir(base, 0755);
	c.kept = make_tree(base, "kept");
	c.churned = make_tree(base, "churned");
	c.sentinel = make_tree(base, "sentinel");
	atomic_init(&c.go, 0);
	status = in_child(churn_child, &c);
	T_CHECKF(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM,
	    "status %d", status);
	T_CHECK(!exists(c.kept));
	T_CHECK(exists(c.sentinel));
	kg_fatal_rmtree(base);
	free(c.kept);
	free(c.churned);
	free(c.sentinel);
	free(base);
}

/* The child's stderr goes to fd; it sets a note, replaces it, and
 * dies of SIGTERM. */
static void
note_raise(void *arg)
{
	int fd = *(int *)arg;

	dup2(fd, STDERR_FILENO);
	kg_fatal_set_note("first note");
	kg_fatal_set_note("kg-test: during epoch 4; the last checkpoint is x");
	raise(SIGTERM);
}

static void
note_cleared_raise(void *arg)
{
	int fd = *(int *)arg;

	dup2(fd, STDERR_FILENO);
	kg_fatal_set_note("a note");
	kg_fatal_set_note(NULL);
	raise(SIGTERM);
}

/* What the child wrote on stderr before it died (up to 255 bytes). */
static int
note_of(void (*fn)(void *), char out[256])
{
	int fd[2], status;
	ssize_t n;

	if (pipe(fd) != 0)
		return -1;
	status = in_child(fn, &fd[1]);
	close(fd[1]);
	n = read(fd[0], out, 255);
	close(fd[0]);
	out[n > 0 ? n : 0] = '\0';
	return status;
}

/* The handler writes the last note, with a newline, and still dies of
 * the signal; a cleared note writes nothing. */
static void
t_note(void)
{
	char out[256];
	int status;

	status = note_of(note_raise, out);
	T_CHECKF(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM,
	    "status %d", status);
	T_CHECKF(strcmp(out, "kg-test: during epoch 4; the last checkpoint "
	    "is x\n") == 0, "wrote '%s'", out);
	status = note_of(note_cleared_raise, out);
	T_CHECKF(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM,
	    "status %d", status);
	T_CHECKF(out[0] == '\0', "wrote '%s'", out);
}

int
main(void)
{
	size_t i;

	/* Under nohup SIGHUP comes ignored, and lib/io/fatal.c rightly
	 * leaves an ignored signal alone: start from the defaults, so that
	 * t_handler_mask checks the handlers whoever started the tests. */
	for (i = 0; i < KG_ARRAY_LEN(fatal_sigs); i++)
		signal(fatal_sigs[i], SIG_DFL);
	/* A team of 3 at least, before the first registration. */
	if (omp_get_max_threads() < 3)
		omp_set_num_threads(3);
	T_RUN(t_removes_exactly_tracked);
	T_RUN(t_handler_mask);
	T_RUN(t_workers_block);
	T_RUN(t_signal_on_another_thread);
	T_RUN(t_note);
	return T_DONE();
}
