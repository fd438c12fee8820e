/*
 * outdir: atomic output directories (git's lockfile habit).
 *
 * A stage writes every file into a temporary sibling ".NAME.tmp.PID" of
 * the final directory and, when all is written, fsyncs the files and the
 * directory and renames it into place.  An existing final directory is an
 * error unless "force" is set, in which case it is replaced only at commit
 * time.  On error, abort or SIGINT/SIGTERM/SIGHUP the temporary is removed,
 * so an interrupted run leaves the old output or none, never half of one.
 */
#ifndef KG_OUTDIR_H
#define KG_OUTDIR_H

struct kg_outdir {
	char *final;	/* the directory asked for */
	char *tmp;	/* where files are written until commit */
	int force;
	int active;
};

#define KG_OUTDIR_INIT { NULL, NULL, 0, 0 }

/*
 * Check that "path" can be written (absent, or force), create the
 * temporary sibling and register it for removal on fatal signals.
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

/* Remove a directory tree (no symlink following); 0 or -1. */
int kg_rmtree(const char *path);

#endif
