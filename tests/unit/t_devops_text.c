/*
 * The text encoder's operations on the device seam without a GPU
 * (lib/compute/devops_text.h, backend.h's kg_be_text_*).
 *   - Each thread function (the CUDA kernels' bodies) over an emulated
 *     grid, 256 and 32 threads a block, on a batch of packed texts of
 *     lengths 5, 1, 17 and 3 (so the last block is partial), against the
 *     CPU backend's operation: the same bits, guard floats untouched,
 *     and the launches the CUDA backend counts.
 *   - Against float64 references written here: LayerNorm, GELU (erf),
 *     attention over each text's own tokens (a softmax in double), mean,
 *     CLS and max pooling with and without Normalize, relative 1e-5
 *     (GELU's approximation absolute 1e-6).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compute/backend_impl.h"
#include "compute/devops_text.h"
#include "core/rng.h"
#include "core/util.h"
#include "devops_emu.h"
#include "test.h"

#define H 24
#define HEADS 3
#define NB 4
#define VOCAB 11
#define MAXPOS 20

static const uint32_t lens[NB] = { 5, 1, 17, 3 };
static struct kg_backend *cpu;
static struct kg_rng rng;

/* The batch's tok array (struct kg_dev_text's layout) and T. */
static uint32_t *
batch(struct kg_dev_text *T)
{
	size_t n = 0, b, p, at = 0;
	uint32_t *tok;

	for (b = 0; b < NB; b++)
		n += lens[b];
	tok = kg_xcalloc(3 * n + NB + 1, sizeof(*tok));
	for (b = 0; b < NB; b++) {
		tok[3 * n + b] = (uint32_t)at;
		for (p = 0; p < lens[b]; p++, at++) {
			tok[at] = (uint32_t)kg_rng_below(&rng, VOCAB);
			tok[n + at] = (uint32_t)p;
			tok[2 * n + at] = lens[b];
		}
	}
	tok[3 * n + NB] = (uint32_t)n;
	T->n = n;
	T->nb = NB;
	T->h = H;
	T->heads = HEADS;
	T->tok = tok;
	return tok;
}

/* LayerNorm of h doubles in place (biased variance), then g, b. */
static void
ref_norm(double *y, size_t h, const float *g, const float *b, double eps)
{
	double s = 0, ss = 0, mean;
	size_t j;

	for (j = 0; j < h; j++)
		s += y[j];
	mean = s / (double)h;
	for (j = 0; j < h; j++)
		ss += (y[j] - mean) * (y[j] - mean);
	for (j = 0; j < h; j++)
		y[j] = (y[j] - mean) / sqrt(ss / (double)h + eps) * g[j] + b[j];
}

static int
near_ref(const float *a, const double *ref, size_t n, const char *what)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!(fabs(a[i] - ref[i]) <= 1e-5 * fmax(1.0, fabs(ref[i])))) {
			fprintf(stderr, "%s[%zu]: %.9g against %.9g\n", what, i,
			    (double)a[i], ref[i]);
			return 0;
		}
	return 1;
}

