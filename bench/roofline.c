/*
 * roofline: this machine's fp32 peak, measured two ways (not a test; run
 * by bench/roofline.sh, which writes bench/results/roofline.json):
 *
 *   roofline fma  ISA THREADS SECONDS   a loop of independent fused
 *       multiply-adds, ISA avx512 (16 zmm accumulators) or avx2 (12 ymm
 *       accumulators: enough to cover two FMA units of latency 4 and
 *       more), on THREADS OpenMP threads for about SECONDS each;
 *   roofline sgemm N THREADS REPS       C = A B for N x N floats through
 *       OpenBLAS on THREADS of its threads, the best of REPS calls.
 *
 * Each prints one JSON object on stdout: the GFLOP/s counted (2 FLOP a
 * lane of a fused multiply-add; 2 N^3 for the GEMM), the seconds and
 * the OpenBLAS core.  Exit 2 on bad arguments, 1 when the CPU lacks ISA.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cblas.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_X86 1
#endif

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Parse a positive number from s, or exit 2. */
static double
num(const char *s, const char *what)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end != '\0' || !(v > 0)) {
		fprintf(stderr, "roofline: bad %s '%s'\n", what, s);
		exit(2);
	}
	return v;
}

#ifdef HAVE_X86
/* The accumulators start at 0 and gain b = 1e-9 times a = 1 a step: no
 * overflow, no denormals, and GCC cannot fold the chain. */
#define FMA_STEPS 100000L

__attribute__((target("avx512f"))) static float
fma_avx512(long steps)
{
	__m512 a = _mm512_set1_ps(1.0f), b = _mm512_set1_ps(1e-9f), acc[16];
	long s;
	int j;

	for (j = 0; j < 16; j++)
		acc[j] = _mm512_setzero_ps();
	for (s = 0; s < steps; s++) {
#pragma GCC unroll 16
		for (j = 0; j < 16; j++)
			acc[j] = _mm512_fmadd_ps(acc[j], a, b);
	}
	for (j = 1; j < 16; j++)
		acc[0] = _mm512_add_ps(acc[0], acc[j]);
	return _mm512_reduce_add_ps(acc[0]);
}

__attribute__((target("avx2,fma"))) static float
fma_avx2(long steps)
{
	__m256 a = _mm256_set1_ps(1.0f), b = _mm256_set1_ps(1e-9f), acc[12];
	float out[8];
	long s;
	int j;

	for (j = 0; j < 12; j++)
		acc[j] = _mm256_setzero_ps();
	for (s = 0; s < steps; s++) {
#pragma GCC unroll 12
		for (j = 0; j < 12; j++)
			acc[j] = _mm256_fmadd_ps(acc[j], a, b);
	}
	for (j = 1; j < 12; j++)
		acc[0] = _mm256_add_ps(acc[0], acc[j]);
	_mm256_storeu_ps(out, acc[0]);
	return out[0] + out[7];
}
#endif

static int
run_fma(const char *isa, int threads, double seconds)
{
#ifdef HAVE_X86
	int wide = strcmp(isa, "avx512") == 0;
	double flop_per_step = wide ? 16.0 * 16 * 2 : 12.0 * 8 * 2;
	double t0, t1, sink = 0.0;
	long reps = 1;

	__builtin_cpu_init();
	if (!wide && strcmp(isa, "avx2") != 0) {
		fprintf(stderr, "roofline: ISA must be avx512 or avx2\n");
		return 2;
	}
	if (wide ? !__builtin_cpu_supports("avx512f") :
	    !(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))) {
		fprintf(stderr, "roofline: this CPU lacks %s\n", isa);
		return 1;
	}
	/* Calibrate on one thread: reps of FMA_STEPS for about SECONDS. */
	t0 = now();
	sink += wide ? fma_avx512(FMA_STEPS) : fma_avx2(FMA_STEPS);
	t1 = now();
	reps = (long)(seconds / (t1 - t0 > 1e-6 ? t1 - t0 : 1e-6));
	if (reps < 1)
		reps = 1;
	t0 = now();
#pragma omp parallel num_threads(threads) reduction(+:sink)
	{
		long r;

		for (r = 0; r < reps; r++)
			sink += wide ? fma_avx512(FMA_STEPS) :
			    fma_avx2(FMA_STEPS);
	}
	t1 = now();
	printf("{\"kind\": \"fma\", \"isa\": \"%s\", \"threads\": %d, "
	    "\"seconds\": %.3f, \"gflops\": %.2f, \"sink\": %g}\n", isa,
	    threads, t1 - t0, flop_per_step * FMA_STEPS * (double)reps *
	    threads / (t1 - t0) / 1e9, sink);
	return 0;
#else
	(void)isa;
	(void)threads;
	(void)seconds;
	fprintf(stderr, "roofline: the FMA loop needs x86-64 and GCC\n");
	return 1;
#endif
}

static int
run_sgemm(size_t n, int threads, int reps)
{
	float *a = malloc(n * n * sizeof(float)), *b = malloc(n * n *
	    sizeof(float)), *c = malloc(n * n * sizeof(float));
	double best = 1e30;
	size_t i;
	int r;

	if (a == NULL || b == NULL || c == NULL) {
		fprintf(stderr, "roofline: out of memory\n");
		return 1;
	}
	for (i = 0; i < n * n; i++) {
		a[i] = (float)((i * 7919) % 1000) * 1e-3f - 0.5f;
		b[i] = (float)((i * 104729) % 1000) * 1e-3f - 0.5f;
		c[i] = 0.0f;
	}
	openblas_set_num_threads(threads);
	for (r = 0; r < reps; r++) {
		double t0 = now(), t;

		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n,
		    (int)n, (int)n, 1.0f, a, (int)n, b, (int)n, 0.0f, c,
		    (int)n);
		t = now() - t0;
		if (t < best)
			best = t;
	}
	printf("{\"kind\": \"sgemm\", \"n\": %zu, \"threads\": %d, "
	    "\"reps\": %d, \"best_seconds\": %.4f, \"gflops\": %.2f, "
	    "\"openblas_core\": \"%s\", \"check\": %g}\n", n, threads, reps,
	    best, 2.0 * (double)n * (double)n * (double)n / best / 1e9,
	    openblas_get_corename(), (double)c[n * n / 2 + 1]);
	free(a);
	free(b);
	free(c);
	return 0;
}

int
main(int argc, char *argv[])
{
	if (argc == 5 && strcmp(argv[1], "fma") == 0)
		return run_fma(argv[2], (int)num(argv[3], "thread count"),
		    num(argv[4], "seconds"));
	if (argc == 5 && strcmp(argv[1], "sgemm") == 0)
		return run_sgemm((size_t)num(argv[2], "size"),
		    (int)num(argv[3], "thread count"),
		    (int)num(argv[4], "repetitions"));
	fprintf(stderr, "usage: roofline fma avx512|avx2 THREADS SECONDS\n"
	    "       roofline sgemm N THREADS REPS\n");
	return 2;
}
