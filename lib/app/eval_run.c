#include "app/eval_run.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "compute/compute.h"
#include "core/util.h"
#include "dist/dist.h"
#include "eval/eval_device.h"
#include "io/stage.h"
#include "predict/modelsrc.h"
#include "report/label.h"
#include "store/store.h"

/* What one evaluation holds between its steps. */
struct eval_state {
	const struct kg_eval_run_opts *o;
	struct kg_dataset ds;
	struct kg_modeldir md;
	struct kg_filter filter;
	struct kg_eval_opts ev;
	uint64_t *degree;
	struct kg_metrics m[3];
	struct kg_metrics *per_rel;	/* --per-relation: 3 per relation */
	char **rel_names;	/* relations.tsv, or NULL */
	uint64_t n_rel_names;
	double auc;
	json_t *rep;
	struct kg_store *own;	/* --stream's store over entities.npy */
};

/* The paths kg-eval reads, for checking the report path against. */
static size_t
input_paths(const struct kg_eval_run_opts *o, const char *paths[5])
{
	paths[0] = o->dataset;
	if (o->modeldir != NULL) {
		paths[1] = o->modeldir;
		return 2;
	}
	paths[1] = o->entities;
	paths[2] = o->relations;
	paths[3] = o->entity_map;
	paths[4] = o->relation_map;
	return 5;
}

/* Refuse a report path before the work, not after it. */
static int
check_output(const struct kg_eval_run_opts *o)
{
	const char *paths[5];
	size_t n = input_paths(o, paths);

	if (o->output == NULL || strcmp(o->output, "-") == 0)
		return 0;
	if (kg_stage_check_inputs(o->output, paths, n) < 0)
		return -1;
	if (!o->force && kg_path_exists(o->output)) {
		kg_error("output '%s' exists; use --force to replace it",
		    o->output);
		return -1;
	}
	return 0;
}

static int
load_model(struct eval_state *s)
{
	const struct kg_eval_run_opts *o = s->o;
	const struct kg_dataset *ds = &s->ds;
	struct kg_modeldir *md = &s->md;
	struct kg_modelsrc src = KG_MODELSRC_INIT;
	int rc;

	src.modeldir = o->modeldir;
	src.entities = o->entities;
	src.relations = o->relations;
	src.model = o->model;
	src.gamma = o->gamma;
	src.reciprocal = o->reciprocal;
	src.entity_map = o->entity_map;
	src.relation_map = o->relation_map;
	src.quiet = o->quiet;
	rc = kg_modelsrc_load(md, &src, ds);

	if (rc < 0)
		return rc;
	return o->stream ? kg_modelsrc_stream(md, &src, &s->own) : 0;
}

/* The filter and, for degree-proportional negatives, the degrees. */
static void
prepare(struct eval_state *s)
{
	const struct kg_triples *tr = &s->ds.split[KG_SPLIT_TRAIN];
	uint64_t i;

	if (!s->o->raw) {
		kg_filter_build(&s->filter, s->ds.split, KG_NSPLITS);
		s->ev.filter = &s->filter;
	}
	if (s->ev.neg_sample > 0 && s->ev.neg_mode == KG_NEG_DEGREE) {
		s->degree = kg_xcalloc(s->ds.n_entities, sizeof(*s->degree));
		for (i = 0; i < tr->n; i++) {
			s->degree[tr->hrt[3 * i]]++;
			s->degree[tr->hrt[3 * i + 2]]++;
		}
		s->ev.degree = s->degree;
	}
}

/* Rank on the device o->device (or the CPU backend, o->seam) through
 * lib/eval/eval_device.h; the report names the backend. */
static int
rank_device(struct eval_state *s, const struct kg_triples *test,
    struct kg_eval_ranks *rk)
{
	struct kg_backend *be = kg_backend_open(&s->o->device);
	int rc;

	if (be == NULL)
		return -1;
	if (!s->o->quiet)
		fprintf(stderr, "%s: ranking on %s\n", kg_progname(),
		    kg_backend_name(be));
	json_object_set_new(s->rep, "backend",
	    json_string(kg_backend_name(be)));
	rc = kg_eval_rank_device(be, &s->md, test, &s->ev, rk);
	kg_backend_free(be);
	return rc;
}

/*
 * Rank the split and put the metrics into the report.  Under mpirun
 * every rank ranks its share of the blocks; the sums are the ranks one
 * process would find.
 */
