#include "graph/expand.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "attrs/features.h"
#include "io/npy.h"
#include "core/progress.h"
#include "core/util.h"

#define UNSEEN 255

static void
group_by(uint64_t n, const int32_t *key, uint32_t nkeys, uint64_t **offp,
    uint32_t **itemp)
{
	uint64_t *off = kg_xcalloc((uint64_t)nkeys + 1, sizeof(*off));
	uint64_t *pos = kg_xmallocarray(nkeys, sizeof(*pos));
	uint32_t *item = kg_xmallocarray(n ? n : 1, sizeof(*item));
	uint64_t i;

	for (i = 0; i < n; i++)
		off[key[i] + 1]++;
	for (i = 0; i < nkeys; i++)
		off[i + 1] += off[i];
	memcpy(pos, off, nkeys * sizeof(*pos));
	for (i = 0; i < n; i++)
		item[pos[key[i]]++] = (uint32_t)i;
	free(pos);
	*offp = off;
	*itemp = item;
}

int
kg_expand_init(struct kg_expand *x, uint64_t n_nodes, const int32_t *hrt,
    uint64_t n_edges, const int32_t *node_part, const int32_t *edge_part,
    uint32_t nparts)
{
	uint64_t v, maxdeg = 0;

	memset(x, 0, sizeof(*x));
	if (n_nodes >= INT32_MAX || n_edges >= INT32_MAX) {
		kg_error("graph too large for 32-bit local IDs");
		return -1;
	}
	if (kg_incidence_build(&x->inc, n_nodes, hrt, n_edges) < 0)
		return -1;
	x->n_nodes = n_nodes;
	x->n_edges = n_edges;
	x->nparts = nparts;
	x->hrt = hrt;
	x->node_part = node_part;
	x->edge_part = edge_part;
	group_by(n_edges, edge_part, nparts, &x->core_off, &x->core);
	group_by(n_nodes, node_part, nparts, &x->own_off, &x->own);
	x->dist = kg_xmallocarray(n_nodes ? n_nodes : 1, 1);
	memset(x->dist, UNSEEN, n_nodes);
	x->local = kg_xmallocarray(n_nodes ? n_nodes : 1, sizeof(*x->local));
	memset(x->local, 0xff, n_nodes * sizeof(*x->local));
	x->taken = kg_xcalloc(n_edges ? n_edges : 1, 1);
	for (v = 0; v < n_nodes; v++)
		if (x->inc.off[v + 1] - x->inc.off[v] > maxdeg)
			maxdeg = x->inc.off[v + 1] - x->inc.off[v];
	x->sample_cap = maxdeg ? maxdeg : 1;
	x->sample = kg_xmallocarray(x->sample_cap, sizeof(*x->sample));
	x->radix = kg_xmallocarray(65536, sizeof(*x->radix));
	return 0;
}

void
kg_expand_release(struct kg_expand *x)
{
	kg_incidence_release(&x->inc);
	free(x->core_off);
	free(x->core);
	free(x->own_off);
	free(x->own);
	free(x->dist);
	free(x->local);
	free(x->taken);
	free(x->sample);
	free(x->radix);
	free(x->radix_tmp);
	memset(x, 0, sizeof(*x));
}

void
kg_expand_part_release(struct kg_expand_part *xp)
{
	free(xp->nodes);
	free(xp->hops);
	free(xp->hrt);
	free(xp->edge_ids);
	free(xp->core_mask);
	memset(xp, 0, sizeof(*xp));
}

static void
add_node(struct kg_expand *x, struct kg_expand_part *xp, uint32_t v,
    uint8_t hop)
{
	if (xp->n_nodes == xp->cap_nodes) {
		xp->cap_nodes = xp->cap_nodes ? 2 * xp->cap_nodes : 1024;
		xp->nodes = kg_xreallocarray(xp->nodes, xp->cap_nodes,
		    sizeof(*xp->nodes));
		xp->hops = kg_xreallocarray(xp->hops, xp->cap_nodes, 1);
	}
	x->dist[v] = hop;
	xp->nodes[xp->n_nodes] = (int32_t)v;
	xp->hops[xp->n_nodes++] = hop;
}

static void
add_edge(struct kg_expand *x, struct kg_expand_part *xp, uint32_t e)
{
	if (xp->n_edges == xp->cap_edges) {
		xp->cap_edges = xp->cap_edges ? 2 * xp->cap_edges : 1024;
		xp->edge_ids = kg_xreallocarray(xp->edge_ids, xp->cap_edges,
		    sizeof(*xp->edge_ids));
	}
	x->taken[e] = 1;
	xp->edge_ids[xp->n_edges++] = (int32_t)e;
}

