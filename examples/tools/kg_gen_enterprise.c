/*
 * kg_gen_enterprise: a seeded generator of an enterprise-like knowledge
 * graph in the shape of the Ray paper's data, with node attributes of
 * every kind kg-encode-attrs knows.
 *
 * Nodes: companies, locations, products, people, documents.  Relations
 * (5): works_at (person -> company), located_in (person or company ->
 * location), produces (company -> product), uses (person -> product),
 * authored (person -> document).
 *
 * Planted structure: every company has departments of a kind (sales,
 * engineering, ...); each kind favours a few product categories and each
 * department has a pool of products from them.  People of a department
 * use products of its pool, share its kind (categorical), draw skills
 * from the kind's list (multi-label), and their bio and the documents
 * they write name the pool's products and categories (text).  So "uses"
 * is learnable from the graph and the attributes both help.
 *
 * Output directory (written atomically): train.tsv, valid.tsv, test.tsv
 * (head TAB relation TAB tail; every node has a training edge; with
 * --one-file all of them in triples.tsv instead), types.tsv
 * (entity TAB type), people.csv (wide form, header), attrs.tsv (long
 * form: entity TAB attribute TAB value) and schema.json for
 * kg-encode-attrs (tables relative to the directory).
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/outdir.h"
#include "core/util.h"

#define N_KINDS 12
#define N_CATS 20
#define CATS_PER_KIND 3
#define POOL 24
#define MAX_USES (7 + 11)	/* products a person uses: 7 + pick(12) */

static const char *const kinds[N_KINDS] = { "engineering", "sales",
	"marketing", "finance", "legal", "hr", "support", "research",
	"operations", "design", "security", "logistics" };
static const char *const cats[N_CATS] = { "database", "analytics",
	"crm", "payroll", "firewall", "compiler", "spreadsheet", "ledger",
	"chatbot", "warehouse", "scheduler", "editor", "antivirus", "billing",
	"telemetry", "recruiting", "helpdesk", "shipping", "prototyping",
	"contracts" };
static const char *const skills[N_KINDS][4] = {
	{ "c", "python", "kubernetes", "sql" },
	{ "negotiation", "crm", "forecasting", "presenting" },
	{ "seo", "copywriting", "branding", "analytics" },
	{ "accounting", "excel", "audit", "tax" },
	{ "contracts", "compliance", "litigation", "privacy" },
	{ "recruiting", "payroll", "training", "benefits" },
	{ "ticketing", "empathy", "troubleshooting", "docs" },
	{ "statistics", "ml", "papers", "experiments" },
	{ "planning", "lean", "procurement", "scheduling" },
	{ "figma", "typography", "ux", "illustration" },
	{ "pentest", "crypto", "incident", "firewalls" },
	{ "routing", "inventory", "freight", "customs" } };
static const char *const industries[] = { "software", "retail", "banking",
	"health", "energy", "media", "transport", "telecom" };
static const char *const countries[] = { "de", "fr", "us", "jp", "br",
	"in", "uk", "ca", "au", "za" };
static const char *const filler[] = { "quarterly", "review", "plan",
	"notes", "meeting", "summary", "update", "draft", "final", "budget",
	"risk", "status", "roadmap", "issue", "release", "customer", "team",
	"goal", "metric", "launch" };
static const char *const syll[] = { "zor", "vex", "qua", "lin", "tri",
	"mo", "dax", "pel", "ori", "sun", "kep", "ray", "nix", "bol", "fen",
	"tur" };

struct gen {
	struct kg_rng rng;
	uint64_t n_comp, n_loc, n_prod, n_people, n_docs, n_dept;
	uint32_t *comp_loc, *comp_ind;
	uint32_t *dept_comp, *dept_kind;	/* departments */
	uint32_t *dept_pool;		/* n_dept x POOL products */
	uint32_t *prod_cat, *prod_comp;
	uint32_t *person_dept, *person_loc;
	uint32_t **cat_prods;		/* products of each category */
	uint32_t cat_count[N_CATS];
	FILE *split[3];
	uint64_t n_edges[3];
	char name_buf[64];
};

