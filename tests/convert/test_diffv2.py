#!/usr/bin/python3
"""Microsoft DIFF V2 (MultiheadFlashDiffV2) -> dintattn conversion test.

A float64 PyTorch re-implementation of `MultiheadFlashDiffV2.forward` (microsoft/unilm
Diff-Transformer/Diff-Transformer-V2/multihead_flashdiffv2.py), written here from that code:
q viewed [2H, d] (H = 2H/2 when use_diff_v2), k and v [KV, d], flash-attn's interleaved rotary on
the first rotary_dim components, flash_attn_func(causal=True) with its GQA rule (query head j reads
KV head j // (n_q / KV)), then attn[:, :, 0::2] - sigmoid(lambda_proj x) * attn[:, :, 1::2] and
o_proj -- inside a Llama-like pre-norm SwiGLU decoder (the caller's part).  Random checkpoints
are written as state dicts (.pt) or HF directories in the names tools/layouts/diffv2.py
documents, converted with tools/convert.py, and examples/logits (prefill and decode) and
tools/reference.py must give the module's logits.  Also: refusals, each naming its cause.

    /usr/bin/python3 tests/convert/test_diffv2.py
"""

import json
import os
import sys
import tempfile

try:
    __import__("numpy")
    import torch
except ImportError:
    print("test_diffv2: skipped (no numpy or torch for %s)" % sys.executable)
    sys.exit(0)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import inproc  # noqa: E402  (refusals: tools/convert.py in this process)
import hf_rope_ref  # noqa: E402

sys.path.insert(0, os.path.join(common.ROOT, "tools"))
import reference  # noqa: E402

torch.set_default_dtype(torch.float64)


def rms(x, w, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def flash_attn_causal(q, k, v):
    """flash_attn_func(q, k, v, causal=True) for one sequence: q [T, nq, d], k, v [T, nkv, d];
    query head j reads KV head j // (nq // nkv); scale 1/sqrt(d)."""
    T, nq, d = q.shape
    g = nq // k.shape[1]
    k, v = k.repeat_interleave(g, 1), v.repeat_interleave(g, 1)
    s = torch.einsum("thd,shd->hts", q, k) / d ** 0.5
    s = s.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), float("-inf"))
    return torch.einsum("hts,shd->thd", torch.softmax(s, -1), v)


def diff_v2_attention(W, x, use_diff_v2, H, KV, d, cos, sin):
    """MultiheadFlashDiffV2.forward for one sequence x [T, D]; rel_pos = (cos, sin)."""
    T = x.shape[0]
    nq = 2 * H if use_diff_v2 else H
    q = (x @ W["q_proj"].T).view(T, nq, d)
    k = (x @ W["k_proj"].T).view(T, KV, d)
    v = (x @ W["v_proj"].T).view(T, KV, d)
    if cos is not None:   # apply_rotary_emb(..., interleaved=True): pairs (2k, 2k+1) of the first rotary_dim
        q = hf_rope_ref.apply_interleaved(q, cos[:, None], sin[:, None])
        k = hf_rope_ref.apply_interleaved(k, cos[:, None], sin[:, None])
    attn = flash_attn_causal(q, k, v)                                   # [T, nq, d]
    if use_diff_v2:
        lam = x @ W["lambda_proj"].T                                    # [T, H]
        attn = attn[:, 0::2] - torch.sigmoid(lam)[..., None] * attn[:, 1::2]
    return attn.reshape(T, H * d) @ W["o_proj"].T


# names: (embed, attn_norm, ffn_norm, attention module, gate, up, down, final norm, output)
LLAMA = ("tok_embeddings", "attention_norm", "ffn_norm", "attn", "feed_forward.w1", "feed_forward.w3",
         "feed_forward.w2", "norm", "output")
HF = ("model.embed_tokens", "model.layers.%d.input_layernorm", "model.layers.%d.post_attention_layernorm",
      "model.layers.%d.self_attn", "model.layers.%d.mlp.gate_proj", "model.layers.%d.mlp.up_proj",
      "model.layers.%d.mlp.down_proj", "model.norm", "lm_head")


def _n(names, i, l):
    n = names[i]
    if "%d" in n:
        return n % l
    return n if i in (0, 7, 8) else "layers.%d.%s" % (l, n)


