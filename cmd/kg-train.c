/*
 * kg-train: train a shallow KG embedding model on a kg-ingest dataset dir
 * and write a model dir.  Options are spelled as DGL-KE's where the
 * concept is the same (dashes and underscores both work) and can come
 * from a JSON --config file with the same keys; the work is in lib/kge/train.c.
 * The help text is in cmd/cli/train_help.c.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/tool.h"
#include "cli/cliopts.h"
#include "cli/device_opt.h"
#include "cli/gnn_cli.h"
#include "cli/train_help.h"
#include "io/ckpt.h"
#include "io/manifest.h"
#include "kge/model.h"
#include "dist/dist.h"
#include "dist/dist_train.h"
#include "dist/gpus.h"
#include "dist/ship.h"
#include "kge/train.h"
#include "kge/train_device.h"
#include "kge/warmstart.h"
#include "app/train_run.h"
#include "core/util.h"

enum {
	O_CONFIG = 256, O_MODEL, O_DIM, O_RELDIM, O_GAMMA, O_RECIP, O_LOSS,
	O_MARGIN, O_ADV, O_ADVT, O_BATCH, O_NEG, O_CHUNK, O_SAMPLER, O_DEGFRAC,
	O_FILTER, O_TYPES, O_OVA, O_LR, O_RELOPT, O_RELLR, O_RC, O_RN, O_INIT,
	O_INITS, O_CLIP, O_EPOCHS, O_MAXSTEP, O_SEED, O_THREADS, O_VALID,
	O_PATIENCE, O_CKPT, O_RESUME, O_NOCKPT, O_KEEPCKPT, O_FORCE,
	O_PROGRESS, O_DOUBLE_ENT, O_DOUBLE_REL, O_IGNORED, O_DIST, O_PARTS,
	O_RELSYNC, O_PAIRWISE, O_VERSION, O_BUFCAP, O_MEMBUDGET, O_SWAPDIR,
	O_SHIP,
	O_NEGPOOL, O_INBATCH, O_PASSES, O_RELMERGE,
	O_RELPRED, O_DURA, O_WARMUP, O_DECAY, O_BUDGET, O_TARGET, O_ENTOPT,
	O_OVA_AFTER, O_OVA_PLATEAU, O_OVA_GROUPED, O_SUBSAMPLING,
	O_OVA_DURA, O_DEVICE, O_GPU, O_GPUBUF, O_GPUBUDGET,
	O_DETERMINISTIC, O_GPUS,
	/* Warm start (kge/warmstart.h). */
	O_INITFROM, O_INITNEW, O_RESETOPT, O_FREEZE, O_FREEZEREL, O_INITENT,
	O_ENTMAP
};

