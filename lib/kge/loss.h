/*
 * loss: training losses over one positive score and its negatives' scores,
 * with their derivatives.
 *
 * With n negatives and weights w_j (uniform, or self-adversarial:
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
 * float, sums double; stable for scores of any size.
 */
#ifndef KG_LOSS_H
#define KG_LOSS_H

#include <stddef.h>
#include <stdint.h>

enum kg_loss_kind {
	KG_LOSS_LOGISTIC,
	KG_LOSS_MARGIN,
	KG_LOSS_SOFTMAX,
	KG_LOSS_BCE
};

struct kg_loss {
	enum kg_loss_kind kind;
	double margin;		/* margin loss only */
	double adv_temp;	/* self-adversarial temperature; 0 = off */
};

#define KG_LOSS_INIT { .kind = KG_LOSS_LOGISTIC, .margin = 1.0 }

/* "logistic", "margin" (or "ranking"), "softmax", "bce"; 0, or -1 after
 * kg_error(). */
int kg_loss_parse(const char *name, enum kg_loss_kind *kind);
const char *kg_loss_name(enum kg_loss_kind kind);

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

#endif
