/*
 * kg-eval: link prediction (full or sampled ranking) and triple
 * classification of a trained model on a dataset split.  The work is in
 * lib/eval/eval.c; this file parses options, checks that model and dataset
 * agree, and writes the JSON report and the table.
 */
#include <getopt.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "compute/compute.h"
#include "cli/tool.h"
#include "io/dataset.h"
#include "dist/dist.h"
#include "eval/eval.h"
#include "io/manifest.h"
#include "kge/model.h"
#include "io/modeldir.h"
#include "core/util.h"

struct opts {
	const char *dataset, *modeldir, *ent, *rel, *model, *output;
	double gamma;
	int reciprocal, raw, per_relation, auc, quiet, force;
	enum kg_split split;
	enum kg_ties ties;
	uint64_t auc_neg;
	struct kg_eval_opts ev;
};

static void
usage(FILE *f)
{
	fputs(
"usage: kg-eval [-q] [--split valid|test] [--raw]\n"
"               [--ties realistic|optimistic|pessimistic] [--per-relation]\n"
"               [--neg-sample n [--neg-mode uniform|degree]] [--auc]\n"
"               [--auc-neg k] [--seed n] [--threads n] [--batch n]\n"
"               [--progress] [-o file [--force]] dataset model\n"
"       kg-eval [options] --entities file --relations file --model name\n"
"               [--gamma g] [--reciprocal] dataset\n"
"\n"
"Rank the true head and tail of every triple of a split among all\n"
"entities and report MRR, MR and Hits@1/3/10 as JSON on stdout and as a\n"
"table on stderr.\n"
"      --split s         valid or test (default test)\n"
"      --raw             do not filter known triples\n"
"      --ties policy     realistic (default), optimistic or pessimistic\n"
"      --per-relation    also report every relation\n"
"      --neg-sample n    rank against n sampled negatives, not all entities\n"
"      --neg-mode mode   uniform (default) or degree\n"
"      --auc             ROC AUC of triple classification\n"
"      --auc-neg k       negatives per positive for --auc (default 1)\n"
"      --seed n          seed of sampled negatives (default 1)\n"
"      --threads n       OpenMP threads (default: one per core)\n"
"      --batch n         queries per block (default 1024)\n"
"  -o, --output file     write the report to file, not stdout\n"
"      --force           replace an existing file\n"
"      --entities file   entity embeddings (float32 .npy) ...\n"
"      --relations file  ... relation parameters ...\n"
"      --model name      ... and the model: TransE_l1, TransE_l2, DistMult,\n"
"                        ComplEx, RotatE, RESCAL or TransR\n"
"      --gamma g         margin of the distance models (default 12)\n"
"      --reciprocal      the relation array holds reciprocal relations\n"
"  -q, --quiet           no table, no progress\n"
"      --progress        progress on stderr\n"
"  -h, --help            this help\n"
"      --version         print the version\n", f);
}

enum {
	OPT_SPLIT = 256, OPT_RAW, OPT_TIES, OPT_PER_REL, OPT_NEG, OPT_NEG_MODE,
	OPT_AUC, OPT_AUC_NEG, OPT_SEED, OPT_THREADS, OPT_BATCH, OPT_PROGRESS,
	OPT_FORCE, OPT_ENT, OPT_REL, OPT_MODEL, OPT_GAMMA, OPT_RECIP,
	OPT_VERSION
};

static const struct option long_opts[] = {
	{ "split", required_argument, NULL, OPT_SPLIT },
	{ "raw", no_argument, NULL, OPT_RAW },
	{ "ties", required_argument, NULL, OPT_TIES },
	{ "per-relation", no_argument, NULL, OPT_PER_REL },
	{ "neg-sample", required_argument, NULL, OPT_NEG },
	{ "neg-mode", required_argument, NULL, OPT_NEG_MODE },
	{ "auc", no_argument, NULL, OPT_AUC },
	{ "auc-neg", required_argument, NULL, OPT_AUC_NEG },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "batch", required_argument, NULL, OPT_BATCH },
	{ "progress", no_argument, NULL, OPT_PROGRESS },
	{ "output", required_argument, NULL, 'o' },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "entities", required_argument, NULL, OPT_ENT },
	{ "relations", required_argument, NULL, OPT_REL },
	{ "model", required_argument, NULL, OPT_MODEL },
	{ "gamma", required_argument, NULL, OPT_GAMMA },
	{ "reciprocal", no_argument, NULL, OPT_RECIP },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 }
};

