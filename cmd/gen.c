/*
 * gen.c - `fast gen`: write a synthetic traffic file (lib/workload/gen.h) for a
 * topology: the paper's uniform / random / Zipf microbenchmarks, hotspots,
 * and a synthetic top-k MoE router.  Same options and seed give the same
 * bytes on every machine.
 */
#include <stdio.h>
#include <string.h>

#include "builtin.h"
#include "cli.h"
#include "lib/workload/gen.h"

int cmd_gen(int argc, char **argv)
{
	struct cli_scan s;
	struct cli_inputs in;
	struct fast_gen_opts o;
	struct fast_topo topo;
	struct fast_traffic t;
	struct fast_err err;
	struct cli_out out;
	const char *pattern = NULL, *placement = NULL, *moe_opt = NULL, *mat_opt = NULL;
	const char *skew_opt = NULL, *hot_opt = NULL;
	bool sparse = false;
	int rc;

	fast_gen_defaults(&o);
	cli_inputs_init(&in);
	for (cli_begin(&s, argc, argv, "gen"); cli_more(&s);) {
		if (cli_inputs_option(&s, &in))
			continue;
		if (cli_value(&s, "--pattern", &pattern) || cli_u64(&s, "--seed", &o.seed))
			continue;
		if (cli_size(&s, "--mean-bytes", &o.mean_bytes)) {
			if (!s.failed && o.mean_bytes == 0)
				return cli_usage_error("gen", "--mean-bytes must be > 0");
			continue;
		}
		if (cli_flag(&s, "--sparse")) {
			sparse = true;
			continue;
		}
		if (cli_double(&s, "--skew", 0, 16, &o.skew)) {
			skew_opt = s.arg;
			continue;
		}
		if (cli_u32(&s, "--hot", 1, 1u << 30, &o.hot) ||
		    cli_double(&s, "--fraction", 0, 1, &o.fraction)) {
			hot_opt = s.arg;
			continue;
		}
		if (cli_u32(&s, "--matrices", 1, 1u << 20, &o.matrices)) {
			mat_opt = "--matrices";
			continue;
		}
		if (cli_flag(&s, "--token-groups")) {
			o.moe.groups = true;
			moe_opt = s.arg;
			continue;
		}
		if (cli_u32(&s, "--tokens", 1, 1u << 30, &o.moe.tokens) ||
		    cli_u32(&s, "--topk", 1, 65535, &o.moe.topk) ||
		    cli_u32(&s, "--experts", 1, 65535, &o.moe.experts) ||
		    cli_double(&s, "--alpha", 0, 16, &o.moe.alpha) ||
		    cli_value(&s, "--placement", &placement) ||
		    cli_size(&s, "--token-bytes", &o.moe.token_bytes) ||
		    cli_u32(&s, "--steps", 1, 32768, &o.moe.steps) ||
		    cli_double(&s, "--drift", 0, 1, &o.moe.drift)) {
			moe_opt = s.arg;
			continue;
		}
		return cli_unknown(&s);
	}
	if ((rc = cli_end(&s, false)) >= 0)
		return rc;
	if (!pattern)
		return cli_usage_error("gen", "--pattern is required (uniform, random, zipf, hotspot, moe)");
	if (fast_gen_pattern_parse(pattern, &o.pattern, &err) < 0)
		return cli_usage_error("gen", "--pattern: %s", err.msg);
	if (placement && fast_placement_parse(placement, &o.moe.placement, &err) < 0)
		return cli_usage_error("gen", "--placement: %s", err.msg);
	/* options of one pattern given to another are mistakes, not no-ops */
	if (moe_opt && o.pattern != FAST_GEN_MOE)
		return cli_usage_error("gen", "%.*s applies to --pattern moe only",
				       (int)strcspn(moe_opt, "="), moe_opt);
	if (mat_opt && o.pattern == FAST_GEN_MOE)
		return cli_usage_error("gen", "--matrices does not apply to --pattern moe (use --steps)");
	if (skew_opt && o.pattern != FAST_GEN_ZIPF)
		return cli_usage_error("gen", "--skew applies to --pattern zipf only");
	if (hot_opt && o.pattern != FAST_GEN_HOTSPOT)
		return cli_usage_error("gen", "%.*s applies to --pattern hotspot only",
				       (int)strcspn(hot_opt, "="), hot_opt);
	rc = cli_load_topo(&in, &topo);
	if (rc)
		return rc;
	o.ng = fast_topo_ngpus(&topo);
	if (fast_gen_traffic(&o, &in.lim, &t, &err) < 0) {
		if (err.code == FAST_EUSAGE)
			return cli_usage_error("gen", "%s", err.msg);
		return cli_report(&err);
	}
	rc = cli_out_open(&out, in.out_path);
	if (rc) {
		fast_traffic_free(&t);
		return rc;
	}
	if (fast_traffic_write(&t, sparse, out.f, &err) < 0) {
		fast_traffic_free(&t);
		return cli_out_fail(&out, &err);
	}
	rc = cli_out_commit(&out);
	if (rc == 0 && !out.is_stdout)
		printf("wrote %s: %s, %u matri%s of %u GPUs (%s, %u x %u)\n", in.out_path,
		       fast_gen_pattern_name(o.pattern), t.count, t.count == 1 ? "x" : "ces", t.ng,
		       topo.name, topo.servers, topo.gpus);
	fast_traffic_free(&t);
	return rc;
}

