/* tests/install/prog_api.c - a foreign caller of libfast.so: include/fast/api.h
 * alone, linked with pkg-config fast-api.  Compiles a skewed 16-GPU matrix,
 * checks the plan, reads it back from its own JSON, simulates it and
 * builds rank 0's program; a bad preset must fail with a message. */
#include <fast/api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define P 16

static int die(const char *what, const struct fast_api_error *e)
{
	fprintf(stderr, "prog_api: %s: %d %s\n", what, e->code, e->msg);
	return 1;
}

int main(void)
{
	static uint64_t D[P * P];
	struct fast_api_error e;
	struct fast_api_topo *t = NULL;
	struct fast_api_traffic *tr = NULL;
	struct fast_api_plans *ps = NULL, *back = NULL;
	struct fast_api_prog *prog = NULL;
	struct fast_api_prog_info info;
	const char *names[] = { "stages" }, *values[] = { "exact" };
	char *plan_json = NULL, *sim_json = NULL;

	for (int s = 0; s < P; s++)
		for (int d = 0; d < P; d++)
			D[s * P + d] = s == d ? 0 : (uint64_t)(1 + (s * 7 + d * 3) % 11) << 16;
	if (fast_api_topo_preset("nope", 2, 0, &t, &e) != FAST_API_EUSAGE || !strstr(e.msg, "nope"))
		return die("a bad preset is refused", &e);
	if (fast_api_topo_preset("h200", 2, 0, &t, &e) < 0)
		return die("preset", &e);
	if (fast_api_traffic_new_u64(P, 1, D, &tr, &e) < 0)
		return die("traffic", &e);
	if (fast_api_compile(t, tr, "fast", names, values, 1, &ps, &e) < 0)
		return die("compile", &e);
	if (fast_api_check(t, tr, ps, &e) < 0)
		return die("check", &e);
	if (fast_api_plans_json(ps, &plan_json, &e) < 0 ||
	    fast_api_plans_parse(plan_json, "plan.json", &back, &e) < 0)
		return die("plan JSON", &e);
	if (fast_api_sim_json(t, tr, back, NULL, NULL, 0, &sim_json, &e) < 0)
		return die("sim", &e);
	if (!strstr(sim_json, "\"time_s\""))
		return die("sim JSON has no time", &e);
	if (fast_api_prog_build(tr, back, 0, 0, 1, &prog, &e) < 0)
		return die("program", &e);
	fast_api_prog_info(prog, &info);
	if (info.ng != P || info.nwaves == 0 || info.nrecvs == 0)
		return die("program info", &e);
	printf("%s: %u waves, %llu receives\n", fast_api_version(), info.nwaves,
	       (unsigned long long)info.nrecvs);
	fast_api_prog_free(prog);
	fast_api_string_free(sim_json);
	fast_api_string_free(plan_json);
	fast_api_plans_free(back);
	fast_api_plans_free(ps);
	fast_api_traffic_free(tr);
	fast_api_topo_free(t);
	return 0;
}
