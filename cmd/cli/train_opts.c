#include "cli/train_opts.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/cliopts.h"
#include "cli/device_opt.h"
#include "cli/tool.h"
#include "cli/train_help.h"
#include "core/util.h"
#include "kge/loss.h"
#include "kge/model.h"
#include "kge/optim.h"
#include "kge/sampler.h"

/* ---- the parsers of the options that are more than a number ---- */

#define SH(c) (&((struct kg_train_cli *)(c))->sh)
#define GN(c) (&((struct kg_train_cli *)(c))->gnn)

static int
sh_model(void *c, const char *arg)
{
	if (kg_model_find(arg, &SH(c)->o.model) == 0)
		return 0;
	kg_error("unknown model '%s' (expected TransE_l1, TransE_l2, "
	    "DistMult, ComplEx, RotatE, RESCAL, TransR, or the GNN "
	    "encoders RGCN and RelGNN)", arg);
	return -1;
}

static int
gnn_model(void *c, const char *arg)
{
	return kg_gnn_encoder_parse(arg, &GN(c)->o.enc.encoder);
}

/* DGL-KE's loss_genre names map onto ours. */
static int
sh_loss(void *c, const char *arg)
{
	if (strcasecmp(arg, "Logsigmoid") == 0 ||
	    strcasecmp(arg, "Logistic") == 0)
		arg = "logistic";
	else if (strcasecmp(arg, "Hinge") == 0)
		arg = "margin";
	return kg_loss_parse(arg, &SH(c)->o.loss.kind);
}

static int
gnn_loss(void *c, const char *arg)
{
	if (strcasecmp(arg, "Logsigmoid") == 0)
		arg = "logistic";
	return kg_loss_parse(arg, &GN(c)->o.loss.kind);
}

static int
adversarial(void *c, const char *arg)
{
	(void)arg;
	if (SH(c)->o.loss.adv_temp == 0.0)
		SH(c)->o.loss.adv_temp = 1.0;
	return 0;
}

static int
sampler(void *c, const char *arg)
{
	enum kg_neg_kind nk;

	return kg_neg_parse(arg, &nk, &SH(c)->o.degree_frac);
}

static int
grouped(void *c, const char *arg)
{
	(void)arg;
	SH(c)->o.ova_mode = KG_OVA_GROUPED;
	return 0;
}

static int
pairwise(void *c, const char *arg)
{
	(void)c;
	(void)arg;
	kg_error("--pairwise (DGL-KE's pairwise loss) is not supported; "
	    "--loss margin compares each positive with its negatives");
	return -1;
}

static int
init_new(void *c, const char *arg)
{
	return kg_warmstart_parse_init_new(arg, &SH(c)->warm.init_new);
}

static int
ent_optim(void *c, const char *arg)
{
	return kg_optim_parse(arg, &SH(c)->o.ent_optim);
}

static int
rel_optim(void *c, const char *arg)
{
	return kg_optim_parse(arg, &SH(c)->o.rel_optim);
}

static int
init_kind(void *c, const char *arg)
{
	if (strcmp(arg, "uniform") == 0 || strcmp(arg, "normal") == 0) {
		SH(c)->o.init = arg[0] == 'n' ? KG_INIT_NORMAL :
		    KG_INIT_UNIFORM;
		return 0;
	}
	kg_error("--init: unknown value '%s' (expected uniform or normal)",
	    arg);
	return -1;
}

static int
dist_mode(void *c, const char *arg)
{
	if (kg_dist_mode_parse(arg, &SH(c)->x.mode) == 0)
		return 0;
	kg_error("--dist must be buckets or ssgd, not '%s'", arg);
	return -1;
}

static int
rel_merge(void *c, const char *arg)
{
	static const char *const names[] = { "rows", "mean", "sum" };
	static const int vals[] = { KG_REL_MERGE_ROWS, KG_REL_MERGE_MEAN,
	    KG_REL_MERGE_SUM };
	size_t k;

	for (k = 0; k < KG_ARRAY_LEN(names); k++)
		if (strcmp(arg, names[k]) == 0) {
			SH(c)->x.rel_merge = vals[k];
			return 0;
		}
	kg_error("--rel_merge must be rows, mean or sum, not '%s'", arg);
	return -1;
}

static int
disk_dtype(void *c, const char *arg)
{
	if (strcmp(arg, "float32") == 0 || strcmp(arg, "float16") == 0) {
		SH(c)->x.disk_f16 = strcmp(arg, "float16") == 0;
		return 0;
	}
	kg_error("--disk_dtype must be float32 or float16, not '%s'", arg);
	return -1;
}

static int
sh_device(void *c, const char *arg)
{
	SH(c)->pinned = strchr(arg, ':') != NULL;
	return kg_cli_device(arg, &SH(c)->device);
}

static int
sh_gpu(void *c, const char *arg)
{
	SH(c)->pinned = 1;
	return kg_cli_gpu(arg, &SH(c)->device);
}

static int
sh_gpus(void *c, const char *arg)
{
	return kg_cli_gpus(arg, SH(c)->gpus, &SH(c)->n_gpus);
}

static int
gnn_device(void *c, const char *arg)
{
	return kg_cli_device(arg, &GN(c)->device);
}

