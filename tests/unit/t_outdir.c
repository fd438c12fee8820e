#include <sys/stat.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

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

int
main(void)
{
	T_RUN(t_commit_and_exists);
	T_RUN(t_abort_leaves_nothing);
	T_RUN(t_signal_removes_temporary);
	return T_DONE();
}
