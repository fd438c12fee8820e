/*
 * train_help: kg-train's usage and --help text, shallow and GNN options
 * together, written from the option table (cli/train_opts.h): its
 * synopsis, each option's help line with its default, and the few
 * paragraphs around them.  man/man1/kg-train.1 says the same at length.
 */
#ifndef KG_TRAIN_HELP_H
#define KG_TRAIN_HELP_H

#include <stdio.h>

/* The synopsis alone (full 0, after a usage error) or the whole help. */
void kg_train_usage(FILE *f, int full);

/* The synopsis of GNN training (--model_name RGCN|RelGNN). */
void kg_train_gnn_usage(FILE *f);

/* 1 when argv asks for --help or -h before any "--". */
int kg_train_help_wanted(int argc, char *argv[]);

#endif
