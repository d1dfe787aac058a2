/*
 * sim_common.h - what `fast sim`, `fast compare` and `fast bench sim`
 * share: simulator options on the command line, number formatting, and
 * writing a simulation's timeline files atomically.  (Compiler options:
 * cli_algo.h.)
 */
#ifndef FAST_CMD_SIM_COMMON_H
#define FAST_CMD_SIM_COMMON_H

#include "cli.h"
#include "cli_algo.h"
#include "fast/bound.h"
#include "fast/sim.h"

/* Consume a simulator option: --no-congestion, --sync step|rank,
 * --epsilon E. */
bool simc_sim_option(struct cli_scan *s, struct fast_sim_opts *o);
/* Consume --sync step|rank alone (a command that takes no other
 * simulator option); another value is a usage error (s->failed). */
bool simc_sync_option(struct cli_scan *s, enum fast_sim_sync *out);
/* "step", "rank" */
const char *simc_sync_name(enum fast_sim_sync m);
#define SIMC_SYNC_USAGE                                                              \
	"  --sync step|rank   step: a step starts when every transfer it depends on\n"   \
	"                     is done, a barrier (the plan format's meaning);\n"         \
	"                     rank: every GPU runs its own waves, as fast run does\n"    \
	"                     (a transfer starts when both its GPUs finished their\n"   \
	"                     earlier waves); default: as the topology's\n"            \
	"                     implementation of the schedule says (step if silent)\n"
#define SIMC_SIM_USAGE                                                               \
	"  --no-congestion    disable the incast model\n"                                \
	SIMC_SYNC_USAGE                                                               \
	"  --in-flight 1|2    with --sync rank: waves a GPU keeps posted, as fast run's\n"  \
	"                     --in-flight (2: a send of the next wave starts beside\n"   \
	"                     this one when what it forwards has arrived; default 1)\n"  \
	"  --epsilon E        scalable max-min: reallocate only when a resource gained\n" \
	"                     more than E of its capacity (default 0 = exact)\n"

/* "1.234 ms", "56.7 us" (ASCII, stable), into buf. */
const char *simc_time(double s, char *buf, size_t len);

/* Write r's Chrome trace / SVG to path (atomic, by cli_out_open()'s rule
 * on inputs and outputs).  Returns an exit status after printing. */
int simc_write_trace(const char *path, const struct fast_topo *t,
		     const struct fast_sim_result *r);
int simc_write_svg(const char *path, const struct fast_topo *t,
		   const struct fast_sim_result *r, const char *title);

/* Prove plan p (index i of plan_path) correct for the matrix M it serves
 * before a command reports its time against M's bound: the proof `fast
 * check` and `fast gate` make (include/fast/check.h, fast_plan_check: a
 * token plan against M's groups, a byte plan against its bytes).  A plan that delivers nothing,
 * or another traffic's bytes, would otherwise be simulated and compared
 * with the wrong bound.  Returns an exit status after printing: 0 correct,
 * 1 incorrect (the reason, and that --no-check skips the proof), 3 a plan
 * malformed or not fitting the topology, 4 out of memory.  With keep
 * non-NULL, a correct plan's view (validated and expanded once) is left
 * open in *keep for the simulation (the caller closes it); otherwise, and
 * on failure, none is left open. */
int simc_check_plan(const char *plan_path, uint32_t i, const struct fast_plan *p,
		    const struct fast_topo *t, const struct fast_matrix *M,
		    struct fast_plan_view *keep);
#define SIMC_NO_CHECK_USAGE                                                          \
	"  --no-check         do not prove --plan correct for --traffic first (an\n"    \
	"                     incorrect plan is refused, exit 1, as by fast check)\n"

#endif
