#include "predict/outfile.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/util.h"
#include "io/fatal.h"
#include "io/stage.h"

int
kg_outfile_open(struct kg_outfile *o, const char *path, int force,
    const char *const *inputs, size_t n)
{
	const char *slash;
	int fd;

	*o = (struct kg_outfile)KG_OUTFILE_INIT;
	if (path == NULL || strcmp(path, "-") == 0) {
		o->f = stdout;
		return 0;
	}
	if (kg_stage_check_inputs(path, inputs, n) < 0)
		return -1;
	if (!force && kg_path_exists(path)) {
		kg_error("output '%s' exists; use --force to replace it", path);
		return -1;
	}
	slash = strrchr(path, '/');
	o->tmp = slash ? kg_xasprintf("%.*s/.%s.tmp.%ld", (int)(slash - path),
	    path, slash + 1, (long)getpid()) : kg_xasprintf(".%s.tmp.%ld",
	    path, (long)getpid());
	unlink(o->tmp);		/* a leftover of a killed run with our PID */
	kg_fatal_track_path(o->tmp);
	fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0 || (o->f = fdopen(fd, "w")) == NULL) {
		kg_error_errno("cannot create '%s'", o->tmp);
		if (fd >= 0)
			close(fd);
		kg_outfile_abort(o);
		return -1;
	}
	setvbuf(o->f, NULL, _IOFBF, 1 << 20);
	o->path = kg_xstrdup(path);
	return 0;
}

int
kg_outfile_commit(struct kg_outfile *o)
{
	int rc = 0;

	if (o->f == NULL)
		return -1;
	if (o->path == NULL) {
		if (fflush(stdout) != 0) {
			kg_error_errno("cannot write to stdout");
			rc = -1;
		}
		o->f = NULL;
		return rc;
	}
	if (ferror(o->f) || fflush(o->f) != 0 || fsync(fileno(o->f)) != 0)
		rc = -1;
	if (fclose(o->f) != 0)
		rc = -1;
	o->f = NULL;
	if (rc == 0 && rename(o->tmp, o->path) != 0)
		rc = -1;
	if (rc < 0)
		kg_error_errno("cannot write '%s'", o->path);
	kg_outfile_abort(o);
	return rc;
}

void
kg_outfile_abort(struct kg_outfile *o)
{
	if (o->f != NULL && o->f != stdout)
		fclose(o->f);
	if (o->tmp != NULL) {
		unlink(o->tmp);	/* gone already after a commit */
		kg_fatal_untrack_path(o->tmp);
	}
	free(o->tmp);
	free(o->path);
	*o = (struct kg_outfile)KG_OUTFILE_INIT;
}
