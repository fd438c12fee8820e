/*
 * kg-train: train a shallow KG embedding model or a GNN encoder on a
 * kg-ingest dataset dir and write a model dir.  Options are spelled as
 * DGL-KE's where the concept is the same (dashes and underscores both
 * work) and can come from a JSON --config file with the same keys; the
 * work is in lib/app/train_run.c and lib/app/train_buckets.c.
 * The options, shallow and GNN, are one table (cmd/cli/train_opts.c),
 * from which their parsing, --help and the man page's check follow; this
 * file checks the shallow options' combinations and runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/tool.h"
#include "cli/gnn_cli.h"
#include "cli/train_help.h"
#include "cli/train_opts.h"
#include "io/ckpt.h"
#include "io/manifest.h"
#include "kge/model.h"
#include "dist/dist.h"
#include "dist/dist_train.h"
#include "dist/gpus.h"
#include "dist/ship.h"
#include "kge/train.h"
#include "kge/engine.h"
#include "kge/warmstart.h"
#include "app/train_buckets.h"
#include "app/train_run.h"
#include "core/util.h"

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

/* The table's shallow options, as parsed into c, into s. */
static void
take_opts(struct state *s, const struct kg_train_cli *c)
{
	const struct kg_train_shallow *sh = &c->sh;

	s->o = sh->o;
	s->j = sh->j;
	s->x = sh->x;
	s->double_ent = sh->double_ent;
	s->double_rel = sh->double_rel;
	s->epochs_given = kg_train_cli_given(c, "epochs");
	s->device = sh->device;
	s->device_given = kg_train_cli_given(c, "device") ||
	    kg_train_cli_given(c, "gpu");
	s->pinned = sh->pinned;
	memcpy(s->gpus, sh->gpus, sizeof(s->gpus));
	s->n_gpus = sh->n_gpus;
	s->ship = sh->ship;
	s->warm = sh->warm;
	s->j.dataset = c->operand[0];
	s->j.output = c->operand[1];
}

/* --epochs 0 and the warm-start combinations; 0 or -1 after kg_error(). */
static int
warm_check(struct state *s)
{
	s->warm.no_train = s->epochs_given && s->o.epochs == 0;
	if (s->warm.no_train)
		s->o.epochs = 1;
	if (kg_warmstart_check(&s->warm) < 0)
		return -1;
	s->j.warm = &s->warm;
	return 0;
}

/*
 * Parse argv into s through the option table (c holds the parse and the
 * argv copy the values point into) and check the combinations.  Returns
 * 0 to go on, or an exit status + 1 when done (help, version, usage
 * error).
 */
static int
parse_args(int argc, char **argv, struct state *s, struct kg_train_cli *c)
{
	const char *in[2];
	int rc = kg_train_cli_parse(c, KG_TRAIN_SHALLOW, argc, argv);

	if (rc > 0)
		return rc;
	take_opts(s, c);
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
	    s->x.disk_f16 || s->x.passes > 1) && s->x.mode !=
	    KG_DIST_BUCKETS) {
		kg_error("--buffer_capacity, --mem_budget, --swap_dir, "
		    "--disk_dtype and --bucket_passes need --partitions");
		return KG_EXIT_USAGE + 1;
	}
	if (s->x.mode == KG_DIST_SSGD && s->x.partitions != NULL) {
		kg_error("--dist ssgd trains on the whole dataset; drop "
		    "--partitions");
		return KG_EXIT_USAGE + 1;
	}
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
 * Where the step runs (--device, --gpu, --gpus): the place the engine
 * chooser picks (kge/engine.h) for the options, the device and the rank
 * count, and the options-only rows of its supports table; one line and
 * KG_EXIT_USAGE for what cannot run there, before any work.  With
 * --partitions in one process the device's buffer capacity is checked
 * against them too.  Test hooks: KG_TRAIN_SEAM=cpu runs the device
 * engine on the CPU backend; with it, KG_DEVICE_COUNT=N lets --device
 * cuda and --gpus choose each rank's GPU as if N were visible (train()
 * names them in its lines and the manifest), the steps running on the
 * CPU backend.
 */
static int
device_ready(struct state *s)
{
	const char *seam = getenv("KG_TRAIN_SEAM"), *count;
	int seam_env = seam != NULL && strcmp(seam, "cpu") == 0, rc;
	struct kg_engine_run r = KG_ENGINE_RUN_INIT;
	enum kg_engine_place place;

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
	r.o = &s->o;
	r.shape = s->x.mode == KG_DIST_BUCKETS ? KG_SHAPE_BUCKETS :
	    KG_SHAPE_TABLE;
	r.ranks = kg_dist_launched_size();
	r.on_device = s->device.kind != KG_DEVICE_CPU || s->j.seam;
	r.device = s->device;
	r.check_device = !s->emulated;
	r.gpu_buffer = s->x.gpu_capacity > 0 || s->x.gpu_mem_budget > 0;
	if (kg_engine_choose(&r, KG_ASK_PLACE | KG_ASK_OPTIONS, &place) < 0)
		return KG_EXIT_USAGE;
	if (place == KG_PLACE_HOST)
		return KG_EXIT_OK;
	if (place == KG_PLACE_DEVICE_BUFFER) {
		rc = kg_train_buckets_gpu_check(&s->x, &s->o, &s->x.gpu_capacity);
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
		rc = kg_train_buckets_run(&d, &s->o, &s->j, &s->x);
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
	struct kg_train_cli *c;
	int rc;

	kg_setprogname(argv[0]);
	if (kg_train_help_wanted(argc, argv)) {
		kg_train_usage(stdout, 1);
		return kg_close_stdout() < 0 ? KG_EXIT_FAIL : KG_EXIT_OK;
	}
	kg_tool_tune_blas(argv);
	/* GNN encoders take the table's GNN uses (cli/gnn_cli.h). */
	if (kg_gnn_cli_wanted(argc, argv)) {
		rc = kg_gnn_cli(argc, argv);
		if (kg_close_stdout() < 0)
			rc = KG_EXIT_FAIL;
		return rc;
	}
	memset(&s, 0, sizeof(s));
	c = kg_xmalloc(sizeof(*c));
	rc = parse_args(argc, argv, &s, c);
	if (rc > 0)
		rc--;
	else if ((rc = device_ready(&s)) == KG_EXIT_OK)
		rc = train(&s, &argc, &argv);
	kg_train_cli_release(c);
	free(c);
	if (kg_close_stdout() < 0)
		rc = KG_EXIT_FAIL;
	return rc;
}
