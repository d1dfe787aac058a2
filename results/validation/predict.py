#!/usr/bin/python3
"""The validation table: every published all-to-all / MoE dispatch-combine
measurement in measurements.json against `fast sim`'s prediction with the
presets as shipped.

usage: /usr/bin/python3 results/validation/predict.py [--fast BIN] [--only ID]
           [--set TIER/FIELD=VALUE] [--sim-args ARGS] [--table FILE] [--csv FILE]
           [--commands FILE] [--keep DIR]

For each measurement whose `use` is not "excluded" it
  1. writes the topology: `fast topo show --preset P --servers N --gpus G`
     with the measurement's `model.override` fields replaced (a rate the
     preset does not have, e.g. H800's NVLink; README.md says which);
  2. writes the traffic: nccl-tests' alltoall of `size.bytes` per GPU
     (`fast gen --pattern uniform`, S/n to every other rank), or the token
     groups of DeepEP's test routing (`tokens`: every rank draws
     |N(0,1)| + 1 scores over the experts, keeps its top-min(nodes, 4)
     nodes by their best expert, then its top-k experts; a token goes once
     to each GPU holding one of them);
  3. runs `fast sim --topo T --traffic X --algo A --json` (the dispatch or
     the combine matrix of a token file) and converts the simulated time
     into the measurement's unit (`model.convert`):
       busbw      S / t * (n - 1) / n      (nccl-tests' alltoall busbw)
       nvl        GPU 0's received tokens (its own included) * bytes / t
       rdma       GPU 0's (token, destination server) pairs, its own server
                  included, * bytes / t   (DeepEP's "algo" RDMA figure)
  4. reports error = predicted / measured - 1, and the value and error the
     LP lower bound's time would give (`fast sim` reports it): what a
     schedule with no step overheads, latencies or chunk dependencies on
     the same fabric would reach.
Every `fast` command it runs is written to --commands (default
results/validation/commands.txt) so each number can be reproduced.  The
table, the CSV and the commands are written only for the whole set as
shipped; with --only, --set (a topology field over every selected
measurement's, e.g. scale_up/bw_GBps=158.7) or --sim-args (more `fast sim`
options, e.g. "--chunk 4M") the table goes to stdout alone: what-if runs
that test a mechanism.

Exit: 0 ok, 2 usage, 3 bad measurements.json (the JSON path and what is
wrong), 4 a `fast` command failed.
"""
import argparse, collections, json, os, shlex, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CLASSES = ("nvidia-scaleup", "nvidia-scaleout", "amd-scaleup", "amd-scaleout")
USES = ("calibrate", "validate", "excluded")
CONVERTS = ("busbw", "nvl", "rdma")


COMMANDS_HEAD = """\
# Every fast command results/validation/predict.py ran for table.md, in order,
# from the repository root.  $WORK is its folder of topology and traffic files
# (a temporary one; `predict.py --keep DIR` keeps them in DIR).  The token
# traffic files are written by predict.py itself (DeepEP's test routing).
"""


class BadInput(Exception):
    pass


def need(obj, key, kind, path):
    if not isinstance(obj, dict) or key not in obj:
        raise BadInput(f"{path}/{key}: missing")
    v = obj[key]
    if kind is float and isinstance(v, int) and not isinstance(v, bool):
        v = float(v)
    if not isinstance(v, kind) or isinstance(v, bool):
        raise BadInput(f"{path}/{key}: must be {kind.__name__} (got {json.dumps(v)[:40]})")
    return v


