#!/usr/bin/python3
"""examples/activations against the float64 numpy reference (tools/reference.py).

    /usr/bin/python3 tests/activations/activations_check.py [PATH/TO/activations]

(default examples/activations, built with make if missing). For a random model of every family
(standard, DIFF, DINT, Shared-DIFF, Grouped-DIFF, and DINT with token lambda and shared keys) and
the shipped model, the reference's forward pass is run here layer by layer in float64 -- its own
projections, RoPE, attention and FFN (reference.project_qk, rope, attention, ffn, rms_norm) -- and
each layer's elements are taken as docs/computing.md ("Activation statistics") defines them: the
logits q1.k1/sqrt(d) of every head over the keys each query sees, q2.k2/sqrt(d) of every distinct
noise map (a (Q2 head, K2 head) pair), the FFN's input RMSNorm(x) * ffn_norm and the residual
stream after the layer. Their statistics, computed here (sorting, moments about the mean), must
match the program's JSON (run with --precision exact and every magnitude kept): counts exactly;
the top-1, std and mean within 1e-4 relative (the engine's f32 tolerance against the reference;
of |mean| + std for the mean), every one of the sorted magnitudes within 1e-4 of the largest; the median within 2^-8 + 1e-4 relative (its
histogram's bound, docs/computing.md, on top of that); the ratio and the kurtosis within 1e-3
(quotients and fourth powers of those). Prints one line per failed check and
"activations_check: N passed, M failed" last; exits non-zero on any failure. Without numpy it
prints "activations_check: skipped"."""

import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import checklib  # noqa: E402  (tests/checklib.py: check, report, run, import_or_skip)
from checklib import ROOT, FX, KJV, check, manifest_ids  # noqa: E402
np, reference = checklib.import_or_skip("activations_check", "numpy", "reference")  # tools/reference.py

BIN = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(ROOT, "examples", "activations")
FAMILIES = ["standard_gqa_halves_f32", "diff_interleaved_f32", "dint_softmax_f32", "shared_diff_r2_f32",
            "grouped_diff_g2_f32", "v11_dint_token_shared_k_bf16"]
KINDS = ["logits1", "logits2", "ffn_in", "hidden"]
TOL, TOL_MEDIAN, TOL_DERIVED = 1e-4, 2.0 ** -8 + 1e-4, 1e-3
TOP_K = 65536


def elements(path, ids):
    """Per layer, {kind: the float64 elements (flat)}: the reference's forward pass, opened up."""
    cfg, t = reference.load(path)
    H, d = cfg["n_heads"], cfg["head_dim"]
    N, s, eps = len(ids), 1.0 / math.sqrt(d), cfg["norm_eps"]
    i = np.arange(H)
    causal = np.tril(np.ones((N, N), dtype=bool))
    if cfg["rope"] != "none":
        inv, af = reference.rope_inv_freq(cfg)

    def rot(z):
        return z if cfg["rope"] == "none" else reference.rope(z, cfg["rope"], inv, af)

    x = t["tok_embeddings.weight"][np.asarray(ids)]
    out = []
    for l in range(cfg["n_layers"]):
        pre = f"layers.{l}.attn."
        h = reference.rms_norm(x, t[f"layers.{l}.attn_norm.weight"], eps)
        q1 = rot(reference.project_qk(h, t, pre, "q1", H, cfg))
        k1 = rot(reference.project_qk(h, t, pre, "k1", cfg["n_k1_heads"], cfg))
        z1 = np.einsum("nhd,mhd->hnm", q1, k1[:, i * cfg["n_k1_heads"] // H]) * s   # [H, N, N]
        acts = {"logits1": z1[:, causal].ravel(), "logits2": None}
        if cfg["attention"] != "standard":
            q2 = rot(reference.project_qk(h, t, pre, "q2", cfg["n_q2_heads"], cfg))
            k2 = k1 if cfg["shared_k"] else rot(reference.project_qk(h, t, pre, "k2", cfg["n_k2_heads"], cfg))
            maps = sorted({(a * cfg["n_q2_heads"] // H, a * cfg["n_k2_heads"] // H) for a in range(H)})
            acts["logits2"] = np.concatenate(
                [(np.einsum("nd,md->nm", q2[:, a], k2[:, b]) * s)[causal] for a, b in maps])
        a, _, _ = reference.attention(h, t, l, cfg)
        x = x + a
        f_in = reference.rms_norm(x, t[f"layers.{l}.ffn_norm.weight"], eps)
        x = x + reference.ffn(f_in, t, l, cfg)
        acts["ffn_in"], acts["hidden"] = f_in.ravel(), x.ravel()
        out.append(acts)
    return out


def near(got, want, tol):
    return got is not None and abs(got - want) <= tol * abs(want)


def compare(name, path, ids, args):
    got = json.loads(checklib.run(BIN, [path] + args + ["--json", "--precision", "exact", "--top-k", TOP_K]).stdout)
    model = got["models"][0]
    check(name + ": the tokens", model["n_tokens"] == len(ids), str(model["n_tokens"]))
    for l, acts in enumerate(elements(path, ids)):
        for kind in KINDS:
            g, x = model["layers"][l][kind], acts[kind]
            what = "%s layer %d %s" % (name, l, kind)
            if x is None:
                check(what + ": null for standard attention", g is None)
                continue
            mags = np.sort(np.abs(x))[::-1]
            n = len(x)
            median = mags[n - (n + 1) // 2]
            mean = x.mean()
            m2, m4 = ((x - mean) ** 2).mean(), ((x - mean) ** 4).mean()
            std, kurt = math.sqrt(m2), m4 / (m2 * m2)
            if not check(what + ": count", g["count"] == n, "%d, want %d" % (g["count"], n)):
                continue
            top = np.asarray(g["top"])
            k = min(TOP_K, n)
            scale = max(1.0, mags[0])  # the reviewers' measure: errors against the largest, small ones included
            err = np.max(np.abs(top - mags[:k])) / scale if len(top) == k else float("inf")
            check(what + ": top-k", err <= TOL, "worst %.3g of the largest" % err)
            check(what + ": top1", near(g["top1"], mags[0], TOL), "%r, want %.9g" % (g["top1"], mags[0]))
            check(what + ": median", near(g["median"], median, TOL_MEDIAN), "%r, want %.9g" % (g["median"], median))
            check(what + ": ratio", near(g["ratio"], mags[0] / median, TOL_DERIVED))
            check(what + ": mean", abs(g["mean"] - mean) <= TOL * (abs(mean) + std), "%r, want %.9g" % (g["mean"], mean))
            check(what + ": std", near(g["std"], std, TOL), "%r, want %.9g" % (g["std"], std))
            check(what + ": kurtosis", near(g["kurtosis"], kurt, TOL_DERIVED), "%r, want %.9g" % (g["kurtosis"], kurt))


def main():
    checklib.make_if_missing([BIN], ["examples/activations"])
    for name in FAMILIES:
        ids = manifest_ids(name)
        compare(name, os.path.join(FX, name + ".safetensors"), ids, ["--ids", ",".join(map(str, ids))])
    if os.path.exists(KJV):  # the shipped model, its own ids (no tokenizer needed here)
        ids = [1, 450, 6, 35, 700, 12, 98, 300, 4, 77, 1001, 5, 60, 2, 31, 9]
        compare("dint-kjv", KJV, ids, ["--ids", ",".join(map(str, ids))])
    return checklib.report("activations_check")


if __name__ == "__main__":
    sys.exit(main())
