#include "app/predict_run.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/progress.h"
#include "core/util.h"
#include "dist/dist.h"
#include "eval/eval.h"
#include "predict/answers.h"
#include "predict/outfile.h"
#include "store/store.h"

/* Queries per chunk: the top-k lists of a chunk stay under 2^24 entries. */
#define CHUNK_ENTRIES ((size_t)1 << 24)
#define CHUNK_MAX ((size_t)1 << 16)

/* What one run holds; rank 0 alone has names, reader and output. */
struct run {
	const struct kg_predict_run_opts *o;
	struct kg_dist dist;
	struct kg_dataset ds;
	struct kg_modeldir md;
	struct kg_store *own;	/* --stream's store over entities.npy */
	struct kg_filter filter;
	struct kg_typed typed;
	struct kg_names names;
	struct kg_query_reader *reader;
	struct kg_outfile out;
	struct kg_progress prog;
	struct kg_predict_opts po;
	struct kg_topk top;
	struct kg_query *q;
	float *score;		/* triples to score: per query of a chunk */
	double *trank, *hrank;
	struct kg_topk best;	/* cartesian: the k best combinations */
	struct kg_backend *be;	/* --device: the backend and the scorer */
	size_t chunk;
	int interactive;	/* queries from a pipe or terminal */
	uint64_t answered;
};

/*
 * Lines of a plain regular file, for the progress line's ETA; 0 (no ETA)
 * for stdin, a pipe or gzip input.
 */
static uint64_t
count_lines(const char *path)
{
	char buf[1 << 16];
	uint64_t n = 0;
	ssize_t got, i;
	struct stat st;
	int fd, first = 1, last = '\n';

	if (strcmp(path, "-") == 0 || stat(path, &st) != 0 ||
	    !S_ISREG(st.st_mode) || (fd = open(path, O_RDONLY)) < 0)
		return 0;
	while ((got = read(fd, buf, sizeof(buf))) > 0) {
		if (first && got >= 2 && (unsigned char)buf[0] == 0x1f &&
		    (unsigned char)buf[1] == 0x8b) {
			n = 0;
			break;
		}
		first = 0;
		for (i = 0; i < got; i++)
			n += buf[i] == '\n';
		last = buf[got - 1];
	}
	close(fd);
	return n + (last != '\n');
}

/* 1 when the queries come from a pipe, terminal or socket: a program
 * may be waiting for each answer. */
static int
is_interactive(const char *path)
{
	struct stat st;
	int rc = strcmp(path, "-") == 0 ? fstat(STDIN_FILENO, &st) :
	    stat(path, &st);

	return rc == 0 && !S_ISREG(st.st_mode);
}

/* The device entity queries are scored on (o->device, or the CPU
 * backend with o->seam), in one process; 0, or -1 after kg_error(). */
static int
open_device(struct run *r)
{
	const struct kg_predict_run_opts *o = r->o;
	size_t cap;

	if (o->device.kind == KG_DEVICE_CPU && !o->seam)
		return 0;
	if (r->dist.size > 1) {
		kg_error("answering shared by %d MPI ranks does not run on a "
		    "device (run one process)", r->dist.size);
		return -1;
	}
	if ((r->be = kg_backend_open(&o->device)) == NULL)
		return -1;
	if (!o->quiet)
		fprintf(stderr, "%s: scoring on %s\n", kg_progname(),
		    kg_backend_name(r->be));
	r->po.dev = kg_dev_scorer_open(r->be, &r->md, r->po.batch > 0 ?
	    r->po.batch : 1024);
	if (r->po.dev == NULL)
		return -1;
	cap = kg_dev_scorer_batch(r->po.dev);
	if (r->po.batch == 0 || r->po.batch > cap)
		r->po.batch = cap;
	return 0;
}

/* Dataset, model and filter, on every rank; names and I/O on rank 0. */
static int
setup(struct run *r)
{
	const struct kg_predict_run_opts *o = r->o;
	const char *inputs[5] = { o->dataset, o->src.modeldir,
	    o->src.entities, o->src.relations, o->queries };
	int rc = kg_dataset_load(&r->ds, o->dataset);

	if (rc == 0)
		rc = kg_modelsrc_load(&r->md, &o->src, &r->ds);
	if (rc < 0)
		return rc;
	if (o->stream && kg_modelsrc_stream(&r->md, &o->src, &r->own) < 0)
		return -1;
	if (kg_predict_check(&r->md, &r->po) < 0 || open_device(r) < 0)
		return -1;
	if (o->typed) {
		if (kg_typed_build(&r->typed, &r->ds) < 0)
			return -1;
		r->po.typed = &r->typed;
	}
	if (o->filter || o->rank)
		kg_filter_build(&r->filter, r->ds.split, KG_NSPLITS);
	if (r->dist.rank != 0)
		return 0;
	if (kg_names_load(&r->names, &r->ds) < 0 ||
	    (o->lists[0] || o->lists[1] || o->lists[2] ?
	    kg_query_open_lists(&r->reader, o->lists[0], o->lists[1],
	    o->lists[2], o->cartesian) :
	    kg_query_open(&r->reader, o->queries, o->nearest)) < 0 ||
	    kg_outfile_open(&r->out, o->output, o->force, inputs, 5) < 0)
		return -1;
	kg_progress_begin(&r->prog, o->progress, "answering", "queries",
	    count_lines(o->queries));
	return 0;
}

