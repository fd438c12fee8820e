#include "io/npy.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"

#define NPY_ALIGN 64
/* Largest v1.0 header we accept (the format allows 65535). */
#define NPY_MAX_HEADER 65535

static const struct {
	enum kg_dtype dt;
	const char *descr;
	size_t size;
} dtypes[] = {
	{ KG_DT_I4, "<i4", 4 }, { KG_DT_I8, "<i8", 8 },
	{ KG_DT_U1, "|u1", 1 }, { KG_DT_U4, "<u4", 4 },
	{ KG_DT_U8, "<u8", 8 }, { KG_DT_F4, "<f4", 4 },
	{ KG_DT_F8, "<f8", 8 },
};

size_t
kg_dtype_size(enum kg_dtype dt)
{
	size_t i;

	for (i = 0; i < KG_ARRAY_LEN(dtypes); i++)
		if (dtypes[i].dt == dt)
			return dtypes[i].size;
	return 0;
}

const char *
kg_dtype_descr(enum kg_dtype dt)
{
	size_t i;

	for (i = 0; i < KG_ARRAY_LEN(dtypes); i++)
		if (dtypes[i].dt == dt)
			return dtypes[i].descr;
	return NULL;
}

enum kg_dtype
kg_dtype_parse(const char *descr)
{
	size_t i;

	/* numpy writes "|u1" but also accepts "<u1"; take both. */
	if (strcmp(descr, "<u1") == 0)
		return KG_DT_U1;
	for (i = 0; i < KG_ARRAY_LEN(dtypes); i++)
		if (strcmp(dtypes[i].descr, descr) == 0)
			return dtypes[i].dt;
	return KG_DT_NONE;
}

/* Product of shape with overflow check; -1 on overflow. */
static int
shape_count(int ndim, const uint64_t *shape, size_t itemsize,
    uint64_t *count, size_t *nbytes)
{
	uint64_t c = 1;
	int i;

	for (i = 0; i < ndim; i++) {
		if (shape[i] != 0 && c > UINT64_MAX / shape[i])
			return -1;
		c *= shape[i];
	}
	if (itemsize != 0 && c > SIZE_MAX / itemsize)
		return -1;
	*count = c;
	*nbytes = (size_t)c * itemsize;
	return 0;
}

/*
 * Build the header (magic .. final newline) with the data starting at a
 * multiple of NPY_ALIGN.  "pad_to" forces a minimum total header length so
 * the streaming writer can rewrite it in place.  Returns the length, or 0
 * when it does not fit in cap.
 */
static size_t
build_header(char *buf, size_t cap, enum kg_dtype dt, int ndim,
    const uint64_t *shape, size_t pad_to)
{
	struct kg_strbuf dict = { NULL, 0, 0 };
	char num[32];
	size_t n, total, hlen;
	int i;

	kg_strbuf_add(&dict, "{'descr': '");
	kg_strbuf_add(&dict, kg_dtype_descr(dt));
	kg_strbuf_add(&dict, "', 'fortran_order': False, 'shape': (");
	for (i = 0; i < ndim; i++) {
		/* 20 digits at most: the buffer cannot truncate. */
		snprintf(num, sizeof(num), "%s%llu", i ? ", " : "",
		    (unsigned long long)shape[i]);
		kg_strbuf_add(&dict, num);
	}
	kg_strbuf_add(&dict, ndim == 1 ? ",), }" : "), }");
	n = dict.len;
	total = 10 + n + 1;
	total = (total + NPY_ALIGN - 1) / NPY_ALIGN * NPY_ALIGN;
	if (total < pad_to)
		total = pad_to;
	if (total > cap) {
		free(dict.s);
		return 0;
	}
	hlen = total - 10;
	memcpy(buf, "\x93NUMPY\x01\x00", 8);
	buf[8] = (char)(hlen & 0xff);
	buf[9] = (char)(hlen >> 8);
	memcpy(buf + 10, dict.s, n);
	memset(buf + 10 + n, ' ', total - 10 - n - 1);
	buf[total - 1] = '\n';
	free(dict.s);
	return total;
}

static const char *
skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

