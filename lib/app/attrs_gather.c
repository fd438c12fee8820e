/*
 * attrs_gather: kg-encode-attrs transform --merge (declared in
 * attrs_run.h).  Every shard is encoded by the ordinary transform into a
 * private directory of the rank that owns it (shard k on rank k mod
 * size), the shards travel to rank 0 over MPI (lib/dist/ship.h) and rank
 * 0 merges them as merge does, so the features are the bytes that one
 * process writes.  With ship set, rank 0's dataset, model and tables go to
 * the other ranks' own disks first, so the hosts need share no directory.
 *
 * Every rank takes the same steps and the ranks agree after each one
 * (agree()): a rank that fails holds its message, the job stops after
 * that step on every rank, and rank 0 prints the message of the first
 * rank that failed, once.  Only rank 0 writes the output, through a
 * stage begun before any work, so a failed run leaves no features.
 */
#include "app/attrs_run.h"
#include "app/attrs_run_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/util.h"
#include "dist/dist.h"
#include "dist/ship.h"
#include "io/manifest.h"
#include "io/outdir.h"

struct job {
	struct kg_dist d;
	const struct kg_attrs_opts *o;
	uint32_t n_shards;
	char *local;		/* this rank's shards */
	char *shipped;		/* the inputs rank 0 sent (other ranks) */
	char *in[2];		/* the dataset and model this rank reads */
	char **tables;		/* the tables it reads when shipped */
	size_t n_tables;
	struct kg_attrs_model model;	/* rank 0 */
	char msum[32];
	struct kg_stage st;	/* rank 0: the features */
};

/*
 * After a step that returned rc on this rank: 0 when it succeeded on
 * every rank, else (on every rank) -1, or KG_ERR_VERSION when a rank read
 * an input of an unknown format version.  The first failed rank's held
 * message is printed by rank 0, naming that rank and its host unless it
 * is rank 0 itself.  Collective.
 */
static int
agree(struct job *j, int rc)
{
	uint64_t bad = rc == 0 ? 0 : rc == KG_ERR_VERSION ? 2 : 1;
	char host[256], *line, *all = NULL, *nl;

	kg_dist_max_u64(&j->d, &bad, 1);
	if (bad == 0)
		return 0;
	if (j->d.size > 1) {
		if (gethostname(host, sizeof(host)) != 0)
			snprintf(host, sizeof(host), "unknown");
		host[sizeof(host) - 1] = '\0';
		if (rc == 0)
			line = kg_xstrdup("");
		else if (j->d.rank == 0)
			line = kg_xasprintf("%s\n", kg_error_last());
		else
			line = kg_xasprintf("rank %d (host %s): %s\n",
			    j->d.rank, host, kg_error_last());
		kg_dist_gather_text(&j->d, line, 0, &all);
		free(line);
		if (j->d.rank == 0 && all != NULL && (nl = strchr(all, '\n'))) {
			kg_error_hold(0);
			kg_error("%.*s", (int)(nl - all), all);
			kg_error_hold(1);
		}
		free(all);
	}
	return bad == 2 ? KG_ERR_VERSION : -1;
}

/*
 * Rank 0: the model, its tables (checked) and the output begun, so that
 * a run that cannot write its features stops before any work.
 */
static int
begin(struct job *j)
{
	char **paths;
	int rc;

	if (j->d.rank != 0)
		return 0;
	rc = kg_attrs_run_load_model(j->o->model, &j->model, j->msum);
	if (rc < 0)
		return rc;
	paths = kg_attrs_run_tables(&j->model, j->o);
	if (paths == NULL)
		return -1;
	rc = kg_attrs_run_begin(&j->st, j->o, paths,
	    j->model.schema.n_tables);
	if (rc == 0 && j->o->ship) {
		j->tables = paths;
		j->n_tables = j->model.schema.n_tables;
		return 0;
	}
	kg_attrs_run_free_paths(paths, j->model.schema.n_tables);
	return rc;
}

/*
 * Rank 0's list of table paths (absolute, without the leading slash) to
 * every rank, one a line.  A new string on every rank.
 */
static char *
share_table_names(struct job *j)
{
	struct kg_strbuf b = { 0 };
	uint64_t len = 0;
	size_t i;

	for (i = 0; j->d.rank == 0 && i < j->n_tables; i++) {
		char *abs = realpath(j->tables[i], NULL);

		kg_strbuf_add(&b, (abs ? abs : j->tables[i]) + 1);
		kg_strbuf_add(&b, "\n");
		free(abs);
	}
	if (j->d.rank == 0)
		len = b.len;
	kg_dist_bcast(&j->d, &len, sizeof(len), 0);
	if (j->d.rank != 0)
		b.s = kg_xcalloc(len + 1, 1);
	kg_dist_bcast(&j->d, b.s, len, 0);
	if (b.s == NULL)
		b.s = kg_xstrdup("");
	return b.s;
}

/*
 * --ship-inputs: the dataset and model directories, then the tables,
 * from rank 0 to every other rank's own disk; the other ranks read them
 * there (j->in, j->tables).  A table keeps its absolute path below the
 * rank's directory "tables".  0 or -1 on this rank.
 */