static const struct option long_opts[] = {
	{ "config", required_argument, NULL, O_CONFIG },
	{ "model_name", required_argument, NULL, O_MODEL },
	{ "hidden_dim", required_argument, NULL, O_DIM },
	{ "rel_dim", required_argument, NULL, O_RELDIM },
	{ "gamma", required_argument, NULL, O_GAMMA },
	{ "reciprocal", no_argument, NULL, O_RECIP },
	{ "loss", required_argument, NULL, O_LOSS },
	{ "loss_genre", required_argument, NULL, O_LOSS },
	{ "margin", required_argument, NULL, O_MARGIN },
	{ "neg_adversarial_sampling", no_argument, NULL, O_ADV },
	{ "adversarial_temperature", required_argument, NULL, O_ADVT },
	{ "batch_size", required_argument, NULL, O_BATCH },
	{ "neg_sample_size", required_argument, NULL, O_NEG },
	{ "neg_chunk_size", required_argument, NULL, O_CHUNK },
	{ "neg_sampler", required_argument, NULL, O_SAMPLER },
	{ "neg_degree_fraction", required_argument, NULL, O_DEGFRAC },
	{ "neg_filter", no_argument, NULL, O_FILTER },
	{ "neg_types", no_argument, NULL, O_TYPES },
	{ "one_vs_all", no_argument, NULL, O_OVA },
	{ "one_vs_all_after", required_argument, NULL, O_OVA_AFTER },
	{ "one_vs_all_plateau", required_argument, NULL, O_OVA_PLATEAU },
	{ "one_vs_all_grouped", no_argument, NULL, O_OVA_GROUPED },
	{ "subsampling_weight", no_argument, NULL, O_SUBSAMPLING },
	{ "deterministic", no_argument, NULL, O_DETERMINISTIC },
	{ "lr", required_argument, NULL, O_LR },
	{ "rel_optimizer", required_argument, NULL, O_RELOPT },
	{ "rel_lr", required_argument, NULL, O_RELLR },
	{ "regularization_coef", required_argument, NULL, O_RC },
	{ "regularization_norm", required_argument, NULL, O_RN },
	{ "init", required_argument, NULL, O_INIT },
	{ "init_scale", required_argument, NULL, O_INITS },
	{ "max_grad_norm", required_argument, NULL, O_CLIP },
	{ "epochs", required_argument, NULL, O_EPOCHS },
	{ "max_step", required_argument, NULL, O_MAXSTEP },
	{ "seed", required_argument, NULL, O_SEED },
	{ "num_thread", required_argument, NULL, O_THREADS },
	{ "threads", required_argument, NULL, O_THREADS },
	{ "valid_every", required_argument, NULL, O_VALID },
	{ "patience", required_argument, NULL, O_PATIENCE },
	{ "checkpoint_dir", required_argument, NULL, O_CKPT },
	{ "resume", no_argument, NULL, O_RESUME },
	{ "no_checkpoint", no_argument, NULL, O_NOCKPT },
	{ "keep_checkpoint", no_argument, NULL, O_KEEPCKPT },
	{ "double_ent", no_argument, NULL, O_DOUBLE_ENT },
	{ "double_rel", no_argument, NULL, O_DOUBLE_REL },
	{ "pairwise", no_argument, NULL, O_PAIRWISE },
	/* DGL-KE options without a meaning here: accepted with a warning
	 * that says what to use instead (ignored_hint). */
	{ "eval_interval", required_argument, NULL, O_IGNORED },
	{ "no_eval_filter", no_argument, NULL, O_IGNORED },
	{ "has_edge_importance", no_argument, NULL, O_IGNORED },
	{ "data_files", required_argument, NULL, O_IGNORED },
	{ "delimiter", required_argument, NULL, O_IGNORED },
	{ "num_proc", required_argument, NULL, O_IGNORED },
	{ "log_interval", required_argument, NULL, O_IGNORED },
	{ "batch_size_eval", required_argument, NULL, O_IGNORED },
	{ "neg_sample_size_eval", required_argument, NULL, O_IGNORED },
	{ "eval_percent", required_argument, NULL, O_IGNORED },
	{ "force_sync_interval", required_argument, NULL, O_IGNORED },
	{ "save_path", required_argument, NULL, O_IGNORED },
	{ "data_path", required_argument, NULL, O_IGNORED },
	{ "dataset", required_argument, NULL, O_IGNORED },
	{ "format", required_argument, NULL, O_IGNORED },
	{ "mix_cpu_gpu", no_argument, NULL, O_IGNORED },
	{ "async_update", no_argument, NULL, O_IGNORED },
	{ "rel_part", no_argument, NULL, O_IGNORED },
	{ "soft_rel_part", no_argument, NULL, O_IGNORED },
	{ "no_save_emb", no_argument, NULL, O_IGNORED },
	{ "neg_deg_sample_eval", no_argument, NULL, O_IGNORED },
	{ "test", no_argument, NULL, O_IGNORED },
	{ "valid", no_argument, NULL, O_IGNORED },
	{ "force", no_argument, NULL, O_FORCE },
	{ "device", required_argument, NULL, O_DEVICE },
	{ "gpu", required_argument, NULL, O_GPU },
	{ "gpus", required_argument, NULL, O_GPUS },
	{ "progress", no_argument, NULL, O_PROGRESS },
	{ "dist", required_argument, NULL, O_DIST },
	{ "partitions", required_argument, NULL, O_PARTS },
	{ "rel_sync", required_argument, NULL, O_RELSYNC },
	{ "buffer_capacity", required_argument, NULL, O_BUFCAP },
	{ "mem_budget", required_argument, NULL, O_MEMBUDGET },
	{ "swap_dir", required_argument, NULL, O_SWAPDIR },
	{ "gpu_buffer", required_argument, NULL, O_GPUBUF },
	{ "gpu_mem_budget", required_argument, NULL, O_GPUBUDGET },
	{ "ship_inputs", no_argument, NULL, O_SHIP },
	{ "neg_pool", required_argument, NULL, O_NEGPOOL },
	{ "neg_in_batch", no_argument, NULL, O_INBATCH },
	{ "bucket_passes", required_argument, NULL, O_PASSES },
	{ "rel_merge", required_argument, NULL, O_RELMERGE },
	{ "rel_pred_weight", required_argument, NULL, O_RELPRED },
	{ "dura_coef", required_argument, NULL, O_DURA },
	{ "one_vs_all_dura", required_argument, NULL, O_OVA_DURA },
	{ "lr_warmup", required_argument, NULL, O_WARMUP },
	{ "lr_decay", required_argument, NULL, O_DECAY },
	{ "time_budget", required_argument, NULL, O_BUDGET },
	{ "target_mrr", required_argument, NULL, O_TARGET },
	{ "ent_optimizer", required_argument, NULL, O_ENTOPT },
	/* Warm start (kge/warmstart.h). */
	{ "init_from", required_argument, NULL, O_INITFROM },
	{ "init_new", required_argument, NULL, O_INITNEW },
	{ "reset_optimizer", no_argument, NULL, O_RESETOPT },
	{ "freeze_old", no_argument, NULL, O_FREEZE },
	{ "freeze_relations", no_argument, NULL, O_FREEZEREL },
	{ "init_entities", required_argument, NULL, O_INITENT },
	{ "entity_map", required_argument, NULL, O_ENTMAP },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, O_VERSION },
	{ NULL, 0, NULL, 0 }
};

