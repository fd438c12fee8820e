/*
 * gnntrain/valid: validation, early stopping and the training log of GNN
 * training (gnn_train.h, Validation).
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval.h"
#include "gnntrain/train_state.h"
#include "kge/modeldir.h"

/* Filtered valid MRR (both sides, realistic ties) of the current
 * parameters, every node embedded over the problem's graph. */
static int
valid_mrr(struct kg_gnn_tstate *ts, double *mrr)
{
	const struct kg_gnn_problem *p = ts->p;
	struct kg_gnn_trained *out = ts->out;
	struct kg_modeldir md = KG_MODELDIR_INIT;
	struct kg_eval_opts eo = KG_EVAL_OPTS_INIT;
	struct kg_eval_ranks ranks = KG_EVAL_RANKS_INIT;
	struct kg_triples valid;
	struct kg_metrics m[3];
	float *h;
	int rc;

	h = kg_gnn_embed(&out->enc, p->feat, p->n_nodes, p->graph_hrt,
	    p->n_graph);
	md.model = out->dec;
	md.n_entities = p->n_nodes;
	md.n_relations = md.n_rel_rows = p->n_relations;
	md.entities = h;
	md.relations = out->rel;
	valid.n = p->n_valid;
	valid.hrt = p->valid_hrt;
	eo.filter = p->filter;
	eo.threads = omp_get_max_threads();
	rc = kg_eval_rank(&md, &valid, &eo, &ranks);
	if (rc == 0) {
		kg_eval_metrics(&ranks, &valid, -1, KG_TIES_REALISTIC, m);
		*mrr = kg_metrics_mrr(&m[2]);
	}
	kg_eval_ranks_release(&ranks);
	free(h);
	return rc;
}

/* Keep the current parameters aside as the best. */
static void
snapshot(struct kg_gnn_tstate *ts)
{
	const struct kg_gnn_trained *out = ts->out;

	if (ts->best_w == NULL) {
		ts->best_w = kg_xmallocarray(out->enc.n_params + 1,
		    sizeof(float));
		ts->best_rel = kg_xmallocarray(ts->n_rel_f + 1, sizeof(float));
	}
	memcpy(ts->best_w, out->enc.w, out->enc.n_params * sizeof(float));
	memcpy(ts->best_rel, out->rel, ts->n_rel_f * sizeof(float));
}

/* Validate when due; *mrr gets the MRR, NaN when not validated.  A new
 * best at or above the target MRR, or patience running out, sets
 * stopped_by. */
static int
validate(struct kg_gnn_tstate *ts, double *mrr)
{
	const struct kg_gnn_train_opts *o = ts->o;
	struct kg_gnn_trained *out = ts->out;
	uint32_t e = ts->epoch;

	*mrr = NAN;
	if (o->valid_every == 0 || (e % o->valid_every != 0 &&
	    e != o->epochs))
		return 0;
	if (valid_mrr(ts, mrr) < 0)
		return -1;
	if (*mrr > out->best_valid_mrr) {
		out->best_valid_mrr = *mrr;
		out->best_epoch = e;
		ts->bad_rounds = 0;
		snapshot(ts);
		if (o->target_mrr > 0.0 && *mrr >= o->target_mrr)
			out->stopped_by = "target_mrr";
	} else if (++ts->bad_rounds >= o->patience && o->patience > 0)
		out->stopped_by = "early_stopping";
	return 0;
}

int
kg_gnn_epoch_end(struct kg_gnn_tstate *ts, double secs)
{
	const struct kg_gnn_trained *out = ts->out;
	double mrr;
	char *line;

	if (validate(ts, &mrr) < 0)
		return -1;
	line = kg_xasprintf("{\"epoch\": %u, \"step\": %llu, \"loss\": %.9g, "
	    "\"seconds\": %.3f", ts->epoch, (unsigned long long)out->steps,
	    out->last_loss, secs);
	kg_strbuf_add(&ts->log, line);
	free(line);
	if (!isnan(mrr)) {
		line = kg_xasprintf(", \"valid_mrr\": %.6f", mrr);
		kg_strbuf_add(&ts->log, line);
		free(line);
		if (!ts->o->quiet && ts->d->rank == 0)
			fprintf(stderr, "%s: epoch %u valid MRR %.4f\n",
			    kg_progname(), ts->epoch, mrr);
	}
	kg_strbuf_add(&ts->log, "}\n");
	return 0;
}

void
kg_gnn_keep_best(struct kg_gnn_tstate *ts)
{
	struct kg_gnn_trained *out = ts->out;

	if (ts->best_w == NULL || out->best_epoch == ts->epoch)
		return;
	memcpy(out->enc.w, ts->best_w, out->enc.n_params * sizeof(float));
	memcpy(out->rel, ts->best_rel, ts->n_rel_f * sizeof(float));
	if (!ts->o->quiet && ts->d->rank == 0)
		fprintf(stderr, "%s: keeping the parameters of epoch %u (valid "
		    "MRR %.4f)\n", kg_progname(), out->best_epoch,
		    out->best_valid_mrr);
}

void
kg_gnn_valid_release(struct kg_gnn_tstate *ts)
{
	free(ts->best_w);
	free(ts->best_rel);
	ts->best_w = ts->best_rel = NULL;
}
