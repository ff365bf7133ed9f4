#!/usr/bin/python3
"""lucidrains/x-transformers TransformerWrapper(Decoder(...)) -> dintattn conversion test.

x-transformers is not installed (nor installable here), so this file re-implements, in float64
torch, the forward pass that x_transformers.py / attend.py compute for the options
tools/layouts/xtransformers.py converts, written from that code: RMSNorm as
F.normalize(x) * dim**0.5 * (g + unit_offset) (SimpleRMSNorm without g), RotaryEmbedding
(inv_freq = base^(-arange(0, R, 2)/R), base rescaled by rotary_base_rescale_factor^(R/(R-2)),
positions / interpolation_factor, freqs repeated per (d r) pair, rotate_half on adjacent pairs,
the first R components of each head), Attend's GQA (K/V repeated 'b kvh n d -> b (r kvh) n d':
query head j reads KV head j mod KV), causal softmax(q k^T * dim_head^-0.5), merge heads, to_out,
the GLU feed-forward (proj -> (x, gate) halves, x * silu(gate), proj bias always, proj_out bias
unless ff_no_bias), pre-norm residual blocks, final norm, to_logits or the tied embedding.
Random state dicts in the library's names are converted with tools/convert.py and examples/logits
(prefill and decode) and tools/reference.py must give these logits.  Also: refusals by name.

    /usr/bin/python3 tests/convert/test_xtransformers.py
"""

import json
import os
import sys
import tempfile

try:
    __import__("numpy")
    import torch
    import torch.nn.functional as Fn
except ImportError:
    print("test_xtransformers: skipped (no numpy or torch for %s)" % sys.executable)
    sys.exit(0)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import inproc  # noqa: E402  (refusals: tools/convert.py in this process)

sys.path.insert(0, os.path.join(common.ROOT, "tools"))
import reference  # noqa: E402

torch.set_default_dtype(torch.float64)


def hp_get(hp, key, default):
    al = hp.get("attn_layers", {})
    return al.get(key, hp.get(key, default))


def make(hp, V=71, D=48, L=2, seed=0, prefix="", zero_row=None):
    """A random state dict as TransformerWrapper(attn_layers=Decoder(**hp['attn_layers'])) names it."""
    gen = torch.Generator().manual_seed(seed)
    r = lambda *s, std=1.0: torch.randn(*s, generator=gen) * std
    H = hp_get(hp, "heads", 8)
    d = hp_get(hp, "attn_dim_head", 64)
    KV = 1 if hp_get(hp, "attn_one_kv_head", False) else hp_get(hp, "attn_kv_heads", H)
    F = int(D * hp_get(hp, "ff_mult", 4))
    simple = hp_get(hp, "use_simple_rmsnorm", False)
    off = hp_get(hp, "norm_add_unit_offset", not old(hp, (1, 31, 3)))
    sd = {"token_emb.emb.weight": r(V, D)}
    if zero_row is not None:
        sd["token_emb.emb.weight"][zero_row] = 0.0

    def norm(n):
        if not simple:   # g is trained around 0 with the unit offset, around 1 without
            sd[n + ".g"] = r(D, std=0.1) + (0.0 if off else 1.0)

    if hp_get(hp, "rotary_pos_emb", False):
        R = hp_get(hp, "rotary_emb_dim", None) or d // 2
        if old(hp, (1, 42, 18)):   # max(default(rotary_emb_dim, dim_head // 2), 32) then
            R = max(R, 32)
        base = 10000.0 * hp_get(hp, "rotary_base_rescale_factor", 1.0) ** (R / (R - 2))
        sd["attn_layers.rotary_pos_emb.inv_freq"] = 1.0 / (base ** (torch.arange(0, R, 2).float() / R))
    for l in range(L):
        a, f = "attn_layers.layers.%d." % (2 * l), "attn_layers.layers.%d." % (2 * l + 1)
        norm(a + "0.0")
        sd[a + "1.to_q.weight"] = r(H * d, D, std=D ** -0.5)
        sd[a + "1.to_k.weight"] = r(KV * d, D, std=D ** -0.5)
        sd[a + "1.to_v.weight"] = r(KV * d, D, std=D ** -0.5)
        if H > 1 or d != D:
            sd[a + "1.to_out.weight"] = r(D, H * d, std=(H * d) ** -0.5)
        norm(f + "0.0")
        sd[f + "1.ff.0.proj.weight"] = r(2 * F, D, std=D ** -0.5)
        sd[f + "1.ff.0.proj.bias"] = r(2 * F, std=0.3)
        sd[f + "1.ff.2.weight"] = r(D, F, std=F ** -0.5)
        if not hp_get(hp, "ff_no_bias", False):
            sd[f + "1.ff.2.bias"] = r(D, std=0.3)
    norm("attn_layers.final_norm")
    if not hp.get("tie_embedding", False):
        sd["to_logits.weight"] = r(V, D, std=D ** -0.5)
    return {prefix + k: v for k, v in sd.items()}