def check(ms, name):
    """Validate the fields predict.py uses; raise BadInput naming the path."""
    if not isinstance(ms, list) or not ms:
        raise BadInput(f"{name}: must be a non-empty list of measurements")
    seen = set()
    for i, m in enumerate(ms):
        p = f"{name}: /{i}"
        mid = need(m, "id", str, p)
        if mid in seen:
            raise BadInput(f"{p}/id: duplicate id '{mid}'")
        seen.add(mid)
        if need(m, "class", str, p) not in CLASSES:
            raise BadInput(f"{p}/class: must be one of {', '.join(CLASSES)}")
        if need(m, "use", str, p) not in USES:
            raise BadInput(f"{p}/use: must be one of {', '.join(USES)}")
        for k in ("source", "hardware", "size", "measured"):
            need(m, k, dict, p)
        need(m["source"], "url", str, p + "/source")
        meas = m["measured"]
        if need(meas, "value", float, p + "/measured") <= 0:
            raise BadInput(f"{p}/measured/value: must be > 0")
        need(meas, "unit", str, p + "/measured")
        if m["use"] == "excluded":
            need(m, "excluded_because", str, p)
            continue
        mo = need(m, "model", dict, p)
        q = p + "/model"
        need(mo, "preset", str, q)
        for k in ("servers", "gpus"):
            if need(mo, k, int, q) < 1:
                raise BadInput(f"{q}/{k}: must be >= 1")
        need(mo, "algo", str, q)
        also = mo.get("also", [])
        if not isinstance(also, list) or not all(isinstance(x, str) for x in also):
            raise BadInput(f"{q}/also: must be a list of algorithm names")
        if need(mo, "convert", str, q) not in CONVERTS:
            raise BadInput(f"{q}/convert: must be one of {', '.join(CONVERTS)}")
        ov = mo.get("override", {})
        if not isinstance(ov, dict):
            raise BadInput(f"{q}/override: must be an object")
        for k, v in ov.items():
            if k.count("/") != 1 or isinstance(v, bool) or not isinstance(v, (int, float)):
                raise BadInput(f"{q}/override/{k}: must be 'tier/field': number")
        if mo["convert"] == "busbw":
            need(m["size"], "bytes", int, p + "/size")
        else:
            t = need(mo, "tokens", dict, q)
            for k in ("tokens", "experts", "topk", "bytes"):
                if need(t, k, int, q + "/tokens") < 1:
                    raise BadInput(f"{q}/tokens/{k}: must be >= 1")
            if need(t, "phase", str, q + "/tokens") not in ("dispatch", "combine"):
                raise BadInput(f"{q}/tokens/phase: must be dispatch or combine")
            ng = mo["servers"] * mo["gpus"]
            if t["experts"] % ng:
                raise BadInput(f"{q}/tokens/experts: {t['experts']} not a multiple of {ng} GPUs")


class Fast:
    """Runs the fast binary, logging every command line."""

    def __init__(self, binary, log, work):
        self.binary, self.log, self.work = binary, log, work

    def run(self, args, why):
        cmd = [self.binary] + args
        shown = " ".join(shlex.quote(os.path.relpath(a, ROOT) if a == self.binary else a)
                         for a in cmd).replace(self.work, "$WORK")
        self.log.append(f"# {why}\n{shown}")
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode:
            sys.stderr.write(r.stderr)
            raise RuntimeError(f"fast {args[0]} failed (exit {r.returncode})")
        return r.stdout


def topology(fast, mo, work, mid, extra):
    """The preset with the measurement's override fields, then `extra`'s
    (--set): a topology file."""
    args = ["topo", "show", "--preset", mo["preset"], "--servers", str(mo["servers"]),
            "--gpus", str(mo["gpus"])]
    topo = json.loads(fast.run(args, f"{mid}: preset {mo['preset']}"))
    fields = dict(mo.get("override", {}), **extra)
    for key, value in sorted(fields.items()):
        tier, field = key.split("/")
        if tier not in topo or field not in topo[tier]:
            raise BadInput(f"model/override/{key}: no such field in the {mo['preset']} preset")
        topo[tier][field] = value
    if fields:
        topo["name"] = mo["preset"] + "-" + mid
        topo["source"] = topo["source"] + "; validation override: " + ", ".join(
            f"{k} = {v}" for k, v in sorted(fields.items()))
    path = os.path.join(work, mid + ".topo.json")
    with open(path, "w") as f:
        json.dump(topo, f, indent=1)
    return path


