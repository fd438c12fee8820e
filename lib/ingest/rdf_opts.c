/*
 * rdf_opts: the RDF options that name files or values (see rdf_opts.h).
 */
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "ingest/ingest.h"
#include "ingest/rdf_opts.h"
#include "io/tabread.h"

int
kg_rdf_read_iris(struct kg_dict *d, const char *path)
{
	struct kg_tab_opts to = KG_TAB_OPTS_INIT;
	struct kg_tabread *r;
	struct kg_field f;
	size_t n;
	int rc;

	to.delim = '\n';
	to.fields = 0;
	if (kg_tabread_open(&r, path, &to) < 0)
		return -1;
	while ((rc = kg_tabread_next(r, &f, 1, &n)) == 1) {
		while (f.len > 0 && (f.s[f.len - 1] == ' ' ||
		    f.s[f.len - 1] == '\t'))
			f.len--;
		if (f.len >= 2 && f.s[0] == '<' && f.s[f.len - 1] == '>') {
			f.s++;
			f.len -= 2;
		}
		if (f.len > 0 && kg_dict_intern(d, f.s, f.len, NULL) < 0) {
			rc = -1;
			break;
		}
	}
	kg_tabread_close(r);
	return rc;
}

/* A prefix name as Turtle's PN_PREFIX allows it, ASCII only. */
static int
prefix_name_ok(const char *s, size_t len)
{
	size_t i;

	if (len == 0 || !((s[0] | 0x20) >= 'a' && (s[0] | 0x20) <= 'z'))
		return 0;
	for (i = 1; i < len; i++)
		if (!(((s[i] | 0x20) >= 'a' && (s[i] | 0x20) <= 'z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '_' ||
		    s[i] == '-' || (s[i] == '.' && i + 1 < len)))
			return 0;
	return 1;
}

int
kg_rdf_parse_prefixes(const struct kg_ingest_rdf_opts *o, char ***names,
    char ***spaces, size_t *n)
{
	size_t i, j;

	*names = kg_xcalloc(o->n_prefixes + 1, sizeof(char *));
	*spaces = kg_xcalloc(o->n_prefixes + 1, sizeof(char *));
	*n = 0;
	for (i = 0; i < o->n_prefixes; i++) {
		const char *eq = strchr(o->prefixes[i], '=');
		size_t nl = eq != NULL ? (size_t)(eq - o->prefixes[i]) : 0;

		if (eq == NULL || !prefix_name_ok(o->prefixes[i], nl) ||
		    eq[1] == '\0') {
			kg_error("--prefix: '%s' is not NAME=IRI (a name of "
			    "letters, digits, '_', '-' and '.', starting with "
			    "a letter)", o->prefixes[i]);
			goto fail;
		}
		for (j = 0; j < *n; j++)
			if (strlen((*names)[j]) == nl &&
			    memcmp((*names)[j], o->prefixes[i], nl) == 0) {
				kg_error("--prefix: '%.*s' is given twice",
				    (int)nl, o->prefixes[i]);
				goto fail;
			}
		(*names)[*n] = kg_xasprintf("%.*s", (int)nl, o->prefixes[i]);
		(*spaces)[(*n)++] = kg_xstrdup(eq + 1);
	}
	return 0;
fail:
	for (j = 0; j < *n; j++) {
		free((*names)[j]);
		free((*spaces)[j]);
	}
	free(*names);
	free(*spaces);
	*names = *spaces = NULL;
	*n = 0;
	return -1;
}

int
kg_ingest_check_prefixes(const struct kg_ingest_rdf_opts *o)
{
	char **names, **spaces;
	size_t i, n;

	if (kg_rdf_parse_prefixes(o, &names, &spaces, &n) < 0)
		return -1;
	for (i = 0; i < n; i++) {
		free(names[i]);
		free(spaces[i]);
	}
	free(names);
	free(spaces);
	return 0;
}
