/*
 * A tiny unit-test harness.  A test file defines static void functions and
 * calls T_RUN(fn) for each from main(), then returns T_DONE().  Every case
 * prints one TAP line, "ok - name", "not ok - name" or
 * "ok - name # SKIP why", which tests/run.sh counts; T_DONE prints the
 * plan, "1..N" for the N cases run, last (as TAP allows).  Cases are
 * called unconditionally from main(), so the only way one can vanish is
 * a program that stops before T_DONE (a crash, an exit() in a helper):
 * then no plan is printed and tests/run.sh counts a failure even when
 * the exit status is 0.  T_CHECK records a failure with file:line and
 * carries on; T_SKIP leaves the case.
 */
#ifndef KG_TEST_H
#define KG_TEST_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int t_case_failed, t_case_skipped, t_nfailed, t_nmsg, t_ncases;
static char t_skip_why[256];

#define T_CHECK(cond) do {						\
	if (!(cond)) {							\
		if (t_nmsg++ < 20)					\
			fprintf(stderr, "%s:%d: check failed: %s\n",	\
			    __FILE__, __LINE__, #cond);			\
		t_case_failed = 1;					\
	}								\
} while (0)

#define T_CHECKF(cond, ...) do {					\
	if (!(cond)) {							\
		fprintf(stderr, "%s:%d: check failed: %s: ",		\
		    __FILE__, __LINE__, #cond);				\
		fprintf(stderr, __VA_ARGS__);				\
		fputc('\n', stderr);					\
		t_case_failed = 1;					\
	}								\
} while (0)

/* |a - b| <= tol, printing both values on failure. */
#define T_NEAR(a, b, tol) do {						\
	double t_a_ = (double)(a), t_b_ = (double)(b);			\
	if (!(fabs(t_a_ - t_b_) <= (tol))) {				\
		fprintf(stderr, "%s:%d: %s = %.10g, %s = %.10g, "	\
		    "tolerance %g\n", __FILE__, __LINE__, #a, t_a_,	\
		    #b, t_b_, (double)(tol));				\
		t_case_failed = 1;					\
	}								\
} while (0)

#define T_SKIP(...) do {						\
	snprintf(t_skip_why, sizeof(t_skip_why), __VA_ARGS__);		\
	t_case_skipped = 1;						\
	return;								\
} while (0)

#define T_RUN(fn) do {							\
	t_case_failed = t_case_skipped = t_nmsg = 0;				\
	t_ncases++;							\
	fn();								\
	if (t_case_skipped && !t_case_failed)				\
		printf("ok - %s # SKIP %s\n", #fn, t_skip_why);		\
	else if (t_case_failed) {					\
		printf("not ok - %s\n", #fn);				\
		t_nfailed++;						\
	} else								\
		printf("ok - %s\n", #fn);				\
	fflush(stdout);							\
} while (0)

/* Print the plan, then the exit status: 1 if a case failed. */
#define T_DONE() (printf("1..%d\n", t_ncases), fflush(stdout),	\
	t_nfailed ? 1 : 0)

/* A scratch directory for the test, created fresh under $TMPDIR. */
static inline const char *
t_tmpdir(void)
{
	static char path[512];
	const char *base;

	if (path[0] != '\0')
		return path;
	base = getenv("TMPDIR");
	snprintf(path, sizeof(path), "%s/kgtest.XXXXXX", base ? base : "/tmp");
	if (mkdtemp(path) == NULL) {
		perror("mkdtemp");
		exit(1);
	}
	return path;
}

/* Directory of the shared real datasets, or NULL when absent. */
static inline const char *
t_shared_data(void)
{
	const char *d = getenv("KG_SHARED_DATA");
	static char probe[1024];
	FILE *f;

	if (d == NULL || *d == '\0')
		return NULL;
	snprintf(probe, sizeof(probe), "%s/README.md", d);
	f = fopen(probe, "r");
	if (f == NULL)
		return NULL;
	fclose(f);
	return d;
}

#endif
