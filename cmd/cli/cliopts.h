/*
 * cliopts: the command-line conventions kg-train and GNN training share.
 *
 * Options are spelled --foo_bar or --foo-bar (DGL-KE writes both), and a
 * JSON --config file holds the same options as keys, applied before the
 * command line so that an explicit option wins.
 */
#ifndef KG_CLIOPTS_H
#define KG_CLIOPTS_H

#include <getopt.h>
#include <stddef.h>

/*
 * A copy of argv (argc strings and a NULL) in which, up to a "--", every
 * argument equal to aliases[k][0] becomes aliases[k][1] and the dashes of
 * a long option's name (up to any '=') become underscores.  Free it with
 * kg_cli_argv_free.  Never fails (aborts on OOM).
 */
char **kg_cli_argv(int argc, char *argv[], const char *const (*aliases)[2],
    size_t n_aliases);
void kg_cli_argv_free(int argc, char **av);

/*
 * DGL-KE options that take several values (argparse's nargs='+', as in
 * "--gpu 0 1 2" or "--data_files a b c"): in a normalised argv (above),
 * the values after the first of each option named in multi[0..n) are
 * moved to the end, past the returned count, so getopt sees one value
 * while the operands stay.  A value is dropped only while at least
 * "operands" positional arguments remain, so "--data_files a b c DS OUT"
 * keeps DS and OUT.  opts tells which options take a value.  Parse the
 * first (returned) count of arguments; free all argc with
 * kg_cli_argv_free.
 */
int kg_cli_multi_values(int argc, char **av, const struct option *opts,
    const char *const *multi, size_t n, int operands);

/*
 * Apply the keys of the JSON object in "path" through apply(ctx, val,
 * arg), val being the option's getopt value in opts.  A key names an
 * option (dashes read as underscores; keys starting with '_' are notes
 * and skipped); its value is a string or a number (passed as text), or
 * for an option without argument a boolean (false: not applied).  Keys of
 * the option config_val, unknown keys and values of another type are
 * errors; keys of ignored_val are applied after a warning.  The arg
 * given to apply stays valid until exit, as argv does, so apply may keep
 * it (a path).  0, or -1 after kg_error() (apply reports its own errors).
 */
int kg_cli_config(const char *path, const struct option *opts,
    int config_val, int ignored_val,
    int (*apply)(void *ctx, int val, const char *arg), void *ctx);

/*
 * Every "--config FILE" or "--config=FILE" of a normalised argv, through
 * kg_cli_config in order.  0, or -1 after kg_error().
 */
int kg_cli_configs(int argc, char **av, const struct option *opts,
    int config_val, int ignored_val,
    int (*apply)(void *ctx, int val, const char *arg), void *ctx);

#endif