static void
test_embed_norm(void)
{
	struct kg_dev_text T;
	uint32_t *tok = batch(&T);
	float *word = rnd(&rng, VOCAB * H, -1, 1), *pos = rnd(&rng,
	    MAXPOS * H, -1, 1), *type = rnd(&rng, H, -1, 1);
	float *g = rnd(&rng, H, 0.5f, 1.5f), *b = rnd(&rng, H, -0.2f, 0.2f);
	float *x = rnd(&rng, T.n * H, 0, 0), *t = rnd(&rng, T.n * H, -1, 1);
	float *e, *x2;
	double *ref = kg_xcalloc(T.n * H, sizeof(double));
	size_t r, j, k;
	uint64_t l0 = kg_backend_counts(cpu).launches;

	T_CHECK(kg_be_text_embed(cpu, &T, word, pos, type, g, b, 1e-12f,
	    x) == 0);
	T_CHECK(kg_backend_counts(cpu).launches == l0 + 1);
	for (r = 0; r < T.n; r++) {
		for (j = 0; j < H; j++)
			ref[r * H + j] = (double)word[tok[r] * H + j] +
			    pos[tok[T.n + r] * H + j] + type[j];
		ref_norm(ref + r * H, H, g, b, 1e-12);
	}
	T_CHECK(near_ref(x, ref, T.n * H, "embed"));
	for (k = 0; k < sizeof(bdims) / sizeof(bdims[0]); k++) {
		e = rnd(&rng, T.n * H, 0, 0);
		EMU(bdims[k], T.n, kg_dev_t_text_embed, T, word, pos, type, g,
		    b, 1e-12f, e);
		T_CHECK(close_tol(e, x, T.n * H, 0, "embed grid"));
		free(e);
	}
	/* x = LayerNorm(x + t) */
	x2 = dup(x, T.n * H);
	for (r = 0; r < T.n * H; r++)
		ref[r] = (double)x[r] + t[r];
	for (r = 0; r < T.n; r++)
		ref_norm(ref + r * H, H, g, b, 1e-5);
	T_CHECK(kg_be_text_add_norm(cpu, T.n, H, t, g, b, 1e-5f, x) == 0);
	T_CHECK(near_ref(x, ref, T.n * H, "add_norm"));
	for (k = 0; k < sizeof(bdims) / sizeof(bdims[0]); k++) {
		e = dup(x2, T.n * H);
		EMU(bdims[k], T.n, kg_dev_t_text_add_norm, T.n, H, t, g, b,
		    1e-5f, e);
		T_CHECK(close_tol(e, x, T.n * H, 0, "add_norm grid"));
		free(e);
	}
	free(x2);
	free(ref);
	free(word);
	free(pos);
	free(type);
	free(g);
	free(b);
	free(x);
	free(t);
	free(tok);
}

static void
test_bias_gelu(void)
{
	size_t n = 37, ncol = 13, i, k;
	float *y = rnd(&rng, n * ncol, -6, 6), *bias = rnd(&rng, ncol, -1, 1);
	float *y0 = dup(y, n * ncol), *e;
	double *ref = kg_xcalloc(n * ncol, sizeof(double)), worst = 0;
	int gelu;

	for (gelu = 0; gelu < 2; gelu++) {
		float *got = dup(y0, n * ncol);

		T_CHECK(kg_be_text_bias(cpu, n, ncol, bias, gelu, got) == 0);
		for (i = 0; i < n * ncol; i++) {
			double v = (double)(y0[i] + bias[i % ncol]);

			ref[i] = gelu ? 0.5 * v * (1 + erf(v / sqrt(2.0))) : v;
			worst = fmax(worst, fabs(got[i] - ref[i]));
		}
		for (k = 0; k < sizeof(bdims) / sizeof(bdims[0]); k++) {
			e = dup(y0, n * ncol);
			EMU(bdims[k], n * ncol, kg_dev_t_text_bias, n, ncol,
			    bias, gelu, e);
			T_CHECK(close_tol(e, got, n * ncol, 0, "bias grid"));
			free(e);
		}
		free(got);
	}
	T_CHECKF(worst <= 1e-6, "GELU off by %.3g", worst);
	free(ref);
	free(y);
	free(y0);
	free(bias);
}

