/*
 * gnn_run: a GNN training run from directories (gnn_run.h:
 * kg_gnn_train_run): inputs read and checked, kg_gnn_train, the model
 * directory written.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/gnn_run.h"
#include "app/job.h"
#include "eval/eval.h"
#include "gnntrain/train_io.h"
#include "io/ckpt.h"
#include "io/outdir.h"

/* What a rank trains on, and the files that hold it. */
struct inputs {
	struct kg_dataset ds;
	struct kg_features gf;		/* the whole feature directory */
	struct kg_features pf;		/* this rank's part's slice */
	struct kg_gnn_part pt;
	struct kg_gnn_problem p;
	struct kg_filter filter;	/* validation's: every split */
};

static void
inputs_release(struct inputs *in)
{
	kg_filter_release(&in->filter);
	kg_features_release(&in->gf);
	kg_features_release(&in->pf);
	kg_gnn_part_release(&in->pt);
	kg_dataset_release(&in->ds);
}

static char *
part_dir(const char *expanded, int k)
{
	char *name = kg_xasprintf("part-%03d", k);
	char *dir = kg_path_join(expanded, name);

	free(name);
	return dir;
}

/* One rank per part: every rank checks the same two paths, so all fail
 * alike rather than some waiting in a collective.  On hosts that share no
 * directory the last part may be missing on one host only: the message
 * names it and the host. */
static int
check_parts(const char *expanded, const struct kg_dist *d)
{
	char *beyond = part_dir(expanded, d->size);
	char *last = part_dir(expanded, d->size - 1);
	char host[256];
	int rc = 0;

	if (kg_path_exists(beyond)) {
		kg_error("'%s' holds more parts than the %d ranks: run one "
		    "rank per part", expanded, d->size);
		rc = -1;
	} else if (!kg_path_exists(last)) {
		if (gethostname(host, sizeof(host)) != 0)
			snprintf(host, sizeof(host), "unknown");
		host[sizeof(host) - 1] = '\0';
		kg_error("'%s' does not exist on host %s (rank %d of %d): run "
		    "one rank per part, with the parts on every rank's host "
		    "(or --ship_inputs)", last, host, d->rank, d->size);
		rc = -1;
	}
	free(beyond);
	free(last);
	return rc;
}

/* This rank's kg-expand part, and its slice of the features. */
static int
part_problem(struct inputs *in, const struct kg_gnn_run *r,
    const struct kg_gnn_train_opts *o, const struct kg_dist *d)
{
	struct kg_gnn_problem *p = &in->p;
	struct kg_gnn_part *pt = &in->pt;
	char *pdir, *fdir;
	int rc = -1;

	if (check_parts(r->expanded, d) < 0)
		return -1;
	pdir = part_dir(r->expanded, d->rank);
	fdir = kg_path_join(pdir, "features");
	if (kg_gnn_part_load(pt, pdir, in->ds.n_entities, p->n_relations) < 0)
		goto out;
	p->n_nodes = pt->nodes.shape[0];
	p->graph_hrt = pt->edges.data;
	p->n_graph = pt->edges.shape[0];
	p->core_hrt = pt->core_hrt;
	p->n_core = pt->n_core;
	p->pool = o->pool_seeds ? pt->pool.data : NULL;
	p->n_pool = pt->pool.shape[0];
	p->lrow = pt->nodes.data;
	p->owner = pt->owner.data;
	if (r->features != NULL) {
		if (kg_features_load(&in->pf, fdir, r->features,
		    p->n_nodes) < 0)
			goto out;
		p->feat = &in->pf;
	}
	rc = 0;
out:
	free(pdir);
	free(fdir);
	return rc;
}

/* The dataset, the features, and the problem: this rank's part under
 * kg-expand, else the whole training graph.  0, -1 or KG_ERR_VERSION
 * after kg_error(). */