static int
rank(struct eval_state *s, struct kg_dist *dist)
{
	const struct kg_eval_run_opts *o = s->o;
	const struct kg_triples *test = &s->ds.split[o->split];
	struct kg_eval_ranks rk;
	double t0 = kg_now();
	int i;

	s->ev.shard = dist->rank;
	s->ev.nshards = dist->size;
	if (dist->rank != 0)
		s->ev.progress = NULL;
	if ((o->device.kind == KG_DEVICE_CPU && !o->seam ?
	    kg_eval_rank(&s->md, test, &s->ev, &rk) :
	    rank_device(s, test, &rk)) < 0)
		return -1;
	for (i = 0; i < 2; i++) {
		kg_dist_sum_u64(dist, rk.opt[i], rk.n);
		kg_dist_sum_u64(dist, rk.pess[i], rk.n);
	}
	json_object_set_new(s->rep, "seconds_rank", json_real(kg_now() - t0));
	if (o->per_relation && (kg_dataset_names(&s->ds, "relations.tsv",
	    &s->rel_names, &s->n_rel_names) < 0 ||
	    s->n_rel_names != s->ds.n_relations)) {
		kg_names_free(s->rel_names, s->n_rel_names);
		s->rel_names = NULL;
	}
	kg_eval_report_metrics(s->rep, &rk, test, o->ties,
	    o->per_relation ? s->ds.n_relations : 0, s->rel_names, s->m);
	/* The same sums again for the table on stderr. */
	if (o->per_relation && dist->rank == 0) {
		s->per_rel = kg_xcalloc(3 * s->ds.n_relations + 1,
		    sizeof(*s->per_rel));
		kg_eval_metrics_per_relation(&rk, test, s->ds.n_relations,
		    o->ties, s->per_rel);
	}
	kg_eval_ranks_release(&rk);
	return 0;
}

static int
auc(struct eval_state *s)
{
	const struct kg_eval_run_opts *o = s->o;
	double t0 = kg_now();

	if (kg_eval_auc(&s->md, &s->ds.split[o->split], o->raw ? NULL :
	    &s->filter, o->auc_neg, s->ev.seed, &s->auc) < 0)
		return -1;
	json_object_set_new(s->rep, "auc", json_real(s->auc));
	json_object_set_new(s->rep, "auc_negatives_per_positive",
	    json_integer((json_int_t)o->auc_neg));
	json_object_set_new(s->rep, "seconds_auc", json_real(kg_now() - t0));
	return 0;
}

/* What was evaluated and how. */
static void
describe(struct eval_state *s, const struct kg_dist *dist)
{
	const struct kg_eval_run_opts *o = s->o;
	const struct kg_modeldir *md = &s->md;
	const struct kg_eval_opts *ev = &s->ev;
	json_t *enc = md->manifest.root != NULL ?
	    kg_manifest_get(&md->manifest, "config.encoder") : NULL;
	char label[96];

	/* "model" is the label that kg-eval's table and kg-plot show; the
	 * decoder and a GNN's encoder come apart too. */
	kg_modelsrc_title(md, label, sizeof(label));
	json_object_set_new(s->rep, "decoder",
	    json_string(kg_model_name(md->model.kind)));
	if (json_is_string(enc))
		json_object_set_new(s->rep, "encoder", json_string(
		    kg_label_encoder(json_string_value(enc))));
	json_object_update_new(s->rep, json_pack("{s:s, s:s, s:s, s:o, s:s, "
	    "s:i, s:b, s:s, s:I, s:I, s:s, s:s, s:s, s:i}", "tool", "kg-eval",
	    "version", KG_VERSION, "dataset", s->ds.dir,
	    "model_dir", o->modeldir ? json_string(o->modeldir) : json_null(),
	    "model", label, "dim", (int)md->model.dim,
	    "reciprocal", md->reciprocal, "split", kg_split_name(o->split),
	    "n_triples", (json_int_t)s->ds.split[o->split].n,
	    "n_entities", (json_int_t)s->ds.n_entities,
	    "protocol", ev->neg_sample ? "sampled" : "full",
	    "setting", o->raw ? "raw" : "filtered",
	    "ties", kg_ties_name(o->ties),
	    "threads", ev->threads > 0 ? ev->threads : omp_get_max_threads()));
	json_object_set_new(s->rep, "ranks", json_integer(dist->size));
	json_object_set_new(s->rep, "gamma", json_real(md->model.gamma));
	if (!o->modeldir)
		json_object_update_new(s->rep, json_pack("{s:s, s:s}",
		    "entities", o->entities, "relations", o->relations));
	if (o->entity_map != NULL)
		json_object_set_new(s->rep, "entity_map",
		    json_string(o->entity_map));
	if (o->relation_map != NULL)
		json_object_set_new(s->rep, "relation_map",
		    json_string(o->relation_map));
	if (ev->neg_sample)
		json_object_update_new(s->rep, json_pack("{s:I, s:s, s:I}",
		    "negatives", (json_int_t)ev->neg_sample, "neg_mode",
		    ev->neg_mode == KG_NEG_DEGREE ? "degree" : "uniform",
		    "seed", (json_int_t)ev->seed));
}

