/*
 * Unit tests for lib/ingest: kg_ingest_run on seeded random split files,
 * read back with lib/dataset (the loader every later stage uses), against
 * a brute-force reference (linear-search dictionaries, quadratic
 * deduplication) for every combination of --unseen keep/drop and --dedup;
 * and the option checkers.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/dataset.h"
#include "app/ingest_run.h"
#include "test.h"
#include "core/util.h"

#define MAXN 2000

struct names {
	char s[MAXN][16];
	int n;
};

static int
name_id(struct names *nm, const char *s, int insert)
{
	int i;

	for (i = 0; i < nm->n; i++)
		if (strcmp(nm->s[i], s) == 0)
			return i;
	if (!insert)
		return -1;
	snprintf(nm->s[nm->n], sizeof(nm->s[0]), "%s", s);
	return nm->n++;
}

/* The triples of the three files, as names. */
static char text[3][MAXN][3][16];
static int ntext[3];

static void
make_files(char *paths[3])
{
	static const char *const split[3] = { "train", "valid", "test" };
	struct kg_rng rng;
	int s, i, k;

	kg_rng_seed(&rng, 5, 0);
	for (s = 0; s < 3; s++) {
		char name[32];
		FILE *f;

		snprintf(name, sizeof(name), "%s.tsv", split[s]);
		paths[s] = kg_path_join(t_tmpdir(), name);
		f = fopen(paths[s], "w");
		ntext[s] = s == 0 ? 600 : 120;
		for (i = 0; i < ntext[s]; i++) {
			/* Train draws from 60 entities, valid/test from 80,
			 * so some are unseen; 6 relations in train, 7 after.
			 * Few names, so duplicates are common. */
			uint64_t ne = s == 0 ? 60 : 80, nr = s == 0 ? 6 : 7;

			snprintf(text[s][i][0], 16, "e%02u",
			    (unsigned)kg_rng_below(&rng, ne));
			snprintf(text[s][i][1], 16, "r%u",
			    (unsigned)kg_rng_below(&rng, nr));
			snprintf(text[s][i][2], 16, "e%02u",
			    (unsigned)kg_rng_below(&rng, ne));
			for (k = 0; k < 3; k++)
				fprintf(f, "%s%c", text[s][i][k], k < 2 ?
				    '\t' : '\n');
		}
		fclose(f);
	}
}

/* Brute-force reference ingest; out[s] gets the ID triples. */
static void
reference(int drop, int dedup, struct names *ent, struct names *rel,
    int out[3][MAXN][3], int nout[3])
{
	static int kept[3 * MAXN][3];
	int nkept = 0, s, i, j, k, ntrain_e = 0, ntrain_r = 0;

	ent->n = rel->n = 0;
	for (s = 0; s < 3; s++) {
		nout[s] = 0;
		for (i = 0; i < ntext[s]; i++) {
			char (*t)[16] = text[s][i];
			int id[3], dup = 0;

			if (s > 0) {
				int h = name_id(ent, t[0], 0);
				int r = name_id(rel, t[1], 0);
				int tl = name_id(ent, t[2], 0);

				if (drop && (h < 0 || h >= ntrain_e || r < 0 ||
				    r >= ntrain_r || tl < 0 || tl >= ntrain_e))
					continue;
			}
			id[0] = name_id(ent, t[0], 1);
			id[1] = name_id(rel, t[1], 1);
			id[2] = name_id(ent, t[2], 1);
			for (j = 0; dedup && j < nkept && !dup; j++)
				dup = kept[j][0] == id[0] &&
				    kept[j][1] == id[1] && kept[j][2] == id[2];
			if (dup)
				continue;
			for (k = 0; k < 3; k++)
				kept[nkept][k] = out[s][nout[s]][k] = id[k];
			nkept++;
			nout[s]++;
		}
		if (s == 0) {
			ntrain_e = ent->n;
			ntrain_r = rel->n;
		}
	}
}

