/*
 * gen_triples: write a seeded, synthetic TSV triple file for benchmarks
 * and tests.
 *
 * usage: gen_triples -n triples -e entities -r relations [-s seed] [out]
 *
 * Entity names look like Freebase MIDs ("/m/0" and 16 hex digits of a
 * 64-bit bijective mix of the entity number, so they are unique and in no
 * useful order); relations are "/rel/<k>".  Triple i < entities has head
 * i, so every entity occurs; all other heads and every tail are drawn
 * with a skewed (power-law-like) degree distribution, u^3 scaled to the
 * entity count, and relations with u^2.  The same arguments always give
 * the same file.  Writes to "out" or stdout.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

static const char hexdig[] = "0123456789abcdef";

static char *
put_mid(char *p, uint64_t id)
{
	uint64_t x = id, v;
	int k;

	v = kg_splitmix64(&x);
	memcpy(p, "/m/0", 4);
	p += 4;
	for (k = 15; k >= 0; k--)
		*p++ = hexdig[(v >> (4 * k)) & 15];
	return p;
}

static char *
put_u64(char *p, uint64_t v)
{
	char tmp[24];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	while (n > 0)
		*p++ = tmp[--n];
	return p;
}

static void
usage(FILE *f)
{
	fprintf(f, "usage: gen_triples -n triples -e entities -r relations "
	    "[-s seed] [out]\n");
}

int
main(int argc, char *argv[])
{
	uint64_t n = 0, ne = 0, nr = 0, seed = 1, i;
	struct kg_rng rng;
	FILE *out = stdout;
	char *buf, *p;
	size_t cap = 1 << 20;
	int ch;

	kg_setprogname(argv[0]);
	while ((ch = getopt(argc, argv, "n:e:r:s:h")) != -1) {
		switch (ch) {
		case 'n':
			if (kg_parse_u64("-n", optarg, 1, UINT64_MAX, &n) < 0)
				return KG_EXIT_USAGE;
			break;
		case 'e':
			if (kg_parse_u64("-e", optarg, 1, 0xc0000000u, &ne) < 0)
				return KG_EXIT_USAGE;
			break;
		case 'r':
			if (kg_parse_u64("-r", optarg, 1, 0xc0000000u, &nr) < 0)
				return KG_EXIT_USAGE;
			break;
		case 's':
			if (kg_parse_u64("-s", optarg, 0, UINT64_MAX, &seed) <
			    0)
				return KG_EXIT_USAGE;
			break;
		case 'h':
			usage(stdout);
			return KG_EXIT_OK;
		default:
			usage(stderr);
			return KG_EXIT_USAGE;
		}
	}
	if (n == 0 || ne == 0 || nr == 0 || argc - optind > 1) {
		usage(stderr);
		return KG_EXIT_USAGE;
	}
	if (n < ne) {
		kg_error("-n must be at least -e (every entity occurs)");
		return KG_EXIT_USAGE;
	}
	if (optind < argc && (out = fopen(argv[optind], "w")) == NULL) {
		kg_error_errno("cannot create '%s'", argv[optind]);
		return KG_EXIT_FAIL;
	}
	kg_rng_seed(&rng, seed, 0);
	buf = kg_xmalloc(cap + 256);
	p = buf;
	for (i = 0; i < n; i++) {
		double u = kg_rng_uniform(&rng), w = kg_rng_uniform(&rng);
		double x = kg_rng_uniform(&rng);
		uint64_t h = i < ne ? i : (uint64_t)((double)ne * u * u * u);
		uint64_t t = (uint64_t)((double)ne * w * w * w);
		uint64_t r = (uint64_t)((double)nr * x * x);

		p = put_mid(p, h);
		*p++ = '\t';
		memcpy(p, "/rel/", 5);
		p = put_u64(p + 5, r);
		*p++ = '\t';
		p = put_mid(p, t);
		*p++ = '\n';
		if ((size_t)(p - buf) >= cap) {
			if (fwrite(buf, 1, (size_t)(p - buf), out) !=
			    (size_t)(p - buf))
				break;
			p = buf;
		}
	}
	if (p > buf)
		fwrite(buf, 1, (size_t)(p - buf), out);
	free(buf);
	if (ferror(out) || fclose(out) != 0) {
		kg_error_errno("write error");
		return KG_EXIT_FAIL;
	}
	return KG_EXIT_OK;
}
