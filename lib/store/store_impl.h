/*
 * store_impl: what a store implementation provides (lib/store only).
 *
 * An implementation embeds struct kg_store first in its own struct and
 * fills ops.  store.c checks arguments (partition numbers, ranges) and
 * dispatches; it also splits a view that spans partitions into one
 * part_view per partition.  Optional operations may be NULL.
 */
#ifndef KG_STORE_IMPL_H
#define KG_STORE_IMPL_H

#include "store/store.h"

/* Where partition p's snapshot rows are (lib/store/store_snap.c). */
enum { SNAP_NONE, SNAP_RAM, SNAP_FRESH, SNAP_FILE };

struct kg_store_snap_part {
	uint8_t kind;		/* SNAP_* */
	float *rows;		/* SNAP_RAM: rows x dim floats */
	int fd;			/* SNAP_FILE: an .npy of [rows, dim] */
	uint64_t off;		/* where its data starts */
	uint8_t half;		/* SNAP_FILE: binary16 rows, no header
				 * (kg_store_open_buffer_as) */
};

struct kg_store_snap {
	struct kg_store_snap_part *parts;	/* n_parts */
};

/* Drop the snapshot (kg_store_free does). */
void kg_store_snap_free(struct kg_store *st);

struct kg_store_ops {
	const struct kg_store_part *(*acquire)(struct kg_store *, uint32_t p);
	void (*release)(struct kg_store *, uint32_t p, int dirty);
	void (*prefetch)(struct kg_store *, uint32_t p);		/* opt. */
	float *(*take)(struct kg_store *, uint32_t p);		/* opt. */
	int (*put)(struct kg_store *, uint32_t p, float *buf);	/* opt. */
	/* Make room for "bytes" more of buffers (evict); opt. */
	int (*reserve)(struct kg_store *, size_t bytes);
	int (*set_source)(struct kg_store *, uint32_t p, const char *rows,
	    const char *state);					/* opt. */
	/* Rows [first, first + n) of partition p (global IDs, all inside
	 * p): a pointer into the store, or a copy in scratch; thread-safe
	 * as kg_store_view.  NULL after kg_error(). */
	int (*resident)(const struct kg_store *, uint32_t p);
	const float *(*part_view)(struct kg_store *, uint32_t p,
	    uint64_t first, uint64_t n, float *scratch);
	void (*free)(struct kg_store *);
	/* Write every changed partition home and wait; opt. */
	int (*flush)(struct kg_store *);
	/* kg_store_save_part done better than by a copy (a link); opt. */
	int (*save_part)(struct kg_store *, uint32_t p, const char *rows,
	    const char *state);
	/* Rows [first, first + n) of partition p (global IDs) and their
	 * state copied into rows and state, wherever p is, without making
	 * it resident; main thread.  Lets kg_store_write stream the table
	 * in its original order.  opt. */
	int (*read)(struct kg_store *, uint32_t p, uint64_t first,
	    uint64_t n, float *rows, float *state);
	/* kg_store_snapshot without a copy in memory: record in sp[p],
	 * for every p, where the rows are now (SNAP_FRESH, or SNAP_FILE
	 * with a file descriptor of its own); opt. (without it the rows
	 * are copied into memory). */
	int (*snapshot)(struct kg_store *, struct kg_store_snap_part *sp);
};

/* Fill the common fields from a layout (checked); 0 or -1. */
int kg_store_base_init(struct kg_store *st, const struct kg_store_ops *ops,
    const struct kg_store_layout *l, const struct kg_store_init *init);
void kg_store_base_release(struct kg_store *st);

/* Draw rows [skip, skip + n) of partition p's fresh rows (rows of dim
 * floats) into dst, as the first use would.  Each thread keeps the place
 * of its last read of each partition, so that reading partitions' rows
 * in order, interleaved or not, draws each value once; a read before
 * that place starts the stream again and steps over the values before
 * skip without computing them. */
void kg_store_init_rows(const struct kg_store *st, uint32_t p, uint64_t skip,
    uint64_t n, float *dst);

/* kg_store_save_part by acquiring p and writing two new files. */
int kg_store_save_part_copy(struct kg_store *st, uint32_t p,
    const char *rows_path, const char *state_path);

/* kg_store_write in the table's original order (store_write.c): 0, -1
 * after kg_error(), or 1 when the store or the order does not allow it. */
int kg_store_write_ordered(struct kg_store *st, struct kg_table_writer *w);

/* Buffers of partitions, counted in st->stats.bytes_held. */
float *kg_store_buf_new(struct kg_store *st, uint32_t p);
void kg_store_buf_del(struct kg_store *st, uint32_t p, float *buf);

/*
 * An .npy file of float32 [rows] or [rows, width] kept open to read a
 * partition's rows or state from: check its header against the shape
 * (width 1: either form), open it.  0 or -1 after kg_error().
 */
struct kg_store_src {
	char *path;
	int fd;
	uint64_t data_off;
};

int kg_store_src_open(struct kg_store_src *s, const char *path,
    uint64_t rows, uint32_t width);
/* Read rows [first, first + n) of width floats into dst; 0 or -1. */
int kg_store_src_read(struct kg_store_src *s, uint64_t first, uint64_t n,
    uint32_t width, float *dst);
void kg_store_src_close(struct kg_store_src *s);

/*
 * Rows [first, first + n) of dim values from the file fd whose data
 * starts at off, float32 or (half) binary16, into dst as float32 (a
 * binary16 run is read into the upper half of dst and widened in
 * place).  Thread-safe.  0, or -1 with errno set.
 */
int kg_store_pread_rows(int fd, uint64_t off, int half, uint64_t first,
    uint64_t n, uint32_t dim, float *dst);

#endif
