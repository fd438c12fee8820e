/*
 * ingest_run: the option checks and the whole kg-ingest run (see
 * ingest_run.h).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/ingest_run.h"
#include "core/progress.h"
#include "ingest/extend.h"
#include "ingest/ingest_impl.h"
#include "core/util.h"

/* ---- options ---- */

int
kg_ingest_parse_unseen(const char *s, enum kg_unseen *out)
{
	if (strcmp(s, "keep") == 0)
		*out = KG_UNSEEN_KEEP;
	else if (strcmp(s, "drop") == 0)
		*out = KG_UNSEEN_DROP;
	else if (strcmp(s, "error") == 0)
		*out = KG_UNSEEN_ERROR;
	else {
		kg_error("--unseen: '%s' is not keep, drop or error", s);
		return -1;
	}
	return 0;
}

int
kg_ingest_check_columns(const char *s)
{
	if (strlen(s) != 3 || strchr(s, 'h') == NULL ||
	    strchr(s, 'r') == NULL || strchr(s, 't') == NULL) {
		kg_error("--columns: '%s' is not an order of the letters h, r "
		    "and t (such as hrt or htr)", s);
		return -1;
	}
	return 0;
}

int
kg_ingest_check_split(const double split[3])
{
	double sum = split[0] + split[1] + split[2];
	int k;

	for (k = 0; k < 3; k++) {
		if (!(split[k] >= 0 && split[k] <= 1)) {
			kg_error("--split: fraction %g is not in [0, 1]",
			    split[k]);
			return -1;
		}
	}
	if (fabs(sum - 1) > 1e-9) {
		kg_error("--split: fractions %g,%g,%g sum to %.10g, not 1",
		    split[0], split[1], split[2], sum);
		return -1;
	}
	if (split[0] == 0) {
		kg_error("--split: the train fraction must be positive");
		return -1;
	}
	return 0;
}

/* ---- the whole run ---- */

static int
read_all(struct ingest *st)
{
	const struct kg_ingest_opts *o = st->o;
	const char *files[3] = { o->train, o->valid, o->test };
	size_t i;
	int s;

	if (kg_ingest_extend_load(st) < 0)
		return -1;
	if (o->train != NULL) {
		for (s = 0; s < 3; s++) {
			st->split_begin[s] = st->n;
			if (files[s] != NULL &&
			    kg_ingest_read_input(st, files[s], s, 0) < 0)
				return -1;
			st->split_end[s] = st->n;
			st->count[s] = st->n - st->split_begin[s];
			if (s == 0) {
				st->train_ent = kg_dict_size(&st->ent);
				st->train_rel = kg_dict_size(&st->rel);
			}
		}
		st->n_ent = kg_dict_size(&st->ent);
		st->n_rel = kg_dict_size(&st->rel);
		if (!o->dedup)
			kg_ingest_count_repeats(st);
	} else {
		for (i = 0; i < o->n_inputs; i++)
			if (kg_ingest_read_input(st, o->inputs[i], -1, i) < 0)
				return -1;
		if (!o->dedup)
			kg_ingest_count_repeats(st);
		if (o->use_split) {
			kg_ingest_assign_splits(st);
			if (kg_ingest_apply_unseen_split(st) < 0)
				return -1;
			kg_ingest_renumber_split(st);
		} else {
			st->split_end[0] = st->count[0] = st->n;
			st->n_ent = kg_dict_size(&st->ent);
			st->n_rel = kg_dict_size(&st->rel);
		}
	}
	if (kg_ingest_extend_finish(st) < 0)
		return -1;
	if (st->count[0] == 0) {
		kg_error("%s: no training triples", o->train != NULL ?
		    o->train : o->n_inputs == 1 && strcmp(o->inputs[0], "-") ==
		    0 ? "stdin" : o->inputs[0]);
		return -1;
	}
	return 0;
}

