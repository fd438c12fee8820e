/*
 * stage: the sequence every kgpipe stage follows around its own work.
 *
 *   struct kg_stage st = KG_STAGE_INIT;
 *   const struct kg_stage_input in[] = { { "dataset", dsdir },
 *       { NULL, "people.csv" } };
 *
 *   if (kg_stage_begin(&st, out, force, in, 2, argc, argv) < 0)
 *       goto out;                      (-1, or KG_ERR_VERSION: exit 3)
 *   ... write files into st.dir, record each with kg_stage_add_file(),
 *   ... set config and figures on st.manifest ...
 *   if (kg_stage_commit(&st) < 0)
 *       goto out;
 *   out:
 *   kg_stage_release(&st);              (removes an uncommitted temporary)
 *
 * kg_stage_begin checks the output path against every input (below),
 * begins the temporary output directory (lib/io/outdir.h: an existing
 * output needs force, stale temporaries go, fatal signals clean up),
 * starts the manifest with the argument vector and records each input
 * that has a role.  kg_stage_commit writes manifest.json and renames the
 * directory into place.
 *
 * No stage may remove or replace what it reads, so an output is refused
 * when it is one of the inputs, lies inside one, or holds one, comparing
 * absolute paths with symlinks, "." and ".." resolved (realpath(3); an
 * output that does not exist yet is resolved through its parent).  This
 * holds with or without force.  Tools that do not use kg_stage_begin (a
 * single output file, or a writer of its own) call kg_stage_check_inputs
 * before they write anything.
 *
 * Not thread-safe; one stage at a time per thread.
 */
#ifndef KG_STAGE_H
#define KG_STAGE_H

#include <stddef.h>

#include "io/manifest.h"
#include "io/outdir.h"

/*
 * An input of a stage.  role names it in the manifest ("dataset",
 * "partitions", ...) and needs path to be a kgpipe output directory; a
 * NULL role (a text file, a schema, a table) is checked against the
 * output but not recorded.  A NULL path, "-" (stdin) and a path that does
 * not exist are skipped by the check.
 */
struct kg_stage_input {
	const char *role;
	const char *path;
};

struct kg_stage {
	struct kg_outdir od;
	struct kg_manifest manifest;	/* started by kg_stage_begin */
	const char *dir;	/* the temporary directory to write into */
};

#define KG_STAGE_INIT { .od = KG_OUTDIR_INIT, .manifest = KG_MANIFEST_INIT }

/*
 * Refuse an output that is, lies inside or holds one of inputs[0..n).
 * Returns 0, or -1 after kg_error() naming both paths ("output 'x' is
 * the input 'y'").  NULL entries, "-" and inputs that do not exist are
 * skipped; an output whose parent does not exist passes (creating it
 * fails later with its own message).
 */
int kg_stage_check_inputs(const char *output, const char *const *inputs,
    size_t n);

/*
 * The same check for any path a run writes: "what" names it in the
 * message ("checkpoint 'x' is inside the input 'y'").  With may_hold, an
 * input inside path passes (a directory the run only adds unnamed files
 * to, such as a swap dir, never replaces what it holds).  0 or -1.
 */
int kg_stage_check_path(const char *what, const char *path,
    const char *const *inputs, size_t n, int may_hold);

/*
 * Begin the stage writing directory "output" from in[0..n_in): check the
 * paths, begin the temporary directory, start the manifest (argv) and
 * record the inputs that have a role.  Returns 0, -1 after kg_error(), or
 * KG_ERR_VERSION when an input was written by an unknown format version;
 * on error nothing is left behind and st needs no release (it may get
 * one).
 */
int kg_stage_begin(struct kg_stage *st, const char *output, int force,
    const struct kg_stage_input *in, size_t n_in, int argc,
    char *const argv[]);

/* Record file "name" (written into st->dir; "sub/name" for a file in a
 * subdirectory) in the manifest.  0 or -1. */
int kg_stage_add_file(struct kg_stage *st, const char *name);

/*
 * Write manifest.json and commit the directory (outdir.h).  0, or -1
 * after kg_error() with the temporary removed.  Call kg_stage_release
 * afterwards either way.
 */
int kg_stage_commit(struct kg_stage *st);

/* Remove an uncommitted temporary and free st; safe on KG_STAGE_INIT and
 * twice. */
void kg_stage_release(struct kg_stage *st);

/*
 * A stage whose output is one file: check "path" against inputs[0..n)
 * as kg_stage_check_inputs does, then write data atomically
 * (kg_outdir_write_file).  0, or -1 after kg_error().
 */
int kg_stage_write_file(const char *path, int force,
    const char *const *inputs, size_t n, const void *data, size_t len);

#endif
