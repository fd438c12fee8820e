/*
 * dist: everything kgpipe sends between processes, through Open MPI only.
 *
 * One binary runs as a plain process or as one of N ranks under mpirun.
 * kg_dist_init() looks at the environment that mpirun gives its children
 * (OMPI_COMM_WORLD_SIZE, PMIX_RANK, PMI_RANK) and calls MPI_Init only
 * then, so a plain run never touches MPI.  Every other function here works
 * without MPI as the single rank 0 of 1, where collectives are copies (or
 * nothing), so one code path serves both and one rank under mpirun
 * computes bit for bit what the plain process computes.
 *
 * The rest of lib/ never includes mpi.h; it calls the functions below.
 * Errors: MPI's default handler aborts the whole job on a communication
 * failure (a dead peer included: mpirun then stops every rank), so these
 * functions do not return errors for that; kg_dist_abort() is how a rank
 * that hit an error of its own stops the others instead of leaving them
 * waiting in a collective.
 *
 * Byte counts: every payload byte this rank hands to MPI (point-to-point
 * sends and its contribution to collectives) is added to bytes_sent, and
 * every payload byte it receives to bytes_received, so benchmarks can
 * report traffic per epoch.
 *
 * Also here, without MPI: the bucket schedule of distributed shallow
 * training (PyTorch-BigGraph style), the deterministic merge of sparse row
 * gradients for synchronous data-parallel SGD, and the test hook that
 * kills a rank.
 */
#ifndef KG_DIST_H
#define KG_DIST_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct kg_dist {
	int mpi;		/* MPI_Init was called */
	int rank, size;
	uint64_t bytes_sent;
	uint64_t bytes_received;
	uint64_t messages;	/* point-to-point messages sent */
	double comm_seconds;	/* time spent inside communication calls */
	/* Work buffers of the collectives, grown and kept, so that a
	 * training step's exchanges allocate nothing once warmed up. */
	struct kg_dist_buf {
		void *p;
		size_t cap;
	} buf[2];
};

#define KG_DIST_INIT { .size = 1 }

/* 1 when the environment says this process was started by mpirun. */
int kg_dist_launched(void);

/* The job's rank count as mpirun's environment gives it before MPI_Init
 * (OMPI_COMM_WORLD_SIZE, PMI_SIZE); 1 when it says none. */
int kg_dist_launched_size(void);

/*
 * Join the MPI job when launched by mpirun (MPI_Init_thread, funneled),
 * else set d to rank 0 of 1.  0, or -1 after kg_error().
 */
int kg_dist_init(struct kg_dist *d, int *argc, char ***argv);

/* Leave the job (MPI_Finalize when joined); d becomes rank 0 of 1. */
void kg_dist_finalize(struct kg_dist *d);

/*
 * Stop every rank with exit status code: MPI_Abort when size > 1, else
 * nothing (the caller returns its code as usual).  The caller has printed
 * its message already.
 */
void kg_dist_abort(const struct kg_dist *d, int code);

/*
 * Where a run stands, for a signal that ends it: under mpirun with more
 * than one rank, rank 0 keeps ready (lib/io/fatal.h's note) the line
 *
 *   kg-train: rank 0 (host H) of N ended by a signal during epoch E: Open
 *   MPI stops every rank so when a rank or its host is lost, and its
 *   report names it; the last checkpoint is 'DIR', after epoch K
 *
 * ("no checkpoint was written" when ckpt is NULL), printed if a signal
 * ends it during epoch E.  Open MPI 4 (without ULFM) ends the surviving
 * ranks of a job that lost a rank or a host with SIGTERM before any MPI
 * call returns an error, even with MPI_ERRORS_RETURN, so this line is
 * all that kgpipe can say then; which rank was lost is in Open MPI's
 * report.  epoch 0 removes the line (the epochs are over).  Other ranks,
 * and one rank, do nothing.
 */