static int
inputs_load(struct inputs *in, const struct kg_gnn_run *r,
    const struct kg_gnn_train_opts *o, const struct kg_dist *d)
{
	const struct kg_triples *tr;
	int rc = kg_dataset_load(&in->ds, r->dataset);

	if (rc < 0)
		return rc;
	tr = &in->ds.split[KG_SPLIT_TRAIN];
	if (in->ds.n_relations > INT32_MAX / 2) {
		kg_error("too many relations");
		return -1;
	}
	in->p.n_relations = (uint32_t)in->ds.n_relations;
	/* Under kg-expand a rank trains on its part's slice; the whole
	 * features are read by rank 0 for the final embedding only. */
	if (r->expanded != NULL)
		return part_problem(in, r, o, d);
	if (r->features != NULL && (rc = kg_features_load(&in->gf,
	    r->features, NULL, in->ds.n_entities)) < 0)
		return rc;
	in->p.n_nodes = in->ds.n_entities;
	in->p.graph_hrt = tr->hrt;
	in->p.n_graph = tr->n;
	in->p.core_hrt = tr->hrt;
	in->p.n_core = tr->n;
	in->p.feat = r->features != NULL ? &in->gf : NULL;
	return 0;
}

/* Rank 0 writes the model directory, with every rank's peak RSS (at the
 * end of training, before rank 0 reads the whole features of a run on
 * parts and embeds every node). */
static int
write_output(const struct kg_gnn_run *r, const struct kg_gnn_train_opts *o,
    struct inputs *in, const struct kg_gnn_trained *t, struct kg_dist *d)
{
	uint64_t *rss = kg_xcalloc((size_t)d->size, sizeof(*rss));
	int rc = 0;

	rss[d->rank] = kg_peak_rss_kib();
	kg_dist_sum_u64(d, rss, (size_t)d->size);
	if (d->rank == 0 && r->features != NULL && r->expanded != NULL)
		rc = kg_features_load(&in->gf, r->features, NULL,
		    in->ds.n_entities) < 0 ? -1 : 0;
	if (d->rank == 0 && rc == 0)
		rc = kg_gnn_model_write(r, o, &in->ds, r->features != NULL ?
		    &in->gf : NULL, t, d->size, rss);
	free(rss);
	return rc;
}

/*
 * The settings each checkpoint records, with the dataset's dictionaries;
 * before a resume, the checkpoint must come from this dataset, and
 * settings changed since it was saved are said (rank 0) and recorded
 * (lib/io/ckpt.h).
 */
static int
settings(struct kg_gnn_ckpt *ck, const struct kg_gnn_run *r,
    const struct kg_gnn_train_opts *o, const struct kg_dataset *ds,
    struct kg_dist *d)
{
	json_t *dicts = kg_dataset_dicts(&ds->manifest), *old;
	char *what, *line;
	int rc;

	ck->config = kg_gnn_settings_json(o, r, d->size);
	if (dicts != NULL)
		json_object_set_new(ck->config, "dictionaries", dicts);
	if (!r->resume || !kg_path_exists(ck->dir))
		return 0;
	old = kg_ckpt_config(ck->dir);
	what = kg_xasprintf("checkpoint '%s'", ck->dir);
	rc = kg_dataset_check_dicts(json_object_get(old, "dictionaries"), ds,
	    what);
	free(what);
	if (rc == 0) {
		kg_ckpt_carry_start(old, ck->config);
		kg_ckpt_changes(old, ck->config, &ck->changes, &line);
		if (line != NULL && !o->quiet && d->rank == 0)
			kg_warn("resuming from '%s' with changed settings: %s",
			    ck->dir, line);
		if (ck->changes != NULL)
			json_object_set(ck->config, "resumed_with_changes",
			    ck->changes);
		free(line);
	}
	json_decref(old);
	return rc;
}

/* o->init_from or o->init_entities loaded on every rank (each takes
 * its nodes' rows from it in kg_gnn_train), refused on every rank when
 * freeze_old would leave nothing to train, and its counts said on
 * stderr by rank 0.  0, -1 or KG_ERR_VERSION after kg_error(). */
static int
warm_load(struct kg_gnn_warm *w, const struct kg_gnn_train_opts *o,
    struct inputs *in, struct kg_dist *d)
{
	char line[1024];
	uint64_t bad;
	int rc;

	rc = o->init_from != NULL ? kg_gnn_warm_load(w, o->init_from, o,
	    in->p.feat, &in->ds) : kg_gnn_warm_given(w, o, in->p.feat,
	    &in->ds);
	/* Every rank reads the same files, but on hosts that share no
	 * directory one may fail alone: all go on or none. */
	bad = rc != 0;
	kg_dist_sum_u64(d, &bad, 1);
	if (bad > 0 && rc == 0) {
		kg_error("the warm start failed on another rank");
		rc = -1;
	}
	if (rc == 0 && o->epochs > 0 && !kg_gnn_warm_trains(w, o, &in->p, d))
		rc = -1;
	if (rc == 0 && !o->quiet && d->rank == 0)
		fprintf(stderr, "%s: %s\n", kg_progname(), kg_gnn_warm_format(w,
		    o->epochs > 0, line, sizeof(line)));
	return rc;
}

