/*
 * opttab: a tool's options as one table, in the manner of git's
 * parse-options: each option named once with where its value goes,
 * through which checked parser, its default and its help line, for each
 * kind of run that takes it (a tool with one kind has one).  From the
 * table follow the getopt_long array of a kind, the DGL-KE spellings
 * rewritten before getopt, the options that take several values, the
 * keys of a JSON --config file (cliopts.h), the dispatch of values and
 * the --help text; an option a kind does not take is unknown to it.
 */
#ifndef KG_OPTTAB_H
#define KG_OPTTAB_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* How a use stores its argument at ctx + off. */
enum kg_opt_how {
	KG_OPT_FLAG = 1,	/* no argument: the int becomes 1 */
	KG_OPT_U32,		/* uint32_t in [lo, hi] (kg_parse_u32) */
	KG_OPT_U64,		/* uint64_t in [lo, hi] (kg_parse_u64) */
	KG_OPT_DOUBLE,		/* double in [lo, hi] (kg_parse_double) */
	KG_OPT_FLOAT,		/* float, read as a double in [lo, hi] */
	KG_OPT_SIZE,		/* uint64_t bytes, suffix K, M, G or T,
				 * in [lo, hi] before the suffix */
	KG_OPT_STRING,		/* const char *: the argument itself */
	KG_OPT_FN,		/* fn(ctx, arg) stores and checks it */
	KG_OPT_IGNORED,		/* accepted, stored nowhere: a warning
				 * with the use's help as the hint */
	KG_OPT_CONFIG,		/* --config FILE (kg_cli_configs) */
	KG_OPT_HELP,		/* ends parsing: KG_OPTS_HELP */
	KG_OPT_VERSION		/* ends parsing: KG_OPTS_VERSION */
};

/* A use's flags. */
#define KG_OPT_MULTI 1u		/* DGL-KE's nargs='+': the first value
				 * taken, the others dropped */
#define KG_OPT_FOREIGN 2u	/* another program's option, ignored or
				 * refused: listed apart in help, never in
				 * the synopsis */

/* How one kind of run (or several) takes an option. */
struct kg_opt_use {
	unsigned kinds;		/* the tool's kind bits; 0 ends the uses */
	enum kg_opt_how how;
	size_t off;		/* the target in the context */
	uint64_t min, max;	/* KG_OPT_U32, KG_OPT_U64 ranges */
	double lo, hi;		/* KG_OPT_DOUBLE, FLOAT, SIZE ranges */
	int (*fn)(void *ctx, const char *arg);	/* KG_OPT_FN: 0, or -1
						 * after kg_error() */
	const char *arg;	/* its argument in help ("N"); NULL: none */
	const char *def;	/* the default as the parser reads it
				 * ("0.1"), shown as "(default 0.1)";
				 * NULL: none, or told in help */
	const char *help;	/* NULL: as the option's first use */
	const char *also;	/* another long name, or NULL */
	const char *alias;	/* a spelling rewritten to --name ("-d") */
	const char *alias_arg;	/* with alias: rewritten to --name=this */
	unsigned flags;		/* KG_OPT_MULTI */
};

#define KG_OPT_MAX_USES 2

/* An option, or a heading of --help (name NULL, group its text). */
struct kg_opt {
	const char *name;	/* long name, with underscores */
	char short_name;	/* a getopt short option, or 0 */
	const char *group;
	struct kg_opt_use use[KG_OPT_MAX_USES];
};

struct kg_opttab {
	const struct kg_opt *opt;
	size_t n;
	const char *ignored_as;	/* an ignored option in its warning:
				 * "ignoring DGL-KE option --x: hint" */
	int operands;		/* positional arguments the tool takes
				 * (multi-value options leave them) */
};

/* The use of t->opt[i] by kind, or NULL when kind does not take it. */
const struct kg_opt_use *kg_opt_use_of(const struct kg_opttab *t, size_t i,
    unsigned kind);
/* u's argument name and help, NULL ones read from the first use. */
const char *kg_opt_arg(const struct kg_opt *o, const struct kg_opt_use *u);
const char *kg_opt_help(const struct kg_opt *o, const struct kg_opt_use *u);

/*
 * Apply use u of t->opt[i] with arg to ctx: its checked parser, the
 * error naming "--NAME".  0, or -1 after kg_error().
 */
int kg_opt_apply(const struct kg_opttab *t, size_t i,
    const struct kg_opt_use *u, void *ctx, const char *arg);

/* What kg_opttab_parse found. */
enum kg_opts_result {
	KG_OPTS_GO,		/* options applied; operands from *first */
	KG_OPTS_HELP,		/* --help or -h */
	KG_OPTS_VERSION,	/* --version */
	KG_OPTS_USAGE		/* a usage error, its message printed
				 * (and the "Try --help" line after an
				 * unknown or malformed option) */
};

/*
 * Parse argv for kind into ctx: a normalised copy of argv
 * (kg_cli_argv, with kind's aliases; multi-value options'
 * extra values put past *nav), every --config file's keys, then the
 * command line.  given[i] (t->n entries, zeroed by the caller) becomes 1
 * for each option given on the command line or in a config file.  The
 * copy is *avp, of argc strings, which the options' values point into:
 * free it with kg_cli_argv_free(argc, *avp) when they are no longer
 * needed, whatever the result.  *first: the index in *avp of the first
 * operand; *nav: the arguments getopt saw.
 */
enum kg_opts_result kg_opttab_parse(const struct kg_opttab *t,
    unsigned kind, int argc, char *argv[], void *ctx, unsigned char *given,
    char ***avp, int *nav, int *first);

/* Index of the option named name (a long name or another one), or
 * t->n. */
size_t kg_opttab_find(const struct kg_opttab *t, const char *name);

/*
 * "PREFIX [-q] [--name ARG] ... SUFFIX" for kind, wrapped at 79 columns,
 * lines after the first indented under the word after "usage: "
 * (under the end of the prefix when it starts otherwise); foreign options,
 * --help, --version and options the prefix names ("--name ") left out.
 */
void kg_opttab_synopsis(FILE *f, const struct kg_opttab *t, unsigned kind,
    const char *prefix, const char *suffix);

/*
 * The help lines of kind's uses under their headings, each use taken by
 * none of skip_kinds and, unless skip_kinds is 0, with a help or default
 * of its own; foreign options (KG_OPT_FOREIGN) only when foreign is 1,
 * and then only them.
 */
void kg_opttab_help(FILE *f, const struct kg_opttab *t, unsigned kind,
    unsigned skip_kinds, int foreign);

/*
 * The options kind takes as another kind does (uses with no help and no
 * default of their own, or shared with skip_kinds): "--a, --b and --c",
 * wrapped at 79 columns.
 */
void kg_opttab_shared(FILE *f, const struct kg_opttab *t, unsigned kind,
    unsigned skip_kinds);

/* Write text wrapped at 79 columns, the first line from column col,
 * continuation lines from indent; ends with a newline. */
void kg_opt_wrap(FILE *f, const char *text, size_t col, size_t indent);

#endif
