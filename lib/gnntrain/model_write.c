/*
 * gnntrain/model_write: the model directory of a GNN training run; see
 * train_io.h.  kg-eval ranks it as a shallow model (entities.npy,
 * relations.npy, config model = the decoder); gnn_weights.npy and the
 * gnn_* config keys describe the encoder.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "gnntrain/train_io.h"
#include "kge/modeldir.h"
#include "kge/train.h"

/* The settings that do not depend on training (config_json less the
 * encoder's derived sizes). */
json_t *
kg_gnn_settings_json(const struct kg_gnn_train_opts *o,
    const struct kg_gnn_run *r, int nranks)
{
	json_t *c = json_object(), *dims = json_array();
	uint32_t l;

	for (l = 0; l <= o->enc.n_layers; l++)
		json_array_append_new(dims, json_integer(o->enc.dims[l]));
	json_object_set_new(c, "encoder",
	    json_string(kg_gnn_encoder_name(o->enc.encoder)));
	json_object_set_new(c, "gnn_layers", json_integer(o->enc.n_layers));
	json_object_set_new(c, "gnn_dims", dims);
	json_object_set_new(c, "gnn_decomposition", json_string(
	    o->enc.decomp == KG_GNN_BASIS ? "basis" : "block"));
	json_object_set_new(c, "dropout", json_real(o->enc.dropout));
	json_object_set_new(c, "edge_dropout", json_real(o->edge_dropout));
	json_object_set_new(c, "loss", json_string(kg_loss_name(o->loss.kind)));
	json_object_set_new(c, "lr", json_real(o->lr));
	if (o->batches_per_epoch > 0) {
		static const char *const sc[3] = { "none", "sqrt", "linear" };

		json_object_set_new(c, "batches_per_epoch",
		    json_integer(o->batches_per_epoch));
		json_object_set_new(c, "lr_scale_ranks",
		    json_string(sc[o->lr_scale]));
	}
	if (o->neg_chunk > 0)
		json_object_set_new(c, "neg_chunk_size",
		    json_integer(o->neg_chunk));
	if (o->pool_seeds)
		json_object_set_new(c, "neg_pool_seeds", json_true());
	if (o->neg_exchange)
		json_object_set_new(c, "neg_exchange", json_true());
	if (o->blocks)
		json_object_set_new(c, "blocks", json_true());
	if (o->valid_every > 0) {
		json_object_set_new(c, "valid_every",
		    json_integer(o->valid_every));
		json_object_set_new(c, "patience", json_integer(o->patience));
	}
	json_object_set_new(c, "time_budget", json_real(o->time_budget));
	json_object_set_new(c, "target_mrr", json_real(o->target_mrr));
	json_object_set_new(c, "regularization_coef", json_real(o->reg));
	json_object_set_new(c, "batch_size", json_integer(o->batch_size));
	json_object_set_new(c, "neg_sample_size", json_integer(o->neg));
	json_object_set_new(c, "neg_candidates",
	    json_integer(o->neg_candidates));
	json_object_set_new(c, "epochs", json_integer(o->epochs));
	json_object_set_new(c, "seed", json_integer((json_int_t)o->seed));
	json_object_set_new(c, "ranks", json_integer(nranks));
	if (o->nfanout > 0) {
		json_t *f = json_array();

		for (l = 0; l < o->nfanout; l++)
			json_array_append_new(f, json_integer(o->fanout[l]));
		json_object_set_new(c, "fanout", f);
	}
	if (r->features != NULL)
		json_object_set_new(c, "features", json_string(r->features));
	if (r->expanded != NULL)
		json_object_set_new(c, "expanded", json_string(r->expanded));
	return c;
}

static json_t *
config_json(const struct kg_gnn_train_opts *o, const struct kg_gnn_run *r,
    const struct kg_gnn_trained *t, int nranks)
{
	json_t *c = kg_gnn_settings_json(o, r, nranks);

	json_object_set_new(c, "gnn_num_bases", json_integer(t->enc.c.n_bases));
	json_object_set_new(c, "gnn_learned_only",
	    json_boolean(t->enc.c.learned_only));
	json_object_set_new(c, "gnn_n_params", json_integer(
	    (json_int_t)t->enc.n_params));
	if (o->warm != NULL)
		json_object_set_new(c, o->warm->given ? "init_entities" :
		    "init_from", kg_gnn_warm_json(o->warm, o->epochs > 0));
	if (o->ckpt != NULL && o->ckpt->changes != NULL)
		json_object_set(c, "resumed_with_changes", o->ckpt->changes);
	return c;
}

/* The run's figures: loss, times, what a step encoded, peak RSS (each
 * rank's at the end of training, rank 0's total with the final
 * embedding). */
static const char *const phase_names[KG_GNN_PHASES] = { "draw", "sample",
    "forward", "decode", "backward", "update" };