#define KG_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static uint32_t
pick(struct gen *g, uint64_t n)
{
	return (uint32_t)kg_rng_below(&g->rng, n);
}

/* A pronounceable product token, unique through its base-36 suffix. */
static const char *
prod_token(struct gen *g, uint32_t p)
{
	char suf[16];
	uint32_t x = p;
	int k = 0, i;

	do {
		suf[k++] = "0123456789abcdefghijklmnopqrstuvwxyz"[x % 36];
		x /= 36;
	} while (x != 0);
	i = snprintf(g->name_buf, sizeof(g->name_buf), "%s%s",
	    syll[(p * 7u) % KG_ARRAY_SIZE(syll)],
	    syll[(p * 13u + 5) % KG_ARRAY_SIZE(syll)]);
	while (k > 0 && i < (int)sizeof(g->name_buf) - 1)
		g->name_buf[i++] = suf[--k];
	g->name_buf[i] = '\0';
	return g->name_buf;
}

/* An edge; anchor edges always go to train, the others 90/5/5. */
static void
edge(struct gen *g, const char *ht, uint64_t h, const char *rel,
    const char *tt, uint64_t t, int anchor)
{
	double u = anchor ? 0 : kg_rng_uniform(&g->rng);
	int s = u < 0.9 ? 0 : u < 0.95 ? 1 : 2;

	fprintf(g->split[s], "%s:%llu\t%s\t%s:%llu\n", ht,
	    (unsigned long long)h, rel, tt, (unsigned long long)t);
	g->n_edges[s]++;
}

static void
build(struct gen *g, uint64_t nodes)
{
	uint64_t i, j;
	uint32_t c;

	g->n_comp = nodes / 100 > 2 ? nodes / 100 : 2;
	g->n_loc = nodes / 200 > 2 ? nodes / 200 : 2;
	g->n_prod = nodes / 20 > 20 ? nodes / 20 : 20;
	g->n_docs = nodes * 30 / 100;
	g->n_people = nodes - g->n_comp - g->n_loc - g->n_prod - g->n_docs;
	g->comp_loc = kg_xmallocarray(g->n_comp, sizeof(uint32_t));
	g->comp_ind = kg_xmallocarray(g->n_comp, sizeof(uint32_t));
	for (i = 0; i < g->n_comp; i++) {
		/* Round-robin first, so that every location has a company. */
		g->comp_loc[i] = i < g->n_loc ? (uint32_t)i :
		    pick(g, g->n_loc);
		g->comp_ind[i] = pick(g, KG_ARRAY_SIZE(industries));
	}
	g->prod_cat = kg_xmallocarray(g->n_prod, sizeof(uint32_t));
	g->prod_comp = kg_xmallocarray(g->n_prod, sizeof(uint32_t));
	for (i = 0; i < g->n_prod; i++) {
		g->prod_cat[i] = (uint32_t)(i % N_CATS);
		g->prod_comp[i] = pick(g, g->n_comp);
		g->cat_count[g->prod_cat[i]]++;
	}
	g->cat_prods = kg_xcalloc(N_CATS, sizeof(uint32_t *));
	for (c = 0; c < N_CATS; c++) {
		g->cat_prods[c] = kg_xmallocarray(g->cat_count[c],
		    sizeof(uint32_t));
		g->cat_count[c] = 0;
	}
	for (i = 0; i < g->n_prod; i++) {
		c = g->prod_cat[i];
		g->cat_prods[c][g->cat_count[c]++] = (uint32_t)i;
	}
	/* Departments: 4 to 8 kinds per company. */
	g->dept_comp = kg_xmallocarray(g->n_comp * 8, sizeof(uint32_t));
	g->dept_kind = kg_xmallocarray(g->n_comp * 8, sizeof(uint32_t));
	g->n_dept = 0;
	for (i = 0; i < g->n_comp; i++) {
		uint32_t nd = 4 + pick(g, 5), first = pick(g, N_KINDS);

		for (j = 0; j < nd; j++) {
			g->dept_comp[g->n_dept] = (uint32_t)i;
			g->dept_kind[g->n_dept] = (uint32_t)((first + j * 5) %
			    N_KINDS);
			g->n_dept++;
		}
	}
	g->dept_pool = kg_xmallocarray(g->n_dept * POOL, sizeof(uint32_t));
	for (i = 0; i < g->n_dept; i++)
		for (j = 0; j < POOL; j++) {
			/* kind k favours categories 3k, 3k+1, 3k+2 (mod) */
			c = (g->dept_kind[i] * CATS_PER_KIND +
			    pick(g, CATS_PER_KIND)) % N_CATS;
			g->dept_pool[i * POOL + j] =
			    g->cat_prods[c][pick(g, g->cat_count[c])];
		}
	g->person_dept = kg_xmallocarray(g->n_people, sizeof(uint32_t));
	g->person_loc = kg_xmallocarray(g->n_people, sizeof(uint32_t));
	for (i = 0; i < g->n_people; i++) {
		/* The first people fill every department once. */
		g->person_dept[i] = i < g->n_dept ? (uint32_t)i :
		    pick(g, g->n_dept);
		g->person_loc[i] = kg_rng_uniform(&g->rng) < 0.8 ?
		    g->comp_loc[g->dept_comp[g->person_dept[i]]] :
		    pick(g, g->n_loc);
	}
}

