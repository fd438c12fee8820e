/*
 * Unit tests for lib/dict: dense first-seen IDs against a sort-based
 * reference, growth to millions of names, forced hash collisions, NUL
 * rejection, and the memory used per entry from the dictionary's own
 * accounting.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/dict.h"
#include "test.h"
#include "core/util.h"

static void
t_basic(void)
{
	struct kg_dict d = KG_DICT_INIT;
	int added = -1;

	T_CHECK(kg_dict_find(&d, "a", 1) == -1);
	T_CHECK(kg_dict_intern(&d, "abc", 3, &added) == 0 && added == 1);
	T_CHECK(kg_dict_intern(&d, "ab", 2, &added) == 1 && added == 1);
	T_CHECK(kg_dict_intern(&d, "abcd", 4, &added) == 2 && added == 1);
	T_CHECK(kg_dict_intern(&d, "", 0, &added) == 3 && added == 1);
	T_CHECK(kg_dict_intern(&d, "abc", 3, &added) == 0 && added == 0);
	/* A key that is a prefix or an extension of a stored name. */
	T_CHECK(kg_dict_find(&d, "abcde", 5) == -1);
	T_CHECK(kg_dict_find(&d, "a", 1) == -1);
	T_CHECK(kg_dict_find(&d, "ab", 2) == 1);
	T_CHECK(kg_dict_find(&d, "", 0) == 3);
	/* Lookups take (pointer, length), not NUL-terminated strings. */
	T_CHECK(kg_dict_find(&d, "abcdef", 4) == 2);
	T_CHECK(kg_dict_size(&d) == 4);
	T_CHECK(strcmp(kg_dict_name(&d, 0), "abc") == 0);
	T_CHECK(strcmp(kg_dict_name(&d, 3), "") == 0);
	T_CHECK(kg_dict_name_bytes(&d) == 9);
	/* Non-ASCII bytes are ordinary bytes. */
	T_CHECK(kg_dict_intern(&d, "\xc3\xa9t\xc3\xa9", 5, NULL) == 4);
	T_CHECK(kg_dict_find(&d, "\xc3\xa9t\xc3\xa9", 5) == 4);
	kg_dict_release(&d);
	T_CHECK(kg_dict_size(&d) == 0 && kg_dict_find(&d, "abc", 3) == -1);
	/* Reusable after release. */
	T_CHECK(kg_dict_intern(&d, "x", 1, NULL) == 0);
	kg_dict_release(&d);
	kg_dict_release(&d);
}

static void
t_nul_rejected(void)
{
	struct kg_dict d = KG_DICT_INIT;
	int added = -1;

	kg_error_mute(1);
	T_CHECK(kg_dict_intern(&d, "a\0b", 3, &added) == -1 && added == 0);
	kg_error_mute(0);
	T_CHECK(strstr(kg_error_last(), "NUL") != NULL);
	T_CHECK(kg_dict_size(&d) == 0);
	T_CHECK(kg_dict_intern(&d, "a", 1, NULL) == 0);
	/* "a\0b" must not match the stored "a". */
	T_CHECK(kg_dict_find(&d, "a\0b", 3) == -1);
	kg_dict_release(&d);
}

/* Every name collides: same hash, same tag, one long probe chain, so only
 * the byte comparison tells names apart. */
static void
t_forced_collisions(void)
{
	struct kg_dict d = KG_DICT_INIT;
	char buf[32];
	uint32_t i;
	int len, bad = 0;

	for (i = 0; i < 2000; i++) {
		len = snprintf(buf, sizeof(buf), "n%u", i);
		if (kg_dict_intern_hashed(&d, buf, (size_t)len,
		    0x1234567800000000ULL, NULL) != i)
			bad++;
	}
	for (i = 0; i < 2000; i++) {
		len = snprintf(buf, sizeof(buf), "n%u", i);
		if (kg_dict_find_hashed(&d, buf, (size_t)len,
		    0x1234567800000000ULL) != i)
			bad++;
	}
	T_CHECK(bad == 0);
	T_CHECK(kg_dict_find_hashed(&d, "n2000", 5, 0x1234567800000000ULL) ==
	    -1);
	kg_dict_release(&d);
}

/* Names of every length from 0 to 40 sharing long prefixes: the word-wise
 * comparison must tell "aaaaaaaa" from "aaaaaaaaa"; and the staged lookup
 * API (candidate, record check) agrees with kg_dict_find. */