/* DGL-KE's short spellings, which getopt cannot take as they are. */
static const char *const aliases[][2] = {
	{ "-adv", "--neg_adversarial_sampling" },
	{ "-a", "--adversarial_temperature" },
	{ "-rc", "--regularization_coef" },
	{ "-rn", "--regularization_norm" },
	{ "-de", "--double_ent" },
	{ "-dr", "--double_rel" },
	{ "-b", "--batch_size" },
	{ "-g", "--gamma" },
	{ "-d", "--hidden_dim" },
	{ "-m", "--margin" },
	{ "-log", "--log_interval" },
	{ "-pw", "--pairwise" },
	/* Half uniform, half by degree, as DGL-KE (which also doubles the
	 * negatives; here they keep their count). */
	{ "--neg_deg_sample", "--neg_sampler=mixed" },
};

/* DGL-KE options that take several values (argparse nargs='+'). */
static const char *const multi_value[] = { "--gpu", "--data_files" };

struct state {
	struct kg_train_opts o;
	struct kg_train_job j;
	struct kg_dist_train_opts x;
	int double_ent, double_rel;
	int epochs_given;	/* --epochs, on the command line or config */
	struct kg_device device;	/* --device, --gpu */
	int device_given;	/* --device or --gpu given */
	int pinned;		/* --device cuda:N or --gpu N: every rank on N */
	int gpus[KG_GPU_LIST_MAX];	/* --gpus: one per local rank, cycled */
	size_t n_gpus;
	int emulated;		/* the seam with KG_DEVICE_COUNT (device_ready) */
	uint32_t emulated_count;
	int *rank_gpus;		/* every rank's GPU (train) */
	int ship;		/* --ship_inputs */
	struct kg_warmstart_opts warm;	/* --init_from and the rest */
};

/* A byte count with an optional K, M, G or T (powers of 1024). */
static int
parse_size(const char *what, const char *arg, uint64_t *bytes)
{
	static const char units[] = "KMGT";
	const char *u;
	char num[64];
	size_t len = strlen(arg);
	double x, scale = 1.0;

	u = len > 0 ? strchr(units, arg[len - 1] & ~0x20) : NULL;
	if (u != NULL && *u != '\0') {
		scale = (double)(1ULL << (10 * (u - units + 1)));
		len--;
	}
	if (len == 0 || len >= sizeof(num))
		len = sizeof(num) - 1;
	memcpy(num, arg, len);
	num[len] = '\0';
	if (kg_parse_double(what, num, 1.0, 1e18 / scale, &x) < 0)
		return -1;
	*bytes = (uint64_t)(x * scale);
	return 0;
}

/* What an apply_* function returns for an option of another group. */
#define NOT_MINE (-2)

/* The model, loss and negative options; NOT_MINE for any other ch. */
static int
apply_model(struct state *s, int ch, const char *arg)
{
	struct kg_train_opts *o = &s->o;
	enum kg_neg_kind nk;

	switch (ch) {
	case O_MODEL:
		if (kg_model_find(arg, &o->model) == 0)
			return 0;
		kg_error("unknown model '%s' (expected TransE_l1, TransE_l2, "
		    "DistMult, ComplEx, RotatE, RESCAL, TransR, or the GNN "
		    "encoders RGCN and RelGNN)", arg);
		return -1;
	case O_DIM: return kg_parse_u32("--hidden_dim", arg, 1, 1u << 16,
	    &o->dim);
	case O_RELDIM: return kg_parse_u32("--rel_dim", arg, 1, 1u << 16,
	    &o->rel_dim);
	case O_GAMMA: return kg_parse_double("--gamma", arg, -1e6, 1e6,
	    &o->gamma);
	case O_RECIP: o->reciprocal = 1; return 0;
	case O_LOSS:
		/* DGL-KE's loss_genre names map onto ours. */
		if (strcasecmp(arg, "Logsigmoid") == 0 ||
		    strcasecmp(arg, "Logistic") == 0)
			arg = "logistic";
		else if (strcasecmp(arg, "Hinge") == 0)
			arg = "margin";
		return kg_loss_parse(arg, &o->loss.kind);
	case O_MARGIN: return kg_parse_double("--margin", arg, 0, 1e6,
	    &o->loss.margin);
	case O_ADV:
		if (o->loss.adv_temp == 0.0)
			o->loss.adv_temp = 1.0;
		return 0;
	case O_ADVT: return kg_parse_double("--adversarial_temperature", arg,
	    0, 1e6, &o->loss.adv_temp);
	case O_BATCH: return kg_parse_u32("--batch_size", arg, 1, 1u << 24,
	    &o->batch_size);
	case O_NEG: return kg_parse_u32("--neg_sample_size", arg, 1, 1u << 24,
	    &o->neg_sample_size);
	case O_CHUNK: return kg_parse_u32("--neg_chunk_size", arg, 1,
	    1u << 24, &o->chunk_size);
	case O_SAMPLER: return kg_neg_parse(arg, &nk, &o->degree_frac);
	case O_DEGFRAC: return kg_parse_double("--neg_degree_fraction", arg, 0,
	    1, &o->degree_frac);
	case O_FILTER: o->filter_negatives = 1; return 0;
	case O_TYPES: o->use_types = 1; return 0;
	case O_OVA: o->one_vs_all = 1; return 0;
	case O_OVA_GROUPED: o->ova_mode = KG_OVA_GROUPED; return 0;
	case O_SUBSAMPLING: o->subsampling = 1; return 0;
	case O_DETERMINISTIC: o->deterministic = 1; return 0;
	case O_OVA_AFTER: return kg_parse_u32("--one_vs_all_after", arg, 1,
	    1u << 24, &o->one_vs_all_after);
	case O_DOUBLE_ENT: s->double_ent = 1; return 0;
	case O_DOUBLE_REL: s->double_rel = 1; return 0;
	case O_PAIRWISE:
		kg_error("--pairwise (DGL-KE's pairwise loss) is not supported; "
		    "--loss margin compares each positive with its negatives");
		return -1;
	case O_NEGPOOL: return kg_parse_u32("--neg_pool", arg, 0, 1u << 24,
	    &o->neg_pool);
	case O_INBATCH: o->neg_in_batch = 1; return 0;
	}
	return NOT_MINE;
}

