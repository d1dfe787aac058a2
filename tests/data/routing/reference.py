#!/usr/bin/env python3
"""An independent computation of the traffic `fast trace import --routing`
must produce, for every sample file of tests/data/routing, checked against
the binary byte for byte (standard library only; it shares no code with
the importer: its own .npy, JSON-lines and CSV readers, its own layouts).

    python3 tests/data/routing/reference.py path/to/fast

For each file and each layout (EP 4 on 2 x 2 and EP 16 on 4 x 4, where 8
experts get 2 replicas; experts contiguous and round-robin; tokens
contiguous and round-robin where the file does not give sources) it
compares the byte dispatch (dedup per GPU, and --no-dedup), its combine
(the transpose) and the token groups (--tokens).  Prints one line per
file and "ok N comparisons"; exits 1 on the first difference.  A replicated
--placement FILE (both --replica-choice rules, JSON and the sample .npy)
is checked the same way, with each matrix's compute_pairs (the no-dedup
columns).  --placement eplb:R on every sample file: the map it writes
(--placement-out, JSON and .npy) is checked to be a placement (every
expert placed, as many slots on each GPU, E + R in all), the traffic is
recomputed from that map by this file's own rule, and the balance EPLB
claims is checked against this file's own loads (below, eplb_maps).
"""
import csv
import json
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
E, B = 8, 16


def read_npy(path):
    raw = open(path, "rb").read()
    assert raw[:6] == b"\x93NUMPY"
    major = raw[6]
    if major == 1:
        (hl,), pre = struct.unpack("<H", raw[8:10]), 10
    else:
        (hl,), pre = struct.unpack("<I", raw[8:12]), 12
    hdr = eval(raw[pre:pre + hl].decode("utf8"), {})  # our own sample files
    code = hdr["descr"]
    fmt = {"i1": "b", "u1": "B", "i2": "h", "u2": "H", "i4": "i", "u4": "I", "i8": "q",
           "u8": "Q"}[code[1:]]
    n = 1
    for d in hdr["shape"]:
        n *= d
    return list(hdr["shape"]), list(struct.unpack("<" + fmt * n, raw[pre + hl:]))


def ids_file(path, tokens_first=False):
    """{layer: [(src or None, [ids])]} in file order."""
    layers = {}
    if path.endswith(".npy"):
        shape, v = read_npy(path)
        if len(shape) == 2:
            shape, tokens_first = [1] + shape, False
        if tokens_first:
            T, L, K = shape
            at = lambda l, t: v[(t * L + l) * K:(t * L + l + 1) * K]
        else:
            L, T, K = shape
            at = lambda l, t: v[(l * T + t) * K:(l * T + t + 1) * K]
        for l in range(L):
            layers[l] = [(None, at(l, t)) for t in range(T)]
    elif path.endswith(".jsonl"):
        for line in open(path):
            o = json.loads(line)
            if "mtp_idx" in o or o.get("block", "decoder") != "decoder":
                continue
            if "top_indices" in o:
                for row in o["top_indices"]:
                    layers.setdefault(o["layer"], []).append((o.get("rank"), row))
            else:
                layers.setdefault(o.get("layer", 0), []).append((o.get("src"), o["experts"]))
    else:
        for row in csv.DictReader(open(path)):
            k = sorted(c for c in row if c.startswith("e") and c[1:].isdigit())
            src = int(row["src"]) if "src" in row else None
            layers.setdefault(int(row.get("layer", 0)), []).append(
                (src, [int(row["e%d" % j]) for j in range(len(k))]))
    return layers


def counts_file(path):
    """{layer: counts[E]} or {layer: counts[G][E]}."""
    if path.endswith(".npy"):
        shape, v = read_npy(path)
        per = len(v) // shape[0]
        if len(shape) == 2:
            return {l: v[l * per:(l + 1) * per] for l in range(shape[0])}
        G, En = shape[1], shape[2]
        return {l: [v[l * per + s * En:l * per + (s + 1) * En] for s in range(G)]
                for l in range(shape[0])}
    if path.endswith(".json"):
        return dict(enumerate(json.load(open(path))))
    out = {}
    for row in csv.DictReader(open(path)):
        l, e, c = int(row["layer"]), int(row["expert"]), int(row["count"])
        if "src" in row:
            s = int(row["src"])
            m = out.setdefault(l, [])
            while len(m) <= s:
                m.append([0] * E)
            m[s][e] += c
        else:
            out.setdefault(l, [0] * E)[e] += c
    return out


# An explicit placement (--placement FILE) in use: None, or (reps, gps,
# spread) where reps[e] lists the GPUs of expert e's slots in slot order.
PLACE = None


