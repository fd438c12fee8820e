/*
 * train_help: kg-train's usage and --help text, shallow and GNN options
 * together, every option with its default (man/man1/kg-train.1 says the
 * same at length).  Kept apart from cmd/kg-train.c, which parses.
 */
#ifndef KG_TRAIN_HELP_H
#define KG_TRAIN_HELP_H

#include <stdio.h>

/* The synopsis alone (full 0, after a usage error) or the whole help. */
void kg_train_usage(FILE *f, int full);

/* What to use instead of the DGL-KE option "name" (without dashes) that
 * kg-train ignores: a static sentence for its warning. */
const char *kg_train_ignored_hint(const char *name);

/* 1 when argv asks for --help or -h before any "--". */
int kg_train_help_wanted(int argc, char *argv[]);

#endif
