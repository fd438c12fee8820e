#include <stdio.h>
#include <string.h>

#include "cli/cliopts.h"
#include "core/util.h"
#include "test.h"

enum { O_DIM = 256, O_FLAG, O_CONFIG, O_OLD };

static const struct option opts[] = {
	{ "hidden_dim", required_argument, NULL, O_DIM },
	{ "double_ent", no_argument, NULL, O_FLAG },
	{ "config", required_argument, NULL, O_CONFIG },
	{ "old_key", required_argument, NULL, O_OLD },
	{ NULL, 0, NULL, 0 }
};

/* What the options applied, in order, as "val=arg;". */
struct seen {
	char log[256];
};

static int
record(void *ctx, int val, const char *arg)
{
	struct seen *s = ctx;
	size_t n = strlen(s->log);

	if (val == O_DIM && strcmp(arg, "bad") == 0) {
		kg_error("--hidden_dim: bad value");
		return -1;
	}
	snprintf(s->log + n, sizeof(s->log) - n, "%d=%s;", val,
	    val == O_FLAG ? "" : arg);
	return 0;
}

static void
write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	T_CHECK(f != NULL);
	if (f == NULL)
		return;
	fputs(text, f);
	fclose(f);
}

static void
t_argv(void)
{
	static const char *const aliases[][2] = { { "-d", "--hidden_dim" } };
	char *argv[] = { "prog", "--hidden-dim=4", "-d", "8", "--a-b", "x-y",
	    "--", "--c-d", "-d", NULL };
	char **av = kg_cli_argv(9, argv, aliases, 1);

	T_CHECK(strcmp(av[0], "prog") == 0);
	T_CHECK(strcmp(av[1], "--hidden_dim=4") == 0);
	T_CHECK(strcmp(av[2], "--hidden_dim") == 0);
	T_CHECK(strcmp(av[4], "--a_b") == 0);
	T_CHECK(strcmp(av[5], "x-y") == 0);	/* values keep dashes */
	T_CHECK(strcmp(av[7], "--c-d") == 0);	/* after "--": as given */
	T_CHECK(strcmp(av[8], "-d") == 0);
	T_CHECK(av[9] == NULL);
	kg_cli_argv_free(9, av);
}

static void
t_config(void)
{
	const char *dir = t_tmpdir();
	char path[1024];
	struct seen s;

	snprintf(path, sizeof(path), "%s/c.json", dir);
	write_file(path, "{ \"_source\": \"a note\", \"hidden-dim\": 400, "
	    "\"double_ent\": true, \"old_key\": 0.5 }");
	memset(&s, 0, sizeof(s));
	kg_error_mute(1);
	T_CHECK(kg_cli_config(path, opts, O_CONFIG, O_OLD, record, &s) == 0);
	T_CHECKF(strcmp(s.log, "256=400;257=;259=0.5;") == 0, "%s", s.log);

	write_file(path, "{ \"double_ent\": false, \"hidden_dim\": \"7\" }");
	memset(&s, 0, sizeof(s));
	T_CHECK(kg_cli_config(path, opts, O_CONFIG, O_OLD, record, &s) == 0);
	T_CHECKF(strcmp(s.log, "256=7;") == 0, "%s", s.log);

	write_file(path, "{ \"hidden_dim\": 4, \"nope\": 1 }");
	T_CHECK(kg_cli_config(path, opts, O_CONFIG, O_OLD, record, &s) < 0);
	T_CHECK(strstr(kg_error_last(), "unknown key 'nope'") != NULL);
	write_file(path, "{ \"config\": \"other.json\" }");
	T_CHECK(kg_cli_config(path, opts, O_CONFIG, O_OLD, record, &s) < 0);
	write_file(path, "{ \"hidden_dim\": [1] }");
	T_CHECK(kg_cli_config(path, opts, O_CONFIG, O_OLD, record, &s) < 0);
	T_CHECK(strstr(kg_error_last(), "wrong type") != NULL);
	write_file(path, "{ \"double_ent\": 0 }");
	T_CHECK(kg_cli_config(path, opts, O_CONFIG, O_OLD, record, &s) < 0);
	T_CHECK(strstr(kg_error_last(), "true or false") != NULL);
	write_file(path, "{ \"hidden_dim\": \"bad\" }");
	T_CHECK(kg_cli_config(path, opts, O_CONFIG, O_OLD, record, &s) < 0);
	T_CHECK(strstr(kg_error_last(), "bad value") != NULL);
	write_file(path, "[1, 2]");
	T_CHECK(kg_cli_config(path, opts, O_CONFIG, O_OLD, record, &s) < 0);
	T_CHECK(strstr(kg_error_last(), "not a JSON object") != NULL);
	write_file(path, "{ \"hidden_dim\": ");
	T_CHECK(kg_cli_config(path, opts, O_CONFIG, O_OLD, record, &s) < 0);

	/* Every --config of an argv, in order, none after "--". */
	{
		char a[1024], b[1100];
		char *argv[] = { "prog", "--config", a, "--config=", NULL,
		    "--", "--config", "x", NULL };

		snprintf(a, sizeof(a), "%s/a.json", dir);
		snprintf(b, sizeof(b), "--config=%s/b.json", dir);
		argv[3] = b;
		write_file(a, "{ \"hidden_dim\": 1 }");
		snprintf(path, sizeof(path), "%s/b.json", dir);
		write_file(path, "{ \"hidden_dim\": 2 }");
		memset(&s, 0, sizeof(s));
		argv[4] = "--";
		T_CHECK(kg_cli_configs(5, argv, opts, O_CONFIG, O_OLD, record,
		    &s) == 0);
		T_CHECKF(strcmp(s.log, "256=1;256=2;") == 0, "%s", s.log);
		T_CHECK(kg_cli_configs(2, argv, opts, O_CONFIG, O_OLD, record,
		    &s) < 0);
		T_CHECK(strstr(kg_error_last(), "needs a file") != NULL);
	}
	kg_error_mute(0);
}

