/*
 * bert_impl: what the host path (bert_forward.c) and the device path
 * (bert_device.c) of the BERT encoder share.  Internal to lib/attrs.
 */
#ifndef KG_BERT_IMPL_H
#define KG_BERT_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "attrs/bert.h"

/* A text of the encoding: its token count and its index. */
struct kg_bert_order {
	uint64_t len;
	size_t i;
};

/*
 * The device path of kg_bert_encode: open a backend on dev (the CPU
 * backend for KG_DEVICE_CPU), upload the weights once, then for each
 * batch of batch texts of order[0..n) (longest first; cap >= the tokens
 * of any batch) upload its tokens (ids[off[t] .. off[t + 1]) of text t)
 * in one copy, run the forward pass there and download the pooled
 * vectors in one copy into out[t * hidden ..).  stats (may be NULL):
 * batches, copies and backend filled.  0, or -1 after kg_error().
 */
int kg_bert_run_device(const struct kg_bert *m, const struct kg_device *dev,
    size_t batch, size_t cap, size_t n, const struct kg_bert_order *order,
    const uint32_t *ids, const uint64_t *off, float *out,
    struct kg_bert_stats *stats);

#endif