static json_t *
figures_json(const struct kg_gnn_train_opts *o,
    const struct kg_gnn_trained *t, int nranks, const uint64_t *rss,
    double t_emb)
{
	json_t *f = json_object(), *a;
	uint32_t l;
	int k;

	json_object_set_new(f, "final_loss", json_real(t->last_loss));
	if (t->stopped_by != NULL)
		json_object_set_new(f, "stopped_by",
		    json_string(t->stopped_by));
	if (t->best_valid_mrr >= 0.0) {
		json_object_set_new(f, "best_valid_mrr",
		    json_real(t->best_valid_mrr));
		json_object_set_new(f, "best_epoch",
		    json_integer(t->best_epoch));
	}
	json_object_set_new(f, "epochs", json_integer(t->epochs_run));
	/* Steps on a device say which; the CPU path's manifest is as it
	 * was. */
	if (t->device[0] != '\0') {
		json_object_set_new(f, "device", json_string(t->device));
		json_object_set_new(f, "backend", json_string(t->backend));
		json_object_set_new(f, "trainer", json_string("device"));
	}
	if (t->comm != NULL)
		json_object_update(f, t->comm);
	json_object_set_new(f, "train_seconds", json_real(t->train_seconds));
	json_object_set_new(f, "seconds_per_epoch",
	    json_real(t->seconds_per_epoch));
	json_object_set_new(f, "seconds_final_embedding",
	    json_real(t_emb));
	json_object_set_new(f, "steps", json_integer(
	    (json_int_t)t->steps));
	if (t->steps > 0) {
		/* What a step of rank 0 encoded, on average. */
		a = json_array();
		for (l = 0; l <= o->enc.n_layers; l++)
			json_array_append_new(a, json_real(t->sum_rows[l] /
			    (double)t->steps));
		json_object_set_new(f, "mean_step_nodes", a);
		json_object_set_new(f, "mean_step_messages",
		    json_real(t->sum_msgs / (double)t->steps));
		a = json_object();
		for (l = 0; l < KG_GNN_PHASES; l++)
			json_object_set_new(a, phase_names[l],
			    json_real(t->phase_seconds[l] / (double)t->steps));
		json_object_set_new(f, "mean_step_seconds", a);
	}
	json_object_set_new(f, "peak_rss_kib", json_integer(
	    (json_int_t)kg_peak_rss_kib()));
	a = json_array();
	for (k = 0; k < nranks; k++)
		json_array_append_new(a, json_integer((json_int_t)rss[k]));
	json_object_set_new(f, "peak_rss_kib_per_rank", a);
	return f;
}

int
kg_gnn_model_write(const struct kg_gnn_run *r, const struct kg_gnn_train_opts *o,
    const struct kg_dataset *ds, const struct kg_features *gf,
    const struct kg_gnn_trained *t, int nranks, const uint64_t *rss)
{
	const struct kg_triples *tr = &ds->split[KG_SPLIT_TRAIN];
	const char *inputs[3][2] = { { NULL, NULL }, { NULL, NULL },
	    { NULL, NULL } };
	struct kg_modeldir_array weights = { "gnn_weights.npy",
	    t->enc.n_params, t->enc.w };
	struct kg_modeldir_spec s;
	struct kg_modeldir_writer w = KG_MODELDIR_WRITER_INIT;
	float *emb;
	double t_emb;
	size_t ni = 0;
	int rc = -1;

	if (r->features != NULL) {
		inputs[ni][0] = "features";
		inputs[ni++][1] = r->features;
	}
	if (r->expanded != NULL) {
		inputs[ni][0] = "expanded";
		inputs[ni++][1] = r->expanded;
	}
	memset(&s, 0, sizeof(s));
	s.dir = r->output;
	s.force = r->force;
	s.argc = r->argc;
	s.argv = r->argv;
	s.model = &t->dec;
	s.n_entities = ds->n_entities;
	s.n_relations = ds->n_relations;
	s.rel = t->rel;
	s.log = t->log;
	s.dataset = r->dataset;
	s.inputs = (const char *const (*)[2])inputs;
	s.extra = &weights;
	s.n_extra = 1;
	if (kg_modeldir_begin(&w, &s) < 0)
		return -1;
	t_emb = kg_now();
	emb = kg_gnn_embed(&t->enc, gf, ds->n_entities, tr->hrt, tr->n);
	t_emb = kg_now() - t_emb;
	s.config = config_json(o, r, t, nranks);
	s.figures = figures_json(o, t, nranks, rss, t_emb);
	if (kg_check_finite("entities.npy", emb, ds->n_entities,
	    t->dec.dim) < 0 ||
	    kg_table_writer_put(&w.table, 0, ds->n_entities, emb, NULL) < 0)
		kg_modeldir_abort(&w);
	else
		rc = kg_modeldir_commit(&w);
	json_decref(s.config);
	json_decref(s.figures);
	free(emb);
	return rc;
}
