#!/usr/bin/python3
"""The validation table: every published all-to-all / MoE dispatch-combine
measurement in measurements.json against `fast sim`'s prediction with the
presets as shipped.

usage: /usr/bin/python3 results/validation/predict.py [--fast BIN] [--only ID]
           [--set PATH=VALUE] [--without PROFILE] [--sim-args ARGS]
           [--table FILE] [--csv FILE] [--commands FILE] [--keep DIR] [--docs]

measurements.json is {"profiles": {...}, "measurements": [...]}
(README.md): a profile describes hardware or an implementation that no
preset has, each of its values with where it comes from (a source, an
estimate and why, or the calibration row it was computed from).  For each
measurement whose `use` is not "excluded" it
  1. writes the topology: `fast topo show --preset P --servers N --gpus G`
     with the fields of the measurement's `model.profiles` set
     (TIER/FIELD, or implementation/SCHEDULE/MEMBER[/FIELD]: the engine,
     chunks in flight, cost per call of that row's library on that GPU);
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
  4. reports error = predicted / measured - 1, the value the LP lower
     bound's time would give (`fast sim` reports it: what a schedule with
     no step overheads, latencies or chunk dependencies on the same fabric
     would reach), the profiles, and for a row outside +-15% its "miss":
     the mechanism the model lacks (a section of docs/validation.md) and
     its number; a miss without one is listed as UNEXPLAINED.
Every `fast` command it runs is written to --commands (default
results/validation/commands.txt) so each number can be reproduced.  The
table, the CSV and the commands are written only for the whole set as
shipped; with --only, --set (a field over every selected measurement's
profiles, e.g. scale_up/bw_GBps=158.7 or implementation/hier/in_flight=1),
--without (a profile left out) or --sim-args (more `fast sim` options,
e.g. "--chunk 4M") the table goes to stdout alone: what-if runs that test
a mechanism.  --docs prints docs/validation.md's tables from the CSV
without simulating.

Exit: 0 ok, 2 usage, 3 bad measurements.json (the JSON path and what is
wrong), 4 a `fast` command failed.
"""
import argparse, collections, json, os, shlex, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CLASSES = ("nvidia-scaleup", "nvidia-scaleout", "amd-scaleup", "amd-scaleout")
USES = ("calibrate", "validate", "excluded")
CONVERTS = ("busbw", "nvl", "rdma")
TIERS = ("scale_up", "scale_out", "congestion")
SCHEDS = ("default", "fast", "fanout", "nccl", "pxn", "spreadout", "hier")
ORIGINS = ("source", "estimate", "calibrated_on")
WITHIN = 0.15  # the band of issue 29: a row within +-15% needs no mechanism


