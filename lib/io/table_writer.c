#include "io/table_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/util.h"
#include "io/npy.h"

/* Create path with the header of shape and room for its data. */
static int
create_file(struct kg_table_writer *w, int k, int ndim,
    const uint64_t *shape, uint64_t row_floats)
{
	char hdr[1024];
	size_t hlen = kg_npy_header(hdr, sizeof(hdr), KG_DT_F4, ndim, shape);
	uint64_t bytes = shape[0] * row_floats * sizeof(float);

	if (hlen == 0) {
		kg_error("%s: shape too large", w->path[k]);
		return -1;
	}
	w->fd[k] = open(w->path[k], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0644);
	if (w->fd[k] < 0) {
		kg_error_errno("cannot create '%s'", w->path[k]);
		return -1;
	}
	w->data_off[k] = hlen;
	if (kg_write_full(w->fd[k], hdr, hlen, 0) < 0 ||
	    ftruncate(w->fd[k], (off_t)(hlen + bytes)) < 0) {
		kg_error_errno("cannot write '%s'", w->path[k]);
		return -1;
	}
	return 0;
}

int
kg_table_writer_open(struct kg_table_writer *w, const char *rows_path,
    const char *state_path, uint64_t n_rows, uint32_t dim,
    uint32_t state_width, const int32_t *order)
{
	uint64_t es[2] = { n_rows, dim }, ss[2] = { n_rows, state_width };

	*w = (struct kg_table_writer)KG_TABLE_WRITER_INIT;
	w->n_rows = n_rows;
	w->dim = dim;
	w->state_width = state_width;
	w->order = order;
	w->path[0] = kg_xstrdup(rows_path);
	if (state_path != NULL)
		w->path[1] = kg_xstrdup(state_path);
	if (create_file(w, 0, 2, es, dim) < 0 || (state_path != NULL &&
	    create_file(w, 1, state_width == 1 ? 1 : 2, ss,
	    state_width) < 0)) {
		kg_table_writer_abort(w);
		return -1;
	}
	return 0;
}

/* Write n rows of width floats, table rows [first, first + n), into file
 * k: one pwrite per run of rows that stay adjacent in the file. */
static int
put_rows(struct kg_table_writer *w, int k, uint64_t first, uint64_t n,
    const float *x, uint32_t width)
{
	size_t row = (size_t)width * sizeof(float);
	uint64_t i = 0;

	while (i < n) {
		uint64_t at = w->order ? (uint64_t)w->order[first + i] :
		    first + i, run = 1;

		if (w->order == NULL)
			run = n;
		else
			while (i + run < n && (uint64_t)w->order[first + i +
			    run] == at + run)
				run++;
		if (kg_write_full(w->fd[k], x + i * width, run * row,
		    (int64_t)(w->data_off[k] + at * row)) < 0) {
			kg_error_errno("cannot write '%s'", w->path[k]);
			return -1;
		}
		i += run;
	}
	return 0;
}

int
kg_table_writer_put(struct kg_table_writer *w, uint64_t first, uint64_t n,
    const float *rows, const float *state)
{
	if (first > w->n_rows || n > w->n_rows - first) {
		kg_error("%s: rows %llu to %llu are outside the table of %llu",
		    w->path[0], (unsigned long long)first,
		    (unsigned long long)(first + n),
		    (unsigned long long)w->n_rows);
		return -1;
	}
	if (put_rows(w, 0, first, n, rows, w->dim) < 0 ||
	    (w->path[1] != NULL && put_rows(w, 1, first, n, state,
	    w->state_width) < 0))
		return -1;
	w->put += n;
	return 0;
}

int
kg_table_writer_put_at(struct kg_table_writer *w, uint64_t at, uint64_t n,
    const float *rows, const float *state)
{
	const int32_t *order = w->order;
	int rc;

	/* Without the order, file rows are table rows. */
	w->order = NULL;
	rc = kg_table_writer_put(w, at, n, rows, state);
	w->order = order;
	return rc;
}

int
kg_table_writer_close(struct kg_table_writer *w)
{
	int k, rc = 0;

	if (w->put != w->n_rows) {
		kg_error("%s: %llu of %llu rows were written", w->path[0],
		    (unsigned long long)w->put, (unsigned long long)w->n_rows);
		kg_table_writer_abort(w);
		return -1;
	}
	for (k = 0; k < 2; k++) {
		if (w->fd[k] < 0)
			continue;
		if ((fsync(w->fd[k]) != 0 || close(w->fd[k]) != 0) && rc == 0) {
			kg_error_errno("cannot write '%s'", w->path[k]);
			rc = -1;
		}
		w->fd[k] = -1;
	}
	if (rc < 0) {
		kg_table_writer_abort(w);
		return -1;
	}
	free(w->path[0]);
	free(w->path[1]);
	*w = (struct kg_table_writer)KG_TABLE_WRITER_INIT;
	return 0;
}

void
kg_table_writer_abort(struct kg_table_writer *w)
{
	int k;

	for (k = 0; k < 2; k++) {
		if (w->fd[k] >= 0)
			close(w->fd[k]);
		if (w->path[k] != NULL)
			unlink(w->path[k]);
		free(w->path[k]);
	}
	*w = (struct kg_table_writer)KG_TABLE_WRITER_INIT;
}
