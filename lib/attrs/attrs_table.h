/*
 * attrs_table: reads the attribute tables of a schema (CSV or TSV through
 * libcsv, plain or gzip-compressed through zlib) and hands every value to
 * a callback as (entity ID, attribute index, value).
 *
 * Long form rows are "entity, attribute, value"; wide form rows are
 * "entity, v1, v2, ..." with the attribute of each column taken from the
 * header row or the schema's "columns".  Values equal to one of the
 * schema's NA values are dropped (they mean "no value").  With "literals":
 * "rdf", a value "lex"^^<type> or "lex"@lang becomes lex.
 *
 * Data errors (wrong field count, unknown entity or attribute, a value the
 * callback rejects) are reported as "file:line: message".  The first
 * max_errors of them are warnings and the row is skipped; the next one is
 * an error and stops reading.
 */
#ifndef KG_ATTRS_TABLE_H
#define KG_ATTRS_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "attrs/attrs_schema.h"
#include "io/dict.h"

/*
 * Called for each value.  Returns 0 to accept it, or 1 to reject it as a
 * data error after writing a message (without file and line) into
 * msg[0..msg_len).
 */
typedef int (*kg_attr_value_fn)(void *arg, uint32_t entity, uint32_t attr,
    const char *value, size_t len, char *msg, size_t msg_len);

struct kg_attr_reader {
	const struct kg_attr_schema *schema;
	const struct kg_dict *entities;	/* name -> entity ID */
	kg_attr_value_fn fn;
	void *arg;
	uint64_t max_errors;
	/* When hi != 0, only entities in [lo, hi) matter: simple rows of
	 * others are skipped without being parsed or checked. */
	uint64_t lo, hi;
	uint64_t n_errors;	/* data errors so far (over all tables) */
	uint64_t n_rows;	/* data rows read */
	uint64_t n_values;	/* values passed to fn and accepted */
	uint64_t n_skipped_entities;	/* rows of unknown entities skipped */
	/* Optional (NULL: not kept): named[a] becomes 1 when a table names
	 * schema attribute a, as a wide table's column or in a long table's
	 * attribute field, whatever its values (rows of unknown entities
	 * count; rows skipped unparsed for an entity range do not). */
	uint8_t *named;
};

/*
 * Read table t of the schema from "path".  Returns 0, or -1 after
 * kg_error() (I/O error, or more than max_errors data errors).
 */
int kg_attr_read_table(struct kg_attr_reader *r, const struct kg_attr_table *t,
    const char *path);

#endif
