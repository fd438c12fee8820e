/*
 * gnntrain/device_dist: GNN training on devices under mpirun.  Each
 * rank's device step downloads its gradients into the host's buffer
 * (device.c), where step.c averages the dense ones over the
 * ranks and sums the learned rows as it does for the CPU step, so the
 * ranks need nothing more than a GPU each: local rank mod the GPUs
 * visible (dist/gpus.h) for --device cuda (or cuda:0), every rank on N
 * for --device cuda:N with N > 0.  The test hook (o->seam) runs every
 * rank on the CPU backend.
 */
#include "dist/gpus.h"
#include "gnntrain/train_state.h"

int
kg_gnn_device_of_rank(const struct kg_gnn_tstate *ts, struct kg_device *dev)
{
	const struct kg_gnn_train_opts *o = ts->o;
	int lrank, lsize, id;

	*dev = o->device;
	if (o->seam) {
		*dev = (struct kg_device)KG_DEVICE_INIT;
		return 0;
	}
	if (o->device.kind == KG_DEVICE_CPU || ts->d->size == 1)
		return 0;
	kg_dist_local_rank(ts->d, &lrank, &lsize);
	if (kg_gpu_pick(lrank, kg_gpu_count(), NULL, 0, o->device.index > 0 ?
	    o->device.index : -1, &id) < 0)
		return -1;
	dev->index = id;
	return 0;
}