def replica_gpu(e, s):
    reps, gps, spread = PLACE
    r = reps[e]
    if not spread:
        if s in r:
            return s  # a replica on the token's own GPU
        same = [g for g in r if g // gps == s // gps]
        if same:  # else one on its own server, the (s mod their number)-th
            return same[s % len(same)]
    return r[s % len(r)]


def expert_gpu(e, s, ng, rr):
    if PLACE is not None:
        return replica_gpu(e, s)
    if E >= ng:
        return e % ng if rr else e * ng // E
    r = ng // E
    return e + (s % r) * E if rr else e * r + s % r


def token_src(t, T, ng, rr):
    return t % ng if rr else t * ng // T


def ids_traffic(tokens, ng, erre, trr, mode):
    """mode: 'dedup' | 'nodedup' -> byte matrix; 'tokens' -> groups."""
    m = [[0] * ng for _ in range(ng)]
    groups = {}
    T = len(tokens)
    for t, (src, ids) in enumerate(tokens):
        s = src if src is not None else token_src(t, T, ng, trr)
        gpus = [expert_gpu(e, s, ng, erre) for e in ids]
        if mode == "nodedup":
            for d in gpus:
                m[s][d] += B
            continue
        dests = tuple(sorted(set(gpus)))
        for d in dests:
            m[s][d] += B
        groups.setdefault(s, {}).setdefault(dests, 0)
        groups[s][dests] += 1
    glist = [[s, list(d), n] for s in sorted(groups) for d, n in groups[s].items()]
    return m, glist


def counts_traffic(c, ng, erre):
    m = [[0] * ng for _ in range(ng)]
    if isinstance(c[0], list):  # per source
        for s in range(ng):
            for e in range(E):
                m[s][expert_gpu(e, s, ng, erre)] += c[s][e] * B
        return m
    for e in range(E):
        # even split, largest remainder: the extra units go to sources
        # e, e+1, ... (mod ng)
        q, rem = divmod(c[e], ng)
        for s in range(ng):
            extra = 1 if (s - e) % ng < rem else 0
            m[s][expert_gpu(e, s, ng, erre)] += (q + extra) * B
    return m


def run(fast, args):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "t.json")
        r = subprocess.run([fast, "trace", "import"] + args + ["-o", out],
                           capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("FAIL: fast %s: %s" % (" ".join(args), r.stderr.strip()))
        return json.load(open(out))


def check_layer(got, i, m, g, pm, ng, mode, name, args):
    """Layer i of an import (got: its matrices, dispatch then combine)
    against the reference: the compute pairs (column sums of the no-dedup
    bytes pm, in tokens), and the groups g (token traffic) or the rows m
    and their transpose (bytes).  Exits on a difference."""
    pairs = [sum(pm[s][c] for s in range(ng)) // B for c in range(ng)]
    dd, cc = got[2 * i], got[2 * i + 1]
    ok = dd["compute_pairs"] == pairs and cc["compute_pairs"] == pairs
    if mode == "tokens":
        ok = ok and dd["groups"] == g and cc["groups"] == g
    else:
        ok = ok and dd["rows"] == m and cc["rows"] == transpose(m)
    if not ok:
        sys.exit("FAIL: %s %s layer %d" % (name, " ".join(args), i))


def transpose(m):
    return [list(r) for r in zip(*m)]


def placement_map(nlayers, ng, extra):
    """A replicated map per layer: every expert once, then `extra` more
    slots, shuffled by a fixed rule (no randomness)."""
    rows = []
    for l in range(nlayers):
        row = list(range(E)) + [(3 * l + 5 * j + 1) % E for j in range(extra)]
        k = len(row)
        rows.append([row[(7 * i + l) % k] for i in range(k)])  # 7 is prime to k
    return rows


def placement_files(fast):
    """--placement FILE with replicas, both replica choices: bytes (dedup,
    --no-dedup), token groups and compute_pairs against this file's rule."""
    global PLACE
    n = 0
    for name in ("ids_ltk.npy", "ids.csv", "ids_src.csv"):
        path = os.path.join(HERE, name)
        layers = ids_file(path)
        for ng, gps, extra in ((4, 2, 4), (16, 4, 8)):
            rows = placement_map(len(layers), ng, extra)
            per = (E + extra) // ng
            with tempfile.TemporaryDirectory() as d:
                pf = os.path.join(d, "p.json")
                json.dump(rows, open(pf, "w"))
                if ng == 4:  # the same map as make_samples.py's .npy
                    shape, flat = read_npy(os.path.join(HERE, "placement_ep4.npy"))
                    if shape != [len(rows), len(rows[0])] or flat != sum(rows, []):
                        sys.exit("FAIL: placement_ep4.npy is not placement_map's rows")
                    pf = os.path.join(HERE, "placement_ep4.npy")
                for choice in ("local", "spread"):
                    base = ["--routing", path, "--experts", str(E), "--token-bytes", str(B),
                            "--ep", str(ng), "--gpus-per-server", str(gps), "--placement", pf,
                            "--replica-choice", choice]
                    for mode, flag in (("dedup", []), ("nodedup", ["--no-dedup"]),
                                       ("tokens", ["--tokens"])):
                        got = run(fast, base + flag)["matrices"]
                        for i, l in enumerate(sorted(layers)):
                            reps = [[s // per for s, x in enumerate(rows[i]) if x == e]
                                    for e in range(E)]
                            PLACE = (reps, gps, choice == "spread")
                            m, g = ids_traffic(layers[l], ng, False, False, mode)
                            pm, _ = ids_traffic(layers[l], ng, False, False, "nodedup")
                            PLACE = None
                            check_layer(got, i, m, g, pm, ng, mode, name, base + flag)
                            n += 1
        print("%s with a replicated placement file: agrees" % name)
    return n


def read_map(path):
    if path.endswith(".npy"):
        shape, v = read_npy(path)
        return [v[i * shape[1]:(i + 1) * shape[1]] for i in range(shape[0])]
    return json.load(open(path))


def check_map(rows, nl, ng, R, what):
    """A placement: nl rows of E + R slots, ng GPUs with the same number of
    slots each, every expert at least once."""
    ok = len(rows) == nl and all(len(r) == E + R and (E + R) % ng == 0 and
                                 sorted(set(r)) == list(range(E)) for r in rows)
    if not ok:
        sys.exit("FAIL: %s: the map written is not a placement" % what)


def modelled_imbalance(gpu_of_slot, row, load, ng):
    """max / mean GPU load when each expert's load splits evenly over its
    slots (what EPLB assumes)."""
    nrep = [row.count(e) for e in range(E)]
    g = [0.0] * ng
    for s, e in enumerate(row):
        g[gpu_of_slot(s)] += load[e] / nrep[e]
    mean = sum(g) / ng
    return max(g) / mean if mean else 1.0


def eplb_balance(row, load, ng, what):
    """EPLB's claim, checked with this file's loads: the map is at least as
    balanced as (a) the contiguous placement without replicas and (b) a
    plain greedy with the same slots: each extra slot to the expert of the
    largest load per replica, the slots dealt to GPUs round-robin in
    expert order (no packing)."""
    per = len(row) // ng
    got = modelled_imbalance(lambda s: s // per, row, load, ng)
    plain = list(range(E))
    contig = modelled_imbalance(lambda s: s * ng // E if E >= ng else s, plain, load, ng) \
        if E % ng == 0 else None
    cnt = [1] * E
    for _ in range(len(row) - E):
        e = max(range(E), key=lambda x: (load[x] / cnt[x], -x))
        cnt[e] += 1
    greedy = [e for e in range(E) for _ in range(cnt[e])]
    rr = modelled_imbalance(lambda s: s % ng, greedy, load, ng)
    if got > rr + 1e-9 or (contig is not None and got > contig + 1e-9):
        sys.exit("FAIL: %s: eplb map imbalance %.4f, greedy %.4f, contiguous %s" %
                 (what, got, rr, contig))
    return got, rr


def eplb_maps(fast):
    """--placement eplb:R on every sample file, EP4 = 2 x 2 with R = 4 (the
    hierarchical policy) and EP6 = 3 x 2 with R = 4 (3 servers do not divide
    8 experts: the global policy); both replica choices; bytes (dedup,
    --no-dedup), token groups for ids, compute_pairs; recomputed from the
    map the run wrote."""
    global PLACE
    n, worst = 0, []
    files = [(f, False) for f in ("ids_ltk.npy", "megatron_trace.jsonl", "tokens.jsonl",
                                  "ids.csv", "ids_src.csv")]
    files += [(f, True) for f in ("counts.npy", "counts_src.npy", "counts.json",
                                  "counts_src.json", "counts.csv", "counts_src.csv")]
    for name, counts in files:
        path = os.path.join(HERE, name)
        layers = counts_file(path) if counts else ids_file(path)
        for ng, gps, R in ((4, 2, 4), (6, 2, 4)):
            if counts and isinstance(layers[0][0], list) and len(layers[0]) != ng:
                continue  # per-source counts are of 4 GPUs
            with tempfile.TemporaryDirectory() as d:
                for choice in ("spread", "local"):
                    out = os.path.join(d, "p.npy" if choice == "local" else "p.json")
                    base = ["--routing", path, "--token-bytes", str(B), "--ep", str(ng),
                            "--gpus-per-server", str(gps), "--placement", "eplb:%d" % R,
                            "--replica-choice", choice, "--placement-out", out]
                    base += ["--counts"] if counts and name.endswith(".npy") else []
                    base += [] if counts else ["--experts", str(E)]
                    modes = (("dedup", []),) if counts else (
                        ("dedup", []), ("nodedup", ["--no-dedup"]), ("tokens", ["--tokens"]))
                    for mode, flag in modes:
                        got = run(fast, base + flag)["matrices"]
                        rows = read_map(out)
                        check_map(rows, len(layers), ng, R, name)
                        per = (E + R) // ng
                        for i, l in enumerate(sorted(layers)):
                            PLACE = ([[s // per for s, x in enumerate(rows[i]) if x == e]
                                      for e in range(E)], gps, choice == "spread")
                            if counts:
                                c = layers[l]
                                load = [sum(r[e] for r in c) for e in range(E)] \
                                    if isinstance(c[0], list) else list(c)
                                m, g = counts_traffic(c, ng, False), None
                                pm = m
                            else:
                                load = [sum(e in ids for _, ids in layers[l]) for e in range(E)]
                                m, g = ids_traffic(layers[l], ng, False, False, mode)
                                pm, _ = ids_traffic(layers[l], ng, False, False, "nodedup")
                            PLACE = None
                            check_layer(got, i, m, g, pm, ng, mode, name, base + flag)
                            worst.append(eplb_balance(rows[i], load, ng, "%s EP%d" % (name, ng)))
                            n += 1
        print("%s with eplb:4: agrees" % name)
    print("eplb maps: %d layer maps, modelled imbalance max %.3f (plain greedy %.3f), "
          "better than the greedy on %d, equal on the rest" %
          (len(worst), max(w[0] for w in worst), max(w[1] for w in worst),
           sum(w[0] < w[1] - 1e-9 for w in worst)))
    return n


def main():
    fast = sys.argv[1]
    n = 0
    ids_files = [("ids_ltk.npy", []), ("ids_i8.npy", []), ("ids_tlk_v2.npy", ["--axes", "tlk"]),
                 ("ids_2d_v3.npy", []), ("megatron_trace.jsonl", []), ("tokens.jsonl", []),
                 ("ids.csv", []), ("ids_src.csv", []),
                 ("ids_ltk.npy", ["--token-src", os.path.join(HERE, "src.npy")])]
    for name, extra in ids_files:
        path = os.path.join(HERE, name)
        layers = ids_file(path, "--axes" in extra)
        if "--token-src" in extra:
            _, src = read_npy(extra[1])
            layers = {l: [(src[t], ids) for t, (_, ids) in enumerate(v)] for l, v in layers.items()}
        has_src = layers[min(layers)][0][0] is not None
        for ng, gps in ((4, 2), (16, 4)):
            for erre in (False, True):
                for trr in ((False,) if has_src else (False, True)):
                    base = ["--routing", path, "--experts", str(E), "--token-bytes", str(B),
                            "--ep", str(ng), "--gpus-per-server", str(gps)] + extra
                    base += ["--placement", "round-robin" if erre else "contiguous"]
                    if not has_src:
                        base += ["--tokens-at", "round-robin" if trr else "contiguous"]
                    for mode, flag in (("dedup", []), ("nodedup", ["--no-dedup"]),
                                       ("tokens", ["--tokens"])):
                        got = run(fast, base + flag)["matrices"]
                        want = []
                        for l in sorted(layers):
                            m, g = ids_traffic(layers[l], ng, erre, trr, mode)
                            want.append((m, g))
                        for i, (m, g) in enumerate(want):
                            d, c = got[2 * i], got[2 * i + 1]
                            if mode == "tokens":
                                ok = d["groups"] == g and c["groups"] == g
                            else:
                                ok = d["rows"] == m and c["rows"] == transpose(m)
                            if not ok:
                                sys.exit("FAIL: %s %s layer %d" % (name, " ".join(base + flag), i))
                            n += 1
        print("%s: agrees" % name)
    for name in ("counts.npy", "counts_src.npy", "counts.json", "counts_src.json", "counts.csv",
                 "counts_src.csv"):
        path = os.path.join(HERE, name)
        layers = counts_file(path)
        for erre in (False, True):
            args = ["--routing", path, "--token-bytes", str(B), "--ep", "4", "--gpus-per-server",
                    "2", "--placement", "round-robin" if erre else "contiguous"]
            if name.endswith(".npy"):
                args.append("--counts")
            got = run(fast, args)["matrices"]
            for i, l in enumerate(sorted(layers)):
                m = counts_traffic(layers[l], 4, erre)
                if got[2 * i]["rows"] != m or got[2 * i + 1]["rows"] != transpose(m):
                    sys.exit("FAIL: %s %s layer %d" % (name, " ".join(args), l))
                n += 1
        print("%s: agrees" % name)
    n += placement_files(fast)
    n += eplb_maps(fast)
    print("ok %d comparisons" % n)


if __name__ == "__main__":
    main()
