/*
 * Unit tests of lib/dist/gpus.h: the --gpus list parser and the choice
 * of a rank's GPU from its local rank, the GPUs visible and the list.
 */
#include <string.h>

#include "dist/gpus.h"
#include "core/util.h"
#include "test.h"

static int
pick(int lrank, int count, const int *list, size_t n, int pinned)
{
	int dev = -7;

	if (kg_gpu_pick(lrank, count, list, n, pinned, &dev) < 0)
		return -1;
	return dev;
}

static void
test_pick_round_robin(void)
{
	/* No list, no pinned GPU: local rank mod the count. */
	T_CHECK(pick(0, 2, NULL, 0, -1) == 0);
	T_CHECK(pick(1, 2, NULL, 0, -1) == 1);
	T_CHECK(pick(2, 2, NULL, 0, -1) == 0);
	T_CHECK(pick(3, 2, NULL, 0, -1) == 1);
	T_CHECK(pick(5, 4, NULL, 0, -1) == 1);
	T_CHECK(pick(0, 1, NULL, 0, -1) == 0);
	T_CHECK(pick(7, 1, NULL, 0, -1) == 0);
}

static void
test_pick_list(void)
{
	static const int l[] = { 3, 1 };

	/* A list is cycled over the local ranks. */
	T_CHECK(pick(0, 4, l, 2, -1) == 3);
	T_CHECK(pick(1, 4, l, 2, -1) == 1);
	T_CHECK(pick(2, 4, l, 2, -1) == 3);
	T_CHECK(pick(3, 4, l, 2, -1) == 1);
	/* and wins over a pinned GPU */
	T_CHECK(pick(1, 4, l, 2, 0) == 1);
	/* A pinned GPU serves every local rank. */
	T_CHECK(pick(0, 4, NULL, 0, 2) == 2);
	T_CHECK(pick(3, 4, NULL, 0, 2) == 2);
}

static void
test_pick_errors(void)
{
	static const int l[] = { 0, 2 };

	kg_error_mute(1);
	T_CHECK(pick(0, 0, NULL, 0, -1) == -1);
	T_CHECK(strcmp(kg_error_last(), "no GPU is visible (local rank 0)")
	    == 0);
	/* Rank 0 takes GPU 0, which is there; rank 1 takes GPU 2 of 2. */
	T_CHECK(pick(0, 2, l, 2, -1) == 0);
	T_CHECK(pick(1, 2, l, 2, -1) == -1);
	T_CHECK(strcmp(kg_error_last(), "cuda:2 is not visible (2 GPUs are: "
	    "cuda:0 to cuda:1)") == 0);
	T_CHECK(pick(0, 1, NULL, 0, 1) == -1);
	T_CHECK(strcmp(kg_error_last(), "cuda:1 is not visible (1 GPU is: "
	    "cuda:0 to cuda:0)") == 0);
	kg_error_mute(0);
}

static void
test_list_parse(void)
{
	int l[KG_GPU_LIST_MAX];
	size_t n = 99;

	T_CHECK(kg_gpu_list_parse("--gpus", "0", l, &n) == 0 && n == 1 &&
	    l[0] == 0);
	T_CHECK(kg_gpu_list_parse("--gpus", "2,0,1", l, &n) == 0 && n == 3 &&
	    l[0] == 2 && l[1] == 0 && l[2] == 1);
	T_CHECK(kg_gpu_list_parse("--gpus", "1,1", l, &n) == 0 && n == 2 &&
	    l[0] == 1 && l[1] == 1);
}

static void
test_list_errors(void)
{
	static const char *const bad[][2] = {
		{ "", "--gpus: '' has an empty entry" },
		{ "0,", "--gpus: '0,' has an empty entry" },
		{ ",1", "--gpus: ',1' has an empty entry" },
		{ "0,,1", "--gpus: '0,,1' has an empty entry" },
		{ "a", "--gpus: 'a' is not a non-negative integer" },
		{ "0,-1", "--gpus: '-1' is not a non-negative integer" },
		{ "1024", "--gpus: 1024 is out of range" },
		{ "0000000000000000000000000000000000000001",
		    "--gpus: '0000000000000000000000000000000000000001' is not "
		    "a GPU number" },
	};
	char many[4 * (KG_GPU_LIST_MAX + 1)];
	int l[KG_GPU_LIST_MAX];
	size_t n, i, k = 0;

	kg_error_mute(1);
	for (i = 0; i < KG_ARRAY_LEN(bad); i++) {
		T_CHECKF(kg_gpu_list_parse("--gpus", bad[i][0], l, &n) == -1,
		    "'%s' accepted", bad[i][0]);
		T_CHECKF(strncmp(kg_error_last(), bad[i][1],
		    strlen(bad[i][1])) == 0, "'%s': %s", bad[i][0],
		    kg_error_last());
	}
	/* The longest list, then one more. */
	for (i = 0; i < KG_GPU_LIST_MAX; i++)
		k += (size_t)snprintf(many + k, sizeof(many) - k, "%s1",
		    i ? "," : "");
	T_CHECK(kg_gpu_list_parse("--gpus", many, l, &n) == 0 &&
	    n == KG_GPU_LIST_MAX);
	snprintf(many + k, sizeof(many) - k, ",1");
	T_CHECK(kg_gpu_list_parse("--gpus", many, l, &n) == -1);
	T_CHECK(strcmp(kg_error_last(), "--gpus: more than 1024 GPUs listed")
	    == 0);
	kg_error_mute(0);
}

static void
test_local_rank_alone(void)
{
	struct kg_dist d = KG_DIST_INIT;
	int lr = -1, ls = -1;

	kg_dist_local_rank(&d, &lr, &ls);
	T_CHECK(lr == 0 && ls == 1);
}

int
main(void)
{
	T_RUN(test_pick_round_robin);
	T_RUN(test_pick_list);
	T_RUN(test_pick_errors);
	T_RUN(test_list_parse);
	T_RUN(test_list_errors);
	T_RUN(test_local_rank_alone);
	return T_DONE();
}
