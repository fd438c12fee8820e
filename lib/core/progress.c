#include "core/progress.h"

#include <math.h>
#include <stdio.h>
#include <unistd.h>

#include "core/util.h"

/* Seconds between lines on a terminal and in a log. */
#define TTY_EVERY 1.0
#define LOG_EVERY 10.0

int
kg_progress_wanted(int quiet, int asked)
{
	return !quiet && (asked || isatty(STDERR_FILENO));
}

void
kg_progress_begin(struct kg_progress *p, int on, const char *what,
    const char *unit, uint64_t total)
{
	*p = (struct kg_progress)KG_PROGRESS_INIT;
	p->on = on;
	p->tty = on && isatty(STDERR_FILENO);
	p->what = what;
	p->unit = unit;
	p->total = total;
	p->t0 = p->last = kg_now();
}

/* A count per second as "950", "3.4k" or "12M". */
static void
format_rate(char *buf, size_t cap, double r)
{
	static const char *const suffix[] = { "", "k", "M", "G" };
	int k = 0;

	while (r >= 1000.0 && k < 3) {
		r /= 1000.0;
		k++;
	}
	snprintf(buf, cap, r < 10.0 ? "%.1f%s" : "%.0f%s", r,
	    suffix[k]);
}

void
kg_progress_duration(char *buf, size_t cap, double s)
{
	long t = lround(s);

	if (t < 60)
		snprintf(buf, cap, "%ld s", t);
	else if (t < 3600)
		snprintf(buf, cap, "%ldm%02lds", t / 60, t % 60);
	else
		snprintf(buf, cap, "%ldh%02ldm", t / 3600, t / 60 % 60);
}

void
kg_progress_format(char *buf, size_t cap, const char *what,
    const char *unit, uint64_t done, uint64_t total, double seconds,
    int final)
{
	double rate = seconds > 0 ? (double)done / seconds : 0.0;
	char r[32], t[32];

	format_rate(r, sizeof(r), rate);
	if (final && total > 0) {
		snprintf(buf, cap, "%s %llu/%llu %s in %.1f s, %s %s/s", what,
		    (unsigned long long)done, (unsigned long long)total, unit,
		    seconds, r, unit);
		return;
	}
	if (final) {
		snprintf(buf, cap, "%s %llu %s in %.1f s, %s %s/s", what,
		    (unsigned long long)done, unit, seconds, r, unit);
		return;
	}
	if (total == 0 || rate <= 0 || done > total) {
		snprintf(buf, cap, "%s %llu %s, %s %s/s", what,
		    (unsigned long long)done, unit, r, unit);
		return;
	}
	kg_progress_duration(t, sizeof(t), (double)(total - done) / rate);
	snprintf(buf, cap, "%s %llu/%llu %s, %s %s/s, eta %s", what,
	    (unsigned long long)done, (unsigned long long)total, unit, r,
	    unit, t);
}

void
kg_progress_update(struct kg_progress *p, uint64_t done)
{
	char line[256];
	double now;

	if (!p->on)
		return;
	now = kg_now();
	if (now - p->last < (p->tty ? TTY_EVERY : LOG_EVERY))
		return;
	p->last = now;
	kg_progress_format(line, sizeof(line), p->what, p->unit, done,
	    p->total, now - p->t0, 0);
	if (p->tty) {
		/* Pad so a shorter line covers the end of a longer one. */
		fprintf(stderr, "\r%s: %-60s", kg_progname(), line);
		p->open = 1;
	} else
		fprintf(stderr, "%s: %s\n", kg_progname(), line);
	fflush(stderr);
}

void
kg_progress_end(struct kg_progress *p, uint64_t done)
{
	char line[256];

	if (!p->on)
		return;
	kg_progress_format(line, sizeof(line), p->what, p->unit, done,
	    p->total, kg_now() - p->t0, 1);
	if (p->tty)
		fprintf(stderr, "\r%s: %-60s\n", kg_progname(), line);
	else
		fprintf(stderr, "%s: %s\n", kg_progname(), line);
	fflush(stderr);
	p->open = 0;
	p->on = 0;
}
