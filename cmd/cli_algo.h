/*
 * cli_algo.h - the compiler options on the command line, for every command
 * that compiles (plan, sim, compare, gate, run): scanned, checked and
 * described in --help from include/fast/algo.h's algorithm table, so each command
 * takes the same options with the same spelling and messages.
 */
#ifndef FAST_CMD_CLI_ALGO_H
#define FAST_CMD_CLI_ALGO_H

#include "cli.h"
#include "fast/algo.h"

/* Consume one option of the table (--stages, --order, --balance, --peers,
 * --chunk): set it in o and its bit in *given.  A bad value is a usage
 * error ("--order: unknown value 'x' (known: ...)"): s->failed is set. */
bool cli_algo_option(struct cli_scan *s, struct fast_algo_opts *o, unsigned *given);

/* 0 when name is an algorithm of the table (or one of the n_extra names
 * in extra the command also knows, such as run's "mpi"); else report
 * "OPT: unknown algorithm 'x' (known: ...)", with "; did you mean 'y'?"
 * when a name is close (fast_algo_suggest), as a usage error of cmd, and
 * return 2.  opt may be NULL (no "OPT: "). */
int cli_algo_known(const char *cmd, const char *opt, const char *name,
		   const char *const *extra, size_t n_extra);

/* 0 when every option in given (FAST_OPT_* bits) applies to at least one
 * of the n algorithms; else a usage error of cmd naming the first option
 * that applies to none of them and the algorithms it does apply to, and
 * 2. */
int cli_algo_applies(const char *cmd, const char *const *algos, size_t n, unsigned given);

/* The "Algorithms" and "Compiler options" sections of the --help of a
 * command that compiles (CMD_ALGO), from the table. */
void cli_algo_usage(FILE *f);

#endif
