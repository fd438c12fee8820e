#include <sys/stat.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

#include <errno.h>

#include "io/fatal.h"
#include "io/outdir.h"
#include "core/util.h"
#include "test.h"

static int
count_entries(const char *dir)
{
	char *cmd = kg_xasprintf("ls -A '%s' | wc -l", dir);
	FILE *p = popen(cmd, "r");
	int n = -1;

	if (fscanf(p, "%d", &n) != 1)
		n = -1;
	pclose(p);
	free(cmd);
	return n;
}

static void
write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	fputs(text, f);
	fclose(f);
}

static void
t_commit_and_exists(void)
{
	struct kg_outdir od;
	char *base = kg_path_join(t_tmpdir(), "c");
	char *out = kg_path_join(base, "out");
	char *f, *g;

	mkdir(base, 0755);
	T_CHECK(kg_outdir_begin(&od, out, 0) == 0);
	T_CHECK(!kg_path_exists(out));
	f = kg_outdir_file(&od, "a.txt");
	write_file(f, "one");
	free(f);
	T_CHECK(kg_outdir_mkdir(&od, "sub") == 0);
	f = kg_outdir_file(&od, "sub/b.txt");
	write_file(f, "two");
	free(f);
	T_CHECK(kg_outdir_commit(&od) == 0);
	g = kg_path_join(out, "sub/b.txt");
	T_CHECK(kg_path_exists(g));
	free(g);
	T_CHECK(count_entries(base) == 1);	/* no temporary left */

	/* Exists without force: refused, nothing created. */
	kg_error_mute(1);
	T_CHECK(kg_outdir_begin(&od, out, 0) < 0);
	T_CHECK(strstr(kg_error_last(), "exists; use --force") != NULL);
	kg_error_mute(0);
	T_CHECK(count_entries(base) == 1);

	/* With force: the old content is replaced at commit only. */
	T_CHECK(kg_outdir_begin(&od, out, 1) == 0);
	f = kg_outdir_file(&od, "new.txt");
	write_file(f, "three");
	free(f);
	g = kg_path_join(out, "a.txt");
	T_CHECK(kg_path_exists(g));	/* still the old one */
	T_CHECK(kg_outdir_commit(&od) == 0);
	T_CHECK(!kg_path_exists(g));
	free(g);
	g = kg_path_join(out, "new.txt");
	T_CHECK(kg_path_exists(g));
	free(g);
	T_CHECK(count_entries(base) == 1);
	free(out);
	free(base);
}

static void
t_abort_leaves_nothing(void)
{
	struct kg_outdir od;
	char *base = kg_path_join(t_tmpdir(), "a");
	char *out = kg_path_join(base, "out");
	char *f;

	mkdir(base, 0755);
	T_CHECK(kg_outdir_begin(&od, out, 0) == 0);
	f = kg_outdir_file(&od, "a.txt");
	write_file(f, "x");
	free(f);
	kg_outdir_abort(&od);
	kg_outdir_abort(&od);	/* twice is harmless */
	T_CHECK(count_entries(base) == 0);

	kg_error_mute(1);
	T_CHECK(kg_outdir_begin(&od, "/nonexistent/dir/out", 0) < 0);
	kg_error_mute(0);
	free(out);
	free(base);
}

static void
t_signal_removes_temporary(void)
{
	char *base = kg_path_join(t_tmpdir(), "s");
	char *out = kg_path_join(base, "out");
	int status;
	pid_t pid;

	mkdir(base, 0755);
	pid = fork();
	if (pid == 0) {
		struct kg_outdir od;

		if (kg_outdir_begin(&od, out, 0) < 0)
			_exit(3);
		raise(SIGTERM);
		_exit(4);
	}
	waitpid(pid, &status, 0);
	T_CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
	T_CHECK(count_entries(base) == 0);
	free(out);
	free(base);
}

/* A PID that is not running: a child that has exited and been reaped. */
static pid_t
dead_pid(void)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	return pid;
}

/* dir/name as a directory holding a file and a subdirectory. */
static char *
make_tree(const char *dir, const char *name)
{
	char *p = kg_path_join(dir, name), *q;

	mkdir(p, 0755);
	q = kg_path_join(p, "sub");
	mkdir(q, 0755);
	free(q);
	q = kg_path_join(p, "sub/f.npy");
	write_file(q, "data");
	free(q);
	return p;
}

/*
 * After kill -9 the temporary stays; the next begin for the same output
 * removes it when its PID is gone, and only names of the exact form
 * (issue 12, item 4).
 */
static void
t_stale_temporaries(void)
{
	struct kg_outdir od;
	char *base = kg_path_join(t_tmpdir(), "st");
	char *out = kg_path_join(base, "out"), *name, *p[6];
	long dead = (long)dead_pid(), live = (long)getppid();
	int i;

	mkdir(base, 0755);
	name = kg_xasprintf(".out.tmp.%ld", dead);
	p[0] = make_tree(base, name);		/* stale: removed */
	free(name);
	name = kg_xasprintf(".out.tmp.%ld.dead", dead);
	p[1] = make_tree(base, name);		/* stale: removed */
	free(name);
	name = kg_xasprintf(".out.tmp.%ld", live);
	p[2] = make_tree(base, name);		/* a live process's: kept */
	free(name);
	name = kg_xasprintf(".other.tmp.%ld", dead);
	p[3] = make_tree(base, name);		/* another output's: kept */
	free(name);
	name = kg_xasprintf(".out.tmp.%ldx", dead);
	p[4] = make_tree(base, name);		/* not the form: kept */
	free(name);
	name = kg_xasprintf(".out.old.%ld", dead);
	p[5] = make_tree(base, name);		/* the old output: put back */
	free(name);
	kg_error_mute(1);
	T_CHECK(kg_outdir_begin(&od, out, 0) < 0);	/* it is back */
	kg_error_mute(0);
	T_CHECK(!kg_path_exists(p[0]) && !kg_path_exists(p[1]));
	T_CHECK(kg_path_exists(p[2]) && kg_path_exists(p[3]) &&
	    kg_path_exists(p[4]));
	T_CHECK(!kg_path_exists(p[5]));
	name = kg_path_join(out, "sub/f.npy");
	T_CHECK(kg_path_exists(name));
	free(name);
	/* With the output present, an aside copy is removed. */
	name = kg_xasprintf(".out.old.%ld", dead);
	free(make_tree(base, name));
	T_CHECK(kg_outdir_begin(&od, out, 1) == 0);
	T_CHECK(!kg_path_exists(p[5]));
	kg_outdir_abort(&od);
	free(name);
	for (i = 0; i < 6; i++) {
		kg_rmtree(p[i]);
		free(p[i]);
	}
	free(out);
	free(base);
}