/* Frees what build() allocated. */
static void
gen_free(struct gen *g)
{
	uint32_t c;

	if (g->cat_prods != NULL)
		for (c = 0; c < N_CATS; c++)
			free(g->cat_prods[c]);
	free(g->cat_prods);
	free(g->comp_loc);
	free(g->comp_ind);
	free(g->dept_comp);
	free(g->dept_kind);
	free(g->dept_pool);
	free(g->prod_cat);
	free(g->prod_comp);
	free(g->person_dept);
	free(g->person_loc);
}

static void
write_edges(struct gen *g)
{
	uint64_t i;
	uint32_t j;

	for (i = 0; i < g->n_comp; i++)
		edge(g, "company", i, "located_in", "location", g->comp_loc[i],
		    1);
	for (i = 0; i < g->n_prod; i++)
		edge(g, "company", g->prod_comp[i], "produces", "product", i,
		    1);
	for (i = 0; i < g->n_people; i++) {
		uint32_t d = g->person_dept[i], nu = 7 + pick(g, 12);
		uint32_t used[MAX_USES];

		edge(g, "person", i, "works_at", "company", g->dept_comp[d], 1);
		edge(g, "person", i, "located_in", "location",
		    g->person_loc[i], 0);
		for (j = 0; j < nu; j++) {
			uint32_t p = kg_rng_uniform(&g->rng) < 0.85 ?
			    g->dept_pool[d * POOL + pick(g, POOL)] :
			    pick(g, g->n_prod), k;

			/* No repeated triple. */
			for (k = 0; k < j && used[k] != p; k++)
				;
			used[j] = p;
			if (k == j)
				edge(g, "person", i, "uses", "product", p, 0);
		}
	}
	for (i = 0; i < g->n_docs; i++) {
		/* Authors from one department: the first is the anchor. */
		uint32_t a = pick(g, g->n_people), na = 1 + pick(g, 3);
		uint32_t d = g->person_dept[a], prev = a;

		edge(g, "person", a, "authored", "document", i, 1);
		for (j = 1; j < na; j++) {
			uint32_t b = pick(g, g->n_people);

			if (g->person_dept[b] == d && b != a && b != prev) {
				edge(g, "person", b, "authored", "document", i,
				    0);
				prev = b;
			}
		}
	}
}

static void
write_types(struct gen *g, FILE *f)
{
	uint64_t i;

	for (i = 0; i < g->n_comp; i++)
		fprintf(f, "company:%llu\tcompany\n", (unsigned long long)i);
	for (i = 0; i < g->n_loc; i++)
		fprintf(f, "location:%llu\tlocation\n", (unsigned long long)i);
	for (i = 0; i < g->n_prod; i++)
		fprintf(f, "product:%llu\tproduct\n", (unsigned long long)i);
	for (i = 0; i < g->n_people; i++)
		fprintf(f, "person:%llu\tperson\n", (unsigned long long)i);
	for (i = 0; i < g->n_docs; i++)
		fprintf(f, "document:%llu\tdocument\n", (unsigned long long)i);
}

