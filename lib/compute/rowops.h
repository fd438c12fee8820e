/*
 * rowops: the per-row arithmetic of training on the CPU: the losses over
 * one positive and its negatives, the sparse optimisers' row updates and
 * the regularisers (moved here from lib/kge/loss.c and lib/kge/optim.c so
 * that the compute backends, lib/compute/backend.h, can run them without
 * lib/compute depending on lib/kge; lib/kge/loss.h and optim.h include
 * this header, and the functions kept their names).
 *
 * Losses.  With n negatives and weights w_j (uniform, or self-adversarial:
 * w_j = softmax_j(alpha * neg_j), treated as constants as RotatE and
 * DGL-KE do):
 *   logistic  0.5 * (softplus(-pos) + sum_j w_j softplus(neg_j)), with
 *             w_j = 1/n uniform (DGL-KE; the margin gamma lives in the
 *             distance models' scores);
 *   margin    sum_j n w_j max(0, margin - pos + neg_j), w_j = 1/n uniform
 *             (PBG's ranking loss: a plain sum over negatives);
 *   softmax   -pos + log(exp(pos) + sum_j exp(neg_j)) (PBG, LibKGE;
 *             self-adversarial weights do not apply);
 *   bce       (softplus(-pos) + sum_j n w_j softplus(neg_j)) / (1 + n),
 *             binary cross-entropy averaged over the 1 + n labels.
 * softplus(x) = log(1 + e^x) = -log sigmoid(-x).  Per-negative terms are
 * float, sums double; stable for scores of any size.  The per-element
 * terms are lib/compute/devops_loss.h's, which the CUDA backend shares.
 *
 * Optimisers.  Row-wise Adagrad (PBG, DGL-KE): one accumulator per row,
 * the running sum of the mean squared gradient of the row; a row update is
 *   state += mean(g^2);  w -= lr * g / (sqrt(state) + eps).
 * Its state is one float per row, so sparse updates of a few rows per step
 * cost only those rows, and Hogwild threads may update disjoint or even
 * the same rows without locks (races lose an update, never corrupt one).
 * Element-wise Adagrad (kbc, LibKGE: PyTorch's Adagrad): one accumulator
 * per element, state += g^2; w -= lr * g / (sqrt(state) + eps); its state
 * row is n floats.  Adam (for dense weights, here the relation table): per
 * element first and second moments and a per-row step count, updated
 * lazily when the row gets a gradient (PyTorch's SparseAdam); its state
 * row is [m (n) | v (n) | t (1)], 2n + 1 floats.
 *
 * Nothing here allocates or reports errors; every function is
 * thread-safe on disjoint outputs.
 */
#ifndef KG_ROWOPS_H
#define KG_ROWOPS_H

#include <stddef.h>
#include <stdint.h>

#include "compute/kinds.h"

struct kg_loss {
	enum kg_loss_kind kind;
	double margin;		/* margin loss only */
	double adv_temp;	/* self-adversarial temperature; 0 = off */
};

#define KG_LOSS_INIT { .kind = KG_LOSS_LOGISTIC, .margin = 1.0 }

/*
 * Loss of one positive (score pos) against neg[0..n).  skip, when not
 * NULL, marks negatives to leave out (skip[j] != 0: known positives, or
 * the target itself in 1-vs-all scoring); they get gneg[j] = 0.  Writes
 * dL/dpos to *gpos and dL/dneg_j to gneg[j]; returns the loss.  With every
 * negative skipped only the positive term remains.
 */
double kg_loss_eval(const struct kg_loss *l, float pos, const float *neg,
    size_t n, const uint8_t *skip, float *gpos, float *gneg);

/*
 * kg_loss_eval with gneg[j] multiplied by post as well (*gpos is not):
 * the same bits as kg_loss_eval followed by gneg[j] *= post, in one pass
 * over the negatives where the weights are uniform and none is skipped.
 */
double kg_loss_eval_scaled(const struct kg_loss *l, float pos,
    const float *neg, size_t n, const uint8_t *skip, float post, float *gpos,
    float *gneg);

/*
 * Cross-entropy of the softmax over n scores s[0..n) with the answer
 * target < n: -s[target] + log sum_j exp(s_j).  Writes scale * dL/ds_j to
 * g[j] and returns the loss.  The 1-vs-all objective over a fixed set,
 * such as every relation (the relation-prediction term).
 */
double kg_loss_softmax_xent(const float *s, size_t n, size_t target,
    float scale, float *g);

/* softplus(x) = log(1 + exp(x)), stable. */
double kg_softplus(double x);
/* sigmoid(x), stable. */
double kg_sigmoid(double x);

struct kg_adam {
	float lr, beta1, beta2, eps;
};

#define KG_ADAM_INIT { .lr = 0.001f, .beta1 = 0.9f, .beta2 = 0.999f, \
	.eps = 1e-8f }

/* One row-wise Adagrad step of row w (n floats) with gradient g. */
void kg_adagrad_row(float *restrict w, float *restrict state,
    const float *restrict g, size_t n, float lr);

/* One element-wise Adagrad step of row w (n floats); state is n floats. */
void kg_adagrad_elem_row(float *restrict w, float *restrict state,
    const float *restrict g, size_t n, float lr);

/* One Adam step of row w (n floats); state is 2n + 1 floats. */
void kg_adam_row(float *restrict w, float *restrict state,
    const float *restrict g, size_t n, const struct kg_adam *a);

/*
 * The regulariser coef * sum_i |x_i|^p (p = 2: L2, p = 3: N3) over n
 * floats: adds scale times its gradient to g and returns its value
 * (without scale), in double.
 */
double kg_regularise(const float *restrict x, float *restrict g, size_t n,
    double coef, unsigned p, double scale);

/* Scale g (n floats) so its L2 norm is at most max_norm (> 0). */
void kg_clip_row(float *g, size_t n, float max_norm);

#endif
