#!/usr/bin/env python3
"""Write the sample routing files of tests/data/routing (and the malformed
ones of tests/bad/routing_*), with the standard library only: the .npy files
are written here byte by byte from NumPy's format description (magic,
version, little-endian header length, a padded dict header, C-order data),
so no NumPy is needed.  Deterministic (seeded); rerun after changing it:

    python3 tests/data/routing/make_samples.py

The model: 8 experts, top-2, two layers (0 and 1), 12 tokens per layer,
sources on 4 GPUs where a file gives them.
"""
import json
import os
import random
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
E, K, L, T, G = 8, 2, 2, 12, 4

FMT = {"i1": "b", "u1": "B", "i2": "h", "u2": "H", "i4": "i", "u4": "I", "i8": "q", "u8": "Q"}


def npy_bytes(shape, flat, dtype, version=1, order="<", fortran=False):
    """An .npy file: header dict padded so that the data starts at a
    multiple of 64, as NumPy writes it."""
    code = ("|" if dtype[1] == "1" else order) + dtype
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    head = "{'descr': '%s', 'fortran_order': %s, 'shape': (%s), }" % (
        code, "True" if fortran else "False", dims)
    pre = 10 if version == 1 else 12
    pad = (64 - (pre + len(head) + 1) % 64) % 64
    head = (head + " " * pad + "\n").encode("latin1" if version < 3 else "utf8")
    size = struct.pack("<H", len(head)) if version == 1 else struct.pack("<I", len(head))
    data = struct.pack(("<" if order != ">" else ">") + FMT[dtype] * len(flat), *flat)
    return b"\x93NUMPY" + bytes([version, 0]) + size + head + data


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb" if isinstance(data, bytes) else "w") as f:
        f.write(data)


def routing():
    """ids[l][t] = K distinct experts; src[t] in 0..G-1."""
    rnd = random.Random(26)
    ids = [[rnd.sample(range(E), K) for _ in range(T)] for _ in range(L)]
    src = [rnd.randrange(G) for _ in range(T)]
    return ids, src


