#!/usr/bin/python3
"""Eager PyTorch baseline for examples/bench: the docs/format.md forward of any dintattn model, with a
KV cache, timed the way examples/bench times dintattn.

Run with Debian's python3 (python3-torch and python3-numpy; the pyenv `python3` on PATH has
neither):

    /usr/bin/python3 tools/torch_bench.py MODEL.safetensors [--prompt N] [--gen M] [--threads T]
                                         [--json] [--no-check]

What it does, as a user of PyTorch would write it (float32 everywhere, torch.inference_mode()):
  * reads the safetensors file with tools/safetensors_io.py (numpy -> torch), the config defaults
    from tools/reference.py (resolve_config);
  * the forward is plain eager torch: RMSNorm, the five projections (dense or Shared-DIFF base +
    per-head low-rank factors), RoPE from cos/sin tables, per-head A1 / A2 softmaxes over the
    cache with a causal mask, lambda, the DINT integral (the running column sum S of A1 is kept
    per layer and head in the cache and carried from step to step, as docs/format.md section 1 says), the
    head norm and scale, SwiGLU or PolyNorm;
  * the cache holds K1, K2, V ([ctx, heads, width] per layer) and S ([H, ctx] per layer);
  * before timing, it checks its logits against tools/reference.py (float64 numpy) on a short
    prompt, both one prefill over the whole prompt and a prefill followed by single-token decode
    steps, and prints the largest error (it stops if the error is not small: the comparison is of
    a correct implementation);
  * then prefill tok/s for an N-token prompt (default 512) and decode tok/s for M tokens after it
    (default 128), each decode fed the argmax of the previous logits (argmax outside the timing),
    after one short warm-up; N and M are clamped exactly as examples/bench clamps them (M at most
    context - 1, N at most context - M) and the prompt is the same splitmix64 sequence.
--threads T (default 2) calls torch.set_num_threads(T). --json prints one JSON object.
"""

import json
import math
import os
import sys
import time

import numpy as np
import torch

TOOLS = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, TOOLS)
import cli  # noqa: E402
import reference  # noqa: E402  (config defaults, and the float64 logits the check compares to)
import safetensors_io  # noqa: E402

# ----------------------------------------------------------------------------------------------
# loading
# ----------------------------------------------------------------------------------------------


def read_model(path):
    """-> (cfg with defaults resolved, {name: float32 torch tensor}); tokenizer tensors skipped."""
    tensors, meta = safetensors_io.read(path)
    if meta.get("format") != "dintattn" or meta.get("version") != "1":
        raise ValueError(f"{path}: not a dintattn v1 model")
    cfg = reference.resolve_config(json.loads(meta["config"]))
    w = {}
    for name, (dtype, a) in tensors.items():
        if dtype == "U8":
            continue
        if dtype not in ("F32", "F16", "BF16"):
            raise ValueError(f"{name}: dtype {dtype}")
        w[name] = torch.from_numpy(a)
    return cfg, w


# ----------------------------------------------------------------------------------------------
# the model
# ----------------------------------------------------------------------------------------------


class Cache:
    def __init__(self, cfg, ctx):
        L, d, dv = cfg["n_layers"], cfg["head_dim"], cfg["v_head_dim"]
        diff = cfg["attention"] != "standard"
        self.k1 = [torch.zeros(ctx, cfg["n_k1_heads"], d) for _ in range(L)]
        self.k2 = [torch.zeros(ctx, cfg["n_k2_heads"], d) for _ in range(L)] if diff else None
        self.v = [torch.zeros(ctx, cfg["n_v_heads"], dv) for _ in range(L)]
        self.S = ([torch.zeros(cfg["n_heads"], ctx) for _ in range(L)]
                  if cfg["attention"] == "dint" else None)
        self.pos = 0

    def reset(self):
        self.pos = 0
        if self.S is not None:
            for s in self.S:
                s.zero_()


