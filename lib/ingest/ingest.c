/*
 * ingest: see ingest.h.  Triples are held in memory as provisional IDs
 * (3 x uint32 per triple, in input order, split files one after the
 * other), because dropping, deduplicating and the random split must all be
 * decided before the final numbering is known; the arrays are then written
 * in one pass per split.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "core/progress.h"
#include "io/dict.h"
#include "ingest/ingest.h"
#include "io/manifest.h"
#include "io/npy.h"
#include "io/stage.h"
#include "io/tabread.h"
#include "core/util.h"

#define NONE UINT32_MAX
#define DROPPED 3		/* label of a triple dropped after the split */
#define CHUNK_ROWS 65536
#define LINE_BITS 48		/* split mode: line number | file index << 48 */
#define DEDUP_BATCH 64		/* at least the records of one batch */

static const char *const split_names[3] = { "train", "valid", "test" };

/*
 * A set of triples (repeats are counted always, dropped with --dedup):
 * each slot holds the index + 1 of a triple in
 * the triple array (low 34 bits: 17 billion triples, far more than memory
 * holds) and the top 30 bits of its hash.  The slot position is taken from
 * the top bits of the hash, so the table doubles by re-placing slots from
 * their stored bits alone (reading every triple again at random made
 * --dedup three times slower); and a probe reads a triple only when the
 * stored bits match.
 */
#define TSET_IDX_BITS 34
#define TSET_IDX_MASK (((uint64_t)1 << TSET_IDX_BITS) - 1)
#define TSET_HI_BITS (64 - TSET_IDX_BITS)

struct tset {
	uint64_t *slots;
	uint64_t cap, n;
	unsigned bits;		/* log2(cap) */
};

struct ingest {
	const struct kg_ingest_opts *o;
	int col[3];			/* field index of head, relation, tail */
	struct kg_dict ent, rel;
	uint32_t *trip;			/* 3 provisional IDs per triple */
	uint64_t n, cap;
	uint64_t *where;		/* split mode + unseen error: origin */
	uint8_t *label;			/* split mode: split of each triple */
	uint64_t split_begin[3], split_end[3];	/* split files: ranges */
	uint64_t train_ent, train_rel;	/* split files: IDs below are train */
	uint32_t *perm_e, *perm_r;	/* split mode: provisional -> final */
	uint32_t *inv_e, *inv_r;	/* split mode: final -> provisional */
	uint64_t n_ent, n_rel;		/* final counts */
	uint64_t count[3];		/* triples kept per split */
	struct tset seen;
	uint8_t unseen_flag[DEDUP_BATCH];	/* --dedup: per triple of a batch */
	/* Figures. */
	uint64_t lines, records, comments, blanks, bytes;
	uint64_t bad, dups, unseen_dropped, unseen_kept;
	uint64_t typed, types_unknown, n_types;
	double t0, next_progress, t_read, t_write;
	struct kg_progress prog;	/* MB of plain files, else lines */
	int bytes_mode;
	double cpu0, cpu_read;		/* process CPU seconds */
	int id64;
	struct kg_dict types;
	int32_t *type_of;
};

static int
bad_record(struct ingest *st, const char *file, uint64_t line,
    const char *fmt, ...) KG_PRINTF(4, 5);

/*
 * Report a bad record.  Returns 0 when it may be skipped (within
 * --max-errors; reported as a warning) or -1 when it is fatal.
 */
static int
bad_record(struct ingest *st, const char *file, uint64_t line,
    const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	st->bad++;
	if (st->bad > st->o->max_errors) {
		if (st->o->max_errors > 0)
			kg_error("%s:%" PRIu64 ": %s (more than %" PRIu64
			    " bad lines)", file, line, msg, st->o->max_errors);
		else
			kg_error("%s:%" PRIu64 ": %s", file, line, msg);
		return -1;
	}
	kg_warn("%s:%" PRIu64 ": %s; line skipped", file, line, msg);
	return 0;
}

/* Names are written byte for byte into "id<TAB>name" lines, so they
 * cannot hold line breaks or tabs; the dictionary refuses NUL and names
 * longer than KG_DICT_MAX_NAME. */
static const char *
name_problem(const char *s, size_t len)
{
	size_t i;

	_Static_assert(KG_DICT_MAX_NAME == 262128, "update the message");
	if (len > KG_DICT_MAX_NAME)
		return "is longer than 262128 bytes";
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\0')
			return "holds a NUL byte";
		if (c == '\t' || c == '\n' || c == '\r')
			return "holds a tab or a line break";
	}
	return NULL;
}

/* A name for a message: control characters shown as \t, \n, \r, \0 and
 * \xHH, and long names cut, so that one message stays one line. */
static void
quote_name(char *out, size_t cap, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, k = 0;

	for (i = 0; i < len && k + 8 < cap; i++) {
		unsigned char c = (unsigned char)s[i];
		const char *esc = c == '\t' ? "\\t" : c == '\n' ? "\\n" :
		    c == '\r' ? "\\r" : c == '\0' ? "\\0" : NULL;

		if (esc != NULL) {
			out[k++] = esc[0];
			out[k++] = esc[1];
		} else if (c < 0x20 || c == 0x7f) {
			out[k++] = '\\';
			out[k++] = 'x';
			out[k++] = hex[c >> 4];
			out[k++] = hex[c & 15];
		} else
			out[k++] = (char)c;
	}
	if (i < len) {
		memcpy(out + k, "...", 3);
		k += 3;
	}
	out[k] = '\0';
}

/* ---- the triple set (repeats, dropped with --dedup) ---- */

/* A hash of a triple: two rounds of the splitmix64 finaliser, inline
 * (this runs once per triple with --dedup). */
