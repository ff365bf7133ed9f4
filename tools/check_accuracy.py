#!/usr/bin/python3
"""Check the C engine against the float64 numpy reference on random models of any size.

    /usr/bin/python3 tools/check_accuracy.py [--size small|medium|large] [--family NAME ...]
                                             [--dtype f32|f16|bf16] [--tokens N] [--modes prefill,decode,chunk]

For each family it writes a random model (tools/make_model.py), computes reference logits
(tools/reference.py) and runs examples/logits (build it first: `make`) in each mode. It prints,
per run, the largest error as a fraction of the tolerance 1e-4 * max(1, max |logit|) of its row:
a value below 1 passes. Models and logits go to a temporary directory.
"""
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

TOOLS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TOOLS)
sys.path.insert(0, TOOLS)
import cli  # noqa: E402
import make_model  # noqa: E402
import reference  # noqa: E402

SIZES = {
    "small": dict(dim=64, n_layers=2, n_heads=4, head_dim=8, hidden_dim=172, vocab_size=257, max_seq_len=128),
    "medium": dict(dim=256, n_layers=4, n_heads=8, head_dim=16, hidden_dim=688, vocab_size=512, max_seq_len=512),
    "large": dict(dim=1024, n_layers=8, n_heads=8, head_dim=64, hidden_dim=2752, vocab_size=8192, max_seq_len=2048),
}
FAMILIES = {
    "standard": dict(attention="standard", n_k1_heads=4, n_v_heads=4, rope="halves"),
    "diff": dict(attention="diff"),
    "dint": dict(attention="dint"),
    "dint-mean": dict(attention="dint", integral="mean"),
    "grouped-diff": dict(attention="diff", n_q2_heads=2, n_k2_heads=2, n_v_heads=2),
    "dint-shared-grouped-gqa": dict(attention="dint", qk_rank=4, n_k1_heads=4, n_q2_heads=2, n_k2_heads=2,
                                    n_v_heads=2),
}


def run_c(model, ids, mode, out):
    cmd = [os.path.join(ROOT, "examples", "logits"), model, ",".join(map(str, ids)), out, "--threads", "2"]
    if mode == "decode":
        cmd.append("--decode")
    elif mode == "chunk":
        cmd += ["--chunk", str(max(2, len(ids) // 7))]
    t0 = time.time()
    subprocess.run(cmd, check=True)
    return time.time() - t0


def main():
    ap = cli.parser(__doc__, ["make examples/logits && /usr/bin/python3 tools/check_accuracy.py --size small "
                              "--family dint diff --tokens 32"], full=True)
    ap.add_argument("--size", choices=SIZES, default="small", help="the random models' shape")
    ap.add_argument("--family", nargs="*", choices=FAMILIES, default=list(FAMILIES),
                    help="the attention families to check (default: all)")
    ap.add_argument("--dtype", choices=["f32", "f16", "bf16"], default="bf16", help="the models' weight type")
    ap.add_argument("--tokens", type=int, default=0,
                    help="prompt length, 1 to the context; 0 (the default) = the context")
    ap.add_argument("--modes", default="prefill,decode,chunk",
                    help="comma-separated examples/logits modes among prefill, decode, chunk")
    ap.add_argument("--seed", type=int, default=0, help="the random weights' seed (any integer)")
    a = ap.parse_args()
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for fam in a.family:
            cfg = dict(SIZES[a.size], **FAMILIES[fam])
            n = a.tokens or cfg["max_seq_len"]
            model = os.path.join(tmp, fam + ".safetensors")
            make_model.make_model(model, cfg, a.dtype, a.seed)
            ids = np.random.default_rng(a.seed + 1).integers(0, cfg["vocab_size"], size=n).tolist()
            t0 = time.time()
            ref = reference.forward(model, ids)
            t_ref = time.time() - t0
            tol = 1e-4 * np.maximum(1.0, np.abs(ref).max(axis=1))
            for mode in a.modes.split(","):
                out = os.path.join(tmp, "out.bin")
                wall = run_c(model, ids, mode, out)
                got = np.fromfile(out, dtype="<f4").reshape(ref.shape)
                ratio = float((np.abs(got - ref).max(axis=1) / tol).max())
                worst = max(worst, ratio)
                print("%-24s %-5s %-7s N=%-5d error/tolerance %.3f  %s  (C %.1fs, reference %.1fs)"
                      % (fam, a.dtype, mode, n, ratio, "pass" if ratio <= 1 else "FAIL", wall, t_ref), flush=True)
    print("worst error/tolerance: %.3f" % worst)
    return 0 if worst <= 1 else 1


if __name__ == "__main__":
    sys.exit(main())