def rotate_half(x):
    x = x.reshape(*x.shape[:-1], -1, 2)                   # '... (d r) -> ... d r', r = 2
    x1, x2 = x.unbind(-1)
    return torch.stack((-x2, x1), -1).reshape(*x.shape[:-2], -1)


def rotate_half_old(x):
    """Before x-transformers 1.30.1: '... (j d) -> ... j d', j = 2, then cat((-x2, x1))."""
    x1, x2 = x.chunk(2, -1)
    return torch.cat((-x2, x1), -1)


def old(hp, at):
    v = hp_get(hp, "x_transformers_version", None)
    return v is not None and tuple(int(p) for p in v.split(".")) < at


def forward(sd, ids, hp, prefix=""):
    g = lambda n: sd[prefix + n].double()
    H = hp_get(hp, "heads", 8)
    d = hp_get(hp, "attn_dim_head", 64)
    KV = 1 if hp_get(hp, "attn_one_kv_head", False) else hp_get(hp, "attn_kv_heads", H)
    simple = hp_get(hp, "use_simple_rmsnorm", False)
    off = 1.0 if hp_get(hp, "norm_add_unit_offset", not old(hp, (1, 31, 3))) else 0.0
    halves = old(hp, (1, 30, 1))
    E = g("token_emb.emb.weight")
    D = E.shape[1]
    T = len(ids)

    def norm(x, n):
        y = Fn.normalize(x, dim=-1) * D ** 0.5
        return y if simple else y * (g(n + ".g") + off)

    cos = sin = None
    if hp_get(hp, "rotary_pos_emb", False):
        R = hp_get(hp, "rotary_emb_dim", None) or d // 2
        if old(hp, (1, 42, 18)):   # max(default(rotary_emb_dim, dim_head // 2), 32) then
            R = max(R, 32)
        base = 10000.0 * hp_get(hp, "rotary_base_rescale_factor", 1.0) ** (R / (R - 2))
        inv = 1.0 / (base ** (torch.arange(0, R, 2, dtype=torch.float64) / R))
        freqs = torch.arange(T, dtype=torch.float64)[:, None] * inv[None]
        freqs = freqs / hp_get(hp, "rotary_interpolation_factor", 1.0)
        if halves:   # torch.cat((freqs, freqs), dim = -1)
            freqs = torch.cat((freqs, freqs), -1)
        else:
            freqs = torch.stack((freqs, freqs), -1).reshape(T, R)
        cos, sin = freqs.cos(), freqs.sin()

    def rot(t):   # t [heads, T, d]; apply_rotary_pos_emb: the first R components
        if cos is None:
            return t
        R = cos.shape[-1]
        tr, tp = t[..., :R], t[..., R:]
        return torch.cat((tr * cos + (rotate_half_old(tr) if halves else rotate_half(tr)) * sin, tp), -1)

    x = E[torch.tensor(ids)]
    L = len({k[len(prefix):].split(".")[2] for k in sd if k.startswith(prefix + "attn_layers.layers.")}) // 2
    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
    for l in range(L):
        a, f = "attn_layers.layers.%d." % (2 * l), "attn_layers.layers.%d." % (2 * l + 1)
        h = norm(x, a + "0.0")
        q = (h @ g(a + "1.to_q.weight").T).view(T, H, d).transpose(0, 1)
        k = (h @ g(a + "1.to_k.weight").T).view(T, KV, d).transpose(0, 1)
        v = (h @ g(a + "1.to_v.weight").T).view(T, KV, d).transpose(0, 1)
        q, k = rot(q), rot(k)
        if KV < H:                                             # 'b kvh n d -> b (r kvh) n d'
            k, v = k.repeat(H // KV, 1, 1), v.repeat(H // KV, 1, 1)
        s = (q @ k.transpose(-1, -2)) * d ** -0.5
        o = torch.softmax(s.masked_fill(mask, float("-inf")), -1) @ v
        o = o.transpose(0, 1).reshape(T, H * d)                # 'b h n d -> b n (h d)'
        if (prefix + a + "1.to_out.weight") in sd:
            o = o @ g(a + "1.to_out.weight").T
        x = x + o
        h = norm(x, f + "0.0")
        p = h @ g(f + "1.ff.0.proj.weight").T + g(f + "1.ff.0.proj.bias")
        xv, gate = p.chunk(2, -1)
        z = (xv * Fn.silu(gate)) @ g(f + "1.ff.2.weight").T
        if (prefix + f + "1.ff.2.bias") in sd:
            z = z + g(f + "1.ff.2.bias")
        x = x + z
    x = norm(x, "attn_layers.final_norm")
    W = E if hp.get("tie_embedding", False) else g("to_logits.weight")
    return (x @ W.T).numpy()


IDS = [1, 5, 17, 3, 42, 9, 0, 66, 12, 5, 60, 33, 8, 8, 21, 2]
V = 71


def hp_of(tie=False, **al):
    base = {"dim": 48, "depth": 2, "heads": 4, "attn_dim_head": 8, "use_rmsnorm": True, "rotary_pos_emb": True,
            "ff_glu": True, "ff_swish": True}
    base.update(al)
    # a version past every changed default (1.42.18): the same behaviour as the current library
    return {"num_tokens": V, "max_seq_len": 64, "tie_embedding": tie, "x_transformers_version": "1.44.4",
            "attn_layers": base}


def main():
    common.build_examples()
    rep = common.Report("test_xtransformers")
    with tempfile.TemporaryDirectory() as tmp:
        def run(label, hp, sd, flags=None, prefix="", decode=False, beside=False, built=None):
            src = os.path.join(tmp, label.replace(" ", "_").replace("/", "_") + ("/m.pt" if beside else ".pt"))
            os.makedirs(os.path.dirname(src), exist_ok=True)
            torch.save(sd, src)
            if flags is None:   # the hyper-parameters as a JSON file, or as config.json beside the weights
                cj = os.path.join(os.path.dirname(src), "config.json") if beside else src + ".json"
                with open(cj, "w") as f:
                    json.dump(hp, f)
                flags = [] if beside else ["--xtransformers-config", cj]
            out = src + ".safetensors"
            rc, err = common.convert(src, out, "--format", "xtransformers", *flags)
            if rc:
                rep.check(label, False, "convert failed: " + err.strip())
                return
            ref = forward(sd, IDS, built or hp, prefix)   # built: the arguments the model was built with
            rep.logits(label + ": engine", ref, common.engine_logits(out, IDS, V))
            if decode:
                rep.logits(label + ": engine decode", ref, common.engine_logits(out, IDS, V, "--decode"))
            rep.logits(label + ": tools/reference.py", ref, reference.forward(reference.load(out), IDS))
            ver = common.st.File(out).metadata.get("version")
            rep.check(label + ": file version 1.1 (ffn_bias)", ver == "1.1", "version %r" % ver)

        hp = hp_of(attn_kv_heads=2)
        run("rmsnorm, default partial rotary (dim_head/2), GQA 4/2, zeroed padding row", hp,
            make(hp, zero_row=0), decode=True)
        hp = hp_of(tie=True, use_rmsnorm=False, use_simple_rmsnorm=True, rotary_emb_dim=8, attn_one_kv_head=True,
                   ff_no_bias=True, attn_flash=True, ff_dropout=0.1)
        flags = ["--xtransformers-set", "tie_embedding=true", "--xtransformers-set", "use_simple_rmsnorm=true",
                 "--xtransformers-set", "rotary_pos_emb=true", "--xtransformers-set", "rotary_emb_dim=8",
                 "--xtransformers-set", "attn_one_kv_head=true", "--xtransformers-set", "ff_no_bias=true",
                 "--xtransformers-set", "heads=4", "--xtransformers-set", "attn_dim_head=8",
                 "--xtransformers-set", "ff_glu=true", "--xtransformers-set", "ff_swish=true",
                 "--xtransformers-version", "1.44.4"]
        run("simple rmsnorm, full rotary, MQA, tied, ff_no_bias (--xtransformers-set)", hp, make(hp, seed=1), flags)
        hp = hp_of(heads=6, attn_kv_heads=3, norm_add_unit_offset=False, rotary_interpolation_factor=2.0,
                   rotary_base_rescale_factor=3.0, ff_mult=2.5)
        sd = make(hp, seed=2, prefix="net.")
        run("GQA 6/3 (head order), no unit offset, interpolation 2, base rescale 3, ff_mult 2.5, "
            "AutoregressiveWrapper net. prefix, config.json beside", hp, sd, prefix="net.", decode=True, beside=True)
        hp = hp_of(heads=2, attn_dim_head=40, rotary_emb_dim=6)
        hp["x_transformers_version"] = "1.27.0"
        run("x_transformers_version 1.27.0: rotary on halves, rotary_emb_dim raised to 32, no unit offset", hp,
            make(hp, seed=4))
        built = hp_of(attn_kv_heads=2, rotary_emb_dim=6)
        run("rotary_emb_dim not given: read from the inv_freq buffer", hp_of(attn_kv_heads=2), make(built, seed=5),
            built=built)
        hp = hp_of(heads=1, attn_dim_head=48, rotary_pos_emb=False, use_abs_pos_emb=False)
        hp["use_abs_pos_emb"] = hp["attn_layers"].pop("use_abs_pos_emb")
        run("one head of width dim (no to_out), no positions", hp, make(hp, seed=3))
        hp = hp_of(heads=1, attn_dim_head=48, rotary_pos_emb=False, use_rmsnorm=False, use_simple_rmsnorm=True)
        del hp["x_transformers_version"]
        hp["use_abs_pos_emb"] = False
        run("no version needed: no rotary, SimpleRMSNorm (the weights decide)", hp, make(hp, seed=6))

        def refuse(label, hp, sd, *words, flags=None):
            src = os.path.join(tmp, "r_%d.pt" % abs(hash(label)))
            torch.save(sd, src)
            with open(src + ".json", "w") as f:
                json.dump(hp, f)
            # CFG in flags stands for the file of hp
            flags = ["--xtransformers-config", src + ".json"] if flags is None else \
                [src + ".json" if f == "CFG" else f for f in flags]
            rc, err = inproc.run(src, src + ".safetensors", "--format", "xtransformers", *flags)
            rep.refused(label, rc, err, *words)

        good = hp_of(attn_kv_heads=2)
        sd = make(good)
        for key, val in (("macaron", True), ("attn_qk_norm", True), ("alibi_pos_bias", True),
                         ("sandwich_norm", True), ("ff_glu_mult_bias", True), ("attn_num_mem_kv", 4)):
            hp = hp_of(attn_kv_heads=2, **{key: val})
            refuse("refuses option %s" % key, hp, sd, key)
        for key, val in (("l2norm_embed", True),):
            hp = dict(good, **{key: val})
            refuse("refuses wrapper option %s" % key, hp, sd, key)
        refuse("refuses LayerNorm (no use_rmsnorm)", hp_of(attn_kv_heads=2, use_rmsnorm=False), sd, "LayerNorm")
        refuse("refuses ff_glu with GELU", hp_of(attn_kv_heads=2, ff_swish=False), sd, "ff_swish")
        refuse("refuses rotary_xpos", hp_of(attn_kv_heads=2, rotary_xpos=True), sd, "rotary_xpos")
        refuse("refuses heads not matching to_q", hp_of(attn_kv_heads=2, heads=2), sd, "to_q", "heads")
        refuse("refuses rotary_emb_dim not matching inv_freq", hp_of(attn_kv_heads=2, rotary_emb_dim=8), sd,
               "inv_freq", "rotary_emb_dim")
        sd2 = dict(sd, **{"pos_emb.emb.weight": torch.zeros(64, 48)})
        refuse("refuses an absolute positional embedding", good, sd2, "pos_emb.emb.weight")
        sd2 = dict(sd, **{"attn_layers.layers.0.2.residual_scale": torch.ones(48)})
        refuse("refuses an unknown tensor", good, sd2, "attn_layers.layers.0.2.residual_scale")
        refuse("refuses a missing to_logits (tie_embedding unset)", good,
               {k: v for k, v in sd.items() if k != "to_logits.weight"}, "to_logits.weight", "tie_embedding")
        refuse("refuses use_simple_rmsnorm with gamma tensors",
               hp_of(attn_kv_heads=2, use_rmsnorm=False, use_simple_rmsnorm=True), sd, "use_simple_rmsnorm")
        refuse("refuses norm_add_unit_offset before 1.31.0", dict(hp_of(attn_kv_heads=2, norm_add_unit_offset=True),
                                                                  x_transformers_version="1.30.0"), sd,
               "norm_add_unit_offset", "1.31.0")
        unversioned = dict(good)
        del unversioned["x_transformers_version"]
        refuse("refuses rotary without a version", unversioned, sd, "--xtransformers-version", "rotary pairs",
               "x_transformers_version")
        norot = hp_of(attn_kv_heads=2, rotary_pos_emb=False)
        del norot["x_transformers_version"]
        refuse("refuses RMSNorm gains without a version", norot, sd, "--xtransformers-version", "RMSNorm gains")
        refuse("refuses a --xtransformers-version that disagrees with the config", good, sd, "disagrees",
               flags=["--xtransformers-config", "CFG", "--xtransformers-version", "1.27.0"])
        refuse("refuses a non-JSON --xtransformers-set", good, sd, "heads", flags=["--xtransformers-set", "heads=four"])
    return rep.finish()


if __name__ == "__main__":
    sys.exit(main())
