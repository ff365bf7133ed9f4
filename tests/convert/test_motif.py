#!/usr/bin/python3
"""Motif (Motif-2.6B DIFF, Motif-2-12.7B Grouped-DIFF) -> dintattn conversion test.

A PyTorch re-implementation of Motif's forward pass, written from Motif's modeling code and the
equations (it calls neither tools/reference.py nor the converter's mapping), builds tiny random
HF checkpoints in Motif's own layout, computes their logits, converts them with tools/convert.py
and compares with examples/logits. Also: refusal cases.

    /usr/bin/python3 tests/convert/test_motif.py [--big]    (--big: a Motif-2-12.7B-shaped model
                                                            with 1 layer, checks the mapping and
                                                            the converter's peak RSS)
"""

import json
import math
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import torch
except ImportError:  # run.sh: a test whose imports are missing says so and passes
    if __name__ == "__main__":
        print("test_motif: skipped (no numpy or torch for %s)" % sys.executable)
        sys.exit(0)
    raise

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOLS = os.path.join(ROOT, "tools")
sys.path.insert(0, TOOLS)
import safetensors_io as st  # noqa: E402  (tools/safetensors_io.py)
LOGITS = os.path.join(ROOT, "examples", "logits")
PY = "/usr/bin/python3"

torch.set_default_dtype(torch.float64)


# ---------------------------------------------------------------------------------------------
# helpers shared with test_unilm.py
# ---------------------------------------------------------------------------------------------

def bf16_round(t):
    """float tensor -> the same values rounded to bf16 (round to nearest even), as float64."""
    return torch.from_numpy(st.round_bf16(t.detach().to(torch.float32).contiguous().numpy()).astype(np.float64))


def write_st(path, tensors, dtype="F32"):
    """{name: torch tensor} -> a safetensors file, every tensor stored as dtype (F32/BF16/F16)."""
    st.write(path, {name: (dtype, t.detach().to(torch.float32).contiguous().numpy()) for name, t in tensors.items()},
             {"format": "pt"})


def write_hf_dir(d, config, tensors, dtype="F32", shards=1):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(config, f)
    if shards == 1:
        write_st(os.path.join(d, "model.safetensors"), tensors, dtype)
        return
    names = list(tensors)
    per = (len(names) + shards - 1) // shards
    wmap = {}
    for s in range(shards):
        fn = "model-%05d-of-%05d.safetensors" % (s + 1, shards)
        part = {n: tensors[n] for n in names[s * per:(s + 1) * per]}
        write_st(os.path.join(d, fn), part, dtype)
        for n in part:
            wmap[n] = fn
    with open(os.path.join(d, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {}, "weight_map": wmap}, f)


def convert(src, out, fmt, extra=()):
    """-> (ok, message) of tools/convert.py."""
    p = subprocess.run([PY, os.path.join(TOOLS, "convert.py"), src, out, "--format", fmt] + list(extra),
                       capture_output=True, text=True)
    return p.returncode == 0, (p.stderr + p.stdout).strip()


def engine_logits(model, ids, tmp):
    outp = os.path.join(tmp, "logits.bin")
    p = subprocess.run([LOGITS, model, ",".join(map(str, ids)), outp], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("examples/logits failed: " + p.stderr.strip())
    return np.fromfile(outp, dtype="<f4")


class Results:
    def __init__(self, name):
        self.name, self.passed, self.failed = name, 0, 0

    def check(self, label, ok, detail=""):
        if ok:
            self.passed += 1
            print("  ok   %s %s" % (label, detail))
        else:
            self.failed += 1
            print("  FAIL %s %s" % (label, detail))

    def finish(self):
        print("%s: %d passed, %d failed" % (self.name, self.passed, self.failed))
        sys.exit(1 if self.failed else 0)


def convert_and_compare(res, label, src, fmt, flags, ref, ids, tmp):
    """Converts src with tools/convert.py, runs examples/logits on the result, compares with ref."""
    out = os.path.join(tmp, label + ".safetensors")
    ok, msg = convert(src, out, fmt, list(flags))
    if not ok:
        res.check(label, False, "conversion failed: " + msg)
        return
    try:
        got = engine_logits(out, ids, tmp)
    except RuntimeError as e:
        res.check(label, False, str(e))
        return
    compare(res, label, ref, got)


def compare(res, label, ref, got):
    ref = np.asarray(ref, dtype=np.float64).reshape(-1)
    if got.size != ref.size:
        res.check(label, False, "size %d != %d" % (got.size, ref.size))
        return
    err = float(np.max(np.abs(got - ref)))
    tol = 1e-4 * max(1.0, float(np.max(np.abs(ref))))
    res.check(label, err <= tol, "max|diff| %.3g (tol %.3g, max|logit| %.3g)" % (err, tol, np.max(np.abs(ref))))


# ---------------------------------------------------------------------------------------------
# Motif forward pass (from Motif's modeling code: HF modeling_motif.py and its vLLM/MLX ports)
# ---------------------------------------------------------------------------------------------

def rms(x, w, eps):
    return x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps) * w


