#!/usr/bin/python3
"""examples/attention against the float64 numpy reference (tools/reference.py).

    /usr/bin/python3 tests/attention/attention_check.py [PATH/TO/attention]

(default examples/attention, built with make if missing). For fixtures of every attention rule
(DIFF, DINT with softmax and mean integrals, Grouped-DIFF, Shared-DIFF, token lambda, standard)
and the shipped model on a short text: the reference's W (forward(..., return_attn=True)) and
its parts (terms=: A1, A2, I, lambda) are summarised here in numpy -- span and rest mass,
negative sum and share, row sum, entropy of |W|, lambda, averaged over the query positions --
and each layer's and head's number must be within 1e-4 of the program's JSON, as must the rows
(W, A1, A2, I) it prints. The SVG must parse (xml.etree) and carry the JSON's numbers: every
heatmap cell's data-value and every bar's. Prints one line per failed check and
"attention_check: N passed, M failed" last; exits non-zero on any failure. Without numpy it
prints "attention_check: skipped"."""

import json
import os
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import checklib  # noqa: E402  (tests/checklib.py: check, report, run, import_or_skip)
from checklib import ROOT, FX, KJV, check, manifest_ids  # noqa: E402
np, reference = checklib.import_or_skip("attention_check", "numpy", "reference")  # tools/reference.py

BIN = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(ROOT, "examples", "attention")
TMP = tempfile.mkdtemp(prefix="attention_check.")
SVG_NS = "{http://www.w3.org/2000/svg}"
METRICS = ["span_mass", "rest_mass", "sum", "neg_sum", "neg_share", "entropy", "lambda"]
TOL = 1e-4

def run(*args):
    return checklib.run(BIN, args).stdout


def row_stats(w, spans):
    """The metrics of one row w[0..n) with key spans [a, b) (clipped, overlaps once)."""
    n = len(w)
    inside = np.zeros(n, dtype=bool)
    for a, b in spans:
        inside[max(0, a):min(n, b)] = True
    absw = np.abs(w)
    p = absw / absw.sum()
    p = p[p > 0]
    return {"sum": w.sum(), "neg_sum": w[w < 0].sum(), "neg_share": np.count_nonzero(w < 0) / n,
            "entropy": -(p * np.log(p)).sum(), "span_mass": w[inside].sum(), "rest_mass": w[~inside].sum()}


def expected(model, ids, spans, pos_from, pos_to):
    """{(layer, head): metrics averaged over the query positions} and the reference's parts."""
    _, attn, terms = reference.forward(model, ids, return_attn=True, return_terms=True)
    want = {}
    for l, W in enumerate(attn):
        for h in range(W.shape[0]):
            rows = [row_stats(W[h, p, :p + 1], spans) for p in range(pos_from, pos_to)]
            m = {k: float(np.mean([r[k] for r in rows])) for k in rows[0]}
            lam = np.broadcast_to(terms[l]["lambda"], (W.shape[0], W.shape[1], 1))  # a scalar, or per head and row
            m["lambda"] = float(np.mean(lam[h, pos_from:pos_to, 0]))
            want[(l, h)] = m
    return want, attn, terms


def check_svg(what, svg_path, doc):
    """The SVG parses; its heatmap cells are the JSON's metric, its bars the JSON's rows."""
    try:
        root = ET.parse(svg_path).getroot()
    except ET.ParseError as e:
        return check(what + ": the SVG does not parse", False, str(e))
    check(what + ": the SVG's root", root.tag == SVG_NS + "svg")
    heads = {(h["layer"], h["head"]): h for h in doc["heads"]}
    heat = root.find(".//%sg[@id='heatmap']" % SVG_NS)
    metric = heat.get("data-metric")
    cells = [r for r in heat.iter(SVG_NS + "rect") if r.get("class") == "cell"]
    check(what + ": one heatmap cell per head", len(cells) == len(heads), "%d cells, %d heads" % (len(cells), len(heads)))
    bad = [c.attrib for c in cells
           if float(c.get("data-value")) != heads[(int(c.get("data-layer")), int(c.get("data-head")))][metric]]
    check(what + ": the heatmap's values are the JSON's " + metric, not bad, str(bad[:2]))
    rows = [g for g in root.iter(SVG_NS + "g") if g.get("class") == "row"]
    layer = int(root.get("data-svg-layer"))
    n_bars = 0
    for g in rows:
        h = heads[(int(g.get("data-layer")), int(g.get("data-head")))]
        got = [float(r.get("data-value")) for r in g.iter(SVG_NS + "rect") if r.get("data-value") is not None]
        n_bars += len(got)
        check(what + ": bars of layer %s head %s %s" % (g.get("data-layer"), g.get("data-head"), g.get("data-term")),
              int(g.get("data-layer")) == layer and h[g.get("data-term")] == got)
    n_terms = sum(1 for t in ("W", "A1", "A2", "I") if doc["heads"][0][t] is not None)
    n_heads_layer = sum(1 for k in heads if k[0] == layer)
    check(what + ": every bar drawn", n_bars == n_heads_layer * n_terms * (doc["query_positions"][1]),
          "%d bars" % n_bars)
    return root


