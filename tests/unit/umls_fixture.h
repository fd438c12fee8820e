/*
 * umls_fixture: the bundled UMLS triples (examples/data/umls, gzip TSV)
 * loaded straight into ID arrays for the trainer's unit tests
 * (t_train.c, t_devops_train.c), and the filtered test MRR of a trainer,
 * realistic ties.  load_umls() returns 0 or -1 (data missing); the arrays
 * live for the test program's life.
 */
#ifndef KG_TEST_UMLS_FIXTURE_H
#define KG_TEST_UMLS_FIXTURE_H

#include <stdint.h>
#include <string.h>
#include <zlib.h>

#include "core/util.h"
#include "eval/eval.h"
#include "kge/modeldir.h"
#include "kge/train_impl.h"

#define MAXN 256

struct names {
	char *s[MAXN];
	size_t n;
};

struct data {
	struct names ent, rel;
	int32_t *split[3];
	uint64_t n[3];
};

static struct data umls;

static int32_t
intern(struct names *nm, const char *s)
{
	size_t i;

	for (i = 0; i < nm->n; i++)
		if (strcmp(nm->s[i], s) == 0)
			return (int32_t)i;
	if (nm->n == MAXN)
		return -1;
	nm->s[nm->n] = kg_xstrdup(s);
	return (int32_t)nm->n++;
}

static int
load_split(struct data *d, const char *path, int k)
{
	gzFile f = gzopen(path, "rb");
	char line[1024], *h, *r, *t;
	size_t cap = 1024;

	if (f == NULL)
		return -1;
	d->split[k] = kg_xmallocarray(3 * cap, sizeof(int32_t));
	d->n[k] = 0;
	while (gzgets(f, line, sizeof(line)) != NULL) {
		int32_t *x;

		line[strcspn(line, "\r\n")] = '\0';
		h = line;
		r = strchr(h, '\t');
		if (r == NULL)
			continue;
		*r++ = '\0';
		t = strchr(r, '\t');
		if (t == NULL)
			continue;
		*t++ = '\0';
		if (d->n[k] == cap) {
			cap *= 2;
			d->split[k] = kg_xreallocarray(d->split[k], 3 * cap,
			    sizeof(int32_t));
		}
		x = d->split[k] + 3 * d->n[k]++;
		x[0] = intern(&d->ent, h);
		x[1] = intern(&d->rel, r);
		x[2] = intern(&d->ent, t);
		if (x[0] < 0 || x[1] < 0 || x[2] < 0) {
			gzclose(f);
			return -1;
		}
	}
	gzclose(f);
	return 0;
}

static int
load_umls(void)
{
	static const char *const names[3] = { "train", "valid", "test" };
	const char *top = getenv("KG_TOP");
	int k, rc = 0;

	if (umls.n[0] > 0)
		return 0;
	for (k = 0; k < 3 && rc == 0; k++) {
		char *path = kg_xasprintf("%s/examples/data/umls/%s.txt.gz",
		    top ? top : ".", names[k]);

		rc = load_split(&umls, path, k);
		free(path);
	}
	return rc;
}

/* Filtered test MRR (both sides, realistic ties) through lib/eval/eval.h. */
static inline double
test_mrr(const struct kg_trainer *tr)
{
	struct kg_triples sets[3];
	struct kg_filter filter = KG_FILTER_INIT;
	struct kg_modeldir md = KG_MODELDIR_INIT;
	struct kg_eval_opts eo = KG_EVAL_OPTS_INIT;
	struct kg_eval_ranks ranks = KG_EVAL_RANKS_INIT;
	struct kg_metrics m[3];
	int k;

	for (k = 0; k < 3; k++) {
		sets[k].n = umls.n[k];
		sets[k].hrt = umls.split[k];
	}
	kg_filter_build(&filter, sets, 3);
	md.model = tr->model;
	md.reciprocal = tr->o.reciprocal;
	md.n_entities = tr->n_entities;
	md.n_relations = tr->n_relations;
	md.n_rel_rows = tr->n_rel_rows;
	md.ents = tr->ents;
	md.relations = tr->rel;
	eo.filter = &filter;
	eo.threads = 1;
	if (kg_eval_rank(&md, &sets[2], &eo, &ranks) < 0)
		return -1.0;
	kg_eval_metrics(&ranks, &sets[2], -1, KG_TIES_REALISTIC, m);
	kg_eval_ranks_release(&ranks);
	kg_filter_release(&filter);
	return kg_metrics_mrr(&m[2]);
}

#endif