def polynorm(x, w, b, eps=1e-6):
    def n(z):
        return z * torch.rsqrt((z * z).mean(-1, keepdim=True) + eps)
    return w[0] * n(x ** 3) + w[1] * n(x ** 2) + w[2] * n(x) + b


def rope_neox(x, pos, theta):
    """x [T, heads, d]; HF rotate_half convention."""
    d = x.shape[-1]
    inv = 1.0 / (theta ** (torch.arange(0, d, 2, dtype=torch.float64) / d))
    f = pos[:, None].double() * inv[None, :]
    emb = torch.cat([f, f], -1)
    cos, sin = emb.cos()[:, None, :], emb.sin()[:, None, :]
    x1, x2 = x[..., :d // 2], x[..., d // 2:]
    rot = torch.cat([-x2, x1], -1)
    return x * cos + rot * sin


def sdpa(q, k, v):
    """q [Hq, T, d], k [Hq, T, d], v [Hq, T, dv]: causal softmax attention."""
    T = q.shape[1]
    s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    s = s.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), float("-inf"))
    return torch.softmax(s, -1) @ v


def motif_attention(c, W, x, l):
    T = x.shape[0]
    d = c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"]
    S, KVs = c["num_attention_heads"], c["num_key_value_heads"]
    pos = torch.arange(T)
    q = (x @ W["q_proj"].T).view(T, S, d)
    k = (x @ W["k_proj"].T).view(T, KVs, d)
    v = (x @ W["v_proj"].T).view(T, KVs, d)
    if c.get("rope_scaling") or c.get("partial_rotary_factor"):   # version 1.1: scaled / partial RoPE
        import hf_rope_ref
        cos, sin, _ = hf_rope_ref.cos_sin(c, d, T)
        q, k = (hf_rope_ref.apply_halves(t, cos[:, None], sin[:, None]) for t in (q, k))
    else:
        q, k = rope_neox(q, pos, c["rope_theta"]), rope_neox(k, pos, c["rope_theta"])
    q, k, v = q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1)   # [heads, T, d]
    lam_init = 0.8 - 0.6 * math.exp(-0.3 * (l - 1))
    lam = torch.exp((W["lambda_q1"] * W["lambda_k1"]).sum()) - torch.exp((W["lambda_q2"] * W["lambda_k2"]).sum()) \
        + lam_init
    KV = KVs // 2
    kk = k.reshape(KV, 2, T, d)
    k1, k2 = kk[:, 0], kk[:, 1]
    vv = v.reshape(KV, 2, T, d)
    vcat = torch.cat([vv[:, 0], vv[:, 1]], -1)                          # [KV, T, 2d] = concat(v1, v2)
    if c.get("num_noise_heads") is None:
        H = S // 2
        qq = q.reshape(H, 2, T, d)
        q1, q2 = qq[:, 0], qq[:, 1]
        rep = H // KV                                                   # flash-attn GQA: head h -> h // rep
        a1 = sdpa(q1, k1.repeat_interleave(rep, 0), vcat.repeat_interleave(rep, 0))
        a2 = sdpa(q2, k2.repeat_interleave(rep, 0), vcat.repeat_interleave(rep, 0))
        attn = a1 - lam * a2
    else:
        N = c["num_noise_heads"]
        G = (S - N) // N
        qq = q.reshape(N, G + 1, T, d)
        q1 = qq[:, :G].reshape(N * G, T, d)                             # signal heads
        q2 = qq[:, G]                                                   # noise heads
        kv_rep = N // KV
        k1n, k2n, vn = (t.repeat_interleave(kv_rep, 0) for t in (k1, k2, vcat))   # per noise group
        a1 = sdpa(q1, k1n.repeat_interleave(G, 0), vn.repeat_interleave(G, 0))
        a2 = sdpa(q2, k2n, vn)
        attn = a1 - lam * a2.repeat_interleave(G, 0)
    attn = rms(attn, W["subln"], c["attn_rms_norm_eps"]) * (1 - lam_init)
    attn = attn.transpose(0, 1).reshape(T, -1)
    return attn @ W["o_proj"].T


