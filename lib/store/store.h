/*
 * store: where the entity rows live (the embedding store).
 *
 * A store holds an entity table of n_rows rows of dim floats, each row
 * with state_width floats of optimiser state (row-wise Adagrad: 1), cut
 * into n_parts partitions of contiguous global IDs: partition p holds
 * [off[p], off[p + 1]) (kg-partition's layout; one partition is the whole
 * table).  Trainers and kg-eval reach entity rows only through a store;
 * whether a partition is in memory, on disk or on another MPI rank is the
 * store's business.
 *
 * Implementations:
 *   kg_store_open_mem   every partition in memory (the single-process
 *                       trainer, SSGD, tests);
 *   kg_store_open_park  a partition is in memory only while pinned; when
 *                       memory is wanted for another, an unpinned one is
 *                       parked in an unlinked temporary file, written
 *                       back only if it changed (PyTorch-BigGraph's swap,
 *                       the MPI bucket driver's way);
 *   kg_store_open_buffer  every partition on disk, at most "capacity"
 *                       of them in memory (Marius's partition buffer):
 *                       prefetch reads ahead and evicted partitions are
 *                       written back on an I/O thread of the store's own
 *   kg_store_open_rows  read-only, over rows in memory or an entities.npy
 *   kg_store_open_npy   mapped read-only (kg-eval)
 *   kg_store_open_npy_stream  read-only, entities.npy read a piece at a
 *                       time (kg-eval of a table larger than memory).
 *
 * A partition starts FRESH: its rows are drawn from the init rule the
 * first time they are needed (the stream (init.purpose, p), state zero), so
 * their values do not depend on when, or on which rank, that happens.
 * kg_store_set_source says they are in two .npy files instead (a
 * checkpoint being resumed).
 *
 *   acquire(p)  make p resident and pin it: the returned rows and state
 *               stay valid, at a fixed address, until the matching
 *               release.  Pins nest: a driver pins the partitions of a
 *               round and the trainer pins them again per bucket.  May
 *               block (on a read, or on a prefetch in flight).
 *   release(p, dirty)  drop one pin; dirty: the rows or state changed.
 *               The store, not the caller, decides when an unpinned
 *               partition leaves memory; it writes a dirty one back
 *               first, now or later (a buffered store may queue it).
 *   prefetch(p) a hint that p will be acquired soon.
 *   take(p)     hand p's buffer to the caller (to send it to another
 *               rank), reading it in first if needed: p must not be
 *               pinned, and is ABSENT here until put(p) (acquiring it
 *               is an error).  Free it with kg_store_buf_free.
 *   put(p, buf) adopt buf (from kg_store_buf_alloc, filled by the
 *               caller: a partition received) as p's rows and state;
 *               p must not be resident here.
 *   view(first, n, scratch)  rows [first, first + n) of the table
 *               (across partitions too), read-only: a pointer into the
 *               store when they are resident in one piece, else a copy
 *               in scratch (n x dim floats).  Rows of a partition that
 *               is not resident are read from disk or drawn from the
 *               init rule, without making it resident.
 *
 * A partition buffer is one allocation of rows x (dim + state_width)
 * floats, 64-byte aligned: the rows, then their state (so a partition
 * travels as one message).  For a writable store, the w of a pinned
 * partition is the start of its buffer.
 *
 * Threads: open, acquire, release, prefetch, take, put, set_source,
 * save_part and write from one thread at a time; view and read from any
 * number of threads at once while none of those runs.  The rows of a
 * pinned partition may be read and written by any thread (Hogwild).
 *
 * Errors: functions that can fail (I/O) return NULL or -1 after
 * kg_error(); the store is then still consistent and may be freed.
 */
#ifndef KG_STORE_H
#define KG_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "core/util.h"
#include "io/table_writer.h"

enum kg_init_kind { KG_INIT_UNIFORM, KG_INIT_NORMAL, KG_INIT_ZERO };

/* How fresh rows are drawn: partition p from the stream (purpose, p) of
 * the seed (core/rng.h), value i as scale * N(0, 1) or scale * U(-1, 1);
 * or every value +0 (KG_INIT_ZERO: a memory store leaves the pages of a
 * fresh partition untouched, so rows never written cost no memory, as
 * calloc's). */
struct kg_store_init {
	enum kg_init_kind kind;
	double scale;
	uint64_t seed;
	enum kg_stream purpose;
};

/* Fill w[0..n) from rng by the rule of kind and scale (also for tables
 * outside a store, such as relations). */
void kg_init_fill(enum kg_init_kind kind, double scale, struct kg_rng *rng,
    float *w, uint64_t n);

struct kg_store_layout {
	uint64_t n_rows;
	uint32_t dim;
	uint32_t state_width;	/* floats of optimiser state per row */
	uint32_t n_parts;
	const int64_t *off;	/* n_parts + 1 offsets; NULL when n_parts is 1 */
};

/* A pinned partition: rows [base, base + rows), dim floats each at w,
 * state_width floats each at state (NULL without state). */
struct kg_store_part {
	uint64_t base, rows;
	float *w;
	float *state;
};