/* Index of s in names[n], or -1 after an error naming the option. */
static int
pick(const char *opt, const char *s, const char *const *names, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	kg_error("%s: unknown value '%s'", opt, s);
	return -1;
}

static void
show_progress(uint64_t done, uint64_t total, double secs, void *arg)
{
	double rate = secs > 0 ? (double)done / secs : 0;

	(void)arg;
	fprintf(stderr, "\rkg-eval: %llu/%llu queries, %.0f/s, eta %.0f s   %s",
	    (unsigned long long)done, (unsigned long long)total, rate,
	    rate > 0 ? (double)(total - done) / rate : 0.0,
	    done == total ? "\n" : "");
}

static int
parse_opts(int argc, char *argv[], struct opts *o)
{
	static const char *const splits[] = { "valid", "test" };
	static const char *const ties[] = { "realistic", "optimistic",
	    "pessimistic" };
	static const char *const modes[] = { "uniform", "degree" };
	uint32_t u;
	int ch, i;

	while ((ch = getopt_long(argc, argv, "ho:q", long_opts, NULL)) != -1) {
		switch (ch) {
		case 'h': usage(stdout); exit(KG_EXIT_OK);
		case OPT_VERSION:
			printf("kg-eval %s\n", KG_VERSION);
			exit(KG_EXIT_OK);
		case OPT_SPLIT:
			if ((i = pick("--split", optarg, splits, 2)) < 0)
				return -1;
			o->split = i ? KG_SPLIT_TEST : KG_SPLIT_VALID;
			break;
		case OPT_RAW: o->raw = 1; break;
		case OPT_TIES:
			if ((i = pick("--ties", optarg, ties, 3)) < 0)
				return -1;
			o->ties = (enum kg_ties)i;
			break;
		case OPT_PER_REL: o->per_relation = 1; break;
		case OPT_NEG:
			if (kg_parse_u64("--neg-sample", optarg, 1, 1u << 24,
			    &o->ev.neg_sample) < 0)
				return -1;
			break;
		case OPT_NEG_MODE:
			if ((i = pick("--neg-mode", optarg, modes, 2)) < 0)
				return -1;
			o->ev.neg_mode = (enum kg_neg_mode)i;
			break;
		case OPT_AUC: o->auc = 1; break;
		case OPT_AUC_NEG:
			if (kg_parse_u64("--auc-neg", optarg, 1, 1000,
			    &o->auc_neg) < 0)
				return -1;
			break;
		case OPT_SEED:
			if (kg_parse_u64("--seed", optarg, 0, UINT64_MAX,
			    &o->ev.seed) < 0)
				return -1;
			break;
		case OPT_THREADS:
			if (kg_parse_u32("--threads", optarg, 1, 1024, &u) < 0)
				return -1;
			o->ev.threads = (int)u;
			break;
		case OPT_BATCH:
			if (kg_parse_u32("--batch", optarg, 1, 1u << 20, &u) < 0)
				return -1;
			o->ev.batch = u;
			break;
		case OPT_PROGRESS: o->ev.progress = show_progress; break;
		case 'o': o->output = optarg; break;
		case OPT_FORCE: o->force = 1; break;
		case OPT_ENT: o->ent = optarg; break;
		case OPT_REL: o->rel = optarg; break;
		case OPT_MODEL: o->model = optarg; break;
		case OPT_GAMMA:
			if (kg_parse_double("--gamma", optarg, -1e30, 1e30,
			    &o->gamma) < 0)
				return -1;
			break;
		case OPT_RECIP: o->reciprocal = 1; break;
		case 'q': o->quiet = 1; break;
		default: return -1;
		}
	}
	if (o->quiet)
		o->ev.progress = NULL;
	argc -= optind;
	argv += optind;
	if (o->ent || o->rel || o->model) {
		if (!o->ent || !o->rel || !o->model || argc != 1) {
			kg_error("--entities, --relations and --model go "
			    "together, with DATASET_DIR alone");
			return -1;
		}
	} else if (argc != 2) {
		kg_error("expected DATASET_DIR MODEL_DIR");
		return -1;
	} else {
		o->modeldir = argv[1];
	}
	if (o->force && o->output == NULL) {
		kg_error("--force applies to -o FILE");
		return -1;
	}

	o->dataset = argv[0];
	return 0;
}