static void
t_lengths_and_stages(void)
{
	struct kg_dict d = KG_DICT_INIT;
	char buf[64];
	size_t len;
	int bad = 0;

	memset(buf, 'a', sizeof(buf));
	for (len = 0; len <= 40; len++)
		if (kg_dict_intern(&d, buf, len, NULL) != (int64_t)len)
			bad++;
	for (len = 0; len <= 40; len++) {
		uint64_t h = kg_dict_hash(buf, len);
		uint32_t ref = kg_dict_candidate(&d, h);

		if (kg_dict_find(&d, buf, len) != (int64_t)len ||
		    strlen(kg_dict_name(&d, (uint32_t)len)) != len)
			bad++;
		if (ref == 0 || kg_dict_record_id(&d, ref, buf, len) !=
		    (int64_t)len)
			bad++;
	}
	T_CHECKF(bad == 0, "%d wrong", bad);
	/* Absent: one byte more than the longest, or a different byte. */
	T_CHECK(kg_dict_find(&d, buf, 41) == -1);
	buf[20] = 'b';
	T_CHECK(kg_dict_find(&d, buf, 21) == -1 &&
	    kg_dict_find(&d, buf, 40) == -1);
	T_CHECK(kg_dict_find(&d, buf, 20) == 20);
	kg_dict_release(&d);
}

/* The longest name fits (and is found); one byte more is refused. */
static void
t_max_name(void)
{
	struct kg_dict d = KG_DICT_INIT;
	char *big = kg_xmalloc(KG_DICT_MAX_NAME + 1);

	memset(big, 'z', KG_DICT_MAX_NAME + 1);
	T_CHECK(kg_dict_intern(&d, "x", 1, NULL) == 0);
	T_CHECK(kg_dict_intern(&d, big, KG_DICT_MAX_NAME, NULL) == 1);
	T_CHECK(kg_dict_intern(&d, "y", 1, NULL) == 2);
	kg_error_mute(1);
	T_CHECK(kg_dict_intern(&d, big, KG_DICT_MAX_NAME + 1, NULL) == -1);
	kg_error_mute(0);
	T_CHECK(strstr(kg_error_last(), "longer than") != NULL);
	T_CHECK(kg_dict_find(&d, big, KG_DICT_MAX_NAME) == 1);
	T_CHECK(kg_dict_find(&d, "x", 1) == 0 && kg_dict_find(&d, "y", 1) == 2);
	T_CHECK(strlen(kg_dict_name(&d, 1)) == KG_DICT_MAX_NAME);
	kg_dict_release(&d);
	free(big);
}

struct ref {
	const char *s;
	uint32_t pos;
};

