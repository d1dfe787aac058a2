"""import fast against the command line: on the same inputs the Python API
returns exactly what `fast` prints (sim, bound, compare JSON equal as
documents; plan files byte-identical) and its errors carry the command's
messages.  Run: /usr/bin/python3 -m pytest tests/python (tests/run_all.sh's
python stage); FAST_BIN names the binary (default build/bin/fast), the
package is python/ of this checkout unless FAST_PYTHONPATH says otherwise."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.environ.get("FAST_PYTHONPATH", os.path.join(ROOT, "python")))
import fast  # noqa: E402

FAST = os.environ.get("FAST_BIN", os.path.join(ROOT, "build", "bin", "fast"))
TOKENS = os.path.join(ROOT, "tests", "golden", "check_token_ok", "t.json")  # 2 x 2, dispatch + combine
TRACE = os.path.join(ROOT, "traces", "mixtral-c4-ep8.json")


def cli(*args, ok=True):
    r = subprocess.run([FAST, *map(str, args)], capture_output=True, text=True)
    if ok:
        assert r.returncode == 0, r.stderr
    return r


def cli_json(*args):
    return json.loads(cli(*args, "--json").stdout)


def cli_error(*args):
    """(exit status, message after 'fast: CATEGORY: ' or 'fast CMD: ')"""
    r = cli(*args, ok=False)
    line = r.stderr.splitlines()[0]
    for sep in (": bad input: ", ": usage: ", ": limit exceeded: ", ": check failed: "):
        if line.startswith("fast" + sep):
            return r.returncode, line[len("fast" + sep):]
    return r.returncode, line.split(": ", 1)[1]


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    d = tmp_path_factory.mktemp("fast")
    rng = np.random.default_rng(7)
    mats = [rng.integers(0, 1 << 22, size=(16, 16)) for _ in range(2)]
    mats[1][3] = 0  # a silent GPU
    fast.Traffic(mats).save(str(d / "bytes.json"))
    return d, mats


def h200(servers=2, gpus=None):
    return fast.Topology.preset("h200", servers=servers, gpus=gpus)


TOPO = ["--preset", "h200", "--servers", "2"]
TOK_TOPO = ["--preset", "h200", "--servers", "2", "--gpus", "2"]


# --- plan files ---------------------------------------------------------------

def test_save_failure_keeps_the_old_file(work, tmp_path, monkeypatch):
    """A save that fails (here: the rename) leaves the file that was there
    as it was, and no temporary file beside it."""
    d, mats = work
    plan = fast.compile(h200(), fast.Traffic(mats), "fast")
    for obj in (plan, fast.Traffic(mats)):
        target = tmp_path / "kept.json"
        target.write_text("the user's file\n")

        def no_rename(src, dst):
            raise OSError(28, "No space left on device")
        monkeypatch.setattr(fast.os, "replace", no_rename)
        with pytest.raises(OSError):
            obj.save(str(target))
        monkeypatch.undo()
        assert target.read_text() == "the user's file\n"
        assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.json"]
        obj.save(str(target))
        assert target.read_text() == obj.json()


@pytest.mark.parametrize("algo,opts", [
    ("fast", {}), ("fast", {"stages": "exact", "order": "largest-first"}), ("fanout", {}),
    ("nccl", {"peers": 4}), ("pxn", {"chunk": "256K"}), ("spreadout", {}), ("hier", {}),
    ("auto", {})])
def test_plan_files_byte_identical(work, algo, opts):
    d, _ = work
    path = d / ("cli-%s.json" % algo)
    flags = sum((["--" + k, str(v)] for k, v in opts.items()), [])
    cli("plan", *TOPO, "--traffic", d / "bytes.json", "--algo", algo, *flags, "-o", path)
    plan = fast.compile(h200(), fast.Traffic.load(str(d / "bytes.json")), algo, **opts)
    mine = d / ("py-%s.json" % algo)
    plan.save(str(mine))
    assert mine.read_bytes() == path.read_bytes()
    assert fast.Plan.load(str(path)).json().encode() == path.read_bytes()


@pytest.mark.parametrize("algo,opts", [("fast", {}), ("hier", {}), ("fast", {"dedup": "gpu"}),
                                       ("auto", {})])
def test_token_plan_files_byte_identical(work, algo, opts):
    d, _ = work
    path = d / ("tok-%s.json" % algo)
    flags = sum((["--" + k, str(v)] for k, v in opts.items()), [])
    cli("plan", *TOK_TOPO, "--traffic", TOKENS, "--algo", algo, *flags, "-o", path)
    plan = fast.compile(h200(gpus=2), fast.Traffic.load(TOKENS), algo, **opts)
    assert plan.json().encode() == path.read_bytes()
    assert plan.check(fast.Traffic.load(TOKENS))


def test_arrays_equal_file(work):
    d, mats = work
    t = fast.Traffic.load(str(d / "bytes.json"))
    assert t.matrices.dtype == np.uint64
    assert np.array_equal(t.matrices, np.stack(mats).astype(np.uint64))
    a = fast.compile(h200(), mats).json()
    b = fast.compile(h200(), t).json()
    assert a == b
    assert t.labels == ["m0", "m1"] and t.kinds == ["bytes", "bytes"]


# --- sim, bound, compare ----------------------------------------------------------

@pytest.mark.parametrize("algo", ["fast", "fanout", "hier", "auto"])
def test_sim_equals_cli(work, algo):
    d, _ = work
    want = cli_json("sim", *TOPO, "--traffic", d / "bytes.json", "--algo", algo)
    got = fast.sim(h200(), fast.Traffic.load(str(d / "bytes.json")), algo=algo)
    assert got == want


def test_sim_options_equal_cli(work):
    d, _ = work
    want = cli_json("sim", *TOPO, "--traffic", d / "bytes.json", "--steps", "--sync", "rank",
                    "--no-congestion", "--stages", "exact")
    got = fast.sim(h200(), fast.Traffic.load(str(d / "bytes.json")), steps=True, sync="rank",
                   congestion=False, stages="exact")
    assert got == want
    want = cli_json("sim", *TOPO, "--traffic", d / "bytes.json", "--epsilon", "0.05")
    assert fast.sim(h200(), fast.Traffic.load(str(d / "bytes.json")), epsilon=0.05) == want
    want = cli_json("sim", *TOPO, "--traffic", d / "bytes.json", "--sync", "rank",
                    "--in-flight", "2")
    got = fast.sim(h200(), fast.Traffic.load(str(d / "bytes.json")), sync="rank", in_flight=2)
    assert got == want and got["plans"][0]["in_flight"] == 2


def test_sim_plan_file_equals_cli(work):
    d, _ = work
    cli("plan", *TOPO, "--traffic", d / "bytes.json", "--algo", "pxn", "-o", d / "p.json")
    want = cli_json("sim", *TOPO, "--plan", d / "p.json", "--traffic", d / "bytes.json")
    plan = fast.Plan.load(str(d / "p.json"))
    assert fast.sim(h200(), fast.Traffic.load(str(d / "bytes.json")), plan) == want
    want = cli_json("sim", *TOPO, "--plan", d / "p.json")  # no traffic: no bound
    assert fast.sim(h200(), plan=plan) == want


def test_sim_tokens_equal_cli():
    for algo in ("fast", "hier"):
        want = cli_json("sim", *TOK_TOPO, "--traffic", TOKENS, "--algo", algo, "--steps")
        got = fast.sim(h200(gpus=2), fast.Traffic.load(TOKENS), algo=algo, steps=True)
        assert got == want


def test_bound_equals_cli(work):
    d, _ = work
    for extra, kw in (([], {}), (["--closed-only"], {"closed_only": True})):
        want = cli_json("bound", *TOPO, "--traffic", d / "bytes.json", "--no-timing", *extra)
        assert fast.bound(h200(), fast.Traffic.load(str(d / "bytes.json")), **kw) == want
    want = cli_json("bound", *TOK_TOPO, "--traffic", TOKENS, "--no-timing")
    assert fast.bound(h200(gpus=2), fast.Traffic.load(TOKENS)) == want
    want = cli_json("bound", "--preset", "mi300x", "--servers", "1", "--traffic", TRACE,
                    "--no-timing")
    assert fast.bound(fast.Topology.preset("mi300x", 1), fast.Traffic.load(TRACE)) == want


def test_compare_equals_cli(work):
    d, _ = work
    want = cli_json("compare", *TOPO, "--traffic", d / "bytes.json", "--no-timing")
    assert fast.compare(h200(), fast.Traffic.load(str(d / "bytes.json"))) == want
    want = cli_json("compare", *TOPO, "--traffic", d / "bytes.json", "--no-timing",
                    "--algos", "nccl,fast", "--sync", "rank")
    assert fast.compare(h200(), fast.Traffic.load(str(d / "bytes.json")),
                        algos=["nccl", "fast"], sync="rank") == want
    want = cli_json("compare", *TOPO, "--traffic", d / "bytes.json", "--no-timing",
                    "--algos", "nccl,fast,auto", "--sync", "rank", "--in-flight", "2")
    assert fast.compare(h200(), fast.Traffic.load(str(d / "bytes.json")),
                        algos=["nccl", "fast", "auto"], sync="rank", in_flight=2) == want


def test_degraded_cluster_equals_cli(work):
    # --nics K and --nic S:K=F as keywords: the same topology (JSON and
    # identity), the same sim, bound and compare on it; the CLI's messages
    d, _ = work
    flags = ["--nics", "4", "--nic", "1:2=0.25", "--nic", "0:1=0.5"]
    t = fast.Topology.preset("h200", servers=2, nics=4, nic={(1, 2): 0.25, (0, 1): 0.5})
    assert t.json() == json.loads(cli("topo", "show", *TOPO, *flags).stdout)
    assert t.identity != h200().identity
    assert t.identity == fast.Topology.preset("h200", 2, nic=[(0, 1, 0.5), (1, 2, 0.25)],
                                              nics=4).identity
    traffic = fast.Traffic.load(str(d / "bytes.json"))
    for cmd, got in (("sim", lambda: fast.sim(t, traffic)),
                     ("bound", lambda: fast.bound(t, traffic)),
                     ("compare", lambda: fast.compare(t, traffic, algos=["fast", "fanout"]))):
        extra = {"sim": [], "bound": ["--no-timing"],
                 "compare": ["--no-timing", "--algos", "fast,fanout"]}[cmd]
        want = cli_json(cmd, *TOPO, *flags, "--traffic", d / "bytes.json", *extra)
        assert got() == want, cmd
    for nic, msg in (({(1, 9): 0.5}, "NIC 9 is out of range (8 NICs per server)"),
                     ({(0, 1): 1.5}, "must be in [0, 1]"),
                     ([(1, k, 0) for k in range(8)], "every NIC of server 1 is down")):
        with pytest.raises(ValueError, match=msg.replace("[", r"\[").replace("(", r"\(")
                           .replace(")", r"\)").replace("]", r"\]")):
            fast.Topology.preset("h200", 2, nic=nic)


def test_compare_tokens_equal_cli():
    # a dispatch and a combine matrix: totals per kind, then the total
    want = cli_json("compare", *TOK_TOPO, "--traffic", TOKENS, "--no-timing",
                    "--algos", "fast,hier,fast:dedup=gpu")
    got = fast.compare(h200(gpus=2), fast.Traffic.load(TOKENS),
                       algos=["fast", "hier", "fast:dedup=gpu"])
    assert got == want


@pytest.mark.parametrize("mean", ["4K", "256M"])
def test_compare_auto_row_equals_cli(tmp_path, mean):
    # auto's row: the chosen schedule (a baseline at 4 KiB, FAST at 256 MiB),
    # its predictions and every candidate's; auto first, so its row gives the bound
    t = tmp_path / "t.json"
    cli("gen", "--preset", "h200", "--servers", "2", "--gpus", "4", "--pattern", "zipf",
        "--mean-bytes", mean, "-o", t)
    topo = ["--preset", "h200", "--servers", "2", "--gpus", "4"]
    want = cli_json("compare", *topo, "--traffic", t, "--no-timing", "--algos",
                    "auto,fast,fanout,hier")
    got = fast.compare(h200(gpus=4), fast.Traffic.load(str(t)),
                       algos=["auto", "fast", "fanout", "hier"])
    assert got == want
    assert "candidates" in got["matrices"][0]["algorithms"][0]


def test_compare_auto_row_options_and_tokens_equal_cli(work):
    d, _ = work
    want = cli_json("compare", *TOPO, "--traffic", d / "bytes.json", "--no-timing",
                    "--algos", "fast,auto,auto:stages=exact", "--sync", "rank")
    got = fast.compare(h200(), fast.Traffic.load(str(d / "bytes.json")),
                       algos="fast,auto,auto:stages=exact", sync="rank")
    assert got == want
    # token traffic: the evaluated choice, candidates named with their dedup,
    # no auto fields in the per-kind totals
    for extra in ([], ["--no-congestion"]):
        want = cli_json("compare", *TOK_TOPO, "--traffic", TOKENS, "--no-timing",
                        "--algos", "fast,auto", *extra)
        got = fast.compare(h200(gpus=2), fast.Traffic.load(TOKENS), algos=["fast", "auto"],
                           congestion=not extra)
        assert got == want


# --- check, programs ----------------------------------------------------------------

def test_check_failure_carries_cli_message(work):
    d, mats = work
    cli("plan", *TOPO, "--traffic", d / "bytes.json", "-o", d / "p0.json")
    other = [m + 512 for m in mats]
    fast.Traffic(other).save(str(d / "other.json"))
    r = cli("check", *TOPO, "--plan", d / "p0.json", "--traffic", d / "other.json", ok=False)
    assert r.returncode == 1
    first = r.stdout.splitlines()[0]  # plan 0 (m0, matrix 0): FAIL: ...
    plan = fast.Plan.load(str(d / "p0.json"))
    with pytest.raises(fast.CheckError) as e:
        plan.check(fast.Traffic(other), h200())
    assert str(e.value) == first.replace(": FAIL: ", ": ", 1)
    assert e.value.status == 1
    assert plan.check(fast.Traffic(mats), h200())


def test_traffic_tokens_equals_the_file():
    # the bundled dispatch matrix from its groups: the same bytes and kind,
    # and a token program of the per-group kind; bad groups: the loader's message
    t = fast.Traffic.tokens(4, [(0, [1, 2, 3], 3), (2, [0, 1], 2)], 4)
    f = fast.Traffic.load(TOKENS)
    assert t.kinds == ["dispatch"] and np.array_equal(t.matrix(0), f.matrix(0))
    c = fast.Traffic.tokens(4, [(0, [1, 2, 3], 3), (2, [0, 2], 2)], 4, "combine")
    assert c.kinds == ["combine"] and np.array_equal(c.matrix(0), f.matrix(1))
    prog = fast.compile(h200(gpus=2), t).program(t, 0)
    assert prog["info"]["kind"] == "dispatch" and prog["info"]["nmsgs"] == 2
    with pytest.raises(fast.InputError) as e:
        fast.Traffic.tokens(4, [(0, [3, 1], 2)], 8)
    assert "ascending" in str(e.value)
    with pytest.raises(fast.InputError):
        fast.Traffic.tokens(4, [(0, [1], 2)], 8, "bytes")


def test_program_delivers_the_column(work):
    _, mats = work
    D = mats[0].astype(np.uint64)
    plan = fast.compile(h200(), D)
    for rank in (0, 5, 15):
        p = plan.program(fast.Traffic(D), rank)
        assert p["info"]["rank"] == rank and p["info"]["ng"] == 16 and p["info"]["kind"] == "bytes"
        assert p["waves"].shape == (p["info"]["nwaves"], 8)
        # bytes landing in the receive buffer: receives and copies into it
        got = p["recvs"][p["recvs"][:, 2] == 1][:, 5].sum() + \
            p["copies"][p["copies"][:, 0] == 1][:, 6].sum()
        assert got == D[:, rank].sum()
        sent = p["sends"][p["sends"][:, 2] == 0][:, 5].sum() + \
            p["copies"][(p["copies"][:, 3] == 0) & (p["copies"][:, 0] != 2)][:, 6].sum()
        assert sent >= D[rank].sum() - D[rank, rank]


# --- errors: the command's messages, never a crash -----------------------------------

def test_errors_carry_cli_messages(work, tmp_path):
    d, _ = work
    bad = tmp_path / "bad.json"
    bad.write_text('{"x": 1}')
    status, msg = cli_error("bound", "--topo", bad, "--traffic", d / "bytes.json")
    with pytest.raises(fast.InputError) as e:
        fast.Topology.load(str(bad))
    assert (e.value.status, str(e.value)) == (status, msg)
    assert isinstance(e.value, ValueError)

    status, msg = cli_error("bound", *TOPO, "--traffic", bad)
    with pytest.raises(fast.InputError) as e:
        fast.Traffic.load(str(bad))
    assert (e.value.status, str(e.value)) == (status, msg)

    status, msg = cli_error("bound", "--preset", "nope", "--servers", "2", "--traffic",
                            d / "bytes.json")
    with pytest.raises(fast.InputError) as e:
        fast.Topology.preset("nope", 2)
    assert (e.value.status, str(e.value)) == (status, msg)

    for flags, kw in ((["--algo", "fsat"], {"algo": "fsat"}),
                      (["--stages", "bogus"], {"stages": "bogus"}),
                      (["--algo", "fanout", "--stages", "exact"], {"algo": "fanout", "stages": "exact"})):
        status, msg = cli_error("plan", *TOPO, "--traffic", d / "bytes.json", *flags, "-o",
                                tmp_path / "x.json")
        with pytest.raises(fast.InputError) as e:
            fast.compile(h200(), fast.Traffic.load(str(d / "bytes.json")), **kw)
        assert (e.value.status, str(e.value)) == (status, msg)

    status, msg = cli_error("plan", "--preset", "h200", "--servers", "3", "--traffic",
                            d / "bytes.json", "-o", tmp_path / "x.json")
    with pytest.raises(fast.InputError) as e:
        fast.compile(fast.Topology.preset("h200", 3), fast.Traffic.load(str(d / "bytes.json")))
    assert msg.startswith(str(e.value) + ": give --servers")  # the command adds a hint


@pytest.mark.parametrize("bad", [
    [[1, 2], [3]], np.zeros((2, 3)), np.zeros((0, 0)), [[-1, 0], [0, 0]], [[0.5, 0], [0, 0]],
    [[float("nan"), 0], [0, 0]], [["a", "b"], ["c", "d"]], np.full((2, 2), 1 << 60, np.uint64),
    [np.zeros((2, 2)), np.zeros((3, 3))]])
def test_bad_traffic_raises(bad):
    with pytest.raises(fast.InputError):
        fast.Traffic(bad)


def test_nothing_crashes(tmp_path):
    t = h200()
    with pytest.raises(fast.InputError):
        fast.Topology.parse("")
    with pytest.raises(fast.InputError):
        fast.Traffic.parse("{")
    with pytest.raises(fast.InputError):
        fast.Plan.parse("[]")
    with pytest.raises(fast.Error):
        fast.Plan.load(str(tmp_path / "missing.json"))
    with pytest.raises(fast.InputError):
        fast.compile(t, np.ones((4, 4), np.int64))  # 4 GPUs on 16
    with pytest.raises(fast.InputError):
        fast.compile(t, np.ones((16, 16), np.int64), bogus=1)
    with pytest.raises(fast.InputError):
        fast.sim(t)
    plan = fast.compile(t, np.ones((16, 16), np.int64))
    with pytest.raises(fast.InputError):
        plan.program(fast.Traffic(np.ones((16, 16), np.int64)), 99)
    with pytest.raises(fast.InputError):
        fast.sim(t, np.ones((16, 16)), plan, sync="never")
    with pytest.raises(fast.InputError):
        fast.sim(t, np.ones((16, 16)), plan, sync="rank", in_flight=3)
    with pytest.raises(fast.InputError):
        fast.sim(t, np.ones((16, 16)), plan, sync="step", in_flight=2)  # by rank only
    with pytest.raises(fast.InputError):
        fast.sim(fast.Topology.preset("h200", 4), plan=plan)  # 32 GPUs against 16
    big = np.full((16, 16), 1 << 53, np.uint64)
    with pytest.raises(fast.InputError):
        fast.Traffic([big] * 300)  # the total overflows 64 bits