/* The optimisation and schedule options; NOT_MINE for any other ch. */
static int
apply_optim(struct state *s, int ch, const char *arg)
{
	struct kg_train_opts *o = &s->o;

	switch (ch) {
	case O_LR: return kg_parse_double("--lr", arg, 1e-12, 1e30, &o->lr);
	case O_RELOPT: return kg_optim_parse(arg, &o->rel_optim);
	case O_RELLR: return kg_parse_double("--rel_lr", arg, 0, 1e30,
	    &o->rel_lr);
	case O_RC: return kg_parse_double("--regularization_coef", arg, 0, 1e6,
	    &o->reg_coef);
	case O_RN: return kg_parse_u32("--regularization_norm", arg, 2, 3,
	    &o->reg_norm);
	case O_INIT:
		if (strcmp(arg, "uniform") == 0 || strcmp(arg, "normal") == 0) {
			o->init = arg[0] == 'n' ? KG_INIT_NORMAL :
			    KG_INIT_UNIFORM;
			return 0;
		}
		kg_error("--init: unknown value '%s' (expected uniform or "
		    "normal)", arg);
		return -1;
	case O_INITS: return kg_parse_double("--init_scale", arg, 0, 1e6,
	    &o->init_scale);
	case O_CLIP: return kg_parse_double("--max_grad_norm", arg, 0, 1e12,
	    &o->clip);
	case O_EPOCHS:
		s->epochs_given = 1;
		/* 0: --init_from's model written without training. */
		return kg_parse_u32("--epochs", arg, 0, 1u << 24, &o->epochs);
	case O_MAXSTEP: return kg_parse_u64("--max_step", arg, 1, UINT64_MAX,
	    &o->max_step);
	case O_SEED: return kg_parse_u64("--seed", arg, 0, UINT64_MAX,
	    &o->seed);
	case O_THREADS: return kg_parse_u32("--num_thread", arg, 1, 1024,
	    &o->threads);
	case O_RELPRED: return kg_parse_double("--rel_pred_weight", arg, 0,
	    1e6, &o->rel_pred);
	case O_DURA: return kg_parse_double("--dura_coef", arg, 0, 1e6,
	    &o->dura);
	case O_OVA_DURA: return kg_parse_double("--one_vs_all_dura", arg, 0,
	    1e6, &o->ova_dura);
	case O_WARMUP: return kg_parse_u64("--lr_warmup", arg, 0, UINT64_MAX,
	    &o->lr_warmup);
	case O_DECAY: return kg_parse_double("--lr_decay", arg, 1e-6, 1,
	    &o->lr_decay);
	case O_ENTOPT: return kg_optim_parse(arg, &o->ent_optim);
	}
	return NOT_MINE;
}

/* Validation, checkpoint, distribution and output options; NOT_MINE
 * for any other ch. */
