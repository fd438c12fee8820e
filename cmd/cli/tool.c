#include "cli/tool.h"

#include <stdlib.h>
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
