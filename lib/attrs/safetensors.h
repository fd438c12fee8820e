/*
 * safetensors: a reader of Hugging Face's safetensors files, mapped into
 * memory read-only.
 *
 * The file is an 8-byte little-endian header length N, N bytes of JSON
 * {"NAME": {"dtype": "F32", "shape": [..], "data_offsets": [b, e]}, ...,
 * "__metadata__": {...}} and the data; offsets count from the end of the
 * header.  Every tensor is checked when the file is opened: a known dtype,
 * e - b equal to the product of its shape times the dtype's size, e
 * within the file, F32 data 4-byte aligned.  Errors name the file and the
 * tensor.
 */
#ifndef KG_SAFETENSORS_H
#define KG_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#define KG_ST_MAX_DIMS 8

enum kg_st_dtype { KG_ST_F32, KG_ST_F16, KG_ST_BF16, KG_ST_F64, KG_ST_I64,
	KG_ST_I32, KG_ST_I16, KG_ST_I8, KG_ST_U8, KG_ST_BOOL };

struct kg_st_tensor {
	char *name;
	enum kg_st_dtype dtype;
	int ndim;
	uint64_t shape[KG_ST_MAX_DIMS];
	const void *data;	/* inside the mapping */
	uint64_t bytes;
};

struct kg_safetensors {
	char *path;
	void *map;
	size_t size;
	struct kg_st_tensor *t;
	size_t n;
};

#define KG_SAFETENSORS_INIT { 0 }

/* Map and check path.  0, or -1 after kg_error() with nothing to
 * release. */
int kg_st_open(struct kg_safetensors *st, const char *path);
void kg_st_close(struct kg_safetensors *st);

/*
 * The F32 tensor called name with ndim dimensions shape[0..ndim), or NULL
 * after kg_error() ("missing tensor", "has dtype", "has shape").
 */
const float *kg_st_f32(const struct kg_safetensors *st, const char *name,
    int ndim, const uint64_t *shape);

/* The tensor called name, or NULL (no message). */
const struct kg_st_tensor *kg_st_find(const struct kg_safetensors *st,
    const char *name);

#endif