static int
gnn_gpu(void *c, const char *arg)
{
	return kg_cli_gpu(arg, &GN(c)->device);
}

static int
decoder(void *c, const char *arg)
{
	return kg_model_parse(arg, &GN(c)->o.decoder);
}

/* --fanout A,B: one whole number per graph layer. */
static int
fanout(void *c, const char *arg)
{
	struct kg_gnn_train_opts *o = &GN(c)->o;
	double fan[KG_GNN_MAX_LAYERS];
	size_t nf, k;

	if (kg_parse_double_list("--fanout", arg, 1, 1e6, fan,
	    KG_GNN_MAX_LAYERS, &nf) < 0)
		return -1;
	for (k = 0; k < nf; k++)
		if (fan[k] != floor(fan[k])) {
			kg_error("--fanout: %g is not a whole number", fan[k]);
			return -1;
		}
	o->nfanout = (uint32_t)nf;
	for (k = 0; k < nf; k++)
		o->fanout[k] = (uint32_t)fan[k];
	return 0;
}

static int
decomp(void *c, const char *arg)
{
	if (strcmp(arg, "basis") == 0 || strcmp(arg, "block") == 0) {
		GN(c)->o.enc.decomp = arg[1] == 'a' ? KG_GNN_BASIS :
		    KG_GNN_BLOCK;
		return 0;
	}
	kg_error("--decomposition: unknown value '%s' (expected basis or "
	    "block)", arg);
	return -1;
}

static int
lr_scale(void *c, const char *arg)
{
	enum kg_gnn_lr_scale *sc = &GN(c)->o.lr_scale;

	if (strcmp(arg, "none") == 0)
		*sc = KG_GNN_LR_SCALE_NONE;
	else if (strcmp(arg, "sqrt") == 0)
		*sc = KG_GNN_LR_SCALE_SQRT;
	else if (strcmp(arg, "linear") == 0)
		*sc = KG_GNN_LR_SCALE_LINEAR;
	else {
		kg_error("--lr_scale_ranks: unknown value '%s' (expected none, "
		    "sqrt or linear)", arg);
		return -1;
	}
	return 0;
}

/* ---- the table ---- */

/* A use's target: the field f of struct kg_train_cli, of type T (a
 * mismatch is a compiler warning: distinct pointer types compared). */
#define AT(f, T) .off = offsetof(struct kg_train_cli, f) + \
	0 * sizeof((T *)NULL == &((struct kg_train_cli *)NULL)->f)
#define FLAG(f) .how = KG_OPT_FLAG, AT(f, int)
#define U32(f, a, b) .how = KG_OPT_U32, AT(f, uint32_t), .min = (a), \
	.max = (b)
#define U64(f, a, b) .how = KG_OPT_U64, AT(f, uint64_t), .min = (a), \
	.max = (b)
#define DBL(f, a, b) .how = KG_OPT_DOUBLE, AT(f, double), .lo = (a), \
	.hi = (b)
#define FLT(f, a, b) .how = KG_OPT_FLOAT, AT(f, float), .lo = (a), \
	.hi = (b)
#define SIZE(f) .how = KG_OPT_SIZE, AT(f, uint64_t), .lo = 1.0, .hi = 1e18
#define STR(f) .how = KG_OPT_STRING, AT(f, const char *)
#define FN(fn_) .how = KG_OPT_FN, .fn = (fn_)
/* A DGL-KE option without a meaning here: accepted, hint in its warning. */
#define DGLKE(name_, arg_, hint) { .name = (name_), .use = { { \
	.kinds = S, .how = KG_OPT_IGNORED, .flags = KG_OPT_FOREIGN, \
	.arg = (arg_), .help = (hint) } } }

#define S KG_TRAIN_SHALLOW
#define G KG_TRAIN_GNN
#define ALL (KG_TRAIN_SHALLOW | KG_TRAIN_GNN)
#define M24 (1u << 24)