/* Every syntax error in the header dict gets this one message. */
static int
malformed(const char *path)
{
	kg_error("%s: malformed npy header dict", path);
	return -1;
}

/*
 * Copy the quoted string at *pp (cut at cap - 1 bytes) into buf and move
 * *pp past its closing quote.  -1 when no quoted string stands there or it
 * does not fit; the caller reports.
 */
static int
read_quoted(const char **pp, const char *end, char *buf, size_t cap)
{
	const char *p = *pp;
	size_t n = 0;

	if (p >= end || *p != '\'')
		return -1;
	for (p++; p < end && *p != '\'' && n < cap - 1; p++)
		buf[n++] = *p;
	buf[n] = '\0';
	if (p >= end || *p != '\'')
		return -1;
	*pp = p + 1;
	return 0;
}

/* The value of 'descr': a dtype we know. */
static int
parse_descr(const char *path, const char **pp, const char *end,
    enum kg_dtype *dt)
{
	char d[16];

	if (read_quoted(pp, end, d, sizeof(d)) < 0)
		return malformed(path);
	*dt = kg_dtype_parse(d);
	if (*dt == KG_DT_NONE) {
		kg_error("%s: unsupported dtype '%s' (want <i4, <i8, |u1, "
		    "<u4, <u8, <f4 or <f8, little-endian)", path, d);
		return -1;
	}
	return 0;
}

/* The value of 'fortran_order': False (C order) is all we read. */
static int
parse_fortran(const char *path, const char **pp, const char *end)
{
	const char *p = *pp;

	if (end - p >= 5 && memcmp(p, "False", 5) == 0) {
		*pp = p + 5;
		return 0;
	}
	if (end - p >= 4 && memcmp(p, "True", 4) == 0) {
		kg_error("%s: fortran_order arrays are not supported (write "
		    "C order)", path);
		return -1;
	}
	return malformed(path);
}

/* The value of 'shape': a tuple of at most KG_NPY_MAXDIM integers. */
static int
parse_shape(const char *path, const char **pp, const char *end, int *ndim,
    uint64_t *shape)
{
	const char *p = *pp;
	int nd = 0;

	if (p >= end || *p != '(')
		return malformed(path);
	p++;
	for (;;) {
		char *e;
		unsigned long long v;

		p = skip_ws(p, end);
		if (p < end && *p == ')')
			break;
		if (p >= end || *p < '0' || *p > '9')
			return malformed(path);
		if (nd == KG_NPY_MAXDIM) {
			kg_error("%s: more than %d dimensions", path,
			    KG_NPY_MAXDIM);
			return -1;
		}
		errno = 0;
		v = strtoull(p, &e, 10);
		if (errno != 0 || e > end)
			return malformed(path);
		shape[nd++] = v;
		p = skip_ws(e, end);
		if (p < end && *p == ',')
			p++;
		else if (p < end && *p == ')')
			break;
		else
			return malformed(path);
	}
	*pp = p + 1;
	*ndim = nd;
	return 0;
}

/*
 * Parse the header dict: exactly the keys descr, fortran_order and shape,
 * in any order, as numpy writes them.
 */
static int
parse_dict(const char *path, const char *p, const char *end,
    enum kg_dtype *dt, int *ndim, uint64_t *shape)
{
	int have_descr = 0, have_fortran = 0, have_shape = 0, rc;
	char key[32];

	p = skip_ws(p, end);
	if (p >= end || *p != '{')
		return malformed(path);
	p++;
	for (;;) {
		p = skip_ws(p, end);
		if (p < end && *p == '}')
			break;
		if (read_quoted(&p, end, key, sizeof(key)) < 0)
			return malformed(path);
		p = skip_ws(p, end);
		if (p >= end || *p != ':')
			return malformed(path);
		p = skip_ws(p + 1, end);
		if (strcmp(key, "descr") == 0) {
			rc = parse_descr(path, &p, end, dt);
			have_descr = 1;
		} else if (strcmp(key, "fortran_order") == 0) {
			rc = parse_fortran(path, &p, end);
			have_fortran = 1;
		} else if (strcmp(key, "shape") == 0) {
			rc = parse_shape(path, &p, end, ndim, shape);
			have_shape = 1;
		} else {
			kg_error("%s: unexpected key '%s' in npy header",
			    path, key);
			return -1;
		}
		if (rc < 0)
			return -1;
		p = skip_ws(p, end);
		if (p < end && *p == ',')
			p++;
		else if (p < end && *p == '}')
			break;
		else
			return malformed(path);
	}
	if (!have_descr || !have_fortran || !have_shape) {
		kg_error("%s: npy header lacks '%s'", path, !have_descr ?
		    "descr" : !have_fortran ? "fortran_order" : "shape");
		return -1;
	}
	return 0;
}