static int
cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return (x > y) - (x < y);
}

/*
 * Sort n non-negative IDs.  Large runs take two counting passes over 16
 * bits each (linear, and the profile on 10 million triples showed qsort
 * taking over half of the time); small ones use qsort, which is cheaper
 * than clearing the 2^16 counters.
 */
static void
sort_ids(struct kg_expand *x, int32_t *a, uint64_t n)
{
	uint64_t *cnt = x->radix, i, sum;
	int32_t *tmp;
	int shift;

	if (n < 2)		/* a may be NULL when n is 0 */
		return;
	if (n < 65536) {
		qsort(a, n, sizeof(*a), cmp_i32);
		return;
	}
	if (n > x->radix_cap) {
		x->radix_tmp = kg_xreallocarray(x->radix_tmp, n,
		    sizeof(*x->radix_tmp));
		x->radix_cap = n;
	}
	tmp = x->radix_tmp;
	for (shift = 0; shift < 32; shift += 16) {
		int32_t *src = shift ? tmp : a, *dst = shift ? a : tmp;

		memset(cnt, 0, 65536 * sizeof(*cnt));
		for (i = 0; i < n; i++)
			cnt[((uint32_t)src[i] >> shift) & 0xffff]++;
		for (i = 0, sum = 0; i < 65536; i++) {
			uint64_t c = cnt[i];

			cnt[i] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++) {
			uint32_t key = ((uint32_t)src[i] >> shift) & 0xffff;

			dst[cnt[key]++] = src[i];
		}
	}
}

/*
 * The triples node v takes from its incidence list (deg of them) with a
 * cap: cap drawn without replacement (a partial Fisher-Yates shuffle:
 * the first cap slots are a uniform sample), or with cap_new every
 * triple whose other end is in the part already and cap of those that
 * would add a node.  Returns the count, the triples in x->sample.
 */
static uint64_t
capped_list(struct kg_expand *x, uint32_t v, const uint32_t *list,
    uint64_t deg, uint32_t cap, int cap_new, struct kg_rng *rng)
{
	uint32_t *sm = x->sample;
	uint64_t j, nfree = 0, nnew, k;

	if (!cap_new)
		memcpy(sm, list, deg * sizeof(*list));
	else {
		/* Free triples first, in list order, then the others. */
		for (j = 0; j < deg; j++)
			if (x->dist[kg_incidence_other(x->hrt, list[j], v)] !=
			    UNSEEN)
				sm[nfree++] = list[j];
		k = nfree;
		for (j = 0; j < deg; j++)
			if (x->dist[kg_incidence_other(x->hrt, list[j], v)] ==
			    UNSEEN)
				sm[k++] = list[j];
		sm += nfree;
	}
	nnew = deg - nfree;
	if (nnew <= cap)
		return deg;
	for (j = 0; j < cap; j++) {
		uint64_t r = j + kg_rng_below(rng, nnew - j);
		uint32_t tmp = sm[j];

		sm[j] = sm[r];
		sm[r] = tmp;
	}
	return nfree + cap;
}

/* Take triples around the hop-"hop" entities nodes[lo, hi). */
static void
expand_hop(struct kg_expand *x, struct kg_expand_part *xp, uint64_t lo,
    uint64_t hi, uint8_t hop, uint32_t cap, int cap_new, struct kg_rng *rng)
{
	uint64_t i, j;

	for (i = lo; i < hi; i++) {
		uint32_t v = (uint32_t)xp->nodes[i];
		const uint32_t *list = x->inc.edge + x->inc.off[v];
		uint64_t deg = x->inc.off[v + 1] - x->inc.off[v], take = deg;

		if (cap && deg > cap) {
			take = capped_list(x, v, list, deg, cap, cap_new, rng);
			list = x->sample;
		}
		for (j = 0; j < take; j++) {
			uint32_t e = list[j];
			uint32_t u = kg_incidence_other(x->hrt, e, v);

			if (x->dist[u] == UNSEEN)
				add_node(x, xp, u, (uint8_t)(hop + 1));
			if (!x->taken[e])
				add_edge(x, xp, e);
		}
	}
}

