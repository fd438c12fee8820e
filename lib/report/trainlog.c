#include "report/trainlog.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/util.h"

void
kg_trainlog_release(struct kg_trainlog *log)
{
	struct kg_trainlog z = KG_TRAINLOG_INIT;

	free(log->epoch);
	free(log->loss);
	free(log->wall);
	free(log->valid);
	*log = z;
}

/* Room for one more epoch; *cap is the capacity of every series. */
static void
grow(struct kg_trainlog *log, size_t *cap)
{
	if (log->n < *cap)
		return;
	*cap = *cap ? 2 * *cap : 64;
	log->epoch = kg_xreallocarray(log->epoch, *cap, sizeof(*log->epoch));
	log->loss = kg_xreallocarray(log->loss, *cap, sizeof(*log->loss));
	log->wall = kg_xreallocarray(log->wall, *cap, sizeof(*log->wall));
	log->valid = kg_xreallocarray(log->valid, *cap, sizeof(*log->valid));
}

/* A number member that must lie in [lo, hi]; absent is 0 (*out NaN),
 * present and good 1, anything else -1 after kg_error(). */
static int
get_number(json_t *o, const char *key, double lo, double hi, double *out,
    const char *name, size_t line)
{
	json_t *v = json_object_get(o, key);

	*out = NAN;
	if (v == NULL)
		return 0;
	if (!json_is_number(v) || json_number_value(v) < lo ||
	    json_number_value(v) > hi) {
		kg_error("%s:%zu: \"%s\" is not a number in [%g, %g]", name,
		    line, key, lo, hi);
		return -1;
	}
	*out = json_number_value(v);
	return 1;
}

/*
 * Add the epoch line o (line number line) to log; *wall_sum carries the
 * running time.  0, or -1 after kg_error().
 */
static int
add_epoch(struct kg_trainlog *log, size_t *cap, json_t *o, double *wall_sum,
    const char *name, size_t line)
{
	json_t *e = json_object_get(o, "epoch");
	double loss, secs, mrr;
	json_int_t epoch;
	int rc;

	if (!json_is_integer(e) || json_integer_value(e) < 1 ||
	    json_integer_value(e) > UINT32_MAX) {
		kg_error("%s:%zu: no positive integer \"epoch\"", name, line);
		return -1;
	}
	epoch = json_integer_value(e);
	if (log->n > 0 && epoch <= (json_int_t)log->epoch[log->n - 1]) {
		kg_error("%s:%zu: epoch %lld after epoch %u", name, line,
		    (long long)epoch, log->epoch[log->n - 1]);
		return -1;
	}
	if (!json_is_number(json_object_get(o, "loss"))) {
		kg_error("%s:%zu: no number \"loss\"", name, line);
		return -1;
	}
	loss = json_number_value(json_object_get(o, "loss"));
	if ((rc = get_number(o, "seconds", 0.0, HUGE_VAL, &secs, name,
	    line)) < 0 || get_number(o, "valid_mrr", 0.0, 1.0, &mrr, name,
	    line) < 0)
		return -1;
	if (rc == 0)
		log->has_wall = 0;
	*wall_sum += rc ? secs : 0.0;
	grow(log, cap);
	log->epoch[log->n] = (uint32_t)epoch;
	log->loss[log->n] = loss;
	log->wall[log->n] = *wall_sum;
	log->valid[log->n] = mrr;
	log->n_valid += !isnan(mrr);
	log->n++;
	return 0;
}

/* 1 if the n bytes at s are all JSON whitespace. */
static int
blank(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n')
			return 0;
	return 1;
}

static int
parse_lines(struct kg_trainlog *log, const char *text, size_t len,
    const char *name)
{
	size_t cap = 0, line = 0, i;
	const char *p = text, *end = text + len;
	double wall_sum = 0.0;

	log->has_wall = 1;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		json_error_t err;
		json_t *o;
		int rc = 0;

		line++;
		if (!blank(p, n)) {
			o = json_loadb(p, n, 0, &err);
			if (!json_is_object(o)) {
				kg_error("%s:%zu: not a JSON object%s%s", name,
				    line, o ? "" : ": ", o ? "" : err.text);
				rc = -1;
			} else if (json_object_get(o, "bucket") == NULL)
				rc = add_epoch(log, &cap, o, &wall_sum, name,
				    line);
			json_decref(o);
			if (rc < 0)
				return -1;
		}
		p += n + (nl != NULL);
	}
	if (log->n == 0) {
		kg_error("%s: no epochs in the training log", name);
		return -1;
	}
	if (!log->has_wall)
		for (i = 0; i < log->n; i++)
			log->wall[i] = NAN;
	return 0;
}

int
kg_trainlog_parse(struct kg_trainlog *log, const char *text, size_t len,
    const char *name)
{
	struct kg_trainlog z = KG_TRAINLOG_INIT;

	*log = z;
	if (parse_lines(log, text, len, name) < 0) {
		kg_trainlog_release(log);
		return -1;
	}
	return 0;
}

int
kg_trainlog_read(struct kg_trainlog *log, const char *path)
{
	struct kg_trainlog z = KG_TRAINLOG_INIT;
	size_t len;
	char *text;
	int rc;

	*log = z;
	text = kg_read_file(path, &len);
	if (text == NULL)
		return -1;
	rc = kg_trainlog_parse(log, text, len, path);
	free(text);
	return rc;
}
