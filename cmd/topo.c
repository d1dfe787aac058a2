/*
 * topo.c - `fast topo show` prints a topology (a file or a preset) in its
 * normalised JSON form, every field explicit; `fast topo list` lists the
 * presets and the sources of their numbers.
 */
#include <string.h>

#include "builtin.h"
#include "cli.h"
#include "lib/base/json.h"

const char cmd_topo_usage[] =
	"fast topo show|list [options]\n"
	"\n"
	"fast topo show [FILE] | --preset NAME [--servers N] [--gpus G]\n"
	"               [--nics K] [--nic S:K=F ...] [-o FILE]\n"
	"fast topo list [--json]\n"
	"\n"
	"show   print the normalised topology JSON (every field explicit, defaults\n"
	"       filled in) of a topology file or a preset\n"
	"list   list the presets with the sources of their numbers\n"
	"\n"
	"Options:\n"
	"  --topo FILE        topology file (same as the FILE argument)\n"
	"  --preset NAME      h200, h100, mi300x, mi300x-100g\n"
	"  --servers N        servers of a preset (default 4)\n"
	"  --gpus G           GPUs per server of a preset (default 8)\n"
	"  --nics K           NICs per server (default: one per GPU); local GPU l\n"
	"                     uses NIC floor(l K / G) when K < G, NICs\n"
	"                     [ceil(l K / G), ceil((l + 1) K / G)) when K > G\n"
	"  --nic S:K=F        server S's NIC K runs at F (0..1) of its rate, 0 = down\n"
	"                     (repeatable; every command that takes --preset/--topo)\n"
	"  --max-gpus N       refuse more than N GPUs in total (default 16384)\n"
	"  -o FILE            write to FILE (- = stdout, the default)\n";

static int topo_show(int argc, char **argv)
{
	struct cli_inputs in;
	struct cli_scan s;
	int end;
	struct cli_out o;
	struct fast_topo t;
	struct fast_err err;
	int rc;

	cli_inputs_init(&in);
	for (cli_begin(&s, argc, argv, "topo"); cli_more(&s);) {
		if (cli_inputs_option(&s, &in))
			continue;
		return cli_unknown(&s);
	}
	if ((end = cli_end(&s, true)) >= 0)
		return end;
	if (s.npos > 1)
		return cli_usage_error("topo", "show takes one FILE (got %d)", s.npos);
	if (s.npos == 1) {
		if (in.topo_path)
			return cli_usage_error("topo", "give the topology as FILE or --topo, not both");
		in.topo_path = s.pos[0];
	}
	if (!in.topo_path && !in.preset)
		return cli_usage_error("topo", "show needs a topology FILE or --preset NAME");
	if ((rc = cli_load_topo(&in, &t)) != 0)
		return rc;
	if ((rc = cli_out_open(&o, in.out_path)) != 0)
		return rc;
	if (fast_topo_write(&t, o.f, &err) < 0)
		return cli_out_fail(&o, &err);
	return cli_out_commit(&o);
}

static void list_json(void)
{
	const char *const *names = fast_topo_preset_names();

	fputs("{\n  \"presets\": [", stdout);
	for (size_t i = 0; names[i]; i++) {
		struct fast_topo t;
		if (fast_topo_preset(names[i], 0, 0, NULL, &t, NULL) < 0)
			continue;
		fputs(i ? ",\n    {\"name\": " : "\n    {\"name\": ", stdout);
		fast_json_put_string(stdout, t.name);
		fputs(", \"source\": ", stdout);
		fast_json_put_string(stdout, t.source);
		fputc('}', stdout);
	}
	fputs("\n  ]\n}\n", stdout);
}

static void list_human(void)
{
	const char *const *names = fast_topo_preset_names();

	for (size_t i = 0; names[i]; i++) {
		struct fast_topo t;
		if (fast_topo_preset(names[i], 0, 0, NULL, &t, NULL) < 0)
			continue;
		printf("%-12s %u x %u GPUs; scale-up %s %g GB/s per %s x %.3f, alpha %g us; "
		       "scale-out %g GB/s per NIC x %.3f, alpha %g us\n",
		       t.name, t.servers, t.gpus, t.up_kind == FAST_UP_MESH ? "mesh" : "switch",
		       t.up.bw_GBps, t.up_kind == FAST_UP_MESH ? "link" : "GPU", t.up.efficiency,
		       t.up.latency_us, t.out.bw_GBps, t.out.efficiency, t.out.latency_us);
		printf("             source: %s\n", t.source);
	}
}

static int topo_list(int argc, char **argv)
{
	struct cli_scan s;
	int end;
	bool json = false;

	for (cli_begin(&s, argc, argv, "topo"); cli_more(&s);) {
		if (cli_flag(&s, "--json")) {
			json = true;
			continue;
		}
		return cli_unknown(&s);
	}
	if ((end = cli_end(&s, true)) >= 0)
		return end;
	if (s.npos)
		return cli_usage_error("topo", "list takes no arguments (got '%.40s')", s.pos[0]);
	if (json)
		list_json();
	else
		list_human();
	return 0;
}

int cmd_topo(int argc, char **argv)
{
	if (argc < 2)
		return cli_usage_error("topo", "missing subcommand: show or list");
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		fputs(cmd_topo_usage, stdout);
		return 0;
	}
	if (strcmp(argv[1], "show") == 0)
		return topo_show(argc - 1, argv + 1);
	if (strcmp(argv[1], "list") == 0)
		return topo_list(argc - 1, argv + 1);
	return cli_usage_error("topo", "unknown subcommand '%.40s' (use show or list)", argv[1]);
}
