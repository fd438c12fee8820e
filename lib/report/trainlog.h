/*
 * trainlog: read a model directory's train_log.jsonl (kg-train) into
 * per-epoch series for plotting.
 *
 * The log holds one JSON object a line.  The lines kgpipe's trainers
 * write, and what is read from them:
 *   - epoch lines: "epoch" (integer >= 1) and "loss" (number), optionally
 *     "seconds" (that epoch's wall-clock training time, >= 0;
 *     the trainers leave validation out) and "valid_mrr" (in
 *     [0, 1], on the epochs where --valid_every validated).  Written by the
 *     shallow trainer's epoch loop (lib/kge/epochs.c), --dist ssgd and
 *     the bucket trainer's epoch summary; other keys ("step",
 *     "triples_per_second", "ranks", "bytes_sent", ...) are ignored.
 *   - detail lines, which have a "bucket" key (one per edge bucket in
 *     PBG-style bucket training): skipped.
 * Blank lines are skipped.  Epochs must increase from line to line (a
 * resumed run's log continues its checkpoint's).
 */
#ifndef KG_TRAINLOG_H
#define KG_TRAINLOG_H

#include <stddef.h>
#include <stdint.h>

/*
 * Per-epoch series, all of length n.  wall[i] is the wall-clock time
 * spent training up to the end of epoch[i] (the running sum of
 * "seconds"), NaN for every epoch when some epoch line lacks "seconds"
 * (has_wall is then 0).  valid[i] is NaN on epochs without validation;
 * n_valid counts the others.
 */
struct kg_trainlog {
	size_t n, n_valid;
	int has_wall;
	uint32_t *epoch;
	double *loss, *wall, *valid;
};

#define KG_TRAINLOG_INIT { 0 }

/*
 * Parse len bytes of log text; name is the file name used in messages
 * ("name:line: message").  Returns 0, or -1 after kg_error() for a line
 * that is not a JSON object, an epoch line without an integer "epoch" or
 * a numeric "loss", a bad "seconds" or "valid_mrr", epochs that do not
 * increase, or a log without epochs.  On error log is left empty.
 */
int kg_trainlog_parse(struct kg_trainlog *log, const char *text, size_t len,
    const char *name);
/* Read and parse the file at path; 0 or -1 after kg_error(). */
int kg_trainlog_read(struct kg_trainlog *log, const char *path);
/* Free the series; log becomes KG_TRAINLOG_INIT.  Safe on INIT. */
void kg_trainlog_release(struct kg_trainlog *log);

#endif
