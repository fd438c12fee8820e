#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <jansson.h>
#include <omp.h>

#include "cli/tool.h"
#include "dist/dist.h"
#include "dist/ship.h"
#include "cli/gnn_cli.h"
#include "cli/train_opts.h"
#include "app/gnn_run.h"
#include "io/ckpt.h"
#include "io/manifest.h"
#include "core/util.h"

/*
 * Whether a is --model_name as getopt_long takes it: spelled with '-' or
 * '_', or shortened to any prefix ("--mo": no other option of kg-train
 * begins so); *eq: the length of its name part (a[*eq] is '=' or '\0').
 */
static int
model_name_opt(const char *a, size_t *eq)
{
	static const char full[] = "model_name";
	size_t n, k;

	if (strncmp(a, "--", 2) != 0)
		return 0;
	n = strcspn(a + 2, "=");
	if (n < 2 || n > sizeof(full) - 1)
		return 0;
	for (k = 0; k < n; k++)
		if (a[2 + k] != full[k] && !(full[k] == '_' && a[2 + k] == '-'))
			return 0;
	*eq = n + 2;
	return 1;
}

int
kg_gnn_cli_wanted(int argc, char *argv[])
{
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = NULL;
		size_t eq;

		if (strcmp(a, "--") == 0)
			break;
		if (model_name_opt(a, &eq)) {
			if (a[eq] == '=')
				v = a + eq + 1;
			else if (i + 1 < argc)
				v = argv[i + 1];
		} else if ((strcmp(a, "--config") == 0 && i + 1 < argc) ||
		    strncmp(a, "--config=", 9) == 0) {
			json_t *root = json_load_file(a[8] == '=' ? a + 9 :
			    argv[i + 1], 0, NULL);
			json_t *m = json_object_get(root, "model_name");
			int gnn = json_is_string(m) && (strcasecmp(
			    json_string_value(m), "rgcn") == 0 ||
			    strcasecmp(json_string_value(m), "relgnn") == 0);

			json_decref(root);
			if (gnn)
				return 1;
			continue;
		}
		if (v != NULL && (strcasecmp(v, "rgcn") == 0 ||
		    strcasecmp(v, "relgnn") == 0))
			return 1;
	}
	return 0;
}

/*
 * OpenMP threads when neither --num_thread nor OMP_NUM_THREADS says: the
 * cores shared out among the ranks mpirun started on this node (0: keep
 * OpenMP's default, one per core).  Every rank taking every core makes
 * the threads of several ranks spin against each other, many times
 * slower than one thread each.
 */
static uint32_t
default_threads(void)
{
	const char *v = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
	unsigned long local = v != NULL ? strtoul(v, NULL, 10) : 0;
	unsigned long n;

	if (local < 2)
		return 0;
	n = (unsigned long)omp_get_num_procs() / local;
	return n ? (uint32_t)n : 1;
}

/* --ship_inputs: a rank's expanded part and the top manifest only. */
static int
keep_part(size_t i, const char *rel, int rank)
{
	char part[32];

	if (i != 2 || strcmp(rel, "manifest.json") == 0)
		return 1;
	snprintf(part, sizeof(part), "part-%03d/", rank);
	return strncmp(rel, part, strlen(part)) == 0;
}

/*
 * --ship_inputs: rank 0's dataset, features and each rank's expanded part
 * copied to that rank's own disk over MPI (dist/ship.h), and the run
 * reading them there.  0 or -1 on every rank.
 */
static int
ship_inputs(struct kg_gnn_run *r, struct kg_dist *d, char **local,
    char *shipped[3])
{
	const char *dirs[3] = { r->dataset, r->features, r->expanded };

	if (kg_dist_ship_trees(d, dirs, 3, keep_part, local, shipped) < 0)
		return -1;
	r->dataset = shipped[0];
	if (shipped[1] != NULL)
		r->features = shipped[1];
	if (shipped[2] != NULL)
		r->expanded = shipped[2];
	return 0;
}

