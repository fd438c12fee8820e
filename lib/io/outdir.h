/*
 * outdir: atomic output directories (git's lockfile habit).
 *
 * A stage writes every file into a temporary sibling ".NAME.tmp.PID" of
 * the final directory and, when all is written, fsyncs the files and the
 * directory and renames it into place.  An existing final directory is an
 * error unless "force" is set, in which case it is replaced only at commit
 * time.  On error, abort or SIGINT/SIGTERM/SIGHUP/SIGPIPE the temporary is
 * removed (lib/io/fatal.h), so an interrupted run leaves the old output or
 * none, never half of one.
 *
 * Stale temporaries: a run killed with SIGKILL (or whose signal handler
 * could not remove its tree) leaves ".NAME.tmp.PID"; a run killed between
 * the two renames of a forced commit leaves the old output aside as
 * ".NAME.old.PID".  Every begin for output NAME removes such names, of
 * exactly these forms, whose PID no longer exists (kill(PID, 0) fails
 * with ESRCH), and puts an aside copy back when NAME itself is missing.
 * (A process of another PID namespace or host writing the same output
 * would look dead; kgpipe writes an output from one process.)
 *
 * These paths are not checked against the stage's inputs; lib/io/stage.h
 * does that.
 */
#ifndef KG_OUTDIR_H
#define KG_OUTDIR_H

#include <stddef.h>

struct kg_outdir {
	char *final;	/* the directory asked for */
	char *tmp;	/* where files are written until commit */
	int force;
	int active;
};

#define KG_OUTDIR_INIT { 0 }

/*
 * Check that "path" can be written (absent, or force), remove stale
 * temporaries of it, create the temporary sibling and register it for
 * removal on fatal signals.
 * Returns 0, or -1 after kg_error() ("output 'x' exists; use --force").
 */
int kg_outdir_begin(struct kg_outdir *od, const char *path, int force);

/* A new string: the path of "name" inside the temporary directory. */
char *kg_outdir_file(const struct kg_outdir *od, const char *name);

/* Create a subdirectory "name" inside the temporary; 0 or -1. */
int kg_outdir_mkdir(const struct kg_outdir *od, const char *name);

/*
 * fsync every file, rename the temporary into place (replacing an old
 * directory when forced) and fsync the parent.  0, or -1 after kg_error()
 * with the temporary removed.  Releases od either way.
 */
int kg_outdir_commit(struct kg_outdir *od);

/* Remove the temporary and release od; safe to call twice or on INIT. */
void kg_outdir_abort(struct kg_outdir *od);

/*
 * Write len bytes of data into the file "path" the same way: a temporary
 * sibling ".NAME.tmp.PID" (removed on fatal signals), fsynced and renamed
 * into place.  An existing path needs force and must be a regular file.
 * 0, or -1 after kg_error() with nothing left behind.
 */
int kg_outdir_write_file(const char *path, int force, const void *data,
    size_t len);

/* Remove a directory tree (no symlink following); 0 or -1. */
int kg_rmtree(const char *path);

#endif
