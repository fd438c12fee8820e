/*
 * render: run gnuplot on a script and put its pictures in place
 * atomically.
 *
 * kg_render_begin makes a temporary directory ".kg-plot.XXXXXX" next to
 * the first output and names a temporary file in it for each output; the
 * caller builds the script with those temporary paths as targets and
 * passes it to kg_render_run, which writes it there as plot.gp, runs
 * gnuplot on it (stdin from /dev/null, its messages kept in gnuplot.log),
 * checks that every picture was written, and renames each over its
 * output.  Outputs are siblings, so the renames stay on one filesystem.
 * Until the end, SIGINT, SIGTERM, SIGHUP and SIGPIPE stop gnuplot and
 * remove the temporary directory before the signal takes its default
 * action: both are registered with lib/io/fatal.h, whose handler does it.
 *
 * The program is $GNUPLOT when set and not empty, else "gnuplot", looked
 * up in PATH.
 */
#ifndef KG_RENDER_H
#define KG_RENDER_H

#include <stddef.h>

#define KG_RENDER_MAX 4		/* outputs of one render */

struct kg_render {
	size_t n;
	char *dir;			/* temporary directory */
	char *script, *log;		/* plot.gp, gnuplot.log in dir */
	char *tmp[KG_RENDER_MAX];	/* pictures in dir */
	char *final[KG_RENDER_MAX];	/* where they go */
};

#define KG_RENDER_INIT { 0 }

/*
 * Prepare n (1..KG_RENDER_MAX) outputs, all in one directory.  ext[i] is
 * the extension of the temporary of output i ("png").  An existing
 * output is an error unless force.  Returns 0, or -1 after kg_error()
 * (r is then released).
 */
int kg_render_begin(struct kg_render *r, const char *const *outputs,
    const char *const *ext, size_t n, int force);

/*
 * Write script, run gnuplot and move the pictures into place.  Returns 0;
 * or -1 after kg_error() when gnuplot cannot be run ("gnuplot not found";
 * install gnuplot-nox) or fails (its last message quoted) or leaves an
 * output empty, and then no output was touched; or when a rename fails,
 * and then the outputs renamed before it stay.  Releases r either way.
 */
int kg_render_run(struct kg_render *r, const char *script);

/* Remove the temporary directory and release r; safe on INIT and twice. */
void kg_render_abort(struct kg_render *r);

#endif
