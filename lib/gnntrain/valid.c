/*
 * gnntrain/valid: the validation and snapshot hooks of GNN training's
 * epoch loop (gnn_train.h, Validation; kge/epochs.h).
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
int
kg_gnn_valid_mrr(struct kg_gnn_tstate *ts, double *mrr)
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

int
kg_gnn_snapshot(struct kg_gnn_tstate *ts, int back)
{
	struct kg_gnn_trained *out = ts->out;
	int rc;

	if (ts->best_w == NULL) {
		ts->best_w = kg_xmallocarray(ts->n_dense + 1, sizeof(float));
		ts->best_rel = kg_xmallocarray(ts->n_rel_f + 1, sizeof(float));
	}
	/* The learned rows through their store (which wants them
	 * unpinned), the rest copied here. */
	kg_gnn_learned_unpin(ts, 1);
	rc = back ? kg_store_restore(ts->learn) : kg_store_snapshot(ts->learn);
	if (kg_gnn_learned_pin(ts) < 0 || rc < 0)
		return -1;
	if (back) {
		memcpy(out->enc.w + ts->n_lf, ts->best_w, ts->n_dense *
		    sizeof(float));
		memcpy(out->rel, ts->best_rel, ts->n_rel_f * sizeof(float));
	} else {
		memcpy(ts->best_w, out->enc.w + ts->n_lf, ts->n_dense *
		    sizeof(float));
		memcpy(ts->best_rel, out->rel, ts->n_rel_f * sizeof(float));
	}
	return 0;
}

void
kg_gnn_valid_release(struct kg_gnn_tstate *ts)
{
	free(ts->best_w);
	free(ts->best_rel);
	ts->best_w = ts->best_rel = NULL;
}
