#include <fcntl.h>
#include <unistd.h>

#include "io/npy.h"
#include "core/util.h"
#include "test.h"

static char *
tpath(const char *name)
{
	return kg_path_join(t_tmpdir(), name);
}

/* Write raw bytes: magic + version + header dict padded + data bytes. */
static void
write_raw(const char *path, const char *magic, size_t magic_len,
    const char *dict, size_t data_bytes)
{
	FILE *f = fopen(path, "wb");
	size_t dl = strlen(dict), total = 10 + dl + 1, hlen, i;

	total = (total + 63) / 64 * 64;
	hlen = total - 10;
	fwrite(magic, 1, magic_len, f);
	fputc((int)(hlen & 0xff), f);
	fputc((int)(hlen >> 8), f);
	fputs(dict, f);
	for (i = 10 + dl; i < total - 1; i++)
		fputc(' ', f);
	fputc('\n', f);
	for (i = 0; i < data_bytes; i++)
		fputc((int)i, f);
	fclose(f);
}

static void
t_roundtrip_all_dtypes(void)
{
	static const enum kg_dtype dts[] = { KG_DT_I4, KG_DT_I8, KG_DT_U1,
	    KG_DT_U4, KG_DT_U8, KG_DT_F4, KG_DT_F8 };
	uint64_t shape[3] = { 7, 3, 2 };
	size_t i, k;

	for (i = 0; i < KG_ARRAY_LEN(dts); i++) {
		struct kg_npy a, b;
		char *p = tpath("rt.npy");

		kg_npy_alloc(&a, dts[i], 3, shape);
		for (k = 0; k < a.nbytes; k++)
			((unsigned char *)a.data)[k] = (unsigned char)(k * 7);
		T_CHECK(kg_npy_write(p, dts[i], 3, shape, a.data) == 0);
		T_CHECK(kg_npy_read(p, &b) == 0);
		T_CHECK(b.dtype == dts[i] && b.ndim == 3);
		T_CHECK(b.shape[0] == 7 && b.shape[1] == 3 && b.shape[2] == 2);
		T_CHECK(b.count == 42 && b.nbytes == a.nbytes);
		T_CHECK(memcmp(a.data, b.data, a.nbytes) == 0);
		T_CHECK(((uintptr_t)b.data % 64) == 0);
		kg_npy_release(&b);
		kg_npy_release(&a);
		T_CHECK(b.data == NULL);
		free(p);
	}
}

static void
t_stream_writer(void)
{
	struct kg_npy_writer w;
	struct kg_npy a;
	uint64_t row[1] = { 3 };
	int32_t rows[3 * 1000];
	char *p = tpath("stream.npy");
	int i, j;

	for (i = 0; i < 3000; i++)
		rows[i] = i;
	T_CHECK(kg_npy_writer_open(&w, p, KG_DT_I4, 2, row) == 0);
	/* 700 appends of 1000 rows: crosses the internal buffer many times */
	for (j = 0; j < 700; j++)
		T_CHECK(kg_npy_writer_append(&w, rows, 1000) == 0);
	T_CHECK(kg_npy_writer_close(&w) == 0);
	T_CHECK(kg_npy_read_expect(p, KG_DT_I4, 2, &a) == 0);
	T_CHECK(a.shape[0] == 700000 && a.shape[1] == 3);
	T_CHECK(((int32_t *)a.data)[3 * 1000 * 5 + 17] == 17);
	kg_npy_release(&a);
	/* An aborted writer leaves nothing behind. */
	T_CHECK(kg_npy_writer_open(&w, p, KG_DT_I4, 2, row) == 0);
	T_CHECK(kg_npy_writer_append(&w, rows, 10) == 0);
	kg_npy_writer_abort(&w);
	T_CHECK(!kg_path_exists(p));
	free(p);
}

struct bad_case {
	const char *name;
	const char *magic;
	size_t magic_len;
	const char *dict;
	size_t data;
	const char *msg;
};

