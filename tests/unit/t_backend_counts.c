/*
 * backend.h's counters and empty work on the CPU backend: an operation
 * with nothing to do (an attention pass over empty sets too) returns 0
 * and counts nothing; copies, syncs and event waits are counted by
 * kind; each operation counts the launches the CUDA backend makes for
 * it, two where that backend makes two (tests/gpu/gpu_ops.c checks the
 * same sequence on a GPU against these numbers' source, the CPU
 * backend); a deferring CPU backend refuses an ordered upload's host
 * memory changed before the event after it was waited for.
 */
#include <stdint.h>
#include <string.h>

#include "test.h"
#include "compute/backend.h"
#include "core/util.h"

static struct kg_backend *be;

/* The counts equal (launches, copies, syncs, waits). */
static int
counts_w(uint64_t l, uint64_t c, uint64_t s, uint64_t w)
{
	struct kg_be_counts n = kg_backend_counts(be);

	if (n.launches == l && n.copies == c && n.syncs == s && n.waits == w)
		return 1;
	fprintf(stderr, "counts %llu/%llu/%llu/%llu, wanted "
	    "%llu/%llu/%llu/%llu\n", (unsigned long long)n.launches,
	    (unsigned long long)n.copies, (unsigned long long)n.syncs,
	    (unsigned long long)n.waits, (unsigned long long)l,
	    (unsigned long long)c, (unsigned long long)s,
	    (unsigned long long)w);
	return 0;
}

/* The same with no event waits. */
static int
counts_are(uint64_t l, uint64_t c, uint64_t s)
{
	return counts_w(l, c, s, 0);
}

static void
empty_work_is_a_noop(void)
{
	struct kg_dev_attn at;
	float x[8] = { 0 };
	int64_t idx[2] = { 0, 0 };
	int p;

	memset(&at, 0, sizeof(at));
	at.d = 4;		/* no destinations, sources nor types */
	kg_backend_counts_reset(be);
	for (p = KG_BE_ATTN_SCORES; p <= KG_BE_ATTN_BACK_REL; p++)
		T_CHECK(kg_be_attn(be, (enum kg_be_attn_pass)p, &at, x, x) ==
		    0);
	T_CHECK(kg_be_gather(be, 0, 4, x, idx, x) == 0);
	T_CHECK(kg_be_scatter_add(be, 2, 0, x, idx, x) == 0);
	T_CHECK(kg_be_scale(be, 0, 2.0f, x) == 0);
	T_CHECK(kg_be_zero(be, x, 0) == 0);
	T_CHECK(kg_be_upload(be, x, x, 0) == 0);
	T_CHECK(kg_be_seg_sum(be, 0, 4, NULL, x, 0, x, 4) == 0);
	T_CHECK(kg_be_upload_ordered(be, x, x, 0) == 0);
	T_CHECK(kg_be_loss_sum(be, NULL, 0, 4, x, x, NULL, 1.0f, x, x, NULL,
	    NULL) == 0);
	T_CHECK(counts_are(0, 0, 0));
}

