#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/cliopts.h"
#include "core/util.h"

char **
kg_cli_argv(int argc, char *argv[], const char *const (*aliases)[2],
    size_t n_aliases)
{
	char **out = kg_xcalloc((size_t)argc + 1, sizeof(*out));
	int i, rest = 0;
	size_t k;
	char *p;

	for (i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (i > 0 && !rest && strcmp(a, "--") == 0)
			rest = 1;
		else if (i > 0 && !rest)
			for (k = 0; k < n_aliases; k++)
				if (strcmp(a, aliases[k][0]) == 0)
					a = aliases[k][1];
		out[i] = kg_xstrdup(a);
		if (i > 0 && !rest && strncmp(out[i], "--", 2) == 0)
			for (p = out[i] + 2; *p && *p != '='; p++)
				if (*p == '-')
					*p = '_';
	}
	return out;
}

void
kg_cli_argv_free(int argc, char **av)
{
	int i;

	if (av == NULL)
		return;
	for (i = 0; i < argc; i++)
		free(av[i]);
	free(av);
}

/* 1 if av[i] is a long option of opts that takes its value from the
 * next argument ("--name value", not "--name=value"). */
static int
takes_next(const struct option *opts, const char *a)
{
	const struct option *o;

	if (strncmp(a, "--", 2) != 0 || strchr(a, '=') != NULL)
		return 0;
	for (o = opts; o->name != NULL; o++)
		if (strcmp(o->name, a + 2) == 0)
			return o->has_arg == required_argument;
	return 0;
}

/* Flags: 1 for each positional argument of av[1..argc), 2 for each
 * extra value of a multi-value option (also positional). */
static void
mark_args(int argc, char **av, const struct option *opts,
    const char *const *multi, size_t n, unsigned char *mark)
{
	int i, in_multi = 0;
	size_t k;

	for (i = 1; i < argc; i++) {
		const char *a = av[i];

		if (strcmp(a, "--") == 0) {
			for (i++; i < argc; i++)
				mark[i] = 1;
			return;
		}
		/* A negative number after a multi-value option is one of
		 * its values (DGL-KE's --gpu -1), not an option. */
		if (a[0] == '-' && a[1] != '\0' &&
		    !(in_multi && a[strspn(a + 1, "0123456789") + 1] == '\0')) {
			in_multi = 0;
			for (k = 0; k < n; k++)
				in_multi |= strcmp(a, multi[k]) == 0;
			if (takes_next(opts, a) && i + 1 < argc)
				i++;
			continue;
		}
		mark[i] = in_multi ? 3 : 1;
	}
}

int
kg_cli_multi_values(int argc, char **av, const struct option *opts,
    const char *const *multi, size_t n, int operands)
{
	unsigned char *mark = kg_xcalloc((size_t)argc + 1, 1);
	char **tmp = kg_xcalloc((size_t)argc + 1, sizeof(*tmp));
	int i, k = 0, positional = 0, drop;

	mark_args(argc, av, opts, multi, n, mark);
	for (i = 1; i < argc; i++)
		positional += mark[i] != 0;
	/* Drop extra values in order while enough operands remain. */
	for (i = 1; i < argc; i++) {
		drop = mark[i] == 3 && positional > operands;
		if (drop) {
			positional--;
			mark[i] = 4;
		}
	}
	tmp[k++] = av[0];
	for (i = 1; i < argc; i++)
		if (mark[i] != 4)
			tmp[k++] = av[i];
	drop = k;
	for (i = 1; i < argc; i++)
		if (mark[i] == 4)
			tmp[k++] = av[i];
	memcpy(av, tmp, (size_t)argc * sizeof(*av));
	free(tmp);
	free(mark);
	return drop;
}