/* DGL-KE's nargs='+' options: extra values go past the returned count,
 * unless they are needed as operands. */
static void
t_multi_values(void)
{
	static const char *const multi[] = { "--gpu", "--data_files" };
	static const struct option mo[] = {
		{ "gpu", required_argument, NULL, 1 },
		{ "data_files", required_argument, NULL, 2 },
		{ "lr", required_argument, NULL, 3 },
		{ "test", no_argument, NULL, 4 },
		{ NULL, 0, NULL, 0 }
	};
	char *a1[] = { "p", "--gpu", "0", "1", "2", "--lr", "0.1", "ds", "m",
	    NULL };
	char *a2[] = { "p", "ds", "m", "--data_files", "a", "b", "c", NULL };
	char *a3[] = { "p", "--data_files", "a", "b", "c", "ds", "m", NULL };
	char *a4[] = { "p", "--test", "ds", "m", NULL };
	char *a5[] = { "p", "--gpu", "-1", "-1", "ds", "m", NULL };
	char *a6[] = { "p", "--gpu", "0", "-5x", "ds", "m", NULL };
	int n;

	n = kg_cli_multi_values(9, a1, mo, multi, 2, 2);
	T_CHECK(n == 7);
	T_CHECK(strcmp(a1[1], "--gpu") == 0 && strcmp(a1[2], "0") == 0);
	T_CHECK(strcmp(a1[3], "--lr") == 0 && strcmp(a1[5], "ds") == 0 &&
	    strcmp(a1[6], "m") == 0);
	T_CHECK(strcmp(a1[7], "1") == 0 && strcmp(a1[8], "2") == 0);
	n = kg_cli_multi_values(7, a2, mo, multi, 2, 2);
	T_CHECK(n == 5);
	T_CHECK(strcmp(a2[1], "ds") == 0 && strcmp(a2[2], "m") == 0 &&
	    strcmp(a2[4], "a") == 0);
	/* Values run into the operands: those two stay. */
	n = kg_cli_multi_values(7, a3, mo, multi, 2, 2);
	T_CHECK(n == 5);
	T_CHECK(strcmp(a3[2], "a") == 0 && strcmp(a3[3], "ds") == 0 &&
	    strcmp(a3[4], "m") == 0);
	T_CHECK(strcmp(a3[5], "b") == 0 && strcmp(a3[6], "c") == 0);
	n = kg_cli_multi_values(4, a4, mo, multi, 2, 2);
	T_CHECK(n == 4 && strcmp(a4[2], "ds") == 0);
	/* DGL-KE's --gpu -1 -1: negative numbers are values, not options. */
	n = kg_cli_multi_values(6, a5, mo, multi, 2, 2);
	T_CHECK(n == 5 && strcmp(a5[3], "ds") == 0 &&
	    strcmp(a5[5], "-1") == 0);
	/* Not a number: an option, which ends the values. */
	n = kg_cli_multi_values(6, a6, mo, multi, 2, 2);
	T_CHECK(n == 6 && strcmp(a6[3], "-5x") == 0);
}

int
main(void)
{
	T_RUN(t_argv);
	T_RUN(t_multi_values);
	T_RUN(t_config);
	return T_DONE();
}