/* A date as YYYY-MM-DD between years y0 and y1. */
static void
put_date(struct gen *g, FILE *f, int y0, int y1, const char *fmt)
{
	int y = y0 + (int)pick(g, (uint64_t)(y1 - y0 + 1));
	int m = 1 + (int)pick(g, 12), d = 1 + (int)pick(g, 28);

	if (strcmp(fmt, "dmy") == 0)
		fprintf(f, "%02d/%02d/%04d", d, m, y);
	else
		fprintf(f, "%04d-%02d-%02d", y, m, d);
}

static void
write_people(struct gen *g, FILE *f)
{
	uint64_t i;
	uint32_t j;

	fputs("entity,person.department,person.salary,person.hired,"
	    "person.skills,person.bio\n", f);
	for (i = 0; i < g->n_people; i++) {
		uint32_t d = g->person_dept[i], k = g->dept_kind[d];
		double salary = exp(10.5 + 0.1 * k + 0.3 *
		    kg_rng_normal(&g->rng));

		fprintf(f, "person:%llu,%s,", (unsigned long long)i, kinds[k]);
		if (kg_rng_uniform(&g->rng) >= 0.1)
			fprintf(f, "%.2f", salary);
		fputc(',', f);
		if (kg_rng_uniform(&g->rng) >= 0.05)
			put_date(g, f, 1990, 2025, "iso");
		fputc(',', f);
		j = pick(g, 4);
		fprintf(f, "%s;%s", skills[k][j], skills[k][(j + 1 +
		    pick(g, 3)) % 4]);
		if (kg_rng_uniform(&g->rng) < 0.2)
			fprintf(f, ";%s", skills[pick(g, N_KINDS)][pick(g, 4)]);
		/* The bio: quoted, since it holds commas. */
		fprintf(f, ",\"%s %s, works with", kinds[k],
		    filler[pick(g, KG_ARRAY_SIZE(filler))]);
		for (j = 0; j < 3; j++) {
			uint32_t p = g->dept_pool[d * POOL + pick(g, POOL)];

			fprintf(f, " %s %s", prod_token(g, p),
			    cats[g->prod_cat[p]]);
		}
		fputs("\"\n", f);
	}
}

static void
write_long(struct gen *g, FILE *f)
{
	uint64_t i;
	uint32_t j;

	for (i = 0; i < g->n_comp; i++) {
		fprintf(f, "company:%llu\tcompany.industry\t%s\n",
		    (unsigned long long)i, industries[g->comp_ind[i]]);
		fprintf(f, "company:%llu\tcompany.revenue\t%.0f\n",
		    (unsigned long long)i, exp(14 + 2 * kg_rng_normal(&g->rng)));
		fprintf(f, "company:%llu\tcompany.founded\t",
		    (unsigned long long)i);
		put_date(g, f, 1850, 2020, "dmy");
		fputc('\n', f);
	}
	for (i = 0; i < g->n_loc; i++) {
		fprintf(f, "location:%llu\tlocation.country\t%s\n",
		    (unsigned long long)i,
		    countries[i % KG_ARRAY_SIZE(countries)]);
		fprintf(f, "location:%llu\tlocation.population\t%.0f\n",
		    (unsigned long long)i, exp(11 + 1.5 * kg_rng_normal(&g->rng)));
	}
	for (i = 0; i < g->n_prod; i++) {
		uint32_t c = g->prod_cat[i];

		fprintf(f, "product:%llu\tproduct.category\t%s\n",
		    (unsigned long long)i, cats[c]);
		fprintf(f, "product:%llu\tproduct.price\t%.2f\n",
		    (unsigned long long)i, exp(4 + 0.1 * c +
		    kg_rng_normal(&g->rng)));
		fprintf(f, "product:%llu\tproduct.tags\t%s,%s\n",
		    (unsigned long long)i, cats[c],
		    kinds[(c / CATS_PER_KIND) % N_KINDS]);
		fprintf(f, "product:%llu\tproduct.description\t%s %s for %s "
		    "teams\n", (unsigned long long)i, prod_token(g,
		    (uint32_t)i), cats[c], kinds[(c / CATS_PER_KIND) % N_KINDS]);
	}
	for (i = 0; i < g->n_docs; i++) {
		uint32_t d = pick(g, g->n_dept), k = g->dept_kind[d];

		fprintf(f, "document:%llu\tdocument.created\t",
		    (unsigned long long)i);
		put_date(g, f, 2000, 2025, "iso");
		fprintf(f, "T%02u:%02u:00Z\n", pick(g, 24), pick(g, 60));
		fprintf(f, "document:%llu\tdocument.body\t%s %s on",
		    (unsigned long long)i, kinds[k],
		    filler[pick(g, KG_ARRAY_SIZE(filler))]);
		for (j = 0; j < 2; j++) {
			uint32_t p = g->dept_pool[d * POOL + pick(g, POOL)];

			fprintf(f, " %s %s", prod_token(g, p),
			    cats[g->prod_cat[p]]);
		}
		fprintf(f, " %s\n", filler[pick(g, KG_ARRAY_SIZE(filler))]);
	}
}

