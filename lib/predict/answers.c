#include "predict/answers.h"

#include <math.h>

void
kg_json_string(FILE *f, const char *s)
{
	const unsigned char *p;

	putc('"', f);
	for (p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\') {
			putc('\\', f);
			putc(*p, f);
		} else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\u%04x", *p);
		else
			putc(*p, f);
	}
	putc('"', f);
}

/* A score: 9 significant digits read back as the same float32; JSON
 * has no infinities, so they become null there. */
static void
put_score(FILE *f, float s, int json)
{
	if (json && !isfinite(s))
		fputs("null", f);
	else
		fprintf(f, "%.9g", (double)s);
}

void
kg_answers_header(FILE *f, const struct kg_answers_fmt *fmt)
{
	if (fmt->json)
		return;
	if (fmt->score) {
		fputs(fmt->rank ? "head\trelation\ttail\tscore\ttail_rank\t"
		    "head_rank\n" : "head\trelation\ttail\tscore\n", f);
		return;
	}
	fputs(fmt->nearest ? "entity\tneighbour\tscore\trank\n" :
	    "head\trelation\ttail\tscore\trank\n", f);
}

/* The name of answer id to query q. */
static const char *
answer_name(const struct kg_names *n, const struct kg_query *q, int64_t id)
{
	return q->kind == KG_QUERY_REL ? kg_names_relation(n, id) :
	    kg_names_entity(n, id);
}

static void
tsv(FILE *f, const struct kg_names *n, const struct kg_query *q,
    const float *s, const int64_t *id, size_t m)
{
	size_t i;

	for (i = 0; i < m; i++) {
		if (q->kind == KG_QUERY_NEAR)
			fprintf(f, "%s\t%s\t", kg_names_entity(n, q->h),
			    kg_names_entity(n, id[i]));
		else
			fprintf(f, "%s\t%s\t%s\t", q->kind == KG_QUERY_HEAD ?
			    kg_names_entity(n, id[i]) : kg_names_entity(n,
			    q->h), q->kind == KG_QUERY_REL ?
			    kg_names_relation(n, id[i]) :
			    kg_names_relation(n, q->r),
			    q->kind == KG_QUERY_TAIL ?
			    kg_names_entity(n, id[i]) : kg_names_entity(n,
			    q->t));
		put_score(f, s[i], 0);
		fprintf(f, "\t%zu\n", i + 1);
	}
}

/* "key": name, or "key": null for the asked part. */
static void
json_part(FILE *f, const char *key, const char *name, int comma)
{
	fprintf(f, "%s\"%s\": ", comma ? ", " : "", key);
	if (name != NULL)
		kg_json_string(f, name);
	else
		fputs("null", f);
}

static void
json(FILE *f, const struct kg_answers_fmt *fmt, const struct kg_names *n,
    const struct kg_query *q, const float *s, const int64_t *id, size_t m)
{
	static const char *const key[] = { "tail", "head", "relation",
	    "entity" };
	size_t i;

	fprintf(f, "{\"line\": %llu", (unsigned long long)q->line);
	if (q->kind == KG_QUERY_NEAR) {
		json_part(f, "entity", kg_names_entity(n, q->h), 1);
		json_part(f, "similarity", kg_sim_name(fmt->sim), 1);
	} else {
		json_part(f, "head", q->h >= 0 ? kg_names_entity(n, q->h) :
		    NULL, 1);
		json_part(f, "relation", q->r >= 0 ? kg_names_relation(n,
		    q->r) : NULL, 1);
		json_part(f, "tail", q->t >= 0 ? kg_names_entity(n, q->t) :
		    NULL, 1);
	}
	fputs(", \"answers\": [", f);
	for (i = 0; i < m; i++) {
		fprintf(f, "%s{", i ? ", " : "");
		json_part(f, key[q->kind], answer_name(n, q, id[i]), 0);
		fputs(", \"score\": ", f);
		put_score(f, s[i], 1);
		putc('}', f);
	}
	fputs("]}\n", f);
}

void
kg_answers_write(FILE *f, const struct kg_answers_fmt *fmt,
    const struct kg_names *names, const struct kg_query *q, size_t nq,
    const struct kg_topk *top)
{
	size_t i;

	for (i = 0; i < nq; i++) {
		const float *s = top->score + i * top->k;
		const int64_t *id = top->id + i * top->k;

		if (fmt->json)
			json(f, fmt, names, &q[i], s, id, top->n[i]);
		else
			tsv(f, names, &q[i], s, id, top->n[i]);
	}
}

/* A realistic rank: a whole number, or one and a half. */
static void
put_rank(FILE *f, double r)
{
	fprintf(f, r == floor(r) ? "%.0f" : "%.1f", r);
}

void
kg_answers_write_scores(FILE *f, const struct kg_answers_fmt *fmt,
    const struct kg_names *n, const struct kg_query *q, size_t nq,
    const float *score, const double *tail_rank, const double *head_rank)
{
	size_t i;

	for (i = 0; i < nq; i++) {
		const char *h = kg_names_entity(n, q[i].h);
		const char *r = kg_names_relation(n, q[i].r);
		const char *t = kg_names_entity(n, q[i].t);

		if (fmt->json) {
			fprintf(f, "{\"line\": %llu", (unsigned long long)
			    q[i].line);
			json_part(f, "head", h, 1);
			json_part(f, "relation", r, 1);
			json_part(f, "tail", t, 1);
			fputs(", \"score\": ", f);
			put_score(f, score[i], 1);
			if (fmt->rank) {
				fputs(", \"tail_rank\": ", f);
				put_rank(f, tail_rank[i]);
				fputs(", \"head_rank\": ", f);
				put_rank(f, head_rank[i]);
			}
			fputs("}\n", f);
			continue;
		}
		fprintf(f, "%s\t%s\t%s\t", h, r, t);
		put_score(f, score[i], 0);
		if (fmt->rank) {
			putc('\t', f);
			put_rank(f, tail_rank[i]);
			putc('\t', f);
			put_rank(f, head_rank[i]);
		}
		putc('\n', f);
	}
}
