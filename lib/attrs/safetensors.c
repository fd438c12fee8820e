/* The safetensors reader (declared in safetensors.h). */
#include "attrs/safetensors.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <jansson.h>

#include "core/util.h"

static const struct {
	const char *name;
	unsigned size;
} dtypes[] = {
	[KG_ST_F32] = { "F32", 4 }, [KG_ST_F16] = { "F16", 2 },
	[KG_ST_BF16] = { "BF16", 2 }, [KG_ST_F64] = { "F64", 8 },
	[KG_ST_I64] = { "I64", 8 }, [KG_ST_I32] = { "I32", 4 },
	[KG_ST_I16] = { "I16", 2 }, [KG_ST_I8] = { "I8", 1 },
	[KG_ST_U8] = { "U8", 1 }, [KG_ST_BOOL] = { "BOOL", 1 },
};

/* One header entry into *t, checked against the data's size. */
static int
read_entry(const struct kg_safetensors *st, const char *name, json_t *v,
    const unsigned char *data, uint64_t data_size, struct kg_st_tensor *t)
{
	const char *dt = json_string_value(json_object_get(v, "dtype"));
	json_t *shape = json_object_get(v, "shape");
	json_t *off = json_object_get(v, "data_offsets");
	uint64_t n = 1, b, e;
	size_t i;

	t->name = kg_xstrdup(name);
	for (i = 0; dt != NULL && i < sizeof(dtypes) / sizeof(dtypes[0]); i++)
		if (strcmp(dt, dtypes[i].name) == 0)
			break;
	if (dt == NULL || i == sizeof(dtypes) / sizeof(dtypes[0])) {
		kg_error("%s: tensor '%s': unknown dtype '%s'", st->path, name,
		    dt ? dt : "?");
		return -1;
	}
	t->dtype = (enum kg_st_dtype)i;
	if (!json_is_array(shape) || json_array_size(shape) > KG_ST_MAX_DIMS ||
	    !json_is_array(off) || json_array_size(off) != 2 ||
	    !json_is_integer(json_array_get(off, 0)) ||
	    !json_is_integer(json_array_get(off, 1))) {
		kg_error("%s: tensor '%s': malformed shape or data_offsets",
		    st->path, name);
		return -1;
	}
	t->ndim = (int)json_array_size(shape);
	for (i = 0; i < (size_t)t->ndim; i++) {
		json_t *d = json_array_get(shape, i);

		if (!json_is_integer(d) || json_integer_value(d) < 0 ||
		    json_integer_value(d) > (json_int_t)1 << 40) {
			kg_error("%s: tensor '%s': bad dimension %zu", st->path,
			    name, i);
			return -1;
		}
		t->shape[i] = (uint64_t)json_integer_value(d);
		n = t->shape[i] == 0 || n <= UINT64_MAX / t->shape[i] ?
		    n * t->shape[i] : UINT64_MAX;
	}
	b = (uint64_t)json_integer_value(json_array_get(off, 0));
	e = (uint64_t)json_integer_value(json_array_get(off, 1));
	if (json_integer_value(json_array_get(off, 0)) < 0 || e < b ||
	    e > data_size) {
		kg_error("%s: tensor '%s': data_offsets [%llu, %llu] outside "
		    "the %llu bytes of data", st->path, name,
		    (unsigned long long)b, (unsigned long long)e,
		    (unsigned long long)data_size);
		return -1;
	}
	if (n > UINT64_MAX / dtypes[t->dtype].size ||
	    e - b != n * dtypes[t->dtype].size) {
		kg_error("%s: tensor '%s': its shape needs %llu bytes, "
		    "data_offsets give %llu", st->path, name,
		    (unsigned long long)(n * dtypes[t->dtype].size),
		    (unsigned long long)(e - b));
		return -1;
	}
	t->data = data + b;
	t->bytes = e - b;
	if (((uintptr_t)t->data) % dtypes[t->dtype].size != 0) {
		kg_error("%s: tensor '%s': data not aligned to its dtype",
		    st->path, name);
		return -1;
	}
	return 0;
}

