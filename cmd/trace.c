/*
 * trace.c - `fast trace import`: turn real MoE routing measurements (the
 * data set of data/moe, installed as $PREFIX/share/fast/data/moe) into a
 * traffic file of per-layer dispatch and combine matrices for an
 * expert-parallel group (lib/workload/moe.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "builtin.h"
#include "cli.h"
#include "config.h" /* FAST_DATADIR: the Makefile's $(PREFIX)/share/fast */
#include "lib/workload/moe.h"
#include "lib/workload/moe_place.h"
#include "lib/workload/moe_routing.h"

#define MAX_LAYERS 256

/* --placement-out: its path, and the maps the import made for it */
static const char *place_out_path;
static struct fast_moe_place place_out;

static bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Where the data set is when --data is not given, in this order (the help
 * text says the same):
 *   1. $FAST_DATA_DIR, taken as given (a wrong one is an error, not skipped);
 *   2. the installed copy, FAST_DATADIR/data/moe (PREFIX at build time);
 *   3. beside the executable: BIN/../share/fast/data/moe (an installed tree
 *      that was moved) or BIN/../../data/moe (build/bin/fast of a checkout).
 * Never the current directory: the answer must not depend on where fast is
 * run from.  Returns the directory (env, a literal or buf), or NULL with
 * `tried` listing the places looked at. */
static const char *data_dir_default(char *buf, size_t size, char *tried, size_t tsize)
{
	static const char *const beside[] = { "../share/fast/data/moe", "../../data/moe" };
	const char *env = getenv("FAST_DATA_DIR");
	char exe[PATH_MAX];
	ssize_t n;
	size_t used;

	if (env && *env)
		return env;
	if (is_dir(FAST_DATADIR "/data/moe"))
		return FAST_DATADIR "/data/moe";
	used = (size_t)snprintf(tried, tsize, "%s", FAST_DATADIR "/data/moe");
	n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	*strrchr(exe, '/') = '\0'; /* readlink of /proc/self/exe is absolute */
	for (size_t i = 0; i < sizeof beside / sizeof beside[0]; i++) {
		int len = snprintf(buf, size, "%s/%s", exe, beside[i]);

		if (len < 0 || (size_t)len >= size)
			continue;
		if (is_dir(buf))
			return buf;
		if (used < tsize)
			used += (size_t)snprintf(tried + used, tsize - used, ", %s", buf);
	}
	return NULL;
}

/* "all" (n = 0) or "1,2,5". */
static int parse_layers(const char *text, uint32_t *v, uint32_t *n)
{
	const char *p = text;

	*n = 0;
	if (strcmp(text, "all") == 0)
		return 0;
	for (;;) {
		char *end;
		unsigned long x;

		if (*p < '0' || *p > '9')
			return -1;
		errno = 0;
		x = strtoul(p, &end, 10);
		if (errno || x > UINT32_MAX || *n == MAX_LAYERS)
			return -1;
		v[(*n)++] = (uint32_t)x;
		if (*end == '\0')
			return 0;
		if (*end != ',')
			return -1;
		p = end + 1;
	}
}

static void import_progress(void *arg, uint32_t done, uint32_t n)
{
	struct cli_progress *pr = arg;

	pr->n = n;
	cli_progress_step(pr, done);
}

/* --placement-out: the maps EPLB made, into a temporary file that the
 * caller commits once the traffic is written, or aborts (so a failure
 * leaves neither file).  0, or the exit status after printing. */
static int write_place(struct cli_out *out)
{
	struct fast_err err;
	size_t n = strlen(place_out_path);
	bool npy = n >= 4 && strcmp(place_out_path + n - 4, ".npy") == 0;
	int rc;

	if ((rc = cli_out_open(out, place_out_path)) == 0 &&
	    fast_moe_place_write(&place_out, npy, out->f, &err) < 0)
		rc = cli_out_fail(out, &err);
	fast_moe_place_free(&place_out);
	return rc;
}

/* Write t (freed) to path, and --placement-out's maps when asked (both or
 * neither); the one-line note when it is a file. */