int
kg_expand_part(struct kg_expand *x, uint32_t part,
    const struct kg_expand_opts *o, struct kg_expand_part *xp)
{
	struct kg_rng rng;
	uint64_t i, lo, hi, ncore;
	uint32_t h;

	if (part >= x->nparts || o->hops > KG_EXPAND_MAX_HOPS ||
	    (o->nfanout != 0 && o->nfanout != o->hops)) {
		kg_error("bad expansion request (part %" PRIu32 ", %" PRIu32
		    " hops, %" PRIu32 " fan-outs)", part, o->hops, o->nfanout);
		return -1;
	}
	kg_rng_stream(&rng, o->seed, KG_STREAM_EXPAND, part, 0, 0, 0);
	xp->part = part;
	xp->n_nodes = xp->n_edges = 0;

	/* Seeds: owned entities and the endpoints of core triples. */
	for (i = x->own_off[part]; i < x->own_off[part + 1]; i++)
		add_node(x, xp, x->own[i], 0);
	for (i = x->core_off[part]; i < x->core_off[part + 1]; i++) {
		uint32_t e = x->core[i];
		uint32_t a = (uint32_t)x->hrt[3 * (uint64_t)e];
		uint32_t b = (uint32_t)x->hrt[3 * (uint64_t)e + 2];

		if (x->dist[a] == UNSEEN)
			add_node(x, xp, a, 0);
		if (x->dist[b] == UNSEEN)
			add_node(x, xp, b, 0);
		add_edge(x, xp, e);
	}
	ncore = xp->n_edges;
	sort_ids(x, xp->nodes, xp->n_nodes);
	xp->n_seeds = xp->n_nodes;

	lo = 0;
	for (h = 0; h < o->hops; h++) {
		hi = xp->n_nodes;
		expand_hop(x, xp, lo, hi, (uint8_t)h,
		    o->nfanout ? o->fanout[h] : 0, o->cap_new, &rng);
		/* Discovery order is deterministic; sorting each hop by
		 * global ID just makes local IDs easier to read. */
		sort_ids(x, xp->nodes + hi, xp->n_nodes - hi);
		lo = hi;
	}
	sort_ids(x, xp->edge_ids + ncore, xp->n_edges - ncore);

	for (i = 0; i < xp->n_nodes; i++)
		x->local[xp->nodes[i]] = (int32_t)i;
	xp->hrt = kg_xreallocarray(xp->hrt,
	    xp->cap_edges ? 3 * xp->cap_edges : 3, sizeof(*xp->hrt));
	xp->core_mask = kg_xreallocarray(xp->core_mask,
	    xp->cap_edges ? xp->cap_edges : 1, 1);
	for (i = 0; i < xp->n_edges; i++) {
		uint64_t e = (uint64_t)xp->edge_ids[i];

		xp->hrt[3 * i] = x->local[x->hrt[3 * e]];
		xp->hrt[3 * i + 1] = x->hrt[3 * e + 1];
		xp->hrt[3 * i + 2] = x->local[x->hrt[3 * e + 2]];
		xp->core_mask[i] = i < ncore;
		x->taken[e] = 0;
	}
	xp->n_core = ncore;
	/* Leave the scratch arrays clean for the next part. */
	for (i = 0; i < xp->n_nodes; i++) {
		x->dist[xp->nodes[i]] = UNSEEN;
		x->local[xp->nodes[i]] = -1;
	}
	return 0;
}

void
kg_expand_stats_release(struct kg_expand_stats *st)
{
	free(st->part_nodes);
	free(st->part_edges);
	free(st->part_core);
	free(st->part_seeds);
	memset(st, 0, sizeof(*st));
}

/* ---- feature slicing ---- */

/* The arrays of a feature directory that are sliced (attrs/features.h's
 * reader classifies them). */
static size_t
n_sliced(const struct kg_features_dir *fd)
{
	size_t i, k = 0;

	for (i = 0; i < fd->n_arrays; i++)
		k += fd->arr[i].kind != KG_FEATURES_OTHER;
	return k;
}

/* Open "dir", warning about the arrays it cannot slice; asked for
 * features but finding none that fit is a wrong directory. */
static int
features_open(struct kg_features_dir *fd, const char *dir,
    uint64_t n_entities)
{
	size_t i;

	if (kg_features_dir_open(fd, dir, n_entities) < 0)
		return -1;
	for (i = 0; i < fd->n_arrays; i++)
		if (fd->arr[i].kind == KG_FEATURES_OTHER)
			kg_warn("%s/%s: first dimension is not the %" PRIu64
			    " entities and it is no CSR group; not sliced",
			    dir, fd->arr[i].name, n_entities);
	if (n_sliced(fd) == 0) {
		kg_error("'%s' has no array indexed by the %" PRIu64
		    " entities", dir, n_entities);
		kg_features_dir_release(fd);
		return -1;
	}
	return 0;
}