def main():
    ids, src = routing()
    d = HERE
    flat_ltk = [e for l in range(L) for t in range(T) for e in ids[l][t]]
    flat_tlk = [e for t in range(T) for l in range(L) for e in ids[l][t]]
    write(f"{d}/ids_ltk.npy", npy_bytes((L, T, K), flat_ltk, "i2"))
    write(f"{d}/ids_tlk_v2.npy", npy_bytes((T, L, K), flat_tlk, "i4", version=2))
    write(f"{d}/ids_2d_v3.npy", npy_bytes((T, K), [e for t in ids[0] for e in t], "u1", version=3))
    write(f"{d}/ids_i8.npy", npy_bytes((L, T, K), flat_ltk, "i8"))
    write(f"{d}/src.npy", npy_bytes((T,), src, "i8"))
    # Megatron-LM router trace: one record per (step, layer) of one rank;
    # here rank r holds tokens with src == r, two steps of half the tokens
    lines = []
    for step in range(2):
        part = range(step * T // 2, (step + 1) * T // 2)
        for rank in range(G):
            for l in range(L):
                rows = [ids[l][t] for t in part if src[t] == rank]
                lines.append({"step": step, "stage": "pre_dispatch", "block": "decoder",
                              "layer": l, "rank": rank, "num_tokens": len(rows), "topk": K,
                              "top_indices": rows})
        lines.append({"step": step, "stage": "pre_dispatch", "block": "mtp", "mtp_idx": 0,
                      "layer": 0, "rank": 0, "num_tokens": 1, "topk": K,
                      "top_indices": [[0, 1]]})
    write(f"{d}/megatron_trace.jsonl", "".join(json.dumps(x) + "\n" for x in lines))
    write(f"{d}/tokens.jsonl", "".join(json.dumps({"layer": l, "experts": ids[l][t]}) + "\n"
                                       for l in range(L) for t in range(T)))
    write(f"{d}/ids.csv", "layer,token,e0,e1\n" + "".join(
        f"{l},{t},{ids[l][t][0]},{ids[l][t][1]}\n" for l in range(L) for t in range(T)))
    write(f"{d}/ids_src.csv", "layer,src,e0,e1\n" + "".join(
        f"{l},{src[t]},{ids[l][t][0]},{ids[l][t][1]}\n" for l in range(L) for t in range(T)))
    # counts: per expert, and per source (from the same routing, sources src)
    cnt = [[sum(e in tok for tok in ids[l]) for e in range(E)] for l in range(L)]
    scnt = [[[sum(e in ids[l][t] for t in range(T) if src[t] == s) for e in range(E)]
             for s in range(G)] for l in range(L)]
    write(f"{d}/counts.npy", npy_bytes((L, E), [c for r in cnt for c in r], "i4"))
    write(f"{d}/counts_src.npy",
          npy_bytes((L, G, E), [c for l in scnt for r in l for c in r], "u2"))
    write(f"{d}/counts.json", json.dumps(cnt) + "\n")
    write(f"{d}/counts_src.json", json.dumps(scnt) + "\n")
    write(f"{d}/counts.csv", "layer,expert,count\n" + "".join(
        f"{l},{e},{cnt[l][e]}\n" for l in range(L) for e in range(E)))
    write(f"{d}/counts_src.csv", "layer,src,expert,count\n" + "".join(
        f"{l},{s},{e},{scnt[l][s][e]}\n" for l in range(L) for s in range(G) for e in range(E)))
    # a replicated placement (--placement FILE.npy, EPLB's phy2log saved by
    # np.save) for EP4: 12 slots, 3 per GPU; reference.py's placement_map
    write(f"{d}/placement_ep4.npy",
          npy_bytes((L, E + 4), [x for r in placement_rows(E + 4) for x in r], "i2", version=2))
    bad(ids)


def placement_rows(slots):
    """Every expert once, then slots - E more, shuffled by a fixed rule."""
    rows = []
    for l in range(L):
        row = list(range(E)) + [(3 * l + 5 * j + 1) % E for j in range(slots - E)]
        rows.append([row[(7 * i + l) % slots] for i in range(slots)])
    return rows


def bad_placements():
    """Malformed --placement FILE.npy maps (EP4: 12 slots), in tests/bad."""
    b = f"{ROOT}/tests/bad"
    rows = placement_rows(E + 4)
    flat = [x for r in rows for x in r]
    rng = list(flat)
    rng[12 + 7] = 8  # [1, 7]
    write(f"{b}/trace_placement_npy_expert_range/p.npy", npy_bytes((L, 12), rng, "i8"))
    neg = list(flat)
    neg[5] = -1  # [0, 5]
    write(f"{b}/trace_placement_npy_negative/p.npy", npy_bytes((L, 12), neg, "i1"))
    miss = [x if x != 3 or i < 12 else 4 for i, x in enumerate(flat)]  # layer 1 lacks 3
    write(f"{b}/trace_placement_npy_missing_expert/p.npy", npy_bytes((L, 12), miss, "u2"))
    write(f"{b}/trace_placement_npy_shape_1d/p.npy", npy_bytes((L * 12,), flat, "i4"))
    odd = [x for r in rows for x in r[:10]]
    write(f"{b}/trace_placement_npy_odd_slots/p.npy", npy_bytes((L, 10), odd, "i4"))
    write(f"{b}/trace_placement_npy_truncated/p.npy", npy_bytes((L, 12), flat, "i4")[:-5])
    f4 = npy_bytes((L, 12), flat, "i4").replace(b"'<i4'", b"'<f4'")
    write(f"{b}/trace_placement_npy_float/p.npy", f4)


def bad(ids):
    """Malformed inputs, each in its tests/bad case folder."""
    b = f"{ROOT}/tests/bad"
    flat = [e for l in range(L) for t in range(T) for e in ids[l][t]]
    out_of_range = list(flat)
    out_of_range[2 * K * T - 3] = 9  # layer 1, token 10, slot 1
    write(f"{b}/routing_npy_expert_range/r.npy", npy_bytes((L, T, K), out_of_range, "i2"))
    dup = list(flat)
    dup[K * 5 + 1] = dup[K * 5]  # layer 0, token 5
    write(f"{b}/routing_npy_duplicate/r.npy", npy_bytes((L, T, K), dup, "i2"))
    write(f"{b}/routing_npy_truncated/r.npy", npy_bytes((L, T, K), flat, "i2")[:-7])
    write(f"{b}/routing_npy_big_endian/r.npy", npy_bytes((L, T, K), flat, "i2", order=">"))
    write(f"{b}/routing_npy_fortran/r.npy", npy_bytes((L, T, K), flat, "i2", fortran=True))
    f4 = npy_bytes((L, T, K), flat, "i4").replace(b"'<i4'", b"'<f4'")
    write(f"{b}/routing_npy_float/r.npy", f4)
    write(f"{b}/routing_npy_shape_1d/r.npy", npy_bytes((L * T * K,), flat, "i2"))
    big = [2 ** 62, 2 ** 62] + [0] * (E - 2)
    write(f"{b}/routing_npy_counts_overflow/r.npy", npy_bytes((1, E), big, "i8"))
    write(f"{b}/routing_jsonl_expert_range/r.jsonl",
          json.dumps({"layer": 0, "rank": 0, "top_indices": [[1, 2], [3, 4]]}) + "\n" +
          json.dumps({"layer": 0, "rank": 1, "top_indices": [[1, 2], [3, 8]]}) + "\n")
    write(f"{b}/routing_jsonl_duplicate/r.jsonl",
          json.dumps({"layer": 0, "experts": [1, 2]}) + "\n" +
          json.dumps({"layer": 0, "experts": [5, 5]}) + "\n")
    write(f"{b}/routing_jsonl_truncated/r.jsonl",
          json.dumps({"layer": 0, "experts": [1, 2]}) + "\n" + '{"layer": 0, "experts": [1,')
    write(f"{b}/routing_csv_expert_range/r.csv", "layer,e0,e1\n0,1,2\n0,-1,3\n")
    write(f"{b}/routing_csv_counts_overflow/r.csv",
          "layer,expert,count\n0,0,9007199254740000\n0,1,9007199254740000\n")
    bad_placements()
    bad_more()


def bad_more():
    """The rest of the malformed inputs: each format a file of ids or counts
    can take, with an id or count out of range, a wrong type or shape, a
    truncated file, a duplicate in one token, counts that overflow."""
    b = f"{ROOT}/tests/bad"
    j = json.dumps
    write(f"{b}/routing_jsonl_float_id/r.jsonl",
          j({"layer": 0, "experts": [1, 2]}) + "\n" + j({"layer": 0, "experts": [1.5, 2]}) + "\n")
    write(f"{b}/routing_jsonl_topk_varies/r.jsonl",
          j({"layer": 0, "experts": [1, 2]}) + "\n" + j({"layer": 1, "experts": [1, 2, 3]}) + "\n")
    write(f"{b}/routing_csv_duplicate/r.csv", "layer,e0,e1\n0,1,2\n0,3,3\n")
    write(f"{b}/routing_csv_truncated/r.csv", "layer,e0,e1\n0,1,2\n0,3,4\n1,5")
    write(f"{b}/routing_csv_not_integer/r.csv", "layer,e0,e1\n0,1,2\n0,1.5,2\n")
    cnt = [3, 1, 4, 1, 5, 9, 2, 6] * 2
    write(f"{b}/routing_npy_counts_float/r.npy",
          npy_bytes((L, E), cnt, "i4").replace(b"'<i4'", b"'<f4'"))
    write(f"{b}/routing_npy_counts_shape_1d/r.npy", npy_bytes((L * E,), cnt, "i4"))
    write(f"{b}/routing_npy_counts_truncated/r.npy", npy_bytes((L, E), cnt, "i4")[:-3])
    neg = list(cnt)
    neg[E + 2] = -4  # [1, 2]
    write(f"{b}/routing_npy_counts_negative/r.npy", npy_bytes((L, E), neg, "i8"))
    write(f"{b}/routing_npy_counts_experts/r.npy", npy_bytes((L, E), cnt, "u1"))
    rows = [cnt[:E], cnt[E:]]
    write(f"{b}/routing_json_counts_overflow/r.json",
          j([rows[0], [2 ** 52, 2 ** 52, 1, 0, 0, 0, 0, 0]]) + "\n")
    write(f"{b}/routing_json_counts_float/r.json", j([rows[0], rows[1][:3] + [2.5] + rows[1][4:]]) + "\n")
    write(f"{b}/routing_json_counts_ragged/r.json", j([rows[0], rows[1][:6]]) + "\n")
    write(f"{b}/routing_json_counts_truncated/r.json", j(rows)[:-9])
    write(f"{b}/routing_json_counts_negative/r.json", j([rows[0], [-1] + rows[1][1:]]) + "\n")
    write(f"{b}/routing_json_counts_experts/r.json", j(rows) + "\n")
    write(f"{b}/routing_csv_counts_expert_range/r.csv",
          "layer,expert,count\n0,0,3\n0,7,2\n1,8,1\n")
    write(f"{b}/routing_csv_counts_truncated/r.csv", "layer,expert,count\n0,0,3\n0,7,2\n1,3")
    write(f"{b}/routing_csv_counts_not_integer/r.csv", "layer,expert,count\n0,0,3\n0,7,2e3\n")


if __name__ == "__main__":
    main()
