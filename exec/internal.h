/*
 * internal.h - what the executor's files share and users of exec.h need
 * not see (the program representation and the plan cache are in prog.h).
 */
#ifndef FAST_EXEC_INTERNAL_H
#define FAST_EXEC_INTERNAL_H

#include "fast/exec.h"
#include "exec/backend.h"

/* Accessors for the other executor files. */
MPI_Comm fast_exec_comm(const struct fast_exec *x);
const char *fast_exec_algo(const struct fast_exec *x);
struct fast_bctx *fast_exec_bctx(const struct fast_exec *x);

#endif
