/*
 * train_buckets_warm: the bucket driver's warm start (kge/warmstart.h)
 * in one process and under mpirun; see train_buckets_impl.h.
 */
#include "app/train_buckets_impl.h"

#include <stdlib.h>

#include "kge/warmstart.h"

int
kg_buckets_warm_start(struct kg_buckets *v)
{
	uint8_t *mine;
	uint32_t p;
	int me = v->d->rank, n = v->d->size, rc;

	if (!kg_warmstart_given(v->j->warm))
		return 0;
	mine = kg_xmallocarray(v->P, sizeof(*mine));
	for (p = 0; p < v->P; p++)
		mine[p] = (int)(p % (uint32_t)n) == me;
	rc = kg_warmstart_run_parts(&v->tr, &v->ds, v->pb.new2old, mine,
	    v->j->warm, v->config, v->show);
	free(mine);
	if (rc < 0)
		return rc;
	/* Every rank keeps the same book: the first round's transition
	 * moves each partition from where it was written. */
	for (p = 0; p < v->P; p++)
		v->loc[p] = (int32_t)(p % (uint32_t)n);
	return 0;
}

int
kg_buckets_warm_forget(struct kg_buckets *v)
{
	uint32_t p;
	float *buf;

	if (!kg_warmstart_given(v->j->warm) || v->d->size == 1)
		return 0;
	for (p = 0; p < v->P; p++) {
		if (v->loc[p] != v->d->rank)
			continue;
		if ((buf = kg_store_take(v->st, p)) == NULL)
			return -1;
		kg_store_buf_free(v->st, p, buf);
		v->loc[p] = -1;
	}
	return 0;
}
