"""What the tests of tests/python share: the repository root, the python/
folder the package is imported from (FAST_PYTHONPATH overrides it, as
run.sh sets it), and the rule for tests that need python3-torch: a skip
without it, except in CI (CI=true), where scripts/deps.sh installs it and
its absence is a failure."""
import importlib.util
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYTHONPATH = os.environ.get("FAST_PYTHONPATH", os.path.join(ROOT, "python"))


def need_torch():
    """Call at a test module's top: skips the module without torch."""
    if importlib.util.find_spec("torch") is None:
        if os.environ.get("CI") == "true":
            raise ImportError("python3-torch is missing in CI (scripts/deps.sh installs it)")
        pytest.skip("python3-torch not installed (CI=true bash scripts/deps.sh installs it)",
                    allow_module_level=True)
