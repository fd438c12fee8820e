/*
 * train_opts: kg-train's option table (cmd/cli/train_opts.h) as text,
 * for tests/cli/man/kg-train.sh: one line per spelling an option is
 * accepted under, "SPELLING KINDS", SPELLING as typed ("--hidden_dim",
 * "-d", "-q") and KINDS "shallow", "gnn" or "shallow,gnn" (the kinds of
 * model that take it under that spelling).
 *
 * usage: train_opts
 */
#include <stdio.h>

#include "cli/train_opts.h"
#include "core/util.h"

static void
line(const char *pre, const char *name, unsigned kinds)
{
	printf("%s%s %s%s%s\n", pre, name,
	    kinds & KG_TRAIN_SHALLOW ? "shallow" : "",
	    kinds == (KG_TRAIN_SHALLOW | KG_TRAIN_GNN) ? "," : "",
	    kinds & KG_TRAIN_GNN ? "gnn" : "");
}

int
main(void)
{
	const struct kg_opttab *t = &kg_train_opttab;
	size_t i, k;

	for (i = 0; i < t->n; i++) {
		const struct kg_opt *o = &t->opt[i];
		unsigned all = 0;
		char s[3] = { '-', o->short_name, '\0' };

		if (o->name == NULL)
			continue;
		for (k = 0; k < KG_OPT_MAX_USES && o->use[k].kinds; k++) {
			const struct kg_opt_use *u = &o->use[k];

			all |= u->kinds;
			if (u->also != NULL)
				line("--", u->also, u->kinds);
			if (u->alias != NULL)
				line("", u->alias, u->kinds);
		}
		line("--", o->name, all);
		if (o->short_name)
			line("", s, all);
	}
	return kg_close_stdout() < 0 ? KG_EXIT_FAIL : KG_EXIT_OK;
}
