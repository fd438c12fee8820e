/*
 * train_engine: the shallow drivers' shared handling of a job's engine;
 * see train_engine.h.
 */
#include "app/train_engine.h"

#include <stdio.h>
#include <stdlib.h>

#include "core/util.h"

char *
kg_train_job_ckpt(const struct kg_train_job *j)
{
	return j->checkpoint_dir ? kg_xstrdup(j->checkpoint_dir) :
	    kg_xasprintf("%s.ckpt", j->output);
}

struct kg_engine *
kg_train_engine_open(const struct kg_engine_run *r, struct kg_trainer *tr,
    int show)
{
	struct kg_engine *e = kg_engine_open(r, tr);
	char *line;

	if (e == NULL)
		return NULL;
	line = kg_engine_says(e);
	if (show && line != NULL)
		fprintf(stderr, "%s: %s\n", kg_progname(), line);
	free(line);
	return e;
}

void
kg_train_engine_figures(json_t *fig, const struct kg_engine *e,
    const struct kg_train_job *j, int host)
{
	struct kg_backend *be = e != NULL ? kg_engine_backend(e) : NULL;
	char dev[32];
	int i;

	if (be != NULL) {
		struct kg_device d = kg_backend_device(be);

		json_object_set_new(fig, "device", json_string(
		    kg_device_format(&d, dev, sizeof(dev))));
		json_object_set_new(fig, "backend",
		    json_string(kg_backend_name(be)));
		json_object_set_new(fig, "trainer", json_string("device"));
	} else if (host) {
		json_object_set_new(fig, "device", json_string("cpu"));
		json_object_set_new(fig, "backend",
		    json_string(kg_backend_cpu_name()));
	}
	if (j->n_gpus > 0) {
		json_t *a = json_array();

		for (i = 0; i < j->n_gpus; i++) {
			snprintf(dev, sizeof(dev), "cuda:%d", j->gpus[i]);
			json_array_append_new(a, json_string(dev));
		}
		json_object_set_new(fig, "devices", a);
		if (j->gpus_emulated)
			json_object_set_new(fig, "devices_emulated",
			    json_true());
	}
}