/* Validate the header in buf[0..len) (len >= what is there). */
static int
parse_header(const char *path, const unsigned char *buf, size_t len,
    enum kg_dtype *dt, int *ndim, uint64_t *shape, size_t *offset)
{
	size_t hlen;

	if (len < 10 || memcmp(buf, "\x93NUMPY", 6) != 0) {
		kg_error("%s: not a .npy file (bad magic)", path);
		return -1;
	}
	if (buf[6] != 1 || buf[7] != 0) {
		kg_error("%s: npy format version %u.%u is not supported "
		    "(want 1.0)", path, buf[6], buf[7]);
		return -1;
	}
	hlen = (size_t)buf[8] | ((size_t)buf[9] << 8);
	if (10 + hlen > len) {
		kg_error("%s: truncated npy header", path);
		return -1;
	}
	if (hlen == 0 || buf[10 + hlen - 1] != '\n') {
		kg_error("%s: npy header does not end in a newline", path);
		return -1;
	}
	if (parse_dict(path, (const char *)buf + 10,
	    (const char *)buf + 10 + hlen - 1, dt, ndim, shape) < 0)
		return -1;
	*offset = 10 + hlen;
	return 0;
}

int
kg_npy_read_header(const char *path, enum kg_dtype *dt, int *ndim,
    uint64_t shape[KG_NPY_MAXDIM], size_t *data_offset)
{
	unsigned char buf[10 + NPY_MAX_HEADER];
	ssize_t got;
	size_t len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		kg_error_errno("cannot open '%s'", path);
		return -1;
	}
	while (len < sizeof(buf)) {
		got = read(fd, buf + len, sizeof(buf) - len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			kg_error_errno("cannot read '%s'", path);
			close(fd);
			return -1;
		}
		if (got == 0)
			break;
		len += (size_t)got;
	}
	close(fd);
	return parse_header(path, buf, len, dt, ndim, shape, data_offset);
}

int
kg_npy_read(const char *path, struct kg_npy *a)
{
	struct kg_npy z = KG_NPY_INIT;
	struct stat st;
	size_t offset;
	void *map = NULL;
	int fd;

	*a = z;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		kg_error_errno("cannot open '%s'", path);
		return -1;
	}
	if (fstat(fd, &st) != 0) {
		kg_error_errno("cannot stat '%s'", path);
		close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		kg_error("%s: not a regular file", path);
		close(fd);
		return -1;
	}
	if (st.st_size < 10) {
		kg_error("%s: truncated npy file (%lld bytes)", path,
		    (long long)st.st_size);
		close(fd);
		return -1;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED) {
		kg_error_errno("cannot map '%s'", path);
		return -1;
	}
	if (parse_header(path, map, (size_t)st.st_size, &a->dtype, &a->ndim,
	    a->shape, &offset) < 0)
		goto fail;
	if (shape_count(a->ndim, a->shape, kg_dtype_size(a->dtype),
	    &a->count, &a->nbytes) < 0) {
		kg_error("%s: shape too large", path);
		goto fail;
	}
	if ((uint64_t)st.st_size != offset + a->nbytes) {
		kg_error("%s: file size %lld does not match its header "
		    "(%zu header bytes + %zu data bytes)%s", path,
		    (long long)st.st_size, offset, a->nbytes,
		    (uint64_t)st.st_size < offset + a->nbytes ?
		    ": truncated" : ": trailing bytes");
		goto fail;
	}
	a->map = map;
	a->maplen = (size_t)st.st_size;
	a->data = (char *)map + offset;
	if (offset % 16 != 0)
		kg_warn("%s: data is not aligned (header %zu bytes)", path,
		    offset);
	return 0;
