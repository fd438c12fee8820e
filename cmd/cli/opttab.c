#include "cli/opttab.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cliopts.h"
#include "cli/tool.h"
#include "core/util.h"

/* getopt values: an option's table index above VAL_BASE; every ignored
 * option one value, as kg_cli_config warns about those keys. */
#define VAL_BASE 0x1000
#define VAL_IGNORED (VAL_BASE - 1)
#define WIDTH 79
#define HELP_COL 25

const struct kg_opt_use *
kg_opt_use_of(const struct kg_opttab *t, size_t i, unsigned kind)
{
	const struct kg_opt *o = &t->opt[i];
	size_t k;

	if (o->name == NULL)
		return NULL;
	for (k = 0; k < KG_OPT_MAX_USES && o->use[k].kinds != 0; k++)
		if (o->use[k].kinds & kind)
			return &o->use[k];
	return NULL;
}

const char *
kg_opt_arg(const struct kg_opt *o, const struct kg_opt_use *u)
{
	return u->arg != NULL || u->how == KG_OPT_FLAG ? u->arg : o->use[0].arg;
}

const char *
kg_opt_help(const struct kg_opt *o, const struct kg_opt_use *u)
{
	return u->help != NULL ? u->help : o->use[0].help;
}

/* A byte count with an optional K, M, G or T (powers of 1024). */
static int
parse_size(const char *what, const char *arg, double lo, double hi,
    uint64_t *bytes)
{
	static const char units[] = "KMGT";
	const char *u;
	char num[64];
	size_t len = strlen(arg);
	double x, scale = 1.0;

	u = len > 0 ? strchr(units, arg[len - 1] & ~0x20) : NULL;
	if (u != NULL && *u != '\0') {
		scale = (double)(1ULL << (10 * (u - units + 1)));
		len--;
	}
	if (len == 0 || len >= sizeof(num))
		len = sizeof(num) - 1;
	memcpy(num, arg, len);
	num[len] = '\0';
	if (kg_parse_double(what, num, lo, hi / scale, &x) < 0)
		return -1;
	*bytes = (uint64_t)(x * scale);
	return 0;
}

int
kg_opt_apply(const struct kg_opttab *t, size_t i,
    const struct kg_opt_use *u, void *ctx, const char *arg)
{
	char *p = (char *)ctx + u->off, what[80];
	double x;

	snprintf(what, sizeof(what), "--%s", t->opt[i].name);
	switch (u->how) {
	case KG_OPT_FLAG:
		*(int *)p = 1;
		return 0;
	case KG_OPT_U32:
		return kg_parse_u32(what, arg, (uint32_t)u->min,
		    (uint32_t)u->max, (uint32_t *)p);
	case KG_OPT_U64:
		return kg_parse_u64(what, arg, u->min, u->max, (uint64_t *)p);
	case KG_OPT_DOUBLE:
		return kg_parse_double(what, arg, u->lo, u->hi, (double *)p);
	case KG_OPT_FLOAT:
		if (kg_parse_double(what, arg, u->lo, u->hi, &x) < 0)
			return -1;
		*(float *)p = (float)x;
		return 0;
	case KG_OPT_SIZE:
		return parse_size(what, arg, u->lo, u->hi, (uint64_t *)p);
	case KG_OPT_STRING:
		*(const char **)p = arg;
		return 0;
	case KG_OPT_FN:
		return u->fn(ctx, arg);
	default:
		return 0;
	}
}

size_t
kg_opttab_find(const struct kg_opttab *t, const char *name)
{
	size_t i, k;

	for (i = 0; i < t->n; i++) {
		const struct kg_opt *o = &t->opt[i];

		if (o->name == NULL)
			continue;
		if (strcmp(o->name, name) == 0)
			return i;
		for (k = 0; k < KG_OPT_MAX_USES && o->use[k].kinds; k++)
			if (o->use[k].also != NULL &&
			    strcmp(o->use[k].also, name) == 0)
				return i;
	}
	return t->n;
}

/* What kg_opttab_parse builds for one kind from the table. */
struct parse {
	const struct kg_opttab *t;
	unsigned kind;
	void *ctx;
	unsigned char *given;
	struct option *lo;	/* getopt_long's array, NULL-terminated */
	size_t *lo_opt;		/* lo[k]'s table index */
	size_t n_lo;
	char shorts[16];
	const char *(*alias)[2];	/* kg_cli_argv's pairs */
	char **alias_to;	/* their owned right-hand sides */
	size_t n_alias;
	const char **multi;
	size_t n_multi;
};

