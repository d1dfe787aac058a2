/*
 * traffic.c - `fast traffic show` summarises a traffic file (sizes, the
 * local / intra-server / inter-server split, skew, Gini, hottest GPUs);
 * `fast traffic convert` rewrites it as dense JSON, sparse JSON or an
 * nccl-tests alltoallv matrix file.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "cli.h"
#include "lib/base/json.h"

const char cmd_traffic_usage[] =
	"fast traffic show|convert FILE [options]\n"
	"\n"
	"fast traffic show FILE [--topo FILE | --preset NAME [--servers N] [--gpus G]]\n"
	"                       [--matrix I] [--json]\n"
	"fast traffic convert FILE --to json|sparse|nccl [--matrix I] [-o OUT]\n"
	"\n"
	"show     summary of each matrix: total bytes, local (diagonal) / intra-server /\n"
	"         inter-server split, row and column skew (max / mean of the bytes a\n"
	"         GPU sends to / receives from others), Gini coefficient of the\n"
	"         off-diagonal pair sizes, hottest sender and receiver, largest\n"
	"         cross-server egress and ingress of a server.  The split needs the\n"
	"         GPUs per server: from --topo/--preset, else 8 when 8 divides the\n"
	"         GPU count and one server otherwise (with a note).  Token matrices\n"
	"         (MoE dispatch / combine groups) also give the bytes crossing servers\n"
	"         once per destination GPU (their byte matrix, what every statistic\n"
	"         above is of) and once per destination server (a token crosses to a\n"
	"         server once and is copied there; combine: summed there first), and\n"
	"         the factor between the two.  Imported MoE traces (version 4) also\n"
	"         give the compute imbalance: the most (token, expert) pairs a GPU\n"
	"         computes over the mean (what EPLB balances).\n"
	"convert  json: dense rows; sparse: [src, dst, bytes] triples of the non-zero\n"
	"         entries; nccl: one matrix (choose it with --matrix when the file has\n"
	"         several) as N lines of N numbers, each rounded up to a multiple of\n"
	"         16 bytes as nccl-tests' alltoallv expects (a warning counts the\n"
	"         changed entries).  Token matrices: json and sparse keep their\n"
	"         groups; nccl writes their per-GPU byte matrix (the groups are lost,\n"
	"         with a warning).\n"
	"\n"
	"FILE is the tool's traffic JSON or an nccl-tests matrix file (by content).\n"
	"Options:\n"
	"  --traffic FILE     same as the FILE argument\n"
	"  --matrix I         only matrix I (numbered from 0)\n"
	"  --json             machine-readable summary (show)\n"
	"  --max-gpus N       refuse more than N GPUs (default 16384)\n"
	"  --max-traffic-bytes B  refuse traffic whose dense matrices need more (default 4G)\n"
	"  --max-groups N     refuse traffic of more than N token groups (default 16777216)\n"
	"  -o OUT             output file (convert; - = stdout, the default)\n";

#define DEFAULT_G 8u

/* Common front: options, the traffic path, optional topology. */
struct args {
	struct cli_inputs in;
	const char *to;
	bool have_topo;
	struct fast_topo topo;
};

static int parse_args(int argc, char **argv, bool convert, struct args *a)
{
	struct cli_scan s;
	int end;

	memset(a, 0, sizeof *a);
	cli_inputs_init(&a->in);
	for (cli_begin(&s, argc, argv, "traffic"); cli_more(&s);) {
		if (cli_inputs_option(&s, &a->in))
			continue;
		if (convert && cli_value(&s, "--to", &a->to))
			continue;
		return cli_unknown(&s);
	}
	if (s.help)
		return -1;
	if ((end = cli_end(&s, true)) >= 0)
		return end;
	if (s.npos > 1)
		return cli_usage_error("traffic", "%s takes one FILE (got %d)", argv[0], s.npos);
	if (s.npos == 1) {
		if (a->in.traffic_path)
			return cli_usage_error("traffic",
					       "give the traffic as FILE or --traffic, not both");
		a->in.traffic_path = s.pos[0];
	}
	if (!a->in.traffic_path)
		return cli_usage_error("traffic", "%s needs a traffic FILE", argv[0]);
	if (!convert && a->in.out_path)
		return cli_usage_error("traffic", "show prints to stdout: -o does not apply");
	if (convert) {
		if (!a->to)
			return cli_usage_error("traffic", "convert needs --to json|sparse|nccl");
		if (strcmp(a->to, "json") && strcmp(a->to, "sparse") && strcmp(a->to, "nccl"))
			return cli_usage_error("traffic",
					       "--to: unknown format '%.40s' (json, sparse or nccl)",
					       a->to);
	}
	if (a->in.topo_path || a->in.preset) {
		int rc = cli_load_topo(&a->in, &a->topo);
		if (rc)
			return rc;
		a->have_topo = true;
	}
	return 0;
}