def check_model(what, model, args, ids, spans, pos_from, pos_to):
    svg = os.path.join(TMP, "fig.svg")
    doc = json.loads(run(model, *args, "--json", "--precision", "exact", "--svg", svg))
    got_ids = [t["id"] for t in doc["tokens"]]
    if ids is None:
        ids = got_ids
    check(what + ": the ids", got_ids == ids)
    check(what + ": the spans", [list(s) for s in spans] == doc["spans"], str(doc["spans"]))
    check(what + ": the positions", doc["query_positions"] == [pos_from, pos_to])
    want, attn, terms = expected(model, ids, spans, pos_from, pos_to)
    check(what + ": every layer and head", len(doc["heads"]) == len(want))
    worst = (0.0, "")
    for h in doc["heads"]:
        m = want[(h["layer"], h["head"])]
        for k in METRICS:
            d = abs(h[k] - m[k])
            if d > worst[0]:
                worst = (d, "layer %d head %d %s: %.9g, reference %.9g" % (h["layer"], h["head"], k, h[k], m[k]))
        p = pos_to - 1
        for t, ref in (("W", attn[h["layer"]]), ("A1", terms[h["layer"]]["A1"]), ("A2", terms[h["layer"]]["A2"]),
                       ("I", terms[h["layer"]]["I"])):
            if ref is None:
                check(what + ": no %s row" % t, h[t] is None)
                continue
            d = float(np.max(np.abs(np.asarray(h[t]) - ref[h["head"], p, :p + 1])))
            if d > worst[0]:
                worst = (d, "layer %d head %d row %s differs by %.3g" % (h["layer"], h["head"], t, d))
    check(what + ": metrics and rows within %g of the reference" % TOL, worst[0] <= TOL, worst[1])
    check_svg(what, svg, doc)
    return doc


def main():
    checklib.make_if_missing([BIN], ["examples/attention"])
    # fixtures of each rule: the whole text's last rows, then several positions averaged
    for name in ["dint_softmax_f32", "dint_mean_f16", "dint_grouped_mean_f32", "diff_interleaved_f32",
                 "grouped_diff_g2_f32", "shared_diff_r2_f32", "v11_dint_token_shared_k_bf16",
                 "standard_gqa_halves_f32"]:
        ids = manifest_ids(name)
        n = len(ids)
        model = os.path.join(FX, name + ".safetensors")
        check_model(name, model, ["--ids", ",".join(map(str, ids)), "--span", "2:5"], ids, [(2, 5)], n - 1, n)
        check_model(name + " --pos", model, ["--ids", ",".join(map(str, ids)), "--span", "1:3", "--span", "2:6",
                                            "--pos", "%d:%d" % (n // 2, n - 2)], ids, [(1, 3), (2, 6)], n // 2, n - 2)
    # the shipped model and a short text; --span-text finds the tokens of the text's bytes
    if os.path.exists(KJV):
        text = "In the beginning God created the heaven and the earth. And God said, Let there be light: and there was light."
        doc = json.loads(run(KJV, "-p", text, "--span-text", "the earth", "--json"))
        a, b = doc["spans"][0]
        toks = [t["text"] or "" for t in doc["tokens"]]
        check("kjv: --span-text covers 'the earth' and no more", "the earth" in "".join(toks[a:b]) and
              "the earth" not in "".join(toks[a + 1:b]) and "the earth" not in "".join(toks[a:b - 1]), str((a, b, toks[a:b])))
        n = doc["n_tokens"]
        check_model("kjv", KJV, ["-p", text, "--span-text", "the earth", "--pos", "%d:%d" % (b, n)], None, [(a, b)], b, n)
    # token texts with XML's special characters, control bytes and invalid UTF-8: the SVG parses
    tok = os.path.join(FX, "tok_model.safetensors")
    path = os.path.join(TMP, "ctl.txt")
    with open(path, "wb") as f:
        f.write(b"<a>&\"'\x01\t\n\xff\xfe \xef\xbf\xbe")
    svg = os.path.join(TMP, "ctl.svg")
    run(tok, "-f", path, "--svg", svg)
    try:
        root = ET.parse(svg).getroot()
        labels = "".join("".join(t.itertext()) for t in root.iter(SVG_NS + "text") if t.get("data-key") is not None)
        check("escaped labels", "<" in labels and "&" in labels and "\\x01" in labels and "\\xFF" in labels, labels)
    except ET.ParseError as e:
        check("an SVG of odd bytes parses", False, str(e))
    return checklib.report("attention_check")


if __name__ == "__main__":
    sys.exit(main())
