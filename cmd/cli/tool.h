/*
 * tool: what every kgpipe tool's main() does the same way.
 */
#ifndef KG_TOOL_H
#define KG_TOOL_H

#include <getopt.h>
#include <stdio.h>

/*
 * Where OpenBLAS failed to recognise the CPU (virtual machines), set
 * OPENBLAS_CORETYPE to fitting kernels and execute this program again
 * with the same argv (lib/compute/compute.h: kg_compute_better_core);
 * the generic kernels are several times slower.  Returns only when no
 * re-execution was wanted or exec failed, in which case the tool carries
 * on with the kernels it has.
 */
void kg_tool_tune_blas(char *argv[]);

/*
 * --help and --version: print usage(stdout), or "NAME VERSION", close
 * stdout and return the exit status (KG_EXIT_OK, or KG_EXIT_FAIL when
 * stdout could not be written).
 */
int kg_tool_help(void (*usage)(FILE *));
int kg_tool_version(const char *name);

/*
 * The exit status for what a kg_<stage>_run() returned: KG_EXIT_OK for 0,
 * KG_EXIT_VERSION for KG_ERR_VERSION, else KG_EXIT_FAIL.  Closes stdout
 * first; a write error there turns success into KG_EXIT_FAIL.
 */
int kg_tool_exit(int rc);

/*
 * getopt_long with our own messages: the same results, but an unknown
 * option, a missing argument or an argument to an option that takes none
 * is reported through kg_error() with the tool's name ("kg-train:
 * unrecognized option '--bogus'"), where getopt would print the path as
 * typed ("bin/kg-train: ...").  Returns what getopt_long returns ('?'
 * after such a message).
 */
int kg_tool_getopt(int argc, char *const argv[], const char *optstring,
    const struct option *longopts, int *longindex);

/*
 * After a usage error's message: print "Try 'kg-tool --help' for more
 * information." on stderr and return KG_EXIT_USAGE.
 */
int kg_tool_usage_error(void);

#endif