def make(D=48, L=2, H=4, KV=2, d=8, F=72, V=83, v2=True, tie=False, names=LLAMA, seed=0, lam_std=0.3):
    gen = torch.Generator().manual_seed(seed)
    r = lambda *s, std=1.0: torch.randn(*s, generator=gen) * std
    nq = 2 * H if v2 else H
    sd = {names[0] + ".weight": r(V, D)}
    for l in range(L):
        a = _n(names, 3, l)
        sd[_n(names, 1, l) + ".weight"] = 1 + r(D, std=0.1)
        sd[a + ".q_proj.weight"] = r(nq * d, D, std=D ** -0.5)
        sd[a + ".k_proj.weight"] = r(KV * d, D, std=D ** -0.5)
        sd[a + ".v_proj.weight"] = r(KV * d, D, std=D ** -0.5)
        sd[a + ".o_proj.weight"] = r(D, H * d, std=(H * d) ** -0.5)
        if v2:
            sd[a + ".lambda_proj.weight"] = r(H, D, std=lam_std)
        sd[_n(names, 2, l) + ".weight"] = 1 + r(D, std=0.1)
        sd[_n(names, 4, l) + ".weight"] = r(F, D, std=D ** -0.5)
        sd[_n(names, 5, l) + ".weight"] = r(F, D, std=D ** -0.5)
        sd[_n(names, 6, l) + ".weight"] = r(D, F, std=F ** -0.5)
    sd[names[7] + ".weight"] = 1 + r(D, std=0.1)
    if not tie:
        sd[names[8] + ".weight"] = r(V, D, std=D ** -0.5)
    return sd


def forward(sd, ids, H, KV, d, v2=True, names=LLAMA, eps=1e-5, rope_cfg=None, theta=10000.0, no_rope=False):
    """The decoder: x = x + attn(rms(x)); x = x + w2(silu(w1 h) * w3 h); logits = out(rms(x))."""
    g = lambda n: sd[n].double()
    x = g(names[0] + ".weight")[torch.tensor(ids)]
    T = len(ids)
    cos = sin = None
    if not no_rope:
        cos, sin, _ = hf_rope_ref.cos_sin(rope_cfg or {}, d, T, theta, interleaved=True)
    L = 1 + max(int(k.split("layers.")[1].split(".")[0]) for k in sd if "layers." in k)
    for l in range(L):
        a = _n(names, 3, l)
        W = {k: g(a + "." + k + ".weight") for k in ("q_proj", "k_proj", "v_proj", "o_proj")}
        if v2:
            W["lambda_proj"] = g(a + ".lambda_proj.weight")
        x = x + diff_v2_attention(W, rms(x, g(_n(names, 1, l) + ".weight"), eps), v2, H, KV, d, cos, sin)
        h = rms(x, g(_n(names, 2, l) + ".weight"), eps)
        z = h @ g(_n(names, 4, l) + ".weight").T
        z = torch.nn.functional.silu(z) * (h @ g(_n(names, 5, l) + ".weight").T)
        x = x + z @ g(_n(names, 6, l) + ".weight").T
    x = rms(x, g(names[7] + ".weight"), eps)
    out = sd.get(names[8] + ".weight")
    return (x @ (g(names[0] + ".weight") if out is None else out.double()).T).numpy()


IDS = [1, 5, 17, 3, 42, 9, 0, 77, 12, 5, 60, 33, 8, 8, 21]


def save(tmp, label, sd, kind="pt", config=None, shards=1):
    if kind == "pt":
        path = os.path.join(tmp, label + ".pt")
        torch.save(sd, path)
        if config is not None:
            raise ValueError("a .pt case takes its config from flags here")
        return path
    d = os.path.join(tmp, label)
    common.write_hf_dir(d, config or {}, {k: v.float().numpy() for k, v in sd.items()}, shards=shards)
    return d


def run(rep, tmp, label, sd, ref, V, flags=(), kind="pt", config=None, shards=1, version=None, decode=False,
        fmt=("--format", "diffv2")):
    src = save(tmp, label, sd, kind, config, shards)
    out = os.path.join(tmp, label + ".safetensors")
    rc, err = common.convert(src, out, *(list(fmt) + list(flags)))
    if rc:
        rep.check(label, False, "convert failed: " + err.strip())
        return
    rep.logits(label + ": engine", ref, common.engine_logits(out, IDS, V))
    if decode:
        rep.logits(label + ": engine decode", ref, common.engine_logits(out, IDS, V, "--decode"))
    rep.logits(label + ": tools/reference.py", ref, reference.forward(reference.load(out), IDS))
    if version is not None:
        got = common.st.File(out).metadata.get("version")
        rep.check(label + ": file version " + version, got == version, "version %r" % got)


