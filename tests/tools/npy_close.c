/*
 * npy_close: compare two float32 .npy arrays of the same shape.
 *   npy_close A.npy B.npy ATOL
 * prints "max_abs_diff D of N values" and exits 0 when every
 * |a - b| <= ATOL (and neither holds a NaN), 1 otherwise, 2 on bad input.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "io/npy.h"
#include "core/util.h"

int
main(int argc, char *argv[])
{
	struct kg_npy a = KG_NPY_INIT, b = KG_NPY_INIT;
	double atol, worst = 0.0;
	uint64_t i;
	int rc = 2, k;

	kg_setprogname(argv[0]);
	if (argc != 4 || kg_parse_double("ATOL", argv[3], 0.0, 1e30,
	    &atol) < 0) {
		fprintf(stderr, "usage: npy_close A.npy B.npy ATOL\n");
		return 2;
	}
	if (kg_npy_read_expect(argv[1], KG_DT_F4, -1, &a) < 0 ||
	    kg_npy_read_expect(argv[2], KG_DT_F4, -1, &b) < 0)
		goto out;
	if (a.ndim != b.ndim || a.count != b.count) {
		fprintf(stderr, "npy_close: shapes differ\n");
		goto out;
	}
	for (k = 0; k < a.ndim; k++)
		if (a.shape[k] != b.shape[k]) {
			fprintf(stderr, "npy_close: shapes differ\n");
			goto out;
		}
	for (i = 0; i < a.count; i++) {
		double x = ((const float *)a.data)[i];
		double y = ((const float *)b.data)[i];
		double dd = fabs(x - y);

		if (isnan(dd))
			dd = INFINITY;
		if (dd > worst)
			worst = dd;
	}
	printf("max_abs_diff %.3g of %llu values\n", worst,
	    (unsigned long long)a.count);
	rc = worst <= atol ? 0 : 1;
out:
	kg_npy_release(&a);
	kg_npy_release(&b);
	return rc;
}
