/*
 * device_opt: the --device option of the tools that compute (kg-train,
 * kg-eval, kg-predict) and DGL-KE's --gpu, its alias in kg-train.
 *
 * --device cpu (the default) is what the tools have always done.  A CUDA
 * device is refused before any work, in one line and with exit status
 * KG_EXIT_USAGE, never run on the CPU instead: when the tool was built
 * without the CUDA backend (how to rebuild), when no GPU is visible (the
 * CUDA runtime's error), or, with a GPU there, because the tool's work
 * does not run on it yet.
 */
#ifndef KG_DEVICE_OPT_H
#define KG_DEVICE_OPT_H

#include <stddef.h>

#include "compute/backend.h"

/* --device DEV: "cpu", "cuda" or "cuda:N"; 0, or -1 after kg_error(). */
int kg_cli_device(const char *arg, struct kg_device *d);

/* DGL-KE's --gpu N: -1 is the CPU, N >= 0 is cuda:N; 0 or -1. */
int kg_cli_gpu(const char *arg, struct kg_device *d);

/* kg-train's --gpus LIST: GPU numbers separated by commas, one per local
 * rank under mpirun, cycled (dist/gpus.h); into list (KG_GPU_LIST_MAX
 * entries), *n of them.  0 or -1. */
int kg_cli_gpus(const char *arg, int *list, size_t *n);

/*
 * KG_EXIT_OK when "work" ("training", "evaluation", "prediction") can run
 * on d; otherwise one line through kg_error() and KG_EXIT_USAGE.
 */
int kg_cli_device_ready(const struct kg_device *d, const char *work);

#endif