/* Token matrices: bytes crossing servers with per-GPU and per-server
 * deduplication (lib fast_matrix_dedup_bytes) and the token count. */
struct dedup {
	uint64_t per_gpu, per_server, tokens;
};

/* per_gpu / per_server; 1 when nothing crosses (nothing to save). */
static double dedup_factor(const struct dedup *d)
{
	return d->per_server ? (double)d->per_gpu / (double)d->per_server : 1.0;
}

static double pct(uint64_t part, uint64_t total)
{
	return total ? 100.0 * (double)part / (double)total : 0.0;
}

static void show_human(const struct args *a, const struct fast_traffic *t, uint32_t G,
		       uint32_t first, const struct fast_traffic_stats *sts,
		       const struct dedup *dd, uint64_t grand)
{
	char b1[32];

	printf("file        %s\n", a->in.traffic_path);
	printf("source      %s\n", t->source[0] ? t->source : "-");
	if (t->ng % G == 0)
		printf("gpus        %u (%u server%s x %u GPUs)\n", t->ng, t->ng / G,
		       t->ng / G == 1 ? "" : "s", G);
	else
		printf("gpus        %u (%u GPUs per server: the last server is partial)\n", t->ng,
		       G);
	printf("matrices    %u\n", t->count);
	printf("total       %llu B (%s)\n", (unsigned long long)grand,
	       fast_size_format(grand, b1, sizeof b1));
	for (uint32_t k = 0; k < t->count; k++) {
		struct fast_traffic_stats st = sts[k];

		printf("\nmatrix %u \"%s\"\n", first + k, t->m[k].label);
		if (t->m[k].kind != FAST_TRAFFIC_BYTES) {
			char b2[32];
			printf("  tokens            %s: %llu tokens of %llu B in %u groups\n",
			       fast_traffic_kind_name(t->m[k].kind),
			       (unsigned long long)dd[k].tokens,
			       (unsigned long long)t->m[k].token_bytes, t->m[k].ngroups);
			printf("  cross-server      %llu B (%s) once per GPU, %llu B (%s) once per "
			       "server: %.3fx\n",
			       (unsigned long long)dd[k].per_gpu,
			       fast_size_format(dd[k].per_gpu, b1, sizeof b1),
			       (unsigned long long)dd[k].per_server,
			       fast_size_format(dd[k].per_server, b2, sizeof b2),
			       dedup_factor(&dd[k]));
		}
		if (t->m[k].compute_pairs) {
			uint64_t mx;
			double mean, imb = fast_matrix_compute_imbalance(&t->m[k], &mx, &mean);
			printf("  compute           imbalance %.3f (max %llu, mean %.1f (token, expert) "
			       "pairs per GPU)\n",
			       imb, (unsigned long long)mx, mean);
		}
		printf("  total             %llu B (%s)\n", (unsigned long long)st.total,
		       fast_size_format(st.total, b1, sizeof b1));
		printf("  local (diagonal)  %llu B (%.1f%%)\n", (unsigned long long)st.local,
		       pct(st.local, st.total));
		printf("  intra-server      %llu B (%.1f%%)\n", (unsigned long long)st.intra,
		       pct(st.intra, st.total));
		printf("  inter-server      %llu B (%.1f%%)\n", (unsigned long long)st.inter,
		       pct(st.inter, st.total));
		printf("  row skew          %.3f (max %llu B, mean %.1f B sent to others)\n",
		       st.row_skew, (unsigned long long)st.max_row, st.mean_row);
		printf("  column skew       %.3f (max %llu B, mean %.1f B received from others)\n",
		       st.col_skew, (unsigned long long)st.max_col, st.mean_col);
		printf("  gini              %.4f (off-diagonal pair sizes)\n", st.gini);
		printf("  hottest sender    GPU %u (%llu B)\n", st.hot_sender,
		       (unsigned long long)st.max_row);
		printf("  hottest receiver  GPU %u (%llu B)\n", st.hot_receiver,
		       (unsigned long long)st.max_col);
		printf("  server egress     %llu B max cross-server (%s)\n",
		       (unsigned long long)st.max_server_egress,
		       fast_size_format(st.max_server_egress, b1, sizeof b1));
		printf("  server ingress    %llu B max cross-server (%s)\n",
		       (unsigned long long)st.max_server_ingress,
		       fast_size_format(st.max_server_ingress, b1, sizeof b1));
	}
}