def motif_forward(c, t, ids):
    g = lambda n: t[n]
    x = g("model.embed_tokens.weight")[torch.tensor(ids)]
    for l in range(c["num_hidden_layers"]):
        p = "model.layers.%d." % l
        W = {k: g(p + "self_attn." + k + (".weight" if k.endswith("proj") else ""))
             for k in ("q_proj", "k_proj", "v_proj", "o_proj", "lambda_q1", "lambda_k1", "lambda_q2", "lambda_k2")}
        W["subln"] = g(p + "self_attn.subln.weight")
        h = rms(x, g(p + "input_layernorm.weight"), c["rms_norm_eps"])
        x = x + motif_attention(c, W, h, l)
        h = rms(x, g(p + "post_attention_layernorm.weight"), c["rms_norm_eps"])
        m = polynorm(h @ g(p + "mlp.gate_proj.weight").T, g(p + "mlp.act_fn.weight"), g(p + "mlp.act_fn.bias")) \
            * (h @ g(p + "mlp.up_proj.weight").T)
        x = x + m @ g(p + "mlp.down_proj.weight").T
    x = rms(x, g("model.norm.weight"), c["rms_norm_eps"])
    out = g("model.embed_tokens.weight") if c.get("tie_word_embeddings") else g("lm_head.weight")
    return x @ out.T


def motif_config(D=64, L=2, S=4, KVs=4, d=16, F=96, V=97, N=None, tie=False, theta=10000.0):
    c = {"model_type": "motif", "architectures": ["MotifForCausalLM"], "hidden_size": D,
         "num_hidden_layers": L, "intermediate_size": F, "num_attention_heads": S,
         "num_key_value_heads": KVs, "head_dim": d, "vocab_size": V, "rms_norm_eps": 1e-6,
         "attn_rms_norm_eps": 1e-5, "rope_theta": theta, "max_position_embeddings": 128,
         "hidden_act": "poly_norm", "tie_word_embeddings": tie, "rope_scaling": None,
         "use_bias": False, "torch_dtype": "float32", "bos_token_id": 1, "eos_token_id": 2}
    if N is not None:
        c["num_noise_heads"] = N
        c["k_ratio"] = 1
    return c


def motif_weights(c, seed=0):
    gen = torch.Generator().manual_seed(seed)
    r = lambda *s, std=1.0: torch.randn(*s, generator=gen) * std
    D, F, V, S, KVs = c["hidden_size"], c["intermediate_size"], c["vocab_size"], c["num_attention_heads"], \
        c["num_key_value_heads"]
    d = c["head_dim"]
    N = c.get("num_noise_heads")
    H = S // 2 if N is None else S - N
    t = {"model.embed_tokens.weight": r(V, D)}
    for l in range(c["num_hidden_layers"]):
        p = "model.layers.%d." % l
        t[p + "input_layernorm.weight"] = 1 + r(D, std=0.1)
        t[p + "self_attn.q_proj.weight"] = r(S * d, D, std=D ** -0.5)
        t[p + "self_attn.k_proj.weight"] = r(KVs * d, D, std=D ** -0.5)
        t[p + "self_attn.v_proj.weight"] = r(KVs * d, D, std=D ** -0.5)
        t[p + "self_attn.o_proj.weight"] = r(D, H * 2 * d, std=(H * 2 * d) ** -0.5)
        for lam in ("lambda_q1", "lambda_k1", "lambda_q2", "lambda_k2"):
            t[p + "self_attn." + lam] = r(d, std=0.1)
        t[p + "self_attn.subln.weight"] = 1 + r(2 * d, std=0.1)
        t[p + "post_attention_layernorm.weight"] = 1 + r(D, std=0.1)
        t[p + "mlp.gate_proj.weight"] = r(F, D, std=D ** -0.5)
        t[p + "mlp.up_proj.weight"] = r(F, D, std=D ** -0.5)
        t[p + "mlp.down_proj.weight"] = r(D, F, std=F ** -0.5)
        t[p + "mlp.act_fn.weight"] = torch.tensor([1 / 3, 1 / 3, 1 / 3]) + r(3, std=0.1)
        t[p + "mlp.act_fn.bias"] = r(1, std=0.1)
    t["model.norm.weight"] = 1 + r(D, std=0.1)
    if not c.get("tie_word_embeddings"):
        t["lm_head.weight"] = r(V, D, std=D ** -0.5)
    return t