static const struct kg_opt opts[] = {
{ .group = "Model:" },
{ "config", 0, NULL, { { .kinds = ALL, .how = KG_OPT_CONFIG, .arg = "FILE",
    .help = "options as a JSON object {\"model_name\": ...}, its keys "
    "the long options; the command line wins" } } },
{ "model_name", 0, NULL, {
  { .kinds = S, FN(sh_model), .arg = "NAME", .def = "TransE_l2",
    .help = "TransE_l1, TransE_l2 (= TransE), DistMult, ComplEx, RotatE, "
    "RESCAL, TransR; RGCN, RelGNN: see GNN encoders below" },
  { .kinds = G, FN(gnn_model), .also = "encoder",
    .help = "RGCN or RelGNN (--encoder too); required" } } },
{ "hidden_dim", 0, NULL, {
  { .kinds = S, U32(sh.o.dim, 1, 1u << 16), .alias = "-d", .arg = "N",
    .def = "400", .help = "floats per entity row, as DGL-KE without -de: "
    "ComplEx and RotatE rows hold N/2 complex numbers, and N must be "
    "even" },
  { .kinds = G, U32(gnn.dim, 1, 1u << 14), .def = "32",
    .help = "the entity embedding, the last layer's width" } } },
{ "double_ent", 0, NULL, { { .kinds = S, FLAG(sh.double_ent), .alias = "-de",
    .help = "as DGL-KE: entity rows of 2N floats; ComplEx takes it with "
    "-dr (2N-float relation rows too), RotatE alone (N complex numbers, N "
    "phases), TransR either" } } },
{ "double_rel", 0, NULL, { { .kinds = S, FLAG(sh.double_rel), .alias = "-dr",
    .help = "as DGL-KE: relation rows of 2N floats (ComplEx with -de; "
    "TransR: a relation space of 2N)" } } },
{ "rel_dim", 0, NULL, { { .kinds = S, U32(sh.o.rel_dim, 1, 1u << 16),
    .arg = "N", .help = "TransR's relation space (default: --hidden_dim)" }
    } },
{ "gamma", 0, NULL, {
  { .kinds = S, DBL(sh.o.gamma, -1e6, 1e6), .alias = "-g", .arg = "G",
    .def = "12", .help = "margin of the distance models" },
  { .kinds = G, DBL(gnn.o.gamma, -1e6, 1e6), .def = "12",
    .help = "margin of the TransE decoders" } } },
{ "reciprocal", 0, NULL, { { .kinds = S, FLAG(sh.o.reciprocal),
    .help = "add an inverse of every relation (LibKGE, kbc)" } } },
{ .group = "Loss:" },
{ "loss", 0, NULL, {
  { .kinds = S, FN(sh_loss), .also = "loss_genre", .arg = "NAME",
    .def = "logistic", .help = "logistic, margin, softmax or bce; "
    "DGL-KE's --loss_genre Logsigmoid, Logistic, Hinge or BCE too" },
  { .kinds = G, FN(gnn_loss), .def = "bce",
    .help = "bce, logistic (or Logsigmoid), margin or softmax" } } },
{ "margin", 0, NULL, { { .kinds = S, DBL(sh.o.loss.margin, 0, 1e6),
    .alias = "-m", .arg = "M", .def = "1",
    .help = "margin of the margin loss" } } },
{ "neg_adversarial_sampling", 0, NULL, { { .kinds = S, FN(adversarial),
    .alias = "-adv", .help = "self-adversarial negative weights" } } },
{ "adversarial_temperature", 0, NULL, {
  { .kinds = S, DBL(sh.o.loss.adv_temp, 0, 1e6), .alias = "-a",
    .arg = "T", .help = "their temperature (default 1 with -adv, else 0: "
    "off)" },
  { .kinds = G, DBL(gnn.o.loss.adv_temp, 0, 1e6) } } },
{ .group = "Negatives:" },
{ "batch_size", 0, NULL, {
  { .kinds = S, U32(sh.o.batch_size, 1, M24), .alias = "-b", .arg = "N",
    .def = "1024", .help = "positives per step" },
  { .kinds = G, U32(gnn.o.batch_size, 1, M24), .def = "1024",
    .help = "positives per step, over all ranks" } } },
{ "neg_sample_size", 0, NULL, {
  { .kinds = S, U32(sh.o.neg_sample_size, 1, M24), .arg = "N",
    .def = "256", .help = "negatives shared by a chunk" },
  { .kinds = G, U32(gnn.o.neg, 1, 1u << 16), .def = "8",
    .help = "negatives per positive" } } },
{ "neg_chunk_size", 0, NULL, {
  { .kinds = S, U32(sh.o.chunk_size, 1, M24), .arg = "N",
    .help = "positives per chunk (default: --neg_sample_size)" },
  { .kinds = G, U32(gnn.o.neg_chunk, 1, M24),
    .help = "positives sharing their negatives (default: each its "
    "own)" } } },
{ "neg_sampler", 0, NULL, { { .kinds = S, FN(sampler),
    .alias = "--neg_deg_sample", .alias_arg = "mixed",
    .arg = "uniform|degree|mixed", .def = "uniform",
    .help = "mixed: half and half; DGL-KE's --neg_deg_sample is mixed" } } },
{ "neg_degree_fraction", 0, NULL, { { .kinds = S,
    DBL(sh.o.degree_frac, 0, 1), .arg = "F",
    .help = "share of degree-drawn negatives" } } },
{ "neg_filter", 0, NULL, { { .kinds = S, FLAG(sh.o.filter_negatives),
    .help = "leave out negatives that form known train triples" } } },
{ "neg_types", 0, NULL, { { .kinds = S, FLAG(sh.o.use_types),
    .help = "negatives of the replaced entity's type" } } },
{ "one_vs_all", 0, NULL, { { .kinds = S, FLAG(sh.o.one_vs_all),
    .help = "every entity is a candidate (with softmax)" } } },
{ "one_vs_all_after", 0, NULL, { { .kinds = S,
    U32(sh.o.one_vs_all_after, 1, M24), .arg = "N",
    .help = "drawn negatives for the first N epochs, then every entity a "
    "candidate (a 1-vs-all second stage)" } } },
{ "one_vs_all_plateau", 0, NULL, { { .kinds = S,
    U32(sh.j.one_vs_all_plateau, 1, M24), .arg = "P",
    .help = "the same, switching once P validations in a row have not "
    "raised the best valid MRR (needs --valid_every)" } } },
{ "one_vs_all_grouped", 0, NULL, { { .kinds = S, FN(grouped),
    .help = "1-vs-all epochs ordered by query, each query of a chunk "
    "scored once (fewer score rows)" } } },
{ "subsampling_weight", 0, NULL, { { .kinds = S, FLAG(sh.o.subsampling),
    .help = "weigh each triple by 1/sqrt of its queries' counts (RotatE's "
    "default; its --uni_weight off)" } } },
{ "neg_in_batch", 0, NULL, { { .kinds = S, FLAG(sh.o.neg_in_batch),
    .help = "also the entities of the chunk's other positives "
    "(PyTorch-BigGraph's batch negatives)" } } },
{ "neg_pool", 0, NULL, { { .kinds = S, U32(sh.o.neg_pool, 0, M24),
    .arg = "N", .def = "4096", .help = "with --partitions: the negatives "
    "outside the corrupted partition from a pool of N rows of each; 0: "
    "none, as PyTorch-BigGraph" } } },
{ .group = "Optimisation:" },
{ "lr", 0, NULL, {
  { .kinds = S, DBL(sh.o.lr, 1e-12, 1e30), .arg = "LR", .def = "0.1",
    .help = "Adagrad learning rate" },
  { .kinds = G, DBL(gnn.o.lr, 1e-12, 10.0), .def = "0.01",
    .help = "Adam learning rate" } } },
{ "ent_optimizer", 0, NULL, { { .kinds = S, FN(ent_optim), .arg = "O",
    .def = "adagrad", .help = "entity rows: adagrad (row-wise, PBG and "
    "DGL-KE), adagrad_elem (element-wise, kbc and LibKGE) or adam; one "
    "process only" } } },
{ "rel_optimizer", 0, NULL, { { .kinds = S, FN(rel_optim), .arg = "O",
    .def = "adagrad", .help = "the same for relations" } } },
{ "rel_lr", 0, NULL, { { .kinds = S, DBL(sh.o.rel_lr, 0, 1e30),
    .arg = "LR", .help = "their rate (default: --lr; 0.001 for adam)" } } },
{ "regularization_coef", 0, NULL, {
  { .kinds = S, DBL(sh.o.reg_coef, 0, 1e6), .alias = "-rc", .arg = "C",
    .def = "0", .help = "regulariser weight; 0: off" },
  { .kinds = G, DBL(gnn.o.reg, 0, 10.0), .def = "0",
    .help = "L2 weight; 0: off" } } },
{ "regularization_norm", 0, NULL, { { .kinds = S,
    U32(sh.o.reg_norm, 2, 3), .alias = "-rn", .arg = "P", .def = "3",
    .help = "2 (L2) or 3 (N3)" } } },
{ "init", 0, NULL, { { .kinds = S, FN(init_kind), .arg = "uniform|normal",
    .def = "uniform", .help = "the initial rows' distribution" } } },
{ "init_scale", 0, NULL, { { .kinds = S, DBL(sh.o.init_scale, 0, 1e6),
    .arg = "S", .help = "initial range (default (gamma + 2) / dim)" } } },
{ "max_grad_norm", 0, NULL, { { .kinds = S, DBL(sh.o.clip, 0, 1e12),
    .arg = "C", .def = "0", .help = "clip each row's gradient; 0: off" } } },
{ "rel_pred_weight", 0, NULL, { { .kinds = S, DBL(sh.o.rel_pred, 0, 1e6),
    .arg = "W", .def = "0", .help = "add the relation-prediction term "
    "(h, ?, t) of Chen et al. 2021, weight W; 0: off" } } },
{ "dura_coef", 0, NULL, { { .kinds = S, DBL(sh.o.dura, 0, 1e6), .arg = "C",
    .def = "0", .help = "DURA regulariser of DistMult, ComplEx, RESCAL; "
    "0: off" } } },
{ "one_vs_all_dura", 0, NULL, { { .kinds = S, DBL(sh.o.ova_dura, 0, 1e6),
    .arg = "C", .help = "DURA's coefficient in 1-vs-all epochs (default: "
    "--dura_coef's)" } } },
{ "lr_warmup", 0, NULL, { { .kinds = S,
    U64(sh.o.lr_warmup, 0, UINT64_MAX), .arg = "N", .def = "0",
    .help = "raise the rates linearly over N steps" } } },
{ "lr_decay", 0, NULL, { { .kinds = S, DBL(sh.o.lr_decay, 1e-6, 1),
    .arg = "F", .def = "1", .help = "multiply the rates by F after every "
    "epoch; 1: constant" } } },
{ "epochs", 0, NULL, {
  { .kinds = S, U32(sh.o.epochs, 0, M24), .arg = "N", .def = "10",
    .help = "epochs; no limit when --max_step is given alone, as in "
    "DGL-KE; 0 with --init_from or --init_entities: the start written "
    "untrained" },
  { .kinds = G, U32(gnn.o.epochs, 0, M24), .def = "10",
    .help = "epochs; 0 with --init_from or --init_entities: the start "
    "written untrained (from --init_from, the model's encoder run over "
    "this dataset)" } } },
{ "max_step", 0, NULL, {
  { .kinds = S, U64(sh.o.max_step, 1, UINT64_MAX), .arg = "N",
    .help = "stop after N steps (default: no limit); with --epochs too, "
    "the first reached stops the run" },
  { .kinds = G, U64(gnn.o.max_step, 1, UINT64_MAX) } } },
{ "seed", 0, NULL, {
  { .kinds = S, U64(sh.o.seed, 0, UINT64_MAX), .arg = "N", .def = "1",
    .help = "seed" },
  { .kinds = G, U64(gnn.o.seed, 0, UINT64_MAX), .def = "0",
    .help = "seed" } } },
{ "num_thread", 0, NULL, {
  { .kinds = S, U32(sh.o.threads, 1, 1024), .also = "threads", .arg = "N",
    .help = "OpenMP threads (default: one per core)" },
  { .kinds = G, U32(gnn.threads, 1, 1024), .help = "OpenMP threads of "
    "the encoder (default: one per core, shared out among the ranks "
    "mpirun starts on a machine)" } } },
{ "device", 0, NULL, {
  { .kinds = S, FN(sh_device), .arg = "D", .def = "cpu",
    .help = "cpu, or cuda, cuda:N for GPU N: shallow models on the GPU; "
    "what it does not take (1-vs-all, ...) exits 2.  Under mpirun "
    "(--dist ssgd, --partitions) each rank takes a GPU: cuda, local rank "
    "mod the GPUs visible; cuda:N, every rank on GPU N" },
  { .kinds = G, FN(gnn_device), .def = "cpu",
    .help = "cpu, or cuda, cuda:N for GPU N: each step's encoder and "
    "decoder on the GPU" } } },
{ "gpu", 0, NULL, {
  { .kinds = S, FN(sh_gpu), .arg = "N", .flags = KG_OPT_MULTI,
    .help = "DGL-KE's spelling: --device cuda:N (-1: cpu)" },
  { .kinds = G, FN(gnn_gpu) } } },
{ "gpus", 0, NULL, { { .kinds = S, FN(sh_gpus), .arg = "LIST",
    .help = "--device cuda with the GPUs of the local ranks listed "
    "(0,1,2,3), cycled when fewer than them" } } },
{ "deterministic", 0, NULL, { { .kinds = S, FLAG(sh.o.deterministic),
    .help = "the same result for a seed whatever the thread count: rounds "
    "of 8 chunks from the same parameters, their gradients applied in "
    "order" } } },
{ .group = "Validation and output:" },
{ "valid_every", 0, NULL, {
  { .kinds = S, U32(sh.j.valid_every, 0, M24), .arg = "N", .def = "0",
    .help = "filtered valid MRR every N epochs, keep the best; 0: off; "
    "DGL-KE's --eval_interval counts steps and is ignored" },
  { .kinds = G, U32(gnn.o.valid_every, 0, M24), .def = "0",
    .help = "filtered valid MRR every N epochs against every node, keep "
    "the best; 0: off; on one rank without --expanded, as --patience "
    "and --target_mrr" } } },
{ "patience", 0, NULL, {
  { .kinds = S, U32(sh.j.patience, 0, M24), .arg = "K", .def = "0",
    .help = "stop after K validations without gain; 0: never" },
  { .kinds = G, U32(gnn.o.patience, 0, M24) } } },
{ "time_budget", 0, NULL, {
  { .kinds = S, DBL(sh.j.time_budget, 0, 1e9), .arg = "S", .def = "0",
    .help = "stop after the epoch in which training time reaches S "
    "seconds; 0: off" },
  { .kinds = G, DBL(gnn.o.time_budget, 0, 1e9) } } },
{ "target_mrr", 0, NULL, {
  { .kinds = S, DBL(sh.j.target_mrr, 0, 1), .arg = "M", .def = "0",
    .help = "stop once a validation reaches MRR M (needs --valid_every); "
    "0: off" },
  { .kinds = G, DBL(gnn.o.target_mrr, 0, 1) } } },
{ "checkpoint_dir", 0, NULL, {
  { .kinds = S, STR(sh.j.checkpoint_dir), .arg = "DIR",
    .help = "epoch-end checkpoints (default MODEL_DIR.ckpt)" },
  { .kinds = G, STR(gnn.r.checkpoint_dir) } } },
{ "resume", 0, NULL, {
  { .kinds = S, FLAG(sh.j.resume), .help = "continue from the checkpoint" },
  { .kinds = G, FLAG(gnn.r.resume) } } },
{ "no_checkpoint", 0, NULL, {
  { .kinds = S, FLAG(sh.j.no_checkpoint), .help = "write none" },
  { .kinds = G, FLAG(gnn.r.no_checkpoint) } } },
{ "keep_checkpoint", 0, NULL, {
  { .kinds = S, FLAG(sh.j.keep_checkpoint),
    .help = "keep the default checkpoint after success" },
  { .kinds = G, FLAG(gnn.r.keep_checkpoint) } } },
{ "force", 'f', NULL, {
  { .kinds = S, FLAG(sh.j.force), .help = "replace an existing MODEL_DIR, "
    "start over on an existing checkpoint" },
  { .kinds = G, FLAG(gnn.r.force) } } },
{ "progress", 0, NULL, {
  { .kinds = S, FLAG(sh.j.progress),
    .help = "progress (rate, ETA) even when stderr is no terminal" },
  { .kinds = G, FLAG(gnn.progress) } } },
{ "quiet", 'q', NULL, {
  { .kinds = S, FLAG(sh.j.quiet), .help = "errors only" },
  { .kinds = G, FLAG(gnn.o.quiet) } } },
{ "help", 'h', NULL, { { .kinds = ALL, .how = KG_OPT_HELP,
    .help = "this help" } } },
{ "version", 0, NULL, { { .kinds = ALL, .how = KG_OPT_VERSION,
    .help = "print the version" } } },
{ .group = "Warm start (in memory, --partitions, mpirun, --dist ssgd):" },
{ "init_from", 0, NULL, { { .kinds = S, STR(sh.warm.init_from),
    .arg = "MODEL", .help = "start from MODEL's rows, matched by entity and "
    "relation name; the same model, dims and --reciprocal" },
  { .kinds = G, STR(gnn.o.init_from), .arg = "MODEL", .help = "start "
    "from GNN model MODEL's encoder and relations, matched by name; the "
    "same encoder, dims, decoder and feature widths" } } },
{ "init_new", 0, NULL, { { .kinds = S, FN(init_new),
    .arg = "neighbours|random|zero", .def = "neighbours",
    .help = "how new entities start: the mean of what their known "
    "neighbours imply, the trainer's random draw, or zero" } } },
{ "reset_optimizer", 0, NULL, { { .kinds = S,
    FLAG(sh.warm.reset_optimizer), .help = "optimiser state starts at zero "
    "(default: carried from MODEL)" } } },
{ "freeze_old", 0, NULL, { { .kinds = G, FLAG(gnn.o.freeze_old),
    .help = "train only what MODEL lacks: new entities' learned rows, new "
    "relations (and the relations); the matched rows and the encoder's "
    "weights stay MODEL's, the rows of F stay F's" },
  { .kinds = S, FLAG(sh.warm.freeze_old),
    .help = "train only the new entity rows (and the relations); the "
    "matched ones and their optimiser state stay MODEL's" } } },
{ "freeze_relations", 0, NULL, { { .kinds = S,
    FLAG(sh.warm.freeze_relations), .help = "with --freeze_old, keep the "
    "matched relations too" },
  { .kinds = G, FLAG(gnn.o.freeze_relations), .help = "with --freeze_old, "
    "keep the matched relations' decoder rows too" } } },
{ "init_entities", 0, NULL, { { .kinds = S, STR(sh.warm.init_entities),
    .arg = "F", .help = "entity rows from float32 [rows, dim] F.npy" },
  { .kinds = G, STR(gnn.o.init_entities), .arg = "F", .help = "learned "
    "input rows from float32 [rows, d0] F.npy (d0 = --gnn_hidden), the "
    "rest as a fresh run" } } },
{ "entity_map", 0, NULL, { { .kinds = S, STR(sh.warm.entity_map),
    .arg = "FILE", .help = "row<TAB>name lines giving each entity's row "
    "of --init_entities" },
  { .kinds = G, STR(gnn.o.entity_map), .arg = "FILE", .help = "row<TAB>"
    "name lines giving each entity's row of --init_entities" } } },
{ .group = "Distributed (under mpirun):" },
{ "partitions", 0, NULL, { { .kinds = S, STR(sh.x.partitions), .arg = "DIR",
    .help = "train on kg-partition buckets (PyTorch-BigGraph); "
    "--valid_every and --max_step in one process only" } } },
{ "dist", 0, NULL, { { .kinds = S, FN(dist_mode), .arg = "buckets|ssgd",
    .help = "buckets (implied by --partitions) or ssgd (synchronous data "
    "parallel on the whole dataset)" } } },
{ "rel_sync", 0, NULL, { { .kinds = S, U32(sh.x.rel_sync, 0, 1u << 30),
    .arg = "N", .def = "1", .help = "steps between relation merges, a step "
    "one bucket of every rank; 0: at epoch ends" } } },
{ "rel_merge", 0, NULL, { { .kinds = S, FN(rel_merge),
    .arg = "rows|mean|sum", .def = "rows", .help = "a relation's merged "
    "change: the ranks' changes summed, divided by the ranks that changed "
    "it (rows), by the rank count (mean) or by nothing (sum)" } } },
{ "ship_inputs", 0, NULL, {
  { .kinds = S, FLAG(sh.ship), .help = "rank 0 sends every rank the inputs "
    "it reads over MPI (hosts that share no filesystem)" },
  { .kinds = G, FLAG(gnn.ship) } } },
{ "bucket_passes", 0, NULL, { { .kinds = S, U32(sh.x.passes, 1, 1024),
    .arg = "K", .def = "1", .help = "K passes over the buckets an epoch, "
    "each with a K-th of every bucket's triples" } } },
{ .group = "Out of core (with --partitions, one process):" },
{ "buffer_capacity", 0, NULL, { { .kinds = S,
    U32(sh.x.buffer_capacity, 2, 1u << 20), .arg = "C",
    .help = "at most C partitions in memory (C >= 2)" } } },
{ "mem_budget", 0, NULL, { { .kinds = S, SIZE(sh.x.mem_budget),
    .arg = "SIZE", .help = "C from a byte budget (suffix K, M, G or T)" } } },
{ "swap_dir", 0, NULL, { { .kinds = S, STR(sh.x.swap_dir), .arg = "DIR",
    .help = "the partition files (default: beside the checkpoint "
    "directory)" } } },
{ "disk_dtype", 0, NULL, { { .kinds = S, FN(disk_dtype),
    .arg = "float32|float16", .def = "float32", .help = "the partition "
    "files' rows: float16 halves their bytes (rows rounded to nearest "
    "even at each write-back; |x| > 65504 is an error); the optimiser "
    "state, checkpoints and the model stay float32" } } },
{ .group = "On a device (with --partitions and --device cuda, one "
    "process):" },
{ "gpu_buffer", 0, NULL, { { .kinds = S, U32(sh.x.gpu_capacity, 2, 1u << 20),
    .arg = "C", .help = "C partitions on the GPU (2 <= C <= P), one more "
    "to read ahead into; the buckets in the order for C, the negative "
    "pool on the GPU too" } } },
{ "gpu_mem_budget", 0, NULL, { { .kinds = S, SIZE(sh.x.gpu_mem_budget),
    .arg = "SIZE", .help = "C from a byte budget (suffix K, M, G or T)" } } },
{ .group = "GNN encoders:" },
{ "decoder", 0, NULL, { { .kinds = G, FN(decoder), .arg = "NAME",
    .def = "DistMult", .help = "DistMult, TransE_l1, TransE_l2 or "
    "ComplEx" } } },
{ "features", 0, NULL, { { .kinds = G, STR(gnn.r.features), .arg = "DIR",
    .help = "kg-encode-attrs features (default: learned rows)" } } },
{ "learned_only", 0, NULL, { { .kinds = G, FLAG(gnn.o.enc.learned_only),
    .help = "learned input rows, features ignored" } } },
{ "expanded", 0, NULL, { { .kinds = G, STR(gnn.r.expanded), .arg = "DIR",
    .help = "kg-expand output, one part per rank" } } },
{ "layers", 0, NULL, { { .kinds = G,
    U32(gnn.o.enc.n_layers, 0, KG_GNN_MAX_LAYERS), .arg = "N", .def = "2",
    .help = "graph layers after the attribute layer, 0-3" } } },
{ "gnn_hidden", 0, NULL, { { .kinds = G, U32(gnn.hidden, 1, 1u << 14),
    .arg = "N", .def = "64",
    .help = "attribute and hidden layer width" } } },
{ "decomposition", 0, NULL, { { .kinds = G, FN(decomp),
    .arg = "basis|block", .def = "basis",
    .help = "the R-GCN weights" } } },
{ "num_bases", 0, NULL, { { .kinds = G, U32(gnn.o.enc.n_bases, 1, 1u << 12),
    .arg = "N", .def = "2", .help = "bases or blocks" } } },
{ "dropout", 0, NULL, { { .kinds = G, FLT(gnn.o.enc.dropout, 0.0, 0.99),
    .arg = "P", .def = "0.2", .help = "dropout on graph layer inputs" } } },
{ "edge_dropout", 0, NULL, { { .kinds = G,
    DBL(gnn.o.edge_dropout, 0.0, 0.99), .arg = "P", .def = "0",
    .help = "messages dropped per step" } } },
{ "fanout", 0, NULL, { { .kinds = G, FN(fanout), .arg = "N,N",
    .help = "sampled messages per node and layer, the output layer's "
    "first (default: the whole graph)" } } },
{ "neg_candidates", 0, NULL, { { .kinds = G,
    U32(gnn.o.neg_candidates, 1, 64), .arg = "C",
    .help = "adaptive negatives: keep the hardest of C times as many "
    "(default off)" } } },
{ "neg_pool_seeds", 0, NULL, { { .kinds = G, FLAG(gnn.o.pool_seeds),
    .help = "under --expanded, negatives from the part's seeds" } } },
{ "neg_exchange", 0, NULL, { { .kinds = G, FLAG(gnn.o.neg_exchange),
    .help = "with --neg_chunk_size on several ranks, each chunk's "
    "negatives from a rank drawn by pool size (its own or another's, "
    "exchanged each step)" } } },
{ "blocks", 0, NULL, { { .kinds = G, FLAG(gnn.o.blocks),
    .help = "with --fanout: each layer only where the next one reads" } } },
{ "batches_per_epoch", 0, NULL, { { .kinds = G,
    U32(gnn.o.batches_per_epoch, 1, 1u << 30), .arg = "N",
    .help = "steps per epoch, each of --batch_size positives (the "
    "paper's epoch; default: the train split once)" } } },
{ "lr_scale_ranks", 0, NULL, { { .kinds = G, FN(lr_scale),
    .arg = "none|sqrt|linear", .def = "none", .help = "on R ranks "
    "(steps of R batches under --batches_per_epoch): lr x sqrt(R) or x "
    "R" } } },
{ .group = "DGL-KE options accepted and ignored, with what to use "
    "instead, or refused:" },
DGLKE("valid", NULL, "use --valid_every N (validation every N epochs)"),
DGLKE("eval_interval", "N", "it counts steps; use --valid_every N (epochs)"),
DGLKE("save_path", "DIR", "the model directory is the MODEL_DIR operand"),
DGLKE("test", NULL, "evaluate with kg-eval DATASET_DIR MODEL_DIR"),
DGLKE("data_path", "DIR", "make DATASET_DIR with kg-ingest, which takes it"),
DGLKE("dataset", "NAME", "make DATASET_DIR with kg-ingest, which takes it"),
DGLKE("format", "F", "make DATASET_DIR with kg-ingest, which takes it"),
{ "data_files", 0, NULL, { { .kinds = S, .how = KG_OPT_IGNORED,
    .flags = KG_OPT_FOREIGN | KG_OPT_MULTI, .arg = "FILE...",
    .help = "make DATASET_DIR with kg-ingest, which takes it" } } },
DGLKE("delimiter", "C", "make DATASET_DIR with kg-ingest, which takes it"),
DGLKE("num_proc", "N", "use --num_thread N, or mpirun with --dist ssgd or "
    "--partitions"),
{ "log_interval", 0, NULL, { { .kinds = S, .how = KG_OPT_IGNORED,
    .flags = KG_OPT_FOREIGN, .alias = "-log", .arg = "N",
    .help = "use --progress" } } },
DGLKE("batch_size_eval", "N", "kg-eval takes --batch"),
DGLKE("neg_sample_size_eval", "N", "kg-eval takes --neg-sample"),
DGLKE("neg_deg_sample_eval", NULL, "kg-eval takes --neg-mode degree"),
DGLKE("eval_percent", "P", "kg-eval evaluates the whole split"),
DGLKE("no_eval_filter", NULL, "kg-eval takes --raw"),
DGLKE("force_sync_interval", "N", "see --dist and --rel_sync"),
DGLKE("async_update", NULL, "see --dist and --rel_sync"),
DGLKE("rel_part", NULL, "see --dist and --rel_sync"),
DGLKE("soft_rel_part", NULL, "see --dist and --rel_sync"),
DGLKE("no_save_emb", NULL, "the model directory always holds the "
    "embeddings"),
DGLKE("has_edge_importance", NULL, "edge weights are not supported"),
DGLKE("mix_cpu_gpu", NULL, "a run keeps its tables on one device "
    "(--device)"),
{ "pairwise", 0, NULL, { { .kinds = S, FN(pairwise), .alias = "-pw",
    .flags = KG_OPT_FOREIGN, .help = "refused: DGL-KE's pairwise loss; "
    "--loss margin compares each positive with its negatives" } } },
};