static inline uint64_t
triple_hash(const uint32_t *t)
{
	uint64_t x = ((uint64_t)t[0] << 32 | t[2]) ^ 0x9e3779b97f4a7c15ULL;

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	x ^= (x >> 31) ^ ((uint64_t)t[1] * 0xd6e8feb86659fd93ULL);
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* Ask for transparent huge pages on the table: its accesses are random,
 * and with 4 KiB pages each one also missed the TLB. */
static void
advise_huge(void *p, size_t n)
{
	uintptr_t a = (uintptr_t)p, b = (a + n) & ~(uintptr_t)4095;

	a = (a + 4095) & ~(uintptr_t)4095;
#ifdef MADV_HUGEPAGE
	if (n >= ((size_t)4 << 20) && b > a)
		madvise((void *)a, b - a, MADV_HUGEPAGE);
#endif
}

/* Position of slot value v in a table of 2^bits slots. */
static inline uint64_t
tset_pos(uint64_t v, unsigned bits, const uint32_t *trip)
{
	if (bits <= TSET_HI_BITS)
		return (v >> TSET_IDX_BITS) >> (TSET_HI_BITS - bits);
	return triple_hash(&trip[3 * ((v & TSET_IDX_MASK) - 1)]) >> (64 - bits);
}

static void
tset_grow(struct tset *s, const uint32_t *trip)
{
	unsigned bits = s->cap ? s->bits + 1 : 10;
	uint64_t cap = (uint64_t)1 << bits, mask = cap - 1, i, j;
	uint64_t *slots = kg_xcalloc(cap, sizeof(*slots));

	advise_huge(slots, cap * sizeof(*slots));
	for (i = 0; i < s->cap; i++) {
		uint64_t v = s->slots[i];

		if (v == 0)
			continue;
		for (j = tset_pos(v, bits, trip); slots[j] != 0;
		    j = (j + 1) & mask)
			;
		slots[j] = v;
	}
	free(s->slots);
	s->slots = slots;
	s->cap = cap;
	s->bits = bits;
}

/* Insert triple idx (already in trip; h its triple_hash); 1 if it was
 * new, 0 if an equal triple is there. */
static int
tset_add(struct tset *s, const uint32_t *trip, uint64_t idx, uint64_t h)
{
	const uint32_t *t = &trip[3 * idx];
	uint64_t mask, i, v, hi;

	if ((s->n + 1) * 4 > s->cap * 3)
		tset_grow(s, trip);
	mask = s->cap - 1;
	hi = h >> TSET_IDX_BITS;
	for (i = h >> (64 - s->bits); (v = s->slots[i]) != 0;
	    i = (i + 1) & mask) {
		const uint32_t *u;

		if (v >> TSET_IDX_BITS != hi)
			continue;
		u = &trip[3 * ((v & TSET_IDX_MASK) - 1)];
		if (u[0] == t[0] && u[1] == t[1] && u[2] == t[2])
			return 0;
	}
	s->slots[i] = hi << TSET_IDX_BITS | (idx + 1);
	s->n++;
	return 1;
}

/* ---- reading ---- */

/* Progress so far, reader r included (NULL: between files): MB of
 * plain files, whose total is known, or lines. */
static uint64_t
progress_units(const struct ingest *st, const struct kg_tabread *r)
{
	if (st->bytes_mode)
		return (st->bytes + (r ? kg_tabread_bytes(r) : 0)) >> 20;
	return st->lines + (r ? kg_tabread_lines(r) : 0);
}

static void
progress(struct ingest *st, const struct kg_tabread *r)
{
	double now = kg_now();

	if (now < st->next_progress)
		return;
	st->next_progress = now + 1.0;
	kg_progress_update(&st->prog, progress_units(st, r));
}

/* Start the progress line: with an ETA when the inputs are plain
 * files. */
static void
progress_begin(struct ingest *st)
{
	const struct kg_ingest_opts *o = st->o;
	const char *split[3] = { o->train, o->valid, o->test };
	uint64_t total = o->train != NULL ? kg_ingest_plain_bytes(split, 3) :
	    kg_ingest_plain_bytes((const char *const *)o->inputs,
	    o->n_inputs);

	st->bytes_mode = total > 0;
	kg_progress_begin(&st->prog, o->progress, "reading", total ? "MB" :
	    "lines", total >> 20);
}

uint64_t
kg_ingest_plain_bytes(const char *const *paths, size_t n)
{
	uint64_t sum = 0;
	unsigned char magic[2];
	struct stat sb;
	size_t i;
	FILE *f;

	for (i = 0; i < n; i++) {
		if (paths[i] == NULL)
			continue;
		if (strcmp(paths[i], "-") == 0 || stat(paths[i], &sb) != 0 ||
		    !S_ISREG(sb.st_mode) || (f = fopen(paths[i], "rb")) ==
		    NULL)
			return 0;
		if (fread(magic, 1, 2, f) == 2 && magic[0] == 0x1f &&
		    magic[1] == 0x8b) {
			fclose(f);
			return 0;
		}
		fclose(f);
		sum += (uint64_t)sb.st_size;
	}
	return sum;
}

/* The names of one record, hashed, with candidate IDs from the table. */
struct rec {
	struct kg_field f[3];	/* head, relation, tail */
	uint64_t hash[3];
	uint32_t cand[3];	/* candidate record references, or 0 */
};

static inline struct kg_dict *
dict_of(struct ingest *st, int k)
{
	return k == 1 ? &st->rel : &st->ent;
}

/* The ID of field k of a record, or -1 if absent. */
static inline int64_t
lookup(struct ingest *st, const struct rec *rc, int k)
{
	const struct kg_dict *d = dict_of(st, k);
	int64_t id;

	if (rc->cand[k] != 0 && (id = kg_dict_record_id(d, rc->cand[k],
	    rc->f[k].s, rc->f[k].len)) >= 0)
		return id;
	return kg_dict_find_hashed(d, rc->f[k].s, rc->f[k].len, rc->hash[k]);
}

/*
 * Look up or insert the names of one record; ids[] gets the provisional
 * IDs.  Nothing is inserted when a new name is unusable.  Returns 0, 1
 * for a bad name (message in *why, field in *which), -1 on error.
 */
static int
resolve(struct ingest *st, const struct rec *rc, int64_t ids[3],
    const char **why, int *which)
{
	int k;

	for (k = 0; k < 3; k++) {
		ids[k] = lookup(st, rc, k);
		if (ids[k] < 0 && (*why = name_problem(rc->f[k].s,
		    rc->f[k].len)) != NULL) {
			*which = k;
			return 1;
		}
	}
	/* In the order h, r, t; a tail equal to a new head finds the head. */
	for (k = 0; k < 3; k++) {
		if (ids[k] >= 0)
			continue;
		ids[k] = kg_dict_intern_hashed(dict_of(st, k), rc->f[k].s,
		    rc->f[k].len, rc->hash[k], NULL);
		if (ids[k] < 0)
			return -1;
	}
	return 0;
}

static const char *const role_names[3] = { "head", "relation", "tail" };

/* Append one triple; returns its index. */
static uint64_t
push(struct ingest *st, const int64_t ids[3])
{
	if (st->n == st->cap) {
		st->cap = st->cap ? st->cap * 2 : 1 << 16;
		st->trip = kg_xreallocarray(st->trip, st->cap,
		    3 * sizeof(*st->trip));
		if (st->where != NULL || (st->o->use_split &&
		    st->o->unseen == KG_UNSEEN_ERROR))
			st->where = kg_xreallocarray(st->where, st->cap,
			    sizeof(*st->where));
	}
	st->trip[3 * st->n] = (uint32_t)ids[0];
	st->trip[3 * st->n + 1] = (uint32_t)ids[1];
	st->trip[3 * st->n + 2] = (uint32_t)ids[2];
	return st->n++;
}

/*
 * Check a valid/test record of split files against train before any name
 * is inserted.  Returns 0 to keep it, 1 to drop it, -1 for an error.
 */
static int
check_unseen(struct ingest *st, const struct rec *rc, const char *file,
    uint64_t line, int split, int *unseen)
{
	char name[96];
	int64_t id;
	int k;

	*unseen = 0;
	for (k = 0; k < 3; k++) {
		uint64_t lim = k == 1 ? st->train_rel : st->train_ent;

		id = lookup(st, rc, k);
		if (id >= 0 && (uint64_t)id < lim)
			continue;
		*unseen = 1;
		if (st->o->unseen == KG_UNSEEN_KEEP)
			return 0;
		if (st->o->unseen == KG_UNSEEN_DROP)
			return 1;
		quote_name(name, sizeof(name), rc->f[k].s, rc->f[k].len);
		kg_error("%s:%" PRIu64 ": %s '%s' of a %s triple does not "
		    "occur in train", file, line, k == 1 ? "relation" :
		    "entity", name, split_names[split]);
		return -1;
	}
	return 0;
}

/* Handle one record; 0 (kept or skipped) or -1 on error. */
static int
add_record(struct ingest *st, const struct rec *rc, size_t nf,
    const char *file, uint64_t line, int split, uint64_t file_index)
{
	const char *why;
	int64_t ids[3];
	uint64_t idx;
	int k, res, which, unseen = 0;

	if (nf != 3)
		return bad_record(st, file, line, "expected 3 fields, found %zu",
		    nf);
	for (k = 0; k < 3 && rc->f[k].len > 0; k++)
		;
	if (k < 3)
		return bad_record(st, file, line, "empty %s field (column %d)",
		    role_names[k], st->col[k] + 1);
	if (split > 0) {
		res = check_unseen(st, rc, file, line, split, &unseen);
		if (res < 0)
			return -1;
		if (res == 1) {
			st->unseen_dropped++;
			return 0;
		}
	}
	res = resolve(st, rc, ids, &why, &which);
	if (res < 0)
		return -1;
	if (res == 1) {
		char name[96];

		quote_name(name, sizeof(name), rc->f[which].s,
		    rc->f[which].len);
		return bad_record(st, file, line, "%s '%s' %s", which == 1 ?
		    "relation" : "entity", name, why);
	}
	idx = push(st, ids);
	if (st->where != NULL)
		st->where[idx] = line | file_index << LINE_BITS;
	/* With --dedup the batch is checked in dedup_batch, which counts. */
	if (st->o->dedup)
		st->unseen_flag[idx % DEDUP_BATCH] = (uint8_t)unseen;
	else
		st->unseen_kept += (uint64_t)unseen;
	return 0;
}

/*
 * --dedup for the triples [first, n) that one batch appended: hash them
 * and prefetch their table slots, then check them in order, moving the
 * kept ones down over the dropped ones.  Checking each triple as it was
 * appended waited for one table miss per triple.
 */
static void
dedup_batch(struct ingest *st, uint64_t first)
{
	uint64_t hash[DEDUP_BATCH], i, w = first, k;

	for (i = first; i < st->n; i++) {
		hash[i - first] = triple_hash(&st->trip[3 * i]);
		if (st->seen.cap != 0)
			__builtin_prefetch(&st->seen.slots[hash[i - first] >>
			    (64 - st->seen.bits)]);
	}
	for (i = first; i < st->n; i++) {
		if (w != i) {
			for (k = 0; k < 3; k++)
				st->trip[3 * w + k] = st->trip[3 * i + k];
			if (st->where != NULL)
				st->where[w] = st->where[i];
		}
		if (tset_add(&st->seen, st->trip, w, hash[i - first])) {
			st->unseen_kept += st->unseen_flag[i % DEDUP_BATCH];
			w++;
		} else
			st->dups++;
	}
	st->n = w;
}

/*
 * Without --dedup, repeated triples are still counted: one pass over all
 * the triples read, in input order, with the set sized once for them (no
 * doubling, which held the old and the new table together) and freed at
 * the end.  Measured on 4M triples of 1M entities (kg-ingest 0.85 s,
 * 101 MB before) it adds about 0.3 s and 66 MB of peak memory.
 */
static void
count_repeats(struct ingest *st)
{
	uint64_t hash[DEDUP_BATCH], i, j, m;
	unsigned bits = 10;

	while (((uint64_t)3 << bits) < (st->n + 1) * 4)
		bits++;
	st->seen.bits = bits;
	st->seen.cap = (uint64_t)1 << bits;
	st->seen.slots = kg_xcalloc(st->seen.cap, sizeof(uint64_t));
	advise_huge(st->seen.slots, st->seen.cap * sizeof(uint64_t));
	for (i = 0; i < st->n; i += m) {
		m = st->n - i < DEDUP_BATCH ? st->n - i : DEDUP_BATCH;
		for (j = 0; j < m; j++) {
			hash[j] = triple_hash(&st->trip[3 * (i + j)]);
			__builtin_prefetch(&st->seen.slots[hash[j] >>
			    (64 - bits)]);
		}
		for (j = 0; j < m; j++)
			st->dups += !tset_add(&st->seen, st->trip, i + j,
			    hash[j]);
	}
	free(st->seen.slots);
	memset(&st->seen, 0, sizeof(st->seen));
}

/*
 * Read one input.  split is 0..2 for split files, -1 for split mode;
 * file_index numbers split-mode inputs for error messages.
 *
 * Records come in batches so that the table lookups of a whole batch
 * overlap: hash every name and prefetch its slot, then read the slots and
 * prefetch the records they point to, and only then handle the records
 * one by one, in order (which decides the IDs).  With millions of
 * entities each stage is a cache miss per name, and doing them one name
 * at a time left the CPU waiting most of the time.
 */
static int
read_input(struct ingest *st, const char *path, int split,
    uint64_t file_index)
{
	enum { B = 32 };
	_Static_assert(B <= DEDUP_BATCH, "dedup_batch holds one batch");
	const struct kg_ingest_opts *o = st->o;
	struct kg_tabread *r;
	struct kg_field f[3 * B];
	struct rec recs[B];
	size_t nf[B];
	uint64_t lines[B];
	const char *file;
	uint64_t first;
	int nb, j, k;

	if (kg_tabread_open(&r, path, &o->tab) < 0)
		return -1;
	file = kg_tabread_name(r);
	while ((nb = kg_tabread_batch(r, f, 3, B, nf, lines)) > 0) {
		for (j = 0; j < nb; j++) {
			if (nf[j] != 3)
				continue;
			for (k = 0; k < 3; k++) {
				struct rec *rc = &recs[j];

				rc->f[k] = f[3 * j + st->col[k]];
				rc->hash[k] = kg_dict_hash(rc->f[k].s,
				    rc->f[k].len);
				kg_dict_prefetch(dict_of(st, k), rc->hash[k]);
			}
		}
		for (j = 0; j < nb; j++) {
			if (nf[j] != 3)
				continue;
			for (k = 0; k < 3; k++) {
				struct kg_dict *d = dict_of(st, k);
				uint32_t c = kg_dict_candidate(d,
				    recs[j].hash[k]);

				recs[j].cand[k] = c;
				if (c != 0)
					kg_dict_prefetch_record(d, c,
					    recs[j].f[k].len);
			}
		}
		first = st->n;
		for (j = 0; j < nb; j++)
			if (add_record(st, &recs[j], nf[j], file, lines[j],
			    split, file_index) < 0)
				goto fail;
		if (o->dedup)
			dedup_batch(st, first);
		st->records += (uint64_t)nb;
		if (o->progress)
			progress(st, r);
	}
	if (nb < 0)
		goto fail;
	st->lines += kg_tabread_lines(r);
	st->comments += kg_tabread_comments(r);
	st->blanks += kg_tabread_blanks(r);
	st->bytes += kg_tabread_bytes(r);
	kg_tabread_close(r);
	return 0;
fail:
	kg_tabread_close(r);
	return -1;
}

/* ---- split mode: shuffle, unseen policy, renumbering ---- */

static void
assign_splits(struct ingest *st)
{
	const double *p = st->o->split;
	uint64_t nv = (uint64_t)llround(p[1] * (double)st->n);
	uint64_t nt = (uint64_t)llround(p[2] * (double)st->n);
	uint64_t i, j;
	struct kg_rng rng;
	uint8_t tmp;

	if (nv + nt > st->n)
		nt = st->n - nv;
	st->label = kg_xmalloc(st->n ? st->n : 1);
	for (i = 0; i < st->n; i++)
		st->label[i] = i < st->n - nv - nt ? 0 : i < st->n - nt ? 1 : 2;
	/* Fisher-Yates over the labels: exact counts, input order kept. */
	kg_rng_stream(&rng, st->o->seed, KG_STREAM_INGEST_SPLIT, 0, 0, 0, 0);
	for (i = st->n; i > 1; i--) {
		j = kg_rng_below(&rng, i);
		tmp = st->label[i - 1];
		st->label[i - 1] = st->label[j];
		st->label[j] = tmp;
	}
}

static int
apply_unseen_split(struct ingest *st)
{
	uint8_t *in_e = kg_xcalloc(kg_dict_size(&st->ent) + 1, 1);
	uint8_t *in_r = kg_xcalloc(kg_dict_size(&st->rel) + 1, 1);
	uint64_t i;
	int k, rc = 0;

	for (i = 0; i < st->n; i++) {
		if (st->label[i] != 0)
			continue;
		in_e[st->trip[3 * i]] = 1;
		in_r[st->trip[3 * i + 1]] = 1;
		in_e[st->trip[3 * i + 2]] = 1;
	}
	for (i = 0; i < st->n && rc == 0; i++) {
		const uint32_t *t = &st->trip[3 * i];

		if (st->label[i] == 0 || (in_e[t[0]] && in_r[t[1]] &&
		    in_e[t[2]]))
			continue;
		switch (st->o->unseen) {
		case KG_UNSEEN_KEEP:
			st->unseen_kept++;
			break;
		case KG_UNSEEN_DROP:
			st->label[i] = DROPPED;
			st->unseen_dropped++;
			break;
		case KG_UNSEEN_ERROR: {
			uint64_t w = st->where[i];
			const char *file = st->o->inputs[w >> LINE_BITS];

			k = !in_e[t[0]] ? 0 : !in_r[t[1]] ? 1 : 2;
			kg_error("%s:%" PRIu64 ": %s '%s' of a %s triple does "
			    "not occur in train", strcmp(file, "-") == 0 ?
			    "stdin" : file, w & (((uint64_t)1 << LINE_BITS) - 1),
			    k == 1 ? "relation" : "entity", k == 1 ?
			    kg_dict_name(&st->rel, t[1]) :
			    kg_dict_name(&st->ent, t[k]),
			    split_names[st->label[i]]);
			rc = -1;
			break;
		}
		}
	}
	free(in_e);
	free(in_r);
	return rc;
}

static uint32_t
renumber(uint32_t *perm, uint32_t *inv, uint64_t *n, uint32_t id)
{
	if (perm[id] == NONE) {
		perm[id] = (uint32_t)*n;
		inv[*n] = id;
		(*n)++;
	}
	return perm[id];
}

/* Final IDs in order of first appearance in train, valid, test. */
static void
renumber_split(struct ingest *st)
{
	uint64_t ne = kg_dict_size(&st->ent), nr = kg_dict_size(&st->rel), i;
	int s;

	st->perm_e = kg_xmallocarray(ne + 1, sizeof(uint32_t));
	st->perm_r = kg_xmallocarray(nr + 1, sizeof(uint32_t));
	st->inv_e = kg_xmallocarray(ne + 1, sizeof(uint32_t));
	st->inv_r = kg_xmallocarray(nr + 1, sizeof(uint32_t));
	memset(st->perm_e, 0xff, (ne + 1) * sizeof(uint32_t));
	memset(st->perm_r, 0xff, (nr + 1) * sizeof(uint32_t));
	st->n_ent = st->n_rel = 0;
	for (s = 0; s < 3; s++) {
		for (i = 0; i < st->n; i++) {
			uint32_t *t = &st->trip[3 * i];

			if (st->label[i] != s)
				continue;
			renumber(st->perm_e, st->inv_e, &st->n_ent, t[0]);
			renumber(st->perm_r, st->inv_r, &st->n_rel, t[1]);
			renumber(st->perm_e, st->inv_e, &st->n_ent, t[2]);
			st->count[s]++;
		}
	}
}

/* ---- writing ---- */

static inline uint32_t
final_ent(const struct ingest *st, uint32_t id)
{
	return st->perm_e != NULL ? st->perm_e[id] : id;
}

static inline uint32_t
final_rel(const struct ingest *st, uint32_t id)
{
	return st->perm_r != NULL ? st->perm_r[id] : id;
}

/*
 * Write train.npy, valid.npy and test.npy in one pass over the triples
 * (with --split the three are interleaved; three passes read the whole
 * array three times), converting to final IDs through chunk buffers.
 */
static int
write_triples(struct ingest *st, const char *dir)
{
	struct kg_npy_writer w[3];
	uint64_t row = 3, i, k[3] = { 0, 0, 0 };
	size_t esize = st->id64 ? sizeof(int64_t) : sizeof(int32_t);
	char *buf[3] = { NULL, NULL, NULL };
	int s, opened = 0, rc = -1;

	for (s = 0; s < 3; s++) {
		char *name = kg_xasprintf("%s.npy", split_names[s]);
		char *path = kg_path_join(dir, name);

		free(name);
		rc = kg_npy_writer_open(&w[s], path, st->id64 ? KG_DT_I8 :
		    KG_DT_I4, 2, &row);
		free(path);
		if (rc < 0)
			goto out;
		opened++;
		buf[s] = kg_xmallocarray(CHUNK_ROWS, 3 * esize);
	}
	rc = -1;
	for (i = 0; i < st->n; i++) {
		const uint32_t *t = &st->trip[3 * i];
		uint32_t v[3];
		int c;

		if (st->label != NULL)
			s = st->label[i];
		else
			s = i < st->split_end[0] ? 0 : i < st->split_end[1] ?
			    1 : 2;
		if (s == DROPPED)
			continue;
		v[0] = final_ent(st, t[0]);
		v[1] = final_rel(st, t[1]);
		v[2] = final_ent(st, t[2]);
		for (c = 0; c < 3; c++) {
			if (st->id64)
				((int64_t *)(void *)buf[s])[3 * k[s] + c] = v[c];
			else
				((int32_t *)(void *)buf[s])[3 * k[s] + c] =
				    (int32_t)v[c];
		}
		if (++k[s] == CHUNK_ROWS) {
			if (kg_npy_writer_append(&w[s], buf[s], k[s]) < 0)
				goto out;
			k[s] = 0;
		}
	}
	for (s = 0; s < 3; s++)
		if (k[s] > 0 && kg_npy_writer_append(&w[s], buf[s], k[s]) < 0)
			goto out;
	rc = 0;
out:
	/* Close every writer; a failed close counts. */
	for (s = 0; s < opened; s++) {
		if (rc == 0) {
			if (kg_npy_writer_close(&w[s]) < 0)
				rc = -1;
		} else
			kg_npy_writer_abort(&w[s]);
		free(buf[s]);
	}
	return rc;
}

/* "id<TAB>name" per line in final-ID order; inv maps final to dictionary
 * IDs (NULL: the same). */
static int
write_names(const char *dir, const char *file, const struct kg_dict *d,
    const uint32_t *inv, uint64_t n)
{
	char *path = kg_path_join(dir, file);
	FILE *f = fopen(path, "w");
	uint64_t i;
	int rc = 0;

	if (f == NULL) {
		kg_error_errno("cannot create '%s'", path);
		free(path);
		return -1;
	}
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	for (i = 0; i < n; i++) {
		fprintf(f, "%" PRIu64 "\t", i);
		fputs(kg_dict_name(d, inv != NULL ? inv[i] : (uint32_t)i), f);
		putc('\n', f);
	}
	if (ferror(f) || fflush(f) != 0 || fsync(fileno(f)) != 0)
		rc = -1;
	if (fclose(f) != 0)
		rc = -1;
	if (rc < 0)
		kg_error_errno("cannot write '%s'", path);
	free(path);
	return rc;
}

/* ---- node types ---- */

static int
read_types(struct ingest *st)
{
	const char *path = st->o->types, *file;
	struct kg_tabread *r;
	struct kg_field f[2];
	size_t nf;
	uint64_t i;
	int rc;

	st->type_of = kg_xmallocarray(st->n_ent + 1, sizeof(*st->type_of));
	for (i = 0; i < st->n_ent; i++)
		st->type_of[i] = -1;
	if (kg_tabread_open(&r, path, &st->o->tab) < 0)
		return -1;
	file = kg_tabread_name(r);
	while ((rc = kg_tabread_next(r, f, 2, &nf)) == 1) {
		uint64_t line = kg_tabread_line(r);
		int64_t e, t;
		const char *why;
		char name[96], old[96];

		if (nf != 2) {
			rc = bad_record(st, file, line, "expected 2 fields "
			    "(entity, type), found %zu", nf);
		} else if (f[0].len == 0 || f[1].len == 0) {
			rc = bad_record(st, file, line, "empty %s field",
			    f[0].len == 0 ? "entity" : "type");
		} else if ((e = kg_dict_find(&st->ent, f[0].s, f[0].len)) < 0 ||
		    final_ent(st, (uint32_t)e) == NONE) {
			st->types_unknown++;
			continue;
		} else if ((t = kg_dict_find(&st->types, f[1].s, f[1].len)) <
		    0 && (why = name_problem(f[1].s, f[1].len)) != NULL) {
			quote_name(name, sizeof(name), f[1].s, f[1].len);
			rc = bad_record(st, file, line, "type '%s' %s", name,
			    why);
		} else {
			uint32_t id = final_ent(st, (uint32_t)e);

			if (st->type_of[id] == -1) {
				/* Type IDs only for types given to entities. */
				if (t < 0 && (t = kg_dict_intern(&st->types,
				    f[1].s, f[1].len, NULL)) < 0)
					goto fail;
				st->type_of[id] = (int32_t)t;
				st->typed++;
				continue;
			}
			if (st->type_of[id] == t)
				continue;
			quote_name(name, sizeof(name), f[0].s, f[0].len);
			quote_name(old, sizeof(old), kg_dict_name(&st->types,
			    (uint32_t)st->type_of[id]), strlen(kg_dict_name(
			    &st->types, (uint32_t)st->type_of[id])));
			rc = bad_record(st, file, line, "entity '%s' already "
			    "has type '%s'", name, old);
		}
		if (rc < 0)
			goto fail;
	}
	if (rc < 0)
		goto fail;
	st->n_types = kg_dict_size(&st->types);
	kg_tabread_close(r);
	return 0;
fail:
	kg_tabread_close(r);
	return -1;
}

/* ---- options ---- */

int
kg_ingest_parse_unseen(const char *s, enum kg_unseen *out)
{
	if (strcmp(s, "keep") == 0)
		*out = KG_UNSEEN_KEEP;
	else if (strcmp(s, "drop") == 0)
		*out = KG_UNSEEN_DROP;
	else if (strcmp(s, "error") == 0)
		*out = KG_UNSEEN_ERROR;
	else {
		kg_error("--unseen: '%s' is not keep, drop or error", s);
		return -1;
	}
	return 0;
}

int
kg_ingest_check_columns(const char *s)
{
	if (strlen(s) != 3 || strchr(s, 'h') == NULL ||
	    strchr(s, 'r') == NULL || strchr(s, 't') == NULL) {
		kg_error("--columns: '%s' is not an order of the letters h, r "
		    "and t (such as hrt or htr)", s);
		return -1;
	}
	return 0;
}

int
kg_ingest_check_split(const double split[3])
{
	double sum = split[0] + split[1] + split[2];
	int k;

	for (k = 0; k < 3; k++) {
		if (!(split[k] >= 0 && split[k] <= 1)) {
			kg_error("--split: fraction %g is not in [0, 1]",
			    split[k]);
			return -1;
		}
	}
	if (fabs(sum - 1) > 1e-9) {
		kg_error("--split: fractions %g,%g,%g sum to %.10g, not 1",
		    split[0], split[1], split[2], sum);
		return -1;
	}
	if (split[0] == 0) {
		kg_error("--split: the train fraction must be positive");
		return -1;
	}
	return 0;
}

/* ---- the manifest ---- */

/* User + system CPU seconds of this process: lines per CPU second is the
 * per-core rate, which wall time on a shared machine is not. */
static double
cpu_seconds(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return 0;
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
	    (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
}

static json_t *
config_json(const struct kg_ingest_opts *o)
{
	static const char *const unseen[] = { "keep", "drop", "error" };
	json_t *c = json_object(), *in;
	char delim[2] = { o->tab.delim, '\0' };
	size_t i;

	json_object_set_new(c, "format", json_string(o->tab.format ==
	    KG_TAB_CSV ? "csv" : "tsv"));
	json_object_set_new(c, "delimiter", json_string(delim));
	json_object_set_new(c, "columns", json_string(o->columns));
	json_object_set_new(c, "header", json_boolean(o->tab.header));
	json_object_set_new(c, "comments", json_boolean(o->tab.comments));
	json_object_set_new(c, "unseen", json_string(unseen[o->unseen]));
	json_object_set_new(c, "dedup", json_boolean(o->dedup));
	json_object_set_new(c, "max_errors", json_integer((json_int_t)
	    o->max_errors));
	json_object_set_new(c, "types", o->types ? json_string(o->types) :
	    json_null());
	if (o->train != NULL) {
		json_object_set_new(c, "train", json_string(o->train));
		json_object_set_new(c, "valid", o->valid ?
		    json_string(o->valid) : json_null());
		json_object_set_new(c, "test", o->test ?
		    json_string(o->test) : json_null());
	} else {
		in = json_array();
		for (i = 0; i < o->n_inputs; i++)
			json_array_append_new(in, json_string(o->inputs[i]));
		json_object_set_new(c, "inputs", in);
	}
	if (o->use_split) {
		json_object_set_new(c, "split", json_pack("[f,f,f]",
		    o->split[0], o->split[1], o->split[2]));
		json_object_set_new(c, "seed", json_integer((json_int_t)
		    o->seed));
	} else
		json_object_set_new(c, "split", json_null());
	return c;
}

static void
set_figures(struct kg_manifest *m, const struct ingest *st, double secs)
{
	json_t *t = json_object(), *d = json_object();

#define FIG(k, v) kg_manifest_set_figure(m, k, json_integer((json_int_t)(v)))
	FIG("entities", st->n_ent);
	FIG("relations", st->n_rel);
	json_object_set_new(t, "train", json_integer((json_int_t)st->count[0]));
	json_object_set_new(t, "valid", json_integer((json_int_t)st->count[1]));
	json_object_set_new(t, "test", json_integer((json_int_t)st->count[2]));
	kg_manifest_set_figure(m, "triples", t);
	FIG("lines", st->lines);
	FIG("records", st->records);
	FIG("comment_lines", st->comments);
	FIG("blank_lines", st->blanks);
	FIG("input_bytes", st->bytes);
	FIG("duplicates", st->dups);
	FIG("unseen_kept", st->unseen_kept);
	json_object_set_new(d, "bad_lines", json_integer((json_int_t)st->bad));
	json_object_set_new(d, "duplicates", json_integer((json_int_t)
	    (st->o->dedup ? st->dups : 0)));
	json_object_set_new(d, "unseen", json_integer((json_int_t)
	    st->unseen_dropped));
	kg_manifest_set_figure(m, "dropped", d);
	if (st->o->types != NULL) {
		FIG("types", st->n_types);
		FIG("typed_entities", st->typed);
		FIG("types_unknown_entities", st->types_unknown);
	}
	kg_manifest_set_figure(m, "id_dtype", json_string(st->id64 ? "int64" :
	    "int32"));
	kg_manifest_set_figure(m, "seconds", json_real(secs));
	kg_manifest_set_figure(m, "read_seconds", json_real(st->t_read -
	    st->t0));
	kg_manifest_set_figure(m, "write_seconds", json_real(st->t_write -
	    st->t_read));
	kg_manifest_set_figure(m, "read_lines_per_second", json_real(
	    st->t_read > st->t0 ? (double)st->lines / (st->t_read - st->t0) :
	    0));
	kg_manifest_set_figure(m, "lines_per_second", json_real(secs > 0 ?
	    (double)st->lines / secs : 0));
	kg_manifest_set_figure(m, "cpu_seconds", json_real(cpu_seconds() -
	    st->cpu0));
	kg_manifest_set_figure(m, "read_cpu_seconds", json_real(st->cpu_read -
	    st->cpu0));
	FIG("peak_rss_kib", kg_peak_rss_kib());
#undef FIG
}

/* ---- the whole run ---- */


static int
read_all(struct ingest *st)
{
	const struct kg_ingest_opts *o = st->o;
	const char *files[3] = { o->train, o->valid, o->test };
	size_t i;
	int s;

	if (o->train != NULL) {
		for (s = 0; s < 3; s++) {
			st->split_begin[s] = st->n;
			if (files[s] != NULL && read_input(st, files[s], s, 0) < 0)
				return -1;
			st->split_end[s] = st->n;
			st->count[s] = st->n - st->split_begin[s];
			if (s == 0) {
				st->train_ent = kg_dict_size(&st->ent);
				st->train_rel = kg_dict_size(&st->rel);
			}
		}
		st->n_ent = kg_dict_size(&st->ent);
		st->n_rel = kg_dict_size(&st->rel);
		if (!o->dedup)
			count_repeats(st);
	} else {
		for (i = 0; i < o->n_inputs; i++)
			if (read_input(st, o->inputs[i], -1, i) < 0)
				return -1;
		if (!o->dedup)
			count_repeats(st);
		if (o->use_split) {
			assign_splits(st);
			if (apply_unseen_split(st) < 0)
				return -1;
			renumber_split(st);
		} else {
			st->split_end[0] = st->count[0] = st->n;
			st->n_ent = kg_dict_size(&st->ent);
			st->n_rel = kg_dict_size(&st->rel);
		}
	}
	if (st->count[0] == 0) {
		kg_error("%s: no training triples", o->train != NULL ?
		    o->train : o->n_inputs == 1 && strcmp(o->inputs[0], "-") ==
		    0 ? "stdin" : o->inputs[0]);
		return -1;
	}
	return 0;
}

static int
write_all(struct ingest *st, struct kg_stage *stage)
{
	static const char *const files[] = { "entities.tsv", "relations.tsv",
	    "train.npy", "valid.npy", "test.npy", "types.npy", "types.tsv" };
	const char *dir = stage->dir;
	size_t i, nfiles = st->o->types != NULL ? 7 : 5;

	st->id64 = st->n_ent > INT32_MAX || st->n_rel > INT32_MAX;
	if (write_names(dir, "entities.tsv", &st->ent, st->inv_e,
	    st->n_ent) < 0 ||
	    write_names(dir, "relations.tsv", &st->rel, st->inv_r,
	    st->n_rel) < 0)
		return -1;
	if (write_triples(st, dir) < 0)
		return -1;
	if (st->o->types != NULL) {
		char *path = kg_path_join(dir, "types.npy");
		uint64_t shape = st->n_ent;
		int rc;

		rc = kg_npy_write(path, KG_DT_I4, 1, &shape, st->type_of);
		free(path);
		if (rc < 0 || write_names(dir, "types.tsv", &st->types, NULL,
		    kg_dict_size(&st->types)) < 0)
			return -1;
	}
	for (i = 0; i < nfiles; i++)
		if (kg_stage_add_file(stage, files[i]) < 0)
			return -1;
	return 0;
}

static void
ingest_release(struct ingest *st)
{
	kg_dict_release(&st->ent);
	kg_dict_release(&st->rel);
	kg_dict_release(&st->types);
	free(st->trip);
	free(st->where);
	free(st->label);
	free(st->perm_e);
	free(st->perm_r);
	free(st->inv_e);
	free(st->inv_r);
	free(st->seen.slots);
	free(st->type_of);
}

/* Every file the options name, for checking the output against. */
static const char **
input_files(const struct kg_ingest_opts *o, size_t *n)
{
	const char **in = kg_xcalloc(o->n_inputs + 4, sizeof(*in));
	size_t i, k = 0;

	in[k++] = o->train;
	in[k++] = o->valid;
	in[k++] = o->test;
	in[k++] = o->types;
	for (i = 0; i < o->n_inputs; i++)
		in[k++] = o->inputs[i];
	*n = k;
	return in;
}

/* Checks of the options that the command line may have skipped. */
static int
check_opts(const struct kg_ingest_opts *o)
{
	if (kg_ingest_check_columns(o->columns) < 0 ||
	    (o->use_split && kg_ingest_check_split(o->split) < 0))
		return -1;
	if (o->use_split && o->unseen == KG_UNSEEN_ERROR &&
	    o->n_inputs >> (64 - LINE_BITS) != 0) {
		kg_error("--unseen error with --split takes at most %d inputs",
		    1 << (64 - LINE_BITS));
		return -1;
	}
	return 0;
}

static void
set_config(struct kg_manifest *m, const struct kg_ingest_opts *o)
{
	json_t *c = config_json(o), *v;
	const char *key;

	json_object_foreach(c, key, v)
		kg_manifest_set_config(m, key, json_incref(v));
	json_decref(c);
}

int
kg_ingest_run(const struct kg_ingest_opts *o)
{
	struct ingest st;
	struct kg_stage stage = KG_STAGE_INIT;
	struct kg_stage_input *in;
	const char **files;
	size_t i, n;
	int k, rc = -1;

	if (check_opts(o) < 0)
		return -1;
	memset(&st, 0, sizeof(st));
	st.o = o;
	kg_dict_init(&st.ent);
	kg_dict_init(&st.rel);
	kg_dict_init(&st.types);
	for (k = 0; k < 3; k++)
		st.col[k] = (int)(strchr(o->columns, "hrt"[k]) - o->columns);
	st.t0 = kg_now();
	st.cpu0 = cpu_seconds();
	st.next_progress = st.t0 + 1.0;
	/* Refuse an existing output, or one holding an input, before
	 * reading anything. */
	files = input_files(o, &n);
	in = kg_xcalloc(n, sizeof(*in));
	for (i = 0; i < n; i++)
		in[i].path = files[i];
	rc = kg_stage_begin(&stage, o->output, o->force, in, n, o->argc,
	    o->argv);
	free(in);
	free(files);
	if (rc < 0)
		goto fail;
	progress_begin(&st);
	if (read_all(&st) < 0)
		goto fail;
	kg_progress_end(&st.prog, progress_units(&st, NULL));
	if (o->types != NULL && read_types(&st) < 0)
		goto fail;
	st.t_read = kg_now();
	st.cpu_read = cpu_seconds();
	if (write_all(&st, &stage) < 0)
		goto fail;
	st.t_write = kg_now();
	set_config(&stage.manifest, o);
	set_figures(&stage.manifest, &st, kg_now() - st.t0);
	if (o->progress)
		fprintf(stderr, "%s: %" PRIu64 " lines, %" PRIu64 " entities, "
		    "%" PRIu64 " relations, %.2f s\n", kg_progname(), st.lines,
		    st.n_ent, st.n_rel, kg_now() - st.t0);
	rc = kg_stage_commit(&stage);
	goto out;
fail:
	rc = -1;
out:
	kg_stage_release(&stage);
	ingest_release(&st);
	return rc;
}
