#include "core/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *progname = "kgpipe";
static char last_error[1024];
static int muted, held;

void
kg_setprogname(const char *argv0)
{
	const char *slash;

	if (argv0 == NULL || *argv0 == '\0')
		return;
	slash = strrchr(argv0, '/');
	progname = slash ? slash + 1 : argv0;
}

const char *
kg_progname(void)
{
	return progname;
}

static void
verror(int with_errno, const char *fmt, va_list ap)
{
	int saved = errno;
	size_t len;

	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	if (with_errno) {
		len = strlen(last_error);
		snprintf(last_error + len, sizeof(last_error) - len, ": %s",
		    strerror(saved));
	}
	if (!muted && !held)
		fprintf(stderr, "%s: %s\n", progname, last_error);
	errno = saved;
}

void
kg_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verror(0, fmt, ap);
	va_end(ap);
}

void
kg_error_errno(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verror(1, fmt, ap);
	va_end(ap);
}

void
kg_warn(const char *fmt, ...)
{
	va_list ap;

	if (muted)
		return;
	va_start(ap, fmt);
	fprintf(stderr, "%s: warning: ", progname);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

const char *
kg_error_last(void)
{
	return last_error;
}

void
kg_error_mute(int mute)
{
	muted = mute;
}

void
kg_error_hold(int hold)
{
	held = hold;
}

static void
oom(void)
{
	fprintf(stderr, "%s: out of memory\n", progname);
	exit(KG_EXIT_FAIL);
}

void *
kg_xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (p == NULL)
		oom();
	return p;
}

void *
kg_xmallocarray(size_t n, size_t size)
{
	if (size != 0 && n > SIZE_MAX / size)
		oom();
	return kg_xmalloc(n * size);
}

size_t
kg_xmul(size_t n, size_t size)
{
	if (size != 0 && n > SIZE_MAX / size)
		oom();
	return n * size;
}

void *
kg_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (p == NULL)
		oom();
	return p;
}

void *
kg_xrealloc(void *p, size_t size)
{
	void *q = realloc(p, size ? size : 1);

	if (q == NULL)
		oom();
	return q;
}

void *
kg_xreallocarray(void *p, size_t n, size_t size)
{
	if (size != 0 && n > SIZE_MAX / size)
		oom();
	return kg_xrealloc(p, n * size);
}

char *
kg_xstrdup(const char *s)
{
	size_t len = strlen(s) + 1;
	char *p = kg_xmalloc(len);

	memcpy(p, s, len);
	return p;
}

void *
kg_xaligned_alloc(size_t align, size_t size)
{
	void *p = NULL;

	if (posix_memalign(&p, align, size ? size : align) != 0)
		oom();
	return p;
}

char *
kg_xasprintf(const char *fmt, ...)
{
	va_list ap;
	int n;
	char *s;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		oom();
	s = kg_xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

static int
check_empty(const char *what, const char *s)
{
	if (s == NULL || *s == '\0') {
		kg_error("%s: empty value", what);
		return -1;
	}
	return 0;
}

int
kg_parse_u64(const char *what, const char *s, uint64_t min, uint64_t max,
    uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (check_empty(what, s) < 0)
		return -1;
	if (*s == '-' || *s == '+' || *s == ' ' || *s == '\t') {
		kg_error("%s: '%s' is not a non-negative integer", what, s);
		return -1;
	}
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end != '\0') {
		kg_error("%s: '%s' is not a non-negative integer", what, s);
		return -1;
	}
	if (errno == ERANGE || v < min || v > max) {
		kg_error("%s: %s is out of range [%llu, %llu]", what, s,
		    (unsigned long long)min, (unsigned long long)max);
		return -1;
	}
	*out = v;
	return 0;
}

