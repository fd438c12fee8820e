/*
 * fuzz_npy: the .npy reader of lib/io/npy.c (magic, version, header dict,
 * shape and size checks).  A file that kg_npy_read accepts must have a
 * header kg_npy_read_header accepts alike, exactly header + count *
 * itemsize bytes, data inside the mapping, and must write back with
 * kg_npy_write into an array that reads the same.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "io/npy.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet();
	return 0;
}

/* Every byte of the data, so that a mapping too short faults here. */
static unsigned
touch(const struct kg_npy *a)
{
	const unsigned char *p = a->data;
	unsigned sum = 0;
	size_t i;

	for (i = 0; i < a->nbytes; i++)
		sum += p[i];
	return sum;
}

/* Write a back and read it again: the same dtype, shape and bytes. */
static void
round_trip(const struct kg_npy *a)
{
	struct kg_npy b = KG_NPY_INIT;
	char *path = fuzz_write("copy.npy", "", 0);
	int i;

	FUZZ_CHECK(kg_npy_write(path, a->dtype, a->ndim, a->shape,
	    a->data) == 0, "an array read cannot be written back");
	FUZZ_CHECK(kg_npy_read(path, &b) == 0,
	    "an array written cannot be read back");
	FUZZ_CHECK(b.dtype == a->dtype && b.ndim == a->ndim &&
	    b.count == a->count && b.nbytes == a->nbytes,
	    "the copy's header differs");
	for (i = 0; i < a->ndim; i++)
		FUZZ_CHECK(b.shape[i] == a->shape[i],
		    "the copy's shape differs");
	FUZZ_CHECK(a->nbytes == 0 || memcmp(a->data, b.data, a->nbytes) == 0,
	    "the copy's data differ");
	FUZZ_CHECK((uintptr_t)b.data % 64 == 0,
	    "a written array's data is not 64-byte aligned");
	kg_npy_release(&b);
	free(path);
}

/* kg_npy_read_expect takes what a has and refuses another dtype or
 * number of dimensions. */
static void
expect(const char *path, const struct kg_npy *a)
{
	struct kg_npy b = KG_NPY_INIT;
	enum kg_dtype other = a->dtype == KG_DT_I4 ? KG_DT_F4 : KG_DT_I4;

	FUZZ_CHECK(kg_npy_read_expect(path, a->dtype, a->ndim, &b) == 0,
	    "kg_npy_read_expect refuses what kg_npy_read takes");
	kg_npy_release(&b);
	FUZZ_CHECK(kg_npy_read_expect(path, KG_DT_NONE, -1, &b) == 0,
	    "kg_npy_read_expect refuses any dtype and shape");
	kg_npy_release(&b);
	FUZZ_CHECK(kg_npy_read_expect(path, other, -1, &b) < 0,
	    "kg_npy_read_expect takes the wrong dtype");
	FUZZ_CHECK(kg_npy_read_expect(path, KG_DT_NONE, a->ndim + 1, &b) < 0,
	    "kg_npy_read_expect takes the wrong number of dimensions");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kg_npy a = KG_NPY_INIT;
	enum kg_dtype dt = KG_DT_NONE;
	uint64_t shape[KG_NPY_MAXDIM];
	size_t off = 0, item;
	int ndim = -1, hdr, i;
	char *path = fuzz_write("in.npy", data, size);

	hdr = kg_npy_read_header(path, &dt, &ndim, shape, &off);
	if (kg_npy_read(path, &a) == 0) {
		FUZZ_CHECK(hdr == 0, "the array reads but its header does not");
		FUZZ_CHECK(dt == a.dtype && ndim == a.ndim,
		    "kg_npy_read_header and kg_npy_read disagree");
		for (i = 0; i < ndim; i++)
			FUZZ_CHECK(shape[i] == a.shape[i],
			    "kg_npy_read_header and kg_npy_read disagree");
		item = kg_dtype_size(a.dtype);
		FUZZ_CHECK(item > 0 && a.nbytes == a.count * item &&
		    off + a.nbytes == size && a.ndim <= KG_NPY_MAXDIM,
		    "an accepted array's sizes do not add up");
		FUZZ_CHECK((const char *)a.data == (const char *)a.map + off,
		    "the data does not start after the header");
		(void)touch(&a);
		expect(path, &a);
		round_trip(&a);
		kg_npy_release(&a);
	}
	free(path);
	return 0;
}