static const char schema_text[] =
"{\n"
"  \"description\": \"kg_gen_enterprise attributes\",\n"
"  \"tables\": [\n"
"    { \"path\": \"people.csv\", \"form\": \"wide\", \"header\": true },\n"
"    { \"path\": \"attrs.tsv\", \"form\": \"long\" }\n"
"  ],\n"
"  \"attributes\": {\n"
"    \"person.department\": { \"kind\": \"categorical\" },\n"
"    \"person.salary\": { \"kind\": \"numeric\", \"strategy\": \"quantile\", \"n_bins\": 8 },\n"
"    \"person.hired\": { \"kind\": \"date\", \"n_bins\": 6 },\n"
"    \"person.skills\": { \"kind\": \"multi_label\", \"separator\": \";\" },\n"
"    \"person.bio\": { \"kind\": \"text\", \"dim\": 16 },\n"
"    \"company.industry\": { \"kind\": \"categorical\" },\n"
"    \"company.revenue\": { \"kind\": \"numeric\", \"strategy\": \"quantile\", \"n_bins\": 5 },\n"
"    \"company.founded\": { \"kind\": \"date\", \"format\": \"%d/%m/%Y\", \"strategy\": \"uniform\", \"n_bins\": 5 },\n"
"    \"location.country\": { \"kind\": \"categorical\" },\n"
"    \"location.population\": { \"kind\": \"numeric\", \"n_bins\": 4 },\n"
"    \"product.category\": { \"kind\": \"categorical\" },\n"
"    \"product.price\": { \"kind\": \"numeric\", \"strategy\": \"uniform\", \"n_bins\": 6 },\n"
"    \"product.tags\": { \"kind\": \"multi_label\" },\n"
"    \"product.description\": { \"kind\": \"text\", \"dim\": 8 },\n"
"    \"document.created\": { \"kind\": \"date\", \"n_bins\": 6 },\n"
"    \"document.body\": { \"kind\": \"text\", \"dim\": 16 }\n"
"  }\n"
"}\n";

static FILE *
open_out(const struct kg_outdir *od, const char *name)
{
	char *path = kg_outdir_file(od, name);
	FILE *f = fopen(path, "w");

	if (f == NULL)
		kg_error_errno("cannot create '%s'", path);
	free(path);
	return f;
}

static int
close_out(FILE *f, const char *name)
{
	if (ferror(f) | fclose(f)) {
		kg_error_errno("write error on '%s'", name);
		return -1;
	}
	return 0;
}