/*
 * Rank 0 reads the next chunk; every rank learns its size (0 at the
 * end, -1 when rank 0 failed) and its queries.
 */
static int64_t
next_chunk(struct run *r, int failed)
{
	int64_t n = -1;

	if (r->dist.rank == 0 && !failed)
		n = kg_query_read(r->reader, &r->names, r->q, r->chunk);
	kg_dist_bcast(&r->dist, &n, sizeof(n), 0);
	if (n > 0)
		kg_dist_bcast(&r->dist, r->q, (size_t)n * sizeof(*r->q), 0);
	return n;
}

/* Rank 0 merges every other rank's lists of the chunk into its own. */
static void
merge(struct run *r, size_t nq)
{
	struct kg_dist *d = &r->dist;
	size_t k = r->top.k, nr = (size_t)d->size, p, i, j;
	struct kg_dist_xfer *x;
	struct kg_topk *got;

	if (nr <= 1)
		return;
	x = kg_xcalloc(3 * nr, sizeof(*x));
	got = kg_xcalloc(nr, sizeof(*got));
	for (p = 0; p < nr; p++) {
		struct kg_topk *t = d->rank == 0 ? &got[p] : &r->top;

		if ((int)p == d->rank || (d->rank != 0 && p != 0))
			continue;
		if (d->rank == 0)
			kg_topk_init(t, nq, k);
		x[3 * p] = (struct kg_dist_xfer){ t->n, nq * sizeof(*t->n),
		    d->rank == 0 ? (int)p : 0, 1, d->rank != 0 };
		x[3 * p + 1] = (struct kg_dist_xfer){ t->score, nq * k *
		    sizeof(*t->score), x[3 * p].peer, 2, d->rank != 0 };
		x[3 * p + 2] = (struct kg_dist_xfer){ t->id, nq * k *
		    sizeof(*t->id), x[3 * p].peer, 3, d->rank != 0 };
	}
	/* Unused slots have no buffer: compact the list first. */
	for (p = 0, j = 0; p < 3 * nr; p++)
		if (x[p].buf != NULL)
			x[j++] = x[p];
	kg_dist_exchange(d, x, j);
	for (p = 0; d->rank == 0 && p < nr; p++)
		for (i = 0; (int)p != 0 && i < nq; i++)
			for (j = 0; j < got[p].n[i]; j++)
				kg_topk_push(&r->top, i, got[p].score[i * k + j],
				    got[p].id[i * k + j]);
	for (p = 0; p < nr; p++)
		kg_topk_release(&got[p]);
	free(got);
	free(x);
}

/*
 * The realistic filtered ranks of the triples q[0..n) into r->trank and
 * r->hrank, by kg-eval's ranking (lib/eval), each rank of an MPI job
 * counting its share of the candidates.  On every rank; 0 or -1.
 */
static int
rank_triples(struct run *r, const struct kg_query *q, size_t n)
{
	struct kg_eval_opts ev = KG_EVAL_OPTS_INIT;
	struct kg_eval_ranks rk;
	int32_t *hrt = kg_xmallocarray(3 * n + 1, sizeof(*hrt));
	struct kg_triples tr = { n, hrt };
	size_t i;
	int side;

	for (i = 0; i < n; i++) {
		hrt[3 * i] = q[i].h;
		hrt[3 * i + 1] = q[i].r;
		hrt[3 * i + 2] = q[i].t;
	}
	ev.filter = &r->filter;
	ev.batch = r->o->batch;
	ev.threads = r->o->threads;
	ev.shard = r->dist.rank;
	ev.nshards = r->dist.size;
	if (kg_eval_rank(&r->md, &tr, &ev, &rk) < 0) {
		free(hrt);
		return -1;
	}
	for (side = 0; side < 2; side++) {
		kg_dist_sum_u64(&r->dist, rk.opt[side], rk.n);
		kg_dist_sum_u64(&r->dist, rk.pess[side], rk.n);
	}
	for (i = 0; i < n; i++) {
		r->trank[i] = kg_rank_of(KG_TIES_REALISTIC, rk.opt[0][i],
		    rk.pess[0][i]);
		r->hrank[i] = kg_rank_of(KG_TIES_REALISTIC, rk.opt[1][i],
		    rk.pess[1][i]);
	}
	kg_eval_ranks_release(&rk);
	free(hrt);
	return 0;
}

