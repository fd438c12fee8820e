/*
 * train_ckpt: a trainer's checkpoints, in the layout of lib/io/ckpt.h:
 * the store's partitions, the relation table and its optimiser state,
 * and with early stopping the best epoch's parameters and the loop's
 * state; the snapshot of those parameters.
 */
#include "kge/train_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The relation table's snapshot, allocated once (the entities' is the
 * store's). */
static void
best_alloc(struct kg_trainer *tr)
{
	if (tr->best_rel == NULL)
		tr->best_rel = kg_xmallocarray(tr->n_rel_rows *
		    tr->model.rel_width + 1, sizeof(float));
}

int
kg_trainer_snapshot(struct kg_trainer *tr, int back)
{
	size_t nr = tr->n_rel_rows * tr->model.rel_width;

	best_alloc(tr);
	if (back) {
		if (kg_store_restore(tr->ents) < 0)
			return -1;
		memcpy(tr->rel, tr->best_rel, nr * sizeof(float));
	} else {
		if (kg_store_snapshot(tr->ents) < 0)
			return -1;
		memcpy(tr->best_rel, tr->rel, nr * sizeof(float));
	}
	return 0;
}

/* The path of the best parameters' file of partition p in dir, a new
 * string. */
static char *
best_part_path(const char *dir, uint32_t p)
{
	char name[32];

	snprintf(name, sizeof(name), "best_part-%03u.npy", p);
	return kg_path_join(dir, name);
}

int
kg_trainer_save_best(const struct kg_trainer *tr, const char *dir)
{
	uint32_t p;
	int rc = 0;

	if (tr->ep == NULL || tr->ep->best < 0.0 || tr->best_rel == NULL)
		return 0;
	for (p = 0; rc == 0 && p < tr->n_parts; p++) {
		char *path = best_part_path(dir, p);

		rc = kg_store_snapshot_save(tr->ents, p, path);
		free(path);
	}
	return rc < 0 ? -1 : kg_ckpt_put_f32(dir, "best_relations.npy",
	    tr->n_rel_rows, tr->model.rel_width, tr->best_rel);
}

int
kg_trainer_load_best(struct kg_trainer *tr, const struct kg_ckpt *c)
{
	uint32_t p;
	int rc = 0;

	if (tr->ep == NULL || kg_epochs_state_get(tr->ep, c) == 0)
		return 0;
	best_alloc(tr);
	for (p = 0; rc == 0 && p < tr->n_parts; p++) {
		char *path = best_part_path(c->dir, p);

		rc = kg_store_snapshot_load(tr->ents, p, path);
		free(path);
	}
	return rc < 0 ? -1 : kg_ckpt_get_f32(c, "best_relations.npy",
	    tr->n_rel_rows, tr->model.rel_width, tr->best_rel);
}

const char *const kg_trainer_shape_hints[][2] = {
	{ "model", "--model_name" },
	{ "dim", "--hidden_dim" },
	{ "rel_dim", "--rel_dim" },
	{ "rel_width", "--rel_dim" },
	{ "n_entities", "the dataset's entity count" },
	{ "n_relations", "the dataset's relation count" },
	{ "reciprocal", "--reciprocal" },
	{ "rel_optimizer", "--rel_optimizer" },
	{ NULL, NULL }
};

json_t *
kg_trainer_shape(const struct kg_trainer *tr)
{
	json_t *s = json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:b, s:s}",
	    "model", kg_model_name(tr->model.kind),
	    "dim", (json_int_t)tr->model.dim,
	    "rel_dim", (json_int_t)tr->model.rel_dim,
	    "rel_width", (json_int_t)tr->model.rel_width,
	    "n_entities", (json_int_t)tr->n_entities,
	    "n_relations", (json_int_t)tr->n_relations,
	    "reciprocal", tr->o.reciprocal,
	    "rel_optimizer", kg_optim_name(tr->o.rel_optim));

	/* Only when not the default, so older checkpoints still match. */
	if (tr->o.ent_optim != KG_OPTIM_ADAGRAD)
		json_object_set_new(s, "ent_optimizer",
		    json_string(kg_optim_name(tr->o.ent_optim)));
	return s;
}