/* Rows of part xp's nodes; offsets rebased to the part's entries. */
static void
slice_offsets(struct kg_npy_writer *w, const struct kg_npy *off,
    const struct kg_expand_part *xp)
{
	int64_t acc = 0;
	int32_t acc32 = 0;
	uint64_t k;

	if (off->dtype == KG_DT_I8)
		kg_npy_writer_append(w, &acc, 1);
	else
		kg_npy_writer_append(w, &acc32, 1);
	for (k = 0; k < xp->n_nodes; k++) {
		uint64_t g = (uint64_t)xp->nodes[k];

		acc += (int64_t)(kg_features_offset(off, g + 1) -
		    kg_features_offset(off, g));
		if (off->dtype == KG_DT_I8) {
			kg_npy_writer_append(w, &acc, 1);
		} else {
			acc32 = (int32_t)acc;
			kg_npy_writer_append(w, &acc32, 1);
		}
	}
}

static int
write_slices(const struct kg_features_dir *fd,
    const struct kg_expand_part *xp, const char *outdir)
{
	size_t i;
	uint64_t k;

	for (i = 0; i < fd->n_arrays; i++) {
		const struct kg_features_array *f = &fd->arr[i];
		struct kg_npy_writer w;
		char *path;
		const char *base = f->a.data;
		int rc;

		if (f->kind == KG_FEATURES_OTHER)
			continue;
		path = kg_path_join(outdir, f->name);
		rc = kg_npy_writer_open(&w, path, f->a.dtype, f->a.ndim,
		    f->a.shape + 1);
		free(path);
		if (rc < 0)
			return -1;
		if (f->kind == KG_FEATURES_ROWS) {
			for (k = 0; k < xp->n_nodes; k++)
				kg_npy_writer_append(&w, base +
				    (uint64_t)xp->nodes[k] * f->row_bytes, 1);
		} else if (f->kind == KG_FEATURES_CSR_OFFSETS) {
			slice_offsets(&w, &f->a, xp);
		} else {
			const struct kg_npy *off = &fd->arr[f->group].a;

			for (k = 0; k < xp->n_nodes; k++) {
				uint64_t g = (uint64_t)xp->nodes[k];
				uint64_t a = kg_features_offset(off, g);
				uint64_t b = kg_features_offset(off, g + 1);

				if (b > a)
					kg_npy_writer_append(&w,
					    base + a * f->row_bytes, b - a);
			}
		}
		if (kg_npy_writer_close(&w) < 0)
			return -1;
	}
	return 0;
}

/* ---- writing parts ---- */

/* Record pdir/name, written already, in the part's manifest pm and, as
 * "pname/name", in the top-level manifest m. */
static int
record(const char *pdir, const char *pname, struct kg_manifest *pm,
    struct kg_manifest *m, const char *top, const char *name)
{
	char *rel = kg_xasprintf("%s/%s", pname, name);
	int rc = kg_manifest_add_file(pm, pdir, name);

	if (rc == 0)
		rc = kg_manifest_add_file(m, top, rel);
	free(rel);
	return rc;
}

static int
put(const char *pdir, const char *pname, struct kg_manifest *pm,
    struct kg_manifest *m, const char *top, const char *name,
    enum kg_dtype dt, int ndim, const uint64_t *shape, const void *data)
{
	int rc = kg_manifest_put_npy(NULL, pdir, name, dt, ndim, shape, data);

	if (rc == 0)
		rc = record(pdir, pname, pm, m, top, name);
	return rc;
}

/* The part's slices of the feature directory, in pdir/features/. */
static int
write_features(const struct kg_features_dir *fs,
    const struct kg_expand_part *xp, const char *pdir, const char *pname,
    struct kg_manifest *pm, struct kg_manifest *m, const char *top)
{
	char *fdir = kg_path_join(pdir, "features"), *name;
	size_t i;
	int rc = -1;

	if (mkdir(fdir, 0755) != 0)
		kg_error_errno("cannot create '%s'", fdir);
	else
		rc = write_slices(fs, xp, fdir);
	for (i = 0; rc == 0 && i < fs->n_arrays; i++) {
		if (fs->arr[i].kind == KG_FEATURES_OTHER)
			continue;
		name = kg_xasprintf("features/%s", fs->arr[i].name);
		rc = record(pdir, pname, pm, m, top, name);
		free(name);
	}
	free(fdir);
	return rc;
}