static void
add_long(struct parse *p, const char *name, int has_arg, int val, size_t i)
{
	p->lo[p->n_lo] = (struct option){ name, has_arg, NULL, val };
	p->lo_opt[p->n_lo++] = i;
}

static void
add_alias(struct parse *p, const struct kg_opt *o, const struct kg_opt_use *u)
{
	size_t n = strlen(o->name) + 4 +
	    (u->alias_arg ? strlen(u->alias_arg) : 0);
	char *to = kg_xmalloc(n);

	snprintf(to, n, "--%s%s%s", o->name, u->alias_arg ? "=" : "",
	    u->alias_arg ? u->alias_arg : "");
	p->alias[p->n_alias][0] = u->alias;
	p->alias[p->n_alias][1] = to;
	p->alias_to[p->n_alias++] = to;
}

/* The getopt array, short options, aliases and multi-value options of
 * p->kind. */
static void
build(struct parse *p)
{
	const struct kg_opttab *t = p->t;
	size_t i, ns = 0;

	p->lo = kg_xcalloc(2 * t->n + 1, sizeof(*p->lo));
	p->lo_opt = kg_xcalloc(2 * t->n + 1, sizeof(*p->lo_opt));
	p->alias = kg_xcalloc(t->n + 1, sizeof(*p->alias));
	p->alias_to = kg_xcalloc(t->n + 1, sizeof(*p->alias_to));
	p->multi = kg_xcalloc(t->n + 1, sizeof(*p->multi));
	for (i = 0; i < t->n; i++) {
		const struct kg_opt *o = &t->opt[i];
		const struct kg_opt_use *u = kg_opt_use_of(t, i, p->kind);
		int has = 0, val = (int)(VAL_BASE + i);

		if (u == NULL)
			continue;
		has = kg_opt_arg(o, u) != NULL ? required_argument :
		    no_argument;
		if (u->how == KG_OPT_IGNORED)
			val = VAL_IGNORED;
		add_long(p, o->name, has, val, i);
		if (u->also != NULL)
			add_long(p, u->also, has, val, i);
		if (o->short_name && ns + 1 < sizeof(p->shorts))
			p->shorts[ns++] = o->short_name;
		if (u->alias != NULL)
			add_alias(p, o, u);
		if (u->flags & KG_OPT_MULTI) {
			char *m = kg_xmalloc(strlen(o->name) + 3);

			snprintf(m, strlen(o->name) + 3, "--%s", o->name);
			p->multi[p->n_multi++] = m;
		}
	}
}

static void
unbuild(struct parse *p)
{
	size_t k;

	for (k = 0; k < p->n_alias; k++)
		free(p->alias_to[k]);
	for (k = 0; k < p->n_multi; k++)
		free((char *)p->multi[k]);
	free(p->lo);
	free(p->lo_opt);
	free(p->alias);
	free(p->alias_to);
	free(p->multi);
}

/* Option i with arg, from the command line or a config file. */
static int
apply_opt(struct parse *p, size_t i, const char *arg)
{
	const struct kg_opt_use *u = kg_opt_use_of(p->t, i, p->kind);

	if (u == NULL)
		return -1;
	p->given[i] = 1;
	return kg_opt_apply(p->t, i, u, p->ctx, arg);
}

/* A config key's value (kg_cli_config's apply). */
static int
apply_key(void *ctx, int val, const char *arg)
{
	struct parse *p = ctx;

	if (val == VAL_IGNORED)
		return 0;
	return apply_opt(p, (size_t)(val - VAL_BASE), arg);
}

/* The table index getopt's ch (long index idx) names, or t->n. */
static size_t
opt_of(const struct parse *p, int ch, int idx)
{
	size_t i;

	if (ch >= VAL_BASE)
		return (size_t)(ch - VAL_BASE);
	if (ch == VAL_IGNORED)
		return idx >= 0 ? p->lo_opt[idx] : p->t->n;
	for (i = 0; i < p->t->n; i++)
		if (p->t->opt[i].short_name == ch &&
		    kg_opt_use_of(p->t, i, p->kind) != NULL)
			return i;
	return p->t->n;
}

