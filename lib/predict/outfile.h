/*
 * outfile: a text output that is stdout or a file written atomically
 * while it is produced (kg-predict, kg-export).
 *
 * A file is written to a temporary sibling ".NAME.tmp.PID", removed on
 * fatal signals (lib/io/fatal.h) and on abort, then fsynced and renamed
 * into place by commit, so a reader never sees half an output and an
 * error leaves the old file (or none).  Before anything is created, the
 * path is checked against the tool's inputs (lib/io/stage.h) and an
 * existing file needs force.  (lib/io/outdir.h does the same for a
 * buffer written in one call.)
 */
#ifndef KG_OUTFILE_H
#define KG_OUTFILE_H

#include <stddef.h>
#include <stdio.h>

struct kg_outfile {
	FILE *f;		/* write here */
	char *path;		/* final path, NULL for stdout */
	char *tmp;		/* temporary sibling */
};

#define KG_OUTFILE_INIT { 0 }

/*
 * Open path (NULL or "-": stdout) for writing.  inputs[0..n) are what the
 * tool reads.  0, or -1 after kg_error() with nothing created.
 */
int kg_outfile_open(struct kg_outfile *o, const char *path, int force,
    const char *const *inputs, size_t n);

/* Flush (stdout) or fsync and rename into place (a file).  0, or -1
 * after kg_error() with the temporary removed.  Releases o. */
int kg_outfile_commit(struct kg_outfile *o);

/* Remove the temporary and release o; safe after commit and on INIT. */
void kg_outfile_abort(struct kg_outfile *o);

#endif