static void
t_against_reference(void)
{
	static int want[3][MAXN][3];
	struct names ent, rel;
	char *paths[3], **names;
	int nwant[3], drop, dedup, s, i, bad;
	uint64_t n;

	make_files(paths);
	for (drop = 0; drop < 2; drop++) {
		for (dedup = 0; dedup < 2; dedup++) {
			struct kg_ingest_opts o = KG_INGEST_OPTS_INIT;
			struct kg_dataset ds = KG_DATASET_INIT;
			char dir[64], *out;
			char *argv[] = { "t_ingest", NULL };

			snprintf(dir, sizeof(dir), "out_%d_%d", drop, dedup);
			out = kg_path_join(t_tmpdir(), dir);
			o.train = paths[0];
			o.valid = paths[1];
			o.test = paths[2];
			o.unseen = drop ? KG_UNSEEN_DROP : KG_UNSEEN_KEEP;
			o.dedup = dedup;
			o.output = out;
			o.argc = 1;
			o.argv = argv;
			T_CHECK(kg_ingest_run(&o) == 0);
			reference(drop, dedup, &ent, &rel, want, nwant);
			if (kg_dataset_load(&ds, out) != 0) {
				T_CHECKF(0, "cannot load %s: %s", out,
				    kg_error_last());
				free(out);
				continue;
			}
			T_CHECKF(ds.n_entities == (uint64_t)ent.n &&
			    ds.n_relations == (uint64_t)rel.n,
			    "drop %d dedup %d: %llu/%llu vs %d/%d", drop,
			    dedup, (unsigned long long)ds.n_entities,
			    (unsigned long long)ds.n_relations, ent.n, rel.n);
			for (s = 0, bad = 0; s < 3; s++) {
				const struct kg_triples *t = &ds.split[s];

				T_CHECKF(t->n == (uint64_t)nwant[s],
				    "split %d: %llu triples, want %d", s,
				    (unsigned long long)t->n, nwant[s]);
				for (i = 0; i < nwant[s] && (uint64_t)i < t->n;
				    i++)
					bad += t->hrt[3 * i] != want[s][i][0] ||
					    t->hrt[3 * i + 1] != want[s][i][1] ||
					    t->hrt[3 * i + 2] != want[s][i][2];
			}
			T_CHECKF(bad == 0, "drop %d dedup %d: %d triples differ",
			    drop, dedup, bad);
			if (kg_dataset_names(&ds, "entities.tsv", &names,
			    &n) == 0) {
				for (i = 0, bad = 0; i < ent.n && (uint64_t)i < n;
				    i++)
					bad += strcmp(names[i], ent.s[i]) != 0;
				T_CHECK(n == (uint64_t)ent.n && bad == 0);
				kg_names_free(names, n);
			} else
				T_CHECKF(0, "entities.tsv: %s", kg_error_last());
			kg_dataset_release(&ds);
			free(out);
		}
	}
	/* The case really has unseen names and duplicates to handle. */
	reference(1, 1, &ent, &rel, want, nwant);
	T_CHECK(nwant[1] < ntext[1] && nwant[0] < ntext[0]);
	for (s = 0; s < 3; s++)
		free(paths[s]);
}

static void
t_options(void)
{
	enum kg_unseen u;
	double ok[3] = { 0.8, 0.1, 0.1 }, sum[3] = { 0.8, 0.1, 0.2 };
	double zero[3] = { 0, 0.5, 0.5 }, neg[3] = { 1.2, -0.2, 0 };

	kg_error_mute(1);
	T_CHECK(kg_ingest_parse_unseen("drop", &u) == 0 &&
	    u == KG_UNSEEN_DROP);
	T_CHECK(kg_ingest_parse_unseen("Drop", &u) == -1);
	T_CHECK(kg_ingest_check_columns("thr") == 0);
	T_CHECK(kg_ingest_check_columns("hrtt") == -1);
	T_CHECK(kg_ingest_check_columns("hht") == -1);
	T_CHECK(kg_ingest_check_split(ok) == 0);
	T_CHECK(kg_ingest_check_split(sum) == -1);
	T_CHECK(strstr(kg_error_last(), "sum to 1.1") != NULL);
	T_CHECK(kg_ingest_check_split(zero) == -1);
	T_CHECK(kg_ingest_check_split(neg) == -1);
	kg_error_mute(0);
}

int
main(void)
{
	/* The manifest names the tool by its program name. */
	kg_setprogname("kg-ingest");
	T_RUN(t_against_reference);
	T_RUN(t_options);
	return T_DONE();
}
