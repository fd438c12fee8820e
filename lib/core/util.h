/*
 * util: error reporting, checked allocation, checked numeric parsing and
 * small process helpers shared by every kgpipe module and tool.
 *
 * Errors: library functions report through kg_error() and return -1 (or a
 * count / -1).  kg_error() writes "progname: message" to stderr and keeps
 * the last message for tests (kg_error_last()).  Only cmd/ calls exit().
 * The one exception is allocation failure: kg_xmalloc() and friends print
 * "progname: out of memory" and exit(1), as git's xmalloc does, because no
 * caller could do anything better.
 */
#ifndef KG_UTIL_H
#define KG_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/rng.h"

#define KG_VERSION "0.1.0"

enum {
	KG_EXIT_OK = 0,		/* success */
	KG_EXIT_FAIL = 1,	/* bad data, I/O or runtime error */
	KG_EXIT_USAGE = 2,	/* bad command line */
	KG_EXIT_VERSION = 3	/* input written by an unknown format version */
};

#define KG_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Hot row loops get an AVX2/FMA (x86-64-v3) clone picked at load time
 * (GCC ifunc); the default build targets plain x86-64 (SSE2).
 */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && \
    defined(__linux__)
#define KG_HOT_CLONES \
	__attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define KG_HOT_CLONES
#endif

#if defined(__GNUC__)
#define KG_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define KG_PRINTF(f, a)
#endif

/* Set the program name used as message prefix (basename of argv0). */
void kg_setprogname(const char *argv0);
const char *kg_progname(void);

/* Record "fmt" as the last error and print "progname: message" to stderr
 * unless errors are muted. */
void kg_error(const char *fmt, ...) KG_PRINTF(1, 2);
/* As kg_error, appending ": strerror(errno)" (errno as on entry). */
void kg_error_errno(const char *fmt, ...) KG_PRINTF(1, 2);
/* Print a warning "progname: warning: message" (not recorded). */
void kg_warn(const char *fmt, ...) KG_PRINTF(1, 2);
/* The last message recorded by kg_error (without the prefix); "" if none. */
const char *kg_error_last(void);
/* Mute (1) or unmute (0) printing of errors and warnings; for unit tests. */
void kg_error_mute(int mute);
/* Hold (1) or print again (0) errors: held ones are only recorded, for
 * kg_error_last(); warnings still print.  For a caller that reports
 * another process's error in place of its own. */
void kg_error_hold(int hold);

/* Allocation that never returns NULL; sizes are overflow-checked. */
void *kg_xmalloc(size_t size);
void *kg_xcalloc(size_t n, size_t size);
void *kg_xmallocarray(size_t n, size_t size);
/* n * size, or "out of memory" and exit(1) when it overflows (the size of
 * a buffer about to be allocated). */
size_t kg_xmul(size_t n, size_t size);
void *kg_xrealloc(void *p, size_t size);
void *kg_xreallocarray(void *p, size_t n, size_t size);
char *kg_xstrdup(const char *s);
/* Allocate with the given alignment (power of two >= sizeof(void *)); free(). */
void *kg_xaligned_alloc(size_t align, size_t size);
/* snprintf into a new string; never NULL. */
char *kg_xasprintf(const char *fmt, ...) KG_PRINTF(1, 2);

/*
 * Checked numeric parsing of option values: the whole string must be a
 * number within [min, max]; "what" names the option in the message
 * ("--dim").  Return 0, or -1 after kg_error().
 */
int kg_parse_u32(const char *what, const char *s, uint32_t min, uint32_t max,
    uint32_t *out);
int kg_parse_u64(const char *what, const char *s, uint64_t min, uint64_t max,
    uint64_t *out);
int kg_parse_i64(const char *what, const char *s, int64_t min, int64_t max,
    int64_t *out);
int kg_parse_double(const char *what, const char *s, double min, double max,
    double *out);
/* Parse a comma-separated list of doubles into out[0..max_n); *n gets the
 * count.  Each value must lie in [min, max]. */
int kg_parse_double_list(const char *what, const char *s, double min,
    double max, double *out, size_t max_n, size_t *n);

/* Flush and close stdout, reporting write errors; 0 or -1. */
int kg_close_stdout(void);

/* Monotonic wall-clock seconds. */
double kg_now(void);
/* Peak resident set size of this process in KiB (0 if unknown). */
uint64_t kg_peak_rss_kib(void);

/*
 * A growing NUL-terminated string (git's strbuf habit).  Zero-initialise;
 * s stays NULL until the first append; free(s) releases it.
 */
struct kg_strbuf {
	char *s;
	size_t len, cap;
};

/* Append the NUL-terminated string text. */
void kg_strbuf_add(struct kg_strbuf *b, const char *text);

/* Join a directory and a file name into a new string. */
char *kg_path_join(const char *dir, const char *name);
/* Read a whole file into a NUL-terminated buffer; *len gets the size.
 * Returns NULL after kg_error(). */
char *kg_read_file(const char *path, size_t *len);
/* Write text into dir/name (created or truncated) and fsync it.  0, or -1
 * after kg_error(). */
int kg_write_text(const char *dir, const char *name, const char *text);
/*
 * A text file written in one go: kg_wfile_open creates dir/name (1 MB
 * buffer) and sets *path to a new string naming it, or returns NULL
 * after kg_error(); kg_wfile_close checks every write, fsyncs when sync is
 * set, closes, reports "cannot write" and frees path.  0 or -1.
 */
FILE *kg_wfile_open(const char *dir, const char *name, char **path);
int kg_wfile_close(FILE *f, char *path, int sync);
/* 1 if path exists (any type), 0 if not. */
int kg_path_exists(const char *path);
/* The directory that holds path, as a new string: "." for a bare name,
 * "/" for a name at the root. */
char *kg_path_parent(const char *path);


/*
 * Full reads and writes of a descriptor (the one loop for short writes
 * and EINTR).  "at" >= 0 reads or writes at that offset (pread/pwrite,
 * the file position is left alone); at < 0 uses and advances the file
 * position.  Both return 0 once all n bytes are done, or -1 with errno
 * set and nothing reported (the caller names the file): a read that
 * meets the end of the file first fails with errno EIO.  Chunks of at
 * most 1 GiB, so any n works.
 */
int kg_write_full(int fd, const void *buf, size_t n, int64_t at);
int kg_pread_full(int fd, void *buf, size_t n, int64_t at);

#endif
