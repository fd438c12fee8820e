/*
 * query: kg-predict's input, read by name.
 *
 * The names of a dataset (entities.tsv, relations.tsv) go into two
 * dictionaries whose IDs are the dataset's IDs.  Queries are text lines,
 * tab-separated, from a file or stdin ("-"; gzip is detected):
 *   head<TAB>relation<TAB>?      the best tails
 *   ?<TAB>relation<TAB>tail      the best heads
 *   head<TAB>?<TAB>tail          the best relations
 *   head<TAB>relation<TAB>tail   the triple's score (no '?')
 * and in nearest mode one entity name a line.  Blank lines are skipped,
 * and so are lines starting with '#' that do not have a query's number
 * of fields (3, or 1 in nearest mode): names are read as kg-ingest
 * stored them, so "#tag<TAB>r<TAB>?" asks about "#tag".  An unknown
 * name, a line with more than one '?' or with the wrong number of
 * fields, and a triple to score among questions (or a question among
 * triples) is an error
 * "file:line: message".
 *
 * Triples to score also come from three lists, one name a line (DGL-KE's
 * dglke_predict --data_files head relation tail): line i of each
 * (kg_query_open_lists), or every combination of the three
 * (cartesian), where a NULL list stands for every entity or relation
 * (DGL-KE's '*').  A combination's line is its number from 1, in the
 * order heads, then relations, then tails (the tail varies fastest).
 */
#ifndef KG_QUERY_H
#define KG_QUERY_H

#include <stddef.h>
#include <stdint.h>

#include "io/dataset.h"
#include "io/dict.h"

enum kg_query_kind {
	KG_QUERY_TAIL,		/* (h, r, ?) */
	KG_QUERY_HEAD,		/* (?, r, t) */
	KG_QUERY_REL,		/* (h, ?, t) */
	KG_QUERY_NEAR,		/* entities near h */
	KG_QUERY_SCORE		/* the score of (h, r, t) */
};

struct kg_query {
	int32_t h, r, t;	/* -1 for the asked part (and unused ones) */
	int32_t kind;		/* enum kg_query_kind */
	uint64_t line;		/* line of the input it came from */
};

struct kg_names {
	struct kg_dict ent, rel;
};

#define KG_NAMES_INIT { .ent = KG_DICT_INIT, .rel = KG_DICT_INIT }

/* Read the dataset's names.  0, or -1 after kg_error() (a repeated name,
 * a count that disagrees with the dataset) with nothing to release. */
int kg_names_load(struct kg_names *n, const struct kg_dataset *ds);
void kg_names_release(struct kg_names *n);

static inline const char *
kg_names_entity(const struct kg_names *n, int64_t id)
{
	return kg_dict_name(&n->ent, (uint32_t)id);
}

static inline const char *
kg_names_relation(const struct kg_names *n, int64_t id)
{
	return kg_dict_name(&n->rel, (uint32_t)id);
}

struct kg_query_reader;

/* Open path ("-": stdin) for queries (nearest: one name a line).  0, or
 * -1 after kg_error(). */
int kg_query_open(struct kg_query_reader **r, const char *path,
    int nearest);

/*
 * Triples from the lists heads, relations, tails: line by line, or with
 * cartesian every combination (a NULL list: all names).  0, or -1 after
 * kg_error().  The lists are read by kg_query_read, which needs the
 * names.
 */
int kg_query_open_lists(struct kg_query_reader **r, const char *heads,
    const char *relations, const char *tails, int cartesian);

/*
 * A cartesian reader's combination number idx (from 0) as a query into
 * *q.  Only after the first kg_query_read.
 */
void kg_query_combination(const struct kg_query_reader *r, uint64_t idx,
    struct kg_query *q);

/*
 * Read up to max queries into q.  From a pipe or terminal it returns
 * with fewer once no more input has arrived, so that a program that
 * writes a query and waits for the answer gets it (lib/io/tabread.h's
 * interactive mode).  Returns how many (0 at the end of the input), or
 * -1 after kg_error() naming file and line.
 */
int64_t kg_query_read(struct kg_query_reader *r, const struct kg_names *n,
    struct kg_query *q, size_t max);

/* The name of the input for messages ("stdin" for "-"). */
const char *kg_query_name(const struct kg_query_reader *r);

void kg_query_close(struct kg_query_reader *r);

#endif
