/*
 * optim: per-row optimiser updates for embedding tables.
 *
 * Row-wise Adagrad (PBG, DGL-KE): one accumulator per row, the running
 * sum of the mean squared gradient of the row; a row update is
 *   state += mean(g^2);  w -= lr * g / (sqrt(state) + eps).
 * Its state is one float per row, so sparse updates of a few rows per step
 * cost only those rows, and Hogwild threads may update disjoint or even
 * the same rows without locks (races lose an update, never corrupt one).
 *
 * Element-wise Adagrad (kbc, LibKGE: PyTorch's Adagrad): one accumulator
 * per element, state += g^2; w -= lr * g / (sqrt(state) + eps); its state
 * row is n floats.
 *
 * Adam (for dense weights, here the relation table): per element first
 * and second moments and a per-row step count, updated lazily when the row
 * gets a gradient (PyTorch's SparseAdam); its state row is [m (n) | v (n) |
 * t (1)], 2n + 1 floats.
 *
 * Nothing here allocates or reports errors.
 */
#ifndef KG_OPTIM_H
#define KG_OPTIM_H

#include <stddef.h>
#include <stdint.h>

enum kg_optim_kind { KG_OPTIM_ADAGRAD, KG_OPTIM_ADAM, KG_OPTIM_ADAGRAD_ELEM };

struct kg_adam {
	float lr, beta1, beta2, eps;
};

#define KG_ADAM_INIT { .lr = 0.001f, .beta1 = 0.9f, .beta2 = 0.999f, \
	.eps = 1e-8f }
#define KG_ADAGRAD_EPS 1e-10f

/* "adagrad" (row-wise), "adagrad_elem" or "adam"; 0 or -1 after
 * kg_error(). */
int kg_optim_parse(const char *name, enum kg_optim_kind *kind);
const char *kg_optim_name(enum kg_optim_kind kind);

/* Floats of optimiser state per row of width n. */
size_t kg_optim_state_width(enum kg_optim_kind kind, size_t n);

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
double kg_regularise(const float *x, float *g, size_t n, double coef,
    unsigned p, double scale);

/* Scale g (n floats) so its L2 norm is at most max_norm (> 0). */
void kg_clip_row(float *g, size_t n, float max_norm);

#endif