static int
load_model(const struct opts *o, const struct kg_dataset *ds,
    struct kg_modeldir *md)
{
	int rc = o->modeldir ? kg_modeldir_load(md, o->modeldir) :
	    kg_modeldir_from_arrays(md, o->ent, o->rel, o->model,
	    (float)o->gamma, o->reciprocal);

	if (rc < 0)
		return rc;
	if (md->n_entities != ds->n_entities ||
	    md->n_relations != ds->n_relations) {
		kg_error("model has %llu entities and %llu relations, dataset "
		    "'%s' has %llu and %llu", (unsigned long long)
		    md->n_entities, (unsigned long long)md->n_relations,
		    ds->dir, (unsigned long long)ds->n_entities,
		    (unsigned long long)ds->n_relations);
		kg_modeldir_release(md);
		return -1;
	}
	return 0;
}

static int
run(const struct opts *o, struct kg_dataset *ds, struct kg_modeldir *md,
    struct kg_dist *dist)
{
	const struct kg_triples *test = &ds->split[o->split];
	struct kg_filter filter = KG_FILTER_INIT;
	struct kg_eval_opts ev = o->ev;
	struct kg_eval_ranks rk;
	struct kg_metrics m[3];
	uint64_t *degree = NULL, i, nn = 0;
	json_t *rep = json_object();
	char **names = NULL;
	double t0 = kg_now(), auc = 0;
	int rc = -1;

	if (test->n == 0) {
		kg_error("split '%s' of '%s' is empty", kg_split_name(o->split),
		    ds->dir);
		goto out;
	}
	if (!o->raw) {
		kg_filter_build(&filter, ds->split, KG_NSPLITS);
		ev.filter = &filter;
	}
	if (ev.neg_sample > 0 && ev.neg_mode == KG_NEG_DEGREE) {
		const struct kg_triples *tr = &ds->split[KG_SPLIT_TRAIN];

		degree = kg_xcalloc(ds->n_entities, sizeof(*degree));
		for (i = 0; i < tr->n; i++) {
			degree[tr->hrt[3 * i]]++;
			degree[tr->hrt[3 * i + 2]]++;
		}
		ev.degree = degree;
	}
	/* Under mpirun every rank ranks its share of the blocks; the sums
	 * are the ranks one process would find. */
	ev.shard = dist->rank;
	ev.nshards = dist->size;
	if (dist->rank != 0)
		ev.progress = NULL;
	if (kg_eval_rank(md, test, &ev, &rk) < 0)
		goto out;
	for (i = 0; i < 2; i++) {
		kg_dist_sum_u64(dist, rk.opt[i], rk.n);
		kg_dist_sum_u64(dist, rk.pess[i], rk.n);
	}
	json_object_set_new(rep, "seconds_rank", json_real(kg_now() - t0));
	if (o->per_relation && (kg_dataset_names(ds, "relations.tsv", &names,
	    &nn) < 0 || nn != ds->n_relations)) {
		kg_names_free(names, nn);
		names = NULL;
	}
	kg_eval_report_metrics(rep, &rk, test, o->ties,
	    o->per_relation ? ds->n_relations : 0, names, m);
	kg_eval_ranks_release(&rk);
	if (o->auc) {
		t0 = kg_now();
		if (kg_eval_auc(md, test, o->raw ? NULL : &filter, o->auc_neg,
		    ev.seed, &auc) < 0)
			goto out;
		json_object_set_new(rep, "auc", json_real(auc));
		json_object_set_new(rep, "auc_negatives_per_positive",
		    json_integer((json_int_t)o->auc_neg));
		json_object_set_new(rep, "seconds_auc", json_real(kg_now() - t0));
	}
	json_object_update_new(rep, json_pack("{s:s, s:s, s:s, s:o, s:s, s:i, "
	    "s:b, s:s, s:I, s:I, s:s, s:s, s:s, s:i}", "tool", "kg-eval",
	    "version", KG_VERSION, "dataset", ds->dir,
	    "model_dir", o->modeldir ? json_string(o->modeldir) : json_null(),
	    "model", kg_model_name(md->model.kind), "dim", (int)md->model.dim,
	    "reciprocal", md->reciprocal, "split", kg_split_name(o->split),
	    "n_triples", (json_int_t)test->n,
	    "n_entities", (json_int_t)ds->n_entities,
	    "protocol", ev.neg_sample ? "sampled" : "full",
	    "setting", o->raw ? "raw" : "filtered",
	    "ties", kg_ties_name(o->ties),
	    "threads", ev.threads > 0 ? ev.threads : omp_get_max_threads()));
	json_object_set_new(rep, "ranks", json_integer(dist->size));
	json_object_set_new(rep, "gamma", json_real(md->model.gamma));
	if (!o->modeldir)
		json_object_update_new(rep, json_pack("{s:s, s:s}", "entities",
		    o->ent, "relations", o->rel));
	if (ev.neg_sample)
		json_object_update_new(rep, json_pack("{s:I, s:s, s:I}",
		    "negatives", (json_int_t)ev.neg_sample, "neg_mode",
		    ev.neg_mode == KG_NEG_DEGREE ? "degree" : "uniform",
		    "seed", (json_int_t)ev.seed));
	if (dist->rank != 0) {
		rc = 0;
		goto out;
	}
	if (kg_eval_write_report(rep, o->output, o->force) < 0)
		goto out;
	if (!o->quiet) {
		fprintf(stderr, "kg-eval: %s, %s split, %llu triples, %s, %s "
		    "ties, %s\n", kg_model_name(md->model.kind),
		    kg_split_name(o->split), (unsigned long long)test->n,
		    o->raw ? "raw" : "filtered", kg_ties_name(o->ties),
		    ev.neg_sample ? "SAMPLED negatives" : "all entities");
		kg_metrics_print(stderr, m);
		if (o->auc)
			fprintf(stderr, "  AUC %.4f\n", auc);
	}
	rc = 0;
out:
	json_decref(rep);
	if (names != NULL)
		kg_names_free(names, nn);
	kg_filter_release(&filter);
	free(degree);
	return rc;
}