/* The GNN run of c's options, which kg_train_cli_parse filled. */
static int
gnn_cli_run(struct kg_train_cli *tc, int argc, char *argv[])
{
	struct kg_train_gnn *c = &tc->gnn;
	struct kg_warmstart_opts warm = KG_WARMSTART_OPTS_INIT;
	struct kg_dist d = KG_DIST_INIT;
	const char *in[3], *seam;
	char *local = NULL, *shipped[3] = { NULL, NULL, NULL };
	int rc, i;
	uint32_t k;

	if (!kg_train_cli_given(tc, "model_name")) {
		kg_error("--model_name RGCN or RelGNN is required");
		return KG_EXIT_USAGE;
	}
	c->r.dataset = tc->operand[0];
	c->r.output = tc->operand[1];
	c->o.enc.dims[0] = c->hidden;
	for (k = 1; k < c->o.enc.n_layers; k++)
		c->o.enc.dims[k] = c->hidden;
	c->o.enc.dims[c->o.enc.n_layers] = c->dim;
	warm.init_from = c->o.init_from;
	warm.init_entities = c->o.init_entities;
	warm.entity_map = c->o.entity_map;
	warm.no_train = c->o.epochs == 0;
	warm.freeze_old = c->o.freeze_old;
	warm.freeze_relations = c->o.freeze_relations;
	if (kg_warmstart_check(&warm) < 0)
		return KG_EXIT_USAGE;
	if (kg_gnn_train_opts_check(&c->o) < 0)
		return KG_EXIT_USAGE;
	/* KG_TRAIN_SEAM=cpu, a test hook, runs the device step on the CPU
	 * backend (as kg-train's shallow models). */
	seam = getenv("KG_TRAIN_SEAM");
	c->o.seam = seam != NULL && strcmp(seam, "cpu") == 0;
	c->o.device = c->device;
	if (c->device.kind != KG_DEVICE_CPU && kg_backend_check(&c->device) < 0)
		return KG_EXIT_USAGE;
	if ((c->device.kind != KG_DEVICE_CPU || c->o.seam) &&
	    kg_gnn_train_device_check(&c->o) < 0)
		return KG_EXIT_USAGE;
	in[0] = c->r.dataset;
	in[1] = c->r.features;
	in[2] = c->r.expanded;
	if (!c->r.no_checkpoint && kg_ckpt_check_rerun(c->r.checkpoint_dir,
	    c->r.output, c->r.resume, c->r.force, in, 3) < 0)
		return KG_EXIT_USAGE;
	c->o.progress = !c->o.quiet && (c->progress || isatty(2));
	if (c->threads == 0 && getenv("OMP_NUM_THREADS") == NULL)
		c->threads = default_threads();
	if (c->threads > 0)
		omp_set_num_threads((int)c->threads);
	if (kg_dist_init(&d, &argc, &argv) < 0)
		return KG_EXIT_FAIL;
	if (c->ship && d.size > 1 && ship_inputs(&c->r, &d, &local, shipped) < 0)
		rc = -1;
	else
		rc = kg_gnn_train_run(&c->r, &c->o, &d);
	if (rc < 0 && d.size > 1)
		kg_dist_abort(&d, KG_EXIT_FAIL);
	if (local != NULL)
		kg_rmtree(local);
	free(local);
	for (i = 0; i < 3; i++)
		free(shipped[i]);
	kg_dist_finalize(&d);
	return rc == KG_ERR_VERSION ? KG_EXIT_VERSION :
	    rc < 0 ? KG_EXIT_FAIL : KG_EXIT_OK;
}

int
kg_gnn_cli(int argc, char *argv[])
{
	struct kg_train_cli *c = kg_xmalloc(sizeof(*c));
	int rc;

	/* c's argv copy stays alive until the run is over: its options point
	 * into it.  (MPI_Init may change argc; the copy keeps its own
	 * count.) */
	rc = kg_train_cli_parse(c, KG_TRAIN_GNN, argc, argv);
	if (rc > 0)
		rc--;
	else
		rc = gnn_cli_run(c, argc, argv);
	kg_train_cli_release(c);
	free(c);
	return rc;
}