static int
ref_cmp(const void *a, const void *b)
{
	const struct ref *x = a, *y = b;
	int c = strcmp(x->s, y->s);

	if (c != 0)
		return c;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static int
u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Random short names with many repeats: the IDs must be the ranks of the
 * names' first positions, computed here by sorting (name, position).
 */
static void
t_against_reference(void)
{
	enum { N = 200000 };
	struct kg_dict d = KG_DICT_INIT;
	struct kg_rng rng;
	char **names = kg_xcalloc(N, sizeof(*names));
	struct ref *ref = kg_xcalloc(N, sizeof(*ref));
	uint32_t *first = kg_xcalloc(N, sizeof(*first));
	uint32_t *firsts = kg_xcalloc(N, sizeof(*firsts));
	int64_t *got = kg_xcalloc(N, sizeof(*got));
	uint32_t i, j, nfirst = 0, nuniq = 0;
	int bad = 0;

	kg_rng_seed(&rng, 42, 0);
	for (i = 0; i < N; i++) {
		size_t len = kg_rng_below(&rng, 6), k;

		names[i] = kg_xmalloc(len + 1);
		for (k = 0; k < len; k++)
			names[i][k] = (char)('a' + kg_rng_below(&rng, 4));
		names[i][len] = '\0';
		ref[i].s = names[i];
		ref[i].pos = i;
		got[i] = kg_dict_intern(&d, names[i], len, NULL);
	}
	/* first[i]: position of the first occurrence of names[i]. */
	qsort(ref, N, sizeof(*ref), ref_cmp);
	for (i = 0; i < N; i = j) {
		for (j = i; j < N && strcmp(ref[j].s, ref[i].s) == 0; j++)
			first[ref[j].pos] = ref[i].pos;
		firsts[nfirst++] = ref[i].pos;
		nuniq++;
	}
	qsort(firsts, nfirst, sizeof(*firsts), u32_cmp);
	T_CHECK(kg_dict_size(&d) == nuniq);
	for (i = 0; i < N; i++) {
		uint32_t *p = bsearch(&first[i], firsts, nfirst,
		    sizeof(*firsts), u32_cmp);

		if (p == NULL || got[i] != p - firsts ||
		    strcmp(kg_dict_name(&d, (uint32_t)got[i]), names[i]) != 0)
			bad++;
	}
	T_CHECKF(bad == 0, "%d names with a wrong ID", bad);
	for (i = 0; i < N; i++)
		free(names[i]);
	free(names);
	free(ref);
	free(first);
	free(firsts);
	free(got);
	kg_dict_release(&d);
}

/*
 * Growth to millions of names (Freebase-like "/m/0xxxxx"), lookups of all
 * of them and of absent ones, and bytes per entry beyond the name bytes
 * at several sizes, from kg_dict_bytes().
 */
static void
t_millions(void)
{
	enum { N = 2000000 };
	struct kg_dict d = KG_DICT_INIT;
	char buf[32];
	uint32_t i;
	int len, bad = 0;
	double worst = 0, per;

	for (i = 0; i < N; i++) {
		len = snprintf(buf, sizeof(buf), "/m/0%x", i * 2654435761u);
		if (kg_dict_intern(&d, buf, (size_t)len, NULL) != i)
			bad++;
		if (i + 1 >= 100000 && (i + 1) % 100000 == 0) {
			per = (double)(kg_dict_bytes(&d) -
			    kg_dict_name_bytes(&d)) / (double)(i + 1);
			if (per > worst)
				worst = per;
		}
	}
	T_CHECKF(bad == 0, "%d inserts gave an unexpected ID", bad);
	T_CHECK(kg_dict_size(&d) == N);
	for (i = 0; i < N; i++) {
		len = snprintf(buf, sizeof(buf), "/m/0%x", i * 2654435761u);
		if (kg_dict_find(&d, buf, (size_t)len) != i ||
		    strcmp(kg_dict_name(&d, i), buf) != 0)
			bad++;
		/* Same bytes with a different suffix: absent. */
		len = snprintf(buf, sizeof(buf), "/m/1%x", i * 2654435761u);
		if (kg_dict_find(&d, buf, (size_t)len) != -1)
			bad++;
	}
	T_CHECKF(bad == 0, "%d lookups wrong", bad);
	per = (double)(kg_dict_bytes(&d) - kg_dict_name_bytes(&d)) / N;
	printf("# %u names: %.1f bytes per entry beyond the name bytes "
	    "(worst over sizes 1e5..2e6: %.1f); table %llu slots\n",
	    (unsigned)N, per, worst, (unsigned long long)d.cap);
	T_CHECKF(worst <= 40.0, "worst overhead %.1f bytes per entry", worst);
	/* The accounting covers at least the table, the references and the
	 * records (ID, name, NUL). */
	T_CHECK(kg_dict_bytes(&d) >= d.cap * 8 + (size_t)N * 4 +
	    kg_dict_name_bytes(&d) + (size_t)N * 5);
	kg_dict_release(&d);
}

/* The name of id, whole, in buf (split or not). */
static const char *
whole_name(const struct kg_dict *d, uint32_t id, char *buf, size_t cap)
{
	const char *ns, *local;
	size_t n;

	local = kg_dict_name_parts(d, id, &ns, &n);
	snprintf(buf, cap, "%.*s%s", (int)n, ns, local);
	return buf;
}

/* The hash of a name: its own, or one shared by all (every lookup then
 * compares against every name on the probe path). */
static uint64_t
hash_of(const char *s, size_t n, int collide)
{
	return collide ? 0x1234567800000000ULL : kg_dict_hash(s, n);
}

/*
 * A dictionary that splits names into namespace and local part gives the
 * IDs and lookups of a plain one, for names that share namespaces, names
 * that are a namespace's prefix or extend it, names without a separator
 * and the same local part under two namespaces.
 */
static void
t_namespaces_small(int collide)
{
	static const char *const names[] = {
		"http://www.wikidata.org/entity/Q42",
		"http://www.wikidata.org/entity/Q1",
		"http://www.wikidata.org/prop/direct/P31",
		"http://www.wikidata.org/entity/",
		"http://www.wikidata.org/entity",
		"http://www.wikidata.org/entity/Q42/x",
		"http://example.org/ns#Q42",
		"http://example.org/ns#",
		"_:b0", "plain", "", "a:b", "urn:x:Q42",
		"http://www.wikidata.org/prop/direct/Q42",
		"http://www.wikidata.org/entitx/Q42",
		/* A namespace of the last one's length, after it. */
		"http://www.wikidata.org/entity/Q7",
	};
	enum { N = sizeof(names) / sizeof(names[0]) };
	struct kg_dict p = KG_DICT_INIT, d = KG_DICT_INIT;
	char buf[128], key[128];
	const char *ns, *local;
	size_t n, i, r;
	int added, same = 1, found = 1, absent = 1, parts = 1;

	kg_dict_split_names(&d);
	for (r = 0; r < 2; r++)
		for (i = 0; i < N; i++) {
			uint64_t h = hash_of(names[i], strlen(names[i]),
			    collide);
			int64_t a = kg_dict_intern_hashed(&p, names[i],
			    strlen(names[i]), h, NULL);
			int64_t b = kg_dict_intern_hashed(&d, names[i],
			    strlen(names[i]), h, &added);

			same &= a == b && a == (int64_t)i && added == (r == 0);
		}
	T_CHECK(same);
	T_CHECK(kg_dict_size(&d) == N);
	for (i = 0; i < N; i++) {
		n = strlen(names[i]);
		found &= kg_dict_find_hashed(&d, names[i], n, hash_of(names[i],
		    n, collide)) == (int64_t)i;
		parts &= strcmp(whole_name(&d, (uint32_t)i, buf, sizeof(buf)),
		    names[i]) == 0;
		/* One byte more, or the last byte or the first changed. */
		memcpy(key, names[i], n);
		key[n] = 'Z';
		absent &= kg_dict_find_hashed(&d, key, n + 1, hash_of(key,
		    n + 1, collide)) == -1;
		if (n > 0) {
			key[n - 1] ^= 1;
			absent &= kg_dict_find_hashed(&d, key, n, hash_of(key,
			    n, collide)) == -1;
			key[n - 1] ^= 1;
			key[0] ^= 4;
			absent &= kg_dict_find_hashed(&d, key, n, hash_of(key,
			    n, collide)) == -1;
		}
	}
	T_CHECK(found);
	T_CHECK(parts);
	T_CHECK(absent);
	/* Split where a name has a long enough namespace, whole otherwise. */
	local = kg_dict_name_parts(&d, 0, &ns, &n);
	T_CHECK(n == 31 && strcmp(local, "Q42") == 0);
	local = kg_dict_name_parts(&d, 8, &ns, &n);
	T_CHECK(n == 0 && strcmp(local, "_:b0") == 0);
	local = kg_dict_name_parts(&p, 0, &ns, &n);
	T_CHECK(n == 0 && strcmp(local, names[0]) == 0);
	T_CHECK(kg_dict_name_bytes(&d) == kg_dict_name_bytes(&p));
	kg_dict_release(&d);
	kg_dict_release(&p);
}

/* A million Wikidata IRIs: the same IDs as a plain dictionary, and at
 * least the namespace's bytes less a name. */
static void
t_namespaces(void)
{
	struct kg_dict p = KG_DICT_INIT, d = KG_DICT_INIT;
	char buf[128];
	size_t n, i;
	int same = 1, found = 1;

	t_namespaces_small(0);
	t_namespaces_small(1);
	kg_dict_split_names(&d);
	for (i = 0; i < 1000000 && same; i++) {
		n = (size_t)snprintf(buf, sizeof(buf),
		    "http://www.wikidata.org/entity/Q%zx", i * 2654435761u);
		same &= kg_dict_intern(&p, buf, n, NULL) ==
		    kg_dict_intern(&d, buf, n, NULL);
	}
	T_CHECK(same);
	for (i = 0; i < 1000000 && found; i += 997) {
		n = (size_t)snprintf(buf, sizeof(buf),
		    "http://www.wikidata.org/entity/Q%zx", i * 2654435761u);
		found &= kg_dict_find(&d, buf, n) == (int64_t)i;
	}
	T_CHECK(found);
	T_CHECK(kg_dict_bytes(&d) + (size_t)20 * 1000000 < kg_dict_bytes(&p));
	kg_dict_release(&d);
	kg_dict_release(&p);
}

int
main(void)
{
	kg_setprogname("t_dict");
	T_RUN(t_basic);
	T_RUN(t_nul_rejected);
	T_RUN(t_forced_collisions);
	T_RUN(t_lengths_and_stages);
	T_RUN(t_max_name);
	T_RUN(t_against_reference);
	T_RUN(t_millions);
	T_RUN(t_namespaces);
	return T_DONE();
}
