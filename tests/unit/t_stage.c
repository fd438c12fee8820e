/*
 * Unit tests for lib/io/stage: the output-versus-inputs check (same
 * path, "./x" against "x", symlinks, an output inside an input and an
 * input inside the output; issue 12, item 1), and a stage's begin and
 * commit with its manifest.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"
#include "io/stage.h"
#include "test.h"

static char *
tmp_path(const char *name)
{
	return kg_path_join(t_tmpdir(), name);
}

/* A kgpipe output directory (an empty manifest) at t_tmpdir()/name. */
static char *
make_output(const char *name)
{
	struct kg_manifest m = KG_MANIFEST_INIT;
	char *dir = tmp_path(name);

	mkdir(dir, 0755);
	kg_manifest_init(&m, 0, NULL);
	T_CHECK(kg_manifest_write(&m, dir) == 0);
	kg_manifest_release(&m);
	return dir;
}

/* kg_stage_check_inputs(out, {in}) and the message it left. */
static int
check1(const char *out, const char *in, const char *want)
{
	const char *inputs[2] = { NULL, in };
	int rc;

	kg_error_mute(1);
	rc = kg_stage_check_inputs(out, inputs, 2);
	kg_error_mute(0);
	if (rc < 0 && want != NULL)
		T_CHECKF(strcmp(kg_error_last(), want) == 0, "'%s', wanted "
		    "'%s'", kg_error_last(), want);
	return rc;
}

static void
t_check_inputs(void)
{
	char *ds = make_output("ds"), *other = make_output("other");
	char *link = tmp_path("link"), *inside = tmp_path("ds/parts");
	char *cwd = getcwd(NULL, 0);
	char *dot, *want;

	T_CHECK(check1(ds, ds, NULL) < 0);
	want = kg_xasprintf("output '%s' is the input '%s'", ds, ds);
	T_CHECK(check1(ds, ds, want) < 0);
	free(want);
	T_CHECK(check1(other, ds, NULL) == 0);
	/* "./x", "x/" and "x/../x" name x. */
	T_CHECK(chdir(t_tmpdir()) == 0);
	T_CHECK(check1("./ds", "ds", "output './ds' is the input 'ds'") < 0);
	T_CHECK(check1("ds/", "ds", NULL) < 0);
	T_CHECK(check1("other/../ds", "./ds", NULL) < 0);
	/* A symlink to an input is that input; one to the output too. */
	T_CHECK(symlink(ds, link) == 0);
	T_CHECK(check1("link", "ds", NULL) < 0);
	T_CHECK(check1("ds", "link", NULL) < 0);
	/* Inside, either way, with or without the output existing. */
	T_CHECK(check1("ds/parts", "ds", "output 'ds/parts' is inside the "
	    "input 'ds'") < 0);
	T_CHECK(check1("link/parts", "ds", NULL) < 0);
	T_CHECK(check1(".", "ds", "input 'ds' is inside the output '.'") < 0);
	T_CHECK(check1("ds", "ds/manifest.json", "input 'ds/manifest.json' "
	    "is inside the output 'ds'") < 0);
	/* Names that share a prefix are not inside each other. */
	T_CHECK(check1("ds2", "ds", NULL) == 0);
	T_CHECK(check1("d", "ds", NULL) == 0);
	/* Skipped: stdin, absent inputs, an output without a parent. */
	T_CHECK(check1("ds", "-", NULL) == 0);
	T_CHECK(check1("ds", "nowhere", NULL) == 0);
	T_CHECK(check1("nowhere/ds", "ds", NULL) == 0);
	dot = realpath(".", NULL);
	T_CHECK(dot != NULL && check1("/", dot, NULL) < 0);
	free(dot);
	/* Other paths a run writes say what they are; a swap dir may hold
	 * an input, not be or lie inside one. */
	{
		const char *in[1] = { "ds" };

		kg_error_mute(1);
		T_CHECK(kg_stage_check_path("checkpoint", "ds/c", in, 1,
		    0) < 0);
		T_CHECK(strcmp(kg_error_last(), "checkpoint 'ds/c' is inside "
		    "the input 'ds'") == 0);
		T_CHECK(kg_stage_check_path("swap dir", ".", in, 1, 0) < 0);
		T_CHECK(kg_stage_check_path("swap dir", ".", in, 1, 1) == 0);
		T_CHECK(kg_stage_check_path("swap dir", "ds", in, 1, 1) < 0);
		T_CHECK(strcmp(kg_error_last(), "swap dir 'ds' is the input "
		    "'ds'") == 0);
		kg_error_mute(0);
	}
	T_CHECK(chdir(cwd) == 0);
	free(cwd);
	free(inside);
	free(link);
	free(other);
	free(ds);
}

static void
t_begin_commit(void)
{
	char *ds = make_output("sds"), *out = tmp_path("sout"), *p;
	const struct kg_stage_input in[] = { { "dataset", ds },
	    { NULL, "/nonexistent/table.csv" } };
	char *argv[] = { "kg-test", "x" };
	struct kg_stage st = KG_STAGE_INIT;
	struct kg_manifest m = KG_MANIFEST_INIT;
	json_t *inputs;
	FILE *f;

	T_CHECK(kg_stage_begin(&st, out, 0, in, 2, 2, argv) == 0);
	T_CHECK(st.dir != NULL && !kg_path_exists(out));
	p = kg_path_join(st.dir, "a.txt");
	f = fopen(p, "w");
	fputs("a\n", f);
	fclose(f);
	free(p);
	T_CHECK(kg_stage_add_file(&st, "a.txt") == 0);
	kg_manifest_set_figure(&st.manifest, "n", json_integer(7));
	T_CHECK(kg_stage_commit(&st) == 0);
	kg_stage_release(&st);
	kg_stage_release(&st);	/* twice is harmless */
	T_CHECK(kg_manifest_load(&m, out, NULL) == 0);
	T_CHECK(kg_manifest_verify(&m, out, 1) == 0);
	inputs = kg_manifest_get(&m, "inputs");
	T_CHECK(json_array_size(inputs) == 1);
	T_CHECK(strcmp(json_string_value(json_object_get(json_array_get(
	    inputs, 0), "role")), "dataset") == 0);
	T_CHECK(json_array_size(kg_manifest_get(&m, "argv")) == 2);
	kg_manifest_release(&m);

	/* The output is an input: refused before anything is created. */
	kg_error_mute(1);
	T_CHECK(kg_stage_begin(&st, ds, 1, in, 2, 2, argv) < 0);
	T_CHECK(strstr(kg_error_last(), "is the input") != NULL);
	/* An input that is not a kgpipe output: nothing left behind. */
	{
		const struct kg_stage_input bad[] = { { "dataset", out },
		    { "model", "/nonexistent" } };
		char *out2 = tmp_path("sout2");

		T_CHECK(kg_stage_begin(&st, out2, 0, bad, 2, 2, argv) < 0);
		kg_stage_release(&st);
		T_CHECK(!kg_path_exists(out2));
		free(out2);
	}
	kg_error_mute(0);
	free(out);
	free(ds);
}

int
main(void)
{
	kg_setprogname("t_stage");
	T_RUN(t_check_inputs);
	T_RUN(t_begin_commit);
	return T_DONE();
}