COMMANDS_HEAD = """\
# Every fast command results/validation/predict.py ran for table.md, in order,
# from the repository root.  $WORK is its folder of topology and traffic files
# (a temporary one; `predict.py --keep DIR` keeps them in DIR).  The token
# traffic files are written by predict.py itself (DeepEP's test routing); a
# "that preset with" line lists the fields a row's profiles set in its topology.
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


ENGINE = {"kind": ("link", "sm", "ce"), "sms": None, "GBps_per_sm": None, "GBps": None}


def check_value(path, v, where):
    """A profile's value at PATH: TIER/FIELD (a number) or
    implementation/SCHEDULE/MEMBER, MEMBER sync ("step" or "rank"), a number,
    or up_engine/FIELD (kind link, sm or ce, or a number)."""
    parts = path.split("/")
    word = None
    if parts[0] == "implementation":
        if len(parts) not in (3, 4) or parts[1] not in SCHEDS or \
                (len(parts) == 4) != (parts[2] == "up_engine"):
            raise BadInput(f"{where}: want implementation/SCHEDULE/MEMBER or "
                           f"implementation/SCHEDULE/up_engine/FIELD, SCHEDULE one of {', '.join(SCHEDS)}")
        if parts[2] == "sync":
            word = ("step", "rank")
        elif len(parts) == 4:
            if parts[3] not in ENGINE:
                raise BadInput(f"{where}: up_engine has {', '.join(ENGINE)}")
            word = ENGINE[parts[3]]
    elif len(parts) != 2 or parts[0] not in TIERS:
        raise BadInput(f"{where}: want TIER/FIELD (TIER one of {', '.join(TIERS)}) "
                       "or implementation/SCHEDULE/MEMBER")
    if word:
        if v not in word:
            raise BadInput(f"{where}/value: must be one of {', '.join(word)} (got {json.dumps(v)[:40]})")
    elif isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
        raise BadInput(f"{where}/value: must be a number >= 0 (got {json.dumps(v)[:40]})")


def check_profiles(profiles, uses, name):
    """Every profile: what it describes, and each value with where it comes
    from: a source, an estimate (why), or the calibration row it was
    computed from (which must be a row of use "calibrate")."""
    if not isinstance(profiles, dict):
        raise BadInput(f"{name}: /profiles: must be an object")
    for pname, prof in profiles.items():
        p = f"{name}: /profiles/{pname}"
        need(prof, "what", str, p)
        sets = need(prof, "set", dict, p)
        if not sets:
            raise BadInput(f"{p}/set: must not be empty")
        for path, e in sets.items():
            q = f"{p}/set/{path}"
            if not isinstance(e, dict) or "value" not in e:
                raise BadInput(f"{q}: must be an object with a value")
            check_value(path, e["value"], q)
            origin = [k for k in ORIGINS if k in e]
            if len(origin) != 1:
                raise BadInput(f"{q}: needs exactly one of {', '.join(ORIGINS)}")
            if origin[0] == "calibrated_on":
                c = need(e, "calibrated_on", dict, q)
                rid = need(c, "id", str, q + "/calibrated_on")
                need(c, "how", str, q + "/calibrated_on")
                if uses.get(rid) != "calibrate":
                    raise BadInput(f"{q}/calibrated_on/id: '{rid}' is not a measurement of use calibrate")
            else:
                need(e, origin[0], str, q)


def check(doc, name):
    """Validate the fields predict.py uses; raise BadInput naming the path."""
    if not isinstance(doc, dict) or not isinstance(doc.get("measurements"), list) \
            or not doc["measurements"]:
        raise BadInput(f"{name}: must be an object with a non-empty list /measurements")
    ms, seen, uses = doc["measurements"], set(), {}
    for i, m in enumerate(ms):
        p = f"{name}: /measurements/{i}"
        mid = need(m, "id", str, p)
        if mid in seen:
            raise BadInput(f"{p}/id: duplicate id '{mid}'")
        seen.add(mid)
        uses[mid] = m.get("use")
    profiles = doc.get("profiles", {})
    check_profiles(profiles, uses, name)
    for i, m in enumerate(ms):
        p = f"{name}: /measurements/{i}"
        if need(m, "class", str, p) not in CLASSES:
            raise BadInput(f"{p}/class: must be one of {', '.join(CLASSES)}")
        if need(m, "use", str, p) not in USES:
            raise BadInput(f"{p}/use: must be one of {', '.join(USES)}")
        if m["use"] == "calibrate":
            need(m, "calibrates", str, p)
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
        if "miss" in m:
            miss = need(m, "miss", dict, p)
            need(miss, "mechanism", str, p + "/miss")
            need(miss, "why", str, p + "/miss")
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
        if "override" in mo:
            raise BadInput(f"{q}/override: replaced by profiles (README.md)")
        names = mo.get("profiles", [])
        if not isinstance(names, list) or not all(isinstance(x, str) for x in names):
            raise BadInput(f"{q}/profiles: must be a list of profile names")
        paths = set()
        for pn in names:
            if pn not in profiles:
                raise BadInput(f"{q}/profiles: no profile '{pn}'")
            twice = paths & set(profiles[pn]["set"])
            if twice:
                raise BadInput(f"{q}/profiles: '{pn}' sets {sorted(twice)[0]} again")
            paths |= set(profiles[pn]["set"])
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


def put(topo, path, value, preset):
    """Set one field of a topology: TIER/FIELD (which the preset must have)
    or implementation/SCHEDULE/MEMBER[/FIELD] (the entry made when the
    preset has none: a schedule's entry holds only what differs from the
    default; an up_engine's fields join those the preset has)."""
    parts = path.split("/")
    if parts[0] == "implementation":
        entry = topo.setdefault("implementation", {"default": {}}).setdefault(parts[1], {})
        if len(parts) == 4:
            entry.setdefault("up_engine", {})[parts[3]] = value
        else:
            entry[parts[2]] = value
        return
    tier, field = parts
    if tier not in topo or field not in topo[tier]:
        raise BadInput(f"{path}: no such field in the {preset} preset")
    topo[tier][field] = value


def topology(fast, mo, work, mid, profiles, extra):
    """The preset with the measurement's profiles applied, then `extra`'s
    (--set): a topology file."""
    args = ["topo", "show", "--preset", mo["preset"], "--servers", str(mo["servers"]),
            "--gpus", str(mo["gpus"])]
    topo = json.loads(fast.run(args, f"{mid}: preset {mo['preset']}"))
    fields = {}
    for pn in mo.get("profiles", []):
        fields.update({k: e["value"] for k, e in profiles[pn]["set"].items()})
    fields.update(extra)
    for key, value in fields.items():
        put(topo, key, value, mo["preset"])
    if fields:
        names = mo.get("profiles", []) + (["--set"] if extra else [])
        topo["name"] = mo["preset"] + "-" + mid
        topo["source"] = (mo["preset"] + " preset with the profiles " + ", ".join(names)
                          + " of results/validation/measurements.json")
        if "implementation" in topo and any(k.startswith("implementation/") for k in fields):
            topo["implementation"]["source"] = (
                "the preset's, with the implementation fields of the profiles "
                + ", ".join(names) + " (results/validation/measurements.json)")
    path = os.path.join(work, mid + ".topo.json")
    with open(path, "w") as f:
        json.dump(topo, f, indent=1)
    if fields:
        fast.log.append(f"# {mid}: that preset with " + ", ".join(
            f"{k} = {json.dumps(v)}" for k, v in fields.items()) + f" -> $WORK/{mid}.topo.json")
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
    mo, mid = dict(m["model"]), m["id"]
    mo["profiles"] = [p for p in mo.get("profiles", []) if p not in opts.without]
    topo = topology(fast, mo, work, mid, opts.profiles, opts.set)
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
    ap.add_argument("--set", action="append", default=[], metavar="PATH=VALUE",
                    help="a topology field for every selected measurement, over its "
                    "profiles: TIER/FIELD=NUMBER or implementation/SCHEDULE/MEMBER=JSON "
                    "(repeatable)")
    ap.add_argument("--without", action="append", default=[], metavar="PROFILE",
                    help="simulate without this profile (repeatable)")
    ap.add_argument("--sim-args", default="", help="more fast sim options, e.g. '--chunk 4M'")
    ap.add_argument("--keep", help="keep the topology and traffic files in this folder")
    ap.add_argument("--docs", action="store_true",
                    help="print docs/validation.md's tables from --csv and the measurements "
                    "(no simulation)")
    a = ap.parse_args()
    sets = {}
    for kv in a.set:
        key, eq, value = kv.partition("=")
        try:
            sets[key] = json.loads(value)
            check_value(key, sets[key], "--set " + key)
        except (ValueError, BadInput) as e:
            ap.error(f"--set {kv}: want TIER/FIELD=NUMBER or implementation/SCHEDULE/MEMBER=JSON, "
                     f"e.g. scale_up/bw_GBps=158.7 ({e})")
    a.set, a.sim_args = sets, shlex.split(a.sim_args)
    if not os.access(a.fast, os.X_OK):
        ap.error(f"{a.fast}: not an executable (build with make -s -j2 all)")
    try:
        with open(a.measurements) as f:
            doc = json.load(f)
        shown = os.path.relpath(a.measurements, ROOT)
        check(doc, a.measurements if shown.startswith("..") else shown)
    except (OSError, ValueError, BadInput) as e:
        print(f"predict.py: {e}", file=sys.stderr)
        return 3
    ms, a.profiles = doc["measurements"], doc.get("profiles", {})
    if a.docs:
        return docs_tables(ms, a.csv)
    known = {m["id"] for m in ms}
    for o in a.only:
        if o not in known:
            ap.error(f"--only {o}: no such measurement id")
    for o in a.without:
        if o not in a.profiles:
            ap.error(f"--without {o}: no such profile")
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


def miss_text(m, err, short=False):
    """A row outside the band names its mechanism (the row's "miss": a
    section of docs/validation.md and why, with its number); one without
    says so, and a row inside the band needs none."""
    if abs(err) <= WITHIN:
        return ""
    if "miss" not in m:
        return "UNEXPLAINED"
    return m["miss"]["mechanism"] + ("" if short else ": " + m["miss"]["why"])


def write_outputs(a, rows, log):
    head = ("| id | class | use | measured | predicted | error | algo | at LP bound | "
            "other schedules | profiles | a miss's mechanism |\n"
            "|---|---|---|---:|---:|---:|---|---:|---|---|---|\n")
    lines, csv = [], ["id,class,use,unit,measured,algo,predicted,error,sim_time_s,counted,"
                      "at_bound,at_bound_error,other,profiles"]
    within = unexplained = 0
    for m, algos, res in rows:
        mo, meas = m["model"], m["measured"]
        v, t, counted, vb = res[mo["algo"]]
        eb = vb / meas["value"] - 1
        err = v / meas["value"] - 1
        within += abs(err) <= WITHIN
        why = miss_text(m, err)
        unexplained += why == "UNEXPLAINED"
        if abs(err) <= WITHIN and "miss" in m:
            print(f"predict.py: {m['id']}: within the band, its 'miss' is stale", file=sys.stderr)
        other = "; ".join(f"{al} {res[al][0]:.1f} ({res[al][0] / meas['value'] - 1:+.1%})"
                          for al in algos[1:])
        prof = ", ".join(p for p in mo.get("profiles", []) if p not in a.without)
        lines.append(f"| {m['id']} | {m['class']} | {m['use']} | {meas['value']:g} {meas['unit']} | "
                     f"{v:.1f} | {err:+.1%} | {mo['algo']} | {vb:.1f} ({eb:+.1%}) | {other} | "
                     f"{prof} | {why} |")
        csv.append(f"{m['id']},{m['class']},{m['use']},{meas['unit']},{meas['value']},{mo['algo']},"
                   f"{v:.3f},{err:.6f},{t:.9g},{counted},{vb:.3f},{eb:.6f},{other.replace(',', ' ')},"
                   f"{prof.replace(', ', ' ')}")
    text = head + "\n".join(lines) + "\n"
    sys.stdout.write(text)
    print(f"predict.py: {within} of {len(rows)} within +-{WITHIN:.0%}; {unexplained} misses "
          "without a mechanism", file=sys.stderr)
    if not (a.only or a.set or a.sim_args or a.without):
        for path, body in ((a.table, text), (a.csv, "\n".join(csv) + "\n"),
                           (a.commands, COMMANDS_HEAD + "\n".join(log) + "\n")):
            tmp = path + ".tmp"
            with open(tmp, "w") as f:
                f.write(body)
            os.replace(tmp, path)


HEADINGS = {"nvidia-scaleup": "NVIDIA, one NVLink domain", "nvidia-scaleout": "NVIDIA, across servers",
            "amd-scaleup": "AMD, one server", "amd-scaleout": "AMD, across servers"}


def docs_tables(ms, csv_path):
    """docs/validation.md's tables, one per class: the rows of the CSV that
    predict.py wrote, with each measurement's source, hardware and library."""
    import csv
    try:
        with open(csv_path) as f:
            rows = {r["id"]: r for r in csv.DictReader(f)}
    except OSError as e:
        print(f"predict.py: {e}", file=sys.stderr)
        return 3
    for cls in CLASSES:
        print(f"### {HEADINGS[cls]}\n")
        print("| measurement | GPUs | library | use | measured | predicted | error | at LP bound "
              "| profiles | miss |\n|---|---|---|---|---:|---:|---:|---:|---|---|")
        for m in ms:
            r = rows.get(m["id"])
            if m["class"] != cls or r is None:
                continue
            hw, meas = m["hardware"], m["measured"]
            lib = m["library"].split(",")[0].split(" (")[0].replace(" normal kernels", "")
            err = float(r["error"])
            print(f"| [{m['id']}]({m['source']['url']}) | {hw['servers']} x {hw['gpus_per_server']} "
                  f"{hw['gpu'].split(' (')[0].split(',')[0]} | {lib} | {m['use']} | {meas['value']:g} {meas['unit']} | "
                  f"{float(r['predicted']):.1f} | {err:+.1%} | {float(r['at_bound']):.1f} | "
                  f"{r['profiles'].replace(' ', ', ')} | {miss_text(m, err, short=True)} |")
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