IDS = [1, 5, 17, 3, 42, 9, 0, 77, 12, 5, 60, 33]


def case(res, tmp, label, c, dtype="F32", shards=1, seed=0, extra=()):
    t = motif_weights(c, seed)
    if dtype == "BF16":
        t = {k: bf16_round(v) for k, v in t.items()}
    src = os.path.join(tmp, label)
    write_hf_dir(src, c, t, dtype, shards)
    ref = motif_forward(c, t, IDS).numpy()
    convert_and_compare(res, label, src, "motif", extra, ref, IDS, tmp)


def refuse(res, tmp, label, c, mutate, want):
    t = motif_weights(c)
    mutate(c, t)
    src = os.path.join(tmp, label)
    write_hf_dir(src, c, t)
    ok, msg = convert(src, os.path.join(tmp, label + ".safetensors"), "motif")
    res.check(label, (not ok) and want in msg, "-> %r" % msg.splitlines()[-1:] if msg else "")


def rss_peak_kb(pid_status_text):
    for line in pid_status_text.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return -1


def big(res, tmp):
    """Motif-2-12.7B shapes (hidden 4096, 40 heads, 8 noise, 16 KV, head_dim 128, F 16384), 1 layer,
    small vocab. Checks the logits and the converter's peak RSS (tools/convert.py only)."""
    c = motif_config(D=4096, L=1, S=40, KVs=16, d=128, F=16384, V=512, N=8, theta=1e6)
    c["max_position_embeddings"] = 4096
    torch.set_default_dtype(torch.float32)      # halve the test's own memory
    t = motif_weights(c, seed=3)
    t = {k: bf16_round(v).to(torch.float32) for k, v in t.items()}
    torch.set_default_dtype(torch.float64)
    src = os.path.join(tmp, "big")
    write_hf_dir(src, c, t, "BF16", shards=2)
    ids = IDS[:6]
    ref = motif_forward(c, {k: v.double() for k, v in t.items()}, ids).numpy()  # float64, one copy
    total = sum(v.numel() for v in t.values())
    del t
    conv = os.path.join(TOOLS, "convert.py")
    if not os.path.exists(conv):
        res.check("big", False, "tools/convert.py missing")
        return
    # bounded = independent of the model's size: a fixed base (interpreter, numpy) plus a few
    # float32 copies of the largest single tensor (here mlp.*_proj, 16384 x 4096)
    largest = 16384 * 4096
    limit_mb = 400 + 16 * largest / 2 ** 20
    for dt in ("f32", "bf16"):
        out = os.path.join(tmp, "big_%s.safetensors" % dt)
        p = subprocess.run(["/usr/bin/time", "-v", PY, conv, src, out, "--format", "motif", "--dtype", dt],
                           capture_output=True, text=True)
        if p.returncode != 0:
            res.check("big convert --dtype " + dt, False, p.stderr.strip()[-400:])
            continue
        peak = [l for l in p.stderr.splitlines() if "Maximum resident" in l]
        peak_mb = int(peak[0].split()[-1]) / 1024 if peak else -1
        res.check("big convert --dtype %s peak RSS" % dt, 0 < peak_mb < limit_mb,
                  "%.0f MB (limit %.0f MB = 400 MB + 16 bytes x %d elements of the largest tensor; "
                  "model %.0f MB of bf16 weights)" % (peak_mb, limit_mb, largest, total * 2 / 2 ** 20))
        got = engine_logits(out, ids, tmp)
        compare(res, "big (12.7B shapes, 1 layer, bf16 source, --dtype %s)" % dt, ref, got)
        os.unlink(out)