static int
write_part(const struct kg_expand *x, const struct kg_expand_part *xp,
    const struct kg_features_dir *fs, const char *top, struct kg_manifest *m,
    int argc, char *const argv[], const struct kg_expand_opts *o)
{
	struct kg_manifest pm = KG_MANIFEST_INIT;
	char *pname = kg_xasprintf("part-%03" PRIu32, xp->part);
	char *pdir;
	uint64_t nn[1] = { xp->n_nodes }, ns[1] = { xp->n_seeds };
	uint64_t ne[1] = { xp->n_edges }, tri[2] = { xp->n_edges, 3 };
	int32_t *pool, *owner;
	uint64_t i;
	int rc = -1;

	pdir = kg_path_join(top, pname);
	if (mkdir(pdir, 0755) != 0) {
		kg_error_errno("cannot create '%s'", pdir);
		free(pname);
		free(pdir);
		return -1;
	}
	kg_manifest_init(&pm, argc, argv);
	pool = kg_xmallocarray(xp->n_seeds ? xp->n_seeds : 1, sizeof(*pool));
	for (i = 0; i < xp->n_seeds; i++)
		pool[i] = (int32_t)i;
	owner = kg_xmallocarray(xp->n_nodes ? xp->n_nodes : 1, sizeof(*owner));
	for (i = 0; i < xp->n_nodes; i++)
		owner[i] = x->node_part[xp->nodes[i]];
	if (put(pdir, pname, &pm, m, top, "nodes.npy", KG_DT_I4, 1, nn,
	    xp->nodes) < 0 ||
	    put(pdir, pname, &pm, m, top, "hops.npy", KG_DT_U1, 1, nn,
	    xp->hops) < 0 ||
	    put(pdir, pname, &pm, m, top, "owner.npy", KG_DT_I4, 1, nn,
	    owner) < 0 ||
	    put(pdir, pname, &pm, m, top, "neg_pool.npy", KG_DT_I4, 1, ns,
	    pool) < 0 ||
	    put(pdir, pname, &pm, m, top, "edges.npy", KG_DT_I4, 2, tri,
	    xp->hrt) < 0 ||
	    put(pdir, pname, &pm, m, top, "edge_ids.npy", KG_DT_I4, 1, ne,
	    xp->edge_ids) < 0 ||
	    put(pdir, pname, &pm, m, top, "core_mask.npy", KG_DT_U1, 1, ne,
	    xp->core_mask) < 0)
		goto out;
	if (n_sliced(fs) > 0 &&
	    write_features(fs, xp, pdir, pname, &pm, m, top) < 0)
		goto out;
	kg_manifest_set_config(&pm, "hops", json_integer(o->hops));
	if (o->cap_new)
		kg_manifest_set_config(&pm, "cap_new", json_true());
	kg_manifest_set_figure(&pm, "part", json_integer(xp->part));
	kg_manifest_set_figure_u64(&pm, "nodes", xp->n_nodes);
	kg_manifest_set_figure_u64(&pm, "seeds", xp->n_seeds);
	kg_manifest_set_figure_u64(&pm, "edges", xp->n_edges);
	kg_manifest_set_figure_u64(&pm, "core_edges", xp->n_core);
	if (kg_manifest_write(&pm, pdir) < 0)
		goto out;
	rc = record(pdir, pname, &pm, m, top, "manifest.json");
out:
	kg_manifest_release(&pm);
	free(pool);
	free(owner);
	free(pname);
	free(pdir);
	return rc;
}

static double
max_over_mean(const uint64_t *x, uint32_t n)
{
	uint64_t max = 0, sum = 0;
	uint32_t i;

	for (i = 0; i < n; i++) {
		sum += x[i];
		max = x[i] > max ? x[i] : max;
	}
	return sum ? (double)max * n / (double)sum : 1.0;
}

/* The line of a part done, with the rate and the time left at the mean
 * time per part so far (lib/core/progress.h's duration). */
static void
part_line(uint32_t p, uint32_t P, const struct kg_expand_part *xp, double t0)
{
	double secs = kg_now() - t0;
	char eta[32];

	kg_progress_duration(eta, sizeof(eta), secs / (p + 1) * (P - p - 1));
	fprintf(stderr, "%s: part %" PRIu32 "/%" PRIu32 ": %" PRIu64
	    " entities, %" PRIu64 " triples (%.1f s, %.2f parts/s, eta %s)\n",
	    kg_progname(), p + 1, P, xp->n_nodes, xp->n_edges, secs,
	    secs > 0 ? (p + 1) / secs : 0.0, eta);
}

