/* Which GPU a rank trains on: see gpus.h. */
#include "dist/gpus.h"

#include <mpi.h>
#include <string.h>

#include "compute/backend.h"
#include "core/util.h"

int
kg_gpu_list_parse(const char *what, const char *s, int *list, size_t *n)
{
	char item[32];
	const char *p = s, *comma;
	size_t len;
	uint32_t id;

	*n = 0;
	for (;;) {
		comma = strchr(p, ',');
		len = comma != NULL ? (size_t)(comma - p) : strlen(p);
		if (len == 0) {
			kg_error("%s: '%s' has an empty entry (expected GPU "
			    "numbers separated by commas, as 0,1)", what, s);
			return -1;
		}
		if (*n == KG_GPU_LIST_MAX) {
			kg_error("%s: more than %d GPUs listed", what,
			    KG_GPU_LIST_MAX);
			return -1;
		}
		if (len >= sizeof(item)) {
			kg_error("%s: '%.*s' is not a GPU number", what,
			    (int)len, p);
			return -1;
		}
		memcpy(item, p, len);
		item[len] = '\0';
		if (kg_parse_u32(what, item, 0, KG_DEVICE_MAX_INDEX, &id) < 0)
			return -1;
		list[(*n)++] = (int)id;
		if (comma == NULL)
			return 0;
		p = comma + 1;
	}
}

int
kg_gpu_pick(int lrank, int count, const int *list, size_t n, int pinned,
    int *dev)
{
	int id;

	if (count <= 0) {
		kg_error("no GPU is visible (local rank %d)", lrank);
		return -1;
	}
	if (n > 0)
		id = list[(size_t)lrank % n];
	else if (pinned >= 0)
		id = pinned;
	else
		id = lrank % count;
	if (id >= count) {
		kg_error("cuda:%d is not visible (%d GPU%s: cuda:0 to "
		    "cuda:%d)", id, count, count == 1 ? " is" : "s are",
		    count - 1);
		return -1;
	}
	*dev = id;
	return 0;
}

int
kg_gpu_count(void)
{
	return kg_backend_gpu_count();
}

void
kg_dist_local_rank(struct kg_dist *d, int *lrank, int *lsize)
{
	MPI_Comm node;

	*lrank = 0;
	*lsize = 1;
	if (!d->mpi)
		return;
	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, d->rank,
	    MPI_INFO_NULL, &node);
	MPI_Comm_rank(node, lrank);
	MPI_Comm_size(node, lsize);
	MPI_Comm_free(&node);
}