/* Traffic and memory, for the manifest's figures. */
struct kg_store_stats {
	uint64_t bytes_held;		/* partition buffers in memory now */
	uint64_t bytes_held_max;
	uint64_t bytes_read;		/* from parking and sources */
	uint64_t bytes_written;		/* to parking */
	uint64_t evictions;
	uint64_t bytes_snapshot;	/* the snapshot's rows in memory */
};

struct kg_store_ops;
struct kg_store_snap;

/* Every field is read-only for callers. */
struct kg_store {
	const struct kg_store_ops *ops;
	uint64_t n_rows;
	uint32_t dim, state_width, n_parts;
	uint64_t *off;			/* n_parts + 1 */
	struct kg_store_init init;
	struct kg_store_stats stats;
	int read_only;
	struct kg_store_snap *snap;	/* kg_store_snapshot; NULL: none */
};

/*
 * Open a store for the layout (offsets copied; they must start at 0,
 * rise strictly and end at n_rows).  No rows are drawn or allocated yet.
 * open_park parks in an unlinked file created under tmpdir (NULL: $TMPDIR
 * or /tmp), so nothing stays on disk however the process ends.  NULL
 * after kg_error().
 */
struct kg_store *kg_store_open_mem(const struct kg_store_layout *l,
    const struct kg_store_init *init);
struct kg_store *kg_store_open_park(const struct kg_store_layout *l,
    const struct kg_store_init *init, const char *tmpdir);
/*
 * The partition buffer.  Partition files are made in dir (which must
 * exist) without names (O_TMPFILE where the filesystem has it, else
 * unlinked at once), so nothing stays on disk however the process ends;
 * each holds a partition as the two .npy files of a checkpoint, and a
 * write-back makes new ones, so a failed write (a full disk) never
 * damages the last good copy.  Memory: capacity + 1 buffers of the
 * largest partition (capacity at most P), the extra one for reading
 * ahead: a driver pins at most capacity partitions at once.  acquire
 * reads (or waits for the read ahead), an eviction writes a changed
 * partition back (the least recently used unpinned one that no prefetch
 * asked for), kg_store_flush writes every changed one and waits, and
 * kg_store_save_part links the current files into a checkpoint (a copy
 * when dir is on another filesystem).  The store is safe to call from
 * the one thread that drives it while its own thread does the I/O.
 */
struct kg_store *kg_store_open_buffer(const struct kg_store_layout *l,
    const struct kg_store_init *init, const char *dir, uint32_t capacity);
/*
 * The same with the rows' type on disk.  KG_DISK_F16: each partition
 * file keeps the rows as IEEE binary16 (half the bytes; the optimiser
 * state stays float32), widened on every read (acquire, view, read,
 * write, the snapshot), so callers see float32 as ever.  A write-back
 * rounds the partition's rows to nearest even in its frame too, so what
 * is in memory equals what is on disk: after kg_store_flush every row
 * is exactly a binary16 value.  A row value with |x| > 65504 or a NaN
 * fails the write-back, which reports "partition P: ..." (the next call
 * returns the error).  Such files are not .npy: kg_store_save_part and
 * kg_store_snapshot_save write float32 copies instead of links.
 */
enum kg_disk_dtype { KG_DISK_F32, KG_DISK_F16 };
struct kg_store *kg_store_open_buffer_as(const struct kg_store_layout *l,
    const struct kg_store_init *init, const char *dir, uint32_t capacity,
    enum kg_disk_dtype dtype);
/* Read-only, one partition, no state: n rows of dim floats at rows
 * (borrowed, must outlive the store), or the float32 [n, dim] array in
 * path, mapped.  NULL after kg_error(). */
struct kg_store *kg_store_open_rows(const float *rows, uint64_t n,
    uint32_t dim);
struct kg_store *kg_store_open_npy(const char *path);
/* The same table read with pread, a view at a time into the caller's
 * scratch (acquire fails: the table need not fit in memory). */
struct kg_store *kg_store_open_npy_stream(const char *path);
/* Free the store, its buffers and its parking; NULL is a no-op.  No
 * partition may be pinned. */
void kg_store_free(struct kg_store *st);

const struct kg_store_part *kg_store_acquire(struct kg_store *st,
    uint32_t p);
void kg_store_release(struct kg_store *st, uint32_t p, int dirty);
void kg_store_prefetch(struct kg_store *st, uint32_t p);
float *kg_store_take(struct kg_store *st, uint32_t p);
int kg_store_put(struct kg_store *st, uint32_t p, float *buf);
/* A buffer for partition p (counted in the stats); may first make room
 * by evicting.  NULL after kg_error(). */
float *kg_store_buf_alloc(struct kg_store *st, uint32_t p);
void kg_store_buf_free(struct kg_store *st, uint32_t p, float *buf);
/* Floats in partition p's buffer: rows x (dim + state_width). */
size_t kg_store_part_floats(const struct kg_store *st, uint32_t p);
/* 1 if partition p is in memory here now (acquiring it reads and draws
 * nothing), else 0; lets a caller order its work so that what is in
 * memory is used before the store makes room for what is not. */