fail:
	munmap(map, (size_t)st.st_size);
	*a = z;
	return -1;
}

static const char *
dtype_label(enum kg_dtype dt)
{
	const char *d = kg_dtype_descr(dt);

	return d ? d : "?";
}

int
kg_npy_read_expect(const char *path, enum kg_dtype dt, int ndim,
    struct kg_npy *a)
{
	if (kg_npy_read(path, a) < 0)
		return -1;
	if (dt != KG_DT_NONE && a->dtype != dt) {
		kg_error("%s: dtype %s, expected %s", path,
		    dtype_label(a->dtype), dtype_label(dt));
		kg_npy_release(a);
		return -1;
	}
	if (ndim >= 0 && a->ndim != ndim) {
		kg_error("%s: %d dimensions, expected %d", path, a->ndim,
		    ndim);
		kg_npy_release(a);
		return -1;
	}
	return 0;
}

void
kg_npy_alloc(struct kg_npy *a, enum kg_dtype dt, int ndim,
    const uint64_t *shape)
{
	struct kg_npy z = KG_NPY_INIT;
	int i;

	*a = z;
	a->dtype = dt;
	a->ndim = ndim;
	for (i = 0; i < ndim; i++)
		a->shape[i] = shape[i];
	if (shape_count(ndim, shape, kg_dtype_size(dt), &a->count,
	    &a->nbytes) < 0) {
		fprintf(stderr, "%s: out of memory\n", kg_progname());
		exit(KG_EXIT_FAIL);
	}
	a->data = kg_xaligned_alloc(NPY_ALIGN, a->nbytes);
	memset(a->data, 0, a->nbytes);
	a->owned = 1;
}

void
kg_npy_release(struct kg_npy *a)
{
	struct kg_npy z = KG_NPY_INIT;

	if (a->map)
		munmap(a->map, a->maplen);
	else if (a->owned)
		free(a->data);
	*a = z;
}

static int
check_ndim(const char *path, enum kg_dtype dt, int ndim)
{
	if (kg_dtype_size(dt) == 0) {
		kg_error("%s: unsupported dtype", path);
		return -1;
	}
	if (ndim < 0 || ndim > KG_NPY_MAXDIM) {
		kg_error("%s: %d dimensions not supported", path, ndim);
		return -1;
	}
	return 0;
}

int
kg_npy_write(const char *path, enum kg_dtype dt, int ndim,
    const uint64_t *shape, const void *data)
{
	char hdr[1024];
	size_t hlen, nbytes;
	uint64_t count;
	int fd;

	if (check_ndim(path, dt, ndim) < 0)
		return -1;
	if (shape_count(ndim, shape, kg_dtype_size(dt), &count, &nbytes) < 0) {
		kg_error("%s: shape too large", path);
		return -1;
	}
	hlen = build_header(hdr, sizeof(hdr), dt, ndim, shape, 0);
	if (hlen == 0) {
		kg_error("%s: header too long", path);
		return -1;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		kg_error_errno("cannot create '%s'", path);
		return -1;
	}
	if (kg_write_full(fd, hdr, hlen, -1) < 0 ||
	    kg_write_full(fd, data, nbytes, -1) < 0 || fsync(fd) < 0) {
		kg_error_errno("cannot write '%s'", path);
		close(fd);
		unlink(path);
		return -1;
	}
	if (close(fd) < 0) {
		kg_error_errno("cannot close '%s'", path);
		unlink(path);
		return -1;
	}
	return 0;
}

/* Room for any shape the writer can produce, a multiple of NPY_ALIGN. */
#define STREAM_HEADER 256

int
kg_npy_writer_open(struct kg_npy_writer *w, const char *path,
    enum kg_dtype dt, int ndim, const uint64_t *row_shape)
{
	char hdr[STREAM_HEADER];
	int i;

