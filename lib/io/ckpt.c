#include "io/ckpt.h"

#include <stdlib.h>
#include <string.h>

#include "core/testhook.h"
#include "core/util.h"
#include "io/manifest.h"
#include "io/npy.h"
#include "io/stage.h"

int
kg_ckpt_begin(struct kg_ckpt_writer *w, const char *dir,
    const char *const *inputs, size_t n)
{
	*w = (struct kg_ckpt_writer)KG_CKPT_WRITER_INIT;
	if (kg_stage_check_path("checkpoint", dir, inputs, n, 0) < 0)
		return -1;
	return kg_outdir_begin(&w->od, dir, 1);
}

void
kg_ckpt_abort(struct kg_ckpt_writer *w)
{
	kg_outdir_abort(&w->od);
}

char *
kg_ckpt_part_path(const char *dir, uint32_t p, int state)
{
	return kg_xasprintf("%s/%s-p%u.npy", dir, state ? "entity_state" :
	    "entities", p);
}

int
kg_ckpt_put(const char *dir, const char *name, enum kg_dtype dt,
    uint64_t rows, uint64_t cols, const void *x)
{
	uint64_t sh[2] = { rows, cols };

	return kg_manifest_put_npy(NULL, dir, name, dt, cols ? 2 : 1, sh, x);
}

int
kg_ckpt_put_f32(const char *dir, const char *name, uint64_t rows,
    uint64_t cols, const float *x)
{
	return kg_ckpt_put(dir, name, KG_DT_F4, rows, cols, x);
}

int
kg_ckpt_commit(struct kg_ckpt_writer *w, json_t *state, const char *log,
    int argc, char *const *argv, json_t *config)
{
	struct kg_manifest man = KG_MANIFEST_INIT;
	char *js = json_dumps(state, JSON_INDENT(2) | JSON_SORT_KEYS);
	const char *key;
	json_t *v;
	int rc = -1;

	kg_manifest_init(&man, argc, argv);
	if (js == NULL || kg_write_text(w->od.tmp, "state.json", js) < 0 ||
	    (log != NULL && kg_write_text(w->od.tmp, "train_log.jsonl",
	    log) < 0) || kg_manifest_add_dir(&man, w->od.tmp) < 0)
		goto out;
	if (config != NULL)
		json_object_foreach(config, key, v)
			kg_manifest_set_config(&man, key, json_incref(v));
	if (kg_manifest_write(&man, w->od.tmp) < 0)
		goto out;
	rc = kg_outdir_commit(&w->od);
	if (rc == 0)
		kg_test_after_checkpoint();
out:
	if (rc < 0)
		kg_outdir_abort(&w->od);
	kg_manifest_release(&man);
	free(js);
	return rc;
}

/* What sets key, from hints, or NULL. */
static const char *
hint_of(const char *const (*hints)[2], const char *key)
{
	size_t i;

	for (i = 0; hints != NULL && hints[i][0] != NULL; i++)
		if (strcmp(hints[i][0], key) == 0)
			return hints[i][1];
	return NULL;
}

static int
shape_check(const char *dir, json_t *want, json_t *have,
    const char *const (*hints)[2])
{
	const char *key, *hint;
	json_t *val;

	json_object_foreach(want, key, val) {
		json_t *h = json_object_get(have, key);
		char *a, *b;

		if (h != NULL && json_equal(h, val))
			continue;
		a = h ? json_dumps(h, JSON_ENCODE_ANY) : kg_xstrdup("nothing");
		b = json_dumps(val, JSON_ENCODE_ANY);
		hint = hint_of(hints, key);
		if (hint != NULL)
			kg_error("checkpoint '%s' has %s %s, but %s gives %s",
			    dir, key, a, hint, b);
		else
			kg_error("checkpoint '%s' has %s %s, but this run has "
			    "%s%s", dir, key, a, b, strcmp(key, "nranks") == 0 ?
			    ": resume with the same number of ranks" : "");
		free(a);
		free(b);
		return -1;
	}
	return 0;
}

int
kg_ckpt_open(struct kg_ckpt *c, const char *dir, json_t *want,
    const char *const (*hints)[2])
{
	struct kg_manifest man = KG_MANIFEST_INIT;
	char *path = kg_path_join(dir, "state.json");
	json_error_t jerr;
	int rc = -1;

	*c = (struct kg_ckpt)KG_CKPT_INIT;
	c->state = json_load_file(path, 0, &jerr);
	if (c->state == NULL || !json_is_object(c->state)) {
		kg_error("cannot read checkpoint '%s': %s", path, c->state ?
		    "not a JSON object" : jerr.text);
		goto out;
	}
	if (shape_check(dir, want, c->state, hints) < 0)
		goto out;
	/* Every file the processes wrote, complete and of its shape. */
	if (kg_manifest_load(&man, dir, NULL) < 0 ||
	    kg_manifest_verify(&man, dir, 0) < 0)
		goto out;
	c->dir = kg_xstrdup(dir);
	rc = 0;
out:
	if (rc < 0) {
		json_decref(c->state);
		c->state = NULL;
	}
	kg_manifest_release(&man);
	free(path);
	return rc;
}

int
kg_ckpt_adopt(struct kg_ckpt *c, const char *dir)
{
	char *path = kg_path_join(dir, "state.json");
	json_error_t jerr;

	*c = (struct kg_ckpt)KG_CKPT_INIT;
	c->state = json_load_file(path, 0, &jerr);
	if (c->state == NULL || !json_is_object(c->state)) {
		kg_error("cannot read checkpoint '%s': %s", path, c->state ?
		    "not a JSON object" : jerr.text);
		json_decref(c->state);
		c->state = NULL;
		free(path);
		return -1;
	}
	free(path);
	c->dir = kg_xstrdup(dir);
	return 0;
}