def refuse(rep, tmp, label, sd, flags, *words, kind="pt", config=None, fmt=("--format", "diffv2")):
    src = save(tmp, label, sd, kind, config)
    rc, err = inproc.run(src, os.path.join(tmp, label + ".safetensors"), *(list(fmt) + list(flags)))
    rep.refused(label, rc, err, *words)


def main():
    common.build_examples()
    rep = common.Report("test_diffv2")
    with tempfile.TemporaryDirectory() as tmp:
        V = 83
        # DIFF V2, state dicts (flags-free: the shapes give H, d, KV), auto-detected
        sd = make(H=4, KV=4)
        run(rep, tmp, "v2 MHA H=4 (auto-detected)", sd, forward(sd, IDS, 4, 4, 8), V, fmt=(), version="1.1",
            decode=True)
        sd = make(H=4, KV=2, seed=1)
        run(rep, tmp, "v2 GQA H=4 KV=2", sd, forward(sd, IDS, 4, 2, 8), V, decode=True)
        sd = make(H=4, KV=1, tie=True, seed=2)
        sd = {k: common.bf16_round(v.float().numpy()) for k, v in sd.items()}
        sd = {k: torch.tensor(v).to(torch.bfloat16) for k, v in sd.items()}
        run(rep, tmp, "v2 MQA KV=1, tied, bf16 state dict", sd, forward(sd, IDS, 4, 1, 8), V)
        sd = make(H=2, KV=2, d=16, D=32, seed=3)
        run(rep, tmp, "v2 rope theta 500 + --diffv2-rope-dim 8 (partial)", sd,
            forward(sd, IDS, 2, 2, 16, theta=500.0, rope_cfg={"partial_rotary_factor": 0.5}), V,
            ["--diffv2-rope-theta", "500", "--diffv2-rope-dim", "8"])
        sd = make(H=4, KV=2, seed=4)
        run(rep, tmp, "v2 --diffv2-no-rope, eps 1e-6", sd, forward(sd, IDS, 4, 2, 8, no_rope=True, eps=1e-6), V,
            ["--diffv2-no-rope", "--diffv2-norm-eps", "1e-6"])
        # HF directories: model. prefix, lm_head outside it, config.json with scaling, shards
        sd = make(H=4, KV=2, names=HF, seed=5)
        cfg = {"num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8, "rope_theta": 5e4,
               "rms_norm_eps": 1e-6, "max_position_embeddings": 64, "use_diff_v2": True,
               "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                "high_freq_factor": 4.0, "original_max_position_embeddings": 8}}
        run(rep, tmp, "v2 HF dir, llama3 scaling, 3 shards (auto-detected)", sd,
            forward(sd, IDS, 4, 2, 8, names=HF, eps=1e-6, rope_cfg=cfg, theta=5e4), V, kind="hf", config=cfg,
            shards=3, fmt=(), decode=True)
        sd = make(H=4, KV=2, names=HF, seed=6)
        cfg = {"rope_theta": 1e4, "max_position_embeddings": 16, "partial_rotary_factor": 0.5,
               "rope_scaling": {"type": "yarn", "factor": 4.0, "beta_fast": 8, "beta_slow": 2}}
        run(rep, tmp, "v2 HF dir, yarn + partial_rotary_factor", sd,
            forward(sd, IDS, 4, 2, 8, names=HF, rope_cfg=cfg), V, kind="hf", config=cfg)

        # the training code's ModelArgs names (norm_eps, max_seq_len) read as the HF ones; other keys reported
        sd = make(H=4, KV=2, names=HF, seed=11)
        cfg = {"norm_eps": 1e-6, "max_seq_len": 48, "n_heads": 4, "rope_theta": 1e4, "qk_clip": 5.0}
        src = save(tmp, "v2 ModelArgs names", sd, "hf", cfg)
        out = os.path.join(tmp, "v2_ModelArgs_names.safetensors")
        rc, err = common.convert(src, out, "--format", "diffv2")
        rep.check("v2 config.json with norm_eps / max_seq_len converts", rc == 0, err.strip())
        if rc == 0:
            got = json.loads(common.st.File(out).metadata["config"])
            rep.check("norm_eps read as rms_norm_eps", got["norm_eps"] == 1e-6, "norm_eps %r" % got["norm_eps"])
            rep.check("max_seq_len read as max_position_embeddings", got["max_seq_len"] == 48,
                      "max_seq_len %r" % got["max_seq_len"])
            rep.logits("v2 ModelArgs names: engine", forward(sd, IDS, 4, 2, 8, names=HF, eps=1e-6),
                       common.engine_logits(out, IDS, V))
            rep.check("a key the layout does not read is reported", "not read" in err and "qk_clip" in err,
                      err.strip())
        refuse(rep, tmp, "refuses norm_eps and rms_norm_eps that disagree", make(names=HF), [], "norm_eps",
               "rms_norm_eps", "keep one", kind="hf", config={"norm_eps": 1e-6, "rms_norm_eps": 1e-5})

        # use_diff_v2 = False: the module's standard attention
        sd = make(H=4, KV=2, v2=False, seed=7)
        run(rep, tmp, "standard GQA H=4 KV=2 (--diffv2-heads)", sd, forward(sd, IDS, 4, 2, 8, v2=False), V,
            ["--diffv2-heads", "4"], version="1", decode=True)
        sd = make(H=6, KV=3, d=8, v2=False, names=HF, tie=True, seed=8)
        cfg = {"num_attention_heads": 6, "use_diff_v2": False, "tie_word_embeddings": True,
               "rope_scaling": {"rope_type": "linear", "factor": 2.0}}
        run(rep, tmp, "standard HF dir H=6 KV=3, tied, linear scaling", sd,
            forward(sd, IDS, 6, 3, 8, v2=False, names=HF, rope_cfg=cfg), V, kind="hf", config=cfg, version="1.1")
        sd = make(H=4, KV=4, v2=False, seed=9)
        run(rep, tmp, "standard MHA via --diffv2-head-dim", sd, forward(sd, IDS, 4, 4, 8, v2=False), V,
            ["--diffv2-head-dim", "8"])

        # refusals
        sd = make(H=3, KV=2, D=48, d=8, seed=10)
        refuse(rep, tmp, "refuses KV heads not dividing heads", sd, [], "KV heads", "flash")
        sd = make()
        sd["layers.0.attn.q_norm.weight"] = torch.ones(8)
        refuse(rep, tmp, "refuses an unknown tensor", sd, [], "layers.0.attn.q_norm.weight")
        sd = make()
        sd["layers.1.attn.o_proj.bias"] = torch.zeros(48)
        refuse(rep, tmp, "refuses a bias", sd, [], "o_proj.bias")
        sd = make()
        del sd["layers.1.attn.lambda_proj.weight"]
        refuse(rep, tmp, "refuses lambda_proj in some layers only", sd, [], "lambda_proj", "1 of 2")
        refuse(rep, tmp, "refuses a standard checkpoint without heads", make(v2=False), [], "--diffv2-heads")
        refuse(rep, tmp, "auto-detection of a standard checkpoint names lambda_proj", make(v2=False),
               ["--diffv2-heads", "4"], "lambda_proj", "--format diffv2", fmt=())
        refuse(rep, tmp, "refuses --diffv2-heads disagreeing with lambda_proj", make(), ["--diffv2-heads", "2"],
               "lambda_proj")
        refuse(rep, tmp, "refuses use_diff_v2 false with lambda_proj", make(names=HF), [], "use_diff_v2",
               kind="hf", config={"use_diff_v2": False})
        refuse(rep, tmp, "refuses an odd --diffv2-rope-dim", make(), ["--diffv2-rope-dim", "3"], "--diffv2-rope-dim")
        refuse(rep, tmp, "refuses rope_scaling dynamic", make(names=HF), [], "rope_scaling", "dynamic", kind="hf",
               config={"rope_scaling": {"rope_type": "dynamic", "factor": 2.0}})
        sd = make()
        sd["layers.1.attn.k_proj.weight"] = sd["layers.1.attn.k_proj.weight"][:8]
        refuse(rep, tmp, "refuses a wrong shape", sd, [], "layers.1.attn.k_proj.weight")
    return rep.finish()


if __name__ == "__main__":
    sys.exit(main())
