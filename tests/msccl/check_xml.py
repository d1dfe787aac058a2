#!/usr/bin/env python3
"""Check an MSCCL XML written by `fast export --format msccl`.

    check_xml.py OUT.xml [--padded] [--traffic TRAFFIC.json [--matrix I]] [--plan PLAN.json [--matrix I]]

1. The XML is well formed and has MSCCL's attribute set: <algo name proto
   nchannels nchunksperloop ngpus coll inplace>, <gpu id i_chunks o_chunks
   s_chunks>, <tb id send recv chan>, <step s type srcbuf srcoff dstbuf dstoff
   cnt depid deps hasdep>; thread block ids 0..k-1 per GPU, steps numbered
   0..n-1 per block, offsets inside the buffers, hasdep set exactly on the
   steps something waits for.
2. Executing it (sends and receives matched in order per GPU pair and
   channel, dependencies honoured, input chunks labelled) completes: no
   deadlock, every chunk sent is received, and every output chunk is written
   exactly once with the right input chunk: GPU d's output holds, in source
   order, a contiguous in-order run of each source's input chunks for d
   (--padded: buffers of `fast export --pad` have untouched tails).
3. With --traffic: each message's chunk count is round(bytes / chunk)
   (at least 1), the chunk size being the one in the header comment.
4. With --plan (explicit transfers): the chunks sent per GPU pair equal the
   plan's bytes per pair / chunk up to one chunk per piece (rounding).

Prints a stable summary; exit 0 if everything holds, 1 otherwise.
"""
import json
import re
import sys
import xml.etree.ElementTree as ET

ALGO = ["name", "proto", "nchannels", "nchunksperloop", "ngpus", "coll", "inplace"]
GPU = ["id", "i_chunks", "o_chunks", "s_chunks"]
TB = ["id", "send", "recv", "chan"]
STEP = ["s", "type", "srcbuf", "srcoff", "dstbuf", "dstoff", "cnt", "depid", "deps", "hasdep"]


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def need(el, attrs, where):
    for a in attrs:
        if a not in el.attrib:
            fail("%s: missing attribute %s" % (where, a))


def load_matrix(path, index):
    d = json.load(open(path))
    m = d["matrices"][index]
    ng = d["gpus_total"] if "gpus_total" in d else d["gpus"]  # version 1: "gpus"
    D = [[0] * ng for _ in range(ng)]
    if "rows" in m:
        for s, row in enumerate(m["rows"]):
            for t, v in enumerate(row):
                D[s][t] = int(v)
    else:
        for s, t, v in m["entries"]:
            D[s][t] = int(v)
    return D