static void
test_attention(void)
{
	struct kg_dev_text T;
	uint32_t *tok = batch(&T);
	size_t dh = H / HEADS, r, hd, j, k, b;
	float *qkv = rnd(&rng, T.n * 3 * H, -1, 1);
	float *ctx = rnd(&rng, T.n * H, 0, 0), *e;
	double *ref = kg_xcalloc(T.n * H, sizeof(double)), s[32];
	float scale = 1.0f / sqrtf((float)dh);

	(void)tok;
	T_CHECK(kg_be_text_attn(cpu, &T, scale, qkv, ctx) == 0);
	for (b = 0; b < NB; b++) {
		size_t lo = T.tok[3 * T.n + b], hi = T.tok[3 * T.n + b + 1];

		for (r = lo; r < hi; r++)
			for (hd = 0; hd < HEADS; hd++) {
				double mx = -INFINITY, sum = 0;

				for (j = lo; j < hi; j++) {
					s[j - lo] = 0;
					for (k = 0; k < dh; k++)
						s[j - lo] += (double)qkv[r * 3 *
						    H + hd * dh + k] * qkv[j *
						    3 * H + H + hd * dh + k];
					s[j - lo] *= scale;
					mx = fmax(mx, s[j - lo]);
				}
				for (j = lo; j < hi; j++)
					sum += exp(s[j - lo] - mx);
				for (k = 0; k < dh; k++) {
					double acc = 0;

					for (j = lo; j < hi; j++)
						acc += exp(s[j - lo] - mx) /
						    sum * qkv[j * 3 * H +
						    2 * H + hd * dh + k];
					ref[r * H + hd * dh + k] = acc;
				}
			}
	}
	T_CHECK(near_ref(ctx, ref, T.n * H, "attention"));
	for (k = 0; k < sizeof(bdims) / sizeof(bdims[0]); k++) {
		e = rnd(&rng, T.n * H, 0, 0);
		EMU(bdims[k], T.n * HEADS, kg_dev_t_text_attn, T, scale, qkv,
		    e);
		T_CHECK(close_tol(e, ctx, T.n * H, 0, "attention grid"));
		free(e);
	}
	free(ref);
	free(qkv);
	free(ctx);
	free(tok);
}

static void
test_pool(void)
{
	struct kg_dev_text T;
	uint32_t *tok = batch(&T);
	float *x = rnd(&rng, T.n * H, -2, 2);
	double ref[NB * H];
	size_t b, c, r, k;
	int mode, norm;

	for (mode = KG_DEV_TEXT_MEAN; mode <= KG_DEV_TEXT_MAX; mode++)
		for (norm = 0; norm < 2; norm++) {
			float *out = rnd(&rng, NB * H, 0, 0), *e;
			uint64_t l0 = kg_backend_counts(cpu).launches;

			T_CHECK(kg_be_text_pool(cpu, &T, mode, norm, x,
			    out) == 0);
			T_CHECK(kg_backend_counts(cpu).launches ==
			    l0 + 1 + (uint64_t)norm);
			for (b = 0; b < NB; b++) {
				size_t lo = tok[3 * T.n + b];
				size_t hi = tok[3 * T.n + b + 1];
				double nn = 0;

				for (c = 0; c < H; c++) {
					double v = x[lo * H + c];

					for (r = lo + 1; r < hi; r++)
						v = mode == KG_DEV_TEXT_MEAN ?
						    v + x[r * H + c] :
						    mode == KG_DEV_TEXT_MAX ?
						    fmax(v, x[r * H + c]) : v;
					if (mode == KG_DEV_TEXT_MEAN)
						v /= (double)(hi - lo);
					ref[b * H + c] = v;
					nn += v * v;
				}
				for (c = 0; norm && c < H; c++)
					ref[b * H + c] /= sqrt(nn);
			}
			T_CHECKF(near_ref(out, ref, NB * H, "pool"),
			    "mode %d normalize %d", mode, norm);
			for (k = 0; k < sizeof(bdims) / sizeof(bdims[0]); k++) {
				e = rnd(&rng, NB * H, 0, 0);
				EMU(bdims[k], NB * H, kg_dev_t_text_pool, T,
				    mode, x, e);
				if (norm)
					EMU(bdims[k], NB, kg_dev_t_text_l2norm,
					    NB, H, e);
				T_CHECK(close_tol(e, out, NB * H, 0,
				    "pool grid"));
				free(e);
			}
			free(out);
		}
	free(x);
	free(tok);
}

int
main(void)
{
	struct kg_device d = KG_DEVICE_INIT;

	cpu = kg_backend_open(&d);
	if (cpu == NULL)
		return 1;
	kg_rng_seed(&rng, 37, 0);
	T_RUN(test_embed_norm);
	T_RUN(test_bias_gelu);
	T_RUN(test_attention);
	T_RUN(test_pool);
	kg_backend_free(cpu);
	return T_DONE();
}