static void
counts(void)
{
	float *d = kg_be_alloc(be, 64 * sizeof(float));
	float *h = kg_be_host_alloc(be, 64 * sizeof(float));
	struct kg_adam a = KG_ADAM_INIT;
	float q[32], c[32], g[32], dist[16], gq[32], gc[32], w[64], work[256];
	int64_t off[3] = { 0, 1, 2 }, ix[2] = { 0, 1 };
	struct kg_dev_seg sg = { off, NULL, ix, NULL, 1, 0, 0 };

	memset(q, 0, sizeof(q));
	memset(c, 0, sizeof(c));
	memset(g, 0, sizeof(g));
	memset(w, 0, sizeof(w));
	T_CHECK(kg_be_work_size(be, KG_KERN_DOT, 2, 2) <= 256);
	memset(h, 0, 64 * sizeof(float));
	kg_backend_counts_reset(be);
	T_CHECK(kg_be_upload(be, d, h, 64 * sizeof(float)) == 0);
	T_CHECK(counts_are(0, 1, 1));
	T_CHECK(kg_be_upload_async(be, d, h, 64 * sizeof(float)) == 0);
	T_CHECK(kg_be_download_async(be, h, d, 64 * sizeof(float)) == 0);
	T_CHECK(counts_are(0, 3, 1));
	T_CHECK(kg_be_sync(be) == 0);
	T_CHECK(kg_be_download(be, h, d, 64 * sizeof(float)) == 0);
	T_CHECK(counts_are(0, 4, 3));
	T_CHECK(kg_be_zero(be, d, 64 * sizeof(float)) == 0);
	T_CHECK(kg_be_scale(be, 64, 0.5f, d) == 0);
	T_CHECK(counts_are(2, 4, 3));
	/* One launch for both sides of a query's backward. */
	T_CHECK(kg_be_query_backward(be, KG_QFORM_ADD, 0, 2, 16, q, c, g, gq,
	    gc) == 0);
	T_CHECK(counts_are(3, 4, 3));
	/* An ordered upload is a copy without a sync; events cost no
	 * launch, a wait for one is a wait. */
	T_CHECK(kg_be_upload_ordered(be, d, h, 64 * sizeof(float)) == 0);
	T_CHECK(kg_be_event_record(be, 0) == 0);
	T_CHECK(kg_be_event_wait(be, 0) == 0);
	T_CHECK(kg_be_event_wait(be, KG_BE_EVENTS - 1) == 0);
	T_CHECK(counts_w(3, 5, 3, 2));
	kg_error_mute(1);
	T_CHECK(kg_be_event_record(be, KG_BE_EVENTS) < 0);
	T_CHECK(kg_be_event_wait(be, KG_BE_EVENTS) < 0);
	kg_error_mute(0);
	T_CHECK(counts_w(3, 5, 3, 2));
	kg_backend_counts_reset(be);
	T_CHECK(counts_are(0, 0, 0));
	T_CHECK(kg_be_upload(be, d, h, 64 * sizeof(float)) == 0);
	T_CHECK(kg_be_upload_async(be, d, h, 64 * sizeof(float)) == 0);
	T_CHECK(kg_be_download_async(be, h, d, 64 * sizeof(float)) == 0);
	T_CHECK(kg_be_sync(be) == 0);
	T_CHECK(kg_be_download(be, h, d, 64 * sizeof(float)) == 0);
	T_CHECK(kg_be_zero(be, d, 64 * sizeof(float)) == 0);
	T_CHECK(kg_be_scale(be, 64, 0.5f, d) == 0);
	T_CHECK(kg_be_query_backward(be, KG_QFORM_ADD, 0, 2, 16, q, c, g, gq,
	    gc) == 0);
	T_CHECK(kg_be_zero(be, d, 64 * sizeof(float)) == 0);
	T_CHECK(counts_are(4, 4, 3));
	T_CHECK(kg_be_chunk_backward(be, KG_KERN_DOT, 2, 2, 8, q, c, g, dist,
	    gq, gc, work) == 0);
	T_CHECK(kg_be_chunk_backward(be, KG_KERN_DOT, 2, 2, 8, q, c, g, dist,
	    gq, NULL, work) == 0);
	T_CHECK(counts_are(7, 4, 3));
	T_CHECK(kg_be_transr_backward(be, 1, 2, 2, 2, q, c, g, gq, gc) == 0);
	T_CHECK(kg_be_transr_backward(be, 1, 2, 2, 2, q, c, g, NULL, gc) == 0);
	T_CHECK(counts_are(10, 4, 3));
	T_CHECK(kg_be_adam_flat(be, 4, &a, g, w, w + 8) == 0);
	T_CHECK(kg_be_seg_sum_split(be, 2, 4, 1, &sg, q, 0, gq, 4, gc) == 0);
	T_CHECK(kg_be_seg_sum_split(be, 2, 4, 3, &sg, q, 0, gq, 4, gc) == 0);
	T_CHECK(counts_are(15, 4, 3));
	kg_backend_counts_reset(be);
	T_CHECK(counts_are(0, 0, 0));
	kg_be_host_free(be, h);
	kg_be_free(be, d);
}