def main(argv):
    args = argv[1:]
    opts = {}
    pos = []
    while args:
        a = args.pop(0)
        if a in ("--traffic", "--plan", "--matrix"):
            opts[a] = args.pop(0)
        elif a == "--padded":
            opts[a] = True
        else:
            pos.append(a)
    if len(pos) != 1:
        print(__doc__)
        return 2
    text = open(pos[0]).read()
    m = re.match(r"<!-- fast export \(MSCCL\): chunk (\d+) B", text)
    if not m:
        fail("no header comment with the chunk size")
    chunk = int(m.group(1))
    root = ET.fromstring(text)  # raises on malformed XML
    if root.tag != "algo":
        fail("root element is <%s>, not <algo>" % root.tag)
    need(root, ALGO, "<algo>")
    if root.get("coll") != "alltoall":
        fail("coll is %s" % root.get("coll"))
    ng = int(root.get("ngpus"))
    padded = "--padded" in opts
    nch = int(root.get("nchannels"))
    gpus = root.findall("gpu")
    if [int(g.get("id")) for g in gpus if need(g, GPU, "<gpu>") is None] != list(range(ng)):
        fail("gpu ids are not 0..ngpus-1")
    size = {}
    tbs = {}
    nsteps = 0
    for g in gpus:
        gid = int(g.get("id"))
        size[gid] = {b: int(g.get(b + "_chunks")) for b in "ios"}
        blocks = g.findall("tb")
        for k, tb in enumerate(blocks):
            need(tb, TB, "gpu %d <tb>" % gid)
            if int(tb.get("id")) != k:
                fail("gpu %d: thread block ids are not 0..k-1" % gid)
            send, recv, chan = int(tb.get("send")), int(tb.get("recv")), int(tb.get("chan"))
            if send == gid or recv == gid or not -1 <= send < ng or not -1 <= recv < ng:
                fail("gpu %d tb %d: bad peers" % (gid, k))
            if not 0 <= chan < nch:
                fail("gpu %d tb %d: chan %d outside 0..%d" % (gid, k, chan, nch - 1))
            steps = []
            for j, st in enumerate(tb.findall("step")):
                need(st, STEP, "gpu %d tb %d <step>" % (gid, k))
                if int(st.get("s")) != j:
                    fail("gpu %d tb %d: steps not numbered in order" % (gid, k))
                s = {a: st.get(a) for a in STEP}
                for a in ("srcoff", "dstoff", "cnt", "depid", "deps", "hasdep"):
                    s[a] = int(s[a])
                if s["type"] not in ("s", "r", "cpy", "nop"):
                    fail("gpu %d tb %d step %d: unexpected type %s" % (gid, k, j, s["type"]))
                if s["type"] == "s" and send < 0 or s["type"] == "r" and recv < 0:
                    fail("gpu %d tb %d step %d: no peer for %s" % (gid, k, j, s["type"]))
                if s["type"] != "nop":
                    for b, o in (("srcbuf", "srcoff"), ("dstbuf", "dstoff")):
                        local = (b == "srcbuf") == (s["type"] in ("s", "cpy")) or s["type"] == "cpy"
                        if local and not 0 <= s[o] <= s[o] + s["cnt"] <= size[gid][s[b]]:
                            fail("gpu %d tb %d step %d: %s range outside the buffer" % (gid, k, j, b))
                    if not 0 < s["cnt"] < 72:
                        fail("gpu %d tb %d step %d: cnt %d" % (gid, k, j, s["cnt"]))
                steps.append(s)
                nsteps += 1
            tbs[(gid, k)] = (send, recv, chan, steps)
    # hasdep exactly on dependency targets
    targets = set()
    for (gid, k), (_, _, _, steps) in tbs.items():
        for s in steps:
            if s["depid"] >= 0:
                if (gid, s["depid"]) not in tbs or s["deps"] >= len(tbs[(gid, s["depid"])][3]):
                    fail("gpu %d tb %d: dependency on a missing step" % (gid, k))
                targets.add((gid, s["depid"], s["deps"]))
    for (gid, k), (_, _, _, steps) in tbs.items():
        for j, s in enumerate(steps):
            if s["hasdep"] != ((gid, k, j) in targets):
                fail("gpu %d tb %d step %d: hasdep %d is wrong" % (gid, k, j, s["hasdep"]))

    # execute
    buf = {g: {"i": [(g, c) for c in range(size[g]["i"])], "o": [None] * size[g]["o"],
               "s": [None] * size[g]["s"]} for g in range(ng)}
    writes = {g: [0] * size[g]["o"] for g in range(ng)}
    pc = {key: 0 for key in tbs}
    queues = {}
    link = {}
    progress = True
    while progress:
        progress = False
        for key in sorted(tbs):
            gid, _ = key
            send, recv, chan, steps = tbs[key]
            while pc[key] < len(steps):
                s = steps[pc[key]]
                if s["depid"] >= 0 and pc[(gid, s["depid"])] <= s["deps"]:
                    break
                t = s["type"]
                if t == "s":
                    tok = buf[gid][s["srcbuf"]][s["srcoff"]:s["srcoff"] + s["cnt"]]
                    if None in tok:
                        fail("gpu %d sends a chunk it does not hold" % gid)
                    queues.setdefault((gid, send, chan), []).append(tok)
                    link[(gid, send)] = link.get((gid, send), 0) + s["cnt"]
                elif t in ("r", "cpy"):
                    if t == "r":
                        q = queues.get((recv, gid, chan))
                        if not q:
                            break
                        tok = q.pop(0)
                        if len(tok) != s["cnt"]:
                            fail("gpu %d receives %d chunks from a send of %d" % (gid, s["cnt"], len(tok)))
                    else:
                        tok = buf[gid][s["srcbuf"]][s["srcoff"]:s["srcoff"] + s["cnt"]]
                        if None in tok:
                            fail("gpu %d copies a chunk it does not hold" % gid)
                    for c, v in enumerate(tok):
                        buf[gid][s["dstbuf"]][s["dstoff"] + c] = v
                        if s["dstbuf"] == "o":
                            writes[gid][s["dstoff"] + c] += 1
                pc[key] += 1
                progress = True
    for key, (_, _, _, steps) in tbs.items():
        if pc[key] < len(steps):
            fail("deadlock: gpu %d tb %d stops at step %d" % (key[0], key[1], pc[key]))
    if any(q for q in queues.values()):
        fail("a chunk was sent and never received")
    # outputs: per destination, contiguous in-order runs of each source, in source order
    q = [[0] * ng for _ in range(ng)]
    for d in range(ng):
        # with --pad the buffers have untouched tails: delivered chunks form a prefix
        used = len(writes[d])
        while padded and used and writes[d][used - 1] == 0:
            used -= 1
        if any(w != 1 for w in writes[d][:used]):
            fail("gpu %d: an output chunk is written %s times" % (d, sorted(set(writes[d][:used]))))
        out = buf[d]["o"][:used]
        last_src = -1
        c = 0
        while c < len(out):
            s, first = out[c]
            if s <= last_src:
                fail("gpu %d: output not in source order" % d)
            n = 0
            while c < len(out) and out[c] == (s, first + n):
                n += 1
                c += 1
            q[s][d] = n
            last_src = s
    # inputs: each source's messages in destination order, back to back
    for s in range(ng):
        if sum(q[s]) != size[s]["i"] and not (padded and sum(q[s]) <= size[s]["i"]):
            fail("gpu %d: %d input chunks, %d delivered" % (s, size[s]["i"], sum(q[s])))
    print("ok: well formed, %d GPUs, %d channels, %d thread blocks, %d steps, chunk %d B"
          % (ng, nch, len(tbs), nsteps, chunk))
    print("ok: executes without deadlock; every chunk sent is received; %d chunks delivered"
          % sum(map(sum, q)))

    matrix = int(opts.get("--matrix", 0))
    if "--traffic" in opts:
        D = load_matrix(opts["--traffic"], matrix)
        bad = 0
        rounded = 0
        total = 0
        for s in range(ng):
            for d in range(ng):
                L = D[s][d]
                want = 0 if L == 0 else max(1, L // chunk + (2 * (L % chunk) >= chunk))
                bad += q[s][d] != want
                rounded += abs(q[s][d] * chunk - L)
                total += L
        if bad:
            fail("%d messages have a chunk count other than round(bytes / chunk)" % bad)
        print("ok: messages match the traffic after rounding (%d of %d bytes, relative error %.3e)"
              % (rounded, total, rounded / total if total else 0.0))
    if "--plan" in opts:
        plans = json.load(open(opts["--plan"]))["plans"]
        plan = [p for p in plans if p["matrix"] == matrix][0]
        pair = {}
        pieces = {}
        for st in plan["steps"]:
            for fr, to, pcs in st.get("transfers", []):
                if fr == to:
                    continue
                pair[(fr, to)] = pair.get((fr, to), 0) + sum(p[3] for p in pcs)
                pieces[(fr, to)] = pieces.get((fr, to), 0) + len(pcs)
        if any(st.get("transfers") is None for st in plan["steps"]):
            fail("--plan needs a plan of explicit transfers")
        for key in sorted(set(pair) | set(link)):
            got = link.get(key, 0) * chunk
            want = pair.get(key, 0)
            if abs(got - want) > pieces.get(key, 0) * chunk:
                fail("pair %d->%d: %d chunks (%d B) for %d plan bytes" % (key[0], key[1], link.get(key, 0), got, want))
        print("ok: chunks per GPU pair match the plan's bytes within rounding (%d pairs)" % len(pair))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