_Static_assert(KG_ARRAY_LEN(opts) <= KG_TRAIN_MAX_OPTS,
    "struct kg_train_cli's given[] holds an entry per option");

const struct kg_opttab kg_train_opttab = {
	.opt = opts, .n = KG_ARRAY_LEN(opts), .ignored_as = "DGL-KE option",
	.operands = 2
};

/* ---- parsing ---- */

void
kg_train_cli_init(struct kg_train_cli *c)
{
	struct kg_train_opts o = KG_TRAIN_OPTS_INIT;
	struct kg_train_job j = KG_TRAIN_JOB_INIT;
	struct kg_dist_train_opts x = KG_DIST_TRAIN_OPTS_INIT;
	struct kg_gnn_train_opts g = KG_GNN_TRAIN_OPTS_INIT;
	struct kg_device d = KG_DEVICE_INIT;
	struct kg_warmstart_opts w = KG_WARMSTART_OPTS_INIT;

	memset(c, 0, sizeof(*c));
	c->sh.o = o;
	c->sh.j = j;
	c->sh.x = x;
	c->sh.x.rel_sync = 1;
	c->sh.device = d;
	c->sh.warm = w;
	c->gnn.o = g;
	c->gnn.hidden = 64;
	c->gnn.dim = 32;
	c->gnn.device = d;
}

