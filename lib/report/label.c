/*
 * label: what every tool calls a model; see label.h.
 */
#include "report/label.h"

#include <stdio.h>
#include <string.h>

const char *
kg_label_encoder(const char *encoder)
{
	if (encoder == NULL)
		return NULL;
	if (strcmp(encoder, "rgcn") == 0)
		return "R-GCN";
	if (strcmp(encoder, "relgnn") == 0)
		return "RelGNN";
	return encoder;
}

const char *
kg_label_model(const char *encoder, const char *decoder, char *buf,
    size_t cap)
{
	const char *enc = kg_label_encoder(encoder);

	/* A label cut short is still a label: truncation is fine here. */
	if (enc != NULL)
		(void)snprintf(buf, cap, "%s + %s", enc, decoder);
	else
		(void)snprintf(buf, cap, "%s", decoder);
	return buf;
}

const char *
kg_label_manifest(const struct kg_manifest *m, char *buf, size_t cap)
{
	json_t *model = kg_manifest_get(m, "config.model");
	json_t *enc = kg_manifest_get(m, "config.encoder");

	return kg_label_model(json_is_string(enc) ? json_string_value(enc) :
	    NULL, json_is_string(model) ? json_string_value(model) : "model",
	    buf, cap);
}
