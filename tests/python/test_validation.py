"""results/validation/predict.py: the measurements file as shipped is
consistent with its table (every row outside +-15% names its mechanism,
none inside does, every calibration names what it calibrates and every
calibrated value names a calibration row), a row's profiles reach the
topology it simulates and reproduce the committed prediction, and bad
input is refused with the JSON path and exit 3."""
import copy
import csv
import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT

HERE = os.path.join(ROOT, "results", "validation")
PREDICT = os.path.join(HERE, "predict.py")
FAST = os.environ.get("FAST_BIN", os.path.join(ROOT, "build", "bin", "fast"))


def shipped():
    with open(os.path.join(HERE, "measurements.json")) as f:
        return json.load(f)


def predict(*args):
    return subprocess.run([sys.executable, PREDICT, "--fast", FAST] + list(args),
                          capture_output=True, text=True, timeout=120)


def test_shipped_misses_match_the_table():
    doc = shipped()
    with open(os.path.join(HERE, "predictions.csv")) as f:
        rows = {r["id"]: r for r in csv.DictReader(f)}
    simulated = [m for m in doc["measurements"] if m["use"] != "excluded"]
    assert sorted(rows) == sorted(m["id"] for m in simulated)
    for m in simulated:
        outside = abs(float(rows[m["id"]]["error"])) > 0.15
        assert outside == ("miss" in m), m["id"]


def test_shipped_calibrations_name_their_rows():
    doc = shipped()
    uses = {m["id"]: m["use"] for m in doc["measurements"]}
    named = set()
    for prof in doc["profiles"].values():
        for e in prof["set"].values():
            if "calibrated_on" in e:
                assert uses[e["calibrated_on"]["id"]] == "calibrate"
                named.add(e["calibrated_on"]["id"])
    for mid, use in uses.items():
        if use == "calibrate":
            m = next(x for x in doc["measurements"] if x["id"] == mid)
            assert m["calibrates"], mid
    # every calibration row but the one that checks a preset's own figure
    # is the origin of a profile's value
    assert {k for k, u in uses.items() if u == "calibrate"} - named == {"nccl-h100x4-500MiB"}


def test_profiles_reach_the_topology_and_reproduce_the_table(tmp_path):
    if not os.access(FAST, os.X_OK):
        pytest.fail(f"{FAST} not built (make)")
    mid = "uccl-p5en-h200-ep8-dispatch"
    r = predict("--only", mid, "--keep", str(tmp_path))
    assert r.returncode == 0, r.stderr
    with open(tmp_path / (mid + ".topo.json")) as f:
        topo = json.load(f)
    assert topo["scale_out"]["nics_per_server"] == 16
    assert topo["implementation"]["hier"]["up_engine"] == {
        "kind": "sm", "sms": 24, "GBps_per_sm": 11.667}
    assert topo["implementation"]["hier"]["in_flight"] == 16
    with open(os.path.join(HERE, "predictions.csv")) as f:
        want = next(x for x in csv.DictReader(f) if x["id"] == mid)["predicted"]
    line = next(x for x in r.stdout.splitlines() if x.startswith("| " + mid + " |"))
    assert line.split("|")[5].strip() == f"{float(want):.1f}"
    # --without takes a profile out: the preset's DeepEP engine again
    r = predict("--only", mid, "--without", "uccl-ep-h200", "--without", "uccl-ep-cuda")
    line = next(x for x in r.stdout.splitlines() if x.startswith("| " + mid + " |"))
    assert float(line.split("|")[5]) < 0.7 * float(want)


def mutate(doc, how):
    d = copy.deepcopy(doc)
    how(d)
    return d


BAD = [
    ("two origins",
     lambda d: d["profiles"]["h800"]["set"]["scale_up/bw_GBps"].update(estimate="x"),
     "/profiles/h800/set/scale_up/bw_GBps: needs exactly one of"),
    ("calibrated on a validation row",
     lambda d: d["profiles"]["uccl-ep-h200"]["set"]["implementation/hier/up_engine/GBps_per_sm"]
     ["calibrated_on"].update(id="uccl-p5en-h200-ep8-combine"),
     "calibrated_on/id: 'uccl-p5en-h200-ep8-combine' is not a measurement of use calibrate"),
    ("unknown schedule",
     lambda d: d["profiles"]["h800"]["set"].update({"implementation/nccll/call_us": {
         "value": 1, "estimate": "x"}}),
     "/profiles/h800/set/implementation/nccll/call_us: want implementation/SCHEDULE"),
    ("engine kind",
     lambda d: d["profiles"]["mori-ep"]["set"]["implementation/hier/up_engine/kind"].update(
         value="dma"),
     "/profiles/mori-ep/set/implementation/hier/up_engine/kind/value: must be one of"),
    ("unknown profile",
     lambda d: d["measurements"][0]["model"].update(profiles=["h900"]),
     "/measurements/0/model/profiles: no profile 'h900'"),
    ("a path set twice",
     lambda d: d["measurements"][0]["model"].update(profiles=["nvlink5", "h800"]),
     "/measurements/0/model/profiles: 'h800' sets scale_up/bw_GBps again"),
    ("calibration without what",
     lambda d: d["measurements"][0].pop("calibrates"),
     "/measurements/0/calibrates: missing"),
    ("old override",
     lambda d: d["measurements"][0]["model"].update(override={"scale_up/bw_GBps": 1}),
     "/measurements/0/model/override: replaced by profiles"),
]


@pytest.mark.parametrize("name,how,message", BAD, ids=[b[0] for b in BAD])
def test_bad_measurements_are_refused(tmp_path, name, how, message):
    path = tmp_path / "m.json"
    path.write_text(json.dumps(mutate(shipped(), how)))
    r = predict("--measurements", str(path), "--only", "nccl-h100x4-500MiB")
    assert r.returncode == 3, (name, r.stderr)
    assert message in r.stderr, (name, r.stderr)


def test_docs_tables_print_every_row():
    r = predict("--docs")
    assert r.returncode == 0, r.stderr
    simulated = [m["id"] for m in shipped()["measurements"] if m["use"] != "excluded"]
    for mid in simulated:
        assert f"| [{mid}](" in r.stdout, mid