static int write_traffic(struct fast_traffic *t, const char *path, bool sparse, const char *what)
{
	struct fast_err err;
	struct cli_out out, pout;
	int rc = place_out_path ? write_place(&pout) : 0;

	if (rc == 0 && (rc = cli_out_open(&out, path)) != 0 && place_out_path)
		cli_out_abort(&pout);
	if (rc) {
		fast_traffic_free(t);
		return rc;
	}
	if (fast_traffic_write(t, sparse, out.f, &err) < 0) {
		fast_traffic_free(t);
		if (place_out_path)
			cli_out_abort(&pout);
		return cli_out_fail(&out, &err);
	}
	/* the maps' last bytes out before the traffic is renamed into place */
	if (place_out_path && (fflush(pout.f) != 0 || ferror(pout.f))) {
		fast_traffic_free(t);
		cli_out_abort(&out);
		fast_err_set(&err, FAST_EIO, "writing the placement failed");
		return cli_out_fail(&pout, &err);
	}
	rc = cli_out_commit(&out);
	if (place_out_path && rc == 0)
		rc = cli_out_commit(&pout);
	else if (place_out_path)
		cli_out_abort(&pout);
	if (rc == 0 && !out.is_stdout)
		printf("wrote %s: %u matri%s of %u GPUs (%s, %s%s%s)\n", path, t->count,
		       t->count == 1 ? "x" : "ces", t->ng, what, t->m[0].label,
		       t->count > 1 ? " .. " : "", t->count > 1 ? t->m[t->count - 1].label : "");
	fast_traffic_free(t);
	return rc;
}

/* The outputs, -o and --placement-out, checked together (neither an
 * input, nor the same file). */
static int outs_check(const char *out_path)
{
	const char *paths[2] = { out_path, place_out_path };

	return cli_outs_check(paths, place_out_path ? 2 : 1);
}

/* The options that belong to --routing or to --source only: 0, or the
 * usage error's exit code. */
static int routing_options(const struct fast_moe_import *o, struct fast_moe_routing_opt *ro,
			   const char *axes)
{
	if (!ro->path && (ro->experts || ro->counts || ro->src_path || axes))
		return cli_usage_error("trace", "--experts, --counts, --token-src and --axes apply to "
						"--routing");
	if (axes && strcmp(axes, "ltk") && strcmp(axes, "tlk"))
		return cli_usage_error("trace", "--axes: '%.40s' is not ltk or tlk", axes);
	ro->tokens_first = axes && strcmp(axes, "tlk") == 0;
	if (ro->path && (o->domain || o->selection || o->data_dir))
		return cli_usage_error("trace", "--domain, --selection and --data apply to --source");
	return 0;
}

/* --placement contiguous|round-robin|eplb:R|FILE, --replica-choice
 * local|spread: 0, or the usage error's exit code. */
static int placement_options(struct fast_moe_import *o, const char *placement, const char *choice)
{
	struct fast_err err;
	char *end;
	unsigned long r;

	if (choice && strcmp(choice, "local") && strcmp(choice, "spread"))
		return cli_usage_error("trace", "--replica-choice: '%.40s' is not local or spread", choice);
	o->replica_local = choice && strcmp(choice, "local") == 0;
	if (!placement || fast_placement_parse(placement, &o->experts_at, &err) == 0) {
		if (place_out_path)
			return cli_usage_error("trace", "--placement-out needs --placement eplb:R");
		return 0;
	}
	if (strncmp(placement, "eplb:", 5) == 0) {
		errno = 0;
		r = strtoul(placement + 5, &end, 10);
		if (!placement[5] || *end || errno || placement[5] == '-' || r > 65536)
			return cli_usage_error("trace", "--placement: '%.40s' is not eplb:R (R redundant "
							"experts, 0..65536)", placement);
		o->eplb = true;
		o->eplb_redundant = (uint32_t)r;
	} else {
		o->place_path = placement;
		cli_input(placement);
	}
	if (place_out_path && !o->eplb)
		return cli_usage_error("trace", "--placement-out needs --placement eplb:R");
	o->place_out = place_out_path ? &place_out : NULL;
	return place_out_path ? cli_out_check(place_out_path) : 0;
}

