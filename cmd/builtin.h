/*
 * builtin.h - the subcommands: each cmd/<name>.c defines its entry point
 * cmd_<name>() and its --help text cmd_<name>_usage[]; main.c's table
 * (fast_commands) names them with their flags.  Adding a subcommand is a
 * file, two declarations here and a row there.
 */
#ifndef FAST_CMD_BUILTIN_H
#define FAST_CMD_BUILTIN_H

int cmd_bench(int argc, char **argv);
extern const char cmd_bench_usage[];
int cmd_bound(int argc, char **argv);
extern const char cmd_bound_usage[];
int cmd_calibrate(int argc, char **argv);
extern const char cmd_calibrate_usage[];
int cmd_check(int argc, char **argv);
extern const char cmd_check_usage[];
int cmd_compare(int argc, char **argv);
extern const char cmd_compare_usage[];
int cmd_export(int argc, char **argv);
extern const char cmd_export_usage[];
int cmd_gate(int argc, char **argv);
extern const char cmd_gate_usage[];
int cmd_gen(int argc, char **argv);
extern const char cmd_gen_usage[];
int cmd_inspect(int argc, char **argv);
extern const char cmd_inspect_usage[];
int cmd_plan(int argc, char **argv);
extern const char cmd_plan_usage[];
int cmd_run(int argc, char **argv);
extern const char cmd_run_usage[];
int cmd_sim(int argc, char **argv);
extern const char cmd_sim_usage[];
int cmd_sweep(int argc, char **argv);
extern const char cmd_sweep_usage[];
int cmd_topo(int argc, char **argv);
extern const char cmd_topo_usage[];
int cmd_trace(int argc, char **argv);
extern const char cmd_trace_usage[];
int cmd_traffic(int argc, char **argv);
extern const char cmd_traffic_usage[];

#endif