static void put_num(const char *key, double v, bool last)
{
	printf("\"%s\": ", key);
	fast_json_put_double(stdout, v);
	fputs(last ? "" : ", ", stdout);
}

static void show_json(const struct args *a, const struct fast_traffic *t, uint32_t G,
		      bool assumed, uint32_t first, const struct fast_traffic_stats *sts,
		      const struct dedup *dd, uint64_t grand)
{
	fputs("{\n  \"file\": ", stdout);
	fast_json_put_string(stdout, a->in.traffic_path);
	fputs(",\n  \"source\": ", stdout);
	fast_json_put_string(stdout, t->source);
	printf(",\n  \"gpus_total\": %u,\n  \"gpus_per_server\": %u,\n"
	       "  \"gpus_per_server_assumed\": %s,\n  \"total_bytes\": %llu,\n"
	       "  \"matrices\": [",
	       t->ng, G, assumed ? "true" : "false", (unsigned long long)grand);
	for (uint32_t k = 0; k < t->count; k++) {
		struct fast_traffic_stats st = sts[k];

		printf("%s\n    {\"index\": %u, \"label\": ", k ? "," : "", first + k);
		fast_json_put_string(stdout, t->m[k].label);
		printf(", \"total\": %llu, \"local\": %llu, \"intra\": %llu, \"inter\": %llu, "
		       "\"max_row\": %llu, \"max_col\": %llu, ",
		       (unsigned long long)st.total, (unsigned long long)st.local,
		       (unsigned long long)st.intra, (unsigned long long)st.inter,
		       (unsigned long long)st.max_row, (unsigned long long)st.max_col);
		put_num("mean_row", st.mean_row, false);
		put_num("mean_col", st.mean_col, false);
		put_num("row_skew", st.row_skew, false);
		put_num("col_skew", st.col_skew, false);
		put_num("gini", st.gini, false);
		printf("\"hot_sender\": %u, \"hot_receiver\": %u, \"max_server_egress\": %llu, "
		       "\"max_server_ingress\": %llu",
		       st.hot_sender, st.hot_receiver, (unsigned long long)st.max_server_egress,
		       (unsigned long long)st.max_server_ingress);
		if (t->m[k].kind != FAST_TRAFFIC_BYTES) {
			printf(", \"kind\": \"%s\", \"token_bytes\": %llu, \"groups\": %u, "
			       "\"tokens\": %llu, \"bytes_out_per_gpu\": %llu, "
			       "\"bytes_out_per_server\": %llu, ",
			       fast_traffic_kind_name(t->m[k].kind),
			       (unsigned long long)t->m[k].token_bytes, t->m[k].ngroups,
			       (unsigned long long)dd[k].tokens, (unsigned long long)dd[k].per_gpu,
			       (unsigned long long)dd[k].per_server);
			put_num("dedup_factor", dedup_factor(&dd[k]), true);
		}
		if (t->m[k].compute_pairs) {
			uint64_t mx;
			double mean, imb = fast_matrix_compute_imbalance(&t->m[k], &mx, &mean);
			printf(", \"compute_pairs_max\": %llu, ", (unsigned long long)mx);
			put_num("compute_pairs_mean", mean, false);
			put_num("compute_imbalance", imb, true);
		}
		fputc('}', stdout);
	}
	fputs("\n  ]\n}\n", stdout);
}

