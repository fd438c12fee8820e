/* Metrics of lib/eval/eval.h: MRR, MR and Hits@k from ranks, by side,
 * tie policy and relation, and the JSON report. */
#include "eval/eval.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/util.h"

void
kg_metrics_add(struct kg_metrics *m, double rank)
{
	m->n++;
	m->sum_rr += 1.0 / rank;
	m->sum_r += rank;
	m->hits1 += rank <= 1.0;
	m->hits3 += rank <= 3.0;
	m->hits10 += rank <= 10.0;
}

double
kg_metrics_mrr(const struct kg_metrics *m)
{
	return m->n ? m->sum_rr / (double)m->n : NAN;
}

double
kg_metrics_mr(const struct kg_metrics *m)
{
	return m->n ? m->sum_r / (double)m->n : NAN;
}

double
kg_metrics_hits(const struct kg_metrics *m, int k)
{
	uint64_t h = k <= 1 ? m->hits1 : k <= 3 ? m->hits3 : m->hits10;

	return m->n ? (double)h / (double)m->n : NAN;
}

static void
add_triple(const struct kg_eval_ranks *ranks, uint64_t i, enum kg_ties ties,
    struct kg_metrics out[3])
{
	int s;

	for (s = 0; s < 2; s++) {
		double rk = kg_rank_of(ties, ranks->opt[s][i],
		    ranks->pess[s][i]);

		kg_metrics_add(&out[s], rk);
		kg_metrics_add(&out[2], rk);
	}
}

void
kg_eval_metrics(const struct kg_eval_ranks *ranks,
    const struct kg_triples *test, int64_t rel, enum kg_ties ties,
    struct kg_metrics out[3])
{
	uint64_t i;
	int s;

	for (s = 0; s < 3; s++)
		out[s] = (struct kg_metrics)KG_METRICS_INIT;
	for (i = 0; i < ranks->n; i++)
		if (rel < 0 || test->hrt[3 * i + 1] == rel)
			add_triple(ranks, i, ties, out);
}

void
kg_eval_metrics_per_relation(const struct kg_eval_ranks *ranks,
    const struct kg_triples *test, uint64_t n_relations, enum kg_ties ties,
    struct kg_metrics *out)
{
	uint64_t i;

	for (i = 0; i < 3 * n_relations; i++)
		out[i] = (struct kg_metrics)KG_METRICS_INIT;
	for (i = 0; i < ranks->n; i++) {
		uint64_t r = (uint64_t)test->hrt[3 * i + 1];

		if (r < n_relations)
			add_triple(ranks, i, ties, out + 3 * r);
	}
}

static json_t *
mean_json(double x)
{
	return isnan(x) ? json_null() : json_real(x);
}

json_t *
kg_metrics_json(const struct kg_metrics *m)
{
	json_t *o = json_object();

	json_object_set_new(o, "n", json_integer((json_int_t)m->n));
	json_object_set_new(o, "mrr", mean_json(kg_metrics_mrr(m)));
	json_object_set_new(o, "mr", mean_json(kg_metrics_mr(m)));
	json_object_set_new(o, "hits@1", mean_json(kg_metrics_hits(m, 1)));
	json_object_set_new(o, "hits@3", mean_json(kg_metrics_hits(m, 3)));
	json_object_set_new(o, "hits@10", mean_json(kg_metrics_hits(m, 10)));
	return o;
}

json_t *
kg_metrics_sides_json(const struct kg_metrics m[3])
{
	json_t *o = json_object();

	json_object_set_new(o, "tail", kg_metrics_json(&m[0]));
	json_object_set_new(o, "head", kg_metrics_json(&m[1]));
	json_object_set_new(o, "both", kg_metrics_json(&m[2]));
	return o;
}