/* The handler removes a nested tree with system calls only, and a child
 * process group it was told about is stopped. */
static void
t_signal_removes_tree_and_child(void)
{
	char *base = kg_path_join(t_tmpdir(), "sig");
	char *out = kg_path_join(base, "out");
	int status, fds[2];
	pid_t pid, grandchild = 0;

	mkdir(base, 0755);
	T_CHECK(pipe(fds) == 0);
	pid = fork();
	if (pid == 0) {
		struct kg_outdir od;
		pid_t c;
		char *f;

		close(fds[0]);
		if (kg_outdir_begin(&od, out, 0) < 0 ||
		    kg_outdir_mkdir(&od, "a") < 0 ||
		    kg_outdir_mkdir(&od, "a/b") < 0)
			_exit(3);
		f = kg_outdir_file(&od, "a/b/deep.txt");
		write_file(f, "x");
		free(f);
		c = fork();
		if (c == 0) {
			setpgid(0, 0);
			execl("/bin/sleep", "sleep", "60", (char *)NULL);
			_exit(127);
		}
		setpgid(c, c);
		kg_fatal_track_child(c);
		if (write(fds[1], &c, sizeof(c)) != sizeof(c))
			_exit(5);
		raise(SIGTERM);
		_exit(4);
	}
	close(fds[1]);
	if (read(fds[0], &grandchild, sizeof(grandchild)) !=
	    sizeof(grandchild))
		grandchild = 0;
	close(fds[0]);
	waitpid(pid, &status, 0);
	T_CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
	T_CHECK(count_entries(base) == 0);
	T_CHECK(grandchild > 0 && kill(grandchild, 0) == -1 &&
	    errno == ESRCH);
	free(out);
	free(base);
}

/* kg_fatal_rmtree: files, trees, no symlink following, bounded depth. */
static void
t_fatal_rmtree(void)
{
	char *base = kg_path_join(t_tmpdir(), "rm");
	char *t = make_tree(t_tmpdir(), "rm"), *link, *target, *deep, *p;
	int i;

	target = make_tree(t_tmpdir(), "keep");
	link = kg_path_join(base, "link");
	T_CHECK(symlink(target, link) == 0);
	T_CHECK(kg_fatal_rmtree(base) == 0);
	T_CHECK(!kg_path_exists(base));
	p = kg_path_join(target, "sub/f.npy");
	T_CHECK(kg_path_exists(p));	/* the link's target stays */
	free(p);
	deep = kg_xstrdup(base);
	mkdir(deep, 0755);
	for (i = 0; i < KG_FATAL_MAX_DEPTH + 2; i++) {
		p = kg_path_join(deep, "d");
		mkdir(p, 0755);
		free(deep);
		deep = p;
	}
	T_CHECK(kg_fatal_rmtree(base) < 0);	/* too deep: left */
	T_CHECK(kg_path_exists(base));
	T_CHECK(kg_rmtree(base) == 0);
	free(deep);
	free(link);
	free(target);
	free(t);
	free(base);
}

/* A single output file: atomic, refused when present without force. */
static void
t_write_file(void)
{
	char *base = kg_path_join(t_tmpdir(), "wf");
	char *out = kg_path_join(base, "r.json");
	char buf[16] = "";
	FILE *f;

	mkdir(base, 0755);
	T_CHECK(kg_outdir_write_file(out, 0, "one\n", 4) == 0);
	kg_error_mute(1);
	T_CHECK(kg_outdir_write_file(out, 0, "two\n", 4) < 0);
	T_CHECK(strstr(kg_error_last(), "exists; use --force") != NULL);
	T_CHECK(kg_outdir_write_file(base, 1, "x", 1) < 0);
	T_CHECK(strstr(kg_error_last(), "not a regular file") != NULL);
	kg_error_mute(0);
	T_CHECK(kg_outdir_write_file(out, 1, "two\n", 4) == 0);
	f = fopen(out, "r");
	T_CHECK(f != NULL && fgets(buf, sizeof(buf), f) != NULL);
	if (f != NULL)
		fclose(f);
	T_CHECK(strcmp(buf, "two\n") == 0);
	T_CHECK(count_entries(base) == 1);
	free(out);
	free(base);
}

int
main(void)
{
	T_RUN(t_commit_and_exists);
	T_RUN(t_abort_leaves_nothing);
	T_RUN(t_signal_removes_temporary);
	T_RUN(t_stale_temporaries);
	T_RUN(t_signal_removes_tree_and_child);
	T_RUN(t_fatal_rmtree);
	T_RUN(t_write_file);
	return T_DONE();
}
