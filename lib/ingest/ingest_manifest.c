/*
 * ingest_manifest: the configuration and the figures kg-ingest records in
 * its manifest (see ingest_impl.h).
 */
#include <sys/resource.h>

#include <jansson.h>

#include "ingest/ingest_impl.h"
#include "core/util.h"

/* User + system CPU seconds of this process: lines per CPU second is the
 * per-core rate, which wall time on a shared machine is not. */
double
kg_ingest_cpu_seconds(void)
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

	json_object_set_new(c, "format", json_string(o->rdf.syntax ==
	    KG_RDF_NTRIPLES ? "ntriples" : o->rdf.syntax == KG_RDF_NQUADS ?
	    "nquads" : o->rdf.syntax == KG_RDF_TURTLE ? "turtle" :
	    o->tab.format == KG_TAB_CSV ? "csv" : "tsv"));
	json_object_set_new(c, "delimiter", json_string(delim));
	json_object_set_new(c, "columns", json_string(o->columns));
	json_object_set_new(c, "header", json_boolean(o->tab.header));
	json_object_set_new(c, "comment", o->tab.comment != '\0' ?
	    json_stringn(&o->tab.comment, 1) : json_null());
	json_object_set_new(c, "all_comments", json_boolean(o->all_comments));
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

void
kg_ingest_set_figures(struct kg_manifest *m, const struct ingest *st,
    double secs)
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
	if (st->type_of != NULL) {
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
	kg_manifest_set_figure(m, "cpu_seconds",
	    json_real(kg_ingest_cpu_seconds() - st->cpu0));
	kg_manifest_set_figure(m, "read_cpu_seconds", json_real(st->cpu_read -
	    st->cpu0));
	FIG("peak_rss_kib", kg_peak_rss_kib());
#undef FIG
}

void
kg_ingest_set_config(struct kg_manifest *m, const struct kg_ingest_opts *o)
{
	json_t *c = config_json(o), *v;
	const char *key;

	json_object_foreach(c, key, v)
		kg_manifest_set_config(m, key, json_incref(v));
	json_decref(c);
}