int kg_store_resident(const struct kg_store *st, uint32_t p);
/* Rows in partition p. */
uint64_t kg_store_part_rows(const struct kg_store *st, uint32_t p);
/* The partition holding global ID id (< n_rows). */
uint32_t kg_store_part_of(const struct kg_store *st, uint64_t id);

const float *kg_store_view(struct kg_store *st, uint64_t first, uint64_t n,
    float *scratch);
/* Copy rows [first, first + n) into dst; 0 or -1. */
int kg_store_read(struct kg_store *st, uint64_t first, uint64_t n,
    float *dst);

/*
 * Partition p's rows are float32 [rows, dim] in rows_path and its state
 * float32 [rows] (state_width 1) or [rows, state_width] in state_path.
 * p must not be pinned; what the store held of p is dropped.  The shapes
 * are checked now; the data is read now or on first use (then errors
 * surface there).  0 or -1.
 */
int kg_store_set_source(struct kg_store *st, uint32_t p,
    const char *rows_path, const char *state_path);
/* Write every changed partition to disk and wait for the I/O in flight
 * (the buffer store; others have nothing to do).  0, or -1 after
 * kg_error() with the store's first I/O error (a full disk). */
int kg_store_flush(struct kg_store *st);
/* Write partition p as two .npy files of those shapes (for a
 * checkpoint); the partition must be present here.  0 or -1. */
int kg_store_save_part(struct kg_store *st, uint32_t p,
    const char *rows_path, const char *state_path);
/*
 * Partition p's buffer (kg_store_part_floats floats: the rows, then their
 * state, as kg_store_buf_alloc gives and a rank sends) written as the two
 * .npy files kg_store_save_part writes, or read back from them, their
 * dtypes and shapes checked (for a checkpoint that one rank writes and
 * reads for every rank, no filesystem being shared).  0, or -1 after
 * kg_error().
 */
int kg_store_buf_save(const struct kg_store *st, uint32_t p,
    const float *buf, const char *rows_path, const char *state_path);
int kg_store_buf_load(const struct kg_store *st, uint32_t p, float *buf,
    const char *rows_path, const char *state_path);

/*
 * Stream partition p, or every partition (kg_store_write), into a table
 * writer (lib/io/table_writer.h: entities.npy, and entity_state.npy when
 * it has one, rows at their original positions), one partition in
 * memory at a time.  A buffer store with the writer's order rising
 * inside each partition (kg-partition's relabelling) writes the files
 * front to back instead, a window of rows at a time gathered from every
 * partition's file (lib/store/store_write.c).  0 or -1.
 */
int kg_store_write_part(struct kg_store *st, uint32_t p,
    struct kg_table_writer *w);
int kg_store_write(struct kg_store *st, struct kg_table_writer *w);

/*
 * The snapshot: the rows (not the optimiser state) of every partition as
 * they were at one moment, kept by the store for an early-stopping run's
 * best epoch (lib/kge/epochs.h), so that the whole table need not fit in
 * memory twice.
 *
 *   kg_store_snapshot  keep the rows of every partition as they are now,
 *                      in place of the snapshot kept before.  The memory
 *                      and parking stores copy them into memory (counted
 *                      in stats.bytes_snapshot); the buffer store writes
 *                      its changed partitions home and keeps its current
 *                      partition files (a write-back makes new ones, so a
 *                      kept file never changes): no copy in memory, no
 *                      partition read.
 *   kg_store_restore   put the snapshot's rows back into every partition,
 *                      one partition in memory at a time; the state stays
 *                      as it is now.  The snapshot is kept.
 *   kg_store_snapshot_save  write partition p's snapshot rows as float32
 *                      [rows, dim] in path (a new file: a link of the
 *                      kept partition file where the filesystem allows).
 *   kg_store_snapshot_load  make the rows in path (checked against that
 *                      shape) partition p's snapshot rows (read into
 *                      memory, or kept open by the buffer store), as a
 *                      resumed run does with every partition; one not
 *                      loaded has no snapshot rows until kg_store_snapshot.
 *
 * No partition may be pinned, or taken (the rows must all be here).  0,
 * or -1 after kg_error() (restore and save without a snapshot too); a
 * failed snapshot leaves none.  From the thread that drives the store.
 */
int kg_store_snapshot(struct kg_store *st);
int kg_store_restore(struct kg_store *st);
int kg_store_snapshot_save(struct kg_store *st, uint32_t p, const char *path);
int kg_store_snapshot_load(struct kg_store *st, uint32_t p, const char *path);
/*
 * The same in memory, for a caller whose file holds more than the rows
 * (the GNN's best_params.npy): kg_store_snapshot_read copies rows
 * [first, first + n) of partition p's snapshot (local row numbers) into
 * dst; kg_store_snapshot_set makes p's rows[0 .. rows x dim) its
 * snapshot rows (copied into memory, whatever the store).  0, or -1
 * after kg_error().
 */
int kg_store_snapshot_read(struct kg_store *st, uint32_t p, uint64_t first,
    uint64_t n, float *dst);
int kg_store_snapshot_set(struct kg_store *st, uint32_t p, const float *rows);

#endif