/* The getopt loop over av[0..argc). */
static enum kg_opts_result
getopt_loop(struct parse *p, int argc, char **av)
{
	const struct kg_opttab *t = p->t;
	int ch, idx;
	size_t i;

	optind = 1;
	for (;;) {
		const struct kg_opt_use *u;

		idx = -1;
		ch = kg_tool_getopt(argc, av, p->shorts, p->lo, &idx);
		if (ch == -1)
			return KG_OPTS_GO;
		if (ch == '?') {
			kg_tool_usage_error();
			return KG_OPTS_USAGE;
		}
		i = opt_of(p, ch, idx);
		u = i < t->n ? kg_opt_use_of(t, i, p->kind) : NULL;
		if (u == NULL)
			return KG_OPTS_USAGE;
		if (u->how == KG_OPT_HELP)
			return KG_OPTS_HELP;
		if (u->how == KG_OPT_VERSION)
			return KG_OPTS_VERSION;
		if (u->how == KG_OPT_CONFIG)
			continue;
		if (u->how == KG_OPT_IGNORED)
			kg_warn("ignoring %s --%s: %s", t->ignored_as,
			    p->lo[idx].name, kg_opt_help(&t->opt[i], u));
		if (apply_opt(p, i, optarg) < 0)
			return KG_OPTS_USAGE;
	}
}

enum kg_opts_result
kg_opttab_parse(const struct kg_opttab *t, unsigned kind, int argc,
    char *argv[], void *ctx, unsigned char *given, char ***avp, int *nav,
    int *first)
{
	struct parse p;
	enum kg_opts_result rc;
	int config_val = -1;
	size_t i;

	memset(&p, 0, sizeof(p));
	p.t = t;
	p.kind = kind;
	p.ctx = ctx;
	p.given = given;
	build(&p);
	*avp = kg_cli_argv(argc, argv, p.alias, p.n_alias);
	*nav = p.n_multi == 0 ? argc : kg_cli_multi_values(argc, *avp, p.lo,
	    p.multi, p.n_multi, t->operands);
	for (i = 0; i < t->n; i++) {
		const struct kg_opt_use *u = kg_opt_use_of(t, i, kind);

		if (u != NULL && u->how == KG_OPT_CONFIG)
			config_val = (int)(VAL_BASE + i);
	}
	rc = KG_OPTS_USAGE;
	if (config_val < 0 || kg_cli_configs(*nav, *avp, p.lo, config_val,
	    VAL_IGNORED, apply_key, &p) == 0)
		rc = getopt_loop(&p, *nav, *avp);
	*first = optind;
	unbuild(&p);
	return rc;
}

/* ---- help ---- */

/*
 * Write the words of text from column col (at_start: no space before the
 * first word), lines after the first from indent, at most WIDTH columns
 * where the words allow; '\001' inside a word reads as a space (the
 * synopsis's "[--name ARG]" never splits), '\n' breaks the line.  Ends
 * with a newline.
 */
static void
wrap_words(FILE *f, const char *text, size_t col, size_t indent,
    int at_start)
{
	const char *w = text;

	while (*w == ' ')
		w++;
	while (*w != '\0') {
		size_t len = strcspn(w, " \n"), k;

		if (!at_start && col + 1 + len > WIDTH) {
			fprintf(f, "\n%*s", (int)indent, "");
			col = indent;
			at_start = 1;
		}
		if (!at_start) {
			fputc(' ', f);
			col++;
		}
		for (k = 0; k < len; k++)
			fputc(w[k] == '\001' ? ' ' : w[k], f);
		col += len;
		at_start = 0;
		w += len;
		if (*w == '\n') {
			fprintf(f, "\n%*s", (int)indent, "");
			col = indent;
			at_start = 1;
			w++;
		}
		while (*w == ' ')
			w++;
	}
	fputc('\n', f);
}

void
kg_opt_wrap(FILE *f, const char *text, size_t col, size_t indent)
{
	wrap_words(f, text, col, indent, 1);
}

/* Append s to the growing string *b (length *n), spaces as '\001' when
 * keep is 1. */
static void
append(char **b, size_t *n, const char *s, int keep)
{
	size_t len = strlen(s), k;

	*b = kg_xrealloc(*b, *n + len + 1);
	for (k = 0; k < len; k++)
		(*b)[*n + k] = keep && s[k] == ' ' ? '\001' : s[k];
	*n += len;
	(*b)[*n] = '\0';
}

/* Whether u is one of the options help and synopsis leave out. */
static int
meta(const struct kg_opt_use *u)
{
	return u->how == KG_OPT_HELP || u->how == KG_OPT_VERSION;
}