static int
read_header(struct kg_safetensors *st)
{
	const unsigned char *p = st->map;
	uint64_t hlen = 0;
	json_error_t jerr;
	json_t *root, *v;
	const char *key;
	int i, rc = 0;

	if (st->size < 8) {
		kg_error("%s: truncated safetensors file (%zu bytes)", st->path,
		    st->size);
		return -1;
	}
	for (i = 7; i >= 0; i--)
		hlen = hlen << 8 | p[i];
	if (hlen > st->size - 8 || hlen > ((uint64_t)1 << 30)) {
		kg_error("%s: truncated safetensors file (header of %llu "
		    "bytes, file of %zu)", st->path, (unsigned long long)hlen,
		    st->size);
		return -1;
	}
	root = json_loadb((const char *)p + 8, hlen, JSON_REJECT_DUPLICATES,
	    &jerr);
	if (root == NULL || !json_is_object(root)) {
		kg_error("%s: bad safetensors header: %s", st->path,
		    root ? "not an object" : jerr.text);
		if (root != NULL)
			json_decref(root);
		return -1;
	}
	st->t = kg_xcalloc(json_object_size(root) + 1, sizeof(*st->t));
	json_object_foreach(root, key, v) {
		if (strcmp(key, "__metadata__") == 0)
			continue;
		rc = read_entry(st, key, v, p + 8 + hlen, st->size - 8 - hlen,
		    &st->t[st->n++]);
		if (rc < 0)
			break;
	}
	json_decref(root);
	return rc;
}

int
kg_st_open(struct kg_safetensors *st, const char *path)
{
	struct stat sb;
	int fd;

	memset(st, 0, sizeof(*st));
	st->path = kg_xstrdup(path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &sb) < 0) {
		kg_error_errno("cannot open '%s'", path);
		if (fd >= 0)
			close(fd);
		kg_st_close(st);
		return -1;
	}
	st->size = (size_t)sb.st_size;
	if (st->size > 0) {
		st->map = mmap(NULL, st->size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (st->map == MAP_FAILED) {
			st->map = NULL;
			kg_error_errno("cannot map '%s'", path);
			close(fd);
			kg_st_close(st);
			return -1;
		}
	}
	close(fd);
	if (read_header(st) < 0) {
		kg_st_close(st);
		return -1;
	}
	return 0;
}

void
kg_st_close(struct kg_safetensors *st)
{
	size_t i;

	if (st == NULL)
		return;
	if (st->map != NULL)
		munmap(st->map, st->size);
	for (i = 0; i < st->n; i++)
		free(st->t[i].name);
	free(st->t);
	free(st->path);
	memset(st, 0, sizeof(*st));
}

const struct kg_st_tensor *
kg_st_find(const struct kg_safetensors *st, const char *name)
{
	size_t i;

	for (i = 0; i < st->n; i++)
		if (strcmp(st->t[i].name, name) == 0)
			return &st->t[i];
	return NULL;
}

const float *
kg_st_f32(const struct kg_safetensors *st, const char *name, int ndim,
    const uint64_t *shape)
{
	const struct kg_st_tensor *t = kg_st_find(st, name);
	int i;

	if (t == NULL) {
		kg_error("%s: missing tensor '%s'", st->path, name);
		return NULL;
	}
	if (t->dtype != KG_ST_F32) {
		kg_error("%s: tensor '%s' has dtype %s (only F32 is read)",
		    st->path, name, dtypes[t->dtype].name);
		return NULL;
	}
	for (i = 0; i < ndim && t->ndim == ndim; i++)
		if (t->shape[i] != shape[i])
			break;
	if (t->ndim != ndim || i < ndim) {
		kg_error("%s: tensor '%s' has a shape other than the config's "
		    "(dimension %d: %llu, expected %llu)", st->path, name,
		    i < t->ndim ? i : t->ndim, i < t->ndim ?
		    (unsigned long long)t->shape[i] : 0ULL,
		    i < ndim ? (unsigned long long)shape[i] : 0ULL);
		return NULL;
	}
	return t->data;
}
