#!/usr/bin/python3
"""Self-check of tools/reference.py's version 1.1 math (docs/format.md section 3), with models from
tools/make_model.py: the invariants the C tests rely on (DINT rows sum to 1 with token lambda, a
shared_k model equals its twin whose wk2 is a copy of wk1, rope_scaling of factor 1 equals none,
rope_dim = head_dim equals full RoPE), each new piece against a second computation written here
(scalar RoPE loops, inverse frequencies as transformers' modeling_rope_utils computes them, in
torch float32 as it does, and in plain Python), the refusals docs/format.md asks for, and, when torch is
installed, one whole forward pass of a DIFF V2 model (Microsoft's MultiheadFlashDiffV2 layout:
2H query heads in Q1/Q2 pairs, shared K/V, sigmoid(lambda_proj x)) written in torch here.
Needs numpy; torch optional.  Run: /usr/bin/python3 tests/convert/test_reference_v11.py"""

import json
import math
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

sys.path.insert(0, os.path.join(common.ROOT, "tools"))
import make_model  # noqa: E402
import reference  # noqa: E402

try:
    import torch
except ImportError:  # the torch cases are skipped
    torch = None

BASE = dict(dim=24, n_layers=2, vocab_size=37, hidden_dim=40, max_seq_len=32, n_heads=4, head_dim=8)
IDS = [3, 17, 0, 36, 5, 5, 22, 9, 14, 1, 30, 8, 2, 27]


def rel(a, b):
    return float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(a)))))


class Case:
    def __init__(self, tmp):
        self.tmp, self.n = tmp, 0

    def path(self, tag):
        self.n += 1
        return os.path.join(self.tmp, "%s_%d.safetensors" % (tag, self.n))

    def model(self, cfg, dtype="f32", seed=1, tag="m"):
        p = self.path(tag)
        make_model.make_model(p, cfg, dtype, seed)
        return p

    def write(self, tensors, cfg, dtype="f32", tag="w"):
        p = self.path(tag)
        make_model.write_model(p, tensors, cfg, dtype)
        return p


# ----------------------------------------------------------------------------------------------
# independent RoPE pieces
# ----------------------------------------------------------------------------------------------

def rope_loop(x, style, inv, scale):
    """Scalar loops over positions, heads and pairs (docs/format.md sections 1 and 3, nothing vectorised)."""
    N, nh, d = x.shape
    half = len(inv)
    out = x.copy()
    for n in range(N):
        for h in range(nh):
            for k in range(half):
                i, j = (2 * k, 2 * k + 1) if style == "interleaved" else (k, k + half)
                c, s = math.cos(n * inv[k]) * scale, math.sin(n * inv[k]) * scale
                a, b = x[n, h, i], x[n, h, j]
                out[n, h, i], out[n, h, j] = a * c - b * s, a * s + b * c
    return out