/* --routing FILE: read it, then import as the data set is. */
static int import_routing(struct fast_moe_import *o, const struct fast_moe_routing_opt *ro,
			  struct fast_moe_routing *r, struct cli_inputs *in, bool tokens_at_given,
			  bool sparse)
{
	struct fast_traffic t;
	struct fast_err err;
	int rc;

	cli_input(ro->path);
	if (ro->src_path)
		cli_input(ro->src_path);
	if ((rc = outs_check(in->out_path)) != 0)
		return rc;
	rc = fast_moe_routing_load(ro, &in->lim, r, &err);
	if (rc == 0 && tokens_at_given &&
	    (r->kind == FAST_ROUTING_SRC_COUNTS || (r->tok && r->tok[0].src))) {
		fast_moe_routing_free(r);
		return cli_usage_error("trace", "--tokens-at: %s gives each token's source GPU",
				       ro->path);
	}
	if (rc == 0) {
		o->routing = r;
		rc = fast_moe_import(o, &in->lim, &t, &err);
	}
	fast_moe_routing_free(r);
	if (rc < 0) {
		if (err.code == FAST_EUSAGE)
			return cli_usage_error("trace", "%s", err.msg);
		return cli_report(&err);
	}
	return write_traffic(&t, in->out_path, sparse, "routing");
}

int cmd_trace(int argc, char **argv)
{
	struct cli_scan s;
	struct cli_inputs in;
	struct fast_moe_import o;
	struct fast_traffic t;
	struct fast_err err;
	const char *layers = NULL, *placement = NULL, *tokens_at = NULL, *choice = NULL;
	uint32_t lv[MAX_LAYERS], ep = 8, gps = 0;
	char found[PATH_MAX], tried[3 * PATH_MAX + 8];
	bool sparse = false, token_bytes_given = false;
	struct fast_moe_routing_opt ro = { 0 };
	struct fast_moe_routing routing = { 0 };
	const char *axes = NULL;
	struct cli_progress pr;
	int rc;

	memset(&o, 0, sizeof o);
	cli_inputs_init(&in);
	for (cli_begin(&s, argc, argv, "trace"); cli_more(&s);) {
		if (cli_value(&s, "-o", &in.out_path) || cli_value(&s, "--output", &in.out_path) ||
		    cli_u32(&s, "--max-gpus", 1, 1u << 30, &in.lim.max_gpus) ||
		    cli_size(&s, "--max-traffic-bytes", &in.lim.max_traffic_bytes) ||
		    cli_u64(&s, "--max-groups", &in.lim.max_groups))
			continue;
		if (cli_value(&s, "--source", &o.source) || cli_value(&s, "--data", &o.data_dir) ||
		    cli_value(&s, "--layers", &layers) || cli_value(&s, "--domain", &o.domain) ||
		    cli_value(&s, "--selection", &o.selection) ||
		    cli_u32(&s, "--ep", 1, 1u << 20, &ep) ||
		    cli_u32(&s, "--gpus-per-server", 1, 1u << 16, &gps) ||
		    cli_value(&s, "--placement", &placement) || cli_value(&s, "--replica-choice", &choice) ||
		    cli_value(&s, "--placement-out", &place_out_path) ||
		    cli_value(&s, "--tokens-at", &tokens_at))
			continue;
		if (cli_value(&s, "--routing", &ro.path) || cli_value(&s, "--token-src", &ro.src_path) ||
		    cli_value(&s, "--axes", &axes) ||
		    cli_u32(&s, "--experts", 1, 65536, &ro.experts))
			continue;
		if (cli_flag(&s, "--counts")) {
			ro.counts = true;
			continue;
		}
		if (cli_size(&s, "--token-bytes", &o.token_bytes)) {
			token_bytes_given = true;
			continue;
		}
		if (cli_flag(&s, "--no-dedup")) {
			o.no_dedup = true;
			continue;
		}
		if (cli_flag(&s, "--tokens")) {
			o.tokens = true;
			continue;
		}
		if (cli_flag(&s, "--no-combine")) {
			o.no_combine = true;
			continue;
		}
		if (cli_flag(&s, "--sparse")) {
			sparse = true;
			continue;
		}
		return cli_unknown(&s);
	}
	if ((rc = cli_end(&s, true)) >= 0)
		return rc;
	if (s.npos == 0)
		return cli_usage_error("trace", "an action is required (import)");
	if (s.npos > 1 || strcmp(s.pos[0], "import") != 0)
		return cli_usage_error("trace", "unknown action '%.40s' (known: import)",
				       s.pos[s.npos > 1 && strcmp(s.pos[0], "import") == 0 ? 1 : 0]);
	if (!o.source == !ro.path)
		return cli_usage_error("trace", "give --source NAME (deepseek-v2-lite, olmoe, "
						"olmoe-sft, olmoe-dpo, mixtral, switch128) or --routing FILE%s",
				       o.source ? ", not both" : "");
	if ((rc = routing_options(&o, &ro, axes)) != 0)
		return rc;
	if (layers && parse_layers(layers, lv, &o.nlayers) < 0)
		return cli_usage_error("trace", "--layers: '%.40s' is not 'all' or a list like 1,5,9",
				       layers);
	/* 0 is the library's "the model's default": not a size a user gives */
	if (token_bytes_given && o.token_bytes == 0)
		return cli_usage_error("trace", "--token-bytes must be >= 1");
	o.layers = o.nlayers ? lv : NULL;
	if ((rc = placement_options(&o, placement, choice)) != 0)
		return rc;
	if (tokens_at && fast_placement_parse(tokens_at, &o.tokens_at, &err) < 0)
		return cli_usage_error("trace", "--tokens-at: %s", err.msg);
	if (!gps)
		gps = ep < 8 ? ep : 8;
	if (ep % gps != 0)
		return cli_usage_error("trace", "--ep %u is not a multiple of --gpus-per-server %u", ep,
				       gps);
	o.ng = ep;
	o.gpus_per_server = gps;
	if (ro.path)
		return import_routing(&o, &ro, &routing, &in, tokens_at != NULL, sparse);
	if (!o.data_dir) {
		o.data_dir = data_dir_default(found, sizeof found, tried, sizeof tried);
		if (!o.data_dir)
			return cli_fail(FAST_EINPUT,
					"no MoE data set found (looked in %s); give --data DIR or set FAST_DATA_DIR",
					tried);
	}
	/* the importer reads files only it names: none of them is an output */
	cli_input_tree(o.data_dir);
	if ((rc = outs_check(in.out_path)) != 0)
		return rc;
	cli_progress_begin(&pr, "trace import: layer", 0);
	o.progress = import_progress;
	o.progress_arg = &pr;
	rc = fast_moe_import(&o, &in.lim, &t, &err);
	cli_progress_end(&pr);
	if (rc < 0) {
		if (err.code == FAST_EUSAGE)
			return cli_usage_error("trace", "%s", err.msg);
		return cli_report(&err);
	}
	return write_traffic(&t, in.out_path, sparse, o.source);
}

