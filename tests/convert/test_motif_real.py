#!/usr/bin/python3
"""tools/make_motif_checkpoint.py -> tools/convert.py (-> tools/quantize.py) -> the engine, against
tools/reference.py, at small widths.

The real-size runs (docs/performance.md: the Motif-2 shapes) use checkpoints that make_motif_checkpoint.py writes; this
checks that what it writes is a Motif checkpoint the converter reads as the model it is meant to
be: the real head layout of Motif-2-12.7B (40 query sub-heads in 8 groups of 4 signal + 1 noise,
16 KV sub-heads) and of Motif-2.6B (vanilla DIFF, 16 / 16) with narrow heads and a small
hidden size, sharded as HF shards, in F32 and BF16, and quantized to Q8 by the streaming
quantizer. Each converted file's engine logits (prefill and decode) are compared with the
float64 reference at 1e-4 relative to max(1, max|logit|).

    /usr/bin/python3 tests/convert/test_motif_real.py
"""

import json
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    print("test_motif_real: skipped (no numpy for %s)" % sys.executable)
    sys.exit(0)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import PY, ROOT  # noqa: E402

TOOLS = os.path.join(ROOT, "tools")
import make_motif_checkpoint as mmc  # noqa: E402  (common put tools/ on the path)
import reference  # noqa: E402

IDS = [3, 17, 250, 0, 99, 42, 7, 180]


def small_config(size, dtype):
    c = mmc.make_config(size, layers=2, vocab=257, dtype=dtype, max_seq_len=64)
    c.update(hidden_size=96, head_dim=16, intermediate_size=160)   # head counts stay the real ones
    return c


def run(rep, tmp, size, dtype):
    label = "%s_%s" % (size, dtype)
    c = small_config(size, dtype)
    src = os.path.join(tmp, label)
    # std 1.5/sqrt(hidden): attention scores of several units, so a head taking the wrong rows
    # would change the logits (at the real 0.02 and this width, attention is nearly uniform)
    nbytes, _ = mmc.write_checkpoint(src, c, dtype, seed=5, shard_gb=1e-4,          # ~100 KB shards
                                     std=1.5 / c["hidden_size"] ** 0.5)
    with open(os.path.join(src, "model.safetensors.index.json")) as f:
        index = json.load(f)
    shards = sorted(set(index["weight_map"].values()))
    on_disk = sum(common.st.File(os.path.join(src, s)).data_start for s in shards)
    on_disk = sum(os.path.getsize(os.path.join(src, s)) for s in shards) - on_disk
    rep.check(label + " shards", len(shards) > 2 and index["metadata"]["total_size"] == nbytes == on_disk,
              "%d shards, total_size %d, data %d" % (len(shards), index["metadata"]["total_size"], on_disk))
    out = os.path.join(tmp, label + ".safetensors")
    rc, err = common.convert(src, out, "--format", "motif", "--dtype", dtype)
    if rc:
        rep.check(label + " convert", False, err)
        return
    V = c["vocab_size"]
    models = [(label, out)]
    if dtype == "f32":
        q8 = os.path.join(tmp, label + ".q8.safetensors")
        p = subprocess.run([PY, os.path.join(TOOLS, "quantize.py"), out, q8], capture_output=True, text=True)
        if p.returncode:
            rep.check(label + " quantize", False, p.stderr)
        else:
            models.append((label + "_q8file", q8))
    for name, path in models:
        ref = reference.forward(path, IDS)
        if not np.all(np.isfinite(ref)):
            rep.check(name + " reference finite", False)
            continue
        rep.check(name + " logits not flat", float(np.std(ref)) > 0.3, "std %.3g" % np.std(ref))
        rep.logits(name + " prefill", ref, common.engine_logits(path, IDS, V))
        rep.logits(name + " decode", ref, common.engine_logits(path, IDS, V, "--decode"))


def main():
    common.build_examples()
    rep = common.Report("test_motif_real")
    with tempfile.TemporaryDirectory() as tmp:
        for size in ("12.7b", "2.6b"):
            for dtype in ("f32", "bf16"):
                run(rep, tmp, size, dtype)
    return rep.finish()


if __name__ == "__main__":
    sys.exit(main())