/* A deferring CPU backend watches the host memory of ordered uploads
 * until the event after each is waited for. */
static void
ordered_watch(void)
{
	int64_t *d = kg_be_alloc(be, 8 * sizeof(int64_t));
	int64_t *h[2];
	int t, b;

	h[0] = kg_be_host_alloc(be, 8 * sizeof(int64_t));
	h[1] = kg_be_host_alloc(be, 8 * sizeof(int64_t));
	memset(h[0], 0, 8 * sizeof(int64_t));
	memset(h[1], 0, 8 * sizeof(int64_t));
	T_CHECK(kg_backend_cpu_defer_copies(be, 1) == 0);
	/* Two buffers in turn, each refilled after its event: fine. */
	for (t = 0; t < 10; t++) {
		b = t & 1;
		T_CHECK(kg_be_event_wait(be, (unsigned)b) == 0);
		h[b][t % 8] = t;
		T_CHECK(kg_be_upload_ordered(be, d, h[b], 8 *
		    sizeof(int64_t)) == 0);
		T_CHECK(d[t % 8] == t);
		T_CHECK(kg_be_event_record(be, (unsigned)b) == 0);
	}
	T_CHECK(kg_be_sync(be) == 0);
	kg_error_mute(1);
	/* Refilled before its event was waited for: refused. */
	T_CHECK(kg_be_upload_ordered(be, d, h[0], 8 * sizeof(int64_t)) == 0);
	T_CHECK(kg_be_event_record(be, 0) == 0);
	h[0][0] = 99;
	T_CHECK(kg_be_upload_ordered(be, d, h[1], 8 * sizeof(int64_t)) < 0);
	/* Changed with no event recorded: the sync says so. */
	T_CHECK(kg_be_upload_ordered(be, d, h[1], 8 * sizeof(int64_t)) == 0);
	h[1][0] = 98;
	T_CHECK(kg_be_sync(be) < 0);
	/* Waited for the other event only: still watched. */
	T_CHECK(kg_be_upload_ordered(be, d, h[0], 8 * sizeof(int64_t)) == 0);
	T_CHECK(kg_be_event_record(be, 0) == 0);
	T_CHECK(kg_be_event_wait(be, 1) == 0);
	h[0][1] = 97;
	T_CHECK(kg_be_event_wait(be, 0) < 0);
	/* A blocking copy waits for the compute stream: watched no more. */
	T_CHECK(kg_be_upload_ordered(be, d, h[0], 8 * sizeof(int64_t)) == 0);
	T_CHECK(kg_be_download(be, h[1], d, 8 * sizeof(int64_t)) == 0);
	h[0][2] = 96;
	T_CHECK(kg_be_sync(be) == 0);
	kg_error_mute(0);
	T_CHECK(kg_backend_cpu_defer_copies(be, 0) == 0);
	/* Not deferring: nothing is watched. */
	T_CHECK(kg_be_upload_ordered(be, d, h[0], 8 * sizeof(int64_t)) == 0);
	h[0][3] = 95;
	T_CHECK(kg_be_sync(be) == 0);
	kg_be_host_free(be, h[0]);
	kg_be_host_free(be, h[1]);
	kg_be_free(be, d);
}

int
main(void)
{
	struct kg_device dc = KG_DEVICE_INIT;

	be = kg_backend_open(&dc);
	if (be == NULL)
		return 1;
	T_RUN(empty_work_is_a_noop);
	T_RUN(counts);
	T_RUN(ordered_watch);
	kg_backend_free(be);
	return T_DONE();
}