int
main(int argc, char *argv[])
{
	struct opts o;
	struct kg_dataset ds = KG_DATASET_INIT;
	struct kg_modeldir md = KG_MODELDIR_INIT;
	struct kg_eval_opts ev = KG_EVAL_OPTS_INIT;
	struct kg_dist dist = KG_DIST_INIT;
	int rc;

	kg_setprogname(argv[0]);
	kg_tool_tune_blas(argv);
	memset(&o, 0, sizeof(o));
	o.split = KG_SPLIT_TEST;
	o.gamma = 12.0;
	o.auc_neg = 1;
	o.ev = ev;
	if (isatty(STDERR_FILENO))
		o.ev.progress = show_progress;
	if (parse_opts(argc, argv, &o) < 0) {
		usage(stderr);
		return KG_EXIT_USAGE;
	}
	/* Refuse an existing output before the work, not after it. */
	if (o.output && !o.force && strcmp(o.output, "-") != 0 &&
	    kg_path_exists(o.output)) {
		kg_error("output '%s' exists; use --force", o.output);
		return KG_EXIT_FAIL;
	}
	if (kg_dist_init(&dist, &argc, &argv) < 0)
		return KG_EXIT_FAIL;
	/* Threads come from OpenMP; BLAS must not start its own inside. */
	kg_compute_init();
	rc = kg_dataset_load(&ds, o.dataset);
	if (rc == 0)
		rc = load_model(&o, &ds, &md);
	/* Loading read every row (the finiteness check), but a rank needs
	 * only its range of candidates and the query rows: give the pages
	 * back and let them fault in again as they are used. */
	if (rc == 0 && dist.size > 1 && md.ent.map != NULL)
		madvise(md.ent.map, md.ent.maplen, MADV_DONTNEED);
	if (rc == KG_ERR_VERSION)
		rc = KG_EXIT_VERSION;
	else if (rc == 0)
		rc = run(&o, &ds, &md, &dist) < 0 ? KG_EXIT_FAIL : KG_EXIT_OK;
	else
		rc = KG_EXIT_FAIL;
	kg_modeldir_release(&md);
	kg_dataset_release(&ds);
	if (rc != KG_EXIT_OK)
		kg_dist_abort(&dist, rc);
	kg_dist_finalize(&dist);
	if (kg_close_stdout() < 0)
		rc = KG_EXIT_FAIL;
	return rc;
}