void kg_dist_note_epoch(const struct kg_dist *d, uint32_t epoch,
    const char *ckpt, uint32_t ckpt_epoch);

/*
 * Test hook: when KG_TEST_DIE_RANK equals this rank and the job has more
 * than one rank and "when" equals KG_TEST_DIE_AT (default 1), print a
 * message and _exit(1), as a crashed node would.
 */
void kg_dist_test_hook(const struct kg_dist *d, uint64_t when);

void kg_dist_barrier(struct kg_dist *d);

/* In-place sums across ranks (identical results on every rank). */
void kg_dist_sum_u64(struct kg_dist *d, uint64_t *x, size_t n);
void kg_dist_sum_f64(struct kg_dist *d, double *x, size_t n);

/*
 * The communication counters of every rank, gathered on every rank
 * (collective): out[3 * size] gets rank r's bytes sent at out[r], bytes
 * received at out[size + r] and seconds inside communication calls at
 * out[2 * size + r], counted since kg_dist_init.
 */
void kg_dist_comm_table(struct kg_dist *d, double *out);
/* The same as a manifest's figures (collective; a new object on every
 * rank): bytes_sent_per_rank, bytes_received_per_rank and
 * comm_seconds_per_rank. */
json_t *kg_dist_comm_json(struct kg_dist *d);
void kg_dist_sum_f32(struct kg_dist *d, float *x, size_t n);
/* In-place maximum across ranks. */
void kg_dist_max_u64(struct kg_dist *d, uint64_t *x, size_t n);

/*
 * Replace x (n floats) by its mean over the ranks, summed in double so the
 * result does not depend on the reduction order more than float rounding
 * of the final division.  No-op with one rank.
 */
void kg_dist_average_f32(struct kg_dist *d, float *x, size_t n);

/*
 * Every rank's bytes of mine, concatenated in rank order into all (size x
 * bytes; one rank: a copy).  bytes must be the same on every rank.
 */
void kg_dist_allgather(struct kg_dist *d, const void *mine, size_t bytes,
    void *all);

/*
 * x holds size blocks of n floats, block k meant for rank k; out (n
 * floats) gets the sum over the ranks of their block for this rank
 * (MPI_Reduce_scatter_block; one rank: a copy).  n must be the same on
 * every rank and x must not overlap out.
 */
void kg_dist_reduce_scatter_f32(struct kg_dist *d, const float *x,
    size_t n, float *out);

/* Broadcast bytes from root. */
void kg_dist_bcast(struct kg_dist *d, void *buf, size_t bytes, int root);

/*
 * Point-to-point transfers, posted together and completed together
 * (MPI_Isend/MPI_Irecv then MPI_Waitall), so a set of exchanges between
 * any ranks cannot deadlock.  Messages larger than 1 GiB are cut into
 * pieces with the same tag (MPI keeps their order).  A transfer to or from
 * this rank itself is a memcpy matched by tag.
 */
struct kg_dist_xfer {
	void *buf;
	size_t bytes;
	int peer;
	int tag;		/* 0 .. 2^20 */
	int send;		/* 1 send, 0 receive */
};

void kg_dist_exchange(struct kg_dist *d, struct kg_dist_xfer *x, size_t n);

/*
 * Concatenate every rank's text in rank order on root (*out, malloc'ed,
 * NULL on other ranks).
 */
void kg_dist_gather_text(struct kg_dist *d, const char *text, int root,
    char **out);

/*
 * Sparse row gradients: n rows of width w, row IDs in ids.  The union
 * over ranks keeps each ID once, in ascending order, with the sum of its
 * rows taken in rank order (then in the order within a rank), so every
 * rank gets bit-identical rows.
 */
struct kg_sparse_rows {
	size_t n, cap;
	size_t w;
	uint64_t *ids;
	float *g;
	void *work;		/* the merge's sort keys, grown and kept */
	size_t work_cap;
};

#define KG_SPARSE_ROWS_INIT { 0 }