const char cmd_trace_usage[] =
	"fast trace import --source NAME [--data DIR] [--domain D]\n"
	"                  [--selection topk|top1] [options]\n"
	"fast trace import --routing FILE --token-bytes B [--experts E] [--counts]\n"
	"                  [--axes ltk|tlk] [--token-src FILE] [options]\n"
	"options: [--layers L1,L2|all] [--ep N] [--gpus-per-server G] [--placement P]\n"
	"         [--tokens-at P] [--token-bytes B] [--tokens | --no-dedup]\n"
	"         [--no-combine] [-o FILE] [--sparse]\n"
	"\n"
	"Build per-layer MoE dispatch matrices (and their transposes, the combine\n"
	"phase), labelled layerL/dispatch and layerL/combine, from measured expert\n"
	"routing: the data set of data/moe in the repository, installed with fast\n"
	"(see its README.md for provenance; each source's licence file is there).\n"
	"\n"
	"Sources (experts, top-k, bytes per token = hidden x 2 (bf16)):\n"
	"  deepseek-v2-lite  64, top-6, 4096 B.  --domain intent (default): per-token\n"
	"                    routing, exact dispatch (a token is sent once per GPU;\n"
	"                    --no-dedup: once per expert); law, summary, translation:\n"
	"                    per-sequence counts.  Layers 1..26.  MIT (ESFT code).\n"
	"  olmoe             64, top-8, 4096 B.  Domains arxiv (default), book, c4,\n"
	"                    github, wikipedia, tulu.  Layers 0, 7, 15.  Apache-2.0.\n"
	"  olmoe-sft, olmoe-dpo   as olmoe, domain tulu.\n"
	"  mixtral           8, top-2, 8192 B (Mixtral-8x7B).  Domains as olmoe\n"
	"                    without tulu.  Apache-2.0 (OLMoE repository).\n"
	"  switch128         128, top-1, 1536 B (switch-base-128), one pooled layer.\n"
	"                    MIT (specMoE); small, self-collected: the weakest.\n"
	"A user's routing (--routing FILE, by extension; docs/formats.md, \"Routing\n"
	"files\", gives each layout and the upstream versions it was read from):\n"
	"  .npy    expert ids [tokens, top_k] or [layers, tokens, top_k] (--axes tlk:\n"
	"          [tokens, layers, top_k], vLLM's capture), int8..int64 or uint8..\n"
	"          uint64, little-endian, C order, NPY 1.0-3.0; with --counts per-expert\n"
	"          counts [layers, experts] (EPLB's weight) or [layers, gpus, experts]\n"
	"  .jsonl  Megatron-LM router trace records (layer, top_indices, rank = the\n"
	"          tokens' source GPU) or one token per line {\"experts\", \"layer\",\n"
	"          \"src\"}\n"
	"  .json   counts [layers][experts] or [layers][gpus][experts]\n"
	"  .csv    header layer,src,token,e0..e{k-1} (ids) or layer,src,expert,count\n"
	"Expert ids need --experts E (the count of experts, which ids do not say).\n"
	"Tokens start on the GPU the file gives (rank, src, --token-src), else as\n"
	"--tokens-at says.  Per-expert counts [layers, experts] are split evenly over\n"
	"the sources; all counts are one copy per (token, expert).\n"
	"\n"
	"Per-expert counts carry no per-token routing: each layer's selections are\n"
	"split over the source GPUs in proportion to their tokens (routing assumed\n"
	"independent of the token's GPU), one copy per (token, expert).\n"
	"\n"
	"Options:\n"
	"  --routing FILE      a user's routing instead of --source (above)\n"
	"  --experts E         experts of the model (expert ids); checked against counts\n"
	"  --counts            the .npy holds counts, not expert ids\n"
	"  --axes ltk|tlk      a 3-D .npy of ids: [layers, tokens, top_k] (default) or\n"
	"                      [tokens, layers, top_k]\n"
	"  --token-src FILE    a 1-D .npy of each token's source GPU (ids in .npy)\n"
	"  --data DIR          the data set root.  Without it: $FAST_DATA_DIR if set\n"
	"                      (used as given); else the installed copy\n"
	"                      (PREFIX/share/fast/data/moe, PREFIX as built); else\n"
	"                      BIN/../share/fast/data/moe or BIN/../../data/moe, BIN\n"
	"                      the directory of the fast executable (a checkout's\n"
	"                      data/moe).  Never the current directory.\n"
	"  --layers LIST       comma-separated layers, or all (default)\n"
	"  --selection S       olmoe/mixtral counts: topk (default) or top1\n"
	"  --ep N              GPUs of the expert-parallel group (default 8)\n"
	"  --gpus-per-server G for the description (default min(8, N))\n"
	"  --placement P       experts on GPUs: contiguous (default) | round-robin |\n"
	"                      FILE (a physical-to-logical map per layer as EPLB returns\n"
	"                      it: JSON [layers][slots], or FILE.npy [layers, slots] of\n"
	"                      integers; slots over the GPUs in order; an expert may\n"
	"                      have several replicas) | eplb:R (EPLB's\n"
	"                      hierarchical policy with R redundant experts on each\n"
	"                      layer's own loads)\n"
	"  --replica-choice C  the replica a token uses: spread (default: the (source\n"
	"                      GPU mod replicas)-th, so an expert's load splits evenly\n"
	"                      over its replicas, as EPLB assumes) | local (one on its\n"
	"                      own GPU, else on its own server, else any; the (source\n"
	"                      mod candidates)-th: less scale-out traffic)\n"
	"  --placement-out F   write the maps eplb:R made (the FILE format; int64 .npy\n"
	"                      when F ends in .npy)\n"
	"  --tokens-at P       tokens (data order) on source GPUs: contiguous\n"
	"                      blocks (default) | round-robin\n"
	"  --token-bytes B     bytes per token copy (default per source, above;\n"
	"                      required with --routing)\n"
	"  --tokens            token traffic (per-token routing only: deepseek-v2-lite,\n"
	"                      --domain intent): per layer, groups [src, [GPUs],\n"
	"                      tokens] of the tokens of one source GPU whose experts\n"
	"                      are on the same GPUs, by source then first appearance\n"
	"                      in the data (file version 3).  Its byte view is the\n"
	"                      import without --tokens, byte for byte; `fast traffic\n"
	"                      show` gives the bytes crossing servers once per server\n"
	"  --max-groups N      refuse more than N token groups (default 16777216)\n"
	"  --no-combine        only dispatch matrices\n"
	"  --sparse            write [src, dst, bytes] entries instead of dense rows\n"
	"  -o FILE             output (default - = stdout)\n"
	"\n"
	"Exit codes: 0 ok, 2 usage, 3 bad or unreadable data (file:line, or file:\n"
	"[index] in a .npy), 4 write failure.\n";
