/*
 * gnntrain/part: one rank's kg-expand part, read and checked; see train_io.h.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "gnntrain/train_io.h"

void
kg_gnn_part_release(struct kg_gnn_part *pt)
{
	kg_npy_release(&pt->nodes);
	kg_npy_release(&pt->edges);
	kg_npy_release(&pt->core);
	kg_npy_release(&pt->pool);
	kg_npy_release(&pt->owner);
	free(pt->core_hrt);
}

int
kg_gnn_part_load(struct kg_gnn_part *pt, const char *dir, uint64_t n_entities,
    uint32_t n_relations)
{
	static const char *names[5] = { "nodes.npy", "edges.npy",
	    "core_mask.npy", "neg_pool.npy", "owner.npy" };
	struct kg_npy *arr[5] = { &pt->nodes, &pt->edges, &pt->core,
	    &pt->pool, &pt->owner };
	static const enum kg_dtype dts[5] = { KG_DT_I4, KG_DT_I4, KG_DT_U1,
	    KG_DT_I4, KG_DT_I4 };
	static const int nds[5] = { 1, 2, 1, 1, 1 };
	uint64_t i, n, m;
	int k;

	for (k = 0; k < 5; k++) {
		char *path = kg_path_join(dir, names[k]);
		int rc = kg_npy_read_expect(path, dts[k], nds[k], arr[k]);

		free(path);
		if (rc < 0)
			return -1;
	}
	n = pt->nodes.shape[0];
	m = pt->edges.shape[0];
	if (pt->edges.shape[1] != 3 || pt->core.shape[0] != m) {
		kg_error("'%s': edges.npy and core_mask.npy do not match", dir);
		return -1;
	}
	if (pt->owner.shape[0] != n) {
		kg_error("'%s': nodes.npy and owner.npy do not match", dir);
		return -1;
	}
	for (i = 0; i < n; i++) {
		int32_t v = ((const int32_t *)pt->nodes.data)[i];

		if (v < 0 || (uint64_t)v >= n_entities) {
			kg_error("'%s': nodes.npy row %" PRIu64 " is not an "
			    "entity of the dataset", dir, i);
			return -1;
		}
	}
	for (i = 0; i < m; i++) {
		const int32_t *t = (const int32_t *)pt->edges.data + 3 * i;

		if (t[0] < 0 || (uint64_t)t[0] >= n || t[2] < 0 ||
		    (uint64_t)t[2] >= n || t[1] < 0 ||
		    (uint32_t)t[1] >= n_relations) {
			kg_error("'%s': edges.npy row %" PRIu64 " is out of "
			    "range", dir, i);
			return -1;
		}
	}
	for (i = 0; i < pt->pool.shape[0]; i++) {
		int32_t v = ((const int32_t *)pt->pool.data)[i];

		if (v < 0 || (uint64_t)v >= n) {
			kg_error("'%s': neg_pool.npy row %" PRIu64 " is out of "
			    "range", dir, i);
			return -1;
		}
	}
	pt->core_hrt = kg_xmallocarray(3 * m + 3, sizeof(int32_t));
	for (i = 0; i < m; i++)
		if (((const uint8_t *)pt->core.data)[i])
			memcpy(pt->core_hrt + 3 * pt->n_core++,
			    (const int32_t *)pt->edges.data + 3 * i,
			    3 * sizeof(int32_t));
	return 0;
}