static int
apply_run(struct state *s, int ch, const char *arg)
{

	switch (ch) {
	case O_VALID: return kg_parse_u32("--valid_every", arg, 0, 1u << 24,
	    &s->j.valid_every);
	case O_PATIENCE: return kg_parse_u32("--patience", arg, 0, 1u << 24,
	    &s->j.patience);
	case O_CKPT: s->j.checkpoint_dir = arg; return 0;
	case O_RESUME: s->j.resume = 1; return 0;
	case O_NOCKPT: s->j.no_checkpoint = 1; return 0;
	case O_KEEPCKPT: s->j.keep_checkpoint = 1; return 0;
	case 'f':
	case O_FORCE: s->j.force = 1; return 0;
	case O_PROGRESS: s->j.progress = 1; return 0;
	case O_DIST:
		if (kg_dist_mode_parse(arg, &s->x.mode) == 0)
			return 0;
		kg_error("--dist must be buckets or ssgd, not '%s'", arg);
		return -1;
	case O_PARTS: s->x.partitions = arg; return 0;
	case O_RELSYNC: return kg_parse_u32("--rel_sync", arg, 0, 1u << 30,
	    &s->x.rel_sync);
	case O_BUFCAP: return kg_parse_u32("--buffer_capacity", arg, 2,
	    1u << 20, &s->x.buffer_capacity);
	case O_MEMBUDGET: return parse_size("--mem_budget", arg,
	    &s->x.mem_budget);
	case O_SWAPDIR: s->x.swap_dir = arg; return 0;
	case O_GPUBUF: return kg_parse_u32("--gpu_buffer", arg, 2, 1u << 20,
	    &s->x.gpu_capacity);
	case O_GPUBUDGET: return parse_size("--gpu_mem_budget", arg,
	    &s->x.gpu_mem_budget);
	case O_SHIP: s->ship = 1; return 0;
	case O_PASSES: return kg_parse_u32("--bucket_passes", arg, 1, 1024,
	    &s->x.passes);
	case O_RELMERGE:
		if (strcmp(arg, "rows") == 0)
			s->x.rel_merge = KG_REL_MERGE_ROWS;
		else if (strcmp(arg, "mean") == 0)
			s->x.rel_merge = KG_REL_MERGE_MEAN;
		else if (strcmp(arg, "sum") == 0)
			s->x.rel_merge = KG_REL_MERGE_SUM;
		else {
			kg_error("--rel_merge must be rows, mean or sum, not "
			    "'%s'", arg);
			return -1;
		}
		return 0;
		return -1;
	case O_BUDGET: return kg_parse_double("--time_budget", arg, 0, 1e9,
	    &s->j.time_budget);
	case O_TARGET: return kg_parse_double("--target_mrr", arg, 0, 1,
	    &s->j.target_mrr);
	case O_OVA_PLATEAU: return kg_parse_u32("--one_vs_all_plateau", arg, 1,
	    1u << 24, &s->j.one_vs_all_plateau);
	case 'q': s->j.quiet = 1; return 0;
	case O_DEVICE:
		s->device_given = 1;
		s->pinned = strchr(arg, ':') != NULL;
		return kg_cli_device(arg, &s->device);
	case O_GPU:
		s->device_given = 1;
		s->pinned = 1;
		return kg_cli_gpu(arg, &s->device);
	case O_GPUS: return kg_cli_gpus(arg, s->gpus, &s->n_gpus);
	case O_IGNORED: return 0;	/* warned about by the caller */
	}
	return NOT_MINE;
}

/* The warm-start options (kge/warmstart.h). */
static int
apply_warm(struct kg_warmstart_opts *w, int ch, const char *arg)
{
	switch (ch) {
	case O_INITFROM: w->init_from = arg; return 0;
	case O_INITNEW: return kg_warmstart_parse_init_new(arg, &w->init_new);
	case O_RESETOPT: w->reset_optimizer = 1; return 0;
	case O_FREEZE: w->freeze_old = 1; return 0;
	case O_FREEZEREL: w->freeze_relations = 1; return 0;
	case O_INITENT: w->init_entities = arg; return 0;
	case O_ENTMAP: w->entity_map = arg; return 0;
	}
	return NOT_MINE;
}

/* --epochs 0 and the warm-start combinations; 0 or -1. */
static int
warm_check(struct state *s)
{
	s->warm.no_train = s->epochs_given && s->o.epochs == 0;
	if (s->warm.no_train)
		s->o.epochs = 1;
	if (kg_warmstart_check(&s->warm) < 0)
		return -1;
	if ((s->warm.init_from || s->warm.init_entities) &&
	    (s->x.partitions != NULL || s->x.mode != KG_DIST_NONE)) {
		kg_error("--init_from and --init_entities train in one process "
		    "without --partitions or --dist for now");
		return -1;
	}
	s->j.warm = &s->warm;
	return 0;
}

/* Apply option ch (with arg) to s; 0, or -1 after kg_error(). */
static int
apply(struct state *s, int ch, const char *arg)
{
	int rc = apply_model(s, ch, arg);

	if (rc == NOT_MINE)
		rc = apply_optim(s, ch, arg);
	if (rc == NOT_MINE)
		rc = apply_run(s, ch, arg);
	if (rc == NOT_MINE)
		rc = apply_warm(&s->warm, ch, arg);
	return rc == NOT_MINE ? -1 : rc;
}

/* apply() for kg_cli_config. */
static int
apply_key(void *ctx, int ch, const char *arg)
{
	return apply(ctx, ch, arg);
}

/*
 * DGL-KE's -de and -dr: entity rows of 2 x hidden_dim floats, relation
 * rows of 2 x hidden_dim floats (general_models.py), for the models whose
 * scores accept them there: ComplEx with both (each row then holds
 * hidden_dim complex numbers), RotatE with -de alone (hidden_dim complex
 * numbers, hidden_dim phases), TransR with either.  Other combinations
 * fail in DGL-KE itself; here they are usage errors.  0 or -1.
 */
static int
double_rows(struct state *s)
{
	struct kg_train_opts *o = &s->o;
	int de = s->double_ent, dr = s->double_rel;
	const char *name = kg_model_name(o->model);

	if (!de && !dr)
		return 0;
	switch (o->model) {
	case KG_MODEL_COMPLEX:
		if (de != dr) {
			kg_error("ComplEx takes -de and -dr together (entity and "
			    "relation rows of 2 x hidden_dim floats), as in "
			    "DGL-KE");
			return -1;
		}
		o->dim *= 2;
		return 0;
	case KG_MODEL_ROTATE:
		if (dr) {
			kg_error("RotatE takes -de alone (relations hold "
			    "hidden_dim phases), as in DGL-KE");
			return -1;
		}
		o->dim *= 2;
		return 0;
	case KG_MODEL_TRANSR:
		o->rel_dim = (o->rel_dim ? o->rel_dim : o->dim) * (dr ? 2 : 1);
		o->dim *= de ? 2 : 1;
		return 0;
	default:
		kg_error("%s%s%s has no meaning for %s (DGL-KE takes it with "
		    "ComplEx, RotatE and TransR)", de ? "-de" : "",
		    de && dr ? " with " : "", dr ? "-dr" : "", name);
		return -1;
	}
}

