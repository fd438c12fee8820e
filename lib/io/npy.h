/*
 * npy: NumPy .npy v1.0 arrays, the on-disk format of every kgpipe array.
 *
 * Written files are little-endian, C order, with the header padded so the
 * data starts at a multiple of 64 bytes; numpy.load reads them.  Reading
 * maps the file (mmap, read-only) after validating the magic, version,
 * header dict (descr, fortran_order, shape) and that the file size equals
 * header + product(shape) * itemsize.  Every malformed case is rejected
 * with a message naming the file.
 */
#ifndef KG_NPY_H
#define KG_NPY_H

#include <stddef.h>
#include <stdint.h>

#define KG_NPY_MAXDIM 8

enum kg_dtype {
	KG_DT_NONE = 0,
	KG_DT_I4,	/* <i4 int32 */
	KG_DT_I8,	/* <i8 int64 */
	KG_DT_U1,	/* |u1 uint8 */
	KG_DT_U4,	/* <u4 uint32 */
	KG_DT_U8,	/* <u8 uint64 */
	KG_DT_F4,	/* <f4 float32 */
	KG_DT_F8	/* <f8 float64 */
};

/* Size in bytes of one element; 0 for KG_DT_NONE. */
size_t kg_dtype_size(enum kg_dtype dt);
/* numpy descr string ("<i4", ...) or NULL. */
const char *kg_dtype_descr(enum kg_dtype dt);
/* Parse a descr string; KG_DT_NONE if unknown. */
enum kg_dtype kg_dtype_parse(const char *descr);

/*
 * An array read from disk (mapped) or owned in memory.  Zero-initialise
 * with KG_NPY_INIT.  data is 64-byte aligned when mapped.
 */
struct kg_npy {
	enum kg_dtype dtype;
	int ndim;
	uint64_t shape[KG_NPY_MAXDIM];
	uint64_t count;		/* product of shape (1 for ndim 0) */
	void *data;
	size_t nbytes;		/* count * itemsize */
	void *map;		/* the whole mapping, or NULL */
	size_t maplen;
	int owned;		/* data was malloc'ed (kg_npy_alloc) */
};

#define KG_NPY_INIT { .dtype = KG_DT_NONE }

/*
 * Map and validate "path".  The mapping is private read-only; do not write
 * through data.  Returns 0, or -1 after kg_error() with nothing to release.
 */
int kg_npy_read(const char *path, struct kg_npy *a);

/*
 * As kg_npy_read, but also require the given dtype and number of
 * dimensions (ndim < 0: any; dtype KG_DT_NONE: any).  The message names
 * what was expected and found.
 */
int kg_npy_read_expect(const char *path, enum kg_dtype dt, int ndim,
    struct kg_npy *a);

/* Read only the header: dtype, shape and data offset; 0 or -1. */
int kg_npy_read_header(const char *path, enum kg_dtype *dt, int *ndim,
    uint64_t shape[KG_NPY_MAXDIM], size_t *data_offset);

/* Allocate a zero-filled owned array (64-byte aligned). */
void kg_npy_alloc(struct kg_npy *a, enum kg_dtype dt, int ndim,
    const uint64_t *shape);

/* Unmap or free; leaves *a as KG_NPY_INIT.  Safe on KG_NPY_INIT. */
void kg_npy_release(struct kg_npy *a);

/*
 * Write an array in one call: header then data, with fsync.  Returns 0, or
 * -1 after kg_error() and with the file removed.
 */
int kg_npy_write(const char *path, enum kg_dtype dt, int ndim,
    const uint64_t *shape, const void *data);

/*
 * Streaming writer for arrays whose first dimension is known only at the
 * end (triples read from a stream, say): rows are appended, and close
 * rewrites the header with the final row count.  row_shape gives the
 * trailing dimensions (ndim - 1 of them).
 */
struct kg_npy_writer {
	int fd;
	char *path;
	enum kg_dtype dtype;
	int ndim;
	uint64_t shape[KG_NPY_MAXDIM];
	size_t row_bytes;
	uint64_t rows;
	char *buf;
	size_t buf_len, buf_cap;
	int failed;
};

int kg_npy_writer_open(struct kg_npy_writer *w, const char *path,
    enum kg_dtype dt, int ndim, const uint64_t *row_shape);
/* Append n rows; 0 or -1 (the error sticks until close). */
int kg_npy_writer_append(struct kg_npy_writer *w, const void *rows,
    uint64_t n);
/* Patch the header, fsync, close; 0 or -1 (file removed on error). */
int kg_npy_writer_close(struct kg_npy_writer *w);
/* Close and remove the file without finishing it. */
void kg_npy_writer_abort(struct kg_npy_writer *w);

/*
 * The header kg_npy_write puts before an array of this shape (magic to
 * final newline, data 64-byte aligned) into buf; returns its length, or
 * 0 for a bad dtype or ndim or when it does not fit cap (1024 bytes
 * always do).  For writers that place the data themselves.
 */
size_t kg_npy_header(char *buf, size_t cap, enum kg_dtype dt, int ndim,
    const uint64_t *shape);

#endif