static void
ingest_release(struct ingest *st)
{
	kg_dict_release(&st->ent);
	kg_dict_release(&st->rel);
	kg_dict_release(&st->types);
	free(st->trip);
	free(st->where);
	free(st->label);
	free(st->perm_e);
	free(st->perm_r);
	free(st->inv_e);
	free(st->inv_r);
	free(st->seen.slots);
	free(st->type_of);
	free(st->comment_file);
	free(st->old_label);
	kg_ingest_rdf_free(st);
}

/* Say how many lines were skipped as comments, and where and why. */
static void
note_comments(const struct ingest *st)
{
	const struct kg_ingest_opts *o = st->o;

	if (o->quiet || st->comments == 0)
		return;
	fprintf(stderr, "%s: skipped %" PRIu64 " comment line%s (starting "
	    "with '%c'%s), the first at %s:%" PRIu64 "\n", kg_progname(),
	    st->comments, st->comments == 1 ? "" : "s", o->tab.comment,
	    o->all_comments ? "" : " and not splitting into a record's fields",
	    st->comment_file, st->comment_line);
}

/* Every file the options name, for checking the output against. */
static const char **
input_files(const struct kg_ingest_opts *o, size_t *n)
{
	const char **in = kg_xcalloc(o->n_inputs + 5, sizeof(*in));
	size_t i, k = 0;

	in[k++] = o->train;
	in[k++] = o->valid;
	in[k++] = o->test;
	in[k++] = o->types;
	in[k++] = o->extend;
	for (i = 0; i < o->n_inputs; i++)
		in[k++] = o->inputs[i];
	*n = k;
	return in;
}

/* How many inputs are read as RDF, and as N-Quads. */
static size_t
count_rdf(const struct kg_ingest_opts *o, size_t *nquads, size_t *nturtle)
{
	const char *split[3] = { o->train, o->valid, o->test };
	size_t i, n = 0;
	enum kg_rdf_syntax syn;

	*nquads = *nturtle = 0;
	for (i = 0; i < 3 + o->n_inputs; i++) {
		const char *p = i < 3 ? split[i] : o->inputs[i - 3];

		if (p == NULL || (syn = kg_ingest_syntax_of(o, p)) ==
		    KG_RDF_NONE)
			continue;
		n++;
		*nquads += syn == KG_RDF_NQUADS;
		*nturtle += syn == KG_RDF_TURTLE;
	}
	return n;
}

/* The number of inputs: split files, or the inputs. */
static size_t
count_inputs(const struct kg_ingest_opts *o)
{
	return o->n_inputs + (o->train != NULL) + (o->valid != NULL) +
	    (o->test != NULL);
}

/* The RDF options fit the inputs; 0 or -1. */
static int
check_rdf(const struct kg_ingest_opts *o)
{
	const struct kg_ingest_rdf_opts *r = &o->rdf;
	size_t nq, nt, n = count_rdf(o, &nq, &nt);

	if (n == 0 && (r->base || r->graph || r->lang || r->predicates ||
	    r->exclude_predicates || r->types != KG_RDF_TYPES_EDGE ||
	    r->compact || r->n_prefixes)) {
		kg_error("--base, --graph, --lang, --rdf-types, --predicates, "
		    "--exclude-predicates, --compact and --prefix need RDF "
		    "input (--format ntriples, nquads or turtle, or files "
		    "named .nt, .nq or .ttl)");
		return -1;
	}
	if (n > 0 && n == count_inputs(o) && (strcmp(o->columns, "hrt") != 0 ||
	    o->tab.header || o->tab.delim != '\t')) {
		kg_error("%s applies to tables, and every input is RDF",
		    strcmp(o->columns, "hrt") != 0 ? "--columns" :
		    o->tab.header ? "--header" : "--delimiter");
		return -1;
	}
	if (r->n_prefixes > 0 && !r->compact) {
		kg_error("--prefix goes with --compact");
		return -1;
	}
	if (r->compact && r->n_prefixes == 0 && nt == 0) {
		kg_error("--compact needs --prefix NAME=IRI or Turtle input "
		    "(whose prefixes it uses)");
		return -1;
	}
	if (kg_ingest_check_prefixes(r) < 0)
		return -1;
	if (r->graph != NULL && nq == 0) {
		kg_error("--graph selects a graph of N-Quads input, and no "
		    "input is N-Quads");
		return -1;
	}
	if (o->types != NULL && r->types == KG_RDF_TYPES_TYPES) {
		kg_error("--types cannot be combined with --rdf-types types");
		return -1;
	}
	return 0;
}