/*
 * Parse the (normalised) arguments into s.  Returns 0 to go on, or an
 * exit status + 1 when done (help, version, usage error).
 */
static int
parse_args(int argc, char **av, struct state *s)
{
	const char *in[2];
	int ch, idx = 0;

	/* --config files first, so that explicit options override them. */
	if (kg_cli_configs(argc, av, long_opts, O_CONFIG, O_IGNORED, apply_key,
	    s) < 0)
		return KG_EXIT_USAGE + 1;
	while ((ch = kg_tool_getopt(argc, av, "hqf", long_opts, &idx)) !=
	    -1) {
		switch (ch) {
		case 'h':
			kg_train_usage(stdout, 1);
			return KG_EXIT_OK + 1;
		case O_VERSION:
			printf("kg-train %s\n", KG_VERSION);
			return KG_EXIT_OK + 1;
		case O_CONFIG:
			break;
		case '?':
			return kg_tool_usage_error() + 1;
		default:
			if (ch == O_IGNORED)
				kg_warn("ignoring DGL-KE option --%s: %s",
				    long_opts[idx].name,
				    kg_train_ignored_hint(
				    long_opts[idx].name));
			if (apply(s, ch, optarg) < 0)
				return KG_EXIT_USAGE + 1;
		}
	}
	if (argc - optind != 2) {
		kg_error("expected DATASET_DIR MODEL_DIR, got %d operand%s",
		    argc - optind, argc - optind == 1 ? "" : "s");
		return kg_tool_usage_error() + 1;
	}
	/* DGL-KE's habit: --max_step alone bounds training, not the
	 * default epoch count as well. */
	if (s->o.max_step > 0 && !s->epochs_given)
		s->o.epochs = 0;
	if (warm_check(s) < 0)
		return KG_EXIT_USAGE + 1;
	if (double_rows(s) < 0 || kg_train_opts_check(&s->o) < 0)
		return KG_EXIT_USAGE + 1;
	if (kg_train_job_check(&s->o, &s->j) < 0)
		return KG_EXIT_USAGE + 1;
	if (s->x.partitions != NULL && s->x.mode == KG_DIST_NONE)
		s->x.mode = KG_DIST_BUCKETS;
	if (s->o.ent_optim != KG_OPTIM_ADAGRAD && s->x.mode != KG_DIST_NONE) {
		kg_error("--ent_optimizer %s trains in one process only",
		    kg_optim_name(s->o.ent_optim));
		return KG_EXIT_USAGE + 1;
	}
	if (s->x.mode == KG_DIST_BUCKETS && s->x.partitions == NULL) {
		kg_error("--dist buckets needs --partitions");
		return KG_EXIT_USAGE + 1;
	}
	if ((s->x.buffer_capacity || s->x.mem_budget || s->x.swap_dir ||
	    s->x.passes > 1) && s->x.mode != KG_DIST_BUCKETS) {
		kg_error("--buffer_capacity, --mem_budget, --swap_dir and "
		    "--bucket_passes need --partitions");
		return KG_EXIT_USAGE + 1;
	}
	if (s->x.mode == KG_DIST_SSGD && s->x.partitions != NULL) {
		kg_error("--dist ssgd trains on the whole dataset; drop "
		    "--partitions");
		return KG_EXIT_USAGE + 1;
	}
	s->j.dataset = av[optind];
	s->j.output = av[optind + 1];
	in[0] = s->j.dataset;
	in[1] = s->x.partitions;
	if (!s->j.no_checkpoint && kg_ckpt_check_rerun(s->j.checkpoint_dir,
	    s->j.output, s->j.resume, s->j.force, in, 2) < 0)
		return KG_EXIT_USAGE + 1;
	return 0;
}

/*
 * --ship_inputs: rank 0's dataset and partition directories copied to
 * every other rank's own disk over MPI (dist/ship.h), and the job reading
 * them there.  0 or -1 on every rank.
 */
static int
ship_inputs(struct state *s, struct kg_dist *d, char **local,
    char *shipped[2])
{
	const char *dirs[2] = { s->j.dataset, s->x.partitions };

	if (d->size == 1)
		return 0;
	if (kg_dist_ship_trees(d, dirs, 2, NULL, local, shipped) < 0)
		return -1;
	s->j.dataset = shipped[0];
	if (shipped[1] != NULL)
		s->x.partitions = shipped[1];
	return 0;
}

/*
 * --gpus LIST: the GPUs of the ranks, which means --device cuda; with
 * --device cpu, or with one GPU named, a usage error.  0 or -1.
 */