def main():
    res = Results("test_motif")
    if not os.path.exists(LOGITS):
        subprocess.run(["make", "-C", ROOT, "examples/logits"], check=True, capture_output=True)
    with tempfile.TemporaryDirectory() as tmp:
        case(res, tmp, "diff_mha", motif_config())
        case(res, tmp, "diff_gqa", motif_config(S=8, KVs=4))                      # H=4, KV=2
        case(res, tmp, "diff_tied", motif_config(tie=True, theta=1e6))
        case(res, tmp, "gda_12.7b_ratio", motif_config(D=80, S=10, KVs=4, N=2))   # 40/16/8 -> 10/4/2
        case(res, tmp, "gda_kv_repeat", motif_config(D=64, S=12, KVs=2, N=3, d=8))  # G=3, KV=1 < N
        case(res, tmp, "gda_kv_per_noise", motif_config(D=64, S=15, KVs=6, N=3, d=8))  # G=4, KV=N
        case(res, tmp, "gda_bf16", motif_config(D=80, S=10, KVs=4, N=2), dtype="BF16")
        case(res, tmp, "gda_sharded", motif_config(D=80, S=10, KVs=4, N=2), shards=3)

        def unknown(c, t):
            t["model.layers.0.self_attn.q_norm.weight"] = torch.ones(16)
        refuse(res, tmp, "refuse_unknown_tensor", motif_config(), unknown, "q_norm")

        def bad_heads(c, t):
            c["num_noise_heads"] = 3                                             # 4 heads: not groups of 3
        refuse(res, tmp, "refuse_noise_heads", motif_config(), bad_heads, "num_noise_heads")

        def odd_kv(c, t):
            c["num_key_value_heads"] = 3
        refuse(res, tmp, "refuse_odd_kv_heads", motif_config(), odd_kv, "num_key_value_heads")

        # version 1.1 (docs/format.md section 3): rope_scaling and partial_rotary_factor
        c = motif_config(D=80, S=10, KVs=4, N=2, theta=5e5)
        c["rope_scaling"] = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                             "original_max_position_embeddings": 8}
        case(res, tmp, "gda_llama3_scaling", c)
        c = motif_config(S=8, KVs=4)
        c["rope_scaling"] = {"type": "yarn", "factor": 4.0}      # legacy "type"; original context 128
        c["partial_rotary_factor"] = 0.5
        case(res, tmp, "diff_yarn_partial_rope", c)
        c = motif_config()
        c["rope_scaling"] = {"rope_type": "linear", "factor": 3.0}
        case(res, tmp, "diff_linear_scaling", c)

        def scaling(c, t):
            c["rope_scaling"] = {"type": "dynamic", "factor": 4.0}
        refuse(res, tmp, "refuse_rope_scaling_dynamic", motif_config(), scaling, "dynamic")

        def scaling_field(c, t):
            c["rope_scaling"] = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64,
                                 "extrapolation_factor": 1.0}
        refuse(res, tmp, "refuse_rope_scaling_field", motif_config(), scaling_field, "extrapolation_factor")

        def partial(c, t):
            c["partial_rotary_factor"] = 0.1                    # 16 * 0.1 -> rope_dim 1
        refuse(res, tmp, "refuse_partial_rotary_odd", motif_config(), partial, "partial_rotary_factor")

        def act(c, t):
            c["hidden_act"] = "silu"
        refuse(res, tmp, "refuse_hidden_act", motif_config(), act, "hidden_act")

        def shape(c, t):
            t["model.layers.1.self_attn.v_proj.weight"] = torch.zeros(8, 64)
        refuse(res, tmp, "refuse_bad_shape", motif_config(), shape, "v_proj")

        def latent(c, t):
            c["kv_lora_rank"] = 512
        refuse(res, tmp, "refuse_latent_attention_config", motif_config(N=None), latent, "kv_lora_rank")

        def tied_and_head(c, t):
            c["tie_word_embeddings"] = True
        refuse(res, tmp, "refuse_tied_with_lm_head", motif_config(), tied_and_head, "lm_head")

        if "--big" in sys.argv:
            big(res, tmp)
    res.finish()


if __name__ == "__main__":
    main()