void
kg_eval_report_metrics(json_t *rep, const struct kg_eval_ranks *ranks,
    const struct kg_triples *test, enum kg_ties ties, uint64_t n_relations,
    char *const *names, struct kg_metrics out[3])
{
	json_t *all = json_object(), *a;
	struct kg_metrics *m;
	uint64_t r;
	int t;

	for (t = 0; t < 3; t++) {
		kg_eval_metrics(ranks, test, -1, (enum kg_ties)t, out);
		json_object_set_new(all, kg_ties_name((enum kg_ties)t),
		    kg_metrics_sides_json(out));
	}
	json_object_set_new(rep, "by_ties", all);
	kg_eval_metrics(ranks, test, -1, ties, out);
	json_object_set_new(rep, "metrics", kg_metrics_sides_json(out));
	if (n_relations == 0)
		return;
	m = kg_xcalloc(3 * n_relations, sizeof(*m));
	a = json_array();
	kg_eval_metrics_per_relation(ranks, test, n_relations, ties, m);
	for (r = 0; r < n_relations; r++) {
		json_t *e;

		if (m[3 * r + 2].n == 0)
			continue;
		e = kg_metrics_sides_json(m + 3 * r);
		json_object_set_new(e, "relation", json_integer((json_int_t)r));
		if (names != NULL)
			json_object_set_new(e, "name", json_string(names[r]));
		json_array_append_new(a, e);
	}
	json_object_set_new(rep, "per_relation", a);
	free(m);
}

int
kg_eval_write_report(const json_t *report, const char *path, int force)
{
	const size_t flags = JSON_INDENT(2) | JSON_SORT_KEYS;
	char *tmp;
	FILE *f;
	int ok;

	if (path == NULL || strcmp(path, "-") == 0) {
		if (json_dumpf(report, stdout, flags) < 0 ||
		    putchar('\n') == EOF) {
			kg_error_errno("cannot write to stdout");
			return -1;
		}
		return 0;
	}
	if (!force && kg_path_exists(path)) {
		kg_error("output '%s' exists; use --force", path);
		return -1;
	}
	tmp = kg_xasprintf("%s.tmp.%ld", path, (long)getpid());
	f = fopen(tmp, "w");
	if (f == NULL) {
		kg_error_errno("cannot create '%s'", tmp);
		free(tmp);
		return -1;
	}
	ok = json_dumpf(report, f, flags) == 0 && fputc('\n', f) != EOF &&
	    fflush(f) == 0 && fsync(fileno(f)) == 0;
	if (fclose(f) == EOF)
		ok = 0;
	if (!ok || rename(tmp, path) < 0) {
		kg_error_errno("cannot write '%s'", path);
		unlink(tmp);
		free(tmp);
		return -1;
	}
	free(tmp);
	return 0;
}

void
kg_metrics_print(FILE *f, const struct kg_metrics m[3])
{
	static const char *const label[3] = { "tail", "head", "both" };
	int s;

	fprintf(f, "  %-5s %8s %10s %8s %8s %8s\n", "", "MRR", "MR", "Hits@1",
	    "Hits@3", "Hits@10");
	for (s = 0; s < 3; s++)
		fprintf(f, "  %-5s %8.4f %10.2f %8.4f %8.4f %8.4f\n", label[s],
		    kg_metrics_mrr(&m[s]), kg_metrics_mr(&m[s]),
		    kg_metrics_hits(&m[s], 1), kg_metrics_hits(&m[s], 3),
		    kg_metrics_hits(&m[s], 10));
}

void
kg_metrics_print_per_relation(FILE *f, const struct kg_metrics *m,
    uint64_t n_relations, char *const *names)
{
	uint64_t r;

	fprintf(f, "  %-24s %7s %8s %8s %8s %10s %8s %8s %8s\n", "relation",
	    "triples", "tail MRR", "head MRR", "MRR", "MR", "Hits@1", "Hits@3",
	    "Hits@10");
	for (r = 0; r < n_relations; r++) {
		const struct kg_metrics *t = &m[3 * r], *h = t + 1, *b = t + 2;
		char id[24];

		if (b->n == 0)
			continue;
		snprintf(id, sizeof(id), "%llu", (unsigned long long)r);
		fprintf(f, "  %-24s %7llu %8.4f %8.4f %8.4f %10.2f %8.4f %8.4f "
		    "%8.4f\n", names != NULL ? names[r] : id,
		    (unsigned long long)t->n, kg_metrics_mrr(t),
		    kg_metrics_mrr(h), kg_metrics_mrr(b), kg_metrics_mr(b),
		    kg_metrics_hits(b, 1), kg_metrics_hits(b, 3),
		    kg_metrics_hits(b, 10));
	}
}