/* What the run writes against what it reads (kg_modeldir_check_paths),
 * an existing output without --force, and the parents of the model dir
 * and the checkpoint ckdir (NULL: none), before any work; 0 or -1. */
static int
check_paths(const struct kg_gnn_run *r, const char *ckdir,
    const char *const *in_paths)
{
	if (kg_modeldir_check_paths(r->output, ckdir, NULL, in_paths, 3) < 0)
		return -1;
	if (kg_path_exists(r->output) && !r->force) {
		kg_error("output '%s' exists; use --force to replace it",
		    r->output);
		return -1;
	}
	return kg_job_check_parents(r->output, ckdir);
}

int
kg_gnn_train_run(const struct kg_gnn_run *r,
    const struct kg_gnn_train_opts *o, struct kg_dist *d)
{
	struct kg_dist solo = KG_DIST_INIT;
	struct kg_gnn_trained t = KG_GNN_TRAINED_INIT;
	struct kg_gnn_train_opts oo = *o;
	struct kg_gnn_ckpt ck;
	struct kg_gnn_warm warm;
	struct inputs in;
	const char *in_paths[3] = { r->dataset, r->features, r->expanded };
	char *ckdir;
	int rc;

	memset(&in, 0, sizeof(in));
	memset(&warm, 0, sizeof(warm));
	if (d == NULL)
		d = &solo;
	/* Rank 0 writes the model, so it checks the paths (the other ranks'
	 * disks need not hold the output's parent) and every rank follows
	 * its answer. */
	ckdir = r->checkpoint_dir ? kg_xstrdup(r->checkpoint_dir) :
	    kg_xasprintf("%s.ckpt", r->output);
	rc = d->rank == 0 ?
	    check_paths(r, r->no_checkpoint ? NULL : ckdir, in_paths) : 0;
	kg_dist_bcast(d, &rc, sizeof(rc), 0);
	if (rc < 0) {
		free(ckdir);
		return -1;
	}
	ck.dir = ckdir;
	ck.inputs = in_paths;
	ck.n_inputs = 3;
	ck.config = NULL;
	ck.changes = NULL;
	ck.resume = r->resume;
	ck.save = !r->no_checkpoint;
	ck.argc = r->argc;
	ck.argv = r->argv;
	oo.ckpt = &ck;
	rc = inputs_load(&in, r, o, d);
	if (rc < 0)
		goto out;
	rc = -1;
	if (settings(&ck, r, o, &in.ds, d) < 0)
		goto out;
	oo.enc.n_relations = in.p.n_relations;
	oo.enc.n_learned = in.ds.n_entities;
	in.p.n_train_global = in.p.n_core;
	kg_dist_sum_u64(d, &in.p.n_train_global, 1);
	if (o->valid_every > 0 && r->expanded == NULL) {
		/* Validation on the whole graph (gnn_train.h). */
		in.p.valid_hrt = in.ds.split[KG_SPLIT_VALID].hrt;
		in.p.n_valid = in.ds.split[KG_SPLIT_VALID].n;
		kg_filter_build(&in.filter, in.ds.split, KG_NSPLITS);
		in.p.filter = &in.filter;
	}
	if ((o->init_from != NULL || o->init_entities != NULL) &&
	    (rc = warm_load(&warm, &oo, &in, d)) < 0)
		goto out;
	rc = -1;
	if (o->init_from != NULL || o->init_entities != NULL)
		oo.warm = &warm;
	if (o->epochs == 0 ? kg_gnn_warm_take(&warm, &t, &oo) < 0 :
	    kg_gnn_train(&t, &oo, &in.p, d) < 0)
		goto out;
	if (write_output(r, &oo, &in, &t, d) < 0)
		goto out;
	/* A checkpoint nobody named goes with the run that needed it. */
	if (d->rank == 0 && ck.save && !r->keep_checkpoint &&
	    r->checkpoint_dir == NULL && kg_path_exists(ckdir))
		kg_rmtree(ckdir);
	rc = 0;
out:
	free(ckdir);
	json_decref(ck.config);
	json_decref(ck.changes);
	kg_gnn_trained_release(&t);
	kg_gnn_warm_release(&warm);
	inputs_release(&in);
	return rc;
}
