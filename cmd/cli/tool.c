#include "cli/tool.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compute/compute.h"
#include "core/util.h"
#include "io/manifest.h"

void
kg_tool_tune_blas(char *argv[])
{
	const char *core = kg_compute_better_core();

	if (core == NULL || setenv("OPENBLAS_CORETYPE", core, 1) < 0)
		return;
	execv("/proc/self/exe", argv);
}

int
kg_tool_help(void (*usage)(FILE *))
{
	usage(stdout);
	return kg_close_stdout() < 0 ? KG_EXIT_FAIL : KG_EXIT_OK;
}

int
kg_tool_version(const char *name)
{
	printf("%s %s\n", name, KG_VERSION);
	return kg_close_stdout() < 0 ? KG_EXIT_FAIL : KG_EXIT_OK;
}

int
kg_tool_exit(int rc)
{
	int code = rc == 0 ? KG_EXIT_OK : rc == KG_ERR_VERSION ?
	    KG_EXIT_VERSION : KG_EXIT_FAIL;

	if (kg_close_stdout() < 0 && code == KG_EXIT_OK)
		code = KG_EXIT_FAIL;
	return code;
}

/* The long option named by "--name" or "--name=value" in arg, the count
 * of options that name abbreviates in *n (1 for an exact match). */
static const struct option *
find_long(const struct option *lo, const char *arg, size_t *n)
{
	const char *name = arg + 2;
	size_t len = strcspn(name, "=");
	const struct option *hit = NULL;

	*n = 0;
	for (; lo != NULL && lo->name != NULL; lo++) {
		if (strncmp(lo->name, name, len) != 0)
			continue;
		if (strlen(lo->name) == len) {
			*n = 1;
			return lo;
		}
		if (hit == NULL || hit->flag != lo->flag || hit->val != lo->val)
			(*n)++;
		hit = lo;
	}
	return hit;
}

/* getopt_long returned '?' for argv[optind - 1] (or optopt): say why. */
static void
option_error(int argc, char *const argv[], const char *optstring,
    const struct option *longopts)
{
	const char *arg = optind >= 1 && optind <= argc ? argv[optind - 1] :
	    "";
	const struct option *lo;
	size_t n = 0, len;

	/* A long option's error: optopt is 0 (unknown or ambiguous) or its
	 * value; otherwise a short option's, and arg may be another. */
	lo = strncmp(arg, "--", 2) == 0 && arg[2] != '\0' ?
	    find_long(longopts, arg, &n) : NULL;
	if (lo != NULL || (optopt == 0 && strncmp(arg, "--", 2) == 0)) {
		len = strcspn(arg, "=");
		if (optopt != 0 && (n != 1 || lo->flag != NULL ||
		    lo->val != optopt))
			goto short_opt;
		if (n == 0)
			kg_error("unrecognized option '%.*s'", (int)len, arg);
		else if (n > 1)
			kg_error("option '%.*s' is ambiguous", (int)len, arg);
		else if (arg[len] == '=' && lo->has_arg == no_argument)
			kg_error("option '--%s' takes no argument", lo->name);
		else
			kg_error("option '--%s' needs an argument", lo->name);
		return;
	}
short_opt:
	if (optopt != 0 && optopt != ':' && strchr(optstring, optopt) != NULL)
		kg_error("option '-%c' needs an argument", optopt);
	else if (optopt > 0x20 && optopt < 0x7f)
		kg_error("unrecognized option '-%c'", optopt);
	else
		kg_error("unrecognized option '%s'", arg);
}

int
kg_tool_getopt(int argc, char *const argv[], const char *optstring,
    const struct option *longopts, int *longindex)
{
	int ch;

	opterr = 0;
	ch = getopt_long(argc, argv, optstring, longopts, longindex);
	if (ch == '?')
		option_error(argc, argv, optstring, longopts);
	return ch;
}

int
kg_tool_usage_error(void)
{
	fprintf(stderr, "Try '%s --help' for more information.\n",
	    kg_progname());
	return KG_EXIT_USAGE;
}
