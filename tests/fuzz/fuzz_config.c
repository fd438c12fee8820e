/*
 * fuzz_config: the --config reader of the training tools
 * (cmd/cli/cliopts.c: kg_cli_config, kg_cli_configs) and the GNN
 * router's look into the same file (kg_gnn_cli_wanted).  The options are
 * a sample of kg-train's kinds (integers, reals, strings, flags, an
 * ignored DGL-KE key and --config itself), their values going through the
 * library's checked parsers as the tools' apply() does.  When the reader
 * succeeds, the calls it made must be exactly the ones an independent walk
 * of the same JSON predicts, with each value passed as text that reads
 * back to the JSON value.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "fuzz.h"
#include "cli/cliopts.h"
#include "cli/gnn_cli.h"
#include "core/util.h"

enum { O_CONFIG = 256, O_IGNORED, O_DIM, O_LR, O_SEED, O_MODEL, O_FLAG,
	O_FANOUT, O_SPLIT };

static const struct option opts[] = {
	{ "config", required_argument, NULL, O_CONFIG },
	{ "model_name", required_argument, NULL, O_MODEL },
	{ "hidden_dim", required_argument, NULL, O_DIM },
	{ "batch_size", required_argument, NULL, O_DIM },
	{ "lr", required_argument, NULL, O_LR },
	{ "gamma", required_argument, NULL, O_LR },
	{ "seed", required_argument, NULL, O_SEED },
	{ "fanout", required_argument, NULL, O_FANOUT },
	{ "split", required_argument, NULL, O_SPLIT },
	{ "double_ent", no_argument, NULL, O_FLAG },
	{ "resume", no_argument, NULL, O_FLAG },
	{ "neg_chunk_size", required_argument, NULL, O_IGNORED },
	{ "no_save_emb", no_argument, NULL, O_IGNORED },
	{ "quiet", no_argument, NULL, 'q' },
	{ NULL, 0, NULL, 0 }
};

#define MAX_CALLS 64

/* The calls apply() received. */
struct calls {
	int val[MAX_CALLS];
	char *arg[MAX_CALLS];
	size_t n;
	int overflow;
};

static int
apply(void *ctx, int val, const char *arg)
{
	struct calls *c = ctx;
	uint32_t u;
	int64_t i;
	double d, list[4];
	size_t n;

	FUZZ_CHECK(arg != NULL, "apply() got a NULL argument");
	if (c->n == MAX_CALLS)
		c->overflow = 1;
	else {
		c->val[c->n] = val;
		c->arg[c->n++] = kg_xstrdup(arg);
	}
	switch (val) {
	case O_DIM:
		return kg_parse_u32("--hidden_dim", arg, 1, 1u << 20, &u);
	case O_LR:
		return kg_parse_double("--lr", arg, 0, 1e9, &d);
	case O_SEED:
		return kg_parse_i64("--seed", arg, INT64_MIN, INT64_MAX, &i);
	case O_FANOUT:
		return kg_parse_double_list("--fanout", arg, 1, 1e6, list, 4,
		    &n);
	case O_SPLIT:
		return kg_parse_double_list("--split", arg, 0, 1, list, 3, &n);
	default:
		return 0;
	}
}

static const struct option *
find_opt(const char *key)
{
	const struct option *o;
	size_t k, len = strlen(key);

	for (o = opts; o->name != NULL; o++) {
		if (strlen(o->name) != len)
			continue;
		for (k = 0; k < len; k++)
			if (o->name[k] != (key[k] == '-' ? '_' : key[k]))
				break;
		if (k == len)
			return o;
	}
	return NULL;
}

/* The text passed for v reads back as v. */
static int
same_value(json_t *v, const char *arg)
{
	char *end;

	if (json_is_string(v))
		return strcmp(json_string_value(v), arg) == 0;
	if (json_is_integer(v))
		return strtoll(arg, &end, 10) == json_integer_value(v) &&
		    *end == '\0';
	if (json_is_real(v))
		return strtod(arg, &end) == json_real_value(v) && *end == '\0';
	return 0;
}

/*
 * Walk root as the contract says and compare with the calls made: the
 * keys in order, notes ("_...") skipped, false flags skipped, every
 * other key one call with its option's value.  Returns 1 when they match.
 */
static int
calls_match(json_t *root, const struct calls *c)
{
	const char *key;
	json_t *v;
	size_t k = 0;

	json_object_foreach(root, key, v) {
		const struct option *o;

		if (key[0] == '_')
			continue;
		o = find_opt(key);
		if (o == NULL || o->val == O_CONFIG)
			return 0;
		if (o->has_arg == no_argument) {
			if (!json_is_boolean(v))
				return 0;
			if (json_is_false(v))
				continue;
		} else if (!json_is_string(v) && !json_is_number(v))
			return 0;
		if (k == c->n || c->val[k] != o->val ||
		    (o->has_arg != no_argument && !same_value(v, c->arg[k])))
			return 0;
		k++;
	}
	return k == c->n;
}

static void
calls_release(struct calls *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		free(c->arg[i]);
	c->n = 0;
	c->overflow = 0;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet();
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct calls c = { { 0 }, { NULL }, 0, 0 };
	char *path = fuzz_write("config.json", data, size);
	char *eq = kg_xasprintf("--config=%s", path);
	char *argv[] = { "kg-train", "--config", path, eq, "-q", "x", NULL };
	json_t *root = json_loadb((const char *)data, size, 0, NULL);
	int rc;

	rc = kg_cli_config(path, opts, O_CONFIG, O_IGNORED, apply, &c);
	if (rc == 0) {
		FUZZ_CHECK(root != NULL && json_is_object(root),
		    "a config that is not a JSON object was read");
		FUZZ_CHECK(c.overflow || calls_match(root, &c),
		    "the config's calls differ from its keys");
	}
	calls_release(&c);
	/* The same file twice through argv: twice the calls, or an error. */
	if (kg_cli_configs(6, argv, opts, O_CONFIG, O_IGNORED, apply, &c) ==
	    0)
		FUZZ_CHECK(rc == 0, "kg_cli_configs read what kg_cli_config "
		    "refused");
	calls_release(&c);
	(void)kg_gnn_cli_wanted(6, argv);
	json_decref(root);
	free(eq);
	free(path);
	return 0;
}
