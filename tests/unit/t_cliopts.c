#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cliopts.h"
#include "cli/opttab.h"
#include "cli/train_opts.h"
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

/* ---- opttab: a table of two kinds ---- */

struct tctx {
	uint32_t a_dim, b_dim;
	double lr;
	int flag;
	const char *path;
	uint64_t bytes;
	int fn_calls;
};

static int
t_fn(void *ctx, const char *arg)
{
	struct tctx *c = ctx;

	c->fn_calls++;
	if (strcmp(arg, "no") == 0) {
		kg_error("--pick: not that");
		return -1;
	}
	return 0;
}

#define TOFF(f) offsetof(struct tctx, f)
static const struct kg_opt topts[] = {
	{ .group = "Things:" },
	{ "config", 0, NULL, { { .kinds = 3, .how = KG_OPT_CONFIG,
	    .arg = "FILE", .help = "a file" } } },
	{ "dim", 0, NULL, {
	  { .kinds = 1, .how = KG_OPT_U32, .off = TOFF(a_dim), .min = 1,
	    .max = 10, .alias = "-d", .arg = "N", .def = "4",
	    .help = "a's width" },
	  { .kinds = 2, .how = KG_OPT_U32, .off = TOFF(b_dim), .min = 1,
	    .max = 99 } } },
	{ "lr", 0, NULL, { { .kinds = 3, .how = KG_OPT_DOUBLE, .off = TOFF(lr),
	    .lo = 0, .hi = 1, .also = "rate", .arg = "LR", .help = "rate" } } },
	{ "flag", 'x', NULL, { { .kinds = 1, .how = KG_OPT_FLAG,
	    .off = TOFF(flag), .help = "a's flag" } } },
	{ "path", 0, NULL, { { .kinds = 2, .how = KG_OPT_STRING,
	    .off = TOFF(path), .arg = "DIR", .help = "b's dir" } } },
	{ "budget", 0, NULL, { { .kinds = 1, .how = KG_OPT_SIZE,
	    .off = TOFF(bytes), .lo = 1, .hi = 1e18, .arg = "SIZE",
	    .help = "bytes" } } },
	{ "pick", 0, NULL, { { .kinds = 1, .how = KG_OPT_FN, .fn = t_fn,
	    .arg = "X", .alias = "--pick_yes", .alias_arg = "yes",
	    .help = "a pick" } } },
	{ "old", 0, NULL, { { .kinds = 1, .how = KG_OPT_IGNORED,
	    .flags = KG_OPT_FOREIGN | KG_OPT_MULTI, .arg = "V",
	    .help = "use --dim" } } },
	{ "help", 'h', NULL, { { .kinds = 3, .how = KG_OPT_HELP,
	    .help = "this help" } } },
};
static const struct kg_opttab ttab = { topts, KG_ARRAY_LEN(topts), "old",
	2 };

/* Parse argv (NULL-terminated) for kind into c; the result. */
static enum kg_opts_result
tparse(unsigned kind, char **argv, struct tctx *c, unsigned char *given,
    int *first, char ***av)
{
	int argc = 0, nav;
	enum kg_opts_result r;

	while (argv[argc] != NULL)
		argc++;
	memset(c, 0, sizeof(*c));
	memset(given, 0, KG_ARRAY_LEN(topts));
	r = kg_opttab_parse(&ttab, kind, argc, argv, c, given, av, &nav,
	    first);
	T_CHECK(nav <= argc);
	return r;
}