def inv_freq_python(r, theta, rs):
    """Inverse frequencies and attention factor in plain Python floats, one frequency at a time,
    following modeling_rope_utils' variable names (inv_freq_extrapolation / _interpolation,
    low_freq_wavelen / high_freq_wavelen)."""
    base = [theta ** (-(2.0 * k) / r) for k in range(r // 2)]
    if rs is None:
        return base, 1.0
    s = rs["factor"]
    if rs["type"] == "linear":
        return [f / s for f in base], 1.0
    L = rs["original_max_position_embeddings"]
    if rs["type"] == "llama3":
        lf, hf = rs["low_freq_factor"], rs["high_freq_factor"]
        low_wavelen, high_wavelen = L / lf, L / hf
        out = []
        for f in base:
            wavelen = 2 * math.pi / f
            g = f / s if wavelen > low_wavelen else f
            if not wavelen < high_wavelen and not wavelen > low_wavelen:
                smooth = (L / wavelen - lf) / (hf - lf)
                g = (1 - smooth) * g / s + smooth * g
            out.append(g)
        return out, 1.0
    beta_fast = rs.get("beta_fast") or 32
    beta_slow = rs.get("beta_slow") or 1

    def correction_dim(rot):
        return (r * math.log(L / (rot * 2 * math.pi))) / (2 * math.log(theta))

    low, high = correction_dim(beta_fast), correction_dim(beta_slow)
    if rs.get("truncate", True):
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, r - 1)
    if low == high:
        high += 0.001
    out = []
    for k, f in enumerate(base):
        ramp = min(max((k - low) / (high - low), 0.0), 1.0)
        extrapolation_factor = 1 - ramp
        out.append(f / s * (1 - extrapolation_factor) + f * extrapolation_factor)

    def get_mscale(scale, m=1.0):
        return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0

    af = rs.get("attention_factor")
    if af is None:
        if rs.get("mscale") and rs.get("mscale_all_dim"):
            af = get_mscale(s, rs["mscale"]) / get_mscale(s, rs["mscale_all_dim"])
        else:
            af = get_mscale(s)
    return out, af


def inv_freq_torch(r, theta, rs):
    """The same in torch float32, tensor-wise, as transformers computes it (torch.where masks for
    llama3, a clamped linear ramp over arange(r // 2) for yarn)."""
    k2 = torch.arange(0, r, 2, dtype=torch.int64).float()
    inv = 1.0 / (theta ** (k2 / r))
    if rs is None:
        return inv
    s = rs["factor"]
    if rs["type"] == "linear":
        return inv / s
    L = rs["original_max_position_embeddings"]
    if rs["type"] == "llama3":
        lf, hf = rs["low_freq_factor"], rs["high_freq_factor"]
        wavelen = 2 * math.pi / inv
        out = torch.where(wavelen > L / lf, inv / s, inv)
        smooth = (L / wavelen - lf) / (hf - lf)
        smoothed = (1 - smooth) * out / s + smooth * out
        medium = ~(wavelen < L / hf) * ~(wavelen > L / lf)
        return torch.where(medium, smoothed, out)
    beta_fast = rs.get("beta_fast") or 32
    beta_slow = rs.get("beta_slow") or 1

    def correction_dim(rot):
        return (r * math.log(L / (rot * 2 * math.pi))) / (2 * math.log(theta))

    low, high = correction_dim(beta_fast), correction_dim(beta_slow)
    if rs.get("truncate", True):
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, r - 1)
    if low == high:
        high += 0.001
    ramp = torch.clamp((torch.arange(r // 2, dtype=torch.float32) - low) / (high - low), 0, 1)
    pos = theta ** (torch.arange(0, r, 2).float() / r)
    extrap = 1 - ramp
    return (1.0 / (s * pos)) * (1 - extrap) + (1.0 / pos) * extrap


# checkpoint-like settings: Llama 3.1, DiffLlama-0.3B-handcut (llama3, factor 32), Qwen2.5-style
# YaRN, DeepSeek-V3-style YaRN with mscale, gpt-oss-style YaRN with truncate false, small ones
SCALINGS = [
    ("llama3.1 8B", 128, 500000.0, {"type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                    "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}),
    ("llama3 factor 32", 64, 10000.0, {"type": "llama3", "factor": 32.0, "low_freq_factor": 1.0,
                                       "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}),
    ("linear 2.5", 96, 10000.0, {"type": "linear", "factor": 2.5}),
    ("yarn qwen", 128, 1000000.0, {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}),
    ("yarn deepseek", 64, 10000.0, {"type": "yarn", "factor": 40.0, "original_max_position_embeddings": 4096,
                                    "beta_fast": 32.0, "beta_slow": 1.0, "mscale": 1.0, "mscale_all_dim": 0.8}),
    ("yarn gpt-oss", 64, 150000.0, {"type": "yarn", "factor": 32.0, "original_max_position_embeddings": 4096,
                                    "beta_fast": 32.0, "beta_slow": 1.0, "truncate": False}),
    ("yarn beta 0 = default", 32, 10000.0, {"type": "yarn", "factor": 2.0, "original_max_position_embeddings": 64,
                                            "beta_fast": 0, "beta_slow": 0}),
    ("yarn attention_factor", 16, 500.0, {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 16,
                                          "attention_factor": 0.75, "mscale": 2.0, "mscale_all_dim": 1.0}),
    ("yarn lo == hi", 8, 10000.0, {"type": "yarn", "factor": 3.0, "original_max_position_embeddings": 40,
                                   "beta_fast": 4.0, "beta_slow": 4.0, "truncate": False}),
]


def resolved_rope(r, theta, rs, head_dim=None):
    cfg = dict(BASE, attention="diff", head_dim=head_dim or r, rope_dim=r, rope_theta=theta)
    if rs is not None:
        cfg["rope_scaling"] = rs
    return reference.resolve_config(cfg, "1.1")


# ----------------------------------------------------------------------------------------------
# DIFF V2 in torch (Microsoft's module layout; rotary, attention and model written here)
# ----------------------------------------------------------------------------------------------

def v2_torch_logits(w, cfg, ids):
    """float64 torch forward of a Llama-like decoder whose attention is MultiheadFlashDiffV2:
    q_proj [2H*d, D] (heads 2h, 2h+1 = the pair of output head h), k_proj / v_proj [KV*d, D],
    lambda_proj [H, D], o_proj [D, H*d]; interleaved rotary; flash attention's causal GQA
    (query head j reads KV head j // (2H/KV)); out = attn1 - sigmoid(lambda) * attn2."""
    T = {k: torch.tensor(v, dtype=torch.float64) for k, v in w.items()}
    H, d, KV, eps, theta = cfg["n_heads"], cfg["head_dim"], cfg["n_k1_heads"], cfg["norm_eps"], cfg["rope_theta"]
    N = len(ids)

    def rms(x, g):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * g

    inv = 1.0 / theta ** (torch.arange(0, d, 2, dtype=torch.float64) / d)
    ang = torch.arange(N, dtype=torch.float64)[:, None] * inv[None, :]
    cos, sin = ang.cos(), ang.sin()

    def rotary(x):  # [N, heads, d], interleaved pairs (GPT-J)
        x1, x2 = x[..., 0::2], x[..., 1::2]
        c, s = cos[:, None, :], sin[:, None, :]
        return torch.stack((x1 * c - x2 * s, x1 * s + x2 * c), dim=-1).flatten(-2)

    mask = torch.ones(N, N, dtype=torch.bool).tril()
    x = T["emb"][torch.tensor(ids)]
    for l in range(cfg["n_layers"]):
        h = rms(x, T["in_norm.%d" % l])
        q = rotary((h @ T["q_proj.%d" % l].T).view(N, 2 * H, d))
        k = rotary((h @ T["k_proj.%d" % l].T).view(N, KV, d))
        v = (h @ T["v_proj.%d" % l].T).view(N, KV, d)
        group = 2 * H // KV
        heads = []
        for j in range(2 * H):
            sc = (q[:, j] @ k[:, j // group].T) / math.sqrt(d)
            p = torch.softmax(sc.masked_fill(~mask, float("-inf")), dim=-1)
            heads.append(p @ v[:, j // group])
        attn = torch.stack(heads, dim=1)                                   # [N, 2H, d]
        lam = h @ T["lambda_proj.%d" % l].T                               # [N, H]
        attn = attn[:, 0::2] - torch.sigmoid(lam).unsqueeze(-1) * attn[:, 1::2]
        x = x + attn.reshape(N, H * d) @ T["o_proj.%d" % l].T
        h = rms(x, T["post_norm.%d" % l])
        g = h @ T["gate.%d" % l].T
        x = x + (torch.nn.functional.silu(g) * (h @ T["up.%d" % l].T)) @ T["down.%d" % l].T
    return (rms(x, T["final_norm"]) @ T["lm_head"].T).numpy()


def v2_to_dintattn(w, cfg):
    """Microsoft V2 tensors -> dintattn names per docs/format.md section 3 (what a converter does)."""
    H, d = cfg["n_heads"], cfg["head_dim"]
    t = {"tok_embeddings.weight": w["emb"], "norm.weight": w["final_norm"], "output.weight": w["lm_head"]}
    for l in range(cfg["n_layers"]):
        p = "layers.%d." % l
        q = w["q_proj.%d" % l].reshape(2 * H, d, -1)
        t[p + "attn_norm.weight"] = w["in_norm.%d" % l]
        t[p + "ffn_norm.weight"] = w["post_norm.%d" % l]
        t[p + "attn.wq1"] = q[0::2].reshape(H * d, -1)
        t[p + "attn.wq2"] = q[1::2].reshape(H * d, -1)
        t[p + "attn.wk1"] = w["k_proj.%d" % l]
        t[p + "attn.wv"] = w["v_proj.%d" % l]
        t[p + "attn.wo"] = w["o_proj.%d" % l]
        t[p + "attn.lambda_proj"] = w["lambda_proj.%d" % l]
        t[p + "ffn.w_gate"], t[p + "ffn.w_up"], t[p + "ffn.w_down"] = (
            w["gate.%d" % l], w["up.%d" % l], w["down.%d" % l])
    return t


# ----------------------------------------------------------------------------------------------

def main():
    rep = common.Report("reference_v11")
    tmp = tempfile.mkdtemp(prefix="ref_v11_")
    c = Case(tmp)

    # --- DINT with token lambda: every row of W sums to 1; DIFF's rows sum to 1 - lambda[n, i],
    # and that lambda is sigmoid(lambda_proj[i] . x_n) of layer 0's normed input
    for att, extra in (("dint", dict(integral="softmax")), ("dint", dict(integral="mean", shared_k=True))):
        cfg = dict(BASE, attention=att, lambda_mode="token_sigmoid", **extra)
        p = c.model(cfg, "bf16", seed=4)
        _, attn = reference.forward(p, IDS, return_attn=True)
        dev = max(float(np.max(np.abs(W.sum(-1) - 1))) for W in attn)
        rep.check("DINT rows sum to 1 with token lambda (%s)" % ", ".join("%s=%s" % kv for kv in extra.items()),
                  dev < 1e-12, "max |row sum - 1| %.3g" % dev)
    p = c.model(dict(BASE, attention="diff", lambda_mode="token_sigmoid", head_norm=False), seed=5)
    mc, mt = reference.load(p)
    _, attn = reference.forward(p, IDS, return_attn=True)
    lam_rows = 1 - attn[0].sum(-1)                                         # [H, N]
    x0 = mt["tok_embeddings.weight"][IDS]
    xn = x0 / np.sqrt((x0 ** 2).mean(-1, keepdims=True) + mc["norm_eps"]) * mt["layers.0.attn_norm.weight"]
    lam_direct = 1 / (1 + np.exp(-(xn @ mt["layers.0.attn.lambda_proj"].T))).T
    rep.check("DIFF rows sum to 1 - sigmoid(lambda_proj[i] . x_n)", np.allclose(lam_rows, lam_direct, atol=1e-12),
              "max diff %.3g" % float(np.max(np.abs(lam_rows - lam_direct))))
    spread = (float(lam_rows.min()), float(lam_rows.max()), float(lam_rows.std(axis=1).min()))
    rep.check("make_model's token lambda is neither saturated nor constant", 0.05 < spread[0] and spread[1] < 0.95
              and spread[2] > 0.02, "min %.3g max %.3g, least per-head std %.3g" % spread)

    # --- token lambda with lambda_proj = 0 is lambda 0.5: the reparam model with zero lambda
    # vectors and lambda_init 0.5 (head_scale none, so lambda_init acts only through lambda)
    for att in ("diff", "dint"):
        cfg = dict(BASE, attention=att, lambda_mode="token_sigmoid", head_scale="none", lambda_init=0.5)
        w = make_model.make_tensors(cfg, seed=6)
        w = {k: (v * 0 if k.endswith("lambda_proj") else v) for k, v in w.items()}
        a = c.write(w, cfg)
        w2 = {k: v for k, v in w.items() if not k.endswith("lambda_proj")}
        for l in range(BASE["n_layers"]):
            for b in ("q1", "k1", "q2", "k2"):
                w2["layers.%d.attn.lambda_%s" % (l, b)] = np.zeros(BASE["head_dim"], np.float32)
        b_ = c.write(w2, dict(cfg, lambda_mode="reparam"))
        rep.check("%s: token lambda with lambda_proj = 0 equals lambda 0.5 per layer" % att,
                  rel(reference.forward(a, IDS), reference.forward(b_, IDS)) < 1e-12)

    # --- shared_k equals its twin whose K2 is a copy of K1 (dense, low-rank, GQA, token lambda)
    for name, cfg, dt in (
            ("dense diff", dict(BASE, attention="diff", shared_k=True), "f32"),
            ("dint GQA + token lambda", dict(BASE, attention="dint", shared_k=True, lambda_mode="token_sigmoid",
                                             n_k1_heads=2, n_k2_heads=2, n_v_heads=2), "bf16"),
            ("Shared-DIFF qk_rank 3", dict(BASE, attention="diff", shared_k=True, qk_rank=3,
                                           n_k1_heads=2, n_k2_heads=2), "f16")):
        a = c.model(cfg, dt, seed=7)
        b_ = c.path("unshared")
        make_model.unshare_k(a, b_)
        names = set(make_model.read_safetensors(a)[0])
        rep.check("shared_k (%s) writes no K2 tensor" % name, not any(".wk2" in n or ".k2_" in n for n in names))
        ya, yb = reference.forward(a, IDS), reference.forward(b_, IDS)
        rep.check("shared_k (%s) equals wk2 = copy of wk1" % name, rel(ya, yb) == 0, "rel %.3g" % rel(ya, yb))
        if cfg.get("qk_rank"):
            m = c.path("merged")
            make_model.merge_low_rank(a, m)
            rep.check("shared_k (%s) equals its merged dense form" % name, rel(ya, reference.forward(m, IDS)) < 1e-6)
        # and shared_k matters: K2 from a different matrix changes the logits
        t, meta = make_model.read_safetensors(b_)
        for k in list(t):
            if ".wk2" in k or ".k2_down" in k:
                t[k] = (t[k][0], t[k][1][::-1].copy())
        make_model.write_safetensors(b_, t, meta)
        rep.check("shared_k (%s): a different K2 changes the logits" % name, rel(ya, reference.forward(b_, IDS)) > 1e-3)

    # --- RoPE: rope_scaling of factor 1 equals none; rope_dim = head_dim equals full RoPE
    for style in ("interleaved", "halves"):
        base = dict(BASE, attention="diff", rope=style)
        w = make_model.make_tensors(base, seed=8)
        y0 = reference.forward(c.write(w, base), IDS)
        for tag, extra in (
                ("linear factor 1", {"rope_scaling": {"type": "linear", "factor": 1.0}}),
                ("llama3 factor 1", {"rope_scaling": {"type": "llama3", "factor": 1.0, "low_freq_factor": 1.0,
                                                      "high_freq_factor": 4.0, "original_max_position_embeddings": 8}}),
                ("yarn factor 1, truncate false", {"rope_scaling": {"type": "yarn", "factor": 1.0,
                                                                    "original_max_position_embeddings": 8,
                                                                    "truncate": False}}),
                ("yarn factor 1, truncate true", {"rope_scaling": {"type": "yarn", "factor": 1.0,
                                                                   "original_max_position_embeddings": 24}}),
                ("rope_dim = head_dim", {"rope_dim": BASE["head_dim"]}),
                ("rope_dim = head_dim, linear factor 1", {"rope_dim": BASE["head_dim"],
                                                          "rope_scaling": {"type": "linear", "factor": 1.0}})):
            y = reference.forward(c.write(w, dict(base, **extra)), IDS)
            rep.check("%s: %s equals plain RoPE" % (style, tag), rel(y0, y) < 1e-13, "rel %.3g" % rel(y0, y))
        # linear factor s on every position n is plain RoPE at position n/s: compare the rotation
        x = np.random.default_rng(9).standard_normal((12, 2, 8))
        cfg = reference.resolve_config(dict(base, rope_scaling={"type": "linear", "factor": 3.0}), "1.1")
        inv, af = reference.rope_inv_freq(cfg)
        ref_inv = 10000.0 ** (-np.arange(4) * 2 / 8) / 3.0
        rep.check("%s: linear factor 3 divides every frequency by 3" % style, af == 1 and np.allclose(inv, ref_inv, rtol=1e-15))

    # --- partial RoPE: scalar loops; components past rope_dim untouched; scale on cos and sin
    rng = np.random.default_rng(10)
    for style in ("interleaved", "halves"):
        for r, scale in ((2, 1.0), (4, 1.0), (6, 1.3), (8, 0.7)):
            x = rng.standard_normal((9, 3, 8))
            inv = 10000.0 ** (-2.0 * np.arange(r // 2) / r)
            got = reference.rope(x, style, inv, scale)
            want = rope_loop(x, style, inv, scale)
            ok = np.allclose(got, want, rtol=0, atol=1e-13) and np.array_equal(got[..., r:], x[..., r:])
            rep.check("rope %s rope_dim %d scale %g: scalar loops, tail untouched" % (style, r, scale), ok)
    # a model with rope_dim < head_dim really differs from full RoPE and from no RoPE
    base = dict(BASE, attention="dint", rope="halves")
    w = make_model.make_tensors(base, seed=11)
    ys = [reference.forward(c.write(w, dict(base, **e)), IDS) for e in ({}, {"rope_dim": 4}, {"rope": "none"})]
    rep.check("rope_dim 4 of 8 differs from full RoPE and from none", rel(ys[0], ys[1]) > 1e-3 and rel(ys[2], ys[1]) > 1e-3)
    # interleaved rope_dim r on head_dim d equals halves after permuting the first r columns of
    # every q/k head: interleaved pair (2k, 2k+1) <-> halves pair (k, k + r/2)
    r, d = 4, 8
    perm = np.concatenate([np.arange(0, r, 2), np.arange(1, r, 2), np.arange(r, d)])
    cfg_i = dict(BASE, attention="diff", rope="interleaved", rope_dim=r, rope_theta=100.0,
                 rope_scaling={"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 10})
    w = make_model.make_tensors(cfg_i, seed=12)
    wp = dict(w)
    for k in w:
        if any(k.endswith(".attn.w" + b) for b in ("q1", "k1", "q2", "k2")):
            rows = w[k].reshape(-1, d, w[k].shape[1])
            wp[k] = rows[:, perm].reshape(w[k].shape)
    yi = reference.forward(c.write(w, cfg_i), IDS)
    yh = reference.forward(c.write(wp, dict(cfg_i, rope="halves")), IDS)
    rep.check("partial interleaved = partial halves on permuted q/k rows (yarn)", rel(yi, yh) < 1e-12,
              "rel %.3g" % rel(yi, yh))

    # --- inverse frequencies and YaRN's attention factor: plain Python, and torch float32 as
    # transformers computes them
    for tag, r, theta, rs in SCALINGS:
        cfg = resolved_rope(r, theta, rs)
        inv, af = reference.rope_inv_freq(cfg)
        py_inv, py_af = inv_freq_python(r, theta, rs)
        rep.check("inv_freq %s = plain Python" % tag, np.allclose(inv, py_inv, rtol=1e-13, atol=0) and
                  abs(af - py_af) < 1e-15, "af %r vs %r" % (af, py_af))
        if torch is not None:
            t_inv = inv_freq_torch(r, theta, rs).double().numpy()
            err = float(np.max(np.abs(inv - t_inv) / inv))
            rep.check("inv_freq %s = torch float32 (transformers' way)" % tag, err < 1e-6, "max rel %.3g" % err)
    # numbers worked by hand: llama3 (factor 8, low 1, high 4, L 8192, theta 500000, r 128):
    # k = 0 keeps 1; wavelength 2 pi * 500000^(2*40/128) = 22367 > 8192 so k = 40 is divided by
    # 8; k = 30 (wavelength 2 pi * 500000^(60/128) = 3060): t = (8192/3060 - 1)/3, the mix.
    inv, _ = reference.rope_inv_freq(resolved_rope(*SCALINGS[0][1:]))
    f30 = 500000.0 ** (-60 / 128)
    t30 = (8192 / (2 * math.pi / f30) - 1) / 3
    rep.check("llama3 by hand: k 0 kept, k 40 / 8, k 30 mixed", inv[0] == 1.0 and
              math.isclose(inv[40], 500000.0 ** (-80 / 128) / 8, rel_tol=1e-14) and
              math.isclose(inv[30], (1 - t30) * f30 / 8 + t30 * f30, rel_tol=1e-14) and 0 < t30 < 1)
    # yarn qwen (r 128, theta 1e6, L 32768, s 4): lo = floor(c(32)) = floor(23.6) = 23,
    # hi = ceil(c(1)) = ceil(39.6) = 40; k = 30 is 7/17 of the way
    cq = [128 * math.log(32768 / (2 * math.pi * n)) / (2 * math.log(1e6)) for n in (32, 1)]
    inv, af = reference.rope_inv_freq(resolved_rope(*SCALINGS[3][1:]))
    lo, hi = math.floor(cq[0]), math.ceil(cq[1])
    rep.check("yarn by hand: below lo kept, above hi / s, attention factor 0.1 ln 4 + 1",
              (lo, hi) == (23, 40) and inv[lo] == 1e6 ** (-2 * lo / 128) and
              math.isclose(inv[hi], 1e6 ** (-2 * hi / 128) / 4, rel_tol=1e-14) and
              math.isclose(inv[30], 7 / 17 * 1e6 ** (-60 / 128) / 4 + 10 / 17 * 1e6 ** (-60 / 128),
                           rel_tol=1e-14) and
              math.isclose(af, 0.1 * math.log(4) + 1, rel_tol=1e-15), "lo %s hi %s" % (lo, hi))
    # YaRN's attention factor scales the rotated components only: q.k of two rotated vectors
    # (rope_dim = head_dim) grows by af^2
    cfg = resolved_rope(8, 100.0, {"type": "yarn", "factor": 1.0, "original_max_position_embeddings": 8,
                                   "attention_factor": 1.5})
    inv, af = reference.rope_inv_freq(cfg)
    x = rng.standard_normal((5, 1, 8))
    yq = reference.rope(x, "halves", inv, af)
    rep.check("yarn attention_factor multiplies cos and sin", af == 1.5 and
              np.allclose(np.linalg.norm(yq, axis=-1), 1.5 * np.linalg.norm(x, axis=-1), rtol=1e-13))

    # --- FFN biases: zero biases equal no biases; the math against a direct computation
    for act in ("silu", "polynorm"):
        cfg = dict(BASE, attention="diff", ffn_act=act, ffn_bias=True)
        w = make_model.make_tensors(cfg, seed=13)
        yb = reference.forward(c.write(w, cfg), IDS)
        wz = {k: (v * 0 if ".ffn.b_" in k else v) for k, v in w.items()}
        w0 = {k: v for k, v in w.items() if ".ffn.b_" not in k}
        y0 = reference.forward(c.write(wz, cfg), IDS)
        y1 = reference.forward(c.write(w0, {k: v for k, v in cfg.items() if k != "ffn_bias"}), IDS)
        rep.check("ffn_bias (%s): zero biases equal no ffn_bias; biases matter" % act,
                  rel(y0, y1) < 1e-13 and rel(yb, y1) > 1e-3)
        mc, mt = reference.load(c.write(w, cfg))
        h = np.random.default_rng(14).standard_normal((3, BASE["dim"]))
        g = h @ mt["layers.1.ffn.w_gate"].T + mt["layers.1.ffn.b_gate"]
        if act == "silu":
            a_ = g / (1 + np.exp(-g))
        else:
            w0_, w1_, w2_ = mt["layers.1.ffn.act_weight"]
            ms = [np.sqrt((g ** p).mean(-1, keepdims=True) + 1e-6) for p in (6, 4, 2)]
            a_ = w0_ * g ** 3 / ms[0] + w1_ * g ** 2 / ms[1] + w2_ * g / ms[2] + mt["layers.1.ffn.act_bias"][0]
        want = (a_ * (h @ mt["layers.1.ffn.w_up"].T + mt["layers.1.ffn.b_up"])) @ mt["layers.1.ffn.w_down"].T \
            + mt["layers.1.ffn.b_down"]
        rep.check("ffn_bias (%s): w_down (act(w_gate h + b_gate) * (w_up h + b_up)) + b_down" % act,
                  np.allclose(reference.ffn(h, mt, 1, mc), want, rtol=1e-13, atol=1e-13))

    # --- versions: v1.1 keys make a 1.1 file; a v1 config stays "1"; keys refused in a "1" file
    p = c.model(dict(BASE, attention="diff", ffn_bias=False))
    rep.check("make_model: a v1.1 key (even at its default) writes version 1.1",
              make_model.read_safetensors(p)[1]["version"] == "1.1")
    p1 = c.model(dict(BASE, attention="diff"))
    rep.check("make_model: a v1 config writes version 1", make_model.read_safetensors(p1)[1]["version"] == "1")
    t, meta = make_model.read_safetensors(p)
    make_model.write_safetensors(p, t, dict(meta, version="1"))
    try:
        reference.load(p)
        rep.check("a v1.1 key in a version 1 file is refused", False)
    except ValueError as e:
        rep.check("a v1.1 key in a version 1 file is refused", "ffn_bias" in str(e), str(e))

    # --- refusals (config): each must raise ValueError naming the problem
    D = dict(BASE, attention="diff")
    bad = [
        ("rope_scaling with rope none", dict(D, rope="none", rope_scaling={"type": "linear", "factor": 2.0}), "none"),
        ("unknown scaling type", dict(D, rope_scaling={"type": "dynamic", "factor": 2.0}), "dynamic"),
        ("scaling type as rope_type", dict(D, rope_scaling={"rope_type": "linear", "factor": 2.0}), "type"),
        ("unknown field", dict(D, rope_scaling={"type": "linear", "factor": 2.0, "beta_fast": 3.0}), "beta_fast"),
        ("missing field", dict(D, rope_scaling={"type": "llama3", "factor": 2.0, "low_freq_factor": 1.0,
                                                "high_freq_factor": 4.0}), "original_max_position_embeddings"),
        ("factor < 1", dict(D, rope_scaling={"type": "linear", "factor": 0.5}), "factor"),
        ("factor not a number", dict(D, rope_scaling={"type": "linear", "factor": "2"}), "factor"),
        ("llama3 low >= high", dict(D, rope_scaling={"type": "llama3", "factor": 2.0, "low_freq_factor": 4.0,
                                                     "high_freq_factor": 4.0,
                                                     "original_max_position_embeddings": 8}), "low_freq_factor"),
        ("yarn without L", dict(D, rope_scaling={"type": "yarn", "factor": 2.0}), "original_max_position_embeddings"),
        ("yarn truncate not bool", dict(D, rope_scaling={"type": "yarn", "factor": 2.0, "truncate": 1,
                                                         "original_max_position_embeddings": 8}), "truncate"),
        ("yarn attention_factor 0", dict(D, rope_scaling={"type": "yarn", "factor": 2.0, "attention_factor": 0,
                                                          "original_max_position_embeddings": 8}), "attention_factor"),
        ("rope_scaling not an object", dict(D, rope_scaling="linear"), "rope_scaling"),
        ("rope_dim odd", dict(D, rope_dim=5), "rope_dim"),
        ("rope_dim > head_dim", dict(D, rope_dim=10), "rope_dim"),
        ("rope_dim < 2", dict(D, rope_dim=0), "rope_dim"),
        ("rope_dim not an int", dict(D, rope_dim=4.0), "rope_dim"),
        ("shared_k with n_k2 != n_k1", dict(D, shared_k=True, n_k2_heads=2), "shared_k"),
        ("shared_k not a bool", dict(D, shared_k=1), "shared_k"),
        ("lambda_mode unknown", dict(D, lambda_mode="sigmoid"), "lambda_mode"),
        ("ffn_bias not a bool", dict(D, ffn_bias="yes"), "ffn_bias"),
        ("odd head_dim with RoPE", dict(D, head_dim=5), "head_dim"),
    ]
    for tag, cfg, word in bad:
        try:
            reference.resolve_config(cfg, "1.1")
            rep.check("refused: " + tag, False, "accepted")
        except ValueError as e:
            rep.check("refused: " + tag, word in str(e), str(e))
    ok = [("rope_dim ignored with rope none", dict(D, rope="none", rope_dim=3)),
          ("lambda_mode / shared_k ignored by standard attention",
           dict(BASE, attention="standard", lambda_mode="x", shared_k=True, n_k1_heads=2)),
          ("odd head_dim with rope_dim", dict(D, head_dim=5, rope_dim=4))]
    for tag, cfg in ok:
        try:
            reference.resolve_config(cfg, "1.1")
            rep.check("accepted: " + tag, True)
        except ValueError as e:
            rep.check("accepted: " + tag, False, str(e))

    # --- refusals (tensors): v1.1 tensors the config does not call for, or missing / misshapen
    cfg = dict(BASE, attention="diff", lambda_mode="token_sigmoid", shared_k=True, ffn_bias=True)
    w = make_model.make_tensors(cfg, seed=15)
    for tag, change, word in (
            ("wk2 with shared_k", lambda t: t.update({"layers.0.attn.wk2": t["layers.0.attn.wk1"]}), "wk2"),
            ("lambda_q1 with token lambda", lambda t: t.update({"layers.1.attn.lambda_q1": np.zeros(8, np.float32)}),
             "lambda_q1"),
            ("no lambda_proj", lambda t: t.pop("layers.1.attn.lambda_proj"), "lambda_proj"),
            ("lambda_proj [D, H]", lambda t: t.update({"layers.0.attn.lambda_proj": np.zeros((24, 4), np.float32)}),
             "lambda_proj"),
            ("no b_down", lambda t: t.pop("layers.0.ffn.b_down"), "b_down"),
            ("b_up [D]", lambda t: t.update({"layers.0.ffn.b_up": np.zeros(24, np.float32)}), "b_up")):
        t = dict(w)
        change(t)
        p = c.write(t, cfg)
        try:
            reference.load(p)
            rep.check("refused: " + tag, False, "accepted")
        except ValueError as e:
            rep.check("refused: " + tag, word in str(e), str(e))
    p = c.write({k: v for k, v in w.items()}, dict(cfg, ffn_bias=False))
    try:
        reference.load(p)
        rep.check("refused: b_gate without ffn_bias", False, "accepted")
    except ValueError as e:
        rep.check("refused: b_gate without ffn_bias", "b_" in str(e), str(e))

    # --- one whole DIFF V2 forward against torch (token lambda + shared_k, GQA 4 heads / 2 KV)
    if torch is None:
        print("  skip DIFF V2 against torch (no torch)")
    else:
        H, d, KV, Dm, F, V, L = 4, 8, 2, 24, 40, 37, 2
        g = np.random.default_rng(16)
        w = {"emb": g.standard_normal((V, Dm)), "final_norm": 1 + 0.1 * g.standard_normal(Dm),
             "lm_head": g.standard_normal((V, Dm)) / math.sqrt(Dm)}
        for l in range(L):
            w["in_norm.%d" % l] = 1 + 0.1 * g.standard_normal(Dm)
            w["post_norm.%d" % l] = 1 + 0.1 * g.standard_normal(Dm)
            w["q_proj.%d" % l] = g.standard_normal((2 * H * d, Dm)) * 2 / math.sqrt(Dm)
            w["k_proj.%d" % l] = g.standard_normal((KV * d, Dm)) * 2 / math.sqrt(Dm)
            w["v_proj.%d" % l] = g.standard_normal((KV * d, Dm)) / math.sqrt(Dm)
            w["o_proj.%d" % l] = g.standard_normal((Dm, H * d)) / math.sqrt(H * d)
            w["lambda_proj.%d" % l] = g.standard_normal((H, Dm)) * 0.8 / math.sqrt(Dm)
            w["gate.%d" % l] = g.standard_normal((F, Dm)) / math.sqrt(Dm)
            w["up.%d" % l] = g.standard_normal((F, Dm)) / math.sqrt(Dm)
            w["down.%d" % l] = g.standard_normal((Dm, F)) / math.sqrt(F)
        w = {k: v.astype(np.float32).astype(np.float64) for k, v in w.items()}   # as stored in F32
        cfg = dict(dim=Dm, n_layers=L, vocab_size=V, hidden_dim=F, max_seq_len=32, n_heads=H, head_dim=d,
                   v_head_dim=d, attention="diff", n_k1_heads=KV, n_q2_heads=H, n_k2_heads=KV, n_v_heads=KV,
                   lambda_mode="token_sigmoid", shared_k=True, head_norm=False, head_scale="none",
                   rope="interleaved", rope_theta=10000.0, norm_eps=1e-6)
        p = c.write(v2_to_dintattn(w, cfg), cfg)
        yr = reference.forward(p, IDS)
        yt = v2_torch_logits(w, cfg, IDS)
        rep.check("DIFF V2 (token lambda, shared_k, GQA) = torch float64 forward", rel(yt, yr) < 1e-12,
                  "rel %.3g" % rel(yt, yr))
    return rep.finish()


if __name__ == "__main__":
    sys.exit(main())
