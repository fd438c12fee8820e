#include "io/stage.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

/*
 * The absolute form of path with symlinks resolved: realpath(3) when it
 * exists; for a path that does not exist yet (an output), the resolved
 * parent plus the last name.  NULL when that fails too.
 */
static char *
resolve(const char *path, int may_be_new)
{
	char *r = realpath(path, NULL), *copy, *slash, *base, *dir;
	size_t len;

	if (r != NULL || !may_be_new || errno != ENOENT)
		return r;
	copy = kg_xstrdup(path);
	len = strlen(copy);
	while (len > 1 && copy[len - 1] == '/')
		copy[--len] = '\0';
	slash = strrchr(copy, '/');
	base = slash ? slash + 1 : copy;
	if (slash == copy)
		dir = realpath("/", NULL);
	else if (slash != NULL) {
		*slash = '\0';
		dir = realpath(copy, NULL);
	} else
		dir = realpath(".", NULL);
	if (dir == NULL || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
		r = NULL;
	else
		r = kg_xasprintf("%s/%s", strcmp(dir, "/") == 0 ? "" : dir,
		    base);
	free(dir);
	free(copy);
	return r;
}

/* 1 when the resolved path a is b or lies below it. */
static int
within(const char *a, const char *b)
{
	size_t n = strlen(b);

	if (strcmp(b, "/") == 0)
		return 1;
	return strncmp(a, b, n) == 0 && (a[n] == '\0' || a[n] == '/');
}

int
kg_stage_check_path(const char *what, const char *path,
    const char *const *inputs, size_t n, int may_hold)
{
	char *out = resolve(path, 1), *in;
	size_t i;
	int rc = 0;

	if (out == NULL)
		return 0;
	for (i = 0; rc == 0 && i < n; i++) {
		if (inputs[i] == NULL || strcmp(inputs[i], "-") == 0)
			continue;
		in = resolve(inputs[i], 0);
		if (in == NULL)
			continue;
		rc = -1;
		if (strcmp(out, in) == 0)
			kg_error("%s '%s' is the input '%s'", what, path,
			    inputs[i]);
		else if (within(out, in))
			kg_error("%s '%s' is inside the input '%s'", what, path,
			    inputs[i]);
		else if (!may_hold && within(in, out))
			kg_error("input '%s' is inside the %s '%s'",
			    inputs[i], what, path);
		else
			rc = 0;
		free(in);
	}
	free(out);
	return rc;
}

int
kg_stage_check_inputs(const char *output, const char *const *inputs,
    size_t n)
{
	return kg_stage_check_path("output", output, inputs, n, 0);
}

int
kg_stage_begin(struct kg_stage *st, const char *output, int force,
    const struct kg_stage_input *in, size_t n_in, int argc,
    char *const argv[])
{
	struct kg_stage z = KG_STAGE_INIT;
	const char **paths = kg_xcalloc(n_in + 1, sizeof(*paths));
	size_t i;
	int rc;

	*st = z;
	for (i = 0; i < n_in; i++)
		paths[i] = in[i].path;
	rc = kg_stage_check_inputs(output, paths, n_in);
	free(paths);
	if (rc < 0 || kg_outdir_begin(&st->od, output, force) < 0)
		return -1;
	st->dir = st->od.tmp;
	kg_manifest_init(&st->manifest, argc, argv);
	for (i = 0; i < n_in; i++) {
		if (in[i].role == NULL)
			continue;
		rc = kg_manifest_add_input(&st->manifest, in[i].role,
		    in[i].path);
		if (rc < 0) {
			kg_stage_release(st);
			return rc;
		}
	}
	return 0;
}

int
kg_stage_add_file(struct kg_stage *st, const char *name)
{
	return kg_manifest_add_file(&st->manifest, st->dir, name);
}

int
kg_stage_commit(struct kg_stage *st)
{
	if (st->dir == NULL) {
		kg_error("output directory was not started");
		return -1;
	}
	if (kg_manifest_write(&st->manifest, st->dir) < 0) {
		kg_outdir_abort(&st->od);
		st->dir = NULL;
		return -1;
	}
	st->dir = NULL;
	return kg_outdir_commit(&st->od);
}

void
kg_stage_release(struct kg_stage *st)
{
	struct kg_stage z = KG_STAGE_INIT;

	kg_outdir_abort(&st->od);
	kg_manifest_release(&st->manifest);
	*st = z;
}

int
kg_stage_write_file(const char *path, int force,
    const char *const *inputs, size_t n, const void *data, size_t len)
{
	if (kg_stage_check_inputs(path, inputs, n) < 0)
		return -1;
	return kg_outdir_write_file(path, force, data, len);
}
