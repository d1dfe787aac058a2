#!/usr/bin/env python3
"""The tour of the README and the docs, run from an installed prefix outside
the checkout, compared with what the documents show.

    readme_tour.py PREFIX ROOT

Every `<!-- run: COMMAND -->` block of ROOT's README.md and docs/*.md (the
ones scripts/readme_tour.py refreshes, in its order: README.md,
docs/guide.md, then the other documents) is run with PREFIX/bin first on the PATH,
in a fresh directory that holds only:
  - traces -> PREFIX/share/fast/traces (the installed traces),
  - copies of the few repository files the tour uses as a user's own inputs
    (a broken plan of the golden tests and a broken token plan, the token
    bound's topology and traffic, nccl-tests outputs for calibrate,
    a gate baseline), at the same relative paths.
Paths under /tmp/ in a command are moved into that directory.  The output
must equal the README's block line for line, with every number equal,
except in measured values: lines that report a measured time (synthesis,
solve and run times, bandwidths of fast run) have their numbers masked,
and a block run under mpirun is compared by structure (numbers masked).
Blocks that need the checkout itself (scripts/demo.sh, which
tests/install/run.sh checks through make demo's outputs) are skipped, each
said.  Prints one line per block and "N passed, N failed"; exit 1 on a
difference.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

prefix, root = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
docs = sorted(f for f in os.listdir(os.path.join(root, "docs")) if f.endswith(".md"))
docs.remove("guide.md")
blocks = []
for name in ["README.md", "docs/guide.md"] + ["docs/" + f for f in docs]:
    text = open(os.path.join(root, name)).read()
    blocks += [(name, c, s) for c, s in
               re.findall(r"<!-- run: ([^\n]*?) -->\n```console\n(.*?)```", text, re.S)]

# repository files the tour reads as the user's own inputs
FIXTURES = ["tests/golden/check_fail_missing_dependency", "tests/golden/check_token_fail",
            "tests/golden/bound_tokens", "tests/data/calib", "tests/data/calibrate",
            "results/gate"]
# lines whose numbers are measurements, not results
MEASURED = re.compile(r"synthesis|solve|took|elapsed|\bin [0-9.]+ ?(s|ms|us)\b|wall|cpu", re.I)
NUM = re.compile(r"[-+]?\d+(\.\d+)?([eE][-+]?\d+)?")

work = tempfile.mkdtemp(prefix="fast-tour-")
os.symlink(os.path.join(prefix, "share/fast/traces"), os.path.join(work, "traces"))
for f in FIXTURES:
    src, dst = os.path.join(root, f), os.path.join(work, f)
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    shutil.copytree(src, dst) if os.path.isdir(src) else shutil.copy(src, dst)
tmp = os.path.join(work, "tmp")
os.makedirs(tmp)
env = dict(os.environ, PATH=os.path.join(prefix, "bin") + os.pathsep + os.environ["PATH"],
           OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_btl_vader_single_copy_mechanism="none")
env.pop("FAST_DATA_DIR", None)


def mask(line):
    # a measured number's width moves the columns after it
    return re.sub(r" +", " ", NUM.sub("N", line))


def normal(out, structure):
    lines = out.rstrip("\n").split("\n")
    return [mask(l) if structure or MEASURED.search(l) else l for l in lines]


passed = failed = 0
for doc, cmd, shown in blocks:
    cmd = cmd.split(" # ")[0].strip()
    if "scripts/" in cmd or "build/bin" in cmd:
        print("skip %s (needs the checkout)" % cmd[:60])
        continue
    run = cmd.replace("/tmp/", tmp + "/")
    p = subprocess.run(["bash", "-c", run], cwd=work, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=600)
    got = ("$ " + cmd + "\n" + p.stdout.replace(tmp + "/", "/tmp/")).replace(work + "/", "")
    structure = "mpirun" in cmd
    want_l, got_l = normal(shown, structure), normal(got, structure)
    if want_l == got_l:
        passed += 1
        print("ok   %s" % cmd[:90])
        continue
    failed += 1
    print("FAIL %s" % cmd[:90])
    for i in range(max(len(want_l), len(got_l))):
        w = want_l[i] if i < len(want_l) else "<none>"
        g = got_l[i] if i < len(got_l) else "<none>"
        if w != g:
            print("   %s: %s\n   got:    %s" % (doc, w, g))
            break
shutil.rmtree(work)
print("tour: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
