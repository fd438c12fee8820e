/*
 * gpus: which GPU each rank of an mpirun job trains on.
 *
 * A rank's local rank is its number among the ranks of its own machine
 * (kg_dist_local_rank, MPI_Comm_split_type with MPI_COMM_TYPE_SHARED).
 * The choice (kg_gpu_pick) is a pure function of the local rank, the
 * number of GPUs visible and what the command line asked for:
 *
 *   a list (kg-train --gpus 0,2): list[local rank mod its length], so a
 *   list shorter than the ranks of a machine is cycled (ranks share a
 *   GPU);
 *   one GPU (--device cuda:N, --gpu N): every rank of the machine on N;
 *   neither (--device cuda): local rank mod the GPUs visible.
 *
 * Every rank of a machine sees the same count and list, so a refusal is
 * the same on each.
 */
#ifndef KG_DIST_GPUS_H
#define KG_DIST_GPUS_H

#include <stddef.h>

#include "dist/dist.h"

/* The most entries --gpus takes. */
#define KG_GPU_LIST_MAX 1024

/*
 * Parse a comma list of GPU numbers ("0,1,3"; each 0 ..
 * KG_DEVICE_MAX_INDEX, at most KG_GPU_LIST_MAX of them, none empty) into
 * list (KG_GPU_LIST_MAX entries), *n of them; what names the option.
 * 0, or -1 after kg_error().
 */
int kg_gpu_list_parse(const char *what, const char *s, int *list, size_t *n);

/*
 * The GPU of local rank lrank (>= 0) with count GPUs visible: list[lrank
 * mod n] when n > 0, else pinned when pinned >= 0, else lrank mod count.
 * 0 with *dev set, or -1 after kg_error() in one line: no GPU visible
 * (count <= 0), or the GPU chosen is not one of those visible.
 */
int kg_gpu_pick(int lrank, int count, const int *list, size_t n, int pinned,
    int *dev);

/*
 * The number of GPUs visible to this process through the compute
 * backend (0 in a build without CUDA, or where the runtime finds none).
 */
int kg_gpu_count(void);

/*
 * This rank's number among the ranks on its machine, and how many there
 * are (collective: every rank calls it; one process: 0 of 1).
 */
void kg_dist_local_rank(struct kg_dist *d, int *lrank, int *lsize);

#endif
