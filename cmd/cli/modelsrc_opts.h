/*
 * modelsrc_opts: the options that name a model to load, shared by the
 * tools that read one (kg-predict, kg-export): --entities, --relations,
 * --model, --gamma, --reciprocal, --entity-map and --relation-map for
 * arrays from another tool (lib/predict/modelsrc.h).
 *
 * A tool puts KG_MODELSRC_LONG_OPTS into its getopt_long table (their
 * codes, KG_MSOPT_*, sit above any tool's own), plus KG_MODELSRC_GAMMA_OPT
 * when it scores (the distance models' margin), and hands every option it
 * does not know to kg_modelsrc_opt().
 */
#ifndef KG_MODELSRC_OPTS_H
#define KG_MODELSRC_OPTS_H

#include <getopt.h>

#include "predict/modelsrc.h"

enum {
	KG_MSOPT_ENT = 0x4000, KG_MSOPT_REL, KG_MSOPT_MODEL, KG_MSOPT_GAMMA,
	KG_MSOPT_RECIP, KG_MSOPT_EMAP, KG_MSOPT_RMAP
};

#define KG_MODELSRC_LONG_OPTS \
	{ "entities", required_argument, NULL, KG_MSOPT_ENT }, \
	{ "relations", required_argument, NULL, KG_MSOPT_REL }, \
	{ "model", required_argument, NULL, KG_MSOPT_MODEL }, \
	{ "reciprocal", no_argument, NULL, KG_MSOPT_RECIP }, \
	{ "entity-map", required_argument, NULL, KG_MSOPT_EMAP }, \
	{ "relation-map", required_argument, NULL, KG_MSOPT_RMAP }
#define KG_MODELSRC_GAMMA_OPT \
	{ "gamma", required_argument, NULL, KG_MSOPT_GAMMA }

/* Option ch (argument arg) into src: 1 when it was one of these, 0 when
 * not, -1 after an error message (a bad --gamma). */
int kg_modelsrc_opt(int ch, const char *arg, struct kg_modelsrc *src);

#endif