static int
gpus_opt(struct state *s)
{
	if (s->n_gpus == 0)
		return 0;
	if (s->device_given && s->device.kind == KG_DEVICE_CPU) {
		kg_error("--gpus lists the GPUs of the ranks; it does not go "
		    "with --device cpu");
		return -1;
	}
	if (s->pinned) {
		kg_error("--gpus and --device cuda:N (or --gpu N) both choose "
		    "the GPU; give one of them");
		return -1;
	}
	s->device.kind = KG_DEVICE_CUDA;
	s->device.index = s->gpus[0];
	return 0;
}

/*
 * Where the step runs (--device, --gpu, --gpus): the CPU trainer, or the
 * device trainer (kge/train_device.h) on a visible GPU, alone or under
 * mpirun with --dist ssgd, with --partitions over the device's partition
 * buffer (kge/train_device_buf.h); one line and KG_EXIT_USAGE otherwise,
 * before any work.  Test hooks: KG_TRAIN_SEAM=cpu runs the device trainer
 * on the CPU backend; with it, KG_DEVICE_COUNT=N lets --device cuda and
 * --gpus choose each rank's GPU as if N were visible (train() names them
 * in its lines and the manifest), the steps running on the CPU backend.
 */
static int
device_ready(struct state *s)
{
	const char *seam = getenv("KG_TRAIN_SEAM"), *count;
	int seam_env = seam != NULL && strcmp(seam, "cpu") == 0, rc;
	int gpu_opts = s->x.gpu_capacity > 0 || s->x.gpu_mem_budget > 0;
	char name[32];

	if (gpus_opt(s) < 0)
		return KG_EXIT_USAGE;
	count = seam_env ? getenv("KG_DEVICE_COUNT") : NULL;
	if (count != NULL && s->device.kind == KG_DEVICE_CUDA) {
		if (kg_parse_u32("KG_DEVICE_COUNT", count, 0,
		    KG_DEVICE_MAX_INDEX + 1, &s->emulated_count) < 0)
			return KG_EXIT_USAGE;
		s->emulated = 1;
	}
	s->j.seam = seam_env && (s->device.kind == KG_DEVICE_CPU ||
	    s->emulated);
	if (gpu_opts && (s->x.mode != KG_DIST_BUCKETS ||
	    (s->device.kind == KG_DEVICE_CPU && !s->j.seam))) {
		kg_error("--gpu_buffer and --gpu_mem_budget need --partitions "
		    "and --device cuda");
		return KG_EXIT_USAGE;
	}
	if (s->device.kind == KG_DEVICE_CPU && !s->j.seam)
		return KG_EXIT_OK;
	kg_device_format(&s->device, name, sizeof(name));
	if (!s->emulated && kg_backend_check(&s->device) < 0)
		return KG_EXIT_USAGE;
	if (kg_train_device_check(&s->o) < 0)
		return KG_EXIT_USAGE;
	/* Partitions: the device's partition buffer, its capacity checked
	 * against them before any work (one process; under mpirun each
	 * rank's device takes a bucket at a time, lib/dist/buckets.c). */
	if (s->x.mode == KG_DIST_BUCKETS && kg_dist_launched_size() == 1) {
		rc = kg_dist_gpu_check(&s->x, &s->o, &s->x.gpu_capacity);
		if (rc == KG_ERR_VERSION)
			return KG_EXIT_VERSION;
		if (rc < 0)
			return rc == -2 ? KG_EXIT_FAIL : KG_EXIT_USAGE;
		s->x.gpu_mem_budget = 0;
	}
	s->j.device = s->emulated ? (struct kg_device)KG_DEVICE_INIT :
	    s->device;
	return KG_EXIT_OK;
}

/*
 * Under --device cuda (or --gpus): this rank's GPU (dist/gpus.h) into the
 * job, every rank's in s->rank_gpus for the manifest, and unless quiet a
 * line from each rank naming it.  Every entry of --gpus is checked on
 * every rank, so a refusal is every rank's; one line (the lowest failing
 * rank's) is printed.  0, or -1 on every rank (collective).
 */
static int
choose_gpu(struct state *s, struct kg_dist *d)
{
	int lrank, lsize, count, dev = -1, rc = 0, i, *bad;
	char msg[512];

	if (s->device.kind != KG_DEVICE_CUDA)
		return 0;
	kg_dist_local_rank(d, &lrank, &lsize);
	count = s->emulated ? (int)s->emulated_count : kg_gpu_count();
	kg_error_hold(1);
	for (i = 0; rc == 0 && (size_t)i < s->n_gpus; i++)
		rc = kg_gpu_pick(i, count, s->gpus, s->n_gpus, -1, &dev);
	if (rc == 0)
		rc = kg_gpu_pick(lrank, count, s->gpus, s->n_gpus, s->pinned ?
		    s->device.index : -1, &dev);
	kg_error_hold(0);
	snprintf(msg, sizeof(msg), "%s", rc < 0 ? kg_error_last() : "");
	bad = kg_xcalloc((size_t)d->size, sizeof(int));
	s->rank_gpus = kg_xcalloc((size_t)d->size, sizeof(int));
	kg_dist_allgather(d, &rc, sizeof(rc), bad);
	kg_dist_allgather(d, &dev, sizeof(dev), s->rank_gpus);
	for (i = 0; i < d->size && bad[i] == 0; i++)
		;
	free(bad);
	if (i < d->size) {
		if (i == d->rank)
			kg_error("%s", msg);
		return -1;
	}
	s->device.index = dev;
	if (!s->emulated)
		s->j.device = s->device;
	s->j.gpus = s->rank_gpus;
	s->j.n_gpus = d->size;
	s->j.gpus_emulated = s->emulated;
	if (d->size > 1 && !s->j.quiet)
		fprintf(stderr, "%s: rank %d of %d (local rank %d of %d) "
		    "trains on cuda:%d%s\n", kg_progname(), d->rank, d->size,
		    lrank, lsize, dev, s->emulated ?
		    " (emulated: KG_DEVICE_COUNT, the CPU backend)" : "");
	return 0;
}

