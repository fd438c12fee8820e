/*
 * kinds: the numbers that name what a kernel computes, each defined once
 * for every layer that needs it: the similarities S of kernels.h, the
 * query forms Q of backend.h, the sides of a triple, the losses of
 * rowops.h, and the two epsilons that host and device code both divide
 * by.  The host kernels, the backends, the device functions of
 * devops_*.h (under nvcc's C++ as well as C11) and the models of lib/kge
 * all take these, so a model is named by its kind (lib/kge/model.h) and
 * its Q and S (lib/kge/score.h's table) and by nothing else.
 */
#ifndef KG_KINDS_H
#define KG_KINDS_H

/* The similarities S(q, c): kernels.h's table. */
enum kg_kern_sim {
	KG_KERN_DOT,
	KG_KERN_L1,
	KG_KERN_L2,
	KG_KERN_L2_DIFF,
	KG_KERN_CMOD,
	KG_KERN_CMOD_APPROX
};

/* Below this distance the gradient of the L2 norm is taken as 0, and a
 * complex modulus divides by at least it. */
#define KG_KERN_DIST_EPS 1e-12f

/* The query forms Q(fixed, rel) of lib/kge/score.h, every shallow model
 * but TransR. */
enum kg_qform {
	KG_QFORM_ADD,		/* TransE L1, L2: f + r (tail), f - r (head) */
	KG_QFORM_MUL,		/* DistMult: f o r */
	KG_QFORM_COMPLEX,	/* ComplEx: f * r, f * conj(r) */
	KG_QFORM_ROTATE,	/* RotatE: f * e^(+-i theta) */
	KG_QFORM_RESCAL		/* RESCAL: M^T f (tail), M f (head) */
};

/* Which side of a triple the candidates replace. */
enum kg_side {
	KG_SIDE_TAIL = 0,	/* (h, r, ?) */
	KG_SIDE_HEAD = 1	/* (?, r, t) */
};

/* The losses of rowops.h's kg_loss_eval. */
enum kg_loss_kind {
	KG_LOSS_LOGISTIC,
	KG_LOSS_MARGIN,
	KG_LOSS_SOFTMAX,
	KG_LOSS_BCE
};

/* Adagrad's eps: w -= lr g / (sqrt(state) + eps). */
#define KG_ADAGRAD_EPS 1e-10f

#endif