const char cmd_gen_usage[] =
	"fast gen (--preset NAME [--servers N] [--gpus G] | --topo FILE) --pattern P\n"
	"         [options] [--seed S] [-o FILE] [--sparse]\n"
	"\n"
	"Write a traffic file of NG x NG byte matrices (NG = servers x GPUs).\n"
	"Same options and seed: byte-identical output on every machine.\n"
	"\n"
	"Patterns:\n"
	"  uniform   every off-diagonal pair M/(NG-1), rounded to 512 bytes\n"
	"  random    pair weights uniform in 0..1023 (the paper's rand() % 1024)\n"
	"  zipf      pair weights from a bounded Zipf over 1..1024 (--skew)\n"
	"  hotspot   --hot K receivers get --fraction F of every sender's bytes\n"
	"  moe       synthetic top-k router: per step a dispatch matrix and its\n"
	"            transpose (combine), labelled stepS/dispatch, stepS/combine\n"
	"random and zipf scale the weights to a total of NG x M in 512-byte units\n"
	"(largest remainder; the mean is exact when M is a multiple of 512);\n"
	"the diagonal is zero.\n"
	"\n"
	"Options:\n"
	"  --mean-bytes SIZE   mean per-GPU send M (default 64M; K/M/G = 1024^n,\n"
	"                      KB/MB/GB = 1000^n).  For moe it replaces\n"
	"                      --token-bytes by round(NG x steps x M / token copies)\n"
	"  --matrices N        matrices m0..m{N-1} from one random stream (default 1)\n"
	"  --skew S            zipf exponent (default 0.8; 0 = uniform 1..1024)\n"
	"  --hot K             hotspot receivers, drawn from the seed (default 1)\n"
	"  --fraction F        hotspot share of each sender's bytes (default 0.5)\n"
	"  --seed S            random seed (default 1)\n"
	"  --sparse            write [src, dst, bytes] entries instead of dense rows\n"
	"  -o FILE             output (default - = stdout)\n"
	"MoE options (defaults: DeepSeek-V3-like router):\n"
	"  --tokens T          tokens per GPU per step (default 4096)\n"
	"  --topk K            experts per token (default 8)\n"
	"  --experts E         experts (default 256; fewer than NG: NG/E replicas)\n"
	"  --alpha A           popularity (rank+1)^-A, 0 = balanced (default 0)\n"
	"  --placement P       experts on GPUs: contiguous | round-robin\n"
	"  --token-bytes B     bytes per token copy (default 14336 = 7168 x bf16)\n"
	"  --steps S           steps, 2 matrices each (default 1)\n"
	"  --drift D           per-step probability an expert swaps popularity\n"
	"                      rank with a random expert (default 0)\n"
	"  --token-groups      token traffic (file version 3): per step a dispatch\n"
	"                      and a combine of token groups [src, [GPUs], tokens]\n"
	"                      (the tokens of one GPU whose experts are on the same\n"
	"                      GPUs, by source then first appearance) instead of\n"
	"                      byte matrices; same draws, so the byte view is the\n"
	"                      output without it.  (--tokens is the token count.)\n"
	"A token is sent once to a GPU even if several of its experts live there;\n"
	"the diagonal holds the tokens whose experts are local.\n"
	"\n"
	"Exit codes: 0 ok, 2 usage, 3 bad input, 4 write failure.\n";