def route(ranks, gpn, tokens, experts, topk, seed):
    """DeepEP's test routing (tests/test_internode.py): per rank, per token,
    the sorted destination GPUs.  Returns a list (per rank) of lists of tuples."""
    import numpy as np
    nodes = ranks // gpn
    groups = min(nodes, 4)
    per_rank = []
    for r in range(ranks):
        rng = np.random.default_rng(seed * 1000003 + r)
        s = np.abs(rng.standard_normal((tokens, experts), dtype=np.float32)) + 1
        if groups < nodes:
            best = s.reshape(tokens, nodes, -1).max(axis=2)
            keep = np.argpartition(-best, groups - 1, axis=1)[:, :groups]
            mask = np.zeros((tokens, nodes), bool)
            np.put_along_axis(mask, keep, True, 1)
            s = s * np.repeat(mask, experts // nodes, axis=1)
        chosen = np.argpartition(-s, topk - 1, axis=1)[:, :topk]
        gpus = chosen // (experts // ranks)
        per_rank.append([tuple(sorted(set(row))) for row in gpus.tolist()])
    return per_rank


def token_traffic(mo, work, cache):
    """Token-group traffic file of DeepEP's routing, dispatch then combine
    (matrix 0, 1), and GPU 0's token counts: (path, recv_tokens, rdma_pairs)."""
    t = mo["tokens"]
    ng, gpn = mo["servers"] * mo["gpus"], mo["gpus"]
    key = (ng, gpn, t["tokens"], t["experts"], t["topk"], t.get("seed", 1),
           t["dispatch_bytes"], t["combine_bytes"])
    if key in cache:
        return cache[key]
    dests = route(ng, gpn, t["tokens"], t["experts"], t["topk"], t.get("seed", 1))
    groups = []
    for src, rows in enumerate(dests):
        counts = collections.OrderedDict()
        for d in rows:
            counts[d] = counts.get(d, 0) + 1
        groups += [[src, list(d), n] for d, n in counts.items()]
    recv0 = sum(n for _, d, n in groups if 0 in d)
    rdma0 = sum(len({g // gpn for g in d}) for d in dests[0])
    name = "tokens-{}x{}-t{}-e{}-k{}.json".format(ng // gpn, gpn, t["tokens"], t["experts"], t["topk"])
    path = os.path.join(work, name)
    src = ("DeepEP test routing (results/validation/predict.py): tokens=%d experts=%d topk=%d "
           "topk_groups=min(nodes,4) seed=%d" % (t["tokens"], t["experts"], t["topk"], t.get("seed", 1)))
    doc = {"version": 3, "gpus_total": ng, "source": src, "matrices": [
        {"label": "dispatch", "kind": "dispatch", "token_bytes": t["dispatch_bytes"], "groups": groups},
        {"label": "combine", "kind": "combine", "token_bytes": t["combine_bytes"], "groups": groups}]}
    with open(path, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
    cache[key] = (path, recv0, rdma0)
    return cache[key]


def nccl_traffic(fast, topo, m, work, mid):
    """nccl-tests' alltoall: S/n bytes from every rank to every other."""
    mo = m["model"]
    n = mo["servers"] * mo["gpus"]
    s = m["size"]["bytes"]
    if s % n or (s // n) % 512:
        raise BadInput(f"{mid}: size/bytes {s} is not n x a multiple of 512 (n = {n})")
    path = os.path.join(work, mid + ".traffic.json")
    fast.run(["gen", "--topo", topo, "--pattern", "uniform", "--mean-bytes",
              str(s // n * (n - 1)), "-o", path], f"{mid}: {s} B per GPU, {s // n} B per peer")
    return path


def simulate(fast, topo, traffic, algo, matrix, mid, sim_args):
    args = ["sim", "--topo", topo, "--traffic", traffic, "--algo", algo, "--json"] + sim_args
    if matrix is not None:
        args += ["--matrix", str(matrix)]
    plan = json.loads(fast.run(args, f"{mid}: {algo}"))["plans"][0]
    return plan["time_s"], plan["lp_s"]  # the bandwidth (LP) bound; bound_s adds the latency floor


def predict(fast, m, work, cache, algo, opts):
    """(predicted value in the measurement's unit, simulated seconds, what was
    counted, the value the LP bound's time would give)."""
    mo, mid = m["model"], m["id"]
    topo = topology(fast, mo, work, mid, opts.set)
    n = mo["servers"] * mo["gpus"]
    if mo["convert"] == "busbw":
        t, b = simulate(fast, topo, nccl_traffic(fast, topo, m, work, mid), algo, None, mid, opts.sim_args)
        s = m["size"]["bytes"] * (n - 1) / n / 1e9
        return s / t, t, f"{m['size']['bytes']} B x {n - 1}/{n}", s / b
    tk = mo["tokens"]
    path, recv0, rdma0 = token_traffic(mo, work, cache)
    phase = tk["phase"]
    t, b = simulate(fast, topo, path, algo, 0 if phase == "dispatch" else 1, mid, opts.sim_args)
    tokens = recv0 if mo["convert"] == "nvl" else rdma0
    s = tokens * tk["bytes"] / 1e9
    return s / t, t, f"{tokens} tokens x {tk['bytes']} B", s / b


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fast", default=os.path.join(ROOT, "build", "bin", "fast"))
    ap.add_argument("--measurements", default=os.path.join(HERE, "measurements.json"))
    ap.add_argument("--only", action="append", default=[], help="measurement id (repeatable)")
    ap.add_argument("--table", default=os.path.join(HERE, "table.md"))
    ap.add_argument("--csv", default=os.path.join(HERE, "predictions.csv"))
    ap.add_argument("--commands", default=os.path.join(HERE, "commands.txt"))
    ap.add_argument("--set", action="append", default=[], metavar="TIER/FIELD=VALUE",
                    help="a topology field for every selected measurement (repeatable)")
    ap.add_argument("--sim-args", default="", help="more fast sim options, e.g. '--chunk 4M'")
    ap.add_argument("--keep", help="keep the topology and traffic files in this folder")
    a = ap.parse_args()
    sets = {}
    for kv in a.set:
        key, eq, value = kv.partition("=")
        try:
            sets[key] = float(value)
        except ValueError:
            eq = ""
        if not eq or key.count("/") != 1:
            ap.error(f"--set {kv}: want TIER/FIELD=NUMBER, e.g. scale_up/bw_GBps=158.7")
    a.set, a.sim_args = sets, shlex.split(a.sim_args)
    if not os.access(a.fast, os.X_OK):
        ap.error(f"{a.fast}: not an executable (build with make -s -j2 all)")
    try:
        with open(a.measurements) as f:
            ms = json.load(f)
        shown = os.path.relpath(a.measurements, ROOT)
        check(ms, a.measurements if shown.startswith("..") else shown)
    except (OSError, ValueError, BadInput) as e:
        print(f"predict.py: {e}", file=sys.stderr)
        return 3
    known = {m["id"] for m in ms}
    for o in a.only:
        if o not in known:
            ap.error(f"--only {o}: no such measurement id")
    rows, log, cache = [], [], {}
    work = os.path.abspath(a.keep or tempfile.mkdtemp(prefix="fast-validation-"))
    os.makedirs(work, exist_ok=True)
    fast = Fast(a.fast, log, work)
    try:
        for m in ms:
            if m["use"] == "excluded" or (a.only and m["id"] not in a.only):
                continue
            mo = m["model"]
            algos = [mo["algo"]] + mo.get("also", [])
            res = {al: predict(fast, m, work, cache, al, a) for al in algos}
            rows.append((m, algos, res))
            v, t = res[mo["algo"]][:2]
            print(f"{m['id']}: measured {m['measured']['value']:g}, predicted {v:.1f} "
                  f"({mo['algo']}, {t * 1e6:.1f} us)", file=sys.stderr)
    except RuntimeError as e:
        print(f"predict.py: {e}", file=sys.stderr)
        return 4
    except BadInput as e:
        print(f"predict.py: {e}", file=sys.stderr)
        return 3
    write_outputs(a, rows, log)
    return 0


def write_outputs(a, rows, log):
    head = ("| id | class | use | measured | predicted | error | algo | at LP bound | other schedules |\n"
            "|---|---|---|---:|---:|---:|---|---:|---|\n")
    lines, csv = [], ["id,class,use,unit,measured,algo,predicted,error,sim_time_s,counted,"
                      "at_bound,at_bound_error,other"]
    for m, algos, res in rows:
        mo, meas = m["model"], m["measured"]
        v, t, counted, vb = res[mo["algo"]]
        eb = vb / meas["value"] - 1
        err = v / meas["value"] - 1
        other = "; ".join(f"{al} {res[al][0]:.1f} ({res[al][0] / meas['value'] - 1:+.1%})"
                          for al in algos[1:])
        lines.append(f"| {m['id']} | {m['class']} | {m['use']} | {meas['value']:g} {meas['unit']} | "
                     f"{v:.1f} | {err:+.1%} | {mo['algo']} | {vb:.1f} ({eb:+.1%}) | {other} |")
        csv.append(f"{m['id']},{m['class']},{m['use']},{meas['unit']},{meas['value']},{mo['algo']},"
                   f"{v:.3f},{err:.6f},{t:.9g},{counted},{vb:.3f},{eb:.6f},{other.replace(',', ' ')}")
    text = head + "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if not (a.only or a.set or a.sim_args):
        for path, body in ((a.table, text), (a.csv, "\n".join(csv) + "\n"),
                           (a.commands, COMMANDS_HEAD + "\n".join(log) + "\n")):
            tmp = path + ".tmp"
            with open(tmp, "w") as f:
                f.write(body)
            os.replace(tmp, path)


if __name__ == "__main__":
    sys.exit(main())
