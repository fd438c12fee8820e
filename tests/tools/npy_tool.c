/*
 * npy_tool: a test helper for numpy round-trips.
 *   npy_tool write DIR      writes sample arrays of every dtype into DIR
 *                           (streamed and one-shot), values i * 3 + 1 for
 *                           element i (floats add 0.5)
 *   npy_tool dump FILE      reads FILE and prints "dtype ndim d0 d1 .. sum"
 *                           where sum is the sum of elements as double
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/npy.h"
#include "core/util.h"

static double
elem(const struct kg_npy *a, uint64_t i)
{
	switch (a->dtype) {
	case KG_DT_I4: return ((const int32_t *)a->data)[i];
	case KG_DT_I8: return (double)((const int64_t *)a->data)[i];
	case KG_DT_U1: return ((const uint8_t *)a->data)[i];
	case KG_DT_U4: return ((const uint32_t *)a->data)[i];
	case KG_DT_U8: return (double)((const uint64_t *)a->data)[i];
	case KG_DT_F4: return ((const float *)a->data)[i];
	case KG_DT_F8: return ((const double *)a->data)[i];
	default: return 0;
	}
}

static void
fill(struct kg_npy *a)
{
	uint64_t i;

	for (i = 0; i < a->count; i++) {
		double v = (double)(i * 3 + 1);

		switch (a->dtype) {
		case KG_DT_I4: ((int32_t *)a->data)[i] = (int32_t)v; break;
		case KG_DT_I8: ((int64_t *)a->data)[i] = (int64_t)v; break;
		case KG_DT_U1: ((uint8_t *)a->data)[i] = (uint8_t)v; break;
		case KG_DT_U4: ((uint32_t *)a->data)[i] = (uint32_t)v; break;
		case KG_DT_U8: ((uint64_t *)a->data)[i] = (uint64_t)v; break;
		case KG_DT_F4: ((float *)a->data)[i] = (float)(v + 0.5); break;
		case KG_DT_F8: ((double *)a->data)[i] = v + 0.5; break;
		default: break;
		}
	}
}

static int
write_samples(const char *dir)
{
	static const enum kg_dtype dts[] = { KG_DT_I4, KG_DT_I8, KG_DT_U1,
	    KG_DT_U4, KG_DT_U8, KG_DT_F4, KG_DT_F8 };
	static const char *const names[] = { "i4", "i8", "u1", "u4", "u8",
	    "f4", "f8" };
	uint64_t shape[3] = { 5, 4, 3 };
	size_t i;

	for (i = 0; i < KG_ARRAY_LEN(dts); i++) {
		struct kg_npy a;
		struct kg_npy_writer w;
		char *p;
		int ndim = 1 + (int)(i % 3);

		kg_npy_alloc(&a, dts[i], ndim, shape);
		fill(&a);
		p = kg_xasprintf("%s/%s_%dd.npy", dir, names[i], ndim);
		if (kg_npy_write(p, dts[i], ndim, shape, a.data) < 0)
			return -1;
		free(p);
		/* The same array streamed in two pieces. */
		p = kg_xasprintf("%s/%s_%dd_stream.npy", dir, names[i], ndim);
		if (kg_npy_writer_open(&w, p, dts[i], ndim, shape + 1) < 0 ||
		    kg_npy_writer_append(&w, a.data, 2) < 0 ||
		    kg_npy_writer_append(&w, (char *)a.data +
		    a.nbytes / 5 * 2, 3) < 0 || kg_npy_writer_close(&w) < 0)
			return -1;
		free(p);
		kg_npy_release(&a);
	}
	return 0;
}

int
main(int argc, char *argv[])
{
	struct kg_npy a;
	double sum = 0;
	uint64_t i;
	int d;

	kg_setprogname(argv[0]);
	if (argc == 3 && strcmp(argv[1], "write") == 0)
		return write_samples(argv[2]) < 0 ? 1 : 0;
	if (argc != 3 || strcmp(argv[1], "dump") != 0) {
		fprintf(stderr, "usage: npy_tool write DIR | dump FILE\n");
		return 2;
	}
	if (kg_npy_read(argv[2], &a) < 0)
		return 1;
	for (i = 0; i < a.count; i++)
		sum += elem(&a, i);
	printf("%s %d", kg_dtype_descr(a.dtype), a.ndim);
	for (d = 0; d < a.ndim; d++)
		printf(" %llu", (unsigned long long)a.shape[d]);
	printf(" %.6f\n", sum);
	kg_npy_release(&a);
	return kg_close_stdout() < 0 ? 1 : 0;
}