/* The report as indented JSON with sorted keys, to stdout or a file. */
static int
write_report(const struct eval_state *s)
{
	const size_t flags = JSON_INDENT(2) | JSON_SORT_KEYS;
	const struct kg_eval_run_opts *o = s->o;
	const char *paths[5];
	char *text;
	size_t n;
	int rc;

	if (o->output == NULL || strcmp(o->output, "-") == 0) {
		if (json_dumpf(s->rep, stdout, flags) < 0 ||
		    putchar('\n') == EOF) {
			kg_error_errno("cannot write to stdout");
			return -1;
		}
		return 0;
	}
	text = json_dumps(s->rep, flags);
	if (text == NULL) {
		kg_error("cannot encode the report");
		return -1;
	}
	n = strlen(text);
	text = kg_xrealloc(text, n + 2);
	memcpy(text + n, "\n", 2);
	rc = kg_stage_write_file(o->output, o->force, paths,
	    input_paths(o, paths), text, n + 1);
	free(text);
	return rc;
}

static void
print_table(const struct eval_state *s)
{
	const struct kg_eval_run_opts *o = s->o;
	char title[96];

	fprintf(stderr, "kg-eval: %s, %s split, %llu triples, %s, %s ties, "
	    "%s\n", kg_modelsrc_title(&s->md, title, sizeof(title)),
	    kg_split_name(o->split),
	    (unsigned long long)s->ds.split[o->split].n,
	    o->raw ? "raw" : "filtered", kg_ties_name(o->ties),
	    s->ev.neg_sample ? "SAMPLED negatives" : "all entities");
	kg_metrics_print(stderr, s->m);
	if (o->auc)
		fprintf(stderr, "  AUC %.4f\n", s->auc);
	if (s->per_rel != NULL)
		kg_metrics_print_per_relation(stderr, s->per_rel,
		    s->ds.n_relations, s->rel_names);
}

/* Everything after loading: rank, AUC, report and table. */
static int
evaluate(struct eval_state *s, struct kg_dist *dist)
{
	const struct kg_eval_run_opts *o = s->o;

	if (s->ds.split[o->split].n == 0) {
		kg_error("split '%s' of '%s' is empty", kg_split_name(o->split),
		    s->ds.dir);
		return -1;
	}
	prepare(s);
	if (rank(s, dist) < 0 || (o->auc && auc(s) < 0))
		return -1;
	describe(s, dist);
	if (dist->rank != 0)
		return 0;
	if (write_report(s) < 0)
		return -1;
	if (!o->quiet)
		print_table(s);
	return 0;
}

int
kg_eval_run(const struct kg_eval_run_opts *o, int *argc, char ***argv)
{
	struct eval_state s;
	struct kg_dataset dz = KG_DATASET_INIT;
	struct kg_modeldir mz = KG_MODELDIR_INIT;
	struct kg_filter fz = KG_FILTER_INIT;
	struct kg_dist dist = KG_DIST_INIT;
	int rc;

	if (check_output(o) < 0 || kg_dist_init(&dist, argc, argv) < 0)
		return -1;
	/* Threads come from OpenMP; BLAS must not start its own inside. */
	kg_compute_init();
	memset(&s, 0, sizeof(s));
	s.o = o;
	s.ds = dz;
	s.md = mz;
	s.filter = fz;
	s.ev = o->ev;
	s.rep = json_object();
	rc = kg_dataset_load(&s.ds, o->dataset);
	if (rc == 0)
		rc = load_model(&s);
	/* Loading read every row (the finiteness check), but a rank needs
	 * only its range of candidates and the query rows: give the pages
	 * back and let them fault in again as they are used. */
	if (rc == 0 && dist.size > 1 && s.md.ent.map != NULL)
		madvise(s.md.ent.map, s.md.ent.maplen, MADV_DONTNEED);
	if (rc == 0)
		rc = evaluate(&s, &dist);
	json_decref(s.rep);
	free(s.per_rel);
	if (s.rel_names != NULL)
		kg_names_free(s.rel_names, s.n_rel_names);
	free(s.degree);
	kg_filter_release(&s.filter);
	kg_store_free(s.own);
	kg_modeldir_release(&s.md);
	kg_dataset_release(&s.ds);
	if (rc < 0)
		kg_dist_abort(&dist, rc == KG_ERR_VERSION ? KG_EXIT_VERSION :
		    KG_EXIT_FAIL);
	kg_dist_finalize(&dist);
	return rc;
}