	memset(w, 0, sizeof(*w));
	w->fd = -1;
	if (check_ndim(path, dt, ndim) < 0)
		return -1;
	if (ndim < 1) {
		kg_error("%s: a streamed array needs at least 1 dimension",
		    path);
		return -1;
	}
	w->dtype = dt;
	w->ndim = ndim;
	w->row_bytes = kg_dtype_size(dt);
	for (i = 1; i < ndim; i++) {
		w->shape[i] = row_shape[i - 1];
		if (w->shape[i] != 0 && w->row_bytes > SIZE_MAX / w->shape[i]) {
			kg_error("%s: row too large", path);
			return -1;
		}
		w->row_bytes *= w->shape[i];
	}
	w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (w->fd < 0) {
		kg_error_errno("cannot create '%s'", path);
		return -1;
	}
	w->path = kg_xstrdup(path);
	w->buf_cap = 1 << 20;
	w->buf = kg_xmalloc(w->buf_cap);
	/* A placeholder header of the final length, rewritten at close. */
	build_header(hdr, sizeof(hdr), dt, ndim, w->shape, STREAM_HEADER);
	if (kg_write_full(w->fd, hdr, STREAM_HEADER, -1) < 0) {
		kg_error_errno("cannot write '%s'", path);
		kg_npy_writer_abort(w);
		return -1;
	}
	return 0;
}

static int
writer_flush(struct kg_npy_writer *w)
{
	if (w->buf_len == 0 || w->failed)
		return w->failed ? -1 : 0;
	if (kg_write_full(w->fd, w->buf, w->buf_len, -1) < 0) {
		kg_error_errno("cannot write '%s'", w->path);
		w->failed = 1;
		return -1;
	}
	w->buf_len = 0;
	return 0;
}

int
kg_npy_writer_append(struct kg_npy_writer *w, const void *rows, uint64_t n)
{
	const char *p = rows;
	size_t len, take;

	if (w->failed)
		return -1;
	if (w->row_bytes != 0 && n > SIZE_MAX / w->row_bytes) {
		kg_error("%s: too many rows", w->path);
		w->failed = 1;
		return -1;
	}
	len = (size_t)n * w->row_bytes;
	w->rows += n;
	while (len > 0) {
		take = w->buf_cap - w->buf_len;
		if (take > len)
			take = len;
		memcpy(w->buf + w->buf_len, p, take);
		w->buf_len += take;
		p += take;
		len -= take;
		if (w->buf_len == w->buf_cap && writer_flush(w) < 0)
			return -1;
	}
	return 0;
}

int
kg_npy_writer_close(struct kg_npy_writer *w)
{
	char hdr[STREAM_HEADER];

	if (w->fd < 0)
		return -1;
	if (writer_flush(w) < 0)
		goto fail;
	w->shape[0] = w->rows;
	if (build_header(hdr, sizeof(hdr), w->dtype, w->ndim, w->shape,
	    STREAM_HEADER) != STREAM_HEADER) {
		kg_error("%s: header too long", w->path);
		goto fail;
	}
	if (pwrite(w->fd, hdr, STREAM_HEADER, 0) != STREAM_HEADER ||
	    fsync(w->fd) < 0) {
		kg_error_errno("cannot write '%s'", w->path);
		goto fail;
	}
	if (close(w->fd) < 0) {
		w->fd = -1;
		kg_error_errno("cannot close '%s'", w->path);
		goto fail;
	}
	w->fd = -1;
	free(w->buf);
	free(w->path);
	w->buf = w->path = NULL;
	return 0;
fail:
	kg_npy_writer_abort(w);
	return -1;
}

void
kg_npy_writer_abort(struct kg_npy_writer *w)
{
	if (w->fd >= 0)
		close(w->fd);
	if (w->path)
		unlink(w->path);
	free(w->buf);
	free(w->path);
	w->buf = w->path = NULL;
	w->fd = -1;
}

size_t
kg_npy_header(char *buf, size_t cap, enum kg_dtype dt, int ndim,
    const uint64_t *shape)
{
	if (kg_dtype_size(dt) == 0 || ndim < 0 || ndim > KG_NPY_MAXDIM)
		return 0;
	return build_header(buf, cap, dt, ndim, shape, 0);
}