/*
 * Train as asked: alone, on partition buckets, or data-parallel.  Under
 * mpirun every rank runs this; a rank that fails stops the others.
 */
static int
train(struct state *s, int *argc, char ***argv)
{
	struct kg_dist d;
	struct kg_dist_ssgd *ssgd = NULL;
	char *local = NULL, *shipped[2] = { NULL, NULL };
	int rc;

	if (kg_dist_init(&d, argc, argv) < 0)
		return KG_EXIT_FAIL;
	if (d.size > 1 && s->x.mode == KG_DIST_NONE) {
		if (d.rank == 0)
			kg_error("%d ranks under mpirun need --partitions DIR "
			    "(partition buckets) or --dist ssgd", d.size);
		kg_dist_finalize(&d);
		return KG_EXIT_USAGE;
	}
	if (choose_gpu(s, &d) < 0) {
		free(s->rank_gpus);
		kg_dist_finalize(&d);
		return KG_EXIT_USAGE;
	}
	if (d.rank != 0) {
		s->j.quiet = 1;
		s->j.follower = 1;
	}
	if (s->ship && ship_inputs(s, &d, &local, shipped) < 0) {
		kg_dist_abort(&d, KG_EXIT_FAIL);
		kg_dist_finalize(&d);
		return KG_EXIT_FAIL;
	}
	switch (s->x.mode) {
	case KG_DIST_BUCKETS:
		rc = kg_dist_train_run(&d, &s->o, &s->j, &s->x);
		break;
	case KG_DIST_SSGD:
		ssgd = kg_dist_ssgd_new(&d);
		s->j.after_init = kg_dist_ssgd_after_init;
		s->j.after_epoch = kg_dist_ssgd_after_epoch;
		s->j.hook_ctx = ssgd;
		rc = kg_train_run(&s->o, &s->j);
		break;
	default:
		rc = kg_train_run(&s->o, &s->j);
		break;
	}
	rc = rc == KG_ERR_VERSION ? KG_EXIT_VERSION : rc < 0 ? KG_EXIT_FAIL :
	    KG_EXIT_OK;
	if (rc != KG_EXIT_OK)
		kg_dist_abort(&d, rc);
	if (local != NULL)
		kg_rmtree(local);
	free(local);
	free(shipped[0]);
	free(shipped[1]);
	kg_dist_ssgd_free(ssgd);
	kg_dist_finalize(&d);
	free(s->rank_gpus);
	return rc;
}

int
main(int argc, char *argv[])
{
	struct state s;
	struct kg_train_opts z = KG_TRAIN_OPTS_INIT;
	struct kg_train_job zj = KG_TRAIN_JOB_INIT;
	struct kg_dist_train_opts zx = KG_DIST_TRAIN_OPTS_INIT;
	struct kg_device zd = KG_DEVICE_INIT;
	struct kg_warmstart_opts zw = KG_WARMSTART_OPTS_INIT;
	char **av;
	int rc, nav;

	kg_setprogname(argv[0]);
	if (kg_train_help_wanted(argc, argv)) {
		kg_train_usage(stdout, 1);
		return kg_close_stdout() < 0 ? KG_EXIT_FAIL : KG_EXIT_OK;
	}
	kg_tool_tune_blas(argv);
	/* GNN encoders have options of their own (lib/gnntrain/gnn_train.h). */
	if (kg_gnn_cli_wanted(argc, argv)) {
		rc = kg_gnn_cli(argc, argv);
		if (kg_close_stdout() < 0)
			rc = KG_EXIT_FAIL;
		return rc;
	}
	memset(&s, 0, sizeof(s));
	s.o = z;
	s.j = zj;
	s.device = zd;
	s.x = zx;
	s.warm = zw;
	s.x.rel_sync = 1;
	s.j.argc = argc;
	s.j.argv = argv;
	av = kg_cli_argv(argc, argv, aliases, KG_ARRAY_LEN(aliases));
	nav = kg_cli_multi_values(argc, av, long_opts, multi_value,
	    KG_ARRAY_LEN(multi_value), 2);
	rc = parse_args(nav, av, &s);
	if (rc > 0)
		rc--;
	else if ((rc = device_ready(&s)) == KG_EXIT_OK)
		rc = train(&s, &argc, &argv);
	kg_cli_argv_free(argc, av);
	if (kg_close_stdout() < 0)
		rc = KG_EXIT_FAIL;
	return rc;
}