static void
t_opttab_parse(void)
{
	struct tctx c;
	unsigned char given[KG_ARRAY_LEN(topts)];
	char **av;
	int first;
	char *a1[] = { "p", "-d", "7", "--rate=0.5", "-x", "--budget", "2K",
	    "--pick_yes", "--old", "u", "v", "ds", "out", NULL };
	char *a2[] = { "p", "--dim", "50", "--path", "here", "ds", "out",
	    NULL };
	char *a3[] = { "p", "--path", "here", "ds", "out", NULL };
	char *a4[] = { "p", "--dim", "50", "ds", "out", NULL };
	char *a5[] = { "p", "--pick", "no", "ds", "out", NULL };
	char *a6[] = { "p", "--help", NULL };
	char *a7[] = { "p", "-d", "3", NULL };

	kg_error_mute(1);
	T_CHECK(tparse(1, a1, &c, given, &first, &av) == KG_OPTS_GO);
	T_CHECK(c.a_dim == 7 && c.lr == 0.5 && c.flag == 1);
	T_CHECK(c.bytes == 2048 && c.fn_calls == 1);
	T_CHECK(given[2] && given[3] && given[4] && !given[5]);
	T_CHECK(strcmp(av[first], "ds") == 0 &&
	    strcmp(av[first + 1], "out") == 0);
	kg_cli_argv_free(14, av);
	/* Kind 2 takes --dim into its own field, with its own range. */
	T_CHECK(tparse(2, a2, &c, given, &first, &av) == KG_OPTS_GO);
	T_CHECK(c.b_dim == 50 && c.a_dim == 0 && strcmp(c.path, "here") == 0);
	kg_cli_argv_free(7, av);
	/* An option of the other kind is unknown. */
	T_CHECK(tparse(1, a3, &c, given, &first, &av) == KG_OPTS_USAGE);
	T_CHECK(strstr(kg_error_last(), "unrecognized option '--path'") !=
	    NULL);
	kg_cli_argv_free(5, av);
	T_CHECK(tparse(1, a4, &c, given, &first, &av) == KG_OPTS_USAGE);
	T_CHECK(strstr(kg_error_last(), "--dim") != NULL);
	kg_cli_argv_free(5, av);
	T_CHECK(tparse(1, a5, &c, given, &first, &av) == KG_OPTS_USAGE);
	T_CHECK(strcmp(kg_error_last(), "--pick: not that") == 0);
	kg_cli_argv_free(5, av);
	T_CHECK(tparse(2, a6, &c, given, &first, &av) == KG_OPTS_HELP);
	kg_cli_argv_free(2, av);
	/* Kind 2 has no -d spelling. */
	T_CHECK(tparse(2, a7, &c, given, &first, &av) == KG_OPTS_USAGE);
	kg_cli_argv_free(4, av);
	kg_error_mute(0);
}

/* The help of a kind lists its uses only, with their defaults. */
static void
t_opttab_help(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	T_CHECK(f != NULL);
	if (f == NULL)
		return;
	kg_opttab_help(f, &ttab, 1, 0, 0);
	kg_opttab_synopsis(f, &ttab, 2, "usage: p", "A B");
	fclose(f);
	T_CHECKF(strstr(buf, "Things:\n") == buf, "%s", buf);
	T_CHECKF(strstr(buf, "  -d, --dim N            a's width (default 4)\n")
	    != NULL, "%s", buf);
	T_CHECK(strstr(buf, "  -x, --flag") != NULL);
	T_CHECK(strstr(buf, "b's dir") == NULL);	/* kind 2's */
	T_CHECK(strstr(buf, "use --dim") == NULL);	/* foreign */
	T_CHECKF(strstr(buf, "usage: p [--config FILE] [--dim N] [--lr LR] "
	    "[--path DIR] A B\n") != NULL, "%s", buf);
	free(buf);
}

/*
 * kg-train's table: each default it states is what the options start
 * as (applying it changes nothing), each spelling is one option's in
 * each kind, and each option has a help line.
 */
static void
t_train_table(void)
{
	const struct kg_opttab *t = &kg_train_opttab;
	struct kg_train_cli *c0 = kg_xmalloc(sizeof(*c0));
	struct kg_train_cli *c1 = kg_xmalloc(sizeof(*c1));
	size_t i, k, j, n_def = 0;

	kg_train_cli_init(c0);
	for (i = 0; i < t->n; i++) {
		const struct kg_opt *o = &t->opt[i];

		if (o->name == NULL)
			continue;
		T_CHECKF(o->use[0].help != NULL, "--%s has no help", o->name);
		T_CHECKF(kg_opttab_find(t, o->name) == i, "--%s twice",
		    o->name);
		for (k = 0; k < KG_OPT_MAX_USES && o->use[k].kinds; k++) {
			const struct kg_opt_use *u = &o->use[k];

			for (j = 0; j < k; j++)
				T_CHECKF(!(o->use[j].kinds & u->kinds),
				    "--%s: two uses for one kind", o->name);
			if (u->also != NULL)
				T_CHECKF(kg_opttab_find(t, u->also) == i,
				    "--%s twice", u->also);
			if (u->def == NULL)
				continue;
			n_def++;
			memcpy(c1, c0, sizeof(*c1));
			T_CHECKF(kg_opt_apply(t, i, u, c1, u->def) == 0,
			    "--%s: default '%s' does not parse", o->name,
			    u->def);
			T_CHECKF(memcmp(c0, c1, sizeof(*c1)) == 0,
			    "--%s: the default is not '%s'", o->name, u->def);
		}
	}
	T_CHECK(n_def > 40);
	free(c0);
	free(c1);
}

int
main(void)
{
	T_RUN(t_argv);
	T_RUN(t_multi_values);
	T_RUN(t_config);
	T_RUN(t_opttab_parse);
	T_RUN(t_opttab_help);
	T_RUN(t_train_table);
	return T_DONE();
}