void kg_sparse_rows_release(struct kg_sparse_rows *s);

/*
 * Merge nlists lists (list k: counts[k] rows, its IDs at ids + off_k and
 * rows at g + off_k * w, lists stored one after another) into out.  The
 * pure part of kg_dist_sparse_sum, exposed for tests.
 */
void kg_sparse_merge(const uint64_t *ids, const float *g, const size_t *counts,
    size_t nlists, size_t w, struct kg_sparse_rows *out);

/*
 * Allgather every rank's rows and merge them (as above) into out.  With
 * max_n > 0, a bound on n that every rank passes alike, the rows travel
 * in one MPI_Allgather of max_n-row slots (one collective, what a
 * latency-bound step wants); with max_n = 0 the counts go first and the
 * rows follow exactly sized (MPI_Allgatherv, three collectives).
 */
void kg_dist_sparse_sum(struct kg_dist *d, const uint64_t *ids,
    const float *g, size_t n, size_t w, size_t max_n,
    struct kg_sparse_rows *out);

/*
 * The bucket schedule of distributed shallow training.  P partitions,
 * R ranks; bucket (a, b) = a * P + b holds the triples with head in a
 * and tail in b.  Every rank builds the same schedule from (P, R), so no
 * lock server is needed.
 *
 * With P even the unordered pairs of partitions are arranged by the
 * circle method into P - 1 rounds of P / 2 disjoint pairs (P odd: a
 * dummy partition is added and pairs with it dropped); each circle round
 * is cut into ceil(pairs / R) schedule rounds of at most R pairs, and
 * inside a schedule round pairs go to ranks so that each rank keeps the
 * partitions it already holds where possible.  A rank holding {a, b}
 * trains (a, a) and (b, b) if not yet trained this epoch, then (a, b) and
 * (b, a).  So with P = 2R every rank is busy in each of the 2R - 1 rounds,
 * a rank holds at most two partitions at a time, and every one of the P^2
 * buckets is trained exactly once per epoch.  P = 1 (any R = 1) is one
 * round with bucket (0, 0).
 */
struct kg_dist_sched {
	uint32_t nparts, nranks, nrounds;
	int32_t *hold;		/* [nrounds * nranks * 2]: held, -1 none */
	uint64_t *off;		/* [nrounds * nranks + 1] into buckets */
	uint32_t *buckets;	/* trained by (round, rank), in order */
};

#define KG_DIST_SCHED_INIT { 0 }

/*
 * Build the schedule.  Requires R = 1 or P >= 2R (fewer partitions would
 * leave ranks idle every round: the message says how many are needed).
 * 0, or -1 after kg_error().
 */
int kg_dist_sched_build(struct kg_dist_sched *s, uint32_t nparts,
    uint32_t nranks);
void kg_dist_sched_release(struct kg_dist_sched *s);
/*
 * s = base with partition p renamed perm[p] (perm NULL: none renamed),
 * the same rounds, ranks and bucket order otherwise: a schedule for every
 * permutation from one build.  s is allocated on first use (start from
 * KG_DIST_SCHED_INIT) and reused after; release it like base.
 */
void kg_dist_sched_relabel(struct kg_dist_sched *s,
    const struct kg_dist_sched *base, const uint32_t *perm);

/* Partitions held by rank in round (pointer to 2 entries, -1 = none). */
static inline const int32_t *
kg_dist_sched_hold(const struct kg_dist_sched *s, uint32_t round,
    uint32_t rank)
{
	return s->hold + 2 * ((size_t)round * s->nranks + rank);
}

/* Buckets of rank in round: *n of them. */
static inline const uint32_t *
kg_dist_sched_buckets(const struct kg_dist_sched *s, uint32_t round,
    uint32_t rank, size_t *n)
{
	size_t k = (size_t)round * s->nranks + rank;

	*n = (size_t)(s->off[k + 1] - s->off[k]);
	return s->buckets + s->off[k];
}

#endif