int
kg_train_cli_parse(struct kg_train_cli *c, unsigned kind, int argc,
    char *argv[])
{
	int nav, first, n;

	kg_train_cli_init(c);
	c->sh.j.argc = argc;
	c->sh.j.argv = argv;
	c->gnn.r.argc = argc;
	c->gnn.r.argv = argv;
	c->argc = argc;
	switch (kg_opttab_parse(&kg_train_opttab, kind, argc, argv, c,
	    c->given, &c->av, &nav, &first)) {
	case KG_OPTS_HELP:
		if (kind == KG_TRAIN_GNN)
			kg_train_gnn_usage(stdout);
		else
			kg_train_usage(stdout, 1);
		return KG_EXIT_OK + 1;
	case KG_OPTS_VERSION:
		printf("%s %s\n", kind == KG_TRAIN_GNN ? kg_progname() :
		    "kg-train", KG_VERSION);
		return KG_EXIT_OK + 1;
	case KG_OPTS_USAGE:
		return KG_EXIT_USAGE + 1;
	case KG_OPTS_GO:
		break;
	}
	n = nav - first;
	if (n != 2) {
		kg_error("expected DATASET_DIR MODEL_DIR, got %d operand%s", n,
		    n == 1 ? "" : "s");
		return kg_tool_usage_error() + 1;
	}
	c->operand[0] = c->av[first];
	c->operand[1] = c->av[first + 1];
	return 0;
}

void
kg_train_cli_release(struct kg_train_cli *c)
{
	kg_cli_argv_free(c->argc, c->av);
	c->av = NULL;
}

int
kg_train_cli_given(const struct kg_train_cli *c, const char *name)
{
	size_t i = kg_opttab_find(&kg_train_opttab, name);

	return i < kg_train_opttab.n && c->given[i];
}