void
kg_opttab_synopsis(FILE *f, const struct kg_opttab *t, unsigned kind,
    const char *prefix, const char *suffix)
{
	char *b = NULL, item[160];
	const char *hit;
	size_t n = 0, i, indent = strlen(prefix) + 1;

	/* "usage: tool ...": continuation lines under the first option. */
	if (strncmp(prefix, "usage: ", 7) == 0)
		indent = 7 + strcspn(prefix + 7, " ") + 1;
	append(&b, &n, "", 0);
	for (i = 0; i < t->n; i++) {
		const struct kg_opt *o = &t->opt[i];
		const struct kg_opt_use *u = kg_opt_use_of(t, i, kind);
		const char *arg;

		if (u == NULL || meta(u) || (u->flags & KG_OPT_FOREIGN))
			continue;
		snprintf(item, sizeof(item), "--%s", o->name);
		hit = strstr(prefix, item);
		if (hit != NULL && (hit[strlen(item)] == ' ' ||
		    hit[strlen(item)] == '\0'))
			continue;
		arg = kg_opt_arg(o, u);
		if (o->short_name)
			snprintf(item, sizeof(item), "[-%c] ", o->short_name);
		else if (u->alias != NULL && u->alias[1] != '-' && !arg)
			snprintf(item, sizeof(item), "[%s] ", u->alias);
		else
			snprintf(item, sizeof(item), "[--%s%s%s] ", o->name,
			    arg ? " " : "", arg ? arg : "");
		append(&b, &n, item, 1);
		b[n - 1] = ' ';
	}
	append(&b, &n, suffix, 0);
	fputs(prefix, f);
	wrap_words(f, b, strlen(prefix), indent, 0);
	free(b);
}

/* One option's help line(s). */
static void
help_line(FILE *f, const struct kg_opt *o, const struct kg_opt_use *u)
{
	char lead[160], *text = NULL;
	const char *arg = kg_opt_arg(o, u), *help = kg_opt_help(o, u);
	size_t n = 0;
	int len;

	if (o->short_name)
		len = snprintf(lead, sizeof(lead), "  -%c, --%s",
		    o->short_name, o->name);
	else if (u->alias != NULL && u->alias[1] != '-')
		len = snprintf(lead, sizeof(lead), "  %s, --%s", u->alias,
		    o->name);
	else
		len = snprintf(lead, sizeof(lead), "      --%s", o->name);
	if (arg != NULL && len > 0 && (size_t)len < sizeof(lead))
		snprintf(lead + len, sizeof(lead) - (size_t)len, " %s", arg);
	fputs(lead, f);
	len = (int)strlen(lead);
	if (len + 2 <= HELP_COL)
		fprintf(f, "%*s", HELP_COL - len, "");
	else
		fputs("  ", f);
	append(&text, &n, help != NULL ? help : "", 0);
	if (u->def != NULL) {
		append(&text, &n, " (default ", 0);
		append(&text, &n, u->def, 0);
		append(&text, &n, ")", 0);
	}
	wrap_words(f, text, len + 2 <= HELP_COL ? HELP_COL : (size_t)len + 2,
	    HELP_COL, 1);
	free(text);
}

/* Whether kg_opttab_help lists u for kind, skipping skip_kinds. */
static int
listed(const struct kg_opt_use *u, unsigned skip_kinds, int foreign)
{
	if (u == NULL)
		return 0;
	if (!!(u->flags & KG_OPT_FOREIGN) != !!foreign)
		return 0;
	if (skip_kinds == 0)
		return 1;
	return !(u->kinds & skip_kinds) && (u->help != NULL ||
	    u->def != NULL);
}

void
kg_opttab_help(FILE *f, const struct kg_opttab *t, unsigned kind,
    unsigned skip_kinds, int foreign)
{
	const char *group = NULL;
	size_t i;

	for (i = 0; i < t->n; i++) {
		const struct kg_opt *o = &t->opt[i];
		const struct kg_opt_use *u = kg_opt_use_of(t, i, kind);

		if (o->name == NULL) {
			group = o->group;
			continue;
		}
		if (!listed(u, skip_kinds, foreign))
			continue;
		if (group != NULL)
			fprintf(f, "%s\n", group);
		group = NULL;
		help_line(f, o, u);
	}
}

void
kg_opttab_shared(FILE *f, const struct kg_opttab *t, unsigned kind,
    unsigned skip_kinds)
{
	char *b = NULL, item[96];
	size_t n = 0, i, count = 0, k = 0;

	for (i = 0; i < t->n; i++) {
		const struct kg_opt_use *u = kg_opt_use_of(t, i, kind);

		count += u != NULL && !meta(u) && !listed(u, skip_kinds, 0);
	}
	append(&b, &n, "", 0);
	for (i = 0; i < t->n; i++) {
		const struct kg_opt_use *u = kg_opt_use_of(t, i, kind);

		if (u == NULL || meta(u) || listed(u, skip_kinds, 0))
			continue;
		k++;
		snprintf(item, sizeof(item), "%s--%s%s ", k == count &&
		    count > 1 ? "and " : "", t->opt[i].name,
		    k + 1 < count ? "," : "");
		append(&b, &n, item, 0);
	}
	wrap_words(f, b, 0, 0, 1);
	free(b);
}
