"""Shared helpers for the converter tests (tests/convert/test_*.py).

Run any test as `/usr/bin/python3 tests/convert/test_NAME.py`; each prints one line per case
and a final "NAME: N passed, M failed", and exits non-zero on any failure.  Safetensors files
are written and read with tools/safetensors_io.py (`common.st`)."""

import json
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import safetensors_io as st  # noqa: E402  (tools/safetensors_io.py: the tools' safetensors reader/writer)
CONVERT = os.path.join(ROOT, "tools", "convert.py")
LOGITS = os.path.join(ROOT, "examples", "logits")
TOKENIZE = os.path.join(ROOT, "examples", "tokenize")
PY = sys.executable or "/usr/bin/python3"


bf16_round = st.round_bf16   # float32 values rounded (nearest even) to bf16, as float32


def write_st(path, tensors, dtype="F32", metadata=None):
    """A safetensors file of {name: array}, every tensor stored as dtype (F32, F16 or BF16)."""
    st.write(path, {name: (dtype, np.asarray(a, dtype=np.float32)) for name, a in tensors.items()},
             metadata or None)


def write_hf_dir(d, config, tensors, dtype="F32", shards=1, tokenizer=None):
    """An HF model directory: config.json + model.safetensors, or `shards` files + index."""
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(config, f)
    if tokenizer is not None:
        with open(os.path.join(d, "tokenizer.json"), "w") as f:
            json.dump(tokenizer, f)
    names = list(tensors)
    if shards == 1:
        write_st(os.path.join(d, "model.safetensors"), tensors, dtype, {"format": "pt"})
        return d
    wm = {}
    for s in range(shards):
        fn = "model-%05d-of-%05d.safetensors" % (s + 1, shards)
        part = {n: tensors[n] for n in names[s::shards]}
        write_st(os.path.join(d, fn), part, dtype, {"format": "pt"})
        wm.update({n: fn for n in part})
    with open(os.path.join(d, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {}, "weight_map": wm}, f)
    return d


def convert(src, out, *extra):
    p = subprocess.run([PY, CONVERT, src, out] + list(extra), capture_output=True, text=True)
    return p.returncode, p.stderr


def engine_logits(model, ids, vocab, *extra):
    """The engine's logits at precision exact (f32 activations whatever the weights: a Q8 file
    then gives the reference's logits for its dequantized weights; the default, auto, would
    quantize activations too), unless extra says otherwise."""
    with tempfile.NamedTemporaryFile(suffix=".bin", delete=False) as t:
        out = t.name
    if "--precision" not in extra:
        extra = ("--precision", "exact") + tuple(extra)
    try:
        p = subprocess.run([LOGITS, model, ",".join(map(str, ids)), out] + list(extra), capture_output=True, text=True)
        if p.returncode:
            raise RuntimeError("examples/logits failed: " + p.stderr.strip())
        return np.fromfile(out, dtype="<f4").reshape(len(ids), vocab)
    finally:
        os.unlink(out)


def build_examples():
    p = subprocess.run(["make", "-s", "-C", ROOT, "examples/logits", "examples/tokenize"], capture_output=True, text=True)
    if p.returncode:
        sys.stderr.write(p.stdout + p.stderr)
        raise SystemExit("cannot build examples/logits")


class Report:
    def __init__(self, name):
        self.name, self.passed, self.failed = name, 0, 0

    def check(self, case, ok, detail=""):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        detail = " | ".join(x for x in str(detail).splitlines() if x)
        print("  %s %s%s" % ("ok  " if ok else "FAIL", case, (": " + detail) if detail else ""))
        sys.stdout.flush()

    def logits(self, case, ref, got):
        ref = np.asarray(ref, dtype=np.float64)
        tol = 1e-4 * max(1.0, float(np.max(np.abs(ref))))
        err = float(np.max(np.abs(ref - got)))
        self.check(case, err <= tol, "max err %.3g (tol %.3g)" % (err, tol))

    def refused(self, case, rc, stderr, *words):
        line = stderr.strip()
        ok = rc == 1 and line.count("\n") == 0 and all(w in line for w in words) and "Traceback" not in line
        self.check(case, ok, "rc %d: %s" % (rc, line[-300:]))

    def finish(self):
        print("%s: %d passed, %d failed" % (self.name, self.passed, self.failed))
        return 1 if self.failed else 0
