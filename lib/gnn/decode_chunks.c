/*
 * gnn/decode_chunks: the GNN decoder with shared negatives
 * (gnn_decode.h's kg_gnn_decode_chunks).
 */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "gnn/gnn_decode.h"
#include "kge/grad.h"

/* One chunk's view and its thread's scratch. */
struct cview {
	const struct kg_model *m;
	const struct kg_loss *l;
	const float *h, *rel;
	const int32_t *pos, *cand;
	const uint8_t *side;
	size_t nb, chunk, kc, keep;
	float scale;
};

struct cscratch {
	float *H, *R, *T, *CM;		/* rows: heads, relations, tails,
					 * candidates */
	float *spos, *gpos, *sneg, *gneg, *dist;
	float *pwork, *cwork;
	uint8_t *skip;
};

/* Floats of one thread's scratch for chunks of C positives. */
static size_t
scratch_floats(const struct kg_model *m, size_t C, size_t kc)
{
	size_t d = m->dim, rw = m->rel_width;

	return C * (2 * d + rw) + kc * d + 2 * C + 2 * C * kc + kc +
	    kg_grad_work_size(m, C, 1) + kg_grad_work_size(m, C, kc) +
	    (C * kc + sizeof(float)) / sizeof(float) + 8;
}

static void
scratch_carve(struct cscratch *s, float *p, const struct kg_model *m,
    size_t C, size_t kc)
{
	size_t d = m->dim, rw = m->rel_width;

	s->H = p;
	s->R = s->H + C * d;
	s->T = s->R + C * rw;
	s->CM = s->T + C * d;
	s->spos = s->CM + kc * d;
	s->gpos = s->spos + C;
	s->sneg = s->gpos + C;
	s->gneg = s->sneg + C * kc;
	s->dist = s->gneg + C * kc;
	s->pwork = s->dist + kc;
	s->cwork = s->pwork + kg_grad_work_size(m, C, 1);
	s->skip = (uint8_t *)(s->cwork + kg_grad_work_size(m, C, kc));
}

/* Leave out, for positive i, its own replaced entity and (adaptive) all
 * but the keep candidates scored closest to it; ties go to the lower
 * index. */
static void
mark_skips(const struct cview *v, size_t c, size_t i0, size_t n,
    struct cscratch *s)
{
	size_t kc = v->kc, i, j, k;
	const int32_t *cd = v->cand + c * kc;

	for (i = 0; i < n; i++) {
		const int32_t *t = v->pos + 3 * (i0 + i);
		int32_t own = v->side[c] ? t[0] : t[2];
		uint8_t *sk = s->skip + i * kc;
		size_t avail = 0;

		for (j = 0; j < kc; j++) {
			sk[j] = cd[j] == own;
			avail += !sk[j];
		}
		if (v->keep >= kc || avail <= v->keep)
			continue;
		for (j = 0; j < kc; j++)
			s->dist[j] = sk[j] ? INFINITY :
			    fabsf(s->sneg[i * kc + j] - s->spos[i]);
		/* keep rounds of picking the closest unpicked: kc is small
		 * (negatives x candidates). */
		for (k = 0; k < v->keep; k++) {
			size_t best = kc;

			for (j = 0; j < kc; j++)
				if (s->dist[j] >= 0.0f && (best == kc ||
				    s->dist[j] < s->dist[best]))
					best = j;
			if (best == kc)		/* only NaN scores left */
				break;
			s->dist[best] = -1.0f;
		}
		for (j = 0; j < kc; j++)
			sk[j] = s->dist[j] != -1.0f;
	}
}

/* Chunk c: scores, losses into w->loss, gradients into w->gh_, gr_, gt_
 * (its positives' rows) and w->gcand (its candidates'). */
static void
chunk_pass(const struct cview *v, size_t c, struct cscratch *s,
    struct kg_gnn_decode_work *w)
{
	const struct kg_model *m = v->m;
	size_t d = m->dim, rw = m->rel_width, kc = v->kc, i, j;
	size_t i0 = c * v->chunk, n = v->nb - i0 < v->chunk ? v->nb - i0 :
	    v->chunk;
	enum kg_side sd = v->side[c] ? KG_SIDE_HEAD : KG_SIDE_TAIL;
	float *gH = w->gh_ + i0 * d, *gR = w->gr_ + i0 * rw;
	float *gT = w->gt_ + i0 * d, *gC = w->gcand + c * kc * d;

	for (i = 0; i < n; i++) {
		const int32_t *t = v->pos + 3 * (i0 + i);

		memcpy(s->H + i * d, v->h + (size_t)t[0] * d, d * sizeof(float));
		memcpy(s->R + i * rw, v->rel + (size_t)t[1] * rw,
		    rw * sizeof(float));
		memcpy(s->T + i * d, v->h + (size_t)t[2] * d, d * sizeof(float));
	}
	for (j = 0; j < kc; j++)
		memcpy(s->CM + j * d, v->h + (size_t)v->cand[c * kc + j] * d,
		    d * sizeof(float));
	kg_grad_pairs_forward(m, KG_SIDE_TAIL, n, s->H, s->R, s->T, s->spos,
	    s->pwork);
	kg_grad_chunk_forward(m, sd, n, sd == KG_SIDE_TAIL ? s->H : s->T,
	    s->R, s->CM, kc, s->sneg, s->cwork);
	mark_skips(v, c, i0, n, s);
	for (i = 0; i < n; i++) {
		w->loss[i0 + i] = kg_loss_eval(v->l, s->spos[i],
		    s->sneg + i * kc, kc, s->skip + i * kc, s->gpos + i,
		    s->gneg + i * kc);
		s->gpos[i] *= v->scale;
		for (j = 0; j < kc; j++)
			s->gneg[i * kc + j] *= v->scale;
	}
	memset(gH, 0, n * d * sizeof(float));
	memset(gR, 0, n * rw * sizeof(float));
	memset(gT, 0, n * d * sizeof(float));
	memset(gC, 0, kc * d * sizeof(float));
	kg_grad_pairs_backward(m, KG_SIDE_TAIL, n, s->H, s->R, s->T, s->gpos,
	    gH, gR, gT, s->pwork);
	kg_grad_chunk_backward(m, sd, n, sd == KG_SIDE_TAIL ? s->H : s->T,
	    s->R, s->CM, kc, s->gneg, sd == KG_SIDE_TAIL ? gH : gT, gR, gC,
	    s->cwork);
}

