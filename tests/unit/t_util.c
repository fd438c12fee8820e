#include "core/util.h"
#include "test.h"

static void
t_parse_numbers(void)
{
	uint32_t u;
	uint64_t v;
	int64_t i;
	double d, list[4];
	size_t n;

	kg_error_mute(1);
	T_CHECK(kg_parse_u32("--dim", "400", 1, 1000, &u) == 0 && u == 400);
	T_CHECK(kg_parse_u32("--dim", "0", 1, 1000, &u) < 0);
	T_CHECK(strstr(kg_error_last(), "out of range") != NULL);
	T_CHECK(kg_parse_u32("--dim", "12x", 1, 1000, &u) < 0);
	T_CHECK(kg_parse_u32("--dim", "-3", 0, 1000, &u) < 0);
	T_CHECK(kg_parse_u32("--dim", "", 0, 1000, &u) < 0);
	T_CHECK(kg_parse_u64("--n", "18446744073709551616", 0, UINT64_MAX,
	    &v) < 0);
	T_CHECK(kg_parse_i64("--seed", "-5", -10, 10, &i) == 0 && i == -5);
	T_CHECK(kg_parse_double("--lr", "0.25", 0, 1, &d) == 0 && d == 0.25);
	T_CHECK(kg_parse_double("--lr", "nan", 0, 1, &d) < 0);
	T_CHECK(kg_parse_double("--lr", "2", 0, 1, &d) < 0);
	T_CHECK(kg_parse_double_list("--split", "0.8,0.1,0.1", 0, 1, list, 4,
	    &n) == 0 && n == 3 && list[1] == 0.1);
	T_CHECK(kg_parse_double_list("--split", "0.8,,0.1", 0, 1, list, 4,
	    &n) < 0);
	T_CHECK(kg_parse_double_list("--split", "1,1,1,1,1", 0, 1, list, 4,
	    &n) < 0);
	kg_error_mute(0);
}

static void
t_rng_streams(void)
{
	struct kg_rng a, b, c;
	int i, same = 0;
	double sum = 0;

	kg_rng_seed(&a, 42, 0);
	kg_rng_seed(&b, 42, 0);
	kg_rng_seed(&c, 42, 1);
	for (i = 0; i < 1000; i++) {
		uint64_t x = kg_rng_next(&a);
		T_CHECK(x == kg_rng_next(&b));
		same += x == kg_rng_next(&c);
		sum += kg_rng_uniform(&c);
		T_CHECK(kg_rng_below(&c, 7) < 7);
	}
	T_CHECK(same == 0);
	T_NEAR(sum / 1000, 0.5, 0.05);
}

static void
t_paths(void)
{
	char *p = kg_path_join("a/", "b");

	T_CHECK(strcmp(p, "a/b") == 0);
	free(p);
	p = kg_path_join("a", "b");
	T_CHECK(strcmp(p, "a/b") == 0);
	free(p);
}

int
main(void)
{
	T_RUN(t_parse_numbers);
	T_RUN(t_rng_streams);
	T_RUN(t_paths);
	return T_DONE();
}