int
kg_expand_write_all(struct kg_expand *x, const struct kg_expand_opts *o,
    const char *dir, const char *features, struct kg_manifest *m,
    int argc, char *const argv[], int progress, struct kg_expand_stats *st)
{
	struct kg_expand_part xp = KG_EXPAND_PART_INIT;
	struct kg_features_dir fs = KG_FEATURES_DIR_INIT;
	uint32_t p, P = x->nparts;
	double t0 = kg_now();
	int rc = -1;

	memset(st, 0, sizeof(*st));
	if (features != NULL && features_open(&fs, features, x->n_nodes) < 0)
		return -1;
	st->nparts = P;
	st->part_nodes = kg_xcalloc(P, sizeof(uint64_t));
	st->part_edges = kg_xcalloc(P, sizeof(uint64_t));
	st->part_core = kg_xcalloc(P, sizeof(uint64_t));
	st->part_seeds = kg_xcalloc(P, sizeof(uint64_t));
	for (p = 0; p < P; p++) {
		if (kg_expand_part(x, p, o, &xp) < 0 ||
		    write_part(x, &xp, &fs, dir, m, argc, argv, o) < 0)
			goto out;
		st->part_nodes[p] = xp.n_nodes;
		st->part_edges[p] = xp.n_edges;
		st->part_core[p] = xp.n_core;
		st->part_seeds[p] = xp.n_seeds;
		st->sum_nodes += xp.n_nodes;
		st->sum_edges += xp.n_edges;
		if (progress)
			part_line(p, P, &xp, t0);
	}
	st->node_replication = x->n_nodes ?
	    (double)st->sum_nodes / (double)x->n_nodes : 0.0;
	st->edge_replication = x->n_edges ?
	    (double)st->sum_edges / (double)x->n_edges : 0.0;
	st->node_max_over_mean = max_over_mean(st->part_nodes, P);
	st->edge_max_over_mean = max_over_mean(st->part_edges, P);
	st->seconds = kg_now() - t0;

	kg_manifest_set_figure(m, "nparts", json_integer(P));
	kg_manifest_set_figure_u64(m, "entities", x->n_nodes);
	kg_manifest_set_figure_u64(m, "train_triples", x->n_edges);
	kg_manifest_set_figure(m, "nodes_per_part",
	    kg_json_u64_array(st->part_nodes, P));
	kg_manifest_set_figure(m, "seeds_per_part",
	    kg_json_u64_array(st->part_seeds, P));
	kg_manifest_set_figure(m, "edges_per_part",
	    kg_json_u64_array(st->part_edges, P));
	kg_manifest_set_figure(m, "core_edges_per_part",
	    kg_json_u64_array(st->part_core, P));
	kg_manifest_set_figure(m, "node_replication",
	    json_real(st->node_replication));
	kg_manifest_set_figure(m, "edge_replication",
	    json_real(st->edge_replication));
	kg_manifest_set_figure(m, "nodes_max_over_mean",
	    json_real(st->node_max_over_mean));
	kg_manifest_set_figure(m, "edges_max_over_mean",
	    json_real(st->edge_max_over_mean));
	kg_manifest_set_figure_u64(m, "features_sliced", n_sliced(&fs));
	kg_manifest_set_figure(m, "seconds", json_real(st->seconds));
	rc = 0;
out:
	kg_expand_part_release(&xp);
	kg_features_dir_release(&fs);
	return rc;
}

void
kg_expand_print_stats(const struct kg_expand_stats *st, FILE *fp)
{
	uint32_t p;

	fprintf(fp, "%-6s %12s %12s %12s %12s\n", "part", "entities", "seeds",
	    "triples", "core");
	for (p = 0; p < st->nparts; p++)
		fprintf(fp, "%-6" PRIu32 " %12" PRIu64 " %12" PRIu64 " %12"
		    PRIu64 " %12" PRIu64 "\n", p, st->part_nodes[p],
		    st->part_seeds[p], st->part_edges[p], st->part_core[p]);
	fprintf(fp, "replication: entities %.4f, triples %.4f\n",
	    st->node_replication, st->edge_replication);
	fprintf(fp, "largest part / mean: entities %.4f, triples %.4f\n",
	    st->node_max_over_mean, st->edge_max_over_mean);
	fprintf(fp, "time: %.3f s\n", st->seconds);
}