int
kg_ingest_check_opts(const struct kg_ingest_opts *o)
{
	if (check_rdf(o) < 0)
		return -1;
	if (kg_ingest_check_columns(o->columns) < 0 ||
	    (o->use_split && kg_ingest_check_split(o->split) < 0))
		return -1;
	if (o->use_split && o->unseen == KG_UNSEEN_ERROR &&
	    o->n_inputs >> (64 - LINE_BITS) != 0) {
		kg_error("--unseen error with --split takes at most %d inputs",
		    1 << (64 - LINE_BITS));
		return -1;
	}
	return 0;
}

int
kg_ingest_run(const struct kg_ingest_opts *o)
{
	struct ingest st;
	struct kg_stage stage = KG_STAGE_INIT;
	struct kg_stage_input *in;
	const char **files;
	size_t i, j, n;
	int k, rc = -1;

	if (kg_ingest_check_opts(o) < 0)
		return -1;
	memset(&st, 0, sizeof(st));
	st.o = o;
	kg_dict_init(&st.ent);
	kg_dict_init(&st.rel);
	kg_dict_init(&st.types);
	for (k = 0; k < 3; k++)
		st.col[k] = (int)(strchr(o->columns, "hrt"[k]) - o->columns);
	st.t0 = kg_now();
	st.cpu0 = kg_ingest_cpu_seconds();
	st.next_progress = st.t0 + 1.0;
	/* Refuse an existing output, or one holding an input, before
	 * reading anything. */
	files = input_files(o, &n);
	in = kg_xcalloc(n, sizeof(*in));
	for (i = 0; i < n; i++)
		in[i].path = files[i];
	in[4].role = o->extend != NULL ? "extends" : NULL;
	rc = kg_stage_begin(&stage, o->output, o->force, in, n, o->argc,
	    o->argv);
	free(in);
	free(files);
	if (rc < 0)
		goto fail;
	if (count_rdf(o, &i, &j) > 0 && kg_ingest_rdf_begin(&st, stage.dir) < 0)
		goto fail;
	kg_ingest_progress_begin(&st);
	if (read_all(&st) < 0)
		goto fail;
	kg_progress_end(&st.prog, kg_ingest_progress_units(&st, NULL));
	if (o->types != NULL) {
		struct kg_tab_opts to = kg_ingest_tab_opts(o, 2);

		if (kg_ingest_read_types(&st, o->types, &to, 0) < 0)
			goto fail;
	} else if (kg_ingest_rdf_types(&st) < 0)
		goto fail;
	note_comments(&st);
	st.t_read = kg_now();
	st.cpu_read = kg_ingest_cpu_seconds();
	if (kg_ingest_write_all(&st, &stage) < 0 ||
	    kg_ingest_rdf_end(&st, &stage) < 0)
		goto fail;
	st.t_write = kg_now();
	kg_ingest_set_config(&stage.manifest, o);
	kg_ingest_set_figures(&stage.manifest, &st, kg_now() - st.t0);
	if (st.rdf != NULL) {
		kg_ingest_rdf_config(&stage.manifest, o);
		kg_ingest_rdf_figures(&stage.manifest, &st);
	}
	if (o->progress)
		fprintf(stderr, "%s: %" PRIu64 " lines, %" PRIu64 " entities, "
		    "%" PRIu64 " relations, %.2f s\n", kg_progname(), st.lines,
		    st.n_ent, st.n_rel, kg_now() - st.t0);
	rc = kg_stage_commit(&stage);
	goto out;
fail:
	rc = -1;
out:
	kg_stage_release(&stage);
	ingest_release(&st);
	return rc;
}
