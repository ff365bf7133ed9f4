#!/usr/bin/python3
"""examples/needle's SVG heatmap against its JSON grid, read with real parsers: the SVG must parse
as XML (xml.etree) with the model's and the filler's names in it as given (so they were escaped:
the names here have & < > ' " in them), one cell per depth and length whose data-value,
data-correct and data-total are the JSON grid's (and its text the value to 2 decimals), and a
mean row of each length's accuracy over all depths. The JSON must parse too (json), with as many
samples as the grid counts.

    /usr/bin/python3 tests/needle/needle_check.py [PATH/TO/needle]

(default examples/needle, built with make if missing). Prints one line per failed check and
"needle_check: N passed, M failed" last; exits non-zero on any failure."""

import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import checklib  # noqa: E402  (tests/checklib.py: check, report, run, import_or_skip)
from checklib import ROOT, KJV, check  # noqa: E402

NEEDLE = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(ROOT, "examples", "needle")
SVG = "{http://www.w3.org/2000/svg}"


def run(args):
    env = dict(os.environ, OPENBLAS_CORETYPE=os.environ.get("OPENBLAS_CORETYPE", "Haswell"))
    return subprocess.run([NEEDLE] + args, cwd=ROOT, env=env, capture_output=True)


def main():
    checklib.make_if_missing([NEEDLE], ["examples/needle"])
    tmp = tempfile.mkdtemp(prefix="needle_check.")
    odd = os.path.join(tmp, "m&<b>'\"x.safetensors")
    os.symlink(KJV, odd)
    filler = os.path.join(tmp, "f&<i>.txt")
    with open(filler, "w") as f:
        f.write("And God said, Let there be light: and there was light.\n")
    cases = [
        ([KJV, "--lengths", "96,160", "--depths", "0,50,100", "--needles", "2", "--samples", "2"], KJV, None),
        ([odd, "--lengths", "120", "--depths", "10,90", "--needles", "1", "--asked", "1", "--samples", "1",
          "--filler", filler], odd, filler),
    ]
    for k, (args, model, fill) in enumerate(cases):
        svg_path = os.path.join(tmp, "out%d.svg" % k)
        r = run(args + ["--json", "--svg", svg_path])
        check("run %d" % k, r.returncode == 0, r.stderr.decode(errors="replace"))
        if r.returncode:
            continue
        try:
            doc = json.loads(r.stdout)
        except ValueError as e:
            check("run %d: the JSON parses" % k, False, str(e))
            continue
        try:
            root = ET.parse(svg_path).getroot()
        except ET.ParseError as e:
            check("run %d: the SVG parses as XML" % k, False, str(e))
            continue
        check("run %d: an svg root" % k, root.tag == SVG + "svg", root.tag)
        texts = ["".join(t.itertext()) for t in root.iter(SVG + "text")] + ["".join(t.itertext()) for t in root.iter(SVG + "title")]
        check("run %d: the model's name, escaped and read back" % k, any(model in t for t in texts))
        if fill:
            check("run %d: the filler's name, escaped and read back" % k, any(fill in t for t in texts))
        grid = {(float(c["depth"]), int(c["length"])): c for c in doc["grid"]}
        check("run %d: the JSON grid has every cell" % k,
              len(grid) == len(doc["grid"]) == len(doc["depths"]) * len(doc["lengths"]))
        check("run %d: the JSON has every sample" % k,
              len(doc["samples"]) == sum(c["total"] for c in doc["grid"]) == len(grid) * doc["samples_per_cell"])
        cells = [g for g in root.iter(SVG + "g") if g.get("class") == "cell"]
        check("run %d: one SVG cell per grid cell" % k, len(cells) == len(grid), "%d vs %d" % (len(cells), len(grid)))
        for g in cells:
            key = (float(g.get("data-depth")), int(g.get("data-length")))
            c = grid.get(key)
            if c is None:
                check("run %d: SVG cell %s in the grid" % (k, key), False)
                continue
            check("run %d: cell %s: data-value" % (k, key), float(g.get("data-value")) == c["accuracy"],
                  "%s vs %s" % (g.get("data-value"), c["accuracy"]))
            check("run %d: cell %s: counts" % (k, key),
                  int(g.get("data-correct")) == c["correct"] and int(g.get("data-total")) == c["total"])
            check("run %d: cell %s: accuracy = correct / total" % (k, key), c["accuracy"] == c["correct"] / c["total"])
            label = "".join(g.find(SVG + "text").itertext())
            check("run %d: cell %s: its text" % (k, key), label == "%.2f" % c["accuracy"], label)
        means = {int(g.get("data-length")): g for g in root.iter(SVG + "g") if g.get("class") == "mean"}
        check("run %d: a mean per length" % k, sorted(means) == sorted(doc["lengths"]))
        for L, g in means.items():
            cr = sum(c["correct"] for (d, l), c in grid.items() if l == L)
            tt = sum(c["total"] for (d, l), c in grid.items() if l == L)
            check("run %d: mean of %d" % (k, L), float(g.get("data-value")) == cr / tt and int(g.get("data-total")) == tt)
    sys.exit(checklib.report("needle_check"))


main()
