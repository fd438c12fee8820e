/*
 * Opening the GPU a tests/gpu program checks, and what it says when it
 * cannot.  Where no GPU is expected (a build machine), a backend that
 * does not open is a skip: one line "skip - PROG: why", exit 0, which
 * tests/gpu/run.sh reports as "test-gpu: skipped: why".  Where one is
 * expected (KG_GPU_REQUIRE set to anything but "" or "0": bench/
 * gpu_device.sh sets it on the lent GPU machine, tests/gpu/run.sh when
 * nvidia-smi lists a GPU), the same failure is a failed test: "not ok -
 * PROG: no GPU backend: why", exit 1, so that a run with cuBLAS missing
 * or a driver the runtime rejects cannot pass having tested nothing.
 */
#ifndef KG_TESTS_GPU_OPEN_H
#define KG_TESTS_GPU_OPEN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compute/backend.h"
#include "core/util.h"

/* 1 when KG_GPU_REQUIRE asks for a GPU, 0 when not. */
static int
gpu_required(void)
{
	const char *r = getenv("KG_GPU_REQUIRE");

	return r != NULL && *r != '\0' && strcmp(r, "0") != 0;
}

/*
 * kg_backend_open(d) for the test program prog, its errors muted; NULL
 * when it fails, after printing the skip or not-ok line above.  main
 * then returns gpu_required() (0 for the skip, 1 for the failure).
 */
static struct kg_backend *
gpu_open(const char *prog, const struct kg_device *d)
{
	struct kg_backend *be;

	kg_error_mute(1);
	be = kg_backend_open(d);
	kg_error_mute(0);
	if (be != NULL)
		return be;
	if (gpu_required())
		printf("not ok - %s: no GPU backend (KG_GPU_REQUIRE is "
		    "set): %s\n", prog, kg_error_last());
	else
		printf("skip - %s: %s\n", prog, kg_error_last());
	return NULL;
}

#endif
