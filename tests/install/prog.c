
/* tests/install/prog.c - a user's program against the installed libfast.a
 * (tests/install/run.sh prepends an #include of every installed lib/ and
 * sim/ header): compile FAST for a skewed 2 x 4 matrix, prove the plan,
 * bound it with the LP and simulate it; the simulated time must not beat
 * the bound. */
#include <stdio.h>

int main(void)
{
	struct fast_limits lim;
	struct fast_topo topo;
	struct fast_algo_opts ao;
	struct fast_sim_opts so;
	struct fast_matrix m;
	struct fast_plan plan;
	struct fast_plan_view v;
	struct fast_bound b;
	struct fast_sim_result r;
	struct fast_err err;
	uint64_t D[8 * 8];

	fast_limits_default(&lim);
	if (fast_topo_preset("h200", 2, 4, &lim, &topo, &err) < 0)
		goto fail;
	for (int s = 0; s < 8; s++)
		for (int d = 0; d < 8; d++)
			D[s * 8 + d] = (uint64_t)(1 + (s * 3 + d * 5) % 7) << 20;
	m = fast_matrix_of(D, 8);       /* D as a matrix of 8 GPUs (borrowed) */
	fast_algo_opts_default(&ao);
	if (fast_compile("fast", &topo, &m, &ao, &plan, &err) < 0)
		goto fail;
	if (fast_plan_view_open(&v, &plan, &m, &err) < 0)
		goto fail;
	if (fast_plan_check(&v, &topo, &err) < 0 || fast_bound_compute(&topo, &m, false, &b, &err) < 0)
		goto fail;
	fast_sim_opts_default(&so);
	if (fast_sim_run(&topo, &v, &so, &r, &err) < 0)
		goto fail;
	printf("FAST %.3f us, LP bound %.3f us, ratio %.4f\n", r.time_s * 1e6, b.lp_s * 1e6,
	       r.time_s / b.lp_s);
	if (r.time_s < b.lp_s * (1 - 1e-9) || b.lp_s <= 0)
		return 1;
	fast_sim_result_free(&r);
	fast_plan_view_close(&v);
	fast_plan_free(&plan);
	return 0;
fail:
	fprintf(stderr, "prog: %s\n", err.msg);
	return 1;
}
