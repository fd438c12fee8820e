/*
 * table_writer: an entity table written piece by piece into its .npy
 * files, each row at its original position.
 *
 * entities.npy is float32 [n_rows, dim]; with a state file, its state is
 * float32 [n_rows] (state_width 1, as row-wise Adagrad keeps) or
 * [n_rows, state_width].  The files get their final size at open (the
 * header is kg_npy_write's, so a table written whole or in pieces is the
 * same bytes) and pieces are placed with pwrite, in any order: row i of
 * the table goes to row order[i] of the files (a kg-partition relabelling,
 * new ID to original ID), or to row i without an order.  This is how a
 * table too large for memory, or spread over MPI ranks, still ends as
 * one ordinary array.
 *
 * Close checks that every row was put exactly as often as there are rows
 * (each once), fsyncs and closes; on any error the files are removed.
 */
#ifndef KG_TABLE_WRITER_H
#define KG_TABLE_WRITER_H

#include <stdint.h>

struct kg_table_writer {
	char *path[2];		/* rows, state (NULL: no state file) */
	int fd[2];
	uint64_t data_off[2];
	uint64_t n_rows, put;
	uint32_t dim, state_width;
	const int32_t *order;	/* borrowed; NULL: identity */
};

#define KG_TABLE_WRITER_INIT { .fd = { -1, -1 } }

/*
 * Create rows_path (and state_path unless NULL) for n_rows rows.  order,
 * when not NULL, holds n_rows distinct positions below n_rows and must
 * outlive the writer.  0, or -1 after kg_error() with nothing left.
 */
int kg_table_writer_open(struct kg_table_writer *w, const char *rows_path,
    const char *state_path, uint64_t n_rows, uint32_t dim,
    uint32_t state_width, const int32_t *order);
/* Rows [first, first + n) of the table: n x dim floats at rows and, with
 * a state file, n x state_width at state.  0 or -1 after kg_error(). */
int kg_table_writer_put(struct kg_table_writer *w, uint64_t first,
    uint64_t n, const float *rows, const float *state);
/* Rows [at, at + n) of the FILES (original positions, the order not
 * applied): for a caller that assembles runs of the output itself
 * (lib/store's ordered streaming).  0 or -1 after kg_error(). */
int kg_table_writer_put_at(struct kg_table_writer *w, uint64_t at,
    uint64_t n, const float *rows, const float *state);
/* 0, or -1 after kg_error() with the files removed. */
int kg_table_writer_close(struct kg_table_writer *w);
/* Close and remove the files; safe on KG_TABLE_WRITER_INIT and twice. */
void kg_table_writer_abort(struct kg_table_writer *w);

#endif
