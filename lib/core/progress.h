/*
 * progress: the progress line of a long stage, on stderr.
 *
 *   kg-eval: ranking 12000/26400 queries, 3.4k queries/s, eta 4 s
 *
 * Every tool shows it when stderr is a terminal or --progress is given,
 * and never under -q (kg_progress_wanted).  On a terminal the line is
 * rewritten in place ("\r") at most once a second; into a file or a pipe
 * (--progress in a log) a full line is written at most every 10 seconds.
 * kg_progress_end always writes one closing line with the count, the time
 * and the rate, so a log shows what was done even when the stage took
 * less than the interval.  Without a known total the line has no ETA.
 *
 * Not thread-safe: one thread calls update (the others count into a
 * shared atomic the caller reads).  Results and stdout never see it.
 */
#ifndef KG_PROGRESS_H
#define KG_PROGRESS_H

#include <stddef.h>
#include <stdint.h>

struct kg_progress {
	int on;			/* print anything at all */
	int tty;		/* stderr is a terminal: rewrite one line */
	const char *what;	/* the step: "ranking", "reading" */
	const char *unit;	/* what is counted: "queries", "lines" */
	uint64_t total;		/* 0: unknown, no ETA */
	double t0, last;	/* start and last line, kg_now() seconds */
	int open;		/* a terminal line waits for its newline */
};

#define KG_PROGRESS_INIT { 0 }

/* 1 when a tool should show progress: not quiet, and asked for or
 * stderr is a terminal. */
int kg_progress_wanted(int quiet, int asked);

/*
 * Start counting "unit" for step "what" (both static strings) towards
 * total (0 if unknown).  Prints nothing yet; with on == 0 every other
 * call does nothing.
 */
void kg_progress_begin(struct kg_progress *p, int on, const char *what,
    const char *unit, uint64_t total);

/* done units so far: print a line if the interval has passed. */
void kg_progress_update(struct kg_progress *p, uint64_t done);

/* The closing line: done units, seconds and the rate. */
void kg_progress_end(struct kg_progress *p, uint64_t done);

/*
 * The text of a line (without "\r" or "\n") into buf[cap]: running
 * ("ranking 12000/26400 queries, 3.4k queries/s, eta 4 s") or final
 * ("ranking 26400/26400 queries in 7.8 s, 3.4k queries/s"; without a
 * total "ranking 26400 queries in ...").  Exposed for tests.
 */
void kg_progress_format(char *buf, size_t cap, const char *what,
    const char *unit, uint64_t done, uint64_t total, double seconds,
    int final);

/* A duration as "42 s", "3m05s" or "2h10m" into buf[cap]. */
void kg_progress_duration(char *buf, size_t cap, double seconds);

#endif
