"""What the examples' Python checks share (tests/attention/attention_check.py,
tests/needle/needle_check.py, tests/score/score_check.py): the repository's root, counting checks
and the "NAME: N passed, M failed" line, importing numpy and tools/ modules (or skipping), building
a missing example and running one, a fixture's ids from tests/fixtures/manifest.txt.

A check imports it with
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import checklib  # noqa: E402  (tests/checklib.py)"""

import importlib
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FX = os.path.join(ROOT, "tests", "fixtures")
KJV = os.path.join(ROOT, "models", "dint-kjv.safetensors")

passed = failed = 0


def check(what, cond, detail=""):
    """Counts one check; prints "FAIL: what: detail" when cond is false. Returns cond."""
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL: %s%s" % (what, (": " + detail) if detail else ""))
    return cond


def report(name):
    """Prints "name: N passed, M failed"; returns the exit status (1 if any failed)."""
    print("%s: %d passed, %d failed" % (name, passed, failed))
    return 1 if failed else 0


def import_or_skip(name, *modules):
    """The modules (numpy, or tools/ ones such as reference), in order; without one of them prints
    "name: skipped (no module X)" and exits 0."""
    if os.path.join(ROOT, "tools") not in sys.path:
        sys.path.insert(0, os.path.join(ROOT, "tools"))
    try:
        return [importlib.import_module(m) for m in modules]
    except ModuleNotFoundError as e:
        print("%s: skipped (no module %s)" % (name, e.name))
        sys.exit(0)


def make_if_missing(paths, targets):
    """Builds the make targets (quietly, at the root) when any of paths does not exist."""
    if not all(os.path.exists(p) for p in paths):
        subprocess.run(["make", "-s", "-C", ROOT] + list(targets), check=True, stdout=subprocess.DEVNULL)


def run(binary, args, expect_ok=True):
    """Runs binary with args (made strings), text output captured; with expect_ok a non-zero exit
    raises RuntimeError with its stderr."""
    p = subprocess.run([binary] + [str(a) for a in args], capture_output=True, text=True)
    if expect_ok and p.returncode != 0:
        raise RuntimeError("%s %s failed: %s" % (os.path.basename(binary), " ".join(map(str, args)), p.stderr.strip()))
    return p


def manifest_ids(name):
    """The token ids tests/fixtures/manifest.txt lists for fixture `name`."""
    with open(os.path.join(FX, "manifest.txt")) as f:
        for line in f:
            parts = line.split()
            if parts and parts[0] == name:
                return [int(x) for x in parts[1].split(",")]
    raise KeyError(name)