static int
ship(struct job *j)
{
	const char *dirs[2] = { j->o->dataset, j->o->model };
	char *list, *p, *q, *dst = NULL;
	const char **names = NULL;
	size_t n = 0, i;
	int r, rc;

	if (kg_dist_ship_trees(&j->d, dirs, 2, NULL, &j->shipped, j->in) < 0)
		return -1;
	list = share_table_names(j);
	for (p = list; *p != '\0'; p = q + 1) {
		q = strchr(p, '\n');
		*q = '\0';
		names = kg_xreallocarray(names, n + 1, sizeof(*names));
		names[n++] = p;
	}
	if (j->d.rank != 0) {
		dst = kg_path_join(j->shipped, "tables");
		j->tables = kg_xcalloc(n, sizeof(char *));
		j->n_tables = n;
		for (i = 0; i < n; i++)
			j->tables[i] = kg_path_join(dst, names[i]);
	}
	rc = 0;
	for (r = 1; r < j->d.size; r++)
		if (kg_dist_ship_files(&j->d, 0, r, "/", dst, names, n, 0) < 0)
			rc = -1;
	free(dst);
	free(names);
	free(list);
	return rc;
}

/* This rank's shards (k = rank, rank + size, ...) into j->local. */
static int
encode(struct job *j)
{
	struct kg_attrs_opts so = *j->o;
	uint32_t k;
	int rc = 0;

	j->local = kg_dist_local_tmpdir();
	if (j->local == NULL)
		return -1;
	so.dataset = j->in[0] ? j->in[0] : j->o->dataset;
	so.model = j->in[1] ? j->in[1] : j->o->model;
	so.table_paths = j->o->ship ? j->tables : NULL;
	so.n_shards = j->n_shards;
	so.merge = 0;
	so.force = 0;
	so.quiet = 1;
	so.progress = 0;
	for (k = (uint32_t)j->d.rank; rc == 0 && k < j->n_shards;
	    k += (uint32_t)j->d.size) {
		char *out = kg_xasprintf("%s/shard-%u", j->local, k);

		so.shard = k;
		so.output = out;
		rc = kg_attrs_run_transform(&so);
		free(out);
	}
	return rc;
}

/* The other ranks' shards to rank 0's j->local, one after another. */
static int
gather(struct job *j)
{
	uint32_t k;
	int rc = 0;

	for (k = 0; k < j->n_shards; k++) {
		int owner = (int)(k % (uint32_t)j->d.size);
		char *dir = kg_xasprintf("%s/shard-%u", j->local, k);

		if (kg_dist_ship_tree(&j->d, owner, 0, dir, dir) < 0)
			rc = -1;
		free(dir);
	}
	return rc;
}

/* Rank 0: the shards in j->local merged into the begun output. */
static int
merge(struct job *j, double t0)
{
	char **in;
	const char **dirs;
	uint64_t ne = 0;
	uint32_t k;
	int rc;

	if (j->d.rank != 0)
		return 0;
	in = kg_xcalloc(j->n_shards, sizeof(char *));
	dirs = kg_xcalloc(j->n_shards, sizeof(char *));
	for (k = 0; k < j->n_shards; k++)
		in[k] = kg_xasprintf("%s/shard-%u", j->local, k);
	rc = kg_attrs_run_order_shards(&j->model, j->msum,
	    (const char *const *)in, j->n_shards, dirs, &ne);
	if (rc == 0)
		rc = kg_attrs_run_merge_into(&j->st, &j->model, j->msum,
		    dirs, j->n_shards, ne, t0);
	if (rc == 0) {
		kg_manifest_set_config(&j->st.manifest, "ranks",
		    json_integer(j->d.size));
		kg_manifest_set_config(&j->st.manifest, "shipped_inputs",
		    json_boolean(j->o->ship));
		rc = kg_stage_commit(&j->st);
	}
	kg_attrs_run_free_paths(in, j->n_shards);
	free(dirs);
	return rc;
}

static void
job_release(struct job *j)
{
	kg_stage_release(&j->st);
	kg_attrs_model_release(&j->model);
	kg_attrs_run_free_paths(j->tables, j->n_tables);
	if (j->local != NULL)
		kg_rmtree(j->local);
	if (j->shipped != NULL)
		kg_rmtree(j->shipped);
	free(j->local);
	free(j->shipped);
	free(j->in[0]);
	free(j->in[1]);
}

int
kg_attrs_run_transform_merge(const struct kg_attrs_opts *o)
{
	struct job j = { .d = KG_DIST_INIT, .o = o,
	    .model = KG_ATTRS_MODEL_INIT, .st = KG_STAGE_INIT };
	int argc = o->argc, rc;
	char **argv = (char **)o->argv;
	double t0 = kg_now(), t1 = t0;

	if (kg_dist_init(&j.d, &argc, &argv) < 0)
		return -1;
	j.n_shards = o->n_shards ? o->n_shards : (uint32_t)j.d.size;
	if (j.d.size > 1)
		kg_error_hold(1);
	rc = agree(&j, begin(&j));
	if (rc == 0 && o->ship && j.d.size > 1)
		rc = agree(&j, ship(&j));
	if (rc == 0)
		rc = agree(&j, encode(&j));
	if (rc == 0) {
		if (j.d.rank == 0)
			kg_attrs_run_progress(o, "encoded",
			    j.model.n_entities, &t1);
		rc = agree(&j, gather(&j));
	}
	if (rc == 0)
		rc = agree(&j, merge(&j, t0));
	if (rc == 0 && j.d.rank == 0)
		kg_attrs_run_progress(o, "merged the shards of",
		    j.model.n_entities, &t1);
	kg_error_hold(0);
	job_release(&j);
	kg_dist_finalize(&j.d);
	return rc;
}
