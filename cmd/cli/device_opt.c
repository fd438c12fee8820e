#include "cli/device_opt.h"

#include <stdint.h>

#include "cli/tool.h"
#include "core/util.h"
#include "dist/gpus.h"

int
kg_cli_device(const char *arg, struct kg_device *d)
{
	return kg_device_parse("--device", arg, d);
}

int
kg_cli_gpu(const char *arg, struct kg_device *d)
{
	int64_t n;

	if (kg_parse_i64("--gpu", arg, -1, KG_DEVICE_MAX_INDEX, &n) < 0)
		return -1;
	d->kind = n < 0 ? KG_DEVICE_CPU : KG_DEVICE_CUDA;
	d->index = n < 0 ? 0 : (int)n;
	return 0;
}

int
kg_cli_gpus(const char *arg, int *list, size_t *n)
{
	return kg_gpu_list_parse("--gpus", arg, list, n);
}

int
kg_cli_device_ready(const struct kg_device *d, const char *work)
{
	if (d->kind == KG_DEVICE_CPU)
		return KG_EXIT_OK;
	if (kg_backend_check(d) < 0)
		return KG_EXIT_USAGE;
	kg_error("cuda:%d: %s does not run on a GPU yet (the CUDA backend is "
	    "built and a GPU is visible; use --device cpu)", d->index, work);
	return KG_EXIT_USAGE;
}