int
kg_ckpt_get_f32(const struct kg_ckpt *c, const char *name, uint64_t rows,
    uint64_t cols, float *x)
{
	struct kg_npy a = KG_NPY_INIT;
	char *path = kg_path_join(c->dir, name);
	int rc = -1;

	if (kg_npy_read_expect(path, KG_DT_F4, cols ? 2 : 1, &a) < 0)
		goto out;
	if (a.shape[0] != rows || (cols > 0 && a.shape[1] != cols)) {
		kg_error("checkpoint file '%s' does not have %llu rows of "
		    "%llu", path, (unsigned long long)rows,
		    (unsigned long long)(cols ? cols : 1));
		goto out;
	}
	memcpy(x, a.data, a.nbytes);
	rc = 0;
out:
	kg_npy_release(&a);
	free(path);
	return rc;
}

uint64_t
kg_ckpt_u64(const struct kg_ckpt *c, const char *key)
{
	json_int_t v = json_integer_value(json_object_get(c->state, key));

	return v > 0 ? (uint64_t)v : 0;
}

double
kg_ckpt_real(const struct kg_ckpt *c, const char *key)
{
	return json_number_value(json_object_get(c->state, key));
}

char *
kg_ckpt_log(const struct kg_ckpt *c)
{
	char *path = kg_path_join(c->dir, "train_log.jsonl"), *log;
	size_t len;

	log = kg_path_exists(path) ? kg_read_file(path, &len) :
	    kg_xstrdup("");
	free(path);
	return log;
}

void
kg_ckpt_close(struct kg_ckpt *c)
{
	json_decref(c->state);
	free(c->dir);
	*c = (struct kg_ckpt)KG_CKPT_INIT;
}

json_t *
kg_ckpt_config(const char *dir)
{
	struct kg_manifest man = KG_MANIFEST_INIT;
	json_t *c = NULL;

	kg_error_mute(1);
	if (kg_manifest_load(&man, dir, NULL) == 0) {
		c = json_object_get(man.root, "config");
		c = json_is_object(c) ? json_incref(c) : NULL;
	}
	kg_error_mute(0);
	kg_manifest_release(&man);
	return c;
}

/* One key of kg_ckpt_changes: o the checkpoint's value, v this run's
 * (either NULL when absent), added to text and changes when they
 * differ. */
static void
note_change(struct kg_strbuf *text, json_t *changes, const char *key,
    json_t *o, json_t *v, json_t *old)
{
	json_t *prev;
	char *a, *b, *item;

	if (old == NULL || strcmp(key, "dictionaries") == 0 ||
	    strcmp(key, "resumed_with_changes") == 0 ||
	    (o != NULL && v != NULL && json_equal(o, v)))
		return;
	a = o ? json_dumps(o, JSON_ENCODE_ANY) : kg_xstrdup("none");
	b = v ? json_dumps(v, JSON_ENCODE_ANY) : kg_xstrdup("none");
	item = kg_xasprintf("%s%s %s -> %s", text->s ? ", " : "", key, a, b);
	kg_strbuf_add(text, item);
	free(item);
	free(a);
	free(b);
	prev = json_object_get(changes, key);
	if (prev == NULL) {
		prev = json_object();
		json_object_set_new(prev, "old", o ? json_incref(o) :
		    json_null());
		json_object_set_new(changes, key, prev);
	}
	json_object_set_new(prev, "new", v ? json_incref(v) : json_null());
}

void
kg_ckpt_carry_start(json_t *old, json_t *now)
{
	json_t *v = json_object_get(old, "init_from");

	if (v != NULL && json_is_object(now) &&
	    json_object_get(now, "init_from") == NULL)
		json_object_set(now, "init_from", v);
}

void
kg_ckpt_changes(json_t *old, json_t *now, json_t **changes, char **line)
{
	struct kg_strbuf text = { 0 };
	json_t *prev = json_object_get(old, "resumed_with_changes"), *v, *o;
	const char *key;

	*changes = json_is_object(prev) ? json_deep_copy(prev) : json_object();
	*line = NULL;
	json_object_foreach(now, key, v)
		note_change(&text, *changes, key, json_object_get(old, key), v,
		    old);
	/* Settings the checkpoint has and this run has not. */
	json_object_foreach(old, key, o)
		if (json_object_get(now, key) == NULL)
			note_change(&text, *changes, key, o, NULL, old);
	*line = text.s;
	if (json_object_size(*changes) == 0) {
		json_decref(*changes);
		*changes = NULL;
	}
}

int
kg_ckpt_check_rerun(const char *checkpoint_dir, const char *output,
    int resume, int force, const char *const *inputs, size_t n)
{
	char *dir = checkpoint_dir ? kg_xstrdup(checkpoint_dir) :
	    kg_xasprintf("%s.ckpt", output);
	int rc = 0, meets;

	kg_error_mute(1);
	meets = kg_stage_check_path("checkpoint", dir, inputs, n, 0) < 0;
	kg_error_mute(0);
	if (!resume && !force && !meets && kg_path_exists(dir)) {
		kg_error("checkpoint '%s' exists from an earlier run: --resume "
		    "continues it, --force starts over", dir);
		rc = -1;
	}
	free(dir);
	return rc;
}