/* Write lines of answers or scores; a write error fails the run. */
static int
written(struct run *r)
{
	if (r->interactive)
		fflush(r->out.f);
	if (!ferror(r->out.f))
		return 0;
	kg_error_errno("cannot write '%s'", r->out.path ? r->out.path :
	    "stdout");
	return -1;
}

/*
 * A chunk of triples to score: their scores and ranks written (rank 0),
 * or for cartesian lists offered to the k best.  0 or -1.
 */
static int
score_chunk(struct run *r, size_t n, const struct kg_answers_fmt *fmt)
{
	const struct kg_predict_run_opts *o = r->o;
	size_t i;

	if (o->cartesian) {
		if (r->dist.rank != 0)
			return 0;
		if (kg_predict_score(&r->md, o->threads, r->q, n, r->score) <
		    0)
			return -1;
		for (i = 0; i < n; i++)
			if (!o->filter || !kg_filter_contains(&r->filter,
			    r->q[i].h, r->q[i].r, r->q[i].t))
				kg_topk_push(&r->best, 0, r->score[i],
				    (int64_t)r->q[i].line - 1);
		return 0;
	}
	if (o->rank && rank_triples(r, r->q, n) < 0)
		return -1;
	if (r->dist.rank != 0)
		return 0;
	if (kg_predict_score(&r->md, o->threads, r->q, n, r->score) < 0)
		return -1;
	kg_answers_write_scores(r->out.f, fmt, &r->names, r->q, n, r->score,
	    r->trank, r->hrank);
	return written(r);
}

/* Cartesian lists: the k best combinations, with their ranks.  On every
 * rank; 0 or -1. */
static int
write_best(struct run *r, const struct kg_answers_fmt *fmt)
{
	int64_t n = 0, i;

	if (r->dist.rank == 0) {
		kg_topk_sort(&r->best);
		n = (int64_t)r->best.n[0];
		for (i = 0; i < n; i++) {
			kg_query_combination(r->reader,
			    (uint64_t)r->best.id[i], &r->q[i]);
			r->score[i] = r->best.score[i];
		}
	}
	kg_dist_bcast(&r->dist, &n, sizeof(n), 0);
	if (n > 0)
		kg_dist_bcast(&r->dist, r->q, (size_t)n * sizeof(*r->q), 0);
	if (r->o->rank && n > 0 && rank_triples(r, r->q, (size_t)n) < 0)
		return -1;
	if (r->dist.rank != 0)
		return 0;
	kg_answers_write_scores(r->out.f, fmt, &r->names, r->q, (size_t)n,
	    r->score, r->trank, r->hrank);
	return written(r);
}

/* Answer chunks until the input ends.  0 or -1 (on every rank). */
static int
answer_all(struct run *r)
{
	const struct kg_predict_run_opts *o = r->o;
	struct kg_answers_fmt fmt = { o->json, o->nearest, o->sim, 0,
	    o->rank };
	int failed = 0, header = !o->no_header;
	uint64_t fails;
	int64_t n;

	while ((n = next_chunk(r, failed)) > 0) {
		if (r->q[0].kind == KG_QUERY_SCORE) {
			fmt.score = 1;
			if (header && r->dist.rank == 0 && !o->cartesian)
				kg_answers_header(r->out.f, &fmt);
			header = header && o->cartesian;
			if (score_chunk(r, (size_t)n, &fmt) < 0)
				failed = 1;
			r->answered += (uint64_t)n;
			continue;
		}
		kg_topk_reset(&r->top, (size_t)n);
		r->po.progress_base = r->answered;
		if (kg_predict_answer(&r->md, &r->po, r->q, (size_t)n,
		    &r->top) < 0)
			failed = 1;
		merge(r, (size_t)n);
		r->answered += (uint64_t)n;
		if (r->dist.rank != 0 || failed)
			continue;
		kg_topk_sort(&r->top);
		/* After the first chunk parsed: a bad first line leaves stdout
		 * empty. */
		if (header)
			kg_answers_header(r->out.f, &fmt);
		header = 0;
		kg_answers_write(r->out.f, &fmt, &r->names, r->q, (size_t)n,
		    &r->top);
		if (r->interactive)
			fflush(r->out.f);
		if (ferror(r->out.f)) {
			kg_error_errno("cannot write '%s'", r->out.path ?
			    r->out.path : "stdout");
			failed = 1;
		}
	}
	if (n < 0)
		return -1;
	/* A rank whose rows could not be read: no output anywhere. */
	fails = (uint64_t)failed;
	kg_dist_sum_u64(&r->dist, &fails, 1);
	if (fails > 0)
		return -1;
	if (o->cartesian || o->lists[0] != NULL)
		fmt.score = 1;
	if (header && r->dist.rank == 0)
		kg_answers_header(r->out.f, &fmt);	/* no queries at all */
	if (o->cartesian && write_best(r, &fmt) < 0)
		return -1;
	kg_progress_end(&r->prog, r->answered);
	return r->dist.rank == 0 ? kg_outfile_commit(&r->out) : 0;
}