/* The entry of opts that a config key names, or NULL. */
static const struct option *
find_key(const struct option *opts, const char *key)
{
	char *name = kg_xstrdup(key), *p;
	const struct option *o;

	for (p = name; *p; p++)
		if (*p == '-')
			*p = '_';
	for (o = opts; o->name != NULL; o++)
		if (strcmp(o->name, name) == 0)
			break;
	free(name);
	return o->name != NULL ? o : NULL;
}

/*
 * The option values read from config files, kept until exit: apply may
 * keep the pointer it is given (a path such as --features or
 * --checkpoint_dir), as it keeps argv's, while the JSON document and the
 * number buffer are gone once the file is read.
 */
static char **kept;
static size_t n_kept;

static void
kept_release(void)
{
	size_t i;

	for (i = 0; i < n_kept; i++)
		free(kept[i]);
	free(kept);
	kept = NULL;
	n_kept = 0;
}

/* A copy of s that lives until exit. */
static const char *
keep(const char *s)
{
	if (n_kept == 0 && kept == NULL)
		atexit(kept_release);
	kept = kg_xreallocarray(kept, n_kept + 1, sizeof(*kept));
	kept[n_kept] = kg_xstrdup(s);
	return kept[n_kept++];
}

int
kg_cli_config(const char *path, const struct option *opts,
    int config_val, int ignored_val,
    int (*apply)(void *ctx, int val, const char *arg), void *ctx)
{
	json_error_t jerr;
	json_t *root = json_load_file(path, 0, &jerr), *v;
	const char *key;
	char buf[64];
	int rc = 0;

	if (root == NULL || !json_is_object(root)) {
		kg_error("%s:%d: %s", path, jerr.line, root ? "not a JSON "
		    "object" : jerr.text);
		json_decref(root);
		return -1;
	}
	json_object_foreach(root, key, v) {
		const struct option *o;
		const char *arg = buf;

		buf[0] = '\0';
		if (key[0] == '_')	/* "_comment", "_source": notes */
			continue;
		o = find_key(opts, key);
		if (o == NULL || o->val == config_val) {
			kg_error("%s: unknown key '%s'", path, key);
			rc = -1;
			break;
		}
		if (o->has_arg == no_argument) {
			/* A flag: true or false, nothing that reads as a
			 * count ("double_ent": 0 must not turn it on). */
			if (!json_is_boolean(v)) {
				kg_error("%s: key '%s' takes true or false",
				    path, key);
				rc = -1;
				break;
			}
			if (json_is_false(v))
				continue;
		} else if (json_is_string(v))
			arg = json_string_value(v);
		else if (json_is_integer(v))
			snprintf(buf, sizeof(buf), "%lld",
			    (long long)json_integer_value(v));
		else if (json_is_real(v))
			snprintf(buf, sizeof(buf), "%.17g", json_real_value(v));
		else {
			kg_error("%s: key '%s' has a value of the wrong type",
			    path, key);
			rc = -1;
			break;
		}
		if (o->val == ignored_val)
			kg_warn("%s: ignoring key '%s', which has no effect "
			    "here", path, key);
		if (apply(ctx, o->val, keep(arg)) < 0) {
			rc = -1;
			break;
		}
	}
	json_decref(root);
	return rc;
}

int
kg_cli_configs(int argc, char **av, const struct option *opts,
    int config_val, int ignored_val,
    int (*apply)(void *ctx, int val, const char *arg), void *ctx)
{
	int i;

	for (i = 1; i < argc; i++) {
		const char *f;

		if (strcmp(av[i], "--") == 0)
			break;
		if (strcmp(av[i], "--config") != 0 &&
		    strncmp(av[i], "--config=", 9) != 0)
			continue;
		f = av[i][8] == '=' ? av[i] + 9 : i + 1 < argc ? av[i + 1] :
		    NULL;
		if (f == NULL) {
			kg_error("--config needs a file");
			return -1;
		}
		if (kg_cli_config(f, opts, config_val, ignored_val, apply,
		    ctx) < 0)
			return -1;
	}
	return 0;
}