int
kg_parse_u32(const char *what, const char *s, uint32_t min, uint32_t max,
    uint32_t *out)
{
	uint64_t v;

	if (kg_parse_u64(what, s, min, max, &v) < 0)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

int
kg_parse_i64(const char *what, const char *s, int64_t min, int64_t max,
    int64_t *out)
{
	char *end;
	long long v;

	if (check_empty(what, s) < 0)
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (*end != '\0' || *s == ' ' || *s == '\t') {
		kg_error("%s: '%s' is not an integer", what, s);
		return -1;
	}
	if (errno == ERANGE || v < min || v > max) {
		kg_error("%s: %s is out of range [%lld, %lld]", what, s,
		    (long long)min, (long long)max);
		return -1;
	}
	*out = v;
	return 0;
}

int
kg_parse_double(const char *what, const char *s, double min, double max,
    double *out)
{
	char *end;
	double v;

	if (check_empty(what, s) < 0)
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (*end != '\0' || *s == ' ' || *s == '\t' || isnan(v)) {
		kg_error("%s: '%s' is not a number", what, s);
		return -1;
	}
	if (errno == ERANGE || !(v >= min && v <= max)) {
		kg_error("%s: %s is out of range [%g, %g]", what, s, min, max);
		return -1;
	}
	*out = v;
	return 0;
}

int
kg_parse_double_list(const char *what, const char *s, double min,
    double max, double *out, size_t max_n, size_t *n)
{
	char *copy, *p, *comma;
	size_t k = 0;
	int rc = 0;

	if (check_empty(what, s) < 0)
		return -1;
	copy = kg_xstrdup(s);
	for (p = copy;; p = comma + 1) {
		comma = strchr(p, ',');
		if (comma)
			*comma = '\0';
		if (k == max_n) {
			kg_error("%s: more than %zu values in '%s'", what,
			    max_n, s);
			rc = -1;
			break;
		}
		if (kg_parse_double(what, p, min, max, &out[k]) < 0) {
			rc = -1;
			break;
		}
		k++;
		if (!comma)
			break;
	}
	free(copy);
	*n = k;
	return rc;
}

int
kg_close_stdout(void)
{
	int bad = ferror(stdout);

	if (fclose(stdout) != 0 || bad) {
		kg_error_errno("error writing standard output");
		return -1;
	}
	return 0;
}

double
kg_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

uint64_t
kg_peak_rss_kib(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return 0;
	return (uint64_t)ru.ru_maxrss;	/* KiB on Linux */
}

void
kg_strbuf_add(struct kg_strbuf *b, const char *text)
{
	size_t n = strlen(text);

	if (b->len + n + 1 > b->cap) {
		b->cap = 2 * (b->len + n + 1);
		b->s = kg_xrealloc(b->s, b->cap);
	}
	memcpy(b->s + b->len, text, n + 1);
	b->len += n;
}

char *
kg_path_join(const char *dir, const char *name)
{
	size_t dl = strlen(dir);

	if (dl > 0 && dir[dl - 1] == '/')
		return kg_xasprintf("%s%s", dir, name);
	return kg_xasprintf("%s/%s", dir, name);
}

char *
kg_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0, got;

	if (f == NULL) {
		kg_error_errno("cannot open '%s'", path);
		return NULL;
	}
	for (;;) {
		if (cap - n < 65536) {
			cap = cap ? cap * 2 : 65536;
			buf = kg_xrealloc(buf, cap + 1);
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		kg_error_errno("cannot read '%s'", path);
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

FILE *
kg_wfile_open(const char *dir, const char *name, char **path)
{
	FILE *f;

	*path = kg_path_join(dir, name);
	if ((f = fopen(*path, "w")) == NULL) {
		kg_error_errno("cannot create '%s'", *path);
		free(*path);
		*path = NULL;
		return NULL;
	}
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	return f;
}

int
kg_wfile_close(FILE *f, char *path, int sync)
{
	int rc = 0;

	if (ferror(f) || fflush(f) != 0 || (sync && fsync(fileno(f)) != 0))
		rc = -1;
	if (fclose(f) != 0)
		rc = -1;
	if (rc < 0)
		kg_error_errno("cannot write '%s'", path);
	free(path);
	return rc;
}

int
kg_write_text(const char *dir, const char *name, const char *text)
{
	char *path;
	FILE *f = kg_wfile_open(dir, name, &path);

	if (f == NULL)
		return -1;
	fputs(text, f);
	return kg_wfile_close(f, path, 1);
}

int
kg_path_exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/* ---- full reads and writes ---- */

#define FULL_CHUNK ((size_t)1 << 30)

int
kg_write_full(int fd, const void *buf, size_t n, int64_t at)
{
	const char *p = buf;

	while (n > 0) {
		size_t len = n < FULL_CHUNK ? n : FULL_CHUNK;
		ssize_t w = at >= 0 ? pwrite(fd, p, len, (off_t)at) :
		    write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		if (w == 0) {
			errno = EIO;
			return -1;
		}
		p += w;
		n -= (size_t)w;
		if (at >= 0)
			at += w;
	}
	return 0;
}

int
kg_pread_full(int fd, void *buf, size_t n, int64_t at)
{
	char *p = buf;

	while (n > 0) {
		size_t len = n < FULL_CHUNK ? n : FULL_CHUNK;
		ssize_t r = at >= 0 ? pread(fd, p, len, (off_t)at) :
		    read(fd, p, len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0) {
			errno = EIO;
			return -1;
		}
		p += r;
		n -= (size_t)r;
		if (at >= 0)
			at += r;
	}
	return 0;
}

char *
kg_path_parent(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (slash == NULL)
		return kg_xstrdup(".");
	if (slash == path)
		return kg_xstrdup("/");
	return kg_xasprintf("%.*s", (int)(slash - path), path);
}