static void
run_init(struct run *r, const struct kg_predict_run_opts *o)
{
	memset(r, 0, sizeof(*r));
	r->o = o;
	r->dist = (struct kg_dist)KG_DIST_INIT;
	r->ds = (struct kg_dataset)KG_DATASET_INIT;
	r->md = (struct kg_modeldir)KG_MODELDIR_INIT;
	r->filter = (struct kg_filter)KG_FILTER_INIT;
	r->typed = (struct kg_typed)KG_TYPED_INIT;
	r->out = (struct kg_outfile)KG_OUTFILE_INIT;
	r->prog = (struct kg_progress)KG_PROGRESS_INIT;
	r->po = (struct kg_predict_opts)KG_PREDICT_OPTS_INIT;
	r->po.sim = o->sim;
	r->po.batch = o->batch;
	r->po.threads = o->threads;
	r->chunk = CHUNK_ENTRIES / (o->k ? o->k : 1);
	if (r->chunk > CHUNK_MAX)
		r->chunk = CHUNK_MAX;
	if (r->chunk == 0)
		r->chunk = 1;
}

int
kg_predict_run(const struct kg_predict_run_opts *o, int *argc, char ***argv)
{
	struct run r;
	int rc;

	run_init(&r, o);
	if (kg_dist_init(&r.dist, argc, argv) < 0)
		return -1;
	r.po.shard = r.dist.rank;
	r.po.nshards = r.dist.size;
	rc = setup(&r);
	/* Every rank must take part in the broadcasts even if rank 0 could
	 * not set up; a rank other than 0 that fails stops the job. */
	if (rc < 0 && r.dist.rank != 0)
		kg_dist_abort(&r.dist, rc == KG_ERR_VERSION ? KG_EXIT_VERSION :
		    KG_EXIT_FAIL);
	if (o->filter)
		r.po.filter = &r.filter;
	if (r.dist.rank == 0)
		r.po.progress = &r.prog;
	/* A pipe or terminal: the reader returns what has arrived, and each
	 * chunk is flushed; --batch 1 answers one query at a time (rank 0
	 * decides; the others follow its sizes). */
	r.interactive = is_interactive(o->queries);
	kg_dist_bcast(&r.dist, &r.interactive, sizeof(r.interactive), 0);
	if (r.interactive && o->batch == 1)
		r.chunk = 1;
	r.q = kg_xmallocarray(r.chunk + o->k, sizeof(*r.q));
	r.score = kg_xmallocarray(r.chunk + o->k, sizeof(*r.score));
	r.trank = kg_xcalloc(r.chunk + o->k, sizeof(*r.trank));
	r.hrank = kg_xcalloc(r.chunk + o->k, sizeof(*r.hrank));
	kg_topk_init(&r.top, r.chunk, o->k);
	kg_topk_init(&r.best, 1, o->k);
	if (rc == 0)
		rc = answer_all(&r);
	else
		next_chunk(&r, 1);
	kg_outfile_abort(&r.out);
	kg_dev_scorer_free(r.po.dev);
	kg_backend_free(r.be);
	kg_topk_release(&r.top);
	kg_topk_release(&r.best);
	free(r.q);
	free(r.score);
	free(r.trank);
	free(r.hrank);
	kg_query_close(r.reader);
	kg_names_release(&r.names);
	kg_filter_release(&r.filter);
	kg_typed_release(&r.typed);
	kg_modeldir_release(&r.md);
	kg_store_free(r.own);
	kg_dataset_release(&r.ds);
	kg_dist_finalize(&r.dist);
	return rc;
}