static int traffic_show(int argc, char **argv)
{
	struct args a;
	struct fast_traffic t;
	struct fast_traffic_stats *sts;
	struct dedup *dd;
	struct fast_err err;
	uint64_t grand = 0;
	uint32_t G, first;
	bool assumed = false;
	int rc = parse_args(argc, argv, false, &a);

	if (rc)
		return rc < 0 ? 0 : rc;
	if ((rc = cli_load_traffic(&a.in, a.have_topo ? &a.topo : NULL, &t)) != 0)
		return rc;
	if (a.have_topo) {
		G = a.topo.gpus;
	} else {
		/* no fabric given: the common 8 GPUs per server, or a single
		 * server when 8 does not divide the GPU count */
		assumed = true;
		G = t.ng % DEFAULT_G == 0 ? DEFAULT_G : t.ng;
		fprintf(stderr,
			"fast: note: no --topo or --preset: assuming %u GPUs per server for the "
			"intra/inter-server split\n",
			G);
	}
	sts = fast_calloc(t.count, sizeof *sts);
	dd = fast_calloc(t.count, sizeof *dd);
	if (!sts || !dd) {
		free(sts);
		free(dd);
		fast_traffic_free(&t);
		return cli_fail(FAST_ENOMEM, "out of memory");
	}
	for (uint32_t k = 0; k < t.count; k++) {
		fast_traffic_stats(t.m[k].bytes, t.ng, G, &sts[k]);
		fast_add_u64(grand, sts[k].total, &grand); /* cannot overflow: checked at load */
		/* cannot fail either: at most the byte matrix's total */
		if (fast_matrix_dedup_bytes(&t.m[k], G, &dd[k].per_gpu, &dd[k].per_server,
					    &err) < 0) {
			free(sts);
			free(dd);
			fast_traffic_free(&t);
			return cli_report(&err);
		}
		for (uint32_t g = 0; g < t.m[k].ngroups; g++)
			dd[k].tokens += t.m[k].groups[g].tokens; /* <= bytes: no overflow */
	}
	first = a.in.matrix >= 0 ? (uint32_t)a.in.matrix : 0;
	if (a.in.json)
		show_json(&a, &t, G, assumed, first, sts, dd, grand);
	else
		show_human(&a, &t, G, first, sts, dd, grand);
	free(sts);
	free(dd);
	fast_traffic_free(&t);
	return 0;
}

static int traffic_convert(int argc, char **argv)
{
	struct args a;
	struct fast_traffic t;
	struct fast_err err;
	struct cli_out o;
	uint64_t changed = 0;
	bool nccl;
	int rc = parse_args(argc, argv, true, &a);

	if (rc)
		return rc < 0 ? 0 : rc;
	nccl = strcmp(a.to, "nccl") == 0;
	if ((rc = cli_load_traffic(&a.in, a.have_topo ? &a.topo : NULL, &t)) != 0)
		return rc;
	if (nccl && t.count > 1) {
		uint32_t count = t.count;
		fast_traffic_free(&t);
		return cli_usage_error("traffic",
				       "an nccl-tests matrix holds one matrix: choose one with "
				       "--matrix I (%s has %u)",
				       a.in.traffic_path, count);
	}
	if ((rc = cli_out_open(&o, a.in.out_path)) != 0) {
		fast_traffic_free(&t);
		return rc;
	}
	if (nccl)
		rc = fast_traffic_write_nccl(&t, 0, o.f, &changed, &err);
	else
		rc = fast_traffic_write(&t, strcmp(a.to, "sparse") == 0, o.f, &err);
	if (rc < 0) {
		fast_traffic_free(&t);
		return cli_out_fail(&o, &err);
	}
	rc = cli_out_commit(&o);
	if (rc == 0 && nccl && t.m[0].kind != FAST_TRAFFIC_BYTES)
		cli_warn("\"%s\" is token traffic (%s, %u groups): the nccl-tests matrix is its "
			 "per-GPU byte view (one copy per destination GPU); the groups are not kept",
			 t.m[0].label, fast_traffic_kind_name(t.m[0].kind), t.m[0].ngroups);
	if (rc == 0 && changed)
		cli_warn("rounded %llu of %llu entries up to a multiple of 16 bytes "
			 "(nccl-tests alltoallv sizes)",
			 (unsigned long long)changed, (unsigned long long)t.ng * t.ng);
	fast_traffic_free(&t);
	return rc;
}

int cmd_traffic(int argc, char **argv)
{
	if (argc < 2)
		return cli_usage_error("traffic", "missing subcommand: show or convert");
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		fputs(cmd_traffic_usage, stdout);
		return 0;
	}
	if (strcmp(argv[1], "show") == 0)
		return traffic_show(argc - 1, argv + 1);
	if (strcmp(argv[1], "convert") == 0)
		return traffic_convert(argc - 1, argv + 1);
	return cli_usage_error("traffic", "unknown subcommand '%.40s' (use show or convert)",
			       argv[1]);
}