static inline void
add_row(float *restrict out, const float *restrict src, size_t n)
{
#pragma omp simd
	for (size_t x = 0; x < n; x++)
		out[x] += src[x];
}

/* Each thread owns a range of nodes and of relations and adds, chunk by
 * chunk, every positive's head, tail and relation rows, then the
 * candidates': a fixed order whatever the ranges. */
static void
scatter(const struct cview *v, uint64_t n_nodes, uint32_t n_relations,
    const struct kg_gnn_decode_work *w, float *gh, float *grel)
{
	size_t d = v->m->dim, rw = v->m->rel_width, kc = v->kc;
	size_t nch = (v->nb + v->chunk - 1) / v->chunk;

#pragma omp parallel
	{
		uint64_t t = (uint64_t)omp_get_thread_num();
		uint64_t nt = (uint64_t)omp_get_num_threads();
		uint64_t lo = n_nodes * t / nt, hi = n_nodes * (t + 1) / nt;
		uint64_t rlo = n_relations * t / nt;
		uint64_t rhi = n_relations * (t + 1) / nt;

		for (size_t c = 0; c < nch; c++) {
			size_t i1 = (c + 1) * v->chunk, i, j;

			for (i = c * v->chunk; i < i1 && i < v->nb; i++) {
				const int32_t *q = v->pos + 3 * i;
				uint64_t a = (uint64_t)q[0], r = (uint64_t)q[1];
				uint64_t b = (uint64_t)q[2];

				if (a >= lo && a < hi)
					add_row(gh + a * d, w->gh_ + i * d, d);
				if (b >= lo && b < hi)
					add_row(gh + b * d, w->gt_ + i * d, d);
				if (r >= rlo && r < rhi)
					add_row(grel + r * rw, w->gr_ + i * rw,
					    rw);
			}
			for (j = 0; j < kc; j++) {
				uint64_t e = (uint64_t)v->cand[c * kc + j];

				if (e >= lo && e < hi)
					add_row(gh + e * d, w->gcand +
					    (c * kc + j) * d, d);
			}
		}
	}
}

static void *
regrow(void *p, size_t n, size_t size)
{
	free(p);
	return kg_xmallocarray(n + 1, size);
}

static void
work_reserve(struct kg_gnn_decode_work *w, const struct kg_model *m,
    size_t nb, size_t ncand, size_t per)
{
	size_t d = m->dim, rw = m->rel_width;
	size_t thr = per * (size_t)omp_get_max_threads();

	if (nb > w->cap_pos || w->gh_ == NULL) {
		w->cap_pos = nb;
		w->gh_ = regrow(w->gh_, nb * d, sizeof(float));
		w->gt_ = regrow(w->gt_, nb * d, sizeof(float));
		w->gr_ = regrow(w->gr_, nb * rw, sizeof(float));
	}
	if (nb > w->cap_nb || w->loss == NULL) {
		w->cap_nb = nb;
		w->loss = regrow(w->loss, nb, sizeof(double));
	}
	if (ncand > w->cap_cand || w->gcand == NULL) {
		w->cap_cand = ncand;
		w->gcand = regrow(w->gcand, ncand * d, sizeof(float));
	}
	if (thr > w->cap_cthr || w->cthr == NULL) {
		w->cap_cthr = thr;
		w->cthr = regrow(w->cthr, thr, sizeof(float));
	}
}

void
kg_gnn_decode_chunks_reserve(struct kg_gnn_decode_work *w,
    const struct kg_model *m, size_t nb, size_t chunk, size_t kc)
{
	size_t C = chunk < nb ? chunk : nb;

	if (nb == 0 || chunk == 0)
		return;
	work_reserve(w, m, nb, (nb + chunk - 1) / chunk * kc,
	    scratch_floats(m, C, kc));
}

double
kg_gnn_decode_chunks(const struct kg_model *m, const struct kg_loss *l,
    const float *h, uint64_t n_nodes, const float *rel, uint32_t n_relations,
    const int32_t *pos, size_t nb, size_t chunk, const int32_t *cand,
    const uint8_t *side, size_t kc, size_t keep, float scale, float *gh,
    float *grel, struct kg_gnn_decode_work *w)
{
	struct cview v = { m, l, h, rel, pos, cand, side, nb, chunk, kc, keep,
	    scale };
	size_t nch = (nb + chunk - 1) / chunk, per, i;
	double loss = 0.0;

	if (nb == 0)
		return 0.0;
	if (v.chunk > nb)
		v.chunk = nb;
	per = scratch_floats(m, v.chunk, kc);
	work_reserve(w, m, nb, nch * kc, per);
#pragma omp parallel for schedule(dynamic, 1)
	for (size_t c = 0; c < nch; c++) {
		struct cscratch s;

		scratch_carve(&s, w->cthr + per * (size_t)omp_get_thread_num(),
		    m, v.chunk, kc);
		chunk_pass(&v, c, &s, w);
	}
	for (i = 0; i < nb; i++)
		loss += w->loss[i];
	scatter(&v, n_nodes, n_relations, w, gh, grel);
	return loss;
}