static void
t_malformed_headers(void)
{
	static const struct bad_case cases[] = {
		{ "bad magic", "\x93NUMPZ\x01\x00", 8,
		    "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }",
		    8, "bad magic" },
		{ "version 2", "\x93NUMPY\x02\x00", 8,
		    "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }",
		    8, "version 2.0" },
		{ "dtype", "\x93NUMPY\x01\x00", 8,
		    "{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }",
		    16, "unsupported dtype '<c8'" },
		{ "big endian", "\x93NUMPY\x01\x00", 8,
		    "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }",
		    8, "unsupported dtype '>f4'" },
		{ "fortran", "\x93NUMPY\x01\x00", 8,
		    "{'descr': '<i4', 'fortran_order': True, 'shape': (2,), }",
		    8, "fortran_order" },
		{ "no shape", "\x93NUMPY\x01\x00", 8,
		    "{'descr': '<i4', 'fortran_order': False, }", 4,
		    "lacks 'shape'" },
		{ "bad shape", "\x93NUMPY\x01\x00", 8,
		    "{'descr': '<i4', 'fortran_order': False, 'shape': (2,x), }",
		    8, "malformed" },
		{ "extra key", "\x93NUMPY\x01\x00", 8,
		    "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), "
		    "'x': 1}", 8, "unexpected key 'x'" },
		{ "not a dict", "\x93NUMPY\x01\x00", 8, "[1, 2]", 8,
		    "malformed" },
		{ "truncated data", "\x93NUMPY\x01\x00", 8,
		    "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }",
		    20, "truncated" },
		{ "trailing data", "\x93NUMPY\x01\x00", 8,
		    "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }",
		    12, "trailing bytes" },
		{ "huge shape", "\x93NUMPY\x01\x00", 8,
		    "{'descr': '<f8', 'fortran_order': False, 'shape': "
		    "(4294967296, 4294967296, 4294967296), }", 8,
		    "shape too large" },
	};
	size_t i;
	char *p = tpath("bad.npy");

	kg_error_mute(1);
	for (i = 0; i < KG_ARRAY_LEN(cases); i++) {
		struct kg_npy a;

		write_raw(p, cases[i].magic, cases[i].magic_len, cases[i].dict,
		    cases[i].data);
		T_CHECKF(kg_npy_read(p, &a) < 0, "%s accepted", cases[i].name);
		T_CHECKF(strstr(kg_error_last(), cases[i].msg) != NULL,
		    "%s: message '%s' lacks '%s'", cases[i].name,
		    kg_error_last(), cases[i].msg);
		T_CHECKF(strstr(kg_error_last(), "bad.npy") != NULL,
		    "%s: message does not name the file", cases[i].name);
		T_CHECK(a.data == NULL && a.map == NULL);
	}
	/* A file shorter than the fixed preamble, and a missing file. */
	{
		struct kg_npy a;
		FILE *f = fopen(p, "wb");

		fputs("\x93NUM", f);
		fclose(f);
		T_CHECK(kg_npy_read(p, &a) < 0);
		T_CHECK(strstr(kg_error_last(), "truncated") != NULL);
		T_CHECK(kg_npy_read("/nonexistent/x.npy", &a) < 0);
		T_CHECK(strstr(kg_error_last(), "No such file") != NULL);
	}
	/* Header length pointing past the end of the file. */
	{
		struct kg_npy a;
		FILE *f = fopen(p, "wb");

		fwrite("\x93NUMPY\x01\x00\xff\x00{'descr'", 1, 19, f);
		fclose(f);
		T_CHECK(kg_npy_read(p, &a) < 0);
		T_CHECK(strstr(kg_error_last(), "truncated npy header") != NULL);
	}
	kg_error_mute(0);
	free(p);
}

static void
t_expect(void)
{
	struct kg_npy a;
	uint64_t shape[2] = { 2, 3 };
	float v[6] = { 0 };
	char *p = tpath("e.npy");

	T_CHECK(kg_npy_write(p, KG_DT_F4, 2, shape, v) == 0);
	kg_error_mute(1);
	T_CHECK(kg_npy_read_expect(p, KG_DT_I4, 2, &a) < 0);
	T_CHECK(strstr(kg_error_last(), "dtype <f4, expected <i4") != NULL);
	T_CHECK(kg_npy_read_expect(p, KG_DT_F4, 1, &a) < 0);
	T_CHECK(strstr(kg_error_last(), "2 dimensions, expected 1") != NULL);
	kg_error_mute(0);
	T_CHECK(kg_npy_read_expect(p, KG_DT_F4, 2, &a) == 0);
	kg_npy_release(&a);
	free(p);
}

int
main(void)
{
	T_RUN(t_roundtrip_all_dtypes);
	T_RUN(t_stream_writer);
	T_RUN(t_malformed_headers);
	T_RUN(t_expect);
	return T_DONE();
}