class Model:
    def __init__(self, path):
        self.cfg, self.w = read_model(path)
        c = self.cfg
        H, d = c["n_heads"], c["head_dim"]
        # signal head i reads head floor(i * n / H) = i // (H / n): Llama's repeat_kv
        self.rep = {k: H // c[n] for k, n in (("k1", "n_k1_heads"), ("v", "n_v_heads"),
                                              ("q2", "n_q2_heads"), ("k2", "n_k2_heads"))
                    if c[n] > 0}
        inv = c["rope_theta"] ** (-2.0 * torch.arange(d // 2, dtype=torch.float64) / d)
        ang = torch.arange(c["max_seq_len"], dtype=torch.float64)[:, None] * inv[None, :]
        self.cos, self.sin = ang.cos().float(), ang.sin().float()          # [ctx, d/2]
        self.lam = []
        for l in range(c["n_layers"]):
            if c["attention"] == "standard":
                self.lam.append(0.0)
                continue
            p = f"layers.{l}.attn."
            self.lam.append(math.exp(float(self.w[p + "lambda_q1"].double() @ self.w[p + "lambda_k1"].double()))
                            - math.exp(float(self.w[p + "lambda_q2"].double() @ self.w[p + "lambda_k2"].double()))
                            + c["lambda_init_values"][l])

    def rms(self, x, w, eps):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w

    def rope(self, x, pos0):
        """x [T, heads, d] at positions pos0..pos0+T-1."""
        style = self.cfg["rope"]
        if style == "none":
            return x
        T, d = x.shape[0], x.shape[2]
        cos = self.cos[pos0:pos0 + T, None, :]
        sin = self.sin[pos0:pos0 + T, None, :]
        if style == "interleaved":
            a, b = x[..., 0::2], x[..., 1::2]
            return torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).flatten(-2)
        a, b = x[..., :d // 2], x[..., d // 2:]
        return torch.cat((a * cos - b * sin, a * sin + b * cos), dim=-1)

    def proj_qk(self, h, p, which, heads, bases):
        c = self.cfg
        T, d, r = h.shape[0], c["head_dim"], c["qk_rank"]
        if r == 0:
            return (h @ self.w[p + "w" + which].t()).view(T, heads, d)
        low = (h @ self.w[p + which + "_down"].t()).view(T, heads, r)                 # [T, heads, r]
        up = self.w[p + which + "_up"].view(heads, d, r)
        return bases[which[0]][:, None, :] + torch.einsum("hdr,thr->thd", up, low)

    def heads(self, x, which):
        """[P, n, width] -> [P, H, width] (a no-op when n == H)."""
        r = self.rep[which]
        return x if r == 1 else x.repeat_interleave(r, dim=1)

    def masked_softmax(self, s, mask):
        return torch.softmax(s.masked_fill(mask, float("-inf")), dim=-1)

    def forward(self, ids, cache, all_logits=False):
        """Runs ids after the cache's tokens; logits [T, V] (all_logits) or [V] (last token)."""
        c, w = self.cfg, self.w
        H, d, dv = c["n_heads"], c["head_dim"], c["v_head_dim"]
        att = c["attention"]
        ids = torch.as_tensor(ids, dtype=torch.long)
        T, pos0 = ids.shape[0], cache.pos
        P = pos0 + T
        scale = 1.0 / math.sqrt(d)
        eps = c["norm_eps"]
        qpos = torch.arange(pos0, P)
        mask = torch.arange(P)[None, :] > qpos[:, None]                               # [T, P]
        x = w["tok_embeddings.weight"][ids]
        for l in range(c["n_layers"]):
            p = f"layers.{l}.attn."
            h = self.rms(x, w[f"layers.{l}.attn_norm.weight"], eps)
            bases = {}
            if c["qk_rank"] > 0:
                bases = {"q": h @ w[p + "q_base"].t(), "k": h @ w[p + "k_base"].t()}
            q1 = self.rope(self.proj_qk(h, p, "q1", H, bases), pos0).transpose(0, 1)  # [H, T, d]
            cache.k1[l][pos0:P] = self.rope(self.proj_qk(h, p, "k1", c["n_k1_heads"], bases), pos0)
            cache.v[l][pos0:P] = (h @ w[p + "wv"].t()).view(T, c["n_v_heads"], dv)
            k1 = self.heads(cache.k1[l][:P], "k1").permute(1, 2, 0)                     # [H, d, P]
            v = self.heads(cache.v[l][:P], "v").transpose(0, 1)                          # [H, P, dv]
            A1 = self.masked_softmax(q1 @ k1 * scale, mask)                           # [H, T, P]
            if att == "standard":
                W = A1
            else:
                lam = self.lam[l]
                q2 = self.rope(self.proj_qk(h, p, "q2", c["n_q2_heads"], bases), pos0)
                cache.k2[l][pos0:P] = self.rope(self.proj_qk(h, p, "k2", c["n_k2_heads"], bases), pos0)
                q2 = self.heads(q2, "q2").transpose(0, 1)
                k2 = self.heads(cache.k2[l][:P], "k2").permute(1, 2, 0)
                A2 = self.masked_softmax(q2 @ k2 * scale, mask)
                W = A1 - lam * A2
                if att == "dint":
                    # S after row n = S before this chunk + the chunk's A1 rows up to n
                    S = cache.S[l][:, None, :P] + torch.cumsum(A1, dim=1)              # [H, T, P]
                    cache.S[l][:, :P] = S[:, -1]
                    G = S / (qpos + 1).to(S.dtype)[None, :, None]
                    I = self.masked_softmax(G, mask) if c["integral"] == "softmax" else G
                    W = W + lam * I
            heads = W @ v                                                             # [H, T, dv]
            if c["head_norm"]:
                hw = w[p + "head_norm.weight"]
                hw = hw.view(H, 1, dv) if hw.numel() == H * dv else hw
                if c["head_norm_type"] == "rms":
                    heads = self.rms(heads, hw, c["head_norm_eps"])
                else:
                    hb = w[p + "head_norm.bias"]
                    hb = hb.view(H, 1, dv) if hb.numel() == H * dv else hb
                    mu = heads.mean(-1, keepdim=True)
                    var = (heads - mu).pow(2).mean(-1, keepdim=True)
                    heads = (heads - mu) * torch.rsqrt(var + c["head_norm_eps"]) * hw + hb
            if c["head_scale"] == "one_minus_lambda_init":
                heads = heads * (1.0 - c["lambda_init_values"][l])
            x = x + heads.transpose(0, 1).reshape(T, H * dv) @ w[p + "wo"].t()
            f = f"layers.{l}.ffn."
            h = self.rms(x, w[f"layers.{l}.ffn_norm.weight"], eps)
            g = h @ w[f + "w_gate"].t()
            if c["ffn_act"] == "silu":
                a = torch.nn.functional.silu(g)
            else:
                w0, w1, w2 = (float(v) for v in w[f + "act_weight"])

                def rms_p(k):
                    return torch.sqrt(g.pow(k).mean(-1, keepdim=True) + 1e-6)
                a = w0 * g.pow(3) / rms_p(6) + w1 * g.pow(2) / rms_p(4) + w2 * g / rms_p(2) \
                    + float(w[f + "act_bias"][0])
            x = x + (a * (h @ w[f + "w_up"].t())) @ w[f + "w_down"].t()
        cache.pos = P
        out = w["tok_embeddings.weight"] if c["tie_embeddings"] else w["output.weight"]
        if all_logits:
            return self.rms(x, w["norm.weight"], eps) @ out.t()
        return self.rms(x[-1], w["norm.weight"], eps) @ out.t()


# ----------------------------------------------------------------------------------------------
# check and timing
# ----------------------------------------------------------------------------------------------


def splitmix_prompt(n, vocab):
    """The prompt examples/bench uses: splitmix64 draws modulo the vocabulary."""
    mask = (1 << 64) - 1
    state, out = 0x9E3779B97F4A7C15, []
    for _ in range(n):
        state = (state + 0x9E3779B97F4A7C15) & mask
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        out.append((z ^ (z >> 31)) % vocab)
    return out


def check(model, path, n=8):
    """Max |torch - reference| over the logits of an n-token prompt, by one prefill and by a
    prefill of half the prompt then single-token decode steps; raises if it is not small."""
    n = min(n, model.cfg["max_seq_len"])
    ids = splitmix_prompt(n, model.cfg["vocab_size"])
    ref = reference.forward(path, ids)                                                # float64
    cache = Cache(model.cfg, n)
    full = model.forward(ids, cache, all_logits=True).double().numpy()
    cache.reset()
    k = max(1, n // 2)
    rows = [model.forward(ids[:k], cache, all_logits=True).double().numpy()]
    for t in ids[k:]:
        rows.append(model.forward([t], cache, all_logits=True).double().numpy())
    steps = np.concatenate(rows)
    scale = float(np.abs(ref).max())
    err = max(float(np.abs(full - ref).max()), float(np.abs(steps - ref).max()))
    if not err <= 1e-3 * max(1.0, scale):
        raise SystemExit(f"torch_bench: logits differ from tools/reference.py: max error {err:.3g} "
                         f"(largest logit {scale:.3g})")
    return err, scale, n


def main(argv=None):
    ap = cli.parser(__doc__, ["/usr/bin/python3 tools/torch_bench.py bench-dint.safetensors --prompt 128 --gen 32"])
    ap.add_argument("model", help="a dintattn model file")
    ap.add_argument("--prompt", type=int, default=512,
                    help="prompt tokens timed in one prefill, 1 or more (clamped as examples/bench clamps)")
    ap.add_argument("--gen", type=int, default=128, help="decode steps timed, 1 or more (clamped likewise)")
    ap.add_argument("--threads", type=int, default=2, help="torch threads, 1 or more")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    ap.add_argument("--no-check", action="store_true", help="skip the check against reference.py")
    a = ap.parse_args(argv)
    if a.prompt < 1 or a.gen < 1 or a.threads < 1:
        ap.error("--prompt, --gen and --threads must be >= 1")
    torch.set_num_threads(a.threads)
    with torch.inference_mode():
        t0 = time.perf_counter()
        model = Model(a.model)
        load_s = time.perf_counter() - t0
        c = model.cfg
        err = scale = None
        n_check = 0
        if not a.no_check:
            err, scale, n_check = check(model, a.model)
            if not a.json:
                print(f"check      max |logit - reference| = {err:.3g} over {n_check} tokens "
                      f"(largest logit {scale:.3g}), prefill and decode paths")
        ctx = c["max_seq_len"]
        M = min(a.gen, ctx - 1)
        N = min(a.prompt, ctx - M)
        if N < 1 or M < 1:
            raise SystemExit("torch_bench: the model's context is too short to benchmark")
        ids = splitmix_prompt(N, c["vocab_size"])
        cache = Cache(c, N + M)
        logits = model.forward(ids[:min(N, 8)], cache)                                # warm-up
        model.forward([int(logits.argmax())], cache)
        cache.reset()
        t0 = time.perf_counter()
        logits = model.forward(ids, cache)
        prefill_s = time.perf_counter() - t0
        decode_s = 0.0
        for _ in range(M):
            tok = int(logits.argmax())
            t0 = time.perf_counter()
            logits = model.forward([tok], cache)
            decode_s += time.perf_counter() - t0
    res = {"model": a.model, "attention": c["attention"], "qk_rank": c["qk_rank"], "dim": c["dim"],
           "n_layers": c["n_layers"], "n_heads": c["n_heads"], "head_dim": c["head_dim"],
           "v_head_dim": c["v_head_dim"], "hidden_dim": c["hidden_dim"], "vocab_size": c["vocab_size"],
           "max_seq_len": ctx, "params": int(sum(t.numel() for t in model.w.values())),
           "torch": torch.__version__, "threads": a.threads, "prompt_tokens": N, "gen_tokens": M,
           "load_s": load_s, "prefill_s": prefill_s, "prefill_tok_s": N / prefill_s,
           "decode_s": decode_s, "decode_tok_s": M / decode_s,
           "check_tokens": n_check, "check_max_abs_err": err, "check_max_abs_logit": scale}
    if a.json:
        print(json.dumps(res))
    else:
        print(f"model      {a.model} ({c['attention']}, dim {c['dim']}, {c['n_layers']} layers, "
              f"{res['params'] / 1e6:.1f}M params), torch {torch.__version__}, {a.threads} threads")
        print(f"load       {load_s:.3f} s")
        print(f"prefill    {N} tokens in {prefill_s:.3f} s: {N / prefill_s:.1f} tok/s")
        print(f"decode     {M} tokens after {N} in {decode_s:.3f} s: {M / decode_s:.1f} tok/s, "
              f"{1e3 * decode_s / M:.2f} ms/token")
    return 0


if __name__ == "__main__":
    sys.exit(main())