static void
usage(FILE *f)
{
	fprintf(f, "usage: kg_gen_enterprise -o dir [-n nodes] [-s seed] "
	    "[-1f]\n"
	    "  -o, --output dir   output directory\n"
	    "  -n, --nodes n      number of nodes (default 2000; the Ray "
	    "paper's graph:\n"
	    "                     2800000, about 23 million edges)\n"
	    "  -s, --seed n       random seed (default 1)\n"
	    "  -1, --one-file     all triples in triples.tsv (no split)\n"
	    "  -f, --force        replace an existing output\n");
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "nodes", required_argument, NULL, 'n' },
		{ "seed", required_argument, NULL, 's' },
		{ "force", no_argument, NULL, 'f' },
		{ "one-file", no_argument, NULL, '1' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static const char *const split_names[3] = { "train.tsv", "valid.tsv",
		"test.tsv" };
	struct kg_outdir od = KG_OUTDIR_INIT;
	struct gen g;
	const char *out = NULL;
	uint64_t nodes = 2000, seed = 1;
	FILE *f;
	int ch, force = 0, one = 0, i, rc = KG_EXIT_FAIL;

	kg_setprogname(argv[0]);
	while ((ch = getopt_long(argc, argv, "o:n:s:f1h", longopts, NULL)) !=
	    -1) {
		switch (ch) {
		case 'o': out = optarg; break;
		case 'n':
			if (kg_parse_u64("--nodes", optarg, 200, 1000000000,
			    &nodes) < 0)
				return KG_EXIT_USAGE;
			break;
		case 's':
			if (kg_parse_u64("--seed", optarg, 0, UINT64_MAX,
			    &seed) < 0)
				return KG_EXIT_USAGE;
			break;
		case 'f': force = 1; break;
		case '1': one = 1; break;
		case 'h': usage(stdout); return KG_EXIT_OK;
		default: usage(stderr); return KG_EXIT_USAGE;
		}
	}
	if (out == NULL || optind != argc) {
		usage(stderr);
		return KG_EXIT_USAGE;
	}
	memset(&g, 0, sizeof(g));
	kg_rng_seed(&g.rng, seed, 0);
	if (kg_outdir_begin(&od, out, force) < 0)
		return KG_EXIT_FAIL;
	build(&g, nodes);
	/* With one file the split is still drawn (the same graph), but
	 * every edge goes to triples.tsv. */
	for (i = 0; i < (one ? 1 : 3); i++)
		if ((g.split[i] = open_out(&od, one ? "triples.tsv" :
		    split_names[i])) == NULL)
			goto out;
	if (one)
		g.split[1] = g.split[2] = g.split[0];
	write_edges(&g);
	for (i = 0; i < (one ? 1 : 3); i++) {
		FILE *s = g.split[i];

		g.split[i] = NULL;
		if (close_out(s, one ? "triples.tsv" : split_names[i]) < 0)
			goto out;
	}
	g.split[1] = g.split[2] = NULL;
	if ((f = open_out(&od, "types.tsv")) == NULL)
		goto out;
	write_types(&g, f);
	if (close_out(f, "types.tsv") < 0 ||
	    (f = open_out(&od, "people.csv")) == NULL)
		goto out;
	write_people(&g, f);
	if (close_out(f, "people.csv") < 0 ||
	    (f = open_out(&od, "attrs.tsv")) == NULL)
		goto out;
	write_long(&g, f);
	if (close_out(f, "attrs.tsv") < 0 ||
	    (f = open_out(&od, "schema.json")) == NULL)
		goto out;
	fputs(schema_text, f);
	if (close_out(f, "schema.json") < 0 || kg_outdir_commit(&od) < 0)
		goto out;
	fprintf(stderr, "kg_gen_enterprise: %llu nodes (%llu companies, "
	    "%llu locations, %llu products, %llu people, %llu documents), "
	    "%llu edges (train %llu, valid %llu, test %llu)\n",
	    (unsigned long long)nodes, (unsigned long long)g.n_comp,
	    (unsigned long long)g.n_loc, (unsigned long long)g.n_prod,
	    (unsigned long long)g.n_people, (unsigned long long)g.n_docs,
	    (unsigned long long)(g.n_edges[0] + g.n_edges[1] + g.n_edges[2]),
	    (unsigned long long)g.n_edges[0], (unsigned long long)g.n_edges[1],
	    (unsigned long long)g.n_edges[2]);
	rc = KG_EXIT_OK;
out:
	for (i = 0; i < (one ? 1 : 3); i++)
		if (g.split[i] != NULL)
			fclose(g.split[i]);
	kg_outdir_abort(&od);
	gen_free(&g);
	return rc;
}