/* Every partition of the store into dir; 0 or -1. */
static int
save_parts(struct kg_trainer *tr, const char *dir)
{
	uint32_t p;
	int rc = 0;

	for (p = 0; p < tr->n_parts && rc == 0; p++) {
		char *e = kg_ckpt_part_path(dir, p, 0);
		char *s = kg_ckpt_part_path(dir, p, 1);

		rc = kg_store_save_part(tr->ents, p, e, s);
		free(e);
		free(s);
	}
	return rc;
}

int
kg_trainer_save(struct kg_trainer *tr, const char *dir, const char *log,
    json_t *config, const char *const *inputs, size_t n_inputs)
{
	struct kg_ckpt_writer w;
	json_t *st;
	int rc;

	if (kg_ckpt_begin(&w, dir, inputs, n_inputs) < 0)
		return -1;
	if (save_parts(tr, w.od.tmp) < 0 || kg_trainer_save_best(tr, w.od.tmp) < 0 ||
	    kg_ckpt_put_f32(w.od.tmp, "relations.npy", tr->n_rel_rows,
	    tr->model.rel_width, tr->rel) < 0 ||
	    kg_ckpt_put_f32(w.od.tmp, "relation_state.npy", tr->n_rel_rows,
	    tr->rel_state_width, tr->rel_state) < 0) {
		kg_ckpt_abort(&w);
		return -1;
	}
	st = kg_trainer_shape(tr);
	json_object_set_new(st, "epoch", json_integer((json_int_t)tr->epoch));
	json_object_set_new(st, "step", json_integer((json_int_t)tr->step));
	json_object_set_new(st, "last_loss", json_real(tr->last_loss));
	json_object_set_new(st, "seed", json_integer((json_int_t)tr->o.seed));
	if (tr->ep != NULL)
		kg_epochs_state_put(tr->ep, st);
	/* A switch decided during training (on a plateau) resumes as it
	 * was. */
	if (tr->o.one_vs_all_after > 0 &&
	    tr->o.one_vs_all_after != KG_ONE_VS_ALL_LATER)
		json_object_set_new(st, "one_vs_all_after",
		    json_integer(tr->o.one_vs_all_after));
	rc = kg_ckpt_commit(&w, st, log ? log : "", 0, NULL, config);
	json_decref(st);
	return rc;
}

int
kg_trainer_load(struct kg_trainer *tr, const char *dir, char **log)
{
	struct kg_ckpt c;
	json_t *want = kg_trainer_shape(tr);
	uint64_t switch_at;
	uint32_t p;
	int rc = -1;

	*log = NULL;
	if (kg_ckpt_open(&c, dir, want, kg_trainer_shape_hints) < 0) {
		json_decref(want);
		return -1;
	}
	for (p = 0; p < tr->n_parts; p++) {
		char *e = kg_ckpt_part_path(dir, p, 0);
		char *s = kg_ckpt_part_path(dir, p, 1);

		rc = kg_store_set_source(tr->ents, p, e, s);
		free(e);
		free(s);
		if (rc < 0)
			goto out;
	}
	rc = -1;
	if (kg_ckpt_get_f32(&c, "relations.npy", tr->n_rel_rows,
	    tr->model.rel_width, tr->rel) < 0 ||
	    kg_ckpt_get_f32(&c, "relation_state.npy", tr->n_rel_rows,
	    tr->rel_state_width, tr->rel_state) < 0 || kg_trainer_load_best(tr, &c) < 0)
		goto out;
	tr->epoch = (uint32_t)kg_ckpt_u64(&c, "epoch");
	tr->step = kg_ckpt_u64(&c, "step");
	tr->last_loss = kg_ckpt_real(&c, "last_loss");
	switch_at = kg_ckpt_u64(&c, "one_vs_all_after");
	if (tr->o.one_vs_all_after == KG_ONE_VS_ALL_LATER && switch_at > 0 &&
	    switch_at < KG_ONE_VS_ALL_LATER)
		tr->o.one_vs_all_after = (uint32_t)switch_at;
	*log = kg_ckpt_log(&c);
	if (*log != NULL)
		rc = 0;
out:
	kg_ckpt_close(&c);
	json_decref(want);
	return rc;
}
